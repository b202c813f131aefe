/*
 * Tests of src/sched/queue/queue.c against reference scheduler.md 3.1-3.6 (kube-scheduler 1.30,
 * QueueingHints off). A fake clock drives timestamps and backoff; fake PreEnqueue and
 * event-registration callbacks stand in for the profile:
 *
 *   plugin     id  PreEnqueue                          events registered (3.7)
 *   Fit         1  -                                   Pod Delete, Node Add|Update
 *   Affinity    2  -                                   Pod All, Node Add|Label|Taint
 *   Gates       3  rejects pods with schedulingGates   none (1.30)
 *   Cosched     4  rejects pods labelled gang=wait     none
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sched/queue/queue.h"
#include "sched/schedtest.h"

enum { FIT = 1, AFF = 2, GATES = 3, COSCHED = 4 };
#define BIT(id) (UINT64_C(1) << (id))

static double clk = 1000; /* the fake clock, seconds */

static double fake_now(void *userdata)
{
    (void)userdata;
    return clk;
}

static bool quota_full; /* pods labelled quota=q are gated by COSCHED while set */

static int fake_pre_enqueue(void *userdata, const struct sched_pod *pod, int *ret_plugin)
{
    const char *gang = sched_label(pod->labels, "gang");

    (void)userdata;
    if (quota_full && sched_label(pod->labels, "quota")) {
        *ret_plugin = COSCHED;
        return SCHED_UNRESOLVABLE;
    }
    if (pod->ngates) {
        *ret_plugin = GATES;
        return SCHED_UNRESOLVABLE;
    }
    if (gang && !strcmp(gang, "wait")) {
        *ret_plugin = COSCHED;
        return SCHED_UNSCHEDULABLE;
    }
    return SCHED_SUCCESS;
}

static const struct sched_event_reg fit_events[] = {
    {"Pod", SCHED_ACT_DELETE}, {"Node", SCHED_ACT_ADD | SCHED_ACT_UPDATE}, {NULL, 0}};
static const struct sched_event_reg aff_events[] = {
    {"Pod", SCHED_ACT_ALL},
    {"Node", SCHED_ACT_ADD | SCHED_ACT_UPDATE_NODE_LABEL | SCHED_ACT_UPDATE_NODE_TAINT},
    {NULL, 0}};
static const struct sched_event_reg no_events[] = {{NULL, 0}};
static const struct sched_event_reg *registered[] = {
    [FIT] = fit_events, [AFF] = aff_events, [GATES] = no_events, [COSCHED] = no_events};

static int interest_calls;

static bool fake_interested(void *userdata, uint64_t mask, const char *resource, unsigned actions)
{
    (void)userdata;
    interest_calls++;
    for (int id = FIT; id <= COSCHED; id++) {
        if (mask && !(mask & BIT(id)))
            continue;
        for (const struct sched_event_reg *r = registered[id]; r->resource; r++)
            if ((!strcmp(r->resource, "*") || !strcmp(r->resource, resource)) &&
                (r->actions & actions))
                return true;
    }
    return false;
}

static struct sched_queue_opts test_opts(void)
{
    struct sched_queue_opts o = {
        .now = fake_now,
        .pre_enqueue = fake_pre_enqueue,
        .interested = fake_interested,
        .gates_plugin_id = GATES,
    };
    return o;
}

static int setup(void **state)
{
    struct sched_queue_opts o = test_opts();

    clk = 1000;
    interest_calls = 0;
    *state = sched_queue_new(&o);
    return 0;
}

static int teardown(void **state)
{
    sched_queue_free(*state);
    return 0;
}

/* A pod "default/<name>" (uid "uid-<name>") with priority and extra metadata / spec members. */
static struct sched_pod *mk(const char *name, int prio, const char *meta, const char *spec)
{
    char buf[2048];

    (void)snprintf(buf, sizeof(buf),
                   "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"uid-%s\""
                   "%s%s},\"spec\":{\"priority\":%d%s%s}}",
                   name, name, meta ? "," : "", meta ? meta : "", prio, spec ? "," : "",
                   spec ? spec : "");
    return P(buf);
}

#define GATED_SPEC  "\"schedulingGates\":[{\"name\":\"example.com/g1\"}]"
#define GATED2_SPEC "\"schedulingGates\":[{\"name\":\"example.com/g1\"},{\"name\":\"g2\"}]"
#define GANG_META   "\"labels\":{\"gang\":\"wait\"}"
#define AFFINITY_SPEC                                                                              \
    "\"affinity\":{\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{"         \
    "\"labelSelector\":{\"matchLabels\":{\"app\":\"db\"}},\"topologyKey\":\"zone\"}]}}"

static const char *where(struct sched_queue *q, const char *name)
{
    char key[256];

    (void)snprintf(key, sizeof(key), "default/%s", name);
    return sched_queue_where(q, key);
}

#define assert_where(q, name, want)                                                                \
    do {                                                                                           \
        const char *w_ = where(q, name);                                                           \
        if ((want) == NULL)                                                                        \
            assert_null(w_);                                                                       \
        else {                                                                                     \
            assert_non_null(w_);                                                                   \
            assert_string_equal(w_, (want));                                                       \
        }                                                                                          \
    } while (0)

static struct sched_queue_stats stats(struct sched_queue *q)
{
    struct sched_queue_stats s;

    sched_queue_stats(q, &s);
    return s;
}

struct inc_query {
    const char *queue, *event;
    uint64_t n;
};

static void inc_cb(void *arg, const char *queue, const char *event, uint64_t n)
{
    struct inc_query *iq = arg;

    if (!strcmp(queue, iq->queue) && !strcmp(event, iq->event))
        iq->n += n;
}

