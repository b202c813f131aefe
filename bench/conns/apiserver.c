/*
 * The apiserver scenario of bench/conns (see main.c): one pod watch per node, each on its own
 * TLS connection with its spec.nodeName field selector, as every kubelet (and koord agent)
 * holds one, and writers merge-patching pods at a fixed rate. Pod j is bound to node j mod N;
 * update k patches pod k mod (N * P), so consecutive updates go to different nodes and every
 * node's watch gets R/N events a second. Each update carries its sequence number and send time
 * in an annotation: the watch that receives it knows which node it must be for (a wrong or
 * second delivery is a failure, as is one that never comes to a live watch), and its delivery
 * latency. Watches start at the resourceVersion of a list taken after the pods were created,
 * as a kubelet's informer does, so no watch replays the pods that exist.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "conns.h"

#define MARK_KEY      "bench.koord.sh/mark"
#define MARK_FMT      "%09zu.%019llu"
#define GRACE_SECONDS 5  /* after the schedule, for writes still in flight */
#define DRAIN_SECONDS 10 /* after the last write, for events still in flight */
#define SETTLE_MAX_S  30
#define MAX_REOPENS   10 /* per writer, on average */
#define MS_NONE       (-1.0)
#define MS_FAILED     (-2.0)

enum aphase { AP_OPEN, AP_RUN };

struct apis {
    enum aphase phase;
    struct conns_result *res;
    size_t n, npods, nw;
    char rv[32];
    struct econn *conns; /* n watches, then nw writers */
    /* watches, per node */
    bool *asked, *failed, *live, *lost;
    size_t watch_errors, other, printed;
    /* writers */
    size_t *w_inflight;
    bool *w_hello; /* the writer's connection made its first request */
    size_t writers_down, writer_reopens;
    /* updates */
    double rate;
    size_t total, due_upto, next_send;
    uint64_t t0_ns;
    bool *acked;
    unsigned char *got;
    double *write_ms;
    size_t outstanding; /* acknowledged to a live watch, not yet received */
    double *dlv;
    size_t ndlv, dlv_alloc;
    struct strbuf body, path;
};

static size_t node_of(const struct apis *a, size_t k)
{
    return (k % a->npods) % a->n;
}

static uint64_t due_ns(const struct apis *a, size_t k)
{
    return a->t0_ns + (uint64_t)((double)k * 1e9 / a->rate);
}

static bool watched(const struct apis *a, size_t node)
{
    return a->live[node] && !a->lost[node];
}

static enum econn_req ap_next(struct eloop *l, struct econn *c, struct strbuf *req)
{
    struct apis *a = eloop_ud(l);
    size_t k;

    if (c->id < a->n) {
        if (a->asked[c->id])
            return ECONN_REQ_NONE;
        a->asked[c->id] = true;
        strbuf_reset(&a->path);
        strbuf_addf(&a->path,
                    "/api/v1/pods?watch=true&fieldSelector=spec.nodeName%%3D" NAME_FMT
                    "&allowWatchBookmarks=true&resourceVersion=%s",
                    c->id, a->rv);
        eloop_request(l, req, "GET", a->path.buf, "application/json", NULL, NULL, 0);
        return ECONN_REQ_STREAM;
    }
    if (!a->w_hello[c->id - a->n]) {
        /* A first request right away, as a client's: a connection that sends none is closed
         * after the server's first-request timeout. */
        a->w_hello[c->id - a->n] = true;
        a->w_inflight[c->id - a->n] = SIZE_MAX;
        eloop_request(l, req, "GET", "/api/v1/namespaces/default", "application/json", NULL, NULL,
                      0);
        return ECONN_REQ_ONE;
    }
    if (a->phase != AP_RUN || a->next_send >= a->due_upto)
        return ECONN_REQ_NONE;
    k = a->next_send++;
    a->w_inflight[c->id - a->n] = k;
    strbuf_reset(&a->path);
    strbuf_addf(&a->path, "/api/v1/namespaces/default/pods/pod-%06zu", k % a->npods);
    strbuf_reset(&a->body);
    strbuf_addf(&a->body, "{\"metadata\":{\"annotations\":{\"" MARK_KEY "\":\"" MARK_FMT "\"}}}", k,
                (unsigned long long)now_ns());
    eloop_request(l, req, "PATCH", a->path.buf, "application/json", "application/merge-patch+json",
                  a->body.buf, a->body.len);
    return ECONN_REQ_ONE;
}

