/*
 * Tests for apiserver/lifecycle.c: the pod grace period kube's pod strategy picks (request,
 * spec, default, none for unbound or finished pods), marking a pod deleted (a deletion only
 * moves earlier), what a DELETE does to a pod (removed, marked, or left as it is), a new
 * namespace's finalizer and phase, and the sweep over a real store: a terminating namespace's
 * content deleted with finalizers and grace periods honoured, the deletion conditions with kube's
 * messages, then the namespace finalized and removed once empty; a pod removed when its grace
 * period has passed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "apiserver/lifecycle.h"
#include "apiserver/registry.h"
#include "apiserver/store.h"
#include "apiserver/store_memory.h"
#include "base/base.h"
#include "codec/codec.h"
#include "testutil.h"

#define NOW 1767225600 /* 2026-01-01T00:00:00Z */

static struct store *new_store(void)
{
    struct store *s = NULL;

    assert_int_equal(store_memory_new(&(struct store_memory_opts){.epoch = 1}, &s), 0);
    return s;
}

static void put(struct store *s, const char *key, const char *json)
{
    assert_int_equal(store_create(s, key, json, strlen(json), NULL), 0);
}

/* The stored object at key (caller frees), or NULL when there is none. */
static cJSON *stored(struct store *s, const char *key)
{
    struct store_item it = {0};
    cJSON *o = NULL;

    if (store_get(s, key, &it) == -ENOENT)
        return NULL;
    assert_int_equal(json_parse(it.value, it.len, NULL, &o, NULL), 0);
    store_item_release(&it);
    return o;
}

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(o, a), b));
}

/* The condition of type t of the namespace at key: "<status>|<reason>|<message>". */
static void ns_condition(struct store *s, const char *key, const char *t, char *out, size_t len)
{
    cJSON *ns = stored(s, key), *c;

    assert_non_null(ns);
    *out = '\0';
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(cJSON_GetObjectItem(ns, "status"), "conditions"))
    {
        if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "type")), t))
            (void)snprintf(out, len, "%s|%s|%s",
                           cJSON_GetStringValue(cJSON_GetObjectItem(c, "status")),
                           cJSON_GetStringValue(cJSON_GetObjectItem(c, "reason")),
                           cJSON_GetStringValue(cJSON_GetObjectItem(c, "message")));
    }
    cJSON_Delete(ns);
}

static void test_pod_grace(void **state)
{
    struct {
        const char *pod;
        int64_t requested, want;
    } cases[] = {
        {"{\"spec\":{\"nodeName\":\"n1\"}}", -1, 30},
        {"{\"spec\":{\"nodeName\":\"n1\",\"terminationGracePeriodSeconds\":5}}", -1, 5},
        {"{\"spec\":{\"nodeName\":\"n1\",\"terminationGracePeriodSeconds\":5}}", 12, 12},
        {"{\"spec\":{\"nodeName\":\"n1\",\"terminationGracePeriodSeconds\":5}}", 0, 0},
        {"{\"spec\":{\"nodeName\":\"n1\",\"terminationGracePeriodSeconds\":-3}}", -1, 1},
        /* No node runs it: nothing to wait for. */
        {"{\"spec\":{\"terminationGracePeriodSeconds\":5}}", 10, 0},
        {"{\"spec\":{\"nodeName\":\"\"}}", -1, 0},
        /* Finished pods have nothing to stop either. */
        {"{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Succeeded\"}}", -1, 0},
        {"{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Failed\"}}", 7, 0},
        {"{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Running\"}}", 7, 7},
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        cJSON *pod = J(cases[i].pod);
        int64_t got = lifecycle_pod_grace(pod, cases[i].requested);
        cJSON_Delete(pod);
        if (got != cases[i].want)
            fail_msg("case %zu: grace %lld, want %lld", i, (long long)got,
                     (long long)cases[i].want);
    }
}

