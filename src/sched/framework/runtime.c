/* The framework runtime of runtime.h (kube-scheduler framework/runtime/framework.go). */
#include "sched/framework/runtime.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/field.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "sched/config/config.h"
#include "sched/framework/parallel.h"
#include "sched/metrics.h"
#include "sched/plugins/registry.h"

struct fw_plugin {
    const struct sched_plugin *pl;
    int id;
    void *self;
    int32_t weight;
};

struct sched_handle {
    struct sched_framework *fw;
};

struct sched_framework {
    char *name;
    int pct;
    struct fw_plugin inst[SCHED_MAX_PLUGINS]; /* by registry id; pl NULL when not enabled */
    struct fw_plugin *pts[SCHED_PT_COUNT];    /* copies of inst entries with the point's weight */
    size_t npts[SCHED_PT_COUNT];
    uint64_t enabled;
    struct sched_handle handle;
    struct sched_framework_opts o;
    struct sched_pool_cost score_cost; /* the Score loop's, on the scheduling thread */
    /* Score's arrays, kept from cycle to cycle (only the scheduling thread scores): a fresh
     * calloc of tens of KB per cycle made glibc consolidate its fastbins every time. */
    struct sched_node_info **score_nodes;
    size_t score_nodes_cap;
    struct sched_node_score *plugin_scores;
    size_t plugin_scores_cap;
    const struct sched_snapshot *snap;
};

static bool implements(const struct sched_plugin *pl, enum sched_point p)
{
    switch (p) {
    case SCHED_PT_PRE_ENQUEUE:
        return pl->pre_enqueue;
    case SCHED_PT_QUEUE_SORT:
        return pl->less;
    case SCHED_PT_PRE_FILTER:
        return pl->pre_filter;
    case SCHED_PT_FILTER:
        return pl->filter;
    case SCHED_PT_POST_FILTER:
        return pl->post_filter;
    case SCHED_PT_PRE_SCORE:
        return pl->pre_score;
    case SCHED_PT_SCORE:
        return pl->score;
    case SCHED_PT_RESERVE:
        return pl->reserve || pl->unreserve;
    case SCHED_PT_PERMIT:
        return pl->permit;
    case SCHED_PT_PRE_BIND:
        return pl->pre_bind;
    case SCHED_PT_BIND:
        return pl->bind;
    case SCHED_PT_POST_BIND:
        return pl->post_bind;
    case SCHED_PT_COUNT:
        break;
    }
    return false;
}

int sched_framework_new(const struct sched_profile_config *pc,
                        const struct sched_framework_opts *opts, struct sched_framework **ret,
                        struct field_errors *errs)
{
    struct sched_framework *fw = xcalloc(1, sizeof(*fw));
    int r = 0;

    fw->name = xstrdup(pc->scheduler_name);
    fw->pct = pc->percentage_of_nodes_to_score;
    fw->o = *opts;
    fw->handle.fw = fw;
    for (int p = 0; p < SCHED_PT_COUNT; p++) {
        size_t n = 0;
        fw->pts[p] = pc->npoints[p] ? xcalloc(pc->npoints[p], sizeof(struct fw_plugin)) : NULL;
        for (size_t i = 0; i < pc->npoints[p]; i++) {
            const struct sched_plugin_ref *ref = &pc->points[p][i];
            const struct sched_plugin *pl = sched_registry_get(ref->id);
            struct fw_plugin *in = &fw->inst[ref->id];
            if (!implements(pl, (enum sched_point)p))
                continue;
            if (!in->pl) {
                char path[96];
                in->pl = pl;
                in->id = ref->id;
                (void)snprintf(path, sizeof(path), "profiles[%s].pluginConfig[%s].args",
                               pc->scheduler_name, pl->name);
                if (pl->init && pl->init(pc->args[ref->id], path, &fw->handle, &in->self, errs) < 0)
                    r = -EINVAL;
                fw->enabled |= UINT64_C(1) << ref->id;
            }
            fw->pts[p][n] = *in;
            fw->pts[p][n].weight = ref->weight > 0 ? ref->weight : 1;
            n++;
        }
        fw->npts[p] = n;
    }
    if (r < 0) {
        sched_framework_free(fw);
        return r;
    }
    *ret = fw;
    return 0;
}

void sched_framework_free(struct sched_framework *fw)
{
    if (!fw)
        return;
    for (int i = 0; i < SCHED_MAX_PLUGINS; i++)
        if (fw->inst[i].pl && fw->inst[i].pl->free && fw->inst[i].self)
            fw->inst[i].pl->free(fw->inst[i].self);
    for (int p = 0; p < SCHED_PT_COUNT; p++)
        free(fw->pts[p]);
    free(fw->score_nodes);
    free(fw->plugin_scores);
    free(fw->name);
    free(fw);
}

