/*
 * Which Reservations a pod may consume (scheduling.koordinator.sh/v1alpha1; reference
 * manager-behaviour.md 7.3, koordlet-and-scheduler.md 5.3, api-types.md 4.5). Upstream:
 * pkg/util/reservation/reservation.go (ReservationOwnerMatcher, MatchReservationOwners,
 * RequiredReservationAffinity), apis/extension/reservation.go (GetReservationAffinity,
 * ExactMatchReservation) and the order of checks of checkReservationMatchedOrIgnored in
 * pkg/scheduler/plugins/reservation/transformer.go.
 *
 * Both sides are decoded once, off the scheduling cycle: a Reservation into struct sched_resv
 * (when the informer delivers it), a pod into struct sched_resv_pod (what of the pod matching
 * reads and struct sched_pod does not keep: every ownerReference, the pod's apiVersion, the
 * reservation-affinity and exact-match annotations). Matching then walks no JSON but for the
 * rare pod with a reservation affinity that selects on labels.
 *
 * Owners: spec.owners is an OR of terms; in a term object, controller and labelSelector are
 * ANDed and an absent part matches, so a term {} matches every pod; an empty list matches no
 * pod. object compares uid, name, namespace and apiVersion where non-empty (kind ignored);
 * controller needs its namespace (when set) to be the pod's, then any one ownerReference equal
 * on controller (when set), uid, name, kind and apiVersion (where non-empty); labelSelector is
 * a metav1.LabelSelector. A Reservation whose owners do not parse (a bad selector) matches no
 * pod, as upstream's ParseError.
 *
 * The full predicate, in upstream's order (sched_resv_match()):
 *   1. inactive: the reservation is not Available/Waiting with a status.nodeName;
 *   2. the pod is labelled scheduling.koordinator.sh/reservation-ignored=true -> "ignored": it
 *      may use the reservation's resources as free node resources (checked before the owners);
 *   3. owners do not match;
 *   4. with a reservation-affinity naming a reservation: only the name and the exact-match
 *      spec count (unschedulable, taints and selectors are not looked at);
 *   5. else: unschedulable (spec.unschedulable or being deleted); a NoSchedule/NoExecute taint
 *      not tolerated by the affinity's tolerations -- only when the pod has an affinity:
 *      upstream skips the taint check for pods without one (kept); the affinity's
 *      reservationSelector and reservationSelectorTerms against the labels of the
 *      reservation's node overlaid with the reservation's own (matchFields metadata.name is the
 *      reservation's name), as upstream's "fake node"; the exact-match spec.
 * The annotation present with an empty value counts as an empty affinity (present).
 *
 * Exact match (annotation scheduling.koordinator.sh/exact-match-reservation,
 * {"resourceNames": [...]}): for each name in order, the pod's request must equal the
 * reservation's allocatable; a name absent from both ends the check as a match (upstream
 * returns there), absent from one side fails. A pod request of zero counts as absent (the
 * scheduler's request vectors do not keep zero entries apart).
 *
 * Thread safety: decoded objects are immutable; sched_resv_ref/unref are atomic; matching
 * functions are pure and may run on any thread.
 */
#ifndef KOORD_SCHED_RESERVATION_OWNERS_H
#define KOORD_SCHED_RESERVATION_OWNERS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/quantity.h"
#include "sched/framework/types.h"

struct label_selector;

#define SCHED_RESV_PREFIX          "scheduling.koordinator.sh/"
#define SCHED_RESV_ANN_AFFINITY    SCHED_RESV_PREFIX "reservation-affinity"
#define SCHED_RESV_ANN_EXACT_MATCH SCHED_RESV_PREFIX "exact-match-reservation"
#define SCHED_RESV_ANN_ALLOCATED   SCHED_RESV_PREFIX "reservation-allocated"
#define SCHED_RESV_LABEL_IGNORED   SCHED_RESV_PREFIX "reservation-ignored"

enum sched_resv_phase {
    SCHED_RESV_PENDING = 0, /* "" or Pending */
    SCHED_RESV_AVAILABLE,
    SCHED_RESV_WAITING,
    SCHED_RESV_SUCCEEDED,
    SCHED_RESV_FAILED,
};

enum sched_resv_policy {
    SCHED_RESV_POLICY_DEFAULT = 0, /* "" (deprecated; the scheduler treats it as Aligned) */
    SCHED_RESV_POLICY_ALIGNED,
    SCHED_RESV_POLICY_RESTRICTED,
};

/* A pod's ownerReference, or an owner term's controller reference. */
struct sched_resv_ref {
    char *api_version, *kind, *name, *uid; /* "" when absent */
    int controller;                        /* -1 absent, 0 false, 1 true */
};

/* One term of spec.owners; absent parts are NULL / false. */
struct sched_resv_owner {
    bool has_object;
    char *obj_uid, *obj_name, *obj_namespace, *obj_api_version; /* "" when absent */
    bool has_controller;
    struct sched_resv_ref controller;
    char *ctl_namespace;             /* controller.namespace, "" when absent */
    struct label_selector *selector; /* NULL when absent */
};

