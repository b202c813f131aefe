/*
 * Tests for sim/cluster's reading of a running cluster's report interval (what `koord sim
 * --kubeconfig` warns about): the interval the cluster's slo-controller-config gives its nodes,
 * with upstream's defaults where the ConfigMap or the key is absent and when colocation is
 * disabled (reference manager-behaviour.md 1.3 and section 3: the default collect policy reports
 * every 60 s; a disabled cluster strategy leaves the default policy).
 */
#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sim/cluster.h"

/* The interval of a ConfigMap whose colocation-config is colo (NULL: a ConfigMap without
 * data). */
static double interval_of(const char *colo)
{
    cJSON *cm = cJSON_CreateObject(), *data;
    double got = -1;

    assert_non_null(cm);
    if (colo) {
        assert_non_null(data = cJSON_AddObjectToObject(cm, "data"));
        assert_non_null(cJSON_AddStringToObject(data, "colocation-config", colo));
    }
    assert_int_equal(sim_cluster_report_interval(cm, &got), 0);
    cJSON_Delete(cm);
    return got;
}

static void test_defaults(void **state)
{
    double got = -1;

    (void)state;
    assert_int_equal(sim_cluster_report_interval(NULL, &got), 0);
    assert_true(got == 60);
    assert_true(interval_of(NULL) == 60);
    /* deploy/slo-controller-config.yaml: colocation on, the intervals left at their defaults */
    assert_true(interval_of("{\"enable\": true}") == 60);
}

static void test_configured(void **state)
{
    (void)state;
    assert_true(interval_of("{\"enable\": true, \"metricReportIntervalSeconds\": 2}") == 2);
    assert_true(interval_of("{\"enable\": true, \"metricReportIntervalSeconds\": 600}") == 600);
    /* colocation disabled: the default policy, whatever the key says */
    assert_true(interval_of("{\"enable\": false, \"metricReportIntervalSeconds\": 2}") == 60);
}

static void test_bad_config(void **state)
{
    (void)state;
    /* a value that does not decode keeps the last good one: here, the defaults */
    assert_true(interval_of("{\"enable\": true, \"metricReportIntervalSeconds\": \"2\"") == 60);
    assert_true(interval_of("not json") == 60);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_configured),
        cmocka_unit_test(test_bad_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
