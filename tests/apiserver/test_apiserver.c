/*
 * Tests for apiserver/apiserver: the REST verbs over a real HTTP server and SQLite store,
 * driven by libcurl. Status codes, reasons and bodies follow reference kubernetes-api.md
 * sections 1-3: discovery, create (201, generateName, 409, 422 with causes, namespace rules),
 * get (404 message), list (selectors, paging), update (409 on a stale resourceVersion, the
 * status subresource), delete (finalizers, namespace cascade), and CRDs served at once after
 * they are created, surviving a restart of the server. The fixture is apienv.h's.
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "api/api.h"
#include "api/crd.h"
#include "apiserver/apienv.h"
#include "apiserver/apiserver.h"
#include "apiserver/store.h"
#include "apiserver/store_cache.h"
#include "apiserver/store_sqlite.h"
#include "apiserver/tokens.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "http/server.h"
#include "testutil.h"

/* This file's requests, over apienv.h's: no Accept header of their own. */
static long http_as(struct env *e, const char *token, const char *method, const char *path,
                    const char *body, cJSON **ret, struct strbuf *warnings)
{
    return req_as(e, token, method, path, NULL, body, ret, warnings);
}

static long http(struct env *e, const char *method, const char *path, const char *body, cJSON **ret,
                 struct strbuf *warnings)
{
    return req(e, method, path, NULL, body, ret, warnings);
}

static long http_raw(struct env *e, const char *path, struct strbuf *out)
{
    return req_raw(e, path, out);
}

/* POST path with body and an Accept header; the answer as text into out. */
static long post_raw(struct env *e, const char *path, const char *accept, const char *body,
                     struct strbuf *out)
{
    CURL *h = curl_easy_init();
    struct strbuf url = STRBUF_INIT, acc = STRBUF_INIT;
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    long code = 0;

    strbuf_addf(&acc, "Accept: %s", accept);
    hdrs = curl_slist_append(hdrs, acc.buf);
    strbuf_addf(&url, "%s%s", e->base, path);
    (void)curl_easy_setopt(h, CURLOPT_URL, url.buf);
    (void)curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    (void)curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
    (void)curl_easy_setopt(h, CURLOPT_TIMEOUT, 20L);
    assert_int_equal(curl_easy_perform(h), CURLE_OK);
    (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    strbuf_release(&url);
    strbuf_release(&acc);
    return code;
}

static const char *str(const cJSON *o, const char *path)
{
    return cJSON_GetStringValue(at(o, path));
}

static void test_discovery_and_health(void **state)
{
    struct env *e = *state;
    cJSON *b = NULL;

    assert_int_equal(http(e, "GET", "/healthz", NULL, NULL, NULL), 200);
    {
        /* /metrics counts served requests in Prometheus text. */
        struct strbuf raw = STRBUF_INIT;
        assert_int_equal(http(e, "GET", "/api/v1/namespaces", NULL, NULL, NULL), 200);
        assert_int_equal(http_raw(e, "/metrics", &raw), 200);
        assert_non_null(strstr(raw.buf,
                               "apiserver_request_total{verb=\"LIST\",group=\"\","
                               "version=\"v1\",resource=\"namespaces\",subresource=\"\","
                               "scope=\"cluster\",component=\"apiserver\",code=\"200\"} 1\n"));
        strbuf_release(&raw);
    }
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
    assert_int_equal(http(e, "DELETE", "/api/v1/nodes/n1", NULL, &b, NULL), 200);
    assert_non_null(str(b, "metadata.deletionTimestamp"));
    cJSON_Delete(b);
    assert_int_equal(http(e, "GET", "/api/v1/nodes/n1", NULL, &b, NULL), 200);
    assert_non_null(str(b, "metadata.deletionTimestamp"));
    cJSON_Delete(b);

    /* Deleting a namespace marks it Terminating, refuses new content, deletes what is in it
     * and then the namespace (lifecycle.h's worker: polled with a deadline). */
    assert_int_equal(
        http(e, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"team\"}}", &b, NULL), 201);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(
                            cJSON_GetObjectItem(cJSON_GetObjectItem(b, "spec"), "finalizers"), 0)),
                        "kubernetes");
    expect_str(b, "status.phase", "Active");
    cJSON_Delete(b);
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/team/configmaps",
                          "{\"metadata\":{\"name\":\"x\"}}", NULL, NULL),
                     201);
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/team/pods",
                          "{\"metadata\":{\"name\":\"bound\"},\"spec\":{\"nodeName\":\"n1\","
                          "\"terminationGracePeriodSeconds\":1,\"containers\":[{\"name\":\"c\","
                          "\"image\":\"i\"}]}}",
                          NULL, NULL),
                     201);
    assert_int_equal(http(e, "DELETE", "/api/v1/namespaces/team", NULL, &b, NULL), 200);
    expect_str(b, "status.phase", "Terminating");
    assert_non_null(str(b, "metadata.deletionTimestamp"));
    cJSON_Delete(b);
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/team/configmaps",
                          "{\"metadata\":{\"name\":\"y\"}}", &b, NULL),
                     403);
    expect_str(b, "message",
               "configmaps \"y\" is forbidden: unable to create new content in namespace team "
               "because it is being terminated");
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "details"), "causes"), 0),
            "reason")),
        "NamespaceTerminating");
    cJSON_Delete(b);
    for (int i = 0; i < 200 && http(e, "GET", "/api/v1/namespaces/team", NULL, NULL, NULL) == 200;
         i++)
        (void)nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    assert_int_equal(http(e, "GET", "/api/v1/namespaces/team", NULL, NULL, NULL), 404);
    assert_int_equal(http(e, "GET", "/api/v1/namespaces/team/configmaps/x", NULL, NULL, NULL), 404);
    assert_int_equal(http(e, "GET", "/api/v1/namespaces/team/pods/bound", NULL, NULL, NULL), 404);
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
    return req_raw(e, path, out);
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

    /* A revision older than the kept history: as kube's watch cache, 200 and one ERROR event
     * carrying the 410 Expired Status, then the end of the stream. */
    for (int i = 0; i < 70; i++) {
        char name[64];
        (void)snprintf(name, sizeof(name), "{\"metadata\":{\"name\":\"fill-%d\"}}", i);
        assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/configmaps", name, NULL, NULL),
                         201);
    }
    (void)snprintf(path, sizeof(path), "/api/v1/configmaps?watch=1&resourceVersion=%s", rv);
    assert_int_equal(raw(e, path, &body), 200);
    assert_non_null(strstr(body.buf, "{\"type\":\"ERROR\",\"object\":{"));
    assert_non_null(strstr(body.buf, "\"reason\":\"Expired\""));
    assert_non_null(strstr(body.buf, "\"code\":410"));
    assert_null(strchr(strchr(body.buf, '\n') + 1, '\n')); /* one event only */
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

