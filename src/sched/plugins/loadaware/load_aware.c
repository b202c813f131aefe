/*
 * LoadAwareScheduling (Koordinator pkg/scheduler/plugins/loadaware/load_aware.go,
 * pod_assign_cache.go, estimator/default_estimator.go; reference koordlet-and-scheduler.md 5.2,
 * scheduler.md 8.2-8.3): places pods by what nodes really use, as their NodeMetrics report it,
 * rather than by what pods request.
 *
 * A node's usage is its NodeMetric's (the latest nodeUsage, an aggregated percentile, or the
 * prod pods' usage) plus the estimated usage of the pods placed since that report, which the
 * report cannot show yet. Filter rejects a node whose usage with the incoming pod's estimate
 * would pass usageThresholds (prodUsageThresholds for prod pods); Score prefers the least used.
 *
 * "Placed since the report": every pod the snapshot has on the node (bound or assumed) counts
 * at its estimate less its reported usage when the NodeMetric does not list it, or when it was
 * placed within the report's window (after updateTime - reportIntervalSeconds). When it was
 * placed is the time Reserve recorded (this scheduler's own pods, until their binding is seen
 * with a PodScheduled time and the next report covers them) or the pod's PodScheduled
 * condition. Upstream keeps its own pod cache for this (podAssignCache); here the scheduler's
 * cache already holds the node's pods, so the plugin only keeps the times.
 */
#include "sched/plugins/loadaware/load_aware.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/pod.h"
#include "base/base.h"
#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

#define LA_DEFAULT_MILLI_CPU 250                   /* DefaultMilliCPURequest */
#define LA_DEFAULT_MEMORY    (200LL * 1024 * 1024) /* DefaultMemoryRequest */
/* Reserve's times are needed until the binding carries its own (PodScheduled); older ones are
 * dropped now and then even for nodes that never report. */
#define LA_ASSIGN_KEEP_S 600

static double wall_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CLOCK_REALTIME_COARSE: the last tick's time (a few ms behind at most), read without asking
 * the (virtual) hardware clock. */
static double wall_coarse(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void sched__la_set_clock(void *self, double (*now)(void))
{
    struct la *la = self;

    la->now = now ? now : wall_now;
    la->coarse = now ? now : wall_coarse;
}

/* ---- the estimator ---- */

/* The name a batch or mid pod requests r under (extension.TranslateResourceNameByPriorityClass). */
static const char *translate(const char *r, int prio)
{
    if (prio == API_PRIORITY_BATCH) {
        if (!strcmp(r, "cpu"))
            return "kubernetes.io/batch-cpu";
        if (!strcmp(r, "memory"))
            return "kubernetes.io/batch-memory";
    } else if (prio == API_PRIORITY_MID) {
        if (!strcmp(r, "cpu"))
            return "kubernetes.io/mid-cpu";
        if (!strcmp(r, "memory"))
            return "kubernetes.io/mid-memory";
    }
    return r;
}

/*
 * The sched_res index of r's name as a pod of priority prio requests it (translate()), or
 * -ENOENT while no node offers it. Interned indexes never change, so each is looked up until
 * found, then kept: Filter and Score ask for every node. The args are the plugin's own (not
 * const storage), whatever the callers' const says.
 */
static int la_index(const struct la_rval *r, int prio)
{
    int slot = prio == API_PRIORITY_BATCH ? 1 : prio == API_PRIORITY_MID ? 2 : 0;
    _Atomic int *cell = (_Atomic int *)&r->idx[slot];
    int v = atomic_load_explicit(cell, memory_order_relaxed), i;

    if (v > 0)
        return v - 1;
    if ((i = sched_res_lookup(translate(r->name, prio))) >= 0)
        atomic_store_explicit(cell, i + 1, memory_order_relaxed);
    return i;
}

void sched__la_estimate(const struct la *la, const struct sched_pod *pod, struct sched_res *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < la->a.factors.n; i++) {
        const struct la_rval *f = &la->a.factors.v[i];
        int idx = la_index(f, 0), ti;
        int64_t req = 0, lim = 0, q, est;

        if (idx < 0)
            continue;
        ti = la_index(f, pod->koord_priority);
        if (ti >= 0) {
            req = pod->req.v[ti];
            lim = pod->lim.v[ti];
        }
        q = req > lim ? req : lim;
        if (q == 0) {
            /* Mid and free pods asking nothing are estimated at nothing; others at the
             * defaults for cpu and memory. */
            bool dflt =
                pod->koord_priority != API_PRIORITY_MID && pod->koord_priority != API_PRIORITY_FREE;
            est = 0;
            if (dflt && idx == SCHED_RES_CPU)
                est = LA_DEFAULT_MILLI_CPU;
            else if (dflt && idx == SCHED_RES_MEMORY)
                est = LA_DEFAULT_MEMORY;
        } else {
            est = (int64_t)llround((double)q * (double)f->v / 100.0);
            if (lim > 0 && est > lim)
                est = lim;
        }
        out->v[idx] = est;
    }
}

