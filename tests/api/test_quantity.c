/*
 * Tests for api/quantity.c. The expectations are Kubernetes behaviour: rows marked "upstream" are
 * the input/output pairs of apimachinery's quantity_test.go (TestQuantityParse, TestQuantityString,
 * TestQuantityParseEmit, TestQuantityCmpInt64AndDec, TestAdd, TestSub, TestMilliNewSet,
 * TestNewSet, TestNewScaledSet, TestNegativeValueRoundsAwayFromZero, ...); the others were worked
 * out by hand from quantity.go's rules (the arithmetic is spelled out in the comments).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/quantity.h"
#include "base/base.h"

#define DSI QUANTITY_DECIMAL_SI
#define BIN QUANTITY_BINARY_SI
#define DEX QUANTITY_DECIMAL_EXPONENT

static void fail_row(const char *what, const char *in, const char *detail)
{
    print_error("%s: input \"%s\": %s\n", what, in, detail);
    fail();
}

/* ---- parse: accepted inputs, with the normalised value/scale we promise ---- */

struct parse_ok {
    const char *in;
    int64_t value;
    int32_t scale;
    enum quantity_format format;
};

static const struct parse_ok parse_ok_rows[] = {
    /* upstream TestQuantityParse */
    {"0", 0, 0, DSI},
    {"0n", 0, 0, DSI},
    {"0u", 0, 0, DSI},
    {"0m", 0, 0, DSI},
    {"0Ki", 0, 0, BIN},
    {"0k", 0, 0, DSI},
    {"0Mi", 0, 0, BIN},
    {"0M", 0, 0, DSI},
    {"0Gi", 0, 0, BIN},
    {"0G", 0, 0, DSI},
    {"0Ti", 0, 0, BIN},
    {"0T", 0, 0, DSI},
    {"1", 1, 0, DSI},
    {"1Ki", 1024, 0, BIN},
    {"8Ki", 8192, 0, BIN},
    {"7Mi", 7340032, 0, BIN},
    {"6Gi", 6442450944, 0, BIN},
    {"5Ti", 549755813888, 1, BIN}, /* 5 * 2^40 = 5497558138880 */
    {"4Pi", 4503599627370496, 0, BIN},
    {"3Ei", 3458764513820540928, 0, BIN},
    {"10Ti", 1099511627776, 1, BIN},
    {"100Ti", 1099511627776, 2, BIN},
    {"5n", 5, -9, DSI},
    {"4u", 4, -6, DSI},
    {"3m", 3, -3, DSI},
    {"9", 9, 0, DSI},
    {"8k", 8, 3, DSI},
    {"50k", 5, 4, DSI},
    {"7M", 7, 6, DSI},
    {"6G", 6, 9, DSI},
    {"5T", 5, 12, DSI},
    {"40T", 4, 13, DSI},
    {"300T", 3, 14, DSI},
    {"2P", 2, 15, DSI},
    {"1E", 1, 18, DSI},
    {"1E-3", 1, -3, DEX},
    {"1e3", 1, 3, DEX},
    {"1E6", 1, 6, DEX},
    {"1e9", 1, 9, DEX},
    {"1E12", 1, 12, DEX},
    {"1e15", 1, 15, DEX},
    {"1E18", 1, 18, DEX},
    {"1e14", 1, 14, DEX},
    {"1e13", 1, 13, DEX},
    {"100.035k", 100035, 0, DSI},
    {"0.001", 1, -3, DSI},
    {"0.0005k", 5, -1, DSI},
    {"0.005", 5, -3, DSI},
    {"0.05", 5, -2, DSI},
    {"0.5", 5, -1, DSI},
    {"0.00050k", 5, -1, DSI},
    {"0.00500", 5, -3, DSI},
    {"0.05000", 5, -2, DSI},
    {"0.50000", 5, -1, DSI},
    {"0.5e0", 5, -1, DEX},
    {"0.5e-1", 5, -2, DEX},
    {"0.5e-2", 5, -3, DEX},
    {"10.035M", 10035, 3, DSI},
    {"1.2e3", 12, 2, DEX},
    {"1.3E+6", 13, 5, DEX},
    {"1.40e9", 14, 8, DEX},
    {"1.53E12", 153, 10, DEX},
    {"1.6e15", 16, 14, DEX},
    {"1.7E18", 17, 17, DEX},
    {"9.01", 901, -2, DSI},
    {"8.1k", 81, 2, DSI},
    {"7.123456M", 7123456, 0, DSI},
    {"6.987654321G", 6987654321, 0, DSI},
    {"5.444T", 5444, 9, DSI},
    {"40.1T", 401, 11, DSI},
    {"300.2T", 3002, 11, DSI},
    {"2.5P", 25, 14, DSI},
    {"1.01E", 101, 16, DSI},
    {"3.001n", 4, -9, DSI},
    {"1.1E-9", 2, -9, DEX},
    {"0.0000000001", 1, -9, DSI},
    {"0.0000000005", 1, -9, DSI},
    {"0.00000000050", 1, -9, DSI},
    {"0.5e-9", 1, -9, DEX},
    {"0.9n", 1, -9, DSI},
    {"0.00000012345", 124, -9, DSI},
    {"0.00000012354", 124, -9, DSI},
    {"9Ei", INT64_MAX, 0, BIN},
    {"9223372036854775807Ki", INT64_MAX, 0, BIN},
    {"12E", 12, 18, DSI},
    {"100.035Ki", 10243584, -2, BIN}, /* 102435.84 */
    {"0.5Mi", 524288, 0, BIN},
    {"0.05Gi", 536870912, -1, BIN},     /* 53687091.2 */
    {"0.025Ti", 274877906944, -1, BIN}, /* 27487790694.4 */
    {"0.000000000001Ki", 2, -9, DSI},   /* 1.024e-12 rounds up, format changes */
    {".001", 1, -3, DSI},
    {".0001k", 1, -1, DSI},
    {"1.", 1, 0, DSI},
    {"1.G", 1, 9, DSI},

    /* upstream's scanner reads a lone sign, dot or suffix as 0 */
    {"-", 0, 0, DSI},
    {"+", 0, 0, DSI},
    {".", 0, 0, DSI},
    {"-.", 0, 0, DSI},
    {"m", 0, 0, DSI},
    {"Ki", 0, 0, BIN},
    {"Mi", 0, 0, BIN},
    {"Ti", 0, 0, BIN}, /* Ki..Ti take the int64 fast path; Pi and Ei do not */
    {"-.Ki", 0, 0, BIN},
    {"e5", 0, 0, DEX},
    {".E2", 0, 0, DEX},
    {"0.0Ki", 0, 0, BIN},
    {"-0", 0, 0, DSI},
    {"000", 0, 0, DSI},

    /* signs, leading zeros, exponent spellings */
    {"+1", 1, 0, DSI},
    {"-1", -1, 0, DSI},
    {"01", 1, 0, DSI},
    {"00000000000000000000000000001", 1, 0, DSI},
    {"1e+5", 1, 5, DEX},
    {"1E-0", 1, 0, DEX},
    {"1e007", 1, 7, DEX},
    {"12000e0", 12, 3, DEX},
    {"1.5", 15, -1, DSI},
    {"1.5m", 15, -4, DSI},
    {"1.0001m", 10001, -7, DSI},
    {"1.5Gi", 1610612736, 0, BIN},
    {"0.5Gi", 536870912, 0, BIN},
    {"0.5Ki", 512, 0, BIN},
    {"1.1Ki", 11264, -1, BIN},          /* 1126.4 */
    {"-0.0000000001Ki", -103, -9, DSI}, /* -102.4n rounds away from zero */
    {"1.Ki", 1024, 0, BIN},

    /* rounding up to 1n: 0.9999999999 keeps nine 9s, adds 1 and carries to 1 */
    {"0.9999999999", 1, 0, DSI},
    {"-0.9999999999", -1, 0, DSI},
    {"1.0000000000000000001", 1000000001, -9, DSI},
    {"0.000000001000000000000000000000000000001", 2, -9, DSI},
    {"999999999.9999999999", 1, 9, DSI},
    {"1e-2147483647", 1, -9, DEX},
    {"-1e-2147483647", -1, -9, DEX},
    {".484785E-7466", 1, -9, DEX},

    /* the edges of int64 * 10^int32 */
    {"9223372036854775807", INT64_MAX, 0, DSI},
    {"-9223372036854775807", -INT64_MAX, 0, DSI},
    {"9223372036854775807m", INT64_MAX, -3, DSI},
    {"9223372036854775807000", INT64_MAX, 3, DSI},
    {"-9223372036854775808000", INT64_MIN, 3, DSI},
    {"9223372036854775807e-9", INT64_MAX, -9, DEX},
    {"9223372036854775808e-10", 922337203685477581, -9, DEX}, /* scale -10: inf.Dec, no error */
    {"10000000000000000000", 1, 19, DSI}, /* 20 digits: upstream's inf.Dec path, no error */
    {"1e2147483647", 1, 2147483647, DEX},
    {"10e2147483647", 10, 2147483647, DEX},     /* 1e2147483648 keeps a zero in value */
    {"1000e2147483647", 1000, 2147483647, DEX}, /* 1e2147483650 */

    /* BinarySI: exact, capped at 2^63-1 */
    {"7Ei", 8070450532247928832, 0, BIN},
    {"8Ei", INT64_MAX, 0, BIN}, /* 2^63 */
    {"-8Ei", -INT64_MAX, 0, BIN},
    {"8192Pi", INT64_MAX, 0, BIN},
    {"7.99999999999999999999Ei", INT64_MAX, 0, BIN}, /* 2^63 - 0.0115... */
    {"99999999999999999999999Ki", INT64_MAX, 0, BIN},
    {"9.5Gi", 10200547328, 0, BIN},  /* 9.5 * 2^30, an integer */
    {"1.3Gi", 13958643712, -1, BIN}, /* 1395864371.2 */
    {"-0.1Ki", -1024, -1, BIN},      /* -102.4 */
};

