/*
 * The part of NodeResourcesFit and NodeResourcesBalancedAllocation that upstream keeps in
 * pkg/scheduler/framework/plugins/noderesources/resource_allocation.go (which resources a score
 * looks at and how their amounts are read) plus the args walker both plugins decode with.
 */
#include "sched/plugins/noderesources/resource_allocation.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/field.h"
#include "base/base.h"

void sched__noderes_specs_release(struct sched_noderes_specs *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].name);
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

/* ---- args decoding ---- */

void sched__noderes_dec_init(struct sched_noderes_dec *d, const char *base,
                             struct field_errors *errs)
{
    d->errs = errs;
    strbuf_init(&d->path);
    if (base)
        strbuf_addstr(&d->path, base);
}

void sched__noderes_dec_release(struct sched_noderes_dec *d)
{
    strbuf_release(&d->path);
}

size_t sched__noderes_dec_push(struct sched_noderes_dec *d, const char *key)
{
    size_t len = d->path.len;

    if (len)
        strbuf_addch(&d->path, '.');
    strbuf_addstr(&d->path, key);
    return len;
}

size_t sched__noderes_dec_push_index(struct sched_noderes_dec *d, size_t i)
{
    size_t len = d->path.len;

    strbuf_addf(&d->path, "[%zu]", i);
    return len;
}

void sched__noderes_dec_pop(struct sched_noderes_dec *d, size_t len)
{
    strbuf_setlen(&d->path, len);
}

void sched__noderes_repr(const cJSON *v, struct strbuf *out)
{
    char *s;

    if (cJSON_IsString(v)) {
        strbuf_add_json_str(out, v->valuestring);
        return;
    }
    if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
        fabs(v->valuedouble) < 9.0e15) {
        strbuf_addf(out, "%lld", (long long)v->valuedouble);
        return;
    }
    s = cJSON_PrintUnformatted(v);
    strbuf_addstr(out, s ? s : "null");
    cJSON_free(s);
}

void sched__noderes_invalid(struct sched_noderes_dec *d, const cJSON *v, const char *why)
{
    struct strbuf r = STRBUF_INIT;

    sched__noderes_repr(v, &r);
    field_error_add(d->errs, FIELD_INVALID, d->path.buf, r.buf, "%s", why);
    strbuf_release(&r);
}

bool sched__noderes_check_object(struct sched_noderes_dec *d, const cJSON *v,
                                 const char *const *keys)
{
    const cJSON *c;

    if (!cJSON_IsObject(v)) {
        sched__noderes_invalid(d, v, "must be an object");
        return false;
    }
    cJSON_ArrayForEach(c, v)
    {
        const char *const *k = keys;
        size_t len;

        while (*k && strcmp(*k, c->string))
            k++;
        if (*k)
            continue;
        len = sched__noderes_dec_push(d, c->string);
        field_error_add(d->errs, FIELD_UNKNOWN, d->path.buf, NULL, "unknown field \"%s\"",
                        d->path.buf);
        sched__noderes_dec_pop(d, len);
    }
    return true;
}

const cJSON *sched__noderes_member(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    return cJSON_IsNull(v) ? NULL : v;
}

bool sched__noderes_int(struct sched_noderes_dec *d, const cJSON *v, int64_t *ret)
{
    /* Integers beyond 2^53 cannot be told apart in a double; no field here needs them. */
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
        fabs(v->valuedouble) > 9007199254740992.0) {
        sched__noderes_invalid(d, v, "must be an integer");
        return false;
    }
    *ret = (int64_t)v->valuedouble;
    return true;
}

static void spec_add(struct sched_noderes_specs *s, const char *name, int64_t weight)
{
    struct sched_noderes_spec *sp;
    int idx;

    s->v = xrealloc(s->v, (s->n + 1) * sizeof(*s->v));
    sp = &s->v[s->n++];
    sp->name = xstrdup(name);
    sp->weight = weight ? weight : 1;
    /* Interning here keeps the score path free of name lookups; a name the scheduler does not
     * count (or one past the table) is scored as absent, as upstream scores "pods". */
    idx = *name ? sched_res_index(name) : -1;
    sp->idx = idx < 0 ? -1 : idx;
}

bool sched__noderes_specs_decode(struct sched_noderes_dec *d, const cJSON *v,
                                 struct sched_noderes_specs *ret)
{
    static const char *const keys[] = {"name", "weight", NULL};
    size_t before = field_errors_count(d->errs);
    const cJSON *e;
    size_t i = 0;

    ret->v = NULL;
    ret->n = 0;
    if (v && !cJSON_IsArray(v)) {
        sched__noderes_invalid(d, v, "must be an array");
        v = NULL;
    }
    cJSON_ArrayForEach(e, v)
    {
        size_t len = sched__noderes_dec_push_index(d, i++);
        const cJSON *name, *w;
        int64_t weight = 0;
        size_t l2;

        if (!sched__noderes_check_object(d, e, keys)) {
            sched__noderes_dec_pop(d, len);
            continue;
        }
        name = sched__noderes_member(e, "name");
        w = sched__noderes_member(e, "weight");
        l2 = sched__noderes_dec_push(d, "name");
        if (name && !cJSON_IsString(name)) {
            sched__noderes_invalid(d, name, "must be a string");
            name = NULL;
        } else if (!name || !*name->valuestring) {
            field_error_add(d->errs, FIELD_REQUIRED, d->path.buf, NULL, "%s", "");
            name = NULL;
        }
        sched__noderes_dec_pop(d, l2);
        if (w) {
            l2 = sched__noderes_dec_push(d, "weight");
            if (!sched__noderes_int(d, w, &weight))
                weight = 1;
            sched__noderes_dec_pop(d, l2);
        }
        spec_add(ret, name ? name->valuestring : "", weight);
        sched__noderes_dec_pop(d, len);
    }
    if (ret->n == 0) {
        spec_add(ret, "cpu", 1);
        spec_add(ret, "memory", 1);
    }
    return field_errors_count(d->errs) == before;
}
