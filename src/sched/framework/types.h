/*
 * The scheduler's view of pods and nodes: decoded once from the API objects (on the informer's
 * thread) into compact, immutable, refcounted structs, so that a scheduling cycle never walks
 * JSON. Filtering 500 nodes for each of 10,000 pods a second leaves no room for parsing
 * quantities or label lists per node (kube-scheduler keeps framework.PodInfo and NodeInfo for
 * the same reason: pkg/scheduler/framework/types.go).
 *
 * Resources are vectors indexed by small integers: cpu (milli), memory and ephemeral-storage
 * (bytes) first, then every scalar resource name seen (extended resources such as
 * kubernetes.io/batch-cpu, hugepages-*, attachable-volumes-*), interned process-wide.
 *
 * A pod that cannot be decoded (a malformed quantity, selector or affinity) still decodes: its
 * `invalid` names the field and why, and the framework answers it with FailedScheduling instead
 * of filtering it. A node with a malformed allocatable counts as empty.
 *
 * Thread safety: decoded objects are immutable; sched_pod_ref/unref are atomic.
 */
#ifndef KOORD_SCHED_FRAMEWORK_TYPES_H
#define KOORD_SCHED_FRAMEWORK_TYPES_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct label_selector;
struct strbuf;

/* ---- resources ---- */

#define SCHED_RES_MAX 32 /* distinct resource names a process handles */
enum {
    SCHED_RES_CPU = 0,       /* milli-cores */
    SCHED_RES_MEMORY = 1,    /* bytes */
    SCHED_RES_EPHEMERAL = 2, /* bytes */
    SCHED_RES_FIRST_SCALAR = 3,
};

/* Non-zero defaults for pods that request no cpu or memory (pkg/scheduler/util/pod_resources.go).
 */
#define SCHED_DEFAULT_MILLI_CPU 100
#define SCHED_DEFAULT_MEMORY    (200LL * 1024 * 1024)

struct sched_res {
    int64_t v[SCHED_RES_MAX];
};

/*
 * The index of a resource name: cpu, memory and ephemeral-storage are fixed; a scalar name
 * (one with a '/', hugepages-*, attachable-volumes-*) is interned on first sight. -ENOENT for
 * names the scheduler does not count (pods, plain unknown names), -E2BIG when the table is
 * full. Thread safe. Only nodes' allocatable interns (pods look names up).
 */
int sched_res_index(const char *name);
/* The index of name if already known, else -ENOENT; never interns. */
int sched_res_lookup(const char *name);
/* The name of index i (valid i only). */
const char *sched_res_name(int i);
/* Whether the scheduler counts name as a scalar resource (extended, hugepages, volumes). */
bool sched_res_is_scalar(const char *name);
/* How many indexes are in use (loops over a vector stop there). */
int sched_res_count(void);

/* ---- taints, tolerations, selectors ---- */

enum sched_effect {
    SCHED_EFFECT_ANY = 0, /* toleration: empty effect matches all */
    SCHED_EFFECT_NO_SCHEDULE,
    SCHED_EFFECT_PREFER_NO_SCHEDULE,
    SCHED_EFFECT_NO_EXECUTE,
};

struct sched_taint {
    char *key;
    char *value; /* "" when absent */
    enum sched_effect effect;
};

struct sched_toleration {
    char *key;   /* "" matches any key (only with exists) */
    char *value; /* "" when absent */
    bool exists; /* operator Exists (else Equal) */
    enum sched_effect effect;
};

enum sched_sel_op {
    SCHED_OP_IN,
    SCHED_OP_NOT_IN,
    SCHED_OP_EXISTS,
    SCHED_OP_DOES_NOT_EXIST,
    SCHED_OP_GT,
    SCHED_OP_LT,
};

struct sched_sel_req {
    char *key;
    enum sched_sel_op op;
    char **values; /* nvalues strings */
    size_t nvalues;
    int64_t num; /* Gt, Lt: the single value */
};

/* A NodeSelectorTerm: every expression and field must match; a term with neither matches
 * nothing. Fields are metadata.name only. */
