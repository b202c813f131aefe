/*
 * Tests for sim/inflate: the LS fill reaches its fraction of the fleet's CPU and no more than
 * one pod past it, repeats are named replicas; the BE stream offers the asked load (arrival
 * count and work within Poisson bounds worked out here from the inputs, not from the code),
 * with stretched run times, in trace order, and starts steady (the jobs running at time 0 hold
 * the load); the same seed gives the same workload; bad options (at the bounds of their
 * ranges, which `koord sim`'s flags share), traces that cannot be inflated and workloads past
 * the pod limit are refused with the trace untouched.
 */
#include <errno.h>
#include <math.h>
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
#include "sim/inflate.h"
#include "sim/trace.h"

#define NODE_HDR "sn,cpu_milli,memory_mib,gpu,model\n"
#define POD_HDR                                                                                    \
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"            \
    "deletion_time,scheduled_time\n"

/* Two nodes of 10 cores: a fleet of 20,000 m. */
static void load(struct sim_trace *t, const char *pods)
{
    static const char nodes[] = NODE_HDR "n0,10000,65536,0,\nn1,10000,65536,0,\n";
    struct strbuf err = STRBUF_INIT;

    assert_int_equal(sim_trace_parse_nodes(t, "nodes.csv", nodes, strlen(nodes), &err), 0);
    assert_int_equal(sim_trace_parse_pods(t, "pods.csv", pods, strlen(pods), &err), 0);
    strbuf_release(&err);
}

/* LS a (3000 m) and b (1000 m); BE x (2000 m for 100 s) and y (4000 m for 50 s). */
static const char trace[] = POD_HDR "ls-a,3000,1024,0,0,,LS,Running,5,900,5\n"
                                    "ls-b,1000,1024,0,0,,Guaranteed,Running,7,,7\n"
                                    "be-x,2000,1024,0,0,,BE,Running,10,110,10\n"
                                    "be-y,4000,1024,0,0,,BE,Failed,20,70,20\n";

static void test_ls_fill(void **state)
{
    struct sim_trace t = {0};
    struct sim_inflate_opts o;
    struct strbuf err = STRBUF_INIT;
    static const char *const want[] = {"ls-a", "ls-a-c1", "ls-a-c2", "ls-b", "ls-b-c1"};

    (void)state;
    load(&t, trace);
    sim_inflate_defaults(&o);
    o.ls_fill = 0.5; /* 10,000 m: a, b, a, b, a = 11,000 m, the last pod passing it */
    o.be_load = 0;
    o.span_s = 3600;
    assert_int_equal(sim_trace_inflate(&t, &o, &err), 0);
    assert_int_equal(t.npods, 5);
    for (size_t i = 0; i < t.npods; i++) {
        assert_string_equal(t.pods[i].name, want[i]); /* sorted by name at time 0 */
        assert_int_equal(t.pods[i].cls, SIM_LS);
        assert_true(t.pods[i].create_s == 0);
        assert_true(t.pods[i].delete_s < 0); /* services run to the end */
        assert_int_equal(t.pods[i].cpu_milli, i < 3 ? 3000 : 1000);
    }
    assert_true(t.span_s == 3600);
    assert_int_equal(t.nnodes, 2);
    sim_trace_release(&t);

    /* a fill of exactly the sum of whole pods stops there */
    load(&t, trace);
    o.ls_fill = 0.2; /* 4,000 m: a then b */
    assert_int_equal(sim_trace_inflate(&t, &o, &err), 0);
    assert_int_equal(t.npods, 2);
    sim_trace_release(&t);
    strbuf_release(&err);
}

