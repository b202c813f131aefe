/*
 * The Reservation controller: see controller.h. Mirrors upstream
 * pkg/scheduler/plugins/reservation/controller/controller.go (sync, syncStatus, nextSyncTime),
 * garbage_collection.go and the condition helpers of pkg/util/reservation/reservation.go
 * (SetReservationExpired, SetReservationSucceeded), with the order of manager-behaviour.md 7.2.
 */
#include "sched/reservation/controller.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/duration.h"
#include "api/field.h"
#include "api/quantity.h"
#include "api/rfc3339.h"
#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "codec/patch.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "kube/workqueue.h"
#include "sched/config/config.h"
#include "sched/framework/types.h"
#include "sched/plugins/registry.h"
#include "sched/plugins/reservation/reservation.h"
#include "sched/reservation/owners.h"

#define COMP                    "reservation"
#define DEFAULT_SYNC_TIMEOUT_MS 60000
#define SYNC_SLICE_MS           50
#define MIN_REQUEUE_MS          3000  /* minRetryAfterTime */
#define MAX_REQUEUE_MS          15000 /* maxRetryAfterTime */
#define CONFLICT_RETRIES        5

static const struct kube_resource res_reservations = {"scheduling.koordinator.sh", "v1alpha1",
                                                      "reservations", "Reservation", false};

struct sched_resv_controller {
    struct kube_client *client;
    struct sched_resv_controller_opts o;

    pthread_mutex_t lifecycle; /* serialises start and stop */
    atomic_bool cancel;        /* stop() asks a start waiting for the caches to give up */
    bool running;
    struct kube_informer *resv_inf, *pods_inf, *nodes_inf;
    struct kube_workqueue *q;
    pthread_t *threads;
    unsigned nthreads;

    pthread_mutex_t gc_lock; /* guards gc_stop; gc_cond wakes the GC thread */
    pthread_cond_t gc_cond;
    bool gc_stop, gc_started;
    pthread_t gc_thread;

    pthread_mutex_t stats_lock;
    struct sched_resv_controller_stats stats;
};

/* ---- JSON helpers ---- */

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

static double real_now(void *unused)
{
    struct timespec ts;
    (void)unused;

    (void)clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_of(struct sched_resv_controller *c)
{
    return c->o.now(c->o.now_userdata);
}

/* A metav1.Time in seconds; false when absent or unparsable. */
static bool time_of(const cJSON *v, double *ret)
{
    int64_t sec;
    int32_t nsec;

    if (!cJSON_IsString(v) || rfc3339_parse(v->valuestring, &sec, &nsec) < 0)
        return false;
    *ret = (double)sec + nsec / 1e9;
    return true;
}

static void set_str(cJSON *o, const char *k, const char *v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, k);
    CHECK(cJSON_AddStringToObject(o, k, v));
}

static void count(struct sched_resv_controller *c, unsigned long *counter)
{
    (void)pthread_mutex_lock(&c->stats_lock);
    (*counter)++;
    (void)pthread_mutex_unlock(&c->stats_lock);
}

/* ---- args ---- */

int sched_resv_controller_args(const cJSON *args, struct sched_resv_controller_opts *ret,
                               struct strbuf *err)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct sched_reservation_args a;
    int r = sched_reservation_args_decode(args, "args", &a, &errs);

    for (size_t i = 0; err && i < errs.n; i++) {
        field_error_format(&errs.v[i], err);
        strbuf_addch(err, '\n');
    }
    field_errors_release(&errs);
    if (r < 0)
        return r;
    ret->workers = (unsigned)a.controller_workers;
    ret->gc_duration_s = a.gc_duration_s;
    ret->gc_interval_s = a.gc_interval_s;
    ret->disable_gc = a.disable_gc;
    return 0;
}

int sched_resv_controller_config(const struct sched_config *cfg, bool *ret_enabled,
                                 struct sched_resv_controller_opts *ret, struct strbuf *err)
{
    int id = sched_registry_find("Reservation");
    bool enabled = id < 0, have_args = false;
    int r = 0;

    for (size_t i = 0; id >= 0 && i < cfg->nprofiles; i++) {
        const struct sched_profile_config *p = &cfg->profiles[i];
        for (int pt = 0; pt < SCHED_PT_COUNT; pt++)
            for (size_t j = 0; j < p->npoints[pt]; j++)
                enabled |= p->points[pt][j].id == id;
        if (!have_args && id < (int)ARRAY_SIZE(p->args) && p->args[id]) {
            have_args = true;
            r = sched_resv_controller_args(p->args[id], ret, err);
        }
    }
    *ret_enabled = enabled;
    return r;
}

