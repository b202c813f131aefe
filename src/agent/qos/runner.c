/*
 * The QoS loop: inputs in, pure decisions (agent/qos/<strategy>.h), checked writes and
 * evictions out. See runner.h for what is applied and how failures are reported.
 */
#include "agent/qos/runner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/cgroup/cgroup.h"
#include "agent/cgroup/reader.h"
#include "agent/cgroup/resource.h"
#include "agent/cgroup/writer.h"
#include "agent/metriccache/metriccache.h"
#include "agent/qos/batchresource.h"
#include "agent/qos/cpuburst.h"
#include "agent/qos/cpuevict.h"
#include "agent/qos/groupidentity.h"
#include "agent/qos/memoryevict.h"
#include "agent/qos/memoryqos.h"
#include "agent/qos/nodeslo.h"
#include "agent/qos/resctrl.h"
#include "agent/qos/sysconfig.h"
#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"

#define COMP "qos"

/* "last" queries look at [now - 2 s, now] (upstream's default query window). */
#define LAST_WINDOW_MS 2000
/* Bound on the BE cgroup directories listed per tick (pods x containers of one node). */
#define DIRS_MAX 65536
/* Bound on the pods taken from the pod callback. */
#define PODS_MAX 16384

struct dirlist {
    char **v;
    size_t n, alloc;
};

/* A CFS quota burst token bucket, by container ID. */
struct burst_limiter {
    char *id;
    struct qos_burst_limiter l;
};

/* unsupported_logged holds one bit per resource. */
_Static_assert(CG_RES_COUNT <= 32, "unsupported_logged is a 32-bit mask");

/* A sysctl's text before the runner first changed it (system config). */
struct sys_saved {
    bool saved;
    char text[64];
};

/* What the node-level strategies keep between ticks (run_resctrl() and after). */
struct node_knobs {
    struct sys_saved sysctl[QOS_SYSCTL_COUNT];
    size_t nsched; /* sched features switched, with their state before */
    struct qos_sched_feature sched[QOS_SCHED_FEATURES_MAX];
    bool vendor_read, amd; /* <proc>/cpuinfo read; its vendor_id is AuthenticAMD */
    uint32_t logged;       /* bits (1u << enum knob): unsupported already logged */
};

struct qos_runner {
    struct qos_runner_opts o;
    struct cg_writer w;
    struct qos_cpu_info *cpus;
    size_t ncpus;

    struct qos_slo slo;
    struct strbuf slo_why; /* the decode failure last logged, "" after a good one */

    int64_t mem_last_ms;
    int64_t cpu_last_ms;
    /* The flags together (clang-tidy's padding check). */
    bool cpus_from_sys;    /* false: synthesised from the Node's capacity (or none yet) */
    bool slo_cpu_burst;    /* the last good NodeSLO has spec.cpuBurstStrategy */
    bool slo_resource_qos; /* ... and spec.resourceQOSStrategy */
    bool mem_has_last;
    bool cpu_started;

    struct burst_limiter *limiters; /* sorted by id */
    size_t nlimiters, limiters_alloc;
    uint64_t rng; /* xorshift64* state, never 0 */

    uint32_t unsupported_logged[QOS_RUNNER_STRATEGY_COUNT]; /* bits (1u << enum cg_res) */
    bool error_logged[QOS_RUNNER_STRATEGY_COUNT];

    struct qos_runner_stats stats;
    struct node_knobs nk;

    pthread_mutex_t lock; /* ticks and stats */
    pthread_mutex_t thread_lock;
    pthread_cond_t cond; /* CLOCK_MONOTONIC */
    pthread_t thread;
    int64_t next_due[QOS_RUNNER_STRATEGY_COUNT]; /* monotonic ms (qos_runner_due()) */
    bool running, stopping;
    bool scheduled; /* next_due is set */
};

/* What one tick gathered. */
struct tick {
    struct qos_runner *r;
    int64_t now;
    enum qos_runner_strategy strat; /* whose counters the current writes go to */
    bool strat_failed;
    cJSON *pods_json, *node_json, *slo_json;
    struct qos_pod *pods;
    size_t npods;
    struct qos_node node;
    bool has_node;
};

const char *qos_runner_strategy_name(enum qos_runner_strategy s)
{
    static const char *const names[] = {
        [QOS_RUNNER_CPU_SUPPRESS] = "cpu_suppress",
        [QOS_RUNNER_MEMORY_EVICT] = "memory_evict",
        [QOS_RUNNER_CPU_EVICT] = "cpu_evict",
        [QOS_RUNNER_CPU_BURST] = "cpu_burst",
        [QOS_RUNNER_CFS_QUOTA_BURST] = "cfs_quota_burst",
        [QOS_RUNNER_MEMORY_QOS] = "memory_qos",
        [QOS_RUNNER_BATCH_RESOURCE] = "batch_resource",
        [QOS_RUNNER_RESCTRL] = "resctrl",
        [QOS_RUNNER_SYSTEM_CONFIG] = "system_config",
        [QOS_RUNNER_GROUP_IDENTITY] = "group_identity",
    };

    return (unsigned)s < ARRAY_SIZE(names) ? names[s] : "unknown";
}

void qos_runner_opts_init(struct qos_runner_opts *ret)
{
    memset(ret, 0, sizeof(*ret));
    ret->kubelet_cpu_policy = QOS_KUBELET_CPU_POLICY_NONE;
    ret->features = QOS_RUNNER_F_DEFAULT;
    ret->interval_ms = 1000;
    ret->collect_interval_ms = 1000;
}

/* ---- small helpers ---- */

static void dirlist_add(struct dirlist *d, const char *s)
{
    if (d->n == d->alloc) {
        d->alloc = d->alloc ? 2 * d->alloc : 16;
        d->v = xrealloc(d->v, d->alloc * sizeof(*d->v));
    }
    d->v[d->n++] = xstrdup(s);
}

static void dirlist_release(struct dirlist *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->v[i]);
    free(d->v);
    memset(d, 0, sizeof(*d));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether abs/name is a directory (d_type when the filesystem gives it). */
static bool is_dir(const char *abs, const struct dirent *e)
{
    struct strbuf p = STRBUF_INIT;
    struct stat st;
    bool r;

    if (e->d_type == DT_DIR)
        return true;
    if (e->d_type != DT_UNKNOWN)
        return false;
    strbuf_addf(&p, "%s/%s", abs, e->d_name);
    r = stat(p.buf, &st) == 0 && S_ISDIR(st.st_mode);
    strbuf_release(&p);
    return r;
}

/* Appends "<rel>/<name>" for each subdirectory of cgroup rel (subsystem subsys), sorted. */
static int list_subdirs(const struct cg_layout *l, const char *subsys, const char *rel,
                        struct dirlist *out)
{
    char abs[CG_PATH_MAX];
    struct strbuf p = STRBUF_INIT;
    size_t first = out->n;
    struct dirent *e;
    DIR *d;
    int r;

    if ((r = cg_dir_path(l, subsys, rel, abs, sizeof(abs))) < 0)
        return r;
    if (!(d = opendir(abs)))
        return -errno;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !is_dir(abs, e))
            continue;
        if (out->n >= DIRS_MAX) {
            r = -E2BIG;
            break;
        }
        strbuf_reset(&p);
        strbuf_addf(&p, "%s/%s", rel, e->d_name);
        dirlist_add(out, p.buf);
    }
    (void)closedir(d);
    strbuf_release(&p);
    if (out->n > first)
        qsort(out->v + first, out->n - first, sizeof(*out->v), cmp_str);
    return r < 0 ? r : 0;
}

/* Reads a small file into buf (NUL-terminated, trailing whitespace cut). */
static int read_small(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0)
        return -errno;
    n = read(fd, buf, size - 1);
    if (n < 0) {
        int r = -errno;

        (void)close(fd);
        return r;
    }
    (void)close(fd);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        n--;
    buf[n] = '\0';
    return (int)n;
}

static int read_i64_file(const char *path, int64_t *ret)
{
    char buf[64];
    int r = read_small(path, buf, sizeof(buf));

    return r < 0 ? r : cg_parse_i64(buf, ret);
}

/* A directory name "<prefix><digits>": the number, or -1. */
static int64_t numbered(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    int64_t v;

    if (strncmp(name, prefix, n) || !name[n] || name[n] == '-' || name[n] == '+')
        return -1;
    for (const char *c = name + n; *c; c++)
        if (*c < '0' || *c > '9')
            return -1;
    if (parse_i64(name + n, &v) < 0 || v >= CG_CPUSET_MAX_CPUS)
        return -1;
    return v;
}

static int cmp_cpu(const void *a, const void *b)
{
    const struct qos_cpu_info *x = a, *y = b;

    return x->cpu - y->cpu;
}

/* The CPU topology of the sys root (see qos_runner_new()). */
static void read_topology(struct qos_runner *r)
{
    char path[CG_PATH_MAX], buf[256];
    const char *sys = r->o.layout->roots.sys_root;
    struct strbuf p = STRBUF_INIT;
    struct dirent *e;
    size_t alloc = 0;
    DIR *d;

    if (cg_join_path(sys, "devices/system/cpu", path, sizeof(path)) < 0 || !(d = opendir(path)))
        return;
    while ((e = readdir(d))) {
        int64_t cpu = numbered(e->d_name, "cpu"), v;
        struct qos_cpu_info *ci;

        if (cpu < 0)
            continue;
        if (r->ncpus == alloc) {
            alloc = alloc ? 2 * alloc : 16;
            r->cpus = xrealloc(r->cpus, alloc * sizeof(*r->cpus));
        }
        ci = &r->cpus[r->ncpus++];
        *ci = (struct qos_cpu_info){.cpu = (int)cpu, .core = (int)cpu};
        strbuf_reset(&p);
        strbuf_addf(&p, "%s/%s/topology/core_id", path, e->d_name);
        if (read_i64_file(p.buf, &v) == 0 && v >= 0 && v < CG_CPUSET_MAX_CPUS)
            ci->core = (int)v;
        strbuf_reset(&p);
        strbuf_addf(&p, "%s/%s/topology/physical_package_id", path, e->d_name);
        if (read_i64_file(p.buf, &v) == 0 && v >= 0 && v < CG_CPUSET_MAX_CPUS)
            ci->socket = (int)v;
    }
    (void)closedir(d);
    if (r->ncpus)
        qsort(r->cpus, r->ncpus, sizeof(*r->cpus), cmp_cpu);
    r->cpus_from_sys = r->ncpus > 0;

    if (cg_join_path(sys, "devices/system/node", path, sizeof(path)) >= 0 && (d = opendir(path))) {
        while ((e = readdir(d))) {
            int64_t node = numbered(e->d_name, "node");
            struct cg_cpuset set;

            if (node < 0)
                continue;
            strbuf_reset(&p);
            strbuf_addf(&p, "%s/%s/cpulist", path, e->d_name);
            if (read_small(p.buf, buf, sizeof(buf)) < 0 || qos_cpuset_parse(buf, &set) < 0)
                continue;
            for (size_t i = 0; i < r->ncpus; i++)
                if (cg_cpuset_has(&set, r->cpus[i].cpu))
                    r->cpus[i].node = (int)node;
        }
        (void)closedir(d);
    }
    strbuf_release(&p);
}