/* queue_incoming_pods_total{queue, event}. */
static uint64_t incoming(struct sched_queue *q, const char *queue, const char *event)
{
    struct inc_query iq = {queue, event, 0};

    sched_queue_foreach_incoming(q, inc_cb, &iq);
    return iq.n;
}

/* Pops without waiting; the pod must be there. */
static struct sched_queued_pod *pop(struct sched_queue *q)
{
    struct sched_queued_pod *qp = NULL;

    assert_int_equal(sched_queue_pop(q, 0, &qp), 0);
    assert_non_null(qp);
    return qp;
}

/* Pops and finishes the attempt successfully; returns the pod's name (static storage). */
static const char *pop_done(struct sched_queue *q)
{
    static char name[64];
    struct sched_queued_pod *qp = pop(q);

    (void)snprintf(name, sizeof(name), "%s", qp->pod->name);
    sched_queue_done(q, qp->pod->key);
    sched_queued_pod_free(qp);
    return name;
}

/* Adds p (activeQ must be empty), pops it and puts it back rejected by the given plugins. */
static void to_pool(struct sched_queue *q, struct sched_pod *p, uint64_t unsched, uint64_t pending)
{
    struct sched_queued_pod *qp;

    sched_queue_add(q, p);
    qp = pop(q);
    assert_string_equal(qp->pod->key, p->key);
    qp->unschedulable_plugins = unsched;
    qp->pending_plugins = pending;
    assert_int_equal(sched_queue_add_unschedulable(q, qp), 0);
}

/* ---- 3.1 / 5.8: PrioritySort ---- */

static void test_priority_then_fifo(void **state)
{
    struct sched_queue *q = *state;
    struct sched_pod *c = mk("c", 1, NULL, NULL), *a = mk("a", 5, NULL, NULL),
                     *b = mk("b", 1, NULL, NULL), *d = mk("d", 5, NULL, NULL);
    struct sched_queued_pod *qp;

    sched_queue_add(q, c); /* t=1000 */
    clk = 1001;
    sched_queue_add(q, a);
    clk = 1002;
    sched_queue_add(q, b);
    clk = 1003;
    sched_queue_add(q, d);
    assert_int_equal(stats(q).active, 4);
    assert_int_equal(incoming(q, "active", "PodAdd"), 4);
    assert_int_equal(stats(q).incoming_active, 4);

    /* Higher priority first; within a priority the earlier timestamp. */
    qp = pop(q);
    assert_string_equal(qp->pod->name, "a");
    assert_int_equal(qp->attempts, 1);
    assert_int_equal(qp->cycle, 1);
    assert_true(qp->initial_attempt == 1001);
    assert_true(qp->timestamp == 1001);
    sched_queue_done(q, qp->pod->key);
    sched_queued_pod_free(qp);
    assert_string_equal(pop_done(q), "d");
    assert_string_equal(pop_done(q), "c");
    assert_string_equal(pop_done(q), "b");
    assert_int_equal(sched_queue_cycle(q), 4);
    assert_int_equal(stats(q).active, 0);
    sched_pod_unref(a);
    sched_pod_unref(b);
    sched_pod_unref(c);
    sched_pod_unref(d);
}

/* A QueueSort plugin other than PrioritySort: lower priority first. */
static bool low_first(void *userdata, const struct sched_pod *a, double ta,
                      const struct sched_pod *b, double tb)
{
    (void)userdata;
    return a->priority < b->priority || (a->priority == b->priority && ta < tb);
}

static void test_custom_less(void **state)
{
    struct sched_queue_opts o = test_opts();
    struct sched_queue *q;
    struct sched_pod *pods[4];
    const int prio[4] = {7, 3, 9, 1};
    const char *names[4] = {"p7", "p3", "p9", "p1"};

    (void)state;
    o.less = low_first;
    q = sched_queue_new(&o);
    for (int i = 0; i < 4; i++) {
        pods[i] = mk(names[i], prio[i], NULL, NULL);
        sched_queue_add(q, pods[i]);
        clk++;
    }
    assert_string_equal(pop_done(q), "p1");
    assert_string_equal(pop_done(q), "p3");
    assert_string_equal(pop_done(q), "p7");
    assert_string_equal(pop_done(q), "p9");
    for (int i = 0; i < 4; i++)
        sched_pod_unref(pods[i]);
    sched_queue_free(q);
}

/* ---- 3.6: gated pods ---- */

static void test_gated_never_popped(void **state)
{
    struct sched_queue *q = *state;
    struct sched_pod *g = mk("g", 100, NULL, GATED_SPEC);
    struct sched_queued_pod *qp = NULL;
    struct sched_queue_stats s;

    sched_queue_add(q, g);
    assert_where(q, "g", "gated");
    s = stats(q);
    assert_int_equal(s.gated, 1);
    assert_int_equal(s.unschedulable, 0);
    assert_int_equal(s.active, 0);
    assert_int_equal(s.backoff, 0);
    assert_int_equal(s.pre_enqueue_runs, 1);
    assert_int_equal(s.incoming_active, 0);
    assert_int_equal(s.incoming_gated, 1);
    assert_int_equal(sched_queue_pop(q, 0, &qp), -ETIMEDOUT);
    assert_null(qp);

    /* Nothing but its own update frees it: no backoff flush, no timeout, no event. */
    clk += 3600;
    sched_queue_flush_backoff(q);
    sched_queue_flush_unschedulable(q);
    sched_queue_move_all(q, "AssignedPodDelete", "Pod", SCHED_ACT_DELETE, NULL, NULL);
    sched_queue_move_all(q, "NodeAdd", "Node", SCHED_ACT_ADD, NULL, NULL);
    sched_queue_move_all(q, "UnschedulableTimeout", "*", SCHED_ACT_ALL, NULL, NULL);
    sched_queue_activate(q, (const char *const[]){"default/none"}, 1);
    assert_where(q, "g", "gated");
    assert_int_equal(stats(q).pre_enqueue_runs, 1);
    assert_int_equal(sched_queue_pop(q, 0, &qp), -ETIMEDOUT);
    sched_pod_unref(g);
}

