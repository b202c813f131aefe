/*
 * /openapi/v2 and /openapi/v3 (see openapi.h). Names, the shape of references and of the
 * per-operation extensions follow what kube-apiserver publishes: kube-openapi
 * pkg/builder3 (paths, x-kubernetes-action), pkg/handler3 (index, ?hash=, caching headers),
 * pkg/handler (v2 negotiation, ETag), and apiextensions-apiserver
 * pkg/controller/openapi/builder (CRD definitions under util.ToRESTFriendlyName names).
 */
#include "apiserver/openapi.h"

#include <ctype.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/crd.h"
#include "api/patchmeta.h"
#include "apiserver/aggregator.h"
#include "apiserver/registry.h"
#include "base/base.h"
#include "codec/codec.h"
#include "http/server.h"
#include "http/tls.h"

#define V3_REF    "#/components/schemas/"
#define V2_REF    "#/definitions/"

#define LIST_META "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
#define STATUS    "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
#define DELETE    "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"
#define PATCH     "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"

/* CustomResourceDefinitionSpec as far as kubectl apply's patch needs it (gen_kind()). */
/* clang-format off */
#define STR_ "{\"type\":\"string\"}"
#define ATOMIC_ "{\"type\":\"array\",\"x-kubernetes-list-type\":\"atomic\",\"items\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}"
#define STRS_ "{\"type\":\"array\",\"x-kubernetes-list-type\":\"atomic\",\"items\":" STR_ "}"
#define CRD_SPEC_OUTLINE                                                                            \
    "{\"type\":\"object\",\"required\":[\"group\",\"names\",\"scope\",\"versions\"],\"properties\":{"     \
    "\"group\":" STR_ ",\"scope\":" STR_ ",\"preserveUnknownFields\":{\"type\":\"boolean\"},"       \
    "\"names\":{\"type\":\"object\",\"properties\":{\"plural\":" STR_ ",\"singular\":" STR_           \
    ",\"kind\":" STR_ ",\"listKind\":" STR_ ",\"shortNames\":" STRS_ ",\"categories\":" STRS_ "}},"    \
    "\"versions\":" ATOMIC_ ","                                                                    \
    "\"conversion\":{\"type\":\"object\",\"x-kubernetes-map-type\":\"atomic\","                       \
    "\"x-kubernetes-preserve-unknown-fields\":true}}}"
/* clang-format on */

/* ---- small tree helpers (generation is bounded by the types and CRDs: OOM aborts) ---- */

static cJSON *obj(void)
{
    cJSON *o = cJSON_CreateObject();
    CHECK(o);
    return o;
}

static void add(cJSON *o, const char *k, cJSON *v)
{
    CHECK(v && cJSON_AddItemToObject(o, k, v));
}

static void add_s(cJSON *o, const char *k, const char *v)
{
    CHECK(cJSON_AddStringToObject(o, k, v));
}

static cJSON *parse(const char *json)
{
    cJSON *v = cJSON_Parse(json);
    CHECK(v); /* compile-time constants: only allocation can fail */
    return v;
}

/* ---- names ---- */

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

/*
 * The package kube publishes a group's types under: the k8s.io/api package of a built-in
 * group, apiextensions' and kube-aggregator's own, and for any other group (custom resources)
 * util.ToRESTFriendlyName: the group's labels reversed ("slo.koordinator.sh" ->
 * "sh.koordinator.slo").
 */
static void package_of(const char *group, const char *version, struct strbuf *out)
{
    if (!*group) {
        strbuf_addf(out, "io.k8s.api.core.%s", version);
    } else if (!strcmp(group, "apiextensions.k8s.io")) {
        strbuf_addf(out, "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.%s", version);
    } else if (!strcmp(group, "apiregistration.k8s.io")) {
        strbuf_addf(out, "io.k8s.kube-aggregator.pkg.apis.apiregistration.%s", version);
    } else if (!strchr(group, '.') || ends_with(group, ".k8s.io")) {
        strbuf_addf(out, "io.k8s.api.%.*s.%s", (int)strcspn(group, "."), group, version);
    } else {
        const char *end = group + strlen(group);
        while (end > group) {
            const char *dot = end - 1;
            while (dot > group && dot[-1] != '.')
                dot--;
            strbuf_add(out, dot, (size_t)(end - dot));
            strbuf_addch(out, '.');
            end = dot > group ? dot - 1 : group;
        }
        strbuf_addstr(out, version);
    }
}

static void kind_name(const struct api_resource *a, struct strbuf *out)
{
    package_of(a->group, a->version, out);
    strbuf_addf(out, ".%s", a->kind);
}

static cJSON *gvk(const char *group, const char *version, const char *kind)
{
    cJSON *o = obj();
    add_s(o, "group", group);
    add_s(o, "kind", kind);
    add_s(o, "version", version);
    return o;
}

/* ---- v3 schemas ---- */

struct pending {
    const struct api_schema *s;
    char *name;
    char *path; /* where it was first reached, for the patch metadata of its lists */
    const struct api_kind *k;
    const struct api_patch_meta *pm;
};

struct gen {
    cJSON *schemas;
    const struct api_kind *k; /* the built-in kind being written (spec/status names), or NULL */
    struct strbuf pkg;        /* its package */
    const struct api_patch_meta *pm;
    struct strbuf path; /* member names from the object root, list levels left out */
    struct pending *queue;
    size_t nq, allocq;
};

static void add_ref(cJSON *o, const char *name)
{
    struct strbuf ref = STRBUF_INIT;

    strbuf_addf(&ref, V3_REF "%s", name);
    if (!o->child) {
        add_s(o, "$ref", ref.buf);
    } else {
        /* kube wraps a reference that has siblings (default, description) in allOf. */
        cJSON *all = cJSON_CreateArray(), *r = obj();
        CHECK(all);
        add_s(r, "$ref", ref.buf);
        CHECK(cJSON_AddItemToArray(all, r));
        add(o, "allOf", all);
    }
    strbuf_release(&ref);
}

