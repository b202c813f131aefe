/*
 * The storage interface the API-serving library talks to (issue "koord apiserver"): get, list
 * with snapshot/continue semantics, create/update/delete with revisions and optimistic
 * concurrency, the event history watches replay from, the current revision, and one observer
 * told of every committed write. The REST code (apiserver.c) sees only this; what is behind it
 * is chosen by the wiring in cmd/:
 *
 *   store_sqlite.h  the durable backend (SQLite, WAL, group commit);
 *   store_cache.h   the watch cache: every current object in memory, over any backend, so gets
 *                   and lists never touch the backend (kube-apiserver's cacher over etcd3);
 *   store_memory.h  everything in memory, nothing persisted, for the manager's NodeMetrics:
 *                   revisions carry an epoch above bit 40 so that they stay monotonic across
 *                   restarts and failovers; served directly, without the watch cache.
 *
 * A backend embeds struct store first and fills a struct store_ops; the functions below
 * dispatch through it, so adding a backend touches neither this interface nor its callers.
 *
 * Objects are opaque bytes (the encoded object without its resourceVersion) under a key such
 * as "/slo.koordinator.sh/nodeslos//node-1" or "/core/pods/default/web-0". Every write takes
 * the next value of one strictly increasing revision, which the server publishes as the
 * object's resourceVersion (reference kubernetes-api.md section 5). Every write also appends an
 * event to a bounded history that watches replay from; asking for history older than what is
 * kept answers -ERANGE, which the server turns into 410 Gone.
 *
 * Snapshots: a list at an older revision the history still covers shows exactly that
 * revision's objects; that is how a paged list stays consistent (every page at the first page's
 * revision, reference section 3.2) without a long-lived read transaction per continue token.
 * Callbacks run with the store unlocked, so a long list or a watch's replay never holds up
 * writers. Every store is safe to use from several threads.
 *
 * Object bytes travel as struct store_obj: immutable, refcounted, and prepared once for the
 * resourceVersion splice (splice_at), so the cache, list responses and watch events share one
 * copy of each object instead of copying it per request or per watcher.
 */
#ifndef KOORD_APISERVER_STORE_H
#define KOORD_APISERVER_STORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum store_event_type {
    STORE_ADDED = 1,
    STORE_MODIFIED = 2,
    STORE_DELETED = 3,
};

/*
 * One object's bytes at one revision; immutable once made, shared by reference. Everything but
 * refs may be read by anyone holding a reference.
 */
struct store_obj {
    uint64_t rv;       /* revision of the write that produced these bytes */
    const char *key;   /* NUL-terminated, in the same allocation */
    const char *value; /* NUL-terminated for convenience; len excludes the NUL */
    size_t len;
    /* Where `"resourceVersion":"N"` goes: the offset of the '}' closing metadata when the bytes
     * are our own compact JSON with apiVersion, kind and metadata (store_obj_new() checks);
     * 0 when they are not, and the caller must decode them instead. */
    size_t splice_at;
    bool splice_comma; /* metadata is not empty: the spliced member needs a leading comma */
    atomic_uint refs;  /* private */
};

/* Where the resourceVersion member goes in our own compact encoding (encode_for_store() in
 * apiserver.c): inside metadata, last; *ret_comma tells whether metadata has other members.
 * 0 when any of the members it needs (apiVersion, kind, metadata) is missing. What
 * store_obj_new() records as splice_at. */
size_t store_splice_point(const char *value, size_t len, bool *ret_comma);

/* A new object with one reference: key and value are copied into one allocation. NULL when a
 * checked allocation fails (values are peer-sized). */
struct store_obj *store_obj_new(const char *key, uint64_t rv, const char *value, size_t len);
struct store_obj *store_obj_ref(struct store_obj *o);
/* Drops a reference, freeing on the last; returns NULL. NULL is fine. Thread-safe. */
struct store_obj *store_obj_unref(struct store_obj *o);

/*
 * An object as read back: a view of obj, which it holds a reference to. Release with
 * store_item_release(); in callbacks it is borrowed (take store_obj_ref(it->obj) to keep it).
 */
struct store_item {
    const char *key;
    uint64_t rv; /* revision of the object's last write */
    const char *value;
    size_t len;
    struct store_obj *obj;
};

