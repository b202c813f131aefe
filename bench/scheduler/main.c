/*
 * bench/scheduler: scheduler_perf's workloads (reference scheduler.md 9) against `koord
 * scheduler`, as in a cluster: `koord apiserver` and `koord scheduler` run as separate
 * processes started here, Nodes are API objects only (status with capacity and allocatable, a
 * Ready condition; no kubelet, as upstream's harness), pods are created through the API by
 * several client threads and bound by the scheduler through the binding subresource. Each
 * workload gets a fresh API server and scheduler:
 *
 *   SchedulingBasic/5000Nodes_10000Pods      5000 nodes, 1000 init pod-default, 10000 measured
 *   SchedulingWhileGated/1Node_10000GatedPods  1 node of 90000 pods, 10000 gated pods, 20000
 *                                            light pods deleted at 50/s once scheduled, then
 *                                            20000 measured light pods
 *   SchedulingPodAffinity/5000Nodes_5000Pods  nodes in zone1, 5000 + 5000 pods with required
 *                                            affinity to color=blue by zone (sched-0, sched-1)
 *   TopologySpreading/5000Nodes_5000Pods      nodes in moon-1..3 (round-robin), 5000
 *                                            pod-default, 5000 measured with maxSkew 5 by zone
 *   PreemptionBasic/500Nodes                  2000 low-priority pods (4 per node, 3.6 of 4
 *                                            cpu), 500 measured high-priority pods that preempt
 *   Unschedulable/5000Nodes/200InitPods       200 pods that fit no node, then 10000 pod-default
 *
 * For the measured pods: throughput as scheduler_perf's throughputCollector computes it (1 s
 * samples of newly scheduled measured pods, seen on a watch of their namespace; first non-zero
 * sample discarded, empty intervals merged), Average and Perc50/90/95/99, compared with
 * upstream's floor (the workload's threshold); each pod's latency from the moment its create
 * request was sent to the moment it is seen bound on the watch; the scheduler's CPU and peak
 * RSS (VmHWM) and the API server's CPU. Then the cycle alone: SchedulingBasic in this process
 * (cycle.c), no API server, so the API path's share shows. Counts fail the run (exit 1): a
 * measured pod never bound, a gated pod attempted; timings never do. --smoke runs tiny counts
 * of every workload so `make test` keeps this program working.
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "codec/codec.h"
#include "common/bench.h"
#include "sbench.h"

#define STALL_SECONDS   60 /* no pod bound for this long: the workload failed */
#define BARRIER_SECONDS 60 /* gated pods seen by the scheduler */
#define DELETE_RATE     50 /* deleting pods per second (SchedulingWhileGated) */
#define MAX_WORKLOADS   16
#define TARGET_E2E      2000.0  /* SchedulingBasic end to end, pods/s */
#define TARGET_CYCLE    10000.0 /* the cycle alone, pods/s */
#define TARGET_RSS_MB   200.0   /* the scheduler at 5000 nodes and 10000 pods */
#define TARGET_GATED    1.05    /* SchedulingWhileGated's CPU per pod / SchedulingBasic's */

/* What the pod creates ask back: the metadata (the client reads only the status code). */
#define META_ACCEPT "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

static const char usage[] =
    "usage: bench_scheduler [--workload NAME]... [--nodes N] [--pods P] [--clients C]\n"
    "                       [--koord PATH] [--perf FILE] [--keep-going] [--smoke]\n"
    "\n"
    "Runs scheduler_perf's workloads against `koord scheduler` and `koord apiserver` (started\n"
    "here, fresh for each workload): SchedulingBasic, SchedulingWhileGated,\n"
    "SchedulingPodAffinity, TopologySpreading, PreemptionBasic, Unschedulable, and the cycle\n"
    "alone in this process (`cycle`, SchedulingBasic's counts). Prints the throughput as\n"
    "scheduler_perf computes it (Average, Perc50/90/95/99) against upstream's floor, the\n"
    "latency from create to bound, the scheduler's CPU and peak RSS, the API server's CPU.\n"
    "  --workload NAME  a test case (case-insensitive; repeat for more; default all)\n"
    "  --nodes N        nodes of every workload but SchedulingWhileGated's one; init pods scale\n"
    "                   with it (Unschedulable keeps its 200)\n"
    "  --pods P         measured pods of every workload\n"
    "  --clients C      threads creating objects (default 8)\n"
    "  --perf FILE      `perf record` the scheduler during the first workload's measured pods\n"
    "  --keep-going     run the next workloads after one failed\n"
    "  --smoke          tiny counts (50 nodes, 20 init, 100 measured); counts are checked,\n"
    "                   never times\n";

struct workload {
    const char *name, *variant;
    double floor;             /* upstream's threshold: minimum Average pods/s */
    const char *const *zones; /* node labels round-robin, NULL: none */
    size_t nodes, init, measured, gated, deleting;
    size_t s_nodes, s_init, s_measured, s_gated, s_deleting; /* --smoke */
    enum sbench_tpl node_tpl, init_tpl, measured_tpl;
    bool init_nowait; /* init pods never fit (skipWaitToCompletion) */
    bool init_fixed;  /* init pods do not scale with --nodes */
    bool fixed_nodes; /* one named node, whatever --nodes says */
    bool priority;    /* the measured pods name SBENCH_HIGH_CLASS */
};

static const char *const zone1[] = {"zone1", NULL};
static const char *const moons[] = {"moon-1", "moon-2", "moon-3", NULL};

enum { W_BASIC, W_GATED, W_AFFINITY, W_SPREAD, W_PREEMPT, W_UNSCHED, W_COUNT };

