/*
 * InterPodAffinity (src/sched/plugins/interpodaffinity/inter_pod_affinity.c): the three filter
 * rules and their order, the self-affinity special case, anti-affinity of existing pods
 * (symmetry), term namespaces, AddPod/RemovePod on a cloned cycle, the score from both sides'
 * terms and its normalisation, args validation. Expected values are worked out by hand from
 * reference scheduler.md 5.5 in the comments beside each case.
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

#include "sched/plugins/interpodaffinity/inter_pod_affinity.c" /* NOLINT(bugprone-suspicious-include) */
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

/* A pod: name, namespace, labels (single-quoted JSON members) and its spec.affinity members. */
static struct sched_pod *apod(const char *name, const char *ns, const char *labels,
                              const char *affinity)
{
    return fx_pod("{'metadata':{'name':'%s','uid':'%s','namespace':'%s','labels':{%s}},"
                  "'spec':{'affinity':{%s}}}",
                  name, name, ns, labels, affinity);
}

static struct ipa *ipa_new(const char *args_sq)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    cJSON *args = args_sq ? fx_json(args_sq) : NULL;
    void *self = NULL;

    assert_int_equal(ipa_init(args, "args", NULL, &self, &errs), 0);
    assert_int_equal(errs.n, 0);
    cJSON_Delete(args);
    field_errors_release(&errs);
    return self;
}

/* Zones a (n1, n2) and b (n3); n4 has no zone label. Every node has a hostname label. */
#define NODE_LABELS(zone, host) zone "'kubernetes.io/hostname':'" host "'"
#define ZA                      "'zone':'a',"
#define ZB                      "'zone':'b',"

/* Required (anti-)affinity terms: one term, selector app=<app>, topologyKey <key>. */
#define REQ(kind, app, key)                                                                        \
    "'" kind "':{'requiredDuringSchedulingIgnoredDuringExecution':[{'labelSelector':"              \
    "{'matchLabels':{'app':'" app "'}},'topologyKey':'" key "'}]}"
#define AFF(app, key)  REQ("podAffinity", app, key)
#define ANTI(app, key) REQ("podAntiAffinity", app, key)
#define HOST           "kubernetes.io/hostname"

/* The filter answer for node name: code and message. */
struct fcase {
    const char *node;
    enum sched_code code;
    const char *msg;
};

static const char AFF_MSG[] = "node(s) didn't match pod affinity rules";
static const char ANTI_MSG[] = "node(s) didn't match pod anti-affinity rules";
static const char EXIST_MSG[] = "node(s) didn't satisfy existing pods anti-affinity rules";

static void check_filter(struct fx *f, struct ipa *pl, struct sched_cycle *cs,
                         const struct sched_pod *pod, const struct fcase *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct sched_status st = {0};
        enum sched_code c = ipa_filter(pl, cs, pod, fx_get(f, cases[i].node), &st);
        if (c != cases[i].code || strcmp(MSG(&st), cases[i].msg))
            fail_msg("node %s: got %d \"%s\", want %d \"%s\"", cases[i].node, c, MSG(&st),
                     cases[i].code, cases[i].msg);
        sched_status_release(&st);
    }
}

/* PreFilter (which must succeed) then Filter on the cases; pod is released. */
static void run_filter(struct fx *f, struct sched_pod *pod, const struct fcase *cases, size_t n)
{
    struct ipa *pl = ipa_new(NULL);
    struct sched_cycle *cs = sched_cycle_new();
    struct sched_status st = {0};

    assert_int_equal(ipa_pre_filter_snap(pl, &f->snap, cs, pod, &st), SCHED_SUCCESS);
    check_filter(f, pl, cs, pod, cases, n);
    sched_cycle_free(cs);
    ipa_free(pl);
    sched_pod_unref(pod);
}

