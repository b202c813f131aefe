/*
 * The dashboard server (ui.h): routes, authentication and sessions, static assets, and the
 * Server-Sent Events streams fed by one flusher thread.
 *
 * Work queue: informer handlers and the report listener put the object (or the node name) in
 * a map keyed like the object, so repeats collapse and the queue is bounded by the number of
 * objects; the flusher swaps the maps out, reads the reported nodes' usage outside the lock,
 * applies everything to the model and makes one delta. Applying and delta-making happen under
 * the same lock as a new stream's snapshot, so a snapshot is exactly the state after some
 * delta: a stream starts from the snapshot at sequence n and then gets deltas n+1, n+2, ...
 * without a gap or a repeat (events would otherwise show twice). The last MSG_RING deltas are
 * kept as SSE frames; a stream that fell further behind gets a new snapshot.
 */
#include "manager/ui/ui.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "apiserver/apiserver.h"
#include "apiserver/auth.h"
#include "base/base.h"
#include "base/hmap.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "http/server.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "manager/nodemetric/auth.h"
#include "manager/nodemetric/nodemetric.h"
#include "manager/ui/session.h"
#include "manager/ui/state.h"
#include "web/web.h"

#define DEFAULT_RATE        4
#define DEFAULT_INTERVAL_MS 10000
#define MSG_RING            64
#define KEEPALIVE_MS        15000
#define MAX_FORM            (70u << 10) /* a login form: a token of up to 64 KiB */
#define UI_PATH             "/ui"
#define CSP                                                                                        \
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "                    \
    "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'"

struct stream {
    struct ui_server *s;
    struct http_stream *st; /* known from its first poll */
    uint64_t seq;           /* the last delta it was given */
    bool started;
    struct strbuf out; /* frames not yet written */
    size_t off;
    int64_t keepalive_ms;
    char user[256];
    struct stream *prev, *next;
};

struct ui_server {
    struct ui_opts o;
    struct ui_sessions *sessions;
    struct kube_informer *events;

    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct ui_state *state;
    /* queued work: key -> kube_object (a reference; NULL value = deleted, see *_deleted) */
    struct hmap q_nodes, q_pods, q_events, q_reports;
    struct hmap q_deleted; /* "n:<name>" / "p:<ns/name>" of queued deletions */
    bool queued;
    uint64_t seq;           /* deltas made */
    char *msgs[MSG_RING];   /* SSE frame of delta seq at msgs[seq % MSG_RING] */
    struct stream *streams; /* open streams */
    bool stopping, started;
    int64_t last_point_ms;
    pthread_t flusher;
};

static int64_t mono_ms(void)
{
    return http_monotonic_ms();
}

