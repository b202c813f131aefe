/*
 * The in-memory NodeMetric API: see nodemetric.h. The API server and its store appear once, at
 * activation, and stay until the server is freed, so the request path reads one pointer and
 * takes no lock of its own.
 */
#include "manager/nodemetric/nodemetric.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api.h"
#include "api/labels.h"
#include "api/rfc3339.h"
#include "apiserver/apiserver.h"
#include "apiserver/store.h"
#include "apiserver/store_memory.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "codec/patch.h"
#include "http/server.h"

#define KEY_PREFIX         "/" NODEMETRIC_GROUP "/nodemetrics//"
#define DEFAULT_MAX_OBJECT (1u << 20)
#define SPEC_RETRIES       8 /* a spec write racing status writes retries on -ESTALE */

struct nodemetric_server {
    struct nodemetric_opts o;
    _Atomic(struct apiserver *) api; /* NULL until activated */
    struct store *store;
    atomic_ulong reports;
    void (*listener)(void *userdata, const char *node);
    void *listener_ud;
};

int nodemetric_server_new(const struct nodemetric_opts *opts, struct nodemetric_server **ret)
{
    struct nodemetric_server *s = xcalloc(1, sizeof(*s));

    s->o = *opts;
    if (!s->o.max_object)
        s->o.max_object = DEFAULT_MAX_OBJECT;
    atomic_init(&s->api, NULL);
    atomic_init(&s->reports, 0);
    *ret = s;
    return 0;
}

static struct apiserver *api_of(struct nodemetric_server *s)
{
    return atomic_load_explicit(&s->api, memory_order_acquire);
}

bool nodemetric_server_active(struct nodemetric_server *s)
{
    return api_of(s) != NULL;
}

/* Tells the listener about every write that leaves a NodeMetric in place (reports, and the
 * manager's own spec writes, which cost the listener one no-op reconcile). */
static int on_write(const struct store_event *ev, void *userdata)
{
    struct nodemetric_server *s = userdata;
    size_t n = strlen(KEY_PREFIX);

    if (s->listener && ev->type != STORE_DELETED && !strncmp(ev->key, KEY_PREFIX, n))
        s->listener(s->listener_ud, ev->key + n);
    return 0;
}

int nodemetric_server_activate(struct nodemetric_server *s, uint64_t epoch)
{
    static const struct api_kind *kinds[2];
    struct store_memory_opts so = {
        .epoch = epoch, .history = s->o.history, .max_value = s->o.max_object};
    struct apiserver *api;
    int r;

    if (api_of(s))
        return -EALREADY;
    kinds[0] = api_kind_find(NODEMETRIC_GROUP "/" NODEMETRIC_VERSION, "NodeMetric");
    CHECK(kinds[0]);
    if ((r = store_memory_new(&so, &s->store)) < 0)
        return r;
    store_memory_set_listener(s->store, on_write, s);
    r = apiserver_new_opts(
        s->store,
        &(struct apiserver_opts){
            .kinds = kinds, .auth = s->o.auth, .status_splice = true, .expired_watch_status = true},
        &api);
    if (r < 0) {
        store_close(s->store);
        s->store = NULL;
        return r;
    }
    atomic_store_explicit(&s->api, api, memory_order_release);
    return 0;
}

static void reply_unavailable(struct http_response *resp)
{
    resp->status = 503;
    http_response_header(resp, "Retry-After", "1");
    strbuf_addstr(&resp->body,
                  "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                  "\"Failure\",\"message\":\"this koord manager is not the leader; the "
                  "NodeMetric API is served by the leader only\",\"reason\":"
                  "\"ServiceUnavailable\",\"details\":{\"retryAfterSeconds\":1},\"code\":503}");
}

static bool is_status_write(const struct http_request *req)
{
    const char *m = http_request_method(req), *p = http_request_path(req);
    size_t n = strlen(p);

    return (!strcmp(m, "PUT") || !strcmp(m, "PATCH")) && n > 7 && !strcmp(p + n - 7, "/status");
}

void nodemetric_server_handle(const struct http_request *req, struct http_response *resp,
                              void *userdata)
{
    struct nodemetric_server *s = userdata;
    struct apiserver *api = api_of(s);

    if (!api) {
        reply_unavailable(resp);
        return;
    }
    apiserver_handle(req, resp, api);
    if (resp->status == 200 && is_status_write(req))
        atomic_fetch_add(&s->reports, 1);
}

