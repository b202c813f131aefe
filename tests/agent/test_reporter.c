/*
 * Tests for agent/report/reporter against the manager's real NodeMetric API served in-process
 * (plain HTTP, no authentication: what is tested is the agent's loop): a manager that is not
 * leading yet (503) is retried with a short backoff and the report lands as soon as it leads,
 * reporter_now() sends at once, nothing is sent while there is nothing to report, and a report
 * the manager refuses for good (413) is dropped, not retried.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agent/report/reporter.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "http/server.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/kubetest.h"
#include "manager/nodemetric/nodemetric.h"
#include "testutil.h"

#define DEADLINE_S 60.0

struct env {
    struct nodemetric_server *nm;
    struct http_server *http;
    struct kube_client *c;
    struct reporter *rep;
    atomic_int builds;
    atomic_bool empty; /* build returns NULL */
    atomic_int pods;   /* podsMetric entries in the status (about 90 bytes each) */
};

static cJSON *build(void *ud, int64_t *ret_interval_ms)
{
    struct env *e = ud;
    int n = atomic_fetch_add(&e->builds, 1) + 1, pods = atomic_load(&e->pods);
    struct strbuf sb = STRBUF_INIT;
    cJSON *st;

    *ret_interval_ms = 60000; /* only retries and reporter_now() send within a test */
    if (atomic_load(&e->empty))
        return NULL;
    strbuf_addf(&sb,
                "{\"nodeMetric\":{\"nodeUsage\":{\"resources\":{\"cpu\":\"%dm\"}}},"
                "\"podsMetric\":[",
                n);
    for (int i = 0; i < pods; i++)
        strbuf_addf(&sb,
                    "%s{\"namespace\":\"default\",\"name\":\"pod-%05d\",\"podUsage\":"
                    "{\"resources\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"}}}",
                    i ? "," : "", i);
    strbuf_addstr(&sb, "]}");
    st = J(sb.buf);
    strbuf_release(&sb);
    return st;
}

static int setup(void **state)
{
    struct env *e = xcalloc(1, sizeof(*e));
    struct kube_config *cfg = xcalloc(1, sizeof(*cfg));
    char url[64];

    assert_int_equal(
        nodemetric_server_new(&(struct nodemetric_opts){.max_object = 64 << 10}, &e->nm), 0);
    assert_int_equal(http_server_start(&(struct http_server_opts){.host = "127.0.0.1"},
                                       nodemetric_server_handle, e->nm, &e->http),
                     0);
    (void)snprintf(url, sizeof(url), "http://127.0.0.1:%u", http_server_port(e->http));
    cfg->server = xstrdup(url);
    cfg->timeout_ms = 10000;
    assert_int_equal(kube_client_new(cfg, &e->c), 0);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;

    reporter_free(e->rep);
    nodemetric_server_stop_watches(e->nm);
    http_server_stop(e->http);
    nodemetric_server_free(e->nm);
    kube_client_free(e->c);
    free(e);
    return 0;
}

static struct reporter_stats stats(struct env *e)
{
    struct reporter_stats s;
    reporter_stats(e->rep, &s);
    return s;
}

static bool failed_twice(void *arg)
{
    return stats(arg).failures >= 2;
}

static bool sent(void *arg)
{
    struct env *e = ((void **)arg)[0];
    return stats(e).sent >= *(uint64_t *)((void **)arg)[1];
}

static bool dropped(void *arg)
{
    return stats(arg).dropped >= 1;
}

/* The cpu the manager holds for n1, or "" (caller frees). */
static char *held_cpu(struct env *e)
{
    cJSON *o = NULL;
    const char *cpu;
    char *out;

    if (nodemetric_server_get(e->nm, "n1", &o) < 0)
        return xstrdup("");
    cpu = cJSON_GetStringValue(cJSON_GetObjectItem(
        cJSON_GetObjectItem(
            cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "status"), "nodeMetric"),
                                "nodeUsage"),
            "resources"),
        "cpu"));
    out = xstrdup(cpu ? cpu : "");
    cJSON_Delete(o);
    return out;
}

static void test_retries_until_leading(void **state)
{
    struct env *e = *state;
    cJSON *spec = J("{\"metricCollectPolicy\":{\"reportIntervalSeconds\":60}}");
    uint64_t one = 1, two = 2;
    char *cpu;

    assert_int_equal(reporter_start(&(struct reporter_opts){.client = e->c,
                                                            .node = "n1",
                                                            .build = build,
                                                            .userdata = e,
                                                            .retry_initial_ms = 50,
                                                            .retry_max_ms = 200},
                                    &e->rep),
                     0);
    /* Not leading: 503, retried. */
    assert_true(kt_wait(failed_twice, e, DEADLINE_S));
    assert_int_equal(stats(e).sent, 0);
    assert_int_equal(stats(e).dropped, 0);
    /* Leading now: the same report lands at the next retry, without waiting an interval. */
    assert_int_equal(nodemetric_server_activate(e->nm, 1), 0);
    assert_int_equal(nodemetric_server_set_spec(e->nm, "n1", spec), 0);
    assert_true(kt_wait(sent, (void *[]){e, &one}, DEADLINE_S));
    cpu = held_cpu(e);
    assert_string_equal(cpu, "1m"); /* built once, sent after the retries */
    free(cpu);
    assert_int_equal(atomic_load(&e->builds), 1);
    /* reporter_now(): a fresh report at once. */
    reporter_now(e->rep);
    assert_true(kt_wait(sent, (void *[]){e, &two}, DEADLINE_S));
    cpu = held_cpu(e);
    assert_string_equal(cpu, "2m");
    free(cpu);
    assert_true(stats(e).last_ok_ms > 0);
    cJSON_Delete(spec);
}

static bool built_again(void *arg)
{
    return atomic_load(&((struct env *)arg)->builds) >= 2;
}

static void test_nothing_to_report_and_refused(void **state)
{
    struct env *e = *state;
    cJSON *spec = J("{}");

    assert_int_equal(nodemetric_server_activate(e->nm, 1), 0);
    assert_int_equal(nodemetric_server_set_spec(e->nm, "n1", spec), 0);
    atomic_store(&e->empty, true);
    assert_int_equal(reporter_start(&(struct reporter_opts){.client = e->c,
                                                            .node = "n1",
                                                            .build = build,
                                                            .userdata = e,
                                                            .retry_initial_ms = 50,
                                                            .retry_max_ms = 100},
                                    &e->rep),
                     0);
    /* Nothing to report: asked again soon, nothing sent. */
    assert_true(kt_wait(built_again, e, DEADLINE_S));
    assert_int_equal(stats(e).sent, 0);
    assert_int_equal(stats(e).failures, 0);
    /* Too large for the manager (413): dropped at once, not retried. */
    atomic_store(&e->pods, 1200); /* > 100 KiB */
    atomic_store(&e->empty, false);
    reporter_now(e->rep);
    assert_true(kt_wait(dropped, e, DEADLINE_S));
    assert_int_equal(stats(e).failures, 1);
    assert_int_equal(stats(e).sent, 0);
    cJSON_Delete(spec);
}

static void test_bad_options(void **state)
{
    struct env *e = *state;
    struct reporter *r = NULL;

    assert_int_equal(reporter_start(&(struct reporter_opts){.client = e->c, .node = "n1"}, &r),
                     -EINVAL);
    assert_int_equal(reporter_start(&(struct reporter_opts){.client = e->c, .build = build}, &r),
                     -EINVAL);
    assert_null(r);
    reporter_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_retries_until_leading, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nothing_to_report_and_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_options, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
