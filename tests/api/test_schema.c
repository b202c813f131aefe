/*
 * Tests for api/schema: the one walker behind validation, defaulting, canonical encoding and the
 * MergeCfg overlay. Messages are checked in kube-apiserver's rendering (apimachinery field
 * errors, kube-openapi wording); encoding follows Go's encoding/json rules of
 * reference/api-types.md 0.2; the overlay follows reference/manager-behaviour.md 1.4. Every
 * expected tree below was written by hand from those references.
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
#include "api/field.h"
#include "api/schema.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "testutil.h"

/* ---- helpers ---- */

static char *print(const cJSON *v)
{
    return v ? cJSON_PrintUnformatted(v) : NULL;
}

/* Asserts that one entry renders exactly as want. */
static void expect_rendered_at(const struct field_errors *e, const char *want, int line)
{
    for (size_t i = 0; i < e->n; i++)
        if (renders_as(&e->v[i], want))
            return;
    fail_with_errors(e, "line %d: no entry renders as\n  %s\nhave:", line, want);
}
#define expect_rendered(e, want) expect_rendered_at((e), (want), __LINE__)

/* Asserts an entry with this field and type exists (and, if detail is not NULL, that detail). */
static void expect_error_at(const struct field_errors *e, const char *field,
                            enum field_error_type type, const char *detail, int line)
{
    for (size_t i = 0; i < e->n; i++)
        if (!strcmp(e->v[i].field, field) && e->v[i].type == type &&
            (!detail || !strcmp(e->v[i].detail, detail)))
            return;
    fail_with_errors(e, "line %d: no %d error at %s%s%s\nhave:", line, (int)type, field,
                     detail ? " with detail " : "", detail ? detail : "");
}
#define expect_error(e, field, type, detail)                                                       \
    expect_error_at((e), (field), (type), (detail), __LINE__)

static void expect_count_at(const struct field_errors *e, size_t nerr, size_t nwarn, int line)
{
    if (field_errors_count(e) != nerr || e->nwarn != nwarn)
        fail_with_errors(e, "line %d: %zu errors and %zu warnings, want %zu and %zu:", line,
                         field_errors_count(e), e->nwarn, nerr, nwarn);
}
#define expect_count(e, nerr, nwarn) expect_count_at((e), (nerr), (nwarn), __LINE__)

static const struct api_schema *reservation_spec(void)
{
    return kind("scheduling.koordinator.sh/v1alpha1", "Reservation")->spec;
}

/* Validates the JSON text v against s with prefix, into a fresh list the caller releases. */
static void validate(const struct api_schema *s, const char *v, const char *prefix, unsigned flags,
                     struct field_errors *errs)
{
    cJSON *o = J(v);
    field_errors_init(errs);
    api_validate(s, o, prefix, flags, errs);
    cJSON_Delete(o);
}

/* ---- validation messages ---- */

/* Required value, Unsupported value with the supported list, and a rule's Invalid value, in
 * kube-apiserver's rendering (the ttl line is the example of field.h). */
static void test_required_unsupported_invalid(void **state)
{
    struct field_errors e;
    (void)state;

    validate(reservation_spec(),
             "{\"owners\":[{\"object\":{\"name\":\"a\"}}],\"ttl\":\"12h\","
             "\"expires\":\"2024-03-05T08:00:00Z\",\"allocatePolicy\":\"Foo\"}",
             "spec", 0, &e);
    expect_count(&e, 3, 0);
    expect_rendered(&e, "spec.template: Required value");
    expect_rendered(&e, "spec.allocatePolicy: Unsupported value: \"Foo\": supported values: "
                        "\"Aligned\", \"Restricted\"");
    expect_rendered(&e, "spec.ttl: Invalid value: \"12h\": ttl and expires are mutually exclusive");
    field_errors_release(&e);
}

/* CRD minimum/maximum in kube-openapi's wording, with the path repeated in the detail. */
static void test_range_messages(void **state)
{
    struct field_errors e;
    (void)state;

    validate(&api_nodeslo_spec,
             "{\"resourceUsedThresholdWithBE\":{\"cpuSuppressThresholdPercent\":101,"
             "\"memoryAllocatableEvictThresholdPercent\":-1},"
             "\"cpuBurstStrategy\":{\"cpuBurstPercent\":10001},"
             "\"resourceQOSStrategy\":{\"beClass\":{\"memoryQOS\":{\"wmarkMinAdj\":-26,"
             "\"wmarkScalePermill\":0}}}}",
             "spec", 0, &e);
    expect_count(&e, 5, 0);
    expect_rendered(&e, "spec.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent: Invalid "
                        "value: 101: spec.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent "
                        "in body should be less than or equal to 100");
    expect_rendered(&e,
                    "spec.resourceUsedThresholdWithBE.memoryAllocatableEvictThresholdPercent: "
                    "Invalid value: -1: "
                    "spec.resourceUsedThresholdWithBE.memoryAllocatableEvictThresholdPercent in "
                    "body should be greater than or equal to 0");
    expect_rendered(&e, "spec.cpuBurstStrategy.cpuBurstPercent: Invalid value: 10001: "
                        "spec.cpuBurstStrategy.cpuBurstPercent in body should be less than or "
                        "equal to 10000");
    expect_rendered(&e, "spec.resourceQOSStrategy.beClass.memoryQOS.wmarkMinAdj: Invalid value: "
                        "-26: spec.resourceQOSStrategy.beClass.memoryQOS.wmarkMinAdj in body "
                        "should be greater than or equal to -25");
    expect_rendered(&e, "spec.resourceQOSStrategy.beClass.memoryQOS.wmarkScalePermill: Invalid "
                        "value: 0: spec.resourceQOSStrategy.beClass.memoryQOS.wmarkScalePermill "
                        "in body should be greater than or equal to 1");
    field_errors_release(&e);

    /* The bounds themselves are valid. */
    validate(&api_nodeslo_spec,
             "{\"resourceUsedThresholdWithBE\":{\"cpuSuppressThresholdPercent\":100,"
             "\"cpuSuppressMinPercent\":0},\"cpuBurstStrategy\":{\"cpuBurstPercent\":0},"
             "\"resourceQOSStrategy\":{\"lsClass\":{\"memoryQOS\":{\"wmarkMinAdj\":-25}},"
             "\"beClass\":{\"memoryQOS\":{\"wmarkMinAdj\":50,\"wmarkScalePermill\":1000}}}}",
             "spec", 0, &e);
    expect_count(&e, 0, 0);
    field_errors_release(&e);
}

