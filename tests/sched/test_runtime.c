/*
 * Tests for sched/framework/runtime.c: the aggregation rules of kube-scheduler's framework
 * runtime (reference scheduler.md 1.1-1.4, framework/runtime/framework.go), driven by fake
 * plugins whose answers each test sets. The real plugins are not linked: runtime.c is included
 * here with sched_registry_get() renamed to test_registry_get(), which serves the fakes' table
 * (runtime.c reaches the registry through that one function only).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define sched_registry_get test_registry_get
#include "sched/framework/runtime.c"
#undef sched_registry_get

#include "api/field.h"
#include "base/strbuf.h"
#include "sched/config/config.h"
#include "sched/framework/parallel.h"
#include "schedtest.h"

/* ---- fake plugins ---- */

#define NFAKES 6

enum norm { NORM_NONE, NORM_REVERSE, NORM_NEGATE, NORM_FAIL };

/* What a fake answers at each point, and what it saw. Reset before every test. */
struct fake {
    enum sched_code pre_filter, filter, pre_score, score, reserve, permit, bind, post_filter,
        pre_enqueue, add_pod;
    const char *why;     /* the reason of a non-Success answer */
    const char *nodes;   /* PreFilter restriction, "a,b" ("" = none at all); NULL: all */
    const char *fail_on; /* Filter fails only on these nodes ("n1,n3"); NULL: every node */
    int score_mult;      /* Score of node "n<k>": (k * score_mult) % 101 ... */
    int64_t score_fixed; /* ... or this when score_mult is 0 */
    enum norm norm;      /* NormalizeScore; NORM_NONE: no NormalizeScore */
    long permit_ms;      /* Wait timeout */
    int busy_filter;     /* Filter fails when the node has at least this many pods (0: off) */
    _Atomic int calls[SCHED_PT_COUNT];
    _Atomic int unreserves, add_pods, filters_on_copy;
};

static struct fake fakes[NFAKES];
static struct sched_plugin table[NFAKES];
static const char *const names[NFAKES] = {"FakeA", "FakeB", "FakeC", "FakeD", "FakeE", "FakeF"};
enum { A, B, C, D, E, F };

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char call_log[1024];

static void note(const struct fake *f, const char *what)
{
    size_t len;

    pthread_mutex_lock(&log_lock);
    len = strlen(call_log);
    (void)snprintf(call_log + len, sizeof(call_log) - len, "%s%s.%s", len ? " " : "",
                   names[f - fakes], what);
    pthread_mutex_unlock(&log_lock);
}

const struct sched_plugin *test_registry_get(int id)
{
    assert_true(id >= 0 && id < NFAKES);
    return &table[id];
}

static bool listed(const char *list, const char *name)
{
    size_t len = strlen(name);

    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && !strncmp(p, name, n))
            return true;
        p = end ? end + 1 : p + n;
    }
    return false;
}

static int node_index(const struct sched_node_info *ni)
{
    int k = 0;

    if (sscanf(ni->name, "n%d", &k) != 1)
        fail_msg("node name %s", ni->name);
    return k;
}

/* The answer of a point: code, with f->why as reason unless Success. */
static enum sched_code answer(struct fake *f, enum sched_code c, struct sched_status *st)
{
    if (c != SCHED_SUCCESS && f->why)
        sched_status_add(st, "%s", f->why);
    return c;
}

static int fake_init(const cJSON *args, const char *path, struct sched_handle *h, void **ret_self,
                     struct field_errors *errs)
{
    (void)path;
    (void)h;
    (void)errs;
    assert_true(cJSON_IsNumber(args));
    *ret_self = &fakes[args->valueint];
    return 0;
}

static enum sched_code fake_pre_enqueue(void *self, const struct sched_pod *pod,
                                        struct sched_status *st)
{
    struct fake *f = self;

    (void)pod;
    f->calls[SCHED_PT_PRE_ENQUEUE]++;
    return answer(f, f->pre_enqueue, st);
}

static enum sched_code fake_pre_filter(void *self, struct sched_cycle *cs,
                                       const struct sched_pod *pod,
                                       struct sched_prefilter_result *res, struct sched_status *st)
{
    struct fake *f = self;

    (void)cs;
    (void)pod;
    f->calls[SCHED_PT_PRE_FILTER]++;
    note(f, "pre_filter");
    if (f->nodes) {
        const char *p = f->nodes;
        res->restrict_nodes = true;
        /* The empty set without an array, as a plugin may well leave it. */
        res->names = *p ? xcalloc(8, sizeof(char *)) : NULL;
        while (*p) {
            const char *end = strchr(p, ',');
            size_t n = end ? (size_t)(end - p) : strlen(p);
            res->names[res->n++] = xstrndup(p, n);
            p += n + (end ? 1 : 0);
        }
    }
    return answer(f, f->pre_filter, st);
}

static enum sched_code fake_add_pod(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                    const struct sched_pod *add, const struct sched_node_info *ni,
                                    struct sched_status *st)
{
    struct fake *f = self;

    (void)cs;
    (void)pod;
    (void)add;
    (void)ni;
    f->add_pods++;
    return answer(f, f->add_pod, st);
}

static enum sched_code fake_filter(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                   const struct sched_node_info *ni, struct sched_status *st)
{
    struct fake *f = self;

    (void)cs;
    (void)pod;
    f->calls[SCHED_PT_FILTER]++;
    if (f->busy_filter) {
        if (ni->npods >= (size_t)f->busy_filter)
            return sched_status_set(st, SCHED_UNSCHEDULABLE, "busy");
        return SCHED_SUCCESS;
    }
    if (f->fail_on && !listed(f->fail_on, ni->name))
        return SCHED_SUCCESS;
    return answer(f, f->filter, st);
}

