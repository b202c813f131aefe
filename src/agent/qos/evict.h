/*
 * The eviction mechanism shared by the memory and CPU evictors (reference
 * koordlet-and-scheduler.md section 4; upstream qosmanager/plugins/util/evict.go, evictor.go):
 * the per-pod eviction-policy annotation, the 2-minute memory of recently evicted pods, the
 * Event text, and the round that walks evict tasks in order, victim by victim, until each
 * task's release target is met.
 *
 * A task is what one feature (BEMemoryEvict, CPUEvict, ...) wants released, in one of three
 * accounting kinds: pod usage, pod requests, or BE batch-cpu requests. Tasks of the same kind
 * share one running total, so what an earlier task released counts for a later one.
 */
#ifndef KOORD_AGENT_QOS_EVICT_H
#define KOORD_AGENT_QOS_EVICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/qos/qos.h"

struct strbuf;

/* Feature names, as the eviction-policy annotation and the Event text spell them. */
#define QOS_FEATURE_BE_CPU_EVICT             "BECPUEvict"
#define QOS_FEATURE_BE_MEMORY_EVICT          "BEMemoryEvict"
#define QOS_FEATURE_CPU_EVICT                "CPUEvict"
#define QOS_FEATURE_MEMORY_EVICT             "MemoryEvict"
#define QOS_FEATURE_CPU_ALLOCATABLE_EVICT    "CPUAllocatableEvict"
#define QOS_FEATURE_MEMORY_ALLOCATABLE_EVICT "MemoryAllocatableEvict"

/* Event reasons and source of an API eviction (--only-evict-by-api). */
#define QOS_EVICT_EVENT_SUCCESS   "evictPodSuccess"
#define QOS_EVICT_EVENT_FAIL      "evictPodFail"
#define QOS_EVICT_EVENT_COMPONENT "koordlet-qosManager"
/* The release reason every evictor passes ("reason: evicted" in the Event text). */
#define QOS_EVICT_REASON "evicted"

/*
 * Whether annotation koordinator.sh/eviction-policy (NULL: absent) lets feature evict the pod
 * (upstream IsEvictionPolicyAllowed): absent allows every feature; otherwise the value must be a
 * JSON array of strings that contains feature. Anything unparsable as a string array (not JSON,
 * an object, an element that is not a string) allows none; "null" is an empty list (none).
 */
bool qos_evict_policy_allows(const char *annotation, const char *feature);

/* "trigger by koordlet feature <feature>, kill pod: <pod_name>": the message an evictor passes. */
void qos_evict_message(const char *feature, const char *pod_name, struct strbuf *out);

/*
 * The Warning Event's message, as upstream's Evictor writes it:
 * "evict Pod:<ns>/<name>, reason: <reason>, message: <message>", with ", error <error>" appended
 * when error is not NULL (the evictPodFail event).
 */
void qos_evict_event_message(const char *ns, const char *name, const char *reason,
                             const char *message, const char *error, struct strbuf *out);

/* ---- recently evicted pods ---- */

/* How long an evicted UID is remembered (upstream's expire cache default). */
#define QOS_EVICTED_TTL_MS 120000

struct qos_evicted_entry {
    char *uid;
    int64_t expire_ms;
};

/* UIDs evicted through the API in the last QOS_EVICTED_TTL_MS; caller-owned storage. */
struct qos_evicted {
    struct qos_evicted_entry *v;
    size_t n;
    size_t alloc;
};

void qos_evicted_init(struct qos_evicted *e);
/* Frees every entry; e is empty (and initialised) afterwards. */
void qos_evicted_release(struct qos_evicted *e);

/*
 * Remembers uid as evicted at now_ms, until now_ms + QOS_EVICTED_TTL_MS (inclusive); adding a
 * UID again restarts its time. Drops expired entries first. Returns 0, -EINVAL (uid NULL or
 * empty, or longer than 256 bytes), -ENOMEM (checked allocation; e unchanged).
 */
int qos_evicted_add(struct qos_evicted *e, const char *uid, int64_t now_ms);

/* Whether uid was evicted and has not expired at now_ms (expired: now_ms > expiry). */
bool qos_evicted_contains(const struct qos_evicted *e, const char *uid, int64_t now_ms);

