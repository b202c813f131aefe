/*
 * Tests for manager/nodemetric/auth: who may read and write the manager's NodeMetric API. The
 * NodeMetric server runs over HTTPS on 127.0.0.1:0, trusting the cluster CA and the front-proxy
 * CA as `koord manager` does, with the auth hooks; requests are made with the project's HTTP
 * client presenting client certificates generated here (tls_make_cert()) from the PKI of a real
 * `koord apiserver` started in-process (tests/kube/kubetest.h), which also answers the
 * TokenReviews for the static tokens the test gives it (apiserver_set_tokens()).
 *
 * Covered:
 *  - front proxy: X-Remote-User, every repeated X-Remote-Group and the node-name extra
 *    (X-Remote-Extra-Authentication.kubernetes.io%2fnode-name) make the identity only with a
 *    client certificate of the request-header CA whose CN is an allowed name; another CN is
 *    401 (auth.c refuses it outright rather than falling back), until no names are configured;
 *    the same headers without such a certificate (none, a cluster certificate, a bearer token)
 *    are ignored, so a caller cannot claim an identity by header; a front-proxy certificate
 *    without X-Remote-User is no identity at all;
 *  - cluster-CA client certificates: CN is the user, every O a group; a certificate of an
 *    unknown CA is 401;
 *  - bearer tokens checked with TokenReview: authenticated and unauthenticated answers, both
 *    cached (a second request within the TTL sends no review: counted by the module's counter
 *    and by the API server's own request metrics), asked again after the TTL, the cache bound
 *    evicting (the entry expiring soonest) instead of growing, an API server that cannot be
 *    reached answering 401 without caching it, then working again once it is back;
 *  - authorization: reads for everyone authenticated; status writes for system:node:X to X only
 *    and for the node-name extra's node only, 403 Forbidden with kube-apiserver's message naming
 *    the user otherwise; writes for the admin group (default system:masters, or the configured
 *    one instead) and for no one else.
 *
 * One fake: koord apiserver's TokenReview has no `extra` (its static tokens carry none), but a
 * service-account token bound to a pod does in kube-apiserver, and that is how a node agent
 * running as a pod proves its node; a small HTTP server answers those reviews (and a review
 * that fails with 500, and an "authenticated" answer without a user name).
 *
 * Why: the NodeMetric API is what node agents write their usage to and what the scheduler's
 * colocation decisions are computed from; a node must not be able to report for another, a
 * header must not be a way in, and the token cache must neither hammer the API server nor grow
 * without bound.
 */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "apiserver/apiserver.h"
#include "apiserver/auth.h"
#include "apiserver/tokens.h"
#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "http/client.h"
#include "http/server.h"
#include "http/tls.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/kubetest.h"
#include "manager/nodemetric/auth.h"
#include "manager/nodemetric/nodemetric.h"
#include "testutil.h"

#define GV   NODEMETRIC_GROUP "/" NODEMETRIC_VERSION
#define PATH "/apis/" GV "/nodemetrics"
/* Long enough that no run, however slow, sees an entry expire by accident. */
#define LONG_TTL_MS  600000
#define SHORT_TTL_MS 300
#define TIMEOUT_MS   60000
/* The node-name extra as kube-apiserver forwards it, naming n1. */
#define NODE1_EXTRA "X-Remote-Extra-Authentication.kubernetes.io%2fnode-name: n1"
#define SA_USER     "system:serviceaccount:koord-system:koordlet"

#define STATUS                                                                                     \
    "{\"updateTime\":\"2024-05-01T10:00:00Z\",\"nodeMetric\":{\"nodeUsage\":{\"resources\":"       \
    "{\"cpu\":\"1\"}}}}"

/* The static tokens koord apiserver reviews. */
static const char tokens_text[] = "alice-t,alice,u1,devs\n"
                                  "node1-t,system:node:n1,u2,system:nodes\n"
                                  "root-t,root,u3,\"devs,system:masters\"\n";

/* The callers: a client certificate each (none for NOBODY). */
enum who { NOBODY, NODE1, NODE2, ADMIN, BOB, CAROL, DAVE, PROXY, INTRUDER, ROGUE, NWHO };

enum signer { CLUSTER_CA, FRONT_PROXY_CA, ROGUE_CA };

static const struct {
    const char *cn;
    const char *orgs[3];
    enum signer by;
} idents[NWHO] = {
    [NODE1] = {"system:node:n1", {"system:nodes"}, CLUSTER_CA},
    [NODE2] = {"system:node:n2", {"system:nodes"}, CLUSTER_CA},
    [ADMIN] = {"admin", {"system:masters"}, CLUSTER_CA},
    [BOB] = {"bob", {"devs"}, CLUSTER_CA},
    [CAROL] = {"carol", {"devs", "system:masters"}, CLUSTER_CA},
    [DAVE] = {"dave", {"koord:admins"}, CLUSTER_CA},
    [PROXY] = {"front-proxy-client", {NULL}, FRONT_PROXY_CA},
    [INTRUDER] = {"intruder", {NULL}, FRONT_PROXY_CA},
    [ROGUE] = {"admin", {"system:masters"}, ROGUE_CA},
};

