/*
 * Parsing slo-controller-config keys into pre-merged cluster and node strategies
 * (manager-behaviour.md 1.3-1.5) and selecting a node's strategy (1.6). Merges are the api
 * module's MergeCfg overlay, driven by the same field tables as the NodeSLO CRD.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/labels.h"
#include "api/schema.h"
#include "base/base.h"
#include "codec/codec.h"
#include "codec/patch.h"
#include "slo/slo-int.h"
#include "slo/slo.h"

void slo_events_release(struct slo_events *ev)
{
    for (size_t i = 0; i < ev->n; i++) {
        free(ev->v[i].key);
        free(ev->v[i].reason);
        free(ev->v[i].message);
    }
    free(ev->v);
    ev->v = NULL;
    ev->n = 0;
}

__attribute__((format(printf, 4, 5))) static void
event_add(struct slo_events *ev, const char *key, const char *reason, const char *fmt, ...)
{
    struct strbuf msg = STRBUF_INIT;
    va_list ap;

    if (!ev)
        return;
    va_start(ap, fmt);
    strbuf_vaddf(&msg, fmt, ap);
    va_end(ap);
    ev->v = xrealloc(ev->v, (ev->n + 1) * sizeof(*ev->v));
    ev->v[ev->n].key = xstrdup(key);
    ev->v[ev->n].reason = reason ? xstrdup(reason) : NULL;
    ev->v[ev->n].message = strbuf_detach(&msg, NULL);
    ev->n++;
}

static const char colocation_default_json[] =
    "{\"enable\":false,\"metricAggregateDurationSeconds\":300,\"metricReportIntervalSeconds\":60,"
    "\"metricAggregatePolicy\":{\"durations\":[\"5m0s\",\"10m0s\",\"30m0s\"]},"
    "\"metricMemoryCollectPolicy\":\"usageWithoutPageCache\",\"cpuReclaimThresholdPercent\":60,"
    "\"cpuCalculatePolicy\":\"usage\",\"memoryReclaimThresholdPercent\":65,"
    "\"memoryCalculatePolicy\":\"usage\",\"degradeTimeMinutes\":15,"
    "\"updateTimeThresholdSeconds\":300,\"resourceDiffThreshold\":0.1,"
    "\"midCPUThresholdPercent\":100,\"midMemoryThresholdPercent\":100,"
    "\"midUnallocatedPercent\":0,\"midStaticCPUReservedPercent\":0,"
    "\"midStaticMemoryReservedPercent\":0}";

/* The strategy keys of NodeSLO, in the order upstream processes them. */
const struct slo_key_desc slo_strategy_keys[SLO_NSTRATEGY] = {
    [SLO_THRESHOLD] = {SLO_KEY_THRESHOLD, "ThresholdCfg", &api_resource_threshold_strategy,
                       "{\"enable\":false,\"cpuSuppressThresholdPercent\":65,"
                       "\"cpuSuppressPolicy\":\"cpuset\",\"memoryEvictThresholdPercent\":70,"
                       "\"cpuEvictPolicy\":\"evictByRealLimit\"}"},
    [SLO_QOS] = {SLO_KEY_QOS, "ResourceQOSCfg", &api_resource_qos_strategy, "{}"},
    [SLO_CPU_BURST] = {SLO_KEY_CPU_BURST, "CPUBurstCfg", &api_cpu_burst_strategy,
                       "{\"policy\":\"none\",\"cpuBurstPercent\":1000,"
                       "\"cfsQuotaBurstPercent\":300,\"cfsQuotaBurstPeriodSeconds\":-1,"
                       "\"sharePoolThresholdPercent\":50}"},
    [SLO_SYSTEM] = {SLO_KEY_SYSTEM, "SystemCfg", &api_system_strategy,
                    "{\"totalNetworkBandwidth\":\"0\"}"},
};

/* The defaults are compile-time constants: NULL here can only mean out of memory. */
static cJSON *parse_const(const char *json)
{
    return cJSON_Parse(json);
}

static void entries_free(struct slo_entry *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(e[i].name);
        label_selector_free(e[i].sel);
        cJSON_Delete(e[i].strategy);
    }
    free(e);
}

static void keycfg_release(struct slo_keycfg *k)
{
    cJSON_Delete(k->cluster);
    entries_free(k->nodes, k->n);
    k->cluster = NULL;
    k->nodes = NULL;
    k->n = 0;
}

struct slo_config *slo_config_new(void)
{
    struct slo_config *cfg = xcalloc(1, sizeof(*cfg));

