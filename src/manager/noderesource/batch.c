/*
 * Batch resources of a Node: see batch.h. Mirrors upstream koordinator
 * pkg/slo-controller/noderesource/plugins/batchresource/plugin.go (Calculate, Prepare,
 * NeedSync), plugins/util (CalculateBatchResourceByPolicy, GetNodeSafetyMargin, GetHostAppHPUsed),
 * pkg/util (GetPodRequest, GetNodeReservationFromKubelet/FromAnnotation, IsResourceDiff) and
 * apis/extension (priority and QoS classes), as described in manager-behaviour.md 4.2-4.4.
 */
#include "manager/noderesource/batch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "api/rfc3339.h"
#include "base/base.h"
#include "codec/codec.h"

/* ---- exact amounts ---- */

#define NANO 1000000000

/*
 * upstream sums resource.Quantity values exactly and rounds only when it reads MilliValue() or
 * Value() at the end. An amount keeps that exactness in fixed point: whole units (milli-cores for
 * cpu, bytes for memory) plus billionths of a unit, which is finer than the 1n resolution of a
 * quantity for both.
 */
struct amount {
    int64_t whole;
    int32_t nano; /* 0 <= nano < NANO */
};

/* The unit of an amount, as a power of ten of the quantity's base unit. */
enum { UNIT_MILLI = -3, UNIT_ONE = 0 };

/* clang-format off */
static const int64_t pow10_tab[19] = {
    1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000, 10000000000,
    100000000000, 1000000000000, 10000000000000, 100000000000000, 1000000000000000,
    10000000000000000, 100000000000000000, 1000000000000000000,
};
/* clang-format on */

/* q in units of 10^unit; -ERANGE when it does not fit (or is finer than a billionth of one). */
static int amount_from_quantity(const struct quantity *q, int unit, struct amount *ret)
{
    int64_t e = (int64_t)q->scale - unit;
    struct amount a = {0, 0};

    if (q->value == 0) {
        *ret = a;
        return 0;
    }
    if (e >= 0) {
        if (e > 18 || __builtin_mul_overflow(q->value, pow10_tab[e], &a.whole))
            return -ERANGE;
    } else if (e >= -9) {
        int64_t p = pow10_tab[-e], rem;

        a.whole = q->value / p;
        rem = q->value % p;
        if (rem < 0) {
            a.whole--;
            rem += p;
        }
        a.nano = (int32_t)(rem * pow10_tab[9 + e]);
    } else {
        return -ERANGE;
    }
    *ret = a;
    return 0;
}

static struct amount amount_of_int(int64_t v)
{
    return (struct amount){v, 0};
}

static int amount_add(struct amount *a, const struct amount *b)
{
    int32_t n = a->nano + b->nano;
    int64_t w;

    if (__builtin_add_overflow(a->whole, b->whole, &w))
        return -ERANGE;
    if (n >= NANO) {
        n -= NANO;
        if (__builtin_add_overflow(w, 1, &w))
            return -ERANGE;
    }
    a->whole = w;
    a->nano = n;
    return 0;
}

static int amount_sub(struct amount *a, const struct amount *b)
{
    int32_t n = a->nano - b->nano;
    int64_t w;

    if (__builtin_sub_overflow(a->whole, b->whole, &w))
        return -ERANGE;
    if (n < 0) {
        n += NANO;
        if (__builtin_sub_overflow(w, 1, &w))
            return -ERANGE;
    }
    a->whole = w;
    a->nano = n;
    return 0;
}

static int amount_cmp(const struct amount *a, const struct amount *b)
{
    if (a->whole != b->whole)
        return a->whole < b->whole ? -1 : 1;
    if (a->nano != b->nano)
        return a->nano < b->nano ? -1 : 1;
    return 0;
}

static void amount_max(struct amount *a, const struct amount *b)
{
    if (amount_cmp(a, b) < 0)
        *a = *b;
}

/* To a whole unit, away from zero, as Quantity.MilliValue() and Value() round. */
static int64_t amount_round(const struct amount *a)
{
    if (a->nano && a->whole >= 0 && a->whole < INT64_MAX)
        return a->whole + 1;
    return a->whole;
}

/* ---- cpu and memory pairs ---- */

/* The cpu (milli-cores) and memory (bytes) of a ResourceList; the only resources used here. */
struct res {
    struct amount cpu;
    struct amount mem;
};

static int res_add(struct res *a, const struct res *b)
{
    int r = amount_add(&a->cpu, &b->cpu);
    return r < 0 ? r : amount_add(&a->mem, &b->mem);
}

static int res_sub(struct res *a, const struct res *b)
{
    int r = amount_sub(&a->cpu, &b->cpu);
    return r < 0 ? r : amount_sub(&a->mem, &b->mem);
}

