/*
 * PodTopologySpread (src/sched/plugins/podtopologyspread/pod_topology_spread.c): the filter's
 * skew rule with minDomains, the missing-label answer, node inclusion policies, namespace and
 * terminating-pod counting, AddPod/RemovePod on a cloned cycle, the score and its
 * normalisation, args validation. Expected values are worked out by hand from reference
 * scheduler.md 5.4 in the comments beside each case.
 *
 * The plugin's .c is included to reach the functions that take the snapshot explicitly; each
 * test builds a small snapshot by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "sched/plugins/podtopologyspread/pod_topology_spread.c" /* NOLINT(bugprone-suspicious-include) */
#include "sched/schedtest.h"

/* The plugin's callbacks reference the runtime's; the tests call the snapshot-taking
 * functions instead. This weak stub keeps runtime.o (and whatever it pulls from the archive,
 * possibly the plugin's own object, which this file already compiles) out of the link. */
__attribute__((weak)) const struct sched_snapshot *
sched_handle_snapshot(const struct sched_handle *h)
{
    (void)h;
    return NULL;
}

/* ---- fixtures ---- */

/* An existing pod: name, namespace, labels (single-quoted JSON members). */
static struct sched_pod *epod(const char *name, const char *ns, const char *labels)
{
    return fx_pod("{'metadata':{'name':'%s','uid':'%s','namespace':'%s','labels':{%s}}}", name,
                  name, ns, labels);
}

static struct pts *pts_new(const char *args_sq)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    cJSON *args = args_sq ? fx_json(args_sq) : NULL;
    void *self = NULL;

    assert_int_equal(pts_init(args, "args", NULL, &self, &errs), 0);
    assert_int_equal(errs.n, 0);
    cJSON_Delete(args);
    field_errors_release(&errs);
    return self;
}

/* The incoming pod: labels and its constraints (single-quoted JSON array members). */
static struct sched_pod *inpod(const char *labels, const char *constraints)
{
    return fx_pod("{'metadata':{'name':'in','uid':'in','namespace':'default','labels':{%s}},"
                  "'spec':{'topologySpreadConstraints':[%s]}}",
                  labels, constraints);
}

/* One constraint with selector app=x. */
#define C_ZONE(skew, when)                                                                         \
    "{'maxSkew':" #skew ",'topologyKey':'zone','whenUnsatisfiable':'" when "',"                    \
    "'labelSelector':{'matchLabels':{'app':'x'}}}"

/* The filter answer for node name: code and message. */
struct fcase {
    const char *node;
    enum sched_code code;
    const char *msg;
};

static const char LABEL_MSG[] =
    "node(s) didn't match pod topology spread constraints (missing required label)";
static const char SKEW_MSG[] = "node(s) didn't match pod topology spread constraints";

static void check_filter(struct fx *f, struct pts *pl, struct sched_cycle *cs,
                         const struct sched_pod *pod, const struct fcase *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct sched_status st = {0};
        enum sched_code c = pts_filter(pl, cs, pod, fx_get(f, cases[i].node), &st);
        if (c != cases[i].code || strcmp(MSG(&st), cases[i].msg))
            fail_msg("node %s: got %d \"%s\", want %d \"%s\"", cases[i].node, c, MSG(&st),
                     cases[i].code, cases[i].msg);
        sched_status_release(&st);
    }
}

static void run_filter(struct fx *f, const char *args, struct sched_pod *pod,
                       const struct fcase *cases, size_t n)
{
    struct pts *pl = pts_new(args);
    struct sched_cycle *cs = sched_cycle_new();
    struct sched_status st = {0};

    assert_int_equal(pts_pre_filter_snap(pl, &f->snap, cs, pod, &st), SCHED_SUCCESS);
    check_filter(f, pl, cs, pod, cases, n);
    sched_cycle_free(cs);
    pts_free(pl);
    sched_pod_unref(pod);
}

/*
 * Zones a (n1: 2 matching pods, n2: 1) and b (n3: 1, n4: 0); n5 has no zone label and 3
 * matching pods, so it is no domain. Counts: a = 3, b = 1, minimum 1.
 */
static void fx_zones(struct fx *f)
{
    fx_init(f,
            fx_node("n1", "'zone':'a'", epod("p1", "default", "'app':'x'"),
                    epod("p2", "default", "'app':'x'"), epod("p3", "default", "'app':'y'"), NULL),
            fx_node("n2", "'zone':'a'", epod("p4", "default", "'app':'x'"), NULL),
            fx_node("n3", "'zone':'b'", epod("p5", "default", "'app':'x'"), NULL),
            fx_node("n4", "'zone':'b'", NULL),
            fx_node("n5", "'other':'1'", epod("p6", "default", "'app':'x'"),
                    epod("p7", "default", "'app':'x'"), epod("p8", "default", "'app':'x'"), NULL),
            NULL);
}

