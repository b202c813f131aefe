/*
 * InterPodAffinity: required and preferred pod affinity and anti-affinity, the incoming pod's
 * and the existing pods', as kube-scheduler 1.30's
 * pkg/scheduler/framework/plugins/interpodaffinity (filtering.go, scoring.go, plugin.go;
 * reference scheduler.md 5.5) does.
 *
 * PreFilter counts, per topology pair (key, value), the existing pods whose required
 * anti-affinity terms match the incoming pod, and the existing pods matching the incoming pod's
 * required affinity and anti-affinity terms; Filter then checks a node's pairs against those
 * counts. PreScore sums the weights of matching preferred terms (both ways) and of existing
 * pods' required affinity terms per topology pair, Score adds up a node's pairs and
 * NormalizeScore scales them to 0..100.
 *
 * Namespaces: a term applies to its listed namespaces, or to its pod's own when it lists none
 * and has no namespaceSelector. koord scheduler does not watch Namespaces yet, so a
 * namespaceSelector cannot be evaluated against namespace labels: an empty one ({}) matches
 * every namespace, a non-empty one matches none (upstream would list the matching namespaces
 * for the incoming pod's terms and test the incoming pod's namespace labels for the existing
 * pods' terms).
 *
 * All nodes and their pods come from the cycle's snapshot (sched_handle_snapshot); the
 * per-cycle work is done in functions taking the snapshot explicitly so that unit tests can
 * hand them one.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/field.h"
#include "api/labels.h"
#include "api/schema.h"
#include "base/base.h"
#include "base/hmap.h"
#include "base/strbuf.h"
#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

static const char ipa_reason_existing_anti[] =
    "node(s) didn't satisfy existing pods anti-affinity rules";
static const char ipa_reason_affinity[] = "node(s) didn't match pod affinity rules";
static const char ipa_reason_anti[] = "node(s) didn't match pod anti-affinity rules";

/* The plugin instance: InterPodAffinityArgs, defaulted. */
struct ipa {
    struct sched_handle *h;
    int32_t hard_weight;            /* hardPodAffinityWeight, 0..100, default 1 */
    bool ignore_existing_preferred; /* ignorePreferredTermsOfExistingPods */
};

/* ---- terms ---- */

/* Whether a term of a pod in namespace owner_ns applies to pods of namespace ns. */
static bool ipa_term_namespace(const struct sched_pod_term *t, const char *owner_ns, const char *ns)
{
    for (size_t i = 0; i < t->nnamespaces; i++)
        if (!strcmp(t->namespaces[i], ns))
            return true;
    if (!t->nnamespaces && !t->ns_selector)
        return !strcmp(owner_ns, ns);
    /* See the file comment: without namespace labels only an empty selector can match. */
    return t->ns_selector && label_selector_is_empty(t->ns_selector);
}

/* Whether target matches the term of a pod in namespace owner_ns (framework AffinityTerm
 * Matches). */
static bool ipa_term_matches(const struct sched_pod_term *t, const char *owner_ns,
                             const struct sched_pod *target)
{
    if (!ipa_term_namespace(t, owner_ns, target->namespace))
        return false;
    return t->selector && label_selector_matches(t->selector, target->labels);
}

/* Whether target matches every one of the terms (and there is one at least;
 * filtering.go podMatchesAllAffinityTerms). */
static bool ipa_matches_all(const struct sched_pod_term *terms, size_t n, const char *owner_ns,
                            const struct sched_pod *target)
{
    if (!n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!ipa_term_matches(&terms[i], owner_ns, target))
            return false;
    return true;
}

static bool ipa_has_labels(const struct sched_node *node)
{
    return node->labels && node->labels->child;
}

/* ---- counts per topology pair ---- */

/*
 * A map (topology key -> (value -> count)), the counts in the inner entries' num. npairs is
 * the number of pairs (Go's len() of upstream's flat map).
 */
