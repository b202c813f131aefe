/* Internals shared by the slo module's files; no other directory includes this. */
#ifndef KOORD_SLO_INT_H
#define KOORD_SLO_INT_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "api/schema.h"

enum slo_strategy_key { SLO_THRESHOLD, SLO_QOS, SLO_CPU_BURST, SLO_SYSTEM, SLO_NSTRATEGY };

struct slo_key_desc {
    const char *key;  /* ConfigMap key */
    const char *what; /* upstream's type name in messages */
    const struct api_schema *strategy;
    const char *dflt; /* default cluster strategy, JSON */
};

extern const struct slo_key_desc slo_strategy_keys[SLO_NSTRATEGY];

struct label_selector;

/* One nodeStrategies/nodeConfigs entry, already merged over the cluster strategy. */
struct slo_entry {
    char *name;
    struct label_selector *sel; /* NULL: matches nothing (absent or unparsable selector) */
    cJSON *strategy;
};

struct slo_keycfg {
    cJSON *cluster;
    struct slo_entry *nodes;
    size_t n;
};

struct slo_config {
    struct slo_keycfg keys[SLO_NSTRATEGY];
    struct slo_keycfg colocation;
    struct slo_keycfg host_apps; /* cluster: the applications array */
    /* The colocation cache state of upstream's colocation_cm_event_handler.go (1.5):
     * colocation_available once a colocation-config (or the ConfigMap's absence) was taken;
     * colocation_error while the last input was absent, undecodable or invalid. */
    bool colocation_available;
    bool colocation_error;
};

/* First matching entry's strategy, else the cluster's (1.6). */
const cJSON *slo__select(const struct slo_keycfg *k, const cJSON *node);

/* IsColocationStrategyValid (nil fields pass). */
bool slo_colocation_is_valid(const cJSON *s);

#endif
