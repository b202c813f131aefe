/*
 * Tests for apiserver/registry: the built-in resources and their discovery entries (reference
 * kubernetes-api.md 1.3), CRDs served at once and withdrawn, lookups by plural, singular,
 * short name and kind, references that outlive a CRD's removal, and the order of /apis
 * (kube-aggregator's: kubectl resolves a resource name several groups serve to the first).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"
#include "api/crd.h"
#include "apiserver/registry.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "testutil.h"

/* The entry named name in an APIResourceList, or NULL. */
static const cJSON *entry(const cJSON *list, const char *name)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(list, "resources"))
    {
        if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r, "name")), name))
            return r;
    }
    return NULL;
}

static void test_builtins(void **state)
{
    struct api_registry *r = api_registry_new();
    const struct api_resource *a;
    cJSON *doc;
    (void)state;

    a = api_registry_lookup(r, "", "v1", "pods");
    assert_non_null(a);
    assert_string_equal(a->kind, "Pod");
    assert_true(a->namespaced);
    assert_null(a->crd_name);
    a = api_resource_unref(a);
    a = api_registry_lookup(r, "", "v1", "po"); /* short name */
    assert_non_null(a);
    assert_string_equal(a->plural, "pods");
    a = api_resource_unref(a);
    a = api_registry_lookup(r, "", "v1", "node"); /* singular */
    assert_non_null(a);
    assert_string_equal(a->plural, "nodes");
    assert_false(a->namespaced);
    a = api_resource_unref(a);
    assert_null(api_registry_lookup(r, "", "v2", "pods"));
    assert_null(api_registry_lookup(r, "slo.koordinator.sh", "v1alpha1", "nodeslos"));

    doc = api_registry_resource_list(r, "", "v1");
    assert_non_null(doc);
    assert_json_eq(entry(doc, "pods"),
                   "{\"name\":\"pods\",\"singularName\":\"pod\",\"namespaced\":true,\"kind\":"
                   "\"Pod\",\"verbs\":[\"create\",\"delete\",\"deletecollection\",\"get\","
                   "\"list\",\"patch\",\"update\",\"watch\"],\"shortNames\":[\"po\"],"
                   "\"categories\":[\"all\"]}");
    assert_json_eq(entry(doc, "pods/binding"),
                   "{\"name\":\"pods/binding\",\"singularName\":\"\",\"namespaced\":true,"
                   "\"kind\":\"Binding\",\"verbs\":[\"create\"]}");
    assert_json_eq(entry(doc, "pods/eviction"),
                   "{\"name\":\"pods/eviction\",\"singularName\":\"\",\"namespaced\":true,"
                   "\"group\":\"policy\",\"version\":\"v1\",\"kind\":\"Eviction\","
                   "\"verbs\":[\"create\"]}");
    assert_json_eq(entry(doc, "pods/status"),
                   "{\"name\":\"pods/status\",\"singularName\":\"\",\"namespaced\":true,"
                   "\"kind\":\"Pod\",\"verbs\":[\"get\",\"patch\",\"update\"]}");
    assert_json_eq(entry(doc, "namespaces/finalize"),
                   "{\"name\":\"namespaces/finalize\",\"singularName\":\"\",\"namespaced\":"
                   "false,\"kind\":\"Namespace\",\"verbs\":[\"update\"]}");
    assert_non_null(entry(doc, "nodes/status"));
    assert_non_null(entry(doc, "configmaps"));
    assert_null(entry(doc, "configmaps/status"));
    assert_null(entry(doc, "leases")); /* coordination.k8s.io, not core */
    cJSON_Delete(doc);

    doc = api_registry_api_versions(r);
    assert_json_eq(doc, "{\"kind\":\"APIVersions\",\"versions\":[\"v1\"],"
                        "\"serverAddressByClientCIDRs\":[]}");
    cJSON_Delete(doc);
    doc = api_registry_group_list(r);
    {
        /* Every built-in group in registration order; each entry has one preferred version. */
        const char *const want[] = {"coordination.k8s.io",
                                    "scheduling.k8s.io",
                                    "apiregistration.k8s.io",
                                    "admissionregistration.k8s.io",
                                    "apps",
                                    "batch",
                                    "policy",
                                    "events.k8s.io",
                                    "discovery.k8s.io",
                                    "rbac.authorization.k8s.io",
                                    "apiextensions.k8s.io",
                                    "authentication.k8s.io",
                                    "authorization.k8s.io"};
        const cJSON *groups = cJSON_GetObjectItem(doc, "groups");
        assert_int_equal(cJSON_GetArraySize(groups), ARRAY_SIZE(want));
        for (size_t i = 0; i < ARRAY_SIZE(want); i++)
            assert_string_equal(
                cJSON_GetObjectItem(cJSON_GetArrayItem(groups, (int)i), "name")->valuestring,
                want[i]);
        assert_json_eq(cJSON_GetArrayItem(groups, 0),
                       "{\"name\":\"coordination.k8s.io\",\"versions\":[{\"groupVersion\":"
                       "\"coordination.k8s.io/v1\",\"version\":\"v1\"}],\"preferredVersion\":"
                       "{\"groupVersion\":\"coordination.k8s.io/v1\",\"version\":\"v1\"}}");
    }
    cJSON_Delete(doc);
    assert_null(api_registry_group(r, "slo.koordinator.sh"));
    assert_null(api_registry_resource_list(r, "slo.koordinator.sh", "v1alpha1"));
    doc = api_registry_resource_list(r, "apiregistration.k8s.io", "v1");
    assert_json_eq(entry(doc, "apiservices"),
                   "{\"name\":\"apiservices\",\"singularName\":\"apiservice\",\"namespaced\":"
                   "false,\"kind\":\"APIService\",\"verbs\":[\"create\",\"delete\","
                   "\"deletecollection\",\"get\",\"list\",\"patch\",\"update\",\"watch\"],"
                   "\"categories\":[\"api-extensions\"]}");
    assert_non_null(entry(doc, "apiservices/status"));
    cJSON_Delete(doc);
    api_registry_free(r);
}

