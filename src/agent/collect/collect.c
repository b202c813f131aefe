/* Metric collection (collect.h). */
#include "agent/collect/collect.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/cgroup/cgroup.h"
#include "agent/cgroup/reader.h"
#include "agent/cgroup/resource.h"
#include "agent/metriccache/metriccache.h"
#include "api/pod.h"
#include "api/quantity.h"
#include "base/base.h"
#include "base/log.h"

#define COMP "agent"

/* Counters of one cgroup (a pod's or a container's) between rounds. */
struct cgroup_state {
    char *dir; /* relative cgroup dir, exactly sized (330 of them on a node of 110 pods);
                * "" when it cannot be named */
    struct cg_file cpu, cpustat, memstat; /* cpu: v1's cpuacct.usage (v2: in cpu.stat) */
    int64_t cpu_ns, mono_ns;              /* last cumulative CPU time and when it was read */
    int64_t periods, throttled;
    bool seeded;
};

struct container {
    char *id; /* runtime://hash as in containerStatuses */
    struct cgroup_state cg;
    bool seen;
};

struct pod {
    char *uid;
    bool be_label; /* koordinator.sh/qosClass=BE */
    struct cgroup_state cg;
    struct container *ctrs;
    size_t nctrs;
    bool seen;
};

struct collector {
    struct collect_opts o;
    long hz;
    char proc_stat_path[CG_PATH_MAX / 4], meminfo_path[CG_PATH_MAX / 4];
    struct cg_file proc_stat, meminfo;
    uint64_t node_ticks;
    int64_t node_mono_ns;
    bool node_seeded;
    struct cg_file be_quota, be_period, be_cpuset;
    struct cgroup_state be; /* the BestEffort QoS level */
    struct pod *pods;
    size_t npods;
    struct collect_stats stats;
};

/* dir_r: what naming the directory returned; dir is used when it is >= 0. */
static void cgroup_state_init(struct cgroup_state *s, int dir_r, const char *dir)
{
    memset(s, 0, sizeof(*s));
    s->dir = xstrdup(dir_r < 0 ? "" : dir);
    cg_file_init(&s->cpu);
    cg_file_init(&s->cpustat);
    cg_file_init(&s->memstat);
}

/* Closes the files; they are opened afresh when next read. */
static void cgroup_state_close(struct cgroup_state *s)
{
    cg_file_release(&s->cpu);
    cg_file_release(&s->cpustat);
    cg_file_release(&s->memstat);
}

static void cgroup_state_release(struct cgroup_state *s)
{
    cgroup_state_close(s);
    free(s->dir);
    s->dir = NULL;
}

int collect_new(const struct collect_opts *opts, struct collector **ret)
{
    char dir[CG_PATH_MAX];
    struct collector *c;

    if (!opts->layout || !opts->mc)
        return -EINVAL;
    c = xcalloc(1, sizeof(*c));
    c->o = *opts;
    c->hz = opts->jiffy_hz > 0 ? opts->jiffy_hz : sysconf(_SC_CLK_TCK);
    if (c->hz <= 0)
        c->hz = 100;
    cg_file_init(&c->proc_stat);
    cg_file_init(&c->meminfo);
    cg_file_init(&c->be_quota);
    cg_file_init(&c->be_period);
    cg_file_init(&c->be_cpuset);
    if (cg_join_path(opts->layout->roots.proc_root, "stat", c->proc_stat_path,
                     sizeof(c->proc_stat_path)) < 0 ||
        cg_join_path(opts->layout->roots.proc_root, "meminfo", c->meminfo_path,
                     sizeof(c->meminfo_path)) < 0) {
        free(c);
        return -ENAMETOOLONG;
    }
    cgroup_state_init(&c->be, cg_qos_dir(opts->layout->driver, CG_QOS_BESTEFFORT, dir, sizeof(dir)),
                      dir);
    *ret = c;
    return 0;
}

static void pod_release(struct pod *p)
{
    for (size_t i = 0; i < p->nctrs; i++) {
        cgroup_state_release(&p->ctrs[i].cg);
        free(p->ctrs[i].id);
    }
    free(p->ctrs);
    cgroup_state_release(&p->cg);
    free(p->uid);
}