static bool queued(const struct gen *g, const char *name)
{
    for (size_t i = 0; i < g->nq; i++)
        if (!strcmp(g->queue[i].name, name))
            return true;
    return false;
}

static int hook_ref(const struct api_schema *s, cJSON *o, void *userdata)
{
    struct gen *g = userdata;
    struct strbuf name = STRBUF_INIT;

    if (s->def_name)
        strbuf_addstr(&name, s->def_name);
    else if (g->k && s == g->k->spec)
        strbuf_addf(&name, "%s.%sSpec", g->pkg.buf, g->k->kind);
    else if (g->k && s == g->k->status)
        strbuf_addf(&name, "%s.%sStatus", g->pkg.buf, g->k->kind);
    if (!name.len) {
        strbuf_release(&name);
        return 0;
    }
    add_ref(o, name.buf);
    if (!cJSON_GetObjectItemCaseSensitive(g->schemas, name.buf) && !queued(g, name.buf)) {
        if (g->nq == g->allocq) {
            g->allocq = g->allocq ? 2 * g->allocq : 16;
            g->queue = xrealloc(g->queue, g->allocq * sizeof(*g->queue));
        }
        g->queue[g->nq++] = (struct pending){.s = s,
                                             .name = xstrdup(name.buf),
                                             .path = xstrdup(g->path.buf),
                                             .k = g->k,
                                             .pm = g->pm};
    }
    strbuf_release(&name);
    return 1;
}

/* Property paths, and the x-kubernetes-patch-* extensions of the merge lists (patchmeta.h). */
static int hook_prop(const struct api_prop *p, bool enter, cJSON *child, void *userdata)
{
    struct gen *g = userdata;
    struct smp_list_meta m;
    const char *dot;

    if (enter) {
        if (g->path.len)
            strbuf_addch(&g->path, '.');
        strbuf_addstr(&g->path, p->name);
        return 0;
    }
    if (g->pm && api_patch_meta_lookup(g->path.buf, g->pm, &m) && m.merge) {
        if (m.merge_key)
            add_s(child, "x-kubernetes-patch-merge-key", m.merge_key);
        add_s(child, "x-kubernetes-patch-strategy", "merge");
    }
    dot = strrchr(g->path.buf, '.');
    strbuf_setlen(&g->path, dot ? (size_t)(dot - g->path.buf) : 0);
    return 0;
}

/* The scalar types kube defines by hand (their OpenAPIV3OneOfTypes). */
static cJSON *scalar_def(const struct api_schema *s)
{
    if (s->type == API_QUANTITY)
        return parse("{\"description\":\"Quantity is a fixed-point representation of a number: "
                     "an integer or decimal with an optional suffix (Ki, Mi, k, M, m...).\","
                     "\"oneOf\":[{\"type\":\"string\"},{\"type\":\"number\"}]}");
    if (s->type == API_INT_OR_STRING)
        return parse("{\"description\":\"IntOrString is a type that can hold an int32 or a "
                     "string.\",\"format\":\"int-or-string\",\"oneOf\":[{\"type\":\"integer\"},"
                     "{\"type\":\"string\"}]}");
    return NULL;
}

static void gen_schema(struct gen *g, const struct api_schema *s, cJSON **ret)
{
    const struct api_openapi_hooks hooks = {.ref = hook_ref, .prop = hook_prop, .userdata = g};

    *ret = scalar_def(s);
    if (!*ret)
        CHECK(api_crd_openapi_hooked(s, &hooks, ret) == 0);
}

/* Writes the named types queued so far, and those they queue in turn. */
static void gen_pending(struct gen *g)
{
    for (size_t i = 0; i < g->nq; i++) {
        struct pending *q = &g->queue[i];
        cJSON *def;

        g->k = q->k;
        g->pm = q->pm;
        strbuf_reset(&g->path);
        strbuf_addstr(&g->path, q->path);
        gen_schema(g, q->s, &def);
        add(g->schemas, g->queue[i].name, def); /* q may have moved */
    }
    for (size_t i = 0; i < g->nq; i++) {
        free(g->queue[i].name);
        free(g->queue[i].path);
    }
    g->nq = 0;
}

static void gen_list_meta(struct gen *g)
{
    if (cJSON_GetObjectItemCaseSensitive(g->schemas, LIST_META))
        return;
    add(g->schemas, LIST_META,
        parse("{\"description\":\"ListMeta describes metadata that synthetic resources must have, "
              "including lists and various status objects.\",\"type\":\"object\","
              "\"properties\":{\"continue\":{\"type\":\"string\"},\"remainingItemCount\":"
              "{\"type\":\"integer\",\"format\":\"int64\"},\"resourceVersion\":{\"type\":"
              "\"string\"},\"selfLink\":{\"type\":\"string\"}}}"));
    add(g->schemas, STATUS,
        parse("{\"description\":\"Status is a return value for calls that don't return other "
              "objects.\",\"type\":\"object\",\"properties\":{\"apiVersion\":{\"type\":"
              "\"string\"},\"code\":{\"type\":\"integer\",\"format\":\"int32\"},\"details\":"
              "{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true},\"kind\":"
              "{\"type\":\"string\"},\"message\":{\"type\":\"string\"},\"metadata\":{\"allOf\":"
              "[{\"$ref\":\"" V3_REF LIST_META "\"}],\"default\":{}},\"reason\":{\"type\":"
              "\"string\"},\"status\":{\"type\":\"string\"}}}"));
    add(g->schemas, DELETE,
        parse("{\"description\":\"DeleteOptions may be provided when deleting an API object.\","
              "\"type\":\"object\",\"properties\":{\"apiVersion\":{\"type\":\"string\"},"
              "\"dryRun\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
              "\"gracePeriodSeconds\":{\"type\":\"integer\",\"format\":\"int64\"},\"kind\":"
              "{\"type\":\"string\"},\"preconditions\":{\"type\":\"object\",\"properties\":"
              "{\"resourceVersion\":{\"type\":\"string\"},\"uid\":{\"type\":\"string\"}}},"
              "\"propagationPolicy\":{\"type\":\"string\"}}}"));
    add(g->schemas, PATCH,
        parse("{\"description\":\"Patch is provided to give a concrete name and type to the "
              "Kubernetes PATCH request body.\",\"type\":\"object\"}"));
}