/* ---- Filter ---- */

static void test_filter_skew(void **state)
{
    struct fx f;

    (void)state;
    fx_zones(&f);
    /* maxSkew 1, the pod matches itself: a → 3 + 1 − 1 = 3 > 1; b → 1 + 1 − 1 = 1. */
    {
        const struct fcase cases[] = {
            {"n1", SCHED_UNSCHEDULABLE, SKEW_MSG},
            {"n2", SCHED_UNSCHEDULABLE, SKEW_MSG},
            {"n3", SCHED_SUCCESS, ""},
            {"n4", SCHED_SUCCESS, ""},
            {"n5", SCHED_UNRESOLVABLE, LABEL_MSG},
        };
        run_filter(&f, NULL, inpod("'app':'x'", C_ZONE(1, "DoNotSchedule")), cases,
                   ARRAY_SIZE(cases));
    }
    /* maxSkew 3: a → 3 ≤ 3. */
    {
        const struct fcase cases[] = {{"n1", SCHED_SUCCESS, ""}, {"n3", SCHED_SUCCESS, ""}};
        run_filter(&f, NULL, inpod("'app':'x'", C_ZONE(3, "DoNotSchedule")), cases,
                   ARRAY_SIZE(cases));
    }
    /* maxSkew 2 and a pod that does not match its own selector: a → 3 + 0 − 1 = 2 ≤ 2. */
    {
        const struct fcase cases[] = {{"n1", SCHED_SUCCESS, ""}, {"n4", SCHED_SUCCESS, ""}};
        run_filter(&f, NULL, inpod("'app':'y'", C_ZONE(2, "DoNotSchedule")), cases,
                   ARRAY_SIZE(cases));
    }
    /* The same with maxSkew 1: a → 2 > 1. */
    {
        const struct fcase cases[] = {{"n1", SCHED_UNSCHEDULABLE, SKEW_MSG},
                                      {"n4", SCHED_SUCCESS, ""}};
        run_filter(&f, NULL, inpod("'app':'y'", C_ZONE(1, "DoNotSchedule")), cases,
                   ARRAY_SIZE(cases));
    }
    fx_release(&f);
}

static void test_filter_min_domains(void **state)
{
    struct fx f;

    (void)state;
    fx_zones(&f);
    /* Two domains < minDomains 3: the global minimum is 0. b → 1 + 1 − 0 = 2 > 1. */
    {
        const struct fcase cases[] = {
            {"n1", SCHED_UNSCHEDULABLE, SKEW_MSG},
            {"n3", SCHED_UNSCHEDULABLE, SKEW_MSG},
            {"n4", SCHED_UNSCHEDULABLE, SKEW_MSG},
        };
        run_filter(&f, NULL,
                   inpod("'app':'x'", "{'maxSkew':1,'topologyKey':'zone','minDomains':3,"
                                      "'whenUnsatisfiable':'DoNotSchedule',"
                                      "'labelSelector':{'matchLabels':{'app':'x'}}}"),
                   cases, ARRAY_SIZE(cases));
    }
    /* maxSkew 2: b → 2 ≤ 2, a → 4 > 2. */
    {
        const struct fcase cases[] = {
            {"n1", SCHED_UNSCHEDULABLE, SKEW_MSG},
            {"n3", SCHED_SUCCESS, ""},
        };
        run_filter(&f, NULL,
                   inpod("'app':'x'", "{'maxSkew':2,'topologyKey':'zone','minDomains':3,"
                                      "'whenUnsatisfiable':'DoNotSchedule',"
                                      "'labelSelector':{'matchLabels':{'app':'x'}}}"),
                   cases, ARRAY_SIZE(cases));
    }
    /* minDomains 2 = the number of domains: the minimum stays 1, b passes with maxSkew 1. */
    {
        const struct fcase cases[] = {{"n3", SCHED_SUCCESS, ""}};
        run_filter(&f, NULL,
                   inpod("'app':'x'", "{'maxSkew':1,'topologyKey':'zone','minDomains':2,"
                                      "'whenUnsatisfiable':'DoNotSchedule',"
                                      "'labelSelector':{'matchLabels':{'app':'x'}}}"),
                   cases, ARRAY_SIZE(cases));
    }
    fx_release(&f);
}

