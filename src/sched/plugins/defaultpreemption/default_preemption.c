/*
 * DefaultPreemption: the PostFilter that makes room for a pod no node fits by evicting pods of
 * lower priority, then nominates the node for the pod's next attempt (kube-scheduler 1.30
 * plugins/defaultpreemption/default_preemption.go and framework/preemption/preemption.go;
 * reference scheduler.md 5.7).
 *
 * The decisions are functions over hooks (struct dp_ops), so the unit test drives them with a
 * hand-made "fits" rule instead of the framework: eligibility, the victims on one node (remove
 * every lower-priority pod, check the pod fits, then reprieve the most important ones that still
 * let it fit, PDB-violating ones first), the dry run over the candidate nodes from a random
 * offset, the choice among candidates, and the FitError-style message when nothing helps.
 * dp_post_filter wires the hooks to the framework (Filter with nominated pods and the
 * PreFilterExtensions on cloned NodeInfo and cycle state) and then acts on the chosen node:
 * DisruptionTarget condition, delete, Preempted event, nominations of lower-priority pods to it
 * cleared.
 *
 * Where koord differs from upstream, and why:
 * - the pod is not re-read from an informer: the caller's copy is the one the cycle filtered;
 * - a pod "terminating by preemption" is any lower-priority pod with a deletionTimestamp
 *   (struct sched_pod keeps no conditions), upstream's rule without PodDisruptionConditions;
 * - a pod's start time is its creationTimestamp (status.startTime is not decoded);
 * - PodDisruptionBudgets are listed from the apiserver once per PostFilter, as koord keeps no
 *   PDB informer; when policy/v1 is not served (koord apiserver) there are none;
 * - the dry run visits the nodes one after the other instead of on 16 goroutines, which finds
 *   the same candidates upstream finds when its workers happen to finish in order;
 * - Permit never parks pods in koord, so there are no waiting victims to reject;
 * - a victim already gone (404) is not an error, as in later upstream releases.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/field.h"
#include "api/labels.h"
#include "api/rfc3339.h"
#include "api/schema.h"
#include "base/base.h"
#include "base/hmap.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "kube/client.h"
#include "kube/events.h"
#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

#define DP_MSG_NEVER       "not eligible due to preemptionPolicy=Never."
#define DP_MSG_TERMINATING "not eligible due to a terminating pod on the nominated node."
#define DP_NOT_HELPFUL     "Preemption is not helpful for scheduling"
#define DP_NO_VICTIMS      "No preemption victims found for incoming pod"

/* DefaultPreemptionArgs (kube-scheduler config v1 defaults.go). */
struct dp_args {
    int32_t min_pct; /* minCandidateNodesPercentage, 0..100, default 10 */
    int32_t min_abs; /* minCandidateNodesAbsolute, >= 0, default 100 */
};

struct dp {
    struct sched_handle *h;
    struct dp_args args;
    _Atomic uint64_t rng; /* splitmix64 state for the dry run's offset */
};

/* ---- PodDisruptionBudgets ---- */

/* One PDB as preemption reads it; strings point into dp_pdbs.list. */
struct dp_pdb {
    const char *ns;
    struct label_selector *sel; /* never empty: an empty selector matches no pod */
    int64_t allowed;            /* status.disruptionsAllowed */
    const cJSON *disrupted;     /* status.disruptedPods (name -> time), or NULL */
};

struct dp_pdbs {
    struct dp_pdb *v;
    size_t n;
    cJSON *list; /* the PodDisruptionBudgetList the entries point into (owned) */
};

static void dp_pdbs_release(struct dp_pdbs *p)
{
    for (size_t i = 0; i < p->n; i++)
        label_selector_free(p->v[i].sel);
    free(p->v);
    cJSON_Delete(p->list);
    memset(p, 0, sizeof(*p));
}

/*
 * Builds the PDB table from a PodDisruptionBudgetList (takes ownership of list). PDBs that can
 * match no pod (no, empty or malformed selector) are left out, as upstream skips them for every
 * pod (filterPodsWithPDBViolation).
 */
static void dp_pdbs_from_list(cJSON *list, struct dp_pdbs *ret)
{
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items"), *it;
    int n = cJSON_IsArray(items) ? cJSON_GetArraySize(items) : 0;

    if (n <= 0)
        items = NULL;

    memset(ret, 0, sizeof(*ret));
    ret->list = list;
    ret->v = xcalloc(n > 0 ? (size_t)n : 1, sizeof(*ret->v));
    cJSON_ArrayForEach(it, items)
    {
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive(it, "metadata");
        const cJSON *spec = cJSON_GetObjectItemCaseSensitive(it, "spec");
        const cJSON *status = cJSON_GetObjectItemCaseSensitive(it, "status");
        const cJSON *sel = cJSON_GetObjectItemCaseSensitive(spec, "selector");
        const cJSON *allowed = cJSON_GetObjectItemCaseSensitive(status, "disruptionsAllowed");
        const cJSON *disrupted = cJSON_GetObjectItemCaseSensitive(status, "disruptedPods");
        const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "namespace"));
        struct dp_pdb *p = &ret->v[ret->n];

        if (!cJSON_IsObject(sel) || label_selector_from_json(sel, &p->sel, NULL) < 0)
            continue;
        if (label_selector_is_empty(p->sel)) {
            label_selector_free(p->sel);
            p->sel = NULL;
            continue;
        }
        p->ns = ns ? ns : "";
        p->allowed = cJSON_IsNumber(allowed) ? (int64_t)allowed->valuedouble : 0;
        p->disrupted = cJSON_IsObject(disrupted) ? disrupted : NULL;
        ret->n++;
    }
}

