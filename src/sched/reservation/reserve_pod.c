/*
 * Reserve pods (see reserve_pod.h), as Koordinator's pkg/util/reservation/reservation.go
 * NewReservePod builds them.
 */
#include "sched/reservation/reserve_pod.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "base/base.h"
#include "sched/framework/types.h"

const struct kube_resource sched_res_reservations = {"scheduling.koordinator.sh", "v1alpha1",
                                                     "reservations", "Reservation", false};

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *get_str(const cJSON *o, const char *k)
{
    const char *s = cJSON_GetStringValue(get(o, k));

    return s ? s : "";
}

enum sched_resv_state sched_resv_state(const cJSON *resv)
{
    const cJSON *status = get(resv, "status");
    const char *phase = get_str(status, "phase");

    if (!strcmp(phase, "Failed") || !strcmp(phase, "Succeeded"))
        return SCHED_RESV_RELEASED;
    if (!*get_str(status, "nodeName"))
        return SCHED_RESV_UNASSIGNED;
    if (!strcmp(phase, "Available") || !strcmp(phase, "Waiting"))
        return SCHED_RESV_HOLDING;
    /* A node but no phase that holds it (Pending with a node: a binding half written). */
    return SCHED_RESV_RELEASED;
}

/* dst's string members, then src's over them (labels, annotations). */
static void merge_strings(cJSON *dst, const cJSON *src)
{
    const cJSON *x;

    cJSON_ArrayForEach(x, src)
    {
        if (!cJSON_IsString(x) || !x->string)
            continue;
        cJSON_DeleteItemFromObjectCaseSensitive(dst, x->string);
        cJSON_AddStringToObject(dst, x->string, x->valuestring);
    }
}

/* The reserve pod's priority: the template's, else its koordinator.sh/priority label, else
 * MaxInt32 (a Reservation outranks every pod it holds room for). */
static double reserve_priority(const cJSON *tspec, const cJSON *labels)
{
    const cJSON *x = get(tspec, "priority");
    const char *l = get_str(labels, "koordinator.sh/priority");
    int64_t v;

    if (cJSON_IsNumber(x))
        return x->valuedouble;
    if (*l && parse_i64(l, &v) == 0 && v >= INT32_MIN && v <= INT32_MAX)
        return (double)v;
    return INT32_MAX;
}

