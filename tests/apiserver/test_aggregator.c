/*
 * Tests for apiserver/aggregator: the API server library started in-process over TLS with its
 * generated PKI and the aggregation layer on, plus a second HTTPS server as the extension
 * server. The backend requires client certificates from the front-proxy CA, serves its
 * certificate for backend.test-ns.svc only (so the proxy must verify that name against the
 * APIService's caBundle), echoes the identity headers it got, serves an APIResourceList and a
 * watch whose second event waits until the test releases it. Covered: the
 * extension-apiserver-authentication ConfigMap; APIService validation and the collision rule;
 * the Available condition through ServiceNotFound, EndpointsNotFound, MissingEndpoints, Passed
 * and FailedDiscoveryCheck; discovery; GET/PUT/POST proxied with X-Remote-User/Group and without
 * the caller's Authorization or forged X-Remote-* headers; a watch relayed while it streams;
 * 401 without reaching the backend; the node rule; 503 once the backend is down; stopping with
 * a proxied watch open. Conditions are awaited by polling with a deadline.
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
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "apiserver/aggregator.h"
#include "apiserver/apiserver.h"
#include "apiserver/pki.h"
#include "apiserver/store.h"
#include "apiserver/store_cache.h"
#include "apiserver/store_sqlite.h"
#include "apiserver/tokens.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "http/server.h"
#include "http/tls.h"
#include "testutil.h"

#define GROUP  "metrics.koordinator.sh"
#define GV     GROUP "/v1alpha1"
#define AS     "v1alpha1." GROUP
#define PREFIX "/apis/" GV

static const char tokens_text[] = "alice-t,alice,u1,\"devs,ops\"\n"
                                  "node1-t,system:node:n1,u2,system:nodes\n";

/* ---- the extension server ---- */

struct backend {
    struct http_server *http;
    struct tls_pem ca, serving;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int hits;        /* requests that reached the handler, discovery checks aside */
    bool release;    /* lets the watch send its second event */
    bool watch_open; /* a watch is streaming */
    int watch_state; /* events sent by the current watch */
};

struct seen {
    const char *user;
    struct strbuf groups;
    bool authorization;
    bool forged; /* a header the test forged arrived */
};

static int see_header(void *ud, const char *name, const char *value)
{
    struct seen *s = ud;

    if (!strcasecmp(name, "X-Remote-User"))
        s->user = value;
    else if (!strcasecmp(name, "X-Remote-Group"))
        strbuf_addf(&s->groups, "%s%s", s->groups.len ? "," : "", value ? value : "");
    else if (!strcasecmp(name, "Authorization"))
        s->authorization = true;
    else if (!strcasecmp(name, "X-Remote-Extra-Forged"))
        s->forged = true;
    return 0;
}

static long backend_watch(void *ud, struct http_stream *st, char *buf, size_t max)
{
    struct backend *b = ud;
    const char *ev = NULL;
    long n;

    (void)st;
    CHECK(pthread_mutex_lock(&b->lock) == 0);
    if (b->watch_state == 0) {
        ev = "{\"type\":\"ADDED\",\"object\":{\"kind\":\"NodeMetric\",\"apiVersion\":\"" GV
             "\",\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"1\"}}}\n";
    } else if (b->watch_state == 1) {
        while (!b->release)
            CHECK(pthread_cond_wait(&b->cond, &b->lock) == 0);
        ev = "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"NodeMetric\",\"apiVersion\":\"" GV
             "\",\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"2\"}}}\n";
    }
    b->watch_state++;
    CHECK(pthread_mutex_unlock(&b->lock) == 0);
    if (!ev)
        return 0;
    n = (long)strlen(ev);
    CHECK((size_t)n <= max);
    memcpy(buf, ev, (size_t)n);
    return n;
}

static void backend_watch_done(void *ud)
{
    struct backend *b = ud;

    CHECK(pthread_mutex_lock(&b->lock) == 0);
    b->watch_open = false;
    CHECK(pthread_cond_broadcast(&b->cond) == 0);
    CHECK(pthread_mutex_unlock(&b->lock) == 0);
}

static void backend_handle(const struct http_request *req, struct http_response *resp, void *ud)
{
    struct backend *b = ud;
    const char *path = http_request_path(req), *user;
    const char *const *groups;
    struct seen s = {.groups = STRBUF_INIT};
    cJSON *o;
    size_t len;
    const char *body = http_request_body(req, &len);

    if (http_request_client_cert(req, &user, &groups) < 0 || strcmp(user, "front-proxy-client")) {
        resp->status = 401;
        strbuf_addstr(&resp->body, "{\"kind\":\"Status\",\"code\":401}");
        return;
    }
    if (strcmp(path, PREFIX)) { /* the availability checks come and go on their own */
        CHECK(pthread_mutex_lock(&b->lock) == 0);
        b->hits++;
        CHECK(pthread_mutex_unlock(&b->lock) == 0);
    }
    if (!strcmp(path, PREFIX)) {
        resp->status = 200;
        strbuf_addstr(&resp->body,
                      "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":\"" GV
                      "\",\"resources\":[{\"name\":\"nodemetrics\",\"singularName\":"
                      "\"nodemetric\",\"namespaced\":false,\"kind\":\"NodeMetric\",\"verbs\":"
                      "[\"get\",\"list\",\"watch\",\"update\"]},{\"name\":\"nodemetrics/status\","
                      "\"singularName\":\"\",\"namespaced\":false,\"kind\":\"NodeMetric\","
                      "\"verbs\":[\"get\",\"update\"]}]}");
        return;
    }
    if (http_request_query(req, "watch")) {
        CHECK(pthread_mutex_lock(&b->lock) == 0);
        b->watch_open = true;
        b->watch_state = 0;
        CHECK(pthread_mutex_unlock(&b->lock) == 0);
        resp->status = 200;
        resp->content_type = "application/json;stream=watch";
        resp->stream = backend_watch;
        resp->stream_blocking = true;
        resp->stream_userdata = b;
        resp->stream_free = backend_watch_done;
        return;
    }
    /* Everything else: an echo of what arrived. */
    http_request_foreach_header(req, see_header, &s);
    o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", "Echo");
    cJSON_AddStringToObject(o, "method", http_request_method(req));
    cJSON_AddStringToObject(o, "path", path);
    cJSON_AddStringToObject(o, "user", s.user ? s.user : "");
    cJSON_AddStringToObject(o, "groups", s.groups.buf);
    cJSON_AddBoolToObject(o, "authorization", s.authorization);
    cJSON_AddBoolToObject(o, "forged", s.forged);
    cJSON_AddStringToObject(
        o, "labelSelector",
        http_request_query(req, "labelSelector") ? http_request_query(req, "labelSelector") : "");
    cJSON_AddStringToObject(
        o, "contentType",
        http_request_header(req, "Content-Type") ? http_request_header(req, "Content-Type") : "");
    {
        char *copy = xstrndup(body ? body : "", len);
        cJSON_AddStringToObject(o, "body", copy);
        free(copy);
    }
    {
        char *txt = cJSON_PrintUnformatted(o);
        strbuf_addstr(&resp->body, txt);
        cJSON_free(txt);
    }
    cJSON_Delete(o);
    strbuf_release(&s.groups);
    resp->status = !strcmp(http_request_method(req), "POST") ? 201 : 200;
    resp->content_type = "application/vnd.test+json";
    http_response_header(resp, "X-Backend", "echo");
}

