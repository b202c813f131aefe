/*
 * Tests for apiserver/pods: QoS classes (pkg/apis/core/helper/qos), the status a created pod
 * starts with, KEP-3521's update rules for scheduling gates, and binding (reference
 * kubernetes-api.md 9.1-9.3), with expectations written from the reference.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "apiserver/pods.h"
#include "base/base.h"
#include "testutil.h"

#define NOW "2024-05-01T10:00:00Z"

static void test_qos(void **state)
{
    static const struct {
        const char *containers, *want;
    } rows[] = {
        {"[{\"name\":\"a\"}]", "BestEffort"},
        {"[{\"name\":\"a\",\"resources\":{}}]", "BestEffort"},
        {"[{\"name\":\"a\",\"resources\":{\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]",
         "Guaranteed"},
        {"[{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"1000m\",\"memory\":\"1Gi\"},"
         "\"limits\":{\"cpu\":\"1\",\"memory\":\"1024Mi\"}}}]",
         "Guaranteed"},
        {"[{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"500m\"},\"limits\":{\"cpu\":"
         "\"1\",\"memory\":\"1Gi\"}}}]",
         "Burstable"},
        {"[{\"name\":\"a\",\"resources\":{\"limits\":{\"cpu\":\"1\"}}}]", "Burstable"},
        {"[{\"name\":\"a\",\"resources\":{\"requests\":{\"memory\":\"1Gi\"}}}]", "Burstable"},
        {"[{\"name\":\"a\",\"resources\":{\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}},"
         "{\"name\":\"b\"}]",
         "Burstable"},
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        char buf[512];
        cJSON *pod;
        (void)snprintf(buf, sizeof(buf), "{\"spec\":{\"containers\":%s}}", rows[i].containers);
        pod = J(buf);
        if (strcmp(pods_qos_class(pod), rows[i].want))
            fail_msg("row %zu: %s, want %s", i, pods_qos_class(pod), rows[i].want);
        cJSON_Delete(pod);
    }
}

static void test_prepare_create(void **state)
{
    cJSON *pod = J("{\"spec\":{\"containers\":[{\"name\":\"a\"}],\"schedulingGates\":[{\"name\":"
                   "\"example.com/q\"}]},\"status\":{\"phase\":\"Running\"}}");
    (void)state;

    pods_prepare_create(pod, NOW);
    assert_json_eq(cJSON_GetObjectItem(pod, "status"),
                   "{\"phase\":\"Pending\",\"qosClass\":\"BestEffort\",\"conditions\":[{\"type\":"
                   "\"PodScheduled\",\"status\":\"False\",\"lastProbeTime\":null,"
                   "\"lastTransitionTime\":\"" NOW "\",\"reason\":\"SchedulingGated\","
                   "\"message\":\"Scheduling is blocked due to non-empty scheduling gates\"}]}");
    cJSON_Delete(pod);
    pod = J("{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}");
    pods_prepare_create(pod, NOW);
    assert_json_eq(cJSON_GetObjectItem(pod, "status"),
                   "{\"phase\":\"Pending\",\"qosClass\":\"BestEffort\"}");
    cJSON_Delete(pod);
}

static void test_update_rules(void **state)
{
    cJSON *old = J("{\"spec\":{\"schedulingGates\":[{\"name\":\"a/x\"},{\"name\":\"b/y\"}]}}");
    cJSON *removed = J("{\"spec\":{\"schedulingGates\":[{\"name\":\"b/y\"}]}}");
    cJSON *reordered =
        J("{\"spec\":{\"schedulingGates\":[{\"name\":\"b/y\"},{\"name\":\"a/x\"}]}}");
    cJSON *added = J("{\"spec\":{\"schedulingGates\":[{\"name\":\"a/x\"},{\"name\":\"c/z\"}]}}");
    cJSON *bound = J("{\"spec\":{\"nodeName\":\"n1\"}}");
    struct field_errors e = FIELD_ERRORS_INIT;
    (void)state;

    pods_validate_update(old, removed, &e);
    pods_validate_update(old, reordered, &e);
    assert_int_equal(e.n, 0);
    pods_validate_update(old, added, &e);
    assert_int_equal(e.n, 1);
    assert_true(renders_as(&e.v[0], "spec.schedulingGates[1].name: Forbidden: only deletion is "
                                    "allowed, but found new scheduling gate 'c/z'"));
    field_errors_release(&e);
    pods_validate_update(removed, bound, &e);
    assert_int_equal(e.n, 1);
    assert_string_equal(e.v[0].field, "spec");
    field_errors_release(&e);
    cJSON_Delete(old);
    cJSON_Delete(removed);
    cJSON_Delete(reordered);
    cJSON_Delete(added);
    cJSON_Delete(bound);
}

/* Which spec changes an update may make (ValidatePodUpdate), judged on defaulted pods. */
static void spec_change(const char *old_spec, const char *new_spec, bool allowed, int line)
{
    char a[1024], b[1024];
    struct field_errors errs = FIELD_ERRORS_INIT;
    cJSON *o, *n;

    (void)snprintf(a, sizeof(a), "{\"spec\":%s}", old_spec);
    (void)snprintf(b, sizeof(b), "{\"spec\":%s}", new_spec);
    o = J(a);
    n = J(b);
    pods_check_spec_update(o, n, &errs);
    if ((field_errors_count(&errs) == 0) != allowed)
        fail_msg("line %d: %s -> %s: %s", line, old_spec, new_spec,
                 allowed ? "refused" : "allowed");
    if (!allowed)
        assert_string_equal(errs.v[0].field, "spec");
    field_errors_release(&errs);
    cJSON_Delete(o);
    cJSON_Delete(n);
}

