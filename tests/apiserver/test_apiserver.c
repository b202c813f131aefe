/*
 * Tests for apiserver/apiserver: the REST verbs over a real HTTP server and SQLite store,
 * driven by libcurl. Status codes, reasons and bodies follow reference kubernetes-api.md
 * sections 1-3: discovery, create (201, generateName, 409, 422 with causes, namespace rules),
 * get (404 message), list (selectors, paging), update (409 on a stale resourceVersion, the
 * status subresource), delete (finalizers, namespace cascade), and CRDs served at once after
 * they are created, surviving a restart of the server.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "api/api.h"
#include "api/crd.h"
#include "apiserver/apiserver.h"
#include "apiserver/store.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "http/server.h"
#include "testutil.h"

struct env {
    char dir[64];
    char db[128];
    struct store *store;
    struct apiserver *api;
    struct http_server *http;
    char base[64];
};

static void env_start(struct env *e)
{
    struct http_server_opts o = {.host = "127.0.0.1"};

    assert_int_equal(store_open(e->db, 64, &e->store), 0);
    assert_int_equal(apiserver_new(e->store, &e->api), 0);
    assert_int_equal(http_server_start(&o, apiserver_handle, e->api, &e->http), 0);
    (void)snprintf(e->base, sizeof(e->base), "http://127.0.0.1:%u", http_server_port(e->http));
}

static void env_stop(struct env *e)
{
    apiserver_stop_watches(e->api);
    http_server_stop(e->http);
    apiserver_free(e->api);
    store_close(e->store);
    e->http = NULL;
    e->api = NULL;
    e->store = NULL;
}

static int setup(void **state)
{
    struct env *e = xcalloc(1, sizeof(*e));

    (void)snprintf(e->dir, sizeof(e->dir), "/tmp/koord-api-XXXXXX");
    if (!mkdtemp(e->dir))
        return -1;
    (void)snprintf(e->db, sizeof(e->db), "%s/db", e->dir);
    env_start(e);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;
    char p[160];

    env_stop(e);
    for (const char *const *s = (const char *const[]){"", "-wal", "-shm", NULL}; *s; s++) {
        (void)snprintf(p, sizeof(p), "%s%s", e->db, *s);
        (void)unlink(p);
    }
    (void)rmdir(e->dir);
    free(e);
    return 0;
}

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
    strbuf_add(ud, p, size * n);
    return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    if (!strncasecmp(p, "Warning:", 8))
        strbuf_add(ud, p, size * n);
    return size * n;
}

/* One request; returns the HTTP code, *ret the parsed JSON body (or NULL). */
static long http(struct env *e, const char *method, const char *path, const char *body, cJSON **ret,
                 struct strbuf *warnings)
{
    CURL *h = curl_easy_init();
    struct strbuf url = STRBUF_INIT, out = STRBUF_INIT;
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    long code = 0;

    strbuf_addf(&url, "%s%s", e->base, path);
    (void)curl_easy_setopt(h, CURLOPT_URL, url.buf);
    (void)curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    (void)curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, &out);
    (void)curl_easy_setopt(h, CURLOPT_TIMEOUT, 20L);
    if (warnings) {
        (void)curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
        (void)curl_easy_setopt(h, CURLOPT_HEADERDATA, warnings);
    }
    if (body)
        (void)curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    assert_int_equal(curl_easy_perform(h), CURLE_OK);
    (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (getenv("KOORD_TEST_DEBUG"))
        print_error("%s %s -> %ld %s\n", method, path, code, out.buf);
    if (ret)
        *ret = cJSON_Parse(out.buf);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    strbuf_release(&url);
    strbuf_release(&out);
    return code;
}

