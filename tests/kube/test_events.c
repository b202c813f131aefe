/*
 * Tests for kube/events against a real koord API server: an Event carries involvedObject,
 * reason, message, type, source and timestamps; a repeat within the window patches count and
 * lastTimestamp of the same Event instead of creating another; a different message, type or
 * object makes a new Event; cluster-scoped objects get their Events in "default"; an Event
 * deleted meanwhile is created again; concurrent repeats from several threads collapse into
 * one Event.
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
#include "kube/client.h"
#include "kube/events.h"
#include "kubetest.h"
#include "testutil.h"

struct env {
    struct kt_server *srv;
    struct kube_client *c;
    struct kube_recorder *rec;
};

static int setup(void **state)
{
    struct env *e = xcalloc(1, sizeof(*e));
    struct kube_recorder_opts o = {.component = "koord-manager", .host = "node-a"};

    e->srv = kt_server_new(0);
    e->c = kt_client(e->srv);
    e->rec = kube_recorder_new(e->c, &o);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;

    kube_recorder_free(e->rec);
    kube_client_free(e->c);
    kt_server_free(e->srv);
    free(e);
    return 0;
}

/* The Events in ns (caller frees the list). */
static cJSON *events(struct env *e, const char *ns)
{
    cJSON *list = NULL;

    assert_int_equal(kube_list(e->c, &kube_res_events, ns, NULL, &list, NULL), 0);
    return cJSON_GetObjectItem(list, "items") ? list : NULL;
}

static const char *s_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItem(o, a);

    if (b)
        v = cJSON_GetObjectItem(v, b);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static void test_create_then_dedupe(void **state)
{
    struct env *e = *state;
    cJSON *cm = kt_configmap("default", "slo-controller-config", "x"), *got = NULL, *list, *ev;

    assert_int_equal(kube_create(e->c, &kube_res_configmaps, "default", cm, &got, NULL), 0);
    cJSON_Delete(cm);
    assert_int_equal(kube_recorder_event(e->rec, got, KUBE_EVENT_WARNING, "InvalidConfig",
                                         "cannot parse %s: %s", "colocation-config", "bad"),
                     0);
    list = events(e, "default");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(list, "items")), 1);
    ev = cJSON_GetArrayItem(cJSON_GetObjectItem(list, "items"), 0);
    assert_string_equal(s_at(ev, "involvedObject", "kind"), "ConfigMap");
    assert_string_equal(s_at(ev, "involvedObject", "name"), "slo-controller-config");
    assert_string_equal(s_at(ev, "involvedObject", "namespace"), "default");
    assert_string_equal(s_at(ev, "involvedObject", "uid"), s_at(got, "metadata", "uid"));
    assert_string_equal(s_at(ev, "reason", NULL), "InvalidConfig");
    assert_string_equal(s_at(ev, "message", NULL), "cannot parse colocation-config: bad");
    assert_string_equal(s_at(ev, "type", NULL), "Warning");
    assert_string_equal(s_at(ev, "source", "component"), "koord-manager");
    assert_string_equal(s_at(ev, "source", "host"), "node-a");
    assert_int_equal(cJSON_GetObjectItem(ev, "count")->valueint, 1);
    assert_non_null(strstr(s_at(ev, "metadata", "name"), "slo-controller-config."));
    assert_int_equal(strlen(s_at(ev, "firstTimestamp", NULL)), 20);
    cJSON_Delete(list);

    /* The same again twice: one Event, count 3. */
    for (int i = 0; i < 2; i++)
        assert_int_equal(kube_recorder_event(e->rec, got, KUBE_EVENT_WARNING, "InvalidConfig",
                                             "cannot parse %s: %s", "colocation-config", "bad"),
                         0);
    list = events(e, "default");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(list, "items")), 1);
    ev = cJSON_GetArrayItem(cJSON_GetObjectItem(list, "items"), 0);
    assert_int_equal(cJSON_GetObjectItem(ev, "count")->valueint, 3);
    assert_int_equal(strlen(s_at(ev, "lastTimestamp", NULL)), 20);
    cJSON_Delete(list);

    /* A different message or type is a different Event. */
    assert_int_equal(kube_recorder_event(e->rec, got, KUBE_EVENT_WARNING, "InvalidConfig", "other"),
                     0);
    assert_int_equal(kube_recorder_event(e->rec, got, KUBE_EVENT_NORMAL, "InvalidConfig",
                                         "cannot parse colocation-config: bad"),
                     0);
    list = events(e, "default");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(list, "items")), 3);
    cJSON_Delete(list);
    cJSON_Delete(got);
}

static void test_cluster_scoped_and_recreate(void **state)
{
    struct env *e = *state;
    cJSON *node = J("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"}}");
    cJSON *list, *ev;
    char *name;

    assert_int_equal(kube_recorder_event(e->rec, node, KUBE_EVENT_NORMAL, "Synced", "ok"), 0);
    list = events(e, "default");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(list, "items")), 1);
    ev = cJSON_GetArrayItem(cJSON_GetObjectItem(list, "items"), 0);
    assert_string_equal(s_at(ev, "involvedObject", "kind"), "Node");
    assert_string_equal(s_at(ev, "involvedObject", "namespace"), "");
    name = xstrdup(s_at(ev, "metadata", "name"));
    cJSON_Delete(list);

    /* Deleted meanwhile: the repeat creates a fresh Event with count 1. */
    assert_int_equal(kube_delete(e->c, &kube_res_events, "default", name, NULL), 0);
    assert_int_equal(kube_recorder_event(e->rec, node, KUBE_EVENT_NORMAL, "Synced", "ok"), 0);
    list = events(e, "default");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(list, "items")), 1);
    ev = cJSON_GetArrayItem(cJSON_GetObjectItem(list, "items"), 0);
    assert_int_equal(cJSON_GetObjectItem(ev, "count")->valueint, 1);
    cJSON_Delete(list);
    free(name);

    /* No kind or name: refused before any request. */
    cJSON_DeleteItemFromObject(node, "kind");
    assert_int_equal(kube_recorder_event(e->rec, node, KUBE_EVENT_NORMAL, "Synced", "ok"), -EINVAL);
    cJSON_Delete(node);
}

struct shared {
    struct env *e;
    cJSON *obj;
};

static void *repeat(void *arg)
{
    struct shared *s = arg;
    intptr_t fails = 0;

    for (int i = 0; i < 5; i++)
        if (kube_recorder_event(s->e->rec, s->obj, KUBE_EVENT_NORMAL, "Tick", "same") < 0)
            fails++;
    return (void *)fails;
}

static void test_concurrent_repeats_make_one_event(void **state)
{
    struct env *e = *state;
    struct shared s = {e, J("{\"apiVersion\":\"v1\",\"kind\":\"Node\","
                            "\"metadata\":{\"name\":\"n2\"}}")};
    pthread_t t[3];
    cJSON *list, *ev;
    void *fails;

    for (size_t i = 0; i < ARRAY_SIZE(t); i++)
        assert_int_equal(pthread_create(&t[i], NULL, repeat, &s), 0);
    for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
        assert_int_equal(pthread_join(t[i], &fails), 0);
        assert_null(fails);
    }
    list = events(e, "default");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(list, "items")), 1);
    ev = cJSON_GetArrayItem(cJSON_GetObjectItem(list, "items"), 0);
    assert_int_equal(cJSON_GetObjectItem(ev, "count")->valueint, 15);
    cJSON_Delete(list);
    cJSON_Delete(s.obj);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_then_dedupe, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cluster_scoped_and_recreate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_repeats_make_one_event, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
