/*
 * DefaultPreemption (src/sched/plugins/defaultpreemption/default_preemption.c): args, the
 * number of candidates, eligibility, victims on one node (reprieve, importance order, PDBs),
 * the dry run's offset and stop rule, the node choice's tie-break order, and PostFilter end to
 * end with its messages. Expected values are worked out by hand from reference scheduler.md 5.7
 * and 2.2 in the comments beside each case.
 *
 * The plugin's .c is included to reach its functions. "Fits" is a stand-in Filter: the pod fits
 * when the node's requested cpu plus the pod's stays within the node's allocatable cpu, failing
 * with "Insufficient cpu" otherwise. PostFilter runs against a fake framework handle defined
 * here (the real one is in runtime.c, which this test does not link).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "sched/plugins/defaultpreemption/default_preemption.c" /* NOLINT(bugprone-suspicious-include) */
#include "sched/schedtest.h"

/* ---- the stand-in Filter and a fake handle ---- */

static int fits_calls;

static enum sched_code cpu_fits(void *ud, struct sched_cycle *cs, const struct sched_pod *pod,
                                const struct sched_node_info *ni, struct sched_status *st)
{
    (void)ud;
    (void)cs;
    fits_calls++;
    if (ni->requested.v[SCHED_RES_CPU] + pod->req.v[SCHED_RES_CPU] >
        ni->node->allocatable.v[SCHED_RES_CPU])
        return sched_status_set(st, SCHED_UNSCHEDULABLE, "Insufficient cpu");
    return SCHED_SUCCESS;
}

static const struct dp_ops test_ops = {cpu_fits, NULL, NULL, NULL, NULL};

struct sched_handle {
    struct sched_snapshot snap;
    struct hmap by_name;
    struct sched_pod **nominated; /* pods nominated to any node (by their nominated_node) */
    size_t nnominated;
};

const struct sched_snapshot *sched_handle_snapshot(const struct sched_handle *h)
{
    return h ? &h->snap : NULL;
}

struct kube_client *sched_handle_client(const struct sched_handle *h)
{
    (void)h;
    return NULL;
}

struct kube_recorder *sched_handle_recorder(const struct sched_handle *h)
{
    (void)h;
    return NULL;
}

const char *sched_handle_profile_name(const struct sched_handle *h)
{
    (void)h;
    return "default-scheduler";
}

enum sched_code sched_handle_run_filters(struct sched_handle *h, struct sched_cycle *cs,
                                         const struct sched_pod *pod,
                                         const struct sched_node_info *ni, struct sched_status *st)
{
    return cpu_fits(h, cs, pod, ni, st);
}

enum sched_code sched_handle_run_add_pod(struct sched_handle *h, struct sched_cycle *cs,
                                         const struct sched_pod *pod, struct sched_pod *add,
                                         struct sched_node_info *ni, struct sched_status *st)
{
    (void)h;
    (void)cs;
    (void)pod;
    (void)add;
    (void)ni;
    (void)st;
    return SCHED_SUCCESS;
}

enum sched_code sched_handle_run_remove_pod(struct sched_handle *h, struct sched_cycle *cs,
                                            const struct sched_pod *pod, struct sched_pod *rm,
                                            struct sched_node_info *ni, struct sched_status *st)
{
    (void)h;
    (void)cs;
    (void)pod;
    (void)rm;
    (void)ni;
    (void)st;
    return SCHED_SUCCESS;
}

size_t sched_handle_nominated(struct sched_handle *h, const char *node, struct sched_pod ***ret)
{
    size_t n = 0;

    *ret = xcalloc(h->nnominated ? h->nnominated : 1, sizeof(struct sched_pod *));
    for (size_t i = 0; i < h->nnominated; i++)
        if (!strcmp(h->nominated[i]->nominated_node, node))
            (*ret)[n++] = sched_pod_ref(h->nominated[i]);
    return n;
}

/* ---- fixtures ---- */

/*
 * A pod: name (also its uid), priority, cpu request, creation minute (2024-01-01T00:MM:00Z) and
 * extra JSON: more metadata members (labels, deletionTimestamp) and spec members.
 */
static struct sched_pod *mkpod(const char *name, int64_t prio, const char *cpu, int minute,
                               const char *meta, const char *spec)
{
    char buf[2048];

    (void)snprintf(buf, sizeof(buf),
                   "{\"metadata\":{\"name\":\"%s\",\"uid\":\"uid-%s\",\"namespace\":\"default\","
                   "\"creationTimestamp\":\"2024-01-01T00:%02d:00Z\"%s%s},"
                   "\"spec\":{\"priority\":%lld,\"containers\":[{\"name\":\"c\",\"resources\":"
                   "{\"requests\":{\"cpu\":\"%s\"}}}]%s%s}}",
                   name, name, minute, *meta ? "," : "", meta, (long long)prio, cpu,
                   *spec ? "," : "", spec);
    return P(buf);
}

#define POD(name, prio, cpu, minute) mkpod(name, prio, cpu, minute, "", "")

/* A NodeInfo of a node with cpu allocatable, holding the given pods (references taken over;
 * NULL-terminated). */
static struct sched_node_info *mknode(const char *name, const char *cpu, ...)
{
    char buf[512];
    struct sched_node *n;
    struct sched_node_info *ni = sched_node_info_new(name);
    struct sched_pod *p;
    va_list ap;

