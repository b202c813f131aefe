/*
 * The scheduler's wiring (scheduler.h): profiles, informer handlers that feed the cache and the
 * queue (kube-scheduler eventhandlers.go), the API threads that bind and report failures, and
 * the scheduling thread.
 */
#include "sched/scheduler.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/field.h"
#include "api/labels.h"
#include "base/base.h"
#include "base/log.h"
#include "codec/patch.h"
#include "http/server.h"
#include "kube/client.h"
#include "kube/events.h"
#include "kube/informer.h"
#include "sched/framework/parallel.h"
#include "sched/metrics.h"
#include "sched/plugins/registry.h"
#include "sched/reservation/owners.h"
#include "sched/reservation/rcache.h"
#include "sched/reservation/reserve_pod.h"
#include "sched/sched-int.h"

double sched__now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct sched_framework *sched__framework_of(struct sched_scheduler *s, const char *name)
{
    for (size_t i = 0; i < s->nfws; i++)
        if (!strcmp(sched_framework_name(s->fws[i]), name))
            return s->fws[i];
    return NULL;
}

/* ---- queue callbacks ---- */

static int q_pre_enqueue(void *ud, const struct sched_pod *pod, int *ret_plugin)
{
    struct sched_scheduler *s = ud;
    struct sched_framework *fw = sched__framework_of(s, pod->scheduler_name);
    struct sched_status st = {0};
    enum sched_code c;

    if (!fw)
        return SCHED_SUCCESS;
    c = sched_framework_pre_enqueue(fw, pod, ret_plugin, &st);
    sched_status_release(&st);
    return c;
}

static bool q_less(void *ud, const struct sched_pod *a, double ta, const struct sched_pod *b,
                   double tb)
{
    struct sched_scheduler *s = ud;

    return sched_framework_less(s->fws[0], a, ta, b, tb);
}

static bool q_interested(void *ud, uint64_t mask, const char *resource, unsigned actions)
{
    struct sched_scheduler *s = ud;

    for (size_t i = 0; i < s->nfws; i++)
        if (sched_framework_interested(s->fws[i], mask, resource, actions))
            return true;
    return false;
}

static size_t fw_nominated(void *ud, const char *node, struct sched_pod ***ret)
{
    struct sched_scheduler *s = ud;

    return sched_queue_nominated(s->queue, node, ret);
}

/* A Reservation's room changed (an owner placed or gone): its reserve pod in the cache holds
 * what is left. */
static void rcache_changed(void *ud, struct sched_pod *reserve_pod)
{
    struct sched_scheduler *s = ud;

    sched_cache_add_pod(s->cache, reserve_pod);
    sched_pod_unref(reserve_pod);
}

/* Whether a profile of cfg names the plugin anywhere (before the frameworks exist). */
static bool config_uses(const struct sched_config *cfg, const char *plugin)
{
    int id = sched_registry_find(plugin);

    for (size_t i = 0; id >= 0 && i < cfg->nprofiles; i++)
        for (int p = 0; p < SCHED_PT_COUNT; p++)
            for (size_t k = 0; k < cfg->profiles[i].npoints[p]; k++)
                if (cfg->profiles[i].points[p][k].id == id)
                    return true;
    return false;
}

static void fw_add_informer(void *ud, struct kube_informer *inf)
{
    struct sched_scheduler *s = ud;

    s->plugin_infs =
        xrealloc(s->plugin_infs, (s->nplugin_infs + 1) * sizeof(struct kube_informer *));
    s->plugin_infs[s->nplugin_infs++] = inf;
}

static void fw_cluster_event(void *ud, const char *label, const char *resource, unsigned actions)
{
    struct sched_scheduler *s = ud;

    sched_queue_move_all(s->queue, label, resource, actions, NULL, NULL);
}

static void fw_activate(void *ud, const char *const *keys, size_t n)
{
    struct sched_scheduler *s = ud;

    sched_queue_activate(s->queue, keys, n);
}

static bool fw_leading(void *ud)
{
    struct sched_scheduler *s = ud;

    return atomic_load(&s->scheduling);
}

/* ---- API threads ---- */

static void run_fail_job(struct sched_scheduler *s, struct sched__job *j);

static void run_event_job(struct sched_scheduler *s, struct sched__job *j);

static struct sched__job *jobs_pop(struct sched__jobs *l)
{
    struct sched__job *j = l->head;

    if (!j)
        return NULL;
    l->head = j->next;
    if (!l->head)
        l->tail = NULL;
    l->n--;
    return j;
}

static void jobs_push(struct sched__jobs *l, struct sched__job *j)
{
    j->next = NULL;
    if (l->tail)
        l->tail->next = j;
    else
        l->head = j;
    l->tail = j;
    l->n++;
}

static void job_free(struct sched__job *j)
{
    sched_cycle_free(j->cs);
    sched_queued_pod_free(j->qp);
    sched_pod_unref(j->pod);
    free(j->node);
    free(j->reason);
    free(j->message);
    free(j->nominated);
    free(j);
}

