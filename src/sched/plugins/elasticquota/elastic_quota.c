/*
 * ElasticQuota (Koordinator pkg/scheduler/plugins/elasticquota/; reference
 * koordlet-and-scheduler.md 5.4, scheduler.md 8.5): pods are charged to quotas of a tree of
 * scheduling.sigs.k8s.io ElasticQuotas (quota_tree.h computes each quota's runtime), and a pod
 * whose quota has no room is refused with upstream's message, at PreFilter as upstream does.
 *
 * Waiting without churn (what Koordinator's users ask for, issues 2360, 2581, 3058). Upstream
 * refuses such a pod in PreFilter, over and over: every pod delete and every quota event moves
 * all quota-refused pods back to the queue, where they take turns from other quotas' pods. Here
 * the plugin also runs at PreEnqueue: a pod whose quota has no room is gated there (counted in
 * scheduler_pending_pods{queue="gated"}, never attempted), the plugin keeps per quota the keys
 * of the pods it holds, registers for no cluster event (so node and pod events skip them), and
 * on an event of that quota (a pod of it placed elsewhere, deleted or finished, min/max/tree
 * changed, nodes added) activates by key only the waiting pods that fit in the room there is,
 * highest priority first, each quota on its own room. 10,000 pods waiting on a full quota cost
 * nothing per cycle and nothing per unrelated event.
 *
 * Room is counted with the pods PreEnqueue let through and that are not placed yet
 * ("admitted"): three pods created together for a quota with room for one do not all go to
 * activeQ to be refused in turn. An admission ends when the pod is reserved (it then counts in
 * used), refused (PreFilter/PostFilter), deleted, or after admit_ttl_s (a pod that waits for a
 * node, not for the quota, must not hold the quota's room).
 *
 * A pod refused at PreFilter anyway (its quota shrank meanwhile) goes back through PreEnqueue
 * when it is put back (queue.h recheck_plugins) and waits gated too. Its PodScheduled condition
 * says so: reason "WaitingForQuota", message naming the quota and upstream's figures, written
 * once per wait by the plugin's thread (the scheduler writes conditions only for attempts).
 *
 * Used and runtime are written back (status.used; annotations runtime and request) once a
 * second at most, only when they changed. ElasticQuota has no status subresource: one merge
 * patch on the object.
 *
 * Preemption (PostFilter, when the profile enables the plugin there): only pods of the pod's
 * own quota with lower priority, never non-preemptible ones, never for default-quota pods while
 * disableDefaultQuotaPreemption, on the first node (snapshot order) where removing the
 * lowest-priority of them lets the quota and the node's filters admit the pod.
 *
 * Not done: the over-use revoke controller (monitorAllQuotas), hook plugins, the
 * non-preemptible used ≤ min check, quota-tree ids beyond the is-root/total-resource roots.
 */
#include "sched/plugins/elasticquota/elastic_quota.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/duration.h"
#include "api/field.h"
#include "api/quantity.h"
#include "api/schema.h"
#include "base/base.h"
#include "base/hmap.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "codec/patch.h"
#include "kube/client.h"
#include "kube/events.h"
#include "kube/informer.h"
#include "sched/framework/framework.h"
#include "sched/plugins/elasticquota/quota_tree.h"
#include "sched/plugins/registry.h"

#define EQ_NAME          "ElasticQuota"
#define EQ_ADMIT_TTL_S   30.0
#define EQ_WAIT_REASON   "WaitingForQuota"
#define EQ_MAX_INT64_DIV (INT64_MAX / 5) /* defaultQuotaGroupMax / systemQuotaGroupMax */

static const struct kube_resource eq_res = {"scheduling.sigs.k8s.io", "v1alpha1", "elasticquotas",
                                            "ElasticQuota", true};

/* ElasticQuotaArgs (pkg/scheduler/apis/config/v1/defaults.go). */
struct eq_args {
    int64_t delay_evict_ns, revoke_interval_ns, snapshot_interval_ns;
    struct sched_res default_max, system_max;
    uint64_t default_mask, system_mask;
    char *quota_ns;
    bool monitor_all, check_parent, runtime_quota, min_scale, no_default_preemption, queue_hint;
};

/* A pod the plugin counts (by uid). */
struct eq_pod {
    struct sched_pod *pod; /* the latest version seen */
    char *quota;           /* the quota charged */
    bool assigned;         /* in its quota's used (bound, or reserved) */
    bool admitted;         /* let through PreEnqueue, in its quota's admitted */
    double admitted_at;
};

struct eq_waiter {
    struct sched_pod *pod;
    uint64_t seq; /* arrival order among equal priorities */
};

/* The plugin's own state of one quota name. */
struct eq_qstate {
    struct hmap waiting; /* pod key -> struct eq_waiter * */
    struct sched_res admitted;
    /* The room when the last pick found nothing to activate: a pick with no more room than
     * that has nothing to do (10,000 waiters are not sorted on every unrelated event). */
    struct sched_res stuck_room;
    bool stuck;
    char *written; /* the last patch written (JSON), NULL before the first */
    bool from_api; /* an object exists (written back only then) */
    char *namespace;
};

struct eq_note {
    struct eq_note *next;
    struct sched_pod *pod;
    char *message;
};

struct eq {
    struct sched_handle *h;
    struct eq_args args;
    pthread_mutex_t mu;
    struct eq_tree *tree;
    bool dirty;          /* the tree needs eq_tree_compute() */
    struct hmap pods;    /* uid -> struct eq_pod * */
    struct hmap nodes;   /* node name -> struct sched_res * (allocatable) */
    struct hmap qstates; /* quota name -> struct eq_qstate * */
    struct sched_res total;
    uint64_t seq;
    struct eq_note *notes, **notes_tail;
    /* with a client */
    struct kube_informer *inf;
    pthread_t thread;
    bool running, stop;
    pthread_cond_t cond;
};

