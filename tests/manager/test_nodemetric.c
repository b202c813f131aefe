/*
 * Tests for manager/nodemetric/nodemetric: the leader manager's in-memory NodeMetric API,
 * served by the project's HTTP server and called with the project's HTTP client over plain
 * HTTP without authentication (who may call it is test_nodemetric_auth.c's subject).
 *
 * Covered: before activation every API path answers 503 with Retry-After: 1 and the manager's
 * own calls -EAGAIN; activation takes an epoch in 1 .. 2^23-1, once; resourceVersions are
 * (epoch << 40) | n and grow with every write; a client holding a resourceVersion of an older
 * epoch (the previous leader's) gets 410 Expired from a list at that exact revision and from a
 * watch, while a "not older than" list is served, and a revision of a later epoch is 504;
 * set_spec creates the object with an empty status, later replaces only its spec (generation
 * bumped) and writes nothing when the spec is unchanged; a status PUT stores the status and
 * keeps the spec, a status merge PATCH merges, a stale resourceVersion conflicts, a status write
 * to an unknown node is 404; create, delete, deletecollection and writes of the main resource
 * are 405; remove drops the object and a watcher sees DELETED; the listener hears each status
 * write and no refused one; one NodeMetric is bounded in size (413 RequestEntityTooLarge, the
 * stored object untouched) per object, not in total, by max_object and by default at 1 MiB
 * (what `koord manager` runs with); Table output for kubectl.
 *
 * Why: node agents report to this API every few seconds and the NodeResource controller and
 * the scheduler list and watch it; a leader change must make their cached resourceVersions
 * expire instead of silently going back in time, and nothing a client sends may replace what
 * the manager owns (the spec) or grow the leader's memory without bound.
 */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "apiserver/store_memory.h"
#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "http/client.h"
#include "http/server.h"
#include "manager/nodemetric/nodemetric.h"
#include "testutil.h"

#define GV           NODEMETRIC_GROUP "/" NODEMETRIC_VERSION
#define PATH         "/apis/" GV "/nodemetrics"
#define EPOCH        3
#define BASE         ((uint64_t)EPOCH << STORE_MEMORY_EPOCH_SHIFT)
#define MAX_OBJECT   4096
#define TABLE_ACCEPT "application/json;as=Table;v=v1;g=meta.k8s.io"
#define MERGE        "application/merge-patch+json"
/* Generous for valgrind on a loaded 2-core machine; a passing run never waits this long. */
#define TIMEOUT_MS 60000

#define SPEC1                                                                                      \
    "{\"metricCollectPolicy\":{\"aggregateDurationSeconds\":300,\"reportIntervalSeconds\":60,"     \
    "\"nodeAggregatePolicy\":{\"durations\":[\"5m0s\"]},\"nodeMemoryCollectPolicy\":"              \
    "\"usageWithoutPageCache\"}}"
#define SPEC2                                                                                      \
    "{\"metricCollectPolicy\":{\"aggregateDurationSeconds\":600,\"reportIntervalSeconds\":30,"     \
    "\"nodeAggregatePolicy\":{\"durations\":[\"5m0s\",\"10m0s\"]},\"nodeMemoryCollectPolicy\":"    \
    "\"usageWithPageCache\"}}"
#define STATUS1                                                                                    \
    "{\"updateTime\":\"2024-05-01T10:00:00Z\",\"nodeMetric\":{\"nodeUsage\":{\"resources\":"       \
    "{\"cpu\":\"1500m\",\"memory\":\"2Gi\"}}}}"

struct srv {
    struct nodemetric_server *nm;
    struct http_server *http;
    char base[64]; /* http://127.0.0.1:<port> */
};

struct env {
    struct srv s;
    struct http_client *c;
    pthread_mutex_t lock;
    struct strbuf heard; /* "<node> " per listener call */
};

/* ---- the listener ---- */

static void on_report(void *userdata, const char *node)
{
    struct env *e = userdata;

    CHECK(pthread_mutex_lock(&e->lock) == 0);
    strbuf_addf(&e->heard, "%s ", node);
    CHECK(pthread_mutex_unlock(&e->lock) == 0);
}

/* What the listener heard since the last call, then forgets it (caller frees). */
static char *heard(struct env *e)
{
    char *s;

    CHECK(pthread_mutex_lock(&e->lock) == 0);
    s = xstrdup(e->heard.buf);
    strbuf_reset(&e->heard);
    CHECK(pthread_mutex_unlock(&e->lock) == 0);
    return s;
}

static void assert_heard(struct env *e, const char *want)
{
    char *got = heard(e);
    bool eq = !strcmp(got, want);

    if (!eq)
        print_error("listener heard \"%s\", want \"%s\"\n", got, want);
    free(got);
    assert_true(eq);
}

/* ---- servers ---- */

static void srv_start(struct srv *s, size_t max_object, struct env *listener)
{
    struct nodemetric_opts o = {.max_object = max_object};

    assert_int_equal(nodemetric_server_new(&o, &s->nm), 0);
    if (listener)
        nodemetric_server_set_listener(s->nm, on_report, listener);
    assert_int_equal(http_server_start(&(struct http_server_opts){.host = "127.0.0.1"},
                                       nodemetric_server_handle, s->nm, &s->http),
                     0);
    (void)snprintf(s->base, sizeof(s->base), "http://127.0.0.1:%u", http_server_port(s->http));
}

static void srv_stop(struct srv *s)
{
    if (s->nm)
        nodemetric_server_stop_watches(s->nm);
    http_server_stop(s->http);
    nodemetric_server_free(s->nm);
    *s = (struct srv){0};
}

static int setup(void **state)
{
    struct env *e = xcalloc(1, sizeof(*e));

    CHECK(pthread_mutex_init(&e->lock, NULL) == 0);
    strbuf_init(&e->heard);
    srv_start(&e->s, MAX_OBJECT, e);
    assert_int_equal(http_client_new(&(struct http_client_opts){0}, &e->c), 0);
    *state = e;
    return 0;
}

static int setup_active(void **state)
{
    struct env *e;

    (void)setup(state);
    e = *state;
    assert_int_equal(nodemetric_server_activate(e->s.nm, EPOCH), 0);
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;

    srv_stop(&e->s);
    http_client_free(e->c);
    strbuf_release(&e->heard);
    (void)pthread_mutex_destroy(&e->lock);
    free(e);
    return 0;
}

/* ---- requests ---- */

struct reply {
    long status;
    long retry_after_s;
    cJSON *body; /* the parsed body; NULL when it is not JSON */
};

static void reply_release(struct reply *r)
{
    cJSON_Delete(r->body);
    *r = (struct reply){0};
}

