/*
 * The schema walker: validation, defaulting, canonical encoding and the MergeCfg overlay over
 * the static type descriptions (see schema.h for why there is one description per type).
 */
#include "api/schema.h"

#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/duration.h"
#include "api/labels.h"
#include "api/quantity.h"
#include "api/rfc3339.h"
#include "base/base.h"
#include "codec/patch.h"

static const char *const type_names[] = {
    [API_ANY] = "any",        [API_OBJECT] = "object",   [API_MAP] = "object",
    [API_ARRAY] = "array",    [API_STRING] = "string",   [API_INT] = "integer",
    [API_NUMBER] = "number",  [API_BOOL] = "boolean",    [API_QUANTITY] = "string",
    [API_INT_OR_STRING] = "", [API_DURATION] = "string", [API_TIME] = "string",
};

#define QUANTITY_REGEX "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"

/* Most keys differ from most property names in their first byte: test it before strcmp. */
static int prop_index(const struct api_schema *s, const char *name)
{
    int i = 0;

    if (!s || s->type != API_OBJECT || !s->props || !name)
        return -1;
    for (const struct api_prop *p = s->props; p->name; p++, i++)
        if (p->name[0] == name[0] && !strcmp(p->name, name))
            return i;
    return -1;
}

const struct api_prop *api_schema_prop(const struct api_schema *s, const char *name)
{
    int i = prop_index(s, name);
    return i < 0 ? NULL : &s->props[i];
}

void api_value_repr(const cJSON *v, struct strbuf *out)
{
    char *txt;

    if (!v || cJSON_IsNull(v)) {
        strbuf_addstr(out, "null");
        return;
    }
    if (cJSON_IsString(v)) {
        strbuf_add_json_str(out, v->valuestring);
        return;
    }
    if (cJSON_IsObject(v)) {
        strbuf_addstr(out, "\"object\"");
        return;
    }
    if (cJSON_IsArray(v)) {
        strbuf_addstr(out, "\"array\"");
        return;
    }
    txt = cJSON_PrintUnformatted(v);
    if (!txt) {
        strbuf_addstr(out, "?");
        return;
    }
    strbuf_addstr(out, txt);
    cJSON_free(txt);
}

