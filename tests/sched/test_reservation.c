/*
 * Tests for Reservations in the scheduler: the reserve pod a Reservation becomes in each state
 * (sched/reservation/reserve_pod.c, against the rules of reference koordlet-and-scheduler.md
 * 5.3), the allocatable written on binding (resize annotation), and the Reservation plugin's
 * args, Filter, PostFilter and Bind for real pods.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codec/codec.h"
#include "sched/plugins/registry.h"
#include "sched/plugins/reservation/reservation.h"
#include "sched/reservation/owners.h"
#include "sched/reservation/reserve_pod.h"
#include "schedtest.h"

#define RESV(status)                                                                               \
    "{\"apiVersion\":\"scheduling.koordinator.sh/v1alpha1\",\"kind\":\"Reservation\","             \
    "\"metadata\":{\"name\":\"r1\",\"uid\":\"u-1\",\"resourceVersion\":\"7\","                     \
    "\"creationTimestamp\":\"2026-01-02T03:04:05Z\",\"labels\":{\"team\":\"a\",\"app\":\"resv\"}," \
    "\"annotations\":{\"note\":\"r\"}},"                                                           \
    "\"spec\":{\"template\":{\"metadata\":{\"namespace\":\"ns1\",\"labels\":{\"app\":\"web\","     \
    "\"tier\":\"front\"},\"annotations\":{\"note\":\"t\",\"keep\":\"1\"}},\"spec\":{"              \
    "\"nodeName\":\"node-b\",\"schedulerName\":\"koord-scheduler\",\"containers\":[{\"name\":"     \
    "\"c\",\"resources\":{\"requests\":{\"cpu\":\"1500m\",\"memory\":\"1Gi\"}}}]}},"               \
    "\"owners\":[{\"labelSelector\":{\"matchLabels\":{\"app\":\"web\"}}}]}" status "}"

static const char *ann(const cJSON *pod, const char *k)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pod, "metadata"),
                                         "annotations"),
        k));
}

static void test_states(void **state)
{
    (void)state;
    static const struct {
        const char *status;
        enum sched_resv_state want;
    } cases[] = {
        {"", SCHED_RESV_UNASSIGNED},
        {",\"status\":{\"phase\":\"Pending\"}", SCHED_RESV_UNASSIGNED},
        {",\"status\":{\"phase\":\"Available\",\"nodeName\":\"n\"}", SCHED_RESV_HOLDING},
        {",\"status\":{\"phase\":\"Waiting\",\"nodeName\":\"n\"}", SCHED_RESV_HOLDING},
        {",\"status\":{\"phase\":\"Succeeded\",\"nodeName\":\"n\"}", SCHED_RESV_RELEASED},
        {",\"status\":{\"phase\":\"Failed\"}", SCHED_RESV_RELEASED},
        {",\"status\":{\"phase\":\"Pending\",\"nodeName\":\"n\"}", SCHED_RESV_RELEASED},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[2048];
        cJSON *o;
        (void)snprintf(buf, sizeof(buf), RESV("%s"), cases[i].status);
        o = fx_json(buf);
        if (sched_resv_state(o) != cases[i].want)
            fail_msg("case %zu: state %d, want %d", i, sched_resv_state(o), cases[i].want);
        cJSON_Delete(o);
    }
}

static void test_pending_reserve_pod(void **state)
{
    (void)state;
    cJSON *r = fx_json(RESV("")), *o;
    const char *why = NULL;
    struct sched_pod *p = NULL;

    o = sched_reserve_pod(r, &why);
    assert_non_null(o);
    /* name and uid the Reservation's uid, the template's namespace */
    assert_int_equal(sched_pod_decode(o, &p), 0);
    assert_string_equal(p->name, "u-1");
    assert_string_equal(p->uid, "u-1");
    assert_string_equal(p->namespace, "ns1");
    assert_string_equal(p->reservation, "r1");
    assert_string_equal(p->reservation_node, "node-b");
    assert_string_equal(p->node_name, ""); /* the template's node is a constraint */
    assert_string_equal(p->scheduler_name, "koord-scheduler");
    assert_int_equal(p->priority, INT32_MAX);
    assert_int_equal(p->req.v[SCHED_RES_CPU], 1500);
    assert_int_equal(p->req.v[SCHED_RES_MEMORY], 1LL << 30);
    /* the template's labels, the Reservation's on top */
    assert_string_equal(sched_label(p->labels, "app"), "resv");
    assert_string_equal(sched_label(p->labels, "tier"), "front");
    assert_string_equal(sched_label(p->labels, "team"), "a");
    assert_string_equal(ann(o, "note"), "r");
    assert_string_equal(ann(o, "keep"), "1");
    assert_string_equal(ann(o, SCHED_ANN_RESERVE_POD), "true");
    sched_pod_unref(p);
    cJSON_Delete(o);
    cJSON_Delete(r);
}

