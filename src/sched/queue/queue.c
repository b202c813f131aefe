/*
 * The scheduling queue of queue.h: kube-scheduler 1.30's PriorityQueue
 * (pkg/scheduler/internal/queue/scheduling_queue.go) with SchedulerQueueingHints off, reference
 * scheduler.md 3.1-3.6.
 *
 * A queued record lives in exactly one place: activeQ (a heap in QueueSort order), backoffQ (a
 * heap by backoff expiry) or the pool (a map holding the unschedulable and the gated records);
 * `all` maps every queued key to its record so that update, delete, activate and where are one
 * hash probe whatever structure holds the pod. Between pop and add_unschedulable / done a
 * record belongs to the caller and the queue keeps only an in-flight note (`inflight`): the
 * newest version of the pod seen meanwhile and whether it was deleted.
 *
 * QueueingHints off means every hint function answers Queue, so isPodWorthRequeuing reduces to
 * "did a rejecting plugin register for the event": opts.interested answers that. A Queue from a
 * Pending plugin still requeues at once (queueImmediately), one from an Unschedulable plugin
 * after the backoff.
 *
 * One mutex guards everything. pop waits on `cond` (CLOCK_MONOTONIC, so a wall-clock step
 * neither shortens nor stretches a timeout); the flush thread waits on `run_cond` for its next
 * period or for sched_queue_free().
 */
#include "sched/queue/queue.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "base/hmap.h"
#include "base/strbuf.h"
#include "codec/patch.h"
#include "sched/framework/framework.h"

/* Where a record is (sched_queued_pod.where). Gated records are in the pool with gated set. */
enum where {
    WHERE_NONE = 0, /* in flight, or being moved */
    WHERE_ACTIVE,
    WHERE_BACKOFF,
    WHERE_POOL,
};

/* A heap of records; each record keeps its index in heap_index for O(log n) removal. */
struct heap {
    struct sched_queued_pod **v;
    size_t n, cap;
};

/* What the queue remembers of a popped pod until it comes back or is done. */
struct inflight {
    const struct sched_queued_pod *qp; /* identity only: never dereferenced */
    struct sched_pod *latest;          /* newest version seen while in flight, or NULL */
    bool deleted;
};

/* The nominator (nominator in scheduling_queue.go): one entry per nominated pod. */
struct nomination {
    struct sched_pod *pod;
    char *node;
};

struct nom_list {
    struct nomination **v; /* in nomination order */
    size_t n, cap;
};

/* One queue_incoming_pods_total series. */
struct incoming {
    uint64_t n;
    const char *queue; /* static */
    char event[];
};

struct sched_queue {
    struct sched_queue_opts opts; /* defaults resolved */
    pthread_mutex_t mu;
    pthread_cond_t cond;     /* activeQ gained pods, or closed: pop waits here */
    pthread_cond_t run_cond; /* the flush thread's timer; signalled on free */
    pthread_cond_t idle;     /* a pop left after close: free waits for the last */
    bool closed, stopping, running;
    unsigned waiters; /* pops inside the wait */
    pthread_t thread;

    struct heap active, backoff;
    struct hmap pool;     /* key -> record, unschedulable and gated */
    struct hmap all;      /* key -> record, every queued record */
    struct hmap inflight; /* key -> struct inflight */
    size_t ngated;        /* gated records in the pool */

    struct hmap nom_by_key;  /* pod key -> struct nomination */
    struct hmap nom_by_node; /* node -> struct nom_list */
    /* nom_by_key.n, readable without the lock: Filter asks for every node, and most cycles
     * have no nominated pod at all, so they skip the lock and the copy. */
    _Atomic size_t nominations;

    int64_t cycle;              /* schedulingCycle */
    int64_t move_request_cycle; /* moveRequestCycle: -1 until the first move */

    struct hmap incoming; /* "queue\x1fevent" -> struct incoming */
    uint64_t in_active, in_backoff, in_unschedulable, in_gated;
    uint64_t pre_enqueue_runs;
};

/* ---- time ---- */

