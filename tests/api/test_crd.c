/*
 * Tests for api/crd: the CustomResourceDefinitions generated from the type tables must pass the
 * structural-schema check kube-apiserver applies, and carry the names, scope, short names,
 * printer columns and subresources of reference/api-types.md section 8 plus the schema facts
 * of sections 0.3 and 1-6 (required keys, bounds, enums, CRD defaults). The check itself must
 * reject the broken CRDs Kubernetes rejects (apiextensions-apiserver schema/validation.go).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"
#include "api/crd.h"
#include "api/field.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "testutil.h"

/* Follows a path of object keys; NULL when any step is missing. */
static const cJSON *at(const cJSON *v, const char *const *keys)
{
    for (; v && *keys; keys++)
        v = cJSON_GetObjectItemCaseSensitive(v, *keys);
    return v;
}
#define AT(v, ...) at((v), (const char *const[]){__VA_ARGS__, NULL})

static cJSON *build(const struct api_kind *k)
{
    cJSON *crd = NULL;
    assert_int_equal(api_crd_build(k, &crd), 0);
    assert_non_null(crd);
    return crd;
}

/* The root schema of the single version. */
static const cJSON *root_schema(const cJSON *crd)
{
    const cJSON *v = cJSON_GetArrayItem(AT(crd, "spec", "versions"), 0);
    return AT(v, "schema", "openAPIV3Schema");
}

/* ---- generated CRDs ---- */

static void test_generated_crds_are_structural(void **state)
{
    const struct api_kind *const *ks = api_kinds();
    size_t ncrd = 0;
    (void)state;

    for (size_t i = 0; ks[i]; i++) {
        struct field_errors e = FIELD_ERRORS_INIT;
        cJSON *crd;

        if (!ks[i]->crd)
            continue;
        ncrd++;
        crd = build(ks[i]);
        if (api_crd_check(crd, &e))
            fail_with_errors(&e, "%s: %zu errors:", ks[i]->kind, field_errors_count(&e));
        assert_int_equal(e.n, 0);
        field_errors_release(&e);
        cJSON_Delete(crd);
    }
    /* Recommendation, ClusterColocationProfile, ElasticQuotaProfile, ElasticQuota, Reservation,
     * NodeMetric, NodeSLO. */
    assert_int_equal(ncrd, 7);
}

struct names_row {
    const char *av, *kind;
    const char *name, *group, *plural, *singular, *list_kind, *scope;
    const char *short_names; /* JSON array, or NULL for none */
    bool status;
    const char *columns; /* JSON array, or NULL for none */
    const char *file;
};

/* api-types.md section 8. */
static const struct names_row names_rows[] = {
    {"analysis.koordinator.sh/v1alpha1", "Recommendation",
     "recommendations.analysis.koordinator.sh", "analysis.koordinator.sh", "recommendations",
     "recommendation", "RecommendationList", "Namespaced", "[\"recom\"]", true,
     "[{\"name\":\"Age\",\"type\":\"date\",\"jsonPath\":\".metadata.creationTimestamp\"},"
     "{\"name\":\"Type\",\"type\":\"string\",\"jsonPath\":\".spec.target.type\"},"
     "{\"name\":\"Kind\",\"type\":\"string\",\"jsonPath\":\".spec.target.workload.kind\"},"
     "{\"name\":\"Name\",\"type\":\"string\",\"jsonPath\":\".spec.target.workload.name\"},"
     "{\"name\":\"LastUpdateTime\",\"type\":\"date\",\"jsonPath\":\".status.updateTime\"}]",
     "analysis.koordinator.sh_recommendations.yaml"},
    {"config.koordinator.sh/v1alpha1", "ClusterColocationProfile",
     "clustercolocationprofiles.config.koordinator.sh", "config.koordinator.sh",
     "clustercolocationprofiles", "clustercolocationprofile", "ClusterColocationProfileList",
     "Cluster", NULL, true, NULL, "config.koordinator.sh_clustercolocationprofiles.yaml"},
    {"quota.koordinator.sh/v1alpha1", "ElasticQuotaProfile",
     "elasticquotaprofiles.quota.koordinator.sh", "quota.koordinator.sh", "elasticquotaprofiles",
     "elasticquotaprofile", "ElasticQuotaProfileList", "Namespaced", "[\"eqp\"]", false, NULL,
     "quota.koordinator.sh_elasticquotaprofiles.yaml"},
    {"scheduling.sigs.k8s.io/v1alpha1", "ElasticQuota", "elasticquotas.scheduling.sigs.k8s.io",
     "scheduling.sigs.k8s.io", "elasticquotas", "elasticquota", "ElasticQuotaList", "Namespaced",
     NULL, false, NULL, "scheduling.sigs.k8s.io_elasticquotas.yaml"},
    {"scheduling.koordinator.sh/v1alpha1", "Reservation", "reservations.scheduling.koordinator.sh",
     "scheduling.koordinator.sh", "reservations", "reservation", "ReservationList", "Cluster", NULL,
     true,
     "[{\"name\":\"Phase\",\"type\":\"string\",\"jsonPath\":\".status.phase\",\"description\":"
     "\"The phase of reservation\"},"
     "{\"name\":\"Age\",\"type\":\"date\",\"jsonPath\":\".metadata.creationTimestamp\"},"
     "{\"name\":\"Node\",\"type\":\"string\",\"jsonPath\":\".status.nodeName\"},"
     "{\"name\":\"TTL\",\"type\":\"string\",\"jsonPath\":\".spec.ttl\"},"
     "{\"name\":\"Expires\",\"type\":\"string\",\"jsonPath\":\".spec.expires\"}]",
     "scheduling.koordinator.sh_reservations.yaml"},
    {"slo.koordinator.sh/v1alpha1", "NodeMetric", "nodemetrics.slo.koordinator.sh",
     "slo.koordinator.sh", "nodemetrics", "nodemetric", "NodeMetricList", "Cluster", NULL, true,
     NULL, "slo.koordinator.sh_nodemetrics.yaml"},
    {"slo.koordinator.sh/v1alpha1", "NodeSLO", "nodeslos.slo.koordinator.sh", "slo.koordinator.sh",
     "nodeslos", "nodeslo", "NodeSLOList", "Cluster", NULL, true, NULL,
     "slo.koordinator.sh_nodeslos.yaml"},
};