/* The writes of test_node_watch, once its watches are registered. */
static void *pod_writer(void *ud)
{
    struct env *e = ud;
    static const char pod[] = "{\"metadata\":{\"name\":\"%s\"},\"spec\":{%s\"containers\":[{"
                              "\"name\":\"c\",\"image\":\"i\"}]}}";
    char body[256];

    (void)snprintf(body, sizeof(body), pod, "other", "\"nodeName\":\"n2\",");
    CHECK(http(e, "POST", "/api/v1/namespaces/default/pods", body, NULL, NULL) == 201);
    (void)snprintf(body, sizeof(body), pod, "p", "");
    CHECK(http(e, "POST", "/api/v1/namespaces/default/pods", body, NULL, NULL) == 201);
    CHECK(http(e, "POST", "/api/v1/namespaces/default/pods/p/binding",
               "{\"metadata\":{\"name\":\"p\"},\"target\":{\"kind\":\"Node\",\"name\":\"n1\"}}",
               NULL, NULL) == 201);
    CHECK(patch(e, "/api/v1/namespaces/default/pods/p", "application/merge-patch+json",
                "{\"metadata\":{\"labels\":{\"x\":\"1\"}}}", NULL) == 200);
    /* Forced: a graceful delete would add a MODIFIED event and wait out the grace period. */
    CHECK(http(e, "DELETE", "/api/v1/namespaces/default/pods/other?gracePeriodSeconds=0", NULL,
               NULL, NULL) == 200);
    CHECK(http(e, "DELETE", "/api/v1/namespaces/default/pods/p?gracePeriodSeconds=0", NULL, NULL,
               NULL) == 200);
    return NULL;
}

struct node_watch {
    const char *path;
    const char *until; /* the transfer ends once the body has this */
    struct strbuf body;
    CURL *h;
};

static size_t on_node_watch(char *p, size_t size, size_t n, void *ud)
{
    struct node_watch *w = ud;

    strbuf_add(&w->body, p, size * n);
    return strstr(w->body.buf, w->until) ? 0 : size * n;
}

/*
 * Pod watches by node, as kubelets open them, served from the hub's index: the watch of n1 sees
 * its pods only, a pod bound to n1 arrives as ADDED and leaves the unscheduled pods' watch
 * (spec.nodeName=) as DELETED; n2's pod reaches neither.
 */
static void test_node_watch(void **state)
{
    struct env *e = *state;
    struct node_watch w[2] = {
        {"/api/v1/pods?watch=1&resourceVersion=0&fieldSelector=spec.nodeName%3Dn1",
         "\"DELETED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
         "\"p\"",
         STRBUF_INIT, NULL},
        {"/api/v1/pods?watch=1&resourceVersion=0&fieldSelector=spec.nodeName%3D", "\"DELETED\"",
         STRBUF_INIT, NULL},
    };
    struct strbuf sum = STRBUF_INIT, url[2] = {STRBUF_INIT, STRBUF_INIT};
    CURLM *m = curl_multi_init();
    pthread_t writer;
    bool started = false;
    int running = 2;

    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/pods",
                          "{\"metadata\":{\"name\":\"seed\"},\"spec\":{\"nodeName\":\"n1\","
                          "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}",
                          NULL, NULL),
                     201);
    for (size_t i = 0; i < 2; i++) {
        w[i].h = curl_easy_init();
        strbuf_addf(&url[i], "%s%s", e->base, w[i].path);
        (void)curl_easy_setopt(w[i].h, CURLOPT_URL, url[i].buf);
        (void)curl_easy_setopt(w[i].h, CURLOPT_WRITEFUNCTION, on_node_watch);
        (void)curl_easy_setopt(w[i].h, CURLOPT_WRITEDATA, &w[i]);
        (void)curl_easy_setopt(w[i].h, CURLOPT_TIMEOUT, 60L);
        (void)curl_multi_add_handle(m, w[i].h);
    }
    while (running > 0) {
        (void)curl_multi_perform(m, &running);
        /* Both watches answered (the n1 one with its seed): they are registered. */
        if (!started && strstr(w[0].body.buf ? w[0].body.buf : "", "\"seed\"") &&
            w[1].body.len == 0) {
            long code = 0;
            (void)curl_easy_getinfo(w[1].h, CURLINFO_RESPONSE_CODE, &code);
            if (code == 200) {
                CHECK(pthread_create(&writer, NULL, pod_writer, e) == 0);
                started = true;
            }
        }
        (void)curl_multi_poll(m, NULL, 0, 100, NULL);
    }
    assert_true(started);
    assert_int_equal(pthread_join(writer, NULL), 0);
    summarize(w[0].body.buf, &sum);
    assert_string_equal(sum.buf, "ADDED seed;ADDED p;MODIFIED p;DELETED p;");
    strbuf_reset(&sum);
    summarize(w[1].body.buf, &sum);
    assert_string_equal(sum.buf, "ADDED p;DELETED p;");
    for (size_t i = 0; i < 2; i++) {
        (void)curl_multi_remove_handle(m, w[i].h);
        curl_easy_cleanup(w[i].h);
        strbuf_release(&w[i].body);
        strbuf_release(&url[i]);
    }
    (void)curl_multi_cleanup(m);
    strbuf_release(&sum);
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
    /* Server-side apply is tested in test_apply.c; CBOR is not served. */
    assert_int_equal(patch(e, cm, "application/apply-patch+cbor", "{}", &b), 415);
    cJSON_Delete(b);
    assert_int_equal(patch(e, "/api/v1/namespaces/default/configmaps/none",
                           "application/merge-patch+json", "{}", &b),
                     404);
    cJSON_Delete(b);
}

/* The cases a review found (each failed before its fix). */
/* Patches from several clients at once: each adds its own keys to the same ConfigMap. */
struct patcher {
    struct env *e;
    int id;
    int failed; /* responses other than 200 */
};

#define PATCHES_PER_CLIENT 100

