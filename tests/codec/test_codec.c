/*
 * Tests for src/codec/codec.c: the shared plumbing under the JSON and YAML codecs (number text,
 * error positions, UTF-8 checks, the duplicate-key map, the allocation hook, bounded file
 * reads). Expectations are worked out by hand from the rules in codec-int.h.
 */
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec-int.h"
#include "codec/codec.h"

static void test_format_number(void **state)
{
    static const struct {
        double d;
        const char *want;
    } cases[] = {
        {0.0, "0"},
        {-0.0, "0"},
        {1.0, "1"},
        {-42.0, "-42"},
        {1e15, "1000000000000000"},                 /* cJSON would print 1e+15 */
        {9007199254740992.0, "9007199254740992"},   /* 2^53: still an integer */
        {-9007199254740992.0, "-9007199254740992"}, /* -2^53 */
        {9007199254740994.0, "9007199254740994"},   /* past 2^53: %.16g, no exponent below 1e16 */
        {0.1, "0.1"},
        {0.1 + 0.2, "0.30000000000000004"}, /* needs all 17 digits */
        {1.5, "1.5"},
        {-1.25, "-1.25"},
        {2.5e-8, "2.5e-08"},
        {1e21, "1e+21"},
        {1e100, "1e+100"},
        {123456789.125, "123456789.125"},
        {NAN, "null"},
        {INFINITY, "null"},
        {-INFINITY, "null"},
    };
    char buf[CODEC_NUMBER_MAX];
    size_t i, n;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        n = codec__format_number(cases[i].d, buf);
        assert_string_equal(buf, cases[i].want);
        assert_int_equal(n, strlen(cases[i].want));
    }
}

static void test_position(void **state)
{
    static const struct {
        const char *buf;
        size_t off;
        int line, column;
    } cases[] = {
        {"", 0, 1, 1},
        {"abc", 0, 1, 1},
        {"abc", 1, 1, 2},
        {"abc", 3, 1, 4},       /* end of input: just after the last character */
        {"abc", 99, 1, 4},      /* past the end clamps to the end */
        {"a\nbc", 3, 2, 2},     /* 'c' */
        {"a\nbc", 2, 2, 1},     /* 'b' */
        {"a\n", 2, 1, 2},       /* end after a trailing newline: still line 1 */
        {"a\n\n", 3, 2, 1},     /* only one trailing newline is ignored */
        {"\xc3\xa9x", 2, 1, 2}, /* columns count characters: 'x' after 'é' */
        {"\xc3\xa9\nx", 3, 2, 1},
    };
    size_t i;
    int line, column;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        codec__position(cases[i].buf, strlen(cases[i].buf), cases[i].off, &line, &column);
        assert_int_equal(line, cases[i].line);
        assert_int_equal(column, cases[i].column);
    }
}

static void test_utf8(void **state)
{
    static const struct {
        const char *s;
        size_t bad; /* offset of the first invalid byte, or strlen(s) */
    } cases[] = {
        {"plain ascii", 11},
        {"\xc3\xa9", 2},         /* é */
        {"\xe2\x82\xac", 3},     /* € */
        {"\xf0\x9f\x98\x80", 4}, /* U+1F600 */
        {"a\xff", 1},            /* never valid */
        {"ab\xc3", 2},           /* truncated */
        {"\xc3\x28", 0},         /* bad continuation */
        {"\xc0\x80", 0},         /* overlong NUL */
        {"\xe0\x80\xaf", 0},     /* overlong '/' */
        {"x\xed\xa0\x80", 1},    /* UTF-16 surrogate D800 */
        {"\xf4\x90\x80\x80", 0}, /* beyond U+10FFFF */
        {"\xef\xbb\xbf"
         "ok",
         5}, /* a BOM is valid UTF-8 */
    };
    uint32_t cp;
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(cases); i++)
        assert_int_equal(codec__utf8_check(cases[i].s, strlen(cases[i].s)), cases[i].bad);
    assert_int_equal(codec__utf8_decode((const unsigned char *)"\xe2\x82\xac", 3, &cp), 3);
    assert_int_equal(cp, 0x20ac);
    assert_int_equal(codec__utf8_decode((const unsigned char *)"\xe2\x82\xac", 2, &cp), 0);
}

static void test_preview(void **state)
{
    static const struct {
        const char *s;
        const char *want;
    } cases[] = {
        {"abc", "\"abc\""},
        {"", "\"\""},
        {"a\"b\\c", "\"a\\\"b\\\\c\""},
        {"tab\there\n", "\"tab\\x09here\\x0a\""},
        {"\xc3\xa9t\xc3\xa9", "\"\xc3\xa9t\xc3\xa9\""},
        {"bad\xff", "\"bad\\xff\""},
        {"0123456789012345678901234567890123456789012345678901234567890123456789",
         "\"012345678901234567890123456789012345678901234567890123456789\"..."},
    };
    char buf[128];
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        codec__preview(buf, sizeof(buf), cases[i].s, strlen(cases[i].s));
        assert_string_equal(buf, cases[i].want);
    }
}

