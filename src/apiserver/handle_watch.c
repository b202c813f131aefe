/*
 * The watch verb (kube-apiserver's endpoints/handlers/watch.go): one stream per request, its
 * initial events or history replay, selectors, bookmarks and the event encoding. The hub that
 * fans store changes out to these streams is watch.c; this file is the request side.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/labels.h"
#include "apiserver/apiserver-int.h"
#include "apiserver/registry.h"
#include "apiserver/watch.h"
#include "base/base.h"
#include "codec/codec.h"
#include "http/server.h"

/* ---- watch (reference 4) ---- */

#define MAX_WATCH_SECONDS ((int64_t)6 * 3600)
#define MAX_WATCH_PENDING (16u << 20) /* encoded initial events one watch may hold */
#define WATCH_BATCH       64          /* queued events one read takes at once */

struct watch_stream {
    struct watcher *w;
    bool too_big;                   /* the initial events outgrew MAX_WATCH_PENDING */
    const struct api_resource *res; /* a reference */
    const struct api_kind *kind;    /* for Table events */
    struct label_selector *labels;
    struct apiserver__field_req *fields;
    size_t nfields;
    struct strbuf pending; /* encoded events not yet written */
    size_t off;
    uint64_t skip_upto;   /* live events up to this revision were sent already */
    int64_t deadline_ms;  /* monotonic: the watch's timeoutSeconds */
    bool notified;        /* the watcher wakes the stream */
    unsigned bookmark_ms; /* idle time before a BOOKMARK; 0 = the client did not allow them */
    int64_t last_emit_ms; /* monotonic time of the last event queued for the client */
    struct negotiate_output out; /* the objects' form: themselves, Tables or metadata */
    bool done;
    char *api_version;
    int64_t pretimeout_ms; /* monotonic time of the BOOKMARK due before the deadline, 0 = none */
};

