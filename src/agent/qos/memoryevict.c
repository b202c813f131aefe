/* Memory eviction decisions (memoryevict.h). */
#include "agent/qos/memoryevict.h"

#include <stdlib.h>
#include <string.h>

#include "agent/qos/qos-int.h"
#include "base/base.h"

/* PriorityMidValueMax: the highest priority an allocatable evictor may touch. */
#define PRIORITY_MID_VALUE_MAX 7999

bool qos_memevict_cooling(bool has_last, int64_t last_evict_ms, int64_t now_ms)
{
    return has_last && now_ms < last_evict_ms + QOS_MEMORY_EVICT_COOL_MS;
}

static int invalid(const char **why, const char *reason)
{
    if (why)
        *why = reason;
    return -EINVAL;
}

int qos_memevict_usage_release(const struct qos_threshold *cfg, bool memory_evict, int64_t capacity,
                               double node_used, struct qos_usage_release *ret, const char **why)
{
    const struct qos_opt *thr = &cfg->memory_evict_threshold_percent;
    int64_t lower;

    if (!thr->set)
        return invalid(why, "memoryEvictThresholdPercent is not set");
    if (thr->value < 0)
        return invalid(why, "memoryEvictThresholdPercent is negative");
    lower = cfg->memory_evict_lower_percent.set ? cfg->memory_evict_lower_percent.value
                                                : thr->value - QOS_MEMORY_RELEASE_BUFFER_PERCENT;
    if (lower >= thr->value)
        return invalid(why, "memoryEvictLowerPercent is not below memoryEvictThresholdPercent");
    if (memory_evict && !cfg->evict_enabled_priority_threshold.set)
        return invalid(why, "evictEnabledPriorityThreshold is not set");
    if (capacity <= 0)
        return invalid(why, "node memory capacity is not positive");
    memset(ret, 0, sizeof(*ret));
    ret->threshold_percent = thr->value;
    ret->lower_percent = lower;
    ret->used_percent = (int64_t)node_used * 100 / capacity;
    if (ret->used_percent < thr->value)
        return 0;
    ret->release = capacity * (ret->used_percent - lower) / 100;
    return 1;
}

int qos_memevict_allocatable_check(const struct qos_threshold *cfg, const char **why)
{
    const struct qos_opt *thr = &cfg->memory_allocatable_evict_threshold_percent;
    int64_t lower = cfg->memory_allocatable_evict_lower_percent.set
                        ? cfg->memory_allocatable_evict_lower_percent.value
                        : 0;

    if (!thr->set)
        return invalid(why, "memoryAllocatableEvictThresholdPercent is not set");
    if (thr->value < 0)
        return invalid(why, "memoryAllocatableEvictThresholdPercent is negative");
    if (lower >= thr->value)
        return invalid(why, "memoryAllocatableEvictLowerPercent is not below the threshold");
    if (!cfg->allocatable_evict_priority_threshold.set)
        return invalid(why, "allocatableEvictPriorityThreshold is not set");
    if (cfg->allocatable_evict_priority_threshold.value > PRIORITY_MID_VALUE_MAX)
        return invalid(why, "allocatableEvictPriorityThreshold is above 7999");
    return 0;
}

/* The priority class a batch/mid resource name stands for (ReverseResourceNameMap). */
static enum api_priority class_of_res(enum qos_res r)
{
    switch (r) {
    case QOS_RES_BATCH_CPU:
    case QOS_RES_BATCH_MEMORY:
        return API_PRIORITY_BATCH;
    case QOS_RES_MID_CPU:
    case QOS_RES_MID_MEMORY:
        return API_PRIORITY_MID;
    default:
        return API_PRIORITY_NONE;
    }
}

