/*
 * bench/nodemetric: the NodeMetric report path (issue "bench/nodemetric"). Node agents PUT
 * their NodeMetric status every report interval; seed 001 (DESIGN.md 3.1) moves these writes
 * from the slo.koordinator.sh NodeMetric CRD, one durable apiserver write each, into koord
 * manager's memory (metrics.koordinator.sh). This program measures both, in one run on this
 * machine:
 *
 *   manager  `koord manager` (leader, real controllers running) against `koord apiserver`
 *            holding N Nodes (default 10000): PUT
 *            /apis/metrics.koordinator.sh/v1alpha1/nodemetrics/<node>/status;
 *   crd      the same reports as status updates of N slo.koordinator.sh NodeMetric objects in
 *            `koord apiserver` (the CRD from deploy/crds; SQLite WAL, synchronous=FULL), what
 *            upstream's koordlet does.
 *
 * Each report is a NodeMetric status of 110 pods (about 17 KB, bench_nodemetric_usage()) with
 * its own updateTime and node cpu, sent to the next node round-robin. R reporter threads
 * (default 16), one keep-alive TLS connection each. On each path: a warm-up pass (one report
 * per node, so every object holds a full status as in a running cluster), fixed offered loads
 * (default 500, 1000, 2000, 4000 reports/s for S = 5 s each) on an open-loop schedule, with
 * latency measured from each report's scheduled send time so a server that falls behind is
 * charged for the wait (coordinated omission); then a closed-loop run where every reporter
 * sends as fast as it can. Prints reports/s, p50/p99/max and errors for each (with the CPU of
 * the server, of this client, and of other work sharing the machine, which tells a disturbed
 * run apart), and the ratio of the two paths' maximum with the targets (>= 2,000
 * reports/s with p99 < 50 ms; manager >= 10x the CRD path). Each report asks for what koord
 * agent asks for, on both paths: the object's metadata back (PartialObjectMetadata), not the
 * 17 KB object; --full-answers asks for the whole object, as client-go's typed clients (upstream
 * koordlet) do. The reporters write HTTP by hand over GnuTLS (bench/common/wire.c), so that
 * the client takes as little as it can of the CPU the manager needs; --libcurl-client sends the
 * reports through libcurl. Timings never fail the run; a refused
 * report, a server that does not start, or an object read back without the last report's updateTime
 * and usage does (exit 1). --smoke runs tiny counts so `make test` keeps this program working.
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api/rfc3339.h"
#include "base/base.h"
#include "codec/codec.h"
#include "common/bench.h"

#define NAME_FMT      "node-%05zu"
#define MAX_NODES     99999
#define MAX_RATES     8
#define GRACE_SECONDS 2       /* an open-loop run sends late reports this long after its schedule */
#define MAX_RATE      100000  /* --rates */
#define MAX_REPORTS   2000000 /* reports one open-loop run may schedule */
#define ROOM_PER_S    20000   /* closed loop: room for this many reports per second */
#define READY_SECONDS 180     /* the manager with N Nodes: leader, NodeSLOs, NodeMetrics */
#define SETTLE_CPU    0.05    /* servers count as idle below this CPU share over a second */
#define SETTLE_MAX_S  120
#define VERIFY_MAX    200  /* nodes read back after the runs */
#define CPU_PERIOD    3000 /* node cpu of a report: 1 + 10 * (seq % CPU_PERIOD) milli */
#define MS_UNSENT     (-1.0)
#define MS_FAILED     (-2.0)

static const char usage[] =
    "usage: bench_nodemetric [--nodes N] [--reporters R] [--seconds S] [--rates R1,R2,...]\n"
    "                        [--pods P] [--koord PATH] [--perf FILE] [--no-manager] [--no-crd]\n"
    "                        [--full-answers] [--libcurl-client] [--smoke]\n"
    "\n"
    "Sends NodeMetric status reports to `koord manager`'s in-memory NodeMetric API and, as\n"
    "upstream does, to the slo.koordinator.sh NodeMetric CRD in `koord apiserver` (both started\n"
    "here), at fixed offered loads and then as fast as possible, and prints reports/s, latency\n"
    "and the manager/CRD ratio. Defaults: 10000 nodes, 16 reporters, 500,1000,2000,4000\n"
    "reports/s for 5 s each, 110 pods per report; --smoke: 20 nodes, 4 reporters, 50,100/s\n"
    "for 1 s. --perf FILE records the manager's closed-loop run with `perf record` (call\n"
    "graphs from DWARF). Reports ask for the metadata back, as koord agent does;\n"
    "--full-answers asks for the whole object, as client-go's typed clients do.\n"
    "Reporters write HTTP by hand over GnuTLS (its CPU would be the server's);\n"
    "--libcurl-client sends the reports through libcurl instead.\n";

static struct {
    size_t nodes, reporters, seconds, pods, nrates;
    size_t rates[MAX_RATES];
    const char *koord, *perf;
    bool no_manager, no_crd, full_answers, libcurl;
} opt = {10000,        16,   5,     110,   4,     {500, 1000, 2000, 4000},
         KOORD_BINARY, NULL, false, false, false, false};

