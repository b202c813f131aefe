/*
 * Informers: a local, always-current copy of one resource, kept by one thread that lists and
 * then watches (client-go tools/cache reflector.go and shared_informer.go; reference
 * kubernetes-api.md 4.5). The watch starts from the list's resourceVersion with bookmarks on;
 * a 410 (HTTP status or ERROR event) relists; other failures reconnect after an exponential,
 * jittered, bounded backoff; a stream that ends cleanly is re-opened at once. A relist replaces
 * the cache and tells handlers what was added, changed and deleted meanwhile.
 *
 * Cached objects are immutable, decoded once and shared by reference: readers take a
 * reference (kube_object_ref/unref, atomic) and may keep it as long as they like, on any
 * thread. Lookups by "namespace/name" key (cluster-scoped: "name"), and indexes by namespace
 * and, when asked for, by spec.nodeName (pods).
 *
 * Handlers run on the informer's thread, one at a time, after the cache was updated, and
 * should only enqueue keys (workqueue.h): a slow handler holds up the watch.
 */
#ifndef KOORD_KUBE_INFORMER_H
#define KOORD_KUBE_INFORMER_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

struct kube_client;
struct kube_resource;

/* An immutable cached object. */
struct kube_object;

const cJSON *kube_object_json(const struct kube_object *o);     /* never modify */
const char *kube_object_key(const struct kube_object *o);       /* "ns/name" or "name" */
const char *kube_object_namespace(const struct kube_object *o); /* "" when cluster-scoped */
const char *kube_object_name(const struct kube_object *o);
const char *kube_object_resource_version(const struct kube_object *o);
const char *kube_object_node_name(const struct kube_object *o); /* spec.nodeName or "" */
/* Both take and return o; unref returns NULL (o = kube_object_unref(o)). NULL is fine. */
struct kube_object *kube_object_ref(struct kube_object *o);
struct kube_object *kube_object_unref(struct kube_object *o);
/* Unrefs every object of v (from kube_informer_list and friends) and frees v. */
void kube_objects_free(struct kube_object **v, size_t n);

/* The key of obj as the cache computes it, into buf; "" when obj has no name. */
void kube_object_key_of(const cJSON *obj, char *buf, size_t size);

/*
 * Handlers; any may be NULL. For update, old and new may be the same object on a resync.
 * A delete seen only through a relist passes the last cached state. The objects are borrowed
 * for the call (take a reference to keep one).
 */
struct kube_handlers {
    void (*on_add)(void *userdata, const struct kube_object *obj);
    void (*on_update)(void *userdata, const struct kube_object *old, const struct kube_object *obj);
    void (*on_delete)(void *userdata, const struct kube_object *obj);
    void *userdata;
};

struct kube_informer_opts {
    const struct kube_resource *resource; /* borrowed; must outlive the informer */
    const char *namespace;                /* NULL or "" = all namespaces */
    const char *label_selector;           /* may be NULL */
    const char *field_selector;           /* may be NULL */
    long resync_ms;          /* re-deliver every cached object as an update; 0 = never */
    long watch_timeout_s;    /* per watch request, random in [t, 2t); 0 = 300 (client-go) */
    long backoff_initial_ms; /* 0 = 800 (client-go) */
    long backoff_max_ms;     /* 0 = 30000 (client-go) */
    unsigned list_page;      /* list page size; 0 = 500 */
    size_t max_event_bytes;  /* one watch event; 0 = 16 MiB */
    bool index_node_name;    /* keep the spec.nodeName index */
    /* Cache objects without metadata.managedFields (the transform kube-scheduler's and
     * kube-controller-manager's informers set), for readers that never look at them: they
     * were 42 MB of koord scheduler's 197.5 MB peak in SchedulingBasic (11,000 pods, 5,000
     * nodes). An update built from such an object leaves the stored entries as they are (a
     * write without managedFields keeps the live ones). */
    bool drop_managed_fields;
};

struct kube_informer;

/* Copies opts (not the resource). The client is borrowed and must outlive the informer. */
struct kube_informer *kube_informer_new(struct kube_client *c,
                                        const struct kube_informer_opts *opts);

/* Adds a handler set (copied); only before kube_informer_start(). 0 or -EBUSY. */
int kube_informer_add_handlers(struct kube_informer *inf, const struct kube_handlers *h);

/* Starts the thread. 0, -EBUSY (already started), -errno from pthread_create. */
int kube_informer_start(struct kube_informer *inf);

/* Whether the first list has been applied (handlers saw every object). */
bool kube_informer_has_synced(struct kube_informer *inf);

/* Waits up to timeout_ms for has_synced. Returns it. */
bool kube_informer_wait_synced(struct kube_informer *inf, long timeout_ms);

/* The object with key, with a new reference (unref it), or NULL. */
struct kube_object *kube_informer_get(struct kube_informer *inf, const char *key);

/* Every object (ns NULL) or those of namespace ns, as new references in *ret (free with
 * kube_objects_free()); returns the count. */
size_t kube_informer_list(struct kube_informer *inf, const char *ns, struct kube_object ***ret);

/* Objects whose spec.nodeName is node (needs index_node_name, else 0). */
size_t kube_informer_list_by_node(struct kube_informer *inf, const char *node,
                                  struct kube_object ***ret);

/* Counters, for tests and metrics. */
struct kube_informer_stats {
    unsigned long lists;       /* successful (re)lists */
    unsigned long watches;     /* watch requests started */
    unsigned long expired;     /* 410s seen */
    unsigned long failures;    /* failed lists and watches (backoffs) */
    char resource_version[32]; /* the last one seen (list, event or bookmark) */
};
void kube_informer_stats(struct kube_informer *inf, struct kube_informer_stats *ret);

/* Stops the thread (waking it from any wait or watch at once) and joins it. Idempotent. */
void kube_informer_stop(struct kube_informer *inf);

/* Stops and frees; references handed out stay valid. NULL is fine. */
void kube_informer_free(struct kube_informer *inf);

#endif