/* Made once for the whole file: an API server, certificates and clients. */
static struct {
    struct kt_server *kt;
    struct api_tokens *tokens;
    struct kube_client *tr; /* where TokenReviews go */
    struct tls_pem rogue_ca;
    struct tls_pem certs[NWHO];
    struct http_client *clients[NWHO];
    char dir[64];
    char *bundle; /* cluster CA + front-proxy CA: what the manager trusts */
} W;

static const char *const allowed_names[] = {"front-proxy-client", NULL};

/* One NodeMetric server with one auth configuration, per test. */
struct env {
    struct nodemetric_auth *auth;
    struct nodemetric_server *nm;
    struct http_server *http;
    char base[64];
};

/* ---- fixtures ---- */

static void write_file(const char *name, const char *text)
{
    char path[128];
    FILE *f;

    (void)snprintf(path, sizeof(path), "%s/%s", W.dir, name);
    assert_non_null(f = fopen(path, "we"));
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static void kt_use_tokens(void)
{
    apiserver_set_tokens(W.kt->api, W.tokens);
}

static int group_setup(void **state)
{
    struct strbuf why = STRBUF_INIT;
    char cert[128], key[128], ca[128];

    (void)state;
    W.kt = kt_server_new(0);
    assert_int_equal(api_tokens_parse(tokens_text, strlen(tokens_text), &W.tokens, &why), 0);
    strbuf_release(&why);
    kt_use_tokens();
    W.tr = kt_client(W.kt);
    assert_int_equal(tls_make_ca("rogue-ca", 30, &W.rogue_ca), 0);

    (void)snprintf(W.dir, sizeof(W.dir), "/tmp/koord-nm-auth-XXXXXX");
    assert_non_null(mkdtemp(W.dir));
    write_file("ca.crt", W.kt->pki.ca.cert);
    (void)snprintf(ca, sizeof(ca), "%s/ca.crt", W.dir);
    for (int i = 0; i < NWHO; i++) {
        const struct tls_pem *by = idents[i].by == CLUSTER_CA       ? &W.kt->pki.ca
                                   : idents[i].by == FRONT_PROXY_CA ? &W.kt->pki.front_proxy_ca
                                                                    : &W.rogue_ca;
        struct http_client_opts o = {.ca_file = ca};

        if (i != NOBODY) {
            assert_int_equal(
                tls_make_cert(by, idents[i].cn, idents[i].orgs, NULL, false, 30, &W.certs[i]), 0);
            (void)snprintf(cert, sizeof(cert), "%s/%d.crt", W.dir, i);
            (void)snprintf(key, sizeof(key), "%s/%d.key", W.dir, i);
            write_file(strrchr(cert, '/') + 1, W.certs[i].cert);
            write_file(strrchr(key, '/') + 1, W.certs[i].key);
            o.cert_file = cert;
            o.key_file = key;
        }
        assert_int_equal(http_client_new(&o, &W.clients[i]), 0);
    }
    {
        struct strbuf b = STRBUF_INIT;
        strbuf_addf(&b, "%s\n%s", W.kt->pki.ca.cert, W.kt->pki.front_proxy_ca.cert);
        W.bundle = strbuf_detach(&b, NULL);
    }
    return 0;
}

static int group_teardown(void **state)
{
    char path[128];

    (void)state;
    for (int i = 0; i < NWHO; i++) {
        http_client_free(W.clients[i]);
        tls_pem_release(&W.certs[i]);
        (void)snprintf(path, sizeof(path), "%s/%d.crt", W.dir, i);
        (void)unlink(path);
        (void)snprintf(path, sizeof(path), "%s/%d.key", W.dir, i);
        (void)unlink(path);
    }
    kt_rm(W.dir, "ca.crt");
    (void)rmdir(W.dir);
    tls_pem_release(&W.rogue_ca);
    kube_client_free(W.tr);
    kt_server_free(W.kt);
    api_tokens_free(W.tokens);
    free(W.bundle);
    return 0;
}

static struct nodemetric_auth_opts default_opts(void)
{
    return (struct nodemetric_auth_opts){.client_ca_pem = W.kt->pki.ca.cert,
                                         .requestheader_ca_pem = W.kt->pki.front_proxy_ca.cert,
                                         .allowed_names = allowed_names,
                                         .tokenreview = W.tr,
                                         .cache_ttl_ms = LONG_TTL_MS};
}

/* Serves a fresh, active NodeMetric API with NodeMetrics n1 and n2 under these rules. */
static void env_start(struct env *e, const struct nodemetric_auth_opts *o)
{
    cJSON *spec = J("{\"metricCollectPolicy\":{\"reportIntervalSeconds\":60}}");

    assert_int_equal(nodemetric_auth_new(o, &e->auth), 0);
    assert_int_equal(nodemetric_server_new(
                         &(struct nodemetric_opts){.auth = nodemetric_auth_hooks(e->auth)}, &e->nm),
                     0);
    assert_int_equal(nodemetric_server_activate(e->nm, 1), 0);
    assert_int_equal(nodemetric_server_set_spec(e->nm, "n1", spec), 0);
    assert_int_equal(nodemetric_server_set_spec(e->nm, "n2", spec), 0);
    cJSON_Delete(spec);
    assert_int_equal(
        http_server_start(&(struct http_server_opts){.host = "127.0.0.1",
                                                     .cert_pem = W.kt->pki.serving.cert,
                                                     .key_pem = W.kt->pki.serving.key,
                                                     .client_ca_pem = W.bundle},
                          nodemetric_server_handle, e->nm, &e->http),
        0);
    (void)snprintf(e->base, sizeof(e->base), "https://127.0.0.1:%u", http_server_port(e->http));
}

static void env_stop(struct env *e)
{
    nodemetric_server_stop_watches(e->nm);
    http_server_stop(e->http);
    nodemetric_server_free(e->nm);
    nodemetric_auth_free(e->auth);
    *e = (struct env){0};
}

/* A new server with other rules, in place of the test's. */
static void env_restart(struct env *e, const struct nodemetric_auth_opts *o)
{
    env_stop(e);
    env_start(e, o);
}

static int setup(void **state)
{
    struct env *e = xcalloc(1, sizeof(*e));
    struct nodemetric_auth_opts o = default_opts();

    env_start(e, &o);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;

    env_stop(e);
    free(e);
    return 0;
}

/* ---- requests ---- */

struct reply {
    long status;
    cJSON *body; /* parsed; NULL when not JSON */
};

static void reply_release(struct reply *r)
{
    cJSON_Delete(r->body);
    *r = (struct reply){0};
}

/* One request as who, with extra header lines (NULL-terminated, may be NULL). */
static struct reply call(struct env *e, enum who who, const char *method, const char *path,
                         const char *const *extra, const char *body)
{
    const char *headers[16] = {"Content-Type: application/json"};
    struct http_client_resp resp = HTTP_CLIENT_RESP_INIT;
    struct reply r = {0};
    size_t nh = 1;
    char url[256];
    int rc;

    if (!strcmp(method, "PATCH"))
        headers[0] = "Content-Type: application/merge-patch+json";
    for (; extra && *extra; extra++) {
        CHECK(nh < ARRAY_SIZE(headers) - 1);
        headers[nh++] = *extra;
    }
    (void)snprintf(url, sizeof(url), "%s%s", e->base, path);
    rc = http_client_do(W.clients[who],
                        &(struct http_client_req){.method = method,
                                                  .url = url,
                                                  .headers = headers,
                                                  .body = body,
                                                  .body_len = body ? strlen(body) : 0,
                                                  .timeout_ms = TIMEOUT_MS},
                        &resp);
    if (rc != 0) {
        http_client_resp_release(&resp);
        fail_msg("%s %s as %d: transport error %d", method, url, (int)who, rc);
    }
    r.status = resp.status;
    r.body = cJSON_ParseWithLength(resp.body.buf, resp.body.len);
    http_client_resp_release(&resp);
    return r;
}

static const char *str_of(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);

    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static void expect_code_at(struct reply *r, long code, int line)
{
    char *txt;

    if (r->status == code)
        return;
    txt = r->body ? cJSON_PrintUnformatted(r->body) : NULL;
    print_error("line %d: HTTP %ld, want %ld: %s\n", line, r->status, code,
                txt ? txt : "(no JSON body)");
    cJSON_free(txt);
    fail();
}
#define expect_code(r, code) expect_code_at((r), (code), __LINE__)

/* The answer is that Status; the message contains every string of want (NULL-terminated). */
static void expect_failure_at(struct reply *r, long code, const char *reason,
                              const char *const *want, int line)
{
    const char *msg;

    expect_code_at(r, code, line);
    assert_string_equal(str_of(r->body, "kind", NULL), "Status");
    assert_string_equal(str_of(r->body, "reason", NULL), reason);
    assert_int_equal((long)cJSON_GetNumberValue(cJSON_GetObjectItem(r->body, "code")), code);
    msg = str_of(r->body, "message", NULL);
    for (; want && *want; want++)
        if (!strstr(msg, *want))
            fail_msg("line %d: message \"%s\" lacks \"%s\"", line, msg, *want);
}
#define expect_failure(r, code, reason, ...)                                                       \
    expect_failure_at((r), (code), (reason), (const char *const[]){__VA_ARGS__, NULL}, __LINE__)

static struct reply put_status(struct env *e, enum who who, const char *node,
                               const char *const *extra)
{
    char path[128], body[512];

    (void)snprintf(path, sizeof(path), PATH "/%s/status", node);
    (void)snprintf(body, sizeof(body),
                   "{\"apiVersion\":\"" GV "\",\"kind\":\"NodeMetric\",\"metadata\":{\"name\":"
                   "\"%s\"},\"status\":" STATUS "}",
                   node);
    return call(e, who, "PUT", path, extra, body);
}

/* The HTTP status of a status PUT to node. */
static long put_code(struct env *e, enum who who, const char *node, const char *const *extra)
{
    struct reply r = put_status(e, who, node, extra);
    long code = r.status;

    reply_release(&r);
    return code;
}

static long get_code(struct env *e, enum who who, const char *path, const char *const *extra)
{
    struct reply r = call(e, who, "GET", path, extra, NULL);
    long code = r.status;

    reply_release(&r);
    return code;
}

/* A status write as who to node is 403 and its message names user (and why, when given). */
static void expect_forbidden_at(struct env *e, enum who who, const char *node,
                                const char *const *extra, const char *user, const char *why,
                                int line)
{
    struct reply r = put_status(e, who, node, extra);
    char named[160];

    (void)snprintf(named, sizeof(named), "User \"%s\"", user);
    expect_failure_at(&r, 403, "Forbidden", (const char *const[]){named, why, NULL}, line);
    assert_string_equal(str_of(r.body, "details", "name"), node);
    assert_string_equal(str_of(r.body, "details", "group"), NODEMETRIC_GROUP);
    assert_string_equal(str_of(r.body, "details", "kind"), "nodemetrics");
    reply_release(&r);
}
#define expect_forbidden(e, who, node, extra, user, why)                                           \
    expect_forbidden_at((e), (who), (node), (extra), (user), (why), __LINE__)

static void expect_unauthorized_at(struct env *e, enum who who, const char *method,
                                   const char *const *extra, int line)
{
    struct reply r = !strcmp(method, "GET") ? call(e, who, "GET", PATH, extra, NULL)
                                            : put_status(e, who, "n1", extra);

    expect_failure_at(&r, 401, "Unauthorized", NULL, line);
    reply_release(&r);
}
#define expect_unauthorized(e, who, method, extra)                                                 \
    expect_unauthorized_at((e), (who), (method), (extra), __LINE__)

/* Whether a status write reached n1: its status is what put_status() writes. */
static bool reported(struct env *e, const char *node)
{
    cJSON *o = NULL;
    bool r;

    assert_int_equal(nodemetric_server_get(e->nm, node, &o), 0);
    r = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "status"),
                                         "nodeMetric") != NULL;
    cJSON_Delete(o);
    return r;
}

