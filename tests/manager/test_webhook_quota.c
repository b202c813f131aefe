/*
 * Tests for manager/webhook's ElasticQuota and node-status webhooks (manager-behaviour.md 6.2,
 * 4.8): mutation on create (parent defaulted to the root, the parent's tree id copied,
 * shared-weight from max), the validating rules through the informer-fed lookup (min sum under
 * the parent, unknown quotas on update and delete, pods bound on delete), and resource
 * amplification of a node's allocatable, each written by hand from the reference.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/base.h"
#include "testutil.h"
#include "webhooktest.h"

#define P "quota.scheduling.koordinator.sh/"
#define G "scheduling.sigs.k8s.io"

static int pods_bound(void *ud, const cJSON *q, bool by_namespace, bool *ret)
{
    const cJSON *pod = ud;

    *ret = api_quota_pod_bound(q, pod, by_namespace);
    return 0;
}

static void test_quota(void **state)
{
    struct webhook_config cfg = {0};
    cJSON *pod = J("{\"metadata\":{\"name\":\"p\",\"namespace\":\"x\",\"labels\":{\"" P
                   "name\":\"leaf\"}}}");
    cJSON *quotas[] = {
        J("{\"metadata\":{\"name\":\"parent\",\"namespace\":\"q\",\"labels\":{\"" P
          "is-parent\":\"true\",\"" P "tree-id\":\"t1\"}},\"spec\":{\"max\":{\"cpu\":\"10\"},"
          "\"min\":{\"cpu\":\"4\"}}}"),
        J("{\"metadata\":{\"name\":\"leaf\",\"namespace\":\"q\",\"labels\":{\"" P
          "parent\":\"parent\",\"" P "tree-id\":\"t1\"}},\"spec\":{\"max\":{\"cpu\":\"10\"},"
          "\"min\":{\"cpu\":\"3\"}}}"),
    };
    struct webhook_data d = {.quotas = {.quotas = (const cJSON *const *)quotas,
                                        .n = ARRAY_SIZE(quotas),
                                        .pods_bound = pods_bound,
                                        .userdata = pod}};
    struct wt_out out;

    (void)state;
    webhook_gates_default(&cfg.gates);
    /* Mutation: a child of parent gets its tree id and the shared weight of its max. */
    wt_run(&cfg, WEBHOOK_PATH_MUTATE_QUOTA,
           wt_review("CREATE", G, "elasticquotas", "", "q",
                     "{\"metadata\":{\"name\":\"c2\",\"namespace\":\"q\",\"labels\":{\"" P
                     "parent\":\"parent\"}},\"spec\":{\"max\":{\"cpu\":\"10\"},\"min\":{\"cpu\":"
                     "\"2\"}}}",
                     NULL),
           &d, &out);
    assert_true(out.allowed);
    assert_json_eq_at(out.object,
                      "{\"metadata\":{\"name\":\"c2\",\"namespace\":\"q\",\"labels\":{\"" P
                      "parent\":\"parent\",\"" P "tree-id\":\"t1\"},\"annotations\":{\"" P
                      "shared-weight\":\"{\\\"cpu\\\":\\\"10\\\"}\"}},\"spec\":{\"max\":{"
                      "\"cpu\":\"10\"},\"min\":{\"cpu\":\"2\"}}}",
                      __LINE__);
    wt_out_release(&out);
    /* A top-level quota: parent defaults to the root. */
    wt_run(&cfg, WEBHOOK_PATH_MUTATE_QUOTA,
           wt_review("CREATE", G, "elasticquotas", "", "q",
                     "{\"metadata\":{\"name\":\"top\",\"namespace\":\"q\"},\"spec\":{\"max\":{}}}",
                     NULL),
           &d, &out);
    assert_json_eq_at(out.object,
                      "{\"metadata\":{\"name\":\"top\",\"namespace\":\"q\",\"labels\":{\"" P
                      "parent\":\"koordinator-root-quota\"},\"annotations\":{\"" P
                      "shared-weight\":\"{}\"}},\"spec\":{\"max\":{}}}",
                      __LINE__);
    wt_out_release(&out);
    /* An unknown parent. */
    wt_run(&cfg, WEBHOOK_PATH_MUTATE_QUOTA,
           wt_review("CREATE", G, "elasticquotas", "", "q",
                     "{\"metadata\":{\"name\":\"c3\",\"labels\":{\"" P "parent\":\"nope\"}}}",
                     NULL),
           &d, &out);
    assert_false(out.allowed);
    assert_int_equal(out.code, 400);
    assert_string_equal(out.message, "parent not exist");
    wt_out_release(&out);

    /* Validation: min 3 + 2 fits parent min 4? No: refused. */
    wt_run(&cfg, WEBHOOK_PATH_VALIDATE_QUOTA,
           wt_review("CREATE", G, "elasticquotas", "", "q",
                     "{\"metadata\":{\"name\":\"c2\",\"labels\":{\"" P "parent\":\"parent\",\"" P
                     "tree-id\":\"t1\"}},\"spec\":{\"max\":{\"cpu\":\"10\"},\"min\":{\"cpu\":"
                     "\"2\"}}}",
                     NULL),
           &d, &out);
    assert_false(out.allowed);
    assert_string_equal(
        out.message, "checkMinQuotaSum allChildren SumMinQuota > parentMinQuota, parent: parent");
    wt_out_release(&out);
    /* min 1 fits. */
    wt_run(&cfg, WEBHOOK_PATH_VALIDATE_QUOTA,
           wt_review("CREATE", G, "elasticquotas", "", "q",
                     "{\"metadata\":{\"name\":\"c2\",\"labels\":{\"" P "parent\":\"parent\",\"" P
                     "tree-id\":\"t1\"}},\"spec\":{\"max\":{\"cpu\":\"10\"},\"min\":{\"cpu\":"
                     "\"1\"}}}",
                     NULL),
           &d, &out);
    assert_true(out.allowed);
    wt_out_release(&out);
    /* Delete: the leaf has a pod; the parent has a child; an unknown one is refused. */
    wt_run(&cfg, WEBHOOK_PATH_VALIDATE_QUOTA,
           wt_review("DELETE", G, "elasticquotas", "", "q", NULL,
                     "{\"metadata\":{\"name\":\"leaf\",\"namespace\":\"q\"}}"),
           &d, &out);
    assert_string_equal(out.message, "delete quota failed:leaf, has linked pods");
    wt_out_release(&out);
    wt_run(&cfg, WEBHOOK_PATH_VALIDATE_QUOTA,
           wt_review("DELETE", G, "elasticquotas", "", "q", NULL,
                     "{\"metadata\":{\"name\":\"parent\",\"namespace\":\"q\"}}"),
           &d, &out);
    assert_string_equal(out.message, "delete quota failed, quotaparent has child quota");
    wt_out_release(&out);
    wt_run(&cfg, WEBHOOK_PATH_VALIDATE_QUOTA,
           wt_review("DELETE", G, "elasticquotas", "", "q", NULL,
                     "{\"metadata\":{\"name\":\"ghost\",\"namespace\":\"q\"}}"),
           &d, &out);
    assert_false(out.allowed);
    assert_string_equal(out.message, "delete quota not exist in quotaInfoMap:ghost");
    wt_out_release(&out);
    /* Update of a label outside the tree passes without checks. */
    wt_run(&cfg, WEBHOOK_PATH_VALIDATE_QUOTA,
           wt_review("UPDATE", G, "elasticquotas", "", "q",
                     "{\"metadata\":{\"name\":\"ghost\",\"labels\":{\"x\":\"1\"}}}",
                     "{\"metadata\":{\"name\":\"ghost\"}}"),
           &d, &out);
    assert_true(out.allowed);
    wt_out_release(&out);
    for (size_t i = 0; i < ARRAY_SIZE(quotas); i++)
        cJSON_Delete(quotas[i]);
    cJSON_Delete(pod);
}

