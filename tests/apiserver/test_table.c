/*
 * Tests for src/apiserver/table.c: HumanDuration at every boundary, the JSONPath subset, and
 * whole Tables for pods, nodes, a CRD with printer columns (Reservation), a CRD without
 * (NodeSLO) and the generic Name + Age table. Every expectation is worked out by hand from
 * kube-apiserver's printers (pkg/printers/internalversion/printers.go), apiextensions'
 * tableconvertor and apimachinery's duration.HumanDuration; "now" is fixed at
 * 2024-05-01T10:00:00Z.
 */
#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"
#include "apiserver/table.h"
#include "testutil.h"

#define NOW 1714557600 /* 2024-05-01T10:00:00Z */

#define DESC_NAME                                                                                  \
    "Name must be unique within a namespace. Is required when creating resources, although "       \
    "some resources may allow a client to request the generation of an appropriate name "          \
    "automatically. Name is primarily intended for creation idempotence and configuration "        \
    "definition. Cannot be updated. More info: "                                                   \
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
#define DESC_AGE                                                                                   \
    "CreationTimestamp is a timestamp representing the server time when this object was "          \
    "created. It is not guaranteed to be set in happens-before order across separate "             \
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "     \
    "UTC.\\n\\nPopulated by the system. Read-only. Null for lists. More info: "                    \
    "https://git.k8s.io/community/contributors/devel/sig-architecture/"                            \
    "api-conventions.md#metadata"

#define COL(name, type, format, desc, prio)                                                        \
    "{\"name\":\"" name "\",\"type\":\"" type "\",\"format\":\"" format                            \
    "\",\"description\":\"" desc "\",\"priority\":" #prio "}"

#define NAME_COL COL("Name", "string", "name", DESC_NAME, 0)

#define POD_COLUMNS                                                                                \
    "[" NAME_COL "," COL(                                                                          \
        "Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic.", \
        0) "," COL("Status", "string", "", "The aggregate status of the containers in this pod.",  \
                   0) "," COL("Restarts", "string", "",                                            \
                              "The number of times the containers in this pod have been "          \
                              "restarted and when the last "                                       \
                              "container in this pod has restarted.",                              \
                              0) "," COL("Age", "string", "", DESC_AGE,                            \
                                         0) "," COL("IP", "string", "",                            \
                                                    "IP address allocated to the pod. Routable "   \
                                                    "at least within the "                         \
                                                    "cluster.",                                    \
                                                    1) "," COL("Node", "string", "",               \
                                                               "The name of the node this pod is " \
                                                               "scheduled onto.",                  \
                                                               1) "," COL("Nominated Node",        \
                                                                          "string", "",            \
                                                                          "The node the "          \
                                                                          "scheduler nominated "   \
                                                                          "for this pod when it "  \
                                                                          "preempted other pods.", \
                                                                          1) "," COL("Readiness "  \
                                                                                     "Gates",      \
                                                                                     "string", "", \
                                                                                     "Readiness "  \
                                                                                     "gates of "   \
                                                                                     "the pod: "   \
                                                                                     "how many "   \
                                                                                     "of their "   \
                                                                                     "conditions " \
                                                                                     "are true.",  \
                                                                                     1) "]"

#define NODE_COLUMNS                                                                               \
    "[" NAME_COL "," COL("Status", "string", "", "The status of the node", 0) "," COL(             \
        "Roles", "string", "", "The roles of the node",                                            \
        0) "," COL("Age", "string", "", DESC_AGE,                                                  \
                   0) "," COL("Version", "string", "", "Kubelet Version reported by the node.",    \
                              0) "," COL("Internal-IP", "string", "",                              \
                                         "List of addresses reachable to the node.",               \
                                         1) "," COL("External-IP", "string", "",                   \
                                                    "List of addresses reachable to the node.",    \
                                                    1) "," COL("OS-Image", "string", "",           \
                                                               "OS Image reported by the node "    \
                                                               "from /etc/os-release.",            \
                                                               1) "," COL("Kernel-Version",        \
                                                                          "string", "",            \
                                                                          "Kernel Version "        \
                                                                          "reported by the node.", \
                                                                          1) "," COL("Container-"  \
                                                                                     "Runtime",    \
                                                                                     "string", "", \
                                                                                     "ContainerRu" \
                                                                                     "ntime "      \
                                                                                     "Version "    \
                                                                                     "reported "   \
                                                                                     "by the "     \
                                                                                     "node.",      \
                                                                                     1) "]"

#define CRD_DESC "Custom resource definition column (in JSONPath format): "

/* ---- HumanDuration ---------------------------------------------------------------------- */

static void test_human_duration(void **state)
{
    static const struct {
        int64_t s;
        const char *want;
    } rows[] = {
        {INT64_MIN, "<invalid>"},
        {-3600, "<invalid>"},
        {-2, "<invalid>"},
        {-1, "0s"},
        {0, "0s"},
        {1, "1s"},
        {59, "59s"},
        {60, "60s"},
        {119, "119s"},
        {120, "2m"},
        {121, "2m1s"},
        {179, "2m59s"},
        {180, "3m"},
        {599, "9m59s"},
        {600, "10m"},
        {659, "10m"},
        {3600, "60m"},
        {10799, "179m"},
        {10800, "3h"},
        {10859, "3h"},
        {10860, "3h1m"},
        {28740, "7h59m"},
        {28799, "7h59m"},
        {28800, "8h"},
        {86400, "24h"},
        {172799, "47h"},
        {172800, "2d"},
        {176399, "2d"},
        {176400, "2d1h"},
        {691199, "7d23h"},
        {691200, "8d"},
        {31536000, "365d"},
        {63071999, "729d"},
        {63072000, "2y"},
        {63158400, "2y1d"},
        {94608000, "3y"},
        {252287999, "7y364d"},
        {252288000, "8y"},
        {315360000, "10y"},
        {INT64_MAX, "292471208677y"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char buf[TABLE_DURATION_MAX];
        size_t n = table_human_duration(rows[i].s, buf);

        if (strcmp(buf, rows[i].want) != 0)
            fail_msg("%lld: got %s, want %s", (long long)rows[i].s, buf, rows[i].want);
        assert_int_equal(n, strlen(rows[i].want));
    }
}

/* ---- JSONPath --------------------------------------------------------------------------- */

static void test_jsonpath(void **state)
{
    static const struct {
        const char *path;
        const char *want; /* JSON text of the value, NULL = absent */
    } rows[] = {
        {".status.phase", "\"Running\""},
        {"$.status.phase", "\"Running\""},
        {".spec.target.workload.kind", "\"Deployment\""},
        {".metadata.labels.app", "\"web\""},
        {".spec.list[0].x", "1"},
        {".spec.list[1].x", "2"},
        {".spec.list[-1].x", "2"},
        {".spec.list[-2]", "{\"x\":1}"},
        {".spec.list", "[{\"x\":1},{\"x\":2}]"},
        {".metadata.labels['kubernetes.io/hostname']", "\"n1\""},
        {".metadata.labels[\"kubernetes.io/hostname\"]", "\"n1\""},
        {".metadata.labels.kubernetes\\.io/hostname", "\"n1\""},
        {".metadata['labels'].app", "\"web\""},
        {".a\\.b", "5"},
        {".status.ready", "false"},
        {".status.node", "null"},
        /* absent */
        {".missing", NULL},
        {".status.phase.x", NULL},
        {".spec.list[2].x", NULL},
        {".spec.list[-3]", NULL},
        {".spec.list.x", NULL},
        {".status[0]", NULL},
        {".metadata.labels.kubernetes.io/hostname", NULL},
        {".Status.phase", NULL},
        /* malformed or outside the subset */
        {"", NULL},
        {"status.phase", NULL},
        {".status..phase", NULL},
        {".status.", NULL},
        {"..status", NULL},
        {".spec.list[x]", NULL},
        {".spec.list[]", NULL},
        {".spec.list[0", NULL},
        {".spec.list[*].x", NULL},
        {".spec.list[0:1]", NULL},
        {".metadata.labels['app", NULL},
        {".metadata.labels['app'", NULL},
        {".a\\", NULL},
        {"{.status.phase}", NULL},
    };
    cJSON *obj = J("{\"status\":{\"phase\":\"Running\",\"ready\":false,\"node\":null},"
                   "\"spec\":{\"target\":{\"workload\":{\"kind\":\"Deployment\"}},"
                   "\"list\":[{\"x\":1},{\"x\":2}]},"
                   "\"metadata\":{\"labels\":{\"app\":\"web\",\"kubernetes.io/hostname\":\"n1\"}},"
                   "\"a.b\":5}");

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const cJSON *got = table_jsonpath(obj, rows[i].path);

        if (!rows[i].want) {
            if (got)
                fail_msg("%s: want absent", rows[i].path);
            continue;
        }
        if (!got)
            fail_msg("%s: absent, want %s", rows[i].path, rows[i].want);
        assert_json_eq(got, rows[i].want);
    }
    assert_ptr_equal(table_jsonpath(obj, "."), obj);
    assert_ptr_equal(table_jsonpath(obj, "$"), obj);
    assert_null(table_jsonpath(NULL, ".a"));
    assert_null(table_jsonpath(obj, NULL));
    cJSON_Delete(obj);
}