    (void)snprintf(buf, sizeof(buf),
                   "{\"metadata\":{\"name\":\"%s\"},\"status\":{\"allocatable\":{\"cpu\":\"%s\","
                   "\"pods\":\"110\"}}}",
                   name, cpu);
    n = N(buf);
    sched_node_info_set_node(ni, n);
    sched_node_unref(n);
    va_start(ap, cpu);
    while ((p = va_arg(ap, struct sched_pod *))) {
        sched_node_info_add_pod(ni, p);
        sched_pod_unref(p);
    }
    va_end(ap);
    return ni;
}

/* The victims' names, joined with ','. */
static const char *names(const struct dp_victims *v)
{
    static char buf[512];
    size_t len = 0;

    buf[0] = 0;
    for (size_t i = 0; i < v->n; i++)
        len +=
            (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? "," : "", v->pods[i]->name);
    return buf;
}

static struct dp_pdbs pdbs_of(const char *json)
{
    struct dp_pdbs p;
    cJSON *list = cJSON_Parse(json);

    assert_non_null(list);
    dp_pdbs_from_list(list, &p);
    return p;
}

/* ---- args ---- */

static void expect_err(const struct field_errors *e, size_t i, const char *field, const char *value,
                       const char *detail)
{
    assert_true(i < e->n);
    assert_int_equal(e->v[i].type, FIELD_INVALID);
    assert_string_equal(e->v[i].field, field);
    assert_string_equal(e->v[i].value, value);
    assert_string_equal(e->v[i].detail, detail);
}

static int init_json(const char *json, void **self, struct field_errors *errs)
{
    cJSON *a = json ? cJSON_Parse(json) : NULL;
    int r = sched_plugin_default_preemption.init(a, "args", NULL, self, errs);

    cJSON_Delete(a);
    return r;
}

static void test_args(void **state)
{
    struct field_errors e = FIELD_ERRORS_INIT;
    void *self = NULL;
    struct dp *pl;

    (void)state;
    /* Defaults (v1 defaults.go): 10 %, 100 nodes. */
    assert_int_equal(init_json(NULL, &self, &e), 0);
    pl = self;
    assert_int_equal(pl->args.min_pct, 10);
    assert_int_equal(pl->args.min_abs, 100);
    sched_plugin_default_preemption.free(self);

    assert_int_equal(init_json("{\"apiVersion\":\"kubescheduler.config.k8s.io/v1\","
                               "\"kind\":\"DefaultPreemptionArgs\","
                               "\"minCandidateNodesPercentage\":0,\"minCandidateNodesAbsolute\":5}",
                               &self, &e),
                     0);
    pl = self;
    assert_int_equal(pl->args.min_pct, 0);
    assert_int_equal(pl->args.min_abs, 5);
    sched_plugin_default_preemption.free(self);
    assert_int_equal(e.n, 0);

    self = NULL;
    assert_int_equal(init_json("{\"minCandidateNodesPercentage\":101}", &self, &e), -EINVAL);
    assert_null(self);
    assert_int_equal(e.n, 1);
    expect_err(&e, 0, "args.minCandidateNodesPercentage", "101", "not in valid range [0, 100]");
    field_errors_release(&e);

    field_errors_init(&e);
    assert_int_equal(init_json("{\"minCandidateNodesPercentage\":-1,"
                               "\"minCandidateNodesAbsolute\":-3}",
                               &self, &e),
                     -EINVAL);
    assert_int_equal(e.n, 2);
    expect_err(&e, 0, "args.minCandidateNodesPercentage", "-1", "not in valid range [0, 100]");
    expect_err(&e, 1, "args.minCandidateNodesAbsolute", "-3", "not in valid range [0, inf)");
    field_errors_release(&e);

    /* Both zero: one error on each field. */
    field_errors_init(&e);
    assert_int_equal(init_json("{\"minCandidateNodesPercentage\":0,"
                               "\"minCandidateNodesAbsolute\":0}",
                               &self, &e),
                     -EINVAL);
    assert_int_equal(e.n, 2);
    expect_err(&e, 0, "args.minCandidateNodesPercentage", "0",
               "cannot be zero at the same time as minCandidateNodesAbsolute");
    expect_err(&e, 1, "args.minCandidateNodesAbsolute", "0",
               "cannot be zero at the same time as minCandidateNodesPercentage");
    field_errors_release(&e);

    field_errors_init(&e);
    assert_int_equal(init_json("{\"minCandidateNodesAbsolute\":\"x\",\"foo\":1}", &self, &e),
                     -EINVAL);
    assert_int_equal(e.n, 2);
    assert_int_equal(e.v[0].type, FIELD_UNKNOWN);
    assert_string_equal(e.v[0].field, "args.foo");
    expect_err(&e, 1, "args.minCandidateNodesAbsolute", "\"x\"", "must be an integer");
    field_errors_release(&e);

    field_errors_init(&e);
    assert_int_equal(init_json("{\"minCandidateNodesPercentage\":2.5}", &self, &e), -EINVAL);
    expect_err(&e, 0, "args.minCandidateNodesPercentage", "2.5", "must be an integer");
    field_errors_release(&e);
}

