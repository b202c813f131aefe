/*
 * Tests for base/parse: whole-string number parsing, the checked replacement for the banned
 * atoi() family. Every row is worked out by hand from the header's contract: the whole string
 * must be the number (no leading or trailing bytes of any kind, whitespace included), a value
 * out of range is -ERANGE, anything else malformed is -EINVAL, and *ret is untouched on error.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"

struct i64_row {
    const char *in;
    int r;
    int64_t v;
};

static const struct i64_row i64_rows[] = {
    {"0", 0, 0},
    {"-0", 0, 0},
    {"7", 0, 7},
    {"+7", 0, 7},
    {"-42", 0, -42},
    {"007", 0, 7}, /* base 10 always: a leading zero is not octal */
    {"9223372036854775807", 0, INT64_MAX},
    {"-9223372036854775808", 0, INT64_MIN},
    {"9223372036854775808", -ERANGE, 0},
    {"-9223372036854775809", -ERANGE, 0},
    {"99999999999999999999999", -ERANGE, 0},
    {"", -EINVAL, 0},
    {"-", -EINVAL, 0},
    {"+", -EINVAL, 0},
    {"abc", -EINVAL, 0},
    {"12a", -EINVAL, 0},
    {"1.0", -EINVAL, 0},
    {"1e3", -EINVAL, 0},
    {"0x10", -EINVAL, 0},
    {"1 ", -EINVAL, 0},
    {" 1", -EINVAL, 0},
    {"\t1", -EINVAL, 0},
    {"\n1", -EINVAL, 0},
    /* strtoll() skips every isspace() byte; the whole-string rule rejects them all. */
    {"\r1", -EINVAL, 0},
    {"\v1", -EINVAL, 0},
    {"\f1", -EINVAL, 0},
    {"1\n", -EINVAL, 0},
    {"--1", -EINVAL, 0},
    {"+-1", -EINVAL, 0},
};

static void test_parse_i64(void **state)
{
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(i64_rows); i++) {
        int64_t v = 12345;
        int r = parse_i64(i64_rows[i].in, &v);
        if (r != i64_rows[i].r)
            fail_msg("row %zu \"%s\": r=%d want %d", i, i64_rows[i].in, r, i64_rows[i].r);
        if (r == 0)
            assert_int_equal(v, i64_rows[i].v);
        else
            assert_int_equal(v, 12345); /* untouched on failure */
    }
    {
        int64_t v = 1;
        assert_int_equal(parse_i64(NULL, &v), -EINVAL);
        assert_int_equal(v, 1);
    }
}

struct u32_row {
    const char *in;
    int r;
    uint32_t v;
};

static const struct u32_row u32_rows[] = {
    {"0", 0, 0},
    {"1", 0, 1},
    {"+1", 0, 1},
    {"4294967295", 0, UINT32_MAX},
    {"4294967296", -ERANGE, 0},
    {"99999999999999999999", -ERANGE, 0},
    {"-1", -EINVAL, 0},
    {"-0", -EINVAL, 0}, /* no sign tricks: any minus is refused */
    {"", -EINVAL, 0},
    {"1k", -EINVAL, 0},
    {" 1", -EINVAL, 0},
    {"\r1", -EINVAL, 0},
};

static void test_parse_u32(void **state)
{
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(u32_rows); i++) {
        uint32_t v = 777;
        int r = parse_u32(u32_rows[i].in, &v);
        if (r != u32_rows[i].r)
            fail_msg("row %zu \"%s\": r=%d want %d", i, u32_rows[i].in, r, u32_rows[i].r);
        assert_int_equal(v, r == 0 ? u32_rows[i].v : 777);
    }
    {
        uint32_t v = 3;
        assert_int_equal(parse_u32(NULL, &v), -EINVAL);
        assert_int_equal(v, 3);
    }
}

struct dbl_row {
    const char *in;
    int r; /* 1: any negative code */
    double v;
};

static const struct dbl_row dbl_rows[] = {
    {"0", 0, 0},           {"1.5", 0, 1.5},       {"-2.25", 0, -2.25},    {"+0.5", 0, 0.5},
    {".5", 0, 0.5},        {"5.", 0, 5},          {"1e3", 0, 1000},       {"2.5E-1", 0, 0.25},
    {"0.29", 0, 0.29},     {"1e400", -ERANGE, 0}, {"-1e400", -ERANGE, 0}, {"inf", 1, 0},
    {"-Infinity", 1, 0},   {"nan", 1, 0},         {"", -EINVAL, 0},       {"abc", -EINVAL, 0},
    {"1.5x", -EINVAL, 0},  {"1,5", -EINVAL, 0},   {"1.5 ", -EINVAL, 0},   {" 1.5", -EINVAL, 0},
    {"\t1.5", -EINVAL, 0}, {"\r1.5", -EINVAL, 0}, {"\v1.5", -EINVAL, 0},  {"\f1.5", -EINVAL, 0},
};

static void test_parse_double(void **state)
{
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(dbl_rows); i++) {
        double v = 9.75;
        int r = parse_double(dbl_rows[i].in, &v);
        bool ok = dbl_rows[i].r == 1 ? r < 0 : r == dbl_rows[i].r;
        if (!ok)
            fail_msg("row %zu \"%s\": r=%d want %d", i, dbl_rows[i].in, r, dbl_rows[i].r);
        if (r == 0)
            assert_true(v == dbl_rows[i].v);
        else
            assert_true(v == 9.75);
    }
    {
        double v = 1;
        assert_int_equal(parse_double(NULL, &v), -EINVAL);
        assert_true(v == 1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_i64),
        cmocka_unit_test(test_parse_u32),
        cmocka_unit_test(test_parse_double),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