static void test_gated_update(void **state)
{
    struct sched_queue *q = *state;
    struct sched_pod *g0 = mk("g", 0, "\"resourceVersion\":\"1\"", GATED2_SPEC);
    struct sched_pod *g1 = mk("g", 0, "\"resourceVersion\":\"2\"", GATED_SPEC);
    struct sched_pod *g1b = mk("g", 0, "\"resourceVersion\":\"3\"", GATED_SPEC);
    struct sched_pod *g2 = mk("g", 0, "\"resourceVersion\":\"4\"", NULL);
    struct sched_queued_pod *qp;

    sched_queue_add(q, g0); /* t=1000 */
    assert_int_equal(stats(q).pre_enqueue_runs, 1);

    /* One gate removed, one left: one lookup and one PreEnqueue run; still gated. */
    clk = 1005;
    sched_queue_update(q, g0, g1);
    assert_int_equal(stats(q).pre_enqueue_runs, 2);
    assert_where(q, "g", "gated");
    assert_int_equal(stats(q).gated, 1);
    assert_int_equal(stats(q).incoming_gated, 1); /* not counted again */

    /* Only the resourceVersion moved: not an update that matters, no PreEnqueue. */
    sched_queue_update(q, g1, g1b);
    assert_int_equal(stats(q).pre_enqueue_runs, 2);
    assert_where(q, "g", "gated");

    /* Last gate removed: PreEnqueue passes and the pod goes to activeQ now. */
    clk = 1010;
    sched_queue_update(q, g1b, g2);
    assert_int_equal(stats(q).pre_enqueue_runs, 3);
    assert_where(q, "g", "active");
    assert_int_equal(stats(q).gated, 0);
    assert_int_equal(incoming(q, "active", "PodUpdate"), 1);
    qp = pop(q);
    assert_ptr_equal(qp->pod, g2);
    assert_true(qp->initial_attempt == 1010); /* first entry into activeQ */
    assert_int_equal(qp->attempts, 1);
    sched_queue_done(q, qp->pod->key);
    sched_queued_pod_free(qp);
    sched_pod_unref(g0);
    sched_pod_unref(g1);
    sched_pod_unref(g1b);
    sched_pod_unref(g2);
}

/* ---- 3.2: backoff ---- */

/* Puts the pod back with no rejecting plugin (straight to backoffQ) attempt after attempt and
 * checks it leaves backoffQ exactly `want[k]` seconds after it was put back. */
static void check_backoff(struct sched_queue *q, const double *want, int n)
{
    struct sched_pod *p = mk("b", 0, NULL, NULL);

    sched_queue_add(q, p);
    for (int k = 0; k < n; k++) {
        struct sched_queued_pod *qp = pop(q);
        double t0 = clk;

        assert_int_equal(qp->attempts, k + 1);
        assert_int_equal(sched_queue_add_unschedulable(q, qp), 0);
        assert_where(q, "b", "backoff");
        clk = t0 + want[k] - 0.25;
        sched_queue_flush_backoff(q);
        assert_where(q, "b", "backoff");
        clk = t0 + want[k];
        sched_queue_flush_backoff(q);
        assert_where(q, "b", "active");
        clk += 100;
    }
    assert_int_equal(incoming(q, "backoff", "ScheduleAttemptFailure"), (uint64_t)n);
    assert_int_equal(incoming(q, "active", "BackoffComplete"), (uint64_t)n);
    sched_pod_unref(p);
}

static void test_backoff_timings(void **state)
{
    static const double defaults[] = {1, 2, 4, 8, 10, 10, 10};
    static const double custom[] = {0.5, 1, 2, 3, 3};
    struct sched_queue_opts o = test_opts();
    struct sched_queue *q;

    check_backoff(*state, defaults, 7);
    o.initial_backoff_s = 0.5;
    o.max_backoff_s = 3;
    q = sched_queue_new(&o);
    check_backoff(q, custom, 5);
    sched_queue_free(q);
}

/* The backoffQ is ordered by expiry, not by insertion. */
static void test_backoff_order(void **state)
{
    struct sched_queue *q = *state;
    struct sched_pod *x = mk("x", 0, NULL, NULL), *y = mk("y", 0, NULL, NULL);
    struct sched_queued_pod *qp;

    /* x: third attempt (4 s) put back at 1000; y: first attempt (1 s) put back at 1001. */
    sched_queue_add(q, x);
    for (int i = 0; i < 2; i++) {
        qp = pop(q);
        assert_int_equal(sched_queue_add_unschedulable(q, qp), 0);
        clk += 20;
        sched_queue_flush_backoff(q);
    }
    clk = 2000;
    qp = pop(q);
    assert_int_equal(qp->attempts, 3);
    assert_int_equal(sched_queue_add_unschedulable(q, qp), 0); /* expires 2004 */
    clk = 2001;
    sched_queue_add(q, y);
    qp = pop(q);
    assert_int_equal(sched_queue_add_unschedulable(q, qp), 0); /* expires 2002 */
    clk = 2002;
    sched_queue_flush_backoff(q);
    assert_where(q, "y", "active");
    assert_where(q, "x", "backoff");
    clk = 2004;
    sched_queue_flush_backoff(q);
    assert_where(q, "x", "active");
    sched_pod_unref(x);
    sched_pod_unref(y);
}

