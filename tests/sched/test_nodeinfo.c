/*
 * Tests for sched/framework/nodeinfo.c: a NodeInfo's sums as pods come and go (requested,
 * non-zero requested, host ports, the affinity counters; framework/types.go NodeInfo), copies
 * that do not share mutable state with their source, and the snapshot lookup.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "base/hmap.h"
#include "sched/framework/framework.h"
#include "schedtest.h"

#define Mi   (INT64_C(1024) * 1024)
#define Gi   (Mi * 1024)

#define NODE "{\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":{\"cpu\":\"8\"}}}"

/* A pod with uid and name u, the given requests (JSON object) and host ports (JSON array). */
static struct sched_pod *pod(const char *u, const char *requests, const char *ports)
{
    char json[1024];

    (void)snprintf(json, sizeof(json),
                   "{\"metadata\":{\"name\":\"%s\",\"uid\":\"%s\"},\"spec\":{\"containers\":[{"
                   "\"name\":\"c\",\"resources\":{\"requests\":%s},\"ports\":%s}]}}",
                   u, u, requests ? requests : "{}", ports ? ports : "[]");
    return P(json);
}

static void test_add_remove_requests(void **state)
{
    (void)state;
    struct sched_node_info *ni = NI(NODE, NULL);
    struct sched_pod *a = pod("a", "{\"cpu\":\"500m\",\"memory\":\"1Gi\"}", NULL);
    struct sched_pod *b = pod("b", "{\"cpu\":\"250m\"}", NULL);
    struct sched_pod *c = pod("c", NULL, NULL);
    struct sched_pod *ghost = pod("ghost", NULL, NULL);

    assert_string_equal(ni->name, "n1");
    assert_non_null(ni->node);
    assert_int_equal(ni->npods, 0);
    sched_node_info_add_pod(ni, a);
    sched_node_info_add_pod(ni, b);
    sched_node_info_add_pod(ni, c);
    assert_int_equal(ni->npods, 3);
    /* The NodeInfo holds its own references. */
    assert_int_equal(a->refs, 2);
    assert_int_equal(ni->requested.v[SCHED_RES_CPU], 750);
    assert_int_equal(ni->requested.v[SCHED_RES_MEMORY], Gi);
    /* Non-zero: a 500m/1Gi, b 250m/200Mi, c 100m/200Mi. */
    assert_int_equal(ni->nonzero_cpu, 850);
    assert_int_equal(ni->nonzero_mem, Gi + 400 * Mi);

    assert_int_equal(sched_node_info_remove_pod(ni, ghost), -ENOENT);
    assert_int_equal(sched_node_info_remove_pod(ni, a), 0);
    assert_int_equal(a->refs, 1);
    assert_int_equal(ni->npods, 2);
    assert_int_equal(ni->requested.v[SCHED_RES_CPU], 250);
    assert_int_equal(ni->requested.v[SCHED_RES_MEMORY], 0);
    assert_int_equal(ni->nonzero_cpu, 350);
    assert_int_equal(ni->nonzero_mem, 400 * Mi);
    assert_int_equal(sched_node_info_remove_pod(ni, a), -ENOENT);

    /* Removal is by uid: another decoded copy of the same pod removes it. */
    {
        struct sched_pod *c2 = pod("c", "{\"cpu\":\"9\"}", NULL);
        assert_int_equal(sched_node_info_remove_pod(ni, c2), 0);
        /* What is subtracted is what was added (the stored copy), not c2's requests. */
        assert_int_equal(ni->requested.v[SCHED_RES_CPU], 250);
        assert_int_equal(ni->nonzero_cpu, 250);
        sched_pod_unref(c2);
    }
    assert_int_equal(sched_node_info_remove_pod(ni, b), 0);
    assert_int_equal(ni->npods, 0);
    for (int i = 0; i < SCHED_RES_MAX; i++)
        assert_int_equal(ni->requested.v[i], 0);
    assert_int_equal(ni->nonzero_cpu, 0);
    assert_int_equal(ni->nonzero_mem, 0);

    sched_pod_unref(a);
    sched_pod_unref(b);
    sched_pod_unref(c);
    sched_pod_unref(ghost);
    sched_node_info_free(ni);
}

