/*
 * NodeResourcesFit (reference scheduler.md 5.1; kube-scheduler 1.30
 * pkg/scheduler/framework/plugins/noderesources/fit.go, least_allocated.go, most_allocated.go,
 * requested_to_capacity_ratio.go, helper/shape_score.go; args validated as
 * apis/config/validation/validation_pluginargs.go ValidateNodeResourcesFitArgs, defaulted as
 * apis/config/v1/defaults.go SetDefaults_NodeResourcesFitArgs).
 *
 * Filter keeps a pod off nodes whose allocatable, minus what the pods already there request,
 * cannot hold the pod's requests: this is also what keeps Koordinator's batch pods
 * (kubernetes.io/batch-cpu, kubernetes.io/batch-memory) within a node's batch allocatable. Score
 * ranks nodes by how full they would be, under one of three strategies.
 *
 * Upstream's PreFilter only caches PodRequests in the cycle state and its PreScore the per
 * resource requests; here the decoded pod already carries both (types.h sched_pod.req,
 * nonzero_cpu/nonzero_mem) and is immutable, so Filter and Score read it directly and the plugin
 * keeps no cycle state.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/field.h"
#include "api/labels.h"
#include "base/base.h"
#include "sched/framework/framework.h"
#include "sched/plugins/noderesources/resource_allocation.h"
#include "sched/plugins/registry.h"

/* config.MaxCustomPriorityScore: the top of a RequestedToCapacityRatio shape's score axis. */
#define FIT_MAX_CUSTOM_PRIORITY_SCORE 10
#define FIT_MAX_UTILIZATION           100

enum fit_strategy {
    FIT_LEAST_ALLOCATED,
    FIT_MOST_ALLOCATED,
    FIT_REQUESTED_TO_CAPACITY_RATIO,
};

static const char *const fit_strategy_names[] = {
    [FIT_LEAST_ALLOCATED] = "LeastAllocated",
    [FIT_MOST_ALLOCATED] = "MostAllocated",
    [FIT_REQUESTED_TO_CAPACITY_RATIO] = "RequestedToCapacityRatio",
};

/* helper.FunctionShapePoint, score already scaled to 0..100. */
struct fit_point {
    int64_t utilization;
    int64_t score;
};

struct fit {
    char **ignored; /* ignoredResources */
    size_t nignored;
    char **groups; /* ignoredResourceGroups */
    size_t ngroups;
    enum fit_strategy strategy;
    struct sched_noderes_specs res;
    struct fit_point *shape; /* RequestedToCapacityRatio only */
    size_t nshape;
};

static void fit_free(void *self)
{
    struct fit *f = self;

    if (!f)
        return;
    for (size_t i = 0; i < f->nignored; i++)
        free(f->ignored[i]);
    free(f->ignored);
    for (size_t i = 0; i < f->ngroups; i++)
        free(f->groups[i]);
    free(f->groups);
    sched__noderes_specs_release(&f->res);
    free(f->shape);
    free(f);
}

/* ---- args ---- */

/* Decodes ignoredResources / ignoredResourceGroups: qualified names (metav1validation
 * ValidateLabelName), groups also without '/'. */
static void decode_names(struct sched_noderes_dec *d, const cJSON *v, bool groups, char ***ret,
                         size_t *ret_n)
{
    const cJSON *e;
    size_t i = 0;

    if (!v)
        return;
    if (!cJSON_IsArray(v)) {
        sched__noderes_invalid(d, v, "must be an array");
        return;
    }
    cJSON_ArrayForEach(e, v)
    {
        size_t len = sched__noderes_dec_push_index(d, i++);
        struct strbuf why = STRBUF_INIT;

        if (!cJSON_IsString(e)) {
            sched__noderes_invalid(d, e, "must be a string");
            sched__noderes_dec_pop(d, len);
            continue;
        }
        if (groups && strchr(e->valuestring, '/'))
            sched__noderes_invalid(d, e, "resource group name can't contain '/'");
        /* ValidateLabelName: one error per message of IsQualifiedName (joined with "; "). */
        if (labels_check_qualified_name(e->valuestring, &why) < 0) {
            for (char *m = why.buf, *sep; m; m = sep ? sep + 2 : NULL) {
                sep = strstr(m, "; ");
                if (sep)
                    *sep = '\0';
                sched__noderes_invalid(d, e, m);
            }
        }
        strbuf_release(&why);
        *ret = xrealloc(*ret, (*ret_n + 1) * sizeof(**ret));
        (*ret)[(*ret_n)++] = xstrdup(e->valuestring);
        sched__noderes_dec_pop(d, len);
    }
}

