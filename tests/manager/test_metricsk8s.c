/*
 * Tests for manager/metricsk8s: the NodeMetrics and PodMetrics built from a NodeMetric report
 * (metadata and labels of the Node / Pod, timestamp, window, quantities as metrics-server prints
 * them, the per-container split summing to the pod's usage), staleness, and the label and field
 * selectors of a list. Expected values are worked out by hand in the comments.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/strbuf.h"
#include "manager/metricsk8s/metricsk8s.h"

/* 2026-01-01T00:00:00Z */
#define T0 ((int64_t)1767225600)

static cJSON *parse(const char *s)
{
    cJSON *o = cJSON_Parse(s);

    assert_non_null(o);
    return o;
}

static const char *str_at(const cJSON *o, const char *a, const char *b, const char *c)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);

    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    if (c)
        v = cJSON_GetObjectItemCaseSensitive(v, c);
    return cJSON_GetStringValue(v);
}

/* A report taken at T0 with the given policy (may be "") and node/pod usage. */
static cJSON *report(const char *policy, const char *node_usage)
{
    char buf[1024];

    (void)snprintf(buf, sizeof(buf),
                   "{\"spec\":{\"metricCollectPolicy\":{%s}},\"status\":{\"updateTime\":"
                   "\"2026-01-01T00:00:00Z\",\"nodeMetric\":{\"nodeUsage\":{\"resources\":%s}},"
                   "\"podsMetric\":[]}}",
                   policy, node_usage);
    return parse(buf);
}

static void test_node(void **state)
{
    cJSON *top = report("", "{\"cpu\":\"1500m\",\"memory\":\"6442450944\"}");
    cJSON *node = parse("{\"metadata\":{\"name\":\"n1\",\"labels\":{\"zone\":\"east\"},"
                        "\"uid\":\"u\"},\"spec\":{}}");
    cJSON *m = metricsk8s_node_metrics(top, node, T0 + 10);

    (void)state;
    assert_non_null(m);
    assert_string_equal(str_at(m, "kind", NULL, NULL), "NodeMetrics");
    assert_string_equal(str_at(m, "apiVersion", NULL, NULL), "metrics.k8s.io/v1beta1");
    assert_string_equal(str_at(m, "metadata", "name", NULL), "n1");
    assert_null(str_at(m, "metadata", "namespace", NULL));
    assert_null(str_at(m, "metadata", "uid", NULL)); /* only what metrics-server sets */
    assert_string_equal(str_at(m, "metadata", "labels", "zone"), "east");
    /* creationTimestamp: the time of the request; timestamp: the report's */
    assert_string_equal(str_at(m, "metadata", "creationTimestamp", NULL), "2026-01-01T00:00:10Z");
    assert_string_equal(str_at(m, "timestamp", NULL, NULL), "2026-01-01T00:00:00Z");
    /* the agent's default aggregate window, 300 s */
    assert_string_equal(str_at(m, "window", NULL, NULL), "5m0s");
    /* canonical quantities: 6442450944 bytes = 6Gi */
    assert_string_equal(str_at(m, "usage", "cpu", NULL), "1500m");
    assert_string_equal(str_at(m, "usage", "memory", NULL), "6Gi");
    cJSON_Delete(m);
    cJSON_Delete(top);

    /* a sub-millicore cpu prints in nanocores as metrics-server's; a window of 90 s; 3 x 40 s
     * report intervals later the report is still served, one second more and it is stale */
    top = report("\"aggregateDurationSeconds\":90,\"reportIntervalSeconds\":40",
                 "{\"cpu\":\"0.123456789\",\"memory\":\"1000\"}");
    m = metricsk8s_node_metrics(top, node, T0 + 120);
    assert_non_null(m);
    assert_string_equal(str_at(m, "usage", "cpu", NULL), "123456789n");
    /* BinarySI below 1024 prints as DecimalSI, as resource.NewQuantity(1000, BinarySI) does */
    assert_string_equal(str_at(m, "usage", "memory", NULL), "1k");
    assert_string_equal(str_at(m, "window", NULL, NULL), "1m30s");
    cJSON_Delete(m);
    assert_null(metricsk8s_node_metrics(top, node, T0 + 121));
    cJSON_Delete(top);

    /* floors as the agent obeys them: window 60 s, report interval 30 s (stale after 90 s) */
    top = report("\"aggregateDurationSeconds\":5,\"reportIntervalSeconds\":1",
                 "{\"cpu\":\"1\",\"memory\":\"1Ki\"}");
    m = metricsk8s_node_metrics(top, node, T0 + 90);
    assert_non_null(m);
    assert_string_equal(str_at(m, "window", NULL, NULL), "1m0s");
    cJSON_Delete(m);
    assert_null(metricsk8s_node_metrics(top, node, T0 + 91));
    cJSON_Delete(top);

    /* no usable usage: an empty status, a missing memory, an unreadable or negative quantity */
    top = parse("{\"status\":{}}");
    assert_null(metricsk8s_node_metrics(top, node, T0));
    cJSON_Delete(top);
    top = report("", "{\"cpu\":\"1\"}");
    assert_null(metricsk8s_node_metrics(top, node, T0));
    cJSON_Delete(top);
    top = report("", "{\"cpu\":\"lots\",\"memory\":\"1Gi\"}");
    assert_null(metricsk8s_node_metrics(top, node, T0));
    cJSON_Delete(top);
    top = report("", "{\"cpu\":\"-1\",\"memory\":\"1Gi\"}");
    assert_null(metricsk8s_node_metrics(top, node, T0));
    cJSON_Delete(top);
    cJSON_Delete(node);
}