/* Without sysfs topology: CPUs 0 .. capacity - 1, each its own core. */
static void synthesize_topology(struct qos_runner *r, const struct qos_node *n)
{
    int64_t cores = (n->capacity.v[QOS_RES_CPU] + 999) / 1000;

    if (r->cpus_from_sys || cores <= 0 || cores > CG_CPUSET_MAX_CPUS || (size_t)cores == r->ncpus)
        return;
    free(r->cpus);
    r->cpus = xcalloc((size_t)cores, sizeof(*r->cpus));
    r->ncpus = (size_t)cores;
    for (int i = 0; i < (int)cores; i++)
        r->cpus[i] = (struct qos_cpu_info){.cpu = i, .core = i};
}

const struct qos_cpu_info *qos_runner_cpus(const struct qos_runner *r, size_t *ret_n)
{
    *ret_n = r->ncpus;
    return r->cpus;
}

/* ---- metric queries ---- */

static bool query(struct tick *t, enum mc_kind k, const char *id, int64_t window_ms,
                  struct mc_result *ret)
{
    struct mc_select sel = {.kind = k, .id = id};

    return t->r->o.metrics &&
           mc_query(t->r->o.metrics, &sel, t->now - window_ms, t->now, NULL, ret) == 0;
}

static bool last(struct tick *t, enum mc_kind k, const char *id, double *ret)
{
    struct mc_result res;

    if (!query(t, k, id, LAST_WINDOW_MS, &res))
        return false;
    *ret = res.last;
    return true;
}

/* ---- counters and the checked writes ---- */

static struct qos_runner_counters *counters(struct tick *t)
{
    return &t->r->stats.s[t->strat];
}

/* Whether cgroup dir of r's subsystem exists (an ENOENT there is an unsupported file). */
static bool cgroup_dir_exists(const struct qos_runner *r, enum cg_res res, const char *dir)
{
    char abs[CG_PATH_MAX];
    struct stat st;

    return cg_dir_path(r->o.layout, cg_res_info(res)->v1_subsys, dir, abs, sizeof(abs)) >= 0 &&
           stat(abs, &st) == 0 && S_ISDIR(st.st_mode);
}

static void note_error(struct tick *t, const char *what)
{
    struct qos_runner *r = t->r;

    counters(t)->errors++;
    t->strat_failed = true;
    if (!r->error_logged[t->strat]) {
        log_warn(COMP, "strategy %s: %s, ignoring", qos_runner_strategy_name(t->strat), what);
        r->error_logged[t->strat] = true;
    } else {
        log_debug(COMP, "strategy %s: %s", qos_runner_strategy_name(t->strat), what);
    }
}

/* A file this kernel lacks: counted each time, logged once per strategy and resource. */
static void note_unsupported(struct tick *t, enum cg_res res)
{
    struct qos_runner *r = t->r;

    counters(t)->unsupported++;
    if (!(r->unsupported_logged[t->strat] & (1u << res))) {
        r->unsupported_logged[t->strat] |= 1u << res;
        log_info(COMP, "strategy %s: %s is not supported by this kernel, skipping it",
                 qos_runner_strategy_name(t->strat), cg_res_info(res)->name);
    }
}

/* cg_write() with the counting and logging rules of runner.h. */
static int apply(struct tick *t, enum cg_res res, const char *dir, const char *value)
{
    struct qos_runner *r = t->r;
    int rc = cg_write(&r->w, res, dir, value);

    switch (rc) {
    case CG_WRITE_DONE:
        counters(t)->writes++;
        log_debug(COMP, "wrote \"%s\" to %s of \"%s\"", value, cg_res_info(res)->name, dir);
        return rc;
    case CG_WRITE_UNCHANGED:
        counters(t)->unchanged++;
        return rc;
    case CG_WRITE_DRY_RUN:
        counters(t)->dry_run++;
        return rc;
    default:
        break;
    }
    if (rc == -ENOENT && !cgroup_dir_exists(r, res, dir))
        return rc; /* the cgroup went away (pod deleted): nothing to do */
    if (rc == -ENOENT) {
        note_unsupported(t, res);
        return rc;
    }
    note_error(t, cg_writer_error(&r->w));
    return rc;
}

static int apply_i64(struct tick *t, enum cg_res res, const char *dir, int64_t v)
{
    char buf[32];

    (void)snprintf(buf, sizeof(buf), "%lld", (long long)v);
    return apply(t, res, dir, buf);
}

/* ---- BE CPU suppress ---- */

static void apply_cpuset_level(struct tick *t, const char *value, const struct dirlist *dirs,
                               bool bottom_up)
{
    for (size_t i = 0; i < dirs->n; i++)
        (void)apply(t, CG_CPUSET_CPUS, dirs->v[bottom_up ? dirs->n - 1 - i : i], value);
}

static void apply_suppress_plan(struct tick *t, const struct qos_suppress_plan *plan,
                                const char *qos_dir, const struct dirlist *pods,
                                const struct dirlist *ctrs)
{
    struct strbuf v = STRBUF_INIT;
    struct dirlist top = {0};

    if (plan->write_quota)
        (void)apply_i64(t, CG_CPU_CFS_QUOTA, qos_dir, plan->be_quota);
    dirlist_add(&top, qos_dir);
    for (size_t i = 0; i < plan->ncpuset; i++) {
        const struct qos_cpuset_write *cw = &plan->cpuset[i];
        const struct dirlist *order[3] = {&top, pods, ctrs};
        const unsigned bits[3] = {QOS_LEVEL_QOS, QOS_LEVEL_POD, QOS_LEVEL_CONTAINER};

        strbuf_reset(&v);
        cg_cpuset_append(&cw->cpus, &v);
        if (!v.len)
            continue;
        for (int k = 0; k < 3; k++) {
            int j = cw->bottom_up ? 2 - k : k;

            if (cw->levels & bits[j])
                apply_cpuset_level(t, v.buf, order[j], cw->bottom_up);
        }
    }
    dirlist_release(&top);
    strbuf_release(&v);
}

static void run_cpu_suppress(struct tick *t)
{
    struct qos_runner *r = t->r;
    const struct qos_threshold *cfg = &r->slo.threshold;
    char qos_dir[CG_PATH_MAX];
    struct dirlist pods = {0}, ctrs = {0};
    struct qos_cpuset_input cin = {0};
    struct qos_suppress_plan plan;
    struct cg_cpuset full, cur;
    struct qos_host_app *apps = NULL;
    size_t napps = 0;
    struct cg_file f = CG_FILE_INIT;
    int64_t milli;

    t->strat = QOS_RUNNER_CPU_SUPPRESS;
    if (!(r->o.features & QOS_RUNNER_F_BE_CPU_SUPPRESS))
        return;
    if (cg_qos_dir(r->o.layout->driver, CG_QOS_BESTEFFORT, qos_dir, sizeof(qos_dir)) < 0 ||
        !cgroup_dir_exists(r, CG_CPUSET_CPUS, qos_dir))
        return; /* no BestEffort cgroup (yet): nothing to hold */
    if (list_subdirs(r->o.layout, "cpuset", qos_dir, &pods) < 0)
        note_error(t, "cannot list the BestEffort pod cgroups");
    for (size_t i = 0; i < pods.n; i++)
        if (list_subdirs(r->o.layout, "cpuset", pods.v[i], &ctrs) < 0)
            note_error(t, "cannot list the BestEffort container cgroups");

    cin.cpus = r->cpus;
    cin.ncpus = r->ncpus;
    cin.pods = t->pods;
    cin.npods = t->npods;
    qos_cpusuppress_full_cpuset(&cin, &full);

    if (!cfg->enable) {
        qos_cpusuppress_recover_plan(&full, &plan);
        apply_suppress_plan(t, &plan, qos_dir, &pods, &ctrs);
        goto out;
    }
    {
        struct qos_suppress_input in = {
            .cfg = cfg, .node = &t->node, .pods = t->pods, .npods = t->npods};

        if (!t->has_node || !last(t, MC_NODE_CPU_USAGE, NULL, &in.node_cpu_usage))
            goto out; /* upstream skips the tick without a node sample */
        if (qos_host_apps_from_nodeslo(t->slo_json, &apps, &napps) < 0)
            napps = 0;
        for (size_t i = 0; i < napps; i++)
            apps[i].has_cpu_usage =
                last(t, MC_HOST_APP_CPU_USAGE, apps[i].name, &apps[i].cpu_usage);
        in.apps = apps;
        in.napps = napps;
        milli = qos_cpusuppress_milli(&in);
    }

    if (cfg->cpu_suppress_policy == QOS_SUPPRESS_CFS_QUOTA) {
        int64_t quota = CG_UNLIMITED;

        if (cg_file_open_res(&f, r->o.layout, CG_CPU_CFS_QUOTA, qos_dir) < 0 ||
            cg_read_i64(&f, r->o.layout->version, CG_CPU_CFS_QUOTA, &quota) < 0) {
            note_error(t, "cannot read the BestEffort cfs quota");
            goto out;
        }
        qos_cpusuppress_cfs_plan(milli, t->node.capacity.v[QOS_RES_CPU], quota, &full, &plan);
    } else {
        struct qos_cpuset_result res;

        if (cg_file_open_res(&f, r->o.layout, CG_CPUSET_CPUS, qos_dir) < 0 ||
            cg_read_cpuset(&f, &cur) < 0) {
            note_error(t, "cannot read the BestEffort cpuset");
            goto out;
        }
        cin.suppress_milli = milli;
        cin.current_be_cpus = cg_cpuset_count(&cur);
        qos_cpusuppress_cpuset(&cin, &res);
        qos_cpusuppress_cpuset_plan(r->o.kubelet_cpu_policy, &cur, &res.cpus, &full, &plan);
        log_debug(COMP, "be cpu suppress: %lld milli, %d cpus", (long long)milli, res.want);
    }
    apply_suppress_plan(t, &plan, qos_dir, &pods, &ctrs);
out:
    cg_file_release(&f);
    free(apps);
    dirlist_release(&pods);
    dirlist_release(&ctrs);
}

/* ---- eviction ---- */

static bool is_be_feature(const char *feature)
{
    return !strcmp(feature, QOS_FEATURE_BE_MEMORY_EVICT) ||
           !strcmp(feature, QOS_FEATURE_BE_CPU_EVICT);
}

static bool evict_one(void *ctx, const struct qos_evict_task *task, const struct qos_pod *pod)
{
    struct tick *t = ctx;
    struct qos_runner *r = t->r;
    int rc;

    /* The BE victim lists hold pods labelled BE only; anything else is a bug here. */
    if (is_be_feature(task->feature))
        CHECK(pod->qos_label == API_QOS_BE);
    if (!r->o.evict)
        return false;
    rc = r->o.evict(r->o.evict_ctx, task->feature, pod, t->now);
    if (rc < 0) {
        struct strbuf m = STRBUF_INIT;

        strbuf_addf(&m, "cannot evict pod \"%s/%s\" for %s: %s", pod->namespace, pod->name,
                    task->feature, strerror(-rc));
        note_error(t, m.buf);
        strbuf_release(&m);
        return false;
    }
    counters(t)->evictions++;
    log_info(COMP, "evicted pod \"%s/%s\" for %s", pod->namespace, pod->name, task->feature);
    return true;
}

