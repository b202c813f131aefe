/*
 * Tests for kube/informer against a real koord API server over TLS: the first list fills the
 * cache and the handlers; watch events add, update and delete; indexes by namespace and by
 * spec.nodeName; resync re-delivers cached objects; and after the server was down while its
 * history was cut short (restarted with a two-event history) the informer relists and sees
 * the changes it missed, deletions included. Which fault leads it there depends on where its
 * re-watch lands while the server stops (a 410 from the restarted server, or a watch that a
 * stopping server ends at once, which client-go also answers with a relist), so that test
 * asserts the outcome; the exact 410 paths, as an HTTP status and as an ERROR event inside a
 * 200 stream, and bookmarks are driven deterministically by a small fake served by the real
 * HTTP server.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "kubetest.h"
#include "testutil.h"

/* What the handlers saw: counts and a log of "add:key", "update:key", "delete:key". */
struct seen {
    pthread_mutex_t lock;
    unsigned adds, updates, deletes, resyncs;
    struct strbuf log;
};

static void seen_note(struct seen *s, const char *what, const struct kube_object *o)
{
    (void)pthread_mutex_lock(&s->lock);
    strbuf_addf(&s->log, "%s:%s ", what, kube_object_key(o));
    (void)pthread_mutex_unlock(&s->lock);
}

static void on_add(void *ud, const struct kube_object *o)
{
    struct seen *s = ud;

    seen_note(s, "add", o);
    (void)pthread_mutex_lock(&s->lock);
    s->adds++;
    (void)pthread_mutex_unlock(&s->lock);
}

static void on_update(void *ud, const struct kube_object *old, const struct kube_object *o)
{
    struct seen *s = ud;

    if (old != o)
        seen_note(s, "update", o);
    (void)pthread_mutex_lock(&s->lock);
    if (old == o)
        s->resyncs++;
    else
        s->updates++;
    (void)pthread_mutex_unlock(&s->lock);
}

static void on_delete(void *ud, const struct kube_object *o)
{
    struct seen *s = ud;

    seen_note(s, "delete", o);
    (void)pthread_mutex_lock(&s->lock);
    s->deletes++;
    (void)pthread_mutex_unlock(&s->lock);
}

/* Whether the log mentions every space-separated entry of want. */
struct log_wait {
    struct seen *s;
    const char *want;
};

static bool log_has(void *arg)
{
    struct log_wait *w = arg;
    char *want = xstrdup(w->want), *save = NULL;
    bool ok = true;

    (void)pthread_mutex_lock(&w->s->lock);
    for (char *t = strtok_r(want, " ", &save); t && ok; t = strtok_r(NULL, " ", &save)) {
        struct strbuf needle = STRBUF_INIT;
        strbuf_addf(&needle, "%s ", t);
        ok = strstr(w->s->log.buf, needle.buf) != NULL;
        strbuf_release(&needle);
    }
    (void)pthread_mutex_unlock(&w->s->lock);
    free(want);
    return ok;
}

static void wait_log(struct seen *s, const char *want)
{
    struct log_wait w = {s, want};

    if (!kt_wait(log_has, &w, 10)) {
        (void)pthread_mutex_lock(&s->lock);
        fail_msg("handlers never saw \"%s\"; log: %s", want, s->log.buf);
    }
}

struct env {
    struct kt_server *srv;
    struct kube_client *c;
    struct kube_informer *inf;
    struct seen seen;
};

static int setup(void **state)
{
    struct env *e = xcalloc(1, sizeof(*e));

    e->srv = kt_server_new(0);
    e->c = kt_client(e->srv);
    CHECK(pthread_mutex_init(&e->seen.lock, NULL) == 0);
    strbuf_init(&e->seen.log);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;

    kube_informer_free(e->inf);
    kube_client_free(e->c);
    kt_server_free(e->srv);
    strbuf_release(&e->seen.log);
    (void)pthread_mutex_destroy(&e->seen.lock);
    free(e);
    return 0;
}

