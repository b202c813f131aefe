/*
 * The Table printers of the workload kinds (table.h renders every other kind): Deployment,
 * ReplicaSet, StatefulSet, DaemonSet, ControllerRevision, Job, CronJob, PodDisruptionBudget,
 * EndpointSlice and events.k8s.io Event, with the columns and cells of kube's
 * pkg/printers/internalversion/printers.go (kubernetes 1.33), so `kubectl get deploy -o wide`
 * shows against koord what it shows against kube-apiserver.
 */
#ifndef KOORD_APISERVER_TABLE_WORKLOADS_H
#define KOORD_APISERVER_TABLE_WORKLOADS_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

struct api_kind;

struct table_column {
    const char *name;
    const char *type; /* string, integer, number, boolean, date */
    const char *format;
    const char *desc;
    int priority; /* 1: shown with -o wide */
};

/* The columns of k's printer (*ret_n of them), or NULL when k is not one of these kinds. */
const struct table_column *table_workload_columns(const struct api_kind *k, size_t *ret_n);

/* Appends the cells of obj's row (one per column, wide ones included) to cells; now in Unix
 * seconds. k must be a kind table_workload_columns() knows. */
void table_workload_cells(const struct api_kind *k, const cJSON *obj, int64_t now, cJSON *cells);

#endif