static void test_strmap(void **state)
{
    struct codec_strmap m = {0};
    char keys[1000][8];
    int one = 1, two = 2;
    void **slot;
    size_t i;

    (void)state;
    codec_init();
    assert_null(codec__strmap_find(&m, "a"));
    assert_int_equal(codec__strmap_add(&m, "a", &one), 0);
    assert_int_equal(codec__strmap_add(&m, "b", &two), 0);
    assert_int_equal(codec__strmap_add(&m, "a", &two), 1); /* present: unchanged */
    slot = codec__strmap_find(&m, "a");
    assert_non_null(slot);
    assert_ptr_equal(*slot, &one);
    *slot = &two;
    assert_ptr_equal(*codec__strmap_find(&m, "a"), &two);
    assert_null(codec__strmap_find(&m, "c"));
    assert_null(codec__strmap_find(&m, ""));
    assert_int_equal(codec__strmap_add(&m, "", NULL), 0);
    assert_non_null(codec__strmap_find(&m, ""));

    /* Growing past the first table keeps every key. */
    for (i = 0; i < ARRAY_SIZE(keys); i++) {
        (void)snprintf(keys[i], sizeof(keys[i]), "k%zu", i);
        assert_int_equal(codec__strmap_add(&m, keys[i], keys[i]), 0);
    }
    assert_int_equal(m.n, ARRAY_SIZE(keys) + 3);
    for (i = 0; i < ARRAY_SIZE(keys); i++) {
        assert_int_equal(codec__strmap_add(&m, keys[i], NULL), 1);
        assert_ptr_equal(*codec__strmap_find(&m, keys[i]), keys[i]);
    }
    codec__strmap_release(&m);
    assert_null(codec__strmap_find(&m, "a"));
    codec__strmap_release(&m);

    /* A failed grow reports -ENOMEM and leaves the map usable. */
    alloc_fail_after(1);
    assert_int_equal(codec__strmap_add(&m, "x", NULL), -ENOMEM);
    alloc_fail_after(0);
    assert_int_equal(codec__strmap_add(&m, "x", NULL), 0);
    codec__strmap_release(&m);
}

static void test_init_installs_hooks(void **state)
{
    cJSON *o;

    (void)state;
    codec_init();
    codec_init(); /* idempotent */
    alloc_fail_after(1);
    o = cJSON_CreateObject();
    assert_int_equal(alloc_injected(), 1);
    alloc_fail_after(0);
    assert_null(o);
    o = cJSON_CreateObject();
    assert_non_null(o);
    cJSON_Delete(o);
}

static void write_file(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    assert_int_equal(close(fd), 0);
}

static void test_read_file(void **state)
{
    char dir[] = "/tmp/koord-codec-XXXXXX", path[64], big[10000];
    struct strbuf sb = STRBUF_INIT;

    (void)state;
    assert_non_null(mkdtemp(dir));
    (void)snprintf(path, sizeof(path), "%s/f", dir);

    write_file(path, "hello\n", 6);
    strbuf_addstr(&sb, "pre:");
    assert_int_equal(codec_read_file(path, 100, &sb), 0);
    assert_string_equal(sb.buf, "pre:hello\n"); /* appends */
    assert_int_equal(sb.len, 10);

    /* Exactly max_bytes is fine; one byte more is -E2BIG and out is left as it was. */
    strbuf_reset(&sb);
    assert_int_equal(codec_read_file(path, 6, &sb), 0);
    assert_int_equal(sb.len, 6);
    strbuf_reset(&sb);
    strbuf_addstr(&sb, "keep");
    assert_int_equal(codec_read_file(path, 5, &sb), -E2BIG);
    assert_string_equal(sb.buf, "keep");
    assert_int_equal(codec_read_file(path, 0, &sb), -E2BIG);

    /* Larger than one read chunk. */
    memset(big, 'x', sizeof(big));
    write_file(path, big, sizeof(big));
    strbuf_reset(&sb);
    assert_int_equal(codec_read_file(path, sizeof(big), &sb), 0);
    assert_int_equal(sb.len, sizeof(big));
    assert_memory_equal(sb.buf, big, sizeof(big));
    strbuf_reset(&sb);
    assert_int_equal(codec_read_file(path, sizeof(big) - 1, &sb), -E2BIG);
    assert_int_equal(sb.len, 0);

    /* Empty file. */
    write_file(path, "", 0);
    assert_int_equal(codec_read_file(path, 0, &sb), 0);
    assert_int_equal(sb.len, 0);

    assert_int_equal(codec_read_file(dir, 100, &sb), -EISDIR);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(codec_read_file(path, 100, &sb), -ENOENT);
    assert_int_equal(rmdir(dir), 0);
    strbuf_release(&sb);
}

static void test_default_limits(void **state)
{
    (void)state;
    assert_int_equal(codec_default_limits.max_bytes, 32 * 1024 * 1024);
    assert_int_equal(codec_default_limits.max_depth, 100);
    assert_int_equal(codec_default_limits.max_nodes, 4 * 1024 * 1024);
    assert_int_equal(codec_default_limits.max_docs, 10000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_number), cmocka_unit_test(test_position),
        cmocka_unit_test(test_utf8),          cmocka_unit_test(test_preview),
        cmocka_unit_test(test_strmap),        cmocka_unit_test(test_init_installs_hooks),
        cmocka_unit_test(test_read_file),     cmocka_unit_test(test_default_limits),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