const char *sched_framework_name(const struct sched_framework *fw)
{
    return fw->name;
}

int sched_framework_percentage(const struct sched_framework *fw)
{
    return fw->pct;
}

struct sched_handle *sched_framework_handle(struct sched_framework *fw)
{
    return &fw->handle;
}

void sched_framework_set_snapshot(struct sched_framework *fw, const struct sched_snapshot *s)
{
    fw->snap = s;
}

bool sched_framework_has_score(const struct sched_framework *fw)
{
    return fw->npts[SCHED_PT_SCORE] > 0;
}

bool sched_framework_has_post_filter(const struct sched_framework *fw)
{
    return fw->npts[SCHED_PT_POST_FILTER] > 0;
}

uint64_t sched_framework_plugins(const struct sched_framework *fw)
{
    return fw->enabled;
}

static bool reg_matches(const struct sched_event_reg *e, const char *resource, unsigned actions)
{
    return (!strcmp(e->resource, "*") || !strcmp(e->resource, resource)) && (e->actions & actions);
}

bool sched_framework_interested(const struct sched_framework *fw, uint64_t mask,
                                const char *resource, unsigned actions)
{
    if (!mask)
        mask = fw->enabled;
    for (int id = 0; id < SCHED_MAX_PLUGINS; id++) {
        const struct sched_plugin *pl = fw->inst[id].pl;
        if (!(mask >> id & 1) || !pl)
            continue;
        /* A plugin that does not say is interested in everything (EnqueueExtensions). */
        if (!pl->events)
            return true;
        for (const struct sched_event_reg *e = pl->events; e->resource; e++)
            if (reg_matches(e, resource, actions))
                return true;
    }
    return false;
}

/* ---- handle ---- */

const struct sched_snapshot *sched_handle_snapshot(const struct sched_handle *h)
{
    return h ? h->fw->snap : NULL;
}

struct sched_rcache *sched_handle_reservations(const struct sched_handle *h)
{
    return h ? h->fw->o.reservations : NULL;
}

struct kube_client *sched_handle_client(const struct sched_handle *h)
{
    return h ? h->fw->o.client : NULL;
}

struct kube_recorder *sched_handle_recorder(const struct sched_handle *h)
{
    return h ? h->fw->o.recorder : NULL;
}

const char *sched_handle_profile_name(const struct sched_handle *h)
{
    return h ? h->fw->name : "";
}

enum sched_code sched_handle_run_filters(struct sched_handle *h, struct sched_cycle *cs,
                                         const struct sched_pod *pod,
                                         const struct sched_node_info *ni, struct sched_status *st)
{
    struct sched_status tmp = {0};
    enum sched_code c = sched_framework_filter_nominated(h->fw, cs, pod, ni, &tmp);

    if (st)
        sched_status_move(st, &tmp);
    else
        sched_status_release(&tmp);
    return c;
}

static enum sched_code run_pod_ext(struct sched_framework *fw, struct sched_cycle *cs,
                                   const struct sched_pod *pod, struct sched_pod *other,
                                   struct sched_node_info *ni, struct sched_status *st, bool add)
{
    for (size_t i = 0; i < fw->npts[SCHED_PT_PRE_FILTER]; i++) {
        const struct fw_plugin *p = &fw->pts[SCHED_PT_PRE_FILTER][i];
        enum sched_code c;
        if (sched_cycle_skip_filter(cs, p->id))
            continue;
        if (add && p->pl->add_pod)
            c = p->pl->add_pod(p->self, cs, pod, other, ni, st);
        else if (!add && p->pl->remove_pod)
            c = p->pl->remove_pod(p->self, cs, pod, other, ni, st);
        else
            continue;
        if (c != SCHED_SUCCESS) {
            st->code = SCHED_ERROR;
            st->plugin = p->pl->name;
            return SCHED_ERROR;
        }
    }
    return SCHED_SUCCESS;
}

enum sched_code sched_handle_run_add_pod(struct sched_handle *h, struct sched_cycle *cs,
                                         const struct sched_pod *pod, struct sched_pod *add,
                                         struct sched_node_info *ni, struct sched_status *st)
{
    return run_pod_ext(h->fw, cs, pod, add, ni, st, true);
}

enum sched_code sched_handle_run_remove_pod(struct sched_handle *h, struct sched_cycle *cs,
                                            const struct sched_pod *pod, struct sched_pod *rm,
                                            struct sched_node_info *ni, struct sched_status *st)
{
    return run_pod_ext(h->fw, cs, pod, rm, ni, st, false);
}

void sched_handle_add_informer(struct sched_handle *h, struct kube_informer *inf)
{
    if (h->fw->o.add_informer)
        h->fw->o.add_informer(h->fw->o.userdata, inf);
}