struct ipa_counts {
    struct hmap keys; /* key -> struct hmap * of values */
    size_t npairs;
};

static void ipa_counts_init(struct ipa_counts *m)
{
    hmap_init(&m->keys);
    m->npairs = 0;
}

static void ipa_counts_release(struct ipa_counts *m)
{
    struct hmap_entry *e;
    size_t it;

    for (e = hmap_first(&m->keys, &it); e; e = hmap_next(&m->keys, e, &it)) {
        hmap_release(e->value);
        free(e->value);
    }
    hmap_release(&m->keys);
    m->npairs = 0;
}

static void ipa_counts_copy(struct ipa_counts *dst, const struct ipa_counts *src)
{
    struct hmap_entry *e, *v;
    size_t it, jt;

    ipa_counts_init(dst);
    for (e = hmap_first(&src->keys, &it); e; e = hmap_next(&src->keys, e, &it)) {
        struct hmap *in = xmalloc(sizeof(*in));
        hmap_init(in);
        for (v = hmap_first(e->value, &jt); v; v = hmap_next(e->value, v, &jt))
            hmap_upsert(in, v->key)->num = v->num;
        hmap_put(&dst->keys, e->key, in);
    }
    dst->npairs = src->npairs;
}

/* The count of (key, value), 0 when absent. */
static double ipa_counts_get(const struct ipa_counts *m, const char *key, const char *value)
{
    const struct hmap *in = hmap_get(&m->keys, key);
    const struct hmap_entry *e = in ? hmap_find(in, value) : NULL;

    return e ? e->num : 0;
}

/*
 * Adds delta to (key, value). With drop_zero a pair back at zero is removed, as Filter's maps
 * do (their emptiness matters); scoring keeps them.
 */
static void ipa_counts_add(struct ipa_counts *m, const char *key, const char *value, double delta,
                           bool drop_zero)
{
    struct hmap *in = hmap_get(&m->keys, key);
    struct hmap_entry *e;

    if (!in) {
        in = xmalloc(sizeof(*in));
        hmap_init(in);
        hmap_put(&m->keys, key, in);
    }
    e = hmap_find(in, value);
    if (!e) {
        e = hmap_upsert(in, value);
        m->npairs++;
    }
    e->num += delta;
    if (drop_zero && e->num == 0) {
        (void)hmap_del(in, value);
        m->npairs--;
        if (!in->n) {
            hmap_release(in);
            free(hmap_del(&m->keys, key));
        }
    }
}

/* Adds delta to the node's pair of key, if the node has that label (filtering.go update). */
static void ipa_counts_add_node(struct ipa_counts *m, const struct sched_node *node,
                                const char *key, double delta, bool drop_zero)
{
    const char *v = sched_label(node->labels, key);

    if (v)
        ipa_counts_add(m, key, v, delta, drop_zero);
}

/* ---- PreFilter / Filter state ---- */

struct ipa_filter_state {
    const struct sched_pod *pod;     /* the incoming pod (borrowed for the cycle) */
    struct ipa_counts existing_anti; /* existing pods' anti-affinity matching pod */
    struct ipa_counts affinity;      /* existing pods matching all pod's affinity terms */
    struct ipa_counts anti;          /* existing pods matching pod's anti-affinity terms */
};

static void ipa_filter_state_free(void *data)
{
    struct ipa_filter_state *s = data;

    if (!s)
        return;
    ipa_counts_release(&s->existing_anti);
    ipa_counts_release(&s->affinity);
    ipa_counts_release(&s->anti);
    free(s);
}

static void *ipa_filter_state_clone(const void *data)
{
    const struct ipa_filter_state *s = data;
    struct ipa_filter_state *c = xcalloc(1, sizeof(*c));

    c->pod = s->pod;
    ipa_counts_copy(&c->existing_anti, &s->existing_anti);
    ipa_counts_copy(&c->affinity, &s->affinity);
    ipa_counts_copy(&c->anti, &s->anti);
    return c;
}

