/*
 * Tests for manager/noderesource/batch: the batch-resource calculation, node-status preparation
 * and diff rule of reference/manager-behaviour.md 4.2-4.4. Expected values are worked out by hand
 * from those sections (the 4.4 worked example first, then one rule at a time against the same
 * node) and written as the arithmetic that produces them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/rfc3339.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "manager/noderesource/batch.h"
#include "slo/slo.h"
#include "testutil.h"

/* ---- the worked example of 4.4 and helpers around it ---- */

#define GI ((int64_t)1 << 30)

/* 32 cpu / 128Gi capacity, 60 % / 65 % reclaim: margins 12800m and int(128Gi x 0.35). */
#define CAP_MEM    (128 * GI)
#define MARGIN_CPU 12800
#define MARGIN_MEM INT64_C(48103633715)

/* Every NodeMetric here reports at T0 (unless a test says otherwise); calculations run a minute
 * later. */
#define T0_STR "2024-03-05T08:00:00Z"

static int64_t t0_ms(void)
{
    int64_t sec;
    int32_t nsec;

    assert_int_equal(rfc3339_parse(T0_STR, &sec, &nsec), 0);
    return sec * 1000;
}

#define NOW_MS (t0_ms() + 60000)

/* printf into JSON text, parsed; fails the test on bad JSON. */
static cJSON *Jf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static cJSON *Jf(const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    cJSON *v;

    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    v = J(sb.buf);
    strbuf_release(&sb);
    return v;
}

/* A Node with the given capacity and allocatable cpu/memory and annotations object text. */
static cJSON *mk_node(const char *cap_cpu, const char *cap_mem, const char *alloc_cpu,
                      const char *alloc_mem, const char *annotations)
{
    return Jf("{\"metadata\":{\"name\":\"node-1\",\"annotations\":%s},"
              "\"status\":{\"capacity\":{\"cpu\":\"%s\",\"memory\":\"%s\",\"pods\":\"110\"},"
              "\"allocatable\":{\"cpu\":\"%s\",\"memory\":\"%s\",\"pods\":\"110\"},"
              "\"phase\":\"Running\"}}",
              annotations ? annotations : "{}", cap_cpu, cap_mem, alloc_cpu, alloc_mem);
}

/* The worked example's node: 32 / 128Gi capacity, 31 / 124Gi allocatable. */
static cJSON *example_node(const char *annotations)
{
    return mk_node("32", "128Gi", "31", "124Gi", annotations);
}

/* A pod in namespace default with one container requesting cpu and memory (NULL: none). */
static cJSON *mk_pod(const char *name, const char *phase, const char *labels, const char *cpu,
                     const char *mem)
{
    struct strbuf req = STRBUF_INIT;
    cJSON *p;

    if (cpu)
        strbuf_addf(&req, "\"cpu\":\"%s\"", cpu);
    if (mem)
        strbuf_addf(&req, "%s\"memory\":\"%s\"", cpu ? "," : "", mem);
    p = Jf("{\"metadata\":{\"namespace\":\"default\",\"name\":\"%s\",\"labels\":%s},"
           "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{%s}}}]},"
           "\"status\":{\"phase\":\"%s\"}}",
           name, labels ? labels : "{}", req.buf, phase);
    strbuf_release(&req);
    return p;
}

/* One podsMetric entry (namespace default) as JSON text. */
#define PM(name, prio, cpu, mem)                                                                   \
    "{\"namespace\":\"default\",\"name\":\"" name "\",\"priority\":\"" prio "\",\"qos\":\"LS\","   \
    "\"podUsage\":{\"resources\":{\"cpu\":\"" cpu "\",\"memory\":\"" mem "\"}}}"

/* One hostApplicationMetric entry as JSON text. */
#define HA(name, prio, cpu, mem)                                                                   \
    "{\"name\":\"" name "\",\"priority\":\"" prio "\","                                            \
    "\"usage\":{\"resources\":{\"cpu\":\"" cpu "\",\"memory\":\"" mem "\"}}}"

/* A NodeMetric updated at update (NULL: no updateTime) with system usage 1500m / 6Gi. */
static cJSON *mk_nm(const char *update, const char *pods_metric, const char *host_apps)
{
    struct strbuf t = STRBUF_INIT;
    cJSON *nm;

    if (update)
        strbuf_addf(&t, "\"updateTime\":\"%s\",", update);
    nm = Jf("{\"apiVersion\":\"metrics.koordinator.sh/v1alpha1\",\"kind\":\"NodeMetric\","
            "\"metadata\":{\"name\":\"node-1\"},\"status\":{%s"
            "\"nodeMetric\":{\"nodeUsage\":{\"resources\":{\"cpu\":\"12\",\"memory\":\"40Gi\"}},"
            "\"systemUsage\":{\"resources\":{\"cpu\":\"1500m\",\"memory\":\"6Gi\"}}},"
            "\"podsMetric\":[%s],\"hostApplicationMetric\":[%s]}}",
            t.buf, pods_metric ? pods_metric : "", host_apps ? host_apps : "");
    strbuf_release(&t);
    return nm;
}

/* The default colocation strategy with enable true, with the fields of overrides (object text)
 * replacing or adding to it. */
static cJSON *mk_strategy(const char *overrides)
{
    cJSON *s = J("{\"enable\":true,\"metricAggregateDurationSeconds\":300,"
                 "\"metricReportIntervalSeconds\":60,\"cpuReclaimThresholdPercent\":60,"
                 "\"cpuCalculatePolicy\":\"usage\",\"memoryReclaimThresholdPercent\":65,"
                 "\"memoryCalculatePolicy\":\"usage\",\"degradeTimeMinutes\":15,"
                 "\"updateTimeThresholdSeconds\":300,\"resourceDiffThreshold\":0.1}");
    cJSON *o = J(overrides ? overrides : "{}"), *f;

    while ((f = o->child)) {
        cJSON *old;

        cJSON_DetachItemViaPointer(o, f);
        old = cJSON_GetObjectItemCaseSensitive(s, f->string);

        if (old)
            cJSON_ReplaceItemViaPointer(s, old, f);
        else
            cJSON_AddItemToObject(s, f->string, f);
    }
    cJSON_Delete(o);
    return s;
}

/* Inputs of one calculation; freed by in_release(). */
struct in {
    cJSON *node;
    cJSON *nm;
    cJSON *strategy;
    cJSON *pods[16];
    size_t npods;
    bool cluster_disabled;
    int64_t now_ms;
    int64_t not_before_ms;
};

static void in_release(struct in *in)
{
    cJSON_Delete(in->node);
    cJSON_Delete(in->nm);
    cJSON_Delete(in->strategy);
    for (size_t i = 0; i < in->npods; i++)
        cJSON_Delete(in->pods[i]);
}

static void add_pod(struct in *in, cJSON *pod)
{
    assert_true(in->npods < ARRAY_SIZE(in->pods));
    in->pods[in->npods++] = pod;
}

static struct noderesource_batch calc(const struct in *in)
{
    struct noderesource_batch_input bi = {
        .node = in->node,
        .pods = (const cJSON *const *)in->pods,
        .npods = in->npods,
        .nodemetric = in->nm,
        .strategy = in->strategy,
        .cluster_enable = !in->cluster_disabled,
        .now_ms = in->now_ms ? in->now_ms : NOW_MS,
        .not_before_ms = in->not_before_ms,
    };
    struct noderesource_batch out;

    memset(&out, 0xa5, sizeof(out));
    assert_int_equal(noderesource_batch_calculate(&bi, &out), 0);
    return out;
}

/* The worked example: HP pod a (8 / 16Gi, using 2 / 10Gi), HP pod b (4 / 8Gi, no metric). */
static void example(struct in *in, const char *strategy_overrides)
{
    memset(in, 0, sizeof(*in));
    in->node = example_node(NULL);
    in->nm = mk_nm(T0_STR, PM("a", "koord-prod", "2", "10Gi"), NULL);
    in->strategy = mk_strategy(strategy_overrides);
    add_pod(in, mk_pod("a", "Running", NULL, "8", "16Gi"));
    add_pod(in, mk_pod("b", "Running", NULL, "4", "8Gi"));
}

static void expect_set_at(struct noderesource_batch r, int64_t cpu, int64_t mem, int line)
{
    if (r.action != NODERESOURCE_BATCH_SET)
        fail_msg("line %d: action %d (%s), want SET", line, (int)r.action,
                 r.message ? r.message : "");
    if (r.cpu_milli != cpu || r.memory_bytes != mem)
        fail_msg("line %d: got cpu %lld memory %lld, want cpu %lld memory %lld", line,
                 (long long)r.cpu_milli, (long long)r.memory_bytes, (long long)cpu, (long long)mem);
    assert_null(r.message);
}
#define expect_set(r, cpu, mem) expect_set_at((r), (cpu), (mem), __LINE__)