/* The nodes with the given extra pods on n1 and n3 (taken over, may be NULL). */
static void fx_nodes(struct fx *f, struct sched_pod *on_n1, struct sched_pod *on_n3)
{
    fx_init(f, fx_node("n1", NODE_LABELS(ZA, "n1"), on_n1, NULL),
            fx_node("n2", NODE_LABELS(ZA, "n2"), apod("web-0", "default", "'app':'web'", ""), NULL),
            fx_node("n3", NODE_LABELS(ZB, "n3"), on_n3, NULL),
            fx_node("n4", NODE_LABELS("", "n4"), NULL), NULL);
}

/* ---- Filter ---- */

static void test_filter_affinity(void **state)
{
    struct fx f;

    (void)state;
    /* A db pod in zone a: the pod may go to zone a only; n4 has no zone label. */
    fx_nodes(&f, apod("db-0", "default", "'app':'db'", ""), NULL);
    {
        const struct fcase cases[] = {
            {"n1", SCHED_SUCCESS, ""},
            {"n2", SCHED_SUCCESS, ""},
            {"n3", SCHED_UNRESOLVABLE, AFF_MSG},
            {"n4", SCHED_UNRESOLVABLE, AFF_MSG},
        };
        run_filter(&f, apod("in", "default", "'app':'web'", AFF("db", "zone")), cases,
                   ARRAY_SIZE(cases));
    }
    /* Two terms (zone and hostname) must both hold: only n1 has a db pod on its host. */
    {
        const struct fcase cases[] = {
            {"n1", SCHED_SUCCESS, ""},
            {"n2", SCHED_UNRESOLVABLE, AFF_MSG},
            {"n3", SCHED_UNRESOLVABLE, AFF_MSG},
        };
        run_filter(&f,
                   apod("in", "default", "'app':'web'",
                        "'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':["
                        "{'labelSelector':{'matchLabels':{'app':'db'}},'topologyKey':'zone'},"
                        "{'labelSelector':{'matchLabels':{'app':'db'}},'topologyKey':'" HOST
                        "'}]}"),
                   cases, ARRAY_SIZE(cases));
    }
    fx_release(&f);
}

static void test_filter_affinity_self_match(void **state)
{
    struct fx f;

    (void)state;
    /* No db pod anywhere (the one there is in namespace other, which the term, listing no
     * namespaces, does not cover). */
    fx_nodes(&f, apod("db-x", "other", "'app':'db'", ""), NULL);
    /* The pod is a db itself: as the first of its group it may go to any node that has the
     * topology key. */
    {
        const struct fcase cases[] = {
            {"n1", SCHED_SUCCESS, ""},
            {"n2", SCHED_SUCCESS, ""},
            {"n3", SCHED_SUCCESS, ""},
            {"n4", SCHED_UNRESOLVABLE, AFF_MSG},
        };
        run_filter(&f, apod("in", "default", "'app':'db'", AFF("db", "zone")), cases,
                   ARRAY_SIZE(cases));
    }
    /* A web pod wanting a db has nowhere to go. */
    {
        const struct fcase cases[] = {
            {"n1", SCHED_UNRESOLVABLE, AFF_MSG},
            {"n3", SCHED_UNRESOLVABLE, AFF_MSG},
        };
        run_filter(&f, apod("in", "default", "'app':'web'", AFF("db", "zone")), cases,
                   ARRAY_SIZE(cases));
    }
    /* The term lists namespace other: the db there counts (zone a), so the special case no
     * longer applies and zone b is refused even to a db pod. */
    {
        const struct fcase cases[] = {
            {"n1", SCHED_SUCCESS, ""},
            {"n3", SCHED_UNRESOLVABLE, AFF_MSG},
        };
        run_filter(&f,
                   apod("in", "default", "'app':'db'",
                        "'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':["
                        "{'labelSelector':{'matchLabels':{'app':'db'}},'namespaces':['other'],"
                        "'topologyKey':'zone'}]}"),
                   cases, ARRAY_SIZE(cases));
    }
    /* An empty namespaceSelector covers every namespace: the same. */
    {
        const struct fcase cases[] = {
            {"n2", SCHED_SUCCESS, ""},
            {"n3", SCHED_UNRESOLVABLE, AFF_MSG},
        };
        run_filter(&f,
                   apod("in", "default", "'app':'db'",
                        "'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':["
                        "{'labelSelector':{'matchLabels':{'app':'db'}},'namespaceSelector':{},"
                        "'topologyKey':'zone'}]}"),
                   cases, ARRAY_SIZE(cases));
    }
    /* A non-empty namespaceSelector matches no namespace (no namespace labels known), the
     * pod's own included: nothing matches, not even the pod, so no node passes. */
    {
        const struct fcase cases[] = {
            {"n1", SCHED_UNRESOLVABLE, AFF_MSG},
            {"n3", SCHED_UNRESOLVABLE, AFF_MSG},
        };
        run_filter(&f,
                   apod("in", "default", "'app':'db'",
                        "'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':["
                        "{'labelSelector':{'matchLabels':{'app':'db'}},"
                        "'namespaceSelector':{'matchLabels':{'team':'x'}},"
                        "'topologyKey':'zone'}]}"),
                   cases, ARRAY_SIZE(cases));
    }
    fx_release(&f);
}

