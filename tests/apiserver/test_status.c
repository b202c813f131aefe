/*
 * Tests for apiserver/status: the Status objects kube-apiserver answers with, compared whole
 * against the JSON of reference kubernetes-api.md 2.4-2.5 (written out by hand here).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "apiserver/status.h"
#include "base/base.h"
#include "testutil.h"

static void expect(cJSON *got, const char *want)
{
    assert_json_eq(got, want);
    cJSON_Delete(got);
}

static void test_named(void **state)
{
    struct api_status_target nm = {"slo.koordinator.sh", "nodemetrics", "n1"};
    struct api_status_target pod = {"", "pods", "p"};
    (void)state;

    expect(api_status_not_found(&nm),
           "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
           "\"message\":\"nodemetrics.slo.koordinator.sh \\\"n1\\\" not found\",\"reason\":"
           "\"NotFound\",\"details\":{\"name\":\"n1\",\"group\":\"slo.koordinator.sh\","
           "\"kind\":\"nodemetrics\"},\"code\":404}");
    expect(api_status_already_exists(&pod),
           "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
           "\"message\":\"pods \\\"p\\\" already exists\",\"reason\":\"AlreadyExists\","
           "\"details\":{\"name\":\"p\",\"kind\":\"pods\"},\"code\":409}");
    expect(api_status_conflict(&pod),
           "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
           "\"message\":\"Operation cannot be fulfilled on pods \\\"p\\\": the object has been "
           "modified; please apply your changes to the latest version and try again\","
           "\"reason\":\"Conflict\",\"details\":{\"name\":\"p\",\"kind\":\"pods\"},\"code\":409}");
    expect(api_status_expired(100, 200),
           "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
           "\"message\":\"too old resource version: 100 (200)\",\"reason\":\"Expired\","
           "\"code\":410}");
}

static void test_invalid(void **state)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    (void)state;

    field_error_add(&errs, FIELD_FORBIDDEN, "spec.nodeName", NULL,
                    "cannot be set until all schedulingGates have been cleared");
    expect(api_status_invalid("Pod", "", "p", &errs),
           "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
           "\"message\":\"Pod \\\"p\\\" is invalid: spec.nodeName: Forbidden: cannot be set "
           "until all schedulingGates have been cleared\",\"reason\":\"Invalid\",\"details\":"
           "{\"name\":\"p\",\"kind\":\"Pod\",\"causes\":[{\"reason\":\"FieldValueForbidden\","
           "\"message\":\"Forbidden: cannot be set until all schedulingGates have been "
           "cleared\",\"field\":\"spec.nodeName\"}]},\"code\":422}");

    /* Several errors: bracketed and comma-joined; warnings never become causes. */
    field_error_add(&errs, FIELD_WARNING, "spec.x", NULL, "unknown field \"spec.x\"");
    field_error_add(&errs, FIELD_INVALID, "spec.ttl", "\"12h\"",
                    "ttl and expires are mutually exclusive");
    expect(api_status_invalid("Reservation", "scheduling.koordinator.sh", "r", &errs),
           "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
           "\"message\":\"Reservation.scheduling.koordinator.sh \\\"r\\\" is invalid: "
           "[spec.nodeName: Forbidden: cannot be set until all schedulingGates have been "
           "cleared, spec.ttl: Invalid value: \\\"12h\\\": ttl and expires are mutually "
           "exclusive]\",\"reason\":\"Invalid\",\"details\":{\"name\":\"r\",\"group\":"
           "\"scheduling.koordinator.sh\",\"kind\":\"Reservation\",\"causes\":[{\"reason\":"
           "\"FieldValueForbidden\",\"message\":\"Forbidden: cannot be set until all "
           "schedulingGates have been cleared\",\"field\":\"spec.nodeName\"},{\"reason\":"
           "\"FieldValueInvalid\",\"message\":\"Invalid value: \\\"12h\\\": ttl and expires "
           "are mutually exclusive\",\"field\":\"spec.ttl\"}]},\"code\":422}");
    field_errors_release(&errs);
}

static void test_success(void **state)
{
    struct api_status_target nm = {"slo.koordinator.sh", "nodemetrics", "n1"};
    (void)state;

    expect(api_status_success(200, &nm, "u-1"),
           "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Success\","
           "\"details\":{\"name\":\"n1\",\"group\":\"slo.koordinator.sh\",\"kind\":"
           "\"nodemetrics\",\"uid\":\"u-1\"}}");
    expect(api_status_success(201, NULL, NULL),
           "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Success\","
           "\"code\":201}");
}

static void test_from_errno(void **state)
{
    struct api_status_target pod = {"", "pods", "p"};
    static const struct {
        int r;
        int code;
        const char *reason;
    } rows[] = {
        {-ENOENT, 404, "NotFound"},          {-EEXIST, 409, "AlreadyExists"},
        {-ESTALE, 409, "Conflict"},          {-E2BIG, 413, "RequestEntityTooLarge"},
        {-EINVAL, 400, "BadRequest"},        {-EACCES, 403, "Forbidden"},
        {-EBUSY, 503, "ServiceUnavailable"}, {-EIO, 500, "InternalError"},
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        cJSON *s = api_status_from_errno(rows[i].r, NULL, &pod);
        assert_int_equal(cJSON_GetObjectItem(s, "code")->valueint, rows[i].code);
        assert_string_equal(cJSON_GetObjectItem(s, "reason")->valuestring, rows[i].reason);
        assert_string_equal(cJSON_GetObjectItem(s, "status")->valuestring, "Failure");
        cJSON_Delete(s);
    }
    expect(api_status_from_errno(-EIO, "disk on fire", NULL),
           "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
           "\"message\":\"Internal error occurred: disk on fire\",\"reason\":\"InternalError\","
           "\"code\":500}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_named),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_success),
        cmocka_unit_test(test_from_errno),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