static void test_num_candidates(void **state)
{
    /* clamp(n * pct / 100 (integer division), abs, n). */
    static const struct {
        int32_t pct, abs;
        size_t n, want;
    } t[] = {
        {10, 100, 5000, 500},                /* 10 % of 5000 beats the floor of 100 */
        {10, 100, 1000, 100},                /* 100 = the floor */
        {10, 100, 500, 100},                 /* 50 < 100 */
        {10, 100, 30, 30},                   /* never more than the nodes */
        {50, 0, 10, 5},       {5, 0, 10, 0}, /* 10 * 5 / 100 = 0, no floor */
        {100, 0, 7, 7},       {0, 3, 1000, 3},
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
        struct dp_args a = {t[i].pct, t[i].abs};
        assert_int_equal(dp_num_candidates(&a, t[i].n), t[i].want);
    }
}

/* ---- eligibility ---- */

static void test_eligible(void **state)
{
    struct sched_pod *never = mkpod("p", 10, "1", 0, "", "\"preemptionPolicy\":\"Never\"");
    struct sched_pod *plain = POD("p", 10, "1", 0), *nom;
    struct sched_node_info *n1, *n2;
    const char *why = NULL;

    (void)state;
    /* A pod nominated to n1. */
    nom = P("{\"metadata\":{\"name\":\"p\",\"uid\":\"uid-p\",\"namespace\":\"default\"},"
            "\"spec\":{\"priority\":10},\"status\":{\"nominatedNodeName\":\"n1\"}}");
    /* n1 holds a lower-priority pod on its way out; n2 only a higher-priority one. */
    n1 = mknode("n1", "4",
                mkpod("old", 5, "1", 0, "\"deletionTimestamp\":\"2024-01-01T01:00:00Z\"", ""),
                POD("live", 5, "1", 0), NULL);
    n2 = mknode("n2", "4",
                mkpod("vip", 10, "1", 0, "\"deletionTimestamp\":\"2024-01-01T01:00:00Z\"", ""),
                NULL);

    assert_false(dp_eligible(never, NULL, SCHED_SUCCESS, &why));
    assert_string_equal(why, "not eligible due to preemptionPolicy=Never.");

    why = NULL;
    assert_false(dp_eligible(nom, n1, SCHED_UNSCHEDULABLE, &why));
    assert_string_equal(why, "not eligible due to a terminating pod on the nominated node.");
    /* The nominated node is now Unresolvable: preempting elsewhere is the only way. */
    assert_true(dp_eligible(nom, n1, SCHED_UNRESOLVABLE, &why));
    /* A terminating pod of equal priority does not count. */
    assert_true(dp_eligible(nom, n2, SCHED_UNSCHEDULABLE, &why));
    /* The nominated node left the snapshot. */
    assert_true(dp_eligible(nom, NULL, SCHED_SUCCESS, &why));
    /* Without a nomination, n1's terminating pod is irrelevant. */
    assert_true(dp_eligible(plain, n1, SCHED_UNSCHEDULABLE, &why));

    sched_node_info_free(n1);
    sched_node_info_free(n2);
    sched_pod_unref(never);
    sched_pod_unref(nom);
    sched_pod_unref(plain);
}

/* ---- victims on one node ---- */

/* Runs dp_select_victims on a copy of ni; checks the copy's cpu afterwards is the original minus
 * the victims'. */
static enum sched_code select_on(const struct sched_pod *pod, const struct sched_node_info *ni,
                                 const struct dp_pdbs *pdbs, struct dp_victims *v,
                                 struct sched_status *st)
{
    struct sched_node_info *copy = sched_node_info_clone(ni);
    enum sched_code c = dp_select_victims(pod, copy, NULL, pdbs, &test_ops, v, st);

    if (c == SCHED_SUCCESS) {
        int64_t cpu = ni->requested.v[SCHED_RES_CPU];
        for (size_t i = 0; i < v->n; i++)
            cpu -= v->pods[i]->req.v[SCHED_RES_CPU];
        assert_int_equal(copy->requested.v[SCHED_RES_CPU], cpu);
        assert_int_equal(copy->npods, ni->npods - v->n);
    }
    sched_node_info_free(copy);
    return c;
}

static void test_victims_reprieve(void **state)
{
    struct sched_pod *pod = POD("pre", 10, "2", 30);
    struct sched_status st = {0};
    struct dp_victims v = {0};
    struct sched_node_info *ni;

    (void)state;
    /*
     * Node of 4 cpu full with a (prio 1, 1 cpu), b (prio 2, 1 cpu), c (prio 3, 2 cpu); the pod
     * asks 2. All three go, the pod fits (2 <= 4). Reprieve by importance: c: 2 + 2 = 4 fits,
     * kept; b: 2 + 1 + 2 = 5 > 4, victim; a: 5 > 4, victim. Victims b, a - not the single pod c
     * that would also free 2 cpu: the search keeps the most important pods, not the fewest.
     */
    ni = mknode("n1", "4", POD("a", 1, "1", 1), POD("b", 2, "1", 2), POD("c", 3, "2", 3), NULL);
    assert_int_equal(select_on(pod, ni, NULL, &v, &st), SCHED_SUCCESS);
    assert_string_equal(names(&v), "b,a");
    assert_int_equal(v.pdb_violations, 0);
    dp_victims_release(&v);
    sched_node_info_free(ni);

    /*
     * A higher-priority pod is never touched: hi (prio 20, 1 cpu) stays; lo1 (prio 1, 2 cpu)
     * and lo2 (prio 2, 1 cpu) go: 1 + 2 = 3 fits. lo2 back: 1 + 1 + 2 = 4 fits; lo1 back:
     * 6 > 4, victim.
     */
    ni = mknode("n1", "4", POD("hi", 20, "1", 0), POD("lo1", 1, "2", 1), POD("lo2", 2, "1", 2),
                NULL);
    assert_int_equal(select_on(pod, ni, NULL, &v, &st), SCHED_SUCCESS);
    assert_string_equal(names(&v), "lo1");
    dp_victims_release(&v);
    sched_node_info_free(ni);

    /* Equal priority: the earlier-created pod is more important and reprieved first. y
     * (minute 1) listed before x (minute 0) on the node; x comes back, y is the victim. */
    ni = mknode("n1", "4", POD("y", 1, "2", 1), POD("x", 1, "2", 0), NULL);
    assert_int_equal(select_on(pod, ni, NULL, &v, &st), SCHED_SUCCESS);
    assert_string_equal(names(&v), "y");
    dp_victims_release(&v);
    sched_node_info_free(ni);

    /* Every victim is needed: reported most important first. */
    ni = mknode("n1", "2", POD("m1", 1, "1", 5), POD("m2", 3, "1", 9), NULL);
    assert_int_equal(select_on(pod, ni, NULL, &v, &st), SCHED_SUCCESS);
    assert_string_equal(names(&v), "m2,m1");
    dp_victims_release(&v);
    sched_node_info_free(ni);
    sched_pod_unref(pod);
}