    /* Small internal constants: abort on OOM, as xcalloc() does. */
    for (int i = 0; i < SLO_NSTRATEGY; i++) {
        cfg->keys[i].cluster = parse_const(slo_strategy_keys[i].dflt);
        CHECK(cfg->keys[i].cluster);
    }
    cfg->colocation.cluster = parse_const(colocation_default_json);
    CHECK(cfg->colocation.cluster);
    cfg->host_apps.cluster = cJSON_CreateArray();
    CHECK(cfg->host_apps.cluster);
    return cfg;
}

void slo_config_free(struct slo_config *cfg)
{
    if (!cfg)
        return;
    for (int i = 0; i < SLO_NSTRATEGY; i++)
        keycfg_release(&cfg->keys[i]);
    keycfg_release(&cfg->colocation);
    keycfg_release(&cfg->host_apps);
    free(cfg);
}

/* Go's json.Unmarshal error for a type mismatch, close enough to name the field. */
static int type_check(const struct api_schema *s, const cJSON *v, const char *path,
                      struct strbuf *why)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    int r = 0;

    api_validate(s, v, path, API_V_TYPES, &errs);
    if (field_errors_count(&errs)) {
        field_error_format(&errs.v[0], why);
        r = -EINVAL;
    }
    field_errors_release(&errs);
    return r;
}

/* The decode checks of a node entry's name and selector (what json.Unmarshal rejects); run
 * before anything is built so a failure keeps the key's previous value. */
static int entry_check(const cJSON *entry, const char *path, struct strbuf *why)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(entry, "name");
    char p[80];

    if (name && !cJSON_IsNull(name) && !cJSON_IsString(name)) {
        strbuf_addf(why, "%s.name: must be a string", path);
        return -EINVAL;
    }
    (void)snprintf(p, sizeof(p), "%s.nodeSelector", path);
    return type_check(&api_label_selector, cJSON_GetObjectItemCaseSensitive(entry, "nodeSelector"),
                      p, why);
}

/* Builds a checked node entry's name and selector; a missing or unparsable selector matches
 * nothing. 0 or -ENOMEM. */
static int entry_init(struct slo_entry *e, const cJSON *entry)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(entry, "name");
    const cJSON *sel = cJSON_GetObjectItemCaseSensitive(entry, "nodeSelector");
    struct strbuf err = STRBUF_INIT;
    int r = 0;

    e->name = xstrdup(cJSON_IsString(name) ? name->valuestring : "");
    e->sel = NULL;
    if (cJSON_IsObject(sel)) {
        r = label_selector_from_json(sel, &e->sel, &err);
        if (r < 0)
            e->sel = NULL; /* upstream skips a selector that fails to parse */
    }
    strbuf_release(&err);
    return r == -ENOMEM ? r : 0;
}

bool slo_colocation_is_valid(const cJSON *s)
{
    static const struct {
        const char *key;
        double min;
        bool excl;
        double max;
    } rules[] = {
        {"metricAggregateDurationSeconds", 0, true, 1e300},
        {"metricReportIntervalSeconds", 0, true, 1e300},
        {"cpuReclaimThresholdPercent", 0, false, 1e300},
        {"memoryReclaimThresholdPercent", 0, false, 1e300},
        {"midStaticCPUReservedPercent", 0, false, 1e300},
        {"midStaticMemoryReservedPercent", 0, false, 1e300},
        {"degradeTimeMinutes", 0, true, 1e300},
        {"updateTimeThresholdSeconds", 0, true, 1e300},
        {"resourceDiffThreshold", 0, true, 1e300},
        {"midCPUThresholdPercent", 0, false, 100},
        {"midMemoryThresholdPercent", 0, false, 100},
        {"midUnallocatedPercent", 0, false, 100},
        {"batchCPUThresholdPercent", 0, false, 1e300},
        {"batchMemoryThresholdPercent", 0, false, 1e300},
    };
    const cJSON *mp = cJSON_GetObjectItemCaseSensitive(s, "metricMemoryCollectPolicy");

    for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, rules[i].key);
        if (!cJSON_IsNumber(v))
            continue;
        if (rules[i].excl ? !(v->valuedouble > rules[i].min) : v->valuedouble < rules[i].min)
            return false;
        if (v->valuedouble > rules[i].max)
            return false;
    }
    return !(cJSON_IsString(mp) && !*mp->valuestring);
}