static void expect_parse(const struct parse_ok *row, const char *in, int sign)
{
    struct quantity q;
    char msg[160];
    int r = quantity_parse(in, &q);
    int64_t want = row->value == INT64_MIN || sign > 0 ? row->value : -row->value;

    if (r != 0) {
        (void)snprintf(msg, sizeof(msg), "rc %d", r);
        fail_row("parse", in, msg);
    }
    if (q.value != want || q.scale != row->scale || q.format != row->format) {
        (void)snprintf(msg, sizeof(msg), "got {%lld, %d, %d} want {%lld, %d, %d}",
                       (long long)q.value, q.scale, q.format, (long long)want, row->scale,
                       row->format);
        fail_row("parse", in, msg);
    }
}

static void test_parse_ok(void **state)
{
    char buf[128];

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(parse_ok_rows); i++) {
        const struct parse_ok *row = &parse_ok_rows[i];

        expect_parse(row, row->in, 1);
        /* As upstream does: a leading "-" negates, a leading "+" changes nothing. */
        if (row->in[0] == '-' || row->in[0] == '+' || row->value == INT64_MIN)
            continue;
        (void)snprintf(buf, sizeof(buf), "-%s", row->in);
        expect_parse(row, buf, -1);
        (void)snprintf(buf, sizeof(buf), "+%s", row->in);
        expect_parse(row, buf, 1);
    }
}

static void test_parse_n(void **state)
{
    struct quantity q;

    (void)state;
    assert_int_equal(quantity_parse_n("1.5Gi trailing", 5, &q), 0);
    assert_int_equal(q.value, 1610612736);
    assert_int_equal(quantity_parse_n("100m", 3, &q), 0); /* "100" */
    assert_int_equal(q.value, 1);
    assert_int_equal(q.scale, 2);
    assert_int_equal(quantity_parse_n("1\0k", 3, &q), -EINVAL);
    assert_int_equal(quantity_parse_n("1k", 0, &q), -EINVAL);
    assert_int_equal(quantity_parse_n(NULL, 0, &q), -EINVAL);
    assert_int_equal(quantity_parse(NULL, &q), -EINVAL);
}

/* ---- parse: refused inputs ---- */

struct parse_err {
    const char *in;
    int rc;
};

static const struct parse_err parse_err_rows[] = {
    /* upstream TestQuantityParse "invalid" */
    {"", -EINVAL},
    {"1.1.M", -EINVAL},
    {"1+1.0M", -EINVAL},
    {"0.1mi", -EINVAL},
    {"0.1am", -EINVAL},
    {"aoeu", -EINVAL},
    {".5i", -EINVAL},
    {"1i", -EINVAL},
    {"-3.01i", -EINVAL},
    {"-3.01e-", -EINVAL},
    {"1e4294967297", -EINVAL},
    {" 1", -EINVAL},
    {"1 ", -EINVAL},
    {"Non-Numeric", -EINVAL},
    /* upstream TestInterpretExponentInt32Bounds */
    {"1E2147483648", -EINVAL},
    {"1E-2147483648", -EINVAL},
    {"1E8589934592", -EINVAL},
    {"1E9223372036854775807", -EINVAL},
    {"1E9223372036854775808", -EINVAL},
    {"1E6024865272343", -EINVAL},
    /* suffixes */
    {"1.1.1", -EINVAL},
    {"1 Gi", -EINVAL},
    {"1e", -EINVAL},
    {"1E+", -EINVAL},
    {"1e-", -EINVAL},
    {"1ee3", -EINVAL},
    {"1Ei5", -EINVAL},
    {"1Mi5", -EINVAL},
    {"1GI", -EINVAL},
    {"1gi", -EINVAL},
    {"1ki", -EINVAL},
    {"1KI", -EINVAL},
    {"1K", -EINVAL},
    {"1kk", -EINVAL},
    {"1mm", -EINVAL},
    {"1iK", -EINVAL},
    {"1B", -EINVAL},
    {"1Gi ", -EINVAL},
    {"1.e.", -EINVAL},
    {"1..", -EINVAL},
    {"++1", -EINVAL},
    {"--1", -EINVAL},
    {"+-1", -EINVAL},
    {"1-", -EINVAL},
    {"1e3.5", -EINVAL},
    {"0x10", -EINVAL},
    {"1,5", -EINVAL},
    {"1_000", -EINVAL},
    {"1\n", -EINVAL},
    {"\xef\xbc\x91", -EINVAL}, /* fullwidth 1 */
    {"inf", -EINVAL},
    {"NaN", -EINVAL},
    /* upstream's inf.Dec path fails on a number part without digits */
    {"Pi", -EINVAL},
    {"Ei", -EINVAL},
    {"-Ei", -EINVAL},
    {".Pi", -EINVAL},
    {".e-10", -EINVAL},
    {"-e-10", -EINVAL},
    {"+.e-10", -EINVAL},
    /* upstream's fast path runs strconv.ParseInt on exactly 19 digits */
    {"9999999999999999999", -EINVAL},
    {"9223372036854775808", -EINVAL},
    {"-9223372036854775808", -EINVAL},
    {"9223372036854775808k", -EINVAL},
    {"922337203685477580.8", -EINVAL},
    {"9223372036854775808e-9", -EINVAL},
    /* valid, but not int64 * 10^int32 */
    {"12345678901234567890123", -ERANGE},
    {"12345678901.000000001", -ERANGE},
    {"99999999999999999999", -ERANGE},
    {"99999999999999999990", -ERANGE},
    {"9.5000000001Gi", -ERANGE}, /* upstream's own example: 10200547328.107374183 needs 20 digits */
    {"18446744073709551616", -ERANGE},
    {"0.33Ei", -ERANGE}, /* 380464744784117678.08 */
    {"10000000000000000000000e2147483647", -ERANGE},
    {"1.5e2147483647", 0}, /* 15e2147483646 fits: not an error */
};

