/*
 * Tests for the SchedulingGates plugin (reference scheduler.md 3.6): a pod with gates is
 * UnschedulableAndUnresolvable at PreEnqueue with "waiting for scheduling gates: [g1 g2]" (the
 * names in spec order, as Go prints a []string), one without passes, and the plugin registers
 * no cluster events (an empty list, not "every event").
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

static void test_pre_enqueue(void **unused)
{
    static const struct {
        const char *pod;
        enum sched_code code;
        const char *msg;
    } cases[] = {
        {"{\"metadata\":{\"name\":\"p\"},\"spec\":{}}", SCHED_SUCCESS, ""},
        {"{\"metadata\":{\"name\":\"p\"},\"spec\":{\"schedulingGates\":[]}}", SCHED_SUCCESS, ""},
        {"{\"metadata\":{\"name\":\"p\"},\"spec\":{\"schedulingGates\":[{\"name\":\"g1\"}]}}",
         SCHED_UNRESOLVABLE, "waiting for scheduling gates: [g1]"},
        {"{\"metadata\":{\"name\":\"p\"},\"spec\":{\"schedulingGates\":"
         "[{\"name\":\"example.com/quota\"},{\"name\":\"g2\"}]}}",
         SCHED_UNRESOLVABLE, "waiting for scheduling gates: [example.com/quota g2]"},
    };

    (void)unused;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct sched_pod *p = P(cases[i].pod);
        struct sched_status st = {0};
        enum sched_code c = sched_plugin_scheduling_gates.pre_enqueue(NULL, p, &st);

        if (c != cases[i].code || strcmp(MSG(&st), cases[i].msg))
            fail_msg("case %zu: got %d %s", i, (int)c, MSG(&st));
        sched_status_release(&st);
        sched_pod_unref(p);
    }
}

static void test_no_events(void **unused)
{
    (void)unused;
    assert_non_null(sched_plugin_scheduling_gates.events);
    assert_null(sched_plugin_scheduling_gates.events[0].resource);
    assert_null(sched_plugin_scheduling_gates.filter);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pre_enqueue),
        cmocka_unit_test(test_no_events),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