/* ---- helpers ---------------------------------------------------------------------------- */

/* The Table of the objects given as JSON texts (texts is NULL-terminated). */
static cJSON *build_(const struct api_kind *k, enum table_include inc, const char *const *texts)
{
    cJSON *objs[16] = {NULL};
    size_t n = 0;
    cJSON *t;

    for (; texts[n]; n++) {
        assert_true(n < 16);
        objs[n] = J(texts[n]);
    }
    t = table_build(k, (const cJSON *const *)objs, n, "1240", NULL, NOW, inc);
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(objs[i]);
    return t;
}
/* build(kind, include, json, json, ..., NULL) */
#define build(k, inc, ...) build_((k), (inc), (const char *const[]){__VA_ARGS__})

/* Asserts that the cells of the only row of table t equal want (JSON array text). */
static void assert_cells_at(cJSON *t, const char *want, int line)
{
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(t, "rows");

    if (cJSON_GetArraySize(rows) != 1)
        fail_msg("line %d: %d rows", line, cJSON_GetArraySize(rows));
    assert_json_eq_at(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(rows, 0), "cells"), want,
                      line);
}
#define assert_cells(t, want) assert_cells_at((t), (want), __LINE__)

/* One pod row: builds, compares the cells, frees. */
static void pod_row_at(const char *pod, const char *want, int line)
{
    cJSON *t = build(kind("v1", "Pod"), TABLE_INCLUDE_NONE, pod, NULL);

    assert_cells_at(t, want, line);
    cJSON_Delete(t);
}
#define pod_row(pod, want) pod_row_at((pod), (want), __LINE__)

#define POD(meta, spec, status)                                                                    \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"default\"," meta "},"   \
    "\"spec\":{" spec "},\"status\":{" status "}}"

#define ONE_CONTAINER  "\"containers\":[{\"name\":\"app\",\"image\":\"nginx\"}]"
#define TWO_CONTAINERS "\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]"

/* ---- Pods ------------------------------------------------------------------------------- */

static void test_pod_gated_whole_table(void **state)
{
    cJSON *t =
        build(kind("v1", "Pod"), TABLE_INCLUDE_METADATA,
              POD("\"name\":\"web-1\",\"uid\":\"u-1\",\"resourceVersion\":\"1238\","
                  "\"creationTimestamp\":\"2024-05-01T09:59:53Z\",\"labels\":{\"app\":\"web\"}",
                  ONE_CONTAINER ",\"schedulingGates\":[{\"name\":\"example.com/quota\"}]",
                  "\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\","
                  "\"status\":\"False\",\"reason\":\"SchedulingGated\",\"message\":"
                  "\"Scheduling is blocked due to non-empty scheduling gates\"}]"),
              NULL);

    (void)state;
    assert_json_eq(
        t, "{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\","
           "\"metadata\":{\"resourceVersion\":\"1240\"},"
           "\"columnDefinitions\":" POD_COLUMNS ","
           "\"rows\":[{\"cells\":[\"web-1\",\"0/1\",\"SchedulingGated\",\"0\",\"7s\",\"<none>\","
           "\"<none>\",\"<none>\",\"<none>\"],"
           "\"object\":{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\","
           "\"metadata\":{\"namespace\":\"default\",\"name\":\"web-1\",\"uid\":\"u-1\","
           "\"resourceVersion\":\"1238\",\"creationTimestamp\":\"2024-05-01T09:59:53Z\","
           "\"labels\":{\"app\":\"web\"}}}}]}");
    cJSON_Delete(t);
}

static void test_pod_running(void **state)
{
    (void)state;
    /* 2/2 ready, restarts 2 + 1, last termination at 09:55 (5m ago), created 07:00 (3h),
     * podIP from the legacy field, one of one readiness gate true. */
    pod_row(POD("\"name\":\"run\",\"creationTimestamp\":\"2024-05-01T07:00:00Z\"",
                TWO_CONTAINERS ",\"nodeName\":\"n1\",\"readinessGates\":[{\"conditionType\":"
                               "\"example.com/ok\"}]",
                "\"phase\":\"Running\",\"podIP\":\"10.0.0.5\",\"conditions\":["
                "{\"type\":\"Ready\",\"status\":\"True\"},"
                "{\"type\":\"example.com/ok\",\"status\":\"True\"}],"
                "\"containerStatuses\":["
                "{\"name\":\"a\",\"ready\":true,\"restartCount\":2,\"state\":{\"running\":{}},"
                "\"lastState\":{\"terminated\":{\"exitCode\":1,"
                "\"finishedAt\":\"2024-05-01T09:55:00Z\"}}},"
                "{\"name\":\"b\",\"ready\":true,\"restartCount\":1,\"state\":{\"running\":{}}}]"),
            "[\"run\",\"2/2\",\"Running\",\"3 (5m ago)\",\"3h\",\"10.0.0.5\",\"n1\",\"<none>\","
            "\"1/1\"]");
    /* podIPs wins over podIP; a nominated node; a gate whose condition is False or missing. */
    pod_row(POD("\"name\":\"p\",\"creationTimestamp\":\"2024-05-01T09:58:00Z\"",
                ONE_CONTAINER ",\"readinessGates\":[{\"conditionType\":\"g1\"},"
                              "{\"conditionType\":\"g2\"}]",
                "\"phase\":\"Pending\",\"podIP\":\"10.0.0.9\",\"podIPs\":[{\"ip\":\"10.0.0.7\"},"
                "{\"ip\":\"fd00::7\"}],\"nominatedNodeName\":\"n9\","
                "\"conditions\":[{\"type\":\"g1\",\"status\":\"False\"}]"),
            "[\"p\",\"0/1\",\"Pending\",\"0\",\"2m\",\"10.0.0.7\",\"<none>\",\"n9\",\"0/2\"]");
    /* Restarts without a known last termination: just the count. */
    pod_row(
        POD("\"name\":\"p\",\"creationTimestamp\":\"2024-05-01T09:00:00Z\"", ONE_CONTAINER,
            "\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"app\",\"ready\":false,"
            "\"restartCount\":7,\"state\":{\"running\":{}}}]"),
        "[\"p\",\"0/1\",\"Running\",\"7\",\"60m\",\"<none>\",\"<none>\",\"<none>\",\"<none>\"]");
}