/* kube-openapi's type error: "<path> in body must be of type <want>: \"<actual>\"". */
static void test_type_messages(void **state)
{
    struct field_errors e;
    (void)state;

    validate(&api_nodeslo_spec,
             "{\"resourceUsedThresholdWithBE\":{\"enable\":\"yes\","
             "\"cpuSuppressThresholdPercent\":\"80\",\"memoryEvictThresholdPercent\":1.5,"
             "\"cpuSuppressPolicy\":7},\"hostApplications\":{}}",
             "spec", 0, &e);
    expect_count(&e, 5, 0);
    expect_rendered(&e, "spec.resourceUsedThresholdWithBE.enable: Invalid value: \"yes\": "
                        "spec.resourceUsedThresholdWithBE.enable in body must be of type "
                        "boolean: \"string\"");
    expect_rendered(&e, "spec.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent: Invalid "
                        "value: \"80\": "
                        "spec.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent in body "
                        "must be of type integer: \"string\"");
    expect_rendered(&e, "spec.resourceUsedThresholdWithBE.memoryEvictThresholdPercent: Invalid "
                        "value: 1.5: spec.resourceUsedThresholdWithBE.memoryEvictThresholdPercent "
                        "in body must be of type integer: \"number\"");
    expect_rendered(&e, "spec.resourceUsedThresholdWithBE.cpuSuppressPolicy: Invalid value: 7: "
                        "spec.resourceUsedThresholdWithBE.cpuSuppressPolicy in body must be of "
                        "type string: \"integer\"");
    expect_error(&e, "spec.hostApplications", FIELD_INVALID,
                 "spec.hostApplications in body must be of type array: \"object\"");
    field_errors_release(&e);

    /* A quantity takes a string or an integer, nothing else; a bad string names the regex. */
    validate(&api_system_strategy, "{\"totalNetworkBandwidth\":true}", "spec.systemStrategy", 0,
             &e);
    expect_count(&e, 1, 0);
    expect_error(&e, "spec.systemStrategy.totalNetworkBandwidth", FIELD_INVALID, NULL);
    field_errors_release(&e);
    validate(&api_system_strategy, "{\"totalNetworkBandwidth\":\"10 G\"}", "", 0, &e);
    expect_count(&e, 1, 0);
    expect_error(&e, "totalNetworkBandwidth", FIELD_INVALID, NULL);
    field_errors_release(&e);
    validate(&api_system_strategy, "{\"totalNetworkBandwidth\":1000}", "", 0, &e);
    expect_count(&e, 0, 0);
    field_errors_release(&e);

    /* Durations and times must parse. */
    validate(reservation_spec(), "{\"template\":{},\"owners\":[{\"object\":{}}],\"ttl\":\"1 day\"}",
             "spec", 0, &e);
    expect_count(&e, 1, 0);
    expect_error(&e, "spec.ttl", FIELD_INVALID, NULL);
    field_errors_release(&e);
    validate(reservation_spec(),
             "{\"template\":{},\"owners\":[{\"object\":{}}],\"expires\":\"tomorrow\"}", "spec", 0,
             &e);
    expect_count(&e, 1, 0);
    expect_error(&e, "spec.expires", FIELD_INVALID, NULL);
    field_errors_release(&e);
}

/* Unknown fields: warnings as kube-apiserver sends them by default, errors under Strict; kept
 * silently under x-kubernetes-preserve-unknown-fields. */
static void test_unknown_fields(void **state)
{
    static const char doc[] = "{\"resourceUsedThresholdWithBE\":{\"foo\":1,\"enable\":true},"
                              "\"bar\":{},\"extensions\":{\"Object\":{\"x\":{\"y\":1}},"
                              "\"other\":2}}";
    struct field_errors e;
    (void)state;

    validate(&api_nodeslo_spec, doc, "spec", 0, &e);
    expect_count(&e, 0, 2);
    expect_error(&e, "spec.resourceUsedThresholdWithBE.foo", FIELD_WARNING, NULL);
    expect_rendered(&e, "unknown field \"spec.resourceUsedThresholdWithBE.foo\"");
    expect_rendered(&e, "unknown field \"spec.bar\"");
    field_errors_release(&e);

    validate(&api_nodeslo_spec, doc, "spec", API_V_STRICT, &e);
    expect_count(&e, 2, 0);
    expect_error(&e, "spec.resourceUsedThresholdWithBE.foo", FIELD_UNKNOWN, NULL);
    expect_error(&e, "spec.bar", FIELD_UNKNOWN, NULL);
    expect_rendered(&e, "unknown field \"spec.bar\"");
    field_errors_release(&e);

    validate(&api_nodeslo_spec, doc, "spec", API_V_TYPES, &e);
    expect_count(&e, 0, 0);
    field_errors_release(&e);
}