/* What koord agent's reporter asks for (kube/client.c: a write whose answer it does not read). */
#define AGENT_ACCEPT "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

/* ---- the report ---- */

/* A report's bytes around its name, updateTime and node cpu (the group comes first). */
static struct {
    struct strbuf usage_pre, usage_post; /* "nodeMetric":{...cpu":" | m",..."podsMetric":[...] */
    size_t size;                         /* bytes of one report to the manager */
} tpl;

/* A node cpu that canonical form leaves as it is, replaced by each report's own: every report is
 * what a Go client writes, "%um" with the value 1 + 10 k (never a whole number of cores). */
#define CPU_MARK "987654321"

static void tpl_init(void)
{
    struct strbuf u = STRBUF_INIT;
    const char *p;

    strbuf_init(&tpl.usage_pre);
    strbuf_init(&tpl.usage_post);
    bench_nodemetric_usage(&u, (int)opt.pods, CPU_MARK "m");
    p = strstr(u.buf, CPU_MARK);
    CHECK(p);
    strbuf_add(&tpl.usage_pre, u.buf, (size_t)(p - u.buf));
    strbuf_addstr(&tpl.usage_post, p + strlen(CPU_MARK));
    strbuf_release(&u);
}

static void tpl_release(void)
{
    strbuf_release(&tpl.usage_pre);
    strbuf_release(&tpl.usage_post);
}

/* The body of a status write: what `koord report` and the agent send (no resourceVersion: an
 * unconditional write, accepted by both paths). */
static void report_render(const char *group, size_t node, unsigned cpu_m, const char *update_time,
                          struct strbuf *out)
{
    strbuf_reset(out);
    strbuf_addf(out,
                "{\"apiVersion\":\"%s/v1alpha1\",\"kind\":\"NodeMetric\",\"metadata\":{\"name\":"
                "\"" NAME_FMT "\"},\"status\":{\"updateTime\":\"%s\",",
                group, node, update_time);
    strbuf_add(out, tpl.usage_pre.buf, tpl.usage_pre.len);
    strbuf_addf(out, "%u", cpu_m);
    strbuf_add(out, tpl.usage_post.buf, tpl.usage_post.len);
    strbuf_addstr(out, "}}");
}

static void update_time_now(char buf[RFC3339_STR_MAX])
{
    (void)rfc3339_format((int64_t)time(NULL), buf);
}

/* ---- the two paths ---- */

struct load {
    double offered; /* reports/s; 0: closed loop */
    size_t scheduled, done, errors, unsent;
    double achieved; /* reports/s */
    struct dist ms;
    double srv_cpu, api_cpu, cli_cpu;
    double other_cpu; /* busy CPU of the machine not ours: other work sharing it */
};

struct side {
    const char *name;  /* "manager" or "crd" */
    const char *group; /* of the NodeMetric API the reports go to */
    struct server *srv;
    struct server *api; /* the API server (the same as srv on the crd path) */
    struct conn *conns; /* one per reporter for the warm-up (libcurl) */
    struct wire *wires; /* one per reporter for the runs, kept across them as agents keep theirs */
    size_t next;        /* the next report's sequence number: node = seq % nodes */
    size_t accepted;    /* status writes answered 200 */
    bool ran;
    struct load loads[MAX_RATES], max;
};

static void path_of(const struct side *sd, size_t node, bool status, struct strbuf *out)
{
    strbuf_reset(out);
    strbuf_addf(out, "/apis/%s/v1alpha1/nodemetrics/" NAME_FMT "%s", sd->group, node,
                status ? "/status" : "");
}

/* ---- parallel setup steps ---- */

/* A thread of a parallel step, on its own connection (and its own lean one, for the runs). */
struct worker {
    void *job;
    struct conn *c;
    struct wire *w;
};

/* Runs fn(job, conn) on opt.reporters threads, on conns (one each) or, when conns is NULL, on
 * new connections to srv; wires (NULL: none) gives each its lean connection too. */
static void run_workers(const struct server *srv, struct conn *conns, struct wire *wires,
                        void *(*fn)(void *), void *job)
{
    struct worker *w = xcalloc(opt.reporters, sizeof(*w));
    struct conn *own = conns ? NULL : xcalloc(opt.reporters, sizeof(*own));
    pthread_t *th = xcalloc(opt.reporters, sizeof(*th));

    for (size_t i = 0; i < opt.reporters; i++) {
        if (own)
            conn_init(&own[i], srv);
        w[i] = (struct worker){job, own ? &own[i] : &conns[i], wires ? &wires[i] : NULL};
        CHECK(pthread_create(&th[i], NULL, fn, &w[i]) == 0);
    }
    for (size_t i = 0; i < opt.reporters; i++)
        CHECK(pthread_join(th[i], NULL) == 0);
    for (size_t i = 0; own && i < opt.reporters; i++)
        conn_release(&own[i]);
    free(own);
    free(w);
    free(th);
}