/* Stored objects are canonical, as the API server's own writes are: status writes splice into
 * them (apiserver_opts.status_splice), which needs status as the last member. */
static void print_canonical(cJSON *o, struct strbuf *out)
{
    const struct api_kind *k = api_kind_find(NODEMETRIC_GROUP "/" NODEMETRIC_VERSION, "NodeMetric");

    CHECK(k && api_canonicalize(api_kind_schema(k), o) == 0);
    CHECK(json_print(o, out) == 0);
}

/* The stored form: our compact JSON without a resourceVersion (what the API server writes). */
static void new_object(const char *node, const cJSON *spec, struct strbuf *out)
{
    char uid[37], ts[RFC3339_STR_MAX];
    cJSON *o = cJSON_CreateObject(), *meta;

    CHECK(o);
    apiserver_random_uid(uid);
    (void)rfc3339_format((int64_t)time(NULL), ts);
    CHECK(cJSON_AddStringToObject(o, "apiVersion", NODEMETRIC_GROUP "/" NODEMETRIC_VERSION));
    CHECK(cJSON_AddStringToObject(o, "kind", "NodeMetric"));
    CHECK(meta = cJSON_AddObjectToObject(o, "metadata"));
    CHECK(cJSON_AddStringToObject(meta, "name", node));
    CHECK(cJSON_AddStringToObject(meta, "uid", uid));
    CHECK(cJSON_AddStringToObject(meta, "creationTimestamp", ts));
    CHECK(cJSON_AddNumberToObject(meta, "generation", 1));
    CHECK(cJSON_AddItemToObject(o, "spec", cJSON_Duplicate(spec, true)));
    CHECK(cJSON_AddObjectToObject(o, "status"));
    print_canonical(o, out);
    cJSON_Delete(o);
}

/* The stored object with spec replaced and generation bumped; false when spec is unchanged or
 * the stored bytes do not decode (then *out is untouched). */
static bool with_spec(const struct store_item *it, const cJSON *spec, struct strbuf *out)
{
    cJSON *o = NULL, *meta, *gen;
    bool changed = false;

    if (json_parse(it->value, it->len, NULL, &o, NULL) < 0)
        return false;
    if (!json_value_equal(cJSON_GetObjectItemCaseSensitive(o, "spec"), spec)) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, "spec");
        CHECK(cJSON_AddItemToObject(o, "spec", cJSON_Duplicate(spec, true)));
        meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
        gen = cJSON_GetObjectItemCaseSensitive(meta, "generation");
        if (cJSON_IsNumber(gen))
            (void)cJSON_SetNumberHelper(gen, gen->valuedouble + 1);
        print_canonical(o, out);
        changed = true;
    }
    cJSON_Delete(o);
    return changed;
}

int nodemetric_server_set_spec(struct nodemetric_server *s, const char *node, const cJSON *spec)
{
    struct strbuf key = STRBUF_INIT, val = STRBUF_INIT;
    struct store_item it = {0};
    int r = -ESTALE;

    if (!api_of(s))
        return -EAGAIN;
    if (labels_check_dns1123_subdomain(node, NULL) < 0)
        return -EINVAL;
    strbuf_addf(&key, KEY_PREFIX "%s", node);
    for (int i = 0; i < SPEC_RETRIES && r == -ESTALE; i++) {
        strbuf_reset(&val);
        r = store_get(s->store, key.buf, &it);
        if (r == -ENOENT) {
            new_object(node, spec, &val);
            r = store_create(s->store, key.buf, val.buf, val.len, NULL);
            if (r == -EEXIST)
                r = -ESTALE; /* a racing writer made it: read it again */
        } else if (r == 0) {
            if (with_spec(&it, spec, &val))
                r = store_update(s->store, key.buf, val.buf, val.len, it.rv, NULL);
            store_item_release(&it);
        }
    }
    strbuf_release(&key);
    strbuf_release(&val);
    return r;
}

int nodemetric_server_remove(struct nodemetric_server *s, const char *node)
{
    struct strbuf key = STRBUF_INIT;
    int r;

    if (!api_of(s))
        return -EAGAIN;
    strbuf_addf(&key, KEY_PREFIX "%s", node);
    r = store_delete(s->store, key.buf, 0, NULL, NULL);
    strbuf_release(&key);
    return r == -ENOENT ? 0 : r;
}