/* The definitions of resource a's kind and its List (nothing when already written). */
static void gen_kind(struct gen *g, const struct api_resource *a)
{
    struct strbuf name = STRBUF_INIT, list = STRBUF_INIT, ref = STRBUF_INIT;
    const struct api_openapi_hooks hooks = {.ref = hook_ref, .prop = hook_prop, .userdata = g};
    cJSON *def, *gvks, *l, *props, *items;

    kind_name(a, &name);
    if (cJSON_GetObjectItemCaseSensitive(g->schemas, name.buf))
        goto out;
    g->k = a->builtin;
    strbuf_reset(&g->pkg);
    package_of(a->group, a->version, &g->pkg);
    g->pm = a->crd_name ? NULL : api_patch_meta_find(a->group, a->kind);
    strbuf_reset(&g->path);
    CHECK(api_crd_openapi_hooked(a->schema, &hooks, &def) == 0);
    /* A kind whose description leaves it free-form (the CRD kind: its own code checks it)
     * still lists apiVersion, kind and metadata, as kube's do; kubectl explain reads them.
     * kubectl apply computes its patch from this schema and warns about any field it lacks
     * ("unable to find api field spec") before falling back to its compiled-in types, so the
     * CRD kind also gets the outline of its spec that a CRD manifest sets: versions and the
     * other lists replaced whole (atomic), as kube's own schema has them. */
    if (!cJSON_GetObjectItemCaseSensitive(def, "properties")) {
        cJSON *props_of = cJSON_AddObjectToObject(def, "properties"), *meta = obj();
        CHECK(props_of);
        add(props_of, "apiVersion", parse("{\"type\":\"string\"}"));
        add(props_of, "kind", parse("{\"type\":\"string\"}"));
        CHECK(hook_ref(&api_object_meta, meta, g) == 1);
        add(props_of, "metadata", meta);
        if (!strcmp(a->group, "apiextensions.k8s.io") &&
            !strcmp(a->kind, "CustomResourceDefinition"))
            add(props_of, "spec", parse(CRD_SPEC_OUTLINE));
    }
    gvks = cJSON_CreateArray();
    CHECK(gvks && cJSON_AddItemToArray(gvks, gvk(a->group, a->version, a->kind)));
    add(def, "x-kubernetes-group-version-kind", gvks);
    add(g->schemas, name.buf, def);
    gen_pending(g);

    /* The List: kube publishes one for every kind it lists. */
    gen_list_meta(g);
    strbuf_addf(&list, "%sList", name.buf);
    l = obj();
    strbuf_addf(&ref, "%sList is a list of %s.", a->kind, a->kind);
    add_s(l, "description", ref.buf);
    add_s(l, "type", "object");
    props = cJSON_AddObjectToObject(l, "properties");
    CHECK(props);
    add(props, "apiVersion", parse("{\"type\":\"string\"}"));
    items = obj();
    add_s(items, "type", "array");
    add(items, "items", obj());
    add_ref(cJSON_GetObjectItemCaseSensitive(items, "items"), name.buf);
    add(props, "items", items);
    add(props, "kind", parse("{\"type\":\"string\"}"));
    add(props, "metadata", parse("{\"default\":{}}"));
    add_ref(cJSON_GetObjectItemCaseSensitive(props, "metadata"), LIST_META);
    add(l, "required", parse("[\"items\"]"));
    strbuf_reset(&ref);
    strbuf_addf(&ref, "%sList", a->kind);
    gvks = cJSON_CreateArray();
    CHECK(gvks && cJSON_AddItemToArray(gvks, gvk(a->group, a->version, ref.buf)));
    add(l, "x-kubernetes-group-version-kind", gvks);
    add(g->schemas, list.buf, l);
out:
    strbuf_release(&name);
    strbuf_release(&list);
    strbuf_release(&ref);
}

/* ---- v3 paths (kube-openapi builder3: one operation per verb, tagged with its action) ---- */

static cJSON *param(const char *name, const char *in, const char *type, bool required)
{
    cJSON *p = obj(), *s = obj();

    add_s(p, "name", name);
    add_s(p, "in", in);
    if (required)
        CHECK(cJSON_AddTrueToObject(p, "required"));
    add_s(s, "type", type);
    add(p, "schema", s);
    return p;
}

static cJSON *content_of(const char *const *types, const char *ref)
{
    cJSON *c = obj();

    for (; *types; types++) {
        cJSON *mt = obj(), *s = obj();
        add_ref(s, ref);
        add(mt, "schema", s);
        add(c, *types, mt);
    }
    return c;
}

struct op_spec {
    const char *method;  /* get, put, post, patch, delete */
    const char *action;  /* x-kubernetes-action */
    const char *verb;    /* the operationId's verb: read, list, create, replace, patch, delete */
    const char *answers; /* definition name of the 200 answer ("" = the kind, "List") */
};

static const char *const query_write[] = {"dryRun", "fieldManager", "fieldValidation", NULL};
static const char *const query_list[] = {"allowWatchBookmarks",
                                         "continue",
                                         "fieldSelector",
                                         "labelSelector",
                                         "limit",
                                         "resourceVersion",
                                         "resourceVersionMatch",
                                         "sendInitialEvents",
                                         "timeoutSeconds",
                                         "watch",
                                         NULL};
static const char *const json_types[] = {"application/json", "application/yaml",
                                         "application/vnd.kubernetes.protobuf", NULL};