static void test_many_pods(void **state)
{
    (void)state;
    struct sched_node_info *ni = sched_node_info_new("n");
    struct sched_pod *v[50];

    /* Past the initial capacity, removing from the middle. */
    for (int i = 0; i < 50; i++) {
        char u[16];
        (void)snprintf(u, sizeof(u), "p%d", i);
        v[i] = pod(u, "{\"cpu\":\"10m\"}", NULL);
        sched_node_info_add_pod(ni, v[i]);
    }
    assert_int_equal(ni->npods, 50);
    assert_int_equal(ni->requested.v[SCHED_RES_CPU], 500);
    for (int i = 0; i < 50; i += 2)
        assert_int_equal(sched_node_info_remove_pod(ni, v[i]), 0);
    assert_int_equal(ni->npods, 25);
    assert_int_equal(ni->requested.v[SCHED_RES_CPU], 250);
    for (size_t i = 0; i < ni->npods; i++) {
        int k;
        assert_int_equal(sscanf(sched_node_info_pod(ni, i)->uid, "p%d", &k), 1);
        assert_int_equal(k % 2, 1);
    }
    for (int i = 0; i < 50; i++)
        sched_pod_unref(v[i]);
    sched_node_info_free(ni);
}

static void test_ports(void **state)
{
    (void)state;
    struct sched_node_info *ni = NI(NODE, NULL);
    struct sched_pod *a = pod("a", NULL, "[{\"containerPort\":80,\"hostPort\":8080}]");
    struct sched_pod *b = pod("b", NULL, "[{\"containerPort\":80,\"hostPort\":8080}]");
    struct sched_pod *u = pod("u", NULL,
                              "[{\"containerPort\":53,\"hostPort\":53,\"protocol\":\"UDP\","
                              "\"hostIP\":\"10.0.0.1\"},{\"containerPort\":9}]");

    sched_node_info_add_pod(ni, a);
    sched_node_info_add_pod(ni, b);
    sched_node_info_add_pod(ni, u);
    assert_int_equal(ni->nports, 3);

    /* The same port used twice: removing one pod leaves the other's use. */
    assert_int_equal(sched_node_info_remove_pod(ni, a), 0);
    assert_int_equal(ni->nports, 2);
    {
        bool tcp = false, udp = false;
        for (size_t i = 0; i < ni->nports; i++) {
            if (ni->ports[i].port == 8080 && ni->ports[i].protocol == 0 &&
                !strcmp(ni->ports[i].ip, "0.0.0.0"))
                tcp = true;
            if (ni->ports[i].port == 53 && ni->ports[i].protocol == 1 &&
                !strcmp(ni->ports[i].ip, "10.0.0.1"))
                udp = true;
        }
        assert_true(tcp && udp);
    }
    assert_int_equal(sched_node_info_remove_pod(ni, b), 0);
    assert_int_equal(ni->nports, 1);
    assert_int_equal(ni->ports[0].port, 53);
    assert_int_equal(sched_node_info_remove_pod(ni, u), 0);
    assert_int_equal(ni->nports, 0);

    sched_pod_unref(a);
    sched_pod_unref(b);
    sched_pod_unref(u);
    sched_node_info_free(ni);
}

