/*
 * Tests for agent/qos/evict_api with the runner (reference 3.2, 4): a real `koord apiserver`
 * in-process (tests/kube/kubetest.h); pods are read from it each tick, evicted through the
 * policy/v1 Eviction subresource with a UID precondition, and a Warning Event from
 * koordlet-qosManager records the outcome. A non-BE pod is never evicted by a BE strategy, and
 * the cool-down and the 2-minute memory hold across ticks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/cgtest.h"
#include "agent/metriccache/metriccache.h"
#include "agent/qos/evict_api.h"
#include "agent/qos/runner.h"
#include "agent/qosrun.h"
#include "kube/events.h"
#include "kube/kubetest.h"

#define NOW INT64_C(1700000000000)

struct fx {
    struct kt_server *s;
    struct kube_client *c;
    struct kube_recorder *rec;
    struct qos_evict_api *api;
    struct cgt *t;
    struct cg_layout l;
    struct mc *mc;
    struct qr_source src; /* node and NodeSLO; pods come from the server */
    struct qos_runner *r;
};

/* The pods of namespace default, as the agent's informer would hand them out. */
static cJSON *server_pods(void *ctx)
{
    struct fx *f = ctx;
    cJSON *list = NULL, *items;

    if (kube_list(f->c, &kube_res_pods, "default", NULL, &list, NULL) < 0)
        return NULL;
    items = cJSON_DetachItemFromObject(list, "items");
    cJSON_Delete(list);
    return items;
}

/* Creates the pod on the server; returns the UID it got (static buffer per call site). */
static void create_pod(struct fx *f, cJSON *pod, char *ret_uid, size_t size)
{
    cJSON *created = NULL;
    const char *uid;

    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(pod, "metadata"), "uid");
    /* As a kubelet that stops the containers at once: an evicted pod leaves the server when the
     * Eviction is accepted rather than after 30 s of Terminating, which the eviction rounds
     * below would count as memory still being released. */
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(pod, "spec"), "terminationGracePeriodSeconds");
    assert_non_null(cJSON_AddNumberToObject(cJSON_GetObjectItem(pod, "spec"),
                                            "terminationGracePeriodSeconds", 0));
    assert_int_equal(kube_create(f->c, &kube_res_pods, "default", pod, &created, NULL), 0);
    uid =
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(created, "metadata"), "uid"));
    assert_non_null(uid);
    (void)snprintf(ret_uid, size, "%s", uid);
    cJSON_Delete(created);
    cJSON_Delete(pod);
}

/* Whether the pod is still there and not being deleted: an accepted Eviction deletes a bound
 * pod gracefully, so it stays, Terminating, for its grace period. */
static bool pod_alive(struct fx *f, const char *name)
{
    cJSON *p = NULL;
    int r = kube_get(f->c, &kube_res_pods, "default", name, &p, NULL);
    bool alive;

    if (r == -ENOENT)
        return false;
    assert_int_equal(r, 0);
    alive = !cJSON_GetObjectItem(cJSON_GetObjectItem(p, "metadata"), "deletionTimestamp");
    cJSON_Delete(p);
    return alive;
}

/* The number of Events about pod name with this reason, checking the source and type. */
static int events_for(struct fx *f, const char *name, const char *reason, const char *want_text)
{
    cJSON *list = NULL, *e;
    int n = 0;

    assert_int_equal(kube_list(f->c, &kube_res_events, "default", NULL, &list, NULL), 0);
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(list, "items"))
    {
        const cJSON *io = cJSON_GetObjectItem(e, "involvedObject");
        const char *r = cJSON_GetStringValue(cJSON_GetObjectItem(e, "reason"));
        const char *msg = cJSON_GetStringValue(cJSON_GetObjectItem(e, "message"));

        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(io, "name")), name) || !r ||
            strcmp(r, reason))
            continue;
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(io, "kind")), "Pod");
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(e, "type")), "Warning");
        assert_string_equal(cJSON_GetStringValue(
                                cJSON_GetObjectItem(cJSON_GetObjectItem(e, "source"), "component")),
                            QOS_EVICT_EVENT_COMPONENT);
        if (want_text)
            assert_string_equal(msg, want_text);
        n++;
    }
    cJSON_Delete(list);
    return n;
}