/* One request to s; the body (JSON text or NULL) goes with Content-Type ctype. */
static struct reply call(struct env *e, const struct srv *s, const char *method, const char *path,
                         const char *ctype, const char *body, const char *accept)
{
    char url[512], ct[128], ac[128];
    const char *headers[3] = {NULL};
    size_t nh = 0;
    struct http_client_resp resp = HTTP_CLIENT_RESP_INIT;
    struct reply r = {0};
    int rc;

    (void)snprintf(url, sizeof(url), "%s%s", s->base, path);
    if (body) {
        (void)snprintf(ct, sizeof(ct), "Content-Type: %s", ctype ? ctype : "application/json");
        headers[nh++] = ct;
    }
    if (accept) {
        (void)snprintf(ac, sizeof(ac), "Accept: %s", accept);
        headers[nh++] = ac;
    }
    rc = http_client_do(e->c,
                        &(struct http_client_req){.method = method,
                                                  .url = url,
                                                  .headers = headers,
                                                  .body = body,
                                                  .body_len = body ? strlen(body) : 0,
                                                  .timeout_ms = TIMEOUT_MS},
                        &resp);
    if (rc != 0) {
        http_client_resp_release(&resp);
        fail_msg("%s %s: transport error %d", method, url, rc);
    }
    r.status = resp.status;
    r.retry_after_s = resp.retry_after_s;
    r.body = cJSON_ParseWithLength(resp.body.buf, resp.body.len);
    http_client_resp_release(&resp);
    return r;
}

/* The member at a dotted path ("metadata.name", "items.0.spec"), or NULL. */
static const cJSON *at(const cJSON *o, const char *path)
{
    char buf[128], *save = NULL;
    const cJSON *v = o;

    (void)snprintf(buf, sizeof(buf), "%s", path);
    for (char *p = strtok_r(buf, ".", &save); p && v; p = strtok_r(NULL, ".", &save)) {
        uint32_t i;
        if (cJSON_IsArray(v) && parse_u32(p, &i) == 0)
            v = cJSON_GetArrayItem(v, (int)i);
        else
            v = cJSON_GetObjectItemCaseSensitive(v, p);
    }
    return v;
}

