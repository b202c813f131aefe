/*
 * NodeSLO spec -> struct qos_slo (nodeslo.h). One table per Go struct lists the members the
 * strategies use; a generic decoder merges a JSON object over a C struct through the table, so
 * the NodeSLO and the pod annotations of the same shapes decode by the same rules.
 */
#include "agent/qos/nodeslo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/qos/qos-int.h"
#include "base/base.h"
#include "base/strbuf.h"

enum ftype {
    FT_BOOL,           /* bool */
    FT_INT,            /* int64_t, range [min, max] */
    FT_OPT,            /* struct qos_opt, range [min, max] */
    FT_ENUM,           /* int-sized enum from a string table; "" keeps the value */
    FT_OBJ,            /* nested struct through sub */
    FT_SCHED_FEATURES, /* struct qos_system's map */
};

struct enum_name {
    const char *s;
    int value;
};

struct field {
    const char *name;
    enum ftype type;
    size_t off;
    int64_t min, max;
    const struct enum_name *names; /* FT_ENUM, terminated by {NULL, value-for-unknown} */
    const struct field *sub;       /* FT_OBJ, terminated by {NULL} */
};

#define I64_RANGE INT64_MIN, INT64_MAX
#define I32_RANGE INT32_MIN, INT32_MAX

#define F_BOOL(n, st, m)                                                                           \
    {                                                                                              \
        n, FT_BOOL, offsetof(st, m), 0, 0, NULL, NULL                                              \
    }
#define F_INT(n, st, m)                                                                            \
    {                                                                                              \
        n, FT_INT, offsetof(st, m), I64_RANGE, NULL, NULL                                          \
    }
#define F_OPT(n, st, m)                                                                            \
    {                                                                                              \
        n, FT_OPT, offsetof(st, m), I64_RANGE, NULL, NULL                                          \
    }
/* Ranged: what the strategies multiply into byte counts, quotas and token buckets is bounded
 * here, so no product of a NodeSLO or annotation value can overflow. */
#define F_INTR(n, st, m, lo, hi)                                                                   \
    {                                                                                              \
        n, FT_INT, offsetof(st, m), lo, hi, NULL, NULL                                             \
    }
#define F_OPTR(n, st, m, lo, hi)                                                                   \
    {                                                                                              \
        n, FT_OPT, offsetof(st, m), lo, hi, NULL, NULL                                             \
    }
#define F_OPT32(n, st, m)                                                                          \
    {                                                                                              \
        n, FT_OPT, offsetof(st, m), I32_RANGE, NULL, NULL                                          \
    }
#define F_ENUM(n, st, m, t)                                                                        \
    {                                                                                              \
        n, FT_ENUM, offsetof(st, m), 0, 0, t, NULL                                                 \
    }
#define F_OBJ(n, st, m, t)                                                                         \
    {                                                                                              \
        n, FT_OBJ, offsetof(st, m), 0, 0, NULL, t                                                  \
    }
#define F_END                                                                                      \
    {                                                                                              \
        NULL, FT_BOOL, 0, 0, 0, NULL, NULL                                                         \
    }

static const struct enum_name suppress_policies[] = {
    {"cpuset", QOS_SUPPRESS_CPUSET},
    {"cfsQuota", QOS_SUPPRESS_CFS_QUOTA},
    {NULL, QOS_SUPPRESS_CPUSET},
};

static const struct enum_name cpu_evict_policies[] = {
    {"evictByRealLimit", QOS_EVICT_BY_REAL_LIMIT},
    {"evictByAllocatable", QOS_EVICT_BY_ALLOCATABLE},
    {NULL, QOS_EVICT_BY_REAL_LIMIT},
};

static const struct enum_name cpu_policies[] = {
    {"groupIdentity", QOS_CPU_POLICY_GROUP_IDENTITY},
    {"coreSched", QOS_CPU_POLICY_CORE_SCHED},
    {NULL, QOS_CPU_POLICY_OTHER},
};

static const struct enum_name burst_policies[] = {
    {"none", QOS_BURST_NONE},
    {"cpuBurstOnly", QOS_BURST_CPU_BURST_ONLY},
    {"cfsQuotaBurstOnly", QOS_BURST_CFS_QUOTA_BURST_ONLY},
    {"auto", QOS_BURST_AUTO},
    {NULL, QOS_BURST_NONE},
};

