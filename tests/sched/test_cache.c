/*
 * Tests for sched/cache/cache.c (reference scheduler.md 4: assumed pods, confirmation by the
 * informer, incremental snapshots by generation, the node tree's zone interleaving), plus
 * koord's ttl for assumed pods whose binding finished (cache.h).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/hmap.h"
#include "sched/cache/cache.h"
#include "sched/framework/framework.h"
#include "schedtest.h"

/* A node named name, in zone (NULL: no zone label). */
static struct sched_node *node(const char *name, const char *zone)
{
    char json[512];

    if (zone)
        (void)snprintf(json, sizeof(json),
                       "{\"metadata\":{\"name\":\"%s\",\"labels\":{"
                       "\"topology.kubernetes.io/zone\":\"%s\"}},\"status\":{\"allocatable\":{"
                       "\"cpu\":\"4\",\"pods\":\"110\"}}}",
                       name, zone);
    else
        (void)snprintf(json, sizeof(json),
                       "{\"metadata\":{\"name\":\"%s\"},\"status\":{\"allocatable\":{\"cpu\":"
                       "\"4\",\"pods\":\"110\"}}}",
                       name);
    return N(json);
}

static void add_node(struct sched_cache *c, const char *name, const char *zone)
{
    struct sched_node *n = node(name, zone);

    sched_cache_add_node(c, n);
    sched_node_unref(n);
}

/* A pod with uid u requesting cpu (milli), on node_name ("" = unassigned). */
static struct sched_pod *pod(const char *u, const char *node_name, int cpu)
{
    char json[512];

    (void)snprintf(json, sizeof(json),
                   "{\"metadata\":{\"name\":\"%s\",\"uid\":\"%s\"},\"spec\":{\"nodeName\":\"%s\","
                   "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":"
                   "\"%dm\"}}}]}}",
                   u, u, node_name, cpu);
    return P(json);
}

static int64_t cpu_on(const struct sched_snapshot *s, const char *name)
{
    struct sched_node_info *ni = sched_snapshot_get(s, name);

    if (!ni)
        fail_msg("%s is not in the snapshot", name);
    return ni->requested.v[SCHED_RES_CPU];
}

/* The snapshot's node order as "a,b,c". */
static const char *order(const struct sched_snapshot *s)
{
    static char buf[512];
    size_t len = 0;

    buf[0] = 0;
    for (size_t i = 0; i < s->nnodes && len < sizeof(buf); i++)
        len +=
            (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? "," : "", s->nodes[i]->name);
    return buf;
}

static void test_assume_forget(void **state)
{
    (void)state;
    struct sched_cache *c = sched_cache_new(0);
    struct sched_snapshot s = {0};
    struct sched_pod *p = pod("p1", "", 500);
    struct sched_cache_stats st;

    add_node(c, "n1", NULL);
    add_node(c, "n2", NULL);
    assert_int_equal(sched_cache_update_snapshot(c, &s), 2);
    assert_int_equal(cpu_on(&s, "n1"), 0);

    assert_int_equal(sched_cache_assume(c, p, "n1"), 0);
    assert_int_equal(p->refs, 3); /* the test, the cache's record, n1's NodeInfo */
    assert_true(sched_cache_is_assumed(c, "p1"));
    assert_true(sched_cache_has_pod(c, "p1"));
    assert_int_equal(sched_cache_assume(c, p, "n2"), -EEXIST);
    sched_cache_stats(c, &st);
    assert_int_equal(st.nodes, 2);
    assert_int_equal(st.pods, 1);
    assert_int_equal(st.assumed, 1);

    /* The next cycle counts it. */
    assert_int_equal(sched_cache_update_snapshot(c, &s), 1);
    assert_int_equal(cpu_on(&s, "n1"), 500);
    assert_int_equal(sched_snapshot_get(&s, "n1")->npods, 1);
    assert_int_equal(cpu_on(&s, "n2"), 0);

    /* Binding failed: forget it. */
    assert_int_equal(sched_cache_forget(c, "p1"), 0);
    assert_false(sched_cache_is_assumed(c, "p1"));
    assert_false(sched_cache_has_pod(c, "p1"));
    assert_int_equal(sched_cache_forget(c, "p1"), -ENOENT);
    assert_int_equal(sched_cache_update_snapshot(c, &s), 1);
    assert_int_equal(cpu_on(&s, "n1"), 0);
    sched_cache_stats(c, &st);
    assert_int_equal(st.pods, 0);
    assert_int_equal(st.assumed, 0);

    /* Assumed on a node the cache does not know: a NodeInfo without a Node. */
    assert_int_equal(sched_cache_assume(c, p, "n9"), 0);
    assert_int_equal(sched_cache_update_snapshot(c, &s), 1);
    assert_int_equal(cpu_on(&s, "n9"), 500);
    assert_null(sched_snapshot_get(&s, "n9")->node);
    assert_int_equal(s.nnodes, 2);
    assert_int_equal(sched_cache_forget(c, "p1"), 0);
    sched_cache_update_snapshot(c, &s);
    assert_null(sched_snapshot_get(&s, "n9"));

    sched_pod_unref(p);
    sched_snapshot_release(&s);
    sched_cache_free(c);
}

