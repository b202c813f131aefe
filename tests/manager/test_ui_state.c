/*
 * Tests for manager/ui/state, the dashboard's JSON: a Node's allocatable and a report's usage
 * land in the node's row (LS = system + non-BE pods, BE = koord-batch and koord-free pods),
 * totals follow every change, deltas carry only what changed, pending pods keep the
 * scheduler's reason and their class, only koordlet's QoS events are kept (newest first,
 * bounded), and the history is a bounded ring of totals. Expected figures are worked out by
 * hand from the inputs.
 */
#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "manager/ui/state.h"

#define GI 1073741824.0
#define MI 1048576.0

static cJSON *parse(const char *s)
{
    cJSON *j = cJSON_Parse(s);
    assert_non_null(j);
    return j;
}

static bool node(struct ui_state *st, const char *json)
{
    cJSON *j = parse(json);
    bool r = ui_state_node(st, j);
    cJSON_Delete(j);
    return r;
}

static bool report(struct ui_state *st, const char *name, const char *json)
{
    cJSON *j = parse(json);
    bool r = ui_state_report(st, name, j);
    cJSON_Delete(j);
    return r;
}

static bool pod(struct ui_state *st, const char *json)
{
    cJSON *j = parse(json);
    bool r = ui_state_pod(st, j);
    cJSON_Delete(j);
    return r;
}

static bool event(struct ui_state *st, const char *json)
{
    cJSON *j = parse(json);
    bool r = ui_state_event(st, j);
    cJSON_Delete(j);
    return r;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(o, k);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static const cJSON *row_of(const cJSON *rows, const char *name)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, rows)
    {
        if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r, "name")), name))
            return r;
    }
    return NULL;
}

static const char NODE_A[] =
    "{\"metadata\":{\"name\":\"node-a\"},\"status\":{\"allocatable\":{\"cpu\":\"8\","
    "\"memory\":\"16Gi\",\"kubernetes.io/batch-cpu\":\"2900\","
    "\"kubernetes.io/batch-memory\":\"7Gi\"}}}";
static const char NODE_B[] =
    "{\"metadata\":{\"name\":\"node-b\"},\"status\":{\"allocatable\":{\"cpu\":\"3500m\","
    "\"memory\":\"4Gi\"}}}";
/* system 500m/1Gi; prod 1000m/2Gi; no priority (LS) 250m/256Mi; batch 700m/512Mi; free 100m/0 */
static const char REPORT_A[] =
    "{\"status\":{\"updateTime\":\"2026-11-28T10:00:00Z\",\"nodeMetric\":{\"systemUsage\":"
    "{\"resources\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"}}},\"podsMetric\":["
    "{\"namespace\":\"d\",\"name\":\"ls\",\"priority\":\"koord-prod\",\"podUsage\":{\"resources\":"
    "{\"cpu\":\"1\",\"memory\":\"2Gi\"}}},"
    "{\"namespace\":\"d\",\"name\":\"plain\",\"podUsage\":{\"resources\":"
    "{\"cpu\":\"250m\",\"memory\":\"256Mi\"}}},"
    "{\"namespace\":\"d\",\"name\":\"be\",\"priority\":\"koord-batch\",\"podUsage\":{\"resources\":"
    "{\"cpu\":\"700m\",\"memory\":\"512Mi\"}}},"
    "{\"namespace\":\"d\",\"name\":\"free\",\"priority\":\"koord-free\",\"podUsage\":{"
    "\"resources\":"
    "{\"cpu\":\"100m\"}}}]}}";

