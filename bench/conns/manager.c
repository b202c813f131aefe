/*
 * The manager scenario of bench/conns (see main.c): N simulated agents, one keep-alive TLS
 * connection each, report their node's NodeMetric status to `koord manager` every N/R
 * seconds, staggered evenly. Report k (k = 0, 1, ...) is agent k mod N's, due at t0 + k/R: one
 * schedule for the whole run, so the load is R reports/s spread evenly whatever N is, and an
 * agent whose previous report is still unanswered queues the next (it is charged the wait,
 * as an open-loop client must). Before the measured run every NodeMetric already holds a full
 * status (a warm-up pass from a few connections) and every agent has sent one report on its
 * own connection, so "idle" is the state an agent's connection rests in between reports.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/rfc3339.h"
#include "base/base.h"
#include "conns.h"

#define READY_SECONDS 300 /* the manager with N Nodes: leader, NodeSLOs, NodeMetrics */
#define WARM_CONNS    16
#define GRACE_SECONDS 5 /* after the schedule, for answers still in flight */
#define SETTLE_MAX_S  30
#define PODS          110
#define FIRST         SIZE_MAX /* an agent's first report, before the run */
#define MS_NONE       (-1.0)   /* not sent, or not answered */
#define MS_FAILED     (-2.0)
#define MS_NO_CONN    (-3.0)

/* What koord agent's reporter asks for (kube/client.c: a write whose answer it does not read). */
#define AGENT_ACCEPT "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

enum mphase { MP_WARM, MP_OPEN, MP_RUN };

struct agent {
    size_t pending;  /* reports due and not yet sent */
    size_t next_seq; /* the first of them (then + N, + 2N ...) */
    size_t inflight; /* the report being sent or answered, FIRST for the first */
    bool ever_up, reopening, lost;
};

struct mgr {
    enum mphase phase;
    struct conns_result *res;
    size_t n;
    struct strbuf usage; /* "nodeMetric":{...},"podsMetric":[...] of every report */
    struct strbuf body, path;
    /* warm-up */
    size_t warm_next, warm_done, warm_failed;
    /* the agents */
    struct econn *conns;
    struct agent *ag;
    size_t first_ok, first_failed, reconnects, printed;
    /* the run */
    uint64_t t0_ns;
    double rate;
    size_t total;
    double *ms;
};

static void render(struct mgr *m, size_t node)
{
    char ts[RFC3339_STR_MAX];

    (void)rfc3339_format((int64_t)time(NULL), ts);
    strbuf_reset(&m->body);
    strbuf_addf(&m->body,
                "{\"apiVersion\":\"metrics.koordinator.sh/v1alpha1\",\"kind\":\"NodeMetric\","
                "\"metadata\":{\"name\":\"" NAME_FMT "\"},\"status\":{\"updateTime\":\"%s\",",
                node, ts);
    strbuf_add(&m->body, m->usage.buf, m->usage.len);
    strbuf_addstr(&m->body, "}}");
    strbuf_reset(&m->path);
    strbuf_addf(&m->path, "/apis/metrics.koordinator.sh/v1alpha1/nodemetrics/" NAME_FMT "/status",
                node);
}

static void put_report(struct eloop *l, struct mgr *m, size_t node, struct strbuf *req)
{
    render(m, node);
    eloop_request(l, req, "PUT", m->path.buf, AGENT_ACCEPT, "application/json", m->body.buf,
                  m->body.len);
}

static uint64_t due_ns(const struct mgr *m, size_t seq)
{
    return m->t0_ns + (uint64_t)((double)seq * 1e9 / m->rate);
}

static enum econn_req mgr_next(struct eloop *l, struct econn *c, struct strbuf *req)
{
    struct mgr *m = eloop_ud(l);
    struct agent *a;

    if (m->phase == MP_WARM) {
        if (m->warm_next >= m->n)
            return ECONN_REQ_NONE;
        put_report(l, m, m->warm_next++, req);
        return ECONN_REQ_ONE;
    }
    a = &m->ag[c->id];
    a->ever_up = true;
    a->reopening = false;
    if (!a->pending)
        return ECONN_REQ_NONE;
    a->pending--;
    a->inflight = a->next_seq;
    if (a->next_seq != FIRST)
        a->next_seq += m->n;
    put_report(l, m, c->id, req);
    return ECONN_REQ_ONE;
}