void collect_free(struct collector *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->npods; i++)
        pod_release(&c->pods[i]);
    free(c->pods);
    cg_file_release(&c->proc_stat);
    cg_file_release(&c->meminfo);
    cg_file_release(&c->be_quota);
    cg_file_release(&c->be_period);
    cg_file_release(&c->be_cpuset);
    cgroup_state_release(&c->be);
    free(c);
}

void collect_stats(struct collector *c, struct collect_stats *ret)
{
    *ret = c->stats;
}

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *get_str(const cJSON *o, const char *k)
{
    return cJSON_GetStringValue(get(o, k));
}

/* Opens f on resource r of dir unless open; false when it cannot be. */
static bool ensure(struct collector *c, struct cg_file *f, enum cg_res r, const char *dir)
{
    if (cg_file_path(f))
        return true;
    return cg_file_open_res(f, c->o.layout, r, dir) == 0;
}

static void append(struct collector *c, enum mc_kind kind, const char *id, const char *owner,
                   int64_t wall_ms, double v)
{
    int r = mc_append(c->o.mc, kind, id, owner, wall_ms, v);

    if (r < 0 && r != -EEXIST)
        log_debug(COMP, "metric %s %s: %s", mc_kind_name(kind), id ? id : "", err_str(r));
}

/* One cgroup's usage over the last round; throttled -1 when its cpu.stat has no counters. */
struct sample {
    double cores, mem, mem_cache, throttled;
};

enum { READ_FAILED = -1, READ_SEEDED = 0, READ_SAMPLE = 1 };

/* Reads one cgroup's counters. The first read only seeds them (READ_SEEDED); later ones give the
 * cpu rate, memory and throttling of this round (READ_SAMPLE). */
static int read_cgroup(struct collector *c, struct cgroup_state *s, int64_t mono_ns,
                       struct sample *ret)
{
    const enum cg_version v = c->o.layout->version;
    struct cg_memory_stat ms;
    struct cg_cpu_stat cs = {0};
    int64_t cpu_ns = 0;
    bool cpu_ok, have_throttle;

    /* v2 keeps the usage in cpu.stat, with the throttling: one file, read once. */
    if (v == CG_V2) {
        cpu_ok = ensure(c, &s->cpustat, CG_CPU_STAT, s->dir) &&
                 cg_read_cpu_stat(&s->cpustat, v, &cs) == 0;
        cpu_ns = cs.usage_ns;
    } else {
        cpu_ok = ensure(c, &s->cpu, CG_CPU_USAGE, s->dir) &&
                 cg_read_i64(&s->cpu, v, CG_CPU_USAGE, &cpu_ns) == 0;
    }
    if (!cpu_ok || !ensure(c, &s->memstat, CG_MEMORY_STAT, s->dir) ||
        cg_read_memory_stat(&s->memstat, v, &ms) < 0) {
        /* Not there yet, or gone: open afresh next round, and seed again. */
        c->stats.read_errors++;
        cgroup_state_close(s);
        s->seeded = false;
        return READ_FAILED;
    }
    if (v == CG_V2)
        have_throttle = cs.has_throttling;
    else
        have_throttle = ensure(c, &s->cpustat, CG_CPU_STAT, s->dir) &&
                        cg_read_cpu_stat(&s->cpustat, v, &cs) == 0 && cs.has_throttling;
    if (!s->seeded || mono_ns <= s->mono_ns || cpu_ns < s->cpu_ns) {
        s->seeded = true;
        s->cpu_ns = cpu_ns;
        s->mono_ns = mono_ns;
        s->periods = cs.nr_periods;
        s->throttled = cs.nr_throttled;
        return READ_SEEDED;
    }
    ret->cores = (double)(cpu_ns - s->cpu_ns) / (double)(mono_ns - s->mono_ns);
    ret->mem = (double)cg_memory_stat_usage(&ms);
    ret->mem_cache = ret->mem + (double)ms.active_file + (double)ms.inactive_file;
    ret->throttled = -1;
    if (have_throttle) {
        int64_t dp = cs.nr_periods - s->periods, dt = cs.nr_throttled - s->throttled;
        ret->throttled = dp > 0 && dt >= 0 ? (double)dt / (double)dp : 0;
        s->periods = cs.nr_periods;
        s->throttled = cs.nr_throttled;
    }
    s->cpu_ns = cpu_ns;
    s->mono_ns = mono_ns;
    return READ_SAMPLE;
}

