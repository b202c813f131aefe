/*
 * Tests for the TaintToleration plugin (reference scheduler.md 5.3, 11.10):
 * - Filter: the first NoSchedule/NoExecute taint the pod does not tolerate rejects the node with
 *   UnschedulableAndUnresolvable "node(s) had untolerated taint {<key>: <value>}";
 *   PreferNoSchedule taints never do.
 * - Score: the number of PreferNoSchedule taints not tolerated by the pod's tolerations whose
 *   effect is empty or PreferNoSchedule; NormalizeScore reversed, 100 - 100 * c / max, all 100
 *   when max is 0. The expected numbers are worked out by hand next to each table.
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

static struct sched_node_info *node_with_taints(const char *name, const char *taints)
{
    char json[1024];

    (void)snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"taints\":%s}}",
                   name, taints);
    return NI(json, NULL);
}

static struct sched_pod *pod_with_tolerations(const char *tolerations)
{
    char json[1024];

    (void)snprintf(json, sizeof(json),
                   "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"tolerations\":%s}}", tolerations);
    return P(json);
}

static void test_filter(void **unused)
{
    static const struct {
        const char *taints, *tolerations;
        enum sched_code code;
        const char *msg;
    } cases[] = {
        {"[]", "[]", SCHED_SUCCESS, ""},
        {"[{\"key\":\"dedicated\",\"value\":\"gpu\",\"effect\":\"NoSchedule\"}]", "[]",
         SCHED_UNRESOLVABLE, "node(s) had untolerated taint {dedicated: gpu}"},
        {"[{\"key\":\"dedicated\",\"value\":\"gpu\",\"effect\":\"NoExecute\"}]", "[]",
         SCHED_UNRESOLVABLE, "node(s) had untolerated taint {dedicated: gpu}"},
        {"[{\"key\":\"dedicated\",\"value\":\"gpu\",\"effect\":\"PreferNoSchedule\"}]", "[]",
         SCHED_SUCCESS, ""},
        {"[{\"key\":\"dedicated\",\"value\":\"gpu\",\"effect\":\"NoSchedule\"}]",
         "[{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"gpu\",\"effect\":"
         "\"NoSchedule\"}]",
         SCHED_SUCCESS, ""},
        {"[{\"key\":\"dedicated\",\"value\":\"gpu\",\"effect\":\"NoSchedule\"}]",
         "[{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"cpu\"}]", SCHED_UNRESOLVABLE,
         "node(s) had untolerated taint {dedicated: gpu}"},
        /* A toleration for NoSchedule does not cover NoExecute. */
        {"[{\"key\":\"dedicated\",\"value\":\"gpu\",\"effect\":\"NoExecute\"}]",
         "[{\"key\":\"dedicated\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]",
         SCHED_UNRESOLVABLE, "node(s) had untolerated taint {dedicated: gpu}"},
        /* The first untolerated one is named, tolerated ones before it are passed over. */
        {"[{\"key\":\"a\",\"value\":\"1\",\"effect\":\"NoSchedule\"},"
         "{\"key\":\"b\",\"effect\":\"PreferNoSchedule\"},"
         "{\"key\":\"c\",\"effect\":\"NoExecute\"},"
         "{\"key\":\"d\",\"value\":\"4\",\"effect\":\"NoSchedule\"}]",
         "[{\"key\":\"a\",\"operator\":\"Exists\"}]", SCHED_UNRESOLVABLE,
         "node(s) had untolerated taint {c: }"},
        /* Exists with no key tolerates everything. */
        {"[{\"key\":\"a\",\"value\":\"1\",\"effect\":\"NoSchedule\"},"
         "{\"key\":\"c\",\"effect\":\"NoExecute\"}]",
         "[{\"operator\":\"Exists\"}]", SCHED_SUCCESS, ""},
    };

    (void)unused;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct sched_node_info *ni = node_with_taints("n1", cases[i].taints);
        struct sched_pod *p = pod_with_tolerations(cases[i].tolerations);
        struct sched_status st = {0};
        enum sched_code c = sched_plugin_taint_toleration.filter(NULL, NULL, p, ni, &st);

        if (c != cases[i].code || strcmp(MSG(&st), cases[i].msg))
            fail_msg("case %zu: got %d %s", i, (int)c, MSG(&st));
        sched_status_release(&st);
        sched_pod_unref(p);
        sched_node_info_free(ni);
    }
}

/*
 * Pod tolerations: "a" Exists with no effect (counts for PreferNoSchedule), "b" Exists for
 * NoSchedule only (does not count). Per node, untolerated PreferNoSchedule taints:
 *   n1 none                                  -> 0
 *   n2 a:PreferNoSchedule                    -> 0 (tolerated by "a")
 *   n3 b:PreferNoSchedule                    -> 1 ("b" has effect NoSchedule)
 *   n4 b, c=x, a (all PreferNoSchedule), d:NoSchedule -> 2 (b, c; d is not PreferNoSchedule)
 * max = 2: 100 - 100*0/2 = 100, 100, 100 - 100*1/2 = 50, 100 - 100*2/2 = 0.
 */
