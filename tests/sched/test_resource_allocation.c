/*
 * The noderesources plugins' shared part (src/sched/plugins/noderesources/resource_allocation.c):
 * which amounts a score reads for one resource (resource_allocation.go
 * calculateResourceAllocatableRequest, reference scheduler.md 5.1 and 5.2) and the args walker.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "api/field.h"
#include "base/strbuf.h"
#include "sched/framework/framework.h"
#include "sched/plugins/noderesources/resource_allocation.h"
#include "sched/schedtest.h"
#include "testutil.h"

#define NODE                                                                                       \
    "{\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":"       \
    "\"8Gi\",\"ephemeral-storage\":\"10Gi\",\"example.com/gpu\":\"4\",\"pods\":\"110\"}}}"
#define EXISTING                                                                                   \
    "{\"metadata\":{\"name\":\"e\",\"namespace\":\"d\",\"uid\":\"u-e\"},\"spec\":{\"containers\":" \
    "[{\"name\":\"c\",\"resources\":{\"requests\":{\"ephemeral-storage\":\"1Gi\","                 \
    "\"example.com/gpu\":\"1\"}}}]}}"

static struct sched_noderes_specs decode(const char *json, struct field_errors *e, bool *ok)
{
    struct sched_noderes_specs s;
    struct sched_noderes_dec d;
    cJSON *v = json ? J(json) : NULL;

    sched__noderes_dec_init(&d, "res", e);
    *ok = sched__noderes_specs_decode(&d, v, &s);
    sched__noderes_dec_release(&d);
    cJSON_Delete(v);
    return s;
}

static void test_specs_decode(void **state)
{
    struct field_errors e = FIELD_ERRORS_INIT;
    struct sched_noderes_specs s;
    bool ok;

    (void)state;
    /* Absent: cpu:1, memory:1. */
    s = decode(NULL, &e, &ok);
    assert_true(ok);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.v[0].name, "cpu");
    assert_int_equal(s.v[0].idx, SCHED_RES_CPU);
    assert_int_equal(s.v[0].weight, 1);
    assert_string_equal(s.v[1].name, "memory");
    assert_int_equal(s.v[1].idx, SCHED_RES_MEMORY);
    sched__noderes_specs_release(&s);

    s = decode("[{\"name\":\"example.com/gpu\",\"weight\":7},{\"name\":\"pods\"},"
               "{\"name\":\"ephemeral-storage\",\"weight\":0}]",
               &e, &ok);
    assert_true(ok);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.v[0].idx, sched_res_lookup("example.com/gpu"));
    assert_true(s.v[0].idx >= SCHED_RES_FIRST_SCALAR);
    assert_int_equal(s.v[0].weight, 7);
    assert_int_equal(s.v[1].idx, -1); /* never counted */
    assert_int_equal(s.v[1].weight, 1);
    assert_int_equal(s.v[2].idx, SCHED_RES_EPHEMERAL);
    assert_int_equal(s.v[2].weight, 1);
    sched__noderes_specs_release(&s);

    s = decode("[{\"name\":3,\"weight\":1.5,\"x\":1}]", &e, &ok);
    assert_false(ok);
    assert_int_equal(e.n, 3);
    assert_true(renders_as(&e.v[0], "unknown field \"res[0].x\""));
    assert_true(renders_as(&e.v[1], "res[0].name: Invalid value: 3: must be a string"));
    assert_true(renders_as(&e.v[2], "res[0].weight: Invalid value: 1.5: must be an integer"));
    sched__noderes_specs_release(&s);
    field_errors_release(&e);
}