static void test_parse_err(void **state)
{
    struct quantity q = {.value = 42, .scale = 7, .format = DEX};
    char msg[64];

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(parse_err_rows); i++) {
        const struct parse_err *row = &parse_err_rows[i];
        int r = quantity_parse(row->in, &q);

        if (r != row->rc) {
            (void)snprintf(msg, sizeof(msg), "rc %d want %d", r, row->rc);
            fail_row("parse_err", row->in, msg);
        }
        if (r < 0 && (q.value != 42 || q.scale != 7 || q.format != DEX))
            fail_row("parse_err", row->in, "wrote *ret on failure");
        q = (struct quantity){.value = 42, .scale = 7, .format = DEX};
    }
}

/* ---- printing ---- */

struct format_row {
    int64_t value;
    int32_t scale;
    int format; /* int so that an invalid format can be tested */
    const char *out;
};

static const struct format_row format_rows[] = {
    /* upstream TestQuantityString */
    {1073741824, 0, BIN, "1Gi"},
    {314572800, 0, BIN, "300Mi"},
    {6144, 0, BIN, "6Ki"},
    {1074815565824, 0, BIN, "1001Gi"},
    {1099511627776, 0, BIN, "1Ti"},
    {5, 0, BIN, "5"},
    {500, -3, BIN, "500m"},
    {1, 9, DSI, "1G"},
    {1000, 6, DSI, "1G"},
    {1000000, 3, DSI, "1G"},
    {1000000000, 0, DSI, "1G"},
    {1, -3, DSI, "1m"},
    {80, -3, DSI, "80m"},
    {1080, -3, DSI, "1080m"},
    {108, -2, DSI, "1080m"},
    {10800, -4, DSI, "1080m"},
    {300, 6, DSI, "300M"},
    {1, 12, DSI, "1T"},
    {1, 18, DSI, "1E"},
    {1, 21, DSI, "1e21"},
    {5, 21, DSI, "5e21"},
    {1, 24, DSI, "1e24"},
    {1, 70, BIN, "10e69"},
    {2, 70, BIN, "20e69"},
    {1, 72, BIN, "1e72"},
    {1234567, 6, DSI, "1234567M"},
    {1234567, -3, BIN, "1234567m"},
    {3, 3, DSI, "3k"},
    {1025, 0, BIN, "1025"},
    {0, 0, DSI, "0"},
    {0, 0, BIN, "0"},
    {1, 9, DEX, "1e9"},
    {1, -3, DEX, "1e-3"},
    {1, -9, DEX, "1e-9"},
    {80, -3, DEX, "80e-3"},
    {300, 6, DEX, "300e6"},
    {1, 12, DEX, "1e12"},
    {1, 3, DEX, "1e3"},
    {3, 3, DEX, "3e3"},
    {0, 0, DEX, "0"},
    {1, -9, DSI, "1n"},
    {80, -9, DSI, "80n"},
    {1080, -9, DSI, "1080n"},
    {108, -8, DSI, "1080n"},
    {10800, -10, DSI, "1080n"},
    {1, -6, DSI, "1u"},
    {80, -6, DSI, "80u"},
    {1080, -6, DSI, "1080u"},
    /* upstream TestBinarySIZeroExponentString, TestQuantityStringBelowNano, TestQuantityNeg */
    {2000, 0, BIN, "2000"},
    {-2000, 0, BIN, "-2000"},
    {1, -12, DSI, "1e-12"},
    {1, -10, DSI, "100e-12"},
    {-901, -2, DSI, "-9010m"},
    /* upstream TestMilliNewSet / TestNewSet / TestNewScaledSet (value, scale) pairs */
    {1, -3, DSI, "1m"},
    {1000, -3, DSI, "1"},
    {1234000, -3, DSI, "1234"},
    {1024, -3, BIN, "1024m"},
    {1000000, -3, 7, "1e3"}, /* an unknown format prints as DecimalExponent */
    {1048576, -3, BIN, "1048576m"},
    {1000, 0, DSI, "1k"},
    {1234000, 0, DSI, "1234k"},
    {1024, 0, BIN, "1Ki"},
    {1000000, 0, 7, "1e6"},
    {1048576, 0, BIN, "1Mi"},
    {1000, -9, DSI, "1u"},
    {1000, -6, DSI, "1m"},
    {0, -9, DSI, "0"},
    {0, 500, DEX, "0"},
    /* DecimalSI: largest suffix leaving an integer; the mantissa takes up to two zeros */
    {15, -1, DSI, "1500m"},
    {2, 3, DSI, "2k"},
    {1, -1, DSI, "100m"},
    {12, 2, DSI, "1200"},
    {15, 5, DSI, "1500k"},
    {10001, -7, DSI, "1000100n"},
    {1, 19, DSI, "10E"},
    {1, 20, DSI, "100E"},
    {-1, -11, DSI, "-10e-12"},
    {1, -13, DSI, "100e-15"},
    {INT64_MAX, 0, DSI, "9223372036854775807"},
    {INT64_MIN, 0, DSI, "-9223372036854775808000m"}, /* upstream: "-9223372036854775808" */
    {INT64_MAX, -9, DSI, "9223372036854775807n"},
    {INT64_MIN, -9, DSI, "-9223372036854775808000e-12"},
    {INT64_MIN, 3, DSI, "-9223372036854775808000"},
    {INT64_MIN, 3, DEX, "-9223372036854775808000"},
    {922337203685477581, 1, DEX, "9223372036854775810000e-3"},
    {922337203685477581, 2, DSI, "92233720368547758100"},
    {92233720368547759, 2, DSI, "9223372036854775900000m"},
    {9223372036854775, 3, DSI, "9223372036854775k"},
    {INT64_MAX, 2, DSI, "922337203685477580700"},
    {INT64_MIN, 17, DSI, "-922337203685477580800P"},
    /* DecimalExponent: exponent a multiple of three, none when it is zero */
    {12, 2, DEX, "1200"},
    {12, 3, DEX, "12e3"},
    {8, -2, DEX, "80e-3"},
    {INT64_MIN, 1, DEX, "-92233720368547758080"},
    {1, 2147483647, DEX, "10e2147483646"},
    {1, 2147483647, DSI, "10e2147483646"},
    {1000, 2147483647, DSI, "10000e2147483646"}, /* never print an exponent past int32 */
    {INT64_MAX, 2147483647, DEX, "92233720368547758070e2147483646"},
    {INT64_MIN, INT32_MIN, DEX, "-92233720368547758080e-2147483649"},
    /* BinarySI: below 1024 or fractional prints as DecimalSI */
    {1024, 0, BIN, "1Ki"},
    {-1024, 0, BIN, "-1Ki"},
    {1023, 0, BIN, "1023"},
    {-1023, 0, BIN, "-1023"},
    {10240, -1, BIN, "1Ki"},
    {1024001, -3, BIN, "1024001m"},
    {2048, 3, BIN, "2000Ki"}, /* 2048000 = 2000 * 1024 */
    {1, 3, BIN, "1k"},
    {15, 2, BIN, "1500"},
    {1536, 0, BIN, "1536"},
    {1572864, 0, BIN, "1536Ki"},
    {1610612736, 0, BIN, "1536Mi"},
    {-1610612736, 0, BIN, "-1536Mi"},
    {INT64_MAX, 0, BIN, "9223372036854775807"},
    {INT64_MIN, 0, BIN, "-8Ei"},
    {8070450532247928832, 0, BIN, "7Ei"},
    {1, 69, BIN, "867361737988403547205962240695953369140625000000000Ei"}, /* 5^60 * 10^9 */
    {3, 63, BIN, "2602085213965210641617886722087860107421875000Ei"},      /* 3 * 5^63 * 8 */
    {INT64_MAX, 69, BIN, "9223372036854775807e69"}, /* 70 digits + Ei would not fit */
    {1, 7, 7, "10e6"},
};