static void test_pod(void **state)
{
    cJSON *top = report("", "{\"cpu\":\"1\",\"memory\":\"1Gi\"}");
    cJSON *entry = parse("{\"namespace\":\"shop\",\"name\":\"db\",\"podUsage\":{\"resources\":"
                         "{\"cpu\":\"1\",\"memory\":\"1000\"}}}");
    /* requests 300m:100m:0 cpu (3/4, 1/4, 0) and none for memory (thirds) */
    cJSON *pod =
        parse("{\"metadata\":{\"name\":\"db\",\"namespace\":\"shop\",\"labels\":{\"app\":\"db\"}},"
              "\"spec\":{\"containers\":["
              "{\"name\":\"main\",\"resources\":{\"requests\":{\"cpu\":\"300m\"}}},"
              "{\"name\":\"sidecar\",\"resources\":{\"requests\":{\"cpu\":\"100m\"}}},"
              "{\"name\":\"log\"}]}}");
    cJSON *m = metricsk8s_pod_metrics(top, entry, pod, T0), *cs;

    (void)state;
    assert_non_null(m);
    assert_string_equal(str_at(m, "kind", NULL, NULL), "PodMetrics");
    assert_string_equal(str_at(m, "metadata", "namespace", NULL), "shop");
    assert_string_equal(str_at(m, "metadata", "name", NULL), "db");
    assert_string_equal(str_at(m, "metadata", "labels", "app"), "db");
    assert_null(cJSON_GetObjectItemCaseSensitive(m, "usage"));
    cs = cJSON_GetObjectItemCaseSensitive(m, "containers");
    assert_int_equal(cJSON_GetArraySize(cs), 3);
    assert_string_equal(str_at(cJSON_GetArrayItem(cs, 0), "name", NULL, NULL), "main");
    assert_string_equal(str_at(cJSON_GetArrayItem(cs, 0), "usage", "cpu", NULL), "750m");
    assert_string_equal(str_at(cJSON_GetArrayItem(cs, 1), "usage", "cpu", NULL), "250m");
    assert_string_equal(str_at(cJSON_GetArrayItem(cs, 2), "usage", "cpu", NULL), "0");
    /* 1000 bytes in thirds: 333, 333 and the rest, 334, so the sum is the pod's */
    assert_string_equal(str_at(cJSON_GetArrayItem(cs, 0), "usage", "memory", NULL), "333");
    assert_string_equal(str_at(cJSON_GetArrayItem(cs, 1), "usage", "memory", NULL), "333");
    assert_string_equal(str_at(cJSON_GetArrayItem(cs, 2), "usage", "memory", NULL), "334");
    cJSON_Delete(m);
    cJSON_Delete(pod);

    /* a single container has the pod's usage as reported */
    pod = parse("{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\"},"
                "\"spec\":{\"containers\":[{\"name\":\"nginx\"}]}}");
    m = metricsk8s_pod_metrics(top, entry, pod, T0);
    assert_non_null(m);
    cs = cJSON_GetObjectItemCaseSensitive(m, "containers");
    assert_int_equal(cJSON_GetArraySize(cs), 1);
    assert_string_equal(str_at(cJSON_GetArrayItem(cs, 0), "usage", "cpu", NULL), "1");
    assert_string_equal(str_at(cJSON_GetArrayItem(cs, 0), "usage", "memory", NULL), "1k");
    assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "metadata"),
                                                 "labels"));
    cJSON_Delete(m);
    /* stale report, no containers, no usage: nothing */
    assert_null(metricsk8s_pod_metrics(top, entry, pod, T0 + 181));
    cJSON_Delete(pod);
    pod = parse("{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\"},\"spec\":{}}");
    assert_null(metricsk8s_pod_metrics(top, entry, pod, T0));
    cJSON_Delete(entry);
    entry = parse("{\"namespace\":\"shop\",\"name\":\"db\"}");
    assert_null(metricsk8s_pod_metrics(top, entry, pod, T0));
    cJSON_Delete(entry);
    cJSON_Delete(pod);
    cJSON_Delete(top);
}