/* validateFunctionShape, after decoding the points; scores are scaled to MaxNodeScore. */
static void decode_shape(struct sched_noderes_dec *d, const cJSON *v, struct fit *f)
{
    static const char *const keys[] = {"utilization", "score", NULL};
    const cJSON *e;
    size_t i = 0, n;
    char why[64];

    if (v && !cJSON_IsArray(v)) {
        sched__noderes_invalid(d, v, "must be an array");
        return;
    }
    n = (size_t)cJSON_GetArraySize(v);
    if (n == 0) {
        field_error_add(d->errs, FIELD_REQUIRED, d->path.buf, NULL,
                        "at least one point must be specified");
        return;
    }
    f->shape = xcalloc(n, sizeof(*f->shape));
    cJSON_ArrayForEach(e, v)
    {
        size_t len = sched__noderes_dec_push_index(d, i);
        struct fit_point *p = &f->shape[i++];

        if (sched__noderes_check_object(d, e, keys)) {
            const cJSON *u = sched__noderes_member(e, "utilization");
            const cJSON *s = sched__noderes_member(e, "score");
            size_t l2;
            if (u) {
                l2 = sched__noderes_dec_push(d, "utilization");
                (void)sched__noderes_int(d, u, &p->utilization);
                sched__noderes_dec_pop(d, l2);
            }
            if (s) {
                l2 = sched__noderes_dec_push(d, "score");
                (void)sched__noderes_int(d, s, &p->score);
                sched__noderes_dec_pop(d, l2);
            }
        }
        sched__noderes_dec_pop(d, len);
    }
    f->nshape = n;
    for (i = 1; i < n; i++) {
        if (f->shape[i - 1].utilization >= f->shape[i].utilization) {
            size_t len = sched__noderes_dec_push_index(d, i);
            size_t l2 = sched__noderes_dec_push(d, "utilization");
            char val[32];
            (void)snprintf(val, sizeof(val), "%lld", (long long)f->shape[i].utilization);
            field_error_add(d->errs, FIELD_INVALID, d->path.buf, val,
                            "values must be sorted in increasing order");
            sched__noderes_dec_pop(d, l2);
            sched__noderes_dec_pop(d, len);
            break;
        }
    }
    for (i = 0; i < n; i++) {
        struct fit_point *p = &f->shape[i];
        size_t len = sched__noderes_dec_push_index(d, i);
        char val[32];
        size_t l2;

        if (p->utilization < 0 || p->utilization > FIT_MAX_UTILIZATION) {
            l2 = sched__noderes_dec_push(d, "utilization");
            (void)snprintf(val, sizeof(val), "%lld", (long long)p->utilization);
            (void)snprintf(why, sizeof(why), "not in valid range [%d, %d]", 0, FIT_MAX_UTILIZATION);
            field_error_add(d->errs, FIELD_INVALID, d->path.buf, val, "%s", why);
            sched__noderes_dec_pop(d, l2);
        }
        if (p->score < 0 || p->score > FIT_MAX_CUSTOM_PRIORITY_SCORE) {
            l2 = sched__noderes_dec_push(d, "score");
            (void)snprintf(val, sizeof(val), "%lld", (long long)p->score);
            (void)snprintf(why, sizeof(why), "not in valid range [%d, %d]", 0,
                           FIT_MAX_CUSTOM_PRIORITY_SCORE);
            field_error_add(d->errs, FIELD_INVALID, d->path.buf, val, "%s", why);
            sched__noderes_dec_pop(d, l2);
        }
        sched__noderes_dec_pop(d, len);
        /* requested_to_capacity_ratio.go: MaxNodeScore / MaxCustomPriorityScore. */
        p->score *= SCHED_MAX_NODE_SCORE / FIT_MAX_CUSTOM_PRIORITY_SCORE;
    }
}

