/*
 * bench/scheduler: scheduler_perf's workloads (reference scheduler.md 9) against `koord
 * scheduler`, as in a cluster: `koord apiserver` and `koord scheduler` run as separate
 * processes started here, Nodes are API objects only (status with capacity and allocatable, a
 * Ready condition; no kubelet, as upstream's harness), pods are created through the API by
 * several client threads and bound by the scheduler through the binding subresource. Each
 * workload gets a fresh API server and scheduler:
 *
 *   SchedulingBasic/5000Nodes_10000Pods      5000 nodes, 1000 init pod-default, 10000 measured
 *   KoordinatorProfile/5000Nodes_10000Pods   SchedulingBasic's counts, the profile of
 *                                            examples/scheduler/koord-scheduler-config.yaml
 *                                            (LoadAwareScheduling, Reservation, ElasticQuota,
 *                                            ScheduleAdmission); a fresh slo.koordinator.sh
 *                                            NodeMetric per node, 100 Reservations made
 *                                            Available first (no pod owns them), a tree of 50
 *                                            ElasticQuotas; measured pods spread over the 45
 *                                            leaf quotas' namespaces
 *   QuotaWaiting/5000Nodes_10000Pods_10000Waiting  SchedulingBasic with ScheduleAdmission and
 *                                            ElasticQuota (the sample's, nothing else), while
 *                                            10000 pods of a full quota wait gated
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
 * measured pod never bound, a gated pod or a pod of the full quota attempted, a Reservation not
 * Available, a pod refused before it fit, quota usage not written back; timings never do.
 * --smoke runs tiny counts of every workload so `make test` keeps this program working.
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

#include "api/quantity.h"
#include "api/rfc3339.h"
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

/* The pause container of upstream's templates. */
#define PAUSE_JSON "\"image\":\"registry.k8s.io/pause:3.10\",\"name\":\"pause\""

/* What the pod creates ask back: the metadata (the client reads only the status code). */
#define META_ACCEPT "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

static const char usage[] =
    "usage: bench_scheduler [--workload NAME]... [--nodes N] [--pods P] [--clients C]\n"
    "                       [--koord PATH] [--perf FILE] [--perf-apiserver FILE] [--keep-going]\n"
    "                       [--smoke]\n"
    "\n"
    "Runs scheduler_perf's workloads against `koord scheduler` and `koord apiserver` (started\n"
    "here, fresh for each workload): SchedulingBasic, KoordinatorProfile (SchedulingBasic\n"
    "with Koordinator's sample profile, NodeMetrics, Reservations, a quota tree),\n"
    "QuotaWaiting (SchedulingBasic while the pods of a full quota wait),\n"
    "SchedulingWhileGated, SchedulingPodAffinity, TopologySpreading, PreemptionBasic,\n"
    "Unschedulable, and the cycle alone in this process (`cycle`, SchedulingBasic's counts).\n"
    "Prints the throughput as scheduler_perf computes it (Average, Perc50/90/95/99) against\n"
    "upstream's floor, the latency from create to bound, the scheduler's CPU and peak RSS,\n"
    "the API server's CPU.\n"
    "  --workload NAME  a test case (case-insensitive; repeat for more; default all)\n"
    "  --nodes N        nodes of every workload but SchedulingWhileGated's one; init pods scale\n"
    "                   with it (Unschedulable keeps its 200)\n"
    "  --pods P         measured pods of every workload (QuotaWaiting's waiting pods and\n"
    "                   the Reservations keep their counts)\n"
    "  --waiting W      QuotaWaiting's pods waiting in the full quota (default 10000; 0: the\n"
    "                   same profile and quota without them, to tell the plugin's cost from\n"
    "                   the waiting pods')\n"
    "  --clients C      threads creating objects (default 8)\n"
    "  --perf FILE      `perf record` the scheduler during the first workload's measured pods\n"
    "  --perf-apiserver FILE  the same for the API server\n"
    "  --keep-going     run the next workloads after one failed\n"
    "  --smoke          tiny counts (50 nodes, 20 init, 100 measured, 10 Reservations, 50\n"
    "                   waiting); counts are checked, never times\n";

/* The scheduler's configuration of a workload. */
enum profile {
    PROFILE_DEFAULT, /* upstream's default plugins (a file's profile starts from them) */
    PROFILE_KOORD,   /* examples/scheduler/koord-scheduler-config.yaml's plugins and args */
    PROFILE_QUOTA,   /* the same without LoadAwareScheduling and Reservation */
};

struct workload {
    const char *name, *variant;
    double floor;             /* upstream's threshold: minimum Average pods/s; 0: none */
    const char *const *zones; /* node labels round-robin, NULL: none */
    size_t nodes, init, measured, gated, deleting, reservations, waiting;
    size_t s_nodes, s_init, s_measured, s_gated, s_deleting, s_reservations,
        s_waiting; /* --smoke */
    enum sbench_tpl node_tpl, init_tpl, measured_tpl;
    enum profile profile;
    bool init_nowait; /* init pods never fit (skipWaitToCompletion) */
    bool init_fixed;  /* init pods do not scale with --nodes */
    bool fixed_nodes; /* one named node, whatever --nodes says */
    bool priority;    /* the measured pods name SBENCH_HIGH_CLASS */
    bool koord;       /* NodeMetrics, the quota tree, Reservations; measured pods in the leaves */
};

static const char *const zone1[] = {"zone1", NULL};
static const char *const moons[] = {"moon-1", "moon-2", "moon-3", NULL};

