/*
 * Tests for api/openapi: descriptions built from openAPIV3Schema. Every generated Koordinator
 * CRD schema, read back, must accept the valid examples, default them exactly as the static
 * tables do and encode them unchanged; hand-written schemas check each supported keyword (required,
 * enum, pattern, ranges, maps, int-or-string and quantities, preserve-unknown-fields, defaults) and
 * the errors for unsupported ones.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"
#include "api/crd.h"
#include "api/openapi.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "testutil.h"

/* The valid examples of the repository, per kind. */
static const char *const examples[] = {
    "examples/seed/recommendation.yaml",
    "examples/seed/cluster-colocation-profile.yaml",
    "examples/seed/elastic-quota-profile.yaml",
    "examples/seed/reservation.yaml",
    "examples/seed/nodemetric.yaml",
    "examples/seed/nodeslo.yaml",
    "examples/reference/recommendation.yaml",
    "examples/reference/cluster-colocation-profile.yaml",
    "examples/reference/elasticquota.yaml",
    "examples/reference/reservation.yaml",
    "examples/reference/nodemetric.yaml",
};

static cJSON *load(const char *rel)
{
    struct strbuf path = STRBUF_INIT, buf = STRBUF_INIT;
    cJSON **docs = NULL, *doc;
    size_t n = 0;

    strbuf_addf(&path, "%s/%s", KOORD_SOURCE_DIR, rel);
    assert_int_equal(codec_read_file(path.buf, 1 << 20, &buf), 0);
    assert_int_equal(yaml_parse_stream(buf.buf, buf.len, NULL, &docs, &n, NULL), 0);
    assert_int_equal(n, 1);
    doc = docs[0];
    docs[0] = NULL;
    codec_docs_free(docs, n);
    strbuf_release(&path);
    strbuf_release(&buf);
    return doc;
}

/* The openAPIV3Schema of k's generated CRD, as a description. */
static struct api_schema_tree *crd_tree(const struct api_kind *k)
{
    cJSON *crd = NULL;
    struct api_schema_tree *t = NULL;
    struct field_errors errs = FIELD_ERRORS_INIT;
    const cJSON *oas;

    assert_int_equal(api_crd_build(k, &crd), 0);
    oas = cJSON_GetObjectItem(
        cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(crd, "spec"), "versions"),
                               0),
            "schema"),
        "openAPIV3Schema");
    if (api_schema_from_openapi(oas, &t, &errs) != 0)
        fail_with_errors(&errs, "%s: generated schema not accepted", k->kind);
    field_errors_release(&errs);
    cJSON_Delete(crd);
    return t;
}

static void test_generated_crds_round_trip(void **state)
{
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(examples); i++) {
        cJSON *doc = load(examples[i]), *a = cJSON_Duplicate(doc, true), *b;
        const struct api_kind *k =
            api_kind_find(cJSON_GetStringValue(cJSON_GetObjectItem(doc, "apiVersion")),
                          cJSON_GetStringValue(cJSON_GetObjectItem(doc, "kind")));
        struct field_errors errs = FIELD_ERRORS_INIT;
        struct api_schema_tree *t;

        assert_non_null(k);
        t = crd_tree(k);
        api_validate(api_schema_tree_root(t), doc, "", API_V_STRICT, &errs);
        if (field_errors_count(&errs))
            fail_with_errors(&errs, "%s rejected by its CRD schema", examples[i]);
        /* Defaults and canonical encoding agree with the static tables. */
        assert_int_equal(api_default(api_schema_tree_root(t), doc, 0), 0);
        assert_int_equal(api_object_default(k, a, 0), 0);
        if (!cJSON_Compare(doc, a, true))
            fail_msg("%s: CRD defaults differ from the static tables", examples[i]);
        /* Encoding under the CRD schema keeps a valid, defaulted object as it is: nothing to
         * prune, quantities already canonical. (Go-only encodings, such as "24h" written as
         * "24h0m0s" or empty status structs, are the static tables' business.) */
        b = cJSON_Duplicate(doc, true);
        assert_int_equal(api_canonicalize(api_schema_tree_root(t), doc), 0);
        if (!cJSON_Compare(doc, b, true)) {
            char *x = cJSON_PrintUnformatted(doc), *y = cJSON_PrintUnformatted(b);
            print_error("encoded: %s\ninput: %s\n", x, y);
            cJSON_free(x);
            cJSON_free(y);
            fail_msg("%s: encoding under the CRD schema changed a valid object", examples[i]);
        }
        cJSON_Delete(b);
        field_errors_release(&errs);
        api_schema_tree_free(t);
        cJSON_Delete(doc);
        cJSON_Delete(a);
    }
}

