/*
 * Reservation (Koordinator pkg/scheduler/plugins/reservation; reference
 * koordlet-and-scheduler.md 5.3, scheduler.md 8.4): the plugin side of scheduling a Reservation.
 * The scheduler turns a pending Reservation into its reserve pod (sched/reservation/) and queues
 * it like any pod, so every Filter and Score of the profile places it; this plugin keeps a
 * reserve pod on the node its template names, and binds it by writing the Reservation's status
 * (phase Available, nodeName, allocatable, the Scheduled and Ready conditions) instead of
 * creating a binding. Real pods it leaves to the next binder (Bind returns Skip). A reserve pod
 * that fits nowhere preempts nobody unless the args say so.
 */
#include "sched/plugins/reservation/reservation.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/field.h"
#include "api/schema.h"
#include "base/base.h"
#include "base/hmap.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "kube/client.h"
#include "sched/framework/framework.h"
#include "sched/reservation/owners.h"
#include "sched/reservation/rcache.h"
#include "sched/reservation/reserve_pod.h"

struct resv {
    struct sched_handle *h;
    struct sched_reservation_args args;
};

/* ---- args ---- */

static void bad(struct field_errors *errs, const char *path, const char *field, const cJSON *v,
                const char *detail)
{
    struct strbuf p = STRBUF_INIT, r = STRBUF_INIT;

    strbuf_addf(&p, "%s%s%s", path, *path ? "." : "", field);
    api_value_repr(v, &r);
    field_error_add(errs, FIELD_INVALID, p.buf, r.buf, "%s", detail);
    strbuf_release(&p);
    strbuf_release(&r);
}

/* An integer member in [min, max]; absent or null leaves *v. */
static void int_member(const cJSON *args, const char *path, const char *name, int64_t min,
                       int64_t max, int64_t *v, struct field_errors *errs)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(args, name);

    if (!m || cJSON_IsNull(m))
        return;
    if (!cJSON_IsNumber(m) || m->valuedouble != floor(m->valuedouble) ||
        m->valuedouble < (double)min || m->valuedouble > (double)max) {
        char detail[96];
        (void)snprintf(detail, sizeof(detail), "must be an integer in [%lld, %lld]", (long long)min,
                       (long long)max);
        bad(errs, path, name, m, detail);
        return;
    }
    *v = (int64_t)m->valuedouble;
}

static void bool_member(const cJSON *args, const char *path, const char *name, bool *v,
                        struct field_errors *errs)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(args, name);

    if (!m || cJSON_IsNull(m))
        return;
    if (!cJSON_IsBool(m)) {
        bad(errs, path, name, m, "must be a boolean");
        return;
    }
    *v = cJSON_IsTrue(m);
}

/* Members of an object that koord accepts for compatibility and does not act on: their type
 * is still checked. */
static void typed_member(const cJSON *args, const char *path, const char *name, int type,
                         const char *what, struct field_errors *errs)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(args, name);

    if (m && !cJSON_IsNull(m) && !(m->type & type))
        bad(errs, path, name, m, what);
}

int sched_reservation_args_decode(const cJSON *args, const char *path,
                                  struct sched_reservation_args *ret, struct field_errors *errs)
{
    static const char *const known[] = {
        "apiVersion",
        "kind",
        "enablePreemption",
        "minCandidateNodesPercentage",
        "minCandidateNodesAbsolute",
        "controllerWorkers",
        "gcDurationSeconds",
        "gcIntervalSeconds",
        "resyncIntervalSeconds",
        "disableGarbageCollection",
        "preAllocationConfig",
        "ignoredResources",
        "ignoredResourceGroups",
        "reservationSelectorIndex",
        NULL,
    };
    size_t nerr = field_errors_count(errs);
    int64_t pct = 10, abs = 100, workers = 1, gcd = 86400, gci = 60, resync = 60;
    const cJSON *m;