static void *binder(void *arg)
{
    struct sched_scheduler *s = arg;

    pthread_mutex_lock(&s->jobs_lock);
    for (;;) {
        struct sched__job *j;
        while (!s->binds.head && !s->reports.head && !s->jobs_stop)
            pthread_cond_wait(&s->jobs_cond, &s->jobs_lock);
        if (!(j = jobs_pop(&s->binds)) && !(j = jobs_pop(&s->reports)))
            break;
        pthread_mutex_unlock(&s->jobs_lock);
        if (j->kind == SCHED__JOB_BIND)
            sched__bind(s, j);
        else if (j->kind == SCHED__JOB_FAIL)
            run_fail_job(s, j);
        else
            run_event_job(s, j);
        job_free(j);
        pthread_mutex_lock(&s->jobs_lock);
        if (--s->inflight == 0)
            pthread_cond_broadcast(&s->idle_cond);
    }
    pthread_mutex_unlock(&s->jobs_lock);
    return NULL;
}

void sched__submit(struct sched_scheduler *s, struct sched__job *j)
{
    pthread_mutex_lock(&s->jobs_lock);
    if (j->kind != SCHED__JOB_BIND && s->reports.n >= SCHED__MAX_REPORTS) {
        s->reports_dropped++;
        pthread_mutex_unlock(&s->jobs_lock);
        job_free(j);
        return;
    }
    jobs_push(j->kind == SCHED__JOB_BIND ? &s->binds : &s->reports, j);
    s->inflight++;
    pthread_cond_signal(&s->jobs_cond);
    pthread_mutex_unlock(&s->jobs_lock);
}

void sched_scheduler_wait_bindings(struct sched_scheduler *s)
{
    pthread_mutex_lock(&s->jobs_lock);
    while (s->inflight)
        pthread_cond_wait(&s->idle_cond, &s->jobs_lock);
    pthread_mutex_unlock(&s->jobs_lock);
}

/* The Event note limit of kube (NoteLengthLimit). */
#define NOTE_MAX 1024

/* What an event is about: the pod, or the Reservation a reserve pod stands for. */
static cJSON *pod_ref(const struct sched_pod *p)
{
    cJSON *ref = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(ref, "metadata");

    if (p->reservation) {
        cJSON_AddStringToObject(ref, "apiVersion", "scheduling.koordinator.sh/v1alpha1");
        cJSON_AddStringToObject(ref, "kind", "Reservation");
        cJSON_AddStringToObject(meta, "name", p->reservation);
    } else {
        cJSON_AddStringToObject(ref, "apiVersion", "v1");
        cJSON_AddStringToObject(ref, "kind", "Pod");
        cJSON_AddStringToObject(meta, "name", p->name);
        cJSON_AddStringToObject(meta, "namespace", p->namespace);
    }
    cJSON_AddStringToObject(meta, "uid", p->uid);
    return ref;
}

/* Whether the pod's PodScheduled condition already says this (the patch would be a no-op). */
static bool condition_current(const cJSON *pod, const char *reason, const char *message,
                              const char *nominated)
{
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(pod, "status"), *c;
    const char *nn =
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(status, "nominatedNodeName"));

    if (nominated && strcmp(nominated, nn ? nn : ""))
        return false;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(status, "conditions"))
    {
        const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "type"));
        const char *st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "status"));
        const char *r = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "reason"));
        const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "message"));
        if (t && !strcmp(t, "PodScheduled"))
            return st && !strcmp(st, "False") && r && !strcmp(r, reason) && m &&
                   !strcmp(m, message);
    }
    return false;
}

static void now_rfc3339(char *buf, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;

    gmtime_r(&t, &tm);
    (void)strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The Scheduled event of a bound pod (2.4). */
static void run_event_job(struct sched_scheduler *s, struct sched__job *j)
{
    cJSON *ref;

    if (!s->recorder)
        return;
    ref = pod_ref(j->pod);
    (void)kube_recorder_event(s->recorder, ref, KUBE_EVENT_NORMAL, "Scheduled",
                              "Successfully assigned %s to %s",
                              j->pod->reservation ? j->pod->reservation : j->pod->key, j->node);
    cJSON_Delete(ref);
}

/* Whether a Reservation object is the one of uid (a name may be reused by a new object). */
static bool resv_is(const cJSON *resv, const char *uid)
{
    const char *u = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(resv, "metadata"), "uid"));

    return u && !strcmp(u, uid);
}

/*
 * A reserve pod's failure on its Reservation (scheduler.md 8.4): condition Scheduled=False,
 * reason Unschedulable, the FitError as message, the phase left alone; when the condition says
 * so already only lastProbeTime moves. Written with UpdateStatus, retried on conflict.
 */