static void test_be_stream(void **state)
{
    struct sim_trace t = {0}, t2 = {0};
    struct sim_inflate_opts o;
    struct strbuf err = STRBUF_INIT;
    double work = 0, last = 0, expect, sd;
    size_t stream = 0, at0 = 0;

    (void)state;
    load(&t, trace);
    sim_inflate_defaults(&o);
    o.ls_fill = 0;
    o.be_load = 0.5;  /* 10,000 m of BE work per second */
    o.be_stretch = 2; /* x: 2000 m x 200 s, y: 4000 m x 100 s: 400,000 m s each */
    o.span_s = 40000; /* 0.025 arrivals a second: 1,000 expected */
    o.seed = 7;
    assert_int_equal(sim_trace_inflate(&t, &o, &err), 0);
    for (size_t i = 0; i < t.npods; i++) {
        const struct sim_pod *p = &t.pods[i];
        double run = p->delete_s - p->create_s;
        assert_int_equal(p->cls, SIM_BE);
        assert_true(p->create_s >= last && p->create_s < 40000);
        last = p->create_s;
        if (p->create_s == 0) { /* running at time 0: part of a whole run left */
            at0++;
            assert_true(run > 0 && run <= (p->cpu_milli == 2000 ? 200 : 100));
            continue;
        }
        /* the stream, in trace order: x, y, x, y, ... */
        if (stream % 2 == 0)
            assert_true(p->cpu_milli == 2000 && fabs(run - 200) < 1e-6);
        else
            assert_true(p->cpu_milli == 4000 && fabs(run - 100) < 1e-6);
        assert_non_null(strstr(p->name, stream % 2 == 0 ? "be-x" : "be-y"));
        work += (double)p->cpu_milli * run;
        stream++;
    }
    /* Little's law: 0.025 a second x 150 s of mean run time */
    assert_int_equal(at0, 4);
    expect = 0.025 * 40000;
    sd = sqrt(expect);
    assert_true((double)stream > expect - 5 * sd && (double)stream < expect + 5 * sd);
    /* offered work: load x fleet x span = 4e8 m s, each job 4e5: the count's bounds again */
    assert_true(work > 4e8 * (1 - 5 / sqrt(expect)) && work < 4e8 * (1 + 5 / sqrt(expect)));

    /* the same seed: the same workload; another seed: other arrival times */
    load(&t2, trace);
    assert_int_equal(sim_trace_inflate(&t2, &o, &err), 0);
    assert_int_equal(t2.npods, t.npods);
    for (size_t i = 0; i < t.npods; i++) {
        assert_true(t2.pods[i].create_s == t.pods[i].create_s);
        assert_string_equal(t2.pods[i].name, t.pods[i].name);
    }
    sim_trace_release(&t2);
    load(&t2, trace);
    o.seed = 8;
    assert_int_equal(sim_trace_inflate(&t2, &o, &err), 0);
    assert_true(t2.pods[at0].create_s != t.pods[at0].create_s);
    sim_trace_release(&t2);
    sim_trace_release(&t);
    strbuf_release(&err);
}

/*
 * The jobs running at time 0 hold what a steady stream holds: load x fleet of CPU. Each is
 * drawn in proportion to its run time (x runs twice as long as y: 2/3 of them are x), so the
 * 75 jobs of load 10 on 20,000 m ask 75 x (2/3 x 2000 + 1/3 x 4000) = 200,000 m.
 */
static void test_be_steady_start(void **state)
{
    struct sim_trace t = {0};
    struct sim_inflate_opts o;
    struct strbuf err = STRBUF_INIT;
    double cpu = 0;
    size_t at0 = 0, x = 0;

    (void)state;
    load(&t, trace);
    sim_inflate_defaults(&o);
    o.ls_fill = 0;
    o.be_load = 10;
    o.be_stretch = 1; /* 1 arrival a second, 75 s of mean run time: 75 running */
    o.span_s = 10;
    assert_int_equal(sim_trace_inflate(&t, &o, &err), 0);
    for (size_t i = 0; i < t.npods && t.pods[i].create_s == 0; i++) {
        at0++;
        cpu += (double)t.pods[i].cpu_milli;
        x += t.pods[i].cpu_milli == 2000;
    }
    assert_int_equal(at0, 75);
    assert_true(cpu > 200000 * 0.75 && cpu < 200000 * 1.25);
    assert_true(x > 75 / 3 && x < 75 - 75 / 6);
    sim_trace_release(&t);
    strbuf_release(&err);
}

