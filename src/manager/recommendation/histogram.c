/*
 * The decaying exponential histogram: see histogram.h. The arithmetic follows VPA's so that
 * the same samples give the same buckets and the same percentile.
 */
#include "manager/recommendation/histogram.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/rfc3339.h"
#include "base/base.h"
#include "base/strbuf.h"

/* ceil(log_1.05(1000 x 0.05 / 0.01 + 1)) + 1 = ceil(174.57) + 1; the same 5001 for memory
 * (1e12 x 0.05 / 1e7 + 1): test_rec_histogram checks both against rec_hist_nbuckets. */
const struct rec_hist_opts rec_hist_cpu = {0.01, REC_HIST_RATIO, REC_HIST_EPSILON, 176};
const struct rec_hist_opts rec_hist_memory = {1e7, REC_HIST_RATIO, REC_HIST_EPSILON, 176};

int rec_hist_nbuckets(double max, double first, double ratio)
{
    return (int)ceil(log(max * (ratio - 1) / first + 1) / log(ratio)) + 1;
}

int rec_hist_find_bucket(const struct rec_hist_opts *o, double value)
{
    int b;

    if (!(value >= o->first)) /* also NaN */
        return 0;
    b = (int)(log(value * (o->ratio - 1) / o->first + 1) / log(o->ratio));
    return b >= o->nbuckets ? o->nbuckets - 1 : b;
}

double rec_hist_bucket_start(const struct rec_hist_opts *o, int b)
{
    if (b <= 0)
        return 0;
    return o->first * (pow(o->ratio, b) - 1) / (o->ratio - 1);
}

void rec_hist_init(struct rec_hist *h, const struct rec_hist_opts *o, int64_t half_life)
{
    memset(h, 0, sizeof(*h));
    h->o = o;
    h->w = xcalloc((size_t)o->nbuckets, sizeof(double));
    h->min_b = o->nbuckets - 1;
    h->half_life = half_life;
}

void rec_hist_release(struct rec_hist *h)
{
    free(h->w);
    h->w = NULL;
}

bool rec_hist_empty(const struct rec_hist *h)
{
    return h->w[h->min_b] < h->o->epsilon;
}

static void update_min_max(struct rec_hist *h)
{
    while (h->w[h->min_b] < h->o->epsilon && h->min_b < h->o->nbuckets - 1)
        h->min_b++;
    while (h->w[h->max_b] < h->o->epsilon && h->max_b > 0)
        h->max_b--;
}

void rec_hist_scale(struct rec_hist *h, double factor)
{
    if (!(factor >= 0))
        factor = 0;
    for (int b = h->min_b; b <= h->max_b; b++)
        h->w[b] *= factor;
    h->total *= factor;
    update_min_max(h);
}

/* round(x) as VPA's: floor(x + 0.5). */
static int64_t round_half_up(double x)
{
    return (int64_t)floor(x + 0.5);
}

/* Moves ref to t rounded to a multiple of the half-life, rescaling the weights. */
static void shift_ref(struct rec_hist *h, int64_t t)
{
    int64_t nref = round_half_up((double)t / (double)h->half_life) * h->half_life;
    double exponent = (double)round_half_up((double)(h->ref - nref) / (double)h->half_life);

    rec_hist_scale(h, ldexp(1.0, exponent < -2000 ? -2000 : (int)exponent));
    h->ref = nref;
}

static double decay_factor(struct rec_hist *h, int64_t t)
{
    if (h->half_life <= 0)
        return 1.0;
    if (t > h->ref + h->half_life * REC_HIST_MAX_DECAY_EXPONENT)
        shift_ref(h, t);
    return exp2((double)(t - h->ref) / (double)h->half_life);
}

static void add_raw(struct rec_hist *h, int b, double weight)
{
    h->w[b] += weight;
    h->total += weight;
    if (b < h->min_b && h->w[b] >= h->o->epsilon)
        h->min_b = b;
    if (b > h->max_b && h->w[b] >= h->o->epsilon)
        h->max_b = b;
}

void rec_hist_add(struct rec_hist *h, double value, double weight, int64_t t)
{
    if (!(weight > 0))
        return;
    add_raw(h, rec_hist_find_bucket(h->o, value), weight * decay_factor(h, t));
}

void rec_hist_subtract(struct rec_hist *h, double value, double weight, int64_t t)
{
    int b = rec_hist_find_bucket(h->o, value);

    if (!(weight > 0))
        return;
    weight *= decay_factor(h, t);
    if (weight > h->w[b] - h->o->epsilon)
        weight = h->w[b];
    h->total -= weight;
    h->w[b] -= weight;
    update_min_max(h);
}

