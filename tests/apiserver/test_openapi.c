/*
 * Tests for apiserver/openapi: the v3 documents' component schemas (a Pod's spec.containers is
 * an array of $ref Container with its merge key, required fields, every $ref resolving, kube's
 * names and GVK extensions), the paths and their actions, a CRD's schema appearing and
 * disappearing with the CRD, the v2 form, the gnostic protobuf encoding (bytes worked out by
 * hand from OpenAPIv2.proto), and over HTTP the ETag, If-None-Match 304 and the index's ?hash=.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "apienv.h"
#include "apiserver/openapi.h"
#include "apiserver/registry.h"
#include "testutil.h"

#define SCHEMAS "components.schemas."

/* The schema named name in a v3 document, or NULL. */
static const cJSON *schema(const cJSON *doc, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "components"),
                                         "schemas"),
        name);
}

/* The target of a reference node, $ref alone or wrapped in allOf; NULL when o is none. */
static const char *ref_of(const cJSON *o)
{
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "$ref");
    const cJSON *all = cJSON_GetObjectItemCaseSensitive(o, "allOf");

    if (!r && cJSON_GetArraySize(all) == 1)
        r = cJSON_GetObjectItemCaseSensitive(all->child, "$ref");
    return cJSON_GetStringValue(r);
}

static bool has_string(const cJSON *arr, const char *s)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, arr)
    {
        if (cJSON_IsString(c) && !strcmp(c->valuestring, s))
            return true;
    }
    return false;
}

/* Every "$ref" in v under prefix names a definition of defs; counts them into *n. */
static void refs_resolve(const cJSON *v, const cJSON *defs, const char *prefix, int *n)
{
    const cJSON *c;

    if (cJSON_IsString(v) && v->string && !strcmp(v->string, "$ref")) {
        assert_true(!strncmp(v->valuestring, prefix, strlen(prefix)));
        if (!cJSON_GetObjectItemCaseSensitive(defs, v->valuestring + strlen(prefix)))
            fail_msg("dangling reference %s", v->valuestring);
        (*n)++;
    }
    cJSON_ArrayForEach(c, v)
    {
        refs_resolve(c, defs, prefix, n);
    }
}

/* o[a][b], for keys holding dots (group names) that at() would split. */
static const cJSON *get2(const cJSON *o, const char *a, const char *b)
{
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, a), b);
}

/* Whether any member named key appears anywhere in v. */
static bool has_key(const cJSON *v, const char *key)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, v)
    {
        if ((c->string && !strcmp(c->string, key)) || has_key(c, key))
            return true;
    }
    return false;
}