/* Reference scheduler.md 9.3; --smoke counts after the s_ prefix. */
static const struct workload workloads[W_COUNT] = {
    [W_BASIC] = {.name = "SchedulingBasic",
                 .variant = "5000Nodes_10000Pods",
                 .floor = 270,
                 .nodes = 5000,
                 .init = 1000,
                 .measured = 10000,
                 .s_nodes = 50,
                 .s_init = 20,
                 .s_measured = 100,
                 .node_tpl = SBENCH_NODE_DEFAULT,
                 .init_tpl = SBENCH_POD_DEFAULT,
                 .measured_tpl = SBENCH_POD_DEFAULT},
    [W_GATED] = {.name = "SchedulingWhileGated",
                 .variant = "1Node_10000GatedPods",
                 .floor = 130,
                 .nodes = 1,
                 .measured = 20000,
                 .gated = 10000,
                 .deleting = 20000,
                 .s_nodes = 1,
                 .s_measured = 100,
                 .s_gated = 20,
                 .s_deleting = 20,
                 .node_tpl = SBENCH_NODE_WITH_NAME,
                 .init_tpl = SBENCH_POD_LIGHT,
                 .measured_tpl = SBENCH_POD_LIGHT,
                 .init_fixed = true,
                 .fixed_nodes = true},
    [W_AFFINITY] = {.name = "SchedulingPodAffinity",
                    .variant = "5000Nodes_5000Pods",
                    .floor = 35,
                    .zones = zone1,
                    .nodes = 5000,
                    .init = 5000,
                    .measured = 5000,
                    .s_nodes = 50,
                    .s_init = 20,
                    .s_measured = 100,
                    .node_tpl = SBENCH_NODE_DEFAULT,
                    .init_tpl = SBENCH_POD_AFFINITY,
                    .measured_tpl = SBENCH_POD_AFFINITY},
    [W_SPREAD] = {.name = "TopologySpreading",
                  .variant = "5000Nodes_5000Pods",
                  .floor = 85,
                  .zones = moons,
                  .nodes = 5000,
                  .init = 5000,
                  .measured = 5000,
                  .s_nodes = 50,
                  .s_init = 20,
                  .s_measured = 100,
                  .node_tpl = SBENCH_NODE_DEFAULT,
                  .init_tpl = SBENCH_POD_DEFAULT,
                  .measured_tpl = SBENCH_POD_SPREAD},
    /* 4 low-priority pods per node (3.6 of 4 cpu): every high-priority pod must preempt */
    [W_PREEMPT] = {.name = "PreemptionBasic",
                   .variant = "500Nodes",
                   .floor = 18,
                   .nodes = 500,
                   .init = 2000,
                   .measured = 500,
                   .s_nodes = 10,
                   .s_init = 40,
                   .s_measured = 10,
                   .node_tpl = SBENCH_NODE_DEFAULT,
                   .init_tpl = SBENCH_POD_LOW,
                   .measured_tpl = SBENCH_POD_HIGH,
                   .priority = true},
    [W_UNSCHED] = {.name = "Unschedulable",
                   .variant = "5000Nodes/200InitPods",
                   .floor = 300,
                   .nodes = 5000,
                   .init = 200,
                   .measured = 10000,
                   .s_nodes = 50,
                   .s_init = 20,
                   .s_measured = 100,
                   .node_tpl = SBENCH_NODE_DEFAULT,
                   .init_tpl = SBENCH_POD_LARGE_CPU,
                   .measured_tpl = SBENCH_POD_DEFAULT,
                   .init_nowait = true,
                   .init_fixed = true},
};

static struct {
    const char *koord, *perf;
    size_t clients, nodes, pods; /* nodes, pods: 0 = the workload's */
    bool smoke, keep_going, run[W_COUNT], cycle, any;
} opt = {.koord = KOORD_BINARY, .clients = 8};

/* A workload's counts after --smoke, --nodes and --pods. */
struct counts {
    size_t nodes, init, measured, gated, deleting;
};

static struct counts counts_of(const struct workload *w)
{
    struct counts c = {w->nodes, w->init, w->measured, w->gated, w->deleting};

    if (opt.smoke)
        c = (struct counts){w->s_nodes, w->s_init, w->s_measured, w->s_gated, w->s_deleting};
    if (opt.nodes && !w->fixed_nodes) {
        if (!w->init_fixed)
            c.init = (c.init * opt.nodes + c.nodes / 2) / c.nodes;
        c.nodes = opt.nodes;
    }
    if (opt.pods)
        c.measured = opt.pods;
    return c;
}

/* ---- results ---- */

struct result {
    const struct workload *w;
    struct counts n;
    bool ran, ok;
    struct sbench_tput_summary tput;
    double lat_p50, lat_p90, lat_p99;              /* ms, create sent to bound seen */
    double wall_s;                                 /* first create sent to last pod seen bound */
    double sched_cpu, api_cpu, cli_cpu, other_cpu; /* over the measured pods */
    double rss_mb;                                 /* the scheduler's VmHWM */
    double setup_s;
    double attempts, gated_gauge;
    double att_unsched, att_error, preemptions; /* attempts by result; preemption attempts */
};

/* ---- small helpers ---- */

static int64_t status_kb(pid_t pid, const char *key)
{
    char path[64], line[256];
    size_t klen = strlen(key);
    int64_t v = -1;
    FILE *f;

    (void)snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    if (!(f = fopen(path, "re")))
        return -1;
    while (fgets(line, sizeof(line), f)) {
        long long kb;
        if (!strncmp(line, key, klen) && line[klen] == ':' &&
            sscanf(line + klen + 1, "%lld", &kb) == 1) {
            v = kb;
            break;
        }
    }
    (void)fclose(f);
    return v;
}

/* Whether the process runs (not gone, not a zombie). */
static bool alive(const struct server *s)
{
    char path[64], buf[256];
    const char *p;
    size_t n;
    FILE *f;

    if (s->pid <= 0)
        return false;
    (void)snprintf(path, sizeof(path), "/proc/%d/stat", (int)s->pid);
    if (!(f = fopen(path, "re")))
        return false;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    (void)fclose(f);
    buf[n] = '\0';
    p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

static void sleep_until_ns(uint64_t t)
{
    struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};

    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* The /metrics text of the scheduler. */
static int scrape(const struct server *sch, struct strbuf *out)
{
    struct conn c;
    int r;

    conn_init_accept(&c, sch, "text/plain");
    r = conn_expect(&c, "GET", "/metrics", NULL, 0, 200);
    if (r == 0) {
        strbuf_reset(out);
        strbuf_add(out, c.body.buf, c.body.len);
    }
    conn_release(&c);
    return r;
}

/* The sum of the samples of metric name whose labels contain `labels` (NULL: all); -1 when
 * there is none. */
static double metric_sum(const char *text, const char *name, const char *labels)
{
    size_t n = strlen(name);
    double sum = -1;

    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        const char *eol = strchr(p, '\n'), *sp;
        char num[64];
        size_t len;
        if (!eol)
            eol = p + strlen(p);
        if (strncmp(p, name, n) || (p[n] != '{' && p[n] != ' '))
            continue;
        sp = eol;
        while (sp > p && sp[-1] != ' ')
            sp--;
        if (labels && !memmem(p, (size_t)(sp - p), labels, strlen(labels)))
            continue;
        len = (size_t)(eol - sp);
        if (!len || len >= sizeof(num))
            continue;
        memcpy(num, sp, len);
        num[len] = '\0';
        sum = (sum < 0 ? 0 : sum) + strtod(num, NULL);
    }
    return sum;
}