size_t api_walk_push(struct api_walk *w, const char *name, long index)
{
    size_t len = w->path.len;
    char num[24];
    size_t n = sizeof(num);
    unsigned long u = index < 0 ? 0 : (unsigned long)index;

    /* Hot path (every node of every object): no printf. */
    if (name) {
        if (w->path.len)
            strbuf_addch(&w->path, '.');
        strbuf_addstr(&w->path, name);
        return len;
    }
    do {
        num[--n] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    strbuf_addch(&w->path, '[');
    strbuf_add(&w->path, num + n, sizeof(num) - n);
    strbuf_addch(&w->path, ']');
    return len;
}

void api_walk_pop(struct api_walk *w, size_t len)
{
    strbuf_setlen(&w->path, len);
}

static void walk_add(struct api_walk *w, const char *child, enum field_error_type type,
                     const cJSON *value, const char *detail)
{
    struct strbuf val = STRBUF_INIT;
    size_t len = w->path.len;

    if (child)
        (void)api_walk_push(w, child, 0);
    if (value)
        api_value_repr(value, &val);
    field_error_add(w->errs, type, w->path.buf, value ? val.buf : NULL, "%s", detail);
    api_walk_pop(w, len);
    strbuf_release(&val);
}

void api_walk_error(struct api_walk *w, const char *child, enum field_error_type type,
                    const cJSON *value, const char *fmt, ...)
{
    struct strbuf d = STRBUF_INIT;
    va_list ap;

    if (fmt) {
        va_start(ap, fmt);
        strbuf_vaddf(&d, fmt, ap);
        va_end(ap);
    }
    walk_add(w, child, type, value, d.buf);
    strbuf_release(&d);
}

static bool is_absent(const cJSON *v)
{
    return !v || cJSON_IsNull(v);
}

static bool is_integral(const cJSON *v)
{
    double d = v->valuedouble;
    return cJSON_IsNumber(v) && isfinite(d) && floor(d) == d && d >= -9223372036854775808.0 &&
           d < 9223372036854775808.0;
}

static void format_bound(double b, char *buf, size_t len)
{
    if (floor(b) == b && fabs(b) < 1e15)
        (void)snprintf(buf, len, "%.0f", b);
    else
        (void)snprintf(buf, len, "%g", b);
}

/* Kubernetes' CRD validation wording: "<path> in body should be greater than or equal to 0". */
static void check_range(const struct api_range *r, const cJSON *v, struct api_walk *w, bool crd)
{
    double d = v->valuedouble;
    char b[64];

    if (r->has_min && (r->excl_min ? !(d > r->min) : !(d >= r->min))) {
        format_bound(r->min, b, sizeof(b));
        if (crd)
            api_walk_error(w, NULL, FIELD_INVALID, v, "%s in body should be greater than %s%s",
                           w->path.buf, r->excl_min ? "" : "or equal to ", b);
        else
            api_walk_error(w, NULL, FIELD_INVALID, v, "must be greater than %s%s",
                           r->excl_min ? "" : "or equal to ", b);
    }
    if (r->has_max && (r->excl_max ? !(d < r->max) : !(d <= r->max))) {
        format_bound(r->max, b, sizeof(b));
        if (crd)
            api_walk_error(w, NULL, FIELD_INVALID, v, "%s in body should be less than %s%s",
                           w->path.buf, r->excl_max ? "" : "or equal to ", b);
        else
            api_walk_error(w, NULL, FIELD_INVALID, v, "must be less than %s%s",
                           r->excl_max ? "" : "or equal to ", b);
    }
}

/* An enum's value, or for a map one of its keys (v is then a string holding it). */
static void check_enum(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    struct strbuf list = STRBUF_INIT;

    for (const char *const *e = s->enums; *e; e++)
        if (!strcmp(*e, v->valuestring))
            return;
    strbuf_addstr(&list, "supported values: ");
    for (const char *const *e = s->enums; *e; e++) {
        if (e != s->enums)
            strbuf_addstr(&list, ", ");
        strbuf_add_json_str(&list, *e);
    }
    walk_add(w, NULL, FIELD_NOT_SUPPORTED, v, list.buf);
    strbuf_release(&list);
}

/* kube-openapi's InvalidType ("%s in body must be of type %s: %q") names the JSON type found. */
static const char *json_type_name(const cJSON *v)
{
    if (cJSON_IsString(v))
        return "string";
    if (cJSON_IsBool(v))
        return "boolean";
    if (cJSON_IsNumber(v))
        return is_integral(v) ? "integer" : "number";
    if (cJSON_IsArray(v))
        return "array";
    if (cJSON_IsObject(v))
        return "object";
    return "null";
}

static void type_error(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    const char *want = s->type == API_INT_OR_STRING || s->type == API_QUANTITY
                           ? "integer or string"
                           : type_names[s->type];
    api_walk_error(w, NULL, FIELD_INVALID, v, "%s in body must be of type %s: \"%s\"", w->path.buf,
                   want, json_type_name(v));
}

static void check_pairs(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    for (const struct api_pair *p = s->wh_pairs; p->greater; p++) {
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(v, p->greater);
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(v, p->lesser);
        bool hg = !is_absent(g), hl = !is_absent(l);

        if (!hg && !hl)
            continue;
        if (hg && !hl) {
            api_walk_error(w, p->lesser, FIELD_REQUIRED, NULL, "must be set together with %s",
                           p->greater);
            continue;
        }
        if (!hg && hl) {
            api_walk_error(w, p->greater, FIELD_REQUIRED, NULL, "must be set together with %s",
                           p->lesser);
            continue;
        }
        if (cJSON_IsNumber(g) && cJSON_IsNumber(l) && !(g->valuedouble > l->valuedouble))
            api_walk_error(w, p->greater, FIELD_INVALID, g, "must be greater than %s (%g)",
                           p->lesser, l->valuedouble);
    }
}

static void walk(const struct api_schema *s, const cJSON *v, struct api_walk *w);
static void walk_object(const struct api_schema *s, const cJSON *v, struct api_walk *w);

/* Type-only walk: the checks Go's json.Unmarshal performs when decoding into the type. */
static void walk_types(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    const cJSON *c;
    long i = 0;
    bool ok = true;

    switch (s->type) {
    case API_ANY:
        return;
    case API_OBJECT:
        if (!(ok = cJSON_IsObject(v)))
            break;
        walk_object(s, v, w);
        return;
    case API_MAP:
    case API_ARRAY:
        if (!(ok = s->type == API_MAP ? cJSON_IsObject(v) : cJSON_IsArray(v)))
            break;
        cJSON_ArrayForEach(c, v)
        {
            size_t len = w->path.len;
            if (s->type == API_MAP)
                strbuf_addf(&w->path, "[%s]", c->string);
            else
                (void)api_walk_push(w, NULL, i++);
            walk(s->items, c, w);
            api_walk_pop(w, len);
        }
        return;
    case API_STRING:
    case API_DURATION:
    case API_TIME:
        ok = cJSON_IsString(v);
        if (ok && s->type == API_DURATION) {
            int64_t ns;
            if (duration_parse(v->valuestring, &ns) < 0)
                api_walk_error(w, NULL, FIELD_INVALID, v, "time: invalid duration \"%s\"",
                               v->valuestring);
        }
        break;
    case API_INT:
        ok = is_integral(v);
        break;
    case API_NUMBER:
        ok = cJSON_IsNumber(v);
        break;
    case API_BOOL:
        ok = cJSON_IsBool(v);
        break;
    case API_QUANTITY: {
        struct quantity q;
        ok = is_integral(v) || cJSON_IsString(v);
        if (cJSON_IsString(v) && quantity_parse(v->valuestring, &q) < 0)
            api_walk_error(w, NULL, FIELD_INVALID, v,
                           "quantities must match the regular expression '" QUANTITY_REGEX "'");
        break;
    }
    case API_INT_OR_STRING:
        ok = is_integral(v) || cJSON_IsString(v);
        break;
    }
    if (!ok)
        type_error(s, v, w);
}

/* One pass over the object's keys; required keys are checked from a bitmap afterwards. */
static void walk_object(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    const cJSON *c;
    uint64_t present = 0;
    int nprops = 0, i;

    cJSON_ArrayForEach(c, v)
    {
        nprops++;
        i = prop_index(s, c->string);
        if (i >= 0) {
            CHECK(i < 64);
            if (is_absent(c))
                continue;
            present |= UINT64_C(1) << i;
            size_t len = api_walk_push(w, s->props[i].name, 0);
            walk(s->props[i].schema, c, w);
            api_walk_pop(w, len);
            continue;
        }
        if (!c->string || (s->flags & API_S_PRESERVE) || (w->flags & API_V_TYPES))
            continue;
        size_t len = api_walk_push(w, c->string, 0);
        field_error_add(w->errs, (w->flags & API_V_STRICT) ? FIELD_UNKNOWN : FIELD_WARNING,
                        w->path.buf, NULL, "unknown field \"%s\"", w->path.buf);
        api_walk_pop(w, len);
    }
    if (s->props && !(w->flags & API_V_TYPES)) {
        i = 0;
        for (const struct api_prop *p = s->props; p->name; p++, i++)
            if ((p->flags & API_REQ) && !(present & (UINT64_C(1) << i)))
                walk_add(w, p->name, FIELD_REQUIRED, NULL, "");
    }
    if (s->min_props && nprops < s->min_props && !(w->flags & API_V_TYPES))
        api_walk_error(w, NULL, FIELD_INVALID, v, "%s in body should have at least %d properties",
                       w->path.buf, s->min_props);
    if ((w->flags & API_V_WEBHOOK) && s->wh_pairs)
        check_pairs(s, v, w);
}

/* A value as Go's %#v prints the unstructured value in a Duplicate error: strings quoted,
 * numbers and booleans bare, null as interface {}(nil), objects as map[string]interface {}{...}
 * with sorted keys (apimachinery field.Error.ErrorBody's fallback). */
static void go_repr(const cJSON *v, struct strbuf *out)
{
    if (cJSON_IsObject(v)) {
        const cJSON *keys[64];
        size_t n = 0;
        const cJSON *c;

        cJSON_ArrayForEach(c, v)
        {
            size_t j = n;
            if (n == ARRAY_SIZE(keys))
                break;
            while (j > 0 && strcmp(keys[j - 1]->string, c->string) > 0) {
                keys[j] = keys[j - 1];
                j--;
            }
            keys[j] = c;
            n++;
        }
        strbuf_addstr(out, "map[string]interface {}{");
        for (size_t k = 0; k < n; k++) {
            if (k)
                strbuf_addstr(out, ", ");
            strbuf_add_json_str(out, keys[k]->string);
            strbuf_addch(out, ':');
            go_repr(keys[k], out);
        }
        strbuf_addch(out, '}');
    } else if (cJSON_IsArray(v)) {
        const cJSON *c;
        bool first = true;

        strbuf_addstr(out, "[]interface {}{");
        cJSON_ArrayForEach(c, v)
        {
            if (!first)
                strbuf_addstr(out, ", ");
            first = false;
            go_repr(c, out);
        }
        strbuf_addch(out, '}');
    } else if (!v || cJSON_IsNull(v)) {
        strbuf_addstr(out, "interface {}(nil)");
    } else {
        api_value_repr(v, out);
    }
}

/* Whether items a and b of a list-type map have the same keys (an absent key equals only an
 * absent one, as apiextensions' unspecifiedKeyValue). */
static bool same_map_keys(const struct api_schema *s, const cJSON *a, const cJSON *b)
{
    for (const char *const *k = s->map_keys; *k; k++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(a, *k);
        const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, *k);
        if ((!x) != (!y) || (x && !json_value_equal(x, y)))
            return false;
    }
    return true;
}