struct each {
    size_t n;
    atomic_size_t next;
    atomic_int errors;
    int (*fn)(struct conn *c, size_t i, void *ud, struct strbuf *scratch);
    void *ud;
};

static void *each_worker(void *arg)
{
    struct worker *w = arg;
    struct each *e = w->job;
    struct strbuf scratch = STRBUF_INIT;

    for (;;) {
        size_t i = atomic_fetch_add(&e->next, 1);
        if (i >= e->n || atomic_load(&e->errors) > 0)
            break;
        if (e->fn(w->c, i, e->ud, &scratch) < 0)
            atomic_fetch_add(&e->errors, 1);
    }
    strbuf_release(&scratch);
    return NULL;
}

/* fn(c, i) for i in [0, n) in parallel (conns as run_workers()); stops at the first failure. */
static int for_each(const struct server *srv, struct conn *conns, size_t n,
                    int (*fn)(struct conn *c, size_t i, void *ud, struct strbuf *scratch), void *ud)
{
    struct each e = {.n = n, .fn = fn, .ud = ud};

    run_workers(srv, conns, NULL, each_worker, &e);
    return atomic_load(&e.errors) ? -EIO : 0;
}

/* Node i, from examples/nodes/node-plain.yaml (32 cores, 128Gi, 110 pods). */
static int create_node(struct conn *c, size_t i, void *ud, struct strbuf *scratch)
{
    char name[32];
    cJSON *node;

    (void)snprintf(name, sizeof(name), NAME_FMT, i);
    node = bench_node_named(ud, name);
    strbuf_reset(scratch);
    CHECK(json_print(node, scratch) == 0);
    cJSON_Delete(node);
    return conn_expect(c, "POST", "/api/v1/nodes", scratch->buf, scratch->len, 201);
}

/* The NodeMetric CR of node i as upstream's koord-manager creates it: the default
 * metricCollectPolicy (reference koordlet-and-scheduler.md 2.3), no status yet. The manager run
 * before this side may have made it already (koord manager keeps these objects for crd-mode
 * agents, --nodemetric-crd auto): that one serves as well. */
static int create_cr(struct conn *c, size_t i, void *ud, struct strbuf *scratch)
{
    (void)ud;
    strbuf_reset(scratch);
    strbuf_addf(scratch,
                "{\"apiVersion\":\"slo.koordinator.sh/v1alpha1\",\"kind\":\"NodeMetric\","
                "\"metadata\":{\"name\":\"" NAME_FMT "\"},\"spec\":{\"metricCollectPolicy\":"
                "{\"aggregateDurationSeconds\":300,\"reportIntervalSeconds\":60,"
                "\"nodeAggregatePolicy\":{\"durations\":[\"5m0s\",\"10m0s\",\"30m0s\"]},"
                "\"nodeMemoryCollectPolicy\":\"usageWithoutPageCache\"}}}",
                i);
    if (conn_do(c, "POST", "/apis/slo.koordinator.sh/v1alpha1/nodemetrics", scratch->buf,
                scratch->len) < 0)
        return -EIO;
    if (c->status == 201 || c->status == 409)
        return 0;
    (void)fprintf(stderr, "bench_nodemetric: creating NodeMetric " NAME_FMT ": HTTP %ld: %.300s\n",
                  i, c->status, c->body.buf);
    return -EIO;
}

/* ---- report runs ---- */

struct run {
    struct side *sd;
    double rate;  /* 0: closed loop */
    size_t total; /* reports scheduled (open loop), room for reports (closed loop) */
    size_t base;  /* sequence number of report 0 */
    uint64_t t0_ns, end_ns;
    atomic_size_t next, errors;
    double *ms; /* per report: the latency, MS_UNSENT or MS_FAILED */
    pthread_mutex_t mu;
    uint64_t last_ns; /* the last response */
};

/* One report on the worker's lean connection (or its libcurl one, --libcurl-client); < 0 when
 * it was not accepted (the first few refusals printed). */
static int report_send(struct worker *w, const char *path, const struct strbuf *body)
{
    static atomic_int printed;
    const char *answer;
    long status;
    int r;

    if (opt.libcurl) {
        r = conn_do(w->c, "PUT", path, body->buf, body->len);
        status = w->c->status;
        answer = w->c->body.buf;
    } else {
        r = wire_do(w->w, "PUT", path, body->buf, body->len);
        status = w->w->status;
        answer = w->w->body.buf;
    }
    if (r == 0 && status == 200)
        return 0;
    if (r == 0 && atomic_fetch_add(&printed, 1) < 5)
        (void)fprintf(stderr, "bench_nodemetric: PUT %s: HTTP %ld: %.300s\n", path, status, answer);
    return -EIO;
}