static const struct sched_state_type ipa_filter_type = {
    .name = "PreFilterInterPodAffinity",
    .free = ipa_filter_state_free,
    .clone = ipa_filter_state_clone,
};

/* Counts an existing pod q on node whose required anti-affinity terms match the incoming pod
 * (filtering.go getExistingAntiAffinityCounts). */
static void ipa_count_existing_anti(struct ipa_filter_state *s, const struct sched_pod *q,
                                    const struct sched_node *node, double delta)
{
    for (size_t i = 0; i < q->nanti_affinity; i++)
        if (ipa_term_matches(&q->anti_affinity[i], q->namespace, s->pod))
            ipa_counts_add_node(&s->existing_anti, node, q->anti_affinity[i].topology_key, delta,
                                true);
}

/* Counts an existing pod q on node matching the incoming pod's required affinity (all terms)
 * and anti-affinity terms (filtering.go getIncomingAffinityAntiAffinityCounts). */
static void ipa_count_incoming(struct ipa_filter_state *s, const struct sched_pod *q,
                               const struct sched_node *node, double delta)
{
    const struct sched_pod *pod = s->pod;

    if (ipa_matches_all(pod->affinity, pod->naffinity, pod->namespace, q))
        for (size_t i = 0; i < pod->naffinity; i++)
            ipa_counts_add_node(&s->affinity, node, pod->affinity[i].topology_key, delta, true);
    for (size_t i = 0; i < pod->nanti_affinity; i++)
        if (ipa_term_matches(&pod->anti_affinity[i], pod->namespace, q))
            ipa_counts_add_node(&s->anti, node, pod->anti_affinity[i].topology_key, delta, true);
}

/* PreFilter on an explicit snapshot (filtering.go PreFilter). */
static enum sched_code ipa_pre_filter_snap(const struct ipa *pl, const struct sched_snapshot *snap,
                                           struct sched_cycle *cs, const struct sched_pod *pod,
                                           struct sched_status *st)
{
    struct ipa_filter_state *s = xcalloc(1, sizeof(*s));

    (void)pl;
    (void)st;
    s->pod = pod;
    ipa_counts_init(&s->existing_anti);
    ipa_counts_init(&s->affinity);
    ipa_counts_init(&s->anti);

    /* Existing pods' required anti-affinity: only nodes holding such pods. */
    for (size_t k = 0; k < snap->nwith_required_anti; k++) {
        const struct sched_node_info *ni = snap->with_required_anti[k];
        for (size_t j = 0; ni->node && j < ni->npods; j++)
            ipa_count_existing_anti(s, sched_node_info_pod(ni, j), ni->node, 1);
    }
    if (!s->existing_anti.npairs && !pod->naffinity && !pod->nanti_affinity) {
        ipa_filter_state_free(s);
        return SCHED_SKIP;
    }
    /* The incoming pod's required terms against every existing pod. */
    for (size_t k = 0; (pod->naffinity || pod->nanti_affinity) && k < snap->nnodes; k++) {
        const struct sched_node_info *ni = snap->nodes[k];
        for (size_t j = 0; ni->node && j < ni->npods; j++)
            ipa_count_incoming(s, sched_node_info_pod(ni, j), ni->node, 1);
    }
    sched_cycle_write(cs, &ipa_filter_type, s);
    return SCHED_SUCCESS;
}

static enum sched_code ipa_state_missing(struct sched_status *st, const char *key)
{
    return sched_status_set(st, SCHED_ERROR, "error reading \"%s\" from cycleState: not found",
                            key);
}

/* AddPod / RemovePod: dry runs own their cloned state, so no lock is needed. */
static enum sched_code ipa_add_pod(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                   const struct sched_pod *add, const struct sched_node_info *ni,
                                   struct sched_status *st)
{
    struct ipa_filter_state *s = sched_cycle_read(cs, &ipa_filter_type);