static void start(struct env *e, struct kube_informer_opts *o)
{
    struct kube_handlers h = {on_add, on_update, on_delete, &e->seen};

    if (!o->backoff_initial_ms)
        o->backoff_initial_ms = 20;
    if (!o->backoff_max_ms)
        o->backoff_max_ms = 100;
    e->inf = kube_informer_new(e->c, o);
    assert_int_equal(kube_informer_add_handlers(e->inf, &h), 0);
    assert_int_equal(kube_informer_start(e->inf), 0);
    assert_int_equal(kube_informer_add_handlers(e->inf, &h), -EBUSY);
    assert_true(kube_informer_wait_synced(e->inf, 10000));
}

static void create_cm(struct kube_client *c, const char *ns, const char *name, const char *v)
{
    cJSON *cm = kt_configmap(ns, name, v);
    struct kube_status st;
    int r = kube_create(c, &kube_res_configmaps, ns, cm, NULL, &st);

    if (r < 0)
        fail_msg("create %s/%s: %d %s", ns, name, r, st.message);
    cJSON_Delete(cm);
}

static void patch_cm(struct kube_client *c, const char *ns, const char *name, const char *v)
{
    struct strbuf p = STRBUF_INIT;
    cJSON *patch;

    strbuf_addf(&p, "{\"data\":{\"v\":\"%s\"}}", v);
    patch = J(p.buf);
    assert_int_equal(
        kube_patch(c, &kube_res_configmaps, ns, name, NULL, KUBE_PATCH_MERGE, patch, NULL, NULL),
        0);
    cJSON_Delete(patch);
    strbuf_release(&p);
}

static const char *data_v(const struct kube_object *o)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(kube_object_json(o), "data"), "v")->valuestring;
}

static void test_list_then_watch(void **state)
{
    struct env *e = *state;
    struct kube_informer_opts o = {.resource = &kube_res_configmaps};
    struct kube_object *obj, **v;
    size_t n;

    create_cm(e->c, "default", "a", "1");
    create_cm(e->c, "default", "b", "1");
    create_cm(e->c, "kube-public", "c", "1");
    start(e, &o);
    /* The list delivered adds before has_synced turned true. */
    assert_int_equal(e->seen.adds, 3);
    obj = kube_informer_get(e->inf, "default/a");
    assert_non_null(obj);
    assert_string_equal(kube_object_name(obj), "a");
    assert_string_equal(kube_object_namespace(obj), "default");
    /* List items carry no kind; the cache fills it in. */
    assert_string_equal(cJSON_GetObjectItem(kube_object_json(obj), "kind")->valuestring,
                        "ConfigMap");
    n = kube_informer_list(e->inf, "default", &v);
    assert_int_equal(n, 2);
    kube_objects_free(v, n);
    n = kube_informer_list(e->inf, NULL, &v);
    assert_int_equal(n, 3);
    kube_objects_free(v, n);
    n = kube_informer_list(e->inf, "nope", &v);
    assert_int_equal(n, 0);
    kube_objects_free(v, n);

    create_cm(e->c, "default", "d", "1");
    patch_cm(e->c, "default", "a", "2");
    assert_int_equal(kube_delete(e->c, &kube_res_configmaps, "kube-public", "c", NULL), 0);
    wait_log(&e->seen, "add:default/d update:default/a delete:kube-public/c");
    assert_null(kube_informer_get(e->inf, "kube-public/c"));
    /* The reference taken before the update still sees the old, immutable object. */
    assert_string_equal(data_v(obj), "1");
    obj = kube_object_unref(obj);
    obj = kube_informer_get(e->inf, "default/a");
    assert_string_equal(data_v(obj), "2");
    obj = kube_object_unref(obj);
    n = kube_informer_list(e->inf, "kube-public", &v);
    assert_int_equal(n, 0);
    kube_objects_free(v, n);
}

static void create_pod(struct kube_client *c, const char *name, const char *node)
{
    struct strbuf b = STRBUF_INIT;
    cJSON *pod;
    struct kube_status st;
    int r;

    /* Grace period 0: a bound pod's delete is immediate, as the test's deletes expect (kube
     * would otherwise keep it Terminating for 30 s). */
    strbuf_addf(&b,
                "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
                "\"namespace\":\"default\"},\"spec\":{\"terminationGracePeriodSeconds\":0,"
                "\"nodeName\":\"%s\",\"containers\":"
                "[{\"name\":\"c\",\"image\":\"busybox\"}]}}",
                name, node);
    pod = J(b.buf);
    r = kube_create_object(c, pod, NULL, &st);
    if (r < 0)
        fail_msg("create pod: %d %s", r, st.message);
    cJSON_Delete(pod);
    strbuf_release(&b);
}