static void res_max(struct res *a, const struct res *b)
{
    amount_max(&a->cpu, &b->cpu);
    amount_max(&a->mem, &b->mem);
}

static void res_clamp0(struct res *a)
{
    static const struct res zero;
    res_max(a, &zero);
}

/* ---- reading the objects ---- */

/* o[key] when o is an object, else NULL (cJSON would also search arrays). */
static const cJSON *obj_get(const cJSON *o, const char *key)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

static const cJSON *array_or_null(const cJSON *v)
{
    return cJSON_IsArray(v) ? v : NULL;
}

static const char *obj_string(const cJSON *o, const char *key)
{
    const cJSON *v = obj_get(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *meta_string(const cJSON *obj, const char *map, const char *key)
{
    return obj_string(obj_get(obj_get(obj, "metadata"), map), key);
}

/*
 * A JSON value as Quantity.UnmarshalJSON reads it: a string, null (zero), or a bare number. cJSON
 * keeps only the double of a number, so only integers up to 2^53 are accepted as numbers.
 */
static int json_quantity(const cJSON *v, struct quantity *ret)
{
    if (cJSON_IsString(v))
        return quantity_parse(v->valuestring, ret);
    if (cJSON_IsNull(v)) {
        quantity_from_int(0, QUANTITY_DECIMAL_SI, ret);
        return 0;
    }
    if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
        fabs(v->valuedouble) <= 9007199254740992.0) {
        quantity_from_int((int64_t)v->valuedouble, QUANTITY_DECIMAL_SI, ret);
        return 0;
    }
    return -EINVAL;
}

/* list[name] in units of 10^unit; absent gives 0 and -ENOENT, malformed 0 and -EINVAL/-ERANGE. */
static int list_amount(const cJSON *list, const char *name, int unit, struct amount *ret)
{
    const cJSON *v = obj_get(list, name);
    struct quantity q;
    int r;

    *ret = amount_of_int(0);
    if (!v)
        return -ENOENT;
    r = json_quantity(v, &q);
    if (r == 0)
        r = amount_from_quantity(&q, unit, ret);
    return r;
}

/* cpu and memory of a ResourceList read leniently: what is absent or malformed counts as 0. */
static struct res list_res(const cJSON *list)
{
    struct res r;

    (void)list_amount(list, "cpu", UNIT_MILLI, &r.cpu);
    (void)list_amount(list, "memory", UNIT_ONE, &r.mem);
    return r;
}

/*
 * The ResourceList of an annotation decoded as Go's json.Unmarshal would: null or an object whose
 * every value is a quantity; anything else makes the whole annotation unparsable (-EINVAL).
 */
static int strict_list(const cJSON *list)
{
    const cJSON *v;
    struct quantity q;

    if (!list || cJSON_IsNull(list))
        return 0;
    if (!cJSON_IsObject(list))
        return -EINVAL;
    cJSON_ArrayForEach(v, list)
    {
        if (json_quantity(v, &q) < 0)
            return -EINVAL;
    }
    return 0;
}

/* A Go string field: absent, null or a string. */
static bool is_go_string(const cJSON *v)
{
    return !v || cJSON_IsNull(v) || cJSON_IsString(v);
}

/*
 * Parses the annotation key of node as JSON. Returns 0 with *ret (caller frees), -ENOENT when the
 * annotation is absent, -EINVAL when it is not JSON, -ENOMEM.
 */
static int annotation_json(const cJSON *node, const char *key, cJSON **ret)
{
    const char *s = meta_string(node, "annotations", key);
    int r;

    if (!s)
        return -ENOENT;
    r = json_parse(s, strlen(s), NULL, ret, NULL);
    return r == -ENOMEM ? r : (r < 0 ? -EINVAL : 0);
}

/* ---- time and numbers ---- */

/* Go's int64(f) on amd64: truncation toward zero; NaN and out-of-range values give INT64_MIN. */
static int64_t go_int64(double f)
{
    if (!(f >= -0x1p63 && f < 0x1p63))
        return INT64_MIN;
    return (int64_t)f;
}

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t s;
    if (__builtin_add_overflow(a, b, &s))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return s;
}

static int64_t sat_mul(int64_t a, int64_t b)
{
    int64_t p;
    if (__builtin_mul_overflow(a, b, &p))
        return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
    return p;
}

/*
 * An integer field of the strategy (Go *int64), truncated toward zero and bounded to +-2^53 so
 * that arithmetic on it cannot overflow; def when absent or not a number.
 */
static int64_t strategy_int(const cJSON *s, const char *key, int64_t def, bool *ret_set)
{
    const cJSON *v = obj_get(s, key);
    double d;

    if (ret_set)
        *ret_set = false;
    if (!cJSON_IsNumber(v) || isnan(v->valuedouble))
        return def;
    if (ret_set)
        *ret_set = true;
    d = v->valuedouble;
    if (d > 0x1p53)
        d = 0x1p53;
    if (d < -0x1p53)
        d = -0x1p53;
    return (int64_t)d;
}