/* Webhook-only ranges and the go-playground gtfield pairs (manager-behaviour.md 1.7 step 3). */
static void test_webhook_ranges_and_pairs(void **state)
{
    static const struct {
        const char *doc;
        const char *field; /* NULL: valid in webhook mode */
    } rows[] = {
        {"{\"cpuEvictBEUsageThresholdPercent\":101}", "t.cpuEvictBEUsageThresholdPercent"},
        {"{\"cpuEvictBEUsageThresholdPercent\":100}", NULL},
        {"{\"cpuEvictTimeWindowSeconds\":0}", "t.cpuEvictTimeWindowSeconds"},
        {"{\"cpuEvictTimeWindowSeconds\":1}", NULL},
        {"{\"allocatableEvictPriorityThreshold\":8000}", "t.allocatableEvictPriorityThreshold"},
        {"{\"allocatableEvictPriorityThreshold\":7999}", NULL},
        {"{\"allocatableEvictPriorityThreshold\":-1}", "t.allocatableEvictPriorityThreshold"},
        /* Setting only one member of a pair fails. */
        {"{\"memoryEvictThresholdPercent\":70}", "t.memoryEvictLowerPercent"},
        {"{\"memoryEvictLowerPercent\":65}", "t.memoryEvictThresholdPercent"},
        {"{\"cpuEvictBESatisfactionLowerPercent\":60}", "t.cpuEvictBESatisfactionUpperPercent"},
        {"{\"cpuAllocatableEvictThresholdPercent\":110}", "t.cpuAllocatableEvictLowerPercent"},
        {"{\"memoryEvictThresholdPercent\":70,\"memoryEvictLowerPercent\":65}", NULL},
        {"{\"memoryEvictThresholdPercent\":70,\"memoryEvictLowerPercent\":70}",
         "t.memoryEvictThresholdPercent"},
        {"{\"cpuEvictThresholdPercent\":60,\"cpuEvictLowerPercent\":70}",
         "t.cpuEvictThresholdPercent"},
        {"{\"cpuEvictBESatisfactionUpperPercent\":90,\"cpuEvictBESatisfactionLowerPercent\":60}",
         NULL},
    };
    struct field_errors e;
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        validate(&api_resource_threshold_strategy, rows[i].doc, "t", API_V_WEBHOOK, &e);
        if (!rows[i].field && field_errors_count(&e))
            fail_msg("row %zu %s: unexpected errors", i, rows[i].doc);
        if (rows[i].field) {
            bool found = false;
            for (size_t j = 0; j < e.n; j++)
                found |= !strcmp(e.v[j].field, rows[i].field) && e.v[j].type != FIELD_WARNING;
            if (!found)
                fail_msg("row %zu %s: no error at %s", i, rows[i].doc, rows[i].field);
        }
        field_errors_release(&e);
    }

    /* Without API_V_WEBHOOK neither the webhook ranges nor the pairs apply. */
    validate(&api_resource_threshold_strategy,
             "{\"cpuEvictBEUsageThresholdPercent\":101,\"memoryEvictThresholdPercent\":70,"
             "\"allocatableEvictPriorityThreshold\":8000}",
             "t", 0, &e);
    expect_count(&e, 0, 0);
    field_errors_release(&e);
    validate(&api_cpu_burst_strategy, "{\"cpuBurstPercent\":0,\"cfsQuotaBurstPercent\":50}", "b", 0,
             &e);
    expect_count(&e, 0, 0);
    field_errors_release(&e);
    validate(&api_cpu_burst_strategy, "{\"cpuBurstPercent\":0,\"cfsQuotaBurstPercent\":50}", "b",
             API_V_WEBHOOK, &e);
    expect_count(&e, 2, 0);
    expect_error(&e, "b.cpuBurstPercent", FIELD_INVALID, NULL);
    expect_error(&e, "b.cfsQuotaBurstPercent", FIELD_INVALID, NULL);
    field_errors_release(&e);

    /* The resctrl pair lives two levels down. */
    validate(&api_resource_qos_strategy,
             "{\"beClass\":{\"resctrlQOS\":{\"catRangeStartPercent\":0}}}", "q", API_V_WEBHOOK, &e);
    expect_count(&e, 1, 0);
    expect_error(&e, "q.beClass.resctrlQOS.catRangeEndPercent", FIELD_REQUIRED, NULL);
    field_errors_release(&e);
    validate(&api_resource_qos_strategy,
             "{\"beClass\":{\"resctrlQOS\":{\"catRangeStartPercent\":30,"
             "\"catRangeEndPercent\":30}}}",
             "q", API_V_WEBHOOK, &e);
    expect_count(&e, 1, 0);
    expect_error(&e, "q.beClass.resctrlQOS.catRangeEndPercent", FIELD_INVALID, NULL);
    field_errors_release(&e);
}

/* The consumer rule of api-types.md 6.2 (lower must stay below the threshold) outside webhook
 * mode, where the pair rule does not run. */
static void test_threshold_consumer_rule(void **state)
{
    struct field_errors e;
    (void)state;

    validate(&api_resource_threshold_strategy,
             "{\"memoryEvictThresholdPercent\":65,\"memoryEvictLowerPercent\":70}", "t", 0, &e);
    expect_count(&e, 1, 0);
    expect_error(&e, "t.memoryEvictLowerPercent", FIELD_INVALID, NULL);
    field_errors_release(&e);
}

/* API_V_TYPES: only what json.Unmarshal into the Go type rejects. */
static void test_types_mode(void **state)
{
    struct field_errors e;
    (void)state;

    /* Out of range, unknown enum value, unknown field, missing required: all fine here. */
    validate(&api_nodeslo_spec,
             "{\"resourceUsedThresholdWithBE\":{\"cpuSuppressThresholdPercent\":101,"
             "\"cpuSuppressPolicy\":\"weird\",\"foo\":1},\"cpuBurstStrategy\":{\"policy\":\"x\"}}",
             "", API_V_TYPES, &e);
    expect_count(&e, 0, 0);
    field_errors_release(&e);
    validate(reservation_spec(), "{\"owners\":[],\"allocatePolicy\":\"Foo\"}", "spec", API_V_TYPES,
             &e);
    expect_count(&e, 0, 0);
    field_errors_release(&e);

    /* Wrong JSON types are errors, at any depth. */
    validate(&api_nodeslo_spec,
             "{\"resourceUsedThresholdWithBE\":{\"cpuSuppressThresholdPercent\":\"x\"},"
             "\"hostApplications\":[{\"name\":5}],\"systemStrategy\":{\"schedFeatures\":"
             "{\"A\":\"yes\"}}}",
             "spec", API_V_TYPES, &e);
    expect_count(&e, 3, 0);
    expect_error(&e, "spec.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent", FIELD_INVALID,
                 NULL);
    expect_error(&e, "spec.hostApplications[0].name", FIELD_INVALID, NULL);
    expect_error(&e, "spec.systemStrategy.schedFeatures[A]", FIELD_INVALID, NULL);
    field_errors_release(&e);

    /* A duration that time.ParseDuration rejects fails the decode, with Go's message. */
    validate(reservation_spec(), "{\"ttl\":\"12x\"}", "spec", API_V_TYPES, &e);
    expect_count(&e, 1, 0);
    expect_error(&e, "spec.ttl", FIELD_INVALID, "time: invalid duration \"12x\"");
    field_errors_release(&e);
}

/* Null values count as absent: no type error, required still reported. */
static void test_null_is_absent(void **state)
{
    struct field_errors e;
    (void)state;

    validate(reservation_spec(),
             "{\"template\":null,\"owners\":[{\"object\":{}}],\"ttl\":null,\"expires\":null}",
             "spec", 0, &e);
    expect_count(&e, 1, 0);
    expect_rendered(&e, "spec.template: Required value");
    field_errors_release(&e);
}

