/*
 * Tests for base/strbuf: the git-style growable buffer every module builds strings with. The
 * invariants checked are the ones strbuf.h promises: always NUL-terminated, buf never NULL,
 * release/detach re-initialise, and JSON string escaping as RFC 8259 requires.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "base/strbuf.h"

static void test_init_is_empty(void **state)
{
    struct strbuf a = STRBUF_INIT, b;
    (void)state;

    strbuf_init(&b);
    assert_int_equal(a.len, 0);
    assert_int_equal(a.alloc, 0);
    assert_non_null(a.buf);
    assert_string_equal(a.buf, "");
    assert_int_equal(b.len, 0);
    assert_string_equal(b.buf, "");
    /* Releasing a never-grown buffer is fine and leaves it usable. */
    strbuf_release(&a);
    assert_string_equal(a.buf, "");
    strbuf_release(&b);
}

static void test_add_family(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    (void)state;

    strbuf_addstr(&sb, "abc");
    strbuf_addch(&sb, '-');
    strbuf_add(&sb, "xyz123", 3);
    strbuf_add(&sb, "ignored", 0);
    strbuf_addf(&sb, "%d/%s/%03u", -7, "q", 5u);
    assert_string_equal(sb.buf, "abc-xyz-7/q/005");
    assert_int_equal(sb.len, strlen("abc-xyz-7/q/005"));
    assert_true(sb.alloc > sb.len);
    strbuf_release(&sb);
    assert_int_equal(sb.len, 0);
    assert_int_equal(sb.alloc, 0);
    assert_string_equal(sb.buf, "");
}

/* Embedded NUL bytes are data: len counts them and the terminator follows them. */
static void test_add_binary(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    (void)state;

    strbuf_add(&sb, "a\0b", 3);
    assert_int_equal(sb.len, 3);
    assert_memory_equal(sb.buf, "a\0b", 4);
    strbuf_release(&sb);
}

/* addf output longer than the first growth step must be written in full. */
static void test_addf_grows(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    char big[1000];
    (void)state;

    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    strbuf_addstr(&sb, "<");
    strbuf_addf(&sb, "%s|%s", big, big);
    strbuf_addch(&sb, '>');
    assert_int_equal(sb.len, 1 + 999 + 1 + 999 + 1);
    assert_int_equal(sb.buf[0], '<');
    assert_int_equal(sb.buf[1000], '|');
    assert_int_equal(sb.buf[sb.len - 1], '>');
    assert_int_equal(sb.buf[sb.len], '\0');
    assert_int_equal(strlen(sb.buf), sb.len);
    strbuf_release(&sb);
}

/* Many single-byte appends cross several reallocations without losing data. */
static void test_many_appends(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    (void)state;

    for (int i = 0; i < 10000; i++)
        strbuf_addch(&sb, (char)('a' + i % 26));
    assert_int_equal(sb.len, 10000);
    for (int i = 0; i < 10000; i++)
        assert_int_equal(sb.buf[i], 'a' + i % 26);
    assert_int_equal(sb.buf[10000], '\0');
    strbuf_release(&sb);
}

static void test_reset_setlen(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    size_t alloc;
    (void)state;

    strbuf_reset(&sb); /* on an empty buffer: nothing to do */
    assert_string_equal(sb.buf, "");
    strbuf_addstr(&sb, "hello world");
    alloc = sb.alloc;
    strbuf_setlen(&sb, 5);
    assert_string_equal(sb.buf, "hello");
    assert_int_equal(sb.len, 5);
    strbuf_reset(&sb);
    assert_string_equal(sb.buf, "");
    assert_int_equal(sb.len, 0);
    assert_int_equal(sb.alloc, alloc); /* reset keeps the allocation */
    strbuf_addstr(&sb, "again");
    assert_string_equal(sb.buf, "again");
    strbuf_release(&sb);
}

static void test_grow(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    (void)state;

    strbuf_grow(&sb, 100);
    assert_true(sb.alloc >= 101);
    assert_int_equal(sb.len, 0);
    assert_string_equal(sb.buf, "");
    strbuf_addstr(&sb, "x");
    strbuf_grow(&sb, 0);
    assert_string_equal(sb.buf, "x");
    strbuf_release(&sb);
}