/*
 * x-kubernetes-list-type set and map (apiextensions-apiserver schema/listtype/validation.go):
 * the second occurrence of a value (set) or of a key combination (map) is a Duplicate value,
 * at its index; a map's items must be objects. Quadratic in the items, which the body limit
 * bounds.
 */
static void check_list_type(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    int n = cJSON_GetArraySize(v);
    const cJSON **items;
    int i = 0;
    const cJSON *c;

    if (s->flags & API_S_LIST_MAP) {
        cJSON_ArrayForEach(c, v)
        {
            if (!cJSON_IsObject(c) && !cJSON_IsNull(c)) {
                size_t len = api_walk_push(w, NULL, i);
                walk_add(w, NULL, FIELD_INVALID, c,
                         "must be an object for an array of list-type map");
                api_walk_pop(w, len);
                return;
            }
            i++;
        }
    }
    if (n <= 1)
        return;
    items = xcalloc((size_t)n, sizeof(const cJSON *));
    i = 0;
    cJSON_ArrayForEach(c, v) items[i++] = c;
    for (i = 1; i < n; i++) {
        int before = 0;
        for (int j = 0; j < i && before < 2; j++)
            before += (s->flags & API_S_LIST_MAP) ? same_map_keys(s, items[j], items[i])
                                                  : json_value_equal(items[j], items[i]);
        if (before == 1) {
            /* the second occurrence only, as upstream counts them */
            struct strbuf val = STRBUF_INIT;
            size_t len = api_walk_push(w, NULL, i);

            if (s->flags & API_S_LIST_MAP) {
                cJSON *keys = cJSON_CreateObject();
                CHECK(keys);
                for (const char *const *k = s->map_keys; *k; k++) {
                    const cJSON *kv = cJSON_GetObjectItemCaseSensitive(items[i], *k);
                    CHECK(cJSON_AddItemToObject(
                        keys, *k, kv ? cJSON_Duplicate(kv, true) : cJSON_CreateNull()));
                }
                go_repr(keys, &val);
                cJSON_Delete(keys);
            } else {
                go_repr(items[i], &val);
            }
            field_error_add(w->errs, FIELD_DUPLICATE, w->path.buf, val.buf, NULL);
            api_walk_pop(w, len);
            strbuf_release(&val);
        }
    }
    free(items);
}

