/*
 * Tests for manager/quotaprofile against a real koord API server (tests/kube/kubetest.h) with
 * the ElasticQuotaProfile and ElasticQuota CRDs installed, so the server's ElasticQuota
 * admission (manager-behaviour.md 6.2) sees the controller's writes as upstream's webhook
 * would: a profile yields its ElasticQuota with min = ratio x the selected nodes' allocatable
 * (hand-computed below; cordoned and NotReady nodes count in the total and in the
 * unschedulable annotation), the labels and annotations of section 8, the tree id on the
 * profile; nothing is written while nothing changes; a new node shows at the next re-sync; a
 * refused create or update becomes a Warning Event on the profile; deleting the profile leaves
 * the quota. Conditions are awaited by polling with a deadline, never by sleeping.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "api/api.h"
#include "api/crd.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "kube/client.h"
#include "kube/kubetest.h"
#include "manager/quotaprofile/quotaprofile.h"
#include "testutil.h"

#define P          "quota.scheduling.koordinator.sh/"
#define DEADLINE_S 60.0
/* FNV-1a 64 of "team/prof", computed by hand (offset 14695981039346656037, prime
 * 1099511628211 over the 9 bytes). */
#define TREE_ID "10081201829291882158"
#define MAXQ    "4611686018427387"

static const struct kube_resource res_crds = {
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false};
static const struct kube_resource res_namespaces = {"", "v1", "namespaces", "Namespace", false};
static const struct kube_resource res_profiles = {
    "quota.koordinator.sh", "v1alpha1", "elasticquotaprofiles", "ElasticQuotaProfile", true};
static const struct kube_resource res_quotas = {"scheduling.sigs.k8s.io", "v1alpha1",
                                                "elasticquotas", "ElasticQuota", true};

struct env {
    struct kt_server *srv;
    struct kube_client *c;
    struct quotaprofile_controller *ctl;
    struct strbuf why;
};

static void create(struct env *e, const struct kube_resource *r, const char *ns, const char *json)
{
    cJSON *o = J(json);
    int rc = kube_create(e->c, r, ns, o, NULL, NULL);

    cJSON_Delete(o);
    if (rc != 0)
        fail_msg("create %s %s: %d", r->plural, json, rc);
}

static void install_crds(struct env *e)
{
    for (const struct api_kind *const *k = api_kinds(); *k; k++) {
        cJSON *crd = NULL;
        if (!(*k)->crd ||
            (strcmp((*k)->kind, "ElasticQuotaProfile") && strcmp((*k)->kind, "ElasticQuota")))
            continue;
        int rc;
        assert_int_equal(api_crd_build(*k, &crd), 0);
        rc = kube_create(e->c, &res_crds, NULL, crd, NULL, NULL);
        cJSON_Delete(crd);
        assert_int_equal(rc, 0);
    }
}

/* A node with the given labels, allocatable, spec and Ready status. */
static void add_node(struct env *e, const char *name, const char *pool, const char *alloc,
                     bool unschedulable, const char *ready)
{
    char json[1024];

    (void)snprintf(json, sizeof(json),
                   "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\","
                   "\"labels\":{\"pool\":\"%s\"}},\"spec\":{\"unschedulable\":%s},"
                   "\"status\":{\"allocatable\":{%s},\"conditions\":[{\"type\":\"Ready\","
                   "\"status\":\"%s\"}]}}",
                   name, pool, unschedulable ? "true" : "false", alloc, ready);
    create(e, &kube_res_nodes, NULL, json);
}

static void add_profile(struct env *e, const char *name, const char *quota, const char *extra)
{
    char json[1024];

    (void)snprintf(json, sizeof(json),
                   "{\"apiVersion\":\"quota.koordinator.sh/v1alpha1\",\"kind\":"
                   "\"ElasticQuotaProfile\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"team\"},"
                   "\"spec\":{\"quotaName\":\"%s\",\"nodeSelector\":{\"matchLabels\":{\"pool\":"
                   "\"a\"}}%s}}",
                   name, quota, extra ? extra : "");
    create(e, &res_profiles, "team", json);
}