/* The report in flight on agent id ended: ms, MS_FAILED. */
static void settle_report(struct mgr *m, struct agent *a, bool ok)
{
    if (a->inflight == FIRST) {
        if (ok)
            m->first_ok++;
        else
            m->first_failed++;
        return;
    }
    if (a->inflight < m->total)
        m->ms[a->inflight] = ok ? (double)(now_ns() - due_ns(m, a->inflight)) / 1e6 : MS_FAILED;
}

static void mgr_answer(struct eloop *l, struct econn *c, long status, const char *body, size_t len)
{
    struct mgr *m = eloop_ud(l);

    if (status != 200)
        m->res->refused_answers++;
    if (status != 200 && m->printed++ < 5)
        (void)fprintf(stderr, "bench_conns: manager: PUT report: HTTP %ld: %.*s\n", status,
                      (int)(len > 300 ? 300 : len), body);
    if (m->phase == MP_WARM) {
        if (status == 200)
            m->warm_done++;
        else
            m->warm_failed++;
        return;
    }
    settle_report(m, &m->ag[c->id], status == 200);
}

static void mgr_line(struct eloop *l, struct econn *c, const char *line, size_t len)
{
    (void)l;
    (void)c;
    (void)line;
    (void)len;
}

/* Reports an agent had queued when it lost its connection for good. */
static void drop_pending(struct mgr *m, struct agent *a)
{
    for (; a->pending; a->pending--, a->next_seq += m->n) {
        if (a->next_seq == FIRST) {
            m->first_failed++;
            a->next_seq = 0; /* unused afterwards */
            continue;
        }
        if (a->next_seq < m->total)
            m->ms[a->next_seq] = MS_NO_CONN;
    }
}

static void mgr_down(struct eloop *l, struct econn *c, enum econn_end why, bool busy)
{
    struct mgr *m = eloop_ud(l);
    struct agent *a;

    if (m->phase == MP_WARM) {
        if (busy)
            m->warm_failed++;
        return;
    }
    a = &m->ag[c->id];
    if (busy)
        settle_report(m, a, false);
    if (!a->ever_up || a->reopening) {
        /* never held, or a reconnect that failed: the agent stays without a connection */
        if (!a->ever_up) {
            if (why == ECONN_END_TIMEOUT)
                m->res->timed_out++;
            else if (why == ECONN_END_TLS)
                m->res->tls_failed++;
            else
                m->res->refused++;
        }
        a->lost = true;
        a->reopening = false;
        drop_pending(m, a);
        return;
    }
    m->res->closed++;
}

static const struct eloop_ops mgr_ops = {mgr_next, mgr_answer, mgr_line, mgr_down};

/* Runs the loop until nothing is opening or in flight on conns[0, n), or deadline. */
static void drain(struct eloop *l, struct econn *conns, size_t n, double deadline)
{
    for (;;) {
        bool active = eloop_opening(l) > 0;
        for (size_t i = 0; i < n && !active; i++)
            active = conns[i].busy;
        if (!active || now_s() > deadline)
            return;
        eloop_run(l, 100);
    }
}

/* One report to every node from a few connections: every NodeMetric holds a full status. */
static int warm_up(struct mgr *m, const struct server *srv)
{
    struct econn conns[WARM_CONNS] = {0};
    struct eloop *l = eloop_new(srv, &mgr_ops, m, WARM_CONNS, conns_opt.open_timeout_ms);
    double t0 = now_s();

    if (!l)
        return -EIO;
    m->phase = MP_WARM;
    for (size_t i = 0; i < WARM_CONNS; i++) {
        conns[i].id = i;
        eloop_open(l, &conns[i]);
    }
    drain(l, conns, WARM_CONNS, now_s() + 600);
    for (size_t i = 0; i < WARM_CONNS; i++)
        eloop_close(l, &conns[i]);
    eloop_free(l);
    if (m->warm_done != m->n) {
        bench_fail("manager", "warm-up: %zu of %zu reports accepted", m->warm_done, m->n);
        return -EIO;
    }
    (void)printf("  warm-up: one report to each of %zu NodeMetrics in %.1f s\n", m->n,
                 now_s() - t0);
    return 0;
}

