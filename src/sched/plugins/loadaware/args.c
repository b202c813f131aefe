/*
 * LoadAwareSchedulingArgs (Koordinator pkg/scheduler/apis/config/v1/types.go, defaults.go
 * SetDefaults_LoadAwareSchedulingArgs, validation ValidateLoadAwareSchedulingArgs; reference
 * scheduler.md 8.2): decoded strictly like every scheduler config (unknown fields are errors),
 * defaulted as upstream defaults them, every bad field reported with its path
 * ("profiles[0].pluginConfig[1].args.usageThresholds.cpu: Invalid value: 120: ...").
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/duration.h"
#include "api/field.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "sched/plugins/loadaware/load_aware.h"

static const char *const agg_names[LA_AGG_COUNT] = {"avg", "p50", "p90", "p95", "p99"};

/* A walk: the errors and the path of the value being decoded. */
struct dec {
    struct field_errors *errs;
    struct strbuf path;
};

static size_t push(struct dec *d, const char *key)
{
    size_t len = d->path.len;

    if (d->path.len)
        strbuf_addch(&d->path, '.');
    strbuf_addstr(&d->path, key);
    return len;
}

static void pop(struct dec *d, size_t len)
{
    strbuf_setlen(&d->path, len);
}

static void invalid(struct dec *d, const cJSON *v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void invalid(struct dec *d, const cJSON *v, const char *fmt, ...)
{
    char *val = NULL, detail[256];
    va_list ap;

    va_start(ap, fmt);
    /* va_start is just above; the analyzer loses it on some paths through the callers. */
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
    (void)vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    if (v)
        val = cJSON_PrintUnformatted(v);
    field_error_add(d->errs, FIELD_INVALID, d->path.buf ? d->path.buf : "", val, "%s", detail);
    cJSON_free(val);
}

/* field.NotSupported: the value quoted, the supported ones listed. */
static void not_supported(struct dec *d, const char *val, const char *supported)
{
    struct strbuf v = STRBUF_INIT;

    strbuf_add_json_str(&v, val);
    field_error_add(d->errs, FIELD_NOT_SUPPORTED, d->path.buf, v.buf, "supported values: %s",
                    supported);
    strbuf_release(&v);
}

/* Member key, NULL when absent or null (Go's nil). */
static const cJSON *member(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    return v && !cJSON_IsNull(v) ? v : NULL;
}

/* Whether v is an object of only the known keys; unknown ones are reported. */
static bool check_object(struct dec *d, const cJSON *v, const char *const *keys)
{
    const cJSON *m;

    if (!cJSON_IsObject(v)) {
        invalid(d, v, "must be an object");
        return false;
    }
    cJSON_ArrayForEach(m, v)
    {
        size_t i, len;
        for (i = 0; keys[i]; i++)
            if (!strcmp(keys[i], m->string))
                break;
        if (keys[i])
            continue;
        len = push(d, m->string);
        field_error_add(d->errs, FIELD_UNKNOWN, d->path.buf, NULL, "unknown field \"%s\"",
                        d->path.buf);
        pop(d, len);
    }
    return true;
}

static bool get_int(struct dec *d, const cJSON *o, const char *key, int64_t *ret)
{
    const cJSON *v = member(o, key);
    size_t len;

    if (!v)
        return false;
    len = push(d, key);
    if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int64_t)v->valuedouble)
        invalid(d, v, "must be an integer");
    else
        *ret = (int64_t)v->valuedouble;
    pop(d, len);
    return true;
}

static void get_bool(struct dec *d, const cJSON *o, const char *key, bool *ret)
{
    const cJSON *v = member(o, key);
    size_t len;

    if (!v)
        return;
    len = push(d, key);
    if (!cJSON_IsBool(v))
        invalid(d, v, "must be a boolean");
    else
        *ret = cJSON_IsTrue(v);
    pop(d, len);
}

static const char *get_str(struct dec *d, const cJSON *o, const char *key)
{
    const cJSON *v = member(o, key);
    size_t len;

    if (!v)
        return NULL;
    if (cJSON_IsString(v))
        return v->valuestring;
    len = push(d, key);
    invalid(d, v, "must be a string");
    pop(d, len);
    return NULL;
}

static int rval_cmp(const void *a, const void *b)
{
    return strcmp(((const struct la_rval *)a)->name, ((const struct la_rval *)b)->name);
}

static void rlist_set(struct la_rlist *l, const char *name, int64_t v)
{
    for (size_t i = 0; i < l->n; i++) {
        if (!strcmp(l->v[i].name, name)) {
            l->v[i].v = v;
            return;
        }
    }
    l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
    memset(&l->v[l->n], 0, sizeof(l->v[l->n])); /* no index resolved yet (la_index) */
    l->v[l->n].name = xstrdup(name);
    l->v[l->n++].v = v;
    qsort(l->v, l->n, sizeof(*l->v), rval_cmp);
}

static void rlist_release(struct la_rlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].name);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