/* ---- 3.4: putting a failed pod back ---- */

static void test_put_back(void **state)
{
    struct sched_queue *q = *state;
    struct sched_pod *a = mk("a", 0, NULL, NULL), *b = mk("b", 0, NULL, NULL),
                     *c = mk("c", 0, NULL, NULL);
    struct sched_queued_pod *qp;

    /* A move event while a is being scheduled: backoffQ, not the pool. */
    sched_queue_add(q, a);
    qp = pop(q);
    qp->unschedulable_plugins = BIT(FIT);
    sched_queue_move_all(q, "NodeAdd", "Node", SCHED_ACT_ADD, NULL, NULL);
    clk = 1007;
    assert_int_equal(sched_queue_add_unschedulable(q, qp), 0);
    assert_where(q, "a", "backoff");
    assert_int_equal(incoming(q, "backoff", "ScheduleAttemptFailure"), 1);

    /* No event meanwhile: the pool. */
    sched_queue_add(q, b);
    qp = pop(q);
    qp->unschedulable_plugins = BIT(FIT);
    assert_int_equal(sched_queue_add_unschedulable(q, qp), 0);
    assert_where(q, "b", "unschedulable");
    assert_int_equal(incoming(q, "unschedulable", "ScheduleAttemptFailure"), 1);
    assert_int_equal(stats(q).unschedulable, 1);

    /* An event no plugin registered for is dropped at once: it does not count as a move. */
    sched_queue_add(q, c);
    qp = pop(q);
    qp->unschedulable_plugins = BIT(FIT);
    sched_queue_move_all(q, "PersistentVolumeAdd", "PersistentVolume", SCHED_ACT_ADD, NULL, NULL);
    assert_int_equal(sched_queue_add_unschedulable(q, qp), 0);
    assert_where(q, "c", "unschedulable");
    sched_pod_unref(a);
    sched_pod_unref(b);
    sched_pod_unref(c);
}

/* The timestamp is when the pod was put back; InitialAttemptTimestamp never moves. */
static void test_put_back_timestamp(void **state)
{
    struct sched_queue *q = *state;
    struct sched_pod *a = mk("a", 0, NULL, NULL);
    struct sched_queued_pod *qp;

    sched_queue_add(q, a);
    qp = pop(q);
    clk = 1042;
    assert_int_equal(sched_queue_add_unschedulable(q, qp), 0); /* no rejector: backoffQ */
    clk = 1042.999;
    sched_queue_flush_backoff(q);
    assert_where(q, "a", "backoff");
    clk = 1043;
    sched_queue_flush_backoff(q);
    qp = pop(q);
    assert_true(qp->timestamp == 1042);
    assert_true(qp->initial_attempt == 1000);
    assert_int_equal(qp->attempts, 2);
    assert_int_equal(qp->cycle, 2);
    sched_queue_done(q, qp->pod->key);
    sched_queued_pod_free(qp);
    sched_pod_unref(a);
}

/* ---- 3.5: moving pods on events ---- */

static bool reject_all(void *arg, const struct sched_pod *pod)
{
    (void)arg;
    (void)pod;
    return false;
}

static int match_calls;

static bool match_all(void *arg, const struct sched_pod *pod)
{
    (void)pod;
    match_calls++;
    return *(bool *)arg;
}

static void test_move_interest(void **state)
{
    struct sched_queue *q = *state;
    struct sched_pod *f = mk("f", 0, NULL, NULL), *af = mk("af", 0, NULL, NULL),
                     *pe = mk("pe", 0, NULL, NULL), *g = mk("g", 0, NULL, GATED_SPEC),
                     *cs = mk("cs", 0, GANG_META, NULL);
    struct sched_queued_pod *qp;
    uint64_t runs;

    to_pool(q, f, BIT(FIT), 0);
    to_pool(q, af, BIT(AFF), 0);
    to_pool(q, pe, 0, BIT(FIT));
    sched_queue_add(q, g);
    sched_queue_add(q, cs);
    assert_where(q, "g", "gated");
    assert_where(q, "cs", "gated");
    assert_int_equal(stats(q).unschedulable, 3);
    assert_int_equal(stats(q).gated, 2);
    runs = stats(q).pre_enqueue_runs;

    /* Node allocatable change at once (all still backing off): Fit registered for it, Affinity
     * not. Fit's unschedulable pod waits out its backoff; its Pending pod goes to activeQ now
     * (queueImmediately). The gated pods stay, without a PreEnqueue run. */
    sched_queue_move_all(q, "NodeAllocatableChange", "Node", SCHED_ACT_UPDATE_NODE_ALLOCATABLE,
                         NULL, NULL);
    assert_where(q, "f", "backoff");
    assert_where(q, "af", "unschedulable");
    assert_where(q, "pe", "active");
    assert_where(q, "g", "gated");
    assert_where(q, "cs", "gated");
    assert_int_equal(stats(q).pre_enqueue_runs, runs + 1); /* pe's */
    assert_int_equal(incoming(q, "backoff", "NodeAllocatableChange"), 1);
    assert_int_equal(incoming(q, "active", "NodeAllocatableChange"), 1);

    /* A pre-check that refuses every pod moves none. */
    clk += 5;
    sched_queue_move_all(q, "AssignedPodDelete", "Pod", SCHED_ACT_DELETE, reject_all, NULL);
    assert_where(q, "af", "unschedulable");

    /* An assigned pod deleted after the backoff: Affinity registered Pod All. */
    sched_queue_move_all(q, "AssignedPodDelete", "Pod", SCHED_ACT_DELETE, NULL, NULL);
    assert_where(q, "af", "active");
    assert_where(q, "g", "gated");
    assert_where(q, "cs", "gated");
    assert_int_equal(stats(q).pre_enqueue_runs, runs + 2);
    assert_int_equal(incoming(q, "active", "AssignedPodDelete"), 1);

    /* The 5-minute flush is a wildcard event: the pod gated by another PreEnqueue plugin is
     * re-evaluated (and stays gated), SchedulingGates' is not. */
    clk += 301;
    sched_queue_flush_unschedulable(q);
    assert_int_equal(stats(q).pre_enqueue_runs, runs + 3);
    assert_where(q, "cs", "gated");
    assert_where(q, "g", "gated");
    assert_int_equal(incoming(q, "gated", "UnschedulableTimeout"), 0);

    qp = pop(q);
    sched_queue_done(q, qp->pod->key);
    sched_queued_pod_free(qp);
    qp = pop(q);
    sched_queue_done(q, qp->pod->key);
    sched_queued_pod_free(qp);
    sched_pod_unref(f);
    sched_pod_unref(af);
    sched_pod_unref(pe);
    sched_pod_unref(g);
    sched_pod_unref(cs);
}

