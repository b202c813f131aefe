/*
 * Tests for api/types_apps.c: the apps/v1 kinds' defaults (SetDefaults_Deployment,
 * _StatefulSet, _DaemonSet), their validation with kube's messages (ValidateDeploymentSpec,
 * ValidatePodTemplateSpecForReplicaSet, the strategy rules), the update rules (immutable
 * selectors, the StatefulSet spec), PrepareForCreate, and the shared workloads.h helpers
 * (Go renderings, selector strings, int-or-percent). Expected texts are kube-apiserver's
 * messages, written out by hand from pkg/apis/apps/validation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"
#include "api/workloads.h"
#include "base/base.h"
#include "testutil.h"

#define TEMPLATE(labels, spec)                                                                     \
    "\"template\":{\"metadata\":{\"labels\":" labels "},\"spec\":{" spec                           \
    "\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]}}"

/* Validates the object text; returns the errors (caller releases). */
static void validate(const char *text, struct field_errors *errs)
{
    cJSON *o = J(text);
    const struct api_kind *k = NULL;

    (void)api_object_validate(o, 0, &k, errs);
    assert_non_null(k);
    cJSON_Delete(o);
}

/* Asserts the object has exactly the errors want (NULL-terminated, rendered as kube does). */
static void errors_at(const char *text, const char *const *want, int line)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    size_t n = 0;

    validate(text, &errs);
    for (; want[n]; n++) {
        bool found = false;
        for (size_t i = 0; i < errs.n && !found; i++)
            found = renders_as(&errs.v[i], want[n]);
        if (!found)
            fail_with_errors(&errs, "line %d: missing error \"%s\"", line, want[n]);
    }
    if (field_errors_count(&errs) != n)
        fail_with_errors(&errs, "line %d: %zu errors, want %zu", line, field_errors_count(&errs),
                         n);
    field_errors_release(&errs);
}
#define expect_errors(text, ...) errors_at((text), (const char *const[]){__VA_ARGS__}, __LINE__)
#define expect_valid(text)       errors_at((text), (const char *const[]){NULL}, __LINE__)

/* The object after api_object_default(). */
static cJSON *defaulted(const char *text)
{
    cJSON *o = J(text);
    const struct api_kind *k = NULL;
    struct field_errors errs = FIELD_ERRORS_INIT;

    (void)api_object_validate(o, 0, &k, &errs);
    field_errors_release(&errs);
    assert_non_null(k);
    assert_int_equal(api_object_default(k, o, 0), 0);
    return o;
}

/* What kube's defaulting adds to a template's pod spec and its containers (SetDefaults_PodSpec,
 * SetDefaults_Container; no tag means :latest, so imagePullPolicy Always). */
#define CONTAINER_DEFAULTS                                                                         \
    ",\"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\","  \
    "\"imagePullPolicy\":\"Always\""
#define POD_DEFAULTS_BUT_RESTART                                                                   \
    ",\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":\"ClusterFirst\",\"securityContext\":{}," \
    "\"schedulerName\":\"default-scheduler\",\"enableServiceLinks\":true"

#define DEPLOY(spec)                                                                               \
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\"},"         \
    "\"spec\":{" spec "}}"
#define SEL_APP "\"selector\":{\"matchLabels\":{\"app\":\"web\"}},"

static void test_deployment_defaults(void **state)
{
    cJSON *o;
    (void)state;

    o = defaulted(DEPLOY(SEL_APP TEMPLATE("{\"app\":\"web\"}", "")));
    assert_json_eq(cJSON_GetObjectItem(o, "spec"),
                   "{\"replicas\":1,\"revisionHistoryLimit\":10,\"progressDeadlineSeconds\":600,"
                   "\"selector\":{\"matchLabels\":{\"app\":\"web\"}},"
                   "\"strategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":"
                   "{\"maxUnavailable\":\"25%\",\"maxSurge\":\"25%\"}},"
                   "\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":"
                   "{\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"" CONTAINER_DEFAULTS
                   "}],\"restartPolicy\":\"Always\"" POD_DEFAULTS_BUT_RESTART "}}}");
    cJSON_Delete(o);
    /* Recreate gets no rollingUpdate; given values stay. */
    o = defaulted(DEPLOY("\"replicas\":0,\"revisionHistoryLimit\":2,\"strategy\":{\"type\":"
                         "\"Recreate\"}," SEL_APP TEMPLATE("{\"app\":\"web\"}", "")));
    assert_json_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "spec"), "strategy"),
                   "{\"type\":\"Recreate\"}");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "spec"), "replicas")->valueint, 0);
    cJSON_Delete(o);
    /* A partial rollingUpdate is completed. */
    o = defaulted(DEPLOY("\"strategy\":{\"rollingUpdate\":{\"maxSurge\":1}}," SEL_APP TEMPLATE(
        "{\"app\":\"web\"}", "")));
    assert_json_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "spec"), "strategy"),
                   "{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"maxSurge\":1,"
                   "\"maxUnavailable\":\"25%\"}}");
    cJSON_Delete(o);
}

