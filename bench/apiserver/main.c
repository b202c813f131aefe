/*
 * bench/apiserver: `koord apiserver` against etcd, in one run on this machine (issue
 * "bench/apiserver"). Both servers are started here, each in a temp dir on free loopback
 * ports, and stopped at the end (also when a step fails). Workloads, run on koord, then on etcd:
 *
 *   create  N NodeSLO objects (default 10000) from C client connections (default 8);
 *           creates/s and per-request p50/p99 latency;
 *   list    all of them, L times (default 5): koord one GET of the collection (JSON), etcd one
 *           range over the key prefix; median and fastest wall time to the last byte;
 *   watch   W watch connections (default 100) while C writers update the objects at R/s
 *           (default 1000) for S seconds (default 5); per-event delivery latency (send time,
 *           carried in an annotation, to arrival at each watcher) and events missed.
 *
 * Fairness: the same object bytes go to both (a NodeSLO rendered by src/slo from
 * examples/slo-controller-config.yaml for examples/nodes/node-pool-a.yaml, plus a name and a
 * fixed-width annotation; etcd stores exactly these bytes, koord stores them after adding
 * uid, timestamps and generation). Both are reached over TLS (koord's own certificate, verified;
 * etcd --auto-tls) with HTTP/1.1 keep-alive, one connection per client thread, the same number
 * of client threads. Every acknowledged write is durable on both: koord commits each write
 * to SQLite in WAL mode with synchronous=FULL; etcd fsyncs its WAL before answering (its
 * default; it batches the fsync across concurrent proposals). etcd is driven through its
 * JSON gateway, as Kubernetes drives it through gRPC: creates are the transaction
 * kube-apiserver sends (put if create_revision == 0), updates plain puts, base64 encoding is
 * done before the clock starts. kube-apiserver itself is not in the picture: this compares
 * koord's whole API server with etcd's storage service.
 *
 * Prints the figures and the ratios koord/etcd with the issue's targets (list of 10000 under
 * 100 ms, watch p99 under 50 ms at 1000 updates/s to 100 watchers, durable creates/s at least
 * etcd's). Timings never fail the run; errors, wrong counts and missed events do (exit 1).
 * --smoke runs tiny counts so `make test` keeps this program working.
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "codec/codec.h"
#include "common/bench.h"
#include "slo/slo.h"

#define KOORD_PATH_PREFIX "/apis/slo.koordinator.sh/v1alpha1/nodeslos"
#define ETCD_KEY_PREFIX   "/registry/slo.koordinator.sh/nodeslos/"
#define MARK_KEY          "bench.koord.sh/mark"
#define NAME_FMT          "node-%06zu"
#define MARK_FMT          "%09zu.%019llu"
#define MAX_LINE          (64u << 20) /* one watch event; far above any NodeSLO */
#define DRAIN_SECONDS     10          /* after the last write, for events still in flight */

static const char usage[] =
    "usage: bench_apiserver [--objects N] [--clients C] [--lists L] [--watchers W]\n"
    "                       [--rate R] [--seconds S] [--koord PATH] [--etcd PATH]\n"
    "                       [--no-etcd] [--no-koord] [--smoke]\n"
    "\n"
    "Runs create/list/watch against `koord apiserver` and etcd (started here) and prints\n"
    "figures and koord/etcd ratios. Defaults: 10000 objects, 8 clients, 5 lists, 100 watchers,\n"
    "1000 updates/s for 5 s; --smoke: 200, 4, 1, 4, 200/s for 1 s.\n";

static struct {
    size_t objects, clients, lists, watchers, seconds;
    double rate;
    const char *koord, *etcd;
    bool no_etcd, no_koord;
} opt = {10000, 8, 5, 100, 5, 1000, KOORD_BINARY, "etcd", false, false};

/* ---- the object ---- */

/* The object's bytes around its name and its mark annotation, both fixed width. */
struct objtpl {
    struct strbuf pre, mid, post;
    size_t size;
};

static struct objtpl tpl;

/* Splits printed JSON at a placeholder string value. */
static void split_at(const char *s, const char *ph, struct strbuf *before, const char **rest)
{
    const char *p = strstr(s, ph);

    CHECK(p);
    strbuf_add(before, s, (size_t)(p - s));
    *rest = p + strlen(ph);
}

