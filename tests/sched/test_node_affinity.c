/*
 * Tests for the NodeAffinity plugin (reference scheduler.md 5.3, 7):
 * - Filter: spec.nodeSelector AND the required node affinity (terms ORed, a term's expressions
 *   and fields ANDed) or UnschedulableAndUnresolvable "node(s) didn't match Pod's node
 *   affinity/selector"; the args' addedAffinity first, failing with "node(s) didn't match
 *   scheduler-enforced node affinity".
 * - PreFilter: Skip without nodeSelector, required affinity and addedAffinity; the union of the
 *   metadata.name In sets when every term pins names (intersected within a term); UU "pod
 *   affinity terms conflict" when that union is empty.
 * - Score: sum of the weights of matching preferred terms (pod's and addedAffinity's), then
 *   100 * s / max; worked out by hand beside the table.
 * - init: addedAffinity decoded with field errors for bad selectors.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "api/field.h"
#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"
#include "sched/schedtest.h"
#include "testutil.h"

#define PL      (&sched_plugin_node_affinity)
#define NOT_POD "node(s) didn't match Pod's node affinity/selector"
#define NOT_ENF "node(s) didn't match scheduler-enforced node affinity"

/* The plugin instance for args JSON (NULL = no args); fails the test on errors. */
static void *instance(const char *args)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    cJSON *a = args ? J(args) : NULL;
    void *self = NULL;

    if (PL->init(a, "args", NULL, &self, &errs) != 0)
        fail_with_errors(&errs, "init(%s)", args);
    assert_non_null(self);
    cJSON_Delete(a);
    field_errors_release(&errs);
    return self;
}

#define REQ(terms)                                                                                 \
    "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"         \
    "\"nodeSelectorTerms\":" terms "}}}"
#define EXPR(key, op, values) "{\"key\":\"" key "\",\"operator\":\"" op "\",\"values\":" values "}"
#define NAME_IN(n)            "{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"" n "\"]}"
#define ADDED_REQ(terms)                                                                           \
    "{\"addedAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"                     \
    "\"nodeSelectorTerms\":" terms "}}}"

static struct sched_pod *pod(const char *spec)
{
    char json[2048];

    (void)snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"p\"},\"spec\":{%s}}", spec);
    return P(json);
}

static struct sched_node_info *node(const char *name, const char *labels)
{
    char json[1024];

    (void)snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"%s\",\"labels\":%s}}", name,
                   labels);
    return NI(json, NULL);
}