static void expect_action_at(struct noderesource_batch r, enum noderesource_batch_action a,
                             const char *msg, int line)
{
    if (r.action != a)
        fail_msg("line %d: action %d, want %d", line, (int)r.action, (int)a);
    if (!r.message || strcmp(r.message, msg))
        fail_msg("line %d: message \"%s\", want \"%s\"", line, r.message ? r.message : "(null)",
                 msg);
    assert_int_equal(r.cpu_milli, 0);
    assert_int_equal(r.memory_bytes, 0);
}
#define expect_action(r, a, msg) expect_action_at((r), (a), (msg), __LINE__)

/* Batch resources of the example node with no pods and no pod metrics. */
#define BASE_CPU (32000 - MARGIN_CPU - 1500)
#define BASE_MEM (CAP_MEM - MARGIN_MEM - 6 * GI)

/* ---- 4.4: formulas and policies ---- */

static void test_worked_example(void **state)
{
    struct in in;

    (void)state;
    example(&in, NULL);
    expect_set(calc(&in), 11700, INT64_C(63565515981));
    /* Spelled out: Cap - Margin - SysUsed' - HPUsed with HPUsed = 2 + 4 cpu, 10Gi + 8Gi. */
    expect_set(calc(&in), 32000 - 12800 - 1500 - 6000,
               INT64_C(137438953472) - INT64_C(48103633715) - INT64_C(6442450944) -
                   INT64_C(19327352832));
    in_release(&in);
}

static void test_policies(void **state)
{
    struct in in;

    (void)state;
    /* memory "request": Cap - Margin - Reserved(1 / 4Gi kubelet) - HPReq(12 / 24Gi). */
    example(&in, "{\"memoryCalculatePolicy\":\"request\"}");
    expect_set(calc(&in), 11700, INT64_C(59270548685));
    in_release(&in);

    /* cpu "maxUsageRequest": HPMaxUR.cpu = max(8, 2) = 8 (b has no metric: nothing). */
    example(&in, "{\"cpuCalculatePolicy\":\"maxUsageRequest\"}");
    expect_set(calc(&in), 9700, INT64_C(63565515981));
    in_release(&in);

    /* memory "maxUsageRequest": HPMaxUR.memory = max(16Gi, 10Gi) = 16Gi. */
    example(&in, "{\"memoryCalculatePolicy\":\"maxUsageRequest\"}");
    expect_set(calc(&in), 11700, BASE_MEM - 16 * GI);
    in_release(&in);

    /* cpu has no "request" policy: it acts as usage; unknown strings act as usage too. */
    example(&in, "{\"cpuCalculatePolicy\":\"request\",\"memoryCalculatePolicy\":\"bogus\"}");
    expect_set(calc(&in), 11700, INT64_C(63565515981));
    in_release(&in);

    /* Both maxUsageRequest. */
    example(&in, "{\"cpuCalculatePolicy\":\"maxUsageRequest\",\"memoryCalculatePolicy\":"
                 "\"maxUsageRequest\"}");
    expect_set(calc(&in), 9700, BASE_MEM - 16 * GI);
    in_release(&in);

    /* Other reclaim percents change the margins: int(32000 x 0.5), int(128Gi x 0.5). */
    example(&in, "{\"cpuReclaimThresholdPercent\":50,\"memoryReclaimThresholdPercent\":50}");
    expect_set(calc(&in), 32000 - 16000 - 1500 - 6000, CAP_MEM - 64 * GI - 6 * GI - 18 * GI);
    in_release(&in);

    /* int() truncates: 65 % reclaim of 1000001 bytes leaves a margin of int(350000.35). */
    memset(&in, 0, sizeof(in));
    in.node = mk_node("1", "1000001", "1", "1000001", NULL);
    in.nm = J("{\"status\":{\"updateTime\":\"" T0_STR "\",\"nodeMetric\":{}}}");
    in.strategy = mk_strategy(NULL);
    expect_set(calc(&in), 1000 - 400, 1000001 - 350000);
    in_release(&in);
}

static void test_lse_pod(void **state)
{
    struct in in;

    (void)state;
    /* LSE: HPUsed takes the request's cpu (8) and the metric's memory (10Gi). */
    memset(&in, 0, sizeof(in));
    in.node = example_node(NULL);
    in.nm = mk_nm(T0_STR, PM("a", "koord-prod", "2", "10Gi"), NULL);
    in.strategy = mk_strategy(NULL);
    add_pod(&in, mk_pod("a", "Running", "{\"koordinator.sh/qosClass\":\"LSE\"}", "8", "16Gi"));
    expect_set(calc(&in), BASE_CPU - 8000, BASE_MEM - 10 * GI);
    in_release(&in);

    /* HPMaxUR is still max(request, usage) for LSE. */
    memset(&in, 0, sizeof(in));
    in.node = example_node(NULL);
    in.nm = mk_nm(T0_STR, PM("a", "koord-prod", "2", "20Gi"), NULL);
    in.strategy = mk_strategy("{\"cpuCalculatePolicy\":\"maxUsageRequest\","
                              "\"memoryCalculatePolicy\":\"maxUsageRequest\"}");
    add_pod(&in, mk_pod("a", "Running", "{\"koordinator.sh/qosClass\":\"LSE\"}", "8", "16Gi"));
    expect_set(calc(&in), BASE_CPU - 8000, BASE_MEM - 20 * GI);
    in_release(&in);

    /* The same pod as LSR uses its metric for both. */
    memset(&in, 0, sizeof(in));
    in.node = example_node(NULL);
    in.nm = mk_nm(T0_STR, PM("a", "koord-prod", "2", "10Gi"), NULL);
    in.strategy = mk_strategy(NULL);
    add_pod(&in, mk_pod("a", "Running", "{\"koordinator.sh/qosClass\":\"LSR\"}", "8", "16Gi"));
    expect_set(calc(&in), BASE_CPU - 2000, BASE_MEM - 10 * GI);
    in_release(&in);
}

static void test_pod_without_metric(void **state)
{
    struct in in;

    (void)state;
    /* A pod without metric: HPUsed += request; HPMaxUR gets nothing (quirk kept). */
    memset(&in, 0, sizeof(in));
    in.node = example_node(NULL);
    in.nm = mk_nm(T0_STR, NULL, NULL);
    in.strategy = mk_strategy(NULL);
    add_pod(&in, mk_pod("b", "Running", NULL, "4", "8Gi"));
    expect_set(calc(&in), BASE_CPU - 4000, BASE_MEM - 8 * GI);
    cJSON_Delete(in.strategy);
    in.strategy = mk_strategy("{\"cpuCalculatePolicy\":\"maxUsageRequest\","
                              "\"memoryCalculatePolicy\":\"maxUsageRequest\"}");
    expect_set(calc(&in), BASE_CPU, BASE_MEM);
    /* ... and HPReq gets the request. */
    cJSON_Delete(in.strategy);
    in.strategy = mk_strategy("{\"memoryCalculatePolicy\":\"request\"}");
    expect_set(calc(&in), BASE_CPU - 4000, CAP_MEM - MARGIN_MEM - 4 * GI - 8 * GI);
    in_release(&in);
}

static void test_dangling_metrics(void **state)
{
    struct in in;

    (void)state;
    memset(&in, 0, sizeof(in));
    in.node = example_node(NULL);
    in.nm = mk_nm(T0_STR,
                  /* no such pod: batch and free skipped, prod, mid and "" counted */
                  PM("gone-batch", "koord-batch", "1", "1Gi") "," PM(
                      "gone-free", "koord-free", "1",
                      "1Gi") "," PM("gone-prod", "koord-prod", "100m",
                                    "1Gi") "," PM("gone-mid", "koord-mid", "200m",
                                                  "2Gi") "," PM("gone-none", "", "300m", "3Gi") ","
                  /* a Succeeded pod's metric is dangling too */
                  PM("done", "koord-prod", "400m", "4Gi") ","
                  /* an LP pod's metric is matched, so never counted */
                  PM("lp", "koord-prod", "5", "5Gi") ","
                  /* a repeated key: the last entry is the one that counts */
                  PM("dup", "koord-prod", "7", "7Gi") "," PM("dup", "koord-batch", "8", "8Gi"),
                  NULL);
    in.strategy = mk_strategy(NULL);
    add_pod(&in, mk_pod("done", "Succeeded", NULL, "16", "64Gi"));
    add_pod(&in, mk_pod("lp", "Running", "{\"koordinator.sh/priority-class\":\"koord-batch\"}",
                        "16", "64Gi"));
    expect_set(calc(&in), BASE_CPU - 100 - 200 - 300 - 400, BASE_MEM - (1 + 2 + 3 + 4) * GI);

    /* Dangling usage goes into HPMaxUR as well. */
    cJSON_Delete(in.strategy);
    in.strategy = mk_strategy("{\"cpuCalculatePolicy\":\"maxUsageRequest\","
                              "\"memoryCalculatePolicy\":\"maxUsageRequest\"}");
    expect_set(calc(&in), BASE_CPU - 1000, BASE_MEM - 10 * GI);
    in_release(&in);

    /* The other order of the repeated key: the prod entry (last) counts. */
    memset(&in, 0, sizeof(in));
    in.node = example_node(NULL);
    in.nm = mk_nm(
        T0_STR, PM("dup", "koord-batch", "8", "8Gi") "," PM("dup", "koord-prod", "7", "7Gi"), NULL);
    in.strategy = mk_strategy(NULL);
    expect_set(calc(&in), BASE_CPU - 7000, BASE_MEM - 7 * GI);
    in_release(&in);

    /* Matching is by namespace and name: a pod in another namespace leaves the metric dangling. */
    memset(&in, 0, sizeof(in));
    in.node = example_node(NULL);
    in.nm = mk_nm(T0_STR, PM("a", "koord-prod", "1", "1Gi"), NULL);
    in.strategy = mk_strategy(NULL);
    add_pod(&in, Jf("{\"metadata\":{\"namespace\":\"other\",\"name\":\"a\"},\"spec\":{"
                    "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"2\",\"memory\":"
                    "\"2Gi\"}}}]},\"status\":{\"phase\":\"Running\"}}"));
    expect_set(calc(&in), BASE_CPU - 1000 - 2000, BASE_MEM - 1 * GI - 2 * GI);
    in_release(&in);
}