/* The measured run: R reports/s for S s on the schedule, then up to GRACE_SECONDS more. */
static void run(struct mgr *m, struct eloop *l, const struct server *mgr_srv)
{
    struct conns_result *res = m->res;
    double cpu0 = server_cpu(mgr_srv), cli0 = bench_self_cpu(), t_end;
    size_t next = 0, nlat = 0;
    uint64_t end_ns, last_ns = 0;
    double *lat;

    CHECK(m->n > 0); /* --nodes is at least 1 */
    m->phase = MP_RUN;
    m->total = (size_t)(m->rate * (double)conns_opt.seconds);
    m->ms = xcalloc(m->total ? m->total : 1, sizeof(double));
    for (size_t k = 0; k < m->total; k++)
        m->ms[k] = MS_NONE;
    for (size_t i = 0; i < m->n; i++)
        m->ag[i].next_seq = i;
    m->t0_ns = now_ns() + 10000000;
    end_ns = due_ns(m, m->total) + (uint64_t)GRACE_SECONDS * 1000000000u;
    for (;;) {
        uint64_t now = now_ns();
        bool active = false;
        int wait_ms;

        for (; next < m->total && due_ns(m, next) <= now; next++) {
            struct agent *a = &m->ag[next % m->n];
            struct econn *c = &m->conns[next % m->n];
            if (a->lost) {
                m->ms[next] = MS_NO_CONN;
                continue;
            }
            if (!a->pending)
                a->next_seq = next;
            a->pending++;
            if (c->state == ECONN_DOWN) {
                /* the server closed it since the last report: the agent connects again */
                a->reopening = true;
                m->reconnects++;
                eloop_open(l, c);
            } else {
                eloop_kick(l, c);
            }
        }
        if (next >= m->total) {
            if (!last_ns)
                last_ns = now;
            active = eloop_opening(l) > 0;
            for (size_t i = 0; i < m->n && !active; i++)
                active = m->conns[i].busy || m->ag[i].pending;
            if (!active || now > end_ns)
                break;
            wait_ms = 100;
        } else {
            uint64_t due = due_ns(m, next);
            wait_ms = due > now ? (int)((due - now + 999999) / 1000000) : 0;
        }
        eloop_run(l, wait_ms);
    }
    t_end = now_s();
    res->srv_cpu = server_cpu(mgr_srv) - cpu0;
    res->cli_cpu = bench_self_cpu() - cli0;
    res->run_s = (double)(now_ns() - m->t0_ns) / 1e9;
    res->rss_load_kb = conns_rss_kb(mgr_srv->pid);
    res->client_rss_kb = conns_rss_kb(0);
    res->offered = m->rate;
    res->scheduled = m->total;
    lat = xcalloc(m->total ? m->total : 1, sizeof(double));
    for (size_t k = 0; k < m->total; k++) {
        if (m->ms[k] >= 0) {
            lat[nlat++] = m->ms[k];
            res->done++;
        } else if (m->ms[k] == MS_FAILED) {
            res->errors++;
        } else if (m->ms[k] == MS_NO_CONN) {
            res->no_conn++;
        } else {
            /* still queued or in flight: the wait it had reached counts */
            lat[nlat++] = (t_end - (double)due_ns(m, k) / 1e9) * 1e3;
            res->unanswered++;
        }
    }
    res->ms = bench_dist(lat, nlat);
    res->achieved =
        last_ns > m->t0_ns ? (double)res->done / ((double)(last_ns - m->t0_ns) / 1e9) : 0;
    free(lat);
    FREE_AND_NULL(m->ms);
    (void)printf("  run: %zu reports in %.1f s (%.0f/s offered): %zu answered 200, %zu errors, "
                 "%zu for agents without a connection, %zu unanswered, %zu reconnects; p50 %.2f "
                 "ms p99 %.2f ms max %.2f ms\n",
                 m->total, (double)conns_opt.seconds, m->rate, res->done, res->errors, res->no_conn,
                 res->unanswered, m->reconnects, res->ms.p50, res->ms.p99, res->ms.max);
}