static const char *str_at(const cJSON *o, const char *path)
{
    const cJSON *v = at(o, path);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void expect_str(const cJSON *o, const char *path, const char *want)
{
    const char *got = str_at(o, path);

    if (!got || strcmp(got, want)) {
        char *txt = cJSON_PrintUnformatted(o);
        print_error("%s: got \"%s\", want \"%s\" in %s\n", path, got ? got : "(none)", want,
                    txt ? txt : "(null)");
        cJSON_free(txt);
        fail();
    }
}

/* A Status failure with this code and reason. */
static void expect_status(struct reply *r, long code, const char *reason)
{
    if (r->status != code) {
        char *txt = r->body ? cJSON_PrintUnformatted(r->body) : NULL;
        print_error("HTTP %ld, want %ld: %s\n", r->status, code, txt ? txt : "(no JSON body)");
        cJSON_free(txt);
        fail();
    }
    expect_str(r->body, "kind", "Status");
    expect_str(r->body, "status", "Failure");
    expect_str(r->body, "reason", reason);
    assert_int_equal((long)cJSON_GetNumberValue(at(r->body, "code")), code);
}

static void expect_ok(struct reply *r, long code)
{
    if (r->status != code) {
        char *txt = r->body ? cJSON_PrintUnformatted(r->body) : NULL;
        print_error("HTTP %ld, want %ld: %s\n", r->status, code, txt ? txt : "(no JSON body)");
        cJSON_free(txt);
        fail();
    }
    assert_non_null(r->body);
}

static uint64_t rv_of(const cJSON *o)
{
    const char *s = str_at(o, "metadata.resourceVersion");
    int64_t v = -1;

    assert_non_null(s);
    assert_int_equal(parse_i64(s, &v), 0);
    assert_true(v > 0);
    return (uint64_t)v;
}

static double number_at(const cJSON *o, const char *path)
{
    const cJSON *v = at(o, path);

    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

/* GET of one NodeMetric; fails unless it is 200 (caller frees). */
static cJSON *get_nm(struct env *e, const struct srv *s, const char *node)
{
    char path[128];
    struct reply r;
    cJSON *o;

    (void)snprintf(path, sizeof(path), PATH "/%s", node);
    r = call(e, s, "GET", path, NULL, NULL, NULL);
    expect_ok(&r, 200);
    o = r.body;
    r.body = NULL;
    reply_release(&r);
    return o;
}

static void set_spec(struct env *e, const char *node, const char *spec)
{
    cJSON *sp = J(spec);

    assert_int_equal(nodemetric_server_set_spec(e->s.nm, node, sp), 0);
    cJSON_Delete(sp);
}

/* A NodeMetric with the given spec and status (JSON text) as a client writes it. */
static char *object_text(const char *node, const char *spec, const char *status)
{
    struct strbuf sb = STRBUF_INIT;

    strbuf_addf(&sb,
                "{\"apiVersion\":\"" GV "\",\"kind\":\"NodeMetric\",\"metadata\":{\"name\":\"%s\"},"
                "\"spec\":%s,\"status\":%s}",
                node, spec, status);
    return strbuf_detach(&sb, NULL);
}

/* PUT .../<node>/status with that status (and spec, which the server must ignore). */
static struct reply put_status(struct env *e, const struct srv *s, const char *node,
                               const char *spec, const char *status)
{
    char path[128], *body = object_text(node, spec, status);
    struct reply r;

    (void)snprintf(path, sizeof(path), PATH "/%s/status", node);
    r = call(e, s, "PUT", path, NULL, body, NULL);
    free(body);
    return r;
}

/* A status reporting n pods (about 90 bytes each). */
static char *pods_status(int n)
{
    struct strbuf sb = STRBUF_INIT;

    strbuf_addstr(&sb, "{\"updateTime\":\"2024-05-01T10:00:00Z\",\"podsMetric\":[");
    for (int i = 0; i < n; i++)
        strbuf_addf(
            &sb,
            "%s{\"namespace\":\"default\",\"name\":\"pod-%04d\",\"podUsage\":{\"resources\":"
            "{\"cpu\":\"100m\",\"memory\":\"64Mi\"}}}",
            i ? "," : "", i);
    strbuf_addstr(&sb, "]}");
    return strbuf_detach(&sb, NULL);
}

static struct nodemetric_stats stats(struct env *e)
{
    struct nodemetric_stats st;

    nodemetric_server_stats(e->s.nm, &st);
    return st;
}

/* ---- tests ---- */

static void test_unavailable_before_activation(void **state)
{
    struct env *e = *state;
    struct strbuf metrics = STRBUF_INIT;
    cJSON *spec = J(SPEC1), *o = NULL;
    struct nodemetric_stats st;
    struct reply r;
    char *body = object_text("n1", SPEC1, STATUS1);

    /* Every API path, reads and writes, discovery too: 503 with Retry-After: 1. */
    static const char *const reqs[][2] = {{"GET", PATH},
                                          {"GET", PATH "/n1"},
                                          {"GET", PATH "?watch=1"},
                                          {"PUT", PATH "/n1/status"},
                                          {"GET", "/apis/" GV},
                                          {"GET", "/apis"}};
    for (size_t i = 0; i < ARRAY_SIZE(reqs); i++) {
        r = call(e, &e->s, reqs[i][0], reqs[i][1], NULL, strcmp(reqs[i][0], "GET") ? body : NULL,
                 NULL);
        expect_status(&r, 503, "ServiceUnavailable");
        assert_int_equal(r.retry_after_s, 1);
        assert_int_equal((long)number_at(r.body, "details.retryAfterSeconds"), 1);
        reply_release(&r);
    }

    /* The manager's own calls wait for activation too, and nothing is counted. */
    assert_false(nodemetric_server_active(e->s.nm));
    assert_int_equal(nodemetric_server_set_spec(e->s.nm, "n1", spec), -EAGAIN);
    assert_int_equal(nodemetric_server_remove(e->s.nm, "n1"), -EAGAIN);
    assert_int_equal(nodemetric_server_get(e->s.nm, "n1", &o), -EAGAIN);
    assert_null(o);
    st = stats(e);
    assert_int_equal(st.reports, 0);
    assert_int_equal(st.objects, 0);
    assert_int_equal(st.revision, 0);
    nodemetric_server_render_metrics(e->s.nm, &metrics);
    assert_int_equal(metrics.len, 0);

    /* Epochs outside 1 .. 2^23-1 are refused and leave it inactive. */
    assert_int_equal(nodemetric_server_activate(e->s.nm, 0), -EINVAL);
    assert_int_equal(nodemetric_server_activate(e->s.nm, STORE_MEMORY_MAX_EPOCH + 1), -EINVAL);
    assert_false(nodemetric_server_active(e->s.nm));
    r = call(e, &e->s, "GET", PATH, NULL, NULL, NULL);
    expect_status(&r, 503, "ServiceUnavailable");
    reply_release(&r);

    /* Activation, once. */
    assert_int_equal(nodemetric_server_activate(e->s.nm, EPOCH), 0);
    assert_true(nodemetric_server_active(e->s.nm));
    assert_int_equal(nodemetric_server_activate(e->s.nm, EPOCH + 1), -EALREADY);
    r = call(e, &e->s, "GET", PATH, NULL, NULL, NULL);
    expect_ok(&r, 200);
    expect_str(r.body, "kind", "NodeMetricList");
    assert_int_equal(rv_of(r.body), BASE);
    assert_int_equal(cJSON_GetArraySize(at(r.body, "items")), 0);
    assert_int_equal(r.retry_after_s, 0);
    reply_release(&r);
    nodemetric_server_render_metrics(e->s.nm, &metrics);
    assert_non_null(strstr(metrics.buf, "apiserver_request_total"));

    strbuf_release(&metrics);
    cJSON_Delete(spec);
    free(body);
}

static void test_resource_versions(void **state)
{
    struct env *e = *state;
    struct nodemetric_stats st;
    struct reply r;
    cJSON *o;
    uint64_t rv;

    set_spec(e, "n1", SPEC1);
    o = get_nm(e, &e->s, "n1");
    assert_int_equal(rv_of(o), BASE | 1);
    cJSON_Delete(o);
    set_spec(e, "n2", SPEC1);
    o = get_nm(e, &e->s, "n2");
    assert_int_equal(rv_of(o), BASE | 2);
    cJSON_Delete(o);

    /* Client writes take the next revisions, in the same epoch. */
    r = put_status(e, &e->s, "n1", SPEC1, STATUS1);
    expect_ok(&r, 200);
    assert_int_equal(rv_of(r.body), BASE | 3);
    reply_release(&r);
    r = call(e, &e->s, "PATCH", PATH "/n2/status", MERGE, "{\"status\":" STATUS1 "}", NULL);
    expect_ok(&r, 200);
    assert_int_equal(rv_of(r.body), BASE | 4);
    reply_release(&r);

    /* The list carries the store's revision and each item its own. */
    r = call(e, &e->s, "GET", PATH, NULL, NULL, NULL);
    expect_ok(&r, 200);
    assert_int_equal(rv_of(r.body), BASE | 4);
    assert_int_equal(cJSON_GetArraySize(at(r.body, "items")), 2);
    expect_str(r.body, "items.0.metadata.name", "n1");
    assert_int_equal(rv_of(at(r.body, "items.0")), BASE | 3);
    expect_str(r.body, "items.1.metadata.name", "n2");
    assert_int_equal(rv_of(at(r.body, "items.1")), BASE | 4);
    reply_release(&r);

    /* An unchanged spec writes nothing; a changed one takes the next revision. */
    set_spec(e, "n1", SPEC1);
    st = stats(e);
    assert_int_equal(st.revision, BASE | 4);
    assert_int_equal(st.objects, 2);
    assert_int_equal(st.reports, 2);
    set_spec(e, "n1", SPEC2);
    assert_int_equal(nodemetric_server_get(e->s.nm, "n1", &o), 0);
    rv = rv_of(o);
    assert_int_equal(rv, BASE | 5);
    assert_int_equal(rv >> STORE_MEMORY_EPOCH_SHIFT, EPOCH);
    cJSON_Delete(o);
    assert_int_equal(stats(e).revision, BASE | 5);
}

static void test_older_epoch_expired(void **state)
{
    struct env *e = *state;
    struct srv next = {0};
    char path[256];
    struct reply r;
    uint64_t old_rv, new_rv;
    cJSON *o, *spec = J(SPEC1);

    /* The old leader (epoch EPOCH) hands out revisions a client keeps. */
    set_spec(e, "n1", SPEC1);
    set_spec(e, "n2", SPEC1);
    r = put_status(e, &e->s, "n1", SPEC1, STATUS1);
    expect_ok(&r, 200);
    reply_release(&r);
    r = call(e, &e->s, "GET", PATH, NULL, NULL, NULL);
    expect_ok(&r, 200);
    old_rv = rv_of(r.body);
    assert_int_equal(old_rv, BASE | 3);
    reply_release(&r);

    /* The next leader's term starts a new epoch; agents report there again. */
    srv_start(&next, MAX_OBJECT, NULL);
    assert_int_equal(nodemetric_server_activate(next.nm, EPOCH + 1), 0);
    assert_int_equal(nodemetric_server_set_spec(next.nm, "n1", spec), 0);
    r = call(e, &next, "GET", PATH, NULL, NULL, NULL);
    expect_ok(&r, 200);
    new_rv = rv_of(r.body);
    assert_int_equal(new_rv, ((uint64_t)(EPOCH + 1) << STORE_MEMORY_EPOCH_SHIFT) | 1);
    assert_true(new_rv > old_rv); /* revisions never go back across a failover */
    reply_release(&r);

    /* A list at exactly the old revision, or paged from it, and a watch from it: 410. */
    (void)snprintf(path, sizeof(path), PATH "?resourceVersion=%llu&resourceVersionMatch=Exact",
                   (unsigned long long)old_rv);
    r = call(e, &next, "GET", path, NULL, NULL, NULL);
    expect_status(&r, 410, "Expired");
    reply_release(&r);
    (void)snprintf(path, sizeof(path), PATH "?resourceVersion=%llu&limit=10",
                   (unsigned long long)old_rv);
    r = call(e, &next, "GET", path, NULL, NULL, NULL);
    expect_status(&r, 410, "Expired");
    reply_release(&r);
    (void)snprintf(path, sizeof(path), PATH "?watch=1&resourceVersion=%llu",
                   (unsigned long long)old_rv);
    r = call(e, &next, "GET", path, NULL, NULL, NULL);
    expect_status(&r, 410, "Expired");
    reply_release(&r);
    (void)snprintf(path, sizeof(path),
                   PATH "?watch=1&fieldSelector=metadata.name%%3Dn1&resourceVersion=%llu",
                   (unsigned long long)old_rv);
    r = call(e, &next, "GET", path, NULL, NULL, NULL);
    expect_status(&r, 410, "Expired");
    reply_release(&r);

    /* "Not older than" the old revision: the new state is, so it is served (Kubernetes'
     * resourceVersion semantics, reference section 5). */
    (void)snprintf(path, sizeof(path), PATH "?resourceVersion=%llu", (unsigned long long)old_rv);
    r = call(e, &next, "GET", path, NULL, NULL, NULL);
    expect_ok(&r, 200);
    assert_int_equal(rv_of(r.body), new_rv);
    reply_release(&r);

    /* The other way round, a revision the old store never reached is too large, not valid. */
    (void)snprintf(path, sizeof(path), PATH "?resourceVersion=%llu&resourceVersionMatch=Exact",
                   (unsigned long long)new_rv);
    r = call(e, &e->s, "GET", path, NULL, NULL, NULL);
    expect_status(&r, 504, "Timeout");
    reply_release(&r);

    /* The object the new leader serves is its own. */
    o = get_nm(e, &next, "n1");
    assert_int_equal(rv_of(o), new_rv);
    assert_json_eq(at(o, "status"), "{}");
    cJSON_Delete(o);
    cJSON_Delete(spec);
    srv_stop(&next);
}

static void test_set_spec(void **state)
{
    struct env *e = *state;
    cJSON *o, *o2 = NULL, *spec = J(SPEC1);
    uint64_t rv;
    struct reply r;

    /* Created with the spec and an empty status. */
    set_spec(e, "n1", SPEC1);
    o = get_nm(e, &e->s, "n1");
    expect_str(o, "apiVersion", GV);
    expect_str(o, "kind", "NodeMetric");
    expect_str(o, "metadata.name", "n1");
    assert_int_equal(strlen(str_at(o, "metadata.uid")), 36);
    assert_non_null(str_at(o, "metadata.creationTimestamp"));
    assert_int_equal((int)number_at(o, "metadata.generation"), 1);
    assert_json_eq(at(o, "spec"), SPEC1);
    assert_json_eq(at(o, "status"), "{}");
    /* The manager's view is the clients'. */
    assert_int_equal(nodemetric_server_get(e->s.nm, "n1", &o2), 0);
    assert_true(cJSON_Compare(o, o2, true));
    cJSON_Delete(o2);
    o2 = NULL;
    cJSON_Delete(o);

    /* A report fills the status; a new spec replaces the spec only. */
    r = put_status(e, &e->s, "n1", SPEC1, STATUS1);
    expect_ok(&r, 200);
    reply_release(&r);
    set_spec(e, "n1", SPEC2);
    o = get_nm(e, &e->s, "n1");
    assert_json_eq(at(o, "spec"), SPEC2);
    assert_json_eq(at(o, "status"), STATUS1);
    assert_int_equal((int)number_at(o, "metadata.generation"), 2);
    rv = rv_of(o);
    cJSON_Delete(o);

    /* The same spec again: no write. */
    set_spec(e, "n1", SPEC2);
    o = get_nm(e, &e->s, "n1");
    assert_int_equal(rv_of(o), rv);
    assert_int_equal((int)number_at(o, "metadata.generation"), 2);
    cJSON_Delete(o);

    /* Names that cannot be object names; a node that has none. */
    assert_int_equal(nodemetric_server_set_spec(e->s.nm, "Bad_Name", spec), -EINVAL);
    assert_int_equal(nodemetric_server_set_spec(e->s.nm, "", spec), -EINVAL);
    assert_int_equal(nodemetric_server_set_spec(e->s.nm, "a/b", spec), -EINVAL);
    assert_int_equal(nodemetric_server_get(e->s.nm, "n9", &o2), -ENOENT);
    assert_null(o2);
    assert_int_equal(stats(e).objects, 1);
    cJSON_Delete(spec);
}

static void test_status_put_and_patch(void **state)
{
    struct env *e = *state;
    char stale[256];
    struct reply r;
    cJSON *o;
    uint64_t rv;

    set_spec(e, "n1", SPEC1);
    o = get_nm(e, &e->s, "n1");
    rv = rv_of(o);
    cJSON_Delete(o);

    /* The spec a status PUT carries is ignored; the status is stored. */
    r = put_status(e, &e->s, "n1", SPEC2, STATUS1);
    expect_ok(&r, 200);
    assert_json_eq(at(r.body, "spec"), SPEC1);
    assert_json_eq(at(r.body, "status"), STATUS1);
    reply_release(&r);
    o = get_nm(e, &e->s, "n1");
    assert_json_eq(at(o, "spec"), SPEC1);
    assert_json_eq(at(o, "status"), STATUS1);
    assert_int_equal((int)number_at(o, "metadata.generation"), 1); /* status is not spec */
    cJSON_Delete(o);

    /* A merge patch of the status merges; its spec part is ignored. */
    r = call(e, &e->s, "PATCH", PATH "/n1/status", MERGE,
             "{\"spec\":{\"metricCollectPolicy\":{\"reportIntervalSeconds\":5}},\"status\":"
             "{\"updateTime\":\"2024-05-01T10:01:00Z\",\"nodeMetric\":{\"systemUsage\":"
             "{\"resources\":{\"cpu\":\"100m\"}}}}}",
             NULL);
    expect_ok(&r, 200);
    reply_release(&r);
    o = get_nm(e, &e->s, "n1");
    assert_json_eq(at(o, "spec"), SPEC1);
    assert_json_eq(at(o, "status"),
                   "{\"updateTime\":\"2024-05-01T10:01:00Z\",\"nodeMetric\":{\"nodeUsage\":"
                   "{\"resources\":{\"cpu\":\"1500m\",\"memory\":\"2Gi\"}},\"systemUsage\":"
                   "{\"resources\":{\"cpu\":\"100m\"}}}}");
    cJSON_Delete(o);

    /* A PUT at a resourceVersion that is no longer current conflicts and changes nothing. */
    (void)snprintf(stale, sizeof(stale),
                   "{\"apiVersion\":\"" GV "\",\"kind\":\"NodeMetric\",\"metadata\":{\"name\":"
                   "\"n1\",\"resourceVersion\":\"%llu\"},\"status\":{}}",
                   (unsigned long long)rv);
    r = call(e, &e->s, "PUT", PATH "/n1/status", NULL, stale, NULL);
    expect_status(&r, 409, "Conflict");
    reply_release(&r);
    o = get_nm(e, &e->s, "n1");
    assert_non_null(at(o, "status.nodeMetric.systemUsage"));
    cJSON_Delete(o);

    /* Status writes to a node without a NodeMetric: 404, nothing created. */
    r = put_status(e, &e->s, "n9", SPEC1, STATUS1);
    expect_status(&r, 404, "NotFound");
    reply_release(&r);
    r = call(e, &e->s, "PATCH", PATH "/n9/status", MERGE, "{\"status\":" STATUS1 "}", NULL);
    expect_status(&r, 404, "NotFound");
    reply_release(&r);
    assert_int_equal(stats(e).objects, 1);
    assert_int_equal(stats(e).reports, 2);
}

/* The value of a Prometheus counter in the server's /metrics text, or -1. */
static long counter(struct env *e, const char *name)
{
    struct strbuf out = STRBUF_INIT;
    const char *p;
    long v = -1;

    nodemetric_server_render_metrics(e->s.nm, &out);
    for (p = out.buf; (p = strstr(p, name)); p++)
        if ((p == out.buf || p[-1] == '\n') && p[strlen(name)] == ' ')
            v = strtol(p + strlen(name) + 1, NULL, 10);
    strbuf_release(&out);
    return v;
}

static char *status_text(const cJSON *o)
{
    struct strbuf sb = STRBUF_INIT;

    assert_int_equal(json_print(at(o, "status"), &sb), 0);
    return strbuf_detach(&sb, NULL);
}

/*
 * A report already in canonical form is stored as sent (the splice path, counted in /metrics),
 * and what it stores and answers is what the decoding path makes of the same report written
 * otherwise (indented, members reordered, "1000m" for "1"): same status bytes, same spec. A
 * spec the manager sets between reports stays.
 */
static void test_canonical_reports_spliced(void **state)
{
    static const char *const canonical =
        "{\"updateTime\":\"2024-05-01T10:00:00Z\",\"nodeMetric\":{\"nodeUsage\":{"
        "\"resources\":{\"cpu\":\"1\",\"memory\":\"2Gi\"}}},\"podsMetric\":[{\"namespace\":"
        "\"default\",\"name\":\"p\",\"podUsage\":{\"resources\":{\"cpu\":\"100m\"}},"
        "\"priority\":\"koord-prod\",\"qos\":\"LS\"}]}";
    static const char *const other =
        "{ \"podsMetric\": [ {\"qos\": \"LS\", \"priority\": \"koord-prod\", \"name\": "
        "\"p\", \"namespace\": \"default\", \"podUsage\": {\"resources\": {\"cpu\": "
        "\"100m\"}}} ],\n \"nodeMetric\": {\"nodeUsage\": {\"resources\": {\"cpu\": \"1000m\", "
        "\"memory\": \"2048Mi\"}}}, \"updateTime\": \"2024-05-01T10:00:00Z\"}";
    struct env *e = *state;
    char *a, *b, *ra;
    struct reply r;
    cJSON *o1, *o2;

    set_spec(e, "n1", SPEC1);
    set_spec(e, "n2", SPEC1);
    assert_int_equal(counter(e, "koord_apiserver_status_splice_writes_total"), 0);
    r = put_status(e, &e->s, "n1", SPEC2, canonical); /* a spec in the body is ignored */
    expect_ok(&r, 200);
    assert_int_equal(counter(e, "koord_apiserver_status_splice_writes_total"), 1);
    ra = status_text(r.body);
    assert_string_equal(ra, canonical);
    assert_json_eq(at(r.body, "spec"), SPEC1);
    assert_true(rv_of(r.body) > BASE);
    reply_release(&r);
    r = put_status(e, &e->s, "n2", SPEC1, other);
    expect_ok(&r, 200);
    assert_int_equal(counter(e, "koord_apiserver_status_splice_writes_total"), 1);
    reply_release(&r);

    o1 = get_nm(e, &e->s, "n1");
    o2 = get_nm(e, &e->s, "n2");
    a = status_text(o1);
    b = status_text(o2);
    assert_string_equal(a, b);
    assert_string_equal(a, ra);
    assert_json_eq(at(o1, "spec"), SPEC1);
    assert_int_equal((int)number_at(o1, "metadata.generation"), 1);
    free(a);
    free(b);
    free(ra);
    cJSON_Delete(o1);
    cJSON_Delete(o2);

    /* A new spec, then a report: the report keeps the spec and its generation. */
    set_spec(e, "n1", SPEC2);
    r = put_status(e, &e->s, "n1", SPEC1, canonical);
    expect_ok(&r, 200);
    reply_release(&r);
    assert_int_equal(counter(e, "koord_apiserver_status_splice_writes_total"), 2);
    o1 = get_nm(e, &e->s, "n1");
    assert_json_eq(at(o1, "spec"), SPEC2);
    assert_json_eq(at(o1, "status"), canonical);
    assert_int_equal((int)number_at(o1, "metadata.generation"), 2);
    cJSON_Delete(o1);
    assert_int_equal(stats(e).reports, 3);

    /* As koord agent sends it, asking only for the metadata back: still spliced, the answer
     * the stored object's PartialObjectMetadata. */
    {
        char *body = object_text("n2", SPEC1, canonical);
        r = call(e, &e->s, "PUT", PATH "/n2/status", NULL, body,
                 "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json");
        free(body);
    }
    expect_ok(&r, 200);
    assert_int_equal(counter(e, "koord_apiserver_status_splice_writes_total"), 3);
    assert_string_equal(cJSON_GetStringValue(at(r.body, "kind")), "PartialObjectMetadata");
    assert_string_equal(cJSON_GetStringValue(at(r.body, "metadata.name")), "n2");
    assert_null(at(r.body, "status"));
    o2 = get_nm(e, &e->s, "n2");
    assert_int_equal(rv_of(o2), rv_of(r.body));
    assert_json_eq(at(o2, "status"), canonical);
    cJSON_Delete(o2);
    reply_release(&r);

    /* Bytes after the object are the general path's 400, whatever they are, and nothing is
     * stored (the fast path used to store the report and ignore them). */
    {
        static const char *const trailers[] = {"garbage", "{}", "}", ",\"x\":1}", "\"s\""};
        long before = counter(e, "koord_apiserver_status_splice_writes_total");
        uint64_t rv;

        o2 = get_nm(e, &e->s, "n2");
        rv = rv_of(o2);
        cJSON_Delete(o2);

        for (size_t i = 0; i < ARRAY_SIZE(trailers); i++) {
            char *body = object_text("n2", SPEC1, canonical);
            struct strbuf sb = STRBUF_INIT;

            strbuf_addf(&sb, "%s \n%s", body, trailers[i]);
            r = call(e, &e->s, "PUT", PATH "/n2/status", NULL, sb.buf, NULL);
            assert_int_equal(r.status, 400);
            reply_release(&r);
            free(body);
            strbuf_release(&sb);
        }
        assert_int_equal(counter(e, "koord_apiserver_status_splice_writes_total"), before);
        o2 = get_nm(e, &e->s, "n2");
        assert_int_equal(rv_of(o2), rv);
        cJSON_Delete(o2);
        /* whitespace after the object is fine, and spliced */
        {
            char *body = object_text("n2", SPEC1, canonical);
            struct strbuf sb = STRBUF_INIT;

            strbuf_addf(&sb, "%s \r\n\t ", body);
            r = call(e, &e->s, "PUT", PATH "/n2/status", NULL, sb.buf, NULL);
            expect_ok(&r, 200);
            reply_release(&r);
            free(body);
            strbuf_release(&sb);
        }
        assert_int_equal(counter(e, "koord_apiserver_status_splice_writes_total"), before + 1);
    }
}

/* What the NodeResource controller reads of a NodeMetric, and only that, whichever path stored
 * it (a report as koordlet writes it, the splice; one in another form, the decoding path). */
static void test_usage_view(void **state)
{
    static const char *const full =
        "{\"updateTime\":\"2024-05-01T10:00:00Z\",\"nodeMetric\":{\"nodeUsage\":{\"resources\":"
        "{\"cpu\":\"3\"}},\"aggregatedNodeUsages\":[{\"usage\":{\"p99\":{\"resources\":{\"cpu\":"
        "\"2\"}}},\"duration\":\"5m0s\"}],\"systemUsage\":{\"resources\":{\"cpu\":\"500m\"}}},"
        "\"podsMetric\":[{\"namespace\":\"default\",\"name\":\"a\",\"podUsage\":{\"resources\":"
        "{\"cpu\":\"100m\",\"memory\":\"64Mi\"}},\"priority\":\"koord-prod\",\"qos\":\"LS\"},"
        "{\"namespace\":\"team\",\"name\":\"b\",\"podUsage\":{\"resources\":{\"cpu\":\"1\"}},"
        "\"qos\":\"BE\"}],\"hostApplicationMetric\":[{\"name\":\"agent\",\"usage\":{\"resources\":"
        "{\"cpu\":\"50m\"}},\"priority\":\"koord-prod\"}]}";
    static const char *const view =
        "{\"status\":{\"updateTime\":\"2024-05-01T10:00:00Z\",\"nodeMetric\":{\"systemUsage\":"
        "{\"resources\":{\"cpu\":\"500m\"}}},\"podsMetric\":[{\"namespace\":\"default\",\"name\":"
        "\"a\",\"podUsage\":{\"resources\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"}},\"priority\":"
        "\"koord-prod\"},{\"namespace\":\"team\",\"name\":\"b\",\"podUsage\":{\"resources\":{"
        "\"cpu\":"
        "\"1\"}}}],\"hostApplicationMetric\":[{\"name\":\"agent\",\"usage\":{\"resources\":"
        "{\"cpu\":\"50m\"}},\"priority\":\"koord-prod\"}]}}";
    struct env *e = *state;
    struct reply r;
    cJSON *o = NULL;

    set_spec(e, "n1", SPEC1);
    set_spec(e, "n2", SPEC1);
    assert_int_equal(nodemetric_server_get_usage(e->s.nm, "n3", &o), -ENOENT);
    r = put_status(e, &e->s, "n1", SPEC1, full);
    expect_ok(&r, 200);
    reply_release(&r);
    assert_int_equal(nodemetric_server_get_usage(e->s.nm, "n1", &o), 0);
    assert_json_eq(o, view);
    cJSON_Delete(o);
    /* "3000m" is not how it is stored: the decoding path, the same view */
    {
        struct strbuf other = STRBUF_INIT;
        const char *at3 = strstr(full, "\"3\"");

        strbuf_add(&other, full, (size_t)(at3 - full));
        strbuf_addstr(&other, "\"3000m\"");
        strbuf_addstr(&other, at3 + 3);
        r = put_status(e, &e->s, "n2", SPEC1, other.buf);
        strbuf_release(&other);
    }
    expect_ok(&r, 200);
    reply_release(&r);
    assert_int_equal(nodemetric_server_get_usage(e->s.nm, "n2", &o), 0);
    assert_json_eq(o, view);
    cJSON_Delete(o);
    /* a NodeMetric without a report yet: an empty status */
    set_spec(e, "n3", SPEC1);
    assert_int_equal(nodemetric_server_get_usage(e->s.nm, "n3", &o), 0);
    assert_json_eq(o, "{\"status\":{}}");
    cJSON_Delete(o);
}

