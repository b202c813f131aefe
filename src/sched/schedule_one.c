/*
 * One scheduling attempt (kube-scheduler schedule_one.go; reference scheduler.md 2, 4.1):
 * snapshot, PreFilter, the nominated node first, Filter over a window of nodes in parallel until
 * enough feasible ones are found, PreScore/Score/Normalize, the host by highest score with
 * random tie-breaking, then assume, Reserve, Permit, and the binding cycle on an API thread.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/hmap.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "kube/informer.h"
#include "sched/framework/parallel.h"
#include "sched/metrics.h"
#include "sched/plugins/registry.h"
#include "sched/sched-int.h"

#define MIN_FEASIBLE_NODES            100
#define MIN_FEASIBLE_PERCENTAGE       5
#define NODES_TO_FIND_NO_SCORE        1
#define PLUGIN_METRICS_SAMPLE_PERCENT 10 /* pluginMetricsSamplePercent */

/* The profile's slots in s->series (profiles are few: a short walk). */
static struct sched__profile_series *profile_series(struct sched_scheduler *s,
                                                    const struct sched_framework *fw)
{
    for (size_t i = 0; i < s->nfws; i++)
        if (s->fws[i] == fw)
            return &s->series.profile[i];
    return NULL;
}

/* The series in *slot, found and kept there on first use. */
static struct sched_series *series_at(struct sched_scheduler *s,
                                      _Atomic(struct sched_series *) *slot, const char *name,
                                      const char *labels)
{
    struct sched_series *ser = atomic_load_explicit(slot, memory_order_acquire);

    if (!ser) {
        ser = sched_metrics_series(s->metrics, name, labels);
        atomic_store_explicit(slot, ser, memory_order_release);
    }
    return ser;
}

static const char *const point_names[SCHED__NPOINTS] = {[SCHED__PT_PRE_FILTER] = "PreFilter",
                                                        [SCHED__PT_FILTER] = "Filter",
                                                        [SCHED__PT_POST_FILTER] = "PostFilter",
                                                        [SCHED__PT_SCORE] = "Score",
                                                        [SCHED__PT_BIND] = "Bind"};

/* scheduler_framework_extension_point_duration_seconds{extension_point,status,profile}. */
static void observe_point(struct sched_scheduler *s, struct sched_framework *fw,
                          enum sched__point point, enum sched_code c, double t0)
{
    static const char name[] = "scheduler_framework_extension_point_duration_seconds";
    struct sched__profile_series *ps = profile_series(s, fw);
    _Atomic(struct sched_series *) *slot =
        ps && (unsigned)c < SCHED__NCODES ? &ps->point[point][c] : NULL;
    struct sched_series *ser = slot ? atomic_load_explicit(slot, memory_order_acquire) : NULL;

    if (!ser) {
        char labels[256];
        (void)snprintf(labels, sizeof(labels),
                       "extension_point=\"%s\",profile=\"%s\",status=\"%s\"", point_names[point],
                       sched_framework_name(fw), sched_code_name(c));
        ser = slot ? series_at(s, slot, name, labels)
                   : sched_metrics_series(s->metrics, name, labels);
    }
    sched_metrics_series_observe(s->metrics, ser, sched__now() - t0);
}

/* numFeasibleNodesToFind (4.1). */
static size_t nodes_to_find(int pct, size_t n)
{
    size_t k;

    if (n < MIN_FEASIBLE_NODES)
        return n;
    if (pct <= 0) {
        long p = 50 - (long)n / 125;
        pct = p < MIN_FEASIBLE_PERCENTAGE ? MIN_FEASIBLE_PERCENTAGE : (int)p;
    }
    if (pct >= 100)
        return n;
    k = n * (size_t)pct / 100;
    return k < MIN_FEASIBLE_NODES ? MIN_FEASIBLE_NODES : k;
}

/* A failed node's status (the diagnosis keeps only failures). */
struct node_status {
    struct sched_node_info *ni;
    struct sched_status st;
};