static void test_lp_pods_skipped(void **state)
{
    static const char *const lp_labels[] = {
        "{\"koordinator.sh/priority-class\":\"koord-batch\"}",
        "{\"koordinator.sh/priority-class\":\"koord-free\"}",
        "{\"koordinator.sh/qosClass\":\"BE\"}",
    };
    struct in in;

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(lp_labels); i++) {
        memset(&in, 0, sizeof(in));
        in.node = example_node(NULL);
        in.nm = mk_nm(T0_STR, PM("x", "koord-prod", "3", "3Gi"), NULL);
        in.strategy = mk_strategy("{\"memoryCalculatePolicy\":\"request\"}");
        add_pod(&in, mk_pod("x", "Running", lp_labels[i], "8", "16Gi"));
        expect_set(calc(&in), BASE_CPU, CAP_MEM - MARGIN_MEM - 4 * GI);
        in_release(&in);
    }
    /* spec.priority in the batch and free bands. */
    for (int i = 0; i < 2; i++) {
        memset(&in, 0, sizeof(in));
        in.node = example_node(NULL);
        in.nm = mk_nm(T0_STR, NULL, NULL);
        in.strategy = mk_strategy(NULL);
        add_pod(&in, Jf("{\"metadata\":{\"namespace\":\"default\",\"name\":\"p\"},\"spec\":{"
                        "\"priority\":%d,\"containers\":[{\"resources\":{\"requests\":{\"cpu\":"
                        "\"8\"}}}]},\"status\":{\"phase\":\"Running\"}}",
                        i ? 3999 : 5000));
        expect_set(calc(&in), BASE_CPU, BASE_MEM);
        in_release(&in);
    }
    /* A mid pod is HP. */
    memset(&in, 0, sizeof(in));
    in.node = example_node(NULL);
    in.nm = mk_nm(T0_STR, NULL, NULL);
    in.strategy = mk_strategy(NULL);
    add_pod(&in, mk_pod("m", "Running", "{\"koordinator.sh/priority-class\":\"koord-mid\"}", "1",
                        "1Gi"));
    expect_set(calc(&in), BASE_CPU - 1000, BASE_MEM - GI);
    in_release(&in);
}

static void test_phases(void **state)
{
    static const struct {
        const char *phase;
        bool counts;
    } cases[] = {
        {"Running", true}, {"Pending", true},  {"Succeeded", false},
        {"Failed", false}, {"Unknown", false}, {"", false},
    };
    struct in in;

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        memset(&in, 0, sizeof(in));
        in.node = example_node(NULL);
        in.nm = mk_nm(T0_STR, NULL, NULL);
        in.strategy = mk_strategy(NULL);
        add_pod(&in, mk_pod("p", cases[i].phase, NULL, "2", "2Gi"));
        if (cases[i].counts)
            expect_set(calc(&in), BASE_CPU - 2000, BASE_MEM - 2 * GI);
        else
            expect_set(calc(&in), BASE_CPU, BASE_MEM);
        in_release(&in);
    }
    /* A terminating pod (deletionTimestamp set) still counts; a pod without status does not. */
    memset(&in, 0, sizeof(in));
    in.node = example_node(NULL);
    in.nm = mk_nm(T0_STR, NULL, NULL);
    in.strategy = mk_strategy(NULL);
    add_pod(&in, Jf("{\"metadata\":{\"namespace\":\"default\",\"name\":\"t\","
                    "\"deletionTimestamp\":\"2024-03-05T07:59:00Z\"},\"spec\":{\"containers\":[{"
                    "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},\"status\":{\"phase\":"
                    "\"Running\"}}"));
    add_pod(&in, J("{\"metadata\":{\"namespace\":\"default\",\"name\":\"s\"},\"spec\":{"
                   "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}"));
    expect_set(calc(&in), BASE_CPU - 1000, BASE_MEM);
    in_release(&in);
}

/* ---- Reserved, SysUsed ---- */

/* Batch memory by "request" for the example node without pods: Cap - Margin - Reserved. */
static struct noderesource_batch request_policy_on(cJSON *node)
{
    struct in in;
    struct noderesource_batch r;

    memset(&in, 0, sizeof(in));
    in.node = node;
    in.nm = mk_nm(T0_STR, NULL, NULL);
    in.strategy = mk_strategy("{\"memoryCalculatePolicy\":\"request\"}");
    r = calc(&in);
    in_release(&in);
    return r;
}

static void test_reservation_annotation(void **state)
{
    (void)state;
    /* Kubelet reserved alone: 1 cpu / 4Gi; below system usage for cpu, so usage keeps 1500m. */
    expect_set(request_policy_on(example_node(NULL)), BASE_CPU, CAP_MEM - MARGIN_MEM - 4 * GI);

    /* resources above kubelet reserved win: SysUsed' = max(1500m, 3) = 3 cpu, memory 10Gi. */
    expect_set(request_policy_on(example_node(
                   "{\"node.koordinator.sh/reservation\":"
                   "\"{\\\"resources\\\":{\\\"cpu\\\":\\\"3\\\",\\\"memory\\\":\\\"10Gi\\\"}}\"}")),
               32000 - MARGIN_CPU - 3000, CAP_MEM - MARGIN_MEM - 10 * GI);

    /* reservedCPUs "0-5" is 6 cpus and overrides resources.cpu; memory still from resources. */
    expect_set(request_policy_on(example_node(
                   "{\"node.koordinator.sh/reservation\":\"{\\\"resources\\\":{\\\"cpu\\\":"
                   "\\\"2\\\",\\\"memory\\\":\\\"8Gi\\\"},\\\"reservedCPUs\\\":\\\"0-5\\\","
                   "\\\"applyPolicy\\\":\\\"Default\\\"}\"}")),
               32000 - MARGIN_CPU - 6000, CAP_MEM - MARGIN_MEM - 8 * GI);

    /* Overlapping and single elements count distinct cpus: 0-3,2-5,7,7 = 7. */
    expect_set(request_policy_on(example_node("{\"node.koordinator.sh/reservation\":"
                                              "\"{\\\"reservedCPUs\\\":\\\"0-3,2-5,7,7\\\"}\"}")),
               32000 - MARGIN_CPU - 7000, CAP_MEM - MARGIN_MEM - 4 * GI);

    /* Ignored whole: not JSON, a bad quantity, a bad cpulist, a wrong type. Kubelet reserved
     * (1 cpu / 4Gi) applies alone. */
    static const char *const bad[] = {
        "{\"node.koordinator.sh/reservation\":\"not json\"}",
        "{\"node.koordinator.sh/reservation\":\"{\\\"resources\\\":{\\\"memory\\\":"
        "\\\"10Gi\\\",\\\"foo\\\":\\\"bad\\\"}}\"}",
        "{\"node.koordinator.sh/reservation\":\"{\\\"resources\\\":{\\\"memory\\\":"
        "\\\"10Gi\\\"},\\\"reservedCPUs\\\":\\\"5-3\\\"}\"}",
        "{\"node.koordinator.sh/reservation\":\"{\\\"resources\\\":{\\\"memory\\\":"
        "\\\"10Gi\\\"},\\\"reservedCPUs\\\":\\\"0,,1\\\"}\"}",
        "{\"node.koordinator.sh/reservation\":\"{\\\"resources\\\":{\\\"memory\\\":"
        "\\\"10Gi\\\"},\\\"reservedCPUs\\\":5}\"}",
        "{\"node.koordinator.sh/reservation\":\"[1]\"}",
    };
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
        expect_set(request_policy_on(example_node(bad[i])), BASE_CPU,
                   CAP_MEM - MARGIN_MEM - 4 * GI);

    /* An empty reservedCPUs keeps resources.cpu; null is an empty reservation. */
    expect_set(request_policy_on(example_node(
                   "{\"node.koordinator.sh/reservation\":\"{\\\"resources\\\":{\\\"cpu\\\":"
                   "\\\"2500m\\\"},\\\"reservedCPUs\\\":\\\"\\\"}\"}")),
               32000 - MARGIN_CPU - 2500, CAP_MEM - MARGIN_MEM - 4 * GI);
    expect_set(request_policy_on(example_node("{\"node.koordinator.sh/reservation\":\"null\"}")),
               BASE_CPU, CAP_MEM - MARGIN_MEM - 4 * GI);
}