static int setup(void **state)
{
    struct fx *f = xcalloc(1, sizeof(*f));
    struct kube_recorder_opts ro = {.component = QOS_EVICT_EVENT_COMPONENT, .host = "n1"};
    struct qos_evict_api_opts ao = {0};

    f->s = kt_server_new(0);
    f->c = kt_client(f->s);
    f->rec = kube_recorder_new(f->c, &ro);
    ao.client = f->c;
    ao.recorder = f->rec;
    assert_int_equal(qos_evict_api_new(&ao, &f->api), 0);
    f->t = cgt_new();
    assert_int_equal(cg_layout_init(&f->l, &f->t->roots, CG_V1, CG_DRIVER_CGROUPFS), 0);
    assert_int_equal(mc_new(NULL, &f->mc), 0);
    f->src.node = qr_node("8", "10Gi");
    f->src.nodeslo = qr_nodeslo(
        "{\"resourceUsedThresholdWithBE\":{\"enable\":true,\"memoryEvictThresholdPercent\":70}}");
    *state = f;
    return 0;
}

/* The runner with pods from the server and node/NodeSLO from the fixture's source. */
static cJSON *fx_node(void *ctx)
{
    return qr_dup(((struct fx *)ctx)->src.node);
}

static cJSON *fx_nodeslo(void *ctx)
{
    return qr_dup(((struct fx *)ctx)->src.nodeslo);
}

static void make_runner(struct fx *f)
{
    struct qos_runner_opts o;

    qos_runner_opts_init(&o);
    o.layout = &f->l;
    o.metrics = f->mc;
    o.get_pods = server_pods;
    o.get_node = fx_node;
    o.get_nodeslo = fx_nodeslo;
    o.source_ctx = f;
    o.evict = qos_evict_api_evict;
    o.evict_ctx = f->api;
    o.recent = qos_evict_api_recent(f->api);
    o.features = QOS_RUNNER_F_BE_MEMORY_EVICT;
    assert_int_equal(qos_runner_new(&o, &f->r), 0);
}

static int teardown(void **state)
{
    struct fx *f = *state;

    qos_runner_free(f->r);
    qos_evict_api_free(f->api);
    kube_recorder_free(f->rec);
    kube_client_free(f->c);
    kt_server_free(f->s);
    mc_free(f->mc);
    qr_source_release(&f->src);
    cgt_free(f->t);
    free(f);
    return 0;
}

/*
 * Node 8Gi of 10Gi (80 % >= 70 %, release 1.2Gi). be-big (2Gi) is evicted through the API: gone
 * from the server, one evictPodSuccess Event with upstream's text. ls-big (5Gi) stays. At +1 s
 * the cool-down holds; at +4 s be-small (1Gi) goes; then, with only ls-big left over the
 * threshold, nothing more is evicted.
 */
static void test_evict_be_through_api(void **state)
{
    struct fx *f = *state;
    char be_big[64], be_small[64], ls_big[64];
    const int64_t ts[] = {NOW, NOW + 1000, NOW + 4000, NOW + 8000, NOW + 12000};
    const bool big_there[] = {false, false, false, false, false};
    const bool small_there[] = {true, true, false, false, false};
    struct qos_evict_api_stats st;

    make_runner(f);
    create_pod(f, qr_pod("be-big", "x", "BE", "BestEffort", "", "{}"), be_big, sizeof(be_big));
    create_pod(f, qr_pod("be-small", "x", "BE", "BestEffort", "", "{}"), be_small,
               sizeof(be_small));
    create_pod(f, qr_pod("ls-big", "x", "LS", "Burstable", "", "{}"), ls_big, sizeof(ls_big));
    for (size_t i = 0; i < ARRAY_SIZE(ts); i++) {
        assert_int_equal(mc_append(f->mc, MC_NODE_MEMORY_USAGE, NULL, NULL, ts[i], 8.0 * QR_GI), 0);
        assert_int_equal(mc_append(f->mc, MC_POD_MEMORY_USAGE, be_big, NULL, ts[i], 2.0 * QR_GI),
                         0);
        assert_int_equal(mc_append(f->mc, MC_POD_MEMORY_USAGE, be_small, NULL, ts[i], 1.0 * QR_GI),
                         0);
        assert_int_equal(mc_append(f->mc, MC_POD_MEMORY_USAGE, ls_big, NULL, ts[i], 5.0 * QR_GI),
                         0);
        assert_int_equal(qos_runner_tick(f->r, ts[i]), 0);
        assert_int_equal(pod_alive(f, "be-big"), big_there[i]);
        assert_int_equal(pod_alive(f, "be-small"), small_there[i]);
        assert_true(pod_alive(f, "ls-big"));
    }
    assert_int_equal(
        events_for(f, "be-big", QOS_EVICT_EVENT_SUCCESS,
                   "evict Pod:default/be-big, reason: evicted, message: trigger by koordlet "
                   "feature BEMemoryEvict, kill pod: be-big"),
        1);
    assert_int_equal(events_for(f, "be-small", QOS_EVICT_EVENT_SUCCESS, NULL), 1);
    assert_int_equal(events_for(f, "ls-big", QOS_EVICT_EVENT_SUCCESS, NULL), 0);
    assert_int_equal(events_for(f, "ls-big", QOS_EVICT_EVENT_FAIL, NULL), 0);
    qos_evict_api_stats(f->api, &st);
    assert_int_equal(st.evicted, 2);
    assert_int_equal(st.failed, 0);
    assert_int_equal(st.refused, 0);
    assert_true(qos_evicted_contains(qos_evict_api_recent(f->api), be_big, NOW + 12000));
}