/* ---- TokenReview counting ---- */

/* TokenReviews the API server answered, from its request metrics. */
static unsigned long served_reviews(void)
{
    struct strbuf m = STRBUF_INIT;
    unsigned long n = 0;
    char *line, *save = NULL;

    apiserver_render_metrics(W.kt->api, &m);
    for (line = strtok_r(m.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        int64_t v;
        if (strncmp(line, "apiserver_request_total{", 24) ||
            !strstr(line, "resource=\"tokenreviews\""))
            continue;
        assert_int_equal(parse_i64(strrchr(line, ' ') + 1, &v), 0);
        n += (unsigned long)v;
    }
    strbuf_release(&m);
    return n;
}

/* Both counts agree: the module's own, and the API server's. */
static void expect_reviews_at(struct env *e, unsigned long module, unsigned long served, int line)
{
    unsigned long got = nodemetric_auth_reviews(e->auth), got_served = served_reviews();

    if (got != module || got_served != served)
        fail_msg("line %d: %lu reviews sent, %lu served; want %lu and %lu", line, got, got_served,
                 module, served);
}
#define expect_reviews(e, module, served) expect_reviews_at((e), (module), (served), __LINE__)

static int64_t mono_ms(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until the monotonic clock reaches t (ms): a known instant, not a guess. */
static void wait_until_ms(int64_t t)
{
    struct timespec step = {0, 2000000};

    while (mono_ms() < t)
        (void)nanosleep(&step, NULL);
}

/* ---- tests: client certificates ---- */

static void test_client_certificates(void **state)
{
    struct env *e = *state;
    struct http_client_stream *st = NULL;
    char url[256];
    struct reply r;

    /* Nothing presented: 401, reads too. */
    expect_unauthorized(e, NOBODY, "GET", NULL);
    expect_unauthorized(e, NOBODY, "PUT", NULL);

    /* Reads: any authenticated user; get, list and watch. */
    assert_int_equal(get_code(e, BOB, PATH, NULL), 200);
    assert_int_equal(get_code(e, BOB, PATH "/n1", NULL), 200);
    assert_int_equal(get_code(e, NODE2, PATH "/n1", NULL), 200);
    (void)snprintf(url, sizeof(url), "%s" PATH "?watch=1", e->base);
    assert_int_equal(
        http_client_open(
            W.clients[BOB],
            &(struct http_client_req){.method = "GET", .url = url, .timeout_ms = TIMEOUT_MS}, &st),
        0);
    assert_int_equal(http_client_stream_status(st), 200);
    http_client_stream_close(st);

    /* A node writes its own status only; kube-apiserver's Forbidden message. */
    assert_int_equal(put_code(e, NODE1, "n1", NULL), 200);
    assert_true(reported(e, "n1"));
    r = call(e, NODE1, "PATCH", PATH "/n1/status", NULL, "{\"status\":" STATUS "}");
    expect_code(&r, 200);
    reply_release(&r);
    r = put_status(e, NODE1, "n2", NULL);
    expect_failure(&r, 403, "Forbidden",
                   "nodemetrics.metrics.koordinator.sh \"n2\" is forbidden: User "
                   "\"system:node:n1\" cannot update resource \"nodemetrics/status\" in API group "
                   "\"metrics.koordinator.sh\" at the cluster scope: node \"n1\" may only write "
                   "its own NodeMetric");
    reply_release(&r);
    r = call(e, NODE1, "PATCH", PATH "/n2/status", NULL, "{\"status\":" STATUS "}");
    expect_failure(&r, 403, "Forbidden", "User \"system:node:n1\" cannot patch");
    reply_release(&r);
    assert_false(reported(e, "n2"));
    assert_int_equal(put_code(e, NODE2, "n2", NULL), 200);

    /* The admin group (an O of the certificate) writes every node's; the second O counts. */
    assert_int_equal(put_code(e, ADMIN, "n1", NULL), 200);
    assert_int_equal(put_code(e, ADMIN, "n2", NULL), 200);
    assert_int_equal(put_code(e, CAROL, "n2", NULL), 200);

    /* Everyone else: 403 naming them and the admin group. */
    expect_forbidden(e, BOB, "n1", NULL, "bob",
                     "only node identities and members of \"system:masters\" may write");
    expect_forbidden(e, DAVE, "n1", NULL, "dave", NULL);

    /* A certificate no trusted CA signed: 401, even claiming system:masters. */
    expect_unauthorized(e, ROGUE, "GET", NULL);
    expect_unauthorized(e, ROGUE, "PUT", NULL);

    /* A front-proxy certificate without X-Remote-User is no identity by itself. */
    expect_unauthorized(e, PROXY, "GET", NULL);
    expect_unauthorized(e, PROXY, "PUT", NULL);
}

/* ---- tests: front proxy ---- */

static void test_front_proxy(void **state)
{
    struct env *e = *state;
    const char *const node1[] = {"X-Remote-User: system:node:n1", "X-Remote-Group: system:nodes",
                                 NULL};
    const char *const alice_admin[] = {"X-Remote-User: alice", "X-Remote-Group: devs",
                                       "X-Remote-Group: system:masters", NULL};
    const char *const alice[] = {"X-Remote-User: alice", "X-Remote-Group: devs", NULL};
    const char *const sa[] = {"X-Remote-User: " SA_USER, "X-Remote-Group: system:serviceaccounts",
                              NODE1_EXTRA, NULL};

    /* The proxy's user: reads, and the node rule applies to it. */
    assert_int_equal(get_code(e, PROXY, PATH, alice), 200);
    assert_int_equal(put_code(e, PROXY, "n1", node1), 200);
    assert_true(reported(e, "n1"));
    expect_forbidden(e, PROXY, "n2", node1, "system:node:n1", "node \"n1\" may only write");

    /* Every X-Remote-Group counts: system:masters in the second one makes an admin. */
    assert_int_equal(put_code(e, PROXY, "n2", alice_admin), 200);
    expect_forbidden(e, PROXY, "n2", alice, "alice", "members of \"system:masters\"");

    /* The node-name extra binds any user to its node. */
    assert_int_equal(put_code(e, PROXY, "n1", sa), 200);
    expect_forbidden(e, PROXY, "n2", sa, SA_USER, "node \"n1\" may only write its own");
}

static void test_front_proxy_name_not_allowed(void **state)
{
    struct env *e = *state;
    const char *const admin[] = {"X-Remote-User: admin", "X-Remote-Group: system:masters", NULL};
    struct nodemetric_auth_opts o = default_opts();

    /* Signed by the request-header CA, but not an allowed name: refused (auth.c answers 401
     * rather than trying the other authenticators), for reads and writes alike. */
    expect_unauthorized(e, INTRUDER, "GET", admin);
    expect_unauthorized(e, INTRUDER, "PUT", admin);
    expect_unauthorized(e, INTRUDER, "GET", NULL);
    assert_false(reported(e, "n1"));
    /* The allowed name with the same headers is trusted. */
    assert_int_equal(put_code(e, PROXY, "n1", admin), 200);

    /* Without allowed names any CN of the request-header CA is a front proxy. */
    o.allowed_names = NULL;
    env_restart(e, &o);
    assert_int_equal(put_code(e, INTRUDER, "n1", admin), 200);
    assert_true(reported(e, "n1"));
    /* An empty list means the same. */
    o.allowed_names = (const char *const[]){NULL};
    env_restart(e, &o);
    assert_int_equal(put_code(e, INTRUDER, "n2", admin), 200);
}

static void test_headers_without_proxy_cert(void **state)
{
    struct env *e = *state;
    const char *const admin[] = {"X-Remote-User: admin", "X-Remote-Group: system:masters", NULL};
    const char *const as_node1[] = {"X-Remote-User: system:node:n1", "X-Remote-Group: system:nodes",
                                    NODE1_EXTRA, NULL};
    const char *const alice_admin[] = {"Authorization: Bearer alice-t", "X-Remote-User: root",
                                       "X-Remote-Group: system:masters", NODE1_EXTRA, NULL};

    /* No certificate: the headers alone are no identity. */
    expect_unauthorized(e, NOBODY, "GET", admin);
    expect_unauthorized(e, NOBODY, "PUT", admin);
    expect_unauthorized(e, NOBODY, "PUT", as_node1);

    /* A cluster certificate: its own identity, the headers ignored (extra included). */
    expect_forbidden(e, BOB, "n1", admin, "bob", NULL);
    expect_forbidden(e, BOB, "n1", as_node1, "bob", NULL);
    expect_forbidden(e, NODE2, "n1", as_node1, "system:node:n2", "node \"n2\" may only write");

    /* A bearer token: the reviewed identity, the headers ignored. */
    expect_forbidden(e, NOBODY, "n1", alice_admin, "alice", NULL);
    expect_forbidden(e, NOBODY, "n2", alice_admin, "alice", NULL);

    /* A certificate of an unknown CA with the proxy's headers. */
    expect_unauthorized(e, ROGUE, "PUT", admin);
    assert_false(reported(e, "n1"));
    assert_false(reported(e, "n2"));
}

/* ---- tests: tokens ---- */

static void test_tokens(void **state)
{
    struct env *e = *state;
    const char *const alice[] = {"Authorization: Bearer alice-t", NULL};
    const char *const node1[] = {"Authorization: Bearer node1-t", NULL};
    const char *const root[] = {"Authorization: Bearer root-t", NULL};
    const char *const wrong[] = {"Authorization: Bearer nobody-t", NULL};
    const char *const empty[] = {"Authorization: Bearer ", NULL};
    const char *const basic[] = {"Authorization: Basic YWxpY2U6cHc=", NULL};
    unsigned long served0 = served_reviews();

    expect_reviews(e, 0, served0);

    /* An authenticated review: reads allowed, writes by the usual rules. */
    assert_int_equal(get_code(e, NOBODY, PATH, alice), 200);
    expect_reviews(e, 1, served0 + 1);
    expect_forbidden(e, NOBODY, "n1", alice, "alice", "members of \"system:masters\"");
    assert_int_equal(put_code(e, NOBODY, "n1", node1), 200);
    expect_forbidden(e, NOBODY, "n2", node1, "system:node:n1", "node \"n1\" may only write");
    assert_int_equal(put_code(e, NOBODY, "n2", root), 200);
    assert_true(reported(e, "n1"));
    assert_true(reported(e, "n2"));
    expect_reviews(e, 3, served0 + 3);

    /* An unauthenticated review: 401. */
    expect_unauthorized(e, NOBODY, "GET", wrong);
    expect_unauthorized(e, NOBODY, "PUT", wrong);
    expect_reviews(e, 4, served0 + 4);

    /* Within the TTL, both kinds of answer come from the cache: no review sent. */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(get_code(e, NOBODY, PATH "/n1", alice), 200);
        assert_int_equal(put_code(e, NOBODY, "n1", node1), 200);
        expect_unauthorized(e, NOBODY, "GET", wrong);
    }
    expect_reviews(e, 4, served0 + 4);

    /* Not a bearer token, or an empty one: 401 without asking. */
    expect_unauthorized(e, NOBODY, "GET", empty);
    expect_unauthorized(e, NOBODY, "GET", basic);
    expect_reviews(e, 4, served0 + 4);
}

/* A token given directly (the dashboard's login form): the same review, cache and answers. */
static void test_token_direct(void **state)
{
    struct env *e = *state;
    const struct apiserver_auth *hooks = nodemetric_auth_hooks(e->auth);
    const char *const alice[] = {"Authorization: Bearer alice-t", NULL};
    struct nodemetric_auth_opts o = default_opts();
    struct nodemetric_auth *no_tokens;
    struct api_user u = {0};
    unsigned long served0 = served_reviews();
    char *huge;

    assert_int_equal(nodemetric_auth_token(e->auth, "alice-t", &u), 0);
    assert_string_equal(u.name, "alice");
    hooks->release(hooks->userdata, &u);
    expect_reviews(e, 1, served0 + 1);
    /* Cached: neither a second login nor a request with the token asks again. */
    assert_int_equal(nodemetric_auth_token(e->auth, "alice-t", &u), 0);
    hooks->release(hooks->userdata, &u);
    assert_int_equal(get_code(e, NOBODY, PATH, alice), 200);
    expect_reviews(e, 1, served0 + 1);
    assert_int_equal(nodemetric_auth_token(e->auth, "nobody-t", &u), -EACCES);
    expect_reviews(e, 2, served0 + 2);
    /* Empty or oversized: refused without a review. */
    assert_int_equal(nodemetric_auth_token(e->auth, "", &u), -EACCES);
    huge = xmalloc((64u << 10) + 2);
    memset(huge, 'a', (64u << 10) + 1);
    huge[(64u << 10) + 1] = '\0';
    assert_int_equal(nodemetric_auth_token(e->auth, huge, &u), -E2BIG);
    free(huge);
    expect_reviews(e, 2, served0 + 2);
    /* No TokenReview client: tokens are not checked here at all. */
    o.tokenreview = NULL;
    assert_int_equal(nodemetric_auth_new(&o, &no_tokens), 0);
    assert_int_equal(nodemetric_auth_token(no_tokens, "alice-t", &u), -ENOENT);
    nodemetric_auth_free(no_tokens);
}

static void test_token_cache_ttl(void **state)
{
    struct env *e = *state;
    const char *const alice[] = {"Authorization: Bearer alice-t", NULL};
    const char *const wrong[] = {"Authorization: Bearer nobody-t", NULL};
    struct nodemetric_auth_opts o = default_opts();
    unsigned long served0;
    int64_t t;

    o.cache_ttl_ms = SHORT_TTL_MS;
    env_restart(e, &o);
    served0 = served_reviews();

    /* Both answers are cached when the request returns; after the TTL they are asked again. */
    for (int round = 1; round <= 2; round++) {
        assert_int_equal(get_code(e, NOBODY, PATH, alice), 200);
        expect_unauthorized(e, NOBODY, "GET", wrong);
        t = mono_ms();
        expect_reviews(e, 2ul * (unsigned long)round, served0 + 2ul * (unsigned long)round);
        wait_until_ms(t + SHORT_TTL_MS + 1);
    }
    assert_int_equal(get_code(e, NOBODY, PATH, alice), 200);
    expect_reviews(e, 5, served0 + 5);
}

static void test_token_cache_bound(void **state)
{
    struct env *e = *state;
    const char *const a[] = {"Authorization: Bearer alice-t", NULL};
    const char *const b[] = {"Authorization: Bearer node1-t", NULL};
    const char *const c[] = {"Authorization: Bearer root-t", NULL};
    /* The token sent, and whether it must be reviewed (a cache miss). */
    const struct {
        const char *const *tok;
        bool miss;
    } steps[] = {
        {a, true},  {b, true},  {c, true}, /* C evicts A, the entry expiring soonest */
        {b, false}, {c, false},            /* B and C stay */
        {a, true},                         /* A evicts B */
        {c, false}, {b, true},             /* B evicts C */
        {a, false},
    };
    struct nodemetric_auth_opts o = default_opts();
    unsigned long served0, want = 0;
    int64_t last = 0;

    o.cache_max = 2;
    env_restart(e, &o);
    served0 = served_reviews();
    for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
        /* Distinct expiry times, so "soonest" names one entry. */
        wait_until_ms(last + 2);
        assert_int_equal(get_code(e, NOBODY, PATH, steps[i].tok), 200);
        last = mono_ms();
        want += steps[i].miss;
        if (nodemetric_auth_reviews(e->auth) != want)
            fail_msg("step %zu: %lu reviews, want %lu", i, nodemetric_auth_reviews(e->auth), want);
    }
    expect_reviews(e, want, served0 + want);
}