void qos__allocatable_release(int64_t threshold, int64_t lower, int64_t priority_threshold,
                              int want, const struct qos_node *node, const struct qos_pod *pods,
                              size_t npods, struct qos_evict_task *task)
{
    struct qos_resources requested;
    uint32_t seen = 0;

    memset(&requested, 0, sizeof(requested));
    for (size_t i = 0; i < npods; i++) {
        enum qos_res name;
        int64_t v;

        if (qos_pod_priority_value(&pods[i]) > priority_threshold)
            continue;
        v = qos_pod_class_request(&pods[i], want, &name);
        requested.v[name] += v;
        seen |= 1u << name;
    }
    memset(&task->release, 0, sizeof(task->release));
    task->request_classes = 0;
    for (int r = 0; r < QOS_RES_COUNT; r++) {
        bool entry = false;

        if (!(seen & (1u << r)))
            continue;
        if (!(node->allocatable_present & (1u << r)) || node->allocatable.v[r] == 0) {
            task->release.v[r] = requested.v[r];
            entry = true;
        } else {
            /* float32 throughout, as upstream computes it. */
            float rq = (float)requested.v[r], alloc = (float)node->allocatable.v[r];

            if (rq / alloc > (float)threshold / 100) {
                task->release.v[r] = (int64_t)((rq / alloc - (float)lower / 100) * alloc);
                entry = true;
            }
        }
        /* Upstream marks the class of every name it put in the release list, zero or not. */
        if (entry && class_of_res((enum qos_res)r) != API_PRIORITY_NONE)
            task->request_classes |= 1u << class_of_res((enum qos_res)r);
    }
}

void qos_memevict_allocatable_release(const struct qos_threshold *cfg, const struct qos_node *node,
                                      const struct qos_pod *pods, size_t npods,
                                      struct qos_evict_task *task)
{
    int64_t lower = cfg->memory_allocatable_evict_lower_percent.set
                        ? cfg->memory_allocatable_evict_lower_percent.value
                        : 0;

    qos__allocatable_release(cfg->memory_allocatable_evict_threshold_percent.value, lower,
                             cfg->allocatable_evict_priority_threshold.value, QOS_RES_MEMORY, node,
                             pods, npods, task);
    task->request_res = QOS_RES_MEMORY;
}

static int cmp_be(const void *pa, const void *pb)
{
    const struct qos_evict_victim *a = pa, *b = pb;
    const char *na = a->pod->name ? a->pod->name : "", *nb = b->pod->name ? b->pod->name : "";

    if (a->pod->has_priority && b->pod->has_priority && a->pod->priority != b->pod->priority)
        return qos__cmp_i64(a->pod->priority, b->pod->priority);
    if (a->used != 0 && b->used != 0)
        return qos__cmp_i64(b->used, a->used);
    if (a->used == 0 && b->used == 0)
        return strcmp(nb, na);
    return a->used == 0 ? 1 : -1;
}

size_t qos_memevict_be_victims(const struct qos_pod *pods, size_t npods,
                               struct qos_evict_victim *ret)
{
    size_t n = 0;

    for (size_t i = 0; i < npods; i++) {
        const struct qos_pod *p = &pods[i];

        if (p->qos_label != API_QOS_BE ||
            !qos_evict_policy_allows(p->eviction_policy, QOS_FEATURE_BE_MEMORY_EVICT))
            continue;
        memset(&ret[n], 0, sizeof(ret[n]));
        ret[n].pod = p;
        ret[n].used = p->has_memory_usage ? (int64_t)p->memory_usage : 0;
        ret[n].priority = qos_pod_priority_value(p);
        ret[n].label_priority = p->has_sub_priority ? p->sub_priority : ret[n].priority;
        n++;
    }
    qos__sort(ret, n, sizeof(*ret), cmp_be);
    return n;
}

