/*
 * Tests for manager/recommendation/model: the estimate (p90, margin, minimums split over the
 * containers), the memory peak per interval, proportional limits, the per-container split of
 * pod usage, target matching, and the status document. Expected values are worked out by hand
 * from VPA's constants (see test_rec_histogram.c for the bucket ends used).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/strbuf.h"
#include "manager/recommendation/model.h"

#define T0 ((int64_t)86400 * 20000)

static void test_estimate(void **state)
{
    struct rec_params p;
    struct rec_agg a;
    struct rec_cstate cs = {0};
    struct rec_estimate e;

    (void)state;
    rec_params_default(&p);
    rec_agg_init(&a, &p);
    for (int i = 1; i <= 5; i++)
        assert_true(rec_agg_add_cpu(&a, &cs, 0.5, 1.0, T0 + i));
    assert_false(rec_agg_add_cpu(&a, &cs, 0.5, 1.0, T0 + 5)); /* not after the last one */
    assert_int_equal(a.samples, 5);
    assert_true(rec_agg_add_memory(&a, &cs, 600.0 * 1048576, T0 + 1, p.mem_interval));
    rec_estimate(&a, &p, 1, &e);
    /* 0.5111346 core -> 511m -> x 1.15 = 587m; 664388475.x bytes -> x 1.15 = 764046746 */
    assert_int_equal(e.cpu_milli, 587);
    assert_int_equal(e.mem_bytes, 764046746);
    rec_agg_release(&a);

    /* tiny usage: bucket 0 ends at 0.01 core -> 10m -> 11m, under the 25m minimum; split over
     * two containers 12m (12.5 truncated) and 250 MiB / 2 */
    rec_agg_init(&a, &p);
    memset(&cs, 0, sizeof(cs));
    assert_true(rec_agg_add_cpu(&a, &cs, 0.001, 0, T0));
    rec_estimate(&a, &p, 1, &e);
    assert_int_equal(e.cpu_milli, 25);
    assert_int_equal(e.mem_bytes, 262144000);
    rec_estimate(&a, &p, 2, &e);
    assert_int_equal(e.cpu_milli, 12);
    assert_int_equal(e.mem_bytes, 131072000);
    rec_agg_release(&a);
}

static void test_memory_peaks(void **state)
{
    struct rec_params p;
    struct rec_agg a;
    struct rec_cstate cs = {0};

    (void)state;
    rec_params_default(&p);
    rec_agg_init(&a, &p);
    /* one interval: 100 MB, then 300 MB replaces it as the peak, 200 MB changes nothing */
    assert_true(rec_agg_add_memory(&a, &cs, 1e8, T0, 100));
    assert_true(rec_agg_add_memory(&a, &cs, 3e8, T0 + 10, 100));
    assert_true(rec_agg_add_memory(&a, &cs, 2e8, T0 + 20, 100));
    assert_int_equal(cs.window_end, T0 + 100);
    assert_true(fabs(a.mem.total - 1) < 0.01); /* one peak, weight 1 (x decay of 100 s) */
    assert_int_equal(a.mem.min_b, rec_hist_find_bucket(&rec_hist_memory, 3e8));
    assert_int_equal(a.mem.max_b, a.mem.min_b);
    /* the next interval: a second peak */
    assert_true(rec_agg_add_memory(&a, &cs, 1e8, T0 + 150, 100));
    assert_int_equal(cs.window_end, T0 + 200);
    assert_true(fabs(a.mem.total - 2) < 0.01);
    assert_false(rec_agg_add_memory(&a, &cs, 1e8, T0 + 140, 100)); /* older than the last */
    rec_agg_release(&a);
}

static void test_checkpoint_roundtrip(void **state)
{
    struct rec_params p;
    struct rec_agg a, b;
    struct rec_cstate cs = {0};
    struct rec_estimate e1, e2;
    struct strbuf why = STRBUF_INIT;
    cJSON *ck;

    (void)state;
    rec_params_default(&p);
    rec_agg_init(&a, &p);
    for (int i = 0; i < 10; i++) {
        assert_true(rec_agg_add_cpu(&a, &cs, 0.2 + 0.1 * i, 1, T0 + 60 * i));
        assert_true(rec_agg_add_memory(&a, &cs, 1e8 * (i + 1), T0 + 60 * i, p.mem_interval));
    }
    ck = rec_agg_save(&a, "web");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(ck, "containerName")), "web");
    rec_agg_init(&b, &p);
    assert_int_equal(rec_agg_load(&b, ck, &why), 0);
    assert_int_equal(b.samples, 10);
    assert_int_equal(b.first_sample, T0);
    assert_int_equal(b.last_sample, T0 + 540);
    rec_estimate(&a, &p, 1, &e1);
    rec_estimate(&b, &p, 1, &e2);
    assert_int_equal(e1.cpu_milli, e2.cpu_milli);
    assert_int_equal(e1.mem_bytes, e2.mem_bytes);
    cJSON_ReplaceItemInObject(ck, "firstSampleStart", cJSON_CreateString("yesterday"));
    rec_agg_release(&b);
    rec_agg_init(&b, &p);
    assert_int_equal(rec_agg_load(&b, ck, &why), -EINVAL);
    assert_non_null(strstr(why.buf, "firstSampleStart"));
    cJSON_Delete(ck);
    rec_agg_release(&a);
    rec_agg_release(&b);
    strbuf_release(&why);
}