/* The manager's count of accepted reports must be ours, when no answer was lost in transit. */
static void check_count(const struct server *srv, const struct mgr *m)
{
    size_t want = m->warm_done + m->first_ok + m->res->done;
    const char *key = "\nkoord_manager_nodemetric_reports_total ", *p;
    struct conn c;
    long long n = -1;
    long status = 0;

    if (m->res->errors || m->res->closed || m->res->unanswered)
        return;
    /* The server learns of the agents' closes on its own time: a full server (today's, past
     * its cap) answers once it has. */
    conn_init(&c, srv);
    c.quiet = true;
    for (double deadline = now_s() + 10;; (void)usleep(100000)) {
        c.quiet = now_s() < deadline; /* the last attempt says why it failed */
        if (conn_do(&c, "GET", "/metrics", NULL, 0) < 0) {
            if (c.quiet)
                continue;
            break;
        }
        status = c.status;
        if (status == 200 && (p = strstr(c.body.buf, key)))
            n = strtoll(p + strlen(key), NULL, 10);
        break;
    }
    conn_release(&c);
    if (n < 0)
        (void)printf("  (no koord_manager_nodemetric_reports_total to check: HTTP %ld)\n", status);
    else if ((size_t)n == want)
        (void)printf("  koord_manager_nodemetric_reports_total %lld: every accepted report "
                     "counted\n",
                     n);
    else
        bench_fail("manager",
                   "koord_manager_nodemetric_reports_total is %lld, %zu reports "
                   "accepted",
                   n, want);
}

/* Every agent connects and sends its first report; then they rest, and the RSS is read. */
static void open_agents(struct mgr *m, struct eloop *l, const struct server *srv)
{
    struct conns_result *res = m->res;
    double t0 = now_s(), cpu0 = bench_self_cpu();

    m->phase = MP_OPEN;
    for (size_t i = 0; i < m->n; i++) {
        m->conns[i].id = i;
        m->conns[i].src = conns_source(i);
        m->ag[i].pending = 1;
        m->ag[i].next_seq = FIRST;
        eloop_open(l, &m->conns[i]);
    }
    drain(l, m->conns, m->n, now_s() + 120 + (double)m->n / 20);
    res->open_s = now_s() - t0;
    res->open_cli_cpu = bench_self_cpu() - cpu0;
    for (size_t i = 0; i < m->n; i++)
        res->held += m->conns[i].state == ECONN_UP;
    (void)printf("  %zu of %zu agent connections held after %.1f s (client CPU %.1f s; refused "
                 "%zu, timed out %zu, TLS errors %zu, closed by the server %zu); first reports: "
                 "%zu accepted, %zu failed\n",
                 res->held, m->n, res->open_s, res->open_cli_cpu, res->refused, res->timed_out,
                 res->tls_failed, res->closed, m->first_ok, m->first_failed);
    (void)fflush(stdout);
    conns_settle(srv, NULL, SETTLE_MAX_S);
    /* keep the loop turning meanwhile: closes by the server are counted */
    eloop_run(l, 0);
    res->held = 0;
    for (size_t i = 0; i < m->n; i++)
        res->held += m->conns[i].state == ECONN_UP;
    res->rss_idle_kb = conns_rss_kb(srv->pid);
    (void)printf("  manager RSS %.1f MiB with %zu idle agent connections (%.1f MiB before)\n",
                 (double)res->rss_idle_kb / 1024, res->held, (double)res->rss_before_kb / 1024);
    (void)fflush(stdout);
}