static const char widget_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"apiVersion\":{\"type\":\"string\"},\"kind\":{\"type\":\"string\"},"
    "\"metadata\":{\"type\":\"object\"},"
    "\"spec\":{\"type\":\"object\",\"required\":[\"size\"],\"properties\":{"
    "\"size\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":10},"
    "\"color\":{\"type\":\"string\",\"enum\":[\"red\",\"blue\"],\"default\":\"red\"},"
    "\"code\":{\"type\":\"string\",\"pattern\":\"^[a-z]{3}-[0-9]+$\"},"
    "\"when\":{\"type\":\"string\",\"format\":\"date-time\"},"
    "\"limits\":{\"type\":\"object\",\"additionalProperties\":{\"anyOf\":[{\"type\":\"integer\"},"
    "{\"type\":\"string\"}],\"pattern\":\"^(\\\\+|-)?(([0-9]+(\\\\.[0-9]*)?)|(\\\\.[0-9]+))((["
    "KMGTPE]i)|"
    "[numkMGTPE]|([eE](\\\\+|-)?(([0-9]+(\\\\.[0-9]*)?)|(\\\\.[0-9]+))))?$\","
    "\"x-kubernetes-int-or-string\":true}},"
    "\"port\":{\"x-kubernetes-int-or-string\":true},"
    "\"tags\":{\"type\":\"array\",\"minItems\":1,\"items\":{\"type\":\"string\"}},"
    "\"extra\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true},"
    "\"ratio\":{\"type\":\"number\",\"exclusiveMinimum\":true,\"minimum\":0}}}}}";

struct row {
    const char *spec;
    const char *want; /* rendered first error, or NULL when valid */
};