/* Without registrations every plugin is interested in every event; with them, a plugin that
 * registered none (Coscheduling) never requeues the pods it rejected. */
static void test_move_registrations(void **state)
{
    struct sched_queue_opts o = test_opts();
    struct sched_queue *q;
    struct sched_pod *u = mk("u", 0, NULL, NULL), *v = mk("v", 0, NULL, NULL);

    (void)state;
    o.interested = NULL; /* every plugin interested in every event */
    q = sched_queue_new(&o);
    to_pool(q, u, BIT(COSCHED), 0);
    clk += 2;
    sched_queue_move_all(q, "PersistentVolumeAdd", "PersistentVolume", SCHED_ACT_ADD, NULL, NULL);
    assert_where(q, "u", "active");
    sched_queue_free(q);

    q = *state;
    to_pool(q, v, BIT(COSCHED), 0); /* Coscheduling registered nothing */
    clk += 2;
    sched_queue_move_all(q, "NodeAdd", "Node", SCHED_ACT_ADD, NULL, NULL);
    assert_where(q, "v", "unschedulable");
    sched_pod_unref(u);
    sched_pod_unref(v);
}

static void test_assigned_pod_added(void **state)
{
    struct sched_queue *q = *state;
    struct sched_pod *withaff = mk("withaff", 0, NULL, AFFINITY_SPEC),
                     *noaff = mk("noaff", 0, NULL, NULL),
                     *fitaff = mk("fitaff", 0, NULL, AFFINITY_SPEC);
    bool yes = true, no = false;

    to_pool(q, withaff, BIT(AFF), 0);
    to_pool(q, noaff, BIT(AFF), 0);
    to_pool(q, fitaff, BIT(FIT), 0); /* Fit registered Pod Delete only */
    clk += 2;

    match_calls = 0;
    sched_queue_assigned_pod_added(q, "AssignedPodAdd", match_all, &no);
    assert_int_equal(match_calls, 2); /* only pods with required pod affinity are asked */
    assert_where(q, "withaff", "unschedulable");

    sched_queue_assigned_pod_added(q, "AssignedPodAdd", match_all, &yes);
    assert_where(q, "withaff", "active");
    assert_where(q, "noaff", "unschedulable");
    assert_where(q, "fitaff", "unschedulable");
    assert_int_equal(incoming(q, "active", "AssignedPodAdd"), 1);
    sched_pod_unref(withaff);
    sched_pod_unref(noaff);
    sched_pod_unref(fitaff);
}

static void test_flush_unschedulable(void **state)
{
    struct sched_queue *q = *state;
    struct sched_pod *u = mk("u", 0, NULL, NULL), *g = mk("g", 0, NULL, GATED_SPEC);
    struct sched_queue_opts o = test_opts();
    struct sched_queue *q2;

    to_pool(q, u, BIT(COSCHED), 0); /* put back at 1000 */
    sched_queue_add(q, g);
    clk = 1300;
    sched_queue_flush_unschedulable(q);
    assert_where(q, "u", "unschedulable"); /* exactly 5 min: not "more than" */
    clk = 1300.5;
    sched_queue_flush_unschedulable(q);
    assert_where(q, "u", "active");
    assert_where(q, "g", "gated");
    assert_int_equal(incoming(q, "active", "UnschedulableTimeout"), 1);

    /* A pool pod still backing off when it times out goes to backoffQ. */
    o.max_unschedulable_s = 0.5;
    q2 = sched_queue_new(&o);
    clk = 5000;
    to_pool(q2, u, BIT(COSCHED), 0);
    clk = 5000.75;
    sched_queue_flush_unschedulable(q2);
    assert_where(q2, "u", "backoff");
    assert_int_equal(incoming(q2, "backoff", "UnschedulableTimeout"), 1);
    sched_queue_free(q2);
    sched_pod_unref(u);
    sched_pod_unref(g);
}

static void test_activate(void **state)
{
    struct sched_queue *q = *state;
    struct sched_pod *u = mk("u", 0, NULL, NULL), *b = mk("b", 0, NULL, NULL),
                     *g = mk("g", 0, NULL, GATED_SPEC), *a = mk("a", 0, NULL, NULL);
    const char *keys[] = {"default/u", "default/b", "default/g", "default/a", "default/none"};
    uint64_t runs;

    to_pool(q, u, BIT(COSCHED), 0);
    to_pool(q, b, 0, 0); /* backoffQ */
    sched_queue_add(q, g);
    sched_queue_add(q, a);
    assert_where(q, "b", "backoff");
    runs = stats(q).pre_enqueue_runs;
    sched_queue_activate(q, keys, 5);
    assert_where(q, "u", "active");
    assert_where(q, "b", "active");
    assert_where(q, "g", "gated"); /* PreEnqueue ran again and still rejects it */
    assert_where(q, "a", "active");
    assert_int_equal(stats(q).pre_enqueue_runs, runs + 3);
    assert_int_equal(incoming(q, "active", "ForceActivate"), 2);
    sched_pod_unref(u);
    sched_pod_unref(b);
    sched_pod_unref(g);
    sched_pod_unref(a);
}

