/* Field error list and its Kubernetes rendering; see field.h. */
#include "api/field.h"

#include <stdarg.h>
#include <stdlib.h>

#include "base/base.h"

void field_errors_init(struct field_errors *e)
{
    e->v = NULL;
    e->n = e->alloc = e->nwarn = 0;
}

void field_errors_release(struct field_errors *e)
{
    for (size_t i = 0; i < e->n; i++) {
        free(e->v[i].field);
        free(e->v[i].value);
        free(e->v[i].detail);
    }
    free(e->v);
    field_errors_init(e);
}

void field_error_add(struct field_errors *e, enum field_error_type type, const char *field,
                     const char *value, const char *detail_fmt, ...)
{
    struct strbuf d = STRBUF_INIT;
    struct field_error *fe;

    if (e->n == e->alloc) {
        e->alloc = e->alloc ? e->alloc * 2 : 8;
        e->v = xrealloc(e->v, e->alloc * sizeof(*e->v));
    }
    if (detail_fmt) {
        va_list ap;
        va_start(ap, detail_fmt);
        strbuf_vaddf(&d, detail_fmt, ap);
        va_end(ap);
    }
    fe = &e->v[e->n++];
    fe->type = type;
    fe->field = xstrdup(field ? field : "");
    fe->value = value ? xstrdup(value) : NULL;
    fe->detail = strbuf_detach(&d, NULL);
    if (type == FIELD_WARNING)
        e->nwarn++;
}

size_t field_errors_count(const struct field_errors *e)
{
    return e->n - e->nwarn;
}

void field_error_format(const struct field_error *fe, struct strbuf *out)
{
    static const char *const names[] = {
        [FIELD_REQUIRED] = "Required value",
        [FIELD_INVALID] = "Invalid value",
        [FIELD_NOT_SUPPORTED] = "Unsupported value",
        [FIELD_FORBIDDEN] = "Forbidden",
        [FIELD_DUPLICATE] = "Duplicate value",
        [FIELD_TOO_LONG] = "Too long",
        [FIELD_TOO_MANY] = "Too many",
        [FIELD_UNKNOWN] = "",
        [FIELD_WARNING] = "",
    };

    if (fe->type == FIELD_WARNING || fe->type == FIELD_UNKNOWN) {
        strbuf_addstr(out, fe->detail);
        return;
    }
    if (*fe->field)
        strbuf_addf(out, "%s: ", fe->field);
    strbuf_addstr(out, names[fe->type]);
    if (fe->value)
        strbuf_addf(out, ": %s", fe->value);
    if (*fe->detail)
        strbuf_addf(out, ": %s", fe->detail);
}