/* ---- parallel creates ---- */

struct create_job {
    const struct server *api;
    const char *path;                /* the collection */
    const struct sbench_bytes *tpls; /* object i is tpls[i % ntpls] */
    size_t ntpls;
    const char *prefix; /* names: prefix + %06zu, or prefix alone when n == 1 and single */
    bool single;
    size_t n;
    uint64_t *sent_ns; /* per object: when its create was sent; may be NULL */
    atomic_size_t next;
    atomic_int errors;
};

static void object_name(const char *prefix, bool single, size_t i, char *buf, size_t size)
{
    if (single)
        (void)snprintf(buf, size, "%s", prefix);
    else
        (void)snprintf(buf, size, "%s%06zu", prefix, i);
}

static void *create_worker(void *arg)
{
    struct create_job *j = arg;
    struct strbuf body = STRBUF_INIT;
    struct wire w;

    if (wire_init(&w, j->api, META_ACCEPT) < 0 || wire_open(&w) < 0) {
        atomic_fetch_add(&j->errors, 1);
        goto out;
    }
    for (;;) {
        size_t i = atomic_fetch_add(&j->next, 1);
        char name[96];
        int r;
        if (i >= j->n || atomic_load(&j->errors))
            break;
        object_name(j->prefix, j->single, i, name, sizeof(name));
        sbench_bytes_render(&j->tpls[i % j->ntpls], name, &body);
        if (j->sent_ns)
            j->sent_ns[i] = now_ns();
        r = wire_do(&w, "POST", j->path, body.buf, body.len);
        if (r < 0 || w.status != 201) {
            if (atomic_fetch_add(&j->errors, 1) == 0 && r == 0)
                (void)fprintf(stderr, "bench_scheduler: POST %s %s: HTTP %ld: %.300s\n", j->path,
                              name, w.status, w.body.buf);
            break;
        }
    }
out:
    wire_release(&w);
    strbuf_release(&body);
    return NULL;
}

/* Creates j->n objects from opt.clients threads; < 0 when one failed. */
static int create_all(struct create_job *j)
{
    size_t nth = opt.clients < j->n ? opt.clients : (j->n ? j->n : 1);
    pthread_t *th = xcalloc(nth, sizeof(*th));

    for (size_t i = 0; i < nth; i++)
        CHECK(pthread_create(&th[i], NULL, create_worker, j) == 0);
    for (size_t i = 0; i < nth; i++)
        CHECK(pthread_join(th[i], NULL) == 0);
    free(th);
    return atomic_load(&j->errors) ? -EIO : 0;
}

/* ---- the watch of a namespace's pods: when each is seen bound ---- */

struct pod_watch {
    const struct server *api;
    const char *ns, *prefix;
    size_t n;
    uint64_t *bound_ns; /* per pod: when first seen with spec.nodeName; 0 not yet */
    atomic_size_t bound;
    atomic_bool stop;
    atomic_int errors;
    pthread_t th;
    bool running;
    struct strbuf line;
    char rv[32]; /* the last resourceVersion seen: a broken watch resumes from it */
};

static const char *find(const char *hay, size_t n, const char *needle)
{
    return memmem(hay, n, needle, strlen(needle));
}

/* A string value starting at p (after its opening quote), copied into buf; false when it does
 * not fit or does not end in the line. */
static bool copy_value(const char *p, const char *end, char *buf, size_t size)
{
    const char *q = memchr(p, '"', (size_t)(end - p));

    if (!q || (size_t)(q - p) >= size)
        return false;
    memcpy(buf, p, (size_t)(q - p));
    buf[q - p] = '\0';
    return true;
}

/* One watch event, read without a parse: the members it needs have unique keys in a pod. */
static void watch_event(struct pod_watch *w, const char *line, size_t len, uint64_t at)
{
    static const char kname[] = "\"name\":\"", knode[] = "\"nodeName\":\"",
                      krv[] = "\"resourceVersion\":\"";
    const char *end = line + len, *meta = find(line, len, "\"metadata\":{"), *p;
    char name[128];
    int64_t idx;

    if (find(line, len > 40 ? 40 : len, "\"type\":\"ERROR\"")) {
        (void)fprintf(stderr, "bench_scheduler: watch of %s: %.300s\n", w->ns, line);
        atomic_fetch_add(&w->errors, 1);
        return;
    }
    if (!meta)
        return;
    if ((p = find(meta, (size_t)(end - meta), krv)))
        (void)copy_value(p + strlen(krv), end, w->rv, sizeof(w->rv));
    if (find(line, len > 40 ? 40 : len, "\"type\":\"DELETED\"") ||
        find(line, len > 40 ? 40 : len, "\"type\":\"BOOKMARK\""))
        return;
    p = find(line, len, knode);
    if (!p || p[strlen(knode)] == '"')
        return;
    p = find(meta, (size_t)(end - meta), kname);
    if (!p || !copy_value(p + strlen(kname), end, name, sizeof(name)) ||
        strncmp(name, w->prefix, strlen(w->prefix)) ||
        parse_i64(name + strlen(w->prefix), &idx) < 0 || idx < 0 || (size_t)idx >= w->n)
        return;
    if (!w->bound_ns[idx]) {
        w->bound_ns[idx] = at;
        atomic_fetch_add(&w->bound, 1);
    }
}