static double strategy_double(const cJSON *s, const char *key, double def)
{
    const cJSON *v = obj_get(s, key);
    return cJSON_IsNumber(v) ? v->valuedouble : def;
}

static bool strategy_is(const cJSON *s, const char *key, const char *want)
{
    const char *v = obj_string(s, key);
    return v && !strcmp(v, want);
}

/* ---- pod requests (classification is api/pod.h) ---- */

/* resource.PodRequests (k8s.io/component-helpers/resource/helpers.go), exact. */
static int pod_request(const cJSON *pod, struct res *ret)
{
    const cJSON *spec = obj_get(pod, "spec"), *list, *c;
    struct res reqs = {{0, 0}, {0, 0}}, sidecars = reqs, init_max = reqs, cr;
    int r;

    list = array_or_null(obj_get(spec, "containers"));
    cJSON_ArrayForEach(c, list)
    {
        cr = list_res(obj_get(obj_get(c, "resources"), "requests"));
        r = res_add(&reqs, &cr);
        if (r < 0)
            return r;
    }
    list = array_or_null(obj_get(spec, "initContainers"));
    cJSON_ArrayForEach(c, list)
    {
        const char *policy = obj_string(c, "restartPolicy");

        cr = list_res(obj_get(obj_get(c, "resources"), "requests"));
        if (policy && !strcmp(policy, "Always")) {
            /* A sidecar runs beside the containers and every later init container. */
            r = res_add(&reqs, &cr);
            if (r == 0)
                r = res_add(&sidecars, &cr);
            cr = sidecars;
        } else {
            r = res_add(&cr, &sidecars);
        }
        if (r < 0)
            return r;
        res_max(&init_max, &cr);
    }
    res_max(&reqs, &init_max);
    cr = list_res(obj_get(spec, "overhead"));
    r = res_add(&reqs, &cr);
    if (r < 0)
        return r;
    *ret = reqs;
    return 0;
}

int noderesource_pod_request(const cJSON *pod, int64_t *ret_cpu_milli, int64_t *ret_memory_bytes)
{
    struct res req;
    int r = pod_request(pod, &req);

    if (r < 0)
        return r;
    *ret_cpu_milli = amount_round(&req.cpu);
    *ret_memory_bytes = amount_round(&req.mem);
    return 0;
}

/* ---- pod metrics ---- */

/*
 * One status.podsMetric[] entry. upstream keys them by namespace/name in a map (a repeated key
 * keeps the last entry) and deletes a key from its "dangling" copy when a Running or Pending pod
 * has it; sorting by key and index gives the same answers without a hash table.
 */
struct metric_ref {
    const char *ns;
    const char *name;
    const cJSON *m;
    size_t idx;
    bool matched;
};

static int key_cmp(const char *ns_a, const char *name_a, const char *ns_b, const char *name_b)
{
    int c = strcmp(ns_a, ns_b);
    return c ? c : strcmp(name_a, name_b);
}

static int metric_ref_cmp(const void *pa, const void *pb)
{
    const struct metric_ref *a = pa, *b = pb;
    int c = key_cmp(a->ns, a->name, b->ns, b->name);

    if (c)
        return c;
    return a->idx < b->idx ? -1 : (a->idx > b->idx);
}

/* The entry upstream's map holds for ns/name (the last one of that key), or NULL. */
static struct metric_ref *metric_find(struct metric_ref *refs, size_t n, const char *ns,
                                      const char *name)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (key_cmp(refs[mid].ns, refs[mid].name, ns, name) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && !key_cmp(refs[lo - 1].ns, refs[lo - 1].name, ns, name))
        return &refs[lo - 1];
    return NULL;
}

static const char *str_or_empty(const char *s)
{
    return s ? s : "";
}

static int metrics_index(const cJSON *pods_metric, struct metric_ref **ret, size_t *ret_n)
{
    struct metric_ref *refs;
    const cJSON *m;
    size_t n = 0;
    int count = cJSON_IsArray(pods_metric) ? cJSON_GetArraySize(pods_metric) : 0;

    *ret = NULL;
    *ret_n = 0;
    if (count <= 0)
        return 0;
    refs = ccalloc((size_t)count, sizeof(*refs));
    if (!refs)
        return -ENOMEM;
    cJSON_ArrayForEach(m, pods_metric)
    {
        refs[n].ns = str_or_empty(obj_string(m, "namespace"));
        refs[n].name = str_or_empty(obj_string(m, "name"));
        refs[n].m = m;
        refs[n].idx = n;
        n++;
    }
    qsort(refs, n, sizeof(*refs), metric_ref_cmp);
    *ret = refs;
    *ret_n = n;
    return 0;
}