static void test_victims_none(void **state)
{
    struct sched_pod *pod = POD("pre", 10, "2", 30), *big = POD("big", 10, "8", 30);
    struct sched_status st = {0};
    struct dp_victims v = {0};
    struct sched_node_info *ni;

    (void)state;
    /* Only pods of equal or higher priority: Unresolvable, and Filter is not run again. */
    ni = mknode("n1", "4", POD("eq", 10, "2", 0), POD("hi", 11, "2", 0), NULL);
    fits_calls = 0;
    assert_int_equal(select_on(pod, ni, NULL, &v, &st), SCHED_UNRESOLVABLE);
    assert_int_equal(st.code, SCHED_UNRESOLVABLE);
    assert_string_equal(MSG(&st), "No preemption victims found for incoming pod");
    assert_int_equal(fits_calls, 0);
    sched_status_release(&st);
    sched_node_info_free(ni);

    /* 8 cpu never fit on 4 even with the node emptied: the Filter's status. */
    ni = mknode("n1", "4", POD("lo", 1, "2", 0), NULL);
    assert_int_equal(select_on(big, ni, NULL, &v, &st), SCHED_UNSCHEDULABLE);
    assert_int_equal(st.code, SCHED_UNSCHEDULABLE);
    assert_string_equal(MSG(&st), "Insufficient cpu");
    assert_int_equal(v.n, 0);
    sched_status_release(&st);
    sched_node_info_free(ni);
    sched_pod_unref(pod);
    sched_pod_unref(big);
}

static void test_pdb_violations(void **state)
{
    struct dp_pdbs pdbs =
        pdbs_of("{\"items\":["
                /* app=web in default, 1 disruption allowed, w0 already disrupted */
                "{\"metadata\":{\"namespace\":\"default\"},\"spec\":{\"selector\":{\"matchLabels\":"
                "{\"app\":\"web\"}}},\"status\":{\"disruptionsAllowed\":1,\"disruptedPods\":"
                "{\"w0\":\"2024-01-01T00:00:00Z\"}}},"
                /* the same selector in another namespace: never matches these pods */
                "{\"metadata\":{\"namespace\":\"other\"},\"spec\":{\"selector\":{\"matchLabels\":"
                "{\"app\":\"web\"}}},\"status\":{\"disruptionsAllowed\":0}},"
                /* an empty selector matches nothing; no selector neither */
                "{\"metadata\":{\"namespace\":\"default\"},\"spec\":{\"selector\":{}},"
                "\"status\":{\"disruptionsAllowed\":0}},"
                "{\"metadata\":{\"namespace\":\"default\"},\"spec\":{},"
                "\"status\":{\"disruptionsAllowed\":0}}]}");
    struct sched_pod *pods[4];
    bool viol[4];

    (void)state;
    assert_int_equal(pdbs.n, 2);
    pods[0] = mkpod("w0", 1, "1", 0, "\"labels\":{\"app\":\"web\"}", "");
    pods[1] = mkpod("w1", 1, "1", 1, "\"labels\":{\"app\":\"web\"}", "");
    pods[2] = mkpod("w2", 1, "1", 2, "\"labels\":{\"app\":\"web\"}", "");
    pods[3] = mkpod("o", 1, "1", 3, "\"labels\":{\"app\":\"db\"}", "");
    /*
     * In order: w0 is in disruptedPods (no budget used); w1 uses the one allowed (1 -> 0), not
     * violating; w2 takes it to -1, violating; o matches nothing.
     */
    dp_pdb_violations(pods, 4, &pdbs, viol);
    assert_false(viol[0]);
    assert_false(viol[1]);
    assert_true(viol[2]);
    assert_false(viol[3]);
    for (size_t i = 0; i < 4; i++)
        sched_pod_unref(pods[i]);
    dp_pdbs_release(&pdbs);
}