size_t qos_memevict_victims(const struct qos_pod *pods, size_t npods, int32_t priority_threshold,
                            bool by_request, struct qos_evict_victim *ret)
{
    const char *feature =
        by_request ? QOS_FEATURE_MEMORY_ALLOCATABLE_EVICT : QOS_FEATURE_MEMORY_EVICT;
    size_t n = 0;

    for (size_t i = 0; i < npods; i++) {
        const struct qos_pod *p = &pods[i];
        struct qos_evict_victim *v = &ret[n];
        enum qos_res name;

        if (!qos__victim_init(p, priority_threshold, feature, p->has_memory_usage, v))
            continue;
        v->used = (int64_t)p->memory_usage;
        v->request = qos_pod_class_request(p, QOS_RES_MEMORY, &name);
        n++;
    }
    qos__victims_sort(ret, n, by_request);
    return n;
}

static bool any_positive(const struct qos_resources *r)
{
    for (int i = 0; i < QOS_RES_COUNT; i++)
        if (r->v[i] > 0)
            return true;
    return false;
}

int qos_memevict_plan(const struct qos_memevict_input *in, struct qos_memevict_plan *ret)
{
    const struct qos_threshold *cfg = in->cfg;
    int64_t capacity = in->node->capacity.v[QOS_RES_MEMORY];
    struct qos_memevict_plan p;
    size_t used = 0;

    memset(&p, 0, sizeof(p));
    for (size_t i = 0; i < ARRAY_SIZE(p.skipped); i++)
        p.skipped[i] = "";
    if (capacity <= 0) {
        *ret = p;
        return -EINVAL;
    }
    p.storage = ccalloc(3 * (in->npods ? in->npods : 1), sizeof(*p.storage));
    if (!p.storage)
        return -ENOMEM;
    /* Round order: BEMemoryEvict, MemoryAllocatableEvict, MemoryEvict. */
    for (int f = 0; f < 3; f++) {
        static const char *const features[] = {QOS_FEATURE_BE_MEMORY_EVICT,
                                               QOS_FEATURE_MEMORY_ALLOCATABLE_EVICT,
                                               QOS_FEATURE_MEMORY_EVICT};
        bool gates[] = {in->be_memory_evict, in->memory_allocatable_evict, in->memory_evict};
        struct qos_evict_task *t = &p.tasks[p.ntasks];
        struct qos_evict_victim *v = p.storage + used;
        struct qos_usage_release ur;
        int r;

        if (!gates[f] || !cfg->enable)
            continue;
        memset(t, 0, sizeof(*t));
        t->feature = features[f];
        t->victims = v;
        if (f == 1) {
            if (qos_memevict_allocatable_check(cfg, &p.skipped[f]) < 0)
                continue;
            qos_memevict_allocatable_release(cfg, in->node, in->pods, in->npods, t);
            t->target = QOS_RELEASE_REQUEST;
            if (!any_positive(&t->release)) {
                p.skipped[f] = "nothing to release";
                continue;
            }
            t->nvictims = qos_memevict_victims(
                in->pods, in->npods, (int32_t)cfg->allocatable_evict_priority_threshold.value, true,
                v);
        } else {
            if (!in->has_node_used) {
                p.skipped[f] = "no node memory usage sample";
                continue;
            }
            r = qos_memevict_usage_release(cfg, f == 2, capacity, in->node_used, &ur,
                                           &p.skipped[f]);
            if (r < 0)
                continue;
            if (r == 0) {
                p.skipped[f] = "node memory usage is below the threshold";
                continue;
            }
            t->target = QOS_RELEASE_USED;
            t->used_res = QOS_RES_MEMORY;
            t->release.v[QOS_RES_MEMORY] = ur.release;
            if (!any_positive(&t->release)) {
                p.skipped[f] = "nothing to release";
                continue;
            }
            t->nvictims =
                f == 0 ? qos_memevict_be_victims(in->pods, in->npods, v)
                       : qos_memevict_victims(in->pods, in->npods,
                                              (int32_t)cfg->evict_enabled_priority_threshold.value,
                                              false, v);
        }
        used += t->nvictims;
        p.ntasks++;
    }
    *ret = p;
    return 0;
}

void qos_memevict_plan_release(struct qos_memevict_plan *p)
{
    FREE_AND_NULL(p->storage);
    p->ntasks = 0;
}
