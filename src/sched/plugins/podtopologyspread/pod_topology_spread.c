/*
 * PodTopologySpread: spreads matching pods evenly over topology domains (zones, hosts, ...), as
 * kube-scheduler 1.30's pkg/scheduler/framework/plugins/podtopologyspread (common.go,
 * filtering.go, scoring.go; reference scheduler.md 5.4) does.
 *
 * PreFilter counts, for each of the pod's DoNotSchedule constraints, the pods matching the
 * constraint's selector in every domain of its topology key, over the nodes the constraint
 * considers (nodeAffinityPolicy / nodeTaintsPolicy); Filter then rejects a node whose domain
 * would exceed maxSkew over the emptiest domain. PreScore counts the same for the
 * ScheduleAnyway constraints over the feasible nodes' domains, Score weights the counts by
 * log(domains + 2), NormalizeScore reverses them so that emptier domains score higher.
 *
 * One deliberate difference from 1.30: counts and critical paths are kept per constraint, as
 * upstream does since 1.31, not per topology key, so that two constraints on one key with
 * different selectors do not overwrite each other's counts.
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

#define PTS_HOSTNAME_KEY "kubernetes.io/hostname"

static const char pts_reason_label[] =
    "node(s) didn't match pod topology spread constraints (missing required label)";
static const char pts_reason_skew[] = "node(s) didn't match pod topology spread constraints";

/* The plugin instance: its args, decoded and defaulted. */
struct pts {
    struct sched_handle *h;
    bool system_defaulted; /* defaultingType System */
    /* The system defaults or, with defaultingType List, defaultConstraints (selector NULL:
     * built per pod). */
    struct sched_spread *defaults;
    size_t ndefaults;
};

/* A constraint as a cycle applies it: the pod's own (selector = spec->selector) or a default
 * one with the selector built for the pod. */
struct pts_constraint {
    const struct sched_spread *spec;
    const struct label_selector *selector; /* NULL matches nothing */
};

/* ---- constraints ---- */

static bool pts_selector_matches(const struct label_selector *sel, const cJSON *labels)
{
    return sel && label_selector_matches(sel, labels);
}

/*
 * The default constraints of a pod without its own (common.go buildDefaultConstraints).
 * Upstream gives them the selector helper.DefaultSelector builds from the Services,
 * ReplicationControllers, ReplicaSets and StatefulSets selecting the pod, and applies none when
 * that selector is empty. koord scheduler does not watch those kinds yet, so the selector is
 * always empty and a pod without constraints of its own has none, with System and List
 * defaulting alike.
 */
static size_t pts_default_constraints(const struct pts *pl, const struct sched_pod *pod,
                                      bool do_not_schedule, struct pts_constraint **ret)
{
    (void)pl;
    (void)pod;
    (void)do_not_schedule;
    *ret = NULL;
    return 0;
}

/* The pod's constraints with the given whenUnsatisfiable (common.go
 * filterTopologySpreadConstraints); *ret is NULL when there are none. The constraints borrow
 * the pod, which outlives the cycle. */
static size_t pts_constraints(const struct pts *pl, const struct sched_pod *pod,
                              bool do_not_schedule, struct pts_constraint **ret)
{
    struct pts_constraint *v;
    size_t n = 0;

    if (!pod->nspread)
        return pts_default_constraints(pl, pod, do_not_schedule, ret);
    v = xcalloc(pod->nspread, sizeof(*v));
    for (size_t i = 0; i < pod->nspread; i++) {
        if (pod->spread[i].do_not_schedule != do_not_schedule)
            continue;
        v[n].spec = &pod->spread[i];
        v[n].selector = pod->spread[i].selector;
        n++;
    }
    if (!n)
        FREE_AND_NULL(v);
    *ret = v;
    return n;
}

/* Whether the node has every constraint's topology key (nodeLabelsMatchSpreadConstraints). */
static bool pts_node_has_keys(const struct sched_node *node, const struct pts_constraint *c,
                              size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!sched_label(node->labels, c[i].spec->topology_key))
            return false;
    return true;
}

/* The pod's nodeSelector and required node affinity (nodeaffinity.GetRequiredNodeAffinity). */
static bool pts_node_affinity_matches(const struct sched_pod *pod, const struct sched_node *node)
{
    for (size_t i = 0; i < pod->nnode_selector; i++)
        if (!sched_sel_req_matches(&pod->node_selector[i], node->labels))
            return false;
    return !pod->required_node ||
           sched_node_selector_matches(pod->required_node, node->labels, node->name);
}