static void written(struct apis *a, size_t k, bool ok)
{
    if (k >= a->total)
        return;
    if (!ok) {
        a->write_ms[k] = MS_FAILED;
        return;
    }
    a->write_ms[k] = (double)(now_ns() - due_ns(a, k)) / 1e6;
    a->acked[k] = true;
    if (!a->got[k] && watched(a, node_of(a, k)))
        a->outstanding++;
}

static void ap_answer(struct eloop *l, struct econn *c, long status, const char *body, size_t len)
{
    struct apis *a = eloop_ud(l);

    if (c->id < a->n) {
        /* a watch answered with an error instead of a stream */
        a->failed[c->id] = true;
        a->watch_errors++;
        a->res->refused_answers++;
        if (a->printed++ < 5)
            (void)fprintf(stderr, "bench_conns: apiserver: watch of " NAME_FMT ": HTTP %ld: %.*s\n",
                          c->id, status, (int)(len > 300 ? 300 : len), body);
        return;
    }
    if (status != 200)
        a->res->refused_answers++;
    if (status != 200 && a->printed++ < 5)
        (void)fprintf(stderr, "bench_conns: apiserver: writer: HTTP %ld: %.*s\n", status,
                      (int)(len > 300 ? 300 : len), body);
    written(a, a->w_inflight[c->id - a->n], status == 200);
}

/* One watch event line on node's watch. */
static void ap_line(struct eloop *l, struct econn *c, const char *line, size_t len)
{
    static const char head[] = "{\"type\":\"", mark[] = "\"" MARK_KEY "\":\"";
    struct apis *a = eloop_ud(l);
    const char *type = line + strlen(head), *p;
    unsigned long long sent;
    size_t k;

    if (len < strlen(head) + 8 || memcmp(line, head, strlen(head))) {
        a->other++;
        return;
    }
    if (!strncmp(type, "BOOKMARK\"", 9)) {
        a->res->bookmarks++;
        return;
    }
    p = strncmp(type, "MODIFIED\"", 9) ? NULL : memmem(line, len, mark, strlen(mark));
    if (!p || sscanf(p + strlen(mark), "%9zu.%19llu", &k, &sent) != 2 || k >= a->total) {
        if (!strncmp(type, "ERROR\"", 6) && a->printed++ < 5)
            (void)fprintf(stderr, "bench_conns: apiserver: watch of " NAME_FMT ": %.300s\n", c->id,
                          line);
        a->other++;
        return;
    }
    if (node_of(a, k) != c->id) {
        if (a->res->wrong++ < 3)
            bench_fail("apiserver",
                       "update %zu of a pod on " NAME_FMT " came to the watch of " NAME_FMT, k,
                       node_of(a, k), c->id);
        return;
    }
    if (a->got[k] == 0 && a->acked[k] && watched(a, c->id))
        a->outstanding--;
    if (a->got[k] < 255)
        a->got[k]++;
    if (a->got[k] > 1) {
        a->res->duplicate++;
        return;
    }
    if (a->ndlv == a->dlv_alloc) {
        a->dlv_alloc = a->dlv_alloc ? 2 * a->dlv_alloc : 4096;
        a->dlv = xrealloc(a->dlv, a->dlv_alloc * sizeof(*a->dlv));
    }
    a->dlv[a->ndlv++] = (double)(now_ns() - sent) / 1e6;
}

static void ap_down(struct eloop *l, struct econn *c, enum econn_end why, bool busy)
{
    struct apis *a = eloop_ud(l);

    if (c->id >= a->n) {
        a->writers_down++;
        a->w_hello[c->id - a->n] = false;
        if (busy)
            written(a, a->w_inflight[c->id - a->n], false);
        if (a->printed++ < 5)
            (void)fprintf(stderr, "bench_conns: apiserver: a writer connection went down: %s\n",
                          econn_end_name(why));
        return;
    }
    if (c->up_ns && why != ECONN_END_TIMEOUT) {
        a->res->closed++;
    } else if (why == ECONN_END_TIMEOUT) {
        a->res->timed_out++;
    } else if (why == ECONN_END_TLS) {
        a->res->tls_failed++;
    } else {
        a->res->refused++;
    }
    a->failed[c->id] = true;
    if (a->live[c->id] && !a->lost[c->id]) {
        a->lost[c->id] = true;
        if (a->printed++ < 5)
            (void)fprintf(stderr, "bench_conns: apiserver: the watch of " NAME_FMT " ended: %s\n",
                          c->id, econn_end_name(why));
    }
}