void sched_handle_cluster_event(struct sched_handle *h, const char *label, const char *resource,
                                unsigned actions)
{
    if (h->fw->o.cluster_event)
        h->fw->o.cluster_event(h->fw->o.userdata, label, resource, actions);
}

void sched_handle_activate(struct sched_handle *h, const char *const *keys, size_t n)
{
    if (h->fw->o.activate)
        h->fw->o.activate(h->fw->o.userdata, keys, n);
}

bool sched_handle_leading(const struct sched_handle *h)
{
    return !h->fw->o.leading || h->fw->o.leading(h->fw->o.userdata);
}

size_t sched_handle_nominated(struct sched_handle *h, const char *node, struct sched_pod ***ret)
{
    *ret = NULL;
    if (!h->fw->o.nominated)
        return 0;
    return h->fw->o.nominated(h->fw->o.userdata, node, ret);
}

void sched_framework_pod_event(struct sched_framework *fw, const struct sched_pod *pod, bool gone)
{
    for (int i = 0; i < SCHED_MAX_PLUGINS; i++)
        if (fw->inst[i].pl && fw->inst[i].pl->pod_event)
            fw->inst[i].pl->pod_event(fw->inst[i].self, pod, gone);
}

void sched_framework_node_event(struct sched_framework *fw, const struct sched_node *node,
                                bool gone)
{
    for (int i = 0; i < SCHED_MAX_PLUGINS; i++)
        if (fw->inst[i].pl && fw->inst[i].pl->node_event)
            fw->inst[i].pl->node_event(fw->inst[i].self, node, gone);
}

/* ---- plugin execution metrics ---- */

