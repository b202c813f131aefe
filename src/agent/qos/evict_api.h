/*
 * Eviction through the API server (koordlet --only-evict-by-api=true; reference
 * koordlet-and-scheduler.md section 4; upstream qosmanager/helpers/operation.go, evictor.go):
 * a policy/v1 Eviction POSTed to pods/<name>/eviction with the pod's UID as precondition (so a
 * pod recreated under the same name is not hit), a Warning Event on the pod (reason
 * evictPodSuccess or evictPodFail, source component koordlet-qosManager, the message of
 * qos_evict_event_message()), and the 2-minute memory of evicted UIDs the eviction rounds count
 * as "already being released".
 *
 * A pod a BE strategy (BEMemoryEvict, BECPUEvict) names is evicted only when it is labelled
 * koordinator.sh/qosClass=BE: the victim lists guarantee it, and this last gate refuses anything
 * else with -EPERM rather than evict a latency-sensitive pod through a bug upstream of it.
 *
 * Rate limiting is the strategies' (cool-downs, per-round targets); the kube client's token
 * bucket spaces the requests. One thread at a time (the QoS runner's).
 */
#ifndef KOORD_AGENT_QOS_EVICT_API_H
#define KOORD_AGENT_QOS_EVICT_API_H

#include <stdint.h>

#include "agent/qos/evict.h"
#include "agent/qos/qos.h"

struct kube_client;
struct kube_recorder;

struct qos_evict_api_opts {
    struct kube_client *client;     /* borrowed; required */
    struct kube_recorder *recorder; /* borrowed; NULL: no Events (its component should be
                                     * QOS_EVICT_EVENT_COMPONENT) */
};

/* The counters of qos_evict_api_evict(). */
struct qos_evict_api_stats {
    uint64_t evicted; /* Eviction accepted */
    uint64_t failed;  /* Eviction refused or not sent */
    uint64_t refused; /* non-BE pod named by a BE feature (-EPERM) */
    uint64_t recent;  /* skipped: evicted less than 2 minutes ago */
    uint64_t events;  /* Events recorded */
    uint64_t event_errors;
};

struct qos_evict_api;

/* Copies opts. 0, -EINVAL (no client). */
int qos_evict_api_new(const struct qos_evict_api_opts *opts, struct qos_evict_api **ret);
void qos_evict_api_free(struct qos_evict_api *a);

/*
 * Evicts pod for feature at now_ms (milliseconds of the clock the runner ticks with):
 *  - -EPERM when feature is a BE feature and the pod is not labelled BE (nothing sent);
 *  - -EINVAL when the pod lacks namespace, name or UID;
 *  - -EALREADY when its UID was evicted less than 2 minutes ago (nothing sent);
 *  - otherwise POSTs the Eviction; on success remembers the UID and returns 0, else returns the
 *    client's error (-ENOENT: gone, -ESTALE: UID precondition failed, -EAGAIN: 429 from a
 *    disruption budget, ...). Either way a Warning Event is recorded (its own failure is only
 *    counted).
 * The signature matches qos_runner_evict_fn (ctx is the struct qos_evict_api).
 */
int qos_evict_api_evict(void *ctx, const char *feature, const struct qos_pod *pod, int64_t now_ms);

/* The recently evicted UIDs (for qos_runner_opts.recent); valid until qos_evict_api_free(). */
const struct qos_evicted *qos_evict_api_recent(const struct qos_evict_api *a);

void qos_evict_api_stats(const struct qos_evict_api *a, struct qos_evict_api_stats *ret);

#endif