/* Whether the node has a NoSchedule or NoExecute taint the pod does not tolerate. */
static bool pts_node_untolerated(const struct sched_pod *pod, const struct sched_node *node)
{
    for (size_t i = 0; i < node->ntaints; i++) {
        const struct sched_taint *t = &node->taints[i];
        if ((t->effect == SCHED_EFFECT_NO_SCHEDULE || t->effect == SCHED_EFFECT_NO_EXECUTE) &&
            !sched_pod_tolerates(pod, t))
            return true;
    }
    return false;
}

/* Whether a constraint counts the node (common.go matchNodeInclusionPolicies). */
static bool pts_node_included(const struct pts_constraint *c, const struct sched_pod *pod,
                              const struct sched_node *node)
{
    if (!c->spec->ignore_affinity && !pts_node_affinity_matches(pod, node))
        return false;
    return !c->spec->honor_taints || !pts_node_untolerated(pod, node);
}

/* The pods on the node in namespace ns that match sel, terminating ones left out
 * (common.go countPodsMatchSelector). */
static int64_t pts_count_pods(const struct sched_node_info *ni, const struct label_selector *sel,
                              const char *ns)
{
    int64_t n = 0;

    for (size_t i = 0; i < ni->npods; i++) {
        const struct sched_pod *p = sched_node_info_pod(ni, i);
        if (p->deleting || strcmp(p->namespace, ns))
            continue;
        if (pts_selector_matches(sel, p->labels))
            n++;
    }
    return n;
}

/* ---- PreFilter / Filter state ---- */

/* One of the two lowest-count domains of a constraint (filtering.go criticalPaths). */
struct pts_path {
    const char *value; /* a key of the constraint's counts map; NULL: none yet */
    int64_t num;
};

struct pts_filter_state {
    struct pts_constraint *cons; /* the DoNotSchedule constraints */
    size_t ncons;
    struct hmap *counts;         /* per constraint: domain -> matching pods (entry num) */
    struct pts_path (*paths)[2]; /* per constraint: [0] holds the minimum */
};

static void pts_paths_init(struct pts_path p[2])
{
    p[0].value = p[1].value = NULL;
    p[0].num = p[1].num = INT32_MAX;
}

/*
 * Records that domain value (a key owned by the counts map) now has num pods. Like upstream's
 * criticalPaths.update, only the two lowest domains are tracked, which stays exact for the
 * preemption dry runs that remove pods from one node at a time.
 */
static void pts_paths_update(struct pts_path p[2], const char *value, int64_t num)
{
    int i = -1;

    if (p[0].value && !strcmp(value, p[0].value))
        i = 0;
    else if (p[1].value && !strcmp(value, p[1].value))
        i = 1;
    if (i >= 0) {
        p[i].num = num;
        if (p[0].num > p[1].num) {
            struct pts_path t = p[0];
            p[0] = p[1];
            p[1] = t;
        }
    } else if (num < p[0].num) {
        p[1] = p[0];
        p[0].value = value;
        p[0].num = num;
    } else if (num < p[1].num) {
        p[1].value = value;
        p[1].num = num;
    }
}

static void pts_filter_state_free(void *data)
{
    struct pts_filter_state *s = data;

    if (!s)
        return;
    for (size_t i = 0; i < s->ncons; i++)
        hmap_release(&s->counts[i]);
    free(s->counts);
    free(s->paths);
    free(s->cons);
    free(s);
}

static struct pts_filter_state *pts_filter_state_new(struct pts_constraint *cons, size_t n)
{
    struct pts_filter_state *s = xcalloc(1, sizeof(*s));

    s->cons = cons;
    s->ncons = n;
    s->counts = xcalloc(n, sizeof(*s->counts));
    s->paths = xcalloc(n, sizeof(*s->paths));
    for (size_t i = 0; i < n; i++) {
        hmap_init(&s->counts[i]);
        pts_paths_init(s->paths[i]);
    }
    return s;
}