static void *patcher_run(void *ud)
{
    struct patcher *p = ud;
    CURL *h = curl_easy_init();
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/merge-patch+json");
    struct strbuf url = STRBUF_INIT, body = STRBUF_INIT, out = STRBUF_INIT;

    strbuf_addf(&url, "%s/api/v1/namespaces/default/configmaps/race", p->e->base);
    for (int i = 0; i < PATCHES_PER_CLIENT; i++) {
        long code = 0;

        strbuf_reset(&body);
        strbuf_reset(&out);
        strbuf_addf(&body, "{\"data\":{\"c%d-%d\":\"x\"}}", p->id, i);
        (void)curl_easy_setopt(h, CURLOPT_URL, url.buf);
        (void)curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PATCH");
        (void)curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
        (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
        (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, &out);
        (void)curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.buf);
        if (curl_easy_perform(h) != CURLE_OK ||
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK || code != 200)
            p->failed++;
    }
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    strbuf_release(&url);
    strbuf_release(&body);
    strbuf_release(&out);
    return NULL;
}

/*
 * Writes without a resourceVersion are unconditional: racing each other they all succeed (no
 * 409 the client did not ask for), and a patch is applied to the object it lands on, so no
 * client's change is lost. A stale resourceVersion the client gives is still a conflict.
 */
static void test_unconditional_writes_race(void **state)
{
    struct env *e = *state;
    struct patcher p[3];
    pthread_t t[3];
    cJSON *b = NULL;

    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/configmaps",
                          "{\"metadata\":{\"name\":\"race\"},\"data\":{}}", NULL, NULL),
                     201);
    for (int i = 0; i < 3; i++) {
        p[i] = (struct patcher){.e = e, .id = i};
        assert_int_equal(pthread_create(&t[i], NULL, patcher_run, &p[i]), 0);
    }
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(p[i].failed, 0);
    }
    assert_int_equal(http(e, "GET", "/api/v1/namespaces/default/configmaps/race", NULL, &b, NULL),
                     200);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(b, "data")), 3 * PATCHES_PER_CLIENT);
    cJSON_Delete(b);
    assert_int_equal(http(e, "PUT", "/api/v1/namespaces/default/configmaps/race",
                          "{\"metadata\":{\"name\":\"race\",\"resourceVersion\":\"1\"}}", NULL,
                          NULL),
                     409);
}

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
        http(e, "DELETE", "/api/v1/namespaces/default/configmaps/fin", NULL, NULL, NULL), 200);
    assert_int_equal(patch(e, "/api/v1/namespaces/default/configmaps/fin",
                           "application/merge-patch+json", "{\"metadata\":{\"finalizers\":null}}",
                           NULL),
                     200);
    assert_int_equal(http(e, "GET", "/api/v1/namespaces/default/configmaps/fin", NULL, NULL, NULL),
                     404);

    /* Delete preconditions are honoured. */
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/configmaps",
                          "{\"metadata\":{\"name\":\"keep\"}}", NULL, NULL),
                     201);
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

/* dryRun=All runs every check and answers as a real write would, but stores nothing. */
static void test_dry_run(void **state)
{
    struct env *e = *state;
    const char *cm = "/api/v1/namespaces/default/configmaps";
    cJSON *b = NULL;

    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/configmaps?dryRun=All",
                          "{\"metadata\":{\"name\":\"d\"},\"data\":{\"k\":\"1\"}}", &b, NULL),
                     201);
    assert_non_null(str(b, "metadata.uid"));
    assert_null(str(b, "metadata.resourceVersion"));
    cJSON_Delete(b);
    assert_int_equal(http(e, "GET", "/api/v1/namespaces/default/configmaps/d", NULL, NULL, NULL),
                     404);
    /* Still validated, still refused when the name is taken. */
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/configmaps?dryRun=All",
                          "{\"metadata\":{\"name\":\"d\"},\"data\":{\"bad key\":\"1\"}}", NULL,
                          NULL),
                     422);
    assert_int_equal(
        http(e, "POST", cm, "{\"metadata\":{\"name\":\"d\"},\"data\":{\"k\":\"1\"}}", &b, NULL),
        201);
    char rv[32];
    (void)snprintf(rv, sizeof(rv), "%s", str(b, "metadata.resourceVersion"));
    cJSON_Delete(b);
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/configmaps?dryRun=All",
                          "{\"metadata\":{\"name\":\"d\"}}", NULL, NULL),
                     409);

    assert_int_equal(http(e, "PUT", "/api/v1/namespaces/default/configmaps/d?dryRun=All",
                          "{\"metadata\":{\"name\":\"d\"},\"data\":{\"k\":\"2\"}}", &b, NULL),
                     200);
    expect_str(b, "data.k", "2");
    expect_str(b, "metadata.resourceVersion", rv);
    cJSON_Delete(b);
    assert_int_equal(patch(e, "/api/v1/namespaces/default/configmaps/d?dryRun=All",
                           "application/merge-patch+json", "{\"data\":{\"k\":\"3\"}}", &b),
                     200);
    expect_str(b, "data.k", "3");
    cJSON_Delete(b);
    assert_int_equal(
        http(e, "DELETE", "/api/v1/namespaces/default/configmaps/d?dryRun=All", NULL, &b, NULL),
        200);
    expect_str(b, "status", "Success");
    cJSON_Delete(b);
    assert_int_equal(http(e, "DELETE", "/api/v1/namespaces/default/configmaps/d",
                          "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"dryRun\":[\"All\"]}",
                          NULL, NULL),
                     200);
    assert_int_equal(
        http(e, "DELETE", "/api/v1/namespaces/default/configmaps?dryRun=All", NULL, NULL, NULL),
        200);
    /* After all of that the stored object is the one created. */
    assert_int_equal(http(e, "GET", "/api/v1/namespaces/default/configmaps/d", NULL, &b, NULL),
                     200);
    expect_str(b, "data.k", "1");
    expect_str(b, "metadata.resourceVersion", rv);
    cJSON_Delete(b);

    /* Evicting or binding a pod in dry run leaves it as it was. */
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/pods",
                          "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":"
                          "\"c\",\"image\":\"i\"}]}}",
                          NULL, NULL),
                     201);
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/pods/p/binding?dryRun=All",
                          "{\"metadata\":{\"name\":\"p\"},\"target\":{\"kind\":\"Node\","
                          "\"name\":\"n1\"}}",
                          NULL, NULL),
                     201);
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/pods/p/eviction?dryRun=All",
                          "{\"metadata\":{\"name\":\"p\"}}", NULL, NULL),
                     201);
    assert_int_equal(http(e, "GET", "/api/v1/namespaces/default/pods/p", NULL, &b, NULL), 200);
    assert_null(str(b, "spec.nodeName"));
    cJSON_Delete(b);

    /* A watch from a revision the server has not reached is refused, not silently short. */
    assert_int_equal(http(e, "GET",
                          "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=999999",
                          NULL, &b, NULL),
                     504);
    expect_str(b, "details.causes.0.reason", "ResourceVersionTooLarge");
    cJSON_Delete(b);

    /* "All" is the only dry-run value. */
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/configmaps?dryRun=Bogus",
                          "{\"metadata\":{\"name\":\"x\"}}", &b, NULL),
                     422);
    expect_str(b, "message",
               "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: \"Bogus\": "
               "supported values: \"All\"");
    cJSON_Delete(b);
}