static enum sched_code fake_post_filter(void *self, struct sched_cycle *cs,
                                        const struct sched_pod *pod,
                                        const struct sched_node_statuses *m,
                                        struct sched_post_filter_result *res,
                                        struct sched_status *st)
{
    struct fake *f = self;

    (void)cs;
    (void)pod;
    (void)m;
    (void)res;
    f->calls[SCHED_PT_POST_FILTER]++;
    return answer(f, f->post_filter, st);
}

static enum sched_code fake_pre_score(void *self, struct sched_cycle *cs,
                                      const struct sched_pod *pod,
                                      struct sched_node_info *const *nodes, size_t n,
                                      struct sched_status *st)
{
    struct fake *f = self;

    (void)cs;
    (void)pod;
    (void)nodes;
    (void)n;
    f->calls[SCHED_PT_PRE_SCORE]++;
    return answer(f, f->pre_score, st);
}

static enum sched_code fake_score(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                  const struct sched_node_info *ni, int64_t *ret_score,
                                  struct sched_status *st)
{
    struct fake *f = self;

    (void)cs;
    (void)pod;
    f->calls[SCHED_PT_SCORE]++;
    *ret_score = f->score_mult ? (node_index(ni) * f->score_mult) % 101 : f->score_fixed;
    return answer(f, f->score, st);
}

static enum sched_code fake_normalize(void *self, struct sched_cycle *cs,
                                      const struct sched_pod *pod, struct sched_node_score *scores,
                                      size_t n, struct sched_status *st)
{
    struct fake *f = self;

    (void)cs;
    (void)pod;
    switch (f->norm) {
    case NORM_NONE:
        fail_msg("%s has no NormalizeScore", names[f - fakes]);
        break;
    case NORM_REVERSE:
        for (size_t i = 0; i < n; i++)
            scores[i].score = SCHED_MAX_NODE_SCORE - scores[i].score;
        break;
    case NORM_NEGATE:
        for (size_t i = 0; i < n; i++)
            scores[i].score = -scores[i].score;
        break;
    case NORM_FAIL:
        return sched_status_set(st, SCHED_ERROR, "%s", f->why);
    }
    return SCHED_SUCCESS;
}

static enum sched_code fake_reserve(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                    const char *node, struct sched_status *st)
{
    struct fake *f = self;

    (void)cs;
    (void)pod;
    (void)node;
    f->calls[SCHED_PT_RESERVE]++;
    note(f, "reserve");
    return answer(f, f->reserve, st);
}

static void fake_unreserve(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                           const char *node)
{
    struct fake *f = self;

    (void)cs;
    (void)pod;
    (void)node;
    f->unreserves++;
    note(f, "unreserve");
}

static enum sched_code fake_permit(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                   const char *node, long *ret_timeout_ms, struct sched_status *st)
{
    struct fake *f = self;

    (void)cs;
    (void)pod;
    (void)node;
    f->calls[SCHED_PT_PERMIT]++;
    *ret_timeout_ms = f->permit_ms;
    return answer(f, f->permit, st);
}

static enum sched_code fake_bind(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                 const char *node, struct sched_status *st)
{
    struct fake *f = self;

    (void)cs;
    (void)pod;
    (void)node;
    f->calls[SCHED_PT_BIND]++;
    note(f, "bind");
    return answer(f, f->bind, st);
}

static const struct sched_event_reg node_add_only[] = {{"Node", SCHED_ACT_ADD}, {NULL, 0}};

static int setup(void **state)
{
    (void)state;
    memset(fakes, 0, sizeof(fakes));
    call_log[0] = 0;
    for (int i = 0; i < NFAKES; i++) {
        table[i] = (struct sched_plugin){
            .name = names[i],
            .events = i == F ? node_add_only : NULL,
            .init = fake_init,
            .pre_enqueue = fake_pre_enqueue,
            .pre_filter = fake_pre_filter,
            .add_pod = fake_add_pod,
            .filter = fake_filter,
            .post_filter = fake_post_filter,
            .pre_score = fake_pre_score,
            .score = fake_score,
            .normalize = NULL,
            .reserve = fake_reserve,
            .unreserve = fake_unreserve,
            .permit = fake_permit,
            .bind = fake_bind,
        };
    }
    return 0;
}

/* ---- profiles ---- */

struct profile {
    struct sched_profile_config pc;
    struct sched_framework *fw;
    struct sched_cycle *cs;
    struct sched_pod *pod;
};

/* Enables the plugins named by letters ("ABC") at a point, in that order, with weights (may be
 * NULL: unset). */
static void point(struct profile *p, enum sched_point pt, const char *ids, const int *weights)
{
    size_t n = strlen(ids);

    p->pc.points[pt] = xcalloc(n, sizeof(struct sched_plugin_ref));
    p->pc.npoints[pt] = n;
    for (size_t i = 0; i < n; i++) {
        int id = ids[i] - 'A';
        p->pc.points[pt][i].id = id;
        p->pc.points[pt][i].weight = weights ? weights[i] : 0;
        if (!p->pc.args[id])
            p->pc.args[id] = cJSON_CreateNumber(id);
    }
}

static void start_opts(struct profile *p, const struct sched_framework_opts *opts)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    char name[] = "koord-scheduler";

    p->pc.scheduler_name = name;
    p->pc.percentage_of_nodes_to_score = -1;
    assert_int_equal(sched_framework_new(&p->pc, opts, &p->fw, &errs), 0);
    assert_int_equal(errs.n, 0);
    field_errors_release(&errs);
    p->pc.scheduler_name = NULL;
    p->cs = sched_cycle_new();
    p->pod = P("{\"metadata\":{\"name\":\"pod\",\"uid\":\"pod\"},\"spec\":{\"priority\":10}}");
}