/* Whether |q| > 2^63-1, through the exact comparison. */
static bool exceeds_int64(const struct quantity *q)
{
    const struct quantity max = {.value = INT64_MAX}, min = {.value = -INT64_MAX};

    return quantity_cmp(q, &max) > 0 || quantity_cmp(q, &min) < 0;
}

static void test_format(void **state)
{
    char buf[QUANTITY_STR_MAX], msg[200];

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(format_rows); i++) {
        const struct format_row *row = &format_rows[i];
        struct quantity q = {
            .value = row->value, .scale = row->scale, .format = (enum quantity_format)row->format};
        size_t n = quantity_format(&q, buf);

        if (strcmp(buf, row->out) != 0 || n != strlen(row->out)) {
            (void)snprintf(msg, sizeof(msg), "{%lld, %d, %d}: got \"%s\" (%zu) want \"%s\"",
                           (long long)row->value, row->scale, row->format, buf, n, row->out);
            fail_row("format", row->out, msg);
        }
        /* A canonical string parses back to the same number and prints the same again, except
         * that parsing caps BinarySI at 2^63-1 ("-8Ei" comes back as -9223372036854775807). */
        if (q.value != 0 && q.scale >= -9 && !(row->format == BIN && exceeds_int64(&q))) {
            struct quantity back;
            char again[QUANTITY_STR_MAX];

            if (quantity_parse(buf, &back) != 0 || quantity_cmp(&q, &back) != 0)
                fail_row("format round trip", buf, "parse back differs");
            /* BinarySI without a binary suffix reparses as DecimalSI ("2000" then is "2k"). */
            (void)quantity_format(&back, again);
            if (strcmp(again, buf) != 0 && !(row->format == BIN && buf[n - 1] != 'i'))
                fail_row("format fixed point", buf, again);
        }
        /* Upstream TestQuantityString also checks the negation of every row. */
        if (row->value > 0) {
            char neg[QUANTITY_STR_MAX + 1];

            q.value = -q.value;
            (void)quantity_format(&q, buf);
            (void)snprintf(neg, sizeof(neg), "-%s", row->out);
            if (strcmp(buf, neg) != 0)
                fail_row("format negated", neg, buf);
        }
    }
}

struct canon_row {
    const char *in;
    const char *out;
};

static const struct canon_row canon_rows[] = {
    /* upstream TestQuantityParseEmit */
    {"1Ki", "1Ki"},
    {"1Mi", "1Mi"},
    {"1Gi", "1Gi"},
    {"1024Mi", "1Gi"},
    {"1000M", "1G"},
    {".001Ki", "1024m"},
    {".000001Ki", "1024u"},
    {".000000001Ki", "1024n"},
    {".000000000001Ki", "2n"},
    /* the canonical forms the koord API relies on */
    {"1.5", "1500m"},
    {"2000", "2k"},
    {"0.1", "100m"},
    {"1.5Gi", "1536Mi"},
    {"0.5Gi", "512Mi"},
    {"100m", "100m"},
    {"1200m", "1200m"},
    {"1280Mi", "1280Mi"},
    {"5", "5"},
    {"0", "0"},
    {"-0", "0"},
    {"0Gi", "0"},
    {"0e5", "0"},
    {"1.0001m", "1000100n"},
    {"1.5M", "1500k"},
    {"1500k", "1500k"},
    {"0.0000000001", "1n"},
    {"1e3", "1e3"},
    {"1E3", "1e3"},
    {"12000e0", "12e3"},
    {"1000e0", "1e3"},
    {"10e0", "10"},
    {"+1Ki", "1Ki"},
    {"01", "1"},
    {"-1.5", "-1500m"},
    {"1.1Ki", "1126400m"},
    {"9Ei", "9223372036854775807"},
    {"8Ei", "9223372036854775807"},
    {"-8Ei", "-9223372036854775807"},
    {"7Ei", "7Ei"},
    {"1000E", "1e21"},
    {"1e21", "1e21"},
    {"100.035Ki", "102435840m"},
    {"0.5Ki", "512"},
    {"1023Ki", "1023Ki"},
    {"1024Ki", "1Mi"},
    {"1025Ki", "1025Ki"},
    {"1Pi", "1Pi"},
    {"1024Pi", "1Ei"},
    {"4096Pi", "4Ei"},
    {"8192Pi", "9223372036854775807"},
    {"0.5e-9", "1e-9"},
    {"1.1E-9", "2e-9"},
    {"3.001n", "4n"},
    {"8.1k", "8100"},
    {"0.0005k", "500m"},
    {"1e-10", "1e-9"},
    {"12e-10", "2e-9"},
    {"10e-10", "1e-9"},
    {"999999999999999999", "999999999999999999"},
    {".5", "500m"},
    {"1.", "1"},
    {"10e2147483647", "100e2147483646"},
    {"-", "0"},
    {"Mi", "0"},
    {"250m", "250m"},
    {"0.25", "250m"},
    {"128974848", "128974848"},
    {"129e6", "129e6"},
    {"129M", "129M"},
    {"123Mi", "123Mi"},
    {"4Gi", "4Gi"},
    {"2.5Gi", "2560Mi"},
    {"500Mi", "500Mi"},
    {"0.5", "500m"},
    {"4k", "4k"},
    {"1.2", "1200m"},
    {"64Mi", "64Mi"},
    {"-100m", "-100m"},
};

