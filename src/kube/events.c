/*
 * The event recorder (see events.h). The dedupe cache maps (object, type, reason, message) to
 * the Event last written for it; the lock is held across the request so two workers reporting
 * the same thing at once produce one Event with count 2, not two Events.
 */
#include "kube/events.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/rfc3339.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "kube/client.h"
#include "kube/kube-int.h"

#define DEFAULT_WINDOW_MS 600000L
#define DEFAULT_MAX       4096u
#define MAX_MESSAGE       1024

struct entry {
    char *ns;   /* of the Event */
    char *name; /* of the Event */
    unsigned count;
    double last; /* monotonic seconds */
};

struct kube_recorder {
    struct kube_client *client;
    char *component, *host;
    double window_s;
    unsigned max;
    pthread_mutex_t lock;
    struct hmap cache; /* dedupe key -> struct entry * */
};

struct kube_recorder *kube_recorder_new(struct kube_client *c,
                                        const struct kube_recorder_opts *opts)
{
    struct kube_recorder *rec = xcalloc(1, sizeof(*rec));

    rec->client = c;
    rec->component = xstrdup(opts->component ? opts->component : "koord");
    rec->host = opts->host ? xstrdup(opts->host) : NULL;
    rec->window_s = (double)(opts->window_ms > 0 ? opts->window_ms : DEFAULT_WINDOW_MS) / 1000.0;
    rec->max = opts->max_cached ? opts->max_cached : DEFAULT_MAX;
    CHECK(pthread_mutex_init(&rec->lock, NULL) == 0);
    hmap_init(&rec->cache);
    return rec;
}

static void entry_free(struct entry *e)
{
    if (!e)
        return;
    free(e->ns);
    free(e->name);
    free(e);
}

void kube_recorder_free(struct kube_recorder *rec)
{
    size_t it;

    if (!rec)
        return;
    for (struct hmap_entry *e = hmap_first(&rec->cache, &it); e; e = hmap_next(&rec->cache, e, &it))
        entry_free(e->value);
    hmap_release(&rec->cache);
    (void)pthread_mutex_destroy(&rec->lock);
    free(rec->component);
    free(rec->host);
    free(rec);
}

static const char *str_at(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, a);

    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static void now_time(char buf[RFC3339_STR_MAX], struct timespec *ts)
{
    (void)clock_gettime(CLOCK_REALTIME, ts);
    (void)rfc3339_format((int64_t)ts->tv_sec, buf);
}

static cJSON *build_event(struct kube_recorder *rec, const cJSON *obj, const char *ns,
                          const char *type, const char *reason, const char *msg)
{
    char ts[RFC3339_STR_MAX], name[320];
    struct timespec now;
    cJSON *ev = cJSON_CreateObject(), *meta, *io, *src;

    CHECK(ev);
    now_time(ts, &now);
    /* client-go names events "<object>.<unix nanos in hex>" (tools/record/event.go). */
    (void)snprintf(name, sizeof(name), "%.253s.%llx", str_at(obj, "metadata", "name"),
                   (unsigned long long)now.tv_sec * 1000000000ULL +
                       (unsigned long long)now.tv_nsec);
    CHECK(cJSON_AddStringToObject(ev, "apiVersion", "v1"));
    CHECK(cJSON_AddStringToObject(ev, "kind", "Event"));
    CHECK(meta = cJSON_AddObjectToObject(ev, "metadata"));
    CHECK(cJSON_AddStringToObject(meta, "name", name));
    CHECK(cJSON_AddStringToObject(meta, "namespace", ns));
    CHECK(io = cJSON_AddObjectToObject(ev, "involvedObject"));
    CHECK(cJSON_AddStringToObject(io, "kind", str_at(obj, "kind", NULL)));
    if (*str_at(obj, "apiVersion", NULL))
        CHECK(cJSON_AddStringToObject(io, "apiVersion", str_at(obj, "apiVersion", NULL)));
    CHECK(cJSON_AddStringToObject(io, "name", str_at(obj, "metadata", "name")));
    if (*str_at(obj, "metadata", "namespace"))
        CHECK(cJSON_AddStringToObject(io, "namespace", str_at(obj, "metadata", "namespace")));
    if (*str_at(obj, "metadata", "uid"))
        CHECK(cJSON_AddStringToObject(io, "uid", str_at(obj, "metadata", "uid")));
    if (*str_at(obj, "metadata", "resourceVersion"))
        CHECK(cJSON_AddStringToObject(io, "resourceVersion",
                                      str_at(obj, "metadata", "resourceVersion")));
    CHECK(cJSON_AddStringToObject(ev, "reason", reason));
    CHECK(cJSON_AddStringToObject(ev, "message", msg));
    CHECK(cJSON_AddStringToObject(ev, "type", type));
    CHECK(src = cJSON_AddObjectToObject(ev, "source"));
    CHECK(cJSON_AddStringToObject(src, "component", rec->component));
    if (rec->host)
        CHECK(cJSON_AddStringToObject(src, "host", rec->host));
    CHECK(cJSON_AddStringToObject(ev, "firstTimestamp", ts));
    CHECK(cJSON_AddStringToObject(ev, "lastTimestamp", ts));
    CHECK(cJSON_AddNumberToObject(ev, "count", 1));
    return ev;
}