#define C(image, env) "{\"name\":\"c\",\"image\":\"" image "\",\"env\":[" env "]}"
#define TOL(k)        "{\"key\":\"" k "\",\"operator\":\"Exists\"}"

static void test_spec_update(void **state)
{
    (void)state;
    /* Allowed: images, activeDeadlineSeconds set or lowered, tolerations added, a negative
     * grace period set to 1, gates removed, scheduling directives while gated. */
    spec_change("{\"containers\":[" C("a", "") "]}", "{\"containers\":[" C("b", "") "]}", true,
                __LINE__);
    spec_change("{\"containers\":[]}", "{\"containers\":[],\"activeDeadlineSeconds\":30}", true,
                __LINE__);
    spec_change("{\"activeDeadlineSeconds\":30}", "{\"activeDeadlineSeconds\":10}", true, __LINE__);
    spec_change("{\"tolerations\":[" TOL("a") "]}", "{\"tolerations\":[" TOL("b") "," TOL("a") "]}",
                true, __LINE__);
    spec_change("{\"terminationGracePeriodSeconds\":-1}", "{\"terminationGracePeriodSeconds\":1}",
                true, __LINE__);
    spec_change("{\"schedulingGates\":[{\"name\":\"g\"}]}",
                "{\"nodeSelector\":{\"zone\":\"a\"},\"schedulingGates\":[{\"name\":\"g\"}]}", true,
                __LINE__);
    spec_change("{\"schedulingGates\":[{\"name\":\"g\"}]}", "{}", true, __LINE__);
    /* Refused: anything else. */
    spec_change("{\"containers\":[" C("a", "{\"name\":\"A\",\"value\":\"1\"}") "]}",
                "{\"containers\":[" C("a", "{\"name\":\"A\",\"value\":\"2\"}") "]}", false,
                __LINE__);
    spec_change("{\"activeDeadlineSeconds\":10}", "{\"activeDeadlineSeconds\":30}", false,
                __LINE__);
    spec_change("{\"activeDeadlineSeconds\":10}", "{}", false, __LINE__);
    spec_change("{\"tolerations\":[" TOL("a") "]}", "{\"tolerations\":[" TOL("b") "]}", false,
                __LINE__);
    spec_change("{\"nodeSelector\":{\"zone\":\"a\"}}", "{\"nodeSelector\":{\"zone\":\"b\"}}", false,
                __LINE__);
    spec_change("{\"containers\":[" C("a", "") "]}",
                "{\"containers\":[" C("a", "") "," C("b", "") "]}", false, __LINE__);
}