static void test_canonicalize(void **state)
{
    char buf[QUANTITY_STR_MAX];

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(canon_rows); i++) {
        const struct canon_row *row = &canon_rows[i];
        int r = quantity_canonicalize(row->in, buf);

        if (r != (int)strlen(row->out) || strcmp(buf, row->out) != 0)
            fail_row("canonicalize", row->in, buf);
        /* upstream also checks the negated input (skipping zero) */
        if (row->in[0] != '-' && row->in[0] != '+' && strcmp(row->out, "0") != 0) {
            char in[64], want[QUANTITY_STR_MAX + 1];

            (void)snprintf(in, sizeof(in), "-%s", row->in);
            (void)snprintf(want, sizeof(want), "-%s", row->out);
            (void)quantity_canonicalize(in, buf);
            if (strcmp(buf, want) != 0)
                fail_row("canonicalize negated", in, buf);
        }
    }
    assert_int_equal(quantity_canonicalize("1i", buf), -EINVAL);
    assert_string_equal(buf, "");
    assert_int_equal(quantity_canonicalize("0.33Ei", buf), -ERANGE);
}

/*
 * quantity_format() must stay inside QUANTITY_STR_MAX for every struct, whatever its fields, and
 * what it prints must parse back to the same number when that number is a multiple of 1n.
 */
static void test_format_bounds(void **state)
{
    static const int64_t values[] = {
        1,
        7,
        9,
        10,
        999,
        1000,
        1023,
        1024,
        1025,
        1536,
        4096,
        1000000,
        1048576,
        1073741824,
        99999999999,
        1099511627776,
        1000000000000000000,
        1152921504606846976,
        4611686018427387904,
        7450580596923828125,
        8070450532247928832,
        INT64_MAX - 1,
        INT64_MAX,
    };
    static const int32_t scales[] = {
        INT32_MIN,
        INT32_MIN + 1,
        INT32_MIN + 2,
        INT32_MIN + 3,
        -1000,
        -324,
        -40,
        -21,
        -20,
        -19,
        -18,
        -12,
        -10,
        -9,
        -8,
        -7,
        -6,
        -5,
        -4,
        -3,
        -2,
        -1,
        0,
        1,
        2,
        3,
        4,
        5,
        9,
        10,
        17,
        18,
        19,
        20,
        21,
        40,
        50,
        59,
        60,
        61,
        62,
        63,
        64,
        65,
        66,
        67,
        68,
        69,
        70,
        71,
        72,
        300,
        400,
        INT32_MAX - 20,
        INT32_MAX - 3,
        INT32_MAX - 2,
        INT32_MAX - 1,
        INT32_MAX,
    };
    static const int formats[] = {DSI, BIN, DEX, 7};
    char buf[QUANTITY_STR_MAX + 16];

    (void)state;
    for (size_t v = 0; v < ARRAY_SIZE(values); v++) {
        for (int sign = -1; sign <= 1; sign += 2) {
            for (size_t s = 0; s < ARRAY_SIZE(scales); s++) {
                for (size_t f = 0; f < ARRAY_SIZE(formats); f++) {
                    struct quantity q = {.value = sign * values[v],
                                         .scale = scales[s],
                                         .format = (enum quantity_format)formats[f]};
                    struct quantity back;
                    size_t n;
                    int r;

                    if (sign < 0 && values[v] == INT64_MAX - 1)
                        q.value = INT64_MIN;
                    memset(buf, 0x5a, sizeof(buf));
                    n = quantity_format(&q, buf);
                    assert_true(n < QUANTITY_STR_MAX);
                    assert_int_equal(strlen(buf), n);
                    for (size_t g = QUANTITY_STR_MAX; g < sizeof(buf); g++)
                        assert_int_equal(buf[g], 0x5a);
                    r = quantity_parse(buf, &back);
                    if (buf[n - 1] == 'i' && exceeds_int64(&q)) {
                        /* Parsing caps BinarySI at 2^63-1, as upstream does ("8Ei"). */
                        if (r != 0 || back.value != sign * INT64_MAX || back.scale != 0)
                            fail_row("format_bounds", buf, "is not capped");
                    } else if (q.scale >= -9) {
                        if (r != 0 || quantity_cmp(&q, &back) != 0)
                            fail_row("format_bounds", buf, "does not parse back");
                    } else if (q.scale > INT32_MIN + 2 && r != 0) {
                        fail_row("format_bounds", buf, "does not parse");
                    }
                }
            }
        }
    }
}

/* ---- comparison ---- */

struct cmp_row {
    const char *a, *b;
    int want;
};

static const struct cmp_row cmp_rows[] = {
    /* upstream TestQuantityCmp */
    {"0", "0", 0},
    {"100m", "50m", 1},
    {"50m", "100m", -1},
    {"10000T", "100Gi", 1},
    /* by hand */
    {"1Ki", "1024", 0},
    {"1", "1000m", 0},
    {"1e3", "1k", 0},
    {"-1", "1", -1},
    {"-1", "-2", 1},
    {"1n", "0", 1},
    {"-1n", "0", -1},
    {"0Gi", "0e9", 0},
    {"1e2147483647", "9223372036854775807", 1},
    {"-1e2147483647", "-9223372036854775807", -1},
    {"1e-9", "1n", 0},
    {"9223372036854775807", "9223372036854775807000m", 0},
    {"1.5Gi", "1536Mi", 0},
    {"1.5Gi", "1.6G", 1}, /* 1610612736 > 1600000000 */
    {"8Ei", "9Ei", 0},    /* both capped */
    {"1.000000001", "1", 1},
    {"999999999n", "1", -1},
    {"10e2147483647", "1e2147483647", 1},
};

struct cmp_raw_row {
    int64_t av;
    int32_t as;
    int64_t bv;
    int32_t bs;
    int want;
};

static const struct cmp_raw_row cmp_raw_rows[] = {
    /* upstream TestQuantityCmpInt64AndDec */
    {901, -2, 901, -2, 0},
    {90, -1, 901, -2, -1},
    {901, -2, 900, -2, 1},
    {0, 0, 0, 0, 0},
    {0, 1, 0, -1, 0},
    {0, -1, 0, 1, 0},
    {800, -3, 1, 0, -1},
    {800, -3, 79, -2, 1},
    {INT64_MAX, 0, 1, -1, 1},
    {INT64_MAX, 1, 1, 0, 1},
    {INT64_MAX, 1, 1, 1, 1},
    {INT64_MAX, 1, 0, 1, 1},
    {INT64_MAX, -16, 1, 3, -1},
    {INT64_MIN, 0, 0, 0, -1},
    {INT64_MIN, -18, -1, 0, -1},
    {INT64_MIN, -19, -1, 0, 1},
    {1000000000000000000, -17, 1, 1, 0},
    {1000000000000000000, -17, -10, 0, 1},
    {-1000000000000000000, -17, -10, 0, 0},
    {1000000000000000000, -17, 1, 0, 1},
    {1000000000000000001, -17, 1, 1, 1},
    {999999999999999999, -17, 1, 1, -1},
    /* by hand: extreme scales */
    {1, INT32_MAX, INT64_MAX, INT32_MAX - 19, 1},
    {1, INT32_MAX, INT64_MAX, INT32_MAX - 18, -1},
    {1, INT32_MIN, 1, INT32_MAX, -1},
    {-1, INT32_MIN, -1, INT32_MAX, 1},
    {INT64_MIN, INT32_MIN, INT64_MIN, INT32_MIN, 0},
    {10, INT32_MAX - 1, 1, INT32_MAX, 0},
};

