/*
 * The node agent's QoS strategies as pure functions (reference koordlet-and-scheduler.md sections
 * 3 and 4): every formula, threshold and ordering upstream koordlet applies, from plain inputs
 * to plain outputs. This header holds what the strategies share: the pod and node summaries
 * they read, resource amounts by name, CPU sets and the annotations several strategies parse.
 *
 * The caller (the agent's QoS loop) gathers inputs from the pod list, the Node, the metric cache
 * and cgroup reads, calls a strategy, and applies what it returns (checked cgroup writes,
 * Eviction API calls). Nothing here reads files, takes locks, looks at a clock or logs: times
 * are inputs in milliseconds of a clock the caller chooses, randomness is an input too.
 *
 * Units: CPU amounts in milli-cores (int64) unless a field says "cores" (double, as the metric
 * cache stores usage); memory in bytes; cfs values in microseconds with the fixed period
 * QOS_CFS_PERIOD_US.
 */
#ifndef KOORD_AGENT_QOS_QOS_H
#define KOORD_AGENT_QOS_QOS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/cgroup/resource.h"
#include "api/pod.h"

struct strbuf;

#define QOS_CFS_PERIOD_US 100000

/* Label and annotation keys the strategies read. */
#define QOS_LABEL_EVICTION_ENABLED      "koordinator.sh/eviction-enabled"
#define QOS_LABEL_SUB_PRIORITY          "koordinator.sh/priority"
#define QOS_ANNOTATION_EVICTION_POLICY  "koordinator.sh/eviction-policy"
#define QOS_ANNOTATION_EVICTION_PRIO    "koordinator.sh/eviction-priority"
#define QOS_ANNOTATION_CPU_BURST        "koordinator.sh/cpuBurst"
#define QOS_ANNOTATION_CPU_QOS          "koordinator.sh/cpuQOS"
#define QOS_ANNOTATION_MEMORY_QOS       "koordinator.sh/memoryQOS"
#define QOS_ANNOTATION_RESOURCE_STATUS  "scheduling.koordinator.sh/resource-status"
#define QOS_ANNOTATION_POD_RESCTRL      "node.koordinator.sh/resctrl"
#define QOS_ANNOTATION_NODE_RESERVATION "node.koordinator.sh/reservation"
#define QOS_ANNOTATION_SYSTEM_QOS       "node.koordinator.sh/system-qos-resource"

/* Resource names the strategies distinguish. */
enum qos_res {
    QOS_RES_CPU,       /* "cpu", milli-cores */
    QOS_RES_MEMORY,    /* "memory", bytes */
    QOS_RES_BATCH_CPU, /* "kubernetes.io/batch-cpu": its integer value, which counts milli-cores */
    QOS_RES_BATCH_MEMORY, /* "kubernetes.io/batch-memory", bytes */
    QOS_RES_MID_CPU,      /* "kubernetes.io/mid-cpu", as batch-cpu */
    QOS_RES_MID_MEMORY,   /* "kubernetes.io/mid-memory", bytes */
    QOS_RES_COUNT,
};

/* The resource name as written in a ResourceList ("cpu", "kubernetes.io/batch-memory"). */
const char *qos_res_name(enum qos_res r);

/* Amounts by enum qos_res. In a container, 0 means "not set" (upstream reads an absent request
 * or limit as zero and treats limits <= 0 as unlimited). */
struct qos_resources {
    int64_t v[QOS_RES_COUNT];
};

/* Kubernetes QoS class (pod.status.qosClass, or computed as kubelet does). */
enum qos_kube_class {
    QOS_KUBE_NONE,
    QOS_KUBE_GUARANTEED,
    QOS_KUBE_BURSTABLE,
    QOS_KUBE_BESTEFFORT,
};

struct qos_container {
    const char *name;
    const char *id; /* status containerID; NULL or "" until the container was created */
    bool running;   /* status state.running is set */
    struct qos_resources requests;
    struct qos_resources limits;
    /* Usage (the caller fills these from the metric cache; absent sample: has_* false). */
    bool has_cpu_usage;
    double cpu_usage; /* cores */
    bool has_throttled;
    double throttled_ratio; /* last container_cpu_throttled ratio */
};

/*
 * What the strategies know about one pod. Strings are borrowed (from the pod object when filled
 * by qos_pod_from_json()). Annotations that carry JSON are kept raw: the strategy that needs one
 * parses it and documents what a malformed value does.
 */
struct qos_pod {
    const char *uid;
    const char *namespace;
    const char *name;
    enum api_qos qos;                     /* api_pod_qos(): label, else from the kube class */
    enum api_qos qos_label;               /* the label alone (upstream GetPodQoSClassRaw) */
    enum qos_kube_class kube_qos;         /* status.qosClass, or computed */
    enum api_priority priority_class;     /* api_pod_priority(): with default */
    enum api_priority priority_class_raw; /* label, else spec.priority band; no QoS default */
    bool has_priority;                    /* spec.priority is set */
    int32_t priority;
    bool active;               /* phase is neither Succeeded nor Failed (upstream IsPodInactive) */
    bool eviction_enabled;     /* label koordinator.sh/eviction-enabled is "true" */
    bool has_sub_priority;     /* label koordinator.sh/priority parsed as a base-10 integer */
    int64_t sub_priority;      /* its value */
    int32_t eviction_priority; /* annotation koordinator.sh/eviction-priority; absent/bad: 0 */
    const char *eviction_policy; /* annotation koordinator.sh/eviction-policy; NULL absent */
    const char *cpu_burst;       /* annotation koordinator.sh/cpuBurst */
    const char *cpu_qos;         /* annotation koordinator.sh/cpuQOS */
    const char *memory_qos;      /* annotation koordinator.sh/memoryQOS */
    const char *resource_status; /* annotation scheduling.koordinator.sh/resource-status */
    bool has_resctrl_annotation; /* annotation node.koordinator.sh/resctrl is present */
    /* Pod request as Kubernetes computes it: per resource max(sum of containers, largest init
     * container) plus spec.overhead. */
    struct qos_resources requests;
    struct qos_container *containers; /* spec.containers, in order */
    size_t ncontainers;
    /* Usage (caller-filled): the "last" sample unless a strategy says otherwise. */
    bool has_cpu_usage;
    double cpu_usage; /* cores */
    bool has_memory_usage;
    double memory_usage; /* bytes */
};