static void log_skipped(struct tick *t, const char *const *skipped, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (skipped[i] && *skipped[i])
            log_debug(COMP, "strategy %s: %s", qos_runner_strategy_name(t->strat), skipped[i]);
}

static void run_memory_evict(struct tick *t)
{
    struct qos_runner *r = t->r;
    const uint32_t f = r->o.features;
    struct qos_memevict_input in = {0};
    struct qos_memevict_plan plan;
    struct qos_evict_result res;
    int rc;

    t->strat = QOS_RUNNER_MEMORY_EVICT;
    if (!(f & (QOS_RUNNER_F_BE_MEMORY_EVICT | QOS_RUNNER_F_MEMORY_EVICT |
               QOS_RUNNER_F_MEMORY_ALLOCATABLE_EVICT)) ||
        !t->has_node || qos_memevict_cooling(r->mem_has_last, r->mem_last_ms, t->now))
        return;
    in.cfg = &r->slo.threshold;
    in.node = &t->node;
    in.pods = t->pods;
    in.npods = t->npods;
    in.has_node_used = last(t, MC_NODE_MEMORY_USAGE, NULL, &in.node_used);
    in.be_memory_evict = f & QOS_RUNNER_F_BE_MEMORY_EVICT;
    in.memory_evict = f & QOS_RUNNER_F_MEMORY_EVICT;
    in.memory_allocatable_evict = f & QOS_RUNNER_F_MEMORY_ALLOCATABLE_EVICT;
    if ((rc = qos_memevict_plan(&in, &plan)) < 0) {
        if (rc != -EINVAL)
            note_error(t, "cannot plan memory eviction");
        return;
    }
    log_skipped(t, plan.skipped, ARRAY_SIZE(plan.skipped));
    if (plan.ntasks &&
        qos_evict_run(plan.tasks, plan.ntasks, r->o.recent, t->now, evict_one, t, &res) == 0 &&
        res.nevicted > 0) {
        r->mem_has_last = true;
        r->mem_last_ms = t->now;
    }
    qos_memevict_plan_release(&plan);
}

static bool be_metrics(struct tick *t, int64_t window_s, struct qos_be_cpu_input *be)
{
    static const char *const ids[3] = {MC_BE_CPU_USAGE, MC_BE_CPU_REQUEST, MC_BE_CPU_REAL_LIMIT};
    double *avg[3] = {&be->avg.usage, &be->avg.request, &be->avg.real_limit};
    double *cur[3] = {&be->current.usage, &be->current.request, &be->current.real_limit};
    struct mc_result res;

    be->count = INT64_MAX;
    for (int i = 0; i < 3; i++) {
        if (!query(t, MC_NODE_BE, ids[i], window_s * 1000, &res) ||
            !last(t, MC_NODE_BE, ids[i], cur[i]))
            return false;
        *avg[i] = res.avg;
        if ((int64_t)res.count < be->count)
            be->count = (int64_t)res.count;
    }
    return true;
}

static void run_cpu_evict(struct tick *t)
{
    struct qos_runner *r = t->r;
    const uint32_t f = r->o.features;
    const struct qos_threshold *cfg = &r->slo.threshold;
    int64_t collect_s = r->o.collect_interval_ms / 1000 > 0 ? r->o.collect_interval_ms / 1000 : 1;
    struct qos_cpuevict_input in = {0};
    struct qos_be_cpu_input be = {0};
    struct qos_cpuevict_plan plan;
    struct qos_evict_result res;
    struct mc_result node;
    int rc;

    t->strat = QOS_RUNNER_CPU_EVICT;
    if (!(f & (QOS_RUNNER_F_BE_CPU_EVICT | QOS_RUNNER_F_CPU_EVICT |
               QOS_RUNNER_F_CPU_ALLOCATABLE_EVICT)))
        return;
    if (!r->cpu_started) {
        /* Upstream's cool-down also runs from the agent's start. */
        r->cpu_started = true;
        r->cpu_last_ms = t->now;
    }
    if (!t->has_node || qos_cpuevict_cooling(r->cpu_last_ms, t->now))
        return;
    be.window_s = qos_cpuevict_window_seconds(collect_s, cfg);
    be.collect_interval_s = collect_s;
    in.cfg = cfg;
    in.node = &t->node;
    in.pods = t->pods;
    in.npods = t->npods;
    in.be = be_metrics(t, be.window_s, &be) ? &be : NULL;
    if (query(t, MC_NODE_CPU_USAGE, NULL, be.window_s * 1000, &node)) {
        in.has_node_usage = true;
        in.avg_node_cores = node.avg;
    }
    in.be_cpu_evict = f & QOS_RUNNER_F_BE_CPU_EVICT;
    in.cpu_evict = f & QOS_RUNNER_F_CPU_EVICT;
    in.cpu_allocatable_evict = f & QOS_RUNNER_F_CPU_ALLOCATABLE_EVICT;
    if ((rc = qos_cpuevict_plan(&in, &plan)) < 0) {
        if (rc != -EINVAL)
            note_error(t, "cannot plan cpu eviction");
        return;
    }
    log_skipped(t, plan.skipped, ARRAY_SIZE(plan.skipped));
    if (plan.ntasks &&
        qos_evict_run(plan.tasks, plan.ntasks, r->o.recent, t->now, evict_one, t, &res) == 0 &&
        res.nevicted > 0)
        r->cpu_last_ms = t->now;
    qos_cpuevict_plan_release(&plan);
}

/* ---- CPU burst (cfs_burst_us) ---- */

static bool cg_qos_of(enum qos_kube_class k, enum cg_qos *ret)
{
    switch (k) {
    case QOS_KUBE_GUARANTEED:
        *ret = CG_QOS_GUARANTEED;
        return true;
    case QOS_KUBE_BURSTABLE:
        *ret = CG_QOS_BURSTABLE;
        return true;
    case QOS_KUBE_BESTEFFORT:
        *ret = CG_QOS_BESTEFFORT;
        return true;
    default:
        return false;
    }
}

static void run_cpu_burst(struct tick *t)
{
    struct qos_runner *r = t->r;
    char pod_dir[CG_PATH_MAX], ctr_dir[CG_PATH_MAX];

    t->strat = QOS_RUNNER_CPU_BURST;
    /* As upstream: nothing without a NodeSLO that has the strategy (the manager always
     * renders one), not even the reset to the defaults. */
    if (!(r->o.features & QOS_RUNNER_F_CPU_BURST) || !r->slo_cpu_burst)
        return;
    for (size_t i = 0; i < t->npods; i++) {
        const struct qos_pod *p = &t->pods[i];
        struct qos_cpu_burst cfg;
        enum cg_qos q;

        if (!qos_cpuburst_pod_eligible(p) || !p->uid || !cg_qos_of(p->kube_qos, &q) ||
            cg_pod_dir(r->o.layout->driver, q, p->uid, pod_dir, sizeof(pod_dir)) < 0)
            continue;
        if (qos_cpuburst_pod_config(&r->slo.cpu_burst, p->cpu_burst, &cfg) < 0)
            log_debug(COMP, "pod \"%s/%s\": cannot decode annotation %s, using the node's",
                      p->namespace, p->name, QOS_ANNOTATION_CPU_BURST);
        for (size_t j = 0; j < p->ncontainers; j++) {
            const struct qos_container *c = &p->containers[j];

            if (!c->id || !*c->id ||
                cg_container_dir(r->o.layout->driver, pod_dir, c->id, ctr_dir, sizeof(ctr_dir)) < 0)
                continue;
            (void)apply_i64(t, CG_CPU_BURST, ctr_dir,
                            qos_cpuburst_container_burst_us(&cfg, c->limits.v[QOS_RES_CPU]));
        }
        (void)apply_i64(t, CG_CPU_BURST, pod_dir, qos_cpuburst_pod_burst_us(&cfg, p));
    }
}

/* ---- reads of current values ---- */

/* The logical value of r in cgroup dir now: 0, -ENOENT (file or cgroup absent), other -errno. */
static int read_res(const struct qos_runner *r, enum cg_res res, const char *dir, int64_t *ret)
{
    struct cg_file f = CG_FILE_INIT;
    int rc = cg_file_open_res(&f, r->o.layout, res, dir);

    if (rc == 0)
        rc = cg_read_i64(&f, r->o.layout->version, res, ret);
    cg_file_release(&f);
    return rc;
}

/* Quota order with CG_UNLIMITED as the largest: whether a >= b. */
static bool quota_ge(int64_t a, int64_t b)
{
    if (a == CG_UNLIMITED)
        return true;
    return b != CG_UNLIMITED && a >= b;
}

/* ---- CPU burst (CFS quota burst) ---- */

/* xorshift64*: the limiters' random initial tokens, in [0, 1). */
static double random01(struct qos_runner *r)
{
    uint64_t x = r->rng;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->rng = x;
    return (double)((x * UINT64_C(0x2545F4914F6CDD1D)) >> 11) / 9007199254740992.0;
}

/* The token bucket of container id, created zeroed ("no limiter yet") when absent. */
static struct qos_burst_limiter *limiter_for(struct qos_runner *r, const char *id)
{
    size_t lo = 0, hi = r->nlimiters;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(r->limiters[mid].id, id);

        if (c == 0)
            return &r->limiters[mid].l;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (r->nlimiters == r->limiters_alloc) {
        r->limiters_alloc = r->limiters_alloc ? 2 * r->limiters_alloc : 16;
        r->limiters = xrealloc(r->limiters, r->limiters_alloc * sizeof(*r->limiters));
    }
    memmove(&r->limiters[lo + 1], &r->limiters[lo], (r->nlimiters - lo) * sizeof(*r->limiters));
    r->limiters[lo] = (struct burst_limiter){.id = xstrdup(id)};
    r->nlimiters++;
    return &r->limiters[lo].l;
}

/* Upstream Recycle(): buckets unused for 2 x their period go (and any never started). */
static void recycle_limiters(struct qos_runner *r, int64_t now_ms)
{
    size_t k = 0;

    for (size_t i = 0; i < r->nlimiters; i++) {
        struct burst_limiter *e = &r->limiters[i];

        if (!e->l.initialized || qos_burst_limiter_expired(&e->l, now_ms)) {
            free(e->id);
            continue;
        }
        r->limiters[k++] = *e;
    }
    r->nlimiters = k;
}

/*
 * The share-pool state over the average of the last min(5 x reconcile interval, 10 s) of the
 * node's usage and of the usage of the pods labelled LSE, LSR or BE (the only ones it subtracts).
 */
static enum qos_burst_node_state burst_node_state(struct tick *t)
{
    struct qos_runner *r = t->r;
    int64_t window = 5 * r->o.interval_ms < 10000 ? 5 * r->o.interval_ms : 10000;
    struct qos_share_pool_input in = {0};
    struct qos_pod *pods = NULL;
    enum qos_burst_node_state st;
    struct mc_result res;