static const struct eloop_ops ap_ops = {ap_next, ap_answer, ap_line, ap_down};

static void render_pod(size_t j, void *ud, struct strbuf *body)
{
    const struct apis *a = ud;

    strbuf_addf(body,
                "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"pod-%06zu\","
                "\"namespace\":\"default\",\"labels\":{\"app\":\"bench\"}},\"spec\":{\"nodeName\":"
                "\"" NAME_FMT "\",\"containers\":[{\"name\":\"c\",\"image\":\"busybox\","
                "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"}}}]}}",
                j, j % a->n);
}

/* The resourceVersion of a pod list now: where the watches start. */
static int list_rv(const struct server *srv, struct apis *a)
{
    struct conn c;
    cJSON *o = NULL;
    const char *rv;
    int r;

    conn_init(&c, srv);
    r = conn_expect(&c, "GET", "/api/v1/pods?limit=1", NULL, 0, 200);
    if (r == 0)
        o = cJSON_ParseWithLength(c.body.buf, c.body.len);
    rv = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(o, "metadata"), "resourceVersion"));
    if (r == 0 && (!rv || strlen(rv) >= sizeof(a->rv)))
        r = -EPROTO;
    if (r == 0)
        (void)snprintf(a->rv, sizeof(a->rv), "%s", rv);
    cJSON_Delete(o);
    conn_release(&c);
    return r;
}

static bool writers_busy(const struct apis *a)
{
    for (size_t i = 0; i < a->nw; i++)
        if (a->conns[a->n + i].busy)
            return true;
    return false;
}

/* Writers the server closed (an idle timeout while the watches opened) connect again, a
 * bounded number of times in all; false when none is left. */
static bool writers_alive(struct apis *a, struct eloop *l)
{
    bool alive = false;

    for (size_t i = 0; i < a->nw; i++) {
        struct econn *c = &a->conns[a->n + i];
        if (c->state == ECONN_DOWN && a->writer_reopens < MAX_REOPENS * a->nw) {
            a->writer_reopens++;
            eloop_open(l, c);
        }
        alive = alive || c->state != ECONN_DOWN;
    }
    return alive;
}

/* Writers, then one watch per node; the apiserver's RSS once they all rest. */
static int open_all(struct apis *a, struct eloop *l, const struct server *srv)
{
    struct conns_result *res = a->res;
    double t0, deadline, cpu0;
    size_t up = 0;

    for (size_t i = 0; i < a->nw; i++) {
        a->conns[a->n + i].id = a->n + i;
        eloop_open(l, &a->conns[a->n + i]);
    }
    while (eloop_opening(l) || writers_busy(a))
        eloop_run(l, 100);
    for (size_t i = 0; i < a->nw; i++)
        up += a->conns[a->n + i].state == ECONN_UP;
    if (up != a->nw) {
        bench_fail("apiserver", "%zu of %zu writer connections up", up, a->nw);
        return -EIO;
    }
    t0 = now_s();
    cpu0 = bench_self_cpu();
    deadline = t0 + 120 + (double)a->n / 20;
    for (size_t i = 0; i < a->n; i++) {
        a->conns[i].id = i;
        a->conns[i].src = conns_source(i);
        eloop_open(l, &a->conns[i]);
    }
    /* Until every watch streams, failed, or was refused. */
    for (;;) {
        bool waiting = eloop_opening(l) > 0;
        for (size_t i = 0; i < a->n && !waiting; i++)
            waiting = a->conns[i].state == ECONN_UP && !a->conns[i].streaming && !a->failed[i];
        if (!waiting || now_s() > deadline)
            break;
        eloop_run(l, 100);
    }
    res->open_s = now_s() - t0;
    res->open_cli_cpu = bench_self_cpu() - cpu0;
    for (size_t i = 0; i < a->n; i++)
        res->held += a->conns[i].streaming;
    (void)printf("  %zu of %zu watches streaming after %.1f s (client CPU %.1f s; refused %zu, "
                 "timed out %zu, TLS errors %zu, closed by the server %zu, HTTP errors %zu)\n",
                 res->held, a->n, res->open_s, res->open_cli_cpu, res->refused, res->timed_out,
                 res->tls_failed, res->closed, a->watch_errors);
    (void)fflush(stdout);
    conns_settle(srv, NULL, SETTLE_MAX_S);
    /* Writers idle since before the watches opened may have met the server's idle timeout:
     * connected again now, not in the measured run. */
    deadline = now_s() + 30;
    do
        eloop_run(l, 10);
    while (writers_alive(a, l) && eloop_opening(l) && now_s() < deadline);
    res->held = 0;
    for (size_t i = 0; i < a->n; i++) {
        a->live[i] = a->conns[i].streaming;
        res->held += a->live[i];
    }
    res->rss_idle_kb = conns_rss_kb(srv->pid);
    (void)printf("  apiserver RSS %.1f MiB with %zu idle watches (%.1f MiB before)\n",
                 (double)res->rss_idle_kb / 1024, res->held, (double)res->rss_before_kb / 1024);
    (void)fflush(stdout);
    return 0;
}

