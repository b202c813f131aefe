/*
 * Tests for the ElasticQuota plugin (elastic_quota.c; reference scheduler.md 8.5): PreFilter's
 * refusal with upstream's message, and the waiting without churn of koord: PreEnqueue gates the
 * pods of a full quota (counting the pods it let through and that are not placed yet), and an
 * event of the quota activates by key only the waiting pods that fit, highest priority first,
 * fairly across quotas, never all 10,000 when one fits; ScheduleAdmission's label gate; and
 * preemption inside a quota. The plugin runs on a real framework handle whose activate callback
 * records the keys; quotas, pods and nodes come in as the informers would hand them over.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <cmocka.h>

#include "base/strbuf.h"
#include "sched/config/config.h"
#include "sched/framework/runtime.h"
#include "sched/plugins/elasticquota/elastic_quota.h"
#include "sched/plugins/registry.h"
#include "sched/schedtest.h"

static char *activated[20000];
static size_t nactivated;

static void record(void *ud, const char *const *keys, size_t n)
{
    (void)ud;
    for (size_t i = 0; i < n && nactivated < ARRAY_SIZE(activated); i++)
        activated[nactivated++] = xstrdup(keys[i]);
}

static void clear(void)
{
    for (size_t i = 0; i < nactivated; i++)
        free(activated[i]);
    nactivated = 0;
}

/* The keys activated since the last clear(), joined with ' '. */
static const char *got(void)
{
    static char buf[4096];
    size_t off = 0;

    buf[0] = 0;
    for (size_t i = 0; i < nactivated && off < sizeof(buf); i++)
        off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s", i ? " " : "", activated[i]);
    clear();
    return buf;
}

struct env {
    struct sched_config *cfg;
    struct sched_framework *fw;
    void *eq;
};

static int setup(void **state)
{
    struct env *e = xcalloc(1, sizeof(*e));
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct sched_framework_opts o = {.activate = record};

    e->cfg = sched_config_default(NULL, NULL);
    assert_int_equal(sched_framework_new(&e->cfg->profiles[0], &o, &e->fw, &errs), 0);
    assert_int_equal(
        sched_plugin_elastic_quota.init(NULL, "args", sched_framework_handle(e->fw), &e->eq, &errs),
        0);
    assert_int_equal(errs.n, 0);
    field_errors_release(&errs);
    clear();
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;

    sched_plugin_elastic_quota.free(e->eq);
    sched_framework_free(e->fw);
    sched_config_free(e->cfg);
    free(e);
    clear();
    return 0;
}

static void node(struct env *e, const char *name, const char *cpu)
{
    struct sched_node *n;
    char buf[256];

    (void)snprintf(buf, sizeof(buf),
                   "{\"metadata\":{\"name\":\"%s\"},\"status\":{\"allocatable\":"
                   "{\"cpu\":\"%s\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}",
                   name, cpu);
    n = N(buf);
    sched_plugin_elastic_quota.node_event(e->eq, n, false);
    sched_node_unref(n);
}

/* An ElasticQuota in namespace default: max cpu (and memory 10Gi), min cpu, extra labels. */
static void quota(struct env *e, const char *name, const char *min, const char *max,
                  const char *labels)
{
    char buf[1024];
    cJSON *o;

    (void)snprintf(buf, sizeof(buf),
                   "{'apiVersion':'scheduling.sigs.k8s.io/v1alpha1','kind':'ElasticQuota',"
                   "'metadata':{'name':'%s','namespace':'default','labels':{%s}},"
                   "'spec':{'min':{'cpu':'%s'},'max':{'cpu':'%s','memory':'10Gi'}}}",
                   name, labels, min, max);
    o = fx_json(buf);
    eq_plugin_quota_event(e->eq, NULL, o, false);
    cJSON_Delete(o);
}

/* A pod of quota q ("" none) requesting cpu, on node ("" pending). */
static struct sched_pod *pod(const char *name, const char *q, int prio, const char *cpu,
                             const char *nodename)
{
    return fx_pod("{'metadata':{'name':'%s','namespace':'default','uid':'uid-%s',"
                  "'creationTimestamp':'2026-01-01T00:00:00Z',"
                  "'labels':{'quota.scheduling.koordinator.sh/name':'%s'}},"
                  "'spec':{'priority':%d,'nodeName':'%s','schedulerName':'koord-scheduler',"
                  "'containers':[{'name':'c','resources':{'requests':{'cpu':'%s'}}}]}}",
                  name, name, q, prio, nodename, cpu);
}

