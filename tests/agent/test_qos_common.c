/*
 * Tests for agent/qos/qos.c: pod and node summaries from objects, priority values and
 * class-mapped requests, CPU sets (k8s cpuset.Parse rules), and the shared annotations
 * (node reservation, SYSTEM QoS cpuset, resource-status).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/qos/qos.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "testutil.h"

#define GI ((int64_t)1 << 30)

static const char *fmt_set(const struct cg_cpuset *s, struct strbuf *sb)
{
    strbuf_reset(sb);
    cg_cpuset_append(s, sb);
    return sb->buf;
}

static void test_cpuset(void **state)
{
    static const struct {
        const char *in;
        int r;
        const char *out;
        size_t n;
    } cases[] = {
        {"", 0, "", 0},
        {"0", 0, "0", 1},
        {"0-3", 0, "0-3", 4},
        {"3,1,2", 0, "1-3", 3},
        {"0-1,1-2", 0, "0-2", 3},
        {"0,2,4-5,7", 0, "0,2,4-5,7", 5},
        {"5-5", 0, "5", 1},
        {"4095", 0, "4095", 1},
        {"4096", -ERANGE, NULL, 0},
        {"0-4096", -ERANGE, NULL, 0},
        {"3-1", -EINVAL, NULL, 0},
        {"1,", -EINVAL, NULL, 0},
        {",1", -EINVAL, NULL, 0},
        {"1,,2", -EINVAL, NULL, 0},
        {" 1", -EINVAL, NULL, 0},
        {"1 ", -EINVAL, NULL, 0},
        {"-1", -EINVAL, NULL, 0},
        {"1-", -EINVAL, NULL, 0},
        {"1-2-3", -EINVAL, NULL, 0},
        {"a", -EINVAL, NULL, 0},
        {"0x1", -EINVAL, NULL, 0},
    };
    struct strbuf sb = STRBUF_INIT;
    struct cg_cpuset s, t;

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        int r;

        cg_cpuset_clear(&s);
        (void)cg_cpuset_add(&s, 9);
        r = qos_cpuset_parse(cases[i].in, &s);
        if (r != cases[i].r)
            fail_msg("\"%s\": %d, want %d", cases[i].in, r, cases[i].r);
        if (r < 0) {
            /* Untouched on failure. */
            assert_string_equal(fmt_set(&s, &sb), "9");
            continue;
        }
        assert_string_equal(fmt_set(&s, &sb), cases[i].out);
        assert_int_equal(cg_cpuset_count(&s), cases[i].n);
    }
    cg_cpuset_clear(&s);
    assert_int_equal(cg_cpuset_add(&s, -1), -ERANGE);
    assert_int_equal(cg_cpuset_add(&s, CG_CPUSET_MAX_CPUS), -ERANGE);
    assert_false(cg_cpuset_has(&s, -1));
    assert_int_equal(cg_cpuset_add(&s, 63), 0);
    assert_int_equal(cg_cpuset_add(&s, 64), 0);
    assert_string_equal(fmt_set(&s, &sb), "63-64");
    assert_int_equal(qos_cpuset_parse("1,3", &t), 0);
    cg_cpuset_union(&s, &t);
    assert_string_equal(fmt_set(&s, &sb), "1,3,63-64");
    assert_false(cg_cpuset_equal(&s, &t));
    assert_int_equal(qos_cpuset_parse("63-64,3,1", &t), 0);
    assert_true(cg_cpuset_equal(&s, &t));
    strbuf_release(&sb);
}