static double mono(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- quota state ---- */

static struct eq_qstate *qstate(struct eq *pl, const char *name)
{
    struct eq_qstate *qs = hmap_get(&pl->qstates, name);

    if (!qs) {
        qs = xcalloc(1, sizeof(*qs));
        hmap_init(&qs->waiting);
        (void)hmap_put(&pl->qstates, name, qs);
    }
    return qs;
}

static void waiter_free(struct eq_waiter *w)
{
    if (!w)
        return;
    sched_pod_unref(w->pod);
    free(w);
}

static void qstate_free(struct eq_qstate *qs)
{
    struct hmap_entry *e;
    size_t it;

    for (e = hmap_first(&qs->waiting, &it); e; e = hmap_next(&qs->waiting, e, &it))
        waiter_free(e->value);
    hmap_release(&qs->waiting);
    free(qs->written);
    free(qs->namespace);
    free(qs);
}

static bool is_special(const char *name)
{
    return !strcmp(name, EQ_DEFAULT_QUOTA) || !strcmp(name, EQ_SYSTEM_QUOTA);
}

static void refresh(struct eq *pl)
{
    if (!pl->dirty)
        return;
    eq_tree_set_total(pl->tree, &pl->total);
    eq_tree_compute(pl->tree, pl->args.min_scale);
    pl->dirty = false;
}

/* The quota that limits pods of name, or NULL (unknown, default, system: never limited). */
static struct eq_quota *limiting(struct eq *pl, const char *name)
{
    struct eq_quota *q = eq_tree_get(pl->tree, name);

    return q && q->has_runtime && !is_special(name) ? q : NULL;
}

static const struct sched_res *limit_of(const struct eq *pl, const struct eq_quota *q)
{
    return pl->args.runtime_quota ? &q->runtime : &q->spec.max;
}

/* The dimensions of q's max where used + extra + req exceeds the limit (0: fits). */
static uint64_t exceeds(const struct eq *pl, const struct eq_quota *q, const struct sched_res *req,
                        const struct sched_res *extra)
{
    const struct sched_res *lim = limit_of(pl, q);
    uint64_t bad = 0;

    for (int i = 0; i < SCHED_RES_MAX; i++) {
        int64_t x = extra ? extra->v[i] : 0;
        if ((q->spec.max_mask & (UINT64_C(1) << i)) && req->v[i] &&
            q->used.v[i] + x + req->v[i] > lim->v[i])
            bad |= UINT64_C(1) << i;
    }
    return bad;
}

/* Upstream's refusal: "Insufficient quotas, quotaName: q, runtime: map[..], used: map[..],
 * pod's request: map[..], exceedDimensions: [cpu]" (checkQuotaRecursive). */
static void refusal(const struct eq *pl, const struct eq_quota *q, const struct sched_pod *pod,
                    uint64_t bad, struct strbuf *out)
{
    bool first = true;

    strbuf_addf(out, "Insufficient quotas, quotaName: %s, runtime: ", q->spec.name);
    eq_res_format(limit_of(pl, q), q->spec.max_mask, out);
    strbuf_addstr(out, ", used: ");
    eq_res_format(&q->used, q->spec.max_mask, out);
    strbuf_addstr(out, ", pod's request: ");
    eq_res_format(&pod->req, q->spec.max_mask, out);
    strbuf_addstr(out, ", exceedDimensions: [");
    for (int i = 0; i < SCHED_RES_MAX && i < sched_res_count(); i++) {
        if (!(bad & (UINT64_C(1) << i)))
            continue;
        strbuf_addf(out, "%s%s", first ? "" : " ", sched_res_name(i));
        first = false;
    }
    strbuf_addch(out, ']');
}

/* The pod's admission ends (placed, refused, gone). */
static void unadmit(struct eq *pl, struct eq_pod *ep)
{
    struct eq_qstate *qs;

    if (!ep->admitted)
        return;
    ep->admitted = false;
    qs = qstate(pl, ep->quota);
    for (int i = 0; i < SCHED_RES_MAX; i++)
        qs->admitted.v[i] -= ep->pod->req.v[i];
}

static void admit(struct eq *pl, struct eq_pod *ep, double now)
{
    struct eq_qstate *qs;

    if (ep->admitted)
        return;
    ep->admitted = true;
    ep->admitted_at = now;
    qs = qstate(pl, ep->quota);
    for (int i = 0; i < SCHED_RES_MAX; i++)
        qs->admitted.v[i] += ep->pod->req.v[i];
}

static void unwait(struct eq *pl, const char *quota, const char *key)
{
    struct eq_qstate *qs = hmap_get(&pl->qstates, quota);

    if (qs)
        waiter_free(hmap_del(&qs->waiting, key));
}

/* Records that pod waits on quota; a new wait queues its PodScheduled note. */
static void wait_on(struct eq *pl, const char *quota, const struct sched_pod *pod,
                    const char *message)
{
    struct eq_qstate *qs = qstate(pl, quota);
    struct eq_waiter *w = hmap_get(&qs->waiting, pod->key);

    if (w) {
        sched_pod_unref(w->pod);
        w->pod = sched_pod_ref((struct sched_pod *)pod);
        return;
    }
    w = xcalloc(1, sizeof(*w));
    w->pod = sched_pod_ref((struct sched_pod *)pod);
    w->seq = ++pl->seq;
    (void)hmap_put(&qs->waiting, pod->key, w);
    if (pl->running) {
        struct eq_note *n = xcalloc(1, sizeof(*n));
        n->pod = sched_pod_ref((struct sched_pod *)pod);
        n->message = xstrdup(message);
        *pl->notes_tail = n;
        pl->notes_tail = &n->next;
        (void)pthread_cond_signal(&pl->cond);
    }
}

/* ---- activation ---- */

struct eq_keys {
    char **v;
    size_t n, cap;
};

static void keys_add(struct eq_keys *k, const char *key)
{
    if (k->n == k->cap) {
        k->cap = k->cap ? k->cap * 2 : 16;
        k->v = xrealloc(k->v, k->cap * sizeof(*k->v));
    }
    k->v[k->n++] = xstrdup(key);
}

static void keys_release(struct eq_keys *k)
{
    for (size_t i = 0; i < k->n; i++)
        free(k->v[i]);
    free(k->v);
    memset(k, 0, sizeof(*k));
}

static int cmp_waiter(const void *a, const void *b)
{
    const struct eq_waiter *x = *(struct eq_waiter *const *)a, *y = *(struct eq_waiter *const *)b;

    if (x->pod->priority != y->pod->priority)
        return x->pod->priority > y->pod->priority ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The waiting pods of one quota that fit now, in priority order (then arrival), into per[]
 * (keys). Room is the limit less used and admitted; each chosen pod is admitted at once, so the
 * next event does not hand the same room out again. The first pod that fits an empty quota but
 * not the room left stops the walk: lower-priority pods do not overtake it. A quota gone or no
 * longer limited lets every waiter go.
 */
static void pick(struct eq *pl, const char *name, struct eq_qstate *qs, double now,
                 struct eq_keys *out)
{
    struct eq_quota *q = limiting(pl, name);
    struct eq_waiter **v;
    struct hmap_entry *e;
    struct sched_res room;
    size_t it, n = 0, picked = 0;

    if (!qs->waiting.n)
        return;
    if (q) {
        const struct sched_res *lim = limit_of(pl, q);
        bool grew = !qs->stuck;
        for (int i = 0; i < SCHED_RES_MAX; i++) {
            room.v[i] = lim->v[i] - q->used.v[i] - qs->admitted.v[i];
            grew |= room.v[i] > qs->stuck_room.v[i];
        }
        if (!grew)
            return;
    }
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    v = xcalloc(qs->waiting.n, sizeof(*v));
    for (e = hmap_first(&qs->waiting, &it); e; e = hmap_next(&qs->waiting, e, &it))
        v[n++] = e->value;
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    qsort(v, n, sizeof(*v), cmp_waiter);
    if (q) {
        qs->stuck = false;
        qs->stuck_room = room;
    }
    for (size_t k = 0; k < n; k++) {
        struct sched_pod *pod = v[k]->pod;
        struct eq_pod *ep = hmap_get(&pl->pods, *pod->uid ? pod->uid : pod->key);
        bool fits = true, ever = true;

        if (q) {
            const struct sched_res *lim = limit_of(pl, q);
            for (int i = 0; i < SCHED_RES_MAX; i++) {
                if (!(q->spec.max_mask & (UINT64_C(1) << i)) || !pod->req.v[i])
                    continue;
                fits &= pod->req.v[i] <= room.v[i];
                ever &= pod->req.v[i] <= lim->v[i];
            }
            if (!fits) {
                if (ever)
                    break;
                continue;
            }
            for (int i = 0; i < SCHED_RES_MAX; i++)
                room.v[i] -= pod->req.v[i];
        }
        keys_add(out, pod->key);
        if (ep && !strcmp(ep->quota, name))
            admit(pl, ep, now);
        waiter_free(hmap_del(&qs->waiting, pod->key));
        picked++;
    }
    qs->stuck = q && !picked;
    free(v);
}

/* Every quota's picks, interleaved one quota at a time so that no quota's pods all enter
 * activeQ before another's first. Under the lock; the caller activates after unlocking. */
static void pick_all(struct eq *pl, double now, struct eq_keys *out)
{
    struct eq_keys *per;
    struct hmap_entry *e;
    size_t it, n = 0, i = 0, left;

    /* Without waiters there is nothing to pick: the runtime quotas are not recomputed for
     * every pod event (PreFilter refreshes them when it needs them). */
    for (e = hmap_first(&pl->qstates, &it); e; e = hmap_next(&pl->qstates, e, &it))
        if (((const struct eq_qstate *)e->value)->waiting.n)
            break;
    if (!e)
        return;
    refresh(pl);
    per = xcalloc(pl->qstates.n, sizeof(*per));
    for (e = hmap_first(&pl->qstates, &it); e; e = hmap_next(&pl->qstates, e, &it), n++)
        pick(pl, e->key, e->value, now, &per[n]);
    do {
        left = 0;
        for (size_t q = 0; q < n; q++) {
            if (i < per[q].n) {
                keys_add(out, per[q].v[i]);
                left++;
            }
        }
        i++;
    } while (left);
    for (size_t q = 0; q < n; q++)
        keys_release(&per[q]);
    free(per);
}

static void activate(struct eq *pl, struct eq_keys *k)
{
    if (k->n)
        sched_handle_activate(pl->h, (const char *const *)k->v, k->n);
    keys_release(k);
}

/* ---- pods ---- */

static const char *pod_id(const struct sched_pod *pod)
{
    return *pod->uid ? pod->uid : pod->key;
}

static void forget_pod(struct eq *pl, struct eq_pod *ep)
{
    unadmit(pl, ep);
    unwait(pl, ep->quota, ep->pod->key);
    (void)eq_tree_charge(pl->tree, ep->quota, &ep->pod->req, -1, ep->assigned ? -1 : 0);
    sched_pod_unref(ep->pod);
    free(ep->quota);
    free(ep);
}

static void eq_pod_event(void *self, const struct sched_pod *pod, bool gone)
{
    struct eq *pl = self;
    struct eq_keys k = {0};
    struct eq_pod *ep;
    const char *quota;
    bool assigned = *pod->node_name != 0, freed = false;

    CHECK(pthread_mutex_lock(&pl->mu) == 0);
    ep = hmap_get(&pl->pods, pod_id(pod));
    if (gone) {
        if (ep) {
            freed = ep->assigned || ep->admitted;
            forget_pod(pl, hmap_del(&pl->pods, pod_id(pod)));
            pl->dirty = true;
        }
        goto out;
    }
    quota = eq_tree_resolve(pl->tree, pod->labels, pod->namespace);
    if (ep && (strcmp(ep->quota, quota) || memcmp(&ep->pod->req, &pod->req, sizeof(pod->req)))) {
        /* Moved to another quota, or resized: charged again from scratch. */
        freed = ep->assigned || ep->admitted;
        forget_pod(pl, hmap_del(&pl->pods, pod_id(pod)));
        ep = NULL;
    }
    if (!ep) {
        ep = xcalloc(1, sizeof(*ep));
        ep->pod = sched_pod_ref((struct sched_pod *)pod);
        ep->quota = xstrdup(quota);
        ep->assigned = assigned;
        (void)hmap_put(&pl->pods, pod_id(pod), ep);
        (void)eq_tree_charge(pl->tree, quota, &pod->req, 1, assigned ? 1 : 0);
        pl->dirty = true;
    } else {
        sched_pod_unref(ep->pod);
        ep->pod = sched_pod_ref((struct sched_pod *)pod);
        if (assigned && !ep->assigned) {
            ep->assigned = true;
            (void)eq_tree_charge(pl->tree, quota, &pod->req, 0, 1);
            pl->dirty = true;
        }
    }
    if (assigned) {
        unadmit(pl, ep);
        unwait(pl, quota, pod->key);
    }
out:
    /* A new pending pod raises its quota's request, hence maybe its runtime: waiters may fit. */
    if (freed || pl->dirty)
        pick_all(pl, mono(), &k);
    CHECK(pthread_mutex_unlock(&pl->mu) == 0);
    activate(pl, &k);
}

static void eq_node_event(void *self, const struct sched_node *node, bool gone)
{
    struct eq *pl = self;
    struct sched_res *old;
    struct eq_keys k = {0};

    CHECK(pthread_mutex_lock(&pl->mu) == 0);
    old = hmap_get(&pl->nodes, node->name);
    if (old && !gone && !memcmp(old, &node->allocatable, sizeof(*old)))
        goto out;
    if (old) {
        for (int i = 0; i < SCHED_RES_MAX; i++)
            pl->total.v[i] -= old->v[i];
        free(hmap_del(&pl->nodes, node->name));
    }
    if (!gone) {
        struct sched_res *a = xcalloc(1, sizeof(*a));
        *a = node->allocatable;
        (void)hmap_put(&pl->nodes, node->name, a);
        for (int i = 0; i < SCHED_RES_MAX; i++)
            pl->total.v[i] += a->v[i];
    }
    pl->dirty = true;
    pick_all(pl, mono(), &k);
out:
    CHECK(pthread_mutex_unlock(&pl->mu) == 0);
    activate(pl, &k);
}

/* ---- quotas ---- */

/* Whether an update changes what the tree reads (not our own status/annotation writes). */
static bool quota_changed(const cJSON *old, const cJSON *obj)
{
    static const char *const anns[] = {EQ_ANN_WEIGHT, EQ_ANN_NAMESPACES, EQ_ANN_TOTAL};
    const cJSON *om = cJSON_GetObjectItemCaseSensitive(old, "metadata");
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *oa = cJSON_GetObjectItemCaseSensitive(om, "annotations");
    const cJSON *na = cJSON_GetObjectItemCaseSensitive(nm, "annotations");
    const cJSON *x, *y;

    x = cJSON_GetObjectItemCaseSensitive(old, "spec");
    y = cJSON_GetObjectItemCaseSensitive(obj, "spec");
    if (!x != !y || (x && !json_value_equal(x, y)))
        return true;
    x = cJSON_GetObjectItemCaseSensitive(om, "labels");
    y = cJSON_GetObjectItemCaseSensitive(nm, "labels");
    if (!x != !y || (x && !json_value_equal(x, y)))
        return true;
    for (size_t i = 0; i < ARRAY_SIZE(anns); i++) {
        const char *a = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(oa, anns[i]));
        const char *b = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(na, anns[i]));
        if (!a != !b || (a && strcmp(a, b)))
            return true;
    }
    return false;
}