static void test_alloc_req(void **state)
{
    struct sched_node_info *ni = NI(NODE, EXISTING, (const char *)NULL);
    struct sched_pod *be = P("{\"metadata\":{\"name\":\"b\",\"namespace\":\"d\",\"uid\":\"u-b\"},"
                             "\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
    struct sched_pod *gpu =
        P("{\"metadata\":{\"name\":\"g\",\"namespace\":\"d\",\"uid\":\"u-g\"},\"spec\":{"
          "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\","
          "\"example.com/gpu\":\"2\",\"ephemeral-storage\":\"2Gi\"}}}]}}");
    struct sched_noderes_spec cpu = {(char *)"cpu", SCHED_RES_CPU, 1};
    struct sched_noderes_spec mem = {(char *)"memory", SCHED_RES_MEMORY, 1};
    struct sched_noderes_spec eph = {(char *)"ephemeral-storage", SCHED_RES_EPHEMERAL, 1};
    struct sched_noderes_spec g = {(char *)"example.com/gpu", sched_res_lookup("example.com/gpu"),
                                   1};
    struct sched_noderes_spec pods = {(char *)"pods", -1, 1};
    struct sched_noderes_spec absent = {(char *)"example.com/none",
                                        sched_res_index("example.com/none"), 1};
    int64_t a = -1, r = -1;

    (void)state;
    /* Non-zero: the existing pod has no cpu/memory request, so it counts 100m / 200 MiB, and
     * so does the best-effort pod. */
    assert_true(sched__noderes_alloc_req(&cpu, be, ni, false, &a, &r));
    assert_int_equal(a, 4000);
    assert_int_equal(r, 200);
    assert_true(sched__noderes_alloc_req(&mem, be, ni, false, &a, &r));
    assert_int_equal(a, 8LL << 30);
    assert_int_equal(r, 2 * 209715200LL);
    /* Plain: 0 + 0. */
    assert_true(sched__noderes_alloc_req(&cpu, be, ni, true, &a, &r));
    assert_int_equal(r, 0);
    assert_true(sched__noderes_alloc_req(&mem, be, ni, true, &a, &r));
    assert_int_equal(r, 0);
    /* Ephemeral storage is plain either way: 1 Gi on the node + 0. */
    assert_true(sched__noderes_alloc_req(&eph, be, ni, false, &a, &r));
    assert_int_equal(a, 10LL << 30);
    assert_int_equal(r, 1LL << 30);
    assert_true(sched__noderes_alloc_req(&eph, gpu, ni, false, &a, &r));
    assert_int_equal(r, 3LL << 30);
    /* A scalar resource the pod does not request is skipped; requested, it sums. */
    a = r = -1;
    assert_false(sched__noderes_alloc_req(&g, be, ni, false, &a, &r));
    assert_int_equal(a, -1);
    assert_true(sched__noderes_alloc_req(&g, gpu, ni, false, &a, &r));
    assert_int_equal(a, 4);
    assert_int_equal(r, 3);
    /* Uncounted names and resources with allocatable 0 are skipped. */
    assert_false(sched__noderes_alloc_req(&pods, gpu, ni, false, &a, &r));
    assert_true(absent.idx >= SCHED_RES_FIRST_SCALAR);
    assert_false(sched__noderes_alloc_req(&absent, gpu, ni, false, &a, &r));
    sched_pod_unref(be);
    sched_pod_unref(gpu);
    sched_node_info_free(ni);

    /* A NodeInfo without a Node counts nothing. */
    ni = sched_node_info_new("ghost");
    gpu = P("{\"metadata\":{\"name\":\"g\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
    assert_false(sched__noderes_alloc_req(&cpu, gpu, ni, false, &a, &r));
    sched_pod_unref(gpu);
    sched_node_info_free(ni);
}

static void test_paths(void **state)
{
    struct field_errors e = FIELD_ERRORS_INIT;
    struct sched_noderes_dec d;
    size_t l1, l2;
    cJSON *v = J("\"x\"");

    (void)state;
    sched__noderes_dec_init(&d, NULL, &e);
    l1 = sched__noderes_dec_push(&d, "a");
    l2 = sched__noderes_dec_push_index(&d, 2);
    (void)sched__noderes_dec_push(&d, "b");
    assert_string_equal(d.path.buf, "a[2].b");
    sched__noderes_invalid(&d, v, "why");
    sched__noderes_dec_pop(&d, l2);
    assert_string_equal(d.path.buf, "a");
    sched__noderes_dec_pop(&d, l1);
    assert_string_equal(d.path.buf, "");
    sched__noderes_dec_release(&d);
    assert_true(renders_as(&e.v[0], "a[2].b: Invalid value: \"x\": why"));
    field_errors_release(&e);
    cJSON_Delete(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_specs_decode),
        cmocka_unit_test(test_alloc_req),
        cmocka_unit_test(test_paths),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