static void test_filter_two_constraints(void **state)
{
    struct fx f;

    (void)state;
    fx_zones(&f);
    /*
     * zone maxSkew 3 (a → 3, b → 1, both pass) and hostname maxSkew 1 over the nodes having
     * both keys: none of n1..n4 has a hostname label, so each is missing it (UU); a node with
     * both labels comes next.
     */
    {
        const struct fcase cases[] = {{"n1", SCHED_UNRESOLVABLE, LABEL_MSG}};
        run_filter(
            &f, NULL,
            inpod("'app':'x'",
                  C_ZONE(3, "DoNotSchedule") ","
                                             "{'maxSkew':1,'topologyKey':'kubernetes.io/hostname',"
                                             "'whenUnsatisfiable':'DoNotSchedule',"
                                             "'labelSelector':{'matchLabels':{'app':'x'}}}"),
            cases, ARRAY_SIZE(cases));
    }
    fx_release(&f);

    /*
     * h1 (zone a, 2 pods), h2 (zone a, 0), h3 (zone b, 0). Zone counts a = 2, b = 0;
     * hostname counts 2, 0, 0. zone maxSkew 2: a → 2 + 1 − 0 = 3 > 2 fails h1 and h2 at the
     * first constraint; hostname maxSkew 1: h3 → 0 + 1 − 0 = 1 passes.
     */
    fx_init(&f,
            fx_node("h1", "'zone':'a','kubernetes.io/hostname':'h1'",
                    epod("q1", "default", "'app':'x'"), epod("q2", "default", "'app':'x'"), NULL),
            fx_node("h2", "'zone':'a','kubernetes.io/hostname':'h2'", NULL),
            fx_node("h3", "'zone':'b','kubernetes.io/hostname':'h3'", NULL), NULL);
    {
        const struct fcase cases[] = {
            {"h1", SCHED_UNSCHEDULABLE, SKEW_MSG},
            {"h2", SCHED_UNSCHEDULABLE, SKEW_MSG},
            {"h3", SCHED_SUCCESS, ""},
        };
        run_filter(
            &f, NULL,
            inpod("'app':'x'",
                  C_ZONE(2, "DoNotSchedule") ","
                                             "{'maxSkew':1,'topologyKey':'kubernetes.io/hostname',"
                                             "'whenUnsatisfiable':'DoNotSchedule',"
                                             "'labelSelector':{'matchLabels':{'app':'x'}}}"),
            cases, ARRAY_SIZE(cases));
    }
    /* zone maxSkew 3 lets h1 and h2 through the zone; hostname: h1 → 2 + 1 − 0 = 3 > 1. */
    {
        const struct fcase cases[] = {
            {"h1", SCHED_UNSCHEDULABLE, SKEW_MSG},
            {"h2", SCHED_SUCCESS, ""},
            {"h3", SCHED_SUCCESS, ""},
        };
        run_filter(
            &f, NULL,
            inpod("'app':'x'",
                  C_ZONE(3, "DoNotSchedule") ","
                                             "{'maxSkew':1,'topologyKey':'kubernetes.io/hostname',"
                                             "'whenUnsatisfiable':'DoNotSchedule',"
                                             "'labelSelector':{'matchLabels':{'app':'x'}}}"),
            cases, ARRAY_SIZE(cases));
    }
    fx_release(&f);
}

static void test_filter_namespace_and_terminating(void **state)
{
    struct fx f;

    (void)state;
    /* n1 (zone a): a matching pod of another namespace and a terminating one: a = 0.
     * n2 (zone b): one matching pod: b = 1. Minimum 0. */
    fx_init(&f,
            fx_node("n1", "'zone':'a'", epod("o1", "other", "'app':'x'"),
                    fx_pod("{'metadata':{'name':'d1','uid':'d1','namespace':'default',"
                           "'deletionTimestamp':'2024-01-01T00:00:00Z','labels':{'app':'x'}}}"),
                    NULL),
            fx_node("n2", "'zone':'b'", epod("p1", "default", "'app':'x'"), NULL), NULL);
    {
        /* a → 0 + 1 − 0 = 1; b → 1 + 1 − 0 = 2 > 1. */
        const struct fcase cases[] = {
            {"n1", SCHED_SUCCESS, ""},
            {"n2", SCHED_UNSCHEDULABLE, SKEW_MSG},
        };
        run_filter(&f, NULL, inpod("'app':'x'", C_ZONE(1, "DoNotSchedule")), cases,
                   ARRAY_SIZE(cases));
    }
    fx_release(&f);
}

