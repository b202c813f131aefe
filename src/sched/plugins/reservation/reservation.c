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
#include "base/log.h"
#include "base/strbuf.h"
#include "kube/client.h"
#include "sched/framework/framework.h"
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
    for (m = cJSON_IsObject(args) ? args->child : NULL; m; m = m->next) {
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

/* A reserve pod whose template names a node fits that node only. */
static enum sched_code resv_filter(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                   const struct sched_node_info *ni, struct sched_status *st)
{
    (void)self;
    (void)cs;
    if (pod->reservation_node && strcmp(pod->reservation_node, ni->name))
        return sched_status_set(st, SCHED_UNRESOLVABLE,
                                "node(s) didn't match the nodeName specified by reservation");
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

/* No pod waits on this plugin but for the reserve pods it rejects, which only their own
 * update (a new template) can help. */
static const struct sched_event_reg resv_events[] = {
    {"reservations.v1alpha1.scheduling.koordinator.sh", SCHED_ACT_ADD | SCHED_ACT_UPDATE},
    {NULL, 0},
};

const struct sched_plugin sched_plugin_reservation = {
    .name = "Reservation",
    .args_kind = "ReservationArgs",
    .default_weight = 5000,
    .events = resv_events,
    .init = resv_init,
    .free = resv_free,
    .filter = resv_filter,
    .post_filter = resv_post_filter,
    .bind = resv_bind,
};