static void expect_str(const cJSON *v, const char *want, const char *what)
{
    if (!cJSON_IsString(v) || strcmp(v->valuestring, want) != 0)
        fail_msg("%s: got %s, want \"%s\"", what,
                 cJSON_IsString(v) ? v->valuestring : "(not a string)", want);
}

static void test_names_scope_columns(void **state)
{
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(names_rows); i++) {
        const struct names_row *r = &names_rows[i];
        const struct api_kind *k = kind(r->av, r->kind);
        cJSON *crd = build(k);
        const cJSON *versions = AT(crd, "spec", "versions"), *v = cJSON_GetArrayItem(versions, 0);
        const cJSON *cols = cJSON_GetObjectItemCaseSensitive(v, "additionalPrinterColumns");
        struct strbuf file = STRBUF_INIT;

        expect_str(AT(crd, "apiVersion"), "apiextensions.k8s.io/v1", "apiVersion");
        expect_str(AT(crd, "kind"), "CustomResourceDefinition", "kind");
        expect_str(AT(crd, "metadata", "name"), r->name, "metadata.name");
        expect_str(AT(crd, "spec", "group"), r->group, "group");
        expect_str(AT(crd, "spec", "names", "kind"), r->kind, "names.kind");
        expect_str(AT(crd, "spec", "names", "plural"), r->plural, "names.plural");
        expect_str(AT(crd, "spec", "names", "singular"), r->singular, "names.singular");
        expect_str(AT(crd, "spec", "names", "listKind"), r->list_kind, "names.listKind");
        expect_str(AT(crd, "spec", "scope"), r->scope, "scope");
        if (r->short_names)
            assert_json_eq(AT(crd, "spec", "names", "shortNames"), r->short_names);
        else
            assert_null(AT(crd, "spec", "names", "shortNames"));
        /* Exactly one version, served and the storage version. */
        assert_int_equal(cJSON_GetArraySize(versions), 1);
        expect_str(AT(v, "name"), "v1alpha1", "version name");
        assert_true(cJSON_IsTrue(AT(v, "served")));
        assert_true(cJSON_IsTrue(AT(v, "storage")));
        if (r->status)
            assert_json_eq(AT(v, "subresources"), "{\"status\":{}}");
        else
            assert_null(AT(v, "subresources"));
        if (r->columns)
            assert_json_eq(cols, r->columns);
        else
            assert_null(cols);
        api_crd_file_name(k, &file);
        assert_string_equal(file.buf, r->file);
        strbuf_release(&file);
        cJSON_Delete(crd);
    }
}

/* ElasticQuota's CRD carries the api-approved annotation (api-types.md 3.2). */
static void test_elastic_quota_annotation(void **state)
{
    cJSON *crd = build(kind("scheduling.sigs.k8s.io/v1alpha1", "ElasticQuota"));
    (void)state;

    assert_json_eq(AT(crd, "metadata", "annotations"),
                   "{\"api-approved.kubernetes.io\":"
                   "\"https://github.com/kubernetes-sigs/scheduler-plugins/pull/52\"}");
    cJSON_Delete(crd);
}

/* The verbatim QTY_PATTERN of api-types.md 0.3. */
static const char qty_pattern[] =
    "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+("
    "\\.[0-9]*)?)|(\\.[0-9]+))))?$";

static bool array_has(const cJSON *arr, const char *s)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, arr)
    {
        if (cJSON_IsString(c) && !strcmp(c->valuestring, s))
            return true;
    }
    return false;
}