static void test_filter_inclusion_policies(void **state)
{
    struct fx f;

    (void)state;
    /* n1 zone a, disk=ssd, 2 matching pods; n2 zone b, no disk label, tainted NoSchedule,
     * no pods. */
    fx_init(&f,
            fx_node("n1", "'zone':'a','disk':'ssd'", epod("p1", "default", "'app':'x'"),
                    epod("p2", "default", "'app':'x'"), NULL),
            fx_node_spec("n2", "'zone':'b'",
                         "'taints':[{'key':'k','value':'v','effect':'NoSchedule'}]", NULL),
            NULL);
    /* nodeAffinityPolicy Honor (default) with nodeSelector disk=ssd: b is not counted, the
     * only domain is a = 2 → n1: 2 + 1 − 2 = 1 ≤ 1. */
    {
        const struct fcase cases[] = {{"n1", SCHED_SUCCESS, ""}};
        run_filter(&f, NULL,
                   fx_pod("{'metadata':{'name':'in','uid':'in','labels':{'app':'x'}},"
                          "'spec':{'nodeSelector':{'disk':'ssd'},"
                          "'topologySpreadConstraints':[" C_ZONE(1, "DoNotSchedule") "]}}"),
                   cases, ARRAY_SIZE(cases));
    }
    /* nodeAffinityPolicy Ignore: b = 0 counts, n1: 2 + 1 − 0 = 3 > 1. */
    {
        const struct fcase cases[] = {{"n1", SCHED_UNSCHEDULABLE, SKEW_MSG}};
        run_filter(&f, NULL,
                   fx_pod("{'metadata':{'name':'in','uid':'in','labels':{'app':'x'}},"
                          "'spec':{'nodeSelector':{'disk':'ssd'},"
                          "'topologySpreadConstraints':[{'maxSkew':1,'topologyKey':'zone',"
                          "'nodeAffinityPolicy':'Ignore','whenUnsatisfiable':'DoNotSchedule',"
                          "'labelSelector':{'matchLabels':{'app':'x'}}}]}}"),
                   cases, ARRAY_SIZE(cases));
    }
    /* nodeTaintsPolicy Ignore (default): the tainted b = 0 counts, n1 fails. */
    {
        const struct fcase cases[] = {{"n1", SCHED_UNSCHEDULABLE, SKEW_MSG}};
        run_filter(&f, NULL, inpod("'app':'x'", C_ZONE(1, "DoNotSchedule")), cases,
                   ARRAY_SIZE(cases));
    }
    /* nodeTaintsPolicy Honor: b's untolerated taint drops it, n1 passes. */
    {
        const struct fcase cases[] = {{"n1", SCHED_SUCCESS, ""}};
        run_filter(&f, NULL,
                   inpod("'app':'x'",
                         "{'maxSkew':1,'topologyKey':'zone',"
                         "'nodeTaintsPolicy':'Honor','whenUnsatisfiable':'"
                         "DoNotSchedule','labelSelector':{'matchLabels':{'app':'x'}}}"),
                   cases, ARRAY_SIZE(cases));
    }
    /* Honor, but the pod tolerates the taint: b counts again, n1 fails. */
    {
        const struct fcase cases[] = {{"n1", SCHED_UNSCHEDULABLE, SKEW_MSG}};
        run_filter(&f, NULL,
                   fx_pod("{'metadata':{'name':'in','uid':'in','labels':{'app':'x'}},"
                          "'spec':{'tolerations':[{'key':'k','operator':'Exists'}],"
                          "'topologySpreadConstraints':[{'maxSkew':1,'topologyKey':'zone',"
                          "'nodeTaintsPolicy':'Honor','whenUnsatisfiable':'DoNotSchedule',"
                          "'labelSelector':{'matchLabels':{'app':'x'}}}]}}"),
                   cases, ARRAY_SIZE(cases));
    }
    fx_release(&f);
}

static void test_prefilter_skip_and_missing_state(void **state)
{
    struct pts *pl = pts_new(NULL);
    struct sched_cycle *cs = sched_cycle_new();
    struct sched_status st = {0};
    struct sched_pod *pod;
    struct fx f;

    (void)state;
    fx_zones(&f);
    /* No constraints and System defaulting without Service/ReplicaSet listers: no default
     * constraints, so PreFilter and PreScore skip. */
    pod = epod("in", "default", "'app':'x'");
    assert_int_equal(pts_pre_filter_snap(pl, &f.snap, cs, pod, &st), SCHED_SKIP);
    assert_int_equal(pts_pre_score_snap(pl, &f.snap, cs, pod, f.ni, f.n, &st), SCHED_SKIP);
    sched_pod_unref(pod);
    /* Only a ScheduleAnyway constraint: nothing to filter. */
    pod = inpod("'app':'x'", C_ZONE(1, "ScheduleAnyway"));
    assert_int_equal(pts_pre_filter_snap(pl, &f.snap, cs, pod, &st), SCHED_SKIP);
    /* Filter without PreFilter's state is an error. */
    assert_int_equal(pts_filter(pl, cs, pod, f.ni[0], &st), SCHED_ERROR);
    assert_string_equal(MSG(&st), "reading \"PreFilterPodTopologySpread\" from cycleState: "
                                  "not found");
    sched_status_release(&st);
    sched_pod_unref(pod);
    /* Only DoNotSchedule: nothing to score. */
    pod = inpod("'app':'x'", C_ZONE(1, "DoNotSchedule"));
    assert_int_equal(pts_pre_score_snap(pl, &f.snap, cs, pod, f.ni, f.n, &st), SCHED_SKIP);
    sched_pod_unref(pod);
    sched_cycle_free(cs);
    pts_free(pl);
    fx_release(&f);
}

/* ---- AddPod / RemovePod ---- */

