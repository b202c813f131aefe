/*
 * The durable backend of the storage interface (store.h): objects, the write history and the
 * revision in one SQLite file, so `koord apiserver` needs no etcd.
 *
 * Durability: WAL journal with synchronous=FULL, so a write that returned 0 survives kill -9 of
 * the process and a crash of the machine. Writers that arrive while a commit is running are
 * grouped into the next transaction and share its fsync (group commit, as etcd batches
 * concurrent proposals into one WAL sync); each is still acknowledged only once that commit is
 * durable, and a failed write in a batch (stale revision, missing key) is undone alone.
 *
 * Snapshots: an event records the object's state before the write as well as after it, so the
 * state at any revision the history still covers is the current rows with the writes made since
 * undone. The price is that a continue token expires after `history` writes rather than after a
 * time (kube-apiserver: etcd's compaction, about 5 minutes); the gain is that memory and WAL
 * size stay bounded whatever clients do, since nothing is pinned per token. Reads run in short
 * locked chunks with callbacks unlocked.
 *
 * Reads go to SQLite on every call; the API server puts the watch cache (store_cache.h) in
 * front so that gets and lists do not.
 */
#ifndef KOORD_APISERVER_STORE_SQLITE_H
#define KOORD_APISERVER_STORE_SQLITE_H

#include <stddef.h>

#include "apiserver/store.h"

/*
 * Opens (creating if needed) the store in the SQLite file at path. history is how many events
 * are kept for watches (0 = a default of 10000). Returns 0, -ENOMEM, -EIO (the file cannot be
 * opened or is not a koord store; *ret untouched). Close with store_close().
 */
int store_sqlite_open(const char *path, size_t history, struct store **ret);

#endif
