/*
 * Tests for sched/reservation/controller against a real koord API server (tests/kube/
 * kubetest.h) with the Reservation CRD installed, and a fake clock the tests move (reference
 * manager-behaviour.md 7.1-7.4, scheduler.md 8.4):
 * - ttl expiry: an Available reservation is left alone before creation + ttl and turns Failed
 *   with Ready False/Expired after it (the Ready=True condition replaced, Scheduled kept);
 * - expires: the same at the absolute time; ttl 0 disables both, even an expires in the past;
 * - a reservation without status.nodeName is never expired, and expires once bound;
 * - its node deleted: expired, and collected by the next GC although young;
 * - owners/allocated from the pods of its node annotated with its uid, sorted by uid, masked
 *   to allocatable's names, written only on change; allocateOnce -> Succeeded at the first;
 * - GC: Expired (from lastTransitionTime) and Succeeded (from lastProbeTime) reservations older
 *   than gcDurationSeconds are deleted, not a second before; Failed-not-expired ones never;
 * - the args of ReservationArgs the controller reads.
 * Conditions are awaited by polling with a deadline, never by sleeping. JSON below is written
 * with ' for " and ` for \".
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "api/api.h"
#include "api/crd.h"
#include "api/rfc3339.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "kube/client.h"
#include "kube/kubetest.h"
#include "sched/reservation/controller.h"
#include "sched/reservation/owners.h"

#define DEADLINE_S 60.0
#define DAY        86400

static const struct kube_resource res_crds = {
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false};
static const struct kube_resource res_namespaces = {"", "v1", "namespaces", "Namespace", false};
static const struct kube_resource res_resv = {"scheduling.koordinator.sh", "v1alpha1",
                                              "reservations", "Reservation", false};

struct env {
    struct kt_server *srv;
    struct kube_client *c;
    struct sched_resv_controller *ctl;
    _Atomic long offset_s; /* the fake clock: real time + offset */
    struct strbuf why;
};

static double fake_now(void *ud)
{
    struct env *e = ud;
    struct timespec ts;

    (void)clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + (double)atomic_load(&e->offset_s);
}

static cJSON *js(const char *s)
{
    struct strbuf sb = STRBUF_INIT;
    cJSON *o;

    for (; *s; s++) {
        if (*s == '\'')
            strbuf_addch(&sb, '"');
        else if (*s == '`')
            strbuf_addstr(&sb, "\\\"");
        else
            strbuf_addch(&sb, *s);
    }
    o = cJSON_Parse(sb.buf);
    if (!o)
        fail_msg("bad test JSON: %s", sb.buf);
    strbuf_release(&sb);
    return o;
}

static cJSON *create(struct env *e, const struct kube_resource *r, const char *ns, const char *json)
{
    cJSON *o = js(json), *out = NULL;
    struct kube_status st = {0};
    int rc = kube_create(e->c, r, ns, o, &out, &st);

    cJSON_Delete(o);
    if (rc != 0)
        fail_msg("create %s %s: %d %s", r->plural, json, rc, st.message);
    return out;
}

static cJSON *get_resv(struct env *e, const char *name)
{
    cJSON *o = NULL;
    int rc = kube_get(e->c, &res_resv, NULL, name, &o, NULL);

    if (rc == -ENOENT)
        return NULL;
    if (rc != 0)
        fail_msg("get reservation %s: %d", name, rc);
    return o;
}

static const cJSON *at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, a) : NULL;
    return b ? (v ? cJSON_GetObjectItemCaseSensitive(v, b) : NULL) : v;
}

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
    const char *s = cJSON_GetStringValue(at(o, a, b));
    return s ? s : "";
}

static void ts_of(double t, char buf[RFC3339_STR_MAX])
{
    (void)rfc3339_format((int64_t)t, buf);
}

