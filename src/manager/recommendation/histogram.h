/*
 * The decaying histogram of the Recommendation controller: Kubernetes' Vertical Pod Autoscaler
 * recommender's (vertical-pod-autoscaler/pkg/recommender/util/histogram.go,
 * decaying_histogram.go, histogram_options.go), as docs/recommendation.md cites, so that a
 * recommendation means what a VPA user expects. Pure arithmetic, no I/O, no locking (the
 * controller locks).
 *
 * Buckets grow exponentially: bucket 0 is [0, first), bucket n >= 1 starts at
 * first * (ratio^n - 1) / (ratio - 1); the last bucket starts at or above max and has no upper
 * bound. A sample adds its weight to one bucket, no interpolation. A percentile is the END of
 * the bucket where the running sum of weights (from the smallest bucket) first reaches
 * p x total: a rounding up by at most one bucket width (5 %). A bucket lighter than epsilon
 * counts as empty.
 *
 * Decay: a sample at time t weighs weight x 2^((t - ref) / half_life), so relative to a newer
 * sample an old one loses half its importance every half-life. Only ratios matter, so ref is
 * moved forward (rounded to a multiple of the half-life, all weights scaled by the matching
 * power of two) whenever t runs more than 100 half-lives past it, before 2^exponent could
 * overflow a double.
 *
 * Checkpoints (VPA's HistogramCheckpoint): bucket weights scaled so the heaviest is 10000 and
 * rounded to integers (buckets that round to 0 dropped), the exact total weight, and the
 * reference time. Loading spreads the total over the buckets in proportion to the integers.
 */
#ifndef KOORD_MANAGER_RECOMMENDATION_HISTOGRAM_H
#define KOORD_MANAGER_RECOMMENDATION_HISTOGRAM_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

struct strbuf;

/* VPA's constants (aggregations_config.go): 5 % bucket growth, epsilon 0.001 x the minimum
 * sample weight 0.1, at most 10000 per checkpointed bucket, re-normalise past 2^100. */
#define REC_HIST_RATIO              1.05
#define REC_HIST_MIN_SAMPLE_WEIGHT  0.1
#define REC_HIST_EPSILON            (0.001 * REC_HIST_MIN_SAMPLE_WEIGHT)
#define REC_HIST_MAX_CHECKPOINT     10000u
#define REC_HIST_MAX_DECAY_EXPONENT 100

/* The bucketing scheme. */
struct rec_hist_opts {
    double first;   /* size of bucket 0 */
    double ratio;   /* growth, > 1 */
    double epsilon; /* lighter buckets count as empty */
    int nbuckets;
};

/* CPU in cores: first bucket 0.01 core, up to 1000 cores (VPA's cpuHistogramOptions). */
extern const struct rec_hist_opts rec_hist_cpu;
/* Memory in bytes: first bucket 1e7, up to 1e12 (VPA's memoryHistogramOptions). */
extern const struct rec_hist_opts rec_hist_memory;

/* The number of buckets of a scheme reaching max: ceil(log_ratio(max (ratio-1)/first + 1)) + 1. */
int rec_hist_nbuckets(double max, double first, double ratio);
/* The bucket of value (0 below first, the last one at or past its start). */
int rec_hist_find_bucket(const struct rec_hist_opts *o, double value);
/* Where bucket b starts (0 for b == 0). */
double rec_hist_bucket_start(const struct rec_hist_opts *o, int b);

struct rec_hist {
    const struct rec_hist_opts *o; /* static */
    double *w;                     /* nbuckets weights */
    double total;
    int min_b, max_b;  /* first and last non-empty bucket; min nbuckets-1 and max 0 when empty */
    int64_t half_life; /* seconds; 0 = no decay */
    int64_t ref;       /* reference time (unix seconds), a multiple of half_life */
};

void rec_hist_init(struct rec_hist *h, const struct rec_hist_opts *o, int64_t half_life);
void rec_hist_release(struct rec_hist *h);
bool rec_hist_empty(const struct rec_hist *h);

/* Adds (subtracts) a sample of value with weight (>= 0; negative is treated as 0) taken at
 * time t (unix seconds). Subtracting more than a bucket holds empties it. */
void rec_hist_add(struct rec_hist *h, double value, double weight, int64_t t);
void rec_hist_subtract(struct rec_hist *h, double value, double weight, int64_t t);

/* The p-th fraction (0..1) as above; 0 for an empty histogram. */
double rec_hist_percentile(const struct rec_hist *h, double p);

/* Adds other's samples into h (same scheme and half-life), aligning both reference times to
 * the later one first (other is re-normalised too). -EINVAL when they differ. */
int rec_hist_merge(struct rec_hist *h, struct rec_hist *other);

/* Multiplies every weight by factor (>= 0): percentiles do not change. */
void rec_hist_scale(struct rec_hist *h, double factor);

/* The checkpoint, as JSON: {"referenceTimestamp": RFC 3339, "bucketWeights": {"<index>":
 * <1..10000>, ...}, "totalWeight": <number>} (VPA's HistogramCheckpoint field names). */
cJSON *rec_hist_save(const struct rec_hist *h);
/* Adds a checkpoint's samples to h and takes its reference time. 0, or -EINVAL with why (a
 * bucket out of range, a weight not a non-negative integer, a negative total, a bad time);
 * h is unchanged on error. */
int rec_hist_load(struct rec_hist *h, const cJSON *ckpt, struct strbuf *why);

#endif
