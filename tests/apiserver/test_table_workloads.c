/*
 * Tests for apiserver/table_workloads.c: the columns and cells kube's printers.go gives the
 * workload kinds (Wide, as kube-apiserver's TableConvertor asks), through table_build().
 * Expected cells are written out by hand from printDeployment, printJob, printCronJob,
 * printPodDisruptionBudget and the others.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"
#include "apiserver/table.h"
#include "apiserver/table_workloads.h"
#include "base/base.h"
#include "testutil.h"

#define NOW     1714557600 /* 2024-05-01T10:00:00Z */
#define CREATED "\"creationTimestamp\":\"2024-05-01T09:00:00Z\""

/* The column names of kind av/k, joined by ','. */
static void columns_at(const char *av, const char *k, const char *want, int line)
{
    cJSON *t = table_build(kind(av, k), NULL, 0, "1", NULL, NOW, TABLE_INCLUDE_NONE);
    struct strbuf sb = STRBUF_INIT;
    const cJSON *c;

    cJSON_ArrayForEach(c, cJSON_GetObjectItem(t, "columnDefinitions"))
    {
        strbuf_addf(&sb, "%s%s%s", sb.len ? "," : "",
                    cJSON_GetStringValue(cJSON_GetObjectItem(c, "name")),
                    cJSON_GetObjectItem(c, "priority")->valueint ? "*" : "");
    }
    if (strcmp(sb.buf, want))
        fail_msg("line %d: columns %s, want %s", line, sb.buf, want);
    strbuf_release(&sb);
    cJSON_Delete(t);
}
#define columns(av, k, want) columns_at((av), (k), (want), __LINE__)

/* The cells of one object of kind av/k. */
static void row_at(const char *av, const char *k, const char *obj, const char *want, int line)
{
    cJSON *o = J(obj);
    const cJSON *one[1] = {o};
    cJSON *t = table_build(kind(av, k), one, 1, "1", NULL, NOW, TABLE_INCLUDE_NONE);

    assert_json_eq_at(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(t, "rows"), 0), "cells"), want,
        line);
    cJSON_Delete(t);
    cJSON_Delete(o);
}
#define row(av, k, obj, want) row_at((av), (k), (obj), (want), __LINE__)

#define TPL                                                                                        \
    "\"template\":{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"nginx\"},{\"name\":"      \
    "\"b\",\"image\":\"envoy\"}]}}"

static void test_columns(void **state)
{
    (void)state;
    columns("apps/v1", "Deployment",
            "Name,Ready,Up-to-date,Available,Age,Containers*,Images*,Selector*");
    columns("apps/v1", "ReplicaSet",
            "Name,Desired,Current,Ready,Age,Containers*,Images*,Selector*");
    columns("apps/v1", "StatefulSet", "Name,Ready,Age,Containers*,Images*");
    columns("apps/v1", "DaemonSet",
            "Name,Desired,Current,Ready,Up-to-date,Available,Node Selector,Age,Containers*,"
            "Images*,Selector*");
    columns("apps/v1", "ControllerRevision", "Name,Controller,Revision,Age");
    columns("batch/v1", "Job",
            "Name,Status,Completions,Duration,Age,Containers*,Images*,Selector*");
    columns("batch/v1", "CronJob",
            "Name,Schedule,Timezone,Suspend,Active,Last Schedule,Age,Containers*,Images*,"
            "Selector*");
    columns("policy/v1", "PodDisruptionBudget",
            "Name,Min Available,Max Unavailable,Allowed Disruptions,Age");
    columns("discovery.k8s.io/v1", "EndpointSlice", "Name,AddressType,Ports,Endpoints,Age");
    columns("events.k8s.io/v1", "Event",
            "Last Seen,Type,Reason,Object,Subobject*,Source*,Message,First Seen*,Count*,Name*");
    columns("v1", "Event",
            "Last Seen,Type,Reason,Object,Subobject*,Source*,Message,First Seen*,Count*,Name*");
}