static int64_t monotonic_ms(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void watch_stream_free(void *ud)
{
    struct watch_stream *ws = ud;

    watcher_free(ws->w);
    (void)api_resource_unref(ws->res);
    label_selector_free(ws->labels);
    apiserver__field_reqs_free(ws->fields, ws->nfields);
    strbuf_release(&ws->pending);
    free(ws->api_version);
    free(ws);
}

/*
 * Appends {"type": T, "object": obj} and a newline; obj (owned) as a Table or its
 * PartialObjectMetadata when asked for. Bookmarks are converted too, as kube-apiserver's watch
 * encoder converts every event object (handlers/response.go doTransformObject): the table's
 * metadata.resourceVersion is the bookmark's and its one row carries the bookmark's metadata.
 */
static void emit(struct watch_stream *ws, const char *type, cJSON *obj)
{
    cJSON *ev = cJSON_CreateObject();

    CHECK(ev);
    if (ws->out.as == NEGOTIATE_TABLE && strcmp(type, "ERROR")) {
        const cJSON *one[1] = {obj};
        const char *rv = apiserver__get_string(cJSON_GetObjectItemCaseSensitive(obj, "metadata"),
                                               "resourceVersion");
        cJSON *t =
            apiserver__build_table(ws->res, ws->kind, one, 1, rv, NULL, TABLE_INCLUDE_METADATA);
        cJSON_Delete(obj);
        obj = t;
    } else if (ws->out.as == NEGOTIATE_PARTIAL && strcmp(type, "ERROR")) {
        cJSON *p = apiserver__partial_tree(obj, ws->out.api_version);
        cJSON_Delete(obj);
        obj = p;
    }
    CHECK(cJSON_AddStringToObject(ev, "type", type));
    CHECK(cJSON_AddItemToObject(ev, "object", obj));
    CHECK(json_print(ev, &ws->pending) == 0);
    strbuf_addch(&ws->pending, '\n');
    cJSON_Delete(ev);
    ws->last_emit_ms = monotonic_ms();
}

static const char *event_type(enum store_event_type t)
{
    return t == STORE_ADDED ? "ADDED" : t == STORE_MODIFIED ? "MODIFIED" : "DELETED";
}

/* An event as emit_change() writes it without selectors or Table output, spliced: the object,
 * or its PartialObjectMetadata when partial is the apiVersion for one. */
static bool encode_event_as(enum store_event_type type, uint64_t rv, const struct store_obj *obj,
                            const char *partial, const char *api_version, struct strbuf *out)
{
    size_t len = out->len;

    if (!obj->splice_at)
        return false;
    strbuf_addstr(out, type == STORE_ADDED      ? "{\"type\":\"ADDED\",\"object\":"
                       : type == STORE_MODIFIED ? "{\"type\":\"MODIFIED\",\"object\":"
                                                : "{\"type\":\"DELETED\",\"object\":");
    if (!apiserver__splice_stored(obj, rv, partial, api_version, out)) {
        strbuf_setlen(out, len);
        return false;
    }
    strbuf_add(out, "}\n", 2);
    return true;
}

/*
 * The shared wire form of an event (watch_encode_fn): what emit_change() writes for a watch
 * without selectors or Table output, made once per write for every such watcher.
 */
bool apiserver__encode_event(enum store_event_type type, uint64_t rv, const struct store_obj *obj,
                             struct strbuf *out)
{
    return encode_event_as(type, rv, obj, NULL, NULL, out);
}

/* Whether member key[0..len) of a stored object is one the watch's selectors read: metadata
 * (labels; name and namespace fields), or the first segment of a field path. */
static bool selector_reads(const struct watch_stream *ws, const char *key, size_t len)
{
    if (len == 8 && !memcmp(key, "metadata", 8))
        return true;
    for (size_t i = 0; i < ws->nfields; i++) {
        const char *f = ws->fields[i].key;
        size_t seg = strcspn(f, ".");

        if (seg == len && !memcmp(f, key, len))
            return true;
    }
    return false;
}

/*
 * Whether a stored state matches the watch's selectors. Only the members they read are decoded
 * (a pod's metadata and status, not its spec, for the scheduler's status.phase selector); the
 * whole object when its bytes are not our own compact JSON.
 */
static bool stored_selected(const struct watch_stream *ws, const struct store_obj *o, uint64_t rv)
{
    cJSON *t = NULL;
    bool ok;

    if (o->splice_at) {
        struct json_member m;
        size_t pos = 0;
        int r;

        t = cJSON_CreateObject();
        CHECK(t);
        while ((r = json_member_next(o->value, o->len, &pos, &m)) == 0) {
            cJSON *v = NULL;
            char key[64];

            if (!selector_reads(ws, m.key, m.key_len) || m.key_len >= sizeof(key))
                continue;
            if (json_parse(o->value + m.start, m.end - m.start, NULL, &v, NULL) < 0)
                break;
            memcpy(key, m.key, m.key_len);
            key[m.key_len] = '\0';
            CHECK(cJSON_AddItemToObject(t, key, v));
        }
        if (r != -ENOENT) {
            cJSON_Delete(t);
            t = NULL;
        }
    }
    if (!t)
        t = apiserver__decode_stored(o->value, o->len, rv);
    ok = t && apiserver__selected(t, ws->labels, ws->fields, ws->nfields);
    cJSON_Delete(t);
    return ok;
}

/*
 * Emits one write as this watch sees it. With selectors a modification is judged on both
 * states, as kube-apiserver's watch cache does (storage/cacher/cache_watcher.go convertToWatch
 * Event): matching before and after is MODIFIED, only after is ADDED, only before is DELETED
 * carrying the new state (so the client drops the object), neither is nothing. prev is the
 * replaced state (NULL when unknown: then the new state alone decides, as a MODIFIED).
 */
static void emit_change(struct watch_stream *ws, enum store_event_type type,
                        const struct store_obj *obj, const struct store_obj *prev, uint64_t rv)
{
    const char *t = event_type(type);
    bool now, before;
    cJSON *o;

    if (ws->out.as != NEGOTIATE_TABLE && !ws->labels && !ws->nfields &&
        encode_event_as(type, rv, obj, ws->out.as == NEGOTIATE_PARTIAL ? ws->out.api_version : NULL,
                        ws->res->multi_version ? ws->api_version : NULL, &ws->pending)) {
        /* Spliced, not decoded: what json_print() of the decoded event would write. */
        ws->last_emit_ms = monotonic_ms();
        return;
    }
    if (ws->out.as != NEGOTIATE_TABLE && obj->splice_at) {
        /* Selectors judged on the members they read; the event spliced as above. */
        enum store_event_type out = type;

        now = stored_selected(ws, obj, rv);
        if (type == STORE_MODIFIED && prev) {
            before = stored_selected(ws, prev, rv);
            if (now && !before) {
                out = STORE_ADDED;
            } else if (!now && before) {
                out = STORE_DELETED;
                now = true;
            }
        }
        if (!now)
            return;
        if (encode_event_as(out, rv, obj,
                            ws->out.as == NEGOTIATE_PARTIAL ? ws->out.api_version : NULL,
                            ws->res->multi_version ? ws->api_version : NULL, &ws->pending)) {
            ws->last_emit_ms = monotonic_ms();
            return;
        }
    }
    o = apiserver__decode_stored(obj->value, obj->len, rv);
    if (!o)
        return;
    now = apiserver__selected(o, ws->labels, ws->fields, ws->nfields);
    if (type == STORE_MODIFIED && (ws->labels || ws->nfields) && prev) {
        cJSON *p = apiserver__decode_stored(prev->value, prev->len, rv);
        before = p && apiserver__selected(p, ws->labels, ws->fields, ws->nfields);
        cJSON_Delete(p);
        if (now && !before) {
            t = "ADDED";
        } else if (!now && before) {
            t = "DELETED";
            now = true;
        }
    }
    if (!now) {
        cJSON_Delete(o);
        return;
    }
    if (!cJSON_GetObjectItemCaseSensitive(o, "kind"))
        CHECK(cJSON_AddStringToObject(o, "kind", ws->res->kind));
    if (ws->res->multi_version)
        cJSON_DeleteItemFromObjectCaseSensitive(o, "apiVersion");
    if (!cJSON_GetObjectItemCaseSensitive(o, "apiVersion"))
        CHECK(cJSON_AddStringToObject(o, "apiVersion", ws->api_version));
    emit(ws, t, o);
}

/* One event from the hub: its shared wire bytes when this watch can use them. */
static void emit_event(struct watch_stream *ws, const struct watch_event *ev)
{
    if (ev->wire && ws->out.as == NEGOTIATE_OBJECT && !ws->labels && !ws->nfields &&
        !ws->res->multi_version) {
        strbuf_add(&ws->pending, ev->wire, ev->wire_len);
        ws->last_emit_ms = monotonic_ms();
        return;
    }
    emit_change(ws, ev->type, ev->obj, ev->prev, ev->rv);
}

/* A BOOKMARK: an object of the watched kind with only metadata.resourceVersion (and, ending
 * the initial events of a streaming list, the k8s.io/initial-events-end annotation). */
static void emit_bookmark(struct watch_stream *ws, uint64_t rv, bool initial_end)
{
    char buf[24];
    cJSON *bm = cJSON_CreateObject(), *meta;

    CHECK(bm);
    CHECK(cJSON_AddStringToObject(bm, "kind", ws->res->kind));
    CHECK(cJSON_AddStringToObject(bm, "apiVersion", ws->api_version));
    meta = cJSON_AddObjectToObject(bm, "metadata");
    CHECK(meta);
    (void)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)rv);
    CHECK(cJSON_AddStringToObject(meta, "resourceVersion", buf));
    if (initial_end) {
        cJSON *ann = cJSON_AddObjectToObject(meta, "annotations");
        CHECK(ann && cJSON_AddStringToObject(ann, "k8s.io/initial-events-end", "true"));
    }
    if (ws->pretimeout_ms && monotonic_ms() >= ws->pretimeout_ms)
        ws->pretimeout_ms = 0; /* the one before the deadline is this one */
    emit(ws, "BOOKMARK", bm);
}