static void test_pod_schema(void **state)
{
    struct api_registry *r = api_registry_new();
    struct openapi *o = openapi_new(r);
    cJSON *doc = openapi_v3_doc(o, "", "v1");
    const cJSON *pod, *spec, *containers, *container, *gvk, *res;
    int n = 0;
    (void)state;

    assert_non_null(doc);
    pod = schema(doc, "io.k8s.api.core.v1.Pod");
    assert_non_null(pod);
    gvk = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(pod, "x-kubernetes-group-version-kind"), 0);
    expect_str(gvk, "group", "");
    expect_str(gvk, "version", "v1");
    expect_str(gvk, "kind", "Pod");
    assert_string_equal(ref_of(at(pod, "properties.metadata")),
                        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
    assert_string_equal(ref_of(at(pod, "properties.spec")),
                        "#/components/schemas/io.k8s.api.core.v1.PodSpec");
    assert_string_equal(ref_of(at(pod, "properties.status")),
                        "#/components/schemas/io.k8s.api.core.v1.PodStatus");

    /* spec.containers: an array of Container, merged by name, required. */
    spec = schema(doc, "io.k8s.api.core.v1.PodSpec");
    assert_non_null(spec);
    containers = at(spec, "properties.containers");
    expect_str(containers, "type", "array");
    assert_string_equal(ref_of(at(containers, "items")),
                        "#/components/schemas/io.k8s.api.core.v1.Container");
    expect_str(containers, "x-kubernetes-patch-merge-key", "name");
    expect_str(containers, "x-kubernetes-patch-strategy", "merge");
    assert_true(has_string(at(spec, "required"), "containers"));
    /* An atomic list carries no patch strategy (tolerations has no patchStrategy tag). */
    assert_null(at(spec, "properties.tolerations.x-kubernetes-patch-strategy"));
    assert_string_equal(ref_of(at(spec, "properties.tolerations.items")),
                        "#/components/schemas/io.k8s.api.core.v1.Toleration");
    expect_str(spec, "properties.restartPolicy.type", "string");
    assert_true(has_string(at(spec, "properties.restartPolicy.enum"), "OnFailure"));

    container = schema(doc, "io.k8s.api.core.v1.Container");
    assert_non_null(container);
    assert_true(has_string(at(container, "required"), "name"));
    expect_str(container, "properties.env.x-kubernetes-patch-merge-key", "name");
    expect_str(container, "properties.ports.x-kubernetes-patch-merge-key", "containerPort");
    res = schema(doc, "io.k8s.api.core.v1.ResourceRequirements");
    assert_non_null(res);
    assert_string_equal(ref_of(at(res, "properties.limits.additionalProperties")),
                        "#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity");
    assert_non_null(at(schema(doc, "io.k8s.apimachinery.pkg.api.resource.Quantity"), "oneOf"));

    /* The List, and metadata's merge lists. */
    assert_string_equal(
        ref_of(at(schema(doc, "io.k8s.api.core.v1.PodList"), "properties.items.items")),
        "#/components/schemas/io.k8s.api.core.v1.Pod");
    expect_str(schema(doc, "io.k8s.api.core.v1.PodList"), "x-kubernetes-group-version-kind.0.kind",
               "PodList");
    expect_str(schema(doc, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"),
               "properties.ownerReferences.x-kubernetes-patch-merge-key", "uid");

    /* Other kinds of the group-version share the document; every reference resolves. */
    assert_non_null(schema(doc, "io.k8s.api.core.v1.ConfigMap"));
    assert_non_null(schema(doc, "io.k8s.api.core.v1.NodeSpec"));
    assert_null(schema(doc, "io.k8s.api.apps.v1.Deployment"));
    refs_resolve(doc, at(doc, "components.schemas"), "#/components/schemas/", &n);
    assert_true(n > 20);
    cJSON_Delete(doc);

    /* apps/v1 names its own package; a template's pod is PodTemplateSpec. */
    doc = openapi_v3_doc(o, "apps", "v1");
    assert_non_null(schema(doc, "io.k8s.api.apps.v1.Deployment"));
    assert_non_null(schema(doc, "io.k8s.api.apps.v1.DeploymentSpec"));
    n = 0;
    refs_resolve(doc, at(doc, "components.schemas"), "#/components/schemas/", &n);
    cJSON_Delete(doc);
    assert_null(openapi_v3_doc(o, "apps", "v2"));
    openapi_free(o);
    api_registry_free(r);
}

/* The CRD kind has no type description of its own; its schema still names apiVersion, kind,
 * metadata (a resolving reference) and the outline of spec kubectl apply's patch walks. */
static void test_free_form_kind(void **state)
{
    struct api_registry *r = api_registry_new();
    struct openapi *o = openapi_new(r);
    cJSON *doc = openapi_v3_doc(o, "apiextensions.k8s.io", "v1");
    const cJSON *crd;
    int n = 0;
    (void)state;

    assert_non_null(doc);
    crd = schema(doc, "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."
                      "CustomResourceDefinition");
    assert_non_null(crd);
    expect_str(crd, "x-kubernetes-group-version-kind.0.kind", "CustomResourceDefinition");
    expect_str(crd, "properties.kind.type", "string");
    assert_string_equal(ref_of(at(crd, "properties.metadata")),
                        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
    expect_str(crd, "properties.spec.properties.names.properties.shortNames.type", "array");
    expect_str(crd, "properties.spec.properties.versions.x-kubernetes-list-type", "atomic");
    refs_resolve(doc, at(doc, "components.schemas"), "#/components/schemas/", &n);
    assert_true(n > 0);
    cJSON_Delete(doc);
    openapi_free(o);
    api_registry_free(r);
}

static void test_paths(void **state)
{
    struct api_registry *r = api_registry_new();
    struct openapi *o = openapi_new(r);
    cJSON *doc = openapi_v3_doc(o, "", "v1");
    const cJSON *item, *op, *p;
    bool fv = false;
    (void)state;

    item = at(doc, "paths./api/v1/namespaces/{namespace}/pods/{name}");
    assert_non_null(item);
    expect_str(item, "get.x-kubernetes-action", "get");
    expect_str(item, "put.x-kubernetes-action", "put");
    expect_str(item, "delete.x-kubernetes-action", "delete");
    op = at(item, "patch");
    expect_str(op, "x-kubernetes-action", "patch");
    expect_str(op, "x-kubernetes-group-version-kind.kind", "Pod");
    expect_str(op, "operationId", "patchNamespacedPod");
    cJSON_ArrayForEach(p, at(op, "parameters"))
    {
        fv |= !strcmp(cJSON_GetStringValue(at(p, "name")), "fieldValidation");
    }
    assert_true(fv); /* kubectl leaves validation to the server (reference 10.5) */
    assert_non_null(at(op, "requestBody.content.application/strategic-merge-patch+json"));

    item = at(doc, "paths./api/v1/namespaces/{namespace}/pods");
    expect_str(item, "get.x-kubernetes-action", "list");
    expect_str(item, "post.x-kubernetes-action", "post");
    expect_str(item, "delete.x-kubernetes-action", "deletecollection");
    expect_str(doc, "paths./api/v1/pods.get.x-kubernetes-action", "list");
    expect_str(doc, "paths./api/v1/pods.get.operationId", "listPodForAllNamespaces");
    expect_str(doc, "paths./api/v1/namespaces/{namespace}/pods/{name}/status.patch.operationId",
               "patchNamespacedPodStatus");
    /* Cluster-scoped: no namespace segment. */
    expect_str(doc, "paths./api/v1/nodes/{name}.get.x-kubernetes-action", "get");
    assert_null(at(doc, "paths./api/v1/namespaces/{namespace}/nodes"));
    cJSON_Delete(doc);
    openapi_free(o);
    api_registry_free(r);
}

static const char crd_json[] =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
    "\"metadata\":{\"name\":\"crontabs.stable.example.com\"},\"spec\":{\"group\":"
    "\"stable.example.com\",\"names\":{\"kind\":\"CronTab\",\"listKind\":\"CronTabList\","
    "\"plural\":\"crontabs\",\"singular\":\"crontab\"},\"scope\":\"Namespaced\","
    "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,\"schema\":"
    "{\"openAPIV3Schema\":{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\","
    "\"description\":\"What the cron tab runs.\",\"required\":[\"cronSpec\"],\"properties\":"
    "{\"cronSpec\":{\"type\":\"string\"},\"replicas\":{\"type\":\"integer\"},\"port\":"
    "{\"x-kubernetes-int-or-string\":true}}}}}}}]}}";

static void test_crd_appears_and_disappears(void **state)
{
    struct api_registry *r = api_registry_new();
    struct openapi *o = openapi_new(r);
    struct field_errors errs = FIELD_ERRORS_INIT;
    cJSON *crd = J(crd_json), *doc, *idx;
    const cJSON *ct;
    int n = 0;
    (void)state;

    idx = openapi_v3_index(o);
    assert_null(get2(idx, "paths", "apis/stable.example.com/v1"));
    cJSON_Delete(idx);
    assert_null(openapi_v3_doc(o, "stable.example.com", "v1"));

    assert_int_equal(api_registry_add_crd(r, crd, &errs), 0);
    doc = openapi_v3_doc(o, "stable.example.com", "v1");
    assert_non_null(doc);
    /* kube's name for a custom resource: the group reversed, version, kind. */
    ct = schema(doc, "com.example.stable.v1.CronTab");
    assert_non_null(ct);
    expect_str(ct, "x-kubernetes-group-version-kind.0.group", "stable.example.com");
    expect_str(ct, "properties.spec.description", "What the cron tab runs.");
    assert_true(has_string(at(ct, "properties.spec.required"), "cronSpec"));
    expect_str(ct, "properties.spec.properties.replicas.type", "integer");
    assert_string_equal(ref_of(at(ct, "properties.metadata")),
                        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
    assert_non_null(schema(doc, "com.example.stable.v1.CronTabList"));
    refs_resolve(doc, at(doc, "components.schemas"), "#/components/schemas/", &n);
    /* No strategic merge patch for custom resources; merge patch is offered. */
    {
        const cJSON *patch = cJSON_GetObjectItemCaseSensitive(
            get2(doc, "paths",
                 "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"),
            "patch");
        assert_non_null(patch);
        assert_null(at(patch, "requestBody.content.application/strategic-merge-patch+json"));
        assert_non_null(at(patch, "requestBody.content.application/merge-patch+json"));
    }
    cJSON_Delete(doc);
    idx = openapi_v3_index(o);
    {
        const char *url = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
            get2(idx, "paths", "apis/stable.example.com/v1"), "serverRelativeURL"));
        assert_non_null(url);
        assert_non_null(strstr(url, "/openapi/v3/apis/stable.example.com/v1?hash="));
    }
    cJSON_Delete(idx);
    doc = openapi_v2_doc(o);
    /* v2: int-or-string as kube's v2 writes it. */
    expect_str(
        cJSON_GetObjectItemCaseSensitive(at(doc, "definitions"), "com.example.stable.v1.CronTab"),
        "properties.spec.properties.port.format", "int-or-string");
    cJSON_Delete(doc);

    assert_int_equal(api_registry_remove_crd(r, "crontabs.stable.example.com"), 0);
    assert_null(openapi_v3_doc(o, "stable.example.com", "v1"));
    idx = openapi_v3_index(o);
    assert_null(get2(idx, "paths", "apis/stable.example.com/v1"));
    cJSON_Delete(idx);
    doc = openapi_v2_doc(o);
    assert_null(
        cJSON_GetObjectItemCaseSensitive(at(doc, "definitions"), "com.example.stable.v1.CronTab"));
    cJSON_Delete(doc);
    cJSON_Delete(crd);
    openapi_free(o);
    api_registry_free(r);
}

static void test_v2(void **state)
{
    struct api_registry *r = api_registry_new();
    struct openapi *o = openapi_new(r);
    cJSON *doc = openapi_v2_doc(o);
    const cJSON *defs = at(doc, "definitions"), *pod, *ios;
    int n = 0;
    (void)state;

    expect_str(doc, "swagger", "2.0");
    pod = cJSON_GetObjectItemCaseSensitive(defs, "io.k8s.api.core.v1.PodSpec");
    assert_non_null(pod);
    /* A reference is a plain $ref to #/definitions/, never wrapped in allOf. */
    expect_str(cJSON_GetObjectItemCaseSensitive(
                   at(cJSON_GetObjectItemCaseSensitive(pod, "properties"), "containers"), "items"),
               "$ref", "#/definitions/io.k8s.api.core.v1.Container");
    assert_false(has_key(doc, "allOf"));
    assert_false(has_key(doc, "oneOf"));
    assert_false(has_key(doc, "anyOf"));
    assert_false(has_key(doc, "nullable"));
    ios = cJSON_GetObjectItemCaseSensitive(defs, "io.k8s.apimachinery.pkg.util.intstr.IntOrString");
    assert_non_null(ios);
    expect_str(ios, "type", "string");
    expect_str(ios, "format", "int-or-string");
    expect_str(
        cJSON_GetObjectItemCaseSensitive(defs, "io.k8s.apimachinery.pkg.api.resource.Quantity"),
        "type", "string");
    /* Every group-version's kinds are there, and every reference resolves. */
    assert_non_null(cJSON_GetObjectItemCaseSensitive(defs, "io.k8s.api.apps.v1.Deployment"));
    assert_non_null(cJSON_GetObjectItemCaseSensitive(defs, "io.k8s.api.coordination.v1.Lease"));
    refs_resolve(doc, defs, "#/definitions/", &n);
    assert_true(n > 20);
    cJSON_Delete(doc);
    openapi_free(o);
    api_registry_free(r);
}

/* The protobuf bytes of a small document, worked out by hand from OpenAPIv2.proto: Document
 * {1 swagger, 2 info {1 title, 2 version}, 8 paths, 9 definitions {1 NamedSchema {1 name,
 * 2 Schema {19 required, 22 type {1}, 25 properties {1 NamedSchema}, 31 NamedAny {1 name,
 * 2 Any {2 yaml}}}}}}. */
static void test_v2_protobuf(void **state)
{
    static const unsigned char want[] = {
        0x0A, 0x03, '2',  '.',  '0',                   /* swagger */
        0x12, 0x06, 0x0A, 0x01, 'T',  0x12, 0x01, '1', /* info */
        0x42, 0x00,                                    /* paths */
        0x4A, 0x3A,                                    /* definitions, 58 bytes */
        0x0A, 0x38,                                    /* NamedSchema, 56 bytes */
        0x0A, 0x01, 'A',  0x12, 0x33,                  /* "A", Schema of 51 bytes */
        0x9A, 0x01, 0x01, 'x',                         /* required (19) */
        0xB2, 0x01, 0x08, 0x0A, 0x06, 'o',  'b',  'j',  'e',  'c', 't', /* type (22) */
        0xCA, 0x01, 0x12,                         /* properties (25), 18 bytes */
        0x0A, 0x10, 0x0A, 0x01, 'x',  0x12, 0x0B, /* NamedSchema "x" */
        0xB2, 0x01, 0x08, 0x0A, 0x06, 's',  't',  'r',  'i',  'n', 'g', 0xFA,
        0x01, 0x0C, /* vendor extension (31) */
        0x0A, 0x03, 'x',  '-',  'k',  0x12, 0x05, 0x12, 0x03, '[', '1', ']',
    };
    cJSON *doc = J("{\"swagger\":\"2.0\",\"info\":{\"title\":\"T\",\"version\":\"1\"},"
                   "\"paths\":{},\"definitions\":{\"A\":{\"type\":\"object\",\"required\":[\"x\"],"
                   "\"properties\":{\"x\":{\"type\":\"string\"}},\"x-k\":[1]}}}");
    struct strbuf out = STRBUF_INIT;
    (void)state;

    openapi_v2_protobuf(doc, &out);
    assert_int_equal(out.len, sizeof(want));
    assert_memory_equal(out.buf, want, sizeof(want));
    strbuf_release(&out);
    cJSON_Delete(doc);
}

/* ---- over HTTP ---- */

struct answer {
    long code;
    struct strbuf body, etag, location, cache, type;
};

static size_t on_hdr(char *p, size_t size, size_t n, void *ud)
{
    struct answer *a = ud;
    size_t len = size * n;
    static const struct {
        const char *name;
        size_t off;
    } keep[] = {
        {"etag:", offsetof(struct answer, etag)},
        {"location:", offsetof(struct answer, location)},
        {"cache-control:", offsetof(struct answer, cache)},
        {"content-type:", offsetof(struct answer, type)},
    };

    for (size_t i = 0; i < ARRAY_SIZE(keep); i++) {
        size_t k = strlen(keep[i].name);
        if (len > k && !strncasecmp(p, keep[i].name, k)) {
            struct strbuf *sb = (struct strbuf *)((char *)a + keep[i].off);
            const char *v = p + k, *end = p + len;
            while (v < end && *v == ' ')
                v++;
            while (end > v && (end[-1] == '\r' || end[-1] == '\n'))
                end--;
            strbuf_reset(sb);
            strbuf_add(sb, v, (size_t)(end - v));
        }
    }
    return len;
}

static void get(struct env *e, const char *path, const char *header, struct answer *a)
{
    CURL *h = curl_easy_init();
    struct strbuf url = STRBUF_INIT;
    struct curl_slist *hdrs = header ? curl_slist_append(NULL, header) : NULL;

    *a = (struct answer){0, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT};
    strbuf_addf(&url, "%s%s", e->base, path);
    (void)curl_easy_setopt(h, CURLOPT_URL, url.buf);
    (void)curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, &a->body);
    (void)curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_hdr);
    (void)curl_easy_setopt(h, CURLOPT_HEADERDATA, a);
    (void)curl_easy_setopt(h, CURLOPT_TIMEOUT, 20L);
    assert_int_equal(curl_easy_perform(h), CURLE_OK);
    (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a->code);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    strbuf_release(&url);
}