static void test_node_name_index(void **state)
{
    struct env *e = *state;
    struct kube_informer_opts o = {.resource = &kube_res_pods, .index_node_name = true};
    struct kube_object **v;
    size_t n;

    create_pod(e->c, "p1", "n1");
    create_pod(e->c, "p2", "n1");
    start(e, &o);
    create_pod(e->c, "p3", "n2");
    wait_log(&e->seen, "add:default/p3");
    n = kube_informer_list_by_node(e->inf, "n1", &v);
    assert_int_equal(n, 2);
    assert_string_equal(kube_object_node_name(v[0]), "n1");
    kube_objects_free(v, n);
    assert_int_equal(kube_delete(e->c, &kube_res_pods, "default", "p1", NULL), 0);
    wait_log(&e->seen, "delete:default/p1");
    n = kube_informer_list_by_node(e->inf, "n1", &v);
    assert_int_equal(n, 1);
    assert_string_equal(kube_object_name(v[0]), "p2");
    kube_objects_free(v, n);
    n = kube_informer_list_by_node(e->inf, "n2", &v);
    assert_int_equal(n, 1);
    kube_objects_free(v, n);
}

static void test_resync(void **state)
{
    struct env *e = *state;
    struct kube_informer_opts o = {.resource = &kube_res_configmaps, .resync_ms = 20};

    create_cm(e->c, "default", "r", "1");
    start(e, &o);
    /* Every resync re-delivers the one object as an update with old == new. */
    for (double end = kt_now() + 10;;) {
        unsigned r;

        (void)pthread_mutex_lock(&e->seen.lock);
        r = e->seen.resyncs;
        (void)pthread_mutex_unlock(&e->seen.lock);
        if (r >= 3)
            break;
        assert_true(kt_now() < end);
        {
            struct timespec ts = {0, 5000000};
            (void)nanosleep(&ts, NULL);
        }
    }
    assert_int_equal(e->seen.updates, 0);
}

static bool has_managed_fields(const cJSON *obj)
{
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"),
                                            "managedFields") != NULL;
}

/* drop_managed_fields: neither a listed nor a watched object keeps them in the cache, while the
 * server does record them (a GET shows them) and the rest of the metadata stays. */
static void test_drop_managed_fields(void **state)
{
    struct env *e = *state;
    struct kube_informer_opts o = {.resource = &kube_res_configmaps, .drop_managed_fields = true};
    const char *names[] = {"default/listed", "default/watched"};
    cJSON *got = NULL;

    create_cm(e->c, "default", "listed", "1");
    start(e, &o);
    create_cm(e->c, "default", "watched", "1");
    patch_cm(e->c, "default", "listed", "2");
    wait_log(&e->seen, "add:default/watched update:default/listed");
    assert_int_equal(kube_get(e->c, &kube_res_configmaps, "default", "watched", &got, NULL), 0);
    assert_true(has_managed_fields(got));
    cJSON_Delete(got);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        struct kube_object *obj = kube_informer_get(e->inf, names[i]);

        assert_non_null(obj);
        assert_false(has_managed_fields(kube_object_json(obj)));
        assert_string_not_equal(kube_object_resource_version(obj), "");
        assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(kube_object_json(obj), "metadata"),
                                            "creationTimestamp"));
        assert_string_equal(data_v(obj), i == 0 ? "2" : "1");
        (void)kube_object_unref(obj);
    }
}

static bool relisted(void *arg)
{
    struct kube_informer_stats st;

    kube_informer_stats(arg, &st);
    return st.lists >= 2;
}