    (void)self;
    (void)pod;
    if (!s)
        return ipa_state_missing(st, ipa_filter_type.name);
    if (ni->node) {
        ipa_count_existing_anti(s, add, ni->node, 1);
        ipa_count_incoming(s, add, ni->node, 1);
    }
    return SCHED_SUCCESS;
}

static enum sched_code ipa_remove_pod(void *self, struct sched_cycle *cs,
                                      const struct sched_pod *pod, const struct sched_pod *rm,
                                      const struct sched_node_info *ni, struct sched_status *st)
{
    struct ipa_filter_state *s = sched_cycle_read(cs, &ipa_filter_type);

    (void)self;
    (void)pod;
    if (!s)
        return ipa_state_missing(st, ipa_filter_type.name);
    if (ni->node) {
        ipa_count_existing_anti(s, rm, ni->node, -1);
        ipa_count_incoming(s, rm, ni->node, -1);
    }
    return SCHED_SUCCESS;
}

/*
 * The node has every topology key of the pod's affinity terms and, in each such domain, a pod
 * matching them all; or no pod anywhere matches and the pod matches its own terms, so that the
 * first of a group of pods with affinity to each other can land (filtering.go
 * satisfyPodAffinity).
 */
static bool ipa_satisfies_affinity(const struct ipa_filter_state *s, const struct sched_node *node)
{
    const struct sched_pod *pod = s->pod;
    bool exist = true;

    for (size_t i = 0; i < pod->naffinity; i++) {
        const char *v = sched_label(node->labels, pod->affinity[i].topology_key);
        if (!v)
            return false;
        if (ipa_counts_get(&s->affinity, pod->affinity[i].topology_key, v) <= 0)
            exist = false;
    }
    if (exist)
        return true;
    return !s->affinity.npairs &&
           ipa_matches_all(pod->affinity, pod->naffinity, pod->namespace, pod);
}

static bool ipa_satisfies_anti(const struct ipa_filter_state *s, const struct sched_node *node)
{
    const struct sched_pod *pod = s->pod;

    if (!s->anti.npairs)
        return true;
    for (size_t i = 0; i < pod->nanti_affinity; i++) {
        const char *v = sched_label(node->labels, pod->anti_affinity[i].topology_key);
        if (v && ipa_counts_get(&s->anti, pod->anti_affinity[i].topology_key, v) > 0)
            return false;
    }
    return true;
}

static bool ipa_satisfies_existing_anti(const struct ipa_filter_state *s,
                                        const struct sched_node *node)
{
    const cJSON *l;

    if (!s->existing_anti.npairs || !node->labels)
        return true;
    cJSON_ArrayForEach(l, node->labels)
    {
        if (cJSON_IsString(l) && ipa_counts_get(&s->existing_anti, l->string, l->valuestring) > 0)
            return false;
    }
    return true;
}

static enum sched_code ipa_filter(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                  const struct sched_node_info *ni, struct sched_status *st)
{
    const struct ipa_filter_state *s = sched_cycle_read(cs, &ipa_filter_type);

    (void)self;
    (void)pod;
    if (!ni->node)
        return sched_status_set(st, SCHED_ERROR, "node not found");
    if (!s)
        return ipa_state_missing(st, ipa_filter_type.name);
    if (!ipa_satisfies_affinity(s, ni->node))
        return sched_status_set(st, SCHED_UNRESOLVABLE, "%s", ipa_reason_affinity);
    if (!ipa_satisfies_anti(s, ni->node))
        return sched_status_set(st, SCHED_UNSCHEDULABLE, "%s", ipa_reason_anti);
    if (!ipa_satisfies_existing_anti(s, ni->node))
        return sched_status_set(st, SCHED_UNSCHEDULABLE, "%s", ipa_reason_existing_anti);
    return SCHED_SUCCESS;
}

