/*
 * Tests for the ElasticQuota tree and runtime calculator (quota_tree.h; reference
 * koordlet-and-scheduler.md 5.4, scheduler.md 8.5): the water-filling on one dimension against
 * the proposal's worked example and its rounding rules, then whole trees of three levels with
 * every runtime computed by hand in the comments, min auto-scaling, trees of their own
 * (is-root with total-resource), pod-to-quota resolution, and the decoding of labels and
 * annotations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "base/strbuf.h"
#include "sched/plugins/elasticquota/quota_tree.h"
#include "sched/schedtest.h"

#define CPU(q, name) (eq_tree_get(q, name)->runtime.v[SCHED_RES_CPU])

/* The proposal's example: 45 spare units by weights 60/50/80 -> 14/12/19 (largest remainder:
 * 14.2, 11.8, 18.9 floor to 14/11/18, the 2 left go to the remainders .95 and .84); the first
 * needs only 5, its 9 extra are re-split 50:80 -> 9*50/130 = 3.46, 9*80/130 = 5.54 -> 3/5 and
 * the unit left to the larger remainder: 3/6. Final 5, 15, 25. */
static void test_share_worked_example(void **unused)
{
    const int64_t m[] = {0, 0, 0}, req[] = {5, 100, 100}, w[] = {60, 50, 80};
    const bool lent[] = {true, true, true};
    const char *const names[] = {"a", "b", "c"};
    int64_t rt[3];

    (void)unused;
    eq_share(3, m, req, w, lent, names, 45, rt);
    assert_int_equal(rt[0], 5);
    assert_int_equal(rt[1], 15);
    assert_int_equal(rt[2], 25);
}

static void test_share_rules(void **unused)
{
    const bool lent[] = {true, true}, nolent[] = {false, true};
    const char *const names[] = {"b", "a"};
    int64_t rt[2];

    (void)unused;
    /* One unit, equal weights and remainders: the name first in order ("a", index 1) wins. */
    eq_share(2, (const int64_t[]){0, 0}, (const int64_t[]){10, 10}, (const int64_t[]){1, 1}, lent,
             names, 1, rt);
    assert_int_equal(rt[0], 0);
    assert_int_equal(rt[1], 1);
    /* Requests below min: lent -> the request; not lent -> the min. 10 - 3 - 4 = 3 left, and
     * nobody borrows. */
    eq_share(2, (const int64_t[]){5, 4}, (const int64_t[]){3, 2}, (const int64_t[]){1, 1}, nolent,
             names, 10, rt);
    assert_int_equal(rt[0], 5);
    assert_int_equal(rt[1], 2);
    /* A borrower with weight 0 stays at its min; the other takes what it asks. */
    eq_share(2, (const int64_t[]){1, 1}, (const int64_t[]){8, 8}, (const int64_t[]){0, 3}, lent,
             names, 10, rt);
    assert_int_equal(rt[0], 1);
    assert_int_equal(rt[1], 8);
    /* Mins above the budget: nobody borrows, each keeps its min. */
    eq_share(2, (const int64_t[]){6, 6}, (const int64_t[]){9, 9}, (const int64_t[]){1, 1}, lent,
             names, 10, rt);
    assert_int_equal(rt[0], 6);
    assert_int_equal(rt[1], 6);
    /* Weights of MaxInt64/5 (the default quota's) do not overflow. */
    eq_share(2, (const int64_t[]){0, 0}, (const int64_t[]){INT64_MAX / 4, INT64_MAX / 4},
             (const int64_t[]){INT64_MAX / 5, INT64_MAX / 5}, lent, names, 1000001, rt);
    assert_int_equal(rt[0] + rt[1], 1000001);
    assert_int_equal(rt[1], 500001);
}

/* A quota object: name, parent ("" none), is-parent, min cpu, max cpu (cores), extra labels and
 * annotations as single-quoted JSON members (may be ""). */