/* Each refusal: -EINVAL or -E2BIG, a reason, and the trace as it was. */
static void test_errors(void **state)
{
    static const struct {
        const char *pods;
        double ls_fill, be_load, be_stretch, span_s;
        int want;
        const char *msg;
    } cases[] = {
        {trace, 1.5, 0.5, 1, 100, -EINVAL, "LS fill must be a fraction"},
        {trace, 0.5, -1, 1, 100, -EINVAL, "BE load must be a number in [0, 10]"},
        {trace, 0.5, 0.5, 0, 100, -EINVAL, "BE stretch must be a number in (0, 1000]"},
        {trace, 0.5, 0.5, 1, 0, -EINVAL, "span must be positive trace seconds"},
        {trace, 0.5, 0.5, 1, 86400.0 * 3650 + 1, -EINVAL, "ten years (315360000) at most"},
        {trace, 0, 0, 1, 100, -EINVAL, "the inflated workload is empty"},
        {POD_HDR "be-x,2000,1024,0,0,,BE,Running,10,110,10\n", 0.5, 0.5, 1, 100, -EINVAL,
         "no LS pod with a CPU request"},
        {POD_HDR "ls-a,3000,1024,0,0,,LS,Running,5,900,5\n"
                 "be-z,2000,1024,0,0,,BE,Running,10,10,10\n",
         0.5, 0.5, 1, 100, -EINVAL, "no BE pod with a CPU request and a run time"},
        /* 10 x 20,000 m / (2 jobs of 100 s x 2000 m and 50 s x 4000 m) = 1 a second for 10^7 s,
         * and the 75 running at time 0 */
        {trace, 0.5, 10, 1, 1e7, -E2BIG, "about 10000075 jobs, more than 1000000"},
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct sim_trace t = {0};
        struct sim_inflate_opts o = {.ls_fill = cases[i].ls_fill,
                                     .be_load = cases[i].be_load,
                                     .be_stretch = cases[i].be_stretch,
                                     .span_s = cases[i].span_s,
                                     .seed = 1};
        struct strbuf err = STRBUF_INIT;
        size_t n;
        char *first;

        load(&t, cases[i].pods);
        n = t.npods;
        first = xstrdup(t.pods[0].name);
        assert_int_equal(sim_trace_inflate(&t, &o, &err), cases[i].want);
        if (!strstr(err.buf, cases[i].msg))
            fail_msg("case %zu: \"%s\" does not say \"%s\"", i, err.buf, cases[i].msg);
        assert_int_equal(t.npods, n);
        assert_string_equal(t.pods[0].name, first);
        free(first);
        sim_trace_release(&t);
        strbuf_release(&err);
    }
}

/*
 * The ranges `koord sim`'s flags and sim_trace_inflate() share: each bound is in, the nearest
 * value past it and NaN are out, and a refused value leaves the options as they were.
 */
static void test_ranges(void **state)
{
    static const struct {
        enum sim_inflate_opt which;
        double in[2], out[2];
        const char *range;
    } cases[] = {
        {SIM_INFLATE_LS_FILL, {0, 1}, {-0.001, 1.001}, "a fraction in [0, 1]"},
        {SIM_INFLATE_BE_LOAD, {0, 10}, {-0.001, 10.001}, "[0, 10]"},
        {SIM_INFLATE_BE_STRETCH, {0.001, 1000}, {0, 1000.001}, "(0, 1000]"},
        {SIM_INFLATE_SPAN, {0.001, 315360000}, {0, 315360000.001}, "positive trace seconds"},
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct sim_inflate_opts o, before;
        const double *field[] = {&o.ls_fill, &o.be_load, &o.be_stretch, &o.span_s};

        sim_inflate_defaults(&o);
        assert_non_null(strstr(sim_inflate_range(cases[i].which), cases[i].range));
        for (size_t k = 0; k < 2; k++) {
            assert_int_equal(sim_inflate_set(&o, cases[i].which, cases[i].in[k]), 0);
            assert_true(*field[cases[i].which] == cases[i].in[k]);
            before = o;
            assert_int_equal(sim_inflate_set(&o, cases[i].which, cases[i].out[k]), -EINVAL);
            assert_memory_equal(&o, &before, sizeof(o));
        }
        assert_int_equal(sim_inflate_set(&o, cases[i].which, NAN), -EINVAL);
        assert_memory_equal(&o, &before, sizeof(o));
    }
}

