/*
 * CRD generation from the type descriptions and the structural-schema check (see crd.h).
 * Rules of a structural schema: apiextensions-apiserver pkg/apiserver/schema/validation.go and
 * the "Specifying a structural schema" section of the CRD documentation.
 */
#include "api/crd.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "codec/patch.h"

#define QTY_PATTERN                                                                                \
    "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+("   \
    "\\.[0-9]*)?)|(\\.[0-9]+))))?$"

static int add(cJSON *o, const char *k, cJSON *v)
{
    if (!v || !cJSON_AddItemToObject(o, k, v)) {
        cJSON_Delete(v);
        return -ENOMEM;
    }
    return 0;
}

static int add_int_or_string(cJSON *o)
{
    cJSON *any = cJSON_CreateArray(), *a, *b;

    if (!any)
        return -ENOMEM;
    a = cJSON_CreateObject();
    b = cJSON_CreateObject();
    if (!a || !b || add(a, "type", cJSON_CreateString("integer")) < 0 ||
        add(b, "type", cJSON_CreateString("string")) < 0) {
        cJSON_Delete(a);
        cJSON_Delete(b);
        cJSON_Delete(any);
        return -ENOMEM;
    }
    cJSON_AddItemToArray(any, a);
    cJSON_AddItemToArray(any, b);
    if (add(o, "anyOf", any) < 0)
        return -ENOMEM;
    return add(o, "x-kubernetes-int-or-string", cJSON_CreateTrue());
}

static int add_range(cJSON *o, const struct api_range *r)
{
    if (r->has_min && (add(o, "minimum", cJSON_CreateNumber(r->min)) < 0 ||
                       (r->excl_min && add(o, "exclusiveMinimum", cJSON_CreateTrue()) < 0)))
        return -ENOMEM;
    if (r->has_max && (add(o, "maximum", cJSON_CreateNumber(r->max)) < 0 ||
                       (r->excl_max && add(o, "exclusiveMaximum", cJSON_CreateTrue()) < 0)))
        return -ENOMEM;
    return 0;
}

static int openapi(const struct api_openapi_hooks *h, const struct api_schema *s, cJSON *o);

/* A node below the root: a reference when the hook makes it one, else inline. */
static int openapi_child(const struct api_openapi_hooks *h, const struct api_schema *s, cJSON *o)
{
    if (h && h->ref) {
        int r = h->ref(s, o, h->userdata);
        if (r != 0)
            return r < 0 ? r : 0;
    }
    return openapi(h, s, o);
}

static int openapi_object(const struct api_openapi_hooks *h, const struct api_schema *s, cJSON *o)
{
    cJSON *props, *req = NULL, *child;
    int r = -ENOMEM;

    if (add(o, "type", cJSON_CreateString("object")) < 0)
        return -ENOMEM;
    if (s->props && s->props->name) {
        props = cJSON_CreateObject();
        if (add(o, "properties", props) < 0)
            return -ENOMEM;
        for (const struct api_prop *p = s->props; p->name; p++) {
            child = cJSON_CreateObject();
            if (add(props, p->name, child) < 0)
                goto out;
            /* Defaults are compile-time constants: only allocation can make the parse fail. */
            if (p->dflt && !(p->flags & API_CTRL) &&
                add(child, "default", cJSON_Parse(p->dflt)) < 0)
                goto out;
            if (h && h->prop && (r = h->prop(p, true, child, h->userdata)) < 0)
                goto out;
            r = openapi_child(h, p->schema, child);
            if (r == 0 && h && h->prop)
                r = h->prop(p, false, child, h->userdata);
            if (r < 0)
                goto out;
            r = -ENOMEM;
            if (p->flags & API_REQ) {
                if (!req && !(req = cJSON_CreateArray()))
                    goto out;
                if (!cJSON_AddItemToArray(req, cJSON_CreateString(p->name)))
                    goto out;
            }
        }
        if (req) {
            r = add(o, "required", req); /* add() frees req on failure */
            req = NULL;
            if (r < 0)
                return r;
        }
    }
    if (s->min_props && add(o, "minProperties", cJSON_CreateNumber(s->min_props)) < 0)
        return -ENOMEM;
    return 0;
out:
    cJSON_Delete(req);
    return r;
}