/* Secrets: stringData folded into data, base64 and the type's keys checked, immutability. */
static void test_secrets(void **state)
{
    struct env *e = *state;
    const char *col = "/api/v1/namespaces/default/secrets";
    cJSON *b = NULL;

    assert_int_equal(http(e, "POST", col,
                          "{\"metadata\":{\"name\":\"s\"},\"data\":{\"a\":\"eA==\"},"
                          "\"stringData\":{\"b\":\"hello\",\"a\":\"yz\"}}",
                          &b, NULL),
                     201);
    assert_json_eq(cJSON_GetObjectItem(b, "data"), "{\"a\":\"eXo=\",\"b\":\"aGVsbG8=\"}");
    assert_null(cJSON_GetObjectItem(b, "stringData"));
    expect_str(b, "type", "Opaque");
    cJSON_Delete(b);
    assert_int_equal(http(e, "POST", col,
                          "{\"metadata\":{\"name\":\"bad\"},\"data\":{\"k\":\"not base64\"}}", &b,
                          NULL),
                     422);
    expect_str(b, "details.causes.0.field", "data[k]");
    cJSON_Delete(b);
    assert_int_equal(http(e, "POST", col,
                          "{\"metadata\":{\"name\":\"tls\"},\"type\":\"kubernetes.io/tls\","
                          "\"data\":{\"tls.crt\":\"YQ==\"}}",
                          &b, NULL),
                     422);
    expect_str(b, "message", "Secret \"tls\" is invalid: data[tls.key]: Required value");
    cJSON_Delete(b);
    /* The type cannot change, nor the data of an immutable secret. */
    assert_int_equal(http(e, "PUT", "/api/v1/namespaces/default/secrets/s",
                          "{\"metadata\":{\"name\":\"s\"},\"type\":\"other\"}", &b, NULL),
                     422);
    expect_str(b, "details.causes.0.field", "type");
    cJSON_Delete(b);
    assert_int_equal(http(e, "PUT", "/api/v1/namespaces/default/secrets/s",
                          "{\"metadata\":{\"name\":\"s\"},\"immutable\":true,\"data\":{}}", NULL,
                          NULL),
                     200);
    assert_int_equal(http(e, "PUT", "/api/v1/namespaces/default/secrets/s",
                          "{\"metadata\":{\"name\":\"s\"},\"immutable\":true,\"data\":{\"x\":"
                          "\"eA==\"}}",
                          &b, NULL),
                     422);
    expect_str(b, "message",
               "Secret \"s\" is invalid: data: Forbidden: field is immutable when `immutable` is "
               "set");
    cJSON_Delete(b);
}

static void expect_service(struct env *e, const char *name, const char *spec, long code,
                           const char *field, const char *want)
{
    char body[512];
    cJSON *b = NULL;

    (void)snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"%s\"},\"spec\":%s}", name, spec);
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/services", body, &b, NULL), code);
    if (field)
        expect_str(b, field, want);
    cJSON_Delete(b);
}