static void test_limits_and_split(void **state)
{
    struct rec_container cs[2] = {{"a", 1000, 0, 0, 0}, {"b", 3000, 0, 0, 0}};
    double out[2];

    (void)state;
    assert_int_equal(rec_proportional_limit(2000, 1000, 587), 1174);
    assert_int_equal(rec_proportional_limit(0, 1000, 587), 0);        /* no limit */
    assert_int_equal(rec_proportional_limit(2000, 0, 587), 587);      /* no request */
    assert_int_equal(rec_proportional_limit(1000, 1000, 587), 587);   /* limit == request */
    assert_int_equal(rec_proportional_limit(3000, 2000, 1001), 1501); /* 1501.5 truncated */
    /* 2Gi / 1Gi of 764046746 bytes, through 128-bit arithmetic */
    assert_int_equal(rec_proportional_limit(2147483648, 1073741824, 764046746), 1528093492);
    rec_split(cs, 2, true, out);
    assert_true(fabs(out[0] - 0.25) < 1e-12 && fabs(out[1] - 0.75) < 1e-12);
    rec_split(cs, 2, false, out); /* no memory requests: equal */
    assert_true(fabs(out[0] - 0.5) < 1e-12 && fabs(out[1] - 0.5) < 1e-12);
}

static void test_targets(void **state)
{
    const char *pod_json =
        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"ownerReferences\":["
        "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"n\"},"
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"web-abc\","
        "\"controller\":true}]},"
        "\"spec\":{\"containers\":[{\"name\":\"web\",\"resources\":{\"requests\":{\"cpu\":"
        "\"500m\",\"memory\":\"1Gi\"},\"limits\":{\"cpu\":\"1\",\"memory\":\"2Gi\"}}},"
        "{\"name\":\"side\",\"resources\":{\"limits\":{\"cpu\":\"100m\"}}}]}}";
    cJSON *pod = cJSON_Parse(pod_json);
    struct rec_container *cs;
    const char *kind, *name;
    char g[64], v[64], pl[64];
    size_t n;

    (void)state;
    assert_true(rec_controller_of(pod, &kind, &name));
    assert_string_equal(kind, "ReplicaSet");
    assert_string_equal(name, "web-abc");
    assert_true(rec_owned_by(pod, "apps/v1", "ReplicaSet", "web-abc"));
    assert_true(rec_owned_by(pod, NULL, "ReplicaSet", "web-abc"));
    assert_false(rec_owned_by(pod, "example.com/v1", "ReplicaSet", "web-abc"));
    assert_false(rec_owned_by(pod, NULL, "Node", "n")); /* not the controller */
    n = rec_pod_containers(pod, &cs);
    assert_int_equal(n, 2);
    assert_int_equal(cs[0].cpu_req_m, 500);
    assert_int_equal(cs[0].mem_lim, 2147483648);
    assert_int_equal(cs[1].cpu_req_m, 100); /* a missing request defaults to the limit */
    free(cs);
    cJSON_Delete(pod);
    assert_true(rec_workload_resource(NULL, "Deployment", g, 64, v, 64, pl, 64));
    assert_string_equal(g, "apps");
    assert_string_equal(pl, "deployments");
    assert_true(rec_workload_resource("example.com/v2", "Foo", g, 64, v, 64, pl, 64));
    assert_string_equal(g, "example.com");
    assert_string_equal(v, "v2");
    assert_string_equal(pl, "foos");
    assert_false(rec_workload_resource(NULL, "Foo", g, 64, v, 64, pl, 64));
}

static void test_status(void **state)
{
    struct rec_result res[] = {{"web", {587, 764046746}, 1174, 0}, {"a", {25, 262144000}, 0, 0}};
    struct rec_condition cond[] = {
        {"RecommendationProvided", "True", "RecommendationComputed", "m"}};
    cJSON *s1, *s2, *c;

    (void)state;
    s1 = rec_build_status(res, 2, cond, 1, NULL, 1000);
    c = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(s1, "podStatus"), "containerStatuses"), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "containerName")), "a");
    c = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(s1, "podStatus"), "containerStatuses"), 1);
    c = cJSON_GetObjectItem(c, "resources");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "cpu")), "587m");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "memory")), "764046746");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "limits.cpu")), "1174m");
    assert_null(cJSON_GetObjectItem(c, "limits.memory"));
    /* later, same result: nothing to write; the transition time stays */
    s2 = rec_build_status(res, 2, cond, 1, s1, 2000);
    assert_false(rec_status_changed(s1, s2));
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(s2, "conditions"), 0), "lastTransitionTime")),
        "1970-01-01T00:16:40Z");
    cJSON_Delete(s2);
    res[0].req.cpu_milli = 600;
    s2 = rec_build_status(res, 2, cond, 1, s1, 2000);
    assert_true(rec_status_changed(s1, s2));
    cJSON_Delete(s2);
    cond[0].status = "False";
    s2 = rec_build_status(NULL, 0, cond, 1, s1, 3000);
    assert_true(rec_status_changed(s1, s2));
    assert_null(cJSON_GetObjectItem(s2, "podStatus"));
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(s2, "conditions"), 0), "lastTransitionTime")),
        "1970-01-01T00:50:00Z");
    cJSON_Delete(s1);
    cJSON_Delete(s2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_estimate),
        cmocka_unit_test(test_memory_peaks),
        cmocka_unit_test(test_checkpoint_roundtrip),
        cmocka_unit_test(test_limits_and_split),
        cmocka_unit_test(test_targets),
        cmocka_unit_test(test_status),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