/* Forgets the least recently seen entry when the cache is full. */
static void evict(struct kube_recorder *rec)
{
    struct hmap_entry *e, *oldest = NULL;
    size_t it;

    if (rec->cache.n < rec->max)
        return;
    for (e = hmap_first(&rec->cache, &it); e; e = hmap_next(&rec->cache, e, &it))
        if (!oldest || ((struct entry *)e->value)->last < ((struct entry *)oldest->value)->last)
            oldest = e;
    if (oldest) {
        char *key = xstrdup(oldest->key);
        entry_free(hmap_del(&rec->cache, key));
        free(key);
    }
}

static int patch_count(struct kube_recorder *rec, struct entry *e)
{
    char ts[RFC3339_STR_MAX];
    struct timespec now;
    cJSON *p = cJSON_CreateObject();
    int r;

    CHECK(p);
    now_time(ts, &now);
    CHECK(cJSON_AddNumberToObject(p, "count", e->count + 1));
    CHECK(cJSON_AddStringToObject(p, "lastTimestamp", ts));
    r = kube_patch(rec->client, &kube_res_events, e->ns, e->name, NULL, KUBE_PATCH_MERGE, p, NULL,
                   NULL);
    cJSON_Delete(p);
    if (r == 0)
        e->count++;
    return r;
}

int kube_recorder_event(struct kube_recorder *rec, const cJSON *obj, const char *type,
                        const char *reason, const char *fmt, ...)
{
    struct strbuf msg = STRBUF_INIT, key = STRBUF_INIT;
    const char *ons = str_at(obj, "metadata", "namespace");
    const char *ns = *ons ? ons : "default";
    struct entry *e;
    cJSON *ev = NULL, *got = NULL;
    va_list ap;
    int r;

    if (!*str_at(obj, "kind", NULL) || !*str_at(obj, "metadata", "name"))
        return -EINVAL;
    va_start(ap, fmt);
    strbuf_vaddf(&msg, fmt, ap);
    va_end(ap);
    if (msg.len > MAX_MESSAGE)
        strbuf_setlen(&msg, MAX_MESSAGE);
    strbuf_addf(&key, "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s",
                str_at(obj, "apiVersion", NULL), str_at(obj, "kind", NULL), ons,
                str_at(obj, "metadata", "name"), str_at(obj, "metadata", "uid"), type, reason,
                msg.buf);

    (void)pthread_mutex_lock(&rec->lock);
    e = hmap_get(&rec->cache, key.buf);
    if (e && kube__now() - e->last <= rec->window_s) {
        r = patch_count(rec, e);
        if (r != -ENOENT) {
            if (r == 0)
                e->last = kube__now();
            goto out;
        }
    }
    /* New, outside the window, or its Event is gone: create one. */
    ev = build_event(rec, obj, ns, type, reason, msg.buf);
    r = kube_create(rec->client, &kube_res_events, ns, ev, &got, NULL);
    if (r < 0)
        goto out;
    if (!e) {
        evict(rec);
        e = xcalloc(1, sizeof(*e));
        (void)hmap_put(&rec->cache, key.buf, e);
    }
    free(e->ns);
    free(e->name);
    e->ns = xstrdup(ns);
    e->name = xstrdup(*str_at(got, "metadata", "name") ? str_at(got, "metadata", "name")
                                                       : str_at(ev, "metadata", "name"));
    e->count = 1;
    e->last = kube__now();
out:
    (void)pthread_mutex_unlock(&rec->lock);
    cJSON_Delete(ev);
    cJSON_Delete(got);
    strbuf_release(&msg);
    strbuf_release(&key);
    return r;
}
