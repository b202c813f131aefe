/*
 * KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1), decoded as kube-scheduler decodes
 * it (strict: unknown fields are errors), defaulted as apis/config/v1/defaults.go does, validated
 * as apis/config/validation/validation.go does, and turned into the per-point plugin lists that
 * framework/runtime/framework.go NewFramework builds: mergePluginSet over the default plugins,
 * updatePluginList, expandMultiPointPlugins, getScoreWeights. Reference scheduler.md 7 and 1.1.
 *
 * Errors are collected, not stopped at: each is a field error with its path, rendered as
 * kube-apiserver renders field errors ("profiles[0].parallelism: Invalid value: 0: ..."), or for
 * errors upstream reports without a field type, "<path>: <upstream message>".
 */
#include "sched/config/config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/duration.h"
#include "api/field.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "codec/patch.h"
#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

#define CONFIG_API_VERSION "kubescheduler.config.k8s.io/v1"
#define CONFIG_KIND        "KubeSchedulerConfiguration"

/* A profile's plugin sets: the twelve extension points, then multiPoint. */
#define SET_MULTI SCHED_PT_COUNT
#define NSETS     (SCHED_PT_COUNT + 1)

static const char *const set_names[NSETS] = {
    [SCHED_PT_PRE_ENQUEUE] = "preEnqueue",
    [SCHED_PT_QUEUE_SORT] = "queueSort",
    [SCHED_PT_PRE_FILTER] = "preFilter",
    [SCHED_PT_FILTER] = "filter",
    [SCHED_PT_POST_FILTER] = "postFilter",
    [SCHED_PT_PRE_SCORE] = "preScore",
    [SCHED_PT_SCORE] = "score",
    [SCHED_PT_RESERVE] = "reserve",
    [SCHED_PT_PERMIT] = "permit",
    [SCHED_PT_PRE_BIND] = "preBind",
    [SCHED_PT_BIND] = "bind",
    [SCHED_PT_POST_BIND] = "postBind",
    [SET_MULTI] = "multiPoint",
};

static const char *const point_labels[SCHED_PT_COUNT] = {
    [SCHED_PT_PRE_ENQUEUE] = "PreEnqueue",
    [SCHED_PT_QUEUE_SORT] = "QueueSort",
    [SCHED_PT_PRE_FILTER] = "PreFilter",
    [SCHED_PT_FILTER] = "Filter",
    [SCHED_PT_POST_FILTER] = "PostFilter",
    [SCHED_PT_PRE_SCORE] = "PreScore",
    [SCHED_PT_SCORE] = "Score",
    [SCHED_PT_RESERVE] = "Reserve",
    [SCHED_PT_PERMIT] = "Permit",
    [SCHED_PT_PRE_BIND] = "PreBind",
    [SCHED_PT_BIND] = "Bind",
    [SCHED_PT_POST_BIND] = "PostBind",
};

const char *sched_point_name(enum sched_point p)
{
    return (unsigned)p < SCHED_PT_COUNT ? set_names[p] : NULL;
}

const char *sched_point_label(enum sched_point p)
{
    return (unsigned)p < SCHED_PT_COUNT ? point_labels[p] : NULL;
}

/*
 * upstream default_plugins.go getDefaultPlugins, without the plugins koord does not have (the
 * volume plugins and ImageLocality): all of them in multiPoint, none at a single point.
 */
static const struct {
    const char *name;
    int32_t weight; /* 0: none given */
} default_multipoint[] = {
    {"SchedulingGates", 0},  {"PrioritySort", 0},      {"NodeUnschedulable", 0},
    {"NodeName", 0},         {"TaintToleration", 3},   {"NodeAffinity", 2},
    {"NodePorts", 0},        {"NodeResourcesFit", 1},  {"PodTopologySpread", 2},
    {"InterPodAffinity", 2}, {"DefaultPreemption", 0}, {"NodeResourcesBalancedAllocation", 1},
    {"DefaultBinder", 0},
};

/*
 * What the configuration asks of the plugins. Parsing goes through this table rather than the
 * registry directly so that the tests can drive merging and expansion with plugins whose
 * extension points they choose.
 */
struct config_registry {
    /* The points plugin id implements, as 1 << enum sched_point bits. */
    unsigned (*points)(int id);
    /* The plugin of id (name, args kind, init and free are read). */
    const struct sched_plugin *(*plugin)(int id);
};

static unsigned plugin_points(const struct sched_plugin *p)
{
    unsigned m = 0;

    m |= p->pre_enqueue ? 1u << SCHED_PT_PRE_ENQUEUE : 0;
    m |= p->less ? 1u << SCHED_PT_QUEUE_SORT : 0;
    m |= p->pre_filter ? 1u << SCHED_PT_PRE_FILTER : 0;
    m |= p->filter ? 1u << SCHED_PT_FILTER : 0;
    m |= p->post_filter ? 1u << SCHED_PT_POST_FILTER : 0;
    m |= p->pre_score ? 1u << SCHED_PT_PRE_SCORE : 0;
    m |= p->score ? 1u << SCHED_PT_SCORE : 0;
    m |= p->reserve || p->unreserve ? 1u << SCHED_PT_RESERVE : 0;
    m |= p->permit ? 1u << SCHED_PT_PERMIT : 0;
    m |= p->pre_bind ? 1u << SCHED_PT_PRE_BIND : 0;
    m |= p->bind ? 1u << SCHED_PT_BIND : 0;
    m |= p->post_bind ? 1u << SCHED_PT_POST_BIND : 0;
    return m;
}

static unsigned registry_points(int id)
{
    return plugin_points(sched_registry_get(id));
}

static const struct config_registry real_registry = {
    .points = registry_points,
    .plugin = sched_registry_get,
};

static inline uint64_t bit(int id)
{
    return (uint64_t)1 << id;
}

/* ---- plugin sets (v1 PluginSet after decoding: names resolved to ids) ---- */

struct pentry {
    int id;
    int src; /* index in the file's enabled list; -1 for a default */
    bool has_weight;
    int32_t weight;
};

struct pset {
    struct pentry *v;
    size_t n, cap;
    uint64_t disabled; /* ids named in disabled */
    bool all_disabled; /* "*" named in disabled */
};

static void pset_push(struct pset *s, struct pentry e)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
    }
    s->v[s->n++] = e;
}

static void psets_release(struct pset sets[NSETS])
{
    for (int i = 0; i < NSETS; i++)
        free(sets[i].v);
    memset(sets, 0, NSETS * sizeof(*sets));
}