/*
 * The incoming pod's estimate for Filter and Score, which ask for it on every node: kept per
 * thread for the last pod (an object of the same uid and resourceVersion is the same pod), the
 * plugin instance and the resource names in use.
 */
static void pod_estimate(const struct la *la, const struct sched_pod *pod, struct sched_res *out)
{
    static _Thread_local struct {
        const struct la *la;
        int nres;
        char uid[64], rv[32];
        struct sched_res est;
    } memo;
    int nres = sched_res_count();

    if (memo.la == la && memo.nres == nres && !strcmp(memo.uid, pod->uid) &&
        !strcmp(memo.rv, pod->resource_version)) {
        *out = memo.est;
        return;
    }
    sched__la_estimate(la, pod, out);
    if (strlen(pod->uid) < sizeof(memo.uid) && strlen(pod->resource_version) < sizeof(memo.rv)) {
        memo.la = la;
        memo.nres = nres;
        (void)snprintf(memo.uid, sizeof(memo.uid), "%s", pod->uid);
        (void)snprintf(memo.rv, sizeof(memo.rv), "%s", pod->resource_version);
        memo.est = *out;
    }
}

/* ---- a node's usage ---- */

/* What Filter and Score add up for one node (pod_assign_cache.go GetNodeMetricAndEstimated...). */
struct la_node {
    const struct la_metric *m; /* NULL: no NodeMetric */
    bool expired;
    struct sched_res delta, prod_delta, estimated; /* over the node's pods */
};

static bool is_prod(const struct sched_pod *p)
{
    return p->koord_priority == API_PRIORITY_PROD;
}

/* Whether ni is a NodeInfo of the scheduler's cache (a cycle's restored copy has other pods
 * under the same generation and carries 0, as tests' do): only then is its sum kept (struct
 * la_usage_cache). */
static bool cacheable(const struct sched_node_info *ni)
{
    return ni->generation != 0;
}

/* The node's holder (its memo, else looked up and memoised), or NULL; call with the read lock
 * held. */
static struct la_holder *holder_of(const struct la *la, const struct sched_node_info *ni)
{
    struct la_holder *h = sched_node_memo_get(ni, &la->memo);

    if (!h && (h = hmap_get(&la->metrics, ni->name)))
        sched_node_memo_set(ni, &la->memo, h);
    return h;
}