/* A copy for a dry run: counts and paths are copied, the paths re-pointed at the copy's keys. */
static void *pts_filter_state_clone(const void *data)
{
    const struct pts_filter_state *s = data;
    struct pts_constraint *cons = xcalloc(s->ncons, sizeof(*cons));
    struct pts_filter_state *c;

    memcpy(cons, s->cons, s->ncons * sizeof(*cons));
    c = pts_filter_state_new(cons, s->ncons);
    for (size_t i = 0; i < s->ncons; i++) {
        struct hmap_entry *e;
        size_t it;
        for (e = hmap_first(&s->counts[i], &it); e; e = hmap_next(&s->counts[i], e, &it))
            hmap_upsert(&c->counts[i], e->key)->num = e->num;
        for (int k = 0; k < 2; k++) {
            c->paths[i][k] = s->paths[i][k];
            if (s->paths[i][k].value)
                c->paths[i][k].value = hmap_find(&c->counts[i], s->paths[i][k].value)->key;
        }
    }
    return c;
}

static const struct sched_state_type pts_filter_type = {
    .name = "PreFilterPodTopologySpread",
    .free = pts_filter_state_free,
    .clone = pts_filter_state_clone,
};

/* ---- PreFilter ---- */

/* PreFilter on an explicit snapshot (filtering.go calPreFilterState). */
static enum sched_code pts_pre_filter_snap(const struct pts *pl, const struct sched_snapshot *snap,
                                           struct sched_cycle *cs, const struct sched_pod *pod,
                                           struct sched_status *st)
{
    struct pts_filter_state *s;
    struct pts_constraint *cons;
    size_t n;

    (void)st;
    n = pts_constraints(pl, pod, true, &cons);
    if (!n)
        return SCHED_SKIP;
    s = pts_filter_state_new(cons, n);
    for (size_t k = 0; k < snap->nnodes; k++) {
        const struct sched_node_info *ni = snap->nodes[k];
        const struct sched_node *node = ni->node;
        if (!node || !pts_node_has_keys(node, cons, n))
            continue;
        for (size_t i = 0; i < n; i++) {
            if (!pts_node_included(&cons[i], pod, node))
                continue;
            /* A domain counts once a node of it is eligible, even with no matching pod. */
            hmap_upsert(&s->counts[i], sched_label(node->labels, cons[i].spec->topology_key))
                ->num += (double)pts_count_pods(ni, cons[i].selector, pod->namespace);
        }
    }
    for (size_t i = 0; i < n; i++) {
        struct hmap_entry *e;
        size_t it;
        for (e = hmap_first(&s->counts[i], &it); e; e = hmap_next(&s->counts[i], e, &it))
            pts_paths_update(s->paths[i], e->key, (int64_t)e->num);
    }
    sched_cycle_write(cs, &pts_filter_type, s);
    return SCHED_SUCCESS;
}

/* ---- AddPod / RemovePod ---- */

/* Adds (delta 1) or removes (-1) a pod on node to the counts (filtering.go updateWithPod).
 * Dry runs own their cloned state, so no lock is needed. */
static void pts_update_with_pod(struct pts_filter_state *s, const struct sched_pod *pod,
                                const struct sched_pod *other, const struct sched_node *node,
                                int delta)
{
    if (!node || strcmp(other->namespace, pod->namespace))
        return;
    if (!pts_node_has_keys(node, s->cons, s->ncons))
        return;
    for (size_t i = 0; i < s->ncons; i++) {
        struct hmap_entry *e;
        if (!pts_selector_matches(s->cons[i].selector, other->labels))
            continue;
        if (!pts_node_included(&s->cons[i], pod, node))
            continue;
        e = hmap_upsert(&s->counts[i], sched_label(node->labels, s->cons[i].spec->topology_key));
        e->num += delta;
        pts_paths_update(s->paths[i], e->key, (int64_t)e->num);
    }
}

static enum sched_code pts_state_missing(struct sched_status *st, const char *key)
{
    return sched_status_set(st, SCHED_ERROR, "reading \"%s\" from cycleState: not found", key);
}

static enum sched_code pts_add_pod(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                   const struct sched_pod *add, const struct sched_node_info *ni,
                                   struct sched_status *st)
{
    struct pts_filter_state *s = sched_cycle_read(cs, &pts_filter_type);

    (void)self;
    if (!s)
        return pts_state_missing(st, pts_filter_type.name);
    pts_update_with_pod(s, pod, add, ni->node, 1);
    return SCHED_SUCCESS;
}