/* validateResources: weights in (0, 100]. */
static void check_weights(struct sched_noderes_dec *d, const struct sched_noderes_specs *res)
{
    for (size_t i = 0; i < res->n; i++) {
        const struct sched_noderes_spec *sp = &res->v[i];
        size_t len, l2;
        char val[32];

        if (sp->weight > 0 && sp->weight <= 100)
            continue;
        len = sched__noderes_dec_push_index(d, i);
        l2 = sched__noderes_dec_push(d, "weight");
        (void)snprintf(val, sizeof(val), "%lld", (long long)sp->weight);
        field_error_add(d->errs, FIELD_INVALID, d->path.buf, val,
                        "resource weight of %s not in valid range (0, 100]", sp->name);
        sched__noderes_dec_pop(d, l2);
        sched__noderes_dec_pop(d, len);
    }
}

static void decode_strategy(struct sched_noderes_dec *d, const cJSON *ss, struct fit *f)
{
    static const char *const keys[] = {"type", "resources", "requestedToCapacityRatio", NULL};
    static const char *const rkeys[] = {"shape", NULL};
    const cJSON *type, *rtcr;
    bool is_rtcr = false;
    size_t len;

    if (!sched__noderes_check_object(d, ss, keys)) {
        (void)sched__noderes_specs_decode(d, NULL, &f->res);
        return;
    }
    type = sched__noderes_member(ss, "type");
    len = sched__noderes_dec_push(d, "type");
    if (type && !cJSON_IsString(type)) {
        sched__noderes_invalid(d, type, "must be a string");
    } else {
        const char *t = type ? type->valuestring : "";
        size_t i;
        for (i = 0; i < ARRAY_SIZE(fit_strategy_names); i++)
            if (!strcmp(t, fit_strategy_names[i]))
                break;
        if (i < ARRAY_SIZE(fit_strategy_names)) {
            f->strategy = (enum fit_strategy)i;
            is_rtcr = f->strategy == FIT_REQUESTED_TO_CAPACITY_RATIO;
        } else {
            struct strbuf v = STRBUF_INIT;
            strbuf_add_json_str(&v, t);
            /* field.NotSupported lists sets.List(supportedScoringStrategyTypes), sorted. */
            field_error_add(d->errs, FIELD_NOT_SUPPORTED, d->path.buf, v.buf,
                            "supported values: \"LeastAllocated\", \"MostAllocated\", "
                            "\"RequestedToCapacityRatio\"");
            strbuf_release(&v);
        }
    }
    sched__noderes_dec_pop(d, len);

    len = sched__noderes_dec_push(d, "resources");
    (void)sched__noderes_specs_decode(d, sched__noderes_member(ss, "resources"), &f->res);
    check_weights(d, &f->res);
    sched__noderes_dec_pop(d, len);

    rtcr = sched__noderes_member(ss, "requestedToCapacityRatio");
    len = sched__noderes_dec_push(d, "requestedToCapacityRatio");
    if (is_rtcr) {
        if (!rtcr) {
            field_error_add(d->errs, FIELD_REQUIRED, d->path.buf, NULL,
                            "must be specified when type is RequestedToCapacityRatio");
        } else if (sched__noderes_check_object(d, rtcr, rkeys)) {
            size_t l2 = sched__noderes_dec_push(d, "shape");
            decode_shape(d, sched__noderes_member(rtcr, "shape"), f);
            sched__noderes_dec_pop(d, l2);
        }
    } else if (rtcr) {
        field_error_add(d->errs, FIELD_FORBIDDEN, d->path.buf, NULL,
                        "must be nil when type is not RequestedToCapacityRatio");
    }
    sched__noderes_dec_pop(d, len);
}