int64_t sched__la_rlist_get(const struct la_rlist *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i].name, name))
            return l->v[i].v;
    return -1;
}

/* A map of resource name -> integer in [lo, hi] (lo_open: lo excluded). Returns whether the
 * member was given (an empty map counts as not given: Go's len(map) == 0). */
static bool get_rmap(struct dec *d, const cJSON *o, const char *key, int64_t lo, bool lo_open,
                     int64_t hi, const char *what, struct la_rlist *ret)
{
    const cJSON *v = member(o, key), *e;
    size_t len;

    if (!v)
        return false;
    len = push(d, key);
    if (!cJSON_IsObject(v)) {
        invalid(d, v, "must be an object");
        pop(d, len);
        return false;
    }
    cJSON_ArrayForEach(e, v)
    {
        size_t l2 = push(d, e->string);
        int64_t x;

        if (!*e->string) {
            field_error_add(d->errs, FIELD_REQUIRED, d->path.buf, NULL, "resource name");
        } else if (!cJSON_IsNumber(e) || e->valuedouble != (double)(int64_t)e->valuedouble) {
            invalid(d, e, "must be an integer");
        } else if ((x = (int64_t)e->valuedouble) < lo || (lo_open && x == lo) || x > hi) {
            invalid(d, e, "%s of %s must be in %c%lld, %lld]", what, e->string, lo_open ? '(' : '[',
                    (long long)lo, (long long)hi);
        } else {
            rlist_set(ret, e->string, x);
        }
        pop(d, l2);
    }
    pop(d, len);
    return ret->n > 0;
}

static void get_agg_type(struct dec *d, const cJSON *o, const char *key, enum la_agg_type *ret)
{
    const char *s = get_str(d, o, key);
    size_t len;

    if (!s || !*s)
        return;
    for (int i = 0; i < LA_AGG_COUNT; i++) {
        if (!strcmp(agg_names[i], s)) {
            *ret = (enum la_agg_type)i;
            return;
        }
    }
    len = push(d, key);
    not_supported(d, s, "\"avg\", \"p50\", \"p90\", \"p95\", \"p99\"");
    pop(d, len);
}

static void get_duration(struct dec *d, const cJSON *o, const char *key, int64_t *ret_s)
{
    const char *s = get_str(d, o, key);
    int64_t ns;
    size_t len;

    if (!s)
        return;
    len = push(d, key);
    if (duration_parse(s, &ns) < 0)
        invalid(d, member(o, key), "must be a duration such as \"5m\"");
    else if (ns < 0)
        invalid(d, member(o, key), "must not be negative");
    else
        *ret_s = ns / 1000000000;
    pop(d, len);
}

static void decode_aggregated(struct dec *d, const cJSON *v, struct la_args *a)
{
    static const char *const keys[] = {"usageThresholds",         "usageAggregationType",
                                       "usageAggregatedDuration", "scoreAggregationType",
                                       "scoreAggregatedDuration", NULL};

    if (!check_object(d, v, keys))
        return;
    (void)get_rmap(d, v, "usageThresholds", 0, false, 100, "threshold", &a->agg_usage);
    get_agg_type(d, v, "usageAggregationType", &a->agg_usage_type);
    get_duration(d, v, "usageAggregatedDuration", &a->agg_usage_dur_s);
    get_agg_type(d, v, "scoreAggregationType", &a->agg_score_type);
    get_duration(d, v, "scoreAggregatedDuration", &a->agg_score_dur_s);
}

int sched__la_args_decode(const cJSON *args, const char *path, struct la_args *a,
                          struct field_errors *errs)
{
    static const char *const keys[] = {"apiVersion",
                                       "kind",
                                       "filterExpiredNodeMetrics",
                                       "nodeMetricExpirationSeconds",
                                       "enableScheduleWhenNodeMetricsExpired",
                                       "resourceWeights",
                                       "dominantResourceWeight",
                                       "usageThresholds",
                                       "prodUsageThresholds",
                                       "prodUsageIncludeSys",
                                       "scoreAccordingProdUsage",
                                       "estimator",
                                       "estimatedScalingFactors",
                                       "estimatedSecondsAfterPodScheduled",
                                       "estimatedSecondsAfterInitialized",
                                       "allowCustomizeEstimation",
                                       "aggregated",
                                       "supportedResources",
                                       NULL};
    size_t before = field_errors_count(errs), len;
    struct dec d = {.errs = errs, .path = STRBUF_INIT};
    bool weights = false, usage = false;
    const cJSON *v;