static void walk(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    const cJSON *c;
    long i = 0;

    if (is_absent(v))
        return;
    if (w->flags & API_V_TYPES) {
        walk_types(s, v, w);
        return;
    }
    switch (s->type) {
    case API_ANY:
        break;
    case API_OBJECT:
        if (!cJSON_IsObject(v))
            goto bad_type;
        walk_object(s, v, w);
        break;
    case API_MAP:
        if (!cJSON_IsObject(v))
            goto bad_type;
        cJSON_ArrayForEach(c, v)
        {
            size_t len = w->path.len;
            if (s->enums) {
                cJSON key = {.type = cJSON_String, .valuestring = c->string};
                check_enum(s, &key, w);
            }
            strbuf_addch(&w->path, '[');
            strbuf_addstr(&w->path, c->string);
            strbuf_addch(&w->path, ']');
            if (s->keys & API_KEYS_QUALIFIED) {
                struct strbuf why = STRBUF_INIT;
                if (labels_check_qualified_name(c->string, &why) < 0)
                    api_walk_error(w, NULL, FIELD_INVALID, NULL, "%s", why.buf);
                strbuf_release(&why);
            }
            walk(s->items, c, w);
            api_walk_pop(w, len);
        }
        break;
    case API_ARRAY:
        if (!cJSON_IsArray(v))
            goto bad_type;
        if (s->min_items && cJSON_GetArraySize(v) < s->min_items)
            api_walk_error(w, NULL, FIELD_INVALID, v, "%s in body should have at least %d items",
                           w->path.buf, s->min_items);
        cJSON_ArrayForEach(c, v)
        {
            size_t len = api_walk_push(w, NULL, i++);
            if (cJSON_IsNull(c) && s->items->type != API_ANY)
                walk_add(w, NULL, FIELD_INVALID, c, "must not be null");
            else
                walk(s->items, c, w);
            api_walk_pop(w, len);
        }
        if (s->flags & (API_S_LIST_SET | API_S_LIST_MAP))
            check_list_type(s, v, w);
        break;
    case API_STRING:
        if (!cJSON_IsString(v))
            goto bad_type;
        if (s->enums)
            check_enum(s, v, w);
        if (s->pattern_re && regexec(s->pattern_re, v->valuestring, 0, NULL, 0) != 0)
            api_walk_error(w, NULL, FIELD_INVALID, v, "%s in body should match '%s'", w->path.buf,
                           s->pattern);
        if (s->max_len && strlen(v->valuestring) > (size_t)s->max_len)
            api_walk_error(w, NULL, FIELD_TOO_LONG, NULL, "may not be more than %d bytes",
                           s->max_len);
        break;
    case API_INT:
        if (!is_integral(v))
            goto bad_type;
        if (s->format && !strcmp(s->format, "int32") &&
            (v->valuedouble < INT32_MIN || v->valuedouble > INT32_MAX)) {
            api_walk_error(w, NULL, FIELD_INVALID, v, "must be a 32-bit integer");
            break;
        }
        check_range(&s->crd, v, w, true);
        if (w->flags & API_V_WEBHOOK)
            check_range(&s->wh, v, w, false);
        break;
    case API_NUMBER:
        if (!cJSON_IsNumber(v))
            goto bad_type;
        check_range(&s->crd, v, w, true);
        if (w->flags & API_V_WEBHOOK)
            check_range(&s->wh, v, w, false);
        break;
    case API_BOOL:
        if (!cJSON_IsBool(v))
            goto bad_type;
        break;
    case API_QUANTITY: {
        struct quantity q;
        if (cJSON_IsNumber(v)) {
            if (!is_integral(v))
                goto bad_type;
            break;
        }
        if (!cJSON_IsString(v))
            goto bad_type;
        if (quantity_parse(v->valuestring, &q) < 0)
            api_walk_error(w, NULL, FIELD_INVALID, v,
                           "quantities must match the regular expression '" QUANTITY_REGEX "'");
        break;
    }
    case API_INT_OR_STRING:
        if (!cJSON_IsString(v) && !is_integral(v))
            goto bad_type;
        break;
    case API_DURATION: {
        int64_t ns;
        if (!cJSON_IsString(v))
            goto bad_type;
        if (duration_parse(v->valuestring, &ns) < 0)
            api_walk_error(w, NULL, FIELD_INVALID, v,
                           "must be a duration such as \"300ms\", \"1.5h\" or \"2h45m\"");
        break;
    }
    case API_TIME: {
        int64_t sec;
        int32_t nsec;
        if (!cJSON_IsString(v))
            goto bad_type;
        if (rfc3339_parse(v->valuestring, &sec, &nsec) < 0)
            api_walk_error(w, NULL, FIELD_INVALID, v,
                           "must be an RFC 3339 date-time such as \"2024-03-05T08:00:00Z\"");
        break;
    }
    }
    if (s->check)
        s->check(s, v, w);
    return;
bad_type:
    type_error(s, v, w);
}

