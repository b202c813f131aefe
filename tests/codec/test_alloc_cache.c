/*
 * codec_alloc_cache(): cJSON's small blocks are kept per thread and served again, decoding stays
 * exact with recycled blocks, a thread's cache goes with the thread (ASan's and valgrind's leak
 * checks see it freed), and the main thread's with codec_alloc_cache_release().
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"

static const char doc[] =
    "{\"status\":{\"podsMetric\":[{\"namespace\":\"default\",\"name\":\"web-0\","
    "\"podUsage\":{\"resources\":{\"cpu\":\"1200m\",\"memory\":\"2Gi\"}}},"
    "{\"namespace\":\"default\",\"name\":\"a-pod-with-a-rather-longer-name-than-most\","
    "\"podUsage\":{\"resources\":{\"cpu\":\"7m\",\"memory\":\"64Mi\"}}}],"
    "\"updateTime\":\"2026-11-24T07:00:00Z\"}}";

/* Decodes and prints doc n times; every print must be doc itself. */
static void round_trips(int n)
{
    for (int i = 0; i < n; i++) {
        struct strbuf out = STRBUF_INIT;
        cJSON *o = NULL;

        assert_int_equal(json_parse(doc, sizeof(doc) - 1, NULL, &o, NULL), 0);
        assert_int_equal(json_print(o, &out), 0);
        assert_string_equal(out.buf, doc);
        cJSON_Delete(o);
        strbuf_release(&out);
    }
}

/*
 * Freed 24-byte blocks (glibc's smallest usable size, and the requested size under ASan and
 * valgrind) serve the next requests of up to 24 bytes on this thread, last freed first. Eight of
 * them: glibc's own cache would hold only the first seven freed and hand out the seventh first;
 * ASan and valgrind would hand out none of them.
 */
static void test_reuse(void **state)
{
    void *p[8], *q, *r;

    (void)state;
    codec_alloc_cache(1 << 20);
    for (size_t i = 0; i < ARRAY_SIZE(p); i++)
        assert_non_null(p[i] = cJSON_malloc(24));
    for (size_t i = 0; i < ARRAY_SIZE(p); i++)
        cJSON_free(p[i]);
    for (size_t i = ARRAY_SIZE(p); i-- > 0;) {
        q = cJSON_malloc(20);
        assert_ptr_equal(q, p[i]);
    }
    for (size_t i = 0; i + 1 < ARRAY_SIZE(p); i++)
        cJSON_free(p[i]);
    q = p[ARRAY_SIZE(p) - 1];
    /* Larger than every class: not from the cache. */
    r = cJSON_malloc(4096);
    assert_non_null(r);
    cJSON_free(r);
    cJSON_free(q);
    round_trips(50);
    codec_alloc_cache_release();
    /* Released: the next free starts a new cache, which the release at the end frees. */
    round_trips(2);
    codec_alloc_cache_release();
    codec_alloc_cache_release(); /* idempotent */
}

/* A cap smaller than one block keeps nothing: a freed block goes back to malloc. */
static void test_cap(void **state)
{
    void *p;

    (void)state;
    codec_alloc_cache(16);
    p = cJSON_malloc(24);
    assert_non_null(p);
    cJSON_free(p);
    round_trips(5);
    codec_alloc_cache_release();
    codec_alloc_cache(0);
    round_trips(5);
}

static void *worker(void *arg)
{
    (void)arg;
    round_trips(200);
    return NULL; /* the cache is freed by the thread-exit destructor */
}

static void test_threads(void **state)
{
    pthread_t t[4];

    (void)state;
    codec_alloc_cache(64 << 10);
    for (size_t i = 0; i < ARRAY_SIZE(t); i++)
        assert_int_equal(pthread_create(&t[i], NULL, worker, NULL), 0);
    for (size_t i = 0; i < ARRAY_SIZE(t); i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    codec_alloc_cache(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reuse),
        cmocka_unit_test(test_cap),
        cmocka_unit_test(test_threads),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