static double mono_now(void)
{
    struct timespec ts;

    CHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The absolute CLOCK_MONOTONIC time `seconds` from now, for pthread_cond_timedwait. */
static void deadline(double seconds, struct timespec *ret)
{
    double t = mono_now() + (seconds > 0 ? seconds : 0);

    ret->tv_sec = (time_t)t;
    ret->tv_nsec = (long)((t - (double)ret->tv_sec) * 1e9);
    if (ret->tv_nsec >= 1000000000L) {
        ret->tv_sec++;
        ret->tv_nsec -= 1000000000L;
    }
}

static void cond_init_monotonic(pthread_cond_t *c)
{
    pthread_condattr_t a;

    CHECK(pthread_condattr_init(&a) == 0);
    CHECK(pthread_condattr_setclock(&a, CLOCK_MONOTONIC) == 0);
    CHECK(pthread_cond_init(c, &a) == 0);
    (void)pthread_condattr_destroy(&a);
}

static double now(const struct sched_queue *q)
{
    return q->opts.now ? q->opts.now(q->opts.userdata) : mono_now();
}

static uint64_t plugin_bit(int id)
{
    return id >= 0 && id < 64 ? UINT64_C(1) << id : 0;
}

/* ---- ordering ---- */

/* calculateBackoffDuration: initial, doubled per attempt after the first, capped at max. */
static double backoff_duration(const struct sched_queue *q, const struct sched_queued_pod *qp)
{
    double d = q->opts.initial_backoff_s;

    for (int i = 1; i < qp->attempts; i++) {
        if (d > q->opts.max_backoff_s - d)
            return q->opts.max_backoff_s;
        d += d;
    }
    return d;
}

static double backoff_expiry(const struct sched_queue *q, const struct sched_queued_pod *qp)
{
    return qp->timestamp + backoff_duration(q, qp);
}

/* isPodBackingoff: gated pods never back off. */
static bool is_backing_off(const struct sched_queue *q, const struct sched_queued_pod *qp, double t)
{
    return !qp->gated && backoff_expiry(q, qp) > t;
}

static bool before(const struct sched_queue *q, const struct heap *h,
                   const struct sched_queued_pod *a, const struct sched_queued_pod *b)
{
    if (h == &q->backoff)
        return backoff_expiry(q, a) < backoff_expiry(q, b);
    if (q->opts.less)
        return q->opts.less(q->opts.userdata, a->pod, a->timestamp, b->pod, b->timestamp);
    /* PrioritySort (plugins/queuesort/priority_sort.go). */
    return a->pod->priority > b->pod->priority ||
           (a->pod->priority == b->pod->priority && a->timestamp < b->timestamp);
}

static void heap_set(struct heap *h, size_t i, struct sched_queued_pod *qp)
{
    h->v[i] = qp;
    qp->heap_index = i;
}

static void heap_up(const struct sched_queue *q, struct heap *h, size_t i)
{
    struct sched_queued_pod *x = h->v[i];

    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before(q, h, x, h->v[parent]))
            break;
        heap_set(h, i, h->v[parent]);
        i = parent;
    }
    heap_set(h, i, x);
}

static void heap_down(const struct sched_queue *q, struct heap *h, size_t i)
{
    struct sched_queued_pod *x = h->v[i];

    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && before(q, h, h->v[c + 1], h->v[c]))
            c++;
        if (!before(q, h, h->v[c], x))
            break;
        heap_set(h, i, h->v[c]);
        i = c;
    }
    heap_set(h, i, x);
}

static void heap_push(const struct sched_queue *q, struct heap *h, struct sched_queued_pod *qp)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 64;
        /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
        h->v = xrealloc(h->v, h->cap * sizeof(*h->v));
    }
    h->v[h->n++] = qp;
    heap_up(q, h, h->n - 1);
}

/* Restores the order after the element at i changed. */
static void heap_fix(const struct sched_queue *q, struct heap *h, size_t i)
{
    struct sched_queued_pod *x = h->v[i];

    heap_up(q, h, i);
    heap_down(q, h, x->heap_index);
}

static void heap_remove(const struct sched_queue *q, struct heap *h, size_t i)
{
    CHECK(i < h->n);
    h->n--;
    if (i == h->n)
        return;
    heap_set(h, i, h->v[h->n]);
    heap_fix(q, h, i);
}

/* ---- metrics ---- */

/* queue_incoming_pods_total{queue, event} += 1. */
static void count(struct sched_queue *q, const char *queue, const char *event)
{
    struct strbuf key = STRBUF_INIT;
    struct hmap_entry *e;
    struct incoming *in;

    strbuf_addf(&key, "%s\x1f%s", queue, event);
    e = hmap_upsert(&q->incoming, key.buf);
    if (!e->value) {
        size_t len = strlen(event);
        in = xmalloc(sizeof(*in) + len + 1);
        in->n = 0;
        in->queue = queue;
        memcpy(in->event, event, len + 1);
        e->value = in;
    }
    in = e->value;
    in->n++;
    strbuf_release(&key);
    if (!strcmp(queue, "active"))
        q->in_active++;
    else if (!strcmp(queue, "backoff"))
        q->in_backoff++;
    else if (!strcmp(queue, "unschedulable"))
        q->in_unschedulable++;
    else
        q->in_gated++;
}

/* ---- records ---- */

static struct sched_queued_pod *record_new(struct sched_queue *q, struct sched_pod *pod)
{
    struct sched_queued_pod *qp = xcalloc(1, sizeof(*qp));

    qp->pod = sched_pod_ref(pod);
    qp->timestamp = now(q);
    return qp;
}

void sched_queued_pod_free(struct sched_queued_pod *qp)
{
    if (!qp)
        return;
    sched_pod_unref(qp->pod);
    free(qp);
}

static void record_set_pod(struct sched_queued_pod *qp, struct sched_pod *pod)
{
    struct sched_pod *old = qp->pod;

    qp->pod = sched_pod_ref(pod);
    sched_pod_unref(old);
}

/* Takes a queued record out of whatever structure holds it (and out of `all`). */
static void detach(struct sched_queue *q, struct sched_queued_pod *qp)
{
    switch (qp->where) {
    case WHERE_ACTIVE:
        heap_remove(q, &q->active, qp->heap_index);
        break;
    case WHERE_BACKOFF:
        heap_remove(q, &q->backoff, qp->heap_index);
        break;
    case WHERE_POOL:
        (void)hmap_del(&q->pool, qp->pod->key);
        if (qp->gated)
            q->ngated--;
        break;
    default:
        return;
    }
    (void)hmap_del(&q->all, qp->pod->key);
    qp->where = WHERE_NONE;
}