/* One entry of status.allocatable. */
struct sched_resv_quantity {
    char *name;
    struct quantity q;
};

struct sched_resv {
    _Atomic int refs;
    char *name, *uid, *resource_version;
    cJSON *labels;   /* owned copy of metadata.labels; NULL when none */
    bool deleting;   /* metadata.deletionTimestamp set */
    char *node_name; /* status.nodeName, "" when unassigned */
    enum sched_resv_phase phase;
    bool allocate_once; /* spec.allocateOnce, true when absent */
    enum sched_resv_policy allocate_policy;
    bool unschedulable; /* spec.unschedulable */
    struct sched_taint *taints;
    size_t ntaints;
    struct sched_resv_owner *owners;
    size_t nowners;
    struct sched_resv_quantity *allocatable; /* status.allocatable (unparsable entries left out) */
    size_t nallocatable;
    char *invalid; /* NULL, or "spec.owners[0].labelSelector: <why>": owners then match nothing */
};

/*
 * Decodes a Reservation object. Always succeeds but for OOM: a malformed owner is reported in
 * (*ret)->invalid, malformed taints and allocatable entries are left out. obj is borrowed;
 * *ret has one reference.
 */
int sched_resv_decode(const cJSON *obj, struct sched_resv **ret);
struct sched_resv *sched_resv_ref(struct sched_resv *r);
/* Returns NULL; NULL is fine. The last reference frees. */
struct sched_resv *sched_resv_unref(struct sched_resv *r);

/* Whether the reservation is Available or Waiting with a node (IsReservationActive). */
bool sched_resv_is_active(const struct sched_resv *r);

/* The pod's side. */
struct sched_resv_pod {
    char *uid, *namespace, *name, *api_version; /* "" when absent */
    cJSON *labels;                              /* owned copy; NULL when none */
    struct sched_resv_ref *owner_refs;
    size_t nowner_refs;
    bool ignored; /* label reservation-ignored = "true" */

    bool has_affinity;      /* the reservation-affinity annotation is present (even "") */
    char *affinity_name;    /* its name, "" when none */
    cJSON *affinity_labels; /* reservationSelector (a map of strings); NULL when empty */
    struct sched_node_selector *affinity_terms; /* required...reservationSelectorTerms; NULL */
    struct sched_toleration *tolerations;       /* the affinity's tolerations */
    size_t ntolerations;

    char **exact_names; /* exact-match-reservation resourceNames */
    size_t nexact_names;

    char *invalid; /* NULL, or which annotation does not parse and why */
};

/* Decodes what matching needs of a Pod object. Always succeeds but for OOM; a malformed
 * annotation is reported in (*ret)->invalid (the scheduler should refuse the pod, as upstream's
 * PreFilter does). */
int sched_resv_pod_decode(const cJSON *pod, struct sched_resv_pod **ret);
void sched_resv_pod_free(struct sched_resv_pod *p);

/* Whether the owners of r match the pod (MatchReservationOwners). */
bool sched_resv_match_owners(const struct sched_resv *r, const struct sched_resv_pod *p);

/* The exact-match check alone (ExactMatchReservation): pod_req are the pod's requests
 * (struct sched_pod's req). */
bool sched_resv_exact_match(const struct sched_resv *r, const struct sched_resv_pod *p,
                            const struct sched_res *pod_req);

enum sched_resv_match {
    SCHED_RESV_MATCHED = 0,
    SCHED_RESV_IGNORED,         /* the pod ignores reservations (their resources are free) */
    SCHED_RESV_INACTIVE,        /* not Available/Waiting on a node */
    SCHED_RESV_OWNER_UNMATCHED, /* owners do not match */
    SCHED_RESV_NAME_UNMATCHED,  /* the affinity names another reservation */
    SCHED_RESV_UNSCHEDULABLE,   /* spec.unschedulable or being deleted */
    SCHED_RESV_TAINTS_UNTOLERATED,
    SCHED_RESV_AFFINITY_UNMATCHED, /* reservationSelector / reservationSelectorTerms */
    SCHED_RESV_NOT_EXACT_MATCHED,
};

/*
 * Whether the pod may consume the reservation, and if not the first reason (upstream's
 * diagnosis order, above). node_labels are the labels of the reservation's node (NULL = none);
 * pod_req the pod's requests. SCHED_RESV_MATCHED and SCHED_RESV_IGNORED both let the pod use
 * the reserved resources. The first taint not tolerated is stored in *ret_taint when
 * ret_taint is not NULL and the result is SCHED_RESV_TAINTS_UNTOLERATED.
 */
enum sched_resv_match sched_resv_match(const struct sched_resv *r, const struct sched_resv_pod *p,
                                       const struct sched_res *pod_req, const cJSON *node_labels,
                                       const struct sched_taint **ret_taint);

/* A short name of a result ("matched", "owner unmatched", ...), for logs and tests. */
const char *sched_resv_match_str(enum sched_resv_match m);

#endif