static void test_pod_crashloop(void **state)
{
    (void)state;
    pod_row(POD("\"name\":\"crash\",\"creationTimestamp\":\"2024-04-29T10:00:00Z\"", ONE_CONTAINER,
                "\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"app\",\"ready\":false,"
                "\"restartCount\":4,\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\"}},"
                "\"lastState\":{\"terminated\":{\"exitCode\":1,\"reason\":\"Error\","
                "\"finishedAt\":\"2024-05-01T09:58:30Z\"}}}]"),
            "[\"crash\",\"0/1\",\"CrashLoopBackOff\",\"4 (90s ago)\",\"2d\",\"<none>\",\"<none>\","
            "\"<none>\",\"<none>\"]");
    /* The first container's state is the one shown (the printer walks backwards). */
    pod_row(POD("\"name\":\"two\",\"creationTimestamp\":\"2024-05-01T09:59:00Z\"", TWO_CONTAINERS,
                "\"phase\":\"Pending\",\"containerStatuses\":["
                "{\"name\":\"a\",\"state\":{\"waiting\":{\"reason\":\"ImagePullBackOff\"}}},"
                "{\"name\":\"b\",\"state\":{\"waiting\":{\"reason\":\"ContainerCreating\"}}}]"),
            "[\"two\",\"0/2\",\"ImagePullBackOff\",\"0\",\"60s\",\"<none>\",\"<none>\",\"<none>\","
            "\"<none>\"]");
    /* Terminated without a reason: Signal:n, else ExitCode:n. */
    pod_row(POD("\"name\":\"sig\",\"creationTimestamp\":\"2024-05-01T09:59:00Z\"", ONE_CONTAINER,
                "\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"app\",\"state\":"
                "{\"terminated\":{\"exitCode\":137,\"signal\":9}}}]"),
            "[\"sig\",\"0/1\",\"Signal:9\",\"0\",\"60s\",\"<none>\",\"<none>\",\"<none>\","
            "\"<none>\"]");
}

static void test_pod_terminating(void **state)
{
    (void)state;
    pod_row(POD("\"name\":\"bye\",\"creationTimestamp\":\"2024-05-01T09:50:00Z\","
                "\"deletionTimestamp\":\"2024-05-01T09:59:59Z\"",
                ONE_CONTAINER ",\"nodeName\":\"n2\"",
                "\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"app\",\"ready\":true,"
                "\"restartCount\":0,\"state\":{\"running\":{}}}]"),
            "[\"bye\",\"1/1\",\"Terminating\",\"0\",\"10m\",\"<none>\",\"n2\",\"<none>\","
            "\"<none>\"]");
    /* NodeLost while deleting: Unknown. */
    pod_row(POD("\"name\":\"lost\",\"creationTimestamp\":\"2024-05-01T09:50:00Z\","
                "\"deletionTimestamp\":\"2024-05-01T09:59:59Z\"",
                ONE_CONTAINER, "\"phase\":\"Running\",\"reason\":\"NodeLost\""),
            "[\"lost\",\"0/1\",\"Unknown\",\"0\",\"10m\",\"<none>\",\"<none>\",\"<none>\","
            "\"<none>\"]");
    /* A terminal pod being deleted keeps its status. */
    pod_row(POD("\"name\":\"done\",\"creationTimestamp\":\"2024-05-01T09:50:00Z\","
                "\"deletionTimestamp\":\"2024-05-01T09:59:59Z\"",
                ONE_CONTAINER, "\"phase\":\"Succeeded\""),
            "[\"done\",\"0/1\",\"Succeeded\",\"0\",\"10m\",\"<none>\",\"<none>\",\"<none>\","
            "\"<none>\"]");
    /* deletionTimestamp: null is no deletion. */
    pod_row(POD("\"name\":\"n\",\"creationTimestamp\":\"2024-05-01T09:50:00Z\","
                "\"deletionTimestamp\":null",
                ONE_CONTAINER, "\"phase\":\"Pending\""),
            "[\"n\",\"0/1\",\"Pending\",\"0\",\"10m\",\"<none>\",\"<none>\",\"<none>\","
            "\"<none>\"]");
}