static void test_pod_mark(void **state)
{
    cJSON *pod = J("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":\"n1\"}}");
    const cJSON *g;
    (void)state;

    assert_false(lifecycle_pod_due(pod, NOW));
    assert_true(lifecycle_pod_mark(pod, 30, NOW));
    assert_string_equal(str_at(pod, "metadata", "deletionTimestamp"), "2026-01-01T00:00:30Z");
    g = cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "metadata"), "deletionGracePeriodSeconds");
    assert_true(cJSON_IsNumber(g) && g->valuedouble == 30);
    assert_false(lifecycle_pod_due(pod, NOW + 29));
    assert_true(lifecycle_pod_due(pod, NOW + 30));
    /* A longer one later changes nothing; a shorter one moves the deletion earlier. */
    assert_false(lifecycle_pod_mark(pod, 60, NOW + 1));
    assert_string_equal(str_at(pod, "metadata", "deletionTimestamp"), "2026-01-01T00:00:30Z");
    assert_true(lifecycle_pod_mark(pod, 5, NOW + 2));
    assert_string_equal(str_at(pod, "metadata", "deletionTimestamp"), "2026-01-01T00:00:07Z");
    cJSON_Delete(pod);

    /* A deletion finalizers hold (no grace period) is not turned into a graceful one. */
    pod = J("{\"metadata\":{\"name\":\"p\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\","
            "\"finalizers\":[\"x\"]},\"spec\":{\"nodeName\":\"n1\"}}");
    assert_false(lifecycle_pod_mark(pod, 5, NOW));
    assert_false(lifecycle_pod_due(pod, NOW + 100));
    cJSON_Delete(pod);
}

/* lifecycle_pod_delete: what DELETE and pods/eviction do to a pod. */
static void test_pod_delete(void **state)
{
    cJSON *pod;
    const cJSON *g;
    (void)state;

    /* Unbound, or a forced delete: it goes. */
    pod = J("{\"metadata\":{\"name\":\"p\"},\"spec\":{}}");
    assert_int_equal(lifecycle_pod_delete(pod, -1, NOW), LIFECYCLE_POD_REMOVE);
    assert_null(str_at(pod, "metadata", "deletionTimestamp"));
    cJSON_Delete(pod);
    pod = J("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":\"n1\"}}");
    assert_int_equal(lifecycle_pod_delete(pod, 0, NOW), LIFECYCLE_POD_REMOVE);
    cJSON_Delete(pod);

    /* Bound: its own period, then a request's shorter one; a longer one changes nothing. */
    pod = J("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":\"n1\","
            "\"terminationGracePeriodSeconds\":20}}");
    assert_int_equal(lifecycle_pod_delete(pod, -1, NOW), LIFECYCLE_POD_MARKED);
    assert_string_equal(str_at(pod, "metadata", "deletionTimestamp"), "2026-01-01T00:00:20Z");
    assert_int_equal(lifecycle_pod_delete(pod, -1, NOW + 1), LIFECYCLE_POD_PENDING);
    assert_int_equal(lifecycle_pod_delete(pod, 60, NOW + 1), LIFECYCLE_POD_PENDING);
    assert_string_equal(str_at(pod, "metadata", "deletionTimestamp"), "2026-01-01T00:00:20Z");
    assert_int_equal(lifecycle_pod_delete(pod, 3, NOW + 1), LIFECYCLE_POD_MARKED);
    assert_string_equal(str_at(pod, "metadata", "deletionTimestamp"), "2026-01-01T00:00:04Z");
    g = cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "metadata"), "deletionGracePeriodSeconds");
    assert_true(cJSON_IsNumber(g) && g->valuedouble == 3);
    /* Period 0 on a terminating pod without finalizers: it goes now. */
    assert_int_equal(lifecycle_pod_delete(pod, 0, NOW + 2), LIFECYCLE_POD_REMOVE);
    cJSON_Delete(pod);

    /* Finalizers keep a pod deleted with period 0: marked now, period 0, then unchanged. */
    pod = J("{\"metadata\":{\"name\":\"p\",\"finalizers\":[\"example.com/x\"]},\"spec\":{}}");
    assert_int_equal(lifecycle_pod_delete(pod, -1, NOW), LIFECYCLE_POD_MARKED);
    assert_string_equal(str_at(pod, "metadata", "deletionTimestamp"), "2026-01-01T00:00:00Z");
    g = cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "metadata"), "deletionGracePeriodSeconds");
    assert_true(cJSON_IsNumber(g) && g->valuedouble == 0);
    assert_int_equal(lifecycle_pod_delete(pod, -1, NOW + 5), LIFECYCLE_POD_PENDING);
    assert_string_equal(str_at(pod, "metadata", "deletionTimestamp"), "2026-01-01T00:00:00Z");
    cJSON_Delete(pod);
    /* A bound pod with finalizers in its grace period, forced: kept, its period now 0. */
    pod = J("{\"metadata\":{\"name\":\"p\",\"finalizers\":[\"example.com/x\"],"
            "\"deletionTimestamp\":\"2026-01-01T00:00:30Z\",\"deletionGracePeriodSeconds\":30},"
            "\"spec\":{\"nodeName\":\"n1\"}}");
    assert_int_equal(lifecycle_pod_delete(pod, 0, NOW), LIFECYCLE_POD_MARKED);
    g = cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "metadata"), "deletionGracePeriodSeconds");
    assert_true(cJSON_IsNumber(g) && g->valuedouble == 0);
    cJSON_Delete(pod);
}