/* Reads the node's NodeMetric (h's, h may be NULL) and pods; call with the read lock held. */
static void node_usage(const struct la *la, const struct la_holder *h,
                       const struct sched_node_info *ni, double now, struct la_node *n)
{
    struct la_metric *m;
    int nres = sched_res_count(); /* the names in use: only they are read */
    size_t len = (size_t)nres * sizeof(int64_t);
    bool keep;

    n->m = m = h ? h->m : NULL;
    n->expired = false;
    memset(n->delta.v, 0, len);
    memset(n->prod_delta.v, 0, len);
    memset(n->estimated.v, 0, len);
    if (!m)
        return;
    n->expired = m->update <= 0 || now - m->update >= (double)la->a.expiration_s;
    if ((keep = cacheable(ni))) {
        bool hit;
        CHECK(pthread_mutex_lock(&m->cache.mu) == 0);
        hit = m->cache.valid && m->cache.generation == ni->generation &&
              m->cache.npods == ni->npods && m->cache.epoch == la->prune_epoch &&
              m->cache.nres == nres;
        if (hit) {
            memcpy(n->delta.v, m->cache.delta.v, len);
            memcpy(n->prod_delta.v, m->cache.prod_delta.v, len);
            memcpy(n->estimated.v, m->cache.estimated.v, len);
        }
        CHECK(pthread_mutex_unlock(&m->cache.mu) == 0);
        if (hit)
            return;
    }
    for (size_t i = 0; i < ni->npods; i++) {
        const struct sched_pod *p = sched_node_info_pod(ni, i);
        const struct la_pod_usage *u = hmap_get(&m->pods, p->key);
        const struct la_assign *as = hmap_get(&la->assigned, p->uid);
        double at = as ? as->at : p->scheduled;
        bool recent, counted, prod_counted;
        struct sched_res e;

        if (p->terminal)
            continue;
        sched__la_estimate(la, p, &e);
        recent = at > m->update - m->report_interval ||
                 (la->a.after_scheduled_s > 0 && at > 0 &&
                  at + (double)la->a.after_scheduled_s > m->update);
        counted = !u || recent;
        /* A prod pod the report does not list as prod counts as unreported. */
        prod_counted = is_prod(p) && (!u || !u->prod || recent);
        for (int k = 0; k < nres; k++) {
            int64_t used = u ? u->u.v[k] : 0;
            int64_t used_prod = u && u->prod ? u->u.v[k] : 0;
            if (counted && e.v[k] > used)
                n->delta.v[k] += e.v[k] - used;
            if (prod_counted && e.v[k] > used_prod)
                n->prod_delta.v[k] += e.v[k] - used_prod;
            n->estimated.v[k] += e.v[k];
        }
    }
    if (keep) {
        CHECK(pthread_mutex_lock(&m->cache.mu) == 0);
        m->cache.valid = true;
        m->cache.generation = ni->generation;
        m->cache.npods = ni->npods;
        m->cache.epoch = la->prune_epoch;
        m->cache.nres = nres;
        memcpy(m->cache.delta.v, n->delta.v, len);
        memcpy(m->cache.prod_delta.v, n->prod_delta.v, len);
        memcpy(m->cache.estimated.v, n->estimated.v, len);
        CHECK(pthread_mutex_unlock(&m->cache.mu) == 0);
    }
}

/* The aggregated usage of type ty over dur_s (0: the longest duration reported), or NULL. */
static const struct sched_res *aggregated(const struct la_metric *m, enum la_agg_type ty,
                                          int64_t dur_s)
{
    const struct la_agg_usage *best = NULL;

    for (size_t i = 0; i < m->nagg; i++) {
        const struct la_agg_usage *a = &m->agg[i];
        if (a->type != ty)
            continue;
        if (dur_s ? a->dur_s == dur_s : !best || a->dur_s > best->dur_s)
            best = a;
    }
    return best ? &best->u : NULL;
}

/*
 * base + delta of the node for one path into out: the prod pods' usage (prod), an aggregated
 * usage (ty set), or the latest node usage. Without the usage asked for, the full estimates of
 * the node's pods stand in (pod_assign_cache.go).
 */
static void base_usage(const struct la *la, const struct la_node *n, bool prod, enum la_agg_type ty,
                       int64_t dur_s, struct sched_res *out)
{
    const struct sched_res *base = NULL;
    int nres = sched_res_count();

    if (prod) {
        for (int k = 0; k < nres; k++)
            out->v[k] = n->m->prod.v[k] + (la->a.prod_include_sys ? n->m->sys.v[k] : 0) +
                        n->prod_delta.v[k];
        return;
    }
    if (ty != LA_AGG_UNSET)
        base = aggregated(n->m, ty, dur_s);
    else if (n->m->has_usage)
        base = &n->m->usage;
    for (int k = 0; k < nres; k++)
        out->v[k] = base ? base->v[k] + n->delta.v[k] : n->estimated.v[k];
}

/* ---- the node's summary (struct la_holder) ---- */

/* The thresholds Filter compares for pod: prod ones for a prod pod when there are any, else the
 * aggregated ones when there are any, else usageThresholds. */
static const struct la_rlist *thresholds(const struct la *la, bool prod_pod, bool *prod, bool *agg)
{
    *prod = *agg = false;
    if (prod_pod && la->a.prod_usage.n) {
        *prod = true;
        return &la->a.prod_usage;
    }
    if (la->a.agg_usage.n) {
        *agg = true;
        return &la->a.agg_usage;
    }
    return &la->a.usage;
}

