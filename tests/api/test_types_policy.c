/*
 * Tests for api/types_policy.c (PodDisruptionBudget), api/types_events.c (events.k8s.io/v1
 * Event) and api/types_discovery.c (EndpointSlice): their validation with kube's messages
 * (policy/validation, core/validation/events.go, discovery/validation) and PrepareForCreate.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"
#include "base/base.h"
#include "testutil.h"

/* The rendered errors of the object text, one a line ("" when valid). */
static char *errors_of(const char *text)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf sb = STRBUF_INIT;
    cJSON *o = J(text);
    const struct api_kind *k = NULL;

    (void)api_object_validate(o, 0, &k, &errs);
    assert_non_null(k);
    for (size_t i = 0; i < errs.n; i++) {
        if (errs.v[i].type == FIELD_WARNING)
            continue;
        if (sb.len)
            strbuf_addch(&sb, '\n');
        field_error_format(&errs.v[i], &sb);
    }
    field_errors_release(&errs);
    cJSON_Delete(o);
    return strbuf_detach(&sb, NULL);
}

static void expect_errors_at(const char *text, const char *want, int line)
{
    char *got = errors_of(text);

    if (strcmp(got, want)) {
        print_error("line %d:\n got: %s\nwant: %s\n", line, got, want);
        free(got);
        fail();
    }
    free(got);
}
#define expect_errors(text, want) expect_errors_at((text), (want), __LINE__)

#define PDB(spec)                                                                                  \
    "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\",\"metadata\":{\"name\":"       \
    "\"p\"},\"spec\":{" spec "}}"

static void test_pdb(void **state)
{
    const struct api_kind *k = kind("policy/v1", "PodDisruptionBudget");
    cJSON *o;
    (void)state;

    expect_errors(PDB("\"minAvailable\":2,\"selector\":{\"matchLabels\":{\"a\":\"b\"}}"), "");
    expect_errors(PDB("\"maxUnavailable\":\"100%\""), "");
    expect_errors(PDB("\"minAvailable\":1,\"maxUnavailable\":\"10%\""),
                  "spec: Invalid value: minAvailable and maxUnavailable cannot be both set");
    expect_errors(PDB("\"minAvailable\":-1"),
                  "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0");
    expect_errors(PDB("\"maxUnavailable\":\"101%\""),
                  "spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, "
                  "StrVal:\"101%\"}: must not be greater than 100%");
    expect_errors(PDB("\"minAvailable\":\"half\""),
                  "spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, "
                  "StrVal:\"half\"}: a valid percent string must be a numeric string followed by "
                  "an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')");
    expect_errors(PDB("\"unhealthyPodEvictionPolicy\":\"Never\""),
                  "spec.unhealthyPodEvictionPolicy: Unsupported value: \"Never\": supported "
                  "values: \"IfHealthyBudget\", \"AlwaysAllow\"");
    o = J(PDB("\"minAvailable\":1"));
    CHECK(cJSON_AddItemToObject(o, "status", J("{\"disruptionsAllowed\":5}")));
    k->prepare_create(o);
    assert_json_eq(cJSON_GetObjectItem(o, "status"), "{}");
    /* The canonical form always carries the status counters, as Go writes them. */
    assert_int_equal(api_object_canonicalize(k, o), 0);
    assert_json_eq(cJSON_GetObjectItem(o, "status"),
                   "{\"disruptionsAllowed\":0,\"currentHealthy\":0,\"desiredHealthy\":0,"
                   "\"expectedPods\":0}");
    cJSON_Delete(o);
}

#define EVENT(fields)                                                                              \
    "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"e\","        \
    "\"namespace\":\"default\"}," fields "}"
#define GOOD_EVENT                                                                                 \
    "\"eventTime\":\"2026-01-02T03:04:05.000000Z\",\"reportingController\":\"koord.sh/x\","        \
    "\"reportingInstance\":\"i\",\"action\":\"A\",\"reason\":\"R\",\"type\":\"Normal\","           \
    "\"regarding\":{\"kind\":\"Pod\",\"name\":\"p\"}"

static void test_events(void **state)
{
    (void)state;

    expect_errors(EVENT(GOOD_EVENT), "");
    expect_errors(EVENT("\"type\":\"Odd\",\"reportingController\":\"bad name\""),
                  "eventTime: Required value\n"
                  "type: Invalid value: \"\": has invalid value: Odd\n"
                  "reportingController: Invalid value: \"bad name\": name part must consist of "
                  "alphanumeric characters, '-', '_' or '.', and must start and end with an "
                  "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
                  "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')\n"
                  "reportingInstance: Required value\n"
                  "action: Required value\n"
                  "reason: Required value");
    expect_errors(EVENT(GOOD_EVENT ",\"series\":{\"count\":1,\"lastObservedTime\":"
                                   "\"2026-01-02T03:04:05.000000Z\"}"),
                  "series.count: Invalid value: 1: should be at least 2");
}

#define SLICE(fields)                                                                              \
    "{\"apiVersion\":\"discovery.k8s.io/v1\",\"kind\":\"EndpointSlice\",\"metadata\":{\"name\":"   \
    "\"s\",\"namespace\":\"default\"}," fields "}"

static void test_endpoint_slices(void **state)
{
    const struct api_kind *k = kind("discovery.k8s.io/v1", "EndpointSlice");
    struct field_errors errs = FIELD_ERRORS_INIT;
    cJSON *a, *b;
    (void)state;

    expect_errors(SLICE("\"addressType\":\"IPv4\",\"endpoints\":[{\"addresses\":[\"10.0.0.1\"]}],"
                        "\"ports\":[{\"port\":80}]"),
                  "");
    expect_errors(SLICE("\"addressType\":\"IPv6\",\"endpoints\":[{\"addresses\":[]},"
                        "{\"addresses\":[\"10.0.0.1\",\"fd00::1\"]}]"),
                  "endpoints[0].addresses: Required value: must contain at least 1 address\n"
                  "endpoints[1].addresses[0]: Invalid value: \"10.0.0.1\": must be a valid IP "
                  "address");
    expect_errors(SLICE("\"addressType\":\"IPX\",\"endpoints\":[]"),
                  "addressType: Unsupported value: \"IPX\": supported values: \"IPv4\", "
                  "\"IPv6\", \"FQDN\"");
    expect_errors(SLICE("\"endpoints\":[]"), "addressType: Required value");
    a = J(SLICE("\"addressType\":\"IPv4\""));
    b = J(SLICE("\"addressType\":\"FQDN\""));
    k->check_update(a, b, &errs);
    assert_int_equal(errs.n, 1);
    assert_true(renders_as(&errs.v[0], "addressType: Invalid value: \"FQDN\": field is immutable"));
    field_errors_release(&errs);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pdb),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_endpoint_slices),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