static void test_refused_verbs(void **state)
{
    struct env *e = *state;
    char *n3 = object_text("n3", SPEC2, STATUS1), *n1 = object_text("n1", SPEC2, STATUS1);
    struct reply r;
    cJSON *o;
    uint64_t rv;

    set_spec(e, "n1", SPEC1);
    rv = stats(e).revision;
    free(heard(e)); /* what came before is not under test */

    /* Clients neither create, delete nor write the main resource (its spec is the manager's). */
    r = call(e, &e->s, "POST", PATH, NULL, n3, NULL);
    expect_status(&r, 405, "MethodNotAllowed");
    reply_release(&r);
    r = call(e, &e->s, "DELETE", PATH "/n1", NULL, NULL, NULL);
    expect_status(&r, 405, "MethodNotAllowed");
    reply_release(&r);
    r = call(e, &e->s, "DELETE", PATH, NULL, NULL, NULL);
    expect_status(&r, 405, "MethodNotAllowed");
    reply_release(&r);
    r = call(e, &e->s, "PUT", PATH "/n1", NULL, n1, NULL);
    expect_status(&r, 405, "MethodNotAllowed");
    reply_release(&r);
    r = call(e, &e->s, "PATCH", PATH "/n1", MERGE, "{\"spec\":" SPEC2 "}", NULL);
    expect_status(&r, 405, "MethodNotAllowed");
    reply_release(&r);

    /* Nothing changed. */
    assert_int_equal(stats(e).revision, rv);
    assert_int_equal(stats(e).objects, 1);
    assert_int_equal(stats(e).reports, 0);
    o = get_nm(e, &e->s, "n1");
    assert_json_eq(at(o, "spec"), SPEC1);
    assert_json_eq(at(o, "status"), "{}");
    cJSON_Delete(o);
    assert_heard(e, "");

    /* An unknown node: 404 naming it. */
    r = call(e, &e->s, "GET", PATH "/n3", NULL, NULL, NULL);
    expect_status(&r, 404, "NotFound");
    expect_str(r.body, "details.name", "n3");
    expect_str(r.body, "details.kind", "nodemetrics");
    reply_release(&r);
    free(n3);
    free(n1);
}

