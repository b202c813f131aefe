/*
 * The Recommendation model: see model.h. VPA's model/aggregate_container_state.go,
 * container.go, logic/estimator.go and recommender.go, and the admission controller's
 * proportional limits (docs/recommendation.md).
 */
#include "manager/recommendation/model.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "api/rfc3339.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"

__extension__ typedef unsigned __int128 u128;

void rec_params_default(struct rec_params *p)
{
    p->cpu_half_life = REC_DEFAULT_HALF_LIFE_S;
    p->mem_half_life = REC_DEFAULT_HALF_LIFE_S;
    p->mem_interval = REC_DEFAULT_MEM_INTERVAL_S;
    p->cpu_percentile = REC_DEFAULT_PERCENTILE;
    p->mem_percentile = REC_DEFAULT_PERCENTILE;
    p->margin = REC_DEFAULT_MARGIN;
    p->pod_min_cpu_milli = REC_DEFAULT_POD_MIN_CPU_M;
    p->pod_min_mem_bytes = (int64_t)REC_DEFAULT_POD_MIN_MEM_MB * 1024 * 1024;
    p->min_samples = REC_DEFAULT_MIN_SAMPLES;
}

void rec_agg_init(struct rec_agg *a, const struct rec_params *p)
{
    memset(a, 0, sizeof(*a));
    rec_hist_init(&a->cpu, &rec_hist_cpu, p->cpu_half_life);
    rec_hist_init(&a->mem, &rec_hist_memory, p->mem_half_life);
}

void rec_agg_release(struct rec_agg *a)
{
    rec_hist_release(&a->cpu);
    rec_hist_release(&a->mem);
}

bool rec_agg_add_cpu(struct rec_agg *a, struct rec_cstate *c, double cores, double request_cores,
                     int64_t t)
{
    if (!(cores >= 0) || t <= c->last_cpu)
        return false;
    c->last_cpu = t;
    rec_hist_add(&a->cpu, cores, fmax(request_cores, REC_HIST_MIN_SAMPLE_WEIGHT), t);
    if (t > a->last_sample)
        a->last_sample = t;
    if (!a->first_sample || t < a->first_sample)
        a->first_sample = t;
    a->samples++;
    return true;
}

bool rec_agg_add_memory(struct rec_agg *a, struct rec_cstate *c, double bytes, int64_t t,
                        int64_t interval)
{
    bool add = false;

    if (!(bytes >= 0) || t < c->last_mem || interval <= 0)
        return false;
    c->last_mem = t;
    if (!c->window_end)
        c->window_end = t;
    if (t < c->window_end) {
        if (c->peak != 0 && bytes > c->peak) {
            rec_hist_subtract(&a->mem, c->peak, 1.0, c->window_end);
            add = true;
        }
    } else {
        c->window_end += (t - c->window_end) / interval * interval + interval;
        c->peak = 0;
        add = true;
    }
    if (add) {
        rec_hist_add(&a->mem, bytes, 1.0, c->window_end);
        c->peak = bytes;
    }
    return true;
}

static void add_time(cJSON *o, const char *k, int64_t t)
{
    char ts[RFC3339_STR_MAX];

    if (!t)
        return;
    (void)rfc3339_format(t, ts);
    CHECK(cJSON_AddStringToObject(o, k, ts));
}

cJSON *rec_agg_save(const struct rec_agg *a, const char *container)
{
    cJSON *o = cJSON_CreateObject();

    CHECK(o);
    CHECK(cJSON_AddStringToObject(o, "containerName", container));
    CHECK(cJSON_AddItemToObject(o, "cpuHistogram", rec_hist_save(&a->cpu)));
    CHECK(cJSON_AddItemToObject(o, "memoryHistogram", rec_hist_save(&a->mem)));
    add_time(o, "firstSampleStart", a->first_sample);
    add_time(o, "lastSampleStart", a->last_sample);
    CHECK(cJSON_AddNumberToObject(o, "totalSamplesCount", (double)a->samples));
    return o;
}

