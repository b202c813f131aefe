/* Pod classification (pod.h). */
#include "api/pod.h"

#include <math.h>
#include <string.h>

#include "api/quantity.h"
#include "base/base.h"

static const struct {
    const char *name;
    enum api_qos qos;
} qos_names[] = {
    {"LSE", API_QOS_LSE}, {"LSR", API_QOS_LSR},       {"LS", API_QOS_LS},
    {"BE", API_QOS_BE},   {"SYSTEM", API_QOS_SYSTEM},
};

static const struct {
    const char *name;
    enum api_priority prio;
    int value;
} priority_names[] = {
    {"koord-prod", API_PRIORITY_PROD, 9500},
    {"koord-mid", API_PRIORITY_MID, 7500},
    {"koord-batch", API_PRIORITY_BATCH, 5500},
    {"koord-free", API_PRIORITY_FREE, 3500},
};

enum api_qos api_qos_by_name(const char *s)
{
    for (size_t i = 0; s && i < ARRAY_SIZE(qos_names); i++)
        if (!strcmp(s, qos_names[i].name))
            return qos_names[i].qos;
    return API_QOS_NONE;
}

enum api_priority api_priority_by_name(const char *s)
{
    for (size_t i = 0; s && i < ARRAY_SIZE(priority_names); i++)
        if (!strcmp(s, priority_names[i].name))
            return priority_names[i].prio;
    return API_PRIORITY_NONE;
}

const char *api_qos_name(enum api_qos q)
{
    for (size_t i = 0; i < ARRAY_SIZE(qos_names); i++)
        if (qos_names[i].qos == q)
            return qos_names[i].name;
    return "";
}

const char *api_priority_name(enum api_priority p)
{
    for (size_t i = 0; i < ARRAY_SIZE(priority_names); i++)
        if (priority_names[i].prio == p)
            return priority_names[i].name;
    return "";
}

int api_priority_value(enum api_priority p)
{
    for (size_t i = 0; i < ARRAY_SIZE(priority_names); i++)
        if (priority_names[i].prio == p)
            return priority_names[i].value;
    return 0;
}

static const cJSON *get(const cJSON *o, const char *key)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

/* A quantity of a ResourceList entry: a string, or a JSON integer; 0 or -EINVAL/-ENOENT. */
static int list_quantity(const cJSON *list, const char *name, struct quantity *ret)
{
    const cJSON *v = get(list, name);

    if (!v)
        return -ENOENT;
    if (cJSON_IsString(v))
        return quantity_parse(v->valuestring, ret);
    if (cJSON_IsNumber(v) && fabs(v->valuedouble) <= 9007199254740992.0 &&
        v->valuedouble == floor(v->valuedouble)) {
        quantity_from_int((int64_t)v->valuedouble, QUANTITY_DECIMAL_SI, ret);
        return 0;
    }
    return -EINVAL;
}

/*
 * Kubernetes ComputePodQOS (pkg/apis/core/v1/helper/qos/qos.go), over cpu and memory of
 * containers and init containers: positive requests and limits are summed per resource (exact
 * decimal sums); Guaranteed needs every container to limit both and the sums of requests to
 * equal the sums of limits; nothing requested or limited is BestEffort.
 */
static enum api_kube_qos kube_qos(const cJSON *pod)
{
    static const char *const lists[] = {"containers", "initContainers"};
    static const char *const names[] = {"cpu", "memory"};
    struct quantity req[2], lim[2];
    bool has_req[2] = {false, false}, has_lim[2] = {false, false}, guaranteed = true;
    const cJSON *spec = get(pod, "spec"), *c;
    const cJSON *kq = get(get(pod, "status"), "qosClass");