static void put_pool(struct sched_queue *q, struct sched_queued_pod *qp)
{
    (void)hmap_put(&q->pool, qp->pod->key, qp);
    (void)hmap_put(&q->all, qp->pod->key, qp);
    qp->where = WHERE_POOL;
    if (qp->gated)
        q->ngated++;
}

static void put_backoff(struct sched_queue *q, struct sched_queued_pod *qp)
{
    heap_push(q, &q->backoff, qp);
    (void)hmap_put(&q->all, qp->pod->key, qp);
    qp->where = WHERE_BACKOFF;
}

/*
 * addToActiveQ for a detached record: PreEnqueue, then activeQ (InitialAttemptTimestamp set on
 * the first entry), or the pool marked gated by the rejecting plugin, whose bit also joins the
 * rejectors (runPreEnqueuePlugins inserts it into UnschedulablePlugins, so events its plugin
 * registered for re-evaluate the pod). Counts the move under event; a record that was gated and
 * stays gated is not counted again. Returns whether the record went to activeQ.
 */
static bool enqueue_active(struct sched_queue *q, struct sched_queued_pod *qp, const char *event)
{
    bool was_gated = qp->gated;
    int code = SCHED_SUCCESS, plugin = -1;

    if (q->opts.pre_enqueue) {
        q->pre_enqueue_runs++;
        code = q->opts.pre_enqueue(q->opts.userdata, qp->pod, &plugin);
    }
    if (code != SCHED_SUCCESS) {
        uint64_t bit = plugin_bit(plugin);
        qp->gated = true;
        qp->gating_plugin = bit;
        qp->unschedulable_plugins |= bit;
        put_pool(q, qp);
        if (!was_gated)
            count(q, "gated", event);
        return false;
    }
    qp->gated = false;
    qp->gating_plugin = 0;
    if (qp->initial_attempt == 0)
        qp->initial_attempt = now(q);
    heap_push(q, &q->active, qp);
    (void)hmap_put(&q->all, qp->pod->key, qp);
    qp->where = WHERE_ACTIVE;
    count(q, "active", event);
    (void)pthread_cond_broadcast(&q->cond);
    return true;
}

/* ---- nominator ---- */

static void nom_delete(struct sched_queue *q, const char *key)
{
    struct nomination *n = hmap_del(&q->nom_by_key, key);
    struct nom_list *l;

    if (!n)
        return;
    l = hmap_get(&q->nom_by_node, n->node);
    CHECK(l);
    for (size_t i = 0; i < l->n; i++) {
        if (l->v[i] != n)
            continue;
        /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
        memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof(*l->v));
        l->n--;
        break;
    }
    if (!l->n) {
        (void)hmap_del(&q->nom_by_node, n->node);
        free(l->v);
        free(l);
    }
    sched_pod_unref(n->pod);
    free(n->node);
    free(n);
    atomic_store_explicit(&q->nominations, q->nom_by_key.n, memory_order_relaxed);
}

/*
 * addNominatedPodUnlocked: replaces the pod's nomination by node (none when node is empty). A
 * pod already bound, or deleted while in flight, is not nominated (upstream asks the pod
 * lister).
 */
static void nom_add(struct sched_queue *q, struct sched_pod *pod, const char *node)
{
    struct inflight *fl = hmap_get(&q->inflight, pod->key);
    struct nomination *n;
    struct hmap_entry *e;
    struct nom_list *l;

    nom_delete(q, pod->key);
    if (!node || !*node || pod->node_name[0] || (fl && fl->deleted))
        return;
    n = xmalloc(sizeof(*n));
    n->pod = sched_pod_ref(pod);
    n->node = xstrdup(node);
    (void)hmap_put(&q->nom_by_key, pod->key, n);
    e = hmap_upsert(&q->nom_by_node, node);
    if (!e->value)
        e->value = xcalloc(1, sizeof(struct nom_list));
    l = e->value;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 4;
        /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
        l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
    }
    l->v[l->n++] = n;
    atomic_store_explicit(&q->nominations, q->nom_by_key.n, memory_order_relaxed);
}

/* updateNominatedPodUnlocked: an update without nominatedNodeName on either side keeps the
 * nomination made in memory (the preemptor's status patch may not have arrived yet). */
static void nom_update(struct sched_queue *q, const struct sched_pod *oldp, struct sched_pod *newp)
{
    const char *old_key = oldp ? oldp->key : newp->key;
    char *keep = NULL;

    if ((!oldp || !oldp->nominated_node[0]) && !newp->nominated_node[0]) {
        struct nomination *n = hmap_get(&q->nom_by_key, old_key);
        if (n)
            keep = xstrdup(n->node);
    }
    nom_delete(q, old_key);
    nom_add(q, newp, keep ? keep : newp->nominated_node);
    free(keep);
}

void sched_queue_nominate(struct sched_queue *q, struct sched_pod *pod, const char *node)
{
    CHECK(pthread_mutex_lock(&q->mu) == 0);
    nom_add(q, pod, node);
    CHECK(pthread_mutex_unlock(&q->mu) == 0);
}