int nodemetric_server_get(struct nodemetric_server *s, const char *node, cJSON **ret)
{
    struct strbuf key = STRBUF_INIT;
    struct store_item it = {0};
    char rv[24];
    cJSON *o = NULL, *meta;
    int r;

    if (!api_of(s))
        return -EAGAIN;
    strbuf_addf(&key, KEY_PREFIX "%s", node);
    r = store_get(s->store, key.buf, &it);
    strbuf_release(&key);
    if (r < 0)
        return r;
    r = json_parse(it.value, it.len, NULL, &o, NULL);
    if (r == 0 && (meta = cJSON_GetObjectItemCaseSensitive(o, "metadata"))) {
        (void)snprintf(rv, sizeof(rv), "%llu", (unsigned long long)it.rv);
        CHECK(cJSON_AddStringToObject(meta, "resourceVersion", rv));
    }
    store_item_release(&it);
    if (r < 0)
        return -EIO;
    *ret = o;
    return 0;
}

/* ---- the NodeResource controller's view ---- */

/* A member to pick out of an object: the whole value (sub NULL), or only sub's members of it,
 * or of each object of it when it is an array (each). */
struct pick {
    const char *name;
    const struct pick *sub;
    bool each;
};

static const struct pick pod_picks[] = {
    {"namespace", NULL, false}, {"name", NULL, false}, {"priority", NULL, false},
    {"podUsage", NULL, false},  {NULL, NULL, false},
};
static const struct pick node_picks[] = {{"systemUsage", NULL, false}, {NULL, NULL, false}};
static const struct pick status_picks[] = {
    {"updateTime", NULL, false},
    {"nodeMetric", node_picks, false},
    {"hostApplicationMetric", NULL, false},
    {"podsMetric", pod_picks, true},
    {NULL, NULL, false},
};
static const struct pick root_picks[] = {{"status", status_picks, false}, {NULL, NULL, false}};

static bool pick_object(const char *buf, size_t len, const struct pick *picks, cJSON *out);

static size_t skip_space(const char *buf, size_t len, size_t pos)
{
    while (pos < len &&
           (buf[pos] == ' ' || buf[pos] == '\t' || buf[pos] == '\n' || buf[pos] == '\r'))
        pos++;
    return pos;
}

/* The picks of each object of the array in buf[0..len) appended to out. */
static bool pick_each(const char *buf, size_t len, const struct pick *picks, cJSON *out)
{
    size_t pos = skip_space(buf, len, 0);

    if (pos >= len || buf[pos] != '[')
        return false;
    pos = skip_space(buf, len, pos + 1);
    if (pos < len && buf[pos] == ']')
        return true;
    for (;;) {
        size_t end = json_value_end(buf, len, pos);
        cJSON *o = cJSON_CreateObject();

        CHECK(o);
        CHECK(cJSON_AddItemToArray(out, o));
        if (!end || !pick_object(buf + pos, end - pos, picks, o))
            return false;
        pos = skip_space(buf, len, end);
        if (pos < len && buf[pos] == ']')
            return true;
        if (pos >= len || buf[pos] != ',')
            return false;
        pos = skip_space(buf, len, pos + 1);
    }
}

/* The picked members of the object in buf[0..len) added to out; false when the bytes are not
 * an object of the expected shape (the caller then parses all of it). */
static bool pick_object(const char *buf, size_t len, const struct pick *picks, cJSON *out)
{
    struct json_member m;
    size_t pos = 0;
    int r;

    while ((r = json_member_next(buf, len, &pos, &m)) == 0) {
        const struct pick *p = picks;
        cJSON *v;

        while (p->name && (strlen(p->name) != m.key_len || memcmp(p->name, m.key, m.key_len)))
            p++;
        if (!p->name || cJSON_GetObjectItemCaseSensitive(out, p->name))
            continue;
        if (!p->sub)
            v = cJSON_ParseWithLength(buf + m.start, m.end - m.start);
        else
            v = p->each ? cJSON_CreateArray() : cJSON_CreateObject();
        if (!v)
            return false;
        CHECK(cJSON_AddItemToObject(out, p->name, v));
        if (p->sub &&
            !(p->each ? pick_each : pick_object)(buf + m.start, m.end - m.start, p->sub, v))
            return false;
    }
    return r == -ENOENT;
}

