/*
 * Tests for api/pod: the class names as labels and NodeMetric podsMetric spell them, and the
 * values classes stand for. The classification rules themselves are table-tested in
 * tests/manager/test_batch.c, whose formulas they feed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "api/pod.h"
#include "base/base.h"
#include "testutil.h"

static void test_names_round_trip(void **state)
{
    static const char *const qos[] = {"LSE", "LSR", "LS", "BE", "SYSTEM"};
    static const char *const prio[] = {"koord-prod", "koord-mid", "koord-batch", "koord-free"};
    static const int values[] = {9500, 7500, 5500, 3500};
    (void)state;

    for (size_t i = 0; i < sizeof(qos) / sizeof(qos[0]); i++)
        assert_string_equal(api_qos_name(api_qos_by_name(qos[i])), qos[i]);
    for (size_t i = 0; i < sizeof(prio) / sizeof(prio[0]); i++) {
        assert_string_equal(api_priority_name(api_priority_by_name(prio[i])), prio[i]);
        assert_int_equal(api_priority_value(api_priority_by_name(prio[i])), values[i]);
    }
    /* Exact names only: what upstream's lookups match. */
    assert_int_equal(api_qos_by_name("be"), API_QOS_NONE);
    assert_int_equal(api_qos_by_name(NULL), API_QOS_NONE);
    assert_int_equal(api_priority_by_name("prod"), API_PRIORITY_NONE);
    assert_string_equal(api_qos_name(API_QOS_NONE), "");
    assert_string_equal(api_priority_name(API_PRIORITY_NONE), "");
    assert_int_equal(api_priority_value(API_PRIORITY_NONE), 0);
}

static void test_classify(void **state)
{
    cJSON *be = J("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
    cJSON *labelled = J("{\"metadata\":{\"labels\":{\"koordinator.sh/qosClass\":\"LSE\"}},"
                        "\"spec\":{\"priority\":5100}}");
    cJSON *guaranteed = J("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":"
                          "\"500m\",\"memory\":\"1Gi\"},\"limits\":{\"cpu\":\"0.5\","
                          "\"memory\":\"1024Mi\"}}}]}}");
    (void)state;

    assert_int_equal(api_pod_qos(be), API_QOS_BE);
    assert_int_equal(api_pod_priority(be), API_PRIORITY_BATCH);
    /* The label wins for QoS; spec.priority's band wins for the priority class. */
    assert_int_equal(api_pod_qos(labelled), API_QOS_LSE);
    assert_int_equal(api_pod_priority(labelled), API_PRIORITY_BATCH);
    /* 500m == 0.5 and 1Gi == 1024Mi: requests equal limits exactly. */
    assert_int_equal(api_pod_qos(guaranteed), API_QOS_LSR);
    assert_int_equal(api_pod_priority(guaranteed), API_PRIORITY_PROD);
    assert_int_equal(api_pod_qos(NULL), API_QOS_NONE);
    cJSON_Delete(be);
    cJSON_Delete(labelled);
    cJSON_Delete(guaranteed);
}

/* The bands of koordinator's priority classes, both ends of each. */
static void test_priority_bands(void **state)
{
    static const struct {
        int64_t v;
        enum api_priority want;
    } cases[] = {
        {9999, API_PRIORITY_PROD},  {9000, API_PRIORITY_PROD},  {10000, API_PRIORITY_NONE},
        {8999, API_PRIORITY_NONE},  {7000, API_PRIORITY_MID},   {7999, API_PRIORITY_MID},
        {5000, API_PRIORITY_BATCH}, {5999, API_PRIORITY_BATCH}, {3000, API_PRIORITY_FREE},
        {3999, API_PRIORITY_FREE},  {2999, API_PRIORITY_NONE},  {-9000, API_PRIORITY_NONE},
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
        if (api_priority_of_value(cases[i].v) != cases[i].want)
            fail_msg("priority %lld", (long long)cases[i].v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_round_trip),
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_priority_bands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