static void test_add_pod_confirms_assumed(void **state)
{
    (void)state;
    struct sched_cache *c = sched_cache_new(0);
    struct sched_snapshot s = {0};
    struct sched_pod *p = pod("p1", "", 500), *bound = pod("p1", "n1", 500);
    struct sched_pod *q = pod("q1", "", 300), *elsewhere = pod("q1", "n2", 300);
    struct sched_cache_stats st;

    add_node(c, "n1", NULL);
    add_node(c, "n2", NULL);
    assert_int_equal(sched_cache_assume(c, p, "n1"), 0);
    assert_int_equal(sched_cache_assume(c, q, "n1"), 0);
    sched_cache_update_snapshot(c, &s);
    assert_int_equal(cpu_on(&s, "n1"), 800);

    /* The informer's Add replaces the assumed copy: counted once. */
    sched_cache_add_pod(c, bound);
    assert_false(sched_cache_is_assumed(c, "p1"));
    assert_true(sched_cache_has_pod(c, "p1"));
    sched_cache_update_snapshot(c, &s);
    assert_int_equal(p->refs, 1); /* the assumed copy is gone, from the snapshot too */
    assert_int_equal(cpu_on(&s, "n1"), 800);
    assert_int_equal(sched_snapshot_get(&s, "n1")->npods, 2);

    /* Confirmed on another node than assumed: it moves there. */
    sched_cache_add_pod(c, elsewhere);
    assert_false(sched_cache_is_assumed(c, "q1"));
    sched_cache_update_snapshot(c, &s);
    assert_int_equal(cpu_on(&s, "n1"), 500);
    assert_int_equal(cpu_on(&s, "n2"), 300);
    assert_int_equal(sched_snapshot_get(&s, "n1")->npods, 1);
    assert_int_equal(sched_snapshot_get(&s, "n2")->npods, 1);
    sched_cache_stats(c, &st);
    assert_int_equal(st.pods, 2);
    assert_int_equal(st.assumed, 0);

    /* A confirmed pod is not forgotten (only assumed ones are). */
    assert_int_equal(sched_cache_forget(c, "p1"), -ENOENT);
    assert_true(sched_cache_has_pod(c, "p1"));
    /* Nor assumed again. */
    assert_int_equal(sched_cache_assume(c, p, "n2"), -EEXIST);

    sched_pod_unref(p);
    sched_pod_unref(bound);
    sched_pod_unref(q);
    sched_pod_unref(elsewhere);
    sched_snapshot_release(&s);
    sched_cache_free(c);
}

