/*
 * Tests for api/elasticquota: the lookup-driven parts the two callers (koord apiserver's
 * store, koord manager's informers) rely on beyond the rule table of
 * tests/apiserver/test_admit_quota.c: which quota a pod belongs to (label, then the quota named
 * like its namespace, then a namespaces annotation, then the default quota), which pods count
 * as bound, which updates are checked at all, the bare messages, and need_known.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "api/elasticquota.h"
#include "base/base.h"
#include "testutil.h"

#define P "quota.scheduling.koordinator.sh/"

static void test_pod_quota(void **state)
{
    cJSON *q[] = {
        J("{\"metadata\":{\"name\":\"team\",\"namespace\":\"team\"}}"),
        J("{\"metadata\":{\"name\":\"shared\",\"namespace\":\"q\",\"annotations\":{\"" P
          "namespaces\":\"[\\\"a\\\",\\\"b\\\"]\"}}}"),
        J("{\"metadata\":{\"name\":\"elsewhere\",\"namespace\":\"other\"}}"),
    };
    struct api_quota_lookup l = {.quotas = (const cJSON *const *)q, .n = ARRAY_SIZE(q)};
    cJSON *labelled = J("{\"metadata\":{\"namespace\":\"team\",\"labels\":{\"" P "name\":\"x\"}}}");
    cJSON *in_team = J("{\"metadata\":{\"namespace\":\"team\"}}");
    cJSON *in_b = J("{\"metadata\":{\"namespace\":\"b\"}}");
    cJSON *in_other = J("{\"metadata\":{\"namespace\":\"elsewhere\"}}");

    (void)state;
    assert_string_equal(api_quota_of_pod(&l, labelled), "x");
    assert_string_equal(api_quota_of_pod(&l, in_team), "team");
    assert_string_equal(api_quota_of_pod(&l, in_b), "shared");
    /* A quota named like the namespace but living in another namespace does not count. */
    assert_string_equal(api_quota_of_pod(&l, in_other), API_QUOTA_DEFAULT);

    assert_true(api_quota_pod_bound(q[1], in_b, true));
    assert_false(api_quota_pod_bound(q[1], in_b, false));
    assert_true(api_quota_pod_bound(q[0], in_team, true));
    assert_false(api_quota_pod_bound(q[0], in_b, true));
    assert_true(api_quota_binds_namespace(q[1], "a"));
    assert_false(api_quota_binds_namespace(q[1], "c"));
    for (size_t i = 0; i < ARRAY_SIZE(q); i++)
        cJSON_Delete(q[i]);
    cJSON_Delete(labelled);
    cJSON_Delete(in_team);
    cJSON_Delete(in_b);
    cJSON_Delete(in_other);
}

static void test_touches_tree(void **state)
{
    cJSON *a = J("{\"metadata\":{\"name\":\"q\",\"labels\":{\"x\":\"1\"}},\"spec\":{\"max\":"
                 "{\"cpu\":\"1\"}},\"status\":{\"used\":{\"cpu\":\"1\"}}}");
    cJSON *b = J("{\"metadata\":{\"name\":\"q\",\"labels\":{\"x\":\"2\"}},\"spec\":{\"max\":"
                 "{\"cpu\":\"1\"}},\"status\":{}}");
    cJSON *c = J("{\"metadata\":{\"name\":\"q\",\"labels\":{\"" P
                 "parent\":\"p\"}},\"spec\":{\"max\":{\"cpu\":\"1\"}}}");
    cJSON *d = J("{\"metadata\":{\"name\":\"q\"},\"spec\":{\"max\":{\"cpu\":\"2\"}}}");

    (void)state;
    assert_false(api_quota_touches_tree(a, b)); /* other labels and status */
    assert_true(api_quota_touches_tree(a, c));  /* parent label */
    assert_true(api_quota_touches_tree(a, d));  /* spec */
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(c);
    cJSON_Delete(d);
}

static int no_pods_but_fail(void *ud, const cJSON *q, bool by_namespace, bool *ret)
{
    (void)ud;
    (void)q;
    (void)by_namespace;
    *ret = false;
    return -EIO;
}

static void test_messages(void **state)
{
    cJSON *root = J("{\"metadata\":{\"name\":\"koordinator-root-quota\"}}");
    cJSON *leaf = J("{\"metadata\":{\"name\":\"leaf\"}}");
    struct api_quota_lookup l = {.quotas = (const cJSON *const *)&leaf, .n = 1};
    struct strbuf why = STRBUF_INIT;

    (void)state;
    assert_int_equal(api_quota_validate_delete(&l, root, false, &why), -EACCES);
    assert_string_equal(why.buf, "can not delete quotaGroup :koordinator-root-quota");
    assert_int_equal(api_quota_validate_delete(&l, leaf, true, &why), 0);
    l.n = 0;
    assert_int_equal(api_quota_validate_delete(&l, leaf, true, &why), -EACCES);
    assert_string_equal(why.buf, "delete quota not exist in quotaInfoMap:leaf");
    assert_int_equal(api_quota_validate_delete(&l, leaf, false, &why), 0);
    /* A failing pods question fails the rule with its error. */
    l.pods_bound = no_pods_but_fail;
    assert_int_equal(api_quota_validate_delete(&l, leaf, false, &why), -EIO);
    strbuf_release(&why);
    cJSON_Delete(root);
    cJSON_Delete(leaf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pod_quota),
        cmocka_unit_test(test_touches_tree),
        cmocka_unit_test(test_messages),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
