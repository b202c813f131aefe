/*
 * Tests for the NodePorts plugin (reference scheduler.md 5.3): a wanted host port conflicts
 * with a used one when protocol and port are equal and either host IP is 0.0.0.0 or both are
 * equal (empty hostIP = 0.0.0.0, empty protocol = TCP); a conflict is Unschedulable "node(s)
 * didn't have free ports for the requested pod ports"; PreFilter Skips pods without host ports
 * (containerPort alone does not count).
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

#define NODE "{\"metadata\":{\"name\":\"n1\"}}"

/* A pod with one container whose ports list is ports (JSON array). */
static char *pod_json(const char *name, const char *ports, char *buf, size_t len)
{
    (void)snprintf(buf, len,
                   "{\"metadata\":{\"name\":\"%s\",\"uid\":\"u-%s\"},\"spec\":{\"containers\":"
                   "[{\"name\":\"c\",\"image\":\"i\",\"ports\":%s}]}}",
                   name, name, ports);
    return buf;
}

#define PORT(proto, ip, port)                                                                      \
    "{\"containerPort\":80,\"hostPort\":" #port ",\"protocol\":\"" proto "\",\"hostIP\":\"" ip "\"}"

static void test_filter(void **unused)
{
    static const struct {
        const char *used, *want; /* JSON arrays of ports */
        enum sched_code code;
    } cases[] = {
        {"[]", "[" PORT("TCP", "", 8080) "]", SCHED_SUCCESS},
        {"[" PORT("TCP", "127.0.0.1", 8080) "]", "[" PORT("TCP", "0.0.0.0", 8080) "]",
         SCHED_UNSCHEDULABLE},
        {"[" PORT("TCP", "0.0.0.0", 8080) "]", "[" PORT("TCP", "127.0.0.1", 8080) "]",
         SCHED_UNSCHEDULABLE},
        {"[" PORT("TCP", "127.0.0.2", 8080) "]", "[" PORT("TCP", "127.0.0.1", 8080) "]",
         SCHED_SUCCESS},
        {"[" PORT("TCP", "10.0.0.1", 8080) "]", "[" PORT("TCP", "10.0.0.1", 8080) "]",
         SCHED_UNSCHEDULABLE},
        {"[" PORT("TCP", "", 8080) "]", "[" PORT("UDP", "", 8080) "]", SCHED_SUCCESS},
        {"[" PORT("UDP", "", 8080) "]", "[" PORT("UDP", "", 8080) "]", SCHED_UNSCHEDULABLE},
        {"[" PORT("SCTP", "", 8080) "]", "[" PORT("UDP", "", 8080) "]", SCHED_SUCCESS},
        {"[" PORT("TCP", "", 8080) "]", "[" PORT("TCP", "", 8081) "]", SCHED_SUCCESS},
        /* Empty protocol = TCP, empty IP = 0.0.0.0. */
        {"[" PORT("TCP", "1.2.3.4", 8080) "]", "[{\"containerPort\":80,\"hostPort\":8080}]",
         SCHED_UNSCHEDULABLE},
        {"[{\"containerPort\":80,\"hostPort\":8080}]", "[" PORT("TCP", "1.2.3.4", 8080) "]",
         SCHED_UNSCHEDULABLE},
        {"[{\"containerPort\":80,\"hostPort\":8080}]", "[" PORT("UDP", "1.2.3.4", 8080) "]",
         SCHED_SUCCESS},
        /* Any one of several wanted ports conflicting is enough. */
        {"[" PORT("TCP", "", 9000) "]", "[" PORT("TCP", "", 8080) "," PORT("TCP", "", 9000) "]",
         SCHED_UNSCHEDULABLE},
        /* A used containerPort without hostPort holds nothing. */
        {"[{\"containerPort\":8080}]", "[" PORT("TCP", "", 8080) "]", SCHED_SUCCESS},
    };

    (void)unused;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char ub[512], wb[512];
        struct sched_node_info *ni = NI(NODE, pod_json("old", cases[i].used, ub, sizeof(ub)), NULL);
        struct sched_pod *p = P(pod_json("new", cases[i].want, wb, sizeof(wb)));
        struct sched_prefilter_result res = {0};
        struct sched_status st = {0};

        for (int with_pre = 1; with_pre >= 0; with_pre--) {
            struct sched_cycle *cs = sched_cycle_new();
            enum sched_code c;

            if (with_pre)
                assert_int_equal(sched_plugin_node_ports.pre_filter(NULL, cs, p, &res, &st),
                                 SCHED_SUCCESS);
            assert_false(res.restrict_nodes);
            c = sched_plugin_node_ports.filter(NULL, cs, p, ni, &st);
            if (c != cases[i].code)
                fail_msg("case %zu (prefilter %d): got %d %s", i, with_pre, (int)c, MSG(&st));
            if (c == SCHED_SUCCESS)
                assert_int_equal(st.n, 0);
            else
                assert_string_equal(MSG(&st),
                                    "node(s) didn't have free ports for the requested pod ports");
            sched_status_release(&st);
            sched_cycle_free(cs);
        }
        sched_pod_unref(p);
        sched_node_info_free(ni);
    }
}

static void test_pre_filter_skip(void **unused)
{
    static const char *const ports[] = {
        "[]",
        "[{\"containerPort\":80}]",
        "[{\"containerPort\":80,\"hostPort\":0}]",
    };

    (void)unused;
    for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]); i++) {
        char b[512];
        struct sched_pod *p = P(pod_json("p", ports[i], b, sizeof(b)));
        struct sched_cycle *cs = sched_cycle_new();
        struct sched_prefilter_result res = {0};
        struct sched_status st = {0};

        if (sched_plugin_node_ports.pre_filter(NULL, cs, p, &res, &st) != SCHED_SKIP)
            fail_msg("case %zu: not skipped", i);
        assert_false(res.restrict_nodes);
        assert_int_equal(st.n, 0);
        sched_cycle_free(cs);
        sched_pod_unref(p);
    }
}

static void test_events(void **unused)
{
    const struct sched_event_reg *e = sched_plugin_node_ports.events;

    (void)unused;
    assert_string_equal(e[0].resource, "Pod");
    assert_int_equal(e[0].actions, SCHED_ACT_DELETE);
    assert_string_equal(e[1].resource, "Node");
    assert_int_equal(e[1].actions, SCHED_ACT_ADD | SCHED_ACT_UPDATE);
    assert_null(e[2].resource);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter),
        cmocka_unit_test(test_pre_filter_skip),
        cmocka_unit_test(test_events),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
