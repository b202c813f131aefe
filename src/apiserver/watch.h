/*
 * Watch fan-out: the store's observer hands every committed write to the hub, which queues it
 * for each registered watcher whose key prefix matches. A write becomes one shared, refcounted
 * event (holding the store's shared objects, and the event's wire bytes already encoded for
 * watchers that need no per-watcher work), so fan-out to N watchers is N pointer pushes under
 * the hub lock, not N copies. Queues are bounded: a watcher that falls too far behind is cut off
 * (its stream ends and the client relists), so a slow client never holds up writers (issue
 * "koord apiserver", reference kubernetes-api.md 4).
 */
#ifndef KOORD_APISERVER_WATCH_H
#define KOORD_APISERVER_WATCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "apiserver/store.h"
#include "base/strbuf.h"

struct watch_hub;
struct watcher;

/*
 * Encodes the wire form of an event for watchers without selectors or Table output: the whole
 * line including its newline, appended to out; false when the object's bytes do not allow it
 * (the watcher then encodes the event itself). Called once per write, under the store's lock.
 */
typedef bool (*watch_encode_fn)(enum store_event_type type, uint64_t rv,
                                const struct store_obj *obj, struct strbuf *out);

/* encode may be NULL (no shared wire bytes). */
struct watch_hub *watch_hub_new(watch_encode_fn encode);

/* Ends every watcher: their waits return -ESHUTDOWN, and so do those of watchers registered
 * afterwards. The hub stays valid until watch_hub_free(). */
void watch_hub_close(struct watch_hub *hub);

/* Frees the hub; watchers still registered free it when the last of them goes. NULL is fine. */
void watch_hub_free(struct watch_hub *hub);

/* The store observer: pass the hub as userdata to store_set_observer(). Events without shared
 * objects (ev->obj NULL) get them made here, once per write. */
int watch_hub_observe(const struct store_event *ev, void *userdata);

/* One write as watchers receive it: shared and immutable; release with watch_event_unref(). */
struct watch_event {
    enum store_event_type type;
    uint64_t rv;
    struct store_obj *obj;  /* the new state, or for STORE_DELETED the last one */
    struct store_obj *prev; /* STORE_MODIFIED: the state it replaced; else NULL */
    const char *wire;       /* the encoded line (see watch_encode_fn), or NULL */
    size_t wire_len;
    atomic_uint refs; /* private */
};

struct watch_event *watch_event_unref(struct watch_event *ev);

/* Registers a watcher for keys starting with prefix; max_bytes bounds the bytes of the objects
 * its queue holds (0 = 16 MiB). */
struct watcher *watcher_new(struct watch_hub *hub, const char *prefix, size_t max_bytes);

/*
 * The hub's index, as kube-apiserver's watch cache indexes pods by spec.nodeName: fn gives the
 * index value of an object under prefix (false: it has none). A watcher registered with
 * watcher_new_indexed() then receives only writes whose new or previous object has its value,
 * found by a hash lookup instead of a walk over every watcher: with one pod watch per node, a
 * pod write costs the watches of its node, not 10,000 selector checks. The watcher still applies
 * its own selector; the index only spares it the writes that cannot match. Set before the
 * first watcher registers; one index per hub.
 */
typedef bool (*watch_index_fn)(const struct store_obj *obj, struct strbuf *out);
void watch_hub_set_index(struct watch_hub *hub, const char *prefix, watch_index_fn fn);

/* A watcher of keys under the index's prefix that wants only objects with this index value. */
struct watcher *watcher_new_indexed(struct watch_hub *hub, const char *prefix, size_t max_bytes,
                                    const char *index_value);

/*
 * Calls fn(ud) when the watcher has something to hand out and had nothing before: its queue went
 * from empty to not empty, it was cut off, or the hub closed (and at once, if one of these is
 * already so). fn runs with the hub's lock held and must not call into the hub; it is how a
 * polled stream (http_stream_wake) waits without a thread. Pass fn NULL to stop.
 */
void watcher_set_notify(struct watcher *w, void (*fn)(void *ud), void *ud);

/*
 * Waits up to timeout_ms (0: not at all) for writes, then hands out every queued one, up to max,
 * oldest first: the caller owns a reference to each of v[0 .. *ret_n - 1]. 1 with *ret_n >= 1, 0 on
 * timeout, -EOVERFLOW when the watcher fell behind and was cut off, -ESHUTDOWN when the hub closed.
 */
int watcher_next(struct watcher *w, int timeout_ms, struct watch_event **v, size_t max,
                 size_t *ret_n);

/*
 * The revision this watcher is complete up to: every write with a revision at or below it that
 * the watcher will ever see has been handed out by watcher_next(). With an empty queue that is
 * the last write the hub observed (of any key), which is what lets a watch of a quiet resource
 * send bookmarks that still move forward; 0 before the hub observed anything.
 */
uint64_t watcher_progress(struct watcher *w);

/* Unregisters and frees; NULL is fine. */
void watcher_free(struct watcher *w);

#endif