/* Every pod's quota again (quotas came or went, or their namespaces): charges move. */
static void reresolve(struct eq *pl)
{
    struct hmap_entry *e;
    size_t it;

    for (e = hmap_first(&pl->pods, &it); e; e = hmap_next(&pl->pods, e, &it)) {
        struct eq_pod *ep = e->value;
        const char *q = eq_tree_resolve(pl->tree, ep->pod->labels, ep->pod->namespace);
        if (!strcmp(q, ep->quota))
            continue;
        unadmit(pl, ep);
        unwait(pl, ep->quota, ep->pod->key);
        (void)eq_tree_charge(pl->tree, ep->quota, &ep->pod->req, -1, ep->assigned ? -1 : 0);
        free(ep->quota);
        ep->quota = xstrdup(q);
        (void)eq_tree_charge(pl->tree, q, &ep->pod->req, 1, ep->assigned ? 1 : 0);
    }
}

/* The built-in default and system quotas, with the args' max, until objects replace them. */
static void put_builtin(struct eq *pl, const char *name)
{
    struct eq_spec s = {0};
    bool def = !strcmp(name, EQ_DEFAULT_QUOTA);

    s.name = xstrdup(name);
    s.namespace = xstrdup(pl->args.quota_ns);
    s.parent = xstrdup(EQ_ROOT_QUOTA);
    s.tree_id = xstrdup("");
    s.allow_lent = true;
    s.max = def ? pl->args.default_max : pl->args.system_max;
    s.max_mask = def ? pl->args.default_mask : pl->args.system_mask;
    s.weight = s.max;
    eq_tree_put(pl->tree, &s);
}