static void test_victims_pdb(void **state)
{
    struct sched_pod *pod = POD("pre", 10, "2", 30);
    struct dp_pdbs pdbs =
        pdbs_of("{\"items\":[{\"metadata\":{\"namespace\":\"default\"},\"spec\":{\"selector\":"
                "{\"matchLabels\":{\"app\":\"web\"}}},\"status\":{\"disruptionsAllowed\":1}}]}");
    struct sched_status st = {0};
    struct dp_victims v = {0};
    struct sched_node_info *ni;

    (void)state;
    /*
     * Node of 3 cpu: o (minute 1), w1 (minute 2), w2 (minute 3), all prio 1 and 1 cpu, w* with
     * app=web. The pod asks 2.
     * Without PDBs, importance order o, w1, w2: o back (1 + 2 = 3) fits, w1 and w2 victims.
     */
    ni = mknode("n1", "3", POD("o", 1, "1", 1),
                mkpod("w1", 1, "1", 2, "\"labels\":{\"app\":\"web\"}", ""),
                mkpod("w2", 1, "1", 3, "\"labels\":{\"app\":\"web\"}", ""), NULL);
    assert_int_equal(select_on(pod, ni, NULL, &v, &st), SCHED_SUCCESS);
    assert_string_equal(names(&v), "w1,w2");
    assert_int_equal(v.pdb_violations, 0);
    dp_victims_release(&v);

    /*
     * With the PDB allowing 1: w1 uses it, w2 would violate. w2 is tried first: 1 + 2 = 3
     * fits, kept. Then o: 4 > 3, victim; w1: victim. Victims o, w1 (most important first), no
     * violation.
     */
    assert_int_equal(select_on(pod, ni, &pdbs, &v, &st), SCHED_SUCCESS);
    assert_string_equal(names(&v), "o,w1");
    assert_int_equal(v.pdb_violations, 0);
    dp_victims_release(&v);
    sched_node_info_free(ni);

    /*
     * Node of 2 cpu with w1, w2 (1 cpu each) and the PDB allowing 1: w2 violating, tried
     * first: 1 + 2 = 3 > 2, victim (1 violation); w1: victim. Victims sorted back by
     * importance: w1, w2.
     */
    ni = mknode("n1", "2", mkpod("w1", 1, "1", 2, "\"labels\":{\"app\":\"web\"}", ""),
                mkpod("w2", 1, "1", 3, "\"labels\":{\"app\":\"web\"}", ""), NULL);
    assert_int_equal(select_on(pod, ni, &pdbs, &v, &st), SCHED_SUCCESS);
    assert_string_equal(names(&v), "w1,w2");
    assert_int_equal(v.pdb_violations, 1);
    dp_victims_release(&v);
    sched_node_info_free(ni);
    dp_pdbs_release(&pdbs);
    sched_pod_unref(pod);
}

/* ---- the node choice ---- */

/* A candidate on node with the victims given (references taken over; NULL-terminated). */
static struct dp_candidate cand(const char *node, int64_t violations, ...)
{
    struct dp_candidate c = {xstrdup(node), {xcalloc(16, sizeof(struct sched_pod *)), 0, 0}};
    struct sched_pod *p;
    va_list ap;

    c.v.pdb_violations = violations;
    va_start(ap, violations);
    while ((p = va_arg(ap, struct sched_pod *)))
        c.v.pods[c.v.n++] = p;
    va_end(ap);
    return c;
}

static void release_cands(struct dp_candidate *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(c[i].node);
        dp_victims_release(&c[i].v);
    }
}

static void test_pick(void **state)
{
    struct dp_candidate c[3];

    (void)state;
    /* 1. Fewest PDB violations beats everything after it. */
    c[0] = cand("a", 1, POD("v", 1, "1", 0), NULL);
    c[1] = cand("b", 0, POD("v", 5, "1", 0), POD("v2", 5, "1", 0), NULL);
    assert_string_equal(c[dp_pick(c, 2)].node, "b");
    release_cands(c, 2);

    /* 2. Lowest highest-victim priority: 3 < 5 although b has more victims. */
    c[0] = cand("a", 0, POD("v", 5, "1", 0), NULL);
    c[1] = cand("b", 0, POD("v", 3, "1", 0), POD("v2", 3, "1", 0), NULL);
    assert_string_equal(c[dp_pick(c, 2)].node, "b");
    release_cands(c, 2);

    /* 3. Lowest sum of (priority + 2^31): a = (3 + 2^31) + (1 + 2^31) < b = ... + (2 + 2^31). */
    c[0] = cand("a", 0, POD("v", 3, "1", 0), POD("v2", 1, "1", 0), NULL);
    c[1] = cand("b", 0, POD("v", 3, "1", 0), POD("v2", 2, "1", 0), NULL);
    assert_string_equal(c[dp_pick(c, 2)].node, "a");
    release_cands(c, 2);

    /* 3'. Negative priorities: a = 2 (2^31 - 5) > b = 2^31 - 5, so b, though the plain sums
     * (-10 < -5) would say a. */
    c[0] = cand("a", 0, POD("v", -5, "1", 0), POD("v2", -5, "1", 0), NULL);
    c[1] = cand("b", 0, POD("v", -5, "1", 0), NULL);
    assert_string_equal(c[dp_pick(c, 2)].node, "b");
    release_cands(c, 2);

    /* 4. Fewest victims at an equal sum: a = (0 + 2^31) + (-2^31 + 2^31) = 2^31 = b. */
    c[0] = cand("a", 0, POD("v", 0, "1", 0), POD("v2", INT32_MIN, "1", 0), NULL);
    c[1] = cand("b", 0, POD("v", 0, "1", 0), NULL);
    assert_string_equal(c[dp_pick(c, 2)].node, "b");
    release_cands(c, 2);

    /* 5. Latest earliest start among the highest-priority victims: a's prio-3 victim started
     * at minute 1, b's at minute 2 (the prio-1 victims' minute 0 does not count). */
    c[0] = cand("a", 0, POD("v", 3, "1", 1), POD("v2", 1, "1", 0), NULL);
    c[1] = cand("b", 0, POD("v", 3, "1", 2), POD("v2", 1, "1", 0), NULL);
    c[2] = cand("c", 0, POD("v", 3, "1", 1), POD("v2", 1, "1", 0), NULL);
    assert_string_equal(c[dp_pick(c, 3)].node, "b");
    release_cands(c, 3);

    /* 6. All equal: the first. */
    c[0] = cand("a", 0, POD("v", 3, "1", 1), NULL);
    c[1] = cand("b", 0, POD("v", 3, "1", 1), NULL);
    assert_string_equal(c[dp_pick(c, 2)].node, "a");
    release_cands(c, 2);

    /* A rule only among the survivors of the previous ones: a has the latest start but lost
     * at rule 2; of b and c (equal up to rule 4), c started later. */
    c[0] = cand("a", 0, POD("v", 9, "1", 50), NULL);
    c[1] = cand("b", 0, POD("v", 2, "1", 10), NULL);
    c[2] = cand("c", 0, POD("v", 2, "1", 20), NULL);
    assert_string_equal(c[dp_pick(c, 3)].node, "c");
    release_cands(c, 3);
}

