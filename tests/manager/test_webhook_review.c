/*
 * Tests for manager/webhook's protocol side (review.c): the AdmissionReview v1 envelope
 * (uid echoed, 404 for paths off or unknown, 400 for what is not a review), --feature-gates
 * parsing, and the webhook configurations the manager maintains: upstream's names, paths,
 * rules, failure policies and selectors, only for enabled handlers, the caBundle, and url
 * instead of service when asked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/base.h"
#include "testutil.h"
#include "webhooktest.h"

static void test_envelope(void **state)
{
    struct webhook_config cfg = {0};
    struct webhook_data d = {0};
    struct strbuf err = STRBUF_INIT;
    cJSON *resp = NULL, *bad;

    (void)state;
    webhook_gates_default(&cfg.gates);
    bad = J("{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\","
            "\"request\":{\"uid\":\"x\",\"operation\":\"CREATE\"}}");
    assert_int_equal(webhook_review(&cfg, WEBHOOK_PATH_VALIDATE_POD, bad, &d, &resp, &err),
                     -EINVAL);
    assert_string_equal(err.buf, "expected an AdmissionReview of admission.k8s.io/v1");
    cJSON_Delete(bad);
    strbuf_reset(&err);
    bad = J("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}");
    assert_int_equal(webhook_review(&cfg, WEBHOOK_PATH_VALIDATE_POD, bad, &d, &resp, &err),
                     -EINVAL);
    assert_int_equal(webhook_review(&cfg, "/nope", bad, &d, &resp, &err), -ENOENT);
    /* ConfigMapValidatingWebhook and NodeMutatingWebhook are off by default. */
    assert_int_equal(webhook_review(&cfg, WEBHOOK_PATH_VALIDATE_CM, bad, &d, &resp, &err), -ENOENT);
    assert_false(webhook_path_enabled(&cfg, WEBHOOK_PATH_MUTATE_NODE, NULL));
    assert_true(webhook_path_enabled(&cfg, WEBHOOK_PATH_VALIDATE_QUOTA, NULL));
    cfg.gates.framework = false;
    assert_false(webhook_path_enabled(&cfg, WEBHOOK_PATH_VALIDATE_QUOTA, NULL));
    cJSON_Delete(bad);
    strbuf_release(&err);
}

static void test_gates(void **state)
{
    struct webhook_gates g;
    struct strbuf err = STRBUF_INIT;

    (void)state;
    webhook_gates_default(&g);
    assert_true(g.pod_mutating && g.pod_validating && g.elastic_mutating && g.framework);
    assert_false(g.configmap_validating || g.node_mutating || g.skip_mutating_resources);
    assert_int_equal(webhook_gates_parse("ConfigMapValidatingWebhook=true, PodMutatingWebhook=0,"
                                         "MultiQuotaTree=false,EnableSyncGPUSharedResource=true,"
                                         "DisableDeviceResourceSpec=true",
                                         &g, &err),
                     0);
    assert_true(g.configmap_validating && g.disable_device_spec);
    assert_false(g.pod_mutating);
    /* A gate that would turn on what koord does not implement is refused, not ignored. */
    assert_int_equal(webhook_gates_parse("MultiQuotaTree=true", &g, &err), -EINVAL);
    assert_string_equal(err.buf, "feature gate MultiQuotaTree=true is not supported by koord "
                                 "manager (what it enables upstream is not implemented; "
                                 "docs/cli.md)");
    strbuf_reset(&err);
    assert_int_equal(webhook_gates_parse("EnableQuotaAdmission=1", &g, &err), -EINVAL);
    strbuf_reset(&err);
    assert_int_equal(webhook_gates_parse("NoSuchGate=true", &g, &err), -EINVAL);
    assert_string_equal(err.buf, "unrecognized feature gate: NoSuchGate");
    strbuf_reset(&err);
    assert_int_equal(webhook_gates_parse("PodMutatingWebhook=yes", &g, &err), -EINVAL);
    strbuf_reset(&err);
    assert_int_equal(webhook_gates_parse("PodMutatingWebhook", &g, &err), -EINVAL);
    assert_int_equal(webhook_gates_parse("", &g, &err), 0);
    strbuf_release(&err);
}