static void add_op(cJSON *item, const struct api_resource *a, const struct op_spec *op,
                   const char *sub, bool all_namespaces, const char *kname)
{
    cJSON *o = obj(), *params = cJSON_CreateArray(), *resp = obj(), *ok = obj();
    struct strbuf id = STRBUF_INIT, answer = STRBUF_INIT;
    const char *const *query = NULL;
    bool builtin = !a->crd_name;

    CHECK(params);
    /* operationId as kube spells it: verb, namespaced or not, the kind, the subresource. */
    strbuf_addstr(&id, op->verb);
    if (a->namespaced && !all_namespaces)
        strbuf_addstr(&id, "Namespaced");
    strbuf_addstr(&id, a->kind);
    if (sub)
        strbuf_addf(&id, "%c%s", toupper((unsigned char)sub[0]), sub + 1);
    if (all_namespaces)
        strbuf_addstr(&id, "ForAllNamespaces");
    add_s(o, "operationId", id.buf);
    add_s(o, "x-kubernetes-action", op->action);
    add(o, "x-kubernetes-group-version-kind", gvk(a->group, a->version, a->kind));
    strbuf_addstr(&answer, kname);
    strbuf_addstr(&answer, op->answers);
    if (!strcmp(op->method, "post") || !strcmp(op->method, "put") || !strcmp(op->method, "patch")) {
        cJSON *body = obj();
        query = query_write;
        if (!strcmp(op->method, "patch")) {
            static const char *const builtin_patch[] = {
                "application/apply-patch+yaml", "application/json-patch+json",
                "application/merge-patch+json", "application/strategic-merge-patch+json", NULL};
            /* Custom resources take no strategic merge patch (kube answers 415). */
            static const char *const cr_patch[] = {"application/apply-patch+yaml",
                                                   "application/json-patch+json",
                                                   "application/merge-patch+json", NULL};
            add(body, "content", content_of(builtin ? builtin_patch : cr_patch, PATCH));
            CHECK(cJSON_AddItemToArray(params, param("force", "query", "boolean", false)));
        } else {
            add(body, "content", content_of(json_types, kname));
        }
        CHECK(cJSON_AddTrueToObject(body, "required"));
        add(o, "requestBody", body);
    } else if (!strcmp(op->action, "list") || !strcmp(op->action, "deletecollection")) {
        query = query_list;
    }
    for (; query && *query; query++) {
        bool num = !strcmp(*query, "limit") || !strcmp(*query, "timeoutSeconds");
        bool flag = !strcmp(*query, "allowWatchBookmarks") || !strcmp(*query, "watch") ||
                    !strcmp(*query, "sendInitialEvents");
        CHECK(cJSON_AddItemToArray(params, param(*query, "query",
                                                 num    ? "integer"
                                                 : flag ? "boolean"
                                                        : "string",
                                                 false)));
    }
    add(o, "parameters", params);
    add_s(ok, "description", "OK");
    add(ok, "content", content_of(json_types, !strcmp(op->method, "delete") ? STATUS : answer.buf));
    add(resp, "200", ok);
    add(resp, "401", parse("{\"description\":\"Unauthorized\"}"));
    add(o, "responses", resp);
    add(item, op->method, o);
    strbuf_release(&id);
    strbuf_release(&answer);
}

/* A path item with its path parameters. */
static cJSON *path_item(cJSON *paths, const char *path, bool ns, bool name)
{
    cJSON *item = obj(), *params = cJSON_CreateArray();

    CHECK(params);
    if (name)
        CHECK(cJSON_AddItemToArray(params, param("name", "path", "string", true)));
    if (ns)
        CHECK(cJSON_AddItemToArray(params, param("namespace", "path", "string", true)));
    CHECK(cJSON_AddItemToArray(params, param("pretty", "query", "string", false)));
    add(item, "parameters", params);
    add(paths, path, item);
    return item;
}

static void gen_paths(cJSON *paths, const struct api_resource *a, const char *kname)
{
    static const struct op_spec read = {"get", "get", "read", ""};
    static const struct op_spec list = {"get", "list", "list", "List"};
    static const struct op_spec create = {"post", "post", "create", ""};
    static const struct op_spec replace = {"put", "put", "replace", ""};
    static const struct op_spec patch = {"patch", "patch", "patch", ""};
    static const struct op_spec del = {"delete", "delete", "delete", ""};
    static const struct op_spec delcol = {"delete", "deletecollection", "deleteCollection", ""};
    struct strbuf base = STRBUF_INIT, p = STRBUF_INIT;
    cJSON *item;

    if (*a->group)
        strbuf_addf(&base, "/apis/%s/%s", a->group, a->version);
    else
        strbuf_addf(&base, "/api/%s", a->version);
    if (a->namespaced) {
        strbuf_addf(&p, "%s/%s", base.buf, a->plural);
        if (!a->create_only)
            add_op(path_item(paths, p.buf, false, false), a, &list, NULL, true, kname);
        strbuf_addstr(&base, "/namespaces/{namespace}");
    }
    strbuf_reset(&p);
    strbuf_addf(&p, "%s/%s", base.buf, a->plural);
    item = path_item(paths, p.buf, a->namespaced, false);
    if (!a->create_only)
        add_op(item, a, &list, NULL, false, kname);
    if (!a->read_only)
        add_op(item, a, &create, NULL, false, kname);
    if (!a->create_only && !a->read_only)
        add_op(item, a, &delcol, NULL, false, kname);
    if (!a->create_only) {
        strbuf_addstr(&p, "/{name}");
        item = path_item(paths, p.buf, a->namespaced, true);
        add_op(item, a, &read, NULL, false, kname);
        if (!a->read_only) {
            add_op(item, a, &replace, NULL, false, kname);
            add_op(item, a, &patch, NULL, false, kname);
            add_op(item, a, &del, NULL, false, kname);
        }
    }
    for (const char *const *s = a->subresources; s && *s && !a->create_only; s++) {
        struct strbuf sp = STRBUF_INIT;
        if (strcmp(*s, "status"))
            continue; /* other subresources carry other kinds (Scale, Binding, Eviction) */
        strbuf_addf(&sp, "%s/status", p.buf);
        item = path_item(paths, sp.buf, a->namespaced, true);
        add_op(item, a, &read, "status", false, kname);
        add_op(item, a, &replace, "status", false, kname);
        add_op(item, a, &patch, "status", false, kname);
        strbuf_release(&sp);
    }
    strbuf_release(&base);
    strbuf_release(&p);
}