static void backend_start(struct backend *b, const char *front_proxy_ca, uint16_t port)
{
    struct http_server_opts o = {.host = "127.0.0.1", .port = port};

    o.cert_pem = b->serving.cert;
    o.key_pem = b->serving.key;
    o.client_ca_pem = front_proxy_ca;
    assert_int_equal(http_server_start(&o, backend_handle, b, &b->http), 0);
}

static void backend_release(struct backend *b)
{
    CHECK(pthread_mutex_lock(&b->lock) == 0);
    b->release = true;
    CHECK(pthread_cond_broadcast(&b->cond) == 0);
    CHECK(pthread_mutex_unlock(&b->lock) == 0);
}

static void backend_stop(struct backend *b)
{
    backend_release(b);
    http_server_stop(b->http);
    b->http = NULL;
}

static int backend_hits(struct backend *b)
{
    int n;

    CHECK(pthread_mutex_lock(&b->lock) == 0);
    n = b->hits;
    CHECK(pthread_mutex_unlock(&b->lock) == 0);
    return n;
}

/* ---- the environment ---- */

struct env {
    char dir[64];
    char pki[96], db[96], work[96], ca_file[128];
    struct apiserver_pki p;
    struct store *backend_store, *store;
    struct api_tokens *tokens;
    struct apiserver *api;
    struct http_server *http;
    char base[64];
    struct backend be;
    uint16_t be_port;
};

/* One PKI and one backend certificate for every test of the file: generating keys is the
 * slowest part of a setup under valgrind (it made this file run past its timeout). */
static char shared_pki[64];
static struct tls_pem shared_be_ca, shared_be_serving;

static const char *const pki_files[] = {"ca.crt",
                                        "ca.key",
                                        "apiserver.crt",
                                        "apiserver.key",
                                        "admin.crt",
                                        "admin.key",
                                        "front-proxy-ca.crt",
                                        "front-proxy-ca.key",
                                        "front-proxy-client.crt",
                                        "front-proxy-client.key"};

static void rm_in(const char *dir, const char *name);

static int group_setup(void **state)
{
    static const char *const sans[] = {"backend.test-ns.svc", NULL};
    struct apiserver_pki p = {0};

    (void)state;
    (void)snprintf(shared_pki, sizeof(shared_pki), "/tmp/koord-agg-pki-XXXXXX");
    if (!mkdtemp(shared_pki) || apiserver_pki_load(shared_pki, &p) < 0 ||
        tls_make_ca("backend-ca", 30, &shared_be_ca) < 0 ||
        tls_make_cert(&shared_be_ca, "backend", NULL, sans, true, 30, &shared_be_serving) < 0)
        return -1;
    apiserver_pki_release(&p);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    tls_pem_release(&shared_be_ca);
    tls_pem_release(&shared_be_serving);
    for (size_t i = 0; i < ARRAY_SIZE(pki_files); i++)
        rm_in(shared_pki, pki_files[i]);
    return rmdir(shared_pki);
}

static void pem_copy(const struct tls_pem *from, struct tls_pem *to)
{
    to->cert = xstrdup(from->cert);
    to->key = xstrdup(from->key);
}