static int openapi(const struct api_openapi_hooks *h, const struct api_schema *s, cJSON *o)
{
    cJSON *child;
    int r = 0;

    if (s->desc && add(o, "description", cJSON_CreateString(s->desc)) < 0)
        return -ENOMEM;
    switch (s->type) {
    case API_ANY:
        break;
    case API_OBJECT:
        r = openapi_object(h, s, o);
        break;
    case API_MAP:
        if (add(o, "type", cJSON_CreateString("object")) < 0)
            return -ENOMEM;
        child = cJSON_CreateObject();
        if (add(o, "additionalProperties", child) < 0)
            return -ENOMEM;
        r = openapi_child(h, s->items, child);
        break;
    case API_ARRAY:
        if (add(o, "type", cJSON_CreateString("array")) < 0)
            return -ENOMEM;
        child = cJSON_CreateObject();
        if (add(o, "items", child) < 0)
            return -ENOMEM;
        r = openapi_child(h, s->items, child);
        if (r == 0 && s->min_items)
            r = add(o, "minItems", cJSON_CreateNumber(s->min_items));
        break;
    case API_STRING:
    case API_DURATION:
    case API_TIME:
        if (add(o, "type", cJSON_CreateString("string")) < 0)
            return -ENOMEM;
        if (s->format && add(o, "format", cJSON_CreateString(s->format)) < 0)
            return -ENOMEM;
        if (s->enums && !(s->flags & API_S_NOENUMCRD)) {
            int n = 0;
            cJSON *e;
            while (s->enums[n])
                n++;
            e = cJSON_CreateStringArray(s->enums, n);
            if (add(o, "enum", e) < 0)
                return -ENOMEM;
        }
        if (s->max_len && add(o, "maxLength", cJSON_CreateNumber(s->max_len)) < 0)
            return -ENOMEM;
        if (s->pattern && add(o, "pattern", cJSON_CreateString(s->pattern)) < 0)
            return -ENOMEM;
        break;
    case API_INT:
    case API_NUMBER:
        if (add(o, "type", cJSON_CreateString(s->type == API_INT ? "integer" : "number")) < 0)
            return -ENOMEM;
        if (s->format && add(o, "format", cJSON_CreateString(s->format)) < 0)
            return -ENOMEM;
        r = add_range(o, &s->crd);
        break;
    case API_BOOL:
        r = add(o, "type", cJSON_CreateString("boolean"));
        break;
    case API_QUANTITY:
        r = add_int_or_string(o);
        if (r == 0)
            r = add(o, "pattern", cJSON_CreateString(QTY_PATTERN));
        break;
    case API_INT_OR_STRING:
        r = add_int_or_string(o);
        break;
    }
    if (r < 0)
        return r;
    if ((s->flags & API_S_PRESERVE) || s->type == API_ANY)
        r = add(o, "x-kubernetes-preserve-unknown-fields", cJSON_CreateTrue());
    if (r == 0 && (s->flags & API_S_ATOMIC))
        r = add(o, "x-kubernetes-map-type", cJSON_CreateString("atomic"));
    if (r == 0 && (s->flags & API_S_NULLABLE))
        r = add(o, "nullable", cJSON_CreateTrue());
    if (r == 0 && (s->flags & (API_S_LIST_SET | API_S_LIST_MAP)))
        r = add(o, "x-kubernetes-list-type",
                cJSON_CreateString(s->flags & API_S_LIST_SET ? "set" : "map"));
    if (r == 0 && (s->flags & API_S_LIST_MAP) && s->map_keys) {
        int n = 0;
        while (s->map_keys[n])
            n++;
        r = add(o, "x-kubernetes-list-map-keys", cJSON_CreateStringArray(s->map_keys, n));
    }
    return r;
}

int api_crd_openapi(const struct api_schema *s, cJSON **ret)
{
    return api_crd_openapi_hooked(s, NULL, ret);
}

int api_crd_openapi_hooked(const struct api_schema *s, const struct api_openapi_hooks *h,
                           cJSON **ret)
{
    cJSON *o = cJSON_CreateObject();
    int r;

    if (!o)
        return -ENOMEM;
    r = openapi(h, s, o);
    if (r < 0) {
        cJSON_Delete(o);
        return r;
    }
    *ret = o;
    return 0;
}

/* The root schema as controller-gen writes it: metadata is only "type: object". */
static int root_openapi(const struct api_kind *k, cJSON **ret)
{
    const struct api_schema *root = api_kind_schema(k);
    cJSON *o = NULL, *props, *meta;
    int r;
    char desc[256];

    r = api_crd_openapi(root, &o);
    if (r < 0)
        return r;
    props = cJSON_GetObjectItemCaseSensitive(o, "properties");
    meta = cJSON_CreateObject();
    if (!meta || add(meta, "type", cJSON_CreateString("object")) < 0 ||
        !cJSON_ReplaceItemInObjectCaseSensitive(props, "metadata", meta)) {
        cJSON_Delete(meta); /* not attached: the replacement failed or never ran */
        cJSON_Delete(o);
        return -ENOMEM;
    }
    (void)snprintf(desc, sizeof(desc), "%s is the Schema for the %s API", k->kind, k->plural);
    r = add(o, "description", cJSON_CreateString(desc));
    if (r < 0) {
        cJSON_Delete(o);
        return r;
    }
    *ret = o;
    return 0;
}