static double mono_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* scheduler_plugin_execution_duration_seconds, for the cycles the caller samples (10 %, as
 * upstream's pluginMetricsSamplePercent); once-per-cycle points only, not Filter and Score
 * per node. */
static void observe_plugin(const struct sched_cycle *cs, struct sched_framework *fw,
                           const char *plugin, const char *point, enum sched_code c, double t0)
{
    char labels[192];

    if (!fw->o.metrics || !sched_cycle_sampled(cs))
        return;
    (void)snprintf(labels, sizeof(labels), "extension_point=\"%s\",plugin=\"%s\",status=\"%s\"",
                   point, plugin, sched_code_name(c));
    sched_metrics_observe(fw->o.metrics, "scheduler_plugin_execution_duration_seconds", labels,
                          mono_now() - t0);
}

/* ---- points ---- */

enum sched_code sched_framework_pre_enqueue(struct sched_framework *fw, const struct sched_pod *pod,
                                            int *ret_plugin, struct sched_status *st)
{
    for (size_t i = 0; i < fw->npts[SCHED_PT_PRE_ENQUEUE]; i++) {
        const struct fw_plugin *p = &fw->pts[SCHED_PT_PRE_ENQUEUE][i];
        enum sched_code c = p->pl->pre_enqueue(p->self, pod, st);
        if (c != SCHED_SUCCESS) {
            st->code = c;
            st->plugin = p->pl->name;
            *ret_plugin = p->id;
            return c;
        }
    }
    return SCHED_SUCCESS;
}

bool sched_framework_less(struct sched_framework *fw, const struct sched_pod *a, double ta,
                          const struct sched_pod *b, double tb)
{
    const struct fw_plugin *p;

    if (!fw->npts[SCHED_PT_QUEUE_SORT])
        return a->priority > b->priority || (a->priority == b->priority && ta < tb);
    p = &fw->pts[SCHED_PT_QUEUE_SORT][0];
    return p->pl->less(p->self, a, ta, b, tb);
}

void sched_prefilter_result_release(struct sched_prefilter_result *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->names[i]);
    free(r->names);
    memset(r, 0, sizeof(*r));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* An empty set may come without an array (names NULL): qsort and bsearch must not see it. */
static void sort_names(struct sched_prefilter_result *r)
{
    if (r->n > 1)
        qsort(r->names, r->n, sizeof(char *), cmp_str);
}

/* Keeps in acc only the names also in r (both sorted). */
static void intersect(struct sched_prefilter_result *acc, struct sched_prefilter_result *r)
{
    size_t k = 0;

    sort_names(r);
    for (size_t i = 0; i < acc->n; i++) {
        if (r->n && bsearch(&acc->names[i], r->names, r->n, sizeof(char *), cmp_str))
            acc->names[k++] = acc->names[i];
        else
            free(acc->names[i]);
    }
    acc->n = k;
}

enum sched_code sched_framework_pre_filter(struct sched_framework *fw, struct sched_cycle *cs,
                                           const struct sched_pod *pod,
                                           struct sched_prefilter_result *res,
                                           struct sched_status *st, uint64_t *ret_mask)
{
    struct sched_status remembered = {0};
    uint64_t rejectors = 0;
    struct strbuf names = STRBUF_INIT;
    unsigned nnames = 0;

    memset(res, 0, sizeof(*res));
    *ret_mask = 0;
    for (size_t i = 0; i < fw->npts[SCHED_PT_PRE_FILTER]; i++) {
        const struct fw_plugin *p = &fw->pts[SCHED_PT_PRE_FILTER][i];
        struct sched_prefilter_result r = {0};
        struct sched_status s = {0};
        double t0 = mono_now();
        enum sched_code c = p->pl->pre_filter(p->self, cs, pod, &r, &s);

        observe_plugin(cs, fw, p->pl->name, "PreFilter", c, t0);

        if (c == SCHED_SKIP) {
            sched_cycle_set_skip_filter(cs, p->id);
            sched_prefilter_result_release(&r);
            sched_status_release(&s);
            continue;
        }
        if (c == SCHED_UNRESOLVABLE) {
            s.code = c;
            s.plugin = p->pl->name;
            sched_status_move(st, &s);
            *ret_mask = UINT64_C(1) << p->id;
            sched_prefilter_result_release(&r);
            sched_status_release(&remembered);
            sched_prefilter_result_release(res);
            strbuf_release(&names);
            return c;
        }
        if (c == SCHED_UNSCHEDULABLE) {
            /* The rest still run (preemption needs their state); the last one is the
             * status (framework.go returnStatus = s). Anything else but Success and Skip,
             * Pending included, is an error below. */
            s.code = c;
            s.plugin = p->pl->name;
            sched_status_move(&remembered, &s);
            rejectors |= UINT64_C(1) << p->id;
            sched_status_release(&s);
            sched_prefilter_result_release(&r);
            continue;
        }
        if (c != SCHED_SUCCESS) {
            struct strbuf m = STRBUF_INIT;
            sched_status_message(&s, &m);
            sched_status_release(st);
            sched_status_set(st, SCHED_ERROR, "running PreFilter plugin \"%s\": %s", p->pl->name,
                             m.buf ? m.buf : "");
            st->plugin = p->pl->name;
            strbuf_release(&m);
            sched_status_release(&s);
            sched_prefilter_result_release(&r);
            sched_status_release(&remembered);
            sched_prefilter_result_release(res);
            strbuf_release(&names);
            return SCHED_ERROR;
        }
        sched_status_release(&s);
        if (!r.restrict_nodes)
            continue;
        /* Go prints the []string of names as "[A B]". */
        if (nnames++)
            strbuf_addch(&names, ' ');
        strbuf_addstr(&names, p->pl->name);
        if (!res->restrict_nodes) {
            *res = r;
            sort_names(res);
        } else {
            intersect(res, &r);
            sched_prefilter_result_release(&r);
        }
        if (!res->n) {
            sched_status_release(st);
            sched_status_set(st, SCHED_UNRESOLVABLE,
                             nnames == 1 ? "node(s) didn't satisfy plugin %s"
                                         : "node(s) didn't satisfy plugin(s) [%s] simultaneously",
                             names.buf);
            st->plugin = p->pl->name;
            *ret_mask = UINT64_C(1) << p->id;
            sched_status_release(&remembered);
            strbuf_release(&names);
            return SCHED_UNRESOLVABLE;
        }
    }
    strbuf_release(&names);
    if (remembered.code) {
        sched_status_move(st, &remembered);
        *ret_mask = rejectors;
        return st->code;
    }
    return SCHED_SUCCESS;
}

void sched_framework_filter_plan(const struct sched_framework *fw, const struct sched_cycle *cs,
                                 bool nominations, struct sched_filter_plan *ret)
{
    uint64_t skip = sched_cycle_skip_filter_mask(cs);

    ret->n = 0;
    ret->nominations = nominations;
    for (size_t i = 0; i < fw->npts[SCHED_PT_FILTER]; i++) {
        const struct fw_plugin *p = &fw->pts[SCHED_PT_FILTER][i];
        if (!(skip >> p->id & 1) && p->pl->filter)
            ret->v[ret->n++] = p;
    }
}

/* A Filter call that did not succeed: st completed (an error wrapped as upstream words it). */
static enum sched_code filter_failed(const struct fw_plugin *p, enum sched_code c,
                                     struct sched_status *st)
{
    if (!sched_code_is_rejected(c)) {
        struct strbuf m = STRBUF_INIT;
        sched_status_message(st, &m);
        sched_status_release(st);
        sched_status_set(st, SCHED_ERROR, "running \"%s\" filter plugin: %s", p->pl->name,
                         m.buf ? m.buf : "");
        strbuf_release(&m);
        c = SCHED_ERROR;
    }
    st->code = c;
    st->plugin = p->pl->name;
    return c;
}

/* Filter on one node under plan, without the nominated pods. */
static enum sched_code filter_plain(const struct sched_filter_plan *plan, struct sched_cycle *cs,
                                    const struct sched_pod *pod, const struct sched_node_info *ni,
                                    struct sched_status *st)
{
    for (size_t i = 0; i < plan->n; i++) {
        const struct fw_plugin *p = plan->v[i];
        enum sched_code c = p->pl->filter(p->self, cs, pod, ni, st);

        if (__builtin_expect(c != SCHED_SUCCESS, 0))
            return filter_failed(p, c, st);
    }
    return SCHED_SUCCESS;
}

void sched_framework_filter_nodes(struct sched_framework *fw, const struct sched_filter_plan *plan,
                                  struct sched_cycle *cs, const struct sched_pod *pod,
                                  struct sched_node_info *const *ni, size_t n,
                                  struct sched_status *st, enum sched_code *codes)
{
    unsigned char alive[SCHED_FILTER_NODES_MAX];
    size_t m = 0;

    CHECK(n <= SCHED_FILTER_NODES_MAX);
    if (plan->nominations && fw->o.nominated) {
        for (size_t i = 0; i < n; i++)
            codes[i] = sched_framework_filter_planned(fw, plan, cs, pod, ni[i], &st[i]);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        codes[i] = SCHED_SUCCESS;
        alive[m++] = (unsigned char)i;
    }
    /* Plugin by plugin over the nodes still in: a node leaves at its first failure, so each
     * node's status is the one plugin-by-plugin order gives it. */
    for (size_t k = 0; k < plan->n && m; k++) {
        const struct fw_plugin *p = plan->v[k];
        size_t left = 0;

        for (size_t a = 0; a < m; a++) {
            size_t i = alive[a];
            enum sched_code c = p->pl->filter(p->self, cs, pod, ni[i], &st[i]);

            if (__builtin_expect(c == SCHED_SUCCESS, 1))
                alive[left++] = (unsigned char)i;
            else
                codes[i] = filter_failed(p, c, &st[i]);
        }
        m = left;
    }
}

enum sched_code sched_framework_filter(struct sched_framework *fw, struct sched_cycle *cs,
                                       const struct sched_pod *pod,
                                       const struct sched_node_info *ni, struct sched_status *st)
{
    struct sched_filter_plan plan;

    sched_framework_filter_plan(fw, cs, false, &plan);
    return filter_plain(&plan, cs, pod, ni, st);
}

enum sched_code sched_framework_filter_nominated(struct sched_framework *fw, struct sched_cycle *cs,
                                                 const struct sched_pod *pod,
                                                 const struct sched_node_info *ni,
                                                 struct sched_status *st)
{
    struct sched_filter_plan plan;

    sched_framework_filter_plan(fw, cs, true, &plan);
    return sched_framework_filter_planned(fw, &plan, cs, pod, ni, st);
}

enum sched_code sched_framework_filter_planned(struct sched_framework *fw,
                                               const struct sched_filter_plan *plan,
                                               struct sched_cycle *cs, const struct sched_pod *pod,
                                               const struct sched_node_info *ni,
                                               struct sched_status *st)
{
    struct sched_pod **nom = NULL;
    size_t n = 0, added = 0;
    struct sched_node_info *copy = NULL;
    struct sched_cycle *cs2 = NULL;
    enum sched_code c;

    if (plan->nominations && fw->o.nominated)
        n = fw->o.nominated(fw->o.userdata, ni->name, &nom);
    if (!n) /* the usual case, once per node of every cycle: one pass, nothing to free */
        return filter_plain(plan, cs, pod, ni, st);
    /* Pass 1 with the nominated pods of at least the pod's priority (not itself). */
    for (size_t i = 0; i < n; i++) {
        if (nom[i]->priority < pod->priority || !strcmp(nom[i]->uid, pod->uid))
            continue;
        if (!copy) {
            copy = sched_node_info_clone(ni);
            cs2 = sched_cycle_clone(cs);
        }
        sched_node_info_add_pod(copy, nom[i]);
        if (run_pod_ext(fw, cs2, pod, nom[i], copy, st, true) != SCHED_SUCCESS) {
            c = SCHED_ERROR;
            goto out;
        }
        added++;
    }
    if (added) {
        c = filter_plain(plan, cs2, pod, copy, st);
        if (c != SCHED_SUCCESS)
            goto out;
    }
    c = filter_plain(plan, cs, pod, ni, st);
out:
    sched_node_info_free(copy);
    sched_cycle_free(cs2);
    sched_pods_free(nom, n);
    return c;
}

enum sched_code sched_framework_post_filter(struct sched_framework *fw, struct sched_cycle *cs,
                                            const struct sched_pod *pod,
                                            const struct sched_node_statuses *m,
                                            struct sched_post_filter_result *res,
                                            struct sched_status *st)
{
    enum sched_code last = SCHED_UNSCHEDULABLE;

    for (size_t i = 0; i < fw->npts[SCHED_PT_POST_FILTER]; i++) {
        const struct fw_plugin *p = &fw->pts[SCHED_PT_POST_FILTER][i];
        struct sched_status s = {0};
        double t0 = mono_now();
        enum sched_code c = p->pl->post_filter(p->self, cs, pod, m, res, &s);

        observe_plugin(cs, fw, p->pl->name, "PostFilter", c, t0);
        s.code = c;
        s.plugin = p->pl->name;
        sched_status_move(st, &s);
        last = c;
        if (c == SCHED_SUCCESS || c == SCHED_ERROR || c == SCHED_UNRESOLVABLE)
            return c;
    }
    return last;
}

/* ---- scoring ---- */

struct score_job {
    struct sched_framework *fw;
    struct sched_cycle *cs;
    const struct sched_pod *pod;
    struct sched_node_score *scores; /* n per plugin, plugin-major */
    const struct sched_node_score *nodes;
    size_t n;
    const struct fw_plugin **pls;
    size_t npls;
    _Atomic int failed;
    struct sched_status err;
    pthread_mutex_t lock;
};

/* A Score call that failed: the first failure of the loop is its error. */
static void score_failed(struct score_job *j, const struct fw_plugin *p, enum sched_code c,
                         const struct sched_status *s)
{
    if (c == SCHED_SUCCESS)
        return;
    pthread_mutex_lock(&j->lock);
    if (!atomic_load(&j->failed)) {
        struct strbuf m = STRBUF_INIT;
        sched_status_message(s, &m);
        sched_status_set(&j->err, SCHED_ERROR, "running Score plugin \"%s\": %s", p->pl->name,
                         m.buf ? m.buf : "");
        j->err.plugin = p->pl->name;
        strbuf_release(&m);
        atomic_store(&j->failed, 1);
    }
    pthread_mutex_unlock(&j->lock);
}

/*
 * Score runs over chunks of this many nodes, plugin by plugin within a chunk: a plugin's state
 * (its args, the pod's cycle state) stays in registers over the chunk, a plugin with
 * score_nodes is called once per chunk rather than once per node, and the chunk's NodeInfos
 * (two lines each, framework.h) stay in L1 from one plugin to the next.
 */
#define SCORE_CHUNK 32

/* Asks for the two lines (framework.h) of each of the n NodeInfos. */
static void prefetch_nodes(const struct sched_node_score *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        __builtin_prefetch(v[i].ni);
        __builtin_prefetch((const char *)v[i].ni + SCHED_CACHE_LINE);
    }
}