void eq_plugin_quota_event(void *self, const cJSON *old, const cJSON *obj, bool deleted)
{
    struct eq *pl = self;
    struct eq_keys k = {0};
    struct eq_spec spec;
    char *warn = NULL;

    if (old && !deleted && !quota_changed(old, obj))
        return;
    if (eq_spec_decode(obj, &spec, &warn) < 0) {
        log_warn("sched", "ElasticQuota without a name, ignoring");
        return;
    }
    if (warn)
        log_warn("sched", "ElasticQuota %s/%s: %s: left out", spec.namespace, spec.name, warn);
    free(warn);
    CHECK(pthread_mutex_lock(&pl->mu) == 0);
    {
        struct eq_qstate *qs = qstate(pl, spec.name);
        qs->from_api = !deleted;
        free(qs->namespace);
        qs->namespace = xstrdup(spec.namespace);
    }
    if (deleted) {
        (void)eq_tree_del(pl->tree, spec.name);
        if (is_special(spec.name))
            put_builtin(pl, spec.name);
        eq_spec_release(&spec);
    } else {
        eq_tree_put(pl->tree, &spec);
    }
    reresolve(pl);
    pl->dirty = true;
    pick_all(pl, mono(), &k);
    CHECK(pthread_mutex_unlock(&pl->mu) == 0);
    activate(pl, &k);
}

static void on_quota_add(void *ud, const struct kube_object *o)
{
    eq_plugin_quota_event(ud, NULL, kube_object_json(o), false);
}

static void on_quota_update(void *ud, const struct kube_object *old, const struct kube_object *o)
{
    if (old != o)
        eq_plugin_quota_event(ud, kube_object_json(old), kube_object_json(o), false);
}

static void on_quota_delete(void *ud, const struct kube_object *o)
{
    eq_plugin_quota_event(ud, NULL, kube_object_json(o), true);
}

/* ---- extension points ---- */

struct eq_cycle {
    char *quota;
    bool refused; /* refused by the quota check */
};

static void cycle_free(void *d)
{
    struct eq_cycle *c = d;

    free(c->quota);
    free(c);
}

static const struct sched_state_type eq_state = {"ElasticQuota", cycle_free, NULL};

static enum sched_code eq_pre_enqueue(void *self, const struct sched_pod *pod,
                                      struct sched_status *st)
{
    struct eq *pl = self;
    struct eq_quota *q;
    struct eq_qstate *qs;
    struct eq_pod *ep;
    struct sched_res others;
    const char *name;
    enum sched_code c = SCHED_SUCCESS;
    uint64_t bad;

    CHECK(pthread_mutex_lock(&pl->mu) == 0);
    refresh(pl);
    name = eq_tree_resolve(pl->tree, pod->labels, pod->namespace);
    q = limiting(pl, name);
    if (!q)
        goto out;
    qs = qstate(pl, name);
    ep = hmap_get(&pl->pods, pod_id(pod));
    others = qs->admitted;
    if (ep && ep->admitted && !strcmp(ep->quota, name))
        for (int i = 0; i < SCHED_RES_MAX; i++)
            others.v[i] -= ep->pod->req.v[i];
    bad = exceeds(pl, q, &pod->req, &others);
    if (!bad) {
        unwait(pl, name, pod->key);
        if (ep && !strcmp(ep->quota, name))
            admit(pl, ep, mono());
    } else {
        struct strbuf msg = STRBUF_INIT, note = STRBUF_INIT;
        if (ep)
            unadmit(pl, ep);
        refusal(pl, q, pod, bad, &msg);
        strbuf_addf(&note, "waiting for room in ElasticQuota %s/%s: %s", q->spec.namespace,
                    q->spec.name, msg.buf);
        wait_on(pl, name, pod, note.buf);
        c = sched_status_set(st, SCHED_UNRESOLVABLE, "%s", msg.buf);
        strbuf_release(&msg);
        strbuf_release(&note);
    }
out:
    CHECK(pthread_mutex_unlock(&pl->mu) == 0);
    return c;
}

/* checkQuotaRecursive: the pod's quota, and with enableCheckParentQuota its ancestors. */
static enum sched_code eq_pre_filter(void *self, struct sched_cycle *cs,
                                     const struct sched_pod *pod,
                                     struct sched_prefilter_result *res, struct sched_status *st)
{
    struct eq *pl = self;
    struct eq_cycle *cd = xcalloc(1, sizeof(*cd));
    struct eq_quota *q;
    enum sched_code c = SCHED_SUCCESS;

