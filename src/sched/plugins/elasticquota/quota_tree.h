/*
 * The ElasticQuota tree and its runtime calculator (Koordinator
 * pkg/scheduler/plugins/elasticquota/core/group_quota_manager.go and runtime_quota_calculator.go;
 * reference koordlet-and-scheduler.md 5.4, scheduler.md 8.5), kept apart from the plugin so that
 * it is a pure function of its inputs: quotas (decoded ElasticQuota objects), the requests and
 * used charged to each quota by its pods, and the cluster total. No locks, no API, no clock; the
 * plugin owns one tree under its mutex.
 *
 * Quantities per quota, per resource dimension (vectors indexed as struct sched_res):
 *   request  leaf: Σ requests of its pods, pending included; parent: Σ min(child request,
 *            child max) over its children;
 *   used     Σ requests of its assigned pods (parents: Σ of their children's);
 *   runtime  what the quota may use now: among the children of one parent with budget T (the
 *            cluster total for the top level, else the parent's runtime), every child first gets
 *            min(request, max) up to its (possibly scaled) min (or its min when it does not lend),
 *            then the rest of T is shared by sharedWeight with the largest-remainder method among
 *            the children that want more, capped at their request, the excess re-shared until
 *            nothing is left or nobody wants more.
 * The default and system quotas take no part: their pods always fit, and their used is taken off
 * the cluster total the other quotas share.
 */
#ifndef KOORD_SCHED_ELASTICQUOTA_TREE_H
#define KOORD_SCHED_ELASTICQUOTA_TREE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched/framework/types.h"

#define EQ_ROOT_QUOTA      "koordinator-root-quota"
#define EQ_DEFAULT_QUOTA   "koordinator-default-quota"
#define EQ_SYSTEM_QUOTA    "koordinator-system-quota"

#define EQ_PREFIX          "quota.scheduling.koordinator.sh/"
#define EQ_LABEL_PARENT    EQ_PREFIX "parent"
#define EQ_LABEL_IS_PARENT EQ_PREFIX "is-parent"
#define EQ_LABEL_IS_ROOT   EQ_PREFIX "is-root"
#define EQ_LABEL_TREE_ID   EQ_PREFIX "tree-id"
#define EQ_LABEL_LENT      EQ_PREFIX "allow-lent-resource"
#define EQ_LABEL_POD_QUOTA EQ_PREFIX "name"
#define EQ_LABEL_PREEMPT   EQ_PREFIX "preemptible"
#define EQ_ANN_WEIGHT      EQ_PREFIX "shared-weight"
#define EQ_ANN_NAMESPACES  EQ_PREFIX "namespaces"
#define EQ_ANN_TOTAL       EQ_PREFIX "total-resource"
#define EQ_ANN_RUNTIME     EQ_PREFIX "runtime"
#define EQ_ANN_REQUEST     EQ_PREFIX "request"

/* A quota as its object says (ElasticQuota + Koordinator's labels and annotations). */
struct eq_spec {
    char *name, *namespace;
    char *parent;  /* EQ_ROOT_QUOTA when the label is missing or empty */
    char *tree_id; /* "" when none */
    bool is_parent, is_root, allow_lent;
    struct sched_res min, max, weight; /* weight: the annotation, else max (also when all 0) */
    uint64_t max_mask;                 /* dimensions named in spec.max */
    bool has_total;                    /* is-root tree with a total-resource annotation */
    struct sched_res total;
    char **namespaces; /* the namespaces annotation */
    size_t nnamespaces;
};

/*
 * Decodes an ElasticQuota object into *ret (released first by the caller). Malformed parts (a
 * bad quantity, an annotation that is not the JSON it should be) are left out and described in
 * *ret_warn (owned, NULL when none), so one typo does not drop a quota. -EINVAL without a name.
 */
int eq_spec_decode(const cJSON *obj, struct eq_spec *ret, char **ret_warn);
void eq_spec_release(struct eq_spec *s);

struct eq_quota {
    struct eq_spec spec;
    struct sched_res pod_request; /* charged by its own pods */
    struct sched_res pod_used;
    /* computed by eq_tree_compute() */
    struct sched_res request, used, runtime, scaled_min;
    bool has_runtime;        /* false for the default and system quotas: never limited */
    struct eq_quota *parent; /* NULL at the top */
    struct eq_quota **children;
    size_t nchildren;
};

struct eq_tree;
struct strbuf;

struct eq_tree *eq_tree_new(void);
void eq_tree_free(struct eq_tree *t);

/* Adds or replaces a quota by spec->name (the tree takes the spec over; spec is zeroed). Pods'
 * charges stay with the name. */
void eq_tree_put(struct eq_tree *t, struct eq_spec *spec);
/* Removes a quota (with its charges). -ENOENT when absent. */
int eq_tree_del(struct eq_tree *t, const char *name);
struct eq_quota *eq_tree_get(const struct eq_tree *t, const char *name);
/* Every quota, sorted by name (the array is the caller's to free; entries borrowed). */
size_t eq_tree_list(const struct eq_tree *t, struct eq_quota ***ret);

/*
 * The quota a pod belongs to: its quota label if that quota exists, else the quota named like
 * its namespace in that namespace, else the quota whose namespaces annotation lists it, else
 * EQ_DEFAULT_QUOTA. Borrowed from the tree (valid until it changes).
 */
const char *eq_tree_resolve(struct eq_tree *t, const cJSON *pod_labels, const char *ns);

/* Adds req × request_sign to the pods' request of quota name and req × used_sign to their
 * used (signs -1, 0 or 1). -ENOENT for a quota the tree does not hold (nothing changes). */
int eq_tree_charge(struct eq_tree *t, const char *name, const struct sched_res *req,
                   int request_sign, int used_sign);

/* Σ allocatable of the cluster's nodes: the budget of the top level (before default/system). */
void eq_tree_set_total(struct eq_tree *t, const struct sched_res *total);

/* Recomputes request, used and runtime of every quota (scale_min: enableMinQuotaScale). */
void eq_tree_compute(struct eq_tree *t, bool scale_min);

/*
 * One parent's water-filling on one dimension (exposed for tests): n children with guaranteed
 * m[i], request req[i] (already min(request, max)), weight w[i], lending flag lent[i] and names
 * for ties; total budget T; runtime into rt[i].
 */
void eq_share(size_t n, const int64_t *m, const int64_t *req, const int64_t *w, const bool *lent,
              const char *const *names, int64_t total, int64_t *rt);

/* A ResourceList as Go's %v prints a map: "map[cpu:600m memory:1Gi]" (keys sorted), over the
 * dimensions in mask. */
void eq_res_format(const struct sched_res *r, uint64_t mask, struct strbuf *out);
/* The JSON ResourceList of r over mask (new object). */
cJSON *eq_res_json(const struct sched_res *r, uint64_t mask);

#endif
