/*
 * TaintToleration (kube-scheduler plugins/tainttoleration/taint_toleration.go, reference
 * scheduler.md 5.3): Filter rejects a node with a NoSchedule or NoExecute taint the pod does not
 * tolerate; Score counts the PreferNoSchedule taints it does not tolerate and NormalizeScore
 * reverses the count, so the node with fewest such taints scores 100.
 */
#include <stdlib.h>

#include "base/base.h"
#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

/* PreScore's state: the indexes of the pod's tolerations that can tolerate a PreferNoSchedule
 * taint (those with an empty effect or PreferNoSchedule). */
struct tt_prescore {
    size_t *idx;
    size_t n;
};

static void tt_prescore_free(void *data)
{
    struct tt_prescore *s = data;

    if (!s)
        return;
    free(s->idx);
    free(s);
}

static const struct sched_state_type tt_prescore_type = {
    .name = "PreScoreTaintToleration",
    .free = tt_prescore_free,
    .clone = NULL, /* read-only after PreScore */
};

static bool prefer_no_schedule_relevant(const struct sched_toleration *t)
{
    return t->effect == SCHED_EFFECT_ANY || t->effect == SCHED_EFFECT_PREFER_NO_SCHEDULE;
}

static enum sched_code tt_filter(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                 const struct sched_node_info *ni, struct sched_status *st)
{
    const struct sched_node *node = ni->node;

    (void)self;
    (void)cs;
    if (!node)
        return sched_status_set(st, SCHED_ERROR, "node not found");
    if (!ni->ntaints) /* the NodeInfo's first line: the node's own lines stay cold */
        return SCHED_SUCCESS;
    /* v1helper.FindMatchingUntoleratedTaint with DoNotScheduleTaintsFilterFunc: the first one. */
    for (size_t i = 0; i < node->ntaints; i++) {
        const struct sched_taint *t = &node->taints[i];
        if (t->effect != SCHED_EFFECT_NO_SCHEDULE && t->effect != SCHED_EFFECT_NO_EXECUTE)
            continue;
        if (sched_pod_tolerates(pod, t))
            continue;
        return sched_status_set(st, SCHED_UNRESOLVABLE, "node(s) had untolerated taint {%s: %s}",
                                t->key, t->value ? t->value : "");
    }
    return SCHED_SUCCESS;
}

static enum sched_code tt_pre_score(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                    struct sched_node_info *const *nodes, size_t n,
                                    struct sched_status *st)
{
    struct tt_prescore *s;

    (void)self;
    (void)nodes;
    (void)st;
    if (n == 0)
        return SCHED_SUCCESS;
    s = xcalloc(1, sizeof(*s));
    if (pod->ntolerations)
        s->idx = xcalloc(pod->ntolerations, sizeof(*s->idx));
    for (size_t i = 0; i < pod->ntolerations; i++)
        if (prefer_no_schedule_relevant(&pod->tolerations[i]))
            s->idx[s->n++] = i;
    sched_cycle_write(cs, &tt_prescore_type, s);
    return SCHED_SUCCESS;
}

/* Whether one of the relevant tolerations tolerates taint; without PreScore's state (PreScore
 * disabled) the pod's tolerations are filtered here instead. */
static bool tolerated(const struct tt_prescore *s, const struct sched_pod *pod,
                      const struct sched_taint *taint)
{
    if (s) {
        for (size_t i = 0; i < s->n; i++)
            if (sched_toleration_matches(&pod->tolerations[s->idx[i]], taint))
                return true;
        return false;
    }
    for (size_t i = 0; i < pod->ntolerations; i++)
        if (prefer_no_schedule_relevant(&pod->tolerations[i]) &&
            sched_toleration_matches(&pod->tolerations[i], taint))
            return true;
    return false;
}

/* The node's PreferNoSchedule taints the pod does not tolerate. */
static inline int64_t tt_node_score(const struct tt_prescore *s, const struct sched_pod *pod,
                                    const struct sched_node_info *ni)
{
    const struct sched_node *node = ni->node;
    int64_t count = 0;

    for (size_t i = 0; ni->ntaints && i < node->ntaints; i++) {
        const struct sched_taint *t = &node->taints[i];
        if (t->effect == SCHED_EFFECT_PREFER_NO_SCHEDULE && !tolerated(s, pod, t))
            count++;
    }
    return count;
}

static enum sched_code tt_score(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                const struct sched_node_info *ni, int64_t *ret_score,
                                struct sched_status *st)
{
    (void)self;
    if (!ni->node)
        return sched_status_set(st, SCHED_ERROR, "node not found");
    *ret_score = tt_node_score(sched_cycle_read(cs, &tt_prescore_type), pod, ni);
    return SCHED_SUCCESS;
}

/* tt_score over n nodes, the cycle state read once. */
static enum sched_code tt_score_nodes(void *self, struct sched_cycle *cs,
                                      const struct sched_pod *pod, struct sched_node_score *v,
                                      size_t n, struct sched_status *st)
{
    const struct tt_prescore *s = sched_cycle_read(cs, &tt_prescore_type);

    (void)self;
    for (size_t i = 0; i < n; i++) {
        if (!v[i].ni->node)
            return sched_status_set(st, SCHED_ERROR, "node not found");
        v[i].score = tt_node_score(s, pod, v[i].ni);
    }
    return SCHED_SUCCESS;
}

/* helper.DefaultNormalizeScore(MaxNodeScore, reverse=true). */
static enum sched_code tt_normalize(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                    struct sched_node_score *scores, size_t n,
                                    struct sched_status *st)
{
    int64_t max = 0;

    (void)self;
    (void)cs;
    (void)pod;
    (void)st;
    for (size_t i = 0; i < n; i++)
        if (scores[i].score > max)
            max = scores[i].score;
    for (size_t i = 0; i < n; i++) {
        if (max == 0)
            scores[i].score = SCHED_MAX_NODE_SCORE;
        else
            scores[i].score = SCHED_MAX_NODE_SCORE - SCHED_MAX_NODE_SCORE * scores[i].score / max;
    }
    return SCHED_SUCCESS;
}

static const struct sched_event_reg tt_events[] = {
    {"Node", SCHED_ACT_ADD | SCHED_ACT_UPDATE},
    {NULL, 0},
};

const struct sched_plugin sched_plugin_taint_toleration = {
    .name = "TaintToleration",
    .args_kind = NULL,
    .default_weight = 3,
    .events = tt_events,
    .filter = tt_filter,
    .pre_score = tt_pre_score,
    .score = tt_score,
    .score_nodes = tt_score_nodes,
    .normalize = tt_normalize,
};