static void test_value_repr_and_lookup(void **state)
{
    static const struct {
        const char *json;
        const char *repr;
    } rows[] = {
        {"\"a\\\"b\"", "\"a\\\"b\""},
        {"12", "12"},
        {"-1.5", "-1.5"},
        {"true", "true"},
        {"null", "null"},
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        struct strbuf sb = STRBUF_INIT;
        cJSON *v = J(rows[i].json);
        api_value_repr(v, &sb);
        assert_string_equal(sb.buf, rows[i].repr);
        strbuf_release(&sb);
        cJSON_Delete(v);
    }
    assert_non_null(api_schema_prop(&api_system_strategy, "totalNetworkBandwidth"));
    assert_null(api_schema_prop(&api_system_strategy, "nope"));
    assert_null(api_schema_prop(&api_string, "x"));
}

/* Zero values as Go encodes them (api-types.md 0.2). */
static void test_zero_values(void **state)
{
    static const struct {
        const struct api_schema *s;
        const char *zero;
    } rows[] = {
        {&api_string, "\"\""},      {&api_int64, "0"},         {&api_bool, "false"},
        {&api_quantity, "\"0\""},   {&api_duration, "\"0s\""}, {&api_time, "null"},
        {&api_string_list, "null"}, {&api_string_map, "null"},
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        cJSON *z = api_zero_value(rows[i].s);
        assert_non_null(z);
        assert_json_eq(z, rows[i].zero);
        cJSON_Delete(z);
    }
}

/* ---- defaulting ---- */

static void run_default(const struct api_schema *s, const char *in, unsigned flags,
                        const char *want, int line)
{
    cJSON *v = J(in);
    assert_int_equal(api_default(s, v, flags), 0);
    assert_json_eq_at(v, want, line);
    cJSON_Delete(v);
}

/* CRD defaults are applied only where the parent object exists, as kube-apiserver does. */
static void test_default_crd(void **state)
{
    const struct api_kind *res = kind("scheduling.koordinator.sh/v1alpha1", "Reservation");
    (void)state;

    run_default(res->spec, "{\"template\":{},\"owners\":[]}", 0,
                "{\"template\":{},\"owners\":[],\"ttl\":\"24h\",\"allocateOnce\":true}", __LINE__);
    /* null counts as absent; set values stay. */
    run_default(res->spec, "{\"ttl\":null,\"allocateOnce\":false}", 0,
                "{\"ttl\":\"24h\",\"allocateOnce\":false}", __LINE__);
    run_default(res->spec, "{\"ttl\":\"1h\",\"preAllocationPolicy\":{}}", 0,
                "{\"ttl\":\"1h\",\"allocateOnce\":true,\"preAllocationPolicy\":{\"mode\":"
                "\"Default\",\"enableMultiple\":false}}",
                __LINE__);
    /* Whole object: no status object, no status.phase; an empty status gets Pending. */
    run_default(api_kind_schema(res), "{\"spec\":{}}", 0,
                "{\"spec\":{\"ttl\":\"24h\",\"allocateOnce\":true}}", __LINE__);
    run_default(api_kind_schema(res), "{\"status\":{}}", 0, "{\"status\":{\"phase\":\"Pending\"}}",
                __LINE__);
    run_default(api_kind_schema(res), "{\"status\":{\"phase\":\"Available\"}}", 0,
                "{\"status\":{\"phase\":\"Available\"}}", __LINE__);

    /* networkQOS CRD defaults (api-types.md 6.3.5) only inside a present networkQOS. */
    run_default(&api_nodeslo_spec,
                "{\"resourceQOSStrategy\":{\"beClass\":{\"networkQOS\":{\"enable\":true,"
                "\"ingressLimit\":50}},\"lsClass\":{}}}",
                0,
                "{\"resourceQOSStrategy\":{\"beClass\":{\"networkQOS\":{\"enable\":true,"
                "\"ingressRequest\":0,\"ingressLimit\":50,\"egressRequest\":0,"
                "\"egressLimit\":100}},\"lsClass\":{}}}",
                __LINE__);

    /* Defaults reach array elements: DeviceInfo.health defaults to false. */
    run_default(kind("slo.koordinator.sh/v1alpha1", "NodeMetric")->status,
                "{\"nodeMetric\":{\"nodeUsage\":{\"devices\":[{\"type\":\"gpu\"},"
                "{\"health\":true}]}}}",
                0,
                "{\"nodeMetric\":{\"nodeUsage\":{\"devices\":[{\"type\":\"gpu\",\"health\":false},"
                "{\"health\":true}]}}}",
                __LINE__);
}

/* Controller defaults (API_CTRL) only with API_D_CTRL (api-types.md 5.1). */
static void test_default_ctrl(void **state)
{
    const struct api_schema *spec = kind("slo.koordinator.sh/v1alpha1", "NodeMetric")->spec;
    (void)state;

    run_default(spec, "{}", 0, "{}", __LINE__);
    run_default(spec, "{\"metricCollectPolicy\":{}}", 0, "{\"metricCollectPolicy\":{}}", __LINE__);
    run_default(spec, "{}", API_D_CTRL,
                "{\"metricCollectPolicy\":{\"aggregateDurationSeconds\":300,"
                "\"reportIntervalSeconds\":60,\"nodeAggregatePolicy\":{\"durations\":[\"5m0s\","
                "\"10m0s\",\"30m0s\"]},\"nodeMemoryCollectPolicy\":\"usageWithoutPageCache\"}}",
                __LINE__);
    run_default(spec,
                "{\"metricCollectPolicy\":{\"reportIntervalSeconds\":30,"
                "\"nodeAggregatePolicy\":{\"durations\":[\"1m\"]}}}",
                API_D_CTRL,
                "{\"metricCollectPolicy\":{\"aggregateDurationSeconds\":300,"
                "\"reportIntervalSeconds\":30,\"nodeAggregatePolicy\":{\"durations\":[\"1m\"]},"
                "\"nodeMemoryCollectPolicy\":\"usageWithoutPageCache\"}}",
                __LINE__);
}

/* ---- encoding ---- */

static void run_encode(const struct api_schema *s, const char *in, const char *want, int line)
{
    cJSON *v = in ? J(in) : NULL, *out = (cJSON *)1;

    assert_int_equal(api_encode(s, v, &out), 0);
    if (!want) {
        if (out)
            fail_msg("line %d: expected nothing, got %s", line, print(out));
    } else {
        assert_non_null(out);
        assert_json_eq_at(out, want, line);
    }
    cJSON_Delete(out);
    cJSON_Delete(v);
}