static void manager_with(struct mgr *m, const char *koord, const struct server *api)
{
    struct server srv = {0};
    struct eloop *l = NULL;
    struct conn c;
    char path[128];
    bool found = false;
    double t0 = now_s(), deadline;

    (void)printf("  starting koord manager ...\n");
    (void)fflush(stdout);
    if (server_start_manager(&srv, koord, api, READY_SECONDS) < 0) {
        bench_fail("manager", "did not start");
        return;
    }
    /* Ready means every Node known then has its NodeMetric; the last one proves it. */
    conn_init(&c, &srv);
    (void)snprintf(path, sizeof(path),
                   "/apis/metrics.koordinator.sh/v1alpha1/nodemetrics/" NAME_FMT, m->n - 1);
    deadline = now_s() + READY_SECONDS;
    while (!found && now_s() < deadline) {
        found = conn_do(&c, "GET", path, NULL, 0) == 0 && c.status == 200;
        if (!found)
            (void)usleep(100000);
    }
    conn_release(&c);
    if (!found) {
        bench_fail("manager", "no NodeMetric for " NAME_FMT " after %d s", m->n - 1, READY_SECONDS);
        goto out;
    }
    (void)printf("  manager ready in %.1f s\n", now_s() - t0);
    if (warm_up(m, &srv) < 0)
        goto out;
    conns_settle(&srv, api, SETTLE_MAX_S);
    m->res->rss_before_kb = conns_rss_kb(srv.pid);
    m->res->ran = true;
    l = eloop_new(&srv, &mgr_ops, m, conns_opt.max_opening, conns_opt.open_timeout_ms);
    if (!l)
        goto out;
    open_agents(m, l, &srv);
    run(m, l, &srv);
    for (size_t i = 0; i < m->n; i++)
        eloop_close(l, &m->conns[i]); /* before the counter is read: the server is full */
    eloop_free(l);
    l = NULL;
    check_count(&srv, m);
    if (m->res->refused_answers)
        bench_fail("manager", "%zu reports answered with an error", m->res->refused_answers);
out:
    for (size_t i = 0; l && i < m->n; i++)
        eloop_close(l, &m->conns[i]);
    eloop_free(l);
    server_stop(&srv);
}

void conns_manager(const char *koord, struct conns_result *res)
{
    static const char *const crd_names[] = {
        "analysis.koordinator.sh_recommendations.yaml",
        "config.koordinator.sh_clustercolocationprofiles.yaml",
        "quota.koordinator.sh_elasticquotaprofiles.yaml",
        "scheduling.koordinator.sh_reservations.yaml",
        "scheduling.sigs.k8s.io_elasticquotas.yaml",
        "slo.koordinator.sh_nodemetrics.yaml",
        "slo.koordinator.sh_nodeslos.yaml",
        NULL,
    };
    struct mgr m = {.res = res, .n = conns_opt.nodes};
    struct server api = {0};
    char **crds = bench_crd_paths(crd_names);
    cJSON *node = bench_read_doc("examples/nodes/node-plain.yaml");

    res->koord = koord;
    res->wanted = m.n;
    m.rate = conns_opt.rate > 0 ? conns_opt.rate : conns_opt.smoke ? 20 : (double)m.n / 10;
    strbuf_init(&m.usage);
    strbuf_init(&m.body);
    strbuf_init(&m.path);
    bench_nodemetric_usage(&m.usage, PODS, "7500m");
    m.conns = xcalloc(m.n, sizeof(*m.conns));
    m.ag = xcalloc(m.n, sizeof(*m.ag));
    if (!node) {
        bench_fail("manager", "no examples/nodes/node-plain.yaml");
    } else if (server_start_koord(&api, koord, (const char *const *)crds, SERVER_AUTH_CERT) < 0) {
        bench_fail("apiserver", "did not start");
    } else if (conns_create(&api, "Nodes", "/api/v1/nodes", m.n, conns_render_node, node) < 0) {
        bench_fail("apiserver", "creating Nodes failed");
    } else {
        render(&m, 0);
        (void)printf("  reports of %zu bytes (%d pods), %.0f/s: each agent every %.1f s\n",
                     m.body.len, PODS, m.rate, (double)m.n / m.rate);
        manager_with(&m, koord, &api);
    }
    server_stop(&api);
    cJSON_Delete(node);
    bench_paths_free(crds);
    free(m.conns);
    free(m.ag);
    strbuf_release(&m.usage);
    strbuf_release(&m.body);
    strbuf_release(&m.path);
}