static int fit_init(const cJSON *args, const char *path, struct sched_handle *h, void **ret_self,
                    struct field_errors *errs)
{
    static const char *const keys[] = {
        "apiVersion", "kind", "ignoredResources", "ignoredResourceGroups", "scoringStrategy", NULL};
    struct fit *f = xcalloc(1, sizeof(*f));
    size_t before = field_errors_count(errs);
    struct sched_noderes_dec d;
    const cJSON *ss = NULL;
    size_t len;

    (void)h;
    sched__noderes_dec_init(&d, path, errs);
    f->strategy = FIT_LEAST_ALLOCATED;
    if (args && !cJSON_IsNull(args) && sched__noderes_check_object(&d, args, keys)) {
        len = sched__noderes_dec_push(&d, "ignoredResources");
        decode_names(&d, sched__noderes_member(args, "ignoredResources"), false, &f->ignored,
                     &f->nignored);
        sched__noderes_dec_pop(&d, len);
        len = sched__noderes_dec_push(&d, "ignoredResourceGroups");
        decode_names(&d, sched__noderes_member(args, "ignoredResourceGroups"), true, &f->groups,
                     &f->ngroups);
        sched__noderes_dec_pop(&d, len);
        ss = sched__noderes_member(args, "scoringStrategy");
    }
    len = sched__noderes_dec_push(&d, "scoringStrategy");
    if (ss)
        decode_strategy(&d, ss, f);
    else /* SetDefaults_NodeResourcesFitArgs: LeastAllocated over cpu:1, memory:1. */
        (void)sched__noderes_specs_decode(&d, NULL, &f->res);
    sched__noderes_dec_pop(&d, len);
    sched__noderes_dec_release(&d);
    if (field_errors_count(errs) != before) {
        fit_free(f);
        return -EINVAL;
    }
    *ret_self = f;
    return 0;
}

/* ---- filter ---- */

/* v1helper.IsExtendedResourceName: only such names can be ignored by the args. */
static bool is_extended_resource(const char *name)
{
    char q[512];
    int n;

    if (!strchr(name, '/') || strstr(name, "kubernetes.io/") || !strncmp(name, "requests.", 9))
        return false;
    n = snprintf(q, sizeof(q), "requests.%s", name);
    if (n < 0 || (size_t)n >= sizeof(q))
        return false;
    return labels_check_qualified_name(q, NULL) == 0;
}

static bool fit_ignores(const struct fit *f, const char *name)
{
    const char *slash;

    if ((!f->nignored && !f->ngroups) || !is_extended_resource(name))
        return false;
    for (size_t i = 0; i < f->nignored; i++)
        if (!strcmp(f->ignored[i], name))
            return true;
    slash = strchr(name, '/');
    for (size_t i = 0; i < f->ngroups; i++)
        if (strlen(f->groups[i]) == (size_t)(slash - name) &&
            !strncmp(f->groups[i], name, (size_t)(slash - name)))
            return true;
    return false;
}

/* fit.go fitsRequest: every shortage is a reason; any reason makes the node Unschedulable. */
static enum sched_code fit_filter(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                  const struct sched_node_info *ni, struct sched_status *st)
{
    static const char *const fixed[] = {"cpu", "memory", "ephemeral-storage"};
    const struct fit *f = self;
    const struct sched_node *node = ni->node;
    int n;