/* A reservation owned by app=web pods; spec members extra (",..."). Returns its uid (free). */
static char *add_resv(struct env *e, const char *name, const char *extra)
{
    char json[2048];
    cJSON *o;
    char *uid;

    (void)snprintf(json, sizeof(json),
                   "{'apiVersion':'scheduling.koordinator.sh/v1alpha1','kind':'Reservation',"
                   "'metadata':{'name':'%s'},'spec':{'template':{'spec':{'containers':[{'name':"
                   "'c','resources':{'requests':{'cpu':'2','memory':'4Gi'}}}]}},'owners':[{"
                   "'labelSelector':{'matchLabels':{'app':'web'}}}]%s}}",
                   name, extra);
    o = create(e, &res_resv, NULL, json);
    uid = xstrdup(str_at(o, "metadata", "uid"));
    cJSON_Delete(o);
    return uid;
}

/* Writes status members (JSON text of an object) through the status subresource, as the
 * scheduler's bind would (kubectl patch --subresource=status in the e2e test). */
static void set_status(struct env *e, const char *name, const char *status)
{
    cJSON *o = get_resv(e, name);
    struct kube_status st = {0};
    int rc;

    assert_non_null(o);
    cJSON_DeleteItemFromObjectCaseSensitive(o, "status");
    cJSON_AddItemToObject(o, "status", js(status));
    rc = kube_update(e->c, &res_resv, NULL, o, "status", NULL, &st);
    cJSON_Delete(o);
    if (rc != 0)
        fail_msg("status of %s: %d %s", name, rc, st.message);
}

/* What the scheduler's bind writes (7.1): Available on node, allocatable cpu 2 memory 4Gi. */
static void make_available(struct env *e, const char *name, const char *node)
{
    char status[1024], ts[RFC3339_STR_MAX];

    ts_of(fake_now(e), ts);
    (void)snprintf(status, sizeof(status),
                   "{'phase':'Available','nodeName':'%s','allocatable':{'cpu':'2','memory':'4Gi'},"
                   "'conditions':[{'type':'Scheduled','status':'True','reason':'Scheduled',"
                   "'lastProbeTime':'%s','lastTransitionTime':'%s'},{'type':'Ready','status':"
                   "'True','reason':'Available','lastProbeTime':'%s','lastTransitionTime':'%s'}]}",
                   node, ts, ts, ts, ts);
    set_status(e, name, status);
}

static struct sched_resv_controller_stats stats(struct env *e)
{
    struct sched_resv_controller_stats s;

    sched_resv_controller_stats(e->ctl, &s);
    return s;
}

typedef bool cond_fn(struct env *e, const void *arg);

/* Polls cond with a deadline, re-queueing every reservation at each step (the clock moved). */
static void wait_until_at(struct env *e, cond_fn *cond, const void *arg, const char *what, int line)
{
    double end = kt_now() + DEADLINE_S;
    struct timespec step = {0, 20000000};

    strbuf_reset(&e->why);
    while (!cond(e, arg)) {
        if (kt_now() > end)
            fail_msg("line %d: timed out waiting for %s: %s", line, what, e->why.buf);
        sched_resv_controller_resync(e->ctl);
        (void)nanosleep(&step, NULL);
    }
}
#define wait_until(e, cond, arg) wait_until_at((e), (cond), (arg), #cond, __LINE__)

/* arg = {name, phase}. */
static bool phase_is(struct env *e, const void *arg)
{
    const char *const *want = arg;
    cJSON *o = get_resv(e, want[0]);
    bool ok = !strcmp(str_at(o, "status", "phase"), want[1]);

    strbuf_reset(&e->why);
    strbuf_addf(&e->why, "phase \"%s\"", str_at(o, "status", "phase"));
    cJSON_Delete(o);
    return ok;
}

static bool gone(struct env *e, const void *arg)
{
    cJSON *o = get_resv(e, arg);

    cJSON_Delete(o);
    return !o;
}

static bool syncs_at_least(struct env *e, const void *arg)
{
    return stats(e).syncs >= *(const unsigned long *)arg;
}

