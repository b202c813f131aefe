/*
 * Tests for agent/qos/cpusuppress (reference 3.1): the suppress amount (reservation, system
 * usage, non-BE pods and host apps, unknown pods, the minimum), the cpuset picker on a
 * 2-socket hyper-threaded topology, pools and exclusions, n with its minimum and growth limit,
 * the write plans for kubelet policies none and static, the cfsQuota policy (minimum, skip
 * rule, slow scale-up) and recovery.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/qos/cpusuppress.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"

static void set(struct qos_opt *o, int64_t v)
{
    o->set = true;
    o->value = v;
}

static void test_suppress_milli(void **state)
{
    struct qos_threshold cfg;
    struct qos_node node;
    struct qos_pod pods[] = {
        {.name = "ls",
         .qos = API_QOS_LS,
         .kube_qos = QOS_KUBE_BURSTABLE,
         .has_cpu_usage = true,
         .cpu_usage = 8},
        {.name = "be",
         .qos = API_QOS_BE,
         .qos_label = API_QOS_BE,
         .kube_qos = QOS_KUBE_BURSTABLE,
         .has_cpu_usage = true,
         .cpu_usage = 3},
        /* BestEffort by kube class without a label: BE too. */
        {.name = "kube-be",
         .qos = API_QOS_BE,
         .kube_qos = QOS_KUBE_BESTEFFORT,
         .has_cpu_usage = true,
         .cpu_usage = 1},
        {.name = "no-sample", .qos = API_QOS_LS, .kube_qos = QOS_KUBE_BURSTABLE},
    };
    struct qos_host_app apps[] = {
        {.name = "a1", .qos = API_QOS_LS, .has_cpu_usage = true, .cpu_usage = 1.0},
        {.name = "a2",
         .qos = API_QOS_BE,
         .besteffort_base = true,
         .has_cpu_usage = true,
         .cpu_usage = 0.5},
        /* BE outside the BestEffort base counts as non-BE. */
        {.name = "a3", .qos = API_QOS_BE, .has_cpu_usage = true, .cpu_usage = 0.25},
        {.name = "a4", .qos = API_QOS_LS},
    };
    struct qos_suppress_input in = {
        .cfg = &cfg,
        .node = &node,
        .node_cpu_usage = 20,
        .pods = pods,
        .npods = ARRAY_SIZE(pods),
        .unknown_pods_cpu_usage = 0.5,
        .apps = apps,
        .napps = ARRAY_SIZE(apps),
    };

    (void)state;
    memset(&cfg, 0, sizeof(cfg));
    set(&cfg.cpu_suppress_threshold_percent, 65);
    memset(&node, 0, sizeof(node));
    node.capacity.v[QOS_RES_CPU] = 32000;
    node.allocatable.v[QOS_RES_CPU] = 31000;
    node.reserved_cpu_milli = 2000;
    /*
     * pods all 12.5 (8 + 3 + 1 + 0.5 unknown), non-BE 8.5; apps all 1.75, non-BE 1.25;
     * system = 20 - 12.5 - 1.75 = 5.75 (above the 2-core reservation);
     * 32000 x 65 % - 8500 - 1250 - 5750.
     */
    assert_int_equal(qos_cpusuppress_milli(&in), 20800 - 8500 - 1250 - 5750);
    /* The minimum lifts it: 20 % of 32000. */
    set(&cfg.cpu_suppress_min_percent, 20);
    assert_int_equal(qos_cpusuppress_milli(&in), 6400);
    set(&cfg.cpu_suppress_min_percent, 16);
    assert_int_equal(qos_cpusuppress_milli(&in), 5300);
    cfg.cpu_suppress_min_percent.set = false;
    /* System usage below the reservation: the reservation (annotation 2 > kubelet 1). */
    in.node_cpu_usage = 15;
    assert_int_equal(qos_cpusuppress_milli(&in), 20800 - 8500 - 1250 - 2000);
    node.reserved_cpu_milli = 0;
    assert_int_equal(qos_cpusuppress_milli(&in), 20800 - 8500 - 1250 - 1000);
    /* Node usage below the pods': system 0, then the kubelet reservation. */
    in.node_cpu_usage = 10;
    assert_int_equal(qos_cpusuppress_milli(&in), 20800 - 8500 - 1250 - 1000);
    node.allocatable.v[QOS_RES_CPU] = 32000;
    assert_int_equal(qos_cpusuppress_milli(&in), 20800 - 8500 - 1250);
    /* int64() truncates each term separately: 0.0005 cores add nothing. */
    in.unknown_pods_cpu_usage = 0.5005;
    assert_int_equal(qos_cpusuppress_milli(&in), 20800 - 8500 - 1250);
    /* Heavy LS load makes it negative. */
    pods[0].cpu_usage = 30;
    assert_true(qos_cpusuppress_milli(&in) < 0);
}