static void test_nodes_and_totals(void **state)
{
    struct ui_state *st = ui_state_new(0);
    cJSON *snap, *rows, *t;
    const cJSON *a, *b;

    (void)state;
    assert_false(ui_state_has_capacity(st));
    assert_true(node(st, NODE_A));
    assert_true(ui_state_has_capacity(st));
    assert_false(node(st, NODE_A)); /* same allocatable: no change */
    assert_true(report(st, "node-a", REPORT_A));
    assert_false(report(st, "node-a", REPORT_A));
    /* A report before its Node: a row without allocatable, filled in later. */
    assert_true(report(st, "node-b",
                       "{\"status\":{\"nodeMetric\":{\"systemUsage\":{\"resources\":"
                       "{\"cpu\":\"300m\",\"memory\":\"100Mi\"}}}}}"));
    assert_true(node(st, NODE_B));
    assert_int_equal(ui_state_nodes(st), 2);

    snap = ui_state_snapshot(st);
    rows = cJSON_GetObjectItem(snap, "nodes");
    assert_int_equal(cJSON_GetArraySize(rows), 2);
    /* Sorted by name. */
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 0), "name")), "node-a");
    a = row_of(rows, "node-a");
    assert_true(num(a, "cpu") == 8000);
    assert_true(num(a, "memory") == 16 * GI);
    assert_true(num(a, "batchCpu") == 2900);
    assert_true(num(a, "batchMemory") == 7 * GI);
    assert_true(num(a, "lsCpu") == 500 + 1000 + 250);
    assert_true(num(a, "lsMemory") == 1 * GI + 2 * GI + 256 * MI);
    assert_true(num(a, "beCpu") == 700 + 100);
    assert_true(num(a, "beMemory") == 512 * MI);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(a, "reported")),
                        "2026-11-28T10:00:00Z");
    b = row_of(rows, "node-b");
    assert_true(num(b, "cpu") == 3500);
    assert_true(num(b, "batchCpu") == 0);
    assert_true(num(b, "lsCpu") == 300);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(b, "reported")));
    t = cJSON_GetObjectItem(snap, "totals");
    assert_true(num(t, "nodes") == 2);
    assert_true(num(t, "cpu") == 11500);
    assert_true(num(t, "memory") == 20 * GI);
    assert_true(num(t, "lsCpu") == 1750 + 300);
    assert_true(num(t, "beCpu") == 800);
    cJSON_Delete(snap);

    /* A new report replaces the old figures in the totals; a deleted node leaves them. */
    assert_true(report(st, "node-a",
                       "{\"status\":{\"nodeMetric\":{\"systemUsage\":{\"resources\":"
                       "{\"cpu\":\"1\"}}}}}"));
    assert_true(ui_state_node_delete(st, "node-b"));
    assert_false(ui_state_node_delete(st, "node-b"));
    snap = ui_state_snapshot(st);
    t = cJSON_GetObjectItem(snap, "totals");
    assert_true(num(t, "nodes") == 1);
    assert_true(num(t, "cpu") == 8000);
    assert_true(num(t, "lsCpu") == 1000);
    assert_true(num(t, "beCpu") == 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(snap, "nodes")), 1);
    cJSON_Delete(snap);
    /* Bad input changes nothing and does not crash: no name, not an object. */
    assert_false(node(st, "{\"metadata\":{}}"));
    assert_false(node(st, "[]"));
    assert_false(ui_state_report(st, "", NULL));
    ui_state_free(st);
}

static void test_deltas(void **state)
{
    struct ui_state *st = ui_state_new(0);
    cJSON *d;

    (void)state;
    assert_null(ui_state_delta(st));
    assert_true(node(st, NODE_A));
    assert_true(node(st, NODE_B));
    d = ui_state_delta(st);
    assert_non_null(d);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(d, "nodes")), 2);
    assert_true(num(cJSON_GetObjectItem(d, "totals"), "nodes") == 2);
    assert_null(cJSON_GetObjectItem(d, "pending"));
    cJSON_Delete(d);
    assert_false(ui_state_changed(st));
    assert_null(ui_state_delta(st));

    /* One node reports: the delta holds that row only. */
    assert_true(report(st, "node-b", REPORT_A));
    d = ui_state_delta(st);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(d, "nodes")), 1);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(
                            cJSON_GetArrayItem(cJSON_GetObjectItem(d, "nodes"), 0), "name")),
                        "node-b");
    assert_true(num(cJSON_GetObjectItem(d, "totals"), "lsCpu") == 1750);
    assert_null(cJSON_GetObjectItem(d, "removed"));
    cJSON_Delete(d);

    /* Changed, then removed within one delta: only the removal. */
    assert_true(report(st, "node-a", REPORT_A));
    assert_true(ui_state_node_delete(st, "node-a"));
    d = ui_state_delta(st);
    assert_null(cJSON_GetObjectItem(d, "nodes"));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(d, "removed")), 1);
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "removed"), 0)->valuestring,
                        "node-a");
    cJSON_Delete(d);
    ui_state_free(st);
}

