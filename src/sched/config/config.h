/*
 * KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1; reference scheduler.md 7): the
 * file `koord scheduler --config` reads, YAML or JSON, with upstream's field names, defaults,
 * plugin-set merging over the default plugins and multiPoint expansion
 * (pkg/scheduler/apis/config/v1/default_plugins.go mergePluginSet,
 * pkg/scheduler/framework/runtime/framework.go expandMultiPointPlugins). Every error names its
 * field path ("profiles[0].plugins.score.enabled[1].name: Invalid value: ...") and the file is
 * refused as a whole: the scheduler does not start on a configuration it half understood.
 *
 * Plugin args are validated by instantiating each enabled plugin once (its init reports bad
 * fields under "profiles[i].pluginConfig[j].args").
 */
#ifndef KOORD_SCHED_CONFIG_H
#define KOORD_SCHED_CONFIG_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;

/* Extension points, in the order a pod meets them. */
enum sched_point {
    SCHED_PT_PRE_ENQUEUE,
    SCHED_PT_QUEUE_SORT,
    SCHED_PT_PRE_FILTER,
    SCHED_PT_FILTER,
    SCHED_PT_POST_FILTER,
    SCHED_PT_PRE_SCORE,
    SCHED_PT_SCORE,
    SCHED_PT_RESERVE,
    SCHED_PT_PERMIT,
    SCHED_PT_PRE_BIND,
    SCHED_PT_BIND,
    SCHED_PT_POST_BIND,
    SCHED_PT_COUNT,
};

/* "preEnqueue", "queueSort", ... as the configuration spells them. */
const char *sched_point_name(enum sched_point p);
/* "PreEnqueue", "QueueSort", ... as metrics label them. */
const char *sched_point_label(enum sched_point p);

struct sched_plugin_ref {
    int id;         /* registry id */
    int32_t weight; /* score weight (1 when unset); 0 elsewhere */
};

struct sched_profile_config {
    char *scheduler_name;
    int percentage_of_nodes_to_score; /* -1: the global value */
    struct sched_plugin_ref *points[SCHED_PT_COUNT];
    size_t npoints[SCHED_PT_COUNT];
    cJSON *args[64]; /* per registry id: the args object given (owned), or NULL for defaults */
};

struct sched_config {
    int parallelism;                   /* 16 */
    int percentage_of_nodes_to_score;  /* 0: adaptive */
    int pod_initial_backoff_s;         /* 1 */
    int pod_max_backoff_s;             /* 10 */
    bool leader_elect;                 /* true */
    char *lease_namespace;             /* kube-system (koord default: koordinator-system) */
    char *lease_name;                  /* kube-scheduler (koord default: koord-scheduler) */
    long lease_ms, renew_ms, retry_ms; /* 15000, 10000, 2000 */
    double qps;                        /* 50 */
    int burst;                         /* 100 */
    char *kubeconfig;                  /* clientConnection.kubeconfig; NULL: unset */
    struct sched_profile_config *profiles;
    size_t nprofiles;
};

/*
 * The configuration without a file: one profile named name ("koord-scheduler") with the
 * default plugins, and a second one per extra name (NULL-terminated, may be NULL), leader
 * election on koordinator-system/koord-scheduler.
 */
struct sched_config *sched_config_default(const char *name, const char *const *extra_names);

/*
 * Parses a KubeSchedulerConfiguration (YAML or JSON text). 0 and *ret; -EINVAL with every
 * problem appended to err, one per line, each "<field path>: <what is wrong>"; -ENOMEM.
 */
int sched_config_parse(const char *text, size_t len, struct sched_config **ret, struct strbuf *err);

void sched_config_free(struct sched_config *c);

/* The profile for a schedulerName, or NULL. */
const struct sched_profile_config *sched_config_profile(const struct sched_config *c,
                                                        const char *scheduler_name);

#endif