#define T struct qos_threshold
static const struct field threshold_fields[] = {
    F_BOOL("enable", T, enable),
    F_OPTR("cpuSuppressThresholdPercent", T, cpu_suppress_threshold_percent, 0, 100),
    F_OPTR("cpuSuppressMinPercent", T, cpu_suppress_min_percent, 0, 100),
    F_ENUM("cpuSuppressPolicy", T, cpu_suppress_policy, suppress_policies),
    F_OPTR("memoryEvictThresholdPercent", T, memory_evict_threshold_percent, 0, 100),
    F_OPTR("memoryEvictLowerPercent", T, memory_evict_lower_percent, 0, 100),
    F_OPTR("memoryAllocatableEvictThresholdPercent", T, memory_allocatable_evict_threshold_percent,
           0, 100),
    F_OPTR("memoryAllocatableEvictLowerPercent", T, memory_allocatable_evict_lower_percent, 0, 100),
    F_OPTR("cpuEvictBESatisfactionUpperPercent", T, cpu_evict_be_satisfaction_upper_percent, 0,
           100),
    F_OPTR("cpuEvictBESatisfactionLowerPercent", T, cpu_evict_be_satisfaction_lower_percent, 0,
           100),
    F_OPTR("cpuEvictBEUsageThresholdPercent", T, cpu_evict_be_usage_threshold_percent, 0, 100),
    F_OPTR("cpuEvictTimeWindowSeconds", T, cpu_evict_time_window_seconds, 0, 86400),
    F_OPTR("cpuEvictThresholdPercent", T, cpu_evict_threshold_percent, 0, 100),
    F_OPTR("cpuEvictLowerPercent", T, cpu_evict_lower_percent, 0, 100),
    F_OPTR("cpuAllocatableEvictThresholdPercent", T, cpu_allocatable_evict_threshold_percent, 0,
           100),
    F_OPTR("cpuAllocatableEvictLowerPercent", T, cpu_allocatable_evict_lower_percent, 0, 100),
    F_ENUM("cpuEvictPolicy", T, cpu_evict_policy, cpu_evict_policies),
    F_OPT32("evictEnabledPriorityThreshold", T, evict_enabled_priority_threshold),
    F_OPT32("allocatableEvictPriorityThreshold", T, allocatable_evict_priority_threshold),
    F_END,
};
#undef T

#define T struct qos_cpu_qos
static const struct field cpu_qos_fields[] = {
    F_BOOL("enable", T, enable),
    F_INTR("groupIdentity", T, group_identity, -1, 2),
    F_INTR("schedIdle", T, sched_idle, 0, 1),
    F_BOOL("coreExpeller", T, core_expeller),
    F_END,
};
#undef T

#define T struct qos_memory_qos
static const struct field memory_qos_fields[] = {
    F_BOOL("enable", T, enable), /* first: the pod annotation's table starts after it */
    F_INTR("minLimitPercent", T, min_limit_percent, 0, 100),
    F_INTR("lowLimitPercent", T, low_limit_percent, 0, 100),
    F_INTR("throttlingPercent", T, throttling_percent, 0, 100),
    F_INTR("wmarkRatio", T, wmark_ratio, 0, 100),
    F_INTR("wmarkScalePermill", T, wmark_scale_permill, 0, 1000),
    F_INTR("wmarkMinAdj", T, wmark_min_adj, -25, 50),
    F_INTR("priorityEnable", T, priority_enable, 0, 1),
    F_INTR("priority", T, priority, 0, 12),
    F_INTR("oomKillGroup", T, oom_kill_group, 0, 1),
    F_BOOL("pageCacheEnable", T, page_cache_enable),
    F_INTR("pageCacheLimitPercent", T, page_cache_limit_percent, 0, 100),
    F_INT("pageCacheLimitSize", T, page_cache_limit_size),
    F_BOOL("pageCacheReclaimSync", T, page_cache_reclaim_sync),
    F_END,
};

#undef T

#define T struct qos_resctrl_qos
static const struct field resctrl_qos_fields[] = {
    F_BOOL("enable", T, enable),
    F_INTR("catRangeStartPercent", T, cat_range_start_percent, 0, 100),
    F_INTR("catRangeEndPercent", T, cat_range_end_percent, 0, 100),
    F_INTR("mbaPercent", T, mba_percent, 0, 100),
    F_END,
};
#undef T

#define T struct qos_class_config
static const struct field class_fields[] = {
    F_OBJ("cpuQOS", T, cpu, cpu_qos_fields),
    F_OBJ("memoryQOS", T, memory, memory_qos_fields),
    F_OBJ("resctrlQOS", T, resctrl, resctrl_qos_fields),
    F_END,
};
#undef T