static void test_filter_anti_affinity(void **state)
{
    struct fx f;

    (void)state;
    fx_nodes(&f, apod("db-0", "default", "'app':'db'", ""), NULL);
    /* Away from db by zone: zone a refused; n4 has no zone label and passes. */
    {
        const struct fcase cases[] = {
            {"n1", SCHED_UNSCHEDULABLE, ANTI_MSG},
            {"n2", SCHED_UNSCHEDULABLE, ANTI_MSG},
            {"n3", SCHED_SUCCESS, ""},
            {"n4", SCHED_SUCCESS, ""},
        };
        run_filter(&f, apod("in", "default", "'app':'web'", ANTI("db", "zone")), cases,
                   ARRAY_SIZE(cases));
    }
    /* By hostname: only db's node. */
    {
        const struct fcase cases[] = {
            {"n1", SCHED_UNSCHEDULABLE, ANTI_MSG},
            {"n2", SCHED_SUCCESS, ""},
        };
        run_filter(&f, apod("in", "default", "'app':'web'", ANTI("db", HOST)), cases,
                   ARRAY_SIZE(cases));
    }
    /* Affinity is checked first: wanting a cache (there is none; the pod is no cache) and
     * avoiding db, n1 fails the affinity (UU). */
    {
        const struct fcase cases[] = {{"n1", SCHED_UNRESOLVABLE, AFF_MSG}};
        run_filter(
            &f, apod("in", "default", "'app':'web'", AFF("cache", "zone") "," ANTI("db", "zone")),
            cases, ARRAY_SIZE(cases));
    }
    fx_release(&f);
}

static void test_filter_existing_anti_affinity(void **state)
{
    struct fx f;
    struct ipa *pl = ipa_new(NULL);
    struct sched_cycle *cs = sched_cycle_new();
    struct sched_status st = {0};
    struct sched_pod *pod;

    (void)state;
    /* A guard pod in zone b refuses web pods in its zone; the web pod has no terms at all. */
    fx_nodes(&f, NULL, apod("guard", "default", "'app':'guard'", ANTI("web", "zone")));
    {
        const struct fcase cases[] = {
            {"n1", SCHED_SUCCESS, ""},
            {"n3", SCHED_UNSCHEDULABLE, EXIST_MSG},
            {"n4", SCHED_SUCCESS, ""},
        };
        run_filter(&f, apod("in", "default", "'app':'web'", ""), cases, ARRAY_SIZE(cases));
    }
    /* A pod the guard does not mind, without terms of its own: nothing to check. */
    pod = apod("in", "default", "'app':'api'", "");
    assert_int_equal(ipa_pre_filter_snap(pl, &f.snap, cs, pod, &st), SCHED_SKIP);
    sched_pod_unref(pod);
    /* A web pod of another namespace is outside the guard's term (its own namespace). */
    pod = apod("in", "other", "'app':'web'", "");
    assert_int_equal(ipa_pre_filter_snap(pl, &f.snap, cs, pod, &st), SCHED_SKIP);
    /* Filter without PreFilter's state is an error. */
    assert_int_equal(ipa_filter(pl, cs, pod, fx_get(&f, "n1"), &st), SCHED_ERROR);
    assert_string_equal(MSG(&st),
                        "error reading \"PreFilterInterPodAffinity\" from cycleState: not found");
    sched_status_release(&st);
    sched_pod_unref(pod);
    fx_release(&f);

    /* A guard of namespace other listing namespace default covers the web pod. */
    fx_nodes(&f, NULL,
             apod("guard", "other", "'app':'guard'",
                  "'podAntiAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':["
                  "{'labelSelector':{'matchLabels':{'app':'web'}},'namespaces':['default'],"
                  "'topologyKey':'" HOST "'}]}"));
    {
        const struct fcase cases[] = {
            {"n1", SCHED_SUCCESS, ""},
            {"n3", SCHED_UNSCHEDULABLE, EXIST_MSG},
        };
        run_filter(&f, apod("in", "default", "'app':'web'", ""), cases, ARRAY_SIZE(cases));
    }
    fx_release(&f);
    sched_cycle_free(cs);
    ipa_free(pl);
}