    *ret = (struct sched_reservation_args){0};
    if (args && !cJSON_IsNull(args) && !cJSON_IsObject(args)) {
        field_error_add(errs, FIELD_INVALID, path, NULL, "must be an object");
        return -EINVAL;
    }
    for (m = args && cJSON_IsObject(args) ? args->child : NULL; m; m = m->next) {
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
    if (cJSON_IsObject(args)) {
        bool_member(args, path, "enablePreemption", &ret->enable_preemption, errs);
        int_member(args, path, "minCandidateNodesPercentage", 0, 100, &pct, errs);
        int_member(args, path, "minCandidateNodesAbsolute", 0, INT32_MAX, &abs, errs);
        int_member(args, path, "controllerWorkers", 1, 1024, &workers, errs);
        int_member(args, path, "gcDurationSeconds", 1, INT32_MAX, &gcd, errs);
        int_member(args, path, "gcIntervalSeconds", 1, INT32_MAX, &gci, errs);
        int_member(args, path, "resyncIntervalSeconds", 1, INT32_MAX, &resync, errs);
        bool_member(args, path, "disableGarbageCollection", &ret->disable_gc, errs);
        typed_member(args, path, "preAllocationConfig", cJSON_Object, "must be an object", errs);
        typed_member(args, path, "reservationSelectorIndex", cJSON_Object, "must be an object",
                     errs);
        typed_member(args, path, "ignoredResources", cJSON_Array, "must be a list", errs);
        typed_member(args, path, "ignoredResourceGroups", cJSON_Array, "must be a list", errs);
    }
    ret->min_candidate_nodes_pct = (int32_t)pct;
    ret->min_candidate_nodes_abs = (int32_t)abs;
    ret->controller_workers = (int32_t)workers;
    ret->gc_duration_s = gcd;
    ret->gc_interval_s = gci;
    ret->resync_interval_s = resync;
    return field_errors_count(errs) > nerr ? -EINVAL : 0;
}

/* ---- the plugin ---- */

static int resv_init(const cJSON *args, const char *path, struct sched_handle *h, void **ret_self,
                     struct field_errors *errs)
{
    struct resv *r = xcalloc(1, sizeof(*r));

    r->h = h;
    if (sched_reservation_args_decode(args, path, &r->args, errs) < 0) {
        free(r);
        return -EINVAL;
    }
    *ret_self = r;
    return 0;
}

static void resv_free(void *self)
{
    free(self);
}

/* ---- what a pod may use: PreFilter's state ---- */

/* The Reservations a pod may use on one node (indexes into the state's views). */
struct node_resv {
    size_t *idx;
    size_t n;
};

struct resv_state {
    struct sched_rcache_view *views;
    size_t nviews;
    struct hmap nodes; /* node name -> struct node_resv * */
    bool required;     /* the pod has a reservation affinity: it must use one */
    int64_t min_order; /* the lowest reservation-order among them (0: none has one) */
};

static void resv_state_free(void *data)
{
    struct resv_state *rs = data;
    struct hmap_entry *e;
    size_t it;

    for (e = hmap_first(&rs->nodes, &it); e; e = hmap_next(&rs->nodes, e, &it)) {
        struct node_resv *nr = e->value;
        free(nr->idx);
        free(nr);
    }
    hmap_release(&rs->nodes);
    sched_rcache_views_free(rs->views, rs->nviews);
    free(rs);
}

static const struct sched_state_type resv_state_type = {"Reservation", resv_state_free, NULL};

/* The Reservation Reserve placed the pod into (for Unreserve and PreBind). */
struct resv_chosen {
    char *name, *uid;
};

static void resv_chosen_free(void *data)
{
    struct resv_chosen *c = data;

    free(c->name);
    free(c->uid);
    free(c);
}

static const struct sched_state_type resv_chosen_type = {"Reservation/chosen", resv_chosen_free,
                                                         NULL};

/* Whether the pod fits in what the Reservation has left, for every resource it reserves
 * (the Restricted policy's rule). */
static bool fits_within(const struct sched_rcache_view *v, const struct sched_pod *pod)
{
    for (int i = 0; i < sched_res_count(); i++)
        if (v->reserved.v[i] > 0 && pod->req.v[i] > v->reserved.v[i] - v->allocated.v[i])
            return false;
    return true;
}

/* Whether the pod (p) may use r at all, as far as that is known without its node: most pods
 * own no Reservation, and this keeps their cycle from copying and looking up every one. */
static bool may_use(const struct sched_resv *r, const void *p)
{
    const struct sched_resv_pod *rp = p;

    return sched_resv_is_active(r) && (rp->ignored || sched_resv_match_owners(r, rp));
}

/*
 * PreFilter (Koordinator's BeforePreFilter + PreFilter): the HOLDING Reservations the pod
 * matches, node by node, and for each such node the NodeInfo the cycle sees instead of the
 * snapshot's: their reserve pods (what they have left) no longer count as used. Left out:
 * allocateOnce ones that have an owner already (they turn Succeeded next), and Restricted ones
 * the pod does not fit within. A reserve pod uses no Reservation.
 */
static enum sched_code resv_pre_filter(void *self, struct sched_cycle *cs,
                                       const struct sched_pod *pod,
                                       struct sched_prefilter_result *res, struct sched_status *st)
{
    struct resv *r = self;
    struct sched_rcache *rc = sched_handle_reservations(r->h);
    const struct sched_snapshot *snap = sched_handle_snapshot(r->h);
    bool required = pod->resv && pod->resv->has_affinity && !pod->reservation;
    struct resv_state *rs;
    struct hmap_entry *e;
    size_t it, nmatched = 0;