#define T struct qos_resource_qos
static const struct field policies_fields[] = {
    F_ENUM("cpuPolicy", T, cpu_policy, cpu_policies),
    F_END,
};

static const struct field resource_qos_fields[] = {
    /* The policies object is flattened onto struct qos_resource_qos (offset 0). */
    {"policies", FT_OBJ, 0, 0, 0, NULL, policies_fields},
    F_OBJ("lsrClass", T, classes[QOS_CLASS_LSR], class_fields),
    F_OBJ("lsClass", T, classes[QOS_CLASS_LS], class_fields),
    F_OBJ("beClass", T, classes[QOS_CLASS_BE], class_fields),
    F_OBJ("systemClass", T, classes[QOS_CLASS_SYSTEM], class_fields),
    F_END,
};
#undef T

#define T struct qos_cpu_burst
static const struct field cpu_burst_fields[] = {
    F_ENUM("policy", T, policy, burst_policies),
    F_INTR("cpuBurstPercent", T, cpu_burst_percent, 0, 100000),
    F_INTR("cfsQuotaBurstPercent", T, cfs_quota_burst_percent, 0, 100000),
    F_INTR("cfsQuotaBurstPeriodSeconds", T, cfs_quota_burst_period_seconds, -1, 86400),
    F_INTR("sharePoolThresholdPercent", T, share_pool_threshold_percent, 0, 100),
    F_END,
};

/* The annotation koordinator.sh/cpuBurst is CPUBurstConfig: no sharePoolThresholdPercent. */
static const struct field pod_cpu_burst_fields[] = {
    F_ENUM("policy", T, policy, burst_policies),
    F_INTR("cpuBurstPercent", T, cpu_burst_percent, 0, 100000),
    F_INTR("cfsQuotaBurstPercent", T, cfs_quota_burst_percent, 0, 100000),
    F_INTR("cfsQuotaBurstPeriodSeconds", T, cfs_quota_burst_period_seconds, -1, 86400),
    F_END,
};
#undef T

#define T struct qos_system
static const struct field system_fields[] = {
    F_OPTR("minFreeKbytesFactor", T, min_free_kbytes_factor, 0, 10000),
    F_OPTR("watermarkScaleFactor", T, watermark_scale_factor, 0, 10000),
    F_OPTR("memcgReapBackGround", T, memcg_reap_background, 0, 1),
    F_OPTR("schedGroupIdentityEnabled", T, sched_group_identity_enabled, 0, 1),
    F_OPT("schedIdleSaverWmark", T, sched_idle_saver_wmark),
    F_OPTR("pageCacheLimitEnabled", T, page_cache_limit_enabled, 0, 1),
    {"schedFeatures", FT_SCHED_FEATURES, 0, 0, 0, NULL, NULL},
    F_END,
};
#undef T

#define T struct qos_slo
static const struct field spec_fields[] = {
    F_OBJ("resourceUsedThresholdWithBE", T, threshold, threshold_fields),
    F_OBJ("resourceQOSStrategy", T, resource_qos, resource_qos_fields),
    F_OBJ("cpuBurstStrategy", T, cpu_burst, cpu_burst_fields),
    F_OBJ("systemStrategy", T, system, system_fields),
    F_END,
};
#undef T

/* Go's name for what a JSON value is, for messages. */
static const char *json_kind(const cJSON *v)
{
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsNumber(v))
        return "a number";
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsArray(v))
        return "an array";
    return "an object";
}

/* Appends "<path>: want <want>, got <kind of v>" to why; returns -EINVAL. */
static int fail(struct strbuf *why, const char *path, const char *want, const cJSON *v)
{
    if (why)
        strbuf_addf(why, "%s: want %s, got %s", path, want, json_kind(v));
    return -EINVAL;
}

static int sort_features(const void *a, const void *b)
{
    return strcmp(((const struct qos_sched_feature *)a)->name,
                  ((const struct qos_sched_feature *)b)->name);
}

static int decode_sched_features(const cJSON *v, struct qos_system *sys, const char *path,
                                 struct strbuf *why)
{
    struct qos_system out = *sys;
    const cJSON *m;

