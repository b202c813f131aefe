/*
 * Tests for api/types_batch.c: Job defaults (SetDefaults_Job), the selector a Job's strategy
 * generates and its validation (validateGeneratedSelector), the Job update rules, CronJob
 * defaults and schedules parsed as robfig/cron's ParseStandard parses them, with the error
 * texts kube-apiserver passes on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"
#include "api/workloads.h"
#include "base/base.h"
#include "testutil.h"

#define UID "0d6f0a4e-1111-4000-8000-000000000001"
#define JOB(meta, spec)                                                                            \
    "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"pi\"" meta "},"        \
    "\"spec\":{" spec "}}"
#define POD_TPL(labels, extra)                                                                     \
    "\"template\":{\"metadata\":{\"labels\":" labels "},\"spec\":{" extra                          \
    "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}"
#define CRON(spec)                                                                                 \
    "{\"apiVersion\":\"batch/v1\",\"kind\":\"CronJob\",\"metadata\":{\"name\":\"tick\"},"          \
    "\"spec\":{" spec "}}"
#define JOB_TEMPLATE                                                                               \
    "\"jobTemplate\":{\"spec\":{\"template\":{\"spec\":{\"restartPolicy\":\"Never\","              \
    "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}}}"

/* What kube's defaulting adds to a template's pod spec and its containers (SetDefaults_PodSpec,
 * SetDefaults_Container; no tag means :latest, so imagePullPolicy Always). */
#define CONTAINER_DEFAULTS                                                                         \
    ",\"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\","  \
    "\"imagePullPolicy\":\"Always\""
#define POD_DEFAULTS_BUT_RESTART                                                                   \
    ",\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":\"ClusterFirst\",\"securityContext\":{}," \
    "\"schedulerName\":\"default-scheduler\",\"enableServiceLinks\":true"
#define JOB_TEMPLATE_DEFAULTED                                                                     \
    "\"jobTemplate\":{\"spec\":{\"template\":{\"spec\":{\"restartPolicy\":\"Never\","              \
    "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"" CONTAINER_DEFAULTS                     \
    "}]" POD_DEFAULTS_BUT_RESTART "}}}}"

/* The rendered errors of the object text, one a line ("" when valid). */
static char *errors_of(const char *text)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf sb = STRBUF_INIT;
    cJSON *o = J(text);

    (void)api_object_validate(o, 0, NULL, &errs);
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

static cJSON *defaulted(const char *text)
{
    cJSON *o = J(text);
    const struct api_kind *k =
        api_kind_find(cJSON_GetStringValue(cJSON_GetObjectItem(o, "apiVersion")),
                      cJSON_GetStringValue(cJSON_GetObjectItem(o, "kind")));

    assert_non_null(k);
    assert_int_equal(api_object_default(k, o, 0), 0);
    return o;
}

static void test_job_defaults(void **state)
{
    cJSON *o;
    (void)state;

    o = defaulted(JOB("", POD_TPL("{\"app\":\"pi\"}", "\"restartPolicy\":\"Never\",")));
    assert_json_eq(cJSON_GetObjectItem(o, "metadata"),
                   "{\"name\":\"pi\",\"labels\":{\"app\":\"pi\"}}");
    assert_json_eq(cJSON_GetObjectItem(o, "spec"),
                   "{\"completions\":1,\"parallelism\":1,\"backoffLimit\":6,\"completionMode\":"
                   "\"NonIndexed\",\"suspend\":false,\"podReplacementPolicy\":"
                   "\"TerminatingOrFailed\",\"template\":{\"metadata\":{\"labels\":{\"app\":"
                   "\"pi\"}},\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":"
                   "\"c\",\"image\":\"busybox\"" CONTAINER_DEFAULTS "}]" POD_DEFAULTS_BUT_RESTART
                   "}}}");
    cJSON_Delete(o);
    /* Parallelism alone leaves completions unset; backoffLimitPerIndex raises backoffLimit;
     * own labels stay; a failure policy makes replacement wait for Failed. */
    o = defaulted(JOB(",\"labels\":{\"own\":\"x\"}",
                      "\"parallelism\":4,\"backoffLimitPerIndex\":1,\"podFailurePolicy\":"
                      "{\"rules\":[]}," POD_TPL("{\"app\":\"pi\"}", "")));
    assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "spec"), "completions"));
    assert_int_equal(
        (int64_t)cJSON_GetObjectItem(cJSON_GetObjectItem(o, "spec"), "backoffLimit")->valuedouble,
        INT32_MAX);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "spec"),
                                                                 "podReplacementPolicy")),
                        "Failed");
    assert_json_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "labels"),
                   "{\"own\":\"x\"}");
    cJSON_Delete(o);
}

