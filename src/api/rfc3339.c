/*
 * RFC 3339 parsing and printing. Parsing follows Go's time.Parse for the RFC3339 layout
 * (src/time/format_rfc3339.go parseRFC3339 and its fallback, the general parser in
 * src/time/format.go), which is what metav1.Time.UnmarshalJSON uses. Civil dates are converted
 * with Howard Hinnant's days_from_civil / civil_from_days algorithms so the result never depends
 * on TZ.
 */
#include "api/rfc3339.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"

#define SECS_PER_DAY 86400

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_leap(int64_t y)
{
    return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

static int days_in_month(int m, int64_t y)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

    if (m == 2 && is_leap(y))
        return 29;
    return days[m - 1];
}

/* Days since 1970-01-01 of the proleptic Gregorian date y-m-d (m 1..12, d 1..31). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* Inverse of days_from_civil. */
static void civil_from_days(int64_t z, int64_t *ret_y, int *ret_m, int *ret_d)
{
    int64_t era, doe, yoe, y, doy, mp;
    int m;

    z += 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = z - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    y = yoe + era * 400;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    *ret_d = (int)(doy - (153 * mp + 2) / 5 + 1);
    m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *ret_m = m;
    *ret_y = y + (m <= 2);
}

/* Exactly n digits at *pp; advances past them. */
static bool take_digits(const char **pp, int n, int *ret)
{
    const char *p = *pp;
    int v = 0;

    for (int i = 0; i < n; i++) {
        if (!is_digit(p[i]))
            return false;
        v = v * 10 + (p[i] - '0');
    }
    *pp = p + n;
    *ret = v;
    return true;
}

static bool take_char(const char **pp, char c)
{
    if (**pp != c)
        return false;
    (*pp)++;
    return true;
}

int rfc3339_parse(const char *s, int64_t *ret_sec, int32_t *ret_nsec)
{
    const char *p = s;
    int year, month, day, hour, min, sec, nsec = 0, off = 0;

    if (!s)
        return -EINVAL;
    if (!take_digits(&p, 4, &year) || !take_char(&p, '-'))
        return -EINVAL;
    if (!take_digits(&p, 2, &month) || month < 1 || month > 12 || !take_char(&p, '-'))
        return -EINVAL;
    if (!take_digits(&p, 2, &day) || !take_char(&p, 'T'))
        return -EINVAL;
    /* Layout element "15" (stdHour) takes one or two digits. */
    if (!is_digit(*p))
        return -EINVAL;
    if (is_digit(p[1]))
        (void)take_digits(&p, 2, &hour);
    else
        (void)take_digits(&p, 1, &hour);
    if (hour > 23 || !take_char(&p, ':'))
        return -EINVAL;
    if (!take_digits(&p, 2, &min) || min > 59 || !take_char(&p, ':'))
        return -EINVAL;
    if (!take_digits(&p, 2, &sec) || sec > 59)
        return -EINVAL;

    /* A fraction the layout does not mention: '.' or ',' then digits, ninth digit onwards
     * ignored. */
    if ((*p == '.' || *p == ',') && is_digit(p[1])) {
        int n = 0;

        p++;
        for (; is_digit(*p); p++, n++)
            if (n < 9)
                nsec = nsec * 10 + (*p - '0');
        for (; n < 9; n++)
            nsec *= 10;
    }

    if (*p == 'Z') {
        p++;
    } else {
        int sign, hh, mm;

        if (*p == '+')
            sign = 1;
        else if (*p == '-')
            sign = -1;
        else
            return -EINVAL;
        p++;
        if (!take_digits(&p, 2, &hh) || !take_char(&p, ':') || !take_digits(&p, 2, &mm))
            return -EINVAL;
        /* Go tests with > so offsets of 24 hours or 60 minutes pass. */
        if (hh > 24 || mm > 60)
            return -EINVAL;
        off = sign * (hh * 3600 + mm * 60);
    }
    if (*p)
        return -EINVAL;
    if (day < 1 || day > days_in_month(month, year))
        return -EINVAL;

    *ret_sec = days_from_civil(year, month, day) * SECS_PER_DAY +
               (int64_t)(hour * 3600 + min * 60 + sec - off);
    *ret_nsec = nsec;
    return 0;
}

/*
 * Formats sec in UTC; frac_digits < 0 trims the nanosecond fraction (RFC3339Nano), 0 prints
 * none, 6 prints exactly six (RFC3339Micro, truncated).
 */
static size_t format_utc(int64_t sec, int32_t nsec, int frac_digits, char buf[RFC3339_STR_MAX])
{
    int64_t days = sec / SECS_PER_DAY, rem = sec % SECS_PER_DAY, year;
    int month, day, n, len;
    char frac[11] = "";

    CHECK(nsec >= 0 && nsec < 1000000000);
    if (rem < 0) {
        rem += SECS_PER_DAY;
        days--;
    }
    civil_from_days(days, &year, &month, &day);

    if (frac_digits == 6) {
        n = snprintf(frac, sizeof(frac), ".%06d", (int)(nsec / 1000));
        CHECK(n == 7);
    } else if (frac_digits < 0 && nsec > 0) {
        n = snprintf(frac, sizeof(frac), ".%09d", (int)nsec);
        CHECK(n == 10);
        while (frac[n - 1] == '0')
            frac[--n] = '\0';
    }

    /* Go's appendInt(year, 4): sign, then at least four digits. */
    len = snprintf(buf, RFC3339_STR_MAX, "%s%04lld-%02d-%02dT%02d:%02d:%02d%sZ",
                   year < 0 ? "-" : "", year < 0 ? -(long long)year : (long long)year, month, day,
                   (int)(rem / 3600), (int)(rem / 60 % 60), (int)(rem % 60), frac);
    CHECK(len > 0 && len < RFC3339_STR_MAX);
    return (size_t)len;
}

size_t rfc3339_format(int64_t sec, char buf[RFC3339_STR_MAX])
{
    return format_utc(sec, 0, 0, buf);
}

size_t rfc3339_format_nano(int64_t sec, int32_t nsec, char buf[RFC3339_STR_MAX])
{
    return format_utc(sec, nsec, -1, buf);
}

size_t rfc3339_format_micro(int64_t sec, int32_t nsec, char buf[RFC3339_STR_MAX])
{
    return format_utc(sec, nsec, 6, buf);
}