static const struct row rows[] = {
    {"{\"size\":3}", NULL},
    {"{}", "spec.size: Required value"},
    {"{\"size\":11}", "spec.size: Invalid value: 11: spec.size in body should be less than or "
                      "equal to 10"},
    {"{\"size\":\"3\"}",
     "spec.size: Invalid value: \"3\": spec.size in body must be of type integer: \"string\""},
    {"{\"size\":1,\"color\":\"green\"}",
     "spec.color: Unsupported value: \"green\": supported values: \"red\", \"blue\""},
    {"{\"size\":1,\"code\":\"abc-12\"}", NULL},
    {"{\"size\":1,\"code\":\"ABC-12\"}",
     "spec.code: Invalid value: \"ABC-12\": spec.code in body should match "
     "'^[a-z]{3}-[0-9]+$'"},
    {"{\"size\":1,\"when\":\"2024-03-05T08:00:00Z\"}", NULL},
    {"{\"size\":1,\"when\":\"yesterday\"}",
     "spec.when: Invalid value: \"yesterday\": must be an RFC 3339 date-time such as "
     "\"2024-03-05T08:00:00Z\""},
    {"{\"size\":1,\"limits\":{\"cpu\":\"500m\",\"memory\":2048}}", NULL},
    {"{\"size\":1,\"limits\":{\"cpu\":\"lots\"}}",
     "spec.limits[cpu]: Invalid value: \"lots\": quantities must match the regular expression "
     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {"{\"size\":1,\"port\":\"http\"}", NULL},
    {"{\"size\":1,\"port\":8080}", NULL},
    {"{\"size\":1,\"port\":true}",
     "spec.port: Invalid value: true: spec.port in body must be of type integer or string: "
     "\"boolean\""},
    {"{\"size\":1,\"tags\":[]}",
     "spec.tags: Invalid value: \"array\": spec.tags in body should have at least 1 items"},
    {"{\"size\":1,\"extra\":{\"anything\":{\"goes\":[1]}}}", NULL},
    {"{\"size\":1,\"ratio\":0}",
     "spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0"},
};

static void test_keywords(void **state)
{
    cJSON *oas = J(widget_schema);
    struct api_schema_tree *t = NULL;
    struct field_errors errs = FIELD_ERRORS_INIT;
    (void)state;

    if (api_schema_from_openapi(oas, &t, &errs) != 0)
        fail_with_errors(&errs, "widget schema not accepted");
    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        struct strbuf doc = STRBUF_INIT;
        cJSON *obj;
        strbuf_addf(&doc,
                    "{\"apiVersion\":\"x/v1\",\"kind\":\"Widget\",\"metadata\":{},\"spec\":%s}",
                    rows[i].spec);
        obj = J(doc.buf);
        api_validate(api_schema_tree_root(t), obj, "", 0, &errs);
        if (!rows[i].want && field_errors_count(&errs))
            fail_with_errors(&errs, "row %zu: want valid", i);
        if (rows[i].want && (!field_errors_count(&errs) || !renders_as(&errs.v[0], rows[i].want)))
            fail_with_errors(&errs, "row %zu: want %s", i, rows[i].want);
        field_errors_release(&errs);
        cJSON_Delete(obj);
        strbuf_release(&doc);
    }

    /* Defaults apply inside present objects; unknown fields are pruned on encode except under
     * preserve-unknown-fields. */
    {
        cJSON *obj = J("{\"spec\":{\"size\":2,\"bogus\":1,\"extra\":{\"keep\":1},"
                       "\"limits\":{\"cpu\":\"1.5\"}}}");
        assert_int_equal(api_default(api_schema_tree_root(t), obj, 0), 0);
        assert_int_equal(api_canonicalize(api_schema_tree_root(t), obj), 0);
        assert_json_eq(obj, "{\"metadata\":{},\"spec\":{\"size\":2,\"color\":\"red\","
                            "\"limits\":{\"cpu\":\"1500m\"},\"extra\":{\"keep\":1}}}");
        cJSON_Delete(obj);
    }
    api_schema_tree_free(t);
    cJSON_Delete(oas);
}

static void test_unsupported(void **state)
{
    static const struct {
        const char *schema, *field;
    } bad[] = {
        {"{\"type\":\"object\",\"properties\":{\"a\":{}}}", "openAPIV3Schema.properties[a].type"},
        {"{\"type\":\"tuple\"}", "openAPIV3Schema.type"},
        {"{\"type\":\"array\"}", "openAPIV3Schema.items"},
        {"{\"type\":\"string\",\"enum\":[1,2]}", "openAPIV3Schema.enum"},
        {"{\"type\":\"string\",\"pattern\":\"([a-z\"}", "openAPIV3Schema.pattern"},
        {"{\"type\":\"object\",\"required\":[\"x\"]}", "openAPIV3Schema.required"},
        {"[]", "openAPIV3Schema"},
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        cJSON *oas = J(bad[i].schema);
        struct api_schema_tree *t = NULL;
        struct field_errors errs = FIELD_ERRORS_INIT;

        assert_int_equal(api_schema_from_openapi(oas, &t, &errs), -EINVAL);
        assert_null(t);
        assert_true(errs.n >= 1);
        if (strcmp(errs.v[0].field, bad[i].field))
            fail_with_errors(&errs, "case %zu: want the error at %s", i, bad[i].field);
        field_errors_release(&errs);
        cJSON_Delete(oas);
    }
}

/* A hand-written schema that lists neither apiVersion, kind nor metadata: encoding keeps all
 * three (kube-apiserver never prunes them), metadata is validated as ObjectMeta, and the
 * schema's own members are still pruned. */