static void test_kubelet_reserved(void **state)
{
    (void)state;
    /* capacity - allocatable = 4 cpu / 20Gi, above system usage (1500m / 6Gi): SysUsed' takes
     * it in the usage formula and Reserved in the request formula. */
    expect_set(request_policy_on(mk_node("32", "128Gi", "28", "108Gi", NULL)),
               32000 - MARGIN_CPU - 4000, CAP_MEM - MARGIN_MEM - 20 * GI);
    {
        struct in in;

        memset(&in, 0, sizeof(in));
        in.node = mk_node("32", "128Gi", "28", "108Gi", NULL);
        in.nm = mk_nm(T0_STR, NULL, NULL);
        in.strategy = mk_strategy(NULL);
        expect_set(calc(&in), 32000 - MARGIN_CPU - 4000, CAP_MEM - MARGIN_MEM - 20 * GI);
        in_release(&in);
    }
    /* allocatable above capacity: max(capacity - allocatable, 0) = 0. */
    expect_set(request_policy_on(mk_node("32", "128Gi", "40", "200Gi", NULL)), BASE_CPU,
               CAP_MEM - MARGIN_MEM);
}

static void test_host_applications(void **state)
{
    struct in in;

    (void)state;
    memset(&in, 0, sizeof(in));
    in.node = example_node(NULL);
    in.nm = mk_nm(
        T0_STR, NULL,
        HA("prod", "koord-prod", "100m", "1Gi") "," HA("mid", "koord-mid", "200m", "2Gi") "," HA(
            "batch", "koord-batch", "400m",
            "4Gi") "," HA("free", "koord-free", "800m", "8Gi") "," HA("none", "", "1600m", "16Gi"));
    in.strategy = mk_strategy(NULL);
    /* SysUsed = 1500m + 300m, 6Gi + 3Gi; above kubelet reserved. */
    expect_set(calc(&in), BASE_CPU - 300, BASE_MEM - 3 * GI);
    in_release(&in);
}

static void test_threshold_caps(void **state)
{
    struct in in;

    (void)state;
    /* 30 % of 32000 = 9600 < 11700; 40 % of 128Gi = int(54975581388.8). */
    example(&in, "{\"batchCPUThresholdPercent\":30,\"batchMemoryThresholdPercent\":40}");
    expect_set(calc(&in), 9600, INT64_C(54975581388));
    in_release(&in);

    /* Caps above the result change nothing. */
    example(&in, "{\"batchCPUThresholdPercent\":100,\"batchMemoryThresholdPercent\":100}");
    expect_set(calc(&in), 11700, INT64_C(63565515981));
    in_release(&in);

    /* Only one of them set. */
    example(&in, "{\"batchMemoryThresholdPercent\":10}");
    expect_set(calc(&in), 11700, INT64_C(13743895347));
    in_release(&in);

    /* 0 % caps to 0; a negative percent (unvalidated annotation) also ends at 0. */
    example(&in, "{\"batchCPUThresholdPercent\":0,\"batchMemoryThresholdPercent\":-5}");
    expect_set(calc(&in), 0, 0);
    in_release(&in);
    example(&in, "{\"batchCPUThresholdPercent\":-5,\"batchMemoryThresholdPercent\":0}");
    expect_set(calc(&in), 0, 0);
    in_release(&in);
}

static void test_clamp_at_zero(void **state)
{
    struct in in;

    (void)state;
    memset(&in, 0, sizeof(in));
    in.node = example_node(NULL);
    in.nm = mk_nm(T0_STR, PM("big", "koord-prod", "30", "120Gi"), NULL);
    in.strategy = mk_strategy(NULL);
    add_pod(&in, mk_pod("big", "Running", NULL, "40", "130Gi"));
    expect_set(calc(&in), 0, 0);
    cJSON_Delete(in.strategy);
    in.strategy = mk_strategy("{\"memoryCalculatePolicy\":\"request\","
                              "\"cpuCalculatePolicy\":\"maxUsageRequest\"}");
    expect_set(calc(&in), 0, 0);
    in_release(&in);

    /* A node without capacity gets 0, not a negative value. */
    memset(&in, 0, sizeof(in));
    in.node = J("{\"metadata\":{\"name\":\"n\"},\"status\":{}}");
    in.nm = mk_nm(T0_STR, NULL, NULL);
    in.strategy = mk_strategy(NULL);
    expect_set(calc(&in), 0, 0);
    in_release(&in);
}

/* ---- 4.2 disabled, 4.4 degrade, the leader grace window ---- */

static void test_disabled(void **state)
{
    struct in in;

    (void)state;
    example(&in, "{\"enable\":false}");
    expect_action(calc(&in), NODERESOURCE_BATCH_RESET, NODERESOURCE_MSG_DISABLED);
    assert_string_equal(NODERESOURCE_MSG_DISABLED,
                        "node colocation is disabled in Config, reason: DisableInConfig");
    in_release(&in);

    /* enable absent is disabled too. */
    example(&in, NULL);
    cJSON_DeleteItemFromObjectCaseSensitive(in.strategy, "enable");
    expect_action(calc(&in), NODERESOURCE_BATCH_RESET, NODERESOURCE_MSG_DISABLED);
    in_release(&in);

    /* The cluster switch wins over an enabled node strategy. */
    example(&in, NULL);
    in.cluster_disabled = true;
    expect_action(calc(&in), NODERESOURCE_BATCH_RESET, NODERESOURCE_MSG_DISABLED);
    /* ... and over the leader grace and a missing NodeMetric. */
    cJSON_Delete(in.nm);
    in.nm = NULL;
    in.not_before_ms = NOW_MS;
    expect_action(calc(&in), NODERESOURCE_BATCH_RESET, NODERESOURCE_MSG_DISABLED);
    in_release(&in);
}

static void test_degrade(void **state)
{
    struct in in;

    (void)state;
    assert_string_equal(
        NODERESOURCE_MSG_DEGRADED,
        "degrade node resource because of abnormal nodeMetric, reason: degradedByBatchResource");

    /* No NodeMetric. */
    example(&in, NULL);
    cJSON_Delete(in.nm);
    in.nm = NULL;
    expect_action(calc(&in), NODERESOURCE_BATCH_RESET, NODERESOURCE_MSG_DEGRADED);
    in_release(&in);

    /* No updateTime; an unparsable one. */
    example(&in, NULL);
    cJSON_Delete(in.nm);
    in.nm = mk_nm(NULL, NULL, NULL);
    expect_action(calc(&in), NODERESOURCE_BATCH_RESET, NODERESOURCE_MSG_DEGRADED);
    cJSON_Delete(in.nm);
    in.nm = mk_nm("yesterday", NULL, NULL);
    expect_action(calc(&in), NODERESOURCE_BATCH_RESET, NODERESOURCE_MSG_DEGRADED);
    in_release(&in);

    /* updateTime set, status.nodeMetric absent. */
    example(&in, NULL);
    cJSON_Delete(in.nm);
    in.nm = J("{\"status\":{\"updateTime\":\"" T0_STR "\"}}");
    expect_action(calc(&in), NODERESOURCE_BATCH_RESET, NODERESOURCE_MSG_DEGRADED);
    in_release(&in);

    /* Exactly updateTime + 15 min is fresh; one millisecond later is degraded. */
    example(&in, NULL);
    in.now_ms = t0_ms() + 15 * 60000;
    expect_set(calc(&in), 11700, INT64_C(63565515981));
    in.now_ms++;
    expect_action(calc(&in), NODERESOURCE_BATCH_RESET, NODERESOURCE_MSG_DEGRADED);
    in_release(&in);

    /* degradeTimeMinutes from the strategy: 2 minutes. */
    example(&in, "{\"degradeTimeMinutes\":2}");
    in.now_ms = t0_ms() + 2 * 60000;
    expect_set(calc(&in), 11700, INT64_C(63565515981));
    in.now_ms = t0_ms() + 2 * 60000 + 1;
    expect_action(calc(&in), NODERESOURCE_BATCH_RESET, NODERESOURCE_MSG_DEGRADED);
    in_release(&in);

    /* Fractions of a second in updateTime count. */
    example(&in, NULL);
    cJSON_Delete(in.nm);
    in.nm = mk_nm("2024-03-05T08:00:00.500Z", NULL, NULL);
    in.now_ms = t0_ms() + 15 * 60000 + 500;
    assert_int_equal(calc(&in).action, NODERESOURCE_BATCH_SET);
    in.now_ms++;
    assert_int_equal(calc(&in).action, NODERESOURCE_BATCH_RESET);
    in_release(&in);
}