/*
 * 2 sockets x 4 cores x 2 threads, one NUMA node per socket, numbered as Linux does: CPUs 0-3
 * socket 0 first threads, 4-7 socket 1, 8-11 their siblings on socket 0, 12-15 on socket 1.
 */
static void topology(struct qos_cpu_info *t)
{
    for (int c = 0; c < 16; c++) {
        t[c].cpu = c;
        t[c].socket = (c / 4) % 2;
        t[c].node = t[c].socket;
        t[c].core = c % 4;
    }
}

static const char *list(const int *v, size_t n, struct strbuf *sb)
{
    strbuf_reset(sb);
    for (size_t i = 0; i < n; i++)
        strbuf_addf(sb, "%s%d", i ? " " : "", v[i]);
    return sb->buf;
}

static void test_picker(void **state)
{
    static const struct {
        size_t want;
        const char *picks;
    } cases[] = {
        {0, ""},
        {1, "0"},
        /* One pair per bucket per visit, buckets alternate. */
        {2, "0 8"},
        {3, "0 8 4"},
        {4, "0 8 4 12"},
        {5, "0 8 4 12 1"},
        {6, "0 8 4 12 1 9"},
        {7, "0 8 4 12 1 9 5"},
        {16, "0 8 4 12 1 9 5 13 2 10 6 14 3 11 7 15"},
        /* More than the pool: nothing. */
        {17, ""},
    };
    struct qos_cpu_info topo[16], pool[16];
    struct strbuf sb = STRBUF_INIT;
    int out[16];
    size_t n;

    (void)state;
    topology(topo);
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        n = qos_cpusuppress_pick(topo, 16, cases[i].want, out);
        if (strcmp(list(out, n, &sb), cases[i].picks))
            fail_msg("want %zu: \"%s\", expected \"%s\"", cases[i].want, sb.buf, cases[i].picks);
    }
    /* Input order does not matter. */
    for (int c = 0; c < 16; c++)
        pool[c] = topo[15 - c];
    n = qos_cpusuppress_pick(pool, 16, 5, out);
    assert_string_equal(list(out, n, &sb), "0 8 4 12 1");

    /* Unequal buckets: the larger goes first. Without CPUs 0, 8 and 4, socket 0 keeps 6. */
    {
        int k = 0;

        for (int c = 0; c < 16; c++)
            if (c != 0 && c != 8 && c != 4)
                pool[k++] = topo[c];
        /* socket 1 (7 CPUs: 12 alone on core 0) first; its first pair is (5, 13). */
        n = qos_cpusuppress_pick(pool, (size_t)k, 4, out);
        assert_string_equal(list(out, n, &sb), "5 13 1 9");
        n = qos_cpusuppress_pick(pool, (size_t)k, 13, out);
        assert_string_equal(list(out, n, &sb), "5 13 1 9 6 14 2 10 7 15 3 11 12");
    }
    /* No hyper-threads: no pair anywhere, singles round-robin. */
    {
        struct qos_cpu_info flat[4] = {{.cpu = 0, .core = 0, .socket = 0},
                                       {.cpu = 1, .core = 1, .socket = 0},
                                       {.cpu = 2, .core = 2, .socket = 1},
                                       {.cpu = 3, .core = 3, .socket = 1}};

        n = qos_cpusuppress_pick(flat, 4, 3, out);
        assert_string_equal(list(out, n, &sb), "0 2 1");
    }
    /* Equal-size buckets order by the head CPU id, not by socket: NUMA node 1 holds CPU 0. */
    {
        struct qos_cpu_info swapped[4] = {
            {.cpu = 0, .core = 0, .socket = 0, .node = 1},
            {.cpu = 1, .core = 0, .socket = 0, .node = 1},
            {.cpu = 2, .core = 0, .socket = 1, .node = 0},
            {.cpu = 3, .core = 0, .socket = 1, .node = 0},
        };

        n = qos_cpusuppress_pick(swapped, 4, 3, out);
        assert_string_equal(list(out, n, &sb), "0 1 2");
    }
    strbuf_release(&sb);
}