static const char *str(const cJSON *o, const char *path)
{
    char buf[256];
    const cJSON *v = o;

    (void)snprintf(buf, sizeof(buf), "%s", path);
    for (char *seg = buf, *dot; seg && v; seg = dot ? dot + 1 : NULL) {
        dot = strchr(seg, '.');
        if (dot)
            *dot = '\0';
        v = cJSON_IsArray(v) ? cJSON_GetArrayItem(v, (int)strtol(seg, NULL, 10))
                             : cJSON_GetObjectItemCaseSensitive(v, seg);
    }
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void expect_str(const cJSON *o, const char *path, const char *want)
{
    const char *got = str(o, path);
    if (!got || strcmp(got, want)) {
        char *txt = cJSON_PrintUnformatted(o);
        print_error("%s\n", txt ? txt : "(null)");
        cJSON_free(txt);
        fail_msg("%s = %s, want %s", path, got ? got : "(absent)", want);
    }
}

static void test_discovery_and_health(void **state)
{
    struct env *e = *state;
    cJSON *b = NULL;

    assert_int_equal(http(e, "GET", "/healthz", NULL, NULL, NULL), 200);
    assert_int_equal(http(e, "GET", "/version", NULL, &b, NULL), 200);
    expect_str(b, "major", "1");
    cJSON_Delete(b);
    assert_int_equal(http(e, "GET", "/api", NULL, &b, NULL), 200);
    expect_str(b, "kind", "APIVersions");
    cJSON_Delete(b);
    assert_int_equal(http(e, "GET", "/api/v1", NULL, &b, NULL), 200);
    expect_str(b, "groupVersion", "v1");
    cJSON_Delete(b);
    assert_int_equal(http(e, "GET", "/apis/slo.koordinator.sh/v1alpha1", NULL, &b, NULL), 404);
    expect_str(b, "reason", "NotFound");
    cJSON_Delete(b);
    assert_int_equal(http(e, "GET", "/apis/slo.koordinator.sh/v1alpha1/nodeslos", NULL, &b, NULL),
                     404);
    expect_str(b, "message", "the server could not find the requested resource");
    cJSON_Delete(b);
}

static void test_crud(void **state)
{
    struct env *e = *state;
    struct strbuf warn = STRBUF_INIT;
    cJSON *b = NULL;
    char body[512], rv[32];

    /* Create: 201, server-filled metadata, unknown fields pruned with a warning. */
    assert_int_equal(
        http(e, "POST", "/api/v1/namespaces/default/configmaps",
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c1\","
             "\"labels\":{\"app\":\"web\"}},\"data\":{\"k\":\"v\"},\"bogus\":1}",
             &b, &warn),
        201);
    expect_str(b, "metadata.namespace", "default");
    assert_non_null(str(b, "metadata.uid"));
    assert_non_null(str(b, "metadata.creationTimestamp"));
    assert_non_null(str(b, "metadata.resourceVersion"));
    assert_null(cJSON_GetObjectItem(b, "bogus"));
    assert_non_null(strstr(warn.buf, "299 - \"unknown field \\\"bogus\\\"\""));
    (void)snprintf(rv, sizeof(rv), "%s", str(b, "metadata.resourceVersion"));
    cJSON_Delete(b);

    /* Again: 409 AlreadyExists. Namespace mismatch: 400. */
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/configmaps",
                          "{\"metadata\":{\"name\":\"c1\"}}", &b, NULL),
                     409);
    expect_str(b, "reason", "AlreadyExists");
    expect_str(b, "message", "configmaps \"c1\" already exists");
    cJSON_Delete(b);
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/configmaps",
                          "{\"metadata\":{\"name\":\"c2\",\"namespace\":\"other\"}}", &b, NULL),
                     400);
    cJSON_Delete(b);

    /* Invalid: 422 with the field path and a cause. */
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/pods",
                          "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":\"n1\","
                          "\"schedulingGates\":[{\"name\":\"example.com/q\"}],\"containers\":"
                          "[{\"name\":\"c\"}]}}",
                          &b, NULL),
                     422);
    expect_str(b, "reason", "Invalid");
    expect_str(b, "details.causes.0.field", "spec.nodeName");
    expect_str(b, "message",
               "Pod \"p\" is invalid: spec.nodeName: Forbidden: cannot be set until "
               "all schedulingGates have been cleared");
    cJSON_Delete(b);

    /* generateName. */
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/configmaps",
                          "{\"metadata\":{\"generateName\":\"gen-\"}}", &b, NULL),
                     201);
    assert_int_equal(strlen(str(b, "metadata.name")), 9);
    assert_int_equal(strncmp(str(b, "metadata.name"), "gen-", 4), 0);
    cJSON_Delete(b);

    /* Get and 404. */
    assert_int_equal(http(e, "GET", "/api/v1/namespaces/default/configmaps/c1", NULL, &b, NULL),
                     200);
    expect_str(b, "data.k", "v");
    expect_str(b, "metadata.resourceVersion", rv);
    cJSON_Delete(b);
    assert_int_equal(http(e, "GET", "/api/v1/namespaces/default/configmaps/nope", NULL, &b, NULL),
                     404);
    expect_str(b, "message", "configmaps \"nope\" not found");
    cJSON_Delete(b);

    /* Update with the current resourceVersion, then with the stale one: 409 Conflict. */
    (void)snprintf(body, sizeof(body),
                   "{\"metadata\":{\"name\":\"c1\",\"resourceVersion\":\"%s\",\"labels\":"
                   "{\"app\":\"web\"}},\"data\":{\"k\":\"v2\"}}",
                   rv);
    assert_int_equal(http(e, "PUT", "/api/v1/namespaces/default/configmaps/c1", body, &b, NULL),
                     200);
    expect_str(b, "data.k", "v2");
    assert_string_not_equal(str(b, "metadata.resourceVersion"), rv);
    cJSON_Delete(b);
    assert_int_equal(http(e, "PUT", "/api/v1/namespaces/default/configmaps/c1", body, &b, NULL),
                     409);
    expect_str(b, "reason", "Conflict");
    cJSON_Delete(b);
    assert_int_equal(http(e, "PUT", "/api/v1/namespaces/default/configmaps/c1",
                          "{\"metadata\":{\"name\":\"other\"}}", &b, NULL),
                     400);
    expect_str(b, "message",
               "the name of the object (other) does not match the name on the URL (c1)");
    cJSON_Delete(b);

    /* List with a label selector, a field selector and paging. */
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/kube-system/configmaps",
                          "{\"metadata\":{\"name\":\"c3\",\"labels\":{\"app\":\"db\"}}}", NULL,
                          NULL),
                     201);
    assert_int_equal(http(e, "GET", "/api/v1/configmaps?labelSelector=app%3Dweb", NULL, &b, NULL),
                     200);
    expect_str(b, "kind", "ConfigMapList");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(b, "items")), 1);
    expect_str(b, "items.0.metadata.name", "c1");
    expect_str(b, "items.0.kind", "ConfigMap");
    cJSON_Delete(b);
    assert_int_equal(http(e, "GET",
                          "/api/v1/configmaps?fieldSelector=metadata.namespace%3Dkube-system", NULL,
                          &b, NULL),
                     200);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(b, "items")), 1);
    cJSON_Delete(b);
    assert_int_equal(http(e, "GET", "/api/v1/configmaps?fieldSelector=spec.x%3D1", NULL, &b, NULL),
                     400);
    expect_str(b, "message", "field label not supported: spec.x");
    cJSON_Delete(b);
    assert_int_equal(http(e, "GET", "/api/v1/configmaps?limit=2", NULL, &b, NULL), 200);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(b, "items")), 2);
    {
        char next[256];
        struct strbuf p = STRBUF_INIT;
        char *esc;
        CURL *h = curl_easy_init();
        (void)snprintf(next, sizeof(next), "%s", str(b, "metadata.continue"));
        esc = curl_easy_escape(h, next, 0);
        strbuf_addf(&p, "/api/v1/configmaps?limit=2&continue=%s", esc);
        curl_free(esc);
        curl_easy_cleanup(h);
        cJSON_Delete(b);
        assert_int_equal(http(e, "GET", p.buf, NULL, &b, NULL), 200);
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(b, "items")), 1);
        assert_null(str(b, "metadata.continue"));
        strbuf_release(&p);
    }
    cJSON_Delete(b);

    /* Delete: Success status, then 404. */
    assert_int_equal(http(e, "DELETE", "/api/v1/namespaces/default/configmaps/c1", NULL, &b, NULL),
                     200);
    expect_str(b, "status", "Success");
    cJSON_Delete(b);
    assert_int_equal(http(e, "DELETE", "/api/v1/namespaces/default/configmaps/c1", NULL, &b, NULL),
                     404);
    cJSON_Delete(b);
    strbuf_release(&warn);
}