static int tpl_init(void)
{
    cJSON *cm = bench_read_doc("examples/slo-controller-config.yaml");
    cJSON *node = bench_read_doc("examples/nodes/node-pool-a.yaml"), *obj = NULL, *meta, *ann;
    struct slo_config *cfg = slo_config_new();
    struct slo_events ev = {0};
    struct strbuf json = STRBUF_INIT;
    const char *rest;
    bool changed;
    int r = -EINVAL;

    strbuf_init(&tpl.pre);
    strbuf_init(&tpl.mid);
    strbuf_init(&tpl.post);
    if (!cm || !node)
        goto out;
    CHECK(slo_config_update(cfg, cJSON_GetObjectItemCaseSensitive(cm, "data"), &ev, &changed) == 0);
    CHECK(slo_render_nodeslo(cfg, node, &obj) == 0);
    meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    CHECK(meta);
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "name");
    CHECK(cJSON_AddStringToObject(meta, "name", "@NAME@"));
    ann = cJSON_AddObjectToObject(meta, "annotations");
    CHECK(ann && cJSON_AddStringToObject(ann, MARK_KEY, "@MARK@"));
    CHECK(json_print(obj, &json) == 0);
    split_at(json.buf, "@NAME@", &tpl.pre, &rest);
    {
        const char *mark = strstr(rest, "@MARK@");
        CHECK(mark);
        strbuf_add(&tpl.mid, rest, (size_t)(mark - rest));
        strbuf_addstr(&tpl.post, mark + strlen("@MARK@"));
    }
    tpl.size = tpl.pre.len + tpl.mid.len + tpl.post.len + 11 + 29;
    r = 0;
out:
    cJSON_Delete(cm);
    cJSON_Delete(node);
    cJSON_Delete(obj);
    slo_config_free(cfg);
    slo_events_release(&ev);
    strbuf_release(&json);
    return r;
}

static void tpl_release(void)
{
    strbuf_release(&tpl.pre);
    strbuf_release(&tpl.mid);
    strbuf_release(&tpl.post);
}

/* Object i's bytes with mark seq.sent (seq 0: not an update we time). */
static void obj_render(size_t i, size_t seq, uint64_t sent, struct strbuf *out)
{
    strbuf_reset(out);
    strbuf_add(out, tpl.pre.buf, tpl.pre.len);
    strbuf_addf(out, NAME_FMT, i);
    strbuf_add(out, tpl.mid.buf, tpl.mid.len);
    strbuf_addf(out, MARK_FMT, seq, (unsigned long long)sent);
    strbuf_add(out, tpl.post.buf, tpl.post.len);
}

/* ---- requests, the same operation on either server ---- */

struct request {
    const char *method;
    struct strbuf path, body;
};

static void etcd_key(size_t i, struct strbuf *out)
{
    char key[128];
    int n = snprintf(key, sizeof(key), ETCD_KEY_PREFIX NAME_FMT, i);

    b64_encode(out, key, (size_t)n);
}

/* A create (update = false) or an unconditional update of object i to the bytes in obj. */
static void build_write(const struct server *s, bool update, size_t i, const struct strbuf *obj,
                        struct request *rq)
{
    strbuf_reset(&rq->path);
    strbuf_reset(&rq->body);
    if (s->kind == SERVER_KOORD) {
        rq->method = update ? "PUT" : "POST";
        strbuf_addstr(&rq->path, KOORD_PATH_PREFIX);
        if (update)
            strbuf_addf(&rq->path, "/" NAME_FMT, i);
        strbuf_add(&rq->body, obj->buf, obj->len);
        return;
    }
    rq->method = "POST";
    if (update) {
        strbuf_addstr(&rq->path, "/v3/kv/put");
        strbuf_addstr(&rq->body, "{\"key\":\"");
        etcd_key(i, &rq->body);
        strbuf_addstr(&rq->body, "\",\"value\":\"");
        b64_encode(&rq->body, obj->buf, obj->len);
        strbuf_addstr(&rq->body, "\"}");
        return;
    }
    /* kube-apiserver's create: put only if the key has never been written. */
    strbuf_addstr(&rq->path, "/v3/kv/txn");
    strbuf_addstr(&rq->body, "{\"compare\":[{\"key\":\"");
    etcd_key(i, &rq->body);
    strbuf_addstr(&rq->body, "\",\"target\":\"CREATE\",\"create_revision\":\"0\"}],"
                             "\"success\":[{\"request_put\":{\"key\":\"");
    etcd_key(i, &rq->body);
    strbuf_addstr(&rq->body, "\",\"value\":\"");
    b64_encode(&rq->body, obj->buf, obj->len);
    strbuf_addstr(&rq->body, "\"}}]}");
}

/* Whether the response to a write built by build_write() means it was done. */
static bool write_ok(const struct server *s, bool update, const struct conn *c)
{
    if (s->kind == SERVER_KOORD)
        return c->status == (update ? 200 : 201);
    return c->status == 200 && (update || strstr(c->body.buf, "\"succeeded\":true"));
}

static int send_write(struct conn *c, bool update, const struct request *rq)
{
    if (conn_do(c, rq->method, rq->path.buf, rq->body.buf, rq->body.len) < 0)
        return -EIO;
    if (!write_ok(c->srv, update, c)) {
        (void)fprintf(stderr, "bench_apiserver: %s %s: HTTP %ld: %.300s\n", rq->method,
                      rq->path.buf, c->status, c->body.buf);
        return -EIO;
    }
    return 0;
}