/* ---- AddPod / RemovePod ---- */

static void test_add_remove_pod(void **state)
{
    struct ipa *pl = ipa_new(NULL);
    struct sched_cycle *cs = sched_cycle_new(), *dry;
    struct sched_status st = {0};
    struct sched_pod *pod = apod("in", "default", "'app':'web'", AFF("db", "zone"));
    struct sched_pod *db = apod("db-1", "default", "'app':'db'", "");
    struct sched_pod *guard = apod("guard", "default", "'app':'guard'", ANTI("web", "zone"));
    struct fx f;

    (void)state;
    /* The web pod wants a db; there is none (and it is none): every node fails. */
    fx_nodes(&f, NULL, NULL);
    assert_int_equal(ipa_pre_filter_snap(pl, &f.snap, cs, pod, &st), SCHED_SUCCESS);
    {
        const struct fcase cases[] = {
            {"n1", SCHED_UNRESOLVABLE, AFF_MSG},
            {"n3", SCHED_UNRESOLVABLE, AFF_MSG},
        };
        check_filter(&f, pl, cs, pod, cases, ARRAY_SIZE(cases));
    }
    /* A dry run adds a db on n3: zone b passes, zone a still fails. */
    dry = sched_cycle_clone(cs);
    assert_int_equal(ipa_add_pod(pl, dry, pod, db, fx_get(&f, "n3"), &st), SCHED_SUCCESS);
    {
        const struct fcase cases[] = {
            {"n1", SCHED_UNRESOLVABLE, AFF_MSG},
            {"n3", SCHED_SUCCESS, ""},
        };
        check_filter(&f, pl, dry, pod, cases, ARRAY_SIZE(cases));
    }
    /* A guard added on n3 refuses web pods in zone b. */
    assert_int_equal(ipa_add_pod(pl, dry, pod, guard, fx_get(&f, "n3"), &st), SCHED_SUCCESS);
    {
        const struct fcase cases[] = {{"n3", SCHED_UNSCHEDULABLE, EXIST_MSG}};
        check_filter(&f, pl, dry, pod, cases, ARRAY_SIZE(cases));
    }
    /* Removed again, the guard no longer counts, nor the db once removed. */
    assert_int_equal(ipa_remove_pod(pl, dry, pod, guard, fx_get(&f, "n3"), &st), SCHED_SUCCESS);
    {
        const struct fcase cases[] = {{"n3", SCHED_SUCCESS, ""}};
        check_filter(&f, pl, dry, pod, cases, ARRAY_SIZE(cases));
    }
    assert_int_equal(ipa_remove_pod(pl, dry, pod, db, fx_get(&f, "n3"), &st), SCHED_SUCCESS);
    {
        const struct fcase cases[] = {{"n3", SCHED_UNRESOLVABLE, AFF_MSG}};
        check_filter(&f, pl, dry, pod, cases, ARRAY_SIZE(cases));
    }
    /* The original state never saw the dry run. */
    assert_int_equal(ipa_add_pod(pl, dry, pod, db, fx_get(&f, "n3"), &st), SCHED_SUCCESS);
    {
        const struct fcase cases[] = {{"n3", SCHED_UNRESOLVABLE, AFF_MSG}};
        check_filter(&f, pl, cs, pod, cases, ARRAY_SIZE(cases));
    }
    sched_cycle_free(dry);
    sched_cycle_free(cs);

    /* A db pod wanting a db: with none around it may go anywhere; a db added on n3 pins it to
     * zone b; once removed, the counts are empty again and the special case is back. */
    sched_pod_unref(pod);
    pod = apod("in", "default", "'app':'db'", AFF("db", "zone"));
    cs = sched_cycle_new();
    assert_int_equal(ipa_pre_filter_snap(pl, &f.snap, cs, pod, &st), SCHED_SUCCESS);
    dry = sched_cycle_clone(cs);
    assert_int_equal(ipa_add_pod(pl, dry, pod, db, fx_get(&f, "n3"), &st), SCHED_SUCCESS);
    {
        const struct fcase cases[] = {
            {"n1", SCHED_UNRESOLVABLE, AFF_MSG},
            {"n3", SCHED_SUCCESS, ""},
        };
        check_filter(&f, pl, dry, pod, cases, ARRAY_SIZE(cases));
    }
    assert_int_equal(ipa_remove_pod(pl, dry, pod, db, fx_get(&f, "n3"), &st), SCHED_SUCCESS);
    {
        const struct fcase cases[] = {{"n1", SCHED_SUCCESS, ""}, {"n3", SCHED_SUCCESS, ""}};
        check_filter(&f, pl, dry, pod, cases, ARRAY_SIZE(cases));
    }
    sched_cycle_free(dry);
    sched_cycle_free(cs);
    fx_release(&f);

    /* Preemption removes an existing guard: its zone opens up. */
    fx_nodes(&f, NULL, apod("guard", "default", "'app':'guard'", ANTI("web", "zone")));
    sched_pod_unref(pod);
    pod = apod("in", "default", "'app':'web'", "");
    cs = sched_cycle_new();
    assert_int_equal(ipa_pre_filter_snap(pl, &f.snap, cs, pod, &st), SCHED_SUCCESS);
    dry = sched_cycle_clone(cs);
    assert_int_equal(ipa_remove_pod(pl, dry, pod, guard, fx_get(&f, "n3"), &st), SCHED_SUCCESS);
    {
        const struct fcase cases[] = {{"n3", SCHED_SUCCESS, ""}};
        check_filter(&f, pl, dry, pod, cases, ARRAY_SIZE(cases));
    }
    {
        const struct fcase cases[] = {{"n3", SCHED_UNSCHEDULABLE, EXIST_MSG}};
        check_filter(&f, pl, cs, pod, cases, ARRAY_SIZE(cases));
    }
    sched_cycle_free(dry);
    /* Without PreFilter's state AddPod is an error. */
    dry = sched_cycle_new();
    assert_int_equal(ipa_add_pod(pl, dry, pod, db, fx_get(&f, "n3"), &st), SCHED_ERROR);
    sched_status_release(&st);
    sched_cycle_free(dry);
    sched_cycle_free(cs);
    fx_release(&f);
    sched_pod_unref(pod);
    sched_pod_unref(db);
    sched_pod_unref(guard);
    ipa_free(pl);
}