static void test_pod_init_containers(void **state)
{
    (void)state;
    /* The init container runs: Init:0/1; app containers are not looked at. */
    pod_row(POD("\"name\":\"init\",\"creationTimestamp\":\"2024-05-01T09:59:30Z\"",
                "\"initContainers\":[{\"name\":\"setup\"}]," ONE_CONTAINER,
                "\"phase\":\"Pending\",\"conditions\":[{\"type\":\"Initialized\","
                "\"status\":\"False\"}],\"initContainerStatuses\":[{\"name\":\"setup\","
                "\"restartCount\":0,\"state\":{\"running\":{}}}],\"containerStatuses\":[{\"name\":"
                "\"app\",\"state\":{\"waiting\":{\"reason\":\"PodInitializing\"}}}]"),
            "[\"init\",\"0/1\",\"Init:0/1\",\"0\",\"30s\",\"<none>\",\"<none>\",\"<none>\","
            "\"<none>\"]");
    /* First done, second waiting for PodInitializing: Init:1/2, restarts from init containers. */
    pod_row(POD("\"name\":\"i2\",\"creationTimestamp\":\"2024-05-01T09:59:30Z\"",
                "\"initContainers\":[{\"name\":\"i1\"},{\"name\":\"i2\"}]," ONE_CONTAINER,
                "\"phase\":\"Pending\",\"initContainerStatuses\":["
                "{\"name\":\"i1\",\"restartCount\":1,\"state\":{\"terminated\":{\"exitCode\":0,"
                "\"reason\":\"Completed\"}}},"
                "{\"name\":\"i2\",\"state\":{\"waiting\":{\"reason\":\"PodInitializing\"}}}]"),
            "[\"i2\",\"0/1\",\"Init:1/2\",\"1\",\"30s\",\"<none>\",\"<none>\",\"<none>\","
            "\"<none>\"]");
    /* Waiting with a reason: Init:<reason>. */
    pod_row(POD("\"name\":\"iw\",\"creationTimestamp\":\"2024-05-01T09:59:30Z\"",
                "\"initContainers\":[{\"name\":\"i1\"}]," ONE_CONTAINER,
                "\"phase\":\"Pending\",\"initContainerStatuses\":[{\"name\":\"i1\","
                "\"restartCount\":3,\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\"}}}]"),
            "[\"iw\",\"0/1\",\"Init:CrashLoopBackOff\",\"3\",\"30s\",\"<none>\",\"<none>\","
            "\"<none>\",\"<none>\"]");
    /* Failed init: Init:<reason>, else Init:Signal:n, else Init:ExitCode:n. */
    pod_row(POD("\"name\":\"ie\",\"creationTimestamp\":\"2024-05-01T09:59:30Z\"",
                "\"initContainers\":[{\"name\":\"i1\"}]," ONE_CONTAINER,
                "\"phase\":\"Pending\",\"initContainerStatuses\":[{\"name\":\"i1\",\"state\":"
                "{\"terminated\":{\"exitCode\":1,\"reason\":\"Error\"}}}]"),
            "[\"ie\",\"0/1\",\"Init:Error\",\"0\",\"30s\",\"<none>\",\"<none>\",\"<none>\","
            "\"<none>\"]");
    pod_row(POD("\"name\":\"ix\",\"creationTimestamp\":\"2024-05-01T09:59:30Z\"",
                "\"initContainers\":[{\"name\":\"i1\"}]," ONE_CONTAINER,
                "\"phase\":\"Pending\",\"initContainerStatuses\":[{\"name\":\"i1\",\"state\":"
                "{\"terminated\":{\"exitCode\":2}}}]"),
            "[\"ix\",\"0/1\",\"Init:ExitCode:2\",\"0\",\"30s\",\"<none>\",\"<none>\",\"<none>\","
            "\"<none>\"]");
    pod_row(POD("\"name\":\"is\",\"creationTimestamp\":\"2024-05-01T09:59:30Z\"",
                "\"initContainers\":[{\"name\":\"i1\"}]," ONE_CONTAINER,
                "\"phase\":\"Pending\",\"initContainerStatuses\":[{\"name\":\"i1\",\"state\":"
                "{\"terminated\":{\"exitCode\":143,\"signal\":15}}}]"),
            "[\"is\",\"0/1\",\"Init:Signal:15\",\"0\",\"30s\",\"<none>\",\"<none>\",\"<none>\","
            "\"<none>\"]");
    /* A started sidecar (restartPolicy Always) counts in READY and in the total; only its
     * restarts are kept once the pod is initialized. */
    pod_row(
        POD("\"name\":\"sc\",\"creationTimestamp\":\"2024-05-01T09:59:30Z\"",
            "\"initContainers\":[{\"name\":\"once\"},{\"name\":\"proxy\","
            "\"restartPolicy\":\"Always\"}]," ONE_CONTAINER,
            "\"phase\":\"Running\",\"conditions\":[{\"type\":\"Initialized\","
            "\"status\":\"True\"}],\"initContainerStatuses\":["
            "{\"name\":\"once\",\"restartCount\":5,\"state\":{\"terminated\":{\"exitCode\":0}}},"
            "{\"name\":\"proxy\",\"restartCount\":1,\"started\":true,\"ready\":true,"
            "\"state\":{\"running\":{}}}],"
            "\"containerStatuses\":[{\"name\":\"app\",\"ready\":true,\"restartCount\":2,"
            "\"state\":{\"running\":{}}}]"),
        "[\"sc\",\"2/2\",\"Running\",\"3\",\"30s\",\"<none>\",\"<none>\",\"<none>\","
        "\"<none>\"]");
}

static void test_pod_completed(void **state)
{
    cJSON *t;

    (void)state;
    t = build(kind("v1", "Pod"), TABLE_INCLUDE_NONE,
              POD("\"name\":\"job-x\",\"creationTimestamp\":\"2024-04-30T09:00:00Z\"",
                  ONE_CONTAINER ",\"nodeName\":\"n1\"",
                  "\"phase\":\"Succeeded\",\"podIPs\":[{\"ip\":\"10.0.0.3\"}],"
                  "\"containerStatuses\":[{\"name\":\"app\",\"ready\":false,\"restartCount\":0,"
                  "\"state\":{\"terminated\":{\"exitCode\":0,\"reason\":\"Completed\"}}}]"),
              NULL);
    assert_json_eq(cJSON_GetObjectItemCaseSensitive(t, "rows"),
                   "[{\"cells\":[\"job-x\",\"0/1\",\"Completed\",\"0\",\"25h\",\"10.0.0.3\","
                   "\"n1\",\"<none>\",\"<none>\"],"
                   "\"conditions\":[{\"type\":\"Completed\",\"status\":\"True\","
                   "\"reason\":\"Succeeded\",\"message\":\"The pod has completed successfully.\"}]"
                   "}]");
    cJSON_Delete(t);

    t = build(kind("v1", "Pod"), TABLE_INCLUDE_NONE,
              POD("\"name\":\"job-y\",\"creationTimestamp\":\"2024-04-30T09:00:00Z\"",
                  ONE_CONTAINER,
                  "\"phase\":\"Failed\",\"containerStatuses\":[{\"name\":\"app\","
                  "\"state\":{\"terminated\":{\"exitCode\":3}}}]"),
              NULL);
    assert_json_eq(cJSON_GetObjectItemCaseSensitive(t, "rows"),
                   "[{\"cells\":[\"job-y\",\"0/1\",\"ExitCode:3\",\"0\",\"25h\",\"<none>\","
                   "\"<none>\",\"<none>\",\"<none>\"],"
                   "\"conditions\":[{\"type\":\"Completed\",\"status\":\"True\","
                   "\"reason\":\"Failed\",\"message\":\"The pod failed.\"}]}]");
    cJSON_Delete(t);

    /* One container Completed, one still running: NotReady without the Ready condition,
     * Running with it. */
    pod_row(POD("\"name\":\"half\",\"creationTimestamp\":\"2024-05-01T09:59:30Z\"", TWO_CONTAINERS,
                "\"phase\":\"Running\",\"containerStatuses\":["
                "{\"name\":\"a\",\"state\":{\"terminated\":{\"exitCode\":0,\"reason\":"
                "\"Completed\"}}},"
                "{\"name\":\"b\",\"ready\":true,\"state\":{\"running\":{}}}]"),
            "[\"half\",\"1/2\",\"NotReady\",\"0\",\"30s\",\"<none>\",\"<none>\",\"<none>\","
            "\"<none>\"]");
    pod_row(POD("\"name\":\"half\",\"creationTimestamp\":\"2024-05-01T09:59:30Z\"", TWO_CONTAINERS,
                "\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}],"
                "\"containerStatuses\":["
                "{\"name\":\"a\",\"state\":{\"terminated\":{\"exitCode\":0,\"reason\":"
                "\"Completed\"}}},"
                "{\"name\":\"b\",\"ready\":true,\"state\":{\"running\":{}}}]"),
            "[\"half\",\"1/2\",\"Running\",\"0\",\"30s\",\"<none>\",\"<none>\",\"<none>\","
            "\"<none>\"]");
}