/* A client sending tokens nobody knows: TokenReviews stop at the bucket (burst 3, refilling
 * one in 1000 s, so none within the test); past it every unknown token is 401 unreviewed,
 * a failed token is answered from the cache, a known one still gets in. */
static void test_tokenreview_rate(void **state)
{
    struct env *e = *state;
    const char *const alice[] = {"Authorization: Bearer alice-t", NULL};
    struct nodemetric_auth_opts o = default_opts();
    struct nodemetric_auth_stats st;
    unsigned long served0;

    o.review_qps = 0.001;
    o.review_burst = 3;
    env_restart(e, &o);
    served0 = served_reviews();
    assert_int_equal(get_code(e, NOBODY, PATH, alice), 200);
    for (int i = 0; i < 20; i++) {
        char hdr[64];
        const char *const bogus[] = {hdr, NULL};

        (void)snprintf(hdr, sizeof(hdr), "Authorization: Bearer bogus-%d", i);
        expect_unauthorized(e, NOBODY, "GET", bogus);
    }
    expect_reviews(e, 3, served0 + 3);
    nodemetric_auth_stats(e->auth, &st);
    assert_int_equal(st.reviews, 3);
    assert_int_equal(st.throttled, 18);
    assert_int_equal(st.cached_denied, 0);
    /* bogus-0 failed its review: answered from the cache */
    {
        const char *const bogus0[] = {"Authorization: Bearer bogus-0", NULL};
        expect_unauthorized(e, NOBODY, "GET", bogus0);
    }
    /* a valid token the cache does not know waits for the bucket like any other */
    {
        const char *const node1[] = {"Authorization: Bearer node1-t", NULL};
        expect_unauthorized(e, NOBODY, "GET", node1);
    }
    assert_int_equal(get_code(e, NOBODY, PATH, alice), 200);
    nodemetric_auth_stats(e->auth, &st);
    assert_int_equal(st.reviews, 3);
    assert_int_equal(st.throttled, 19);
    assert_int_equal(st.cached_denied, 1);
    expect_reviews(e, 3, served0 + 3);
}

