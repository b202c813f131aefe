/*
 * Hostile patches against src/codec/patch.c and src/codec/smp.c (issue 20 section 2): each test
 * generates the request an attacker would send, applies it as the apiserver does, and asserts
 * the answer (the error code and message, or success) and the peak memory the patch took,
 * counted by cJSON allocation hooks, against a small multiple of the document and the patch.
 * CPU time is printed, not asserted (valgrind runs these too): the work bound is what the
 * error asserts. Before the bounds, the copy case grew without limit (6 GB of RSS for a 1.2 MB
 * request) and the indexed cases walked ops x array length (seconds of CPU).
 */
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "codec/patch.h"
#include "codec/smp.h"

/* cJSON allocations in use and their peak, in bytes (malloc_usable_size). */
static long long mem_now, mem_peak;

static void *count_malloc(size_t n)
{
    void *p = malloc(n);

    if (p) {
        mem_now += (long long)malloc_usable_size(p);
        if (mem_now > mem_peak)
            mem_peak = mem_now;
    }
    return p;
}

static void count_free(void *p)
{
    if (p)
        mem_now -= (long long)malloc_usable_size(p);
    free(p);
}

static int setup(void **state)
{
    cJSON_Hooks hooks = {.malloc_fn = count_malloc, .free_fn = count_free};

    (void)state;
    codec_init(); /* once: the hooks below stay */
    cJSON_InitHooks(&hooks);
    return 0;
}

static int teardown(void **state)
{
    cJSON_Hooks hooks = {.malloc_fn = malloc, .free_fn = free};

    (void)state;
    cJSON_InitHooks(&hooks);
    return 0;
}

static cJSON *parse_buf(const struct strbuf *sb)
{
    struct codec_error err = {0};
    cJSON *v = NULL;

    if (json_parse(sb->buf, sb->len, NULL, &v, &err) != 0)
        fail_msg("json_parse: %s", err.msg);
    return v;
}