static void default_sets(struct pset def[NSETS])
{
    memset(def, 0, NSETS * sizeof(*def));
    for (size_t i = 0; i < ARRAY_SIZE(default_multipoint); i++) {
        int id = sched_registry_find(default_multipoint[i].name);

        CHECK(id >= 0);
        pset_push(&def[SET_MULTI], (struct pentry){.id = id,
                                                   .src = -1,
                                                   .has_weight = default_multipoint[i].weight != 0,
                                                   .weight = default_multipoint[i].weight});
    }
}

/*
 * koord-scheduler's default configuration (config/manager/scheduler-config.yaml; reference
 * scheduler.md 8.1, koordlet-and-scheduler.md 5): the Koordinator plugins at the points that
 * file lists them, after multiPoint's upstream plugins there, with its score weights. At
 * postFilter and bind the file disables "*" and lists its own order, Reservation first (a
 * Reservation preempts nobody; Reservation binds the pods that stand for Reservations, and
 * DefaultBinder the others). ElasticQuota also runs at PreEnqueue, where it gates pods of a
 * full quota (docs/scheduler.md). Only the configuration without a file has them: a file starts
 * from upstream's defaults, as it does for koord-scheduler.
 */
static const struct {
    const char *name;
    enum sched_point point;
    int32_t weight; /* score only */
} koord_default_points[] = {
    {"ScheduleAdmission", SCHED_PT_PRE_ENQUEUE, 0},
    {"ElasticQuota", SCHED_PT_PRE_ENQUEUE, 0},
    {"Reservation", SCHED_PT_PRE_FILTER, 0},
    {"ElasticQuota", SCHED_PT_PRE_FILTER, 0},
    {"Reservation", SCHED_PT_FILTER, 0},
    {"LoadAwareScheduling", SCHED_PT_FILTER, 0},
    {"Reservation", SCHED_PT_POST_FILTER, 0},
    {"ElasticQuota", SCHED_PT_POST_FILTER, 0},
    {"DefaultPreemption", SCHED_PT_POST_FILTER, 0},
    {"Reservation", SCHED_PT_PRE_SCORE, 0},
    {"LoadAwareScheduling", SCHED_PT_SCORE, 1},
    {"Reservation", SCHED_PT_SCORE, 5000},
    {"Reservation", SCHED_PT_RESERVE, 0},
    {"LoadAwareScheduling", SCHED_PT_RESERVE, 0},
    {"ElasticQuota", SCHED_PT_RESERVE, 0},
    {"Reservation", SCHED_PT_PRE_BIND, 0},
    {"Reservation", SCHED_PT_BIND, 0},
    {"DefaultBinder", SCHED_PT_BIND, 0},
};

static void koord_default_sets(struct pset sets[NSETS])
{
    sets[SCHED_PT_POST_FILTER].all_disabled = true;
    sets[SCHED_PT_BIND].all_disabled = true;
    for (size_t i = 0; i < ARRAY_SIZE(koord_default_points); i++) {
        int id = sched_registry_find(koord_default_points[i].name);

        CHECK(id >= 0);
        pset_push(&sets[koord_default_points[i].point],
                  (struct pentry){.id = id,
                                  .src = -1,
                                  .has_weight = koord_default_points[i].weight != 0,
                                  .weight = koord_default_points[i].weight});
    }
}

/*
 * default_plugins.go mergePluginSet: the defaults not disabled (none when "*" is), each replaced
 * in place by a file entry of the same name (the last one, as upstream's map keeps it), then the
 * file's other entries in their order (duplicates included: expansion reports them).
 */
static void merge_set(const struct pset *def, const struct pset *custom, struct pset *out)
{
    bool *replaced = xcalloc(custom->n + 1, sizeof(*replaced));

    memset(out, 0, sizeof(*out));
    out->disabled = def->disabled | custom->disabled;
    out->all_disabled = def->all_disabled || custom->all_disabled;
    if (!out->all_disabled) {
        for (size_t i = 0; i < def->n; i++) {
            struct pentry e = def->v[i];

            if (out->disabled & bit(e.id))
                continue;
            for (size_t k = custom->n; k-- > 0;) {
                if (custom->v[k].id == e.id) {
                    e = custom->v[k];
                    replaced[k] = true;
                    break;
                }
            }
            pset_push(out, e);
        }
    }
    for (size_t k = 0; k < custom->n; k++)
        if (!replaced[k])
            pset_push(out, custom->v[k]);
    free(replaced);
}

/* ---- error reporting ---- */

struct pctx {
    const struct config_registry *reg;
    struct field_errors errs;
    bool oom;
};

static char *pathf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *pathf(const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;

    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    return strbuf_detach(&sb, NULL);
}

/* "base.key", or "key" at the top. */
static char *path_child(const char *base, const char *key)
{
    return *base ? pathf("%s.%s", base, key) : xstrdup(key);
}

/* A field error whose value is v rendered as JSON. */
static void bad_value(struct pctx *c, enum field_error_type type, const char *path, const cJSON *v,
                      const char *detail)
{
    struct strbuf sb = STRBUF_INIT;

    (void)json_print(v, &sb);
    field_error_add(&c->errs, type, path, sb.buf, "%s", detail);
    strbuf_release(&sb);
}

