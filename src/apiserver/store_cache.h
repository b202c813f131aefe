/*
 * The watch cache: a store (store.h) that keeps every current object of another store (the
 * backend, e.g. SQLite) in memory, so gets and lists at the current revision never reach the
 * backend, as kube-apiserver's cacher does in front of etcd
 * (staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go).
 *
 * It is loaded once from the backend and kept current from the backend's observer, which runs
 * for every committed write before that write is acknowledged: so a client that got a write's
 * answer reads it back, and the cache's revision is always that of a committed write. Writes,
 * the event history and lists at an older revision (continue tokens, resourceVersionMatch=
 * Exact) go to the backend, which rebuilds those snapshots from its history.
 *
 * Memory: one shared store_obj per object (its stored bytes, prepared for the resourceVersion
 * splice) in a key-sorted array of pointers, which is both the index for gets (binary search)
 * and the order lists are served in. Lists take references under a read lock and run their
 * callbacks unlocked, so a list response and the watch events of a write hold the same bytes
 * the cache does; a replaced object is freed when its last holder lets go.
 */
#ifndef KOORD_APISERVER_STORE_CACHE_H
#define KOORD_APISERVER_STORE_CACHE_H

#include "apiserver/store.h"

/*
 * A cache over backend (borrowed: it must outlive the cache, and the cache takes its observer
 * slot). Call before anything else writes to the backend: the load and the hand-over to the
 * observer are not atomic with respect to concurrent writers. 0, or the backend's error from
 * listing everything. Close with store_close(), which leaves the backend open.
 */
int store_cache_new(struct store *backend, struct store **ret);

#endif