void api_validate(const struct api_schema *s, const cJSON *v, const char *prefix, unsigned flags,
                  struct field_errors *errs)
{
    struct api_walk w = {.path = STRBUF_INIT, .errs = errs, .flags = flags, .root = v};

    strbuf_addstr(&w.path, prefix ? prefix : "");
    walk(s, v, &w);
    strbuf_release(&w.path);
}

/*
 * Whether any default (CRD, or controller with API_D_CTRL) exists at or below s, so defaulting
 * skips the subtrees that have none (a NodeMetric's 110 pod entries). The answer is a property
 * of the static tables; it is memoised per schema pointer in a small lock-free table (racing
 * writers store the same value).
 */
#define DFLT_CACHE 4096 /* power of two; the tables hold a few hundred schema nodes */
#define DFLT_PROBE 16
#define DFLT_KNOWN ((uintptr_t)API_DFLT_KNOWN)
#define DFLT_CRD   ((uintptr_t)API_DFLT_CRD)
#define DFLT_CTRL  ((uintptr_t)API_DFLT_CTRL)
static _Atomic uintptr_t dflt_cache[DFLT_CACHE];

static uintptr_t defaults_below(const struct api_schema *s, int depth)
{
    uintptr_t key = (uintptr_t)s, bits = 0, e;
    size_t h = (size_t)((key >> 3) * 2654435761u);

    /* Trees built at run time carry the answer: their memory may be reused, so no memo. */
    if (s->dflt_below & API_DFLT_KNOWN)
        return s->dflt_below;

    for (int i = 0; i < DFLT_PROBE; i++) {
        e = atomic_load_explicit(&dflt_cache[(h + i) & (DFLT_CACHE - 1)], memory_order_relaxed);
        if ((e & ~(uintptr_t)7) == key)
            return e & 7;
        if (!e)
            break;
    }
    if (depth > 64) /* recursive types: assume defaults below */
        return DFLT_KNOWN | DFLT_CRD | DFLT_CTRL;
    if (s->type == API_OBJECT) {
        for (const struct api_prop *p = s->props; p && p->name; p++) {
            if (p->dflt)
                bits |= (p->flags & API_CTRL) ? DFLT_CTRL : DFLT_CRD;
            bits |= defaults_below(p->schema, depth + 1) & (DFLT_CRD | DFLT_CTRL);
        }
    } else if (s->type == API_ARRAY || s->type == API_MAP) {
        bits |= defaults_below(s->items, depth + 1) & (DFLT_CRD | DFLT_CTRL);
    }
    bits |= DFLT_KNOWN;
    /* Claim an empty slot; losing a race only costs a recomputation later. */
    for (int i = 0; i < DFLT_PROBE && !(key & 7); i++) {
        uintptr_t expect = 0;
        if (atomic_compare_exchange_strong(&dflt_cache[(h + i) & (DFLT_CACHE - 1)], &expect,
                                           key | bits) ||
            (expect & ~(uintptr_t)7) == key)
            break;
    }
    return bits;
}