static void test_crds(void **state)
{
    struct api_registry *r = api_registry_new();
    struct field_errors errs = FIELD_ERRORS_INIT;
    const struct api_resource *held, *a;
    cJSON *doc;
    (void)state;

    for (const struct api_kind *const *k = api_kinds(); *k; k++) {
        cJSON *crd = NULL;
        if (!(*k)->crd)
            continue;
        assert_int_equal(api_crd_build(*k, &crd), 0);
        if (api_registry_add_crd(r, crd, &errs) != 0)
            fail_with_errors(&errs, "%s not served", (*k)->kind);
        cJSON_Delete(crd);
    }
    held = api_registry_lookup(r, "slo.koordinator.sh", "v1alpha1", "nodeslos");
    assert_non_null(held);
    assert_string_equal(held->kind, "NodeSLO");
    assert_string_equal(held->crd_name, "nodeslos.slo.koordinator.sh");
    assert_false(held->namespaced);
    a = api_registry_lookup(r, "analysis.koordinator.sh", "v1alpha1", "recom");
    assert_non_null(a);
    assert_string_equal(a->plural, "recommendations");
    assert_true(a->namespaced);
    a = api_resource_unref(a);
    a = api_registry_lookup_kind(r, "scheduling.sigs.k8s.io/v1alpha1", "ElasticQuota");
    assert_non_null(a);
    assert_string_equal(a->plural, "elasticquotas");
    a = api_resource_unref(a);

    doc = api_registry_resource_list(r, "slo.koordinator.sh", "v1alpha1");
    assert_non_null(entry(doc, "nodemetrics"));
    assert_non_null(entry(doc, "nodemetrics/status"));
    assert_json_eq(entry(doc, "nodeslos"),
                   "{\"name\":\"nodeslos\",\"singularName\":\"nodeslo\",\"namespaced\":false,"
                   "\"kind\":\"NodeSLO\",\"verbs\":[\"create\",\"delete\",\"deletecollection\","
                   "\"get\",\"list\",\"patch\",\"update\",\"watch\"]}");
    cJSON_Delete(doc);
    doc = api_registry_group(r, "scheduling.koordinator.sh");
    assert_json_eq(doc, "{\"name\":\"scheduling.koordinator.sh\",\"versions\":[{\"groupVersion\":"
                        "\"scheduling.koordinator.sh/v1alpha1\",\"version\":\"v1alpha1\"}],"
                        "\"preferredVersion\":{\"groupVersion\":\"scheduling.koordinator.sh/"
                        "v1alpha1\",\"version\":\"v1alpha1\"},\"kind\":\"APIGroup\","
                        "\"apiVersion\":\"v1\"}");
    cJSON_Delete(doc);

    /* Removing the CRD withdraws the resource; a held reference stays usable. */
    assert_int_equal(api_registry_remove_crd(r, "nodeslos.slo.koordinator.sh"), 0);
    assert_int_equal(api_registry_remove_crd(r, "nodeslos.slo.koordinator.sh"), -ENOENT);
    assert_null(api_registry_lookup(r, "slo.koordinator.sh", "v1alpha1", "nodeslos"));
    assert_string_equal(held->plural, "nodeslos");
    {
        cJSON *o = J("{\"apiVersion\":\"slo.koordinator.sh/v1alpha1\",\"kind\":\"NodeSLO\","
                     "\"metadata\":{\"name\":\"n\"},\"spec\":{\"cpuBurstStrategy\":"
                     "{\"cpuBurstPercent\":20000}}}");
        api_validate(held->schema, o, "", 0, &errs);
        assert_int_equal(field_errors_count(&errs), 1);
        assert_string_equal(errs.v[0].field, "spec.cpuBurstStrategy.cpuBurstPercent");
        field_errors_release(&errs);
        cJSON_Delete(o);
    }
    held = api_resource_unref(held);
    api_registry_free(r);
}