static void test_pod_sparse(void **state)
{
    (void)state;
    /* No spec, no status, no creationTimestamp: what the printer shows for empty fields. */
    pod_row("{\"metadata\":{\"name\":\"bare\"}}",
            "[\"bare\",\"0/0\",\"\",\"0\",\"<unknown>\",\"<none>\",\"<none>\",\"<none>\","
            "\"<none>\"]");
    /* status.reason replaces the phase (Evicted). */
    pod_row(POD("\"name\":\"ev\",\"creationTimestamp\":\"2024-05-01T09:59:58Z\"", ONE_CONTAINER,
                "\"phase\":\"Failed\",\"reason\":\"Evicted\""),
            "[\"ev\",\"0/1\",\"Evicted\",\"0\",\"2s\",\"<none>\",\"<none>\",\"<none>\","
            "\"<none>\"]");
    /* A creation time 1s in the future is "0s", 2s is "<invalid>". */
    pod_row(POD("\"name\":\"f\",\"creationTimestamp\":\"2024-05-01T10:00:01Z\"", ONE_CONTAINER,
                "\"phase\":\"Pending\""),
            "[\"f\",\"0/1\",\"Pending\",\"0\",\"0s\",\"<none>\",\"<none>\",\"<none>\","
            "\"<none>\"]");
    pod_row(POD("\"name\":\"f\",\"creationTimestamp\":\"2024-05-01T10:00:02Z\"", ONE_CONTAINER,
                "\"phase\":\"Pending\""),
            "[\"f\",\"0/1\",\"Pending\",\"0\",\"<invalid>\",\"<none>\",\"<none>\",\"<none>\","
            "\"<none>\"]");
}

/* ---- Nodes ------------------------------------------------------------------------------ */

static void test_node_table(void **state)
{
    cJSON *t =
        build(kind("v1", "Node"), TABLE_INCLUDE_NONE,
              "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\","
              "\"creationTimestamp\":\"2024-04-01T10:00:00Z\",\"labels\":{"
              "\"node-role.kubernetes.io/worker\":\"\",\"kubernetes.io/hostname\":\"n1\","
              "\"node-role.kubernetes.io/control-plane\":\"\"}},"
              "\"status\":{\"conditions\":[{\"type\":\"MemoryPressure\",\"status\":\"False\"},"
              "{\"type\":\"Ready\",\"status\":\"True\"}],"
              "\"addresses\":[{\"type\":\"Hostname\",\"address\":\"n1\"},"
              "{\"type\":\"InternalIP\",\"address\":\"10.0.0.1\"}],"
              "\"nodeInfo\":{\"kubeletVersion\":\"v1.30.1\",\"osImage\":\"Debian GNU/Linux 12 "
              "(bookworm)\",\"kernelVersion\":\"6.1.0-18-amd64\","
              "\"containerRuntimeVersion\":\"containerd://1.7.13\"}}}",
              "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n2\","
              "\"creationTimestamp\":\"2024-05-01T06:00:00Z\",\"labels\":{"
              "\"kubernetes.io/role\":\"worker\",\"node-role.kubernetes.io/worker\":\"\","
              "\"node-role.kubernetes.io/\":\"\"}},\"spec\":{\"unschedulable\":true},"
              "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}],"
              "\"addresses\":[{\"type\":\"ExternalIP\",\"address\":\"1.2.3.4\"}]}}",
              "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n3\","
              "\"labels\":{\"kubernetes.io/role\":\"\"}},\"spec\":{\"unschedulable\":true}}",
              "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n4\","
              "\"creationTimestamp\":\"2024-05-01T09:00:00Z\"},\"spec\":{\"unschedulable\":false},"
              "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},"
              "{\"type\":\"Ready\",\"status\":\"Unknown\"}]}}",
              NULL);

    (void)state;
    assert_json_eq(
        t, "{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\","
           "\"metadata\":{\"resourceVersion\":\"1240\"},\"columnDefinitions\":" NODE_COLUMNS ","
           "\"rows\":["
           "{\"cells\":[\"n1\",\"Ready\",\"control-plane,worker\",\"30d\",\"v1.30.1\","
           "\"10.0.0.1\",\"<none>\",\"Debian GNU/Linux 12 (bookworm)\",\"6.1.0-18-amd64\","
           "\"containerd://1.7.13\"]},"
           "{\"cells\":[\"n2\",\"NotReady,SchedulingDisabled\",\"worker\",\"4h\",\"\","
           "\"<none>\",\"1.2.3.4\",\"<unknown>\",\"<unknown>\",\"<unknown>\"]},"
           "{\"cells\":[\"n3\",\"Unknown,SchedulingDisabled\",\"<none>\",\"<unknown>\",\"\","
           "\"<none>\",\"<none>\",\"<unknown>\",\"<unknown>\",\"<unknown>\"]},"
           "{\"cells\":[\"n4\",\"NotReady\",\"<none>\",\"60m\",\"\","
           "\"<none>\",\"<none>\",\"<unknown>\",\"<unknown>\",\"<unknown>\"]}]}");
    cJSON_Delete(t);
}

/* ---- CRDs ------------------------------------------------------------------------------- */

static void test_reservation_table(void **state)
{
    const struct api_kind *k = kind("scheduling.koordinator.sh/v1alpha1", "Reservation");
    cJSON *t = build(k, TABLE_INCLUDE_METADATA,
                     "{\"apiVersion\":\"scheduling.koordinator.sh/v1alpha1\",\"kind\":"
                     "\"Reservation\",\"metadata\":{\"name\":\"r1\",\"uid\":\"u1\","
                     "\"resourceVersion\":\"7\",\"creationTimestamp\":\"2024-05-01T08:30:00Z\"},"
                     "\"spec\":{\"ttl\":\"1h\",\"template\":{}},"
                     "\"status\":{\"phase\":\"Available\",\"nodeName\":\"n1\"}}",
                     "{\"apiVersion\":\"scheduling.koordinator.sh/v1alpha1\",\"kind\":"
                     "\"Reservation\",\"metadata\":{\"name\":\"r2\","
                     "\"creationTimestamp\":\"2024-04-20T10:00:00Z\"},"
                     "\"spec\":{\"expires\":\"2024-05-02T00:00:00Z\",\"template\":{}}}",
                     NULL);

    (void)state;
    assert_json_eq(
        t,
        "{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\","
        "\"metadata\":{\"resourceVersion\":\"1240\"},\"columnDefinitions\":[" NAME_COL
        "," COL("Phase", "string", "", "The phase of reservation", 0) "," COL(
            "Age", "date", "", CRD_DESC ".metadata.creationTimestamp",
            0) "," COL("Node", "string", "", CRD_DESC ".status.nodeName",
                       0) "," COL("TTL", "string", "", CRD_DESC ".spec.ttl",
                                  0) "," COL("Expires", "string", "", CRD_DESC ".spec.expires",
                                             0) "],"
                                                "\"rows\":["
                                                "{\"cells\":[\"r1\",\"Available\",\"90m\",\"n1\","
                                                "\"1h\",null],"
                                                "\"object\":{\"kind\":\"PartialObjectMetadata\","
                                                "\"apiVersion\":\"meta.k8s.io/v1\","
                                                "\"metadata\":{\"name\":\"r1\",\"uid\":\"u1\","
                                                "\"resourceVersion\":\"7\","
                                                "\"creationTimestamp\":\"2024-05-01T08:30:00Z\"}}},"
                                                "{\"cells\":[\"r2\",null,\"11d\",null,null,\"2024-"
                                                "05-02T00:00:00Z\"],"
                                                "\"object\":{\"kind\":\"PartialObjectMetadata\","
                                                "\"apiVersion\":\"meta.k8s.io/v1\","
                                                "\"metadata\":{\"name\":\"r2\","
                                                "\"creationTimestamp\":\"2024-04-20T10:00:00Z\"}}}]"
                                                "}");
    cJSON_Delete(t);
}