/* ---- PreScore / Score / NormalizeScore ---- */

/* PreScore (which must succeed), Score and NormalizeScore over the feasible nodes named
 * (NULL-terminated); raw and normalised scores must be as given. pod is released. */
static void run_score(struct fx *f, const char *args, struct sched_pod *pod,
                      const char *const *names, const int64_t *raw, const int64_t *want)
{
    struct ipa *pl = ipa_new(args);
    struct sched_cycle *cs = sched_cycle_new();
    struct sched_status st = {0};
    struct sched_node_score scores[FX_MAX];
    size_t n = 0;

    for (; names[n]; n++)
        scores[n].ni = fx_get(f, names[n]);
    assert_int_equal(ipa_pre_score_snap(pl, &f->snap, cs, pod, n, &st), SCHED_SUCCESS);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(ipa_score(pl, cs, pod, scores[i].ni, &scores[i].score, &st),
                         SCHED_SUCCESS);
        if (scores[i].score != raw[i])
            fail_msg("node %s: raw score %lld, want %lld", names[i], (long long)scores[i].score,
                     (long long)raw[i]);
    }
    assert_int_equal(ipa_normalize(pl, cs, pod, scores, n, &st), SCHED_SUCCESS);
    for (size_t i = 0; i < n; i++)
        if (scores[i].score != want[i])
            fail_msg("node %s: score %lld, want %lld", names[i], (long long)scores[i].score,
                     (long long)want[i]);
    sched_cycle_free(cs);
    ipa_free(pl);
    sched_pod_unref(pod);
}