static int load_time(const cJSON *o, const char *k, int64_t *ret, struct strbuf *why)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    int32_t nsec;

    *ret = 0;
    if (!v)
        return 0;
    if (!cJSON_IsString(v) || rfc3339_parse(v->valuestring, ret, &nsec) < 0) {
        strbuf_addf(why, "%s: not an RFC 3339 time", k);
        return -EINVAL;
    }
    return 0;
}

int rec_agg_load(struct rec_agg *a, const cJSON *ckpt, struct strbuf *why)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(ckpt, "totalSamplesCount");
    struct strbuf sub = STRBUF_INIT;
    int r;

    if ((r = load_time(ckpt, "firstSampleStart", &a->first_sample, why)) < 0 ||
        (r = load_time(ckpt, "lastSampleStart", &a->last_sample, why)) < 0)
        return r;
    if (n && (!cJSON_IsNumber(n) || n->valuedouble < 0 || n->valuedouble > 1e15)) {
        strbuf_addstr(why, "totalSamplesCount: must be a non-negative integer");
        return -EINVAL;
    }
    if ((r = rec_hist_load(&a->cpu, cJSON_GetObjectItemCaseSensitive(ckpt, "cpuHistogram"), &sub)) <
        0) {
        strbuf_addf(why, "cpuHistogram: %s", sub.buf);
        goto out;
    }
    if ((r = rec_hist_load(&a->mem, cJSON_GetObjectItemCaseSensitive(ckpt, "memoryHistogram"),
                           &sub)) < 0) {
        strbuf_addf(why, "memoryHistogram: %s", sub.buf);
        goto out;
    }
    a->samples = n ? (unsigned long)n->valuedouble : 0;
out:
    strbuf_release(&sub);
    return r;
}

/* resourceAmountFromFloat: negative -> 0, truncation, capped. */
static int64_t amount(double v)
{
    if (!(v > 0))
        return 0;
    if (v >= 9.2e18)
        return INT64_MAX;
    return (int64_t)v;
}

void rec_estimate(const struct rec_agg *a, const struct rec_params *p, size_t ncontainers,
                  struct rec_estimate *ret)
{
    double fraction = 1.0 / (double)(ncontainers ? ncontainers : 1);
    int64_t cpu = amount(rec_hist_percentile(&a->cpu, p->cpu_percentile) * 1000.0);
    int64_t mem = amount(rec_hist_percentile(&a->mem, p->mem_percentile));
    int64_t min_cpu = amount((double)p->pod_min_cpu_milli * fraction);
    int64_t min_mem = amount((double)p->pod_min_mem_bytes * fraction);

    cpu = amount((double)cpu * (1.0 + p->margin));
    mem = amount((double)mem * (1.0 + p->margin));
    ret->cpu_milli = cpu > min_cpu ? cpu : min_cpu;
    ret->mem_bytes = mem > min_mem ? mem : min_mem;
}

int64_t rec_proportional_limit(int64_t orig_limit, int64_t orig_request, int64_t recommended)
{
    u128 v;

    if (orig_limit <= 0 || recommended <= 0)
        return 0;
    if (orig_request <= 0 || orig_request == orig_limit)
        return recommended;
    v = (u128)recommended * (u128)orig_limit / (u128)orig_request;
    return v > (u128)INT64_MAX ? INT64_MAX : (int64_t)v;
}

static int64_t qty(const cJSON *list, const char *k, bool milli)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(list, k);
    struct quantity q;
    int64_t n = 0;

    if (!cJSON_IsString(v) || quantity_parse(v->valuestring, &q) < 0)
        return 0;
    if ((milli ? quantity_milli(&q, &n) : quantity_value(&q, &n)) < 0)
        return 0;
    return n > 0 ? n : 0;
}

