/* Memory QoS values (memoryqos.h). */
#include "agent/qos/memoryqos.h"

#include <string.h>

#include "agent/qos/qos-int.h"
#include "base/base.h"

static const char *const files[QOS_MEMCG_COUNT] = {
    [QOS_MEMCG_MIN] = "memory.min",
    [QOS_MEMCG_LOW] = "memory.low",
    [QOS_MEMCG_HIGH] = "memory.high",
    [QOS_MEMCG_WMARK_RATIO] = "memory.wmark_ratio",
    [QOS_MEMCG_WMARK_SCALE_FACTOR] = "memory.wmark_scale_factor",
    [QOS_MEMCG_WMARK_MIN_ADJ] = "memory.wmark_min_adj",
    [QOS_MEMCG_PRIORITY] = "memory.priority",
    [QOS_MEMCG_USE_PRIORITY_OOM] = "memory.use_priority_oom",
    [QOS_MEMCG_OOM_GROUP] = "memory.oom.group",
    [QOS_MEMCG_PAGECACHE_ENABLE] = "memory.pagecache_limit.enable",
    [QOS_MEMCG_PAGECACHE_SIZE] = "memory.pagecache_limit.size",
    [QOS_MEMCG_PAGECACHE_SYNC] = "memory.pagecache_limit.sync",
};

const char *qos_memcg_file(enum qos_memcg_field f)
{
    return (unsigned)f < QOS_MEMCG_COUNT ? files[f] : "";
}

bool qos_memcg_mergeable(enum qos_memcg_field f)
{
    return f == QOS_MEMCG_MIN || f == QOS_MEMCG_LOW || f == QOS_MEMCG_HIGH;
}

static void put(struct qos_memcg *m, enum qos_memcg_field f, int64_t v)
{
    m->set |= 1u << f;
    m->v[f] = v;
}

static enum qos_class class_of(const struct qos_pod *p, bool *ok)
{
    *ok = true;
    switch (p->qos) {
    case API_QOS_LSE:
    case API_QOS_LSR:
        return QOS_CLASS_LSR;
    case API_QOS_LS:
        return QOS_CLASS_LS;
    case API_QOS_BE:
        return QOS_CLASS_BE;
    case API_QOS_SYSTEM:
        return QOS_CLASS_SYSTEM;
    default:
        *ok = false;
        return QOS_CLASS_LS;
    }
}

const struct qos_class_config *qos_memqos_class(const struct qos_resource_qos *node,
                                                const struct qos_pod *p)
{
    bool ok;
    enum qos_class c = class_of(p, &ok);

    return ok ? &node->classes[c] : NULL;
}

int qos_memqos_pod_config(const struct qos_resource_qos *node, const struct qos_pod *p,
                          struct qos_memory_qos *ret)
{
    const struct qos_class_config *cls = qos_memqos_class(node, p);
    enum qos_memqos_policy policy = QOS_MEMQOS_POLICY_DEFAULT;
    struct qos_memory_qos cfg;
    const cJSON *pol;
    cJSON *doc = NULL;
    bool ok;
    int r = 0;

    if (!cls)
        return -ENOENT;
    cfg = cls->memory;
    if (p->memory_qos) {
        r = qos__json_parse(p->memory_qos, &doc);
        if (r == 0 && !cJSON_IsObject(doc) && !cJSON_IsNull(doc))
            r = -EINVAL;
        pol = r == 0 ? qos__member(doc, "policy") : NULL;
        if (pol && !cJSON_IsString(pol))
            r = -EINVAL;
        else if (pol && !strcmp(pol->valuestring, "none"))
            policy = QOS_MEMQOS_POLICY_NONE;
        else if (pol && !strcmp(pol->valuestring, "auto"))
            policy = QOS_MEMQOS_POLICY_AUTO;
    }
    if (policy == QOS_MEMQOS_POLICY_NONE) {
        qos_memory_qos_none(&cfg);
        cfg.enable = false;
    } else if (policy == QOS_MEMQOS_POLICY_AUTO) {
        struct qos_class_config rec;
        bool enable = cfg.enable;

        qos_class_defaults(class_of(p, &ok), &rec);
        cfg = rec.memory;
        cfg.enable = enable;
    }
    if (r == 0 && doc && policy != QOS_MEMQOS_POLICY_NONE) {
        struct qos_memory_qos merged = cfg;

        /* A field of the wrong type fails the whole annotation: it is then ignored. */
        if (qos_memory_qos_merge(doc, &merged, NULL) == 0)
            cfg = merged;
        else
            r = -EINVAL;
    }
    if (r < 0)
        cfg = cls->memory;
    cJSON_Delete(doc);
    *ret = cfg;
    return r;
}