static void test_cmp(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cmp_rows); i++) {
        struct quantity a, b;

        assert_int_equal(quantity_parse(cmp_rows[i].a, &a), 0);
        assert_int_equal(quantity_parse(cmp_rows[i].b, &b), 0);
        if (quantity_cmp(&a, &b) != cmp_rows[i].want || quantity_cmp(&b, &a) != -cmp_rows[i].want)
            fail_row("cmp", cmp_rows[i].a, cmp_rows[i].b);
    }
    for (size_t i = 0; i < ARRAY_SIZE(cmp_raw_rows); i++) {
        const struct cmp_raw_row *row = &cmp_raw_rows[i];
        struct quantity a = {.value = row->av, .scale = row->as};
        struct quantity b = {.value = row->bv, .scale = row->bs, .format = BIN};

        assert_int_equal(quantity_cmp(&a, &b), row->want);
        assert_int_equal(quantity_cmp(&b, &a), -row->want);
    }
}

/* ---- addition and subtraction ---- */

struct q3 {
    int64_t v;
    int32_t s;
    enum quantity_format f;
};

struct addsub_row {
    struct q3 a, b;
    bool sub;
    int rc;
    const char *out; /* canonical string of the result */
    enum quantity_format f;
};

static const struct addsub_row addsub_rows[] = {
    /* upstream TestAdd */
    {{10, 0, DSI}, {1, 1, DSI}, false, 0, "20", DSI},
    {{10, 0, DSI}, {1, 0, BIN}, false, 0, "11", DSI},
    {{10, 0, BIN}, {1, 0, DSI}, false, 0, "11", BIN},
    {{0, 0, DSI}, {50, 0, DSI}, false, 0, "50", DSI},
    {{50, 0, DSI}, {0, 0, DSI}, false, 0, "50", DSI},
    {{0, 0, DSI}, {0, 0, DSI}, false, 0, "0", DSI},
    /* upstream TestSub */
    {{10, 0, DSI}, {1, 1, DSI}, true, 0, "0", DSI},
    {{10, 0, DSI}, {1, 0, BIN}, true, 0, "9", DSI},
    {{10, 0, BIN}, {1, 0, DSI}, true, 0, "9", BIN},
    {{0, 0, DSI}, {50, 0, DSI}, true, 0, "-50", DSI},
    {{50, 0, DSI}, {0, 0, DSI}, true, 0, "50", DSI},
    {{0, 0, DSI}, {0, 0, DSI}, true, 0, "0", DSI},
    /* upstream TestQuantityAddZeroPreservesSuffix / SubZero: a zero receiver takes b's format */
    {{100, -3, DSI}, {0, 0, DSI}, false, 0, "100m", DSI},
    {{0, 0, DSI}, {100, -3, DSI}, false, 0, "100m", DSI},
    {{1073741824, 0, BIN}, {0, 0, DSI}, false, 0, "1Gi", BIN},
    {{0, 0, DSI}, {1073741824, 0, BIN}, false, 0, "1Gi", BIN},
    {{0, 0, DSI}, {1073741824, 0, BIN}, true, 0, "-1Gi", BIN},
    {{0, 0, BIN}, {0, 0, DEX}, false, 0, "0", DEX},
    {{0, 0, BIN}, {0, 0, DEX}, true, 0, "0", DEX},
    /* mixed formats keep the receiver's */
    {{1024, 0, BIN}, {15, -1, DSI}, false, 0, "1025500m", BIN}, /* 1025.5 prints as DecimalSI */
    {{1073741824, 0, BIN}, {1048576, 0, BIN}, false, 0, "1025Mi", BIN},
    {{1, 9, DSI}, {1073741824, 0, BIN}, false, 0, "2073741824", DSI},
    {{1073741824, 0, BIN}, {1, 9, DSI}, false, 0, "2073741824", BIN}, /* 2^9 * 4050277 */
    {{1, 3, DEX}, {1, 3, DSI}, false, 0, "2e3", DEX},
    {{15, -1, DSI}, {5, -1, DSI}, false, 0, "2", DSI},
    {{1, 0, DSI}, {1, -9, DSI}, false, 0, "1000000001n", DSI},
    {{1, 18, DSI}, {1, 0, DSI}, false, 0, "1000000000000000001", DSI},
    {{1, 18, DSI}, {1, 0, DSI}, true, 0, "999999999999999999", DSI},
    {{9, 19, DSI}, {9, 18, DSI}, true, 0, "81E", DSI},
    /* overflow of int64 that the exact path still represents */
    {{5, 18, DSI}, {5, 18, DSI}, false, 0, "10E", DSI},
    {{5000000000000000000, 0, DSI}, {5000000000000000000, 0, DSI}, false, 0, "10E", DSI},
    {{9223372036854775800, 0, DSI}, {10, 0, DSI}, false, 0, "9223372036854775810000m", DSI},
    {{-9223372036854775800, 0, DSI}, {10, 0, DSI}, true, 0, "-9223372036854775810000m", DSI},
    {{922337203685477581, 1, DSI}, {-3, 0, DSI}, false, 0, "9223372036854775807", DSI},
    {{INT64_MIN, 0, DSI}, {INT64_MIN, 0, DSI}, true, 0, "0", DSI},
    {{-1, 0, DSI}, {INT64_MIN, 0, DSI}, true, 0, "9223372036854775807", DSI},
    {{INT64_MAX, 0, DSI}, {INT64_MAX, 0, DSI}, true, 0, "0", DSI},
    {{INT64_MIN, 0, BIN}, {1, 0, DSI}, false, 0, "-9223372036854775807", BIN},
    /* and the sums it cannot represent */
    {{INT64_MAX, 0, DSI}, {1, 0, DSI}, false, -ERANGE, NULL, DSI},
    {{INT64_MIN, 0, DSI}, {-1, 0, DSI}, false, -ERANGE, NULL, DSI},
    {{INT64_MIN, 0, DSI}, {1, 0, DSI}, true, -ERANGE, NULL, DSI},
    {{INT64_MAX, 0, DSI}, {INT64_MAX, 0, DSI}, false, -ERANGE, NULL, DSI},
    {{INT64_MIN, 0, DSI}, {INT64_MIN, 0, DSI}, false, -ERANGE, NULL, DSI},
    {{INT64_MAX, 1, DSI}, {INT64_MAX, 1, DSI}, false, -ERANGE, NULL, DSI},
    {{1, 30, DSI}, {1, 0, DSI}, false, -ERANGE, NULL, DSI},
    {{1, 19, DSI}, {1, 0, DSI}, false, -ERANGE, NULL, DSI},
    {{1, 20, DSI}, {1, 1, DSI}, false, -ERANGE, NULL, DSI},
    {{0, 0, DSI}, {INT64_MIN, 0, BIN}, true, -ERANGE, NULL, DSI}, /* 2^63; format untouched */
    {{1, 0, DSI}, {INT64_MIN, 0, DSI}, true, -ERANGE, NULL, DSI},
    {{10, 0, DSI}, {INT64_MIN, -1, DSI}, true, -ERANGE, NULL, DSI},
    {{1, INT32_MAX, DEX}, {1, INT32_MIN, DEX}, false, -ERANGE, NULL, DSI},
    {{1, 30, DSI}, {-1, 30, DSI}, false, 0, "0", DSI},
    {{1, INT32_MAX, DEX}, {9, INT32_MAX, DEX}, false, 0, "100e2147483646", DEX},
};

