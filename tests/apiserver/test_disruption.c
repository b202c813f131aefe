/*
 * Tests for apiserver/disruption.c: the disruption controller's status computed at eviction
 * time (expected pods from the controllers' scale or the pod count, healthy pods, pruning of
 * disruptedPods) and the eviction decisions of eviction.go over a real store: pods the budget
 * ignores, one budget allowing and decrementing, none left (429 with kube's cause), several
 * budgets (a code-500 Status), and a budget whose expected count cannot be known.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"
#include "api/workloads.h"
#include "apiserver/disruption.h"
#include "apiserver/store.h"
#include "apiserver/store_memory.h"
#include "base/base.h"
#include "codec/codec.h"
#include "testutil.h"

#define NOW 1767225600 /* 2026-01-01T00:00:00Z */

static void put(struct store *s, const char *key, const char *json)
{
    assert_int_equal(store_create(s, key, json, strlen(json), NULL), 0);
}

#define READY_POD(name, labels, extra)                                                             \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" name                       \
    "\",\"namespace\":\"ns\",\"labels\":" labels extra "},\"status\":{\"phase\":\"Running\","      \
    "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}"
#define PDB(name, spec, status)                                                                    \
    "{\"apiVersion\":\"policy/"                                                                    \
    "v1\",\"kind\":\"PodDisruptionBudget\",\"metadata\":{\"name\":\"" name                         \
    "\",\"namespace\":\"ns\",\"generation\":1},\"spec\":{" spec "},\"status\":{" status "}}"
#define SEL_WEB "\"selector\":{\"matchLabels\":{\"app\":\"web\"}}"

static struct store *new_store(void)
{
    struct store *s = NULL;

    assert_int_equal(store_memory_new(&(struct store_memory_opts){.epoch = 1}, &s), 0);
    return s;
}

/* The stored object at key, decoded (caller frees). */
static cJSON *stored(struct store *s, const char *key)
{
    struct store_item it = {0};
    cJSON *o = NULL;

    assert_int_equal(store_get(s, key, &it), 0);
    assert_int_equal(json_parse(it.value, it.len, NULL, &o, NULL), 0);
    store_item_release(&it);
    return o;
}

static int evict(struct store *s, const char *pod_json, cJSON **reply, int *code)
{
    cJSON *pod = J(pod_json);
    int r;

    *reply = NULL;
    r = disruption_check_eviction(s, pod, false, NOW, reply, code);
    cJSON_Delete(pod);
    return r;
}

static void test_status(void **state)
{
    cJSON *pdb, *pods[3], *st;
    (void)state;

    pods[0] = J(READY_POD("a", "{}", ""));
    pods[1] = J(READY_POD("b", "{}", ""));
    /* Not ready: not healthy. */
    pods[2] = J("{\"metadata\":{\"name\":\"c\"},\"status\":{\"phase\":\"Running\"}}");
    pdb = J(PDB("p", "\"minAvailable\":1",
                "\"disruptedPods\":{\"a\":\"2025-12-31T23:59:00Z\","
                "\"gone\":\"2025-12-31T23:59:00Z\"}"));
    st = disruption_status(pdb, (const cJSON *const *)pods, 3, -1, NOW);
    /* a is still counted as disrupted (60 s ago); gone is pruned; b is the one healthy pod. */
    assert_non_null(st);
    cJSON_DeleteItemFromObjectCaseSensitive(st, "conditions");
    assert_json_eq(st, "{\"observedGeneration\":1,\"disruptedPods\":{\"a\":"
                       "\"2025-12-31T23:59:00Z\"},\"disruptionsAllowed\":0,\"currentHealthy\":1,"
                       "\"desiredHealthy\":1,\"expectedPods\":3}");
    cJSON_Delete(st);
    cJSON_Delete(pdb);

    /* Past the two-minute window a disrupted pod counts again; maxUnavailable uses the scale. */
    pdb = J(PDB("p", "\"maxUnavailable\":\"50%\"",
                "\"disruptedPods\":{\"a\":\"2025-12-31T23:50:00Z\"}"));
    st = disruption_status(pdb, (const cJSON *const *)pods, 3, 4, NOW);
    assert_non_null(st);
    assert_json_eq(
        cJSON_GetObjectItem(st, "conditions"),
        "[{\"type\":\"DisruptionAllowed\",\"status\":\"False\",\"observedGeneration\":1,"
        "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\",\"reason\":\"InsufficientPods\","
        "\"message\":\"\"}]");
    cJSON_DeleteItemFromObjectCaseSensitive(st, "conditions");
    assert_json_eq(st, "{\"observedGeneration\":1,\"disruptionsAllowed\":0,\"currentHealthy\":2,"
                       "\"desiredHealthy\":2,\"expectedPods\":4}");
    cJSON_Delete(st);
    /* Unknown scale: no status for a budget that needs it. */
    assert_null(disruption_status(pdb, (const cJSON *const *)pods, 3, -1, NOW));
    cJSON_Delete(pdb);
    for (size_t i = 0; i < 3; i++)
        cJSON_Delete(pods[i]);
}