/* The summary's fields are read by several threads while one makes it (struct la_holder's
 * sequence lock): relaxed atomic loads and stores, plain ones on x86. */
#define LD(x)    __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define ST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* Whether h's summary is for ni's pods and the record as they are now (the key). */
static bool summary_fresh(const struct la *la, const struct la_holder *h,
                          const struct sched_node_info *ni, int nres)
{
    return LD(h->valid) && LD(h->generation) == ni->generation &&
           LD(h->npods) == (uint32_t)ni->npods && LD(h->epoch) == (uint32_t)la->prune_epoch &&
           LD(h->nres) == nres;
}

/* Copies n figures of h's summary (src: its score or filter array) into out when it is fresh
 * and nobody made it meanwhile; only loads, so the holder's line is not written. */
static bool summary_read(const struct la *la, const struct la_holder *h,
                         const struct sched_node_info *ni, int nres, const int64_t *src, size_t n,
                         int64_t *out)
{
    uint16_t seq = atomic_load_explicit(&h->seq, memory_order_acquire);

    if (seq & 1 || !summary_fresh(la, h, ni, nres))
        return false;
    for (size_t i = 0; i < n; i++)
        out[i] = LD(src[i]);
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&h->seq, memory_order_relaxed) == seq;
}

/*
 * The usage Score (for_score) or Filter compares on the node for a pod that is not prod (a prod
 * pod's paths read other figures), per resourceWeights or non-prod threshold entry, into out:
 * from h's summary, made first when it is not for the node's record and pods as they are now.
 * False when the summary cannot serve (a NodeInfo no cache keeps, too many entries, another
 * thread making it): the caller takes the long way. Call with the read lock held, h->m set.
 */
static bool summary(const struct la *la, struct la_holder *h, const struct sched_node_info *ni,
                    double now, bool for_score, int64_t *out)
{
    bool unused_prod, agg;
    const struct la_rlist *th = thresholds(la, false, &unused_prod, &agg);
    int nres = sched_res_count();
    size_t n = for_score ? la->a.weights.n : th->n;
    const int64_t *src = for_score ? h->score : h->filter;
    uint16_t seq;

    if (!cacheable(ni) || la->a.weights.n > LA_SUMMARY_SCORE || th->n > LA_SUMMARY_FILTER)
        return false;
    if (summary_read(la, h, ni, nres, src, n, out))
        return true;
    /* Make it: seq odd while at it (a reader that overlaps sees seq move and retries the long
     * way); losing the race to another maker takes the long way too. */
    seq = atomic_load_explicit(&h->seq, memory_order_relaxed);
    if (seq & 1 ||
        !atomic_compare_exchange_strong_explicit(&h->seq, &seq, (uint16_t)(seq + 1),
                                                 memory_order_relaxed, memory_order_relaxed))
        return false;
    atomic_thread_fence(memory_order_release);
    if (!summary_fresh(la, h, ni, nres)) {
        struct la_node u;
        struct sched_res est;

        node_usage(la, h, ni, now, &u);
        base_usage(la, &u, false, la->a.agg_score_type, la->a.agg_score_dur_s, &est);
        for (size_t i = 0; i < la->a.weights.n; i++) {
            int idx = la_index(&la->a.weights.v[i], 0);
            ST(h->score[i], idx >= 0 ? est.v[idx] : 0);
        }
        base_usage(la, &u, false, agg ? la->a.agg_usage_type : LA_AGG_UNSET, la->a.agg_usage_dur_s,
                   &est);
        for (size_t i = 0; i < th->n; i++) {
            int idx = la_index(&th->v[i], 0);
            ST(h->filter[i], idx >= 0 ? est.v[idx] : 0);
        }
        ST(h->generation, ni->generation);
        ST(h->npods, (uint32_t)ni->npods);
        ST(h->epoch, (uint32_t)la->prune_epoch);
        ST(h->nres, nres);
        ST(h->valid, true);
    }
    for (size_t i = 0; i < n; i++)
        out[i] = LD(src[i]);
    atomic_store_explicit(&h->seq, (uint16_t)(seq + 2), memory_order_release);
    return true;
}

/* ---- filter ---- */

/* The node's allocatable of resource idx: cpu and memory from the NodeInfo's first line, the
 * Node object (another cache miss) only for the others. */
