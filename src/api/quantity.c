/*
 * resource.Quantity in C. The rules mirror k8s.io/apimachinery/pkg/api/resource: the scanner of
 * parseQuantityString() and the branches of ParseQuantity() in quantity.go decide what is an
 * error; the arithmetic is exact. Where upstream switches to inf.Dec we either still get the exact
 * int64 * 10^int32 answer or return -ERANGE. The few places that need more than 64 bits (BinarySI
 * fractions, BinarySI printing, adds that overflow) use a small fixed-size decimal bignum.
 */
#include "api/quantity.h"

#include <math.h>
#include <string.h>

#include "base/base.h"

/* The largest multiple of 3 an exponent suffix may carry and still parse (|exponent| < 2^31). */
#define INT32_MAX_PRINTABLE_EXP 2147483646
#define ABS_INT64_MIN           ((uint64_t)INT64_MAX + 1)

static const uint64_t pow10_u64[20] = {
    1ULL,
    10ULL,
    100ULL,
    1000ULL,
    10000ULL,
    100000ULL,
    1000000ULL,
    10000000ULL,
    100000000ULL,
    1000000000ULL,
    10000000000ULL,
    100000000000ULL,
    1000000000000ULL,
    10000000000000ULL,
    100000000000000ULL,
    1000000000000000ULL,
    10000000000000000ULL,
    100000000000000000ULL,
    1000000000000000000ULL,
    10000000000000000000ULL,
};

/* ---- a fixed-size unsigned bignum in base 10^9, little-endian limbs (up to 90 digits) ---- */

#define BN_BASE  1000000000U
#define BN_LIMBS 10

struct bn {
    uint32_t d[BN_LIMBS];
};

static void bn_set_u64(struct bn *b, uint64_t v)
{
    memset(b, 0, sizeof(*b));
    for (int i = 0; v; i++) {
        b->d[i] = (uint32_t)(v % BN_BASE);
        v /= BN_BASE;
    }
}

static bool bn_is_zero(const struct bn *b)
{
    for (int i = 0; i < BN_LIMBS; i++)
        if (b->d[i])
            return false;
    return true;
}

/* b *= m for m <= 10^9. Callers size their numbers well below 90 digits; overflow is a bug. */
static void bn_mul_small(struct bn *b, uint32_t m)
{
    uint64_t carry = 0;

    for (int i = 0; i < BN_LIMBS; i++) {
        uint64_t t = (uint64_t)b->d[i] * m + carry;
        b->d[i] = (uint32_t)(t % BN_BASE);
        carry = t / BN_BASE;
    }
    CHECK(carry == 0);
}

static void bn_mul_pow10(struct bn *b, unsigned n)
{
    for (; n >= 9; n -= 9)
        bn_mul_small(b, BN_BASE);
    if (n)
        bn_mul_small(b, (uint32_t)pow10_u64[n]);
}

static void bn_add(struct bn *a, const struct bn *b)
{
    uint32_t carry = 0;

    for (int i = 0; i < BN_LIMBS; i++) {
        uint32_t t = a->d[i] + b->d[i] + carry;
        carry = t >= BN_BASE;
        a->d[i] = carry ? t - BN_BASE : t;
    }
    CHECK(carry == 0);
}

static void bn_add_small(struct bn *a, uint32_t v)
{
    struct bn t;

    bn_set_u64(&t, v);
    bn_add(a, &t);
}

/* a -= b; requires a >= b. */
static void bn_sub(struct bn *a, const struct bn *b)
{
    uint32_t borrow = 0;

    for (int i = 0; i < BN_LIMBS; i++) {
        uint32_t sub = b->d[i] + borrow;
        borrow = a->d[i] < sub;
        a->d[i] = borrow ? a->d[i] + BN_BASE - sub : a->d[i] - sub;
    }
    CHECK(borrow == 0);
}

static int bn_cmp(const struct bn *a, const struct bn *b)
{
    for (int i = BN_LIMBS - 1; i >= 0; i--)
        if (a->d[i] != b->d[i])
            return a->d[i] < b->d[i] ? -1 : 1;
    return 0;
}

