/*
 * openAPIV3Schema -> struct api_schema (see openapi.h). Every node, property array, string and
 * compiled regex is recorded in the tree so one call frees it all.
 */
#include "api/openapi.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/strbuf.h"

#define MAX_DEPTH 128
#define MAX_PROPS 64 /* the walker tracks present properties in a 64-bit set */

/* The quantity pattern upstream's CRDs attach to ResourceList values (api-types.md 0.3). */
static const char qty_pattern[] =
    "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+("
    "\\.[0-9]*)?)|(\\.[0-9]+))))?$";

struct api_schema_tree {
    struct api_schema *root;
    void **allocs;
    size_t n, alloc;
    regex_t **res;
    size_t nres, allocres;
};

static void *keep(struct api_schema_tree *t, void *p)
{
    if (t->n == t->alloc) {
        t->alloc = t->alloc ? t->alloc * 2 : 64;
        t->allocs = xrealloc(t->allocs, t->alloc * sizeof(*t->allocs));
    }
    t->allocs[t->n++] = p;
    return p;
}

static char *keep_str(struct api_schema_tree *t, const char *s)
{
    return keep(t, xstrdup(s));
}

struct build {
    struct api_schema_tree *t;
    struct field_errors *errs;
    struct strbuf path;
    int r;
};

static void fail(struct build *b, const char *child, const char *msg)
{
    size_t len = b->path.len;

    if (child)
        strbuf_addf(&b->path, ".%s", child);
    field_error_add(b->errs, FIELD_INVALID, b->path.buf, NULL, "%s", msg);
    strbuf_setlen(&b->path, len);
    if (b->r == 0)
        b->r = -EINVAL;
}

static const char *str_of(const cJSON *o, const char *k)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(c) ? c->valuestring : NULL;
}

static bool flag(const cJSON *o, const char *k)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static void range_of(const cJSON *o, struct api_range *r)
{
    const cJSON *mn = cJSON_GetObjectItemCaseSensitive(o, "minimum");
    const cJSON *mx = cJSON_GetObjectItemCaseSensitive(o, "maximum");

    if (cJSON_IsNumber(mn)) {
        r->has_min = true;
        r->min = mn->valuedouble;
        r->excl_min = flag(o, "exclusiveMinimum");
    }
    if (cJSON_IsNumber(mx)) {
        r->has_max = true;
        r->max = mx->valuedouble;
        r->excl_max = flag(o, "exclusiveMaximum");
    }
}

static struct api_schema *node(struct build *b, const cJSON *o, int depth);

static unsigned dflt_bits_of(const struct api_schema *s)
{
    return s ? s->dflt_below & (API_DFLT_CRD | API_DFLT_CTRL) : 0;
}

/* The members every custom resource has, in front of its schema's own at the root: kube-apiserver
 * never prunes them (apiextensions-apiserver pruning skips apiVersion, kind and metadata at the
 * root) and always treats metadata as ObjectMeta, whatever the CRD's schema lists. */
static const char *const root_members[] = {"apiVersion", "kind", "metadata"};

static bool is_root_member(const char *name)
{
    for (size_t i = 0; i < ARRAY_SIZE(root_members); i++)
        if (!strcmp(name, root_members[i]))
            return true;
    return false;
}

/* Fills *pv for property name (schema p, NULL when the CRD does not declare it). */
static void build_prop(struct build *b, struct api_schema *s, struct api_prop *pv, const char *name,
                       const cJSON *p, const cJSON *req, int depth)
{
    size_t len = b->path.len;
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(p, "default"), *r;

    pv->name = keep_str(b->t, name);
    strbuf_addf(&b->path, ".properties[%s]", name);
    if (depth == 0 && !strcmp(name, "metadata")) {
        /* The root's metadata is ObjectMeta whatever the CRD says (kube-apiserver owns it;
         * structural schemas may only restrict name and generateName). */
        pv->schema = &api_object_meta;
        pv->flags |= API_ALWAYS;
        d = NULL;
    } else if (depth == 0 && is_root_member(name)) {
        pv->schema = p ? node(b, p, depth + 1) : &api_string;
        if (pv->schema->type != API_STRING)
            fail(b, "type", "must be string");
    } else {
        pv->schema = node(b, p, depth + 1);
    }
    strbuf_setlen(&b->path, len);
    if (d) {
        char *txt = cJSON_PrintUnformatted(d);
        CHECK(txt);
        pv->dflt = keep_str(b->t, txt);
        cJSON_free(txt);
        s->dflt_below |= API_DFLT_CRD;
    }
    cJSON_ArrayForEach(r, req)
    {
        if (cJSON_IsString(r) && !strcmp(r->valuestring, name))
            pv->flags |= API_REQ;
    }
    s->dflt_below |= dflt_bits_of(pv->schema);
}