static void test_status_and_finalizers(void **state)
{
    struct env *e = *state;
    cJSON *b = NULL;

    assert_int_equal(http(e, "POST", "/api/v1/nodes",
                          "{\"metadata\":{\"name\":\"n1\",\"finalizers\":[\"x/keep\"]},"
                          "\"spec\":{\"unschedulable\":true}}",
                          NULL, NULL),
                     201);
    /* A status write changes only status; a main-resource write never changes status. */
    assert_int_equal(http(e, "PUT", "/api/v1/nodes/n1/status",
                          "{\"metadata\":{\"name\":\"n1\"},\"spec\":{},\"status\":{\"capacity\":"
                          "{\"cpu\":\"4\"}}}",
                          &b, NULL),
                     200);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "spec"), "unschedulable")));
    expect_str(b, "status.capacity.cpu", "4");
    cJSON_Delete(b);
    assert_int_equal(http(e, "PUT", "/api/v1/nodes/n1",
                          "{\"metadata\":{\"name\":\"n1\",\"finalizers\":[\"x/keep\"]},\"spec\":{},"
                          "\"status\":{\"capacity\":{\"cpu\":\"64\"}}}",
                          &b, NULL),
                     200);
    expect_str(b, "status.capacity.cpu", "4");
    cJSON_Delete(b);

    /* A finalizer keeps the object, with a deletionTimestamp. */
    assert_int_equal(http(e, "DELETE", "/api/v1/nodes/n1", NULL, &b, NULL), 202);
    assert_non_null(str(b, "metadata.deletionTimestamp"));
    cJSON_Delete(b);
    assert_int_equal(http(e, "GET", "/api/v1/nodes/n1", NULL, &b, NULL), 200);
    assert_non_null(str(b, "metadata.deletionTimestamp"));
    cJSON_Delete(b);

    /* Deleting a namespace deletes what is in it. */
    assert_int_equal(
        http(e, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"team\"}}", NULL, NULL),
        201);
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/team/configmaps",
                          "{\"metadata\":{\"name\":\"x\"}}", NULL, NULL),
                     201);
    assert_int_equal(http(e, "DELETE", "/api/v1/namespaces/team", NULL, NULL, NULL), 200);
    assert_int_equal(http(e, "GET", "/api/v1/namespaces/team/configmaps/x", NULL, NULL, NULL), 404);
}