void api_crd_file_name(const struct api_kind *k, struct strbuf *out)
{
    strbuf_addf(out, "%s_%s.yaml", k->group, k->plural);
}

int api_crd_build(const struct api_kind *k, cJSON **ret)
{
    cJSON *crd = cJSON_CreateObject(), *meta, *spec, *names, *versions, *v, *schema, *oas = NULL;
    char buf[256];
    int r = -ENOMEM;

    CHECK(k->crd);
    if (!crd)
        return -ENOMEM;
    if (add(crd, "apiVersion", cJSON_CreateString("apiextensions.k8s.io/v1")) < 0 ||
        add(crd, "kind", cJSON_CreateString("CustomResourceDefinition")) < 0)
        goto err;
    meta = cJSON_CreateObject();
    if (add(crd, "metadata", meta) < 0)
        goto err;
    if (k->crd_annotation) {
        const char *eq = strchr(k->crd_annotation, '=');
        cJSON *ann = cJSON_CreateObject();
        char *key;
        CHECK(eq);
        key = xstrndup(k->crd_annotation, (size_t)(eq - k->crd_annotation));
        r = add(meta, "annotations", ann);
        if (r == 0)
            r = add(ann, key, cJSON_CreateString(eq + 1));
        free(key);
        if (r < 0)
            goto err;
        r = -ENOMEM;
    }
    (void)snprintf(buf, sizeof(buf), "%s.%s", k->plural, k->group);
    if (add(meta, "name", cJSON_CreateString(buf)) < 0)
        goto err;
    spec = cJSON_CreateObject();
    if (add(crd, "spec", spec) < 0 || add(spec, "group", cJSON_CreateString(k->group)) < 0)
        goto err;
    names = cJSON_CreateObject();
    if (add(spec, "names", names) < 0 || add(names, "kind", cJSON_CreateString(k->kind)) < 0)
        goto err;
    (void)snprintf(buf, sizeof(buf), "%sList", k->kind);
    if (add(names, "listKind", cJSON_CreateString(buf)) < 0 ||
        add(names, "plural", cJSON_CreateString(k->plural)) < 0)
        goto err;
    if (k->short_names) {
        int n = 0;
        while (k->short_names[n])
            n++;
        if (add(names, "shortNames", cJSON_CreateStringArray(k->short_names, n)) < 0)
            goto err;
    }
    {
        size_t i;
        for (i = 0; k->kind[i] && i < sizeof(buf) - 1; i++)
            buf[i] = (char)tolower((unsigned char)k->kind[i]);
        buf[i] = '\0';
    }
    if (add(names, "singular", cJSON_CreateString(buf)) < 0 ||
        add(spec, "scope", cJSON_CreateString(k->namespaced ? "Namespaced" : "Cluster")) < 0)
        goto err;
    versions = cJSON_CreateArray();
    if (add(spec, "versions", versions) < 0)
        goto err;
    v = cJSON_CreateObject();
    if (!v || !cJSON_AddItemToArray(versions, v)) {
        cJSON_Delete(v);
        goto err;
    }
    if (k->columns) {
        cJSON *cols = cJSON_CreateArray();
        if (add(v, "additionalPrinterColumns", cols) < 0)
            goto err;
        for (const struct api_printer_column *c = k->columns; c->name; c++) {
            cJSON *col = cJSON_CreateObject();
            if (!col || !cJSON_AddItemToArray(cols, col)) {
                cJSON_Delete(col);
                goto err;
            }
            if ((c->desc && add(col, "description", cJSON_CreateString(c->desc)) < 0) ||
                add(col, "jsonPath", cJSON_CreateString(c->json_path)) < 0 ||
                add(col, "name", cJSON_CreateString(c->name)) < 0 ||
                add(col, "type", cJSON_CreateString(c->type)) < 0)
                goto err;
        }
    }
    if (add(v, "name", cJSON_CreateString(k->version)) < 0)
        goto err;
    schema = cJSON_CreateObject();
    if (add(v, "schema", schema) < 0)
        goto err;
    r = root_openapi(k, &oas);
    if (r < 0)
        goto err;
    r = -ENOMEM;
    if (add(schema, "openAPIV3Schema", oas) < 0 || add(v, "served", cJSON_CreateTrue()) < 0 ||
        add(v, "storage", cJSON_CreateTrue()) < 0)
        goto err;
    if (k->status_subresource) {
        cJSON *sub = cJSON_CreateObject();
        if (add(v, "subresources", sub) < 0 || add(sub, "status", cJSON_CreateObject()) < 0)
            goto err;
    }
    *ret = crd;
    return 0;
err:
    cJSON_Delete(crd);
    return r;
}