struct diagnosis {
    struct node_status *v;
    size_t n, cap;
    char *pre_filter_msg; /* set when PreFilter rejected: replaces the per-node reasons */
    uint64_t rejectors;   /* registry-id bits */
    size_t num_all;       /* NumAllNodes of the FitError */
};

static void diagnosis_release(struct diagnosis *d)
{
    for (size_t i = 0; i < d->n; i++)
        sched_status_release(&d->v[i].st);
    free(d->v);
    free(d->pre_filter_msg);
    memset(d, 0, sizeof(*d));
}

static void diagnosis_add(struct diagnosis *d, struct sched_node_info *ni, struct sched_status *st)
{
    if (d->n == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 16;
        d->v = xrealloc(d->v, d->cap * sizeof(*d->v));
    }
    d->v[d->n].ni = ni;
    memset(&d->v[d->n].st, 0, sizeof(d->v[d->n].st));
    sched_status_move(&d->v[d->n].st, st);
    d->n++;
}

struct reason_count {
    const char *reason;
    size_t count;
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* FitError.Error() (2.2). */
static void fit_error_message(const struct diagnosis *d, const char *post_filter_msg,
                              struct strbuf *out)
{
    strbuf_addf(out, "0/%zu nodes are available:", d->num_all);
    if (d->pre_filter_msg) {
        strbuf_addf(out, " %s.", d->pre_filter_msg);
    } else {
        struct hmap counts;
        struct hmap_entry *e;
        size_t it, n = 0;
        char **lines;

        hmap_init(&counts);
        for (size_t i = 0; i < d->n; i++)
            for (unsigned r = 0; r < d->v[i].st.n; r++)
                hmap_upsert(&counts, sched_status_reason(&d->v[i].st, r))->num += 1;
        lines = xcalloc(counts.n ? counts.n : 1, sizeof(*lines));
        for (e = hmap_first(&counts, &it); e; e = hmap_next(&counts, e, &it)) {
            struct strbuf l = STRBUF_INIT;
            strbuf_addf(&l, "%.0f %s", e->num, e->key);
            lines[n++] = strbuf_detach(&l, NULL);
        }
        qsort(lines, n, sizeof(*lines), cmp_str);
        for (size_t i = 0; i < n; i++) {
            strbuf_addf(out, "%s%s", i ? ", " : " ", lines[i]);
            free(lines[i]);
        }
        strbuf_addch(out, '.');
        free(lines);
        hmap_release(&counts);
    }
    if (post_filter_msg && *post_filter_msg)
        strbuf_addf(out, " %s", post_filter_msg);
}

/* ---- filtering ---- */

struct filter_job {
    struct sched_scheduler *s;
    struct sched_framework *fw;
    struct sched_cycle *cs;
    const struct sched_pod *pod;
    struct sched_node_info **nodes;
    size_t n, start, want;
    struct sched_node_info **feasible;
    _Atomic size_t nfeasible;
    _Atomic size_t nfailed;
    pthread_mutex_t lock; /* diagnosis */
    struct diagnosis *diag;
    _Atomic int error;
    struct sched_status err;
    struct sched_filter_plan plan;
};

/*
 * Filter runs over chunks of this many nodes (sched_framework_filter_nodes(): plugin by plugin
 * within a chunk), in the round-robin order from j->start; a chunk's results are taken in node
 * order, so the nodes counted as processed are those up to the want-th feasible one, as a loop
 * node by node would count them.
 */
#define FILTER_CHUNK 16

static void filter_chunk(void *arg, size_t c)
{
    struct filter_job *j = arg;
    size_t base = c * FILTER_CHUNK, len = j->n - base < FILTER_CHUNK ? j->n - base : FILTER_CHUNK;
    struct sched_node_info *ni[FILTER_CHUNK] = {0};
    struct sched_status st[FILTER_CHUNK];
    enum sched_code codes[FILTER_CHUNK];
    size_t i, failed = 0;

    if (atomic_load_explicit(&j->nfeasible, memory_order_relaxed) >= j->want ||
        atomic_load_explicit(&j->error, memory_order_relaxed))
        return;
    for (i = 0; i < len; i++) {
        size_t k = (j->start + base + i) % j->n;
        /* Its two lines (framework.h) are asked for together, all the chunk's at once. */
        __builtin_prefetch(j->nodes[k]);
        __builtin_prefetch((const char *)j->nodes[k] + SCHED_CACHE_LINE);
        ni[i] = sched_cycle_node(j->cs, j->nodes[k]);
    }
    memset(st, 0, len * sizeof(st[0]));
    sched_framework_filter_nodes(j->fw, &j->plan, j->cs, j->pod, ni, len, st, codes);
    for (i = 0; i < len; i++) {
        if (codes[i] == SCHED_SUCCESS) {
            size_t k = atomic_fetch_add(&j->nfeasible, 1);
            if (k < j->want) {
                j->feasible[k] = ni[i];
            } else {
                atomic_fetch_sub(&j->nfeasible, 1);
                break;
            }
            if (k + 1 >= j->want) {
                sched_pool_cancel(j->s->pool);
                i++;
                break;
            }
        } else if (!sched_code_is_rejected(codes[i])) {
            pthread_mutex_lock(&j->lock);
            if (!atomic_load(&j->error)) {
                sched_status_move(&j->err, &st[i]);
                atomic_store(&j->error, 1);
            }
            pthread_mutex_unlock(&j->lock);
            sched_pool_cancel(j->s->pool);
            i++;
            break;
        }
    }
    /* The rejected nodes up to there: the diagnosis, under one lock for the chunk. */
    for (size_t k = 0; k < i; k++) {
        if (!sched_code_is_rejected(codes[k]))
            continue;
        if (!failed++)
            pthread_mutex_lock(&j->lock);
        diagnosis_add(j->diag, ni[k], &st[k]);
    }
    if (failed) {
        pthread_mutex_unlock(&j->lock);
        atomic_fetch_add(&j->nfailed, failed);
    }
    for (size_t k = 0; k < len; k++) /* the usual Success has nothing to release */
        if (st[k].buf)
            sched_status_release(&st[k]);
}

/* The scheduler's feasible-node array, at least n long (its contents are not kept). */
static struct sched_node_info **feasible_buf(struct sched_scheduler *s, size_t n)
{
    if (n > s->feasible_cap) {
        free(s->feasible_buf);
        s->feasible_cap = n;
        s->feasible_buf = xcalloc(n, sizeof(struct sched_node_info *));
    }
    return s->feasible_buf;
}

static uint64_t plugin_bit(const char *name)
{
    int id = name ? sched_registry_find(name) : -1;

    return id >= 0 ? UINT64_C(1) << id : 0;
}

/*
 * findNodesThatFitPod: feasible nodes into *ret (n of them); on none, the diagnosis says why.
 * SCHED_SUCCESS (feasible may be empty), or SCHED_ERROR with st.
 */
static enum sched_code find_feasible(struct sched_scheduler *s, struct sched_framework *fw,
                                     struct sched_cycle *cs, const struct sched_pod *pod,
                                     struct diagnosis *diag, struct sched_node_info ***ret,
                                     size_t *ret_n, struct sched_status *st)
{
    struct sched_prefilter_result res = {0};
    struct sched_node_info **nodes = s->snap.nodes, **restricted = NULL;
    size_t n = s->snap.nnodes, want;
    uint64_t mask = 0;
    enum sched_code c;
    struct filter_job j = {0};
    double t0 = sched__now();
    int pct;

    *ret = NULL;
    *ret_n = 0;
    diag->num_all = s->snap.nnodes;
    c = sched_framework_pre_filter(fw, cs, pod, &res, st, &mask);
    observe_point(s, fw, SCHED__PT_PRE_FILTER, c, t0);
    if (c != SCHED_SUCCESS) {
        struct strbuf m = STRBUF_INIT;
        if (!sched_code_is_rejected(c)) {
            sched_prefilter_result_release(&res);
            return SCHED_ERROR;
        }
        sched_status_message(st, &m);
        diag->pre_filter_msg = strbuf_detach(&m, NULL);
        diag->rejectors |= mask;
        /* Every node carries the status (for PostFilter). */
        for (size_t i = 0; i < n; i++) {
            struct sched_status cp = {0};
            cp.code = st->code;
            cp.plugin = st->plugin;
            sched_status_add(&cp, "%s", diag->pre_filter_msg);
            diagnosis_add(diag, nodes[i], &cp);
        }
        sched_status_release(st);
        sched_prefilter_result_release(&res);
        return SCHED_SUCCESS;
    }

    /* The nominated node first (2.1). */
    if (*pod->nominated_node) {
        struct sched_node_info *ni =
            sched_cycle_node(cs, sched_snapshot_get(&s->snap, pod->nominated_node));
        struct sched_status ns = {0};
        if (ni && ni->node &&
            sched_framework_filter_nominated(fw, cs, pod, ni, &ns) == SCHED_SUCCESS) {
            *ret = feasible_buf(s, 1);
            (*ret)[0] = ni;
            *ret_n = 1;
            sched_status_release(&ns);
            sched_prefilter_result_release(&res);
            return SCHED_SUCCESS;
        }
        if (log_max_level >= LOG_DEBUG) {
            struct strbuf m = STRBUF_INIT;
            sched_status_message(&ns, &m);
            log_debug("sched", "pod %s does not fit its nominated node %s: %s", pod->key,
                      pod->nominated_node, ni ? (m.buf ? m.buf : "") : "no such node");
            strbuf_release(&m);
        }
        sched_status_release(&ns);
    }

    if (res.restrict_nodes) {
        size_t k = 0;
        restricted = xcalloc(res.n ? res.n : 1, sizeof(struct sched_node_info *));
        for (size_t i = 0; i < res.n; i++) {
            struct sched_node_info *ni = sched_snapshot_get(&s->snap, res.names[i]);
            if (ni && ni->node)
                restricted[k++] = ni;
        }
        nodes = restricted;
        n = k;
    }
    sched_prefilter_result_release(&res);

    pct = sched_framework_percentage(fw);
    if (pct < 0)
        pct = s->cfg->percentage_of_nodes_to_score;
    want = sched_framework_has_score(fw) ? nodes_to_find(pct, n) : NODES_TO_FIND_NO_SCORE;
    if (!n || !want) {
        free(restricted);
        return SCHED_SUCCESS;
    }
    j.s = s;
    j.fw = fw;
    j.cs = cs;
    j.pod = pod;
    j.nodes = nodes;
    j.n = n;
    j.start = restricted ? 0 : s->next_start % n;
    j.want = want;
    j.feasible = feasible_buf(s, want);
    j.diag = diag;
    sched_framework_filter_plan(fw, cs, sched_queue_has_nominations(s->queue), &j.plan);
    pthread_mutex_init(&j.lock, NULL);
    t0 = sched__now();
    /* Small node sets are cheaper on this thread than a wake-up of the pool. */
    sched_pool_run_measured(n >= (size_t)4 * FILTER_CHUNK ? s->pool : NULL, &s->filter_cost,
                            (n + FILTER_CHUNK - 1) / FILTER_CHUNK, 1, filter_chunk, &j);
    observe_point(s, fw, SCHED__PT_FILTER, atomic_load(&j.error) ? SCHED_ERROR : SCHED_SUCCESS, t0);
    pthread_mutex_destroy(&j.lock);
    if (!restricted)
        s->next_start = (j.start + atomic_load(&j.nfeasible) + atomic_load(&j.nfailed)) % n;
    free(restricted);
    if (atomic_load(&j.error)) {
        sched_status_move(st, &j.err);
        return SCHED_ERROR;
    }
    for (size_t i = 0; i < diag->n; i++)
        diag->rejectors |= plugin_bit(diag->v[i].st.plugin);
    *ret = j.feasible;
    *ret_n = atomic_load(&j.nfeasible);
    return SCHED_SUCCESS;
}

static unsigned rand_next(unsigned *state)
{
    unsigned x = *state ? *state : 0x9e3779b9u;

    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return x;
}

/*
 * selectHost: the highest total, ties broken uniformly at random. Upstream samples a reservoir,
 * one random draw per tie; the nodes of a cycle mostly tie (500 of them in SchedulingBasic), and
 * a draw and its modulo cost a division each, so this counts the ties first and draws once: the
 * same uniform choice among them.
 */
struct sched_node_info *sched__select_host(unsigned *rng, const struct sched_node_score *v,
                                           size_t n)
{
    int64_t max = v[0].score;
    size_t ties = 1, k;

    for (size_t i = 1; i < n; i++) {
        if (v[i].score > max) {
            max = v[i].score;
            ties = 1;
        } else if (v[i].score == max) {
            ties++;
        }
    }
    k = ties > 1 ? rand_next(rng) % ties : 0;
    for (size_t i = 0; i < n; i++)
        if (v[i].score == max && k-- == 0)
            return v[i].ni;
    return v[0].ni; /* not reached: the k-th tie exists */
}

/* ---- the attempt ---- */

/*
 * A pod decoded before any node offered a scalar resource it requests carries the name in
 * unoffered; once a node offers it, the pod is decoded again from the informer's copy so its
 * request is counted like any other. Returns whether qp->pod was replaced.
 */
static bool refresh_offered(struct sched_scheduler *s, struct sched_queued_pod *qp)
{
    struct kube_object *cur;
    struct sched_pod *fresh = NULL;
    bool offered = false;

    for (size_t i = 0; i < qp->pod->nunoffered && !offered; i++)
        offered = sched_res_lookup(qp->pod->unoffered[i]) >= 0;
    if (!offered || !s->pods_inf || !(cur = kube_informer_get(s->pods_inf, qp->pod->key)))
        return false;
    if (sched_pod_decode(kube_object_json(cur), &fresh) == 0 && !strcmp(fresh->uid, qp->pod->uid)) {
        sched_pod_unref(qp->pod);
        qp->pod = fresh;
        fresh = NULL;
        offered = true;
    } else {
        offered = false;
    }
    sched_pod_unref(fresh);
    kube_object_unref(cur);
    return offered;
}

static void observe_attempt(struct sched_scheduler *s, struct sched_framework *fw,
                            enum sched__result result, double start)
{
    static const char *const names[SCHED__NRESULTS] = {[SCHED__RES_SCHEDULED] = "scheduled",
                                                       [SCHED__RES_UNSCHEDULABLE] = "unschedulable",
                                                       [SCHED__RES_ERROR] = "error"};
    struct sched__profile_series *ps = profile_series(s, fw);
    struct sched_series *count =
        ps ? atomic_load_explicit(&ps->attempts[result], memory_order_acquire) : NULL;
    struct sched_series *dur =
        ps ? atomic_load_explicit(&ps->attempt_duration[result], memory_order_acquire) : NULL;