static void test_tokenreview_unreachable(void **state)
{
    struct env *e = *state;
    const char *const alice[] = {"Authorization: Bearer alice-t", NULL};

    /* The API server is down: 401, and the failure is not cached. */
    kt_server_stop(W.kt);
    expect_unauthorized(e, NOBODY, "GET", alice);
    assert_int_equal(nodemetric_auth_reviews(e->auth), 1);
    expect_unauthorized(e, NOBODY, "GET", alice);
    assert_int_equal(nodemetric_auth_reviews(e->auth), 2);

    /* Back on the same address: the token works, and is cached from then on. */
    kt_server_start(W.kt, 0);
    kt_use_tokens();
    assert_int_equal(get_code(e, NOBODY, PATH, alice), 200);
    assert_int_equal(get_code(e, NOBODY, PATH, alice), 200);
    expect_reviews(e, 3, 1);
}

/* ---- tests: the admin group ---- */

static void test_admin_group(void **state)
{
    struct env *e = *state;
    const char *const root[] = {"Authorization: Bearer root-t", NULL};
    struct nodemetric_auth_opts o = default_opts();

    o.admin_group = "koord:admins";
    env_restart(e, &o);
    assert_int_equal(put_code(e, DAVE, "n1", NULL), 200);
    assert_int_equal(put_code(e, DAVE, "n2", NULL), 200);
    /* system:masters is nothing special any more. */
    expect_forbidden(e, ADMIN, "n1", NULL, "admin", "members of \"koord:admins\"");
    expect_forbidden(e, NOBODY, "n1", root, "root", "members of \"koord:admins\"");
    /* Nodes keep their own. */
    assert_int_equal(put_code(e, NODE2, "n2", NULL), 200);
    expect_forbidden(e, NODE2, "n1", NULL, "system:node:n2", NULL);
}

