/*
 * What NodeResourcesFit's scoring and NodeResourcesBalancedAllocation share (kube-scheduler
 * pkg/scheduler/framework/plugins/noderesources/resource_allocation.go): the list of scored
 * resources with weights (config.ResourceSpec), how one resource's allocatable and requested
 * amounts are read off a NodeInfo for a pod, and the small JSON walker both plugins decode their
 * args with, so that their field errors read the same. Internal to the noderesources plugins;
 * nothing outside this directory includes it.
 *
 * Thread safety: decoding runs once per profile; sched__noderes_alloc_req() only reads its
 * arguments and runs on the framework's score workers concurrently.
 */
#ifndef KOORD_SCHED_PLUGINS_NODERESOURCES_RESOURCE_ALLOCATION_H
#define KOORD_SCHED_PLUGINS_NODERESOURCES_RESOURCE_ALLOCATION_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"
#include "sched/framework/framework.h"

struct field_errors;

/* One scored resource (config.ResourceSpec). */
struct sched_noderes_spec {
    char *name;
    int idx;        /* sched_res index, or -1 for a name the scheduler never counts ("pods") */
    int64_t weight; /* after defaulting: 0 became 1 */
};

struct sched_noderes_specs {
    struct sched_noderes_spec *v;
    size_t n;
};

void sched__noderes_specs_release(struct sched_noderes_specs *s);

/*
 * The allocatable and requested amounts of spec's resource for pod on ni
 * (calculateResourceAllocatableRequest): requested = what the node's pods request + what pod
 * requests. use_requested picks the plain requests for cpu and memory (BalancedAllocation);
 * otherwise the non-zero ones (100m / 200 MiB per container without a request, NodeResourcesFit).
 * Ephemeral storage and scalar resources are always plain. Returns false, leaving the outputs
 * untouched, when the resource does not enter the score: a scalar resource pod does not request,
 * a name the scheduler does not count, a node without a Node object, or allocatable 0 (score()
 * in resource_allocation.go skips "alloc == 0"). Inline: Score calls it per resource, plugin and
 * node (four calls per node in the default profile), and with use_requested a constant at each
 * call the branches that do not apply drop out.
 */
static inline bool sched__noderes_alloc_req(const struct sched_noderes_spec *spec,
                                            const struct sched_pod *pod,
                                            const struct sched_node_info *ni, bool use_requested,
                                            int64_t *ret_alloc, int64_t *ret_req)
{
    int i = spec->idx;
    int64_t pod_req, node_req, alloc;

    if (i < 0 || !ni->node)
        return false;
    if (i == SCHED_RES_CPU && !use_requested) {
        pod_req = pod->nonzero_cpu;
        node_req = ni->nonzero_cpu;
    } else if (i == SCHED_RES_MEMORY && !use_requested) {
        pod_req = pod->nonzero_mem;
        node_req = ni->nonzero_mem;
    } else {
        pod_req = pod->req.v[i];
        node_req = ni->requested.v[i];
    }
    /* An extended resource the pod does not ask for says nothing about this pod's fit. */
    if (pod_req == 0 && i >= SCHED_RES_FIRST_SCALAR)
        return false;
    /* cpu and memory from the NodeInfo's first line (framework.h), not the node's */
    alloc = i == SCHED_RES_CPU      ? ni->alloc_cpu
            : i == SCHED_RES_MEMORY ? ni->alloc_mem
                                    : ni->node->allocatable.v[i];
    if (alloc == 0)
        return false;
    *ret_alloc = alloc;
    *ret_req = node_req + pod_req;
    return true;
}

/* ---- args decoding ---- */

/* A walk over a plugin's args: the errors go to errs, path is the field path of the value being
 * decoded ("profiles[0].pluginConfig[1].args.scoringStrategy"). */
struct sched_noderes_dec {
    struct field_errors *errs;
    struct strbuf path;
};

/* Starts at base (NULL or "" = the args are the root, fields then print without a leading dot). */
void sched__noderes_dec_init(struct sched_noderes_dec *d, const char *base,
                             struct field_errors *errs);
void sched__noderes_dec_release(struct sched_noderes_dec *d);
/* Descends into member key / element i; returns the length to restore with _pop(). */
size_t sched__noderes_dec_push(struct sched_noderes_dec *d, const char *key);
size_t sched__noderes_dec_push_index(struct sched_noderes_dec *d, size_t i);
void sched__noderes_dec_pop(struct sched_noderes_dec *d, size_t len);

/* Appends v as field errors print values: strings quoted, integers plain, else compact JSON. */
void sched__noderes_repr(const cJSON *v, struct strbuf *out);
/* Adds an Invalid value error for v at the current path with detail why. */
void sched__noderes_invalid(struct sched_noderes_dec *d, const cJSON *v, const char *why);

/*
 * Checks that v is a JSON object whose members are all named in keys (NULL-terminated); reports
 * "must be an object" or one unknown-field error per stray member (the scheduler's config is
 * decoded strictly, as kube-scheduler's is). Returns whether v is an object.
 */
bool sched__noderes_check_object(struct sched_noderes_dec *d, const cJSON *v,
                                 const char *const *keys);
/* Member key of obj, or NULL when absent or JSON null (Go's nil for pointer fields). */
const cJSON *sched__noderes_member(const cJSON *obj, const char *key);
/* An integer member value (at the current path, which the caller pushed). Reports a non-integer
 * and returns false. */
bool sched__noderes_int(struct sched_noderes_dec *d, const cJSON *v, int64_t *ret);

/*
 * Decodes a []ResourceSpec at the current path: absent, null or [] give the defaults cpu:1,
 * memory:1; a weight absent or 0 becomes 1 (apis/config/v1/defaults.go). Reports type errors and
 * empty names ("Required value"). *ret is always filled (release it either way); returns whether
 * no error was added.
 */
bool sched__noderes_specs_decode(struct sched_noderes_dec *d, const cJSON *v,
                                 struct sched_noderes_specs *ret);

#endif