    if (query(t, MC_NODE_CPU_USAGE, NULL, window, &res)) {
        in.has_node_usage = true;
        in.node_usage = res.avg;
    }
    if (t->npods)
        pods = xcalloc(t->npods, sizeof(*pods));
    for (size_t i = 0; i < t->npods; i++) {
        struct qos_pod *p = &pods[i];
        enum api_qos q = t->pods[i].qos_label;

        *p = t->pods[i]; /* shallow: borrowed for the call, never released */
        p->has_cpu_usage = false;
        if (p->uid && (q == API_QOS_LSE || q == API_QOS_LSR || q == API_QOS_BE) &&
            query(t, MC_POD_CPU_USAGE, p->uid, window, &res)) {
            p->has_cpu_usage = true;
            p->cpu_usage = res.avg;
        }
    }
    in.ncpus = r->ncpus;
    in.pods = pods;
    in.npods = t->npods;
    in.threshold_percent = r->slo.cpu_burst.share_pool_threshold_percent;
    st = qos_cpuburst_node_state(&in, NULL);
    free(pods);
    return st;
}

/* Writes one container's quota moves; the pod's quota follows (*pod_quota tracks it). */
static void apply_quota_burst(struct tick *t, const struct qos_burst_container_result *res,
                              const char *pod_dir, const char *ctr_dir, int64_t *pod_quota)
{
    for (size_t k = 0; k < res->nwrites; k++) {
        const struct qos_quota_write *w = &res->writes[k];

        /* Upstream stops at the first failed write: the other would break the hierarchy. */
        if (apply_i64(t, CG_CPU_CFS_QUOTA, w->pod ? pod_dir : ctr_dir, w->quota) < 0)
            return;
        if (w->pod)
            *pod_quota = w->quota;
    }
}

static void run_cfs_quota_burst(struct tick *t)
{
    struct qos_runner *r = t->r;
    char pod_dir[CG_PATH_MAX], ctr_dir[CG_PATH_MAX];
    enum qos_burst_node_state state = QOS_BURST_NODE_UNKNOWN;
    bool have_state = false;

    t->strat = QOS_RUNNER_CFS_QUOTA_BURST;
    /* As run_cpu_burst(): without the strategy in a NodeSLO a quota kubelet left at -1 (no CFS
     * quota on this node) must not become the limit. */
    if (!(r->o.features & QOS_RUNNER_F_CPU_BURST) || !r->slo_cpu_burst)
        return;
    for (size_t i = 0; i < t->npods; i++) {
        const struct qos_pod *p = &t->pods[i];
        struct qos_cpu_burst cfg;
        int64_t pod_quota = CG_UNLIMITED;
        bool has_pod_quota;
        enum cg_qos q;
        int rc;

        if (!qos_cpuburst_pod_eligible(p) || !p->uid || !cg_qos_of(p->kube_qos, &q) ||
            cg_pod_dir(r->o.layout->driver, q, p->uid, pod_dir, sizeof(pod_dir)) < 0)
            continue;
        (void)qos_cpuburst_pod_config(&r->slo.cpu_burst, p->cpu_burst, &cfg);
        rc = read_res(r, CG_CPU_CFS_QUOTA, pod_dir, &pod_quota);
        has_pod_quota = rc == 0;
        if (rc < 0 && rc != -ENOENT)
            note_error(t, "cannot read a pod's cfs quota");
        for (size_t j = 0; j < p->ncontainers; j++) {
            const struct qos_container *c = &p->containers[j];
            struct qos_burst_limiter scratch = {0}, *lim = &scratch;
            struct qos_burst_container_input in = {0};
            struct qos_burst_container_result res;

            if (!c->id || !*c->id || !c->running ||
                qos_cpuburst_base_quota(c->limits.v[QOS_RES_CPU]) <= 0 ||
                cg_container_dir(r->o.layout->driver, pod_dir, c->id, ctr_dir, sizeof(ctr_dir)) < 0)
                continue;
            rc = read_res(r, CG_CPU_CFS_QUOTA, ctr_dir, &in.current_quota);
            if (rc < 0) {
                if (rc != -ENOENT)
                    note_error(t, "cannot read a container's cfs quota");
                continue; /* upstream skips the container this round */
            }
            if (!have_state) {
                state = burst_node_state(t);
                have_state = true;
            }
            /* Only a limiter with a period is kept (upstream creates none otherwise). */
            if (cfg.cfs_quota_burst_period_seconds >= 0)
                lim = limiter_for(r, c->id);
            in.limit_milli = c->limits.v[QOS_RES_CPU];
            in.pod_quota = pod_quota;
            in.has_usage = c->has_cpu_usage;
            in.usage_cores = c->cpu_usage;
            in.has_throttled = c->has_throttled;
            in.throttled_last = c->throttled_ratio;
            qos_cpuburst_container(&cfg, state, lim, &in, random01(r), t->now, &res);
            if (res.nwrites == 0)
                continue;
            if (!has_pod_quota) {
                log_debug(COMP, "pod \"%s/%s\": no pod cfs quota to move with the container's",
                          p->namespace, p->name);
                continue;
            }
            log_debug(COMP, "cfs quota burst of \"%s/%s\" container \"%s\": %lld -> %lld",
                      p->namespace, p->name, c->name ? c->name : "", (long long)in.current_quota,
                      (long long)res.target);
            apply_quota_burst(t, &res, pod_dir, ctr_dir, &pod_quota);
        }
    }
    recycle_limiters(r, t->now);
}

/* ---- memory QoS ---- */

/* The cgroup resource of each memcg field. */
static const enum cg_res memcg_res[QOS_MEMCG_COUNT] = {
    [QOS_MEMCG_MIN] = CG_MEMORY_MIN,
    [QOS_MEMCG_LOW] = CG_MEMORY_LOW,
    [QOS_MEMCG_HIGH] = CG_MEMORY_HIGH,
    [QOS_MEMCG_WMARK_RATIO] = CG_MEMORY_WMARK_RATIO,
    [QOS_MEMCG_WMARK_SCALE_FACTOR] = CG_MEMORY_WMARK_SCALE_FACTOR,
    [QOS_MEMCG_WMARK_MIN_ADJ] = CG_MEMORY_WMARK_MIN_ADJ,
    [QOS_MEMCG_PRIORITY] = CG_MEMORY_PRIORITY,
    [QOS_MEMCG_USE_PRIORITY_OOM] = CG_MEMORY_USE_PRIORITY_OOM,
    [QOS_MEMCG_OOM_GROUP] = CG_MEMORY_OOM_GROUP,
    [QOS_MEMCG_PAGECACHE_ENABLE] = CG_MEMORY_PAGECACHE_ENABLE,
    [QOS_MEMCG_PAGECACHE_SIZE] = CG_MEMORY_PAGECACHE_SIZE,
    [QOS_MEMCG_PAGECACHE_SYNC] = CG_MEMORY_PAGECACHE_SYNC,
};

/* The memcg values of one cgroup and its depth (0 kube QoS, 1 pod, 2 container). */
struct memcg_dir {
    char *dir;
    int level;
    struct qos_memcg m;
};

struct memcg_dirs {
    struct memcg_dir *v;
    size_t n, alloc;
};

static void memcg_dirs_add(struct memcg_dirs *d, const char *dir, int level,
                           const struct qos_memcg *m)
{
    if (d->n == d->alloc) {
        d->alloc = d->alloc ? 2 * d->alloc : 16;
        d->v = xrealloc(d->v, d->alloc * sizeof(*d->v));
    }
    d->v[d->n++] = (struct memcg_dir){.dir = xstrdup(dir), .level = level, .m = *m};
}

static void memcg_dirs_release(struct memcg_dirs *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->v[i].dir);
    free(d->v);
    memset(d, 0, sizeof(*d));
}

/* min/low/high at or above the unlimited bound (memoryqos.h says MaxInt64) are "max". */
static void memcg_value(enum qos_memcg_field f, int64_t v, char *buf, size_t size)
{
    if (qos_memcg_mergeable(f) && v >= CG_MEMORY_UNLIMITED_MIN)
        (void)snprintf(buf, size, "max");
    else
        (void)snprintf(buf, size, "%lld", (long long)v);
}

/* Whether the new min/low/high value v is above cur (CG_UNLIMITED the largest). */
static bool memcg_raises(int64_t v, int64_t cur)
{
    if (cur == CG_UNLIMITED)
        return false;
    return v >= CG_MEMORY_UNLIMITED_MIN || v > cur;
}

/*
 * The resource executor's LeveledUpdateBatch: top-down, mergeable fields are raised where the
 * new value is larger (never lowered: a child's protection must not exceed its parent's on the
 * way) and the others written; then bottom-up, the mergeable fields get their final values. In
 * dry-run the raising pass is left out: nothing changes, the final values say it all.
 */
static void apply_memcg_leveled(struct tick *t, const struct memcg_dirs *d, uint32_t supported)
{
    struct qos_runner *r = t->r;
    char v[32];

    for (int level = 0; level <= 2; level++)
        for (size_t i = 0; i < d->n; i++) {
            const struct memcg_dir *e = &d->v[i];

            if (e->level != level)
                continue;
            for (int f = 0; f < QOS_MEMCG_COUNT; f++) {
                uint32_t bit = 1u << f;
                int64_t cur = 0;

                if (!(e->m.set & bit & supported))
                    continue;
                if (!qos_memcg_mergeable(f)) {
                    memcg_value(f, e->m.v[f], v, sizeof(v));
                    (void)apply(t, memcg_res[f], e->dir, v);
                    continue;
                }
                if (r->o.dry_run || read_res(r, memcg_res[f], e->dir, &cur) < 0 ||
                    !memcg_raises(e->m.v[f], cur))
                    continue;
                memcg_value(f, e->m.v[f], v, sizeof(v));
                (void)apply(t, memcg_res[f], e->dir, v);
            }
        }
    for (int level = 2; level >= 0; level--)
        for (size_t i = d->n; i-- > 0;) {
            const struct memcg_dir *e = &d->v[i];

            if (e->level != level)
                continue;
            for (int f = 0; f < QOS_MEMCG_COUNT; f++)
                if ((e->m.set & (1u << f) & supported) && qos_memcg_mergeable(f)) {
                    memcg_value(f, e->m.v[f], v, sizeof(v));
                    (void)apply(t, memcg_res[f], e->dir, v);
                }
        }
}

/*
 * Of the memcg fields in used, those whose file the kube root has. The others are counted
 * unsupported once (a kernel has such a file in every memcg or in none), instead of once per
 * pod and container every tick.
 */
static uint32_t memcg_supported(struct tick *t, const char *root, uint32_t used)
{
    char path[CG_PATH_MAX];
    uint32_t mask = 0;
    struct stat st;

    for (int f = 0; f < QOS_MEMCG_COUNT; f++) {
        if (!(used & (1u << f)) ||
            cg_res_write_path(t->r->o.layout, memcg_res[f], root, path, sizeof(path)) < 0)
            continue;
        if (stat(path, &st) == 0)
            mask |= 1u << f;
        else
            note_unsupported(t, memcg_res[f]);
    }
    return mask;
}