static void test_add_remove_pod(void **state)
{
    struct pts *pl = pts_new(NULL);
    struct sched_cycle *cs = sched_cycle_new(), *dry;
    struct sched_status st = {0};
    struct sched_pod *pod = inpod("'app':'x'", C_ZONE(2, "DoNotSchedule"));
    struct sched_pod *px = epod("new", "default", "'app':'x'");
    struct sched_pod *pother = epod("new2", "other", "'app':'x'");
    struct sched_pod *p1 = epod("p1", "default", "'app':'x'");
    struct sched_pod *p2 = epod("p2", "default", "'app':'x'");
    struct fx f;

    (void)state;
    fx_zones(&f);
    assert_int_equal(pts_pre_filter_snap(pl, &f.snap, cs, pod, &st), SCHED_SUCCESS);
    /* a = 3, b = 1, maxSkew 2: n1 → 3 + 1 − 1 = 3 > 2. */
    {
        const struct fcase cases[] = {{"n1", SCHED_UNSCHEDULABLE, SKEW_MSG}};
        check_filter(&f, pl, cs, pod, cases, ARRAY_SIZE(cases));
    }
    /* A dry run adds a matching pod on n3: b = 2, minimum 2: n1 → 3 + 1 − 2 = 2 passes. A pod
     * of another namespace and one on a node without the zone label change nothing. */
    dry = sched_cycle_clone(cs);
    assert_int_equal(pts_add_pod(pl, dry, pod, pother, fx_get(&f, "n4"), &st), SCHED_SUCCESS);
    assert_int_equal(pts_add_pod(pl, dry, pod, px, fx_get(&f, "n5"), &st), SCHED_SUCCESS);
    {
        const struct fcase cases[] = {{"n1", SCHED_UNSCHEDULABLE, SKEW_MSG}};
        check_filter(&f, pl, dry, pod, cases, ARRAY_SIZE(cases));
    }
    assert_int_equal(pts_add_pod(pl, dry, pod, px, fx_get(&f, "n3"), &st), SCHED_SUCCESS);
    {
        const struct fcase cases[] = {{"n1", SCHED_SUCCESS, ""}, {"n3", SCHED_SUCCESS, ""}};
        check_filter(&f, pl, dry, pod, cases, ARRAY_SIZE(cases));
    }
    /* Removing it again restores the minimum of 1. */
    assert_int_equal(pts_remove_pod(pl, dry, pod, px, fx_get(&f, "n3"), &st), SCHED_SUCCESS);
    {
        const struct fcase cases[] = {{"n1", SCHED_UNSCHEDULABLE, SKEW_MSG}};
        check_filter(&f, pl, dry, pod, cases, ARRAY_SIZE(cases));
    }
    /* Removing two of a's pods (preemption): a = 1, b = 1: n1 → 1 + 1 − 1 = 1. */
    assert_int_equal(pts_remove_pod(pl, dry, pod, p1, fx_get(&f, "n1"), &st), SCHED_SUCCESS);
    assert_int_equal(pts_remove_pod(pl, dry, pod, p2, fx_get(&f, "n1"), &st), SCHED_SUCCESS);
    {
        const struct fcase cases[] = {{"n1", SCHED_SUCCESS, ""}, {"n2", SCHED_SUCCESS, ""}};
        check_filter(&f, pl, dry, pod, cases, ARRAY_SIZE(cases));
    }
    /* A clone of the clone carries the changed counts; the original never saw them. */
    {
        struct sched_cycle *dry2 = sched_cycle_clone(dry);
        const struct fcase ok[] = {{"n1", SCHED_SUCCESS, ""}};
        const struct fcase fail[] = {{"n1", SCHED_UNSCHEDULABLE, SKEW_MSG}};
        check_filter(&f, pl, dry2, pod, ok, ARRAY_SIZE(ok));
        sched_cycle_free(dry2);
        check_filter(&f, pl, cs, pod, fail, ARRAY_SIZE(fail));
    }
    sched_cycle_free(dry);
    /* Without PreFilter's state AddPod is an error. */
    dry = sched_cycle_new();
    assert_int_equal(pts_add_pod(pl, dry, pod, px, fx_get(&f, "n3"), &st), SCHED_ERROR);
    sched_status_release(&st);
    sched_cycle_free(dry);
    sched_cycle_free(cs);
    sched_pod_unref(pod);
    sched_pod_unref(px);
    sched_pod_unref(pother);
    sched_pod_unref(p1);
    sched_pod_unref(p2);
    pts_free(pl);
    fx_release(&f);
}