static long patch(struct env *e, const char *path, const char *ctype, const char *body,
                  cJSON **ret);

static void test_crds_served_and_persisted(void **state)
{
    struct env *e = *state;
    cJSON *crd = NULL, *b = NULL;
    char *txt;

    for (const struct api_kind *const *k = api_kinds(); *k; k++) {
        if (!(*k)->crd || strcmp((*k)->kind, "NodeSLO"))
            continue;
        assert_int_equal(api_crd_build(*k, &crd), 0);
    }
    txt = cJSON_PrintUnformatted(crd);
    assert_int_equal(
        http(e, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", txt, &b, NULL),
        201);
    cJSON_Delete(b);
    cJSON_free(txt);
    cJSON_Delete(crd);

    /* Served at once: a NodeSLO validates against the CRD schema (422 with the path). */
    assert_int_equal(http(e, "POST", "/apis/slo.koordinator.sh/v1alpha1/nodeslos",
                          "{\"metadata\":{\"name\":\"n1\"},\"spec\":{\"cpuBurstStrategy\":"
                          "{\"cpuBurstPercent\":20000}}}",
                          &b, NULL),
                     422);
    expect_str(b, "details.causes.0.field", "spec.cpuBurstStrategy.cpuBurstPercent");
    cJSON_Delete(b);
    assert_int_equal(http(e, "POST", "/apis/slo.koordinator.sh/v1alpha1/nodeslos",
                          "{\"metadata\":{\"name\":\"n1\"},\"spec\":{\"resourceQOSStrategy\":"
                          "{\"beClass\":{\"networkQOS\":{\"enable\":true}}}},\"status\":{}}",
                          &b, NULL),
                     201);
    /* CRD defaults applied: networkQOS limits default to 100. */
    assert_int_equal(cJSON_GetObjectItem(
                         cJSON_GetObjectItem(
                             cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "spec"),
                                                                     "resourceQOSStrategy"),
                                                 "beClass"),
                             "networkQOS"),
                         "ingressLimit")
                         ->valueint,
                     100);
    cJSON_Delete(b);

    /* Strategic merge patch: 415 for a custom resource, as kube-apiserver (the CRD object
     * itself takes them: tests/e2e/test_apiserver_apply.sh). */
    assert_int_equal(patch(e, "/apis/slo.koordinator.sh/v1alpha1/nodeslos/n1",
                           "application/strategic-merge-patch+json", "{\"metadata\":{}}", &b),
                     415);
    expect_str(b, "reason", "UnsupportedMediaType");
    cJSON_Delete(b);

    /* A restart keeps serving it from the stored CRD. */
    env_stop(e);
    env_start(e);
    assert_int_equal(
        http(e, "GET", "/apis/slo.koordinator.sh/v1alpha1/nodeslos/n1", NULL, &b, NULL), 200);
    expect_str(b, "kind", "NodeSLO");
    cJSON_Delete(b);

    /* Deleting the CRD withdraws the resource and its objects. */
    assert_int_equal(http(e, "DELETE",
                          "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                          "nodeslos.slo.koordinator.sh",
                          NULL, NULL, NULL),
                     200);
    assert_int_equal(
        http(e, "GET", "/apis/slo.koordinator.sh/v1alpha1/nodeslos/n1", NULL, NULL, NULL), 404);
}