static void test_bind(void **state)
{
    struct strbuf why = STRBUF_INIT;
    cJSON *pod = J("{\"metadata\":{\"name\":\"web\",\"annotations\":{\"a\":\"1\"}},\"spec\":{},"
                   "\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\","
                   "\"reason\":\"Unschedulable\"},{\"type\":\"Ready\",\"status\":\"False\"}]}}");
    cJSON *b = J("{\"metadata\":{\"name\":\"web\",\"annotations\":{\"b\":\"2\"}},\"target\":"
                 "{\"kind\":\"Node\",\"name\":\"n7\"}}");
    cJSON *gated = J("{\"metadata\":{\"name\":\"g\"},\"spec\":{\"schedulingGates\":[{\"name\":"
                     "\"x/y\"}]}}");
    cJSON *bad = J("{\"target\":{\"kind\":\"Pod\",\"name\":\"n7\"}}");
    (void)state;

    assert_int_equal(pods_bind(pod, b, NOW, &why), 0);
    assert_json_eq(pod,
                   "{\"metadata\":{\"name\":\"web\",\"annotations\":{\"a\":\"1\",\"b\":\"2\"}},"
                   "\"spec\":{\"nodeName\":\"n7\"},\"status\":{\"conditions\":[{\"type\":"
                   "\"Ready\",\"status\":\"False\"},{\"type\":\"PodScheduled\",\"status\":"
                   "\"True\",\"lastProbeTime\":null,\"lastTransitionTime\":\"" NOW "\"}]}}");
    assert_int_equal(pods_bind(pod, b, NOW, &why), -EBUSY);
    assert_string_equal(why.buf, "pod web is already assigned to node \"n7\"");
    strbuf_reset(&why);
    assert_int_equal(pods_bind(gated, b, NOW, &why), -EBUSY);
    assert_string_equal(why.buf, "pod g has non-empty .spec.schedulingGates");
    strbuf_reset(&why);
    assert_int_equal(pods_bind(gated, bad, NOW, &why), -EINVAL);
    assert_string_equal(why.buf, "target.kind: Unsupported value: \"Pod\": supported values: "
                                 "\"Node\", \"<empty>\"");
    strbuf_release(&why);
    cJSON_Delete(pod);
    cJSON_Delete(b);
    cJSON_Delete(gated);
    cJSON_Delete(bad);
}

/* DefaultTolerationSeconds: both tolerations added to a pod with neither; a toleration of the
 * key (NoExecute or any effect) or of every key counts as tolerating it; NoSchedule does not. */