/* Lets the controller sync everything at least twice more, then checks the phase holds. */
static void assert_phase_stays(struct env *e, const char *name, const char *phase)
{
    const char *want[] = {name, phase};
    unsigned long n = stats(e).syncs + 2;

    wait_until(e, syncs_at_least, &n);
    if (!phase_is(e, want))
        fail_msg("%s: %s, want phase \"%s\"", name, e->why.buf, phase);
}

static void assert_phase_becomes(struct env *e, const char *name, const char *phase)
{
    const char *want[] = {name, phase};

    wait_until(e, phase_is, want);
}

/* The Ready condition of name is status/reason; returns its lastTransitionTime (static). */
static void assert_ready(struct env *e, const char *name, const char *status, const char *reason)
{
    cJSON *o = get_resv(e, name);
    const cJSON *cond;
    int n = 0;

    cJSON_ArrayForEach(cond, at(o, "status", "conditions"))
    {
        if (strcmp(str_at(cond, "type", NULL), "Ready"))
            continue;
        n++;
        assert_string_equal(str_at(cond, "status", NULL), status);
        assert_string_equal(str_at(cond, "reason", NULL), reason);
    }
    assert_int_equal(n, 1);
    cJSON_Delete(o);
}

static void install_crd(struct env *e)
{
    for (const struct api_kind *const *k = api_kinds(); *k; k++) {
        cJSON *crd = NULL;
        int rc;
        if (!(*k)->crd || strcmp((*k)->kind, "Reservation"))
            continue;
        assert_int_equal(api_crd_build(*k, &crd), 0);
        rc = kube_create(e->c, &res_crds, NULL, crd, NULL, NULL);
        cJSON_Delete(crd);
        assert_int_equal(rc, 0);
    }
}

static void add_node(struct env *e, const char *name)
{
    char json[512];

    (void)snprintf(json, sizeof(json),
                   "{'apiVersion':'v1','kind':'Node','metadata':{'name':'%s'},'status':{"
                   "'allocatable':{'cpu':'8','memory':'16Gi'}}}",
                   name);
    cJSON_Delete(create(e, &kube_res_nodes, NULL, json));
}

static int group_setup(void **state)
{
    struct env *e = xcalloc(1, sizeof(*e));

    strbuf_init(&e->why);
    e->srv = kt_server_new(0);
    e->c = kt_client(e->srv);
    install_crd(e);
    cJSON_Delete(create(e, &res_namespaces, NULL,
                        "{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'team'}}"));
    add_node(e, "n1");
    *state = e;
    return 0;
}

static int group_teardown(void **state)
{
    struct env *e = *state;

    kube_client_free(e->c);
    kt_server_free(e->srv);
    strbuf_release(&e->why);
    free(e);
    return 0;
}

/* Each test: the clock at real time, a fresh controller (GC only when the test asks). */
static int setup(void **state)
{
    struct env *e = *state;
    struct sched_resv_controller_opts o = {
        .gc_interval_s = 3600, .retry_base_ms = 5, .now = fake_now, .now_userdata = e};

    atomic_store(&e->offset_s, 0);
    assert_int_equal(sched_resv_controller_new(e->c, &o, &e->ctl), 0);
    assert_int_equal(sched_resv_controller_start(e->ctl), 0);
    return 0;
}

/* Stops the controller, then deletes what the test left. */
static int teardown(void **state)
{
    struct env *e = *state;
    cJSON *list = NULL;
    const cJSON *it;

    sched_resv_controller_free(e->ctl);
    e->ctl = NULL;
    assert_int_equal(kube_list(e->c, &res_resv, NULL, NULL, &list, NULL), 0);
    cJSON_ArrayForEach(it, at(list, "items", NULL))
    {
        (void)kube_delete(e->c, &res_resv, NULL, str_at(it, "metadata", "name"), NULL);
    }
    cJSON_Delete(list);
    list = NULL;
    assert_int_equal(kube_list(e->c, &kube_res_pods, "team", NULL, &list, NULL), 0);
    cJSON_ArrayForEach(it, at(list, "items", NULL))
    {
        (void)kube_delete(e->c, &kube_res_pods, "team", str_at(it, "metadata", "name"), NULL);
    }
    cJSON_Delete(list);
    return 0;
}