/* The monotonic time the next BOOKMARK is due: after bookmark_ms of idleness, or at the
 * pre-timeout point, whichever comes first (cacher.go nextBookmarkTime: about 2 s before the
 * deadline, so a client ending its watch on the timeout resumes from a recent revision). */
static int64_t bookmark_due_at(const struct watch_stream *ws)
{
    int64_t due = ws->last_emit_ms + ws->bookmark_ms;

    if (ws->pretimeout_ms && ws->pretimeout_ms < due)
        due = ws->pretimeout_ms;
    return due;
}

/* Moves encoded bytes from pending into buf (at most max); returns how many. */
static size_t take_pending(struct watch_stream *ws, char *buf, size_t max)
{
    size_t k = ws->pending.len - ws->off;

    if (k > max)
        k = max;
    memcpy(buf, ws->pending.buf + ws->off, k);
    ws->off += k;
    if (ws->off == ws->pending.len) {
        strbuf_reset(&ws->pending);
        ws->off = 0;
    }
    return k;
}

/* The watcher has something: wake the parked stream (runs under the hub's lock). */
static void watch_notify(void *ud)
{
    http_stream_wake(ud);
}

/*
 * Fills buf with as much as is ready: everything queued for this watcher is encoded at once, so
 * a burst goes out as one chunk (one TLS record, one send) rather than one per event. Shared
 * wire bytes go straight into buf while they fit and nothing is pending before them. Never
 * waits: with nothing to send it asks to be woken by the hub (watch_notify) or at its next
 * bookmark or its end, and returns HTTP_STREAM_WAIT, holding no thread meanwhile.
 */