static void test_filter(void **unused)
{
    static const struct {
        const char *args, *spec, *node, *labels;
        enum sched_code code;
        const char *msg;
    } cases[] = {
        {NULL, "", "n1", "{}", SCHED_SUCCESS, ""},
        {NULL, "\"nodeSelector\":{\"zone\":\"a\"}", "n1", "{\"zone\":\"a\"}", SCHED_SUCCESS, ""},
        {NULL, "\"nodeSelector\":{\"zone\":\"a\"}", "n1", "{\"zone\":\"b\"}", SCHED_UNRESOLVABLE,
         NOT_POD},
        {NULL, "\"nodeSelector\":{\"zone\":\"a\",\"disk\":\"ssd\"}", "n1", "{\"zone\":\"a\"}",
         SCHED_UNRESOLVABLE, NOT_POD},
        {NULL, "\"nodeSelector\":{\"zone\":\"a\"}", "n1", "{}", SCHED_UNRESOLVABLE, NOT_POD},
        /* Terms are ORed. */
        {NULL,
         REQ("[{\"matchExpressions\":[" EXPR(
             "gpu", "Exists", "[]") "]},"
                                    "{\"matchExpressions\":[" EXPR("size", "Gt", "[\"4\"]") "]}]"),
         "n1", "{\"gpu\":\"\"}", SCHED_SUCCESS, ""},
        {NULL,
         REQ("[{\"matchExpressions\":[" EXPR(
             "gpu", "Exists", "[]") "]},"
                                    "{\"matchExpressions\":[" EXPR("size", "Gt", "[\"4\"]") "]}]"),
         "n1", "{\"size\":\"8\"}", SCHED_SUCCESS, ""},
        {NULL,
         REQ("[{\"matchExpressions\":[" EXPR(
             "gpu", "Exists", "[]") "]},"
                                    "{\"matchExpressions\":[" EXPR("size", "Gt", "[\"4\"]") "]}]"),
         "n1", "{\"size\":\"4\"}", SCHED_UNRESOLVABLE, NOT_POD},
        {NULL, REQ("[{\"matchExpressions\":[" EXPR("size", "Lt", "[\"4\"]") "]}]"), "n1",
         "{\"size\":\"abc\"}", SCHED_UNRESOLVABLE, NOT_POD},
        /* Within a term everything must hold. */
        {NULL,
         REQ("[{\"matchExpressions\":[" EXPR("zone", "In", "[\"a\",\"b\"]") "," EXPR(
             "os", "NotIn", "[\"windows\"]") "]}]"),
         "n1", "{\"zone\":\"b\",\"os\":\"linux\"}", SCHED_SUCCESS, ""},
        {NULL,
         REQ("[{\"matchExpressions\":[" EXPR("zone", "In", "[\"a\",\"b\"]") "," EXPR(
             "os", "NotIn", "[\"windows\"]") "]}]"),
         "n1", "{\"zone\":\"b\",\"os\":\"windows\"}", SCHED_UNRESOLVABLE, NOT_POD},
        {NULL, REQ("[{\"matchExpressions\":[" EXPR("gpu", "DoesNotExist", "[]") "]}]"), "n1",
         "{\"gpu\":\"1\"}", SCHED_UNRESOLVABLE, NOT_POD},
        /* An empty term matches nothing. */
        {NULL, REQ("[{}]"), "n1", "{}", SCHED_UNRESOLVABLE, NOT_POD},
        /* matchFields on the node's name, with and without expressions. */
        {NULL, REQ("[{\"matchFields\":[" NAME_IN("n1") "]}]"), "n1", "{}", SCHED_SUCCESS, ""},
        {NULL, REQ("[{\"matchFields\":[" NAME_IN("n1") "]}]"), "n2", "{}", SCHED_UNRESOLVABLE,
         NOT_POD},
        {NULL,
         REQ("[{\"matchFields\":[" NAME_IN("n1") "],\"matchExpressions\":[" EXPR("zone", "In",
                                                                                 "[\"a\"]") "]}]"),
         "n1", "{\"zone\":\"b\"}", SCHED_UNRESOLVABLE, NOT_POD},
        /* nodeSelector AND affinity. */
        {NULL, "\"nodeSelector\":{\"zone\":\"a\"}," REQ("[{\"matchFields\":[" NAME_IN("n1") "]}]"),
         "n1", "{\"zone\":\"b\"}", SCHED_UNRESOLVABLE, NOT_POD},
        /* addedAffinity is checked first and has its own message. */
        {ADDED_REQ("[{\"matchExpressions\":[" EXPR("pool", "In", "[\"x\"]") "]}]"), "", "n1",
         "{\"pool\":\"x\"}", SCHED_SUCCESS, ""},
        {ADDED_REQ("[{\"matchExpressions\":[" EXPR("pool", "In", "[\"x\"]") "]}]"), "", "n1",
         "{\"pool\":\"y\"}", SCHED_UNRESOLVABLE, NOT_ENF},
        {ADDED_REQ("[{\"matchExpressions\":[" EXPR("pool", "In", "[\"x\"]") "]}]"),
         "\"nodeSelector\":{\"zone\":\"a\"}", "n1", "{\"pool\":\"y\"}", SCHED_UNRESOLVABLE,
         NOT_ENF},
        {ADDED_REQ("[{\"matchExpressions\":[" EXPR("pool", "In", "[\"x\"]") "]}]"),
         "\"nodeSelector\":{\"zone\":\"a\"}", "n1", "{\"pool\":\"x\"}", SCHED_UNRESOLVABLE,
         NOT_POD},
        /* A required selector without terms (or with only empty ones) admits no node. */
        {ADDED_REQ("[]"), "", "n1", "{}", SCHED_UNRESOLVABLE, NOT_ENF},
        {ADDED_REQ("[{}]"), "", "n1", "{}", SCHED_UNRESOLVABLE, NOT_ENF},
        {ADDED_REQ("[{}, {\"matchFields\":[" NAME_IN("n1") "]}]"), "", "n1", "{}", SCHED_SUCCESS,
         ""},
        /* addedAffinity with only preferred terms enforces nothing. */
        {"{\"addedAffinity\":{}}", "", "n1", "{}", SCHED_SUCCESS, ""},
    };

    (void)unused;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        void *self = instance(cases[i].args);
        struct sched_pod *p = pod(cases[i].spec);
        struct sched_node_info *ni = node(cases[i].node, cases[i].labels);
        struct sched_status st = {0};
        enum sched_code c;

        if (p->invalid)
            fail_msg("case %zu: pod invalid: %s", i, p->invalid);
        c = PL->filter(self, NULL, p, ni, &st);
        if (c != cases[i].code || strcmp(MSG(&st), cases[i].msg))
            fail_msg("case %zu: got %d %s", i, (int)c, MSG(&st));
        sched_status_release(&st);
        sched_node_info_free(ni);
        sched_pod_unref(p);
        PL->free(self);
    }
}

