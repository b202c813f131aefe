/*
 * NodeResourcesFit (src/sched/plugins/noderesources/fit.c) against reference scheduler.md 4.2,
 * 5.1 and 7: filter reasons for decoded pods (init containers, sidecars, overhead, extended and
 * batch resources, ignored resources), the three score strategies computed by hand, and the args
 * defaults and validation errors as kube-scheduler renders them.
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

#define PL sched_plugin_node_resources_fit

/* A pod with one container requesting req (a JSON object as text). */
#define POD(req)                                                                                   \
    "{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"u-p\"},"                    \
    "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":" req "}}]}}"
/* A pod with one container without requests. */
#define POD_NONE                                                                                   \
    "{\"metadata\":{\"name\":\"be\",\"namespace\":\"default\",\"uid\":\"u-be\"},"                  \
    "\"spec\":{\"containers\":[{\"name\":\"c\"}]}}"
/* Node n1 with allocatable alloc (a JSON object as text). */
#define NODE(alloc) "{\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":" alloc "}}"

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

/* ---- filter ---- */

struct filter_case {
    const char *name;
    const char *args; /* NULL: defaults */
    const char *node;
    const char *existing[3]; /* pods already on the node */
    const char *pod;
    enum sched_code code;
    const char *msg;
};

static const struct filter_case filter_cases[] = {
    {"fits",
     NULL,
     NODE("{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}"),
     {POD("{\"cpu\":\"2\",\"memory\":\"4Gi\"}")},
     POD("{\"cpu\":\"2\",\"memory\":\"4Gi\"}"),
     SCHED_SUCCESS,
     ""},
    {"insufficient cpu",
     NULL,
     NODE("{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}"),
     {POD("{\"cpu\":\"3\"}")},
     POD("{\"cpu\":\"1500m\"}"),
     SCHED_UNSCHEDULABLE,
     "Insufficient cpu"},
    {"all shortages collected in order",
     NULL,
     NODE("{\"cpu\":\"1\",\"memory\":\"1Gi\",\"ephemeral-storage\":\"1Gi\",\"pods\":\"1\"}"),
     {POD("{\"cpu\":\"500m\"}")},
     POD("{\"cpu\":\"600m\",\"memory\":\"2Gi\",\"ephemeral-storage\":\"2Gi\"}"),
     SCHED_UNSCHEDULABLE,
     "Too many pods, Insufficient cpu, Insufficient memory, Insufficient ephemeral-storage"},
    {"too many pods only, pod requests nothing",
     NULL,
     NODE("{\"cpu\":\"1\",\"pods\":\"1\"}"),
     {POD("{\"cpu\":\"2\"}")},
     POD_NONE,
     SCHED_UNSCHEDULABLE,
     "Too many pods"},
    {"pod requesting nothing fits an overcommitted node",
     NULL,
     NODE("{\"cpu\":\"1\",\"pods\":\"2\"}"),
     {POD("{\"cpu\":\"2\"}")},
     POD_NONE,
     SCHED_SUCCESS,
     ""},
    {"no pods allocatable",
     NULL,
     NODE("{\"cpu\":\"1\"}"),
     {NULL},
     POD_NONE,
     SCHED_UNSCHEDULABLE,
     "Too many pods"},
    {"cpu not checked when not requested",
     NULL,
     NODE("{\"cpu\":\"1\",\"memory\":\"1Gi\",\"pods\":\"10\"}"),
     {POD("{\"cpu\":\"2\"}")},
     POD("{\"memory\":\"512Mi\"}"),
     SCHED_SUCCESS,
     ""},
    {"exactly full fits",
     NULL,
     NODE("{\"cpu\":\"2\",\"memory\":\"2Gi\",\"pods\":\"10\"}"),
     {POD("{\"cpu\":\"1\",\"memory\":\"1Gi\"}")},
     POD("{\"cpu\":\"1\",\"memory\":\"1Gi\"}"),
     SCHED_SUCCESS,
     ""},
    {"extended resource absent from the node",
     NULL,
     NODE("{\"cpu\":\"2\",\"pods\":\"10\"}"),
     {NULL},
     POD("{\"cpu\":\"1\",\"example.com/foo\":\"1\"}"),
     SCHED_UNSCHEDULABLE,
     "Insufficient example.com/foo"},
    /* No node has ever offered it: the pod lists it as unoffered instead of interning it. */
    {"extended resource no node offers",
     NULL,
     NODE("{\"cpu\":\"2\",\"pods\":\"10\"}"),
     {NULL},
     POD("{\"cpu\":\"1\",\"example.com/offered-nowhere\":\"1\"}"),
     SCHED_UNSCHEDULABLE,
     "Insufficient example.com/offered-nowhere"},
    {"extended resource requested as 0",
     NULL,
     NODE("{\"cpu\":\"2\",\"pods\":\"10\"}"),
     {NULL},
     POD("{\"cpu\":\"1\",\"example.com/foo\":\"0\"}"),
     SCHED_SUCCESS,
     ""},
    {"extended resource with room",
     NULL,
     NODE("{\"cpu\":\"2\",\"pods\":\"10\",\"example.com/foo\":\"3\"}"),
     {POD("{\"example.com/foo\":\"1\"}")},
     POD("{\"example.com/foo\":\"2\"}"),
     SCHED_SUCCESS,
     ""},
    {"ignoredResources",
     "{\"ignoredResources\":[\"example.com/foo\"]}",
     NODE("{\"cpu\":\"2\",\"pods\":\"10\"}"),
     {NULL},
     POD("{\"cpu\":\"1\",\"example.com/foo\":\"1\",\"example.com/bar\":\"1\"}"),
     SCHED_UNSCHEDULABLE,
     "Insufficient example.com/bar"},
    {"ignoredResourceGroups",
     "{\"ignoredResourceGroups\":[\"example.com\"]}",
     NODE("{\"cpu\":\"2\",\"pods\":\"10\"}"),
     {NULL},
     POD("{\"cpu\":\"1\",\"example.com/foo\":\"1\",\"other.io/bar\":\"1\"}"),
     SCHED_UNSCHEDULABLE,
     "Insufficient other.io/bar"},
    /* kubernetes.io/ names are native, not extended (v1helper.IsExtendedResourceName): the
     * ignore lists do not apply to them. */
    {"kubernetes.io names are never ignored",
     "{\"ignoredResources\":[\"kubernetes.io/batch-cpu\"],"
     "\"ignoredResourceGroups\":[\"kubernetes.io\"]}",
     NODE("{\"cpu\":\"2\",\"pods\":\"10\"}"),
     {NULL},
     POD("{\"kubernetes.io/batch-cpu\":\"1k\"}"),
     SCHED_UNSCHEDULABLE,
     "Insufficient kubernetes.io/batch-cpu"},
    /* Koordinator batch pods: allocatable batch-cpu 4000, 3000 taken by an assigned pod. */
    {"batch cpu exhausted",
     NULL,
     NODE("{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\",\"kubernetes.io/batch-cpu\":\"4k\","
          "\"kubernetes.io/batch-memory\":\"8Gi\"}"),
     {POD("{\"kubernetes.io/batch-cpu\":\"3k\",\"kubernetes.io/batch-memory\":\"1Gi\"}")},
     POD("{\"kubernetes.io/batch-cpu\":\"2k\",\"kubernetes.io/batch-memory\":\"1Gi\"}"),
     SCHED_UNSCHEDULABLE,
     "Insufficient kubernetes.io/batch-cpu"},
    {"batch cpu with room",
     NULL,
     NODE("{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\",\"kubernetes.io/batch-cpu\":\"4k\","
          "\"kubernetes.io/batch-memory\":\"8Gi\"}"),
     {POD("{\"kubernetes.io/batch-cpu\":\"3k\",\"kubernetes.io/batch-memory\":\"1Gi\"}")},
     POD("{\"kubernetes.io/batch-cpu\":\"1k\",\"kubernetes.io/batch-memory\":\"7Gi\"}"),
     SCHED_SUCCESS,
     ""},
    {"batch cpu and memory both short",
     NULL,
     NODE("{\"cpu\":\"4\",\"pods\":\"110\",\"kubernetes.io/batch-cpu\":\"4k\","
          "\"kubernetes.io/batch-memory\":\"8Gi\"}"),
     {POD("{\"kubernetes.io/batch-cpu\":\"3k\",\"kubernetes.io/batch-memory\":\"6Gi\"}"),
      POD("{\"kubernetes.io/batch-cpu\":\"500\",\"kubernetes.io/batch-memory\":\"1Gi\"}")},
     POD("{\"kubernetes.io/batch-cpu\":\"501\",\"kubernetes.io/batch-memory\":\"2Gi\"}"),
     SCHED_UNSCHEDULABLE,
     "Insufficient kubernetes.io/batch-cpu, Insufficient kubernetes.io/batch-memory"},
    /* 4.2: max(Σ containers = 1, init max = 3) = 3 cpu > 2 free. */
    {"init container dominates",
     NULL,
     NODE("{\"cpu\":\"2\",\"memory\":\"4Gi\",\"pods\":\"10\"}"),
     {NULL},
     "{\"metadata\":{\"name\":\"i\",\"namespace\":\"default\",\"uid\":\"u-i\"},\"spec\":{"
     "\"initContainers\":[{\"name\":\"i1\",\"resources\":{\"requests\":{\"cpu\":\"3\"}}},"
     "{\"name\":\"i2\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}],"
     "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}",
     SCHED_UNSCHEDULABLE,
     "Insufficient cpu"},
    /* max(Σ containers = 1.5, init max = 1.5): 1.5 cpu, 1 Gi fits 2 cpu, 4 Gi. */
    {"init containers within the containers' sum",
     NULL,
     NODE("{\"cpu\":\"2\",\"memory\":\"4Gi\",\"pods\":\"10\"}"),
     {NULL},
     "{\"metadata\":{\"name\":\"i\",\"namespace\":\"default\",\"uid\":\"u-i\"},\"spec\":{"
     "\"initContainers\":[{\"name\":\"i1\",\"resources\":{\"requests\":{\"cpu\":\"1500m\"}}}],"
     "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":"
     "\"1Gi\"}}},{\"name\":\"d\",\"resources\":{\"requests\":{\"cpu\":\"500m\"}}}]}}",
     SCHED_SUCCESS,
     ""},
    /* Sidecar (restartPolicy Always) 1 cpu: containers 1 + sidecar 1 = 2; the later init
     * container needs 0.5 + sidecar 1 = 1.5; max 2 cpu > 1.9 free. */
    {"sidecar adds to the containers",
     NULL,
     NODE("{\"cpu\":\"1900m\",\"memory\":\"4Gi\",\"pods\":\"10\"}"),
     {NULL},
     "{\"metadata\":{\"name\":\"s\",\"namespace\":\"default\",\"uid\":\"u-s\"},\"spec\":{"
     "\"initContainers\":[{\"name\":\"side\",\"restartPolicy\":\"Always\",\"resources\":{"
     "\"requests\":{\"cpu\":\"1\"}}},{\"name\":\"i\",\"resources\":{\"requests\":{\"cpu\":"
     "\"500m\"}}}],"
     "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}",
     SCHED_UNSCHEDULABLE,
     "Insufficient cpu"},
    /* Overhead: 1 cpu + 1.5 cpu overhead = 2.5 > 2; memory 1 Gi + 1 Gi = 2 Gi fits. */
    {"overhead counts",
     NULL,
     NODE("{\"cpu\":\"2\",\"memory\":\"2Gi\",\"pods\":\"10\"}"),
     {NULL},
     "{\"metadata\":{\"name\":\"o\",\"namespace\":\"default\",\"uid\":\"u-o\"},\"spec\":{"
     "\"overhead\":{\"cpu\":\"1500m\",\"memory\":\"1Gi\"},"
     "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":"
     "\"1Gi\"}}}]}}",
     SCHED_UNSCHEDULABLE,
     "Insufficient cpu"},
    /* Overhead alone is a request: the pod does not "request nothing". */
    {"overhead only",
     NULL,
     NODE("{\"cpu\":\"1\",\"pods\":\"10\"}"),
     {NULL},
     "{\"metadata\":{\"name\":\"o\",\"namespace\":\"default\",\"uid\":\"u-o\"},\"spec\":{"
     "\"overhead\":{\"cpu\":\"2\"},\"containers\":[{\"name\":\"c\"}]}}",
     SCHED_UNSCHEDULABLE,
     "Insufficient cpu"},
};