/* ---- PreScore / Score / NormalizeScore ---- */

struct ipa_score_state {
    struct ipa_counts score; /* topology pair -> summed weights */
};

static void ipa_score_state_free(void *data)
{
    struct ipa_score_state *s = data;

    if (!s)
        return;
    ipa_counts_release(&s->score);
    free(s);
}

/* Read-only after PreScore: dry runs share it. */
static const struct sched_state_type ipa_score_type = {
    .name = "PreScoreInterPodAffinity",
    .free = ipa_score_state_free,
    .clone = NULL,
};

/* Adds weight × mult to node's pair of the term if target matches it (scoring.go processTerm). */
static void ipa_score_term(struct ipa_counts *m, const struct sched_pod_term *t, int32_t weight,
                           const char *owner_ns, const struct sched_pod *target,
                           const struct sched_node *node, int mult)
{
    if (ipa_term_matches(t, owner_ns, target))
        ipa_counts_add_node(m, node, t->topology_key, (double)weight * mult, false);
}

/* One existing pod q on node (scoring.go processExistingPod). */
static void ipa_score_existing(const struct ipa *pl, struct ipa_counts *m,
                               const struct sched_pod *pod, const struct sched_pod *q,
                               const struct sched_node *node)
{
    if (!ipa_has_labels(node))
        return;
    for (size_t i = 0; i < pod->npref_affinity; i++)
        ipa_score_term(m, &pod->pref_affinity[i], pod->pref_affinity[i].weight, pod->namespace, q,
                       node, 1);
    for (size_t i = 0; i < pod->npref_anti_affinity; i++)
        ipa_score_term(m, &pod->pref_anti_affinity[i], pod->pref_anti_affinity[i].weight,
                       pod->namespace, q, node, -1);
    if (pl->hard_weight > 0)
        for (size_t i = 0; i < q->naffinity; i++)
            ipa_score_term(m, &q->affinity[i], pl->hard_weight, q->namespace, pod, node, 1);
    for (size_t i = 0; i < q->npref_affinity; i++)
        ipa_score_term(m, &q->pref_affinity[i], q->pref_affinity[i].weight, q->namespace, pod, node,
                       1);
    for (size_t i = 0; i < q->npref_anti_affinity; i++)
        ipa_score_term(m, &q->pref_anti_affinity[i], q->pref_anti_affinity[i].weight, q->namespace,
                       pod, node, -1);
}

static bool ipa_pod_has_affinity(const struct sched_pod *p)
{
    return p->naffinity || p->nanti_affinity || p->npref_affinity || p->npref_anti_affinity;
}

/* PreScore on an explicit snapshot (scoring.go PreScore). */
static enum sched_code ipa_pre_score_snap(const struct ipa *pl, const struct sched_snapshot *snap,
                                          struct sched_cycle *cs, const struct sched_pod *pod,
                                          size_t nfeasible, struct sched_status *st)
{
    bool has_pref = pod->npref_affinity || pod->npref_anti_affinity;
    struct sched_node_info *const *nodes;
    struct ipa_score_state *s;
    size_t n;

    (void)st;
    if (!nfeasible)
        return SCHED_SKIP;
    if (pl->ignore_existing_preferred && !has_pref)
        return SCHED_SKIP;
    /* Without preferred terms of its own only pods with affinity can change the score. */
    nodes = has_pref ? snap->nodes : snap->with_affinity;
    n = has_pref ? snap->nnodes : snap->nwith_affinity;
    s = xcalloc(1, sizeof(*s));
    ipa_counts_init(&s->score);
    for (size_t k = 0; k < n; k++) {
        const struct sched_node_info *ni = nodes[k];
        if (!ni->node)
            continue;
        for (size_t j = 0; j < ni->npods; j++)
            if (has_pref || ipa_pod_has_affinity(sched_node_info_pod(ni, j)))
                ipa_score_existing(pl, &s->score, pod, sched_node_info_pod(ni, j), ni->node);
    }
    if (!s->score.npairs) {
        ipa_score_state_free(s);
        return SCHED_SKIP;
    }
    sched_cycle_write(cs, &ipa_score_type, s);
    return SCHED_SUCCESS;
}

