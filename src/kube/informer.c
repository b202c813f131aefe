/*
 * The informer (see informer.h): one thread runs the reflector loop of client-go
 * (tools/cache/reflector.go ListAndWatch) against the REST client, applies each change to the
 * cache under the lock, then calls the handlers without it. A second thread exists only when a
 * resync period is set; a dispatch mutex keeps the two from calling handlers at once.
 */
#include "kube/informer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "http/client.h"
#include "kube/client.h"
#include "kube/kube-int.h"

#define DEFAULT_WATCH_TIMEOUT_S 300L
#define DEFAULT_BACKOFF_MS      800L
#define DEFAULT_BACKOFF_MAX_MS  30000L
#define DEFAULT_PAGE            500u
#define DEFAULT_MAX_EVENT       ((size_t)16 << 20)
#define MAX_ERROR_BODY          ((size_t)1 << 20)
#define MAX_HANDLERS            8
#define MAX_KEY                 512
#define SHORT_WATCH_S           1.0

struct kube_object {
    atomic_int refs;
    cJSON *json;
    char *key;
    char *ns;
    char *name;
    char *rv;
    char *node;
};

struct kube_informer {
    struct kube_client *client;
    struct kube_informer_opts o;
    char *ns, *labels, *fields;
    struct kube_handlers handlers[MAX_HANDLERS];
    size_t nhandlers;

    pthread_t thread, resync_thread;
    bool started, has_resync_thread;
    struct http_client_cancel *cancel;

    pthread_mutex_t lock; /* everything below */
    pthread_cond_t cond;  /* synced, stopping */
    bool synced, stopping;
    struct hmap items;   /* key -> object (one reference) */
    struct hmap by_ns;   /* ns -> struct hmap * (key -> object, borrowed) */
    struct hmap by_node; /* node -> struct hmap * */
    struct kube_informer_stats stats;

    pthread_mutex_t dispatch; /* one handler call at a time */

    /* watch state, used by the informer thread only */
    struct strbuf line;
    struct strbuf errbody;
    unsigned long events;
    bool expired;
    int watch_err;
};

/* ---- objects ---- */

static const char *meta_str(const cJSON *obj, const char *key)
{
    const cJSON *v =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

void kube_object_key_of(const cJSON *obj, char *buf, size_t size)
{
    const char *ns = meta_str(obj, "namespace"), *name = meta_str(obj, "name");

    if (!*name)
        (void)snprintf(buf, size, "%s", "");
    else if (*ns)
        (void)snprintf(buf, size, "%s/%s", ns, name);
    else
        (void)snprintf(buf, size, "%s", name);
}

/* Takes ownership of json. */
static struct kube_object *object_new(cJSON *json)
{
    struct kube_object *o = xcalloc(1, sizeof(*o));
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(json, "spec"), "nodeName");
    char key[MAX_KEY];

    atomic_init(&o->refs, 1);
    o->json = json;
    kube_object_key_of(json, key, sizeof(key));
    o->key = xstrdup(key);
    o->ns = xstrdup(meta_str(json, "namespace"));
    o->name = xstrdup(meta_str(json, "name"));
    o->rv = xstrdup(meta_str(json, "resourceVersion"));
    o->node = xstrdup(cJSON_IsString(node) ? node->valuestring : "");
    return o;
}

const cJSON *kube_object_json(const struct kube_object *o)
{
    return o->json;
}

const char *kube_object_key(const struct kube_object *o)
{
    return o->key;
}

const char *kube_object_namespace(const struct kube_object *o)
{
    return o->ns;
}

const char *kube_object_name(const struct kube_object *o)
{
    return o->name;
}

const char *kube_object_resource_version(const struct kube_object *o)
{
    return o->rv;
}

const char *kube_object_node_name(const struct kube_object *o)
{
    return o->node;
}

struct kube_object *kube_object_ref(struct kube_object *o)
{
    if (o)
        atomic_fetch_add_explicit(&o->refs, 1, memory_order_relaxed);
    return o;
}

