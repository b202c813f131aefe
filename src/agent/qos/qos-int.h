/*
 * Helpers shared by the files of src/agent/qos/ and by nothing else: JSON field access in the
 * way Go's encoding/json decodes (case-insensitive names, exact integer types) and a stable sort
 * for victim lists.
 */
#ifndef KOORD_AGENT_QOS_QOS_INT_H
#define KOORD_AGENT_QOS_QOS_INT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bound on an annotation or NodeSLO document a strategy parses (bytes). */
#define QOS__JSON_MAX (1 << 20)

/*
 * Parses an annotation value as one JSON document (codec json_parse(), default limits, at most
 * QOS__JSON_MAX bytes). Returns 0 with a new tree, -EINVAL (malformed or too large), -ENOMEM.
 */
int qos__json_parse(const char *s, cJSON **ret);

/* Member key of object o, matched case-insensitively as encoding/json does; NULL when o is not
 * an object or has no such member. A JSON null member reads as absent. */
const cJSON *qos__member(const cJSON *o, const char *key);

/* Case-sensitive member lookup for Kubernetes objects (metadata, labels); NULL if absent. */
const cJSON *qos__get(const cJSON *o, const char *key);

/* The string value of a case-sensitive member, NULL unless it is a string. */
const char *qos__get_str(const cJSON *o, const char *key);

/*
 * A JSON number that Go would decode into an integer type of range [min, max]: integral and in
 * range. Returns 0 with *ret, -EINVAL otherwise.
 */
int qos__json_int(const cJSON *v, int64_t min, int64_t max, int64_t *ret);

/* Largest element qos__sort() moves. */
#define QOS__SORT_ELEM_MAX 256

/*
 * Sorts n elements of size bytes (at most QOS__SORT_ELEM_MAX) with cmp (negative: a goes first)
 * keeping the input order of ties, so that results are reproducible where upstream's
 * sort.Slice leaves ties unspecified.
 */
void qos__sort(void *base, size_t n, size_t size, int (*cmp)(const void *a, const void *b));

struct qos_evict_victim;
struct qos_pod;

/*
 * The candidates of the priority-threshold evictors (MemoryEvict, CPUEvict and the allocatable
 * ones). qos__victim_init() clears *v and fills pod, priority and label priority when p may be
 * evicted for feature: active, priority value at most priority_threshold, eviction enabled,
 * allowed by its eviction policy, and has_usage (its usage of the resource was sampled); false
 * otherwise. used and request are the caller's to set.
 */
bool qos__victim_init(const struct qos_pod *p, int32_t priority_threshold, const char *feature,
                      bool has_usage, struct qos_evict_victim *v);

/*
 * Sorts those candidates: annotation eviction-priority ascending, then priority value
 * ascending, then label priority ascending, then the larger used (by_request: the larger
 * request) first.
 */
void qos__victims_sort(struct qos_evict_victim *v, size_t n, bool by_request);

struct qos_evict_task;
struct qos_node;

/*
 * The allocatable evictors' release (MemoryAllocatableEvict, CPUAllocatableEvict) into
 * task->release and task->request_classes; want is QOS_RES_MEMORY or QOS_RES_CPU. See
 * qos_memevict_allocatable_release().
 */
void qos__allocatable_release(int64_t threshold, int64_t lower, int64_t priority_threshold,
                              int want, const struct qos_node *node, const struct qos_pod *pods,
                              size_t npods, struct qos_evict_task *task);

/* v x pct / 100, truncated as that expression is, for pct in [0, 100] (the NodeSLO decoder
 * bounds percents so), without the overflow of v x pct for byte counts near INT64_MAX (a pod's
 * request is whatever quantity its author wrote). */
static inline int64_t qos__pct_of(int64_t v, int64_t pct)
{
    return v / 100 * pct + v % 100 * pct / 100;
}

/* Three-way comparisons for sort callbacks. */
static inline int qos__cmp_i64(int64_t a, int64_t b)
{
    return a < b ? -1 : (a > b);
}

static inline int qos__cmp_double(double a, double b)
{
    return a < b ? -1 : (a > b);
}

#endif
