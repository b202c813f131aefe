/*
 * The scheduling framework (kube-scheduler pkg/scheduler/framework/interface.go, reference
 * scheduler.md 1): extension points, statuses, the per-cycle state, NodeInfo and the snapshot a
 * cycle reads, and the plugin table every plugin fills in. A plugin is a
 * `const struct sched_plugin` with NULL for the points it does not implement, registered by name
 * in plugins/registry.c; a profile (profile.h) instantiates it with its args.
 *
 * Plugins' filter and score callbacks are pure functions of (pod, NodeInfo, cycle state, args)
 * and run in parallel over nodes on the framework's workers: they must not write shared state
 * other than through atomics. Everything a plugin computes once per cycle goes into the cycle
 * state in PreFilter / PreScore.
 */
#ifndef KOORD_SCHED_FRAMEWORK_H
#define KOORD_SCHED_FRAMEWORK_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched/framework/types.h"

struct strbuf;
struct field_errors;

/* ---- status (interface.go Code) ---- */

enum sched_code {
    SCHED_SUCCESS = 0,
    SCHED_ERROR = 1,
    SCHED_UNSCHEDULABLE = 2,
    SCHED_UNRESOLVABLE = 3, /* UnschedulableAndUnresolvable */
    SCHED_WAIT = 4,
    SCHED_SKIP = 5,
    SCHED_PENDING = 6,
};

const char *sched_code_name(enum sched_code c); /* "Success", "Unschedulable", ... */

static inline bool sched_code_is_rejected(enum sched_code c)
{
    return c == SCHED_UNSCHEDULABLE || c == SCHED_UNRESOLVABLE || c == SCHED_PENDING;
}

/*
 * A status: its code, the plugin that returned it (set by the framework) and its reasons. The
 * reasons are kept NUL-separated in one owned buffer; sched_status_message() joins them with
 * ", " as Status.Message() does. A zeroed struct is Success with no reasons.
 */
struct sched_status {
    const char *plugin; /* static name, or NULL */
    char *buf;          /* n reasons, each NUL-terminated, back to back */
    size_t len;
    enum sched_code code;
    unsigned n;
};

