/*
 * Tests for manager/nodemetric/crd against a real koord API server (tests/kube/kubetest.h):
 * whether the slo.koordinator.sh NodeMetric CRD is served (not before it is installed); apply
 * creates the object with the spec and no status, writes nothing when the spec is already so
 * (same resourceVersion), updates a different spec and keeps the status an agent wrote, and
 * with keep_spec leaves an existing spec alone but still creates a missing object; delete is
 * fine for an absent object; names lists every object.
 *
 * The watch: started before the CRD exists it is not served, and becomes served once the CRD
 * is installed (issue 18: a CRD installed after the manager started leading); it tells an
 * object's appearance (spec and status), a status write (status only), a spec write (spec
 * only) and a deletion (both), keeps the reported status in its cache, and a watch started
 * over existing objects hands each of them over after on_served. Events are awaited by polling
 * with a deadline.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "api/api.h"
#include "api/crd.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/informer.h"
#include "kube/kubetest.h"
#include "manager/nodemetric/crd.h"
#include "testutil.h"

static const struct kube_resource res_crds = {
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false};

struct env {
    struct kt_server *srv;
    struct kube_client *c;
};

static int setup(void **state)
{
    struct env *e = xcalloc(1, sizeof(*e));

    const char *paths[2];
    struct kube_config *cfg = NULL;

    e->srv = kt_server_new(0);
    paths[0] = e->srv->kubeconfig;
    paths[1] = NULL;
    assert_int_equal(kube_config_from_kubeconfig(paths, NULL, &cfg, NULL), 0);
    /* Generous: the first request's TLS handshake under valgrind on a loaded 2-core machine
     * has taken more than kt_client()'s 10 s. */
    cfg->timeout_ms = 120000;
    assert_int_equal(kube_client_new(cfg, &e->c), 0);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;

    kube_client_free(e->c);
    kt_server_free(e->srv);
    free(e);
    return 0;
}

static void install_crd(struct env *e)
{
    cJSON *crd = NULL;

    for (const struct api_kind *const *k = api_kinds(); *k; k++)
        if ((*k)->crd && !strcmp((*k)->kind, "NodeMetric"))
            assert_int_equal(api_crd_build(*k, &crd), 0);
    assert_non_null(crd);
    assert_int_equal(kube_create(e->c, &res_crds, NULL, crd, NULL, NULL), 0);
    cJSON_Delete(crd);
}

/* The object's spec.metricCollectPolicy.reportIntervalSeconds and resourceVersion. */
static int interval_of(struct env *e, const char *node, char *rv, size_t rv_size)
{
    cJSON *o = NULL;
    const cJSON *v;
    int n;

    assert_int_equal(kube_get(e->c, &nodemetric_crd_resource, NULL, node, &o, NULL), 0);
    v = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(o, "spec"), "metricCollectPolicy"),
        "reportIntervalSeconds");
    assert_true(cJSON_IsNumber(v));
    n = v->valueint;
    (void)snprintf(rv, rv_size, "%s",
                   cJSON_GetStringValue(
                       cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "resourceVersion")));
    cJSON_Delete(o);
    return n;
}

static cJSON *spec_of(int interval)
{
    char json[256];

    (void)snprintf(json, sizeof(json),
                   "{\"metricCollectPolicy\":{\"aggregateDurationSeconds\":300,"
                   "\"reportIntervalSeconds\":%d,\"nodeAggregatePolicy\":{\"durations\":"
                   "[\"5m0s\"]},\"nodeMemoryCollectPolicy\":\"usageWithoutPageCache\"}}",
                   interval);
    return J(json);
}