static bool on_watch_data(void *ud, const char *data, size_t len)
{
    struct pod_watch *w = ud;
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
        watch_event(w, line, n, at);
        strbuf_reset(&w->line);
        len -= (size_t)(nl - data) + 1;
        data = nl + 1;
    }
    strbuf_add(&w->line, data, len);
    return w->line.len <= (16u << 20);
}

static bool watch_should_stop(void *ud)
{
    struct pod_watch *w = ud;
    return atomic_load(&w->stop);
}

static void *watch_thread(void *arg)
{
    struct pod_watch *w = arg;
    struct strbuf path = STRBUF_INIT;
    struct conn c;
    int resumed = 0;

    conn_init(&c, w->api);
    while (!atomic_load(&w->stop)) {
        int rc;
        strbuf_reset(&path);
        strbuf_addf(&path, "/api/v1/namespaces/%s/pods?watch=1&resourceVersion=%s", w->ns, w->rv);
        strbuf_reset(&w->line);
        rc = conn_stream(&c, "GET", path.buf, NULL, 0, on_watch_data, watch_should_stop, w);
        if (atomic_load(&w->stop))
            break;
        if (++resumed > 20) {
            bench_fail("watch", "the watch of %s ended 20 times (last: %s)", w->ns,
                       curl_easy_strerror((CURLcode)rc));
            atomic_fetch_add(&w->errors, 1);
            break;
        }
        (void)usleep(100000);
    }
    conn_release(&c);
    strbuf_release(&path);
    return NULL;
}

/* Lists the namespace (empty so far) for a resourceVersion and watches from it. */
static int watch_start(struct pod_watch *w, const struct server *api, const char *ns,
                       const char *prefix, size_t n)
{
    struct strbuf path = STRBUF_INIT;
    cJSON *list = NULL;
    const char *rv;
    struct conn c;
    int r;

    memset(w, 0, sizeof(*w));
    w->api = api;
    w->ns = ns;
    w->prefix = prefix;
    w->n = n;
    w->bound_ns = xcalloc(n ? n : 1, sizeof(*w->bound_ns));
    strbuf_init(&w->line);
    conn_init(&c, api);
    strbuf_addf(&path, "/api/v1/namespaces/%s/pods", ns);
    r = conn_expect(&c, "GET", path.buf, NULL, 0, 200);
    if (r == 0) {
        list = cJSON_ParseWithLength(c.body.buf, c.body.len);
        rv = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(list, "metadata"), "resourceVersion"));
        if (rv && strlen(rv) < sizeof(w->rv))
            (void)snprintf(w->rv, sizeof(w->rv), "%s", rv);
        else
            r = -EIO;
    }
    cJSON_Delete(list);
    conn_release(&c);
    strbuf_release(&path);
    if (r < 0) {
        bench_fail("watch", "cannot list the pods of %s", ns);
        return r;
    }
    CHECK(pthread_create(&w->th, NULL, watch_thread, w) == 0);
    w->running = true;
    return 0;
}

static void watch_stop(struct pod_watch *w)
{
    if (w->running) {
        atomic_store(&w->stop, true);
        CHECK(pthread_join(w->th, NULL) == 0);
        w->running = false;
    }
}

static void watch_release(struct pod_watch *w)
{
    watch_stop(w);
    free(w->bound_ns);
    w->bound_ns = NULL;
    strbuf_release(&w->line);
}

/* Waits until every pod of w is seen bound; < 0 after bench_fail() when none was for
 * STALL_SECONDS, the watch broke, or the scheduler exited. */
static int wait_bound(struct pod_watch *w, const struct server *sch, const char *what)
{
    size_t last = atomic_load(&w->bound);
    double progress = now_s();

    for (;;) {
        size_t b = atomic_load(&w->bound);
        if (b >= w->n)
            return 0;
        if (atomic_load(&w->errors)) {
            bench_fail(what, "the watch of %s failed with %zu of %zu pods bound", w->ns, b, w->n);
            return -EIO;
        }
        if (b != last) {
            last = b;
            progress = now_s();
        } else if (now_s() - progress > STALL_SECONDS) {
            bench_fail(what, "%zu of %zu pods of %s bound, none for %d s", b, w->n, w->ns,
                       STALL_SECONDS);
            return -ETIMEDOUT;
        } else if (!alive(sch)) {
            bench_fail(what, "the scheduler exited with %zu of %zu pods of %s bound", b, w->n,
                       w->ns);
            server_print_log(sch);
            return -ECHILD;
        }
        (void)usleep(2000);
    }
}

/* ---- deleting pods (SchedulingWhileGated) ---- */

struct deleter {
    const struct server *api;
    const char *ns, *prefix;
    size_t n, deleted;
    atomic_bool stop;
    atomic_int errors;
    pthread_t th;
    bool running;
};

/* Deletes the pods at DELETE_RATE per second, on schedule, until all are gone or stopped. */
static void *delete_thread(void *arg)
{
    struct deleter *d = arg;
    struct strbuf path = STRBUF_INIT;
    uint64_t t0 = now_ns();
    struct wire w;

    if (wire_init(&w, d->api, META_ACCEPT) < 0) {
        atomic_fetch_add(&d->errors, 1);
        goto out;
    }
    for (size_t k = 0; k < d->n && !atomic_load(&d->stop); k++) {
        uint64_t due = t0 + k * (1000000000u / DELETE_RATE);
        int r;
        /* in steps of at most 50 ms, so that a stop is not kept waiting */
        while (now_ns() < due && !atomic_load(&d->stop))
            sleep_until_ns(due < now_ns() + 50000000u ? due : now_ns() + 50000000u);
        if (atomic_load(&d->stop))
            break;
        strbuf_reset(&path);
        strbuf_addf(&path, "/api/v1/namespaces/%s/pods/%s%06zu", d->ns, d->prefix, k);
        r = wire_do(&w, "DELETE", path.buf, "", 0);
        if (r < 0 || (w.status != 200 && w.status != 202)) {
            if (atomic_fetch_add(&d->errors, 1) == 0 && r == 0)
                (void)fprintf(stderr, "bench_scheduler: DELETE %s: HTTP %ld: %.300s\n", path.buf,
                              w.status, w.body.buf);
            break;
        }
        d->deleted++;
    }
out:
    wire_release(&w);
    strbuf_release(&path);
    return NULL;
}