    if (!cJSON_IsObject(v))
        return fail(why, path, "an object", v);
    cJSON_ArrayForEach(m, v)
    {
        size_t i;

        if (!cJSON_IsBool(m) && !cJSON_IsNull(m)) {
            if (why)
                strbuf_addf(why, "%s.%s: want a boolean, got %s", path, m->string, json_kind(m));
            return -EINVAL;
        }
        if (strlen(m->string) >= QOS_SCHED_FEATURE_NAME_MAX) {
            if (why)
                strbuf_addf(why, "%s: feature name longer than %d bytes", path,
                            QOS_SCHED_FEATURE_NAME_MAX - 1);
            return -EINVAL;
        }
        for (i = 0; i < out.nsched_features; i++)
            if (!strcmp(out.sched_features[i].name, m->string))
                break;
        if (i == out.nsched_features) {
            if (i == QOS_SCHED_FEATURES_MAX) {
                if (why)
                    strbuf_addf(why, "%s: more than %d features", path, QOS_SCHED_FEATURES_MAX);
                return -EINVAL;
            }
            out.nsched_features++;
            (void)snprintf(out.sched_features[i].name, sizeof(out.sched_features[i].name), "%s",
                           m->string);
        }
        out.sched_features[i].enabled = cJSON_IsTrue(m);
    }
    qsort(out.sched_features, out.nsched_features, sizeof(out.sched_features[0]), sort_features);
    *sys = out;
    return 0;
}

/* Merges object obj over base through tbl; path names obj in messages. */
static int decode(const cJSON *obj, const struct field *tbl, void *base, const char *path,
                  struct strbuf *why)
{
    const cJSON *m;

    if (!obj || cJSON_IsNull(obj))
        return 0;
    if (!cJSON_IsObject(obj))
        return fail(why, path, "an object", obj);
    cJSON_ArrayForEach(m, obj)
    {
        const struct field *f = tbl;
        char *p = (char *)base;
        struct strbuf sub = STRBUF_INIT;
        int64_t v;
        int r = 0;

        while (f->name && strcasecmp(f->name, m->string))
            f++;
        if (!f->name || cJSON_IsNull(m))
            continue;
        p += f->off;
        strbuf_addf(&sub, "%s.%s", path, f->name);
        switch (f->type) {
        case FT_BOOL:
            if (!cJSON_IsBool(m))
                r = fail(why, sub.buf, "a boolean", m);
            else
                *(bool *)(void *)p = cJSON_IsTrue(m);
            break;
        case FT_INT:
        case FT_OPT:
            if (!cJSON_IsNumber(m)) {
                r = fail(why, sub.buf, "an integer", m);
            } else if (qos__json_int(m, f->min, f->max, &v) < 0) {
                if (why)
                    strbuf_addf(why, "%s: %.17g is not an integer in [%lld, %lld]", sub.buf,
                                m->valuedouble, (long long)f->min, (long long)f->max);
                r = -EINVAL;
            } else if (f->type == FT_INT) {
                *(int64_t *)(void *)p = v;
            } else {
                ((struct qos_opt *)(void *)p)->set = true;
                ((struct qos_opt *)(void *)p)->value = v;
            }
            break;
        case FT_ENUM:
            if (!cJSON_IsString(m)) {
                r = fail(why, sub.buf, "a string", m);
            } else if (*m->valuestring) {
                const struct enum_name *e = f->names;

                while (e->s && strcmp(e->s, m->valuestring))
                    e++;
                *(int *)(void *)p = e->value;
            }
            break;
        case FT_OBJ:
            r = decode(m, f->sub, p, sub.buf, why);
            break;
        case FT_SCHED_FEATURES:
            r = decode_sched_features(m, (struct qos_system *)base, sub.buf, why);
            break;
        }
        strbuf_release(&sub);
        if (r < 0)
            return r;
    }
    return 0;
}

void qos_cpu_qos_none(struct qos_cpu_qos *q)
{
    q->group_identity = 0;
    q->sched_idle = 0;
    q->core_expeller = false;
}

void qos_memory_qos_none(struct qos_memory_qos *q)
{
    bool enable = q->enable;

    memset(q, 0, sizeof(*q));
    q->enable = enable;
    q->wmark_scale_permill = 50;
}

void qos_resctrl_qos_none(struct qos_resctrl_qos *q)
{
    q->cat_range_start_percent = 0;
    q->cat_range_end_percent = 100;
    q->mba_percent = 100;
}

