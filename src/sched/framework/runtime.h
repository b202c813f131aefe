/*
 * The framework runtime: one instance per profile, holding the profile's plugin instances per
 * extension point and running them with upstream's aggregation rules (kube-scheduler
 * framework/runtime/framework.go; reference scheduler.md 1.1-1.4): PreFilter results
 * intersected, Filter stopping at a node's first failure, Score weighted and normalised,
 * Reserve/Unreserve in order and reverse order, Bind until one does not Skip. Filter and Score
 * fan out over nodes on a small worker pool (parallel.h).
 *
 * The cycle itself (which nodes, how many, which host) is in ../schedule_one.c.
 */
#ifndef KOORD_SCHED_FRAMEWORK_RUNTIME_H
#define KOORD_SCHED_FRAMEWORK_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

struct sched_profile_config;
struct sched_pool;
struct sched_metrics;
struct field_errors;

struct sched_framework_opts {
    struct kube_client *client;     /* may be NULL (tests) */
    struct kube_recorder *recorder; /* may be NULL */
    struct sched_pool *pool;        /* borrowed; NULL runs everything on the caller */
    struct sched_metrics *metrics;  /* may be NULL */
    /* The pods nominated to a node (new references), for Filter with nominated pods. */
    size_t (*nominated)(void *userdata, const char *node, struct sched_pod ***ret);
    /* What sched_handle_add_informer / _cluster_event / _activate do; NULL: nothing. */
    void (*add_informer)(void *userdata, struct kube_informer *inf);
    void (*cluster_event)(void *userdata, const char *label, const char *resource,
                          unsigned actions);
    void (*activate)(void *userdata, const char *const *keys, size_t n);
    struct sched_rcache *reservations; /* borrowed; NULL: none */
    bool (*leading)(void *userdata);   /* NULL: always */
    void *userdata;
};

struct sched_framework;

/* Instantiates every plugin of the profile. 0, or -EINVAL with errs filled (bad args). */
int sched_framework_new(const struct sched_profile_config *pc,
                        const struct sched_framework_opts *opts, struct sched_framework **ret,
                        struct field_errors *errs);
void sched_framework_free(struct sched_framework *fw);

const char *sched_framework_name(const struct sched_framework *fw);
int sched_framework_percentage(const struct sched_framework *fw); /* -1: global */
struct sched_handle *sched_framework_handle(struct sched_framework *fw);
/* Sets the snapshot the next cycle's plugins read through the handle. */
void sched_framework_set_snapshot(struct sched_framework *fw, const struct sched_snapshot *s);
/* Whether the profile has Score plugins / PostFilter plugins. */
bool sched_framework_has_score(const struct sched_framework *fw);
bool sched_framework_has_post_filter(const struct sched_framework *fw);
/* The registry-id mask of the plugins enabled at any point. */
uint64_t sched_framework_plugins(const struct sched_framework *fw);
/* Whether a plugin of mask (0: any enabled one) registered for (resource, actions). */
bool sched_framework_interested(const struct sched_framework *fw, uint64_t mask,
                                const char *resource, unsigned actions);

/* The informer events of sched_plugin.pod_event / node_event, to every enabled plugin. */
void sched_framework_pod_event(struct sched_framework *fw, const struct sched_pod *pod, bool gone);
void sched_framework_node_event(struct sched_framework *fw, const struct sched_node *node,
                                bool gone);

/* PreEnqueue: first rejection wins; *ret_plugin = its id. */
enum sched_code sched_framework_pre_enqueue(struct sched_framework *fw, const struct sched_pod *pod,
                                            int *ret_plugin, struct sched_status *st);
/* QueueSort. */
bool sched_framework_less(struct sched_framework *fw, const struct sched_pod *a, double ta,
                          const struct sched_pod *b, double tb);

/*
 * PreFilter (1.3): *res the intersection of the plugins' node sets; on rejection st holds the
 * status (plugin set) and *ret_mask the rejecting plugin's bit.
 */
enum sched_code sched_framework_pre_filter(struct sched_framework *fw, struct sched_cycle *cs,
                                           const struct sched_pod *pod,
                                           struct sched_prefilter_result *res,
                                           struct sched_status *st, uint64_t *ret_mask);