static int64_t unix_ms(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the work queue (informer threads, the report listener) ---- */

static void queue_put(struct ui_server *s, struct hmap *q, const char *key,
                      const struct kube_object *obj, bool deleted)
{
    struct hmap_entry *e;
    char dkey[600];

    (void)pthread_mutex_lock(&s->lock);
    e = hmap_upsert(q, key);
    kube_object_unref(e->value);
    e->value = kube_object_ref((struct kube_object *)obj);
    (void)snprintf(dkey, sizeof(dkey), "%c:%s",
                   q == &s->q_nodes  ? 'n'
                   : q == &s->q_pods ? 'p'
                                     : 'e',
                   key);
    if (deleted)
        (void)hmap_upsert(&s->q_deleted, dkey);
    else
        (void)hmap_del(&s->q_deleted, dkey);
    s->queued = true;
    (void)pthread_cond_broadcast(&s->cond);
    (void)pthread_mutex_unlock(&s->lock);
}

static void on_node_add(void *ud, const struct kube_object *obj)
{
    struct ui_server *s = ud;
    queue_put(s, &s->q_nodes, kube_object_key(obj), obj, false);
}

static void on_node_update(void *ud, const struct kube_object *old, const struct kube_object *obj)
{
    (void)old;
    on_node_add(ud, obj);
}

static void on_node_delete(void *ud, const struct kube_object *obj)
{
    struct ui_server *s = ud;
    queue_put(s, &s->q_nodes, kube_object_key(obj), obj, true);
}

static void on_pod_add(void *ud, const struct kube_object *obj)
{
    struct ui_server *s = ud;
    queue_put(s, &s->q_pods, kube_object_key(obj), obj, false);
}

static void on_pod_update(void *ud, const struct kube_object *old, const struct kube_object *obj)
{
    (void)old;
    on_pod_add(ud, obj);
}

static void on_pod_delete(void *ud, const struct kube_object *obj)
{
    struct ui_server *s = ud;
    queue_put(s, &s->q_pods, kube_object_key(obj), obj, true);
}

static void on_event(void *ud, const struct kube_object *obj)
{
    struct ui_server *s = ud;
    queue_put(s, &s->q_events, kube_object_key(obj), obj, false);
}

static void on_event_update(void *ud, const struct kube_object *old, const struct kube_object *obj)
{
    (void)old;
    (void)ud;
    (void)obj;
    /* A repeated event (count + 1) is not a new eviction to show. */
}

void ui_server_handlers(struct ui_server *s, struct kube_handlers *ret_nodes,
                        struct kube_handlers *ret_pods)
{
    *ret_nodes = (struct kube_handlers){on_node_add, on_node_update, on_node_delete, s};
    *ret_pods = (struct kube_handlers){on_pod_add, on_pod_update, on_pod_delete, s};
}

void ui_server_on_report(struct ui_server *s, const char *node)
{
    if (!s)
        return;
    (void)pthread_mutex_lock(&s->lock);
    (void)hmap_upsert(&s->q_reports, node);
    s->queued = true;
    (void)pthread_cond_broadcast(&s->cond);
    (void)pthread_mutex_unlock(&s->lock);
}

/* ---- the flusher ---- */

static void release_queue(struct hmap *q)
{
    size_t it;

    for (struct hmap_entry *e = hmap_first(q, &it); e; e = hmap_next(q, e, &it))
        kube_object_unref(e->value);
    hmap_release(q);
    hmap_init(q);
}

static void sse_frame(struct strbuf *out, const char *event, const cJSON *data)
{
    char *text = cJSON_PrintUnformatted(data);

    CHECK(text);
    strbuf_addf(out, "event: %s\ndata: %s\n\n", event, text);
    free(text);
}

/* Applies the swapped-out queues (under the lock; usage read before, without it). */
static void apply(struct ui_server *s, struct hmap *nodes, struct hmap *pods, struct hmap *events,
                  struct hmap *deleted, struct hmap *usage)
{
    char dkey[600];
    size_t it;

    for (struct hmap_entry *e = hmap_first(nodes, &it); e; e = hmap_next(nodes, e, &it)) {
        (void)snprintf(dkey, sizeof(dkey), "n:%s", e->key);
        if (hmap_find(deleted, dkey))
            (void)ui_state_node_delete(s->state, e->key);
        else
            (void)ui_state_node(s->state, kube_object_json(e->value));
    }
    for (struct hmap_entry *e = hmap_first(pods, &it); e; e = hmap_next(pods, e, &it)) {
        (void)snprintf(dkey, sizeof(dkey), "p:%s", e->key);
        if (hmap_find(deleted, dkey))
            (void)ui_state_pod_delete(s->state, e->key);
        else
            (void)ui_state_pod(s->state, kube_object_json(e->value));
    }
    for (struct hmap_entry *e = hmap_first(events, &it); e; e = hmap_next(events, e, &it))
        (void)ui_state_event(s->state, kube_object_json(e->value));
    for (struct hmap_entry *e = hmap_first(usage, &it); e; e = hmap_next(usage, e, &it))
        if (e->value)
            (void)ui_state_report(s->state, e->key, e->value);
}

static void publish(struct ui_server *s)
{
    struct strbuf frame = STRBUF_INIT;
    cJSON *delta = ui_state_delta(s->state);

    if (!delta)
        return;
    s->seq++;
    CHECK(cJSON_AddNumberToObject(delta, "seq", (double)s->seq));
    sse_frame(&frame, "delta", delta);
    cJSON_Delete(delta);
    free(s->msgs[s->seq % MSG_RING]);
    s->msgs[s->seq % MSG_RING] = strbuf_detach(&frame, NULL);
    for (struct stream *t = s->streams; t; t = t->next)
        if (t->st)
            http_stream_wake(t->st);
}

static void *flusher(void *arg)
{
    struct ui_server *s = arg;
    long gap_ms = 1000 / (long)(s->o.max_updates_per_s ? s->o.max_updates_per_s : DEFAULT_RATE);
    long interval = s->o.history_interval_ms > 0 ? s->o.history_interval_ms : DEFAULT_INTERVAL_MS;

    (void)pthread_mutex_lock(&s->lock);
    while (!s->stopping) {
        struct hmap nodes = s->q_nodes, pods = s->q_pods, events = s->q_events;
        struct hmap reports = s->q_reports, deleted = s->q_deleted, usage;
        int64_t now = mono_ms(), due = s->last_point_ms + interval;
        size_t it;

        if (!s->queued && now < due) {
            struct timespec ts;
            int64_t until = unix_ms() + (due - now);
            ts.tv_sec = (time_t)(until / 1000);
            ts.tv_nsec = (long)(until % 1000) * 1000000;
            (void)pthread_cond_timedwait(&s->cond, &s->lock, &ts);
            continue;
        }
        hmap_init(&s->q_nodes);
        hmap_init(&s->q_pods);
        hmap_init(&s->q_events);
        hmap_init(&s->q_reports);
        hmap_init(&s->q_deleted);
        s->queued = false;
        (void)pthread_mutex_unlock(&s->lock);

        /* The reports' usage, read without our lock (the store has its own). */
        hmap_init(&usage);
        for (struct hmap_entry *e = hmap_first(&reports, &it); e; e = hmap_next(&reports, e, &it)) {
            cJSON *u = NULL;
            if (nodemetric_server_get_usage(s->o.nodemetrics, e->key, &u) == 0)
                (void)hmap_put(&usage, e->key, u);
        }

        (void)pthread_mutex_lock(&s->lock);
        apply(s, &nodes, &pods, &events, &deleted, &usage);
        now = mono_ms();
        /* No point before a node's capacity is known: a start at zero would say nothing. */
        if (now >= s->last_point_ms + interval && ui_state_has_capacity(s->state)) {
            ui_state_point(s->state, unix_ms());
            s->last_point_ms = now;
        }
        publish(s);
        (void)pthread_mutex_unlock(&s->lock);

        release_queue(&nodes);
        release_queue(&pods);
        release_queue(&events);
        hmap_release(&reports);
        hmap_release(&deleted);
        for (struct hmap_entry *e = hmap_first(&usage, &it); e; e = hmap_next(&usage, e, &it))
            cJSON_Delete(e->value);
        hmap_release(&usage);

        /* Coalescing: whatever arrives in the next gap goes into one delta. */
        (void)pthread_mutex_lock(&s->lock);
        if (!s->stopping) {
            struct timespec ts;
            int64_t until = unix_ms() + gap_ms;
            ts.tv_sec = (time_t)(until / 1000);
            ts.tv_nsec = (long)(until % 1000) * 1000000;
            while (!s->stopping && pthread_cond_timedwait(&s->cond, &s->lock, &ts) == 0)
                ;
        }
    }
    (void)pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* ---- streams ---- */

static long stream_read(void *userdata, struct http_stream *st, char *buf, size_t max)
{
    struct stream *t = userdata;
    struct ui_server *s = t->s;
    int64_t now = mono_ms();
    size_t n;

    (void)pthread_mutex_lock(&s->lock);
    t->st = st;
    if (t->off == t->out.len) {
        strbuf_reset(&t->out);
        t->off = 0;
        if (!t->started || s->seq - t->seq >= MSG_RING) {
            cJSON *snap = ui_state_snapshot(s->state);
            CHECK(cJSON_AddNumberToObject(snap, "seq", (double)s->seq));
            CHECK(cJSON_AddStringToObject(snap, "user", t->user));
            sse_frame(&t->out, "snapshot", snap);
            cJSON_Delete(snap);
            t->seq = s->seq;
            t->started = true;
        } else {
            for (; t->seq < s->seq; t->seq++)
                strbuf_addstr(&t->out, s->msgs[(t->seq + 1) % MSG_RING]);
        }
        if (t->out.len == 0 && s->stopping) {
            (void)pthread_mutex_unlock(&s->lock);
            return 0;
        }
        if (t->out.len == 0 && now >= t->keepalive_ms)
            strbuf_addstr(&t->out, ": keepalive\n\n");
        if (t->out.len)
            t->keepalive_ms = now + KEEPALIVE_MS;
    }
    if (t->off == t->out.len) {
        http_stream_wake_at(st, t->keepalive_ms);
        (void)pthread_mutex_unlock(&s->lock);
        return HTTP_STREAM_WAIT;
    }
    n = t->out.len - t->off;
    if (n > max)
        n = max;
    memcpy(buf, t->out.buf + t->off, n);
    t->off += n;
    (void)pthread_mutex_unlock(&s->lock);
    return (long)n;
}

static void stream_free(void *userdata)
{
    struct stream *t = userdata;
    struct ui_server *s = t->s;

    (void)pthread_mutex_lock(&s->lock);
    if (t->prev)
        t->prev->next = t->next;
    else
        s->streams = t->next;
    if (t->next)
        t->next->prev = t->prev;
    (void)pthread_mutex_unlock(&s->lock);
    strbuf_release(&t->out);
    free(t);
}

static void open_stream(struct ui_server *s, const char *user, struct http_response *resp)
{
    struct stream *t = xcalloc(1, sizeof(*t));

    t->s = s;
    strbuf_init(&t->out);
    (void)snprintf(t->user, sizeof(t->user), "%s", user);
    (void)pthread_mutex_lock(&s->lock);
    t->next = s->streams;
    if (s->streams)
        s->streams->prev = t;
    s->streams = t;
    (void)pthread_mutex_unlock(&s->lock);
    resp->status = 200;
    resp->content_type = "text/event-stream";
    http_response_header(resp, "Cache-Control", "no-store");
    resp->stream = stream_read;
    resp->stream_userdata = t;
    resp->stream_free = stream_free;
}

/* ---- responses ---- */

static void security_headers(struct http_response *resp)
{
    http_response_header(resp, "X-Content-Type-Options", "nosniff");
    http_response_header(resp, "Content-Security-Policy", CSP);
    http_response_header(resp, "Referrer-Policy", "no-referrer");
}

static void reply_json_error(struct http_response *resp, int status, const char *msg)
{
    cJSON *o;
    char *text;

    resp->status = status;
    resp->content_type = "application/json";
    CHECK(o = cJSON_CreateObject());
    CHECK(cJSON_AddStringToObject(o, "error", msg));
    CHECK(text = cJSON_PrintUnformatted(o));
    strbuf_addstr(&resp->body, text);
    free(text);
    cJSON_Delete(o);
}

static void redirect(struct http_response *resp, const char *to)
{
    resp->status = 303;
    resp->content_type = "text/plain; charset=utf-8";
    http_response_header(resp, "Location", to);
    strbuf_addstr(&resp->body, to);
}

/* An embedded asset with its validators: 304 when the browser has these bytes already. */
static void serve_asset(const struct http_request *req, struct http_response *resp,
                        const struct web_asset *a)
{
    const char *inm = http_request_header(req, "If-None-Match");

    security_headers(resp);
    http_response_header(resp, "ETag", a->etag);
    /* Revalidate every time (a 304 costs a round trip, not the bytes): a new binary serves new
     * assets at once, under the same names. */
    http_response_header(resp, "Cache-Control", "no-cache");
    if (inm && strstr(inm, a->etag)) {
        resp->status = 304;
        resp->content_type = a->content_type;
        return;
    }
    resp->status = 200;
    resp->content_type = a->content_type;
    strbuf_add(&resp->body, a->data, a->len);
}

/* The login page with a message (one of ours, never text from the request). */
static void login_page(struct http_response *resp, int status, const char *message)
{
    const struct web_asset *a = web_asset_find("ui/login.html");
    const char *page = (const char *)a->data, *marker = "<!--message-->";
    const char *at = strstr(page, marker);

    security_headers(resp);
    http_response_header(resp, "Cache-Control", "no-store");
    resp->status = status;
    resp->content_type = a->content_type;
    if (!at || !message) {
        strbuf_add(&resp->body, a->data, a->len);
        return;
    }
    strbuf_add(&resp->body, page, (size_t)(at - page));
    strbuf_addf(&resp->body, "<p class=\"error\" id=\"login-error\">%s</p>", message);
    strbuf_addstr(&resp->body, at + strlen(marker));
}

/* ---- who is asking ---- */

/* SubjectAccessReview: may u get the non-resource URL /ui? 0, -EACCES, or -EIO. */
static int authorize(struct ui_server *s, const struct api_user *u)
{
    cJSON *sar, *spec, *groups, *answer = NULL;
    char *body;
    int r;

    if (!s->o.client)
        return 0;
    CHECK(sar = cJSON_CreateObject());
    CHECK(cJSON_AddStringToObject(sar, "apiVersion", "authorization.k8s.io/v1"));
    CHECK(cJSON_AddStringToObject(sar, "kind", "SubjectAccessReview"));
    CHECK(spec = cJSON_AddObjectToObject(sar, "spec"));
    CHECK(cJSON_AddStringToObject(spec, "user", u->name ? u->name : ""));
    if (u->uid && *u->uid)
        CHECK(cJSON_AddStringToObject(spec, "uid", u->uid));
    CHECK(groups = cJSON_AddArrayToObject(spec, "groups"));
    for (const char *const *g = u->groups; g && *g; g++)
        CHECK(cJSON_AddItemToArray(groups, cJSON_CreateString(*g)));
    CHECK(cJSON_AddItemToArray(groups, cJSON_CreateString("system:authenticated")));
    CHECK(cJSON_AddItemToObject(spec, "nonResourceAttributes",
                                cJSON_Parse("{\"path\":\"" UI_PATH "\",\"verb\":\"get\"}")));
    CHECK(body = cJSON_PrintUnformatted(sar));
    cJSON_Delete(sar);
    r = kube_request(s->o.client, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                     body, "application/json", &answer, NULL);
    free(body);
    if (r < 0) {
        log_warn("manager", "dashboard: SubjectAccessReview for \"%s\": %s", u->name, err_str(r));
        return -EIO;
    }
    r = cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(answer, "status"), "allowed"))
            ? 0
            : -EACCES;
    cJSON_Delete(answer);
    return r;
}

