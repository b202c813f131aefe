/*
 * koord manager (upstream koord-manager): the controllers that turn cluster state into
 * Koordinator objects, and the in-memory NodeMetric API of seed 001 (DESIGN.md section 3.1).
 * Everything runs only on the leader of the `koordinator-manager` Lease (manager-behaviour.md
 * section 10); a standby serves health and answers the NodeMetric API with 503.
 *
 * Parts, one directory each:
 *   nodeslo/       slo-controller-config -> one NodeSLO per Node (manager-behaviour.md 2)
 *   nodemetric/    the metrics.koordinator.sh NodeMetric API over the memory store
 *   noderesource/  NodeMetrics, Pods, Nodes -> kubernetes.io/batch-cpu, batch-memory (4.4)
 */
#ifndef KOORD_MANAGER_MANAGER_H
#define KOORD_MANAGER_MANAGER_H

/* Upstream's defaults (manager-behaviour.md 1.1, 10, 11). */
#define MANAGER_DEFAULT_NAMESPACE  "koordinator-system"
#define MANAGER_DEFAULT_LEASE_NAME "koordinator-manager"

/* The version string the manager's /version and logs carry. */
const char *manager_version(void);

#endif