static void answer_release(struct answer *a)
{
    strbuf_release(&a->body);
    strbuf_release(&a->etag);
    strbuf_release(&a->location);
    strbuf_release(&a->cache);
    strbuf_release(&a->type);
}

static void test_http_caching(void **state)
{
    struct env *e = *state;
    struct answer idx, a, b;
    struct strbuf hdr = STRBUF_INIT;
    cJSON *doc;
    const char *url;

    get(e, "/openapi/v3", NULL, &idx);
    assert_int_equal(idx.code, 200);
    doc = cJSON_Parse(idx.body.buf);
    url = cJSON_GetStringValue(at(doc, "paths.api/v1.serverRelativeURL"));
    assert_non_null(url);
    assert_non_null(strstr(url, "?hash="));

    /* The hashed URL: immutable, its ETag the hash. */
    get(e, url, NULL, &a);
    assert_int_equal(a.code, 200);
    assert_string_equal(a.cache.buf, "public, immutable");
    assert_int_equal(a.etag.len, 66);
    assert_memory_equal(a.etag.buf + 1, strstr(url, "?hash=") + 6, 64);
    assert_non_null(strstr(a.body.buf, "io.k8s.api.core.v1.PodSpec"));

    /* If-None-Match with it: 304, no body. */
    strbuf_addf(&hdr, "If-None-Match: %s", a.etag.buf);
    get(e, "/openapi/v3/api/v1", hdr.buf, &b);
    assert_int_equal(b.code, 304);
    assert_int_equal(b.body.len, 0);
    answer_release(&b);

    /* An empty hash is none. */
    get(e, "/openapi/v3/api/v1?hash=", NULL, &b);
    assert_int_equal(b.code, 200);
    assert_string_equal(b.cache.buf, "no-cache, private");
    answer_release(&b);

    /* A stale hash is redirected to the current one. */
    get(e, "/openapi/v3/api/v1?hash=0123", NULL, &b);
    assert_int_equal(b.code, 301);
    assert_string_equal(b.location.buf, url);
    answer_release(&b);

    /* A CRD changes its group-version's hash and the index; others keep theirs. */
    assert_int_equal(req(e, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", NULL,
                         crd_json, NULL, NULL),
                     201);
    get(e, "/openapi/v3", NULL, &b);
    assert_non_null(strstr(b.body.buf, "apis/stable.example.com/v1"));
    assert_non_null(strstr(b.body.buf, url)); /* api/v1 unchanged */
    answer_release(&b);
    get(e, "/openapi/v3/apis/stable.example.com/v1", NULL, &b);
    assert_int_equal(b.code, 200);
    assert_string_equal(b.cache.buf, "no-cache, private");
    assert_non_null(strstr(b.body.buf, "com.example.stable.v1.CronTab"));
    answer_release(&b);
    get(e, "/openapi/v3/apis/nothing.example.com/v1", NULL, &b);
    assert_int_equal(b.code, 404);
    answer_release(&b);

    /* The CRD deleted: its document goes with it. */
    assert_int_equal(req(e, "DELETE",
                         "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                         "crontabs.stable.example.com",
                         NULL, NULL, NULL, NULL),
                     200);
    get(e, "/openapi/v3/apis/stable.example.com/v1", NULL, &b);
    assert_int_equal(b.code, 404);
    answer_release(&b);
    get(e, "/openapi/v3", NULL, &b);
    assert_null(strstr(b.body.buf, "stable.example.com"));
    answer_release(&b);

    /* /openapi/v2: JSON by default, protobuf for client-go's Accept. */
    get(e, "/openapi/v2", NULL, &b);
    assert_int_equal(b.code, 200);
    assert_non_null(strstr(b.type.buf, "application/json"));
    assert_non_null(strstr(b.body.buf, "\"swagger\":\"2.0\""));
    answer_release(&b);
    get(e, "/openapi/v2", "Accept: " OPENAPI_V2_PROTOBUF_ACCEPT, &b);
    assert_int_equal(b.code, 200);
    assert_string_equal(b.type.buf, OPENAPI_V2_PROTOBUF_TYPE);
    assert_true(b.body.len > 1000 && (unsigned char)b.body.buf[0] == 0x0A);
    strbuf_reset(&hdr);
    strbuf_addf(&hdr, "If-None-Match: %s", b.etag.buf);
    answer_release(&b);
    get(e, "/openapi/v2", hdr.buf, &b);
    assert_int_equal(b.code, 200); /* the JSON form has another ETag */
    answer_release(&b);

    cJSON_Delete(doc);
    answer_release(&idx);
    answer_release(&a);
    strbuf_release(&hdr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pod_schema),
        cmocka_unit_test(test_free_form_kind),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_crd_appears_and_disappears),
        cmocka_unit_test(test_v2),
        cmocka_unit_test(test_v2_protobuf),
        cmocka_unit_test_setup_teardown(test_http_caching, setup, teardown),
    };
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int r = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return r;
}