/* b /= d for 0 < d <= 10^9; returns the remainder. */
static uint32_t bn_div_small(struct bn *b, uint32_t d)
{
    uint64_t rem = 0;

    for (int i = BN_LIMBS - 1; i >= 0; i--) {
        uint64_t cur = rem * BN_BASE + b->d[i];
        b->d[i] = (uint32_t)(cur / d);
        rem = cur % d;
    }
    return (uint32_t)rem;
}

static bool bn_to_u64(const struct bn *b, uint64_t *ret)
{
    uint64_t v = 0;

    for (int i = BN_LIMBS - 1; i >= 0; i--) {
        if (v > (UINT64_MAX - b->d[i]) / BN_BASE)
            return false;
        v = v * BN_BASE + b->d[i];
    }
    *ret = v;
    return true;
}

/* Decimal digits of b (at least "0") into buf; returns the length, or 0 if it needs > cap. */
static size_t bn_to_str(const struct bn *b, char *buf, size_t cap)
{
    struct bn t = *b;
    char tmp[BN_LIMBS * 9];
    size_t n = 0;

    do {
        tmp[n++] = (char)('0' + bn_div_small(&t, 10));
    } while (!bn_is_zero(&t));
    if (n > cap)
        return 0;
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}

/* ---- small helpers ---- */