static void resv_fail_condition(struct sched_scheduler *s, const struct sched__job *j)
{
    for (int attempt = 0; attempt < 3; attempt++) {
        struct kube_object *cur =
            s->resv_inf ? kube_informer_get(s->resv_inf, j->pod->reservation) : NULL;
        cJSON *o, *status, *conds, *c, *found = NULL;
        struct kube_status kst;
        char ts[32];
        int r;

        if (!cur)
            return;
        if (!resv_is(kube_object_json(cur), j->pod->uid) ||
            !(o = cJSON_Duplicate(kube_object_json(cur), true))) {
            kube_object_unref(cur);
            return;
        }
        kube_object_unref(cur);
        now_rfc3339(ts, sizeof(ts));
        if (!cJSON_IsObject(status = cJSON_GetObjectItemCaseSensitive(o, "status"))) {
            cJSON_DeleteItemFromObjectCaseSensitive(o, "status");
            status = cJSON_AddObjectToObject(o, "status");
        }
        if (!cJSON_IsArray(conds = cJSON_GetObjectItemCaseSensitive(status, "conditions"))) {
            cJSON_DeleteItemFromObjectCaseSensitive(status, "conditions");
            conds = cJSON_AddArrayToObject(status, "conditions");
        }
        cJSON_ArrayForEach(c, conds)
        {
            const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "type"));
            if (t && !strcmp(t, "Scheduled"))
                found = c;
        }
        if (found && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(found, "status")) &&
            !strcmp(cJSON_GetObjectItemCaseSensitive(found, "status")->valuestring, "True")) {
            cJSON_DeleteItemFromObjectCaseSensitive(found, "lastProbeTime");
            cJSON_AddStringToObject(found, "lastProbeTime", ts);
        } else {
            if (found)
                cJSON_Delete(cJSON_DetachItemViaPointer(conds, found));
            c = cJSON_CreateObject();
            cJSON_AddStringToObject(c, "type", "Scheduled");
            cJSON_AddStringToObject(c, "status", "False");
            cJSON_AddStringToObject(c, "reason", j->reason);
            cJSON_AddStringToObject(c, "message", j->message);
            cJSON_AddStringToObject(c, "lastProbeTime", ts);
            cJSON_AddStringToObject(c, "lastTransitionTime", ts);
            cJSON_AddItemToArray(conds, c);
        }
        r = kube_update(s->o.client, &sched_res_reservations, NULL, o, "status", NULL, &kst);
        cJSON_Delete(o);
        if (r == -ESTALE || kst.code == 409) {
            /* Someone wrote it meanwhile: once the informer has their version, again. */
            (void)usleep(100000);
            continue;
        }
        if (r < 0 && r != -ENOENT)
            log_warn("sched",
                     "updating the Scheduled condition of Reservation %s failed: %s, "
                     "ignoring",
                     j->pod->reservation, kst.message);
        return;
    }
}

/* The FailedScheduling event and the PodScheduled=False patch (2.3). */
static void run_fail_job(struct sched_scheduler *s, struct sched__job *j)
{
    struct kube_object *cur = NULL;
    struct kube_status kst;
    cJSON *ref;
    int r;

    if (!s->o.client || s->o.bind_hook)
        return;
    ref = pod_ref(j->pod);
    if (strlen(j->message) > NOTE_MAX) {
        char note[NOTE_MAX + 1];
        (void)snprintf(note, sizeof(note), "%.*s ...", NOTE_MAX - 4, j->message);
        (void)kube_recorder_event(s->recorder, ref, KUBE_EVENT_WARNING, "FailedScheduling", "%s",
                                  note);
    } else {
        (void)kube_recorder_event(s->recorder, ref, KUBE_EVENT_WARNING, "FailedScheduling", "%s",
                                  j->message);
    }
    cJSON_Delete(ref);
    if (j->pod->reservation) {
        resv_fail_condition(s, j);
        return;
    }
    if (s->pods_inf)
        cur = kube_informer_get(s->pods_inf, j->pod->key);
    if (cur && condition_current(kube_object_json(cur), j->reason, j->message, j->nominated)) {
        kube_object_unref(cur);
        return;
    }
    kube_object_unref(cur);
    {
        cJSON *patch = cJSON_CreateObject(), *status = cJSON_AddObjectToObject(patch, "status");
        cJSON *conds = cJSON_AddArrayToObject(status, "conditions"), *c = cJSON_CreateObject();
        char ts[32];
        now_rfc3339(ts, sizeof(ts));
        cJSON_AddStringToObject(c, "type", "PodScheduled");
        cJSON_AddStringToObject(c, "status", "False");
        cJSON_AddNullToObject(c, "lastProbeTime");
        cJSON_AddStringToObject(c, "lastTransitionTime", ts);
        cJSON_AddStringToObject(c, "reason", j->reason);
        cJSON_AddStringToObject(c, "message", j->message);
        cJSON_AddItemToArray(conds, c);
        if (j->nominated)
            cJSON_AddStringToObject(status, "nominatedNodeName", j->nominated);
        r = kube_patch(s->o.client, &kube_res_pods, j->pod->namespace, j->pod->name, "status",
                       KUBE_PATCH_STRATEGIC, patch, NULL, &kst);
        if (r < 0 && r != -ENOENT)
            log_warn("sched", "updating the PodScheduled condition of pod %s failed: %s, ignoring",
                     j->pod->key, kst.message);
        cJSON_Delete(patch);
    }
}

