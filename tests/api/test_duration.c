/*
 * Tests for api/duration: Go time.ParseDuration and Duration.String. Expected values are worked
 * out by hand from Go's rules (several rows are cases from Go's own time tests).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/duration.h"
#include "base/base.h"

#define SEC  1000000000LL
#define MIN  (60 * SEC)
#define HOUR (60 * MIN)

struct parse_row {
    const char *in;
    int r;
    int64_t ns;
};

static const struct parse_row parse_rows[] = {
    /* zero and signs */
    {"0", 0, 0},
    {"-0", 0, 0},
    {"+0", 0, 0},
    {"0s", 0, 0},
    {"-0s", 0, 0},
    /* plain values in every unit */
    {"10ns", 0, 10},
    {"11us", 0, 11000},
    {"12\xc2\xb5s", 0, 12000}, /* U+00B5 micro sign */
    {"12\xce\xbcs", 0, 12000}, /* U+03BC Greek mu */
    {"13ms", 0, 13000000},
    {"14s", 0, 14 * SEC},
    {"15m", 0, 15 * MIN},
    {"16h", 0, 16 * HOUR},
    {"5s", 0, 5 * SEC},
    {"-5s", 0, -5 * SEC},
    {"+5s", 0, 5 * SEC},
    {"1478s", 0, 1478 * SEC},
    {"24h", 0, 24 * HOUR},
    {"5m0s", 0, 5 * MIN},
    {"1h30m", 0, 90 * MIN},
    {"300ms", 0, 300000000},
    {"2us", 0, 2000},
    {"2\xc2\xb5s", 0, 2000},
    {"-1m", 0, -MIN},
    /* fractions */
    {"5.0s", 0, 5 * SEC},
    {"5.6s", 0, 5600000000},
    {"5.s", 0, 5 * SEC},
    {".5s", 0, 500000000},
    {"1.004s", 0, 1004000000},
    {"1.0040s", 0, 1004000000},
    {"100.00100s", 0, 100001000000},
    {"1.5h", 0, 90 * MIN},
    {"-1.5h", 0, -90 * MIN},
    {"0.1ns", 0, 0},
    {"0.3333333333333333333h", 0, 20 * MIN},
    {"0.100000000000000000000h", 0, 6 * MIN},
    {"0.830103483285477580700h", 0, 49 * MIN + 48 * SEC + 372539827},
    /* compound */
    {"3h30m", 0, 3 * HOUR + 30 * MIN},
    {"10.5s4m", 0, 4 * MIN + 10 * SEC + 500000000},
    {"-2m3.4s", 0, -(2 * MIN + 3 * SEC + 400000000)},
    {"1h2m3s4ms5us6ns", 0, HOUR + 2 * MIN + 3 * SEC + 4000000 + 5000 + 6},
    {"39h9m14.425s", 0, 39 * HOUR + 9 * MIN + 14 * SEC + 425000000},
    {"52763797000ns", 0, 52763797000},
    {"9007199254740993ns", 0, 9007199254740993},
    /* the int64 limits */
    {"9223372036854775807ns", 0, INT64_MAX},
    {"9223372036854775.807us", 0, INT64_MAX},
    {"9223372036s854ms775us807ns", 0, INT64_MAX},
    {"2562047h47m16.854775807s", 0, INT64_MAX},
    {"-9223372036854775808ns", 0, INT64_MIN},
    {"-9223372036854775.808us", 0, INT64_MIN},
    {"-2562047h47m16.854775808s", 0, INT64_MIN},
    /* malformed */
    {"", -EINVAL, 0},
    {"3", -EINVAL, 0},
    {"00", -EINVAL, 0},
    {"1.5", -EINVAL, 0},
    {"-", -EINVAL, 0},
    {"+", -EINVAL, 0},
    {"s", -EINVAL, 0},
    {"h", -EINVAL, 0},
    {".", -EINVAL, 0},
    {"-.", -EINVAL, 0},
    {".s", -EINVAL, 0},
    {"+.s", -EINVAL, 0},
    {"1d", -EINVAL, 0},
    {"1e3s", -EINVAL, 0},
    {"5 s", -EINVAL, 0},
    {"1s ", -EINVAL, 0},
    {" 1s", -EINVAL, 0},
    {"1S", -EINVAL, 0},
    {"--1s", -EINVAL, 0},
    {"1s-1s", -EINVAL, 0},
    {"\xff\xff", -EINVAL, 0},
    {"hello \xff"
     "ff world",
     -EINVAL, 0},
    /* overflow */
    {"9223372036854775808ns", -ERANGE, 0},
    {"9223372036854775.808us", -ERANGE, 0},
    {"9223372036854ms775us808ns", -ERANGE, 0},
    {"-9223372036854775809ns", -ERANGE, 0},
    {"2562047h47m16.854775808s", -ERANGE, 0},
    {"3000000h", -ERANGE, 0},
    {"99999999999999999999s", -ERANGE, 0},
    /* Go wraps this sum of two 2^63 ns groups around to 0; we refuse it. */
    {"9223372036854775808ns9223372036854775808ns", -ERANGE, 0},
};