/* The gate of evict_api itself: a BE feature naming a non-BE pod is refused, nothing sent. */
static void test_refuses_non_be(void **state)
{
    struct fx *f = *state;
    cJSON *json = NULL;
    struct qos_pod p;
    char uid[64];
    struct qos_evict_api_stats st;

    create_pod(f, qr_pod("ls", "x", "LS", "Burstable", "", "{}"), uid, sizeof(uid));
    assert_int_equal(kube_get(f->c, &kube_res_pods, "default", "ls", &json, NULL), 0);
    assert_int_equal(qos_pod_from_json(json, &p), 0);
    assert_int_equal(qos_evict_api_evict(f->api, QOS_FEATURE_BE_MEMORY_EVICT, &p, NOW), -EPERM);
    assert_int_equal(qos_evict_api_evict(f->api, QOS_FEATURE_BE_CPU_EVICT, &p, NOW), -EPERM);
    assert_true(pod_alive(f, "ls"));
    assert_int_equal(events_for(f, "ls", QOS_EVICT_EVENT_SUCCESS, NULL), 0);
    qos_evict_api_stats(f->api, &st);
    assert_int_equal(st.refused, 2);
    qos_pod_release(&p);
    cJSON_Delete(json);
}

/*
 * The UID precondition: a pod recreated under the same name is not evicted (409 -> -ESTALE),
 * and the failure is an evictPodFail Event. Then the 2-minute memory: once evicted, the same
 * UID is not sent again until it expires.
 */
static void test_uid_precondition_and_memory(void **state)
{
    struct fx *f = *state;
    cJSON *json = NULL;
    struct qos_pod p;
    char uid[64];

    create_pod(f, qr_pod("be", "x", "BE", "BestEffort", "", "{}"), uid, sizeof(uid));
    assert_int_equal(kube_get(f->c, &kube_res_pods, "default", "be", &json, NULL), 0);
    assert_int_equal(qos_pod_from_json(json, &p), 0);
    p.uid = "00000000-0000-0000-0000-000000000000";
    assert_int_equal(qos_evict_api_evict(f->api, QOS_FEATURE_BE_MEMORY_EVICT, &p, NOW), -ESTALE);
    assert_true(pod_alive(f, "be"));
    assert_int_equal(events_for(f, "be", QOS_EVICT_EVENT_FAIL, NULL), 1);

    p.uid = uid;
    assert_int_equal(qos_evict_api_evict(f->api, QOS_FEATURE_BE_MEMORY_EVICT, &p, NOW), 0);
    assert_false(pod_alive(f, "be"));
    assert_int_equal(events_for(f, "be", QOS_EVICT_EVENT_SUCCESS, NULL), 1);
    assert_int_equal(qos_evict_api_evict(f->api, QOS_FEATURE_BE_MEMORY_EVICT, &p, NOW + 120000),
                     -EALREADY);
    /* Expired: sent again, and the server says the pod is gone. */
    assert_int_equal(qos_evict_api_evict(f->api, QOS_FEATURE_BE_MEMORY_EVICT, &p, NOW + 120001),
                     -ENOENT);
    qos_pod_release(&p);
    cJSON_Delete(json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_evict_be_through_api, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_non_be, setup, teardown),
        cmocka_unit_test_setup_teardown(test_uid_precondition_and_memory, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