static void test_relist_after_history_lost(void **state)
{
    struct env *e = *state;
    struct kube_informer_opts o = {.resource = &kube_res_configmaps};
    /* Another loopback address, so the second instance can never take the first one's
     * address and port while it is down. */
    struct http_server_opts ho = {.host = "127.0.0.2"};
    struct kube_client *plain = NULL;
    struct store *backend = NULL, *store = NULL;
    struct apiserver *api = NULL;
    struct http_server *http = NULL;
    struct kube_informer_stats st;
    struct kube_object *obj;
    char url[64];

    create_cm(e->c, "default", "keep", "1");
    create_cm(e->c, "default", "gone", "1");
    start(e, &o);
    /* Once the watch has delivered an event, its end is not a "very short watch" (which would
     * relist without a 410): the informer re-watches from its resourceVersion. */
    create_cm(e->c, "default", "ping", "1");
    wait_log(&e->seen, "add:default/ping");

    /* Take the server down; while it is down, a second instance over the same store, keeping
     * only two events of history, makes more changes than that. */
    kt_server_stop(e->srv);
    assert_int_equal(store_sqlite_open(e->srv->db, 2, &backend), 0);
    assert_int_equal(store_cache_new(backend, &store), 0);
    assert_int_equal(apiserver_new(store, &api), 0);
    assert_int_equal(http_server_start(&ho, apiserver_handle, api, &http), 0);
    (void)snprintf(url, sizeof(url), "http://127.0.0.2:%u", http_server_port(http));
    assert_int_equal(kube_client_new(kube_config_new(url), &plain), 0);
    create_cm(plain, "default", "new-1", "1");
    create_cm(plain, "default", "new-2", "1");
    patch_cm(plain, "default", "keep", "2");
    assert_int_equal(kube_delete(plain, &kube_res_configmaps, "default", "gone", NULL), 0);
    kube_client_free(plain);
    apiserver_stop_watches(api);
    http_server_stop(http);
    apiserver_free(api);
    store_close(store);
    store_close(backend);

    /* Back on the old port with the short history: a watch from the old resourceVersion gets
     * 410; either way the informer relists. */
    kt_server_start(e->srv, 2);
    if (!kt_wait(relisted, e->inf, 10)) {
        kube_informer_stats(e->inf, &st);
        fail_msg("no relist: lists %lu watches %lu expired %lu failures %lu rv %s; "
                 "log: %s",
                 st.lists, st.watches, st.expired, st.failures, st.resource_version,
                 e->seen.log.buf);
    }
    wait_log(&e->seen, "add:default/new-1 add:default/new-2 update:default/keep "
                       "delete:default/gone");
    obj = kube_informer_get(e->inf, "default/keep");
    assert_string_equal(data_v(obj), "2");
    obj = kube_object_unref(obj);
    assert_null(kube_informer_get(e->inf, "default/gone"));
    kube_informer_stats(e->inf, &st);
    assert_true(st.failures >= 1); /* the connection refused while the server was down */

    /* And it watches again from the relist. */
    create_cm(e->c, "default", "after", "1");
    wait_log(&e->seen, "add:default/after");
}

/* ---- a fake for the ERROR-event form of 410 and for bookmarks ---- */

struct fake {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool closing;
    unsigned lists, watches_at_7;
};

struct fake_stream {
    struct fake *f;
    char *text;
    size_t off;
};

static long fake_read(void *ud, struct http_stream *st, char *buf, size_t max)
{
    struct fake_stream *s = ud;
    size_t left = strlen(s->text) - s->off;

    (void)st;

    if (left > 0) {
        size_t n = left < max ? left : max;
        memcpy(buf, s->text + s->off, n);
        s->off += n;
        return (long)n;
    }
    /* Then hold the stream open until the test ends. */
    (void)pthread_mutex_lock(&s->f->lock);
    while (!s->f->closing)
        (void)pthread_cond_wait(&s->f->cond, &s->f->lock);
    (void)pthread_mutex_unlock(&s->f->lock);
    return 0;
}

static void fake_stream_free(void *ud)
{
    struct fake_stream *s = ud;

    free(s->text);
    free(s);
}