/* Opens f on path unless open; false when it cannot be. */
static bool ensure_path(struct cg_file *f, const char *path)
{
    return cg_file_path(f) || cg_file_open(f, path) == 0;
}

static bool node_round(struct collector *c, int64_t wall_ms, int64_t mono_ns, double *ret_cores,
                       double *ret_mem)
{
    struct cg_meminfo mi;
    uint64_t ticks;
    bool have_cpu = false;

    if (ensure_path(&c->proc_stat, c->proc_stat_path) &&
        cg_read_proc_stat(&c->proc_stat, &ticks, NULL, 0, NULL) == 0) {
        if (c->node_seeded && mono_ns > c->node_mono_ns && ticks >= c->node_ticks) {
            double seconds = (double)(mono_ns - c->node_mono_ns) / 1e9;
            *ret_cores = (double)(ticks - c->node_ticks) / (seconds * (double)c->hz);
            append(c, MC_NODE_CPU_USAGE, NULL, NULL, wall_ms, *ret_cores);
            have_cpu = true;
        }
        c->node_seeded = true;
        c->node_ticks = ticks;
        c->node_mono_ns = mono_ns;
    } else {
        c->stats.read_errors++;
    }
    if (ensure_path(&c->meminfo, c->meminfo_path) && cg_read_meminfo(&c->meminfo, &mi) == 0 &&
        mi.mem_total_kib >= mi.mem_available_kib) {
        *ret_mem = (double)(mi.mem_total_kib - mi.mem_available_kib) * 1024;
        append(c, MC_NODE_MEMORY_USAGE, NULL, NULL, wall_ms, *ret_mem);
        if (mi.mem_total_kib >= mi.mem_free_kib)
            append(c, MC_NODE_MEMORY_USAGE_WITH_PAGE_CACHE, NULL, NULL, wall_ms,
                   (double)(mi.mem_total_kib - mi.mem_free_kib) * 1024);
    } else {
        c->stats.read_errors++;
        return false;
    }
    return have_cpu;
}

static struct pod *find_pod(struct collector *c, const char *uid)
{
    for (size_t i = 0; i < c->npods; i++)
        if (!strcmp(c->pods[i].uid, uid))
            return &c->pods[i];
    return NULL;
}

static struct container *find_container(struct pod *p, const char *id)
{
    for (size_t i = 0; i < p->nctrs; i++)
        if (!strcmp(p->ctrs[i].id, id))
            return &p->ctrs[i];
    return NULL;
}

static enum cg_qos cgroup_qos(const cJSON *pod)
{
    switch (api_pod_kube_qos(pod)) {
    case API_KUBE_QOS_GUARANTEED:
        return CG_QOS_GUARANTEED;
    case API_KUBE_QOS_BESTEFFORT:
        return CG_QOS_BESTEFFORT;
    case API_KUBE_QOS_BURSTABLE:
    case API_KUBE_QOS_UNKNOWN:
        break;
    }
    return CG_QOS_BURSTABLE;
}

/* Σ batch-cpu requests (milli) of a pod's containers (upstream GetPodBEMilliCPURequest). */
static int64_t batch_cpu_request(const cJSON *pod)
{
    const cJSON *ctr;
    int64_t sum = 0;

    cJSON_ArrayForEach(ctr, get(get(pod, "spec"), "containers"))
    {
        const char *v = get_str(get(get(ctr, "resources"), "requests"), "kubernetes.io/batch-cpu");
        struct quantity q;
        int64_t n;

        if (v && quantity_parse(v, &q) == 0 && quantity_value(&q, &n) == 0 && n > 0)
            sum += n;
    }
    return sum;
}

/* Keeps the pod's entry (creating it), marks it seen, syncs its containers with the status. */
static struct pod *track_pod(struct collector *c, const cJSON *obj, const char *uid)
{
    struct pod *p = find_pod(c, uid);
    char dir[CG_PATH_MAX];
    const cJSON *cs;