static void test_reservation(void **state)
{
    struct qos_reservation r;
    struct strbuf sb = STRBUF_INIT;

    (void)state;
    assert_int_equal(qos_reservation_parse(NULL, &r), 0);
    assert_int_equal(r.cpu_milli, 0);
    assert_int_equal(
        qos_reservation_parse("{\"resources\":{\"cpu\":\"1500m\",\"memory\":\"1Gi\"}}", &r), 0);
    assert_int_equal(r.cpu_milli, 1500);
    assert_int_equal(r.memory, GI);
    assert_int_equal(cg_cpuset_count(&r.cpus), 0);
    /* reservedCPUs wins over the cpu count; names fold case. */
    assert_int_equal(
        qos_reservation_parse("{\"Resources\":{\"cpu\":\"1\"},\"reservedCPUs\":\"0-5\","
                              "\"applyPolicy\":\"Default\"}",
                              &r),
        0);
    assert_int_equal(r.cpu_milli, 6000);
    assert_string_equal(fmt_set(&r.cpus, &sb), "0-5");
    assert_int_equal(qos_reservation_parse("{\"reservedCPUs\":\"\",\"resources\":{\"cpu\":2}}", &r),
                     0);
    assert_int_equal(r.cpu_milli, 2000);
    assert_int_equal(qos_reservation_parse("null", &r), 0);
    assert_int_equal(r.cpu_milli, 0);
    /* Any malformed part discards the whole annotation. */
    assert_int_equal(
        qos_reservation_parse("{\"resources\":{\"cpu\":\"1\"},\"reservedCPUs\":\"x\"}", &r),
        -EINVAL);
    assert_int_equal(r.cpu_milli, 0);
    assert_int_equal(qos_reservation_parse("{\"resources\":{\"cpu\":\"1\",\"gpu\":\"bad\"}}", &r),
                     -EINVAL);
    assert_int_equal(qos_reservation_parse("{\"resources\":[]}", &r), -EINVAL);
    assert_int_equal(qos_reservation_parse("{\"reservedCPUs\":1}", &r), -EINVAL);
    assert_int_equal(qos_reservation_parse("{", &r), -EINVAL);
    assert_int_equal(qos_reservation_parse("[]", &r), -EINVAL);
    strbuf_release(&sb);
}

static void test_system_qos_and_resource_status(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    struct cg_cpuset s;

    (void)state;
    assert_int_equal(qos_system_qos_exclusive_cpus(NULL, &s), 0);
    assert_int_equal(cg_cpuset_count(&s), 0);
    /* cpusetExclusive defaults to true. */
    assert_int_equal(qos_system_qos_exclusive_cpus("{\"cpuset\":\"0-3\"}", &s), 0);
    assert_string_equal(fmt_set(&s, &sb), "0-3");
    assert_int_equal(
        qos_system_qos_exclusive_cpus("{\"cpuset\":\"0-3\",\"cpusetExclusive\":true}", &s), 0);
    assert_string_equal(fmt_set(&s, &sb), "0-3");
    assert_int_equal(
        qos_system_qos_exclusive_cpus("{\"cpuset\":\"0-3\",\"cpusetExclusive\":false}", &s), 0);
    assert_string_equal(fmt_set(&s, &sb), "");
    assert_int_equal(qos_system_qos_exclusive_cpus("{\"cpuset\":\"\"}", &s), 0);
    assert_int_equal(qos_system_qos_exclusive_cpus("{\"cpuset\":\"3-0\"}", &s), -EINVAL);
    assert_string_equal(fmt_set(&s, &sb), "");
    assert_int_equal(qos_system_qos_exclusive_cpus("{\"cpuset\":3}", &s), -EINVAL);
    assert_int_equal(qos_system_qos_exclusive_cpus("nope", &s), -EINVAL);

    assert_int_equal(qos_resource_status_cpus(NULL, &s), 0);
    assert_int_equal(qos_resource_status_cpus("{}", &s), 0);
    assert_int_equal(qos_resource_status_cpus("{\"cpuset\":\"\"}", &s), 0);
    assert_int_equal(
        qos_resource_status_cpus("{\"cpuset\":\"2-3,6\",\"numaNodeResources\":[]}", &s), 1);
    assert_string_equal(fmt_set(&s, &sb), "2-3,6");
    assert_int_equal(qos_resource_status_cpus("{\"cpuset\":\"x\"}", &s), -EINVAL);
    assert_int_equal(cg_cpuset_count(&s), 0);
    assert_int_equal(qos_resource_status_cpus("{\"cpuset\":[]}", &s), -EINVAL);
    assert_int_equal(qos_resource_status_cpus("[", &s), -EINVAL);
    strbuf_release(&sb);
}