static void test_eviction(void **state)
{
    struct store *s = new_store();
    cJSON *reply = NULL, *pdb;
    int code = 0;
    (void)state;

    put(s, "/core/pods/ns/a", READY_POD("a", "{\"app\":\"web\"}", ""));
    put(s, "/core/pods/ns/b", READY_POD("b", "{\"app\":\"web\"}", ""));
    put(s, "/core/pods/ns/c", READY_POD("c", "{\"app\":\"web\"}", ""));
    put(s, "/core/pods/ns/other", READY_POD("other", "{\"app\":\"db\"}", ""));
    /* No budget selects "other"; an empty selector selects nothing. */
    put(s, "/policy/poddisruptionbudgets/ns/all", PDB("all", "\"selector\":{}", ""));
    assert_int_equal(evict(s, READY_POD("other", "{\"app\":\"db\"}", ""), &reply, &code), 0);
    assert_null(reply);

    put(s, "/policy/poddisruptionbudgets/ns/web", PDB("web", "\"minAvailable\":2," SEL_WEB, ""));
    /* 3 healthy, 2 needed: one eviction is allowed and recorded. */
    assert_int_equal(evict(s, READY_POD("a", "{\"app\":\"web\"}", ""), &reply, &code), 0);
    pdb = stored(s, "/policy/poddisruptionbudgets/ns/web");
    assert_json_eq(api_get_path(pdb, "status.disruptedPods"), "{\"a\":\"2026-01-01T00:00:00Z\"}");
    assert_int_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(pdb, "status"), "disruptionsAllowed")->valueint, 0);
    cJSON_Delete(pdb);
    /* a is not deleted in this test, but it counts as disrupted: b may not go. */
    assert_int_equal(evict(s, READY_POD("b", "{\"app\":\"web\"}", ""), &reply, &code), 1);
    assert_int_equal(code, 429);
    assert_json_eq(reply,
                   "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                   "\"Failure\",\"message\":\"Cannot evict pod as it would violate the pod's "
                   "disruption budget.\",\"reason\":\"TooManyRequests\",\"details\":{\"causes\":"
                   "[{\"reason\":\"DisruptionBudget\",\"message\":\"The disruption budget web "
                   "needs 2 healthy pods and has 2 currently\"}]},\"code\":429}");
    cJSON_Delete(reply);
    /* An unready pod goes while the budget is met (IfHealthyBudget), without a decrement. */
    assert_int_equal(evict(s,
                           "{\"metadata\":{\"name\":\"x\",\"namespace\":\"ns\",\"labels\":{"
                           "\"app\":\"web\"}},\"status\":{\"phase\":\"Running\"}}",
                           &reply, &code),
                     0);
    /* Pending pods and pods being deleted skip the budget. */
    assert_int_equal(evict(s,
                           "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"labels\":{"
                           "\"app\":\"web\"}},\"status\":{\"phase\":\"Pending\"}}",
                           &reply, &code),
                     0);
    assert_int_equal(evict(s,
                           READY_POD("b", "{\"app\":\"web\"}",
                                     ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\""),
                           &reply, &code),
                     0);

    /* Two budgets over one pod. */
    put(s, "/policy/poddisruptionbudgets/ns/web2", PDB("web2", "\"minAvailable\":0," SEL_WEB, ""));
    assert_int_equal(evict(s, READY_POD("c", "{\"app\":\"web\"}", ""), &reply, &code), 1);
    assert_int_equal(code, 201);
    assert_json_eq(reply, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                          "\"Failure\",\"message\":\"This pod has more than one "
                          "PodDisruptionBudget, which the eviction subresource does not "
                          "support.\",\"code\":500}");
    cJSON_Delete(reply);
    store_close(s);
}