static struct res metric_usage(const cJSON *m)
{
    return list_res(obj_get(obj_get(m, "podUsage"), "resources"));
}

/* ---- node reservation ---- */

/* strconv.Atoi over s[0..n): optional sign, decimal digits, int64 range. */
static int atoi_span(const char *s, size_t n, int64_t *ret)
{
    size_t i = 0;
    bool neg = false;
    int64_t v = 0;

    if (n && (s[0] == '+' || s[0] == '-')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (i == n)
        return -EINVAL;
    for (; i < n; i++) {
        int d;

        if (s[i] < '0' || s[i] > '9')
            return -EINVAL;
        d = s[i] - '0';
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, neg ? -d : d, &v))
            return -ERANGE;
    }
    *ret = v;
    return 0;
}

struct cpu_range {
    int64_t lo, hi;
};

static int cpu_range_cmp(const void *pa, const void *pb)
{
    const struct cpu_range *a = pa, *b = pb;
    return a->lo < b->lo ? -1 : (a->lo > b->lo);
}

/*
 * The number of distinct CPUs in a cpulist as k8s.io/utils/cpuset.Parse reads it: "" is empty;
 * elements split at ","; an element is N or A-B (split at the first "-", A <= B) with Atoi
 * numbers. Returns 0 with *ret, -EINVAL, -ERANGE (more CPUs than int64), -ENOMEM.
 */
static int cpuset_count(const char *s, int64_t *ret)
{
    struct cpu_range *v;
    size_t n = 1, k = 0;
    int64_t total = 0;
    int r = -EINVAL;

    if (!*s) {
        *ret = 0;
        return 0;
    }
    for (const char *p = s; *p; p++)
        n += *p == ',';
    v = ccalloc(n, sizeof(*v));
    if (!v)
        return -ENOMEM;
    for (const char *p = s;; p++) {
        const char *end = strchr(p, ','), *dash;
        size_t len = end ? (size_t)(end - p) : strlen(p);

        dash = memchr(p, '-', len);
        if (!dash) {
            if (atoi_span(p, len, &v[k].lo) < 0)
                goto out;
            v[k].hi = v[k].lo;
        } else if (atoi_span(p, (size_t)(dash - p), &v[k].lo) < 0 ||
                   atoi_span(dash + 1, len - (size_t)(dash - p) - 1, &v[k].hi) < 0 ||
                   v[k].lo > v[k].hi) {
            goto out;
        }
        k++;
        if (!end)
            break;
        p = end;
    }
    qsort(v, k, sizeof(*v), cpu_range_cmp);
    r = -ERANGE;
    for (size_t i = 0; i < k;) {
        int64_t lo = v[i].lo, hi = v[i].hi, len;

        /* Overlapping ranges count their common CPUs once. */
        for (i++; i < k && v[i].lo <= hi; i++) {
            if (v[i].hi > hi)
                hi = v[i].hi;
        }
        if (__builtin_sub_overflow(hi, lo, &len) || __builtin_add_overflow(len, 1, &len) ||
            __builtin_add_overflow(total, len, &total))
            goto out;
    }
    *ret = total;
    r = 0;
out:
    free(v);
    return r;
}

/*
 * Reserved resources from node.koordinator.sh/reservation (GetNodeReservationFromAnnotation):
 * `resources`, cpu overridden by the CPU count of a non-empty `reservedCPUs`. Field names match
 * case-insensitively, as encoding/json does. Returns 0 with *ret (absent resources 0), -ENOENT
 * when the annotation is absent, -EINVAL when it does not decode, -ENOMEM.
 */
static int annotation_reservation(const cJSON *node, struct res *ret)
{
    const cJSON *resources, *cpus, *policy;
    cJSON *doc = NULL;
    struct res out = {{0, 0}, {0, 0}};
    int64_t ncpu;
    int r = annotation_json(node, NODERESOURCE_ANNOTATION_RESERVATION, &doc);

    if (r < 0)
        return r;
    r = -EINVAL;
    if (cJSON_IsNull(doc))
        goto done;
    if (!cJSON_IsObject(doc))
        goto out;
    resources = cJSON_GetObjectItem(doc, "resources");
    cpus = cJSON_GetObjectItem(doc, "reservedCPUs");
    policy = cJSON_GetObjectItem(doc, "applyPolicy");
    if (strict_list(resources) < 0 || !is_go_string(cpus) || !is_go_string(policy))
        goto out;
    if (cJSON_IsObject(resources)) {
        /* strict_list() proved every value parses; an out-of-range one is dropped. */
        (void)list_amount(resources, "cpu", UNIT_MILLI, &out.cpu);
        (void)list_amount(resources, "memory", UNIT_ONE, &out.mem);
    }
    if (cJSON_IsString(cpus) && *cpus->valuestring) {
        r = cpuset_count(cpus->valuestring, &ncpu);
        if (r == -ENOMEM)
            goto out;
        if (r < 0 || ncpu > INT64_MAX / 1000) {
            r = -EINVAL;
            goto out;
        }
        out.cpu = amount_of_int(ncpu * 1000);
    }
done:
    *ret = out;
    r = 0;
out:
    cJSON_Delete(doc);
    return r;
}