/* Protection and OOM fields shared by the pod and container levels. */
static void common(const struct qos_memory_qos *cfg, int64_t req, struct qos_memcg *m)
{
    put(m, QOS_MEMCG_MIN, qos__pct_of(req, cfg->min_limit_percent));
    put(m, QOS_MEMCG_LOW, qos__pct_of(req, cfg->low_limit_percent));
    if (m->v[QOS_MEMCG_LOW] > 0 && m->v[QOS_MEMCG_LOW] < m->v[QOS_MEMCG_MIN])
        m->v[QOS_MEMCG_LOW] = m->v[QOS_MEMCG_MIN];
    put(m, QOS_MEMCG_WMARK_RATIO, cfg->wmark_ratio);
    put(m, QOS_MEMCG_WMARK_SCALE_FACTOR, cfg->wmark_scale_permill);
    put(m, QOS_MEMCG_WMARK_MIN_ADJ, cfg->wmark_min_adj);
    put(m, QOS_MEMCG_PRIORITY, cfg->priority);
    put(m, QOS_MEMCG_USE_PRIORITY_OOM, cfg->priority_enable);
    put(m, QOS_MEMCG_OOM_GROUP, cfg->oom_kill_group);
}

void qos_memqos_container(const struct qos_memory_qos *cfg, const struct qos_pod *p,
                          const struct qos_container *c, int64_t node_allocatable_memory,
                          int64_t page_size, struct qos_memcg *ret)
{
    bool be = p->qos_label == API_QOS_BE;
    int64_t req = c->requests.v[be ? QOS_RES_BATCH_MEMORY : QOS_RES_MEMORY];
    int64_t lim = c->limits.v[be ? QOS_RES_BATCH_MEMORY : QOS_RES_MEMORY];
    int64_t high;

    memset(ret, 0, sizeof(*ret));
    if (req < 0)
        req = 0;
    common(cfg, req, ret);
    if (cfg->throttling_percent == 0) {
        high = QOS_MEMORY_HIGH_MAX;
    } else {
        int64_t l = lim > 0 ? lim : node_allocatable_memory;

        high = req + qos__pct_of(l - req, cfg->throttling_percent);
        if (page_size > 0)
            high = high / page_size * page_size;
        /* No limit and no node allocatable to scale (or less than a page): no throttling,
         * never a memory.high of 0 that would stall the container. */
        if (l <= 0 || high <= 0)
            high = QOS_MEMORY_HIGH_MAX;
    }
    if (high > 0 && high < ret->v[QOS_MEMCG_MIN])
        high = ret->v[QOS_MEMCG_MIN];
    put(ret, QOS_MEMCG_HIGH, high);
}

/* Pod request of memory (BE: batch-memory requests, unset ones skipped). */
static int64_t pod_request(const struct qos_pod *p)
{
    if (p->qos_label == API_QOS_BE)
        return qos_pod_sum_requests(p, QOS_RES_BATCH_MEMORY);
    return p->requests.v[QOS_RES_MEMORY];
}

/* Sum of container limits, 0 (unlimited) when any container has none. */
static int64_t pod_limit(const struct qos_pod *p)
{
    enum qos_res r = p->qos_label == API_QOS_BE ? QOS_RES_BATCH_MEMORY : QOS_RES_MEMORY;
    int64_t sum = 0;

    for (size_t i = 0; i < p->ncontainers; i++) {
        if (p->containers[i].limits.v[r] <= 0)
            return 0;
        sum += p->containers[i].limits.v[r];
    }
    return sum;
}