static void test_priority_and_defaults(void **state)
{
    (void)state;
    static const struct {
        const char *tmpl;
        int32_t priority;
        const char *ns, *scheduler;
    } cases[] = {
        {"{\"spec\":{\"priority\":7}}", 7, "default", "default-scheduler"},
        {"{\"metadata\":{\"labels\":{\"koordinator.sh/priority\":\"9100\"}},\"spec\":{}}", 9100,
         "default", "default-scheduler"},
        {"{\"metadata\":{\"labels\":{\"koordinator.sh/priority\":\"x\"}}}", INT32_MAX, "default",
         "default-scheduler"},
        {"{\"metadata\":{\"namespace\":\"n2\"},\"spec\":{\"schedulerName\":\"s\",\"priority\":-3}}",
         -3, "n2", "s"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[1024];
        const char *why = NULL;
        struct sched_pod *p = NULL;
        cJSON *r, *o;
        (void)snprintf(buf, sizeof(buf),
                       "{\"metadata\":{\"name\":\"r\",\"uid\":\"u\"},\"spec\":{\"template\":%s}}",
                       cases[i].tmpl);
        r = fx_json(buf);
        assert_non_null(o = sched_reserve_pod(r, &why));
        assert_int_equal(sched_pod_decode(o, &p), 0);
        if (p->priority != cases[i].priority || strcmp(p->namespace, cases[i].ns) ||
            strcmp(p->scheduler_name, cases[i].scheduler) || p->reservation_node)
            fail_msg("case %zu: priority %d ns %s scheduler %s", i, p->priority, p->namespace,
                     p->scheduler_name);
        sched_pod_unref(p);
        cJSON_Delete(o);
        cJSON_Delete(r);
    }
}

static void test_available_and_done(void **state)
{
    (void)state;
    cJSON *r = fx_json(RESV(",\"status\":{\"phase\":\"Available\",\"nodeName\":\"node-a\","
                            "\"allocatable\":{\"cpu\":\"2\",\"memory\":\"3Gi\"}}"));
    cJSON *done = fx_json(RESV(",\"status\":{\"phase\":\"Succeeded\",\"nodeName\":\"node-a\"}"));
    cJSON *anon = fx_json("{\"metadata\":{\"name\":\"r\"}}");
    const char *why = NULL;
    struct sched_pod *p = NULL;
    cJSON *o = sched_reserve_pod(r, &why);

    /* On its node it holds status.allocatable, whatever the template asked. */
    assert_non_null(o);
    assert_int_equal(sched_pod_decode(o, &p), 0);
    assert_string_equal(p->node_name, "node-a");
    assert_int_equal(p->req.v[SCHED_RES_CPU], 2000);
    assert_int_equal(p->req.v[SCHED_RES_MEMORY], 3LL << 30);
    sched_pod_unref(p);
    cJSON_Delete(o);

    assert_null(sched_reserve_pod(done, &why));
    assert_non_null(strstr(why, "holds nothing"));
    assert_null(sched_reserve_pod(anon, &why));
    assert_non_null(strstr(why, "metadata.uid"));
    cJSON_Delete(r);
    cJSON_Delete(done);
    cJSON_Delete(anon);
}

static void test_allocatable(void **state)
{
    (void)state;
    cJSON *r = fx_json(RESV("")), *a;
    struct sched_pod *p = P("{\"metadata\":{\"name\":\"p\",\"uid\":\"u\"},\"spec\":{\"containers\":"
                            "[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1500m\","
                            "\"memory\":\"1Gi\"}}}]}}");
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(r, "metadata");
    cJSON *anns = cJSON_GetObjectItemCaseSensitive(meta, "annotations");

    a = sched_resv_allocatable(r, p);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "cpu")), "1500m");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "memory")), "1Gi");
    cJSON_Delete(a);
    /* The resize annotation replaces the resources it names. */
    cJSON_AddStringToObject(anns, SCHED_ANN_RESIZE_ALLOCATABLE, "{\"cpu\":\"4\"}");
    a = sched_resv_allocatable(r, p);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "cpu")), "4");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "memory")), "1Gi");
    cJSON_Delete(a);
    /* A malformed one changes nothing. */
    cJSON_DeleteItemFromObjectCaseSensitive(anns, SCHED_ANN_RESIZE_ALLOCATABLE);
    cJSON_AddStringToObject(anns, SCHED_ANN_RESIZE_ALLOCATABLE, "{cpu");
    a = sched_resv_allocatable(r, p);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "cpu")), "1500m");
    cJSON_Delete(a);
    sched_pod_unref(p);
    cJSON_Delete(r);
}

