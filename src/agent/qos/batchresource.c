/* Batch resource cgroup values of BE pods (batchresource.h). */
#include "agent/qos/batchresource.h"

#include <string.h>

#include "base/base.h"

bool qos_batch_applies(const struct qos_pod *p)
{
    return p->qos_label == API_QOS_BE;
}

static int64_t shares(int64_t milli_request)
{
    int64_t s = milli_request * 1024 / 1000;

    if (s < QOS_CPU_SHARES_MIN)
        return QOS_CPU_SHARES_MIN;
    return s > QOS_CPU_SHARES_MAX ? QOS_CPU_SHARES_MAX : s;
}

/* milli_limit <= 0 is unlimited. */
static int64_t quota(int64_t milli_limit, const struct qos_batch_node *node)
{
    int64_t q;

    if (node->suppress_cfs_quota || milli_limit <= 0)
        return QOS_UNLIMITED;
    q = milli_limit * QOS_CFS_PERIOD_US / 1000;
    if (q < QOS_CFS_QUOTA_MIN)
        q = QOS_CFS_QUOTA_MIN;
    if (node->normalization_ratio > 1)
        q = (int64_t)((double)q / node->normalization_ratio);
    return q;
}

void qos_batch_pod(const struct qos_pod *p, const struct qos_batch_node *node,
                   struct qos_batch_values *ret)
{
    int64_t req = 0, cpu = 0, mem = 0;

    for (size_t i = 0; i < p->ncontainers; i++) {
        const struct qos_container *c = &p->containers[i];

        if (c->requests.v[QOS_RES_BATCH_CPU] > 0)
            req += c->requests.v[QOS_RES_BATCH_CPU];
        /* A pod is unlimited once one container is. */
        if (cpu >= 0)
            cpu = c->limits.v[QOS_RES_BATCH_CPU] > 0 ? cpu + c->limits.v[QOS_RES_BATCH_CPU] : -1;
        if (mem >= 0)
            mem = c->limits.v[QOS_RES_BATCH_MEMORY] > 0 ? mem + c->limits.v[QOS_RES_BATCH_MEMORY]
                                                        : -1;
    }
    ret->cpu_shares = shares(req);
    ret->cfs_quota = quota(cpu, node);
    ret->memory_limit = mem > 0 ? mem : QOS_UNLIMITED;
}

void qos_batch_container(const struct qos_container *c, const struct qos_batch_node *node,
                         struct qos_batch_values *ret)
{
    int64_t req = c->requests.v[QOS_RES_BATCH_CPU];
    int64_t mem = c->limits.v[QOS_RES_BATCH_MEMORY];

    ret->cpu_shares = shares(req > 0 ? req : 0);
    ret->cfs_quota = quota(c->limits.v[QOS_RES_BATCH_CPU], node);
    ret->memory_limit = mem > 0 ? mem : QOS_UNLIMITED;
}