    if (!p) {
        c->pods = xrealloc(c->pods, (c->npods + 1) * sizeof(*c->pods));
        p = &c->pods[c->npods++];
        memset(p, 0, sizeof(*p));
        p->uid = xstrdup(uid);
        cgroup_state_init(
            &p->cg, cg_pod_dir(c->o.layout->driver, cgroup_qos(obj), uid, dir, sizeof(dir)), dir);
    }
    p->seen = true;
    p->be_label = api_qos_by_name(get_str(get(get(obj, "metadata"), "labels"),
                                          "koordinator.sh/qosClass")) == API_QOS_BE;
    for (size_t i = 0; i < p->nctrs; i++)
        p->ctrs[i].seen = false;
    cJSON_ArrayForEach(cs, get(get(obj, "status"), "containerStatuses"))
    {
        const char *id = get_str(cs, "containerID");
        struct container *k;

        if (!id || !*id || !p->cg.dir[0])
            continue;
        if (!(k = find_container(p, id))) {
            p->ctrs = xrealloc(p->ctrs, (p->nctrs + 1) * sizeof(*p->ctrs));
            k = &p->ctrs[p->nctrs++];
            memset(k, 0, sizeof(*k));
            k->id = xstrdup(id);
            cgroup_state_init(
                &k->cg, cg_container_dir(c->o.layout->driver, p->cg.dir, id, dir, sizeof(dir)),
                dir);
        }
        k->seen = true;
    }
    /* Containers gone from the status (restarted under a new ID, removed). */
    for (size_t i = 0; i < p->nctrs;) {
        if (p->ctrs[i].seen) {
            i++;
            continue;
        }
        (void)mc_drop(c->o.mc, MC_CONTAINER_CPU_USAGE, p->ctrs[i].id);
        (void)mc_drop(c->o.mc, MC_CONTAINER_MEMORY_USAGE, p->ctrs[i].id);
        (void)mc_drop(c->o.mc, MC_CONTAINER_MEMORY_USAGE_WITH_PAGE_CACHE, p->ctrs[i].id);
        (void)mc_drop(c->o.mc, MC_CONTAINER_CPU_THROTTLED, p->ctrs[i].id);
        cgroup_state_release(&p->ctrs[i].cg);
        free(p->ctrs[i].id);
        p->ctrs[i] = p->ctrs[--p->nctrs];
    }
    return p;
}