struct kube_object *kube_object_unref(struct kube_object *o)
{
    if (!o || atomic_fetch_sub_explicit(&o->refs, 1, memory_order_acq_rel) != 1)
        return NULL;
    cJSON_Delete(o->json);
    free(o->key);
    free(o->ns);
    free(o->name);
    free(o->rv);
    free(o->node);
    free(o);
    return NULL;
}

void kube_objects_free(struct kube_object **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        (void)kube_object_unref(v[i]);
    free(v);
}

/* ---- cache and indexes (under inf->lock) ---- */

static void index_add(struct hmap *idx, const char *value, struct kube_object *o)
{
    struct hmap *set = hmap_get(idx, value);

    if (!set) {
        set = xmalloc(sizeof(*set));
        hmap_init(set);
        (void)hmap_put(idx, value, set);
    }
    (void)hmap_put(set, o->key, o);
}

static void index_del(struct hmap *idx, const char *value, const struct kube_object *o)
{
    struct hmap *set = hmap_get(idx, value);

    if (!set)
        return;
    (void)hmap_del(set, o->key);
    if (set->n == 0) {
        (void)hmap_del(idx, value);
        hmap_release(set);
        free(set);
    }
}

static void index_release(struct hmap *idx)
{
    size_t it;

    for (struct hmap_entry *e = hmap_first(idx, &it); e; e = hmap_next(idx, e, &it)) {
        hmap_release(e->value);
        free(e->value);
    }
    hmap_release(idx);
}

static void indexes_add(struct kube_informer *inf, struct kube_object *o)
{
    index_add(&inf->by_ns, o->ns, o);
    if (inf->o.index_node_name && *o->node)
        index_add(&inf->by_node, o->node, o);
}

static void indexes_del(struct kube_informer *inf, const struct kube_object *o)
{
    index_del(&inf->by_ns, o->ns, o);
    if (inf->o.index_node_name && *o->node)
        index_del(&inf->by_node, o->node, o);
}

/* Puts o (taking the caller's reference); returns the replaced object's reference or NULL. */
static struct kube_object *cache_put(struct kube_informer *inf, struct kube_object *o)
{
    struct kube_object *old = hmap_put(&inf->items, o->key, o);

    if (old)
        indexes_del(inf, old);
    indexes_add(inf, o);
    return old;
}

static struct kube_object *cache_del(struct kube_informer *inf, const char *key)
{
    struct kube_object *old = hmap_del(&inf->items, key);

    if (old)
        indexes_del(inf, old);
    return old;
}

static void set_rv(struct kube_informer *inf, const char *rv)
{
    if (rv && *rv)
        (void)snprintf(inf->stats.resource_version, sizeof(inf->stats.resource_version), "%s", rv);
}

/* ---- handlers ---- */

enum change { CHANGE_ADD, CHANGE_UPDATE, CHANGE_DELETE };

static void dispatch(struct kube_informer *inf, enum change ch, const struct kube_object *old,
                     const struct kube_object *obj)
{
    (void)pthread_mutex_lock(&inf->dispatch);
    for (size_t i = 0; i < inf->nhandlers; i++) {
        const struct kube_handlers *h = &inf->handlers[i];

        if (ch == CHANGE_ADD && h->on_add)
            h->on_add(h->userdata, obj);
        else if (ch == CHANGE_UPDATE && h->on_update)
            h->on_update(h->userdata, old, obj);
        else if (ch == CHANGE_DELETE && h->on_delete)
            h->on_delete(h->userdata, obj);
    }
    (void)pthread_mutex_unlock(&inf->dispatch);
}

/* ---- lifecycle ---- */

static char *dup_opt(const char *s)
{
    return s && *s ? xstrdup(s) : NULL;
}