static void fake_handle(const struct http_request *req, struct http_response *resp, void *ud)
{
    struct fake *f = ud;
    const char *watch = http_request_query(req, "watch");
    const char *rv = http_request_query(req, "resourceVersion");
    struct fake_stream *s;
    unsigned lists = 0, at7 = 0;

    resp->status = 200;
    (void)pthread_mutex_lock(&f->lock);
    if (!watch)
        lists = ++f->lists;
    else if (rv && !strcmp(rv, "7"))
        at7 = ++f->watches_at_7;
    (void)pthread_mutex_unlock(&f->lock);
    if (!watch) {
        /* The first list is at "5" with one object; the relists at "7" with another. */
        strbuf_addstr(&resp->body, lists == 1
                                       ? "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\","
                                         "\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[{"
                                         "\"metadata\":{\"name\":\"x\",\"namespace\":\"ns\","
                                         "\"resourceVersion\":\"4\"}}]}"
                                       : "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\","
                                         "\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[{"
                                         "\"metadata\":{\"name\":\"y\",\"namespace\":\"ns\","
                                         "\"resourceVersion\":\"6\"}}]}");
        return;
    }
    if (rv && !strcmp(rv, "5")) {
        /* The watch request itself answered with 410 (HTTP status form). */
        resp->status = 410;
        strbuf_addstr(&resp->body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                                   "\"status\":\"Failure\",\"message\":\"too old resource "
                                   "version: 5 (6)\",\"reason\":\"Expired\",\"code\":410}");
        return;
    }
    s = xcalloc(1, sizeof(*s));
    s->f = f;
    if (at7 == 1)
        /* The first watch from the relist: 410 as an ERROR event in a 200 stream. */
        s->text = xstrdup("{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":"
                          "\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old "
                          "resource version: 5 (6)\",\"reason\":\"Expired\",\"code\":410}}\n");
    else
        /* A change, then a bookmark that moves the resourceVersion on. */
        s->text = xstrdup("{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"ConfigMap\","
                          "\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"y\",\"namespace\":"
                          "\"ns\",\"resourceVersion\":\"8\"}}}\n{\"type\":\"BOOKMARK\","
                          "\"object\":{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\","
                          "\"metadata\":{\"resourceVersion\":\"9\"}}}\n");
    resp->stream = fake_read;
    resp->stream_blocking = true;
    resp->stream_userdata = s;
    resp->stream_free = fake_stream_free;
}

static bool at_bookmark(void *arg)
{
    struct kube_informer_stats st;

    kube_informer_stats(arg, &st);
    return !strcmp(st.resource_version, "9");
}

static void test_error_event_410_and_bookmarks(void **state)
{
    struct fake f = {0};
    struct http_server_opts ho = {.host = "127.0.0.1"};
    struct http_server *http = NULL;
    struct kube_client *c = NULL;
    struct kube_informer_opts o = {.resource = &kube_res_configmaps, .backoff_initial_ms = 20};
    struct kube_informer *inf;
    struct kube_informer_stats st;
    struct kube_object *obj;
    char url[64];

    (void)state;
    CHECK(pthread_mutex_init(&f.lock, NULL) == 0);
    CHECK(pthread_cond_init(&f.cond, NULL) == 0);
    assert_int_equal(http_server_start(&ho, fake_handle, &f, &http), 0);
    (void)snprintf(url, sizeof(url), "http://127.0.0.1:%u", http_server_port(http));
    assert_int_equal(kube_client_new(kube_config_new(url), &c), 0);
    inf = kube_informer_new(c, &o);
    assert_int_equal(kube_informer_start(inf), 0);
    assert_true(kt_wait(at_bookmark, inf, 10));
    kube_informer_stats(inf, &st);
    assert_int_equal(st.expired, 2);
    assert_int_equal(st.lists, 3);
    assert_null(kube_informer_get(inf, "ns/x")); /* gone in the relist */
    obj = kube_informer_get(inf, "ns/y");
    assert_string_equal(kube_object_resource_version(obj), "8");
    obj = kube_object_unref(obj);

    kube_informer_free(inf);
    (void)pthread_mutex_lock(&f.lock);
    f.closing = true;
    (void)pthread_cond_broadcast(&f.cond);
    (void)pthread_mutex_unlock(&f.lock);
    http_server_stop(http);
    kube_client_free(c);
    (void)pthread_cond_destroy(&f.cond);
    (void)pthread_mutex_destroy(&f.lock);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_list_then_watch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_name_index, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resync, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drop_managed_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_relist_after_history_lost, setup, teardown),
        cmocka_unit_test(test_error_event_410_and_bookmarks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