/* Appends one reason (printf-style). Never fails (aborts on OOM). */
void sched_status_add(struct sched_status *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Sets code and one reason; returns code (so `return sched_status_set(st, ..., "...");`). */
enum sched_code sched_status_set(struct sched_status *s, enum sched_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The i-th reason. */
const char *sched_status_reason(const struct sched_status *s, unsigned i);
/* The reasons joined with ", " into out. */
void sched_status_message(const struct sched_status *s, struct strbuf *out);
/* Moves src into dst (dst released first); src is left zeroed. */
void sched_status_move(struct sched_status *dst, struct sched_status *src);
void sched_status_release(struct sched_status *s);

/* ---- NodeInfo (framework/types.go NodeInfo) ---- */

struct sched_port_use {
    char ip[48];
    int32_t port;
    uint8_t protocol;
};

/*
 * A NodeInfo's pods live in chunks of SCHED_POD_CHUNK, shared between copies and copied on
 * write: a snapshot's copy of a node with 40,000 pods costs the chunk pointers, not the pods,
 * and the cache's next change copies one or two chunks. Every chunk is full but the last.
 */
#define SCHED_POD_CHUNK 64

struct sched_pod_chunk {
    _Atomic int refs;
    unsigned n;
    struct sched_pod *v[SCHED_POD_CHUNK]; /* references */
};

/*
 * A cycle visits hundreds of NodeInfos once each, so what it costs is the cache lines it touches
 * per node, fetched from memory (the API server on the other core evicts them between cycles).
 * The first 64 bytes hold what the default plugins' Filter and Score read for a pod asking for
 * cpu and memory, the node's fields among them copied from the node (set_node keeps them); the
 * second line starts with the plugins' memos and the cpu and memory requested; NodeInfos are
 * 64-byte aligned, so one node costs two adjacent lines, which the hardware fetches as a pair,
 * instead of five scattered ones. A plugin that keeps a per-node record makes it one line and
 * memoises it (sched_node_memo_get()): the Score loop prefetches memos' targets too.
 */
#define SCHED_CACHE_LINE 64

/*
 * A plugin's per-node memo: a pointer the plugin keeps about a node (LoadAwareScheduling: its
 * record of the node's NodeMetric), so that Filter and Score need not look the node up by name
 * for every pod they place. Such a lookup cost four cache misses per node and was a fifth of
 * the Koordinator profile's cycle. A memo names the node, not its state: it is copied with the
 * NodeInfo and must stay valid for as long as its plugin instance lives.
 *
 * Each plugin instance claims a slot with a key of its own (sched_node_memo_claim()); the key's
 * owner number is never reused, so a memo left in a NodeInfo by an instance that is gone is
 * never taken for a new one's. Only the instance that holds a slot writes it, and it always
 * writes the same pointer for the same node, so racing Filter and Score threads agree.
 */
#define SCHED_NODE_MEMOS 2

struct sched_node_info;

struct sched_node_memo {
    uint64_t owner; /* the key's owner, written after p (release) */
    void *p;
};

struct sched_memo_key {
    int slot; /* -1: no slot was free (the plugin looks nodes up every time) */
    uint64_t owner;
};

/* Claims a free slot (slot -1 when none is). */
void sched_node_memo_claim(struct sched_memo_key *k);
/* Asks for the memos' lines of ni (its memo line must have arrived: prefetch it earlier). */
void sched_node_memo_prefetch(const struct sched_node_info *ni);
/* Gives the slot back; NULL or a key without a slot are fine. */
void sched_node_memo_release(struct sched_memo_key *k);
/* The memo k's instance left in ni, or NULL. */
void *sched_node_memo_get(const struct sched_node_info *ni, const struct sched_memo_key *k);
/* Leaves p in ni for k's instance (a no-op without a slot). ni may be a NodeInfo the caller only
 * reads otherwise: the memo is not part of the node's state. */
void sched_node_memo_set(const struct sched_node_info *ni, const struct sched_memo_key *k, void *p);

struct sched_node_info {
    /* line 1 */
    struct sched_node *node; /* NULL while only pods name it */
    const char *name;        /* node->name, or the name the pods gave */
    size_t npods;
    int64_t nonzero_cpu, nonzero_mem; /* Σ pod requests with upstream's non-zero defaults */
    int64_t alloc_cpu, alloc_mem;     /* node->allocatable cpu and memory; 0 without a node */
    int32_t allowed_pods;             /* node->allowed_pods, saturated; 0 without a node */
    uint16_t ntaints;                 /* node->ntaints, saturated; 0 without a node */
    bool unschedulable;               /* node->unschedulable */
    /* line 2 onwards: the plugins' memos, the change counter (a plugin that memoises per node
     * reads it with the memo), then the requests (cpu and memory still in line 2) */
    struct sched_node_memo memo[SCHED_NODE_MEMOS]; /* sched_node_memo_get() */
    uint64_t generation;             /* the cache's change counter; 0 for a NodeInfo no cache keeps
                                      * (tests, a cycle's overrides), which nobody may memoise by it */
    struct sched_res requested;      /* Σ pod requests */
    struct sched_pod_chunk **chunks; /* read pods through sched_node_info_pod() */
    size_t nchunks, chunks_cap;
    size_t n_with_affinity;      /* pods with any pod (anti-)affinity */
    size_t n_with_required_anti; /* pods with required anti-affinity */
    struct sched_port_use *ports;
    size_t nports, ports_cap;
};

/* The i-th pod (i < npods), borrowed. */
static inline struct sched_pod *sched_node_info_pod(const struct sched_node_info *ni, size_t i)
{
    return ni->chunks[i / SCHED_POD_CHUNK]->v[i % SCHED_POD_CHUNK];
}

struct sched_node_info *sched_node_info_new(const char *name);
void sched_node_info_free(struct sched_node_info *ni);
/* A deep copy (pods and node by reference). */
struct sched_node_info *sched_node_info_clone(const struct sched_node_info *ni);
/* Makes dst a copy of src (same pointer, for the snapshot's lists; names must be equal). */
void sched_node_info_assign(struct sched_node_info *dst, const struct sched_node_info *src);
/* Replaces the node (takes a new reference; NULL clears it). */
void sched_node_info_set_node(struct sched_node_info *ni, struct sched_node *n);
/* Adds a pod (takes a reference) and its requests and ports. */
void sched_node_info_add_pod(struct sched_node_info *ni, struct sched_pod *p);
/* Removes the pod with p's uid; -ENOENT when absent. */
int sched_node_info_remove_pod(struct sched_node_info *ni, const struct sched_pod *p);
/*
 * Removes the pod at index i (the last pod moves there, so indexes of others are stable).
 * Returns the pod now at i (borrowed), or NULL when i was the last.
 */
struct sched_pod *sched_node_info_remove_pod_at(struct sched_node_info *ni, size_t i);

/* ---- the snapshot a cycle reads (cache/snapshot.go) ---- */

struct sched_snapshot {
    struct sched_node_info **nodes; /* every node with a Node object, in node-tree order */
    size_t nnodes;
    struct sched_node_info **with_affinity; /* nodes with pods having (anti-)affinity */
    size_t nwith_affinity;
    struct sched_node_info **with_required_anti;
    size_t nwith_required_anti;
    struct hmap *by_name; /* name -> struct sched_node_info *, every entry incl. pod-only ones */
    uint64_t generation;
};

/* The NodeInfo of a node, or NULL. */
struct sched_node_info *sched_snapshot_get(const struct sched_snapshot *s, const char *name);

/* ---- cycle state (framework/cycle_state.go) ---- */

/* A cycle-state entry's type: how to free and clone it. Key by the address of a static
 * struct sched_state_type of the plugin. */
struct sched_state_type {
    const char *name;
    void (*free)(void *data);
    void *(*clone)(const void *data); /* NULL: entry is read-only after PreFilter, shared */
};

struct sched_cycle;

struct sched_cycle *sched_cycle_new(void);
void sched_cycle_free(struct sched_cycle *cs);
/* A copy for a dry run (preemption, nominated pods): entries cloned through their type. */
struct sched_cycle *sched_cycle_clone(const struct sched_cycle *cs);
/* Stores data under type (replacing and freeing a previous entry). Takes ownership. */
void sched_cycle_write(struct sched_cycle *cs, const struct sched_state_type *type, void *data);
/* The data under type, or NULL. */
void *sched_cycle_read(const struct sched_cycle *cs, const struct sched_state_type *type);
/* Whether a plugin is skipped at Filter / Score this cycle (its PreFilter/PreScore said Skip). */
bool sched_cycle_skip_filter(const struct sched_cycle *cs, int plugin_id);
bool sched_cycle_skip_score(const struct sched_cycle *cs, int plugin_id);
/* The plugins skipped at Filter as registry-id bits, for a loop that asks per node. */
uint64_t sched_cycle_skip_filter_mask(const struct sched_cycle *cs);
void sched_cycle_set_skip_filter(struct sched_cycle *cs, int plugin_id);
/* Whether this cycle records per-plugin durations (the caller samples 10 % of cycles). */
bool sched_cycle_sampled(const struct sched_cycle *cs);
void sched_cycle_set_sampled(struct sched_cycle *cs);
void sched_cycle_set_skip_score(struct sched_cycle *cs, int plugin_id);

/*
 * A NodeInfo the cycle sees instead of the snapshot's, set in PreFilter (Koordinator's
 * BeforePreFilter "restore": on a node holding Reservations the pod may use, their reserved
 * resources count as free for this pod). ni is a clone of the snapshot's NodeInfo, changed as
 * the plugin needs; the cycle state takes it over (one per node: a second replaces the first).
 * Filter and Score then get it for that node. Not for dry-run copies.
 */
void sched_cycle_override_node(struct sched_cycle *cs, struct sched_node_info *ni);
/* (The override's generation is set to 0: its pods differ from the cache's under the same one.) */
/* The NodeInfo the cycle sees for a snapshot NodeInfo: its override, or ni itself. */
struct sched_node_info *sched_cycle_node(const struct sched_cycle *cs, struct sched_node_info *ni);

/* ---- what plugins can ask the framework (framework.Handle) ---- */

struct sched_handle;
struct kube_client;
struct kube_recorder;

/* The snapshot of the running cycle. */
const struct sched_snapshot *sched_handle_snapshot(const struct sched_handle *h);
/* The API client (NULL in unit tests). */
struct kube_client *sched_handle_client(const struct sched_handle *h);
struct kube_recorder *sched_handle_recorder(const struct sched_handle *h);
/* The profile's scheduler name. */
const char *sched_handle_profile_name(const struct sched_handle *h);
/*
 * Runs the profile's Filter plugins (with nominated pods, 1.4) for pod on ni with cs. Returns
 * the code; the failing status is moved into st (may be NULL).
 */
enum sched_code sched_handle_run_filters(struct sched_handle *h, struct sched_cycle *cs,
                                         const struct sched_pod *pod,
                                         const struct sched_node_info *ni, struct sched_status *st);
/* Runs the PreFilterExtensions AddPod / RemovePod of every PreFilter plugin. */
enum sched_code sched_handle_run_add_pod(struct sched_handle *h, struct sched_cycle *cs,
                                         const struct sched_pod *pod, struct sched_pod *add,
                                         struct sched_node_info *ni, struct sched_status *st);
enum sched_code sched_handle_run_remove_pod(struct sched_handle *h, struct sched_cycle *cs,
                                            const struct sched_pod *pod, struct sched_pod *rm,
                                            struct sched_node_info *ni, struct sched_status *st);
/*
 * A plugin's own watches. A plugin that needs objects other than pods and nodes (NodeMetrics,
 * Reservations, ElasticQuotas) creates its informer with sched_handle_client() in init, adds its
 * handlers, and hands it here: the scheduler starts it with its own informers, waits for it to
 * sync before the first cycle, and stops it before any plugin is freed (the plugin frees it in
 * its free callback). Without a client (unit tests, `--config` checks) plugins create none.
 */
struct kube_informer;
void sched_handle_add_informer(struct sched_handle *h, struct kube_informer *inf);
/*
 * An event on a plugin's objects (MoveAllToActiveOrBackoffQueue): the unschedulable pods that a
 * plugin registered for (resource, actions) rejected move on, as for node and pod events.
 * resource is the "<plural>.<version>.<group>" a plugin lists in its .events; label names the
 * event in scheduler_queue_incoming_pods_total. A no-op in unit tests.
 */
void sched_handle_cluster_event(struct sched_handle *h, const char *label, const char *resource,
                                unsigned actions);
/*
 * Pods (keys "namespace/name") to try at once: unschedulable and backing-off ones go to activeQ,
 * and gated ones run PreEnqueue again, so a plugin that gates pods in PreEnqueue (a full quota)
 * lets exactly the pods it knows may pass back in, without a scan of every waiting pod.
 */
void sched_handle_activate(struct sched_handle *h, const char *const *keys, size_t n);
/* The Reservations holding room on nodes (reservation/rcache.h); NULL when no profile runs
 * the Reservation plugin, and in unit tests that give none. */
struct sched_rcache;
struct sched_rcache *sched_handle_reservations(const struct sched_handle *h);
/*
 * Whether this scheduler is the one scheduling (it leads, or runs without leader election): a
 * plugin that writes to the API on its own (status write-back) does so only then, so that a
 * standby with warm informers does not write too. True without a scheduler (unit tests).
 */
bool sched_handle_leading(const struct sched_handle *h);
/* Pods nominated to a node (new references into *ret, free with sched_pods_free). */
size_t sched_handle_nominated(struct sched_handle *h, const char *node, struct sched_pod ***ret);
void sched_pods_free(struct sched_pod **v, size_t n);

/* ---- cluster events (internal/queue/events.go, framework/types.go) ---- */

enum sched_action {
    SCHED_ACT_ADD = 1,
    SCHED_ACT_DELETE = 2,
    SCHED_ACT_UPDATE_NODE_ALLOCATABLE = 4,
    SCHED_ACT_UPDATE_NODE_LABEL = 8,
    SCHED_ACT_UPDATE_NODE_TAINT = 16,
    SCHED_ACT_UPDATE_NODE_CONDITION = 32,
    SCHED_ACT_UPDATE_NODE_ANNOTATION = 64,
    SCHED_ACT_UPDATE = 4 | 8 | 16 | 32 | 64,
    SCHED_ACT_ALL = 127,
};

/* What an event is about: Pod, Node, or another GVK named "<plural>.<version>.<group>". */
struct sched_event_reg {
    const char *resource; /* "Pod", "Node", "*", or a GVK string; NULL ends a list */
    unsigned actions;     /* enum sched_action bits */
};

/* ---- plugin arguments ---- */

/*
 * Plugins decode their args themselves, reporting each bad field under path (e.g.
 * "profiles[0].pluginConfig[2].args") into errs as field errors: the scheduler refuses to start
 * and prints them all.
 */

/* ---- the plugin table ---- */

struct sched_node_score {
    struct sched_node_info *ni;
    int64_t score;
};

/* PreFilter's node restriction (PreFilterResult.NodeNames): NULL names = all nodes. */
struct sched_prefilter_result {
    char **names; /* owned; set to restrict */
    size_t n;
    bool restrict_nodes; /* names meaningful (an empty set restricts to nothing) */
};

struct sched_post_filter_result {
    char *nominated_node; /* owned; "" clears, NULL leaves as is */
};

/* The statuses of filtered nodes (NodeToStatusMap); absent = not evaluated. */
struct sched_node_statuses {
    struct sched_node_info **nodes;
    struct sched_status *status; /* parallel to nodes */
    size_t n;
};

/*
 * One plugin. self is what init returned (per profile). Every callback may be NULL. Callbacks
 * that return enum sched_code put their reasons in st; the framework sets st->code and
 * st->plugin.
 */
struct sched_plugin {
    const char *name;
    const char *args_kind;                /* "NodeResourcesFitArgs", or NULL: takes no args */
    int default_weight;                   /* weight in the default profile (score plugins) */
    const struct sched_event_reg *events; /* NULL: every event; {NULL} list: none */

    /* Builds the instance from args (NULL or {} = defaults). 0; -EINVAL with errs filled. */
    int (*init)(const cJSON *args, const char *path, struct sched_handle *h, void **ret_self,
                struct field_errors *errs);
    void (*free)(void *self);

    enum sched_code (*pre_enqueue)(void *self, const struct sched_pod *pod,
                                   struct sched_status *st);
    /* QueueSort: a before b. ta, tb are the queue timestamps. */
    bool (*less)(void *self, const struct sched_pod *a, double ta, const struct sched_pod *b,
                 double tb);

    enum sched_code (*pre_filter)(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                  struct sched_prefilter_result *res, struct sched_status *st);
    /* PreFilterExtensions. */
    enum sched_code (*add_pod)(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                               const struct sched_pod *add, const struct sched_node_info *ni,
                               struct sched_status *st);
    enum sched_code (*remove_pod)(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                  const struct sched_pod *rm, const struct sched_node_info *ni,
                                  struct sched_status *st);
    enum sched_code (*filter)(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                              const struct sched_node_info *ni, struct sched_status *st);
    enum sched_code (*post_filter)(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                   const struct sched_node_statuses *m,
                                   struct sched_post_filter_result *res, struct sched_status *st);
    enum sched_code (*pre_score)(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                 struct sched_node_info *const *nodes, size_t n,
                                 struct sched_status *st);
    enum sched_code (*score)(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                             const struct sched_node_info *ni, int64_t *ret_score,
                             struct sched_status *st);
    /*
     * Score over several nodes (optional; the framework calls score per node without it):
     * scores[i].ni given, scores[i].score set as score would set it. A plugin gives it when it
     * has something to read once for all the nodes (its cycle state, its args' shape): the
     * framework calls it once per chunk of a few dozen nodes instead of score once per node.
     */
    enum sched_code (*score_nodes)(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                   struct sched_node_score *scores, size_t n,
                                   struct sched_status *st);
    enum sched_code (*normalize)(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                 struct sched_node_score *scores, size_t n,
                                 struct sched_status *st);
    enum sched_code (*reserve)(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                               const char *node, struct sched_status *st);
    void (*unreserve)(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                      const char *node);
    /* Permit: SCHED_WAIT with *ret_timeout_ms to park the pod. */
    enum sched_code (*permit)(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                              const char *node, long *ret_timeout_ms, struct sched_status *st);
    enum sched_code (*pre_bind)(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                const char *node, struct sched_status *st);
    enum sched_code (*bind)(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                            const char *node, struct sched_status *st);
    void (*post_bind)(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                      const char *node);

    /*
     * Not extension points: the scheduler's own informer events, for plugins that keep state
     * of their own over every pod or node (ElasticQuota counts each quota's requests and
     * used), so that they need no second watch of the same objects. Called on the informer's
     * thread before the cache and the queue see the event (a new pod's PreEnqueue then finds
     * it counted): every pod of any scheduler, assigned or not (gone: deleted, or
     * Succeeded/Failed), and every node (gone: deleted). The plugin locks its own state; it
     * may call sched_handle_activate() but must not block.
     */
    void (*pod_event)(void *self, const struct sched_pod *pod, bool gone);
    void (*node_event)(void *self, const struct sched_node *node, bool gone);
};

/* Score bounds (interface.go). */
#define SCHED_MAX_NODE_SCORE 100
#define SCHED_MIN_NODE_SCORE 0

#endif