static void test_pod_update_and_remove(void **state)
{
    (void)state;
    struct sched_cache *c = sched_cache_new(0);
    struct sched_snapshot s = {0};
    struct sched_pod *v1 = pod("p1", "n1", 100), *v2 = pod("p1", "n1", 700);
    struct sched_pod *moved = pod("p1", "n2", 700), *other = pod("zz", "n1", 1);

    add_node(c, "n1", NULL);
    add_node(c, "n2", NULL);
    sched_cache_add_pod(c, v1);
    sched_cache_update_snapshot(c, &s);
    assert_int_equal(cpu_on(&s, "n1"), 100);
    /* An update replaces the pod's share. */
    sched_cache_add_pod(c, v2);
    sched_cache_update_snapshot(c, &s);
    assert_int_equal(cpu_on(&s, "n1"), 700);
    assert_int_equal(sched_snapshot_get(&s, "n1")->npods, 1);
    sched_cache_add_pod(c, moved);
    sched_cache_update_snapshot(c, &s);
    assert_int_equal(cpu_on(&s, "n1"), 0);
    assert_int_equal(cpu_on(&s, "n2"), 700);

    assert_int_equal(sched_cache_remove_pod(c, other), -ENOENT);
    assert_int_equal(sched_cache_remove_pod(c, v1), 0);
    assert_false(sched_cache_has_pod(c, "p1"));
    assert_int_equal(sched_cache_remove_pod(c, v1), -ENOENT);
    sched_cache_update_snapshot(c, &s);
    assert_int_equal(cpu_on(&s, "n2"), 0);
    assert_int_equal(sched_snapshot_get(&s, "n2")->npods, 0);
    assert_int_equal(v2->refs, 1);
    assert_int_equal(moved->refs, 1);

    /* Removing an assumed pod (deleted before its binding was seen) drops it too. */
    {
        struct sched_pod *a = pod("a1", "", 50);
        struct sched_cache_stats st;
        assert_int_equal(sched_cache_assume(c, a, "n1"), 0);
        assert_int_equal(sched_cache_remove_pod(c, a), 0);
        sched_cache_stats(c, &st);
        assert_int_equal(st.assumed, 0);
        assert_int_equal(st.pods, 0);
        sched_pod_unref(a);
    }

    sched_pod_unref(v1);
    sched_pod_unref(v2);
    sched_pod_unref(moved);
    sched_pod_unref(other);
    sched_snapshot_release(&s);
    sched_cache_free(c);
}

static void test_ttl_cleanup(void **state)
{
    (void)state;
    struct sched_cache *c = sched_cache_new(10);
    struct sched_snapshot s = {0};
    struct sched_pod *a = pod("a", "", 100), *b = pod("b", "", 200), *d = pod("d", "", 400);
    struct sched_pod *d_bound = pod("d", "n1", 400);

    add_node(c, "n1", NULL);
    assert_int_equal(sched_cache_assume(c, a, "n1"), 0);
    assert_int_equal(sched_cache_assume(c, b, "n1"), 0);
    assert_int_equal(sched_cache_assume(c, d, "n1"), 0);
    /* Nothing expires before its binding finished. */
    assert_int_equal(sched_cache_cleanup(c, 1e9), 0);

    sched_cache_finish_binding(c, "a", 100);
    sched_cache_finish_binding(c, "d", 100);
    sched_cache_finish_binding(c, "unknown", 100);
    /* d is confirmed: no longer assumed, never expires. */
    sched_cache_add_pod(c, d_bound);
    assert_int_equal(sched_cache_cleanup(c, 105), 0);
    assert_true(sched_cache_is_assumed(c, "a"));
    assert_int_equal(sched_cache_cleanup(c, 111), 1);
    assert_false(sched_cache_has_pod(c, "a"));
    assert_true(sched_cache_is_assumed(c, "b"));
    assert_true(sched_cache_has_pod(c, "d"));
    assert_int_equal(sched_cache_cleanup(c, 1e9), 0);
    sched_cache_update_snapshot(c, &s);
    assert_int_equal(cpu_on(&s, "n1"), 600);

    /* finish_binding on a confirmed pod does nothing. */
    sched_cache_finish_binding(c, "d", 0);
    assert_int_equal(sched_cache_cleanup(c, 1e9), 0);
    assert_true(sched_cache_has_pod(c, "d"));

    sched_pod_unref(a);
    sched_pod_unref(b);
    sched_pod_unref(d);
    sched_pod_unref(d_bound);
    sched_snapshot_release(&s);
    sched_cache_free(c);

    /* ttl 0 means 30 s. */
    c = sched_cache_new(0);
    a = pod("a", "", 1);
    assert_int_equal(sched_cache_assume(c, a, "n1"), 0);
    sched_cache_finish_binding(c, "a", 0);
    assert_int_equal(sched_cache_cleanup(c, 29), 0);
    assert_int_equal(sched_cache_cleanup(c, 31), 1);
    sched_pod_unref(a);
    sched_cache_free(c);
}