/* ---- figures ---- */

struct result {
    bool ran;
    double creates_per_s, create_srv_cpu, create_cli_cpu;
    struct dist create_ms;
    double list_ms, list_min_ms, list_mb, list_ttfb_ms;
    size_t list_count;
    uint64_t rev; /* after the creates: where watches start */
    bool watched;
    struct dist watch_ms, update_ms;
    double achieved_rate, watch_srv_cpu, watch_cli_cpu;
    size_t delivered, expected, dups, stream_errors;
};

/* ---- create ---- */

struct create_run {
    const struct server *srv;
    atomic_size_t next;
    atomic_int errors;
    double *ms;
};

static void *create_worker(void *ud)
{
    struct create_run *run = ud;
    struct request rq = {NULL, STRBUF_INIT, STRBUF_INIT};
    struct strbuf obj = STRBUF_INIT;
    struct conn c;

    conn_init(&c, run->srv);
    for (;;) {
        size_t i = atomic_fetch_add(&run->next, 1);
        double t0;

        if (i >= opt.objects)
            break;
        obj_render(i, 0, 0, &obj);
        build_write(run->srv, false, i, &obj, &rq);
        t0 = now_s();
        if (send_write(&c, false, &rq) < 0) {
            atomic_fetch_add(&run->errors, 1);
            break;
        }
        run->ms[i] = (now_s() - t0) * 1e3;
    }
    conn_release(&c);
    strbuf_release(&obj);
    strbuf_release(&rq.path);
    strbuf_release(&rq.body);
    return NULL;
}

static int run_creates(const struct server *s, struct result *res)
{
    struct create_run run = {.srv = s};
    pthread_t *th = xcalloc(opt.clients, sizeof(*th));
    double t0, cpu0 = server_cpu(s), cli0 = bench_self_cpu();

    run.ms = xcalloc(opt.objects, sizeof(double));
    t0 = now_s();
    for (size_t i = 0; i < opt.clients; i++)
        CHECK(pthread_create(&th[i], NULL, create_worker, &run) == 0);
    for (size_t i = 0; i < opt.clients; i++)
        CHECK(pthread_join(th[i], NULL) == 0);
    res->creates_per_s = (double)opt.objects / (now_s() - t0);
    res->create_srv_cpu = server_cpu(s) - cpu0;
    res->create_cli_cpu = bench_self_cpu() - cli0;
    res->create_ms = bench_dist(run.ms, opt.objects);
    free(run.ms);
    free(th);
    if (run.errors) {
        bench_fail(s->name, "%d create requests failed", (int)run.errors);
        return -EIO;
    }
    return 0;
}

/* ---- list ---- */

/* Checks a list response and finds its count and revision. */
static int parse_list(const struct server *s, const struct strbuf *body, size_t *ret_n,
                      uint64_t *ret_rev)
{
    cJSON *doc = cJSON_ParseWithLength(body->buf, body->len);
    const cJSON *items, *rv;
    int64_t v = -1;
    int r = -EIO;

    if (!doc)
        goto out;
    if (s->kind == SERVER_KOORD) {
        items = cJSON_GetObjectItemCaseSensitive(doc, "items");
        rv = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "metadata"),
                                              "resourceVersion");
    } else {
        items = cJSON_GetObjectItemCaseSensitive(doc, "kvs");
        rv = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "header"),
                                              "revision");
    }
    if (!cJSON_IsArray(items) || !cJSON_IsString(rv) || parse_i64(rv->valuestring, &v) < 0 ||
        v <= 0)
        goto out;
    *ret_n = (size_t)cJSON_GetArraySize(items);
    *ret_rev = (uint64_t)v;
    r = 0;
out:
    cJSON_Delete(doc);
    return r;
}

