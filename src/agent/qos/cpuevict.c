/* CPU eviction decisions (cpuevict.h). */
#include "agent/qos/cpuevict.h"

#include <stdlib.h>
#include <string.h>

#include "agent/qos/qos-int.h"
#include "base/base.h"

#define PRIORITY_MID_VALUE_MAX 7999

bool qos_cpuevict_cooling(int64_t last_ms, int64_t now_ms)
{
    return now_ms - last_ms < QOS_CPU_EVICT_COOL_MS;
}

static int invalid(const char **why, const char *reason)
{
    if (why)
        *why = reason;
    return -EINVAL;
}

int qos_cpuevict_be_check(const struct qos_threshold *cfg, const char **why)
{
    const struct qos_opt *lo = &cfg->cpu_evict_be_satisfaction_lower_percent;
    const struct qos_opt *up = &cfg->cpu_evict_be_satisfaction_upper_percent;

    if (!lo->set || !up->set)
        return invalid(why, "cpuEvictBESatisfactionLowerPercent or "
                            "cpuEvictBESatisfactionUpperPercent is not set");
    if (lo->value > QOS_BE_CPU_SATISFACTION_LOWER_MAX || lo->value <= 0)
        return invalid(why, "cpuEvictBESatisfactionLowerPercent is not in (0, 60]");
    if (up->value >= QOS_BE_CPU_SATISFACTION_UPPER_MAX || up->value <= 0)
        return invalid(why, "cpuEvictBESatisfactionUpperPercent is not in (0, 100)");
    if (up->value < lo->value)
        return invalid(why, "cpuEvictBESatisfactionUpperPercent is below the lower percent");
    return 0;
}

int64_t qos_cpuevict_window_seconds(int64_t collect_interval_s, const struct qos_threshold *cfg)
{
    const struct qos_opt *w = &cfg->cpu_evict_time_window_seconds;

    return w->set && w->value > collect_interval_s ? w->value : collect_interval_s;
}

bool qos_cpuevict_samples_valid(int64_t window_s, int64_t collect_interval_s, int64_t count)
{
    return count * collect_interval_s >= window_s / 3;
}

bool qos_cpuevict_usage_high_enough(double usage, double limit, const struct qos_opt *threshold)
{
    int64_t pct = threshold && threshold->set ? threshold->value : QOS_BE_CPU_USAGE_THRESHOLD;

    if (limit <= 0)
        return false;
    if (limit < 1000)
        return true;
    return usage / limit >= (double)pct / 100;
}

int64_t qos_cpuevict_release_by_satisfaction(double request, double limit, int64_t lower,
                                             int64_t upper)
{
    double satisfaction, gap;

    if (request <= 0)
        return 0;
    satisfaction = limit / request;
    if (satisfaction > (double)lower / 100)
        return 0;
    gap = (double)upper / 100 - satisfaction;
    if (gap <= 0)
        return 0;
    return (int64_t)(request * gap);
}

double qos_cpuevict_be_allocatable(const struct qos_node *node)
{
    int64_t v = node->allocatable.v[QOS_RES_BATCH_CPU];

    if (!(node->allocatable_present & (1u << QOS_RES_BATCH_CPU)) || v < 0)
        return -1;
    return v == 0 ? 1 : (double)v;
}

int64_t qos_cpuevict_be_release(const struct qos_threshold *cfg, const struct qos_node *node,
                                const struct qos_be_cpu_input *in)
{
    bool by_alloc = cfg->cpu_evict_policy == QOS_EVICT_BY_ALLOCATABLE;
    double alloc = qos_cpuevict_be_allocatable(node);
    double avg_limit = by_alloc ? alloc : in->avg.real_limit;
    double cur_limit = by_alloc ? alloc : in->current.real_limit;
    const struct qos_opt *thr = &cfg->cpu_evict_be_usage_threshold_percent;
    int64_t lower = cfg->cpu_evict_be_satisfaction_lower_percent.value;
    int64_t upper = cfg->cpu_evict_be_satisfaction_upper_percent.value;
    int64_t by_avg, by_cur;

    if (!qos_cpuevict_samples_valid(in->window_s, in->collect_interval_s, in->count))
        return 0;
    if (!qos_cpuevict_usage_high_enough(in->avg.usage, avg_limit, thr))
        return 0;
    by_avg = qos_cpuevict_release_by_satisfaction(in->avg.request, avg_limit, lower, upper);
    if (by_avg <= 0)
        return 0;
    if (!qos_cpuevict_usage_high_enough(in->current.usage, cur_limit, thr))
        return 0;
    /* Requests and limits change rarely: equal ones need no second computation. */
    if (in->current.request == in->avg.request && cur_limit == avg_limit)
        return by_avg;
    by_cur = qos_cpuevict_release_by_satisfaction(in->current.request, cur_limit, lower, upper);
    if (by_cur <= 0)
        return 0;
    return by_cur < by_avg ? by_cur : by_avg;
}

