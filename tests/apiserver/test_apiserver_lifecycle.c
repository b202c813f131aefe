/*
 * Tests for the deletion lifecycle of apiserver/apiserver over real HTTP and a real SQLite store
 * (issue 17 section 4; reference kubernetes-api.md 3.6 and 9.4): pods/eviction deleting with
 * the Eviction's deleteOptions as kube's eviction handler does (a bound pod marked Terminating
 * with the DisruptionTarget condition and removed by the lifecycle worker once its grace
 * period ends; the request's grace period, preconditions and dryRun; pods that go at once;
 * terminating and Pending pods that skip the PodDisruptionBudget), and the namespaces/finalize
 * subresource (spec.finalizers written only there, validated as kube validates them, the
 * namespace removed once its finalizers and its content are gone). Waits poll for the
 * condition with a deadline.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "apiserver/apienv.h"
#include "testutil.h"

#define NS "/api/v1/namespaces"

static long call(struct env *e, const char *method, const char *path, const char *body, cJSON **ret)
{
    return req(e, method, path, NULL, body, ret, NULL);
}

/* The object at path (caller frees); fails unless it is there. */
static cJSON *get_obj(struct env *e, const char *path)
{
    cJSON *o = NULL;

    assert_int_equal(call(e, "GET", path, NULL, &o), 200);
    return o;
}

/* Polls GET path until it answers want, for up to 20 s. */
static void wait_code(struct env *e, const char *path, long want)
{
    long code = 0;

    for (int i = 0; i < 400 && (code = call(e, "GET", path, NULL, NULL)) != want; i++)
        (void)nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    if (code != want)
        fail_msg("GET %s answers %ld, want %ld", path, code, want);
}

static double num(const cJSON *o, const char *path)
{
    const cJSON *v = at(o, path);

    if (!cJSON_IsNumber(v))
        fail_msg("%s is not a number", path);
    return v->valuedouble;
}

/* Creates pod name in default, bound to n1 unless node is NULL, with extra spec members, and
 * with status phase (NULL: as created) and Ready=True when ready. */
static void make_pod(struct env *e, const char *name, const char *labels, const char *node,
                     const char *spec, const char *phase, bool ready)
{
    char body[1024], path[128];
    cJSON *p = NULL, *st;

    (void)snprintf(body, sizeof(body),
                   "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
                   "\"labels\":%s},\"spec\":{%s%s%s%s\"containers\":[{\"name\":\"c\","
                   "\"image\":\"i\"}]}}",
                   name, labels ? labels : "{}", node ? "\"nodeName\":\"" : "", node ? node : "",
                   node ? "\"," : "", spec ? spec : "");
    assert_int_equal(call(e, "POST", NS "/default/pods", body, NULL), 201);
    if (!phase)
        return;
    (void)snprintf(path, sizeof(path), NS "/default/pods/%s", name);
    p = get_obj(e, path);
    cJSON_DeleteItemFromObject(p, "status");
    st = cJSON_AddObjectToObject(p, "status");
    cJSON_AddStringToObject(st, "phase", phase);
    if (ready)
        cJSON_AddItemToObject(st, "conditions", J("[{\"type\":\"Ready\",\"status\":\"True\"}]"));
    {
        char *txt = cJSON_PrintUnformatted(p);
        (void)snprintf(path, sizeof(path), NS "/default/pods/%s/status", name);
        assert_int_equal(call(e, "PUT", path, txt, NULL), 200);
        cJSON_free(txt);
    }
    cJSON_Delete(p);
}

/* POSTs an Eviction of pod name with the given deleteOptions (NULL: none); the HTTP code. */
static long evict(struct env *e, const char *name, const char *query, const char *opts, cJSON **ret)
{
    char body[512], path[160];

    (void)snprintf(body, sizeof(body),
                   "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":"
                   "\"%s\",\"namespace\":\"default\"}%s%s}",
                   name, opts ? ",\"deleteOptions\":" : "", opts ? opts : "");
    (void)snprintf(path, sizeof(path), NS "/default/pods/%s/eviction%s", name, query ? query : "");
    return call(e, "POST", path, body, ret);
}