size_t rec_pod_containers(const cJSON *pod, struct rec_container **ret)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(pod, "spec"), "containers");
    const cJSON *c;
    struct rec_container *v = xcalloc((size_t)cJSON_GetArraySize(list) + 1, sizeof(*v));
    size_t n = 0;

    cJSON_ArrayForEach(c, list)
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");
        const cJSON *res = cJSON_GetObjectItemCaseSensitive(c, "resources");
        const cJSON *req = cJSON_GetObjectItemCaseSensitive(res, "requests");
        const cJSON *lim = cJSON_GetObjectItemCaseSensitive(res, "limits");
        struct rec_container *o = &v[n];

        if (!cJSON_IsString(name) || !*name->valuestring ||
            strlen(name->valuestring) >= sizeof(o->name))
            continue;
        (void)snprintf(o->name, sizeof(o->name), "%s", name->valuestring);
        o->cpu_lim_m = qty(lim, "cpu", true);
        o->mem_lim = qty(lim, "memory", false);
        /* Kubernetes defaults a missing request to the limit. */
        o->cpu_req_m =
            cJSON_GetObjectItemCaseSensitive(req, "cpu") ? qty(req, "cpu", true) : o->cpu_lim_m;
        o->mem_req = cJSON_GetObjectItemCaseSensitive(req, "memory") ? qty(req, "memory", false)
                                                                     : o->mem_lim;
        n++;
    }
    *ret = v;
    return n;
}

void rec_split(const struct rec_container *cs, size_t n, bool cpu, double *out)
{
    double sum = 0;

    for (size_t i = 0; i < n; i++)
        sum += (double)(cpu ? cs[i].cpu_req_m : cs[i].mem_req);
    for (size_t i = 0; i < n; i++)
        out[i] = sum > 0 ? (double)(cpu ? cs[i].cpu_req_m : cs[i].mem_req) / sum : 1.0 / (double)n;
}

bool rec_controller_of(const cJSON *obj, const char **kind, const char **name)
{
    const cJSON *refs = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "ownerReferences");
    const cJSON *r;

    cJSON_ArrayForEach(r, refs)
    {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(r, "kind");
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(r, "name");
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "controller")) ||
            !cJSON_IsString(k) || !cJSON_IsString(nm))
            continue;
        *kind = k->valuestring;
        *name = nm->valuestring;
        return true;
    }
    return false;
}

/* The group of an apiVersion ("" for "v1"), into buf. */
static void group_of(const char *api_version, char *buf, size_t size)
{
    const char *slash = strchr(api_version, '/');
    size_t len = slash ? (size_t)(slash - api_version) : 0;

    (void)snprintf(buf, size, "%.*s", (int)len, api_version);
}

bool rec_owned_by(const cJSON *pod, const char *api_version, const char *kind, const char *name)
{
    const cJSON *refs = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(pod, "metadata"), "ownerReferences");
    const cJSON *r;

    cJSON_ArrayForEach(r, refs)
    {
        const char *k = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "kind"));
        const char *nm = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "name"));
        const char *av = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "apiVersion"));
        char g1[256], g2[256];
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "controller")) || !k || !nm ||
            strcmp(k, kind) || strcmp(nm, name))
            continue;
        if (api_version && *api_version && av) {
            group_of(api_version, g1, sizeof(g1));
            group_of(av, g2, sizeof(g2));
            if (strcmp(g1, g2))
                continue;
        }
        return true;
    }
    return false;
}

bool rec_workload_resource(const char *api_version, const char *kind, char *group, size_t gsize,
                           char *version, size_t vsize, char *plural, size_t psize)
{
    static const struct {
        const char *kind, *api_version;
    } known[] = {{"Deployment", "apps/v1"}, {"StatefulSet", "apps/v1"}, {"ReplicaSet", "apps/v1"},
                 {"DaemonSet", "apps/v1"},  {"Job", "batch/v1"},        {"CronJob", "batch/v1"}};
    const char *slash;
    size_t i, n = strlen(kind);

    if (!api_version || !*api_version) {
        for (i = 0; i < ARRAY_SIZE(known) && strcmp(known[i].kind, kind); i++)
            ;
        if (i == ARRAY_SIZE(known))
            return false;
        api_version = known[i].api_version;
    }
    if (!n || n + 2 > psize)
        return false;
    slash = strchr(api_version, '/');
    group_of(api_version, group, gsize);
    (void)snprintf(version, vsize, "%s", slash ? slash + 1 : api_version);
    for (i = 0; i < n; i++)
        plural[i] = (char)tolower((unsigned char)kind[i]);
    plural[n] = 's';
    plural[n + 1] = '\0';
    return true;
}