/* A kind with one column of every type, to pin tableconvertor's cellForJSONValue. */
static const struct api_printer_column typed_columns[] = {
    {"Count", "integer", ".spec.count", "how many"},
    {"Ratio", "number", ".spec.ratio", NULL},
    {"On", "boolean", ".spec.on", NULL},
    {"Val", "string", ".spec.val", NULL},
    {"When", "date", ".spec.when", NULL},
    {"Host", "string", ".metadata.labels['kubernetes.io/hostname']", NULL},
    {NULL, NULL, NULL, NULL},
};
static const struct api_kind typed_kind = {
    .group = "example.com",
    .version = "v1",
    .kind = "Typed",
    .plural = "typeds",
    .crd = true,
    .columns = typed_columns,
};

static void typed_row_at(const char *spec, const char *want, int line)
{
    struct strbuf sb = STRBUF_INIT;
    cJSON *t;

    strbuf_addf(&sb,
                "{\"metadata\":{\"name\":\"x\",\"labels\":{\"kubernetes.io/hostname\":\"h\"}},"
                "\"spec\":%s}",
                spec);
    t = build(&typed_kind, TABLE_INCLUDE_NONE, sb.buf, NULL);
    strbuf_release(&sb);
    assert_cells_at(t, want, line);
    cJSON_Delete(t);
}
#define typed_row(spec, want) typed_row_at((spec), (want), __LINE__)

static void test_crd_cell_types(void **state)
{
    cJSON *t;

    (void)state;
    typed_row("{\"count\":3,\"ratio\":0.5,\"on\":true,\"val\":\"s\","
              "\"when\":\"2024-05-01T09:00:00Z\"}",
              "[\"x\",3,0.5,true,\"s\",\"60m\",\"h\"]");
    /* integer truncates a float; number takes an integer; a string column prints numbers and
     * booleans as text; a date with a fraction counts whole elapsed seconds. */
    typed_row("{\"count\":2.7,\"ratio\":4,\"on\":false,\"val\":42,"
              "\"when\":\"2024-05-01T09:58:00.5Z\"}",
              "[\"x\",2,4,false,\"42\",\"119s\",\"h\"]");
    typed_row("{\"val\":1.25}", "[\"x\",null,null,null,\"1.25\",null,\"h\"]");
    typed_row("{\"val\":true}", "[\"x\",null,null,null,\"true\",null,\"h\"]");
    /* objects and arrays as compact JSON text */
    typed_row("{\"val\":{\"a\":1}}", "[\"x\",null,null,null,\"{\\\"a\\\":1}\",null,\"h\"]");
    typed_row("{\"val\":[1,\"y\"]}", "[\"x\",null,null,null,\"[1,\\\"y\\\"]\",null,\"h\"]");
    /* values of the wrong type and nulls are null cells */
    typed_row("{\"count\":\"3\",\"ratio\":true,\"on\":\"yes\",\"val\":null,\"when\":5}",
              "[\"x\",null,null,null,null,null,\"h\"]");
    /* dates: empty is <unknown>, garbage is <invalid>, the future by 2s is <invalid> */
    typed_row("{\"when\":\"\"}", "[\"x\",null,null,null,null,\"<unknown>\",\"h\"]");
    typed_row("{\"when\":\"yesterday\"}", "[\"x\",null,null,null,null,\"<invalid>\",\"h\"]");
    typed_row("{\"when\":\"2024-05-01T10:00:02Z\"}",
              "[\"x\",null,null,null,null,\"<invalid>\",\"h\"]");

    t = build(&typed_kind, TABLE_INCLUDE_NONE, "{\"metadata\":{\"name\":\"x\"}}", NULL);
    assert_json_eq(cJSON_GetObjectItemCaseSensitive(t, "columnDefinitions"),
                   "[" NAME_COL "," COL("Count", "integer", "", "how many", 0) "," COL(
                       "Ratio", "number", "", CRD_DESC ".spec.ratio",
                       0) "," COL("On", "boolean", "", CRD_DESC ".spec.on",
                                  0) "," COL("Val", "string", "", CRD_DESC ".spec.val",
                                             0) "," COL("When", "date", "", CRD_DESC ".spec.when",
                                                        0) "," COL("Host", "string", "",
                                                                   CRD_DESC
                                                                   ".metadata.labels['kubernetes."
                                                                   "io/hostname']",
                                                                   0) "]");
    cJSON_Delete(t);
}

static void test_nodeslo_table(void **state)
{
    const struct api_kind *k = kind("slo.koordinator.sh/v1alpha1", "NodeSLO");
    cJSON *t = build(k, TABLE_INCLUDE_NONE,
                     "{\"apiVersion\":\"slo.koordinator.sh/v1alpha1\",\"kind\":\"NodeSLO\","
                     "\"metadata\":{\"name\":\"n1\",\"creationTimestamp\":"
                     "\"2024-05-01T07:00:00Z\"},\"spec\":{}}",
                     "{\"apiVersion\":\"slo.koordinator.sh/v1alpha1\",\"kind\":\"NodeSLO\","
                     "\"metadata\":{\"name\":\"n2\"},\"spec\":{}}",
                     NULL);

    (void)state;
    assert_json_eq(t, "{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\","
                      "\"metadata\":{\"resourceVersion\":\"1240\"},"
                      "\"columnDefinitions\":[" NAME_COL "," COL(
                          "Age", "date", "", DESC_AGE,
                          0) "],\"rows\":[{\"cells\":[\"n1\",\"3h\"]},{\"cells\":[\"n2\",null]}]}");
    cJSON_Delete(t);
}

static void test_generic_table(void **state)
{
    const char *cm = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\","
                     "\"namespace\":\"kube-system\",\"creationTimestamp\":"
                     "\"2022-05-01T10:00:00Z\"},\"data\":{\"k\":\"v\"}}";
    const char *want =
        "{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\","
        "\"metadata\":{\"resourceVersion\":\"1240\"},"
        "\"columnDefinitions\":[" NAME_COL
        "," COL("Age", "string", "", DESC_AGE, 0) "],"
                                                  "\"rows\":[{\"cells\":[\"c\",\"2y\"]}]}";
    cJSON *t;

    (void)state;
    /* 2022-05-01 to 2024-05-01 is 731 days: 2y1d (a ConfigMap's printer: Name, Data, Age). */
    t = build(kind("v1", "ConfigMap"), TABLE_INCLUDE_NONE, cm, NULL);
    assert_cells(t, "[\"c\",1,\"2y1d\"]");
    cJSON_Delete(t);
    t = build(NULL, TABLE_INCLUDE_NONE,
              "{\"metadata\":{\"name\":\"c\",\"creationTimestamp\":\"2022-05-02T10:00:00Z\"}}",
              NULL);
    assert_json_eq(t, want);
    cJSON_Delete(t);
}

/* ---- Secret, Service, Endpoints, PriorityClass, APIService ----------------------------- */