static void test_leader_grace(void **state)
{
    struct in in;

    (void)state;
    /* Leader since 5 minutes, no NodeMetric yet: keep what the Node has. */
    example(&in, NULL);
    cJSON_Delete(in.nm);
    in.nm = NULL;
    in.not_before_ms = NOW_MS - 5 * 60000;
    expect_action(calc(&in), NODERESOURCE_BATCH_KEEP, NODERESOURCE_MSG_GRACE);
    /* Until not_before + degradeTimeMinutes inclusive, then degraded. */
    in.now_ms = in.not_before_ms + 15 * 60000;
    expect_action(calc(&in), NODERESOURCE_BATCH_KEEP, NODERESOURCE_MSG_GRACE);
    in.now_ms++;
    expect_action(calc(&in), NODERESOURCE_BATCH_RESET, NODERESOURCE_MSG_DEGRADED);

    /* A stale NodeMetric in the window is kept too. */
    in.nm = mk_nm("2024-03-05T07:00:00Z", NULL, NULL);
    in.now_ms = 0;
    expect_action(calc(&in), NODERESOURCE_BATCH_KEEP, NODERESOURCE_MSG_GRACE);
    /* A fresh one is calculated normally within the window. */
    cJSON_Delete(in.nm);
    in.nm = mk_nm(T0_STR, PM("a", "koord-prod", "2", "10Gi"), NULL);
    expect_set(calc(&in), 11700, INT64_C(63565515981));
    in_release(&in);

    /* not_before 0 means no grace at all. */
    example(&in, NULL);
    cJSON_Delete(in.nm);
    in.nm = NULL;
    expect_action(calc(&in), NODERESOURCE_BATCH_RESET, NODERESOURCE_MSG_DEGRADED);
    in_release(&in);
}

/* ---- classification and requests ---- */

static void test_priority_and_qos(void **state)
{
    static const struct {
        const char *pod;
        enum api_priority prio;
        enum api_qos qos;
    } cases[] = {
        /* Label wins over spec.priority. */
        {"{\"metadata\":{\"labels\":{\"koordinator.sh/priority-class\":\"koord-mid\"}},"
         "\"spec\":{\"priority\":5500}}",
         API_PRIORITY_MID, API_QOS_BE},
        /* An unknown label value is "none": spec.priority is not read, QoS decides. */
        {"{\"metadata\":{\"labels\":{\"koordinator.sh/priority-class\":\"gold\","
         "\"koordinator.sh/qosClass\":\"BE\"}},\"spec\":{\"priority\":9500}}",
         API_PRIORITY_BATCH, API_QOS_BE},
        /* Bands, inclusive. */
        {"{\"spec\":{\"priority\":9000}}", API_PRIORITY_PROD, API_QOS_BE},
        {"{\"spec\":{\"priority\":9999}}", API_PRIORITY_PROD, API_QOS_BE},
        {"{\"spec\":{\"priority\":7500}}", API_PRIORITY_MID, API_QOS_BE},
        {"{\"spec\":{\"priority\":5999}}", API_PRIORITY_BATCH, API_QOS_BE},
        {"{\"spec\":{\"priority\":3000}}", API_PRIORITY_FREE, API_QOS_BE},
        /* Outside every band: from QoS (BestEffort -> BE -> batch). */
        {"{\"spec\":{\"priority\":6000}}", API_PRIORITY_BATCH, API_QOS_BE},
        {"{\"spec\":{\"priority\":10000,\"containers\":[{\"resources\":{\"requests\":{\"cpu\":"
         "\"1\"}}}]}}",
         API_PRIORITY_PROD, API_QOS_LS},
        /* QoS label. */
        {"{\"metadata\":{\"labels\":{\"koordinator.sh/qosClass\":\"SYSTEM\"}}}", API_PRIORITY_PROD,
         API_QOS_SYSTEM},
        {"{\"metadata\":{\"labels\":{\"koordinator.sh/qosClass\":\"LSE\"}}}", API_PRIORITY_PROD,
         API_QOS_LSE},
        /* Unknown QoS label: Kubernetes QoS. Guaranteed (limits = requests, both resources). */
        {"{\"metadata\":{\"labels\":{\"koordinator.sh/qosClass\":\"gold\"}},\"spec\":{"
         "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},"
         "\"limits\":{\"cpu\":\"1000m\",\"memory\":\"1Gi\"}}}]}}",
         API_PRIORITY_PROD, API_QOS_LSR},
        /* Limits without requests (not defaulted): Burstable. */
        {"{\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"cpu\":\"1\",\"memory\":"
         "\"1Gi\"}}}]}}",
         API_PRIORITY_PROD, API_QOS_LS},
        /* Limits on both, but requests below them: Burstable. */
        {"{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"500m\","
         "\"memory\":\"1Gi\"},\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}}",
         API_PRIORITY_PROD, API_QOS_LS},
        /* One container misses a memory limit: Burstable. */
        {"{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":"
         "\"1Gi\"},\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}},{\"resources\":{\"requests\":"
         "{\"cpu\":\"1\"},\"limits\":{\"cpu\":\"1\"}}}]}}",
         API_PRIORITY_PROD, API_QOS_LS},
        /* Init containers count for QoS. */
        {"{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":"
         "\"1Gi\"},\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}],\"initContainers\":[{"
         "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}",
         API_PRIORITY_PROD, API_QOS_LS},
        /* Zero requests are not requests. */
        {"{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"0\"}}}]}}",
         API_PRIORITY_BATCH, API_QOS_BE},
        /* status.qosClass wins over the computation. */
        {"{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},"
         "\"status\":{\"qosClass\":\"BestEffort\"}}",
         API_PRIORITY_BATCH, API_QOS_BE},
        {"{\"status\":{\"qosClass\":\"Guaranteed\"}}", API_PRIORITY_PROD, API_QOS_LSR},
        {"{\"status\":{\"qosClass\":\"Odd\"}}", API_PRIORITY_NONE, API_QOS_NONE},
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        cJSON *pod = J(cases[i].pod);

        if (api_pod_priority(pod) != cases[i].prio || api_pod_qos(pod) != cases[i].qos)
            fail_msg("case %zu: priority %d qos %d, want %d %d", i, (int)api_pod_priority(pod),
                     (int)api_pod_qos(pod), (int)cases[i].prio, (int)cases[i].qos);
        cJSON_Delete(pod);
    }
    assert_int_equal(api_pod_priority(NULL), API_PRIORITY_NONE);
    assert_int_equal(api_pod_qos(NULL), API_QOS_NONE);
}

static void test_pod_request(void **state)
{
    static const struct {
        const char *spec;
        int64_t cpu, mem;
    } cases[] = {
        /* Containers sum; a larger init container wins; overhead on top. */
        {"{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}},"
         "{\"resources\":{\"requests\":{\"cpu\":\"2\",\"memory\":\"1Gi\"}}}],"
         "\"initContainers\":[{\"resources\":{\"requests\":{\"cpu\":\"4\",\"memory\":"
         "\"512Mi\"}}}],\"overhead\":{\"cpu\":\"250m\",\"memory\":\"64Mi\"}}",
         4250, 2 * GI + 64 * (1 << 20)},
        /* A sidecar adds to the containers and to every later init container. */
        {"{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"2\"}}}],"
         "\"initContainers\":[{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{"
         "\"cpu\":\"1\"}}},{\"resources\":{\"requests\":{\"cpu\":\"3\"}}}]}",
         4000, 0},
        /* An init container before the sidecar does not run beside it. */
        {"{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],"
         "\"initContainers\":[{\"resources\":{\"requests\":{\"cpu\":\"5\"}}},"
         "{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}",
         5000, 0},
        /* Sidecars only: they all run with the containers. */
        {"{\"containers\":[{\"resources\":{\"requests\":{\"memory\":\"1Gi\"}}}],"
         "\"initContainers\":[{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{"
         "\"memory\":\"1Gi\"}}},{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{"
         "\"memory\":\"2Gi\"}}}]}",
         0, 4 * GI},
        /* Limits and other resources are not requests; a malformed quantity is skipped. */
        {"{\"containers\":[{\"resources\":{\"limits\":{\"cpu\":\"8\"},\"requests\":{"
         "\"nvidia.com/gpu\":\"1\",\"cpu\":\"bad\",\"memory\":\"100Mi\"}}}]}",
         0, 100 * (1 << 20)},
        /* Exact sums, rounded up once: 3 x 333334n = 1000002n -> 2m... */
        {"{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"333334n\"}}},{"
         "\"resources\":{\"requests\":{\"cpu\":\"333334n\"}}},{\"resources\":{\"requests\":{"
         "\"cpu\":\"333334n\"}}}]}",
         2, 0},
        /* ... while 2 x 500u = 1m exactly (rounding each first would give 2). */
        {"{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"500u\",\"memory\":\"0.5\"}}},"
         "{\"resources\":{\"requests\":{\"cpu\":\"500u\",\"memory\":\"0.5\"}}}]}",
         1, 1},
        {"{}", 0, 0},
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        cJSON *pod = Jf("{\"spec\":%s}", cases[i].spec);
        int64_t cpu = -1, mem = -1;

        assert_int_equal(noderesource_pod_request(pod, &cpu, &mem), 0);
        if (cpu != cases[i].cpu || mem != cases[i].mem)
            fail_msg("case %zu: cpu %lld mem %lld, want %lld %lld", i, (long long)cpu,
                     (long long)mem, (long long)cases[i].cpu, (long long)cases[i].mem);
        cJSON_Delete(pod);
    }
    {
        int64_t cpu = -1, mem = -1;
        cJSON *pod = J("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":"
                       "\"9000000000000000\"}}},{\"resources\":{\"requests\":{\"cpu\":"
                       "\"9000000000000000\"}}}]}}");

        /* 9e18 milli-cores each: one fits in int64, the sum does not. */
        assert_int_equal(noderesource_pod_request(pod, &cpu, &mem), -ERANGE);
        assert_int_equal(cpu, -1);
        cJSON_Delete(pod);
        assert_int_equal(noderesource_pod_request(NULL, &cpu, &mem), 0);
        assert_int_equal(cpu, 0);
        assert_int_equal(mem, 0);
    }
}