static const char *fmt(const struct cg_cpuset *s, struct strbuf *sb)
{
    strbuf_reset(sb);
    cg_cpuset_append(s, sb);
    return sb->buf;
}

static void test_cpuset(void **state)
{
    struct qos_cpu_info topo[16];
    struct qos_pod pods[] = {
        {.name = "lsr", .qos_label = API_QOS_LSR, .resource_status = "{\"cpuset\":\"1,9\"}"},
        {.name = "lse", .qos_label = API_QOS_LSE, .resource_status = "{\"cpuset\":\"2,10\"}"},
        {.name = "bad", .qos_label = API_QOS_LSE, .resource_status = "{\"cpuset\":\"x\"}"},
        {.name = "ls", .qos_label = API_QOS_LS, .resource_status = "{\"cpuset\":\"\"}"},
    };
    struct cg_cpuset reserved, sys, full;
    struct qos_cpuset_input in = {
        .suppress_milli = 4000,
        .cpus = topo,
        .ncpus = 16,
        .reserved = &reserved,
        .system_exclusive = &sys,
        .pods = pods,
        .npods = ARRAY_SIZE(pods),
        .current_be_cpus = 16,
    };
    struct qos_cpuset_result r;
    struct strbuf sb = STRBUF_INIT;

    (void)state;
    topology(topo);
    assert_int_equal(qos_cpuset_parse("0,8", &reserved), 0);
    assert_int_equal(qos_cpuset_parse("3", &sys), 0);
    /* Candidates: LSR {1, 9}; LS {4-7, 11-15}; 0, 8 reserved, 3 SYSTEM, 2, 10 LSE. */
    qos_cpusuppress_cpuset(&in, &r);
    assert_int_equal(r.lsr_pool, 2);
    assert_int_equal(r.ls_pool, 9);
    assert_int_equal(r.want, 4);
    /* nLSR = 4 x 2 / 11 = 0; four from LS: socket 1's pairs (socket 0 keeps only CPU 11). */
    assert_int_equal(r.want_lsr, 0);
    assert_string_equal(fmt(&r.cpus, &sb), "4-5,12-13");
    /* n = 8: nLSR = 16 / 11 = 1 (CPU 1); LS: three pairs of socket 1, then 11. */
    in.suppress_milli = 7001;
    qos_cpusuppress_cpuset(&in, &r);
    assert_int_equal(r.want, 8);
    assert_int_equal(r.want_lsr, 1);
    assert_string_equal(fmt(&r.cpus, &sb), "1,4-6,11-14");
    qos_cpusuppress_full_cpuset(&in, &full);
    assert_string_equal(fmt(&full, &sb), "1,4-7,9,11-15");

    /* More than the LS pool holds: that part picks nothing. */
    in.suppress_milli = 12000;
    qos_cpusuppress_cpuset(&in, &r);
    assert_int_equal(r.want, 12);
    assert_int_equal(r.want_lsr, 2);
    assert_string_equal(fmt(&r.cpus, &sb), "1,9");

    /* Without exclusions: n from the amount, its minimum and its growth limit. */
    in.reserved = NULL;
    in.system_exclusive = NULL;
    in.npods = 0;
    {
        static const struct {
            int64_t milli;
            size_t current;
            int want;
            const char *cpus;
        } cases[] = {
            {500, 16, 2, "0,8"},   /* ceil(0.5) = 1, at least 2 */
            {0, 16, 2, "0,8"},     /* 0 -> 2 */
            {-3000, 16, 2, "0,8"}, /* negative -> 2 */
            {2001, 16, 3, "0,4,8"},
            {8000, 2, 4, "0,4,8,12"}, /* +ceil(1.6) = 2 at most: 2 + 2 */
            {8000, 6, 8, "0-1,4-5,8-9,12-13"},
            {8000, 5, 7, "0-1,4-5,8-9,12"}, /* 5 + 2 */
            {3000, 10, 3, "0,4,8"},         /* shrinking is not limited */
            {2000, 0, 2, "0,8"},            /* 0 + 2 */
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
            in.suppress_milli = cases[i].milli;
            in.current_be_cpus = cases[i].current;
            qos_cpusuppress_cpuset(&in, &r);
            if (r.want != cases[i].want || strcmp(fmt(&r.cpus, &sb), cases[i].cpus))
                fail_msg("case %zu: want %d cpus %s", i, r.want, sb.buf);
        }
    }
    /* Few CPUs: the growth limit applies after the minimum, so 4 CPUs grow by 1 from 0. */
    in.ncpus = 4;
    in.suppress_milli = 1000;
    in.current_be_cpus = 0;
    qos_cpusuppress_cpuset(&in, &r);
    assert_int_equal(r.want, 1);
    assert_string_equal(fmt(&r.cpus, &sb), "0");
    /* No candidates at all: nothing. */
    in.ncpus = 0;
    qos_cpusuppress_cpuset(&in, &r);
    assert_int_equal(cg_cpuset_count(&r.cpus), 0);
    strbuf_release(&sb);
}

