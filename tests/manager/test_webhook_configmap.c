/*
 * Tests for manager/webhook /validate-configmap (manager-behaviour.md 1.7): only
 * slo-controller-config in its namespace is checked, DELETE passes, an update checks only the
 * keys it changes, refusals are HTTP 400 in upstream's ___{"reason","message"}___ form with the
 * reason of the failing step, and real Nodes matching two node entries of one key are refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/base.h"
#include "testutil.h"
#include "webhooktest.h"

#define CM(name, ns, data)                                                                         \
    "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"" ns "\"},\"data\":{" data "}}"
#define SLO(data) CM("slo-controller-config", "koordinator-system", data)
#define BAD_JSON  "\"colocation-config\":\"{\\\"enable\\\":\""
#define NEGATIVE  "\"colocation-config\":\"{\\\"cpuReclaimThresholdPercent\\\":-1}\""
#define GOOD      "\"colocation-config\":\"{\\\"enable\\\":true}\""
#define TWO_ENTRIES                                                                                \
    "\"resource-threshold-config\":\"{\\\"clusterStrategy\\\":{\\\"enable\\\":true},"              \
    "\\\"nodeStrategies\\\":[{\\\"name\\\":\\\"a\\\",\\\"nodeSelector\\\":{\\\"matchLabels\\\":"   \
    "{\\\"a\\\":\\\"1\\\"}}},{\\\"name\\\":\\\"b\\\",\\\"nodeSelector\\\":{\\\"matchLabels\\\":"   \
    "{\\\"b\\\":\\\"1\\\"}}}]}\""

static void run(struct webhook_config *cfg, const struct webhook_data *d, const char *op,
                const char *obj, const char *old, struct wt_out *out)
{
    wt_run(cfg, WEBHOOK_PATH_VALIDATE_CM,
           wt_review(op, "", "configmaps", "", "koordinator-system", obj, old), d, out);
    wt_out_release(out);
}

static void expect_refused(const struct wt_out *out, const char *reason, const char *needle)
{
    struct strbuf want = STRBUF_INIT;

    assert_false(out->allowed);
    assert_int_equal(out->code, 400);
    strbuf_addf(&want, "___{\"reason\":\"%s\",\"message\":\"", reason);
    if (strncmp(out->message, want.buf, want.len) || !strstr(out->message, needle) ||
        strcmp(out->message + strlen(out->message) - 5, "\"}___"))
        fail_msg("message %s: want reason %s and %s", out->message, reason, needle);
    strbuf_release(&want);
}

static void test_configmap(void **state)
{
    struct webhook_config cfg = {0};
    struct webhook_data d = {0};
    struct wt_out out;
    cJSON *node = J("{\"metadata\":{\"name\":\"n1\",\"labels\":{\"a\":\"1\",\"b\":\"1\"}}}");

    (void)state;
    webhook_gates_default(&cfg.gates);
    cfg.gates.configmap_validating = true;

    run(&cfg, &d, "CREATE", CM("other", "koordinator-system", BAD_JSON), NULL, &out);
    assert_true(out.allowed);
    run(&cfg, &d, "CREATE", CM("slo-controller-config", "default", BAD_JSON), NULL, &out);
    assert_true(out.allowed);
    run(&cfg, &d, "DELETE", NULL, SLO(BAD_JSON), &out);
    assert_true(out.allowed);
    run(&cfg, &d, "CREATE", SLO(GOOD), NULL, &out);
    assert_true(out.allowed);

    run(&cfg, &d, "CREATE", SLO(BAD_JSON), NULL, &out);
    expect_refused(&out, "ParseConfigFail", "data[colocation-config]");
    run(&cfg, &d, "UPDATE", SLO(NEGATIVE), SLO(GOOD), &out);
    expect_refused(&out, "ConfigParamInvalid", "cpuReclaimThresholdPercent");
    /* Unchanged keys are not checked again: the bad one stays, the new one is fine. */
    run(&cfg, &d, "UPDATE", SLO(NEGATIVE "," TWO_ENTRIES), SLO(NEGATIVE), &out);
    assert_true(out.allowed);

    /* Step 6: a real node matching both entries. */
    d.nodes = (const cJSON *const *)&node;
    d.nnodes = 1;
    run(&cfg, &d, "CREATE", SLO(TWO_ENTRIES), NULL, &out);
    expect_refused(&out, "ExistNodeConflict", "n1");
    /* The configured name and namespace are the ones checked. */
    cfg.config_name = "other";
    run(&cfg, &d, "CREATE", SLO(TWO_ENTRIES), NULL, &out);
    assert_true(out.allowed);
    cJSON_Delete(node);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_configmap),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
