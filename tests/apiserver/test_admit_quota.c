/*
 * Tests for apiserver/admit_quota: the ElasticQuota webhook rules of manager-behaviour.md 6.2
 * (mutation on create, self checks, the tree checks against the stored quotas and pods, the
 * delete rules), each accepted and refused, with upstream's denial messages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "apiserver/admit.h"
#include "apiserver/store.h"
#include "apiserver/store_memory.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "testutil.h"

#define DENIED "admission webhook \"vquota.kb.io\" denied the request: "
#define P      "quota.scheduling.koordinator.sh/"

static int setup(void **state)
{
    struct store *s;

    assert_int_equal(store_memory_new(&(struct store_memory_opts){.epoch = 1}, &s), 0);
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    store_close(*state);
    return 0;
}

/* An ElasticQuota in namespace "ns": labels and spec are JSON object bodies. */
static cJSON *quota(const char *name, const char *labels, const char *min, const char *max)
{
    char buf[1024];

    (void)snprintf(buf, sizeof(buf),
                   "{\"apiVersion\":\"scheduling.sigs.k8s.io/v1alpha1\",\"kind\":\"ElasticQuota\","
                   "\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"labels\":{%s}},"
                   "\"spec\":{\"min\":{%s},\"max\":{%s}}}",
                   name, labels, min, max);
    return J(buf);
}

static void put(struct store *s, const char *prefix, const cJSON *o)
{
    struct strbuf key = STRBUF_INIT, val = STRBUF_INIT;
    const cJSON *m = cJSON_GetObjectItem(o, "metadata");

    strbuf_addf(&key, "%s%s/%s", prefix, cJSON_GetObjectItem(m, "namespace")->valuestring,
                cJSON_GetObjectItem(m, "name")->valuestring);
    assert_int_equal(json_print(o, &val), 0);
    assert_int_equal(store_create(s, key.buf, val.buf, val.len, NULL), 0);
    strbuf_release(&key);
    strbuf_release(&val);
}

static void put_pod(struct store *s, const char *json)
{
    cJSON *pod = J(json);

    put(s, "/core/pods/", pod);
    cJSON_Delete(pod);
}

/* Admits q for creation and, when accepted, stores it as the API server would. */
static int create(struct store *s, cJSON *q, struct strbuf *why)
{
    int r;

    strbuf_reset(why);
    r = admit_quota_create(s, q, why);
    if (r == 0)
        put(s, "/scheduling.sigs.k8s.io/elasticquotas/", q);
    cJSON_Delete(q);
    return r;
}

static void assert_denied(int r, const struct strbuf *why, const char *msg)
{
    assert_int_equal(r, -EACCES);
    if (strncmp(why->buf, DENIED, strlen(DENIED)) || strcmp(why->buf + strlen(DENIED), msg))
        fail_msg("got \"%s\", want \"" DENIED "%s\"", why->buf, msg);
}

/* parent-p (is-parent, min cpu 10) <- a (min 6), then b (min 4) fits exactly, c does not. */
static void build_tree(struct store *s, struct strbuf *why)
{
    assert_int_equal(
        create(s,
               quota("parent-p", "\"" P "is-parent\":\"true\",\"" P "tree-id\":\"7\"",
                     "\"cpu\":\"10\",\"memory\":\"10Gi\"", "\"cpu\":\"20\",\"memory\":\"20Gi\""),
               why),
        0);
    assert_int_equal(create(s,
                            quota("a", "\"" P "parent\":\"parent-p\"", "\"cpu\":\"6\"",
                                  "\"cpu\":\"20\",\"memory\":\"20Gi\""),
                            why),
                     0);
}