/* The pod's condition of type t, or NULL. */
static const cJSON *condition(const cJSON *pod, const char *t)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, at(pod, "status.conditions"))
    {
        const char *ct = cJSON_GetStringValue(cJSON_GetObjectItem(c, "type"));
        if (ct && !strcmp(ct, t))
            return c;
    }
    return NULL;
}

/* An eviction deletes a bound pod gracefully: Terminating with its period and the
 * DisruptionTarget condition, evicted again without harm, gone once the period is over. */
static void test_evict_graceful(void **state)
{
    struct env *e = *state;
    cJSON *b = NULL;

    make_pod(e, "web", NULL, "n1", "\"terminationGracePeriodSeconds\":2,", "Running", true);
    assert_int_equal(evict(e, "web", NULL, NULL, &b), 201);
    assert_json_eq(b, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                      "\"Success\",\"code\":201}");
    cJSON_Delete(b);
    b = get_obj(e, NS "/default/pods/web");
    assert_non_null(cJSON_GetStringValue(at(b, "metadata.deletionTimestamp")));
    assert_true(num(b, "metadata.deletionGracePeriodSeconds") == 2);
    assert_non_null(condition(b, "DisruptionTarget"));
    expect_str(condition(b, "DisruptionTarget"), "status", "True");
    expect_str(condition(b, "DisruptionTarget"), "reason", "EvictionByEvictionAPI");
    expect_str(condition(b, "DisruptionTarget"), "message", "Eviction API: evicting");
    cJSON_Delete(b);
    /* A terminating pod is evicted again without a change to its deletion. */
    assert_int_equal(evict(e, "web", NULL, NULL, NULL), 201);
    b = get_obj(e, NS "/default/pods/web");
    assert_true(num(b, "metadata.deletionGracePeriodSeconds") == 2);
    cJSON_Delete(b);
    /* The lifecycle worker ends it, as the kubelet would. */
    wait_code(e, NS "/default/pods/web", 404);
}

/* The Eviction's deleteOptions: grace period, preconditions, dryRun; bad options refused. */
static void test_evict_options(void **state)
{
    struct env *e = *state;
    char opts[256], rv[32];
    cJSON *b = NULL;

    make_pod(e, "a", NULL, "n1", NULL, "Running", true);
    assert_int_equal(evict(e, "a", NULL, "{\"gracePeriodSeconds\":7}", NULL), 201);
    b = get_obj(e, NS "/default/pods/a");
    assert_true(num(b, "metadata.deletionGracePeriodSeconds") == 7);
    cJSON_Delete(b);

    /* Preconditions that do not hold: 409, nothing changed. */
    make_pod(e, "b", NULL, "n1", NULL, "Running", true);
    assert_int_equal(evict(e, "b", NULL, "{\"preconditions\":{\"uid\":\"nope\"}}", &b), 409);
    expect_str(b, "reason", "Conflict");
    cJSON_Delete(b);
    assert_int_equal(evict(e, "b", NULL, "{\"preconditions\":{\"resourceVersion\":\"1\"}}", NULL),
                     409);
    b = get_obj(e, NS "/default/pods/b");
    assert_null(at(b, "metadata.deletionTimestamp"));
    assert_null(condition(b, "DisruptionTarget"));
    (void)snprintf(opts, sizeof(opts),
                   "{\"preconditions\":{\"uid\":\"%s\",\"resourceVersion\":\"%s\"},"
                   "\"gracePeriodSeconds\":0}",
                   cJSON_GetStringValue(at(b, "metadata.uid")),
                   cJSON_GetStringValue(at(b, "metadata.resourceVersion")));
    cJSON_Delete(b);
    /* Preconditions that hold, period 0: gone at once. */
    assert_int_equal(evict(e, "b", NULL, opts, NULL), 201);
    assert_int_equal(call(e, "GET", NS "/default/pods/b", NULL, NULL), 404);

    /* dryRun in the body or the query: answered, nothing written. */
    make_pod(e, "c", NULL, "n1", NULL, "Running", true);
    b = get_obj(e, NS "/default/pods/c");
    (void)snprintf(rv, sizeof(rv), "%s", cJSON_GetStringValue(at(b, "metadata.resourceVersion")));
    cJSON_Delete(b);
    assert_int_equal(evict(e, "c", NULL, "{\"dryRun\":[\"All\"]}", NULL), 201);
    assert_int_equal(evict(e, "c", "?dryRun=All", "{\"gracePeriodSeconds\":0}", NULL), 201);
    assert_int_equal(evict(e, "c", "?dryRun=All", "{\"dryRun\":[\"All\"]}", NULL), 201);
    b = get_obj(e, NS "/default/pods/c");
    expect_str(b, "metadata.resourceVersion", rv);
    assert_null(at(b, "metadata.deletionTimestamp"));
    cJSON_Delete(b);
    /* Bad options: 422 for a dryRun value, 400 for a malformed member or a mismatch. */
    assert_int_equal(evict(e, "c", NULL, "{\"dryRun\":[\"Bogus\"]}", &b), 422);
    expect_str(b, "message",
               "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: \"Bogus\": "
               "supported values: \"All\"");
    cJSON_Delete(b);
    assert_int_equal(evict(e, "c", NULL, "{\"gracePeriodSeconds\":\"soon\"}", &b), 400);
    expect_str(b, "message",
               "Eviction in version \"v1\" cannot be handled as a Eviction: "
               "deleteOptions.gracePeriodSeconds: must be an integer");
    cJSON_Delete(b);
    assert_int_equal(evict(e, "c", NULL, "{\"dryRun\":\"All\"}", NULL), 400);
    assert_int_equal(evict(e, "c", NULL, "[]", NULL), 400);
    assert_int_equal(evict(e, "c", "?dryRun=All", "{\"dryRun\":[\"All\",\"All\"]}", NULL), 400);
    b = get_obj(e, NS "/default/pods/c");
    expect_str(b, "metadata.resourceVersion", rv);
    cJSON_Delete(b);

    /* Pods with nothing to stop go at once: unbound, or finished. */
    make_pod(e, "d", NULL, NULL, NULL, NULL, false);
    assert_int_equal(evict(e, "d", NULL, NULL, NULL), 201);
    assert_int_equal(call(e, "GET", NS "/default/pods/d", NULL, NULL), 404);
    make_pod(e, "f", NULL, "n1", NULL, "Succeeded", false);
    assert_int_equal(evict(e, "f", NULL, NULL, NULL), 201);
    assert_int_equal(call(e, "GET", NS "/default/pods/f", NULL, NULL), 404);
    assert_int_equal(evict(e, "f", NULL, NULL, &b), 404);
    expect_str(b, "message", "pods \"f\" not found");
    cJSON_Delete(b);
}

