/*
 * Tests for manager/recommendation/histogram: VPA's decaying exponential histogram against
 * hand-computed cases. Bucket n >= 1 starts at 0.01 x (1.05^n - 1) / 0.05 cores; the values
 * below were worked out with that formula on paper (1.05^9 = 1.551328, 1.05^26 = 3.555673,
 * 1.05^37 = 6.081435).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/strbuf.h"
#include "manager/recommendation/histogram.h"

#define T0 ((int64_t)3600 * 1000000) /* a multiple of every half-life used */

static void assert_near(double got, double want, double tol)
{
    if (fabs(got - want) > tol)
        fail_msg("got %.9g, want %.9g (+- %g)", got, want, tol);
}

static void test_buckets(void **state)
{
    (void)state;
    /* ceil(log_1.05(5001)) + 1 = ceil(174.57) + 1 for both schemes. */
    assert_int_equal(rec_hist_nbuckets(1000, 0.01, 1.05), 176);
    assert_int_equal(rec_hist_cpu.nbuckets, 176);
    assert_int_equal(rec_hist_nbuckets(1e12, 1e7, 1.05), 176);
    assert_int_equal(rec_hist_memory.nbuckets, 176);
    assert_int_equal(rec_hist_find_bucket(&rec_hist_cpu, 0), 0);
    assert_int_equal(rec_hist_find_bucket(&rec_hist_cpu, 0.0099), 0);
    assert_int_equal(rec_hist_find_bucket(&rec_hist_cpu, 0.01), 1);
    assert_near(rec_hist_bucket_start(&rec_hist_cpu, 1), 0.01, 1e-12);
    assert_near(rec_hist_bucket_start(&rec_hist_cpu, 2), 0.0205, 1e-12); /* 0.01 + 0.0105 */
    assert_int_equal(rec_hist_find_bucket(&rec_hist_cpu, 0.0204), 1);
    assert_int_equal(rec_hist_find_bucket(&rec_hist_cpu, 0.0206), 2);
    assert_int_equal(rec_hist_find_bucket(&rec_hist_cpu, 0.5), 25);
    assert_int_equal(rec_hist_find_bucket(&rec_hist_cpu, 1e6), 175); /* past the max: last */
    assert_int_equal(rec_hist_find_bucket(&rec_hist_cpu, NAN), 0);
    assert_int_equal(rec_hist_find_bucket(&rec_hist_memory, 600.0 * 1048576), 29);
}

static void test_percentile(void **state)
{
    struct rec_hist h;

    (void)state;
    rec_hist_init(&h, &rec_hist_cpu, 0);
    assert_true(rec_hist_empty(&h));
    assert_near(rec_hist_percentile(&h, 0.9), 0, 0);
    /* one value: every percentile is the end of its bucket 25: 0.2 x 2.555673 */
    rec_hist_add(&h, 0.5, 1, T0);
    assert_near(rec_hist_percentile(&h, 0.9), 0.5111346, 1e-6);
    assert_near(rec_hist_percentile(&h, 0.0), 0.5111346, 1e-6);
    /* nine samples of 0.1 (bucket 8) and one of 1.0 (bucket 36), equal weights */
    rec_hist_release(&h);
    rec_hist_init(&h, &rec_hist_cpu, 0);
    for (int i = 0; i < 9; i++)
        rec_hist_add(&h, 0.1, 1, T0 + i);
    rec_hist_add(&h, 1.0, 1, T0 + 9);
    assert_near(h.total, 10, 1e-12);
    assert_near(rec_hist_percentile(&h, 0.9), 0.1102656, 1e-6); /* 9 >= 0.9 x 10 */
    assert_near(rec_hist_percentile(&h, 0.95), 1.016287, 1e-5);
    /* weights: the 1.0 sample weighing 9 moves the median to it */
    rec_hist_add(&h, 1.0, 9, T0 + 10);
    assert_near(rec_hist_percentile(&h, 0.5), 1.016287, 1e-5);
    /* subtracting more than a bucket holds empties it */
    rec_hist_subtract(&h, 1.0, 100, T0 + 11);
    assert_near(rec_hist_percentile(&h, 1.0), 0.1102656, 1e-6);
    assert_near(h.total, 9, 1e-9);
    /* a negative weight is no sample */
    rec_hist_add(&h, 5.0, -1, T0 + 12);
    assert_near(h.total, 9, 1e-9);
    rec_hist_release(&h);
}

static void test_decay(void **state)
{
    struct rec_hist h;

    (void)state;
    rec_hist_init(&h, &rec_hist_cpu, 3600);
    rec_hist_add(&h, 0.1, 1, T0);
    assert_int_equal(h.ref, T0); /* moved to the first sample, a multiple of the half-life */
    /* one half-life later a sample of the same weight counts twice */
    rec_hist_add(&h, 1.0, 1, T0 + 3600);
    assert_near(h.total, 3, 1e-12);
    assert_near(h.w[36], 2, 1e-12);
    assert_near(rec_hist_percentile(&h, 0.5), 1.016287, 1e-5); /* 1.5 of 3: past the 0.1 */
    /* past 100 half-lives the reference moves (rounded) and old weights shrink by 2^-101 */
    rec_hist_add(&h, 5.0, 1, T0 + 101 * 3600 + 1000);
    assert_int_equal(h.ref, T0 + 101 * 3600);
    assert_true(h.total < 1.5 && h.total > 1.0);
    assert_int_equal(h.min_b, rec_hist_find_bucket(&rec_hist_cpu, 5.0)); /* old ones empty */
    rec_hist_release(&h);
}

