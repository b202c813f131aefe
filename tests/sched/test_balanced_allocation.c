/*
 * NodeResourcesBalancedAllocation (src/sched/plugins/noderesources/balanced_allocation.c)
 * against reference scheduler.md 5.2: plain requests, fractions capped at 1, |f1 - f2| / 2 for
 * two resources, the population standard deviation for more, (1 - std) * 100 truncated; args
 * defaults and validation.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "api/field.h"
#include "base/strbuf.h"
#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"
#include "sched/schedtest.h"
#include "testutil.h"

#define PL sched_plugin_balanced_allocation

#define POD(req)                                                                                   \
    "{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"u-p\"},"                    \
    "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":" req "}}]}}"
#define POD_NONE                                                                                   \
    "{\"metadata\":{\"name\":\"be\",\"namespace\":\"default\",\"uid\":\"u-be\"},"                  \
    "\"spec\":{\"containers\":[{\"name\":\"c\"}]}}"
#define NODE(alloc) "{\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":" alloc "}}"

/* 4 cpu, 10000 bytes, 4 gpus. */
#define NODE_B                                                                                     \
    NODE("{\"cpu\":\"4\",\"memory\":\"10000\",\"pods\":\"110\",\"example.com/gpu\":\"4\"}")

static void *mk(const char *args)
{
    struct field_errors e = FIELD_ERRORS_INIT;
    cJSON *a = args ? J(args) : NULL;
    void *self = NULL;
    int r = PL.init(a, "args", NULL, &self, &e);

    cJSON_Delete(a);
    if (r != 0)
        fail_with_errors(&e, "init(%s) = %d", args ? args : "NULL", r);
    field_errors_release(&e);
    return self;
}

struct score_case {
    const char *name;
    const char *args;
    const char *node;
    const char *existing[2];
    const char *pod;
    int64_t want;
};

#define THREE                                                                                      \
    "{\"resources\":[{\"name\":\"cpu\",\"weight\":1},{\"name\":\"memory\",\"weight\":1},"          \
    "{\"name\":\"example.com/gpu\",\"weight\":1}]}"

static const struct score_case cases[] = {
    /* cpu (1000 + 1000) / 4000 = 0.5, memory (1500 + 1000) / 10000 = 0.25:
     * std = 0.125, (1 - 0.125) * 100 = 87.5 -> 87. */
    {"two resources",
     NULL,
     NODE_B,
     {POD("{\"cpu\":\"1\",\"memory\":\"1500\"}")},
     POD("{\"cpu\":\"1\",\"memory\":\"1000\"}"),
     87},
    /* Equal fractions: std 0 -> 100. */
    {"balanced",
     NULL,
     NODE_B,
     {POD("{\"cpu\":\"1\",\"memory\":\"2500\"}")},
     POD("{\"cpu\":\"1\",\"memory\":\"2500\"}"),
     100},
    /* Plain requests: best-effort pods count 0, not 100m / 200 MiB, so 0 and 0 -> 100. With
     * non-zero requests memory would be 2 * 200 MiB > 10000 bytes -> 1 and cpu 0.05. */
    {"plain requests", NULL, NODE_B, {POD_NONE}, POD_NONE, 100},
    /* cpu 5 / 4 capped at 1, memory 0.5: std 0.25 -> 75. */
    {"fraction capped at 1",
     NULL,
     NODE_B,
     {POD("{\"cpu\":\"3\",\"memory\":\"2000\"}")},
     POD("{\"cpu\":\"2\",\"memory\":\"3000\"}"),
     75},
    /* cpu 0.5, memory 0.25, gpu (2 + 2) / 4 = 1: mean 1.75 / 3; deviations -1/12, -1/3, 5/12;
     * squares 1/144 + 16/144 + 25/144 = 42/144, / 3 = 0.0972; std 0.3118 -> 68.8 -> 68. */
    {"three resources",
     THREE,
     NODE_B,
     {POD("{\"cpu\":\"1\",\"memory\":\"1500\",\"example.com/gpu\":\"2\"}")},
     POD("{\"cpu\":\"1\",\"memory\":\"1000\",\"example.com/gpu\":\"2\"}"),
     68},
    /* The pod does not request the gpu: it is skipped, leaving the two-resource 87. */
    {"unrequested scalar skipped",
     THREE,
     NODE_B,
     {POD("{\"cpu\":\"1\",\"memory\":\"1500\",\"example.com/gpu\":\"2\"}")},
     POD("{\"cpu\":\"1\",\"memory\":\"1000\"}"),
     87},
    /* No ephemeral-storage on the node: skipped; one fraction left, std 0 -> 100. */
    {"allocatable 0 skipped",
     "{\"resources\":[{\"name\":\"cpu\",\"weight\":1},{\"name\":\"ephemeral-storage\","
     "\"weight\":1}]}",
     NODE_B,
     {NULL},
     POD("{\"cpu\":\"1\",\"ephemeral-storage\":\"1Gi\"}"),
     100},
    /* Three resources, one at 0 allocatable: back to |f1 - f2| / 2 over cpu and memory. */
    {"three listed, two counted",
     "{\"resources\":[{\"name\":\"cpu\",\"weight\":1},{\"name\":\"ephemeral-storage\","
     "\"weight\":1},{\"name\":\"memory\",\"weight\":1}]}",
     NODE_B,
     {POD("{\"cpu\":\"1\",\"memory\":\"1500\"}")},
     POD("{\"cpu\":\"1\",\"memory\":\"1000\",\"ephemeral-storage\":\"1Gi\"}"),
     87},
    /* cpu 0.75, memory 0.1: std 0.325, (1 - 0.325) * 100 = 67.5 -> 67. */
    {"defaults explicit",
     "{\"resources\":[]}",
     NODE_B,
     {POD("{\"cpu\":\"2\"}")},
     POD("{\"cpu\":\"1\",\"memory\":\"1000\"}"),
     67},
};