static void test_score_incoming_terms(void **state)
{
    struct fx f;

    (void)state;
    /* s1, s2 zone a; s3 zone b; s4 zone c. db on s1; cache and db on s3; a db of namespace
     * other on s4 (outside the terms). */
    fx_init(&f,
            fx_node("s1", NODE_LABELS(ZA, "s1"), apod("db-0", "default", "'app':'db'", ""), NULL),
            fx_node("s2", NODE_LABELS(ZA, "s2"), NULL),
            fx_node("s3", NODE_LABELS(ZB, "s3"), apod("cache-0", "default", "'app':'cache'", ""),
                    apod("db-1", "default", "'app':'db'", ""), NULL),
            fx_node("s4", NODE_LABELS("'zone':'c',", "s4"), apod("db-x", "other", "'app':'db'", ""),
                    NULL),
            NULL);
    /*
     * Preferred affinity to db (weight 10, zone) and anti-affinity to cache (weight 5, zone):
     * zone a = +10, zone b = +10 − 5 = 5, zone c = 0. Raw s1 = s2 = 10, s3 = 5, s4 = 0;
     * normalised 100 × (s − 0) / 10 = 100, 100, 50, 0.
     */
    {
        const char *const names[] = {"s1", "s2", "s3", "s4", NULL};
        const int64_t raw[] = {10, 10, 5, 0}, want[] = {100, 100, 50, 0};
        run_score(&f, NULL,
                  apod("in", "default", "'app':'web'",
                       "'podAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':["
                       "{'weight':10,'podAffinityTerm':{'labelSelector':{'matchLabels':"
                       "{'app':'db'}},'topologyKey':'zone'}}]},"
                       "'podAntiAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':["
                       "{'weight':5,'podAffinityTerm':{'labelSelector':{'matchLabels':"
                       "{'app':'cache'}},'topologyKey':'zone'}}]}"),
                  names, raw, want);
    }
    /* All feasible nodes equal (s1, s2 both 10): every score 0. */
    {
        const char *const names[] = {"s1", "s2", NULL};
        const int64_t raw[] = {10, 10}, want[] = {0, 0};
        run_score(&f, NULL,
                  apod("in", "default", "'app':'web'",
                       "'podAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':["
                       "{'weight':10,'podAffinityTerm':{'labelSelector':{'matchLabels':"
                       "{'app':'db'}},'topologyKey':'zone'}}]}"),
                  names, raw, want);
    }
    /* Two terms: db by hostname weight 3 (s1 +3, s3 +3) and cache by zone weight 4, anti
     * (zone b −4): s1 = 3, s2 = 0, s3 = 3 − 4 = −1, s4 = 0. Normalised over min −1, max 3:
     * 100 × 4/4 = 100, 100 × 1/4 = 25, 0, 25. */
    {
        const char *const names[] = {"s1", "s2", "s3", "s4", NULL};
        const int64_t raw[] = {3, 0, -1, 0}, want[] = {100, 25, 0, 25};
        run_score(&f, NULL,
                  apod("in", "default", "'app':'web'",
                       "'podAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':["
                       "{'weight':3,'podAffinityTerm':{'labelSelector':{'matchLabels':"
                       "{'app':'db'}},'topologyKey':'" HOST "'}}]},"
                       "'podAntiAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':["
                       "{'weight':4,'podAffinityTerm':{'labelSelector':{'matchLabels':"
                       "{'app':'cache'}},'topologyKey':'zone'}}]}"),
                  names, raw, want);
    }
    fx_release(&f);
}