    (void)cs;
    if (!node)
        return sched_status_set(st, SCHED_UNRESOLVABLE, "node(s) not found");
    if ((int64_t)ni->npods + 1 > (int64_t)ni->allowed_pods)
        sched_status_add(st, "Too many pods");
    if (pod->requests_nothing)
        goto out;
    /* cpu and memory from the NodeInfo's first line (framework.h), not the node's */
    if (pod->req.v[SCHED_RES_CPU] > 0 &&
        pod->req.v[SCHED_RES_CPU] > ni->alloc_cpu - ni->requested.v[SCHED_RES_CPU])
        sched_status_add(st, "Insufficient %s", fixed[SCHED_RES_CPU]);
    if (pod->req.v[SCHED_RES_MEMORY] > 0 &&
        pod->req.v[SCHED_RES_MEMORY] > ni->alloc_mem - ni->requested.v[SCHED_RES_MEMORY])
        sched_status_add(st, "Insufficient %s", fixed[SCHED_RES_MEMORY]);
    if (pod->req.v[SCHED_RES_EPHEMERAL] > 0 &&
        pod->req.v[SCHED_RES_EPHEMERAL] >
            node->allocatable.v[SCHED_RES_EPHEMERAL] - ni->requested.v[SCHED_RES_EPHEMERAL])
        sched_status_add(st, "Insufficient %s", fixed[SCHED_RES_EPHEMERAL]);
    n = sched_res_count();
    for (int i = SCHED_RES_FIRST_SCALAR; i < n; i++) {
        int64_t r = pod->req.v[i];
        const char *name;
        if (r == 0 || r <= node->allocatable.v[i] - ni->requested.v[i])
            continue;
        name = sched_res_name(i);
        if (!fit_ignores(f, name))
            sched_status_add(st, "Insufficient %s", name);
    }
    /* No node offered these when the pod was decoded: absent from allocatable is 0 here. */
    for (size_t i = 0; i < pod->nunoffered; i++)
        if (!fit_ignores(f, pod->unoffered[i]))
            sched_status_add(st, "Insufficient %s", pod->unoffered[i]);
out:
    if (!st->n)
        return SCHED_SUCCESS;
    st->code = SCHED_UNSCHEDULABLE;
    return SCHED_UNSCHEDULABLE;
}

/* ---- score ---- */

/* x * 100 / cap for 0 <= x <= cap without overflowing int64 (memory and storage are bytes). */
static int64_t fit_scaled(int64_t x, int64_t cap)
{
    if (x <= INT64_MAX / SCHED_MAX_NODE_SCORE)
        return x * SCHED_MAX_NODE_SCORE / cap;
    return (int64_t)(__extension__((unsigned __int128)x * SCHED_MAX_NODE_SCORE /
                                   (unsigned __int128)cap));
}

/* least_allocated.go leastRequestedScore. */
static int64_t least_requested(int64_t req, int64_t cap)
{
    if (cap == 0 || req > cap)
        return 0;
    return fit_scaled(cap - req, cap);
}

/* most_allocated.go mostRequestedScore: pods without requests count non-zero defaults and may
 * push req past cap. */
static int64_t most_requested(int64_t req, int64_t cap)
{
    if (cap == 0)
        return 0;
    if (req > cap)
        req = cap;
    return fit_scaled(req, cap);
}

/* helper/shape_score.go BuildBrokenLinearFunction (Go's integer division truncates toward zero,
 * as C's does, so descending segments round the same way). */
static int64_t broken_linear(const struct fit_point *s, size_t n, int64_t p)
{
    for (size_t i = 0; i < n; i++) {
        if (p <= s[i].utilization) {
            if (i == 0)
                return s[0].score;
            return s[i - 1].score + (s[i].score - s[i - 1].score) * (p - s[i - 1].utilization) /
                                        (s[i].utilization - s[i - 1].utilization);
        }
    }
    return s[n - 1].score;
}

/* requested_to_capacity_ratio.go resourceScoringFunction. */
static int64_t rtcr_resource_score(const struct fit *f, int64_t req, int64_t cap)
{
    if (cap == 0 || req > cap)
        return broken_linear(f->shape, f->nshape, FIT_MAX_UTILIZATION);
    return broken_linear(f->shape, f->nshape, fit_scaled(req, cap));
}

/*
 * resource_allocation.go score() with the strategy's scorer: LeastAllocated and MostAllocated
 * average every counted resource, weighted, with integer division (least_allocated.go,
 * most_allocated.go); RequestedToCapacityRatio counts only resources scoring above 0 and rounds
 * (requested_to_capacity_ratio.go buildRequestedToCapacityRatioScorerFunction).
 */