/* The names in an APIGroupList after the built-in groups, comma-separated. */
static void tail_names(const cJSON *groups, struct strbuf *out)
{
    const cJSON *g;

    strbuf_reset(out);
    cJSON_ArrayForEach(g, groups)
    {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(g, "name"));
        if (strstr(name, "koordinator.sh") || strstr(name, "sigs.k8s.io"))
            strbuf_addf(out, "%s%s", out->len ? "," : "", name);
        else
            assert_int_equal(out->len, 0); /* a built-in group after a CRD's */
    }
}

static int prio_of(const char *group, void *ud)
{
    return !strcmp(group, "metrics.koordinator.sh") ? *(int *)ud : 1000;
}

static void test_group_order(void **state)
{
    struct api_registry *r = api_registry_new();
    struct field_errors errs = FIELD_ERRORS_INIT;
    const struct api_kind *crds[16];
    struct strbuf names = STRBUF_INIT;
    size_t n = 0;
    cJSON *doc, *groups;
    int prio;
    (void)state;

    for (const struct api_kind *const *k = api_kinds(); *k; k++)
        if ((*k)->crd)
            crds[n++] = *k;
    /* Created in reverse: the order served is the APIService names', not creation order. */
    while (n--) {
        cJSON *crd = NULL;
        assert_int_equal(api_crd_build(crds[n], &crd), 0);
        if (api_registry_add_crd(r, crd, &errs) != 0)
            fail_with_errors(&errs, "%s not served", crds[n]->kind);
        cJSON_Delete(crd);
    }
    doc = api_registry_group_list(r);
    groups = cJSON_GetObjectItem(doc, "groups");
    tail_names(groups, &names);
    assert_string_equal(names.buf, "analysis.koordinator.sh,config.koordinator.sh,"
                                   "quota.koordinator.sh,scheduling.koordinator.sh,"
                                   "scheduling.sigs.k8s.io,slo.koordinator.sh");

    /* An aggregated group at a CRD's priority goes by name (before slo.koordinator.sh, which
     * also serves nodemetrics); above it, first; below, last. */
    CHECK(cJSON_AddItemToArray(
        groups, J("{\"name\":\"metrics.koordinator.sh\",\"versions\":[{\"groupVersion\":"
                  "\"metrics.koordinator.sh/v1alpha1\",\"version\":\"v1alpha1\"}]}")));
    prio = 1000;
    api_registry_sort_groups(r, groups, prio_of, &prio);
    tail_names(groups, &names);
    assert_string_equal(names.buf, "analysis.koordinator.sh,config.koordinator.sh,"
                                   "metrics.koordinator.sh,quota.koordinator.sh,"
                                   "scheduling.koordinator.sh,scheduling.sigs.k8s.io,"
                                   "slo.koordinator.sh");
    prio = 2000;
    api_registry_sort_groups(r, groups, prio_of, &prio);
    tail_names(groups, &names);
    assert_true(!strncmp(names.buf, "metrics.koordinator.sh,analysis", 31));
    prio = 100;
    api_registry_sort_groups(r, groups, prio_of, &prio);
    tail_names(groups, &names);
    assert_true(strstr(names.buf, ",slo.koordinator.sh,metrics.koordinator.sh"));
    strbuf_release(&names);
    cJSON_Delete(doc);
    api_registry_free(r);
}