/* Parses a key's JSON document, which must be an object. -EINVAL (why set), -ENOMEM. */
static int parse_object(const char *text, const char *what, cJSON **ret, struct strbuf *why)
{
    struct codec_error cerr = {0};
    int r = json_parse(text, strlen(text), NULL, ret, &cerr);

    if (r < 0) {
        if (r != -ENOMEM)
            strbuf_addstr(why, cerr.msg);
        return r;
    }
    if (!cJSON_IsObject(*ret)) {
        strbuf_addf(why, "json: cannot unmarshal a non-object into %s", what);
        cJSON_Delete(*ret);
        *ret = NULL;
        return -EINVAL;
    }
    return 0;
}

/* Type-checks the node entries (array `list` of objects with name, nodeSelector and strategy
 * fields) as Go's decoder would. -EINVAL with why. */
static int check_entries(const struct api_schema *strategy, const cJSON *ns, const char *list,
                         struct strbuf *why)
{
    const cJSON *c;
    int i = 0;

    if (ns && !cJSON_IsNull(ns) && !cJSON_IsArray(ns)) {
        strbuf_addf(why, "%s: must be an array", list);
        return -EINVAL;
    }
    cJSON_ArrayForEach(c, ns)
    {
        char p[64];
        (void)snprintf(p, sizeof(p), "%s[%d]", list, i++);
        if (!cJSON_IsObject(c)) {
            strbuf_addf(why, "%s: must be an object", p);
            return -EINVAL;
        }
        if (type_check(strategy, c, p, why) < 0 || entry_check(c, p, why) < 0)
            return -EINVAL;
    }
    return 0;
}

/*
 * Replaces out with the merged cluster strategy (taken over) and every node entry merged over
 * it (1.5). Colocation entries count only with matchLabels, and an invalid merged entry falls
 * back to the cluster strategy. 0 or -ENOMEM.
 */
static int install(struct slo_keycfg *out, const struct api_schema *strategy, cJSON *cluster,
                   const cJSON *ns, bool colocation)
{
    const cJSON *c;
    int r, i = 0;

    keycfg_release(out);
    out->cluster = cluster;
    out->n = (size_t)(ns ? cJSON_GetArraySize(ns) : 0);
    out->nodes = xcalloc(out->n ? out->n : 1, sizeof(*out->nodes));
    cJSON_ArrayForEach(c, ns)
    {
        struct slo_entry *e = &out->nodes[i++];
        r = entry_init(e, c);
        if (r < 0)
            return r;
        if (colocation &&
            !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(c, "nodeSelector"), "matchLabels"))) {
            label_selector_free(e->sel); /* only entries with matchLabels count (Appendix A) */
            e->sel = NULL;
        }
        e->strategy = cJSON_Duplicate(out->cluster, true);
        r = e->strategy ? api_overlay(strategy, &e->strategy, c) : -ENOMEM;
        if (r < 0)
            return r;
        if (colocation && !slo_colocation_is_valid(e->strategy)) {
            cJSON_Delete(e->strategy);
            e->strategy = cJSON_Duplicate(out->cluster, true);
            if (!e->strategy)
                return -ENOMEM;
        }
    }
    return 0;
}

/* Decodes one strategy key: {clusterStrategy, nodeStrategies[]}. -EINVAL with why on a decode
 * error (the caller keeps the old value), -ENOMEM. */
static int parse_strategy_key(const struct slo_key_desc *d, const char *text,
                              struct slo_keycfg *out, struct strbuf *why)
{
    cJSON *doc = NULL, *cluster = NULL;
    const cJSON *cs, *ns;
    int r;

    r = parse_object(text, d->what, &doc, why);
    if (r < 0)
        return r;
    cs = cJSON_GetObjectItemCaseSensitive(doc, "clusterStrategy");
    ns = cJSON_GetObjectItemCaseSensitive(doc, "nodeStrategies");
    r = -EINVAL;
    if (type_check(d->strategy, cs, "clusterStrategy", why) < 0 ||
        check_entries(d->strategy, ns, "nodeStrategies", why) < 0)
        goto out;
    cluster = parse_const(d->dflt);
    r = cluster ? api_overlay(d->strategy, &cluster, cs) : -ENOMEM;
    if (r == 0) {
        r = install(out, d->strategy, cluster, ns, false);
        cluster = NULL;
    }
out:
    cJSON_Delete(cluster);
    cJSON_Delete(doc);
    return r;
}