static void test_merge(void **state)
{
    struct rec_hist a, b, c;

    (void)state;
    rec_hist_init(&a, &rec_hist_cpu, 3600);
    rec_hist_init(&b, &rec_hist_cpu, 3600);
    rec_hist_init(&c, &rec_hist_memory, 3600);
    rec_hist_add(&a, 0.1, 1, T0);
    rec_hist_add(&b, 1.0, 1, T0 + 200 * 3600); /* b's reference is 200 half-lives later */
    assert_int_equal(rec_hist_merge(&a, &b), 0);
    assert_int_equal(a.ref, b.ref);
    assert_near(rec_hist_percentile(&a, 0.01), 1.016287, 1e-5); /* a's sample decayed away */
    assert_int_equal(rec_hist_merge(&a, &c), -EINVAL);
    rec_hist_release(&a);
    rec_hist_release(&b);
    rec_hist_release(&c);
}

static void test_checkpoint(void **state)
{
    struct rec_hist h, back;
    struct strbuf why = STRBUF_INIT;
    cJSON *ck, *bw;

    (void)state;
    rec_hist_init(&h, &rec_hist_cpu, 3600);
    rec_hist_add(&h, 0.1, 3, T0);
    rec_hist_add(&h, 0.5, 1, T0);
    rec_hist_add(&h, 2.0, 0.5, T0 + 3600); /* weighs 1 */
    ck = rec_hist_save(&h);
    bw = cJSON_GetObjectItem(ck, "bucketWeights");
    /* the heaviest bucket is 10000, the others in proportion: 3 : 1 : 1 */
    assert_int_equal(cJSON_GetArraySize(bw), 3);
    assert_int_equal((int)cJSON_GetObjectItem(bw, "8")->valuedouble, 10000);
    assert_int_equal((int)cJSON_GetObjectItem(bw, "25")->valuedouble, 3333);
    assert_near(cJSON_GetObjectItem(ck, "totalWeight")->valuedouble, 5, 1e-12);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(ck, "referenceTimestamp")),
                        "2084-01-29T16:00:00Z"); /* 3.6e9 s: date -u -d @3600000000 */
    rec_hist_init(&back, &rec_hist_cpu, 3600);
    assert_int_equal(rec_hist_load(&back, ck, &why), 0);
    assert_int_equal(back.ref, h.ref);
    assert_near(back.total, 5, 1e-9);
    /* (the integer weights are lossy right at a cumulative boundary, 0.6 and 0.8 here) */
    for (double p = 0.1; p <= 1.0; p += 0.2)
        assert_near(rec_hist_percentile(&back, p), rec_hist_percentile(&h, p), 1e-12);
    assert_near(rec_hist_percentile(&back, 0.5), 0.1102656, 1e-6);
    assert_near(rec_hist_percentile(&back, 0.7), 0.5111346, 1e-6);
    /* bad checkpoints leave the histogram as it was */
    cJSON_AddItemToObject(bw, "176", cJSON_CreateNumber(1));
    assert_int_equal(rec_hist_load(&back, ck, &why), -EINVAL);
    assert_non_null(strstr(why.buf, "bucket \"176\""));
    cJSON_DeleteItemFromObject(bw, "176");
    cJSON_AddItemToObject(bw, "3", cJSON_CreateNumber(1.5));
    assert_int_equal(rec_hist_load(&back, ck, &why), -EINVAL);
    cJSON_DeleteItemFromObject(bw, "3");
    cJSON_ReplaceItemInObject(ck, "totalWeight", cJSON_CreateNumber(-1));
    assert_int_equal(rec_hist_load(&back, ck, &why), -EINVAL);
    assert_near(back.total, 5, 1e-9);
    cJSON_Delete(ck);
    /* an empty histogram round-trips to an empty one */
    rec_hist_release(&h);
    rec_hist_init(&h, &rec_hist_cpu, 3600);
    ck = rec_hist_save(&h);
    rec_hist_release(&back);
    rec_hist_init(&back, &rec_hist_cpu, 3600);
    assert_int_equal(rec_hist_load(&back, ck, &why), 0);
    assert_true(rec_hist_empty(&back));
    cJSON_Delete(ck);
    rec_hist_release(&h);
    rec_hist_release(&back);
    strbuf_release(&why);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buckets),    cmocka_unit_test(test_percentile),
        cmocka_unit_test(test_decay),      cmocka_unit_test(test_merge),
        cmocka_unit_test(test_checkpoint),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