enum { W_BASIC, W_KOORD, W_QUOTA, W_GATED, W_AFFINITY, W_SPREAD, W_PREEMPT, W_UNSCHED, W_COUNT };

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
    /* SchedulingBasic's counts with Koordinator's profile and the objects it reads: a
     * NodeMetric per node, the quota tree (QUOTA_PARENTS x QUOTA_LEAVES), Reservations */
    [W_KOORD] = {.name = "KoordinatorProfile",
                 .variant = "5000Nodes_10000Pods",
                 .nodes = 5000,
                 .init = 1000,
                 .measured = 10000,
                 .reservations = 100,
                 .s_nodes = 50,
                 .s_init = 20,
                 .s_measured = 100,
                 .s_reservations = 10,
                 .node_tpl = SBENCH_NODE_DEFAULT,
                 .init_tpl = SBENCH_POD_DEFAULT,
                 .measured_tpl = SBENCH_POD_DEFAULT,
                 .profile = PROFILE_KOORD,
                 .koord = true},
    /* SchedulingBasic while the pods of a full quota wait (ElasticQuota gates them) */
    [W_QUOTA] = {.name = "QuotaWaiting",
                 .variant = "5000Nodes_10000Pods_10000Waiting",
                 .nodes = 5000,
                 .init = 1000,
                 .measured = 10000,
                 .waiting = 10000,
                 .s_nodes = 50,
                 .s_init = 20,
                 .s_measured = 100,
                 .s_waiting = 50,
                 .node_tpl = SBENCH_NODE_DEFAULT,
                 .init_tpl = SBENCH_POD_DEFAULT,
                 .measured_tpl = SBENCH_POD_DEFAULT,
                 .profile = PROFILE_QUOTA},
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
    const char *koord, *perf, *perf_api;
    size_t clients, nodes, pods; /* nodes, pods: 0 = the workload's */
    size_t waiting;              /* QuotaWaiting's waiting pods, when waiting_set */
    bool waiting_set;
    bool smoke, keep_going, run[W_COUNT], cycle, any;
} opt = {.koord = KOORD_BINARY, .clients = 8};

/* A workload's counts after --smoke, --nodes and --pods. */
struct counts {
    size_t nodes, init, measured, gated, deleting, reservations, waiting;
};

static struct counts counts_of(const struct workload *w)
{
    struct counts c = {w->nodes,    w->init,         w->measured, w->gated,
                       w->deleting, w->reservations, w->waiting};