static int setup(void **state)
{
    struct env *e = xcalloc(1, sizeof(*e));
    struct http_server_opts o = {.host = "127.0.0.1"};
    struct aggregator_opts ao = {0};
    struct strbuf why = STRBUF_INIT, cert = STRBUF_INIT, key = STRBUF_INIT;

    (void)snprintf(e->dir, sizeof(e->dir), "/tmp/koord-agg-XXXXXX");
    if (!mkdtemp(e->dir))
        return -1;
    (void)snprintf(e->pki, sizeof(e->pki), "%s", shared_pki);
    (void)snprintf(e->db, sizeof(e->db), "%s/db", e->dir);
    (void)snprintf(e->work, sizeof(e->work), "%s/agg", e->dir);
    (void)snprintf(e->ca_file, sizeof(e->ca_file), "%s/ca.crt", e->pki);
    if (mkdir(e->work, 0700) < 0)
        return -1;
    assert_int_equal(apiserver_pki_load(e->pki, &e->p), 0);
    assert_int_equal(store_sqlite_open(e->db, 0, &e->backend_store), 0);
    assert_int_equal(store_cache_new(e->backend_store, &e->store), 0);
    assert_int_equal(apiserver_new(e->store, &e->api), 0);
    assert_int_equal(api_tokens_parse(tokens_text, strlen(tokens_text), &e->tokens, &why), 0);
    apiserver_require_client_certs(e->api, true);
    apiserver_set_tokens(e->api, e->tokens);
    strbuf_addf(&cert, "%s/front-proxy-client.crt", e->pki);
    strbuf_addf(&key, "%s/front-proxy-client.key", e->pki);
    ao.proxy_cert_file = cert.buf;
    ao.proxy_key_file = key.buf;
    ao.client_ca_pem = e->p.ca.cert;
    ao.requestheader_ca_pem = e->p.front_proxy_ca.cert;
    ao.work_dir = e->work;
    ao.interval_ms = 300;
    ao.check_timeout_ms = 15000; /* a TLS handshake under valgrind on a loaded machine is slow */
    assert_int_equal(apiserver_enable_aggregation(e->api, &ao), 0);
    o.cert_pem = e->p.serving.cert;
    o.key_pem = e->p.serving.key;
    o.client_ca_pem = e->p.ca.cert;
    assert_int_equal(http_server_start(&o, apiserver_handle, e->api, &e->http), 0);
    (void)snprintf(e->base, sizeof(e->base), "https://127.0.0.1:%u", http_server_port(e->http));

    CHECK(pthread_mutex_init(&e->be.lock, NULL) == 0);
    CHECK(pthread_cond_init(&e->be.cond, NULL) == 0);
    pem_copy(&shared_be_ca, &e->be.ca);
    pem_copy(&shared_be_serving, &e->be.serving);
    backend_start(&e->be, e->p.front_proxy_ca.cert, 0);
    e->be_port = http_server_port(e->be.http);
    strbuf_release(&why);
    strbuf_release(&cert);
    strbuf_release(&key);
    *state = e;
    return 0;
}

static void rm_in(const char *dir, const char *name)
{
    char p[192];

    (void)snprintf(p, sizeof(p), "%s/%s", dir, name);
    (void)unlink(p);
}

static int teardown(void **state)
{
    struct env *e = *state;

    backend_release(&e->be);
    apiserver_stop_watches(e->api);
    http_server_stop(e->http);
    apiserver_free(e->api);
    if (e->be.http)
        backend_stop(&e->be);
    api_tokens_free(e->tokens);
    store_close(e->store);
    store_close(e->backend_store);
    apiserver_pki_release(&e->p);
    tls_pem_release(&e->be.ca);
    tls_pem_release(&e->be.serving);
    (void)pthread_cond_destroy(&e->be.cond);
    (void)pthread_mutex_destroy(&e->be.lock);
    for (const char *const *s = (const char *const[]){"db", "db-wal", "db-shm", NULL}; *s; s++)
        rm_in(e->dir, *s);
    /* Empty: the caBundle files went with their backends. */
    assert_int_equal(rmdir(e->work), 0);
    assert_int_equal(rmdir(e->dir), 0);
    free(e);
    return 0;
}

/* ---- requests ---- */

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
    strbuf_add(ud, p, size * n);
    return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    strbuf_add(ud, p, size * n);
    return size * n;
}

struct call {
    const char *token; /* NULL: no credentials */
    const char *method;
    const char *path;
    const char *body;
    const char *const *headers; /* extra "Name: value" lines */
    struct strbuf *resp_headers;
    double seconds; /* taken */
};

static double now_s(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One request to the API server; returns the HTTP code, *ret the parsed body (or NULL). */
static long call(struct env *e, struct call *c, cJSON **ret)
{
    CURL *h = curl_easy_init();
    struct strbuf url = STRBUF_INIT, out = STRBUF_INIT, auth = STRBUF_INIT;
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    long code = 0;
    double start = now_s();

    if (c->token) {
        strbuf_addf(&auth, "Authorization: Bearer %s", c->token);
        hdrs = curl_slist_append(hdrs, auth.buf);
    }
    for (const char *const *x = c->headers; x && *x; x++)
        hdrs = curl_slist_append(hdrs, *x);
    strbuf_addf(&url, "%s%s", e->base, c->path);
    (void)curl_easy_setopt(h, CURLOPT_URL, url.buf);
    (void)curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, c->method ? c->method : "GET");
    (void)curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    (void)curl_easy_setopt(h, CURLOPT_CAINFO, e->ca_file);
    (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, &out);
    (void)curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
    if (c->resp_headers) {
        (void)curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
        (void)curl_easy_setopt(h, CURLOPT_HEADERDATA, c->resp_headers);
    }
    if (c->body)
        (void)curl_easy_setopt(h, CURLOPT_POSTFIELDS, c->body);
    assert_int_equal(curl_easy_perform(h), CURLE_OK);
    (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    c->seconds = now_s() - start;
    if (getenv("KOORD_TEST_DEBUG"))
        print_error("%s %s -> %ld %s\n", c->method ? c->method : "GET", c->path, code, out.buf);
    if (ret)
        *ret = cJSON_Parse(out.buf);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    strbuf_release(&url);
    strbuf_release(&out);
    strbuf_release(&auth);
    return code;
}

static long req(struct env *e, const char *method, const char *path, const char *body, cJSON **ret)
{
    struct call c = {.token = "alice-t", .method = method, .path = path, .body = body};
    return call(e, &c, ret);
}

static void create(struct env *e, const char *path, const char *body)
{
    cJSON *b = NULL;
    long code = req(e, "POST", path, body, &b);

    if (code != 201) {
        char *t = cJSON_PrintUnformatted(b);
        fail_msg("POST %s: %ld %s", path, code, t ? t : "");
    }
    cJSON_Delete(b);
}

static const char *str_at(const cJSON *o, const char *path)
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
    return v && cJSON_IsString(v) ? v->valuestring : NULL;
}