static const char *const score_taints[] = {
    "[]",
    "[{\"key\":\"a\",\"effect\":\"PreferNoSchedule\"}]",
    "[{\"key\":\"b\",\"effect\":\"PreferNoSchedule\"}]",
    "[{\"key\":\"b\",\"effect\":\"PreferNoSchedule\"},"
    "{\"key\":\"c\",\"value\":\"x\",\"effect\":\"PreferNoSchedule\"},"
    "{\"key\":\"a\",\"effect\":\"PreferNoSchedule\"},{\"key\":\"d\",\"effect\":\"NoSchedule\"}]",
};
static const int64_t score_raw[] = {0, 0, 1, 2};
static const int64_t score_norm[] = {100, 100, 50, 0};
#define SCORE_TOLERATIONS                                                                          \
    "[{\"key\":\"a\",\"operator\":\"Exists\"},"                                                    \
    "{\"key\":\"b\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]"

static void run_scores(bool with_pre_score)
{
    const struct sched_plugin *pl = &sched_plugin_taint_toleration;
    struct sched_pod *p = pod_with_tolerations(SCORE_TOLERATIONS);
    struct sched_node_info *nis[4];
    struct sched_node_score scores[4];
    struct sched_cycle *cs = sched_cycle_new();
    struct sched_status st = {0};

    for (size_t i = 0; i < 4; i++) {
        char name[8];
        (void)snprintf(name, sizeof(name), "n%zu", i + 1);
        nis[i] = node_with_taints(name, score_taints[i]);
    }
    if (with_pre_score)
        assert_int_equal(pl->pre_score(NULL, cs, p, nis, 4, &st), SCHED_SUCCESS);
    for (size_t i = 0; i < 4; i++) {
        scores[i].ni = nis[i];
        assert_int_equal(pl->score(NULL, cs, p, nis[i], &scores[i].score, &st), SCHED_SUCCESS);
        if (scores[i].score != score_raw[i])
            fail_msg("node %zu: raw %lld", i, (long long)scores[i].score);
    }
    /* The framework's path: score_nodes over the four at once gives the same raw counts. */
    struct sched_node_score batch[4];
    for (size_t i = 0; i < 4; i++)
        batch[i] = (struct sched_node_score){.ni = nis[i], .score = -1};
    assert_int_equal(pl->score_nodes(NULL, cs, p, batch, 4, &st), SCHED_SUCCESS);
    for (size_t i = 0; i < 4; i++)
        if (batch[i].score != score_raw[i])
            fail_msg("node %zu: score_nodes raw %lld", i, (long long)batch[i].score);
    assert_int_equal(pl->normalize(NULL, cs, p, scores, 4, &st), SCHED_SUCCESS);
    for (size_t i = 0; i < 4; i++)
        if (scores[i].score != score_norm[i])
            fail_msg("node %zu: normalized %lld", i, (long long)scores[i].score);
    assert_int_equal(st.n, 0);
    for (size_t i = 0; i < 4; i++)
        sched_node_info_free(nis[i]);
    sched_cycle_free(cs);
    sched_pod_unref(p);
}

static void test_score(void **unused)
{
    (void)unused;
    run_scores(true);
}

/* Without PreScore's state (PreScore disabled) Score filters the tolerations itself. */
static void test_score_without_pre_score(void **unused)
{
    (void)unused;
    run_scores(false);
}

static void test_normalize(void **unused)
{
    static const struct {
        int64_t in[3], out[3];
    } cases[] = {
        {{0, 0, 0}, {100, 100, 100}}, /* max 0: all 100 */
        {{0, 1, 3}, {100, 67, 0}},    /* 100 - 100*1/3 = 100 - 33 = 67 */
        {{2, 2, 2}, {0, 0, 0}},       /* 100 - 100*2/2 */
        {{1, 3, 7}, {86, 58, 0}},     /* 100 - 14, 100 - 42 (300/7 = 42) */
    };

    (void)unused;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct sched_node_score s[3];
        struct sched_status st = {0};

        for (size_t j = 0; j < 3; j++) {
            s[j].ni = NULL;
            s[j].score = cases[i].in[j];
        }
        assert_int_equal(sched_plugin_taint_toleration.normalize(NULL, NULL, NULL, s, 3, &st),
                         SCHED_SUCCESS);
        for (size_t j = 0; j < 3; j++)
            if (s[j].score != cases[i].out[j])
                fail_msg("case %zu node %zu: %lld", i, j, (long long)s[j].score);
    }
}

static void test_registration(void **unused)
{
    const struct sched_event_reg *e = sched_plugin_taint_toleration.events;

    (void)unused;
    assert_int_equal(sched_plugin_taint_toleration.default_weight, 3);
    assert_string_equal(e[0].resource, "Node");
    assert_int_equal(e[0].actions, SCHED_ACT_ADD | SCHED_ACT_UPDATE);
    assert_null(e[1].resource);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter),
        cmocka_unit_test(test_score),
        cmocka_unit_test(test_score_without_pre_score),
        cmocka_unit_test(test_normalize),
        cmocka_unit_test(test_registration),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