/* s1 zone a (a plain pod, tier=front), s2 zone a (a pod preferring to avoid web pods' hosts, weight
 * 20), s3 zone b (a pod preferring web pods in its zone, weight 7), s4 zone c (a pod requiring web
 * pods in its zone). */
static void fx_existing(struct fx *f)
{
    fx_init(f,
            fx_node("s1", NODE_LABELS(ZA, "s1"),
                    apod("p1", "default", "'app':'x','tier':'front'", ""), NULL),
            fx_node("s2", NODE_LABELS(ZA, "s2"),
                    apod("p2", "default", "'app':'x'",
                         "'podAntiAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':["
                         "{'weight':20,'podAffinityTerm':{'labelSelector':{'matchLabels':"
                         "{'app':'web'}},'topologyKey':'" HOST "'}}]}"),
                    NULL),
            fx_node("s3", NODE_LABELS(ZB, "s3"),
                    apod("p3", "default", "'app':'x'",
                         "'podAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':["
                         "{'weight':7,'podAffinityTerm':{'labelSelector':{'matchLabels':"
                         "{'app':'web'}},'topologyKey':'zone'}}]}"),
                    NULL),
            fx_node("s4", NODE_LABELS("'zone':'c',", "s4"),
                    apod("p4", "default", "'app':'x'", AFF("web", "zone")), NULL),
            NULL);
}

static void test_score_existing_terms(void **state)
{
    const char *const names[] = {"s1", "s2", "s3", "s4", NULL};
    struct ipa *pl;
    struct sched_cycle *cs;
    struct sched_status st = {0};
    struct sched_pod *pod;
    struct fx f;

    (void)state;
    fx_existing(&f);
    /*
     * The web pod has no terms; the existing pods' terms match it: host s2 −20, zone b +7,
     * zone c + hardPodAffinityWeight (1). Raw s1 = 0, s2 = −20, s3 = 7, s4 = 1. Normalised
     * over min −20, max 7 (27): s1 = int(100 × 20/27) = 74, s2 = 0, s3 = 100,
     * s4 = int(100 × 21/27) = 77.
     */
    {
        const int64_t raw[] = {0, -20, 7, 1}, want[] = {74, 0, 100, 77};
        run_score(&f, NULL, apod("in", "default", "'app':'web'", ""), names, raw, want);
    }
    /* hardPodAffinityWeight 5: s4 = 5 → int(100 × 25/27) = 92. */
    {
        const int64_t raw[] = {0, -20, 7, 5}, want[] = {74, 0, 100, 92};
        run_score(&f, "{'hardPodAffinityWeight':5}", apod("in", "default", "'app':'web'", ""),
                  names, raw, want);
    }
    /* hardPodAffinityWeight 0: the required term adds nothing, s4 = 0 → 74. */
    {
        const int64_t raw[] = {0, -20, 7, 0}, want[] = {74, 0, 100, 74};
        run_score(&f, "{'hardPodAffinityWeight':0}", apod("in", "default", "'app':'web'", ""),
                  names, raw, want);
    }
    /* A web pod of another namespace is outside every term: nothing to score. */
    pl = ipa_new(NULL);
    cs = sched_cycle_new();
    pod = apod("in", "other", "'app':'web'", "");
    assert_int_equal(ipa_pre_score_snap(pl, &f.snap, cs, pod, 4, &st), SCHED_SKIP);
    sched_pod_unref(pod);
    /* No feasible node: skip. */
    pod = apod("in", "default", "'app':'web'", "");
    assert_int_equal(ipa_pre_score_snap(pl, &f.snap, cs, pod, 0, &st), SCHED_SKIP);
    /* Score without PreScore's state is an error. */
    {
        int64_t s = 0;
        assert_int_equal(ipa_score(pl, cs, pod, fx_get(&f, "s1"), &s, &st), SCHED_ERROR);
        sched_status_release(&st);
    }
    ipa_free(pl);
    /* ignorePreferredTermsOfExistingPods with a pod without preferred terms: skip. */
    pl = ipa_new("{'ignorePreferredTermsOfExistingPods':true}");
    assert_int_equal(ipa_pre_score_snap(pl, &f.snap, cs, pod, 4, &st), SCHED_SKIP);
    sched_pod_unref(pod);
    ipa_free(pl);
    sched_cycle_free(cs);
    /* With a preferred term of its own (tier=front by hostname, weight 50: s1's pod), the
     * existing pods' terms still count: s1 = 50, s2 = −20, s3 = 7, s4 = 1; normalised over
     * min −20, max 50 (70): 100, 0, int(100 × 27/70) = 38, int(100 × 21/70) = 30. */
    {
        const int64_t raw[] = {50, -20, 7, 1}, want[] = {100, 0, 38, 30};
        run_score(&f, "{'ignorePreferredTermsOfExistingPods':true}",
                  apod("in", "default", "'app':'web'",
                       "'podAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':["
                       "{'weight':50,'podAffinityTerm':{'labelSelector':{'matchLabels':"
                       "{'tier':'front'}},'topologyKey':'" HOST "'}}]}"),
                  names, raw, want);
    }
    fx_release(&f);
}