/* ---- the dry run ---- */

static void test_dry_run(void **state)
{
    struct sched_pod *pod = POD("pre", 10, "2", 30);
    struct sched_node_info *nodes[4];
    struct dp_pdbs pdbs =
        pdbs_of("{\"items\":[{\"metadata\":{\"namespace\":\"default\"},\"spec\":{\"selector\":"
                "{\"matchLabels\":{\"app\":\"web\"}}},\"status\":{\"disruptionsAllowed\":0}}]}");
    struct sched_cycle *cs = sched_cycle_new();
    struct dp_dry_run d;

    (void)state;
    /* n0: no victim possible; n1, n2: one victim each; n3: only a PDB-protected victim. */
    nodes[0] = mknode("n0", "2", POD("hi", 20, "2", 0), NULL);
    nodes[1] = mknode("n1", "2", POD("v1", 1, "2", 0), NULL);
    nodes[2] = mknode("n2", "2", POD("v2", 1, "2", 0), NULL);
    nodes[3] = mknode("n3", "2", mkpod("w", 1, "2", 0, "\"labels\":{\"app\":\"web\"}", ""), NULL);

    /* From offset 1 wanting 1: n1 is a candidate without violations, the search stops. */
    dp_dry_run(pod, nodes, 4, cs, &pdbs, 1, 1, &test_ops, &d);
    assert_int_equal(d.ncands, 1);
    assert_string_equal(d.cands[0].node, "n1");
    assert_int_equal(d.nfailed, 0);
    dp_dry_run_release(&d);

    /* From offset 3 wanting 2: n3 (violating), n0 (fails), n1 (non-violating: 2 found, one
     * without violations, stop). Non-violating ones first. */
    dp_dry_run(pod, nodes, 4, cs, &pdbs, 3, 2, &test_ops, &d);
    assert_int_equal(d.ncands, 2);
    assert_string_equal(d.cands[0].node, "n1");
    assert_string_equal(d.cands[1].node, "n3");
    assert_int_equal(d.cands[1].v.pdb_violations, 1);
    assert_int_equal(d.nfailed, 1);
    assert_int_equal(d.failed[0].code, SCHED_UNRESOLVABLE);
    assert_string_equal(MSG(&d.failed[0]), "No preemption victims found for incoming pod");
    dp_dry_run_release(&d);

    /* Only violating candidates never stop the search: from 3 wanting 1, n3 is kept, then n0
     * fails, then n1 ends it. */
    dp_dry_run(pod, nodes, 4, cs, &pdbs, 3, 1, &test_ops, &d);
    assert_int_equal(d.ncands, 2);
    assert_string_equal(d.cands[0].node, "n1");
    assert_string_equal(d.cands[1].node, "n3");
    dp_dry_run_release(&d);

    /* Nothing to look for (0 candidates wanted, as with a small percentage and no floor):
     * upstream's zero-sized lists keep nothing, every node is visited. */
    dp_dry_run(pod, nodes, 4, cs, &pdbs, 0, 0, &test_ops, &d);
    assert_int_equal(d.ncands, 0);
    assert_int_equal(d.nfailed, 1);
    dp_dry_run_release(&d);

    /* The snapshot's NodeInfos are untouched. */
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(nodes[i]->npods, 1);
        assert_int_equal(nodes[i]->requested.v[SCHED_RES_CPU], 2000);
        sched_node_info_free(nodes[i]);
    }
    sched_cycle_free(cs);
    dp_pdbs_release(&pdbs);
    sched_pod_unref(pod);
}

/* ---- PostFilter ---- */

struct pf {
    struct sched_handle h;
    struct sched_node_info *ni[8];
    struct sched_node_statuses m;
    struct sched_status st[8];
    void *self;
};