/* ---- documents ---- */

struct collect {
    const char *group, *version; /* NULL: every resource */
    const struct api_resource **v;
    size_t n, alloc;
};

static void collect_fn(const struct api_resource *res, void *userdata)
{
    struct collect *c = userdata;

    if (c->group && (strcmp(res->group, c->group) || strcmp(res->version, c->version)))
        return;
    if (c->n == c->alloc) {
        c->alloc = c->alloc ? 2 * c->alloc : 32;
        c->v = xrealloc(c->v, c->alloc * sizeof(const struct api_resource *));
    }
    c->v[c->n++] = api_resource_ref(res);
}

static void collect_release(struct collect *c)
{
    for (size_t i = 0; i < c->n; i++)
        (void)api_resource_unref(c->v[i]);
    free(c->v);
}

static void gen_release(struct gen *g)
{
    for (size_t i = 0; i < g->nq; i++) {
        free(g->queue[i].name);
        free(g->queue[i].path);
    }
    free(g->queue);
    strbuf_release(&g->pkg);
    strbuf_release(&g->path);
}

struct openapi {
    struct api_registry *reg;
    pthread_mutex_t lock;
    struct cached {
        char *key; /* "v3:<gv key>", "v2", "v2pb" */
        unsigned long generation;
        struct strbuf body;
        char etag[67]; /* "<64 hex digits>" with the quotes */
    } * cache;
    size_t ncache, alloccache;
};

/* The v3 document of the resources in c (all of one group-version), or NULL when none. */
static cJSON *v3_doc(const struct collect *c)
{
    struct gen g = {.pkg = STRBUF_INIT, .path = STRBUF_INIT};
    cJSON *o, *paths, *comps;
    struct strbuf kname = STRBUF_INIT;

    if (!c->n)
        return NULL;
    o = obj();
    add_s(o, "openapi", "3.0.0");
    add(o, "info", parse("{\"title\":\"Kubernetes\",\"version\":\"v1.33.0\"}"));
    paths = cJSON_AddObjectToObject(o, "paths");
    comps = cJSON_AddObjectToObject(o, "components");
    CHECK(paths && comps);
    g.schemas = cJSON_AddObjectToObject(comps, "schemas");
    CHECK(g.schemas);
    for (size_t i = 0; i < c->n; i++) {
        strbuf_reset(&kname);
        kind_name(c->v[i], &kname);
        gen_kind(&g, c->v[i]);
        gen_paths(paths, c->v[i], kname.buf);
    }
    gen_release(&g);
    strbuf_release(&kname);
    return o;
}

cJSON *openapi_v3_doc(struct openapi *o, const char *group, const char *version)
{
    struct collect c = {.group = group, .version = version};
    cJSON *doc;

    api_registry_foreach(o->reg, collect_fn, &c);
    doc = v3_doc(&c);
    collect_release(&c);
    return doc;
}

/* kube's v2 form of a v3 schema tree, in place: #/definitions/ references, a reference with
 * siblings written beside them rather than in allOf, one-of scalars (Quantity, IntOrString)
 * and int-or-string nodes as strings, no nullable, and an object that keeps unknown fields
 * without properties, so client-side validation lets them through (as kube's CRD v2 builder
 * does). */
static void to_v2(cJSON *s)
{
    cJSON *c, *all = cJSON_GetObjectItemCaseSensitive(s, "allOf");
    const cJSON *ref;

    if (!cJSON_IsObject(s))
        return;
    if (cJSON_GetArraySize(all) == 1 &&
        cJSON_IsString(ref = cJSON_GetObjectItemCaseSensitive(all->child, "$ref"))) {
        add_s(s, "$ref", ref->valuestring);
        cJSON_DeleteItemFromObjectCaseSensitive(s, "allOf");
    }
    ref = cJSON_GetObjectItemCaseSensitive(s, "$ref");
    if (cJSON_IsString(ref) && !strncmp(ref->valuestring, V3_REF, strlen(V3_REF))) {
        struct strbuf r = STRBUF_INIT;
        strbuf_addf(&r, V2_REF "%s", ref->valuestring + strlen(V3_REF));
        CHECK(cJSON_ReplaceItemInObjectCaseSensitive(s, "$ref", cJSON_CreateString(r.buf)));
        strbuf_release(&r);
    }
    if (cJSON_HasObjectItem(s, "oneOf") ||
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "x-kubernetes-int-or-string"))) {
        bool int_or_string =
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "x-kubernetes-int-or-string")) ||
            (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(s, "format")) &&
             !strcmp(cJSON_GetObjectItemCaseSensitive(s, "format")->valuestring, "int-or-string"));
        cJSON_DeleteItemFromObjectCaseSensitive(s, "oneOf");
        cJSON_DeleteItemFromObjectCaseSensitive(s, "anyOf");
        cJSON_DeleteItemFromObjectCaseSensitive(s, "x-kubernetes-int-or-string");
        cJSON_DeleteItemFromObjectCaseSensitive(s, "pattern");
        cJSON_DeleteItemFromObjectCaseSensitive(s, "format");
        add_s(s, "type", "string");
        if (int_or_string)
            add_s(s, "format", "int-or-string");
    }
    cJSON_DeleteItemFromObjectCaseSensitive(s, "nullable");
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "x-kubernetes-preserve-unknown-fields"))) {
        cJSON_DeleteItemFromObjectCaseSensitive(s, "properties");
        cJSON_DeleteItemFromObjectCaseSensitive(s, "required");
    }
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(s, "properties"))
    {
        to_v2(c);
    }
    to_v2(cJSON_GetObjectItemCaseSensitive(s, "items"));
    c = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
    if (cJSON_IsObject(c))
        to_v2(c);
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(s, "allOf"))
    {
        to_v2(c);
    }
}