static int run_lists(const struct server *s, struct result *res)
{
    double *ms = xcalloc(opt.lists, sizeof(double)), *ttfb = xcalloc(opt.lists, sizeof(double));
    struct strbuf body = STRBUF_INIT;
    struct conn c;
    int r = 0;

    conn_init(&c, s);
    if (s->kind == SERVER_ETCD) {
        static const char prefix[] = ETCD_KEY_PREFIX;
        char end[sizeof(prefix)];
        memcpy(end, prefix, sizeof(prefix));
        end[sizeof(prefix) - 2]++; /* the range end: the prefix with its last byte + 1 */
        strbuf_addstr(&body, "{\"key\":\"");
        b64_encode(&body, prefix, sizeof(prefix) - 1);
        strbuf_addstr(&body, "\",\"range_end\":\"");
        b64_encode(&body, end, sizeof(end) - 1);
        strbuf_addstr(&body, "\"}");
    }
    for (size_t i = 0; i < opt.lists && r == 0; i++) {
        double t0 = now_s();
        if (s->kind == SERVER_KOORD)
            r = conn_do(&c, "GET", KOORD_PATH_PREFIX, NULL, 0);
        else
            r = conn_do(&c, "POST", "/v3/kv/range", body.buf, body.len);
        ms[i] = (now_s() - t0) * 1e3;
        ttfb[i] = c.ttfb * 1e3;
        if (r == 0 && c.status != 200) {
            bench_fail(s->name, "list: HTTP %ld: %.300s", c.status, c.body.buf);
            r = -EIO;
        } else if (r == 0 && (parse_list(s, &c.body, &res->list_count, &res->rev) < 0 ||
                              res->list_count != opt.objects)) {
            bench_fail(s->name, "list returned %zu objects, want %zu", res->list_count,
                       opt.objects);
            r = -EIO;
        }
        res->list_mb = (double)c.body.len / 1e6;
    }
    if (r == 0) {
        res->list_ms = bench_dist(ms, opt.lists).p50;
        res->list_min_ms = ms[0];
        res->list_ttfb_ms = bench_dist(ttfb, opt.lists).p50;
    }
    free(ms);
    free(ttfb);
    strbuf_release(&body);
    conn_release(&c);
    return r;
}

/* ---- watch ---- */

struct watch_run;

struct watch_client {
    struct watch_run *run;
    pthread_t th;
    struct strbuf line;  /* the event being received */
    unsigned char *seen; /* [seq] for seq 1..total */
    double *ms;          /* delivery latencies */
    size_t received, dups, errors;
    bool live, settled;
};

struct watch_run {
    const struct server *srv;
    size_t total; /* updates */
    uint64_t rev; /* watches start after this revision */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t live, ended, settled; /* watchers past the warm-up; ended early; done or ended */
    atomic_bool stop;
    atomic_size_t next;
    atomic_int write_errors;
    uint64_t t0_ns;
    double *update_ms;
    double last_send; /* under mu */
    struct watch_client *w;
};

static void bump(struct watch_run *run, size_t *counter)
{
    CHECK(pthread_mutex_lock(&run->mu) == 0);
    (*counter)++;
    CHECK(pthread_cond_broadcast(&run->cv) == 0);
    CHECK(pthread_mutex_unlock(&run->mu) == 0);
}

static void settle(struct watch_client *w)
{
    if (!w->settled) {
        w->settled = true;
        bump(w->run, &w->run->settled);
    }
}

/* One mark seen (text at p: "SEQ.SENT"), arrived at `at`. */
static void on_mark(struct watch_client *w, const char *p, size_t len, uint64_t at)
{
    unsigned long long seq = 0, sent = 0;
    char buf[32];

    if (len < 29)
        return;
    memcpy(buf, p, 29);
    buf[29] = '\0';
    if (sscanf(buf, "%9llu.%19llu", &seq, &sent) != 2)
        return;
    if (seq == 0) {
        if (sent && !w->live) { /* the warm-up write */
            w->live = true;
            bump(w->run, &w->run->live);
        }
        return;
    }
    if (seq > w->run->total)
        return;
    if (w->seen[seq]) {
        w->dups++;
        return;
    }
    w->seen[seq] = 1;
    w->ms[w->received++] = (double)(at - sent) / 1e6;
    if (w->received == w->run->total)
        settle(w);
}

static const char *find(const char *hay, size_t n, const char *needle)
{
    return memmem(hay, n, needle, strlen(needle));
}

/* One koord watch event: {"type":...,"object":{...}}. */
static void koord_event(struct watch_client *w, const char *line, size_t len, uint64_t at)
{
    static const char key[] = "\"" MARK_KEY "\":\"";
    const char *p = find(line, len, key);

    if (find(line, len > 64 ? 64 : len, "\"type\":\"ERROR\"")) {
        (void)fprintf(stderr, "bench_apiserver: koord watch error: %.300s\n", line);
        w->errors++;
        return;
    }
    if (p)
        on_mark(w, p + sizeof(key) - 1, len - (size_t)(p + sizeof(key) - 1 - line), at);
}

/* One etcd watch response: {"result":{"header":...,"events":[{"kv":{...,"value":B64}},...]}}.
 * The mark sits near the start of the value, so only that much is decoded. */