struct kube_informer *kube_informer_new(struct kube_client *c,
                                        const struct kube_informer_opts *opts)
{
    struct kube_informer *inf = xcalloc(1, sizeof(*inf));

    inf->client = c;
    inf->o = *opts;
    inf->ns = dup_opt(opts->namespace);
    inf->labels = dup_opt(opts->label_selector);
    inf->fields = dup_opt(opts->field_selector);
    inf->o.namespace = inf->ns;
    inf->o.label_selector = inf->labels;
    inf->o.field_selector = inf->fields;
    if (inf->o.watch_timeout_s <= 0)
        inf->o.watch_timeout_s = DEFAULT_WATCH_TIMEOUT_S;
    if (inf->o.backoff_initial_ms <= 0)
        inf->o.backoff_initial_ms = DEFAULT_BACKOFF_MS;
    if (inf->o.backoff_max_ms <= 0)
        inf->o.backoff_max_ms = DEFAULT_BACKOFF_MAX_MS;
    if (inf->o.backoff_max_ms < inf->o.backoff_initial_ms)
        inf->o.backoff_max_ms = inf->o.backoff_initial_ms;
    if (!inf->o.list_page)
        inf->o.list_page = DEFAULT_PAGE;
    if (!inf->o.max_event_bytes)
        inf->o.max_event_bytes = DEFAULT_MAX_EVENT;
    inf->cancel = http_client_cancel_new();
    CHECK(pthread_mutex_init(&inf->lock, NULL) == 0);
    CHECK(pthread_mutex_init(&inf->dispatch, NULL) == 0);
    kube__cond_init(&inf->cond);
    hmap_init(&inf->items);
    hmap_init(&inf->by_ns);
    hmap_init(&inf->by_node);
    strbuf_init(&inf->line);
    strbuf_init(&inf->errbody);
    return inf;
}

int kube_informer_add_handlers(struct kube_informer *inf, const struct kube_handlers *h)
{
    if (inf->started || inf->nhandlers == MAX_HANDLERS)
        return -EBUSY;
    inf->handlers[inf->nhandlers++] = *h;
    return 0;
}

static bool is_stopping(struct kube_informer *inf)
{
    bool s;

    (void)pthread_mutex_lock(&inf->lock);
    s = inf->stopping;
    (void)pthread_mutex_unlock(&inf->lock);
    return s;
}

/* Waits up to seconds unless stopping; returns whether stopping. */
static bool wait_stop(struct kube_informer *inf, double seconds)
{
    struct timespec ts;
    bool s;

    kube__deadline(seconds, &ts);
    (void)pthread_mutex_lock(&inf->lock);
    while (!inf->stopping && pthread_cond_timedwait(&inf->cond, &inf->lock, &ts) == 0)
        ;
    s = inf->stopping;
    (void)pthread_mutex_unlock(&inf->lock);
    return s;
}

/* ---- list ---- */

/* Fills kind/apiVersion, which list items lack, so handlers see complete objects. */
static void complete_type(const struct kube_resource *res, cJSON *obj)
{
    char av[128];

    if (!cJSON_GetObjectItemCaseSensitive(obj, "kind"))
        (void)cJSON_AddStringToObject(obj, "kind", res->kind);
    if (!cJSON_GetObjectItemCaseSensitive(obj, "apiVersion")) {
        if (*res->group)
            (void)snprintf(av, sizeof(av), "%s/%s", res->group, res->version);
        else
            (void)snprintf(av, sizeof(av), "%s", res->version);
        (void)cJSON_AddStringToObject(obj, "apiVersion", av);
    }
}

/* What the cache keeps of a listed or watched object (kube_informer_opts.drop_managed_fields):
 * dropped before it is decoded into a struct kube_object, so the cache never holds them. */
static void trim(const struct kube_informer *inf, cJSON *obj)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");

    if (inf->o.drop_managed_fields && cJSON_IsObject(meta))
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "managedFields");
}

struct change_rec {
    enum change ch;
    struct kube_object *old; /* reference, may be NULL */
    struct kube_object *obj; /* reference */
};

/* Replaces the cache with fresh (key -> object references) and delivers the differences:
 * add for new keys, update for kept ones, delete for vanished ones (client-go Replace). */