    if (opt.smoke)
        c = (struct counts){w->s_nodes,    w->s_init,         w->s_measured, w->s_gated,
                            w->s_deleting, w->s_reservations, w->s_waiting};
    if (opt.nodes && !w->fixed_nodes) {
        if (!w->init_fixed)
            c.init = (c.init * opt.nodes + c.nodes / 2) / c.nodes;
        c.nodes = opt.nodes;
    }
    if (opt.pods)
        c.measured = opt.pods;
    if (opt.waiting_set && w->waiting)
        c.waiting = opt.waiting;
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
    size_t resv_after, resv_owned; /* Reservations Available after the measured pods; owned */
    double nm_age_s, nm_expiry_s;  /* the NodeMetrics' age when the last pod bound; expiry */
    int64_t quota_used_m;          /* the leaf quotas' status.used cpu, summed (milli) */
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
    const char *path;         /* the collection, unless paths */
    const char *const *paths; /* object i goes to paths[i % npaths] when npaths */
    size_t npaths;
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
        const char *path;
        char name[96];
        int r;
        if (i >= j->n || atomic_load(&j->errors))
            break;
        object_name(j->prefix, j->single, i, name, sizeof(name));
        sbench_bytes_render(&j->tpls[i % j->ntpls], name, &body);
        if (j->sent_ns)
            j->sent_ns[i] = now_ns();
        path = j->npaths ? j->paths[i % j->npaths] : j->path;
        r = wire_do(&w, "POST", path, body.buf, body.len);
        if (r < 0 || w.status != 201) {
            if (atomic_fetch_add(&j->errors, 1) == 0 && r == 0)
                (void)fprintf(stderr, "bench_scheduler: POST %s %s: HTTP %ld: %.300s\n", path, name,
                              w.status, w.body.buf);
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
    const char *ns, *prefix; /* ns: a namespace, or "all namespaces" */
    char coll[128];          /* the pods' collection: of the namespace, or of all */
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
        strbuf_addf(&path, "%s?watch=1&resourceVersion=%s", w->coll, w->rv);
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

/* Lists the namespace (empty so far; NULL: every namespace, pods of other names may be
 * there) for a resourceVersion and watches from it. */
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
    w->ns = ns ? ns : "all namespaces";
    w->prefix = prefix;
    w->n = n;
    w->bound_ns = xcalloc(n ? n : 1, sizeof(*w->bound_ns));
    strbuf_init(&w->line);
    conn_init(&c, api);
    if (ns)
        (void)snprintf(w->coll, sizeof(w->coll), "/api/v1/namespaces/%s/pods", ns);
    else
        (void)snprintf(w->coll, sizeof(w->coll), "/api/v1/pods");
    /* a list with no items: only its resourceVersion is wanted */
    strbuf_addf(&path, "%s?limit=1", w->coll);
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

static void perf_stop(pid_t pid, const char *what, const char *out)
{
    int st = 0;

    if (pid <= 0)
        return;
    (void)kill(pid, SIGINT);
    (void)waitpid(pid, &st, 0);
    bench_child_stopped(pid);
    /* perf record writes its file on SIGINT and then dies of it. */
    if ((WIFEXITED(st) && WEXITSTATUS(st) == 0) || (WIFSIGNALED(st) && WTERMSIG(st) == SIGINT))
        (void)printf("perf: recorded the %s during the measured pods in %s (perf report "
                     "-i %s)\n",
                     what, out, out);
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

/* Creates n pods of tpl named prefix + index, pod i in namespace nss[i % nns], with their send
 * times in sent_ns (may be NULL; written by the creating threads, which tidy does not
 * follow). */
static int create_pods_in(const struct server *api, const char *const *nss, size_t nns,
                          const char *prefix, enum sbench_tpl tpl, size_t n,
                          uint64_t *sent_ns) // NOLINT(readability-non-const-parameter)
{
    struct sbench_bytes b;
    char **paths = xcalloc(nns, sizeof(*paths));
    struct create_job j = {.api = api,
                           .n = n,
                           .prefix = prefix,
                           .sent_ns = sent_ns,
                           .ntpls = 1,
                           .paths = (const char *const *)paths,
                           .npaths = nns};
    int r;

    sbench_bytes_init(&b, tpl, NULL);
    for (size_t i = 0; i < nns; i++) {
        struct strbuf path = STRBUF_INIT;
        strbuf_addf(&path, "/api/v1/namespaces/%s/pods", nss[i]);
        paths[i] = strbuf_detach(&path, NULL);
    }
    j.tpls = &b;
    r = create_all(&j);
    sbench_bytes_release(&b);
    for (size_t i = 0; i < nns; i++)
        free(paths[i]);
    free((void *)paths);
    return r;
}

/* create_pods_in() with one namespace. */
static int create_pods(const struct server *api, const char *ns, const char *prefix,
                       enum sbench_tpl tpl, size_t n,
                       uint64_t *sent_ns) // NOLINT(readability-non-const-parameter)
{
    return create_pods_in(api, &ns, 1, prefix, tpl, n, sent_ns);
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

/* ---- Koordinator's objects (KoordinatorProfile, QuotaWaiting) ---- */

#define QUOTA_PARENTS     ((size_t)5) /* is-parent quotas under the root ... */
#define QUOTA_LEAVES      ((size_t)9) /* ... with this many children each: 5 + 45 = 50 quotas */
#define QUOTA_PARENT_NS   "eq-parents"
#define FULL_QUOTA        "eq-full" /* QuotaWaiting's quota (and namespace): room for ... */
#define FULL_FILL         10        /* ... this many pod-default, placed before the waiting pods */
#define RESV_SECONDS      60        /* no Reservation turned Available for this long: failed */
#define QUOTA_SECONDS     10        /* the quotas' used written back within this */
#define NODEMETRICS       "/apis/slo.koordinator.sh/v1alpha1/nodemetrics"
#define RESERVATIONS      "/apis/scheduling.koordinator.sh/v1alpha1/reservations"
#define QUOTA_LABEL(name) "quota.scheduling.koordinator.sh/" name

static const char *const koord_crds[] = {"slo.koordinator.sh_nodemetrics.yaml",
                                         "scheduling.koordinator.sh_reservations.yaml",
                                         "scheduling.sigs.k8s.io_elasticquotas.yaml", NULL};

/* Leaf quota k of the tree (k < QUOTA_PARENTS * QUOTA_LEAVES): its name, also its namespace,
 * whose pods it is charged (a quota named like its namespace, reference manager-behaviour.md
 * 6.2). */
static void leaf_name(size_t k, char *buf, size_t size)
{
    (void)snprintf(buf, size, "eq-leaf-%zu-%zu", k / QUOTA_LEAVES, k % QUOTA_LEAVES);
}

static int create_namespace(const struct server *api, const char *name)
{
    struct strbuf body = STRBUF_INIT;
    int r;

    strbuf_addf(&body,
                "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}",
                name);
    r = post(api, "/api/v1/namespaces", body.buf);
    strbuf_release(&body);
    if (r < 0)
        bench_fail("namespaces", "creating namespace %s failed", name);
    return r;
}

/* fn(w, i) for i in [0, n) from opt.clients threads, each on its own connection. */
struct each_job {
    const struct server *api;
    size_t n;
    int (*fn)(struct wire *w, size_t i, void *ud, struct strbuf *scratch);
    void *ud;
    atomic_size_t next;
    atomic_int errors;
};

static void *each_worker(void *arg)
{
    struct each_job *j = arg;
    struct strbuf scratch = STRBUF_INIT;
    struct wire w;

    if (wire_init(&w, j->api, "application/json") < 0 || wire_open(&w) < 0) {
        atomic_fetch_add(&j->errors, 1);
        goto out;
    }
    for (;;) {
        size_t i = atomic_fetch_add(&j->next, 1);
        if (i >= j->n || atomic_load(&j->errors))
            break;
        if (j->fn(&w, i, j->ud, &scratch) < 0) {
            atomic_fetch_add(&j->errors, 1);
            break;
        }
    }
out:
    wire_release(&w);
    strbuf_release(&scratch);
    return NULL;
}

static int run_each(struct each_job *j)
{
    size_t nth = opt.clients < j->n ? opt.clients : (j->n ? j->n : 1);
    pthread_t *th = xcalloc(nth, sizeof(*th));

    for (size_t i = 0; i < nth; i++)
        CHECK(pthread_create(&th[i], NULL, each_worker, j) == 0);
    for (size_t i = 0; i < nth; i++)
        CHECK(pthread_join(th[i], NULL) == 0);
    free(th);
    return atomic_load(&j->errors) ? -EIO : 0;
}

/* One request on w that must answer want; the first failure of the run is printed. */
static int wire_expect(struct wire *w, const char *method, const char *path,
                       const struct strbuf *body, long want)
{
    static atomic_int printed;
    int r = wire_do(w, method, path, body->buf, body->len);

    if (r == 0 && w->status == want)
        return 0;
    if (atomic_fetch_add(&printed, 1) == 0)
        (void)fprintf(stderr, "bench_scheduler: %s %s: HTTP %ld: %.300s\n", method, path,
                      r == 0 ? w->status : 0L, r == 0 ? w->body.buf : "(no answer)");
    return -EIO;
}

/*
 * The NodeMetric of node i as an agent leaves it (reference koordlet-and-scheduler.md 2.5):
 * created with manager's default collect policy, then its status written with the update time
 * ud (RFC 3339) and a moderate nodeUsage, varying by node: cpu 0.8-1.8 of the node's 4 cores,
 * memory 8-16 of its 32 GiB. No podsMetric: LoadAwareScheduling then counts every pod placed
 * on the node at its estimate (the pods of this benchmark are all placed after the report).
 */
static int nodemetric_one(struct wire *w, size_t i, void *ud, struct strbuf *b)
{
    const char *update = ud;
    char name[64], path[160];

    object_name("scheduler-perf-", false, i, name, sizeof(name));
    strbuf_reset(b);
    strbuf_addf(b,
                "{\"apiVersion\":\"slo.koordinator.sh/v1alpha1\",\"kind\":\"NodeMetric\","
                "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"metricCollectPolicy\":"
                "{\"aggregateDurationSeconds\":300,\"reportIntervalSeconds\":60,"
                "\"nodeAggregatePolicy\":{\"durations\":[\"5m0s\",\"10m0s\",\"30m0s\"]},"
                "\"nodeMemoryCollectPolicy\":\"usageWithoutPageCache\"}}}",
                name);
    if (wire_expect(w, "POST", NODEMETRICS, b, 201) < 0)
        return -EIO;
    strbuf_reset(b);
    strbuf_addf(b,
                "{\"apiVersion\":\"slo.koordinator.sh/v1alpha1\",\"kind\":\"NodeMetric\","
                "\"metadata\":{\"name\":\"%s\"},\"status\":{\"updateTime\":\"%s\","
                "\"nodeMetric\":{\"nodeUsage\":{\"resources\":{\"cpu\":\"%zum\","
                "\"memory\":\"%zuMi\"}}}}}",
                name, update, 800 + i * 37 % 1000, 8192 + i * 53 % 8192);
    (void)snprintf(path, sizeof(path), NODEMETRICS "/%s/status", name);
    return wire_expect(w, "PUT", path, b, 200);
}

/* One ElasticQuota into b: a parent (is-parent), a leaf of parent, or a root-level one
 * (parent NULL, not is-parent); min and max in cpu and memory, the keys of every quota of the
 * tree. */
static void quota_body(struct strbuf *b, const char *ns, const char *name, const char *parent,
                       bool is_parent, const char *min_cpu, const char *min_mem,
                       const char *max_cpu, const char *max_mem)
{
    strbuf_reset(b);
    strbuf_addf(b,
                "{\"apiVersion\":\"scheduling.sigs.k8s.io/v1alpha1\",\"kind\":\"ElasticQuota\","
                "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"labels\":{",
                name, ns);
    if (is_parent)
        strbuf_addstr(b, "\"" QUOTA_LABEL("is-parent") "\":\"true\"");
    if (parent)
        strbuf_addf(b, "%s\"" QUOTA_LABEL("parent") "\":\"%s\"", is_parent ? "," : "", parent);
    strbuf_addf(b,
                "}},\"spec\":{\"min\":{\"cpu\":\"%s\",\"memory\":\"%s\"},\"max\":{\"cpu\":"
                "\"%s\",\"memory\":\"%s\"}}}",
                min_cpu, min_mem, max_cpu, max_mem);
}

static void quota_path(char *buf, size_t size, const char *ns)
{
    (void)snprintf(buf, size, "/apis/scheduling.sigs.k8s.io/v1alpha1/namespaces/%s/elasticquotas",
                   ns);
}

/*
 * The quota tree of KoordinatorProfile: QUOTA_PARENTS parents under the root (in
 * QUOTA_PARENT_NS), each with QUOTA_LEAVES leaves, each leaf in a namespace of its name. A
 * leaf guarantees 2 cpu / 10 Gi and may grow to 1000 cpu / 5000 Gi (room for 10,000
 * pod-default, so the measured pods are never refused by their quota); a parent's min is its
 * children's (the webhook's rule: the children's mins fit in the parent's), its max ten times
 * a leaf's. Item i of the job: parents first (they must exist before their children), then
 * each leaf's namespace and quota.
 */
static int quota_tree_one(struct wire *w, size_t i, void *ud, struct strbuf *b)
{
    char name[32], parent[32], path[128];

    (void)ud;
    if (i < QUOTA_PARENTS) {
        (void)snprintf(name, sizeof(name), "eq-parent-%zu", i);
        quota_body(b, QUOTA_PARENT_NS, name, NULL, true, "18", "90Gi", "10000", "50000Gi");
        quota_path(path, sizeof(path), QUOTA_PARENT_NS);
        return wire_expect(w, "POST", path, b, 201);
    }
    i -= QUOTA_PARENTS;
    leaf_name(i, name, sizeof(name));
    (void)snprintf(parent, sizeof(parent), "eq-parent-%zu", i / QUOTA_LEAVES);
    strbuf_reset(b);
    strbuf_addf(b, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}",
                name);
    if (wire_expect(w, "POST", "/api/v1/namespaces", b, 201) < 0)
        return -EIO;
    quota_body(b, name, name, parent, false, "2", "10Gi", "1000", "5000Gi");
    quota_path(path, sizeof(path), name);
    return wire_expect(w, "POST", path, b, 201);
}

static int create_quota_tree(const struct server *api)
{
    struct each_job parents = {.api = api, .n = QUOTA_PARENTS, .fn = quota_tree_one};
    struct each_job leaves = {.api = api, .n = QUOTA_PARENTS * QUOTA_LEAVES, .fn = quota_tree_one};

    /* the leaves' items come after the parents' */
    atomic_store(&leaves.next, QUOTA_PARENTS);
    leaves.n += QUOTA_PARENTS;
    if (create_namespace(api, QUOTA_PARENT_NS) < 0 || run_each(&parents) < 0 ||
        run_each(&leaves) < 0) {
        bench_fail("quotas", "creating the quota tree failed");
        return -EIO;
    }
    return 0;
}

/*
 * Reservation i: a small template (100m / 100Mi, in sched-0: the default quota) that fits
 * beside the pods on any node, owned by pods labelled app=reserved-owner. No pod of the
 * benchmark carries that label: the measured pods are no owners, so every one of them goes
 * through Reservation's owner matching against every Reservation and finds none, and the held
 * room stays held.
 */
static int reservation_one(struct wire *w, size_t i, void *ud, struct strbuf *b)
{
    (void)ud;
    strbuf_reset(b);
    strbuf_addf(b,
                "{\"apiVersion\":\"scheduling.koordinator.sh/v1alpha1\",\"kind\":\"Reservation\","
                "\"metadata\":{\"name\":\"reservation-%04zu\"},\"spec\":{\"template\":{"
                "\"metadata\":{\"namespace\":\"sched-0\"},\"spec\":{\"containers\":[{" PAUSE_JSON
                ",\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"100Mi\"}}}]}},"
                "\"owners\":[{\"labelSelector\":{\"matchLabels\":{\"app\":\"reserved-owner\"}}}]}}",
                i);
    return wire_expect(w, "POST", RESERVATIONS, b, 201);
}

/* The Reservations that are Available on a node and, when *owned is not NULL, how many of
 * them have owners; < 0 when the list failed. */
static int reservations_available(const struct server *api, size_t *ret, size_t *owned)
{
    struct conn c;
    cJSON *list = NULL, *it;
    int r;

    *ret = 0;
    if (owned)
        *owned = 0;
    conn_init(&c, api);
    r = conn_expect(&c, "GET", RESERVATIONS, NULL, 0, 200);
    if (r == 0 && !(list = cJSON_ParseWithLength(c.body.buf, c.body.len)))
        r = -EIO;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(it, "status");
        const char *phase = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(st, "phase"));
        const char *node = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(st, "nodeName"));
        if (!phase || strcmp(phase, "Available") || !node || !*node)
            continue;
        (*ret)++;
        if (owned && cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(st, "currentOwners")))
            (*owned)++;
    }
    cJSON_Delete(list);
    conn_release(&c);
    return r;
}