    (void)res;
    CHECK(pthread_mutex_lock(&pl->mu) == 0);
    refresh(pl);
    cd->quota = xstrdup(eq_tree_resolve(pl->tree, pod->labels, pod->namespace));
    for (q = limiting(pl, cd->quota); q; q = pl->args.check_parent ? q->parent : NULL) {
        uint64_t bad = exceeds(pl, q, &pod->req, NULL);
        struct strbuf msg = STRBUF_INIT;
        struct eq_pod *ep;

        if (!bad)
            continue;
        refusal(pl, q, pod, bad, &msg);
        c = sched_status_set(st, SCHED_UNSCHEDULABLE, "%s", msg.buf);
        cd->refused = true;
        if ((ep = hmap_get(&pl->pods, pod_id(pod))))
            unadmit(pl, ep);
        /* It comes back through PreEnqueue (recheck) and waits there; until then it is
         * known to wait, so that room freed meanwhile is not missed. */
        {
            struct strbuf note = STRBUF_INIT;
            strbuf_addf(&note, "waiting for room in ElasticQuota %s/%s: %s", q->spec.namespace,
                        q->spec.name, msg.buf);
            wait_on(pl, cd->quota, pod, note.buf);
            strbuf_release(&note);
        }
        strbuf_release(&msg);
        break;
    }
    CHECK(pthread_mutex_unlock(&pl->mu) == 0);
    sched_cycle_write(cs, &eq_state, cd);
    return c;
}

static enum sched_code eq_reserve(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                  const char *node, struct sched_status *st)
{
    struct eq *pl = self;
    struct eq_pod *ep;

    (void)cs;
    (void)node;
    (void)st;
    CHECK(pthread_mutex_lock(&pl->mu) == 0);
    ep = hmap_get(&pl->pods, pod_id(pod));
    if (ep) {
        unadmit(pl, ep);
        if (!ep->assigned) {
            ep->assigned = true;
            (void)eq_tree_charge(pl->tree, ep->quota, &ep->pod->req, 0, 1);
            pl->dirty = true;
        }
    }
    CHECK(pthread_mutex_unlock(&pl->mu) == 0);
    return SCHED_SUCCESS;
}

static void eq_unreserve(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                         const char *node)
{
    struct eq *pl = self;
    struct eq_keys k = {0};
    struct eq_pod *ep;

    (void)cs;
    (void)node;
    CHECK(pthread_mutex_lock(&pl->mu) == 0);
    ep = hmap_get(&pl->pods, pod_id(pod));
    if (ep && ep->assigned && !*ep->pod->node_name) {
        ep->assigned = false;
        (void)eq_tree_charge(pl->tree, ep->quota, &ep->pod->req, 0, -1);
        pl->dirty = true;
        pick_all(pl, mono(), &k);
    }
    CHECK(pthread_mutex_unlock(&pl->mu) == 0);
    activate(pl, &k);
}

/* ---- preemption inside a quota ---- */

static int cmp_victim(const void *a, const void *b)
{
    const struct sched_pod *x = *(struct sched_pod *const *)a, *y = *(struct sched_pod *const *)b;

    if (x->priority != y->priority)
        return x->priority < y->priority ? -1 : 1;
    return x->created > y->created ? -1 : x->created < y->created; /* newest first */
}

static bool can_preempt(const struct sched_pod *pod, const char *quota, const struct eq_pod *ep)
{
    const char *np = sched_label(ep->pod->labels, EQ_LABEL_PREEMPT);

    return ep->assigned && *ep->pod->node_name && !ep->pod->deleting &&
           ep->pod->priority < pod->priority && !strcmp(ep->quota, quota) &&
           !(np && !strcmp(np, "false")) && strcmp(ep->pod->key, pod->key);
}

static enum sched_code eq_post_filter(void *self, struct sched_cycle *cs,
                                      const struct sched_pod *pod,
                                      const struct sched_node_statuses *m,
                                      struct sched_post_filter_result *res, struct sched_status *st)
{
    struct eq *pl = self;
    struct eq_cycle *cd = sched_cycle_read(cs, &eq_state);
    const struct sched_snapshot *snap = sched_handle_snapshot(pl->h);
    struct sched_pod **cand = NULL, **victims = NULL;
    struct sched_res need;
    struct eq_quota *q;
    struct eq_pod *ep;
    struct hmap_entry *e;
    size_t it, ncand = 0, nvictims = 0;
    char *node = NULL;
    bool quota_ok = false;

    (void)m;
    CHECK(pthread_mutex_lock(&pl->mu) == 0);
    if ((ep = hmap_get(&pl->pods, pod_id(pod))))
        unadmit(pl, ep);
    q = cd && cd->refused ? limiting(pl, cd->quota) : NULL;
    if (!q) {
        /* Not refused for its quota: the other PostFilters (DefaultPreemption) decide. */
        CHECK(pthread_mutex_unlock(&pl->mu) == 0);
        return SCHED_UNSCHEDULABLE;
    }
    if (pod->preempt_never ||
        (pl->args.no_default_preemption && !strcmp(cd->quota, EQ_DEFAULT_QUOTA))) {
        CHECK(pthread_mutex_unlock(&pl->mu) == 0);
        return sched_status_set(st, SCHED_UNRESOLVABLE, "%s",
                                "preemption: not eligible due to preemptionPolicy=Never.");
    }
    for (e = hmap_first(&pl->pods, &it); e; e = hmap_next(&pl->pods, e, &it)) {
        struct eq_pod *x = e->value;
        if (!can_preempt(pod, cd->quota, x))
            continue;
        /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
        cand = xrealloc(cand, (ncand + 1) * sizeof(*cand));
        cand[ncand++] = sched_pod_ref(x->pod);
    }
    /* How much must go: used + request - limit on the exceeded dimensions. */
    for (int i = 0; i < SCHED_RES_MAX; i++) {
        need.v[i] = 0;
        if ((q->spec.max_mask & (UINT64_C(1) << i)) && pod->req.v[i])
            need.v[i] = q->used.v[i] + pod->req.v[i] - limit_of(pl, q)->v[i];
    }
    CHECK(pthread_mutex_unlock(&pl->mu) == 0);
    if (ncand)
        /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
        qsort(cand, ncand, sizeof(*cand), cmp_victim);