static void replace(struct kube_informer *inf, struct hmap *fresh, const char *rv)
{
    struct change_rec *recs;
    size_t n = 0, it, cap;
    struct hmap_entry *e;

    (void)pthread_mutex_lock(&inf->lock);
    cap = fresh->n + inf->items.n;
    recs = xcalloc(cap ? cap : 1, sizeof(*recs));
    for (e = hmap_first(&inf->items, &it); e; e = hmap_next(&inf->items, e, &it))
        if (!hmap_get(fresh, e->key))
            recs[n++] = (struct change_rec){CHANGE_DELETE, NULL, e->value};
    for (size_t i = 0; i < n; i++)
        (void)cache_del(inf, recs[i].obj->key);
    for (e = hmap_first(fresh, &it); e; e = hmap_next(fresh, e, &it)) {
        struct kube_object *o = e->value, *old = cache_put(inf, kube_object_ref(o));
        recs[n++] = (struct change_rec){old ? CHANGE_UPDATE : CHANGE_ADD, old, kube_object_ref(o)};
    }
    set_rv(inf, rv);
    inf->stats.lists++;
    (void)pthread_mutex_unlock(&inf->lock);

    for (size_t i = 0; i < n; i++) {
        dispatch(inf, recs[i].ch, recs[i].old, recs[i].obj);
        (void)kube_object_unref(recs[i].old);
        (void)kube_object_unref(recs[i].obj);
    }
    free(recs);
    (void)pthread_mutex_lock(&inf->lock);
    inf->synced = true;
    (void)pthread_cond_broadcast(&inf->cond);
    (void)pthread_mutex_unlock(&inf->lock);
}

static void fresh_release(struct hmap *fresh)
{
    size_t it;

    for (struct hmap_entry *e = hmap_first(fresh, &it); e; e = hmap_next(fresh, e, &it))
        (void)kube_object_unref(e->value);
    hmap_release(fresh);
}

/* Lists every page (a consistent read) and replaces the cache. */
static int do_list(struct kube_informer *inf)
{
    struct kube_list_opts lo = {
        .label_selector = inf->labels,
        .field_selector = inf->fields,
        .limit = inf->o.list_page,
    };
    struct hmap fresh;
    char *cont = NULL, *rv = NULL;
    int r;

    hmap_init(&fresh);
    do {
        cJSON *list = NULL, *items, *item, *meta;
        const cJSON *v;

        lo.continue_token = cont;
        r = kube_list(inf->client, inf->o.resource, inf->ns, &lo, &list, NULL);
        FREE_AND_NULL(cont);
        if (r < 0)
            break;
        items = cJSON_GetObjectItemCaseSensitive(list, "items");
        while (cJSON_IsArray(items) && (item = cJSON_DetachItemFromArray(items, 0))) {
            struct kube_object *o;

            complete_type(inf->o.resource, item);
            trim(inf, item);
            o = object_new(item);
            if (!*o->key) {
                (void)kube_object_unref(o);
                continue;
            }
            (void)kube_object_unref(hmap_put(&fresh, o->key, o));
        }
        meta = cJSON_GetObjectItemCaseSensitive(list, "metadata");
        v = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
        if (cJSON_IsString(v)) {
            free(rv);
            rv = xstrdup(v->valuestring);
        }
        v = cJSON_GetObjectItemCaseSensitive(meta, "continue");
        if (cJSON_IsString(v) && *v->valuestring)
            cont = xstrdup(v->valuestring);
        cJSON_Delete(list);
    } while (cont && !is_stopping(inf));
    if (r == 0 && cont)
        r = -ECANCELED;
    if (r == 0)
        replace(inf, &fresh, rv);
    fresh_release(&fresh);
    free(cont);
    free(rv);
    return r;
}

/* ---- watch ---- */

static void apply_event(struct kube_informer *inf, const char *type, cJSON *obj)
{
    struct kube_object *o, *old;

    if (!strcmp(type, "BOOKMARK")) {
        (void)pthread_mutex_lock(&inf->lock);
        set_rv(inf, meta_str(obj, "resourceVersion"));
        (void)pthread_mutex_unlock(&inf->lock);
        cJSON_Delete(obj);
        return;
    }
    o = object_new(obj);
    if (!*o->key) {
        (void)kube_object_unref(o);
        return;
    }
    (void)pthread_mutex_lock(&inf->lock);
    if (!strcmp(type, "DELETED")) {
        old = cache_del(inf, o->key);
    } else {
        old = cache_put(inf, kube_object_ref(o));
    }
    set_rv(inf, o->rv);
    (void)pthread_mutex_unlock(&inf->lock);
    if (!strcmp(type, "DELETED"))
        dispatch(inf, CHANGE_DELETE, NULL, old ? old : o);
    else
        dispatch(inf, old ? CHANGE_UPDATE : CHANGE_ADD, old, o);
    (void)kube_object_unref(old);
    (void)kube_object_unref(o);
}