/*
 * Fills *ret from a core/v1 Pod object (strings borrowed from pod; usage fields zero). Quantities
 * that do not parse, or do not fit int64 in their unit, count as 0 (not set). Container status is
 * matched by name. Returns 0, -EINVAL when pod is not an object, -ENOMEM (checked allocation of
 * the container array). Free with qos_pod_release().
 */
int qos_pod_from_json(const cJSON *pod, struct qos_pod *ret);

/* Frees what qos_pod_from_json() allocated; accepts a zeroed struct. */
void qos_pod_release(struct qos_pod *p);

/*
 * Upstream GetPodPriorityValueWithDefault: spec.priority when set and non-zero, otherwise the
 * default value of the priority class with default (9500, 7500, 5500, 3500, 0).
 */
int32_t qos_pod_priority_value(const struct qos_pod *p);

/*
 * The pod's request of resource "memory" or "cpu" translated to its priority class (upstream
 * GetRequestTypeAndValueFromPod): koord-batch -> batch-memory/batch-cpu summed over containers
 * (values <= 0 count 0), koord-mid -> mid-memory/mid-cpu likewise, others -> the pod request of
 * memory/cpu (qos_pod.requests). want is QOS_RES_MEMORY or QOS_RES_CPU; *ret_res gets the name.
 */
int64_t qos_pod_class_request(const struct qos_pod *p, enum qos_res want, enum qos_res *ret_res);

/* Sum over containers of one request or limit, values <= 0 counting 0. */
int64_t qos_pod_sum_requests(const struct qos_pod *p, enum qos_res r);

/*
 * The node facts the strategies use. Allocatable presence matters for batch-cpu (absent and zero
 * differ in BECPUEvict); capacity and allocatable bits say which entries the Node had.
 */
struct qos_node {
    struct qos_resources capacity;
    struct qos_resources allocatable;
    uint32_t capacity_present;    /* bit (1u << enum qos_res) */
    uint32_t allocatable_present; /* bit (1u << enum qos_res) */
    /* Annotation node.koordinator.sh/reservation (qos_reservation_parse()), 0 when absent. */
    int64_t reserved_cpu_milli;
    int64_t reserved_memory;
};

/*
 * Fills *ret from a core/v1 Node object. An unparsable quantity counts as absent; an unparsable
 * reservation annotation counts as no reservation (upstream logs and ignores it). Returns 0, or
 * -EINVAL when node is not an object.
 */
int qos_node_from_json(const cJSON *node, struct qos_node *ret);

/*
 * Reserved CPU of the node (upstream GetNodeResourceReserved, cpu): the larger of the kubelet
 * reservation max(capacity - allocatable, 0) and the annotation's cpu. Milli-cores.
 */
int64_t qos_node_reserved_cpu_milli(const struct qos_node *n);

/* ---- CPU sets ---- */

/* CPU sets are the cgroup part's (struct cg_cpuset, agent/cgroup/resource.h). */

/*
 * Parses a cpulist as k8s.io/utils/cpuset.Parse does (annotations): the kernel's grammar of
 * cg_cpuset_parse() without whitespace anywhere. 0 with *ret, -EINVAL for a malformed list,
 * -ERANGE for an id >= CG_CPUSET_MAX_CPUS. *ret is untouched on failure.
 */
int qos_cpuset_parse(const char *s, struct cg_cpuset *ret);

/* ---- Annotations shared by several strategies ---- */

/*
 * node.koordinator.sh/reservation (on the Node and on its NodeResourceTopology): `resources`
 * cpu and memory, cpu replaced by the number of CPUs of a non-empty `reservedCPUs`, which is
 * also returned as a set. Field names match case-insensitively (encoding/json).
 */
struct qos_reservation {
    int64_t cpu_milli;
    int64_t memory;
    struct cg_cpuset cpus; /* reservedCPUs */
};

/* Returns 0 with *ret (NULL annotation: all zero), or -EINVAL (malformed JSON, quantity or
 * cpulist; *ret is then all zero: upstream ignores the whole annotation). */
int qos_reservation_parse(const char *annotation, struct qos_reservation *ret);

/*
 * node.koordinator.sh/system-qos-resource {"cpuset": "0-3", "cpusetExclusive": bool}: the SYSTEM
 * QoS cpuset when it is exclusive (cpusetExclusive absent means true), else empty. Returns 0
 * with *ret (NULL annotation: empty), -EINVAL (malformed; *ret empty).
 */
int qos_system_qos_exclusive_cpus(const char *annotation, struct cg_cpuset *ret);

/*
 * The `cpuset` of scheduling.koordinator.sh/resource-status. Returns 1 with *ret when the
 * annotation names a non-empty cpuset, 0 when it names none (absent annotation or field, ""),
 * -EINVAL when the JSON or the cpulist is malformed (*ret empty).
 */
int qos_resource_status_cpus(const char *annotation, struct cg_cpuset *ret);

/* An optional integer setting (a Go *int64 field): set == false means nil. */
struct qos_opt {
    bool set;
    int64_t value;
};

#endif