/* ---- structural schema check ---- */

struct crd_check {
    struct strbuf path;
    struct field_errors *errs;
};

__attribute__((format(printf, 3, 4))) static void crd_error(struct crd_check *c, const char *child,
                                                            const char *fmt, ...)
{
    size_t len = c->path.len;
    struct strbuf msg = STRBUF_INIT;
    va_list ap;

    va_start(ap, fmt);
    strbuf_vaddf(&msg, fmt, ap);
    va_end(ap);
    if (child)
        strbuf_addf(&c->path, ".%s", child);
    field_error_add(c->errs, FIELD_FORBIDDEN, c->path.buf, NULL, "%s", msg.buf);
    strbuf_release(&msg);
    strbuf_setlen(&c->path, len);
}

/* An error of type at the path + child, with value rendered as JSON (may be NULL). */
__attribute__((format(printf, 5, 6))) static void crd_add(struct crd_check *c,
                                                          enum field_error_type type,
                                                          const char *child, const cJSON *value,
                                                          const char *fmt, ...)
{
    size_t len = c->path.len;
    struct strbuf msg = STRBUF_INIT;
    char *txt = value ? cJSON_PrintUnformatted(value) : NULL;
    va_list ap;

    va_start(ap, fmt);
    strbuf_vaddf(&msg, fmt, ap);
    va_end(ap);
    if (child)
        strbuf_addf(&c->path, ".%s", child);
    field_error_add(c->errs, type, c->path.buf, txt, "%s", msg.buf);
    cJSON_free(txt);
    strbuf_release(&msg);
    strbuf_setlen(&c->path, len);
}

static void crd_required(struct crd_check *c, const char *child)
{
    size_t len = c->path.len;
    strbuf_addf(&c->path, ".%s", child);
    field_error_add(c->errs, FIELD_REQUIRED, c->path.buf, NULL, "must not be empty");
    strbuf_setlen(&c->path, len);
}

static const char *str_of(const cJSON *o, const char *k)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(c) ? c->valuestring : NULL;
}

static const char *str_or_empty(const cJSON *o, const char *k)
{
    const char *s = str_of(o, k);
    return s ? s : "";
}

static bool is_true(const cJSON *o, const char *k)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static void check_node(struct crd_check *c, const cJSON *s, bool is_root, bool under_preserve);

static void check_children(struct crd_check *c, const cJSON *s, bool under_preserve)
{
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
    const cJSON *addl = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(s, "items");
    const cJSON *p;
    size_t len;

    if (props && addl)
        crd_error(c, "additionalProperties", "%s",
                  "additionalProperties and properties are mutual exclusive");
    cJSON_ArrayForEach(p, props)
    {
        len = c->path.len;
        strbuf_addf(&c->path, ".properties[%s]", p->string);
        check_node(c, p, false, under_preserve);
        strbuf_setlen(&c->path, len);
    }
    if (cJSON_IsObject(addl)) {
        len = c->path.len;
        strbuf_addstr(&c->path, ".additionalProperties");
        check_node(c, addl, false, under_preserve);
        strbuf_setlen(&c->path, len);
    }
    if (items) {
        len = c->path.len;
        strbuf_addstr(&c->path, ".items");
        if (!cJSON_IsObject(items))
            crd_error(c, NULL, "%s", "items must be a single schema");
        else
            check_node(c, items, false, under_preserve);
        strbuf_setlen(&c->path, len);
    }
}

/* A default must itself be valid for its node: its JSON type and, with an enum, one of the
 * values (apiextensions validates defaults against the schema they sit in). */
static void check_default(struct crd_check *c, const cJSON *s, const char *type, bool ios)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(s, "default");
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(s, "enum"), *e;
    bool ok = true, in_enum = false;

    if (!d)
        return;
    if (ios)
        ok = cJSON_IsString(d) ||
             (cJSON_IsNumber(d) && d->valuedouble == (double)(int64_t)d->valuedouble);
    else if (type && !strcmp(type, "string"))
        ok = cJSON_IsString(d);
    else if (type && !strcmp(type, "integer"))
        ok = cJSON_IsNumber(d) && d->valuedouble == (double)(int64_t)d->valuedouble;
    else if (type && !strcmp(type, "number"))
        ok = cJSON_IsNumber(d);
    else if (type && !strcmp(type, "boolean"))
        ok = cJSON_IsBool(d);
    else if (type && !strcmp(type, "object"))
        ok = cJSON_IsObject(d);
    else if (type && !strcmp(type, "array"))
        ok = cJSON_IsArray(d);
    if (!ok) {
        crd_error(c, "default", "must be of type %s", ios ? "integer or string" : type);
        return;
    }
    if (!cJSON_IsArray(en))
        return;
    cJSON_ArrayForEach(e, en) in_enum |= json_value_equal(e, d);
    if (!in_enum)
        crd_error(c, "default", "%s", "must be one of the enum values");
}