/* Writes a ConfigMap and deletes it, straight through the store. */
static void *late_writer(void *ud)
{
    struct env *e = ud;
    static const char v[] = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                            "\"late\",\"namespace\":\"default\"}}";
    CHECK(store_create(e->store, "/core/configmaps/default/late", v, sizeof(v) - 1, NULL) == 0);
    CHECK(store_delete(e->store, "/core/configmaps/default/late", 0, NULL, NULL) == 0);
    return NULL;
}

/* A live watch: the writer starts once the initial events arrived (so the watch is registered:
 * no timing assumption), and the transfer stops once the deletion arrived. */
struct live {
    struct env *e;
    struct strbuf body;
    pthread_t writer;
    bool started;
};

static size_t on_live(char *p, size_t size, size_t n, void *ud)
{
    struct live *l = ud;

    strbuf_add(&l->body, p, size * n);
    if (!l->started && strstr(l->body.buf, "\"two\"")) {
        CHECK(pthread_create(&l->writer, NULL, late_writer, l->e) == 0);
        l->started = true;
    }
    if (strstr(l->body.buf, "\"DELETED\"") && strstr(l->body.buf, "\"late\""))
        return 0; /* seen everything: end the transfer */
    return size * n;
}

/* The event types and names of a watch body, one "TYPE name" per line. */
static void summarize(const char *body, struct strbuf *out)
{
    const char *p = body;

    while (p && *p) {
        const char *nl = strchr(p, '\n');
        char *line = xstrndup(p, nl ? (size_t)(nl - p) : strlen(p));
        cJSON *ev = cJSON_Parse(line);
        const cJSON *o = cJSON_GetObjectItem(ev, "object");
        const char *name = str(o, "metadata.name");
        strbuf_addf(out, "%s %s%s;", str(ev, "type"), name ? name : "-",
                    cJSON_GetObjectItem(
                        cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "annotations"),
                        "k8s.io/initial-events-end")
                        ? " end"
                        : "");
        cJSON_Delete(ev);
        free(line);
        p = nl ? nl + 1 : NULL;
    }
}