bool sched_queue_has_nominations(struct sched_queue *q)
{
    return atomic_load_explicit(&q->nominations, memory_order_relaxed) != 0;
}

size_t sched_queue_nominated(struct sched_queue *q, const char *node, struct sched_pod ***ret)
{
    struct nom_list *l;
    size_t n;

    *ret = NULL;
    if (!atomic_load_explicit(&q->nominations, memory_order_relaxed))
        return 0;
    CHECK(pthread_mutex_lock(&q->mu) == 0);
    l = node ? hmap_get(&q->nom_by_node, node) : NULL;
    n = l ? l->n : 0;
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    *ret = n ? xcalloc(n, sizeof(**ret)) : NULL;
    for (size_t i = 0; i < n; i++)
        (*ret)[i] = sched_pod_ref(l->v[i]->pod);
    CHECK(pthread_mutex_unlock(&q->mu) == 0);
    return n;
}

/* ---- lifecycle ---- */

struct sched_queue *sched_queue_new(const struct sched_queue_opts *opts)
{
    struct sched_queue *q = xcalloc(1, sizeof(*q));

    if (opts)
        q->opts = *opts;
    else
        q->opts.gates_plugin_id = -1;
    if (q->opts.initial_backoff_s <= 0)
        q->opts.initial_backoff_s = 1;
    if (q->opts.max_backoff_s <= 0)
        q->opts.max_backoff_s = 10;
    if (q->opts.max_unschedulable_s <= 0)
        q->opts.max_unschedulable_s = 300;
    CHECK(pthread_mutex_init(&q->mu, NULL) == 0);
    cond_init_monotonic(&q->cond);
    cond_init_monotonic(&q->run_cond);
    cond_init_monotonic(&q->idle);
    hmap_init(&q->pool);
    hmap_init(&q->all);
    hmap_init(&q->inflight);
    hmap_init(&q->nom_by_key);
    hmap_init(&q->nom_by_node);
    hmap_init(&q->incoming);
    q->move_request_cycle = -1;
    return q;
}

static void inflight_free(struct inflight *fl)
{
    if (!fl)
        return;
    sched_pod_unref(fl->latest);
    free(fl);
}

void sched_queue_close(struct sched_queue *q)
{
    CHECK(pthread_mutex_lock(&q->mu) == 0);
    q->closed = true;
    (void)pthread_cond_broadcast(&q->cond);
    CHECK(pthread_mutex_unlock(&q->mu) == 0);
}

void sched_queue_free(struct sched_queue *q)
{
    struct hmap_entry *e;
    bool running;
    size_t it;

    if (!q)
        return;
    CHECK(pthread_mutex_lock(&q->mu) == 0);
    q->closed = true;
    q->stopping = true;
    (void)pthread_cond_broadcast(&q->cond);
    (void)pthread_cond_broadcast(&q->run_cond);
    while (q->waiters)
        CHECK(pthread_cond_wait(&q->idle, &q->mu) == 0);
    running = q->running;
    CHECK(pthread_mutex_unlock(&q->mu) == 0);
    if (running)
        CHECK(pthread_join(q->thread, NULL) == 0);

    for (e = hmap_first(&q->all, &it); e; e = hmap_next(&q->all, e, &it))
        sched_queued_pod_free(e->value);
    for (e = hmap_first(&q->inflight, &it); e; e = hmap_next(&q->inflight, e, &it))
        inflight_free(e->value);
    for (e = hmap_first(&q->nom_by_key, &it); e; e = hmap_next(&q->nom_by_key, e, &it)) {
        struct nomination *n = e->value;
        sched_pod_unref(n->pod);
        free(n->node);
        free(n);
    }
    for (e = hmap_first(&q->nom_by_node, &it); e; e = hmap_next(&q->nom_by_node, e, &it)) {
        struct nom_list *l = e->value;
        free(l->v);
        free(l);
    }
    for (e = hmap_first(&q->incoming, &it); e; e = hmap_next(&q->incoming, e, &it))
        free(e->value);
    free(q->active.v);
    free(q->backoff.v);
    hmap_release(&q->pool);
    hmap_release(&q->all);
    hmap_release(&q->inflight);
    hmap_release(&q->nom_by_key);
    hmap_release(&q->nom_by_node);
    hmap_release(&q->incoming);
    (void)pthread_cond_destroy(&q->cond);
    (void)pthread_cond_destroy(&q->run_cond);
    (void)pthread_cond_destroy(&q->idle);
    (void)pthread_mutex_destroy(&q->mu);
    free(q);
}

/* ---- add / update / delete ---- */

/* Same key but a different object than a queued record: the old record is replaced (upstream
 * builds a fresh QueuedPodInfo on Add). */
void sched_queue_add(struct sched_queue *q, struct sched_pod *pod)
{
    struct sched_queued_pod *qp;
    struct inflight *fl;

    CHECK(pthread_mutex_lock(&q->mu) == 0);
    qp = hmap_get(&q->all, pod->key);
    if (qp) {
        detach(q, qp);
        sched_queued_pod_free(qp);
    } else if ((fl = hmap_get(&q->inflight, pod->key)) && !fl->deleted) {
        /* Being scheduled: it comes back (as this version) if the attempt fails. */
        sched_pod_unref(fl->latest);
        fl->latest = sched_pod_ref(pod);
        goto out;
    }
    qp = record_new(q, pod);
    if (enqueue_active(q, qp, "PodAdd"))
        nom_add(q, pod, pod->nominated_node);
out:
    CHECK(pthread_mutex_unlock(&q->mu) == 0);
}

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool same_labels(const cJSON *a, const cJSON *b)
{
    return (!a && !b) || (a && b && json_value_equal(a, b));
}

