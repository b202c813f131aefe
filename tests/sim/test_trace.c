/*
 * Tests for sim/trace: the openb readers keep what the replay needs (sizes in bytes, classes,
 * times, pods sorted by creation), and refuse every malformed line with "name:line:col: why",
 * leaving the trace untouched; synthetic fleets; the committed e2e trace reads.
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
#include "sim/trace.h"

#define NODE_HDR "sn,cpu_milli,memory_mib,gpu,model\n"
#define POD_HDR                                                                                    \
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"            \
    "deletion_time,scheduled_time\n"

static int nodes(struct sim_trace *t, const char *text, struct strbuf *err)
{
    return sim_trace_parse_nodes(t, "nodes.csv", text, strlen(text), err);
}

static int pods(struct sim_trace *t, const char *text, struct strbuf *err)
{
    return sim_trace_parse_pods(t, "pods.csv", text, strlen(text), err);
}

static void test_nodes(void **state)
{
    struct sim_trace t = {0};
    struct strbuf err = STRBUF_INIT;

    (void)state;
    assert_int_equal(nodes(&t,
                           NODE_HDR "openb-node-0000,32000,262144,0,\r\n"
                                    "openb-node-0001,96000,393216,8,V100M32\n",
                           &err),
                     0);
    assert_int_equal(t.nnodes, 2);
    assert_string_equal(t.nodes[0].name, "openb-node-0000");
    assert_int_equal(t.nodes[0].cpu_milli, 32000);
    assert_int_equal(t.nodes[0].memory, INT64_C(262144) * 1024 * 1024);
    assert_int_equal(t.nodes[1].cpu_milli, 96000);
    sim_trace_release(&t);
    assert_null(t.nodes);
    strbuf_release(&err);
}

static void test_pods(void **state)
{
    struct sim_trace t = {0};
    struct strbuf err = STRBUF_INIT;

    (void)state;
    assert_int_equal(pods(&t,
                          POD_HDR "p-late,1000,512,0,0,,BE,Failed,50,90,\n"
                                  "p-early,12000,16384,1,1000,V100M16,LS,Running,0,12537496,0\n"
                                  "p-guar,500,100,0,0,,Guaranteed,Pending,10,,\n"
                                  "p-burst,500,100,0,0,,Burstable,Succeeded,10,20,10\n",
                          &err),
                     0);
    assert_int_equal(t.npods, 4);
    /* sorted by creation time, then name */
    assert_string_equal(t.pods[0].name, "p-early");
    assert_string_equal(t.pods[1].name, "p-burst");
    assert_string_equal(t.pods[2].name, "p-guar");
    assert_string_equal(t.pods[3].name, "p-late");
    assert_int_equal(t.pods[0].cls, SIM_LS);
    assert_int_equal(t.pods[1].cls, SIM_LS);
    assert_int_equal(t.pods[2].cls, SIM_LS);
    assert_int_equal(t.pods[3].cls, SIM_BE);
    assert_int_equal(t.pods[0].cpu_milli, 12000);
    assert_int_equal(t.pods[0].memory, INT64_C(16384) * 1024 * 1024);
    assert_true(t.pods[3].create_s == 50 && t.pods[3].delete_s == 90);
    assert_true(t.pods[2].delete_s < 0); /* empty deletion_time: never */
    assert_true(t.span_s == 12537496);
    sim_trace_release(&t);
    strbuf_release(&err);
}