/* One pass over the keys to recurse and note what is present, then the missing defaults. */
int api_default(const struct api_schema *s, cJSON *v, unsigned flags)
{
    uint64_t present = 0, nulls = 0;
    cJSON *c;
    int r, i;

    if (is_absent(v))
        return 0;
    if (!(defaults_below(s, 0) & ((flags & API_D_CTRL) ? (DFLT_CRD | DFLT_CTRL) : DFLT_CRD)))
        return 0;
    switch (s->type) {
    case API_OBJECT:
        if (!cJSON_IsObject(v) || !s->props)
            return 0;
        cJSON_ArrayForEach(c, v)
        {
            i = prop_index(s, c->string);
            if (i < 0)
                continue;
            CHECK(i < 64);
            if (cJSON_IsNull(c)) {
                nulls |= UINT64_C(1) << i;
                continue;
            }
            present |= UINT64_C(1) << i;
            r = api_default(s->props[i].schema, c, flags);
            if (r < 0)
                return r;
        }
        i = 0;
        for (const struct api_prop *p = s->props; p->name; p++, i++) {
            cJSON *d;
            if ((present & (UINT64_C(1) << i)) || !p->dflt ||
                ((p->flags & API_CTRL) && !(flags & API_D_CTRL)))
                continue;
            d = cJSON_Parse(p->dflt);
            if (!d)
                return -ENOMEM;
            /* Replacing via the pointer would drop the key: the parsed default has none. */
            if ((nulls & (UINT64_C(1) << i))
                    ? !cJSON_ReplaceItemInObjectCaseSensitive(v, p->name, d)
                    : !cJSON_AddItemToObject(v, p->name, d)) {
                cJSON_Delete(d);
                return -ENOMEM;
            }
            r = api_default(p->schema, d, flags);
            if (r < 0)
                return r;
        }
        return 0;
    case API_ARRAY:
    case API_MAP:
        if (!cJSON_IsArray(v) && !cJSON_IsObject(v))
            return 0;
        cJSON_ArrayForEach(c, v)
        {
            r = api_default(s->items, c, flags);
            if (r < 0)
                return r;
        }
        return 0;
    default:
        return 0;
    }
}

cJSON *api_zero_value(const struct api_schema *s)
{
    cJSON *z = NULL;

    switch (s->type) {
    case API_OBJECT:
        (void)api_encode(s, NULL, &z);
        return z ? z : cJSON_CreateObject();
    case API_STRING:
        return cJSON_CreateString("");
    case API_INT:
    case API_NUMBER:
    case API_INT_OR_STRING:
        return cJSON_CreateNumber(0);
    case API_BOOL:
        return cJSON_CreateFalse();
    case API_QUANTITY:
        return cJSON_CreateString("0");
    case API_DURATION:
        return cJSON_CreateString("0s");
    case API_TIME:
    case API_ANY:
    case API_MAP:
    case API_ARRAY:
        return cJSON_CreateNull();
    }
    return cJSON_CreateNull();
}

