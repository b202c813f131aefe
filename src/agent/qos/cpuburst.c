/* CPU burst (cpuburst.h). */
#include "agent/qos/cpuburst.h"

#include <string.h>

#include "agent/qos/qos-int.h"
#include "base/base.h"

bool qos_cpuburst_enabled(enum qos_burst_policy p)
{
    return p == QOS_BURST_AUTO || p == QOS_BURST_CPU_BURST_ONLY;
}

bool qos_cfs_quota_burst_enabled(enum qos_burst_policy p)
{
    return p == QOS_BURST_AUTO || p == QOS_BURST_CFS_QUOTA_BURST_ONLY;
}

bool qos_cpuburst_pod_eligible(const struct qos_pod *p)
{
    return p->active && p->qos_label != API_QOS_LSR && p->qos_label != API_QOS_LSE &&
           p->qos_label != API_QOS_BE;
}

int qos_cpuburst_pod_config(const struct qos_cpu_burst *node, const char *annotation,
                            struct qos_cpu_burst *ret)
{
    struct qos_cpu_burst merged = *node;
    cJSON *doc = NULL;
    int r;

    *ret = *node;
    if (!annotation)
        return 0;
    r = qos__json_parse(annotation, &doc);
    if (r < 0)
        return r == -ENOMEM ? r : -EINVAL;
    /* The annotation decodes into a *CPUBurstConfig: null is "no config", not an error. */
    if (!cJSON_IsNull(doc) && qos_cpu_burst_merge(doc, &merged, NULL) == 0)
        *ret = merged;
    else if (!cJSON_IsNull(doc))
        r = -EINVAL;
    cJSON_Delete(doc);
    return r;
}

int64_t qos_cpuburst_container_burst_us(const struct qos_cpu_burst *cfg, int64_t limit_milli)
{
    double cores;

    if (!qos_cpuburst_enabled(cfg->policy) || limit_milli <= 0)
        return 0;
    cores = ((double)limit_milli / 1000) * ((double)cfg->cpu_burst_percent / 100);
    return (int64_t)(cores * QOS_CFS_PERIOD_US);
}

int64_t qos_cpuburst_pod_burst_us(const struct qos_cpu_burst *cfg, const struct qos_pod *p)
{
    int64_t sum = 0;

    for (size_t i = 0; i < p->ncontainers; i++) {
        const struct qos_container *c = &p->containers[i];

        if (c->id && *c->id)
            sum += qos_cpuburst_container_burst_us(cfg, c->limits.v[QOS_RES_CPU]);
    }
    return sum;
}

int64_t qos_cpuburst_base_quota(int64_t limit_milli)
{
    int64_t q;

    if (limit_milli <= 0)
        return -1;
    q = limit_milli * QOS_CFS_PERIOD_US / 1000;
    return q < QOS_BURST_MIN_QUOTA ? QOS_BURST_MIN_QUOTA : q;
}

int64_t qos_cpuburst_ceil_quota(int64_t base, const struct qos_cpu_burst *cfg)
{
    if (cfg->cfs_quota_burst_percent > 100)
        return (int64_t)((double)base * (double)cfg->cfs_quota_burst_percent / 100);
    return base;
}

enum qos_burst_node_state qos_cpuburst_node_state(const struct qos_share_pool_input *in,
                                                  double *ret_ratio)
{
    double total = (double)in->ncpus, usage = in->node_usage, ratio = 1.0;
    double threshold = (double)in->threshold_percent / 100;

    if (ret_ratio)
        *ret_ratio = 0;
    if (!in->has_node_usage || in->ncpus == 0)
        return QOS_BURST_NODE_UNKNOWN;
    for (size_t i = 0; i < in->npods; i++) {
        const struct qos_pod *p = &in->pods[i];
        bool exclusive = p->qos_label == API_QOS_LSE || p->qos_label == API_QOS_LSR;

        if (exclusive)
            total -= (double)p->requests.v[QOS_RES_CPU] / 1000;
        if (p->has_cpu_usage && (exclusive || p->qos_label == API_QOS_BE))
            usage -= p->cpu_usage;
    }
    if (total > 0)
        ratio = usage / total;
    if (ret_ratio)
        *ret_ratio = ratio;
    if (ratio >= threshold)
        return QOS_BURST_NODE_OVERLOAD;
    if (ratio >= threshold * QOS_BURST_COOLING_RATIO)
        return QOS_BURST_NODE_COOLING;
    return QOS_BURST_NODE_IDLE;
}

enum qos_burst_op qos_cpuburst_container_op(const struct qos_cpu_burst *cfg, bool limiter_allows,
                                            bool has_throttled, double throttled_last)
{
    if (!qos_cfs_quota_burst_enabled(cfg->policy))
        return QOS_BURST_OP_RESET;
    if (!limiter_allows)
        return QOS_BURST_OP_SCALE_DOWN;
    if (!has_throttled)
        return QOS_BURST_OP_REMAIN;
    return throttled_last > 0 ? QOS_BURST_OP_SCALE_UP : QOS_BURST_OP_REMAIN;
}