/* ---- tests: TokenReview answers koord apiserver does not give ---- */

struct fake {
    struct http_server *http;
    atomic_int reviews;
};

/* Answers TokenReviews: sa-t is a pod-bound service-account token of node n1, nouser-t is
 * "authenticated" without a user name, fail-t makes the server fail, anything else is not
 * authenticated. */
static void fake_handle(const struct http_request *req, struct http_response *resp, void *ud)
{
    struct fake *f = ud;
    size_t len = 0;
    const char *body = http_request_body(req, &len);
    cJSON *review = cJSON_ParseWithLength(body ? body : "", len);
    const char *token = str_of(review, "spec", "token");

    atomic_fetch_add(&f->reviews, 1);
    resp->status = 201;
    if (strcmp(http_request_path(req), "/apis/authentication.k8s.io/v1/tokenreviews") ||
        !strcmp(token, "fail-t")) {
        resp->status = 500;
        strbuf_addstr(&resp->body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":"
                                   "\"Failure\",\"reason\":\"InternalError\",\"code\":500}");
    } else if (!strcmp(token, "sa-t")) {
        strbuf_addstr(&resp->body,
                      "{\"kind\":\"TokenReview\",\"apiVersion\":\"authentication.k8s.io/v1\","
                      "\"status\":{\"authenticated\":true,\"user\":{\"username\":\"" SA_USER
                      "\",\"uid\":\"sa-uid\",\"groups\":[\"system:serviceaccounts\","
                      "\"system:authenticated\"],\"extra\":{"
                      "\"authentication.kubernetes.io/pod-name\":[\"koordlet-abcde\"],"
                      "\"authentication.kubernetes.io/node-name\":[\"n1\"]}}}}");
    } else if (!strcmp(token, "nouser-t")) {
        strbuf_addstr(&resp->body,
                      "{\"kind\":\"TokenReview\",\"apiVersion\":\"authentication.k8s.io/v1\","
                      "\"status\":{\"authenticated\":true,\"user\":{}}}");
    } else {
        strbuf_addstr(&resp->body,
                      "{\"kind\":\"TokenReview\",\"apiVersion\":\"authentication.k8s.io/v1\","
                      "\"status\":{\"user\":{}}}");
    }
    cJSON_Delete(review);
}

