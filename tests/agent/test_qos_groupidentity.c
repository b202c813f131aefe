/*
 * Tests for agent/qos/groupidentity (reference 3.8): class values under the groupIdentity
 * policy and cpuQOS.enable, the kube-QoS directories, pods by QoS label and by kube class,
 * and the LS pod annotation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/qos/groupidentity.h"
#include "base/base.h"
#include "codec/codec.h"

/* The agent defaults with every class's cpuQOS enabled at its default value. */
static void enabled_cfg(struct qos_resource_qos *q)
{
    struct qos_slo s;

    qos_slo_defaults(&s);
    *q = s.resource_qos;
    for (int c = 0; c < QOS_CLASS_COUNT; c++) {
        struct qos_class_config d;

        qos_class_defaults((enum qos_class)c, &d);
        q->classes[c].cpu = d.cpu;
        q->classes[c].cpu.enable = true;
    }
}

static void test_defaults(void **state)
{
    struct qos_slo s;
    struct qos_gi_kube k;
    struct qos_pod p = {.qos_label = API_QOS_BE};

    (void)state;
    /* Disabled by default: every value 0. */
    qos_slo_defaults(&s);
    assert_true(qos_gi_enabled(&s.resource_qos));
    for (int c = 0; c < QOS_CLASS_COUNT; c++)
        assert_int_equal(qos_gi_class_value(&s.resource_qos, (enum qos_class)c), 0);
    qos_gi_kube_values(&s.resource_qos, &k);
    assert_int_equal(k.root, 0);
    assert_int_equal(k.burstable, 0);
    assert_int_equal(k.besteffort, 0);
    assert_int_equal(qos_gi_pod_value(&s.resource_qos, &p), 0);

    /* The rule: on once the cpuQOS of LSR, LS or BE is enabled under groupIdentity; SYSTEM's
     * does not count, another policy never. */
    assert_false(qos_gi_rule_enabled(&s.resource_qos));
    s.resource_qos.classes[QOS_CLASS_SYSTEM].cpu.enable = true;
    assert_false(qos_gi_rule_enabled(&s.resource_qos));
    for (int c = QOS_CLASS_LSR; c <= QOS_CLASS_BE; c++) {
        s.resource_qos.classes[c].cpu.enable = true;
        assert_true(qos_gi_rule_enabled(&s.resource_qos));
        s.resource_qos.cpu_policy = QOS_CPU_POLICY_CORE_SCHED;
        assert_false(qos_gi_rule_enabled(&s.resource_qos));
        s.resource_qos.cpu_policy = QOS_CPU_POLICY_GROUP_IDENTITY;
        s.resource_qos.classes[c].cpu.enable = false;
    }
}