    if (cJSON_IsString(kq) && *kq->valuestring) {
        if (!strcmp(kq->valuestring, "Guaranteed"))
            return API_KUBE_QOS_GUARANTEED;
        if (!strcmp(kq->valuestring, "Burstable"))
            return API_KUBE_QOS_BURSTABLE;
        if (!strcmp(kq->valuestring, "BestEffort"))
            return API_KUBE_QOS_BESTEFFORT;
        return API_KUBE_QOS_UNKNOWN;
    }
    for (size_t i = 0; i < 2; i++) {
        quantity_from_int(0, QUANTITY_DECIMAL_SI, &req[i]);
        quantity_from_int(0, QUANTITY_DECIMAL_SI, &lim[i]);
    }
    for (size_t l = 0; l < ARRAY_SIZE(lists); l++) {
        const cJSON *arr = get(spec, lists[l]);

        if (!cJSON_IsArray(arr))
            continue;
        cJSON_ArrayForEach(c, arr)
        {
            const cJSON *rs = get(c, "resources");
            int found = 0;

            for (size_t i = 0; i < 2; i++) {
                struct quantity q;

                if (list_quantity(get(rs, "requests"), names[i], &q) == 0 &&
                    quantity_sign(&q) > 0 && quantity_add(&req[i], &q) == 0)
                    has_req[i] = true;
                if (list_quantity(get(rs, "limits"), names[i], &q) == 0 && quantity_sign(&q) > 0) {
                    found++;
                    if (quantity_add(&lim[i], &q) == 0)
                        has_lim[i] = true;
                }
            }
            if (found != 2)
                guaranteed = false;
        }
    }
    if (!has_req[0] && !has_req[1] && !has_lim[0] && !has_lim[1])
        return API_KUBE_QOS_BESTEFFORT;
    for (size_t i = 0; guaranteed && i < 2; i++) {
        if (has_req[i] && (!has_lim[i] || quantity_cmp(&req[i], &lim[i]) != 0))
            guaranteed = false;
    }
    if (guaranteed && has_req[0] + has_req[1] == has_lim[0] + has_lim[1])
        return API_KUBE_QOS_GUARANTEED;
    return API_KUBE_QOS_BURSTABLE;
}

enum api_kube_qos api_pod_kube_qos(const cJSON *pod)
{
    return pod ? kube_qos(pod) : API_KUBE_QOS_UNKNOWN;
}

enum api_qos api_pod_qos(const cJSON *pod)
{
    const cJSON *label = get(get(get(pod, "metadata"), "labels"), "koordinator.sh/qosClass");
    enum api_qos q;

    if (!pod)
        return API_QOS_NONE;
    q = api_qos_by_name(cJSON_IsString(label) ? label->valuestring : NULL);
    if (q != API_QOS_NONE)
        return q;
    switch (kube_qos(pod)) {
    case API_KUBE_QOS_GUARANTEED:
        return API_QOS_LSR;
    case API_KUBE_QOS_BURSTABLE:
        return API_QOS_LS;
    case API_KUBE_QOS_BESTEFFORT:
        return API_QOS_BE;
    case API_KUBE_QOS_UNKNOWN:
        break;
    }
    return API_QOS_NONE;
}

enum api_priority api_priority_of_value(int64_t v)
{
    if (v >= 9000 && v <= 9999)
        return API_PRIORITY_PROD;
    if (v >= 7000 && v <= 7999)
        return API_PRIORITY_MID;
    if (v >= 5000 && v <= 5999)
        return API_PRIORITY_BATCH;
    if (v >= 3000 && v <= 3999)
        return API_PRIORITY_FREE;
    return API_PRIORITY_NONE;
}

enum api_priority api_pod_priority(const cJSON *pod)
{
    const cJSON *label = get(get(get(pod, "metadata"), "labels"), "koordinator.sh/priority-class");
    const cJSON *prio = get(get(pod, "spec"), "priority");
    enum api_priority p = API_PRIORITY_NONE;

    if (!pod)
        return p;
    if (label) {
        /* Present, whatever its value: an unknown one is "none", spec.priority is not read. */
        p = api_priority_by_name(cJSON_IsString(label) ? label->valuestring : NULL);
    } else if (cJSON_IsNumber(prio) && prio->valuedouble == floor(prio->valuedouble) &&
               fabs(prio->valuedouble) < 1e15) {
        p = api_priority_of_value((int64_t)prio->valuedouble);
    }
    if (p != API_PRIORITY_NONE)
        return p;
    switch (api_pod_qos(pod)) {
    case API_QOS_SYSTEM:
    case API_QOS_LSE:
    case API_QOS_LSR:
    case API_QOS_LS:
        return API_PRIORITY_PROD;
    case API_QOS_BE:
        return API_PRIORITY_BATCH;
    case API_QOS_NONE:
        break;
    }
    return API_PRIORITY_NONE;
}