/* ---- event handlers ---- */

/* The reservation named by a pod's reservation-allocated annotation, enqueued. */
static void enqueue_allocated(struct sched_resv_controller *c, const struct kube_object *pod)
{
    const char *s = str_at(at(kube_object_json(pod), "metadata", "annotations"),
                           SCHED_RESV_ANN_ALLOCATED, NULL);
    cJSON *a = NULL;

    if (!*s || json_parse(s, strlen(s), NULL, &a, NULL) < 0)
        return;
    if (*str_at(a, "name", NULL))
        kube_workqueue_add(c->q, str_at(a, "name", NULL));
    cJSON_Delete(a);
}

static void on_pod_add(void *ud, const struct kube_object *o)
{
    enqueue_allocated(ud, o);
}

static void on_pod_update(void *ud, const struct kube_object *old, const struct kube_object *o)
{
    enqueue_allocated(ud, old);
    if (old != o)
        enqueue_allocated(ud, o);
}

static void on_resv_add(void *ud, const struct kube_object *o)
{
    struct sched_resv_controller *c = ud;

    kube_workqueue_add(c->q, kube_object_key(o));
}

/* Only what can change the outcome: generation, phase, nodeName (upstream's update filter). */
static void on_resv_update(void *ud, const struct kube_object *old, const struct kube_object *o)
{
    struct sched_resv_controller *c = ud;
    const cJSON *a = kube_object_json(old), *b = kube_object_json(o);

    if (!json_value_equal(at(a, "metadata", "generation"), at(b, "metadata", "generation")) ||
        strcmp(str_at(a, "status", "phase"), str_at(b, "status", "phase")) ||
        strcmp(str_at(a, "status", "nodeName"), str_at(b, "status", "nodeName")))
        kube_workqueue_add(c->q, kube_object_key(o));
}

/* A node went away: its reservations expire (and may be collected). */
static void on_node_delete(void *ud, const struct kube_object *node)
{
    struct sched_resv_controller *c = ud;
    struct kube_object **v = NULL;
    size_t n = kube_informer_list(c->resv_inf, NULL, &v);

    for (size_t i = 0; i < n; i++)
        if (!strcmp(str_at(kube_object_json(v[i]), "status", "nodeName"), kube_object_name(node)))
            kube_workqueue_add(c->q, kube_object_key(v[i]));
    kube_objects_free(v, n);
}

/* ---- conditions ---- */

static cJSON *condition(const char *reason, const char *ts)
{
    cJSON *cond = cJSON_CreateObject();

    CHECK(cond);
    set_str(cond, "type", "Ready");
    set_str(cond, "status", "False");
    set_str(cond, "reason", reason);
    set_str(cond, "lastProbeTime", ts);
    set_str(cond, "lastTransitionTime", ts);
    return cond;
}

static cJSON *conditions_of(cJSON *status)
{
    cJSON *conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");

    if (!cJSON_IsArray(conds)) {
        cJSON_DeleteItemFromObjectCaseSensitive(status, "conditions");
        conds = cJSON_AddArrayToObject(status, "conditions");
        CHECK(conds);
    }
    return conds;
}

/* The last Ready condition (upstream's loops keep the last index), or NULL. */
static cJSON *last_ready(cJSON *conds)
{
    cJSON *cond, *found = NULL;

    cJSON_ArrayForEach(cond, conds)
    {
        if (!strcmp(str_at(cond, "type", NULL), "Ready"))
            found = cond;
    }
    return found;
}

/* SetReservationExpired. */
static void set_expired(cJSON *status, const char *ts)
{
    cJSON *conds = conditions_of(status), *ready = last_ready(conds);

    set_str(status, "phase", "Failed");
    if (!ready)
        CHECK(cJSON_AddItemToArray(conds, condition("Expired", ts)));
    else if (!strcmp(str_at(ready, "status", NULL), "True"))
        CHECK(cJSON_ReplaceItemViaPointer(conds, ready, condition("Expired", ts)));
    else {
        set_str(ready, "reason", "Expired");
        set_str(ready, "lastProbeTime", ts);
    }
}

