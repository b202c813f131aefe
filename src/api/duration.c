/*
 * Go duration strings. Mirrors time.ParseDuration and Duration.String from Go's
 * src/time/format.go and src/time/time.go so that every metav1.Duration we read or write is the
 * same string a Go component would produce.
 */
#include "api/duration.h"

#include <stdbool.h>
#include <string.h>

#include "base/base.h"

#define NS_PER_US 1000ULL
#define NS_PER_MS 1000000ULL
#define NS_PER_S  1000000000ULL
#define TWO_63    (1ULL << 63)

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Go's unitMap; 0 when the unit is unknown. */
static uint64_t unit_ns(const char *u, size_t n)
{
    static const struct {
        const char *name;
        uint64_t ns;
    } units[] = {
        {"ns", 1},
        {"us", NS_PER_US},
        {"\xc2\xb5s", NS_PER_US}, /* U+00B5 micro sign */
        {"\xce\xbcs", NS_PER_US}, /* U+03BC Greek small letter mu */
        {"ms", NS_PER_MS},
        {"s", NS_PER_S},
        {"m", 60 * NS_PER_S},
        {"h", 3600 * NS_PER_S},
    };

    for (size_t i = 0; i < ARRAY_SIZE(units); i++)
        if (strlen(units[i].name) == n && memcmp(units[i].name, u, n) == 0)
            return units[i].ns;
    return 0;
}

/*
 * One "<int>[.<frac>]<unit>" group starting at *pp, added to *d (which stays <= 2^63). Go wraps
 * around when two groups of exactly 2^63 are added; we report -ERANGE there instead.
 */
static int parse_group(const char **pp, uint64_t *d)
{
    const char *p = *pp, *start, *u;
    uint64_t v = 0, f = 0, unit;
    double scale = 1;
    bool pre, post = false;

    /* The next character must be [0-9.]. */
    if (!(*p == '.' || is_digit(*p)))
        return -EINVAL;

    start = p;
    for (; is_digit(*p); p++) {
        if (v > TWO_63 / 10)
            return -ERANGE;
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > TWO_63)
            return -ERANGE;
    }
    pre = p != start;

    if (*p == '.') {
        bool overflow = false;

        p++;
        start = p;
        /* Like Go's leadingFraction: past 2^63 digits only stop adding precision. */
        for (; is_digit(*p); p++) {
            uint64_t y;

            if (overflow)
                continue;
            if (f > (TWO_63 - 1) / 10) {
                overflow = true;
                continue;
            }
            y = f * 10 + (uint64_t)(*p - '0');
            if (y > TWO_63) {
                overflow = true;
                continue;
            }
            f = y;
            scale *= 10;
        }
        post = p != start;
    }
    if (!pre && !post)
        return -EINVAL; /* no digits, e.g. ".s" or "-.s" */

    u = p;
    while (*p && *p != '.' && !is_digit(*p))
        p++;
    if (p == u)
        return -EINVAL; /* missing unit */
    unit = unit_ns(u, (size_t)(p - u));
    if (!unit)
        return -EINVAL; /* unknown unit */

    if (v > TWO_63 / unit)
        return -ERANGE;
    v *= unit;
    if (f > 0) {
        /* float64 keeps fractions of hours nanosecond-accurate; same expression as Go. */
        v += (uint64_t)((double)f * ((double)unit / scale));
        if (v > TWO_63)
            return -ERANGE;
    }
    if (v > TWO_63 - *d)
        return -ERANGE;
    *d += v;
    *pp = p;
    return 0;
}

int duration_parse(const char *s, int64_t *ret_ns)
{
    const char *p = s;
    uint64_t d = 0;
    bool neg = false;
    int r;

    if (!s)
        return -EINVAL;
    if (*p == '-' || *p == '+') {
        neg = *p == '-';
        p++;
    }
    /* Special case: a bare "0" needs no unit. */
    if (strcmp(p, "0") == 0) {
        *ret_ns = 0;
        return 0;
    }
    if (!*p)
        return -EINVAL;
    while (*p) {
        r = parse_group(&p, &d);
        if (r < 0)
            return r;
    }
    if (neg) {
        *ret_ns = d == TWO_63 ? INT64_MIN : -(int64_t)d;
        return 0;
    }
    if (d > (uint64_t)INT64_MAX)
        return -ERANGE;
    *ret_ns = (int64_t)d;
    return 0;
}

/*
 * Writes the fraction v/10^prec right-aligned ending at buf[w], omitting trailing zeros and the
 * point when the fraction is zero (Go's fmtFrac). Returns the new start; *v becomes v/10^prec.
 */
static size_t fmt_frac(char *buf, size_t w, uint64_t *v, int prec)
{
    bool print = false;

    for (int i = 0; i < prec; i++) {
        unsigned digit = (unsigned)(*v % 10);

        print = print || digit != 0;
        if (print)
            buf[--w] = (char)('0' + digit);
        *v /= 10;
    }
    if (print)
        buf[--w] = '.';
    return w;
}

/* Writes v in decimal right-aligned ending at buf[w] (Go's fmtInt). Returns the new start. */
static size_t fmt_int(char *buf, size_t w, uint64_t v)
{
    if (v == 0) {
        buf[--w] = '0';
        return w;
    }
    while (v > 0) {
        buf[--w] = (char)('0' + v % 10);
        v /= 10;
    }
    return w;
}

size_t duration_format(int64_t ns, char buf[DURATION_STR_MAX])
{
    char tmp[DURATION_STR_MAX];
    size_t w = sizeof(tmp);
    uint64_t u = (uint64_t)ns;
    bool neg = ns < 0;
    size_t len;

    if (neg)
        u = 0 - u;

    if (u < NS_PER_S) {
        /* Below one second use smaller units, like "1.2ms". */
        int prec;

        tmp[--w] = 's';
        if (u == 0) {
            tmp[--w] = '0';
            goto out;
        } else if (u < NS_PER_US) {
            prec = 0;
            tmp[--w] = 'n';
        } else if (u < NS_PER_MS) {
            prec = 3;
            tmp[--w] = '\xb5'; /* U+00B5 micro sign, two bytes */
            tmp[--w] = '\xc2';
        } else {
            prec = 6;
            tmp[--w] = 'm';
        }
        w = fmt_frac(tmp, w, &u, prec);
        w = fmt_int(tmp, w, u);
    } else {
        tmp[--w] = 's';
        w = fmt_frac(tmp, w, &u, 9);
        /* u is now whole seconds. */
        w = fmt_int(tmp, w, u % 60);
        u /= 60;
        if (u > 0) {
            tmp[--w] = 'm';
            w = fmt_int(tmp, w, u % 60);
            u /= 60;
            /* Stop at hours because days can be different lengths. */
            if (u > 0) {
                tmp[--w] = 'h';
                w = fmt_int(tmp, w, u);
            }
        }
    }
out:
    if (neg)
        tmp[--w] = '-';
    len = sizeof(tmp) - w;
    CHECK(len < DURATION_STR_MAX);
    memcpy(buf, tmp + w, len);
    buf[len] = '\0';
    return len;
}
