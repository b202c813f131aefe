/*
 * bench/agent: what `koord agent` costs on a full node (issue 5 section 7). The agent is the
 * one koord process on every node, so its CPU and memory are paid N times; the targets are
 * under 1% of one core and under 16 MB resident, where upstream's koordlet asks for a limit of
 * 500m CPU and 256 MiB.
 *
 * `koord apiserver` and `koord manager` run as children (bench/common); the API server holds
 * one Node and P pods on it (default 110, the kubelet's maximum), 2 containers each, with
 * containerd:// IDs in their status: Burstable pods (requests, no limits), and every fourth
 * or so a BestEffort pod labelled koordinator.sh/qosClass=BE. A host tree in a temp dir looks
 * like that node to the agent: cgroup v1 with the cgroupfs driver (cpuacct, cpu, cpuset and
 * memory hierarchies with kubepods/<qos>/pod<uid>/<container id> for every pod and container,
 * memory.stat with the kernel's keys, cpu.stat), /proc/stat of 32 CPUs and /proc/meminfo. A
 * writer thread here advances every cpuacct.usage and /proc/stat once a second at fixed rates,
 * in place (the agent keeps them open, as the kernel's files are).
 *
 * `koord agent` then runs for that node as in production (collection every second, QoS on in
 * dry run, NodeMetric reports to the manager every 60 s, /metrics on loopback) for S seconds
 * (default 180) after a warm-up that ends once its rounds sample every pod. Every second this
 * program reads the agent's CPU time (/proc/PID/stat) and RSS (/proc/PID/status); it prints the
 * CPU share of one core (average, and the maximum over 10 s windows), the peak RSS (VmHWM) and
 * the CPU of one collection round, each against the target and upstream's limit. A warm-up
 * that never samples every pod and container, a last round that did not, a NodeMetric without
 * every pod, or an agent that does not stop cleanly fails the run (exit 1); timings never do.
 * --smoke runs 8 s so `make test` keeps this program working.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "codec/codec.h"
#include "common/bench.h"

#define NODE           "bench-node"
#define NODE_CPUS      32
#define CTRS_PER_POD   2
#define MAX_PODS       250
#define WINDOW_S       10
#define WARMUP_MAX_S   60  /* agent up until its rounds sample every pod */
#define REPORT_MAX_S   30  /* the first NodeMetric report: 2 s after start, then on a change */
#define READY_SECONDS  60  /* the manager: leader, the Node's NodeMetric */
#define SYSTEM_MILLI   800 /* node CPU outside the pods */
#define USER_HZ        100 /* /proc/stat ticks */
#define TARGET_CPU_PCT 1.0
#define UPSTREAM_CPU   50.0 /* koordlet's limit 500m, as % of one core */
#define TARGET_RSS_MB  16.0
#define UPSTREAM_RSS   256.0 /* MiB */

static const char usage[] =
    "usage: bench_agent [--seconds S] [--pods P] [--be B] [--koord PATH] [--smoke]\n"
    "\n"
    "Runs `koord agent` on a prepared host tree of one node with P pods (default 110, B of\n"
    "them BestEffort, default 30; 2 containers each) whose counters advance every second,\n"
    "against `koord apiserver` and `koord manager` started here, for S seconds (default 180;\n"
    "--smoke: 8) after a warm-up, and prints its CPU (share of one core, average and max over\n"
    "10 s windows), peak RSS and the CPU of one collection round against the targets (< 1%,\n"
    "< 16 MB) and upstream's limits (500m, 256 MiB).\n";

static struct {
    size_t seconds, pods, be;
    const char *koord;
} opt = {180, 110, 30, KOORD_BINARY};

/* ---- the workload ---- */

struct bpod {
    char name[32];
    char uid[64];
    bool be;
    char ctr_id[CTRS_PER_POD][80]; /* containerd://<64 hex> */
    unsigned milli[CTRS_PER_POD];  /* each container's CPU rate */
};

static struct bpod *pods;

/* Pod i is BestEffort when it is one of opt.be spread evenly over the pods. */
static bool pod_is_be(size_t i)
{
    return opt.be && (i * opt.be) / opt.pods != ((i + 1) * opt.be) / opt.pods;
}