/* SetReservationSucceeded: an existing Ready condition keeps its lastTransitionTime. */
static void set_succeeded(cJSON *status, const char *ts)
{
    cJSON *conds = conditions_of(status), *ready = last_ready(conds);

    set_str(status, "phase", "Succeeded");
    if (!ready) {
        CHECK(cJSON_AddItemToArray(conds, condition("Succeeded", ts)));
        return;
    }
    set_str(ready, "status", "False");
    set_str(ready, "reason", "Succeeded");
    set_str(ready, "lastProbeTime", ts);
}

/* ---- sync ---- */

/* spec.ttl: 1 set (ns in *ret), 0 absent or unparsable. */
static int ttl_of(const cJSON *r, int64_t *ret)
{
    const cJSON *v = at(r, "spec", "ttl");

    return cJSON_IsString(v) && duration_parse(v->valuestring, ret) == 0;
}

/* isReservationNeedExpiration for a non-finished reservation. */
static bool need_expiration(const cJSON *r, double now)
{
    int64_t ttl;
    bool has_ttl = ttl_of(r, &ttl);
    double expires, created = 0;

    if (has_ttl && ttl == 0)
        return false; /* ttl 0 disables expiry, expires included */
    if (time_of(at(r, "spec", "expires"), &expires) && now > expires)
        return true;
    (void)time_of(at(r, "metadata", "creationTimestamp"), &created);
    return has_ttl && (now - created) * 1e9 > (double)ttl;
}

/* nextSyncTime, in ms; 0 = no requeue. */
static long next_sync_ms(const cJSON *r, double now)
{
    const char *phase = str_at(r, "status", "phase");
    double expires, created = 0, d;
    int64_t ttl;
    long ms;

    if (!strcmp(phase, "Failed") || !strcmp(phase, "Succeeded"))
        return 0;
    if (time_of(at(r, "spec", "expires"), &expires)) {
        d = expires - now;
    } else if (ttl_of(r, &ttl) && ttl > 0) {
        (void)time_of(at(r, "metadata", "creationTimestamp"), &created);
        d = created + (double)ttl / 1e9 - now;
    } else {
        return 0;
    }
    /* Upstream compares a time.Duration (ns) with 0: only an exact hit skips the requeue. */
    if ((int64_t)(d * 1e9) == 0)
        return 0;
    ms = d * 1000.0 < MIN_REQUEUE_MS   ? MIN_REQUEUE_MS
         : d * 1000.0 > MAX_REQUEUE_MS ? MAX_REQUEUE_MS
                                       : (long)(d * 1000.0);
    return ms;
}

static bool node_exists(struct sched_resv_controller *c, const char *name)
{
    struct kube_object *n = kube_informer_get(c->nodes_inf, name);

    (void)kube_object_unref(n);
    return n != NULL;
}

struct owner {
    const char *ns, *name, *uid;
};

static int owner_cmp(const void *a, const void *b)
{
    return strcmp(((const struct owner *)a)->uid, ((const struct owner *)b)->uid);
}

static int json_uid_cmp(const void *a, const void *b)
{
    return strcmp(str_at(*(cJSON *const *)a, "uid", NULL), str_at(*(cJSON *const *)b, "uid", NULL));
}

/* Whether status.currentOwners, sorted by uid, equals want (reflect.DeepEqual). */
static bool owners_equal(const cJSON *have, const cJSON *want)
{
    size_t n = (size_t)cJSON_GetArraySize(have), i = 0;
    cJSON **v;
    const cJSON *x, *w = want ? want->child : NULL;
    bool eq = n == (size_t)cJSON_GetArraySize(want);

    if (!eq || !n)
        return eq;
    v = xcalloc(n, sizeof(cJSON *));
    cJSON_ArrayForEach(x, have) v[i++] = (cJSON *)x;
    qsort(v, n, sizeof(cJSON *), json_uid_cmp);
    for (i = 0; i < n && eq; i++, w = w->next)
        eq = json_value_equal(v[i], w);
    free(v);
    return eq;
}

/* quotav1.Equals: same keys, equal quantities. */
static bool lists_equal(const cJSON *a, const cJSON *b)
{
    const cJSON *v;

    if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
        return false;
    cJSON_ArrayForEach(v, a)
    {
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(b, v->string);
        struct quantity x, y;
        if (!cJSON_IsString(v) || !cJSON_IsString(w) || quantity_parse(v->valuestring, &x) < 0 ||
            quantity_parse(w->valuestring, &y) < 0 || quantity_cmp(&x, &y))
            return false;
    }
    return true;
}