static void test_deployment_validation(void **state)
{
    (void)state;

    expect_valid(DEPLOY(SEL_APP TEMPLATE("{\"app\":\"web\",\"tier\":\"fe\"}", "")));
    expect_errors(DEPLOY(TEMPLATE("{\"app\":\"web\"}", "")), "spec.selector: Required value", NULL);
    expect_errors(
        DEPLOY("\"replicas\":-1," SEL_APP TEMPLATE("{\"app\":\"db\"}",
                                                   "\"restartPolicy\":\"Never\","
                                                   "\"activeDeadlineSeconds\":5,")),
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"db\"}: "
        "`selector` does not match template `labels`",
        "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: "
        "\"Always\"",
        "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in "
        "ReplicaSet is not Supported",
        NULL);
    expect_errors(DEPLOY("\"selector\":{}," TEMPLATE("null", "")),
                  "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string("
                  "nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is "
                  "invalid for deployment",
                  NULL);
    /* matchExpressions select too. */
    expect_errors(DEPLOY("\"selector\":{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"In\","
                         "\"values\":[\"a\",\"b\"]}]}," TEMPLATE("{\"app\":\"c\"}", "")),
                  "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"c\"}: "
                  "`selector` does not match template `labels`",
                  NULL);
    expect_errors(
        DEPLOY("\"strategy\":{\"type\":\"Recreate\",\"rollingUpdate\":{}}," SEL_APP TEMPLATE(
            "{\"app\":\"web\"}", "")),
        "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy "
        "`type` is 'Recreate'",
        NULL);
    expect_errors(DEPLOY("\"strategy\":{\"rollingUpdate\":{\"maxUnavailable\":0,\"maxSurge\":"
                         "\"0%\"}}," SEL_APP TEMPLATE("{\"app\":\"web\"}", "")),
                  "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "
                  "intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: may not be 0 when "
                  "`maxSurge` is 0",
                  NULL);
    expect_errors(DEPLOY("\"strategy\":{\"rollingUpdate\":{\"maxUnavailable\":\"120%\","
                         "\"maxSurge\":\"x\"}}," SEL_APP TEMPLATE("{\"app\":\"web\"}", "")),
                  "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "
                  "intstr.IntOrString{Type:1, IntVal:0, StrVal:\"120%\"}: must not be greater "
                  "than 100%",
                  "spec.strategy.rollingUpdate.maxSurge: Invalid value: "
                  "intstr.IntOrString{Type:1, IntVal:0, StrVal:\"x\"}: a valid percent string "
                  "must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
                  "regex used for validation is '[0-9]+%')",
                  NULL);
    expect_errors(DEPLOY("\"minReadySeconds\":30,\"progressDeadlineSeconds\":30," SEL_APP TEMPLATE(
                      "{\"app\":\"web\"}", "")),
                  "spec.progressDeadlineSeconds: Invalid value: 30: must be greater than "
                  "minReadySeconds",
                  NULL);
    /* The pod template is validated as a Pod is. */
    expect_errors(DEPLOY(SEL_APP "\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},"
                                 "\"spec\":{\"containers\":[{\"image\":\"x\"}],"
                                 "\"schedulingGates\":[{\"name\":\"a\"}],\"nodeName\":\"n\"}}"),
                  "spec.template.spec.containers[0].name: Required value",
                  "spec.template.spec.nodeName: Forbidden: cannot be set until all "
                  "schedulingGates have been cleared",
                  NULL);
    expect_errors(DEPLOY(SEL_APP "\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}}}"),
                  "spec.template.spec.containers: Required value", NULL);
    /* An empty list is no container either (found by the Python client e2e test). */
    expect_errors(DEPLOY(SEL_APP "\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},"
                                 "\"spec\":{\"containers\":[]}}"),
                  "spec.template.spec.containers: Required value", NULL);
}