    if (!count || !dur) {
        char labels[256];
        (void)snprintf(labels, sizeof(labels), "profile=\"%s\",result=\"%s\"",
                       sched_framework_name(fw), names[result]);
        if (ps) {
            count =
                series_at(s, &ps->attempts[result], "scheduler_schedule_attempts_total", labels);
            dur = series_at(s, &ps->attempt_duration[result],
                            "scheduler_scheduling_attempt_duration_seconds", labels);
        } else {
            count = sched_metrics_series(s->metrics, "scheduler_schedule_attempts_total", labels);
            dur = sched_metrics_series(s->metrics, "scheduler_scheduling_attempt_duration_seconds",
                                       labels);
        }
    }
    sched_metrics_series_add(s->metrics, count, 1);
    sched_metrics_series_observe(s->metrics, dur, sched__now() - start);
}

int sched_scheduler_schedule_one(struct sched_scheduler *s, double timeout_s)
{
    struct sched_queued_pod *qp = NULL;
    struct sched_framework *fw;
    struct sched_cycle *cs = NULL;
    struct sched_node_info **feasible = NULL; /* s->feasible_buf */
    struct sched_node_score *scores = NULL;   /* s->scores_buf */
    struct diagnosis diag = {0};
    struct sched_status st = {0};
    size_t nfeasible = 0;
    const struct sched_pod *pod;
    const char *host = NULL;
    double start;
    enum sched_code c;
    int r;

    r = sched_queue_pop(s->queue, timeout_s, &qp);
    if (r == -ETIMEDOUT)
        return 0;
    if (r < 0)
        return r;
    start = sched__now();
    pod = qp->pod;
    fw = sched__framework_of(s, pod->scheduler_name);
    if (!fw) {
        log_debug("sched", "no profile for pod %s (schedulerName \"%s\"), dropping", pod->key,
                  pod->scheduler_name);
        sched_queue_done(s->queue, pod->key);
        sched_queued_pod_free(qp);
        return 1;
    }
    if (pod->deleting || sched_cache_has_pod(s->cache, pod->uid)) {
        sched_queue_done(s->queue, pod->key);
        sched_queued_pod_free(qp);
        return 1;
    }
    if (pod->nunoffered && refresh_offered(s, qp))
        pod = qp->pod;
    atomic_fetch_add(&s->attempts, 1);
    if (pod->invalid) {
        struct sched_status inv = {0};
        inv.code = SCHED_UNRESOLVABLE;
        qp->unschedulable_plugins = SCHED__INVALID_POD_BIT;
        atomic_fetch_add(&s->unschedulable, 1);
        observe_attempt(s, fw, SCHED__RES_UNSCHEDULABLE, start);
        sched__fail(s, fw, qp, &inv, pod->invalid, NULL);
        return 1;
    }

    cs = sched_cycle_new();
    if (rand_next(&s->rng) % 100 < PLUGIN_METRICS_SAMPLE_PERCENT)
        sched_cycle_set_sampled(cs);
    (void)sched_cache_update_snapshot(s->cache, &s->snap);
    sched_framework_set_snapshot(fw, &s->snap);

    if (!s->snap.nnodes) {
        struct sched_status none = {0};
        none.code = SCHED_UNRESOLVABLE;
        atomic_fetch_add(&s->unschedulable, 1);
        observe_attempt(s, fw, SCHED__RES_UNSCHEDULABLE, start);
        sched__fail(s, fw, qp, &none,
                    "0/0 nodes are available: no nodes available to schedule pods.", NULL);
        sched_cycle_free(cs);
        return 1;
    }

    c = find_feasible(s, fw, cs, pod, &diag, &feasible, &nfeasible, &st);
    if (c != SCHED_SUCCESS)
        goto error;
    if (!nfeasible) {
        struct strbuf msg = STRBUF_INIT, pf = STRBUF_INIT;
        struct sched_status fit = {0};
        char *nominated = NULL;

        qp->unschedulable_plugins = diag.rejectors;
        if (sched_framework_has_post_filter(fw)) {
            struct sched_node_statuses m = {0};
            struct sched_post_filter_result pr = {0};
            struct sched_status ps = {0};
            enum sched_code pc;
            double t0 = sched__now();
            m.n = diag.n;
            m.nodes = xcalloc(diag.n ? diag.n : 1, sizeof(struct sched_node_info *));
            m.status = xcalloc(diag.n ? diag.n : 1, sizeof(*m.status));
            for (size_t i = 0; i < diag.n; i++) {
                m.nodes[i] = diag.v[i].ni;
                m.status[i] = diag.v[i].st; /* borrowed */
            }
            pc = sched_framework_post_filter(fw, cs, pod, &m, &pr, &ps);
            sched_metrics_add(s->metrics, "scheduler_preemption_attempts_total", "", 1);
            observe_point(s, fw, SCHED__PT_POST_FILTER, pc, t0);
            if (ps.n)
                sched_status_message(&ps, &pf);
            nominated = pr.nominated_node;
            sched_status_release(&ps);
            free(m.nodes);
            free(m.status);
        }
        fit_error_message(&diag, pf.buf, &msg);
        fit.code = SCHED_UNSCHEDULABLE;
        atomic_fetch_add(&s->unschedulable, 1);
        observe_attempt(s, fw, SCHED__RES_UNSCHEDULABLE, start);
        sched__fail(s, fw, qp, &fit, msg.buf, nominated);
        free(nominated);
        strbuf_release(&msg);
        strbuf_release(&pf);
        goto out;
    }
    if (nfeasible == 1) {
        host = feasible[0]->name;
    } else {
        double t0 = sched__now();
        if (nfeasible > s->scores_cap) {
            free(s->scores_buf);
            s->scores_cap = nfeasible;
            s->scores_buf = xcalloc(nfeasible, sizeof(*s->scores_buf));
        }
        scores = s->scores_buf;
        for (size_t i = 0; i < nfeasible; i++)
            scores[i].ni = feasible[i];
        c = sched_framework_score(fw, cs, pod, scores, nfeasible, &st);
        observe_point(s, fw, SCHED__PT_SCORE, c, t0);
        if (c != SCHED_SUCCESS)
            goto error;
        host = sched__select_host(&s->rng, scores, nfeasible)->name;
    }
    sched_metrics_series_observe(
        s->metrics,
        series_at(s, &s->series.algorithm, "scheduler_scheduling_algorithm_duration_seconds", ""),
        sched__now() - start);

    /* Assume, Reserve, Permit; then the binding cycle elsewhere. */
    if (sched_cache_assume(s->cache, qp->pod, host) < 0) {
        sched_status_set(&st, SCHED_ERROR, "pod %s is already in the cache", pod->key);
        goto error;
    }
    sched_queue_nominate(s->queue, qp->pod, NULL);
    c = sched_framework_reserve(fw, cs, pod, host, &st);
    if (c == SCHED_SUCCESS)
        c = sched_framework_permit(fw, cs, pod, host, &st);
    if (c != SCHED_SUCCESS) {
        sched_framework_unreserve(fw, cs, pod, host);
        (void)sched_cache_forget(s->cache, pod->uid);
        if (sched_code_is_rejected(c)) {
            struct strbuf msg = STRBUF_INIT, m = STRBUF_INIT;
            sched_status_message(&st, &m);
            strbuf_addf(&msg, "0/1 nodes are available: 1 %s.", m.buf ? m.buf : "");
            qp->unschedulable_plugins = plugin_bit(st.plugin);
            atomic_fetch_add(&s->unschedulable, 1);
            observe_attempt(s, fw, SCHED__RES_UNSCHEDULABLE, start);
            sched__fail(s, fw, qp, &st, msg.buf, NULL);
            strbuf_release(&msg);
            strbuf_release(&m);
            goto out;
        }
        goto error;
    }
    {
        struct sched__job *j = xcalloc(1, sizeof(*j));
        j->kind = SCHED__JOB_BIND;
        j->fw = fw;
        j->qp = qp;
        j->cs = cs;
        j->node = xstrdup(host);
        j->start = start;
        qp = NULL;
        cs = NULL;
        sched__submit(s, j);
    }
    goto out;

error : {
    struct strbuf m = STRBUF_INIT;
    sched_status_message(&st, &m);
    st.code = SCHED_ERROR;
    qp->unschedulable_plugins = 0;
    atomic_fetch_add(&s->errors, 1);
    observe_attempt(s, fw, SCHED__RES_ERROR, start);
    sched__fail(s, fw, qp, &st, m.buf ? m.buf : "internal error", NULL);
    strbuf_release(&m);
}
out:
    sched_status_release(&st);
    diagnosis_release(&diag);
    sched_cycle_free(cs);
    return 1;
}

/* ---- the binding cycle (runs on an API thread) ---- */

void sched__bind(struct sched_scheduler *s, struct sched__job *j)
{
    const struct sched_pod *pod = j->qp->pod;
    struct sched_status st = {0};
    enum sched_code c;
    double t0 = sched__now();

    c = sched_framework_pre_bind(j->fw, j->cs, pod, j->node, &st);
    if (c == SCHED_SUCCESS) {
        if (s->o.bind_hook) {
            int r = s->o.bind_hook(s->o.userdata, pod, j->node);
            c = r < 0 ? SCHED_ERROR : SCHED_SUCCESS;
            if (r < 0)
                sched_status_set(&st, SCHED_ERROR, "binding rejected: %s", strerror(-r));
        } else {
            c = sched_framework_bind(j->fw, j->cs, pod, j->node, &st);
        }
    }
    observe_point(s, j->fw, SCHED__PT_BIND, c, t0);
    sched_cache_finish_binding(s->cache, pod->uid, sched__now());
    if (c == SCHED_SUCCESS) {
        static const char sli[] = "scheduler_pod_scheduling_sli_duration_seconds";
        int a = j->qp->attempts >= 15 ? 15 : j->qp->attempts;
        _Atomic(struct sched_series *) *slot = a > 0 ? &s->series.sli[a] : NULL;
        struct sched_series *ser = slot ? atomic_load_explicit(slot, memory_order_acquire) : NULL;
        double now = sched__now();
        atomic_fetch_add(&s->scheduled, 1);
        atomic_fetch_add(&s->bound, 1);
        observe_attempt(s, j->fw, SCHED__RES_SCHEDULED, j->start);
        if (!ser) {
            char labels[64];
            if (a >= 15)
                (void)snprintf(labels, sizeof(labels), "attempts=\"15+\"");
            else
                (void)snprintf(labels, sizeof(labels), "attempts=\"%d\"", a);
            ser = slot ? series_at(s, slot, sli, labels)
                       : sched_metrics_series(s->metrics, sli, labels);
        }
        sched_metrics_series_observe(
            s->metrics, ser, now - (j->qp->initial_attempt ? j->qp->initial_attempt : j->start));
        sched_metrics_series_observe(
            s->metrics,
            series_at(s, &s->series.pod_attempts, "scheduler_pod_scheduling_attempts", ""),
            j->qp->attempts);
        if (s->recorder && !s->o.bind_hook) {
            struct sched__job *ev = xcalloc(1, sizeof(*ev));
            ev->kind = SCHED__JOB_EVENT;
            ev->pod = sched_pod_ref(j->qp->pod);
            ev->node = xstrdup(j->node);
            sched__submit(s, ev);
        }
        sched_framework_post_bind(j->fw, j->cs, pod, j->node);
        sched_queue_done(s->queue, pod->key);
        sched_queued_pod_free(j->qp);
    } else {
        struct strbuf m = STRBUF_INIT;
        atomic_fetch_add(&s->bind_failures, 1);
        sched_framework_unreserve(j->fw, j->cs, pod, j->node);
        (void)sched_cache_forget(s->cache, pod->uid);
        /* The assumed resources are free again. */
        sched_queue_move_all(s->queue, "AssignedPodDelete", "Pod", SCHED_ACT_DELETE, NULL, NULL);
        sched_status_message(&st, &m);
        log_debug("sched", "binding pod %s to %s failed: %s", pod->key, j->node,
                  m.buf ? m.buf : "");
        j->qp->unschedulable_plugins = 0;
        st.code = SCHED_ERROR;
        atomic_fetch_add(&s->errors, 1);
        observe_attempt(s, j->fw, SCHED__RES_ERROR, j->start);
        sched__fail(s, j->fw, j->qp, &st, m.buf ? m.buf : "binding failed", NULL);
        strbuf_release(&m);
    }
    j->qp = NULL;
    sched_status_release(&st);
}