/*
 * Step 5: the owners on the node and what they took, as JSON: *ret_owners an array (sorted by
 * uid), *ret_alloc an object masked to allocatable's names (zero sums left out).
 */
static void actual_owners(struct sched_resv_controller *c, const cJSON *r, cJSON **ret_owners,
                          cJSON **ret_alloc)
{
    const char *uid = str_at(r, "metadata", "uid");
    const cJSON *allocatable = at(r, "status", "allocatable"), *a;
    struct kube_object **pods = NULL;
    size_t n = kube_informer_list_by_node(c->pods_inf, str_at(r, "status", "nodeName"), &pods);
    struct owner *owners = xcalloc(n ? n : 1, sizeof(*owners));
    struct sched_res sum = {{0}};
    size_t nowners = 0;
    cJSON *out = cJSON_CreateArray(), *alloc = cJSON_CreateObject();

    CHECK(out && alloc);
    /* Names only nodes intern: intern allocatable's first so pods' requests count them. */
    cJSON_ArrayForEach(a, allocatable)
    {
        (void)sched_res_index(a->string);
    }
    for (size_t i = 0; i < n; i++) {
        const cJSON *pod = kube_object_json(pods[i]);
        const char *s = str_at(at(pod, "metadata", "annotations"), SCHED_RESV_ANN_ALLOCATED, NULL);
        struct sched_pod *sp = NULL;
        cJSON *ann = NULL;
        bool mine;

        if (!*s || json_parse(s, strlen(s), NULL, &ann, NULL) < 0)
            continue;
        mine = !strcmp(str_at(ann, "uid", NULL), uid);
        cJSON_Delete(ann);
        if (!mine)
            continue;
        owners[nowners++] =
            (struct owner){str_at(pod, "metadata", "namespace"), str_at(pod, "metadata", "name"),
                           str_at(pod, "metadata", "uid")};
        CHECK(sched_pod_decode(pod, &sp) == 0);
        for (int k = 0; k < SCHED_RES_MAX; k++)
            sum.v[k] += sp->req.v[k];
        (void)sched_pod_unref(sp);
    }
    qsort(owners, nowners, sizeof(*owners), owner_cmp);
    for (size_t i = 0; i < nowners; i++) {
        cJSON *o = cJSON_CreateObject();
        CHECK(o);
        if (*owners[i].ns)
            set_str(o, "namespace", owners[i].ns);
        if (*owners[i].name)
            set_str(o, "name", owners[i].name);
        if (*owners[i].uid)
            set_str(o, "uid", owners[i].uid);
        CHECK(cJSON_AddItemToArray(out, o));
    }
    cJSON_ArrayForEach(a, allocatable)
    {
        int idx = sched_res_lookup(a->string);
        struct quantity q, fmt = {0};
        char buf[QUANTITY_STR_MAX];
        if (idx < 0 || !sum.v[idx])
            continue;
        if (cJSON_IsString(a))
            (void)quantity_parse(a->valuestring, &fmt);
        if (idx == SCHED_RES_CPU)
            quantity_from_milli(sum.v[idx], fmt.format, &q);
        else
            quantity_from_int(sum.v[idx], fmt.format, &q);
        (void)quantity_format(&q, buf);
        set_str(alloc, a->string, buf);
    }
    free(owners);
    kube_objects_free(pods, n);
    *ret_owners = out;
    *ret_alloc = alloc;
}

/* UpdateStatus with status as the new status. -ESTALE on a conflict. */
static int update_status(struct sched_resv_controller *c, const cJSON *r, cJSON *status)
{
    cJSON *upd = cJSON_Duplicate(r, true);
    struct kube_status st = {0};
    int ret;

    CHECK(upd);
    cJSON_DeleteItemFromObjectCaseSensitive(upd, "status");
    CHECK(cJSON_AddItemToObject(upd, "status", status));
    ret = kube_update(c->client, &res_reservations, NULL, upd, "status", NULL, &st);
    cJSON_Delete(upd);
    if (ret == -ESTALE)
        count(c, &c->stats.conflicts);
    else if (ret < 0)
        log_warn(COMP, "cannot update the status of reservation \"%s\": %s",
                 str_at(r, "metadata", "name"), st.message[0] ? st.message : err_str(ret));
    return ret;
}

