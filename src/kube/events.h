/*
 * The event recorder: core/v1 Events on the objects a controller acts on ("why is my NodeSLO
 * not updated?" is answered by `kubectl describe`). Like client-go's EventCorrelator
 * (tools/record/events_cache.go), a repeat of the same (object, type, reason, message) within
 * a window does not create a new Event: the existing one gets count + 1 and a new
 * lastTimestamp through a merge PATCH. If that Event is gone (deleted, expired), a new one is
 * created.
 *
 * Calls are synchronous on the caller's thread (a controller's worker), so an event is on the
 * server when the call returns; failures are returned, never logged above debug. Thread safety:
 * one recorder may be used by any number of threads.
 */
#ifndef KOORD_KUBE_EVENTS_H
#define KOORD_KUBE_EVENTS_H

#include <cjson/cJSON.h>

struct kube_client;

struct kube_recorder_opts {
    const char *component; /* source.component, e.g. "koord-manager" */
    const char *host;      /* source.host; may be NULL */
    long window_ms;        /* deduplication window; 0 = 10 minutes */
    unsigned max_cached;   /* remembered distinct events; 0 = 4096 (oldest forgotten first) */
};

struct kube_recorder;

/* Copies opts; the client is borrowed. */
struct kube_recorder *kube_recorder_new(struct kube_client *c,
                                        const struct kube_recorder_opts *opts);
void kube_recorder_free(struct kube_recorder *rec);

#define KUBE_EVENT_NORMAL  "Normal"
#define KUBE_EVENT_WARNING "Warning"

/*
 * Records an event about obj (an object with apiVersion, kind and metadata: name, and
 * namespace, uid, resourceVersion when it has them). The Event lives in obj's namespace, or in
 * "default" for cluster-scoped objects, as kubectl describe looks for it. type is
 * KUBE_EVENT_NORMAL or KUBE_EVENT_WARNING; reason a CamelCase word; message printf-style.
 * 0, -EINVAL (obj lacks kind or name), or the REST error.
 */
int kube_recorder_event(struct kube_recorder *rec, const cJSON *obj, const char *type,
                        const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