/*
 * recheck_plugins (koord, for ElasticQuota): a pod refused in its cycle by a plugin that also
 * gates in PreEnqueue goes back through PreEnqueue and, refused there, waits gated (no backoff,
 * not moved by events) until activated; refused by another plugin, or passing PreEnqueue now,
 * it goes to the pool or backoffQ as before.
 */
static void test_recheck_gates_after_refusal(void **state)
{
    struct sched_queue *q = *state;
    struct sched_queue_opts o = test_opts();
    struct sched_pod *a = mk("a", 0, "\"labels\":{\"quota\":\"q\"}", NULL);
    struct sched_pod *b = mk("b", 0, "\"labels\":{\"quota\":\"q\"}", NULL);
    struct sched_pod *c = mk("c", 0, "\"labels\":{\"quota\":\"q\"}", NULL);
    const char *keys[] = {"default/a"};

    sched_queue_free(q);
    o.recheck_plugins = BIT(COSCHED);
    q = *state = sched_queue_new(&o);
    quota_full = false;
    sched_queue_add(q, a);
    sched_queue_add(q, b);
    sched_queue_add(q, c);
    assert_int_equal(stats(q).gated, 0);
    {
        struct sched_queued_pod *qa = pop(q), *qb = pop(q), *qc = pop(q);
        qa->unschedulable_plugins = BIT(COSCHED);
        qb->unschedulable_plugins = BIT(FIT);
        qc->unschedulable_plugins = BIT(COSCHED);
        quota_full = true;
        assert_int_equal(sched_queue_add_unschedulable(q, qa), 0);
        assert_int_equal(sched_queue_add_unschedulable(q, qb), 0);
        quota_full = false;
        assert_int_equal(sched_queue_add_unschedulable(q, qc), 0);
    }
    assert_where(q, "a", "gated");
    assert_where(q, "b", "unschedulable");
    assert_where(q, "c", "unschedulable");
    assert_int_equal(stats(q).gated, 1);
    assert_int_equal(incoming(q, "gated", "ScheduleAttemptFailure"), 1);
    /* Not moved by a pod delete (COSCHED registered no events), nor backing off. */
    sched_queue_move_all(q, "AssignedPodDelete", "Pod", SCHED_ACT_DELETE, NULL, NULL);
    assert_where(q, "a", "gated");
    sched_queue_activate(q, keys, 1);
    assert_where(q, "a", "active");
    sched_pod_unref(a);
    sched_pod_unref(b);
    sched_pod_unref(c);
}

/* ---- 3.3: update and delete ---- */

static void test_update_resorts(void **state)
{
    struct sched_queue *q = *state;
    struct sched_pod *a = mk("a", 1, NULL, NULL), *a2 = mk("a", 30, NULL, NULL),
                     *b = mk("b", 20, NULL, NULL), *c = mk("c", 10, NULL, NULL),
                     *c2 = mk("c", 5, NULL, NULL);
    struct sched_queued_pod *qp;

    sched_queue_add(q, a);
    sched_queue_add(q, b);
    sched_queue_add(q, c);
    sched_queue_update(q, a, a2); /* 1 -> 30: first now */
    sched_queue_update(q, c, c2);
    qp = pop(q);
    assert_ptr_equal(qp->pod, a2);
    assert_true(qp->timestamp == 1000); /* an update keeps the timestamp */
    sched_queue_done(q, qp->pod->key);
    sched_queued_pod_free(qp);
    assert_string_equal(pop_done(q), "b");
    assert_string_equal(pop_done(q), "c");
    assert_int_equal(incoming(q, "active", "PodUpdate"), 0);
    sched_pod_unref(a);
    sched_pod_unref(a2);
    sched_pod_unref(b);
    sched_pod_unref(c);
    sched_pod_unref(c2);
}

static void test_update_pool(void **state)
{
    struct sched_queue *q = *state;
    struct sched_pod *u = mk("u", 0, "\"resourceVersion\":\"1\"", NULL),
                     *u_status = mk("u", 0, "\"resourceVersion\":\"2\"",
                                    "\"nodeName\":\"\"},\"status\":{\"phase\":\"Pending\""),
                     *u_label =
                         mk("u", 0, "\"resourceVersion\":\"3\",\"labels\":{\"x\":\"1\"}", NULL),
                     *u_tol = mk("u", 0, "\"resourceVersion\":\"4\",\"labels\":{\"x\":\"1\"}",
                                 "\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\"}]"),
                     *b = mk("b", 0, NULL, NULL),
                     *b2 = mk("b", 0, "\"labels\":{\"y\":\"2\"}", NULL),
                     *n = mk("n", 0, NULL, NULL);
    struct sched_queued_pod *qp;

    to_pool(q, u, BIT(FIT), 0); /* put back at 1000, backing off until 1001 */

    /* Status only: the new version is stored, the pod stays; also when the caller has no old
     * object (the scheduler's informer handler): the stored pod is compared. */
    sched_queue_update(q, u, u_status);
    assert_where(q, "u", "unschedulable");
    sched_queue_update(q, NULL, u_status);
    assert_where(q, "u", "unschedulable");

    /* Labels changed while backing off: backoffQ. */
    sched_queue_update(q, u_status, u_label);
    assert_where(q, "u", "backoff");
    assert_int_equal(incoming(q, "backoff", "PodUpdate"), 1);
    sched_queue_update(q, u_label, u_tol); /* in backoffQ: replaced in place */
    assert_where(q, "u", "backoff");
    clk = 1001;
    sched_queue_flush_backoff(q);
    qp = pop(q);
    assert_ptr_equal(qp->pod, u_tol);
    sched_queue_done(q, qp->pod->key);
    sched_queued_pod_free(qp);

    /* Changed after the backoff: activeQ. */
    to_pool(q, b, BIT(FIT), 0);
    clk += 5;
    sched_queue_update(q, b, b2);
    assert_where(q, "b", "active");
    assert_int_equal(incoming(q, "active", "PodUpdate"), 1);
    assert_string_equal(pop_done(q), "b");

    /* Not queued: an update adds it. */
    sched_queue_update(q, NULL, n);
    assert_where(q, "n", "active");
    assert_int_equal(incoming(q, "active", "PodUpdate"), 2);
    sched_pod_unref(u);
    sched_pod_unref(u_status);
    sched_pod_unref(u_label);
    sched_pod_unref(u_tol);
    sched_pod_unref(b);
    sched_pod_unref(b2);
    sched_pod_unref(n);
}