/* ---- calculation ---- */

/* Time in Unix milliseconds, or -EINVAL. */
static int update_time_ms(const cJSON *status, int64_t *ret)
{
    const char *s = obj_string(status, "updateTime");
    int64_t sec;
    int32_t nsec;

    if (!s || rfc3339_parse(s, &sec, &nsec) < 0)
        return -EINVAL;
    *ret = sat_add(sat_mul(sec, 1000), nsec / 1000000);
    return 0;
}

/* isDegradeNeeded, plus a NodeMetric without status.nodeMetric (upstream would crash). */
static bool is_degraded(const cJSON *nodemetric, int64_t now_ms, int64_t degrade_ms)
{
    const cJSON *status = obj_get(nodemetric, "status");
    int64_t updated;

    if (!nodemetric || update_time_ms(status, &updated) < 0)
        return true;
    if (now_ms > sat_add(updated, degrade_ms))
        return true;
    return !cJSON_IsObject(obj_get(status, "nodeMetric"));
}

/* The sums over pods and metrics of manager-behaviour.md 4.4 (calculateOnNode). */
struct hp_sums {
    struct res req;    /* HPReq */
    struct res used;   /* HPUsed */
    struct res max_ur; /* HPMaxUR */
};

static int sum_pods(const struct noderesource_batch_input *in, const cJSON *nm_status,
                    struct hp_sums *ret)
{
    struct hp_sums s = {0};
    struct metric_ref *refs = NULL;
    size_t nrefs = 0;
    int r = metrics_index(obj_get(nm_status, "podsMetric"), &refs, &nrefs);

    if (r < 0)
        return r;
    for (size_t i = 0; i < in->npods; i++) {
        const cJSON *pod = in->pods[i];
        const char *phase = obj_string(obj_get(pod, "status"), "phase");
        enum api_priority prio;
        struct metric_ref *ref;
        struct res req, u, mix;

        if (!pod || !phase || (strcmp(phase, "Running") && strcmp(phase, "Pending")))
            continue;
        ref = metric_find(refs, nrefs,
                          str_or_empty(obj_string(obj_get(pod, "metadata"), "namespace")),
                          str_or_empty(obj_string(obj_get(pod, "metadata"), "name")));
        if (ref)
            ref->matched = true;
        prio = api_pod_priority(pod);
        if (prio == API_PRIORITY_BATCH || prio == API_PRIORITY_FREE)
            continue;
        r = pod_request(pod, &req);
        if (r == 0)
            r = res_add(&s.req, &req);
        if (r < 0)
            goto out;
        if (!ref) {
            /* Upstream quirk kept: nothing goes into HPMaxUR for a pod without a metric. */
            r = res_add(&s.used, &req);
        } else {
            u = metric_usage(ref->m);
            mix = u;
            if (api_pod_qos(pod) == API_QOS_LSE)
                mix.cpu = req.cpu; /* LSE pods do not give back their cpu */
            r = res_add(&s.used, &mix);
            res_max(&req, &u);
            if (r == 0)
                r = res_add(&s.max_ur, &req);
        }
        if (r < 0)
            goto out;
    }
    for (size_t i = 0; i < nrefs; i++) {
        enum api_priority prio;
        struct res u;

        /* Only the last entry of a key counts (the one upstream's map holds). */
        if (i + 1 < nrefs && !key_cmp(refs[i].ns, refs[i].name, refs[i + 1].ns, refs[i + 1].name))
            continue;
        if (refs[i].matched)
            continue;
        prio = api_priority_by_name(obj_string(refs[i].m, "priority"));
        if (prio == API_PRIORITY_BATCH || prio == API_PRIORITY_FREE)
            continue;
        u = metric_usage(refs[i].m);
        r = res_add(&s.used, &u);
        if (r == 0)
            r = res_add(&s.max_ur, &u);
        if (r < 0)
            goto out;
    }
    *ret = s;
out:
    free(refs);
    return r;
}

/* int(x * pct / 100) as upstream's MultiplyMilliQuant / MultiplyQuant compute it. */
static int64_t percent_of(int64_t x, int64_t pct)
{
    return go_int64((double)x * ((double)pct / 100.0));
}