static long watch_read(void *ud, struct http_stream *st, char *buf, size_t max)
{
    struct watch_stream *ws = ud;
    bool plain =
        ws->out.as == NEGOTIATE_OBJECT && !ws->labels && !ws->nfields && !ws->res->multi_version;

    if (!ws->notified) {
        ws->notified = true;
        watcher_set_notify(ws->w, watch_notify, st);
    }
    for (;;) {
        struct watch_event *evs[WATCH_BATCH];
        int64_t now = monotonic_ms(), wake = ws->deadline_ms;
        size_t n = 0, got = 0;
        int r;

        if (ws->off < ws->pending.len)
            return (long)take_pending(ws, buf, max);
        if (ws->done || now >= ws->deadline_ms)
            return 0;
        if (ws->bookmark_ms) {
            int64_t due = bookmark_due_at(ws);
            if (due <= now) {
                /* Idle: everything up to the watcher's progress was delivered or filtered
                 * out, so the client may resume from there. */
                uint64_t rv = watcher_progress(ws->w);
                emit_bookmark(ws, rv > ws->skip_upto ? rv : ws->skip_upto, false);
                continue;
            }
            if (due < wake)
                wake = due;
        }
        r = watcher_next(ws->w, 0, evs, WATCH_BATCH, &got);
        for (size_t i = 0; i < got; i++) {
            const struct watch_event *ev = evs[i];
            if (ev->rv <= ws->skip_upto) {
                /* sent already, with the initial state or the replay */
            } else if (plain && ev->wire && !ws->pending.len && n + ev->wire_len <= max) {
                memcpy(buf + n, ev->wire, ev->wire_len);
                n += ev->wire_len;
                ws->last_emit_ms = monotonic_ms();
            } else {
                emit_event(ws, ev);
            }
            watch_event_unref(evs[i]);
        }
        if (r == -EOVERFLOW) {
            /* Too slow: tell the client to relist, as a 410 would. */
            emit(ws, "ERROR",
                 api_status_failure(410, "Expired",
                                    "the watch fell too far behind and was closed; relist", NULL));
            ws->done = true;
        } else if (r < 0) {
            ws->done = true; /* the server is stopping */
        }
        if (n) {
            if (ws->off < ws->pending.len)
                n += take_pending(ws, buf + n, max - n);
            return (long)n;
        }
        if (r == 0 && ws->off >= ws->pending.len) {
            http_stream_wake_at(st, wake);
            return HTTP_STREAM_WAIT;
        }
    }
}

struct replay {
    struct watch_stream *ws;
    const char *prefix;
    size_t prefix_len;
    uint64_t last;
};

static int replay_event(const struct store_event *ev, void *ud)
{
    struct replay *rp = ud;

    rp->last = ev->rv;
    if (!strncmp(ev->key, rp->prefix, rp->prefix_len))
        emit_change(rp->ws, ev->type, ev->obj, ev->prev_obj, ev->rv);
    if (rp->ws->pending.len > MAX_WATCH_PENDING) {
        rp->ws->too_big = true;
        return 1;
    }
    return 0;
}