static enum sched_code pts_remove_pod(void *self, struct sched_cycle *cs,
                                      const struct sched_pod *pod, const struct sched_pod *rm,
                                      const struct sched_node_info *ni, struct sched_status *st)
{
    struct pts_filter_state *s = sched_cycle_read(cs, &pts_filter_type);

    (void)self;
    if (!s)
        return pts_state_missing(st, pts_filter_type.name);
    pts_update_with_pod(s, pod, rm, ni->node, -1);
    return SCHED_SUCCESS;
}

/* ---- Filter ---- */

/* The global minimum for constraint i: 0 while fewer domains than minDomains exist
 * (filtering.go minMatchNum). */
static int64_t pts_min_match(const struct pts_filter_state *s, size_t i)
{
    if (s->counts[i].n <
        (size_t)(s->cons[i].spec->min_domains > 0 ? s->cons[i].spec->min_domains : 1))
        return 0;
    return s->paths[i][0].num;
}

static enum sched_code pts_filter(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                  const struct sched_node_info *ni, struct sched_status *st)
{
    const struct pts_filter_state *s = sched_cycle_read(cs, &pts_filter_type);
    const struct sched_node *node = ni->node;

    (void)self;
    if (!s)
        return pts_state_missing(st, pts_filter_type.name);
    if (!node)
        return sched_status_set(st, SCHED_ERROR, "node not found");
    for (size_t i = 0; i < s->ncons; i++) {
        const struct pts_constraint *c = &s->cons[i];
        const char *value = sched_label(node->labels, c->spec->topology_key);
        const struct hmap_entry *e;
        int64_t match, self_match, skew;

        if (!value)
            return sched_status_set(st, SCHED_UNRESOLVABLE, "%s", pts_reason_label);
        e = hmap_find(&s->counts[i], value);
        match = e ? (int64_t)e->num : 0;
        self_match = pts_selector_matches(c->selector, pod->labels) ? 1 : 0;
        skew = match + self_match - pts_min_match(s, i);
        if (skew > c->spec->max_skew)
            return sched_status_set(st, SCHED_UNSCHEDULABLE, "%s", pts_reason_skew);
    }
    return SCHED_SUCCESS;
}

/* ---- PreScore / Score / NormalizeScore ---- */

struct pts_score_state {
    struct pts_constraint *cons; /* the ScheduleAnyway constraints */
    size_t ncons;
    struct hmap ignored; /* names of feasible nodes lacking a topology key: score 0 */
    struct hmap *counts; /* per constraint but hostname: domain -> matching pods (entry num) */
    double *weight;      /* per constraint: log(domains + 2) */
};

static void pts_score_state_free(void *data)
{
    struct pts_score_state *s = data;

    if (!s)
        return;
    for (size_t i = 0; i < s->ncons; i++)
        hmap_release(&s->counts[i]);
    hmap_release(&s->ignored);
    free(s->counts);
    free(s->weight);
    free(s->cons);
    free(s);
}

/* Read-only after PreScore: dry runs share it. */
static const struct sched_state_type pts_score_type = {
    .name = "PreScorePodTopologySpread",
    .free = pts_score_state_free,
    .clone = NULL,
};

static bool pts_is_hostname(const struct pts_constraint *c)
{
    return !strcmp(c->spec->topology_key, PTS_HOSTNAME_KEY);
}

/* A label's value, "" when absent (Go's map lookup). */
static const char *pts_label_or_empty(const struct sched_node *node, const char *key)
{
    const char *v = sched_label(node->labels, key);
    return v ? v : "";
}

/* PreScore on an explicit snapshot (scoring.go PreScore, initPreScoreState). */
static enum sched_code pts_pre_score_snap(const struct pts *pl, const struct sched_snapshot *snap,
                                          struct sched_cycle *cs, const struct sched_pod *pod,
                                          struct sched_node_info *const *nodes, size_t nnodes,
                                          struct sched_status *st)
{
    struct pts_score_state *s;
    struct pts_constraint *cons;
    size_t n, *size;
    /* Only constraints of the pod's own (or List defaults) require every key on a node, so
     * that with system defaults nodes without a zone label still spread by hostname. */
    bool require_all = pod->nspread > 0 || !pl->system_defaulted;