#define RS(spec)                                                                                   \
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"rs\"},"          \
    "\"spec\":{" spec "}}"
#define STS(spec)                                                                                  \
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"db\"},"         \
    "\"spec\":{" spec "}}"
#define DS(spec)                                                                                   \
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"metadata\":{\"name\":\"ds\"},"           \
    "\"spec\":{" spec "}}"

static void test_other_apps_kinds(void **state)
{
    cJSON *o;
    (void)state;

    /* ReplicaSet: kube's message names "deployment" for an empty selector here too. */
    expect_errors(RS("\"selector\":{\"matchLabels\":{}}," TEMPLATE("{}", "")),
                  "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{}"
                  ", MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is "
                  "invalid for deployment",
                  NULL);
    o = defaulted(RS(SEL_APP TEMPLATE("{\"app\":\"web\"}", "")));
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "spec"), "replicas")->valueint, 1);
    cJSON_Delete(o);

    o = defaulted(STS(SEL_APP TEMPLATE("{\"app\":\"web\"}", "")));
    assert_json_eq(cJSON_GetObjectItem(o, "spec"),
                   "{\"replicas\":1,\"revisionHistoryLimit\":10,\"podManagementPolicy\":"
                   "\"OrderedReady\",\"updateStrategy\":{\"type\":\"RollingUpdate\","
                   "\"rollingUpdate\":{\"partition\":0}},\"persistentVolumeClaimRetentionPolicy\":"
                   "{\"whenDeleted\":\"Retain\",\"whenScaled\":\"Retain\"},"
                   "\"selector\":{\"matchLabels\":{\"app\":\"web\"}},"
                   "\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":"
                   "{\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"" CONTAINER_DEFAULTS
                   "}],\"restartPolicy\":\"Always\"" POD_DEFAULTS_BUT_RESTART "}}}");
    cJSON_Delete(o);
    o = defaulted(
        STS("\"updateStrategy\":{\"type\":\"OnDelete\"},"
            "\"persistentVolumeClaimRetentionPolicy\":{\"whenDeleted\":\"Delete\"},"
            "\"podManagementPolicy\":\"Parallel\"," SEL_APP TEMPLATE("{\"app\":\"web\"}", "")));
    assert_json_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "spec"), "updateStrategy"),
                   "{\"type\":\"OnDelete\"}");
    assert_json_eq(
        cJSON_GetObjectItem(cJSON_GetObjectItem(o, "spec"), "persistentVolumeClaimRetentionPolicy"),
        "{\"whenDeleted\":\"Delete\",\"whenScaled\":\"Retain\"}");
    cJSON_Delete(o);
    expect_errors(STS("\"selector\":{}," TEMPLATE("{}", "\"restartPolicy\":\"OnFailure\",")),
                  "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string("
                  "nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is "
                  "invalid for statefulset",
                  "spec.template.spec.restartPolicy: Unsupported value: \"OnFailure\": supported "
                  "values: \"Always\"",
                  NULL);
    expect_errors(
        STS("\"podManagementPolicy\":\"Random\"," SEL_APP TEMPLATE("{\"app\":\"web\"}", "")),
        "spec.podManagementPolicy: Unsupported value: \"Random\": supported values: "
        "\"OrderedReady\", \"Parallel\"",
        NULL);

    o = defaulted(DS(SEL_APP TEMPLATE("{\"app\":\"web\"}", "")));
    assert_json_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "spec"), "updateStrategy"),
                   "{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"maxUnavailable\":1,"
                   "\"maxSurge\":0}}");
    cJSON_Delete(o);
    expect_errors(DS(SEL_APP TEMPLATE("{\"app\":\"web\"}", "\"activeDeadlineSeconds\":3,")),
                  "spec.template.spec.activeDeadlineSeconds: Invalid value: 3: "
                  "activeDeadlineSeconds in DaemonSet is not Supported",
                  NULL);
    expect_errors(
        DS("\"updateStrategy\":{\"rollingUpdate\":{\"maxUnavailable\":0}}," SEL_APP TEMPLATE(
            "{\"app\":\"web\"}", "")),
        "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 "
        "when maxSurge is 0",
        NULL);
    expect_errors(
        DS("\"updateStrategy\":{\"rollingUpdate\":{\"maxSurge\":\"10%\"}}," SEL_APP TEMPLATE(
            "{\"app\":\"web\"}", "")),
        "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: "
        "intstr.IntOrString{Type:1, IntVal:0, StrVal:\"10%\"}: may not be set when "
        "maxUnavailable is non-zero",
        NULL);

    expect_errors("{\"apiVersion\":\"apps/v1\",\"kind\":\"ControllerRevision\",\"metadata\":"
                  "{\"name\":\"r\"},\"revision\":-2}",
                  "revision: Invalid value: -2: must be greater than or equal to 0", NULL);
    expect_errors("{\"apiVersion\":\"apps/v1\",\"kind\":\"ControllerRevision\",\"metadata\":"
                  "{\"name\":\"r\"}}",
                  "revision: Required value", NULL);
}