static void test_root_members_kept(void **state)
{
    static const char *const schemas[] = {
        "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\","
        "\"properties\":{\"size\":{\"type\":\"integer\"}}}}}",
        /* required may name the implicit members */
        "{\"type\":\"object\",\"required\":[\"metadata\",\"spec\"],\"properties\":{\"spec\":"
        "{\"type\":\"object\",\"properties\":{\"size\":{\"type\":\"integer\"}}},"
        "\"kind\":{\"type\":\"string\"}}}",
        /* no properties at all: only the implicit members survive */
        "{\"type\":\"object\"}",
    };
    static const char *const want[] = {
        "{\"apiVersion\":\"x.io/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w1\","
        "\"namespace\":\"default\",\"labels\":{\"app\":\"a\"}},\"spec\":{\"size\":2}}",
        "{\"apiVersion\":\"x.io/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w1\","
        "\"namespace\":\"default\",\"labels\":{\"app\":\"a\"}},\"spec\":{\"size\":2}}",
        "{\"apiVersion\":\"x.io/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w1\","
        "\"namespace\":\"default\",\"labels\":{\"app\":\"a\"}}}",
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(schemas); i++) {
        cJSON *oas = J(schemas[i]);
        cJSON *obj = J("{\"spec\":{\"size\":2,\"bogus\":1},\"kind\":\"Widget\",\"junk\":3,"
                       "\"metadata\":{\"labels\":{\"app\":\"a\"},\"name\":\"w1\","
                       "\"namespace\":\"default\"},\"apiVersion\":\"x.io/v1\"}");
        cJSON *bad = J("{\"apiVersion\":\"x.io/v1\",\"kind\":\"Widget\","
                       "\"metadata\":{\"name\":\"w1\",\"labels\":{\"bad key!\":\"v\"}}}");
        struct api_schema_tree *t = NULL;
        struct field_errors errs = FIELD_ERRORS_INIT;

        if (api_schema_from_openapi(oas, &t, &errs) != 0)
            fail_with_errors(&errs, "schema %zu not accepted", i);
        api_validate(api_schema_tree_root(t), obj, "", API_V_TYPES, &errs);
        if (field_errors_count(&errs))
            fail_with_errors(&errs, "schema %zu: want valid", i);
        assert_int_equal(api_canonicalize(api_schema_tree_root(t), obj), 0);
        assert_json_eq(obj, want[i]);
        /* Printed in front, in this order: the stored bytes start with the apiVersion. */
        {
            char *txt = cJSON_PrintUnformatted(obj);
            assert_non_null(txt);
            assert_int_equal(strncmp(txt, "{\"apiVersion\":\"x.io/v1\",\"kind\":\"Widget\",", 38),
                             0);
            cJSON_free(txt);
        }
        api_validate(api_schema_tree_root(t), bad, "", 0, &errs);
        if (field_errors_count(&errs) < 1 || strcmp(errs.v[0].field, "metadata.labels") != 0)
            fail_with_errors(&errs, "schema %zu: want the bad label refused", i);
        field_errors_release(&errs);
        api_schema_tree_free(t);
        cJSON_Delete(oas);
        cJSON_Delete(obj);
        cJSON_Delete(bad);
    }
    {
        /* A map at the root, and an apiVersion that is not a string, are refused. */
        static const char *const refused[] = {
            "{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}}",
            "{\"type\":\"object\",\"properties\":{\"apiVersion\":{\"type\":\"integer\"}}}",
        };
        for (size_t i = 0; i < ARRAY_SIZE(refused); i++) {
            cJSON *oas = J(refused[i]);
            struct api_schema_tree *t = NULL;
            struct field_errors errs = FIELD_ERRORS_INIT;

            assert_int_equal(api_schema_from_openapi(oas, &t, &errs), -EINVAL);
            assert_null(t);
            field_errors_release(&errs);
            cJSON_Delete(oas);
        }
    }
}