static long raw(struct env *e, const char *path, struct strbuf *out)
{
    CURL *h = curl_easy_init();
    struct strbuf url = STRBUF_INIT;
    long code = 0;

    strbuf_addf(&url, "%s%s", e->base, path);
    (void)curl_easy_setopt(h, CURLOPT_URL, url.buf);
    (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
    (void)curl_easy_setopt(h, CURLOPT_TIMEOUT, 20L);
    assert_int_equal(curl_easy_perform(h), CURLE_OK);
    (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(h);
    strbuf_release(&url);
    return code;
}

static void test_watch(void **state)
{
    struct env *e = *state;
    struct strbuf body = STRBUF_INIT, sum = STRBUF_INIT;
    cJSON *b = NULL;
    char path[256], rv[32];

    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/configmaps",
                          "{\"metadata\":{\"name\":\"one\"}}", &b, NULL),
                     201);
    (void)snprintf(rv, sizeof(rv), "%s", str(b, "metadata.resourceVersion"));
    cJSON_Delete(b);
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/configmaps",
                          "{\"metadata\":{\"name\":\"two\",\"labels\":{\"app\":\"x\"}}}", NULL,
                          NULL),
                     201);
    assert_int_equal(
        http(e, "DELETE", "/api/v1/namespaces/default/configmaps/one", NULL, NULL, NULL), 200);

    /* From "0": the current state as ADDED, then live writes as they happen. */
    {
        struct live l = {.e = e, .body = STRBUF_INIT};
        CURL *h = curl_easy_init();
        struct strbuf url = STRBUF_INIT;
        strbuf_addf(&url, "%s/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0",
                    e->base);
        (void)curl_easy_setopt(h, CURLOPT_URL, url.buf);
        (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_live);
        (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, &l);
        (void)curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
        assert_int_equal(curl_easy_perform(h), CURLE_WRITE_ERROR); /* we ended it */
        curl_easy_cleanup(h);
        assert_true(l.started);
        assert_int_equal(pthread_join(l.writer, NULL), 0);
        summarize(l.body.buf, &sum);
        assert_string_equal(sum.buf, "ADDED two;ADDED late;DELETED late;");
        strbuf_reset(&sum);
        strbuf_release(&l.body);
        strbuf_release(&url);
    }

    /* From an exact revision: only what came after, replayed from history; with a label
     * selector only matching objects. */
    (void)snprintf(path, sizeof(path),
                   "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=%s"
                   "&timeoutSeconds=1",
                   rv);
    assert_int_equal(raw(e, path, &body), 200);
    summarize(body.buf, &sum);
    assert_string_equal(sum.buf, "ADDED two;DELETED one;ADDED late;DELETED late;");
    strbuf_reset(&body);
    strbuf_reset(&sum);
    (void)snprintf(path, sizeof(path),
                   "/api/v1/configmaps?watch=1&resourceVersion=%s&timeoutSeconds=1"
                   "&labelSelector=app%%3Dx",
                   rv);
    assert_int_equal(raw(e, path, &body), 200);
    summarize(body.buf, &sum);
    assert_string_equal(sum.buf, "ADDED two;");
    strbuf_reset(&body);
    strbuf_reset(&sum);

    /* Streaming list: ADDED for the state, then the initial-events-end bookmark. */
    assert_int_equal(raw(e,
                         "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true"
                         "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
                         "&timeoutSeconds=1",
                         &body),
                     200);
    summarize(body.buf, &sum);
    assert_string_equal(sum.buf, "ADDED two;BOOKMARK - end;");
    strbuf_reset(&body);
    strbuf_reset(&sum);
    assert_int_equal(raw(e, "/api/v1/configmaps?watch=1&sendInitialEvents=true", &body), 422);
    strbuf_reset(&body);

    /* A revision older than the kept history: 410 Expired. */
    for (int i = 0; i < 70; i++) {
        char name[64];
        (void)snprintf(name, sizeof(name), "{\"metadata\":{\"name\":\"fill-%d\"}}", i);
        assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/configmaps", name, NULL, NULL),
                         201);
    }
    (void)snprintf(path, sizeof(path), "/api/v1/configmaps?watch=1&resourceVersion=%s", rv);
    assert_int_equal(raw(e, path, &body), 410);
    assert_non_null(strstr(body.buf, "\"reason\":\"Expired\""));
    strbuf_release(&body);
    strbuf_release(&sum);
}

/* A PATCH with the given content type. */
static long patch(struct env *e, const char *path, const char *ctype, const char *body, cJSON **ret)
{
    CURL *h = curl_easy_init();
    struct strbuf url = STRBUF_INIT, out = STRBUF_INIT, hdr = STRBUF_INIT;
    struct curl_slist *hdrs;
    long code = 0;

    strbuf_addf(&hdr, "Content-Type: %s", ctype);
    hdrs = curl_slist_append(NULL, hdr.buf);
    strbuf_addf(&url, "%s%s", e->base, path);
    (void)curl_easy_setopt(h, CURLOPT_URL, url.buf);
    (void)curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PATCH");
    (void)curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, &out);
    (void)curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    assert_int_equal(curl_easy_perform(h), CURLE_OK);
    (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (ret)
        *ret = cJSON_Parse(out.buf);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    strbuf_release(&url);
    strbuf_release(&out);
    strbuf_release(&hdr);
    return code;
}