static void test_controllers(void **state)
{
    struct store *s = new_store();
    cJSON *reply = NULL, *pdb;
    int code = 0;
    (void)state;

#define OWNED(name, kind, owner, uid)                                                              \
    READY_POD(name, "{\"app\":\"web\"}",                                                           \
              ",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"" kind                 \
              "\",\"name\":\"" owner "\",\"uid\":\"" uid "\",\"controller\":true}]")
    put(s, "/apps/deployments/ns/web",
        "{\"metadata\":{\"name\":\"web\",\"uid\":\"d1\"},\"spec\":{\"replicas\":4}}");
    put(s, "/apps/replicasets/ns/web-1",
        "{\"metadata\":{\"name\":\"web-1\",\"uid\":\"r1\",\"ownerReferences\":[{\"apiVersion\":"
        "\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"web\",\"uid\":\"d1\",\"controller\":true}"
        "]},\"spec\":{\"replicas\":2}}");
    put(s, "/core/pods/ns/a", OWNED("a", "ReplicaSet", "web-1", "r1"));
    put(s, "/core/pods/ns/b", OWNED("b", "ReplicaSet", "web-1", "r1"));
    put(s, "/core/pods/ns/c", OWNED("c", "ReplicaSet", "web-1", "r1"));
    /* maxUnavailable 1 of the Deployment's 4: 3 needed, 3 healthy, nothing to spare. */
    put(s, "/policy/poddisruptionbudgets/ns/web", PDB("web", "\"maxUnavailable\":1," SEL_WEB, ""));
    assert_int_equal(evict(s, OWNED("a", "ReplicaSet", "web-1", "r1"), &reply, &code), 1);
    assert_int_equal(code, 429);
    cJSON_Delete(reply);
    pdb = stored(s, "/policy/poddisruptionbudgets/ns/web");
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItem(pdb, "status"), "conditions");
    assert_json_eq(cJSON_GetObjectItem(pdb, "status"),
                   "{\"observedGeneration\":1,\"disruptionsAllowed\":0,\"currentHealthy\":3,"
                   "\"desiredHealthy\":3,\"expectedPods\":4}");
    cJSON_Delete(pdb);
    /* A controller that cannot be found: the budget is "still being processed". */
    put(s, "/core/pods/ns/d", OWNED("d", "StatefulSet", "gone", "s1"));
    assert_int_equal(evict(s, OWNED("a", "ReplicaSet", "web-1", "r1"), &reply, &code), 1);
    assert_int_equal(code, 429);
    assert_json_eq(cJSON_GetObjectItem(reply, "details"),
                   "{\"causes\":[{\"reason\":\"DisruptionBudget\",\"message\":\"The disruption "
                   "budget web is still being processed by the server.\"}],"
                   "\"retryAfterSeconds\":10}");
    cJSON_Delete(reply);
    store_close(s);
}

static void test_refresh(void **state)
{
    struct store *s = new_store();
    cJSON *pdb;
    (void)state;

    put(s, "/core/pods/ns/a", READY_POD("a", "{\"app\":\"web\"}", ""));
    put(s, "/core/pods/ns/b", READY_POD("b", "{\"app\":\"web\"}", ""));
    put(s, "/core/pods/other/c", READY_POD("c", "{\"app\":\"web\"}", ""));
    pdb = J(PDB("web", "\"minAvailable\":1," SEL_WEB, ""));
    assert_int_equal(disruption_refresh(s, pdb, NOW), 0);
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItem(pdb, "status"), "conditions");
    /* Only the pods of the budget's namespace count. */
    assert_json_eq(cJSON_GetObjectItem(pdb, "status"),
                   "{\"observedGeneration\":1,\"disruptionsAllowed\":1,\"currentHealthy\":2,"
                   "\"desiredHealthy\":1,\"expectedPods\":2}");
    cJSON_Delete(pdb);
    /* An unknown expected count leaves the status as it was. */
    pdb = J(PDB("web", "\"maxUnavailable\":1," SEL_WEB, "\"expectedPods\":7"));
    put(s, "/core/pods/ns/d",
        READY_POD("d", "{\"app\":\"web\"}",
                  ",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
                  "\"name\":\"gone\",\"uid\":\"u\",\"controller\":true}]"));
    assert_int_equal(disruption_refresh(s, pdb, NOW), 0);
    assert_json_eq(cJSON_GetObjectItem(pdb, "status"), "{\"expectedPods\":7}");
    cJSON_Delete(pdb);
    store_close(s);
}

/* canIgnorePDB: Pending, Succeeded, Failed and terminating pods skip the budgets. */
static void test_exempt(void **state)
{
    static const struct {
        const char *pod;
        bool exempt;
    } cases[] = {
        {"{\"status\":{\"phase\":\"Pending\"}}", true},
        {"{\"status\":{\"phase\":\"Succeeded\"}}", true},
        {"{\"status\":{\"phase\":\"Failed\"}}", true},
        {"{\"metadata\":{\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},\"status\":{\"phase\":"
         "\"Running\"}}",
         true},
        {"{\"status\":{\"phase\":\"Running\"}}", false},
        {"{\"status\":{\"phase\":\"Unknown\"}}", false},
        {"{\"metadata\":{\"name\":\"p\"}}", false},
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        cJSON *pod = J(cases[i].pod);
        if (disruption_pod_exempt(pod) != cases[i].exempt)
            fail_msg("case %zu: exempt %d, want %d", i, !cases[i].exempt, cases[i].exempt);
        cJSON_Delete(pod);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status),      cmocka_unit_test(test_eviction),
        cmocka_unit_test(test_controllers), cmocka_unit_test(test_refresh),
        cmocka_unit_test(test_exempt),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