static void put(struct eq_tree *t, const char *name, const char *parent, bool is_parent,
                const char *min, const char *max, const char *labels, const char *anns)
{
    char buf[2048];
    struct eq_spec s;
    char *warn = NULL;
    cJSON *o;

    (void)snprintf(buf, sizeof(buf),
                   "{'metadata':{'name':'%s','namespace':'ns-%s','labels':{%s%s%s%s%s%s},"
                   "'annotations':{%s}},'spec':{'min':{'cpu':'%s'},'max':{'cpu':'%s',"
                   "'memory':'100Gi'}}}",
                   name, name, *parent ? "'" EQ_LABEL_PARENT "':'" : "", parent, *parent ? "'" : "",
                   is_parent ? (*parent ? "," : "") : "",
                   is_parent ? "'" EQ_LABEL_IS_PARENT "':'true'" : "",
                   *labels ? (*parent || is_parent ? "," : "") : "", anns, min, max);
    /* Extra labels go in after parent and is-parent. */
    if (*labels) {
        char *end = strstr(buf, "},'annotations'");
        char tail[2048];
        (void)snprintf(tail, sizeof(tail), "%s", end);
        (void)snprintf(end, sizeof(buf) - (size_t)(end - buf), "%s%s", labels, tail);
    }
    o = fx_json(buf);
    assert_int_equal(eq_spec_decode(o, &s, &warn), 0);
    if (warn)
        fail_msg("%s: %s", name, warn);
    eq_tree_put(t, &s);
    cJSON_Delete(o);
}

static void charge(struct eq_tree *t, const char *quota, int64_t milli, bool assigned)
{
    struct sched_res r = {0};

    r.v[SCHED_RES_CPU] = milli;
    assert_int_equal(eq_tree_charge(t, quota, &r, 1, assigned ? 1 : 0), 0);
}

/*
 * Three levels under the cluster (10 cores); cpu is shared in milli-cores, as upstream shares
 * MilliValue():
 *   P1 (is-parent, min 4, max 10) -> L1 (is-parent, min 2, max 8) -> X (min 1, max 8)
 *                                                                  -> Y (min 1, max 8)
 *                                 -> L2 (min 2, max 8)
 *   P2 (min 2, max 6)
 * Pending requests: X 4, Y 3, L2 1, P2 5 cores. Weights are max.
 *   request: L1 = min(4,8)+min(3,8) = 7; P1 = min(7,8)+min(1,8) = 8; P2 = 5.
 *   top, T = 10000: P1 m 4000 < 8000 borrows (w 10000), P2 m 2000 < 5000 borrows (w 6000);
 *     rest 4000 by 10:6 -> 2500, 1500: P1 6500, P2 3500.
 *   P1, T = 6500: L2 wants 1000 <= m 2000 and lends -> 1000; L1 m 2000 < 7000 borrows; rest
 *     3500 -> L1 5500.
 *   L1, T = 5500: X, Y m 1000 each, both borrow (w 8000 each); rest 3500 -> 1750 each: 2750.
 * Then a default-quota pod of 1 core is placed: T = 9000.
 *   top: rest 3000 -> 1875, 1125: P1 5875, P2 3125.  P1: L2 1000, L1 2000 + 2875 = 4875.
 *   L1: rest 2875 -> 1437.5 each: 1437, 1437 and the last unit to the equal remainders' first
 *     name, X: X 2438, Y 2437.
 */