static int initial_item(const struct store_item *it, void *ud)
{
    struct watch_stream *ws = ud;

    emit_change(ws, STORE_ADDED, it->obj, NULL, it->rv);
    if (ws->pending.len > MAX_WATCH_PENDING) {
        ws->too_big = true;
        return 1;
    }
    return 0;
}

bool apiserver__pod_node_index(const struct store_obj *obj, struct strbuf *out)
{
    static const char key[] = "\"nodeName\":\"";
    const char *at, *end;
    cJSON *o;
    const cJSON *node;

    /*
     * Our own compact JSON (splice_at set): the member's bytes can only be a key, since inside
     * a JSON string every quote is escaped. One occurrence with a plain value is spec.nodeName
     * (no other field of a Pod is named so); anything else is decoded. The index runs on every
     * pod write, under the store's lock, so this spares a full parse per write.
     */
    if (obj->splice_at) {
        at = memmem(obj->value, obj->len, key, sizeof(key) - 1);
        if (!at) {
            return true; /* no node: the empty value */
        }
        at += sizeof(key) - 1;
        end = memchr(at, '"', obj->len - (size_t)(at - obj->value));
        if (end && !memchr(at, '\\', (size_t)(end - at)) &&
            !memmem(end, obj->len - (size_t)(end - obj->value), key, sizeof(key) - 1)) {
            strbuf_add(out, at, (size_t)(end - at));
            return true;
        }
    }
    o = cJSON_ParseWithLength(obj->value, obj->len);
    if (!o)
        return false;
    node =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "spec"), "nodeName");
    strbuf_addstr(out, cJSON_IsString(node) ? node->valuestring : "");
    cJSON_Delete(o);
    return true;
}

/* The index value a watch can be found by: its spec.nodeName=X requirement on pods; NULL when
 * it has none (it then sees every write and filters them itself). */
static const char *index_value(const struct api_resource *res, const struct watch_stream *ws)
{
    if (*res->group || strcmp(res->plural, "pods"))
        return NULL;
    for (size_t i = 0; i < ws->nfields; i++)
        if (!ws->fields[i].neq && !strcmp(ws->fields[i].key, "spec.nodeName"))
            return ws->fields[i].value;
    return NULL;
}

/* A query flag as Go's strconv.ParseBool reads the true values. */
static bool query_true(const struct apiserver__call *c, const char *name)
{
    const char *v = http_request_query(c->req, name);
    return v && (!strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "t") || !strcmp(v, "T") ||
                 !strcmp(v, "TRUE") || !strcmp(v, "True"));
}

/*
 * Starts a watch. The watcher is registered before anything is read, so every write from then
 * on is queued; the initial state (a snapshot list) or the history replay is then read in short
 * locked chunks, so writers are not held up, and queued writes at or below the revision read up
 * to are skipped: none is lost, none is sent twice.
 */