static cJSON *status_copy(const cJSON *r)
{
    const cJSON *s = at(r, "status", NULL);
    cJSON *st = cJSON_IsObject(s) ? cJSON_Duplicate(s, true) : cJSON_CreateObject();

    CHECK(st);
    return st;
}

/* Steps 2-6 on one state of the reservation: 0 done (*ret_requeue_ms set), -ESTALE, -errno. */
static int sync_object(struct sched_resv_controller *c, const cJSON *r, long *ret_requeue_ms)
{
    const char *phase = str_at(r, "status", "phase"), *node = str_at(r, "status", "nodeName");
    const char *name = str_at(r, "metadata", "name");
    double now = now_of(c);
    char ts[RFC3339_STR_MAX];
    cJSON *owners = NULL, *alloc = NULL, *status;
    int ret;

    *ret_requeue_ms = 0;
    log_debug(COMP, "syncing reservation \"%s\": phase \"%s\", node \"%s\"", name, phase, node);
    if (!strcmp(phase, "Failed") || !strcmp(phase, "Succeeded"))
        return 0;
    if (!*node) {
        *ret_requeue_ms = next_sync_ms(r, now);
        return 0;
    }
    (void)rfc3339_format((int64_t)now, ts);
    if (need_expiration(r, now) || !node_exists(c, node)) {
        status = status_copy(r);
        set_expired(status, ts);
        if ((ret = update_status(c, r, status)) < 0)
            return ret;
        count(c, &c->stats.expired);
        log_info(COMP, "reservation \"%s\" expired%s", name,
                 node_exists(c, node) ? "" : " (its node is gone)");
        return 0;
    }
    actual_owners(c, r, &owners, &alloc);
    if (owners_equal(at(r, "status", "currentOwners"), owners) &&
        lists_equal(at(r, "status", "allocated"), alloc)) {
        cJSON_Delete(owners);
        cJSON_Delete(alloc);
        *ret_requeue_ms = next_sync_ms(r, now);
        return 0;
    }
    status = status_copy(r);
    cJSON_DeleteItemFromObjectCaseSensitive(status, "currentOwners");
    cJSON_DeleteItemFromObjectCaseSensitive(status, "allocated");
    /* Both are omitempty upstream. */
    if (cJSON_GetArraySize(owners))
        CHECK(cJSON_AddItemToObject(status, "currentOwners", owners));
    else
        cJSON_Delete(owners);
    if (cJSON_GetArraySize(alloc))
        CHECK(cJSON_AddItemToObject(status, "allocated", alloc));
    else
        cJSON_Delete(alloc);
    /* allocateOnce defaults to true. */
    if (!cJSON_IsFalse(at(r, "spec", "allocateOnce")))
        set_succeeded(status, ts);
    if ((ret = update_status(c, r, status)) < 0)
        return ret;
    count(c, &c->stats.owner_writes);
    if (!cJSON_IsFalse(at(r, "spec", "allocateOnce"))) {
        count(c, &c->stats.succeeded);
        log_info(COMP, "reservation \"%s\" succeeded (allocated once)", name);
        return 0;
    }
    *ret_requeue_ms = next_sync_ms(r, now);
    return 0;
}

/* Step 1 and the conflict loop: the cached state first, then fresh reads. */
static int sync_key(struct sched_resv_controller *c, const char *key, long *ret_requeue_ms)
{
    struct kube_object *cached = kube_informer_get(c->resv_inf, key);
    cJSON *fresh = NULL;
    const cJSON *r;
    int ret, i;

    *ret_requeue_ms = 0;
    if (!cached)
        return 0;
    r = kube_object_json(cached);
    for (i = 0;; i++) {
        struct kube_status st = {0};
        ret = sync_object(c, r, ret_requeue_ms);
        if (ret != -ESTALE || i == CONFLICT_RETRIES)
            break;
        cJSON_Delete(fresh);
        fresh = NULL;
        ret = kube_get(c->client, &res_reservations, NULL, key, &fresh, &st);
        if (ret == -ENOENT) {
            ret = 0;
            break;
        }
        if (ret < 0)
            break;
        r = fresh;
    }
    cJSON_Delete(fresh);
    (void)kube_object_unref(cached);
    return ret;
}