static void test_affinity_counters(void **state)
{
    (void)state;
    struct sched_node_info *ni = sched_node_info_new("n1");
    struct sched_pod *plain = pod("plain", NULL, NULL);
    struct sched_pod *anti =
        P("{\"metadata\":{\"name\":\"anti\",\"uid\":\"anti\"},\"spec\":{\"affinity\":{"
          "\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{"
          "\"labelSelector\":{},\"topologyKey\":\"h\"}]}}}}");
    struct sched_pod *pref =
        P("{\"metadata\":{\"name\":\"pref\",\"uid\":\"pref\"},\"spec\":{\"affinity\":{"
          "\"podAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":1,"
          "\"podAffinityTerm\":{\"labelSelector\":{},\"topologyKey\":\"h\"}}]}}}}");
    struct sched_pod *req =
        P("{\"metadata\":{\"name\":\"req\",\"uid\":\"req\"},\"spec\":{\"affinity\":{"
          "\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{"
          "\"labelSelector\":{},\"topologyKey\":\"h\"}]}}}}");
    struct sched_pod *prefanti =
        P("{\"metadata\":{\"name\":\"pa\",\"uid\":\"pa\"},\"spec\":{\"affinity\":{"
          "\"podAntiAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":[{"
          "\"weight\":1,\"podAffinityTerm\":{\"labelSelector\":{},\"topologyKey\":\"h\"}}]}}}}");
    /* Node affinity is not pod affinity. */
    struct sched_pod *nodeaff =
        P("{\"metadata\":{\"name\":\"na\",\"uid\":\"na\"},\"spec\":{\"affinity\":{"
          "\"nodeAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":1,"
          "\"preference\":{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Exists\"}]}}]}}}}");

    sched_node_info_add_pod(ni, plain);
    sched_node_info_add_pod(ni, nodeaff);
    assert_int_equal(ni->n_with_affinity, 0);
    assert_int_equal(ni->n_with_required_anti, 0);
    sched_node_info_add_pod(ni, anti);
    assert_int_equal(ni->n_with_affinity, 1);
    assert_int_equal(ni->n_with_required_anti, 1);
    sched_node_info_add_pod(ni, pref);
    sched_node_info_add_pod(ni, req);
    sched_node_info_add_pod(ni, prefanti);
    assert_int_equal(ni->n_with_affinity, 4);
    assert_int_equal(ni->n_with_required_anti, 1);
    assert_int_equal(sched_node_info_remove_pod(ni, anti), 0);
    assert_int_equal(ni->n_with_affinity, 3);
    assert_int_equal(ni->n_with_required_anti, 0);
    assert_int_equal(sched_node_info_remove_pod(ni, pref), 0);
    assert_int_equal(sched_node_info_remove_pod(ni, req), 0);
    assert_int_equal(sched_node_info_remove_pod(ni, prefanti), 0);
    assert_int_equal(sched_node_info_remove_pod(ni, plain), 0);
    assert_int_equal(ni->n_with_affinity, 0);
    assert_int_equal(ni->npods, 1);

    sched_pod_unref(plain);
    sched_pod_unref(anti);
    sched_pod_unref(pref);
    sched_pod_unref(req);
    sched_pod_unref(prefanti);
    sched_pod_unref(nodeaff);
    sched_node_info_free(ni);
}

static void test_clone_independent(void **state)
{
    (void)state;
    struct sched_node_info *ni = NI(NODE, NULL);
    struct sched_pod *a = pod("a", "{\"cpu\":\"1\"}", "[{\"containerPort\":1,\"hostPort\":81}]");
    struct sched_pod *b = pod("b", "{\"cpu\":\"2\"}", "[{\"containerPort\":1,\"hostPort\":82}]");
    struct sched_node_info *c;

    sched_node_info_add_pod(ni, a);
    ni->generation = 7;
    c = sched_node_info_clone(ni);
    assert_ptr_not_equal(c, ni);
    assert_string_equal(c->name, "n1");
    assert_ptr_not_equal(c->name, ni->name);
    assert_ptr_equal(c->node, ni->node);
    assert_int_equal(ni->node->refs, 2);
    /* The test's reference and the chunk's, which ni and c share until one of them changes. */
    assert_int_equal(a->refs, 2);
    assert_ptr_equal(c->chunks[0], ni->chunks[0]);
    assert_int_equal(ni->chunks[0]->refs, 2);
    assert_int_equal(c->generation, 7);
    assert_int_equal(c->npods, 1);
    assert_int_equal(c->requested.v[SCHED_RES_CPU], 1000);
    assert_int_equal(c->nports, 1);

    /* Changes to either side stay there. */
    sched_node_info_add_pod(c, b);
    assert_int_equal(c->npods, 2);
    assert_int_equal(c->nports, 2);
    assert_int_equal(ni->npods, 1);
    assert_int_equal(ni->nports, 1);
    assert_int_equal(ni->requested.v[SCHED_RES_CPU], 1000);
    assert_int_equal(sched_node_info_remove_pod(ni, a), 0);
    assert_int_equal(ni->npods, 0);
    assert_int_equal(ni->nports, 0);
    assert_int_equal(c->npods, 2);
    assert_int_equal(c->requested.v[SCHED_RES_CPU], 3000);
    assert_int_equal(c->ports[0].port, 81);
    sched_node_info_set_node(ni, NULL);
    assert_null(ni->node);
    assert_non_null(c->node);
    assert_int_equal(c->node->refs, 1);

    sched_node_info_free(c);
    assert_int_equal(a->refs, 1);
    assert_int_equal(b->refs, 1);
    sched_pod_unref(a);
    sched_pod_unref(b);
    sched_node_info_free(ni);

    /* An empty one. */
    ni = sched_node_info_new("e");
    c = sched_node_info_clone(ni);
    assert_int_equal(c->npods, 0);
    assert_null(c->node);
    sched_node_info_add_pod(c, (a = pod("a", NULL, NULL)));
    assert_int_equal(ni->npods, 0);
    sched_pod_unref(a);
    sched_node_info_free(c);
    sched_node_info_free(ni);
}

static void test_assign(void **state)
{
    (void)state;
    struct sched_node_info *src = NI(NODE, NULL);
    struct sched_node_info *dst = sched_node_info_new("n1");
    struct sched_pod *a = pod("a", "{\"cpu\":\"1\"}", "[{\"containerPort\":1,\"hostPort\":81}]");
    struct sched_pod *b = pod("b", "{\"cpu\":\"2\"}", NULL);
    struct sched_node_info *keep = dst;

    /* dst had a pod of its own: it goes away with the old contents. */
    sched_node_info_add_pod(dst, b);
    sched_node_info_add_pod(src, a);
    src->generation = 3;
    sched_node_info_assign(dst, src);
    assert_ptr_equal(dst, keep);
    assert_string_equal(dst->name, "n1");
    assert_int_equal(dst->npods, 1);
    assert_ptr_equal(sched_node_info_pod(dst, 0), a);
    assert_int_equal(b->refs, 1);
    assert_int_equal(a->refs, 2); /* the test's and the chunk src and dst share */
    assert_int_equal(dst->chunks[0]->refs, 2);
    assert_ptr_equal(dst->node, src->node);
    assert_int_equal(dst->requested.v[SCHED_RES_CPU], 1000);
    assert_int_equal(dst->generation, 3);

    /* Independent afterwards. */
    assert_int_equal(sched_node_info_remove_pod(src, a), 0);
    assert_int_equal(dst->npods, 1);
    assert_int_equal(dst->nports, 1);
    sched_node_info_add_pod(dst, b);
    assert_int_equal(src->npods, 0);

    sched_node_info_free(dst);
    sched_node_info_free(src);
    assert_int_equal(a->refs, 1);
    assert_int_equal(b->refs, 1);
    sched_pod_unref(a);
    sched_pod_unref(b);
}

static void test_set_node(void **state)
{
    (void)state;
    struct sched_node_info *ni = sched_node_info_new("n1");
    struct sched_node *n1 = N(NODE);
    struct sched_node *n2 = N("{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"2\"}}");
    struct sched_node *n3 = N("{\"metadata\":{\"name\":\"n1\"},\"spec\":{\"unschedulable\":true,"
                              "\"taints\":[{\"key\":\"a\",\"effect\":\"NoSchedule\"},{\"key\":"
                              "\"b\",\"effect\":\"NoExecute\"}]},\"status\":{\"allocatable\":"
                              "{\"cpu\":\"1500m\",\"memory\":\"1Ki\",\"pods\":\"7\"}}}");

    assert_null(ni->node);
    assert_int_equal((uintptr_t)ni % SCHED_CACHE_LINE, 0);
    sched_node_info_set_node(ni, n1);
    assert_ptr_equal(ni->node, n1);
    assert_int_equal(n1->refs, 2);
    /* the first line's copies of the node's fields */
    assert_int_equal(ni->alloc_cpu, 8000);
    assert_int_equal(ni->alloc_mem, 0);
    assert_int_equal(ni->allowed_pods, 0);
    assert_int_equal(ni->ntaints, 0);
    assert_false(ni->unschedulable);
    sched_node_info_set_node(ni, n1); /* the same again */
    assert_int_equal(n1->refs, 2);
    sched_node_info_set_node(ni, n3);
    assert_int_equal(ni->alloc_cpu, 1500);
    assert_int_equal(ni->alloc_mem, 1024);
    assert_int_equal(ni->allowed_pods, 7);
    assert_int_equal(ni->ntaints, 2);
    assert_true(ni->unschedulable);
    sched_node_info_set_node(ni, n2);
    assert_int_equal(n1->refs, 1);
    assert_int_equal(n2->refs, 2);
    assert_int_equal(ni->alloc_cpu, 0);
    assert_int_equal(ni->ntaints, 0);
    assert_false(ni->unschedulable);
    sched_node_info_set_node(ni, n3);
    sched_node_info_set_node(ni, NULL);
    assert_null(ni->node);
    assert_int_equal(ni->alloc_cpu, 0);
    assert_int_equal(ni->allowed_pods, 0);
    assert_int_equal(ni->ntaints, 0);
    assert_false(ni->unschedulable);
    assert_int_equal(n2->refs, 1);
    sched_node_unref(n3);
    sched_node_info_set_node(ni, n2);
    sched_node_unref(n1);
    sched_node_unref(n2);
    sched_node_info_free(ni); /* drops the last reference to n2 */
    sched_node_info_free(NULL);
}

static void test_snapshot_get_and_pods_free(void **state)
{
    (void)state;
    struct sched_snapshot s = {0};
    struct hmap m;
    struct sched_node_info *ni = sched_node_info_new("n1");
    struct sched_pod **v = xcalloc(2, sizeof(*v));
    struct sched_pod *p = pod("p", NULL, NULL);

    assert_null(sched_snapshot_get(&s, "n1"));
    hmap_init(&m);
    hmap_put(&m, "n1", ni);
    s.by_name = &m;
    assert_ptr_equal(sched_snapshot_get(&s, "n1"), ni);
    assert_null(sched_snapshot_get(&s, "n2"));
    hmap_release(&m);
    sched_node_info_free(ni);

    v[0] = sched_pod_ref(p);
    v[1] = sched_pod_ref(p);
    assert_int_equal(p->refs, 3);
    sched_pods_free(v, 2);
    assert_int_equal(p->refs, 1);
    sched_pods_free(NULL, 0);
    sched_pod_unref(p);
}

/* Pods across several chunks: a copy shares them; removing from the original copies only the
 * chunks it touches, the last pod fills the hole, and the copy still sees every pod. */
static void test_chunks_copy_on_write(void **state)
{
    enum { NPODS = 3 * SCHED_POD_CHUNK + 5 };
    struct sched_node_info *ni = NI(NODE, NULL), *c;
    struct sched_pod *v[NPODS], *moved;
    (void)state;

    for (int i = 0; i < NPODS; i++) {
        char u[16];
        (void)snprintf(u, sizeof(u), "p%d", i);
        v[i] = pod(u, "{\"cpu\":\"1m\"}", NULL);
        sched_node_info_add_pod(ni, v[i]);
    }
    assert_int_equal(ni->nchunks, 4);
    c = sched_node_info_clone(ni);
    for (size_t k = 0; k < 4; k++)
        assert_ptr_equal(c->chunks[k], ni->chunks[k]);

    /* Index 10 (chunk 0) goes; the last pod (chunk 3) takes its place. */
    moved = sched_node_info_remove_pod_at(ni, 10);
    assert_ptr_equal(moved, v[NPODS - 1]);
    assert_ptr_equal(sched_node_info_pod(ni, 10), v[NPODS - 1]);
    assert_int_equal(ni->npods, NPODS - 1);
    assert_int_equal(ni->requested.v[SCHED_RES_CPU], NPODS - 1);
    assert_ptr_not_equal(ni->chunks[0], c->chunks[0]);
    assert_ptr_equal(ni->chunks[1], c->chunks[1]); /* untouched: still shared */
    assert_ptr_equal(ni->chunks[2], c->chunks[2]);
    assert_ptr_not_equal(ni->chunks[3], c->chunks[3]);
    for (int i = 0; i < NPODS; i++)
        assert_ptr_equal(sched_node_info_pod(c, (size_t)i), v[i]);
    assert_int_equal(c->npods, NPODS);

    /* Removing the last pod moves nothing; emptying the last chunk drops it. */
    for (int i = 0; i < 4; i++)
        assert_null(sched_node_info_remove_pod_at(ni, ni->npods - 1));
    assert_int_equal(ni->nchunks, 3);
    assert_int_equal(ni->npods, 3 * SCHED_POD_CHUNK);
    assert_int_equal(v[10]->refs, 2); /* the test's and c's chunk */
    sched_node_info_free(c);
    assert_int_equal(v[10]->refs, 1);
    sched_node_info_free(ni);
    for (int i = 0; i < NPODS; i++) {
        assert_int_equal(v[i]->refs, 1);
        sched_pod_unref(v[i]);
    }
}

/* Plugins' memos: a slot per live instance, owners never reused, kept by clone and assign. */
static void test_memos(void **state)
{
    struct sched_memo_key a, b, c, d;
    struct sched_node_info *ni = sched_node_info_new("n1"), *copy, *snap;
    int x = 1, y = 2;

    (void)state;
    sched_node_memo_claim(&a);
    sched_node_memo_claim(&b);
    sched_node_memo_claim(&c); /* SCHED_NODE_MEMOS is 2: none left */
    assert_true(a.slot >= 0 && b.slot >= 0 && a.slot != b.slot);
    assert_int_equal(c.slot, -1);
    assert_true(a.owner != b.owner && b.owner != c.owner);
    assert_null(sched_node_memo_get(ni, &a));
    sched_node_memo_set(ni, &a, &x);
    sched_node_memo_set(ni, &b, &y);
    sched_node_memo_set(ni, &c, &x); /* no slot: nothing kept */
    assert_ptr_equal(sched_node_memo_get(ni, &a), &x);
    assert_ptr_equal(sched_node_memo_get(ni, &b), &y);
    assert_null(sched_node_memo_get(ni, &c));
    /* A copy names the same node; a snapshot's NodeInfo keeps its memos when the cache's
     * (which no plugin reads) is assigned over it. */
    copy = sched_node_info_clone(ni);
    assert_ptr_equal(sched_node_memo_get(copy, &a), &x);
    snap = sched_node_info_new("n1");
    sched_node_memo_set(snap, &b, &x);
    sched_node_info_assign(snap, ni);
    assert_ptr_equal(sched_node_memo_get(snap, &b), &x);
    /* A released slot goes to a new owner, which does not see the old one's memo. */
    sched_node_memo_release(&a);
    assert_int_equal(a.slot, -1);
    sched_node_memo_claim(&d);
    assert_true(d.slot >= 0);
    assert_null(sched_node_memo_get(ni, &d));
    sched_node_memo_release(&b);
    sched_node_memo_release(&c);
    sched_node_memo_release(&d);
    sched_node_memo_release(NULL);
    sched_node_info_free(snap);
    sched_node_info_free(copy);
    sched_node_info_free(ni);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_remove_requests),
        cmocka_unit_test(test_many_pods),
        cmocka_unit_test(test_ports),
        cmocka_unit_test(test_affinity_counters),
        cmocka_unit_test(test_clone_independent),
        cmocka_unit_test(test_assign),
        cmocka_unit_test(test_chunks_copy_on_write),
        cmocka_unit_test(test_set_node),
        cmocka_unit_test(test_snapshot_get_and_pods_free),
        cmocka_unit_test(test_memos),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