static void test_allocated_annotation(void **state)
{
    (void)state;
    struct sched_pod *p = P("{\"metadata\":{\"name\":\"p\",\"uid\":\"u\",\"annotations\":{"
                            "\"scheduling.koordinator.sh/reservation-allocated\":"
                            "\"{\\\"name\\\":\\\"r1\\\",\\\"uid\\\":\\\"u-1\\\"}\"}}}");
    struct sched_pod *bad = P("{\"metadata\":{\"name\":\"p\",\"uid\":\"u\",\"annotations\":{"
                              "\"scheduling.koordinator.sh/reservation-allocated\":\"{\"}}}");

    assert_string_equal(p->allocated_from, "u-1");
    assert_null(p->reservation);
    assert_null(bad->allocated_from);
    sched_pod_unref(p);
    sched_pod_unref(bad);
}

static void test_args(void **state)
{
    (void)state;
    struct sched_reservation_args a;
    struct field_errors errs = FIELD_ERRORS_INIT;
    cJSON *j;

    assert_int_equal(sched_reservation_args_decode(NULL, "args", &a, &errs), 0);
    assert_false(a.enable_preemption);
    assert_int_equal(a.min_candidate_nodes_pct, 10);
    assert_int_equal(a.min_candidate_nodes_abs, 100);
    assert_int_equal(a.controller_workers, 1);
    assert_int_equal(a.gc_duration_s, 86400);
    assert_int_equal(a.gc_interval_s, 60);
    assert_int_equal(a.resync_interval_s, 60);
    assert_false(a.disable_gc);
    j = fx_json("{\"apiVersion\":\"kubescheduler.config.k8s.io/v1\",\"kind\":\"ReservationArgs\","
                "\"enablePreemption\":true,\"gcDurationSeconds\":30,\"gcIntervalSeconds\":5,"
                "\"disableGarbageCollection\":true,\"ignoredResources\":[\"x\"],"
                "\"preAllocationConfig\":{\"enableClusterMode\":true}}");
    assert_int_equal(sched_reservation_args_decode(j, "args", &a, &errs), 0);
    assert_true(a.enable_preemption);
    assert_int_equal(a.gc_duration_s, 30);
    assert_int_equal(a.gc_interval_s, 5);
    assert_true(a.disable_gc);
    cJSON_Delete(j);
    field_errors_release(&errs);

    j = fx_json("{\"enablePreemption\":1,\"minCandidateNodesPercentage\":101,"
                "\"gcIntervalSeconds\":0,\"ignoredResources\":\"cpu\",\"bogus\":1}");
    assert_args_refused(&sched_plugin_reservation, j,
                        "unknown field \"args.bogus\"\n"
                        "args.enablePreemption: Invalid value: 1: must be a boolean\n"
                        "args.minCandidateNodesPercentage: Invalid value: 101: must be an integer "
                        "in [0, 100]\n"
                        "args.gcIntervalSeconds: Invalid value: 0: must be an integer in [1, "
                        "2147483647]\n"
                        "args.ignoredResources: Invalid value: \"cpu\": must be a list");
    cJSON_Delete(j);
}