static void test_add_sub(void **state)
{
    char buf[QUANTITY_STR_MAX], msg[160];

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(addsub_rows); i++) {
        const struct addsub_row *row = &addsub_rows[i];
        struct quantity a = {.value = row->a.v, .scale = row->a.s, .format = row->a.f};
        struct quantity b = {.value = row->b.v, .scale = row->b.s, .format = row->b.f};
        struct quantity before = a;
        int r = row->sub ? quantity_sub(&a, &b) : quantity_add(&a, &b);

        (void)snprintf(msg, sizeof(msg), "row %zu: {%lld,%d} %c {%lld,%d} rc %d", i,
                       (long long)row->a.v, row->a.s, row->sub ? '-' : '+', (long long)row->b.v,
                       row->b.s, r);
        if (r != row->rc)
            fail_row("add_sub", "", msg);
        if (r < 0) {
            if (memcmp(&a, &before, sizeof(a)) != 0)
                fail_row("add_sub", "changed on failure", msg);
            continue;
        }
        (void)quantity_format(&a, buf);
        if (strcmp(buf, row->out) != 0 || a.format != row->f)
            fail_row("add_sub", buf, msg);
    }
}

/*
 * Upstream TestAddSubRoundTrip(AcrossScales): adding then subtracting the same terms cancels. The
 * terms come from a fixed linear congruential sequence so failures reproduce.
 */
static void test_add_sub_round_trip(void **state)
{
    uint64_t x = 88172645463325252ULL;

    (void)state;
    for (int k = -10; k <= 10; k++) {
        struct quantity acc = {0}, t;
        int64_t terms[100];
        int added = 0;

        for (int i = 0; i < 100; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            terms[i] = (int64_t)(x >> 40); /* small enough that 100 of them fit */
            quantity_from_scaled(terms[i], k, &t);
            if (quantity_add(&acc, &t) == 0)
                added++;
        }
        assert_int_equal(added, 100);
        for (int i = 0; i < 100; i++) {
            quantity_from_scaled(terms[i], k, &t);
            assert_int_equal(quantity_sub(&acc, &t), 0);
        }
        assert_true(quantity_is_zero(&acc));
    }
}

/* ---- conversions ---- */

#define RANGE INT64_MIN /* marks an expected -ERANGE in the tables below */

struct value_row {
    const char *in;
    int64_t value, milli;
};

static const struct value_row value_rows[] = {
    /* upstream TestNegativeValueRoundsAwayFromZero */
    {"-.484785E-7466", -1, -1},
    {".484785E-7466", 1, 1},
    {"-.484785E-1", -1, -49},
    {".484785E-1", 1, 49},
    {"-0.0005", -1, -1},
    {"0.0005", 1, 1},
    {"-1500m", -2, -1500},
    {"1500m", 2, 1500},
    /* (upstream's +-9.5000000001Gi rows need 20 digits: see test_parse_err) */
    {"-9.5Gi", -10200547328, -10200547328000},
    {"1.3Gi", 1395864372, 1395864371200},
    {"-1", -1, -1000},
    {"1", 1, 1000},
    {"0", 0, 0},
    /* by hand */
    {"1.5m", 1, 2},
    {"-1.5m", -1, -2},
    {"100m", 1, 100},
    {"1n", 1, 1},
    {"-1n", -1, -1},
    {"0.1", 1, 100},
    {"2.5", 3, 2500},
    {"-2.5", -3, -2500},
    {"1Gi", 1073741824, 1073741824000},
    {"1.5Gi", 1610612736, 1610612736000},
    {"1Ki", 1024, 1024000},
    {"9223372036854775807", INT64_MAX, RANGE},
    {"9223372036854775807m", 9223372036854776, INT64_MAX},
    {"-9223372036854775807m", -9223372036854776, -INT64_MAX},
    {"9223372036854775.807", 9223372036854776, INT64_MAX},
    {"9223372036854776", 9223372036854776, RANGE},
    {"1e18", 1000000000000000000, RANGE},
    {"1e19", RANGE, RANGE},
    {"-1e19", RANGE, RANGE},
    {"1e2147483647", RANGE, RANGE},
    {"1e-2147483647", 1, 1},
    {"8Ei", INT64_MAX, RANGE},
    {"-8Ei", -INT64_MAX, RANGE},
    {"-9223372036854775808000", RANGE, RANGE},
};

static void test_value_milli(void **state)
{
    char msg[120];

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(value_rows); i++) {
        const struct value_row *row = &value_rows[i];
        struct quantity q;
        int64_t v = 12345, m = 12345;
        int rv, rm;

        assert_int_equal(quantity_parse(row->in, &q), 0);
        rv = quantity_value(&q, &v);
        rm = quantity_milli(&q, &m);
        if (rv != (row->value == RANGE ? -ERANGE : 0) || (rv == 0 && v != row->value) ||
            (rv < 0 && v != 12345) || rm != (row->milli == RANGE ? -ERANGE : 0) ||
            (rm == 0 && m != row->milli) || (rm < 0 && m != 12345)) {
            (void)snprintf(msg, sizeof(msg), "value rc %d %lld, milli rc %d %lld", rv, (long long)v,
                           rm, (long long)m);
            fail_row("value/milli", row->in, msg);
        }
    }
}

struct scaled_row {
    int64_t v;
    int32_t s, to;
    int rc;
    int64_t want;
};

static const struct scaled_row scaled_rows[] = {
    /* upstream TestScaledValue: 1 at one scale read at another */
    {1, -9, -9, 0, 1},
    {1, -9, -6, 0, 1},
    {1, -9, -3, 0, 1},
    {1, -9, 0, 0, 1},
    {1, -6, -9, 0, 1000},
    {1, -6, -6, 0, 1},
    {1, -6, -3, 0, 1},
    {1, -6, 0, 0, 1},
    {1, -3, -9, 0, 1000000},
    {1, -3, -6, 0, 1000},
    {1, -3, -3, 0, 1},
    {1, -3, 0, 0, 1},
    {1, 0, -9, 0, 1000000000},
    {1, 0, -6, 0, 1000000},
    {1, 0, -3, 0, 1000},
    {1, 0, 0, 0, 1},
    {1, 2, -2, 0, 10000},
    /* by hand */
    {INT64_MIN, -3, 0, 0, -9223372036854776},
    {INT64_MIN, 0, -3, -ERANGE, 0},
    {INT64_MIN, 0, 0, 0, INT64_MIN},
    {5, 0, 1, 0, 1},
    {-5, 0, 1, 0, -1},
    {1, 0, 19, 0, 1},
    {1, 0, INT32_MAX, 0, 1},
    {-1, INT32_MIN, INT32_MAX, 0, -1},
    {1, INT32_MAX, INT32_MIN, -ERANGE, 0},
    {12, 0, -18, -ERANGE, 0},
    {9, 0, -18, 0, 9000000000000000000},
    {0, INT32_MAX, INT32_MIN, 0, 0},
};