static bool same_sel_reqs(const struct sched_sel_req *a, size_t na, const struct sched_sel_req *b,
                          size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++) {
        if (strcmp(a[i].key, b[i].key) || a[i].op != b[i].op || a[i].num != b[i].num ||
            a[i].nvalues != b[i].nvalues)
            return false;
        for (size_t j = 0; j < a[i].nvalues; j++)
            if (strcmp(a[i].values[j], b[i].values[j]))
                return false;
    }
    return true;
}

static bool same_tolerations(const struct sched_pod *a, const struct sched_pod *b)
{
    if (a->ntolerations != b->ntolerations)
        return false;
    for (size_t i = 0; i < a->ntolerations; i++) {
        const struct sched_toleration *x = &a->tolerations[i], *y = &b->tolerations[i];
        if (strcmp(x->key, y->key) || strcmp(x->value, y->value) || x->exists != y->exists ||
            x->effect != y->effect)
            return false;
    }
    return true;
}

/*
 * isPodUpdated: whether an update matters to scheduling. Upstream deep-compares the pods after
 * clearing resourceVersion, generation, managedFields, finalizers and status. The decoded pod
 * keeps no raw object, so we compare what it decoded: labels, scheduling gates, requests,
 * priority and preemption policy, scheduler name, deletion, tolerations and node selector
 * (entry by entry), and the shape of node affinity, pod (anti-)affinity, spread constraints and
 * host ports (their counts), and the decoding error. The nominated node, node name and
 * everything in status do not count (the scheduler's own PodScheduled=False patch must not send
 * a pod straight back to activeQ). An update that changes only annotations, images or the
 * contents of an affinity term of the same shape counts as unchanged: such a pod still gets
 * its new version stored and retries on the next event or the 5-minute flush.
 */
static bool pod_changed(const struct sched_pod *a, const struct sched_pod *b)
{
    if (!a)
        return true;
    if (a == b)
        return false;
    return !same_labels(a->labels, b->labels) || a->ngates != b->ngates ||
           strcmp(a->gates, b->gates) || memcmp(&a->req, &b->req, sizeof(a->req)) ||
           a->priority != b->priority || a->preempt_never != b->preempt_never ||
           strcmp(a->scheduler_name, b->scheduler_name) || a->deleting != b->deleting ||
           !same_tolerations(a, b) ||
           !same_sel_reqs(a->node_selector, a->nnode_selector, b->node_selector,
                          b->nnode_selector) ||
           !a->required_node != !b->required_node ||
           (a->required_node && a->required_node->nterms != b->required_node->nterms) ||
           a->npreferred_node != b->npreferred_node || a->naffinity != b->naffinity ||
           a->nanti_affinity != b->nanti_affinity || a->npref_affinity != b->npref_affinity ||
           a->npref_anti_affinity != b->npref_anti_affinity || a->nspread != b->nspread ||
           a->nports != b->nports || !same_str(a->invalid, b->invalid);
}

void sched_queue_update(struct sched_queue *q, struct sched_pod *oldp, struct sched_pod *newp)
{
    struct sched_queued_pod *qp;
    struct inflight *fl;

    CHECK(pthread_mutex_lock(&q->mu) == 0);
    qp = hmap_get(&q->all, newp->key);
    if (qp) {
        /* Without the informer's old object, the stored one is what the update changes. */
        bool changed = pod_changed(oldp ? oldp : qp->pod, newp);

        record_set_pod(qp, newp);
        nom_update(q, oldp, newp);
        switch (qp->where) {
        case WHERE_ACTIVE:
            heap_fix(q, &q->active, qp->heap_index);
            break;
        case WHERE_BACKOFF: /* the expiry does not depend on the pod */
            break;
        default:
            if (!changed)
                break;
            detach(q, qp);
            if (is_backing_off(q, qp, now(q))) {
                put_backoff(q, qp);
                count(q, "backoff", "PodUpdate");
            } else {
                (void)enqueue_active(q, qp, "PodUpdate");
            }
            break;
        }
    } else if ((fl = hmap_get(&q->inflight, newp->key)) && !fl->deleted) {
        sched_pod_unref(fl->latest);
        fl->latest = sched_pod_ref(newp);
        nom_update(q, oldp, newp);
    } else {
        qp = record_new(q, newp);
        if (enqueue_active(q, qp, "PodUpdate"))
            nom_update(q, oldp, newp);
    }
    CHECK(pthread_mutex_unlock(&q->mu) == 0);
}

void sched_queue_delete(struct sched_queue *q, const struct sched_pod *pod)
{
    struct sched_queued_pod *qp;
    struct inflight *fl;

    CHECK(pthread_mutex_lock(&q->mu) == 0);
    nom_delete(q, pod->key);
    qp = hmap_get(&q->all, pod->key);
    if (qp) {
        detach(q, qp);
        sched_queued_pod_free(qp);
    }
    fl = hmap_get(&q->inflight, pod->key);
    if (fl) {
        fl->deleted = true;
        fl->latest = sched_pod_unref(fl->latest);
    }
    CHECK(pthread_mutex_unlock(&q->mu) == 0);
}

