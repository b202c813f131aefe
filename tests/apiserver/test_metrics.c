/*
 * Tests for apiserver/metrics: the request counter per code, the latency histogram (cumulative
 * buckets, WATCH left out), the open-watch gauge and label escaping, in the Prometheus text
 * format kube-apiserver's dashboards read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "apiserver/metrics.h"
#include "apiserver/reqinfo.h"
#include "base/strbuf.h"

#define LABELS_CM                                                                                  \
    "verb=\"CREATE\",group=\"\",version=\"v1\",resource=\"configmaps\",subresource=\"\","          \
    "scope=\"namespace\",component=\"apiserver\""

static void request(struct api_metrics *m, const char *method, const char *path, const char *watch,
                    int code, double seconds)
{
    struct api_reqinfo ri;

    assert_int_equal(api_reqinfo_parse(method, path, watch, NULL, &ri), 0);
    api_metrics_request(m, &ri, code, seconds);
    api_reqinfo_release(&ri);
}

static void expect_line(const struct strbuf *out, const char *line)
{
    const char *p = strstr(out->buf, line);

    if (!p || (p != out->buf && p[-1] != '\n') || p[strlen(line)] != '\n')
        fail_msg("missing line\n%s\nin\n%s", line, out->buf);
}

static void test_counters_and_histogram(void **state)
{
    struct api_metrics *m = api_metrics_new();
    struct strbuf out = STRBUF_INIT;
    (void)state;

    request(m, "POST", "/api/v1/namespaces/default/configmaps", NULL, 201, 0.003);
    request(m, "POST", "/api/v1/namespaces/default/configmaps", NULL, 201, 0.3);
    request(m, "POST", "/api/v1/namespaces/default/configmaps", NULL, 409, 0.03);
    request(m, "GET", "/api/v1/nodes/n1", NULL, 200, 0.001);
    request(m, "GET", "/api/v1/pods", "1", 200, 0.002);
    api_metrics_watch(m, 1);
    api_metrics_watch(m, 1);
    api_metrics_watch(m, -1);
    api_metrics_render(m, 42, &out);

    expect_line(&out, "apiserver_request_total{" LABELS_CM ",code=\"201\"} 2");
    expect_line(&out, "apiserver_request_total{" LABELS_CM ",code=\"409\"} 1");
    expect_line(&out, "apiserver_request_total{verb=\"GET\",group=\"\",version=\"v1\",resource="
                      "\"nodes\",subresource=\"\",scope=\"resource\",component=\"apiserver\","
                      "code=\"200\"} 1");
    expect_line(&out, "apiserver_request_total{verb=\"WATCH\",group=\"\",version=\"v1\","
                      "resource=\"pods\",subresource=\"\",scope=\"cluster\",component="
                      "\"apiserver\",code=\"200\"} 1");
    /* Cumulative buckets: 0.003 <= 0.005; 0.03 <= 0.05; 0.3 <= 0.4. */
    expect_line(&out, "apiserver_request_duration_seconds_bucket{" LABELS_CM ",le=\"0.005\"} 1");
    expect_line(&out, "apiserver_request_duration_seconds_bucket{" LABELS_CM ",le=\"0.025\"} 1");
    expect_line(&out, "apiserver_request_duration_seconds_bucket{" LABELS_CM ",le=\"0.05\"} 2");
    expect_line(&out, "apiserver_request_duration_seconds_bucket{" LABELS_CM ",le=\"0.4\"} 3");
    expect_line(&out, "apiserver_request_duration_seconds_bucket{" LABELS_CM ",le=\"+Inf\"} 3");
    expect_line(&out, "apiserver_request_duration_seconds_count{" LABELS_CM "} 3");
    expect_line(&out, "apiserver_request_duration_seconds_sum{" LABELS_CM "} 0.333");
    /* Watches are long-running: counted, not timed. */
    assert_null(strstr(out.buf, "apiserver_request_duration_seconds_count{verb=\"WATCH\""));
    expect_line(&out, "apiserver_longrunning_requests{verb=\"WATCH\",component=\"apiserver\"} 1");
    expect_line(&out, "koord_store_revision 42");
    strbuf_release(&out);
    api_metrics_free(m);
}

/* Label values come from request paths: quotes and backslashes are escaped. */
static void test_escaping(void **state)
{
    struct api_metrics *m = api_metrics_new();
    struct strbuf out = STRBUF_INIT;
    (void)state;

    request(m, "GET", "/apis/a\"b/v1/x\\y", NULL, 404, 0.001);
    api_metrics_render(m, 0, &out);
    assert_non_null(strstr(out.buf, "group=\"a\\\"b\""));
    assert_non_null(strstr(out.buf, "resource=\"x\\\\y\""));
    strbuf_release(&out);
    api_metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counters_and_histogram),
        cmocka_unit_test(test_escaping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