void sched__fail(struct sched_scheduler *s, struct sched_framework *fw, struct sched_queued_pod *qp,
                 const struct sched_status *st, const char *message, const char *nominated)
{
    struct sched__job *j = xcalloc(1, sizeof(*j));
    bool requeue = true;

    j->kind = SCHED__JOB_FAIL;
    j->fw = fw;
    j->pod = sched_pod_ref(qp->pod);
    j->reason = xstrdup(sched_code_is_rejected(st->code) ? "Unschedulable" : "SchedulerError");
    j->message = xstrdup(message);
    if (nominated)
        j->nominated = xstrdup(nominated);
    log_debug("sched", "pod %s unschedulable: %s", qp->pod->key, message);

    /* The pod as the informer has it now: gone or assigned -> not requeued. */
    if (qp->pod->reservation) {
        struct kube_object *cur =
            s->resv_inf ? kube_informer_get(s->resv_inf, qp->pod->reservation) : NULL;
        requeue =
            !s->resv_inf || (cur && resv_is(kube_object_json(cur), qp->pod->uid) &&
                             sched_resv_state(kube_object_json(cur)) == SCHED_RESV_UNASSIGNED);
        kube_object_unref(cur);
    } else if (s->pods_inf) {
        struct kube_object *cur = kube_informer_get(s->pods_inf, qp->pod->key);
        if (!cur || *kube_object_node_name(cur))
            requeue = false;
        kube_object_unref(cur);
    }
    if (requeue)
        (void)sched_queue_add_unschedulable(s->queue, qp);
    else {
        sched_queue_done(s->queue, qp->pod->key);
        sched_queued_pod_free(qp);
    }
    /* After the requeue, which nominates from the pod's status (still without the node the
     * status patch is about to write): until that patch comes back through the informer, the
     * node is held for this pod in memory (handleSchedulingFailure's AddNominatedPod). */
    if (nominated && requeue)
        sched_queue_nominate(s->queue, j->pod, nominated);
    sched__submit(s, j);
}

/* ---- informer handlers (eventhandlers.go) ---- */

static bool pod_is_ours(struct sched_scheduler *s, const struct sched_pod *p)
{
    return sched__framework_of(s, p->scheduler_name) != NULL;
}

/* Required pod affinity of a pool pod that the new assigned pod's labels could satisfy. */
static bool affinity_matches(void *arg, const struct sched_pod *pod)
{
    const struct sched_pod *added = arg;

    for (size_t i = 0; i < pod->naffinity; i++)
        if (pod->affinity[i].selector &&
            label_selector_matches(pod->affinity[i].selector, added->labels))
            return true;
    return false;
}

void sched_scheduler_pod_event(struct sched_scheduler *s, const cJSON *old, const cJSON *obj,
                               bool deleted)
{
    struct sched_pod *p = NULL;
    bool was_assigned = false;

    if (sched_pod_decode(obj, &p) < 0)
        return;
    /* Only a Reservation makes a reserve pod: a real pod's annotation saying so is ignored. */
    FREE_AND_NULL(p->reservation);
    FREE_AND_NULL(p->reservation_node);
    /* What Reservation matching reads, only where a profile matches (the pod is not shared
     * yet): the other profiles' pods cost no second walk of their metadata. */
    if (s->rcache)
        (void)sched_resv_pod_decode(obj, &p->resv);
    /* Plugins first: a new pod's PreEnqueue below sees it counted in their state (its quota's
     * request, hence runtime). */
    for (size_t i = 0; i < s->nfws; i++)
        sched_framework_pod_event(s->fws[i], p, deleted || p->terminal);
    if (old) {
        const char *nn = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(old, "spec"), "nodeName"));
        was_assigned = nn && *nn;
    }
    if (*p->node_name) {
        if (!was_assigned && pod_is_ours(s, p))
            sched_queue_delete(s->queue, p); /* bound: by us, or by someone else */
        /* A pod placed into a Reservation takes part of its room (rcache.h). */
        if (p->allocated_from && s->rcache) {
            if (deleted || p->terminal)
                sched_rcache_remove_owner(s->rcache, p->allocated_from, p->uid);
            else
                sched_rcache_add_owner(s->rcache, p->allocated_from, p->uid, &p->req);
        }
        if (deleted || p->terminal) {
            if (sched_cache_remove_pod(s->cache, p) == 0)
                sched_queue_move_all(s->queue, "AssignedPodDelete", "Pod", SCHED_ACT_DELETE, NULL,
                                     NULL);
        } else {
            sched_cache_add_pod(s->cache, p);
            if (p->labels)
                sched_queue_assigned_pod_added(
                    s->queue, old ? "AssignedPodUpdate" : "AssignedPodAdd", affinity_matches, p);
        }
    } else if (pod_is_ours(s, p)) {
        if (deleted || p->terminal)
            sched_queue_delete(s->queue, p);
        else if (!sched_cache_is_assumed(s->cache, p->uid)) {
            if (old)
                sched_queue_update(s->queue, NULL, p);
            else
                sched_queue_add(s->queue, p);
        }
    }
    sched_pod_unref(p);
}

/* The reserve pod of a Reservation object in its current state, or NULL (released, malformed). */
static struct sched_pod *reserve_pod_of(const cJSON *resv)
{
    const char *why = NULL;
    cJSON *o = sched_reserve_pod(resv, &why);
    struct sched_pod *p = NULL;

    if (!o)
        return NULL;
    if (sched_pod_decode(o, &p) < 0)
        p = NULL;
    cJSON_Delete(o);
    return p;
}