    (void)res;
    if (pod->resv && pod->resv->invalid)
        return sched_status_set(st, SCHED_UNRESOLVABLE, "%s", pod->resv->invalid);
    if (pod->reservation || !rc || !sched_rcache_count(rc)) {
        if (required)
            return sched_status_set(st, SCHED_UNRESOLVABLE,
                                    "node(s) no reservations match reservation affinity");
        return SCHED_SUCCESS;
    }
    rs = xcalloc(1, sizeof(*rs));
    hmap_init(&rs->nodes);
    rs->required = required;
    if (pod->resv)
        rs->nviews = sched_rcache_views(rc, may_use, pod->resv, &rs->views);
    for (size_t i = 0; i < rs->nviews; i++) {
        const struct sched_rcache_view *v = &rs->views[i];
        const struct sched_node_info *ni;
        enum sched_resv_match m;
        struct node_resv *nr;

        if (!(ni = snap ? sched_snapshot_get(snap, v->r->node_name) : NULL) || !ni->node)
            continue;
        m = sched_resv_match(v->r, pod->resv, &pod->req, ni->node->labels, NULL);
        if (m != SCHED_RESV_MATCHED && m != SCHED_RESV_IGNORED)
            continue;
        if (v->r->allocate_once && v->nowners)
            continue;
        if (v->r->allocate_policy == SCHED_RESV_POLICY_RESTRICTED && !fits_within(v, pod))
            continue;
        if (!(nr = hmap_get(&rs->nodes, ni->name))) {
            nr = xcalloc(1, sizeof(*nr));
            (void)hmap_put(&rs->nodes, ni->name, nr);
        }
        nr->idx = xrealloc(nr->idx, (nr->n + 1) * sizeof(*nr->idx));
        nr->idx[nr->n++] = i;
        if (v->order > 0 && (!rs->min_order || v->order < rs->min_order))
            rs->min_order = v->order;
        nmatched++;
    }
    if (required && !nmatched) {
        resv_state_free(rs);
        return sched_status_set(st, SCHED_UNRESOLVABLE,
                                "node(s) no reservations match reservation affinity");
    }
    /* The restore: each such node without the reserve pods of the Reservations it may use. */
    for (e = hmap_first(&rs->nodes, &it); e; e = hmap_next(&rs->nodes, e, &it)) {
        const struct node_resv *nr = e->value;
        struct sched_node_info *copy = sched_node_info_clone(sched_snapshot_get(snap, e->key));
        for (size_t k = 0; k < nr->n; k++)
            for (size_t j = 0; j < copy->npods; j++)
                if (!strcmp(sched_node_info_pod(copy, j)->uid, rs->views[nr->idx[k]].r->uid)) {
                    (void)sched_node_info_remove_pod_at(copy, j);
                    break;
                }
        sched_cycle_override_node(cs, copy);
    }
    sched_cycle_write(cs, &resv_state_type, rs);
    return SCHED_SUCCESS;
}

/*
 * Whether the pod fits the node using the Reservation v and free room (Aligned: the part it
 * does not find in the Reservation comes from the node, but from this one Reservation only).
 * ni is the restored NodeInfo: its free room counts every usable Reservation of the node, so the
 * others' remaining is taken off again.
 */
static bool fits_with(const struct resv_state *rs, const struct node_resv *nr, size_t k,
                      const struct sched_pod *pod, const struct sched_node_info *ni)
{
    for (int i = 0; i < sched_res_count(); i++) {
        int64_t free_room;
        if (pod->req.v[i] <= 0)
            continue;
        free_room = ni->node->allocatable.v[i] - ni->requested.v[i];
        for (size_t o = 0; o < nr->n; o++) {
            const struct sched_rcache_view *v = &rs->views[nr->idx[o]];
            int64_t left = v->reserved.v[i] - v->allocated.v[i];
            if (o != k && left > 0)
                free_room -= left;
        }
        if (pod->req.v[i] > free_room)
            return false;
    }
    return true;
}

/*
 * Filter: a reserve pod whose template names a node fits that node only. A pod that must use a
 * Reservation fits only nodes where one of them holds it (with free room, per policy); a pod
 * that may use some fits where one does, or where the node's free room alone does.
 */
static enum sched_code resv_filter(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                   const struct sched_node_info *ni, struct sched_status *st)
{
    const struct resv_state *rs = sched_cycle_read(cs, &resv_state_type);
    const struct node_resv *nr;