/* Under a budget: an allowed eviction decrements it and records the pod; evicting the now
 * terminating pod again takes nothing more; a Pending pod skips the budget. */
static void test_evict_budget(void **state)
{
    struct env *e = *state;
    char rv[32];
    cJSON *b = NULL;

    assert_int_equal(call(e, "POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
                          "{\"metadata\":{\"name\":\"web-pdb\"},\"spec\":{\"minAvailable\":2,"
                          "\"selector\":{\"matchLabels\":{\"app\":\"web\"}}}}",
                          NULL),
                     201);
    make_pod(e, "w1", "{\"app\":\"web\"}", "n1", NULL, "Running", true);
    make_pod(e, "w2", "{\"app\":\"web\"}", "n1", NULL, "Running", true);
    make_pod(e, "w3", "{\"app\":\"web\"}", "n1", NULL, "Running", true);
    assert_int_equal(evict(e, "w1", NULL, NULL, NULL), 201);
    b = get_obj(e, "/apis/policy/v1/namespaces/default/poddisruptionbudgets/web-pdb");
    assert_true(num(b, "status.disruptionsAllowed") == 0);
    assert_non_null(at(b, "status.disruptedPods.w1"));
    (void)snprintf(rv, sizeof(rv), "%s", cJSON_GetStringValue(at(b, "metadata.resourceVersion")));
    cJSON_Delete(b);
    b = get_obj(e, NS "/default/pods/w1");
    assert_true(num(b, "metadata.deletionGracePeriodSeconds") == 30);
    cJSON_Delete(b);

    /* w1 is terminating: evicted again without consulting (or writing) the budget. */
    assert_int_equal(evict(e, "w1", NULL, NULL, NULL), 201);
    b = get_obj(e, "/apis/policy/v1/namespaces/default/poddisruptionbudgets/web-pdb");
    expect_str(b, "metadata.resourceVersion", rv);
    cJSON_Delete(b);
    /* w2 is not: the budget has no room (w1 no longer counts as healthy). */
    assert_int_equal(evict(e, "w2", NULL, NULL, &b), 429);
    expect_str(b, "reason", "TooManyRequests");
    expect_str(b, "details.causes.0.reason", "DisruptionBudget");
    expect_str(b, "details.causes.0.message",
               "The disruption budget web-pdb needs 2 healthy pods and has 2 currently");
    cJSON_Delete(b);
    b = get_obj(e, NS "/default/pods/w2");
    assert_null(at(b, "metadata.deletionTimestamp"));
    assert_null(condition(b, "DisruptionTarget"));
    cJSON_Delete(b);
    /* Not yet running: no budget applies, and a bound pod still gets its grace period. */
    make_pod(e, "w4", "{\"app\":\"web\"}", "n1", NULL, "Pending", false);
    assert_int_equal(evict(e, "w4", NULL, NULL, NULL), 201);
    b = get_obj(e, NS "/default/pods/w4");
    assert_true(num(b, "metadata.deletionGracePeriodSeconds") == 30);
    cJSON_Delete(b);
}

