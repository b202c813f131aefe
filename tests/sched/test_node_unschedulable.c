/*
 * Tests for the NodeUnschedulable plugin (reference scheduler.md 5.3): a cordoned node rejects
 * a pod with UnschedulableAndUnresolvable "node(s) were unschedulable" unless one of the pod's
 * tolerations tolerates node.kubernetes.io/unschedulable:NoSchedule (core/v1 ToleratesTaint:
 * empty effect = any, empty key with Exists = any key, Equal compares the empty value).
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

#define CORDONED "{\"metadata\":{\"name\":\"n1\"},\"spec\":{\"unschedulable\":true}}"
#define OPEN     "{\"metadata\":{\"name\":\"n1\"},\"spec\":{}}"
#define KEY      "\"key\":\"node.kubernetes.io/unschedulable\""

static void test_filter(void **unused)
{
    static const struct {
        const char *node;
        const char *tolerations; /* JSON array */
        enum sched_code code;
    } cases[] = {
        {OPEN, "[]", SCHED_SUCCESS},
        {CORDONED, "[]", SCHED_UNRESOLVABLE},
        {CORDONED, "[{" KEY ",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]", SCHED_SUCCESS},
        {CORDONED, "[{" KEY ",\"operator\":\"Exists\"}]", SCHED_SUCCESS},
        {CORDONED, "[{\"operator\":\"Exists\"}]", SCHED_SUCCESS},
        {CORDONED, "[{" KEY ",\"effect\":\"NoSchedule\"}]", SCHED_SUCCESS}, /* Equal "" == "" */
        {CORDONED, "[{" KEY ",\"operator\":\"Equal\",\"value\":\"x\"}]", SCHED_UNRESOLVABLE},
        {CORDONED, "[{" KEY ",\"operator\":\"Exists\",\"effect\":\"NoExecute\"}]",
         SCHED_UNRESOLVABLE},
        {CORDONED, "[{\"key\":\"other\",\"operator\":\"Exists\"}]", SCHED_UNRESOLVABLE},
    };

    (void)unused;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char pj[512];
        struct sched_status st = {0};
        struct sched_node_info *ni = NI(cases[i].node, NULL);
        struct sched_pod *p;
        enum sched_code c;

        (void)snprintf(pj, sizeof(pj),
                       "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"tolerations\":%s}}",
                       cases[i].tolerations);
        p = P(pj);
        c = sched_plugin_node_unschedulable.filter(NULL, NULL, p, ni, &st);
        if (c != cases[i].code)
            fail_msg("case %zu: got %d %s", i, (int)c, MSG(&st));
        if (c != SCHED_SUCCESS)
            assert_string_equal(MSG(&st), "node(s) were unschedulable");
        else
            assert_int_equal(st.n, 0);
        sched_status_release(&st);
        sched_pod_unref(p);
        sched_node_info_free(ni);
    }
}

static void test_events(void **unused)
{
    const struct sched_event_reg *e = sched_plugin_node_unschedulable.events;

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