/* One line of the stream: a WatchEvent. Returns < 0 to end the stream. */
static int handle_line(struct kube_informer *inf, const char *line, size_t len)
{
    struct codec_limits lim = codec_default_limits;
    cJSON *ev = NULL, *obj;
    const cJSON *type;
    int r;

    while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
        len--;
    if (len == 0)
        return 0;
    lim.max_bytes = inf->o.max_event_bytes;
    r = json_parse(line, len, &lim, &ev, NULL);
    if (r < 0)
        return -EPROTO;
    type = cJSON_GetObjectItemCaseSensitive(ev, "type");
    obj = cJSON_DetachItemFromObjectCaseSensitive(ev, "object");
    if (!cJSON_IsString(type) || !cJSON_IsObject(obj)) {
        cJSON_Delete(obj);
        cJSON_Delete(ev);
        return -EPROTO;
    }
    if (!strcmp(type->valuestring, "ERROR")) {
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(obj, "code");
        const cJSON *reason = cJSON_GetObjectItemCaseSensitive(obj, "reason");

        r = -EIO;
        if ((cJSON_IsNumber(code) && code->valuedouble == 410) ||
            (cJSON_IsString(reason) &&
             (!strcmp(reason->valuestring, "Expired") || !strcmp(reason->valuestring, "Gone")))) {
            inf->expired = true;
            r = -ERANGE;
        }
        cJSON_Delete(obj);
    } else if (!strcmp(type->valuestring, "ADDED") || !strcmp(type->valuestring, "MODIFIED") ||
               !strcmp(type->valuestring, "DELETED") || !strcmp(type->valuestring, "BOOKMARK")) {
        if (strcmp(type->valuestring, "BOOKMARK")) {
            complete_type(inf->o.resource, obj);
            trim(inf, obj);
        }
        inf->events++;
        apply_event(inf, type->valuestring, obj);
        r = 0;
    } else {
        /* Unknown event types are skipped, as client-go logs and drops them. */
        cJSON_Delete(obj);
        r = 0;
    }
    cJSON_Delete(ev);
    return r;
}

static int on_watch_data(void *ud, long status, const char *data, size_t len)
{
    struct kube_informer *inf = ud;
    const char *nl;

    if (status != 200) {
        if (inf->errbody.len + len > MAX_ERROR_BODY)
            return -E2BIG;
        strbuf_add(&inf->errbody, data, len);
        return 0;
    }
    while (len > 0) {
        nl = memchr(data, '\n', len);
        if (!nl) {
            if (inf->line.len + len > inf->o.max_event_bytes)
                return -E2BIG;
            strbuf_add(&inf->line, data, len);
            return 0;
        }
        if (inf->line.len + (size_t)(nl - data) > inf->o.max_event_bytes)
            return -E2BIG;
        strbuf_add(&inf->line, data, (size_t)(nl - data));
        len -= (size_t)(nl - data) + 1;
        data = nl + 1;
        {
            int r = handle_line(inf, inf->line.buf, inf->line.len);
            strbuf_reset(&inf->line);
            if (r < 0) {
                inf->watch_err = r;
                return r;
            }
        }
    }
    return 0;
}

/* Runs one watch request to its end. 0 for a clean end of stream; -ERANGE for a 410 (either
 * form); other errors otherwise. */