/* A snapshot of the NodeInfos given (taken over; NULL-terminated). */
static void pf_init(struct pf *f, ...)
{
    struct sched_node_info *ni;
    struct field_errors e = FIELD_ERRORS_INIT;
    va_list ap;

    memset(f, 0, sizeof(*f));
    hmap_init(&f->h.by_name);
    va_start(ap, f);
    while ((ni = va_arg(ap, struct sched_node_info *))) {
        f->ni[f->h.snap.nnodes++] = ni;
        (void)hmap_put(&f->h.by_name, ni->name, ni);
    }
    va_end(ap);
    f->h.snap.nodes = f->ni;
    f->h.snap.by_name = &f->h.by_name;
    f->m.nodes = f->ni;
    f->m.status = f->st;
    assert_int_equal(sched_plugin_default_preemption.init(NULL, "", &f->h, &f->self, &e), 0);
}

/* Node i failed Filter with code and reason (m lists nodes 0..i). */
static void pf_status(struct pf *f, size_t i, enum sched_code code, const char *reason)
{
    sched_status_set(&f->st[i], code, "%s", reason);
    if (f->m.n < i + 1)
        f->m.n = i + 1;
}

static void pf_release(struct pf *f)
{
    for (size_t i = 0; i < f->h.snap.nnodes; i++) {
        sched_node_info_free(f->ni[i]);
        sched_status_release(&f->st[i]);
    }
    hmap_release(&f->h.by_name);
    sched_pods_free(f->h.nominated, f->h.nnominated);
    sched_plugin_default_preemption.free(f->self);
}

static enum sched_code pf_run(struct pf *f, const struct sched_pod *pod,
                              struct sched_post_filter_result *res, struct sched_status *st)
{
    struct sched_cycle *cs = sched_cycle_new();
    enum sched_code c =
        sched_plugin_default_preemption.post_filter(f->self, cs, pod, &f->m, res, st);

    sched_cycle_free(cs);
    return c;
}

static void test_post_filter_not_eligible(void **state)
{
    struct pf f;
    struct sched_pod *never = mkpod("p", 10, "1", 0, "", "\"preemptionPolicy\":\"Never\"");
    struct sched_pod *nom =
        P("{\"metadata\":{\"name\":\"p\",\"uid\":\"uid-p\",\"namespace\":\"default\"},"
          "\"spec\":{\"priority\":10,\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
          "{\"cpu\":\"2\"}}}]},\"status\":{\"nominatedNodeName\":\"n1\"}}");
    struct sched_post_filter_result res = {0};
    struct sched_status st = {0};

    (void)state;
    pf_init(&f,
            mknode("n1", "2",
                   mkpod("old", 5, "2", 0, "\"deletionTimestamp\":\"2024-01-01T01:00:00Z\"", ""),
                   NULL),
            mknode("n2", "2", POD("lo", 1, "2", 0), NULL), NULL);
    pf_status(&f, 0, SCHED_UNSCHEDULABLE, "Insufficient cpu");
    pf_status(&f, 1, SCHED_UNSCHEDULABLE, "Insufficient cpu");

    /* Never: Unschedulable (upstream's code), the nomination left as is. */
    assert_int_equal(pf_run(&f, never, &res, &st), SCHED_UNSCHEDULABLE);
    assert_string_equal(MSG(&st), "preemption: not eligible due to preemptionPolicy=Never.");
    assert_null(res.nominated_node);
    sched_status_release(&st);

    /* Nominated to n1 where its earlier victim is still terminating: wait for it. */
    assert_int_equal(pf_run(&f, nom, &res, &st), SCHED_UNSCHEDULABLE);
    assert_string_equal(MSG(&st),
                        "preemption: not eligible due to a terminating pod on the nominated node.");
    assert_null(res.nominated_node);
    sched_status_release(&st);

    /* n1 turned Unresolvable: preempt again; n2's lo is the victim. */
    sched_status_release(&f.st[0]);
    pf_status(&f, 0, SCHED_UNRESOLVABLE, "node(s) didn't match Pod's node affinity/selector");
    assert_int_equal(pf_run(&f, nom, &res, &st), SCHED_SUCCESS);
    assert_int_equal(st.n, 0);
    assert_string_equal(res.nominated_node, "n2");
    free(res.nominated_node);

    sched_pod_unref(never);
    sched_pod_unref(nom);
    pf_release(&f);
}