#define A_RATIO "node.koordinator.sh/resource-amplification-ratio"
#define A_RAW   "node.koordinator.sh/raw-allocatable"

static void test_node(void **state)
{
    struct webhook_config cfg = {0};
    struct webhook_data d = {0};
    struct wt_out out;

    (void)state;
    webhook_gates_default(&cfg.gates);
    cfg.gates.node_mutating = true;
    /* cpu 1.5x of 4 = 6, memory 1.0 untouched; raw recorded. */
    wt_run(&cfg, WEBHOOK_PATH_MUTATE_NODE,
           wt_review("UPDATE", "", "nodes", "status", "",
                     "{\"metadata\":{\"name\":\"n\",\"annotations\":{\"" A_RATIO
                     "\":\"{\\\"cpu\\\":1.5,\\\"memory\\\":1}\"}},\"status\":{\"allocatable\":{"
                     "\"cpu\":\"4\",\"memory\":\"8Gi\"}}}",
                     "{\"metadata\":{\"name\":\"n\"},\"status\":{\"allocatable\":{\"cpu\":\"4\","
                     "\"memory\":\"8Gi\"}}}"),
           &d, &out);
    assert_true(out.allowed);
    assert_json_eq_at(out.object,
                      "{\"metadata\":{\"name\":\"n\",\"annotations\":{\"" A_RATIO
                      "\":\"{\\\"cpu\\\":1.5,\\\"memory\\\":1}\",\"" A_RAW
                      "\":\"{\\\"cpu\\\":\\\"4\\\",\\\"memory\\\":\\\"8Gi\\\"}\"}},\"status\":{"
                      "\"allocatable\":{\"cpu\":\"6\",\"memory\":\"8Gi\"}}}",
                      __LINE__);
    wt_out_release(&out);
    /* The kubelet writes 6 again (unchanged vs old): amplified from the kept raw 4, not 6. */
    wt_run(
        &cfg, WEBHOOK_PATH_MUTATE_NODE,
        wt_review("UPDATE", "", "nodes", "status", "",
                  "{\"metadata\":{\"name\":\"n\",\"annotations\":{\"" A_RATIO
                  "\":\"{\\\"cpu\\\":1.5}\",\"" A_RAW
                  "\":\"{\\\"cpu\\\":\\\"4\\\"}\"}},\"status\":{\"allocatable\":{\"cpu\":"
                  "\"6\"}}}",
                  "{\"metadata\":{\"name\":\"n\"},\"status\":{\"allocatable\":{\"cpu\":\"6\"}}}"),
        &d, &out);
    assert_false(out.patched);
    wt_out_release(&out);
    /* No ratio: the raw annotation goes. */
    wt_run(&cfg, WEBHOOK_PATH_MUTATE_NODE,
           wt_review("UPDATE", "", "nodes", "status", "",
                     "{\"metadata\":{\"name\":\"n\",\"annotations\":{\"" A_RAW
                     "\":\"{}\"}},\"status\":{}}",
                     NULL),
           &d, &out);
    assert_json_eq_at(out.object,
                      "{\"metadata\":{\"name\":\"n\",\"annotations\":{}},\"status\":{}}", __LINE__);
    wt_out_release(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quota),
        cmocka_unit_test(test_node),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