static void build_object(struct build *b, const cJSON *o, struct api_schema *s, int depth)
{
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(o, "properties");
    const cJSON *req = cJSON_GetObjectItemCaseSensitive(o, "required");
    const cJSON *addl = cJSON_GetObjectItemCaseSensitive(o, "additionalProperties");
    const cJSON *p, *r;
    struct api_prop *pv;
    int n = cJSON_GetArraySize(props), i = 0;

    if (depth == 0 && addl && !props) {
        /* A map at the root would hold apiVersion, kind and metadata as its values. */
        fail(b, "additionalProperties", "is not supported at the root of a custom resource");
        return;
    }
    if (cJSON_IsObject(addl) && !props) {
        size_t len = b->path.len;
        s->type = API_MAP;
        strbuf_addstr(&b->path, ".additionalProperties");
        s->items = node(b, addl, depth + 1);
        strbuf_setlen(&b->path, len);
        s->dflt_below = API_DFLT_KNOWN | dflt_bits_of(s->items);
        return;
    }
    if (cJSON_IsTrue(addl) && !props) {
        static const struct api_schema any = {.type = API_ANY, .dflt_below = API_DFLT_KNOWN};
        s->type = API_MAP;
        s->items = &any;
        return;
    }
    if (depth == 0) {
        for (size_t k = 0; k < ARRAY_SIZE(root_members); k++)
            n += !cJSON_GetObjectItemCaseSensitive(props, root_members[k]);
    }
    if (n > MAX_PROPS) {
        fail(b, "properties", "more than 64 properties in one object are not supported");
        b->r = -E2BIG;
        return;
    }
    pv = keep(b->t, xcalloc((size_t)n + 1, sizeof(*pv)));
    s->props = pv;
    if (depth == 0) {
        for (size_t k = 0; k < ARRAY_SIZE(root_members); k++, i++)
            build_prop(b, s, &pv[i], root_members[k],
                       cJSON_GetObjectItemCaseSensitive(props, root_members[k]), req, depth);
    }
    cJSON_ArrayForEach(p, props)
    {
        if (depth == 0 && is_root_member(p->string))
            continue;
        build_prop(b, s, &pv[i++], p->string, p, req, depth);
    }
    cJSON_ArrayForEach(r, req)
    {
        if (!cJSON_IsString(r) || (!cJSON_GetObjectItemCaseSensitive(props, r->valuestring) &&
                                   !(depth == 0 && is_root_member(r->valuestring))))
            fail(b, "required", "names a property that is not declared");
    }
    s->dflt_below |= API_DFLT_KNOWN;
}

static void build_string(struct build *b, const cJSON *o, struct api_schema *s)
{
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(o, "enum"), *e;
    const cJSON *ml = cJSON_GetObjectItemCaseSensitive(o, "maxLength");
    const char *fmt = str_of(o, "format"), *pat = str_of(o, "pattern");
    int n = cJSON_GetArraySize(en), i = 0;

    s->type = fmt && !strcmp(fmt, "date-time") ? API_TIME : API_STRING;
    if (fmt)
        s->format = keep_str(b->t, fmt);
    if (cJSON_IsNumber(ml))
        s->max_len = (int)ml->valuedouble;
    if (en) {
        const char **ev = keep(b->t, xcalloc((size_t)n + 1, sizeof(*ev)));
        cJSON_ArrayForEach(e, en)
        {
            if (!cJSON_IsString(e)) {
                fail(b, "enum", "only string enum values are supported");
                return;
            }
            ev[i++] = keep_str(b->t, e->valuestring);
        }
        s->enums = ev;
    }
    if (pat) {
        regex_t *re = xcalloc(1, sizeof(*re));
        s->pattern = keep_str(b->t, pat);
        if (regcomp(re, pat, REG_EXTENDED | REG_NOSUB) != 0) {
            free(re);
            fail(b, "pattern", "is not a valid regular expression");
            return;
        }
        if (b->t->nres == b->t->allocres) {
            b->t->allocres = b->t->allocres ? b->t->allocres * 2 : 16;
            b->t->res = xrealloc(b->t->res, b->t->allocres * sizeof(regex_t *));
        }
        b->t->res[b->t->nres++] = re;
        s->pattern_re = re;
    }
}

/* x-kubernetes-list-type set or map (with its x-kubernetes-list-map-keys) of an array node;
 * atomic and absent need nothing. api_crd_check() has checked their form. */