static uint64_t mag_u64(int64_t v)
{
    return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

static int ndigits_u64(uint64_t v)
{
    int n = 1;

    while (n < 20 && v >= pow10_u64[n])
        n++;
    return n;
}

/* Moves trailing decimal zeros of a non-zero m into *e. */
static void strip_zeros(uint64_t *m, int64_t *e)
{
    while (*m % 10 == 0) {
        *m /= 10;
        (*e)++;
    }
}

/*
 * Stores (neg ? -m : m) * 10^e into *ret, normalised. -ERANGE when it does not fit: the mantissa
 * is limited to int64, and an exponent above int32 first gives zeros back to the mantissa.
 */
static int pack_u64(bool neg, uint64_t m, int64_t e, enum quantity_format f, struct quantity *ret)
{
    uint64_t limit = neg ? ABS_INT64_MIN : (uint64_t)INT64_MAX;

    if (m == 0) {
        *ret = (struct quantity){.value = 0, .scale = 0, .format = f};
        return 0;
    }
    strip_zeros(&m, &e);
    if (m > limit)
        return -ERANGE;
    while (e > INT32_MAX && m <= limit / 10) {
        m *= 10;
        e--;
    }
    if (e > INT32_MAX || e < INT32_MIN)
        return -ERANGE;
    if (!neg)
        ret->value = (int64_t)m;
    else if (m == ABS_INT64_MIN)
        ret->value = INT64_MIN;
    else
        ret->value = -(int64_t)m;
    ret->scale = (int32_t)e;
    ret->format = f;
    return 0;
}

static int pack_bn(bool neg, struct bn *m, int64_t e, enum quantity_format f, struct quantity *ret)
{
    uint64_t u;

    if (bn_is_zero(m))
        return pack_u64(neg, 0, e, f, ret);
    while (m->d[0] % 10 == 0) {
        (void)bn_div_small(m, 10);
        e++;
    }
    if (!bn_to_u64(m, &u))
        return -ERANGE;
    return pack_u64(neg, u, e, f, ret);
}

/* Three-way comparison of the magnitudes ma * 10^ea and mb * 10^eb, both non-zero. */
static int cmp_mag(uint64_t ma, int64_t ea, uint64_t mb, int64_t eb)
{
    int64_t oa, ob;

    strip_zeros(&ma, &ea);
    strip_zeros(&mb, &eb);
    oa = ndigits_u64(ma) + ea;
    ob = ndigits_u64(mb) + eb;
    if (oa != ob)
        return oa < ob ? -1 : 1;
    /* Same order of magnitude: the exponents differ by at most 18, and scaling the mantissa with
     * the larger exponent up keeps it within the other's digit count, so within uint64. */
    if (ea > eb)
        ma *= pow10_u64[ea - eb];
    else if (eb > ea)
        mb *= pow10_u64[eb - ea];
    return ma < mb ? -1 : ma > mb;
}

/* ---- parsing ---- */

/* What parseQuantityString() in quantity.go splits a string into. */
struct qscan {
    bool neg;
    bool has_digit;  /* the number part holds a digit (else inf.Dec's SetString fails on it) */
    const char *num; /* integer digits without leading zeros; may be empty */
    size_t num_len;
    const char *den; /* fraction digits */
    size_t den_len;
    const char *suf;
    size_t suf_len;
};

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_suffix_letter(char c)
{
    switch (c) {
    case 'e':
    case 'E':
    case 'i':
    case 'n':
    case 'u':
    case 'm':
    case 'k':
    case 'K':
    case 'M':
    case 'G':
    case 'T':
    case 'P':
        return true;
    default:
        return false;
    }
}

/*
 * The scanner is deliberately looser than the documented regular expression, like upstream's:
 * it never checks that the number part holds a digit, so "-" or "Ki" scan fine.
 */
static int scan(const char *s, size_t len, struct qscan *sc)
{
    size_t pos = 0, start;

    memset(sc, 0, sizeof(*sc));
    if (s[0] == '-' || s[0] == '+') {
        sc->neg = s[0] == '-';
        pos++;
    }
    while (pos < len && s[pos] == '0') {
        sc->has_digit = true;
        pos++;
    }
    /* Upstream returns "0" with no suffix as soon as only zeros were left. */
    start = pos;
    while (pos < len && is_digit(s[pos]))
        pos++;
    sc->num = s + start;
    sc->num_len = pos - start;
    if (sc->num_len)
        sc->has_digit = true;
    if (pos < len && s[pos] == '.') {
        start = ++pos;
        while (pos < len && is_digit(s[pos]))
            pos++;
        sc->den = s + start;
        sc->den_len = pos - start;
        if (sc->den_len)
            sc->has_digit = true;
    }
    start = pos;
    while (pos < len && is_suffix_letter(s[pos]))
        pos++;
    if (pos < len && (s[pos] == '-' || s[pos] == '+'))
        pos++;
    while (pos < len && is_digit(s[pos]))
        pos++;
    if (pos < len)
        return -EINVAL;
    sc->suf = s + start;
    sc->suf_len = len - start;
    return 0;
}

/*
 * suffix.go interpret(): the fixed suffixes, then e/E with an integer that strconv.ParseInt
 * accepts and that fits a negatable int32 scale.
 */
static int interpret_suffix(const char *s, size_t n, int *ret_base, int32_t *ret_exp,
                            enum quantity_format *ret_fmt)
{
    static const struct {
        const char *suffix;
        int base;
        int32_t exp;
    } table[] = {
        {"", 10, 0},   {"n", 10, -9}, {"u", 10, -6}, {"m", 10, -3}, {"k", 10, 3},  {"M", 10, 6},
        {"G", 10, 9},  {"T", 10, 12}, {"P", 10, 15}, {"E", 10, 18}, {"Ki", 2, 10}, {"Mi", 2, 20},
        {"Gi", 2, 30}, {"Ti", 2, 40}, {"Pi", 2, 50}, {"Ei", 2, 60},
    };
    size_t i = 1;
    int64_t v = 0;
    bool neg = false;

    for (size_t t = 0; t < ARRAY_SIZE(table); t++) {
        if (strlen(table[t].suffix) == n && memcmp(table[t].suffix, s, n) == 0) {
            *ret_base = table[t].base;
            *ret_exp = table[t].exp;
            *ret_fmt = table[t].base == 2 ? QUANTITY_BINARY_SI : QUANTITY_DECIMAL_SI;
            return 0;
        }
    }
    if (n < 2 || (s[0] != 'e' && s[0] != 'E'))
        return -EINVAL;
    if (s[1] == '+' || s[1] == '-') {
        neg = s[1] == '-';
        i++;
    }
    if (i >= n)
        return -EINVAL;
    for (; i < n; i++) {
        if (!is_digit(s[i]))
            return -EINVAL;
        v = v * 10 + (s[i] - '0');
        if (v > INT32_MAX)
            return -EINVAL;
    }
    *ret_base = 10;
    *ret_exp = (int32_t)(neg ? -v : v);
    *ret_fmt = QUANTITY_DECIMAL_EXPONENT;
    return 0;
}

/* Digit i of the number num ++ den. */
static int digit_at(const struct qscan *sc, size_t i)
{
    return i < sc->num_len ? sc->num[i] - '0' : sc->den[i - sc->num_len] - '0';
}

/* The digits [from, to) of num ++ den as an integer; at most 19 of them. */
static uint64_t digits_u64(const struct qscan *sc, size_t from, size_t to)
{
    uint64_t v = 0;

    for (size_t i = from; i < to; i++)
        v = v * 10 + (uint64_t)digit_at(sc, i);
    return v;
}

/* Whether the 19 digits num ++ den exceed 2^63-1, i.e. whether strconv.ParseInt rejects them. */
static bool exceeds_int64(const struct qscan *sc)
{
    static const char max[] = "9223372036854775807";

    for (size_t i = 0; i < 19; i++) {
        int d = digit_at(sc, i), m = max[i] - '0';
        if (d != m)
            return d > m;
    }
    return false;
}

/* ParseQuantity() for a base-10 suffix (DecimalSI and DecimalExponent). */
static int parse_decimal(const struct qscan *sc, int32_t exp, enum quantity_format fmt,
                         struct quantity *ret)
{
    size_t total = sc->num_len + sc->den_len, first = 0, last, keep;
    size_t eff_num = sc->num_len ? sc->num_len : 1; /* upstream counts an empty integer as "0" */
    int64_t e;

    /* Upstream's int64 fast path runs strconv.ParseInt on up to 19 digits and fails on the ones
     * above 2^63-1; longer numbers and finer scales go through inf.Dec, which needs a digit. */
    if (eff_num + sc->den_len <= 19 && (int64_t)exp - (int64_t)sc->den_len >= QUANTITY_SCALE_NANO) {
        if (sc->num_len && total == 19 && exceeds_int64(sc))
            return -EINVAL;
    } else if (!sc->has_digit) {
        return -EINVAL;
    }

    while (first < total && digit_at(sc, first) == 0)
        first++;
    if (first == total)
        return pack_u64(false, 0, 0, fmt, ret);
    last = total - 1;
    while (digit_at(sc, last) == 0)
        last--;
    /* value = digits[first..last] * 10^e; lengths beyond int64 cannot come from real memory. */
    e = (int64_t)exp - (int64_t)sc->den_len + (int64_t)(total - 1 - last);

    if (e < QUANTITY_SCALE_NANO) {
        /* Round up to 1n, away from zero: the dropped digits end in a non-zero one. */
        int64_t top = (int64_t)(last - first + 1) + e; /* value < 10^top */
        if (top <= QUANTITY_SCALE_NANO)
            return pack_u64(sc->neg, 1, QUANTITY_SCALE_NANO, fmt, ret);
        keep = (size_t)(top - QUANTITY_SCALE_NANO);
        /* Adding 1 to the kept digits turns their trailing 9s into zeros. */
        while (keep && digit_at(sc, first + keep - 1) == 9)
            keep--;
        if (keep > 19)
            return -ERANGE;
        return pack_u64(sc->neg, digits_u64(sc, first, first + keep) + 1, top - (int64_t)keep, fmt,
                        ret);
    }
    if (last - first + 1 > 19)
        return -ERANGE;
    return pack_u64(sc->neg, digits_u64(sc, first, last + 1), e, fmt, ret);
}

/*
 * ceil(0.<den> * 2^exp * 10^9) into *ret: the nano-units a binary fraction adds. From the last
 * digit up, c = d * K + ceil(c / 10) with K = 2^exp * 10^9 keeps the running ceiling exact
 * without holding the whole product.
 */
static void binary_fraction_nanos(const struct qscan *sc, int exp, struct bn *ret)
{
    struct bn k, t;
    size_t n = sc->den_len;

    while (n && sc->den[n - 1] == '0')
        n--;
    bn_set_u64(&k, (uint64_t)1 << exp);
    bn_mul_small(&k, BN_BASE);
    bn_set_u64(ret, 0);
    while (n--) {
        if (bn_div_small(ret, 10))
            bn_add_small(ret, 1);
        t = k;
        bn_mul_small(&t, (uint32_t)(sc->den[n] - '0'));
        bn_add(ret, &t);
    }
    if (bn_div_small(ret, 10))
        bn_add_small(ret, 1);
}

/* ParseQuantity() for a binary suffix: exact, rounded up to 1n, capped at 2^63-1. */
static int parse_binary(const struct qscan *sc, int32_t exp, struct quantity *ret)
{
    size_t eff_num = sc->num_len ? sc->num_len : 1;
    bool fast = sc->den_len == 0 && 15 - (int64_t)eff_num - exp * 3 / 10 - 1 >= 0;
    uint64_t ip;
    struct bn total, frac, max;

    if (!fast && !sc->has_digit)
        return -EINVAL;
    if (sc->num_len > 19)
        goto cap;
    ip = digits_u64(sc, 0, sc->num_len);
    if (ip >= (uint64_t)1 << (63 - exp))
        goto cap;
    /* Whole numbers (the usual "512Mi") need no big-number arithmetic: ip << exp fits int64,
     * and a whole non-zero value is never below 1, so the format stays BinarySI. */
    if (sc->den_len == 0)
        return pack_u64(sc->neg, ip << exp, 0, QUANTITY_BINARY_SI, ret);
    bn_set_u64(&total, ip << exp);
    bn_mul_small(&total, BN_BASE);
    binary_fraction_nanos(sc, exp, &frac);
    bn_add(&total, &frac);
    bn_set_u64(&max, INT64_MAX);
    bn_mul_small(&max, BN_BASE);
    if (bn_cmp(&total, &max) > 0)
        goto cap;
    /* A non-zero value below 1 prints better as DecimalSI; upstream switches the format. */
    bn_set_u64(&max, BN_BASE);
    return pack_bn(sc->neg, &total, QUANTITY_SCALE_NANO,
                   !bn_is_zero(&total) && bn_cmp(&total, &max) < 0 ? QUANTITY_DECIMAL_SI
                                                                   : QUANTITY_BINARY_SI,
                   ret);
cap:
    return pack_u64(sc->neg, INT64_MAX, 0, QUANTITY_BINARY_SI, ret);
}

/*
 * The forms Kubernetes objects are full of ("250m", "512Mi", "4"): a sign, at most 18 digits
 * and nothing or one SI suffix. Gives exactly what the general path gives (the unit test
 * compares the two on every suffix); returns 1 when s is not of this form.
 */
static int parse_simple(const char *s, size_t len, struct quantity *ret)
{
    size_t i = 0, nd = 0;
    bool neg = false;
    uint64_t v = 0;
    int32_t exp;

    if (s[0] == '+' || s[0] == '-') {
        neg = s[0] == '-';
        i++;
    }
    for (; i < len && is_digit(s[i]); i++, nd++)
        v = v * 10 + (uint64_t)(s[i] - '0');
    if (nd == 0 || nd > 18)
        return 1;
    if (i == len)
        return pack_u64(neg, v, 0, QUANTITY_DECIMAL_SI, ret);
    if (len - i == 1) {
        static const char dec[] = "num kMGTPE";
        const char *p = s[i] ? strchr(dec, s[i]) : NULL;
        if (!p || *p == ' ')
            return 1;
        exp = p < dec + 3 ? (int32_t)(p - dec) * 3 - 9 : (int32_t)(p - dec - 3) * 3;
        return pack_u64(neg, v, exp, QUANTITY_DECIMAL_SI, ret);
    }
    if (len - i == 2 && s[i + 1] == 'i') {
        static const char bin[] = "KMGTPE";
        const char *p = s[i] ? strchr(bin, s[i]) : NULL;
        if (!p)
            return 1;
        exp = (int32_t)(p - bin + 1) * 10;
        if (v >= (uint64_t)1 << (63 - exp))
            return 1;
        return pack_u64(neg, v << exp, 0, QUANTITY_BINARY_SI, ret);
    }
    return 1;
}

int quantity_parse_n(const char *s, size_t len, struct quantity *ret)
{
    struct qscan sc;
    enum quantity_format fmt;
    int base, r;
    int32_t exp;

    if (!s || len == 0)
        return -EINVAL;
    r = parse_simple(s, len, ret);
    if (r <= 0)
        return r;
    r = scan(s, len, &sc);
    if (r < 0)
        return r;
    r = interpret_suffix(sc.suf, sc.suf_len, &base, &exp, &fmt);
    if (r < 0)
        return r;
    if (base == 10)
        return parse_decimal(&sc, exp, fmt, ret);
    return parse_binary(&sc, exp, ret);
}

int quantity_parse(const char *s, struct quantity *ret)
{
    if (!s)
        return -EINVAL;
    return quantity_parse_n(s, strlen(s), ret);
}

/* ---- comparison and arithmetic ---- */

int quantity_sign(const struct quantity *q)
{
    return (q->value > 0) - (q->value < 0);
}

bool quantity_is_zero(const struct quantity *q)
{
    return q->value == 0;
}

int quantity_cmp(const struct quantity *a, const struct quantity *b)
{
    int sa = quantity_sign(a), sb = quantity_sign(b), r;

    if (sa != sb)
        return sa < sb ? -1 : 1;
    if (sa == 0)
        return 0;
    if (a->scale == b->scale)
        return a->value < b->value ? -1 : a->value > b->value;
    r = cmp_mag(mag_u64(a->value), a->scale, mag_u64(b->value), b->scale);
    return sa > 0 ? r : -r;
}

/*
 * The exact sum of two non-zero signed magnitudes, for when int64 overflows. With normalised
 * mantissas, exponents more than 19 apart give a sum whose lowest non-zero digit sits 20 or more
 * places below its top, which no int64 holds; closer ones fit the bignum.
 */
static int add_slow(bool na, uint64_t ma, int64_t ea, bool nb, uint64_t mb, int64_t eb,
                    enum quantity_format fmt, struct quantity *ret)
{
    struct bn a, b;
    int64_t lo;
    bool neg;
    int c;

    strip_zeros(&ma, &ea);
    strip_zeros(&mb, &eb);
    lo = ea < eb ? ea : eb;
    if (ea - lo > 19 || eb - lo > 19)
        return -ERANGE;
    bn_set_u64(&a, ma);
    bn_mul_pow10(&a, (unsigned)(ea - lo));
    bn_set_u64(&b, mb);
    bn_mul_pow10(&b, (unsigned)(eb - lo));
    if (na == nb) {
        bn_add(&a, &b);
        neg = na;
    } else {
        c = bn_cmp(&a, &b);
        if (c == 0)
            return pack_u64(false, 0, 0, fmt, ret);
        if (c < 0) {
            struct bn t = a;
            a = b;
            b = t;
        }
        bn_sub(&a, &b);
        neg = c > 0 ? na : nb;
    }
    return pack_bn(neg, &a, lo, fmt, ret);
}

/*
 * a += (negate ? -b : b) with the format rule of Quantity.Add and Quantity.Sub: a zero receiver
 * takes b's format. The int64 fast paths mirror amount.go int64Amount.Add; only their overflow
 * reaches add_slow(). Nothing is written to *a before the result is known (a may alias b).
 */
static int add_signed(struct quantity *a, const struct quantity *b, bool negate)
{
    enum quantity_format fmt = a->value == 0 ? b->format : a->format;
    struct quantity res = {.value = a->value, .scale = a->scale, .format = fmt};
    int64_t bv, sum, shifted, hv, lv;
    int32_t ls;
    uint64_t d;
    int r = 0;

    if (b->value == 0)
        goto out;
    if (negate && b->value == INT64_MIN) {
        /* -b does not fit int64: only the exact path can take it. */
        if (a->value == 0)
            r = pack_u64(false, ABS_INT64_MIN, b->scale, fmt, &res);
        else
            r = add_slow(a->value < 0, mag_u64(a->value), a->scale, false, ABS_INT64_MIN, b->scale,
                         fmt, &res);
        goto out;
    }
    bv = negate ? -b->value : b->value;
    if (a->value == 0) {
        res.value = bv;
        res.scale = b->scale;
        goto out;
    }
    if (a->scale == b->scale) {
        if (!__builtin_add_overflow(a->value, bv, &sum)) {
            res.value = sum;
            goto out;
        }
    } else {
        /* Align to the smaller scale when the larger one's value stays within int64. */
        hv = a->scale > b->scale ? a->value : bv;
        lv = a->scale > b->scale ? bv : a->value;
        ls = a->scale > b->scale ? b->scale : a->scale;
        d = (uint64_t)((int64_t)a->scale - b->scale);
        if (a->scale < b->scale)
            d = (uint64_t)((int64_t)b->scale - a->scale);
        if (d <= 18 && !__builtin_mul_overflow(hv, (int64_t)pow10_u64[d], &shifted) &&
            !__builtin_add_overflow(shifted, lv, &sum)) {
            res.value = sum;
            res.scale = ls;
            goto out;
        }
    }
    r = add_slow(a->value < 0, mag_u64(a->value), a->scale, bv < 0, mag_u64(bv), b->scale, fmt,
                 &res);
out:
    if (r == 0)
        *a = res;
    return r;
}

int quantity_add(struct quantity *a, const struct quantity *b)
{
    return add_signed(a, b, false);
}

int quantity_sub(struct quantity *a, const struct quantity *b)
{
    return add_signed(a, b, true);
}

/* ---- conversions ---- */

int quantity_scaled_value(const struct quantity *q, int32_t scale, int64_t *ret)
{
    int64_t delta = (int64_t)q->scale - scale, v = q->value, res;

    if (v == 0) {
        *ret = 0;
        return 0;
    }
    if (delta < 0) {
        /* Dividing: any remainder rounds away from zero (amount.go AsScaledInt64). */
        if (-delta >= 19) {
            *ret = v < 0 ? -1 : 1;
            return 0;
        }
        res = v / (int64_t)pow10_u64[-delta];
        if (v % (int64_t)pow10_u64[-delta])
            res += v < 0 ? -1 : 1;
        *ret = res;
        return 0;
    }
    if (delta >= 19 || __builtin_mul_overflow(v, (int64_t)pow10_u64[delta], &res))
        return -ERANGE;
    *ret = res;
    return 0;
}

int quantity_milli(const struct quantity *q, int64_t *ret)
{
    return quantity_scaled_value(q, QUANTITY_SCALE_MILLI, ret);
}

int quantity_value(const struct quantity *q, int64_t *ret)
{
    return quantity_scaled_value(q, 0, ret);
}

void quantity_from_milli(int64_t milli, enum quantity_format f, struct quantity *ret)
{
    *ret = (struct quantity){.value = milli, .scale = QUANTITY_SCALE_MILLI, .format = f};
}

void quantity_from_int(int64_t v, enum quantity_format f, struct quantity *ret)
{
    *ret = (struct quantity){.value = v, .scale = 0, .format = f};
}

void quantity_from_scaled(int64_t v, int32_t scale, struct quantity *ret)
{
    *ret = (struct quantity){.value = v, .scale = scale, .format = QUANTITY_DECIMAL_SI};
}

/* Go's math.Pow10: two table lookups, so the rounding matches upstream's float results. */
static double go_pow10(int64_t n)
{
    static const double tab[32] = {
        1e00, 1e01, 1e02, 1e03, 1e04, 1e05, 1e06, 1e07, 1e08, 1e09, 1e10,
        1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21,
        1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31,
    };
    static const double pos32[] = {1e00,  1e32,  1e64,  1e96,  1e128,
                                   1e160, 1e192, 1e224, 1e256, 1e288};
    static const double neg32[] = {1e-00,  1e-32,  1e-64,  1e-96,  1e-128, 1e-160,
                                   1e-192, 1e-224, 1e-256, 1e-288, 1e-320};

    if (n >= 0 && n <= 308)
        return pos32[n / 32] * tab[n % 32];
    if (n < 0 && n >= -323)
        return neg32[-n / 32] / tab[-n % 32];
    return n > 0 ? INFINITY : 0.0;
}

double quantity_as_double(const struct quantity *q)
{
    double base = (double)q->value;

    if (q->value == 0)
        return 0.0;
    if (q->scale == 0)
        return base;
    return base * go_pow10(q->scale);
}

/* ---- printing ---- */

static size_t put_str(char *buf, size_t n, const char *s)
{
    while (*s)
        buf[n++] = *s++;
    return n;
}

static size_t put_u64(char *buf, size_t n, uint64_t m)
{
    char tmp[20];
    size_t l = 0;

    do {
        tmp[l++] = (char)('0' + m % 10);
        m /= 10;
    } while (m);
    while (l)
        buf[n++] = tmp[--l];
    return n;
}

static size_t put_i64(char *buf, size_t n, int64_t v)
{
    if (v < 0)
        buf[n++] = '-';
    return put_u64(buf, n, mag_u64(v));
}

/*
 * amount.go AsCanonicalBytes + suffix.go constructBytes: the mantissa grows by up to two zeros so
 * that the exponent is a multiple of 3, then DecimalSI names it with a letter where one exists.
 * At most 1 + 19 + 21 + 12 bytes.
 */
static size_t format_decimal(bool neg, uint64_t m, int64_t e, enum quantity_format fmt, char *buf)
{
    static const char *const si[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
    int64_t e3 = e >= 0 ? e / 3 * 3 : -((-e + 2) / 3 * 3);
    size_t n = 0;

    if (e3 > INT32_MAX_PRINTABLE_EXP)
        e3 = INT32_MAX_PRINTABLE_EXP;
    /* A 19-digit mantissa above 2^63-1 at 1n or coarser is the one number ParseQuantity refuses
     * ("9223372036854775808k"); upstream prints it anyway. Three more zeros make it parse. */
    if (e3 >= QUANTITY_SCALE_NANO && ndigits_u64(m) + (e - e3) == 19 &&
        m * pow10_u64[e - e3] > (uint64_t)INT64_MAX)
        e3 -= 3;
    if (neg)
        buf[n++] = '-';
    n = put_u64(buf, n, m);
    for (int64_t z = e - e3; z > 0; z--)
        buf[n++] = '0';
    if (fmt == QUANTITY_DECIMAL_SI && e3 >= -9 && e3 <= 18)
        n = put_str(buf, n, si[(e3 + 9) / 3]);
    else if (e3 != 0)
        n = put_i64(buf, put_str(buf, n, "e"), e3);
    buf[n] = '\0';
    return n;
}

/*
 * AsCanonicalBase1024Bytes for the integer m * 10^e (m odd or not, e <= 69) whose factors of 1024
 * number k <= 6: print m * 10^e / 1024^k and name k. Returns 0 when that does not fit buf.
 */
static size_t format_binary(bool neg, uint64_t m, int64_t e, int64_t k, char *buf)
{
    static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int tz = __builtin_ctzll(m);
    struct bn v;
    size_t n = 0, l;

    /* m * 10^e / 2^(10k) = (m / 2^tz) * 5^e * 2^(tz + e - 10k) */
    bn_set_u64(&v, m >> tz);
    for (int64_t i = 0; i < e; i++)
        bn_mul_small(&v, 5);
    for (int64_t i = 0; i < tz + e - 10 * k; i++)
        bn_mul_small(&v, 2);
    if (neg)
        buf[n++] = '-';
    l = bn_to_str(&v, buf + n, QUANTITY_STR_MAX - 1 - n - strlen(bin[k]));
    if (l == 0)
        return 0;
    n = put_str(buf, n + l, bin[k]);
    buf[n] = '\0';
    return n;
}

size_t quantity_format(const struct quantity *q, char buf[QUANTITY_STR_MAX])
{
    enum quantity_format fmt = q->format;
    bool neg = q->value < 0;
    uint64_t m = mag_u64(q->value);
    int64_t e = q->scale, k;
    size_t n;

    if (m == 0) {
        buf[0] = '0';
        buf[1] = '\0';
        return 1;
    }
    strip_zeros(&m, &e);
    if (fmt == QUANTITY_BINARY_SI) {
        /* quantity.go CanonicalizeBytes: below 1024 or fractional, print as DecimalSI rather
         * than round; past Ei there is no suffix, so as DecimalExponent. */
        fmt = QUANTITY_DECIMAL_SI;
        if (e >= 0 && cmp_mag(m, e, 1024, 0) >= 0) {
            k = (__builtin_ctzll(m) + e) / 10;
            if (k > 6) {
                fmt = QUANTITY_DECIMAL_EXPONENT;
            } else {
                n = format_binary(neg, m, e, k, buf);
                if (n)
                    return n;
            }
        }
    } else if (fmt != QUANTITY_DECIMAL_SI) {
        fmt = QUANTITY_DECIMAL_EXPONENT;
    }
    return format_decimal(neg, m, e, fmt, buf);
}

int quantity_canonicalize(const char *in, char buf[QUANTITY_STR_MAX])
{
    struct quantity q;
    int r = quantity_parse(in, &q);

    if (r < 0) {
        buf[0] = '\0';
        return r;
    }
    return (int)quantity_format(&q, buf);
}