static void *report_worker(void *arg)
{
    struct worker *w = arg;
    struct run *run = w->job;
    struct strbuf body = STRBUF_INIT, path = STRBUF_INIT;
    char ts[RFC3339_STR_MAX];
    uint64_t last = 0;

    for (;;) {
        size_t k = atomic_fetch_add(&run->next, 1), seq, node;
        uint64_t due = 0;

        if (k >= run->total)
            break;
        if (run->rate > 0) {
            due = run->t0_ns + (uint64_t)((double)k * 1e9 / run->rate);
            struct timespec t = {(time_t)(due / 1000000000u), (long)(due % 1000000000u)};
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
                ;
        }
        if (now_ns() > run->end_ns)
            break; /* this and later reports stay unsent */
        if (run->rate <= 0)
            due = now_ns();
        seq = run->base + k;
        node = seq % opt.nodes;
        update_time_now(ts);
        report_render(run->sd->group, node, 1 + 10 * (unsigned)(seq % CPU_PERIOD), ts, &body);
        path_of(run->sd, node, true, &path);
        if (report_send(w, path.buf, &body) < 0) {
            atomic_fetch_add(&run->errors, 1);
            run->ms[k] = MS_FAILED;
            continue;
        }
        last = now_ns();
        run->ms[k] = (double)(last - due) / 1e6;
    }
    CHECK(pthread_mutex_lock(&run->mu) == 0);
    if (last > run->last_ns)
        run->last_ns = last;
    CHECK(pthread_mutex_unlock(&run->mu) == 0);
    strbuf_release(&body);
    strbuf_release(&path);
    return NULL;
}