static void start(struct profile *p)
{
    struct sched_framework_opts opts = {0};

    start_opts(p, &opts);
}

static void stop(struct profile *p)
{
    sched_framework_free(p->fw);
    sched_cycle_free(p->cs);
    sched_pod_unref(p->pod);
    for (int i = 0; i < SCHED_PT_COUNT; i++)
        free(p->pc.points[i]);
    for (int i = 0; i < 64; i++)
        cJSON_Delete(p->pc.args[i]);
}

/* ---- construction ---- */

static void test_new(void **state)
{
    (void)state;
    struct profile p = {0};

    point(&p, SCHED_PT_FILTER, "AB", NULL);
    point(&p, SCHED_PT_SCORE, "C", NULL);
    point(&p, SCHED_PT_BIND, "D", NULL);
    start(&p);
    assert_string_equal(sched_framework_name(p.fw), "koord-scheduler");
    assert_int_equal(sched_framework_percentage(p.fw), -1);
    assert_true(sched_framework_has_score(p.fw));
    assert_false(sched_framework_has_post_filter(p.fw));
    assert_int_equal(sched_framework_plugins(p.fw), 0xf);
    assert_string_equal(sched_handle_profile_name(sched_framework_handle(p.fw)), "koord-scheduler");
    assert_null(sched_handle_client(sched_framework_handle(p.fw)));
    assert_null(sched_handle_snapshot(sched_framework_handle(p.fw)));
    /* A plugin that does not say which events it wants gets all of them. */
    assert_true(sched_framework_interested(p.fw, 0, "Pod", SCHED_ACT_DELETE));
    stop(&p);

    /* Only F, registered for Node/Add. */
    p = (struct profile){0};
    point(&p, SCHED_PT_FILTER, "F", NULL);
    start(&p);
    assert_true(sched_framework_interested(p.fw, 0, "Node", SCHED_ACT_ADD));
    assert_false(sched_framework_interested(p.fw, 0, "Node", SCHED_ACT_UPDATE_NODE_LABEL));
    assert_false(sched_framework_interested(p.fw, 0, "Pod", SCHED_ACT_ADD));
    stop(&p);
}

/* ---- PreEnqueue, PostFilter, Permit ---- */

static void test_pre_enqueue(void **state)
{
    (void)state;
    struct profile p = {0};
    struct sched_status st = {0};
    int who = -1;

    point(&p, SCHED_PT_PRE_ENQUEUE, "ABC", NULL);
    start(&p);
    fakes[B].pre_enqueue = SCHED_UNRESOLVABLE;
    fakes[B].why = "waiting for scheduling gates: [g]";
    fakes[C].pre_enqueue = SCHED_UNSCHEDULABLE;
    assert_int_equal(sched_framework_pre_enqueue(p.fw, p.pod, &who, &st), SCHED_UNRESOLVABLE);
    assert_int_equal(who, B);
    assert_string_equal(st.plugin, "FakeB");
    assert_string_equal(MSG(&st), "waiting for scheduling gates: [g]");
    assert_int_equal(fakes[C].calls[SCHED_PT_PRE_ENQUEUE], 0);
    sched_status_release(&st);
    stop(&p);
}

static void test_post_filter(void **state)
{
    (void)state;
    struct profile p = {0};
    struct sched_status st = {0};
    struct sched_post_filter_result res = {0};
    struct sched_node_statuses m = {0};

    /* Unschedulable goes on to the next; the first Success, Error or UU stops. */
    point(&p, SCHED_PT_POST_FILTER, "ABC", NULL);
    start(&p);
    fakes[A].post_filter = SCHED_UNSCHEDULABLE;
    fakes[B].post_filter = SCHED_SUCCESS;
    assert_int_equal(sched_framework_post_filter(p.fw, p.cs, p.pod, &m, &res, &st), SCHED_SUCCESS);
    assert_int_equal(fakes[C].calls[SCHED_PT_POST_FILTER], 0);
    assert_string_equal(st.plugin, "FakeB");
    fakes[B].post_filter = SCHED_UNRESOLVABLE;
    assert_int_equal(sched_framework_post_filter(p.fw, p.cs, p.pod, &m, &res, &st),
                     SCHED_UNRESOLVABLE);
    assert_int_equal(fakes[C].calls[SCHED_PT_POST_FILTER], 0);
    fakes[B].post_filter = SCHED_UNSCHEDULABLE;
    fakes[C].post_filter = SCHED_UNSCHEDULABLE;
    assert_int_equal(sched_framework_post_filter(p.fw, p.cs, p.pod, &m, &res, &st),
                     SCHED_UNSCHEDULABLE);
    assert_int_equal(fakes[C].calls[SCHED_PT_POST_FILTER], 1);
    sched_status_release(&st);
    stop(&p);
}

static void test_permit(void **state)
{
    (void)state;
    struct profile p = {0};
    struct sched_status st = {0};

    point(&p, SCHED_PT_PERMIT, "AB", NULL);
    start(&p);
    assert_int_equal(sched_framework_permit(p.fw, p.cs, p.pod, "n1", &st), SCHED_SUCCESS);
    fakes[A].permit = SCHED_WAIT;
    fakes[A].permit_ms = 5000;
    /* No one allows a waiting pod yet: it ends as upstream's timeout does. */
    assert_int_equal(sched_framework_permit(p.fw, p.cs, p.pod, "n1", &st), SCHED_UNSCHEDULABLE);
    assert_string_equal(MSG(&st), "rejected due to timeout after waiting 5s at plugin FakeA");
    assert_string_equal(st.plugin, "FakeA");
    assert_int_equal(fakes[B].calls[SCHED_PT_PERMIT], 1);
    sched_status_release(&st);
    stop(&p);
}