static void test_patch(void **state)
{
    struct env *e = *state;
    const char *cm = "/api/v1/namespaces/default/configmaps/p";
    cJSON *b = NULL;

    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/configmaps",
                          "{\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"1\"}},\"data\":"
                          "{\"k\":\"v\",\"gone\":\"x\"}}",
                          NULL, NULL),
                     201);
    /* Merge patch: merged, null deletes. */
    assert_int_equal(patch(e, cm, "application/merge-patch+json",
                           "{\"metadata\":{\"labels\":{\"b\":\"2\"}},\"data\":{\"gone\":null}}",
                           &b),
                     200);
    expect_str(b, "metadata.labels.a", "1");
    expect_str(b, "metadata.labels.b", "2");
    expect_str(b, "data.k", "v");
    assert_null(str(b, "data.gone"));
    cJSON_Delete(b);
    /* JSON patch, and a failing test operation: 422, nothing changed. */
    assert_int_equal(patch(e, cm, "application/json-patch+json",
                           "[{\"op\":\"replace\",\"path\":\"/data/k\",\"value\":\"w\"}]", &b),
                     200);
    expect_str(b, "data.k", "w");
    cJSON_Delete(b);
    assert_int_equal(patch(e, cm, "application/json-patch+json",
                           "[{\"op\":\"test\",\"path\":\"/data/k\",\"value\":\"v\"},"
                           "{\"op\":\"remove\",\"path\":\"/data/k\"}]",
                           &b),
                     422);
    cJSON_Delete(b);
    assert_int_equal(patch(e, cm, "application/json-patch+json", "{\"op\":\"add\"}", &b), 400);
    cJSON_Delete(b);
    assert_int_equal(http(e, "GET", cm, NULL, &b, NULL), 200);
    expect_str(b, "data.k", "w");
    cJSON_Delete(b);
    /* A resourceVersion in the patch is a precondition. */
    assert_int_equal(patch(e, cm, "application/merge-patch+json",
                           "{\"metadata\":{\"resourceVersion\":\"1\"},\"data\":{\"k\":\"z\"}}", &b),
                     409);
    cJSON_Delete(b);
    /* Strategic merge on a built-in kind: lists merge by their strategy (finalizers are a
     * set), directives apply, a malformed patch is 400 and changes nothing. */
    assert_int_equal(patch(e, cm, "application/strategic-merge-patch+json",
                           "{\"metadata\":{\"annotations\":{\"n\":\"1\"},"
                           "\"finalizers\":[\"x\",\"y\"]}}",
                           &b),
                     200);
    expect_str(b, "metadata.annotations.n", "1");
    expect_str(b, "metadata.finalizers.0", "x");
    cJSON_Delete(b);
    assert_int_equal(patch(e, cm, "application/strategic-merge-patch+json",
                           "{\"metadata\":{\"finalizers\":[\"z\"],"
                           "\"$deleteFromPrimitiveList/finalizers\":[\"x\",\"y\"]}}",
                           &b),
                     200);
    expect_str(b, "metadata.finalizers.0", "z");
    assert_null(str(b, "metadata.finalizers.1"));
    cJSON_Delete(b);
    assert_int_equal(patch(e, cm, "application/strategic-merge-patch+json",
                           "{\"data\":{\"k\":\"q\"},\"metadata\":{\"$patch\":\"merge\"}}", &b),
                     400);
    expect_str(b, "reason", "BadRequest");
    expect_str(b, "message", "metadata: unknown patch type \"merge\" in an object");
    cJSON_Delete(b);
    assert_int_equal(patch(e, cm, "application/strategic-merge-patch+json",
                           "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[\"z\"]}}", &b),
                     200);
    expect_str(b, "data.k", "w");
    assert_null(str(b, "metadata.finalizers.0"));
    cJSON_Delete(b);
    assert_int_equal(patch(e, cm, "application/apply-patch+yaml", "{}", &b), 415);
    cJSON_Delete(b);
    assert_int_equal(patch(e, "/api/v1/namespaces/default/configmaps/none",
                           "application/merge-patch+json", "{}", &b),
                     404);
    cJSON_Delete(b);
}