void qos_class_defaults(enum qos_class c, struct qos_class_config *ret)
{
    memset(ret, 0, sizeof(*ret));
    switch (c) {
    case QOS_CLASS_LSR:
    case QOS_CLASS_LS:
        ret->cpu.group_identity = 2;
        ret->cpu.core_expeller = true;
        ret->memory.wmark_ratio = 95;
        ret->memory.wmark_scale_permill = 20;
        ret->memory.wmark_min_adj = -25;
        ret->resctrl.cat_range_end_percent = 100;
        break;
    case QOS_CLASS_BE:
        ret->cpu.group_identity = -1;
        ret->memory.wmark_ratio = 95;
        ret->memory.wmark_scale_permill = 20;
        ret->memory.wmark_min_adj = 50;
        ret->resctrl.cat_range_end_percent = 30;
        break;
    default:
        ret->memory.wmark_scale_permill = 50;
        ret->resctrl.cat_range_end_percent = 100;
        break;
    }
    ret->resctrl.mba_percent = 100;
}

/* Merged defaults, before the None replacement. */
static void raw_defaults(struct qos_slo *s)
{
    memset(s, 0, sizeof(*s));
    /* Field by field: a compound literal would copy its padding too. */
    s->threshold.cpu_suppress_threshold_percent.set = true;
    s->threshold.cpu_suppress_threshold_percent.value = 65;
    s->threshold.memory_evict_threshold_percent.set = true;
    s->threshold.memory_evict_threshold_percent.value = 70;
    s->threshold.cpu_suppress_policy = QOS_SUPPRESS_CPUSET;
    s->threshold.cpu_evict_policy = QOS_EVICT_BY_REAL_LIMIT;
    s->resource_qos.cpu_policy = QOS_CPU_POLICY_GROUP_IDENTITY;
    for (int c = 0; c < QOS_CLASS_COUNT; c++)
        qos_class_defaults((enum qos_class)c, &s->resource_qos.classes[c]);
    s->cpu_burst.policy = QOS_BURST_NONE;
    s->cpu_burst.cpu_burst_percent = 1000;
    s->cpu_burst.cfs_quota_burst_percent = 300;
    s->cpu_burst.cfs_quota_burst_period_seconds = -1;
    s->cpu_burst.share_pool_threshold_percent = 50;
}

/* mergeNoneResourceQOSIfDisabled: LSR, LS and BE only. */
static void apply_none(struct qos_slo *s)
{
    for (int c = QOS_CLASS_LSR; c <= QOS_CLASS_BE; c++) {
        struct qos_class_config *cfg = &s->resource_qos.classes[c];

        if (!cfg->cpu.enable)
            qos_cpu_qos_none(&cfg->cpu);
        if (!cfg->memory.enable)
            qos_memory_qos_none(&cfg->memory);
        if (!cfg->resctrl.enable)
            qos_resctrl_qos_none(&cfg->resctrl);
    }
}

void qos_slo_defaults(struct qos_slo *ret)
{
    raw_defaults(ret);
    apply_none(ret);
}

int qos_slo_from_nodeslo(const cJSON *nodeslo, struct qos_slo *ret, struct strbuf *why)
{
    struct qos_slo s;
    const cJSON *spec;
    int r;

    raw_defaults(&s);
    if (nodeslo && !cJSON_IsObject(nodeslo)) {
        qos_slo_defaults(ret);
        return fail(why, "NodeSLO", "an object", nodeslo);
    }
    spec = nodeslo ? cJSON_GetObjectItemCaseSensitive(nodeslo, "spec") : NULL;
    r = decode(spec, spec_fields, &s, "spec", why);
    if (r < 0) {
        qos_slo_defaults(ret);
        return r;
    }
    apply_none(&s);
    memcpy(ret, &s, sizeof(s)); /* padding too: callers may memcmp() */
    return 0;
}

int qos_cpu_burst_merge(const cJSON *obj, struct qos_cpu_burst *cfg, struct strbuf *why)
{
    return decode(obj, pod_cpu_burst_fields, cfg, "cpuBurst", why);
}

int qos_memory_qos_merge(const cJSON *obj, struct qos_memory_qos *cfg, struct strbuf *why)
{
    /* The annotation koordinator.sh/memoryQOS flattens MemoryQOS, which has no enable. */
    return decode(obj, memory_qos_fields + 1, cfg, "memoryQOS", why);
}

int qos_cpu_qos_merge(const cJSON *obj, struct qos_cpu_qos *cfg, struct strbuf *why)
{
    return decode(obj, cpu_qos_fields, cfg, "cpuQOS", why);
}