static void test_apps_rows(void **state)
{
    (void)state;
    row("apps/v1", "Deployment",
        "{\"metadata\":{\"name\":\"web\"," CREATED "},\"spec\":{\"replicas\":3,\"selector\":{"
        "\"matchLabels\":{\"tier\":\"fe\",\"app\":\"web\"}}," TPL "},\"status\":{"
        "\"readyReplicas\":2,\"updatedReplicas\":3,\"availableReplicas\":1}}",
        "[\"web\",\"2/3\",3,1,\"60m\",\"a,b\",\"nginx,envoy\",\"app=web,tier=fe\"]");
    row("apps/v1", "ReplicaSet",
        "{\"metadata\":{\"name\":\"rs\"," CREATED "},\"spec\":{\"replicas\":2,\"selector\":{"
        "\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"Exists\"}]}," TPL "},\"status\":"
        "{\"replicas\":1}}",
        "[\"rs\",2,1,0,\"60m\",\"a,b\",\"nginx,envoy\",\"app\"]");
    row("apps/v1", "StatefulSet",
        "{\"metadata\":{\"name\":\"db\"," CREATED "},\"spec\":{\"replicas\":1," TPL "}}",
        "[\"db\",\"0/1\",\"60m\",\"a,b\",\"nginx,envoy\"]");
    row("apps/v1", "DaemonSet",
        "{\"metadata\":{\"name\":\"ds\"," CREATED "},\"spec\":{\"selector\":{\"matchLabels\":{"
        "\"app\":\"ds\"}},\"template\":{\"spec\":{\"nodeSelector\":{\"z\":\"1\",\"a\":\"2\"},"
        "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}},\"status\":{"
        "\"desiredNumberScheduled\":5,\"currentNumberScheduled\":4,\"numberReady\":3,"
        "\"updatedNumberScheduled\":2,\"numberAvailable\":1}}",
        "[\"ds\",5,4,3,2,1,\"a=2,z=1\",\"60m\",\"c\",\"i\",\"app=ds\"]");
    row("apps/v1", "DaemonSet", "{\"metadata\":{\"name\":\"ds\"," CREATED "}}",
        "[\"ds\",0,0,0,0,0,\"<none>\",\"60m\",\"\",\"\",\"\"]");
    row("apps/v1", "ControllerRevision",
        "{\"metadata\":{\"name\":\"r\"," CREATED ",\"ownerReferences\":[{\"apiVersion\":"
        "\"apps/v1\",\"kind\":\"StatefulSet\",\"name\":\"db\",\"uid\":\"u\",\"controller\":true}"
        "]},\"revision\":7}",
        "[\"r\",\"statefulset.apps/db\",7,\"60m\"]");
    row("apps/v1", "ControllerRevision", "{\"metadata\":{\"name\":\"r\"},\"revision\":1}",
        "[\"r\",\"<none>\",1,\"<unknown>\"]");
}

static void test_batch_rows(void **state)
{
    (void)state;
    row("batch/v1", "Job",
        "{\"metadata\":{\"name\":\"j\"," CREATED "},\"spec\":{\"completions\":4,\"selector\":"
        "{\"matchLabels\":{\"u\":\"1\"}}," TPL "},\"status\":{\"succeeded\":4,\"startTime\":"
        "\"2024-05-01T09:10:00Z\",\"completionTime\":\"2024-05-01T09:12:30Z\",\"conditions\":"
        "[{\"type\":\"Complete\",\"status\":\"True\"}]}}",
        "[\"j\",\"Complete\",\"4/4\",\"2m30s\",\"60m\",\"a,b\",\"nginx,envoy\",\"u=1\"]");
    row("batch/v1", "Job",
        "{\"metadata\":{\"name\":\"j\"," CREATED "},\"spec\":{\"parallelism\":3},\"status\":{"
        "\"startTime\":\"2024-05-01T09:59:00Z\",\"conditions\":[{\"type\":\"Complete\","
        "\"status\":\"False\"},{\"type\":\"Suspended\",\"status\":\"True\"}]}}",
        "[\"j\",\"Suspended\",\"0/1 of 3\",\"60s\",\"60m\",\"\",\"\",\"\"]");
    row("batch/v1", "Job", "{\"metadata\":{\"name\":\"j\"," CREATED "},\"spec\":{}}",
        "[\"j\",\"Running\",\"0/1\",\"\",\"60m\",\"\",\"\",\"\"]");
    row("batch/v1", "CronJob",
        "{\"metadata\":{\"name\":\"c\"," CREATED "},\"spec\":{\"schedule\":\"@daily\","
        "\"timeZone\":\"UTC\",\"suspend\":true,\"jobTemplate\":{\"spec\":{" TPL "}}},"
        "\"status\":{\"active\":[{\"name\":\"x\"}],\"lastScheduleTime\":\"2024-05-01T09:30:00Z\""
        "}}",
        "[\"c\",\"@daily\",\"UTC\",\"True\",1,\"30m\",\"60m\",\"a,b\",\"nginx,envoy\","
        "\"<none>\"]");
    row("batch/v1", "CronJob", "{\"metadata\":{\"name\":\"c\"," CREATED "},\"spec\":{}}",
        "[\"c\",\"\",\"<none>\",\"<unset>\",0,\"<none>\",\"60m\",\"\",\"\",\"<none>\"]");
}