/* The effective request (init containers, sidecars, overhead) is what the calculation uses. */
static void test_request_in_calculation(void **state)
{
    struct in in;

    (void)state;
    memset(&in, 0, sizeof(in));
    in.node = example_node(NULL);
    in.nm = mk_nm(T0_STR, NULL, NULL);
    in.strategy = mk_strategy("{\"memoryCalculatePolicy\":\"request\"}");
    add_pod(&in, J("{\"metadata\":{\"namespace\":\"default\",\"name\":\"s\"},\"spec\":{"
                   "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":"
                   "\"1Gi\"}}}],\"initContainers\":[{\"restartPolicy\":\"Always\",\"resources\":"
                   "{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"}}},{\"resources\":{"
                   "\"requests\":{\"cpu\":\"3\",\"memory\":\"1Gi\"}}}],\"overhead\":{\"cpu\":"
                   "\"100m\",\"memory\":\"1Gi\"}},\"status\":{\"phase\":\"Pending\"}}"));
    /* cpu: max(1 + 0.5, 3 + 0.5) + 0.1 = 3.6; memory: max(2Gi, 2Gi) + 1Gi = 3Gi. */
    expect_set(calc(&in), BASE_CPU - 3600, CAP_MEM - MARGIN_MEM - 4 * GI - 3 * GI);
    in_release(&in);
}

/* ---- bad input ---- */

static void test_malformed_input(void **state)
{
    struct in in;

    (void)state;
    /* Bad quantities in pods and metrics are skipped; odd shapes read as absent. */
    memset(&in, 0, sizeof(in));
    in.node = example_node(NULL);
    in.nm = mk_nm(T0_STR,
                  PM("a", "koord-prod", "lots", "10Gi") ",{\"name\":5},7,"
                                                        "{\"namespace\":\"default\",\"name\":"
                                                        "\"z\",\"podUsage\":[]},"
                                                        "{\"podUsage\":{\"resources\":{\"cpu\":"
                                                        "\"1E\",\"memory\":\"1Ei\"}}}",
                  "{\"usage\":7,\"priority\":\"koord-prod\"}");
    in.strategy = mk_strategy(NULL);
    add_pod(&in, mk_pod("a", "Running", NULL, "8", "16Gi"));
    add_pod(&in, mk_pod("b", "Running", NULL, "4x", "8Gi"));
    add_pod(&in, J("[]"));
    in.pods[in.npods++] = NULL;
    /* a: usage cpu absent (0), 10Gi; b: no metric, request cpu absent, 8Gi. The nameless
     * metrics share the key "/" and the last one counts: its 1E cpu is out of range in
     * milli-cores and counts as 0; 1Ei bytes fits and leaves no memory. */
    expect_set(calc(&in), BASE_CPU, 0);
    cJSON_DeleteItemFromArray(cJSON_GetObjectItemCaseSensitive(
                                  cJSON_GetObjectItemCaseSensitive(in.nm, "status"), "podsMetric"),
                              4);
    expect_set(calc(&in), BASE_CPU, BASE_MEM - 10 * GI - 8 * GI);
    /* A pod without metadata has the key "/" too; it is BestEffort, so LP, and harmless. */
    add_pod(&in, J("{\"metadata\":7,\"spec\":[],\"status\":{\"phase\":\"Running\"}}"));
    expect_set(calc(&in), BASE_CPU, BASE_MEM - 10 * GI - 8 * GI);
    in_release(&in);

    /* A node with odd status and strategy fields of the wrong type (defaults apply). */
    memset(&in, 0, sizeof(in));
    in.node = J("{\"metadata\":{\"annotations\":{\"node.koordinator.sh/reservation\":7}},"
                "\"status\":{\"capacity\":{\"cpu\":\"32\",\"memory\":{}},\"allocatable\":[]}}");
    in.nm = mk_nm(T0_STR, NULL, NULL);
    in.strategy = J("{\"enable\":true,\"cpuReclaimThresholdPercent\":\"60\","
                    "\"degradeTimeMinutes\":null,\"cpuCalculatePolicy\":7}");
    /* Reserved = capacity - 0 = 32 cpu: SysUsed' = 32, so cpu is clamped at 0. */
    expect_set(calc(&in), 0, 0);
    in_release(&in);

    /* A NodeMetric that is not an object. */
    example(&in, NULL);
    cJSON_Delete(in.nm);
    in.nm = J("[]");
    expect_action(calc(&in), NODERESOURCE_BATCH_RESET, NODERESOURCE_MSG_DEGRADED);
    in_release(&in);
}

/* The strategy slo_node_colocation() renders is accepted as is. */
static void test_slo_strategy(void **state)
{
    struct slo_config *cfg = slo_config_new();
    struct slo_events ev = {0};
    bool changed = false;
    cJSON *data =
        data_of("colocation-config", "{\"enable\":true,\"cpuReclaimThresholdPercent\":50}", NULL);
    struct in in;

    (void)state;
    assert_int_equal(slo_config_update(cfg, data, &ev, &changed), 0);
    assert_int_equal(ev.n, 0);
    example(&in, NULL);
    cJSON_Delete(in.strategy);
    in.strategy = NULL;
    assert_int_equal(slo_node_colocation(cfg, in.node, &in.strategy), 0);
    expect_set(calc(&in), 32000 - 16000 - 1500 - 6000, INT64_C(63565515981));
    in_release(&in);
    slo_events_release(&ev);
    cJSON_Delete(data);
    slo_config_free(cfg);

    /* The default config (no ConfigMap): enable false. */
    cfg = slo_config_new();
    example(&in, NULL);
    cJSON_Delete(in.strategy);
    in.strategy = NULL;
    assert_int_equal(slo_node_colocation(cfg, in.node, &in.strategy), 0);
    expect_action(calc(&in), NODERESOURCE_BATCH_RESET, NODERESOURCE_MSG_DISABLED);
    in_release(&in);
    slo_config_free(cfg);
}

/* ---- 4.4 Prepare ---- */

static cJSON *prepare(const cJSON *node, struct noderesource_batch res, double ratio)
{
    cJSON *st = NULL;

    assert_int_equal(noderesource_batch_prepare_status(node, &res, ratio, &st), 0);
    assert_non_null(st);
    return st;
}

static const struct noderesource_batch set_8k = {NODERESOURCE_BATCH_SET, NULL, 8000, 8 * GI};

static void test_prepare_set(void **state)
{
    cJSON *node = example_node(NULL), *st;
    struct noderesource_batch r = {NODERESOURCE_BATCH_SET, NULL, 11700, INT64_C(63565515981)};

    (void)state;
    st = prepare(node, set_8k, 1.0);
    assert_json_eq(st, "{\"capacity\":{\"cpu\":\"32\",\"memory\":\"128Gi\",\"pods\":\"110\","
                       "\"kubernetes.io/batch-cpu\":\"8k\",\"kubernetes.io/batch-memory\":"
                       "\"8Gi\"},\"allocatable\":{\"cpu\":\"31\",\"memory\":\"124Gi\",\"pods\":"
                       "\"110\",\"kubernetes.io/batch-cpu\":\"8k\",\"kubernetes.io/batch-memory\":"
                       "\"8Gi\"},\"phase\":\"Running\"}");
    cJSON_Delete(st);
    st = prepare(node, r, 1.0);
    assert_string_equal(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(st, "allocatable"),
                                         NODERESOURCE_BATCH_CPU)
            ->valuestring,
        "11700");
    assert_string_equal(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(st, "capacity"),
                                         NODERESOURCE_BATCH_MEMORY)
            ->valuestring,
        "63565515981");
    /* The input node is untouched. */
    assert_null(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "status"),
                                         "capacity"),
        NODERESOURCE_BATCH_CPU));
    cJSON_Delete(st);

    /* Existing values are replaced in place; 0 prints "0". */
    cJSON_ReplaceItemInObjectCaseSensitive(node, "status", prepare(node, set_8k, 1.0));
    st = prepare(node, (struct noderesource_batch){NODERESOURCE_BATCH_SET, NULL, 0, 0}, 1.0);
    assert_json_eq(cJSON_GetObjectItemCaseSensitive(st, "capacity"),
                   "{\"cpu\":\"32\",\"memory\":\"128Gi\",\"pods\":\"110\","
                   "\"kubernetes.io/batch-cpu\":\"0\",\"kubernetes.io/batch-memory\":\"0\"}");
    cJSON_Delete(st);
    cJSON_Delete(node);

    /* No status at all: capacity and allocatable are created; memory defaults to BinarySI. */
    node = J("{\"metadata\":{\"name\":\"n\"}}");
    st = prepare(node,
                 (struct noderesource_batch){NODERESOURCE_BATCH_SET, NULL, 1500, 1536 * (1 << 20)},
                 1.0);
    assert_json_eq(st, "{\"capacity\":{\"kubernetes.io/batch-cpu\":\"1500\","
                       "\"kubernetes.io/batch-memory\":\"1536Mi\"},\"allocatable\":{"
                       "\"kubernetes.io/batch-cpu\":\"1500\",\"kubernetes.io/batch-memory\":"
                       "\"1536Mi\"}}");
    cJSON_Delete(st);
    cJSON_Delete(node);

    /* Memory keeps the format of the capacity's memory: DecimalSI capacity, DecimalSI result. */
    node = mk_node("4", "16G", "4", "16G", NULL);
    st = prepare(node, (struct noderesource_batch){NODERESOURCE_BATCH_SET, NULL, 2000, 2000000000},
                 1.0);
    assert_string_equal(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(st, "allocatable"),
                                         NODERESOURCE_BATCH_MEMORY)
            ->valuestring,
        "2G");
    cJSON_Delete(st);
    cJSON_Delete(node);
}