/* x-kubernetes-list-type set and map: duplicates refused with apiextensions' messages. */
static void test_list_types(void **state)
{
    static const char schema[] =
        "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{"
        "\"tags\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"set\",\"items\":{\"type\":"
        "\"string\"}},"
        "\"nums\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"set\",\"items\":{\"type\":"
        "\"integer\"}},"
        "\"ports\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
        "\"x-kubernetes-list-map-keys\":[\"name\"],\"items\":{\"type\":\"object\",\"properties\":"
        "{\"name\":{\"type\":\"string\"},\"port\":{\"type\":\"integer\"}}}},"
        "\"routes\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
        "\"x-kubernetes-list-map-keys\":[\"protocol\",\"name\"],\"items\":{\"type\":\"object\","
        "\"properties\":{\"name\":{\"type\":\"string\"},\"protocol\":{\"type\":\"string\"}}}},"
        "\"any\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"atomic\",\"items\":{\"type\":"
        "\"string\"}}}}}}";
    static const struct row cases[] = {
        {"{\"tags\":[\"a\",\"b\"],\"nums\":[1,2],\"any\":[\"x\",\"x\"]}", NULL},
        {"{\"tags\":[\"a\",\"b\",\"a\"]}", "spec.tags[2]: Duplicate value: \"a\""},
        /* only the second occurrence is reported */
        {"{\"tags\":[\"a\",\"a\",\"a\"]}", "spec.tags[1]: Duplicate value: \"a\""},
        {"{\"nums\":[1,2,1]}", "spec.nums[2]: Duplicate value: 1"},
        {"{\"ports\":[{\"name\":\"http\",\"port\":80},{\"name\":\"https\",\"port\":80}]}", NULL},
        {"{\"ports\":[{\"name\":\"http\",\"port\":80},{\"name\":\"http\",\"port\":81}]}",
         "spec.ports[1]: Duplicate value: map[string]interface {}{\"name\":\"http\"}"},
        {"{\"ports\":[{\"port\":80},{\"port\":81}]}",
         "spec.ports[1]: Duplicate value: map[string]interface {}{\"name\":interface {}(nil)}"},
        {"{\"routes\":[{\"name\":\"a\",\"protocol\":\"TCP\"},{\"name\":\"a\",\"protocol\":"
         "\"UDP\"},{\"protocol\":\"TCP\",\"name\":\"a\"}]}",
         "spec.routes[2]: Duplicate value: map[string]interface {}{\"name\":\"a\", "
         "\"protocol\":\"TCP\"}"},
    };
    cJSON *oas = J(schema);
    struct api_schema_tree *t = NULL;
    struct field_errors errs = FIELD_ERRORS_INIT;
    (void)state;

    if (api_schema_from_openapi(oas, &t, &errs) != 0)
        fail_with_errors(&errs, "list-type schema not accepted");
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct strbuf doc = STRBUF_INIT;
        cJSON *obj;

        strbuf_addf(&doc, "{\"metadata\":{\"name\":\"x\"},\"spec\":%s}", cases[i].spec);
        obj = J(doc.buf);
        api_validate(api_schema_tree_root(t), obj, "", 0, &errs);
        if (!cases[i].want && field_errors_count(&errs))
            fail_with_errors(&errs, "case %zu: want valid", i);
        if (cases[i].want &&
            (field_errors_count(&errs) != 1 || !renders_as(&errs.v[0], cases[i].want)))
            fail_with_errors(&errs, "case %zu: want %s", i, cases[i].want);
        field_errors_release(&errs);
        cJSON_Delete(obj);
        strbuf_release(&doc);
    }
    {
        /* The reverse direction keeps the rules. */
        cJSON *back = NULL;
        const cJSON *ports;
        assert_int_equal(api_crd_openapi(api_schema_tree_root(t), &back), 0);
        ports = cJSON_GetObjectItem(
            cJSON_GetObjectItem(
                cJSON_GetObjectItem(cJSON_GetObjectItem(back, "properties"), "spec"), "properties"),
            "ports");
        assert_string_equal(
            cJSON_GetStringValue(cJSON_GetObjectItem(ports, "x-kubernetes-list-type")), "map");
        assert_json_eq(cJSON_GetObjectItem(ports, "x-kubernetes-list-map-keys"), "[\"name\"]");
        cJSON_Delete(back);
    }
    api_schema_tree_free(t);
    cJSON_Delete(oas);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated_crds_round_trip),
        cmocka_unit_test(test_keywords),
        cmocka_unit_test(test_unsupported),
        cmocka_unit_test(test_root_members_kept),
        cmocka_unit_test(test_list_types),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