/* Creates n Reservations and waits until the scheduler has made them all Available. */
static int reservations_ready(const struct server *api, const struct server *sch, size_t n)
{
    struct each_job j = {.api = api, .n = n, .fn = reservation_one};
    double t0 = now_s(), progress = t0;
    size_t avail = 0, last = 0;

    if (run_each(&j) < 0) {
        bench_fail("reservations", "creating %zu Reservations failed", n);
        return -EIO;
    }
    for (;;) {
        if (reservations_available(api, &avail, NULL) < 0) {
            bench_fail("reservations", "listing the Reservations failed");
            return -EIO;
        }
        if (avail >= n)
            break;
        if (avail != last) {
            last = avail;
            progress = now_s();
        } else if (now_s() - progress > RESV_SECONDS || !alive(sch)) {
            bench_fail("reservations", "%zu of %zu Reservations Available, none more for %.0f s%s",
                       avail, n, now_s() - progress, alive(sch) ? "" : " (the scheduler exited)");
            return -ETIMEDOUT;
        }
        (void)usleep(50000);
    }
    (void)printf("  %zu Reservations Available in %.1f s\n", n, now_s() - t0);
    return 0;
}

/* KoordinatorProfile's objects before the scheduler starts: NodeMetrics (their update time in
 * *nm_time), the quota tree. */