static void test_pre_filter(void **unused)
{
    static const struct {
        const char *args, *spec;
        enum sched_code code;
        const char *names; /* expected restriction, space-separated and sorted; NULL: none */
    } cases[] = {
        {NULL, "", SCHED_SKIP, NULL},
        {"{}", "", SCHED_SKIP, NULL},
        {ADDED_REQ("[{\"matchFields\":[" NAME_IN("n1") "]}]"), "", SCHED_SUCCESS, NULL},
        {NULL, "\"nodeSelector\":{\"zone\":\"a\"}", SCHED_SUCCESS, NULL},
        {NULL, REQ("[{\"matchExpressions\":[" EXPR("zone", "In", "[\"a\"]") "]}]"), SCHED_SUCCESS,
         NULL},
        {NULL, REQ("[{\"matchFields\":[" NAME_IN("n1") "]}]"), SCHED_SUCCESS, "n1"},
        {NULL, REQ("[{\"matchFields\":[" NAME_IN("n1") "]},{\"matchFields\":[" NAME_IN("n2") "]}]"),
         SCHED_SUCCESS, "n1 n2"},
        {NULL, REQ("[{\"matchFields\":[" NAME_IN("n1") "]},{\"matchFields\":[" NAME_IN("n1") "]}]"),
         SCHED_SUCCESS, "n1"},
        /* Expressions beside the name do not widen the set. */
        {NULL,
         REQ("[{\"matchFields\":[" NAME_IN("n1") "],\"matchExpressions\":[" EXPR("zone", "In",
                                                                                 "[\"a\"]") "]}]"),
         SCHED_SUCCESS, "n1"},
        /* One term without a name: any node may match. */
        {NULL,
         REQ("[{\"matchFields\":[" NAME_IN("n1") "]},{\"matchExpressions\":[" EXPR(
             "zone", "In", "[\"a\"]") "]}]"),
         SCHED_SUCCESS, NULL},
        {NULL, REQ("[{\"matchFields\":[" NAME_IN("n1") "]},{}]"), SCHED_SUCCESS, NULL},
        /* NotIn does not pin. */
        {NULL,
         REQ("[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"NotIn\","
             "\"values\":[\"n1\"]}]}]"),
         SCHED_SUCCESS, NULL},
        /* Two names ANDed in one term: their intersection. */
        {NULL, REQ("[{\"matchFields\":[" NAME_IN("n1") "," NAME_IN("n1") "]}]"), SCHED_SUCCESS,
         "n1"},
        {NULL, REQ("[{\"matchFields\":[" NAME_IN("n1") "," NAME_IN("n2") "]}]"), SCHED_UNRESOLVABLE,
         NULL},
        {NULL,
         REQ("[{\"matchFields\":[" NAME_IN("n1") "," NAME_IN("n2") "]},"
                                                                   "{\"matchFields\":[" NAME_IN(
                                                                       "n3") "]}]"),
         SCHED_SUCCESS, "n3"},
    };

    (void)unused;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        void *self = instance(cases[i].args);
        struct sched_pod *p = pod(cases[i].spec);
        struct sched_prefilter_result res = {0};
        struct sched_status st = {0};
        enum sched_code c = PL->pre_filter(self, NULL, p, &res, &st);
        char got[256] = "";
        size_t len = 0;

        if (c != cases[i].code)
            fail_msg("case %zu: got %d %s", i, (int)c, MSG(&st));
        if (c == SCHED_UNRESOLVABLE)
            assert_string_equal(MSG(&st), "pod affinity terms conflict");
        else
            assert_int_equal(st.n, 0);
        /* Sort the names for comparison (the set has no order). */
        for (size_t a = 0; a < res.n; a++)
            for (size_t b = a + 1; b < res.n; b++)
                if (strcmp(res.names[a], res.names[b]) > 0) {
                    char *t = res.names[a];
                    res.names[a] = res.names[b];
                    res.names[b] = t;
                }
        for (size_t a = 0; a < res.n; a++)
            len +=
                (size_t)snprintf(got + len, sizeof(got) - len, "%s%s", a ? " " : "", res.names[a]);
        if (!cases[i].names != !res.restrict_nodes ||
            (cases[i].names && strcmp(cases[i].names, got)))
            fail_msg("case %zu: restrict %d names '%s'", i, (int)res.restrict_nodes, got);
        for (size_t a = 0; a < res.n; a++)
            free(res.names[a]);
        free(res.names);
        sched_status_release(&st);
        sched_pod_unref(p);
        PL->free(self);
    }
}