static void expect_str(const cJSON *o, const char *path, const char *want)
{
    const char *got = str_at(o, path);

    if (!got || strcmp(got, want)) {
        char *txt = cJSON_PrintUnformatted(o);
        print_error("%s\n", txt ? txt : "(null)");
        cJSON_free(txt);
        fail_msg("%s = %s, want %s", path, got ? got : "(absent)", want);
    }
}

/* Waits (up to a deadline, polling) until the APIService's Available condition has this status
 * and reason; returns its message (caller frees). */
static char *wait_available(struct env *e, const char *name, const char *status, const char *reason)
{
    char path[256];
    double end = now_s() + 60;
    struct timespec step = {0, 20L * 1000000};
    char *last = NULL;

    (void)snprintf(path, sizeof(path), "/apis/apiregistration.k8s.io/v1/apiservices/%s", name);
    for (;;) {
        cJSON *o = NULL;
        const char *s, *r, *m;

        assert_int_equal(req(e, "GET", path, NULL, &o), 200);
        s = str_at(o, "status.conditions.0.status");
        r = str_at(o, "status.conditions.0.reason");
        m = str_at(o, "status.conditions.0.message");
        if (s)
            expect_str(o, "status.conditions.0.type", "Available");
        if (s && r && !strcmp(s, status) && !strcmp(r, reason)) {
            char *msg = xstrdup(m ? m : "");
            cJSON_Delete(o);
            free(last);
            return msg;
        }
        free(last);
        last = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        if (now_s() > end)
            fail_msg("%s never became %s/%s: %s", name, status, reason, last ? last : "");
        (void)nanosleep(&step, NULL);
    }
}

static void expect_available(struct env *e, const char *name, const char *status,
                             const char *reason, const char *message)
{
    char *m = wait_available(e, name, status, reason);

    if (message && strcmp(m, message))
        fail_msg("message \"%s\", want \"%s\"", m, message);
    free(m);
}

/* The APIService of the tests, with the backend CA as caBundle (or insecure). */
static void create_apiservice(struct env *e, const char *svc, bool insecure)
{
    struct strbuf b = STRBUF_INIT;

    strbuf_addf(&b,
                "{\"apiVersion\":\"apiregistration.k8s.io/v1\",\"kind\":\"APIService\","
                "\"metadata\":{\"name\":\"" AS "\"},\"spec\":{\"group\":\"" GROUP
                "\",\"version\":\"v1alpha1\",\"service\":{\"namespace\":\"test-ns\","
                "\"name\":\"%s\"},\"groupPriorityMinimum\":1000,\"versionPriority\":15,",
                svc);
    if (insecure) {
        strbuf_addstr(&b, "\"insecureSkipTLSVerify\":true}}");
    } else {
        strbuf_addstr(&b, "\"caBundle\":\"");
        strbuf_add_base64(&b, e->be.ca.cert, strlen(e->be.ca.cert));
        strbuf_addstr(&b, "\"}}");
    }
    create(e, "/apis/apiregistration.k8s.io/v1/apiservices", b.buf);
    strbuf_release(&b);
}

static void create_namespace(struct env *e)
{
    create(e, "/api/v1/namespaces", "{\"metadata\":{\"name\":\"test-ns\"}}");
}

/* Service "backend" (port 443, named https) and its Endpoints at the backend's address. */
static void create_service(struct env *e)
{
    create(e, "/api/v1/namespaces/test-ns/services",
           "{\"metadata\":{\"name\":\"backend\"},\"spec\":{\"ports\":[{\"name\":\"https\","
           "\"port\":443}]}}");
}

static void create_endpoints(struct env *e, const char *port_name)
{
    char body[512];

    (void)snprintf(body, sizeof(body),
                   "{\"metadata\":{\"name\":\"backend\"},\"subsets\":[{\"addresses\":[{\"ip\":"
                   "\"127.0.0.1\"}],\"ports\":[{\"name\":\"%s\",\"port\":%u}]}]}",
                   port_name, e->be_port);
    create(e, "/api/v1/namespaces/test-ns/endpoints", body);
}

/* The usual setup: namespace, Service, Endpoints, APIService, Available. */
static void register_backend(struct env *e)
{
    create_namespace(e);
    create_service(e);
    create_endpoints(e, "https");
    create_apiservice(e, "backend", false);
    expect_available(e, AS, "True", "Passed", "all checks passed");
}

/* ---- tests ---- */

static void test_auth_configmap(void **state)
{
    struct env *e = *state;
    cJSON *cm = NULL;

    assert_int_equal(
        req(e, "GET",
            "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication", NULL,
            &cm),
        200);
    expect_str(cm, "data.client-ca-file", e->p.ca.cert);
    expect_str(cm, "data.requestheader-client-ca-file", e->p.front_proxy_ca.cert);
    expect_str(cm, "data.requestheader-allowed-names", "[\"front-proxy-client\"]");
    expect_str(cm, "data.requestheader-username-headers", "[\"X-Remote-User\"]");
    expect_str(cm, "data.requestheader-group-headers", "[\"X-Remote-Group\"]");
    expect_str(cm, "data.requestheader-extra-headers-prefix", "[\"X-Remote-Extra-\"]");
    assert_non_null(str_at(cm, "metadata.uid"));
    assert_non_null(str_at(cm, "metadata.creationTimestamp"));
    cJSON_Delete(cm);
}

static void expect_invalid(struct env *e, const char *body, const char *field, const char *msg)
{
    cJSON *b = NULL;
    char *txt;

    assert_int_equal(req(e, "POST", "/apis/apiregistration.k8s.io/v1/apiservices", body, &b), 422);
    expect_str(b, "reason", "Invalid");
    txt = cJSON_PrintUnformatted(b);
    if (!strstr(txt, field) || !strstr(txt, msg))
        fail_msg("no cause %s / %s in %s", field, msg, txt);
    cJSON_free(txt);
    cJSON_Delete(b);
}