/* A child `perf record` of target, or 0 when perf is not there. */
static pid_t perf_start(pid_t target, const char *out)
{
    char pidbuf[16];
    pid_t pid;

    if (!bench_runnable("perf")) {
        (void)printf("perf: not found; --perf skipped\n");
        return 0;
    }
    (void)snprintf(pidbuf, sizeof(pidbuf), "%d", (int)target);
    pid = fork();
    if (pid == 0) {
        /* Call graphs from DWARF: a release build keeps no frame pointers for -g to follow. */
        const char *argv[] = {"perf", "record", "--call-graph", "dwarf,16384", "-F", "499", "-q",
                              "-o",   out,      "-p",           pidbuf,        NULL};
        bench_child_setup();
        (void)execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    if (pid < 0) {
        (void)printf("perf: fork failed; --perf skipped\n");
        return 0;
    }
    bench_child_started(pid, NULL);
    (void)usleep(300000); /* perf attaches to the threads */
    return pid;
}

static void perf_stop(pid_t pid)
{
    int st = 0;

    if (pid <= 0)
        return;
    (void)kill(pid, SIGINT);
    (void)waitpid(pid, &st, 0);
    bench_child_stopped(pid);
    /* perf record writes its file on SIGINT and then dies of it. */
    if ((WIFEXITED(st) && WEXITSTATUS(st) == 0) || (WIFSIGNALED(st) && WTERMSIG(st) == SIGINT))
        (void)printf("perf: recorded the manager's closed-loop run in %s (perf report -i %s)\n",
                     opt.perf, opt.perf);
    else
        (void)printf("perf: perf record failed (status %d)\n", st);
}

/*
 * One run: rate > 0 sends rate reports/s for opt.seconds on a schedule, and reports still
 * unsent GRACE_SECONDS after it count with the latency they had reached then (a lower bound);
 * rate 0 sends as fast as the reporters can for opt.seconds (latency per request).
 */
static void run_load(struct side *sd, double rate, struct load *res)
{
    struct run run = {.sd = sd, .rate = rate, .base = sd->next};
    double cpu0 = server_cpu(sd->srv), api0 = server_cpu(sd->api), cli0 = bench_self_cpu();
    double all0 = bench_machine_cpu();
    double *lat;
    size_t nlat = 0, sent = 0;
    pid_t perf = 0;

    run.total = rate > 0 ? (size_t)(rate * (double)opt.seconds) : ROOM_PER_S * opt.seconds;
    run.ms = xcalloc(run.total, sizeof(double));
    for (size_t i = 0; i < run.total; i++)
        run.ms[i] = MS_UNSENT;
    CHECK(pthread_mutex_init(&run.mu, NULL) == 0);
    if (rate <= 0 && opt.perf && sd->srv->kind == SERVER_MANAGER)
        perf = perf_start(sd->srv->pid, opt.perf);
    run.t0_ns = now_ns() + 1000000; /* 1 ms for the threads to start */
    run.end_ns = run.t0_ns + (uint64_t)opt.seconds * 1000000000u;
    if (rate > 0)
        run.end_ns += (uint64_t)GRACE_SECONDS * 1000000000u;
    run_workers(sd->srv, sd->conns, sd->wires, report_worker, &run);
    perf_stop(perf);
    res->offered = rate;
    res->srv_cpu = server_cpu(sd->srv) - cpu0;
    res->api_cpu = sd->api != sd->srv ? server_cpu(sd->api) - api0 : 0;
    res->cli_cpu = bench_self_cpu() - cli0;
    res->other_cpu = bench_machine_cpu() - all0 - res->srv_cpu - res->api_cpu - res->cli_cpu;
    if (res->other_cpu < 0)
        res->other_cpu = 0;
    res->errors = atomic_load(&run.errors);
    lat = xcalloc(run.total, sizeof(double));
    for (size_t k = 0; k < run.total; k++) {
        if (run.ms[k] >= 0) {
            lat[nlat++] = run.ms[k];
            res->done++;
        } else if (run.ms[k] == MS_UNSENT && rate > 0) {
            uint64_t due = run.t0_ns + (uint64_t)((double)k * 1e9 / rate);
            lat[nlat++] = (double)(run.end_ns - due) / 1e6;
            res->unsent++;
        }
        if (run.ms[k] != MS_UNSENT)
            sent = k + 1;
    }
    /* A closed loop's sequence numbers taken after its end are the next run's. */
    res->scheduled = rate > 0 ? run.total : sent;
    sd->next += res->scheduled;
    sd->accepted += res->done;
    res->achieved =
        run.last_ns > run.t0_ns ? (double)res->done / ((double)(run.last_ns - run.t0_ns) / 1e9) : 0;
    res->ms = bench_dist(lat, nlat);
    free(lat);
    free(run.ms);
    (void)pthread_mutex_destroy(&run.mu);
}

/* ---- setup, warm-up, verification ---- */

/* Waits until the servers of sd use less than SETTLE_CPU of a core over a second (background
 * work of the setup: NodeSLO writes, reconciles, checkpoints) or SETTLE_MAX_S pass. */
static void settle(const struct side *sd)
{
    double deadline = now_s() + SETTLE_MAX_S;

    for (;;) {
        double a = server_cpu(sd->srv) + (sd->api != sd->srv ? server_cpu(sd->api) : 0), b;
        (void)usleep(1000000);
        b = server_cpu(sd->srv) + (sd->api != sd->srv ? server_cpu(sd->api) : 0);
        if (b - a < SETTLE_CPU || now_s() > deadline)
            return;
    }
}

/* Report to node i once (the warm-up: every object gets a full status). */
static int warm_one(struct conn *c, size_t i, void *ud, struct strbuf *scratch)
{
    const struct side *sd = ud;
    struct strbuf path = STRBUF_INIT;
    char ts[RFC3339_STR_MAX];
    int r;

    update_time_now(ts);
    report_render(sd->group, i, 1 + 10 * (unsigned)(i % CPU_PERIOD), ts, scratch);
    path_of(sd, i, true, &path);
    r = conn_expect(c, "PUT", path.buf, scratch->buf, scratch->len, 200);
    /* the runs measure the answer they say they get */
    if (r == 0 && !opt.full_answers && !strstr(c->body.buf, "\"kind\":\"PartialObjectMetadata\"")) {
        (void)fprintf(stderr, "bench_nodemetric: PUT %s: not a PartialObjectMetadata: %.200s\n",
                      path.buf, c->body.buf);
        r = -EIO;
    }
    strbuf_release(&path);
    return r;
}

/* The member of o at the NULL-terminated path of names, or NULL. */
static const cJSON *member_at(const cJSON *o, const char *const *path)
{
    for (; o && *path; path++)
        o = cJSON_GetObjectItemCaseSensitive(o, *path);
    return o;
}

/* One last report to each of up to VERIFY_MAX nodes (spread over all), nothing else in flight,
 * then each is read back: it must hold that report's updateTime, node cpu and pods. */
static int verify(struct side *sd)
{
    size_t step = opt.nodes > VERIFY_MAX ? opt.nodes / VERIFY_MAX : 1, checked = 0, bad = 0;
    struct strbuf body = STRBUF_INIT, path = STRBUF_INIT;
    char ts[RFC3339_STR_MAX];
    struct conn c;
    int r = 0;

    conn_init(&c, sd->srv);
    for (size_t i = 0; i < opt.nodes && r == 0; i += step) {
        unsigned cpu = 9 + 10 * (unsigned)(i % CPU_PERIOD); /* ends in 9: no earlier report's */
        char want_cpu[16];
        const char *time_q, *cpu_q;
        cJSON *o = NULL, *st, *pods;

        update_time_now(ts);
        report_render(sd->group, i, cpu, ts, &body);
        path_of(sd, i, true, &path);
        if ((r = conn_expect(&c, "PUT", path.buf, body.buf, body.len, 200)) < 0)
            break;
        sd->accepted++;
        path_of(sd, i, false, &path);
        if ((r = conn_expect(&c, "GET", path.buf, NULL, 0, 200)) < 0)
            break;
        (void)snprintf(want_cpu, sizeof(want_cpu), "%um", cpu);
        o = cJSON_ParseWithLength(c.body.buf, c.body.len);
        st = cJSON_GetObjectItemCaseSensitive(o, "status");
        time_q = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(st, "updateTime"));
        cpu_q = cJSON_GetStringValue(member_at(
            st, (const char *const[]){"nodeMetric", "nodeUsage", "resources", "cpu", NULL}));
        pods = cJSON_GetObjectItemCaseSensitive(st, "podsMetric");
        if (!time_q || strcmp(time_q, ts) || !cpu_q || strcmp(cpu_q, want_cpu) ||
            cJSON_GetArraySize(pods) != (int)opt.pods) {
            if (bad++ < 3)
                bench_fail(sd->name, "%s: want updateTime %s, cpu %s, %zu pods; read back %.300s",
                           path.buf, ts, want_cpu, opt.pods, c.body.buf);
        }
        cJSON_Delete(o);
        checked++;
    }
    conn_release(&c);
    strbuf_release(&body);
    strbuf_release(&path);
    if (r < 0) {
        bench_fail(sd->name, "a verification request failed");
        return r;
    }
    if (bad) {
        bench_fail(sd->name, "%zu of %zu objects read back without their last report", bad,
                   checked);
        return -EIO;
    }
    (void)printf("%s: %zu objects read back with their last report\n", sd->name, checked);
    return 0;
}