    memset(a, 0, sizeof(*a));
    a->filter_expired = true;
    a->expiration_s = 180;
    a->agg_usage_type = a->agg_score_type = LA_AGG_UNSET;
    strbuf_addstr(&d.path, path ? path : "");
    if (args && !cJSON_IsNull(args) && check_object(&d, args, keys)) {
        get_bool(&d, args, "filterExpiredNodeMetrics", &a->filter_expired);
        if (get_int(&d, args, "nodeMetricExpirationSeconds", &a->expiration_s) &&
            a->expiration_s <= 0) {
            len = push(&d, "nodeMetricExpirationSeconds");
            invalid(&d, member(args, "nodeMetricExpirationSeconds"), "must be a positive value");
            pop(&d, len);
        }
        get_bool(&d, args, "enableScheduleWhenNodeMetricsExpired", &a->schedule_when_expired);
        weights = get_rmap(&d, args, "resourceWeights", 0, true, 100, "weight", &a->weights);
        if (get_int(&d, args, "dominantResourceWeight", &a->dominant_weight) &&
            (a->dominant_weight < 0 || a->dominant_weight > 100)) {
            len = push(&d, "dominantResourceWeight");
            invalid(&d, member(args, "dominantResourceWeight"), "must be in [0, 100]");
            pop(&d, len);
        }
        usage = get_rmap(&d, args, "usageThresholds", 0, false, 100, "threshold", &a->usage);
        (void)get_rmap(&d, args, "prodUsageThresholds", 0, false, 100, "threshold", &a->prod_usage);
        get_bool(&d, args, "prodUsageIncludeSys", &a->prod_include_sys);
        get_bool(&d, args, "scoreAccordingProdUsage", &a->score_prod);
        a->estimator =
            xstrdup(get_str(&d, args, "estimator") ? get_str(&d, args, "estimator") : "");
        if (*a->estimator && strcmp(a->estimator, "default")) {
            len = push(&d, "estimator");
            not_supported(&d, a->estimator, "\"default\"");
            pop(&d, len);
        }
        (void)get_rmap(&d, args, "estimatedScalingFactors", 0, true, 100, "scaling factor",
                       &a->factors);
        if (get_int(&d, args, "estimatedSecondsAfterPodScheduled", &a->after_scheduled_s) &&
            a->after_scheduled_s < 0) {
            len = push(&d, "estimatedSecondsAfterPodScheduled");
            invalid(&d, member(args, "estimatedSecondsAfterPodScheduled"), "must not be negative");
            pop(&d, len);
        }
        if (get_int(&d, args, "estimatedSecondsAfterInitialized", &a->after_initialized_s) &&
            a->after_initialized_s < 0) {
            len = push(&d, "estimatedSecondsAfterInitialized");
            invalid(&d, member(args, "estimatedSecondsAfterInitialized"), "must not be negative");
            pop(&d, len);
        }
        get_bool(&d, args, "allowCustomizeEstimation", &a->allow_customize);
        if ((v = member(args, "aggregated"))) {
            len = push(&d, "aggregated");
            decode_aggregated(&d, v, a);
            pop(&d, len);
        }
        if ((v = member(args, "supportedResources"))) {
            const cJSON *e, *arr = cJSON_IsArray(v) ? v : NULL;
            size_t i = 0;
            len = push(&d, "supportedResources");
            if (!arr)
                invalid(&d, v, "must be an array");
            cJSON_ArrayForEach(e, arr)
            {
                char idx[32];
                size_t l2 = d.path.len;
                (void)snprintf(idx, sizeof(idx), "[%zu]", i++);
                strbuf_addstr(&d.path, idx);
                if (!cJSON_IsString(e)) {
                    invalid(&d, e, "must be a string");
                } else {
                    a->supported =
                        xrealloc(a->supported, (a->nsupported + 1) * sizeof(*a->supported));
                    a->supported[a->nsupported++] = xstrdup(e->valuestring);
                }
                pop(&d, l2);
            }
            pop(&d, len);
        }
    }
    if (!a->estimator)
        a->estimator = xstrdup("");
    /* SetDefaults_LoadAwareSchedulingArgs. */
    if (!weights && a->dominant_weight == 0) {
        rlist_set(&a->weights, "cpu", 1);
        rlist_set(&a->weights, "memory", 1);
    }
    if (!usage) {
        rlist_set(&a->usage, "cpu", 65);
        rlist_set(&a->usage, "memory", 95);
    }
    if (sched__la_rlist_get(&a->factors, "cpu") < 0)
        rlist_set(&a->factors, "cpu", 85);
    if (sched__la_rlist_get(&a->factors, "memory") < 0)
        rlist_set(&a->factors, "memory", 70);
    strbuf_release(&d.path);
    if (field_errors_count(errs) != before) {
        sched__la_args_release(a);
        return -EINVAL;
    }
    return 0;
}

void sched__la_args_release(struct la_args *a)
{
    rlist_release(&a->weights);
    rlist_release(&a->usage);
    rlist_release(&a->prod_usage);
    rlist_release(&a->factors);
    rlist_release(&a->agg_usage);
    free(a->estimator);
    a->estimator = NULL;
    for (size_t i = 0; i < a->nsupported; i++)
        free(a->supported[i]);
    free(a->supported);
    a->supported = NULL;
    a->nsupported = 0;
}