static bool sel_matches(const char *ls, const char *fs, bool pods, const char *obj)
{
    struct metricsk8s_selectors sel;
    struct strbuf err = STRBUF_INIT;
    cJSON *o = parse(obj);
    bool r;

    assert_int_equal(metricsk8s_selectors_parse(ls, fs, pods, &sel, &err), 0);
    r = metricsk8s_selected(&sel, o);
    metricsk8s_selectors_release(&sel);
    strbuf_release(&err);
    cJSON_Delete(o);
    return r;
}

static void expect_bad(const char *ls, const char *fs, bool pods, const char *msg)
{
    struct metricsk8s_selectors sel;
    struct strbuf err = STRBUF_INIT;

    assert_int_equal(metricsk8s_selectors_parse(ls, fs, pods, &sel, &err), -EINVAL);
    assert_string_equal(err.buf, msg);
    strbuf_release(&err);
}

static void test_selectors(void **state)
{
    const char *web = "{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\","
                      "\"labels\":{\"app\":\"web\",\"tier\":\"front\"}}}";

    (void)state;
    assert_true(sel_matches(NULL, NULL, true, web));
    assert_true(sel_matches("", "", true, web));
    assert_true(sel_matches("app=web", NULL, true, web));
    assert_true(sel_matches("app in (web,db),tier", NULL, true, web));
    assert_false(sel_matches("app=db", NULL, true, web));
    assert_false(sel_matches("!tier", NULL, true, web));
    assert_true(sel_matches(NULL, "metadata.name=web", true, web));
    assert_true(sel_matches(NULL, "metadata.name==web,metadata.namespace=shop", true, web));
    assert_false(sel_matches(NULL, "metadata.name!=web", true, web));
    assert_false(sel_matches(NULL, "metadata.namespace=other", true, web));
    assert_false(sel_matches("app=web", "metadata.name=db", true, web));
    /* an escaped comma is part of the value */
    assert_false(sel_matches(NULL, "metadata.name=web\\,x", true, web));
    /* no labels at all: only selectors that need none match */
    assert_true(sel_matches("app!=web", NULL, false, "{\"metadata\":{\"name\":\"n1\"}}"));
    assert_false(sel_matches("app=web", NULL, false, "{\"metadata\":{\"name\":\"n1\"}}"));

    expect_bad(NULL, "spec.nodeName=n1", true, "field label not supported: spec.nodeName");
    expect_bad(NULL, "metadata.namespace=x", false,
               "field label not supported: metadata.namespace");
    expect_bad(NULL, "metadata.name", true, "invalid field selector: \"metadata.name\"");
    expect_bad(NULL, "=x", false, "invalid field selector: \"=x\"");
    /* a bad field after a good label selector and a good field: nothing kept, and the caller's
     * release after the failure (what the list handler does) frees nothing twice */
    {
        struct metricsk8s_selectors sel;
        struct strbuf err = STRBUF_INIT;
        assert_int_equal(
            metricsk8s_selectors_parse("app=web", "metadata.name=x,spec.y=1", true, &sel, &err),
            -EINVAL);
        assert_string_equal(err.buf, "field label not supported: spec.y");
        assert_null(sel.labels);
        assert_null(sel.fields);
        metricsk8s_selectors_release(&sel);
        strbuf_release(&err);
    }
    {
        struct metricsk8s_selectors sel;
        struct strbuf err = STRBUF_INIT;
        assert_int_equal(metricsk8s_selectors_parse("app in (", NULL, true, &sel, &err), -EINVAL);
        assert_true(err.len > 0);
        strbuf_release(&err);
    }
}

static void test_path(void **state)
{
    (void)state;
    assert_true(metricsk8s_path("/apis/metrics.k8s.io/v1beta1"));
    assert_true(metricsk8s_path("/apis/metrics.k8s.io/v1beta1/nodes"));
    assert_false(metricsk8s_path("/apis/metrics.k8s.io/v1beta10"));
    assert_false(metricsk8s_path("/apis/metrics.koordinator.sh/v1alpha1/nodemetrics"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node),
        cmocka_unit_test(test_pod),
        cmocka_unit_test(test_selectors),
        cmocka_unit_test(test_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