static void score_chunk(void *arg, size_t c)
{
    struct score_job *j = arg;
    size_t base = c * SCORE_CHUNK, len = j->n - base < SCORE_CHUNK ? j->n - base : SCORE_CHUNK;
    const struct sched_node_score *nodes = &j->nodes[base];

    /* A pipeline: the next chunk's NodeInfos are asked for now, while this one is scored
     * (chunks run in order on one thread; on the pool the next may be another thread's, and
     * the prefetch is only wasted), and this chunk's, asked for a chunk ago, are in, so the
     * memos' targets (framework.h) can be asked for at once, a whole chunk before the plugin
     * that reads them. The first chunk asks for its own. */
    if (c == 0)
        prefetch_nodes(nodes, len);
    if (base + len < j->n)
        prefetch_nodes(&j->nodes[base + len],
                       j->n - base - len < SCORE_CHUNK ? j->n - base - len : SCORE_CHUNK);
    for (size_t i = 0; i < len; i++)
        sched_node_memo_prefetch(nodes[i].ni);
    for (size_t k = 0; k < j->npls; k++) {
        const struct fw_plugin *p = j->pls[k];
        struct sched_node_score *out = &j->scores[k * j->n + base];
        struct sched_status s = {0};
        enum sched_code rc = SCHED_SUCCESS;

        memcpy(out, nodes, len * sizeof(*out));
        if (p->pl->score_nodes) {
            rc = p->pl->score_nodes(p->self, j->cs, j->pod, out, len, &s);
        } else {
            for (size_t i = 0; i < len && rc == SCHED_SUCCESS; i++) {
                out[i].score = 0;
                rc = p->pl->score(p->self, j->cs, j->pod, out[i].ni, &out[i].score, &s);
            }
        }
        /* The usual Success has nothing to release. */
        if (__builtin_expect(rc != SCHED_SUCCESS || s.buf != NULL, 0)) {
            score_failed(j, p, rc, &s);
            sched_status_release(&s);
        }
    }
}