static void test_growth_limit(void **state)
{
    struct qos_cpu_info topo[30];
    struct qos_cpuset_input in = {
        .suppress_milli = 30000, .cpus = topo, .ncpus = 30, .current_be_cpus = 2};
    struct qos_cpuset_result r;

    (void)state;
    for (int c = 0; c < 30; c++)
        topo[c] = (struct qos_cpu_info){.cpu = c, .core = c};
    /* ceil(ncpus x 0.1): 30 -> 3, 20 -> 2, 10 -> 1, 11 -> 2. */
    qos_cpusuppress_cpuset(&in, &r);
    assert_int_equal(r.want, 5);
    in.ncpus = 20;
    qos_cpusuppress_cpuset(&in, &r);
    assert_int_equal(r.want, 4);
    in.ncpus = 10;
    qos_cpusuppress_cpuset(&in, &r);
    assert_int_equal(r.want, 3);
    in.ncpus = 11;
    qos_cpusuppress_cpuset(&in, &r);
    assert_int_equal(r.want, 4);
}

static void test_plans(void **state)
{
    struct cg_cpuset old, new_cpus, full, empty;
    struct qos_suppress_plan p;
    struct strbuf sb = STRBUF_INIT;

    (void)state;
    assert_int_equal(qos_cpuset_parse("0-7", &old), 0);
    assert_int_equal(qos_cpuset_parse("6-9", &new_cpus), 0);
    assert_int_equal(qos_cpuset_parse("0-15", &full), 0);
    cg_cpuset_clear(&empty);

    /* kubelet none: union top-down, then the new set bottom-up; quota back to -1. */
    qos_cpusuppress_cpuset_plan(QOS_KUBELET_CPU_POLICY_NONE, &old, &new_cpus, &full, &p);
    assert_true(p.write_quota);
    assert_int_equal(p.be_quota, -1);
    assert_int_equal(p.ncpuset, 2);
    assert_string_equal(fmt(&p.cpuset[0].cpus, &sb), "0-9");
    assert_int_equal(p.cpuset[0].levels, QOS_LEVEL_ALL);
    assert_false(p.cpuset[0].bottom_up);
    assert_string_equal(fmt(&p.cpuset[1].cpus, &sb), "6-9");
    assert_int_equal(p.cpuset[1].levels, QOS_LEVEL_ALL);
    assert_true(p.cpuset[1].bottom_up);
    qos_cpusuppress_cpuset_plan(QOS_KUBELET_CPU_POLICY_NONE, &old, &empty, &full, &p);
    assert_int_equal(p.ncpuset, 0);
    assert_true(p.write_quota);

    /* kubelet static: QoS and pod dirs get the full set, containers the new one. */
    qos_cpusuppress_cpuset_plan(QOS_KUBELET_CPU_POLICY_STATIC, &old, &new_cpus, &full, &p);
    assert_int_equal(p.ncpuset, 2);
    assert_string_equal(fmt(&p.cpuset[0].cpus, &sb), "0-15");
    assert_int_equal(p.cpuset[0].levels, QOS_LEVEL_QOS | QOS_LEVEL_POD);
    assert_string_equal(fmt(&p.cpuset[1].cpus, &sb), "6-9");
    assert_int_equal(p.cpuset[1].levels, QOS_LEVEL_CONTAINER);
    assert_false(p.cpuset[1].bottom_up);
    qos_cpusuppress_cpuset_plan(QOS_KUBELET_CPU_POLICY_STATIC, &old, &empty, &full, &p);
    assert_int_equal(p.ncpuset, 1);

    /* Recovery. */
    qos_cpusuppress_recover_plan(&full, &p);
    assert_true(p.write_quota);
    assert_int_equal(p.be_quota, -1);
    assert_int_equal(p.ncpuset, 1);
    assert_string_equal(fmt(&p.cpuset[0].cpus, &sb), "0-15");
    assert_int_equal(p.cpuset[0].levels, QOS_LEVEL_ALL);

    /* cfsQuota: the quota, and the full cpuset on every level. */
    qos_cpusuppress_cfs_plan(20000, 32000, -1, &full, &p);
    assert_true(p.write_quota);
    assert_int_equal(p.be_quota, 2000000);
    assert_int_equal(p.ncpuset, 1);
    assert_int_equal(p.cpuset[0].levels, QOS_LEVEL_ALL);
    qos_cpusuppress_cfs_plan(20000, 32000, 1990000, &full, &p);
    assert_false(p.write_quota);
    assert_int_equal(p.ncpuset, 1);
    strbuf_release(&sb);
}

