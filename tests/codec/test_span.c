/*
 * Tests for src/codec/span.c: json_member_span() finds members of compact and spaced objects,
 * skips nested values and strings holding brackets, quotes and escapes, and answers -ENOENT or
 * -EINVAL (never a wrong span) for absent keys and malformed or truncated input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "codec/codec.h"

/* The value of key in in, as a string, or NULL with *ret_r set. */
static const char *span(const char *in, const char *key, int *ret_r)
{
    static char out[256];
    size_t s = 0, e = 0;
    int r = json_member_span(in, strlen(in), key, &s, &e);

    *ret_r = r;
    if (r < 0)
        return NULL;
    assert_true(s < e && e <= strlen(in) && e - s < sizeof(out));
    memcpy(out, in + s, e - s);
    out[e - s] = '\0';
    return out;
}

static void test_finds_members(void **state)
{
    static const char obj[] =
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"labels\":"
        "{\"x\":\"}\"}},\"spec\":{\"list\":[1,[2,{\"k\":\"]\"}],\"q\\\"uote\"],\"n\":-1.5e3,"
        "\"t\":true,\"z\":null}}";
    int r;

    (void)state;
    assert_string_equal(span(obj, "apiVersion", &r), "\"v1\"");
    assert_string_equal(span(obj, "kind", &r), "\"Pod\"");
    assert_string_equal(span(obj, "metadata", &r), "{\"name\":\"a\",\"labels\":{\"x\":\"}\"}}");
    assert_string_equal(span(obj, "spec", &r),
                        "{\"list\":[1,[2,{\"k\":\"]\"}],\"q\\\"uote\"],\"n\":-1.5e3,\"t\":true,"
                        "\"z\":null}");
    /* Only top-level members count. */
    assert_null(span(obj, "name", &r));
    assert_int_equal(r, -ENOENT);
    assert_null(span(obj, "lis", &r));
    assert_int_equal(r, -ENOENT);
}

static void test_scalars_and_spaces(void **state)
{
    static const char obj[] = " { \"a\" : 1 , \"b\":\"s\\\\\" ,\n\"c\" : [ ] ,\"d\":false } ";
    int r;

    (void)state;
    assert_string_equal(span(obj, "a", &r), "1");
    assert_string_equal(span(obj, "b", &r), "\"s\\\\\"");
    assert_string_equal(span(obj, "c", &r), "[ ]");
    assert_string_equal(span(obj, "d", &r), "false");
    assert_null(span("{}", "a", &r));
    assert_int_equal(r, -ENOENT);
    assert_null(span(" { } ", "a", &r));
    assert_int_equal(r, -ENOENT);
}

static void test_malformed(void **state)
{
    static const char *const bad[] = {
        "",
        "[]",
        "\"a\"",
        "{",
        "{\"a\"",
        "{\"a\":",
        "{\"a\" 1}",
        "{a:1}",
        "{\"a\":1 \"b\":2}",
        "{\"a\":{\"b\":1}",
        "{\"a\":\"unterminated}",
        "{\"a\":]}",
        "{\"a\":{]]}",
        "{\"a\":1,",
    };
    int r;

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        assert_null(span(bad[i], "b", &r));
        assert_int_equal(r, -EINVAL);
    }
    /* A member found before the damage is still found: only what is walked is checked. */
    assert_string_equal(span("{\"a\":1,\"b\":", "a", &r), "1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finds_members),
        cmocka_unit_test(test_scalars_and_spaces),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