#define AS_HEAD "{\"apiVersion\":\"apiregistration.k8s.io/v1\",\"kind\":\"APIService\","

static void test_validation(void **state)
{
    struct env *e = *state;
    cJSON *b = NULL;

    expect_invalid(e,
                   AS_HEAD "\"metadata\":{\"name\":\"v1.x.io\"},\"spec\":{\"group\":\"y.io\","
                           "\"version\":\"v1\",\"groupPriorityMinimum\":1,\"versionPriority\":1}}",
                   "metadata.name", "must be `spec.version+\\\".\\\"+spec.group`: \\\"v1.y.io\\\"");
    expect_invalid(e,
                   AS_HEAD "\"metadata\":{\"name\":\"v1.x.io\"},\"spec\":{\"group\":\"x.io\","
                           "\"version\":\"v1\",\"groupPriorityMinimum\":0,\"versionPriority\":"
                           "1001}}",
                   "spec.groupPriorityMinimum", "must be positive and less than 20000");
    expect_invalid(e,
                   AS_HEAD "\"metadata\":{\"name\":\"v1.x.io\"},\"spec\":{\"group\":\"x.io\","
                           "\"version\":\"v1\",\"groupPriorityMinimum\":1}}",
                   "spec.versionPriority", "must be positive and less than 1000");
    expect_invalid(e,
                   AS_HEAD "\"metadata\":{\"name\":\"V1.x.io\"},\"spec\":{\"group\":\"x.io\","
                           "\"version\":\"V1\",\"groupPriorityMinimum\":1,\"versionPriority\":"
                           "1}}",
                   "spec.version", "a DNS-1035 label must consist of");
    expect_invalid(e,
                   AS_HEAD "\"metadata\":{\"name\":\"v1.x.io\"},\"spec\":{\"group\":\"x.io\","
                           "\"version\":\"v1\",\"groupPriorityMinimum\":1,\"versionPriority\":1,"
                           "\"caBundle\":\"Zm9v\"}}",
                   "spec.caBundle", "local APIServices may not have a caBundle");
    expect_invalid(e,
                   AS_HEAD "\"metadata\":{\"name\":\"v1.x.io\"},\"spec\":{\"group\":\"x.io\","
                           "\"version\":\"v1\",\"groupPriorityMinimum\":1,\"versionPriority\":1,"
                           "\"service\":{\"name\":\"s\",\"port\":70000},\"caBundle\":\"Zm9v\","
                           "\"insecureSkipTLSVerify\":true}}",
                   "spec.insecureSkipTLSVerify", "may not be true if caBundle is present");
    expect_invalid(e,
                   AS_HEAD "\"metadata\":{\"name\":\"v1.x.io\"},\"spec\":{\"group\":\"x.io\","
                           "\"version\":\"v1\",\"groupPriorityMinimum\":1,\"versionPriority\":1,"
                           "\"service\":{\"name\":\"s\",\"port\":70000}}}",
                   "spec.service.namespace", "Required value");
    expect_invalid(e,
                   AS_HEAD "\"metadata\":{\"name\":\"v1.x.io\"},\"spec\":{\"group\":\"x.io\","
                           "\"version\":\"v1\",\"groupPriorityMinimum\":1,\"versionPriority\":1,"
                           "\"service\":{\"name\":\"s\",\"port\":70000}}}",
                   "spec.service.port", "port is not valid: must be between 1 and 65535");
    expect_invalid(e,
                   AS_HEAD "\"metadata\":{\"name\":\"v1.x.io\"},\"spec\":{\"group\":\"x.io\","
                           "\"version\":\"v1\",\"groupPriorityMinimum\":1,\"versionPriority\":1,"
                           "\"service\":{\"namespace\":\"n\",\"name\":\"s\"},\"caBundle\":\"%%\"}}",
                   "spec.caBundle", "illegal base64 data");
    /* A group-version served here already cannot be proxied. */
    expect_invalid(e,
                   AS_HEAD "\"metadata\":{\"name\":\"v1.coordination.k8s.io\"},\"spec\":{"
                           "\"group\":\"coordination.k8s.io\",\"version\":\"v1\","
                           "\"groupPriorityMinimum\":1,\"versionPriority\":1,\"service\":{"
                           "\"namespace\":\"n\",\"name\":\"s\"}}}",
                   "spec.service", "is built into this API server and cannot be proxied");
    /* A local APIService is fine, defaults nothing but is Available as Local; status given at
     * create is dropped. */
    create(e, "/apis/apiregistration.k8s.io/v1/apiservices",
           AS_HEAD "\"metadata\":{\"name\":\"v1.coordination.k8s.io\"},\"spec\":{\"group\":"
                   "\"coordination.k8s.io\",\"version\":\"v1\",\"groupPriorityMinimum\":1,"
                   "\"versionPriority\":1},\"status\":{\"conditions\":[{\"type\":\"Available\","
                   "\"status\":\"False\",\"reason\":\"Mine\"}]}}");
    expect_available(e, "v1.coordination.k8s.io", "True", "Local",
                     "Local APIServices are always available");
    /* The default port. */
    create_apiservice(e, "nowhere", true);
    assert_int_equal(req(e, "GET", "/apis/apiregistration.k8s.io/v1/apiservices/" AS, NULL, &b),
                     200);
    assert_int_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "spec"), "service"), "port")
            ->valueint,
        443);
    cJSON_Delete(b);
}

