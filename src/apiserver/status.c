/* Status objects (see status.h); wording from apimachinery pkg/api/errors/errors.go. */
#include "apiserver/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/strbuf.h"

static cJSON *must(cJSON *v)
{
    CHECK(v);
    return v;
}

static void add_str(cJSON *o, const char *k, const char *v)
{
    CHECK(cJSON_AddStringToObject(o, k, v));
}

/* "pods" or "nodemetrics.slo.koordinator.sh" (a GroupResource's String()). */
static void qualified(struct strbuf *sb, const char *resource, const char *group)
{
    strbuf_addstr(sb, resource ? resource : "");
    if (group && *group)
        strbuf_addf(sb, ".%s", group);
}

static cJSON *status_base(const char *status, int code)
{
    cJSON *s = must(cJSON_CreateObject());

    add_str(s, "kind", "Status");
    add_str(s, "apiVersion", "v1");
    CHECK(cJSON_AddObjectToObject(s, "metadata"));
    add_str(s, "status", status);
    (void)code;
    return s;
}

static cJSON *details(cJSON *s, const char *name, const char *group, const char *kind)
{
    cJSON *d = must(cJSON_AddObjectToObject(s, "details"));

    if (name && *name)
        add_str(d, "name", name);
    if (group && *group)
        add_str(d, "group", group);
    if (kind && *kind)
        add_str(d, "kind", kind);
    return d;
}

cJSON *api_status_failure(int code, const char *reason, const char *message,
                          const struct api_status_target *t)
{
    cJSON *s = status_base("Failure", code);

    add_str(s, "message", message ? message : "");
    add_str(s, "reason", reason ? reason : "");
    if (t && ((t->name && *t->name) || (t->group && *t->group) || (t->resource && *t->resource)))
        (void)details(s, t->name, t->group, t->resource);
    CHECK(cJSON_AddNumberToObject(s, "code", code));
    return s;
}

static cJSON *named_failure(int code, const char *reason, const struct api_status_target *t,
                            const char *what)
{
    struct strbuf msg = STRBUF_INIT;
    cJSON *s;

    qualified(&msg, t ? t->resource : NULL, t ? t->group : NULL);
    strbuf_addf(&msg, " \"%s\" %s", t && t->name ? t->name : "", what);
    s = api_status_failure(code, reason, msg.buf, t);
    strbuf_release(&msg);
    return s;
}

cJSON *api_status_not_found(const struct api_status_target *t)
{
    return named_failure(404, "NotFound", t, "not found");
}

cJSON *api_status_already_exists(const struct api_status_target *t)
{
    return named_failure(409, "AlreadyExists", t, "already exists");
}

cJSON *api_status_conflict(const struct api_status_target *t)
{
    struct strbuf msg = STRBUF_INIT;
    cJSON *s;

    strbuf_addstr(&msg, "Operation cannot be fulfilled on ");
    qualified(&msg, t ? t->resource : NULL, t ? t->group : NULL);
    strbuf_addf(&msg,
                " \"%s\": the object has been modified; please apply your changes to the latest "
                "version and try again",
                t && t->name ? t->name : "");
    s = api_status_failure(409, "Conflict", msg.buf, t);
    strbuf_release(&msg);
    return s;
}

cJSON *api_status_expired(unsigned long long rv, unsigned long long oldest)
{
    char msg[96];

    (void)snprintf(msg, sizeof(msg), "too old resource version: %llu (%llu)", rv, oldest);
    return api_status_failure(410, "Expired", msg, NULL);
}

/* field.ErrorType -> metav1.CauseType. */
static const char *cause_reason(enum field_error_type t)
{
    switch (t) {
    case FIELD_REQUIRED:
        return "FieldValueRequired";
    case FIELD_NOT_SUPPORTED:
        return "FieldValueNotSupported";
    case FIELD_FORBIDDEN:
        return "FieldValueForbidden";
    case FIELD_DUPLICATE:
        return "FieldValueDuplicate";
    case FIELD_TOO_LONG:
        return "FieldValueTooLong";
    case FIELD_TOO_MANY:
        return "FieldValueTooMany";
    case FIELD_INVALID:
    case FIELD_UNKNOWN:
    case FIELD_WARNING:
        break;
    }
    return "FieldValueInvalid";
}

cJSON *api_status_invalid(const char *kind, const char *group, const char *name,
                          const struct field_errors *errs)
{
    struct strbuf msg = STRBUF_INIT, line = STRBUF_INIT;
    size_t n = field_errors_count(errs), k = 0;
    cJSON *s, *d, *causes;

    qualified(&msg, kind, group);
    strbuf_addf(&msg, " \"%s\" is invalid: %s", name ? name : "", n > 1 ? "[" : "");
    for (size_t i = 0; i < errs->n; i++) {
        if (errs->v[i].type == FIELD_WARNING)
            continue;
        strbuf_reset(&line);
        field_error_format(&errs->v[i], &line);
        strbuf_addf(&msg, "%s%s", k++ ? ", " : "", line.buf);
    }
    if (n > 1)
        strbuf_addch(&msg, ']');
    s = status_base("Failure", 422);
    add_str(s, "message", msg.buf);
    add_str(s, "reason", "Invalid");
    d = details(s, name, group, kind);
    causes = must(cJSON_AddArrayToObject(d, "causes"));
    for (size_t i = 0; i < errs->n; i++) {
        const struct field_error *fe = &errs->v[i];
        struct field_error body = *fe;
        cJSON *c;

        if (fe->type == FIELD_WARNING)
            continue;
        /* The cause message is the error without its field (ErrorBody). */
        body.field = (char *)"";
        strbuf_reset(&line);
        field_error_format(&body, &line);
        c = must(cJSON_CreateObject());
        add_str(c, "reason", cause_reason(fe->type));
        add_str(c, "message", line.buf);
        add_str(c, "field", fe->field);
        CHECK(cJSON_AddItemToArray(causes, c));
    }
    CHECK(cJSON_AddNumberToObject(s, "code", 422));
    strbuf_release(&msg);
    strbuf_release(&line);
    return s;
}

cJSON *api_status_success(int code, const struct api_status_target *t, const char *uid)
{
    cJSON *s = status_base("Success", code);

    if (t) {
        cJSON *d = details(s, t->name, t->group, t->resource);
        if (uid && *uid)
            add_str(d, "uid", uid);
    }
    if (code != 200)
        CHECK(cJSON_AddNumberToObject(s, "code", code));
    return s;
}

cJSON *api_status_from_errno(int r, const char *message, const struct api_status_target *t)
{
    char buf[160];

    switch (r) {
    case -ENOENT:
        return api_status_not_found(t);
    case -EEXIST:
        return api_status_already_exists(t);
    case -ESTALE:
        return api_status_conflict(t);
    case -E2BIG:
        return api_status_failure(413, "RequestEntityTooLarge",
                                  message ? message : "Request entity too large", t);
    case -EINVAL:
        return api_status_failure(400, "BadRequest", message ? message : "bad request", t);
    case -EACCES:
    case -EPERM:
        return api_status_failure(403, "Forbidden", message ? message : "forbidden", t);
    case -EBUSY:
    case -EAGAIN:
        return api_status_failure(503, "ServiceUnavailable",
                                  message ? message : "the server is busy, try again", t);
    default:
        (void)snprintf(buf, sizeof(buf), "Internal error occurred: %s",
                       message ? message : err_str(r));
        return api_status_failure(500, "InternalError", buf, t);
    }
}