    /* Per node (snapshot order): its candidates, lowest priority first, until the quota
     * admits the pod; then the node's filters must pass without them. */
    for (size_t n = 0; snap && n < snap->nnodes && !node; n++) {
        struct sched_node_info *ni = snap->nodes[n], *copy;
        struct sched_cycle *dry;
        struct sched_res freed = {0};
        bool fits = false;

        nvictims = 0;
        for (size_t c = 0; c < ncand && !fits; c++) {
            if (strcmp(cand[c]->node_name, ni->name))
                continue;
            /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
            victims = xrealloc(victims, (nvictims + 1) * sizeof(*victims));
            victims[nvictims++] = cand[c];
            fits = true;
            for (int i = 0; i < SCHED_RES_MAX; i++) {
                freed.v[i] += cand[c]->req.v[i];
                fits &= freed.v[i] >= need.v[i];
            }
        }
        if (!fits)
            continue;
        quota_ok = true;
        copy = sched_node_info_clone(ni);
        dry = sched_cycle_clone(cs);
        for (size_t v = 0; v < nvictims; v++) {
            (void)sched_node_info_remove_pod(copy, victims[v]);
            (void)sched_handle_run_remove_pod(pl->h, dry, pod, victims[v], copy, NULL);
        }
        if (sched_handle_run_filters(pl->h, dry, pod, copy, NULL) == SCHED_SUCCESS)
            node = xstrdup(ni->name);
        sched_cycle_free(dry);
        sched_node_info_free(copy);
    }
    if (node) {
        struct kube_client *kc = sched_handle_client(pl->h);
        struct kube_recorder *rec = sched_handle_recorder(pl->h);
        for (size_t v = 0; v < nvictims && kc; v++) {
            struct kube_status kst;
            int r = kube_delete(kc, &kube_res_pods, victims[v]->namespace, victims[v]->name, &kst);
            if (r < 0 && r != -ENOENT)
                log_warn("sched", "preempting pod %s for %s failed: %s", victims[v]->key, pod->key,
                         kst.message);
            else if (rec) {
                cJSON *ref = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(ref, "metadata");
                cJSON_AddStringToObject(ref, "apiVersion", "v1");
                cJSON_AddStringToObject(ref, "kind", "Pod");
                cJSON_AddStringToObject(meta, "name", victims[v]->name);
                cJSON_AddStringToObject(meta, "namespace", victims[v]->namespace);
                cJSON_AddStringToObject(meta, "uid", victims[v]->uid);
                (void)kube_recorder_event(rec, ref, KUBE_EVENT_NORMAL, "Preempted",
                                          "Preempted by pod %s on node %s", pod->uid, node);
                cJSON_Delete(ref);
            }
        }
        res->nominated_node = node;
    }
    for (size_t c = 0; c < ncand; c++)
        sched_pod_unref(cand[c]);
    free(cand);
    free(victims);
    if (node)
        return SCHED_SUCCESS;
    /* Unresolvable: evicting pods of other quotas (DefaultPreemption next) would not help. */
    return sched_status_set(st, SCHED_UNRESOLVABLE, "%s",
                            quota_ok ? "preemption: no node admits the pod without its victims"
                                     : "preemption: not enough lower-priority pods in its quota");
}

/* ---- writing back ---- */

/* The patch of one quota: status.used and the runtime/request annotations (JSON text). */
static char *quota_patch(const struct eq *pl, const struct eq_quota *q)
{
    cJSON *p = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(p, "metadata");
    cJSON *ann = cJSON_AddObjectToObject(meta, "annotations");
    cJSON *status = cJSON_AddObjectToObject(p, "status"), *j;
    uint64_t mask = q->spec.max_mask;
    char *s;

    cJSON_AddItemToObject(status, "used", eq_res_json(&q->used, mask));
    if (q->has_runtime) {
        j = eq_res_json(limit_of(pl, q), mask);
        s = cJSON_PrintUnformatted(j);
        cJSON_AddStringToObject(ann, EQ_ANN_RUNTIME, s);
        cJSON_free(s);
        cJSON_Delete(j);
    }
    j = eq_res_json(&q->request, mask);
    s = cJSON_PrintUnformatted(j);
    cJSON_AddStringToObject(ann, EQ_ANN_REQUEST, s);
    cJSON_free(s);
    cJSON_Delete(j);
    s = cJSON_PrintUnformatted(p);
    cJSON_Delete(p);
    return s;
}

struct eq_write {
    char *ns, *name, *patch;
};

static bool stopping(struct eq *pl)
{
    bool stop;

    CHECK(pthread_mutex_lock(&pl->mu) == 0);
    stop = pl->stop;
    CHECK(pthread_mutex_unlock(&pl->mu) == 0);
    return stop;
}

static void write_back(struct eq *pl, struct kube_client *kc)
{
    struct eq_write *w = NULL;
    struct eq_quota **v;
    struct eq_note *notes;
    size_t n, nw = 0;

    CHECK(pthread_mutex_lock(&pl->mu) == 0);
    refresh(pl);
    n = eq_tree_list(pl->tree, &v);
    for (size_t i = 0; i < n; i++) {
        struct eq_qstate *qs = hmap_get(&pl->qstates, v[i]->spec.name);
        char *patch;
        if (!qs || !qs->from_api)
            continue;
        patch = quota_patch(pl, v[i]);
        if (qs->written && !strcmp(qs->written, patch)) {
            cJSON_free(patch);
            continue;
        }
        free(qs->written);
        qs->written = xstrdup(patch);
        w = xrealloc(w, (nw + 1) * sizeof(*w));
        w[nw].ns = xstrdup(v[i]->spec.namespace);
        w[nw].name = xstrdup(v[i]->spec.name);
        w[nw].patch = xstrdup(patch);
        cJSON_free(patch);
        nw++;
    }
    free(v);
    notes = pl->notes;
    pl->notes = NULL;
    pl->notes_tail = &pl->notes;
    CHECK(pthread_mutex_unlock(&pl->mu) == 0);

    for (size_t i = 0; i < nw; i++) {
        cJSON *patch = cJSON_Parse(w[i].patch);
        struct kube_status kst;
        int r =
            kube_patch(kc, &eq_res, w[i].ns, w[i].name, NULL, KUBE_PATCH_MERGE, patch, NULL, &kst);
        if (r < 0 && r != -ENOENT)
            log_warn("sched", "writing the status of ElasticQuota %s/%s failed: %s, retrying",
                     w[i].ns, w[i].name, kst.message);
        if (r < 0 && r != -ENOENT) {
            /* Forget what was written so that the next pass tries again. */
            struct eq_qstate *qs;
            CHECK(pthread_mutex_lock(&pl->mu) == 0);
            if ((qs = hmap_get(&pl->qstates, w[i].name))) {
                free(qs->written);
                qs->written = NULL;
            }
            CHECK(pthread_mutex_unlock(&pl->mu) == 0);
        }
        cJSON_Delete(patch);
        free(w[i].ns);
        free(w[i].name);
        free(w[i].patch);
    }
    free(w);
    while (notes) {
        struct eq_note *next = notes->next;
        cJSON *patch, *status, *conds, *c;
        struct kube_status kst;
        char ts[32];
        time_t t = time(NULL);
        struct tm tm;
        int r;

        /* A pass may hold a note for each of thousands of pods that came to wait: a stopping
         * scheduler leaves the rest (the next leader notes its waiting pods again) instead of
         * writing them all before it can exit. */
        if (stopping(pl)) {
            sched_pod_unref(notes->pod);
            free(notes->message);
            free(notes);
            notes = next;
            continue;
        }
        patch = cJSON_CreateObject();
        status = cJSON_AddObjectToObject(patch, "status");
        conds = cJSON_AddArrayToObject(status, "conditions");
        c = cJSON_CreateObject();
        gmtime_r(&t, &tm);
        (void)strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
        cJSON_AddStringToObject(c, "type", "PodScheduled");
        cJSON_AddStringToObject(c, "status", "False");
        cJSON_AddNullToObject(c, "lastProbeTime");
        cJSON_AddStringToObject(c, "lastTransitionTime", ts);
        cJSON_AddStringToObject(c, "reason", EQ_WAIT_REASON);
        cJSON_AddStringToObject(c, "message", notes->message);
        cJSON_AddItemToArray(conds, c);
        r = kube_patch(kc, &kube_res_pods, notes->pod->namespace, notes->pod->name, "status",
                       KUBE_PATCH_STRATEGIC, patch, NULL, &kst);
        if (r < 0 && r != -ENOENT)
            log_warn("sched", "updating the PodScheduled condition of pod %s failed: %s, ignoring",
                     notes->pod->key, kst.message);
        cJSON_Delete(patch);
        sched_pod_unref(notes->pod);
        free(notes->message);
        free(notes);
        notes = next;
    }
}