static void test_reservation_schema(void **state)
{
    cJSON *crd = build(kind("scheduling.koordinator.sh/v1alpha1", "Reservation"));
    const cJSON *root = root_schema(crd), *spec = AT(root, "properties", "spec");
    const cJSON *sp = AT(spec, "properties"), *req = AT(spec, "required");
    (void)state;

    /* controller-gen writes metadata as a bare object. */
    assert_json_eq(AT(root, "properties", "metadata"), "{\"type\":\"object\"}");
    expect_str(AT(root, "type"), "object", "root type");
    assert_int_equal(cJSON_GetArraySize(req), 2);
    assert_true(array_has(req, "template"));
    assert_true(array_has(req, "owners"));
    /* template is schemaless. */
    assert_true(cJSON_IsTrue(AT(sp, "template", "x-kubernetes-preserve-unknown-fields")));
    assert_null(AT(sp, "template", "type"));
    expect_str(AT(sp, "owners", "type"), "array", "owners type");
    assert_json_eq(AT(sp, "owners", "minItems"), "1");
    assert_json_eq(AT(sp, "owners", "items", "minProperties"), "1");
    assert_json_eq(AT(sp, "owners", "items", "properties", "controller", "required"),
                   "[\"apiVersion\",\"kind\",\"name\",\"uid\"]");
    assert_json_eq(AT(sp, "ttl", "default"), "\"24h\"");
    expect_str(AT(sp, "ttl", "type"), "string", "ttl type");
    assert_json_eq(AT(sp, "allocateOnce", "default"), "true");
    assert_json_eq(AT(sp, "allocatePolicy", "enum"), "[\"Aligned\",\"Restricted\"]");
    assert_json_eq(AT(sp, "preAllocationPolicy", "properties", "mode", "default"), "\"Default\"");
    assert_json_eq(AT(sp, "preAllocationPolicy", "properties", "mode", "enum"),
                   "[\"Default\",\"Cluster\"]");
    expect_str(AT(sp, "expires", "format"), "date-time", "expires format");
    assert_json_eq(AT(sp, "taints", "items", "required"), "[\"effect\",\"key\"]");
    assert_json_eq(AT(root, "properties", "status", "properties", "phase", "default"),
                   "\"Pending\"");
    /* ResourceList values: int-or-string with the quantity pattern. */
    {
        const cJSON *q =
            AT(root, "properties", "status", "properties", "allocatable", "additionalProperties");
        assert_true(cJSON_IsTrue(AT(q, "x-kubernetes-int-or-string")));
        expect_str(AT(q, "pattern"), qty_pattern, "quantity pattern");
        assert_json_eq(AT(q, "anyOf"), "[{\"type\":\"integer\"},{\"type\":\"string\"}]");
    }
    cJSON_Delete(crd);
}

static void test_nodeslo_schema(void **state)
{
    cJSON *crd = build(kind("slo.koordinator.sh/v1alpha1", "NodeSLO"));
    const cJSON *sp = AT(root_schema(crd), "properties", "spec", "properties");
    const cJSON *th = AT(sp, "resourceUsedThresholdWithBE", "properties");
    const cJSON *be = AT(sp, "resourceQOSStrategy", "properties", "beClass", "properties");
    const cJSON *bw = AT(sp, "systemStrategy", "properties", "totalNetworkBandwidth");
    (void)state;

    /* No required keys anywhere (section 6). */
    assert_null(AT(root_schema(crd), "properties", "spec", "required"));
    expect_str(AT(th, "cpuSuppressThresholdPercent", "type"), "integer", "type");
    expect_str(AT(th, "cpuSuppressThresholdPercent", "format"), "int64", "format");
    assert_json_eq(AT(th, "cpuSuppressThresholdPercent", "minimum"), "0");
    assert_json_eq(AT(th, "cpuSuppressThresholdPercent", "maximum"), "100");
    assert_json_eq(AT(th, "memoryAllocatableEvictThresholdPercent", "minimum"), "0");
    assert_null(AT(th, "memoryAllocatableEvictThresholdPercent", "maximum"));
    /* Webhook-only bounds are not in the CRD. */
    assert_null(AT(th, "cpuEvictBEUsageThresholdPercent", "minimum"));
    assert_null(AT(th, "cpuEvictBEUsageThresholdPercent", "maximum"));
    /* No CRD enum on the policy strings (6.2, 6.4). */
    assert_null(AT(th, "cpuSuppressPolicy", "enum"));
    assert_null(AT(sp, "cpuBurstStrategy", "properties", "policy", "enum"));
    assert_json_eq(AT(be, "memoryQOS", "properties", "wmarkMinAdj", "minimum"), "-25");
    assert_json_eq(AT(be, "memoryQOS", "properties", "wmarkMinAdj", "maximum"), "50");
    assert_json_eq(AT(be, "memoryQOS", "properties", "wmarkScalePermill", "minimum"), "1");
    assert_json_eq(AT(be, "memoryQOS", "properties", "wmarkScalePermill", "maximum"), "1000");
    assert_json_eq(AT(be, "blkioQOS", "properties", "blocks", "items", "properties", "ioCfg",
                      "properties", "ioWeightPercent", "minimum"),
                   "1");
    assert_json_eq(AT(be, "networkQOS", "properties", "ingressLimit", "default"), "100");
    assert_json_eq(AT(be, "networkQOS", "properties", "ingressRequest", "default"), "0");
    assert_true(cJSON_IsTrue(
        AT(be, "networkQOS", "properties", "ingressLimit", "x-kubernetes-int-or-string")));
    assert_json_eq(AT(sp, "cpuBurstStrategy", "properties", "cpuBurstPercent", "minimum"), "0");
    assert_json_eq(AT(sp, "cpuBurstStrategy", "properties", "cpuBurstPercent", "maximum"), "10000");
    assert_true(cJSON_IsTrue(AT(bw, "x-kubernetes-int-or-string")));
    expect_str(AT(bw, "pattern"), qty_pattern, "bandwidth pattern");
    assert_true(cJSON_IsTrue(AT(sp, "extensions", "x-kubernetes-preserve-unknown-fields")));
    expect_str(AT(sp, "hostApplications", "type"), "array", "hostApplications type");
    cJSON_Delete(crd);
}

