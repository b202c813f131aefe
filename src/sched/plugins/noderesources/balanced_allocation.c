/*
 * NodeResourcesBalancedAllocation (reference scheduler.md 5.2; kube-scheduler 1.30
 * pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go, args validated as
 * apis/config/validation/validation_pluginargs.go ValidateNodeResourcesBalancedAllocationArgs and
 * defaulted as apis/config/v1/defaults.go SetDefaults_NodeResourcesBalancedAllocationArgs).
 *
 * Favours nodes whose resources would be used in equal proportions once the pod runs there, so
 * that a node does not end up with its cpu full and its memory idle. Uses the plain requests
 * (not NodeResourcesFit's non-zero ones). Like upstream 1.30 it scores best-effort pods too
 * (the skip for them came later, kubernetes issue 129138).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/field.h"
#include "base/base.h"
#include "sched/framework/framework.h"
#include "sched/plugins/noderesources/resource_allocation.h"
#include "sched/plugins/registry.h"

struct balanced {
    struct sched_noderes_specs res;
};

static void balanced_free(void *self)
{
    struct balanced *b = self;

    if (!b)
        return;
    sched__noderes_specs_release(&b->res);
    free(b);
}

/* Every name once, every weight 1 (the weights are not used by the score). */
static void check_specs(struct sched_noderes_dec *d, const struct sched_noderes_specs *res)
{
    for (size_t i = 0; i < res->n; i++) {
        const struct sched_noderes_spec *sp = &res->v[i];
        size_t len = sched__noderes_dec_push_index(d, i), l2;

        for (size_t j = 0; j < i; j++) {
            if (!*sp->name || strcmp(res->v[j].name, sp->name))
                continue;
            struct strbuf v = STRBUF_INIT;
            strbuf_add_json_str(&v, sp->name);
            l2 = sched__noderes_dec_push(d, "name");
            field_error_add(d->errs, FIELD_DUPLICATE, d->path.buf, v.buf, "%s", "");
            sched__noderes_dec_pop(d, l2);
            strbuf_release(&v);
            break;
        }
        if (sp->weight != 1) {
            char val[32];
            (void)snprintf(val, sizeof(val), "%lld", (long long)sp->weight);
            l2 = sched__noderes_dec_push(d, "weight");
            field_error_add(d->errs, FIELD_INVALID, d->path.buf, val, "must be 1");
            sched__noderes_dec_pop(d, l2);
        }
        sched__noderes_dec_pop(d, len);
    }
}

static int balanced_init(const cJSON *args, const char *path, struct sched_handle *h,
                         void **ret_self, struct field_errors *errs)
{
    static const char *const keys[] = {"apiVersion", "kind", "resources", NULL};
    struct balanced *b = xcalloc(1, sizeof(*b));
    size_t before = field_errors_count(errs);
    const cJSON *res = NULL;
    struct sched_noderes_dec d;
    size_t len;

    (void)h;
    sched__noderes_dec_init(&d, path, errs);
    if (args && !cJSON_IsNull(args) && sched__noderes_check_object(&d, args, keys))
        res = sched__noderes_member(args, "resources");
    len = sched__noderes_dec_push(&d, "resources");
    (void)sched__noderes_specs_decode(&d, res, &b->res);
    check_specs(&d, &b->res);
    sched__noderes_dec_pop(&d, len);
    sched__noderes_dec_release(&d);
    if (field_errors_count(errs) != before) {
        balanced_free(b);
        return -EINVAL;
    }
    *ret_self = b;
    return 0;
}

/*
 * balancedResourceScorer: score = (1 - std) * 100 truncated, std over the fractions
 * requested/allocatable (capped at 1) of the counted resources; |f1 - f2| / 2 for two, the
 * population standard deviation for more, 0 for fewer.
 */
/* One node's score (balanced_allocation.go balancedResourceScorer). */
static inline int64_t balanced_node_score(const struct balanced *b, const struct sched_pod *pod,
                                          const struct sched_node_info *ni)
{
    double fr[SCHED_RES_MAX], total = 0, std = 0;
    size_t n = 0;

    /* Names are unique (validated), so at most one fraction per resource index. */
    for (size_t i = 0; i < b->res.n && n < ARRAY_SIZE(fr); i++) {
        int64_t alloc, req;
        double f;

        if (!sched__noderes_alloc_req(&b->res.v[i], pod, ni, true, &alloc, &req))
            continue;
        f = (double)req / (double)alloc;
        if (f > 1)
            f = 1;
        total += f;
        fr[n++] = f;
    }
    if (n == 2) {
        std = fabs((fr[0] - fr[1]) / 2);
    } else if (n > 2) {
        double mean = total / (double)n, sum = 0;
        for (size_t i = 0; i < n; i++)
            sum = sum + (fr[i] - mean) * (fr[i] - mean);
        std = sqrt(sum / (double)n);
    }
    return (int64_t)((1 - std) * (double)SCHED_MAX_NODE_SCORE);
}

static enum sched_code balanced_score(void *self, struct sched_cycle *cs,
                                      const struct sched_pod *pod, const struct sched_node_info *ni,
                                      int64_t *ret_score, struct sched_status *st)
{
    (void)cs;
    if (!ni->node)
        return sched_status_set(st, SCHED_ERROR, "node not found");
    *ret_score = balanced_node_score(self, pod, ni);
    return SCHED_SUCCESS;
}

static enum sched_code balanced_score_nodes(void *self, struct sched_cycle *cs,
                                            const struct sched_pod *pod, struct sched_node_score *v,
                                            size_t n, struct sched_status *st)
{
    const struct balanced *b = self;

    (void)cs;
    for (size_t i = 0; i < n; i++) {
        if (!v[i].ni->node)
            return sched_status_set(st, SCHED_ERROR, "node not found");
        v[i].score = balanced_node_score(b, pod, v[i].ni);
    }
    return SCHED_SUCCESS;
}

/* PreScore: upstream computes the pod's requests here; the decoded pod holds them already. */
static enum sched_code balanced_pre_score(void *self, struct sched_cycle *cs,
                                          const struct sched_pod *pod,
                                          struct sched_node_info *const *nodes, size_t n,
                                          struct sched_status *st)
{
    (void)self;
    (void)cs;
    (void)pod;
    (void)nodes;
    (void)n;
    (void)st;
    return SCHED_SUCCESS;
}

/* balanced_allocation.go EventsToRegister. */
static const struct sched_event_reg balanced_events[] = {
    {"Pod", SCHED_ACT_DELETE},
    {"Node", SCHED_ACT_ADD | SCHED_ACT_UPDATE},
    {NULL, 0},
};

const struct sched_plugin sched_plugin_balanced_allocation = {
    .name = "NodeResourcesBalancedAllocation",
    .args_kind = "NodeResourcesBalancedAllocationArgs",
    .default_weight = 1,
    .events = balanced_events,
    .init = balanced_init,
    .free = balanced_free,
    .pre_score = balanced_pre_score,
    .score = balanced_score,
    .score_nodes = balanced_score_nodes,
};