    (void)st;
    if (!nnodes || !snap->nnodes)
        return SCHED_SKIP;
    n = pts_constraints(pl, pod, false, &cons);
    if (!n)
        return SCHED_SKIP;
    s = xcalloc(1, sizeof(*s));
    s->cons = cons;
    s->ncons = n;
    hmap_init(&s->ignored);
    s->counts = xcalloc(n, sizeof(*s->counts));
    s->weight = xcalloc(n, sizeof(*s->weight));
    size = xcalloc(n, sizeof(*size));
    for (size_t i = 0; i < n; i++)
        hmap_init(&s->counts[i]);

    /* The domains of the feasible nodes; pods are counted in them below. */
    for (size_t k = 0; k < nnodes; k++) {
        const struct sched_node *node = nodes[k]->node;
        if (!node)
            continue;
        if (require_all && !pts_node_has_keys(node, cons, n)) {
            hmap_put(&s->ignored, node->name, (void *)node);
            continue;
        }
        for (size_t i = 0; i < n; i++) {
            const char *v;
            if (pts_is_hostname(&cons[i]))
                continue; /* counted per node at Score */
            v = pts_label_or_empty(node, cons[i].spec->topology_key);
            if (!hmap_find(&s->counts[i], v)) {
                hmap_upsert(&s->counts[i], v);
                size[i]++;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        size_t sz = size[i];
        if (pts_is_hostname(&cons[i]))
            sz = nnodes - s->ignored.n;
        s->weight[i] = log((double)sz + 2);
    }
    free(size);

    for (size_t k = 0; k < snap->nnodes; k++) {
        const struct sched_node_info *ni = snap->nodes[k];
        const struct sched_node *node = ni->node;
        if (!node || (require_all && !pts_node_has_keys(node, cons, n)))
            continue;
        for (size_t i = 0; i < n; i++) {
            struct hmap_entry *e;
            if (!pts_node_included(&cons[i], pod, node))
                continue;
            /* Domains without a feasible node are not scored; hostname has no entries. */
            e = hmap_find(&s->counts[i], pts_label_or_empty(node, cons[i].spec->topology_key));
            if (e)
                e->num += (double)pts_count_pods(ni, cons[i].selector, pod->namespace);
        }
    }
    sched_cycle_write(cs, &pts_score_type, s);
    return SCHED_SUCCESS;
}

/* scoring.go scoreForCount. */
static double pts_score_for_count(int64_t cnt, int32_t max_skew, double weight)
{
    return (double)cnt * weight + (double)(max_skew - 1);
}

static enum sched_code pts_score(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                 const struct sched_node_info *ni, int64_t *ret_score,
                                 struct sched_status *st)
{
    const struct pts_score_state *s = sched_cycle_read(cs, &pts_score_type);
    const struct sched_node *node = ni->node;
    double score = 0;

    (void)self;
    if (!s)
        return pts_state_missing(st, pts_score_type.name);
    if (!node)
        return sched_status_set(st, SCHED_ERROR, "node not found");
    if (hmap_find(&s->ignored, node->name)) {
        *ret_score = 0;
        return SCHED_SUCCESS;
    }
    for (size_t i = 0; i < s->ncons; i++) {
        const struct pts_constraint *c = &s->cons[i];
        const char *v = sched_label(node->labels, c->spec->topology_key);
        int64_t cnt = 0;
        if (!v)
            continue;
        if (pts_is_hostname(c)) {
            cnt = pts_count_pods(ni, c->selector, pod->namespace);
        } else {
            const struct hmap_entry *e = hmap_find(&s->counts[i], v);
            cnt = e ? (int64_t)e->num : 0;
        }
        score += pts_score_for_count(cnt, c->spec->max_skew, s->weight[i]);
    }
    *ret_score = (int64_t)round(score);
    return SCHED_SUCCESS;
}

/* Fewer matching pods score higher: 100 × (max + min − s) / max; ignored nodes 0
 * (scoring.go NormalizeScore). */
static enum sched_code pts_normalize(void *self, struct sched_cycle *cs,
                                     const struct sched_pod *pod, struct sched_node_score *scores,
                                     size_t n, struct sched_status *st)
{
    const struct pts_score_state *s = sched_cycle_read(cs, &pts_score_type);
    int64_t min = INT64_MAX, max = 0;

    (void)self;
    (void)pod;
    if (!s)
        return pts_state_missing(st, pts_score_type.name);
    for (size_t i = 0; i < n; i++) {
        if (hmap_find(&s->ignored, scores[i].ni->name))
            continue;
        if (scores[i].score < min)
            min = scores[i].score;
        if (scores[i].score > max)
            max = scores[i].score;
    }
    for (size_t i = 0; i < n; i++) {
        if (hmap_find(&s->ignored, scores[i].ni->name))
            scores[i].score = 0;
        else if (max == 0)
            scores[i].score = SCHED_MAX_NODE_SCORE;
        else
            scores[i].score = SCHED_MAX_NODE_SCORE * (max + min - scores[i].score) / max;
    }
    return SCHED_SUCCESS;
}

/* ---- callbacks reading the cycle's snapshot ---- */

static const struct sched_snapshot *pts_snapshot(const struct pts *pl, struct sched_status *st)
{
    const struct sched_snapshot *snap = pl->h ? sched_handle_snapshot(pl->h) : NULL;

    if (!snap)
        sched_status_set(st, SCHED_ERROR, "PodTopologySpread: no snapshot");
    return snap;
}

static enum sched_code pts_pre_filter(void *self, struct sched_cycle *cs,
                                      const struct sched_pod *pod,
                                      struct sched_prefilter_result *res, struct sched_status *st)
{
    const struct pts *pl = self;
    const struct sched_snapshot *snap = pts_snapshot(pl, st);

    (void)res;
    if (!snap)
        return SCHED_ERROR;
    return pts_pre_filter_snap(pl, snap, cs, pod, st);
}

static enum sched_code pts_pre_score(void *self, struct sched_cycle *cs,
                                     const struct sched_pod *pod,
                                     struct sched_node_info *const *nodes, size_t n,
                                     struct sched_status *st)
{
    const struct pts *pl = self;
    const struct sched_snapshot *snap = pts_snapshot(pl, st);

    if (!snap)
        return SCHED_ERROR;
    return pts_pre_score_snap(pl, snap, cs, pod, nodes, n, st);
}

/* ---- args (PodTopologySpreadArgs; validation_pluginargs.go ValidatePodTopologySpreadArgs) ---- */

static void pts_bad(struct field_errors *errs, enum field_error_type type, const char *path,
                    const char *field, const cJSON *value, const char *detail)
{
    struct strbuf p = STRBUF_INIT, v = STRBUF_INIT;

    strbuf_addf(&p, "%s%s%s", path, *path && *field ? "." : "", field);
    if (value)
        api_value_repr(value, &v);
    field_error_add(errs, type, p.buf, value ? v.buf : NULL, "%s", detail);
    strbuf_release(&p);
    strbuf_release(&v);
}

/* A string member: its value, "" when absent; NULL (reported) when not a string. */
static const char *pts_string(const cJSON *o, const char *name, const char *path,
                              struct field_errors *errs)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

    if (!v || cJSON_IsNull(v))
        return "";
    if (!cJSON_IsString(v)) {
        pts_bad(errs, FIELD_INVALID, path, name, v, "must be a string");
        return NULL;
    }
    return v->valuestring;
}

/* An int32 member; def when absent. false (reported) when not an int32. */
static bool pts_int32(const cJSON *o, const char *name, int32_t def, const char *path,
                      struct field_errors *errs, int32_t *ret)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