/* omitempty on value fields, empty slices and maps dropped, always-emitted structs present,
 * unknown keys pruned, pointers kept even when zero. */
static void test_encode_omitempty_always(void **state)
{
    (void)state;

    run_encode(&api_nodeslo_spec,
               "{\"resourceUsedThresholdWithBE\":{\"enable\":false,"
               "\"cpuSuppressThresholdPercent\":0,\"cpuSuppressPolicy\":\"\",\"foo\":1},"
               "\"resourceQOSStrategy\":{\"beClass\":{\"blkioQOS\":{\"enable\":true,\"blocks\":"
               "[{\"name\":\"/dev/sda\",\"type\":\"device\"},{\"name\":\"\",\"ioCfg\":"
               "{\"readIOPS\":0}}]}},\"lsClass\":{\"blkioQOS\":{\"blocks\":[]}}},"
               "\"systemStrategy\":{\"schedFeatures\":{}},\"hostApplications\":[],"
               "\"extensions\":{\"Object\":{\"k\":{\"x\":[]}}},\"unknown\":true}",
               "{\"resourceUsedThresholdWithBE\":{\"enable\":false,"
               "\"cpuSuppressThresholdPercent\":0},"
               "\"resourceQOSStrategy\":{\"beClass\":{\"blkioQOS\":{\"enable\":true,\"blocks\":"
               "[{\"name\":\"/dev/sda\",\"type\":\"device\",\"ioCfg\":{}},{\"ioCfg\":"
               "{\"readIOPS\":0}}]}},\"lsClass\":{\"blkioQOS\":{}}},"
               "\"systemStrategy\":{\"totalNetworkBandwidth\":\"0\"},"
               "\"extensions\":{\"Object\":{\"k\":{\"x\":[]}}}}",
               __LINE__);
    /* Non-pointer struct fields and fields without omitempty (api-types.md 0.2 items 2 and 3). */
    run_encode(kind("slo.koordinator.sh/v1alpha1", "NodeMetric")->status,
               "{\"nodeMetric\":{\"numaUsages\":[{}],\"aggregatedNodeUsages\":[{}],"
               "\"nodeUsage\":{\"devices\":[{}]}}}",
               "{\"nodeMetric\":{\"numaUsages\":[{\"numaNodeID\":0}],\"aggregatedNodeUsages\":"
               "[{\"duration\":\"0s\"}],\"nodeUsage\":{\"devices\":[{\"health\":false}]}}}",
               __LINE__);
    run_encode(kind("scheduling.koordinator.sh/v1alpha1", "Reservation")->status,
               "{\"conditions\":[{\"type\":\"Ready\",\"reason\":\"\"}]}",
               "{\"conditions\":[{\"type\":\"Ready\",\"lastProbeTime\":null,"
               "\"lastTransitionTime\":null}]}",
               __LINE__);
    run_encode(kind("analysis.koordinator.sh/v1alpha1", "Recommendation")->spec, "{\"target\":{}}",
               "{\"target\":{\"type\":\"\"}}", __LINE__);
    /* A nil pointer (null) is omitted. */
    run_encode(reservation_spec(), "{\"ttl\":null,\"owners\":[]}", "{\"owners\":[]}", __LINE__);
    run_encode(reservation_spec(), "{}", "{\"owners\":null}", __LINE__);
    /* An absent scalar encodes to nothing; an absent object to its zero value. */
    run_encode(&api_string, NULL, NULL, __LINE__);
    run_encode(&api_system_strategy, NULL, "{\"totalNetworkBandwidth\":\"0\"}", __LINE__);
}

/* Whole objects: metadata, spec and status are non-pointer structs in Go. */
static void test_encode_object(void **state)
{
    const struct api_kind *k = kind("slo.koordinator.sh/v1alpha1", "NodeSLO");
    cJSON *in = J("{\"apiVersion\":\"slo.koordinator.sh/v1alpha1\",\"kind\":\"NodeSLO\","
                  "\"metadata\":{\"name\":\"n1\"},\"junk\":1}"),
          *out = NULL;
    (void)state;

    assert_int_equal(api_object_encode(k, in, &out), 0);
    assert_json_eq(out, "{\"apiVersion\":\"slo.koordinator.sh/v1alpha1\",\"kind\":\"NodeSLO\","
                        "\"metadata\":{\"name\":\"n1\"},\"spec\":{},\"status\":{}}");
    cJSON_Delete(out);
    cJSON_Delete(in);
}

/* Go writes properties in struct order, whatever order the input had. */
static void test_encode_order(void **state)
{
    cJSON *in = J("{\"sharePoolThresholdPercent\":50,\"cpuBurstPercent\":1000,"
                  "\"policy\":\"auto\"}"),
          *out = NULL;
    char *txt;
    (void)state;

    assert_int_equal(api_encode(&api_cpu_burst_strategy, in, &out), 0);
    txt = print(out);
    assert_string_equal(
        txt, "{\"policy\":\"auto\",\"cpuBurstPercent\":1000,\"sharePoolThresholdPercent\":50}");
    cJSON_free(txt);
    cJSON_Delete(out);
    cJSON_Delete(in);
}