/* One node's score under strategy (a constant where inlined: the switch then drops out). */
static inline __attribute__((always_inline)) int64_t
fit_node_score(const struct fit *f, enum fit_strategy strategy, const struct sched_pod *pod,
               const struct sched_node_info *ni)
{
    int64_t sum = 0, wsum = 0;

    for (size_t i = 0; i < f->res.n; i++) {
        const struct sched_noderes_spec *sp = &f->res.v[i];
        int64_t alloc, req, s;

        if (!sched__noderes_alloc_req(sp, pod, ni, false, &alloc, &req))
            continue;
        switch (strategy) {
        case FIT_LEAST_ALLOCATED:
            s = least_requested(req, alloc);
            break;
        case FIT_MOST_ALLOCATED:
            s = most_requested(req, alloc);
            break;
        default:
            s = rtcr_resource_score(f, req, alloc);
            if (s <= 0)
                continue;
            break;
        }
        sum += s * sp->weight;
        wsum += sp->weight;
    }
    if (wsum == 0)
        return 0;
    if (strategy == FIT_REQUESTED_TO_CAPACITY_RATIO)
        return (2 * sum + wsum) / (2 * wsum); /* math.Round of a non-negative ratio */
    return sum / wsum;
}

static enum sched_code fit_score(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                 const struct sched_node_info *ni, int64_t *ret_score,
                                 struct sched_status *st)
{
    const struct fit *f = self;

    (void)cs;
    if (!ni->node)
        return sched_status_set(st, SCHED_ERROR, "node not found");
    *ret_score = fit_node_score(f, f->strategy, pod, ni);
    return SCHED_SUCCESS;
}

/* fit_score over n nodes, the strategy chosen once. */
#define FIT_SCORE_LOOP(strategy)                                                                   \
    for (size_t i = 0; i < n; i++) {                                                               \
        if (!v[i].ni->node)                                                                        \
            return sched_status_set(st, SCHED_ERROR, "node not found");                            \
        v[i].score = fit_node_score(f, strategy, pod, v[i].ni);                                    \
    }

static enum sched_code fit_score_nodes(void *self, struct sched_cycle *cs,
                                       const struct sched_pod *pod, struct sched_node_score *v,
                                       size_t n, struct sched_status *st)
{
    const struct fit *f = self;

    (void)cs;
    switch (f->strategy) {
    case FIT_LEAST_ALLOCATED:
        FIT_SCORE_LOOP(FIT_LEAST_ALLOCATED)
        break;
    case FIT_MOST_ALLOCATED:
        FIT_SCORE_LOOP(FIT_MOST_ALLOCATED)
        break;
    default:
        FIT_SCORE_LOOP(FIT_REQUESTED_TO_CAPACITY_RATIO)
        break;
    }
    return SCHED_SUCCESS;
}

/*
 * PreFilter and PreScore: upstream computes the pod's requests into the cycle state here; the
 * decoded pod already holds them, so both only let the plugin sit at those points, where a
 * configuration may name it.
 */
static enum sched_code fit_pre_filter(void *self, struct sched_cycle *cs,
                                      const struct sched_pod *pod,
                                      struct sched_prefilter_result *res, struct sched_status *st)
{
    (void)self;
    (void)cs;
    (void)pod;
    (void)res;
    (void)st;
    return SCHED_SUCCESS;
}

static enum sched_code fit_pre_score(void *self, struct sched_cycle *cs,
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

/* fit.go EventsToRegister (InPlacePodVerticalScaling is off in 1.30: no Pod Update). */
static const struct sched_event_reg fit_events[] = {
    {"Pod", SCHED_ACT_DELETE},
    {"Node", SCHED_ACT_ADD | SCHED_ACT_UPDATE},
    {NULL, 0},
};

const struct sched_plugin sched_plugin_node_resources_fit = {
    .name = "NodeResourcesFit",
    .args_kind = "NodeResourcesFitArgs",
    .default_weight = 1,
    .events = fit_events,
    .init = fit_init,
    .free = fit_free,
    .pre_filter = fit_pre_filter,
    .filter = fit_filter,
    .pre_score = fit_pre_score,
    .score = fit_score,
    .score_nodes = fit_score_nodes,
};