static void test_crd_objects(void **state)
{
    struct env *e = *state;
    cJSON *s60 = spec_of(60), *s30 = spec_of(30), *o = NULL, *patch;
    char rv1[32], rv2[32];
    char **names = NULL;

    /* not installed: not served, and nothing to keep */
    assert_int_equal(nodemetric_crd_served(e->c), 0);
    assert_int_equal(nodemetric_crd_apply(e->c, "n1", s60, false), -ENOENT);
    install_crd(e);
    assert_int_equal(nodemetric_crd_served(e->c), 1);

    /* created with the spec, no status */
    assert_int_equal(nodemetric_crd_apply(e->c, "n1", s60, false), 0);
    assert_int_equal(interval_of(e, "n1", rv1, sizeof(rv1)), 60);
    assert_int_equal(kube_get(e->c, &nodemetric_crd_resource, NULL, "n1", &o, NULL), 0);
    assert_null(cJSON_GetObjectItem(o, "status"));
    cJSON_Delete(o);
    /* the same spec again: no write */
    assert_int_equal(nodemetric_crd_apply(e->c, "n1", s60, false), 0);
    assert_int_equal(interval_of(e, "n1", rv2, sizeof(rv2)), 60);
    assert_string_equal(rv1, rv2);

    /* the agent reports; a new spec is written and the report stays */
    patch = J("{\"status\":{\"updateTime\":\"2026-01-01T00:00:00Z\"}}");
    assert_int_equal(kube_patch(e->c, &nodemetric_crd_resource, NULL, "n1", "status",
                                KUBE_PATCH_MERGE, patch, NULL, NULL),
                     0);
    cJSON_Delete(patch);
    assert_int_equal(nodemetric_crd_apply(e->c, "n1", s30, false), 0);
    assert_int_equal(interval_of(e, "n1", rv1, sizeof(rv1)), 30);
    assert_int_equal(kube_get(e->c, &nodemetric_crd_resource, NULL, "n1", &o, NULL), 0);
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "status"), "updateTime")),
        "2026-01-01T00:00:00Z");
    cJSON_Delete(o);

    /* keep_spec (colocation-config in error): the existing spec stays, a missing one is made */
    assert_int_equal(nodemetric_crd_apply(e->c, "n1", s60, true), 0);
    assert_int_equal(interval_of(e, "n1", rv2, sizeof(rv2)), 30);
    assert_string_equal(rv1, rv2);
    assert_int_equal(nodemetric_crd_apply(e->c, "n2", s60, true), 0);
    assert_int_equal(interval_of(e, "n2", rv2, sizeof(rv2)), 60);

    /* names; delete, also of what is not there */
    assert_int_equal(nodemetric_crd_names(e->c, &names), 2);
    assert_string_equal(names[0], "n1");
    assert_string_equal(names[1], "n2");
    assert_null(names[2]);
    for (size_t i = 0; names[i]; i++)
        free(names[i]);
    free(names);
    assert_int_equal(nodemetric_crd_delete(e->c, "n2"), 0);
    assert_int_equal(kube_get(e->c, &nodemetric_crd_resource, NULL, "n2", NULL, NULL), -ENOENT);
    assert_int_equal(nodemetric_crd_delete(e->c, "n2"), 0);
    cJSON_Delete(s60);
    cJSON_Delete(s30);
}

/* ---- the watch ---- */

#define DEADLINE_S 120 /* valgrind on a loaded 2-core machine */

/* What the callbacks were told, in order: "served ", "o:NODE ", "s:NODE ". */
struct events {
    pthread_mutex_t lock;
    struct strbuf log;
};

static void record(struct events *ev, const char *what, const char *node)
{
    (void)pthread_mutex_lock(&ev->lock);
    strbuf_addf(&ev->log, "%s%s ", what, node);
    (void)pthread_mutex_unlock(&ev->lock);
}

static void ev_served(void *userdata)
{
    record(userdata, "served", "");
}

static void ev_object(void *userdata, const char *node)
{
    record(userdata, "o:", node);
}

static void ev_status(void *userdata, const char *node)
{
    record(userdata, "s:", node);
}

/* How many times word (with its trailing space) was recorded since the last reset. */
static int count(struct events *ev, const char *word)
{
    char w[64];
    int n = 0;

    (void)snprintf(w, sizeof(w), "%s ", word);
    (void)pthread_mutex_lock(&ev->lock);
    for (const char *p = ev->log.buf; (p = strstr(p, w)); p += strlen(w))
        if (p == ev->log.buf || p[-1] == ' ')
            n++;
    (void)pthread_mutex_unlock(&ev->lock);
    return n;
}

static void reset(struct events *ev)
{
    (void)pthread_mutex_lock(&ev->lock);
    strbuf_reset(&ev->log);
    (void)pthread_mutex_unlock(&ev->lock);
}

static double now_s(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Polls every 20 ms until word was recorded at least n times; fails at the deadline. */
static void wait_count_at(struct events *ev, const char *word, int n, int line)
{
    double end = now_s() + DEADLINE_S;
    struct timespec step = {0, 20000000};

    while (count(ev, word) < n) {
        if (now_s() > end) {
            (void)pthread_mutex_lock(&ev->lock);
            fail_msg("line %d: timed out waiting for %d x \"%s\"; got: %s", line, n, word,
                     ev->log.buf);
        }
        (void)nanosleep(&step, NULL);
    }
}
#define wait_count(ev, word, n) wait_count_at((ev), (word), (n), __LINE__)

/* The cached status.updateTime of node, "" without one, NULL without the object. */
static char *cached_update_time(struct nodemetric_crd_watch *w, const char *node)
{
    struct kube_object *o = nodemetric_crd_watch_get(w, node);
    const char *t;
    char *ret;

    if (!o)
        return NULL;
    t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(kube_object_json(o), "status"), "updateTime"));
    ret = xstrdup(t ? t : "");
    kube_object_unref(o);
    return ret;
}