static int cmp_be(const void *pa, const void *pb)
{
    const struct qos_evict_victim *a = pa, *b = pb;

    if (!a->pod->has_priority || !b->pod->has_priority || a->pod->priority == b->pod->priority)
        return qos__cmp_double(b->usage_ratio, a->usage_ratio);
    return qos__cmp_i64(a->pod->priority, b->pod->priority);
}

size_t qos_cpuevict_be_victims(const struct qos_pod *pods, size_t npods,
                               struct qos_evict_victim *ret)
{
    size_t n = 0;

    for (size_t i = 0; i < npods; i++) {
        const struct qos_pod *p = &pods[i];
        struct qos_evict_victim *v = &ret[n];

        if (p->qos_label != API_QOS_BE ||
            !qos_evict_policy_allows(p->eviction_policy, QOS_FEATURE_BE_CPU_EVICT))
            continue;
        memset(v, 0, sizeof(*v));
        v->pod = p;
        v->used = p->has_cpu_usage ? (int64_t)(p->cpu_usage * 1000) : 0;
        v->request = qos_pod_sum_requests(p, QOS_RES_BATCH_CPU);
        if (v->request > 0)
            v->usage_ratio = (double)v->used / (double)v->request;
        v->priority = qos_pod_priority_value(p);
        v->label_priority = p->has_sub_priority ? p->sub_priority : v->priority;
        n++;
    }
    qos__sort(ret, n, sizeof(*ret), cmp_be);
    return n;
}

int qos_cpuevict_usage_check(const struct qos_threshold *cfg, const char **why)
{
    const struct qos_opt *thr = &cfg->cpu_evict_threshold_percent;
    int64_t lower;

    if (!thr->set)
        return invalid(why, "cpuEvictThresholdPercent is not set");
    if (thr->value < 0)
        return invalid(why, "cpuEvictThresholdPercent is negative");
    lower = cfg->cpu_evict_lower_percent.set ? cfg->cpu_evict_lower_percent.value
                                             : thr->value - QOS_CPU_RELEASE_BUFFER_PERCENT;
    if (lower >= thr->value)
        return invalid(why, "cpuEvictLowerPercent is not below cpuEvictThresholdPercent");
    if (!cfg->evict_enabled_priority_threshold.set)
        return invalid(why, "evictEnabledPriorityThreshold is not set");
    return 0;
}

int qos_cpuevict_usage_release(const struct qos_threshold *cfg, int64_t capacity_milli,
                               double avg_node_cores, struct qos_usage_release *ret)
{
    int64_t thr = cfg->cpu_evict_threshold_percent.value;

    memset(ret, 0, sizeof(*ret));
    ret->threshold_percent = thr;
    ret->lower_percent = cfg->cpu_evict_lower_percent.set ? cfg->cpu_evict_lower_percent.value
                                                          : thr - QOS_CPU_RELEASE_BUFFER_PERCENT;
    if (capacity_milli <= 0)
        return 0;
    ret->used_percent = (int64_t)(avg_node_cores * 1000) * 100 / capacity_milli;
    if (ret->used_percent < thr)
        return 0;
    ret->release = capacity_milli * (ret->used_percent - ret->lower_percent) / 100;
    return 1;
}

size_t qos_cpuevict_victims(const struct qos_pod *pods, size_t npods, int32_t priority_threshold,
                            bool by_request, struct qos_evict_victim *ret)
{
    const char *feature = by_request ? QOS_FEATURE_CPU_ALLOCATABLE_EVICT : QOS_FEATURE_CPU_EVICT;
    size_t n = 0;

    for (size_t i = 0; i < npods; i++) {
        const struct qos_pod *p = &pods[i];
        struct qos_evict_victim *v = &ret[n];
        enum qos_res name;

        if (!qos__victim_init(p, priority_threshold, feature, p->has_cpu_usage, v))
            continue;
        v->used = (int64_t)(p->cpu_usage * 1000);
        v->request = by_request ? qos_pod_class_request(p, QOS_RES_CPU, &name)
                                : qos_pod_sum_requests(p, QOS_RES_BATCH_CPU);
        n++;
    }
    qos__victims_sort(ret, n, by_request);
    return n;
}

int qos_cpuevict_allocatable_check(const struct qos_threshold *cfg, const char **why)
{
    const struct qos_opt *thr = &cfg->cpu_allocatable_evict_threshold_percent;
    int64_t lower = cfg->cpu_allocatable_evict_lower_percent.set
                        ? cfg->cpu_allocatable_evict_lower_percent.value
                        : 0;

    if (!thr->set)
        return invalid(why, "cpuAllocatableEvictThresholdPercent is not set");
    if (thr->value < 0)
        return invalid(why, "cpuAllocatableEvictThresholdPercent is negative");
    if (lower >= thr->value)
        return invalid(why, "cpuAllocatableEvictLowerPercent is not below the threshold");
    if (!cfg->allocatable_evict_priority_threshold.set)
        return invalid(why, "allocatableEvictPriorityThreshold is not set");
    if (cfg->allocatable_evict_priority_threshold.value > PRIORITY_MID_VALUE_MAX)
        return invalid(why, "allocatableEvictPriorityThreshold is above 7999");
    return 0;
}