static int create_node(struct conn *c)
{
    cJSON *plain = bench_read_doc("examples/nodes/node-plain.yaml"), *node;
    struct strbuf body = STRBUF_INIT;
    int r;

    if (!plain)
        return -EINVAL;
    node = bench_node_named(plain, NODE);
    cJSON_Delete(plain);
    CHECK(json_print(node, &body) == 0);
    cJSON_Delete(node);
    r = conn_expect(c, "POST", "/api/v1/nodes", body.buf, body.len, 201);
    strbuf_release(&body);
    return r;
}

/* Creates pod i, then writes its status as the kubelet would (Running, containers with their
 * IDs), and keeps its UID. */
static int create_pod(struct conn *c, size_t i)
{
    struct bpod *p = &pods[i];
    struct strbuf body = STRBUF_INIT, path = STRBUF_INIT;
    cJSON *o = NULL, *status, *arr;
    const char *uid;
    int r;

    (void)snprintf(p->name, sizeof(p->name), "pod-%03zu", i);
    p->be = pod_is_be(i);
    strbuf_addf(&body,
                "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
                "\"namespace\":\"default\",\"labels\":{\"app\":\"bench\"%s}},\"spec\":{"
                "\"nodeName\":\"" NODE "\",\"containers\":[",
                p->name, p->be ? ",\"koordinator.sh/qosClass\":\"BE\"" : "");
    for (size_t k = 0; k < CTRS_PER_POD; k++) {
        strbuf_addf(&body, "%s{\"name\":\"c%zu\",\"image\":\"busybox\"", k ? "," : "", k);
        if (!p->be)
            strbuf_addstr(&body, ",\"resources\":{\"requests\":{\"cpu\":\"100m\","
                                 "\"memory\":\"128Mi\"}}");
        strbuf_addch(&body, '}');
    }
    strbuf_addstr(&body, "]}}");
    if ((r = conn_expect(c, "POST", "/api/v1/namespaces/default/pods", body.buf, body.len, 201)) <
        0)
        goto out;
    o = cJSON_ParseWithLength(c->body.buf, c->body.len);
    uid = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "metadata"), "uid"));
    if (!uid || strlen(uid) >= sizeof(p->uid)) {
        (void)fprintf(stderr, "bench_agent: pod %s created without a UID\n", p->name);
        r = -EIO;
        goto out;
    }
    (void)snprintf(p->uid, sizeof(p->uid), "%s", uid);
    status = cJSON_CreateObject();
    CHECK(status && cJSON_AddStringToObject(status, "phase", "Running") &&
          cJSON_AddStringToObject(status, "qosClass", p->be ? "BestEffort" : "Burstable") &&
          cJSON_AddStringToObject(status, "hostIP", "192.168.10.12"));
    arr = cJSON_AddArrayToObject(status, "containerStatuses");
    CHECK(arr);
    for (size_t k = 0; k < CTRS_PER_POD; k++) {
        cJSON *cs = cJSON_CreateObject();
        char name[8];

        (void)snprintf(p->ctr_id[k], sizeof(p->ctr_id[k]), "containerd://%016zx%016zx%016x%016x",
                       i + 1, k + 1, 0xbe4c0de5u, (unsigned)(i * 7919 + k * 104729));
        /* 5..68 millicores, varying by pod and container */
        p->milli[k] = 5 + (unsigned)((i * 13 + k * 29) % 64);
        (void)snprintf(name, sizeof(name), "c%zu", k);
        CHECK(cs && cJSON_AddStringToObject(cs, "name", name) &&
              cJSON_AddStringToObject(cs, "containerID", p->ctr_id[k]) &&
              cJSON_AddStringToObject(cs, "image", "busybox") &&
              cJSON_AddTrueToObject(cs, "ready") && cJSON_AddNumberToObject(cs, "restartCount", 0));
        CHECK(cJSON_AddItemToArray(arr, cs));
    }
    cJSON_DeleteItemFromObjectCaseSensitive(o, "status");
    CHECK(cJSON_AddItemToObject(o, "status", status));
    strbuf_reset(&body);
    CHECK(json_print(o, &body) == 0);
    strbuf_addf(&path, "/api/v1/namespaces/default/pods/%s/status", p->name);
    r = conn_expect(c, "PUT", path.buf, body.buf, body.len, 200);