static cJSON *get(struct env *e, const struct kube_resource *r, const char *ns, const char *name)
{
    cJSON *o = NULL;
    int rc = kube_get(e->c, r, ns, name, &o, NULL);

    if (rc == -ENOENT)
        return NULL;
    if (rc != 0)
        fail_msg("get %s %s: %d", r->plural, name, rc);
    return o;
}

static const cJSON *at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
    return b ? cJSON_GetObjectItemCaseSensitive(v, b) : v;
}

static struct quotaprofile_stats stats(struct env *e)
{
    struct quotaprofile_stats s;

    quotaprofile_controller_stats(e->ctl, &s);
    return s;
}

typedef bool cond_fn(struct env *e, const void *arg);

static void wait_until_at(struct env *e, cond_fn *cond, const void *arg, const char *what, int line)
{
    double end = kt_now() + DEADLINE_S;
    struct timespec step = {0, 20000000};

    strbuf_reset(&e->why);
    while (!cond(e, arg)) {
        if (kt_now() > end)
            fail_msg("line %d: timed out waiting for %s: %s", line, what, e->why.buf);
        (void)nanosleep(&step, NULL);
    }
}
#define wait_until(e, cond, arg) wait_until_at((e), (cond), (arg), #cond, __LINE__)

/* team/team-root's spec.min.cpu is arg. */
static bool min_cpu_is(struct env *e, const void *arg)
{
    cJSON *q = get(e, &res_quotas, "team", "team-root");
    const cJSON *v = at(at(q, "spec", "min"), "cpu", NULL);
    bool ok = cJSON_IsString(v) && !strcmp(v->valuestring, arg);

    strbuf_reset(&e->why);
    strbuf_addf(&e->why, "min.cpu %s", cJSON_IsString(v) ? v->valuestring : "(none)");
    cJSON_Delete(q);
    return ok;
}

static bool reconciles_at_least(struct env *e, const void *arg)
{
    return stats(e).reconciles >= *(const unsigned long *)arg;
}

/* A Warning Event with reason arg[0] and message arg[1] on profile arg[2] exists. */
static bool has_event(struct env *e, const void *arg)
{
    const char *const *want = arg;
    cJSON *list = NULL;
    const cJSON *ev;
    bool found = false;

    assert_int_equal(kube_list(e->c, &kube_res_events, "team", NULL, &list, NULL), 0);
    cJSON_ArrayForEach(ev, at(list, "items", NULL))
    {
        const cJSON *r = at(ev, "reason", NULL), *m = at(ev, "message", NULL);
        const cJSON *k = at(ev, "involvedObject", "kind"), *n = at(ev, "involvedObject", "name");
        if (cJSON_IsString(r) && !strcmp(r->valuestring, want[0]) && cJSON_IsString(m) &&
            !strcmp(m->valuestring, want[1]) && cJSON_IsString(k) &&
            !strcmp(k->valuestring, "ElasticQuotaProfile") && cJSON_IsString(n) &&
            !strcmp(n->valuestring, want[2]) &&
            !strcmp(cJSON_GetStringValue(at(ev, "type", NULL)), "Warning"))
            found = true;
        else if (cJSON_IsString(m)) {
            strbuf_reset(&e->why);
            strbuf_addf(&e->why, "saw \"%s\"", m->valuestring);
        }
    }
    cJSON_Delete(list);
    return found;
}