/* The manager's own count of accepted reports (/metrics) must equal ours. */
static void check_manager_count(struct side *sd)
{
    struct conn c;
    const char *p;
    int64_t n = -1;

    conn_init(&c, sd->srv);
    if (conn_do(&c, "GET", "/metrics", NULL, 0) == 0 && c.status == 200 &&
        (p = strstr(c.body.buf, "\nkoord_manager_nodemetric_reports_total "))) {
        char num[24];
        size_t len;
        p += strlen("\nkoord_manager_nodemetric_reports_total ");
        len = strcspn(p, "\n");
        if (len < sizeof(num)) {
            memcpy(num, p, len);
            num[len] = '\0';
            (void)parse_i64(num, &n);
        }
    }
    if (n != (int64_t)sd->accepted)
        bench_fail(sd->name, "koord_manager_nodemetric_reports_total is %lld, %zu reports accepted",
                   (long long)n, sd->accepted);
    conn_release(&c);
}

static void print_load(const char *name, const struct load *l)
{
    char offered[16];

    if (l->offered > 0)
        (void)snprintf(offered, sizeof(offered), "%.0f/s", l->offered);
    else
        (void)snprintf(offered, sizeof(offered), "max");
    (void)printf("  %-8s %-7s %8.0f/s  p50 %8.2f ms  p99 %8.2f ms  max %8.2f ms  errors %zu  "
                 "unsent %zu  server cpu %5.2f s",
                 name, offered, l->achieved, l->ms.p50, l->ms.p99, l->ms.max, l->errors, l->unsent,
                 l->srv_cpu);
    if (l->api_cpu > 0)
        (void)printf(" (apiserver %.2f s)", l->api_cpu);
    (void)printf("  client cpu %5.2f s  other %5.2f s\n", l->cli_cpu, l->other_cpu);
    (void)fflush(stdout);
}

/* Warm-up, the fixed loads, the closed loop and the read-back on one path. */
static void run_side(struct side *sd)
{
    const char *accept = opt.full_answers ? "application/json" : AGENT_ACCEPT;
    double t0;

    sd->ran = true;
    sd->conns = xcalloc(opt.reporters, sizeof(*sd->conns));
    for (size_t i = 0; i < opt.reporters; i++)
        conn_init_accept(&sd->conns[i], sd->srv, accept);
    settle(sd);
    (void)printf("%s: warm-up, one report to each of %zu nodes ...\n", sd->name, opt.nodes);
    (void)fflush(stdout);
    t0 = now_s();
    if (for_each(sd->srv, sd->conns, opt.nodes, warm_one, sd) < 0) {
        bench_fail(sd->name, "warm-up reports failed");
        goto out;
    }
    sd->accepted += opt.nodes;
    sd->next = opt.nodes;
    (void)printf("%s: warm-up done in %.1f s\n", sd->name, now_s() - t0);
    sd->wires = xcalloc(opt.reporters, sizeof(*sd->wires));
    for (size_t i = 0; i < opt.reporters && !opt.libcurl; i++) {
        if (wire_init(&sd->wires[i], sd->srv, accept) < 0 || wire_open(&sd->wires[i]) < 0) {
            bench_fail(sd->name, "cannot connect the reporters");
            goto out;
        }
    }
    for (size_t i = 0; i < opt.nrates; i++) {
        settle(sd);
        run_load(sd, (double)opt.rates[i], &sd->loads[i]);
        print_load(sd->name, &sd->loads[i]);
        if (sd->loads[i].errors)
            bench_fail(sd->name, "%zu reports refused at %zu/s", sd->loads[i].errors, opt.rates[i]);
    }
    settle(sd);
    run_load(sd, 0, &sd->max);
    print_load(sd->name, &sd->max);
    if (sd->max.errors)
        bench_fail(sd->name, "%zu reports refused in the closed loop", sd->max.errors);
    (void)verify(sd);
out:
    for (size_t i = 0; i < opt.reporters; i++) {
        conn_release(&sd->conns[i]);
        if (sd->wires)
            wire_release(&sd->wires[i]);
    }
    FREE_AND_NULL(sd->conns);
    FREE_AND_NULL(sd->wires);
}

/* ---- the two setups ---- */