    if (!v || cJSON_IsNull(v)) {
        *ret = def;
        return true;
    }
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
        v->valuedouble < INT32_MIN || v->valuedouble > INT32_MAX) {
        pts_bad(errs, FIELD_INVALID, path, name, v, "must be a 32-bit integer");
        return false;
    }
    *ret = (int32_t)v->valuedouble;
    return true;
}

static void pts_unknown_fields(const cJSON *o, const char *const *known, const char *path,
                               struct field_errors *errs)
{
    const cJSON *m;

    cJSON_ArrayForEach(m, o)
    {
        bool ok = false;
        for (const char *const *k = known; *k && !ok; k++)
            ok = !strcmp(m->string, *k);
        if (!ok)
            field_error_add(errs, FIELD_UNKNOWN, path, NULL, "unknown field \"%s.%s\"", path,
                            m->string);
    }
}

/* One entry of defaultConstraints into *c (selector left NULL). */
static void pts_decode_default(const cJSON *o, const char *path, struct sched_spread *c,
                               struct field_errors *errs)
{
    static const char *const known[] = {"maxSkew",          "topologyKey",    "whenUnsatisfiable",
                                        "labelSelector",    "minDomains",     "nodeAffinityPolicy",
                                        "nodeTaintsPolicy", "matchLabelKeys", NULL};
    const char *key, *when, *pol;
    struct strbuf why = STRBUF_INIT;