/*
 * The pod limit: a trace holds SIM_TRACE_MAX_PODS pods at most, so a workload of exactly that
 * many is inflated and the pod past it is refused (-E2BIG, the limit named, the trace as it
 * was), whether the LS fill or the BE jobs after it reach it. Tested with a limit of 1,000
 * (max_pods): two nodes of one core and LS pods of 1 m make the LS fill the pod count over
 * two thousand.
 */
static void test_pod_limit(void **state)
{
    static const char nodes[] = NODE_HDR "n0,1000,65536,0,\nn1,1000,65536,0,\n";
    /* LS t: 1 m. BE x: 1 m for 100 s; at load 0.1 of 2,000 m, 2 arrivals a second (80 in
     * the span), 200 running: the BE jobs alone stay under the limit. */
    static const char pods[] = POD_HDR "ls-t,1,1,0,0,,LS,Running,0,,0\n"
                                       "be-x,1,1,0,0,,BE,Running,0,100,0\n";
    static const struct {
        double ls_fill, be_load;
        int want;
    } cases[] = {
        {0.5, 0, 0},            /* 1,000 LS pods: the limit, allowed */
        {0.5000005, 0, -E2BIG}, /* 1,001 */
        {0.45, 0.1, -E2BIG},    /* 900 LS, then 200 BE running at time 0 */
        {0.39, 0.1, -E2BIG},    /* 780 LS, 200 running, the stream's 21st of ~80 */
        {0.35, 0.1, 0},         /* 700 LS, 200 running, ~80 arriving */
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct sim_trace t = {0};
        struct sim_inflate_opts o;
        struct strbuf err = STRBUF_INIT;

        assert_int_equal(sim_trace_parse_nodes(&t, "nodes.csv", nodes, strlen(nodes), &err), 0);
        assert_int_equal(sim_trace_parse_pods(&t, "pods.csv", pods, strlen(pods), &err), 0);
        sim_inflate_defaults(&o);
        assert_int_equal(o.max_pods, SIM_TRACE_MAX_PODS);
        o.max_pods = 1000;
        o.ls_fill = cases[i].ls_fill;
        o.be_load = cases[i].be_load;
        o.be_stretch = 1;
        o.span_s = 40;
        if (sim_trace_inflate(&t, &o, &err) != cases[i].want)
            fail_msg("case %zu: want %d (%s)", i, cases[i].want, err.buf ? err.buf : "");
        if (cases[i].want == 0) {
            if (i == 0)
                assert_int_equal(t.npods, 1000);
            else if (t.npods <= 900 || t.npods > 1000)
                fail_msg("case %zu: %zu pods", i, t.npods);
        } else {
            if (!strstr(err.buf, "more pods than a trace may hold (1000)"))
                fail_msg("case %zu: \"%s\" does not name the limit", i, err.buf);
            assert_int_equal(t.npods, 2);
            assert_string_equal(t.pods[0].name, "ls-t");
        }
        sim_trace_release(&t);
        strbuf_release(&err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ls_fill),         cmocka_unit_test(test_be_stream),
        cmocka_unit_test(test_be_steady_start), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_ranges),          cmocka_unit_test(test_pod_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