/* ---- PreFilter (1.3) ---- */

static enum sched_code run_pre_filter(struct profile *p, struct sched_prefilter_result *res,
                                      struct sched_status *st, uint64_t *mask)
{
    return sched_framework_pre_filter(p->fw, p->cs, p->pod, res, st, mask);
}

static void test_pre_filter_skip(void **state)
{
    (void)state;
    struct profile p = {0};
    struct sched_prefilter_result res;
    struct sched_status st = {0};
    struct sched_node_info *ni = sched_node_info_new("n1");
    struct sched_pod *nominated =
        P("{\"metadata\":{\"name\":\"nom\",\"uid\":\"nom\"},\"spec\":{\"priority\":100}}");
    uint64_t mask;

    point(&p, SCHED_PT_PRE_FILTER, "AB", NULL);
    point(&p, SCHED_PT_FILTER, "AB", NULL);
    start(&p);
    fakes[A].pre_filter = SCHED_SKIP;
    fakes[A].filter = SCHED_UNRESOLVABLE; /* never asked */
    assert_int_equal(run_pre_filter(&p, &res, &st, &mask), SCHED_SUCCESS);
    assert_false(res.restrict_nodes);
    assert_int_equal(mask, 0);
    assert_true(sched_cycle_skip_filter(p.cs, A));
    assert_false(sched_cycle_skip_filter(p.cs, B));
    assert_int_equal(sched_framework_filter(p.fw, p.cs, p.pod, ni, &st), SCHED_SUCCESS);
    assert_int_equal(fakes[A].calls[SCHED_PT_FILTER], 0);
    assert_int_equal(fakes[B].calls[SCHED_PT_FILTER], 1);
    /* Its PreFilterExtensions are skipped too. */
    assert_int_equal(
        sched_handle_run_add_pod(sched_framework_handle(p.fw), p.cs, p.pod, nominated, ni, &st),
        SCHED_SUCCESS);
    assert_int_equal(fakes[A].add_pods, 0);
    assert_int_equal(fakes[B].add_pods, 1);
    sched_prefilter_result_release(&res);
    sched_status_release(&st);
    sched_node_info_free(ni);
    sched_pod_unref(nominated);
    stop(&p);
}

static void test_pre_filter_unresolvable_stops(void **state)
{
    (void)state;
    struct profile p = {0};
    struct sched_prefilter_result res;
    struct sched_status st = {0};
    uint64_t mask;

    point(&p, SCHED_PT_PRE_FILTER, "ABC", NULL);
    start(&p);
    fakes[A].pre_filter = SCHED_UNSCHEDULABLE;
    fakes[A].why = "a says no";
    fakes[B].pre_filter = SCHED_UNRESOLVABLE;
    fakes[B].why = "b says never";
    assert_int_equal(run_pre_filter(&p, &res, &st, &mask), SCHED_UNRESOLVABLE);
    assert_int_equal(st.code, SCHED_UNRESOLVABLE);
    assert_string_equal(st.plugin, "FakeB");
    assert_string_equal(MSG(&st), "b says never");
    assert_int_equal(mask, UINT64_C(1) << B);
    assert_int_equal(fakes[A].calls[SCHED_PT_PRE_FILTER], 1);
    assert_int_equal(fakes[C].calls[SCHED_PT_PRE_FILTER], 0);
    sched_prefilter_result_release(&res);
    sched_status_release(&st);
    stop(&p);
}

static void test_pre_filter_unschedulable_continues(void **state)
{
    (void)state;
    struct profile p = {0};
    struct sched_prefilter_result res;
    struct sched_status st = {0};
    uint64_t mask;

    point(&p, SCHED_PT_PRE_FILTER, "ABCD", NULL);
    start(&p);
    fakes[A].pre_filter = SCHED_UNSCHEDULABLE;
    fakes[A].why = "a says no";
    fakes[C].pre_filter = SCHED_UNSCHEDULABLE;
    fakes[C].why = "c says no";
    fakes[D].nodes = "n1";
    assert_int_equal(run_pre_filter(&p, &res, &st, &mask), SCHED_UNSCHEDULABLE);
    /* Every PreFilter ran (preemption needs their state) ... */
    for (int i = A; i <= D; i++)
        assert_int_equal(fakes[i].calls[SCHED_PT_PRE_FILTER], 1);
    /* ... and the status is the last Unschedulable one (returnStatus = s). */
    assert_int_equal(st.code, SCHED_UNSCHEDULABLE);
    assert_string_equal(st.plugin, "FakeC");
    assert_string_equal(MSG(&st), "c says no");
    assert_true(mask & (UINT64_C(1) << C));
    assert_false(mask & (UINT64_C(1) << B));
    sched_prefilter_result_release(&res);
    sched_status_release(&st);
    stop(&p);
}

static void test_pre_filter_error(void **state)
{
    (void)state;
    struct profile p = {0};
    struct sched_prefilter_result res;
    struct sched_status st = {0};
    uint64_t mask;

    point(&p, SCHED_PT_PRE_FILTER, "AB", NULL);
    start(&p);
    fakes[A].pre_filter = SCHED_ERROR;
    fakes[A].why = "boom";
    assert_int_equal(run_pre_filter(&p, &res, &st, &mask), SCHED_ERROR);
    assert_string_equal(MSG(&st), "running PreFilter plugin \"FakeA\": boom");
    assert_string_equal(st.plugin, "FakeA");
    assert_int_equal(fakes[B].calls[SCHED_PT_PRE_FILTER], 0);
    sched_prefilter_result_release(&res);
    sched_status_release(&st);

    /* Pending is not Unschedulable here: an error too (1.3). */
    fakes[A].pre_filter = SCHED_PENDING;
    fakes[A].why = "later";
    assert_int_equal(run_pre_filter(&p, &res, &st, &mask), SCHED_ERROR);
    assert_string_equal(MSG(&st), "running PreFilter plugin \"FakeA\": later");
    assert_int_equal(fakes[B].calls[SCHED_PT_PRE_FILTER], 0);
    sched_prefilter_result_release(&res);
    sched_status_release(&st);
    stop(&p);
}