static void *worker(void *arg)
{
    struct sched_resv_controller *c = arg;
    char *key;

    while (kube_workqueue_get(c->q, &key) == 0) {
        long requeue_ms;
        int r = sync_key(c, key, &requeue_ms);

        if (r >= 0 && requeue_ms > 0)
            log_debug(COMP, "reservation \"%s\": next sync in %ld ms", key, requeue_ms);

        if (r < 0) {
            log_warn(COMP, "failed to sync reservation \"%s\": %s, retrying", key, err_str(r));
            kube_workqueue_add_rate_limited(c->q, key);
        } else {
            kube_workqueue_forget(c->q, key);
            if (requeue_ms > 0)
                kube_workqueue_add_after(c->q, key, requeue_ms);
        }
        kube_workqueue_done(c->q, key);
        (void)pthread_mutex_lock(&c->stats_lock);
        c->stats.syncs++;
        c->stats.errors += r < 0;
        (void)pthread_mutex_unlock(&c->stats_lock);
        free(key);
    }
    return NULL;
}

/* ---- garbage collection ---- */

/* IsReservationExpired: phase Failed and the first Ready condition False/Expired. */
static bool is_expired(const cJSON *r)
{
    const cJSON *cond;

    if (strcmp(str_at(r, "status", "phase"), "Failed"))
        return false;
    cJSON_ArrayForEach(cond, at(r, "status", "conditions"))
    {
        if (!strcmp(str_at(cond, "type", NULL), "Ready"))
            return !strcmp(str_at(cond, "status", NULL), "False") &&
                   !strcmp(str_at(cond, "reason", NULL), "Expired");
    }
    return false;
}

/* isReservationNeedCleanup: the first condition with the reason decides; none -> false. */
static bool aged(const cJSON *r, bool expired, double now, long gc_duration_s)
{
    const char *reason = expired ? "Expired" : "Succeeded";
    const char *field = expired ? "lastTransitionTime" : "lastProbeTime";
    const cJSON *cond;

    cJSON_ArrayForEach(cond, at(r, "status", "conditions"))
    {
        double t = 0; /* a missing time is Go's zero time: very old */
        if (strcmp(str_at(cond, "reason", NULL), reason))
            continue;
        (void)time_of(at(cond, field, NULL), &t);
        return now - t > (double)gc_duration_s;
    }
    return false;
}

static int gc_pass(struct sched_resv_controller *c)
{
    struct kube_object **v = NULL;
    size_t n = kube_informer_list(c->resv_inf, NULL, &v);
    double now = now_of(c);
    int deleted = 0;

    for (size_t i = 0; i < n; i++) {
        const cJSON *r = kube_object_json(v[i]);
        const char *node = str_at(r, "status", "nodeName");
        bool expired = is_expired(r), gone;
        struct kube_status st = {0};
        int ret;

        if (!expired && strcmp(str_at(r, "status", "phase"), "Succeeded"))
            continue;
        gone = *node && !node_exists(c, node);
        if (!gone && !aged(r, expired, now, c->o.gc_duration_s))
            continue;
        ret = kube_delete(c->client, &res_reservations, NULL, kube_object_name(v[i]), &st);
        if (ret == -ENOENT) /* gone already: the cache had not seen its deletion yet */
            continue;
        if (ret < 0) {
            log_warn(COMP, "cannot delete reservation \"%s\": %s, ignoring", kube_object_name(v[i]),
                     st.message[0] ? st.message : err_str(ret));
            continue;
        }
        deleted++;
        count(c, &c->stats.deleted);
        log_info(COMP, "deleted %s reservation \"%s\"%s", expired ? "expired" : "succeeded",
                 kube_object_name(v[i]), gone ? " (its node is gone)" : "");
    }
    kube_objects_free(v, n);
    count(c, &c->stats.gc_passes);
    return deleted;
}

static void *gc_loop(void *arg)
{
    struct sched_resv_controller *c = arg;

    (void)pthread_mutex_lock(&c->gc_lock);
    while (!c->gc_stop) {
        struct timespec until;
        (void)clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += c->o.gc_interval_s;
        while (!c->gc_stop && pthread_cond_timedwait(&c->gc_cond, &c->gc_lock, &until) == 0)
            ;
        if (c->gc_stop)
            break;
        (void)pthread_mutex_unlock(&c->gc_lock);
        (void)gc_pass(c);
        (void)pthread_mutex_lock(&c->gc_lock);
    }
    (void)pthread_mutex_unlock(&c->gc_lock);
    return NULL;
}