/* x-kubernetes-list-type and -list-map-keys as apiextensions validation.go checks them. */
static void check_list_type(struct crd_check *c, const cJSON *s)
{
    const cJSON *lt = cJSON_GetObjectItemCaseSensitive(s, "x-kubernetes-list-type");
    const cJSON *keys = cJSON_GetObjectItemCaseSensitive(s, "x-kubernetes-list-map-keys");
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(s, "items");
    const cJSON *iprops = cJSON_GetObjectItemCaseSensitive(items, "properties"), *k, *k2;
    const char *t = cJSON_GetStringValue(lt), *itype = str_of(items, "type");

    if (lt && (!t || (strcmp(t, "atomic") && strcmp(t, "set") && strcmp(t, "map"))))
        crd_add(c, FIELD_NOT_SUPPORTED, "x-kubernetes-list-type", lt,
                "supported values: \"atomic\", \"map\", \"set\"");
    if (cJSON_GetArraySize(keys) > 0) {
        if (!lt)
            crd_add(c, FIELD_REQUIRED, "x-kubernetes-list-type", NULL,
                    "must be map if x-kubernetes-list-map-keys is non-empty");
        else if (!t || strcmp(t, "map"))
            crd_add(c, FIELD_INVALID, "x-kubernetes-list-type", lt,
                    "must be map if x-kubernetes-list-map-keys is non-empty");
    }
    if (t && !strcmp(t, "map")) {
        if (cJSON_GetArraySize(keys) == 0)
            crd_add(c, FIELD_REQUIRED, "x-kubernetes-list-map-keys", NULL,
                    "must not be empty if x-kubernetes-list-type is map");
        if (!cJSON_IsObject(items))
            crd_add(c, FIELD_REQUIRED, "items", NULL,
                    "must have a schema if x-kubernetes-list-type is map");
        else if (!itype || strcmp(itype, "object"))
            crd_add(c, FIELD_INVALID, "items.type", cJSON_GetObjectItemCaseSensitive(items, "type"),
                    "must be object if parent array's x-kubernetes-list-type is map");
        else if (!strcmp(str_or_empty(items, "x-kubernetes-map-type"), "atomic"))
            crd_add(c, FIELD_INVALID, "items.x-kubernetes-map-type",
                    cJSON_GetObjectItemCaseSensitive(items, "x-kubernetes-map-type"),
                    "must not be atomic if parent array's x-kubernetes-list-type is map");
        cJSON_ArrayForEach(k, keys)
        {
            const cJSON *p =
                cJSON_IsString(k) ? cJSON_GetObjectItemCaseSensitive(iprops, k->valuestring) : NULL;
            const char *pt = str_of(p, "type");
            int dups = 0;

            if (!p) {
                crd_add(c, FIELD_INVALID, "x-kubernetes-list-map-keys", keys,
                        "entries must all be names of item properties");
            } else if (pt && (!strcmp(pt, "array") || !strcmp(pt, "object"))) {
                struct strbuf child = STRBUF_INIT;
                strbuf_addf(&child, "items.properties[%s].type", k->valuestring);
                crd_add(c, FIELD_INVALID, child.buf, cJSON_GetObjectItemCaseSensitive(p, "type"),
                        "must be a scalar type if parent array's x-kubernetes-list-type is map");
                strbuf_release(&child);
            }
            for (k2 = keys->child; k2 != k; k2 = k2->next)
                dups += json_value_equal(k, k2);
            if (dups == 1)
                crd_add(c, FIELD_INVALID, "x-kubernetes-list-map-keys", keys,
                        "must not contain duplicate entries");
        }
    }
    if (t && !strcmp(t, "set") && cJSON_IsObject(items) && itype) {
        const char *ilt = str_of(items, "x-kubernetes-list-type");
        if (!strcmp(itype, "array") && ilt && strcmp(ilt, "atomic"))
            crd_add(c, FIELD_INVALID, "items.x-kubernetes-list-type",
                    cJSON_GetObjectItemCaseSensitive(items, "x-kubernetes-list-type"),
                    "must be atomic as item of a list with x-kubernetes-list-type=set");
        if (!strcmp(itype, "object") &&
            strcmp(str_or_empty(items, "x-kubernetes-map-type"), "atomic"))
            crd_add(c, FIELD_INVALID, "items.x-kubernetes-map-type",
                    cJSON_GetObjectItemCaseSensitive(items, "x-kubernetes-map-type"),
                    "must be atomic as item of a list with x-kubernetes-list-type=set");
    }
}