/* Quantities, durations and times print in the canonical form a Go client writes. */
static void test_encode_canonical(void **state)
{
    static const struct {
        const char *in;
        const char *out;
    } qty[] = {
        {"\"1.5Gi\"", "\"1536Mi\""}, {"\"1000m\"", "\"1\""}, {"\"0.5\"", "\"500m\""},
        {"\"2048Ki\"", "\"2Mi\""},   {"1000", "\"1k\""},     {"\"10G\"", "\"10G\""},
        {"\"0\"", "\"0\""},
    };
    static const struct {
        const char *in;
        const char *out;
    } dur[] = {
        {"24h", "24h0m0s"}, {"90m", "1h30m0s"}, {"0", "0s"},
        {"1.5s", "1.5s"},   {"300ms", "300ms"}, {"5m0s", "5m0s"},
    };
    char in[128], want[128];
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(qty); i++) {
        (void)snprintf(in, sizeof(in), "{\"totalNetworkBandwidth\":%s}", qty[i].in);
        (void)snprintf(want, sizeof(want), "{\"totalNetworkBandwidth\":%s}", qty[i].out);
        run_encode(&api_system_strategy, in, want, __LINE__);
    }
    for (size_t i = 0; i < ARRAY_SIZE(dur); i++) {
        (void)snprintf(in, sizeof(in), "{\"ttl\":\"%s\"}", dur[i].in);
        (void)snprintf(want, sizeof(want), "{\"ttl\":\"%s\",\"owners\":null}", dur[i].out);
        run_encode(reservation_spec(), in, want, __LINE__);
    }
    run_encode(kind("slo.koordinator.sh/v1alpha1", "NodeMetric")->spec,
               "{\"metricCollectPolicy\":{\"nodeAggregatePolicy\":{\"durations\":[\"5m\","
               "\"10m\",\"1h\"]}}}",
               "{\"metricCollectPolicy\":{\"nodeAggregatePolicy\":{\"durations\":[\"5m0s\","
               "\"10m0s\",\"1h0m0s\"]}}}",
               __LINE__);
    run_encode(kind("slo.koordinator.sh/v1alpha1", "NodeMetric")->status,
               "{\"updateTime\":\"2024-03-05T08:00:00Z\",\"nodeMetric\":{\"nodeUsage\":"
               "{\"resources\":{\"cpu\":\"7500m\",\"memory\":\"30Gi\",\"pods\":\"0.5\"}}}}",
               "{\"updateTime\":\"2024-03-05T08:00:00Z\",\"nodeMetric\":{\"nodeUsage\":"
               "{\"resources\":{\"cpu\":\"7500m\",\"memory\":\"30Gi\",\"pods\":\"500m\"}}}}",
               __LINE__);
}

/* ---- overlay (manager-behaviour.md 1.4) ---- */

static void run_overlay(const struct api_schema *s, const char *base, const char *ov,
                        const char *want, int line)
{
    cJSON *b = base ? J(base) : NULL, *o = J(ov);

    assert_int_equal(api_overlay(s, &b, o), 0);
    assert_non_null(b);
    assert_json_eq_at(b, want, line);
    cJSON_Delete(b);
    cJSON_Delete(o);
}

#define THRESHOLD_DEFAULT                                                                          \
    "{\"enable\":false,\"cpuSuppressThresholdPercent\":65,\"cpuSuppressPolicy\":\"cpuset\","       \
    "\"memoryEvictThresholdPercent\":70,\"cpuEvictPolicy\":\"evictByRealLimit\"}"

static void test_overlay_fields(void **state)
{
    (void)state;

    /* An omitted field keeps the base value. */
    run_overlay(&api_resource_threshold_strategy, THRESHOLD_DEFAULT,
                "{\"cpuSuppressThresholdPercent\":80}",
                "{\"enable\":false,\"cpuSuppressThresholdPercent\":80,\"cpuSuppressPolicy\":"
                "\"cpuset\",\"memoryEvictThresholdPercent\":70,\"cpuEvictPolicy\":"
                "\"evictByRealLimit\"}",
                __LINE__);
    /* Pointer fields set to false/0 do override. */
    run_overlay(&api_resource_threshold_strategy,
                "{\"enable\":true,\"cpuSuppressThresholdPercent\":65}",
                "{\"enable\":false,\"cpuSuppressThresholdPercent\":0}",
                "{\"enable\":false,\"cpuSuppressThresholdPercent\":0}", __LINE__);
    /* A non-pointer omitempty field at its zero value is not serialised, so cannot override. */
    run_overlay(&api_resource_threshold_strategy,
                "{\"cpuSuppressPolicy\":\"cpuset\",\"cpuEvictPolicy\":\"evictByRealLimit\"}",
                "{\"cpuSuppressPolicy\":\"\",\"cpuEvictPolicy\":\"evictByAllocatable\"}",
                "{\"cpuSuppressPolicy\":\"cpuset\",\"cpuEvictPolicy\":\"evictByAllocatable\"}",
                __LINE__);
    /* null is a nil pointer: omitted. */
    run_overlay(&api_resource_threshold_strategy, THRESHOLD_DEFAULT,
                "{\"cpuSuppressThresholdPercent\":null}", THRESHOLD_DEFAULT, __LINE__);
    /* Nested objects merge field by field. */
    run_overlay(&api_resource_qos_strategy,
                "{\"beClass\":{\"memoryQOS\":{\"enable\":false,\"wmarkRatio\":95,"
                "\"wmarkMinAdj\":50}}}",
                "{\"beClass\":{\"memoryQOS\":{\"wmarkRatio\":90},\"cpuQOS\":{\"enable\":true}}}",
                "{\"beClass\":{\"memoryQOS\":{\"enable\":false,\"wmarkRatio\":90,"
                "\"wmarkMinAdj\":50},\"cpuQOS\":{\"enable\":true}}}",
                __LINE__);
    /* A NULL base takes the canonical override; unknown keys are pruned on the way. */
    run_overlay(&api_resource_threshold_strategy, NULL,
                "{\"cpuSuppressThresholdPercent\":80,\"foo\":1}",
                "{\"cpuSuppressThresholdPercent\":80}", __LINE__);
    /* The override is canonicalised before it is decoded. */
    run_overlay(&api_system_strategy, "{\"totalNetworkBandwidth\":\"10G\"}",
                "{\"totalNetworkBandwidth\":\"1.5Gi\"}", "{\"totalNetworkBandwidth\":\"1536Mi\"}",
                __LINE__);
}

/* totalNetworkBandwidth is a non-pointer Quantity: always serialised, so an override that does
 * not set it resets it to "0" (upstream quirk, 1.4). */
static void test_overlay_bandwidth_quirk(void **state)
{
    (void)state;

    run_overlay(&api_system_strategy,
                "{\"minFreeKbytesFactor\":100,\"totalNetworkBandwidth\":\"10G\"}",
                "{\"watermarkScaleFactor\":150}",
                "{\"minFreeKbytesFactor\":100,\"watermarkScaleFactor\":150,"
                "\"totalNetworkBandwidth\":\"0\"}",
                __LINE__);
}