/* ---- pop and putting back ---- */

int sched_queue_pop(struct sched_queue *q, double timeout_s, struct sched_queued_pod **ret)
{
    struct sched_queued_pod *qp;
    struct inflight *fl;
    struct timespec ts;
    int r = 0;

    CHECK(pthread_mutex_lock(&q->mu) == 0);
    if (timeout_s >= 0)
        deadline(timeout_s, &ts);
    q->waiters++;
    while (!q->closed && !q->active.n) {
        if (timeout_s < 0) {
            CHECK(pthread_cond_wait(&q->cond, &q->mu) == 0);
            continue;
        }
        r = pthread_cond_timedwait(&q->cond, &q->mu, &ts);
        if (r == ETIMEDOUT)
            break;
        CHECK(r == 0);
    }
    q->waiters--;
    if (q->closed) {
        if (!q->waiters)
            (void)pthread_cond_broadcast(&q->idle);
        r = -ECANCELED;
        goto out;
    }
    if (!q->active.n) {
        r = -ETIMEDOUT;
        goto out;
    }
    r = 0;
    qp = q->active.v[0];
    detach(q, qp);
    qp->attempts++;
    qp->cycle = ++q->cycle;
    qp->unschedulable_plugins = 0;
    qp->pending_plugins = 0;
    qp->gating_plugin = 0;
    fl = hmap_get(&q->inflight, qp->pod->key);
    if (!fl) {
        fl = xcalloc(1, sizeof(*fl));
        (void)hmap_put(&q->inflight, qp->pod->key, fl);
    }
    /* A previous incarnation still in flight was deleted; this one supersedes its note. */
    fl->qp = qp;
    fl->latest = sched_pod_unref(fl->latest);
    fl->deleted = false;
    *ret = qp;
out:
    CHECK(pthread_mutex_unlock(&q->mu) == 0);
    return r;
}

void sched_queue_done(struct sched_queue *q, const char *key)
{
    CHECK(pthread_mutex_lock(&q->mu) == 0);
    inflight_free(hmap_del(&q->inflight, key));
    CHECK(pthread_mutex_unlock(&q->mu) == 0);
}

/*
 * AddUnschedulableIfNotPresent with QueueingHints off. A record whose in-flight note names
 * another record was superseded by a recreated pod of the same key (so its own pod is gone);
 * one without a note (done already called) goes back as it is.
 */
int sched_queue_add_unschedulable(struct sched_queue *q, struct sched_queued_pod *qp)
{
    struct inflight *fl;
    bool drop = false;
    int r = 0;

    CHECK(qp->where == WHERE_NONE);
    CHECK(pthread_mutex_lock(&q->mu) == 0);
    fl = hmap_get(&q->inflight, qp->pod->key);
    if (fl && fl->qp == qp) {
        fl = hmap_del(&q->inflight, qp->pod->key);
        drop = fl->deleted;
        if (fl->latest) {
            sched_pod_unref(qp->pod);
            qp->pod = fl->latest;
            fl->latest = NULL;
        }
        inflight_free(fl);
    } else if (fl) {
        drop = true;
    }
    if (drop) {
        sched_queued_pod_free(qp);
        goto out;
    }
    if (hmap_get(&q->all, qp->pod->key)) {
        sched_queued_pod_free(qp);
        r = -EEXIST;
        goto out;
    }
    qp->timestamp = now(q);
    qp->gated = false;
    qp->gating_plugin = 0;
    if ((qp->unschedulable_plugins & q->opts.recheck_plugins) && q->opts.pre_enqueue) {
        int plugin = -1;

        q->pre_enqueue_runs++;
        if (q->opts.pre_enqueue(q->opts.userdata, qp->pod, &plugin) != SCHED_SUCCESS) {
            qp->gated = true;
            qp->gating_plugin = plugin_bit(plugin);
            qp->unschedulable_plugins |= qp->gating_plugin;
            put_pool(q, qp);
            count(q, "gated", "ScheduleAttemptFailure");
            goto out;
        }
    }
    if (q->move_request_cycle >= qp->cycle || !(qp->unschedulable_plugins | qp->pending_plugins)) {
        put_backoff(q, qp);
        count(q, "backoff", "ScheduleAttemptFailure");
    } else {
        put_pool(q, qp);
        count(q, "unschedulable", "ScheduleAttemptFailure");
    }
    nom_add(q, qp->pod, qp->pod->nominated_node);
out:
    CHECK(pthread_mutex_unlock(&q->mu) == 0);
    return r;
}

int64_t sched_queue_cycle(struct sched_queue *q)
{
    int64_t c;

    CHECK(pthread_mutex_lock(&q->mu) == 0);
    c = q->cycle;
    CHECK(pthread_mutex_unlock(&q->mu) == 0);
    return c;
}

/* ---- moving pods on events ---- */

enum hint {
    HINT_SKIP,          /* queueSkip */
    HINT_AFTER_BACKOFF, /* queueAfterBackoff */
    HINT_NOW,           /* queueImmediately */
};