/* colocation-config: ColocationStrategy inline + nodeConfigs[] (1.5). */
static int parse_colocation(const char *text, struct slo_keycfg *out, struct strbuf *why,
                            bool *ret_invalid)
{
    cJSON *doc = NULL, *cluster = NULL;
    const cJSON *ns;
    int r;

    *ret_invalid = false;
    r = parse_object(text, "ColocationCfg", &doc, why);
    if (r < 0)
        return r;
    ns = cJSON_GetObjectItemCaseSensitive(doc, "nodeConfigs");
    r = -EINVAL;
    if (type_check(&slo_colocation_strategy, doc, "", why) < 0 ||
        check_entries(&slo_colocation_strategy, ns, "nodeConfigs", why) < 0)
        goto out;
    cluster = parse_const(colocation_default_json);
    r = cluster ? api_overlay(&slo_colocation_strategy, &cluster, doc) : -ENOMEM;
    if (r < 0)
        goto out;
    if (!slo_colocation_is_valid(cluster)) {
        /* Upstream logs and keeps the old config; no Event. */
        *ret_invalid = true;
        strbuf_addstr(why, "invalid cluster colocation strategy");
        r = -EINVAL;
        goto out;
    }
    r = install(out, &slo_colocation_strategy, cluster, ns, true);
    cluster = NULL;
out:
    cJSON_Delete(cluster);
    cJSON_Delete(doc);
    return r;
}

/* host-application-config: taken verbatim (no defaults, no merge). */
static int parse_host_apps(const char *text, struct slo_keycfg *out, struct strbuf *why)
{
    const struct api_schema apps = {.type = API_ARRAY, .items = &api_host_application_spec};
    cJSON *doc = NULL;
    const cJSON *a, *ns, *c;
    int r, i = 0;

    r = parse_object(text, "HostApplicationCfg", &doc, why);
    if (r < 0)
        return r;
    r = -EINVAL;
    a = cJSON_GetObjectItemCaseSensitive(doc, "applications");
    ns = cJSON_GetObjectItemCaseSensitive(doc, "nodeConfigs");
    if (type_check(&apps, a, "applications", why) < 0)
        goto out;
    if (ns && !cJSON_IsNull(ns) && !cJSON_IsArray(ns)) {
        strbuf_addstr(why, "nodeConfigs: must be an array");
        goto out;
    }
    cJSON_ArrayForEach(c, ns)
    {
        if (type_check(&apps, cJSON_GetObjectItemCaseSensitive(c, "applications"),
                       "nodeConfigs.applications", why) < 0 ||
            entry_check(c, "nodeConfigs", why) < 0)
            goto out;
    }
    r = -ENOMEM;
    keycfg_release(out);
    out->cluster = cJSON_IsArray(a) ? cJSON_Duplicate(a, true) : cJSON_CreateArray();
    if (!out->cluster)
        goto out;
    out->n = (size_t)(ns ? cJSON_GetArraySize(ns) : 0);
    out->nodes = xcalloc(out->n ? out->n : 1, sizeof(*out->nodes));
    cJSON_ArrayForEach(c, ns)
    {
        struct slo_entry *e = &out->nodes[i++];
        const cJSON *na = cJSON_GetObjectItemCaseSensitive(c, "applications");
        r = entry_init(e, c);
        if (r < 0)
            goto out;
        e->strategy = cJSON_IsArray(na) ? cJSON_Duplicate(na, true) : cJSON_CreateArray();
        if (!e->strategy) {
            r = -ENOMEM;
            goto out;
        }
    }
    r = 0;
out:
    cJSON_Delete(doc);
    return r;
}

/* Selectors are part of the config: a changed selector moves nodes between entries. NULL
 * (matches nothing) and {} (matches everything) both print as "", hence the extra tests. */
static bool selector_equal(const struct label_selector *a, const struct label_selector *b)
{
    struct strbuf sa = STRBUF_INIT, sb = STRBUF_INIT;
    bool eq;

    if (!a || !b)
        return a == b;
    if (label_selector_is_empty(a) != label_selector_is_empty(b))
        return false;
    label_selector_format(a, &sa);
    label_selector_format(b, &sb);
    eq = !strcmp(sa.buf, sb.buf);
    strbuf_release(&sa);
    strbuf_release(&sb);
    return eq;
}