static void test_ttl_expiry(void **state)
{
    struct env *e = *state;
    cJSON *o;
    const cJSON *cond;
    char ts[RFC3339_STR_MAX];

    free(add_resv(e, "r-ttl", ",'ttl':'1h'"));
    make_available(e, "r-ttl", "n1");
    /* 1 h minus a minute after creation: not yet. */
    atomic_store(&e->offset_s, 3600 - 60);
    assert_phase_stays(e, "r-ttl", "Available");
    assert_int_equal(stats(e).expired, 0);
    /* past creation + ttl: Failed, Ready False/Expired with fresh times, Scheduled kept */
    atomic_store(&e->offset_s, 3600 + 5);
    assert_phase_becomes(e, "r-ttl", "Failed");
    assert_ready(e, "r-ttl", "False", "Expired");
    o = get_resv(e, "r-ttl");
    assert_int_equal(cJSON_GetArraySize(at(o, "status", "conditions")), 2);
    cond = cJSON_GetArrayItem(at(o, "status", "conditions"), 0);
    assert_string_equal(str_at(cond, "type", NULL), "Scheduled");
    assert_string_equal(str_at(cond, "reason", NULL), "Scheduled");
    cond = cJSON_GetArrayItem(at(o, "status", "conditions"), 1);
    /* the fake now is at least creation + 1 h: the transition time is the clock's, not real */
    ts_of(fake_now(e) - 600, ts);
    assert_true(strcmp(str_at(cond, "lastTransitionTime", NULL), ts) > 0);
    assert_string_equal(str_at(o, "status", "nodeName"), "n1");
    cJSON_Delete(o);
    assert_int_equal(stats(e).expired, 1);
}

static void test_expires(void **state)
{
    struct env *e = *state;
    char extra[128], ts[RFC3339_STR_MAX];

    /* expires in 2 min; ttl 24h as the CRD would default */
    ts_of(fake_now(e) + 120, ts);
    (void)snprintf(extra, sizeof(extra), ",'ttl':'24h','expires':'%s'", ts);
    free(add_resv(e, "r-exp", extra));
    make_available(e, "r-exp", "n1");
    atomic_store(&e->offset_s, 60);
    assert_phase_stays(e, "r-exp", "Available");
    atomic_store(&e->offset_s, 125);
    assert_phase_becomes(e, "r-exp", "Failed");
    assert_ready(e, "r-exp", "False", "Expired");
}

static void test_ttl_zero_never(void **state)
{
    struct env *e = *state;
    char extra[128], ts[RFC3339_STR_MAX];

    /* ttl 0 disables expiry, an expires already past included */
    ts_of(fake_now(e) - 60, ts);
    (void)snprintf(extra, sizeof(extra), ",'ttl':'0s','expires':'%s'", ts);
    free(add_resv(e, "r-zero", extra));
    make_available(e, "r-zero", "n1");
    atomic_store(&e->offset_s, 3650L * DAY);
    assert_phase_stays(e, "r-zero", "Available");
    assert_int_equal(stats(e).expired, 0);
}

static void test_no_node_never_expires(void **state)
{
    struct env *e = *state;

    free(add_resv(e, "r-pending", ",'ttl':'1s'"));
    atomic_store(&e->offset_s, 3600);
    /* pending (no status.nodeName) long past its ttl: left alone */
    assert_phase_stays(e, "r-pending", ""); /* no status written on create */
    assert_int_equal(stats(e).expired, 0);
    /* bound later: expired at the next sync */
    make_available(e, "r-pending", "n1");
    assert_phase_becomes(e, "r-pending", "Failed");
    assert_ready(e, "r-pending", "False", "Expired");
}