static int calculate(const struct noderesource_batch_input *in, struct noderesource_batch *ret)
{
    const cJSON *st = in->strategy, *node_status = obj_get(in->node, "status");
    const cJSON *nm_status = obj_get(in->nodemetric, "status"), *apps, *app;
    struct res cap, kubelet, anno = {{0, 0}, {0, 0}}, reserved, sys, sys_used, margin, t;
    struct res by_usage, by_request, by_mur;
    struct hp_sums hp;
    int64_t cap_milli, cap_bytes, cpu, mem, pct;
    bool set;
    int r;

    r = sum_pods(in, nm_status, &hp);
    if (r < 0)
        return r;

    /* SysUsed: system usage plus host applications above koord-batch. */
    sys = list_res(obj_get(obj_get(obj_get(nm_status, "nodeMetric"), "systemUsage"), "resources"));
    apps = array_or_null(obj_get(nm_status, "hostApplicationMetric"));
    cJSON_ArrayForEach(app, apps)
    {
        if (api_priority_value(api_priority_by_name(obj_string(app, "priority"))) <=
            api_priority_value(API_PRIORITY_BATCH))
            continue;
        t = list_res(obj_get(obj_get(app, "usage"), "resources"));
        r = res_add(&sys, &t);
        if (r < 0)
            return r;
    }

    /* Reserved = max(kubelet reserved, annotation reserved). */
    cap = list_res(obj_get(node_status, "capacity"));
    kubelet = cap;
    t = list_res(obj_get(node_status, "allocatable"));
    r = res_sub(&kubelet, &t);
    if (r < 0)
        return r;
    res_clamp0(&kubelet);
    r = annotation_reservation(in->node, &anno);
    if (r == -ENOMEM)
        return r;
    reserved = kubelet;
    res_max(&reserved, &anno);
    sys_used = sys;
    res_max(&sys_used, &reserved);

    /* Margin = int(Cap x (100 - reclaim) / 100) on MilliValue() and Value(). */
    cap_milli = amount_round(&cap.cpu);
    cap_bytes = amount_round(&cap.mem);
    pct = strategy_int(st, "cpuReclaimThresholdPercent", 60, NULL);
    margin.cpu = amount_of_int(go_int64((double)cap_milli * ((double)(100 - pct) / 100.0)));
    pct = strategy_int(st, "memoryReclaimThresholdPercent", 65, NULL);
    margin.mem = amount_of_int(go_int64((double)cap_bytes * ((double)(100 - pct) / 100.0)));

    by_usage = cap;
    r = res_sub(&by_usage, &margin);
    if (r < 0)
        return r;
    by_request = by_usage;
    by_mur = by_usage;
    r = res_sub(&by_usage, &sys_used);
    if (r == 0)
        r = res_sub(&by_usage, &hp.used);
    if (r == 0)
        r = res_sub(&by_request, &reserved);
    if (r == 0)
        r = res_sub(&by_request, &hp.req);
    if (r == 0)
        r = res_sub(&by_mur, &sys_used);
    if (r == 0)
        r = res_sub(&by_mur, &hp.max_ur);
    if (r < 0)
        return r;
    res_clamp0(&by_usage);
    res_clamp0(&by_request);
    res_clamp0(&by_mur);

    if (strategy_is(st, "cpuCalculatePolicy", "maxUsageRequest"))
        cpu = amount_round(&by_mur.cpu);
    else
        cpu = amount_round(&by_usage.cpu);
    if (strategy_is(st, "memoryCalculatePolicy", "request"))
        mem = amount_round(&by_request.mem);
    else if (strategy_is(st, "memoryCalculatePolicy", "maxUsageRequest"))
        mem = amount_round(&by_mur.mem);
    else
        mem = amount_round(&by_usage.mem);

    pct = strategy_int(st, "batchCPUThresholdPercent", 0, &set);
    if (set && cpu > percent_of(cap_milli, pct))
        cpu = percent_of(cap_milli, pct);
    pct = strategy_int(st, "batchMemoryThresholdPercent", 0, &set);
    if (set && mem > percent_of(cap_bytes, pct))
        mem = percent_of(cap_bytes, pct);

    ret->action = NODERESOURCE_BATCH_SET;
    ret->message = NULL;
    ret->cpu_milli = cpu < 0 ? 0 : cpu;
    ret->memory_bytes = mem < 0 ? 0 : mem;
    return 0;
}

int noderesource_batch_calculate(const struct noderesource_batch_input *in,
                                 struct noderesource_batch *ret)
{
    struct noderesource_batch out = {0};
    int64_t degrade_ms;
    int r;

    CHECK(in && in->node && in->strategy && ret);
    CHECK(in->pods || !in->npods);
    if (!in->cluster_enable || !cJSON_IsTrue(obj_get(in->strategy, "enable"))) {
        out.action = NODERESOURCE_BATCH_RESET;
        out.message = NODERESOURCE_MSG_DISABLED;
        goto done;
    }
    degrade_ms = sat_mul(strategy_int(in->strategy, "degradeTimeMinutes", 15, NULL), 60000);
    if (is_degraded(in->nodemetric, in->now_ms, degrade_ms)) {
        if (in->now_ms <= sat_add(in->not_before_ms, degrade_ms)) {
            out.action = NODERESOURCE_BATCH_KEEP;
            out.message = NODERESOURCE_MSG_GRACE;
        } else {
            out.action = NODERESOURCE_BATCH_RESET;
            out.message = NODERESOURCE_MSG_DEGRADED;
        }
        goto done;
    }
    r = calculate(in, &out);
    if (r < 0)
        return r;
done:
    *ret = out;
    return 0;
}