static void test_other_schemas(void **state)
{
    cJSON *crd;
    const cJSON *sp, *req;
    (void)state;

    /* NodeMetric: the collect-policy enum, and no CRD default for controller defaults (5.1). */
    crd = build(kind("slo.koordinator.sh/v1alpha1", "NodeMetric"));
    sp = AT(root_schema(crd), "properties", "spec", "properties", "metricCollectPolicy",
            "properties");
    assert_json_eq(AT(sp, "nodeMemoryCollectPolicy", "enum"),
                   "[\"usageWithHotPageCache\",\"usageWithoutPageCache\",\"usageWithPageCache\"]");
    assert_null(AT(sp, "nodeMemoryCollectPolicy", "default"));
    assert_null(AT(sp, "aggregateDurationSeconds", "default"));
    assert_json_eq(AT(root_schema(crd), "properties", "status", "properties", "nodeMetric",
                      "properties", "numaUsages", "items", "required"),
                   "[\"numaNodeID\"]");
    cJSON_Delete(crd);

    /* ClusterColocationProfile (2.1). */
    crd = build(kind("config.koordinator.sh/v1alpha1", "ClusterColocationProfile"));
    sp = AT(root_schema(crd), "properties", "spec", "properties");
    assert_json_eq(AT(sp, "qosClass", "enum"), "[\"LSE\",\"LSR\",\"LS\",\"BE\",\"SYSTEM\"]");
    assert_true(cJSON_IsTrue(AT(sp, "probability", "x-kubernetes-int-or-string")));
    assert_true(cJSON_IsTrue(AT(sp, "patch", "x-kubernetes-preserve-unknown-fields")));
    expect_str(AT(sp, "koordinatorPriority", "format"), "int32", "koordinatorPriority format");
    expect_str(AT(sp, "selector", "x-kubernetes-map-type"), "atomic", "selector map type");
    cJSON_Delete(crd);

    /* ElasticQuotaProfile (3.1). */
    crd = build(kind("quota.koordinator.sh/v1alpha1", "ElasticQuotaProfile"));
    req = AT(root_schema(crd), "properties", "spec", "required");
    assert_int_equal(cJSON_GetArraySize(req), 2);
    assert_true(array_has(req, "quotaName"));
    assert_true(array_has(req, "nodeSelector"));
    cJSON_Delete(crd);

    /* Recommendation: target required; metav1.Condition rules (0.3). */
    crd = build(kind("analysis.koordinator.sh/v1alpha1", "Recommendation"));
    assert_json_eq(AT(root_schema(crd), "properties", "spec", "required"), "[\"target\"]");
    sp = AT(root_schema(crd), "properties", "status", "properties", "conditions", "items");
    req = AT(sp, "required");
    assert_int_equal(cJSON_GetArraySize(req), 5);
    assert_true(array_has(req, "type"));
    assert_true(array_has(req, "status"));
    assert_true(array_has(req, "lastTransitionTime"));
    assert_true(array_has(req, "reason"));
    assert_true(array_has(req, "message"));
    assert_json_eq(AT(sp, "properties", "type", "maxLength"), "316");
    assert_json_eq(AT(sp, "properties", "status", "enum"), "[\"True\",\"False\",\"Unknown\"]");
    assert_json_eq(AT(sp, "properties", "message", "maxLength"), "32768");
    assert_json_eq(AT(sp, "properties", "observedGeneration", "minimum"), "0");
    cJSON_Delete(crd);
}