void apiserver__do_watch(struct apiserver__call *c)
{
    const char *rvs = http_request_query(c->req, "resourceVersion");
    const char *sie = http_request_query(c->req, "sendInitialEvents");
    const char *rvm = http_request_query(c->req, "resourceVersionMatch");
    const char *tos = http_request_query(c->req, "timeoutSeconds");
    bool initial_events = sie && !strcmp(sie, "true");
    struct watch_stream *ws;
    struct strbuf prefix = STRBUF_INIT, av = STRBUF_INIT;
    int64_t timeout = 1800 + (int64_t)(time(NULL) % 1800), rv = 0;
    uint64_t list_rv = 0;
    int r;

    if ((rvm && *rvm && !initial_events) ||
        (initial_events && (!rvm || strcmp(rvm, "NotOlderThan")))) {
        struct field_errors errs = FIELD_ERRORS_INIT;
        field_error_add(&errs, FIELD_FORBIDDEN,
                        initial_events ? "sendInitialEvents" : "resourceVersionMatch", NULL, "%s",
                        initial_events
                            ? "sendInitialEvents requires resourceVersionMatch=NotOlderThan"
                            : "resourceVersionMatch is forbidden for watch unless "
                              "sendInitialEvents is provided");
        apiserver__reply_status(c, api_status_invalid("ListOptions", "meta.k8s.io", "", &errs));
        field_errors_release(&errs);
        return;
    }
    if ((rvs && *rvs && (parse_i64(rvs, &rv) < 0 || rv < 0)) ||
        (tos && (parse_i64(tos, &timeout) < 0 || timeout < 0))) {
        apiserver__reply_bad_request(
            c, "resourceVersion and timeoutSeconds must be non-negative integers");
        return;
    }
    if (!initial_events && rv > 0 && (uint64_t)rv > store_revision(c->srv->store)) {
        /* A revision this server has not reached (a client that outlived a restored data
         * dir): replaying "after" it would silently skip every write up to it. */
        apiserver__reply_too_large(c, (uint64_t)rv, store_revision(c->srv->store));
        return;
    }
    ws = xcalloc(1, sizeof(*ws));
    strbuf_init(&ws->pending);
    if (!apiserver__parse_selectors(c, &ws->labels, &ws->fields, &ws->nfields)) {
        watch_stream_free(ws);
        return;
    }
    ws->res = api_resource_ref(c->res);
    ws->kind = apiserver__kind_of(c->res);
    ws->out = c->out;
    ws->bookmark_ms = query_true(c, "allowWatchBookmarks") ? c->srv->bookmark_ms : 0;
    apiserver__api_version_of(c->res, &av);
    ws->api_version = strbuf_detach(&av, NULL);
    if (timeout <= 0 || timeout > MAX_WATCH_SECONDS)
        timeout = timeout <= 0 ? 1800 : MAX_WATCH_SECONDS;
    ws->deadline_ms = monotonic_ms() + timeout * 1000;
    if (ws->bookmark_ms && timeout > 2)
        ws->pretimeout_ms = ws->deadline_ms - 2000;
    strbuf_addf(&prefix, "/%s/%s/", *c->res->group ? c->res->group : "core", c->res->plural);
    if (c->res->namespaced && *c->ri.namespace)
        strbuf_addf(&prefix, "%s/", c->ri.namespace);
    /* Register first, then read: writes in between are queued and skipped by revision. */
    ws->w = watcher_new_indexed(c->srv->hub, prefix.buf, 0, index_value(c->res, ws));
    if (initial_events || !rvs || !*rvs || rv == 0) {
        r = store_list(c->srv->store, prefix.buf, NULL, 0, initial_item, ws, &list_rv);
        ws->skip_upto = list_rv;
        if (r == 0 && initial_events)
            emit_bookmark(ws, list_rv, true);
    } else {
        struct replay rp = {ws, prefix.buf, prefix.len, (uint64_t)rv};
        r = store_events(c->srv->store, (uint64_t)rv, replay_event, &rp);
        ws->skip_upto = rp.last;
    }
    if (r < 0 && (r != -ERANGE || c->srv->expired_watch_status)) {
        apiserver__reply_status(
            c, r == -ERANGE ? api_status_expired(rvs && *rvs ? (unsigned long long)rv : list_rv,
                                                 (unsigned long long)store_oldest(c->srv->store))
                            : api_status_from_errno(r, NULL, NULL));
        watch_stream_free(ws);
        goto out;
    }
    if (ws->too_big && c->srv->expired_watch_status) {
        watch_stream_free(ws);
        apiserver__reply_status(
            c, api_status_failure(410, "Expired",
                                  "too many changes to replay for this watch; relist", NULL));
        goto out;
    }
    if (r == -ERANGE || ws->too_big) {
        /* The start is older than the history (or writes during the read pushed it out), or
         * replaying it would outgrow the bound on a watch's memory: as kube's watch cache, the
         * answer is 200 with a single ERROR event carrying the 410 Expired Status, then the
         * end of the stream. Events read before the failure are dropped. */
        strbuf_reset(&ws->pending);
        emit(ws, "ERROR",
             r == -ERANGE
                 ? api_status_expired(rvs && *rvs ? (unsigned long long)rv : list_rv,
                                      (unsigned long long)store_oldest(c->srv->store))
                 : api_status_failure(410, "Expired",
                                      "too many changes to replay for this watch; relist", NULL));
        ws->done = true;
    }
    ws->last_emit_ms = monotonic_ms();
    c->resp->status = 200;
    c->resp->content_type = "application/json";
    c->resp->stream = watch_read;
    c->resp->stream_userdata = ws;
    c->resp->stream_free = watch_stream_free;
out:
    strbuf_release(&prefix);
}
