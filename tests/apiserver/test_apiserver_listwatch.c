/*
 * Tests for the list and watch paths of apiserver/apiserver.c over real HTTP and a real SQLite
 * store (the other verbs are in test_apiserver.c), following reference kubernetes-api.md
 * sections 3.2, 4 and 5:
 *  - a watch with a selector turns modifications into ADDED/DELETED as objects start or stop
 *    matching, both when replaying history and live;
 *  - allowWatchBookmarks brings BOOKMARKs once the watch is idle, carrying a revision that
 *    moves with writes to other resources; none without it; Table watches get Table bookmarks;
 *  - limit/continue pages are one snapshot at the first page's revision; an expired token is
 *    410 with an inconsistent-continue token; resourceVersion/resourceVersionMatch on list;
 *  - watches started while writes run neither lose nor repeat an event.
 * Watches end when the test has seen what it waits for (the transfer is cut from the write
 * callback), never after a guessed delay.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "apiserver/apiserver.h"
#include "apiserver/store.h"
#include "apiserver/store_cache.h"
#include "apiserver/store_sqlite.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "http/server.h"
#include "testutil.h"

struct env {
    char dir[64];
    char db[128];
    struct store *backend, *store; /* SQLite, and the watch cache over it */
    struct apiserver *api;
    struct http_server *http;
    char base[64];
};

/* history: how many writes the store keeps (small ones make expiry cheap to reach). */
static struct env *env_new(size_t history)
{
    struct env *e = xcalloc(1, sizeof(*e));
    struct http_server_opts o = {.host = "127.0.0.1"};

    (void)snprintf(e->dir, sizeof(e->dir), "/tmp/koord-lw-XXXXXX");
    CHECK(mkdtemp(e->dir));
    (void)snprintf(e->db, sizeof(e->db), "%s/db", e->dir);
    CHECK(store_sqlite_open(e->db, history, &e->backend) == 0);
    CHECK(store_cache_new(e->backend, &e->store) == 0);
    CHECK(apiserver_new(e->store, &e->api) == 0);
    apiserver_set_bookmark_interval(e->api, 30);
    CHECK(http_server_start(&o, apiserver_handle, e->api, &e->http) == 0);
    (void)snprintf(e->base, sizeof(e->base), "http://127.0.0.1:%u", http_server_port(e->http));
    return e;
}

static int setup(void **state)
{
    *state = env_new(64);
    return 0;
}

static int setup_big_history(void **state)
{
    *state = env_new(100000);
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;
    char p[160];

    apiserver_stop_watches(e->api);
    http_server_stop(e->http);
    apiserver_free(e->api);
    store_close(e->store);
    store_close(e->backend);
    for (const char *const *s = (const char *const[]){"", "-wal", "-shm", NULL}; *s; s++) {
        (void)snprintf(p, sizeof(p), "%s%s", e->db, *s);
        (void)unlink(p);
    }
    (void)rmdir(e->dir);
    free(e);
    return 0;
}

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
    strbuf_add(ud, p, size * n);
    return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    if (!strncasecmp(p, "Retry-After:", 12))
        strbuf_add(ud, p, size * n);
    return size * n;
}