enum sched_code sched_framework_score(struct sched_framework *fw, struct sched_cycle *cs,
                                      const struct sched_pod *pod, struct sched_node_score *scores,
                                      size_t n, struct sched_status *st)
{
    const struct fw_plugin *pls[SCHED_MAX_PLUGINS];
    struct sched_node_info **nodes;
    struct score_job j = {.fw = fw, .cs = cs, .pod = pod, .nodes = scores, .n = n, .pls = pls};
    enum sched_code rc = SCHED_SUCCESS;

    if (n > fw->score_nodes_cap || !fw->score_nodes) {
        free(fw->score_nodes);
        fw->score_nodes_cap = n ? n : 1;
        fw->score_nodes = xcalloc(fw->score_nodes_cap, sizeof(struct sched_node_info *));
    }
    nodes = fw->score_nodes;
    for (size_t i = 0; i < n; i++) {
        nodes[i] = scores[i].ni;
        scores[i].score = 0;
    }
    for (size_t i = 0; i < fw->npts[SCHED_PT_PRE_SCORE]; i++) {
        const struct fw_plugin *p = &fw->pts[SCHED_PT_PRE_SCORE][i];
        struct sched_status s = {0};
        double t0 = mono_now();
        enum sched_code c = p->pl->pre_score(p->self, cs, pod, nodes, n, &s);

        observe_plugin(cs, fw, p->pl->name, "PreScore", c, t0);
        if (c == SCHED_SKIP) {
            sched_cycle_set_skip_score(cs, p->id);
        } else if (c != SCHED_SUCCESS) {
            struct strbuf m = STRBUF_INIT;
            sched_status_message(&s, &m);
            sched_status_set(st, SCHED_ERROR, "running PreScore plugin \"%s\": %s", p->pl->name,
                             m.buf ? m.buf : "");
            st->plugin = p->pl->name;
            strbuf_release(&m);
            sched_status_release(&s);
            return SCHED_ERROR;
        }
        sched_status_release(&s);
    }
    for (size_t i = 0; i < fw->npts[SCHED_PT_SCORE]; i++)
        if (!sched_cycle_skip_score(cs, fw->pts[SCHED_PT_SCORE][i].id))
            pls[j.npls++] = &fw->pts[SCHED_PT_SCORE][i];
    if (!j.npls || !n)
        return SCHED_SUCCESS;
    if (j.npls * n > fw->plugin_scores_cap) {
        free(fw->plugin_scores);
        fw->plugin_scores_cap = j.npls * n;
        fw->plugin_scores = xcalloc(j.npls * n, sizeof(*fw->plugin_scores));
    }
    j.scores = fw->plugin_scores; /* every entry is written below */
    pthread_mutex_init(&j.lock, NULL);
    sched_pool_run_measured(n >= (size_t)2 * SCORE_CHUNK ? fw->o.pool : NULL, &fw->score_cost,
                            (n + SCORE_CHUNK - 1) / SCORE_CHUNK, 1, score_chunk, &j);
    pthread_mutex_destroy(&j.lock);
    if (atomic_load(&j.failed)) {
        sched_status_move(st, &j.err);
        rc = SCHED_ERROR;
        goto out;
    }
    for (size_t k = 0; k < j.npls; k++) {
        const struct fw_plugin *p = pls[k];
        struct sched_node_score *s = &j.scores[k * n];
        if (p->pl->normalize) {
            struct sched_status ns = {0};
            enum sched_code c = p->pl->normalize(p->self, cs, pod, s, n, &ns);
            if (c != SCHED_SUCCESS) {
                struct strbuf m = STRBUF_INIT;
                sched_status_message(&ns, &m);
                sched_status_set(st, SCHED_ERROR, "running Normalize on Score plugin \"%s\": %s",
                                 p->pl->name, m.buf ? m.buf : "");
                st->plugin = p->pl->name;
                strbuf_release(&m);
                sched_status_release(&ns);
                rc = SCHED_ERROR;
                goto out;
            }
            sched_status_release(&ns);
        }
        for (size_t i = 0; i < n; i++) {
            if (s[i].score < SCHED_MIN_NODE_SCORE || s[i].score > SCHED_MAX_NODE_SCORE) {
                sched_status_set(st, SCHED_ERROR,
                                 "plugin \"%s\" returns an invalid score %lld, it should in the "
                                 "range of [%d, %d] after normalizing",
                                 p->pl->name, (long long)s[i].score, SCHED_MIN_NODE_SCORE,
                                 SCHED_MAX_NODE_SCORE);
                st->plugin = p->pl->name;
                rc = SCHED_ERROR;
                goto out;
            }
            scores[i].score += s[i].score * p->weight;
        }
    }
out:
    return rc;
}