static void list_type(struct build *b, const cJSON *o, struct api_schema *s)
{
    const char *lt = str_of(o, "x-kubernetes-list-type");
    const cJSON *keys = cJSON_GetObjectItemCaseSensitive(o, "x-kubernetes-list-map-keys"), *k;
    const char **kv;
    int n = cJSON_GetArraySize(keys), i = 0;

    if (lt && !strcmp(lt, "set")) {
        s->flags |= API_S_LIST_SET;
        return;
    }
    if (!lt || strcmp(lt, "map"))
        return;
    if (n == 0) {
        fail(b, "x-kubernetes-list-map-keys", "must not be empty if x-kubernetes-list-type is map");
        return;
    }
    kv = keep(b->t, xcalloc((size_t)n + 1, sizeof(*kv)));
    cJSON_ArrayForEach(k, keys)
    {
        if (!cJSON_IsString(k)) {
            fail(b, "x-kubernetes-list-map-keys", "must be a list of strings");
            return;
        }
        kv[i++] = keep_str(b->t, k->valuestring);
    }
    s->map_keys = kv;
    s->flags |= API_S_LIST_MAP;
}

static struct api_schema *node(struct build *b, const cJSON *o, int depth)
{
    struct api_schema *s = keep(b->t, xcalloc(1, sizeof(*s)));
    const char *type = str_of(o, "type");
    const char *desc = str_of(o, "description");

    s->dflt_below = API_DFLT_KNOWN;
    if (depth > MAX_DEPTH) {
        fail(b, NULL, "schema nests more than 128 levels");
        b->r = -E2BIG;
        s->type = API_ANY;
        return s;
    }
    if (!cJSON_IsObject(o)) {
        fail(b, NULL, "must be a schema object");
        s->type = API_ANY;
        return s;
    }
    if (desc)
        s->desc = keep_str(b->t, desc);
    if (flag(o, "x-kubernetes-preserve-unknown-fields"))
        s->flags |= API_S_PRESERVE;
    if (flag(o, "nullable"))
        s->flags |= API_S_NULLABLE;
    if ((str_of(o, "x-kubernetes-map-type") &&
         !strcmp(str_of(o, "x-kubernetes-map-type"), "atomic")))
        s->flags |= API_S_ATOMIC;
    if (flag(o, "x-kubernetes-int-or-string")) {
        const char *pat = str_of(o, "pattern");
        s->type = pat && !strcmp(pat, qty_pattern) ? API_QUANTITY : API_INT_OR_STRING;
        return s;
    }
    if (!type) {
        if (!(s->flags & API_S_PRESERVE))
            fail(b, "type", "is required (or x-kubernetes-preserve-unknown-fields)");
        s->type = API_ANY;
        return s;
    }
    if (!strcmp(type, "object")) {
        s->type = API_OBJECT;
        {
            const cJSON *mp = cJSON_GetObjectItemCaseSensitive(o, "minProperties");
            if (cJSON_IsNumber(mp))
                s->min_props = (int)mp->valuedouble;
        }
        build_object(b, o, s, depth);
    } else if (!strcmp(type, "array")) {
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(o, "items");
        const cJSON *mi = cJSON_GetObjectItemCaseSensitive(o, "minItems");
        size_t len = b->path.len;
        s->type = API_ARRAY;
        if (cJSON_IsNumber(mi))
            s->min_items = (int)mi->valuedouble;
        strbuf_addstr(&b->path, ".items");
        s->items = items ? node(b, items, depth + 1) : NULL;
        strbuf_setlen(&b->path, len);
        if (!items)
            fail(b, "items", "is required for arrays");
        list_type(b, o, s);
        s->dflt_below |= dflt_bits_of(s->items);
    } else if (!strcmp(type, "string")) {
        build_string(b, o, s);
    } else if (!strcmp(type, "integer") || !strcmp(type, "number")) {
        const char *fmt = str_of(o, "format");
        s->type = !strcmp(type, "integer") ? API_INT : API_NUMBER;
        if (fmt)
            s->format = keep_str(b->t, fmt);
        range_of(o, &s->crd);
    } else if (!strcmp(type, "boolean")) {
        s->type = API_BOOL;
    } else {
        fail(b, "type", "must be object, array, string, integer, number or boolean");
        s->type = API_ANY;
    }
    return s;
}

int api_schema_from_openapi(const cJSON *oas, struct api_schema_tree **ret,
                            struct field_errors *errs)
{
    struct api_schema_tree *t = xcalloc(1, sizeof(*t));
    struct build b = {.t = t, .errs = errs, .path = STRBUF_INIT, .r = 0};

    strbuf_addstr(&b.path, "openAPIV3Schema");
    t->root = node(&b, oas, 0);
    strbuf_release(&b.path);
    if (b.r < 0) {
        api_schema_tree_free(t);
        return b.r;
    }
    *ret = t;
    return 0;
}

const struct api_schema *api_schema_tree_root(const struct api_schema_tree *t)
{
    return t->root;
}

void api_schema_tree_free(struct api_schema_tree *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nres; i++) {
        regfree(t->res[i]);
        free(t->res[i]);
    }
    for (size_t i = 0; i < t->n; i++)
        free(t->allocs[i]);
    free(t->res);
    free(t->allocs);
    free(t);
}