/* Drops the entries expired at now_ms. */
void qos_evicted_expire(struct qos_evicted *e, int64_t now_ms);

/* ---- eviction rounds ---- */

/* How a task accounts what it releases (upstream ReleaseTargetType). */
enum qos_release_target {
    QOS_RELEASE_USED,          /* the victims' usage */
    QOS_RELEASE_REQUEST,       /* the victims' requests (the allocatable evictors) */
    QOS_RELEASE_BATCH_REQUEST, /* the victims' batch-cpu requests (BECPUEvict) */
    QOS_RELEASE_TARGET_COUNT,
};

/* One candidate of a task, with the keys the evictor sorted it by. */
struct qos_evict_victim {
    const struct qos_pod *pod;
    int64_t used;           /* the usage sample in the task's unit (bytes, milli-cores); 0: none */
    int64_t request;        /* the task's request measure (class request, batch-cpu request) */
    int32_t priority;       /* qos_pod_priority_value() */
    int64_t label_priority; /* label koordinator.sh/priority, default the priority value */
    double usage_ratio;     /* BECPUEvict: used / batch-cpu request, 0 without request */
};

struct qos_evict_task {
    const char *feature;
    enum qos_release_target target;
    /* What to release, by resource name; entries <= 0 ask for nothing. A task whose entries are
     * all <= 0 is skipped and adds nothing to the accounting of others. */
    struct qos_resources release;
    /* QOS_RELEASE_USED: the name a victim's `used` counts under (QOS_RES_MEMORY or _CPU). */
    enum qos_res used_res;
    /* QOS_RELEASE_REQUEST: which request (QOS_RES_MEMORY or _CPU, mapped to the pod's class by
     * qos_pod_class_request()) and for which raw priority classes it counts, as bits
     * (1u << enum api_priority); other pods release nothing toward it. */
    enum qos_res request_res;
    uint32_t request_classes;
    const struct qos_evict_victim *victims; /* in eviction order */
    size_t nvictims;
};

/*
 * Evicts one pod for task; returns whether it was evicted (or killed). It runs the caller's
 * mechanism (CRI stop, Eviction API call plus Event, qos_evicted_add()).
 */
typedef bool (*qos_evict_fn)(void *ctx, const struct qos_evict_task *task,
                             const struct qos_pod *pod);

struct qos_evict_result {
    struct qos_resources released[QOS_RELEASE_TARGET_COUNT];
    size_t nevicted; /* pods evicted in this round: when > 0 the cool-down restarts */
    size_t nrecent;  /* recently evicted pods counted as being released, not evicted again */
};

/*
 * One eviction round (upstream KillAndEvictPods). Tasks run in the given order. A task whose
 * target is already met by the round's running total of its kind is skipped; otherwise its
 * victims are taken in order until the total meets every positive entry of its release:
 *  - a pod already handled this round (same UID) is passed over;
 *  - a pod evicted less than 2 minutes ago (in recent, which may be NULL) is not evicted again,
 *    but what it releases is counted as "already being released" (reference section 4);
 *  - any other is evicted through evict(); a failure counts nothing and the next is tried.
 * A pod evicted or counted adds, for every kind used by a non-empty task, the largest
 * contribution any such task assigns it: its `used` under used_res for USED tasks, its class
 * request for REQUEST tasks whose classes include the pod's raw priority class, its batch-cpu
 * request (under QOS_RES_CPU) for BATCH_REQUEST tasks.
 *
 * Not copied from upstream (the version the reference describes predates both):
 *  - newer upstream skips recently evicted pods without counting them; the reference counts
 *    them, which keeps pods that are still terminating from causing extra evictions;
 *  - newer upstream tests "done" as (to release - already released) - released, counting an
 *    earlier task's release twice; here a task is done when the running total reaches its own
 *    target, as the reference states.
 * Pods are identified by UID (upstream keys its per-round map by namespace/name).
 *
 * Returns 0 with *ret; -ENOMEM (checked allocation, before any eviction).
 */
int qos_evict_run(const struct qos_evict_task *tasks, size_t ntasks,
                  const struct qos_evicted *recent, int64_t now_ms, qos_evict_fn evict, void *ctx,
                  struct qos_evict_result *ret);

#endif