/* Services: cluster IPs and node ports allocated, kept, freed; requested ones checked. */
static void test_services(void **state)
{
    struct env *e = *state;
    const char *web = "{\"selector\":{\"app\":\"web\"},\"ports\":[{\"port\":80}]}";
    cJSON *b = NULL;

    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/services",
                          "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"ports\":[{\"port\":80}]}}",
                          &b, NULL),
                     201);
    assert_json_eq(cJSON_GetObjectItem(b, "spec"),
                   "{\"ports\":[{\"port\":80,\"protocol\":\"TCP\",\"targetPort\":80}],"
                   "\"clusterIP\":\"10.96.0.1\",\"clusterIPs\":[\"10.96.0.1\"],\"type\":"
                   "\"ClusterIP\",\"sessionAffinity\":\"None\",\"ipFamilies\":[\"IPv4\"],"
                   "\"ipFamilyPolicy\":\"SingleStack\",\"internalTrafficPolicy\":\"Cluster\"}");
    cJSON_Delete(b);
    expect_service(e, "b", web, 201, "spec.clusterIP", "10.96.0.2");
    expect_service(e, "c", "{\"clusterIP\":\"10.96.0.2\",\"ports\":[{\"port\":1}]}", 422, "message",
                   "Service \"c\" is invalid: spec.clusterIPs[0]: Invalid value: \"10.96.0.2\": "
                   "failed to allocate IP 10.96.0.2: provided IP is already allocated");
    expect_service(e, "c", "{\"clusterIP\":\"192.168.0.1\",\"ports\":[{\"port\":1}]}", 422,
                   "details.causes.0.field", "spec.clusterIPs[0]");
    expect_service(e, "c", "{\"clusterIP\":\"10.96.0.9\",\"ports\":[{\"port\":1}]}", 201,
                   "spec.clusterIP", "10.96.0.9");
    expect_service(e, "h", "{\"clusterIP\":\"None\"}", 201, "spec.clusterIP", "None");
    expect_service(e, "np", "{\"type\":\"NodePort\",\"ports\":[{\"port\":80}]}", 201,
                   "spec.clusterIP", "10.96.0.3");
    assert_int_equal(http(e, "GET", "/api/v1/namespaces/default/services/np", NULL, &b, NULL), 200);
    assert_int_equal(
        cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "spec"), "ports"), 0),
            "nodePort")
            ->valueint,
        30000);
    cJSON_Delete(b);
    expect_service(e, "np2", "{\"type\":\"NodePort\",\"ports\":[{\"port\":80,\"nodePort\":30000}]}",
                   422, "message",
                   "Service \"np2\" is invalid: spec.ports[0].nodePort: Invalid value: 30000: "
                   "provided port is already allocated");
    expect_service(e, "np2", "{\"type\":\"NodePort\",\"ports\":[{\"port\":80,\"nodePort\":80}]}",
                   422, "details.causes.0.field", "spec.ports[0].nodePort");
    expect_service(e, "noports", "{}", 422, "details.causes.0.field", "spec.ports");
    expect_service(e, "two", "{\"ports\":[{\"port\":80},{\"port\":81}]}", 422,
                   "details.causes.0.field", "spec.ports[0].name");

    /* An update that leaves the allocated values out keeps them; changing the IP is refused. */
    assert_int_equal(http(e, "PUT", "/api/v1/namespaces/default/services/np",
                          "{\"metadata\":{\"name\":\"np\"},\"spec\":{\"type\":\"NodePort\","
                          "\"ports\":[{\"port\":80}],\"selector\":{\"app\":\"x\"}}}",
                          &b, NULL),
                     200);
    expect_str(b, "spec.clusterIP", "10.96.0.3");
    expect_str(b, "spec.selector.app", "x");
    assert_int_equal(
        cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "spec"), "ports"), 0),
            "nodePort")
            ->valueint,
        30000);
    cJSON_Delete(b);
    assert_int_equal(http(e, "PUT", "/api/v1/namespaces/default/services/a",
                          "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"clusterIP\":\"10.96.0.50\","
                          "\"ports\":[{\"port\":80}]}}",
                          &b, NULL),
                     422);
    expect_str(b, "message",
               "Service \"a\" is invalid: spec.clusterIPs[0]: Invalid value: \"10.96.0.50\": may "
               "not change once set");
    cJSON_Delete(b);
    /* A node port the request names is never handed out again in the same request, whether
     * named in the manifest or kept from before; naming one twice is refused. */
    expect_service(e, "np3",
                   "{\"type\":\"NodePort\",\"ports\":[{\"name\":\"a\",\"port\":1,\"nodePort\":"
                   "30001},{\"name\":\"b\",\"port\":2}]}",
                   201, NULL, NULL);
    assert_int_equal(http(e, "GET", "/api/v1/namespaces/default/services/np3", NULL, &b, NULL),
                     200);
    assert_int_equal(
        cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "spec"), "ports"), 1),
            "nodePort")
            ->valueint,
        30002);
    cJSON_Delete(b);
    assert_int_equal(http(e, "PUT", "/api/v1/namespaces/default/services/np",
                          "{\"metadata\":{\"name\":\"np\"},\"spec\":{\"type\":\"NodePort\","
                          "\"ports\":[{\"name\":\"a\",\"port\":80},{\"name\":\"b\",\"port\":81}]}}",
                          &b, NULL),
                     200);
    assert_int_equal(
        cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "spec"), "ports"), 0),
            "nodePort")
            ->valueint,
        30000);
    assert_int_equal(
        cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "spec"), "ports"), 1),
            "nodePort")
            ->valueint,
        30003);
    cJSON_Delete(b);
    expect_service(e, "np4",
                   "{\"type\":\"NodePort\",\"ports\":[{\"name\":\"a\",\"port\":1,\"nodePort\":"
                   "30100},{\"name\":\"b\",\"port\":2,\"nodePort\":30100}]}",
                   422, "details.causes.0.reason", "FieldValueDuplicate");
    /* A deleted service's address is free again. */
    assert_int_equal(http(e, "DELETE", "/api/v1/namespaces/default/services/a", NULL, NULL, NULL),
                     200);
    expect_service(e, "d", web, 201, "spec.clusterIP", "10.96.0.1");
    /* Endpoints are stored as given. */
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/endpoints",
                          "{\"metadata\":{\"name\":\"d\"},\"subsets\":[{\"addresses\":[{\"ip\":"
                          "\"10.0.0.1\"}],\"ports\":[{\"port\":80}]}]}",
                          NULL, NULL),
                     201);
}

static void priority_class(struct env *e, const char *name, const char *rest, long code,
                           const char *message)
{
    char body[512];
    cJSON *b = NULL;

    (void)snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"%s\"},%s}", name, rest);
    assert_int_equal(http(e, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses", body, &b, NULL),
                     code);
    if (message)
        expect_str(b, "message", message);
    cJSON_Delete(b);
}

static void pod_with(struct env *e, const char *name, const char *spec, long code, const char *path,
                     const char *want)
{
    char body[512];
    cJSON *b = NULL;

    (void)snprintf(body, sizeof(body),
                   "{\"metadata\":{\"name\":\"%s\"},\"spec\":{%s\"containers\":[{\"name\":\"c\","
                   "\"image\":\"i\"}]}}",
                   name, spec);
    assert_int_equal(http(e, "POST", "/api/v1/namespaces/default/pods", body, &b, NULL), code);
    if (path && code == 201) {
        char *got =
            cJSON_PrintUnformatted(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "spec"), path));
        assert_non_null(got);
        assert_string_equal(got, want);
        cJSON_free(got);
    } else if (path) {
        expect_str(b, path, want);
    }
    cJSON_Delete(b);
}