    if (!cJSON_IsObject(o)) {
        field_error_add(errs, FIELD_INVALID, path, NULL, "must be an object");
        return;
    }
    pts_unknown_fields(o, known, path, errs);
    if (pts_int32(o, "maxSkew", 0, path, errs, &c->max_skew) && c->max_skew <= 0) {
        struct strbuf p = STRBUF_INIT, v = STRBUF_INIT;
        strbuf_addf(&p, "%s.maxSkew", path);
        strbuf_addf(&v, "%d", c->max_skew);
        field_error_add(errs, FIELD_INVALID, p.buf, v.buf, "not in valid range (0, inf)");
        strbuf_release(&p);
        strbuf_release(&v);
    }
    key = pts_string(o, "topologyKey", path, errs);
    if (key && !*key) {
        pts_bad(errs, FIELD_REQUIRED, path, "topologyKey", NULL, "can not be empty");
    } else if (key && labels_check_qualified_name(key, &why) < 0) {
        pts_bad(errs, FIELD_INVALID, path, "topologyKey",
                cJSON_GetObjectItemCaseSensitive(o, "topologyKey"), why.buf);
    }
    c->topology_key = xstrdup(key ? key : "");
    when = pts_string(o, "whenUnsatisfiable", path, errs);
    if (when && !*when)
        pts_bad(errs, FIELD_REQUIRED, path, "whenUnsatisfiable", NULL, "can not be empty");
    else if (when && strcmp(when, "DoNotSchedule") && strcmp(when, "ScheduleAnyway"))
        pts_bad(errs, FIELD_NOT_SUPPORTED, path, "whenUnsatisfiable",
                cJSON_GetObjectItemCaseSensitive(o, "whenUnsatisfiable"),
                "supported values: \"DoNotSchedule\", \"ScheduleAnyway\"");
    c->do_not_schedule = when && !strcmp(when, "DoNotSchedule");
    {
        const cJSON *sel = cJSON_GetObjectItemCaseSensitive(o, "labelSelector");
        if (sel && !cJSON_IsNull(sel))
            pts_bad(errs, FIELD_FORBIDDEN, path, "labelSelector", NULL,
                    "constraint must not define a selector, as they deduced for each pod");
    }
    if (pts_int32(o, "minDomains", 1, path, errs, &c->min_domains) && c->min_domains <= 0)
        pts_bad(errs, FIELD_INVALID, path, "minDomains",
                cJSON_GetObjectItemCaseSensitive(o, "minDomains"), "must be greater than 0");
    pol = pts_string(o, "nodeAffinityPolicy", path, errs);
    c->ignore_affinity = pol && !strcmp(pol, "Ignore");
    pol = pts_string(o, "nodeTaintsPolicy", path, errs);
    c->honor_taints = pol && !strcmp(pol, "Honor");
    strbuf_release(&why);
}

static void pts_free(void *self)
{
    struct pts *pl = self;

    if (!pl)
        return;
    for (size_t i = 0; i < pl->ndefaults; i++)
        free(pl->defaults[i].topology_key);
    free(pl->defaults);
    free(pl);
}

/* The defaults of defaultingType System (plugin.go systemDefaultConstraints). */
static void pts_set_system_defaults(struct pts *pl)
{
    static const struct {
        const char *key;
        int32_t max_skew;
    } sys[] = {{PTS_HOSTNAME_KEY, 3}, {"topology.kubernetes.io/zone", 5}};

    pl->defaults = xcalloc(ARRAY_SIZE(sys), sizeof(*pl->defaults));
    for (size_t i = 0; i < ARRAY_SIZE(sys); i++) {
        pl->defaults[i].topology_key = xstrdup(sys[i].key);
        pl->defaults[i].max_skew = sys[i].max_skew;
        pl->defaults[i].do_not_schedule = false;
        pl->defaults[i].min_domains = 1;
    }
    pl->ndefaults = ARRAY_SIZE(sys);
}