static bool is_wildcard(const char *resource, unsigned actions)
{
    return !strcmp(resource, "*") && actions == SCHED_ACT_ALL;
}

static bool interested(const struct sched_queue *q, uint64_t mask, const char *resource,
                       unsigned actions)
{
    return !q->opts.interested || q->opts.interested(q->opts.userdata, mask, resource, actions);
}

/* isPodWorthRequeuing with every hint function answering Queue. */
static enum hint worth_requeuing(const struct sched_queue *q, const struct sched_queued_pod *qp,
                                 const char *resource, unsigned actions)
{
    if (!(qp->unschedulable_plugins | qp->pending_plugins) || is_wildcard(resource, actions))
        return HINT_AFTER_BACKOFF;
    if (qp->pending_plugins && interested(q, qp->pending_plugins, resource, actions))
        return HINT_NOW;
    if (qp->unschedulable_plugins && interested(q, qp->unschedulable_plugins, resource, actions))
        return HINT_AFTER_BACKOFF;
    return HINT_SKIP;
}

/* The hot-fix of kubernetes#124384: SchedulingGates' gated pods wait for their own update. */
static bool gated_by_gates(const struct sched_queue *q, const struct sched_queued_pod *qp)
{
    return qp->gated && (qp->unschedulable_plugins & plugin_bit(q->opts.gates_plugin_id));
}

/* movePodsToActiveOrBackoffQueue for pool records v[0..n). */
static void move_pods(struct sched_queue *q, struct sched_queued_pod **v, size_t n,
                      const char *label, const char *resource, unsigned actions)
{
    double t = now(q);

    for (size_t i = 0; i < n; i++) {
        struct sched_queued_pod *qp = v[i];
        enum hint h;

        if (gated_by_gates(q, qp))
            continue;
        h = worth_requeuing(q, qp, resource, actions);
        if (h == HINT_SKIP)
            continue;
        detach(q, qp);
        if (h == HINT_AFTER_BACKOFF && is_backing_off(q, qp, t)) {
            put_backoff(q, qp);
            count(q, "backoff", label);
        } else {
            (void)enqueue_active(q, qp, label);
        }
    }
    q->move_request_cycle = q->cycle;
}

/* The pool records passing keep(), in an array the caller frees; SchedulingGates-gated records
 * are left out before keep() runs (keep may be an expensive pre-check). */
static size_t collect(struct sched_queue *q, bool (*keep)(void *arg, const struct sched_pod *pod),
                      void *arg, bool affinity_only, struct sched_queued_pod ***ret)
{
    struct sched_queued_pod **v = NULL;
    struct hmap_entry *e;
    size_t it, n = 0;

    *ret = NULL;
    if (!q->pool.n)
        return 0;
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    v = xcalloc(q->pool.n, sizeof(*v));
    for (e = hmap_first(&q->pool, &it); e; e = hmap_next(&q->pool, e, &it)) {
        struct sched_queued_pod *qp = e->value;
        if (gated_by_gates(q, qp) || (affinity_only && !qp->pod->naffinity))
            continue;
        if (keep && !keep(arg, qp->pod))
            continue;
        v[n++] = qp;
    }
    *ret = v;
    return n;
}

void sched_queue_move_all(struct sched_queue *q, const char *label, const char *resource,
                          unsigned actions,
                          bool (*pre_check)(void *arg, const struct sched_pod *pod), void *arg)
{
    struct sched_queued_pod **v;
    size_t n;

    CHECK(pthread_mutex_lock(&q->mu) == 0);
    /* isEventOfInterest: no plugin of any profile registered for it. */
    if (!is_wildcard(resource, actions) && !interested(q, 0, resource, actions))
        goto out;
    n = collect(q, pre_check, arg, false, &v);
    move_pods(q, v, n, label, resource, actions);
    free(v);
out:
    CHECK(pthread_mutex_unlock(&q->mu) == 0);
}

/* AssignedPodAdded / the affinity branch of AssignedPodUpdated: event Pod/Add or Pod/Update. */
void sched_queue_assigned_pod_added(struct sched_queue *q, const char *label,
                                    bool (*match)(void *arg, const struct sched_pod *pod),
                                    void *arg)
{
    unsigned actions = !strcmp(label, "AssignedPodUpdate") ? SCHED_ACT_UPDATE : SCHED_ACT_ADD;
    struct sched_queued_pod **v;
    size_t n;

    CHECK(pthread_mutex_lock(&q->mu) == 0);
    n = collect(q, match, arg, true, &v);
    move_pods(q, v, n, label, "Pod", actions);
    free(v);
    CHECK(pthread_mutex_unlock(&q->mu) == 0);
}

void sched_queue_activate(struct sched_queue *q, const char *const *keys, size_t n)
{
    CHECK(pthread_mutex_lock(&q->mu) == 0);
    for (size_t i = 0; i < n; i++) {
        struct sched_queued_pod *qp = hmap_get(&q->all, keys[i]);
        if (!qp || qp->where == WHERE_ACTIVE)
            continue;
        detach(q, qp);
        if (enqueue_active(q, qp, "ForceActivate"))
            nom_add(q, qp->pod, qp->pod->nominated_node);
    }
    CHECK(pthread_mutex_unlock(&q->mu) == 0);
}