static int create_nodes(struct server *api)
{
    cJSON *node = bench_read_doc("examples/nodes/node-plain.yaml");
    double t0 = now_s();
    int r;

    if (!node)
        return -EINVAL;
    (void)printf("apiserver: creating %zu Nodes ...\n", opt.nodes);
    (void)fflush(stdout);
    r = for_each(api, NULL, opt.nodes, create_node, node);
    cJSON_Delete(node);
    if (r == 0)
        (void)printf("apiserver: %zu Nodes in %.1f s\n", opt.nodes, now_s() - t0);
    return r;
}

static void manager_side(struct server *api, struct side *sd)
{
    struct server m = {0};
    struct strbuf path = STRBUF_INIT;
    struct conn c;
    double t0 = now_s(), deadline;
    bool found = false;

    (void)printf("manager: starting ...\n");
    (void)fflush(stdout);
    if (server_start_manager(&m, opt.koord, api, READY_SECONDS) < 0) {
        bench_fail("manager", "did not start");
        return;
    }
    /* Ready means every Node known then has its NodeMetric; the last one proves it. */
    conn_init(&c, &m);
    path_of(sd, opt.nodes - 1, false, &path);
    deadline = now_s() + READY_SECONDS;
    while (!found && now_s() < deadline) {
        found = conn_do(&c, "GET", path.buf, NULL, 0) == 0 && c.status == 200;
        if (!found)
            (void)usleep(100000);
    }
    conn_release(&c);
    strbuf_release(&path);
    if (!found) {
        bench_fail("manager", "no NodeMetric for " NAME_FMT " after %d s", opt.nodes - 1,
                   READY_SECONDS);
        server_print_log(&m);
    } else {
        (void)printf("manager: ready in %.1f s\n", now_s() - t0);
        sd->srv = &m;
        sd->api = api;
        run_side(sd);
        check_manager_count(sd);
    }
    sd->srv = NULL;
    server_stop(&m);
}

static void crd_side(struct server *api, struct side *sd)
{
    double t0 = now_s();

    (void)printf("crd: creating %zu NodeMetric objects ...\n", opt.nodes);
    (void)fflush(stdout);
    if (for_each(api, NULL, opt.nodes, create_cr, NULL) < 0) {
        bench_fail("crd", "creating NodeMetric objects failed");
        return;
    }
    (void)printf("crd: %zu NodeMetric objects in %.1f s\n", opt.nodes, now_s() - t0);
    sd->srv = api;
    sd->api = api;
    run_side(sd);
}

/* ---- summary ---- */

static double start_load;

static void report(const struct side *m, const struct side *crd)
{
    const struct load *best = NULL;
    double load = 0;

    (void)getloadavg(&load, 1);
    (void)printf("\nbench/nodemetric: %zu nodes, reports of %zu bytes (%zu pods), %zu reporter "
                 "connections, %zu s per load; %ld CPUs, load %.2f before the run, %.2f after "
                 "(which counts our threads)\n",
                 opt.nodes, tpl.size, opt.pods, opt.reporters, opt.seconds,
                 sysconf(_SC_NPROCESSORS_ONLN), start_load, load);
    (void)printf("  manager: koord manager, metrics.koordinator.sh NodeMetric in memory | crd: "
                 "koord apiserver, slo.koordinator.sh NodeMetric CRD status, SQLite WAL "
                 "synchronous=FULL | both HTTPS (verified, admin client certificate), "
                 "HTTP/1.1 keep-alive, %s client | answers: %s\n",
                 opt.libcurl ? "libcurl" : "lean (bench/common/wire.c)",
                 opt.full_answers ? "the whole object (--full-answers, as client-go's typed "
                                    "clients ask)"
                                  : "the metadata (PartialObjectMetadata, as koord agent asks)");
    (void)printf("  latency from the scheduled send time (open loop; unsent reports count with "
                 "the wait they had reached) or from the send (max)\n");
    for (size_t i = 0; i < opt.nrates; i++) {
        if (m->ran)
            print_load("manager", &m->loads[i]);
        if (crd->ran)
            print_load("crd", &crd->loads[i]);
    }
    if (m->ran)
        print_load("manager", &m->max);
    if (crd->ran)
        print_load("crd", &crd->max);
    if (m->ran) {
        for (size_t i = 0; i < opt.nrates; i++) {
            const struct load *l = &m->loads[i];
            if (l->offered >= 2000 && l->achieved >= 0.99 * l->offered && !l->unsent &&
                l->ms.p99 < 50 && (!best || l->offered > best->offered))
                best = l;
        }
        if (best)
            (void)printf("  manager target >= 2,000 reports/s with p99 < 50 ms: met (%.0f/s "
                         "offered, %.0f/s achieved, p99 %.2f ms)\n",
                         best->offered, best->achieved, best->ms.p99);
        else
            (void)printf("  manager target >= 2,000 reports/s with p99 < 50 ms: MISSED (no "
                         "offered load >= 2000/s kept with p99 < 50 ms)\n");
    }
    if (m->ran && crd->ran && crd->max.achieved > 0) {
        double ratio = m->max.achieved / crd->max.achieved;
        (void)printf("summary: manager max %.0f reports/s / crd max %.0f reports/s = %.2f "
                     "(target >= 10: %s); manager p50 %.2f ms p99 %.2f ms, crd p50 %.2f ms p99 "
                     "%.2f ms at max\n",
                     m->max.achieved, crd->max.achieved, ratio, ratio >= 10 ? "met" : "MISSED",
                     m->max.ms.p50, m->max.ms.p99, crd->max.ms.p50, crd->max.ms.p99);
        /* What neither the client's share of the CPU nor the disk's latency moves. */
        if (m->max.done && crd->max.done)
            (void)printf("  server CPU per report at max: manager %.0f us, crd %.0f us (%.1fx)\n",
                         1e6 * m->max.srv_cpu / (double)m->max.done,
                         1e6 * crd->max.srv_cpu / (double)crd->max.done,
                         (crd->max.srv_cpu / (double)crd->max.done) /
                             (m->max.srv_cpu / (double)m->max.done));
    } else {
        (void)printf("summary: the ratio needs both paths\n");
    }
}