static bool keycfg_equal(const struct slo_keycfg *a, const struct slo_keycfg *b)
{
    if (!json_value_equal(a->cluster, b->cluster) || a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (!json_value_equal(a->nodes[i].strategy, b->nodes[i].strategy) ||
            strcmp(a->nodes[i].name, b->nodes[i].name) != 0 ||
            !selector_equal(a->nodes[i].sel, b->nodes[i].sel))
            return false;
    return true;
}

static const char *data_key(const cJSON *data, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(data, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int slo_config_update(struct slo_config *cfg, const cJSON *data, struct slo_events *ev,
                      bool *ret_changed)
{
    bool changed = false;
    int r;

    for (int i = 0; i < SLO_NSTRATEGY; i++) {
        const struct slo_key_desc *d = &slo_strategy_keys[i];
        const char *text = data_key(data, d->key);
        struct slo_keycfg next = {0};
        struct strbuf why = STRBUF_INIT;

        if (!text) {
            next.cluster = parse_const(d->dflt);
            next.nodes = xcalloc(1, sizeof(*next.nodes));
            if (!next.cluster) {
                keycfg_release(&next);
                return -ENOMEM;
            }
        } else {
            r = parse_strategy_key(d, text, &next, &why);
            if (r == -ENOMEM) {
                keycfg_release(&next);
                strbuf_release(&why);
                return r;
            }
            if (r < 0) {
                event_add(ev, d->key, "SLOCfgUnmarshalFailed", "failed to unmarshal %s, err: %s",
                          d->what, why.buf);
                keycfg_release(&next);
                strbuf_release(&why);
                continue;
            }
        }
        strbuf_release(&why);
        if (!keycfg_equal(&next, &cfg->keys[i]))
            changed = true;
        keycfg_release(&cfg->keys[i]);
        cfg->keys[i] = next;
    }
    {
        const char *text = data_key(data, SLO_KEY_COLOCATION);
        struct slo_keycfg next = {0};
        struct strbuf why = STRBUF_INIT;
        bool invalid = false;

        if (!text || !*text) {
            next.cluster = parse_const(colocation_default_json);
            next.nodes = xcalloc(1, sizeof(*next.nodes));
            r = next.cluster ? 0 : -ENOMEM;
        } else {
            r = parse_colocation(text, &next, &why, &invalid);
        }
        if (r == -ENOMEM) {
            keycfg_release(&next);
            strbuf_release(&why);
            return r;
        }
        if (r < 0) {
            if (invalid)
                event_add(ev, SLO_KEY_COLOCATION, NULL, "%s", why.buf);
            else
                event_add(ev, SLO_KEY_COLOCATION, "ColocationCfgUnmarshalFailed",
                          "failed to unmarshal colocation config, err: %s", why.buf);
            keycfg_release(&next);
            cfg->colocation_error = true;
        } else {
            if (!keycfg_equal(&next, &cfg->colocation))
                changed = true;
            keycfg_release(&cfg->colocation);
            cfg->colocation = next;
            cfg->colocation_available = true;
            cfg->colocation_error = false;
        }
        strbuf_release(&why);
    }
    {
        const char *text = data_key(data, SLO_KEY_HOST_APP);
        struct slo_keycfg next = {0};
        struct strbuf why = STRBUF_INIT;

        if (!text) {
            next.cluster = cJSON_CreateArray();
            next.nodes = xcalloc(1, sizeof(*next.nodes));
            r = next.cluster ? 0 : -ENOMEM;
        } else {
            r = parse_host_apps(text, &next, &why);
        }
        if (r == -ENOMEM) {
            keycfg_release(&next);
            strbuf_release(&why);
            return r;
        }
        if (r < 0) {
            event_add(ev, SLO_KEY_HOST_APP, "SLOCfgUnmarshalFailed",
                      "failed to unmarshal %s, err: %s", "HostApplicationCfg", why.buf);
            keycfg_release(&next);
        } else {
            if (!keycfg_equal(&next, &cfg->host_apps))
                changed = true;
            keycfg_release(&cfg->host_apps);
            cfg->host_apps = next;
        }
        strbuf_release(&why);
    }
    if (ret_changed)
        *ret_changed = changed;
    return 0;
}

int slo_config_absent(struct slo_config *cfg, bool *ret_changed)
{
    int r = slo_config_update(cfg, NULL, NULL, ret_changed);

    if (r < 0)
        return r;
    /* Defaults, but in error: NodeMetric specs written meanwhile are kept (1.5 step 1). */
    cfg->colocation_available = true;
    cfg->colocation_error = true;
    return 0;
}

bool slo_colocation_available(const struct slo_config *cfg)
{
    return cfg->colocation_available;
}

bool slo_colocation_error(const struct slo_config *cfg)
{
    return cfg->colocation_error;
}

const cJSON *slo__select(const struct slo_keycfg *k, const cJSON *node)
{
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(node, "metadata"), "labels");

    for (size_t i = 0; i < k->n; i++)
        if (k->nodes[i].sel && label_selector_matches(k->nodes[i].sel, labels))
            return k->nodes[i].strategy;
    return k->cluster;
}