static void test_job_generated_selector(void **state)
{
    const struct api_kind *k = kind("batch/v1", "Job");
    cJSON *o = J(JOB(",\"uid\":\"" UID "\"", POD_TPL("{\"app\":\"pi\"}", "\"restartPolicy\":"
                                                                         "\"Never\",")));
    char *text, *errs;
    (void)state;

    k->prepare_create(o);
    assert_json_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "spec"), "selector"),
                   "{\"matchLabels\":{\"batch.kubernetes.io/controller-uid\":\"" UID "\"}}");
    assert_json_eq(api_get_path(o, "spec.template.metadata.labels"),
                   "{\"app\":\"pi\",\"job-name\":\"pi\",\"batch.kubernetes.io/job-name\":\"pi\","
                   "\"controller-uid\":\"" UID "\",\"batch.kubernetes.io/controller-uid\":\"" UID
                   "\"}");
    /* The Job's labels were defaulted from the template before the generated ones came. */
    assert_json_eq(api_get_path(o, "metadata.labels"), "{\"app\":\"pi\"}");
    assert_json_eq(cJSON_GetObjectItem(o, "status"), "{}");
    text = cJSON_PrintUnformatted(o);
    errs = errors_of(text);
    assert_string_equal(errs, "");
    free(errs);
    cJSON_free(text);
    cJSON_Delete(o);

    /* A selector naming another uid is not the generated one. */
    expect_errors(JOB(",\"uid\":\"" UID "\"",
                      "\"selector\":{\"matchLabels\":{\"batch.kubernetes.io/controller-uid\":"
                      "\"other\"}}," POD_TPL("{\"batch.kubernetes.io/controller-uid\":\"other\","
                                             "\"controller-uid\":\"" UID "\",\"job-name\":\"pi\","
                                             "\"batch.kubernetes.io/job-name\":\"pi\"}",
                                             "\"restartPolicy\":\"Never\",")),
                  "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"
                  "\"batch.kubernetes.io/controller-uid\":\"other\"}, MatchExpressions:[]v1."
                  "LabelSelectorRequirement(nil)}: `selector` not auto-generated\n"
                  "spec.template.metadata.labels[batch.kubernetes.io/controller-uid]: Invalid "
                  "value: \"other\": must be '" UID "'");
    /* manualSelector: the user's selector, which must select the template. */
    expect_errors(JOB("", "\"manualSelector\":true,\"selector\":{\"matchLabels\":{\"a\":\"b\"}},"
                          "\"completionMode\":\"Indexed\"," POD_TPL(
                              "{\"a\":\"c\"}", "\"restartPolicy\":\"Never\",")),
                  "spec.completions: Required value: when completion mode is Indexed\n"
                  "spec.template.metadata.labels: Invalid value: map[string]string{\"a\":\"c\"}: "
                  "`selector` does not match template `labels`");
    expect_errors(JOB(",\"uid\":\"" UID "\"", POD_TPL("{}", "\"restartPolicy\":\"Never\",")),
                  "spec.selector: Required value");
    /* A manifest as written (no uid yet): the server will generate the selector. */
    expect_errors(JOB("", POD_TPL("{}", "\"restartPolicy\":\"Never\",")), "");
    expect_errors(JOB("", "\"manualSelector\":true,\"selector\":{},\"parallelism\":-1,"
                          "\"completionMode\":\"Sometimes\"," POD_TPL("{}", "")),
                  "spec.completionMode: Unsupported value: \"Sometimes\": supported values: "
                  "\"NonIndexed\", \"Indexed\"\n"
                  "spec.parallelism: Invalid value: -1: must be greater than or equal to 0\n"
                  "spec.template.spec.restartPolicy: Unsupported value: \"Always\": supported "
                  "values: \"OnFailure\", \"Never\"");
}