static void test_node_deleted(void **state)
{
    struct env *e = *state;

    add_node(e, "n-gone");
    free(add_resv(e, "r-node", ",'ttl':'24h'"));
    make_available(e, "r-node", "n-gone");
    assert_phase_stays(e, "r-node", "Available");
    assert_int_equal(kube_delete(e->c, &kube_res_nodes, NULL, "n-gone", NULL), 0);
    assert_phase_becomes(e, "r-node", "Failed");
    assert_ready(e, "r-node", "False", "Expired");
    /* young, but its node is gone: collected */
    assert_int_equal(sched_resv_controller_gc(e->ctl), 1);
    assert_true(gone(e, "r-node"));
}

/* A pod on node with the reservation-allocated annotation of uid (NULL: none). */
static char *add_pod(struct env *e, const char *name, const char *node, const char *uid,
                     const char *requests)
{
    char json[2048], ann[256] = "";
    cJSON *o;
    char *puid;

    if (uid)
        (void)snprintf(ann, sizeof(ann),
                       ",'annotations':{'" SCHED_RESV_ANN_ALLOCATED "':'{`name`:`x`,`uid`:`%s`}'}",
                       uid);
    (void)snprintf(json, sizeof(json),
                   "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'%s','namespace':'team',"
                   "'labels':{'app':'web'}%s},'spec':{'nodeName':'%s','containers':[{'name':'c',"
                   "'image':'i','resources':{'requests':{%s}}}]}}",
                   name, ann, node, requests);
    o = create(e, &kube_res_pods, "team", json);
    puid = xstrdup(str_at(o, "metadata", "uid"));
    cJSON_Delete(o);
    return puid;
}

/* arg = {name, owners JSON (' quoting), allocated JSON}. */
static bool owners_are(struct env *e, const void *arg)
{
    const char *const *want = arg;
    cJSON *o = get_resv(e, want[0]), *wo = js(want[1]), *wa = js(want[2]);
    const cJSON *ho = at(o, "status", "currentOwners"), *ha = at(o, "status", "allocated");
    bool ok = cJSON_Compare(ho ? ho : wo, wo, true) && cJSON_Compare(ha ? ha : wa, wa, true) &&
              (ho || !cJSON_GetArraySize(wo)) && (ha || !cJSON_GetArraySize(wa));
    struct strbuf sb = STRBUF_INIT;

    strbuf_reset(&e->why);
    (void)json_print(at(o, "status", NULL), &sb);
    strbuf_addstr(&e->why, sb.buf);
    strbuf_release(&sb);
    cJSON_Delete(o);
    cJSON_Delete(wo);
    cJSON_Delete(wa);
    return ok;
}