static void run(struct apis *a, struct eloop *l, const struct server *srv)
{
    struct conns_result *res = a->res;
    double cpu0 = server_cpu(srv), cli0 = bench_self_cpu(), t_end;
    uint64_t end_ns, sched_end = 0, writes_end = 0;
    size_t nlat = 0;
    double *lat;

    a->phase = AP_RUN;
    a->total = (size_t)(a->rate * (double)conns_opt.seconds);
    a->acked = xcalloc(a->total + 1, sizeof(*a->acked));
    a->got = xcalloc(a->total + 1, sizeof(*a->got));
    a->write_ms = xcalloc(a->total + 1, sizeof(*a->write_ms));
    for (size_t k = 0; k < a->total; k++)
        a->write_ms[k] = MS_NONE;
    a->t0_ns = now_ns() + 10000000;
    end_ns = due_ns(a, a->total) + (uint64_t)GRACE_SECONDS * 1000000000u;
    for (;;) {
        uint64_t now = now_ns();
        int wait_ms = 100;
        bool alive;

        while (a->due_upto < a->total && due_ns(a, a->due_upto) <= now)
            a->due_upto++;
        alive = writers_alive(a, l);
        for (size_t i = 0; i < a->nw && a->next_send < a->due_upto; i++)
            eloop_kick(l, &a->conns[a->n + i]);
        if (a->due_upto < a->total) {
            uint64_t due = due_ns(a, a->due_upto);
            wait_ms = due > now ? (int)((due - now + 999999) / 1000000) : 0;
        } else {
            if (!sched_end)
                sched_end = now;
            if (!writes_end &&
                ((a->next_send >= a->total && !writers_busy(a)) || now > end_ns || !alive))
                writes_end = now;
            if (writes_end &&
                (!a->outstanding || now > writes_end + (uint64_t)DRAIN_SECONDS * 1000000000u))
                break;
        }
        eloop_run(l, wait_ms);
    }
    t_end = now_s();
    res->srv_cpu = server_cpu(srv) - cpu0;
    res->cli_cpu = bench_self_cpu() - cli0;
    res->run_s = (double)(now_ns() - a->t0_ns) / 1e9;
    res->rss_load_kb = conns_rss_kb(srv->pid);
    res->client_rss_kb = conns_rss_kb(0);
    res->offered = a->rate;
    res->scheduled = a->total;
    lat = xcalloc(a->total + 1, sizeof(double));
    for (size_t k = 0; k < a->total; k++) {
        if (a->write_ms[k] >= 0) {
            lat[nlat++] = a->write_ms[k];
            res->done++;
        } else if (a->write_ms[k] == MS_FAILED) {
            res->errors++;
        } else {
            lat[nlat++] = (t_end - (double)due_ns(a, k) / 1e9) * 1e3;
            res->unanswered++;
        }
        if (!a->acked[k])
            continue;
        if (!watched(a, node_of(a, k))) {
            res->unwatched++;
            continue;
        }
        res->expected++;
        if (a->got[k])
            res->received++;
        else
            res->missing++;
    }
    res->ms = bench_dist(lat, nlat);
    res->deliver_ms = bench_dist(a->dlv, a->ndlv);
    res->achieved =
        sched_end > a->t0_ns ? (double)res->done / ((double)(sched_end - a->t0_ns) / 1e9) : 0;
    free(lat);
    (void)printf("  run: %zu updates (%.0f/s offered): %zu answered 200, %zu errors, %zu "
                 "unanswered, %zu writer reconnects; write p99 %.2f ms; events: %zu expected, %zu "
                 "received, %zu "
                 "missing, %zu duplicate, %zu to the wrong watch, %zu for unwatched nodes, %zu "
                 "bookmarks, %zu other lines; delivery p50 %.2f ms p99 %.2f ms max %.2f ms\n",
                 a->total, a->rate, res->done, res->errors, res->unanswered, a->writer_reopens,
                 res->ms.p99, res->expected, res->received, res->missing, res->duplicate,
                 res->wrong, res->unwatched, res->bookmarks, a->other, res->deliver_ms.p50,
                 res->deliver_ms.p99, res->deliver_ms.max);
    if (res->missing)
        bench_fail("apiserver",
                   "%zu acknowledged updates never reached the live watch of their "
                   "node",
                   res->missing);
    if (res->duplicate)
        bench_fail("apiserver", "%zu updates delivered more than once", res->duplicate);
    if (res->refused_answers)
        bench_fail("apiserver", "%zu updates or watches answered with an error",
                   res->refused_answers);
}