double rec_hist_percentile(const struct rec_hist *h, double p)
{
    double sum = 0, threshold = p * h->total;
    int b = h->min_b;

    if (rec_hist_empty(h))
        return 0;
    for (; b < h->max_b; b++) {
        sum += h->w[b];
        if (sum >= threshold)
            break;
    }
    if (b < h->o->nbuckets - 1)
        return rec_hist_bucket_start(h->o, b + 1);
    return rec_hist_bucket_start(h->o, b); /* the last bucket has no end */
}

int rec_hist_merge(struct rec_hist *h, struct rec_hist *other)
{
    if (h->o != other->o || h->half_life != other->half_life)
        return -EINVAL;
    if (h->half_life > 0) {
        if (h->ref < other->ref)
            shift_ref(h, other->ref);
        else if (other->ref < h->ref)
            shift_ref(other, h->ref);
    }
    if (rec_hist_empty(other))
        return 0;
    for (int b = other->min_b; b <= other->max_b; b++)
        h->w[b] += other->w[b];
    h->total += other->total;
    if (other->min_b < h->min_b)
        h->min_b = other->min_b;
    if (other->max_b > h->max_b)
        h->max_b = other->max_b;
    return 0;
}

cJSON *rec_hist_save(const struct rec_hist *h)
{
    cJSON *out = cJSON_CreateObject(), *bw;
    char ts[RFC3339_STR_MAX];
    double max = 0;

    CHECK(out);
    (void)rfc3339_format(h->ref, ts);
    CHECK(cJSON_AddStringToObject(out, "referenceTimestamp", ts));
    CHECK(bw = cJSON_AddObjectToObject(out, "bucketWeights"));
    for (int b = h->min_b; b <= h->max_b; b++)
        if (h->w[b] > max)
            max = h->w[b];
    for (int b = h->min_b; max > 0 && b <= h->max_b; b++) {
        int64_t v = round_half_up(h->w[b] * (double)REC_HIST_MAX_CHECKPOINT / max);
        char key[16];
        if (v <= 0)
            continue;
        (void)snprintf(key, sizeof(key), "%d", b);
        CHECK(cJSON_AddNumberToObject(bw, key, (double)v));
    }
    CHECK(cJSON_AddNumberToObject(out, "totalWeight", h->total));
    return out;
}

int rec_hist_load(struct rec_hist *h, const cJSON *ckpt, struct strbuf *why)
{
    const cJSON *bw = cJSON_GetObjectItemCaseSensitive(ckpt, "bucketWeights");
    const cJSON *tw = cJSON_GetObjectItemCaseSensitive(ckpt, "totalWeight");
    const cJSON *rt = cJSON_GetObjectItemCaseSensitive(ckpt, "referenceTimestamp");
    const cJSON *v;
    int64_t ref = 0, sum = 0;
    int32_t nsec;
    double ratio;

    if (!cJSON_IsObject(ckpt)) {
        strbuf_addstr(why, "not an object");
        return -EINVAL;
    }
    if (!cJSON_IsNumber(tw) || !(tw->valuedouble >= 0) || !isfinite(tw->valuedouble)) {
        strbuf_addstr(why, "totalWeight: must be a non-negative number");
        return -EINVAL;
    }
    if (rt && (!cJSON_IsString(rt) || rfc3339_parse(rt->valuestring, &ref, &nsec) < 0)) {
        strbuf_addstr(why, "referenceTimestamp: not an RFC 3339 time");
        return -EINVAL;
    }
    if (bw && !cJSON_IsObject(bw)) {
        strbuf_addstr(why, "bucketWeights: must be an object");
        return -EINVAL;
    }
    cJSON_ArrayForEach(v, bw)
    {
        uint32_t b;
        if (parse_u32(v->string, &b) < 0 || b >= (uint32_t)h->o->nbuckets) {
            strbuf_addf(why, "bucketWeights: bucket \"%s\" is not in 0..%d", v->string,
                        h->o->nbuckets - 1);
            return -EINVAL;
        }
        if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 4294967295.0 ||
            v->valuedouble != floor(v->valuedouble)) {
            strbuf_addf(why, "bucketWeights: weight of bucket %u is not an integer in 0..2^32-1",
                        b);
            return -EINVAL;
        }
        sum += (int64_t)v->valuedouble;
    }
    h->ref = ref;
    if (sum == 0)
        return 0;
    ratio = tw->valuedouble / (double)sum;
    cJSON_ArrayForEach(v, bw)
    {
        uint32_t b;
        CHECK(parse_u32(v->string, &b) == 0);
        if ((int)b < h->min_b)
            h->min_b = (int)b;
        if ((int)b > h->max_b)
            h->max_b = (int)b;
        h->w[b] += v->valuedouble * ratio;
    }
    h->total += tw->valuedouble;
    return 0;
}