/* api_crd_openapi of a building block. */
static void test_openapi_building_blocks(void **state)
{
    cJSON *o = NULL;
    (void)state;

    assert_int_equal(api_crd_openapi(&api_quantity, &o), 0);
    assert_true(cJSON_IsTrue(AT(o, "x-kubernetes-int-or-string")));
    assert_null(AT(o, "type"));
    cJSON_Delete(o);
    assert_int_equal(api_crd_openapi(&api_string_map, &o), 0);
    assert_json_eq(o, "{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}}");
    cJSON_Delete(o);
    assert_int_equal(api_crd_openapi(&api_string_list, &o), 0);
    assert_json_eq(o, "{\"type\":\"array\",\"items\":{\"type\":\"string\"}}");
    cJSON_Delete(o);
}

/* ---- broken CRDs ---- */

#define CRD_FMT                                                                                    \
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","           \
    "\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\","         \
    "\"names\":{\"kind\":\"Widget\",\"listKind\":\"WidgetList\",\"plural\":\"widgets\","           \
    "\"singular\":\"widget\"},\"scope\":\"Namespaced\",\"versions\":[{\"name\":\"v1\","            \
    "\"served\":true,\"storage\":true,\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","       \
    "\"properties\":{\"metadata\":%s,\"spec\":%s}}}}%s]}}"

#define META_OK "{\"type\":\"object\"}"
#define SPEC_OK "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}}}"
#define ROOT    "spec.versions[0].schema.openAPIV3Schema"
#define V2                                                                                         \
    ",{\"name\":\"v2\",\"served\":true,\"storage\":true,\"schema\":{\"openAPIV3Schema\":"          \
    "{\"type\":\"object\"}}}"

struct broken_row {
    const char *meta, *spec, *extra;
    const char *field; /* NULL: the CRD is valid */
    enum field_error_type type;
};