static void test_tree_three_levels(void **unused)
{
    struct eq_tree *t = eq_tree_new();
    struct sched_res total = {0};
    struct eq_spec def = {0};

    (void)unused;
    put(t, "p1", "", true, "4", "10", "", "");
    put(t, "l1", "p1", true, "2", "8", "", "");
    put(t, "x", "l1", false, "1", "8", "", "");
    put(t, "y", "l1", false, "1", "8", "", "");
    put(t, "l2", "p1", false, "2", "8", "", "");
    put(t, "p2", "", false, "2", "6", "", "");
    def.name = xstrdup(EQ_DEFAULT_QUOTA);
    def.namespace = xstrdup("koordinator-system");
    def.parent = xstrdup(EQ_ROOT_QUOTA);
    def.tree_id = xstrdup("");
    eq_tree_put(t, &def);
    total.v[SCHED_RES_CPU] = 10000;
    eq_tree_set_total(t, &total);
    charge(t, "x", 4000, false);
    charge(t, "y", 3000, false);
    charge(t, "l2", 1000, false);
    charge(t, "p2", 5000, false);
    eq_tree_compute(t, true);
    assert_int_equal(eq_tree_get(t, "l1")->request.v[SCHED_RES_CPU], 7000);
    assert_int_equal(eq_tree_get(t, "p1")->request.v[SCHED_RES_CPU], 8000);
    assert_int_equal(CPU(t, "p1"), 6500);
    assert_int_equal(CPU(t, "p2"), 3500);
    assert_int_equal(CPU(t, "l1"), 5500);
    assert_int_equal(CPU(t, "l2"), 1000);
    assert_int_equal(CPU(t, "x"), 2750);
    assert_int_equal(CPU(t, "y"), 2750);
    assert_true(eq_tree_get(t, "x")->has_runtime);
    assert_false(eq_tree_get(t, EQ_DEFAULT_QUOTA)->has_runtime);
    assert_ptr_equal(eq_tree_get(t, "x")->parent, eq_tree_get(t, "l1"));

    charge(t, EQ_DEFAULT_QUOTA, 1000, true);
    eq_tree_compute(t, true);
    assert_int_equal(CPU(t, "p1"), 5875);
    assert_int_equal(CPU(t, "p2"), 3125);
    assert_int_equal(CPU(t, "l1"), 4875);
    assert_int_equal(CPU(t, "l2"), 1000);
    assert_int_equal(CPU(t, "x"), 2438);
    assert_int_equal(CPU(t, "y"), 2437);

    /* used sums up the tree; requests going down give runtime back. X: a 1-core pod placed,
     * the 4 cores pending gone -> X request 1000, L1 4000, P1 5000. top, T = 9000: rest 3000
     * -> P1 4000 + 1875 capped at 5000 (875 back), P2 2000 + 1125; round 2: P2 + 875 = 4000.
     * P1, T = 5000: L2 1000, L1 2000 + 2000 = 4000 (its request). L1, T = 4000: X wants 1000
     * <= m and lends -> 1000, Y 1000 + 2000 = 3000. */
    charge(t, "x", 1000, true);
    assert_int_equal(
        eq_tree_charge(t, "x", &(struct sched_res){.v = {[SCHED_RES_CPU] = 4000}}, -1, 0), 0);
    eq_tree_compute(t, true);
    assert_int_equal(eq_tree_get(t, "p1")->used.v[SCHED_RES_CPU], 1000);
    assert_int_equal(eq_tree_get(t, "l1")->request.v[SCHED_RES_CPU], 4000);
    assert_int_equal(CPU(t, "p1"), 5000);
    assert_int_equal(CPU(t, "p2"), 4000);
    assert_int_equal(CPU(t, "l1"), 4000);
    assert_int_equal(CPU(t, "x"), 1000);
    assert_int_equal(CPU(t, "y"), 3000);
    assert_int_equal(eq_tree_charge(t, "nope", &total, 1, 0), -ENOENT);
    eq_tree_free(t);
}

/* Min auto-scaling: mins 4 + 4 over a budget of 4 shrink to 2 + 2; without it each keeps 4. A
 * tree of its own (is-root with a total-resource annotation) shares its total, not the
 * cluster's: R total 3 cores, child C min 1 wants 5 -> 3. */
static void test_tree_scale_min_and_own_root(void **unused)
{
    struct eq_tree *t = eq_tree_new();
    struct sched_res total = {0};

    (void)unused;
    put(t, "a", "", false, "4", "10", "", "");
    put(t, "b", "", false, "4", "10", "", "");
    put(t, "r", "", true, "0", "3", "'" EQ_LABEL_IS_ROOT "':'true'",
        "'" EQ_ANN_TOTAL "':'{\\\"cpu\\\":\\\"3\\\"}'");
    put(t, "c", "r", false, "1", "5", "", "");
    charge(t, "a", 10000, false);
    charge(t, "b", 10000, false);
    charge(t, "c", 5000, false);
    total.v[SCHED_RES_CPU] = 4000;
    eq_tree_set_total(t, &total);
    eq_tree_compute(t, true);
    assert_int_equal(CPU(t, "a"), 2000);
    assert_int_equal(CPU(t, "b"), 2000);
    assert_int_equal(eq_tree_get(t, "a")->scaled_min.v[SCHED_RES_CPU], 2000);
    assert_int_equal(CPU(t, "r"), 3000);
    assert_int_equal(CPU(t, "c"), 3000);
    eq_tree_compute(t, false);
    assert_int_equal(CPU(t, "a"), 4000);
    assert_int_equal(CPU(t, "b"), 4000);
    /* Deleting its parent makes c a top-level quota, sharing the cluster with a and b. */
    assert_int_equal(eq_tree_del(t, "r"), 0);
    assert_int_equal(eq_tree_del(t, "r"), -ENOENT);
    eq_tree_compute(t, true);
    assert_null(eq_tree_get(t, "c")->parent);
    eq_tree_free(t);
}