static void test_cfs_quota(void **state)
{
    static const struct {
        int64_t milli, capacity, current;
        bool write;
        int64_t quota;
    } cases[] = {
        /* 20 cores of a 32-core node, from unset: no step limit. */
        {20000, 32000, -1, true, 2000000},
        /* Scale up at most 10 % of the node (320000) per tick once set. */
        {20000, 32000, 1000000, true, 1320000},
        {20000, 32000, 1680000, true, 2000000},
        {20000, 32000, 1679999, true, 1999999},
        /* Changes below 1 % of the node (32000) are skipped; exactly 1 % is written. */
        {20000, 32000, 1990000, false, 2000000},
        {20000, 32000, 2031999, false, 2000000},
        {20000, 32000, 1968000, true, 2000000},
        /* Shrinking is not stepped. */
        {20000, 32000, 3000000, true, 2000000},
        /* The minimum 2000 is always written, even when unchanged. */
        {10, 32000, 2000, true, 2000},
        {-5000, 32000, 1000000, true, 2000},
        /* Capacity rounds up to whole cores: 31.5 -> 32 (skip band 32000). */
        {20000, 31500, 1969000, false, 2000000},
        {20000, 31000, 1969000, true, 2000000},
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        int64_t q = -7;
        bool w = qos_cpusuppress_cfs_quota(cases[i].milli, cases[i].capacity, cases[i].current, &q);

        if (w != cases[i].write || q != cases[i].quota)
            fail_msg("case %zu: write %d quota %lld", i, w, (long long)q);
    }
}