/*
 * filterPodsWithPDBViolation: walking pods[] in order (most important first), each pod matching
 * a PDB of its namespace uses up one of that PDB's allowed disruptions, unless the PDB already
 * lists it as disrupted; a pod that takes some PDB below zero is "violating".
 */
static void dp_pdb_violations(struct sched_pod *const *pods, size_t n, const struct dp_pdbs *pdbs,
                              bool *ret_violating)
{
    size_t np = pdbs ? pdbs->n : 0;
    int64_t *allowed = xcalloc(np ? np : 1, sizeof(*allowed));

    for (size_t j = 0; j < np; j++)
        allowed[j] = pdbs->v[j].allowed;
    for (size_t i = 0; i < n; i++) {
        const struct sched_pod *p = pods[i];

        ret_violating[i] = false;
        /* A pod without labels matches no PDB. */
        if (!p->labels || !p->labels->child)
            continue;
        for (size_t j = 0; j < np; j++) {
            const struct dp_pdb *b = &pdbs->v[j];
            if (strcmp(b->ns, p->namespace) || !label_selector_matches(b->sel, p->labels))
                continue;
            if (b->disrupted && cJSON_GetObjectItemCaseSensitive(b->disrupted, p->name))
                continue;
            if (--allowed[j] < 0)
                ret_violating[i] = true;
        }
    }
    free(allowed);
}

/* ---- the hooks into the framework ---- */

/*
 * What the victim search needs from the framework. The NodeInfo passed is the dry run's copy,
 * already changed by the caller; cs is the dry run's cycle-state copy (may be NULL in tests).
 */
struct dp_ops {
    /* Filter with nominated pods for pod on ni; the failing status into st. */
    enum sched_code (*fits)(void *ud, struct sched_cycle *cs, const struct sched_pod *pod,
                            const struct sched_node_info *ni, struct sched_status *st);
    /* PreFilterExtensions AddPod / RemovePod after p joined / left ni (NULL: none). */
    enum sched_code (*added)(void *ud, struct sched_cycle *cs, const struct sched_pod *pod,
                             struct sched_pod *p, struct sched_node_info *ni,
                             struct sched_status *st);
    enum sched_code (*removed)(void *ud, struct sched_cycle *cs, const struct sched_pod *pod,
                               struct sched_pod *p, struct sched_node_info *ni,
                               struct sched_status *st);
    /* Fills in the PDBs; called at most once, when some node is worth a dry run (NULL: none). */
    void (*load_pdbs)(void *ud, struct dp_pdbs *ret);
    void *ud;
};

/* ---- choosing victims on one node ---- */

/* MoreImportantPod: higher priority, then the one started first. */
static bool dp_more_important(const struct sched_pod *a, const struct sched_pod *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;
    return a->created < b->created;
}