static void test_incremental_snapshot(void **state)
{
    (void)state;
    struct sched_cache *c = sched_cache_new(0);
    struct sched_snapshot s = {0};
    struct sched_node_info *n1, *n2;
    struct sched_pod *p = pod("p", "", 100), *q = pod("q", "", 100);

    add_node(c, "n1", NULL);
    add_node(c, "n2", NULL);
    add_node(c, "n3", NULL);
    /* First: everything. */
    assert_int_equal(sched_cache_update_snapshot(c, &s), 3);
    assert_int_equal(s.nnodes, 3);
    n1 = sched_snapshot_get(&s, "n1");
    n2 = sched_snapshot_get(&s, "n2");
    /* Nothing changed: nothing copied. */
    assert_int_equal(sched_cache_update_snapshot(c, &s), 0);
    assert_int_equal(sched_cache_update_snapshot(c, &s), 0);

    /* One change: one copy, in place (the node list keeps pointing at it). */
    assert_int_equal(sched_cache_assume(c, p, "n2"), 0);
    assert_int_equal(sched_cache_update_snapshot(c, &s), 1);
    assert_ptr_equal(sched_snapshot_get(&s, "n2"), n2);
    assert_ptr_equal(sched_snapshot_get(&s, "n1"), n1);
    assert_int_equal(n2->requested.v[SCHED_RES_CPU], 100);
    assert_int_equal(sched_cache_update_snapshot(c, &s), 0);

    /* Changes on two nodes: two copies. */
    assert_int_equal(sched_cache_assume(c, q, "n1"), 0);
    assert_int_equal(sched_cache_forget(c, "p"), 0);
    assert_int_equal(sched_cache_update_snapshot(c, &s), 2);
    assert_int_equal(n1->requested.v[SCHED_RES_CPU], 100);
    assert_int_equal(n2->requested.v[SCHED_RES_CPU], 0);
    /* Two changes on one node between updates: one copy. */
    assert_int_equal(sched_cache_assume(c, p, "n3"), 0);
    assert_int_equal(sched_cache_forget(c, "p"), 0);
    assert_int_equal(sched_cache_update_snapshot(c, &s), 1);

    /* A node update and a new node. */
    add_node(c, "n1", NULL);
    assert_int_equal(sched_cache_update_snapshot(c, &s), 1);
    add_node(c, "n4", NULL);
    assert_int_equal(sched_cache_update_snapshot(c, &s), 1);
    assert_int_equal(s.nnodes, 4);
    assert_int_equal(sched_cache_update_snapshot(c, &s), 0);
    assert_true(s.generation > 0);

    /* A second, fresh snapshot copies everything. */
    {
        struct sched_snapshot s2 = {0};
        assert_int_equal(sched_cache_update_snapshot(c, &s2), 4);
        assert_int_equal(s2.nnodes, 4);
        assert_int_equal(sched_snapshot_get(&s2, "n1")->requested.v[SCHED_RES_CPU], 100);
        sched_snapshot_release(&s2);
    }

    sched_pod_unref(p);
    sched_pod_unref(q);
    sched_snapshot_release(&s);
    sched_snapshot_release(&s); /* released twice is fine */
    sched_cache_free(c);
}