/* Cells of one object of kind av/k; builds, compares, frees. */
static void row_at(const char *av, const char *k, const char *obj, const char *want, int line)
{
    cJSON *t = build(kind(av, k), TABLE_INCLUDE_NONE, obj, NULL);

    assert_cells_at(t, want, line);
    cJSON_Delete(t);
}
#define row(av, k, obj, want) row_at((av), (k), (obj), (want), __LINE__)

#define CREATED               "\"creationTimestamp\":\"2024-05-01T09:00:00Z\""
#define CREATED_AT            "2024-05-01T09:00:00Z"

static void test_core_tables(void **state)
{
    cJSON *t;
    (void)state;

    row("v1", "Secret",
        "{\"metadata\":{\"name\":\"s\"," CREATED "},\"type\":\"kubernetes.io/tls\",\"data\":"
        "{\"tls.crt\":\"YQ==\",\"tls.key\":\"Yg==\"}}",
        "[\"s\",\"kubernetes.io/tls\",\"2\",\"60m\"]");
    row("v1", "Secret", "{\"metadata\":{\"name\":\"e\"," CREATED "},\"type\":\"Opaque\"}",
        "[\"e\",\"Opaque\",\"0\",\"60m\"]");
    /* Ports with and without node ports; selector keys sorted. */
    row("v1", "Service",
        "{\"metadata\":{\"name\":\"web\"," CREATED "},\"spec\":{\"type\":\"NodePort\","
        "\"clusterIP\":\"10.96.0.7\",\"ports\":[{\"port\":80,\"nodePort\":30080,\"protocol\":"
        "\"TCP\"},{\"port\":53,\"protocol\":\"UDP\"}],\"selector\":{\"tier\":\"fe\",\"app\":"
        "\"web\"}}}",
        "[\"web\",\"NodePort\",\"10.96.0.7\",\"<none>\",\"80:30080/TCP,53/UDP\",\"60m\","
        "\"app=web,tier=fe\"]");
    row("v1", "Service",
        "{\"metadata\":{\"name\":\"lb\"," CREATED "},\"spec\":{\"type\":\"LoadBalancer\","
        "\"clusterIP\":\"10.96.0.8\",\"ports\":[{\"port\":443,\"nodePort\":30443}]}}",
        "[\"lb\",\"LoadBalancer\",\"10.96.0.8\",\"<pending>\",\"443:30443/TCP\",\"60m\","
        "\"<none>\"]");
    row("v1", "Service",
        "{\"metadata\":{\"name\":\"x\"," CREATED "},\"spec\":{\"type\":\"ExternalName\","
        "\"externalName\":\"db.example.com\"}}",
        "[\"x\",\"ExternalName\",\"<none>\",\"db.example.com\",\"<none>\",\"60m\",\"<none>\"]");
    /* Two ports times two addresses: three shown, one more counted. */
    row("v1", "Endpoints",
        "{\"metadata\":{\"name\":\"web\"," CREATED "},\"subsets\":[{\"addresses\":[{\"ip\":"
        "\"10.0.0.1\"},{\"ip\":\"10.0.0.2\"}],\"ports\":[{\"port\":80},{\"port\":81}]}]}",
        "[\"web\",\"10.0.0.1:80,10.0.0.2:80,10.0.0.1:81 + 1 more...\",\"60m\"]");
    row("v1", "Endpoints", "{\"metadata\":{\"name\":\"none\"," CREATED "}}",
        "[\"none\",\"<none>\",\"60m\"]");
    row("scheduling.k8s.io/v1", "PriorityClass",
        "{\"metadata\":{\"name\":\"koord-batch\"," CREATED "},\"value\":5000,"
        "\"preemptionPolicy\":\"PreemptLowerPriority\"}",
        "[\"koord-batch\",5000,false,\"60m\",\"PreemptLowerPriority\"]");
    t = build(kind("scheduling.k8s.io/v1", "PriorityClass"), TABLE_INCLUDE_NONE,
              "{\"metadata\":{\"name\":\"d\"},\"value\":1,\"globalDefault\":true}", NULL);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(t, "columnDefinitions"), 2),
                            "name")
            ->valuestring,
        "Global-Default");
    assert_true(cJSON_IsTrue(cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(t, "rows"), 0), "cells"), 2)));
    cJSON_Delete(t);
    /* kube-aggregator's columns: Local or namespace/name; True, "False (Reason)", Unknown. */
    row("apiregistration.k8s.io/v1", "APIService",
        "{\"metadata\":{\"name\":\"v1.x.io\"," CREATED "},\"spec\":{\"service\":{\"namespace\":"
        "\"ns\",\"name\":\"svc\"}},\"status\":{\"conditions\":[{\"type\":\"Available\","
        "\"status\":\"False\",\"reason\":\"MissingEndpoints\"}]}}",
        "[\"v1.x.io\",\"ns/svc\",\"False (MissingEndpoints)\",\"60m\"]");
    row("apiregistration.k8s.io/v1", "APIService",
        "{\"metadata\":{\"name\":\"v1.\"," CREATED "},\"spec\":{},\"status\":{\"conditions\":"
        "[{\"type\":\"Available\",\"status\":\"True\",\"reason\":\"Local\"}]}}",
        "[\"v1.\",\"Local\",\"True\",\"60m\"]");
    row("apiregistration.k8s.io/v1", "APIService",
        "{\"metadata\":{\"name\":\"v1.y.io\"," CREATED "},\"spec\":{}}",
        "[\"v1.y.io\",\"Local\",\"Unknown\",\"60m\"]");
}

/* printRole, printRoleBinding (subjects by kind, service accounts as namespace/name),
 * printServiceAccount; kinds sharing a printer list its columns once. */
static void test_rbac_tables(void **state)
{
    cJSON *t;
    (void)state;

    row("rbac.authorization.k8s.io/v1", "ClusterRole",
        "{\"metadata\":{\"name\":\"view\"," CREATED "},\"rules\":[]}",
        "[\"view\",\"" CREATED_AT "\"]");
    row("rbac.authorization.k8s.io/v1", "RoleBinding",
        "{\"metadata\":{\"name\":\"rb\"," CREATED "},\"roleRef\":{\"kind\":\"ClusterRole\","
        "\"name\":\"view\"},\"subjects\":[{\"kind\":\"User\",\"name\":\"alice\"},{\"kind\":"
        "\"ServiceAccount\",\"name\":\"robot\",\"namespace\":\"ns\"},{\"kind\":\"User\","
        "\"name\":\"bob\"}]}",
        "[\"rb\",\"ClusterRole/view\",\"60m\",\"alice, bob\",\"\",\"ns/robot\"]");
    row("v1", "ServiceAccount",
        "{\"metadata\":{\"name\":\"default\"," CREATED "},\"secrets\":[{\"name\":\"s\"}]}",
        "[\"default\",1,\"60m\"]");
    t = build(kind("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"), TABLE_INCLUDE_NONE,
              "{\"metadata\":{\"name\":\"b\"}}", NULL);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(t, "columnDefinitions")), 6);
    cJSON_Delete(t);
    t = build(kind("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"),
              TABLE_INCLUDE_NONE, "{\"metadata\":{\"name\":\"w\"}}", NULL);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(t, "columnDefinitions")), 3);
    cJSON_Delete(t);
}

/* ---- includeObject, list metadata ------------------------------------------------------- */