    (void)self;
    if (pod->reservation_node && strcmp(pod->reservation_node, ni->name))
        return sched_status_set(st, SCHED_UNRESOLVABLE,
                                "node(s) didn't match the nodeName specified by reservation");
    if (!rs || !ni->node)
        return SCHED_SUCCESS;
    if (!(nr = hmap_get(&rs->nodes, ni->name))) {
        if (rs->required)
            return sched_status_set(st, SCHED_UNRESOLVABLE,
                                    "node(s) no reservations match reservation affinity");
        return SCHED_SUCCESS;
    }
    for (size_t k = 0; k < nr->n; k++)
        if (fits_with(rs, nr, k, pod, ni))
            return SCHED_SUCCESS;
    if (!rs->required) {
        /* Without any Reservation: the free room of the node as the snapshot has it. */
        bool fits = true;
        for (int i = 0; i < sched_res_count() && fits; i++) {
            int64_t left = ni->node->allocatable.v[i] - ni->requested.v[i];
            for (size_t o = 0; o < nr->n; o++) {
                const struct sched_rcache_view *v = &rs->views[nr->idx[o]];
                if (v->reserved.v[i] > v->allocated.v[i])
                    left -= v->reserved.v[i] - v->allocated.v[i];
            }
            fits = pod->req.v[i] <= 0 || pod->req.v[i] <= left;
        }
        if (fits)
            return SCHED_SUCCESS;
    }
    return sched_status_set(st, SCHED_UNSCHEDULABLE,
                            "node(s) no reservation(s) to meet the requirements");
}

/* MostAllocated over what the Reservation reserves (scoreReservation): the fuller it gets with
 * the pod, the better. */
static int64_t most_allocated(const struct sched_rcache_view *v, const struct sched_pod *pod)
{
    int64_t sum = 0, n = 0;

    for (int i = 0; i < sched_res_count(); i++) {
        int64_t cap = v->reserved.v[i], used = pod->req.v[i] + v->allocated.v[i];
        if (cap <= 0)
            continue;
        n++;
        if (used <= cap)
            sum += used * SCHED_MAX_NODE_SCORE / cap;
    }
    return n ? sum / n : 0;
}

/* The Reservation a pod is placed into on a node (nominated): the only one; else the one with
 * the lowest reservation-order; else the fullest after the pod. -1 when none fits. */
static long nominate(const struct resv_state *rs, const struct sched_pod *pod,
                     const struct sched_node_info *ni)
{
    const struct node_resv *nr = hmap_get(&rs->nodes, ni->name);
    long best = -1;
    int64_t best_score = -1;

    if (!nr || !ni->node)
        return -1;
    for (size_t k = 0; k < nr->n; k++) {
        const struct sched_rcache_view *v = &rs->views[nr->idx[k]];
        int64_t score;
        if (!fits_with(rs, nr, k, pod, ni))
            continue;
        if (v->order > 0) {
            if (best < 0 || rs->views[nr->idx[best]].order == 0 ||
                v->order < rs->views[nr->idx[best]].order)
                best = (long)k;
            best_score = INT64_MAX;
            continue;
        }
        if (best_score == INT64_MAX)
            continue;
        score = most_allocated(v, pod);
        if (score > best_score) {
            best_score = score;
            best = (long)k;
        }
    }
    return best < 0 ? -1 : (long)nr->idx[best];
}

static enum sched_code resv_pre_score(void *self, struct sched_cycle *cs,
                                      const struct sched_pod *pod,
                                      struct sched_node_info *const *nodes, size_t n,
                                      struct sched_status *st)
{
    (void)self;
    (void)pod;
    (void)nodes;
    (void)n;
    (void)st;
    /* Nothing to prefer without Reservations the pod may use. */
    return sched_cycle_read(cs, &resv_state_type) ? SCHED_SUCCESS : SCHED_SKIP;
}

/* Score: 1000 for a node holding the Reservation of the lowest reservation-order, else the
 * nominated Reservation's MostAllocated; nodes without one 0. */
static enum sched_code resv_score(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                  const struct sched_node_info *ni, int64_t *ret_score,
                                  struct sched_status *st)
{
    const struct resv_state *rs = sched_cycle_read(cs, &resv_state_type);
    long v;