/* ---- perf ---- */

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
        (void)printf("perf: recorded the scheduler during the measured pods in %s (perf report "
                     "-i %s)\n",
                     opt.perf, opt.perf);
    else
        (void)printf("perf: perf record failed (status %d)\n", st);
}

/* ---- one workload ---- */

static int post(const struct server *api, const char *path, const char *body)
{
    struct conn c;
    int r;

    conn_init(&c, api);
    r = conn_expect(&c, "POST", path, body, strlen(body), 201);
    conn_release(&c);
    return r;
}

static int create_nodes(const struct workload *w, const struct counts *n, struct server *api)
{
    struct sbench_bytes tpls[4];
    size_t ntpls = 0;
    struct create_job j = {.api = api, .path = "/api/v1/nodes", .n = n->nodes};
    double t0 = now_s();
    int r;

    if (w->zones) {
        for (; w->zones[ntpls]; ntpls++)
            sbench_bytes_init(&tpls[ntpls], w->node_tpl, w->zones[ntpls]);
    } else {
        sbench_bytes_init(&tpls[ntpls++], w->node_tpl, NULL);
    }
    j.tpls = tpls;
    j.ntpls = ntpls;
    j.single = w->fixed_nodes;
    j.prefix = w->fixed_nodes ? "scheduler-perf-node" : "scheduler-perf-";
    r = create_all(&j);
    for (size_t i = 0; i < ntpls; i++)
        sbench_bytes_release(&tpls[i]);
    if (r == 0)
        (void)printf("  %zu nodes in %.1f s\n", n->nodes, now_s() - t0);
    return r;
}

/* Creates n pods of tpl in ns named prefix + index, with their send times in sent_ns (may be
 * NULL; written by the creating threads, which tidy does not follow). */
static int create_pods(const struct server *api, const char *ns, const char *prefix,
                       enum sbench_tpl tpl, size_t n,
                       uint64_t *sent_ns) // NOLINT(readability-non-const-parameter)
{
    struct sbench_bytes b;
    struct strbuf path = STRBUF_INIT;
    struct create_job j = {.api = api, .n = n, .prefix = prefix, .sent_ns = sent_ns, .ntpls = 1};
    int r;

    sbench_bytes_init(&b, tpl, NULL);
    strbuf_addf(&path, "/api/v1/namespaces/%s/pods", ns);
    j.path = path.buf;
    j.tpls = &b;
    r = create_all(&j);
    sbench_bytes_release(&b);
    strbuf_release(&path);
    return r;
}

/* Creates pods and waits until the scheduler has bound them all. */
static int pods_bound(const struct server *api, const struct server *sch, const char *ns,
                      const char *prefix, enum sbench_tpl tpl, size_t n, const char *what)
{
    struct pod_watch w;
    double t0 = now_s();
    int r;

    if (!n)
        return 0;
    if ((r = watch_start(&w, api, ns, prefix, n)) < 0)
        return r;
    r = create_pods(api, ns, prefix, tpl, n, NULL);
    if (r < 0)
        bench_fail(what, "creating %zu pods in %s failed", n, ns);
    else
        r = wait_bound(&w, sch, what);
    if (r == 0)
        (void)printf("  %zu %s pods bound in %.1f s\n", n, what, now_s() - t0);
    watch_release(&w);
    return r;
}

/* The gated pods are in the scheduler's queue (upstream's barrier): its gauge says so. */
static int gated_barrier(const struct server *sch, size_t n, struct strbuf *text)
{
    double deadline = now_s() + BARRIER_SECONDS, g = -1;

    while (now_s() < deadline) {
        if (scrape(sch, text) == 0 &&
            (g = metric_sum(text->buf, "scheduler_pending_pods", "queue=\"gated\"")) >= (double)n)
            return 0;
        (void)usleep(50000);
    }
    bench_fail("gated", "scheduler_pending_pods{queue=\"gated\"} is %.0f after %d s, want %zu", g,
               BARRIER_SECONDS, n);
    return -ETIMEDOUT;
}

static int write_config(const struct server *api, char **ret_path)
{
    static const char text[] = "{\"apiVersion\":\"kubescheduler.config.k8s.io/"
                               "v1\",\"kind\":\"KubeSchedulerConfiguration\","
                               "\"leaderElection\":{\"leaderElect\":false},"
                               "\"clientConnection\":{\"qps\":5000,\"burst\":5000},"
                               "\"profiles\":[{\"schedulerName\":\"default-scheduler\"}]}\n";
    struct strbuf p = STRBUF_INIT;
    FILE *f;
    int r = 0;

    /* upstream's harness: client QPS and burst 5000 (reference 9.1), the default profile */
    strbuf_addf(&p, "%s/scheduler-config.json", api->dir);
    if (!(f = fopen(p.buf, "we")) || fputs(text, f) < 0)
        r = -EIO;
    if (f && fclose(f) != 0)
        r = -EIO;
    if (r < 0) {
        bench_fail("scheduler", "cannot write %s", p.buf);
        strbuf_release(&p);
        return r;
    }
    *ret_path = strbuf_detach(&p, NULL);
    return 0;
}

static bool perf_done; /* --perf records the first workload only */

/* The measured pods: created while watched, sampled, timed. */
static int measure(const struct workload *w, const struct counts *n, struct server *api,
                   struct server *sch, struct result *res)
{
    uint64_t *sent = xcalloc(n->measured ? n->measured : 1, sizeof(*sent));
    double cpu_s0, cpu_a0, cpu_c0, all0, *lat = NULL;
    uint64_t first = UINT64_MAX, last = 0;
    struct sbench_tput tput;
    struct pod_watch pw;
    size_t nlat = 0;
    pid_t perf = 0;
    int r;