static void test_critical_paths(void **state)
{
    struct pts_path p[2];

    (void)state;
    pts_paths_init(p);
    pts_paths_update(p, "a", 3);
    pts_paths_update(p, "b", 1);
    pts_paths_update(p, "c", 2);
    assert_string_equal(p[0].value, "b");
    assert_int_equal(p[0].num, 1);
    assert_string_equal(p[1].value, "c");
    assert_int_equal(p[1].num, 2);
    /* b grows past c: they swap. */
    pts_paths_update(p, "b", 4);
    assert_string_equal(p[0].value, "c");
    assert_int_equal(p[0].num, 2);
    assert_string_equal(p[1].value, "b");
    assert_int_equal(p[1].num, 4);
    /* a new lowest domain pushes the old one to [1]. */
    pts_paths_update(p, "d", 0);
    assert_string_equal(p[0].value, "d");
    assert_string_equal(p[1].value, "c");
}

/* ---- PreScore / Score / NormalizeScore ---- */

/* The normalised scores of the feasible nodes named (NULL-terminated), in that order. */
static void run_score(struct fx *f, const char *args, struct sched_pod *pod,
                      const char *const *names, const int64_t *raw, const int64_t *want)
{
    struct pts *pl = pts_new(args);
    struct sched_cycle *cs = sched_cycle_new();
    struct sched_status st = {0};
    struct sched_node_info *nodes[FX_MAX];
    struct sched_node_score scores[FX_MAX];
    size_t n = 0;

    for (; names[n]; n++)
        nodes[n] = fx_get(f, names[n]);
    assert_int_equal(pts_pre_score_snap(pl, &f->snap, cs, pod, nodes, n, &st), SCHED_SUCCESS);
    for (size_t i = 0; i < n; i++) {
        scores[i].ni = nodes[i];
        assert_int_equal(pts_score(pl, cs, pod, nodes[i], &scores[i].score, &st), SCHED_SUCCESS);
        if (scores[i].score != raw[i])
            fail_msg("node %s: raw score %lld, want %lld", names[i], (long long)scores[i].score,
                     (long long)raw[i]);
    }
    assert_int_equal(pts_normalize(pl, cs, pod, scores, n, &st), SCHED_SUCCESS);
    for (size_t i = 0; i < n; i++)
        if (scores[i].score != want[i])
            fail_msg("node %s: score %lld, want %lld", names[i], (long long)scores[i].score,
                     (long long)want[i]);
    sched_cycle_free(cs);
    pts_free(pl);
    sched_pod_unref(pod);
}

/* s1 (zone a, 2 matching pods), s2 (zone a, 0), s3 (zone b, 1), s4 (no zone, 1). Every node
 * has a hostname label. */
static void fx_score(struct fx *f)
{
    fx_init(
        f,
        fx_node("s1", "'zone':'a','kubernetes.io/hostname':'s1'",
                epod("p1", "default", "'app':'x'"), epod("p2", "default", "'app':'x'"), NULL),
        fx_node("s2", "'zone':'a','kubernetes.io/hostname':'s2'", NULL),
        fx_node("s3", "'zone':'b','kubernetes.io/hostname':'s3'",
                epod("p3", "default", "'app':'x'"), NULL),
        fx_node("s4", "'kubernetes.io/hostname':'s4'", epod("p4", "default", "'app':'x'"), NULL),
        NULL);
}