/* Each bad input: the error names the file, the line and the column, and t stays empty. */
static void test_errors(void **state)
{
    static const struct {
        bool node;
        const char *text;
        const char *want;
    } cases[] = {
        {true, "", "nodes.csv:1:1: empty file"},
        {true, "sn,cpu,mem\n", "nodes.csv:1:1: the header must be"},
        {true, NODE_HDR, "nodes.csv:1:1: no nodes after the header"},
        {true, NODE_HDR "n1,32000,abc,0,\n", "nodes.csv:2:10: memory_mib must be a whole number"},
        {true, NODE_HDR "n1,32000,1024,0\n", "nodes.csv:2:16: 4 columns, want 5"},
        {true, NODE_HDR "n1,32000,1024,0,,x\n", "nodes.csv:2:18: more than 5 columns"},
        {true, NODE_HDR "n1,-5,1024,0,\n", "nodes.csv:2:4: cpu_milli must be a whole number"},
        {true, NODE_HDR "n1,0,1024,0,\n", "nodes.csv:2:4: cpu_milli must be positive"},
        {true, NODE_HDR "N_1,1,1024,0,\n", "nodes.csv:2:1: sn must be lower-case"},
        {true, NODE_HDR "ok,1,1,0,\n,1,1,0,\n", "nodes.csv:3:1: sn must be 1 to 253"},
        {false, POD_HDR "p,1,1,0,0,,XX,Running,0,1,0\n",
         "pods.csv:2:12: qos must be LS, BE, Burstable or Guaranteed, not \"XX\""},
        {false, POD_HDR "p,1,1,0,0,,LS,Lost,0,1,0\n", "pods.csv:2:15: pod_phase must be"},
        {false, POD_HDR "p,1,1,0,0,,LS,Running,5,4,0\n",
         "pods.csv:2:25: deletion_time is before creation_time"},
        {false, POD_HDR "p,0,0,0,0,,LS,Running,5,6,0\n",
         "pods.csv:2:3: the pod requests neither cpu nor memory"},
        {false, POD_HDR "p,1,1,0,0,,LS,Running,,6,0\n", "pods.csv:2:23: creation_time is empty"},
        {false, POD_HDR "p,1,1,0,0,,LS,Running,1.5,6,0\n",
         "pods.csv:2:23: creation_time must be a whole number"},
        {false, POD_HDR "p,1,1,0,0,,LS,Running,1,6,0\np,1,1,0,0,,BE,Running,2,6,0\n",
         "pods.csv: pod \"p\" appears twice"},
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct sim_trace t = {0};
        struct strbuf err = STRBUF_INIT;
        int r = cases[i].node ? nodes(&t, cases[i].text, &err) : pods(&t, cases[i].text, &err);

        if (r != -EINVAL || strncmp(err.buf, cases[i].want, strlen(cases[i].want)))
            fail_msg("case %zu: r=%d err=\"%s\", want \"%s\"", i, r, err.buf, cases[i].want);
        assert_null(t.nodes);
        assert_null(t.pods);
        assert_int_equal(t.npods + t.nnodes, 0);
        strbuf_release(&err);
    }
}

static void test_synthetic(void **state)
{
    struct sim_trace t = {0};
    struct strbuf err = STRBUF_INIT;

    (void)state;
    assert_int_equal(sim_trace_synthetic_nodes(&t, 0, 32000, 1, &err), -EINVAL);
    assert_int_equal(sim_trace_synthetic_nodes(&t, 3, 0, 1, &err), -EINVAL);
    assert_int_equal(sim_trace_synthetic_nodes(&t, 3, 32000, INT64_C(256) << 30, &err), 0);
    assert_int_equal(t.nnodes, 3);
    assert_string_equal(t.nodes[2].name, "sim-node-00002");
    assert_int_equal(t.nodes[2].memory, INT64_C(256) << 30);
    sim_trace_release(&t);
    strbuf_release(&err);
}

/* The trace tests/e2e/test_sim.sh replays reads, with the shape that test relies on. */
static void test_e2e_trace(void **state)
{
    struct sim_trace t = {0};
    struct strbuf err = STRBUF_INIT;
    size_t ls = 0;

    (void)state;
    assert_int_equal(sim_trace_read_nodes(&t, KOORD_SOURCE_DIR "/tests/sim/data/nodes.csv", &err),
                     0);
    assert_int_equal(sim_trace_read_pods(&t, KOORD_SOURCE_DIR "/tests/sim/data/pods.csv", &err), 0);
    assert_int_equal(t.nnodes, 20);
    assert_int_equal(t.npods, 200);
    for (size_t i = 0; i < t.npods; i++)
        ls += t.pods[i].cls == SIM_LS;
    assert_int_equal(ls, 100);
    assert_true(t.span_s == 2800);
    sim_trace_release(&t);
    assert_int_equal(sim_trace_read_pods(&t, "/nonexistent/pods.csv", &err), -ENOENT);
    assert_non_null(strstr(err.buf, "/nonexistent/pods.csv"));
    strbuf_release(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nodes),     cmocka_unit_test(test_pods),
        cmocka_unit_test(test_errors),    cmocka_unit_test(test_synthetic),
        cmocka_unit_test(test_e2e_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