static void run_memory_qos(struct tick *t)
{
    struct qos_runner *r = t->r;
    const struct qos_resource_qos *node = &r->slo.resource_qos;
    char root[CG_PATH_MAX], dir[CG_PATH_MAX], ctr_dir[CG_PATH_MAX];
    const enum cg_qos kube_dirs[] = {CG_QOS_GUARANTEED, CG_QOS_BURSTABLE, CG_QOS_BESTEFFORT};
    long page = sysconf(_SC_PAGESIZE);
    struct memcg_dirs d = {0};
    struct qos_memqos_kube kube;
    uint32_t used = 0, supported;

    t->strat = QOS_RUNNER_MEMORY_QOS;
    /* Upstream needs the Node (allocatable memory bounds memory.high of unlimited containers),
     * and a NodeSLO with the strategy: without one it writes nothing, not even the neutral
     * values (which would clear kubelet's memory.oom.group). */
    if (!(r->o.features & QOS_RUNNER_F_CGROUP_RECONCILE) || !t->has_node || !r->slo_resource_qos)
        return;
    if (cg_kube_root_dir(r->o.layout->driver, root, sizeof(root)) < 0 ||
        !cgroup_dir_exists(r, CG_MEMORY_MIN, root))
        return; /* no kube cgroups (yet) */

    qos_memqos_kube_level(node, t->pods, t->npods, &kube);
    for (size_t k = 0; k < ARRAY_SIZE(kube_dirs); k++) {
        const struct qos_memcg *m[] = {&kube.guaranteed, &kube.burstable, &kube.besteffort};

        if (cg_qos_dir(r->o.layout->driver, kube_dirs[k], dir, sizeof(dir)) >= 0)
            memcg_dirs_add(&d, dir, 0, m[k]);
    }
    for (size_t i = 0; i < t->npods; i++) {
        const struct qos_pod *p = &t->pods[i];
        struct qos_memory_qos cfg;
        struct qos_memcg m;
        enum cg_qos q;
        int rc;

        if (!p->active || !p->uid || !cg_qos_of(p->kube_qos, &q) ||
            cg_pod_dir(r->o.layout->driver, q, p->uid, dir, sizeof(dir)) < 0)
            continue;
        rc = qos_memqos_pod_config(node, p, &cfg);
        if (rc == -ENOENT)
            continue; /* no QoS class: upstream has no config for it */
        if (rc < 0)
            log_debug(COMP, "pod \"%s/%s\": cannot decode annotation %s, using the node's",
                      p->namespace, p->name, QOS_ANNOTATION_MEMORY_QOS);
        qos_memqos_pod(&cfg, p, &m);
        memcg_dirs_add(&d, dir, 1, &m);
        for (size_t j = 0; j < p->ncontainers; j++) {
            const struct qos_container *c = &p->containers[j];

            if (!c->id || !*c->id ||
                cg_container_dir(r->o.layout->driver, dir, c->id, ctr_dir, sizeof(ctr_dir)) < 0)
                continue;
            qos_memqos_container(&cfg, p, c, t->node.allocatable.v[QOS_RES_MEMORY],
                                 page > 0 ? page : 4096, &m);
            memcg_dirs_add(&d, ctr_dir, 2, &m);
        }
    }
    for (size_t i = 0; i < d.n; i++)
        used |= d.v[i].m.set;
    supported = memcg_supported(t, root, used);
    if (supported)
        apply_memcg_leveled(t, &d, supported);
    memcg_dirs_release(&d);
}

/* ---- batch resources ---- */

/* Upstream acts only on pods the webhook gave an extended-resource-spec: those with batch
 * resources in some container. */
static bool has_batch_resources(const struct qos_pod *p)
{
    for (size_t i = 0; i < p->ncontainers; i++) {
        const struct qos_container *c = &p->containers[i];

        if (c->requests.v[QOS_RES_BATCH_CPU] > 0 || c->limits.v[QOS_RES_BATCH_CPU] > 0 ||
            c->requests.v[QOS_RES_BATCH_MEMORY] > 0 || c->limits.v[QOS_RES_BATCH_MEMORY] > 0)
            return true;
    }
    return false;
}

/* Annotation node.koordinator.sh/cpu-normalization-ratio of the Node; 0 when absent or bad. */
static double normalization_ratio(const cJSON *node)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(node, "metadata");
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
    const char *s = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(ann, "node.koordinator.sh/cpu-normalization-ratio"));
    double v;

    return s && parse_double(s, &v) == 0 && v > 0 ? v : 0;
}

static void apply_batch(struct tick *t, const char *dir, const struct qos_batch_values *v)
{
    (void)apply_i64(t, CG_CPU_SHARES, dir, v->cpu_shares);
    (void)apply_i64(t, CG_CPU_CFS_QUOTA, dir, v->cfs_quota);
    (void)apply_i64(t, CG_MEMORY_LIMIT, dir, v->memory_limit);
}

static void run_batch_resource(struct tick *t)
{
    struct qos_runner *r = t->r;
    const struct qos_threshold *th = &r->slo.threshold;
    char pod_dir[CG_PATH_MAX], ctr_dir[CG_PATH_MAX];
    struct qos_batch_node node = {0};

    t->strat = QOS_RUNNER_BATCH_RESOURCE;
    if (!(r->o.features & QOS_RUNNER_F_BATCH_RESOURCE))
        return;
    /* The BestEffort QoS-level quota governs while suppression uses it (reference 3.1). */
    node.suppress_cfs_quota = th->enable && th->cpu_suppress_policy == QOS_SUPPRESS_CFS_QUOTA;
    node.normalization_ratio = normalization_ratio(t->node_json);
    for (size_t i = 0; i < t->npods; i++) {
        const struct qos_pod *p = &t->pods[i];
        struct qos_batch_values pv, cv;
        int64_t cur = CG_UNLIMITED;
        bool pod_first;
        enum cg_qos q;

        if (!p->active || !qos_batch_applies(p) || !has_batch_resources(p) || !p->uid ||
            !cg_qos_of(p->kube_qos, &q) ||
            cg_pod_dir(r->o.layout->driver, q, p->uid, pod_dir, sizeof(pod_dir)) < 0)
            continue;
        qos_batch_pod(p, &node, &pv);
        /* cgroup v1 refuses a child quota above its parent's: a growing pod goes first. */
        pod_first = read_res(r, CG_CPU_CFS_QUOTA, pod_dir, &cur) < 0 || quota_ge(pv.cfs_quota, cur);
        if (pod_first)
            apply_batch(t, pod_dir, &pv);
        for (size_t j = 0; j < p->ncontainers; j++) {
            const struct qos_container *c = &p->containers[j];

            if (!c->id || !*c->id ||
                cg_container_dir(r->o.layout->driver, pod_dir, c->id, ctr_dir, sizeof(ctr_dir)) < 0)
                continue;
            qos_batch_container(c, &node, &cv);
            apply_batch(t, ctr_dir, &cv);
        }
        if (!pod_first)
            apply_batch(t, pod_dir, &pv);
    }
}

/* ---- node-level knobs: shared by resctrl, system config and group identity ---- */

/* Files outside the cgroup tree that may be missing, for "unsupported, logged once". */
enum knob {
    /* 0 .. QOS_SYSCTL_COUNT - 1: enum qos_sysctl */
    KNOB_SCHED_FEATURES = QOS_SYSCTL_COUNT,
    KNOB_RESCTRL,
    KNOB_BVT,
};

/* Bound on a tasks file or sched_features read (a tasks file lists up to pid_max TIDs). */
#define TEXT_MAX (8 << 20)

/* A file the reference names by its host path ("/proc/sys/vm/...", "/sys/kernel/..."), under
 * --proc-root or --sys-root. */
static int host_path(const struct cg_layout *l, const char *abs, char *buf, size_t size)
{
    if (!strncmp(abs, "/proc/", 6))
        return cg_join_path(l->roots.proc_root, abs + 6, buf, size);
    if (!strncmp(abs, "/sys/", 5))
        return cg_join_path(l->roots.sys_root, abs + 5, buf, size);
    return -EINVAL;
}

/* Reads the whole file at path into out (replacing it), at most max bytes. 0, -E2BIG, -errno. */
static int read_text(const char *path, size_t max, struct strbuf *out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), r = 0;

    strbuf_reset(out);
    if (fd < 0)
        return -errno;
    for (;;) {
        ssize_t n;

        strbuf_grow(out, 4096);
        n = read(fd, out->buf + out->len, out->alloc - out->len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            r = -errno;
            break;
        }
        if (n == 0)
            break;
        strbuf_setlen(out, out->len + (size_t)n);
        if (out->len > max) {
            r = -E2BIG;
            break;
        }
    }
    (void)close(fd);
    return r;
}

static void note_unsupported_knob(struct tick *t, enum knob k, const char *what)
{
    struct qos_runner *r = t->r;

    counters(t)->unsupported++;
    if (!(r->nk.logged & (1u << k))) {
        r->nk.logged |= 1u << k;
        log_info(COMP, "strategy %s: %s: not supported here, skipping it",
                 qos_runner_strategy_name(t->strat), what);
    }
}

/* Counts the result of a write of a file outside the cgroup tree as apply() does; -ENOENT is
 * returned uncounted (the caller knows what a missing file means there). */
static int count_write(struct tick *t, int rc)
{
    switch (rc) {
    case CG_WRITE_DONE:
        counters(t)->writes++;
        break;
    case CG_WRITE_UNCHANGED:
        counters(t)->unchanged++;
        break;
    case CG_WRITE_DRY_RUN:
        counters(t)->dry_run++;
        break;
    case -ENOENT:
        break;
    default:
        note_error(t, cg_writer_error(&t->r->w));
        break;
    }
    return rc;
}

static int apply_file(struct tick *t, const char *path, const char *value, cg_same_fn same)
{
    return count_write(t, cg_write_file(&t->r->w, path, value, same));
}

/* ---- resctrl (reference 3.6) ---- */

static const char *const rdt_groups[] = {"LSR", "LS", "BE"};
static const enum qos_class rdt_classes[] = {QOS_CLASS_LSR, QOS_CLASS_LS, QOS_CLASS_BE};
#define RDT_NGROUPS ARRAY_SIZE(rdt_groups)

/* A set of thread ids, kept sorted. */
struct tids {
    int *v;
    size_t n, alloc;
};

static int cmp_tid(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;

    return x < y ? -1 : (x > y);
}

static bool tids_has(const struct tids *s, int tid)
{
    return s->n && bsearch(&tid, s->v, s->n, sizeof(*s->v), cmp_tid);
}

static void tids_insert(struct tids *s, int tid)
{
    size_t i = 0;

    if (s->n == s->alloc) {
        s->alloc = s->alloc ? 2 * s->alloc : 64;
        s->v = xrealloc(s->v, s->alloc * sizeof(*s->v));
    }
    while (i < s->n && s->v[i] < tid)
        i++;
    memmove(s->v + i + 1, s->v + i, (s->n - i) * sizeof(*s->v));
    s->v[i] = tid;
    s->n++;
}