void sched_scheduler_reservation_event(struct sched_scheduler *s, const cJSON *old,
                                       const cJSON *obj, bool deleted)
{
    enum sched_resv_state was, now = deleted ? SCHED_RESV_RELEASED : sched_resv_state(obj);
    struct sched_pod *p = NULL, *o = NULL;

    /* A delete carries the last state only: what it held is that object's. */
    if (deleted && !old)
        old = obj;
    was = old ? sched_resv_state(old) : SCHED_RESV_RELEASED;

    /* reservation_handler.go: what the Reservation held, and what it holds now. */
    if (was == SCHED_RESV_HOLDING && (o = reserve_pod_of(old))) {
        bool moved = now != SCHED_RESV_HOLDING;
        if (moved && s->rcache)
            sched_rcache_remove(s->rcache, o->uid);
        if (moved && sched_cache_remove_pod(s->cache, o) == 0)
            sched_queue_move_all(s->queue, "AssignedPodDelete", "Pod", SCHED_ACT_DELETE, NULL,
                                 NULL);
    }
    if (now == SCHED_RESV_RELEASED) {
        if ((p = o ? sched_pod_ref(o) : old ? reserve_pod_of(old) : NULL))
            sched_queue_delete(s->queue, p);
    } else if ((p = now == SCHED_RESV_HOLDING && s->rcache ? sched_rcache_set(s->rcache, obj)
                                                           : reserve_pod_of(obj))) {
        if (now == SCHED_RESV_HOLDING) {
            /* In the cache it requests what its owners left (rcache.h); it confirms the
             * assumed reserve pod. Owners waiting for room may fit now. */
            if (was != SCHED_RESV_HOLDING)
                sched_queue_delete(s->queue, p);
            if (!s->rcache) /* else the reservation cache put it there (rcache_changed) */
                sched_cache_add_pod(s->cache, p);
            sched_queue_move_all(
                s->queue, was == SCHED_RESV_HOLDING ? "ReservationUpdate" : "ReservationAdd",
                SCHED_RESV_EVENT_RESOURCE,
                was == SCHED_RESV_HOLDING ? SCHED_ACT_UPDATE : SCHED_ACT_ADD, NULL, NULL);
        } else if (sched__framework_of(s, p->scheduler_name) &&
                   !sched_cache_is_assumed(s->cache, p->uid)) {
            if (old && was == SCHED_RESV_UNASSIGNED)
                sched_queue_update(s->queue, NULL, p);
            else
                sched_queue_add(s->queue, p);
        }
    }
    sched_pod_unref(p);
    sched_pod_unref(o);
}

/* The admission check of a node event (preCheckForNode): would the pod fit this node alone? */
static bool node_admits(void *arg, const struct sched_pod *pod)
{
    const struct sched_node *n = arg;

    if (*pod->node_name && strcmp(pod->node_name, n->name))
        return false;
    if (n->allowed_pods < 1)
        return false;
    for (size_t i = 0; i < pod->nnode_selector; i++)
        if (!sched_sel_req_matches(&pod->node_selector[i], n->labels))
            return false;
    if (pod->required_node && !sched_node_selector_matches(pod->required_node, n->labels, n->name))
        return false;
    for (size_t i = 0; i < n->ntaints; i++)
        if (n->taints[i].effect == SCHED_EFFECT_NO_SCHEDULE &&
            !sched_pod_tolerates(pod, &n->taints[i]))
            return false;
    for (int i = 0; i < sched_res_count(); i++)
        if (pod->req.v[i] > n->allocatable.v[i])
            return false;
    return true;
}

static bool json_eq(const cJSON *a, const cJSON *b)
{
    return (!a && !b) || (a && b && json_value_equal(a, b));
}

void sched_scheduler_node_event(struct sched_scheduler *s, const cJSON *old, const cJSON *obj,
                                bool deleted)
{
    struct sched_node *n = NULL, *o = NULL;
    unsigned actions = 0;

    if (sched_node_decode(obj, &n) < 0)
        return;
    if (n->invalid)
        log_warn("sched", "node %s: %s: counted as empty, ignoring", n->name, n->invalid);
    for (size_t i = 0; i < s->nfws; i++)
        sched_framework_node_event(s->fws[i], n, deleted);
    if (deleted) {
        sched_cache_remove_node(s->cache, n->name);
        sched_node_unref(n);
        return;
    }
    sched_cache_add_node(s->cache, n);
    if (!old) {
        sched_queue_move_all(s->queue, "NodeAdd", "Node", SCHED_ACT_ADD, node_admits, n);
        sched_node_unref(n);
        return;
    }
    if (sched_node_decode(old, &o) == 0) {
        if (memcmp(&o->allocatable, &n->allocatable, sizeof(n->allocatable)) ||
            o->allowed_pods != n->allowed_pods)
            actions |= SCHED_ACT_UPDATE_NODE_ALLOCATABLE;
        if (!json_eq(o->labels, n->labels))
            actions |= SCHED_ACT_UPDATE_NODE_LABEL;
        if (o->ntaints != n->ntaints || (o->unschedulable && !n->unschedulable))
            actions |= SCHED_ACT_UPDATE_NODE_TAINT;
        for (size_t i = 0; !(actions & SCHED_ACT_UPDATE_NODE_TAINT) && i < n->ntaints; i++)
            if (strcmp(o->taints[i].key, n->taints[i].key) ||
                strcmp(o->taints[i].value, n->taints[i].value) ||
                o->taints[i].effect != n->taints[i].effect)
                actions |= SCHED_ACT_UPDATE_NODE_TAINT;
        if (!json_eq(o->conditions, n->conditions))
            actions |= SCHED_ACT_UPDATE_NODE_CONDITION;
        sched_node_unref(o);
    }
    if (actions)
        sched_queue_move_all(s->queue, "NodeUpdate", "Node", actions, node_admits, n);
    sched_node_unref(n);
}