static void test_scaled_value(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(scaled_rows); i++) {
        const struct scaled_row *row = &scaled_rows[i];
        struct quantity q = {.value = row->v, .scale = row->s};
        int64_t got = 7;
        int r = quantity_scaled_value(&q, row->to, &got);

        assert_int_equal(r, row->rc);
        assert_int_equal(got, row->rc ? 7 : row->want);
    }
}

static void test_constructors(void **state)
{
    struct quantity q;
    char buf[QUANTITY_STR_MAX];
    int64_t v;

    (void)state;
    /* upstream TestMilliNewSet: the milli value survives a round trip through the string */
    quantity_from_milli(1234000, DSI, &q);
    assert_int_equal(q.value, 1234000);
    assert_int_equal(q.scale, -3);
    assert_int_equal(q.format, DSI);
    (void)quantity_format(&q, buf);
    assert_string_equal(buf, "1234");
    assert_int_equal(quantity_parse(buf, &q), 0);
    assert_int_equal(quantity_milli(&q, &v), 0);
    assert_int_equal(v, 1234000);

    quantity_from_int(1048576, BIN, &q);
    assert_int_equal(q.value, 1048576);
    assert_int_equal(q.scale, 0);
    assert_int_equal(q.format, BIN);
    (void)quantity_format(&q, buf);
    assert_string_equal(buf, "1Mi");
    assert_int_equal(quantity_parse(buf, &q), 0);
    assert_int_equal(quantity_value(&q, &v), 0);
    assert_int_equal(v, 1048576);

    quantity_from_scaled(1000, QUANTITY_SCALE_NANO, &q);
    assert_int_equal(q.format, DSI);
    (void)quantity_format(&q, buf);
    assert_string_equal(buf, "1u");

    /* predicates */
    assert_true(quantity_is_zero(&(struct quantity){.value = 0, .scale = 40}));
    assert_false(quantity_is_zero(&(struct quantity){.value = 1, .scale = -40}));
    assert_int_equal(quantity_sign(&(struct quantity){.value = -3}), -1);
    assert_int_equal(quantity_sign(&(struct quantity){.value = INT64_MIN}), -1);
    assert_int_equal(quantity_sign(&(struct quantity){.value = 0, .scale = 9}), 0);
    assert_int_equal(quantity_sign(&(struct quantity){.value = 2, .scale = -9}), 1);
}

struct double_row {
    int64_t v;
    int32_t s;
    double want;
};

static void test_as_double(void **state)
{
    /* upstream TestQuantityAsApproximateFloat64 */
    const struct double_row rows[] = {
        {0, 0, 0.0},
        {0, 500, 0.0},
        {0, -500, 0.0},
        {1, 0, 1.0},
        {1024, 0, 1024.0},
        {8192, 0, 8192.0},
        {7340032, 0, 7340032.0},
        {7340032, 1, 73400320.0},
        {7340032, 4, 73400320000.0},
        {7340032, 8, 734003200000000.0},
        {7340032, -8, 7340032.0 / 100000000.0},
        {INT64_MAX, 0, 9223372036854775807.0},
        {12, 18, 1.2e19},
        {12, 500, HUGE_VAL},
        {-12, 500, -HUGE_VAL},
        {1, -400, 0.0},
    };
    struct quantity q;

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        q = (struct quantity){.value = rows[i].v, .scale = rows[i].s};
        assert_true(quantity_as_double(&q) == rows[i].want);
    }
    /* upstream TestStringQuantityAsApproximateFloat64 */
    assert_int_equal(quantity_parse("2Ki", &q), 0);
    assert_true(quantity_as_double(&q) == 2048.0);
    assert_int_equal(quantity_parse("1.1Ki", &q), 0);
    assert_true(quantity_as_double(&q) == 1126.4);
    assert_int_equal(quantity_parse("1Mi", &q), 0);
    assert_true(quantity_as_double(&q) == 1.048576e+06);
    assert_int_equal(quantity_parse("2Gi", &q), 0);
    assert_true(quantity_as_double(&q) == 2.147483648e+09);
    assert_int_equal(quantity_parse("100m", &q), 0);
    assert_true(quantity_as_double(&q) == 0.1);
    q = (struct quantity){.value = 1, .scale = -323};
    assert_true(quantity_as_double(&q) > 0.0 && quantity_as_double(&q) < 1e-322);
}

/*
 * The whole-number fast path ("250m", "512Mi") must agree with the general parser. Writing the
 * same number with a ".0" fraction (or, at 18 digits, where that would make 19 and hit
 * upstream's 19-digit rule, with a leading zero) forces the general path; both must yield the
 * same value, scale and format, for every suffix, sign and digit count the fast path takes.
 */
static void test_fast_path_agrees(void **state)
{
    static const char *const suffixes[] = {"",  "n", "u",  "m",  "k",  "M",  "G",  "T",
                                           "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    static const char *const signs[] = {"", "+", "-"};
    uint64_t seed = 42;
    (void)state;

    for (size_t s = 0; s < sizeof(suffixes) / sizeof(suffixes[0]); s++) {
        for (int digits = 1; digits <= 18; digits++) {
            for (int rep = 0; rep < 40; rep++) {
                char num[24], fast[64], slow[64];
                struct quantity a, b;
                int ra, rb;

                for (int d = 0; d < digits; d++) {
                    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                    num[d] = (char)('0' + (seed >> 33) % 10);
                }
                if (rep % 5 == 0) /* trailing zeros exercise normalisation */
                    for (int d = digits / 2; d < digits; d++)
                        num[d] = '0';
                num[digits] = '\0';
                (void)snprintf(fast, sizeof(fast), "%s%s%s", signs[rep % 3], num, suffixes[s]);
                (void)snprintf(slow, sizeof(slow), digits < 18 ? "%s%s.0%s" : "%s0%s%s",
                               signs[rep % 3], num, suffixes[s]);
                ra = quantity_parse(fast, &a);
                rb = quantity_parse(slow, &b);
                if (ra != rb ||
                    (ra == 0 && (a.value != b.value || a.scale != b.scale || a.format != b.format)))
                    fail_msg("%s -> %d {%lld, %d, %d} but %s -> %d {%lld, %d, %d}", fast, ra,
                             (long long)a.value, a.scale, (int)a.format, slow, rb,
                             (long long)b.value, b.scale, (int)b.format);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_ok),      cmocka_unit_test(test_fast_path_agrees),
        cmocka_unit_test(test_parse_n),       cmocka_unit_test(test_parse_err),
        cmocka_unit_test(test_format),        cmocka_unit_test(test_canonicalize),
        cmocka_unit_test(test_format_bounds), cmocka_unit_test(test_cmp),
        cmocka_unit_test(test_add_sub),       cmocka_unit_test(test_add_sub_round_trip),
        cmocka_unit_test(test_value_milli),   cmocka_unit_test(test_scaled_value),
        cmocka_unit_test(test_constructors),  cmocka_unit_test(test_as_double),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