static void etcd_event(struct watch_client *w, const char *line, size_t len, uint64_t at)
{
    static const char vkey[] = "\"value\":\"", key[] = "\"" MARK_KEY "\":\"";
    const char *p = line, *end = line + len;
    char dec[8192];

    if (find(line, len, "\"canceled\":true")) {
        (void)fprintf(stderr, "bench_apiserver: etcd watch canceled: %.300s\n", line);
        w->errors++;
        return;
    }
    while ((p = find(p, (size_t)(end - p), vkey))) {
        size_t vlen, n, want = 1024;
        const char *m;

        p += sizeof(vkey) - 1;
        vlen = (size_t)((const char *)memchr(p, '"', (size_t)(end - p)) - p);
        for (;;) {
            n = b64_decode(p, vlen < want ? vlen : want, dec, sizeof(dec));
            m = find(dec, n, key);
            if (m || want >= vlen || want >= sizeof(dec))
                break;
            want *= 4;
        }
        if (m)
            on_mark(w, m + sizeof(key) - 1, n - (size_t)(m + sizeof(key) - 1 - dec), at);
        p += vlen;
    }
}

static bool on_watch_data(void *ud, const char *data, size_t len)
{
    struct watch_client *w = ud;
    uint64_t at = now_ns();
    const char *nl;

    while ((nl = memchr(data, '\n', len))) {
        size_t n = (size_t)(nl - data);
        const char *line = data;
        if (w->line.len) {
            strbuf_add(&w->line, data, n);
            line = w->line.buf;
            n = w->line.len;
        }
        if (w->run->srv->kind == SERVER_KOORD)
            koord_event(w, line, n, at);
        else
            etcd_event(w, line, n, at);
        strbuf_reset(&w->line);
        len -= (size_t)(nl - data) + 1;
        data = nl + 1;
    }
    strbuf_add(&w->line, data, len);
    return w->line.len <= MAX_LINE;
}

static bool watch_should_stop(void *ud)
{
    const struct watch_client *w = ud;
    return atomic_load(&w->run->stop);
}

static void *watch_worker(void *ud)
{
    struct watch_client *w = ud;
    const struct server *s = w->run->srv;
    struct strbuf path = STRBUF_INIT, body = STRBUF_INIT;
    struct conn c;
    int rc;

    conn_init(&c, s);
    if (s->kind == SERVER_KOORD) {
        strbuf_addf(&path, KOORD_PATH_PREFIX "?watch=1&resourceVersion=%llu",
                    (unsigned long long)w->run->rev);
        rc = conn_stream(&c, "GET", path.buf, NULL, 0, on_watch_data, watch_should_stop, w);
    } else {
        static const char prefix[] = ETCD_KEY_PREFIX;
        char end[sizeof(prefix)];
        memcpy(end, prefix, sizeof(prefix));
        end[sizeof(prefix) - 2]++;
        strbuf_addstr(&body, "{\"create_request\":{\"key\":\"");
        b64_encode(&body, prefix, sizeof(prefix) - 1);
        strbuf_addstr(&body, "\",\"range_end\":\"");
        b64_encode(&body, end, sizeof(end) - 1);
        strbuf_addf(&body, "\",\"start_revision\":\"%llu\"}}", (unsigned long long)w->run->rev + 1);
        rc = conn_stream(&c, "POST", "/v3/watch", body.buf, body.len, on_watch_data,
                         watch_should_stop, w);
    }
    if (!atomic_load(&w->run->stop)) {
        (void)fprintf(stderr, "bench_apiserver: %s watch ended early: %s\n", s->name,
                      curl_easy_strerror((CURLcode)rc));
        w->errors++;
        bump(w->run, &w->run->ended);
    }
    settle(w);
    conn_release(&c);
    strbuf_release(&path);
    strbuf_release(&body);
    return NULL;
}

/* Update k is due at t0 + k / rate: an open-loop schedule, so a slow server shows up as
 * latency and as a lower achieved rate rather than as a politely slower writer. */
static void *write_worker(void *ud)
{
    struct watch_run *run = ud;
    struct request rq = {NULL, STRBUF_INIT, STRBUF_INIT};
    struct strbuf obj = STRBUF_INIT;
    double last = 0;
    struct conn c;

    conn_init(&c, run->srv);
    for (;;) {
        size_t k = atomic_fetch_add(&run->next, 1);
        uint64_t due = run->t0_ns + (uint64_t)((double)k * 1e9 / opt.rate);
        struct timespec ts = {(time_t)(due / 1000000000u), (long)(due % 1000000000u)};
        double t0;

        if (k >= run->total)
            break;
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
        t0 = now_s();
        obj_render(k % opt.objects, k + 1, now_ns(), &obj);
        build_write(run->srv, true, k % opt.objects, &obj, &rq);
        if (send_write(&c, true, &rq) < 0) {
            atomic_fetch_add(&run->write_errors, 1);
            break;
        }
        run->update_ms[k] = (now_s() - t0) * 1e3;
        last = t0;
    }
    CHECK(pthread_mutex_lock(&run->mu) == 0);
    if (last > run->last_send)
        run->last_send = last;
    CHECK(pthread_mutex_unlock(&run->mu) == 0);
    conn_release(&c);
    strbuf_release(&obj);
    strbuf_release(&rq.path);
    strbuf_release(&rq.body);
    return NULL;
}