static void test_pre_filter_node_names(void **state)
{
    (void)state;
    struct profile p = {0};
    struct sched_prefilter_result res;
    struct sched_status st = {0};
    uint64_t mask;

    point(&p, SCHED_PT_PRE_FILTER, "ABCD", NULL);
    start(&p);
    /* A ∩ B, C restricts nothing. */
    fakes[A].nodes = "n3,n1,n2";
    fakes[B].nodes = "n4,n2,n3";
    assert_int_equal(run_pre_filter(&p, &res, &st, &mask), SCHED_SUCCESS);
    assert_true(res.restrict_nodes);
    assert_int_equal(res.n, 2);
    assert_string_equal(res.names[0], "n2");
    assert_string_equal(res.names[1], "n3");
    assert_int_equal(st.n, 0);
    sched_prefilter_result_release(&res);

    /* Nothing left: UU naming the plugins that restricted, as Go prints a []string. */
    fakes[D].nodes = "n1";
    assert_int_equal(run_pre_filter(&p, &res, &st, &mask), SCHED_UNRESOLVABLE);
    assert_int_equal(st.code, SCHED_UNRESOLVABLE);
    assert_string_equal(MSG(&st), "node(s) didn't satisfy plugin(s) [FakeA FakeB FakeD] "
                                  "simultaneously");
    sched_prefilter_result_release(&res);
    sched_status_release(&st);
    stop(&p);

    /* One plugin restricting to nothing. */
    setup(NULL);
    p = (struct profile){0};
    point(&p, SCHED_PT_PRE_FILTER, "AB", NULL);
    start(&p);
    fakes[B].nodes = "";
    assert_int_equal(run_pre_filter(&p, &res, &st, &mask), SCHED_UNRESOLVABLE);
    assert_string_equal(MSG(&st), "node(s) didn't satisfy plugin FakeB");
    sched_prefilter_result_release(&res);
    sched_status_release(&st);
    /* ... after another one restricted. */
    fakes[A].nodes = "n1";
    assert_int_equal(run_pre_filter(&p, &res, &st, &mask), SCHED_UNRESOLVABLE);
    assert_string_equal(MSG(&st), "node(s) didn't satisfy plugin(s) [FakeA FakeB] simultaneously");
    sched_prefilter_result_release(&res);
    sched_status_release(&st);
    stop(&p);

    /* Restricting to nothing stops the PreFilters that follow. */
    setup(NULL);
    p = (struct profile){0};
    point(&p, SCHED_PT_PRE_FILTER, "ABC", NULL);
    start(&p);
    fakes[A].nodes = "n1";
    fakes[B].nodes = "n2";
    assert_int_equal(run_pre_filter(&p, &res, &st, &mask), SCHED_UNRESOLVABLE);
    assert_string_equal(MSG(&st), "node(s) didn't satisfy plugin(s) [FakeA FakeB] simultaneously");
    assert_int_equal(fakes[C].calls[SCHED_PT_PRE_FILTER], 0);
    sched_prefilter_result_release(&res);
    sched_status_release(&st);
    stop(&p);
}

/* ---- Filter ---- */

static void test_filter_first_failure(void **state)
{
    (void)state;
    struct profile p = {0};
    struct sched_status st = {0};
    struct sched_node_info *n1 = sched_node_info_new("n1"), *n2 = sched_node_info_new("n2");

    point(&p, SCHED_PT_FILTER, "ABC", NULL);
    start(&p);
    fakes[B].filter = SCHED_UNSCHEDULABLE;
    fakes[B].why = "b no";
    fakes[B].fail_on = "n2";
    fakes[C].filter = SCHED_UNRESOLVABLE;
    fakes[C].why = "c never";
    fakes[C].fail_on = "n3";
    assert_int_equal(sched_framework_filter(p.fw, p.cs, p.pod, n1, &st), SCHED_SUCCESS);
    assert_int_equal(fakes[C].calls[SCHED_PT_FILTER], 1);
    assert_int_equal(sched_framework_filter(p.fw, p.cs, p.pod, n2, &st), SCHED_UNSCHEDULABLE);
    assert_int_equal(st.code, SCHED_UNSCHEDULABLE);
    assert_string_equal(st.plugin, "FakeB");
    assert_string_equal(MSG(&st), "b no");
    /* C did not run on n2. */
    assert_int_equal(fakes[C].calls[SCHED_PT_FILTER], 1);
    assert_int_equal(fakes[A].calls[SCHED_PT_FILTER], 2);
    sched_status_release(&st);

    /* A status other than a rejection is an error. */
    fakes[A].filter = SCHED_ERROR;
    fakes[A].why = "x";
    assert_int_equal(sched_framework_filter(p.fw, p.cs, p.pod, n1, &st), SCHED_ERROR);
    assert_string_equal(MSG(&st), "running \"FakeA\" filter plugin: x");
    assert_string_equal(st.plugin, "FakeA");
    sched_status_release(&st);
    sched_node_info_free(n1);
    sched_node_info_free(n2);
    stop(&p);
}

/*
 * Filter over a chunk of nodes, plugin by plugin, gives each node what Filter node by node
 * gives it: the first failing plugin in the profile's order, its reasons, errors wrapped; a
 * node that failed is not shown to the later plugins.
 */