static void test_overlay_lists_and_maps(void **state)
{
    (void)state;

    /* An empty list never clears the base list. */
    run_overlay(&api_resource_qos_strategy,
                "{\"beClass\":{\"blkioQOS\":{\"enable\":true,\"blocks\":[{\"name\":\"/dev/sda\","
                "\"ioCfg\":{\"readIOPS\":1}}]}}}",
                "{\"beClass\":{\"blkioQOS\":{\"blocks\":[]}}}",
                "{\"beClass\":{\"blkioQOS\":{\"enable\":true,\"blocks\":[{\"name\":\"/dev/sda\","
                "\"ioCfg\":{\"readIOPS\":1}}]}}}",
                __LINE__);
    /* An empty map never clears the base map. */
    run_overlay(&api_system_strategy,
                "{\"schedFeatures\":{\"A\":true},\"totalNetworkBandwidth\":\"10G\"}",
                "{\"schedFeatures\":{},\"totalNetworkBandwidth\":\"10G\"}",
                "{\"schedFeatures\":{\"A\":true},\"totalNetworkBandwidth\":\"10G\"}", __LINE__);
    /* Maps: key union; a key in the override replaces the whole value. */
    run_overlay(&api_system_strategy,
                "{\"schedFeatures\":{\"A\":true,\"B\":false},\"totalNetworkBandwidth\":\"0\"}",
                "{\"schedFeatures\":{\"B\":true,\"C\":false}}",
                "{\"schedFeatures\":{\"A\":true,\"B\":true,\"C\":false},"
                "\"totalNetworkBandwidth\":\"0\"}",
                __LINE__);
    run_overlay(&api_extensions_map, "{\"Object\":{\"a\":{\"x\":1,\"y\":2},\"b\":1}}",
                "{\"Object\":{\"a\":{\"z\":3},\"c\":[1]}}",
                "{\"Object\":{\"a\":{\"z\":3},\"b\":1,\"c\":[1]}}", __LINE__);
    /* Arrays take the override's length; objects at the same index merge field-wise. */
    run_overlay(&api_resource_qos_strategy,
                "{\"beClass\":{\"blkioQOS\":{\"blocks\":[{\"name\":\"/dev/sda\",\"type\":"
                "\"device\",\"ioCfg\":{\"readIOPS\":100,\"writeIOPS\":200}},{\"name\":"
                "\"/dev/sdb\",\"ioCfg\":{\"readBPS\":5}}]}}}",
                "{\"beClass\":{\"blkioQOS\":{\"blocks\":[{\"ioCfg\":{\"writeIOPS\":300}}]}}}",
                "{\"beClass\":{\"blkioQOS\":{\"blocks\":[{\"name\":\"/dev/sda\",\"type\":"
                "\"device\",\"ioCfg\":{\"readIOPS\":100,\"writeIOPS\":300}}]}}}",
                __LINE__);
    /* A longer override appends its extra elements in canonical form. */
    run_overlay(&api_resource_qos_strategy,
                "{\"beClass\":{\"blkioQOS\":{\"blocks\":[{\"name\":\"a\",\"ioCfg\":"
                "{\"readIOPS\":1}}]}}}",
                "{\"beClass\":{\"blkioQOS\":{\"blocks\":[{\"ioCfg\":{\"writeIOPS\":2}},"
                "{\"name\":\"b\"}]}}}",
                "{\"beClass\":{\"blkioQOS\":{\"blocks\":[{\"name\":\"a\",\"ioCfg\":"
                "{\"readIOPS\":1,\"writeIOPS\":2}},{\"name\":\"b\",\"ioCfg\":{}}]}}}",
                __LINE__);
    /* Scalar elements simply replace. */
    run_overlay(kind("slo.koordinator.sh/v1alpha1", "NodeMetric")->spec,
                "{\"metricCollectPolicy\":{\"nodeAggregatePolicy\":{\"durations\":[\"5m0s\","
                "\"10m0s\",\"30m0s\"]}}}",
                "{\"metricCollectPolicy\":{\"nodeAggregatePolicy\":{\"durations\":[\"15m\"]}}}",
                "{\"metricCollectPolicy\":{\"nodeAggregatePolicy\":{\"durations\":"
                "[\"15m0s\"]}}}",
                __LINE__);
}

/* ---- fault injection ---- */

/* A NodeSLO spec with every shape the walkers handle: nested objects, arrays of objects,
 * always-emitted structs, maps, quantities, preserved unknown keys. */
static const char nodeslo_doc[] =
    "{\"resourceUsedThresholdWithBE\":{\"enable\":true,\"cpuSuppressThresholdPercent\":65,"
    "\"cpuSuppressPolicy\":\"cpuset\",\"memoryEvictThresholdPercent\":70},"
    "\"resourceQOSStrategy\":{\"policies\":{\"cpuPolicy\":\"groupIdentity\"},\"beClass\":"
    "{\"cpuQOS\":{\"enable\":true,\"groupIdentity\":-1},\"memoryQOS\":{\"wmarkRatio\":90},"
    "\"blkioQOS\":{\"enable\":true,\"blocks\":[{\"name\":\"/dev/sda\",\"type\":\"device\","
    "\"ioCfg\":{\"readIOPS\":100}},{\"name\":\"vg0\"}]},\"networkQOS\":{\"ingressRequest\":10,"
    "\"egressLimit\":\"50M\"}}},"
    "\"cpuBurstStrategy\":{\"policy\":\"auto\",\"cpuBurstPercent\":1000},"
    "\"systemStrategy\":{\"schedFeatures\":{\"A\":true,\"B\":false},"
    "\"totalNetworkBandwidth\":\"1.5Gi\"},"
    "\"extensions\":{\"Object\":{\"ext\":{\"k\":[1,2,{\"x\":null}]}},\"kept\":\"yes\"},"
    "\"hostApplications\":[{\"name\":\"nginx\",\"qos\":\"LS\",\"cgroupPath\":{\"base\":"
    "\"CgroupRoot\",\"relativePath\":\"nginx\"}}]}";

static const char nodeslo_ov[] =
    "{\"resourceUsedThresholdWithBE\":{\"enable\":false,\"cpuSuppressThresholdPercent\":80},"
    "\"resourceQOSStrategy\":{\"beClass\":{\"blkioQOS\":{\"blocks\":[{\"ioCfg\":"
    "{\"writeIOPS\":5}},{\"name\":\"vg1\"},{\"name\":\"new\",\"type\":\"podvolume\"}]}},"
    "\"lsClass\":{\"memoryQOS\":{\"enable\":true}}},"
    "\"systemStrategy\":{\"schedFeatures\":{\"B\":true,\"C\":true}},"
    "\"extensions\":{\"Object\":{\"ext\":{\"k\":[]},\"ext2\":1}},"
    "\"hostApplications\":[{\"priority\":\"koord-prod\"}]}";