cJSON *openapi_v2_doc(struct openapi *o)
{
    struct collect all = {0};
    cJSON *doc = obj(), *defs;

    add_s(doc, "swagger", "2.0");
    add(doc, "info", parse("{\"title\":\"Kubernetes\",\"version\":\"v1.33.0\"}"));
    add(doc, "paths", obj());
    defs = cJSON_AddObjectToObject(doc, "definitions");
    CHECK(defs);
    api_registry_foreach(o->reg, collect_fn, &all);
    /* One v3 document per group-version, their schemas merged (names are unique across
     * group-versions: they carry the group and version). */
    for (size_t i = 0; i < all.n; i++) {
        struct collect gv = {.group = all.v[i]->group, .version = all.v[i]->version};
        cJSON *v3, *c;
        bool seen = false;

        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(all.v[j]->group, gv.group) && !strcmp(all.v[j]->version, gv.version);
        if (seen)
            continue;
        for (size_t j = i; j < all.n; j++)
            if (!strcmp(all.v[j]->group, gv.group) && !strcmp(all.v[j]->version, gv.version))
                collect_fn(all.v[j], &gv);
        v3 = v3_doc(&gv);
        collect_release(&gv);
        c = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(v3, "components"),
                                             "schemas")
                ->child;
        while (c) {
            cJSON *next = c->next;
            if (!cJSON_HasObjectItem(defs, c->string)) {
                cJSON *d = cJSON_DetachItemViaPointer(
                    cJSON_GetObjectItemCaseSensitive(
                        cJSON_GetObjectItemCaseSensitive(v3, "components"), "schemas"),
                    c);
                to_v2(d);
                add(defs, d->string, d);
            }
            c = next;
        }
        cJSON_Delete(v3);
    }
    collect_release(&all);
    return doc;
}

/* ---- the gnostic openapi.v2.Document protobuf (OpenAPIv2.proto field numbers) ---- */

static void pb_varint(struct strbuf *out, uint64_t v)
{
    while (v >= 0x80) {
        strbuf_addch(out, (char)(v | 0x80));
        v >>= 7;
    }
    strbuf_addch(out, (char)v);
}

static void pb_tag(struct strbuf *out, unsigned field, unsigned wire)
{
    pb_varint(out, ((uint64_t)field << 3) | wire);
}

static void pb_bytes(struct strbuf *out, unsigned field, const void *data, size_t len)
{
    pb_tag(out, field, 2);
    pb_varint(out, len);
    strbuf_add(out, data, len);
}

static void pb_string(struct strbuf *out, unsigned field, const char *s)
{
    pb_bytes(out, field, s, strlen(s));
}

static void pb_msg(struct strbuf *out, unsigned field, const struct strbuf *msg)
{
    pb_bytes(out, field, msg->buf, msg->len);
}

static void pb_double(struct strbuf *out, unsigned field, double d)
{
    uint64_t bits;
    unsigned char le[8];

    memcpy(&bits, &d, sizeof(bits));
    for (int i = 0; i < 8; i++)
        le[i] = (unsigned char)(bits >> (8 * i));
    pb_tag(out, field, 1);
    strbuf_add(out, le, sizeof(le));
}

/* Any {yaml = 2}: the value as JSON text, which YAML reads as the same value. */
static void pb_any(struct strbuf *out, unsigned field, const cJSON *v)
{
    struct strbuf json = STRBUF_INIT, any = STRBUF_INIT;

    CHECK(json_print(v, &json) == 0);
    pb_bytes(&any, 2, json.buf, json.len);
    pb_msg(out, field, &any);
    strbuf_release(&json);
    strbuf_release(&any);
}

static void pb_schema(struct strbuf *out, const cJSON *s);

/* NamedSchema {1 name, 2 Schema} */
static void pb_named_schema(struct strbuf *out, unsigned field, const cJSON *s)
{
    struct strbuf named = STRBUF_INIT, schema = STRBUF_INIT;

    pb_string(&named, 1, s->string);
    pb_schema(&schema, s);
    pb_msg(&named, 2, &schema);
    pb_msg(out, field, &named);
    strbuf_release(&named);
    strbuf_release(&schema);
}

static void pb_sub_schema(struct strbuf *out, unsigned field, const cJSON *s)
{
    struct strbuf b = STRBUF_INIT;

    pb_schema(&b, s);
    pb_msg(out, field, &b);
    strbuf_release(&b);
}