static const char *const pod_json =
    "{\"metadata\":{\"uid\":\"u1\",\"namespace\":\"ns\",\"name\":\"p1\","
    "\"labels\":{\"koordinator.sh/qosClass\":\"BE\",\"koordinator.sh/eviction-enabled\":\"true\","
    "\"koordinator.sh/priority\":\"-7\"},"
    "\"annotations\":{\"koordinator.sh/eviction-policy\":\"[\\\"BEMemoryEvict\\\"]\","
    "\"koordinator.sh/eviction-priority\":\"-3\",\"koordinator.sh/cpuBurst\":\"{}\","
    "\"koordinator.sh/memoryQOS\":\"{\\\"policy\\\":\\\"auto\\\"}\","
    "\"scheduling.koordinator.sh/resource-status\":\"{\\\"cpuset\\\":\\\"1\\\"}\","
    "\"node.koordinator.sh/resctrl\":\"{}\"}},"
    "\"spec\":{\"priority\":5100,\"containers\":["
    "{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\","
    "\"kubernetes.io/batch-cpu\":\"2000\",\"kubernetes.io/batch-memory\":\"2Gi\"},"
    "\"limits\":{\"kubernetes.io/batch-cpu\":4000,\"kubernetes.io/batch-memory\":\"4Gi\"}}},"
    "{\"name\":\"b\",\"resources\":{\"requests\":{\"cpu\":\"bogus\",\"memory\":\"1Gi\"}}}],"
    "\"initContainers\":[{\"name\":\"i\",\"resources\":{\"requests\":{\"memory\":\"3Gi\","
    "\"cpu\":\"100m\"}}}],"
    "\"overhead\":{\"cpu\":\"10m\"}},"
    "\"status\":{\"phase\":\"Running\",\"qosClass\":\"Burstable\",\"containerStatuses\":["
    "{\"name\":\"b\",\"containerID\":\"containerd://b\",\"state\":{\"waiting\":{}}},"
    "{\"name\":\"a\",\"containerID\":\"containerd://a\",\"state\":{\"running\":{}}}]}}";

static void test_pod_from_json(void **state)
{
    struct qos_pod p;
    enum qos_res r;
    cJSON *j = J(pod_json);

    (void)state;
    assert_int_equal(qos_pod_from_json(j, &p), 0);
    assert_string_equal(p.uid, "u1");
    assert_string_equal(p.namespace, "ns");
    assert_string_equal(p.name, "p1");
    assert_int_equal(p.qos, API_QOS_BE);
    assert_int_equal(p.qos_label, API_QOS_BE);
    assert_int_equal(p.kube_qos, QOS_KUBE_BURSTABLE);
    assert_int_equal(p.priority_class, API_PRIORITY_BATCH);
    assert_int_equal(p.priority_class_raw, API_PRIORITY_BATCH);
    assert_true(p.has_priority);
    assert_int_equal(p.priority, 5100);
    assert_true(p.active);
    assert_true(p.eviction_enabled);
    assert_true(p.has_sub_priority);
    assert_int_equal(p.sub_priority, -7);
    assert_int_equal(p.eviction_priority, -3);
    assert_string_equal(p.eviction_policy, "[\"BEMemoryEvict\"]");
    assert_string_equal(p.cpu_burst, "{}");
    assert_null(p.cpu_qos);
    assert_string_equal(p.memory_qos, "{\"policy\":\"auto\"}");
    assert_string_equal(p.resource_status, "{\"cpuset\":\"1\"}");
    assert_true(p.has_resctrl_annotation);
    assert_int_equal(p.ncontainers, 2);
    assert_string_equal(p.containers[0].name, "a");
    assert_string_equal(p.containers[0].id, "containerd://a");
    assert_true(p.containers[0].running);
    assert_false(p.containers[1].running);
    assert_int_equal(p.containers[0].requests.v[QOS_RES_CPU], 500);
    assert_int_equal(p.containers[0].requests.v[QOS_RES_BATCH_CPU], 2000);
    assert_int_equal(p.containers[0].limits.v[QOS_RES_BATCH_CPU], 4000);
    assert_int_equal(p.containers[0].limits.v[QOS_RES_BATCH_MEMORY], 4 * GI);
    assert_int_equal(p.containers[0].limits.v[QOS_RES_MEMORY], 0);
    /* A bad quantity counts as not set. */
    assert_int_equal(p.containers[1].requests.v[QOS_RES_CPU], 0);
    /* Pod requests: max(sum, init) + overhead. */
    assert_int_equal(p.requests.v[QOS_RES_CPU], 510);
    assert_int_equal(p.requests.v[QOS_RES_MEMORY], 3 * GI);
    assert_int_equal(qos_pod_sum_requests(&p, QOS_RES_MEMORY), 2 * GI);
    assert_int_equal(qos_pod_priority_value(&p), 5100);
    assert_int_equal(qos_pod_class_request(&p, QOS_RES_MEMORY, &r), 2 * GI);
    assert_int_equal(r, QOS_RES_BATCH_MEMORY);
    assert_int_equal(qos_pod_class_request(&p, QOS_RES_CPU, &r), 2000);
    assert_int_equal(r, QOS_RES_BATCH_CPU);
    qos_pod_release(&p);
    qos_pod_release(&p);
    cJSON_Delete(j);
}