    if ((r = watch_start(&pw, api, "sched-1", "pod-", n->measured)) < 0) {
        free(sent);
        return r;
    }
    if (opt.perf && !perf_done) {
        perf_done = true;
        perf = perf_start(sch->pid, opt.perf);
    }
    cpu_s0 = server_cpu(sch);
    cpu_a0 = server_cpu(api);
    cpu_c0 = bench_self_cpu();
    all0 = bench_machine_cpu();
    sbench_tput_start(&tput, &pw.bound);
    r = create_pods(api, "sched-1", "pod-", w->measured_tpl, n->measured, sent);
    if (r < 0)
        bench_fail(w->name, "creating the measured pods failed");
    else
        r = wait_bound(&pw, sch, w->name);
    sbench_tput_stop(&tput, &res->tput);
    res->sched_cpu = server_cpu(sch) - cpu_s0;
    res->api_cpu = server_cpu(api) - cpu_a0;
    res->cli_cpu = bench_self_cpu() - cpu_c0;
    res->other_cpu = bench_machine_cpu() - all0 - res->sched_cpu - res->api_cpu - res->cli_cpu;
    if (res->other_cpu < 0)
        res->other_cpu = 0;
    perf_stop(perf);
    watch_stop(&pw);
    lat = xcalloc(n->measured ? n->measured : 1, sizeof(*lat));
    for (size_t i = 0; i < n->measured; i++) {
        if (!pw.bound_ns[i] || !sent[i])
            continue;
        if (sent[i] < first)
            first = sent[i];
        if (pw.bound_ns[i] > last)
            last = pw.bound_ns[i];
        lat[nlat++] = pw.bound_ns[i] > sent[i] ? (double)(pw.bound_ns[i] - sent[i]) / 1e6 : 0;
    }
    sbench_sort(lat, nlat);
    res->lat_p50 = sbench_perc(lat, nlat, 50);
    res->lat_p90 = sbench_perc(lat, nlat, 90);
    res->lat_p99 = sbench_perc(lat, nlat, 99);
    res->wall_s = last > first ? (double)(last - first) / 1e9 : 0;
    free(lat);
    free(sent);
    watch_release(&pw);
    return r;
}

/* The checks on the scheduler's own counts, from its /metrics. */
static int check_metrics(const struct workload *w, const struct counts *n, struct server *sch,
                         struct result *res)
{
    struct strbuf text = STRBUF_INIT;
    int r = 0;

    if (scrape(sch, &text) < 0) {
        bench_fail(w->name, "the scheduler's /metrics did not answer");
        strbuf_release(&text);
        return -EIO;
    }
    res->attempts = metric_sum(text.buf, "scheduler_schedule_attempts_total", NULL);
    res->gated_gauge = metric_sum(text.buf, "scheduler_pending_pods", "queue=\"gated\"");
    res->att_unsched =
        metric_sum(text.buf, "scheduler_schedule_attempts_total", "result=\"unschedulable\"");
    res->att_error = metric_sum(text.buf, "scheduler_schedule_attempts_total", "result=\"error\"");
    res->preemptions = metric_sum(text.buf, "scheduler_preemption_attempts_total", NULL);
    if (n->gated) {
        /* Each light pod fits the one node at its first attempt: any other attempt was a gated
         * pod's, which PreEnqueue must keep out of the active queue. */
        double want = (double)(n->deleting + n->measured + n->init);
        if (res->gated_gauge != (double)n->gated) {
            bench_fail(w->name, "scheduler_pending_pods{queue=\"gated\"} is %.0f, want %zu",
                       res->gated_gauge, n->gated);
            r = -EIO;
        }
        if (res->attempts != want) {
            bench_fail(w->name,
                       "scheduler_schedule_attempts_total is %.0f, want %.0f (gated pods "
                       "attempted?)",
                       res->attempts, want);
            r = -EIO;
        }
    }
    strbuf_release(&text);
    return r;
}

static void run_workload(const struct workload *w, struct result *res)
{
    static const char *const namespaces[] = {"sched-0", "sched-1", "sched-gated", "sched-deleting"};
    struct server api = {0}, sch = {0};
    struct deleter del = {0};
    struct strbuf text = STRBUF_INIT;
    struct counts n = counts_of(w);
    char *config = NULL;
    double t0 = now_s();
    int64_t hwm;
    int r;

    res->w = w;
    res->n = n;
    res->ran = true;
    (void)printf("\n== %s/%s: %zu nodes, %zu init pods, %zu measured pods", w->name, w->variant,
                 n.nodes, n.init, n.measured);
    if (n.gated)
        (void)printf(", %zu gated, %zu deleted at %d/s", n.gated, n.deleting, DELETE_RATE);
    (void)printf("\n");
    (void)fflush(stdout);
    if (server_start_koord(&api, opt.koord, NULL, SERVER_AUTH_CERT) < 0) {
        bench_fail(w->name, "the API server did not start");
        goto out;
    }
    for (size_t i = 0; i < ARRAY_SIZE(namespaces); i++) {
        struct strbuf body = STRBUF_INIT;
        strbuf_addf(&body,
                    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":"
                    "\"%s\"}}",
                    namespaces[i]);
        r = post(&api, "/api/v1/namespaces", body.buf);
        strbuf_release(&body);
        if (r < 0) {
            bench_fail(w->name, "creating namespace %s failed", namespaces[i]);
            goto out;
        }
    }
    if (w->priority &&
        post(&api, "/apis/scheduling.k8s.io/v1/priorityclasses",
             "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\",\"metadata\":"
             "{\"name\":\"" SBENCH_HIGH_CLASS "\"},\"value\":10}") < 0) {
        bench_fail(w->name, "creating the PriorityClass failed");
        goto out;
    }
    if (create_nodes(w, &n, &api) < 0) {
        bench_fail(w->name, "creating nodes failed");
        goto out;
    }
    if (write_config(&api, &config) < 0)
        goto out;
    if (server_start_scheduler(&sch, opt.koord, &api, config) < 0) {
        bench_fail(w->name, "the scheduler did not start");
        goto out;
    }
    if (n.gated) {
        double tg = now_s();
        if (create_pods(&api, "sched-gated", "gated-pod-", SBENCH_POD_GATED, n.gated, NULL) < 0) {
            bench_fail(w->name, "creating the gated pods failed");
            goto out;
        }
        if (gated_barrier(&sch, n.gated, &text) < 0)
            goto out;
        (void)printf("  %zu gated pods queued in %.1f s\n", n.gated, now_s() - tg);
    }
    if (n.deleting) {
        if (pods_bound(&api, &sch, "sched-deleting", "light-pod-", SBENCH_POD_LIGHT, n.deleting,
                       "deleting") < 0)
            goto out;
        del = (struct deleter){
            .api = &api, .ns = "sched-deleting", .prefix = "light-pod-", .n = n.deleting};
        CHECK(pthread_create(&del.th, NULL, delete_thread, &del) == 0);
        del.running = true;
    }
    if (n.init && w->init_nowait) {
        if (create_pods(&api, "sched-0", "init-pod-", w->init_tpl, n.init, NULL) < 0) {
            bench_fail(w->name, "creating the init pods failed");
            goto out;
        }
        (void)printf("  %zu init pods created (they fit no node)\n", n.init);
    } else if (pods_bound(&api, &sch, "sched-0", "init-pod-", w->init_tpl, n.init, "init") < 0) {
        goto out;
    }
    res->setup_s = now_s() - t0;
    (void)printf("  measuring %zu pods ...\n", n.measured);
    (void)fflush(stdout);
    if (measure(w, &n, &api, &sch, res) < 0)
        goto out;
    if (del.running) {
        atomic_store(&del.stop, true);
        CHECK(pthread_join(del.th, NULL) == 0);
        del.running = false;
        if (atomic_load(&del.errors)) {
            bench_fail(w->name, "deleting the light pods failed");
            goto out;
        }
        (void)printf("  %zu light pods deleted meanwhile\n", del.deleted);
    }
    hwm = status_kb(sch.pid, "VmHWM");
    res->rss_mb = hwm > 0 ? (double)hwm * 1024 / 1e6 : 0;
    if (check_metrics(w, &n, &sch, res) < 0)
        goto out;
    res->ok = true;
out:
    if (del.running) {
        atomic_store(&del.stop, true);
        CHECK(pthread_join(del.th, NULL) == 0);
    }
    server_stop(&sch);
    server_stop(&api);
    free(config);
    strbuf_release(&text);
}