#define PREF(w, term) "{\"weight\":" #w ",\"preference\":" term "}"
#define POD_PREFS                                                                                      \
    "\"affinity\":{\"nodeAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":[" PREF(      \
        5,                                                                                             \
        "{\"matchExpressions\":[" EXPR(                                                                \
            "zone", "In",                                                                              \
            "[\"a\"]") "]}") "," PREF(3,                                                               \
                                      "{\"matchExpressions\":[" EXPR(                                  \
                                          "disk", "In",                                                \
                                          "[\"ssd\"]") "]}") "," PREF(0,                               \
                                                                      "{\"matchExpressions\":"         \
                                                                      "[" EXPR(                        \
                                                                          "zone", "In",                \
                                                                          "[\"a\"]") "]}") "," PREF(7, \
                                                                                                    "{}") "]}}"
#define ADDED_PREFS                                                                                \
    "{\"addedAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":[" PREF(              \
        10, "{\"matchFields\":[" NAME_IN(                                                          \
                "n3") "]}") "," PREF(0, "{\"matchFields\":[" NAME_IN("n1") "]}") "]}}"

/*
 * Pod's preferred terms: zone=a 5, disk=ssd 3, zone=a with weight 0 (dropped), an empty term
 * with weight 7 (matches nothing). addedAffinity's: name n3 weight 10, name n1 weight 0.
 *   n1 zone=a disk=ssd: 5 + 3 = 8       n2 zone=b disk=ssd: 3
 *   n3 zone=a: 5 (+ 10 added) = 15      n4 no labels: 0
 * With addedAffinity, max 15: 100*8/15 = 53, 100*3/15 = 20, 100, 0.
 * Without it, max 8: 100, 100*3/8 = 37, 100*5/8 = 62, 0.
 */
static const char *const score_labels[] = {
    "{\"zone\":\"a\",\"disk\":\"ssd\"}",
    "{\"zone\":\"b\",\"disk\":\"ssd\"}",
    "{\"zone\":\"a\"}",
    "{}",
};

static void run_scores(const char *args, const char *spec, const int64_t raw[4],
                       const int64_t norm[4])
{
    void *self = instance(args);
    struct sched_pod *p = pod(spec);
    struct sched_node_info *nis[4];
    struct sched_node_score scores[4];
    struct sched_status st = {0};

    for (size_t i = 0; i < 4; i++) {
        char name[8];
        (void)snprintf(name, sizeof(name), "n%zu", i + 1);
        nis[i] = node(name, score_labels[i]);
    }
    assert_int_equal(PL->pre_score(self, NULL, p, nis, 4, &st), SCHED_SUCCESS);
    for (size_t i = 0; i < 4; i++) {
        scores[i].ni = nis[i];
        assert_int_equal(PL->score(self, NULL, p, nis[i], &scores[i].score, &st), SCHED_SUCCESS);
        if (scores[i].score != raw[i])
            fail_msg("node %zu: raw %lld", i, (long long)scores[i].score);
    }
    assert_int_equal(PL->normalize(self, NULL, p, scores, 4, &st), SCHED_SUCCESS);
    for (size_t i = 0; i < 4; i++)
        if (scores[i].score != norm[i])
            fail_msg("node %zu: normalized %lld", i, (long long)scores[i].score);
    assert_int_equal(st.n, 0);
    for (size_t i = 0; i < 4; i++)
        sched_node_info_free(nis[i]);
    sched_pod_unref(p);
    PL->free(self);
}

static void test_score(void **unused)
{
    static const int64_t raw_added[4] = {8, 3, 15, 0}, norm_added[4] = {53, 20, 100, 0};
    static const int64_t raw_pod[4] = {8, 3, 5, 0}, norm_pod[4] = {100, 37, 62, 0};
    static const int64_t raw_only_added[4] = {0, 0, 10, 0}, norm_only_added[4] = {0, 0, 100, 0};
    static const int64_t zeros[4] = {0, 0, 0, 0};

    (void)unused;
    run_scores(ADDED_PREFS, POD_PREFS, raw_added, norm_added);
    run_scores(NULL, POD_PREFS, raw_pod, norm_pod);
    run_scores(ADDED_PREFS, "", raw_only_added, norm_only_added);
    /* addedAffinity without preferred terms: PreScore runs, every score is 0 and stays 0. */
    run_scores("{\"addedAffinity\":{}}", "", zeros, zeros);
}

static void test_pre_score_skip(void **unused)
{
    void *plain = instance(NULL), *added = instance("{\"addedAffinity\":{}}");
    struct sched_pod *none = pod(""), *prefs = pod(POD_PREFS);
    struct sched_node_info *ni = node("n1", "{}");
    struct sched_status st = {0};

    (void)unused;
    assert_int_equal(PL->pre_score(plain, NULL, none, &ni, 1, &st), SCHED_SKIP);
    assert_int_equal(PL->pre_score(plain, NULL, prefs, &ni, 1, &st), SCHED_SUCCESS);
    assert_int_equal(PL->pre_score(added, NULL, none, &ni, 1, &st), SCHED_SUCCESS);
    assert_int_equal(PL->pre_score(plain, NULL, none, NULL, 0, &st), SCHED_SUCCESS);
    assert_int_equal(st.n, 0);
    sched_node_info_free(ni);
    sched_pod_unref(none);
    sched_pod_unref(prefs);
    PL->free(plain);
    PL->free(added);
}

static void test_init_errors(void **unused)
{
#define RQ "args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
#define PF "args.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
    static const struct {
        const char *args;
        const char *want[3]; /* rendered errors, in order */
    } cases[] = {
        {ADDED_REQ("[{\"matchExpressions\":[" EXPR("a", "Foo", "[]") "]}]"),
         {RQ ".matchExpressions[0].operator: Unsupported value: \"Foo\": supported values: "
             "\"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\""}},
        {ADDED_REQ("[{\"matchExpressions\":[" EXPR("a", "In", "[]") "]}]"),
         {RQ ".matchExpressions[0].values: Invalid value: []string(nil): for 'in', 'notin' "
             "operators, values set can't be empty"}},
        {ADDED_REQ("[{\"matchExpressions\":[" EXPR("a", "Exists", "[\"x\"]") "]}]"),
         {RQ ".matchExpressions[0].values: Invalid value: []string{\"x\"}: values set must be "
             "empty for exists and does not exist"}},
        {ADDED_REQ("[{\"matchExpressions\":[" EXPR("a", "Gt", "[\"1\",\"2\"]") "]}]"),
         {RQ ".matchExpressions[0].values: Invalid value: []string{\"1\", \"2\"}: for 'Gt', 'Lt' "
             "operators, exactly one value is required"}},
        {ADDED_REQ("[{\"matchExpressions\":[" EXPR("a", "Lt", "[\"x\"]") "]}]"),
         {RQ ".matchExpressions[0].values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, "
             "the value must be an integer"}},
        {ADDED_REQ("[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\","
                   "\"values\":[\"a\",\"b\"]}]}]"),
         {RQ ".matchFields[0].values: Invalid value: []string{\"a\", \"b\"}: must have one "
             "element"}},
        {ADDED_REQ("[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"Exists\"}]}]"),
         {RQ ".matchFields[0].operator: Unsupported value: \"Exists\": supported values: \"In\", "
             "\"NotIn\""}},
        {ADDED_REQ("[{\"matchFields\":[{\"key\":\"spec.x\",\"operator\":\"In\","
                   "\"values\":[\"a\"]}]}]"),
         {RQ ".matchFields[0].key: Unsupported value: \"spec.x\": supported values: "
             "\"metadata.name\""}},
        /* Preferred terms: errors under [i] itself, as upstream (no ".preference"). */
        {"{\"addedAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":["
         "{\"weight\":1,\"preference\":{\"matchExpressions\":[" EXPR("a", "Bad", "[]") "]}}]}}",
         {PF ".matchExpressions[0].operator: Unsupported value: \"Bad\": supported values: "
             "\"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\""}},
        {"{\"addedAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":["
         "{\"weight\":\"x\",\"preference\":{}}]}}",
         {PF ".weight: Invalid value: \"x\": must be a 32-bit integer"}},
        {"{\"addedAffinity\":\"x\"}",
         {"args.addedAffinity: Invalid value: \"x\": must be an object"}},
        /* Every error is reported, not only the first. */
        {ADDED_REQ(
             "[{\"matchExpressions\":[" EXPR("a", "Foo", "[]") "," EXPR("b", "In", "[]") "]}]"),
         {RQ ".matchExpressions[0].operator: Unsupported value: \"Foo\": supported values: "
             "\"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\"",
          RQ ".matchExpressions[1].values: Invalid value: []string(nil): for 'in', 'notin' "
             "operators, values set can't be empty"}},
    };

    (void)unused;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct field_errors errs = FIELD_ERRORS_INIT;
        cJSON *a = J(cases[i].args);
        void *self = (void *)&errs; /* untouched on failure */
        size_t n = 0;

        assert_int_equal(PL->init(a, "args", NULL, &self, &errs), -EINVAL);
        assert_ptr_equal(self, &errs);
        while (n < 3 && cases[i].want[n])
            n++;
        if (field_errors_count(&errs) != n)
            fail_with_errors(&errs, "case %zu: %zu errors, want %zu", i, field_errors_count(&errs),
                             n);
        for (size_t k = 0; k < n; k++)
            if (!renders_as(&errs.v[k], cases[i].want[k]))
                fail_with_errors(&errs, "case %zu: error %zu, want %s", i, k, cases[i].want[k]);
        cJSON_Delete(a);
        field_errors_release(&errs);
    }
}

/* A bad key is refused as labels.NewRequirement refuses it (the message is the label code's). */
static void test_init_bad_key(void **unused)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    cJSON *a = J(ADDED_REQ("[{\"matchExpressions\":[" EXPR("a b", "Exists", "[]") "]}]"));
    void *self = NULL;

    (void)unused;
    assert_int_equal(PL->init(a, "args", NULL, &self, &errs), -EINVAL);
    assert_int_equal(field_errors_count(&errs), 1);
    assert_string_equal(errs.v[0].field, RQ ".matchExpressions[0].key");
    assert_int_equal(errs.v[0].type, FIELD_INVALID);
    assert_string_equal(errs.v[0].value, "\"a b\"");
    cJSON_Delete(a);
    field_errors_release(&errs);
}

/* Members of the wrong JSON type are reported by field (Invalid value) and never walked. */
static void test_init_bad_types(void **unused)
{
    static const struct {
        const char *args, *field;
    } cases[] = {
        {"{\"addedAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
         "{\"nodeSelectorTerms\":{\"a\":{}}}}}",
         "args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"},
        {"{\"addedAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[]}}",
         "args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"},
        {ADDED_REQ("[{\"matchExpressions\":{\"a\":{}}}]"), RQ ".matchExpressions"},
        {ADDED_REQ("[{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Exists\",\"values\":"
                   "{\"x\":\"y\"}}]}]"),
         RQ ".matchExpressions[0].values"},
        {ADDED_REQ("[{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\",\"values\":"
                   "[\"x\",1]}]}]"),
         RQ ".matchExpressions[0].values[1]"},
        {ADDED_REQ("[{\"matchExpressions\":[{\"key\":7,\"operator\":\"Exists\"}]}]"),
         RQ ".matchExpressions[0].key"},
        {ADDED_REQ("[{\"matchExpressions\":[\"x\"]}]"), RQ ".matchExpressions[0]"},
        {"{\"addedAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":{\"a\":{}}}}",
         "args.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution"},
        {"{\"addedAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":["
         "{\"weight\":1.5,\"preference\":{}}]}}",
         PF ".weight"},
        {"{\"addedAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":["
         "{\"weight\":1,\"preference\":[]}]}}",
         PF ".preference"},
        {"[]", "args"},
    };

    (void)unused;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct field_errors errs = FIELD_ERRORS_INIT;
        cJSON *a = J(cases[i].args);
        void *self = NULL;

        assert_int_equal(PL->init(a, "args", NULL, &self, &errs), -EINVAL);
        if (field_errors_count(&errs) != 1 || strcmp(errs.v[0].field, cases[i].field) ||
            errs.v[0].type != FIELD_INVALID)
            fail_with_errors(&errs, "case %zu: want one Invalid at %s", i, cases[i].field);
        cJSON_Delete(a);
        field_errors_release(&errs);
    }
}

static void test_registration(void **unused)
{
    const struct sched_event_reg *e = PL->events;

    (void)unused;
    assert_int_equal(PL->default_weight, 2);
    assert_string_equal(PL->args_kind, "NodeAffinityArgs");
    assert_string_equal(e[0].resource, "Node");
    assert_int_equal(e[0].actions, SCHED_ACT_ADD | SCHED_ACT_UPDATE);
    assert_null(e[1].resource);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter),         cmocka_unit_test(test_pre_filter),
        cmocka_unit_test(test_score),          cmocka_unit_test(test_pre_score_skip),
        cmocka_unit_test(test_init_errors),    cmocka_unit_test(test_init_bad_key),
        cmocka_unit_test(test_init_bad_types), cmocka_unit_test(test_registration),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