/* ---- args ---- */

/* args written with ' for ". */
static void check_args_error(const char *args_sq, const char *want)
{
    cJSON *args = fx_json(args_sq);

    assert_args_refused(&sched_plugin_inter_pod_affinity, args, want);
    cJSON_Delete(args);
}

static void test_args(void **state)
{
    struct ipa *pl;

    (void)state;
    pl = ipa_new(NULL);
    assert_int_equal(pl->hard_weight, 1);
    assert_false(pl->ignore_existing_preferred);
    ipa_free(pl);
    pl = ipa_new("{'apiVersion':'kubescheduler.config.k8s.io/v1','kind':'InterPodAffinityArgs',"
                 "'hardPodAffinityWeight':100,'ignorePreferredTermsOfExistingPods':true}");
    assert_int_equal(pl->hard_weight, 100);
    assert_true(pl->ignore_existing_preferred);
    ipa_free(pl);

    check_args_error("{'hardPodAffinityWeight':101}",
                     "args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]");
    check_args_error("{'hardPodAffinityWeight':-1}",
                     "args.hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]");
    check_args_error("{'hardPodAffinityWeight':'x','ignorePreferredTermsOfExistingPods':'yes',"
                     "'extra':1}",
                     "unknown field \"args.extra\"\n"
                     "args.hardPodAffinityWeight: Invalid value: \"x\": must be an integer\n"
                     "args.ignorePreferredTermsOfExistingPods: Invalid value: \"yes\": must be a "
                     "boolean");
}

static void test_plugin_table(void **state)
{
    const struct sched_plugin *p = &sched_plugin_inter_pod_affinity;

    (void)state;
    assert_string_equal(p->name, "InterPodAffinity");
    assert_int_equal(p->default_weight, 2);
    /* reference 3.7: Pod All, Node Add|UpdateNodeLabel|UpdateNodeTaint. */
    assert_string_equal(p->events[0].resource, "Pod");
    assert_int_equal(p->events[0].actions, 127);
    assert_string_equal(p->events[1].resource, "Node");
    assert_int_equal(p->events[1].actions, 1 | 8 | 16);
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
        cmocka_unit_test(test_filter_affinity),
        cmocka_unit_test(test_filter_affinity_self_match),
        cmocka_unit_test(test_filter_anti_affinity),
        cmocka_unit_test(test_filter_existing_anti_affinity),
        cmocka_unit_test(test_add_remove_pod),
        cmocka_unit_test(test_score_incoming_terms),
        cmocka_unit_test(test_score_existing_terms),
        cmocka_unit_test(test_args),
        cmocka_unit_test(test_plugin_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