/* Go's omitempty test for a value that is present. */
static bool is_empty_value(const cJSON *v)
{
    if (cJSON_IsString(v))
        return !*v->valuestring;
    if (cJSON_IsNumber(v))
        return v->valuedouble == 0;
    if (cJSON_IsFalse(v))
        return true;
    if (cJSON_IsArray(v))
        return cJSON_GetArraySize(v) == 0;
    return false;
}

/* Replaces a scalar's text in place (number -> string too). */
static int set_string(cJSON *v, const char *str)
{
    char *copy;

    if (cJSON_IsString(v) && !strcmp(v->valuestring, str))
        return 0;
    copy = cstrndup(str, strlen(str));
    if (!copy)
        return -ENOMEM;
    if (cJSON_IsString(v) && !(v->type & cJSON_IsReference))
        free(v->valuestring);
    v->type = cJSON_String;
    v->valuestring = copy;
    v->valueint = 0;
    v->valuedouble = 0;
    return 0;
}

static int canon_scalar(const struct api_schema *s, cJSON *v)
{
    char buf[QUANTITY_STR_MAX > DURATION_STR_MAX ? QUANTITY_STR_MAX : DURATION_STR_MAX];
    char tb[RFC3339_STR_MAX];
    struct quantity q;
    int64_t ns, sec;
    int32_t nsec;

    switch (s->type) {
    case API_QUANTITY:
        if (cJSON_IsString(v)) {
            if (quantity_parse(v->valuestring, &q) < 0)
                return 0;
        } else if (is_integral(v)) {
            quantity_from_int((int64_t)v->valuedouble, QUANTITY_DECIMAL_SI, &q);
        } else {
            return 0;
        }
        (void)quantity_format(&q, buf);
        return set_string(v, buf);
    case API_DURATION:
        if (!cJSON_IsString(v) || duration_parse(v->valuestring, &ns) < 0)
            return 0;
        (void)duration_format(ns, buf);
        return set_string(v, buf);
    case API_TIME:
        if (!cJSON_IsString(v) || rfc3339_parse(v->valuestring, &sec, &nsec) < 0)
            return 0;
        (void)rfc3339_format(sec, tb);
        return set_string(v, tb);
    default:
        return 0;
    }
}

/* Appends c to the list headed by *head (cJSON keeps the tail in head->prev). */
static void list_append(cJSON **head, cJSON *c)
{
    c->next = NULL;
    if (!*head) {
        *head = c;
        c->prev = c;
        return;
    }
    c->prev = (*head)->prev;
    (*head)->prev->next = c;
    (*head)->prev = c;
}

static bool omitted(const struct api_prop *p, const cJSON *c)
{
    if (p->flags & API_ALWAYS)
        return false;
    if ((p->flags & API_VAL) && is_empty_value(c))
        return true;
    return (p->schema->type == API_ARRAY || p->schema->type == API_MAP) &&
           (cJSON_IsArray(c) || cJSON_IsObject(c)) && !c->child;
}

static int canon(const struct api_schema *s, cJSON *v);

/*
 * Rebuilds the object's key list in schema order without copying: known keys are relinked in
 * property order (canonicalised, omitted per Go's rules), absent always-emitted properties get
 * their zero value, unknown keys follow when the schema preserves them and are freed otherwise.
 */
static int canon_object(const struct api_schema *s, cJSON *v)
{
    cJSON *slots[64] = {0}, *unknown = NULL, *head = NULL, *c, *next;
    int r = 0, i;

    for (c = v->child; c; c = next) {
        next = c->next;
        c->prev = c->next = NULL;
        i = prop_index(s, c->string);
        CHECK(i < 64);
        if (i >= 0 && !slots[i])
            slots[i] = c;
        else if (i < 0 && (s->flags & API_S_PRESERVE))
            list_append(&unknown, c);
        else
            cJSON_Delete(c);
    }
    v->child = NULL;
    i = 0;
    for (const struct api_prop *p = s->props; p && p->name; p++, i++) {
        c = slots[i];
        slots[i] = NULL;
        if (r < 0 || !c || cJSON_IsNull(c)) {
            cJSON_Delete(c);
            if (r < 0 || !(p->flags & API_ALWAYS))
                continue;
            c = api_zero_value(p->schema);
            if (c)
                c->string = cstrndup(p->name, strlen(p->name));
            if (!c || !c->string) {
                cJSON_Delete(c);
                r = -ENOMEM;
                continue;
            }
        } else {
            r = canon(p->schema, c);
            if (r < 0 || omitted(p, c)) {
                cJSON_Delete(c);
                continue;
            }
        }
        list_append(&head, c);
    }
    for (c = unknown; c; c = next) {
        next = c->next;
        list_append(&head, c);
    }
    v->child = head;
    return r;
}