static enum sched_code pre_enqueue(struct env *e, const struct sched_pod *p, char *msg, size_t len)
{
    struct sched_status st = {0};
    enum sched_code c = sched_plugin_elastic_quota.pre_enqueue(e->eq, p, &st);

    if (msg)
        (void)snprintf(msg, len, "%s", MSG(&st));
    sched_status_release(&st);
    return c;
}

static const char *describe(struct env *e, const char *q)
{
    static char buf[512];
    struct strbuf sb = STRBUF_INIT;

    assert_int_equal(eq_plugin_describe(e->eq, q, &sb), 0);
    (void)snprintf(buf, sizeof(buf), "%s", sb.buf);
    strbuf_release(&sb);
    return buf;
}

/*
 * Quota team: max 1 cpu on a 4-cpu cluster. Three pods of 600m (a, b priority 1; c priority
 * 10). request 1800m -> runtime min(1800m, max 1) = 1 (nothing else shares the cluster).
 *   a passes PreEnqueue (admitted 600m); b and c are gated: 0 used + 600m admitted + 600m > 1.
 *   a reserved: used 600m, admitted 0; PreFilter refuses b with upstream's message.
 *   a deleted: room 1 -> only c (higher priority) is activated, b stays.
 */
static void test_gating_and_activation(void **state)
{
    struct env *e = *state;
    struct sched_pod *a = pod("a", "team", 1, "600m", ""), *b = pod("b", "team", 1, "600m", "");
    struct sched_pod *c = pod("c", "team", 10, "600m", ""), *a2;
    struct sched_status st = {0};
    struct sched_cycle *cs = sched_cycle_new();
    struct sched_prefilter_result res = {0};
    char msg[512];

    node(e, "n1", "4");
    quota(e, "team", "0", "1", "");
    sched_plugin_elastic_quota.pod_event(e->eq, a, false);
    sched_plugin_elastic_quota.pod_event(e->eq, b, false);
    sched_plugin_elastic_quota.pod_event(e->eq, c, false);
    assert_string_equal(got(), "");
    assert_int_equal(pre_enqueue(e, a, NULL, 0), SCHED_SUCCESS);
    assert_int_equal(pre_enqueue(e, b, msg, sizeof(msg)), SCHED_UNRESOLVABLE);
    assert_string_equal(msg, "Insufficient quotas, quotaName: team, runtime: map[cpu:1 "
                             "memory:0], used: map[cpu:0 memory:0], pod's request: "
                             "map[cpu:600m memory:0], exceedDimensions: [cpu]");
    assert_int_equal(pre_enqueue(e, c, NULL, 0), SCHED_UNRESOLVABLE);
    assert_string_equal(describe(e, "team"), "used=map[cpu:0 memory:0] runtime=map[cpu:1 "
                                             "memory:0] request=map[cpu:1800m memory:0] "
                                             "waiting=2 admitted=map[cpu:600m memory:0]");
    /* PreEnqueue again (an update of a gated pod) keeps it gated, without a second entry. */
    assert_int_equal(pre_enqueue(e, b, NULL, 0), SCHED_UNRESOLVABLE);

    assert_int_equal(sched_plugin_elastic_quota.reserve(e->eq, cs, a, "n1", &st), SCHED_SUCCESS);
    assert_int_equal(sched_plugin_elastic_quota.pre_filter(e->eq, cs, b, &res, &st),
                     SCHED_UNSCHEDULABLE);
    assert_string_equal(MSG(&st), "Insufficient quotas, quotaName: team, runtime: map[cpu:1 "
                                  "memory:0], used: map[cpu:600m memory:0], pod's request: "
                                  "map[cpu:600m memory:0], exceedDimensions: [cpu]");
    sched_status_release(&st);
    /* The binding comes back through the informer: nothing changes, nothing is activated. */
    a2 = pod("a", "team", 1, "600m", "n1");
    sched_plugin_elastic_quota.pod_event(e->eq, a2, false);
    assert_string_equal(got(), "");
    assert_string_equal(describe(e, "team"), "used=map[cpu:600m memory:0] runtime=map[cpu:1 "
                                             "memory:0] request=map[cpu:1800m memory:0] "
                                             "waiting=2 admitted=map[cpu:0 memory:0]");
    sched_plugin_elastic_quota.pod_event(e->eq, a2, true);
    assert_string_equal(got(), "default/c");
    /* c is admitted for its room: b, asked again, still waits; c passes. */
    assert_int_equal(pre_enqueue(e, b, NULL, 0), SCHED_UNRESOLVABLE);
    assert_int_equal(pre_enqueue(e, c, NULL, 0), SCHED_SUCCESS);
    /* Raising max lets b in too. */
    quota(e, "team", "0", "2", "");
    assert_string_equal(got(), "default/b");

    sched_cycle_free(cs);
    sched_pod_unref(a);
    sched_pod_unref(a2);
    sched_pod_unref(b);
    sched_pod_unref(c);
}