static void test_node_removal(void **state)
{
    (void)state;
    struct sched_cache *c = sched_cache_new(0);
    struct sched_snapshot s = {0};
    struct sched_pod *p = pod("p", "n2", 100);
    struct sched_node_info *ni;
    struct sched_cache_stats st;

    add_node(c, "n1", NULL);
    add_node(c, "n2", NULL);
    add_node(c, "n3", NULL);
    sched_cache_add_pod(c, p);
    sched_cache_update_snapshot(c, &s);
    assert_string_equal(order(&s), "n1,n2,n3");

    /* A node with pods: out of the list, still in by_name without its Node. */
    sched_cache_remove_node(c, "n2");
    assert_int_equal(sched_cache_update_snapshot(c, &s), 1);
    assert_string_equal(order(&s), "n1,n3");
    ni = sched_snapshot_get(&s, "n2");
    assert_non_null(ni);
    assert_null(ni->node);
    assert_int_equal(ni->npods, 1);
    assert_int_equal(ni->requested.v[SCHED_RES_CPU], 100);
    sched_cache_stats(c, &st);
    assert_int_equal(st.nodes, 3);

    /* Its last pod leaves: the entry goes. */
    assert_int_equal(sched_cache_remove_pod(c, p), 0);
    sched_cache_update_snapshot(c, &s);
    assert_null(sched_snapshot_get(&s, "n2"));
    assert_string_equal(order(&s), "n1,n3");
    sched_cache_stats(c, &st);
    assert_int_equal(st.nodes, 2);

    /* A node without pods: gone at once. */
    sched_cache_remove_node(c, "n1");
    sched_cache_remove_node(c, "nx"); /* unknown: nothing */
    sched_cache_update_snapshot(c, &s);
    assert_null(sched_snapshot_get(&s, "n1"));
    assert_string_equal(order(&s), "n3");

    /* One node removed and another added between two updates. */
    sched_cache_remove_node(c, "n3");
    add_node(c, "n5", NULL);
    sched_cache_update_snapshot(c, &s);
    assert_null(sched_snapshot_get(&s, "n3"));
    assert_string_equal(order(&s), "n5");

    /* A pod-only NodeInfo that gets its Node joins the list with its pods. */
    sched_cache_add_pod(c, p);
    sched_cache_update_snapshot(c, &s);
    assert_string_equal(order(&s), "n5");
    add_node(c, "n2", NULL);
    sched_cache_update_snapshot(c, &s);
    assert_string_equal(order(&s), "n2,n5");
    assert_int_equal(s.nodes[0]->npods, 1);

    sched_pod_unref(p);
    sched_snapshot_release(&s);
    sched_cache_free(c);
}