static void test_availability_reasons(void **state)
{
    struct env *e = *state;
    cJSON *b = NULL;
    struct call c = {.token = "alice-t", .path = PREFIX "/nodemetrics"};

    create_apiservice(e, "backend", false);
    expect_available(e, AS, "False", "ServiceNotFound",
                     "service/backend in \"test-ns\" is not present");
    /* Not available: 503 without trying the backend. */
    assert_int_equal(call(e, &c, &b), 503);
    expect_str(b, "reason", "ServiceUnavailable");
    expect_str(b, "message", "the server is currently unable to handle the request");
    cJSON_Delete(b);
    assert_int_equal(backend_hits(&e->be), 0);
    create_namespace(e);
    create_service(e);
    expect_available(e, AS, "False", "EndpointsNotFound",
                     "cannot find endpoints for service/backend in \"test-ns\"");
    create_endpoints(e, "other");
    expect_available(e, AS, "False", "MissingEndpoints",
                     "endpoints for service/backend in \"test-ns\" have no addresses with port "
                     "name \"https\"");
    assert_int_equal(req(e, "DELETE", "/api/v1/namespaces/test-ns/endpoints/backend", NULL, NULL),
                     200);
    create_endpoints(e, "https");
    expect_available(e, AS, "True", "Passed", "all checks passed");
    /* Written only on change: the resourceVersion stays while nothing changes. */
    {
        cJSON *o1 = NULL, *o2 = NULL;
        struct timespec t = {0, 800L * 1000000};
        assert_int_equal(
            req(e, "GET", "/apis/apiregistration.k8s.io/v1/apiservices/" AS, NULL, &o1), 200);
        (void)nanosleep(&t, NULL); /* a couple of 300 ms rounds */
        assert_int_equal(
            req(e, "GET", "/apis/apiregistration.k8s.io/v1/apiservices/" AS, NULL, &o2), 200);
        assert_string_equal(str_at(o1, "metadata.resourceVersion"),
                            str_at(o2, "metadata.resourceVersion"));
        cJSON_Delete(o1);
        cJSON_Delete(o2);
    }
    /* The Table kubectl get apiservices shows. */
    {
        const char *const accept[] = {"Accept: application/json;as=Table;v=v1;g=meta.k8s.io", NULL};
        struct call t = {.token = "alice-t",
                         .path = "/apis/apiregistration.k8s.io/v1/apiservices",
                         .headers = accept};
        assert_int_equal(call(e, &t, &b), 200);
        expect_str(b, "columnDefinitions.1.name", "Service");
        expect_str(b, "columnDefinitions.2.name", "Available");
        expect_str(b, "rows.0.cells.0", AS);
        expect_str(b, "rows.0.cells.1", "test-ns/backend");
        expect_str(b, "rows.0.cells.2", "True");
        cJSON_Delete(b);
    }
}

/* A caBundle that did not sign the backend's certificate: the check fails on TLS. */
static void test_wrong_ca(void **state)
{
    struct env *e = *state;
    struct tls_pem other = {0};
    struct strbuf b = STRBUF_INIT;
    char *m;

    create_namespace(e);
    create_service(e);
    create_endpoints(e, "https");
    assert_int_equal(tls_make_ca("other-ca", 30, &other), 0);
    strbuf_addstr(&b, AS_HEAD "\"metadata\":{\"name\":\"" AS "\"},\"spec\":{\"group\":\"" GROUP
                              "\",\"version\":\"v1alpha1\",\"service\":{\"namespace\":"
                              "\"test-ns\",\"name\":\"backend\"},\"groupPriorityMinimum\":1000,"
                              "\"versionPriority\":15,\"caBundle\":\"");
    strbuf_add_base64(&b, other.cert, strlen(other.cert));
    strbuf_addstr(&b, "\"}}");
    create(e, "/apis/apiregistration.k8s.io/v1/apiservices", b.buf);
    m = wait_available(e, AS, "False", "FailedDiscoveryCheck");
    assert_non_null(strstr(m, "failing or missing response from https://127.0.0.1:"));
    free(m);
    assert_int_equal(backend_hits(&e->be), 0);
    tls_pem_release(&other);
    strbuf_release(&b);
}

static void test_discovery(void **state)
{
    struct env *e = *state;
    cJSON *b = NULL;
    const cJSON *g;
    bool found = false;

    register_backend(e);
    assert_int_equal(req(e, "GET", "/apis", NULL, &b), 200);
    cJSON_ArrayForEach(g, cJSON_GetObjectItem(b, "groups"))
    {
        if (strcmp(str_at(g, "name"), GROUP))
            continue;
        found = true;
        expect_str(g, "versions.0.groupVersion", GV);
        expect_str(g, "preferredVersion.version", "v1alpha1");
    }
    assert_true(found);
    cJSON_Delete(b);
    assert_int_equal(req(e, "GET", "/apis/" GROUP, NULL, &b), 200);
    expect_str(b, "kind", "APIGroup");
    expect_str(b, "preferredVersion.groupVersion", GV);
    cJSON_Delete(b);
    /* The group-version's own resource list comes from the backend. */
    assert_int_equal(req(e, "GET", PREFIX, NULL, &b), 200);
    expect_str(b, "kind", "APIResourceList");
    expect_str(b, "resources.0.name", "nodemetrics");
    cJSON_Delete(b);
    /* So does its OpenAPI document, which the index names. */
    assert_int_equal(req(e, "GET", "/openapi/v3", NULL, &b), 200);
    expect_str(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "paths"), "apis/" GV),
               "serverRelativeURL", "/openapi/v3/apis/" GV);
    cJSON_Delete(b);
    assert_int_equal(req(e, "GET", "/openapi/v3/apis/" GV, NULL, &b), 200);
    expect_str(b, "path", "/openapi/v3/apis/" GV);
    cJSON_Delete(b);
    /* Gone with the APIService. */
    assert_int_equal(
        req(e, "DELETE", "/apis/apiregistration.k8s.io/v1/apiservices/" AS, NULL, NULL), 200);
    for (double end = now_s() + 60;;) {
        long code = req(e, "GET", "/apis/" GROUP, NULL, NULL);
        if (code == 404)
            break;
        assert_int_equal(code, 200);
        assert_true(now_s() < end);
    }
}