/* ---- reserve to bind ---- */

enum sched_code sched_framework_reserve(struct sched_framework *fw, struct sched_cycle *cs,
                                        const struct sched_pod *pod, const char *node,
                                        struct sched_status *st)
{
    for (size_t i = 0; i < fw->npts[SCHED_PT_RESERVE]; i++) {
        const struct fw_plugin *p = &fw->pts[SCHED_PT_RESERVE][i];
        enum sched_code c;
        double t0;

        if (!p->pl->reserve)
            continue;
        t0 = mono_now();
        c = p->pl->reserve(p->self, cs, pod, node, st);
        observe_plugin(cs, fw, p->pl->name, "Reserve", c, t0);
        if (c != SCHED_SUCCESS) {
            st->code = sched_code_is_rejected(c) ? c : SCHED_ERROR;
            st->plugin = p->pl->name;
            return st->code;
        }
    }
    return SCHED_SUCCESS;
}

void sched_framework_unreserve(struct sched_framework *fw, struct sched_cycle *cs,
                               const struct sched_pod *pod, const char *node)
{
    for (size_t i = fw->npts[SCHED_PT_RESERVE]; i-- > 0;) {
        const struct fw_plugin *p = &fw->pts[SCHED_PT_RESERVE][i];
        if (p->pl->unreserve)
            p->pl->unreserve(p->self, cs, pod, node);
    }
}