static void test_tokenreview_extra(void **state)
{
    struct env *e = *state;
    const char *const sa[] = {"Authorization: Bearer sa-t", NULL};
    const char *const nouser[] = {"Authorization: Bearer nouser-t", NULL};
    const char *const failing[] = {"Authorization: Bearer fail-t", NULL};
    struct nodemetric_auth_opts o = default_opts();
    struct fake f = {.reviews = 0};
    struct kube_config *cfg = NULL;
    struct kube_client *c = NULL;
    struct strbuf kc = STRBUF_INIT, err = STRBUF_INIT;

    assert_int_equal(http_server_start(&(struct http_server_opts){.host = "127.0.0.1"}, fake_handle,
                                       &f, &f.http),
                     0);
    strbuf_addf(&kc,
                "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
                "clusters: [{name: c, cluster: {server: \"http://127.0.0.1:%u\"}}]\n"
                "users: [{name: u, user: {}}]\n"
                "contexts: [{name: x, context: {cluster: c, user: u}}]\n",
                http_server_port(f.http));
    if (kube_config_from_text(kc.buf, kc.len, "fake", NULL, NULL, &cfg, &err) < 0)
        fail_msg("kubeconfig: %s", err.buf);
    cfg->timeout_ms = TIMEOUT_MS;
    assert_int_equal(kube_client_new(cfg, &c), 0);
    o.tokenreview = c;
    env_restart(e, &o);

    /* The node-name extra of a pod-bound service-account token: its node only. */
    assert_int_equal(get_code(e, NOBODY, PATH, sa), 200);
    assert_int_equal(put_code(e, NOBODY, "n1", sa), 200);
    assert_true(reported(e, "n1"));
    expect_forbidden(e, NOBODY, "n2", sa, SA_USER, "node \"n1\" may only write its own");
    assert_int_equal(atomic_load(&f.reviews), 1);

    /* "Authenticated" without a user name is not; cached like any unauthenticated answer. */
    expect_unauthorized(e, NOBODY, "GET", nouser);
    expect_unauthorized(e, NOBODY, "GET", nouser);
    assert_int_equal(atomic_load(&f.reviews), 2);

    /* A review that fails: 401, not cached. */
    expect_unauthorized(e, NOBODY, "GET", failing);
    expect_unauthorized(e, NOBODY, "GET", failing);
    assert_int_equal(atomic_load(&f.reviews), 4);
    assert_int_equal(nodemetric_auth_reviews(e->auth), 4);

    env_stop(e); /* before the client it borrows */
    kube_client_free(c);
    http_server_stop(f.http);
    o = default_opts();
    env_start(e, &o);
    strbuf_release(&kc);
    strbuf_release(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_client_certificates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_front_proxy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_front_proxy_name_not_allowed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_headers_without_proxy_cert, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tokens, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_direct, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_cache_ttl, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_cache_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(test_admin_group, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tokenreview_extra, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tokenreview_unreachable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tokenreview_rate, setup, teardown),
    };

    (void)log_set_level("error");
    codec_init();
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