/*
 * Who the request is from: credentials on the request itself (then authorized now), else a
 * session cookie (authorized at login). 0 with the name in user; -ENOENT (nothing presented),
 * -EACCES (credentials refused: 401), -EPERM (authenticated, not authorized: 403), -EIO.
 */
static int identify(struct ui_server *s, const struct http_request *req, char *user, size_t size)
{
    const struct apiserver_auth *hooks = s->o.auth ? nodemetric_auth_hooks(s->o.auth) : NULL;
    char id[UI_SESSION_ID_LEN + 2];
    struct api_user u = {0};
    int r = -ENOENT;

    if (!hooks) {
        (void)snprintf(user, size, "%s", "anonymous");
        return 0;
    }
    r = hooks->authenticate(hooks->userdata, req, &u);
    if (r == 0) {
        (void)snprintf(user, size, "%s", u.name ? u.name : "");
        r = authorize(s, &u);
        if (hooks->release)
            hooks->release(hooks->userdata, &u);
        return r == -EACCES ? -EPERM : r;
    }
    if (r != -ENOENT)
        return -EACCES;
    if (ui_session_cookie(http_request_header(req, "Cookie"), id, sizeof(id)) &&
        ui_sessions_lookup(s->sessions, id, mono_ms(), user, size, NULL) == 0)
        return 0;
    return -ENOENT;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The value of key in an application/x-www-form-urlencoded body, decoded into out; false when
 * absent or malformed (a bad or NUL escape). */
static bool form_value(const char *body, size_t len, const char *key, struct strbuf *out)
{
    size_t klen = strlen(key), i = 0;

    while (i < len) {
        size_t end = i;
        while (end < len && body[end] != '&')
            end++;
        if (end - i > klen && !strncmp(body + i, key, klen) && body[i + klen] == '=') {
            for (size_t j = i + klen + 1; j < end; j++) {
                char c = body[j];
                if (c == '+') {
                    c = ' ';
                } else if (c == '%') {
                    int hi = j + 2 < end ? hexval(body[j + 1]) : -1;
                    int lo = j + 2 < end ? hexval(body[j + 2]) : -1;
                    if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                        return false;
                    c = (char)(hi * 16 + lo);
                    j += 2;
                }
                strbuf_addch(out, c);
            }
            return true;
        }
        i = end + 1;
    }
    return false;
}

static void login(struct ui_server *s, const struct http_request *req, struct http_response *resp)
{
    const struct apiserver_auth *hooks = s->o.auth ? nodemetric_auth_hooks(s->o.auth) : NULL;
    struct strbuf token = STRBUF_INIT, cookie = STRBUF_INIT;
    char id[UI_SESSION_ID_LEN + 1];
    struct api_user u = {0};
    size_t len = 0;
    const char *body = http_request_body(req, &len);
    int r;

    if (len > MAX_FORM || !form_value(body ? body : "", len, "token", &token)) {
        login_page(resp, 400, "Paste a token into the form.");
        goto out;
    }
    /* Whitespace a copy and paste brings along is not part of a token. */
    while (token.len && (token.buf[token.len - 1] == '\n' || token.buf[token.len - 1] == '\r' ||
                         token.buf[token.len - 1] == ' '))
        strbuf_setlen(&token, token.len - 1);
    if (!hooks) {
        u.name = "anonymous";
        r = 0;
    } else {
        r = nodemetric_auth_token(s->o.auth, token.buf, &u);
    }
    if (r == -ENOENT) {
        login_page(resp, 401,
                   "This manager does not check tokens "
                   "(--authentication-token-webhook=false).");
        goto out;
    }
    if (r < 0) {
        login_page(resp, 401, "The API server did not accept this token.");
        goto out;
    }
    r = authorize(s, &u);
    if (r == 0)
        r = ui_sessions_create(s->sessions, u.name, mono_ms(), id);
    if (r == -EACCES) {
        login_page(resp, 403, "This user may not get the non-resource URL /ui (RBAC).");
    } else if (r < 0) {
        login_page(resp, 503, "Cannot check this user now; try again.");
    } else {
        log_info("manager", "dashboard: \"%s\" logged in", u.name);
        strbuf_addf(&cookie,
                    UI_SESSION_COOKIE "=%s; Path=" UI_PATH "; Max-Age=%lld; HttpOnly; Secure; "
                                      "SameSite=Strict",
                    id,
                    (long long)((s->o.session_ttl_ms > 0 ? s->o.session_ttl_ms : 3600000) / 1000));
        http_response_header(resp, "Set-Cookie", cookie.buf);
        http_response_header(resp, "Cache-Control", "no-store");
        redirect(resp, UI_PATH "/");
    }
    if (hooks && hooks->release)
        hooks->release(hooks->userdata, &u);
out:
    strbuf_release(&token);
    strbuf_release(&cookie);
}

static void logout(struct ui_server *s, const struct http_request *req, struct http_response *resp)
{
    char id[UI_SESSION_ID_LEN + 2];

    if (ui_session_cookie(http_request_header(req, "Cookie"), id, sizeof(id)))
        (void)ui_sessions_delete(s->sessions, id);
    http_response_header(resp, "Set-Cookie",
                         UI_SESSION_COOKIE "=; Path=" UI_PATH "; Max-Age=0; HttpOnly; Secure; "
                                           "SameSite=Strict");
    redirect(resp, UI_PATH "/login");
}

/* ---- routes ---- */

bool ui_server_path(const char *path)
{
    return !strcmp(path, UI_PATH) || !strncmp(path, UI_PATH "/", strlen(UI_PATH) + 1);
}

void ui_server_handle(const struct http_request *req, struct http_response *resp, void *userdata)
{
    struct ui_server *s = userdata;
    const char *path = http_request_path(req), *method = http_request_method(req);
    const char *rest = path + strlen(UI_PATH);
    const struct web_asset *a = NULL;
    char asset[256], user[256];
    bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    bool data;
    int r;

    if (!*rest) {
        redirect(resp, UI_PATH "/");
        return;
    }
    if (!strcmp(rest, "/login")) {
        if (!strcmp(method, "POST"))
            login(s, req, resp);
        else if (get)
            login_page(resp, 200, NULL);
        else
            reply_json_error(resp, 405, "method not allowed");
        return;
    }
    if (!strcmp(rest, "/logout")) {
        if (!strcmp(method, "POST"))
            logout(s, req, resp);
        else
            reply_json_error(resp, 405, "method not allowed");
        return;
    }
    /* Public: the scripts and styles (no data in them). */
    if (strcmp(rest, "/") && strcmp(rest, "/index.html") && strncmp(rest, "/api/", 5)) {
        if (strlen(rest) < sizeof(asset) - 3) {
            (void)snprintf(asset, sizeof(asset), "%s%s", strncmp(rest, "/uplot/", 7) ? "ui" : "",
                           strncmp(rest, "/uplot/", 7) ? rest : rest + 1);
            a = web_asset_find(asset);
        }
        if (!a || !strcmp(a->path, "ui/login.html"))
            reply_json_error(resp, 404, "not found");
        else if (!get)
            reply_json_error(resp, 405, "method not allowed");
        else
            serve_asset(req, resp, a);
        return;
    }
    data = !strncmp(rest, "/api/", 5);
    if (!get) {
        reply_json_error(resp, 405, "method not allowed");
        return;
    }
    r = identify(s, req, user, sizeof(user));
    if (r == -ENOENT && !data) {
        redirect(resp, UI_PATH "/login");
        return;
    }
    if (r == -ENOENT || r == -EACCES) {
        reply_json_error(resp, 401, "log in at " UI_PATH "/login");
        return;
    }
    if (r == -EPERM) {
        reply_json_error(resp, 403, "forbidden: get on the non-resource URL /ui is not allowed");
        return;
    }
    if (r < 0) {
        reply_json_error(resp, 503, "cannot authorize now");
        return;
    }
    if (!data) {
        serve_asset(req, resp, web_asset_find("ui/index.html"));
        return;
    }
    if (!nodemetric_server_active(s->o.nodemetrics)) {
        http_response_header(resp, "Retry-After", "1");
        reply_json_error(resp, 503, "this manager is not the leader");
        return;
    }
    if (!strcmp(rest, "/api/stream")) {
        open_stream(s, user, resp);
    } else if (!strcmp(rest, "/api/state")) {
        cJSON *snap;
        char *text;
        (void)pthread_mutex_lock(&s->lock);
        snap = ui_state_snapshot(s->state);
        CHECK(cJSON_AddNumberToObject(snap, "seq", (double)s->seq));
        (void)pthread_mutex_unlock(&s->lock);
        CHECK(cJSON_AddStringToObject(snap, "user", user));
        CHECK(text = cJSON_PrintUnformatted(snap));
        cJSON_Delete(snap);
        resp->status = 200;
        resp->content_type = "application/json";
        http_response_header(resp, "Cache-Control", "no-store");
        strbuf_addstr(&resp->body, text);
        free(text);
    } else {
        reply_json_error(resp, 404, "not found");
    }
}

/* ---- lifecycle ---- */

int ui_server_new(const struct ui_opts *opts, struct ui_server **ret)
{
    struct ui_server *s = xcalloc(1, sizeof(*s));

    s->o = *opts;
    s->sessions = ui_sessions_new(opts->max_sessions, opts->session_ttl_ms);
    s->state = ui_state_new(opts->history_points);
    CHECK(pthread_mutex_init(&s->lock, NULL) == 0);
    CHECK(pthread_cond_init(&s->cond, NULL) == 0);
    hmap_init(&s->q_nodes);
    hmap_init(&s->q_pods);
    hmap_init(&s->q_events);
    hmap_init(&s->q_reports);
    hmap_init(&s->q_deleted);
    s->last_point_ms = mono_ms() - (opts->history_interval_ms > 0 ? opts->history_interval_ms
                                                                  : DEFAULT_INTERVAL_MS);
    if (opts->client) {
        s->events = kube_informer_new(
            opts->client,
            &(struct kube_informer_opts){.resource = &kube_res_events,
                                         .field_selector = "source=" UI_EVENT_SOURCE});
        CHECK(kube_informer_add_handlers(
                  s->events, &(struct kube_handlers){on_event, on_event_update, NULL, s}) == 0);
    }
    *ret = s;
    return 0;
}

int ui_server_start(struct ui_server *s)
{
    int r;

    if (s->started)
        return -EALREADY;
    if ((r = pthread_create(&s->flusher, NULL, flusher, s)) != 0)
        return -r;
    s->started = true;
    if (s->events && (r = kube_informer_start(s->events)) < 0)
        return r;
    return 0;
}

void ui_server_stop(struct ui_server *s)
{
    if (!s)
        return;
    (void)pthread_mutex_lock(&s->lock);
    s->stopping = true;
    (void)pthread_cond_broadcast(&s->cond);
    for (struct stream *t = s->streams; t; t = t->next)
        if (t->st)
            http_stream_wake(t->st);
    (void)pthread_mutex_unlock(&s->lock);
    if (s->started) {
        (void)pthread_join(s->flusher, NULL);
        s->started = false;
    }
    kube_informer_stop(s->events);
}

void ui_server_free(struct ui_server *s)
{
    if (!s)
        return;
    ui_server_stop(s);
    kube_informer_free(s->events);
    release_queue(&s->q_nodes);
    release_queue(&s->q_pods);
    release_queue(&s->q_events);
    hmap_release(&s->q_nodes);
    hmap_release(&s->q_pods);
    hmap_release(&s->q_events);
    hmap_release(&s->q_reports);
    hmap_release(&s->q_deleted);
    for (size_t i = 0; i < MSG_RING; i++)
        free(s->msgs[i]);
    ui_state_free(s->state);
    ui_sessions_free(s->sessions);
    (void)pthread_cond_destroy(&s->cond);
    (void)pthread_mutex_destroy(&s->lock);
    free(s);
}