static const struct broken_row broken_rows[] = {
    {META_OK, SPEC_OK, "", NULL, 0},
    /* every node needs a type (or int-or-string, or preserve-unknown-fields) */
    {META_OK, "{\"type\":\"object\",\"properties\":{\"a\":{\"description\":\"x\"}}}", "",
     ROOT ".properties[spec].properties[a].type", FIELD_REQUIRED},
    {META_OK, "{\"properties\":{\"a\":{\"type\":\"string\"}}}", "", ROOT ".properties[spec].type",
     FIELD_REQUIRED},
    {META_OK, "{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}", "", NULL, 0},
    {META_OK, "{\"x-kubernetes-int-or-string\":true}", "", NULL, 0},
    {META_OK, "{\"type\":\"float\"}", "", ROOT ".properties[spec].type", FIELD_FORBIDDEN},
    /* properties and additionalProperties are exclusive */
    {META_OK,
     "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}},"
     "\"additionalProperties\":{\"type\":\"string\"}}",
     "", ROOT ".properties[spec].additionalProperties", FIELD_FORBIDDEN},
    {META_OK, "{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}}", "", NULL, 0},
    /* arrays need items */
    {META_OK, "{\"type\":\"object\",\"properties\":{\"l\":{\"type\":\"array\"}}}", "",
     ROOT ".properties[spec].properties[l].items", FIELD_REQUIRED},
    {META_OK,
     "{\"type\":\"object\",\"properties\":{\"l\":{\"type\":\"array\",\"items\":"
     "{\"type\":\"object\"}}}}",
     "", NULL, 0},
    /* exactly one storage version */
    {META_OK, SPEC_OK, V2, "spec.versions", FIELD_INVALID},
    /* metadata at the root: only name and generateName may be restricted */
    {"{\"type\":\"object\",\"properties\":{\"labels\":{\"type\":\"object\"}}}", SPEC_OK, "",
     ROOT ".properties[metadata]", FIELD_FORBIDDEN},
    {"{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},\"namespace\":"
     "{\"type\":\"string\"}}}",
     SPEC_OK, "", ROOT ".properties[metadata]", FIELD_FORBIDDEN},
    {"{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"maxLength\":20},"
     "\"generateName\":{\"type\":\"string\"}}}",
     SPEC_OK, "", NULL, 0},
    {"{\"type\":\"object\",\"required\":[\"name\"]}", SPEC_OK, "", ROOT ".properties[metadata]",
     FIELD_FORBIDDEN},
    /* no default inside x-kubernetes-preserve-unknown-fields */
    {META_OK,
     "{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true,\"properties\":"
     "{\"a\":{\"type\":\"string\",\"default\":\"x\"}}}",
     "", ROOT ".properties[spec].properties[a].default", FIELD_FORBIDDEN},
    {META_OK,
     "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"default\":\"x\"}}}", "",
     NULL, 0},
    /* a default must be valid for its own node: type, and enum membership */
    {META_OK,
     "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\",\"default\":\"x\"}}}", "",
     ROOT ".properties[spec].properties[a].default", FIELD_FORBIDDEN},
    {META_OK, "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\",\"default\":1.5}}}",
     "", ROOT ".properties[spec].properties[a].default", FIELD_FORBIDDEN},
    {META_OK,
     "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"enum\":[\"A\","
     "\"B\"],\"default\":\"C\"}}}",
     "", ROOT ".properties[spec].properties[a].default", FIELD_FORBIDDEN},
    {META_OK,
     "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"enum\":[\"A\","
     "\"B\"],\"default\":\"B\"}}}",
     "", NULL, 0},
    {META_OK,
     "{\"type\":\"object\",\"properties\":{\"a\":{\"x-kubernetes-int-or-string\":true,"
     "\"default\":100}}}",
     "", NULL, 0},
    {META_OK,
     "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"boolean\",\"default\":\"true\"}}}", "",
     ROOT ".properties[spec].properties[a].default", FIELD_FORBIDDEN},
    /* x-kubernetes-* where Kubernetes allows them */
    {META_OK, "{\"type\":\"string\",\"x-kubernetes-int-or-string\":true}", "",
     ROOT ".properties[spec].type", FIELD_FORBIDDEN},
    {META_OK, "{\"type\":\"string\",\"x-kubernetes-preserve-unknown-fields\":true}", "",
     ROOT ".properties[spec].x-kubernetes-preserve-unknown-fields", FIELD_FORBIDDEN},
    {META_OK, "{\"type\":\"string\",\"x-kubernetes-map-type\":\"atomic\"}", "",
     ROOT ".properties[spec].x-kubernetes-map-type", FIELD_FORBIDDEN},
    {META_OK, "{\"$ref\":\"#/definitions/x\",\"type\":\"object\"}", "",
     ROOT ".properties[spec].$ref", FIELD_FORBIDDEN},
    {META_OK, "{\"anyOf\":[{\"type\":\"string\"}],\"type\":\"string\"}", "",
     ROOT ".properties[spec].anyOf", FIELD_FORBIDDEN},
/* x-kubernetes-list-type and -list-map-keys (apiextensions validation.go) */
#define LIST(extra, items) "{\"type\":\"array\"" extra ",\"items\":" items "}"
#define ITEM_OBJ           "{\"type\":\"object\",\"properties\":{\"k\":{\"type\":\"string\"}}}"
    {META_OK, LIST(",\"x-kubernetes-list-type\":\"set\"", "{\"type\":\"string\"}"), "", NULL, 0},
    {META_OK,
     LIST(",\"x-kubernetes-list-type\":\"map\",\"x-kubernetes-list-map-keys\":[\"k\"]", ITEM_OBJ),
     "", NULL, 0},
    {META_OK, LIST(",\"x-kubernetes-list-type\":\"bag\"", "{\"type\":\"string\"}"), "",
     ROOT ".properties[spec].x-kubernetes-list-type", FIELD_NOT_SUPPORTED},
    {META_OK, LIST(",\"x-kubernetes-list-type\":\"map\"", ITEM_OBJ), "",
     ROOT ".properties[spec].x-kubernetes-list-map-keys", FIELD_REQUIRED},
    {META_OK, LIST(",\"x-kubernetes-list-map-keys\":[\"k\"]", ITEM_OBJ), "",
     ROOT ".properties[spec].x-kubernetes-list-type", FIELD_REQUIRED},
    {META_OK,
     LIST(",\"x-kubernetes-list-type\":\"set\",\"x-kubernetes-list-map-keys\":[\"k\"]", ITEM_OBJ),
     "", ROOT ".properties[spec].x-kubernetes-list-type", FIELD_INVALID},
    {META_OK,
     LIST(",\"x-kubernetes-list-type\":\"map\",\"x-kubernetes-list-map-keys\":[\"nope\"]",
          ITEM_OBJ),
     "", ROOT ".properties[spec].x-kubernetes-list-map-keys", FIELD_INVALID},
    {META_OK,
     LIST(",\"x-kubernetes-list-type\":\"map\",\"x-kubernetes-list-map-keys\":[\"k\"]",
          "{\"type\":\"string\"}"),
     "", ROOT ".properties[spec].items.type", FIELD_INVALID},
    {META_OK,
     LIST(",\"x-kubernetes-list-type\":\"map\",\"x-kubernetes-list-map-keys\":[\"k\",\"k\"]",
          ITEM_OBJ),
     "", ROOT ".properties[spec].x-kubernetes-list-map-keys", FIELD_INVALID},
    {META_OK, LIST(",\"x-kubernetes-list-type\":\"set\"", ITEM_OBJ), "",
     ROOT ".properties[spec].items.x-kubernetes-map-type", FIELD_INVALID},
#undef LIST
#undef ITEM_OBJ
};