static void test_pending(void **state)
{
    struct ui_state *st = ui_state_new(0);
    cJSON *snap, *p, *d;
    const cJSON *first;

    (void)state;
    /* Requests, no labels: Burstable, so LS. The scheduler's condition gives the reason. */
    assert_true(pod(st, "{\"metadata\":{\"namespace\":\"default\",\"name\":\"big\","
                        "\"creationTimestamp\":\"2026-01-01T00:00:02Z\"},\"spec\":{\"containers\":"
                        "[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"100\"}}}]},"
                        "\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":"
                        "\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\","
                        "\"message\":\"0/1 nodes are available: 1 Insufficient cpu.\"}]}}"));
    /* BE by the QoS label; by the koord-batch priority band. Not yet tried: no reason. */
    assert_true(pod(st, "{\"metadata\":{\"namespace\":\"b\",\"name\":\"be1\",\"labels\":"
                        "{\"koordinator.sh/qosClass\":\"BE\"},\"creationTimestamp\":"
                        "\"2026-01-01T00:00:01Z\"},\"spec\":{\"containers\":[{\"name\":\"c\","
                        "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}"));
    assert_true(pod(st, "{\"metadata\":{\"namespace\":\"b\",\"name\":\"be2\","
                        "\"creationTimestamp\":\"2026-01-01T00:00:03Z\"},\"spec\":{\"priority\":"
                        "5500,\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
                        "{\"cpu\":\"1\"}}}]}}"));
    /* Bound, finished, or being deleted: not pending. */
    assert_false(pod(st, "{\"metadata\":{\"namespace\":\"d\",\"name\":\"bound\"},\"spec\":"
                         "{\"nodeName\":\"node-a\"},\"status\":{\"phase\":\"Pending\"}}"));
    assert_false(pod(st, "{\"metadata\":{\"namespace\":\"d\",\"name\":\"done\"},\"status\":"
                         "{\"phase\":\"Succeeded\"}}"));
    assert_false(pod(st, "{\"metadata\":{\"namespace\":\"d\",\"name\":\"going\","
                         "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"}}"));
    snap = ui_state_snapshot(st);
    p = cJSON_GetObjectItem(snap, "pending");
    assert_true(num(p, "LS") == 1);
    assert_true(num(p, "BE") == 2);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(p, "pods")), 3);
    /* Oldest first. */
    first = cJSON_GetArrayItem(cJSON_GetObjectItem(p, "pods"), 0);
    assert_string_equal(cJSON_GetObjectItem(first, "name")->valuestring, "be1");
    assert_string_equal(cJSON_GetObjectItem(first, "class")->valuestring, "BE");
    assert_string_equal(cJSON_GetObjectItem(first, "reason")->valuestring, "");
    first = cJSON_GetArrayItem(cJSON_GetObjectItem(p, "pods"), 1);
    assert_string_equal(cJSON_GetObjectItem(first, "name")->valuestring, "big");
    assert_string_equal(cJSON_GetObjectItem(first, "class")->valuestring, "LS");
    assert_string_equal(cJSON_GetObjectItem(first, "reason")->valuestring, "Unschedulable");
    assert_string_equal(cJSON_GetObjectItem(first, "message")->valuestring,
                        "0/1 nodes are available: 1 Insufficient cpu.");
    cJSON_Delete(snap);
    cJSON_Delete(ui_state_delta(st));

    /* Bound now: it leaves the list, and the delta says so. */
    assert_true(pod(st, "{\"metadata\":{\"namespace\":\"default\",\"name\":\"big\"},\"spec\":"
                        "{\"nodeName\":\"node-a\"},\"status\":{\"phase\":\"Running\"}}"));
    assert_true(ui_state_pod_delete(st, "b/be1"));
    assert_false(ui_state_pod_delete(st, "b/be1"));
    d = ui_state_delta(st);
    p = cJSON_GetObjectItem(d, "pending");
    assert_non_null(p);
    assert_true(num(p, "LS") == 0);
    assert_true(num(p, "BE") == 1);
    cJSON_Delete(d);
    ui_state_free(st);
}

