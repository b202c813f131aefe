/*
 * What the dashboard shows (ui.h), kept up to date from events rather than recomputed: one row
 * per node (allocatable and batch allocatable from the Node, LS and BE usage from its last
 * NodeMetric report), cluster totals maintained by adding and subtracting a row's change (so an
 * update costs the same with 10 or 10,000 nodes), a bounded ring of totals over time, the
 * pending pods by class with the scheduler's reason, and the recent QoS events (evictions and
 * suppressions). It renders itself as JSON: a whole snapshot for a new viewer, and a delta of
 * what changed since the last delta for the viewers already connected.
 *
 * Classes, as the NodeResource controller counts them (manager-behaviour.md 4.4): a pod is BE
 * when its priority class is koord-batch or koord-free (api_pod_priority) or its
 * koordinator.sh/qosClass is BE; every other pod is LS. A node's LS usage is its system usage
 * plus its non-BE pods' usage; its BE usage is its BE pods' usage.
 *
 * Not thread-safe: the dashboard server (ui.c) holds its lock around every call. Units: CPU in
 * milli-cores, memory in bytes, times in Unix milliseconds.
 */
#ifndef KOORD_MANAGER_UI_STATE_H
#define KOORD_MANAGER_UI_STATE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds: what a viewer is sent at most (the counts stay exact). */
#define UI_STATE_MAX_PENDING_SHOWN 200
#define UI_STATE_MAX_EVENTS        100

/* Reasons and source of the QoS events shown (koordlet's qosManager records them). */
#define UI_EVENT_SOURCE      "koordlet-qosManager"
#define UI_EVENT_EVICTION    "evictPodSuccess"
#define UI_EVENT_SUPPRESSION "BECPUSuppress"

struct ui_state;

/* history: totals points kept (0 = 360). */
struct ui_state *ui_state_new(size_t history);
void ui_state_free(struct ui_state *st);

/* A Node added or changed (its allocatable), or deleted (its row goes). true when the row
 * changed. */
bool ui_state_node(struct ui_state *st, const cJSON *node);
bool ui_state_node_delete(struct ui_state *st, const char *name);

/*
 * node's NodeMetric report, as nodemetric_server_get_usage() gives it ({"status": {updateTime,
 * nodeMetric: {systemUsage}, podsMetric: [...]}}): its LS and BE usage. A report for a node
 * without a Node yet makes its row too (the Node's event fills in allocatable). true when the
 * row changed.
 */
bool ui_state_report(struct ui_state *st, const char *node, const cJSON *usage);

/* A Pod added or changed, or deleted (key "namespace/name"): kept while it waits to be
 * scheduled. true when the pending list changed. */
bool ui_state_pod(struct ui_state *st, const cJSON *pod);
bool ui_state_pod_delete(struct ui_state *st, const char *key);

/* An Event: kept when it is one of the QoS events above. true when kept. */
bool ui_state_event(struct ui_state *st, const cJSON *event);

/* Rows (nodes known from a Node or a report). */
size_t ui_state_nodes(const struct ui_state *st);

/* Whether the totals have any allocatable CPU (some Node was seen). */
bool ui_state_has_capacity(const struct ui_state *st);

/* Appends the current totals to the history at unix_ms. */
void ui_state_point(struct ui_state *st, int64_t unix_ms);

/*
 * Everything, as a new tree: {"nodes": [row...], "totals": {...}, "history": {"t": [...],
 * <total>: [...], ...}, "pending": {"LS": n, "BE": n, "pods": [...]}, "events": [...]}; rows
 * sorted by name, pending pods oldest first, events newest first.
 */
cJSON *ui_state_snapshot(const struct ui_state *st);

/*
 * What changed since the last delta (or since the state was made), as a new tree with only
 * the members that changed: "nodes" (changed rows), "removed" (names), "totals", "point" (the
 * history points appended: {"t": [...], ...}), "pending" (the whole pending part), "events"
 * (the new ones, newest first). NULL when nothing changed. Clears the marks.
 */
cJSON *ui_state_delta(struct ui_state *st);

/* Whether there is a change not yet in a delta. */
bool ui_state_changed(const struct ui_state *st);

#endif