static void flush_backoff_locked(struct sched_queue *q)
{
    double t = now(q);

    while (q->backoff.n) {
        struct sched_queued_pod *qp = q->backoff.v[0];
        if (is_backing_off(q, qp, t))
            break;
        detach(q, qp);
        (void)enqueue_active(q, qp, "BackoffComplete");
    }
}

static void flush_unschedulable_locked(struct sched_queue *q)
{
    struct sched_queued_pod **v = NULL;
    struct hmap_entry *e;
    double t = now(q);
    size_t it, n = 0;

    if (!q->pool.n)
        return;
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    v = xcalloc(q->pool.n, sizeof(*v));
    for (e = hmap_first(&q->pool, &it); e; e = hmap_next(&q->pool, e, &it)) {
        struct sched_queued_pod *qp = e->value;
        if (!gated_by_gates(q, qp) && t - qp->timestamp > q->opts.max_unschedulable_s)
            v[n++] = qp;
    }
    if (n)
        move_pods(q, v, n, "UnschedulableTimeout", "*", SCHED_ACT_ALL);
    free(v);
}

void sched_queue_flush_backoff(struct sched_queue *q)
{
    CHECK(pthread_mutex_lock(&q->mu) == 0);
    flush_backoff_locked(q);
    CHECK(pthread_mutex_unlock(&q->mu) == 0);
}

void sched_queue_flush_unschedulable(struct sched_queue *q)
{
    CHECK(pthread_mutex_lock(&q->mu) == 0);
    flush_unschedulable_locked(q);
    CHECK(pthread_mutex_unlock(&q->mu) == 0);
}

/* Run(): flushBackoffQCompleted every second, flushUnschedulablePodsLeftover every 30 s, each
 * period counted from the end of the previous flush (wait.Until). */
static void *run_main(void *arg)
{
    struct sched_queue *q = arg;
    double next_backoff, next_unsched;

    CHECK(pthread_mutex_lock(&q->mu) == 0);
    next_backoff = mono_now() + 1;
    next_unsched = mono_now() + 30;
    while (!q->stopping) {
        double t = mono_now(), next = next_backoff < next_unsched ? next_backoff : next_unsched;
        struct timespec ts;
        int r;

        if (t < next) {
            deadline(next - t, &ts);
            r = pthread_cond_timedwait(&q->run_cond, &q->mu, &ts);
            CHECK(r == 0 || r == ETIMEDOUT);
            continue;
        }
        if (t >= next_backoff) {
            flush_backoff_locked(q);
            next_backoff = mono_now() + 1;
        }
        if (t >= next_unsched) {
            flush_unschedulable_locked(q);
            next_unsched = mono_now() + 30;
        }
    }
    CHECK(pthread_mutex_unlock(&q->mu) == 0);
    return NULL;
}

int sched_queue_run(struct sched_queue *q)
{
    int r = 0;

    CHECK(pthread_mutex_lock(&q->mu) == 0);
    if (q->running || q->stopping) {
        r = -EALREADY;
        goto out;
    }
    r = -pthread_create(&q->thread, NULL, run_main, q);
    if (r == 0)
        q->running = true;
out:
    CHECK(pthread_mutex_unlock(&q->mu) == 0);
    return r;
}

/* ---- figures ---- */

void sched_queue_stats(struct sched_queue *q, struct sched_queue_stats *ret)
{
    CHECK(pthread_mutex_lock(&q->mu) == 0);
    ret->active = q->active.n;
    ret->backoff = q->backoff.n;
    ret->unschedulable = q->pool.n - q->ngated;
    ret->gated = q->ngated;
    ret->incoming_active = q->in_active;
    ret->incoming_backoff = q->in_backoff;
    ret->incoming_unschedulable = q->in_unschedulable;
    ret->incoming_gated = q->in_gated;
    ret->pre_enqueue_runs = q->pre_enqueue_runs;
    CHECK(pthread_mutex_unlock(&q->mu) == 0);
}

void sched_queue_foreach_incoming(struct sched_queue *q,
                                  void (*fn)(void *arg, const char *queue, const char *event,
                                             uint64_t count),
                                  void *arg)
{
    struct hmap_entry *e;
    size_t it;

    CHECK(pthread_mutex_lock(&q->mu) == 0);
    for (e = hmap_first(&q->incoming, &it); e; e = hmap_next(&q->incoming, e, &it)) {
        const struct incoming *in = e->value;
        fn(arg, in->queue, in->event, in->n);
    }
    CHECK(pthread_mutex_unlock(&q->mu) == 0);
}

const char *sched_queue_where(struct sched_queue *q, const char *key)
{
    const struct sched_queued_pod *qp;
    const char *w = NULL;

    CHECK(pthread_mutex_lock(&q->mu) == 0);
    qp = hmap_get(&q->all, key);
    if (qp) {
        switch (qp->where) {
        case WHERE_ACTIVE:
            w = "active";
            break;
        case WHERE_BACKOFF:
            w = "backoff";
            break;
        case WHERE_POOL:
            w = qp->gated ? "gated" : "unschedulable";
            break;
        default:
            break;
        }
    }
    CHECK(pthread_mutex_unlock(&q->mu) == 0);
    return w;
}