static void test_owners_and_allocated(void **state)
{
    struct env *e = *state;
    char *uid = add_resv(e, "r-multi", ",'ttl':'24h','allocateOnce':false");
    char *p1, *p4, owners[512];
    const char *want[3] = {"r-multi", owners, NULL};
    unsigned long writes;

    make_available(e, "r-multi", "n1");
    /* p1 is an owner; p2 took another reservation, p3 none: neither counts */
    p1 = add_pod(e, "p1", "n1", uid, "'cpu':'1','memory':'1Gi'");
    free(add_pod(e, "p2", "n1", "other-uid", "'cpu':'1'"));
    free(add_pod(e, "p3", "n1", NULL, "'cpu':'1'"));
    (void)snprintf(owners, sizeof(owners), "[{'namespace':'team','name':'p1','uid':'%s'}]", p1);
    want[2] = "{'cpu':'1','memory':'1Gi'}";
    wait_until(e, owners_are, want);
    /* p4 adds cpu 500m and a resource allocatable lacks (masked away) */
    p4 = add_pod(e, "p4", "n1", uid, "'cpu':'500m','example.com/foo':'1'");
    if (strcmp(p1, p4) < 0)
        (void)snprintf(owners, sizeof(owners),
                       "[{'namespace':'team','name':'p1','uid':'%s'},"
                       "{'namespace':'team','name':'p4','uid':'%s'}]",
                       p1, p4);
    else
        (void)snprintf(owners, sizeof(owners),
                       "[{'namespace':'team','name':'p4','uid':'%s'},"
                       "{'namespace':'team','name':'p1','uid':'%s'}]",
                       p4, p1);
    want[2] = "{'cpu':'1500m','memory':'1Gi'}";
    wait_until(e, owners_are, want);
    /* p1 leaves: memory drops out of allocated */
    assert_int_equal(kube_delete(e->c, &kube_res_pods, "team", "p1", NULL), 0);
    (void)snprintf(owners, sizeof(owners), "[{'namespace':'team','name':'p4','uid':'%s'}]", p4);
    want[2] = "{'cpu':'500m'}";
    wait_until(e, owners_are, want);
    /* nothing changes: nothing is written */
    writes = stats(e).owner_writes;
    assert_phase_stays(e, "r-multi", "Available");
    assert_int_equal(stats(e).owner_writes, writes);
    assert_int_equal(stats(e).succeeded, 0);
    free(uid);
    free(p1);
    free(p4);
}

static void test_allocate_once(void **state)
{
    struct env *e = *state;
    char *uid = add_resv(e, "r-once", ",'ttl':'24h'");
    char *p, owners[256];
    const char *want[3] = {"r-once", owners, "{'cpu':'2','memory':'4Gi'}"};

    make_available(e, "r-once", "n1");
    assert_phase_stays(e, "r-once", "Available");
    p = add_pod(e, "web-0", "n1", uid, "'cpu':'2','memory':'4Gi'");
    assert_phase_becomes(e, "r-once", "Succeeded");
    assert_ready(e, "r-once", "False", "Succeeded");
    (void)snprintf(owners, sizeof(owners), "[{'namespace':'team','name':'web-0','uid':'%s'}]", p);
    assert_true(owners_are(e, want));
    assert_int_equal(stats(e).succeeded, 1);
    free(uid);
    free(p);
}

static void test_gc(void **state)
{
    struct env *e = *state;
    char status[1024], ts[RFC3339_STR_MAX], old[RFC3339_STR_MAX];
    double t0 = fake_now(e);

    ts_of(t0, ts);
    ts_of(t0 - 10 * DAY, old);
    /* Expired at t0 (transition), Succeeded probed at t0 (its transition long before), and a
     * Failed one that did not expire, ten days old */
    free(add_resv(e, "gc-exp", ""));
    (void)snprintf(status, sizeof(status),
                   "{'phase':'Failed','nodeName':'n1','conditions':[{'type':'Ready','status':"
                   "'False','reason':'Expired','lastProbeTime':'%s','lastTransitionTime':'%s'}]}",
                   ts, ts);
    set_status(e, "gc-exp", status);
    free(add_resv(e, "gc-ok", ""));
    (void)snprintf(status, sizeof(status),
                   "{'phase':'Succeeded','nodeName':'n1','conditions':[{'type':'Ready','status':"
                   "'False','reason':'Succeeded','lastProbeTime':'%s','lastTransitionTime':'%s'}]}",
                   ts, old);
    set_status(e, "gc-ok", status);
    free(add_resv(e, "gc-failed", ""));
    (void)snprintf(status, sizeof(status),
                   "{'phase':'Failed','nodeName':'n1','conditions':[{'type':'Ready','status':"
                   "'False','reason':'Unschedulable','lastProbeTime':'%s','lastTransitionTime':"
                   "'%s'}]}",
                   old, old);
    set_status(e, "gc-failed", status);
    /* the controller's cache must hold all three before a pass means anything */
    {
        const char *w1[] = {"gc-exp", "Failed"}, *w2[] = {"gc-ok", "Succeeded"};
        wait_until(e, phase_is, w1);
        wait_until(e, phase_is, w2);
    }
    atomic_store(&e->offset_s, DAY - 30);
    {
        unsigned long n = stats(e).syncs + 3;
        wait_until(e, syncs_at_least, &n);
    }
    assert_int_equal(sched_resv_controller_gc(e->ctl), 0);
    assert_false(gone(e, "gc-exp"));
    assert_false(gone(e, "gc-ok"));
    atomic_store(&e->offset_s, DAY + 30);
    assert_int_equal(sched_resv_controller_gc(e->ctl), 2);
    assert_true(gone(e, "gc-exp"));
    assert_true(gone(e, "gc-ok"));
    assert_false(gone(e, "gc-failed"));
    atomic_store(&e->offset_s, 3650L * DAY);
    assert_int_equal(sched_resv_controller_gc(e->ctl), 0);
    assert_false(gone(e, "gc-failed"));
}

