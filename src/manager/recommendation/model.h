/*
 * The Recommendation controller's model, without I/O so that it can be tested by hand-computed
 * cases: VPA's aggregate container state (a CPU and a memory decaying histogram per container
 * name of one Recommendation, fed from all its pods), the per-pod-container memory peak window,
 * the estimate (percentile, safety margin, per-pod minimums split over the containers), the
 * proportional limits, the target's pod matching, and the checkpoint and status documents.
 * docs/recommendation.md describes the algorithm and cites VPA for every constant.
 */
#ifndef KOORD_MANAGER_RECOMMENDATION_MODEL_H
#define KOORD_MANAGER_RECOMMENDATION_MODEL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "manager/recommendation/histogram.h"

struct strbuf;

/* VPA recommender defaults (docs/recommendation.md cites each). */
#define REC_DEFAULT_HALF_LIFE_S    86400 /* cpu and memory histogram half-life: 24 h */
#define REC_DEFAULT_MEM_INTERVAL_S 86400 /* one memory peak per 24 h per container */
#define REC_DEFAULT_PERCENTILE     0.9   /* target cpu and memory percentile */
#define REC_DEFAULT_MARGIN         0.15  /* safety margin fraction */
#define REC_DEFAULT_POD_MIN_CPU_M  25    /* per pod, split over its containers */
#define REC_DEFAULT_POD_MIN_MEM_MB 250   /* MiB: VPA multiplies its "MB" by 1024 x 1024 */
#define REC_DEFAULT_MIN_SAMPLES    10    /* koord's: CPU samples before a first recommendation */

struct rec_params {
    int64_t cpu_half_life, mem_half_life, mem_interval; /* seconds */
    double cpu_percentile, mem_percentile, margin;
    int64_t pod_min_cpu_milli, pod_min_mem_bytes;
    unsigned long min_samples;
};

/* Fills the defaults above. */
void rec_params_default(struct rec_params *p);

/* One container name of one Recommendation (VPA's AggregateContainerState). */
struct rec_agg {
    struct rec_hist cpu;               /* cores, weighted by max(request, 0.1) */
    struct rec_hist mem;               /* bytes: one peak per pod container per interval */
    int64_t first_sample, last_sample; /* CPU sample times (unix s); 0 = none */
    unsigned long samples;             /* CPU samples */
};

/* One container of one pod (VPA's ContainerState): what the memory peak needs. */
struct rec_cstate {
    int64_t last_cpu, last_mem; /* last sample times taken; older ones are dropped */
    int64_t window_end;         /* end of the current memory interval; 0 = none yet */
    double peak;                /* memory peak added for the current interval */
};

void rec_agg_init(struct rec_agg *a, const struct rec_params *p);
void rec_agg_release(struct rec_agg *a);

/* A CPU usage sample of cores at t by a container requesting request_cores: added with weight
 * max(request, 0.1) unless t is not after the container's last one. Whether it was taken. */
bool rec_agg_add_cpu(struct rec_agg *a, struct rec_cstate *c, double cores, double request_cores,
                     int64_t t);
/* A memory usage sample: the container's peak of the interval holding t replaces its previous
 * peak of that interval in the histogram (weight 1 at the interval's end); a sample past the
 * interval opens the next one (intervals are aligned on the first sample's time). */
bool rec_agg_add_memory(struct rec_agg *a, struct rec_cstate *c, double bytes, int64_t t,
                        int64_t interval);

/* The checkpoint of one container (VPA's VerticalPodAutoscalerCheckpointStatus fields):
 * {containerName, cpuHistogram, memoryHistogram, firstSampleStart, lastSampleStart,
 * totalSamplesCount}. */
cJSON *rec_agg_save(const struct rec_agg *a, const char *container);
/* Loads it into a fresh aggregate. 0 or -EINVAL with why. */
int rec_agg_load(struct rec_agg *a, const cJSON *ckpt, struct strbuf *why);

/* The target request of a container: p-th percentiles, x (1 + margin), at least the pod
 * minimums / ncontainers; VPA's integer truncations (millicores, bytes) at each step. */
struct rec_estimate {
    int64_t cpu_milli;
    int64_t mem_bytes;
};
void rec_estimate(const struct rec_agg *a, const struct rec_params *p, size_t ncontainers,
                  struct rec_estimate *ret);

/* VPA's proportional limit: original limit x recommended / original request (truncated);
 * 0 (= no limit) when the original has no limit; the recommendation itself when the original
 * has no request or a limit equal to it. In millicores or bytes. */
int64_t rec_proportional_limit(int64_t orig_limit, int64_t orig_request, int64_t recommended);

/* A container of a target pod: requests and limits in millicores / bytes (0 = unset). */
struct rec_container {
    char name[64];
    int64_t cpu_req_m, cpu_lim_m, mem_req, mem_lim;
};
/* The regular containers of a pod (init containers are not recommended for), into *ret
 * (free()); returns the count. Names longer than 63 bytes are skipped (not a DNS label). */
size_t rec_pod_containers(const cJSON *pod, struct rec_container **ret);

/* Shares of a pod's usage per container when only the pod's usage is reported: in proportion
 * to the containers' requests of that resource, equal when none requests it. out[n]. */
void rec_split(const struct rec_container *cs, size_t n, bool cpu, double *out);

/* The workload form: whether pod's controller owner is kind/name (api_version's group, when
 * given, must match the owner's). */
bool rec_owned_by(const cJSON *pod, const char *api_version, const char *kind, const char *name);
/* The controller owner of an object: kind and name, or false. */
bool rec_controller_of(const cJSON *obj, const char **kind, const char **name);

/* Where a workload kind is served: its apiVersion (the given one, else apps/v1 for Deployment,
 * StatefulSet, ReplicaSet, DaemonSet, batch/v1 for Job and CronJob, else NULL) and plural (the
 * lower-case kind + "s"). false when it cannot tell. */
bool rec_workload_resource(const char *api_version, const char *kind, char *group, size_t gsize,
                           char *version, size_t vsize, char *plural, size_t psize);

/* One condition for the status. */
struct rec_condition {
    const char *type, *status, *reason;
    char message[256];
};

/*
 * The status to write: podStatus.containerStatuses (names sorted; resources cpu/memory = the
 * requests, limits.cpu/limits.memory when limits apply; absent when res is NULL), updateTime =
 * now, conditions (lastTransitionTime kept from old's condition of the same type and status,
 * else now). old is the current status (may be NULL).
 */
struct rec_result {
    const char *container;
    struct rec_estimate req;
    int64_t cpu_lim_m, mem_lim; /* 0 = none */
};
cJSON *rec_build_status(const struct rec_result *res, size_t n, const struct rec_condition *conds,
                        size_t ncond, const cJSON *old, int64_t now);

/* Whether two statuses differ in what rec_build_status() decides (podStatus, the conditions'
 * type/status/reason/message): updateTime and transition times do not count. */
bool rec_status_changed(const cJSON *old, const cJSON *next);

#endif