static void test_bad_crds(void **state)
{
    struct api_registry *r = api_registry_new();
    struct field_errors errs = FIELD_ERRORS_INIT;
    cJSON *crd;
    (void)state;

    /* Not structural: refused, nothing served. */
    crd = J("{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
            "\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":"
            "\"example.com\",\"names\":{\"kind\":\"Widget\",\"listKind\":\"WidgetList\","
            "\"plural\":\"widgets\",\"singular\":\"widget\"},\"scope\":\"Namespaced\","
            "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,\"schema\":"
            "{\"openAPIV3Schema\":{\"type\":\"object\",\"properties\":{\"spec\":{}}}}}]}}");
    assert_int_equal(api_registry_add_crd(r, crd, &errs), -EINVAL);
    assert_true(field_errors_count(&errs) > 0);
    field_errors_release(&errs);
    assert_null(api_registry_lookup(r, "example.com", "v1", "widgets"));
    cJSON_Delete(crd);

    /* A CRD may not shadow a built-in resource. */
    crd = J("{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
            "\"metadata\":{\"name\":\"leases.coordination.k8s.io\"},\"spec\":{\"group\":"
            "\"coordination.k8s.io\",\"names\":{\"kind\":\"Lease\",\"listKind\":\"LeaseList\","
            "\"plural\":\"leases\",\"singular\":\"lease\"},\"scope\":\"Namespaced\","
            "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,\"schema\":"
            "{\"openAPIV3Schema\":{\"type\":\"object\"}}}]}}");
    assert_int_equal(api_registry_add_crd(r, crd, &errs), -EEXIST);
    assert_string_equal(errs.v[0].field, "spec.names.plural");
    field_errors_release(&errs);
    cJSON_Delete(crd);
    api_registry_free(r);
}

/* The manager's profile serves exactly the kinds it is given; koord apiserver leaves the
 * aggregated NodeMetric to the manager (it proxies that group-version instead). */
static void test_kinds_profile(void **state)
{
    const struct api_kind *nm = api_kind_find("metrics.koordinator.sh/v1alpha1", "NodeMetric");
    const struct api_kind *const kinds[] = {nm, NULL};
    struct api_registry *full = api_registry_new(), *r;
    const struct api_resource *a;
    cJSON *doc;
    (void)state;

    assert_non_null(nm);
    assert_null(api_registry_lookup(full, "metrics.koordinator.sh", "v1alpha1", "nodemetrics"));
    api_registry_free(full);

    r = api_registry_new_kinds(kinds);
    a = api_registry_lookup(r, "metrics.koordinator.sh", "v1alpha1", "nodemetrics");
    assert_non_null(a);
    assert_false(a->namespaced);
    assert_string_equal(a->subresources[0], "status");
    a = api_resource_unref(a);
    assert_null(api_registry_lookup(r, "", "v1", "pods"));
    assert_null(api_registry_lookup(r, "apiextensions.k8s.io", "v1", "customresourcedefinitions"));
    doc = api_registry_group_list(r);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "groups")), 1);
    cJSON_Delete(doc);
    /* Read verbs only, so kube-controller-manager's garbage collector, which watches what
     * supports delete, list and watch, leaves it alone (reference 6.8). */
    doc = api_registry_resource_list(r, "metrics.koordinator.sh", "v1alpha1");
    assert_json_eq(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "resources"), 0), "verbs"),
        "[\"get\",\"list\",\"watch\"]");
    assert_json_eq(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "resources"), 1), "verbs"),
        "[\"get\",\"patch\",\"update\"]");
    cJSON_Delete(doc);
    api_registry_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtins),      cmocka_unit_test(test_crds),
        cmocka_unit_test(test_group_order),   cmocka_unit_test(test_bad_crds),
        cmocka_unit_test(test_kinds_profile),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