static void test_zone_order(void **state)
{
    (void)state;
    struct sched_cache *c = sched_cache_new(0);
    struct sched_snapshot s = {0};

    /* Added out of order: names are sorted within a zone, zones interleaved. */
    add_node(c, "b1", "b");
    add_node(c, "a1", "a");
    add_node(c, "b0", "b");
    add_node(c, "a0", "a");
    sched_cache_update_snapshot(c, &s);
    assert_string_equal(order(&s), "a0,b0,a1,b1");

    /* A third zone with more nodes than the others, and nodes without a zone. */
    add_node(c, "c0", "c");
    add_node(c, "c1", "c");
    add_node(c, "c2", "c");
    add_node(c, "d0", NULL);
    sched_cache_update_snapshot(c, &s);
    assert_string_equal(order(&s), "a0,b0,c0,d0,a1,b1,c1,c2");

    /* The order follows removals. */
    sched_cache_remove_node(c, "b0");
    sched_cache_remove_node(c, "a1");
    sched_cache_update_snapshot(c, &s);
    assert_string_equal(order(&s), "a0,b1,c0,d0,c1,c2");
    sched_snapshot_release(&s);
    sched_cache_free(c);

    /* The zone key is region and zone: the same zone name in two regions is two zones. */
    c = sched_cache_new(0);
    {
        static const char *const nodes[] = {
            "{\"metadata\":{\"name\":\"r1z-0\",\"labels\":{\"topology.kubernetes.io/region\":"
            "\"r1\",\"topology.kubernetes.io/zone\":\"z\"}}}",
            "{\"metadata\":{\"name\":\"r1z-1\",\"labels\":{\"topology.kubernetes.io/region\":"
            "\"r1\",\"topology.kubernetes.io/zone\":\"z\"}}}",
            "{\"metadata\":{\"name\":\"r2z-0\",\"labels\":{\"topology.kubernetes.io/region\":"
            "\"r2\",\"topology.kubernetes.io/zone\":\"z\"}}}",
            /* The beta label counts as the zone too. */
            "{\"metadata\":{\"name\":\"r1z-2\",\"labels\":{\"topology.kubernetes.io/region\":"
            "\"r1\",\"failure-domain.beta.kubernetes.io/zone\":\"z\"}}}",
        };
        for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
            struct sched_node *n = N(nodes[i]);
            sched_cache_add_node(c, n);
            sched_node_unref(n);
        }
    }
    s = (struct sched_snapshot){0};
    sched_cache_update_snapshot(c, &s);
    assert_string_equal(order(&s), "r1z-0,r2z-0,r1z-1,r1z-2");
    sched_snapshot_release(&s);
    sched_cache_free(c);
}