/* Waits until *counter (+ *also) reaches n or the deadline (monotonic seconds) passes. */
static bool wait_count(struct watch_run *run, const size_t *counter, const size_t *also, size_t n,
                       double deadline)
{
    struct timespec ts = {(time_t)deadline, (long)((deadline - (double)(time_t)deadline) * 1e9)};
    bool ok;

    CHECK(pthread_mutex_lock(&run->mu) == 0);
    while (*counter + (also ? *also : 0) < n)
        if (pthread_cond_timedwait(&run->cv, &run->mu, &ts) != 0)
            break;
    ok = *counter + (also ? *also : 0) >= n;
    CHECK(pthread_mutex_unlock(&run->mu) == 0);
    return ok;
}

static int run_watch(const struct server *s, struct result *res)
{
    struct watch_run run = {.srv = s, .rev = res->rev};
    pthread_t *writers = xcalloc(opt.clients, sizeof(*writers));
    struct request rq = {NULL, STRBUF_INIT, STRBUF_INIT};
    struct strbuf obj = STRBUF_INIT;
    pthread_condattr_t attr;
    double cpu0, cli0, *all;
    size_t nall = 0;
    struct conn c;
    int r = 0;

    run.total = (size_t)(opt.rate * (double)opt.seconds);
    run.update_ms = xcalloc(run.total ? run.total : 1, sizeof(double));
    run.w = xcalloc(opt.watchers, sizeof(*run.w));
    CHECK(pthread_mutex_init(&run.mu, NULL) == 0);
    CHECK(pthread_condattr_init(&attr) == 0);
    CHECK(pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0);
    CHECK(pthread_cond_init(&run.cv, &attr) == 0);
    (void)pthread_condattr_destroy(&attr);
    for (size_t i = 0; i < opt.watchers; i++) {
        struct watch_client *w = &run.w[i];
        w->run = &run;
        strbuf_init(&w->line);
        w->seen = xcalloc(run.total + 1, 1);
        w->ms = xcalloc(run.total ? run.total : 1, sizeof(double));
        CHECK(pthread_create(&w->th, NULL, watch_worker, w) == 0);
    }
    /* One write every watcher must see before the clock starts: then all streams are live
     * (a watch that connects late still gets it, replayed from its start revision). */
    conn_init(&c, s);
    obj_render(0, 0, now_ns(), &obj);
    build_write(s, true, 0, &obj, &rq);
    if (send_write(&c, true, &rq) < 0) {
        bench_fail(s->name, "warm-up write failed");
        r = -EIO;
    } else if (!wait_count(&run, &run.live, &run.ended, opt.watchers, now_s() + 30) || run.ended) {
        bench_fail(s->name, "%zu of %zu watches started", run.live, opt.watchers);
        r = -EIO;
    }
    conn_release(&c);
    cpu0 = server_cpu(s);
    cli0 = bench_self_cpu();
    if (r == 0) {
        run.t0_ns = now_ns();
        for (size_t i = 0; i < opt.clients; i++)
            CHECK(pthread_create(&writers[i], NULL, write_worker, &run) == 0);
        for (size_t i = 0; i < opt.clients; i++)
            CHECK(pthread_join(writers[i], NULL) == 0);
        (void)wait_count(&run, &run.settled, NULL, opt.watchers, now_s() + DRAIN_SECONDS);
    }
    res->watch_srv_cpu = server_cpu(s) - cpu0;
    res->watch_cli_cpu = bench_self_cpu() - cli0;
    atomic_store(&run.stop, true);
    all = xcalloc(opt.watchers * (run.total ? run.total : 1), sizeof(double));
    for (size_t i = 0; i < opt.watchers; i++) {
        struct watch_client *w = &run.w[i];
        CHECK(pthread_join(w->th, NULL) == 0);
        memcpy(all + nall, w->ms, w->received * sizeof(double));
        nall += w->received;
        res->dups += w->dups;
        res->stream_errors += w->errors;
        strbuf_release(&w->line);
        free(w->seen);
        free(w->ms);
    }
    if (r == 0) {
        res->watched = true;
        res->delivered = nall;
        res->expected = opt.watchers * run.total;
        res->watch_ms = bench_dist(all, nall);
        res->update_ms = bench_dist(run.update_ms, run.total);
        res->achieved_rate =
            run.total > 1 && run.last_send > (double)run.t0_ns / 1e9
                ? (double)(run.total - 1) / (run.last_send - (double)run.t0_ns / 1e9)
                : 0;
        if (run.write_errors)
            bench_fail(s->name, "%d update requests failed", (int)run.write_errors);
        if (res->delivered != res->expected)
            bench_fail(s->name, "watchers missed %zu of %zu events", res->expected - res->delivered,
                       res->expected);
        if (res->stream_errors || res->dups)
            bench_fail(s->name, "%zu watch streams failed, %zu duplicate events",
                       res->stream_errors, res->dups);
    }
    free(all);
    free(run.w);
    free(run.update_ms);
    free(writers);
    strbuf_release(&obj);
    strbuf_release(&rq.path);
    strbuf_release(&rq.body);
    (void)pthread_cond_destroy(&run.cv);
    (void)pthread_mutex_destroy(&run.mu);
    return r;
}