static void test_include_object(void **state)
{
    const char *pod = POD("\"name\":\"p\",\"uid\":\"u\",\"creationTimestamp\":"
                          "\"2024-05-01T09:00:00Z\",\"annotations\":{\"a\":\"b\"}",
                          ONE_CONTAINER, "\"phase\":\"Pending\"");
    cJSON *obj = J(pod), *t;
    const cJSON *row;

    (void)state;
    t = build(kind("v1", "Pod"), TABLE_INCLUDE_OBJECT, pod, NULL);
    row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(t, "rows"), 0);
    assert_true(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(row, "object"), obj, true));
    cJSON_Delete(t);

    t = build(kind("v1", "Pod"), TABLE_INCLUDE_METADATA, pod, NULL);
    row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(t, "rows"), 0);
    assert_json_eq(
        cJSON_GetObjectItemCaseSensitive(row, "object"),
        "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\","
        "\"metadata\":{\"namespace\":\"default\",\"name\":\"p\",\"uid\":\"u\","
        "\"creationTimestamp\":\"2024-05-01T09:00:00Z\",\"annotations\":{\"a\":\"b\"}}}");
    cJSON_Delete(t);

    t = build(kind("v1", "Pod"), TABLE_INCLUDE_NONE, pod, NULL);
    row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(t, "rows"), 0);
    assert_null(cJSON_GetObjectItemCaseSensitive(row, "object"));
    assert_non_null(cJSON_GetObjectItemCaseSensitive(row, "cells"));
    cJSON_Delete(t);

    /* An object without metadata still gets a PartialObjectMetadata. */
    t = build(NULL, TABLE_INCLUDE_METADATA, "{}", NULL);
    assert_json_eq(
        cJSON_GetObjectItemCaseSensitive(t, "rows"),
        "[{\"cells\":[\"\",\"<unknown>\"],\"object\":{\"kind\":"
        "\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":{}}}]");
    cJSON_Delete(t);
    cJSON_Delete(obj);
}

static void test_list_metadata(void **state)
{
    cJSON *t;

    (void)state;
    t = table_build(kind("v1", "Node"), NULL, 0, "99", "tok", NOW, TABLE_INCLUDE_METADATA);
    assert_json_eq(cJSON_GetObjectItemCaseSensitive(t, "metadata"),
                   "{\"resourceVersion\":\"99\",\"continue\":\"tok\"}");
    assert_json_eq(cJSON_GetObjectItemCaseSensitive(t, "rows"), "[]");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(t, "columnDefinitions")),
                     10);
    cJSON_Delete(t);

    t = table_build(NULL, NULL, 0, NULL, NULL, NOW, TABLE_INCLUDE_NONE);
    assert_json_eq(t, "{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":{},"
                      "\"columnDefinitions\":[" NAME_COL
                      "," COL("Age", "string", "", DESC_AGE, 0) "],\"rows\":[]}");
    cJSON_Delete(t);

    t = table_build(NULL, NULL, 0, "", "", NOW, TABLE_INCLUDE_NONE);
    assert_json_eq(cJSON_GetObjectItemCaseSensitive(t, "metadata"), "{}");
    cJSON_Delete(t);
}

/* ConfigMap, Namespace, Lease and Event printers (printers.go), and the default table. */
static void test_more_core_tables(void **state)
{
    cJSON *t;
    (void)state;

    row("v1", "ConfigMap",
        "{\"metadata\":{\"name\":\"c\"," CREATED "},\"data\":{\"a\":\"1\"},"
        "\"binaryData\":{\"b\":\"AA==\",\"c\":\"AA==\"}}",
        "[\"c\",3,\"60m\"]");
    row("v1", "ConfigMap", "{\"metadata\":{\"name\":\"e\"," CREATED "}}", "[\"e\",0,\"60m\"]");
    row("v1", "Namespace",
        "{\"metadata\":{\"name\":\"ns\"," CREATED "},\"status\":{\"phase\":\"Terminating\"}}",
        "[\"ns\",\"Terminating\",\"60m\"]");
    row("coordination.k8s.io/v1", "Lease",
        "{\"metadata\":{\"name\":\"l\"," CREATED "},\"spec\":{\"holderIdentity\":\"a_1\"}}",
        "[\"l\",\"a_1\",\"60m\"]");
    row("coordination.k8s.io/v1", "Lease", "{\"metadata\":{\"name\":\"l\"," CREATED "}}",
        "[\"l\",\"\",\"60m\"]");
    /* Events: times from last/firstTimestamp, else eventTime; a series overrides the last time
     * and the count; the source falls back to the reporting controller and instance. */
    row("v1", "Event",
        "{\"metadata\":{\"name\":\"e1\"},\"involvedObject\":{\"kind\":\"Node\",\"name\":\"n1\"},"
        "\"type\":\"Warning\",\"reason\":\"Down\",\"message\":\"gone\",\"count\":4,"
        "\"firstTimestamp\":\"2024-05-01T09:00:00Z\",\"lastTimestamp\":\"2024-05-01T09:58:00Z\","
        "\"source\":{\"component\":\"kubelet\"}}",
        "[\"2m\",\"Warning\",\"Down\",\"node/n1\",\"\",\"kubelet\",\"gone\",\"60m\",4,\"e1\"]");
    row("v1", "Event",
        "{\"metadata\":{\"name\":\"e2\"},\"involvedObject\":{\"kind\":\"Pod\"},"
        "\"eventTime\":\"2024-05-01T09:59:30.123456Z\",\"series\":{\"count\":7,"
        "\"lastObservedTime\":\"2024-05-01T09:59:50.000000Z\"},\"reportingComponent\":\"sched\","
        "\"reportingInstance\":\"sched-1\"}",
        "[\"10s\",\"\",\"\",\"pod\",\"\",\"sched, sched-1\",\"\",\"29s\",7,\"e2\"]");
    {
        cJSON *objs[1] = {J("{\"metadata\":{\"name\":\"x.example.com\","
                            "\"creationTimestamp\":\"2024-05-01T09:00:00Z\"}}")};
        t = table_build_default((const cJSON *const *)objs, 1, "5", NULL, NOW, TABLE_INCLUDE_NONE);
        assert_json_eq(cJSON_GetObjectItem(t, "columnDefinitions"),
                       "[" NAME_COL "," COL("Created At", "date", "", DESC_AGE, 0) "]");
        assert_cells(t, "[\"x.example.com\",\"2024-05-01T09:00:00Z\"]");
        cJSON_Delete(t);
        cJSON_Delete(objs[0]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_human_duration),
        cmocka_unit_test(test_jsonpath),
        cmocka_unit_test(test_pod_gated_whole_table),
        cmocka_unit_test(test_pod_running),
        cmocka_unit_test(test_pod_crashloop),
        cmocka_unit_test(test_pod_terminating),
        cmocka_unit_test(test_pod_init_containers),
        cmocka_unit_test(test_pod_completed),
        cmocka_unit_test(test_pod_sparse),
        cmocka_unit_test(test_node_table),
        cmocka_unit_test(test_reservation_table),
        cmocka_unit_test(test_crd_cell_types),
        cmocka_unit_test(test_nodeslo_table),
        cmocka_unit_test(test_generic_table),
        cmocka_unit_test(test_more_core_tables),
        cmocka_unit_test(test_core_tables),
        cmocka_unit_test(test_rbac_tables),
        cmocka_unit_test(test_include_object),
        cmocka_unit_test(test_list_metadata),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