/* ---- watches ---- */

struct watch {
    struct http_client_stream *st;
    struct strbuf buf;  /* bytes not yet split into lines */
    struct strbuf seen; /* "TYPE:name " per event read */
};

static void watch_open(struct env *e, struct watch *w, uint64_t rv)
{
    char url[256];

    (void)snprintf(url, sizeof(url), "%s" PATH "?watch=1&resourceVersion=%llu", e->s.base,
                   (unsigned long long)rv);
    strbuf_init(&w->buf);
    strbuf_init(&w->seen);
    assert_int_equal(
        http_client_open(
            e->c, &(struct http_client_req){.method = "GET", .url = url, .timeout_ms = TIMEOUT_MS},
            &w->st),
        0);
    assert_int_equal(http_client_stream_status(w->st), 200);
}

static void watch_close(struct watch *w)
{
    http_client_stream_close(w->st);
    strbuf_release(&w->buf);
    strbuf_release(&w->seen);
}

/* Reads events until one of type for name arrives (the stream's timeout is the deadline);
 * every event read is recorded in w->seen. */
static void watch_until(struct watch *w, const char *type, const char *name)
{
    char chunk[4096], want[128];

    (void)snprintf(want, sizeof(want), "%s:%s ", type, name);
    while (!strstr(w->seen.buf, want)) {
        char *nl;
        long n;
        while ((nl = memchr(w->buf.buf, '\n', w->buf.len))) {
            size_t len = (size_t)(nl - w->buf.buf);
            cJSON *ev = cJSON_ParseWithLength(w->buf.buf, len);
            assert_non_null(ev);
            strbuf_addf(&w->seen, "%s:%s ", str_at(ev, "type") ? str_at(ev, "type") : "?",
                        str_at(ev, "object.metadata.name") ? str_at(ev, "object.metadata.name")
                                                           : "?");
            cJSON_Delete(ev);
            memmove(w->buf.buf, nl + 1, w->buf.len - len - 1);
            strbuf_setlen(&w->buf, w->buf.len - len - 1);
        }
        if (strstr(w->seen.buf, want))
            break;
        n = http_client_stream_read(w->st, chunk, sizeof(chunk));
        if (n <= 0)
            fail_msg("watch ended (%ld) before %s; saw %s", n, want, w->seen.buf);
        strbuf_add(&w->buf, chunk, (size_t)n);
    }
}