/* Most important first; stable, so equally important pods keep the node's order. */
static void dp_sort_by_importance(struct sched_pod **v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        struct sched_pod *x = v[i];
        size_t j = i;
        while (j > 0 && dp_more_important(x, v[j - 1])) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

/* The victims of one candidate node: references, most important first. */
struct dp_victims {
    struct sched_pod **pods;
    size_t n;
    int64_t pdb_violations;
};

static void dp_victims_release(struct dp_victims *v)
{
    sched_pods_free(v->pods, v->n);
    memset(v, 0, sizeof(*v));
}

/* A PreFilterExtensions failure is an internal error whatever the plugin said. */
static enum sched_code dp_ext_failed(struct sched_status *st, const char *what, const char *key)
{
    if (!st->n)
        sched_status_add(st, "running %s for pod %s failed", what, key);
    st->code = SCHED_ERROR;
    return SCHED_ERROR;
}

static enum sched_code dp_take_out(const struct dp_ops *ops, struct sched_cycle *cs,
                                   const struct sched_pod *pod, struct sched_pod *p,
                                   struct sched_node_info *ni, struct sched_status *st)
{
    if (sched_node_info_remove_pod(ni, p) < 0)
        return sched_status_set(st, SCHED_ERROR, "no corresponding pod %s in pods of node %s",
                                p->key, ni->name);
    if (ops->removed && ops->removed(ops->ud, cs, pod, p, ni, st) != SCHED_SUCCESS)
        return dp_ext_failed(st, "RemovePod", p->key);
    return SCHED_SUCCESS;
}

static enum sched_code dp_put_back(const struct dp_ops *ops, struct sched_cycle *cs,
                                   const struct sched_pod *pod, struct sched_pod *p,
                                   struct sched_node_info *ni, struct sched_status *st)
{
    sched_node_info_add_pod(ni, p);
    if (ops->added && ops->added(ops->ud, cs, pod, p, ni, st) != SCHED_SUCCESS)
        return dp_ext_failed(st, "AddPod", p->key);
    return SCHED_SUCCESS;
}

/*
 * SelectVictimsOnNode: the smallest set of lower-priority pods whose eviction lets pod pass
 * Filter on ni (the dry run's copy, changed in place). Success with *ret filled; the node's
 * status otherwise: Unresolvable "No preemption victims found for incoming pod" when nothing
 * has lower priority, the Filter status when the pod does not fit even without all of them,
 * Error when a PreFilterExtension fails.
 */
/* Whether ni holds a pod of lower priority than pod: a possible victim. */
static bool dp_has_lower(const struct sched_node_info *ni, const struct sched_pod *pod)
{
    for (size_t i = 0; i < ni->npods; i++)
        if (sched_node_info_pod(ni, i)->priority < pod->priority)
            return true;
    return false;
}

static enum sched_code dp_select_victims(const struct sched_pod *pod, struct sched_node_info *ni,
                                         struct sched_cycle *cs, const struct dp_pdbs *pdbs,
                                         const struct dp_ops *ops, struct dp_victims *ret,
                                         struct sched_status *st)
{
    struct sched_pod **pot = xcalloc(ni->npods ? ni->npods : 1, sizeof(struct sched_pod *));
    struct sched_pod **victims = NULL;
    bool *violating = NULL;
    size_t n = 0, nv = 0, nviolating = 0;
    int64_t violations = 0;
    enum sched_code c;

    for (size_t i = 0; i < ni->npods; i++)
        if (sched_node_info_pod(ni, i)->priority < pod->priority)
            pot[n++] = sched_pod_ref(sched_node_info_pod(ni, i));
    for (size_t i = 0; i < n; i++) {
        c = dp_take_out(ops, cs, pod, pot[i], ni, st);
        if (c != SCHED_SUCCESS)
            goto out;
    }
    /* The node did not change: no need to filter it again. */
    if (!n) {
        c = sched_status_set(st, SCHED_UNRESOLVABLE, "%s", DP_NO_VICTIMS);
        goto out;
    }
    /* Not even with every lower-priority pod gone (pod affinity to a victim is not helped). */
    c = ops->fits(ops->ud, cs, pod, ni, st);
    if (c != SCHED_SUCCESS) {
        st->code = c;
        goto out;
    }

    dp_sort_by_importance(pot, n);
    violating = xcalloc(n, sizeof(*violating));
    dp_pdb_violations(pot, n, pdbs, violating);
    for (size_t i = 0; i < n; i++)
        nviolating += violating[i];
    victims = xcalloc(n, sizeof(struct sched_pod *));
    /* Reprieve as many as possible: PDB-violating pods first, most important first. */
    for (int pass = 1; pass >= 0; pass--) {
        for (size_t i = 0; i < n; i++) {
            struct sched_status tmp = {0};
            bool fits;

            if (violating[i] != (pass == 1))
                continue;
            c = dp_put_back(ops, cs, pod, pot[i], ni, st);
            if (c != SCHED_SUCCESS)
                goto out;
            fits = ops->fits(ops->ud, cs, pod, ni, &tmp) == SCHED_SUCCESS;
            sched_status_release(&tmp);
            if (fits)
                continue;
            c = dp_take_out(ops, cs, pod, pot[i], ni, st);
            if (c != SCHED_SUCCESS)
                goto out;
            victims[nv++] = sched_pod_ref(pot[i]);
            violations += pass;
        }
    }
    /* Two passes each kept the order; together they may not be. */
    if (nviolating && nviolating < n)
        dp_sort_by_importance(victims, nv);
    ret->pods = victims;
    ret->n = nv;
    ret->pdb_violations = violations;
    victims = NULL;
    nv = 0;
    c = SCHED_SUCCESS;
out:
    sched_pods_free(victims, nv);
    sched_pods_free(pot, n);
    free(violating);
    return c;
}

/* ---- the dry run over candidate nodes ---- */

struct dp_candidate {
    char *node;
    struct dp_victims v;
};

struct dp_dry_run {
    struct dp_candidate *cands; /* those without PDB violations first */
    size_t ncands;
    struct sched_status *failed; /* the status of every evaluated node that is no candidate */
    size_t nfailed;
};

static void dp_dry_run_release(struct dp_dry_run *d)
{
    for (size_t i = 0; i < d->ncands; i++) {
        free(d->cands[i].node);
        dp_victims_release(&d->cands[i].v);
    }
    free(d->cands);
    for (size_t i = 0; i < d->nfailed; i++)
        sched_status_release(&d->failed[i]);
    free(d->failed);
    memset(d, 0, sizeof(*d));
}

/* calculateNumCandidates: n × pct / 100, at least abs, at most n. */
static size_t dp_num_candidates(const struct dp_args *a, size_t n)
{
    size_t k = n * (size_t)a->min_pct / 100;

    if (k < (size_t)a->min_abs)
        k = (size_t)a->min_abs;
    return k > n ? n : k;
}

/*
 * DryRunPreemption over nodes[0..n) starting at offset, until the candidates found number
 * num_candidates with at least one that violates no PDB. Like upstream's fixed-size candidate
 * lists, each kind keeps at most num_candidates.
 */
static void dp_dry_run(const struct sched_pod *pod, struct sched_node_info *const *nodes, size_t n,
                       struct sched_cycle *cs, const struct dp_pdbs *pdbs, size_t offset,
                       size_t num_candidates, const struct dp_ops *ops, struct dp_dry_run *ret)
{
    size_t cap = num_candidates ? num_candidates : 1;
    struct dp_candidate *nonviol = xcalloc(cap, sizeof(*nonviol));
    struct dp_candidate *viol = xcalloc(cap, sizeof(*viol));
    size_t nnv = 0, nvi = 0;

    memset(ret, 0, sizeof(*ret));
    ret->failed = xcalloc(n ? n : 1, sizeof(*ret->failed));
    for (size_t i = 0; i < n; i++) {
        const struct sched_node_info *ni = nodes[(offset + i) % n];
        struct sched_node_info *copy;
        struct sched_cycle *cs2;
        struct sched_status st = {0};
        struct dp_victims v = {0};
        enum sched_code c;

        /* A node without a lower-priority pod is what dp_select_victims would find it, without
         * copying the node and the cycle state (most nodes, for a pod of the lowest priority) */
        if (!dp_has_lower(ni, pod)) {
            st.code = sched_status_set(&st, SCHED_UNRESOLVABLE, "%s", DP_NO_VICTIMS);
            ret->failed[ret->nfailed++] = st;
            continue;
        }
        copy = sched_node_info_clone(ni);
        cs2 = cs ? sched_cycle_clone(cs) : NULL;
        c = dp_select_victims(pod, copy, cs2, pdbs, ops, &v, &st);
        sched_node_info_free(copy);
        sched_cycle_free(cs2);
        if (c == SCHED_SUCCESS && v.n) {
            struct dp_candidate cand = {xstrdup(ni->name), v};
            if (!v.pdb_violations && nnv < num_candidates) {
                nonviol[nnv++] = cand;
            } else if (v.pdb_violations && nvi < num_candidates) {
                viol[nvi++] = cand;
            } else {
                free(cand.node);
                dp_victims_release(&v);
            }
            sched_status_release(&st);
            if (nnv > 0 && nnv + nvi >= num_candidates)
                break;
            continue;
        }
        dp_victims_release(&v);
        if (c == SCHED_SUCCESS)
            c = sched_status_set(&st, SCHED_ERROR,
                                 "expected at least one victim pod on node \"%s\"", ni->name);
        st.code = c;
        ret->failed[ret->nfailed++] = st;
    }
    ret->cands = xcalloc(nnv + nvi ? nnv + nvi : 1, sizeof(*ret->cands));
    memcpy(ret->cands, nonviol, nnv * sizeof(*nonviol));
    memcpy(ret->cands + nnv, viol, nvi * sizeof(*viol));
    ret->ncands = nnv + nvi;
    free(nonviol);
    free(viol);
}

/* ---- choosing the node ---- */

/* The earliest start among the victims of the highest priority (GetEarliestPodStartTime). */
static double dp_earliest_start(const struct dp_victims *v)
{
    int32_t top = v->pods[0]->priority;
    double t = v->pods[0]->created;

    for (size_t i = 1; i < v->n; i++) {
        const struct sched_pod *p = v->pods[i];
        if (p->priority > top) {
            top = p->priority;
            t = p->created;
        } else if (p->priority == top && p->created < t) {
            t = p->created;
        }
    }
    return t;
}

/*
 * The candidate's score under one rule of pickOneNodeForPreemption, higher is better. Doubles
 * hold every value exactly: sums of (priority + 2^31) stay far below 2^53.
 */
static double dp_score(const struct dp_candidate *c, int rule)
{
    const struct dp_victims *v = &c->v;
    int32_t top = INT32_MIN;
    double sum = 0;

    switch (rule) {
    case 0: /* fewest PDB violations */
        return -(double)v->pdb_violations;
    case 1: /* lowest highest-victim priority */
        for (size_t i = 0; i < v->n; i++)
            if (v->pods[i]->priority > top)
                top = v->pods[i]->priority;
        return -(double)top;
    case 2: /* lowest sum of priorities, each moved up by 2^31 so negative ones count */
        for (size_t i = 0; i < v->n; i++)
            sum += (double)v->pods[i]->priority + 2147483648.0;
        return -sum;
    case 3: /* fewest victims */
        return -(double)v->n;
    default: /* latest start of the highest-priority victims */
        return dp_earliest_start(v);
    }
}

#define DP_RULES 5

/*
 * pickOneNodeForPreemption: each rule in turn keeps the best-scoring candidates; the first rule
 * that leaves one decides, and after the last the first left wins. Returns its index.
 */
static size_t dp_pick(const struct dp_candidate *c, size_t n)
{
    size_t *keep = xcalloc(n ? n : 1, sizeof(*keep)), nk = n, best;

    for (size_t i = 0; i < n; i++)
        keep[i] = i;
    for (int rule = 0; rule < DP_RULES && nk > 1; rule++) {
        double top = -INFINITY;
        size_t m = 0;

        /* In place: m never passes k. */
        for (size_t k = 0; k < nk; k++) {
            double s = dp_score(&c[keep[k]], rule);
            if (s > top) {
                top = s;
                m = 0;
            }
            if (s == top)
                keep[m++] = keep[k];
        }
        nk = m;
    }
    best = keep[0];
    free(keep);
    return best;
}

/* ---- messages ---- */

static int dp_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * FitError.Error() (2.2) of preemption's own diagnosis: every node not worth a dry run counts as
 * "Preemption is not helpful for scheduling", every dry-run failure with its reasons.
 */
static void dp_fit_message(size_t num_all, size_t not_helpful, const struct sched_status *failed,
                           size_t nfailed, struct strbuf *out)
{
    struct hmap counts;
    struct hmap_entry *e;
    size_t it, n = 0;
    char **lines;

    hmap_init(&counts);
    if (not_helpful)
        hmap_upsert(&counts, DP_NOT_HELPFUL)->num += (double)not_helpful;
    for (size_t i = 0; i < nfailed; i++)
        for (unsigned r = 0; r < failed[i].n; r++)
            hmap_upsert(&counts, sched_status_reason(&failed[i], r))->num += 1;
    lines = xcalloc(counts.n ? counts.n : 1, sizeof(*lines));
    for (e = hmap_first(&counts, &it); e; e = hmap_next(&counts, e, &it)) {
        struct strbuf l = STRBUF_INIT;
        strbuf_addf(&l, "%.0f %s", e->num, e->key);
        lines[n++] = strbuf_detach(&l, NULL);
    }
    qsort(lines, n, sizeof(*lines), dp_cmp_str);
    strbuf_addf(out, "0/%zu nodes are available:", num_all);
    for (size_t i = 0; i < n; i++) {
        strbuf_addf(out, "%s%s", i ? ", " : " ", lines[i]);
        free(lines[i]);
    }
    if (n)
        strbuf_addch(out, '.');
    free(lines);
    hmap_release(&counts);
}

/*
 * The dry run's errors as one message (utilerrors.NewAggregate: one error alone, several as
 * "[a, b]" without repeats). False when there were none.
 */
static bool dp_errors(const struct dp_dry_run *d, struct strbuf *out)
{
    struct strbuf all = STRBUF_INIT, one = STRBUF_INIT;
    size_t n = 0;
    struct hmap seen;

    hmap_init(&seen);
    for (size_t i = 0; i < d->nfailed; i++) {
        if (d->failed[i].code != SCHED_ERROR)
            continue;
        strbuf_reset(&one);
        sched_status_message(&d->failed[i], &one);
        if (hmap_find(&seen, one.buf ? one.buf : ""))
            continue;
        (void)hmap_upsert(&seen, one.buf ? one.buf : "");
        strbuf_addf(&all, "%s%s", n ? ", " : "", one.buf ? one.buf : "");
        n++;
    }
    if (n == 1)
        strbuf_addstr(out, all.buf);
    else if (n > 1)
        strbuf_addf(out, "[%s]", all.buf);
    strbuf_release(&all);
    strbuf_release(&one);
    hmap_release(&seen);
    return n > 0;
}

/* ---- eligibility ---- */

/*
 * PodEligibleToPreemptOthers: not with preemptionPolicy Never, nor while the node it was
 * nominated to (nominated_ni, may be NULL) still holds a lower-priority pod on its way out, as
 * that pod's earlier preemption is not done yet; unless the filters now find that node
 * Unresolvable (nominated_code), when preempting elsewhere is the only way.
 */
static bool dp_eligible(const struct sched_pod *pod, const struct sched_node_info *nominated_ni,
                        enum sched_code nominated_code, const char **ret_why)
{
    if (pod->preempt_never) {
        *ret_why = DP_MSG_NEVER;
        return false;
    }
    if (!*pod->nominated_node || nominated_code == SCHED_UNRESOLVABLE || !nominated_ni)
        return true;
    for (size_t i = 0; i < nominated_ni->npods; i++) {
        const struct sched_pod *p = sched_node_info_pod(nominated_ni, i);
        if (p->priority < pod->priority && p->deleting) {
            *ret_why = DP_MSG_TERMINATING;
            return false;
        }
    }
    return true;
}

/* The filter code of a node in m; Success when m does not list it. */
static enum sched_code dp_code_in(const struct sched_node_statuses *m, const char *node)
{
    for (size_t i = 0; m && i < m->n; i++)
        if (!strcmp(m->nodes[i]->name, node))
            return m->status[i].code;
    return SCHED_SUCCESS;
}

static void dp_set_nominated(struct sched_post_filter_result *res, const char *node)
{
    free(res->nominated_node);
    res->nominated_node = xstrdup(node);
}

/*
 * Preempt() up to the choice of a node (steps 1-4 of 5.7). On Success *ret_best is the chosen
 * candidate (release its victims and free its node) and st carries no reason; otherwise st has
 * "preemption: <why>" and, when no candidate exists, res clears the pod's nomination. rnd picks
 * the dry run's starting node.
 */
static enum sched_code dp_find(const struct dp_args *args, struct sched_cycle *cs,
                               const struct sched_pod *pod, const struct sched_node_statuses *m,
                               size_t num_all, const struct sched_node_info *nominated_ni,
                               uint64_t rnd, const struct dp_ops *ops,
                               struct dp_candidate *ret_best, struct sched_post_filter_result *res,
                               struct sched_status *st)
{
    struct strbuf msg = STRBUF_INIT;
    struct sched_node_info **pot = NULL;
    struct dp_pdbs pdbs = {0};
    struct dp_dry_run d = {0};
    const char *why = NULL;
    size_t npot = 0, best;
    enum sched_code c;

    if (!dp_eligible(pod, nominated_ni, dp_code_in(m, pod->nominated_node), &why)) {
        strbuf_addstr(&msg, why);
        c = SCHED_UNSCHEDULABLE;
        goto out;
    }
    if (!num_all) {
        strbuf_addstr(&msg, "no nodes available");
        c = SCHED_ERROR;
        goto out;
    }
    /* Only nodes that failed with Unschedulable may be helped by removing pods. */
    pot = xcalloc(m && m->n ? m->n : 1, sizeof(struct sched_node_info *));
    for (size_t i = 0; m && i < m->n; i++)
        if (m->status[i].code == SCHED_UNSCHEDULABLE)
            pot[npot++] = m->nodes[i];
    if (npot) {
        if (ops->load_pdbs)
            ops->load_pdbs(ops->ud, &pdbs);
        dp_dry_run(pod, pot, npot, cs, &pdbs, (size_t)(rnd % npot), dp_num_candidates(args, npot),
                   ops, &d);
    }
    if (!d.ncands) {
        if (dp_errors(&d, &msg)) {
            c = SCHED_ERROR;
            goto out;
        }
        dp_fit_message(num_all, num_all > npot ? num_all - npot : 0, d.failed, d.nfailed, &msg);
        dp_set_nominated(res, "");
        c = SCHED_UNSCHEDULABLE;
        goto out;
    }
    best = dp_pick(d.cands, d.ncands);
    *ret_best = d.cands[best];
    d.cands[best] = d.cands[--d.ncands];
    c = SCHED_SUCCESS;
out:
    if (msg.len)
        sched_status_set(st, c, "preemption: %s", msg.buf);
    st->code = c;
    strbuf_release(&msg);
    dp_dry_run_release(&d);
    dp_pdbs_release(&pdbs);
    free(pot);
    return c;
}

/* ---- acting on the choice (prepareCandidate) ---- */

/* An object reference the event recorder takes. */
static cJSON *dp_pod_ref(const struct sched_pod *p)
{
    cJSON *ref = cJSON_CreateObject(), *meta;

    cJSON_AddStringToObject(ref, "apiVersion", "v1");
    cJSON_AddStringToObject(ref, "kind", "Pod");
    meta = cJSON_AddObjectToObject(ref, "metadata");
    cJSON_AddStringToObject(meta, "name", p->name);
    cJSON_AddStringToObject(meta, "namespace", p->namespace);
    cJSON_AddStringToObject(meta, "uid", p->uid);
    return ref;
}

/* {"status":{"conditions":[DisruptionTarget=True ...]}} for a strategic merge patch. */
static cJSON *dp_disruption_patch(const char *scheduler_name)
{
    cJSON *patch = cJSON_CreateObject(), *status = cJSON_AddObjectToObject(patch, "status");
    cJSON *conds = cJSON_AddArrayToObject(status, "conditions"), *c = cJSON_CreateObject();
    char ts[RFC3339_STR_MAX];
    struct strbuf m = STRBUF_INIT;

    (void)rfc3339_format((int64_t)time(NULL), ts);
    strbuf_addf(&m, "%s: preempting to accommodate a higher priority pod", scheduler_name);
    cJSON_AddStringToObject(c, "type", "DisruptionTarget");
    cJSON_AddStringToObject(c, "status", "True");
    cJSON_AddNullToObject(c, "lastProbeTime");
    cJSON_AddStringToObject(c, "lastTransitionTime", ts);
    cJSON_AddStringToObject(c, "reason", "PreemptionByScheduler");
    cJSON_AddStringToObject(c, "message", m.buf);
    cJSON_AddItemToArray(conds, c);
    strbuf_release(&m);
    return patch;
}

/*
 * Evicts one victim: the DisruptionTarget condition first, so whoever watches the pod learns
 * why it goes, then a graceful delete. A victim already gone is fine. 0 or -errno with
 * kst filled.
 */
static int dp_evict(struct kube_client *kc, const struct sched_pod *pod,
                    const struct sched_pod *victim, struct kube_status *kst)
{
    cJSON *patch = dp_disruption_patch(pod->scheduler_name);
    int r = kube_patch(kc, &kube_res_pods, victim->namespace, victim->name, "status",
                       KUBE_PATCH_STRATEGIC, patch, NULL, kst);

    cJSON_Delete(patch);
    if (r == -ENOENT)
        return 0;
    if (r < 0)
        return r;
    r = kube_delete(kc, &kube_res_pods, victim->namespace, victim->name, kst);
    return r == -ENOENT ? 0 : r;
}

/* clearNominatedNodeName of the lower-priority pods nominated to node: best effort. */
static void dp_clear_nominations(struct sched_handle *h, struct kube_client *kc,
                                 const struct sched_pod *pod, const char *node)
{
    struct sched_pod **nom = NULL;
    size_t n = sched_handle_nominated(h, node, &nom);
    cJSON *patch = cJSON_CreateObject();

    cJSON_AddNullToObject(cJSON_AddObjectToObject(patch, "status"), "nominatedNodeName");
    for (size_t i = 0; i < n; i++) {
        struct kube_status kst = {0};
        int r;

        if (nom[i]->priority >= pod->priority || !*nom[i]->nominated_node)
            continue;
        r = kube_patch(kc, &kube_res_pods, nom[i]->namespace, nom[i]->name, "status",
                       KUBE_PATCH_MERGE, patch, NULL, &kst);
        if (r < 0 && r != -ENOENT)
            log_warn("sched", "clearing the nominated node of pod %s failed: %s, ignoring",
                     nom[i]->key, kst.message);
    }
    cJSON_Delete(patch);
    sched_pods_free(nom, n);
}

static enum sched_code dp_prepare(struct sched_handle *h, const struct sched_pod *pod,
                                  const struct dp_candidate *best, struct sched_status *st)
{
    struct kube_client *kc = sched_handle_client(h);
    struct kube_recorder *rec = sched_handle_recorder(h);

    if (!kc)
        return SCHED_SUCCESS;
    log_debug("sched", "preempting %zu pod(s) on node %s for pod %s", best->v.n, best->node,
              pod->key);
    for (size_t i = 0; i < best->v.n; i++) {
        const struct sched_pod *victim = best->v.pods[i];
        struct kube_status kst = {0};

        if (dp_evict(kc, pod, victim, &kst) < 0)
            return sched_status_set(st, SCHED_ERROR, "preemption: preempting pod %s failed: %s",
                                    victim->key, kst.message);
        if (rec) {
            cJSON *ref = dp_pod_ref(victim);
            (void)kube_recorder_event(rec, ref, KUBE_EVENT_NORMAL, "Preempted",
                                      "Preempted by pod %s on node %s", pod->uid, best->node);
            cJSON_Delete(ref);
        }
    }
    dp_clear_nominations(h, kc, pod, best->node);
    return SCHED_SUCCESS;
}

/* ---- the framework's hooks ---- */

static enum sched_code dp_run_fits(void *ud, struct sched_cycle *cs, const struct sched_pod *pod,
                                   const struct sched_node_info *ni, struct sched_status *st)
{
    return sched_handle_run_filters(ud, cs, pod, ni, st);
}

static enum sched_code dp_run_added(void *ud, struct sched_cycle *cs, const struct sched_pod *pod,
                                    struct sched_pod *p, struct sched_node_info *ni,
                                    struct sched_status *st)
{
    return sched_handle_run_add_pod(ud, cs, pod, p, ni, st);
}

static enum sched_code dp_run_removed(void *ud, struct sched_cycle *cs, const struct sched_pod *pod,
                                      struct sched_pod *p, struct sched_node_info *ni,
                                      struct sched_status *st)
{
    return sched_handle_run_remove_pod(ud, cs, pod, p, ni, st);
}

/* Lists policy/v1 PodDisruptionBudgets in all namespaces; any failure (404 on servers without
 * the group) means none. */
static void dp_load_pdbs(void *ud, struct dp_pdbs *ret)
{
    static const struct kube_resource pdb_res = {"policy", "v1", "poddisruptionbudgets",
                                                 "PodDisruptionBudget", true};
    struct kube_client *kc = sched_handle_client(ud);
    struct kube_status kst = {0};
    cJSON *list = NULL;
    int r;

    memset(ret, 0, sizeof(*ret));
    if (!kc)
        return;
    r = kube_list(kc, &pdb_res, NULL, NULL, &list, &kst);
    if (r < 0) {
        if (r != -ENOENT)
            log_debug("sched", "listing PodDisruptionBudgets failed: %s, preempting without them",
                      kst.message);
        return;
    }
    dp_pdbs_from_list(list, ret);
}

static uint64_t dp_rand(struct dp *pl)
{
    uint64_t z = atomic_fetch_add(&pl->rng, 0x9e3779b97f4a7c15ULL) + 0x9e3779b97f4a7c15ULL;

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static enum sched_code dp_post_filter(void *self, struct sched_cycle *cs,
                                      const struct sched_pod *pod,
                                      const struct sched_node_statuses *m,
                                      struct sched_post_filter_result *res, struct sched_status *st)
{
    struct dp *pl = self;
    const struct sched_snapshot *snap = sched_handle_snapshot(pl->h);
    const struct dp_ops ops = {dp_run_fits, dp_run_added, dp_run_removed, dp_load_pdbs, pl->h};
    const struct sched_node_info *nominated = NULL;
    struct dp_candidate best = {0};
    enum sched_code c;

    if (snap && *pod->nominated_node)
        nominated = sched_snapshot_get(snap, pod->nominated_node);
    c = dp_find(&pl->args, cs, pod, m, snap ? snap->nnodes : 0, nominated, dp_rand(pl), &ops, &best,
                res, st);
    if (c != SCHED_SUCCESS)
        return c;
    c = dp_prepare(pl->h, pod, &best, st);
    if (c == SCHED_SUCCESS)
        dp_set_nominated(res, best.node);
    free(best.node);
    dp_victims_release(&best.v);
    return c;
}

/* ---- args ---- */

static void dp_bad(struct field_errors *errs, const char *path, const char *field,
                   const cJSON *value, const char *detail)
{
    struct strbuf p = STRBUF_INIT, v = STRBUF_INIT;

    strbuf_addf(&p, "%s%s%s", path, *path ? "." : "", field);
    api_value_repr(value, &v);
    field_error_add(errs, FIELD_INVALID, p.buf, v.buf, "%s", detail);
    strbuf_release(&p);
    strbuf_release(&v);
}

/* An int32 member; false (with an error) when present but not one. */
static bool dp_int32(const cJSON *args, const char *path, const char *name, int32_t *v,
                     struct field_errors *errs)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(args, name);

    if (!m || cJSON_IsNull(m))
        return true;
    if (!cJSON_IsNumber(m) || m->valuedouble != floor(m->valuedouble) ||
        m->valuedouble < INT32_MIN || m->valuedouble > INT32_MAX) {
        dp_bad(errs, path, name, m, "must be an integer");
        return false;
    }
    *v = (int32_t)m->valuedouble;
    return true;
}

static void dp_free(void *self)
{
    free(self);
}

/* ValidateDefaultPreemptionArgs (apis/config/validation/validation_pluginargs.go). */
static int dp_init(const cJSON *args, const char *path, struct sched_handle *h, void **ret_self,
                   struct field_errors *errs)
{
    static const char *const known[] = {"apiVersion", "kind", "minCandidateNodesPercentage",
                                        "minCandidateNodesAbsolute", NULL};
    struct dp *pl = xcalloc(1, sizeof(*pl));
    size_t nerr = field_errors_count(errs);
    struct timespec now;
    const cJSON *m;
    bool ok;

    pl->h = h;
    pl->args.min_pct = 10;
    pl->args.min_abs = 100;
    (void)clock_gettime(CLOCK_REALTIME, &now);
    atomic_init(&pl->rng, (uint64_t)now.tv_sec * 1000000007ULL ^ (uint64_t)now.tv_nsec ^
                              (uint64_t)(uintptr_t)pl);
    if (!args || cJSON_IsNull(args))
        goto out;
    if (!cJSON_IsObject(args)) {
        field_error_add(errs, FIELD_INVALID, path, NULL, "must be an object");
        goto out;
    }
    cJSON_ArrayForEach(m, args)
    {
        const char *const *k = known;
        while (*k && strcmp(*k, m->string))
            k++;
        if (!*k) {
            struct strbuf f = STRBUF_INIT;
            strbuf_addf(&f, "%s%s%s", path, *path ? "." : "", m->string);
            field_error_add(errs, FIELD_UNKNOWN, f.buf, NULL, "unknown field \"%s\"", f.buf);
            strbuf_release(&f);
        }
    }
    ok = dp_int32(args, path, "minCandidateNodesPercentage", &pl->args.min_pct, errs);
    ok = dp_int32(args, path, "minCandidateNodesAbsolute", &pl->args.min_abs, errs) && ok;
    if (!ok)
        goto out;
    if (pl->args.min_pct < 0 || pl->args.min_pct > 100)
        dp_bad(errs, path, "minCandidateNodesPercentage",
               cJSON_GetObjectItemCaseSensitive(args, "minCandidateNodesPercentage"),
               "not in valid range [0, 100]");
    if (pl->args.min_abs < 0)
        dp_bad(errs, path, "minCandidateNodesAbsolute",
               cJSON_GetObjectItemCaseSensitive(args, "minCandidateNodesAbsolute"),
               "not in valid range [0, inf)");
    if (pl->args.min_pct == 0 && pl->args.min_abs == 0) {
        cJSON *zero = cJSON_CreateNumber(0);
        dp_bad(errs, path, "minCandidateNodesPercentage", zero,
               "cannot be zero at the same time as minCandidateNodesAbsolute");
        dp_bad(errs, path, "minCandidateNodesAbsolute", zero,
               "cannot be zero at the same time as minCandidateNodesPercentage");
        cJSON_Delete(zero);
    }
out:
    if (field_errors_count(errs) > nerr) {
        dp_free(pl);
        return -EINVAL;
    }
    *ret_self = pl;
    return 0;
}

/*
 * No events: a PostFilter never rejects a pod, so no pod waits on this plugin (the queue's
 * rejector masks come from PreEnqueue, PreFilter, Filter, Reserve and Permit). Upstream 1.32
 * returns none too while async preemption is off.
 */
static const struct sched_event_reg dp_events[] = {
    {NULL, 0},
};

const struct sched_plugin sched_plugin_default_preemption = {
    .name = "DefaultPreemption",
    .args_kind = "DefaultPreemptionArgs",
    .default_weight = 0,
    .events = dp_events,
    .init = dp_init,
    .free = dp_free,
    .post_filter = dp_post_filter,
};