/* The TIDs of a tasks or cgroup.threads file (one decimal per line), sorted, into *ret
 * (emptied first). 0 or -errno of the read; lines that are not a TID are skipped. */
static int read_tids(const char *path, struct strbuf *scratch, struct tids *ret)
{
    int r = read_text(path, TEXT_MAX, scratch);

    ret->n = 0;
    if (r < 0)
        return r;
    for (char *p = scratch->buf; *p;) {
        char *end = strchr(p, '\n');
        int64_t v;

        if (end)
            *end = '\0';
        if (parse_i64(p, &v) == 0 && v > 0 && v <= INT32_MAX) {
            if (ret->n == ret->alloc) {
                ret->alloc = ret->alloc ? 2 * ret->alloc : 64;
                ret->v = xrealloc(ret->v, ret->alloc * sizeof(*ret->v));
            }
            ret->v[ret->n++] = (int)v;
        }
        p = end ? end + 1 : p + strlen(p);
    }
    if (ret->n)
        qsort(ret->v, ret->n, sizeof(*ret->v), cmp_tid);
    return 0;
}

/* Whether the CPUs are AMD's (vendor_id AuthenticAMD in <proc>/cpuinfo), read once: the MB
 * values differ (reference 3.6). */
static bool cpu_is_amd(struct qos_runner *r)
{
    char path[CG_PATH_MAX], buf[4096];
    const char *v;

    if (r->nk.vendor_read)
        return r->nk.amd;
    r->nk.vendor_read = true;
    if (cg_join_path(r->o.layout->roots.proc_root, "cpuinfo", path, sizeof(path)) < 0 ||
        read_small(path, buf, sizeof(buf)) <= 0 || !(v = strstr(buf, "vendor_id")))
        return false;
    v += strcspn(v, ":\n");
    if (*v == ':')
        v += 1 + strspn(v + 1, " \t");
    r->nk.amd = !strncmp(v, "AuthenticAMD", 12);
    return r->nk.amd;
}

/* Makes resctrl group dir (upstream's InitCatGroupIfNotExist). Whether it exists now. */
static bool resctrl_group(struct tick *t, const char *dir)
{
    struct stat st;
    struct strbuf m = STRBUF_INIT;

    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        return true;
    if (t->r->o.dry_run) {
        log_info(COMP, "dry run: would create resctrl group \"%s\"", dir);
        counters(t)->dry_run++;
        return false;
    }
    if (mkdir(dir, 0755) == 0 || errno == EEXIST) {
        counters(t)->writes++;
        log_info(COMP, "created resctrl group \"%s\"", dir);
        return true;
    }
    /* ENOSPC: the CPU has no free CLOSID for another group. */
    strbuf_addf(&m, "cannot create resctrl group \"%s\": %s", dir, strerror(errno));
    note_error(t, m.buf);
    strbuf_release(&m);
    return false;
}

/* The schemata of group g from its class's resctrlQOS (None values when disabled). */
static void resctrl_schemata(struct tick *t, const char *dir, size_t g, uint64_t cbm,
                             const int *ids, size_t nids, bool mb)
{
    const struct qos_resctrl_qos *c = &t->r->slo.resource_qos.classes[rdt_classes[g]].resctrl;
    struct strbuf text = STRBUF_INIT, m = STRBUF_INIT;
    char path[CG_PATH_MAX];
    uint64_t mask;
    int64_t mbv;

    /* L3 and MB apart, as upstream: a bad range of one does not hold back the other. */
    if (qos_resctrl_l3_mask(cbm, c->cat_range_start_percent, c->cat_range_end_percent, &mask) == 0)
        qos_resctrl_l3_line(mask, ids, nids, &text);
    else
        strbuf_addf(&m, "group %s: catRangeStartPercent %lld, catRangeEndPercent %lld: not a range",
                    rdt_groups[g], (long long)c->cat_range_start_percent,
                    (long long)c->cat_range_end_percent);
    if (mb && qos_resctrl_mb(c->mba_percent, cpu_is_amd(t->r), &mbv) == 0)
        qos_resctrl_mb_line(mbv, ids, nids, &text);
    else if (mb)
        strbuf_addf(&m, "%sgroup %s: mbaPercent %lld outside (0, 100]", m.len ? "; " : "",
                    rdt_groups[g], (long long)c->mba_percent);
    if (m.len)
        note_error(t, m.buf);
    if (text.len && cg_join_path(dir, "schemata", path, sizeof(path)) >= 0 &&
        apply_file(t, path, text.buf, qos_resctrl_schemata_holds) == -ENOENT) {
        strbuf_reset(&m);
        strbuf_addf(&m, "resctrl group \"%s\" has no schemata", dir);
        note_error(t, m.buf);
    }
    strbuf_release(&text);
    strbuf_release(&m);
}

/* The group's tasks file of pod directory pod_dir's cgroups: the TIDs of each (containers and
 * the sandbox, found by listing as the BestEffort ones are) missing from have are written. */
static void resctrl_pod_tasks(struct tick *t, const char *pod_dir, const char *tasks,
                              struct tids *have, struct strbuf *scratch)
{
    const struct cg_layout *l = t->r->o.layout;
    const char *file = l->version == CG_V2 ? "cgroup.threads" : "tasks";
    char abs[CG_PATH_MAX], path[CG_PATH_MAX], tid[24];
    struct dirlist dirs = {0};
    struct tids pod = {0};

    if (list_subdirs(l, "cpu", pod_dir, &dirs) < 0)
        goto out; /* the pod's cgroup is gone (or not made yet) */
    for (size_t i = 0; i < dirs.n; i++) {
        if (cg_dir_path(l, "cpu", dirs.v[i], abs, sizeof(abs)) < 0 ||
            cg_join_path(abs, file, path, sizeof(path)) < 0 || read_tids(path, scratch, &pod) < 0)
            continue; /* a container that just went away */
        for (size_t j = 0; j < pod.n; j++) {
            int rc;

            if (tids_has(have, pod.v[j]))
                continue;
            (void)snprintf(tid, sizeof(tid), "%d\n", pod.v[j]);
            rc = cg_append_file(&t->r->w, tasks, tid);
            if (rc == -ESRCH)
                continue; /* the thread exited meanwhile */
            if (count_write(t, rc) < 0)
                goto out;
            tids_insert(have, pod.v[j]);
        }
    }
out:
    free(pod.v);
    dirlist_release(&dirs);
}

/* Each active pod of an enabled class into its group (upstream reconcileResctrlGroups): never
 * cached, since TIDs are reused. */
static void resctrl_tasks(struct tick *t, const char *const *group_dirs, const bool *ready)
{
    struct qos_runner *r = t->r;
    struct tids have[RDT_NGROUPS] = {{0}};
    bool loaded[RDT_NGROUPS] = {false}, usable[RDT_NGROUPS];
    struct strbuf scratch = STRBUF_INIT;
    char pod_dir[CG_PATH_MAX], tasks[RDT_NGROUPS][CG_PATH_MAX];

    memcpy(usable, ready, sizeof(usable));
    for (size_t i = 0; i < t->npods; i++) {
        const struct qos_pod *p = &t->pods[i];
        const char *group = qos_resctrl_pod_group(&r->slo.resource_qos, p);
        enum cg_qos q;
        size_t g = 0;

        while (group && g < RDT_NGROUPS && strcmp(group, rdt_groups[g]))
            g++;
        if (!group || g == RDT_NGROUPS || !usable[g] || !p->uid || !cg_qos_of(p->kube_qos, &q) ||
            cg_pod_dir(r->o.layout->driver, q, p->uid, pod_dir, sizeof(pod_dir)) < 0)
            continue;
        if (!loaded[g]) {
            int rc = -ENAMETOOLONG;

            if (cg_join_path(group_dirs[g], "tasks", tasks[g], sizeof(tasks[g])) < 0 ||
                (rc = read_tids(tasks[g], &scratch, &have[g])) < 0) {
                struct strbuf m = STRBUF_INIT;

                strbuf_addf(&m, "cannot read the tasks of resctrl group \"%s\": %s", group_dirs[g],
                            err_str(rc));
                note_error(t, m.buf);
                strbuf_release(&m);
                usable[g] = false;
                continue;
            }
            loaded[g] = true;
        }
        resctrl_pod_tasks(t, pod_dir, tasks[g], &have[g], &scratch);
    }
    for (size_t g = 0; g < RDT_NGROUPS; g++)
        free(have[g].v);
    strbuf_release(&scratch);
}

static void run_resctrl(struct tick *t)
{
    struct qos_runner *r = t->r;
    const char *root = r->o.layout->roots.resctrl_root;
    char path[CG_PATH_MAX], buf[256], dirs[RDT_NGROUPS][CG_PATH_MAX];
    const char *group_dirs[RDT_NGROUPS];
    int ids[QOS_RESCTRL_CACHE_IDS_MAX];
    bool ready[RDT_NGROUPS] = {false}, mb;
    struct strbuf text = STRBUF_INIT;
    struct stat st;
    uint64_t cbm;
    unsigned ways;
    int n, rc;

    t->strat = QOS_RUNNER_RESCTRL;
    if (!(r->o.features & QOS_RUNNER_F_RDT_RESCTRL))
        return;
    /* No mount attempt (upstream mounts resctrl itself): a missing info dir is unsupported. */
    if (cg_join_path(root, "info/L3/cbm_mask", path, sizeof(path)) < 0)
        goto out;
    rc = read_small(path, buf, sizeof(buf));
    if (rc == -ENOENT || rc == -ENOTDIR) {
        strbuf_addf(&text, "no L3 CAT under \"%s\" (resctrl not mounted, or no cat_l3)", root);
        note_unsupported_knob(t, KNOB_RESCTRL, text.buf);
        goto out;
    }
    if (rc < 0 || qos_resctrl_parse_cbm(buf, &cbm) < 0 || qos_resctrl_ways(cbm, &ways) < 0) {
        strbuf_addf(&text, "cannot use \"%s\" (\"%s\")", path, rc < 0 ? err_str(rc) : buf);
        note_error(t, text.buf);
        goto out;
    }
    if (cg_join_path(root, "schemata", path, sizeof(path)) < 0 ||
        read_text(path, TEXT_MAX, &text) < 0 ||
        (n = qos_resctrl_cache_ids(text.buf, ids, ARRAY_SIZE(ids))) < 0) {
        strbuf_reset(&text);
        strbuf_addf(&text, "no L3 cache ids in \"%s\"", path);
        note_error(t, text.buf);
        goto out;
    }
    mb = cg_join_path(root, "info/MB", path, sizeof(path)) >= 0 && stat(path, &st) == 0 &&
         S_ISDIR(st.st_mode);
    for (size_t g = 0; g < RDT_NGROUPS; g++) {
        group_dirs[g] = dirs[g];
        if (cg_join_path(root, rdt_groups[g], dirs[g], sizeof(dirs[g])) < 0)
            continue;
        ready[g] = resctrl_group(t, dirs[g]);
        if (ready[g])
            resctrl_schemata(t, dirs[g], g, cbm, ids, (size_t)n, mb);
    }
    resctrl_tasks(t, group_dirs, ready);
out:
    strbuf_release(&text);
}