/* ---- main ---- */

static int parse_rates(const char *s)
{
    const char *p = s;

    opt.nrates = 0;
    while (*p) {
        char num[16];
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof(num) || opt.nrates == MAX_RATES)
            return -EINVAL;
        memcpy(num, p, len);
        num[len] = '\0';
        if (bench_parse_size(num, 1, MAX_RATE, &opt.rates[opt.nrates++]) < 0)
            return -EINVAL;
        p += len;
        if (*p == ',')
            p++;
    }
    return opt.nrates ? 0 : -EINVAL;
}

static int parse_opts(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"nodes", required_argument, NULL, 'n'},   {"reporters", required_argument, NULL, 'r'},
        {"seconds", required_argument, NULL, 's'}, {"rates", required_argument, NULL, 'R'},
        {"pods", required_argument, NULL, 'p'},    {"koord", required_argument, NULL, 'K'},
        {"perf", required_argument, NULL, 'P'},    {"no-manager", no_argument, NULL, 'M'},
        {"no-crd", no_argument, NULL, 'C'},        {"smoke", no_argument, NULL, 'S'},
        {"full-answers", no_argument, NULL, 'F'},  {"libcurl-client", no_argument, NULL, 'L'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    int ch, r = 0;

    while (r == 0 && (ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'n':
            r = bench_parse_size(optarg, 1, MAX_NODES, &opt.nodes);
            break;
        case 'r':
            r = bench_parse_size(optarg, 1, 256, &opt.reporters);
            break;
        case 's':
            r = bench_parse_size(optarg, 1, 600, &opt.seconds);
            break;
        case 'R':
            r = parse_rates(optarg);
            break;
        case 'p':
            r = bench_parse_size(optarg, 0, 1000, &opt.pods);
            break;
        case 'K':
            opt.koord = optarg;
            break;
        case 'P':
            opt.perf = optarg;
            break;
        case 'M':
            opt.no_manager = true;
            break;
        case 'C':
            opt.no_crd = true;
            break;
        case 'F':
            opt.full_answers = true;
            break;
        case 'L':
            opt.libcurl = true;
            break;
        case 'S':
            opt.nodes = 20;
            opt.reporters = 4;
            opt.seconds = 1;
            opt.rates[0] = 50;
            opt.rates[1] = 100;
            opt.nrates = 2;
            break;
        case 'h':
            (void)fputs(usage, stdout);
            exit(0);
        default:
            r = -EINVAL;
        }
    }
    for (size_t i = 0; r == 0 && i < opt.nrates; i++)
        if (opt.rates[i] * opt.seconds > MAX_REPORTS)
            r = -EINVAL;
    if (r < 0 || optind != argc) {
        (void)fputs(usage, stderr);
        return -EINVAL;
    }
    return 0;
}

int main(int argc, char **argv)
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
    struct side m = {.name = "manager", .group = "metrics.koordinator.sh"};
    struct side crd = {.name = "crd", .group = "slo.koordinator.sh"};
    struct server api = {0};
    struct strbuf sample = STRBUF_INIT;
    char **crds;

    if (parse_opts(argc, argv) < 0)
        return 2;
    (void)getloadavg(&start_load, 1);
    bench_catch_signals();
    codec_init();
    CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == 0);
    tpl_init();
    report_render(m.group, 0, 1, "2026-01-01T00:00:00Z", &sample);
    tpl.size = sample.len;
    strbuf_release(&sample);
    crds = bench_crd_paths(crd_names);
    if (server_start_koord(&api, opt.koord, (const char *const *)crds, SERVER_AUTH_CERT) < 0) {
        bench_fail("apiserver", "did not start");
    } else if (create_nodes(&api) < 0) {
        bench_fail("apiserver", "creating Nodes failed");
    } else {
        if (!opt.no_manager)
            manager_side(&api, &m);
        if (!opt.no_crd)
            crd_side(&api, &crd);
        report(&m, &crd);
    }
    server_stop(&api);
    bench_paths_free(crds);
    tpl_release();
    curl_global_cleanup();
    bench_release_signals();
    if (bench_failures())
        (void)fprintf(stderr, "bench_nodemetric: %d failure(s)\n", bench_failures());
    return bench_failures() ? 1 : 0;
}