static void test_filter_nodes_as_one_by_one(void **state)
{
    (void)state;
    struct profile p = {0};
    struct sched_node_info *ni[5];
    struct sched_status st[5], one = {0};
    enum sched_code codes[5];
    struct sched_filter_plan plan;
    static const char *const node_names[] = {"n1", "n2", "n3", "n4", "n5"};

    point(&p, SCHED_PT_FILTER, "ABC", NULL);
    start(&p);
    fakes[A].filter = SCHED_ERROR;
    fakes[A].why = "a broke";
    fakes[A].fail_on = "n4";
    fakes[B].filter = SCHED_UNSCHEDULABLE;
    fakes[B].why = "b no";
    fakes[B].fail_on = "n2,n3";
    fakes[C].filter = SCHED_UNRESOLVABLE;
    fakes[C].why = "c never";
    fakes[C].fail_on = "n3,n4,n5";
    for (size_t i = 0; i < 5; i++)
        ni[i] = sched_node_info_new(node_names[i]);
    memset(st, 0, sizeof(st));
    sched_framework_filter_plan(p.fw, p.cs, false, &plan);
    assert_int_equal(plan.n, 3);
    sched_framework_filter_nodes(p.fw, &plan, p.cs, p.pod, ni, 5, st, codes);
    /* A ran on every node, B on the four A passed, C on the two B passed. */
    assert_int_equal(fakes[A].calls[SCHED_PT_FILTER], 5);
    assert_int_equal(fakes[B].calls[SCHED_PT_FILTER], 4);
    assert_int_equal(fakes[C].calls[SCHED_PT_FILTER], 2);
    assert_int_equal(codes[0], SCHED_SUCCESS);
    assert_int_equal(codes[1], SCHED_UNSCHEDULABLE);
    assert_string_equal(st[1].plugin, "FakeB");
    assert_string_equal(MSG(&st[1]), "b no");
    assert_int_equal(codes[2], SCHED_UNSCHEDULABLE); /* B before C */
    assert_string_equal(st[2].plugin, "FakeB");
    assert_int_equal(codes[3], SCHED_ERROR);
    assert_string_equal(st[3].plugin, "FakeA");
    assert_string_equal(MSG(&st[3]), "running \"FakeA\" filter plugin: a broke");
    assert_int_equal(codes[4], SCHED_UNRESOLVABLE);
    assert_string_equal(st[4].plugin, "FakeC");
    assert_string_equal(MSG(&st[4]), "c never");
    /* Node by node: the same codes and plugins. */
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(sched_framework_filter(p.fw, p.cs, p.pod, ni[i], &one), codes[i]);
        if (codes[i] != SCHED_SUCCESS)
            assert_string_equal(one.plugin, st[i].plugin);
        sched_status_release(&one);
        sched_status_release(&st[i]);
        sched_node_info_free(ni[i]);
    }
    stop(&p);
}

struct nominations {
    struct sched_pod *pods[2];
    size_t n;
};

static size_t nominated(void *userdata, const char *node, struct sched_pod ***ret)
{
    struct nominations *nm = userdata;

    (void)node;
    *ret = xcalloc(2, sizeof(**ret));
    for (size_t i = 0; i < nm->n; i++)
        (*ret)[i] = sched_pod_ref(nm->pods[i]);
    return nm->n;
}

static void test_filter_with_nominated_pods(void **state)
{
    (void)state;
    struct profile p = {0};
    struct sched_status st = {0};
    struct sched_node_info *ni = sched_node_info_new("n1");
    struct nominations nm = {0};
    struct sched_framework_opts opts = {.nominated = nominated, .userdata = &nm};

    point(&p, SCHED_PT_PRE_FILTER, "A", NULL);
    point(&p, SCHED_PT_FILTER, "A", NULL);
    start_opts(&p, &opts);
    fakes[A].busy_filter = 1; /* fails on a node with a pod */
    /* A nominated pod of lower priority is not counted (the pod has priority 10). */
    nm.pods[0] = P("{\"metadata\":{\"name\":\"lo\",\"uid\":\"lo\"},\"spec\":{\"priority\":9}}");
    nm.n = 1;
    assert_int_equal(sched_framework_filter_nominated(p.fw, p.cs, p.pod, ni, &st), SCHED_SUCCESS);
    assert_int_equal(fakes[A].add_pods, 0);
    /* Nor the pod itself. */
    nm.pods[1] = P("{\"metadata\":{\"name\":\"pod\",\"uid\":\"pod\"},\"spec\":{\"priority\":10}}");
    nm.n = 2;
    assert_int_equal(sched_framework_filter_nominated(p.fw, p.cs, p.pod, ni, &st), SCHED_SUCCESS);
    sched_pod_unref(nm.pods[1]);
    /* One of equal priority is: the first pass sees it and fails. */
    nm.pods[1] = P("{\"metadata\":{\"name\":\"eq\",\"uid\":\"eq\"},\"spec\":{\"priority\":10}}");
    assert_int_equal(sched_framework_filter_nominated(p.fw, p.cs, p.pod, ni, &st),
                     SCHED_UNSCHEDULABLE);
    assert_int_equal(fakes[A].add_pods, 1);
    assert_string_equal(MSG(&st), "busy");
    assert_int_equal(ni->npods, 0); /* on a copy */
    sched_status_release(&st);
    /* Through the handle, with the status left out. */
    assert_int_equal(sched_handle_run_filters(sched_framework_handle(p.fw), p.cs, p.pod, ni, NULL),
                     SCHED_UNSCHEDULABLE);
    sched_pod_unref(nm.pods[0]);
    sched_pod_unref(nm.pods[1]);
    sched_node_info_free(ni);
    stop(&p);
}

/* ---- Score ---- */

static struct sched_node_score *nodes_for_score(size_t n)
{
    struct sched_node_score *v = xcalloc(n, sizeof(*v));