/* Pods outside any quota (default quota) always pass; so do pods whose quota has room. */
static void test_default_quota_passes(void **state)
{
    struct env *e = *state;
    struct sched_pod *p = pod("p", "", 0, "100", ""), *u = pod("u", "nosuch", 0, "100", "");
    struct sched_cycle *cs = sched_cycle_new();
    struct sched_prefilter_result res = {0};
    struct sched_status st = {0};

    node(e, "n1", "4");
    sched_plugin_elastic_quota.pod_event(e->eq, p, false);
    assert_int_equal(pre_enqueue(e, p, NULL, 0), SCHED_SUCCESS);
    assert_int_equal(pre_enqueue(e, u, NULL, 0), SCHED_SUCCESS);
    assert_int_equal(sched_plugin_elastic_quota.pre_filter(e->eq, cs, p, &res, &st), SCHED_SUCCESS);
    sched_cycle_free(cs);
    sched_pod_unref(p);
    sched_pod_unref(u);
}

/*
 * Two full quotas with waiters get room in the same event: their activations alternate between
 * the quotas rather than one quota's pods first. A 2-cpu cluster; q1 and q2 (min 0, max 4) each
 * hold one placed 1-cpu pod and two waiting 1-cpu pods: request 3 each, equal weights -> runtime
 * 1 each, full. A 4-cpu node joins: T = 6 -> runtime 3 each, room 2 each: all four go, one
 * quota's best, the other's best, then the seconds.
 */
static void test_fair_across_quotas(void **state)
{
    struct env *e = *state;
    struct sched_pod *placed[2], *w[4];
    const char *wn[4] = {"w1a", "w1b", "w2a", "w2b"};
    const char *out;

    node(e, "n1", "2");
    quota(e, "q1", "0", "4", "");
    quota(e, "q2", "0", "4", "");
    placed[0] = pod("x1", "q1", 0, "1", "n1");
    placed[1] = pod("x2", "q2", 0, "1", "n1");
    sched_plugin_elastic_quota.pod_event(e->eq, placed[0], false);
    sched_plugin_elastic_quota.pod_event(e->eq, placed[1], false);
    for (int i = 0; i < 4; i++) {
        w[i] = pod(wn[i], i < 2 ? "q1" : "q2", 5 - i, "1", "");
        sched_plugin_elastic_quota.pod_event(e->eq, w[i], false);
    }
    for (int i = 0; i < 4; i++)
        assert_int_equal(pre_enqueue(e, w[i], NULL, 0), SCHED_UNRESOLVABLE);
    assert_string_equal(got(), "");
    node(e, "n2", "4");
    out = got();
    if (strcmp(out, "default/w1a default/w2a default/w1b default/w2b") &&
        strcmp(out, "default/w2a default/w1a default/w2b default/w1b"))
        fail_msg("activations not interleaved by quota: %s", out);
    for (int i = 0; i < 2; i++)
        sched_pod_unref(placed[i]);
    for (int i = 0; i < 4; i++)
        sched_pod_unref(w[i]);
}

/*
 * 10,000 pods wait on a full quota (max 1, one 1-cpu pod placed). Events of another quota
 * activate none of them and are cheap; the placed pod going frees room for exactly one: the
 * highest priority (the last created here), alone.
 */