/* PriorityClasses and the pod priority they give (the Priority admission plugin). */
static void test_priority_classes(void **state)
{
    struct env *e = *state;
    cJSON *b = NULL;

    assert_int_equal(http(e, "GET",
                          "/apis/scheduling.k8s.io/v1/priorityclasses/"
                          "system-node-critical",
                          NULL, &b, NULL),
                     200);
    assert_int_equal(cJSON_GetObjectItem(b, "value")->valueint, 2000001000);
    cJSON_Delete(b);
    priority_class(e, "system-mine", "\"value\":10", 422,
                   "PriorityClass.scheduling.k8s.io \"system-mine\" is invalid: metadata.name: "
                   "Forbidden: priority class names with 'system-' prefix are reserved for system "
                   "use only. error: system-mine is not a known system priority class");
    priority_class(e, "huge", "\"value\":1000000001", 422,
                   "PriorityClass.scheduling.k8s.io \"huge\" is invalid: value: Forbidden: "
                   "maximum allowed value of a user defined priority is 1000000000");
    priority_class(e, "novalue", "\"description\":\"x\"", 422, NULL);
    priority_class(e, "koord-batch", "\"value\":5000", 201, NULL);
    assert_int_equal(http(e, "PUT", "/apis/scheduling.k8s.io/v1/priorityclasses/koord-batch",
                          "{\"metadata\":{\"name\":\"koord-batch\"},\"value\":5001}", &b, NULL),
                     422);
    expect_str(b, "details.causes.0.field", "value");
    cJSON_Delete(b);

    /* Without a default class a pod gets priority 0; a named class gives its value. */
    pod_with(e, "p0", "", 201, "priority", "0");
    pod_with(e, "pb", "\"priorityClassName\":\"koord-batch\",", 201, "priority", "5000");
    pod_with(e, "pm", "\"priorityClassName\":\"missing\",", 403, "message",
             "pods \"pm\" is forbidden: no PriorityClass with name missing was found");
    pod_with(e, "px", "\"priorityClassName\":\"koord-batch\",\"priority\":7,", 403, "message",
             "pods \"px\" is forbidden: the integer value of priority (7) must not be provided "
             "in pod spec; priority admission controller computed 5000 from the given "
             "PriorityClass name");

    /* One global default; pods without a class get it. */
    priority_class(e, "dflt", "\"value\":100,\"globalDefault\":true", 201, NULL);
    priority_class(e, "dflt2", "\"value\":200,\"globalDefault\":true", 403,
                   "priorityclasses.scheduling.k8s.io \"dflt2\" is forbidden: PriorityClass dflt "
                   "is already marked as default. Only one default can exist");
    pod_with(e, "pd", "", 201, "priorityClassName", "\"dflt\"");
    pod_with(e, "pd2", "", 201, "priority", "100");

    /* A replace without the resolved fields keeps them; one changing them is refused. */
    assert_int_equal(http(e, "PUT", "/api/v1/namespaces/default/pods/pb",
                          "{\"metadata\":{\"name\":\"pb\"},\"spec\":{\"containers\":[{\"name\":"
                          "\"c\",\"image\":\"i2\"}]}}",
                          &b, NULL),
                     200);
    expect_str(b, "spec.priorityClassName", "koord-batch");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "spec"), "priority")->valueint,
                     5000);
    cJSON_Delete(b);
    assert_int_equal(http(e, "PUT", "/api/v1/namespaces/default/pods/pb",
                          "{\"metadata\":{\"name\":\"pb\"},\"spec\":{\"priority\":1,"
                          "\"containers\":[{\"name\":\"c\",\"image\":\"i2\"}]}}",
                          &b, NULL),
                     422);
    expect_str(b, "details.causes.0.field", "spec.priority");
    cJSON_Delete(b);
}

static const char test_tokens[] = "admin-t,admin,u1,system:masters\n"
                                  "node1-t,system:node:n1,u2,system:nodes\n";

static struct api_tokens *use_tokens(struct env *e)
{
    struct api_tokens *t = NULL;
    struct strbuf why = STRBUF_INIT;

    assert_int_equal(api_tokens_parse(test_tokens, strlen(test_tokens), &t, &why), 0);
    strbuf_release(&why);
    apiserver_set_tokens(e->api, t);
    apiserver_require_client_certs(e->api, true);
    return t;
}

static void drop_tokens(struct env *e, struct api_tokens *t)
{
    apiserver_set_tokens(e->api, NULL);
    api_tokens_free(t);
}

/* A pod in default bound to node (or unbound for NULL), created by the admin. */
static void admin_pod(struct env *e, const char *name, const char *node)
{
    char body[256];

    (void)snprintf(body, sizeof(body),
                   "{\"metadata\":{\"name\":\"%s\"},\"spec\":{%s%s%s\"containers\":[{\"name\":"
                   "\"c\",\"image\":\"i\"}]}}",
                   name, node ? "\"nodeName\":\"" : "", node ? node : "", node ? "\"," : "");
    assert_int_equal(
        http_as(e, "admin-t", "POST", "/api/v1/namespaces/default/pods", body, NULL, NULL), 201);
}