static void on_resv_add(void *ud, const struct kube_object *o)
{
    sched_scheduler_reservation_event(ud, NULL, kube_object_json(o), false);
}

static void on_resv_update(void *ud, const struct kube_object *old, const struct kube_object *o)
{
    if (old != o)
        sched_scheduler_reservation_event(ud, kube_object_json(old), kube_object_json(o), false);
}

static void on_resv_delete(void *ud, const struct kube_object *o)
{
    sched_scheduler_reservation_event(ud, NULL, kube_object_json(o), true);
}

static void on_pod_add(void *ud, const struct kube_object *o)
{
    sched_scheduler_pod_event(ud, NULL, kube_object_json(o), false);
}

static void on_pod_update(void *ud, const struct kube_object *old, const struct kube_object *o)
{
    if (old == o)
        return;
    sched_scheduler_pod_event(ud, kube_object_json(old), kube_object_json(o), false);
}

static void on_pod_delete(void *ud, const struct kube_object *o)
{
    sched_scheduler_pod_event(ud, NULL, kube_object_json(o), true);
}

static void on_node_add(void *ud, const struct kube_object *o)
{
    sched_scheduler_node_event(ud, NULL, kube_object_json(o), false);
}

static void on_node_update(void *ud, const struct kube_object *old, const struct kube_object *o)
{
    if (old == o)
        return;
    sched_scheduler_node_event(ud, kube_object_json(old), kube_object_json(o), false);
}

static void on_node_delete(void *ud, const struct kube_object *o)
{
    sched_scheduler_node_event(ud, NULL, kube_object_json(o), true);
}

/* ---- lifecycle ---- */

int sched_scheduler_new(const struct sched_scheduler_opts *opts, struct sched_scheduler **ret,
                        struct field_errors *errs)
{
    struct sched_scheduler *s = xcalloc(1, sizeof(*s));
    struct sched_queue_opts qo = {0};
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int workers, r = 0;

    s->o = *opts;
    s->cfg = opts->config;
    s->rng = (unsigned)time(NULL) | 1u;
    pthread_mutex_init(&s->jobs_lock, NULL);
    pthread_cond_init(&s->jobs_cond, NULL);
    pthread_cond_init(&s->idle_cond, NULL);
    s->metrics = sched_metrics_new();
    s->cache = sched_cache_new(opts->assumed_ttl_s);
    /* Parallelism beyond the machine's CPUs only adds wake-ups. */
    workers = s->cfg->parallelism;
    if (ncpu > 0 && workers > ncpu)
        workers = (int)ncpu;
    s->pool = sched_pool_new(workers > 1 ? workers - 1 : 0);
    if (opts->client && !opts->bind_hook)
        s->recorder = kube_recorder_new(
            opts->client, &(struct kube_recorder_opts){.component = "default-scheduler"});
    /* Where a profile may run the Reservation plugin, the room Reservations hold. */
    if (config_uses(s->cfg, "Reservation"))
        s->rcache = sched_rcache_new(rcache_changed, s);
    s->fws = xcalloc(s->cfg->nprofiles, sizeof(struct sched_framework *));
    s->series.profile = xcalloc(s->cfg->nprofiles, sizeof(*s->series.profile));
    for (size_t i = 0; i < s->cfg->nprofiles; i++) {
        struct sched_framework_opts fo = {
            .client = opts->client,
            .recorder = s->recorder,
            .pool = s->pool,
            .metrics = s->metrics,
            .nominated = fw_nominated,
            .add_informer = fw_add_informer,
            .cluster_event = fw_cluster_event,
            .activate = fw_activate,
            .reservations = s->rcache,
            .leading = fw_leading,
            .userdata = s,
        };
        if (sched_framework_new(&s->cfg->profiles[i], &fo, &s->fws[s->nfws], errs) < 0) {
            r = -EINVAL;
            continue;
        }
        s->nfws++;
    }
    if (r < 0 || !s->nfws) {
        sched_scheduler_free(s);
        return -EINVAL;
    }
    qo.userdata = s;
    qo.initial_backoff_s = s->cfg->pod_initial_backoff_s;
    qo.max_backoff_s = s->cfg->pod_max_backoff_s;
    qo.pre_enqueue = q_pre_enqueue;
    qo.less = q_less;
    qo.interested = q_interested;
    qo.gates_plugin_id = sched_registry_find("SchedulingGates");
    for (size_t id = 0; id < sched_registry_count(); id++) {
        const struct sched_plugin *pl = sched_registry_get((int)id);
        if (pl->pre_enqueue && (pl->pre_filter || pl->filter))
            qo.recheck_plugins |= UINT64_C(1) << id;
    }
    s->queue = sched_queue_new(&qo);
    s->nbinders = opts->binders > 0 ? opts->binders : 16;
    s->binders = xcalloc((size_t)s->nbinders, sizeof(*s->binders));
    for (int i = 0; i < s->nbinders; i++) {
        if (pthread_create(&s->binders[i], NULL, binder, s)) {
            s->nbinders = i;
            sched_scheduler_free(s);
            return -EAGAIN;
        }
    }
    *ret = s;
    return 0;
}