/* ---- system config (reference 3.7) ---- */

/* Sets sysctl s (file path) to value; the text it held before the runner's first change is
 * kept, to be put back when the NodeSLO stops asking (not upstream: see runner.h). */
static void sysctl_set(struct tick *t, enum qos_sysctl s, const char *path, const char *value)
{
    struct sys_saved *o = &t->r->nk.sysctl[s];
    char cur[sizeof(o->text)];
    bool save = false;
    int rc;

    if (!o->saved && read_small(path, cur, sizeof(cur)) >= 0 && !cg_same_int(cur, value))
        save = true;
    rc = apply_file(t, path, value, cg_same_int);
    if (rc == -ENOENT) {
        note_unsupported_knob(t, (enum knob)s, path);
        return;
    }
    if (save && (rc == CG_WRITE_DONE || rc == CG_WRITE_DRY_RUN)) {
        o->saved = true;
        memcpy(o->text, cur, sizeof(o->text));
        if (rc == CG_WRITE_DONE)
            log_info(COMP, "system config: \"%s\" set to %s (was %s)", path, value, cur);
    }
}

static void sysctl_restore(struct tick *t, enum qos_sysctl s, const char *path)
{
    struct sys_saved *o = &t->r->nk.sysctl[s];
    int rc = apply_file(t, path, o->text, cg_same_int);

    if (rc == CG_WRITE_DONE)
        log_info(COMP, "system config: \"%s\" restored to %s", path, o->text);
    if (rc >= 0 || rc == -ENOENT)
        o->saved = false;
}

/* "NAME\n" or "NO_NAME\n" to sched_features, one write each. */
static int sched_feature_write(struct tick *t, const char *path, const char *name, bool on)
{
    char line[QOS_SCHED_FEATURE_NAME_MAX + 8];

    (void)snprintf(line, sizeof(line), "%s%s\n", on ? "" : "NO_", name);
    return count_write(t, cg_append_file(&t->r->w, path, line));
}

static bool sched_feature_configured(const struct qos_system *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->nsched_features; i++)
        if (!strcmp(cfg->sched_features[i].name, name))
            return true;
    return false;
}

/* schedFeatures: each configured feature the kernel lists in another state is switched; the
 * first state of each switched one is kept and put back once it is no longer configured. */
static void run_sched_features(struct tick *t)
{
    struct qos_runner *r = t->r;
    const struct qos_system *cfg = &r->slo.system;
    struct node_knobs *nk = &r->nk;
    struct strbuf cur = STRBUF_INIT;
    char path[CG_PATH_MAX];
    int rc;

    if (!cfg->nsched_features && !nk->nsched)
        return;
    if (host_path(r->o.layout, "/sys/kernel/debug/sched_features", path, sizeof(path)) < 0)
        return;
    rc = read_text(path, TEXT_MAX, &cur);
    if (rc == -ENOENT) {
        note_unsupported_knob(t, KNOB_SCHED_FEATURES, path);
        goto out;
    }
    if (rc < 0) {
        struct strbuf m = STRBUF_INIT;

        strbuf_addf(&m, "cannot read \"%s\": %s", path, err_str(rc));
        note_error(t, m.buf);
        strbuf_release(&m);
        goto out;
    }
    for (size_t i = 0; i < cfg->nsched_features; i++) {
        const struct qos_sched_feature *f = &cfg->sched_features[i];
        int st = qos_sysconfig_sched_feature_state(cur.buf, f->name);
        bool saved = false;

        if (st < 0) {
            log_debug(COMP, "system config: sched feature \"%s\" unknown to this kernel", f->name);
            continue;
        }
        if (st == (int)f->enabled)
            continue;
        for (size_t j = 0; j < nk->nsched && !saved; j++)
            saved = !strcmp(nk->sched[j].name, f->name);
        rc = sched_feature_write(t, path, f->name, f->enabled);
        if (!saved && rc >= 0 && nk->nsched < ARRAY_SIZE(nk->sched)) {
            nk->sched[nk->nsched] = *f;
            nk->sched[nk->nsched].enabled = st == 1;
            nk->nsched++;
        }
    }
    for (size_t i = 0; i < nk->nsched;) {
        const struct qos_sched_feature *o = &nk->sched[i];
        int st;

        if (sched_feature_configured(cfg, o->name)) {
            i++;
            continue;
        }
        st = qos_sysconfig_sched_feature_state(cur.buf, o->name);
        rc =
            st < 0 || st == (int)o->enabled ? 0 : sched_feature_write(t, path, o->name, o->enabled);
        if (rc < 0) {
            i++;
            continue;
        }
        memmove(&nk->sched[i], &nk->sched[i + 1], (nk->nsched - i - 1) * sizeof(nk->sched[0]));
        nk->nsched--;
    }
out:
    strbuf_release(&cur);
}

static void run_sysconfig(struct tick *t)
{
    struct qos_runner *r = t->r;
    struct qos_sysconfig vals;
    char path[CG_PATH_MAX], value[32];

    t->strat = QOS_RUNNER_SYSTEM_CONFIG;
    /* Upstream returns without a Node or its memory capacity: nothing is set, nor restored. */
    if (!(r->o.features & QOS_RUNNER_F_SYSTEM_CONFIG) || !t->has_node ||
        !(t->node.capacity_present & (1u << QOS_RES_MEMORY)) ||
        t->node.capacity.v[QOS_RES_MEMORY] <= 0)
        return;
    /* anolis: pagecache_limit/enabled exists on Anolis kernels only; elsewhere its absence is
     * reported as unsupported like any other missing file. */
    qos_sysconfig_values(&r->slo.system, t->node.capacity.v[QOS_RES_MEMORY], true, &vals);
    for (int s = 0; s < QOS_SYSCTL_COUNT; s++) {
        if (host_path(r->o.layout, qos_sysctl_path((enum qos_sysctl)s), path, sizeof(path)) < 0)
            continue;
        if (vals.set & (1u << s)) {
            (void)snprintf(value, sizeof(value), "%lld", (long long)vals.v[s]);
            sysctl_set(t, (enum qos_sysctl)s, path, value);
        } else if (r->nk.sysctl[s].saved) {
            sysctl_restore(t, (enum qos_sysctl)s, path);
        }
    }
    run_sched_features(t);
}

/* ---- group identity (reference 3.8) ---- */

/* Before turning bvt on: core scheduling off (it excludes bvt -1), group identity on; each
 * only where the kernel has the sysctl. */
static void gi_sysctls(struct tick *t)
{
    static const char *const files[][2] = {
        {"/proc/sys/kernel/sched_core", "0"},
        {"/proc/sys/kernel/sched_group_identity_enabled", "1"},
    };
    const struct qos_runner *r = t->r;
    char path[CG_PATH_MAX];
    /* System config owns sched_group_identity_enabled when the NodeSLO sets it: writing 1 here
     * after it wrote 0 would switch the kernel's group identity off and on every tick. */
    bool sysconfig_owns = (r->o.features & QOS_RUNNER_F_SYSTEM_CONFIG) &&
                          r->slo.system.sched_group_identity_enabled.set;

    for (size_t i = 0; i < ARRAY_SIZE(files); i++)
        if ((i == 0 || !sysconfig_owns) &&
            host_path(r->o.layout, files[i][0], path, sizeof(path)) >= 0)
            (void)apply_file(t, path, files[i][1], cg_same_int);
}

static void run_group_identity(struct tick *t)
{
    struct qos_runner *r = t->r;
    const struct qos_resource_qos *cfg = &r->slo.resource_qos;
    const enum cg_driver d = r->o.layout->driver;
    char dir[CG_PATH_MAX], path[CG_PATH_MAX];
    struct dirlist ctrs = {0};
    struct qos_gi_kube kv;
    struct stat st;

    t->strat = QOS_RUNNER_GROUP_IDENTITY;
    if (!(r->o.features & QOS_RUNNER_F_GROUP_IDENTITY))
        return;
    if (cg_kube_root_dir(d, dir, sizeof(dir)) < 0 || !cgroup_dir_exists(r, CG_CPU_BVT_WARP_NS, dir))
        return; /* no kubepods cgroup yet */
    if (cg_res_path(r->o.layout, CG_CPU_BVT_WARP_NS, dir, path, sizeof(path)) < 0)
        return;
    if (stat(path, &st) < 0) {
        /* Not an Anolis kernel: one unsupported per tick, nothing tried below. */
        note_unsupported_knob(t, KNOB_BVT, "no cpu.bvt_warp_ns (group identity) in this kernel");
        return;
    }
    if (qos_gi_rule_enabled(cfg))
        gi_sysctls(t);
    /* Disabled classes hold 0 (None), so a disabled rule writes 0 everywhere: the reset. */
    qos_gi_kube_values(cfg, &kv);
    (void)apply_i64(t, CG_CPU_BVT_WARP_NS, dir, kv.root);
    if (cg_qos_dir(d, CG_QOS_BURSTABLE, dir, sizeof(dir)) >= 0)
        (void)apply_i64(t, CG_CPU_BVT_WARP_NS, dir, kv.burstable);
    if (cg_qos_dir(d, CG_QOS_BESTEFFORT, dir, sizeof(dir)) >= 0)
        (void)apply_i64(t, CG_CPU_BVT_WARP_NS, dir, kv.besteffort);
    for (size_t i = 0; i < t->npods; i++) {
        const struct qos_pod *p = &t->pods[i];
        int64_t v = qos_gi_pod_value(cfg, p);
        enum cg_qos q;

        if (!p->uid || !cg_qos_of(p->kube_qos, &q) ||
            cg_pod_dir(d, q, p->uid, dir, sizeof(dir)) < 0 ||
            apply_i64(t, CG_CPU_BVT_WARP_NS, dir, v) == -ENOENT)
            continue;
        /* Containers and the sandbox: every cgroup under the pod's (a listing cut short by
         * the pod going away still holds what it found). */
        (void)list_subdirs(r->o.layout, "cpu", dir, &ctrs);
        for (size_t j = 0; j < ctrs.n; j++)
            (void)apply_i64(t, CG_CPU_BVT_WARP_NS, ctrs.v[j], v);
        dirlist_release(&ctrs);
    }
}

/* ---- the tick ---- */

static void update_slo(struct qos_runner *r, const cJSON *nodeslo)
{
    struct strbuf why = STRBUF_INIT;
    struct qos_slo s;

    if (qos_slo_from_nodeslo(nodeslo, &s, &why) == 0) {
        r->slo = s;
        const cJSON *spec = cJSON_GetObjectItemCaseSensitive(nodeslo, "spec");

        r->slo_cpu_burst =
            cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(spec, "cpuBurstStrategy"));
        r->slo_resource_qos =
            cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(spec, "resourceQOSStrategy"));
        strbuf_reset(&r->slo_why);
    } else {
        r->stats.nodeslo_errors++;
        if (strcmp(why.buf, r->slo_why.buf)) {
            log_warn(COMP, "cannot decode the NodeSLO (%s), keeping the last good configuration",
                     why.buf);
            strbuf_reset(&r->slo_why);
            strbuf_addstr(&r->slo_why, why.buf);
        }
    }
    strbuf_release(&why);
}