static void test_ns_create_and_mark(void **state)
{
    cJSON *ns = J("{\"metadata\":{\"name\":\"a\"},\"status\":{\"phase\":\"Terminating\"}}");
    (void)state;

    lifecycle_ns_prepare_create(ns);
    assert_json_eq(ns, "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"finalizers\":[\"kubernetes\"]},"
                       "\"status\":{\"phase\":\"Active\"}}");
    assert_false(lifecycle_ns_terminating(ns));
    cJSON_Delete(ns);
    /* A client's own spec finalizers stay, with kubernetes added once. */
    ns = J("{\"metadata\":{\"name\":\"a\"},\"spec\":{\"finalizers\":[\"example.com/x\","
           "\"kubernetes\"]}}");
    lifecycle_ns_prepare_create(ns);
    assert_json_eq(cJSON_GetObjectItem(ns, "spec"),
                   "{\"finalizers\":[\"example.com/x\",\"kubernetes\"]}");
    assert_true(lifecycle_ns_mark(ns, NOW));
    assert_true(lifecycle_ns_terminating(ns));
    assert_string_equal(str_at(ns, "status", "phase"), "Terminating");
    assert_string_equal(str_at(ns, "metadata", "deletionTimestamp"), "2026-01-01T00:00:00Z");
    /* A second DELETE keeps the first timestamp. */
    assert_false(lifecycle_ns_mark(ns, NOW + 5));
    assert_string_equal(str_at(ns, "metadata", "deletionTimestamp"), "2026-01-01T00:00:00Z");
    cJSON_Delete(ns);
}

#define NS_KEY "/core/namespaces//gone"
#define HELD   "/core/configmaps/gone/held"
#define BOUND  "/core/pods/gone/bound"

static void test_sweep_namespace(void **state)
{
    struct store *s = new_store();
    struct api_registry *reg = api_registry_new();
    char c[512];
    cJSON *o;
    (void)state;

    put(s, NS_KEY,
        "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"gone\","
        "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},\"spec\":{\"finalizers\":"
        "[\"kubernetes\"]},\"status\":{\"phase\":\"Terminating\"}}");
    put(s, "/core/namespaces//kept", "{\"metadata\":{\"name\":\"kept\"}}");
    put(s, "/core/configmaps/gone/plain", "{\"metadata\":{\"name\":\"plain\"}}");
    put(s, HELD, "{\"metadata\":{\"name\":\"held\",\"finalizers\":[\"example.com/hold\"]}}");
    put(s, BOUND, "{\"metadata\":{\"name\":\"bound\"},\"spec\":{\"nodeName\":\"n1\"}}");
    put(s, "/core/pods/gone/pending", "{\"metadata\":{\"name\":\"pending\"},\"spec\":{}}");
    put(s, "/core/configmaps/kept/other", "{\"metadata\":{\"name\":\"other\"}}");
    put(s, "/scheduling.koordinator.sh/reservations//r", "{\"metadata\":{\"name\":\"r\"}}");

    assert_int_equal(lifecycle_sweep(s, reg, NOW), 1);
    /* Deleted at once: what nothing holds. */
    assert_null(stored(s, "/core/configmaps/gone/plain"));
    assert_null(stored(s, "/core/pods/gone/pending"));
    /* Marked: the finalizer-held object and the pod in its grace period. */
    o = stored(s, HELD);
    assert_non_null(o);
    assert_string_equal(str_at(o, "metadata", "deletionTimestamp"), "2026-01-01T00:00:00Z");
    cJSON_Delete(o);
    o = stored(s, BOUND);
    assert_non_null(o);
    assert_string_equal(str_at(o, "metadata", "deletionTimestamp"), "2026-01-01T00:00:30Z");
    cJSON_Delete(o);
    /* Other namespaces and cluster-scoped objects are not touched. */
    o = stored(s, "/core/configmaps/kept/other");
    assert_non_null(o);
    cJSON_Delete(o);
    o = stored(s, "/scheduling.koordinator.sh/reservations//r");
    assert_non_null(o);
    cJSON_Delete(o);
    ns_condition(s, NS_KEY, "NamespaceContentRemaining", c, sizeof(c));
    assert_string_equal(c, "True|SomeResourcesRemain|Some resources are remaining: configmaps. "
                           "has 1 resource instances, pods. has 1 resource instances");
    ns_condition(s, NS_KEY, "NamespaceFinalizersRemaining", c, sizeof(c));
    assert_string_equal(c, "True|SomeFinalizersRemain|Some content in the namespace has "
                           "finalizers remaining: example.com/hold in 1 resource instances");
    ns_condition(s, NS_KEY, "NamespaceDeletionContentFailure", c, sizeof(c));
    assert_string_equal(
        c, "False|ContentDeleted|All content successfully deleted, may be waiting on finalization");

    /* The grace period passes: the pod goes (the kubelet's part). */
    assert_int_equal(lifecycle_sweep(s, reg, NOW + 29), 1);
    o = stored(s, BOUND);
    assert_non_null(o);
    cJSON_Delete(o);
    assert_int_equal(lifecycle_sweep(s, reg, NOW + 30), 1);
    assert_null(stored(s, BOUND));
    ns_condition(s, NS_KEY, "NamespaceContentRemaining", c, sizeof(c));
    assert_string_equal(c, "True|SomeResourcesRemain|Some resources are remaining: configmaps. "
                           "has 1 resource instances");

    /* The finalizer's controller lets go: the namespace empties, is finalized, and goes. */
    assert_int_equal(store_delete(s, HELD, 0, NULL, NULL), 0);
    for (int i = 0; i < 5 && (o = stored(s, NS_KEY)); i++) {
        if (i == 1) {
            assert_json_eq(cJSON_GetObjectItem(o, "spec"), "{\"finalizers\":[\"kubernetes\"]}");
            ns_condition(s, NS_KEY, "NamespaceContentRemaining", c, sizeof(c));
            assert_string_equal(c, "False|ContentRemoved|All content successfully removed");
            ns_condition(s, NS_KEY, "NamespaceFinalizersRemaining", c, sizeof(c));
            assert_string_equal(
                c, "False|ContentHasNoFinalizers|All content-preserving finalizers finished");
        }
        cJSON_Delete(o);
        assert_true(lifecycle_sweep(s, reg, NOW + 31) >= 0);
    }
    assert_null(stored(s, NS_KEY));
    o = stored(s, "/core/namespaces//kept");
    assert_non_null(o);
    cJSON_Delete(o);
    assert_int_equal(lifecycle_sweep(s, reg, NOW + 32), 0);
    api_registry_free(reg);
    store_close(s);
}