static void test_remove_and_watch(void **state)
{
    struct env *e = *state;
    struct watch w;
    struct reply r;
    uint64_t rv;

    set_spec(e, "n1", SPEC1);
    set_spec(e, "n2", SPEC1);
    free(heard(e)); /* what came before is not under test */
    rv = stats(e).revision;
    watch_open(e, &w, rv);

    r = put_status(e, &e->s, "n1", SPEC1, STATUS1);
    expect_ok(&r, 200);
    reply_release(&r);
    assert_int_equal(nodemetric_server_remove(e->s.nm, "n1"), 0);
    watch_until(&w, "DELETED", "n1");
    assert_string_equal(w.seen.buf, "MODIFIED:n1 DELETED:n1 ");
    watch_close(&w);

    /* Gone for clients and the manager; removing again, or what never was, is fine. */
    r = call(e, &e->s, "GET", PATH "/n1", NULL, NULL, NULL);
    expect_status(&r, 404, "NotFound");
    reply_release(&r);
    assert_int_equal(nodemetric_server_remove(e->s.nm, "n1"), 0);
    assert_int_equal(nodemetric_server_remove(e->s.nm, "never"), 0);
    r = call(e, &e->s, "GET", PATH, NULL, NULL, NULL);
    expect_ok(&r, 200);
    assert_int_equal(cJSON_GetArraySize(at(r.body, "items")), 1);
    expect_str(r.body, "items.0.metadata.name", "n2");
    reply_release(&r);
    assert_int_equal(stats(e).objects, 1);
    /* The listener heard the report, not the removal. */
    assert_heard(e, "n1 ");

    /* A node that comes back gets a new object (a new uid, an empty status). */
    set_spec(e, "n1", SPEC1);
    {
        cJSON *o = get_nm(e, &e->s, "n1");
        assert_json_eq(at(o, "status"), "{}");
        cJSON_Delete(o);
    }
}