/* Fills *ret as a view of o, taking a reference. */
void store_item_set(struct store_item *ret, struct store_obj *o);
void store_item_release(struct store_item *it);

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
    /* The same states as shared objects when the store has them (the watch cache's observer
     * always does); NULL otherwise. obj->rv is the object's own revision: for STORE_DELETED
     * that is prev_rv, not rv. */
    struct store_obj *obj;
    struct store_obj *prev_obj;
};

/* Callbacks return 0 to continue, > 0 to stop early (not an error), < 0 to abort with that
 * code. Those of store_list*() and store_events() run with the store unlocked (they may call
 * into it); the observer's run with it locked (see store_set_observer()). */
typedef int (*store_item_fn)(const struct store_item *it, void *userdata);
typedef int (*store_event_fn)(const struct store_event *ev, void *userdata);

/* Bounds a peer could otherwise grow without limit. */
#define STORE_MAX_KEY   4096
#define STORE_MAX_VALUE (3u << 20) /* 3 MiB, above kube-apiserver's 1.5 MiB request limit */

enum store_write_op { STORE_OP_CREATE, STORE_OP_UPDATE, STORE_OP_DELETE };

struct store;

/* What a backend implements; the semantics are those of the functions below. */
struct store_ops {
    void (*close)(struct store *s);
    uint64_t (*revision)(struct store *s);
    uint64_t (*oldest)(struct store *s);
    int (*get)(struct store *s, const char *key, struct store_item *ret);
    int (*write)(struct store *s, enum store_write_op op, const char *key, const char *value,
                 size_t len, uint64_t expect_rv, struct store_item *ret_old, uint64_t *ret_rv);
    int (*list_at)(struct store *s, const char *prefix, const char *after, uint64_t at,
                   size_t limit, store_item_fn fn, void *userdata, uint64_t *ret_rv);
    int (*events)(struct store *s, uint64_t since, store_event_fn fn, void *userdata);
    void (*set_observer)(struct store *s, store_event_fn fn, void *userdata);
};

/* Embedded first in every backend's own struct. */
struct store {
    const struct store_ops *ops;
};

/* Closes the store (not the backend under a cache); NULL is fine. */
void store_close(struct store *s);

/* The current revision (of the last write; 0 for an empty store, epoch << 40 for an empty
 * memory store). */
uint64_t store_revision(struct store *s);

/* The oldest revision a watch may start after (events with rv > this are kept). */
uint64_t store_oldest(struct store *s);

/* Reads one object. -ENOENT when absent, -EINVAL for a malformed key. */
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
 * with (at, or the current revision when at is 0), also on -ERANGE. fn runs unlocked; writes
 * made meanwhile are not seen. Returns 0, the first negative callback result, -EINVAL for a
 * malformed prefix, -ERANGE when at is older than the kept history (also when writes during a
 * long listing push it out), -EOVERFLOW when at is newer than the current revision.
 */
int store_list_at(struct store *s, const char *prefix, const char *after, uint64_t at, size_t limit,
                  store_item_fn fn, void *userdata, uint64_t *ret_rv);

/* store_list_at() at the current revision. */
int store_list(struct store *s, const char *prefix, const char *after, size_t limit,
               store_item_fn fn, void *userdata, uint64_t *ret_rv);

/*
 * Calls fn for every recorded write with since < rv <= the revision current when the call
 * starts, in revision order (writes made during the call are left to the observer, which is
 * how a new watch neither loses nor repeats one). fn runs unlocked. -ERANGE when since is older
 * than the kept history, also when writes during the replay push the rest of it out (the caller
 * answers 410 Gone and the client relists).
 */
int store_events(struct store *s, uint64_t since, store_event_fn fn, void *userdata);

/*
 * Registers the one observer told about every committed write, in revision order, before the
 * write is acknowledged and while the store is still locked (so it must be quick and must not
 * call into the store): this is how watches and the cache learn of changes without polling.
 * NULL removes it.
 */
void store_set_observer(struct store *s, store_event_fn fn, void *userdata);

/* Keys are printable ASCII without spaces (which keeps prefix range scans exact) and at most
 * STORE_MAX_KEY bytes: 0 or -EINVAL. For backends. */
int store_check_key(const char *key);

#endif