static void test_score(void **state)
{
    struct fx f;

    (void)state;
    fx_score(&f);
    /*
     * zone maxSkew 1. s4 lacks the zone key: ignored (0). Domains of the feasible nodes: a, b
     * → weight ln(4) = 1.3863; counts a = 2, b = 1. Raw: s1, s2 = round(2 × 1.3863) = 3,
     * s3 = round(1.3863) = 1. Normalised (min 1, max 3): s1, s2 = 100 × (3 + 1 − 3) / 3 = 33,
     * s3 = 100 × 3 / 3 = 100, s4 = 0.
     */
    {
        const char *const names[] = {"s1", "s2", "s3", "s4", NULL};
        const int64_t raw[] = {3, 3, 1, 0}, want[] = {33, 33, 100, 0};
        run_score(&f, NULL, inpod("'app':'x'", C_ZONE(1, "ScheduleAnyway")), names, raw, want);
    }
    /*
     * Plus hostname maxSkew 2: weight ln(3 + 2) = 1.6094 over the 3 scored nodes. Raw:
     * s1 = 2.7726 + 2 × 1.6094 + 1 = 6.9915 → 7; s2 = 2.7726 + 0 + 1 = 3.7726 → 4;
     * s3 = 1.3863 + 1.6094 + 1 = 3.9957 → 4. Normalised (min 4, max 7): s1 = 100 × 4 / 7 = 57,
     * s2 = s3 = 100 × 7 / 7 = 100.
     */
    {
        const char *const names[] = {"s1", "s2", "s3", "s4", NULL};
        const int64_t raw[] = {7, 4, 4, 0}, want[] = {57, 100, 100, 0};
        run_score(
            &f, NULL,
            inpod("'app':'x'",
                  C_ZONE(1, "ScheduleAnyway") ","
                                              "{'maxSkew':2,'topologyKey':'kubernetes.io/hostname',"
                                              "'whenUnsatisfiable':'ScheduleAnyway',"
                                              "'labelSelector':{'matchLabels':{'app':'x'}}}"),
            names, raw, want);
    }
    /*
     * Only s2 and s3 feasible: domains a, b (weight ln 4); pods are counted on every node of
     * those domains, s1's included: a = 2, b = 1. Raw s2 = 3, s3 = 1; normalised 33, 100.
     */
    {
        const char *const names[] = {"s2", "s3", NULL};
        const int64_t raw[] = {3, 1}, want[] = {33, 100};
        run_score(&f, NULL, inpod("'app':'x'", C_ZONE(1, "ScheduleAnyway")), names, raw, want);
    }
    /* Only s3 feasible: one domain (weight ln 3 = 1.0986), b = 1: raw round(1.0986) = 1,
     * normalised 100 × (1 + 1 − 1) / 1 = 100. */
    {
        const char *const names[] = {"s3", NULL};
        const int64_t raw[] = {1}, want[] = {100};
        run_score(&f, NULL, inpod("'app':'x'", C_ZONE(1, "ScheduleAnyway")), names, raw, want);
    }
    /* No matching pod anywhere (selector app=z), maxSkew 1: all raw 0, max 0 → all 100 but the
     * ignored s4. */
    {
        const char *const names[] = {"s1", "s3", "s4", NULL};
        const int64_t raw[] = {0, 0, 0}, want[] = {100, 100, 0};
        run_score(&f, NULL,
                  inpod("'app':'x'", "{'maxSkew':1,'topologyKey':'zone',"
                                     "'whenUnsatisfiable':'ScheduleAnyway',"
                                     "'labelSelector':{'matchLabels':{'app':'z'}}}"),
                  names, raw, want);
    }
    /* maxSkew 3 adds 2 to every scored node: raw s1 = round(2.7726 + 2) = 5, s3 =
     * round(1.3863 + 2) = 3; normalised s1 = 100 × 3 / 5 = 60, s3 = 100 × 5 / 5 = 100. */
    {
        const char *const names[] = {"s1", "s3", NULL};
        const int64_t raw[] = {5, 3}, want[] = {60, 100};
        run_score(&f, NULL, inpod("'app':'x'", C_ZONE(3, "ScheduleAnyway")), names, raw, want);
    }
    fx_release(&f);

    /*
     * The hostname weight counts only the scored nodes: h1 (zone a, 3 matching pods) and three
     * nodes without a zone label, ignored. zone: one domain, ln 3 = 1.0986; hostname: 4 − 3 = 1
     * node, ln 3. h1 = 3 × 1.0986 + 3 × 1.0986 = 6.5917 → 7 (with 4 nodes it would be
     * 3.2958 + 3 × ln 6 = 8.67 → 9); normalised 100 × (7 + 7 − 7) / 7 = 100, the others 0.
     */
    fx_init(&f,
            fx_node("h1", "'zone':'a','kubernetes.io/hostname':'h1'",
                    epod("p1", "default", "'app':'x'"), epod("p2", "default", "'app':'x'"),
                    epod("p3", "default", "'app':'x'"), NULL),
            fx_node("h2", "'kubernetes.io/hostname':'h2'", NULL),
            fx_node("h3", "'kubernetes.io/hostname':'h3'", NULL),
            fx_node("h4", "'kubernetes.io/hostname':'h4'", NULL), NULL);
    {
        const char *const names[] = {"h1", "h2", "h3", "h4", NULL};
        const int64_t raw[] = {7, 0, 0, 0}, want[] = {100, 0, 0, 0};
        run_score(
            &f, NULL,
            inpod("'app':'x'",
                  C_ZONE(1, "ScheduleAnyway") ","
                                              "{'maxSkew':1,'topologyKey':'kubernetes.io/hostname',"
                                              "'whenUnsatisfiable':'ScheduleAnyway',"
                                              "'labelSelector':{'matchLabels':{'app':'x'}}}"),
            names, raw, want);
    }
    fx_release(&f);
}

/* ---- args ---- */

/* Decoding args must fail with exactly the rendered errors want ('\n'-separated). */
/* args written with ' for ". */
static void check_args_error(const char *args_sq, const char *want)
{
    cJSON *args = fx_json(args_sq);

    assert_args_refused(&sched_plugin_pod_topology_spread, args, want);
    cJSON_Delete(args);
}