static void report(struct env *e, const char *node, const char *time)
{
    char json[128];
    cJSON *patch;

    (void)snprintf(json, sizeof(json), "{\"status\":{\"updateTime\":\"%s\"}}", time);
    patch = J(json);
    assert_int_equal(kube_patch(e->c, &nodemetric_crd_resource, NULL, node, "status",
                                KUBE_PATCH_MERGE, patch, NULL, NULL),
                     0);
    cJSON_Delete(patch);
}

static void test_crd_watch(void **state)
{
    struct env *e = *state;
    struct events ev = {.log = STRBUF_INIT};
    struct nodemetric_crd_watch_opts o = {.on_served = ev_served,
                                          .on_object = ev_object,
                                          .on_status = ev_status,
                                          .userdata = &ev,
                                          .backoff_max_ms = 200};
    struct nodemetric_crd_watch *w, *w2;
    cJSON *s60 = spec_of(60), *s30 = spec_of(30);
    char *t;

    CHECK(pthread_mutex_init(&ev.lock, NULL) == 0);
    w = nodemetric_crd_watch_new(e->c, &o);
    assert_null(nodemetric_crd_watch_get(w, "n1")); /* not started: nothing */
    assert_int_equal(nodemetric_crd_watch_start(w), 0);
    /* no CRD: cannot be served, however long one waits */
    assert_false(nodemetric_crd_watch_served(w));

    /* installed later: picked up within the informer's backoff */
    install_crd(e);
    wait_count(&ev, "served", 1);
    assert_true(nodemetric_crd_watch_served(w));

    /* created (as the manager does): spec and status looked at; cached without a status */
    assert_int_equal(nodemetric_crd_apply(e->c, "n1", s60, false), 0);
    wait_count(&ev, "o:n1", 1);
    wait_count(&ev, "s:n1", 1);
    t = cached_update_time(w, "n1");
    assert_string_equal(t, "");
    free(t);

    /* an agent's report: status only (one handler call decides both, spec first) */
    reset(&ev);
    report(e, "n1", "2026-01-01T00:00:00Z");
    wait_count(&ev, "s:n1", 1);
    assert_int_equal(count(&ev, "o:n1"), 0);
    t = cached_update_time(w, "n1");
    assert_string_equal(t, "2026-01-01T00:00:00Z");
    free(t);

    /* a new spec: spec only; the report after it is the one status event */
    reset(&ev);
    assert_int_equal(nodemetric_crd_apply(e->c, "n1", s30, false), 0);
    wait_count(&ev, "o:n1", 1);
    report(e, "n1", "2026-01-01T00:01:00Z");
    wait_count(&ev, "s:n1", 1);
    assert_int_equal(count(&ev, "s:n1"), 1);
    assert_int_equal(count(&ev, "o:n1"), 1);

    /* deleted by hand: both, and gone from the cache */
    reset(&ev);
    assert_int_equal(nodemetric_crd_delete(e->c, "n1"), 0);
    wait_count(&ev, "o:n1", 1);
    wait_count(&ev, "s:n1", 1);
    assert_null(nodemetric_crd_watch_get(w, "n1"));
    assert_int_equal(count(&ev, "served"), 0); /* once per watch */

    /* a watch started over existing objects: served, then each object handed over (after the
     * first list's own add) */
    assert_int_equal(nodemetric_crd_apply(e->c, "n2", s60, false), 0);
    wait_count(&ev, "o:n2", 1);
    nodemetric_crd_watch_free(w);
    reset(&ev);
    w2 = nodemetric_crd_watch_new(e->c, &o);
    assert_int_equal(nodemetric_crd_watch_start(w2), 0);
    wait_count(&ev, "o:n2", 2);
    (void)pthread_mutex_lock(&ev.lock);
    assert_non_null(strstr(ev.log.buf, "served o:n2 "));
    (void)pthread_mutex_unlock(&ev.lock);
    assert_true(nodemetric_crd_watch_served(w2));
    nodemetric_crd_watch_stop(w2);
    nodemetric_crd_watch_free(w2);

    strbuf_release(&ev.log);
    (void)pthread_mutex_destroy(&ev.lock);
    cJSON_Delete(s60);
    cJSON_Delete(s30);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_crd_objects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crd_watch, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