    for (size_t i = 0; i < n; i++) {
        char name[32];
        (void)snprintf(name, sizeof(name), "n%zu", i + 1);
        v[i].ni = sched_node_info_new(name);
        v[i].score = -12345; /* overwritten */
    }
    return v;
}

static void free_nodes(struct sched_node_score *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sched_node_info_free(v[i].ni);
    free(v);
}

static void test_score_weights_and_normalize(void **state)
{
    (void)state;
    struct profile p = {0};
    struct sched_status st = {0};
    struct sched_node_score *v = nodes_for_score(3);
    static const int weights[] = {1, 3, 0};

    point(&p, SCHED_PT_PRE_SCORE, "AB", NULL);
    point(&p, SCHED_PT_SCORE, "ABC", weights);
    start(&p);
    /* Node nk scores (k * mult) % 101: A 10, 20, 30; B 50, 100, 49. */
    fakes[A].score_mult = 10;
    fakes[B].score_mult = 50;
    fakes[C].score_fixed = 7; /* weight 0 counts as 1 */
    assert_int_equal(sched_framework_score(p.fw, p.cs, p.pod, v, 3, &st), SCHED_SUCCESS);
    assert_int_equal(v[0].score, 10 * 1 + 50 * 3 + 7);
    assert_int_equal(v[1].score, 20 * 1 + 100 * 3 + 7);
    assert_int_equal(v[2].score, 30 * 1 + 49 * 3 + 7);
    assert_int_equal(fakes[A].calls[SCHED_PT_PRE_SCORE], 1);
    assert_int_equal(fakes[A].calls[SCHED_PT_SCORE], 3);
    assert_int_equal(st.n, 0);

    /* NormalizeScore runs on the plugin's list before the weight. */
    table[A].normalize = fake_normalize;
    fakes[A].norm = NORM_REVERSE;
    assert_int_equal(sched_framework_score(p.fw, p.cs, p.pod, v, 3, &st), SCHED_SUCCESS);
    assert_int_equal(v[0].score, 90 + 150 + 7);
    assert_int_equal(v[1].score, 80 + 300 + 7);
    assert_int_equal(v[2].score, 70 + 147 + 7);
    stop(&p);
    free_nodes(v, 3);
}

static void test_score_skip_and_errors(void **state)
{
    (void)state;
    struct profile p = {0};
    struct sched_status st = {0};
    struct sched_node_score *v = nodes_for_score(2);
    static const int weights[] = {2, 1};

    point(&p, SCHED_PT_PRE_SCORE, "AB", NULL);
    point(&p, SCHED_PT_SCORE, "AB", weights);
    start(&p);
    fakes[A].score_fixed = 40;
    fakes[B].score_fixed = 5;

    /* PreScore Skip: that plugin's Score does not run. */
    fakes[A].pre_score = SCHED_SKIP;
    assert_int_equal(sched_framework_score(p.fw, p.cs, p.pod, v, 2, &st), SCHED_SUCCESS);
    assert_true(sched_cycle_skip_score(p.cs, A));
    assert_int_equal(fakes[A].calls[SCHED_PT_SCORE], 0);
    assert_int_equal(v[0].score, 5);
    assert_int_equal(v[1].score, 5);
    sched_cycle_free(p.cs);
    p.cs = sched_cycle_new();
    fakes[A].pre_score = SCHED_SUCCESS;

    /* Out of range without NormalizeScore. */
    fakes[B].score_fixed = 101;
    assert_int_equal(sched_framework_score(p.fw, p.cs, p.pod, v, 2, &st), SCHED_ERROR);
    assert_int_equal(st.code, SCHED_ERROR);
    assert_string_equal(MSG(&st), "plugin \"FakeB\" returns an invalid score 101, it should in "
                                  "the range of [0, 100] after normalizing");
    sched_status_release(&st);
    fakes[B].score_fixed = 5;

    /* Out of range after NormalizeScore. */
    table[A].normalize = fake_normalize;
    fakes[A].norm = NORM_NEGATE;
    assert_int_equal(sched_framework_score(p.fw, p.cs, p.pod, v, 2, &st), SCHED_ERROR);
    assert_string_equal(MSG(&st), "plugin \"FakeA\" returns an invalid score -40, it should in "
                                  "the range of [0, 100] after normalizing");
    sched_status_release(&st);

    /* NormalizeScore failing. */
    fakes[A].norm = NORM_FAIL;
    fakes[A].why = "cannot";
    assert_int_equal(sched_framework_score(p.fw, p.cs, p.pod, v, 2, &st), SCHED_ERROR);
    assert_string_equal(MSG(&st), "running Normalize on Score plugin \"FakeA\": cannot");
    sched_status_release(&st);
    table[A].normalize = NULL;

    /* Score failing. */
    fakes[B].score = SCHED_ERROR;
    fakes[B].why = "no data";
    assert_int_equal(sched_framework_score(p.fw, p.cs, p.pod, v, 2, &st), SCHED_ERROR);
    assert_string_equal(MSG(&st), "running Score plugin \"FakeB\": no data");
    assert_string_equal(st.plugin, "FakeB");
    sched_status_release(&st);
    fakes[B].score = SCHED_SUCCESS;

    /* PreScore failing. */
    fakes[B].pre_score = SCHED_UNSCHEDULABLE;
    fakes[B].why = "nope";
    assert_int_equal(sched_framework_score(p.fw, p.cs, p.pod, v, 2, &st), SCHED_ERROR);
    assert_string_equal(MSG(&st), "running PreScore plugin \"FakeB\": nope");
    sched_status_release(&st);
    stop(&p);
    free_nodes(v, 2);
}