/* BE aggregate of reference 1.7, in milli-cores. */
static void be_round(struct collector *c, int64_t wall_ms, int64_t mono_ns, int64_t be_request)
{
    const enum cg_version v = c->o.layout->version;
    struct cg_cpuset set;
    int64_t quota, period, cpu_ns;
    double limit = -1;

    append(c, MC_NODE_BE, MC_BE_CPU_REQUEST, NULL, wall_ms, (double)be_request);
    if (ensure(c, &c->be_cpuset, CG_CPUSET_CPUS, c->be.dir) &&
        cg_read_cpuset(&c->be_cpuset, &set) == 0)
        limit = (double)cg_cpuset_count(&set) * 1000;
    if (ensure(c, &c->be_quota, CG_CPU_CFS_QUOTA, c->be.dir) &&
        cg_read_i64(&c->be_quota, v, CG_CPU_CFS_QUOTA, &quota) == 0 && quota > 0 &&
        ensure(c, &c->be_period, CG_CPU_CFS_PERIOD, c->be.dir) &&
        cg_read_i64(&c->be_period, v, CG_CPU_CFS_PERIOD, &period) == 0 && period > 0) {
        double q = (double)quota * 1000 / (double)period;
        if (limit < 0 || q < limit)
            limit = q;
    }
    if (limit >= 0)
        append(c, MC_NODE_BE, MC_BE_CPU_REAL_LIMIT, NULL, wall_ms, limit);
    if (ensure(c, &c->be.cpu, CG_CPU_USAGE, c->be.dir) &&
        cg_read_i64(&c->be.cpu, v, CG_CPU_USAGE, &cpu_ns) == 0) {
        /* Upstream: (delta ns / 10^6, integer ms) / delta wall ms x 1000. */
        if (c->be.seeded && mono_ns > c->be.mono_ns && cpu_ns >= c->be.cpu_ns) {
            int64_t used_ms = (cpu_ns - c->be.cpu_ns) / 1000000;
            double wall = (double)(mono_ns - c->be.mono_ns) / 1e6;
            append(c, MC_NODE_BE, MC_BE_CPU_USAGE, NULL, wall_ms, (double)used_ms / wall * 1000);
        }
        c->be.seeded = true;
        c->be.cpu_ns = cpu_ns;
        c->be.mono_ns = mono_ns;
    }
}

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int collect_round(struct collector *c, const cJSON *const *pods, size_t npods, int64_t wall_ms,
                  int64_t mono_ns)
{
    const int64_t t0 = thread_cpu_ns();
    double node_cores = 0, node_mem = 0, pods_cores = 0, pods_mem = 0;
    bool node_cpu_ok = node_round(c, wall_ms, mono_ns, &node_cores, &node_mem);
    int64_t be_request = 0;
    size_t sampled = 0, sampled_ctrs = 0, tracked = 0;
    bool partial = false; /* a pod only seeded this round: the pods' sum is incomplete */

    for (size_t i = 0; i < c->npods; i++)
        c->pods[i].seen = false;
    for (size_t i = 0; i < npods; i++) {
        const char *uid = get_str(get(pods[i], "metadata"), "uid");
        const char *phase = get_str(get(pods[i], "status"), "phase");
        struct sample s;
        struct pod *p;
        int r;

        if (!uid || !*uid || (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))))
            continue; /* completed pods have no cgroup left: dropped below */
        p = track_pod(c, pods[i], uid);
        tracked++;
        if (p->be_label)
            be_request += batch_cpu_request(pods[i]);
        r = p->cg.dir[0] ? read_cgroup(c, &p->cg, mono_ns, &s) : READ_FAILED;
        if (r == READ_SEEDED)
            partial = true;
        if (r == READ_SAMPLE) {
            append(c, MC_POD_CPU_USAGE, p->uid, NULL, wall_ms, s.cores);
            append(c, MC_POD_MEMORY_USAGE, p->uid, NULL, wall_ms, s.mem);
            append(c, MC_POD_MEMORY_USAGE_WITH_PAGE_CACHE, p->uid, NULL, wall_ms, s.mem_cache);
            if (s.throttled >= 0)
                append(c, MC_POD_CPU_THROTTLED, p->uid, NULL, wall_ms, s.throttled);
            pods_cores += s.cores;
            pods_mem += s.mem;
            sampled++;
        }
        /* Containers on their own: one started later than its pod seeds a round later. */
        for (size_t k = 0; k < p->nctrs; k++) {
            struct container *ct = &p->ctrs[k];
            struct sample cs;

            if (!ct->cg.dir[0] || read_cgroup(c, &ct->cg, mono_ns, &cs) != READ_SAMPLE)
                continue;
            append(c, MC_CONTAINER_CPU_USAGE, ct->id, p->uid, wall_ms, cs.cores);
            append(c, MC_CONTAINER_MEMORY_USAGE, ct->id, p->uid, wall_ms, cs.mem);
            append(c, MC_CONTAINER_MEMORY_USAGE_WITH_PAGE_CACHE, ct->id, p->uid, wall_ms,
                   cs.mem_cache);
            if (cs.throttled >= 0)
                append(c, MC_CONTAINER_CPU_THROTTLED, ct->id, p->uid, wall_ms, cs.throttled);
            sampled_ctrs++;
        }
    }
    /* Pods gone from this node, or completed: their series and files go. */
    for (size_t i = 0; i < c->npods;) {
        if (c->pods[i].seen) {
            i++;
            continue;
        }
        (void)mc_drop_owner(c->o.mc, c->pods[i].uid);
        pod_release(&c->pods[i]);
        c->pods[i] = c->pods[--c->npods];
    }
    /* System usage only from a complete sum: upstream would count a pod seen for the first
     * time as system usage for one round. */
    if (node_cpu_ok && !partial) {
        append(c, MC_SYS_CPU_USAGE, NULL, NULL, wall_ms,
               node_cores > pods_cores ? node_cores - pods_cores : 0);
        append(c, MC_SYS_MEMORY_USAGE, NULL, NULL, wall_ms,
               node_mem > pods_mem ? node_mem - pods_mem : 0);
    }
    be_round(c, wall_ms, mono_ns, be_request);
    c->stats.rounds++;
    c->stats.pods = sampled;
    c->stats.tracked = tracked;
    c->stats.containers = sampled_ctrs;
    c->stats.last_round_ns = thread_cpu_ns() - t0;
    return 0;
}