/* The node rule of auth.h, request by request, and who gets 401. */
static void test_node_authorization(void **state)
{
    struct env *e = *state;
    struct api_tokens *t = use_tokens(e);
    const char *n1 = "node1-t";
    cJSON *b = NULL;

    assert_int_equal(http(e, "GET", "/api/v1/nodes", NULL, NULL, NULL), 401);
    assert_int_equal(http_as(e, "nope", "GET", "/api/v1/nodes", NULL, NULL, NULL), 401);
    assert_int_equal(http(e, "GET", "/healthz", NULL, NULL, NULL), 200);
    assert_int_equal(http_as(e, "admin-t", "POST", "/api/v1/nodes",
                             "{\"metadata\":{\"name\":\"n1\"}}", NULL, NULL),
                     201);
    assert_int_equal(http_as(e, "admin-t", "POST", "/api/v1/nodes",
                             "{\"metadata\":{\"name\":\"n2\"}}", NULL, NULL),
                     201);
    admin_pod(e, "on1", "n1");
    admin_pod(e, "on2", "n2");
    admin_pod(e, "free", NULL);

    /* Reads are open to the node. */
    assert_int_equal(http_as(e, n1, "GET", "/api/v1/pods", NULL, NULL, NULL), 200);
    assert_int_equal(http_as(e, n1, "GET", "/api/v1/nodes/n2", NULL, NULL, NULL), 200);

    /* Its own Node, not another. */
    assert_int_equal(http_as(e, n1, "PUT", "/api/v1/nodes/n1/status",
                             "{\"metadata\":{\"name\":\"n1\"},\"status\":{\"phase\":"
                             "\"Running\"}}",
                             NULL, NULL),
                     200);
    assert_int_equal(http_as(e, n1, "PUT", "/api/v1/nodes/n1",
                             "{\"metadata\":{\"name\":\"n1\","
                             "\"labels\":{\"a\":\"b\"}}}",
                             NULL, NULL),
                     200);
    assert_int_equal(http_as(e, n1, "PUT", "/api/v1/nodes/n2/status",
                             "{\"metadata\":{\"name\":\"n2\"}}", &b, NULL),
                     403);
    expect_str(b, "reason", "Forbidden");
    expect_str(b, "message",
               "nodes \"n2\" is forbidden: User \"system:node:n1\" cannot update resource "
               "\"nodes/status\" in API group \"\" at the cluster scope");
    cJSON_Delete(b);
    assert_int_equal(
        http_as(e, n1, "POST", "/api/v1/nodes", "{\"metadata\":{\"name\":\"n3\"}}", &b, NULL), 403);
    expect_str(b, "message",
               "nodes \"n3\" is forbidden: User \"system:node:n1\" cannot create resource "
               "\"nodes\" in API group \"\" at the cluster scope: node \"n1\" may only write "
               "objects about itself");
    cJSON_Delete(b);
    assert_int_equal(http_as(e, n1, "DELETE", "/api/v1/nodes/n2", NULL, NULL, NULL), 403);

    /* Pods bound to it: status, eviction; never binding, never someone else's pod. */
    assert_int_equal(http_as(e, n1, "PUT", "/api/v1/namespaces/default/pods/on1/status",
                             "{\"metadata\":{\"name\":\"on1\"},\"status\":{\"phase\":"
                             "\"Running\"}}",
                             NULL, NULL),
                     200);
    assert_int_equal(http_as(e, n1, "PUT", "/api/v1/namespaces/default/pods/on2/status",
                             "{\"metadata\":{\"name\":\"on2\"},\"status\":{\"phase\":"
                             "\"Running\"}}",
                             NULL, NULL),
                     403);
    assert_int_equal(http_as(e, n1, "PUT", "/api/v1/namespaces/default/pods/free/status",
                             "{\"metadata\":{\"name\":\"free\"},\"status\":{\"phase\":"
                             "\"Running\"}}",
                             NULL, NULL),
                     403);
    assert_int_equal(http_as(e, n1, "POST", "/api/v1/namespaces/default/pods/free/binding",
                             "{\"metadata\":{\"name\":\"free\"},\"target\":{\"kind\":\"Node\","
                             "\"name\":\"n1\"}}",
                             NULL, NULL),
                     403);
    assert_int_equal(http_as(e, n1, "POST", "/api/v1/namespaces/default/pods/on2/eviction",
                             "{\"metadata\":{\"name\":\"on2\"}}", NULL, NULL),
                     403);
    assert_int_equal(http_as(e, n1, "POST", "/api/v1/namespaces/default/pods/on1/eviction",
                             "{\"metadata\":{\"name\":\"on1\"}}", NULL, NULL),
                     201);
    assert_int_equal(http_as(e, n1, "POST", "/api/v1/namespaces/default/pods",
                             "{\"metadata\":{\"name\":\"m\"},\"spec\":{\"nodeName\":\"n2\","
                             "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}",
                             NULL, NULL),
                     403);
    assert_int_equal(http_as(e, n1, "POST", "/api/v1/namespaces/default/pods",
                             "{\"metadata\":{\"name\":\"m\"},\"spec\":{\"nodeName\":\"n1\","
                             "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}",
                             NULL, NULL),
                     201);
    assert_int_equal(http_as(e, n1, "DELETE", "/api/v1/namespaces/default/pods", NULL, NULL, NULL),
                     403);
    assert_int_equal(http_as(e, n1, "GET", "/api/v1/namespaces/default/pods/on2", NULL, NULL, NULL),
                     200);

    /* Events about itself; its heartbeat Lease; nothing else. */
    assert_int_equal(http_as(e, n1, "POST", "/api/v1/namespaces/default/events",
                             "{\"metadata\":{\"name\":\"e1\"},\"involvedObject\":{\"kind\":"
                             "\"Node\",\"name\":\"n1\"}}",
                             NULL, NULL),
                     201);
    assert_int_equal(http_as(e, n1, "POST", "/api/v1/namespaces/default/events",
                             "{\"metadata\":{\"name\":\"e2\"},\"involvedObject\":{\"kind\":"
                             "\"Pod\",\"name\":\"on2\"},\"source\":{\"host\":\"n2\"}}",
                             NULL, NULL),
                     403);
    assert_int_equal(http_as(e, n1, "POST",
                             "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
                             "{\"metadata\":{\"name\":\"n1\"}}", NULL, NULL),
                     201);
    assert_int_equal(http_as(e, n1, "POST",
                             "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
                             "{\"metadata\":{\"name\":\"n2\"}}", NULL, NULL),
                     403);
    assert_int_equal(http_as(e, n1, "POST",
                             "/apis/coordination.k8s.io/v1/namespaces/default/leases",
                             "{\"metadata\":{\"name\":\"n1\"}}", NULL, NULL),
                     403);
    assert_int_equal(http_as(e, n1, "POST", "/api/v1/namespaces/default/configmaps",
                             "{\"metadata\":{\"name\":\"c\"}}", &b, NULL),
                     403);
    expect_str(b, "message",
               "configmaps is forbidden: User \"system:node:n1\" cannot create resource "
               "\"configmaps\" in API group \"\" in the namespace \"default\"");
    cJSON_Delete(b);
    /* The admin is not a node: anything goes. */
    assert_int_equal(http_as(e, "admin-t", "POST", "/api/v1/namespaces/default/configmaps",
                             "{\"metadata\":{\"name\":\"c\"}}", NULL, NULL),
                     201);
    drop_tokens(e, t);
}

