/*
 * The scheduler's view of the Reservations that hold room on nodes (Koordinator's
 * frameworkext reservation cache): for each HOLDING Reservation, what it reserved
 * (status.allocatable), which pods were placed into it and what they took, so that
 *   - the scheduler's cache counts the Reservation as a pod requesting only what is left
 *     (allocatable - allocated): its owners' own pods are counted where they run, never twice;
 *   - a cycle finds the Reservations a pod may use, node by node, in one pass.
 * The owners of a Reservation are the pods assumed into it by the Reservation plugin's Reserve
 * and the pods that carry its reservation-allocated annotation (the informer's view, which
 * outlives a restart of the scheduler).
 *
 * Thread safety: every call takes the cache's lock; views are copies.
 */
#ifndef KOORD_SCHED_RESERVATION_RCACHE_H
#define KOORD_SCHED_RESERVATION_RCACHE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "sched/framework/types.h"

struct sched_resv;

struct sched_rcache;

/* changed: the reserve pod of a Reservation whose remaining room changed (a new reference for
 * the callee to keep or drop), called under the cache's lock so that the changes of one
 * Reservation arrive in order: it must not call back into the reservation cache. */
struct sched_rcache *sched_rcache_new(void (*changed)(void *ud, struct sched_pod *reserve_pod),
                                      void *ud);
void sched_rcache_free(struct sched_rcache *c);

/*
 * A HOLDING Reservation added or updated (obj borrowed): its reserve pod holding what is left
 * goes through `changed`, and is returned too (a new reference), or NULL when obj is malformed.
 */
struct sched_pod *sched_rcache_set(struct sched_rcache *c, const cJSON *obj);
/* A Reservation released or deleted. */
void sched_rcache_remove(struct sched_rcache *c, const char *uid);

/*
 * A pod placed into Reservation resv_uid (assumed in Reserve, or seen with the annotation);
 * again with the same pod uid changes nothing. Removing undoes it. Both report the change of
 * the reserve pod through `changed`. Unknown reservations are remembered (the pod may arrive
 * before its Reservation): they count once the Reservation does.
 */
void sched_rcache_add_owner(struct sched_rcache *c, const char *resv_uid, const char *pod_uid,
                            const struct sched_res *req);
void sched_rcache_remove_owner(struct sched_rcache *c, const char *resv_uid, const char *pod_uid);

/* One HOLDING Reservation as a cycle sees it. */
struct sched_rcache_view {
    struct sched_resv *r;      /* a reference */
    struct sched_res reserved; /* status.allocatable */
    struct sched_res allocated;
    size_t nowners;
    int64_t order; /* label scheduling.koordinator.sh/reservation-order; 0 when none */
};

/*
 * Every HOLDING Reservation that keep accepts (all when keep is NULL), as copies (free with
 * sched_rcache_views_free); their count. keep runs under the cache's lock and must not call
 * into it. Copying only what a pod may use matters: most pods own no Reservation, and copying
 * all of them for each pod was a few percent of the Koordinator profile's cycle.
 */
size_t sched_rcache_views(struct sched_rcache *c,
                          bool (*keep)(const struct sched_resv *r, const void *ud), const void *ud,
                          struct sched_rcache_view **ret);
void sched_rcache_views_free(struct sched_rcache_view *v, size_t n);
/* How many HOLDING Reservations there are (cheap: a cycle skips the rest at 0). */
size_t sched_rcache_count(struct sched_rcache *c);

#endif