void qos_memqos_pod(const struct qos_memory_qos *cfg, const struct qos_pod *p,
                    struct qos_memcg *ret)
{
    int64_t limit = pod_limit(p);

    memset(ret, 0, sizeof(*ret));
    common(cfg, pod_request(p), ret);
    if (!cfg->page_cache_enable) {
        put(ret, QOS_MEMCG_PAGECACHE_ENABLE, 0);
        return;
    }
    put(ret, QOS_MEMCG_PAGECACHE_ENABLE, 1);
    put(ret, QOS_MEMCG_PAGECACHE_SYNC, cfg->page_cache_reclaim_sync ? 1 : 0);
    if (cfg->page_cache_limit_size > 0)
        put(ret, QOS_MEMCG_PAGECACHE_SIZE,
            limit > 0 && cfg->page_cache_limit_size > limit ? limit : cfg->page_cache_limit_size);
    else if (cfg->page_cache_limit_percent > 0 && limit > 0)
        put(ret, QOS_MEMCG_PAGECACHE_SIZE, qos__pct_of(limit, cfg->page_cache_limit_percent));
}

static void oom_fields(const struct qos_memory_qos *cfg, struct qos_memcg *m)
{
    put(m, QOS_MEMCG_USE_PRIORITY_OOM, cfg->priority_enable);
    put(m, QOS_MEMCG_PRIORITY, cfg->priority);
    put(m, QOS_MEMCG_OOM_GROUP, cfg->oom_kill_group);
}

void qos_memqos_kube_level(const struct qos_resource_qos *node, const struct qos_pod *pods,
                           size_t npods, struct qos_memqos_kube *ret)
{
    struct qos_memcg *dir[] = {&ret->guaranteed, &ret->burstable, &ret->besteffort};
    int64_t min = 0, low = 0;

    memset(ret, 0, sizeof(*ret));
    /* From 0, as upstream sums them: a level whose last protected pod left goes back to 0
     * instead of keeping a protection (memory_recursiveprot hands it down to later pods). */
    for (size_t k = 0; k < ARRAY_SIZE(dir); k++) {
        put(dir[k], QOS_MEMCG_MIN, 0);
        put(dir[k], QOS_MEMCG_LOW, 0);
    }
    for (size_t i = 0; i < npods; i++) {
        const struct qos_pod *p = &pods[i];
        struct qos_memory_qos cfg;
        struct qos_memcg *m;
        int64_t req;

        if (!p->active || p->kube_qos == QOS_KUBE_NONE)
            continue;
        if (qos_memqos_pod_config(node, p, &cfg) == -ENOENT)
            continue;
        m = dir[p->kube_qos - QOS_KUBE_GUARANTEED];
        req = pod_request(p);
        put(m, QOS_MEMCG_MIN, m->v[QOS_MEMCG_MIN] + qos__pct_of(req, cfg.min_limit_percent));
        put(m, QOS_MEMCG_LOW, m->v[QOS_MEMCG_LOW] + qos__pct_of(req, cfg.low_limit_percent));
    }
    /* The kube root (Guaranteed level) is the parent of the other two: it holds the sums. */
    for (size_t k = 0; k < ARRAY_SIZE(dir); k++) {
        min += dir[k]->v[QOS_MEMCG_MIN];
        low += dir[k]->v[QOS_MEMCG_LOW];
    }
    put(&ret->guaranteed, QOS_MEMCG_MIN, min);
    put(&ret->guaranteed, QOS_MEMCG_LOW, low);
    oom_fields(&node->classes[QOS_CLASS_LSR].memory, &ret->guaranteed);
    oom_fields(&node->classes[QOS_CLASS_LS].memory, &ret->burstable);
    oom_fields(&node->classes[QOS_CLASS_BE].memory, &ret->besteffort);
}