static void run_filter_case(const struct filter_case *tc)
{
    void *self = mk(tc->args);
    struct sched_node_info *ni =
        NI(tc->node, tc->existing[0], tc->existing[1], tc->existing[2], (const char *)NULL);
    struct sched_pod *pod = P(tc->pod);
    struct sched_status st = {0};
    enum sched_code c = PL.filter(self, NULL, pod, ni, &st);

    if (c != tc->code || strcmp(MSG(&st), tc->msg))
        fail_msg("%s: got %s \"%s\", want %s \"%s\"", tc->name, sched_code_name(c), MSG(&st),
                 sched_code_name(tc->code), tc->msg);
    if (c != SCHED_SUCCESS)
        assert_int_equal(st.code, tc->code);
    sched_status_release(&st);
    sched_pod_unref(pod);
    sched_node_info_free(ni);
    PL.free(self);
}

static void test_filter_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(filter_cases) / sizeof(filter_cases[0]); i++)
        run_filter_case(&filter_cases[i]);
}

static void test_filter_no_node(void **state)
{
    void *self = mk(NULL);
    struct sched_node_info *ni = sched_node_info_new("ghost");
    struct sched_pod *pod = P(POD("{\"cpu\":\"1\"}"));
    struct sched_status st = {0};

    (void)state;
    assert_int_equal(PL.filter(self, NULL, pod, ni, &st), SCHED_UNRESOLVABLE);
    assert_string_equal(MSG(&st), "node(s) not found");
    sched_status_release(&st);
    sched_pod_unref(pod);
    sched_node_info_free(ni);
    PL.free(self);
}