/* The sum over the node's topology pairs (scoring.go Score). */
static enum sched_code ipa_score(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                 const struct sched_node_info *ni, int64_t *ret_score,
                                 struct sched_status *st)
{
    const struct ipa_score_state *s = sched_cycle_read(cs, &ipa_score_type);
    struct hmap_entry *e;
    double score = 0;
    size_t it;

    (void)self;
    (void)pod;
    if (!s)
        return ipa_state_missing(st, ipa_score_type.name);
    if (!ni->node)
        return sched_status_set(st, SCHED_ERROR, "node not found");
    for (e = hmap_first(&s->score.keys, &it); e; e = hmap_next(&s->score.keys, e, &it)) {
        const char *v = sched_label(ni->node->labels, e->key);
        const struct hmap_entry *c = v ? hmap_find(e->value, v) : NULL;
        if (c)
            score += c->num;
    }
    *ret_score = (int64_t)score;
    return SCHED_SUCCESS;
}

/* 100 × (s − min) / (max − min), 0 when all are equal (scoring.go NormalizeScore). */
static enum sched_code ipa_normalize(void *self, struct sched_cycle *cs,
                                     const struct sched_pod *pod, struct sched_node_score *scores,
                                     size_t n, struct sched_status *st)
{
    const struct ipa_score_state *s = sched_cycle_read(cs, &ipa_score_type);
    int64_t min = INT64_MAX, max = INT64_MIN, diff;

    (void)self;
    (void)pod;
    if (!s)
        return ipa_state_missing(st, ipa_score_type.name);
    if (!s->score.npairs)
        return SCHED_SUCCESS;
    for (size_t i = 0; i < n; i++) {
        if (scores[i].score > max)
            max = scores[i].score;
        if (scores[i].score < min)
            min = scores[i].score;
    }
    diff = max - min;
    for (size_t i = 0; i < n; i++) {
        double f = 0;
        if (diff > 0)
            f = (double)SCHED_MAX_NODE_SCORE * ((double)(scores[i].score - min) / (double)diff);
        scores[i].score = (int64_t)f;
    }
    return SCHED_SUCCESS;
}

/* ---- callbacks reading the cycle's snapshot ---- */

static const struct sched_snapshot *ipa_snapshot(const struct ipa *pl, struct sched_status *st)
{
    const struct sched_snapshot *snap = pl->h ? sched_handle_snapshot(pl->h) : NULL;

    if (!snap)
        sched_status_set(st, SCHED_ERROR, "InterPodAffinity: no snapshot");
    return snap;
}

static enum sched_code ipa_pre_filter(void *self, struct sched_cycle *cs,
                                      const struct sched_pod *pod,
                                      struct sched_prefilter_result *res, struct sched_status *st)
{
    const struct ipa *pl = self;
    const struct sched_snapshot *snap = ipa_snapshot(pl, st);

    (void)res;
    if (!snap)
        return SCHED_ERROR;
    return ipa_pre_filter_snap(pl, snap, cs, pod, st);
}

static enum sched_code ipa_pre_score(void *self, struct sched_cycle *cs,
                                     const struct sched_pod *pod,
                                     struct sched_node_info *const *nodes, size_t n,
                                     struct sched_status *st)
{
    const struct ipa *pl = self;
    const struct sched_snapshot *snap = ipa_snapshot(pl, st);

    (void)nodes;
    if (!snap)
        return SCHED_ERROR;
    return ipa_pre_score_snap(pl, snap, cs, pod, n, st);
}