static void load_pods(struct tick *t)
{
    const cJSON *e;
    size_t n = 0;

    if (!cJSON_IsArray(t->pods_json))
        return;
    n = (size_t)cJSON_GetArraySize(t->pods_json);
    if (n > PODS_MAX)
        n = PODS_MAX;
    if (!n)
        return;
    t->pods = xcalloc(n, sizeof(*t->pods));
    cJSON_ArrayForEach(e, t->pods_json)
    {
        struct qos_pod *p;

        if (t->npods == n)
            break;
        p = &t->pods[t->npods];
        if (qos_pod_from_json(e, p) < 0) {
            qos_pod_release(p);
            memset(p, 0, sizeof(*p));
            continue;
        }
        t->npods++;
        if (!p->uid)
            continue;
        p->has_cpu_usage = last(t, MC_POD_CPU_USAGE, p->uid, &p->cpu_usage);
        p->has_memory_usage = last(t, MC_POD_MEMORY_USAGE, p->uid, &p->memory_usage);
        for (size_t j = 0; j < p->ncontainers; j++) {
            struct qos_container *c = &p->containers[j];

            if (!c->id || !*c->id)
                continue;
            c->has_cpu_usage = last(t, MC_CONTAINER_CPU_USAGE, c->id, &c->cpu_usage);
            c->has_throttled = last(t, MC_CONTAINER_CPU_THROTTLED, c->id, &c->throttled_ratio);
        }
    }
}

int qos_runner_tick(struct qos_runner *r, int64_t wall_ms)
{
    return qos_runner_tick_some(r, wall_ms, UINT32_MAX);
}

int qos_runner_tick_some(struct qos_runner *r, int64_t wall_ms, uint32_t mask)
{
    static void (*const strategies[QOS_RUNNER_STRATEGY_COUNT])(struct tick *) = {
        [QOS_RUNNER_CPU_SUPPRESS] = run_cpu_suppress,
        [QOS_RUNNER_MEMORY_EVICT] = run_memory_evict,
        [QOS_RUNNER_CPU_EVICT] = run_cpu_evict,
        [QOS_RUNNER_CPU_BURST] = run_cpu_burst,
        [QOS_RUNNER_CFS_QUOTA_BURST] = run_cfs_quota_burst,
        [QOS_RUNNER_MEMORY_QOS] = run_memory_qos,
        [QOS_RUNNER_BATCH_RESOURCE] = run_batch_resource,
        [QOS_RUNNER_RESCTRL] = run_resctrl,
        [QOS_RUNNER_SYSTEM_CONFIG] = run_sysconfig,
        [QOS_RUNNER_GROUP_IDENTITY] = run_group_identity,
    };
    struct tick t = {.r = r, .now = wall_ms};

    CHECK(pthread_mutex_lock(&r->lock) == 0);
    r->stats.ticks++;
    t.pods_json = r->o.get_pods ? r->o.get_pods(r->o.source_ctx) : NULL;
    t.node_json = r->o.get_node ? r->o.get_node(r->o.source_ctx) : NULL;
    t.slo_json = r->o.get_nodeslo ? r->o.get_nodeslo(r->o.source_ctx) : NULL;
    update_slo(r, t.slo_json);
    t.has_node = t.node_json && qos_node_from_json(t.node_json, &t.node) == 0;
    if (t.has_node)
        synthesize_topology(r, &t.node);
    load_pods(&t);

    for (size_t i = 0; i < ARRAY_SIZE(strategies); i++) {
        if (!(mask & (1u << i)))
            continue;
        t.strat_failed = false;
        strategies[i](&t);
        if (!t.strat_failed)
            r->error_logged[t.strat] = false;
    }

    for (size_t i = 0; i < t.npods; i++)
        qos_pod_release(&t.pods[i]);
    free(t.pods);
    cJSON_Delete(t.pods_json);
    cJSON_Delete(t.node_json);
    cJSON_Delete(t.slo_json);
    if (r->o.release)
        r->o.release(r->o.source_ctx);
    CHECK(pthread_mutex_unlock(&r->lock) == 0);
    return 0;
}

/* ---- lifecycle ---- */

int qos_runner_new(const struct qos_runner_opts *opts, struct qos_runner **ret)
{
    struct qos_runner *r;
    pthread_condattr_t ca;

    if (!opts || !opts->layout)
        return -EINVAL;
    r = xcalloc(1, sizeof(*r));
    r->o = *opts;
    if (r->o.interval_ms <= 0)
        r->o.interval_ms = 1000;
    if (r->o.cpu_suppress_interval_ms <= 0)
        r->o.cpu_suppress_interval_ms = 1000;
    if (r->o.memory_evict_interval_ms <= 0)
        r->o.memory_evict_interval_ms = 1000;
    if (r->o.cpu_evict_interval_ms <= 0)
        r->o.cpu_evict_interval_ms = 1000;
    if (r->o.collect_interval_ms <= 0)
        r->o.collect_interval_ms = 1000;
    cg_writer_init(&r->w, r->o.layout, r->o.dry_run);
    qos_slo_defaults(&r->slo);
    strbuf_init(&r->slo_why);
    CHECK(pthread_mutex_init(&r->lock, NULL) == 0);
    CHECK(pthread_mutex_init(&r->thread_lock, NULL) == 0);
    CHECK(pthread_condattr_init(&ca) == 0);
    CHECK(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0);
    CHECK(pthread_cond_init(&r->cond, &ca) == 0);
    (void)pthread_condattr_destroy(&ca);
    read_topology(r);
    r->rng = r->o.random_seed;
    if (!r->rng) {
        struct timespec ts;

        (void)clock_gettime(CLOCK_REALTIME, &ts);
        r->rng = ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)r;
    }
    if (!r->rng)
        r->rng = 1;
    *ret = r;
    return 0;
}

void qos_runner_free(struct qos_runner *r)
{
    if (!r)
        return;
    qos_runner_stop(r);
    (void)pthread_cond_destroy(&r->cond);
    (void)pthread_mutex_destroy(&r->thread_lock);
    (void)pthread_mutex_destroy(&r->lock);
    strbuf_release(&r->slo_why);
    for (size_t i = 0; i < r->nlimiters; i++)
        free(r->limiters[i].id);
    free(r->limiters);
    free(r->cpus);
    free(r);
}

static int64_t clock_ms(clockid_t id)
{
    struct timespec ts;

    (void)clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t strategy_interval(const struct qos_runner *r, size_t s)
{
    switch (s) {
    case QOS_RUNNER_CPU_SUPPRESS:
        return r->o.cpu_suppress_interval_ms;
    case QOS_RUNNER_MEMORY_EVICT:
        return r->o.memory_evict_interval_ms;
    case QOS_RUNNER_CPU_EVICT:
        return r->o.cpu_evict_interval_ms;
    default:
        return r->o.interval_ms;
    }
}

uint32_t qos_runner_due(struct qos_runner *r, int64_t mono_ms, int64_t *ret_next_ms)
{
    int64_t next = INT64_MAX;
    uint32_t mask = 0;

    for (size_t s = 0; s < QOS_RUNNER_STRATEGY_COUNT; s++) {
        int64_t every = strategy_interval(r, s);

        if (!r->scheduled || mono_ms >= r->next_due[s]) {
            mask |= 1u << s;
            r->next_due[s] = r->scheduled ? r->next_due[s] + every : mono_ms + every;
            if (r->next_due[s] <= mono_ms)
                r->next_due[s] = mono_ms + every;
        }
        if (r->next_due[s] < next)
            next = r->next_due[s];
    }
    r->scheduled = true;
    *ret_next_ms = next;
    return mask;
}

static void *thread_main(void *arg)
{
    struct qos_runner *r = arg;
    int64_t next = clock_ms(CLOCK_MONOTONIC);

    CHECK(pthread_mutex_lock(&r->thread_lock) == 0);
    while (!r->stopping) {
        struct timespec ts;
        int64_t now = clock_ms(CLOCK_MONOTONIC);

        if (now >= next) {
            uint32_t mask = qos_runner_due(r, now, &next);

            CHECK(pthread_mutex_unlock(&r->thread_lock) == 0);
            (void)qos_runner_tick_some(r, clock_ms(CLOCK_REALTIME), mask);
            CHECK(pthread_mutex_lock(&r->thread_lock) == 0);
            continue;
        }
        ts.tv_sec = (time_t)(next / 1000);
        ts.tv_nsec = (long)(next % 1000) * 1000000;
        (void)pthread_cond_timedwait(&r->cond, &r->thread_lock, &ts);
    }
    CHECK(pthread_mutex_unlock(&r->thread_lock) == 0);
    return NULL;
}

int qos_runner_start(struct qos_runner *r)
{
    int rc = 0;

    CHECK(pthread_mutex_lock(&r->thread_lock) == 0);
    if (r->running) {
        rc = -EALREADY;
    } else {
        r->stopping = false;
        rc = -pthread_create(&r->thread, NULL, thread_main, r);
        r->running = rc == 0;
    }
    CHECK(pthread_mutex_unlock(&r->thread_lock) == 0);
    return rc;
}

void qos_runner_stop(struct qos_runner *r)
{
    bool join;

    CHECK(pthread_mutex_lock(&r->thread_lock) == 0);
    join = r->running;
    r->stopping = true;
    r->running = false;
    CHECK(pthread_cond_broadcast(&r->cond) == 0);
    CHECK(pthread_mutex_unlock(&r->thread_lock) == 0);
    if (join)
        CHECK(pthread_join(r->thread, NULL) == 0);
}

void qos_runner_stats(struct qos_runner *r, struct qos_runner_stats *ret)
{
    CHECK(pthread_mutex_lock(&r->lock) == 0);
    *ret = r->stats;
    CHECK(pthread_mutex_unlock(&r->lock) == 0);
}

void qos_runner_render_metrics(const struct qos_runner_stats *s, struct strbuf *out)
{
    strbuf_addf(out, "koord_agent_qos_ticks_total %llu\n", (unsigned long long)s->ticks);
    strbuf_addf(out, "koord_agent_qos_nodeslo_errors_total %llu\n",
                (unsigned long long)s->nodeslo_errors);
    for (int i = 0; i < QOS_RUNNER_STRATEGY_COUNT; i++) {
        const struct qos_runner_counters *c = &s->s[i];
        const struct {
            const char *name;
            uint64_t v;
        } rows[] = {{"writes", c->writes},   {"unchanged", c->unchanged},
                    {"dry_run", c->dry_run}, {"evictions", c->evictions},
                    {"errors", c->errors},   {"unsupported", c->unsupported}};

        for (size_t j = 0; j < ARRAY_SIZE(rows); j++)
            strbuf_addf(out, "koord_agent_qos_actions_total{strategy=\"%s\",action=\"%s\"} %llu\n",
                        qos_runner_strategy_name((enum qos_runner_strategy)i), rows[j].name,
                        (unsigned long long)rows[j].v);
    }
}