/* ---- score ---- */

struct score_case {
    const char *name;
    const char *args;
    const char *node;
    const char *existing[2];
    const char *pod;
    int64_t want;
};

/* Node A: 4 cpu, 10000 bytes of memory, with a pod of 1 cpu / 2000 bytes. The new pod of
 * 500m / 3000 makes R = 1500m / 5000: cpu least (4000-1500)*100/4000 = 62 (62.5), most
 * 1500*100/4000 = 37 (37.5); memory 50 either way. */
#define NODE_A  NODE("{\"cpu\":\"4\",\"memory\":\"10000\",\"pods\":\"110\"}")
#define EXIST_A POD("{\"cpu\":\"1\",\"memory\":\"2000\"}")
#define POD_A   POD("{\"cpu\":\"500m\",\"memory\":\"3000\"}")

static const struct score_case score_cases[] = {
    /* (62 + 50) / 2 = 56 */
    {"least, defaults", NULL, NODE_A, {EXIST_A}, POD_A, 56},
    {"least, explicit",
     "{\"scoringStrategy\":{\"type\":\"LeastAllocated\"}}",
     NODE_A,
     {EXIST_A},
     POD_A,
     56},
    /* (62*3 + 50*1) / 4 = 236 / 4 = 59 */
    {"least, weighted",
     "{\"scoringStrategy\":{\"type\":\"LeastAllocated\",\"resources\":[{\"name\":\"cpu\","
     "\"weight\":3},{\"name\":\"memory\",\"weight\":1}]}}",
     NODE_A,
     {EXIST_A},
     POD_A,
     59},
    /* weight 0 defaults to 1: (62 + 50) / 2 */
    {"least, weight 0 is 1",
     "{\"scoringStrategy\":{\"type\":\"LeastAllocated\",\"resources\":[{\"name\":\"cpu\"},"
     "{\"name\":\"memory\",\"weight\":0}]}}",
     NODE_A,
     {EXIST_A},
     POD_A,
     56},
    /* (37 + 50) / 2 = 43 (43.5 truncated) */
    {"most", "{\"scoringStrategy\":{\"type\":\"MostAllocated\"}}", NODE_A, {EXIST_A}, POD_A, 43},
    /* Non-zero requests: a pod without requests counts 100m and 200 MiB. Node 1 cpu, 1 GiB,
     * empty: cpu (1000-100)*100/1000 = 90; memory (1073741824-209715200)*100/1073741824 =
     * 80.47 -> 80; (90 + 80) / 2 = 85. */
    {"least, non-zero defaults",
     NULL,
     NODE("{\"cpu\":\"1\",\"memory\":\"1Gi\",\"pods\":\"110\"}"),
     {NULL},
     POD_NONE,
     85},
    /* The node's existing best-effort pod also counts 100m / 200 MiB: cpu 800*100/1000 = 80,
     * memory (1073741824-419430400)*100/1073741824 = 60.9 -> 60; 70. */
    {"least, non-zero on the node too",
     NULL,
     NODE("{\"cpu\":\"1\",\"memory\":\"1Gi\",\"pods\":\"110\"}"),
     {POD_NONE},
     POD_NONE,
     70},
    /* Over capacity: least 0, most clamps to 100. cpu 3+2 > 4. memory 5000/10000. */
    {"least, over capacity",
     NULL,
     NODE_A,
     {POD("{\"cpu\":\"3\",\"memory\":\"2000\"}")},
     POD("{\"cpu\":\"2\",\"memory\":\"3000\"}"),
     25},
    {"most, over capacity",
     "{\"scoringStrategy\":{\"type\":\"MostAllocated\"}}",
     NODE_A,
     {POD("{\"cpu\":\"3\",\"memory\":\"2000\"}")},
     POD("{\"cpu\":\"2\",\"memory\":\"3000\"}"),
     75},
    /* A scalar resource the pod does not request is skipped: only cpu and memory count. */
    {"least, unrequested scalar skipped",
     "{\"scoringStrategy\":{\"type\":\"LeastAllocated\",\"resources\":[{\"name\":\"cpu\","
     "\"weight\":1},{\"name\":\"memory\",\"weight\":1},{\"name\":\"example.com/gpu\","
     "\"weight\":5}]}}",
     NODE("{\"cpu\":\"4\",\"memory\":\"10000\",\"pods\":\"110\",\"example.com/gpu\":\"4\"}"),
     {EXIST_A},
     POD_A,
     56},
    /* Requested: gpu R = 1 + 1 = 2 of 4 -> 50, weight 5: (62 + 50 + 250) / 7 = 51 (51.7). */
    {"least, requested scalar counts",
     "{\"scoringStrategy\":{\"type\":\"LeastAllocated\",\"resources\":[{\"name\":\"cpu\","
     "\"weight\":1},{\"name\":\"memory\",\"weight\":1},{\"name\":\"example.com/gpu\","
     "\"weight\":5}]}}",
     NODE("{\"cpu\":\"4\",\"memory\":\"10000\",\"pods\":\"110\",\"example.com/gpu\":\"4\"}"),
     {POD("{\"cpu\":\"1\",\"memory\":\"2000\",\"example.com/gpu\":\"1\"}")},
     POD("{\"cpu\":\"500m\",\"memory\":\"3000\",\"example.com/gpu\":\"1\"}"),
     51},
    /* Allocatable 0 (no ephemeral-storage on the node): skipped, not scored 0. */
    {"least, allocatable 0 skipped",
     "{\"scoringStrategy\":{\"type\":\"LeastAllocated\",\"resources\":[{\"name\":\"cpu\","
     "\"weight\":1},{\"name\":\"ephemeral-storage\",\"weight\":1}]}}",
     NODE_A,
     {EXIST_A},
     POD("{\"cpu\":\"500m\",\"memory\":\"3000\",\"ephemeral-storage\":\"1Gi\"}"),
     62},
    /* Names the scheduler does not count ("pods") score as absent. */
    {"least, uncounted name",
     "{\"scoringStrategy\":{\"type\":\"LeastAllocated\",\"resources\":[{\"name\":\"pods\","
     "\"weight\":1},{\"name\":\"memory\",\"weight\":1}]}}",
     NODE_A,
     {EXIST_A},
     POD_A,
     50},
    /* Shape (0,0) (100,10) -> (0,0) (100,100): u_cpu = 1500*100/4000 = 37 -> 37, u_mem = 50;
     * round((37 + 50) / 2 = 43.5) = 44. */
    {"rtcr, increasing",
     "{\"scoringStrategy\":{\"type\":\"RequestedToCapacityRatio\",\"requestedToCapacityRatio\":"
     "{\"shape\":[{\"utilization\":0,\"score\":0},{\"utilization\":100,\"score\":10}]}}}",
     NODE_A,
     {EXIST_A},
     POD_A,
     44},
    /* Shape (0,10) (100,0): cpu 100 - 100*37/100 = 63, memory 50; round(56.5) = 57. */
    {"rtcr, decreasing",
     "{\"scoringStrategy\":{\"type\":\"RequestedToCapacityRatio\",\"requestedToCapacityRatio\":"
     "{\"shape\":[{\"utilization\":0,\"score\":10},{\"utilization\":100,\"score\":0}]}}}",
     NODE_A,
     {EXIST_A},
     POD_A,
     57},
    /* Shape (0,0) (50,0) (100,10): cpu u = 37 scores 0 and leaves the weight sum; memory
     * u = 7500*100/10000 = 75 -> 0 + 100*(75-50)/50 = 50; score 50 (not 25). */
    {"rtcr, zero scores leave the weight sum",
     "{\"scoringStrategy\":{\"type\":\"RequestedToCapacityRatio\",\"requestedToCapacityRatio\":"
     "{\"shape\":[{\"utilization\":0,\"score\":0},{\"utilization\":50,\"score\":0},"
     "{\"utilization\":100,\"score\":10}]}}}",
     NODE_A,
     {EXIST_A},
     POD("{\"cpu\":\"500m\",\"memory\":\"5500\"}"),
     50},
    /* Every resource scores 0: no weight, score 0. */
    {"rtcr, all zero",
     "{\"scoringStrategy\":{\"type\":\"RequestedToCapacityRatio\",\"requestedToCapacityRatio\":"
     "{\"shape\":[{\"utilization\":0,\"score\":0},{\"utilization\":60,\"score\":0},"
     "{\"utilization\":100,\"score\":10}]}}}",
     NODE_A,
     {EXIST_A},
     POD_A,
     0},
    /* Shape (10,10) (40,3) -> (10,100) (40,30), cpu only, u = 12m*100/100m = 12:
     * 100 + (30-100)*(12-10)/(40-10) = 100 + (-140/30 -> -4, truncated toward 0) = 96. */
    {"rtcr, truncation toward zero",
     "{\"scoringStrategy\":{\"type\":\"RequestedToCapacityRatio\",\"resources\":[{\"name\":"
     "\"cpu\",\"weight\":1}],\"requestedToCapacityRatio\":{\"shape\":[{\"utilization\":10,"
     "\"score\":10},{\"utilization\":40,\"score\":3}]}}}",
     NODE("{\"cpu\":\"100m\",\"memory\":\"1Gi\",\"pods\":\"10\"}"),
     {NULL},
     POD("{\"cpu\":\"12m\"}"),
     96},
    /* Below the first point: its score; above the last: the last's. cpu u = 5 -> 100 (shape
     * (10,10)...), memory R > A -> f(100) = 30 (last point (40,3) scaled). Weights 1, 2:
     * round((100 + 60) / 3 = 53.3) = 53. */
    {"rtcr, outside the shape and over capacity",
     "{\"scoringStrategy\":{\"type\":\"RequestedToCapacityRatio\",\"resources\":[{\"name\":"
     "\"cpu\",\"weight\":1},{\"name\":\"memory\",\"weight\":2}],\"requestedToCapacityRatio\":{"
     "\"shape\":[{\"utilization\":10,\"score\":10},{\"utilization\":40,\"score\":3}]}}}",
     NODE("{\"cpu\":\"1\",\"memory\":\"1000\",\"pods\":\"10\"}"),
     {NULL},
     POD("{\"cpu\":\"50m\",\"memory\":\"2000\"}"),
     53},
};