    (void)self;
    (void)st;
    *ret_score = 0;
    if (!rs || (v = nominate(rs, pod, ni)) < 0)
        return SCHED_SUCCESS;
    if (rs->min_order && rs->views[v].order == rs->min_order)
        *ret_score = 1000;
    else
        *ret_score = most_allocated(&rs->views[v], pod);
    return SCHED_SUCCESS;
}

/* Scores scaled to [0, 100] by the highest. */
static enum sched_code resv_normalize(void *self, struct sched_cycle *cs,
                                      const struct sched_pod *pod, struct sched_node_score *scores,
                                      size_t n, struct sched_status *st)
{
    int64_t max = 0;

    (void)self;
    (void)cs;
    (void)pod;
    (void)st;
    for (size_t i = 0; i < n; i++)
        if (scores[i].score > max)
            max = scores[i].score;
    for (size_t i = 0; max > 0 && i < n; i++)
        scores[i].score = scores[i].score * SCHED_MAX_NODE_SCORE / max;
    return SCHED_SUCCESS;
}

/* Reserve: the pod goes into the Reservation nominated on its node; the cache's reserve pod
 * shrinks by what it takes (rcache.h). */
static enum sched_code resv_reserve(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                    const char *node, struct sched_status *st)
{
    struct resv *r = self;
    const struct resv_state *rs = sched_cycle_read(cs, &resv_state_type);
    struct sched_rcache *rc = sched_handle_reservations(r->h);
    const struct sched_snapshot *snap = sched_handle_snapshot(r->h);
    struct sched_node_info *ni;
    struct resv_chosen *c;
    long v;