static void test_detach(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    size_t len = 99;
    char *p;
    (void)state;

    /* Detaching an empty buffer still hands out a free()-able "". */
    p = strbuf_detach(&sb, &len);
    assert_non_null(p);
    assert_string_equal(p, "");
    assert_int_equal(len, 0);
    free(p);

    strbuf_addstr(&sb, "payload");
    p = strbuf_detach(&sb, &len);
    assert_string_equal(p, "payload");
    assert_int_equal(len, 7);
    /* sb is re-initialised and independent of p. */
    assert_int_equal(sb.len, 0);
    assert_int_equal(sb.alloc, 0);
    assert_string_equal(sb.buf, "");
    strbuf_addstr(&sb, "other");
    assert_string_equal(p, "payload");
    free(p);
    p = strbuf_detach(&sb, NULL);
    assert_string_equal(p, "other");
    free(p);
}

struct json_row {
    const char *in;
    const char *out;
};

/* RFC 8259 section 7: quote, backslash and control characters must be escaped; the short forms
 * \n \r \t are used where they exist, \u00XX (lower-case hex) otherwise. Everything else,
 * UTF-8 included, is copied as is. */
static const struct json_row json_rows[] = {
    {"", "\"\""},
    {"plain", "\"plain\""},
    {"a\"b", "\"a\\\"b\""},
    {"back\\slash", "\"back\\\\slash\""},
    {"line\nfeed", "\"line\\nfeed\""},
    {"cr\rtab\t", "\"cr\\rtab\\t\""},
    {"\x01", "\"\\u0001\""},
    {"\x08\x0c", "\"\\u0008\\u000c\""},
    {"\x1f", "\"\\u001f\""},
    {" ~\x7f", "\" ~\x7f\""},
    {"a/b", "\"a/b\""},
    {"caf\xc3\xa9 \xe6\xb7\xb7", "\"caf\xc3\xa9 \xe6\xb7\xb7\""},
    {"{\"k\":[1]}", "\"{\\\"k\\\":[1]}\""},
};

static void test_add_json_str(void **state)
{
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(json_rows); i++) {
        struct strbuf sb = STRBUF_INIT;
        strbuf_addstr(&sb, "=");
        strbuf_add_json_str(&sb, json_rows[i].in);
        if (strcmp(sb.buf + 1, json_rows[i].out) != 0)
            fail_msg("row %zu: got %s want %s", i, sb.buf + 1, json_rows[i].out);
        assert_int_equal(sb.buf[0], '=');
        strbuf_release(&sb);
    }
}

static void vaddf_helper(struct strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void vaddf_helper(struct strbuf *sb, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    strbuf_vaddf(sb, fmt, ap);
    va_end(ap);
}

/* The RFC 4648 section 10 test vectors, and bytes that are not text. */
static void test_add_base64(void **state)
{
    static const char *const vec[][2] = {
        {"", ""},
        {"f", "Zg=="},
        {"fo", "Zm8="},
        {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="},
        {"fooba", "Zm9vYmE="},
        {"foobar", "Zm9vYmFy"},
    };
    struct strbuf sb = STRBUF_INIT;
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(vec); i++) {
        strbuf_reset(&sb);
        strbuf_add_base64(&sb, vec[i][0], strlen(vec[i][0]));
        assert_string_equal(sb.buf, vec[i][1]);
    }
    strbuf_reset(&sb);
    strbuf_add_base64(&sb, "\xff\xfe\x00", 3);
    assert_string_equal(sb.buf, "//4A");
    strbuf_release(&sb);
}

static void test_vaddf(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    (void)state;

    vaddf_helper(&sb, "%s=%ld", "n", -42L);
    vaddf_helper(&sb, "%s", "");
    vaddf_helper(&sb, "%c", '!');
    assert_string_equal(sb.buf, "n=-42!");
    strbuf_release(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_is_empty), cmocka_unit_test(test_add_family),
        cmocka_unit_test(test_add_binary),    cmocka_unit_test(test_addf_grows),
        cmocka_unit_test(test_many_appends),  cmocka_unit_test(test_reset_setlen),
        cmocka_unit_test(test_grow),          cmocka_unit_test(test_detach),
        cmocka_unit_test(test_add_json_str),  cmocka_unit_test(test_add_base64),
        cmocka_unit_test(test_vaddf),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