static void test_broken_crds(void **state)
{
    char buf[2048];
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(broken_rows); i++) {
        const struct broken_row *r = &broken_rows[i];
        struct field_errors e = FIELD_ERRORS_INIT;
        cJSON *crd;
        size_t n;
        bool found = false;

        (void)snprintf(buf, sizeof(buf), CRD_FMT, r->meta, r->spec, r->extra);
        crd = J(buf);
        n = api_crd_check(crd, &e);
        for (size_t j = 0; j < e.n; j++)
            found |= r->field && !strcmp(e.v[j].field, r->field) && e.v[j].type == r->type;
        if (r->field ? !found : n != 0)
            fail_with_errors(&e, "row %zu: want %s%s\n crd: %s\nhave:", i,
                             r->field ? "error at " : "valid", r->field ? r->field : "", buf);
        assert_int_equal(n, field_errors_count(&e));
        field_errors_release(&e);
        cJSON_Delete(crd);
    }
}

/* The top-level checks: identity, names, scope, versions, root type. */
static void test_broken_crd_top_level(void **state)
{
    static const struct {
        const char *from, *to; /* textual substitution in the valid CRD */
        const char *field;
        enum field_error_type type;
    } rows[] = {
        {"apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1", "apiVersion", FIELD_INVALID},
        {"\"name\":\"widgets.example.com\"", "\"name\":\"gadgets.example.com\"", "metadata.name",
         FIELD_INVALID},
        {"\"scope\":\"Namespaced\"", "\"scope\":\"Global\"", "spec.scope", FIELD_NOT_SUPPORTED},
        {"\"group\":\"example.com\",", "", "spec.group", FIELD_REQUIRED},
        {"\"plural\":\"widgets\",", "", "spec.names", FIELD_REQUIRED},
        {"\"storage\":true", "\"storage\":false", "spec.versions", FIELD_INVALID},
        {"\"openAPIV3Schema\":{\"type\":\"object\",", "\"openAPIV3Schema\":{\"type\":\"string\",",
         ROOT ".type", FIELD_FORBIDDEN},
        {"\"schema\":{\"openAPIV3Schema\":", "\"schema\":{\"other\":", ROOT, FIELD_REQUIRED},
    };
    char valid[2048];
    (void)state;

    (void)snprintf(valid, sizeof(valid), CRD_FMT, META_OK, SPEC_OK, "");
    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        struct field_errors e = FIELD_ERRORS_INIT;
        struct strbuf doc = STRBUF_INIT;
        const char *p = strstr(valid, rows[i].from);
        bool found = false;
        cJSON *crd;

        assert_non_null(p);
        strbuf_add(&doc, valid, (size_t)(p - valid));
        strbuf_addstr(&doc, rows[i].to);
        strbuf_addstr(&doc, p + strlen(rows[i].from));
        crd = J(doc.buf);
        (void)api_crd_check(crd, &e);
        for (size_t j = 0; j < e.n; j++)
            found |= !strcmp(e.v[j].field, rows[i].field) && e.v[j].type == rows[i].type;
        if (!found)
            fail_with_errors(&e, "row %zu: no %d error at %s\nhave:", i, (int)rows[i].type,
                             rows[i].field);
        field_errors_release(&e);
        strbuf_release(&doc);
        cJSON_Delete(crd);
    }
}

/* Building a CRD allocates through cJSON: every injected failure is -ENOMEM, and nothing leaks. */
static void test_fault_injection_build(void **state)
{
    const struct api_kind *k = kind("scheduling.koordinator.sh/v1alpha1", "Reservation");
    cJSON *want = build(k);
    long n;
    (void)state;

    for (n = 1;; n++) {
        cJSON *crd = NULL;
        int r, injected;

        alloc_fail_after(n);
        r = api_crd_build(k, &crd);
        injected = alloc_injected();
        alloc_fail_after(0);
        if (!injected) {
            assert_int_equal(r, 0);
            assert_true(cJSON_Compare(crd, want, true));
            cJSON_Delete(crd);
            break;
        }
        if (r != -ENOMEM)
            fail_msg("allocation %ld failed but api_crd_build returned %d", n, r);
        assert_null(crd);
    }
    assert_true(n > 50);
    cJSON_Delete(want);
}