static int do_watch(struct kube_informer *inf)
{
    struct http_client_resp resp = HTTP_CLIENT_RESP_INIT;
    struct strbuf path = STRBUF_INIT;
    char num[24];
    long tmo = inf->o.watch_timeout_s;
    int r;

    kube_path(inf->o.resource, inf->ns, NULL, NULL, &path);
    kube__add_query(&path, "watch", "true");
    (void)pthread_mutex_lock(&inf->lock);
    kube__add_query(&path, "resourceVersion", inf->stats.resource_version);
    inf->stats.watches++;
    (void)pthread_mutex_unlock(&inf->lock);
    kube__add_query(&path, "allowWatchBookmarks", "true");
    (void)snprintf(num, sizeof(num), "%ld", tmo + (long)(kube__rand() * (double)tmo));
    kube__add_query(&path, "timeoutSeconds", num);
    kube__add_query(&path, "labelSelector", inf->labels);
    kube__add_query(&path, "fieldSelector", inf->fields);
    strbuf_reset(&inf->line);
    strbuf_reset(&inf->errbody);
    inf->expired = false;
    inf->watch_err = 0;
    r = kube_stream(inf->client, path.buf, on_watch_data, inf, inf->cancel, &resp);
    if (inf->expired) {
        r = -ERANGE;
    } else if (r == 0 && resp.status != 200) {
        struct kube_status st;
        r = kube_status_decode((int)resp.status, inf->errbody.buf, inf->errbody.len, &st);
        if (kube_status_is_expired(r, &st))
            r = -ERANGE;
        else if (r == 0)
            r = -EPROTO;
    } else if (r == 0 && inf->line.len) {
        /* A last event without its newline still counts. */
        r = handle_line(inf, inf->line.buf, inf->line.len);
    }
    http_client_resp_release(&resp);
    strbuf_release(&path);
    return r;
}

/* client-go's wait.Backoff of the reflector: initial * 2^n, jitter 1.0, capped. */
static double next_backoff(struct kube_informer *inf, unsigned *steps)
{
    double d = (double)inf->o.backoff_initial_ms / 1000.0,
           max = (double)inf->o.backoff_max_ms / 1000.0;

    for (unsigned i = 0; i < *steps && d < max; i++)
        d *= 2;
    d += d * kube__rand();
    if (d > max)
        d = max;
    (*steps)++;
    return d;
}

static void count_failure(struct kube_informer *inf, bool expired)
{
    (void)pthread_mutex_lock(&inf->lock);
    if (expired)
        inf->stats.expired++;
    else
        inf->stats.failures++;
    (void)pthread_mutex_unlock(&inf->lock);
}

static void *run(void *arg)
{
    struct kube_informer *inf = arg;
    bool need_list = true;
    unsigned steps = 0;

    while (!is_stopping(inf)) {
        double started;
        int r;

        if (need_list) {
            r = do_list(inf);
            if (r == -ECANCELED || is_stopping(inf))
                break;
            if (r < 0) {
                count_failure(inf, false);
                if (wait_stop(inf, next_backoff(inf, &steps)))
                    break;
                continue;
            }
            need_list = false;
        }
        started = kube__now();
        inf->events = 0;
        r = do_watch(inf);
        if (r == -ECANCELED || is_stopping(inf))
            break;
        if (r == -ERANGE) {
            /* 410: our resourceVersion is gone from the server's history; relist at once. */
            count_failure(inf, true);
            need_list = true;
            continue;
        }
        if (r == 0 && (inf->events > 0 || kube__now() - started >= SHORT_WATCH_S)) {
            steps = 0;
            continue;
        }
        /* A failure, or a watch that closed at once with nothing (client-go: "very short
         * watch"). A refused connection or 429 re-watches; anything else relists. */
        count_failure(inf, false);
        if (inf->events > 0)
            steps = 0;
        need_list = r != -ECONNREFUSED && r != -EAGAIN;
        if (wait_stop(inf, next_backoff(inf, &steps)))
            break;
    }
    return NULL;
}

static void *run_resync(void *arg)
{
    struct kube_informer *inf = arg;

    while (!wait_stop(inf, (double)inf->o.resync_ms / 1000.0)) {
        struct kube_object **v = NULL;
        size_t n = kube_informer_list(inf, NULL, &v);

        for (size_t i = 0; i < n; i++) {
            bool current;

            (void)pthread_mutex_lock(&inf->lock);
            current = hmap_get(&inf->items, v[i]->key) == v[i];
            (void)pthread_mutex_unlock(&inf->lock);
            if (current)
                dispatch(inf, CHANGE_UPDATE, v[i], v[i]);
        }
        kube_objects_free(v, n);
    }
    return NULL;
}

