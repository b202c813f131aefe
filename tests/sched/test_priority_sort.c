/*
 * Tests for the PrioritySort plugin (reference scheduler.md 5.8): less(a, b) is
 * p1 > p2 || (p1 == p2 && t1 < t2) over spec.priority (absent = 0) and the queue timestamps, so
 * a higher priority wins regardless of time and equal priorities go first come, first served.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"
#include "sched/schedtest.h"

static struct sched_pod *pod_with_priority(int prio, bool set)
{
    char json[160];

    if (set)
        (void)snprintf(json, sizeof(json),
                       "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"priority\":%d}}", prio);
    else
        (void)snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"p\"},\"spec\":{}}");
    return P(json);
}

static void test_less(void **unused)
{
    static const struct {
        double ta, tb;
        int pa, pb;
        bool seta, setb, want;
    } cases[] = {
        {5.0, 1.0, 10, 1, true, true, true},   /* higher priority first, though later */
        {1.0, 5.0, 1, 10, true, true, false},  /* lower priority after, though earlier */
        {1.0, 2.0, 5, 5, true, true, true},    /* same priority: earlier first */
        {2.0, 1.0, 5, 5, true, true, false},   /* same priority: later after */
        {1.0, 1.0, 5, 5, true, true, false},   /* equal: not less (strict order) */
        {1.0, 2.0, 0, 0, false, true, true},   /* absent priority is 0 */
        {1.0, 9.0, 0, 1, false, true, false},  /* absent (0) below 1 */
        {1.0, 9.0, -5, 0, true, false, false}, /* negative below absent */
        {3.0, 1.0, 0, -5, false, true, true},  /* absent above negative */
        {9.0, 1.0, 2000000000, 1000, true, true, true},
    };

    (void)unused;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct sched_pod *a = pod_with_priority(cases[i].pa, cases[i].seta);
        struct sched_pod *b = pod_with_priority(cases[i].pb, cases[i].setb);
        bool got = sched_plugin_priority_sort.less(NULL, a, cases[i].ta, b, cases[i].tb);

        if (got != cases[i].want)
            fail_msg("case %zu: got %d", i, (int)got);
        sched_pod_unref(a);
        sched_pod_unref(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_less),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