static void test_listener(void **state)
{
    struct env *e = *state;
    struct reply r;

    set_spec(e, "n1", SPEC1);
    set_spec(e, "n2", SPEC1);
    free(heard(e)); /* what came before is not under test */

    /* Called on the writing thread before the answer: heard as soon as the write returns. */
    r = put_status(e, &e->s, "n1", SPEC1, STATUS1);
    expect_ok(&r, 200);
    reply_release(&r);
    assert_heard(e, "n1 ");
    r = call(e, &e->s, "PATCH", PATH "/n2/status", MERGE, "{\"status\":" STATUS1 "}", NULL);
    expect_ok(&r, 200);
    reply_release(&r);
    assert_heard(e, "n2 ");

    /* Refused writes are not reports. */
    r = put_status(e, &e->s, "n9", SPEC1, STATUS1);
    expect_status(&r, 404, "NotFound");
    reply_release(&r);
    r = call(e, &e->s, "PUT", PATH "/n1/status", NULL, "{not json", NULL);
    assert_int_equal(r.status, 400);
    reply_release(&r);
    r = call(e, &e->s, "DELETE", PATH "/n1", NULL, NULL, NULL);
    expect_status(&r, 405, "MethodNotAllowed");
    reply_release(&r);
    assert_heard(e, "");
    assert_int_equal(stats(e).reports, 2);
}