void eq_plugin_tick(void *self, double now)
{
    struct eq *pl = self;
    struct eq_keys k = {0};
    struct hmap_entry *e;
    size_t it;
    bool expired = false;

    CHECK(pthread_mutex_lock(&pl->mu) == 0);
    for (e = hmap_first(&pl->pods, &it); e; e = hmap_next(&pl->pods, e, &it)) {
        struct eq_pod *ep = e->value;
        if (ep->admitted && now - ep->admitted_at > EQ_ADMIT_TTL_S) {
            unadmit(pl, ep);
            expired = true;
        }
    }
    /* Pods that came to wait while the room was briefly larger than when the last pick found
     * nothing (an admission ended without an event) are looked at once a second. */
    for (e = hmap_first(&pl->qstates, &it); e; e = hmap_next(&pl->qstates, e, &it)) {
        struct eq_qstate *qs = e->value;
        expired |= qs->stuck && qs->waiting.n;
        qs->stuck = false;
    }
    if (expired)
        pick_all(pl, now, &k);
    CHECK(pthread_mutex_unlock(&pl->mu) == 0);
    activate(pl, &k);
}

static void *eq_main(void *arg)
{
    struct eq *pl = arg;
    struct kube_client *kc = sched_handle_client(pl->h);

    CHECK(pthread_mutex_lock(&pl->mu) == 0);
    while (!pl->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += 1;
        (void)pthread_cond_timedwait(&pl->cond, &pl->mu, &ts);
        if (pl->stop)
            break;
        CHECK(pthread_mutex_unlock(&pl->mu) == 0);
        /* Before the informers synced there is nothing true to write; a standby writes
         * nothing (the leader does). */
        if (kube_informer_has_synced(pl->inf) && sched_handle_leading(pl->h)) {
            write_back(pl, kc);
            eq_plugin_tick(pl, mono());
        }
        CHECK(pthread_mutex_lock(&pl->mu) == 0);
    }
    CHECK(pthread_mutex_unlock(&pl->mu) == 0);
    return NULL;
}

int eq_plugin_describe(void *self, const char *quota, struct strbuf *out)
{
    struct eq *pl = self;
    struct eq_quota *q;
    struct eq_qstate *qs;
    int r = 0;

    CHECK(pthread_mutex_lock(&pl->mu) == 0);
    refresh(pl);
    q = eq_tree_get(pl->tree, quota);
    if (!q) {
        r = -ENOENT;
        goto out;
    }
    qs = hmap_get(&pl->qstates, quota);
    strbuf_addstr(out, "used=");
    eq_res_format(&q->used, q->spec.max_mask, out);
    strbuf_addstr(out, " runtime=");
    eq_res_format(&q->runtime, q->spec.max_mask, out);
    strbuf_addstr(out, " request=");
    eq_res_format(&q->request, q->spec.max_mask, out);
    strbuf_addf(out, " waiting=%zu admitted=", qs ? qs->waiting.n : 0);
    {
        struct sched_res zero = {0};
        eq_res_format(qs ? &qs->admitted : &zero, q->spec.max_mask, out);
    }
out:
    CHECK(pthread_mutex_unlock(&pl->mu) == 0);
    return r;
}

/* ---- args ---- */

static void eq_bad(struct field_errors *errs, const char *path, const char *field,
                   const cJSON *value, const char *detail)
{
    struct strbuf p = STRBUF_INIT, v = STRBUF_INIT;

    strbuf_addf(&p, "%s%s%s", path, *path ? "." : "", field);
    api_value_repr(value, &v);
    field_error_add(errs, FIELD_INVALID, p.buf, v.buf, "%s", detail);
    strbuf_release(&p);
    strbuf_release(&v);
}

static void arg_bool(const cJSON *args, const char *path, const char *name, bool *v,
                     struct field_errors *errs)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(args, name);

    if (!m || cJSON_IsNull(m))
        return;
    if (!cJSON_IsBool(m))
        eq_bad(errs, path, name, m, "must be a boolean");
    else
        *v = cJSON_IsTrue(m);
}

static void arg_duration(const cJSON *args, const char *path, const char *name, int64_t *v,
                         struct field_errors *errs)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(args, name);
    int64_t ns;

    if (!m || cJSON_IsNull(m))
        return;
    if (!cJSON_IsString(m) || duration_parse(m->valuestring, &ns) < 0)
        eq_bad(errs, path, name, m, "must be a duration such as \"120s\"");
    else if (ns < 0)
        eq_bad(errs, path, name, m, "must not be negative");
    else
        *v = ns;
}

static void arg_res(const cJSON *args, const char *path, const char *name, struct sched_res *r,
                    uint64_t *mask, struct field_errors *errs)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(args, name), *e;

    if (!m || cJSON_IsNull(m))
        return;
    if (!cJSON_IsObject(m)) {
        eq_bad(errs, path, name, m, "must be a map of resource names to quantities");
        return;
    }
    memset(r, 0, sizeof(*r));
    *mask = 0;
    cJSON_ArrayForEach(e, m)
    {
        struct quantity qty;
        struct strbuf f = STRBUF_INIT;
        int64_t x;
        int i;

        strbuf_addf(&f, "%s[%s]", name, e->string);
        if (!cJSON_IsString(e) || quantity_parse(e->valuestring, &qty) < 0 ||
            quantity_sign(&qty) < 0) {
            eq_bad(errs, path, f.buf, e, "must be a non-negative quantity");
        } else if ((i = sched_res_index(e->string)) >= 0) {
            if (i == SCHED_RES_CPU)
                (void)quantity_milli(&qty, &x);
            else
                (void)quantity_value(&qty, &x);
            r->v[i] = x;
            *mask |= UINT64_C(1) << i;
        }
        strbuf_release(&f);
    }
}

static void eq_free(void *self)
{
    struct eq *pl = self;
    struct hmap_entry *e;
    size_t it;

    if (!pl)
        return;
    if (pl->running) {
        CHECK(pthread_mutex_lock(&pl->mu) == 0);
        pl->stop = true;
        (void)pthread_cond_signal(&pl->cond);
        CHECK(pthread_mutex_unlock(&pl->mu) == 0);
        (void)pthread_join(pl->thread, NULL);
    }
    /* The scheduler stopped the informer before freeing plugins. */
    kube_informer_free(pl->inf);
    for (e = hmap_first(&pl->pods, &it); e; e = hmap_next(&pl->pods, e, &it)) {
        struct eq_pod *ep = e->value;
        sched_pod_unref(ep->pod);
        free(ep->quota);
        free(ep);
    }
    hmap_release(&pl->pods);
    for (e = hmap_first(&pl->nodes, &it); e; e = hmap_next(&pl->nodes, e, &it))
        free(e->value);
    hmap_release(&pl->nodes);
    for (e = hmap_first(&pl->qstates, &it); e; e = hmap_next(&pl->qstates, e, &it))
        qstate_free(e->value);
    hmap_release(&pl->qstates);
    while (pl->notes) {
        struct eq_note *n = pl->notes;
        pl->notes = n->next;
        sched_pod_unref(n->pod);
        free(n->message);
        free(n);
    }
    eq_tree_free(pl->tree);
    free(pl->args.quota_ns);
    pthread_mutex_destroy(&pl->mu);
    pthread_cond_destroy(&pl->cond);
    free(pl);
}

