/*
 * Tests for api/rfc3339: time.Parse(time.RFC3339) as metav1.Time reads it, and the UTC forms
 * metav1.Time / MicroTime / RFC3339Nano print. Epoch seconds were computed by hand (days from
 * 1970-01-01 times 86400) and cross-checked with `date -u -d ... +%s`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "api/rfc3339.h"
#include "base/base.h"

/* 2024-03-05T08:00:00Z: 19787 days (54 years incl. 13 leap days, +31 +29 +4) * 86400 + 8 h. */
#define T0 1709625600LL

struct parse_row {
    const char *in;
    int r;
    int32_t nsec;
    int64_t sec;
};

static const struct parse_row parse_rows[] = {
    {"1970-01-01T00:00:00Z", 0, 0, 0},
    {"1969-12-31T23:59:59Z", 0, 0, -1},
    {"2024-03-05T08:00:00Z", 0, 0, T0},
    /* offsets */
    {"2024-03-05T16:00:00+08:00", 0, 0, T0},
    {"2024-03-05T03:00:00-05:00", 0, 0, T0},
    {"2024-03-05T08:00:00+00:00", 0, 0, T0},
    {"2024-03-05T08:00:00-00:30", 0, 0, T0 + 1800},
    {"2024-03-06T00:00:00+16:00", 0, 0, T0},
    {"2024-03-05T08:00:00+24:00", 0, 0, T0 - 86400}, /* Go tolerates 24 h ... */
    {"2024-03-05T08:00:00+23:60", 0, 0, T0 - 86400}, /* ... and 60 min */
    /* leap years */
    {"2024-02-29T00:00:00Z", 0, 0, 1709164800},
    {"2000-02-29T12:00:00Z", 0, 0, 951825600},
    /* range ends */
    {"0000-01-01T00:00:00Z", 0, 0, -62167219200},
    {"9999-12-31T23:59:59Z", 0, 0, 253402300799},
    /* fractions */
    {"2024-03-05T08:00:00.5Z", 0, 500000000, T0},
    {"2024-03-05T08:00:00.000000001Z", 0, 1, T0},
    {"2024-03-05T08:00:00.123456789Z", 0, 123456789, T0},
    {"2024-03-05T08:00:00.1234567891Z", 0, 123456789, T0},
    {"2024-03-05T08:00:00.123456Z", 0, 123456000, T0},
    {"2024-03-05T08:00:00,25Z", 0, 250000000, T0},
    {"2024-03-05T16:00:00.75+08:00", 0, 750000000, T0},
    /* the general Go parser takes a one-digit hour */
    {"2024-03-05T8:00:00Z", 0, 0, T0},
    /* invalid dates and times */
    {"2023-02-29T00:00:00Z", -EINVAL, 0, 0},
    {"2024-02-30T00:00:00Z", -EINVAL, 0, 0},
    {"1900-02-29T00:00:00Z", -EINVAL, 0, 0},
    {"2024-04-31T00:00:00Z", -EINVAL, 0, 0},
    {"2024-13-01T00:00:00Z", -EINVAL, 0, 0},
    {"2024-00-01T00:00:00Z", -EINVAL, 0, 0},
    {"2024-01-00T00:00:00Z", -EINVAL, 0, 0},
    {"2024-03-05T24:00:00Z", -EINVAL, 0, 0},
    {"2024-03-05T23:60:00Z", -EINVAL, 0, 0},
    {"2024-03-05T23:59:60Z", -EINVAL, 0, 0},
    {"2024-03-05T08:00:00+25:00", -EINVAL, 0, 0},
    {"2024-03-05T08:00:00+08:61", -EINVAL, 0, 0},
    /* malformed */
    {"", -EINVAL, 0, 0},
    {"2024-03-05", -EINVAL, 0, 0},
    {"2024-03-05T08:00:00", -EINVAL, 0, 0},
    {"2024-03-05t08:00:00Z", -EINVAL, 0, 0},
    {"2024-03-05T08:00:00z", -EINVAL, 0, 0},
    {"2024-03-05 08:00:00Z", -EINVAL, 0, 0},
    {"2024-3-05T08:00:00Z", -EINVAL, 0, 0},
    {"2024-03-5T08:00:00Z", -EINVAL, 0, 0},
    {"24-03-05T08:00:00Z", -EINVAL, 0, 0},
    {"+2024-03-05T08:00:00Z", -EINVAL, 0, 0},
    {"2024-03-05T08:0:00Z", -EINVAL, 0, 0},
    {"2024-03-05T08:00:0Z", -EINVAL, 0, 0},
    {"2024-03-05T08:00:00.Z", -EINVAL, 0, 0},
    {"2024-03-05T08:00:00+0800", -EINVAL, 0, 0},
    {"2024-03-05T08:00:00+08", -EINVAL, 0, 0},
    {"2024-03-05T08:00:00 +08:00", -EINVAL, 0, 0},
    {"2024-03-05T08:00:00Z ", -EINVAL, 0, 0},
    {"2024-03-05T08:00:00+08:00x", -EINVAL, 0, 0},
    {"2024-03-05T08:00:00UTC", -EINVAL, 0, 0},
};