void sched_prefilter_result_release(struct sched_prefilter_result *r);

/* Filter on one node, plugins in order, first failure ends (no nominated pods). */
enum sched_code sched_framework_filter(struct sched_framework *fw, struct sched_cycle *cs,
                                       const struct sched_pod *pod,
                                       const struct sched_node_info *ni, struct sched_status *st);
/* Filter with the pods nominated to the node (1.4). */
enum sched_code sched_framework_filter_nominated(struct sched_framework *fw, struct sched_cycle *cs,
                                                 const struct sched_pod *pod,
                                                 const struct sched_node_info *ni,
                                                 struct sched_status *st);

/*
 * What Filter runs in one cycle, worked out once per cycle rather than once per node (the loop
 * over the profile's plugins and the queue's nominations were a third of SchedulingBasic's
 * Filter): the plugins PreFilter did not skip, in order, and whether any pod is nominated
 * anywhere (the caller asks its queue once; without nominations no node is looked up). Valid
 * for cs, and its clones, after PreFilter.
 */
struct fw_plugin;
struct sched_filter_plan {
    const struct fw_plugin *v[SCHED_MAX_PLUGINS];
    size_t n;
    bool nominations;
};

void sched_framework_filter_plan(const struct sched_framework *fw, const struct sched_cycle *cs,
                                 bool nominations, struct sched_filter_plan *ret);
/*
 * Filter over n nodes at once (n <= SCHED_FILTER_NODES_MAX), plugin by plugin: codes[i] and
 * st[i] (zeroed by the caller) are what sched_framework_filter_planned() gives node i. Without
 * nominations the plugins' loop runs once per plugin and chunk rather than once per node.
 */
#define SCHED_FILTER_NODES_MAX 64
void sched_framework_filter_nodes(struct sched_framework *fw, const struct sched_filter_plan *plan,
                                  struct sched_cycle *cs, const struct sched_pod *pod,
                                  struct sched_node_info *const *ni, size_t n,
                                  struct sched_status *st, enum sched_code *codes);
/* sched_framework_filter_nominated() under a plan. */
enum sched_code sched_framework_filter_planned(struct sched_framework *fw,
                                               const struct sched_filter_plan *plan,
                                               struct sched_cycle *cs, const struct sched_pod *pod,
                                               const struct sched_node_info *ni,
                                               struct sched_status *st);

/* PostFilter: until the first Success, Error or Unresolvable. */
enum sched_code sched_framework_post_filter(struct sched_framework *fw, struct sched_cycle *cs,
                                            const struct sched_pod *pod,
                                            const struct sched_node_statuses *m,
                                            struct sched_post_filter_result *res,
                                            struct sched_status *st);

/*
 * PreScore, Score, NormalizeScore and weights over nodes[0..n): totals into scores (n
 * entries, ni set by the caller). A failure is an Error status in st.
 */
enum sched_code sched_framework_score(struct sched_framework *fw, struct sched_cycle *cs,
                                      const struct sched_pod *pod, struct sched_node_score *scores,
                                      size_t n, struct sched_status *st);

enum sched_code sched_framework_reserve(struct sched_framework *fw, struct sched_cycle *cs,
                                        const struct sched_pod *pod, const char *node,
                                        struct sched_status *st);
void sched_framework_unreserve(struct sched_framework *fw, struct sched_cycle *cs,
                               const struct sched_pod *pod, const char *node);
/* Permit: Wait is turned into a rejection after the longest timeout unless every waiting
 * plugin allows (koord's plugins of this issue never wait). */
enum sched_code sched_framework_permit(struct sched_framework *fw, struct sched_cycle *cs,
                                       const struct sched_pod *pod, const char *node,
                                       struct sched_status *st);
enum sched_code sched_framework_pre_bind(struct sched_framework *fw, struct sched_cycle *cs,
                                         const struct sched_pod *pod, const char *node,
                                         struct sched_status *st);
enum sched_code sched_framework_bind(struct sched_framework *fw, struct sched_cycle *cs,
                                     const struct sched_pod *pod, const char *node,
                                     struct sched_status *st);
void sched_framework_post_bind(struct sched_framework *fw, struct sched_cycle *cs,
                               const struct sched_pod *pod, const char *node);

#endif