/* ---- node status ---- */

/* parent[key] as an object, replacing a non-object and creating a missing one; NULL on OOM. */
static cJSON *ensure_object(cJSON *parent, const char *key)
{
    cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, key);

    if (cJSON_IsObject(o))
        return o;
    if (o)
        cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
    return cJSON_AddObjectToObject(parent, key);
}

/* obj[key] = the canonical string of v in format f, in place when the key exists. */
static int set_quantity(cJSON *obj, const char *key, int64_t v, enum quantity_format f)
{
    char buf[QUANTITY_STR_MAX];
    struct quantity q;
    cJSON *item;

    quantity_from_int(v, f, &q);
    (void)quantity_format(&q, buf);
    item = cJSON_CreateString(buf);
    if (!item)
        return -ENOMEM;
    if (cJSON_GetObjectItemCaseSensitive(obj, key)) {
        if (cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item))
            return 0;
    } else if (cJSON_AddItemToObject(obj, key, item)) {
        return 0;
    }
    cJSON_Delete(item);
    return -ENOMEM;
}

/*
 * The koord-batch resources of node.koordinator.sh/thirdPartyAllocations
 * (GetThirdPartyAllocatedResByPriority): batch-cpu and batch-memory in the units of their
 * quantities. Returns 0 with *ret, -ENOENT (absent), -EINVAL (does not decode), -ENOMEM.
 */
static int annotation_third_party(const cJSON *node, struct res *ret)
{
    const cJSON *allocs, *a;
    cJSON *doc = NULL;
    struct res sum = {{0, 0}, {0, 0}}, t;
    int r = annotation_json(node, NODERESOURCE_ANNOTATION_THIRD_PARTY, &doc);

    if (r < 0)
        return r;
    r = -EINVAL;
    if (!cJSON_IsObject(doc) && !cJSON_IsNull(doc))
        goto out;
    allocs = cJSON_IsObject(doc) ? cJSON_GetObjectItem(doc, "allocations") : NULL;
    if (allocs && !cJSON_IsNull(allocs) && !cJSON_IsArray(allocs))
        goto out;
    allocs = array_or_null(allocs);
    cJSON_ArrayForEach(a, allocs)
    {
        const cJSON *prio, *resources;

        if (cJSON_IsNull(a))
            continue;
        if (!cJSON_IsObject(a))
            goto out;
        prio = cJSON_GetObjectItem(a, "priority");
        resources = cJSON_GetObjectItem(a, "resources");
        if (!is_go_string(cJSON_GetObjectItem(a, "name")) || !is_go_string(prio) ||
            strict_list(resources) < 0)
            goto out;
        if (!cJSON_IsString(prio) || strcmp(prio->valuestring, "koord-batch"))
            continue;
        (void)list_amount(resources, NODERESOURCE_BATCH_CPU, UNIT_ONE, &t.cpu);
        (void)list_amount(resources, NODERESOURCE_BATCH_MEMORY, UNIT_ONE, &t.mem);
        if (res_add(&sum, &t) < 0)
            goto out;
    }
    *ret = sum;
    r = 0;
out:
    cJSON_Delete(doc);
    return r;
}

/* Batch-cpu scaled by the CPU-normalization ratio (PrepareNodeForResource). */
static int64_t scale_cpu(int64_t cpu, double ratio)
{
    double milli = (double)cpu * 1000.0 * ratio;
    struct quantity q;
    int64_t v;

    if (!(milli < 0x1p63))
        return INT64_MAX / 1000;
    /* MultiplyMilliQuant, then Set(Value()) when the result is no longer whole. */
    quantity_from_milli(go_int64(milli), QUANTITY_DECIMAL_SI, &q);
    if (quantity_value(&q, &v) < 0)
        return cpu;
    return v;
}

static int set_both(cJSON *status, int64_t cpu, enum quantity_format cpu_fmt, int64_t mem,
                    enum quantity_format mem_fmt)
{
    static const char *const lists[] = {"capacity", "allocatable"};

    for (size_t i = 0; i < ARRAY_SIZE(lists); i++) {
        cJSON *o = ensure_object(status, lists[i]);

        if (!o || set_quantity(o, NODERESOURCE_BATCH_CPU, cpu, cpu_fmt) < 0 ||
            set_quantity(o, NODERESOURCE_BATCH_MEMORY, mem, mem_fmt) < 0)
            return -ENOMEM;
    }
    return 0;
}