static void test_parse_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(parse_rows); i++) {
        const struct parse_row *row = &parse_rows[i];
        int64_t sec = 77;
        int32_t nsec = 88;
        int r = rfc3339_parse(row->in, &sec, &nsec);

        if (r != row->r || (r == 0 && (sec != row->sec || nsec != row->nsec)))
            fail_msg("rfc3339_parse(\"%s\") = %d, %lld.%09d; want %d, %lld.%09d", row->in, r,
                     (long long)sec, (int)nsec, row->r, (long long)row->sec, (int)row->nsec);
        if (r < 0) {
            assert_int_equal(sec, 77);
            assert_int_equal(nsec, 88);
        }
    }
}

struct format_row {
    int64_t sec;
    int32_t nsec;
    const char *sec_form, *nano_form, *micro_form;
};

static const struct format_row format_rows[] = {
    {0, 0, "1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "1970-01-01T00:00:00.000000Z"},
    {0, 1, "1970-01-01T00:00:00Z", "1970-01-01T00:00:00.000000001Z", "1970-01-01T00:00:00.000000Z"},
    {-1, 0, "1969-12-31T23:59:59Z", "1969-12-31T23:59:59Z", "1969-12-31T23:59:59.000000Z"},
    {T0, 500000000, "2024-03-05T08:00:00Z", "2024-03-05T08:00:00.5Z",
     "2024-03-05T08:00:00.500000Z"},
    {T0, 120000000, "2024-03-05T08:00:00Z", "2024-03-05T08:00:00.12Z",
     "2024-03-05T08:00:00.120000Z"},
    {T0, 123456789, "2024-03-05T08:00:00Z", "2024-03-05T08:00:00.123456789Z",
     "2024-03-05T08:00:00.123456Z"},
    {1709164800, 0, "2024-02-29T00:00:00Z", "2024-02-29T00:00:00Z", "2024-02-29T00:00:00.000000Z"},
    {951825600, 999999999, "2000-02-29T12:00:00Z", "2000-02-29T12:00:00.999999999Z",
     "2000-02-29T12:00:00.999999Z"},
    {253402300799, 0, "9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z",
     "9999-12-31T23:59:59.000000Z"},
    {253402300800, 0, "10000-01-01T00:00:00Z", "10000-01-01T00:00:00Z",
     "10000-01-01T00:00:00.000000Z"},
    {-62167219200, 0, "0000-01-01T00:00:00Z", "0000-01-01T00:00:00Z",
     "0000-01-01T00:00:00.000000Z"},
    {-62167219201, 0, "-0001-12-31T23:59:59Z", "-0001-12-31T23:59:59Z",
     "-0001-12-31T23:59:59.000000Z"},
    /* Go's time.Unix(math.MaxInt64, 0) and time.Unix(math.MinInt64, 0) */
    {INT64_MAX, 0, "292277026596-12-04T15:30:07Z", "292277026596-12-04T15:30:07Z",
     "292277026596-12-04T15:30:07.000000Z"},
    {INT64_MIN, 999999999, "-292277022657-01-27T08:29:52Z",
     "-292277022657-01-27T08:29:52.999999999Z", "-292277022657-01-27T08:29:52.999999Z"},
};

static void check_form(size_t (*fn)(int64_t, int32_t, char *), const struct format_row *row,
                       const char *want)
{
    char buf[RFC3339_STR_MAX];
    size_t n = fn(row->sec, row->nsec, buf);

    if (strcmp(buf, want) != 0)
        fail_msg("format(%lld, %d) = \"%s\"; want \"%s\"", (long long)row->sec, (int)row->nsec, buf,
                 want);
    assert_int_equal(n, strlen(want));
}

static size_t format_sec(int64_t sec, int32_t nsec, char *buf)
{
    (void)nsec;
    return rfc3339_format(sec, buf);
}

static void test_format_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(format_rows); i++) {
        check_form(format_sec, &format_rows[i], format_rows[i].sec_form);
        check_form(rfc3339_format_nano, &format_rows[i], format_rows[i].nano_form);
        check_form(rfc3339_format_micro, &format_rows[i], format_rows[i].micro_form);
    }
}

/* Every in-range formatted time parses back to the same instant. */
static void test_round_trip(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(format_rows); i++) {
        const struct format_row *row = &format_rows[i];
        int64_t sec;
        int32_t nsec;

        if (row->sec < -62167219200 || row->sec > 253402300799)
            continue;
        assert_int_equal(rfc3339_parse(row->nano_form, &sec, &nsec), 0);
        assert_int_equal(sec, row->sec);
        assert_int_equal(nsec, row->nsec);
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