static void test_configurations(void **state)
{
    struct webhook_config cfg = {0};
    cJSON *m = NULL, *v = NULL;

    (void)state;
    webhook_gates_default(&cfg.gates);
    webhook_configurations(&cfg, "CA", NULL, &m, &v);
    /* base64("CA") = "Q0E=" */
    assert_json_eq_at(
        m,
        "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":"
        "\"MutatingWebhookConfiguration\",\"metadata\":{\"name\":"
        "\"koordinator-mutating-webhook-configuration\"},\"webhooks\":["
        "{\"name\":\"melasticquota.koordinator.sh\",\"admissionReviewVersions\":[\"v1\"],"
        "\"clientConfig\":{\"service\":{\"namespace\":\"koordinator-system\",\"name\":"
        "\"koordinator-webhook-service\",\"path\":"
        "\"/mutate-scheduling-sigs-k8s-io-v1alpha1-elasticquota\",\"port\":443},\"caBundle\":"
        "\"Q0E=\"},\"failurePolicy\":\"Fail\",\"rules\":[{\"apiGroups\":["
        "\"scheduling.sigs.k8s.io\"],\"apiVersions\":[\"v1alpha1\"],\"operations\":[\"CREATE\"],"
        "\"resources\":[\"elasticquotas\"]}],\"sideEffects\":\"None\"},"
        "{\"name\":\"mpod-create.koordinator.sh\",\"admissionReviewVersions\":[\"v1\"],"
        "\"clientConfig\":{\"service\":{\"namespace\":\"koordinator-system\",\"name\":"
        "\"koordinator-webhook-service\",\"path\":\"/mutate-pod\",\"port\":443},\"caBundle\":"
        "\"Q0E=\"},\"failurePolicy\":\"Fail\",\"rules\":[{\"apiGroups\":[\"\"],\"apiVersions\":"
        "[\"v1\"],\"operations\":[\"CREATE\"],\"resources\":[\"pods\"]}],\"sideEffects\":"
        "\"None\",\"namespaceSelector\":{\"matchExpressions\":[{\"key\":\"control-plane\","
        "\"operator\":\"DoesNotExist\"}]}},"
        "{\"name\":\"mpod-update.koordinator.sh\",\"admissionReviewVersions\":[\"v1\"],"
        "\"clientConfig\":{\"service\":{\"namespace\":\"koordinator-system\",\"name\":"
        "\"koordinator-webhook-service\",\"path\":\"/mutate-pod\",\"port\":443},\"caBundle\":"
        "\"Q0E=\"},\"failurePolicy\":\"Fail\",\"rules\":[{\"apiGroups\":[\"\"],\"apiVersions\":"
        "[\"v1\"],\"operations\":[\"UPDATE\"],\"resources\":[\"pods\"]}],\"sideEffects\":"
        "\"None\",\"namespaceSelector\":{\"matchExpressions\":[{\"key\":\"control-plane\","
        "\"operator\":\"DoesNotExist\"}]},\"objectSelector\":{\"matchExpressions\":[{\"key\":"
        "\"pod.koordinator.sh/mutating-update\",\"operator\":\"In\",\"values\":[\"true\"]}]}}]}",
        __LINE__);
    cJSON_Delete(m);
    cJSON_Delete(v);
    /* With the ConfigMap gate: vconfigmap with its objectSelector; by url. */
    cfg.gates.configmap_validating = true;
    cfg.gates.elastic_validating = false;
    webhook_configurations(&cfg, "CA", "https://127.0.0.1:9876", &m, &v);
    assert_json_eq_at(
        v,
        "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":"
        "\"ValidatingWebhookConfiguration\",\"metadata\":{\"name\":"
        "\"koordinator-validating-webhook-configuration\"},\"webhooks\":["
        "{\"name\":\"vconfigmap.koordinator.sh\",\"admissionReviewVersions\":[\"v1\"],"
        "\"clientConfig\":{\"url\":\"https://127.0.0.1:9876/validate-configmap\",\"caBundle\":"
        "\"Q0E=\"},\"failurePolicy\":\"Fail\",\"rules\":[{\"apiGroups\":[\"\"],\"apiVersions\":"
        "[\"v1\"],\"operations\":[\"CREATE\",\"UPDATE\",\"DELETE\"],\"resources\":"
        "[\"configmaps\"]}],\"sideEffects\":\"None\",\"objectSelector\":{\"matchExpressions\":"
        "[{\"key\":\"koordinator.sh/configmap-type\",\"operator\":\"In\",\"values\":"
        "[\"slo-controller-config\"]}]}},"
        "{\"name\":\"vpod.koordinator.sh\",\"admissionReviewVersions\":[\"v1\"],"
        "\"clientConfig\":{\"url\":\"https://127.0.0.1:9876/validate-pod\",\"caBundle\":"
        "\"Q0E=\"},\"failurePolicy\":\"Fail\",\"rules\":[{\"apiGroups\":[\"\"],\"apiVersions\":"
        "[\"v1\"],\"operations\":[\"CREATE\",\"UPDATE\"],\"resources\":[\"pods\"]}],"
        "\"sideEffects\":\"None\",\"namespaceSelector\":{\"matchExpressions\":[{\"key\":"
        "\"control-plane\",\"operator\":\"DoesNotExist\"}]}}]}",
        __LINE__);
    cJSON_Delete(m);
    cJSON_Delete(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_envelope),
        cmocka_unit_test(test_gates),
        cmocka_unit_test(test_configurations),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