int noderesource_batch_prepare_status(const cJSON *node, const struct noderesource_batch *res,
                                      double cpu_ratio, cJSON **ret_status)
{
    const cJSON *in = obj_get(node, "status");
    cJSON *status;
    struct quantity q;
    struct res tp;
    enum quantity_format mem_fmt = QUANTITY_BINARY_SI;
    int64_t cpu, mem;
    int r = -ENOMEM;

    CHECK(node && res && ret_status);
    status = cJSON_IsObject(in) ? cJSON_Duplicate(in, true) : cJSON_CreateObject();
    if (!status)
        return -ENOMEM;
    switch (res->action) {
    case NODERESOURCE_BATCH_KEEP:
        break;
    case NODERESOURCE_BATCH_RESET:
        for (size_t i = 0; i < 2; i++) {
            cJSON *o = cJSON_GetObjectItemCaseSensitive(status, i ? "allocatable" : "capacity");

            if (!cJSON_IsObject(o))
                continue;
            cJSON_DeleteItemFromObjectCaseSensitive(o, NODERESOURCE_BATCH_CPU);
            cJSON_DeleteItemFromObjectCaseSensitive(o, NODERESOURCE_BATCH_MEMORY);
        }
        break;
    case NODERESOURCE_BATCH_SET:
        cpu = res->cpu_milli;
        mem = res->memory_bytes;
        if (cpu_ratio > 1.0)
            cpu = scale_cpu(cpu, cpu_ratio);
        /* The memory result keeps the format of the capacity it was computed from. */
        if (json_quantity(obj_get(obj_get(in, "capacity"), "memory"), &q) == 0)
            mem_fmt = q.format;
        r = annotation_third_party(node, &tp);
        if (r == -ENOMEM)
            goto err;
        if (r == 0) {
            struct res v = {amount_of_int(cpu < 0 ? 0 : cpu), amount_of_int(mem < 0 ? 0 : mem)};

            if (res_sub(&v, &tp) == 0) {
                res_clamp0(&v);
                cpu = amount_round(&v.cpu);
                mem = amount_round(&v.mem);
                mem_fmt = QUANTITY_BINARY_SI;
            }
        }
        r = set_both(status, cpu, QUANTITY_DECIMAL_SI, mem, mem_fmt);
        if (r < 0)
            goto err;
        break;
    }
    *ret_status = status;
    return 0;
err:
    cJSON_Delete(status);
    return r;
}

/* ---- diff ---- */

/* A batch resource of status.allocatable as upstream compares it: MilliValue() (cpu) or Value(). */
static bool alloc_value(const cJSON *status, const char *name, bool milli, double *ret)
{
    const cJSON *v = obj_get(obj_get(status, "allocatable"), name);
    struct quantity q;
    int64_t x;

    *ret = 0;
    if (!v)
        return false;
    if (json_quantity(v, &q) < 0)
        return true;
    if ((milli ? quantity_milli(&q, &x) : quantity_value(&q, &x)) == 0)
        *ret = (double)x;
    else
        *ret = quantity_as_double(&q) * (milli ? 1000.0 : 1.0);
    return true;
}

static bool resource_is_diff(const cJSON *old_status, const cJSON *new_status, const char *name,
                             bool milli, double threshold)
{
    double o, n;
    bool has_old = alloc_value(old_status, name, milli, &o);
    bool has_new = alloc_value(new_status, name, milli, &n);

    if (has_old != has_new)
        return true;
    if (!has_old)
        return false;
    return fabs(n - o) > o * threshold;
}

bool noderesource_batch_is_diff(const cJSON *old_status, const cJSON *new_status, double threshold)
{
    return resource_is_diff(old_status, new_status, NODERESOURCE_BATCH_CPU, true, threshold) ||
           resource_is_diff(old_status, new_status, NODERESOURCE_BATCH_MEMORY, false, threshold);
}

bool noderesource_status_is_stale(int64_t now_ms, int64_t last_write_ms, int64_t update_threshold_s)
{
    int64_t elapsed;

    if (last_write_ms == 0)
        return true;
    if (__builtin_sub_overflow(now_ms, last_write_ms, &elapsed))
        return now_ms > last_write_ms;
    return elapsed > sat_mul(update_threshold_s, 1000);
}

bool noderesource_batch_needs_sync(const cJSON *old_status, const cJSON *new_status,
                                   const cJSON *strategy, int64_t now_ms, int64_t last_write_ms)
{
    int64_t update_s = strategy_int(strategy, "updateTimeThresholdSeconds", 300, NULL);
    double threshold = strategy_double(strategy, "resourceDiffThreshold", 0.1);

    return noderesource_status_is_stale(now_ms, last_write_ms, update_s) ||
           noderesource_batch_is_diff(old_status, new_status, threshold);
}