enum sched_code sched_framework_permit(struct sched_framework *fw, struct sched_cycle *cs,
                                       const struct sched_pod *pod, const char *node,
                                       struct sched_status *st)
{
    for (size_t i = 0; i < fw->npts[SCHED_PT_PERMIT]; i++) {
        const struct fw_plugin *p = &fw->pts[SCHED_PT_PERMIT][i];
        long timeout = 0;
        double t0 = mono_now();
        enum sched_code c = p->pl->permit(p->self, cs, pod, node, &timeout, st);

        observe_plugin(cs, fw, p->pl->name, "Permit", c, t0);
        if (c == SCHED_SUCCESS)
            continue;
        if (c == SCHED_WAIT) {
            /* No waiting-pod map yet: nothing here ever allows a parked pod, so a Wait ends
             * as upstream's timeout ends it. */
            sched_status_release(st);
            sched_status_set(st, SCHED_UNSCHEDULABLE,
                             "rejected due to timeout after waiting %lds at plugin %s",
                             timeout / 1000, p->pl->name);
            st->plugin = p->pl->name;
            return SCHED_UNSCHEDULABLE;
        }
        st->code = sched_code_is_rejected(c) ? c : SCHED_ERROR;
        st->plugin = p->pl->name;
        return st->code;
    }
    return SCHED_SUCCESS;
}

enum sched_code sched_framework_pre_bind(struct sched_framework *fw, struct sched_cycle *cs,
                                         const struct sched_pod *pod, const char *node,
                                         struct sched_status *st)
{
    for (size_t i = 0; i < fw->npts[SCHED_PT_PRE_BIND]; i++) {
        const struct fw_plugin *p = &fw->pts[SCHED_PT_PRE_BIND][i];
        double t0 = mono_now();
        enum sched_code c = p->pl->pre_bind(p->self, cs, pod, node, st);

        observe_plugin(cs, fw, p->pl->name, "PreBind", c, t0);
        if (c != SCHED_SUCCESS) {
            st->code = sched_code_is_rejected(c) ? c : SCHED_ERROR;
            st->plugin = p->pl->name;
            return st->code;
        }
    }
    return SCHED_SUCCESS;
}

enum sched_code sched_framework_bind(struct sched_framework *fw, struct sched_cycle *cs,
                                     const struct sched_pod *pod, const char *node,
                                     struct sched_status *st)
{
    for (size_t i = 0; i < fw->npts[SCHED_PT_BIND]; i++) {
        const struct fw_plugin *p = &fw->pts[SCHED_PT_BIND][i];
        double t0 = mono_now();
        enum sched_code c = p->pl->bind(p->self, cs, pod, node, st);

        observe_plugin(cs, fw, p->pl->name, "Bind", c, t0);
        if (c == SCHED_SKIP) {
            sched_status_release(st);
            continue;
        }
        st->code = c;
        st->plugin = p->pl->name;
        return c;
    }
    st->code = SCHED_SKIP;
    return SCHED_SKIP;
}

void sched_framework_post_bind(struct sched_framework *fw, struct sched_cycle *cs,
                               const struct sched_pod *pod, const char *node)
{
    for (size_t i = 0; i < fw->npts[SCHED_PT_POST_BIND]; i++) {
        const struct fw_plugin *p = &fw->pts[SCHED_PT_POST_BIND][i];
        p->pl->post_bind(p->self, cs, pod, node);
    }
}