static void test_default_tolerations(void **state)
{
    struct {
        const char *tols, *want_keys;
    } cases[] = {
        {"", "node.kubernetes.io/not-ready,node.kubernetes.io/unreachable,"},
        {"\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\","
         "\"effect\":\"NoExecute\",\"tolerationSeconds\":10}]",
         "node.kubernetes.io/not-ready,node.kubernetes.io/unreachable,"},
        {"\"tolerations\":[{\"key\":\"node.kubernetes.io/unreachable\",\"operator\":\"Exists\"}]",
         "node.kubernetes.io/unreachable,node.kubernetes.io/not-ready,"},
        {"\"tolerations\":[{\"operator\":\"Exists\"}]", ","},
        {"\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\","
         "\"effect\":\"NoSchedule\"}]",
         "node.kubernetes.io/not-ready,node.kubernetes.io/not-ready,node.kubernetes.io/"
         "unreachable,"},
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct strbuf keys = STRBUF_INIT;
        char text[512];
        cJSON *pod, *t;
        (void)snprintf(text, sizeof(text), "{\"spec\":{%s}}", cases[i].tols);
        pod = J(text);
        pods_default_tolerations(pod);
        cJSON_ArrayForEach(t, cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "spec"), "tolerations"))
        {
            const char *k = cJSON_GetStringValue(cJSON_GetObjectItem(t, "key"));
            strbuf_addf(&keys, "%s,", k ? k : "");
            if (cJSON_GetObjectItem(t, "tolerationSeconds") &&
                cJSON_GetObjectItem(t, "tolerationSeconds")->valuedouble == 300) {
                assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(t, "effect")),
                                    "NoExecute");
                assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(t, "operator")),
                                    "Exists");
            }
        }
        if (strcmp(keys.buf, cases[i].want_keys))
            fail_msg("case %zu: keys %s, want %s", i, keys.buf, cases[i].want_keys);
        strbuf_release(&keys);
        cJSON_Delete(pod);
    }
}

/* podutil.UpdatePodCondition: added, replaced, the transition time moving with the status. */
static void test_update_condition(void **state)
{
    cJSON *pod = J("{\"metadata\":{\"name\":\"p\"},\"status\":{\"conditions\":[{\"type\":"
                   "\"Ready\",\"status\":\"True\"}]}}");
    const cJSON *c;
    (void)state;

    assert_true(pods_update_condition(pod, PODS_DISRUPTION_TARGET, "True", PODS_EVICTION_BY_API,
                                      PODS_EVICTION_BY_API_MSG, NOW));
    c = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "status"), "conditions"),
                           1);
    assert_json_eq(c,
                   "{\"type\":\"DisruptionTarget\",\"status\":\"True\",\"lastProbeTime\":"
                   "null,\"lastTransitionTime\":\"" NOW "\",\"reason\":\"EvictionByEvictionAPI\","
                   "\"message\":\"Eviction API: evicting\"}");
    /* The same again, later: nothing changes, the time stays. */
    assert_false(pods_update_condition(pod, PODS_DISRUPTION_TARGET, "True", PODS_EVICTION_BY_API,
                                       PODS_EVICTION_BY_API_MSG, "2024-05-01T11:00:00Z"));
    /* Same status, new reason: replaced, the time kept. */
    assert_true(pods_update_condition(pod, PODS_DISRUPTION_TARGET, "True", "Other", NULL,
                                      "2024-05-01T11:00:00Z"));
    c = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "status"), "conditions"),
                           1);
    assert_json_eq(c, "{\"type\":\"DisruptionTarget\",\"status\":\"True\",\"lastProbeTime\":"
                      "null,\"lastTransitionTime\":\"" NOW "\",\"reason\":\"Other\"}");
    /* A new status moves the time; the other condition is untouched. */
    assert_true(pods_update_condition(pod, "Ready", "False", NULL, NULL, "2024-05-01T12:00:00Z"));
    c = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "status"), "conditions"),
                           0);
    assert_json_eq(c, "{\"type\":\"Ready\",\"status\":\"False\",\"lastProbeTime\":null,"
                      "\"lastTransitionTime\":\"2024-05-01T12:00:00Z\"}");
    assert_int_equal(
        cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "status"), "conditions")),
        2);
    cJSON_Delete(pod);

    /* No status at all: one is made. */
    pod = J("{\"metadata\":{\"name\":\"p\"}}");
    assert_true(pods_update_condition(pod, "Ready", "True", NULL, NULL, NOW));
    assert_int_equal(
        cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "status"), "conditions")),
        1);
    cJSON_Delete(pod);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qos),
        cmocka_unit_test(test_prepare_create),
        cmocka_unit_test(test_update_rules),
        cmocka_unit_test(test_spec_update),
        cmocka_unit_test(test_bind),
        cmocka_unit_test(test_default_tolerations),
        cmocka_unit_test(test_update_condition),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