cJSON *sched_reserve_pod(const cJSON *resv, const char **why)
{
    const cJSON *meta = get(resv, "metadata"), *spec = get(resv, "spec");
    const cJSON *tmpl = get(spec, "template"), *tmeta = get(tmpl, "metadata");
    const cJSON *status = get(resv, "status");
    enum sched_resv_state state = sched_resv_state(resv);
    const char *name = get_str(meta, "name"), *uid = get_str(meta, "uid");
    const char *ns = get_str(tmeta, "namespace");
    cJSON *pod, *pmeta, *pspec, *labels, *ann, *x;

    if (!*name || !*uid) {
        *why = "a Reservation without metadata.name or metadata.uid";
        return NULL;
    }
    if (state == SCHED_RESV_RELEASED) {
        *why = "a Reservation that holds nothing (Failed or Succeeded)";
        return NULL;
    }
    pod = cJSON_CreateObject();
    cJSON_AddStringToObject(pod, "apiVersion", "v1");
    cJSON_AddStringToObject(pod, "kind", "Pod");
    pmeta = cJSON_AddObjectToObject(pod, "metadata");
    cJSON_AddStringToObject(pmeta, "name", uid);
    cJSON_AddStringToObject(pmeta, "namespace", *ns ? ns : "default");
    cJSON_AddStringToObject(pmeta, "uid", uid);
    cJSON_AddStringToObject(pmeta, "resourceVersion", get_str(meta, "resourceVersion"));
    cJSON_AddStringToObject(pmeta, "creationTimestamp", get_str(meta, "creationTimestamp"));
    labels = cJSON_AddObjectToObject(pmeta, "labels");
    merge_strings(labels, get(tmeta, "labels"));
    merge_strings(labels, get(meta, "labels"));
    ann = cJSON_AddObjectToObject(pmeta, "annotations");
    merge_strings(ann, get(tmeta, "annotations"));
    merge_strings(ann, get(meta, "annotations"));
    cJSON_DeleteItemFromObjectCaseSensitive(ann, SCHED_ANN_RESERVE_POD);
    cJSON_AddStringToObject(ann, SCHED_ANN_RESERVE_POD, "true");
    cJSON_DeleteItemFromObjectCaseSensitive(ann, SCHED_ANN_RESERVATION_NAME);
    cJSON_AddStringToObject(ann, SCHED_ANN_RESERVATION_NAME, name);

    pspec = cJSON_IsObject(get(tmpl, "spec")) ? cJSON_Duplicate(get(tmpl, "spec"), true)
                                              : cJSON_CreateObject();
    CHECK(pspec);
    cJSON_AddItemToObject(pod, "spec", pspec);
    /* The template's node becomes a constraint (the Reservation plugin's PreFilter), not an
     * assignment: the reserve pod is still to be scheduled there. */
    x = cJSON_DetachItemFromObjectCaseSensitive(pspec, "nodeName");
    if (cJSON_IsString(x) && *x->valuestring) {
        cJSON_DeleteItemFromObjectCaseSensitive(ann, SCHED_ANN_RESERVATION_NODE);
        cJSON_AddStringToObject(ann, SCHED_ANN_RESERVATION_NODE, x->valuestring);
    }
    cJSON_Delete(x);
    cJSON_DeleteItemFromObjectCaseSensitive(pspec, "priority");
    cJSON_AddNumberToObject(pspec, "priority", reserve_priority(get(tmpl, "spec"), labels));
    if (!cJSON_IsString(get(pspec, "schedulerName")) || !*get_str(pspec, "schedulerName")) {
        cJSON_DeleteItemFromObjectCaseSensitive(pspec, "schedulerName");
        cJSON_AddStringToObject(pspec, "schedulerName", "default-scheduler");
    }
    if (state == SCHED_RESV_HOLDING) {
        /* On its node it holds what its status says, whatever the template asked. */
        cJSON *ctrs = cJSON_CreateArray(), *c = cJSON_CreateObject(), *res;
        cJSON_AddStringToObject(c, "name", "reserve");
        res = cJSON_AddObjectToObject(c, "resources");
        x = cJSON_Duplicate(get(status, "allocatable"), true);
        cJSON_AddItemToObject(res, "requests", x ? x : cJSON_CreateObject());
        cJSON_AddItemToArray(ctrs, c);
        cJSON_DeleteItemFromObjectCaseSensitive(pspec, "containers");
        cJSON_DeleteItemFromObjectCaseSensitive(pspec, "initContainers");
        cJSON_DeleteItemFromObjectCaseSensitive(pspec, "overhead");
        cJSON_AddItemToObject(pspec, "containers", ctrs);
        cJSON_AddStringToObject(pspec, "nodeName", get_str(status, "nodeName"));
    }
    return pod;
}

void sched_res_quantity_str(int i, int64_t v, char buf[64])
{
    const char *name = sched_res_name(i);
    struct quantity q;

    _Static_assert(QUANTITY_STR_MAX <= 64, "buffer");
    if (i == SCHED_RES_CPU)
        quantity_from_milli(v, QUANTITY_DECIMAL_SI, &q);
    else if (i == SCHED_RES_MEMORY || i == SCHED_RES_EPHEMERAL || !strncmp(name, "hugepages-", 10))
        quantity_from_int(v, QUANTITY_BINARY_SI, &q);
    else
        quantity_from_int(v, QUANTITY_DECIMAL_SI, &q);
    (void)quantity_format(&q, buf);
}

cJSON *sched_resv_allocatable(const cJSON *resv, const struct sched_pod *pod)
{
    const char *resize =
        get_str(get(get(resv, "metadata"), "annotations"), SCHED_ANN_RESIZE_ALLOCATABLE);
    cJSON *out = cJSON_CreateObject(), *r = *resize ? cJSON_Parse(resize) : NULL;
    const cJSON *x;
    char buf[64];

    for (int i = 0; i < sched_res_count(); i++) {
        int64_t v = pod->req.v[i];
        if (v <= 0)
            continue;
        sched_res_quantity_str(i, v, buf);
        cJSON_AddStringToObject(out, sched_res_name(i), buf);
    }
    /* {"cpu": "2", ...}: each named resource replaced; malformed JSON changes nothing. */
    if (!cJSON_IsObject(r)) {
        cJSON_Delete(r);
        r = NULL;
    }
    cJSON_ArrayForEach(x, r)
    {
        if (!cJSON_IsString(x) || !x->string)
            continue;
        cJSON_DeleteItemFromObjectCaseSensitive(out, x->string);
        cJSON_AddStringToObject(out, x->string, x->valuestring);
    }
    cJSON_Delete(r);
    return out;
}