static int eq_init(const cJSON *args, const char *path, struct sched_handle *h, void **ret_self,
                   struct field_errors *errs)
{
    static const char *const known[] = {
        "apiVersion",
        "kind",
        "delayEvictTime",
        "revokePodInterval",
        "defaultQuotaGroupMax",
        "systemQuotaGroupMax",
        "quotaGroupNamespace",
        "monitorAllQuotas",
        "enableCheckParentQuota",
        "enableRuntimeQuota",
        "enableMinQuotaScale",
        "disableDefaultQuotaPreemption",
        "enableQueueHint",
        "quotaSnapshotUpdateInterval",
        "hookPlugins",
        NULL,
    };
    struct eq *pl = xcalloc(1, sizeof(*pl));
    size_t nerr = field_errors_count(errs);
    struct kube_client *kc = h ? sched_handle_client(h) : NULL;
    const cJSON *m;
    pthread_condattr_t ca;

    pl->h = h;
    pthread_mutex_init(&pl->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&pl->cond, &ca);
    pthread_condattr_destroy(&ca);
    hmap_init(&pl->pods);
    hmap_init(&pl->nodes);
    hmap_init(&pl->qstates);
    pl->notes_tail = &pl->notes;
    pl->tree = eq_tree_new();
    pl->args.delay_evict_ns = 120LL * 1000000000;
    pl->args.revoke_interval_ns = 1LL * 1000000000;
    pl->args.snapshot_interval_ns = 120LL * 1000000000;
    pl->args.default_max.v[SCHED_RES_CPU] = EQ_MAX_INT64_DIV;
    pl->args.default_max.v[SCHED_RES_MEMORY] = EQ_MAX_INT64_DIV;
    pl->args.default_mask = UINT64_C(1) << SCHED_RES_CPU | UINT64_C(1) << SCHED_RES_MEMORY;
    pl->args.system_max = pl->args.default_max;
    pl->args.system_mask = pl->args.default_mask;
    pl->args.runtime_quota = true;
    pl->args.min_scale = true;
    pl->args.no_default_preemption = true;
    if (!args || cJSON_IsNull(args))
        goto defaults;
    if (!cJSON_IsObject(args)) {
        field_error_add(errs, FIELD_INVALID, path, NULL, "must be an object");
        goto out;
    }
    cJSON_ArrayForEach(m, args)
    {
        const char *const *k = known;
        while (*k && strcmp(*k, m->string))
            k++;
        if (!*k) {
            struct strbuf f = STRBUF_INIT;
            strbuf_addf(&f, "%s%s%s", path, *path ? "." : "", m->string);
            field_error_add(errs, FIELD_UNKNOWN, f.buf, NULL, "unknown field \"%s\"", f.buf);
            strbuf_release(&f);
        }
    }
    arg_duration(args, path, "delayEvictTime", &pl->args.delay_evict_ns, errs);
    arg_duration(args, path, "revokePodInterval", &pl->args.revoke_interval_ns, errs);
    arg_duration(args, path, "quotaSnapshotUpdateInterval", &pl->args.snapshot_interval_ns, errs);
    arg_res(args, path, "defaultQuotaGroupMax", &pl->args.default_max, &pl->args.default_mask,
            errs);
    arg_res(args, path, "systemQuotaGroupMax", &pl->args.system_max, &pl->args.system_mask, errs);
    arg_bool(args, path, "monitorAllQuotas", &pl->args.monitor_all, errs);
    arg_bool(args, path, "enableCheckParentQuota", &pl->args.check_parent, errs);
    arg_bool(args, path, "enableRuntimeQuota", &pl->args.runtime_quota, errs);
    arg_bool(args, path, "enableMinQuotaScale", &pl->args.min_scale, errs);
    arg_bool(args, path, "disableDefaultQuotaPreemption", &pl->args.no_default_preemption, errs);
    arg_bool(args, path, "enableQueueHint", &pl->args.queue_hint, errs);
    m = cJSON_GetObjectItemCaseSensitive(args, "quotaGroupNamespace");
    if (m && !cJSON_IsNull(m)) {
        if (!cJSON_IsString(m))
            eq_bad(errs, path, "quotaGroupNamespace", m, "must be a string");
        else if (*m->valuestring)
            pl->args.quota_ns = xstrdup(m->valuestring);
    }
    m = cJSON_GetObjectItemCaseSensitive(args, "hookPlugins");
    if (m && !cJSON_IsNull(m) && (!cJSON_IsArray(m) || cJSON_GetArraySize(m) > 0))
        eq_bad(errs, path, "hookPlugins", m, "hook plugins are not supported by koord scheduler");
defaults:
    if (!pl->args.quota_ns)
        pl->args.quota_ns = xstrdup("koordinator-system");
    put_builtin(pl, EQ_DEFAULT_QUOTA);
    put_builtin(pl, EQ_SYSTEM_QUOTA);
    pl->dirty = true;
out:
    if (field_errors_count(errs) > nerr) {
        eq_free(pl);
        return -EINVAL;
    }
    if (kc) {
        struct kube_handlers hs = {on_quota_add, on_quota_update, on_quota_delete, pl};
        pl->inf = kube_informer_new(
            kc, &(struct kube_informer_opts){.resource = &eq_res, .drop_managed_fields = true});
        if (kube_informer_add_handlers(pl->inf, &hs) < 0) {
            eq_free(pl);
            return -ENOMEM;
        }
        sched_handle_add_informer(h, pl->inf);
        pl->running = pthread_create(&pl->thread, NULL, eq_main, pl) == 0;
    }
    *ret_self = pl;
    return 0;
}

/*
 * No cluster events: the pods this plugin refuses wait for its own activation (an event of
 * their quota), not for node or pod events, which would re-run PreEnqueue for every waiting pod.
 */
static const struct sched_event_reg eq_events[] = {{NULL, 0}};

const struct sched_plugin sched_plugin_elastic_quota = {
    .name = EQ_NAME,
    .args_kind = "ElasticQuotaArgs",
    .default_weight = 0,
    .events = eq_events,
    .init = eq_init,
    .free = eq_free,
    .pre_enqueue = eq_pre_enqueue,
    .pre_filter = eq_pre_filter,
    .post_filter = eq_post_filter,
    .reserve = eq_reserve,
    .unreserve = eq_unreserve,
    .pod_event = eq_pod_event,
    .node_event = eq_node_event,
};