static void test_prepare_reset_keep(void **state)
{
    cJSON *node = example_node(NULL), *with, *st;
    struct noderesource_batch reset = {NODERESOURCE_BATCH_RESET, NODERESOURCE_MSG_DEGRADED, 0, 0};
    struct noderesource_batch keep = {NODERESOURCE_BATCH_KEEP, NODERESOURCE_MSG_GRACE, 0, 0};

    (void)state;
    with = cJSON_Duplicate(node, true);
    cJSON_ReplaceItemInObjectCaseSensitive(with, "status", prepare(node, set_8k, 1.0));

    /* RESET removes both names from both lists and nothing else. */
    st = prepare(with, reset, 1.0);
    assert_json_eq(st, "{\"capacity\":{\"cpu\":\"32\",\"memory\":\"128Gi\",\"pods\":\"110\"},"
                       "\"allocatable\":{\"cpu\":\"31\",\"memory\":\"124Gi\",\"pods\":\"110\"},"
                       "\"phase\":\"Running\"}");
    cJSON_Delete(st);
    /* RESET of a node without them, or without lists, is a copy. */
    st = prepare(node, reset, 1.0);
    assert_true(cJSON_Compare(st, cJSON_GetObjectItemCaseSensitive(node, "status"), true));
    cJSON_Delete(st);

    /* KEEP changes nothing, also with a third-party annotation present. */
    cJSON_ReplaceItemInObjectCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(with, "metadata"), "annotations",
        J("{\"node.koordinator.sh/thirdPartyAllocations\":"
          "\"{\\\"allocations\\\":[{\\\"name\\\":\\\"y\\\",\\\"priority\\\":"
          "\\\"koord-batch\\\",\\\"resources\\\":{"
          "\\\"kubernetes.io/batch-cpu\\\":\\\"1000\\\"}}]}\"}"));
    st = prepare(with, keep, 1.0);
    assert_true(cJSON_Compare(st, cJSON_GetObjectItemCaseSensitive(with, "status"), true));
    cJSON_Delete(st);
    cJSON_Delete(with);
    cJSON_Delete(node);
}

static void test_prepare_third_party(void **state)
{
    cJSON *node, *st;

    (void)state;
    /* Two koord-batch entries summed and subtracted; koord-prod ignored. */
    node = example_node(
        "{\"node.koordinator.sh/thirdPartyAllocations\":\"{\\\"allocations\\\":["
        "{\\\"name\\\":\\\"yarn\\\",\\\"priority\\\":\\\"koord-batch\\\",\\\"resources\\\":{"
        "\\\"kubernetes.io/batch-cpu\\\":\\\"1000\\\",\\\"kubernetes.io/batch-memory\\\":"
        "\\\"1Gi\\\"}},{\\\"name\\\":\\\"spark\\\",\\\"priority\\\":\\\"koord-batch\\\","
        "\\\"resources\\\":{\\\"kubernetes.io/batch-cpu\\\":\\\"500\\\"}},"
        "{\\\"name\\\":\\\"db\\\",\\\"priority\\\":\\\"koord-prod\\\",\\\"resources\\\":{"
        "\\\"kubernetes.io/batch-cpu\\\":\\\"3000\\\"}}]}\"}");
    st = prepare(node, set_8k, 1.0);
    assert_json_eq(cJSON_GetObjectItemCaseSensitive(st, "allocatable"),
                   "{\"cpu\":\"31\",\"memory\":\"124Gi\",\"pods\":\"110\","
                   "\"kubernetes.io/batch-cpu\":\"6500\",\"kubernetes.io/batch-memory\":\"7Gi\"}");
    assert_json_eq(cJSON_GetObjectItemCaseSensitive(st, "capacity"),
                   "{\"cpu\":\"32\",\"memory\":\"128Gi\",\"pods\":\"110\","
                   "\"kubernetes.io/batch-cpu\":\"6500\",\"kubernetes.io/batch-memory\":\"7Gi\"}");
    cJSON_Delete(st);
    cJSON_Delete(node);

    /* Floor at 0. */
    node = example_node(
        "{\"node.koordinator.sh/thirdPartyAllocations\":\"{\\\"allocations\\\":["
        "{\\\"name\\\":\\\"yarn\\\",\\\"priority\\\":\\\"koord-batch\\\",\\\"resources\\\":{"
        "\\\"kubernetes.io/batch-cpu\\\":\\\"9k\\\",\\\"kubernetes.io/batch-memory\\\":"
        "\\\"9Gi\\\"}}]}\"}");
    st = prepare(node, set_8k, 1.0);
    assert_json_eq(cJSON_GetObjectItemCaseSensitive(st, "allocatable"),
                   "{\"cpu\":\"31\",\"memory\":\"124Gi\",\"pods\":\"110\","
                   "\"kubernetes.io/batch-cpu\":\"0\",\"kubernetes.io/batch-memory\":\"0\"}");
    cJSON_Delete(st);
    cJSON_Delete(node);

    /* Unparsable (bad JSON, a bad quantity in any entry): ignored, values unsubtracted. */
    static const char *const bad[] = {
        "{\"node.koordinator.sh/thirdPartyAllocations\":\"{allocations\"}",
        "{\"node.koordinator.sh/thirdPartyAllocations\":\"{\\\"allocations\\\":["
        "{\\\"priority\\\":\\\"koord-batch\\\",\\\"resources\\\":{\\\"kubernetes.io/batch-cpu\\\":"
        "\\\"1000\\\"}},{\\\"priority\\\":\\\"koord-prod\\\",\\\"resources\\\":{\\\"cpu\\\":"
        "\\\"x\\\"}}]}\"}",
        "{\"node.koordinator.sh/thirdPartyAllocations\":\"{\\\"allocations\\\":{}}\"}",
    };
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        node = example_node(bad[i]);
        st = prepare(node, set_8k, 1.0);
        assert_string_equal(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(st, "allocatable"),
                                             NODERESOURCE_BATCH_CPU)
                ->valuestring,
            "8k");
        cJSON_Delete(st);
        cJSON_Delete(node);
    }

    /* The values are then written DecimalSI / BinarySI, whatever the capacity's format. */
    node = mk_node("4", "16G", "4", "16G",
                   "{\"node.koordinator.sh/thirdPartyAllocations\":\"{\\\"allocations\\\":[]}\"}");
    st = prepare(node, (struct noderesource_batch){NODERESOURCE_BATCH_SET, NULL, 2000, 2000000000},
                 1.0);
    assert_json_eq(cJSON_GetObjectItemCaseSensitive(st, "allocatable"),
                   "{\"cpu\":\"4\",\"memory\":\"16G\",\"pods\":\"110\","
                   "\"kubernetes.io/batch-cpu\":\"2k\",\"kubernetes.io/batch-memory\":"
                   "\"1953125Ki\"}");
    cJSON_Delete(st);
    cJSON_Delete(node);

    /* Not applied on RESET: the resources stay removed. */
    node = example_node(
        "{\"node.koordinator.sh/thirdPartyAllocations\":\"{\\\"allocations\\\":[]}\"}");
    st = prepare(node, (struct noderesource_batch){NODERESOURCE_BATCH_RESET, "", 0, 0}, 1.0);
    assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(st, "capacity"),
                                                 NODERESOURCE_BATCH_CPU));
    cJSON_Delete(st);
    cJSON_Delete(node);
}