static int koord_objects(const struct counts *n, const struct server *api, time_t *nm_time)
{
    char update[RFC3339_STR_MAX];
    struct each_job j = {.api = api, .n = n->nodes, .fn = nodemetric_one, .ud = update};
    double t0 = now_s();

    *nm_time = time(NULL);
    (void)rfc3339_format((int64_t)*nm_time, update);
    if (run_each(&j) < 0) {
        bench_fail("nodemetrics", "creating the NodeMetrics failed");
        return -EIO;
    }
    (void)printf("  %zu NodeMetrics (updateTime %s) in %.1f s\n", n->nodes, update, now_s() - t0);
    t0 = now_s();
    if (create_quota_tree(api) < 0)
        return -EIO;
    (void)printf("  %zu ElasticQuotas (%zu parents x %zu leaves) in %.1f s\n",
                 QUOTA_PARENTS * (QUOTA_LEAVES + 1), QUOTA_PARENTS, QUOTA_LEAVES, now_s() - t0);
    return 0;
}

/*
 * Waits until the API shows n pods of the full quota with the PodScheduled condition the
 * scheduler writes, once, for a pod that comes to wait (reason WaitingForQuota): the measured
 * phase is pods waiting while others schedule, not that one-time write of 10,000 statuses,
 * whose time is printed on its own.
 */
static int noted_barrier(const struct server *api, size_t n)
{
    double t0 = now_s(), deadline = t0 + BARRIER_SECONDS;
    size_t k = 0;
    struct conn c;

    conn_init(&c, api);
    while (now_s() < deadline) {
        k = 0;
        if (conn_expect(&c, "GET", "/api/v1/namespaces/" FULL_QUOTA "/pods", NULL, 0, 200) == 0)
            for (const char *p = c.body.buf; p && (p = strstr(p, "\"WaitingForQuota\"")); p++)
                k++;
        if (k >= n)
            break;
        (void)usleep(500000);
    }
    conn_release(&c);
    if (k < n) {
        bench_fail("waiting", "%zu of %zu waiting pods show WaitingForQuota after %d s", k, n,
                   BARRIER_SECONDS);
        return -ETIMEDOUT;
    }
    (void)printf("  their PodScheduled condition (WaitingForQuota) written in %.1f s\n",
                 now_s() - t0);
    return 0;
}

/* QuotaWaiting's quota, full: room for FULL_FILL pod-default, which are placed first; then
 * n->waiting more that can only wait, gated (the scheduler's gauge says so). */
static int full_quota(const struct counts *n, const struct server *api, const struct server *sch,
                      struct strbuf *text)
{
    struct strbuf body = STRBUF_INIT;
    char cpu[32], mem[32], path[128];
    double t0;
    int r;