int kube_informer_start(struct kube_informer *inf)
{
    int r;

    if (inf->started)
        return -EBUSY;
    r = pthread_create(&inf->thread, NULL, run, inf);
    if (r != 0)
        return -r;
    inf->started = true;
    if (inf->o.resync_ms > 0) {
        r = pthread_create(&inf->resync_thread, NULL, run_resync, inf);
        if (r != 0) {
            kube_informer_stop(inf);
            return -r;
        }
        inf->has_resync_thread = true;
    }
    return 0;
}

bool kube_informer_has_synced(struct kube_informer *inf)
{
    bool s;

    (void)pthread_mutex_lock(&inf->lock);
    s = inf->synced;
    (void)pthread_mutex_unlock(&inf->lock);
    return s;
}

bool kube_informer_wait_synced(struct kube_informer *inf, long timeout_ms)
{
    struct timespec ts;
    bool s;

    kube__deadline((double)timeout_ms / 1000.0, &ts);
    (void)pthread_mutex_lock(&inf->lock);
    while (!inf->synced && !inf->stopping &&
           pthread_cond_timedwait(&inf->cond, &inf->lock, &ts) == 0)
        ;
    s = inf->synced;
    (void)pthread_mutex_unlock(&inf->lock);
    return s;
}

struct kube_object *kube_informer_get(struct kube_informer *inf, const char *key)
{
    struct kube_object *o;

    (void)pthread_mutex_lock(&inf->lock);
    o = kube_object_ref(hmap_get(&inf->items, key));
    (void)pthread_mutex_unlock(&inf->lock);
    return o;
}

static size_t collect(const struct hmap *m, struct kube_object ***ret)
{
    struct kube_object **v = xcalloc(m && m->n ? m->n : 1, sizeof(struct kube_object *));
    size_t n = 0, it;

    if (m)
        for (struct hmap_entry *e = hmap_first(m, &it); e; e = hmap_next(m, e, &it))
            v[n++] = kube_object_ref(e->value);
    *ret = v;
    return n;
}

size_t kube_informer_list(struct kube_informer *inf, const char *ns, struct kube_object ***ret)
{
    size_t n;

    (void)pthread_mutex_lock(&inf->lock);
    n = collect(ns ? hmap_get(&inf->by_ns, ns) : &inf->items, ret);
    (void)pthread_mutex_unlock(&inf->lock);
    return n;
}

size_t kube_informer_list_by_node(struct kube_informer *inf, const char *node,
                                  struct kube_object ***ret)
{
    size_t n;

    (void)pthread_mutex_lock(&inf->lock);
    n = collect(hmap_get(&inf->by_node, node), ret);
    (void)pthread_mutex_unlock(&inf->lock);
    return n;
}

void kube_informer_stats(struct kube_informer *inf, struct kube_informer_stats *ret)
{
    (void)pthread_mutex_lock(&inf->lock);
    *ret = inf->stats;
    (void)pthread_mutex_unlock(&inf->lock);
}

void kube_informer_stop(struct kube_informer *inf)
{
    (void)pthread_mutex_lock(&inf->lock);
    inf->stopping = true;
    (void)pthread_cond_broadcast(&inf->cond);
    (void)pthread_mutex_unlock(&inf->lock);
    http_client_cancel_fire(inf->cancel);
    if (inf->started)
        (void)pthread_join(inf->thread, NULL);
    if (inf->has_resync_thread)
        (void)pthread_join(inf->resync_thread, NULL);
    inf->started = false;
    inf->has_resync_thread = false;
}

void kube_informer_free(struct kube_informer *inf)
{
    size_t it;

    if (!inf)
        return;
    kube_informer_stop(inf);
    index_release(&inf->by_ns);
    index_release(&inf->by_node);
    for (struct hmap_entry *e = hmap_first(&inf->items, &it); e; e = hmap_next(&inf->items, e, &it))
        (void)kube_object_unref(e->value);
    hmap_release(&inf->items);
    http_client_cancel_free(inf->cancel);
    strbuf_release(&inf->line);
    strbuf_release(&inf->errbody);
    (void)pthread_cond_destroy(&inf->cond);
    (void)pthread_mutex_destroy(&inf->lock);
    (void)pthread_mutex_destroy(&inf->dispatch);
    free(inf->ns);
    free(inf->labels);
    free(inf->fields);
    free(inf);
}