static int pts_init(const cJSON *args, const char *path, struct sched_handle *h, void **ret_self,
                    struct field_errors *errs)
{
    static const char *const known[] = {"apiVersion", "kind", "defaultConstraints",
                                        "defaultingType", NULL};
    struct pts *pl = xcalloc(1, sizeof(*pl));
    size_t nerr = field_errors_count(errs);
    const cJSON *list = NULL;
    const char *type = "";

    pl->h = h;
    if (args && !cJSON_IsNull(args) && !cJSON_IsObject(args)) {
        field_error_add(errs, FIELD_INVALID, path, NULL, "must be an object");
        goto out;
    }
    if (args && cJSON_IsObject(args)) {
        pts_unknown_fields(args, known, path, errs);
        type = pts_string(args, "defaultingType", path, errs);
        list = cJSON_GetObjectItemCaseSensitive(args, "defaultConstraints");
    }
    if (list && !cJSON_IsNull(list) && !cJSON_IsArray(list)) {
        pts_bad(errs, FIELD_INVALID, path, "defaultConstraints", list, "must be a list");
        list = NULL;
    }
    if (list && cJSON_IsNull(list))
        list = NULL;
    /* v1 defaults.go: an unset defaultingType is System. */
    if (type && (!*type || !strcmp(type, "System"))) {
        pl->system_defaulted = true;
        if (list && cJSON_GetArraySize(list) > 0) {
            struct strbuf p = STRBUF_INIT;
            strbuf_addf(&p, "%s.defaultingType", path);
            field_error_add(errs, FIELD_INVALID, p.buf, "\"System\"",
                            "when .defaultConstraints are not empty");
            strbuf_release(&p);
        }
    } else if (type && strcmp(type, "List")) {
        pts_bad(errs, FIELD_NOT_SUPPORTED, path, "defaultingType",
                cJSON_GetObjectItemCaseSensitive(args, "defaultingType"),
                "supported values: \"System\", \"List\"");
    }
    if (list && cJSON_GetArraySize(list) > 0) {
        const cJSON *e;
        pl->defaults = xcalloc((size_t)cJSON_GetArraySize(list), sizeof(*pl->defaults));
        cJSON_ArrayForEach(e, list)
        {
            struct sched_spread *c = &pl->defaults[pl->ndefaults];
            struct strbuf p = STRBUF_INIT;
            strbuf_addf(&p, "%s.defaultConstraints[%zu]", path, pl->ndefaults);
            pts_decode_default(e, p.buf, c, errs);
            pl->ndefaults++;
            for (size_t j = 0; j + 1 < pl->ndefaults; j++) {
                const struct sched_spread *o = &pl->defaults[j];
                if (!strcmp(o->topology_key, c->topology_key) &&
                    o->do_not_schedule == c->do_not_schedule) {
                    struct strbuf v = STRBUF_INIT;
                    strbuf_addf(&v, "\"{%s, %s}\"", c->topology_key,
                                c->do_not_schedule ? "DoNotSchedule" : "ScheduleAnyway");
                    field_error_add(errs, FIELD_DUPLICATE, p.buf, v.buf, NULL);
                    strbuf_release(&v);
                    break;
                }
            }
            strbuf_release(&p);
        }
    }
out:
    if (field_errors_count(errs) > nerr) {
        pts_free(pl);
        return -EINVAL;
    }
    if (pl->system_defaulted)
        pts_set_system_defaults(pl);
    *ret_self = pl;
    return 0;
}

/* reference scheduler.md 3.7: Pod All, Node Add|Delete|UpdateNodeLabel|UpdateNodeTaint. */
static const struct sched_event_reg pts_events[] = {
    {"Pod", SCHED_ACT_ALL},
    {"Node",
     SCHED_ACT_ADD | SCHED_ACT_DELETE | SCHED_ACT_UPDATE_NODE_LABEL | SCHED_ACT_UPDATE_NODE_TAINT},
    {NULL, 0},
};

const struct sched_plugin sched_plugin_pod_topology_spread = {
    .name = "PodTopologySpread",
    .args_kind = "PodTopologySpreadArgs",
    .default_weight = 2,
    .events = pts_events,
    .init = pts_init,
    .free = pts_free,
    .pre_filter = pts_pre_filter,
    .add_pod = pts_add_pod,
    .remove_pod = pts_remove_pod,
    .filter = pts_filter,
    .pre_score = pts_pre_score,
    .score = pts_score,
    .normalize = pts_normalize,
};
