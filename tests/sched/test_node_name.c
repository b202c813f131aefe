/*
 * Tests for the NodeName plugin (reference scheduler.md 5.3): a pod with spec.nodeName fits
 * only the node of that name (else UnschedulableAndUnresolvable "node(s) didn't match the
 * requested node name"); a pod without one fits every node.
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

static void test_filter(void **unused)
{
    static const struct {
        const char *pod;
        enum sched_code code;
        const char *msg;
    } cases[] = {
        {"{\"metadata\":{\"name\":\"p\"},\"spec\":{}}", SCHED_SUCCESS, ""},
        {"{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":\"\"}}", SCHED_SUCCESS, ""},
        {"{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":\"n1\"}}", SCHED_SUCCESS, ""},
        {"{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":\"n2\"}}", SCHED_UNRESOLVABLE,
         "node(s) didn't match the requested node name"},
        {"{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":\"n10\"}}", SCHED_UNRESOLVABLE,
         "node(s) didn't match the requested node name"},
    };
    struct sched_node_info *ni = NI("{\"metadata\":{\"name\":\"n1\"}}", NULL);

    (void)unused;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct sched_pod *p = P(cases[i].pod);
        struct sched_status st = {0};
        enum sched_code c = sched_plugin_node_name.filter(NULL, NULL, p, ni, &st);

        if (c != cases[i].code || strcmp(MSG(&st), cases[i].msg))
            fail_msg("case %zu: got %d %s", i, (int)c, MSG(&st));
        sched_status_release(&st);
        sched_pod_unref(p);
    }
    sched_node_info_free(ni);
}

static void test_events(void **unused)
{
    const struct sched_event_reg *e = sched_plugin_node_name.events;

    (void)unused;
    assert_string_equal(e[0].resource, "Node");
    assert_int_equal(e[0].actions, SCHED_ACT_ADD | SCHED_ACT_UPDATE);
    assert_null(e[1].resource);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter),
        cmocka_unit_test(test_events),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
