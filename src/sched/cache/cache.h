/*
 * The scheduler cache (kube-scheduler internal/cache/cache.go, snapshot.go, node_tree.go;
 * reference scheduler.md 4): nodes and the pods assigned to them, as informers report them, plus
 * the pods this scheduler has assumed (placed in a cycle, binding in flight), so the next cycle
 * counts their resources at once.
 *
 * Every change of a NodeInfo takes a new value of one global generation counter and moves the
 * node to the head of a recency list; a snapshot update copies only the nodes whose generation
 * is newer than the snapshot's, so a cycle after one binding copies one NodeInfo, not 5,000.
 * The snapshot's node order interleaves zones (node_tree.go), so consecutive nodes come from
 * different zones.
 *
 * Assumed pods: upstream keeps them forever (ttl 0) until the informer confirms them; koord
 * expires an assumed pod whose binding finished but whose confirmation has not arrived within
 * the ttl (30 s by default), so that a binding lost between the API server and the informer
 * cannot hold capacity forever. A pod confirmed later is simply added again.
 *
 * Thread safety: one mutex; every call may run on any thread (informer threads, the scheduling
 * thread, binding threads).
 */
#ifndef KOORD_SCHED_CACHE_H
#define KOORD_SCHED_CACHE_H

#include <stdbool.h>
#include <stddef.h>

struct sched_node;
struct sched_pod;
struct sched_snapshot;

struct sched_cache;

/* ttl_s: how long an assumed pod whose binding finished waits for its confirmation (0 = 30). */
struct sched_cache *sched_cache_new(double ttl_s);
void sched_cache_free(struct sched_cache *c);

/* A Node added or updated (takes a new reference). */
void sched_cache_add_node(struct sched_cache *c, struct sched_node *n);
/* A Node deleted: its NodeInfo stays while pods still name it. */
void sched_cache_remove_node(struct sched_cache *c, const char *name);

/*
 * An assigned pod from the informer (takes a new reference). Confirms an assumed pod of the
 * same uid (replacing it, on whatever node the informer says). An update moves the pod between
 * nodes if its node changed.
 */
void sched_cache_add_pod(struct sched_cache *c, struct sched_pod *p);
/* An assigned pod deleted (or terminal). -ENOENT when unknown. */
int sched_cache_remove_pod(struct sched_cache *c, const struct sched_pod *p);

/* Places an unassigned pod on node as assumed (takes a new reference). -EEXIST when the uid
 * is cached already. */
int sched_cache_assume(struct sched_cache *c, struct sched_pod *p, const char *node);
/* The binding call returned (now is monotonic seconds): the ttl starts. */
void sched_cache_finish_binding(struct sched_cache *c, const char *uid, double now);
/* Undoes an assumption (binding failed). -ENOENT when not assumed. */
int sched_cache_forget(struct sched_cache *c, const char *uid);
bool sched_cache_is_assumed(struct sched_cache *c, const char *uid);
/* Whether the uid is cached (assumed or confirmed). */
bool sched_cache_has_pod(struct sched_cache *c, const char *uid);
/* Drops assumed pods whose ttl passed; returns how many. */
size_t sched_cache_cleanup(struct sched_cache *c, double now);

/*
 * Brings s up to date: copies the NodeInfos changed since its generation, drops deleted ones,
 * rebuilds the node order when nodes came or went. A zeroed struct is an empty snapshot.
 * Returns how many NodeInfos were copied.
 */
size_t sched_cache_update_snapshot(struct sched_cache *c, struct sched_snapshot *s);
void sched_snapshot_release(struct sched_snapshot *s);

struct sched_cache_stats {
    size_t nodes, pods, assumed;
};
void sched_cache_stats(struct sched_cache *c, struct sched_cache_stats *ret);

#endif