static void test_other_rows(void **state)
{
    (void)state;
    row("policy/v1", "PodDisruptionBudget",
        "{\"metadata\":{\"name\":\"p\"," CREATED "},\"spec\":{\"minAvailable\":\"50%\"},"
        "\"status\":{\"disruptionsAllowed\":2}}",
        "[\"p\",\"50%\",\"N/A\",2,\"60m\"]");
    row("policy/v1", "PodDisruptionBudget",
        "{\"metadata\":{\"name\":\"p\"," CREATED "},\"spec\":{\"maxUnavailable\":1}}",
        "[\"p\",\"N/A\",\"1\",0,\"60m\"]");
    row("discovery.k8s.io/v1", "EndpointSlice",
        "{\"metadata\":{\"name\":\"s\"," CREATED "},\"addressType\":\"IPv4\",\"ports\":[{"
        "\"port\":80},{\"name\":\"h\"},{},{\"port\":9}],\"endpoints\":[{\"addresses\":["
        "\"10.0.0.1\",\"10.0.0.2\"]},{\"addresses\":[\"10.0.0.3\",\"10.0.0.4\",\"10.0.0.5\"]}]}",
        "[\"s\",\"IPv4\",\"80,h,* + 1 more...\",\"10.0.0.1,10.0.0.2,10.0.0.3 + 2 more...\","
        "\"60m\"]");
    row("discovery.k8s.io/v1", "EndpointSlice",
        "{\"metadata\":{\"name\":\"s\"," CREATED "},\"addressType\":\"FQDN\"}",
        "[\"s\",\"FQDN\",\"<unset>\",\"<unset>\",\"60m\"]");
    row("v1", "Event",
        "{\"metadata\":{\"name\":\"e1\"},\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"web\","
        "\"fieldPath\":\"spec.containers{c}\"},\"reason\":\"Pulled\",\"message\":\" done \\n\","
        "\"source\":{\"component\":\"kubelet\",\"host\":\"n1\"},\"firstTimestamp\":"
        "\"2024-05-01T09:00:00Z\",\"lastTimestamp\":\"2024-05-01T09:58:00Z\",\"count\":4,"
        "\"type\":\"Normal\"}",
        "[\"2m\",\"Normal\",\"Pulled\",\"pod/web\",\"spec.containers{c}\",\"kubelet, n1\","
        "\"done\",\"60m\",4,\"e1\"]");
    row("events.k8s.io/v1", "Event",
        "{\"metadata\":{\"name\":\"e2\"},\"regarding\":{\"kind\":\"Node\"},\"reason\":\"R\","
        "\"note\":\"n\",\"eventTime\":\"2024-05-01T09:59:30.000000Z\",\"reportingController\":"
        "\"ctl\",\"type\":\"Warning\",\"series\":{\"count\":3,\"lastObservedTime\":"
        "\"2024-05-01T09:59:50.000000Z\"}}",
        "[\"10s\",\"Warning\",\"R\",\"node\",\"\",\"ctl\",\"n\",\"30s\",3,\"e2\"]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_columns),
        cmocka_unit_test(test_apps_rows),
        cmocka_unit_test(test_batch_rows),
        cmocka_unit_test(test_other_rows),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
