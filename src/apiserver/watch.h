/*
 * Watch fan-out: the store's observer hands every committed write to the hub, which queues it
 * for each registered watcher whose key prefix matches. Queues are bounded: a watcher that
 * falls too far behind is cut off (its stream ends and the client relists), so a slow client
 * never holds up writers (issue "koord apiserver", reference kubernetes-api.md 4).
 */
#ifndef KOORD_APISERVER_WATCH_H
#define KOORD_APISERVER_WATCH_H

#include <stddef.h>
#include <stdint.h>

#include "apiserver/store.h"

struct watch_hub;
struct watcher;

struct watch_hub *watch_hub_new(void);

/* Ends every watcher: their waits return -ESHUTDOWN, and so do those of watchers registered
 * afterwards. The hub stays valid until watch_hub_free(). */
void watch_hub_close(struct watch_hub *hub);

/* Frees the hub; watchers still registered free it when the last of them goes. NULL is fine. */
void watch_hub_free(struct watch_hub *hub);

/* The store observer: pass the hub as userdata to store_set_observer(). */
int watch_hub_observe(const struct store_event *ev, void *userdata);

enum watcher_flags {
    /* Also queue the value a modification replaced (watch_item.prev): a watch with a selector
     * needs it to tell an object that stopped matching from one that never matched. */
    WATCHER_PREV = 1 << 0,
};

/* Registers a watcher for keys starting with prefix; max_bytes bounds its queue (0 = 16 MiB);
 * flags from enum watcher_flags. */
struct watcher *watcher_new(struct watch_hub *hub, const char *prefix, size_t max_bytes,
                            unsigned flags);

/* One queued write, owned by the caller: free with watch_item_free(). */
struct watch_item {
    enum store_event_type type;
    uint64_t rv;
    char *key;
    char *value;
    size_t len;
    char *prev; /* with WATCHER_PREV, for STORE_MODIFIED: the replaced value; else NULL */
    size_t prev_len;
};

void watch_item_free(struct watch_item *it);

/*
 * Waits up to timeout_ms for the next write. 1 with *ret filled, 0 on timeout, -EOVERFLOW when
 * the watcher fell behind and was cut off, -ESHUTDOWN when the hub closed.
 */
int watcher_next(struct watcher *w, int timeout_ms, struct watch_item **ret);

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