/* A GET; returns the HTTP code, *ret the parsed body, retry_after the Retry-After line. */
static long get(struct env *e, const char *path, cJSON **ret, struct strbuf *retry_after)
{
    CURL *h = curl_easy_init();
    struct strbuf url = STRBUF_INIT, out = STRBUF_INIT;
    long code = 0;

    strbuf_addf(&url, "%s%s", e->base, path);
    (void)curl_easy_setopt(h, CURLOPT_URL, url.buf);
    (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, &out);
    (void)curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    if (retry_after) {
        (void)curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
        (void)curl_easy_setopt(h, CURLOPT_HEADERDATA, retry_after);
    }
    assert_int_equal(curl_easy_perform(h), CURLE_OK);
    (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (getenv("KOORD_TEST_DEBUG"))
        print_error("GET %s -> %ld %s\n", path, code, out.buf);
    if (ret)
        *ret = cJSON_Parse(out.buf);
    curl_easy_cleanup(h);
    strbuf_release(&url);
    strbuf_release(&out);
    return code;
}

static const char *str(const cJSON *o, const char *path)
{
    char buf[256];
    const cJSON *v = o;

    (void)snprintf(buf, sizeof(buf), "%s", path);
    for (char *seg = buf, *dot; seg && v; seg = dot ? dot + 1 : NULL) {
        dot = strchr(seg, '.');
        if (dot)
            *dot = '\0';
        v = cJSON_IsArray(v) ? cJSON_GetArrayItem(v, (int)strtol(seg, NULL, 10))
                             : cJSON_GetObjectItemCaseSensitive(v, seg);
    }
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static uint64_t rv_of(const cJSON *o)
{
    const char *s = str(o, "metadata.resourceVersion");
    return s ? strtoull(s, NULL, 10) : 0;
}

/* The names of a list's items with their data.v: "a=1 b=2 ". */
static void names(const cJSON *list, struct strbuf *out)
{
    const cJSON *it;

    strbuf_reset(out);
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(list, "items"))
    {
        const char *v = str(it, "data.v");
        strbuf_addf(out, "%s=%s ", str(it, "metadata.name"), v ? v : "-");
    }
}

/* Writes a default-namespace ConfigMap straight to the store (a create, or an unconditional
 * update); returns the revision. */
static uint64_t put_cm(struct env *e, const char *name, const char *labels, const char *v,
                       bool create)
{
    struct strbuf key = STRBUF_INIT, val = STRBUF_INIT;
    uint64_t rv = 0;

    strbuf_addf(&key, "/core/configmaps/default/%s", name);
    strbuf_addf(&val,
                "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\","
                "\"namespace\":\"default\",\"labels\":{%s}},\"data\":{\"v\":\"%s\"}}",
                name, labels, v);
    if (create)
        CHECK(store_create(e->store, key.buf, val.buf, val.len, &rv) == 0);
    else
        CHECK(store_update(e->store, key.buf, val.buf, val.len, 0, &rv) == 0);
    strbuf_release(&key);
    strbuf_release(&val);
    return rv;
}

static uint64_t del_cm(struct env *e, const char *name)
{
    struct strbuf key = STRBUF_INIT;
    uint64_t rv = 0;

    strbuf_addf(&key, "/core/configmaps/default/%s", name);
    CHECK(store_delete(e->store, key.buf, 0, NULL, &rv) == 0);
    strbuf_release(&key);
    return rv;
}

/* ---- a watch read event by event ---- */

struct stream;
/* Called for each event; returns false to end the watch. */
typedef bool (*event_fn)(struct stream *s, const cJSON *ev);

struct stream {
    struct env *e;
    event_fn on_event;
    struct strbuf buf;
    size_t parsed;
    bool stopped;
    struct strbuf sum;   /* "TYPE name[ app=label];" per event, bookmarks left out */
    struct strbuf lines; /* the raw event lines, bookmarks left out */
    int bookmarks;
    void *ud;
};

static void summarize(struct stream *s, const cJSON *ev)
{
    const char *type = str(ev, "type");
    const cJSON *o = cJSON_GetObjectItem(ev, "object");
    const char *app = str(o, "metadata.labels.app");

    if (!strcmp(type, "BOOKMARK")) {
        s->bookmarks++;
        return;
    }
    strbuf_addf(&s->sum, "%s %s%s%s;", type, str(o, "metadata.name"), app ? " app=" : "",
                app ? app : "");
}

static size_t on_stream(char *p, size_t size, size_t n, void *ud)
{
    struct stream *s = ud;
    char *nl;

    strbuf_add(&s->buf, p, size * n);
    while ((nl = strchr(s->buf.buf + s->parsed, '\n'))) {
        cJSON *ev =
            cJSON_ParseWithLength(s->buf.buf + s->parsed, (size_t)(nl - s->buf.buf) - s->parsed);
        bool go_on;
        CHECK(ev);
        if (strcmp(str(ev, "type"), "BOOKMARK"))
            strbuf_add(&s->lines, s->buf.buf + s->parsed,
                       (size_t)(nl - s->buf.buf) + 1 - s->parsed);
        s->parsed = (size_t)(nl - s->buf.buf) + 1;
        summarize(s, ev);
        go_on = s->on_event(s, ev);
        cJSON_Delete(ev);
        if (!go_on) {
            s->stopped = true;
            return 0; /* ends the transfer */
        }
    }
    return size * n;
}

/* Runs a watch until on_event says stop (or the server ends it); returns the HTTP code. */
static long watch(struct stream *s, const char *path, const char *accept)
{
    CURL *h = curl_easy_init();
    struct strbuf url = STRBUF_INIT, hdr = STRBUF_INIT;
    struct curl_slist *hdrs = NULL;
    long code = 0;
    CURLcode rc;

    strbuf_addf(&url, "%s%s", s->e->base, path);
    if (accept) {
        strbuf_addf(&hdr, "Accept: %s", accept);
        hdrs = curl_slist_append(NULL, hdr.buf);
        (void)curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    }
    (void)curl_easy_setopt(h, CURLOPT_URL, url.buf);
    (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_stream);
    (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, s);
    (void)curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
    rc = curl_easy_perform(h);
    CHECK(rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && s->stopped));
    (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    strbuf_release(&url);
    strbuf_release(&hdr);
    return code;
}

static void stream_release(struct stream *s)
{
    strbuf_release(&s->buf);
    strbuf_release(&s->sum);
    strbuf_release(&s->lines);
}

/* ---- selector transitions ---- */

/* The writes of the selector test; "end" (app=x) comes last and ends the watch. */
static void *transitions(void *ud)
{
    struct env *e = ud;

    (void)put_cm(e, "a", "", "0", true);
    (void)put_cm(e, "a", "\"app\":\"x\"", "1", false); /* starts matching: ADDED */
    (void)put_cm(e, "a", "\"app\":\"x\"", "2", false); /* still: MODIFIED */
    (void)put_cm(e, "a", "\"app\":\"y\"", "3", false); /* stops: DELETED, new state */
    (void)put_cm(e, "a", "\"app\":\"y\"", "4", false); /* never matched since: nothing */
    (void)put_cm(e, "a", "\"app\":\"x\"", "5", false); /* ADDED again */
    (void)del_cm(e, "a");                              /* DELETED */
    (void)put_cm(e, "b", "\"app\":\"y\"", "0", true);  /* never matches */
    (void)del_cm(e, "b");
    (void)put_cm(e, "end", "\"app\":\"x\"", "0", true);
    return NULL;
}

struct live {
    pthread_t writer;
    bool started;
};

static bool until_end(struct stream *s, const cJSON *ev)
{
    struct live *l = s->ud;

    /* The first bookmark proves the watch is registered: only then start writing. */
    if (l && !l->started && !strcmp(str(ev, "type"), "BOOKMARK")) {
        CHECK(pthread_create(&l->writer, NULL, transitions, s->e) == 0);
        l->started = true;
    }
    return !(str(ev, "object.metadata.name") && !strcmp(str(ev, "object.metadata.name"), "end"));
}

static const char want_transitions[] = "ADDED a app=x;MODIFIED a app=x;DELETED a app=y;"
                                       "ADDED a app=x;DELETED a app=x;ADDED end app=x;";

static void test_selector_transitions(void **state)
{
    struct env *e = *state;
    struct stream s = {.e = e, .on_event = until_end, .buf = STRBUF_INIT, .sum = STRBUF_INIT};
    struct live l = {0};
    char path[256];
    uint64_t start = store_revision(e->store);

    /* Live: the watch is open before the writes. */
    (void)snprintf(path, sizeof(path),
                   "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=%llu"
                   "&allowWatchBookmarks=true&labelSelector=app%%3Dx",
                   (unsigned long long)start);
    s.ud = &l;
    assert_int_equal(watch(&s, path, NULL), 200);
    assert_true(l.started);
    assert_int_equal(pthread_join(l.writer, NULL), 0);
    assert_string_equal(s.sum.buf, want_transitions);

    /* Replayed: the same writes from history, selected the same way. */
    stream_release(&s);
    s = (struct stream){.e = e, .on_event = until_end, .buf = STRBUF_INIT, .sum = STRBUF_INIT};
    (void)snprintf(path, sizeof(path),
                   "/api/v1/configmaps?watch=1&resourceVersion=%llu&labelSelector=app%%3Dx",
                   (unsigned long long)start);
    assert_int_equal(watch(&s, path, NULL), 200);
    assert_string_equal(s.sum.buf, want_transitions);

    stream_release(&s);
}

/* ---- shared event bytes ---- */

/* Writes for the shared-bytes test, all labelled app=...; "end" ends the watch. One object is
 * stored without apiVersion and kind, so it cannot be spliced and takes the decoding path. */
static void *mixed_writes(void *ud)
{
    static const char raw[] = "{\"metadata\":{\"name\":\"raw\",\"namespace\":\"default\","
                              "\"labels\":{\"app\":\"z\"}},\"data\":{\"v\":\"}{\\\"\"}}";
    struct env *e = ud;
    uint64_t rv;

    (void)put_cm(e, "a", "\"app\":\"x\"", "1", true);
    (void)put_cm(e, "a", "\"app\":\"y\"", "2", false);
    CHECK(store_create(e->store, "/core/configmaps/default/raw", raw, sizeof(raw) - 1, &rv) == 0);
    (void)del_cm(e, "a");
    (void)put_cm(e, "end", "\"app\":\"x\"", "0", true);
    return NULL;
}

static bool until_end_mixed(struct stream *s, const cJSON *ev)
{
    struct live *l = s->ud;

    if (l && !l->started && !strcmp(str(ev, "type"), "BOOKMARK")) {
        CHECK(pthread_create(&l->writer, NULL, mixed_writes, s->e) == 0);
        l->started = true;
    }
    return !(str(ev, "object.metadata.name") && !strcmp(str(ev, "object.metadata.name"), "end"));
}

static long get_raw(struct env *e, const char *path, struct strbuf *out)
{
    CURL *h = curl_easy_init();
    struct strbuf url = STRBUF_INIT;
    long code = 0;

    strbuf_addf(&url, "%s%s", e->base, path);
    (void)curl_easy_setopt(h, CURLOPT_URL, url.buf);
    (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
    (void)curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    assert_int_equal(curl_easy_perform(h), CURLE_OK);
    (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(h);
    strbuf_release(&url);
    return code;
}

/*
 * A live watch without selectors gets each write as the hub's shared, pre-encoded line (or, for
 * an object that cannot be spliced, encoded for it); a watch with a selector that matches
 * everything decodes and re-encodes every event itself. Both must send the same bytes, and so
 * must the streamed list and the decoded one.
 */
static void test_shared_event_bytes(void **state)
{
    struct env *e = *state;
    struct stream live = {.e = e,
                          .on_event = until_end_mixed,
                          .buf = STRBUF_INIT,
                          .sum = STRBUF_INIT,
                          .lines = STRBUF_INIT};
    struct stream sel = {.e = e,
                         .on_event = until_end,
                         .buf = STRBUF_INIT,
                         .sum = STRBUF_INIT,
                         .lines = STRBUF_INIT};
    struct strbuf fast = STRBUF_INIT, slow = STRBUF_INIT;
    struct live l = {0};
    uint64_t start = store_revision(e->store);
    char path[256];

    (void)snprintf(path, sizeof(path),
                   "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=%llu"
                   "&allowWatchBookmarks=true",
                   (unsigned long long)start);
    live.ud = &l;
    assert_int_equal(watch(&live, path, NULL), 200);
    assert_true(l.started);
    assert_int_equal(pthread_join(l.writer, NULL), 0);
    assert_string_equal(live.sum.buf, "ADDED a app=x;MODIFIED a app=y;ADDED raw app=z;"
                                      "DELETED a app=y;ADDED end app=x;");
    (void)snprintf(path, sizeof(path),
                   "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=%llu"
                   "&labelSelector=app",
                   (unsigned long long)start);
    assert_int_equal(watch(&sel, path, NULL), 200);
    assert_string_equal(live.lines.buf, sel.lines.buf);
    assert_non_null(strstr(live.lines.buf, "\"name\":\"raw\""));
    /* A field selector is judged on the members it reads, and the event spliced the same. */
    stream_release(&sel);
    sel = (struct stream){.e = e,
                          .on_event = until_end,
                          .buf = STRBUF_INIT,
                          .sum = STRBUF_INIT,
                          .lines = STRBUF_INIT};
    (void)snprintf(path, sizeof(path),
                   "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=%llu"
                   "&fieldSelector=metadata.namespace%%3Ddefault",
                   (unsigned long long)start);
    assert_int_equal(watch(&sel, path, NULL), 200);
    assert_string_equal(live.lines.buf, sel.lines.buf);

    assert_int_equal(get_raw(e, "/api/v1/namespaces/default/configmaps", &fast), 200);
    assert_int_equal(get_raw(e, "/api/v1/namespaces/default/configmaps?labelSelector=app", &slow),
                     200);
    assert_string_equal(fast.buf, slow.buf);
    assert_non_null(strstr(fast.buf, "\"name\":\"raw\""));
    stream_release(&live);
    stream_release(&sel);
    strbuf_release(&fast);
    strbuf_release(&slow);
}

/* ---- bookmarks ---- */

struct bm {
    uint64_t other_rv; /* revision of a write elsewhere, once made */
    cJSON *last;       /* the last bookmark object */
};

static bool until_bookmark_passes_other_write(struct stream *s, const cJSON *ev)
{
    struct bm *b = s->ud;

    if (strcmp(str(ev, "type"), "BOOKMARK"))
        return true;
    cJSON_Delete(b->last);
    b->last = cJSON_Duplicate(cJSON_GetObjectItem(ev, "object"), true);
    if (!b->other_rv) {
        /* The watch is idle and registered: write to another namespace, which the watch never
         * sees, and wait for a bookmark that has moved past it. */
        static const char v[] = "{\"metadata\":{\"name\":\"o\",\"namespace\":\"kube-system\"}}";
        CHECK(store_create(s->e->store, "/core/configmaps/kube-system/o", v, sizeof(v) - 1,
                           &b->other_rv) == 0);
        return true;
    }
    return rv_of(b->last) < b->other_rv;
}

static bool until_first_bookmark(struct stream *s, const cJSON *ev)
{
    struct bm *b = s->ud;

    if (strcmp(str(ev, "type"), "BOOKMARK"))
        return true;
    b->last = cJSON_Duplicate(cJSON_GetObjectItem(ev, "object"), true);
    return false;
}

static bool never_stop(struct stream *s, const cJSON *ev)
{
    (void)s;
    (void)ev;
    return true;
}

static void test_bookmarks(void **state)
{
    struct env *e = *state;
    struct bm b = {0};
    struct stream s = {.e = e,
                       .on_event = until_bookmark_passes_other_write,
                       .buf = STRBUF_INIT,
                       .sum = STRBUF_INIT,
                       .ud = &b};
    char path[256], want[128];
    uint64_t start, made;

    made = put_cm(e, "seen", "", "0", true);
    start = store_revision(e->store);
    (void)snprintf(path, sizeof(path),
                   "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=%llu"
                   "&allowWatchBookmarks=true",
                   (unsigned long long)start);
    assert_int_equal(watch(&s, path, NULL), 200);
    assert_true(made <= start);
    (void)snprintf(want, sizeof(want),
                   "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":"
                   "{\"resourceVersion\":\"%llu\"}}",
                   (unsigned long long)b.other_rv);
    assert_json_eq_at(b.last, want, __LINE__);
    assert_string_equal(s.sum.buf, ""); /* only bookmarks */
    cJSON_Delete(b.last);
    stream_release(&s);

    /* A Table watch gets Table bookmarks, the revision in the table's metadata. */
    b = (struct bm){0};
    s = (struct stream){
        .e = e, .on_event = until_first_bookmark, .buf = STRBUF_INIT, .sum = STRBUF_INIT, .ud = &b};
    assert_int_equal(watch(&s, path, "application/json;as=Table;v=v1;g=meta.k8s.io"), 200);
    assert_string_equal(str(b.last, "kind"), "Table");
    assert_true(rv_of(b.last) >= start);
    cJSON_Delete(b.last);
    stream_release(&s);

    /* Without allowWatchBookmarks none comes, however idle the watch (it ends by its
     * timeout). */
    s = (struct stream){.e = e, .on_event = never_stop, .buf = STRBUF_INIT, .sum = STRBUF_INIT};
    (void)snprintf(path, sizeof(path),
                   "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=%llu"
                   "&timeoutSeconds=1",
                   (unsigned long long)start);
    assert_int_equal(watch(&s, path, NULL), 200);
    assert_int_equal(s.bookmarks, 0);
    assert_string_equal(s.buf.buf, "");
    stream_release(&s);
}

/* ---- list: paging and resourceVersion ---- */

static void test_pages_are_one_snapshot(void **state)
{
    struct env *e = *state;
    struct strbuf got = STRBUF_INIT, path = STRBUF_INIT;
    cJSON *p1 = NULL, *p2 = NULL, *p3 = NULL, *b = NULL;
    const char *base = "/api/v1/namespaces/default/configmaps";
    char *tok = NULL;
    uint64_t rv;

    (void)put_cm(e, "p0", "", "1", true);
    (void)put_cm(e, "p1", "", "1", true);
    (void)put_cm(e, "p2", "", "1", true);
    (void)put_cm(e, "p3", "", "1", true);
    (void)put_cm(e, "p4", "", "1", true);

    strbuf_addf(&path, "%s?limit=2", base);
    assert_int_equal(get(e, path.buf, &p1, NULL), 200);
    names(p1, &got);
    assert_string_equal(got.buf, "p0=1 p1=1 ");
    rv = rv_of(p1);
    assert_non_null(str(p1, "metadata.continue"));

    /* Writes between pages: none of them shows in the later pages. */
    (void)put_cm(e, "p3", "", "2", false);
    (void)del_cm(e, "p2");
    (void)put_cm(e, "p1a", "", "1", true); /* sorts into page 2 */
    (void)put_cm(e, "p5", "", "1", true);  /* sorts after the end */

    strbuf_reset(&path);
    strbuf_addf(&path, "%s?limit=2&continue=%s", base, str(p1, "metadata.continue"));
    assert_int_equal(get(e, path.buf, &p2, NULL), 200);
    names(p2, &got);
    assert_string_equal(got.buf, "p2=1 p3=1 ");
    assert_int_equal(rv_of(p2), rv);
    strbuf_reset(&path);
    strbuf_addf(&path, "%s?limit=2&continue=%s", base, str(p2, "metadata.continue"));
    assert_int_equal(get(e, path.buf, &p3, NULL), 200);
    names(p3, &got);
    assert_string_equal(got.buf, "p4=1 ");
    assert_int_equal(rv_of(p3), rv);
    assert_null(str(p3, "metadata.continue"));

    /* A fresh list sees the writes. */
    assert_int_equal(get(e, base, &b, NULL), 200);
    names(b, &got);
    assert_string_equal(got.buf, "p0=1 p1=1 p1a=1 p3=2 p4=1 p5=1 ");
    cJSON_Delete(b);

    /* Once the history no longer reaches the token's revision: 410 Expired with
     * kube-apiserver's message and a token that goes on at the latest revision. */
    tok = xstrdup(str(p2, "metadata.continue"));
    for (int i = 0; i < 70; i++)
        (void)put_cm(e, "p4", "", "3", false);
    strbuf_reset(&path);
    strbuf_addf(&path, "%s?limit=2&continue=%s", base, tok);
    assert_int_equal(get(e, path.buf, &b, NULL), 410);
    assert_string_equal(str(b, "reason"), "Expired");
    assert_non_null(strstr(str(b, "message"), "The provided continue parameter is too old to "
                                              "display a consistent list result."));
    assert_non_null(str(b, "metadata.continue"));
    strbuf_reset(&path);
    strbuf_addf(&path, "%s?limit=2&continue=%s", base, str(b, "metadata.continue"));
    cJSON_Delete(b);
    assert_int_equal(get(e, path.buf, &b, NULL), 200);
    names(b, &got);
    assert_string_equal(got.buf, "p4=3 p5=1 "); /* the rest, after p3, as it is now */
    assert_int_equal(rv_of(b), store_revision(e->store));
    cJSON_Delete(b);

    /* Malformed tokens and tokens with a resourceVersion are 400. */
    strbuf_reset(&path);
    strbuf_addf(&path, "%s?limit=2&continue=bm90LWpzb24", base);
    assert_int_equal(get(e, path.buf, &b, NULL), 400);
    assert_non_null(strstr(str(b, "message"), "invalid continue token"));
    cJSON_Delete(b);
    strbuf_reset(&path);
    strbuf_addf(&path, "%s?limit=2&resourceVersion=3&continue=%s", base, tok);
    assert_int_equal(get(e, path.buf, &b, NULL), 400);
    assert_string_equal(str(b, "message"),
                        "specifying resource version is not allowed when using continue");
    cJSON_Delete(b);

    free(tok);
    cJSON_Delete(p1);
    cJSON_Delete(p2);
    cJSON_Delete(p3);
    strbuf_release(&got);
    strbuf_release(&path);
}

static void expect_invalid(struct env *e, const char *query, const char *message)
{
    struct strbuf path = STRBUF_INIT;
    cJSON *b = NULL;

    strbuf_addf(&path, "/api/v1/namespaces/default/configmaps?%s", query);
    assert_int_equal(get(e, path.buf, &b, NULL), 422);
    assert_string_equal(str(b, "reason"), "Invalid");
    if (!strstr(str(b, "message"), message))
        fail_msg("%s: message \"%s\" lacks \"%s\"", query, str(b, "message"), message);
    cJSON_Delete(b);
    strbuf_release(&path);
}

static void test_list_resource_version(void **state)
{
    struct env *e = *state;
    struct strbuf got = STRBUF_INIT, path = STRBUF_INIT, retry = STRBUF_INIT;
    const char *base = "/api/v1/namespaces/default/configmaps";
    uint64_t old, now;
    cJSON *b = NULL;

    (void)put_cm(e, "r", "", "1", true);
    old = store_revision(e->store);
    (void)put_cm(e, "r", "", "2", false);
    (void)put_cm(e, "s", "", "1", true);
    now = store_revision(e->store);

    /* Exact, or a limit without a match: the state at that revision. */
    for (int i = 0; i < 2; i++) {
        strbuf_reset(&path);
        strbuf_addf(&path, "%s?resourceVersion=%llu&%s", base, (unsigned long long)old,
                    i ? "limit=10" : "resourceVersionMatch=Exact");
        assert_int_equal(get(e, path.buf, &b, NULL), 200);
        names(b, &got);
        assert_string_equal(got.buf, "r=1 ");
        assert_int_equal(rv_of(b), old);
        cJSON_Delete(b);
    }
    /* NotOlderThan (explicit, or no limit): the current state. */
    for (int i = 0; i < 2; i++) {
        strbuf_reset(&path);
        strbuf_addf(&path, "%s?resourceVersion=%llu%s", base, (unsigned long long)old,
                    i ? "" : "&resourceVersionMatch=NotOlderThan&limit=10");
        assert_int_equal(get(e, path.buf, &b, NULL), 200);
        names(b, &got);
        assert_string_equal(got.buf, "r=2 s=1 ");
        assert_int_equal(rv_of(b), now);
        cJSON_Delete(b);
    }
    /* A revision the store has not reached: 504 with the cause client-go relists on. */
    strbuf_reset(&path);
    strbuf_addf(&path, "%s?resourceVersion=%llu", base, (unsigned long long)now + 5);
    assert_int_equal(get(e, path.buf, &b, &retry), 504);
    assert_string_equal(str(b, "reason"), "Timeout");
    assert_string_equal(str(b, "details.causes.0.reason"), "ResourceVersionTooLarge");
    assert_non_null(strstr(str(b, "message"), "Too large resource version"));
    assert_non_null(strstr(retry.buf, "Retry-After: 1"));
    cJSON_Delete(b);
    /* One the history no longer covers: 410 Expired. */
    for (int i = 0; i < 70; i++)
        (void)put_cm(e, "s", "", "2", false);
    strbuf_reset(&path);
    strbuf_addf(&path, "%s?resourceVersion=%llu&resourceVersionMatch=Exact", base,
                (unsigned long long)old);
    assert_int_equal(get(e, path.buf, &b, NULL), 410);
    assert_string_equal(str(b, "reason"), "Expired");
    assert_non_null(strstr(str(b, "message"), "too old resource version"));
    cJSON_Delete(b);

    /* Options validation (apimachinery ValidateListOptions). */
    expect_invalid(e, "resourceVersionMatch=Exact",
                   "resourceVersionMatch is forbidden unless resourceVersion is provided");
    expect_invalid(e, "resourceVersion=0&resourceVersionMatch=Exact",
                   "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"");
    expect_invalid(e, "resourceVersion=1&resourceVersionMatch=Newest",
                   "Unsupported value: \"Newest\": supported values: \"Exact\", "
                   "\"NotOlderThan\"");
    expect_invalid(e, "resourceVersionMatch=Exact&continue=x",
                   "resourceVersionMatch is forbidden when continue is provided");
    expect_invalid(e, "sendInitialEvents=true", "sendInitialEvents is forbidden for list");
    strbuf_release(&got);
    strbuf_release(&path);
    strbuf_release(&retry);
}

/* ---- watches started while writes run ---- */

#define RACE_WRITES  200
#define RACE_WATCHES 6

struct race_watch {
    struct env *e;
    bool from_revision; /* resourceVersion=start_rv rather than an initial list */
    uint64_t start_rv;  /* taken when the watch is launched, before race-end is written: a
                           thread scheduled late must still have race-end ahead of it */
    pthread_t thread;
    struct strbuf err;
    size_t events;
};

struct race_seen {
    uint64_t last;
    size_t events;
    struct strbuf *err;
};

/* Every write goes to this watch's prefix, so revisions must follow each other exactly. */
static bool check_contiguous(struct stream *s, const cJSON *ev)
{
    struct race_seen *r = s->ud;
    uint64_t rv = rv_of(cJSON_GetObjectItem(ev, "object"));

    if (r->last && rv != r->last + 1 && !r->err->len)
        strbuf_addf(r->err, "%s at %llu after %llu", str(ev, "type"), (unsigned long long)rv,
                    (unsigned long long)r->last);
    r->last = rv;
    r->events++;
    return strcmp(str(ev, "object.metadata.name"), "race-end") != 0;
}

static void *race_watch(void *ud)
{
    struct race_watch *w = ud;
    struct race_seen seen = {.err = &w->err};
    struct stream s = {.e = w->e,
                       .on_event = check_contiguous,
                       .buf = STRBUF_INIT,
                       .sum = STRBUF_INIT,
                       .ud = &seen};
    char path[160];

    if (w->from_revision) {
        seen.last = w->start_rv;
        (void)snprintf(path, sizeof(path),
                       "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=%llu",
                       (unsigned long long)seen.last);
    } else {
        (void)snprintf(path, sizeof(path), "/api/v1/namespaces/default/configmaps?watch=1");
    }
    if (watch(&s, path, NULL) != 200 && !w->err.len)
        strbuf_addstr(&w->err, "watch refused");
    if (!s.stopped && !w->err.len)
        strbuf_addstr(&w->err, "stream ended before race-end");
    w->events = seen.events;
    stream_release(&s);
    return NULL;
}

static void test_watch_start_races_writes(void **state)
{
    struct env *e = *state;
    struct race_watch w[RACE_WATCHES];

    (void)put_cm(e, "race", "", "0", true);
    for (int i = 0, next = 0; i < RACE_WRITES; i++) {
        char v[16];
        /* Start the watches spread over the writes, which go on at once. */
        if (next < RACE_WATCHES && i == next * (RACE_WRITES / RACE_WATCHES)) {
            w[next] = (struct race_watch){.e = e,
                                          .from_revision = next % 2,
                                          .start_rv = store_revision(e->store),
                                          .err = STRBUF_INIT};
            CHECK(pthread_create(&w[next].thread, NULL, race_watch, &w[next]) == 0);
            next++;
        }
        (void)snprintf(v, sizeof(v), "%d", i + 1);
        (void)put_cm(e, "race", "", v, false);
    }
    (void)put_cm(e, "race-end", "", "0", true);
    for (int i = 0; i < RACE_WATCHES; i++) {
        assert_int_equal(pthread_join(w[i].thread, NULL), 0);
        if (w[i].err.len)
            fail_msg("watch %d (%s): %s", i, w[i].from_revision ? "from a revision" : "list",
                     w[i].err.buf);
        assert_true(w[i].events >= 1);
        strbuf_release(&w[i].err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_selector_transitions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_event_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bookmarks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pages_are_one_snapshot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_resource_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch_start_races_writes, setup_big_history, teardown),
    };
    int r;

    codec_init();
    CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == 0);
    r = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return r;
}