    (void)st;
    if (!rs || !rc || !snap || !pod->resv || pod->resv->ignored ||
        !(ni = sched_cycle_node(cs, sched_snapshot_get(snap, node))) ||
        (v = nominate(rs, pod, ni)) < 0)
        return SCHED_SUCCESS;
    c = xcalloc(1, sizeof(*c));
    c->name = xstrdup(rs->views[v].r->name);
    c->uid = xstrdup(rs->views[v].r->uid);
    sched_rcache_add_owner(rc, c->uid, pod->uid, &pod->req);
    sched_cycle_write(cs, &resv_chosen_type, c);
    return SCHED_SUCCESS;
}

static void resv_unreserve(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                           const char *node)
{
    struct resv *r = self;
    const struct resv_chosen *c = sched_cycle_read(cs, &resv_chosen_type);
    struct sched_rcache *rc = sched_handle_reservations(r->h);

    (void)node;
    if (c && rc)
        sched_rcache_remove_owner(rc, c->uid, pod->uid);
}

/* PreBind: the pod says which Reservation it took (annotation reservation-allocated), which is
 * what the controller and a restarted scheduler count. */
static enum sched_code resv_pre_bind(void *self, struct sched_cycle *cs,
                                     const struct sched_pod *pod, const char *node,
                                     struct sched_status *st)
{
    struct resv *r = self;
    const struct resv_chosen *c = sched_cycle_read(cs, &resv_chosen_type);
    struct kube_client *client = sched_handle_client(r->h);
    cJSON *patch, *value;
    struct kube_status kst = {0};
    char *v;
    int rc;

    (void)node;
    if (!c || !client)
        return SCHED_SUCCESS;
    value = cJSON_CreateObject();
    cJSON_AddStringToObject(value, "name", c->name);
    cJSON_AddStringToObject(value, "uid", c->uid);
    v = cJSON_PrintUnformatted(value);
    cJSON_Delete(value);
    CHECK(v);
    patch = cJSON_CreateObject();
    cJSON_AddStringToObject(
        cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "metadata"), "annotations"),
        SCHED_ANN_RESERVATION_ALLOCATED, v);
    cJSON_free(v);
    rc = kube_patch(client, &kube_res_pods, pod->namespace, pod->name, NULL, KUBE_PATCH_MERGE,
                    patch, NULL, &kst);
    cJSON_Delete(patch);
    if (rc < 0)
        return sched_status_set(st, SCHED_ERROR, "annotating pod %s with Reservation %s: %s",
                                pod->key, c->name, kst.message);
    return SCHED_SUCCESS;
}

/*
 * PostFilter (plugin.go): a reserve pod preempts nobody unless the args enable it. The Error
 * with no reason ends PostFilter before DefaultPreemption, which follows in the profile, and
 * adds nothing to the FitError.
 */
static enum sched_code resv_post_filter(void *self, struct sched_cycle *cs,
                                        const struct sched_pod *pod,
                                        const struct sched_node_statuses *m,
                                        struct sched_post_filter_result *res,
                                        struct sched_status *st)
{
    const struct resv *r = self;

    (void)cs;
    (void)m;
    (void)res;
    (void)st;
    if (pod->reservation && !r->args.enable_preemption)
        return SCHED_ERROR;
    return SCHED_UNSCHEDULABLE;
}