static void add_quantity(cJSON *o, const char *k, int64_t v, bool milli)
{
    struct quantity q;
    char buf[QUANTITY_STR_MAX];

    if (milli)
        quantity_from_milli(v, QUANTITY_DECIMAL_SI, &q);
    else
        quantity_from_int(v, QUANTITY_BINARY_SI, &q);
    (void)quantity_format(&q, buf);
    CHECK(cJSON_AddStringToObject(o, k, buf));
}

static int result_cmp(const void *x, const void *y)
{
    return strcmp(((const struct rec_result *)x)->container,
                  ((const struct rec_result *)y)->container);
}

static const cJSON *old_condition(const cJSON *old, const char *type)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(old, "conditions"))
    {
        const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "type"));
        if (t && !strcmp(t, type))
            return c;
    }
    return NULL;
}

cJSON *rec_build_status(const struct rec_result *res, size_t n, const struct rec_condition *conds,
                        size_t ncond, const cJSON *old, int64_t now)
{
    cJSON *st = cJSON_CreateObject(), *list, *conditions;
    struct rec_result *sorted = NULL;
    char ts[RFC3339_STR_MAX];

    CHECK(st);
    (void)rfc3339_format(now, ts);
    if (res) {
        cJSON *ps;
        sorted = xcalloc(n + 1, sizeof(*sorted));
        memcpy(sorted, res, n * sizeof(*sorted));
        qsort(sorted, n, sizeof(*sorted), result_cmp);
        CHECK(ps = cJSON_AddObjectToObject(st, "podStatus"));
        CHECK(list = cJSON_AddArrayToObject(ps, "containerStatuses"));
        for (size_t i = 0; i < n; i++) {
            cJSON *c = cJSON_CreateObject(), *r;
            CHECK(c);
            CHECK(cJSON_AddStringToObject(c, "containerName", sorted[i].container));
            CHECK(r = cJSON_AddObjectToObject(c, "resources"));
            add_quantity(r, "cpu", sorted[i].req.cpu_milli, true);
            add_quantity(r, "memory", sorted[i].req.mem_bytes, false);
            if (sorted[i].cpu_lim_m)
                add_quantity(r, "limits.cpu", sorted[i].cpu_lim_m, true);
            if (sorted[i].mem_lim)
                add_quantity(r, "limits.memory", sorted[i].mem_lim, false);
            CHECK(cJSON_AddItemToArray(list, c));
        }
        free(sorted);
    }
    CHECK(cJSON_AddStringToObject(st, "updateTime", ts));
    CHECK(conditions = cJSON_AddArrayToObject(st, "conditions"));
    for (size_t i = 0; i < ncond; i++) {
        const cJSON *oc = old_condition(old, conds[i].type);
        const char *os = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(oc, "status"));
        const char *olt =
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(oc, "lastTransitionTime"));
        cJSON *c = cJSON_CreateObject();
        CHECK(c);
        CHECK(cJSON_AddStringToObject(c, "type", conds[i].type));
        CHECK(cJSON_AddStringToObject(c, "status", conds[i].status));
        CHECK(cJSON_AddStringToObject(c, "reason", conds[i].reason));
        CHECK(cJSON_AddStringToObject(c, "message", conds[i].message));
        CHECK(cJSON_AddStringToObject(c, "lastTransitionTime",
                                      os && olt && !strcmp(os, conds[i].status) ? olt : ts));
        CHECK(cJSON_AddItemToArray(conditions, c));
    }
    return st;
}

/* The parts of a status rec_build_status() decides, as text. */
static void decided(const cJSON *st, struct strbuf *out)
{
    const cJSON *c;

    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(st, "podStatus");

    if (ps)
        CHECK(json_print(ps, out) == 0);
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(st, "conditions"))
    {
        static const char *const keys[] = {"type", "status", "reason", "message"};
        for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
            const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, keys[i]));
            strbuf_addch(out, '\x1f');
            strbuf_addstr(out, v ? v : "");
        }
    }
}

bool rec_status_changed(const cJSON *old, const cJSON *next)
{
    struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
    bool changed;

    decided(old, &a);
    decided(next, &b);
    changed = a.len != b.len || memcmp(a.buf, b.buf, a.len);
    strbuf_release(&a);
    strbuf_release(&b);
    return changed;
}
