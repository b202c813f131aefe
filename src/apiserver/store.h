/*
 * The API server's durable object store on SQLite (the storage interface of issue "koord
 * apiserver"; the in-memory backend of the NodeMetric API comes later).
 *
 * Objects are opaque bytes (the encoded object without its resourceVersion) under a key such
 * as "/slo.koordinator.sh/nodeslos//node-1" or "/core/pods/default/web-0". Every write takes
 * the next value of one global, strictly increasing revision, which the server publishes as the
 * object's resourceVersion (reference kubernetes-api.md section 5). Every write also appends an
 * event to a bounded history that watches replay from; asking for history older than what is
 * kept answers -ERANGE, which the server turns into 410 Gone.
 *
 * Snapshots come from the same history. An event records the object's state before the write
 * as well as after it, so the state at any revision the history still covers is the current
 * rows with the writes made since undone: that is how a paged list stays consistent (every
 * page at the first page's revision, reference section 3.2) without a long-lived read
 * transaction per continue token. The price is that a token expires after `history` writes
 * rather than after a time (kube-apiserver: etcd's compaction, about 5 minutes); the gain is
 * that memory and WAL size stay bounded whatever clients do, since nothing is pinned per
 * token. The same snapshot lets reads run in short chunks: callbacks are called with the store
 * unlocked, so a long list or a watch's replay never holds up writers.
 *
 * Durability: WAL journal with synchronous=FULL, so a write that returned 0 survives kill -9 of
 * the process and a crash of the machine. A store is safe to use from several threads (one
 * connection behind a mutex).
 */
#ifndef KOORD_APISERVER_STORE_H
#define KOORD_APISERVER_STORE_H

#include <stddef.h>
#include <stdint.h>

enum store_event_type {
    STORE_ADDED = 1,
    STORE_MODIFIED = 2,
    STORE_DELETED = 3,
};

/* An object as read back; owned by the caller, release with store_item_release(). */
struct store_item {
    char *key;
    uint64_t rv; /* revision of the object's last write */
    char *value; /* NUL-terminated for convenience; len excludes the NUL */
    size_t len;
};

/* A write as the history records it; borrowed for the duration of the callback. */
struct store_event {
    enum store_event_type type;
    uint64_t rv;
    const char *key;
    const char *value; /* the new value, or for STORE_DELETED the last one */
    size_t len;
    const char *prev; /* STORE_MODIFIED: the value it replaced; NULL otherwise */
    size_t prev_len;
    uint64_t prev_rv; /* MODIFIED, DELETED: the revision of the replaced/removed value */
};

/* Callbacks return 0 to continue, > 0 to stop early (not an error), < 0 to abort with that
 * code. Those of store_list*() and store_events() run with the store unlocked (they may call
 * into it); the observer's run with it locked (see store_set_observer()). */
typedef int (*store_item_fn)(const struct store_item *it, void *userdata);
typedef int (*store_event_fn)(const struct store_event *ev, void *userdata);

struct store;

/* Bounds a peer could otherwise grow without limit. */
#define STORE_MAX_KEY   4096
#define STORE_MAX_VALUE (3u << 20) /* 3 MiB, above kube-apiserver's 1.5 MiB request limit */

/*
 * Opens (creating if needed) the store in the SQLite file at path. history is how many events
 * are kept for watches (0 = a default of 10000). Returns 0, -ENOMEM, -EIO (the file cannot be
 * opened or is not a koord store; *ret untouched).
 */
int store_open(const char *path, size_t history, struct store **ret);

/* Closes the store; NULL is fine. */
void store_close(struct store *s);

/* The current revision (of the last write; 0 for an empty store). */
uint64_t store_revision(struct store *s);

/* The oldest revision a watch may start after (events with rv > this are kept). */
uint64_t store_oldest(struct store *s);

/* Reads one object. -ENOENT when absent. */
int store_get(struct store *s, const char *key, struct store_item *ret);

/* Writes a new object. -EEXIST when the key exists; -E2BIG past the bounds. */
int store_create(struct store *s, const char *key, const char *value, size_t len, uint64_t *ret_rv);

/*
 * Replaces an object. expect_rv != 0 makes it conditional (optimistic concurrency): -ESTALE
 * when the object's revision differs. -ENOENT when absent.
 */
int store_update(struct store *s, const char *key, const char *value, size_t len,
                 uint64_t expect_rv, uint64_t *ret_rv);

/*
 * Removes an object, conditionally like store_update. ret_old (may be NULL) receives the
 * removed object, ret_rv the revision of the deletion.
 */
int store_delete(struct store *s, const char *key, uint64_t expect_rv, struct store_item *ret_old,
                 uint64_t *ret_rv);

/*
 * Calls fn for the objects whose keys start with prefix, in key order, starting after the key
 * `after` (NULL = from the start), at most limit of them (0 = all), as they were at revision
 * at (0 = the current one). *ret_rv (may be NULL) receives the revision the list is consistent
 * with (at, or the current revision when at is 0), also on -ERANGE. Rows are read in short
 * locked chunks and fn runs unlocked; writes made meanwhile are not seen. Returns 0, the first
 * negative callback result, -ERANGE when at is older than the kept history (also when writes
 * during a long listing push it out), -EOVERFLOW when at is newer than the current revision.
 */
int store_list_at(struct store *s, const char *prefix, const char *after, uint64_t at, size_t limit,
                  store_item_fn fn, void *userdata, uint64_t *ret_rv);

/* store_list_at() at the current revision. */
int store_list(struct store *s, const char *prefix, const char *after, size_t limit,
               store_item_fn fn, void *userdata, uint64_t *ret_rv);

/*
 * Calls fn for every recorded write with since < rv <= the revision current when the call
 * starts, in revision order (writes made during the call are left to the observer, which is
 * how a new watch neither loses nor repeats one). Events are copied in short locked chunks and
 * fn runs unlocked. -ERANGE when since is older than the kept history, also when writes during
 * the replay push the rest of it out (the caller answers 410 Gone and the client relists).
 */
int store_events(struct store *s, uint64_t since, store_event_fn fn, void *userdata);

void store_item_release(struct store_item *it);

/*
 * Registers the one observer told about every committed write, in revision order, while the
 * store is still locked (so it must be quick and must not call into the store): this is how
 * watches learn of changes without polling. NULL removes it.
 */
void store_set_observer(struct store *s, store_event_fn fn, void *userdata);

#endif