/* ---- output ---- */

static double per_pod_us(const struct result *r)
{
    return r->n.measured ? 1e6 * r->sched_cpu / (double)r->n.measured : 0;
}

static void print_result(const struct result *r)
{
    const struct sbench_tput_summary *t = &r->tput;

    (void)printf("  throughput (pods/s): Average %.1f  Perc50 %.1f  Perc90 %.1f  Perc95 %.1f  "
                 "Perc99 %.1f  (%zu samples; %zu pods in %.2f s = %.1f/s overall)\n",
                 t->avg, t->p50, t->p90, t->p95, t->p99, t->samples, r->n.measured, r->wall_s,
                 r->wall_s > 0 ? (double)r->n.measured / r->wall_s : 0);
    (void)printf("  latency create -> bound: p50 %.1f ms  p90 %.1f ms  p99 %.1f ms\n", r->lat_p50,
                 r->lat_p90, r->lat_p99);
    (void)printf("  scheduler: CPU %.2f s (%.0f us per pod), peak RSS %.1f MB; apiserver CPU "
                 "%.2f s; client CPU %.2f s; other %.2f s\n",
                 r->sched_cpu, per_pod_us(r), r->rss_mb, r->api_cpu, r->cli_cpu, r->other_cpu);
    (void)printf("  attempts %.0f (unschedulable %.0f, error %.0f), preemption attempts %.0f "
                 "(the scheduler's counters, init pods included)\n",
                 r->attempts, r->att_unsched > 0 ? r->att_unsched : 0,
                 r->att_error > 0 ? r->att_error : 0, r->preemptions > 0 ? r->preemptions : 0);
    (void)printf("  upstream floor %.0f pods/s: Average/floor = %.2f\n", r->w->floor,
                 r->w->floor > 0 ? t->avg / r->w->floor : 0);
    (void)fflush(stdout);
}

static void print_cycle(const struct sbench_cycle_result *c)
{
    (void)printf("  cycle alone: %zu pods in %.2f s = %.0f pods/s (fed to the queue in %.3f s); "
                 "CPU %.2f s (%.0f us per pod)\n",
                 c->measured, c->wall_s, c->pods_per_s, c->feed_s, c->cpu_s,
                 c->measured ? 1e6 * c->cpu_s / (double)c->measured : 0);
    if (c->tput.samples)
        (void)printf("  collector: Average %.0f  Perc50 %.0f  Perc90 %.0f  Perc99 %.0f (%zu "
                     "samples)\n",
                     c->tput.avg, c->tput.p50, c->tput.p90, c->tput.p99, c->tput.samples);
    else
        (void)printf("  collector: no sample (the run took under 2 s: the first second's sample "
                     "is discarded)\n");
    (void)fflush(stdout);
}

static double start_load;