/* The cases a review found (each failed before its fix). */
static void test_review_cases(void **state)
{
    struct env *e = *state;
    cJSON *b = NULL;
    static const char crd_fmt[] =
        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
        "\"metadata\":{\"name\":\"%s.%s\"},\"spec\":{\"group\":\"%s\",\"names\":{\"kind\":"
        "\"%s\",\"listKind\":\"%sList\",\"plural\":\"%s\",\"singular\":\"x\"},\"scope\":"
        "\"%s\",\"versions\":[{\"name\":\"%s\",\"served\":true,\"storage\":true,\"schema\":"
        "{\"openAPIV3Schema\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":"
        "true}}}]}}";
    char crd[1024];
    const char *crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

    /* A CRD may not take over a built-in resource's storage, under any version or as "core". */
    (void)snprintf(crd, sizeof(crd), crd_fmt, "pods", "core", "core", "Pod", "Pod", "pods",
                   "Namespaced", "v1");
    assert_int_equal(http(e, "POST", crds, crd, &b, NULL), 422);
    cJSON_Delete(b);
    (void)snprintf(crd, sizeof(crd), crd_fmt, "leases", "coordination.k8s.io",
                   "coordination.k8s.io", "Lease", "Lease", "leases", "Namespaced", "v2");
    assert_int_equal(http(e, "POST", crds, crd, &b, NULL), 422);
    cJSON_Delete(b);

    /* A failed CRD write changes nothing served. */
    (void)snprintf(crd, sizeof(crd), crd_fmt, "foos", "example.com", "example.com", "Foo", "Foo",
                   "foos", "Namespaced", "v1");
    assert_int_equal(http(e, "POST", crds, crd, NULL, NULL), 201);
    (void)snprintf(crd, sizeof(crd), crd_fmt, "foos", "example.com", "example.com", "Foo", "Foo",
                   "foos", "Cluster", "v1");
    assert_int_equal(http(e, "POST", crds, crd, NULL, NULL), 409);
    assert_int_equal(http(e, "GET", "/apis/example.com/v1", NULL, &b, NULL), 200);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(
        cJSON_GetArrayItem(cJSON_GetObjectItem(b, "resources"), 0), "namespaced")));
    cJSON_Delete(b);

    /* Custom resources need a name; namespaced objects need an existing namespace. */
    assert_int_equal(http(e, "POST", "/apis/example.com/v1/namespaces/default/foos",
                          "{\"metadata\":{}}", &b, NULL),
                     422);
    expect_str(b, "details.causes.0.field", "metadata.name");
    cJSON_Delete(b);
    assert_int_equal(
        http(e, "POST", "/api/v1/configmaps", "{\"metadata\":{\"name\":\"x\"}}", NULL, NULL), 404);
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/nowhere/configmaps",
                          "{\"metadata\":{\"name\":\"x\"}}", &b, NULL),
                     404);
    expect_str(b, "message", "namespaces \"nowhere\" not found");
    cJSON_Delete(b);

    /* Removing the last finalizer of an object being deleted completes the deletion. */
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/configmaps",
                          "{\"metadata\":{\"name\":\"fin\",\"finalizers\":[\"x/y\"]}}", NULL, NULL),
                     201);
    assert_int_equal(
        http(e, "DELETE", "/api/v1/namespaces/default/configmaps/fin", NULL, NULL, NULL), 202);
    assert_int_equal(patch(e, "/api/v1/namespaces/default/configmaps/fin",
                           "application/merge-patch+json", "{\"metadata\":{\"finalizers\":null}}",
                           NULL),
                     200);
    assert_int_equal(http(e, "GET", "/api/v1/namespaces/default/configmaps/fin", NULL, NULL, NULL),
                     404);

    /* dryRun is refused rather than ignored; delete preconditions are honoured. */
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/configmaps",
                          "{\"metadata\":{\"name\":\"keep\"}}", NULL, NULL),
                     201);
    assert_int_equal(http(e, "DELETE", "/api/v1/namespaces/default/configmaps/keep?dryRun=All",
                          NULL, NULL, NULL),
                     400);
    assert_int_equal(http(e, "DELETE", "/api/v1/namespaces/default/configmaps/keep",
                          "{\"preconditions\":{\"uid\":\"wrong\"}}", &b, NULL),
                     409);
    cJSON_Delete(b);
    assert_int_equal(http(e, "GET", "/api/v1/namespaces/default/configmaps/keep", NULL, NULL, NULL),
                     200);

    /* deletecollection with a selector deletes just what it selects. */
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/configmaps",
                          "{\"metadata\":{\"name\":\"dc1\",\"labels\":{\"batch\":\"y\"}}}", NULL,
                          NULL),
                     201);
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/configmaps",
                          "{\"metadata\":{\"name\":\"dc2\",\"labels\":{\"batch\":\"y\"}}}", NULL,
                          NULL),
                     201);
    assert_int_equal(http(e, "DELETE", "/api/v1/namespaces/default/configmaps?labelSelector=batch",
                          NULL, &b, NULL),
                     200);
    expect_str(b, "status", "Success");
    cJSON_Delete(b);
    assert_int_equal(http(e, "GET", "/api/v1/namespaces/default/configmaps/dc1", NULL, NULL, NULL),
                     404);
    assert_int_equal(http(e, "GET", "/api/v1/namespaces/default/configmaps/dc2", NULL, NULL, NULL),
                     404);
    assert_int_equal(http(e, "GET", "/api/v1/namespaces/default/configmaps/keep", NULL, NULL, NULL),
                     200);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_discovery_and_health, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crud, setup, teardown),
        cmocka_unit_test_setup_teardown(test_status_and_finalizers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crds_served_and_persisted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_patch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_review_cases, setup, teardown),
    };
    int r;

    codec_init();
    CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == 0);
    r = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return r;
}