struct sched_node_term {
    struct sched_sel_req *exprs;
    size_t nexprs;
    struct sched_sel_req *fields;
    size_t nfields;
};

struct sched_node_selector {
    struct sched_node_term *terms; /* OR of the terms */
    size_t nterms;
};

struct sched_pref_term {
    int32_t weight;
    struct sched_node_term term;
};

/* A PodAffinityTerm (weight set for preferred terms, 0 for required). */
struct sched_pod_term {
    struct label_selector *selector; /* NULL: matches nothing */
    char **namespaces;               /* explicit list; with ns_selector NULL and none listed:
                                        the pod's own namespace */
    size_t nnamespaces;
    struct label_selector *ns_selector; /* NULL when absent; empty = all namespaces */
    char *topology_key;
    int32_t weight;
};

struct sched_spread {
    int32_t max_skew;
    char *topology_key;
    bool do_not_schedule;            /* whenUnsatisfiable DoNotSchedule (else ScheduleAnyway) */
    struct label_selector *selector; /* with matchLabelKeys merged in; NULL matches nothing */
    int32_t min_domains;             /* 1 when unset */
    bool honor_taints;               /* nodeTaintsPolicy Honor (default Ignore) */
    bool ignore_affinity;            /* nodeAffinityPolicy Ignore (default Honor) */
};

struct sched_host_port {
    char ip[48]; /* "0.0.0.0" when empty */
    int32_t port;
    uint8_t protocol; /* 0 TCP, 1 UDP, 2 SCTP */
};

/* ---- pods ---- */

struct sched_resv_pod;

struct sched_pod {
    _Atomic int refs;
    char *uid, *namespace, *name;
    char *key;            /* "namespace/name" */
    char *node_name;      /* spec.nodeName, "" when unassigned */
    char *scheduler_name; /* spec.schedulerName, "default-scheduler" when absent */
    char *nominated_node; /* status.nominatedNodeName, "" when absent */
    char *resource_version;
    int32_t priority;   /* spec.priority, 0 when absent */
    bool preempt_never; /* preemptionPolicy: Never */
    bool deleting;      /* metadata.deletionTimestamp set */
    bool terminal;      /* phase Succeeded or Failed */
    double created;     /* metadata.creationTimestamp, seconds since the epoch */
    cJSON *labels;      /* owned copy of metadata.labels; NULL when none */
    char *owner_kind;   /* controller ownerReference kind ("" when none) */
    char *owner_uid;
    /*
     * Koordinator's Reservations (reference koordlet-and-scheduler.md 5.3). A reserve pod is
     * the pod the scheduler makes of a Reservation (sched/reservation/reserve_pod.h): its uid is
     * the Reservation's and `reservation` its name; NULL for real pods. A real pod placed into a
     * Reservation carries the annotation scheduling.koordinator.sh/reservation-allocated, whose
     * uid is `allocated_from` (NULL when none).
     */
    char *reservation;
    char *reservation_node; /* a reserve pod's template nodeName (NULL when none) */
    char *allocated_from;
    /* What Reservation matching reads (reservation/owners.h): set by the scheduler's pod
     * handler when a profile runs the Reservation plugin, NULL otherwise; freed with the pod. */
    struct sched_resv_pod *resv;

    struct sched_res req; /* PodRequests: containers, init max, overhead */
    int64_t nonzero_cpu;  /* the same with the non-zero defaults per container */
    int64_t nonzero_mem;
    bool requests_nothing; /* no resource at all requested (fit filter stops early) */
    /*
     * Scalar resources the pod requests that no node offered when it was decoded: only a
     * node's allocatable interns a resource name, so pods cannot fill the process-wide table
     * with names of their own. NodeResourcesFit reports them as insufficient everywhere; the
     * scheduler decodes the pod again once a node offers one of them.
     */
    char **unoffered;
    size_t nunoffered;