static void test_prepare_ratio(void **state)
{
    static const struct {
        int64_t cpu;
        double ratio;
        const char *want;
    } cases[] = {
        {11700, 1.5, "17550"}, {8000, 1.0, "8k"},    /* 1.0 is "none" */
        {8000, 0.5, "8k"},     {1001, 1.33, "1332"}, /* 1331.33 rounded up */
        {1000, 2.0, "2k"},
    };
    cJSON *node = example_node(NULL);

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        cJSON *st = prepare(
            node, (struct noderesource_batch){NODERESOURCE_BATCH_SET, NULL, cases[i].cpu, GI},
            cases[i].ratio);
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(st, "allocatable"), NODERESOURCE_BATCH_CPU);

        if (strcmp(v->valuestring, cases[i].want))
            fail_msg("case %zu: %s, want %s", i, v->valuestring, cases[i].want);
        /* Memory is never scaled. */
        assert_string_equal(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(st, "allocatable"),
                                             NODERESOURCE_BATCH_MEMORY)
                ->valuestring,
            "1Gi");
        cJSON_Delete(st);
    }
    cJSON_Delete(node);
}

/* ---- 4.2 diff rule ---- */

static cJSON *status_with(const char *cpu, const char *mem)
{
    struct strbuf sb = STRBUF_INIT;
    cJSON *st;

    if (cpu)
        strbuf_addf(&sb, "\"kubernetes.io/batch-cpu\":\"%s\"", cpu);
    if (mem)
        strbuf_addf(&sb, "%s\"kubernetes.io/batch-memory\":\"%s\"", cpu ? "," : "", mem);
    st = Jf("{\"allocatable\":{\"cpu\":\"32\",%s}}", sb.len ? sb.buf : "\"pods\":\"110\"");
    strbuf_release(&sb);
    return st;
}

static bool diff(const char *oc, const char *om, const char *nc, const char *nm, double th)
{
    cJSON *o = status_with(oc, om), *n = status_with(nc, nm);
    bool d = noderesource_batch_is_diff(o, n, th);

    cJSON_Delete(o);
    cJSON_Delete(n);
    return d;
}

static void test_diff_rule(void **state)
{
    (void)state;
    /* Strictly greater than old x threshold, both directions. */
    assert_false(diff("1000", "1000", "1100", "1000", 0.1));
    assert_true(diff("1000", "1000", "1101", "1000", 0.1));
    assert_false(diff("1000", "1000", "900", "1000", 0.1));
    assert_true(diff("1000", "1000", "899", "1000", 0.1));
    assert_false(diff("1000", "10Gi", "1000", "11Gi", 0.1));
    assert_true(diff("1000", "10Gi", "1000", "12Gi", 0.1));
    /* Memory on bytes: 10 % of 1000 bytes is 100. */
    assert_false(diff("1", "1000", "1", "1100", 0.1));
    assert_true(diff("1", "1000", "1", "1101", 0.1));
    /* Equal values never differ; any change differs with a zero old value. */
    assert_false(diff("0", "0", "0", "0", 0.1));
    assert_true(diff("0", "0", "1", "0", 0.1));
    /* Presence. */
    assert_true(diff(NULL, NULL, "1000", "1Gi", 0.1));
    assert_true(diff("1000", "1Gi", NULL, NULL, 0.1));
    assert_true(diff("1000", "1Gi", "1000", NULL, 0.1));
    assert_false(diff(NULL, NULL, NULL, NULL, 0.1));
    assert_false(noderesource_batch_is_diff(NULL, NULL, 0.1));
    /* The threshold from the strategy. */
    assert_false(diff("1000", "1000", "1400", "1000", 0.5));
    assert_true(diff("1000", "1000", "1501", "1000", 0.5));
}

static void test_time_rule(void **state)
{
    int64_t now = NOW_MS;
    cJSON *o = status_with("1000", "1Gi"), *n = status_with("1050", "1Gi");
    cJSON *strategy = mk_strategy("{\"updateTimeThresholdSeconds\":60}");

    (void)state;
    assert_true(noderesource_status_is_stale(now, 0, 300));
    /* 0 is "never written", not the epoch. */
    assert_true(noderesource_status_is_stale(1000, 0, 300));
    assert_false(noderesource_status_is_stale(now, now - 300000, 300));
    assert_true(noderesource_status_is_stale(now, now - 300001, 300));
    assert_false(noderesource_status_is_stale(now, now, 300));

    /* Combined: no diff, recent write -> no sync; never written or too old -> sync. */
    assert_false(noderesource_batch_needs_sync(o, n, NULL, now, now - 1000));
    assert_true(noderesource_batch_needs_sync(o, n, NULL, now, 0));
    assert_false(noderesource_batch_needs_sync(o, n, NULL, now, now - 300000));
    assert_true(noderesource_batch_needs_sync(o, n, NULL, now, now - 300001));
    assert_true(noderesource_batch_needs_sync(o, n, strategy, now, now - 60001));
    assert_false(noderesource_batch_needs_sync(o, n, strategy, now, now - 60000));
    cJSON_Delete(n);
    /* A diff over the threshold syncs however recent the write. */
    n = status_with("1200", "1Gi");
    assert_true(noderesource_batch_needs_sync(o, n, NULL, now, now - 1));
    cJSON_Delete(strategy);
    strategy = mk_strategy("{\"resourceDiffThreshold\":0.5}");
    assert_false(noderesource_batch_needs_sync(o, n, strategy, now, now - 1));
    cJSON_Delete(strategy);
    cJSON_Delete(o);
    cJSON_Delete(n);
}

/* ---- allocation failures ---- */

static void test_alloc_failures(void **state)
{
    struct in in;
    struct noderesource_batch want, got;
    cJSON *want_st = NULL, *st;
    int r;

    (void)state;
    example(&in, NULL);
    cJSON_ReplaceItemInObjectCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(in.node, "metadata"), "annotations",
        J("{\"node.koordinator.sh/reservation\":\"{\\\"reservedCPUs\\\":\\\"0-1,4\\\"}\","
          "\"node.koordinator.sh/thirdPartyAllocations\":\"{\\\"allocations\\\":["
          "{\\\"priority\\\":\\\"koord-batch\\\",\\\"resources\\\":{"
          "\\\"kubernetes.io/batch-cpu\\\":\\\"100\\\"}}]}\"}"));
    want = calc(&in);
    assert_int_equal(noderesource_batch_prepare_status(in.node, &want, 1.0, &want_st), 0);

    for (long n = 1;; n++) {
        struct noderesource_batch_input bi = {
            .node = in.node,
            .pods = (const cJSON *const *)in.pods,
            .npods = in.npods,
            .nodemetric = in.nm,
            .strategy = in.strategy,
            .cluster_enable = true,
            .now_ms = NOW_MS,
        };

        alloc_fail_after(n);
        r = noderesource_batch_calculate(&bi, &got);
        alloc_fail_after(0);
        if (r == 0 && !alloc_injected()) {
            assert_int_equal(got.action, want.action);
            assert_int_equal(got.cpu_milli, want.cpu_milli);
            assert_int_equal(got.memory_bytes, want.memory_bytes);
            break;
        }
        assert_int_equal(r, -ENOMEM);
        assert_true(n < 100);
    }
    for (long n = 1;; n++) {
        st = NULL;
        alloc_fail_after(n);
        r = noderesource_batch_prepare_status(in.node, &want, 1.0, &st);
        alloc_fail_after(0);
        if (r == 0 && !alloc_injected()) {
            assert_true(cJSON_Compare(st, want_st, true));
            cJSON_Delete(st);
            break;
        }
        assert_int_equal(r, -ENOMEM);
        assert_null(st);
        assert_true(n < 1000);
    }
    cJSON_Delete(want_st);
    in_release(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worked_example),
        cmocka_unit_test(test_policies),
        cmocka_unit_test(test_lse_pod),
        cmocka_unit_test(test_pod_without_metric),
        cmocka_unit_test(test_dangling_metrics),
        cmocka_unit_test(test_lp_pods_skipped),
        cmocka_unit_test(test_phases),
        cmocka_unit_test(test_reservation_annotation),
        cmocka_unit_test(test_kubelet_reserved),
        cmocka_unit_test(test_host_applications),
        cmocka_unit_test(test_threshold_caps),
        cmocka_unit_test(test_clamp_at_zero),
        cmocka_unit_test(test_disabled),
        cmocka_unit_test(test_degrade),
        cmocka_unit_test(test_leader_grace),
        cmocka_unit_test(test_priority_and_qos),
        cmocka_unit_test(test_pod_request),
        cmocka_unit_test(test_request_in_calculation),
        cmocka_unit_test(test_malformed_input),
        cmocka_unit_test(test_slo_strategy),
        cmocka_unit_test(test_prepare_set),
        cmocka_unit_test(test_prepare_reset_keep),
        cmocka_unit_test(test_prepare_third_party),
        cmocka_unit_test(test_prepare_ratio),
        cmocka_unit_test(test_diff_rule),
        cmocka_unit_test(test_time_rule),
        cmocka_unit_test(test_alloc_failures),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
