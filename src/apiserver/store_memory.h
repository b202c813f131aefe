/*
 * The in-memory backend of the storage interface (store.h), for the manager's NodeMetric API
 * (DESIGN.md section 3.1): NodeMetrics live only in the leader manager's memory, every node
 * agent PUTs its NodeMetric status every few seconds, and they are served with Kubernetes
 * list/watch semantics. Nothing is persisted: after a restart or a failover the agents push
 * again and the view refills within seconds, so a disk write per report would buy nothing and
 * cost the write rate (thousands of ~17 KB objects per second on two cores).
 *
 * Revisions: every revision is (epoch << STORE_MEMORY_EPOCH_SHIFT) | n, n counting this
 * store's writes from 1. The manager passes a larger epoch each time it becomes leader (or
 * starts), so resourceVersions stay monotonic across restarts and failovers although the
 * counter starts again: an empty store's revision() and oldest() are both epoch << 40, so any
 * revision of an earlier epoch is older than the kept history and a watch or list at it gets
 * -ERANGE, which the API server answers with 410 Gone, and the client relists (reference
 * kubernetes-api.md sections 4.4 and 5, "Aggregated NodeMetric server after a restart").
 * A revision of a later epoch is one this store has not reached (-EOVERFLOW from list_at(),
 * 504 from the API server), never a valid one. Revisions stay below 2^63, so they survive
 * every int64 on the way (parse_i64(), JSON strings, SQLite).
 *
 * Memory: every current object is one shared store_obj in a balanced tree by key (gets and
 * writes O(log n), lists in key order); a write copies its bytes once, into that store_obj, and
 * the tree, the history, the observer's event, list responses and watch queues all hold
 * references to it. The history is a ring of events referencing the new and the replaced
 * objects; it is bounded by a count and by the bytes of replaced or removed values it keeps
 * alive, so memory is the live objects plus those bounds. Snapshots at an older revision are
 * the current objects with the writes since undone from the history, as store_sqlite.c does
 * it, so continue tokens expire once the history moves past them.
 *
 * Because everything is already in memory, the API server uses this store directly: no watch
 * cache (store_cache.h) goes in front of it.
 *
 * Locking: one mutex, adaptive (it spins briefly before sleeping). Every critical section is
 * short: writes copy the value before taking it and call the listener after releasing it;
 * gets, lists and replays take references under it and run their callbacks unlocked. With
 * report writers on every core, a read-write lock made them sleep and wake on its futex far
 * more often (bench/nodemetric: about 12,000 reports/s with it, 15,000 with the mutex).
 */
#ifndef KOORD_APISERVER_STORE_MEMORY_H
#define KOORD_APISERVER_STORE_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "apiserver/store.h"

/* Revision layout: the epoch above this bit, the write counter below it. */
#define STORE_MEMORY_EPOCH_SHIFT 40
#define STORE_MEMORY_MAX_EPOCH   ((UINT64_C(1) << 23) - 1)
#define STORE_MEMORY_MAX_HISTORY ((size_t)1 << 24)

struct store_memory_opts {
    /* Required, 1 .. STORE_MEMORY_MAX_EPOCH: larger than the epoch of every earlier store whose
     * revisions clients may still hold (every earlier leader term and process). */
    uint64_t epoch;
    /* How many events the history keeps for watches and snapshots; 0 = 10000. At most
     * STORE_MEMORY_MAX_HISTORY. */
    size_t history;
    /* Bound on the bytes of replaced and removed object values the history keeps alive
     * (values still current cost the history nothing); 0 = 64 MiB. When a write takes it
     * past the bound, the oldest events are dropped until it fits, moving oldest() forward.
     * With ~17 KB NodeMetrics, 64 MiB keeps about 3,900 updates. */
    size_t history_bytes;
    /* The largest value accepted, 0 = 1 MiB; at most STORE_MAX_VALUE. Writes of bigger
     * values fail with -E2BIG. */
    size_t max_value;
};

/*
 * A new empty store: revision() and oldest() are opts->epoch << STORE_MEMORY_EPOCH_SHIFT.
 * 0, or -EINVAL for an epoch, history or max_value out of range (*ret untouched). Close with
 * store_close(). Beyond store.h, writes fail with -E2BIG past max_value, and with -EOVERFLOW
 * once the counter would reach the epoch bits (2^40 - 1 writes; the manager then needs a new
 * epoch, that is a new store). store_events() from a revision newer than the current one
 * replays nothing and returns 0, as every backend does (the API server answers such a watch
 * with 504 before asking).
 */
int store_memory_new(const struct store_memory_opts *opts, struct store **ret);

/*
 * A second hook besides the observer, for the manager's in-process controllers: the API
 * server's watch hub takes the observer slot (store_set_observer()), and the NodeResource
 * controller must hear of NodeMetric status writes without opening an HTTP watch to its own
 * process. fn is called for every committed write before the write returns, after the store
 * is unlocked (so report writers do not queue behind it): writes from one thread are heard in
 * revision order, concurrent writers' may be heard out of order, and fn may call into the
 * store. The event is borrowed; take store_obj_ref(ev->obj) to keep the object.
 * ev->obj is always set (for STORE_DELETED, the removed object), ev->prev_obj for
 * STORE_MODIFIED. NULL fn removes it. s must be a memory store.
 */
void store_memory_set_listener(struct store *s, store_event_fn fn, void *userdata);

#endif