void conns_apiserver(const char *koord, struct conns_result *res)
{
    struct apis a = {.res = res, .n = conns_opt.nodes, .nw = conns_opt.writers};
    struct server api = {0};
    struct eloop *l = NULL;
    cJSON *node = bench_read_doc("examples/nodes/node-plain.yaml");

    res->koord = koord;
    res->wanted = a.n;
    a.npods = a.n * conns_opt.pods_per_node;
    a.rate = conns_opt.rate > 0 ? conns_opt.rate : conns_opt.smoke ? 100 : 1000;
    strbuf_init(&a.body);
    strbuf_init(&a.path);
    a.conns = xcalloc(a.n + a.nw, sizeof(*a.conns));
    a.asked = xcalloc(a.n, sizeof(*a.asked));
    a.failed = xcalloc(a.n, sizeof(*a.failed));
    a.live = xcalloc(a.n, sizeof(*a.live));
    a.lost = xcalloc(a.n, sizeof(*a.lost));
    a.w_inflight = xcalloc(a.nw, sizeof(*a.w_inflight));
    a.w_hello = xcalloc(a.nw, sizeof(*a.w_hello));
    if (!node) {
        bench_fail("apiserver", "no examples/nodes/node-plain.yaml");
    } else if (server_start_koord(&api, koord, NULL, SERVER_AUTH_CERT) < 0) {
        bench_fail("apiserver", "did not start");
    } else if (conns_create(&api, "Nodes", "/api/v1/nodes", a.n, conns_render_node, node) < 0 ||
               conns_create(&api, "Pods", "/api/v1/namespaces/default/pods", a.npods, render_pod,
                            &a) < 0) {
        bench_fail("apiserver", "creating Nodes and Pods failed");
    } else if (list_rv(&api, &a) < 0) {
        bench_fail("apiserver", "cannot list pods");
    } else if ((l = eloop_new(&api, &ap_ops, &a, conns_opt.max_opening,
                              conns_opt.open_timeout_ms))) {
        conns_settle(&api, NULL, SETTLE_MAX_S);
        res->rss_before_kb = conns_rss_kb(api.pid);
        res->ran = true;
        (void)printf("  %zu pods on %zu nodes; watches from resourceVersion %s; %zu writers, "
                     "%.0f updates/s\n",
                     a.npods, a.n, a.rv, a.nw, a.rate);
        if (open_all(&a, l, &api) == 0)
            run(&a, l, &api);
    }
    for (size_t i = 0; l && i < a.n + a.nw; i++)
        eloop_close(l, &a.conns[i]);
    eloop_free(l);
    server_stop(&api);
    cJSON_Delete(node);
    free(a.conns);
    free(a.asked);
    free(a.failed);
    free(a.live);
    free(a.lost);
    free(a.w_inflight);
    free(a.w_hello);
    free(a.acked);
    free(a.got);
    free(a.write_ms);
    free(a.dlv);
    strbuf_release(&a.body);
    strbuf_release(&a.path);
}