static void test_events(void **state)
{
    struct ui_state *st = ui_state_new(0);
    char json[512];
    cJSON *snap, *ev, *d;

    (void)state;
    assert_true(event(st, "{\"reason\":\"evictPodSuccess\",\"message\":\"evict Pod:be-1\","
                          "\"source\":{\"component\":\"koordlet-qosManager\"},\"involvedObject\":"
                          "{\"kind\":\"Pod\",\"namespace\":\"d\",\"name\":\"be-1\"},"
                          "\"lastTimestamp\":\"2026-01-01T00:00:00Z\"}"));
    assert_true(event(st, "{\"reason\":\"BECPUSuppress\",\"message\":\"suppressed to 2 cores\","
                          "\"source\":{\"component\":\"koordlet-qosManager\"},\"involvedObject\":"
                          "{\"kind\":\"Node\",\"name\":\"node-a\"},\"eventTime\":"
                          "\"2026-01-01T00:00:05.000000Z\"}"));
    /* Another source, or another reason: not ours to show. */
    assert_false(event(st, "{\"reason\":\"evictPodSuccess\",\"source\":{\"component\":\"x\"}}"));
    assert_false(event(st, "{\"reason\":\"evictPodFail\",\"source\":{\"component\":"
                           "\"koordlet-qosManager\"}}"));
    snap = ui_state_snapshot(st);
    ev = cJSON_GetObjectItem(snap, "events");
    assert_int_equal(cJSON_GetArraySize(ev), 2);
    /* Newest first. */
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(ev, 0), "kind")->valuestring,
                        "suppression");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(ev, 0), "object")->valuestring,
                        "node-a");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(ev, 0), "time")->valuestring,
                        "2026-01-01T00:00:05.000000Z");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(ev, 1), "object")->valuestring,
                        "d/be-1");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(ev, 1), "kind")->valuestring,
                        "eviction");
    cJSON_Delete(snap);
    cJSON_Delete(ui_state_delta(st));

    /* Bounded: of 105 more, the newest 100 are kept; the delta carries the new ones. */
    for (int i = 0; i < 105; i++) {
        snprintf(json, sizeof(json),
                 "{\"reason\":\"evictPodSuccess\",\"source\":{\"component\":"
                 "\"koordlet-qosManager\"},\"involvedObject\":{\"namespace\":\"d\",\"name\":"
                 "\"p%d\"}}",
                 i);
        assert_true(event(st, json));
    }
    snap = ui_state_snapshot(st);
    ev = cJSON_GetObjectItem(snap, "events");
    assert_int_equal(cJSON_GetArraySize(ev), UI_STATE_MAX_EVENTS);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(ev, 0), "object")->valuestring,
                        "d/p104");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(ev, 99), "object")->valuestring,
                        "d/p5");
    cJSON_Delete(snap);
    d = ui_state_delta(st);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(d, "events")), UI_STATE_MAX_EVENTS);
    cJSON_Delete(d);
    ui_state_free(st);
}

static void test_history(void **state)
{
    struct ui_state *st = ui_state_new(3);
    cJSON *snap, *h, *d;

    (void)state;
    assert_true(node(st, NODE_B));
    cJSON_Delete(ui_state_delta(st));
    for (int i = 1; i <= 5; i++) {
        char r[200];
        snprintf(
            r, sizeof(r),
            "{\"status\":{\"nodeMetric\":{\"systemUsage\":{\"resources\":{\"cpu\":\"%dm\"}}}}}",
            i * 100);
        assert_true(report(st, "node-b", r));
        ui_state_point(st, 1000000 + i * 10000);
    }
    snap = ui_state_snapshot(st);
    h = cJSON_GetObjectItem(snap, "history");
    /* The last three points, oldest first; t in Unix seconds. */
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(h, "t")), 3);
    assert_true(cJSON_GetArrayItem(cJSON_GetObjectItem(h, "t"), 0)->valuedouble == 1030);
    assert_true(cJSON_GetArrayItem(cJSON_GetObjectItem(h, "t"), 2)->valuedouble == 1050);
    assert_true(cJSON_GetArrayItem(cJSON_GetObjectItem(h, "lsCpu"), 0)->valuedouble == 300);
    assert_true(cJSON_GetArrayItem(cJSON_GetObjectItem(h, "lsCpu"), 2)->valuedouble == 500);
    assert_true(cJSON_GetArrayItem(cJSON_GetObjectItem(h, "cpu"), 1)->valuedouble == 3500);
    cJSON_Delete(snap);
    /* The delta carries the points appended since the last one (bounded by the ring). */
    d = ui_state_delta(st);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(d, "point"), "t")),
                     3);
    cJSON_Delete(d);
    ui_state_point(st, 2000000);
    d = ui_state_delta(st);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(d, "point"), "t")),
                     1);
    assert_true(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(d, "point"), "t"), 0)
                    ->valuedouble == 2000);
    assert_null(cJSON_GetObjectItem(d, "nodes"));
    cJSON_Delete(d);
    ui_state_free(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nodes_and_totals), cmocka_unit_test(test_deltas),
        cmocka_unit_test(test_pending),          cmocka_unit_test(test_events),
        cmocka_unit_test(test_history),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