static void pb_schema(struct strbuf *out, const cJSON *s)
{
    static const struct {
        const char *key;
        unsigned field;
        char kind; /* s string, d double, b bool, i int64, a Any */
    } scalars[] = {
        {"$ref", 1, 's'},           {"format", 2, 's'},
        {"title", 3, 's'},          {"description", 4, 's'},
        {"default", 5, 'a'},        {"multipleOf", 6, 'd'},
        {"maximum", 7, 'd'},        {"exclusiveMaximum", 8, 'b'},
        {"minimum", 9, 'd'},        {"exclusiveMinimum", 10, 'b'},
        {"maxLength", 11, 'i'},     {"minLength", 12, 'i'},
        {"pattern", 13, 's'},       {"maxItems", 14, 'i'},
        {"minItems", 15, 'i'},      {"uniqueItems", 16, 'b'},
        {"maxProperties", 17, 'i'}, {"minProperties", 18, 'i'},
        {"readOnly", 27, 'b'},
    };
    const cJSON *c;

    for (size_t i = 0; i < ARRAY_SIZE(scalars); i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, scalars[i].key);
        if (!v)
            continue;
        switch (scalars[i].kind) {
        case 's':
            if (cJSON_IsString(v))
                pb_string(out, scalars[i].field, v->valuestring);
            break;
        case 'd':
            if (cJSON_IsNumber(v))
                pb_double(out, scalars[i].field, v->valuedouble);
            break;
        case 'b':
            if (cJSON_IsTrue(v)) {
                pb_tag(out, scalars[i].field, 0);
                pb_varint(out, 1);
            }
            break;
        case 'i':
            if (cJSON_IsNumber(v) && v->valuedouble >= 0) {
                pb_tag(out, scalars[i].field, 0);
                pb_varint(out, (uint64_t)v->valuedouble);
            }
            break;
        default:
            pb_any(out, scalars[i].field, v);
        }
    }
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(s, "required"))
    {
        if (cJSON_IsString(c))
            pb_string(out, 19, c->valuestring);
    }
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(s, "enum"))
    {
        pb_any(out, 20, c);
    }
    c = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
    if (c) {
        /* AdditionalPropertiesItem {oneof: 1 Schema, 2 bool} */
        struct strbuf ap = STRBUF_INIT;
        if (cJSON_IsObject(c)) {
            pb_sub_schema(&ap, 1, c);
        } else {
            pb_tag(&ap, 2, 0);
            pb_varint(&ap, cJSON_IsTrue(c));
        }
        pb_msg(out, 21, &ap);
        strbuf_release(&ap);
    }
    c = cJSON_GetObjectItemCaseSensitive(s, "type");
    if (c) {
        /* TypeItem {repeated string value = 1} */
        struct strbuf t = STRBUF_INIT;
        const cJSON *e, *arr = cJSON_IsArray(c) ? c : NULL;
        if (cJSON_IsString(c))
            pb_string(&t, 1, c->valuestring);
        cJSON_ArrayForEach(e, arr)
        {
            if (cJSON_IsString(e))
                pb_string(&t, 1, e->valuestring);
        }
        pb_msg(out, 22, &t);
        strbuf_release(&t);
    }
    c = cJSON_GetObjectItemCaseSensitive(s, "items");
    if (c) {
        /* ItemsItem {repeated Schema schema = 1} */
        struct strbuf it = STRBUF_INIT;
        const cJSON *e, *arr = cJSON_IsArray(c) ? c : NULL;
        if (cJSON_IsObject(c))
            pb_sub_schema(&it, 1, c);
        cJSON_ArrayForEach(e, arr)
        {
            pb_sub_schema(&it, 1, e);
        }
        pb_msg(out, 23, &it);
        strbuf_release(&it);
    }
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(s, "allOf"))
    {
        pb_sub_schema(out, 24, c);
    }
    c = cJSON_GetObjectItemCaseSensitive(s, "properties");
    if (c) {
        /* Properties {repeated NamedSchema additional_properties = 1} */
        struct strbuf props = STRBUF_INIT;
        const cJSON *p;
        cJSON_ArrayForEach(p, c)
        {
            pb_named_schema(&props, 1, p);
        }
        pb_msg(out, 25, &props);
        strbuf_release(&props);
    }
    cJSON_ArrayForEach(c, s)
    {
        /* NamedAny {1 name, 2 Any} */
        struct strbuf named = STRBUF_INIT;
        if (strncmp(c->string, "x-", 2))
            continue;
        pb_string(&named, 1, c->string);
        pb_any(&named, 2, c);
        pb_msg(out, 31, &named);
        strbuf_release(&named);
    }
}

void openapi_v2_protobuf(const cJSON *swagger, struct strbuf *out)
{
    const cJSON *info = cJSON_GetObjectItemCaseSensitive(swagger, "info"), *c;
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(swagger, "swagger"));
    struct strbuf msg = STRBUF_INIT;

    pb_string(out, 1, v ? v : "2.0");
    if (info) {
        const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(info, "title"));
        const char *ver = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(info, "version"));
        if (t)
            pb_string(&msg, 1, t);
        if (ver)
            pb_string(&msg, 2, ver);
        pb_msg(out, 2, &msg);
    }
    strbuf_reset(&msg);
    pb_msg(out, 8, &msg); /* Paths: none */
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(swagger, "definitions"))
    {
        pb_named_schema(&msg, 1, c);
    }
    pb_msg(out, 9, &msg);
    strbuf_release(&msg);
}

/* ---- the cache and the handlers ---- */

struct openapi *openapi_new(struct api_registry *reg)
{
    struct openapi *o = xcalloc(1, sizeof(*o));

    o->reg = reg;
    CHECK(pthread_mutex_init(&o->lock, NULL) == 0);
    return o;
}

void openapi_free(struct openapi *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->ncache; i++) {
        free(o->cache[i].key);
        strbuf_release(&o->cache[i].body);
    }
    free(o->cache);
    (void)pthread_mutex_destroy(&o->lock);
    free(o);
}

static void etag_of(const struct strbuf *body, char etag[67])
{
    unsigned char d[32];

    tls_sha256(body->buf, body->len, d);
    etag[0] = '"';
    for (size_t i = 0; i < sizeof(d); i++)
        (void)snprintf(etag + 1 + 2 * i, 3, "%02X", d[i]);
    etag[65] = '"';
    etag[66] = '\0';
}

/*
 * The cached document under key, regenerated when the registry changed since (o->lock held).
 * The generation is read before generating: a CRD change during generation leaves the entry
 * marked older than what it holds, so it is only generated once more. NULL when the key names
 * nothing served.
 */
static struct cached *cached(struct openapi *o, const char *key)
{
    unsigned long gen = api_registry_generation(o->reg);
    struct cached *e = NULL;
    cJSON *doc;

    for (size_t i = 0; i < o->ncache && !e; i++)
        if (!strcmp(o->cache[i].key, key))
            e = &o->cache[i];
    if (e && e->generation == gen)
        return e;
    if (!strncmp(key, "v3:", 3)) {
        char group[256] = "", version[128] = "";
        if (sscanf(key + 3, "apis/%255[^/]/%127s", group, version) != 2 &&
            sscanf(key + 3, "api/%127s", version) != 1)
            return NULL;
        doc = openapi_v3_doc(o, group, version);
    } else {
        doc = openapi_v2_doc(o);
    }
    if (!doc) {
        if (e) {
            /* No longer served (its CRD went): forget it, so the cache holds only what is. */
            free(e->key);
            strbuf_release(&e->body);
            *e = o->cache[--o->ncache];
        }
        return NULL;
    }
    if (!e) {
        if (o->ncache == o->alloccache) {
            o->alloccache = o->alloccache ? 2 * o->alloccache : 16;
            o->cache = xrealloc(o->cache, o->alloccache * sizeof(*o->cache));
        }
        e = &o->cache[o->ncache++];
        *e = (struct cached){.key = xstrdup(key), .body = STRBUF_INIT};
    }
    strbuf_reset(&e->body);
    if (!strcmp(key, "v2pb"))
        openapi_v2_protobuf(doc, &e->body);
    else
        CHECK(json_print(doc, &e->body) == 0);
    cJSON_Delete(doc);
    etag_of(&e->body, e->etag);
    e->generation = gen;
    return e;
}