static void now_rfc3339(char *buf, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;

    gmtime_r(&t, &tm);
    (void)strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static cJSON *condition(const char *type, const char *reason, const char *ts)
{
    cJSON *c = cJSON_CreateObject();

    cJSON_AddStringToObject(c, "type", type);
    cJSON_AddStringToObject(c, "status", "True");
    cJSON_AddStringToObject(c, "reason", reason);
    cJSON_AddStringToObject(c, "lastProbeTime", ts);
    cJSON_AddStringToObject(c, "lastTransitionTime", ts);
    return c;
}

/* The Reservation bound to node (plugin.go Bind): status written with UpdateStatus, the
 * conditions Scheduled and Ready replaced, the others kept. */
static void set_bound(cJSON *o, const struct sched_pod *pod, const char *node)
{
    cJSON *status = cJSON_GetObjectItemCaseSensitive(o, "status"), *keep, *c;
    char ts[32];

    if (!cJSON_IsObject(status)) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, "status");
        status = cJSON_AddObjectToObject(o, "status");
    }
    now_rfc3339(ts, sizeof(ts));
    cJSON_DeleteItemFromObjectCaseSensitive(status, "phase");
    cJSON_AddStringToObject(status, "phase", "Available");
    cJSON_DeleteItemFromObjectCaseSensitive(status, "nodeName");
    cJSON_AddStringToObject(status, "nodeName", node);
    cJSON_DeleteItemFromObjectCaseSensitive(status, "allocatable");
    cJSON_AddItemToObject(status, "allocatable", sched_resv_allocatable(o, pod));
    keep = cJSON_CreateArray();
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(status, "conditions"))
    {
        const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "type"));
        if (t && (!strcmp(t, "Scheduled") || !strcmp(t, "Ready")))
            continue;
        cJSON_AddItemToArray(keep, cJSON_Duplicate(c, true));
    }
    cJSON_AddItemToArray(keep, condition("Scheduled", "Scheduled", ts));
    cJSON_AddItemToArray(keep, condition("Ready", "Available", ts));
    cJSON_DeleteItemFromObjectCaseSensitive(status, "conditions");
    cJSON_AddItemToObject(status, "conditions", keep);
}

static enum sched_code resv_bind(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                 const char *node, struct sched_status *st)
{
    struct resv *r = self;
    struct kube_client *c = sched_handle_client(r->h);

    (void)cs;
    if (!pod->reservation)
        return SCHED_SKIP;
    if (!c)
        return sched_status_set(st, SCHED_ERROR, "no API client to bind Reservation %s",
                                pod->reservation);
    for (int attempt = 0;; attempt++) {
        struct kube_status kst = {0};
        cJSON *o = NULL;
        const char *uid;
        int rc = kube_get(c, &sched_res_reservations, NULL, pod->reservation, &o, &kst);

        if (rc < 0)
            return sched_status_set(st, SCHED_ERROR, "getting Reservation %s: %s", pod->reservation,
                                    kst.message);
        uid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(o, "metadata"), "uid"));
        if (!uid || strcmp(uid, pod->uid) || sched_resv_state(o) != SCHED_RESV_UNASSIGNED) {
            cJSON_Delete(o);
            return sched_status_set(st, SCHED_ERROR, "reservation is not active");
        }
        set_bound(o, pod, node);
        rc = kube_update(c, &sched_res_reservations, NULL, o, "status", NULL, &kst);
        cJSON_Delete(o);
        if (rc == 0)
            return SCHED_SUCCESS;
        if (kst.code != 409 || attempt >= 4)
            return sched_status_set(st, SCHED_ERROR, "binding Reservation %s: %s", pod->reservation,
                                    kst.message);
    }
}

/* A pod this plugin rejected may fit once a Reservation it may use appears or changes, a pod
 * leaves one, or nodes change. */
static const struct sched_event_reg resv_events[] = {
    {SCHED_RESV_EVENT_RESOURCE, SCHED_ACT_ADD | SCHED_ACT_UPDATE},
    {"Pod", SCHED_ACT_DELETE},
    {"Node", SCHED_ACT_ADD | SCHED_ACT_UPDATE},
    {NULL, 0},
};

const struct sched_plugin sched_plugin_reservation = {
    .name = "Reservation",
    .args_kind = "ReservationArgs",
    .default_weight = 5000,
    .events = resv_events,
    .init = resv_init,
    .free = resv_free,
    .pre_filter = resv_pre_filter,
    .filter = resv_filter,
    .post_filter = resv_post_filter,
    .pre_score = resv_pre_score,
    .score = resv_score,
    .normalize = resv_normalize,
    .reserve = resv_reserve,
    .unreserve = resv_unreserve,
    .pre_bind = resv_pre_bind,
    .bind = resv_bind,
};