/* ---- the run ---- */

static void run_side(struct server *s, struct result *res)
{
    res->ran = true;
    (void)printf("%s: creating %zu objects ...\n", s->name, opt.objects);
    (void)fflush(stdout);
    if (run_creates(s, res) < 0)
        return;
    (void)printf("%s: %.0f creates/s; listing ...\n", s->name, res->creates_per_s);
    (void)fflush(stdout);
    if (run_lists(s, res) < 0)
        return;
    (void)printf("%s: list %.1f ms; %zu watchers, %.0f updates/s for %zu s ...\n", s->name,
                 res->list_ms, opt.watchers, opt.rate, opt.seconds);
    (void)fflush(stdout);
    (void)run_watch(s, res);
}

static double ratio(double a, double b)
{
    return b > 0 ? a / b : 0;
}

static const char *verdict(bool met)
{
    return met ? "met" : "MISSED";
}

static double start_load; /* 1-minute load average before we started: other work */

static void report(const struct result *k, const struct result *e)
{
    const struct result *side[2] = {k, e};
    const char *names[2] = {"koord", "etcd"};
    double load = 0;

    (void)getloadavg(&load, 1);
    (void)printf("\nbench/apiserver: %zu NodeSLOs of %zu bytes, %zu client connections; "
                 "%ld CPUs, load %.2f before the run, %.2f after (which counts our threads)\n",
                 opt.objects, tpl.size, opt.clients, sysconf(_SC_NPROCESSORS_ONLN), start_load,
                 load);
    (void)printf("  koord: HTTPS (verified, bearer token), SQLite WAL synchronous=FULL | etcd: "
                 "HTTPS (--auto-tls), JSON gateway, WAL fsync per commit | both HTTP/1.1 "
                 "keep-alive\n");
    (void)printf("create (durable; latency per request)\n");
    for (int i = 0; i < 2; i++)
        if (side[i]->ran && side[i]->creates_per_s > 0)
            (void)printf("  %-6s %8.0f/s  p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms  "
                         "server cpu %5.2f s  client cpu %5.2f s\n",
                         names[i], side[i]->creates_per_s, side[i]->create_ms.p50,
                         side[i]->create_ms.p99, side[i]->create_ms.max, side[i]->create_srv_cpu,
                         side[i]->create_cli_cpu);
    if (k->creates_per_s > 0 && e->creates_per_s > 0)
        (void)printf("  koord/etcd creates/s %.2f (target >= 1: %s)  p50 %.2f  p99 %.2f\n",
                     ratio(k->creates_per_s, e->creates_per_s),
                     verdict(k->creates_per_s >= e->creates_per_s),
                     ratio(k->create_ms.p50, e->create_ms.p50),
                     ratio(k->create_ms.p99, e->create_ms.p99));
    (void)printf("list all (one request; median of %zu, fastest)\n", opt.lists);
    for (int i = 0; i < 2; i++)
        if (side[i]->list_ms > 0)
            (void)printf("  %-6s %8.1f ms  fastest %7.1f ms  first byte after %7.1f ms  %6.1f MB  "
                         "%zu objects\n",
                         names[i], side[i]->list_ms, side[i]->list_min_ms, side[i]->list_ttfb_ms,
                         side[i]->list_mb, side[i]->list_count);
    if (k->list_ms > 0)
        (void)printf("  koord target < 100 ms: %s", verdict(k->list_ms < 100));
    if (k->list_ms > 0 && e->list_ms > 0)
        (void)printf("  koord/etcd %.2f", ratio(k->list_ms, e->list_ms));
    if (k->list_ms > 0)
        (void)printf("\n");
    (void)printf("watch (%zu watchers, %.0f updates/s for %zu s; delivery = update sent to event "
                 "parsed)\n",
                 opt.watchers, opt.rate, opt.seconds);
    for (int i = 0; i < 2; i++)
        if (side[i]->watched)
            (void)printf("  %-6s p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms  delivered %zu/%zu "
                         "missed %zu  | writes %.0f/s p50 %.2f ms p99 %.2f ms  server cpu %5.2f "
                         "s  client cpu %5.2f s\n",
                         names[i], side[i]->watch_ms.p50, side[i]->watch_ms.p99,
                         side[i]->watch_ms.max, side[i]->delivered, side[i]->expected,
                         side[i]->expected - side[i]->delivered, side[i]->achieved_rate,
                         side[i]->update_ms.p50, side[i]->update_ms.p99, side[i]->watch_srv_cpu,
                         side[i]->watch_cli_cpu);
    if (k->watched)
        (void)printf("  koord target p99 < 50 ms and 0 missed: %s",
                     verdict(k->watch_ms.p99 < 50 && k->delivered == k->expected));
    if (k->watched && e->watched)
        (void)printf("  koord/etcd p50 %.2f  p99 %.2f", ratio(k->watch_ms.p50, e->watch_ms.p50),
                     ratio(k->watch_ms.p99, e->watch_ms.p99));
    if (k->watched)
        (void)printf("\n");
    if (!e->ran)
        (void)printf("  (etcd not run: ratios need it; `make bench` installs etcd-server)\n");
}