static void test_mutation(void **state)
{
    struct store *s = *state;
    struct strbuf why = STRBUF_INIT;
    cJSON *q;

    build_tree(s, &why);
    /* Parent defaulted to the root, shared-weight to max. */
    q = quota("solo", "", "\"cpu\":\"1\"", "\"cpu\":\"2\"");
    assert_int_equal(admit_quota_create(s, q, &why), 0);
    assert_json_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(q, "metadata"), "labels"),
                   "{\"" P "parent\":\"koordinator-root-quota\"}");
    assert_json_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(q, "metadata"), "annotations"),
                   "{\"" P "shared-weight\":\"{\\\"cpu\\\":\\\"2\\\"}\"}");
    cJSON_Delete(q);
    /* The tree id comes from the parent; shared-weight keys follow max's. */
    q = quota("b", "\"" P "parent\":\"parent-p\"", "\"cpu\":\"4\"",
              "\"cpu\":\"20\",\"memory\":\"20Gi\"");
    CHECK(cJSON_AddItemToObject(cJSON_GetObjectItem(q, "metadata"), "annotations",
                                J("{\"" P "shared-weight\":\"{\\\"cpu\\\":\\\"3\\\",\\\"gpu\\\":"
                                  "\\\"1\\\"}\"}")));
    assert_int_equal(admit_quota_create(s, q, &why), 0);
    assert_json_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(q, "metadata"), "labels"),
                   "{\"" P "parent\":\"parent-p\",\"" P "tree-id\":\"7\"}");
    assert_json_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(q, "metadata"), "annotations"),
                   "{\"" P
                   "shared-weight\":\"{\\\"cpu\\\":\\\"3\\\",\\\"memory\\\":\\\"20Gi\\\"}\"}");
    cJSON_Delete(q);
    /* A parent that does not exist cannot lend its tree id. */
    q = quota("orphan", "\"" P "parent\":\"nope\"", "", "");
    assert_int_equal(admit_quota_create(s, q, &why), -EACCES);
    assert_string_equal(why.buf,
                        "admission webhook \"mquota.kb.io\" denied the request: parent not exist");
    cJSON_Delete(q);
    strbuf_release(&why);
}

static void test_self_checks(void **state)
{
    struct store *s = *state;
    struct strbuf why = STRBUF_INIT;

    assert_denied(create(s, quota("neg", "", "", "\"cpu\":\"-1\",\"memory\":\"1\""), &why), &why,
                  "neg quota.Spec.Max's value < 0, in dimensions :[cpu]");
    assert_denied(create(s, quota("negmin", "", "\"memory\":\"-1Gi\"", "\"memory\":\"1\""), &why),
                  &why, "negmin quota.Spec.Min's value < 0, in dimensions :[memory]");
    assert_denied(create(s,
                         quota("big", "", "\"cpu\":\"3\",\"memory\":\"1Gi\"",
                               "\"memory\":\"2Gi\",\"cpu\":\"2\""),
                         &why),
                  &why, "big min :map[cpu:3 memory:1Gi] > max,map[cpu:2 memory:2Gi]");
    assert_denied(create(s, quota("nokey", "", "\"gpu\":\"1\"", "\"cpu\":\"2\""), &why), &why,
                  "nokey min :map[gpu:1] > max,map[cpu:2]");
    /* min == max is fine. */
    assert_int_equal(create(s, quota("eq", "", "\"cpu\":\"2\"", "\"cpu\":\"2000m\""), &why), 0);
    /* A name is unique across namespaces. */
    assert_denied(create(s, quota("eq", "", "", ""), &why), &why,
                  "AddQuota quota already exist:eq");
    strbuf_release(&why);
}

static void test_shared_weight_and_strict_keys(void **state)
{
    struct store *s = *state;
    struct strbuf why = STRBUF_INIT;
    cJSON *q = quota("sw", "", "", "\"cpu\":\"2\"");
    cJSON *old, *upd;

    CHECK(cJSON_AddItemToObject(cJSON_GetObjectItem(q, "metadata"), "annotations",
                                J("{\"" P "shared-weight\":\"{\\\"cpu\\\":\\\"-1\\\"}\"}")));
    assert_denied(create(s, q, &why), &why,
                  "sw quota.Annotation[" P "shared-weight]'s value < 0, in dimension :[cpu]");

    /* max below used for a strictly checked key. */
    assert_int_equal(create(s, quota("st", "", "", "\"cpu\":\"4\""), &why), 0);
    old = quota("st", "\"" P "parent\":\"koordinator-root-quota\"", "", "\"cpu\":\"4\"");
    upd = quota("st", "\"" P "parent\":\"koordinator-root-quota\"", "", "\"cpu\":\"2\"");
    CHECK(cJSON_AddItemToObject(cJSON_GetObjectItem(upd, "metadata"), "annotations",
                                J("{\"" P "max-strict-check-resource-keys\":\"[\\\"cpu\\\"]\"}")));
    CHECK(cJSON_AddItemToObject(upd, "status", J("{\"used\":{\"cpu\":\"3\"}}")));
    assert_denied(admit_quota_update(s, old, upd, &why), &why,
                  "st quota.Spec.Max[cpu] 2 < quota.Status.Used[cpu] 3, strictly checked by " P
                  "max-strict-check-resource-keys");
    cJSON_Delete(cJSON_DetachItemFromObject(upd, "status"));
    CHECK(cJSON_AddItemToObject(upd, "status", J("{\"used\":{\"cpu\":\"2\"}}")));
    assert_int_equal(admit_quota_update(s, old, upd, &why), 0);
    cJSON_Delete(old);
    cJSON_Delete(upd);
    strbuf_release(&why);
}