/* The picks of a stored object as a new tree in *ret; the whole object when the bytes are not
 * of the stored shape (which has every part). 0 or -EIO. */
static int pick_stored(const struct store_item *it, const struct pick *picks, cJSON **ret)
{
    cJSON *o = cJSON_CreateObject();

    CHECK(o);
    if (!pick_object(it->value, it->len, picks, o)) {
        cJSON_Delete(o);
        o = NULL;
        if (json_parse(it->value, it->len, NULL, &o, NULL) < 0)
            return -EIO;
    }
    *ret = o;
    return 0;
}

static int get_picked(struct nodemetric_server *s, const char *node, const struct pick *picks,
                      cJSON **ret)
{
    struct strbuf key = STRBUF_INIT;
    struct store_item it = {0};
    int r;

    if (!api_of(s))
        return -EAGAIN;
    strbuf_addf(&key, KEY_PREFIX "%s", node);
    r = store_get(s->store, key.buf, &it);
    strbuf_release(&key);
    if (r < 0)
        return r;
    r = pick_stored(&it, picks, ret);
    store_item_release(&it);
    return r;
}

int nodemetric_server_get_usage(struct nodemetric_server *s, const char *node, cJSON **ret)
{
    return get_picked(s, node, root_picks, ret);
}

/* ---- the metrics.k8s.io view ---- */

static const struct pick top_pod_picks[] = {{"namespace", NULL, false},
                                            {"name", NULL, false},
                                            {"podUsage", NULL, false},
                                            {NULL, NULL, false}};
static const struct pick top_node_picks[] = {{"nodeUsage", NULL, false}, {NULL, NULL, false}};
static const struct pick top_status_picks[] = {
    {"updateTime", NULL, false},
    {"nodeMetric", top_node_picks, false},
    {"podsMetric", top_pod_picks, true},
    {NULL, NULL, false},
};
static const struct pick top_spec_picks[] = {{"metricCollectPolicy", NULL, false},
                                             {NULL, NULL, false}};
static const struct pick top_picks[] = {
    {"spec", top_spec_picks, false}, {"status", top_status_picks, false}, {NULL, NULL, false}};

int nodemetric_server_get_top(struct nodemetric_server *s, const char *node, cJSON **ret)
{
    return get_picked(s, node, top_picks, ret);
}

struct each_top {
    int (*fn)(void *userdata, const char *node, const cJSON *top);
    void *userdata;
};

static int each_top_item(const struct store_item *it, void *userdata)
{
    struct each_top *e = userdata;
    cJSON *top = NULL;
    int r = pick_stored(it, top_picks, &top);

    if (r == 0)
        r = e->fn(e->userdata, it->key + strlen(KEY_PREFIX), top);
    cJSON_Delete(top);
    return r;
}

int nodemetric_server_each_top(struct nodemetric_server *s,
                               int (*fn)(void *userdata, const char *node, const cJSON *top),
                               void *userdata)
{
    struct each_top e = {fn, userdata};

    if (!api_of(s))
        return -EAGAIN;
    return store_list(s->store, KEY_PREFIX, NULL, 0, each_top_item, &e, NULL);
}

void nodemetric_server_set_listener(struct nodemetric_server *s,
                                    void (*fn)(void *userdata, const char *node), void *userdata)
{
    s->listener = fn;
    s->listener_ud = userdata;
}

static int count_item(const struct store_item *it, void *ud)
{
    (void)it;
    (*(unsigned long *)ud)++;
    return 0;
}

void nodemetric_server_stats(struct nodemetric_server *s, struct nodemetric_stats *ret)
{
    *ret = (struct nodemetric_stats){.reports = atomic_load(&s->reports)};
    if (!api_of(s))
        return;
    ret->revision = store_revision(s->store);
    (void)store_list(s->store, KEY_PREFIX, NULL, 0, count_item, &ret->objects, NULL);
}

void nodemetric_server_render_metrics(struct nodemetric_server *s, struct strbuf *out)
{
    if (api_of(s))
        apiserver_render_metrics(api_of(s), out);
}

void nodemetric_server_stop_watches(struct nodemetric_server *s)
{
    if (s && api_of(s))
        apiserver_stop_watches(api_of(s));
}

void nodemetric_server_free(struct nodemetric_server *s)
{
    if (!s)
        return;
    apiserver_free(api_of(s));
    store_close(s->store);
    free(s);
}
