/* Group identity bvt values (groupidentity.h). */
#include "agent/qos/groupidentity.h"

#include <string.h>

#include "agent/qos/qos-int.h"
#include "base/base.h"

bool qos_gi_enabled(const struct qos_resource_qos *cfg)
{
    return cfg->cpu_policy == QOS_CPU_POLICY_GROUP_IDENTITY;
}

bool qos_gi_rule_enabled(const struct qos_resource_qos *cfg)
{
    return qos_gi_enabled(cfg) &&
           (cfg->classes[QOS_CLASS_LSR].cpu.enable || cfg->classes[QOS_CLASS_LS].cpu.enable ||
            cfg->classes[QOS_CLASS_BE].cpu.enable);
}

int64_t qos_gi_class_value(const struct qos_resource_qos *cfg, enum qos_class c)
{
    const struct qos_cpu_qos *q = &cfg->classes[c].cpu;

    return qos_gi_enabled(cfg) && q->enable ? q->group_identity : 0;
}

void qos_gi_kube_values(const struct qos_resource_qos *cfg, struct qos_gi_kube *ret)
{
    ret->root = 0;
    ret->burstable = qos_gi_class_value(cfg, QOS_CLASS_LS);
    ret->besteffort = qos_gi_class_value(cfg, QOS_CLASS_BE);
}

/* The LS pod annotation's value: 0 or 1 with *ret, -EINVAL when it is to be ignored. */
static int annotation_value(const char *annotation, int64_t *ret)
{
    const cJSON *enable, *gi;
    cJSON *doc = NULL;
    struct qos_cpu_qos q;
    int r = -EINVAL;

    if (qos__json_parse(annotation, &doc) < 0)
        return -EINVAL;
    memset(&q, 0, sizeof(q));
    if (!cJSON_IsObject(doc) || qos_cpu_qos_merge(doc, &q, NULL) < 0)
        goto out;
    enable = qos__member(doc, "enable");
    gi = qos__member(doc, "groupIdentity");
    if (!cJSON_IsTrue(enable)) {
        *ret = 0;
        r = 0;
    } else if (gi && q.group_identity >= QOS_BVT_MIN && q.group_identity <= QOS_BVT_MAX) {
        *ret = q.group_identity;
        r = 0;
    }
out:
    cJSON_Delete(doc);
    return r;
}

int64_t qos_gi_pod_value(const struct qos_resource_qos *cfg, const struct qos_pod *p)
{
    int64_t v;

    switch (p->qos_label) {
    case API_QOS_LSE:
    case API_QOS_LSR:
        return qos_gi_class_value(cfg, QOS_CLASS_LSR);
    case API_QOS_LS:
        if (p->cpu_qos && qos_gi_enabled(cfg) && annotation_value(p->cpu_qos, &v) == 0)
            return v;
        return qos_gi_class_value(cfg, QOS_CLASS_LS);
    case API_QOS_BE:
        return qos_gi_class_value(cfg, QOS_CLASS_BE);
    case API_QOS_SYSTEM:
        return qos_gi_class_value(cfg, QOS_CLASS_SYSTEM);
    default:
        break;
    }
    switch (p->kube_qos) {
    case QOS_KUBE_GUARANTEED:
        if (cfg->classes[QOS_CLASS_LSR].cpu.enable)
            return qos_gi_class_value(cfg, QOS_CLASS_LSR);
        return qos_gi_class_value(cfg, QOS_CLASS_LS);
    case QOS_KUBE_BURSTABLE:
        return qos_gi_class_value(cfg, QOS_CLASS_LS);
    case QOS_KUBE_BESTEFFORT:
        return qos_gi_class_value(cfg, QOS_CLASS_BE);
    default:
        return 0;
    }
}