static void test_pod_classes(void **state)
{
    static const struct {
        const char *json;
        enum api_qos qos, label;
        enum qos_kube_class kube;
        enum api_priority prio, raw;
        int32_t value;
        bool active;
    } cases[] = {
        /* BestEffort pod without labels: BE, batch (by QoS), raw none, value 5500. */
        {"{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}", API_QOS_BE, API_QOS_NONE,
         QOS_KUBE_BESTEFFORT, API_PRIORITY_BATCH, API_PRIORITY_NONE, 5500, true},
        /* Guaranteed computed from the spec. */
        {"{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"cpu\":\"1\","
         "\"memory\":\"1Gi\"},\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}}",
         API_QOS_LSR, API_QOS_NONE, QOS_KUBE_GUARANTEED, API_PRIORITY_PROD, API_PRIORITY_NONE, 9500,
         true},
        /* Label LS on a BestEffort pod; spec.priority 0 falls back to the class default. */
        {"{\"metadata\":{\"labels\":{\"koordinator.sh/qosClass\":\"LS\"}},\"spec\":{"
         "\"priority\":0},\"status\":{\"phase\":\"Succeeded\"}}",
         API_QOS_LS, API_QOS_LS, QOS_KUBE_BESTEFFORT, API_PRIORITY_PROD, API_PRIORITY_NONE, 9500,
         false},
        /* The priority-class label wins and is raw; spec.priority is still the value. */
        {"{\"metadata\":{\"labels\":{\"koordinator.sh/priority-class\":\"koord-mid\"}},"
         "\"spec\":{\"priority\":100},\"status\":{\"phase\":\"Failed\",\"qosClass\":"
         "\"Guaranteed\"}}",
         API_QOS_LSR, API_QOS_NONE, QOS_KUBE_GUARANTEED, API_PRIORITY_MID, API_PRIORITY_MID, 100,
         false},
        /* An unknown class label is "none" and hides spec.priority's band. */
        {"{\"metadata\":{\"labels\":{\"koordinator.sh/priority-class\":\"x\"}},"
         "\"spec\":{\"priority\":9100},\"status\":{\"phase\":\"Pending\",\"qosClass\":"
         "\"BestEffort\"}}",
         API_QOS_BE, API_QOS_NONE, QOS_KUBE_BESTEFFORT, API_PRIORITY_BATCH, API_PRIORITY_NONE, 9100,
         true},
        /* spec.priority bands give the raw class. */
        {"{\"spec\":{\"priority\":3500},\"status\":{\"qosClass\":\"Burstable\"}}", API_QOS_LS,
         API_QOS_NONE, QOS_KUBE_BURSTABLE, API_PRIORITY_FREE, API_PRIORITY_FREE, 3500, true},
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        cJSON *j = J(cases[i].json);
        struct qos_pod p;

        assert_int_equal(qos_pod_from_json(j, &p), 0);
        if (p.qos != cases[i].qos || p.qos_label != cases[i].label || p.kube_qos != cases[i].kube ||
            p.priority_class != cases[i].prio || p.priority_class_raw != cases[i].raw ||
            p.active != cases[i].active || qos_pod_priority_value(&p) != cases[i].value)
            fail_msg("case %zu: qos %d/%d kube %d prio %d/%d value %d active %d", i, p.qos,
                     p.qos_label, p.kube_qos, p.priority_class, p.priority_class_raw,
                     qos_pod_priority_value(&p), p.active);
        assert_false(p.eviction_enabled);
        assert_false(p.has_sub_priority);
        assert_int_equal(p.eviction_priority, 0);
        qos_pod_release(&p);
        cJSON_Delete(j);
    }
}

static void test_pod_label_parsing(void **state)
{
    static const struct {
        const char *labels, *annotations;
        bool enabled, has_sub;
        int64_t sub;
        int32_t eprio;
    } cases[] = {
        {"{\"koordinator.sh/eviction-enabled\":\"True\"}", "{}", false, false, 0, 0},
        {"{\"koordinator.sh/priority\":\"0x10\"}", "{}", false, false, 0, 0},
        {"{\"koordinator.sh/priority\":\"+12\"}", "{}", false, true, 12, 0},
        {"{\"koordinator.sh/priority\":\" 1\"}", "{}", false, false, 0, 0},
        {"{}", "{\"koordinator.sh/eviction-priority\":\"2147483648\"}", false, false, 0, 0},
        {"{}", "{\"koordinator.sh/eviction-priority\":\"-2147483648\"}", false, false, 0,
         INT32_MIN},
        {"{}", "{\"koordinator.sh/eviction-priority\":\"x\"}", false, false, 0, 0},
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct strbuf sb = STRBUF_INIT;
        struct qos_pod p;
        cJSON *j;

        strbuf_addf(&sb, "{\"metadata\":{\"labels\":%s,\"annotations\":%s}}", cases[i].labels,
                    cases[i].annotations);
        j = J(sb.buf);
        assert_int_equal(qos_pod_from_json(j, &p), 0);
        if (p.eviction_enabled != cases[i].enabled || p.has_sub_priority != cases[i].has_sub ||
            p.sub_priority != cases[i].sub || p.eviction_priority != cases[i].eprio)
            fail_msg("case %zu", i);
        qos_pod_release(&p);
        cJSON_Delete(j);
        strbuf_release(&sb);
    }
}