static void test_score_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(score_cases) / sizeof(score_cases[0]); i++) {
        const struct score_case *tc = &score_cases[i];
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

/* Bytes beyond INT64_MAX / 100 must not overflow: 2^62 allocatable, 2^61 requested -> 50. */
static void test_score_huge_values(void **state)
{
    void *self = mk("{\"scoringStrategy\":{\"type\":\"MostAllocated\",\"resources\":[{\"name\":"
                    "\"memory\",\"weight\":1}]}}");
    struct sched_node_info *ni =
        NI(NODE("{\"memory\":\"4611686018427387904\",\"pods\":\"10\"}"), (const char *)NULL);
    struct sched_pod *pod = P(POD("{\"memory\":\"2305843009213693952\"}"));
    struct sched_status st = {0};
    int64_t got = -1;

    (void)state;
    assert_int_equal(PL.score(self, NULL, pod, ni, &got, &st), SCHED_SUCCESS);
    assert_int_equal(got, 50);
    struct sched_node_score v = {.ni = ni, .score = -1};
    assert_int_equal(PL.score_nodes(self, NULL, pod, &v, 1, &st), SCHED_SUCCESS);
    assert_int_equal(v.score, 50);
    sched_pod_unref(pod);
    sched_node_info_free(ni);
    PL.free(self);
}

/* ---- args ---- */

struct args_case {
    const char *args;
    const char *want; /* every error rendered, one a line */
};

#define RTCR_SHAPE(shape)                                                                          \
    "{\"scoringStrategy\":{\"type\":\"RequestedToCapacityRatio\",\"requestedToCapacityRatio\":{"   \
    "\"shape\":" shape "}}}"

static const struct args_case args_cases[] = {
    {"{\"scoringStrategy\":{\"type\":\"Foo\"}}",
     "args.scoringStrategy.type: Unsupported value: \"Foo\": supported values: "
     "\"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""},
    /* A strategy without a type is not defaulted (only a missing strategy is). */
    {"{\"scoringStrategy\":{\"resources\":[{\"name\":\"cpu\",\"weight\":1}]}}",
     "args.scoringStrategy.type: Unsupported value: \"\": supported values: "
     "\"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""},
    {"{\"scoringStrategy\":{\"type\":\"MostAllocated\",\"resources\":[{\"name\":\"cpu\","
     "\"weight\":101},{\"name\":\"memory\",\"weight\":-1}]}}",
     "args.scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not "
     "in valid range (0, 100]\n"
     "args.scoringStrategy.resources[1].weight: Invalid value: -1: resource weight of memory not "
     "in valid range (0, 100]"},
    {"{\"scoringStrategy\":{\"type\":\"LeastAllocated\",\"resources\":[{\"weight\":1}]}}",
     "args.scoringStrategy.resources[0].name: Required value"},
    {"{\"scoringStrategy\":{\"type\":\"RequestedToCapacityRatio\"}}",
     "args.scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type "
     "is RequestedToCapacityRatio"},
    {RTCR_SHAPE("[]"), "args.scoringStrategy.requestedToCapacityRatio.shape: Required value: at "
                       "least one point must be specified"},
    {"{\"scoringStrategy\":{\"type\":\"RequestedToCapacityRatio\",\"requestedToCapacityRatio\":{"
     "}}}",
     "args.scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one point "
     "must be specified"},
    {RTCR_SHAPE("[{\"utilization\":10,\"score\":1},{\"utilization\":50,\"score\":2},"
                "{\"utilization\":50,\"score\":3},{\"utilization\":40,\"score\":4}]"),
     "args.scoringStrategy.requestedToCapacityRatio.shape[2].utilization: Invalid value: 50: "
     "values must be sorted in increasing order"},
    {RTCR_SHAPE("[{\"utilization\":-1,\"score\":11},{\"utilization\":101,\"score\":-2}]"),
     "args.scoringStrategy.requestedToCapacityRatio.shape[0].utilization: Invalid value: -1: not "
     "in valid range [0, 100]\n"
     "args.scoringStrategy.requestedToCapacityRatio.shape[0].score: Invalid value: 11: not in "
     "valid range [0, 10]\n"
     "args.scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 101: not "
     "in valid range [0, 100]\n"
     "args.scoringStrategy.requestedToCapacityRatio.shape[1].score: Invalid value: -2: not in "
     "valid range [0, 10]"},
    {"{\"scoringStrategy\":{\"type\":\"LeastAllocated\",\"requestedToCapacityRatio\":{\"shape\":"
     "[{\"utilization\":0,\"score\":0}]}}}",
     "args.scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not "
     "RequestedToCapacityRatio"},
    {"{\"ignoredResourceGroups\":[\"example.com/x\",\"ok.io\"]}",
     "args.ignoredResourceGroups[0]: Invalid value: \"example.com/x\": resource group name can't "
     "contain '/'"},
    {"{\"ignoredResources\":[\"\"]}",
     "args.ignoredResources[0]: Invalid value: \"\": name part must be non-empty\n"
     "args.ignoredResources[0]: Invalid value: \"\": name part must consist of alphanumeric "
     "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
     "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
     "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
    {"{\"foo\":1,\"scoringStrategy\":{\"type\":\"LeastAllocated\",\"bar\":true}}",
     "unknown field \"args.foo\"\nunknown field \"args.scoringStrategy.bar\""},
    {"{\"scoringStrategy\":{\"type\":7,\"resources\":[{\"name\":\"cpu\",\"weight\":\"x\"}]}}",
     "args.scoringStrategy.type: Invalid value: 7: must be a string\n"
     "args.scoringStrategy.resources[0].weight: Invalid value: \"x\": must be an integer"},
    /* All problems are reported together. */
    {"{\"ignoredResourceGroups\":[\"a/b\"],\"scoringStrategy\":{\"type\":\"Foo\","
     "\"resources\":[{\"name\":\"cpu\",\"weight\":200}]}}",
     "args.ignoredResourceGroups[0]: Invalid value: \"a/b\": resource group name can't contain "
     "'/'\n"
     "args.scoringStrategy.type: Unsupported value: \"Foo\": supported values: "
     "\"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\"\n"
     "args.scoringStrategy.resources[0].weight: Invalid value: 200: resource weight of cpu not in "
     "valid range (0, 100]"},
};

static void test_args_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(args_cases) / sizeof(args_cases[0]); i++) {
        cJSON *a = J(args_cases[i].args);

        assert_args_refused(&PL, a, args_cases[i].want);
        cJSON_Delete(a);
    }
}

/* A qualified-name failure carries apimachinery's text. */
static void test_args_ignored_resource_name(void **state)
{
    struct field_errors e = FIELD_ERRORS_INIT;
    cJSON *a = J("{\"ignoredResources\":[\"bad name\"]}");
    void *self = NULL;

    (void)state;
    assert_int_equal(PL.init(a, "args", NULL, &self, &e), -EINVAL);
    assert_int_equal(e.n, 1);
    assert_int_equal(e.v[0].type, FIELD_INVALID);
    assert_string_equal(e.v[0].field, "args.ignoredResources[0]");
    assert_string_equal(e.v[0].value, "\"bad name\"");
    assert_non_null(strstr(e.v[0].detail, "name part must consist of alphanumeric characters"));
    field_errors_release(&e);
    cJSON_Delete(a);
}

/* Defaults: NULL, {}, null strategy, apiVersion/kind; without a base path fields have no dot. */
static void test_args_defaults(void **state)
{
    static const char *const ok[] = {
        "{}",
        "{\"apiVersion\":\"kubescheduler.config.k8s.io/v1\",\"kind\":\"NodeResourcesFitArgs\"}",
        "{\"scoringStrategy\":null}",
        "{\"scoringStrategy\":{\"type\":\"LeastAllocated\",\"resources\":[]}}",
        "{\"ignoredResources\":[\"example.com/foo\"],\"ignoredResourceGroups\":[\"example.com\"]}",
    };
    struct field_errors e = FIELD_ERRORS_INIT;
    cJSON *a;
    void *self = NULL;

    (void)state;
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        struct sched_node_info *ni = NI(NODE_A, EXIST_A, (const char *)NULL);
        struct sched_pod *pod = P(POD_A);
        struct sched_status st = {0};
        int64_t got = -1;

        self = mk(ok[i]);
        /* The default strategy: LeastAllocated over cpu:1, memory:1 (56, see the table). */
        assert_int_equal(PL.score(self, NULL, pod, ni, &got, &st), SCHED_SUCCESS);
        assert_int_equal(got, 56);
        sched_pod_unref(pod);
        sched_node_info_free(ni);
        PL.free(self);
    }
    a = J("{\"scoringStrategy\":{\"type\":\"Foo\"}}");
    self = NULL;
    assert_int_equal(PL.init(a, NULL, NULL, &self, &e), -EINVAL);
    assert_int_equal(e.n, 1);
    assert_string_equal(e.v[0].field, "scoringStrategy.type");
    assert_int_equal(e.v[0].type, FIELD_NOT_SUPPORTED);
    field_errors_release(&e);
    cJSON_Delete(a);
    a = J("[1]");
    assert_int_equal(PL.init(a, "args", NULL, &self, &e), -EINVAL);
    assert_int_equal(e.n, 1);
    assert_true(renders_as(&e.v[0], "args: Invalid value: [1]: must be an object"));
    field_errors_release(&e);
    cJSON_Delete(a);
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
    assert_string_equal(PL.name, "NodeResourcesFit");
    assert_int_equal(PL.default_weight, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter_table),  cmocka_unit_test(test_filter_no_node),
        cmocka_unit_test(test_score_table),   cmocka_unit_test(test_score_huge_values),
        cmocka_unit_test(test_args_errors),   cmocka_unit_test(test_args_ignored_resource_name),
        cmocka_unit_test(test_args_defaults), cmocka_unit_test(test_events),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