static int64_t allocatable(const struct sched_node_info *ni, int idx)
{
    if (idx == SCHED_RES_CPU)
        return ni->alloc_cpu;
    if (idx == SCHED_RES_MEMORY)
        return ni->alloc_mem;
    return ni->node->allocatable.v[idx];
}

/* Whether the node's NodeMetric is too old to trust (nodeMetricExpirationSeconds). */
static bool expired(const struct la *la, const struct la_holder *h, double now)
{
    return h->update <= 0 || now - h->update >= (double)la->a.expiration_s;
}

static enum sched_code la_filter(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                 const struct sched_node_info *ni, struct sched_status *st)
{
    struct la *la = self;
    const struct la_rlist *th;
    bool prod, agg, any = false, summed;
    int64_t sum[LA_SUMMARY_FILTER] = {0};
    struct sched_res est, pe;
    struct la_holder *h;
    struct la_node n;
    double now;
    enum sched_code c = SCHED_SUCCESS;

    (void)cs;
    if (!ni->node || !strcmp(pod->owner_kind, "DaemonSet"))
        return SCHED_SUCCESS;
    th = thresholds(la, is_prod(pod), &prod, &agg);
    for (size_t i = 0; i < th->n; i++)
        any |= th->v[i].v > 0;
    if (!any)
        return SCHED_SUCCESS;

    CHECK(pthread_rwlock_rdlock(&la->lock) == 0);
    if (!(h = holder_of(la, ni)) || !h->m)
        goto out;
    now = la->coarse();
    if (expired(la, h, now)) {
        if (la->a.filter_expired && !la->a.schedule_when_expired)
            c = sched_status_set(st, SCHED_UNSCHEDULABLE, "node(s) nodeMetric expired");
        goto out;
    }
    if (!h->has_node)
        goto out;
    if (!(summed = !prod && summary(la, h, ni, now, false, sum))) {
        node_usage(la, h, ni, now, &n);
        base_usage(la, &n, prod, agg ? la->a.agg_usage_type : LA_AGG_UNSET, la->a.agg_usage_dur_s,
                   &est);
    }
    pod_estimate(la, pod, &pe);
    for (size_t i = 0; i < th->n; i++) {
        int idx = la_index(&th->v[i], 0);
        int64_t alloc, used;
        double pct;

        if (th->v[i].v <= 0 || idx < 0 || (alloc = allocatable(ni, idx)) <= 0)
            continue;
        used = (summed ? sum[i] : est.v[idx]) + pe.v[idx];
        pct = round((double)used / (double)alloc * 100.0);
        if (pct > (double)th->v[i].v) {
            c = sched_status_set(st, SCHED_UNSCHEDULABLE,
                                 agg ? "node(s) %s aggregated usage exceed threshold"
                                     : "node(s) %s usage exceed threshold",
                                 th->v[i].name);
            break;
        }
    }
out:
    CHECK(pthread_rwlock_unlock(&la->lock) == 0);
    return c;
}

/* ---- score ---- */

/* leastUsedScore. */
static int64_t least_used(int64_t used, int64_t capacity)
{
    if (capacity <= 0 || used > capacity)
        return 0;
    return (capacity - used) * SCHED_MAX_NODE_SCORE / capacity;
}

static enum sched_code la_score(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                const struct sched_node_info *ni, int64_t *ret_score,
                                struct sched_status *st)
{
    struct la *la = self;
    bool prod = la->a.score_prod && is_prod(pod), summed;
    int64_t sum[LA_SUMMARY_SCORE] = {0}, total = 0, wsum = 0, min = SCHED_MAX_NODE_SCORE;
    struct sched_res est, pe;
    struct la_holder *h;
    struct la_node n;
    double now;