int sched_resv_controller_gc(struct sched_resv_controller *c)
{
    int r;

    (void)pthread_mutex_lock(&c->lifecycle);
    r = c->running ? gc_pass(c) : -ESRCH;
    (void)pthread_mutex_unlock(&c->lifecycle);
    return r;
}

void sched_resv_controller_resync(struct sched_resv_controller *c)
{
    struct kube_object **v = NULL;
    size_t n;

    (void)pthread_mutex_lock(&c->lifecycle);
    if (c->running) {
        n = kube_informer_list(c->resv_inf, NULL, &v);
        for (size_t i = 0; i < n; i++)
            kube_workqueue_add(c->q, kube_object_key(v[i]));
        kube_objects_free(v, n);
    }
    (void)pthread_mutex_unlock(&c->lifecycle);
}

/* ---- lifecycle ---- */

int sched_resv_controller_new(struct kube_client *client,
                              const struct sched_resv_controller_opts *opts,
                              struct sched_resv_controller **ret)
{
    static const struct sched_resv_controller_opts defaults = {0};
    struct sched_resv_controller *c = xcalloc(1, sizeof(*c));
    pthread_condattr_t ca;

    c->client = client;
    c->o = opts ? *opts : defaults;
    if (!c->o.workers)
        c->o.workers = 1;
    if (c->o.gc_duration_s <= 0)
        c->o.gc_duration_s = SCHED_RESV_GC_DURATION_S;
    if (c->o.gc_interval_s <= 0)
        c->o.gc_interval_s = SCHED_RESV_GC_INTERVAL_S;
    if (c->o.sync_timeout_ms <= 0)
        c->o.sync_timeout_ms = DEFAULT_SYNC_TIMEOUT_MS;
    if (!c->o.now)
        c->o.now = real_now;
    CHECK(pthread_mutex_init(&c->lifecycle, NULL) == 0);
    CHECK(pthread_mutex_init(&c->stats_lock, NULL) == 0);
    CHECK(pthread_mutex_init(&c->gc_lock, NULL) == 0);
    CHECK(pthread_condattr_init(&ca) == 0);
    CHECK(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0);
    CHECK(pthread_cond_init(&c->gc_cond, &ca) == 0);
    (void)pthread_condattr_destroy(&ca);
    atomic_init(&c->cancel, false);
    *ret = c;
    return 0;
}

static void teardown(struct sched_resv_controller *c)
{
    if (c->gc_started) {
        (void)pthread_mutex_lock(&c->gc_lock);
        c->gc_stop = true;
        (void)pthread_cond_broadcast(&c->gc_cond);
        (void)pthread_mutex_unlock(&c->gc_lock);
        (void)pthread_join(c->gc_thread, NULL);
        c->gc_started = false;
        c->gc_stop = false;
    }
    if (c->resv_inf)
        kube_informer_stop(c->resv_inf);
    if (c->pods_inf)
        kube_informer_stop(c->pods_inf);
    if (c->nodes_inf)
        kube_informer_stop(c->nodes_inf);
    if (c->q)
        kube_workqueue_shutdown(c->q);
    for (unsigned i = 0; i < c->nthreads; i++)
        (void)pthread_join(c->threads[i], NULL);
    c->running = false;
    kube_informer_free(c->resv_inf);
    kube_informer_free(c->pods_inf);
    kube_informer_free(c->nodes_inf);
    c->resv_inf = c->pods_inf = c->nodes_inf = NULL;
    kube_workqueue_free(c->q);
    c->q = NULL;
    free(c->threads);
    c->threads = NULL;
    c->nthreads = 0;
}

static bool all_synced(struct sched_resv_controller *c)
{
    return kube_informer_wait_synced(c->resv_inf, SYNC_SLICE_MS) &&
           kube_informer_wait_synced(c->pods_inf, SYNC_SLICE_MS) &&
           kube_informer_wait_synced(c->nodes_inf, SYNC_SLICE_MS);
}