static void summary(const struct result *res, const struct sbench_cycle_result *cyc)
{
    const struct result *basic = &res[W_BASIC], *gated = &res[W_GATED];
    double load = 0;

    (void)getloadavg(&load, 1);
    (void)printf("\nbench/scheduler: %ld CPUs, load %.2f before the run, %.2f after; %zu client "
                 "threads%s\n",
                 sysconf(_SC_NPROCESSORS_ONLN), start_load, load, opt.clients,
                 opt.smoke ? "; --smoke: counts checked, timings meaningless" : "");
    (void)printf("| workload | nodes/init/measured | Average | Perc50 | Perc90 | Perc99 | floor | "
                 "Average/floor | latency p50/p99 ms | scheduler CPU s (us/pod) | RSS MB | "
                 "apiserver CPU s |\n");
    for (int i = 0; i < W_COUNT; i++) {
        const struct result *r = &res[i];
        if (!r->ran)
            continue;
        if (!r->ok) {
            (void)printf("| %s/%s | %zu/%zu/%zu | FAILED |\n", r->w->name, r->w->variant,
                         r->n.nodes, r->n.init, r->n.measured);
            continue;
        }
        (void)printf("| %s/%s | %zu/%zu/%zu | %.1f | %.1f | %.1f | %.1f | %.0f | %.2f | %.0f/%.0f "
                     "| %.2f (%.0f) | %.1f | %.2f |\n",
                     r->w->name, r->w->variant, r->n.nodes, r->n.init, r->n.measured, r->tput.avg,
                     r->tput.p50, r->tput.p90, r->tput.p99, r->w->floor, r->tput.avg / r->w->floor,
                     r->lat_p50, r->lat_p99, r->sched_cpu, per_pod_us(r), r->rss_mb, r->api_cpu);
    }
    if (cyc->ran && cyc->ok)
        (void)printf("| cycle alone (SchedulingBasic in process) | %zu/%zu/%zu | %.0f (overall) | "
                     "| | | | | | %.2f (%.0f) | | |\n",
                     cyc->nodes, cyc->init, cyc->measured, cyc->pods_per_s, cyc->cpu_s,
                     cyc->measured ? 1e6 * cyc->cpu_s / (double)cyc->measured : 0);
    if (opt.smoke)
        return; /* tiny counts: the targets say nothing */
    if (basic->ran && basic->ok)
        (void)printf("target SchedulingBasic end to end >= %.0f pods/s: %.1f (%s)\n", TARGET_E2E,
                     basic->tput.avg, basic->tput.avg >= TARGET_E2E ? "met" : "MISSED");
    if (cyc->ran && cyc->ok)
        (void)printf("target cycle alone >= %.0f pods/s: %.0f (%s)\n", TARGET_CYCLE,
                     cyc->pods_per_s, cyc->pods_per_s >= TARGET_CYCLE ? "met" : "MISSED");
    if (basic->ran && basic->ok && cyc->ran && cyc->ok && cyc->pods_per_s > 0 &&
        basic->wall_s > 0 && cyc->measured) {
        double e2e = (double)basic->n.measured / basic->wall_s;
        double cyc_us = 1e6 * cyc->cpu_s / (double)cyc->measured;
        (void)printf("  a pod takes %.1fx as long end to end (%.0f pods/s overall) as in the cycle "
                     "alone; the scheduler's CPU per pod is %.0f us end to end, %.0f us in the "
                     "cycle alone: %.0f us (%.0f%%) go to its API work (watches, binding and "
                     "event writes)\n",
                     cyc->pods_per_s / e2e, e2e, per_pod_us(basic), cyc_us,
                     per_pod_us(basic) - cyc_us,
                     per_pod_us(basic) > 0 ? 100 * (1 - cyc_us / per_pod_us(basic)) : 0);
    }
    if (basic->ran && basic->ok)
        (void)printf("target scheduler peak RSS < %.0f MB at %zu nodes and %zu pods: %.1f MB "
                     "(%s)\n",
                     TARGET_RSS_MB, basic->n.nodes, basic->n.init + basic->n.measured,
                     basic->rss_mb, basic->rss_mb < TARGET_RSS_MB ? "met" : "MISSED");
    if (basic->ran && basic->ok && gated->ran && gated->ok && per_pod_us(basic) > 0) {
        double ratio = per_pod_us(gated) / per_pod_us(basic);
        (void)printf("target SchedulingWhileGated's scheduler CPU per pod within 5%% of "
                     "SchedulingBasic's: %.0f / %.0f us = %.2f (%s); throughput %.1f / %.1f "
                     "pods/s\n",
                     per_pod_us(gated), per_pod_us(basic), ratio,
                     ratio <= TARGET_GATED ? "met" : "MISSED", gated->tput.avg, basic->tput.avg);
    }
}

/* ---- main ---- */

static int select_workload(const char *name)
{
    if (!strcasecmp(name, "cycle")) {
        opt.cycle = true;
        opt.any = true;
        return 0;
    }
    for (int i = 0; i < W_COUNT; i++) {
        if (!strcasecmp(name, workloads[i].name)) {
            opt.run[i] = true;
            opt.any = true;
            return 0;
        }
    }
    (void)fprintf(stderr, "bench_scheduler: unknown workload \"%s\"\n", name);
    return -EINVAL;
}

static int parse_opts(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"workload", required_argument, NULL, 'w'}, {"nodes", required_argument, NULL, 'n'},
        {"pods", required_argument, NULL, 'p'},     {"clients", required_argument, NULL, 'c'},
        {"koord", required_argument, NULL, 'K'},    {"perf", required_argument, NULL, 'P'},
        {"keep-going", no_argument, NULL, 'k'},     {"smoke", no_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    int ch, r = 0;

    while (r == 0 && (ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'w':
            r = select_workload(optarg);
            break;
        case 'n':
            r = bench_parse_size(optarg, 1, 100000, &opt.nodes);
            break;
        case 'p':
            r = bench_parse_size(optarg, 1, 1000000, &opt.pods);
            break;
        case 'c':
            r = bench_parse_size(optarg, 1, 256, &opt.clients);
            break;
        case 'K':
            opt.koord = optarg;
            break;
        case 'P':
            opt.perf = optarg;
            break;
        case 'k':
            opt.keep_going = true;
            break;
        case 'S':
            opt.smoke = true;
            break;
        case 'h':
            (void)fputs(usage, stdout);
            exit(0);
        default:
            r = -EINVAL;
        }
    }
    if (r < 0 || optind != argc) {
        (void)fputs(usage, stderr);
        return -EINVAL;
    }
    if (!opt.any) {
        for (int i = 0; i < W_COUNT; i++)
            opt.run[i] = true;
        opt.cycle = true;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct result res[W_COUNT] = {0};
    struct sbench_cycle_result cyc = {0};
    bool failed = false;

    if (parse_opts(argc, argv) < 0)
        return 2;
    (void)getloadavg(&start_load, 1);
    bench_catch_signals();
    codec_init();
    CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == 0);
    for (int i = 0; i < W_COUNT && !failed; i++) {
        if (!opt.run[i])
            continue;
        run_workload(&workloads[i], &res[i]);
        if (res[i].ok)
            print_result(&res[i]);
        else if (!opt.keep_going)
            failed = true;
    }
    if (opt.cycle && !failed) {
        struct counts n = counts_of(&workloads[W_BASIC]);
        (void)printf("\n== cycle alone: SchedulingBasic in this process\n");
        if (sbench_cycle_run(n.nodes, n.init, n.measured, &cyc) == 0)
            print_cycle(&cyc);
    }
    summary(res, &cyc);
    curl_global_cleanup();
    bench_release_signals();
    if (bench_failures())
        (void)fprintf(stderr, "bench_scheduler: %d failure(s)\n", bench_failures());
    return bench_failures() ? 1 : 0;
}