    (void)cs;
    (void)st;
    *ret_score = 0;
    if (!ni->node)
        return SCHED_SUCCESS;
    CHECK(pthread_rwlock_rdlock(&la->lock) == 0);
    if (!(h = holder_of(la, ni)) || !h->m || expired(la, h, now = la->coarse()) || !h->has_node) {
        CHECK(pthread_rwlock_unlock(&la->lock) == 0);
        return SCHED_SUCCESS;
    }
    if (!(summed = !prod && summary(la, h, ni, now, true, sum))) {
        node_usage(la, h, ni, now, &n);
        base_usage(la, &n, prod, la->a.agg_score_type, la->a.agg_score_dur_s, &est);
    }
    CHECK(pthread_rwlock_unlock(&la->lock) == 0);
    pod_estimate(la, pod, &pe);
    for (size_t i = 0; i < la->a.weights.n; i++) {
        int idx = la_index(&la->a.weights.v[i], 0);
        int64_t s = 0;

        if (idx >= 0)
            s = least_used((summed ? sum[i] : est.v[idx]) + pe.v[idx], allocatable(ni, idx));
        total += la->a.weights.v[i].v * s;
        wsum += la->a.weights.v[i].v;
        if (s < min)
            min = s;
    }
    if (la->a.dominant_weight > 0 && la->a.weights.n) {
        total += la->a.dominant_weight * min;
        wsum += la->a.dominant_weight;
    }
    *ret_score = wsum > 0 ? total / wsum : 0;
    return SCHED_SUCCESS;
}

/* ---- reserve ---- */

static enum sched_code la_reserve(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                  const char *node, struct sched_status *st)
{
    struct la *la = self;
    struct la_assign *as = xcalloc(1, sizeof(*as)), *old;
    double now = la->now();

    (void)cs;
    (void)st;
    as->node = xstrdup(node);
    as->at = now;
    CHECK(pthread_rwlock_wrlock(&la->lock) == 0);
    if ((old = hmap_put(&la->assigned, pod->uid, as))) {
        free(old->node);
        free(old);
    }
    if (++la->reserves % 1024 == 0)
        sched__la_prune(la, NULL, now - LA_ASSIGN_KEEP_S);
    CHECK(pthread_rwlock_unlock(&la->lock) == 0);
    return SCHED_SUCCESS;
}

static void la_unreserve(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                         const char *node)
{
    struct la *la = self;
    struct la_assign *as;

    (void)cs;
    (void)node;
    CHECK(pthread_rwlock_wrlock(&la->lock) == 0);
    if ((as = hmap_del(&la->assigned, pod->uid))) {
        free(as->node);
        free(as);
    }
    CHECK(pthread_rwlock_unlock(&la->lock) == 0);
}

/* ---- lifecycle ---- */

static void la_free(void *self)
{
    struct la *la = self;
    struct hmap_entry *e;
    size_t it;

    if (!la)
        return;
    sched__la_feed_free(la);
    for (e = hmap_first(&la->metrics, &it); e; e = hmap_next(&la->metrics, e, &it)) {
        struct la_holder *h = e->value;
        sched__la_metric_free(h->m);
        free(h);
    }
    hmap_release(&la->metrics);
    sched_node_memo_release(&la->memo);
    for (e = hmap_first(&la->assigned, &it); e; e = hmap_next(&la->assigned, e, &it)) {
        struct la_assign *as = e->value;
        free(as->node);
        free(as);
    }
    hmap_release(&la->assigned);
    pthread_rwlock_destroy(&la->lock);
    sched__la_args_release(&la->a);
    free(la);
}

static int la_init(const cJSON *args, const char *path, struct sched_handle *h, void **ret_self,
                   struct field_errors *errs)
{
    struct la *la = xcalloc(1, sizeof(*la));

    if (sched__la_args_decode(args, path, &la->a, errs) < 0) {
        free(la);
        return -EINVAL;
    }
    la->h = h;
    la->now = wall_now;
    la->coarse = wall_coarse;
    CHECK(pthread_rwlock_init(&la->lock, NULL) == 0);
    hmap_init(&la->metrics);
    hmap_init(&la->assigned);
    sched_node_memo_claim(&la->memo);
    if (h)
        sched__la_feed_start(la, h);
    *ret_self = la;
    return 0;
}

static const struct sched_event_reg la_events[] = {
    {"Pod", SCHED_ACT_DELETE},
    {"Node", SCHED_ACT_ADD | SCHED_ACT_UPDATE_NODE_ALLOCATABLE},
    {LA_NODEMETRIC_EVENT, SCHED_ACT_ALL},
    {NULL, 0},
};

const struct sched_plugin sched_plugin_load_aware = {
    .name = "LoadAwareScheduling",
    .args_kind = "LoadAwareSchedulingArgs",
    .default_weight = 1,
    .events = la_events,
    .init = la_init,
    .free = la_free,
    .filter = la_filter,
    .score = la_score,
    .reserve = la_reserve,
    .unreserve = la_unreserve,
};