/*
 * The tree keeps its shape between computes and rebuilds it after a quota is added, moved or
 * removed: a tree reshaped after computing gives every quota what a tree built in the final
 * shape from scratch gives it.
 */
static void reshape_build(struct eq_tree *t, bool final)
{
    struct sched_res total = {.v = {[SCHED_RES_CPU] = 10000}};

    put(t, "p1", "", true, "4", "10", "", "");
    put(t, "l1", "p1", true, "2", "8", "", "");
    put(t, "x", "l1", false, "1", "8", "", "");
    /* y moves from l1 to p2, which becomes a parent; l2 goes; z comes under p2 */
    put(t, "y", final ? "p2" : "l1", false, "1", "8", "", "");
    put(t, "p2", "", final, "2", "6", "", "");
    if (!final)
        put(t, "l2", "p1", false, "2", "8", "", "");
    else
        put(t, "z", "p2", false, "1", "4", "", "");
    eq_tree_set_total(t, &total);
    charge(t, "x", 4000, false);
    charge(t, "y", 3000, false);
    if (final)
        charge(t, "z", 2000, true);
}

static void test_tree_reshape(void **unused)
{
    struct eq_tree *t = eq_tree_new(), *fresh = eq_tree_new();
    static const char *const quotas[] = {"p1", "l1", "x", "y", "p2", "z"};

    (void)unused;
    reshape_build(t, false);
    charge(t, "l2", 1000, false);
    eq_tree_compute(t, true);
    assert_ptr_equal(eq_tree_get(t, "y")->parent, eq_tree_get(t, "l1"));
    /* reshaped: y moved, l2 deleted, z added and charged, p2 a parent now */
    put(t, "y", "p2", false, "1", "8", "", "");
    eq_tree_compute(t, true); /* a move alone reshapes */
    assert_ptr_equal(eq_tree_get(t, "y")->parent, eq_tree_get(t, "p2"));
    assert_int_equal(eq_tree_get(t, "l1")->nchildren, 1);
    assert_int_equal(eq_tree_del(t, "l2"), 0);
    put(t, "p2", "", true, "2", "6", "", "");
    put(t, "z", "p2", false, "1", "4", "", "");
    charge(t, "z", 2000, true);
    eq_tree_compute(t, true);
    reshape_build(fresh, true);
    eq_tree_compute(fresh, true);
    assert_ptr_equal(eq_tree_get(t, "y")->parent, eq_tree_get(t, "p2"));
    assert_int_equal(eq_tree_get(t, "p1")->nchildren, 1);
    assert_int_equal(eq_tree_get(t, "p2")->nchildren, 2);
    for (size_t i = 0; i < sizeof(quotas) / sizeof(quotas[0]); i++) {
        const struct eq_quota *a = eq_tree_get(t, quotas[i]), *b = eq_tree_get(fresh, quotas[i]);
        if (a->runtime.v[SCHED_RES_CPU] != b->runtime.v[SCHED_RES_CPU] ||
            a->request.v[SCHED_RES_CPU] != b->request.v[SCHED_RES_CPU] ||
            a->used.v[SCHED_RES_CPU] != b->used.v[SCHED_RES_CPU])
            fail_msg("%s: runtime %lld request %lld used %lld, from scratch %lld %lld %lld",
                     quotas[i], (long long)a->runtime.v[SCHED_RES_CPU],
                     (long long)a->request.v[SCHED_RES_CPU], (long long)a->used.v[SCHED_RES_CPU],
                     (long long)b->runtime.v[SCHED_RES_CPU], (long long)b->request.v[SCHED_RES_CPU],
                     (long long)b->used.v[SCHED_RES_CPU]);
    }
    /* and the moved quota's runtime is not what it had under l1 */
    assert_int_equal(eq_tree_get(t, "z")->used.v[SCHED_RES_CPU], 2000);
    assert_int_equal(eq_tree_get(t, "p2")->used.v[SCHED_RES_CPU], 2000);
    eq_tree_free(t);
    eq_tree_free(fresh);
}