static int setup(void **state)
{
    struct env *e = xcalloc(1, sizeof(*e));
    struct quotaprofile_opts o = {
        .host = "test", .resync_ms = 100, .failed_write_ms = 100, .retry_base_ms = 5};

    strbuf_init(&e->why);
    e->srv = kt_server_new(0);
    e->c = kt_client(e->srv);
    install_crds(e);
    create(e, &res_namespaces, NULL,
           "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"team\"}}");
    create(e, &res_namespaces, NULL,
           "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"other\"}}");
    /* pool a: a Ready node, a cordoned one and a NotReady one; pool b is not selected. */
    add_node(e, "n1", "a", "\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"", false, "True");
    add_node(e, "n2", "a", "\"cpu\":\"2\",\"memory\":\"4Gi\"", true, "True");
    add_node(e, "n3", "a", "\"cpu\":\"1500m\",\"memory\":\"2Gi\"", false, "False");
    add_node(e, "n4", "b", "\"cpu\":\"16\",\"memory\":\"64Gi\"", false, "True");
    assert_int_equal(quotaprofile_controller_new(e->c, &o, &e->ctl), 0);
    assert_int_equal(quotaprofile_controller_start(e->ctl), 0);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;

    quotaprofile_controller_free(e->ctl);
    kube_client_free(e->c);
    kt_server_free(e->srv);
    strbuf_release(&e->why);
    free(e);
    return 0;
}

static void test_tree_id(void **state)
{
    char buf[24];
    (void)state;

    (void)snprintf(buf, sizeof(buf), "%llu",
                   (unsigned long long)quotaprofile_tree_id("team", "prof"));
    assert_string_equal(buf, TREE_ID);
}

static void test_profile_to_quota(void **state)
{
    struct env *e = *state;
    cJSON *q, *prof;
    unsigned long n;
    struct quotaprofile_stats s;

    add_profile(e, "prof", "team-root",
                ",\"resourceRatio\":\"0.5\",\"quotaLabels\":{\"" P "is-parent\":\"true\"}");
    /* pool a: cpu 4 + 2 + 1.5 = 7.5 -> 7500m x 0.5 = 3750m; memory 14Gi x 0.5 = 7Gi; pods 110
     * x 0.5 = 55. Unschedulable (n2 cordoned, n3 NotReady): 3500m -> 1750m, 6Gi -> 3Gi. */
    wait_until(e, min_cpu_is, "3750m");
    q = get(e, &res_quotas, "team", "team-root");
    assert_json_eq(at(q, "spec", NULL), "{\"min\":{\"cpu\":\"3750m\",\"memory\":\"7Gi\"},"
                                        "\"max\":{\"cpu\":\"" MAXQ "\",\"memory\":\"" MAXQ "\"}}");
    /* The parent label and shared-weight come from the server's quota admission. */
    assert_json_eq(at(q, "metadata", "labels"),
                   "{\"" P "profile\":\"prof\",\"" P "is-parent\":\"true\",\"" P
                   "tree-id\":\"" TREE_ID "\",\"" P "is-root\":\"true\",\"" P
                   "parent\":\"koordinator-root-quota\"}");
    assert_json_eq(at(q, "metadata", "annotations"),
                   "{\"" P "total-resource\":\"{\\\"cpu\\\":\\\"3750m\\\",\\\"memory\\\":"
                   "\\\"7Gi\\\",\\\"pods\\\":\\\"55\\\"}\",\"" P
                   "unschedulable-resource\":\"{\\\"cpu\\\":\\\"1750m\\\",\\\"memory\\\":"
                   "\\\"3Gi\\\"}\",\"" P "shared-weight\":\"{\\\"cpu\\\":\\\"" MAXQ
                   "\\\",\\\"memory\\\":\\\"" MAXQ "\\\"}\"}");
    cJSON_Delete(q);
    prof = get(e, &res_profiles, "team", "prof");
    assert_string_equal(cJSON_GetStringValue(at(at(prof, "metadata", "labels"), P "tree-id", NULL)),
                        TREE_ID);
    cJSON_Delete(prof);

    /* Re-syncs with nothing changed write nothing. */
    n = stats(e).reconciles + 3;
    wait_until(e, reconciles_at_least, &n);
    s = stats(e);
    assert_int_equal(s.creates, 1);
    assert_int_equal(s.updates, 0);

    /* A new node of the pool shows at a re-sync: (7500m + 2000m) x 0.5. */
    add_node(e, "n5", "a", "\"cpu\":\"2\",\"memory\":\"2Gi\"", false, "True");
    wait_until(e, min_cpu_is, "4750m");
    assert_int_equal(stats(e).updates, 1);

    /* Deleting the profile leaves the quota. */
    n = stats(e).reconciles + 1;
    assert_int_equal(kube_delete(e->c, &res_profiles, "team", "prof", NULL), 0);
    /* The delete's own reconcile (at least one: a pending re-sync may or may not add another). */
    wait_until(e, reconciles_at_least, &n);
    q = get(e, &res_quotas, "team", "team-root");
    assert_non_null(q);
    cJSON_Delete(q);
}

static void test_resource_keys_and_bad_ratio(void **state)
{
    struct env *e = *state;
    cJSON *q;
    unsigned long n;

    /* A ratio outside (0, 1] is 1.0; resource-keys picks the keys, absent ones are 0. */
    create(e, &res_profiles, "team",
           "{\"apiVersion\":\"quota.koordinator.sh/v1alpha1\",\"kind\":\"ElasticQuotaProfile\","
           "\"metadata\":{\"name\":\"keys\",\"namespace\":\"team\",\"annotations\":{\"" P
           "resource-keys\":\"[\\\"cpu\\\",\\\"nvidia.com/gpu\\\"]\"}},\"spec\":{\"quotaName\":"
           "\"team-root\",\"resourceRatio\":\"1.5\",\"nodeSelector\":{\"matchLabels\":{\"pool\":"
           "\"a\"}}}}");
    wait_until(e, min_cpu_is, "7500m");
    q = get(e, &res_quotas, "team", "team-root");
    assert_json_eq(at(q, "spec", NULL),
                   "{\"min\":{\"cpu\":\"7500m\",\"nvidia.com/gpu\":\"0\"},"
                   "\"max\":{\"cpu\":\"" MAXQ "\",\"nvidia.com/gpu\":\"" MAXQ "\"}}");
    cJSON_Delete(q);
    n = stats(e).reconciles + 1;
    wait_until(e, reconciles_at_least, &n);
}

static void test_failure_events(void **state)
{
    struct env *e = *state;
    static const char *const create_failed[] = {
        "CreateQuotaFailed",
        ("failed to create quota, err: admission webhook \"vquota.kb.io\" denied the request: "
         "AddQuota quota already exist:dup"),
        "p-dup"};
    static const char *const update_failed[] = {
        "UpdateQuotaFailed",
        ("failed to update quota, err: admission webhook \"vquota.kb.io\" denied the request: "
         "TreeID is forbidden modify now, quotaName:fixed"),
        "p-fixed"};

    /* Quota names are unique cluster-wide: "dup" in another namespace refuses the create. */
    create(e, &res_quotas, "other",
           "{\"apiVersion\":\"scheduling.sigs.k8s.io/v1alpha1\",\"kind\":\"ElasticQuota\","
           "\"metadata\":{\"name\":\"dup\",\"namespace\":\"other\"},\"spec\":{}}");
    add_profile(e, "p-dup", "dup", NULL);
    wait_until(e, has_event, create_failed);
    /* A quota whose tree id differs cannot be taken over: the update is refused. */
    create(e, &res_quotas, "team",
           "{\"apiVersion\":\"scheduling.sigs.k8s.io/v1alpha1\",\"kind\":\"ElasticQuota\","
           "\"metadata\":{\"name\":\"fixed\",\"namespace\":\"team\",\"labels\":{\"" P
           "tree-id\":\"123\"}},\"spec\":{}}");
    add_profile(e, "p-fixed", "fixed", NULL);
    wait_until(e, has_event, update_failed);
    assert_true(stats(e).errors >= 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_id),
        cmocka_unit_test_setup_teardown(test_profile_to_quota, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resource_keys_and_bad_ratio, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failure_events, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