static void test_args(void **state)
{
    struct pts *pl;

    (void)state;
    /* System: hostname maxSkew 3 and zone maxSkew 5, ScheduleAnyway. */
    pl = pts_new(NULL);
    assert_true(pl->system_defaulted);
    assert_int_equal(pl->ndefaults, 2);
    assert_string_equal(pl->defaults[0].topology_key, "kubernetes.io/hostname");
    assert_int_equal(pl->defaults[0].max_skew, 3);
    assert_false(pl->defaults[0].do_not_schedule);
    assert_string_equal(pl->defaults[1].topology_key, "topology.kubernetes.io/zone");
    assert_int_equal(pl->defaults[1].max_skew, 5);
    assert_false(pl->defaults[1].do_not_schedule);
    pts_free(pl);
    pl = pts_new("{'apiVersion':'kubescheduler.config.k8s.io/v1','kind':'PodTopologySpreadArgs',"
                 "'defaultingType':'System'}");
    assert_true(pl->system_defaulted);
    pts_free(pl);
    pl =
        pts_new("{'defaultingType':'List','defaultConstraints':[{'maxSkew':1,"
                "'topologyKey':'topology.kubernetes.io/zone','whenUnsatisfiable':'ScheduleAnyway'},"
                "{'maxSkew':2,'topologyKey':'topology.kubernetes.io/zone',"
                "'whenUnsatisfiable':'DoNotSchedule','minDomains':2}]}");
    assert_false(pl->system_defaulted);
    assert_int_equal(pl->ndefaults, 2);
    assert_string_equal(pl->defaults[0].topology_key, "topology.kubernetes.io/zone");
    assert_false(pl->defaults[0].do_not_schedule);
    assert_int_equal(pl->defaults[0].min_domains, 1);
    assert_true(pl->defaults[1].do_not_schedule);
    assert_int_equal(pl->defaults[1].max_skew, 2);
    assert_int_equal(pl->defaults[1].min_domains, 2);
    pts_free(pl);

    check_args_error("{'defaultConstraints':[{'maxSkew':1,'topologyKey':'zone',"
                     "'whenUnsatisfiable':'ScheduleAnyway'}]}",
                     "args.defaultingType: Invalid value: \"System\": when .defaultConstraints "
                     "are not empty");
    check_args_error("{'defaultingType':'Sometimes'}",
                     "args.defaultingType: Unsupported value: \"Sometimes\": supported values: "
                     "\"System\", \"List\"");
    check_args_error(
        "{'defaultingType':'List','defaultConstraints':[{'maxSkew':0,'topologyKey':'',"
        "'whenUnsatisfiable':'Maybe','labelSelector':{}},{'maxSkew':1,'topologyKey':'zone',"
        "'whenUnsatisfiable':'DoNotSchedule'},{'maxSkew':1,'topologyKey':'zone',"
        "'whenUnsatisfiable':'DoNotSchedule'}]}",
        "args.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)\n"
        "args.defaultConstraints[0].topologyKey: Required value: can not be empty\n"
        "args.defaultConstraints[0].whenUnsatisfiable: Unsupported value: \"Maybe\": supported "
        "values: \"DoNotSchedule\", \"ScheduleAnyway\"\n"
        "args.defaultConstraints[0].labelSelector: Forbidden: constraint must not define a "
        "selector, as they deduced for each pod\n"
        "args.defaultConstraints[2]: Duplicate value: \"{zone, DoNotSchedule}\"");
    check_args_error("{'defaultingType':'List','defaultConstraints':[{'maxSkew':1,"
                     "'whenUnsatisfiable':'DoNotSchedule'}],'extra':1}",
                     "unknown field \"args.extra\"\n"
                     "args.defaultConstraints[0].topologyKey: Required value: can not be empty");
}

static void test_plugin_table(void **state)
{
    const struct sched_plugin *p = &sched_plugin_pod_topology_spread;

    (void)state;
    assert_string_equal(p->name, "PodTopologySpread");
    assert_int_equal(p->default_weight, 2);
    /* reference 3.7: Pod All, Node Add|Delete|UpdateNodeLabel|UpdateNodeTaint. */
    assert_string_equal(p->events[0].resource, "Pod");
    assert_int_equal(p->events[0].actions, 127);
    assert_string_equal(p->events[1].resource, "Node");
    assert_int_equal(p->events[1].actions, 1 | 2 | 8 | 16);
    assert_null(p->events[2].resource);
    assert_non_null(p->pre_filter);
    assert_non_null(p->add_pod);
    assert_non_null(p->remove_pod);
    assert_non_null(p->filter);
    assert_non_null(p->pre_score);
    assert_non_null(p->score);
    assert_non_null(p->normalize);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter_skew),
        cmocka_unit_test(test_filter_min_domains),
        cmocka_unit_test(test_filter_two_constraints),
        cmocka_unit_test(test_filter_namespace_and_terminating),
        cmocka_unit_test(test_filter_inclusion_policies),
        cmocka_unit_test(test_prefilter_skip_and_missing_state),
        cmocka_unit_test(test_add_remove_pod),
        cmocka_unit_test(test_critical_paths),
        cmocka_unit_test(test_score),
        cmocka_unit_test(test_args),
        cmocka_unit_test(test_plugin_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