static void test_tree(void **state)
{
    struct store *s = *state;
    struct strbuf why = STRBUF_INIT;

    build_tree(s, &why);
    /* 6 + 4 = parent's 10: accepted. */
    assert_int_equal(create(s,
                            quota("b", "\"" P "parent\":\"parent-p\"", "\"cpu\":\"4\"",
                                  "\"cpu\":\"20\",\"memory\":\"20Gi\""),
                            &why),
                     0);
    /* One more milli-cpu is too much. */
    assert_denied(create(s,
                         quota("c", "\"" P "parent\":\"parent-p\"", "\"cpu\":\"1m\"",
                               "\"cpu\":\"20\",\"memory\":\"20Gi\""),
                         &why),
                  &why,
                  "checkMinQuotaSum allChildren SumMinQuota > parentMinQuota, parent: parent-p");
    /* max keys must be the parent's. */
    assert_denied(create(s,
                         quota("c", "\"" P "parent\":\"parent-p\"", "\"gpu\":\"1\"",
                               "\"cpu\":\"20\",\"memory\":\"20Gi\",\"gpu\":\"1\""),
                         &why),
                  &why,
                  "checkSubAndParentGroupMaxQuotaKeySame failed: parent-p's key is not the same "
                  "with c");
    /* allow-force-update skips the sum. */
    assert_int_equal(
        create(s,
               quota("c", "\"" P "parent\":\"parent-p\",\"" P "allow-force-update\":\"true\"",
                     "\"cpu\":\"1\"", "\"cpu\":\"20\",\"memory\":\"20Gi\""),
               &why),
        0);
    /* Parent missing, parent not a parent. */
    assert_denied(
        create(s, quota("d", "\"" P "parent\":\"ghost\",\"" P "tree-id\":\"7\"", "", ""), &why),
        &why, "d has parentName ghost but not find parentInfo in quotaInfoMap");
    assert_denied(create(s, quota("e", "\"" P "parent\":\"a\"", "", "\"cpu\":\"1\""), &why), &why,
                  "e has parentName a but the parentQuotaInfo's IsParent is false");
    /* Tree id must match the parent's. */
    assert_denied(create(s,
                         quota("f", "\"" P "parent\":\"parent-p\",\"" P "tree-id\":\"8\"", "",
                               "\"cpu\":\"1\",\"memory\":\"1\""),
                         &why),
                  &why, "f has tree id \"8\" but its parent parent-p has tree id \"7\"");
    /* A parent's min below its children's sum. */
    {
        cJSON *old =
            quota("parent-p", "\"" P "is-parent\":\"true\",\"" P "tree-id\":\"7\"",
                  "\"cpu\":\"10\",\"memory\":\"10Gi\"", "\"cpu\":\"20\",\"memory\":\"20Gi\"");
        cJSON *upd =
            quota("parent-p", "\"" P "is-parent\":\"true\",\"" P "tree-id\":\"7\"",
                  "\"cpu\":\"9\",\"memory\":\"10Gi\"", "\"cpu\":\"20\",\"memory\":\"20Gi\"");
        assert_denied(admit_quota_update(s, old, upd, &why), &why,
                      "checkMinQuotaSum allChildrn SumMinQuota > MinQuota, parent: parent-p");
        /* Children's 6 + 4 + 1 (forced) = 11 > 10 already; raising to 11 is accepted. */
        cJSON_Delete(upd);
        upd = quota("parent-p", "\"" P "is-parent\":\"true\",\"" P "tree-id\":\"7\"",
                    "\"cpu\":\"11\",\"memory\":\"10Gi\"", "\"cpu\":\"20\",\"memory\":\"20Gi\"");
        assert_int_equal(admit_quota_update(s, old, upd, &why), 0);
        cJSON_Delete(upd);
        /* is-parent cannot turn false under children; the tree id cannot change. */
        upd = quota("parent-p", "\"" P "tree-id\":\"7\"", "\"cpu\":\"11\"", "\"cpu\":\"20\"");
        assert_denied(admit_quota_update(s, old, upd, &why), &why,
                      "IsParent is forbidden modify now, quotaName:parent-p has child quotas");
        cJSON_Delete(upd);
        upd = quota("parent-p", "\"" P "is-parent\":\"true\",\"" P "tree-id\":\"9\"",
                    "\"cpu\":\"10\",\"memory\":\"10Gi\"", "\"cpu\":\"20\",\"memory\":\"20Gi\"");
        assert_denied(admit_quota_update(s, old, upd, &why), &why,
                      "TreeID is forbidden modify now, quotaName:parent-p");
        cJSON_Delete(upd);
        /* An update that leaves the tree alone is not checked (only an annotation changed). */
        upd = cJSON_Duplicate(old, true);
        CHECK(cJSON_AddItemToObject(cJSON_GetObjectItem(upd, "metadata"), "annotations",
                                    J("{\"x\":\"y\"}")));
        assert_int_equal(admit_quota_update(s, old, upd, &why), 0);
        cJSON_Delete(upd);
        cJSON_Delete(old);
    }
    strbuf_release(&why);
}