/* Runs k's update rules over two object texts; returns the rendered errors joined by '\n'. */
static char *update_errors(const char *av, const char *kd, const char *old_text,
                           const char *new_text)
{
    const struct api_kind *k = kind(av, kd);
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf sb = STRBUF_INIT;
    cJSON *a = J(old_text), *b = J(new_text);

    assert_non_null(k->check_update);
    k->check_update(a, b, &errs);
    for (size_t i = 0; i < errs.n; i++) {
        if (i)
            strbuf_addch(&sb, '\n');
        field_error_format(&errs.v[i], &sb);
    }
    field_errors_release(&errs);
    cJSON_Delete(a);
    cJSON_Delete(b);
    return strbuf_detach(&sb, NULL);
}

static void expect_update_at(const char *av, const char *kd, const char *a, const char *b,
                             const char *want, int line)
{
    char *got = update_errors(av, kd, a, b);

    if (strcmp(got, want)) {
        print_error("line %d: got \"%s\", want \"%s\"\n", line, got, want);
        free(got);
        fail();
    }
    free(got);
}
#define expect_update(av, kd, a, b, want) expect_update_at((av), (kd), (a), (b), (want), __LINE__)

static void test_update_rules(void **state)
{
    (void)state;

    expect_update("apps/v1", "Deployment", DEPLOY(SEL_APP "\"replicas\":1"),
                  DEPLOY(SEL_APP "\"replicas\":3"), "");
    expect_update("apps/v1", "Deployment", DEPLOY(SEL_APP "\"replicas\":1"),
                  DEPLOY("\"selector\":{\"matchLabels\":{\"app\":\"x\"},\"matchExpressions\":"
                         "[{\"key\":\"k\",\"operator\":\"Exists\"}]}"),
                  "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"
                  "\"app\":\"x\"}, MatchExpressions:[]v1.LabelSelectorRequirement{v1."
                  "LabelSelectorRequirement{Key:\"k\", Operator:\"Exists\", Values:[]string(nil)"
                  "}}}: field is immutable");
    expect_update("apps/v1", "DaemonSet", DS(SEL_APP "\"minReadySeconds\":1"),
                  DS("\"selector\":{\"matchLabels\":{\"app\":\"web\",\"b\":\"c\"}}"),
                  "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"
                  "\"app\":\"web\", \"b\":\"c\"}, MatchExpressions:[]v1.LabelSelectorRequirement("
                  "nil)}: field is immutable");
    expect_update("apps/v1", "StatefulSet", STS(SEL_APP "\"replicas\":1,\"serviceName\":\"a\""),
                  STS(SEL_APP "\"replicas\":5,\"serviceName\":\"a\",\"minReadySeconds\":3"), "");
    expect_update("apps/v1", "StatefulSet", STS(SEL_APP "\"serviceName\":\"a\""),
                  STS(SEL_APP "\"serviceName\":\"b\""),
                  "spec: Forbidden: updates to statefulset spec for fields other than "
                  "'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', "
                  "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden");
}