int sched_scheduler_start_informers(struct sched_scheduler *s)
{
    struct kube_handlers ph = {on_pod_add, on_pod_update, on_pod_delete, s};
    struct kube_handlers nh = {on_node_add, on_node_update, on_node_delete, s};
    int r;

    r = sched_queue_run(s->queue);
    if (r < 0 || !s->o.client)
        return r;
    /* Finished pods hold nothing (kube-scheduler's informer filters them the same way), and
     * no cached object keeps its managedFields (kube-scheduler drops them too). */
    s->pods_inf = kube_informer_new(
        s->o.client, &(struct kube_informer_opts){
                         .resource = &kube_res_pods,
                         .field_selector = "status.phase!=Succeeded,status.phase!=Failed",
                         .drop_managed_fields = true});
    s->nodes_inf =
        kube_informer_new(s->o.client, &(struct kube_informer_opts){.resource = &kube_res_nodes,
                                                                    .drop_managed_fields = true});
    if ((r = kube_informer_add_handlers(s->nodes_inf, &nh)) < 0 ||
        (r = kube_informer_add_handlers(s->pods_inf, &ph)) < 0 ||
        (r = kube_informer_start(s->nodes_inf)) < 0 || (r = kube_informer_start(s->pods_inf)) < 0)
        return r;
    for (size_t i = 0; i < s->nplugin_infs; i++)
        if ((r = kube_informer_start(s->plugin_infs[i])) < 0)
            return r;
    /* Reservations are scheduled as pods where a profile runs the Reservation plugin. */
    if (sched_scheduler_uses(s, "Reservation")) {
        struct kube_handlers rh = {on_resv_add, on_resv_update, on_resv_delete, s};
        struct kube_status kst = {0};
        cJSON *list = NULL;
        /* Without the CRD pods are still scheduled; the watch picks Reservations up once it is
         * installed. */
        r = kube_list(s->o.client, &sched_res_reservations, NULL,
                      &(struct kube_list_opts){.limit = 1}, &list, &kst);
        cJSON_Delete(list);
        s->resv_optional = r < 0 && kst.code == 404;
        if (s->resv_optional)
            log_error("sched", "the API server does not serve Reservations "
                               "(scheduling.koordinator.sh/v1alpha1; install "
                               "deploy/crds/scheduling.koordinator.sh_reservations.yaml): none "
                               "is scheduled until it does");
        s->resv_inf = kube_informer_new(
            s->o.client, &(struct kube_informer_opts){.resource = &sched_res_reservations,
                                                      .drop_managed_fields = true});
        if ((r = kube_informer_add_handlers(s->resv_inf, &rh)) < 0 ||
            (r = kube_informer_start(s->resv_inf)) < 0)
            return r;
    }
    return 0;
}

bool sched_scheduler_uses(const struct sched_scheduler *s, const char *plugin)
{
    return config_uses(s->cfg, plugin);
}

bool sched_scheduler_synced(struct sched_scheduler *s)
{
    if (!s->o.client)
        return true;
    if (!s->pods_inf || !s->nodes_inf || !kube_informer_has_synced(s->nodes_inf) ||
        !kube_informer_has_synced(s->pods_inf))
        return false;
    for (size_t i = 0; i < s->nplugin_infs; i++)
        if (!kube_informer_has_synced(s->plugin_infs[i]))
            return false;
    return !s->resv_inf || s->resv_optional || kube_informer_has_synced(s->resv_inf);
}

static void *loop(void *arg)
{
    struct sched_scheduler *s = arg;
    double next_cleanup = sched__now() + 1;

    /* WaitForCacheSync: no cycle on a partial view of nodes and pods (it would overcommit). */
    while (!atomic_load(&s->stopping) && !sched_scheduler_synced(s))
        (void)usleep(10000);
    while (!atomic_load(&s->stopping)) {
        if (sched_scheduler_schedule_one(s, 1.0) == -ECANCELED)
            break;
        if (sched__now() >= next_cleanup) {
            size_t n = sched_cache_cleanup(s->cache, sched__now());
            if (n)
                log_warn("sched",
                         "%zu assumed pod(s) expired without their binding being seen, "
                         "ignoring",
                         n);
            next_cleanup = sched__now() + 1;
        }
    }
    return NULL;
}

int sched_scheduler_run(struct sched_scheduler *s)
{
    int r;

    if (s->running)
        return -EBUSY;
    if ((r = pthread_create(&s->loop, NULL, loop, s)))
        return -r;
    s->running = true;
    atomic_store(&s->scheduling, true);
    return 0;
}

void sched_scheduler_stop(struct sched_scheduler *s)
{
    atomic_store(&s->stopping, 1);
    atomic_store(&s->scheduling, false);
    if (s->pods_inf)
        kube_informer_stop(s->pods_inf);
    if (s->nodes_inf)
        kube_informer_stop(s->nodes_inf);
    for (size_t i = 0; i < s->nplugin_infs; i++)
        kube_informer_stop(s->plugin_infs[i]);
    if (s->resv_inf)
        kube_informer_stop(s->resv_inf);
    if (s->queue)
        sched_queue_close(s->queue);
    if (s->running) {
        pthread_join(s->loop, NULL);
        s->running = false;
    }
    pthread_mutex_lock(&s->jobs_lock);
    s->jobs_stop = true;
    pthread_cond_broadcast(&s->jobs_cond);
    pthread_mutex_unlock(&s->jobs_lock);
    for (int i = 0; i < s->nbinders; i++)
        pthread_join(s->binders[i], NULL);
    s->nbinders = 0;
}