/* The index with each group-version's current hash (o->lock held). */
static cJSON *index_locked(struct openapi *o)
{
    struct collect all = {0};
    cJSON *idx = obj(), *paths = cJSON_AddObjectToObject(idx, "paths");
    struct strbuf key = STRBUF_INIT, url = STRBUF_INIT;

    CHECK(paths);
    api_registry_foreach(o->reg, collect_fn, &all);
    for (size_t i = 0; i < all.n; i++) {
        const struct api_resource *a = all.v[i];
        struct cached *e;
        cJSON *p;

        strbuf_reset(&key);
        if (*a->group)
            strbuf_addf(&key, "apis/%s/%s", a->group, a->version);
        else
            strbuf_addf(&key, "api/%s", a->version);
        if (cJSON_HasObjectItem(paths, key.buf))
            continue;
        strbuf_reset(&url);
        strbuf_addf(&url, "v3:%s", key.buf);
        e = cached(o, url.buf);
        if (!e)
            continue; /* removed meanwhile */
        strbuf_reset(&url);
        /* The hash without its quotes, as kube's index writes it. */
        strbuf_addf(&url, "/openapi/v3/%s?hash=%.64s", key.buf, e->etag + 1);
        p = cJSON_AddObjectToObject(paths, key.buf);
        CHECK(p);
        add_s(p, "serverRelativeURL", url.buf);
    }
    collect_release(&all);
    strbuf_release(&key);
    strbuf_release(&url);
    return idx;
}

cJSON *openapi_v3_index(struct openapi *o)
{
    cJSON *idx;

    CHECK(pthread_mutex_lock(&o->lock) == 0);
    idx = index_locked(o);
    CHECK(pthread_mutex_unlock(&o->lock) == 0);
    return idx;
}

/* Whether If-None-Match lists etag (or is "*"). */
static bool not_modified(const struct http_request *req, const char *etag)
{
    const char *inm = http_request_header(req, "If-None-Match");

    if (!inm)
        return false;
    return !strcmp(inm, "*") || strstr(inm, etag);
}

static void answer(const struct http_request *req, struct http_response *resp,
                   const struct strbuf *body, const char *etag, const char *content_type)
{
    http_response_header(resp, "ETag", etag);
    http_response_header(resp, "Vary", "Accept");
    if (not_modified(req, etag)) {
        resp->status = 304;
        return;
    }
    resp->status = 200;
    resp->content_type = content_type;
    strbuf_add(&resp->body, body->buf, body->len);
}

static bool accepts_protobuf(const struct http_request *req)
{
    const char *accept = http_request_header(req, "Accept");

    return accept &&
           (strstr(accept, OPENAPI_V2_PROTOBUF_ACCEPT) || strstr(accept, OPENAPI_V2_PROTOBUF_TYPE));
}

bool openapi_serve(struct openapi *o, struct aggregator *agg, const struct http_request *req,
                   struct http_response *resp)
{
    const char *path = http_request_path(req);
    struct strbuf key = STRBUF_INIT;
    struct cached *e;
    bool served = false;

    if (!strcmp(path, "/openapi/v2")) {
        bool pb = accepts_protobuf(req);
        CHECK(pthread_mutex_lock(&o->lock) == 0);
        e = cached(o, pb ? "v2pb" : "v2");
        answer(req, resp, &e->body, e->etag, pb ? OPENAPI_V2_PROTOBUF_TYPE : "application/json");
        CHECK(pthread_mutex_unlock(&o->lock) == 0);
        return true;
    }
    if (!strcmp(path, "/openapi/v3") || !strcmp(path, "/openapi/v3/")) {
        cJSON *idx = openapi_v3_index(o);
        struct strbuf body = STRBUF_INIT;
        char etag[67];

        aggregator_openapi_index(agg, idx);
        CHECK(json_print(idx, &body) == 0);
        cJSON_Delete(idx);
        etag_of(&body, etag);
        http_response_header(resp, "Cache-Control", "no-cache, private");
        answer(req, resp, &body, etag, "application/json");
        strbuf_release(&body);
        return true;
    }
    if (strncmp(path, "/openapi/v3/api/", 16) && strncmp(path, "/openapi/v3/apis/", 17))
        return false;
    strbuf_addf(&key, "v3:%s", path + 12);
    CHECK(pthread_mutex_lock(&o->lock) == 0);
    e = cached(o, key.buf);
    if (e) {
        const char *hash = http_request_query(req, "hash");
        served = true;
        if (hash && !*hash)
            hash = NULL; /* as handler3 reads it: an empty hash is none */
        if (hash && (strlen(hash) != 64 || strncmp(hash, e->etag + 1, 64))) {
            /* A stale hash: the current document is elsewhere (handler3 redirects too). */
            struct strbuf loc = STRBUF_INIT;
            strbuf_addf(&loc, "%s?hash=%.64s", path, e->etag + 1);
            http_response_header(resp, "Location", loc.buf);
            resp->status = 301;
            strbuf_release(&loc);
        } else {
            http_response_header(resp, "Cache-Control",
                                 hash ? "public, immutable" : "no-cache, private");
            answer(req, resp, &e->body, e->etag, "application/json");
        }
    }
    CHECK(pthread_mutex_unlock(&o->lock) == 0);
    strbuf_release(&key);
    return served;
}