out:
    cJSON_Delete(o);
    strbuf_release(&body);
    strbuf_release(&path);
    return r;
}

/* ---- the host tree ---- */

/* A cpuacct.usage (or /proc/stat) the writer rewrites: ns = rate * elapsed. */
struct counter {
    int fd;
    uint64_t ns_per_s; /* CPU ns per second of wall time */
};

static struct {
    char *root; /* HOST: cgroup/, proc/, sys/ */
    struct counter *ctrs;
    size_t nctrs;
    int proc_stat;
    uint64_t node_milli; /* busy CPU of the node */
    pthread_t th;
    bool started;
    atomic_bool stop;
    uint64_t t0_ns;
} host = {.proc_stat = -1};

static int mkdirs(const char *path)
{
    char buf[4096];

    if (strlen(path) >= sizeof(buf))
        return -ENAMETOOLONG;
    (void)snprintf(buf, sizeof(buf), "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    return mkdir(buf, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

static int put_file(const char *dir, const char *name, const char *text)
{
    struct strbuf p = STRBUF_INIT;
    int fd, r = 0;
    size_t len = strlen(text);

    strbuf_addf(&p, "%s/%s", dir, name);
    fd = open(p.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    strbuf_release(&p);
    if (fd < 0)
        return -errno;
    if (write(fd, text, len) != (ssize_t)len)
        r = -EIO;
    (void)close(fd);
    return r;
}

/* memory.stat of cgroup v1 with every key the kernel writes, anon bytes of rss. */
static void memory_stat(struct strbuf *out, uint64_t rss, uint64_t cache)
{
    static const char *const keys[] = {
        "cache",         "rss",         "rss_huge",      "shmem",       "mapped_file", "dirty",
        "writeback",     "swap",        "pgpgin",        "pgpgout",     "pgfault",     "pgmajfault",
        "inactive_anon", "active_anon", "inactive_file", "active_file", "unevictable"};
    uint64_t v[ARRAY_SIZE(keys)] = {cache,
                                    rss,
                                    0,
                                    4096,
                                    cache / 4,
                                    0,
                                    0,
                                    0,
                                    rss / 1024 + 1200,
                                    rss / 2048,
                                    rss / 512 + 77,
                                    3,
                                    rss / 8,
                                    rss - rss / 8,
                                    cache / 2,
                                    cache - cache / 2,
                                    0};

    strbuf_reset(out);
    for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
        strbuf_addf(out, "%s %llu\n", keys[i], (unsigned long long)v[i]);
    strbuf_addstr(out, "hierarchical_memory_limit 9223372036854771712\n"
                       "hierarchical_memsw_limit 9223372036854771712\n");
    for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
        strbuf_addf(out, "total_%s %llu\n", keys[i], (unsigned long long)v[i]);
}

/* One cgroup (rel under kubepods' parent) in the four hierarchies; its cpuacct.usage becomes
 * a counter at milli CPU. */
static int make_cgroup(const char *rel, unsigned milli, uint64_t rss, uint64_t cache,
                       const char *shares)
{
    static const char *const subs[] = {"cpuacct", "cpu", "cpuset", "memory"};
    struct strbuf dir = STRBUF_INIT, text = STRBUF_INIT;
    int r = 0;

    for (size_t s = 0; s < ARRAY_SIZE(subs) && r == 0; s++) {
        strbuf_reset(&dir);
        strbuf_addf(&dir, "%s/cgroup/%s/%s", host.root, subs[s], rel);
        if ((r = mkdirs(dir.buf)) < 0)
            break;
        switch (s) {
        case 0: {
            struct counter *k;
            if ((r = put_file(dir.buf, "cpuacct.stat", "user 0\nsystem 0\n")) < 0)
                break;
            strbuf_addstr(&dir, "/cpuacct.usage");
            host.ctrs = xrealloc(host.ctrs, (host.nctrs + 1) * sizeof(*host.ctrs));
            k = &host.ctrs[host.nctrs];
            k->fd = open(dir.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (k->fd < 0) {
                r = -errno;
                break;
            }
            k->ns_per_s = (uint64_t)milli * 1000000u;
            host.nctrs++;
            break;
        }
        case 1:
            r = put_file(dir.buf, "cpu.stat", "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n");
            if (r == 0)
                r = put_file(dir.buf, "cpu.shares", shares);
            if (r == 0)
                r = put_file(dir.buf, "cpu.cfs_quota_us", "-1\n");
            if (r == 0)
                r = put_file(dir.buf, "cpu.cfs_period_us", "100000\n");
            break;
        case 2:
            r = put_file(dir.buf, "cpuset.cpus", "0-31\n");
            if (r == 0)
                r = put_file(dir.buf, "cpuset.mems", "0\n");
            break;
        default:
            memory_stat(&text, rss, cache);
            r = put_file(dir.buf, "memory.stat", text.buf);
            strbuf_reset(&text);
            strbuf_addf(&text, "%llu\n", (unsigned long long)(rss + cache));
            if (r == 0)
                r = put_file(dir.buf, "memory.usage_in_bytes", text.buf);
            if (r == 0)
                r = put_file(dir.buf, "memory.limit_in_bytes", "9223372036854771712\n");
        }
    }
    strbuf_release(&dir);
    strbuf_release(&text);
    return r;
}

static int host_prepare(const char *root)
{
    struct strbuf rel = STRBUF_INIT, path = STRBUF_INIT;
    unsigned qos_milli[2] = {0, 0}; /* burstable, besteffort */
    uint64_t qos_rss[2] = {0, 0};
    int r = 0;

    host.root = xstrdup(root);
    for (size_t i = 0; i < opt.pods && r == 0; i++) {
        const struct bpod *p = &pods[i];
        const char *qos = p->be ? "besteffort" : "burstable";
        unsigned pod_milli = 0;
        uint64_t pod_rss = 0;

        for (size_t k = 0; k < CTRS_PER_POD && r == 0; k++) {
            uint64_t rss = (uint64_t)(20 + (i * 3 + k * 11) % 200) << 20;
            strbuf_reset(&rel);
            strbuf_addf(&rel, "kubepods/%s/pod%s/%s", qos, p->uid,
                        p->ctr_id[k] + strlen("containerd://"));
            r = make_cgroup(rel.buf, p->milli[k], rss, rss / 4, p->be ? "2\n" : "102\n");
            pod_milli += p->milli[k];
            pod_rss += rss;
        }
        strbuf_reset(&rel);
        strbuf_addf(&rel, "kubepods/%s/pod%s", qos, p->uid);
        if (r == 0)
            r = make_cgroup(rel.buf, pod_milli, pod_rss, pod_rss / 4, p->be ? "2\n" : "204\n");
        qos_milli[p->be] += pod_milli;
        qos_rss[p->be] += pod_rss;
    }
    if (r == 0)
        r = make_cgroup("kubepods/burstable", qos_milli[0], qos_rss[0], qos_rss[0] / 4, "2048\n");
    if (r == 0)
        r = make_cgroup("kubepods/besteffort", qos_milli[1], qos_rss[1], qos_rss[1] / 4, "2\n");
    if (r == 0)
        r = make_cgroup("kubepods", qos_milli[0] + qos_milli[1], qos_rss[0] + qos_rss[1],
                        (qos_rss[0] + qos_rss[1]) / 4, "32768\n");
    host.node_milli = qos_milli[0] + qos_milli[1] + SYSTEM_MILLI;
    strbuf_addf(&path, "%s/proc", root);
    if (r == 0 && (r = mkdirs(path.buf)) == 0)
        r = put_file(path.buf, "meminfo",
                     "MemTotal:       131072000 kB\nMemFree:        90000000 kB\n"
                     "MemAvailable:   100000000 kB\nBuffers:          400000 kB\n"
                     "Cached:          9000000 kB\nSwapCached:            0 kB\n"
                     "Active:         20000000 kB\nInactive:        8000000 kB\n"
                     "Active(anon):   18000000 kB\nInactive(anon):   100000 kB\n"
                     "Active(file):    2000000 kB\nInactive(file):  7900000 kB\n"
                     "Unevictable:           0 kB\nMlocked:               0 kB\n"
                     "SwapTotal:             0 kB\nSwapFree:              0 kB\n"
                     "Dirty:               100 kB\nWriteback:             0 kB\n"
                     "AnonPages:      18000000 kB\nMapped:           600000 kB\n"
                     "Shmem:             20000 kB\nKReclaimable:     300000 kB\n"
                     "Slab:             600000 kB\nSReclaimable:     300000 kB\n"
                     "SUnreclaim:       300000 kB\nKernelStack:       20000 kB\n"
                     "PageTables:        60000 kB\nCommitLimit:    65536000 kB\n"
                     "Committed_AS:   30000000 kB\nVmallocTotal:   34359738367 kB\n"
                     "HugePages_Total:       0\nHugePages_Free:        0\n"
                     "Hugepagesize:       2048 kB\n");
    if (r == 0) {
        strbuf_addstr(&path, "/stat");
        host.proc_stat = open(path.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (host.proc_stat < 0)
            r = -errno;
    }
    strbuf_reset(&path);
    strbuf_addf(&path, "%s/sys/fs", root);
    if (r == 0)
        r = mkdirs(path.buf);
    strbuf_release(&rel);
    strbuf_release(&path);
    return r;
}

/* Rewrites fd in place with text (the same inode: readers keep their descriptors). */
static void rewrite(int fd, const char *text, size_t len)
{
    if (pwrite(fd, text, len, 0) == (ssize_t)len)
        (void)ftruncate(fd, (off_t)len);
}

static void host_advance(struct strbuf *buf)
{
    uint64_t el = now_ns() - host.t0_ns;
    uint64_t busy = el / 1000000u * host.node_milli / 1000u * USER_HZ / 1000u; /* ticks */
    uint64_t total = el / 1000000u * NODE_CPUS * USER_HZ / 1000u;
    uint64_t idle = total > busy ? total - busy : 0;

    for (size_t i = 0; i < host.nctrs; i++) {
        char num[32];
        int n = snprintf(num, sizeof(num), "%llu\n",
                         (unsigned long long)(el / 1000000u * host.ctrs[i].ns_per_s / 1000u));
        rewrite(host.ctrs[i].fd, num, (size_t)n);
    }
    /* user = 3/4 of the busy ticks, system the rest; every CPU alike. */
    strbuf_reset(buf);
    strbuf_addf(buf, "cpu  %llu 0 %llu %llu 0 0 0 0 0 0\n", (unsigned long long)(busy * 3 / 4),
                (unsigned long long)(busy - busy * 3 / 4), (unsigned long long)idle);
    for (int c = 0; c < NODE_CPUS; c++)
        strbuf_addf(buf, "cpu%d %llu 0 %llu %llu 0 0 0 0 0 0\n", c,
                    (unsigned long long)(busy * 3 / 4 / NODE_CPUS),
                    (unsigned long long)((busy - busy * 3 / 4) / NODE_CPUS),
                    (unsigned long long)(idle / NODE_CPUS));
    strbuf_addf(buf,
                "intr 0\nctxt %llu\nbtime 1767225600\nprocesses 4242\nprocs_running 3\n"
                "procs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n",
                (unsigned long long)(el / 100000u));
    rewrite(host.proc_stat, buf->buf, buf->len);
}

static void *writer(void *arg)
{
    struct strbuf buf = STRBUF_INIT;
    uint64_t next = now_ns();

    (void)arg;
    while (!atomic_load(&host.stop)) {
        struct timespec t;

        host_advance(&buf);
        next += 1000000000u;
        t = (struct timespec){(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
            ;
    }
    strbuf_release(&buf);
    return NULL;
}

static void host_start(void)
{
    struct strbuf buf = STRBUF_INIT;

    host.t0_ns = now_ns() - 3600000000000u; /* counters an hour in, as on a running node */
    host_advance(&buf);
    strbuf_release(&buf);
    CHECK(pthread_create(&host.th, NULL, writer, NULL) == 0);
    host.started = true;
}

static void host_release(void)
{
    if (host.started) {
        atomic_store(&host.stop, true);
        CHECK(pthread_join(host.th, NULL) == 0);
    }
    for (size_t i = 0; i < host.nctrs; i++)
        (void)close(host.ctrs[i].fd);
    if (host.proc_stat >= 0)
        (void)close(host.proc_stat);
    FREE_AND_NULL(host.ctrs);
    FREE_AND_NULL(host.root);
}

/* ---- the agent: samples and /metrics ---- */

/* A "Key:   N kB" line of /proc/PID/status, in bytes; -1 when absent. */
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
            v = kb * 1024;
            break;
        }
    }
    (void)fclose(f);
    return v;
}

/* The value of a sample line "name value" in /metrics text; -1 when absent. */
static double metric(const char *text, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (!strncmp(p, name, n) && p[n] == ' ')
            return strtod(p + n + 1, NULL);
    return -1;
}

static int scrape(const struct server *agent, struct strbuf *out)
{
    struct conn c;
    int r;

    conn_init(&c, agent);
    r = conn_do(&c, "GET", "/metrics", NULL, 0);
    if (r == 0 && c.status != 200)
        r = -EIO;
    strbuf_reset(out);
    if (r == 0)
        strbuf_add(out, c.body.buf, c.body.len);
    conn_release(&c);
    return r;
}

static bool all_sampled(const char *text)
{
    return metric(text, "koord_agent_collect_pods") == (double)opt.pods &&
           metric(text, "koord_agent_collect_containers") == (double)(opt.pods * CTRS_PER_POD);
}

/* Until the agent's last round sampled every pod and container. */
static int warm_up(const struct server *agent, struct strbuf *text)
{
    double t0 = now_s();

    while (now_s() - t0 < WARMUP_MAX_S) {
        if (scrape(agent, text) == 0 && all_sampled(text->buf)) {
            (void)printf("agent: warm-up done in %.1f s (every pod and container sampled)\n",
                         now_s() - t0);
            return 0;
        }
        (void)usleep(500000);
    }
    bench_fail("agent",
               "after %d s its rounds sample %.0f pods and %.0f containers, not %zu "
               "and %zu",
               WARMUP_MAX_S, metric(text->buf, "koord_agent_collect_pods"),
               metric(text->buf, "koord_agent_collect_containers"), opt.pods,
               opt.pods * CTRS_PER_POD);
    return -EIO;
}

/* The NodeMetric the agent reported through the manager holds every pod. */
static void check_nodemetric(const struct server *m)
{
    struct conn c;
    double t0 = now_s();
    int n = -1;

    conn_init(&c, m);
    while (now_s() - t0 < REPORT_MAX_S) {
        if (conn_do(&c, "GET", "/apis/metrics.koordinator.sh/v1alpha1/nodemetrics/" NODE, NULL,
                    0) == 0 &&
            c.status == 200) {
            cJSON *o = cJSON_ParseWithLength(c.body.buf, c.body.len);
            n = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(o, "status"), "podsMetric"));
            cJSON_Delete(o);
            if (n == (int)opt.pods)
                break;
        }
        (void)usleep(500000);
    }
    if (n == (int)opt.pods)
        (void)printf("manager: NodeMetric " NODE " reported with %d pods\n", n);
    else
        bench_fail("nodemetric", "status.podsMetric has %d entries, want %zu: %.300s", n, opt.pods,
                   c.body.buf);
    conn_release(&c);
}

struct sample {
    double t, cpu; /* wall s since the start, agent CPU s */
    int64_t rss;
};

static void measure(const struct server *m, const struct server *agent)
{
    struct sample *s = xcalloc(opt.seconds + 1, sizeof(*s));
    struct strbuf text = STRBUF_INIT;
    size_t win = opt.seconds < WINDOW_S ? opt.seconds : WINDOW_S;
    double t0, load = 0, rounds0, rounds1, max_pct = 0, avg_pct, round_s, mc_rss;
    double other0, other1, self0;
    int64_t hwm, rss_max = 0;
    uint64_t next;

    if (warm_up(agent, &text) < 0)
        goto out;
    rounds0 = metric(text.buf, "koord_agent_collect_rounds_total");
    (void)printf("agent: measuring for %zu s ...\n", opt.seconds);
    (void)fflush(stdout);
    t0 = now_s();
    next = now_ns();
    other0 = bench_machine_cpu();
    self0 = bench_self_cpu();
    for (size_t i = 0; i <= opt.seconds; i++) {
        struct timespec ts = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};

        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
        s[i] = (struct sample){now_s() - t0, server_cpu(agent), status_kb(agent->pid, "VmRSS")};
        if (s[i].rss > rss_max)
            rss_max = s[i].rss;
        next += 1000000000u;
    }
    other1 = bench_machine_cpu();
    hwm = status_kb(agent->pid, "VmHWM");
    if (scrape(agent, &text) < 0) {
        bench_fail("agent", "/metrics did not answer");
        goto out;
    }
    rounds1 = metric(text.buf, "koord_agent_collect_rounds_total");
    round_s = metric(text.buf, "koord_agent_collect_round_cpu_seconds");
    mc_rss = metric(text.buf, "koord_agent_metric_bytes");
    if (!all_sampled(text.buf))
        bench_fail("agent", "the last round sampled %.0f pods and %.0f containers, not %zu and %zu",
                   metric(text.buf, "koord_agent_collect_pods"),
                   metric(text.buf, "koord_agent_collect_containers"), opt.pods,
                   opt.pods * CTRS_PER_POD);
    if (metric(text.buf, "koord_agent_collect_read_errors_total") > 0)
        (void)printf("agent: %.0f files could not be read (a read met a rewrite)\n",
                     metric(text.buf, "koord_agent_collect_read_errors_total"));
    check_nodemetric(m);

    avg_pct = 100 * (s[opt.seconds].cpu - s[0].cpu) / (s[opt.seconds].t - s[0].t);
    for (size_t i = 0; i + win <= opt.seconds; i++) {
        double pct = 100 * (s[i + win].cpu - s[i].cpu) / (s[i + win].t - s[i].t);
        if (pct > max_pct)
            max_pct = pct;
    }
    if (hwm < rss_max)
        hwm = rss_max;
    (void)getloadavg(&load, 1);
    (void)printf("\nbench/agent: koord agent, 1 node, %zu pods (%zu BestEffort) x %d containers, "
                 "cgroup v1 cgroupfs, collect every 1 s, QoS dry run, report every 60 s; %zu s "
                 "measured (%.0f rounds); %ld CPUs, load %.2f at the end; other CPU (the "
                 "servers, this program, other work) %.2f cores (this program %.2f s)\n",
                 opt.pods, opt.be, CTRS_PER_POD, opt.seconds, rounds1 - rounds0,
                 sysconf(_SC_NPROCESSORS_ONLN), load,
                 (other1 - other0 - (s[opt.seconds].cpu - s[0].cpu)) / opt.seconds,
                 bench_self_cpu() - self0);
    (void)printf("  CPU %.2f%% of one core on average, max %.2f%% over %zu s windows (target < "
                 "%.0f%%: %.2fx; upstream's limit 500m = %.0f%%: %.4fx)\n",
                 avg_pct, max_pct, win, TARGET_CPU_PCT, avg_pct / TARGET_CPU_PCT, UPSTREAM_CPU,
                 avg_pct / UPSTREAM_CPU);
    (void)printf("  peak RSS %.1f MB (VmHWM; %.1f MiB; max VmRSS sampled %.1f MB) (target < "
                 "%.0f MB: %.2fx; upstream's limit %.0f MiB: %.4fx)\n",
                 (double)hwm / 1e6, (double)hwm / 1048576.0, (double)rss_max / 1e6, TARGET_RSS_MB,
                 (double)hwm / 1e6 / TARGET_RSS_MB, UPSTREAM_RSS,
                 (double)hwm / 1048576.0 / UPSTREAM_RSS);
    (void)printf(
        "  collection round %.3f ms CPU (last round, koord_agent_collect_round_cpu_seconds; "
        "%zu pods, %zu containers = %.1f us per cgroup), metric cache %.0f KB\n",
        round_s * 1e3, opt.pods, opt.pods * CTRS_PER_POD,
        round_s * 1e6 / (double)(opt.pods * (CTRS_PER_POD + 1)), mc_rss / 1e3);
out:
    strbuf_release(&text);
    free(s);
}

/* ---- main ---- */

static int parse_opts(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"seconds", required_argument, NULL, 's'},
        {"pods", required_argument, NULL, 'p'},
        {"be", required_argument, NULL, 'b'},
        {"koord", required_argument, NULL, 'K'},
        {"smoke", no_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int ch, r = 0;

    while (r == 0 && (ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case 's':
            r = bench_parse_size(optarg, 2, 3600, &opt.seconds);
            break;
        case 'p':
            r = bench_parse_size(optarg, 1, MAX_PODS, &opt.pods);
            break;
        case 'b':
            r = bench_parse_size(optarg, 0, MAX_PODS, &opt.be);
            break;
        case 'K':
            opt.koord = optarg;
            break;
        case 'S':
            opt.seconds = 8;
            break;
        case 'h':
            (void)fputs(usage, stdout);
            exit(0);
        default:
            r = -EINVAL;
        }
    }
    if (r < 0 || optind != argc || opt.be > opt.pods) {
        (void)fputs(usage, stderr);
        return -EINVAL;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const crd_names[] = {
        "slo.koordinator.sh_nodemetrics.yaml",
        "slo.koordinator.sh_nodeslos.yaml",
        NULL,
    };
    struct server api = {0}, m = {0}, agent = {0};
    struct strbuf root = STRBUF_INIT;
    struct conn c;
    char **crds;
    double t0;
    int r = 0;

    if (parse_opts(argc, argv) < 0)
        return 2;
    bench_catch_signals();
    codec_init();
    CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == 0);
    pods = xcalloc(opt.pods, sizeof(*pods));
    crds = bench_crd_paths(crd_names);
    if (server_start_koord(&api, opt.koord, (const char *const *)crds, SERVER_AUTH_CERT) < 0) {
        bench_fail("apiserver", "did not start");
        goto out;
    }
    t0 = now_s();
    conn_init(&c, &api);
    r = create_node(&c);
    for (size_t i = 0; i < opt.pods && r == 0; i++)
        r = create_pod(&c, i);
    conn_release(&c);
    if (r < 0) {
        bench_fail("apiserver", "creating the Node and its pods failed");
        goto out;
    }
    (void)printf("apiserver: Node " NODE " and %zu pods in %.1f s\n", opt.pods, now_s() - t0);
    if (server_start_manager(&m, opt.koord, &api, READY_SECONDS) < 0) {
        bench_fail("manager", "did not start");
        goto out;
    }
    /* The host tree lives in the API server's temp dir: removed with it on every exit. */
    strbuf_addf(&root, "%s/host", api.dir);
    if ((r = host_prepare(root.buf)) < 0) {
        bench_fail("host", "cannot prepare the host tree in %s: %s", root.buf, strerror(-r));
        goto out;
    }
    host_start();
    (void)printf("host: %zu cgroups x 4 hierarchies in %s, counters advancing every second\n",
                 host.nctrs, root.buf);
    (void)fflush(stdout);
    if (server_start_agent(&agent, opt.koord, &api, &m, NODE, root.buf) < 0) {
        bench_fail("agent", "did not start");
        goto out;
    }
    measure(&m, &agent);
out:
    server_stop(&agent); /* a crash or an unclean stop is a failure */
    host_release();
    server_stop(&m);
    server_stop(&api);
    strbuf_release(&root);
    bench_paths_free(crds);
    free(pods);
    curl_global_cleanup();
    bench_release_signals();
    if (bench_failures())
        (void)fprintf(stderr, "bench_agent: %d failure(s)\n", bench_failures());
    return bench_failures() ? 1 : 0;
}