/* For n = 1, 2, ... the n-th checked allocation (cJSON's included, after codec_init()) and all
 * later ones fail, until a run injects nothing: every injected run must return -ENOMEM and
 * leave nothing allocated (ASan and valgrind check that), the clean run must succeed. */
static void test_fault_injection_encode(void **state)
{
    cJSON *doc = J(nodeslo_doc), *want = NULL;
    long n;
    (void)state;

    assert_int_equal(api_encode(&api_nodeslo_spec, doc, &want), 0);
    for (n = 1;; n++) {
        cJSON *out = (cJSON *)1;
        int r, injected;

        alloc_fail_after(n);
        r = api_encode(&api_nodeslo_spec, doc, &out);
        injected = alloc_injected();
        alloc_fail_after(0);
        if (!injected) {
            assert_int_equal(r, 0);
            assert_true(cJSON_Compare(out, want, true));
            cJSON_Delete(out);
            break;
        }
        if (r != -ENOMEM)
            fail_msg("allocation %ld failed but api_encode returned %d", n, r);
        assert_null(out);
    }
    assert_true(n > 10);
    cJSON_Delete(want);
    cJSON_Delete(doc);
}

static void test_fault_injection_overlay(void **state)
{
    cJSON *ov = J(nodeslo_ov), *want = J(nodeslo_doc);
    long n;
    (void)state;

    assert_int_equal(api_overlay(&api_nodeslo_spec, &want, ov), 0);
    for (n = 1;; n++) {
        cJSON *base = J(nodeslo_doc);
        int r, injected;

        alloc_fail_after(n);
        r = api_overlay(&api_nodeslo_spec, &base, ov);
        injected = alloc_injected();
        alloc_fail_after(0);
        if (!injected) {
            assert_int_equal(r, 0);
            assert_true(cJSON_Compare(base, want, true));
            cJSON_Delete(base);
            break;
        }
        if (r != -ENOMEM)
            fail_msg("allocation %ld failed but api_overlay returned %d", n, r);
        cJSON_Delete(base);
    }
    assert_true(n > 10);
    /* The merge itself, by hand from 1.4. */
    assert_json_eq(
        want,
        "{\"resourceUsedThresholdWithBE\":{\"enable\":false,\"cpuSuppressThresholdPercent\":80,"
        "\"cpuSuppressPolicy\":\"cpuset\",\"memoryEvictThresholdPercent\":70},"
        "\"resourceQOSStrategy\":{\"policies\":{\"cpuPolicy\":\"groupIdentity\"},\"beClass\":"
        "{\"cpuQOS\":{\"enable\":true,\"groupIdentity\":-1},\"memoryQOS\":{\"wmarkRatio\":90},"
        "\"blkioQOS\":{\"enable\":true,\"blocks\":[{\"name\":\"/dev/sda\",\"type\":\"device\","
        "\"ioCfg\":{\"readIOPS\":100,\"writeIOPS\":5}},{\"name\":\"vg1\",\"ioCfg\":{}},"
        "{\"name\":\"new\",\"type\":\"podvolume\",\"ioCfg\":{}}]},\"networkQOS\":"
        "{\"ingressRequest\":10,\"egressLimit\":\"50M\"}},\"lsClass\":{\"memoryQOS\":"
        "{\"enable\":true}}},"
        "\"cpuBurstStrategy\":{\"policy\":\"auto\",\"cpuBurstPercent\":1000},"
        "\"systemStrategy\":{\"schedFeatures\":{\"A\":true,\"B\":true,\"C\":true},"
        "\"totalNetworkBandwidth\":\"0\"},"
        "\"extensions\":{\"Object\":{\"ext\":{\"k\":[]},\"ext2\":1},\"kept\":\"yes\"},"
        "\"hostApplications\":[{\"name\":\"nginx\",\"priority\":\"koord-prod\",\"qos\":\"LS\","
        "\"cgroupPath\":{\"base\":\"CgroupRoot\",\"relativePath\":\"nginx\"}}]}");
    cJSON_Delete(want);
    cJSON_Delete(ov);
}

/* Defaulting allocates too (parsed defaults, keys); a failure must surface as -ENOMEM, never as a
 * silently half-defaulted object. The document has a null-valued key to replace. */
static void test_fault_injection_default(void **state)
{
    static const char doc[] = "{\"spec\":{\"ttl\":null,\"owners\":[]},\"status\":{}}";
    static const char want[] = "{\"spec\":{\"ttl\":\"24h\",\"owners\":[],\"allocateOnce\":true},"
                               "\"status\":{\"phase\":\"Pending\"}}";
    const struct api_schema *s =
        api_kind_schema(kind("scheduling.koordinator.sh/v1alpha1", "Reservation"));
    long n;
    (void)state;

    for (n = 1;; n++) {
        cJSON *v = J(doc);
        int r, injected;

        alloc_fail_after(n);
        r = api_default(s, v, 0);
        injected = alloc_injected();
        alloc_fail_after(0);
        if (!injected) {
            assert_int_equal(r, 0);
            assert_json_eq(v, want);
            cJSON_Delete(v);
            break;
        }
        if (r != -ENOMEM)
            fail_msg("allocation %ld failed but api_default returned %d", n, r);
        cJSON_Delete(v);
    }
    assert_true(n > 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_required_unsupported_invalid),
        cmocka_unit_test(test_range_messages),
        cmocka_unit_test(test_type_messages),
        cmocka_unit_test(test_unknown_fields),
        cmocka_unit_test(test_webhook_ranges_and_pairs),
        cmocka_unit_test(test_threshold_consumer_rule),
        cmocka_unit_test(test_types_mode),
        cmocka_unit_test(test_null_is_absent),
        cmocka_unit_test(test_value_repr_and_lookup),
        cmocka_unit_test(test_zero_values),
        cmocka_unit_test(test_default_crd),
        cmocka_unit_test(test_default_ctrl),
        cmocka_unit_test(test_encode_omitempty_always),
        cmocka_unit_test(test_encode_object),
        cmocka_unit_test(test_encode_order),
        cmocka_unit_test(test_encode_canonical),
        cmocka_unit_test(test_overlay_fields),
        cmocka_unit_test(test_overlay_bandwidth_quirk),
        cmocka_unit_test(test_overlay_lists_and_maps),
        cmocka_unit_test(test_fault_injection_encode),
        cmocka_unit_test(test_fault_injection_overlay),
        cmocka_unit_test(test_fault_injection_default),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