static void test_job_update(void **state)
{
    const struct api_kind *k = kind("batch/v1", "Job");
    struct field_errors errs = FIELD_ERRORS_INIT;
    cJSON *a = J(JOB("", "\"completions\":1,\"parallelism\":1," POD_TPL("{}", "")));
    cJSON *b = J(JOB("", "\"completions\":2,\"parallelism\":3," POD_TPL("{\"x\":\"y\"}", "")));
    (void)state;

    k->check_update(a, b, &errs);
    assert_int_equal(errs.n, 2);
    assert_true(renders_as(&errs.v[0], "spec.completions: Invalid value: 2: field is immutable"));
    assert_true(renders_as(&errs.v[1], "spec.template: Invalid value: core.PodTemplateSpec{...}: "
                                       "field is immutable"));
    field_errors_release(&errs);
    cJSON_Delete(a);
    cJSON_Delete(b);
    /* A suspended Job that never started may change its template; parallelism is mutable. */
    a = J(JOB("", "\"suspend\":true,\"parallelism\":1," POD_TPL("{}", "")));
    b = J(JOB("", "\"suspend\":false,\"parallelism\":5," POD_TPL("{\"x\":\"y\"}", "")));
    k->check_update(a, b, &errs);
    assert_int_equal(errs.n, 0);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

static void test_cron_job(void **state)
{
    cJSON *o;
    static const struct {
        const char *schedule, *err; /* err NULL: valid */
    } rows[] = {
        {"*/5 * * * *", NULL},
        {"0 3 * * mon-fri", NULL},
        {"0 0 1,15 JAN-jun ?", NULL},
        {"@hourly", NULL},
        {"@every 1h30m", NULL},
        {"", "spec.schedule: Required value"},
        {"61 * * *", "spec.schedule: Invalid value: \"61 * * *\": expected exactly 5 fields, "
                     "found 4: [61 * * *]"},
        {"61 * * * *", "spec.schedule: Invalid value: \"61 * * * *\": end of range (61) above "
                       "maximum (59): 61"},
        {"* * 0 * *", "spec.schedule: Invalid value: \"* * 0 * *\": beginning of range (0) below "
                      "minimum (1): 0"},
        {"5-2 * * * *", "spec.schedule: Invalid value: \"5-2 * * * *\": beginning of range (5) "
                        "beyond end of range (2): 5-2"},
        {"*/0 * * * *", "spec.schedule: Invalid value: \"*/0 * * * *\": step of range should be "
                        "a positive number: */0"},
        {"x * * * *", "spec.schedule: Invalid value: \"x * * * *\": failed to parse int from x: "
                      "strconv.Atoi: parsing \"x\": invalid syntax"},
        {"1-2-3 * * * *", "spec.schedule: Invalid value: \"1-2-3 * * * *\": too many hyphens: "
                          "1-2-3"},
        {"@sometimes", "spec.schedule: Invalid value: \"@sometimes\": unrecognized descriptor: "
                       "@sometimes"},
        {"TZ=UTC 0 * * * *", "spec.schedule: Invalid value: \"TZ=UTC 0 * * * *\": expected "
                             "exactly 5 fields, found 6: [TZ=UTC 0 * * * *]\n"
                             "spec.schedule: Invalid value: \"TZ=UTC 0 * * * *\": cannot use TZ "
                             "or CRON_TZ in schedule, use timeZone field instead"},
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        struct strbuf text = STRBUF_INIT;
        char *got;
        strbuf_addf(&text, CRON("\"schedule\":\"%s\"," JOB_TEMPLATE), rows[i].schedule);
        got = errors_of(text.buf);
        if (strcmp(got, rows[i].err ? rows[i].err : ""))
            fail_msg("row %zu: got \"%s\"", i, got);
        free(got);
        strbuf_release(&text);
    }
    expect_errors(CRON("\"schedule\":\"@daily\",\"timeZone\":\"Mars/Olympus\","
                       "\"startingDeadlineSeconds\":-1,\"jobTemplate\":{\"spec\":{\"selector\":"
                       "{},\"manualSelector\":true,\"template\":{\"spec\":{\"containers\":[{"
                       "\"name\":\"c\"}]}}}}"),
                  "spec.timeZone: Invalid value: \"Mars/Olympus\": unknown time zone "
                  "Mars/Olympus\n"
                  "spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or "
                  "equal to 0\n"
                  "spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: "
                  "\"Always\": supported values: \"OnFailure\", \"Never\"\n"
                  "spec.jobTemplate.spec.selector: Invalid value: v1.LabelSelector{MatchLabels:"
                  "map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: "
                  "`selector` will be auto-generated\n"
                  "spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported "
                  "values: \"nil\", \"false\"");
    expect_errors("{\"apiVersion\":\"batch/v1\",\"kind\":\"CronJob\",\"metadata\":{\"name\":"
                  "\"a-name-that-is-fifty-three-characters-long-xxxxxxxxxx\"},\"spec\":{"
                  "\"schedule\":\"@daily\"," JOB_TEMPLATE "}}",
                  "metadata.name: Invalid value: "
                  "\"a-name-that-is-fifty-three-characters-long-xxxxxxxxxx\": must be no more "
                  "than 52 characters");
    o = defaulted(CRON("\"schedule\":\"@daily\"," JOB_TEMPLATE));
    assert_json_eq(
        cJSON_GetObjectItem(o, "spec"),
        "{\"schedule\":\"@daily\",\"concurrencyPolicy\":\"Allow\",\"suspend\":false,"
        "\"successfulJobsHistoryLimit\":3,\"failedJobsHistoryLimit\":1," JOB_TEMPLATE_DEFAULTED
        "}");
    cJSON_Delete(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_defaults),
        cmocka_unit_test(test_job_generated_selector),
        cmocka_unit_test(test_job_update),
        cmocka_unit_test(test_cron_job),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