    struct sched_host_port *ports;
    size_t nports;
    struct sched_toleration *tolerations;
    size_t ntolerations;
    struct sched_sel_req *node_selector; /* spec.nodeSelector as In [value] requirements */
    size_t nnode_selector;
    struct sched_node_selector *required_node; /* NULL when absent */
    struct sched_pref_term *preferred_node;
    size_t npreferred_node;
    struct sched_pod_term *affinity, *anti_affinity; /* required */
    size_t naffinity, nanti_affinity;
    struct sched_pod_term *pref_affinity, *pref_anti_affinity; /* preferred, weighted */
    size_t npref_affinity, npref_anti_affinity;
    struct sched_spread *spread;
    size_t nspread;
    size_t ngates; /* spec.schedulingGates */
    char *gates;   /* their names joined with ' ' ("" when none), for the PreEnqueue message */

    char *invalid; /* NULL, or "spec.containers[0].resources.requests.cpu: <why>" */

    /*
     * What Koordinator's LoadAwareScheduling estimates a pod's usage from: its limits
     * (PodLimits: containers summed, init containers' max; only resources some node offers;
     * malformed limits count 0), its Koordinator priority class with default (api/pod.h
     * enum api_priority) and when it was bound (PodScheduled=True lastTransitionTime, 0 when
     * not yet).
     */
    struct sched_res lim;
    int koord_priority;
    double scheduled;
};

/*
 * Decodes a Pod object. Always succeeds but for OOM (-ENOMEM): a malformed field is reported in
 * (*ret)->invalid and that part left out. The object is borrowed; *ret has one reference.
 */
int sched_pod_decode(const cJSON *obj, struct sched_pod **ret);
struct sched_pod *sched_pod_ref(struct sched_pod *p);
/* Returns NULL; NULL is fine. */
struct sched_pod *sched_pod_unref(struct sched_pod *p);

/* A taint effect by name; "" is any effect when empty_ok (tolerations). 0 or -EINVAL. */
int sched_effect_parse(const char *s, bool empty_ok, enum sched_effect *ret);

/* Whether the pod tolerates the taint (core/v1 toleration.go ToleratesTaint). */
bool sched_toleration_matches(const struct sched_toleration *t, const struct sched_taint *taint);
bool sched_pod_tolerates(const struct sched_pod *p, const struct sched_taint *taint);

/* Whether a label set (JSON object of strings; NULL = none) satisfies one requirement, a node
 * selector term (name for matchFields), or a whole node selector. */
bool sched_sel_req_matches(const struct sched_sel_req *r, const cJSON *labels);
bool sched_node_term_matches(const struct sched_node_term *t, const cJSON *labels,
                             const char *node_name);
bool sched_node_selector_matches(const struct sched_node_selector *s, const cJSON *labels,
                                 const char *node_name);

/*
 * Decodes an array of NodeSelectorTerms (path names it in messages, e.g.
 * "requiredDuringSchedulingIgnoredDuringExecution.reservationSelectorTerms"): the Reservation
 * plugin matches the reservation-affinity annotation's terms against Reservation labels with
 * the rules of node affinity. 0 and *ret (free with sched_node_selector_free()); -EINVAL and
 * *ret_why (free() it) when a term is malformed.
 */
int sched_node_selector_decode_terms(const cJSON *terms, const char *path,
                                     struct sched_node_selector **ret, char **ret_why);
void sched_node_selector_free(struct sched_node_selector *s);

/* A label's value in a label set, or NULL. */
const char *sched_label(const cJSON *labels, const char *key);

/* ---- nodes ---- */

struct sched_node {
    _Atomic int refs;
    char *name;
    char *resource_version;
    cJSON *labels; /* owned copy; NULL when none */
    bool unschedulable;
    struct sched_taint *taints;
    size_t ntaints;
    struct sched_res allocatable; /* status.allocatable; malformed entries count 0 */
    int64_t allowed_pods;         /* allocatable pods (0 when absent) */
    cJSON *conditions;            /* owned copy of status.conditions (type -> status map use) */
    char *invalid;                /* NULL, or what was malformed (logged, node counted empty) */
};

int sched_node_decode(const cJSON *obj, struct sched_node **ret);
struct sched_node *sched_node_ref(struct sched_node *n);
struct sched_node *sched_node_unref(struct sched_node *n);

#endif