static void test_post_filter_no_candidates(void **state)
{
    struct pf f;
    struct sched_pod *pod = POD("p", 10, "2", 30);
    struct sched_post_filter_result res = {0};
    struct sched_status st = {0};

    (void)state;
    /* Three nodes, none Unschedulable (two Unresolvable, one not in m): upstream's wording. */
    pf_init(&f, mknode("n1", "2", POD("lo", 1, "2", 0), NULL),
            mknode("n2", "2", POD("lo", 1, "2", 0), NULL),
            mknode("n3", "2", POD("lo", 1, "2", 0), NULL), NULL);
    pf_status(&f, 0, SCHED_UNRESOLVABLE, "node(s) had untolerated taint {a: b}");
    pf_status(&f, 1, SCHED_UNRESOLVABLE, "node(s) had untolerated taint {a: b}");
    f.m.n = 2;
    assert_int_equal(pf_run(&f, pod, &res, &st), SCHED_UNSCHEDULABLE);
    assert_int_equal(st.code, SCHED_UNSCHEDULABLE);
    assert_string_equal(
        MSG(&st),
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.");
    /* The pod's nomination is cleared. */
    assert_non_null(res.nominated_node);
    assert_string_equal(res.nominated_node, "");
    free(res.nominated_node);
    res.nominated_node = NULL;
    sched_status_release(&st);
    sched_pod_unref(pod);
    pf_release(&f);
}

static void test_post_filter_dry_run_fails(void **state)
{
    struct pf f;
    struct sched_pod *pod = POD("p", 10, "2", 30);
    struct sched_post_filter_result res = {0};
    struct sched_status st = {0};

    (void)state;
    /*
     * n1: Unschedulable, only a higher-priority pod -> "No preemption victims found for
     * incoming pod"; n2: Unschedulable, but 1 cpu even when empty -> "Insufficient cpu"; n3, n4:
     * Unresolvable -> "Preemption is not helpful for scheduling" twice. Sorted as strings:
     * "1 Insufficient cpu" < "1 No preemption ..." < "2 Preemption ...".
     */
    pf_init(&f, mknode("n1", "2", POD("hi", 20, "2", 0), NULL),
            mknode("n2", "1", POD("lo", 1, "1", 0), NULL),
            mknode("n3", "2", POD("lo", 1, "2", 0), NULL),
            mknode("n4", "2", POD("lo", 1, "2", 0), NULL), NULL);
    pf_status(&f, 0, SCHED_UNSCHEDULABLE, "Insufficient cpu");
    pf_status(&f, 1, SCHED_UNSCHEDULABLE, "Insufficient cpu");
    pf_status(&f, 2, SCHED_UNRESOLVABLE, "node(s) were unschedulable");
    pf_status(&f, 3, SCHED_UNRESOLVABLE, "node(s) were unschedulable");
    assert_int_equal(pf_run(&f, pod, &res, &st), SCHED_UNSCHEDULABLE);
    assert_string_equal(MSG(&st), "preemption: 0/4 nodes are available: 1 Insufficient cpu, "
                                  "1 No preemption victims found for incoming pod, "
                                  "2 Preemption is not helpful for scheduling.");
    assert_string_equal(res.nominated_node, "");
    free(res.nominated_node);
    sched_status_release(&st);
    sched_pod_unref(pod);
    pf_release(&f);
}

static void test_post_filter_success(void **state)
{
    struct pf f;
    struct sched_pod *pod = POD("p", 10, "2", 30);
    struct sched_post_filter_result res = {0};
    struct sched_status st = {0};

    (void)state;
    /*
     * Both nodes can make room (numCandidates = clamp(2 * 10 / 100, 100, 2) = 2, so both are
     * tried whatever the offset): n1 by evicting a prio-5 pod, n2 a prio-3 pod. Rule 2 picks
     * n2.
     */
    pf_init(&f, mknode("n1", "2", POD("a", 5, "2", 0), NULL),
            mknode("n2", "2", POD("b", 3, "2", 0), NULL), NULL);
    pf_status(&f, 0, SCHED_UNSCHEDULABLE, "Insufficient cpu");
    pf_status(&f, 1, SCHED_UNSCHEDULABLE, "Insufficient cpu");
    for (int i = 0; i < 8; i++) {
        assert_int_equal(pf_run(&f, pod, &res, &st), SCHED_SUCCESS);
        assert_int_equal(st.code, SCHED_SUCCESS);
        assert_int_equal(st.n, 0);
        assert_string_equal(res.nominated_node, "n2");
        free(res.nominated_node);
        res.nominated_node = NULL;
    }
    sched_pod_unref(pod);
    pf_release(&f);
}

static void test_disruption_patch(void **state)
{
    cJSON *patch = dp_disruption_patch("my-scheduler");
    const cJSON *conds = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(patch, "status"), "conditions");
    const cJSON *c = cJSON_GetArrayItem(conds, 0);
    const char *ts;
    int64_t sec;
    int32_t nsec;

    (void)state;
    /* 5.7 step 5: DisruptionTarget=True, reason PreemptionByScheduler, the preemptor's
     * scheduler name in the message. */
    assert_int_equal(cJSON_GetArraySize(conds), 1);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "type")),
                        "DisruptionTarget");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "status")),
                        "True");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "reason")),
                        "PreemptionByScheduler");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "message")),
                        "my-scheduler: preempting to accommodate a higher priority pod");
    ts = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "lastTransitionTime"));
    assert_non_null(ts);
    assert_int_equal(rfc3339_parse(ts, &sec, &nsec), 0);
    cJSON_Delete(patch);
}

static void test_plugin_table(void **state)
{
    (void)state;
    assert_string_equal(sched_plugin_default_preemption.name, "DefaultPreemption");
    assert_string_equal(sched_plugin_default_preemption.args_kind, "DefaultPreemptionArgs");
    assert_non_null(sched_plugin_default_preemption.post_filter);
    assert_null(sched_plugin_default_preemption.filter);
    assert_non_null(sched_plugin_default_preemption.events);
    assert_null(sched_plugin_default_preemption.events[0].resource);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_args),
        cmocka_unit_test(test_num_candidates),
        cmocka_unit_test(test_eligible),
        cmocka_unit_test(test_victims_reprieve),
        cmocka_unit_test(test_victims_none),
        cmocka_unit_test(test_pdb_violations),
        cmocka_unit_test(test_victims_pdb),
        cmocka_unit_test(test_pick),
        cmocka_unit_test(test_dry_run),
        cmocka_unit_test(test_post_filter_not_eligible),
        cmocka_unit_test(test_post_filter_no_candidates),
        cmocka_unit_test(test_post_filter_dry_run_fails),
        cmocka_unit_test(test_post_filter_success),
        cmocka_unit_test(test_disruption_patch),
        cmocka_unit_test(test_plugin_table),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