    (void)snprintf(cpu, sizeof(cpu), "%dm", FULL_FILL * 100);
    (void)snprintf(mem, sizeof(mem), "%dMi", FULL_FILL * 500);
    quota_body(&body, FULL_QUOTA, FULL_QUOTA, NULL, false, "0", "0", cpu, mem);
    quota_path(path, sizeof(path), FULL_QUOTA);
    r = create_namespace(api, FULL_QUOTA);
    if (r == 0 && (r = post(api, path, body.buf)) < 0)
        bench_fail("waiting", "creating ElasticQuota %s failed", FULL_QUOTA);
    strbuf_release(&body);
    if (r < 0 ||
        pods_bound(api, sch, FULL_QUOTA, "fill-pod-", SBENCH_POD_DEFAULT, FULL_FILL, "filling") < 0)
        return -EIO;
    t0 = now_s();
    if (create_pods(api, FULL_QUOTA, "wait-pod-", SBENCH_POD_DEFAULT, n->waiting, NULL) < 0) {
        bench_fail("waiting", "creating the pods of the full quota failed");
        return -EIO;
    }
    if (gated_barrier(sch, n->waiting, text) < 0)
        return -EIO;
    (void)printf("  %zu pods of the full quota %s gated in %.1f s\n", n->waiting, FULL_QUOTA,
                 now_s() - t0);
    return noted_barrier(api, n->waiting);
}

/* Removes the entries of arr (a list of {name, ...}) named in drop (NULL-terminated). */
static void drop_named(cJSON *arr, const char *const *drop)
{
    for (int i = cJSON_GetArraySize(arr) - 1; i >= 0; i--) {
        const char *name = cJSON_GetStringValue(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(arr, i), "name"));
        for (size_t k = 0; name && drop[k]; k++) {
            if (!strcmp(name, drop[k])) {
                cJSON_DeleteItemFromArray(arr, i);
                break;
            }
        }
    }
}

/* Removes the plugins named in drop from every enabled set and the pluginConfig of profile p. */
static void drop_plugins(cJSON *p, const char *const *drop)
{
    cJSON *set;

    drop_named(cJSON_GetObjectItemCaseSensitive(p, "pluginConfig"), drop);
    cJSON_ArrayForEach(set, cJSON_GetObjectItemCaseSensitive(p, "plugins"))
        drop_named(cJSON_GetObjectItemCaseSensitive(set, "enabled"), drop);
}

#define SAMPLE_CONFIG "examples/scheduler/koord-scheduler-config.yaml"

/*
 * The configuration of profile p: upstream's harness settings (client QPS and burst 5000,
 * reference 9.1; no leader election) and one profile named default-scheduler (the pods name
 * no scheduler). PROFILE_DEFAULT has no plugins of its own (upstream's defaults);
 * PROFILE_KOORD is the sample's profile, plugins and args as they are there; PROFILE_QUOTA is
 * the sample's without LoadAwareScheduling and Reservation (ScheduleAdmission and ElasticQuota
 * on upstream's defaults). *nm_expiry: LoadAwareScheduling's nodeMetricExpirationSeconds, 0
 * when it does not run.
 */
static int write_config(const struct server *api, enum profile p, char **ret_path,
                        double *nm_expiry)
{
    static const char *const no_koord[] = {"LoadAwareScheduling", "Reservation", NULL};
    struct strbuf path = STRBUF_INIT, text = STRBUF_INIT;
    cJSON *doc, *prof, *pc;
    FILE *f;
    int r = 0;

    *nm_expiry = 0;
    if (p == PROFILE_DEFAULT) {
        doc = cJSON_CreateObject();
        prof = cJSON_CreateObject();
        CHECK(doc && prof && cJSON_AddItemToArray(cJSON_AddArrayToObject(doc, "profiles"), prof));
    } else if (!(doc = bench_read_doc(SAMPLE_CONFIG)) ||
               !(prof = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "profiles"), 0))) {
        bench_fail("scheduler", "no profile in %s", SAMPLE_CONFIG);
        cJSON_Delete(doc);
        return -EIO;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "apiVersion");
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "kind");
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "leaderElection");
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "clientConnection");
    CHECK(cJSON_AddStringToObject(doc, "apiVersion", "kubescheduler.config.k8s.io/v1"));
    CHECK(cJSON_AddStringToObject(doc, "kind", "KubeSchedulerConfiguration"));
    CHECK(cJSON_AddFalseToObject(cJSON_AddObjectToObject(doc, "leaderElection"), "leaderElect"));
    pc = cJSON_AddObjectToObject(doc, "clientConnection");
    CHECK(cJSON_AddNumberToObject(pc, "qps", 5000) && cJSON_AddNumberToObject(pc, "burst", 5000));
    cJSON_DeleteItemFromObjectCaseSensitive(prof, "schedulerName");
    CHECK(cJSON_AddStringToObject(prof, "schedulerName", "default-scheduler"));
    if (p == PROFILE_QUOTA)
        drop_plugins(prof, no_koord);
    cJSON_ArrayForEach(pc, cJSON_GetObjectItemCaseSensitive(prof, "pluginConfig"))
    {
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(pc, "args"), *x;
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(pc, "name"));
        if (!name || strcmp(name, "LoadAwareScheduling"))
            continue;
        x = cJSON_GetObjectItemCaseSensitive(args, "nodeMetricExpirationSeconds");
        *nm_expiry = cJSON_IsNumber(x) ? x->valuedouble : 180; /* the plugin's default */
    }
    CHECK(json_print(doc, &text) == 0);
    cJSON_Delete(doc);
    strbuf_addf(&path, "%s/scheduler-config.json", api->dir);
    if (!(f = fopen(path.buf, "we")) || fputs(text.buf, f) < 0)
        r = -EIO;
    if (f && fclose(f) != 0)
        r = -EIO;
    strbuf_release(&text);
    if (r < 0) {
        bench_fail("scheduler", "cannot write %s", path.buf);
        strbuf_release(&path);
        return r;
    }
    *ret_path = strbuf_detach(&path, NULL);
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
    char leaves[QUOTA_PARENTS * QUOTA_LEAVES][32];
    const char *nss[QUOTA_PARENTS * QUOTA_LEAVES] = {"sched-1"};
    size_t nns = 1;
    struct pod_watch pw;
    size_t nlat = 0;
    pid_t perf = 0, perf_api = 0;
    int r;

    /* KoordinatorProfile's measured pods are spread over the leaf quotas' namespaces */
    if (w->koord) {
        nns = QUOTA_PARENTS * QUOTA_LEAVES;
        for (size_t k = 0; k < nns; k++)
            leaf_name(k, leaves[k], sizeof(leaves[k]));
        for (size_t k = 0; k < nns; k++)
            nss[k] = leaves[k];
    }
    if ((r = watch_start(&pw, api, w->koord ? NULL : "sched-1", "pod-", n->measured)) < 0) {
        free(sent);
        return r;
    }
    if ((opt.perf || opt.perf_api) && !perf_done) {
        perf_done = true;
        if (opt.perf)
            perf = perf_start(sch->pid, opt.perf);
        if (opt.perf_api)
            perf_api = perf_start(api->pid, opt.perf_api);
    }
    cpu_s0 = server_cpu(sch);
    cpu_a0 = server_cpu(api);
    cpu_c0 = bench_self_cpu();
    all0 = bench_machine_cpu();
    sbench_tput_start(&tput, &pw.bound);
    r = create_pods_in(api, nss, nns, "pod-", w->measured_tpl, n->measured, sent);
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
    perf_stop(perf, "scheduler", opt.perf);
    perf_stop(perf_api, "API server", opt.perf_api);
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
    if (w->waiting) {
        /* Every pod but the waiting ones fits at its first attempt: any other attempt was a
         * waiting pod's, which ElasticQuota's PreEnqueue must keep out of the active queue. */
        double want = (double)(n->init + FULL_FILL + n->measured);
        if (res->gated_gauge != (double)n->waiting) {
            bench_fail(w->name,
                       "scheduler_pending_pods{queue=\"gated\"} is %.0f, want the %zu "
                       "pods of the full quota",
                       res->gated_gauge, n->waiting);
            r = -EIO;
        }
        if (res->attempts != want) {
            bench_fail(w->name,
                       "scheduler_schedule_attempts_total is %.0f, want %.0f (init %zu + filling "
                       "%d + measured %zu): the waiting pods were attempted %.0f times",
                       res->attempts, want, n->init, FULL_FILL, n->measured, res->attempts - want);
            r = -EIO;
        }
    }
    strbuf_release(&text);
    return r;
}

