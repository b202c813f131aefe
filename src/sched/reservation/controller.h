/*
 * The Reservation controller koord scheduler runs beside scheduling (upstream
 * pkg/scheduler/plugins/reservation/controller/{controller,garbage_collection}.go; reference
 * manager-behaviour.md 7.1-7.4, scheduler.md 8.4 "Controller" and "GC"). It keeps the status
 * of scheduling.koordinator.sh/v1alpha1 Reservations current after the scheduler bound them:
 * owners and allocated, Succeeded, expiry, and deletes old finished ones.
 *
 * Shape: informers on Reservations, on assigned non-terminal pods (indexed by node, as the
 * scheduler's own pod informer filters them) and on Nodes; handlers enqueue a reservation's
 * name on its add, on an update that changes generation, phase or status.nodeName, on its
 * delete, on add/update/delete of a pod whose annotation
 * scheduling.koordinator.sh/reservation-allocated ({"name","uid"}) names it, and on the delete
 * of its node. Workers (controllerWorkers, default 1) sync one name at a time.
 *
 * Sync of a reservation (7.2), in upstream's order:
 *   1. gone -> nothing (the CleanExpiredReservationAllocated gate, default off, is not built);
 *   2. Failed or Succeeded -> nothing, no requeue;
 *   3. no status.nodeName -> nothing: a pending reservation is never expired here (the
 *      scheduler keeps retrying it past its TTL; bound later, it expires at the next sync);
 *   4. expiry, skipped entirely when spec.ttl is explicitly 0 (which also disables expires):
 *      expired when expires is set and now > expires, or ttl is set and now - creation > ttl
 *      (ttl defaults to 24h in the CRD, so a later expires alone does not outlive 24h); the
 *      node of status.nodeName missing also expires it. Expired: phase Failed and the Ready
 *      condition False/Expired (a Ready=True condition is replaced with fresh times; none is
 *      appended; a Ready already not True only gets reason Expired and a new lastProbeTime);
 *   5. owners: the pods on its node whose reservation-allocated uid is this reservation's,
 *      status.currentOwners = [{namespace,name,uid}] sorted by uid and status.allocated = the
 *      sum of their requests (PodRequests) masked to the resource names of
 *      status.allocatable. Both unchanged -> no write; else written, and with allocateOnce
 *      (default true) the phase becomes Succeeded with Ready False/Succeeded (an existing
 *      Ready condition keeps its lastTransitionTime);
 *   6. requeue after the time left until expires (if set) or creation + ttl (if ttl > 0),
 *      clamped to [3 s, 15 s], for reservations not finished by this sync.
 * Status is written with UpdateStatus (PUT .../status with the resourceVersion read); on a
 * conflict the reservation is read again and the sync redone, a few times, then the key backs
 * off.
 *
 * Garbage collection (7.4), every gcIntervalSeconds unless disableGarbageCollection: an
 * Expired reservation (phase Failed, Ready False/Expired) whose Expired condition's
 * lastTransitionTime, or a Succeeded one whose Succeeded condition's lastProbeTime, is more
 * than gcDurationSeconds ago -- or either whose node no longer exists -- is deleted.
 * Failed-but-not-expired ones are kept forever. A missing or unparsable time counts as the
 * zero time (upstream's time.Since of a zero metav1.Time), i.e. very old.
 *
 * Time comes from an injectable clock (wall-clock seconds), so tests move it instead of
 * waiting; delays of the work queue stay in real time.
 *
 * Thread safety: start/stop/free from one controlling thread; resync, gc and stats from any.
 */
#ifndef KOORD_SCHED_RESERVATION_CONTROLLER_H
#define KOORD_SCHED_RESERVATION_CONTROLLER_H

#include <cjson/cJSON.h>
#include <stdbool.h>

struct kube_client;
struct strbuf;

/* Upstream's ReservationArgs defaults (pkg/scheduler/apis/config/v1/defaults.go). */
#define SCHED_RESV_GC_DURATION_S 86400
#define SCHED_RESV_GC_INTERVAL_S 60

struct sched_resv_controller_opts {
    unsigned workers;     /* controllerWorkers; 0 = 1 */
    long gc_duration_s;   /* gcDurationSeconds; <= 0 = 86400 */
    long gc_interval_s;   /* gcIntervalSeconds; <= 0 = 60 */
    bool disable_gc;      /* disableGarbageCollection */
    long sync_timeout_ms; /* start() waits this long for the caches; 0 = 60000 */
    long retry_base_ms;   /* per-key backoff of failed syncs; 0 = 5 (client-go) */
    long retry_max_ms;    /* its cap; 0 = 1000 s (client-go) */
    /* Wall-clock seconds since the epoch; NULL = the real clock. Called on worker threads. */
    double (*now)(void *userdata);
    void *now_userdata;
};

/*
 * Reads the controller's fields of a ReservationArgs object (the Reservation plugin's
 * pluginConfig args, decoded by the plugin's sched_reservation_args_decode(); NULL = defaults)
 * into *ret: controllerWorkers, gcDurationSeconds, gcIntervalSeconds, disableGarbageCollection.
 * 0, or -EINVAL with "args.<field>: <why>" lines appended to err (may be NULL).
 */
int sched_resv_controller_args(const cJSON *args, struct sched_resv_controller_opts *ret,
                               struct strbuf *err);

struct sched_config;

/*
 * What a scheduler configuration asks of the controller: upstream runs it from the
 * Reservation plugin, so *ret_enabled is whether some profile enables that plugin (while koord
 * has no plugin of that name registered, always true); *ret gets the args of the first profile
 * that configures the plugin (sched_resv_controller_args). 0 or -EINVAL with err appended.
 */
int sched_resv_controller_config(const struct sched_config *cfg, bool *ret_enabled,
                                 struct sched_resv_controller_opts *ret, struct strbuf *err);

struct sched_resv_controller;

/* Copies opts (NULL = defaults); the client is borrowed. Nothing runs until start. 0. */
int sched_resv_controller_new(struct kube_client *c, const struct sched_resv_controller_opts *opts,
                              struct sched_resv_controller **ret);

/* Starts the informers, waits for them to list, starts the workers and the GC thread. 0;
 * -EBUSY when running; -ETIMEDOUT or -ECANCELED (all torn down again); -errno. Logs. */
int sched_resv_controller_start(struct sched_resv_controller *c);

/* Stops the GC thread, informers and workers; pending requeues are dropped. Idempotent. */
void sched_resv_controller_stop(struct sched_resv_controller *c);

/* Stops and frees. NULL is fine. */
void sched_resv_controller_free(struct sched_resv_controller *c);

/* Queues every cached reservation for a sync now (after the clock moved, in tests). */
void sched_resv_controller_resync(struct sched_resv_controller *c);

/* Runs one garbage collection pass now, on the calling thread. Returns how many reservations
 * it deleted, or -errno when it is not running. */
int sched_resv_controller_gc(struct sched_resv_controller *c);

/* Counters; they accumulate across restarts. */
struct sched_resv_controller_stats {
    unsigned long syncs;        /* keys synced */
    unsigned long errors;       /* of those, failed */
    unsigned long expired;      /* reservations turned Failed/Expired */
    unsigned long succeeded;    /* turned Succeeded */
    unsigned long owner_writes; /* status writes of owners/allocated (Succeeded included) */
    unsigned long conflicts;    /* status writes refused with a conflict */
    unsigned long gc_passes;
    unsigned long deleted; /* by garbage collection */
};
void sched_resv_controller_stats(struct sched_resv_controller *c,
                                 struct sched_resv_controller_stats *ret);

#endif