void qos_cpuevict_allocatable_release(const struct qos_threshold *cfg, const struct qos_node *node,
                                      const struct qos_pod *pods, size_t npods,
                                      struct qos_evict_task *task)
{
    int64_t lower = cfg->cpu_allocatable_evict_lower_percent.set
                        ? cfg->cpu_allocatable_evict_lower_percent.value
                        : 0;

    qos__allocatable_release(cfg->cpu_allocatable_evict_threshold_percent.value, lower,
                             cfg->allocatable_evict_priority_threshold.value, QOS_RES_CPU, node,
                             pods, npods, task);
    task->request_res = QOS_RES_CPU;
}

static bool any_positive(const struct qos_resources *r)
{
    for (int i = 0; i < QOS_RES_COUNT; i++)
        if (r->v[i] > 0)
            return true;
    return false;
}

/* Fills task t for feature f (0 BECPUEvict, 1 CPUEvict, 2 CPUAllocatableEvict); false: skip. */
static bool build(const struct qos_cpuevict_input *in, int f, struct qos_evict_task *t,
                  struct qos_evict_victim *v, const char **why)
{
    const struct qos_threshold *cfg = in->cfg;
    struct qos_usage_release ur;

    switch (f) {
    case 0:
        t->feature = QOS_FEATURE_BE_CPU_EVICT;
        if (qos_cpuevict_be_check(cfg, why) < 0)
            return false;
        if (!in->be) {
            *why = "no BE CPU metrics";
            return false;
        }
        t->target = QOS_RELEASE_BATCH_REQUEST;
        t->release.v[QOS_RES_CPU] = qos_cpuevict_be_release(cfg, in->node, in->be);
        if (!any_positive(&t->release)) {
            *why = "nothing to release";
            return false;
        }
        t->nvictims = qos_cpuevict_be_victims(in->pods, in->npods, v);
        return true;
    case 1:
        t->feature = QOS_FEATURE_CPU_EVICT;
        if (qos_cpuevict_usage_check(cfg, why) < 0)
            return false;
        if (!in->has_node_usage) {
            *why = "no node CPU usage sample";
            return false;
        }
        if (qos_cpuevict_usage_release(cfg, in->node->capacity.v[QOS_RES_CPU], in->avg_node_cores,
                                       &ur) == 0 ||
            ur.release <= 0) {
            *why = "node CPU usage is below the threshold";
            return false;
        }
        t->target = QOS_RELEASE_USED;
        t->used_res = QOS_RES_CPU;
        t->release.v[QOS_RES_CPU] = ur.release;
        t->nvictims = qos_cpuevict_victims(
            in->pods, in->npods, (int32_t)cfg->evict_enabled_priority_threshold.value, false, v);
        return true;
    default:
        t->feature = QOS_FEATURE_CPU_ALLOCATABLE_EVICT;
        if (qos_cpuevict_allocatable_check(cfg, why) < 0)
            return false;
        t->target = QOS_RELEASE_REQUEST;
        qos_cpuevict_allocatable_release(cfg, in->node, in->pods, in->npods, t);
        if (!any_positive(&t->release)) {
            *why = "nothing to release";
            return false;
        }
        t->nvictims = qos_cpuevict_victims(
            in->pods, in->npods, (int32_t)cfg->allocatable_evict_priority_threshold.value, true, v);
        return true;
    }
}

int qos_cpuevict_plan(const struct qos_cpuevict_input *in, struct qos_cpuevict_plan *ret)
{
    struct qos_cpuevict_plan p;
    size_t used = 0;

    memset(&p, 0, sizeof(p));
    for (size_t i = 0; i < ARRAY_SIZE(p.skipped); i++)
        p.skipped[i] = "";
    if (in->node->capacity.v[QOS_RES_CPU] <= 0) {
        *ret = p;
        return -EINVAL;
    }
    p.storage = ccalloc(3 * (in->npods ? in->npods : 1), sizeof(*p.storage));
    if (!p.storage)
        return -ENOMEM;
    for (int f = 0; f < 3; f++) {
        bool gates[] = {in->be_cpu_evict, in->cpu_evict, in->cpu_allocatable_evict};
        struct qos_evict_task *t = &p.tasks[p.ntasks];

        if (!gates[f] || !in->cfg->enable)
            continue;
        memset(t, 0, sizeof(*t));
        t->victims = p.storage + used;
        if (!build(in, f, t, p.storage + used, &p.skipped[f]))
            continue;
        used += t->nvictims;
        p.ntasks++;
    }
    *ret = p;
    return 0;
}

void qos_cpuevict_plan_release(struct qos_cpuevict_plan *p)
{
    FREE_AND_NULL(p->storage);
    p->ntasks = 0;
}