static void test_proxy(void **state)
{
    struct env *e = *state;
    const char *const forged[] = {"X-Remote-User: mallory", "X-Remote-Group: system:masters",
                                  "X-Remote-Extra-Forged: 1", NULL};
    struct strbuf hdrs = STRBUF_INIT;
    struct call c = {.token = "alice-t",
                     .path = PREFIX "/nodemetrics?labelSelector=a%3Db%2Cc&limit=5",
                     .headers = forged,
                     .resp_headers = &hdrs};
    cJSON *b = NULL;

    register_backend(e);
    assert_int_equal(call(e, &c, &b), 200);
    expect_str(b, "kind", "Echo");
    expect_str(b, "method", "GET");
    expect_str(b, "path", PREFIX "/nodemetrics");
    expect_str(b, "labelSelector", "a=b,c");
    expect_str(b, "user", "alice");
    expect_str(b, "groups", "devs,ops,system:authenticated");
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(b, "authorization")));
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(b, "forged")));
    cJSON_Delete(b);
    /* The backend's status and headers come back as they are. */
    assert_non_null(strcasestr(hdrs.buf, "Content-Type: application/vnd.test+json"));
    assert_non_null(strcasestr(hdrs.buf, "X-Backend: echo"));

    /* 200 headers of the caller's (up to 128 crowded the identity out): the identity still
     * reaches the backend; past HTTP_MAX_REQUEST_HEADERS the request is refused whole. */
    {
        char *many[301] = {NULL}, *saved;
        struct call m = {.token = "alice-t", .path = PREFIX "/nodemetrics"};

        for (int i = 0; i < 300; i++) {
            struct strbuf line = STRBUF_INIT;
            strbuf_addf(&line, "X-Filler-%d: %d", i, i);
            many[i] = strbuf_detach(&line, NULL);
        }
        saved = many[200];
        many[200] = NULL;
        m.headers = (const char *const *)many;
        assert_int_equal(call(e, &m, &b), 200);
        expect_str(b, "user", "alice");
        expect_str(b, "groups", "devs,ops,system:authenticated");
        cJSON_Delete(b);
        b = NULL;
        many[200] = saved;
        m = (struct call){.token = "alice-t", .path = PREFIX "/nodemetrics"};
        m.headers = (const char *const *)many;
        assert_int_equal(call(e, &m, &b), 431);
        cJSON_Delete(b);
        b = NULL;
        for (int i = 0; i < 300; i++)
            free(many[i]);
    }

    /* PUT of a subresource and POST, with their bodies. */
    assert_int_equal(
        req(e, "PUT", PREFIX "/nodemetrics/n1/status", "{\"metadata\":{\"name\":\"n1\"}}", &b),
        200);
    expect_str(b, "method", "PUT");
    expect_str(b, "path", PREFIX "/nodemetrics/n1/status");
    expect_str(b, "body", "{\"metadata\":{\"name\":\"n1\"}}");
    expect_str(b, "contentType", "application/json");
    cJSON_Delete(b);
    assert_int_equal(req(e, "POST", PREFIX "/nodemetrics", "{}", &b), 201);
    expect_str(b, "method", "POST");
    cJSON_Delete(b);

    /* A client certificate identity (the admin's) is passed on too. */
    {
        CURL *h = curl_easy_init();
        struct strbuf out = STRBUF_INIT, url = STRBUF_INIT, path = STRBUF_INIT;
        long code = 0;
        strbuf_addf(&url, "%s" PREFIX "/nodemetrics/n1", e->base);
        (void)curl_easy_setopt(h, CURLOPT_URL, url.buf);
        (void)curl_easy_setopt(h, CURLOPT_CAINFO, e->ca_file);
        strbuf_addf(&path, "%s/admin.crt", e->pki);
        (void)curl_easy_setopt(h, CURLOPT_SSLCERT, path.buf);
        strbuf_reset(&path);
        strbuf_addf(&path, "%s/admin.key", e->pki);
        (void)curl_easy_setopt(h, CURLOPT_SSLKEY, path.buf);
        (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
        (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, &out);
        assert_int_equal(curl_easy_perform(h), CURLE_OK);
        (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        assert_int_equal(code, 200);
        b = cJSON_Parse(out.buf);
        expect_str(b, "user", "admin");
        expect_str(b, "groups", "system:masters,system:authenticated");
        cJSON_Delete(b);
        curl_easy_cleanup(h);
        strbuf_release(&out);
        strbuf_release(&url);
        strbuf_release(&path);
    }
    strbuf_release(&hdrs);
}

static void test_unauthenticated(void **state)
{
    struct env *e = *state;
    struct call c = {.path = PREFIX "/nodemetrics"};
    struct call bad = {.token = "nope", .path = PREFIX "/nodemetrics"};
    cJSON *b = NULL;
    int hits;

    register_backend(e);
    hits = backend_hits(&e->be);
    assert_int_equal(call(e, &c, &b), 401);
    expect_str(b, "reason", "Unauthorized");
    cJSON_Delete(b);
    assert_int_equal(call(e, &bad, NULL), 401);
    assert_int_equal(backend_hits(&e->be), hits);
}

static void test_node_rule(void **state)
{
    struct env *e = *state;
    struct call own = {.token = "node1-t",
                       .method = "PUT",
                       .path = PREFIX "/nodemetrics/n1/status",
                       .body = "{\"metadata\":{\"name\":\"n1\"}}"};
    struct call other = own, lying = own;
    cJSON *b = NULL;
    int hits;

    register_backend(e);
    assert_int_equal(call(e, &own, &b), 200);
    expect_str(b, "user", "system:node:n1");
    expect_str(b, "groups", "system:nodes,system:authenticated");
    cJSON_Delete(b);
    hits = backend_hits(&e->be);
    other.path = PREFIX "/nodemetrics/n2/status";
    other.body = "{\"metadata\":{\"name\":\"n2\"}}";
    assert_int_equal(call(e, &other, &b), 403);
    expect_str(b, "reason", "Forbidden");
    cJSON_Delete(b);
    lying.body = "{\"metadata\":{\"name\":\"n2\"}}";
    assert_int_equal(call(e, &lying, &b), 403);
    cJSON_Delete(b);
    assert_int_equal(backend_hits(&e->be), hits);
}

/* A watch client on its own thread: what arrived so far, and when it ended. */
struct watcher {
    struct env *e;
    pthread_mutex_t lock;
    struct strbuf got;
    bool done;
    CURLcode rc;
    long code;
};

static size_t watch_data(char *p, size_t size, size_t n, void *ud)
{
    struct watcher *w = ud;

    CHECK(pthread_mutex_lock(&w->lock) == 0);
    strbuf_add(&w->got, p, size * n);
    CHECK(pthread_mutex_unlock(&w->lock) == 0);
    return size * n;
}

static void *watch_thread(void *ud)
{
    struct watcher *w = ud;
    CURL *h = curl_easy_init();
    struct strbuf url = STRBUF_INIT;
    struct curl_slist *hdrs = curl_slist_append(NULL, "Authorization: Bearer alice-t");

    strbuf_addf(&url, "%s" PREFIX "/nodemetrics?watch=1&resourceVersion=0", w->e->base);
    (void)curl_easy_setopt(h, CURLOPT_URL, url.buf);
    (void)curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    (void)curl_easy_setopt(h, CURLOPT_CAINFO, w->e->ca_file);
    (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, watch_data);
    (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, w);
    (void)curl_easy_setopt(h, CURLOPT_TIMEOUT, 120L);
    w->rc = curl_easy_perform(h);
    (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &w->code);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    strbuf_release(&url);
    CHECK(pthread_mutex_lock(&w->lock) == 0);
    w->done = true;
    CHECK(pthread_mutex_unlock(&w->lock) == 0);
    return NULL;
}

static bool watcher_has(struct watcher *w, const char *what)
{
    bool has;

    CHECK(pthread_mutex_lock(&w->lock) == 0);
    has = w->got.buf && strstr(w->got.buf, what);
    CHECK(pthread_mutex_unlock(&w->lock) == 0);
    return has;
}

static void wait_has(struct watcher *w, const char *what)
{
    struct timespec step = {0, 10L * 1000000};

    for (double end = now_s() + 60; !watcher_has(w, what);) {
        if (now_s() > end)
            fail_msg("the watch never got %s", what);
        (void)nanosleep(&step, NULL);
    }
}

static void test_watch_streams(void **state)
{
    struct env *e = *state;
    struct watcher w = {.e = e, .got = STRBUF_INIT};
    pthread_t t;

    CHECK(pthread_mutex_init(&w.lock, NULL) == 0);
    register_backend(e);
    assert_int_equal(pthread_create(&t, NULL, watch_thread, &w), 0);
    /* The first event arrives while the backend still holds the second one back. */
    wait_has(&w, "\"ADDED\"");
    assert_false(watcher_has(&w, "\"MODIFIED\""));
    backend_release(&e->be);
    wait_has(&w, "\"MODIFIED\"");
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(w.rc, CURLE_OK);
    assert_int_equal(w.code, 200);
    (void)pthread_mutex_destroy(&w.lock);
    strbuf_release(&w.got);
}

/* Stopping the API server ends a proxied watch that is still open. */
static void test_stop_with_open_watch(void **state)
{
    struct env *e = *state;
    struct watcher w = {.e = e, .got = STRBUF_INIT};
    pthread_t t;

    CHECK(pthread_mutex_init(&w.lock, NULL) == 0);
    register_backend(e);
    assert_int_equal(pthread_create(&t, NULL, watch_thread, &w), 0);
    wait_has(&w, "\"ADDED\"");
    apiserver_stop_watches(e->api);
    http_server_stop(e->http);
    e->http = NULL;
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_false(watcher_has(&w, "\"MODIFIED\""));
    (void)pthread_mutex_destroy(&w.lock);
    strbuf_release(&w.got);
}

static void test_backend_down(void **state)
{
    struct env *e = *state;
    struct call c = {.token = "alice-t", .path = PREFIX "/nodemetrics"};
    cJSON *b = NULL;
    char *m, want[160];

    register_backend(e);
    backend_stop(&e->be);
    m = wait_available(e, AS, "False", "FailedDiscoveryCheck");
    (void)snprintf(want, sizeof(want), "dial tcp 127.0.0.1:%u: connect: connection refused",
                   e->be_port);
    if (!strstr(m, want))
        fail_msg("message %s", m);
    free(m);
    assert_int_equal(call(e, &c, &b), 503);
    expect_str(b, "reason", "ServiceUnavailable");
    cJSON_Delete(b);
    assert_true(c.seconds < 5);
    /* Back on the same port: Available again, and proxied again. */
    backend_start(&e->be, e->p.front_proxy_ca.cert, e->be_port);
    expect_available(e, AS, "True", "Passed", "all checks passed");
    assert_int_equal(call(e, &c, NULL), 200);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_auth_configmap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_validation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_availability_reasons, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrong_ca, setup, teardown),
        cmocka_unit_test_setup_teardown(test_discovery, setup, teardown),
        cmocka_unit_test_setup_teardown(test_proxy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unauthenticated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_rule, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch_streams, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_with_open_watch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backend_down, setup, teardown),
    };

    (void)curl_global_init(CURL_GLOBAL_DEFAULT);
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