static void test_prepare_create(void **state)
{
    cJSON *o = J(DS(SEL_APP TEMPLATE("{\"app\":\"web\"}", "")));
    const struct api_kind *k = kind("apps/v1", "DaemonSet");
    (void)state;

    CHECK(cJSON_AddItemToObject(o, "status", J("{\"numberReady\":3}")));
    k->prepare_create(o);
    assert_json_eq(cJSON_GetObjectItem(o, "status"), "{}");
    assert_json_eq(cJSON_GetObjectItem(o, "metadata"),
                   "{\"name\":\"ds\",\"annotations\":{\"deprecated.daemonset.template."
                   "generation\":\"1\"}}");
    cJSON_Delete(o);
}

static void test_daemon_set_template_generation(void **state)
{
    const struct api_kind *k = kind("apps/v1", "DaemonSet");
    cJSON *old = J("{\"metadata\":{\"name\":\"ds\",\"annotations\":{\"deprecated.daemonset."
                   "template.generation\":\"4\"}},\"spec\":{" TEMPLATE("{\"a\":\"b\"}", "") "}}");
    cJSON *same = J("{\"metadata\":{\"name\":\"ds\"},\"spec\":{\"minReadySeconds\":5," TEMPLATE(
        "{\"a\":\"b\"}", "") "}}");
    cJSON *changed =
        J("{\"metadata\":{\"name\":\"ds\",\"annotations\":{\"deprecated.daemonset."
          "template.generation\":\"99\"}},\"spec\":{" TEMPLATE("{\"a\":\"c\"}", "") "}}");
    (void)state;

    /* The client cannot set it; it follows template changes only. */
    k->prepare_update(old, same);
    assert_json_eq(api_get_path(same, "metadata.annotations"),
                   "{\"deprecated.daemonset.template.generation\":\"4\"}");
    k->prepare_update(old, changed);
    assert_json_eq(api_get_path(changed, "metadata.annotations"),
                   "{\"deprecated.daemonset.template.generation\":\"5\"}");
    cJSON_Delete(old);
    cJSON_Delete(same);
    cJSON_Delete(changed);
}

static void test_helpers(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    cJSON *v;
    int n = 0;
    (void)state;

    v = J("{\"matchLabels\":{\"b\":\"2\",\"a\":\"1\"},\"matchExpressions\":[{\"key\":\"t\","
          "\"operator\":\"NotIn\",\"values\":[\"y\",\"x\"]},{\"key\":\"e\",\"operator\":"
          "\"DoesNotExist\"}]}");
    assert_int_equal(api_selector_string(v, &sb), 0);
    assert_string_equal(sb.buf, "a=1,b=2,!e,t notin (x,y)");
    cJSON_Delete(v);
    strbuf_reset(&sb);
    v = J("{\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"Gt\",\"values\":[\"1\"]}]}");
    assert_int_equal(api_selector_string(v, &sb), -EINVAL);
    cJSON_Delete(v);
    strbuf_reset(&sb);
    api_go_string_map(NULL, &sb);
    assert_string_equal(sb.buf, "map[string]string(nil)");
    strbuf_reset(&sb);
    api_go_label_selector(NULL, &sb);
    assert_string_equal(sb.buf, "null");

    v = J("\"25%\"");
    assert_int_equal(api_int_or_percent_scaled(v, 10, true, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(api_int_or_percent_scaled(v, 10, false, &n), 0);
    assert_int_equal(n, 2);
    cJSON_Delete(v);
    v = J("7");
    assert_int_equal(api_int_or_percent_scaled(v, 10, true, &n), 0);
    assert_int_equal(n, 7);
    cJSON_Delete(v);
    v = J("\"7\"");
    assert_int_equal(api_int_or_percent_scaled(v, 10, true, &n), -EINVAL);
    cJSON_Delete(v);
    strbuf_release(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deployment_defaults),
        cmocka_unit_test(test_deployment_validation),
        cmocka_unit_test(test_other_apps_kinds),
        cmocka_unit_test(test_update_rules),
        cmocka_unit_test(test_prepare_create),
        cmocka_unit_test(test_daemon_set_template_generation),
        cmocka_unit_test(test_helpers),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