/* A namespace another party finalizes too stays until its spec finalizer is gone as well. */
static void test_sweep_foreign_finalizer(void **state)
{
    struct store *s = new_store();
    struct api_registry *reg = api_registry_new();
    cJSON *o;
    (void)state;

    put(s, NS_KEY,
        "{\"metadata\":{\"name\":\"gone\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
        "\"spec\":{\"finalizers\":[\"kubernetes\",\"example.com/x\"]},\"status\":{\"phase\":"
        "\"Terminating\"}}");
    for (int i = 0; i < 4; i++)
        assert_int_equal(lifecycle_sweep(s, reg, NOW), 1);
    o = stored(s, NS_KEY);
    assert_non_null(o);
    assert_json_eq(cJSON_GetObjectItem(o, "spec"), "{\"finalizers\":[\"example.com/x\"]}");
    cJSON_Delete(o);
    api_registry_free(reg);
    store_close(s);
}

/* A pod holding finalizers past its grace period is deleted but for them: it stays, with
 * deletionGracePeriodSeconds 0, so that removing the last finalizer completes it. */
static void test_sweep_pod_finalizer(void **state)
{
    struct store *s = new_store();
    struct api_registry *reg = api_registry_new();
    cJSON *o;
    const cJSON *g;
    (void)state;

    put(s, "/core/pods/default/p",
        "{\"metadata\":{\"name\":\"p\",\"finalizers\":[\"x\"],\"deletionTimestamp\":"
        "\"2026-01-01T00:00:10Z\",\"deletionGracePeriodSeconds\":10},\"spec\":{\"nodeName\":"
        "\"n1\"}}");
    assert_int_equal(lifecycle_sweep(s, reg, NOW), 1);
    assert_int_equal(lifecycle_sweep(s, reg, NOW + 10), 0);
    o = stored(s, "/core/pods/default/p");
    assert_non_null(o);
    g = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "deletionGracePeriodSeconds");
    assert_true(cJSON_IsNumber(g) && g->valuedouble == 0);
    cJSON_Delete(o);
    api_registry_free(reg);
    store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pod_grace),           cmocka_unit_test(test_pod_mark),
        cmocka_unit_test(test_pod_delete),          cmocka_unit_test(test_ns_create_and_mark),
        cmocka_unit_test(test_sweep_namespace),     cmocka_unit_test(test_sweep_foreign_finalizer),
        cmocka_unit_test(test_sweep_pod_finalizer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