/* PUT with the namespace's body (name, finalizers, extra metadata). */
static long finalize(struct env *e, const char *name, const char *fins, const char *labels,
                     cJSON **ret)
{
    char body[512], path[128];

    (void)snprintf(body, sizeof(body),
                   "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\""
                   "%s%s},\"spec\":{\"finalizers\":%s},\"status\":{\"phase\":\"Terminating\"}}",
                   name, labels ? ",\"labels\":" : "", labels ? labels : "", fins);
    (void)snprintf(path, sizeof(path), NS "/%s/finalize", name);
    return call(e, "PUT", path, body, ret);
}

/* namespaces/finalize writes spec.finalizers (only it does), validated; other verbs 405. */
static void test_finalize(void **state)
{
    struct env *e = *state;
    cJSON *b = NULL;

    assert_int_equal(call(e, "POST", NS,
                          "{\"metadata\":{\"name\":\"fin\"},\"spec\":{\"finalizers\":"
                          "[\"example.com/hold\"]}}",
                          &b),
                     201);
    assert_json_eq(at(b, "spec.finalizers"), "[\"example.com/hold\",\"kubernetes\"]");
    cJSON_Delete(b);
    /* The main resource keeps spec.finalizers. */
    assert_int_equal(call(e, "PUT", NS "/fin",
                          "{\"metadata\":{\"name\":\"fin\"},\"spec\":{\"finalizers\":[]}}", &b),
                     200);
    assert_json_eq(at(b, "spec.finalizers"), "[\"example.com/hold\",\"kubernetes\"]");
    cJSON_Delete(b);
    /* finalize takes them, and metadata; never status. */
    assert_int_equal(
        finalize(e, "fin", "[\"example.com/hold\",\"example.com/other\"]", "{\"team\":\"a\"}", &b),
        200);
    assert_json_eq(at(b, "spec.finalizers"), "[\"example.com/hold\",\"example.com/other\"]");
    expect_str(b, "metadata.labels.team", "a");
    expect_str(b, "status.phase", "Active");
    cJSON_Delete(b);
    b = get_obj(e, NS "/fin");
    assert_json_eq(at(b, "spec.finalizers"), "[\"example.com/hold\",\"example.com/other\"]");
    expect_str(b, "status.phase", "Active");
    cJSON_Delete(b);

    /* Names as kube's validateFinalizerName wants them. */
    assert_int_equal(finalize(e, "fin", "[\"kubernetes\",\"foo\"]", NULL, &b), 422);
    expect_str(b, "message",
               "Namespace \"fin\" is invalid: spec.finalizers[1]: Invalid value: \"foo\": name is "
               "neither a standard finalizer name nor is it fully qualified");
    cJSON_Delete(b);
    assert_int_equal(finalize(e, "fin", "[\"example.com/a b\"]", NULL, &b), 422);
    expect_str(b, "details.causes.0.field", "spec.finalizers[0]");
    cJSON_Delete(b);
    assert_int_equal(call(e, "POST", NS,
                          "{\"metadata\":{\"name\":\"bad\"},\"spec\":{\"finalizers\":[\"x\"]}}",
                          NULL),
                     422);
    /* Another name in the body, a namespace that does not exist, verbs finalize lacks. */
    assert_int_equal(call(e, "PUT", NS "/fin/finalize",
                          "{\"metadata\":{\"name\":\"other\"},\"spec\":{\"finalizers\":[]}}", &b),
                     400);
    cJSON_Delete(b);
    assert_int_equal(finalize(e, "none", "[]", NULL, NULL), 404);
    assert_int_equal(call(e, "GET", NS "/fin/finalize", NULL, &b), 405);
    expect_str(b, "reason", "MethodNotAllowed");
    cJSON_Delete(b);
    assert_int_equal(call(e, "POST", NS "/fin/finalize", "{}", NULL), 405);
    b = get_obj(e, NS "/fin");
    assert_json_eq(at(b, "spec.finalizers"), "[\"example.com/hold\",\"example.com/other\"]");
    cJSON_Delete(b);
}