void sched_scheduler_free(struct sched_scheduler *s)
{
    if (!s)
        return;
    sched_scheduler_stop(s);
    kube_informer_free(s->pods_inf);
    kube_informer_free(s->nodes_inf);
    kube_informer_free(s->resv_inf);
    sched_queue_free(s->queue);
    for (size_t i = 0; i < s->nfws; i++)
        sched_framework_free(s->fws[i]);
    free(s->fws);
    free(s->series.profile);
    free(s->plugin_infs);
    sched_snapshot_release(&s->snap);
    sched_cache_free(s->cache);
    sched_rcache_free(s->rcache);
    sched_pool_free(s->pool);
    kube_recorder_free(s->recorder);
    sched_metrics_free(s->metrics);
    free(s->binders);
    free(s->feasible_buf);
    free(s->scores_buf);
    pthread_cond_destroy(&s->jobs_cond);
    pthread_cond_destroy(&s->idle_cond);
    pthread_mutex_destroy(&s->jobs_lock);
    free(s);
}

/* ---- figures ---- */

struct incoming_ctx {
    struct sched_metrics *m;
};

static void set_incoming(void *arg, const char *queue, const char *event, uint64_t count)
{
    struct incoming_ctx *c = arg;
    char labels[160];

    (void)snprintf(labels, sizeof(labels), "event=\"%s\",queue=\"%s\"", event, queue);
    sched_metrics_set(c->m, "scheduler_queue_incoming_pods_total", labels, (double)count);
}

void sched_scheduler_metrics(struct sched_scheduler *s, struct strbuf *out)
{
    struct sched_queue_stats qs;
    struct sched_cache_stats cs;
    struct incoming_ctx ic = {s->metrics};

    sched_queue_stats(s->queue, &qs);
    sched_cache_stats(s->cache, &cs);
    sched_metrics_set(s->metrics, "scheduler_pending_pods", "queue=\"active\"", (double)qs.active);
    sched_metrics_set(s->metrics, "scheduler_pending_pods", "queue=\"backoff\"",
                      (double)qs.backoff);
    sched_metrics_set(s->metrics, "scheduler_pending_pods", "queue=\"unschedulable\"",
                      (double)qs.unschedulable);
    sched_metrics_set(s->metrics, "scheduler_pending_pods", "queue=\"gated\"", (double)qs.gated);
    sched_metrics_set(s->metrics, "scheduler_cache_size", "type=\"nodes\"", (double)cs.nodes);
    sched_metrics_set(s->metrics, "scheduler_cache_size", "type=\"pods\"", (double)cs.pods);
    sched_metrics_set(s->metrics, "scheduler_cache_size", "type=\"assumed_pods\"",
                      (double)cs.assumed);
    pthread_mutex_lock(&s->jobs_lock);
    sched_metrics_set(s->metrics, "scheduler_goroutines", "operation=\"binding\"",
                      (double)s->inflight);
    pthread_mutex_unlock(&s->jobs_lock);
    sched_queue_foreach_incoming(s->queue, set_incoming, &ic);
    sched_metrics_render(s->metrics, out);
}

void sched_scheduler_stats(struct sched_scheduler *s, struct sched_scheduler_stats *ret)
{
    struct sched_queue_stats qs;
    struct sched_cache_stats cs;

    sched_queue_stats(s->queue, &qs);
    sched_cache_stats(s->cache, &cs);
    memset(ret, 0, sizeof(*ret));
    ret->attempts = atomic_load(&s->attempts);
    ret->scheduled = atomic_load(&s->scheduled);
    ret->unschedulable = atomic_load(&s->unschedulable);
    ret->errors = atomic_load(&s->errors);
    ret->bound = atomic_load(&s->bound);
    ret->bind_failures = atomic_load(&s->bind_failures);
    ret->active = qs.active;
    ret->backoff = qs.backoff;
    ret->unschedulable_pods = qs.unschedulable;
    ret->gated = qs.gated;
    ret->assumed = cs.assumed;
    ret->pre_enqueue_runs = qs.pre_enqueue_runs;
}

void sched_scheduler_http(const struct http_request *req, struct http_response *resp,
                          void *userdata)
{
    struct sched_scheduler *s = userdata;
    const char *path = http_request_path(req);

    resp->content_type = "text/plain; charset=utf-8";
    if (strcmp(http_request_method(req), "GET")) {
        resp->status = 405;
        strbuf_addstr(&resp->body, "method not allowed\n");
    } else if (!strcmp(path, "/metrics")) {
        resp->status = 200;
        resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
        sched_scheduler_metrics(s, &resp->body);
    } else if (!strcmp(path, "/healthz") || !strcmp(path, "/livez")) {
        resp->status = 200;
        strbuf_addstr(&resp->body, "ok");
    } else if (!strcmp(path, "/readyz")) {
        bool ok = sched_scheduler_synced(s);
        resp->status = ok ? 200 : 503;
        strbuf_addstr(&resp->body, ok ? "ok" : "informers not synced");
    } else {
        resp->status = 404;
        strbuf_addstr(&resp->body, "404 page not found\n");
    }
}