static void check_node(struct crd_check *c, const cJSON *s, bool is_root, bool under_preserve)
{
    const char *type = str_of(s, "type");
    bool ios = is_true(s, "x-kubernetes-int-or-string");
    bool preserve = is_true(s, "x-kubernetes-preserve-unknown-fields");
    const cJSON *any = cJSON_GetObjectItemCaseSensitive(s, "anyOf");
    static const char *const forbidden[] = {"$ref",         "uniqueItems", "additionalItems",
                                            "dependencies", "definitions", "patternProperties",
                                            "id",           "$schema"};

    for (size_t i = 0; i < ARRAY_SIZE(forbidden); i++)
        if (cJSON_GetObjectItemCaseSensitive(s, forbidden[i]))
            crd_error(c, forbidden[i], "%s", "is not supported in a structural schema");
    if (!type && !ios && !preserve)
        crd_required(c, "type");
    if (type && strcmp(type, "object") && strcmp(type, "array") && strcmp(type, "string") &&
        strcmp(type, "integer") && strcmp(type, "number") && strcmp(type, "boolean"))
        crd_error(c, "type", "unsupported type \"%s\"", type);
    if (ios) {
        if (type)
            crd_error(c, "type", "%s", "must be empty with x-kubernetes-int-or-string");
        /* anyOf, if present, must be exactly [{type: integer}, {type: string}]. */
        if (any && (!cJSON_IsArray(any) || cJSON_GetArraySize(any) != 2 ||
                    strcmp(str_or_empty(cJSON_GetArrayItem(any, 0), "type"), "integer") ||
                    strcmp(str_or_empty(cJSON_GetArrayItem(any, 1), "type"), "string")))
            crd_error(c, "anyOf", "%s",
                      "must be [{type: integer}, {type: string}] with x-kubernetes-int-or-string");
    } else if (any) {
        crd_error(c, "anyOf", "%s", "is only allowed with x-kubernetes-int-or-string here");
    }
    if (preserve && type && strcmp(type, "object"))
        crd_error(c, "x-kubernetes-preserve-unknown-fields", "%s",
                  "must only be used with type object or no type");
    if (str_of(s, "x-kubernetes-map-type") && (!type || strcmp(type, "object")))
        crd_error(c, "x-kubernetes-map-type", "%s", "must only be used on type object");
    if (type && !strcmp(type, "array") && !cJSON_GetObjectItemCaseSensitive(s, "items"))
        crd_required(c, "items");
    check_default(c, s, type, ios);
    check_list_type(c, s);
    if (cJSON_GetObjectItemCaseSensitive(s, "x-kubernetes-validations"))
        field_error_add(c->errs, FIELD_WARNING, c->path.buf, NULL,
                        "%s: x-kubernetes-validations rules are not enforced by koord apiserver "
                        "(no CEL evaluation): objects are accepted without them",
                        c->path.buf);
    if (cJSON_GetObjectItemCaseSensitive(s, "default") && under_preserve && !is_root)
        crd_error(c, "default", "%s",
                  "must not be set inside x-kubernetes-preserve-unknown-fields");
    if (is_root) {
        const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive(props, "metadata");
        const cJSON *k;
        if (!type || strcmp(type, "object"))
            crd_error(c, "type", "%s", "must be object at the root");
        cJSON_ArrayForEach(k, meta)
        {
            if (strcmp(k->string, "type") && strcmp(k->string, "description") &&
                strcmp(k->string, "properties"))
                crd_error(c, "properties[metadata]", "must not specify %s", k->string);
        }
        /* Only name and generateName may be restricted (validateStructuralMetadataInvariants). */
        cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(meta, "properties"))
        {
            if (strcmp(k->string, "name") != 0 && strcmp(k->string, "generateName") != 0) {
                crd_error(c, "properties[metadata]", "%s",
                          "must not specify anything other than name and generateName, but "
                          "metadata is implicitly specified");
                break;
            }
        }
    }
    check_children(c, s, under_preserve || preserve);
}