enum qos_burst_op qos_cpuburst_node_op(enum qos_burst_node_state state, enum qos_burst_op op)
{
    if (state == QOS_BURST_NODE_OVERLOAD &&
        (op == QOS_BURST_OP_SCALE_UP || op == QOS_BURST_OP_REMAIN))
        return QOS_BURST_OP_SCALE_DOWN;
    if ((state == QOS_BURST_NODE_COOLING || state == QOS_BURST_NODE_UNKNOWN) &&
        op == QOS_BURST_OP_SCALE_UP)
        return QOS_BURST_OP_REMAIN;
    return op;
}

int64_t qos_cpuburst_target_quota(enum qos_burst_op op, int64_t current, int64_t base, int64_t ceil)
{
    int64_t target = current;

    if (op == QOS_BURST_OP_SCALE_UP)
        target = (int64_t)((double)current * QOS_BURST_INCREASE_STEP);
    else if (op == QOS_BURST_OP_SCALE_DOWN)
        target = (int64_t)((double)current * QOS_BURST_DECREASE_STEP);
    else if (op == QOS_BURST_OP_RESET)
        target = base;
    if (target > ceil)
        target = ceil;
    return target < base ? base : target;
}

size_t qos_cpuburst_quota_writes(int64_t container_current, int64_t container_target,
                                 int64_t pod_current, struct qos_quota_write ret[2])
{
    int64_t delta = container_target - container_current;
    struct qos_quota_write c = {false, container_target}, p = {true, pod_current + delta};
    size_t n = 0;

    if (delta == 0)
        return 0;
    if (delta < 0) {
        ret[n++] = c;
        if (pod_current > 0)
            ret[n++] = p;
    } else {
        if (pod_current > 0)
            ret[n++] = p;
        ret[n++] = c;
    }
    return n;
}

void qos_burst_limiter_init(struct qos_burst_limiter *l, int64_t period_s, int64_t percent,
                            double random01, int64_t now_ms)
{
    l->initialized = true;
    l->capacity = period_s * (percent - 100);
    l->tokens = (int64_t)((double)l->capacity * (random01 / 2));
    l->last_ms = now_ms;
    l->expire_ms = 2 * period_s * 1000;
}

bool qos_burst_limiter_allow(struct qos_burst_limiter *l, int64_t now_ms, int64_t usage_percent,
                             int64_t *ret_tokens)
{
    /* Go: int64(now.Sub(last).Seconds()), truncating toward zero. Go's is a monotonic
     * difference; ours is of the wall clock, so a step back counts as no time (a busy container
     * must not gain tokens from it). */
    int64_t elapsed = now_ms > l->last_ms ? (now_ms - l->last_ms) / 1000 : 0;

    if (usage_percent >= QOS_BURST_CONSUME_PERCENT)
        l->tokens -= (usage_percent - 100) * elapsed;
    else if (usage_percent < QOS_BURST_SAVE_PERCENT)
        l->tokens += (100 - usage_percent) * elapsed;
    if (l->tokens > l->capacity)
        l->tokens = l->capacity;
    if (l->tokens < -l->capacity)
        l->tokens = -l->capacity;
    l->last_ms = now_ms;
    if (ret_tokens)
        *ret_tokens = l->tokens;
    return l->tokens > 0;
}

bool qos_burst_limiter_expired(const struct qos_burst_limiter *l, int64_t now_ms)
{
    return now_ms - l->last_ms > l->expire_ms;
}

bool qos_cpuburst_limiter_allows(const struct qos_cpu_burst *cfg, struct qos_burst_limiter *l,
                                 double limit_cores, bool has_usage, double usage_cores,
                                 double random01, int64_t now_ms)
{
    int64_t period = cfg->cfs_quota_burst_period_seconds, pct = cfg->cfs_quota_burst_percent;
    double usage = has_usage ? usage_cores : limit_cores;

    if (period < 0)
        return true;
    if (pct < 100)
        return false;
    if (!l->initialized || l->capacity != period * (pct - 100))
        qos_burst_limiter_init(l, period, pct, random01, now_ms);
    return qos_burst_limiter_allow(l, now_ms, (int64_t)(usage / limit_cores * 100), NULL);
}

void qos_cpuburst_container(const struct qos_cpu_burst *cfg, enum qos_burst_node_state state,
                            struct qos_burst_limiter *limiter,
                            const struct qos_burst_container_input *in, double random01,
                            int64_t now_ms, struct qos_burst_container_result *ret)
{
    bool allows;

    memset(ret, 0, sizeof(*ret));
    ret->base = qos_cpuburst_base_quota(in->limit_milli);
    if (ret->base <= 0) {
        ret->skipped = true;
        return;
    }
    ret->ceil = qos_cpuburst_ceil_quota(ret->base, cfg);
    allows = qos_cpuburst_limiter_allows(cfg, limiter, (double)in->limit_milli / 1000,
                                         in->has_usage, in->usage_cores, random01, now_ms);
    ret->op = qos_cpuburst_node_op(
        state, qos_cpuburst_container_op(cfg, allows, in->has_throttled, in->throttled_last));
    ret->target = qos_cpuburst_target_quota(ret->op, in->current_quota, ret->base, ret->ceil);
    ret->nwrites =
        qos_cpuburst_quota_writes(in->current_quota, ret->target, in->pod_quota, ret->writes);
}