/* TokenReview answers from the token file; nothing is stored. */
static void test_token_review(void **state)
{
    struct env *e = *state;
    struct api_tokens *t = use_tokens(e);
    const char *tr = "/apis/authentication.k8s.io/v1/tokenreviews";
    cJSON *b = NULL;

    assert_int_equal(http_as(e, "admin-t", "POST", tr,
                             "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":"
                             "\"TokenReview\",\"spec\":{\"token\":\"node1-t\"}}",
                             &b, NULL),
                     201);
    assert_json_eq(cJSON_GetObjectItem(b, "status"),
                   "{\"authenticated\":true,\"user\":{\"username\":\"system:node:n1\",\"uid\":"
                   "\"u2\",\"groups\":[\"system:nodes\",\"system:authenticated\"]},\"audiences\":"
                   "[\"https://kubernetes.default.svc.cluster.local\"]}");
    expect_str(b, "kind", "TokenReview");
    expect_str(b, "spec.token", "node1-t");
    cJSON_Delete(b);
    /* An unknown token, or one asked for another audience, is not authenticated. */
    assert_int_equal(
        http_as(e, "node1-t", "POST", tr, "{\"spec\":{\"token\":\"other\"}}", &b, NULL), 201);
    assert_json_eq(cJSON_GetObjectItem(b, "status"), "{\"user\":{}}");
    cJSON_Delete(b);
    assert_int_equal(http_as(e, "admin-t", "POST", tr,
                             "{\"spec\":{\"token\":\"admin-t\",\"audiences\":[\"x\"]}}", &b, NULL),
                     201);
    assert_json_eq(cJSON_GetObjectItem(b, "status"), "{\"user\":{}}");
    cJSON_Delete(b);
    assert_int_equal(http_as(e, "admin-t", "POST", tr, "{\"spec\":{}}", &b, NULL), 400);
    expect_str(b, "message", "token is required for TokenReview in authentication");
    cJSON_Delete(b);
    assert_int_equal(http_as(e, "admin-t", "GET", tr, NULL, NULL, NULL), 405);
    assert_int_equal(http(e, "POST", tr, "{\"spec\":{\"token\":\"admin-t\"}}", NULL, NULL), 401);
    /* Discovery offers create only. */
    assert_int_equal(http_as(e, "admin-t", "GET", "/apis/authentication.k8s.io/v1", NULL, &b, NULL),
                     200);
    expect_str(b, "resources.0.name", "tokenreviews");
    expect_str(b, "resources.0.verbs.0", "create");
    assert_null(str(b, "resources.0.verbs.1"));
    cJSON_Delete(b);
    drop_tokens(e, t);
}

/* Lists and watches without selectors splice the stored bytes instead of decoding them (the
 * fast path): the bytes must be exactly those of the decoding path, which a selector that
 * matches everything takes. */
static void test_spliced_bytes(void **state)
{
    struct env *e = *state;
    struct strbuf fast = STRBUF_INIT, slow = STRBUF_INIT;
    static const char *const bodies[] = {
        "{\"metadata\":{\"name\":\"a\",\"labels\":{\"app\":\"x\"}},\"data\":{\"k\":\"}{\\\"\"}}",
        "{\"metadata\":{\"name\":\"b\",\"labels\":{\"app\":\"y\"},\"annotations\":"
        "{\"n\":\"1.5e3\"}},\"data\":{}}",
    };
    cJSON *list = NULL;

    for (size_t i = 0; i < ARRAY_SIZE(bodies); i++)
        assert_int_equal(
            http(e, "POST", "/api/v1/namespaces/default/configmaps", bodies[i], NULL, NULL), 201);
    assert_int_equal(http_raw(e, "/api/v1/namespaces/default/configmaps", &fast), 200);
    assert_int_equal(http_raw(e, "/api/v1/namespaces/default/configmaps?labelSelector=app", &slow),
                     200);
    assert_string_equal(fast.buf, slow.buf);
    list = cJSON_Parse(fast.buf);
    assert_non_null(list);
    expect_str(list, "items.0.metadata.name", "a");
    assert_non_null(str(list, "items.1.metadata.resourceVersion"));
    expect_str(list, "items.1.kind", "ConfigMap");
    cJSON_Delete(list);

    strbuf_reset(&fast);
    strbuf_reset(&slow);
    assert_int_equal(http_raw(e,
                              "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1"
                              "&timeoutSeconds=1",
                              &fast),
                     200);
    assert_int_equal(http_raw(e,
                              "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1"
                              "&timeoutSeconds=1&labelSelector=app",
                              &slow),
                     200);
    assert_non_null(strstr(fast.buf, "{\"type\":\"ADDED\",\"object\":{\"apiVersion\""));
    assert_string_equal(fast.buf, slow.buf);
    strbuf_release(&fast);
    strbuf_release(&slow);
}

/*
 * A create answers with the bytes it stored and the resourceVersion spliced in (not printed
 * again from the tree): the same bytes a GET of the object answers, and what printing the
 * decoded answer gives; as PartialObjectMetadata when that was asked for.
 */
static void test_create_answer_is_the_stored_object(void **state)
{
    struct env *e = *state;
    struct strbuf created = STRBUF_INIT, got = STRBUF_INIT, printed = STRBUF_INIT;
    cJSON *o;

    assert_int_equal(post_raw(e, "/api/v1/namespaces/default/pods", "application/json",
                              "{\"metadata\":{\"name\":\"ans\",\"labels\":{\"a\":\"b\"},"
                              "\"annotations\":{\"x\":\"}{\\\"\"}},\"spec\":{\"containers\":"
                              "[{\"name\":\"c\",\"image\":\"i\"}]}}",
                              &created),
                     201);
    assert_int_equal(http_raw(e, "/api/v1/namespaces/default/pods/ans", &got), 200);
    assert_string_equal(created.buf, got.buf);
    o = cJSON_Parse(created.buf);
    assert_non_null(o);
    assert_non_null(str(o, "metadata.resourceVersion"));
    assert_int_equal(json_print(o, &printed), 0);
    assert_string_equal(created.buf, printed.buf);
    cJSON_Delete(o);

    strbuf_reset(&created);
    assert_int_equal(
        post_raw(
            e, "/api/v1/namespaces/default/configmaps",
            "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
            "{\"metadata\":{\"name\":\"pom\",\"labels\":{\"a\":\"b\"}},\"data\":{\"k\":\"v\"}}",
            &created),
        201);
    o = cJSON_Parse(created.buf);
    assert_non_null(o);
    assert_string_equal(str(o, "kind"), "PartialObjectMetadata");
    assert_string_equal(str(o, "apiVersion"), "meta.k8s.io/v1");
    assert_string_equal(str(o, "metadata.name"), "pom");
    assert_string_equal(str(o, "metadata.labels.a"), "b");
    assert_non_null(str(o, "metadata.resourceVersion"));
    assert_null(cJSON_GetObjectItem(o, "data"));
    cJSON_Delete(o);
    strbuf_release(&created);
    strbuf_release(&got);
    strbuf_release(&printed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_discovery_and_health, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crud, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_answer_is_the_stored_object, setup, teardown),
        cmocka_unit_test_setup_teardown(test_status_and_finalizers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crds_served_and_persisted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_watch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_patch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unconditional_writes_race, setup, teardown),
        cmocka_unit_test_setup_teardown(test_review_cases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dry_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_authorization, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_review, setup, teardown),
        cmocka_unit_test_setup_teardown(test_secrets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_services, setup, teardown),
        cmocka_unit_test_setup_teardown(test_priority_classes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spliced_bytes, setup, teardown),
    };
    int r;

    codec_init();
    CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == 0);
    r = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return r;
}