/* The cpu (milli) the leaf quotas' status.used says, summed; < 0 when the list failed. */
static int leaves_used(const struct server *api, int64_t *ret)
{
    struct conn c;
    cJSON *list = NULL, *it;
    int r;

    *ret = 0;
    conn_init(&c, api);
    r = conn_expect(&c, "GET", "/apis/scheduling.sigs.k8s.io/v1alpha1/elasticquotas", NULL, 0, 200);
    if (r == 0 && !(list = cJSON_ParseWithLength(c.body.buf, c.body.len)))
        r = -EIO;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                       cJSON_GetObjectItemCaseSensitive(it, "metadata"), "name")),
                   *cpu = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                       cJSON_GetObjectItemCaseSensitive(
                           cJSON_GetObjectItemCaseSensitive(it, "status"), "used"),
                       "cpu"));
        struct quantity q;
        int64_t m = 0;
        if (name && !strncmp(name, "eq-leaf-", 8) && cpu && quantity_parse(cpu, &q) == 0 &&
            quantity_milli(&q, &m) == 0)
            *ret += m;
    }
    cJSON_Delete(list);
    conn_release(&c);
    return r;
}

/* After KoordinatorProfile's measured pods: the Reservations still hold their room (the
 * measured pods are no owners) and the NodeMetrics were fresh until the last pod bound. */
static int check_koord(const struct workload *w, const struct counts *n, const struct server *api,
                       time_t nm_time, struct result *res)
{
    int r = 0;

    int64_t used = -1, want = (int64_t)n->measured * 100; /* pod-default: 100m */
    double deadline = now_s() + QUOTA_SECONDS;

    res->nm_age_s = difftime(time(NULL), nm_time);
    /* Every scheduling attempt placed a pod: a measured pod refused by its quota (or any
     * plugin) would show as one more. */
    if (res->attempts != (double)(n->init + n->measured + n->reservations)) {
        bench_fail(w->name,
                   "scheduler_schedule_attempts_total is %.0f, want %zu (init %zu + "
                   "measured %zu + Reservations %zu): some were refused first",
                   res->attempts, n->init + n->measured + n->reservations, n->init, n->measured,
                   n->reservations);
        r = -EIO;
    }
    /* The measured pods were charged to the leaf quotas (written back once a second). */
    while (leaves_used(api, &used) == 0 && used != want && now_s() < deadline)
        (void)usleep(100000);
    res->quota_used_m = used;
    if (used != want) {
        bench_fail(w->name,
                   "the leaf quotas' status.used sums to %lldm cpu, want %lldm (the "
                   "measured pods' requests)",
                   (long long)used, (long long)want);
        r = -EIO;
    }
    if (reservations_available(api, &res->resv_after, &res->resv_owned) < 0) {
        bench_fail(w->name, "listing the Reservations failed");
        return -EIO;
    }
    if (res->resv_after != n->reservations || res->resv_owned) {
        bench_fail(w->name,
                   "%zu of %zu Reservations Available after the measured pods, %zu "
                   "with owners (want all, none)",
                   res->resv_after, n->reservations, res->resv_owned);
        r = -EIO;
    }
    if (res->nm_expiry_s > 0 && res->nm_age_s >= res->nm_expiry_s) {
        bench_fail(w->name,
                   "the NodeMetrics were %.0f s old at the end, past LoadAware's "
                   "expiry (%.0f s): the nodes scored as without usage",
                   res->nm_age_s, res->nm_expiry_s);
        r = -EIO;
    }
    return r;
}