static void test_delete_everywhere(void **state)
{
    struct sched_queue *q = *state;
    struct sched_pod *a = mk("a", 0, NULL, NULL), *b = mk("b", 0, NULL, NULL),
                     *u = mk("u", 0, NULL, NULL), *g = mk("g", 0, NULL, GATED_SPEC);
    struct sched_queue_stats s;

    to_pool(q, b, 0, 0);
    to_pool(q, u, BIT(FIT), 0);
    sched_queue_add(q, g);
    sched_queue_add(q, a);
    s = stats(q);
    assert_int_equal(s.active, 1);
    assert_int_equal(s.backoff, 1);
    assert_int_equal(s.unschedulable, 1);
    assert_int_equal(s.gated, 1);
    sched_queue_delete(q, a);
    sched_queue_delete(q, b);
    sched_queue_delete(q, u);
    sched_queue_delete(q, g);
    sched_queue_delete(q, g); /* twice: nothing */
    assert_where(q, "a", NULL);
    assert_where(q, "b", NULL);
    assert_where(q, "u", NULL);
    assert_where(q, "g", NULL);
    s = stats(q);
    assert_int_equal(s.active + s.backoff + s.unschedulable + s.gated, 0);
    clk += 1000;
    sched_queue_flush_backoff(q);
    sched_queue_flush_unschedulable(q);
    assert_int_equal(stats(q).active, 0);
    sched_pod_unref(a);
    sched_pod_unref(b);
    sched_pod_unref(u);
    sched_pod_unref(g);
}

/* ---- in flight ---- */

static void test_inflight(void **state)
{
    struct sched_queue *q = *state;
    struct sched_pod *a = mk("a", 0, NULL, NULL), *b = mk("b", 0, NULL, NULL),
                     *b2 = mk("b", 0, "\"labels\":{\"v\":\"2\"}", NULL),
                     *c = mk("c", 0, NULL, NULL), *d = mk("d", 0, NULL, NULL),
                     *d2 = mk("d", 0, "\"labels\":{\"gen\":\"2\"}", NULL);
    struct sched_queued_pod *qp, *old;
    struct sched_queue_stats s;

    /* Deleted while being scheduled: dropped when put back. */
    sched_queue_add(q, a);
    qp = pop(q);
    qp->unschedulable_plugins = BIT(FIT);
    sched_queue_delete(q, a);
    assert_int_equal(sched_queue_add_unschedulable(q, qp), 0);
    assert_where(q, "a", NULL);
    s = stats(q);
    assert_int_equal(s.active + s.backoff + s.unschedulable + s.gated, 0);

    /* Updated while being scheduled: not queued twice; the newest version goes back. */
    sched_queue_add(q, b);
    qp = pop(q);
    qp->unschedulable_plugins = BIT(FIT);
    sched_queue_update(q, b, b2);
    assert_where(q, "b", NULL);
    assert_int_equal(sched_queue_add_unschedulable(q, qp), 0);
    assert_where(q, "b", "unschedulable");
    sched_queue_activate(q, (const char *const[]){"default/b"}, 1);
    qp = pop(q);
    assert_ptr_equal(qp->pod, b2);
    assert_int_equal(qp->attempts, 2);
    sched_queue_done(q, qp->pod->key);
    sched_queued_pod_free(qp);

    /* Already queued again when put back: -EEXIST, record freed. */
    sched_queue_add(q, c);
    qp = pop(q);
    sched_queue_done(q, qp->pod->key);
    sched_queue_add(q, c);
    assert_int_equal(sched_queue_add_unschedulable(q, qp), -EEXIST);
    assert_where(q, "c", "active");
    assert_string_equal(pop_done(q), "c");

    /* Deleted and recreated under the same name while in flight: the old record is dropped,
     * the new pod is scheduled on its own. */
    sched_queue_add(q, d);
    old = pop(q);
    sched_queue_delete(q, d);
    sched_queue_add(q, d2);
    assert_where(q, "d", "active");
    qp = pop(q);
    assert_ptr_equal(qp->pod, d2);
    assert_int_equal(sched_queue_add_unschedulable(q, old), 0); /* dropped */
    assert_where(q, "d", NULL);
    qp->unschedulable_plugins = BIT(FIT);
    assert_int_equal(sched_queue_add_unschedulable(q, qp), 0);
    assert_where(q, "d", "unschedulable");
    sched_pod_unref(a);
    sched_pod_unref(b);
    sched_pod_unref(b2);
    sched_pod_unref(c);
    sched_pod_unref(d);
    sched_pod_unref(d2);
}