static void test_parse_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(parse_rows); i++) {
        const struct parse_row *row = &parse_rows[i];
        int64_t ns = 12345;
        int r = duration_parse(row->in, &ns);

        if (r != row->r || (r == 0 && ns != row->ns))
            fail_msg("duration_parse(\"%s\") = %d, %lld; want %d, %lld", row->in, r, (long long)ns,
                     row->r, (long long)row->ns);
        if (r < 0)
            assert_int_equal(ns, 12345); /* untouched on failure */
    }
}

struct format_row {
    int64_t ns;
    const char *out;
};

static const struct format_row format_rows[] = {
    {0, "0s"},
    {1, "1ns"},
    {-1, "-1ns"},
    {999, "999ns"},
    {1000, "1\xc2\xb5s"},
    {1100, "1.1\xc2\xb5s"},
    {2000, "2\xc2\xb5s"},
    {999999, "999.999\xc2\xb5s"},
    {1000000, "1ms"},
    {2200000, "2.2ms"},
    {300000000, "300ms"},
    {999999999, "999.999999ms"},
    {SEC, "1s"},
    {1500000000, "1.5s"},
    {-1500000000, "-1.5s"},
    {3300000000, "3.3s"},
    {MIN, "1m0s"},
    {-MIN, "-1m0s"},
    {4 * MIN + 5 * SEC, "4m5s"},
    {4 * MIN + 5001000000, "4m5.001s"},
    {5 * MIN, "5m0s"},
    {8 * MIN + 1, "8m0.000000001s"},
    {HOUR, "1h0m0s"},
    {90 * MIN, "1h30m0s"},
    {5 * HOUR + 6 * MIN + 7001000000, "5h6m7.001s"},
    {24 * HOUR, "24h0m0s"},
    {INT64_MAX, "2562047h47m16.854775807s"},
    {INT64_MIN, "-2562047h47m16.854775808s"},
};

static void test_format_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(format_rows); i++) {
        char buf[DURATION_STR_MAX];
        size_t n = duration_format(format_rows[i].ns, buf);

        if (strcmp(buf, format_rows[i].out) != 0)
            fail_msg("duration_format(%lld) = \"%s\"; want \"%s\"", (long long)format_rows[i].ns,
                     buf, format_rows[i].out);
        assert_int_equal(n, strlen(format_rows[i].out));
    }
}

/* Every formatted value parses back to itself. */
static void test_round_trip(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(format_rows); i++) {
        char buf[DURATION_STR_MAX];
        int64_t ns;

        (void)duration_format(format_rows[i].ns, buf);
        assert_int_equal(duration_parse(buf, &ns), 0);
        assert_int_equal(ns, format_rows[i].ns);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_table),
        cmocka_unit_test(test_format_table),
        cmocka_unit_test(test_round_trip),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