static void test_plugin(void **state)
{
    (void)state;
    const struct sched_plugin *pl = &sched_plugin_reservation;
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct sched_status st = {0};
    cJSON *r = fx_json(RESV("")), *o;
    const char *why = NULL;
    struct sched_pod *reserve = NULL, *plain = fx_pod("{'metadata':{'name':'p','uid':'p'}}");
    struct sched_node_info *a = fx_node("node-a", "", NULL);
    struct sched_node_info *b = fx_node("node-b", "", NULL);
    void *self = NULL;
    cJSON *args = fx_json("{\"enablePreemption\":true}");
    void *preempting = NULL;
    struct sched_cycle *cs = sched_cycle_new();

    assert_non_null(o = sched_reserve_pod(r, &why));
    assert_int_equal(sched_pod_decode(o, &reserve), 0);
    assert_int_equal(pl->init(NULL, "args", NULL, &self, &errs), 0);
    assert_int_equal(pl->init(args, "args", NULL, &preempting, &errs), 0);
    /* Filter: a reserve pod on the node its template names only; real pods anywhere. */
    assert_int_equal(pl->filter(self, cs, reserve, b, &st), SCHED_SUCCESS);
    assert_int_equal(pl->filter(self, cs, reserve, a, &st), SCHED_UNRESOLVABLE);
    assert_string_equal(MSG(&st), "node(s) didn't match the nodeName specified by reservation");
    sched_status_release(&st);
    assert_int_equal(pl->filter(self, cs, plain, a, &st), SCHED_SUCCESS);
    /* PostFilter: a reserve pod stops preemption, unless enabled; a real pod goes on to it. */
    assert_int_equal(pl->post_filter(self, NULL, reserve, NULL, NULL, &st), SCHED_ERROR);
    assert_int_equal(st.n, 0);
    assert_int_equal(pl->post_filter(preempting, NULL, reserve, NULL, NULL, &st),
                     SCHED_UNSCHEDULABLE);
    assert_int_equal(pl->post_filter(self, NULL, plain, NULL, NULL, &st), SCHED_UNSCHEDULABLE);
    /* Bind: real pods are DefaultBinder's; a reserve pod without a client is an error. */
    assert_int_equal(pl->bind(self, NULL, plain, "node-a", &st), SCHED_SKIP);
    assert_int_equal(pl->bind(self, NULL, reserve, "node-b", &st), SCHED_ERROR);
    sched_status_release(&st);
    /* Without Reservations PreFilter leaves no state (Score is skipped); a pod that must use one
     * (reservation affinity) fits nowhere. */
    assert_int_equal(pl->pre_filter(self, cs, plain, NULL, &st), SCHED_SUCCESS);
    assert_int_equal(pl->pre_score(self, cs, plain, NULL, 0, &st), SCHED_SKIP);
    {
        static const char aj[] = "{'metadata':{'name':'q','uid':'q','annotations':{"
                                 "'scheduling.koordinator.sh/reservation-affinity':"
                                 "'{\\'name\\':\\'r1\\'}'}}}";
        struct sched_pod *aff = fx_pod("%s", aj);
        cJSON *ao = fx_json(aj);
        /* the scheduler's pod handler decodes this where a profile runs Reservation */
        assert_int_equal(sched_resv_pod_decode(ao, &aff->resv), 0);
        cJSON_Delete(ao);
        assert_int_equal(pl->pre_filter(self, cs, aff, NULL, &st), SCHED_UNRESOLVABLE);
        assert_string_equal(MSG(&st), "node(s) no reservations match reservation affinity");
        sched_status_release(&st);
        sched_pod_unref(aff);
    }
    sched_cycle_free(cs);
    pl->free(self);
    pl->free(preempting);
    field_errors_release(&errs);
    sched_pod_unref(reserve);
    sched_pod_unref(plain);
    sched_node_info_free(a);
    sched_node_info_free(b);
    cJSON_Delete(args);
    cJSON_Delete(o);
    cJSON_Delete(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_states),
        cmocka_unit_test(test_pending_reserve_pod),
        cmocka_unit_test(test_priority_and_defaults),
        cmocka_unit_test(test_available_and_done),
        cmocka_unit_test(test_allocatable),
        cmocka_unit_test(test_allocated_annotation),
        cmocka_unit_test(test_args),
        cmocka_unit_test(test_plugin),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
