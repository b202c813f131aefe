/*
 * The SLO configuration engine: the `slo-controller-config` ConfigMap turned into a NodeSLO per
 * node, exactly as upstream's slo-controller does it (reference/manager-behaviour.md sections
 * 1 and 2). A pure library: the manager feeds it ConfigMap updates and nodes, `koord slo
 * render` feeds it files. Parse failures of one key keep that key's last good value and are
 * reported as events (the manager records them as Warning Events on the ConfigMap).
 */
#ifndef KOORD_SLO_H
#define KOORD_SLO_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "api/field.h"

/* ConfigMap keys. */
#define SLO_KEY_COLOCATION    "colocation-config"
#define SLO_KEY_THRESHOLD     "resource-threshold-config"
#define SLO_KEY_QOS           "resource-qos-config"
#define SLO_KEY_CPU_BURST     "cpu-burst-config"
#define SLO_KEY_SYSTEM        "system-config"
#define SLO_KEY_HOST_APP      "host-application-config"
#define SLO_DEFAULT_NAME      "slo-controller-config"
#define SLO_DEFAULT_NAMESPACE "koordinator-system"

/* One thing worth telling the user about a ConfigMap update. */
struct slo_event {
    char *key;    /* the ConfigMap key */
    char *reason; /* Event reason (e.g. "SLOCfgUnmarshalFailed"), or NULL when upstream only logs */
    char *message; /* e.g. "failed to unmarshal ThresholdCfg, err: ..." */
};

struct slo_events {
    struct slo_event *v;
    size_t n;
};

void slo_events_release(struct slo_events *ev);

struct slo_config;

/* A config holding the defaults of every key (as if the ConfigMap were absent). */
struct slo_config *slo_config_new(void);
void slo_config_free(struct slo_config *cfg);

/*
 * Applies a ConfigMap's `data` (a JSON object of key -> string; NULL = the ConfigMap has no
 * data) on top of cfg, key by key, per manager-behaviour.md 1.5: a missing key takes its
 * default, a key that fails to decode keeps its previous value and appends an event. Sets
 * *ret_changed when the effective configuration changed. Returns 0 or -ENOMEM.
 */
int slo_config_update(struct slo_config *cfg, const cJSON *data, struct slo_events *ev,
                      bool *ret_changed);

/*
 * The ConfigMap does not exist (at start-up, or deleted): every key takes its default, as
 * slo_config_update() with NULL data does, and the colocation state becomes available but in
 * error (manager-behaviour.md 1.5 step 1). Sets *ret_changed (may be NULL) when the effective
 * configuration changed. Returns 0 or -ENOMEM.
 */
int slo_config_absent(struct slo_config *cfg, bool *ret_changed);

/*
 * The colocation-config cache state (1.5), which the NodeMetric side reads:
 *  - available: a colocation-config was taken (a good value, a missing or empty key, or the
 *    ConfigMap's absence); false on a new config and while every input so far failed to
 *    decode or validate. Upstream drops NodeMetric reconciles until it is true.
 *  - error: the last input was the ConfigMap's absence, a colocation-config that failed to
 *    decode (the last good value is kept) or an invalid cluster strategy (kept too, no Event);
 *    cleared by a good value or a missing/empty key. While true, existing NodeMetric specs are
 *    kept as they are (section 3 step 4).
 */
bool slo_colocation_available(const struct slo_config *cfg);
bool slo_colocation_error(const struct slo_config *cfg);

/*
 * The NodeSLO spec the manager writes for node (a core/v1 Node object; only its labels and
 * annotations are read), per manager-behaviour.md 1.6 and 2.3, in Go-client encoding.
 * old_spec: the current NodeSLO spec (its extensions are kept), or NULL on create.
 * Returns 0 or -ENOMEM; *ret is a new tree.
 */
int slo_render_spec(const struct slo_config *cfg, const cJSON *node, const cJSON *old_spec,
                    cJSON **ret);

/* The whole NodeSLO object {apiVersion, kind, metadata: {name}, spec, status: {}}. */
int slo_render_nodeslo(const struct slo_config *cfg, const cJSON *node, cJSON **ret);

/* The node's effective colocation strategy (1.6: cluster, first matching nodeConfigs entry,
 * the colocation-strategy annotation, then the reclaim-ratio labels). */
int slo_node_colocation(const struct slo_config *cfg, const cJSON *node, cJSON **ret);

/* Whether the merged *cluster* colocation strategy enables colocation: when it does not, node
 * entries cannot enable it (manager-behaviour.md 4.2 step 2). */
bool slo_cluster_colocation_enabled(const struct slo_config *cfg);

/*
 * The NodeMetric spec for node (section 3 "Spec computation"): {"metricCollectPolicy": ...}
 * with the default policy (300 s, 60 s, durations 5m/10m/30m, usageWithoutPageCache), whose
 * four fields are replaced by the node's colocation strategy (slo_node_colocation()) when that
 * strategy is valid and enabled. Durations are Go duration strings ("5m0s"); the result is in
 * Go-client encoding. It does not look at slo_colocation_error(): the caller decides whether to
 * keep an existing spec. Returns 0 or -ENOMEM; *ret is a new tree.
 */
int slo_render_nodemetric_spec(const struct slo_config *cfg, const cJSON *node, cJSON **ret);

/*
 * The checks of upstream's ConfigMap validating webhook (1.7) on a ConfigMap's data: JSON syntax,
 * node selectors present and valid, value ranges and paired thresholds, network QoS forms and
 * sums (bounded by system-config's totalNetworkBandwidth), node-entry names when need_names,
 * overlapping node selectors, and, when nodes are given, that no node matches two entries of
 * one key. Upstream's quirk of rejecting resource-qos-config when system-config is absent is
 * not copied. Appends errors whose field is "data[<key>]..."; returns their number.
 */
size_t slo_config_validate(const cJSON *data, const cJSON *const *nodes, size_t nnodes,
                           bool need_names, struct field_errors *errs);

/*
 * slo_config_validate() as the webhook runs it on an update (1.7): only the keys whose string
 * differs from old_data's (NULL on create: every key) are checked; an unchanged system-config is
 * still read for the network bandwidth the resource-qos sums are bounded by.
 */
size_t slo_config_validate_changed(const cJSON *data, const cJSON *old_data,
                                   const cJSON *const *nodes, size_t nnodes, bool need_names,
                                   struct field_errors *errs);

/* The ColocationStrategy description (colocation-config fields). */
extern const struct api_schema slo_colocation_strategy;

#endif