static void test_ten_thousand_waiting(void **state)
{
    struct env *e = *state;
    enum { NWAIT = 10000 };
    struct sched_pod **v = xcalloc(NWAIT, sizeof(*v)), *placed, *other;
    struct timespec t0, t1;
    char name[32];

    node(e, "n1", "1000");
    quota(e, "full", "0", "1", "");
    quota(e, "other", "0", "100", "");
    placed = pod("placed", "full", 0, "1", "n1");
    sched_plugin_elastic_quota.pod_event(e->eq, placed, false);
    for (int i = 0; i < NWAIT; i++) {
        (void)snprintf(name, sizeof(name), "w%05d", i);
        v[i] = pod(name, "full", i, "1", "");
        sched_plugin_elastic_quota.pod_event(e->eq, v[i], false);
        assert_int_equal(pre_enqueue(e, v[i], NULL, 0), SCHED_UNRESOLVABLE);
    }
    assert_string_equal(got(), "");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 1000; i++) {
        (void)snprintf(name, sizeof(name), "o%d", i);
        other = pod(name, "other", 0, "100m", "n1");
        sched_plugin_elastic_quota.pod_event(e->eq, other, false);
        sched_plugin_elastic_quota.pod_event(e->eq, other, true);
        sched_pod_unref(other);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_string_equal(got(), "");
    /* 2,000 unrelated events: no sort of the 10,000 waiters each time (generous bound, for
     * valgrind too: sorting them per event would take minutes there). */
    assert_true((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9 < 20.0);
    sched_plugin_elastic_quota.pod_event(e->eq, placed, true);
    assert_string_equal(got(), "default/w09999");
    for (int i = 0; i < NWAIT; i++)
        sched_pod_unref(v[i]);
    free(v);
    sched_pod_unref(placed);
}

/* A pod that waits for a node rather than its quota gives the room back after the admission
 * ttl (30 s): the periodic pass then activates the next waiter. */
static void test_admission_expires(void **state)
{
    struct env *e = *state;
    struct sched_pod *a = pod("a", "team", 1, "1", ""), *b = pod("b", "team", 0, "1", "");
    struct timespec now;
    double t;

    node(e, "n1", "4");
    quota(e, "team", "0", "1", "");
    sched_plugin_elastic_quota.pod_event(e->eq, a, false);
    sched_plugin_elastic_quota.pod_event(e->eq, b, false);
    assert_int_equal(pre_enqueue(e, a, NULL, 0), SCHED_SUCCESS);
    assert_int_equal(pre_enqueue(e, b, NULL, 0), SCHED_UNRESOLVABLE);
    clock_gettime(CLOCK_MONOTONIC, &now);
    t = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
    eq_plugin_tick(e->eq, t + 1);
    assert_string_equal(got(), "");
    eq_plugin_tick(e->eq, t + 31);
    assert_string_equal(got(), "default/b");
    sched_pod_unref(a);
    sched_pod_unref(b);
}

/*
 * Preemption inside the quota: team (max 1) holds low (priority 1, 600m) on n1; high (priority
 * 10, 600m) is refused by the quota; PostFilter names n1, where removing low lets it pass. A
 * pod of the same priority finds no victim; and a pod not refused by the quota leaves the
 * decision to the other PostFilters.
 */
static void test_preemption_in_quota(void **state)
{
    struct env *e = *state;
    struct sched_pod *low = pod("low", "team", 1, "600m", "n1");
    struct sched_pod *high = pod("high", "team", 10, "600m", "");
    struct sched_pod *same = pod("same", "team", 1, "600m", "");
    struct sched_prefilter_result res = {0};
    struct sched_post_filter_result pr = {0};
    struct sched_node_statuses m = {0};
    struct sched_status st = {0};
    struct sched_cycle *cs;
    struct fx f;

    node(e, "n1", "4"); /* the cluster the quotas share; the snapshot's n1 has 1 cpu */
    quota(e, "team", "0", "1", "");
    sched_plugin_elastic_quota.pod_event(e->eq, low, false);
    sched_plugin_elastic_quota.pod_event(e->eq, high, false);
    sched_plugin_elastic_quota.pod_event(e->eq, same, false);
    fx_init(&f,
            fx_node_spec("n1", "", "",
                         fx_pod("{'metadata':{'name':'low','namespace':'default','uid':'uid-low',"
                                "'labels':{'quota.scheduling.koordinator.sh/name':'team'}},"
                                "'spec':{'priority':1,'nodeName':'n1','containers':[{'name':'c',"
                                "'resources':{'requests':{'cpu':'600m'}}}]}}"),
                         NULL),
            NULL);
    {
        struct sched_node *n = N("{\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":"
                                 "{\"cpu\":\"1\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}");
        sched_node_info_set_node(f.ni[0], n);
        sched_node_unref(n);
    }
    sched_framework_set_snapshot(e->fw, &f.snap);

    cs = sched_cycle_new();
    assert_int_equal(sched_framework_pre_filter(e->fw, cs, high, &res, &st, &(uint64_t){0}),
                     SCHED_SUCCESS); /* the profile's own PreFilters (cycle state) */
    sched_prefilter_result_release(&res);
    assert_int_equal(sched_plugin_elastic_quota.pre_filter(e->eq, cs, high, &res, &st),
                     SCHED_UNSCHEDULABLE);
    sched_status_release(&st);
    assert_int_equal(sched_plugin_elastic_quota.post_filter(e->eq, cs, high, &m, &pr, &st),
                     SCHED_SUCCESS);
    assert_string_equal(pr.nominated_node, "n1");
    free(pr.nominated_node);
    pr.nominated_node = NULL;
    sched_cycle_free(cs);

    cs = sched_cycle_new();
    assert_int_equal(sched_plugin_elastic_quota.pre_filter(e->eq, cs, same, &res, &st),
                     SCHED_UNSCHEDULABLE);
    sched_status_release(&st);
    assert_int_equal(sched_plugin_elastic_quota.post_filter(e->eq, cs, same, &m, &pr, &st),
                     SCHED_UNRESOLVABLE);
    assert_string_equal(MSG(&st), "preemption: not enough lower-priority pods in its quota");
    assert_null(pr.nominated_node);
    sched_status_release(&st);
    sched_cycle_free(cs);

    quota(e, "team", "0", "4", "");
    cs = sched_cycle_new();
    assert_int_equal(sched_plugin_elastic_quota.pre_filter(e->eq, cs, same, &res, &st),
                     SCHED_SUCCESS);
    assert_int_equal(sched_plugin_elastic_quota.post_filter(e->eq, cs, same, &m, &pr, &st),
                     SCHED_UNSCHEDULABLE);
    sched_cycle_free(cs);
    fx_release(&f);
    sched_framework_set_snapshot(e->fw, NULL);
    sched_pod_unref(low);
    sched_pod_unref(high);
    sched_pod_unref(same);
}

static void test_args(void **unused)
{
    cJSON *a = fx_json("{'enableRuntimeQuota':1,'quotaGroupNamespace':'q'}");

    (void)unused;
    assert_args_refused(&sched_plugin_elastic_quota, a,
                        "args.enableRuntimeQuota: Invalid value: 1: must be a boolean");
    cJSON_Delete(a);
    a = fx_json("{'revokePodInterval':'-1s'}");
    assert_args_refused(&sched_plugin_elastic_quota, a,
                        "args.revokePodInterval: Invalid value: \"-1s\": must not be negative");
    cJSON_Delete(a);
    assert_string_equal(sched_plugin_elastic_quota.args_kind, "ElasticQuotaArgs");
    assert_null(sched_plugin_elastic_quota.events[0].resource);
}

static void test_schedule_admission(void **unused)
{
    static const struct {
        const char *labels;
        enum sched_code code;
        const char *msg;
    } cases[] = {
        {"", SCHED_SUCCESS, ""},
        {"'scheduling.koordinator.sh/other':'true'", SCHED_SUCCESS, ""},
        {"'scheduling.koordinator.sh/schedule-admission':'true'", SCHED_SUCCESS, ""},
        {"'scheduling.koordinator.sh/schedule-admission-test':'true'", SCHED_UNRESOLVABLE,
         "waiting for schedule admission: label scheduling.koordinator.sh/schedule-admission-test"},
        /* The value is not looked at: any such label holds. */
        {"'a':'b','scheduling.koordinator.sh/schedule-admission-queue':'false'", SCHED_UNRESOLVABLE,
         "waiting for schedule admission: label "
         "scheduling.koordinator.sh/schedule-admission-queue"},
    };

    (void)unused;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct sched_pod *p =
            fx_pod("{'metadata':{'name':'p','labels':{%s}},'spec':{}}", cases[i].labels);
        struct sched_status st = {0};
        enum sched_code c = sched_plugin_schedule_admission.pre_enqueue(NULL, p, &st);

        if (c != cases[i].code || strcmp(MSG(&st), cases[i].msg))
            fail_msg("case %zu: got %d %s", i, (int)c, MSG(&st));
        sched_status_release(&st);
        sched_pod_unref(p);
    }
    assert_null(sched_plugin_schedule_admission.events[0].resource);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_gating_and_activation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default_quota_passes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fair_across_quotas, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ten_thousand_waiting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_admission_expires, setup, teardown),
        cmocka_unit_test_setup_teardown(test_preemption_in_quota, setup, teardown),
        cmocka_unit_test(test_args),
        cmocka_unit_test(test_schedule_admission),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