/* Deletion with finalize: the namespace goes when its finalizers and its content are gone. */
static void test_finalize_deletion(void **state)
{
    struct env *e = *state;
    cJSON *b = NULL;

    /* "keep": a foreign spec finalizer; "held": content a finalizer holds. */
    assert_int_equal(call(e, "POST", NS,
                          "{\"metadata\":{\"name\":\"keep\"},\"spec\":{\"finalizers\":"
                          "[\"example.com/hold\"]}}",
                          NULL),
                     201);
    assert_int_equal(
        call(e, "POST", NS "/keep/configmaps", "{\"metadata\":{\"name\":\"c\"}}", NULL), 201);
    assert_int_equal(call(e, "POST", NS, "{\"metadata\":{\"name\":\"held\"}}", NULL), 201);
    assert_int_equal(call(e, "POST", NS "/held/configmaps",
                          "{\"metadata\":{\"name\":\"c\",\"finalizers\":[\"example.com/x\"]}}",
                          NULL),
                     201);
    assert_int_equal(call(e, "DELETE", NS "/keep", NULL, NULL), 200);
    assert_int_equal(call(e, "DELETE", NS "/held", NULL, NULL), 200);

    /* keep: its content goes and the worker removes `kubernetes`, not the foreign one. */
    wait_code(e, NS "/keep/configmaps/c", 404);
    for (int i = 0; i < 400; i++) {
        b = get_obj(e, NS "/keep");
        if (cJSON_GetArraySize(at(b, "spec.finalizers")) == 1)
            break;
        cJSON_Delete(b);
        b = NULL;
        (void)nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    }
    assert_non_null(b);
    assert_json_eq(at(b, "spec.finalizers"), "[\"example.com/hold\"]");
    expect_str(b, "status.phase", "Terminating");
    cJSON_Delete(b);

    /* held: finalized while content remains; it stays for the content. */
    assert_int_equal(finalize(e, "held", "[]", NULL, &b), 200);
    assert_null(at(b, "spec.finalizers")); /* omitted when empty, as kube encodes it */
    cJSON_Delete(b);
    /* keep: its last finalizer removed, it goes. The pass that removes it ran after held's
     * finalize, so held, swept by the same pass, is there because of its content. */
    assert_int_equal(finalize(e, "keep", "[]", NULL, NULL), 200);
    wait_code(e, NS "/keep", 404);
    b = get_obj(e, NS "/held");
    expect_str(b, "status.phase", "Terminating");
    cJSON_Delete(b);
    b = get_obj(e, NS "/held/configmaps/c");
    assert_non_null(at(b, "metadata.deletionTimestamp"));
    cJSON_Delete(b);
    /* The content's controller lets go: the content goes, then the namespace. */
    assert_int_equal(call(e, "PUT", NS "/held/configmaps/c",
                          "{\"metadata\":{\"name\":\"c\",\"finalizers\":[]}}", NULL),
                     200);
    wait_code(e, NS "/held", 404);
    assert_int_equal(call(e, "GET", NS "/held/configmaps/c", NULL, NULL), 404);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_evict_graceful, setup, teardown),
        cmocka_unit_test_setup_teardown(test_evict_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_evict_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_deletion, setup, teardown),
    };
    int r;

    CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == 0);
    r = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return r;
}