/* apiextensions' defaults and the status its controllers write. */
static void test_defaults_and_status(void **state)
{
    cJSON *crd =
        J("{\"spec\":{\"group\":\"x.io\",\"names\":{\"plural\":\"foos\",\"kind\":\"FooBar\"},"
          "\"versions\":[{\"name\":\"v1\",\"storage\":false},"
          "{\"name\":\"v2\",\"storage\":true}]},"
          "\"status\":{\"storedVersions\":[\"v1\"],\"conditions\":["
          "{\"type\":\"Established\",\"status\":\"True\","
          "\"lastTransitionTime\":\"2020-01-01T00:00:00Z\"},"
          "{\"type\":\"Terminating\",\"status\":\"False\"}]}}");
    cJSON *given = J("{\"spec\":{\"names\":{\"kind\":\"A\",\"singular\":\"s\",\"listKind\":\"L\"},"
                     "\"conversion\":{\"strategy\":\"Webhook\"}}}");
    (void)state;

    api_crd_default(crd);
    assert_json_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(crd, "spec"), "names"),
                   "{\"plural\":\"foos\",\"kind\":\"FooBar\",\"singular\":\"foobar\","
                   "\"listKind\":\"FooBarList\"}");
    assert_json_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(crd, "spec"), "conversion"),
                   "{\"strategy\":\"None\"}");
    /* What is given stays. */
    api_crd_default(given);
    assert_json_eq(given,
                   "{\"spec\":{\"names\":{\"kind\":\"A\",\"singular\":\"s\",\"listKind\":\"L\"},"
                   "\"conversion\":{\"strategy\":\"Webhook\"}}}");

    api_crd_set_status(crd, "2026-01-01T00:00:00Z");
    /* Established stays True since 2020; NamesAccepted is new; other conditions are kept; the
     * storage version joins storedVersions, which keeps v1. */
    assert_json_eq(
        cJSON_GetObjectItem(crd, "status"),
        "{\"storedVersions\":[\"v1\",\"v2\"],\"conditions\":["
        "{\"type\":\"Established\",\"status\":\"True\","
        "\"lastTransitionTime\":\"2020-01-01T00:00:00Z\",\"reason\":\"InitialNamesAccepted\","
        "\"message\":\"the initial names have been accepted\"},"
        "{\"type\":\"Terminating\",\"status\":\"False\"},"
        "{\"type\":\"NamesAccepted\",\"status\":\"True\","
        "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\",\"reason\":\"NoConflicts\","
        "\"message\":\"no conflicts found\"}],"
        "\"acceptedNames\":{\"plural\":\"foos\",\"kind\":\"FooBar\","
        "\"singular\":\"foobar\",\"listKind\":\"FooBarList\"}}");
    cJSON_Delete(crd);
    cJSON_Delete(given);
}

/* CEL rules are not evaluated: a warning (not an error) per node that has them; printer
 * columns need a name, a known type and a JSONPath. */
static void test_validations_warn_and_columns(void **state)
{
    char buf[2048];
    struct field_errors e = FIELD_ERRORS_INIT;
    cJSON *crd;
    (void)state;

    (void)snprintf(buf, sizeof(buf), CRD_FMT, META_OK,
                   "{\"type\":\"object\",\"x-kubernetes-validations\":[{\"rule\":\"self.a > 0\"}],"
                   "\"properties\":{\"a\":{\"type\":\"integer\"}}}",
                   "");
    crd = J(buf);
    assert_int_equal(api_crd_check(crd, &e), 0);
    assert_int_equal(e.n, 1);
    assert_int_equal(e.v[0].type, FIELD_WARNING);
    assert_string_equal(e.v[0].field, ROOT ".properties[spec]");
    assert_non_null(strstr(e.v[0].detail, "not enforced"));
    field_errors_release(&e);
    cJSON_Delete(crd);

    (void)snprintf(buf, sizeof(buf), CRD_FMT, META_OK, SPEC_OK, "");
    crd = J(buf);
    cJSON_AddItemToObject(
        cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(crd, "spec"), "versions"), 0),
        "additionalPrinterColumns",
        J("[{\"name\":\"A\",\"type\":\"string\",\"jsonPath\":\".spec.a\",\"priority\":1},"
          "{\"name\":\"B\",\"type\":\"text\",\"jsonPath\":\".spec.b\"},{\"type\":\"date\"}]"));
    assert_int_equal(api_crd_check(crd, &e), 3);
    assert_true(renders_as(&e.v[0], "spec.versions[0].additionalPrinterColumns[1].type: "
                                    "Unsupported value: \"text\": supported values: \"integer\", "
                                    "\"number\", \"string\", \"boolean\", \"date\""));
    assert_string_equal(e.v[1].field, "spec.versions[0].additionalPrinterColumns[2].name");
    assert_string_equal(e.v[2].field, "spec.versions[0].additionalPrinterColumns[2].jsonPath");
    field_errors_release(&e);
    cJSON_Delete(crd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated_crds_are_structural),
        cmocka_unit_test(test_names_scope_columns),
        cmocka_unit_test(test_elastic_quota_annotation),
        cmocka_unit_test(test_reservation_schema),
        cmocka_unit_test(test_nodeslo_schema),
        cmocka_unit_test(test_other_schemas),
        cmocka_unit_test(test_openapi_building_blocks),
        cmocka_unit_test(test_broken_crds),
        cmocka_unit_test(test_broken_crd_top_level),
        cmocka_unit_test(test_fault_injection_build),
        cmocka_unit_test(test_defaults_and_status),
        cmocka_unit_test(test_validations_warn_and_columns),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