/* An error kube-scheduler reports as plain text: rendered "<path>: <message>". */
static void plain_error(struct pctx *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void plain_error(struct pctx *c, const char *path, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;

    if (*path)
        strbuf_addf(&sb, "%s: ", path);
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    field_error_add(&c->errs, FIELD_UNKNOWN, path, NULL, "%s", sb.buf);
    strbuf_release(&sb);
}

/* ---- typed members (what Go's decoder accepts for each field type) ---- */

/* Strict decoding: every member of obj must be one of known (NULL-terminated). */
static void check_known(struct pctx *c, const cJSON *obj, const char *base,
                        const char *const *known)
{
    const cJSON *m;

    cJSON_ArrayForEach(m, obj)
    {
        bool ok = false;

        for (const char *const *k = known; *k && !ok; k++)
            ok = !strcmp(*k, m->string);
        if (!ok) {
            char *path = path_child(base, m->string);

            plain_error(c, path, "unknown field \"%s\"", path);
            free(path);
        }
    }
}

/* The member key of obj, or NULL when absent or null (Go leaves the field unset). */
static const cJSON *member(const cJSON *obj, const char *key)
{
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;

    return v && !cJSON_IsNull(v) ? v : NULL;
}

/* An optional integer member within [min, max] (its Go type's range). */
static bool get_int(struct pctx *c, const cJSON *obj, const char *key, const char *base,
                    int64_t min, int64_t max, int64_t *ret)
{
    const cJSON *v = member(obj, key);
    char *path;
    double d;

    if (!v)
        return false;
    d = v->valuedouble;
    if (cJSON_IsNumber(v) && d >= (double)min && d <= (double)max && d == (double)(int64_t)d) {
        *ret = (int64_t)d;
        return true;
    }
    path = path_child(base, key);
    bad_value(c, FIELD_INVALID, path, v,
              cJSON_IsNumber(v) ? "must be an integer in the range of its type"
                                : "must be an integer");
    free(path);
    return false;
}

static bool get_int32(struct pctx *c, const cJSON *obj, const char *key, const char *base,
                      int32_t *ret)
{
    int64_t x;

    if (!get_int(c, obj, key, base, INT32_MIN, INT32_MAX, &x))
        return false;
    *ret = (int32_t)x;
    return true;
}

static bool get_number(struct pctx *c, const cJSON *obj, const char *key, const char *base,
                       double *ret)
{
    const cJSON *v = member(obj, key);
    char *path;

    if (!v)
        return false;
    if (cJSON_IsNumber(v)) {
        *ret = v->valuedouble;
        return true;
    }
    path = path_child(base, key);
    bad_value(c, FIELD_INVALID, path, v, "must be a number");
    free(path);
    return false;
}

static bool get_bool(struct pctx *c, const cJSON *obj, const char *key, const char *base, bool *ret)
{
    const cJSON *v = member(obj, key);
    char *path;

    if (!v)
        return false;
    if (cJSON_IsBool(v)) {
        *ret = cJSON_IsTrue(v);
        return true;
    }
    path = path_child(base, key);
    bad_value(c, FIELD_INVALID, path, v, "must be a boolean");
    free(path);
    return false;
}

/* An optional string member; the returned string is borrowed from the tree. */
static const char *get_string(struct pctx *c, const cJSON *obj, const char *key, const char *base)
{
    const cJSON *v = member(obj, key);
    char *path;

    if (!v)
        return NULL;
    if (cJSON_IsString(v))
        return v->valuestring;
    path = path_child(base, key);
    bad_value(c, FIELD_INVALID, path, v, "must be a string");
    free(path);
    return NULL;
}

/* An optional metav1.Duration member ("15s"), in nanoseconds. */
static bool get_duration(struct pctx *c, const cJSON *obj, const char *key, const char *base,
                         int64_t *ret)
{
    const cJSON *v = member(obj, key);
    char *path;

    if (!v)
        return false;
    if (cJSON_IsString(v) && duration_parse(v->valuestring, ret) == 0)
        return true;
    path = path_child(base, key);
    bad_value(c, FIELD_INVALID, path, v, "must be a duration such as \"15s\"");
    free(path);
    return false;
}

/* Whether v (present) has the container type; reports it otherwise. */
static bool want_object(struct pctx *c, const cJSON *v, const char *path)
{
    if (cJSON_IsObject(v))
        return true;
    bad_value(c, FIELD_INVALID, path, v, "must be an object");
    return false;
}

static bool want_array(struct pctx *c, const cJSON *v, const char *path)
{
    if (cJSON_IsArray(v))
        return true;
    bad_value(c, FIELD_INVALID, path, v, "must be a list");
    return false;
}

/* ---- top-level sections ---- */

/* component-base LeaderElectionConfiguration, its defaults and validation, plus the scheduler's
 * "leases only" rule (validation.go ValidateKubeSchedulerConfiguration). */
static void parse_leader_election(struct pctx *c, const cJSON *doc, struct sched_config *cfg)
{
    static const char *const known[] = {
        "leaderElect",  "leaseDuration", "renewDeadline",     "retryPeriod",
        "resourceLock", "resourceName",  "resourceNamespace", NULL};
    const cJSON *le = member(doc, "leaderElection");
    int64_t lease = 15000000000, renew = 10000000000, retry = 2000000000, ns;
    const char *lock = NULL, *s;
    char dl[DURATION_STR_MAX], dr[DURATION_STR_MAX];

    if (le && !want_object(c, le, "leaderElection"))
        return;
    if (le) {
        check_known(c, le, "leaderElection", known);
        (void)get_bool(c, le, "leaderElect", "leaderElection", &cfg->leader_elect);
        /* Zero durations and empty strings are unset in Go, so they take the defaults. */
        if (get_duration(c, le, "leaseDuration", "leaderElection", &ns) && ns != 0)
            lease = ns;
        if (get_duration(c, le, "renewDeadline", "leaderElection", &ns) && ns != 0)
            renew = ns;
        if (get_duration(c, le, "retryPeriod", "leaderElection", &ns) && ns != 0)
            retry = ns;
        lock = get_string(c, le, "resourceLock", "leaderElection");
        if ((s = get_string(c, le, "resourceNamespace", "leaderElection")) && *s) {
            free(cfg->lease_namespace);
            cfg->lease_namespace = xstrdup(s);
        }
        if ((s = get_string(c, le, "resourceName", "leaderElection")) && *s) {
            free(cfg->lease_name);
            cfg->lease_name = xstrdup(s);
        }
    }
    cfg->lease_ms = (long)(lease / 1000000);
    cfg->renew_ms = (long)(renew / 1000000);
    cfg->retry_ms = (long)(retry / 1000000);
    if (!cfg->leader_elect)
        return;
    if (lease <= 0) {
        (void)duration_format(lease, dl);
        field_error_add(&c->errs, FIELD_INVALID, "leaderElection.leaseDuration", dl,
                        "must be greater than zero");
    }
    if (renew <= 0) {
        (void)duration_format(renew, dr);
        field_error_add(&c->errs, FIELD_INVALID, "leaderElection.renewDeadline", dr,
                        "must be greater than zero");
    }
    if (retry <= 0) {
        (void)duration_format(retry, dr);
        field_error_add(&c->errs, FIELD_INVALID, "leaderElection.retryPeriod", dr,
                        "must be greater than zero");
    }
    if (lease <= renew) {
        (void)duration_format(renew, dr);
        field_error_add(&c->errs, FIELD_INVALID, "leaderElection.leaseDuration", dr,
                        "LeaseDuration must be greater than RenewDeadline");
    }
    if (lock && *lock && strcmp(lock, "leases")) {
        struct strbuf v = STRBUF_INIT;

        strbuf_add_json_str(&v, lock);
        field_error_add(&c->errs, FIELD_INVALID, "leaderElection.resourceLock", v.buf,
                        "resourceLock value must be \"leases\"");
        strbuf_release(&v);
    }
}

/* component-base ClientConnectionConfiguration: zero qps/burst take the defaults. */
static void parse_client_connection(struct pctx *c, const cJSON *doc, struct sched_config *cfg)
{
    static const char *const known[] = {
        "kubeconfig", "acceptContentTypes", "contentType", "qps", "burst", NULL};
    const cJSON *cc = member(doc, "clientConnection");
    const char *s;
    double qps;
    int32_t burst;

    if (!cc || !want_object(c, cc, "clientConnection"))
        return;
    check_known(c, cc, "clientConnection", known);
    if ((s = get_string(c, cc, "kubeconfig", "clientConnection")) && *s)
        cfg->kubeconfig = xstrdup(s);
    /* Accepted for compatibility: koord speaks JSON to the API server whatever they say. */
    (void)get_string(c, cc, "acceptContentTypes", "clientConnection");
    (void)get_string(c, cc, "contentType", "clientConnection");
    if (get_number(c, cc, "qps", "clientConnection", &qps) && qps != 0)
        cfg->qps = qps;
    if (get_int32(c, cc, "burst", "clientConnection", &burst)) {
        if (burst < 0) {
            char val[16];

            (void)snprintf(val, sizeof(val), "%d", (int)burst);
            field_error_add(&c->errs, FIELD_INVALID, "clientConnection.burst", val,
                            "must be non-negative");
        } else if (burst != 0) {
            cfg->burst = burst;
        }
    }
}

/* ---- profiles ---- */

/* One v1 PluginSet of the file; entries that do not name a koord plugin are reported, left out. */
static void parse_set(struct pctx *c, const cJSON *v, const char *path, struct pset *out)
{
    static const char *const set_known[] = {"enabled", "disabled", NULL};
    static const char *const plugin_known[] = {"name", "weight", NULL};
    const cJSON *list, *it;
    size_t k;

    if (!v || !want_object(c, v, path))
        return;
    check_known(c, v, path, set_known);

    list = member(v, "enabled");
    k = 0;
    if (list) {
        char *lpath = path_child(path, "enabled");

        if (want_array(c, list, lpath)) {
            cJSON_ArrayForEach(it, list)
            {
                char *ipath = pathf("%s[%zu]", lpath, k);
                struct pentry e = {.id = -1, .src = (int)k};
                const char *name;

                k++;
                if (!want_object(c, it, ipath)) {
                    free(ipath);
                    continue;
                }
                check_known(c, it, ipath, plugin_known);
                e.has_weight = get_int32(c, it, "weight", ipath, &e.weight);
                name = get_string(c, it, "name", ipath);
                if (!name || !*name) {
                    char *npath = path_child(ipath, "name");

                    if (!member(it, "name") || (name && !*name))
                        field_error_add(&c->errs, FIELD_REQUIRED, npath, NULL, NULL);
                    free(npath);
                } else if ((e.id = sched_registry_find(name)) >= 0) {
                    pset_push(out, e);
                } else if (sched_registry_is_upstream_only(name)) {
                    plain_error(c, ipath, "plugin \"%s\" is not supported by koord scheduler",
                                name);
                } else {
                    char *npath = path_child(ipath, "name");
                    struct strbuf q = STRBUF_INIT;

                    strbuf_add_json_str(&q, name);
                    field_error_add(&c->errs, FIELD_INVALID, npath, q.buf, "unknown plugin");
                    strbuf_release(&q);
                    free(npath);
                }
                free(ipath);
            }
        }
        free(lpath);
    }

    list = member(v, "disabled");
    k = 0;
    if (list) {
        char *lpath = path_child(path, "disabled");

        if (want_array(c, list, lpath)) {
            cJSON_ArrayForEach(it, list)
            {
                char *ipath = pathf("%s[%zu]", lpath, k++);
                const char *name;
                int32_t w;
                int id;

                if (want_object(c, it, ipath)) {
                    check_known(c, it, ipath, plugin_known);
                    (void)get_int32(c, it, "weight", ipath, &w);
                    /* Any name is accepted, as upstream: one koord lacks has nothing to disable. */
                    name = get_string(c, it, "name", ipath);
                    if (name && !strcmp(name, "*"))
                        out->all_disabled = true;
                    else if (name && (id = sched_registry_find(name)) >= 0)
                        out->disabled |= bit(id);
                }
                free(ipath);
            }
        }
        free(lpath);
    }
}

/* The profile's plugins: the file's sets merged over the defaults. */
static void parse_plugins(struct pctx *c, const cJSON *plugins, const char *ppath,
                          struct pset sets[NSETS])
{
    struct pset def[NSETS], custom[NSETS];
    const char *known[NSETS + 1];
    char *path = path_child(ppath, "plugins");

    default_sets(def);
    memset(custom, 0, sizeof(custom));
    if (plugins && want_object(c, plugins, path)) {
        for (int s = 0; s < NSETS; s++)
            known[s] = set_names[s];
        known[NSETS] = NULL;
        check_known(c, plugins, path, known);
        for (int s = 0; s < NSETS; s++) {
            char *spath = path_child(path, set_names[s]);

            parse_set(c, member(plugins, set_names[s]), spath, &custom[s]);
            free(spath);
        }
    }
    for (int s = 0; s < NSETS; s++)
        merge_set(&def[s], &custom[s], &sets[s]);
    psets_release(def);
    psets_release(custom);
    free(path);
}

/*
 * NewFramework's updatePluginList for every point, then expandMultiPointPlugins and
 * getScoreWeights, on merged sets whose ids are all valid. points says which points a plugin
 * implements. Fills prof->points; errors name ppath ("profiles[0]").
 */
static void expand_profile(struct pctx *c, const struct pset sets[NSETS],
                           unsigned (*points)(int id), const char *ppath,
                           struct sched_profile_config *prof)
{
    const struct pset *mp = &sets[SET_MULTI];
    int64_t weight[SCHED_MAX_PLUGINS] = {0}, total = 0;
    size_t nerr = c->errs.n;

    /* updatePluginList: a plugin listed at a point must implement it, once. */
    for (int p = 0; p < SCHED_PT_COUNT; p++) {
        uint64_t seen = 0;

        for (size_t i = 0; i < sets[p].n; i++) {
            const struct pentry *e = &sets[p].v[i];
            const char *name = c->reg->plugin(e->id)->name;
            char *path = pathf("%s.plugins.%s.enabled[%d]", ppath, set_names[p], e->src);

            if (!(points(e->id) & (1u << p)))
                plain_error(c, path, "plugin \"%s\" does not extend %sPlugin plugin", name,
                            point_labels[p]);
            else if (seen & bit(e->id))
                plain_error(c, path, "plugin \"%s\" already registered as \"%sPlugin\"", name,
                            point_labels[p]);
            seen |= bit(e->id);
            free(path);
        }
    }
    if (c->errs.n != nerr)
        return;

    for (int p = 0; p < SCHED_PT_COUNT; p++) {
        const struct pset *s = &sets[p];
        int *multi = xcalloc(mp->n + 1, sizeof(*multi));
        uint64_t at_point = 0, override = 0, from_multi = 0;
        size_t nmulti = 0, n = 0;

        for (size_t i = 0; i < s->n; i++)
            at_point |= bit(s->v[i].id);
        /* With "*" disabled at the point, multiPoint adds nothing there. */
        for (size_t i = 0; !s->all_disabled && i < mp->n; i++) {
            int id = mp->v[i].id;

            if (!(points(id) & (1u << p)) || (s->disabled & bit(id)))
                continue;
            if (at_point & bit(id)) {
                override |= bit(id); /* the point's own entry wins, in its place */
                continue;
            }
            if (from_multi & bit(id)) {
                char *path = mp->v[i].src >= 0
                                 ? pathf("%s.plugins.multiPoint.enabled[%d]", ppath, mp->v[i].src)
                                 : pathf("%s.plugins.multiPoint", ppath);

                plain_error(c, path, "plugin \"%s\" already registered as \"%sPlugin\"",
                            c->reg->plugin(id)->name, point_labels[p]);
                free(path);
                continue;
            }
            from_multi |= bit(id);
            multi[nmulti++] = id;
        }

        prof->npoints[p] = s->n + nmulti;
        prof->points[p] =
            prof->npoints[p] ? xcalloc(prof->npoints[p], sizeof(*prof->points[p])) : NULL;
        /* The point's entries also enabled in multiPoint, then multiPoint's, then the rest. */
        for (size_t i = 0; i < s->n; i++)
            if (override & bit(s->v[i].id))
                prof->points[p][n++].id = s->v[i].id;
        for (size_t i = 0; i < nmulti; i++)
            prof->points[p][n++].id = multi[i];
        for (size_t i = 0; i < s->n; i++)
            if (!(override & bit(s->v[i].id)))
                prof->points[p][n++].id = s->v[i].id;
        free(multi);
    }

    /* getScoreWeights: a weight at the score point beats multiPoint's; 0 or none is 1. */
    for (int pass = 0; pass < 2; pass++) {
        const struct pset *s = pass ? mp : &sets[SCHED_PT_SCORE];

        for (size_t i = 0; i < s->n; i++) {
            const struct pentry *e = &s->v[i];
            int64_t w = e->has_weight ? e->weight : 0;

            if (!(points(e->id) & (1u << SCHED_PT_SCORE)) || weight[e->id] != 0)
                continue;
            weight[e->id] = w = w ? w : 1;
            if (w * SCHED_MAX_NODE_SCORE > INT64_MAX - total) {
                char *path = path_child(ppath, "plugins");

                plain_error(c, path, "total score of Score plugins could overflow");
                free(path);
                pass = 2;
                break;
            }
            total += w * SCHED_MAX_NODE_SCORE;
        }
    }
    for (size_t i = 0; i < prof->npoints[SCHED_PT_SCORE]; i++) {
        struct sched_plugin_ref *r = &prof->points[SCHED_PT_SCORE][i];

        r->weight = (int32_t)(weight[r->id] ? weight[r->id] : 1);
    }
}

/*
 * The checks of args upstream makes while decoding them (v1 PluginConfig.decodeNestedObjects):
 * given apiVersion and kind must be this group's and "<plugin>Args".
 */
static bool args_type_ok(struct pctx *c, const cJSON *args, const struct sched_plugin *pl,
                         const char *path)
{
    const cJSON *av = member(args, "apiVersion"), *kind = member(args, "kind");
    bool ok = true;

    if (av && !(cJSON_IsString(av) && !strcmp(av->valuestring, CONFIG_API_VERSION))) {
        char *p = path_child(path, "apiVersion");

        bad_value(c, FIELD_NOT_SUPPORTED, p, av, "supported values: \"" CONFIG_API_VERSION "\"");
        free(p);
        ok = false;
    }
    if (kind && !(cJSON_IsString(kind) && !strcmp(kind->valuestring, pl->args_kind))) {
        plain_error(c, path,
                    "args for plugin %s were not of type %s.kubescheduler.config.k8s.io, got "
                    "%s.kubescheduler.config.k8s.io",
                    pl->name, pl->args_kind,
                    cJSON_IsString(kind) ? kind->valuestring : "(not a string)");
        ok = false;
    }
    return ok;
}

/* Per profile while parsing: its merged sets and where each plugin's args came from. */
struct pstate {
    struct pset sets[NSETS];
    int cfg_index[SCHED_MAX_PLUGINS]; /* pluginConfig index, -1: none */
    bool args_bad[SCHED_MAX_PLUGINS];
    bool plugins_ok; /* the plugin sets parsed without error: expansion can run */
};

static void parse_plugin_config(struct pctx *c, const cJSON *list, const char *ppath,
                                struct sched_profile_config *prof, struct pstate *st)
{
    static const char *const known[] = {"name", "args", NULL};
    char *lpath = path_child(ppath, "pluginConfig");
    const cJSON *it;
    size_t j = 0;

    if (!list || !want_array(c, list, lpath))
        goto out;
    cJSON_ArrayForEach(it, list)
    {
        char *ipath = pathf("%s[%zu]", lpath, j);
        char *apath = pathf("%s.args", ipath);
        const cJSON *args, *prev;
        const char *name;
        size_t k = 0;
        bool dup;
        int id;

        if (!want_object(c, it, ipath))
            goto next;
        check_known(c, it, ipath, known);
        name = get_string(c, it, "name", ipath);
        if (!name || !*name) {
            char *npath = path_child(ipath, "name");

            if (!member(it, "name") || (name && !*name))
                field_error_add(&c->errs, FIELD_REQUIRED, npath, NULL, NULL);
            free(npath);
            goto next;
        }
        dup = false;
        cJSON_ArrayForEach(prev, list)
        {
            const cJSON *pn = member(prev, "name");

            if (k++ == j)
                break;
            if (cJSON_IsString(pn) && !strcmp(pn->valuestring, name)) {
                dup = true;
                break;
            }
        }
        if (dup) {
            struct strbuf q = STRBUF_INIT;

            strbuf_add_json_str(&q, name);
            field_error_add(&c->errs, FIELD_DUPLICATE, ipath, q.buf, NULL);
            strbuf_release(&q);
            goto next;
        }
        /* Args of plugins koord lacks are not decoded, as upstream skips out-of-tree ones. */
        id = sched_registry_find(name);
        args = member(it, "args");
        if (args && !want_object(c, args, apath)) {
            if (id >= 0)
                st->args_bad[id] = true;
            goto next;
        }
        if (id < 0 || !c->reg->plugin(id)->args_kind)
            goto next;
        st->cfg_index[id] = (int)j;
        if (args && !args_type_ok(c, args, c->reg->plugin(id), apath)) {
            st->args_bad[id] = true;
            goto next;
        }
        if (args) {
            prof->args[id] = cJSON_Duplicate(args, true);
            if (!prof->args[id])
                c->oom = true;
        }
    next:
        free(apath);
        free(ipath);
        j++;
    }
out:
    free(lpath);
}

static void parse_profile(struct pctx *c, const cJSON *v, size_t i, size_t nprofiles,
                          struct sched_profile_config *prof, struct pstate *st)
{
    static const char *const known[] = {"schedulerName", "percentageOfNodesToScore", "plugins",
                                        "pluginConfig", NULL};
    char *ppath = pathf("profiles[%zu]", i);
    const cJSON *name;
    size_t nerr;
    int32_t pct;

    prof->percentage_of_nodes_to_score = -1;
    for (int id = 0; id < SCHED_MAX_PLUGINS; id++)
        st->cfg_index[id] = -1;
    if (v && !want_object(c, v, ppath))
        v = NULL;
    if (v)
        check_known(c, v, ppath, known);

    /* defaults.go: only a lone profile gets a default name; an explicit "" stays empty. */
    name = member(v, "schedulerName");
    if (name && !cJSON_IsString(name)) {
        (void)get_string(c, v, "schedulerName", ppath);
    } else if (name ? *name->valuestring : nprofiles == 1) {
        prof->scheduler_name = xstrdup(name ? name->valuestring : "default-scheduler");
    } else {
        char *p = path_child(ppath, "schedulerName");

        field_error_add(&c->errs, FIELD_REQUIRED, p, NULL, NULL);
        free(p);
    }
    if (!prof->scheduler_name)
        prof->scheduler_name = xstrdup("");

    if (get_int32(c, v, "percentageOfNodesToScore", ppath, &pct)) {
        if (pct < 0 || pct > 100) {
            char *p = path_child(ppath, "percentageOfNodesToScore");
            char val[16];

            (void)snprintf(val, sizeof(val), "%d", (int)pct);
            field_error_add(&c->errs, FIELD_INVALID, p, val, "not in valid range [0-100]");
            free(p);
        } else {
            prof->percentage_of_nodes_to_score = pct;
        }
    }

    nerr = c->errs.n;
    parse_plugins(c, member(v, "plugins"), ppath, st->sets);
    st->plugins_ok = c->errs.n == nerr;
    parse_plugin_config(c, member(v, "pluginConfig"), ppath, prof, st);
    free(ppath);
}

/* Instantiates each plugin the profile names or configures once, to validate its args. */
static void validate_args(struct pctx *c, size_t i, struct sched_profile_config *prof,
                          const struct pstate *st)
{
    uint64_t used = 0;

    for (int s = 0; s < NSETS; s++)
        for (size_t k = 0; k < st->sets[s].n; k++)
            used |= bit(st->sets[s].v[k].id);
    for (int id = 0; id < (int)sched_registry_count() && !c->oom; id++) {
        const struct sched_plugin *pl = c->reg->plugin(id);
        size_t nerr = c->errs.n;
        void *self = NULL;
        char *path;
        int r;

        if (!pl->init || st->args_bad[id] || (!(used & bit(id)) && st->cfg_index[id] < 0))
            continue;
        path = st->cfg_index[id] >= 0
                   ? pathf("profiles[%zu].pluginConfig[%d].args", i, st->cfg_index[id])
                   : pathf("profiles[%zu]", i);
        r = pl->init(prof->args[id], path, NULL, &self, &c->errs);
        if (r == -ENOMEM)
            c->oom = true;
        else if (r < 0 && c->errs.n == nerr)
            plain_error(c, path, "initializing plugin \"%s\": %s", pl->name, err_str(r));
        else if (r >= 0 && pl->free)
            pl->free(self);
        free(path);
    }
}

/* NewFramework's checks on the expanded lists: exactly one QueueSort, at least one Bind. */
static void check_profile(struct pctx *c, const char *ppath,
                          const struct sched_profile_config *prof)
{
    char *path;

    if (prof->npoints[SCHED_PT_QUEUE_SORT] != 1) {
        path = pathf("%s.plugins.queueSort", ppath);
        plain_error(c, path,
                    "only one queue sort plugin required for profile with scheduler name "
                    "\"%s\", but got %zu",
                    prof->scheduler_name, prof->npoints[SCHED_PT_QUEUE_SORT]);
        free(path);
    }
    if (prof->npoints[SCHED_PT_BIND] == 0) {
        path = pathf("%s.plugins.bind", ppath);
        plain_error(c, path,
                    "at least one bind plugin is needed for profile with scheduler name \"%s\"",
                    prof->scheduler_name);
        free(path);
    }
}

/* validation.go validateCommonQueueSort, on the plugin each profile ends up with. */
static void check_common_queue_sort(struct pctx *c, const struct sched_config *cfg,
                                    const struct pstate *st)
{
    const struct sched_profile_config *p0 = &cfg->profiles[0];
    int qs;

    if (p0->npoints[SCHED_PT_QUEUE_SORT] != 1)
        return;
    qs = p0->points[SCHED_PT_QUEUE_SORT][0].id;
    for (size_t i = 1; i < cfg->nprofiles; i++) {
        const struct sched_profile_config *p = &cfg->profiles[i];
        int id;

        if (p->npoints[SCHED_PT_QUEUE_SORT] != 1)
            continue;
        id = p->points[SCHED_PT_QUEUE_SORT][0].id;
        if (id != qs) {
            char *path = pathf("profiles[%zu].plugins.queueSort", i);
            struct strbuf q = STRBUF_INIT;

            strbuf_add_json_str(&q, c->reg->plugin(id)->name);
            field_error_add(&c->errs, FIELD_INVALID, path, q.buf,
                            "must be the same for all profiles");
            strbuf_release(&q);
            free(path);
        } else if (!json_value_equal(p0->args[qs], p->args[qs]) && (p0->args[qs] || p->args[qs])) {
            char *path = st[i].cfg_index[id] >= 0
                             ? pathf("profiles[%zu].pluginConfig[%d].args", i, st[i].cfg_index[id])
                             : pathf("profiles[%zu].pluginConfig", i);

            if (p->args[qs])
                bad_value(c, FIELD_INVALID, path, p->args[qs], "must be the same for all profiles");
            else
                field_error_add(&c->errs, FIELD_INVALID, path, "null",
                                "must be the same for all profiles");
            free(path);
        }
    }
}

static struct sched_config *config_new(const char *ns, const char *name)
{
    struct sched_config *cfg = xcalloc(1, sizeof(*cfg));

    cfg->parallelism = 16;
    cfg->percentage_of_nodes_to_score = 0;
    cfg->pod_initial_backoff_s = 1;
    cfg->pod_max_backoff_s = 10;
    cfg->leader_elect = true;
    cfg->lease_namespace = xstrdup(ns);
    cfg->lease_name = xstrdup(name);
    cfg->lease_ms = 15000;
    cfg->renew_ms = 10000;
    cfg->retry_ms = 2000;
    cfg->qps = 50;
    cfg->burst = 100;
    return cfg;
}

static void parse_doc(struct pctx *c, const cJSON *doc, struct sched_config *cfg)
{
    static const char *const known[] = {"apiVersion",
                                        "kind",
                                        "parallelism",
                                        "leaderElection",
                                        "clientConnection",
                                        "enableProfiling",
                                        "enableContentionProfiling",
                                        "percentageOfNodesToScore",
                                        "podInitialBackoffSeconds",
                                        "podMaxBackoffSeconds",
                                        "profiles",
                                        "extenders",
                                        "delayCacheUntilActive",
                                        NULL};
    const cJSON *av = member(doc, "apiVersion"), *kind = member(doc, "kind"), *v, *it;
    struct pstate *st = NULL;
    bool all_ok = true, b;
    int64_t x;
    size_t i;

    if (!av)
        field_error_add(&c->errs, FIELD_REQUIRED, "apiVersion", NULL, NULL);
    else if (!cJSON_IsString(av) || strcmp(av->valuestring, CONFIG_API_VERSION))
        bad_value(c, FIELD_NOT_SUPPORTED, "apiVersion", av,
                  "supported values: \"" CONFIG_API_VERSION "\"");
    if (!kind)
        field_error_add(&c->errs, FIELD_REQUIRED, "kind", NULL, NULL);
    else if (!cJSON_IsString(kind) || strcmp(kind->valuestring, CONFIG_KIND))
        bad_value(c, FIELD_NOT_SUPPORTED, "kind", kind, "supported values: \"" CONFIG_KIND "\"");
    if (c->errs.n)
        return; /* another kind or version: its fields mean something else */
    check_known(c, doc, "", known);

    if (get_int(c, doc, "parallelism", "", INT32_MIN, INT32_MAX, &x)) {
        if (x <= 0) {
            char val[16];

            (void)snprintf(val, sizeof(val), "%d", (int)x);
            field_error_add(&c->errs, FIELD_INVALID, "parallelism", val,
                            "should be an integer value greater than zero");
        } else {
            cfg->parallelism = (int)x;
        }
    }
    if (get_int(c, doc, "percentageOfNodesToScore", "", INT32_MIN, INT32_MAX, &x)) {
        if (x < 0 || x > 100) {
            char val[16];

            (void)snprintf(val, sizeof(val), "%d", (int)x);
            field_error_add(&c->errs, FIELD_INVALID, "percentageOfNodesToScore", val,
                            "not in valid range [0-100]");
        } else {
            cfg->percentage_of_nodes_to_score = (int)x;
        }
    }
    /* int64 in Go; bounded here to what an int holds. */
    if (get_int(c, doc, "podInitialBackoffSeconds", "", INT32_MIN, INT32_MAX, &x)) {
        cfg->pod_initial_backoff_s = (int)x;
        if (x <= 0) {
            char val[16];

            (void)snprintf(val, sizeof(val), "%d", (int)x);
            field_error_add(&c->errs, FIELD_INVALID, "podInitialBackoffSeconds", val,
                            "must be greater than 0");
        }
    }
    if (get_int(c, doc, "podMaxBackoffSeconds", "", INT32_MIN, INT32_MAX, &x))
        cfg->pod_max_backoff_s = (int)x;
    if (cfg->pod_max_backoff_s < cfg->pod_initial_backoff_s) {
        char val[16];

        (void)snprintf(val, sizeof(val), "%d", cfg->pod_max_backoff_s);
        field_error_add(&c->errs, FIELD_INVALID, "podMaxBackoffSeconds", val,
                        "must be greater than or equal to PodInitialBackoffSeconds");
    }
    (void)get_bool(c, doc, "enableProfiling", "", &b);
    (void)get_bool(c, doc, "enableContentionProfiling", "", &b);
    (void)get_bool(c, doc, "delayCacheUntilActive", "", &b);
    parse_leader_election(c, doc, cfg);
    parse_client_connection(c, doc, cfg);

    v = member(doc, "extenders");
    if (v && want_array(c, v, "extenders") && cJSON_GetArraySize(v) > 0)
        plain_error(c, "extenders", "extenders are not supported by koord scheduler");

    /* defaults.go: no profiles (or an empty list) means one profile with no fields. */
    v = member(doc, "profiles");
    if (v && !want_array(c, v, "profiles"))
        return;
    cfg->nprofiles = v && cJSON_GetArraySize(v) > 0 ? (size_t)cJSON_GetArraySize(v) : 1;
    cfg->profiles = xcalloc(cfg->nprofiles, sizeof(*cfg->profiles));
    st = xcalloc(cfg->nprofiles, sizeof(*st));
    i = 0;
    if (v && cJSON_GetArraySize(v) > 0) {
        cJSON_ArrayForEach(it, v)
        {
            parse_profile(c, it, i, cfg->nprofiles, &cfg->profiles[i], &st[i]);
            i++;
        }
    } else {
        parse_profile(c, NULL, 0, 1, &cfg->profiles[0], &st[0]);
    }

    /* validation.go: unique names, each duplicate pointing at the latest earlier one. */
    for (i = 1; i < cfg->nprofiles; i++) {
        for (size_t k = i; k-- > 0;) {
            if (*cfg->profiles[i].scheduler_name &&
                !strcmp(cfg->profiles[i].scheduler_name, cfg->profiles[k].scheduler_name)) {
                char *path = pathf("profiles[%zu].schedulerName", i);
                char *prev = pathf("profiles[%zu].schedulerName", k);

                field_error_add(&c->errs, FIELD_DUPLICATE, path, prev, NULL);
                free(prev);
                free(path);
                break;
            }
        }
    }

    for (i = 0; i < cfg->nprofiles; i++) {
        struct sched_profile_config *prof = &cfg->profiles[i];
        char *ppath = pathf("profiles[%zu]", i);
        size_t nerr = c->errs.n;

        if (st[i].plugins_ok) {
            expand_profile(c, st[i].sets, c->reg->points, ppath, prof);
            if (c->errs.n == nerr)
                check_profile(c, ppath, prof);
        }
        all_ok = all_ok && st[i].plugins_ok && c->errs.n == nerr;
        free(ppath);
    }
    if (all_ok)
        check_common_queue_sort(c, cfg, st);
    for (i = 0; i < cfg->nprofiles; i++)
        validate_args(c, i, &cfg->profiles[i], &st[i]);

    for (i = 0; i < cfg->nprofiles; i++)
        psets_release(st[i].sets);
    free(st);
}

static int config_parse(const char *text, size_t len, const struct config_registry *reg,
                        struct sched_config **ret, struct strbuf *err)
{
    struct pctx c = {.reg = reg};
    struct sched_config *cfg = NULL;
    struct codec_error cerr = {0};
    cJSON **docs = NULL;
    size_t ndocs = 0;
    int r;

    field_errors_init(&c.errs);
    r = yaml_parse_stream(text, len, NULL, &docs, &ndocs, &cerr);
    if (r == -ENOMEM)
        goto out;
    if (r < 0) {
        if (cerr.line > 0)
            strbuf_addf(err, "line %d, column %d: %s\n", cerr.line, cerr.column, cerr.msg);
        else
            strbuf_addf(err, "%s\n", cerr.msg);
        r = -EINVAL;
        goto out;
    }
    if (ndocs != 1) {
        strbuf_addf(err, "expected one " CONFIG_KIND " document, got %zu\n", ndocs);
        r = -EINVAL;
        goto out;
    }
    if (!cJSON_IsObject(docs[0])) {
        strbuf_addstr(err, CONFIG_KIND " must be an object\n");
        r = -EINVAL;
        goto out;
    }

    /* A file's defaults are upstream's (kube-system/kube-scheduler), not koord's own. */
    cfg = config_new("kube-system", "kube-scheduler");
    parse_doc(&c, docs[0], cfg);
    if (c.oom) {
        r = -ENOMEM;
        goto out;
    }
    if (c.errs.n) {
        for (size_t i = 0; i < c.errs.n; i++) {
            field_error_format(&c.errs.v[i], err);
            strbuf_addch(err, '\n');
        }
        r = -EINVAL;
        goto out;
    }
    *ret = cfg;
    cfg = NULL;
    r = 0;
out:
    sched_config_free(cfg);
    codec_docs_free(docs, ndocs);
    field_errors_release(&c.errs);
    return r;
}

int sched_config_parse(const char *text, size_t len, struct sched_config **ret, struct strbuf *err)
{
    return config_parse(text, len, &real_registry, ret, err);
}

static struct sched_config *config_default(const char *name, const char *const *extra_names,
                                           const struct config_registry *reg)
{
    struct sched_config *cfg = config_new("koordinator-system", "koord-scheduler");
    struct pctx c = {.reg = reg};

    /* Without a file, the kube client's own limits (kube/config.h): upstream's 50 qps would
     * cap binding at 50 pods a second, far below what one koord scheduler places. A file
     * gets upstream's defaults. */
    cfg->qps = 1000;
    cfg->burst = 2000;
    struct pset sets[NSETS];
    size_t n = 1;

    field_errors_init(&c.errs);
    while (extra_names && extra_names[n - 1])
        n++;
    cfg->nprofiles = n;
    cfg->profiles = xcalloc(n, sizeof(*cfg->profiles));
    default_sets(sets);
    if (reg == &real_registry)
        koord_default_sets(sets);
    for (size_t i = 0; i < n; i++) {
        struct sched_profile_config *prof = &cfg->profiles[i];
        char *ppath = pathf("profiles[%zu]", i);

        prof->scheduler_name = xstrdup(i ? extra_names[i - 1] : name ? name : "koord-scheduler");
        prof->percentage_of_nodes_to_score = -1;
        expand_profile(&c, sets, reg->points, ppath, prof);
        free(ppath);
    }
    /* The defaults hold each plugin once, so expansion has nothing to report. */
    CHECK(c.errs.n == 0);
    psets_release(sets);
    field_errors_release(&c.errs);
    return cfg;
}

struct sched_config *sched_config_default(const char *name, const char *const *extra_names)
{
    return config_default(name, extra_names, &real_registry);
}

void sched_config_free(struct sched_config *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nprofiles; i++) {
        struct sched_profile_config *p = &c->profiles[i];

        free(p->scheduler_name);
        for (int k = 0; k < SCHED_PT_COUNT; k++)
            free(p->points[k]);
        for (int id = 0; id < SCHED_MAX_PLUGINS; id++)
            cJSON_Delete(p->args[id]);
    }
    free(c->profiles);
    free(c->lease_namespace);
    free(c->lease_name);
    free(c->kubeconfig);
    free(c);
}

const struct sched_profile_config *sched_config_profile(const struct sched_config *c,
                                                        const char *scheduler_name)
{
    for (size_t i = 0; i < c->nprofiles; i++)
        if (!strcmp(c->profiles[i].scheduler_name, scheduler_name))
            return &c->profiles[i];
    return NULL;
}