static void test_values(void **state)
{
    static const struct {
        enum api_qos label;
        enum qos_kube_class kube;
        const char *annotation;
        int64_t value;
    } cases[] = {
        /* By label: LSR 2, LS 2, BE -1, SYSTEM 0; LSE uses LSR's. */
        {API_QOS_LSE, QOS_KUBE_GUARANTEED, NULL, 2},
        {API_QOS_LSR, QOS_KUBE_GUARANTEED, NULL, 2},
        {API_QOS_LS, QOS_KUBE_BURSTABLE, NULL, 2},
        {API_QOS_BE, QOS_KUBE_BESTEFFORT, NULL, -1},
        {API_QOS_BE, QOS_KUBE_BURSTABLE, NULL, -1},
        {API_QOS_SYSTEM, QOS_KUBE_BURSTABLE, NULL, 0},
        /* Without a label: by kube class. */
        {API_QOS_NONE, QOS_KUBE_GUARANTEED, NULL, 2},
        {API_QOS_NONE, QOS_KUBE_BURSTABLE, NULL, 2},
        {API_QOS_NONE, QOS_KUBE_BESTEFFORT, NULL, -1},
        {API_QOS_NONE, QOS_KUBE_NONE, NULL, 0},
        /* LS pods' annotation. */
        {API_QOS_LS, QOS_KUBE_BURSTABLE, "{\"enable\":true,\"groupIdentity\":-1}", -1},
        {API_QOS_LS, QOS_KUBE_BURSTABLE, "{\"enable\":true,\"groupIdentity\":0}", 0},
        {API_QOS_LS, QOS_KUBE_BURSTABLE, "{\"enable\":false,\"groupIdentity\":2}", 0},
        {API_QOS_LS, QOS_KUBE_BURSTABLE, "{\"groupIdentity\":1}", 0},
        {API_QOS_LS, QOS_KUBE_BURSTABLE, "{}", 0},
        /* Ignored: no value, out of range, bad types, not JSON. */
        {API_QOS_LS, QOS_KUBE_BURSTABLE, "{\"enable\":true}", 2},
        {API_QOS_LS, QOS_KUBE_BURSTABLE, "{\"enable\":true,\"groupIdentity\":3}", 2},
        {API_QOS_LS, QOS_KUBE_BURSTABLE, "{\"enable\":true,\"groupIdentity\":-2}", 2},
        {API_QOS_LS, QOS_KUBE_BURSTABLE, "{\"enable\":\"yes\",\"groupIdentity\":1}", 2},
        {API_QOS_LS, QOS_KUBE_BURSTABLE, "[1]", 2},
        {API_QOS_LS, QOS_KUBE_BURSTABLE, "{", 2},
        /* Only LS-labelled pods read it. */
        {API_QOS_BE, QOS_KUBE_BESTEFFORT, "{\"enable\":true,\"groupIdentity\":2}", -1},
        {API_QOS_NONE, QOS_KUBE_BURSTABLE, "{\"enable\":true,\"groupIdentity\":-1}", 2},
    };
    struct qos_resource_qos q;
    struct qos_gi_kube k;

    (void)state;
    enabled_cfg(&q);
    qos_gi_kube_values(&q, &k);
    assert_int_equal(k.root, 0);
    assert_int_equal(k.burstable, 2);
    assert_int_equal(k.besteffort, -1);
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct qos_pod p = {
            .qos_label = cases[i].label, .kube_qos = cases[i].kube, .cpu_qos = cases[i].annotation};
        int64_t v = qos_gi_pod_value(&q, &p);

        if (v != cases[i].value)
            fail_msg("case %zu: %lld", i, (long long)v);
    }
}

static void test_disabled_classes(void **state)
{
    struct qos_resource_qos q;
    struct qos_pod p = {.kube_qos = QOS_KUBE_GUARANTEED};
    struct qos_gi_kube k;

    (void)state;
    enabled_cfg(&q);
    /* Guaranteed pods without a label take LS's value when LSR's cpuQOS is disabled. */
    q.classes[QOS_CLASS_LSR].cpu.enable = false;
    q.classes[QOS_CLASS_LS].cpu.group_identity = 1;
    assert_int_equal(qos_gi_pod_value(&q, &p), 1);
    p.qos_label = API_QOS_LSR;
    assert_int_equal(qos_gi_pod_value(&q, &p), 0);
    /* A disabled class gives 0 even if a value is present. */
    q.classes[QOS_CLASS_BE].cpu.enable = false;
    qos_gi_kube_values(&q, &k);
    assert_int_equal(k.besteffort, 0);
    assert_int_equal(k.burstable, 1);
    /* Another CPU policy (coreSched): no bvt at all, annotations included. */
    q.cpu_policy = QOS_CPU_POLICY_CORE_SCHED;
    assert_false(qos_gi_enabled(&q));
    p.qos_label = API_QOS_LS;
    p.cpu_qos = "{\"enable\":true,\"groupIdentity\":2}";
    assert_int_equal(qos_gi_pod_value(&q, &p), 0);
    qos_gi_kube_values(&q, &k);
    assert_int_equal(k.burstable, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_disabled_classes),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