static void test_affinity_lists(void **state)
{
    (void)state;
    struct sched_cache *c = sched_cache_new(0);
    struct sched_snapshot s = {0};
    struct sched_pod *anti =
        P("{\"metadata\":{\"name\":\"anti\",\"uid\":\"anti\"},\"spec\":{\"nodeName\":\"n2\","
          "\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
          "[{\"labelSelector\":{},\"topologyKey\":\"h\"}]}}}}");
    struct sched_pod *aff =
        P("{\"metadata\":{\"name\":\"aff\",\"uid\":\"aff\"},\"spec\":{\"nodeName\":\"n1\","
          "\"affinity\":{\"podAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":[{"
          "\"weight\":5,\"podAffinityTerm\":{\"labelSelector\":{},\"topologyKey\":\"h\"}}]}}}}");
    struct sched_pod *plain = pod("plain", "n3", 1);
    struct sched_pod *orphan =
        P("{\"metadata\":{\"name\":\"o\",\"uid\":\"o\"},\"spec\":{\"nodeName\":\"gone\","
          "\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
          "[{\"labelSelector\":{},\"topologyKey\":\"h\"}]}}}}");

    add_node(c, "n1", NULL);
    add_node(c, "n2", NULL);
    add_node(c, "n3", NULL);
    sched_cache_update_snapshot(c, &s);
    assert_int_equal(s.nwith_affinity, 0);
    assert_int_equal(s.nwith_required_anti, 0);

    sched_cache_add_pod(c, plain);
    sched_cache_add_pod(c, anti);
    sched_cache_update_snapshot(c, &s);
    assert_int_equal(s.nwith_affinity, 1);
    assert_string_equal(s.with_affinity[0]->name, "n2");
    assert_int_equal(s.nwith_required_anti, 1);
    assert_string_equal(s.with_required_anti[0]->name, "n2");

    sched_cache_add_pod(c, aff);
    sched_cache_update_snapshot(c, &s);
    assert_int_equal(s.nwith_affinity, 2);
    assert_string_equal(s.with_affinity[0]->name, "n1");
    assert_string_equal(s.with_affinity[1]->name, "n2");
    assert_int_equal(s.nwith_required_anti, 1);

    /* Pods on a node the cache has no Node for are not listed. */
    sched_cache_add_pod(c, orphan);
    sched_cache_update_snapshot(c, &s);
    assert_int_equal(s.nwith_affinity, 2);
    assert_int_equal(s.nwith_required_anti, 1);

    assert_int_equal(sched_cache_remove_pod(c, anti), 0);
    sched_cache_update_snapshot(c, &s);
    assert_int_equal(s.nwith_affinity, 1);
    assert_string_equal(s.with_affinity[0]->name, "n1");
    assert_int_equal(s.nwith_required_anti, 0);
    assert_int_equal(sched_cache_remove_pod(c, aff), 0);
    sched_cache_update_snapshot(c, &s);
    assert_int_equal(s.nwith_affinity, 0);

    /* An assumed pod with affinity counts as well. */
    {
        struct sched_pod *a =
            P("{\"metadata\":{\"name\":\"x\",\"uid\":\"x\"},\"spec\":{\"affinity\":{"
              "\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{"
              "\"labelSelector\":{},\"topologyKey\":\"h\"}]}}}}");
        assert_int_equal(sched_cache_assume(c, a, "n3"), 0);
        sched_cache_update_snapshot(c, &s);
        assert_int_equal(s.nwith_required_anti, 1);
        assert_string_equal(s.with_required_anti[0]->name, "n3");
        assert_int_equal(sched_cache_forget(c, "x"), 0);
        sched_cache_update_snapshot(c, &s);
        assert_int_equal(s.nwith_required_anti, 0);
        sched_pod_unref(a);
    }

    sched_pod_unref(anti);
    sched_pod_unref(aff);
    sched_pod_unref(plain);
    sched_pod_unref(orphan);
    sched_snapshot_release(&s);
    sched_cache_free(c);
}

static void test_empty(void **state)
{
    (void)state;
    struct sched_cache *c = sched_cache_new(0);
    struct sched_snapshot s = {0};
    struct sched_cache_stats st;

    assert_int_equal(sched_cache_update_snapshot(c, &s), 0);
    assert_int_equal(s.nnodes, 0);
    assert_int_equal(s.nwith_affinity, 0);
    assert_null(sched_snapshot_get(&s, "n1"));
    sched_cache_stats(c, &st);
    assert_int_equal(st.nodes, 0);
    /* Back to empty after a node came and went. */
    add_node(c, "n1", NULL);
    assert_int_equal(sched_cache_update_snapshot(c, &s), 1);
    sched_cache_remove_node(c, "n1");
    sched_cache_update_snapshot(c, &s);
    assert_int_equal(s.nnodes, 0);
    assert_null(sched_snapshot_get(&s, "n1"));
    sched_snapshot_release(&s);
    sched_cache_free(c);
}

static void test_free_with_everything(void **state)
{
    (void)state;
    struct sched_cache *c = sched_cache_new(0);
    struct sched_pod *a = pod("a", "", 1), *b = pod("b", "n1", 1), *d = pod("d", "nx", 1);

    add_node(c, "n1", NULL);
    assert_int_equal(sched_cache_assume(c, a, "n1"), 0);
    sched_cache_add_pod(c, b);
    sched_cache_add_pod(c, d);
    sched_cache_free(c);
    assert_int_equal(a->refs, 1);
    assert_int_equal(b->refs, 1);
    sched_pod_unref(a);
    sched_pod_unref(b);
    sched_pod_unref(d);
    sched_cache_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_assume_forget),
        cmocka_unit_test(test_add_pod_confirms_assumed),
        cmocka_unit_test(test_pod_update_and_remove),
        cmocka_unit_test(test_ttl_cleanup),
        cmocka_unit_test(test_incremental_snapshot),
        cmocka_unit_test(test_node_removal),
        cmocka_unit_test(test_zone_order),
        cmocka_unit_test(test_affinity_lists),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_free_with_everything),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
