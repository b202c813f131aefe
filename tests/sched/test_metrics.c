/*
 * Tests for sched/metrics.c: series are found again by name and labels however long the
 * labels are (the key is built on the stack when it fits, on the heap when not), unknown
 * metric names are ignored, and the text format renders counters, gauges and histograms with
 * kube-scheduler's names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "sched/metrics.h"

static void test_counters_and_gauges(void **state)
{
    struct sched_metrics *m = sched_metrics_new();
    struct strbuf out = STRBUF_INIT;

    (void)state;
    sched_metrics_add(m, "scheduler_schedule_attempts_total", "profile=\"p\",result=\"scheduled\"",
                      1);
    sched_metrics_add(m, "scheduler_schedule_attempts_total", "profile=\"p\",result=\"scheduled\"",
                      2);
    sched_metrics_add(m, "scheduler_schedule_attempts_total", "profile=\"p\",result=\"error\"", 1);
    sched_metrics_set(m, "scheduler_pending_pods", "queue=\"active\"", 5);
    sched_metrics_set(m, "scheduler_pending_pods", "queue=\"active\"", 7);
    sched_metrics_add(m, "scheduler_no_such_metric", "", 1);
    sched_metrics_add(m, "scheduler_preemption_attempts_total", "", 1);
    sched_metrics_render(m, &out);
    assert_non_null(strstr(out.buf, "# TYPE scheduler_schedule_attempts_total counter\n"));
    assert_non_null(strstr(
        out.buf, "\nscheduler_schedule_attempts_total{profile=\"p\",result=\"scheduled\"} 3\n"));
    assert_non_null(
        strstr(out.buf, "\nscheduler_schedule_attempts_total{profile=\"p\",result=\"error\"} 1\n"));
    assert_non_null(strstr(out.buf, "\nscheduler_pending_pods{queue=\"active\"} 7\n"));
    assert_non_null(strstr(out.buf, "\nscheduler_preemption_attempts_total 1\n"));
    assert_null(strstr(out.buf, "scheduler_no_such_metric"));
    strbuf_release(&out);
    sched_metrics_free(m);
}

/* Labels longer than the stack key: the same series every time, distinct from a label set
 * that differs only past the stack buffer's length. */
static void test_long_labels(void **state)
{
    struct sched_metrics *m = sched_metrics_new();
    struct strbuf a = STRBUF_INIT, b = STRBUF_INIT, out = STRBUF_INIT, want = STRBUF_INIT;

    (void)state;
    strbuf_addstr(&a, "profile=\"");
    for (int i = 0; i < 500; i++)
        strbuf_addch(&a, 'x');
    strbuf_addstr(&b, a.buf);
    strbuf_addstr(&a, "a\",result=\"scheduled\"");
    strbuf_addstr(&b, "b\",result=\"scheduled\"");
    sched_metrics_add(m, "scheduler_schedule_attempts_total", a.buf, 1);
    sched_metrics_add(m, "scheduler_schedule_attempts_total", a.buf, 1);
    sched_metrics_add(m, "scheduler_schedule_attempts_total", b.buf, 5);
    sched_metrics_render(m, &out);
    strbuf_addf(&want, "\nscheduler_schedule_attempts_total{%s} 2\n", a.buf);
    assert_non_null(strstr(out.buf, want.buf));
    strbuf_reset(&want);
    strbuf_addf(&want, "\nscheduler_schedule_attempts_total{%s} 5\n", b.buf);
    assert_non_null(strstr(out.buf, want.buf));
    strbuf_release(&a);
    strbuf_release(&b);
    strbuf_release(&out);
    strbuf_release(&want);
    sched_metrics_free(m);
}

/* scheduler_scheduling_algorithm_duration_seconds: buckets 0.001 doubling (15 of them). */
static void test_histogram(void **state)
{
    struct sched_metrics *m = sched_metrics_new();
    struct strbuf out = STRBUF_INIT;

    (void)state;
    sched_metrics_observe(m, "scheduler_scheduling_algorithm_duration_seconds", "", 0.0015);
    sched_metrics_observe(m, "scheduler_scheduling_algorithm_duration_seconds", "", 0.0005);
    sched_metrics_render(m, &out);
    assert_non_null(strstr(
        out.buf, "\nscheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.001\"} 1\n"));
    assert_non_null(strstr(
        out.buf, "\nscheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.002\"} 2\n"));
    assert_non_null(strstr(
        out.buf, "\nscheduler_scheduling_algorithm_duration_seconds_bucket{le=\"+Inf\"} 2\n"));
    assert_non_null(strstr(out.buf, "\nscheduler_scheduling_algorithm_duration_seconds_count 2\n"));
    strbuf_release(&out);
    sched_metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counters_and_gauges),
        cmocka_unit_test(test_long_labels),
        cmocka_unit_test(test_histogram),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