static void test_resolve(void **unused)
{
    struct eq_tree *t = eq_tree_new();
    cJSON *l1 = fx_json("{'" EQ_LABEL_POD_QUOTA "':'team'}");
    cJSON *l2 = fx_json("{'" EQ_LABEL_POD_QUOTA "':'missing'}");

    (void)unused;
    put(t, "team", "", false, "0", "1", "", "");
    put(t, "spread", "", false, "0", "1", "", "'" EQ_ANN_NAMESPACES "':'[\\\"a\\\",\\\"b\\\"]'");
    assert_string_equal(eq_tree_resolve(t, l1, "any"), "team");
    assert_string_equal(eq_tree_resolve(t, l2, "any"), EQ_DEFAULT_QUOTA);
    assert_string_equal(eq_tree_resolve(t, NULL, "b"), "spread");
    assert_string_equal(eq_tree_resolve(t, NULL, "c"), EQ_DEFAULT_QUOTA);
    /* A quota named like the namespace counts only in that namespace (put() places quota
     * "ns-q" in namespace "ns-ns-q"). */
    put(t, "ns-q", "", false, "0", "1", "", "");
    assert_string_equal(eq_tree_resolve(t, NULL, "ns-q"), EQ_DEFAULT_QUOTA);
    {
        struct eq_spec s;
        char *warn = NULL;
        cJSON *o = fx_json("{'metadata':{'name':'ns1','namespace':'ns1'},'spec':{}}");
        assert_int_equal(eq_spec_decode(o, &s, &warn), 0);
        eq_tree_put(t, &s);
        cJSON_Delete(o);
    }
    assert_string_equal(eq_tree_resolve(t, NULL, "ns1"), "ns1");
    cJSON_Delete(l1);
    cJSON_Delete(l2);
    eq_tree_free(t);
}

static void test_decode(void **unused)
{
    cJSON *o = fx_json("{'metadata':{'name':'q','namespace':'n','labels':{'" EQ_LABEL_LENT
                       "':'false','" EQ_LABEL_TREE_ID "':'7'},'annotations':{'" EQ_ANN_WEIGHT
                       "':'{\\\"cpu\\\":\\\"0\\\"}','" EQ_ANN_NAMESPACES "':'x'}},"
                       "'spec':{'min':{'cpu':'500m'},'max':{'cpu':'2','memory':'1Gi',"
                       "'pods':'10','bad':'x'}}}");
    struct strbuf sb = STRBUF_INIT;
    struct eq_spec s;
    char *warn = NULL;

    (void)unused;
    assert_int_equal(eq_spec_decode(o, &s, &warn), 0);
    assert_string_equal(s.parent, EQ_ROOT_QUOTA);
    assert_string_equal(s.tree_id, "7");
    assert_false(s.allow_lent);
    assert_false(s.is_parent);
    assert_int_equal(s.min.v[SCHED_RES_CPU], 500);
    assert_int_equal(s.max.v[SCHED_RES_CPU], 2000);
    assert_int_equal(s.max.v[SCHED_RES_MEMORY], 1024LL * 1024 * 1024);
    /* "pods" is not counted; an all-zero weight falls back to max. */
    assert_int_equal(s.max_mask, (1u << SCHED_RES_CPU) | (1u << SCHED_RES_MEMORY));
    assert_int_equal(s.weight.v[SCHED_RES_CPU], 2000);
    assert_non_null(warn);
    assert_non_null(strstr(warn, "spec.max.bad: not a non-negative quantity"));
    assert_non_null(strstr(warn, "annotation " EQ_ANN_NAMESPACES ": not JSON"));
    eq_res_format(&s.max, s.max_mask, &sb);
    assert_string_equal(sb.buf, "map[cpu:2 memory:1Gi]");
    free(warn);
    eq_spec_release(&s);
    strbuf_release(&sb);
    cJSON_Delete(o);
    o = fx_json("{'metadata':{'namespace':'n'}}");
    assert_int_equal(eq_spec_decode(o, &s, &warn), -EINVAL);
    eq_spec_release(&s);
    cJSON_Delete(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_share_worked_example),
        cmocka_unit_test(test_share_rules),
        cmocka_unit_test(test_tree_three_levels),
        cmocka_unit_test(test_tree_scale_min_and_own_root),
        cmocka_unit_test(test_tree_reshape),
        cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_decode),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