static void test_object_bound(void **state)
{
    struct env *e = *state;
    char *small = pods_status(10), *big = pods_status(60), *patch;
    struct strbuf sb = STRBUF_INIT;
    struct reply r;
    uint64_t rv;
    cJSON *o;

    assert_true(strlen(small) < MAX_OBJECT / 2);
    assert_true(strlen(big) > MAX_OBJECT);
    set_spec(e, "n1", SPEC1);
    set_spec(e, "n2", SPEC1);
    r = put_status(e, &e->s, "n1", SPEC1, small);
    expect_ok(&r, 200);
    reply_release(&r);
    free(heard(e)); /* what came before is not under test */
    rv = stats(e).revision;

    /* Past the bound: 413 from the store, the stored object untouched, no report. */
    r = put_status(e, &e->s, "n1", SPEC1, big);
    expect_status(&r, 413, "RequestEntityTooLarge");
    reply_release(&r);
    strbuf_addf(&sb, "{\"status\":%s}", big);
    patch = strbuf_detach(&sb, NULL);
    r = call(e, &e->s, "PATCH", PATH "/n1/status", MERGE, patch, NULL);
    expect_status(&r, 413, "RequestEntityTooLarge");
    reply_release(&r);
    assert_int_equal(stats(e).revision, rv);
    assert_int_equal(stats(e).reports, 1);
    assert_heard(e, "");
    o = get_nm(e, &e->s, "n1");
    assert_int_equal(rv_of(o), rv);
    assert_int_equal(cJSON_GetArraySize(at(o, "status.podsMetric")), 10);
    cJSON_Delete(o);

    /* The bound is per object: another node still reports its own. */
    r = put_status(e, &e->s, "n2", SPEC1, small);
    expect_ok(&r, 200);
    reply_release(&r);
    assert_heard(e, "n2 ");
    free(small);
    free(big);
    free(patch);
}

/* The manager leaves max_object at its default: 1 MiB, under the HTTP server's 3 MiB bodies. */
static void test_default_bound(void **state)
{
    struct env *e = *state;
    struct srv dflt = {0};
    char *big = pods_status(12000), *ok = pods_status(10000);
    cJSON *spec = J(SPEC1);
    struct reply r;

    assert_true(strlen(big) > (1u << 20));
    assert_true(strlen(big) < (3u << 20));
    assert_true(strlen(ok) < (1u << 20) - 4096);
    srv_start(&dflt, 0, NULL);
    assert_int_equal(nodemetric_server_activate(dflt.nm, EPOCH), 0);
    assert_int_equal(nodemetric_server_set_spec(dflt.nm, "n1", spec), 0);
    r = put_status(e, &dflt, "n1", SPEC1, big);
    expect_status(&r, 413, "RequestEntityTooLarge");
    reply_release(&r);
    r = put_status(e, &dflt, "n1", SPEC1, ok);
    expect_ok(&r, 200);
    reply_release(&r);
    srv_stop(&dflt);
    cJSON_Delete(spec);
    free(big);
    free(ok);
}

static void test_table(void **state)
{
    struct env *e = *state;
    struct reply r;

    set_spec(e, "n1", SPEC1);
    set_spec(e, "n2", SPEC1);

    r = call(e, &e->s, "GET", PATH, NULL, NULL, TABLE_ACCEPT);
    expect_ok(&r, 200);
    expect_str(r.body, "kind", "Table");
    expect_str(r.body, "apiVersion", "meta.k8s.io/v1");
    assert_int_equal(rv_of(r.body), BASE | 2);
    assert_int_equal(cJSON_GetArraySize(at(r.body, "columnDefinitions")), 2);
    expect_str(r.body, "columnDefinitions.0.name", "Name");
    expect_str(r.body, "columnDefinitions.1.name", "Age");
    assert_int_equal(cJSON_GetArraySize(at(r.body, "rows")), 2);
    expect_str(r.body, "rows.0.cells.0", "n1");
    expect_str(r.body, "rows.1.cells.0", "n2");
    expect_str(r.body, "rows.0.object.kind", "PartialObjectMetadata");
    expect_str(r.body, "rows.0.object.metadata.name", "n1");
    assert_null(at(r.body, "rows.0.object.spec"));
    reply_release(&r);

    r = call(e, &e->s, "GET", PATH "/n2", NULL, NULL, TABLE_ACCEPT);
    expect_ok(&r, 200);
    expect_str(r.body, "kind", "Table");
    assert_int_equal(cJSON_GetArraySize(at(r.body, "rows")), 1);
    expect_str(r.body, "rows.0.cells.0", "n2");
    reply_release(&r);

    /* Without the Accept header: the objects themselves. */
    r = call(e, &e->s, "GET", PATH "/n2", NULL, NULL, NULL);
    expect_ok(&r, 200);
    expect_str(r.body, "kind", "NodeMetric");
    reply_release(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_unavailable_before_activation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resource_versions, setup_active, teardown),
        cmocka_unit_test_setup_teardown(test_older_epoch_expired, setup_active, teardown),
        cmocka_unit_test_setup_teardown(test_set_spec, setup_active, teardown),
        cmocka_unit_test_setup_teardown(test_canonical_reports_spliced, setup_active, teardown),
        cmocka_unit_test_setup_teardown(test_status_put_and_patch, setup_active, teardown),
        cmocka_unit_test_setup_teardown(test_usage_view, setup_active, teardown),
        cmocka_unit_test_setup_teardown(test_refused_verbs, setup_active, teardown),
        cmocka_unit_test_setup_teardown(test_remove_and_watch, setup_active, teardown),
        cmocka_unit_test_setup_teardown(test_listener, setup_active, teardown),
        cmocka_unit_test_setup_teardown(test_object_bound, setup_active, teardown),
        cmocka_unit_test_setup_teardown(test_default_bound, setup_active, teardown),
        cmocka_unit_test_setup_teardown(test_table, setup_active, teardown),
    };

    (void)log_set_level("error");
    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