static double cpu_now(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One application's figures. */
struct run {
    int r;
    char msg[sizeof(((struct codec_error *)0)->msg)];
    long long peak;  /* bytes above what the inputs held */
    long long input; /* bytes the parsed document and patch hold */
    double cpu;
};

enum kind { JSON_PATCH, MERGE_PATCH, SMP };

static bool lookup(const char *path, const void *userdata, struct smp_list_meta *ret)
{
    (void)userdata;
    if (!strcmp(path, "a")) {
        *ret = (struct smp_list_meta){.merge = true, .merge_key = "k"};
        return true;
    }
    return false;
}

/* Parses doc and patch, applies patch as the apiserver does (10000 operations at most), and
 * measures; frees everything. */
static struct run apply(enum kind kind, const struct strbuf *doc, const struct strbuf *patch,
                        const char *name)
{
    struct codec_error err = {0};
    struct run run = {0};
    long long base;
    cJSON *d, *p;
    double t;

    mem_now = mem_peak = 0;
    d = parse_buf(doc);
    p = parse_buf(patch);
    run.input = mem_now;
    base = mem_peak = mem_now;
    t = cpu_now();
    if (kind == JSON_PATCH)
        run.r = json_patch_apply(&d, p, 10000, &err);
    else if (kind == MERGE_PATCH)
        run.r = merge_patch_apply(&d, p, &err);
    else
        run.r = strategic_merge_patch_apply(&d, p, lookup, NULL, &err);
    run.cpu = cpu_now() - t;
    run.peak = mem_peak - base;
    memcpy(run.msg, err.msg, sizeof(run.msg));
    cJSON_Delete(p);
    cJSON_Delete(d);
    print_message("%s: request %zu bytes, document %zu bytes: r=%d, %.3f s CPU, peak %lld bytes "
                  "above the inputs' %lld\n",
                  name, patch->len, doc->len, run.r, run.cpu, run.peak, run.input);
    return run;
}

/* Memory a patch may take beyond its inputs: a working copy of the document and what the
 * patch adds, a few times over. */
static void assert_peak_within(const struct run *run, long long factor)
{
    if (run->peak > factor * run->input + (1 << 20))
        fail_msg("peak %lld bytes, more than %lld x the inputs' %lld", run->peak, factor,
                 run->input);
}

/* What copies may add is bounded by PATCH_MAX_COPY_BYTES, whatever the request's size: its
 * text, and PATCH_COPY_ITEM_BYTES per item for what an item takes beyond it. */
static void assert_copy_peak_within(const struct run *run)
{
    if (run->peak > 2 * run->input + 4 * (long long)PATCH_MAX_COPY_BYTES)
        fail_msg("peak %lld bytes, more than 2 x the inputs' %lld + 4 x %u", run->peak, run->input,
                 PATCH_MAX_COPY_BYTES);
}

/* {"s": "<n x>"}: an object near the size limit, most of it one string. */
static void big_string_doc(struct strbuf *doc, size_t n)
{
    strbuf_addstr(doc, "{\"s\":\"");
    strbuf_grow(doc, n);
    for (size_t i = 0; i < n; i++)
        strbuf_addch(doc, 'x');
    strbuf_addstr(doc, "\"}");
}

/* {"a": [0, 0, ...]} with n elements. */
static void long_array_doc(struct strbuf *doc, size_t n)
{
    strbuf_addstr(doc, "{\"a\":[");
    for (size_t i = 0; i < n; i++)
        strbuf_addstr(doc, i ? ",0" : "0");
    strbuf_addstr(doc, "]}");
}

/* 10000 copies of a 1 MiB string: 10 GB unbounded. Go's json-patch stops at the accumulated
 * copy limit; so does this, at the third copy, before allocating it. */
static void test_copy_amplification(void **state)
{
    struct strbuf doc = STRBUF_INIT, patch = STRBUF_INIT;
    struct run run;

    (void)state;
    big_string_doc(&doc, 1u << 20);
    strbuf_addch(&patch, '[');
    for (int i = 0; i < 10000; i++)
        strbuf_addf(&patch, "%s{\"op\":\"copy\",\"from\":\"/s\",\"path\":\"/c%d\"}", i ? "," : "",
                    i);
    strbuf_addch(&patch, ']');
    run = apply(JSON_PATCH, &doc, &patch, "copy x10000 of 1 MiB");
    assert_int_equal(run.r, -EINVAL);
    assert_string_equal(run.msg, "operation 2 (copy): Unable to complete the copy, the "
                                 "accumulated size increase of copy is 3145830, exceeding the "
                                 "limit 3145728");
    assert_copy_peak_within(&run);
    strbuf_release(&doc);
    strbuf_release(&patch);
}

/* "copy" of the root into itself doubles the document each time: 2^k growth from k
 * operations. */
static void test_copy_doubling(void **state)
{
    struct strbuf doc = STRBUF_INIT, patch = STRBUF_INIT;
    struct run run;

    (void)state;
    long_array_doc(&doc, 1000);
    strbuf_addch(&patch, '[');
    for (int i = 0; i < 100; i++)
        strbuf_addf(&patch, "%s{\"op\":\"copy\",\"from\":\"\",\"path\":\"/a/-\"}", i ? "," : "");
    strbuf_addch(&patch, ']');
    run = apply(JSON_PATCH, &doc, &patch, "copy of the root x100");
    assert_int_equal(run.r, -EINVAL);
    assert_non_null(strstr(run.msg, "Unable to complete the copy"));
    assert_copy_peak_within(&run);
    strbuf_release(&doc);
    strbuf_release(&patch);
}

/* The same index at the end of a long array, 10000 times: a cursor makes each O(path), so the
 * patch succeeds where it walked ops x length (2e9 steps). */
static void test_far_index_repeated(void **state)
{
    struct strbuf doc = STRBUF_INIT, patch = STRBUF_INIT;
    struct run run;

    (void)state;
    long_array_doc(&doc, 200000);
    strbuf_addch(&patch, '[');
    for (int i = 0; i < 10000; i++)
        strbuf_addf(&patch, "%s{\"op\":\"%s\",\"path\":\"/a/199999\",\"value\":0}", i ? "," : "",
                    i % 2 ? "test" : "replace");
    strbuf_addch(&patch, ']');
    run = apply(JSON_PATCH, &doc, &patch, "test/replace /a/199999 x10000");
    assert_int_equal(run.r, 0);
    assert_peak_within(&run, 2);
    strbuf_release(&doc);
    strbuf_release(&patch);
}

/* Inserting at the front and reading the end: the end's cursor moves with the inserts. */
static void test_insert_front_read_end(void **state)
{
    struct strbuf doc = STRBUF_INIT, patch = STRBUF_INIT;
    struct run run;

    (void)state;
    long_array_doc(&doc, 200000);
    strbuf_addch(&patch, '[');
    for (int i = 0; i < 5000; i++)
        strbuf_addf(&patch,
                    "%s{\"op\":\"add\",\"path\":\"/a/0\",\"value\":1},"
                    "{\"op\":\"test\",\"path\":\"/a/%d\",\"value\":0}",
                    i ? "," : "", 200000 + i);
    strbuf_addch(&patch, ']');
    run = apply(JSON_PATCH, &doc, &patch, "add /a/0 + test /a/<last> x5000");
    assert_int_equal(run.r, 0);
    assert_peak_within(&run, 2);
    strbuf_release(&doc);
    strbuf_release(&patch);
}

/* What a diff sends: one operation per element, in order, in a long array of objects. */
static void test_sequential_elements(void **state)
{
    struct strbuf doc = STRBUF_INIT, patch = STRBUF_INIT;
    struct run run;

    (void)state;
    strbuf_addstr(&doc, "{\"a\":[");
    for (int i = 0; i < 20000; i++)
        strbuf_addf(&doc, "%s{\"k\":%d,\"v\":[0,1]}", i ? "," : "", i);
    strbuf_addstr(&doc, "]}");
    strbuf_addch(&patch, '[');
    for (int i = 0; i < 10000; i++)
        strbuf_addf(&patch, "%s{\"op\":\"replace\",\"path\":\"/a/%d/v/1\",\"value\":2}",
                    i ? "," : "", 10000 + i);
    strbuf_addch(&patch, ']');
    run = apply(JSON_PATCH, &doc, &patch, "replace /a/<i>/v/1 for 10000 consecutive i");
    assert_int_equal(run.r, 0);
    assert_peak_within(&run, 2);
    strbuf_release(&doc);
    strbuf_release(&patch);
}

/* A few places in turn: each has its cursor after the first visit. */
static void test_few_places_alternating(void **state)
{
    static const char *const idx[] = {"0", "66666", "133333", "199999"};
    struct strbuf doc = STRBUF_INIT, patch = STRBUF_INIT;
    struct run run;

    (void)state;
    long_array_doc(&doc, 200000);
    strbuf_addch(&patch, '[');
    for (int i = 0; i < 10000; i++)
        strbuf_addf(&patch, "%s{\"op\":\"test\",\"path\":\"/a/%s\",\"value\":0}", i ? "," : "",
                    idx[(i % 2) * 2 + (i / 2) % 2]);
    strbuf_addch(&patch, ']');
    run = apply(JSON_PATCH, &doc, &patch, "test /a/{0,133333,66666,199999} x10000");
    assert_int_equal(run.r, 0);
    strbuf_release(&doc);
    strbuf_release(&patch);
}

/* Indices scattered over a long array defeat the cursors: the work bound answers, in well
 * under the seconds the walk would take. */
static void test_far_indices_scattered(void **state)
{
    struct strbuf doc = STRBUF_INIT, patch = STRBUF_INIT;
    struct run run;

    (void)state;
    long_array_doc(&doc, 200000);
    strbuf_addch(&patch, '[');
    for (int i = 0; i < 10000; i++)
        strbuf_addf(&patch, "%s{\"op\":\"test\",\"path\":\"/a/%u\",\"value\":0}", i ? "," : "",
                    (unsigned)(((uint64_t)i * 7919u * 104729u) % 200000u));
    strbuf_addch(&patch, ']');
    run = apply(JSON_PATCH, &doc, &patch, "test /a/<scattered> x10000");
    assert_int_equal(run.r, -E2BIG);
    assert_non_null(strstr(run.msg, "(test): the patch takes more than"));
    assert_non_null(strstr(run.msg, "split it into smaller patches"));
    assert_peak_within(&run, 2);
    strbuf_release(&doc);
    strbuf_release(&patch);
}

/* The last member of a very wide object, 10000 times: member lookups walk the object. */
static void test_wide_object(void **state)
{
    struct strbuf doc = STRBUF_INIT, patch = STRBUF_INIT;
    struct run run;

    (void)state;
    strbuf_addch(&doc, '{');
    for (int i = 0; i < 100000; i++)
        strbuf_addf(&doc, "%s\"m%d\":0", i ? "," : "", i);
    strbuf_addch(&doc, '}');
    strbuf_addch(&patch, '[');
    for (int i = 0; i < 10000; i++)
        strbuf_addf(&patch, "%s{\"op\":\"test\",\"path\":\"/m99999\",\"value\":0}", i ? "," : "");
    strbuf_addch(&patch, ']');
    run = apply(JSON_PATCH, &doc, &patch, "test /<last of 100000 members> x10000");
    assert_int_equal(run.r, -E2BIG);
    assert_non_null(strstr(run.msg, "the patch takes more than"));
    strbuf_release(&doc);
    strbuf_release(&patch);
}

/* "test" of a wide object against {}: the comparison stops at the value's size. */
static void test_test_wide_against_small(void **state)
{
    struct strbuf doc = STRBUF_INIT, patch = STRBUF_INIT;
    struct run run;

    (void)state;
    strbuf_addstr(&doc, "{\"o\":{");
    for (int i = 0; i < 100000; i++)
        strbuf_addf(&doc, "%s\"m%d\":0", i ? "," : "", i);
    strbuf_addstr(&doc, "}}");
    strbuf_addstr(&patch, "[{\"op\":\"test\",\"path\":\"/o\",\"value\":{}}");
    for (int i = 1; i < 10000; i++)
        strbuf_addstr(&patch, ",{\"op\":\"test\",\"path\":\"/o\",\"value\":{\"m0\":0}}");
    strbuf_addch(&patch, ']');
    run = apply(JSON_PATCH, &doc, &patch, "test /o (100000 members) against {} x10000");
    assert_int_equal(run.r, -ECANCELED);
    assert_string_equal(run.msg, "operation 0 (test): testing value \"/o\" failed");
    strbuf_release(&doc);
    strbuf_release(&patch);
}

/* A merge patch cannot copy: the result is at most the document and the patch. Wide objects
 * are hashed, so it is linear too. */
static void test_merge_patch_wide(void **state)
{
    struct strbuf doc = STRBUF_INIT, patch = STRBUF_INIT;
    struct run run;

    (void)state;
    strbuf_addch(&doc, '{');
    for (int i = 0; i < 100000; i++)
        strbuf_addf(&doc, "%s\"m%d\":{\"x\":%d}", i ? "," : "", i, i);
    strbuf_addch(&doc, '}');
    strbuf_addch(&patch, '{');
    for (int i = 0; i < 100000; i++)
        strbuf_addf(&patch, "%s\"m%d\":{\"y\":\"%d\"}", i ? "," : "", 199999 - i * 2, i);
    strbuf_addch(&patch, '}');
    run = apply(MERGE_PATCH, &doc, &patch, "merge patch, 100000 members into 100000");
    assert_int_equal(run.r, 0);
    assert_peak_within(&run, 2);
    strbuf_release(&doc);
    strbuf_release(&patch);
}

/* A strategic merge patch of a long merge list with the order directive: hashed, sorted. */
static void test_smp_long_list(void **state)
{
    struct strbuf doc = STRBUF_INIT, patch = STRBUF_INIT;
    struct run run;

    (void)state;
    strbuf_addstr(&doc, "{\"a\":[");
    for (int i = 0; i < 50000; i++)
        strbuf_addf(&doc, "%s{\"k\":\"e%d\",\"v\":%d}", i ? "," : "", i, i);
    strbuf_addstr(&doc, "]}");
    strbuf_addstr(&patch, "{\"$setElementOrder/a\":[");
    for (int i = 0; i < 50000; i++)
        strbuf_addf(&patch, "%s{\"k\":\"e%d\"}", i ? "," : "", 49999 - i);
    strbuf_addstr(&patch, "],\"a\":[");
    for (int i = 0; i < 50000; i++)
        strbuf_addf(&patch, "%s{\"k\":\"e%d\",\"w\":1}", i ? "," : "", 49999 - i);
    strbuf_addstr(&patch, "]}");
    run = apply(SMP, &doc, &patch, "strategic merge patch, 50000 list elements reordered");
    assert_int_equal(run.r, 0);
    assert_peak_within(&run, 3);
    strbuf_release(&doc);
    strbuf_release(&patch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_amplification),
        cmocka_unit_test(test_copy_doubling),
        cmocka_unit_test(test_far_index_repeated),
        cmocka_unit_test(test_insert_front_read_end),
        cmocka_unit_test(test_sequential_elements),
        cmocka_unit_test(test_few_places_alternating),
        cmocka_unit_test(test_far_indices_scattered),
        cmocka_unit_test(test_wide_object),
        cmocka_unit_test(test_test_wide_against_small),
        cmocka_unit_test(test_merge_patch_wide),
        cmocka_unit_test(test_smp_long_list),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
