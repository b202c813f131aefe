/*
 * Reserve pods: how the scheduler sees a Koordinator Reservation (reference
 * koordlet-and-scheduler.md 5.3, scheduler.md 8.4). A Reservation waiting for a node is
 * scheduled as the pod of its template would be, through the same queue, plugins and binding
 * cycle, so it is turned into that pod; once Available on a node it stays in the scheduler's
 * cache as a pod holding the reserved resources (status.allocatable) against everyone else.
 * Nothing here talks to the API server.
 */
#ifndef KOORD_SCHED_RESERVATION_RESERVE_POD_H
#define KOORD_SCHED_RESERVATION_RESERVE_POD_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "kube/client.h"

/* scheduling.koordinator.sh/v1alpha1 reservations (cluster-scoped). */
extern const struct kube_resource sched_res_reservations;
/* Their cluster events' resource, as plugins list it in .events. */
#define SCHED_RESV_EVENT_RESOURCE "reservations.v1alpha1.scheduling.koordinator.sh"

/* Annotations of reserve pods and of the pods placed into Reservations. */
#define SCHED_ANN_RESERVE_POD           "scheduling.koordinator.sh/reserve-pod"
#define SCHED_ANN_RESERVATION_NAME      "scheduling.koordinator.sh/reservation-name"
#define SCHED_ANN_RESERVATION_NODE      "scheduling.koordinator.sh/reservation-node"
#define SCHED_ANN_RESERVATION_ALLOCATED "scheduling.koordinator.sh/reservation-allocated"
#define SCHED_ANN_RESIZE_ALLOCATABLE    "scheduling.koordinator.sh/reservation-resize-allocatable"

enum sched_resv_state {
    SCHED_RESV_UNASSIGNED, /* to be scheduled: no status.nodeName, not Failed or Succeeded */
    SCHED_RESV_HOLDING,    /* on its node: nodeName set, phase Available or Waiting */
    SCHED_RESV_RELEASED,   /* Failed, Succeeded, or deleted: holds nothing */
};

enum sched_resv_state sched_resv_state(const cJSON *resv);

/*
 * The reserve pod of a Reservation, for its state: UNASSIGNED gives the template's pod (name the
 * Reservation's uid, namespace the template's or "default", the template's labels and
 * annotations with the Reservation's on top, the reserve-pod and reservation-name annotations,
 * the template's nodeName moved to the reservation-node annotation, priority the template's,
 * else the label koordinator.sh/priority, else MaxInt32, schedulerName the template's or
 * default-scheduler); HOLDING the same pod bound to status.nodeName, with one container
 * requesting status.allocatable. A new object (cJSON_Delete it); NULL with *why set when the
 * Reservation has no name or uid, or is RELEASED.
 */
cJSON *sched_reserve_pod(const cJSON *resv, const char **why);

/* A resource amount of the scheduler's vectors as Kubernetes writes it: cpu from milli-cores
 * ("1500m", "2"), memory-like names in BinarySI ("1Gi"), other names as integers. */
void sched_res_quantity_str(int i, int64_t v, char buf[64]);

/*
 * What status.allocatable is on binding: the template pod's requests (pod, the reserve pod as
 * decoded), each replaced by the resize annotation's value where it names the resource. A new
 * object of quantities.
 */
struct sched_pod;
cJSON *sched_resv_allocatable(const cJSON *resv, const struct sched_pod *pod);

#endif