/* The GC thread runs by itself every gcIntervalSeconds. */
static void test_gc_thread(void **state)
{
    struct env *e = *state;
    struct sched_resv_controller *ctl = NULL;
    struct sched_resv_controller_opts o = {
        .gc_interval_s = 1, .gc_duration_s = 60, .now = fake_now, .now_userdata = e};
    char status[512], ts[RFC3339_STR_MAX];

    ts_of(fake_now(e), ts);
    free(add_resv(e, "gc-auto", ""));
    (void)snprintf(status, sizeof(status),
                   "{'phase':'Succeeded','nodeName':'n1','conditions':[{'type':'Ready','status':"
                   "'False','reason':'Succeeded','lastProbeTime':'%s','lastTransitionTime':'%s'}]}",
                   ts, ts);
    set_status(e, "gc-auto", status);
    atomic_store(&e->offset_s, 61);
    assert_int_equal(sched_resv_controller_new(e->c, &o, &ctl), 0);
    assert_int_equal(sched_resv_controller_start(ctl), 0);
    wait_until(e, gone, "gc-auto");
    sched_resv_controller_free(ctl);
}

static void test_args(void **unused)
{
    struct sched_resv_controller_opts o = {0};
    struct strbuf err = STRBUF_INIT;
    cJSON *a = js("{'gcDurationSeconds':3600,'gcIntervalSeconds':5,'controllerWorkers':2,"
                  "'disableGarbageCollection':true,'enablePreemption':true}");
    (void)unused;

    assert_int_equal(sched_resv_controller_args(a, &o, &err), 0);
    assert_int_equal(o.gc_duration_s, 3600);
    assert_int_equal(o.gc_interval_s, 5);
    assert_int_equal(o.workers, 2);
    assert_true(o.disable_gc);
    cJSON_Delete(a);
    memset(&o, 0, sizeof(o));
    assert_int_equal(sched_resv_controller_args(NULL, &o, &err), 0);
    assert_int_equal(o.gc_duration_s, 86400);
    assert_int_equal(o.gc_interval_s, 60);
    assert_int_equal(o.workers, 1);
    a = js("{'gcDurationSeconds':-1,'gcIntervalSeconds':'x','disableGarbageCollection':1}");
    assert_int_equal(sched_resv_controller_args(a, &o, &err), -EINVAL);
    assert_non_null(strstr(err.buf, "gcDurationSeconds: Invalid value: -1"));
    assert_non_null(strstr(err.buf, "gcIntervalSeconds: Invalid value: \"x\""));
    assert_non_null(strstr(err.buf, "disableGarbageCollection: Invalid value"));
    cJSON_Delete(a);
    strbuf_release(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_args),
        cmocka_unit_test_setup_teardown(test_ttl_expiry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expires, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ttl_zero_never, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_node_never_expires, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_deleted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_owners_and_allocated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_allocate_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gc_thread, setup, teardown),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