/* ---- args (InterPodAffinityArgs; validation_pluginargs.go ValidateInterPodAffinityArgs) ---- */

static void ipa_free(void *self)
{
    free(self);
}

static void ipa_bad(struct field_errors *errs, const char *path, const char *field,
                    const cJSON *value, const char *detail)
{
    struct strbuf p = STRBUF_INIT, v = STRBUF_INIT;

    strbuf_addf(&p, "%s%s%s", path, *path ? "." : "", field);
    api_value_repr(value, &v);
    field_error_add(errs, FIELD_INVALID, p.buf, v.buf, "%s", detail);
    strbuf_release(&p);
    strbuf_release(&v);
}

static int ipa_init(const cJSON *args, const char *path, struct sched_handle *h, void **ret_self,
                    struct field_errors *errs)
{
    static const char *const known[] = {"apiVersion", "kind", "hardPodAffinityWeight",
                                        "ignorePreferredTermsOfExistingPods", NULL};
    struct ipa *pl = xcalloc(1, sizeof(*pl));
    size_t nerr = field_errors_count(errs);
    const cJSON *m;

    pl->h = h;
    pl->hard_weight = 1; /* v1 defaults.go */
    if (!args || cJSON_IsNull(args))
        goto out;
    if (!cJSON_IsObject(args)) {
        field_error_add(errs, FIELD_INVALID, path, NULL, "must be an object");
        goto out;
    }
    cJSON_ArrayForEach(m, args)
    {
        bool ok = false;
        for (const char *const *k = known; *k && !ok; k++)
            ok = !strcmp(m->string, *k);
        if (!ok)
            field_error_add(errs, FIELD_UNKNOWN, path, NULL, "unknown field \"%s%s%s\"", path,
                            *path ? "." : "", m->string);
    }
    m = cJSON_GetObjectItemCaseSensitive(args, "hardPodAffinityWeight");
    if (m && !cJSON_IsNull(m)) {
        if (!cJSON_IsNumber(m) || m->valuedouble != floor(m->valuedouble))
            ipa_bad(errs, path, "hardPodAffinityWeight", m, "must be an integer");
        else if (m->valuedouble < 0 || m->valuedouble > 100)
            ipa_bad(errs, path, "hardPodAffinityWeight", m, "not in valid range [0, 100]");
        else
            pl->hard_weight = (int32_t)m->valuedouble;
    }
    m = cJSON_GetObjectItemCaseSensitive(args, "ignorePreferredTermsOfExistingPods");
    if (m && !cJSON_IsNull(m)) {
        if (!cJSON_IsBool(m))
            ipa_bad(errs, path, "ignorePreferredTermsOfExistingPods", m, "must be a boolean");
        else
            pl->ignore_existing_preferred = cJSON_IsTrue(m);
    }
out:
    if (field_errors_count(errs) > nerr) {
        ipa_free(pl);
        return -EINVAL;
    }
    *ret_self = pl;
    return 0;
}

/* reference scheduler.md 3.7: Pod All, Node Add|UpdateNodeLabel|UpdateNodeTaint. */
static const struct sched_event_reg ipa_events[] = {
    {"Pod", SCHED_ACT_ALL},
    {"Node", SCHED_ACT_ADD | SCHED_ACT_UPDATE_NODE_LABEL | SCHED_ACT_UPDATE_NODE_TAINT},
    {NULL, 0},
};

const struct sched_plugin sched_plugin_inter_pod_affinity = {
    .name = "InterPodAffinity",
    .args_kind = "InterPodAffinityArgs",
    .default_weight = 2,
    .events = ipa_events,
    .init = ipa_init,
    .free = ipa_free,
    .pre_filter = ipa_pre_filter,
    .add_pod = ipa_add_pod,
    .remove_pod = ipa_remove_pod,
    .filter = ipa_filter,
    .pre_score = ipa_pre_score,
    .score = ipa_score,
    .normalize = ipa_normalize,
};