static void test_score_on_the_pool(void **state)
{
    (void)state;
    struct profile p = {0};
    struct sched_status st = {0};
    struct sched_pool *pool = sched_pool_new(3);
    struct sched_framework_opts opts = {.pool = pool};
    struct sched_node_score *v = nodes_for_score(500);
    static const int weights[] = {1, 2};

    point(&p, SCHED_PT_SCORE, "AB", weights);
    start_opts(&p, &opts);
    fakes[A].score_mult = 1;
    fakes[B].score_mult = 3;
    for (int round = 0; round < 20; round++) {
        assert_int_equal(sched_framework_score(p.fw, p.cs, p.pod, v, 500, &st), SCHED_SUCCESS);
        for (int k = 1; k <= 500; k++)
            if (v[k - 1].score != k % 101 + 2 * ((3 * k) % 101))
                fail_msg("n%d: %lld", k, (long long)v[k - 1].score);
    }
    assert_int_equal(fakes[A].calls[SCHED_PT_SCORE], 20 * 500);
    /* Nothing to score. */
    assert_int_equal(sched_framework_score(p.fw, p.cs, p.pod, v, 0, &st), SCHED_SUCCESS);
    stop(&p);
    free_nodes(v, 500);
    sched_pool_free(pool);
}

/* ---- Reserve to Bind ---- */

static void test_reserve_unreserve(void **state)
{
    (void)state;
    struct profile p = {0};
    struct sched_status st = {0};

    point(&p, SCHED_PT_RESERVE, "ABC", NULL);
    start(&p);
    assert_int_equal(sched_framework_reserve(p.fw, p.cs, p.pod, "n1", &st), SCHED_SUCCESS);
    assert_string_equal(call_log, "FakeA.reserve FakeB.reserve FakeC.reserve");
    call_log[0] = 0;
    /* Unreserve: every plugin, in reverse order. */
    sched_framework_unreserve(p.fw, p.cs, p.pod, "n1");
    assert_string_equal(call_log, "FakeC.unreserve FakeB.unreserve FakeA.unreserve");
    call_log[0] = 0;

    /* A rejection stops the Reserve plugins that follow. */
    fakes[B].reserve = SCHED_UNSCHEDULABLE;
    fakes[B].why = "taken";
    assert_int_equal(sched_framework_reserve(p.fw, p.cs, p.pod, "n1", &st), SCHED_UNSCHEDULABLE);
    assert_string_equal(st.plugin, "FakeB");
    assert_string_equal(MSG(&st), "taken");
    assert_string_equal(call_log, "FakeA.reserve FakeB.reserve");
    sched_status_release(&st);
    /* Anything else is an error. */
    fakes[B].reserve = SCHED_SKIP;
    assert_int_equal(sched_framework_reserve(p.fw, p.cs, p.pod, "n1", &st), SCHED_ERROR);
    sched_status_release(&st);
    stop(&p);
}

static void test_bind(void **state)
{
    (void)state;
    struct profile p = {0};
    struct sched_status st = {0};

    point(&p, SCHED_PT_BIND, "ABC", NULL);
    start(&p);
    /* Skip goes on to the next binder; the first other answer ends. */
    fakes[A].bind = SCHED_SKIP;
    fakes[A].why = "not mine";
    assert_int_equal(sched_framework_bind(p.fw, p.cs, p.pod, "n1", &st), SCHED_SUCCESS);
    assert_string_equal(call_log, "FakeA.bind FakeB.bind");
    assert_string_equal(st.plugin, "FakeB");
    assert_int_equal(st.n, 0); /* the skipping binder's reason is dropped */
    call_log[0] = 0;
    fakes[B].bind = SCHED_ERROR;
    fakes[B].why = "conflict";
    assert_int_equal(sched_framework_bind(p.fw, p.cs, p.pod, "n1", &st), SCHED_ERROR);
    assert_string_equal(st.plugin, "FakeB");
    assert_int_equal(fakes[C].calls[SCHED_PT_BIND], 0);
    sched_status_release(&st);
    /* Every binder skips: Skip. */
    fakes[B].bind = SCHED_SKIP;
    fakes[C].bind = SCHED_SKIP;
    assert_int_equal(sched_framework_bind(p.fw, p.cs, p.pod, "n1", &st), SCHED_SKIP);
    sched_status_release(&st);
    stop(&p);

    /* No binder at all: Skip. */
    p = (struct profile){0};
    point(&p, SCHED_PT_FILTER, "A", NULL);
    start(&p);
    assert_int_equal(sched_framework_bind(p.fw, p.cs, p.pod, "n1", &st), SCHED_SKIP);
    sched_status_release(&st);
    stop(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_new, setup),
        cmocka_unit_test_setup(test_pre_enqueue, setup),
        cmocka_unit_test_setup(test_post_filter, setup),
        cmocka_unit_test_setup(test_permit, setup),
        cmocka_unit_test_setup(test_pre_filter_skip, setup),
        cmocka_unit_test_setup(test_pre_filter_unresolvable_stops, setup),
        cmocka_unit_test_setup(test_pre_filter_unschedulable_continues, setup),
        cmocka_unit_test_setup(test_pre_filter_error, setup),
        cmocka_unit_test_setup(test_pre_filter_node_names, setup),
        cmocka_unit_test_setup(test_filter_first_failure, setup),
        cmocka_unit_test_setup(test_filter_with_nominated_pods, setup),
        cmocka_unit_test_setup(test_filter_nodes_as_one_by_one, setup),
        cmocka_unit_test_setup(test_score_weights_and_normalize, setup),
        cmocka_unit_test_setup(test_score_skip_and_errors, setup),
        cmocka_unit_test_setup(test_score_on_the_pool, setup),
        cmocka_unit_test_setup(test_reserve_unreserve, setup),
        cmocka_unit_test_setup(test_bind, setup),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