/* additionalPrinterColumns of version i (apiextensions ValidateCustomResourceColumnDefinition). */
static void check_columns(struct field_errors *errs, const cJSON *cols, long i)
{
    static const char *const types[] = {"integer", "number", "string", "boolean", "date"};
    const cJSON *col;
    long j = 0;
    char path[96];
    struct strbuf f = STRBUF_INIT;

    cJSON_ArrayForEach(col, cols)
    {
        const char *type = str_of(col, "type");
        bool known = false;

        for (size_t k = 0; k < ARRAY_SIZE(types) && type; k++)
            known |= !strcmp(type, types[k]);
        (void)snprintf(path, sizeof(path), "spec.versions[%ld].additionalPrinterColumns[%ld]", i,
                       j++);
        if (!str_of(col, "name") || !*str_of(col, "name")) {
            strbuf_reset(&f);
            strbuf_addf(&f, "%s.name", path);
            field_error_add(errs, FIELD_REQUIRED, f.buf, NULL, NULL);
        }
        if (!known) {
            struct strbuf v = STRBUF_INIT;
            strbuf_add_json_str(&v, type ? type : "");
            strbuf_reset(&f);
            strbuf_addf(&f, "%s.type", path);
            field_error_add(errs, FIELD_NOT_SUPPORTED, f.buf, v.buf,
                            "supported values: \"integer\", \"number\", \"string\", "
                            "\"boolean\", \"date\"");
            strbuf_release(&v);
        }
        if (!str_of(col, "jsonPath") || !*str_of(col, "jsonPath")) {
            strbuf_reset(&f);
            strbuf_addf(&f, "%s.jsonPath", path);
            field_error_add(errs, FIELD_REQUIRED, f.buf, NULL, NULL);
        }
    }
    strbuf_release(&f);
}

size_t api_crd_check(const cJSON *crd, struct field_errors *errs)
{
    struct crd_check c = {.path = STRBUF_INIT, .errs = errs};
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(crd, "spec");
    const cJSON *names = cJSON_GetObjectItemCaseSensitive(spec, "names");
    const cJSON *versions = cJSON_GetObjectItemCaseSensitive(spec, "versions");
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(crd, "metadata");
    const cJSON *v;
    const char *group = str_of(spec, "group"), *plural = str_of(names, "plural");
    const char *scope = str_of(spec, "scope"), *name = str_of(meta, "name");
    size_t before = field_errors_count(errs);
    int storage = 0;
    long i = 0;
    char want[512];

    if (strcmp(str_or_empty(crd, "apiVersion"), "apiextensions.k8s.io/v1") ||
        strcmp(str_or_empty(crd, "kind"), "CustomResourceDefinition"))
        field_error_add(errs, FIELD_INVALID, "apiVersion", NULL,
                        "must be apiextensions.k8s.io/v1 CustomResourceDefinition");
    if (!group || !*group)
        field_error_add(errs, FIELD_REQUIRED, "spec.group", NULL, NULL);
    if (!plural || !str_of(names, "kind") || !str_of(names, "listKind") ||
        !str_of(names, "singular"))
        field_error_add(errs, FIELD_REQUIRED, "spec.names", NULL,
                        "plural, singular, kind and listKind are required");
    if (group && plural) {
        (void)snprintf(want, sizeof(want), "%s.%s", plural, group);
        if (!name || strcmp(name, want))
            field_error_add(errs, FIELD_INVALID, "metadata.name", NULL,
                            "must be spec.names.plural+\".\"+spec.group (\"%s\")", want);
    }
    if (!scope || (strcmp(scope, "Namespaced") && strcmp(scope, "Cluster")))
        field_error_add(errs, FIELD_NOT_SUPPORTED, "spec.scope", NULL,
                        "supported values: \"Cluster\", \"Namespaced\"");
    if (!cJSON_IsArray(versions) || cJSON_GetArraySize(versions) == 0)
        field_error_add(errs, FIELD_REQUIRED, "spec.versions", NULL, NULL);
    cJSON_ArrayForEach(v, versions)
    {
        const cJSON *oas = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(v, "schema"), "openAPIV3Schema");
        strbuf_reset(&c.path);
        strbuf_addf(&c.path, "spec.versions[%ld].schema.openAPIV3Schema", i++);
        storage += is_true(v, "storage");
        check_columns(errs, cJSON_GetObjectItemCaseSensitive(v, "additionalPrinterColumns"), i - 1);
        if (!cJSON_IsObject(oas))
            field_error_add(errs, FIELD_REQUIRED, c.path.buf, NULL, "schemas are required");
        else
            check_node(&c, oas, true, false);
    }
    if (storage != 1)
        field_error_add(errs, FIELD_INVALID, "spec.versions", NULL,
                        "must have exactly one version marked as storage version");
    strbuf_release(&c.path);
    return field_errors_count(errs) - before;
}

/* ---- defaults and status of a CRD served by koord's API server ---- */