static void test_score_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct score_case *tc = &cases[i];
        void *self = mk(tc->args);
        struct sched_node_info *ni =
            NI(tc->node, tc->existing[0], tc->existing[1], (const char *)NULL);
        struct sched_pod *pod = P(tc->pod);
        struct sched_status st = {0};
        int64_t got = -1;

        assert_int_equal(PL.score(self, NULL, pod, ni, &got, &st), SCHED_SUCCESS);
        if (got != tc->want)
            fail_msg("%s: score %lld, want %lld", tc->name, (long long)got, (long long)tc->want);
        /* The framework's path: score_nodes over a chunk gives each node the same. */
        struct sched_node_score v[2] = {{.ni = ni, .score = -1}, {.ni = ni, .score = -1}};
        assert_int_equal(PL.score_nodes(self, NULL, pod, v, 2, &st), SCHED_SUCCESS);
        if (v[0].score != tc->want || v[1].score != tc->want)
            fail_msg("%s: score_nodes %lld, %lld, want %lld", tc->name, (long long)v[0].score,
                     (long long)v[1].score, (long long)tc->want);
        sched_status_release(&st);
        sched_pod_unref(pod);
        sched_node_info_free(ni);
        PL.free(self);
    }
}

static void test_score_no_node(void **state)
{
    void *self = mk(NULL);
    struct sched_node_info *ni = sched_node_info_new("ghost");
    struct sched_pod *pod = P(POD("{\"cpu\":\"1\"}"));
    struct sched_status st = {0};
    int64_t got = -1;

    (void)state;
    assert_int_equal(PL.score(self, NULL, pod, ni, &got, &st), SCHED_ERROR);
    sched_status_release(&st);
    struct sched_node_score v = {.ni = ni};
    assert_int_equal(PL.score_nodes(self, NULL, pod, &v, 1, &st), SCHED_ERROR);
    sched_status_release(&st);
    sched_pod_unref(pod);
    sched_node_info_free(ni);
    PL.free(self);
}

static void test_args(void **state)
{
    static const struct {
        const char *args;
        const char *want;
    } bad[] = {
        {"{\"resources\":[{\"name\":\"cpu\",\"weight\":2}]}",
         "args.resources[0].weight: Invalid value: 2: must be 1"},
        {"{\"resources\":[{\"name\":\"cpu\"},{\"name\":\"memory\"},{\"name\":\"cpu\",\"weight\":"
         "1}]}",
         "args.resources[2].name: Duplicate value: \"cpu\""},
        {"{\"resources\":[{\"name\":\"\"}]}", "args.resources[0].name: Required value"},
        {"{\"resources\":{}}", "args.resources: Invalid value: {}: must be an array"},
        {"{\"resource\":[]}", "unknown field \"args.resource\""},
    };
    static const char *const ok[] = {
        "{}",
        ("{\"apiVersion\":\"kubescheduler.config.k8s.io/v1\",\"kind\":"
         "\"NodeResourcesBalancedAllocationArgs\",\"resources\":null}"),
        "{\"resources\":[{\"name\":\"cpu\",\"weight\":0},{\"name\":\"memory\"}]}",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cJSON *a = J(bad[i].args);

        assert_args_refused(&PL, a, bad[i].want);
        cJSON_Delete(a);
    }
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        void *self = mk(ok[i]);
        struct sched_node_info *ni =
            NI(NODE_B, POD("{\"cpu\":\"1\",\"memory\":\"1500\"}"), (const char *)NULL);
        struct sched_pod *pod = P(POD("{\"cpu\":\"1\",\"memory\":\"1000\"}"));
        struct sched_status st = {0};
        int64_t got = -1;

        /* Defaults are cpu and memory: the two-resource 87 of the table. */
        assert_int_equal(PL.score(self, NULL, pod, ni, &got, &st), SCHED_SUCCESS);
        assert_int_equal(got, 87);
        sched_pod_unref(pod);
        sched_node_info_free(ni);
        PL.free(self);
    }
    PL.free(mk(NULL));
}

static void test_events(void **state)
{
    const struct sched_event_reg *ev = PL.events;

    (void)state;
    assert_non_null(ev);
    assert_string_equal(ev[0].resource, "Pod");
    assert_int_equal(ev[0].actions, SCHED_ACT_DELETE);
    assert_string_equal(ev[1].resource, "Node");
    assert_int_equal(ev[1].actions, SCHED_ACT_ADD | SCHED_ACT_UPDATE);
    assert_null(ev[2].resource);
    assert_null(PL.filter);
    assert_string_equal(PL.name, "NodeResourcesBalancedAllocation");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_score_table),
        cmocka_unit_test(test_score_no_node),
        cmocka_unit_test(test_args),
        cmocka_unit_test(test_events),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
