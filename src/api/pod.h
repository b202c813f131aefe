/*
 * How Koordinator classifies a pod (reference koordlet-and-scheduler.md 0, manager-behaviour.md
 * 4.3): its QoS class and its priority class "with default", read by the manager (batch
 * resources), the agent (podsMetric, suppression, eviction order) and the scheduler alike, so
 * they live with the API types rather than in any one of them.
 */
#ifndef KOORD_API_POD_H
#define KOORD_API_POD_H

#include <cjson/cJSON.h>
#include <stdint.h>

/* Koordinator QoS classes (label koordinator.sh/qosClass). */
enum api_qos {
    API_QOS_NONE,
    API_QOS_LSE,
    API_QOS_LSR,
    API_QOS_LS,
    API_QOS_BE,
    API_QOS_SYSTEM,
};

/* Koordinator priority classes (label koordinator.sh/priority-class, or spec.priority bands). */
enum api_priority {
    API_PRIORITY_NONE,
    API_PRIORITY_PROD,  /* koord-prod, [9000, 9999], default value 9500 */
    API_PRIORITY_MID,   /* koord-mid, [7000, 7999], 7500 */
    API_PRIORITY_BATCH, /* koord-batch, [5000, 5999], 5500 */
    API_PRIORITY_FREE,  /* koord-free, [3000, 3999], 3500 */
};

/* Kubernetes QoS classes (status.qosClass), which name a pod's cgroup directory. */
enum api_kube_qos {
    API_KUBE_QOS_UNKNOWN, /* status.qosClass names something else */
    API_KUBE_QOS_GUARANTEED,
    API_KUBE_QOS_BURSTABLE,
    API_KUBE_QOS_BESTEFFORT,
};

/*
 * A pod's Kubernetes QoS class: status.qosClass, or when that is empty computed as kubelet does
 * (k8s.io/kubernetes pkg/apis/core/v1/helper/qos ComputePodQOS over cpu and memory of containers
 * and init containers; pod-level resources are not considered). pod NULL -> UNKNOWN.
 */
enum api_kube_qos api_pod_kube_qos(const cJSON *pod);

/*
 * A pod's Koordinator QoS class "with default" (upstream GetPodQoSClassWithDefault): label
 * `koordinator.sh/qosClass` when it names one of LSE, LSR, LS, BE, SYSTEM; otherwise from
 * api_pod_kube_qos(): Guaranteed -> LSR, Burstable -> LS, BestEffort -> BE, anything else -> NONE.
 * pod NULL -> NONE.
 */
enum api_qos api_pod_qos(const cJSON *pod);

/*
 * A pod's priority class "with default" (upstream GetPodPriorityClassWithDefault): label
 * `koordinator.sh/priority-class` when present (an unknown value counts as none); else the band of
 * spec.priority; if that gives none, from the QoS class of api_pod_qos() (SYSTEM, LSE, LSR, LS ->
 * prod; BE -> batch; none -> none). pod NULL -> NONE.
 */
enum api_priority api_pod_priority(const cJSON *pod);

/* The koordinator class of a priority value: prod 9000-9999, mid 7000-7999, batch 5000-5999, free
 * 3000-3999, else none. */
enum api_priority api_priority_of_value(int64_t v);

/* The class a name stands for ("LSR", "koord-prod"; exact, case-sensitive), NONE otherwise. */
enum api_qos api_qos_by_name(const char *s);
enum api_priority api_priority_by_name(const char *s);

/* The names as written in labels and NodeMetric podsMetric ("" for NONE). */
const char *api_qos_name(enum api_qos q);
const char *api_priority_name(enum api_priority p);

/* GetDefaultPriorityByPriorityClass: the value a class stands for (9500, 7500, 5500, 3500, 0). */
int api_priority_value(enum api_priority p);

#endif