static void test_pod_from_json_errors(void **state)
{
    cJSON *j = J(pod_json), *s = J("[]");
    struct qos_pod p;
    int r;

    (void)state;
    assert_int_equal(qos_pod_from_json(s, &p), -EINVAL);
    assert_int_equal(qos_pod_from_json(NULL, &p), -EINVAL);
    /* Every allocation failure gives -ENOMEM and leaks nothing. */
    for (long n = 1;; n++) {
        int injected;

        alloc_fail_after(n);
        r = qos_pod_from_json(j, &p);
        injected = alloc_injected();
        alloc_fail_after(0);
        if (!injected) {
            assert_int_equal(r, 0);
            qos_pod_release(&p);
            break;
        }
        if (r == 0)
            qos_pod_release(&p);
        else
            assert_int_equal(r, -ENOMEM);
    }
    cJSON_Delete(j);
    cJSON_Delete(s);
}

static void test_node(void **state)
{
    struct qos_node n;
    cJSON *j;

    (void)state;
    j = J("{\"metadata\":{\"annotations\":{\"node.koordinator.sh/reservation\":"
          "\"{\\\"resources\\\":{\\\"cpu\\\":\\\"3\\\"}}\"}},"
          "\"status\":{\"capacity\":{\"cpu\":\"32\",\"memory\":\"128Gi\"},"
          "\"allocatable\":{\"cpu\":\"31\",\"memory\":\"124Gi\",\"kubernetes.io/batch-cpu\":"
          "\"0\",\"kubernetes.io/batch-memory\":\"bad\"}}}");
    assert_int_equal(qos_node_from_json(j, &n), 0);
    assert_int_equal(n.capacity.v[QOS_RES_CPU], 32000);
    assert_int_equal(n.capacity.v[QOS_RES_MEMORY], 128 * GI);
    assert_int_equal(n.allocatable.v[QOS_RES_CPU], 31000);
    assert_true(n.allocatable_present & (1u << QOS_RES_BATCH_CPU));
    assert_false(n.allocatable_present & (1u << QOS_RES_BATCH_MEMORY));
    assert_false(n.allocatable_present & (1u << QOS_RES_MID_CPU));
    assert_int_equal(n.reserved_cpu_milli, 3000);
    /* max(kubelet 1000m, annotation 3000m). */
    assert_int_equal(qos_node_reserved_cpu_milli(&n), 3000);
    n.reserved_cpu_milli = 500;
    assert_int_equal(qos_node_reserved_cpu_milli(&n), 1000);
    /* Allocatable above capacity is no reservation. */
    n.allocatable.v[QOS_RES_CPU] = 40000;
    assert_int_equal(qos_node_reserved_cpu_milli(&n), 500);
    cJSON_Delete(j);

    /* A malformed reservation annotation is ignored. */
    j = J("{\"metadata\":{\"annotations\":{\"node.koordinator.sh/reservation\":\"{\"}}}");
    assert_int_equal(qos_node_from_json(j, &n), 0);
    assert_int_equal(n.reserved_cpu_milli, 0);
    cJSON_Delete(j);
    j = J("1");
    assert_int_equal(qos_node_from_json(j, &n), -EINVAL);
    cJSON_Delete(j);
}

static void test_res_names(void **state)
{
    (void)state;
    assert_string_equal(qos_res_name(QOS_RES_CPU), "cpu");
    assert_string_equal(qos_res_name(QOS_RES_BATCH_MEMORY), "kubernetes.io/batch-memory");
    assert_string_equal(qos_res_name(QOS_RES_MID_CPU), "kubernetes.io/mid-cpu");
    assert_string_equal(qos_res_name(QOS_RES_COUNT), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpuset),
        cmocka_unit_test(test_reservation),
        cmocka_unit_test(test_system_qos_and_resource_status),
        cmocka_unit_test(test_pod_from_json),
        cmocka_unit_test(test_pod_classes),
        cmocka_unit_test(test_pod_label_parsing),
        cmocka_unit_test(test_pod_from_json_errors),
        cmocka_unit_test(test_node),
        cmocka_unit_test(test_res_names),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