static int parse_opts(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"objects", required_argument, NULL, 'n'},
        {"clients", required_argument, NULL, 'c'},
        {"lists", required_argument, NULL, 'l'},
        {"watchers", required_argument, NULL, 'w'},
        {"rate", required_argument, NULL, 'r'},
        {"seconds", required_argument, NULL, 's'},
        {"koord", required_argument, NULL, 'K'},
        {"etcd", required_argument, NULL, 'E'},
        {"no-etcd", no_argument, NULL, 'N'},
        {"no-koord", no_argument, NULL, 'k'},
        {"smoke", no_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    size_t rate = 0;
    int ch, r = 0;

    while (r == 0 && (ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'n':
            r = bench_parse_size(optarg, 1, 999999, &opt.objects);
            break;
        case 'c':
            r = bench_parse_size(optarg, 1, 256, &opt.clients);
            break;
        case 'l':
            r = bench_parse_size(optarg, 1, 100, &opt.lists);
            break;
        case 'w':
            r = bench_parse_size(optarg, 0, 1000, &opt.watchers);
            break;
        case 'r':
            r = bench_parse_size(optarg, 1, 100000, &rate);
            opt.rate = (double)rate;
            break;
        case 's':
            r = bench_parse_size(optarg, 1, 600, &opt.seconds);
            break;
        case 'K':
            opt.koord = optarg;
            break;
        case 'E':
            opt.etcd = optarg;
            break;
        case 'N':
            opt.no_etcd = true;
            break;
        case 'k':
            opt.no_koord = true;
            break;
        case 'S':
            opt.objects = 200;
            opt.clients = 4;
            opt.lists = 1;
            opt.watchers = 4;
            opt.rate = 200;
            opt.seconds = 1;
            break;
        case 'h':
            (void)fputs(usage, stdout);
            exit(0);
        default:
            r = -EINVAL;
        }
    }
    if (r < 0 || optind != argc || opt.rate * (double)opt.seconds > 999999) {
        (void)fputs(usage, stderr);
        return -EINVAL;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct result res[2] = {{0}};
    struct server koord = {0}, etcd = {0};
    static const char *const crd_names[] = {"slo.koordinator.sh_nodeslos.yaml", NULL};
    char **crds;

    if (parse_opts(argc, argv) < 0)
        return 2;
    (void)getloadavg(&start_load, 1);
    bench_catch_signals();
    codec_init();
    CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == 0);
    if (tpl_init() < 0) {
        tpl_release();
        curl_global_cleanup();
        bench_release_signals();
        return 1;
    }
    crds = bench_crd_paths(crd_names);
    if (opt.no_koord) {
        (void)printf("koord: skipped (--no-koord)\n");
    } else if (server_start_koord(&koord, opt.koord, (const char *const *)crds, SERVER_AUTH_TOKEN) <
               0) {
        bench_fail("koord", "server did not start");
    } else {
        run_side(&koord, &res[0]);
        server_stop(&koord);
    }
    if (opt.no_etcd) {
        (void)printf("etcd: skipped (--no-etcd)\n");
    } else if (!bench_runnable(opt.etcd)) {
        (void)printf("etcd: \"%s\" not found; skipped (scripts/install-deps.sh --bench installs "
                     "Debian's etcd-server)\n",
                     opt.etcd);
    } else if (server_start_etcd(&etcd, opt.etcd) < 0) {
        bench_fail("etcd", "server did not start");
    } else {
        run_side(&etcd, &res[1]);
        server_stop(&etcd);
    }
    report(&res[0], &res[1]);
    bench_paths_free(crds);
    tpl_release();
    curl_global_cleanup();
    bench_release_signals();
    if (bench_failures())
        (void)fprintf(stderr, "bench_apiserver: %d failure(s)\n", bench_failures());
    return bench_failures() ? 1 : 0;
}