/* ---- pop ---- */

struct popper {
    struct sched_queue *q;
    double timeout;
    int r;
    struct sched_queued_pod *qp;
};

static void *pop_thread(void *arg)
{
    struct popper *p = arg;

    p->r = sched_queue_pop(p->q, p->timeout, &p->qp);
    return NULL;
}

static double mono(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_pop_blocking(void **state)
{
    struct sched_queue *q = *state;
    struct sched_pod *a = mk("a", 0, NULL, NULL);
    struct sched_queued_pod *qp = NULL;
    struct popper p = {q, -1, 1, NULL};
    pthread_t t;
    double t0 = mono();

    /* Timeout on an empty queue. */
    assert_int_equal(sched_queue_pop(q, 0.05, &qp), -ETIMEDOUT);
    assert_true(mono() - t0 >= 0.05);
    assert_null(qp);

    /* A blocked pop wakes on add. */
    assert_int_equal(pthread_create(&t, NULL, pop_thread, &p), 0);
    usleep(20000);
    sched_queue_add(q, a);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(p.r, 0);
    assert_ptr_equal(p.qp->pod, a);
    sched_queue_done(q, a->key);
    sched_queued_pod_free(p.qp);

    /* ... and on close, as does every later pop. */
    p.r = 1;
    p.qp = NULL;
    assert_int_equal(pthread_create(&t, NULL, pop_thread, &p), 0);
    usleep(20000);
    sched_queue_close(q);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(p.r, -ECANCELED);
    sched_queue_add(q, a);
    assert_int_equal(sched_queue_pop(q, 0, &qp), -ECANCELED);
    sched_pod_unref(a);
}

/* The flush thread on the real clock: a 10 ms backoff ends within its 1 s period. */
static void test_run_thread(void **state)
{
    struct sched_queue_opts o = {
        .initial_backoff_s = 0.01, .max_backoff_s = 0.01, .gates_plugin_id = -1};
    struct sched_queue *q = sched_queue_new(&o);
    struct sched_pod *a = mk("a", 0, NULL, NULL);
    struct sched_queued_pod *qp;
    double t0;

    (void)state;
    sched_queue_add(q, a);
    qp = pop(q);
    assert_int_equal(sched_queue_add_unschedulable(q, qp), 0);
    assert_where(q, "a", "backoff");
    assert_int_equal(sched_queue_run(q), 0);
    assert_int_equal(sched_queue_run(q), -EALREADY);
    t0 = mono();
    assert_int_equal(sched_queue_pop(q, 5, &qp), 0);
    assert_true(mono() - t0 < 2.5);
    sched_queue_done(q, qp->pod->key);
    sched_queued_pod_free(qp);
    sched_queue_free(q); /* stops the thread */
    sched_pod_unref(a);
}

/* ---- nominator ---- */

static void test_nominator(void **state)
{
    struct sched_queue *q = *state;
    struct sched_pod *n = mk("n", 0, NULL,
                             "\"nodeName\":\"\"},\"status\":{\"nominatedNodeName\":\"n1\""),
                     *x = mk("x", 5, NULL, NULL),
                     *x2 = mk("x", 5, "\"labels\":{\"v\":\"2\"}", NULL),
                     *bound = mk("bound", 0, NULL, "\"nodeName\":\"n9\""), **v;
    size_t cnt;

    sched_queue_add(q, n); /* status.nominatedNodeName */
    cnt = sched_queue_nominated(q, "n1", &v);
    assert_int_equal(cnt, 1);
    assert_ptr_equal(v[0], n);
    sched_pods_free(v, cnt);

    sched_queue_add(q, x);
    sched_queue_nominate(q, x, "n1");
    cnt = sched_queue_nominated(q, "n1", &v);
    assert_int_equal(cnt, 2);
    assert_ptr_equal(v[1], x);
    sched_pods_free(v, cnt);

    /* Renominated elsewhere: moves. */
    sched_queue_nominate(q, x, "n2");
    assert_int_equal(sched_queue_nominated(q, "n1", &v), 1);
    sched_pods_free(v, 1);

    /* An update whose status says nothing keeps the in-memory nomination, with the new pod. */
    sched_queue_update(q, x, x2);
    cnt = sched_queue_nominated(q, "n2", &v);
    assert_int_equal(cnt, 1);
    assert_ptr_equal(v[0], x2);
    sched_pods_free(v, cnt);

    /* Cleared. */
    sched_queue_nominate(q, x2, NULL);
    assert_int_equal(sched_queue_nominated(q, "n2", &v), 0);
    assert_null(v);

    /* A bound pod is not nominated; deletion removes the nomination. */
    sched_queue_nominate(q, bound, "n3");
    assert_int_equal(sched_queue_nominated(q, "n3", &v), 0);
    sched_queue_delete(q, n);
    assert_int_equal(sched_queue_nominated(q, "n1", &v), 0);
    assert_int_equal(sched_queue_nominated(q, "nowhere", &v), 0);

    sched_queue_nominate(q, x2, "n4"); /* freed with the queue */
    sched_pod_unref(n);
    sched_pod_unref(x);
    sched_pod_unref(x2);
    sched_pod_unref(bound);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_priority_then_fifo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_custom_less, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gated_never_popped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gated_update, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backoff_timings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backoff_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_put_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_put_back_timestamp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_move_interest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_move_registrations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_assigned_pod_added, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flush_unschedulable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_activate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recheck_gates_after_refusal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update_resorts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update_pool, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_everywhere, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inflight, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pop_blocking, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_thread, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nominator, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