static cJSON *obj_member(cJSON *o, const char *k)
{
    cJSON *m = cJSON_GetObjectItemCaseSensitive(o, k);

    if (!cJSON_IsObject(m)) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, k);
        m = cJSON_AddObjectToObject(o, k);
        CHECK(m);
    }
    return m;
}

static bool has_str(const cJSON *o, const char *k)
{
    const char *s = str_of(o, k);
    return s && *s;
}

void api_crd_default(cJSON *crd)
{
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(crd, "spec");
    cJSON *names = cJSON_GetObjectItemCaseSensitive(spec, "names");
    const char *kind = str_of(names, "kind");
    struct strbuf sb = STRBUF_INIT;

    if (!cJSON_IsObject(spec))
        return;
    if (cJSON_IsObject(names) && kind && *kind) {
        if (!has_str(names, "singular")) {
            for (const char *p = kind; *p; p++)
                strbuf_addch(&sb, (char)tolower((unsigned char)*p));
            cJSON_DeleteItemFromObjectCaseSensitive(names, "singular");
            CHECK(cJSON_AddStringToObject(names, "singular", sb.buf));
        }
        if (!has_str(names, "listKind")) {
            strbuf_reset(&sb);
            strbuf_addf(&sb, "%sList", kind);
            cJSON_DeleteItemFromObjectCaseSensitive(names, "listKind");
            CHECK(cJSON_AddStringToObject(names, "listKind", sb.buf));
        }
    }
    if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(spec, "conversion"))) {
        cJSON *conv = obj_member(spec, "conversion");
        CHECK(cJSON_AddStringToObject(conv, "strategy", "None"));
    }
    strbuf_release(&sb);
}

/* Sets condition type to True with reason and message, keeping its lastTransitionTime when it
 * was True already (the way the controllers' SetCRDCondition does). */
static void set_condition(cJSON *conds, const char *type, const char *reason, const char *message,
                          const char *now)
{
    cJSON *c, *found = NULL, *fresh;
    const char *since = now;

    cJSON_ArrayForEach(c, conds)
    {
        if (!strcmp(str_or_empty(c, "type"), type))
            found = c;
    }
    if (found && !strcmp(str_or_empty(found, "status"), "True") &&
        has_str(found, "lastTransitionTime"))
        since = str_of(found, "lastTransitionTime");
    fresh = cJSON_CreateObject();
    CHECK(fresh);
    CHECK(cJSON_AddStringToObject(fresh, "type", type));
    CHECK(cJSON_AddStringToObject(fresh, "status", "True"));
    CHECK(cJSON_AddStringToObject(fresh, "lastTransitionTime", since));
    CHECK(cJSON_AddStringToObject(fresh, "reason", reason));
    CHECK(cJSON_AddStringToObject(fresh, "message", message));
    if (found)
        CHECK(cJSON_ReplaceItemViaPointer(conds, found, fresh));
    else
        CHECK(cJSON_AddItemToArray(conds, fresh));
}

void api_crd_set_status(cJSON *crd, const char *now)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(crd, "spec");
    const cJSON *names = cJSON_GetObjectItemCaseSensitive(spec, "names"), *v, *s;
    cJSON *status = obj_member(crd, "status"), *conds, *stored, *accepted;
    const char *storage = NULL;
    bool seen = false;

    conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");
    if (!cJSON_IsArray(conds)) {
        cJSON_DeleteItemFromObjectCaseSensitive(status, "conditions");
        conds = cJSON_AddArrayToObject(status, "conditions");
        CHECK(conds);
    }
    set_condition(conds, "NamesAccepted", "NoConflicts", "no conflicts found", now);
    set_condition(conds, "Established", "InitialNamesAccepted",
                  "the initial names have been accepted", now);
    CHECK(accepted = cJSON_Duplicate(names, true));
    cJSON_DeleteItemFromObjectCaseSensitive(status, "acceptedNames");
    CHECK(cJSON_AddItemToObject(status, "acceptedNames", accepted));
    /* storedVersions: every version objects may have been stored in; it only grows (clients
     * remove versions from it once they migrated the objects). */
    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(spec, "versions"))
    {
        if (is_true(v, "storage"))
            storage = str_of(v, "name");
    }
    stored = cJSON_GetObjectItemCaseSensitive(status, "storedVersions");
    if (!cJSON_IsArray(stored)) {
        cJSON_DeleteItemFromObjectCaseSensitive(status, "storedVersions");
        stored = cJSON_AddArrayToObject(status, "storedVersions");
        CHECK(stored);
    }
    cJSON_ArrayForEach(s, stored) seen |=
        cJSON_IsString(s) && storage && !strcmp(s->valuestring, storage);
    if (storage && !seen)
        CHECK(cJSON_AddItemToArray(stored, cJSON_CreateString(storage)));
}