int sched_resv_controller_start(struct sched_resv_controller *c)
{
    struct kube_workqueue_opts qo = {.base_delay_ms = c->o.retry_base_ms,
                                     .max_delay_ms = c->o.retry_max_ms};
    double end;
    int r;

    (void)pthread_mutex_lock(&c->lifecycle);
    if (c->running || c->q) {
        (void)pthread_mutex_unlock(&c->lifecycle);
        return -EBUSY;
    }
    c->q = kube_workqueue_new(&qo);
    c->resv_inf =
        kube_informer_new(c->client, &(struct kube_informer_opts){.resource = &res_reservations,
                                                                  .drop_managed_fields = true});
    /* Assigned pods that hold resources, like the scheduler's own pod informer. */
    c->pods_inf = kube_informer_new(
        c->client,
        &(struct kube_informer_opts){
            .resource = &kube_res_pods,
            .field_selector = "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed",
            .index_node_name = true,
            .drop_managed_fields = true});
    c->nodes_inf =
        kube_informer_new(c->client, &(struct kube_informer_opts){.resource = &kube_res_nodes,
                                                                  .drop_managed_fields = true});
    CHECK(kube_informer_add_handlers(
              c->resv_inf, &(struct kube_handlers){on_resv_add, on_resv_update, on_resv_add, c}) ==
          0);
    CHECK(kube_informer_add_handlers(
              c->pods_inf, &(struct kube_handlers){on_pod_add, on_pod_update, on_pod_add, c}) == 0);
    CHECK(kube_informer_add_handlers(c->nodes_inf,
                                     &(struct kube_handlers){NULL, NULL, on_node_delete, c}) == 0);
    if ((r = kube_informer_start(c->nodes_inf)) < 0 || (r = kube_informer_start(c->pods_inf)) < 0 ||
        (r = kube_informer_start(c->resv_inf)) < 0) {
        log_error(COMP, "cannot start the informers: %s", err_str(r));
        goto err;
    }
    end = real_now(NULL) + (double)c->o.sync_timeout_ms / 1000.0;
    while (!all_synced(c)) {
        if (atomic_load(&c->cancel)) {
            r = -ECANCELED;
            log_info(COMP, "start cancelled while waiting for the caches");
            goto err;
        }
        if (real_now(NULL) > end) {
            r = -ETIMEDOUT;
            log_error(COMP, "caches did not sync within %ld ms", c->o.sync_timeout_ms);
            goto err;
        }
    }
    c->threads = xcalloc(c->o.workers, sizeof(*c->threads));
    for (unsigned i = 0; i < c->o.workers; i++) {
        r = -pthread_create(&c->threads[i], NULL, worker, c);
        if (r < 0) {
            log_error(COMP, "cannot start worker: %s", err_str(r));
            goto err;
        }
        c->nthreads++;
    }
    if (!c->o.disable_gc) {
        r = -pthread_create(&c->gc_thread, NULL, gc_loop, c);
        if (r < 0) {
            log_error(COMP, "cannot start the garbage collector: %s", err_str(r));
            goto err;
        }
        c->gc_started = true;
    }
    c->running = true;
    (void)pthread_mutex_unlock(&c->lifecycle);
    if (c->o.disable_gc)
        log_info(COMP, "controller started with %u worker(s), garbage collection disabled",
                 c->nthreads);
    else
        log_info(COMP,
                 "controller started with %u worker(s), garbage collection every %ld s of "
                 "reservations finished %ld s ago",
                 c->nthreads, c->o.gc_interval_s, c->o.gc_duration_s);
    return 0;
err:
    teardown(c);
    (void)pthread_mutex_unlock(&c->lifecycle);
    return r;
}

void sched_resv_controller_stop(struct sched_resv_controller *c)
{
    bool was_running;

    if (!c)
        return;
    atomic_store(&c->cancel, true);
    (void)pthread_mutex_lock(&c->lifecycle);
    was_running = c->running;
    teardown(c);
    atomic_store(&c->cancel, false);
    (void)pthread_mutex_unlock(&c->lifecycle);
    if (was_running)
        log_info(COMP, "controller stopped");
}

void sched_resv_controller_free(struct sched_resv_controller *c)
{
    if (!c)
        return;
    sched_resv_controller_stop(c);
    (void)pthread_cond_destroy(&c->gc_cond);
    (void)pthread_mutex_destroy(&c->gc_lock);
    (void)pthread_mutex_destroy(&c->stats_lock);
    (void)pthread_mutex_destroy(&c->lifecycle);
    free(c);
}

void sched_resv_controller_stats(struct sched_resv_controller *c,
                                 struct sched_resv_controller_stats *ret)
{
    (void)pthread_mutex_lock(&c->stats_lock);
    *ret = c->stats;
    (void)pthread_mutex_unlock(&c->stats_lock);
}