static void test_host_apps(void **state)
{
    struct qos_host_app *apps;
    size_t n;
    cJSON *doc;

    (void)state;
    doc = cJSON_Parse("{\"spec\":{\"hostApplications\":[{\"name\":\"nm\",\"qos\":\"BE\","
                      "\"priority\":\"koord-batch\",\"cgroupPath\":{\"base\":"
                      "\"KubepodsBesteffort\",\"parentDir\":\"hadoop\"}},"
                      "{\"name\":\"agent\",\"qos\":\"LS\"},{\"name\":\"odd\",\"qos\":\"X\","
                      "\"cgroupPath\":{\"base\":\"CgroupRoot\"}}]}}");
    assert_non_null(doc);
    assert_int_equal(qos_host_apps_from_nodeslo(doc, &apps, &n), 0);
    assert_int_equal(n, 3);
    assert_string_equal(apps[0].name, "nm");
    assert_int_equal(apps[0].qos, API_QOS_BE);
    assert_true(apps[0].besteffort_base);
    assert_false(apps[0].has_cpu_usage);
    assert_int_equal(apps[1].qos, API_QOS_LS);
    assert_false(apps[1].besteffort_base);
    assert_int_equal(apps[2].qos, API_QOS_NONE);
    free(apps);
    cJSON_Delete(doc);

    doc = cJSON_Parse("{\"spec\":{}}");
    assert_int_equal(qos_host_apps_from_nodeslo(doc, &apps, &n), 0);
    assert_null(apps);
    assert_int_equal(n, 0);
    cJSON_Delete(doc);
    assert_int_equal(qos_host_apps_from_nodeslo(NULL, &apps, &n), 0);
    doc = cJSON_Parse("{\"spec\":{\"hostApplications\":[{\"qos\":1}]}}");
    assert_int_equal(qos_host_apps_from_nodeslo(doc, &apps, &n), -EINVAL);
    assert_null(apps);
    cJSON_Delete(doc);
    doc = cJSON_Parse("{\"spec\":{\"hostApplications\":{}}}");
    assert_int_equal(qos_host_apps_from_nodeslo(doc, &apps, &n), -EINVAL);
    cJSON_Delete(doc);
    doc = cJSON_Parse("{\"spec\":{\"hostApplications\":[{}]}}");
    alloc_fail_after(1);
    assert_int_equal(qos_host_apps_from_nodeslo(doc, &apps, &n), -ENOMEM);
    alloc_fail_after(0);
    cJSON_Delete(doc);
    {
        cJSON *big = cJSON_CreateObject(), *spec = cJSON_AddObjectToObject(big, "spec");
        cJSON *arr = cJSON_AddArrayToObject(spec, "hostApplications");

        for (int i = 0; i <= QOS_HOST_APPS_MAX; i++)
            cJSON_AddItemToArray(arr, cJSON_CreateObject());
        assert_int_equal(qos_host_apps_from_nodeslo(big, &apps, &n), -E2BIG);
        cJSON_Delete(big);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suppress_milli), cmocka_unit_test(test_picker),
        cmocka_unit_test(test_cpuset),         cmocka_unit_test(test_growth_limit),
        cmocka_unit_test(test_plans),          cmocka_unit_test(test_cfs_quota),
        cmocka_unit_test(test_host_apps),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