static void test_delete(void **state)
{
    struct store *s = *state;
    struct strbuf why = STRBUF_INIT;
    cJSON *old, *upd, *q;

    build_tree(s, &why);
    /* The system and root quotas cannot change; three names cannot go. */
    old = quota("koordinator-system-quota", "", "", "\"cpu\":\"1\"");
    upd = quota("koordinator-system-quota", "", "", "\"cpu\":\"2\"");
    assert_denied(admit_quota_update(s, old, upd, &why), &why,
                  "invalid quota koordinator-system-quota");
    cJSON_Delete(old);
    cJSON_Delete(upd);
    q = quota("koordinator-default-quota", "", "", "");
    assert_denied(admit_quota_delete(s, q, &why), &why,
                  "can not delete quotaGroup :koordinator-default-quota");
    cJSON_Delete(q);
    /* A parent with children stays. */
    q = quota("parent-p", "\"" P "is-parent\":\"true\"", "", "");
    assert_denied(admit_quota_delete(s, q, &why), &why,
                  "delete quota failed, quotaparent-p has child quota");
    cJSON_Delete(q);
    /* A quota with a pod labelled with its name stays; without, it goes. */
    q = quota("a", "\"" P "parent\":\"parent-p\"", "", "");
    put_pod(s, "{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\",\"labels\":{\"" P
               "name\":\"a\"}}}");
    assert_denied(admit_quota_delete(s, q, &why), &why, "delete quota failed:a, has linked pods");
    assert_int_equal(store_delete(s, "/core/pods/ns/p1", 0, NULL, NULL), 0);
    assert_int_equal(admit_quota_delete(s, q, &why), 0);
    cJSON_Delete(q);
    strbuf_release(&why);
}

static void test_namespaces_and_pods(void **state)
{
    struct store *s = *state;
    struct strbuf why = STRBUF_INIT;
    cJSON *q, *old, *upd;

    q = quota("team", "", "", "\"cpu\":\"1\"");
    CHECK(cJSON_AddItemToObject(cJSON_GetObjectItem(q, "metadata"), "annotations",
                                J("{\"" P "namespaces\":\"[\\\"dev\\\"]\"}")));
    assert_int_equal(create(s, q, &why), 0);
    q = quota("team2", "", "", "\"cpu\":\"1\"");
    CHECK(cJSON_AddItemToObject(cJSON_GetObjectItem(q, "metadata"), "annotations",
                                J("{\"" P "namespaces\":\"[\\\"prod\\\",\\\"dev\\\"]\"}")));
    assert_denied(create(s, q, &why), &why, "namespace dev is already bound to quota team");
    /* A pod in a namespace the quota binds keeps it from becoming a parent. */
    put_pod(s, "{\"metadata\":{\"name\":\"p\",\"namespace\":\"dev\"}}");
    old = quota("team", "\"" P "parent\":\"koordinator-root-quota\"", "", "\"cpu\":\"1\"");
    CHECK(cJSON_AddItemToObject(cJSON_GetObjectItem(old, "metadata"), "annotations",
                                J("{\"" P "namespaces\":\"[\\\"dev\\\"]\"}")));
    upd = cJSON_Duplicate(old, true);
    CHECK(
        cJSON_AddStringToObject(cJSON_GetObjectItem(cJSON_GetObjectItem(upd, "metadata"), "labels"),
                                P "is-parent", "true"));
    assert_denied(admit_quota_update(s, old, upd, &why), &why,
                  "IsParent is forbidden modify now, quotaName:team has bound pods");
    assert_int_equal(store_delete(s, "/core/pods/dev/p", 0, NULL, NULL), 0);
    assert_int_equal(admit_quota_update(s, old, upd, &why), 0);
    cJSON_Delete(old);
    cJSON_Delete(upd);
    strbuf_release(&why);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_mutation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_self_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_weight_and_strict_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_namespaces_and_pods, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