static int canon(const struct api_schema *s, cJSON *v)
{
    cJSON *c;
    int r;

    if (cJSON_IsNull(v))
        return 0;
    switch (s->type) {
    case API_OBJECT:
        return cJSON_IsObject(v) ? canon_object(s, v) : 0;
    case API_MAP:
    case API_ARRAY:
        if (!(s->type == API_MAP ? cJSON_IsObject(v) : cJSON_IsArray(v)))
            return 0;
        cJSON_ArrayForEach(c, v)
        {
            r = canon(s->items, c);
            if (r < 0)
                return r;
        }
        return 0;
    default:
        return canon_scalar(s, v);
    }
}

int api_canonicalize(const struct api_schema *s, cJSON *v)
{
    return v ? canon(s, v) : 0;
}

int api_encode(const struct api_schema *s, const cJSON *v, cJSON **ret)
{
    cJSON *out;
    int r;

    *ret = NULL;
    if (!v && s->type != API_OBJECT)
        return 0;
    out = v ? cJSON_Duplicate(v, true) : cJSON_CreateObject();
    if (!out)
        return -ENOMEM;
    r = canon(s, out);
    if (r < 0) {
        cJSON_Delete(out);
        return r;
    }
    *ret = out;
    return 0;
}

/* Decodes the canonical override ov on top of *base the way encoding/json does. */
static int overlay_decoded(const struct api_schema *s, cJSON **base, const cJSON *ov)
{
    cJSON *b = *base, *n;
    const cJSON *c;
    int r, i = 0;

    if (b && !cJSON_IsNull(ov) &&
        ((s->type == API_OBJECT && cJSON_IsObject(b) && cJSON_IsObject(ov)) ||
         (s->type == API_MAP && cJSON_IsObject(b) && cJSON_IsObject(ov)))) {
        cJSON_ArrayForEach(c, ov)
        {
            cJSON *bc = cJSON_GetObjectItemCaseSensitive(b, c->string);
            const struct api_prop *p = s->type == API_OBJECT ? api_schema_prop(s, c->string) : NULL;
            /* Map values and unknown keys are replaced whole; struct fields merge. */
            if (p && bc) {
                cJSON *nb = bc;
                r = overlay_decoded(p->schema, &nb, c);
                if (r < 0)
                    return r;
                if (nb != bc && !cJSON_ReplaceItemViaPointer(b, bc, nb)) {
                    cJSON_Delete(nb);
                    return -ENOMEM;
                }
                continue;
            }
            n = cJSON_Duplicate(c, true);
            if (!n)
                return -ENOMEM;
            if (bc ? !cJSON_ReplaceItemViaPointer(b, bc, n)
                   : !cJSON_AddItemToObject(b, c->string, n)) {
                cJSON_Delete(n);
                return -ENOMEM;
            }
        }
        return 0;
    }
    if (b && s->type == API_ARRAY && cJSON_IsArray(b) && cJSON_IsArray(ov)) {
        int blen = cJSON_GetArraySize(b);
        cJSON_ArrayForEach(c, ov)
        {
            if (i < blen) {
                cJSON *bc = cJSON_GetArrayItem(b, i), *nb = bc;
                r = overlay_decoded(s->items, &nb, c);
                if (r < 0)
                    return r;
                if (nb != bc && !cJSON_ReplaceItemViaPointer(b, bc, nb)) {
                    cJSON_Delete(nb);
                    return -ENOMEM;
                }
            } else {
                n = cJSON_Duplicate(c, true);
                if (!n || !cJSON_AddItemToArray(b, n)) {
                    cJSON_Delete(n);
                    return -ENOMEM;
                }
            }
            i++;
        }
        while (cJSON_GetArraySize(b) > i)
            cJSON_DeleteItemFromArray(b, i);
        return 0;
    }
    n = cJSON_Duplicate(ov, true);
    if (!n)
        return -ENOMEM;
    *base = n;
    return 0;
}

int api_overlay(const struct api_schema *s, cJSON **base, const cJSON *ov)
{
    cJSON *enc = NULL, *old = *base;
    int r;

    r = api_encode(s, ov, &enc);
    if (r < 0)
        return r;
    if (!enc)
        return 0;
    r = overlay_decoded(s, base, enc);
    if (r == 0 && *base != old)
        cJSON_Delete(old);
    cJSON_Delete(enc);
    return r;
}