static void run_workload(const struct workload *w, struct result *res)
{
    static const char *const namespaces[] = {"sched-0", "sched-1", "sched-gated", "sched-deleting"};
    struct server api = {0}, sch = {0};
    char **crds = w->koord || w->waiting ? bench_crd_paths(koord_crds) : NULL;
    time_t nm_time = 0;
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
    if (w->koord)
        (void)printf(", %zu NodeMetrics, %zu ElasticQuotas, %zu Reservations", n.nodes,
                     QUOTA_PARENTS * (QUOTA_LEAVES + 1), n.reservations);
    if (w->waiting)
        (void)printf(", %zu waiting in a full quota", n.waiting);
    (void)printf("\n");
    (void)fflush(stdout);
    if (server_start_koord(&api, opt.koord, (const char *const *)crds, SERVER_AUTH_CERT) < 0) {
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
    if (w->koord && koord_objects(&n, &api, &nm_time) < 0)
        goto out;
    if (write_config(&api, w->profile, &config, &res->nm_expiry_s) < 0)
        goto out;
    if (server_start_scheduler(&sch, opt.koord, &api, config) < 0) {
        bench_fail(w->name, "the scheduler did not start");
        goto out;
    }
    if (n.reservations && reservations_ready(&api, &sch, n.reservations) < 0)
        goto out;
    if (w->waiting && full_quota(&n, &api, &sch, &text) < 0)
        goto out;
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
    if (w->koord && check_koord(w, &n, &api, nm_time, res) < 0)
        goto out;
    res->ok = true;
out:
    if (del.running) {
        atomic_store(&del.stop, true);
        CHECK(pthread_join(del.th, NULL) == 0);
    }
    server_stop(&sch);
    server_stop(&api);
    if (crds)
        bench_paths_free(crds);
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
    if (r->w->floor > 0)
        (void)printf("  upstream floor %.0f pods/s: Average/floor = %.2f\n", r->w->floor,
                     t->avg / r->w->floor);
    if (r->w->koord)
        (void)printf("  Koordinator objects: %zu of %zu Reservations still Available after the "
                     "measured pods, %zu with owners; the leaf quotas' used %.1f cpu; "
                     "NodeMetrics %.0f s old at the end (LoadAware's expiry %.0f s)\n",
                     r->resv_after, r->n.reservations, r->resv_owned,
                     (double)r->quota_used_m / 1000, r->nm_age_s, r->nm_expiry_s);
    if (r->w->waiting)
        (void)printf("  waiting pods: scheduler_pending_pods{queue=\"gated\"} %.0f (want %zu); "
                     "attempts %.0f = init %zu + filling %d + measured %zu: %.0f spent on the "
                     "waiting pods\n",
                     r->gated_gauge, r->n.waiting, r->attempts, r->n.init, FULL_FILL, r->n.measured,
                     r->attempts - (double)(r->n.init + FULL_FILL + r->n.measured));
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
    const struct result *basic = &res[W_BASIC], *gated = &res[W_GATED], *koord = &res[W_KOORD],
                        *quota = &res[W_QUOTA];
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
        char floor[64];
        if (!r->ran)
            continue;
        if (!r->ok) {
            (void)printf("| %s/%s | %zu/%zu/%zu | FAILED |\n", r->w->name, r->w->variant,
                         r->n.nodes, r->n.init, r->n.measured);
            continue;
        }
        if (r->w->floor > 0)
            (void)snprintf(floor, sizeof(floor), "%.0f | %.2f", r->w->floor,
                           r->tput.avg / r->w->floor);
        else
            (void)snprintf(floor, sizeof(floor), "- | -");
        (void)printf("| %s/%s | %zu/%zu/%zu | %.1f | %.1f | %.1f | %.1f | %s | %.0f/%.0f "
                     "| %.2f (%.0f) | %.1f | %.2f |\n",
                     r->w->name, r->w->variant, r->n.nodes, r->n.init, r->n.measured, r->tput.avg,
                     r->tput.p50, r->tput.p90, r->tput.p99, floor, r->lat_p50, r->lat_p99,
                     r->sched_cpu, per_pod_us(r), r->rss_mb, r->api_cpu);
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
    if (basic->ran && basic->ok && koord->ran && koord->ok && basic->tput.avg > 0) {
        double ratio = koord->tput.avg / basic->tput.avg;
        (void)printf("target Koordinator profile within 20%% of SchedulingBasic: %.1f vs %.1f "
                     "pods/s (%.2f) (%s); latency p50/p99 %.0f/%.0f vs %.0f/%.0f ms; scheduler "
                     "CPU per pod %.0f vs %.0f us\n",
                     koord->tput.avg, basic->tput.avg, ratio, ratio >= 0.8 ? "met" : "MISSED",
                     koord->lat_p50, koord->lat_p99, basic->lat_p50, basic->lat_p99,
                     per_pod_us(koord), per_pod_us(basic));
    }
    if (basic->ran && basic->ok && quota->ran && quota->ok && basic->tput.avg > 0) {
        double ratio = quota->tput.avg / basic->tput.avg;
        (void)printf("target QuotaWaiting's measured pods within 5%% of SchedulingBasic: %.1f vs "
                     "%.1f pods/s (%.2f) (%s); %.0f scheduling attempts spent on its %zu waiting "
                     "pods (target 0)\n",
                     quota->tput.avg, basic->tput.avg, ratio, ratio >= 0.95 ? "met" : "MISSED",
                     quota->attempts - (double)(quota->n.init + FULL_FILL + quota->n.measured),
                     quota->n.waiting);
    }
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
        {"workload", required_argument, NULL, 'w'},
        {"nodes", required_argument, NULL, 'n'},
        {"pods", required_argument, NULL, 'p'},
        {"clients", required_argument, NULL, 'c'},
        {"koord", required_argument, NULL, 'K'},
        {"perf", required_argument, NULL, 'P'},
        {"perf-apiserver", required_argument, NULL, 'A'},
        {"waiting", required_argument, NULL, 'W'},
        {"keep-going", no_argument, NULL, 'k'},
        {"smoke", no_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
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
        case 'W':
            r = bench_parse_size(optarg, 0, 1000000, &opt.waiting);
            opt.waiting_set = true;
            break;
        case 'P':
            opt.perf = optarg;
            break;
        case 'A':
            opt.perf_api = optarg;
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
