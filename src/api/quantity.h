/*
 * Kubernetes resource.Quantity ("100m", "1.5Gi", "2e3") as a caller-owned value: parse, compare,
 * add, convert and print it exactly the way k8s.io/apimachinery/pkg/api/resource does
 * (quantity.go, amount.go, suffix.go, math.go, scale_int.go), so that requests, limits and
 * batch resources computed here agree with kube-apiserver and kubectl to the last digit.
 *
 * A quantity is value * 10^scale with an int64 value and an int32 scale, plus the format it was
 * written in (which decides how it prints). Upstream keeps an int64 fast path and falls back to
 * arbitrary precision (inf.Dec); we keep only the first. Every value a parse produces is exact
 * (after upstream's own rounding up to 1n and its BinarySI cap at 2^63-1); a value that would
 * need more than an int64 mantissa is refused with -ERANGE instead of being approximated.
 *
 * Where upstream has since fixed a bug, we follow the fix (the quantity_test.go tables of current
 * Kubernetes are the specification): exponents beyond +-(2^31-1) are rejected, not truncated;
 * DecimalSI values above "E" or below "n" and BinarySI values above "Ei" print in exponent
 * notation instead of losing their magnitude; Value()/MilliValue() round away from zero for
 * negative values too. Deliberate differences are listed at each function.
 *
 * No function allocates, logs or keeps state; all are safe to call from any thread.
 */
#ifndef KOORD_API_QUANTITY_H
#define KOORD_API_QUANTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a quantity prints (Quantity.Format). Parsing records the suffix family it saw. */
enum quantity_format {
    QUANTITY_DECIMAL_SI,       /* "" n u m k M G T P E: 12M = 12 * 10^6 */
    QUANTITY_BINARY_SI,        /* Ki Mi Gi Ti Pi Ei: 12Mi = 12 * 2^20 */
    QUANTITY_DECIMAL_EXPONENT, /* e or E with a signed integer: 12e6 */
};

/*
 * The number is value * 10^scale. The (value, scale) pair of a number is not unique ("1k" may be
 * {1, 3} or {1000, 0}); compare with quantity_cmp(), never field by field. A zeroed struct is 0
 * in DecimalSI. Callers may build one directly; every function accepts any field values (an
 * unknown format prints as DecimalExponent, as upstream's default case does).
 */
struct quantity {
    int64_t value;
    int32_t scale;
    enum quantity_format format;
};

/* Room for any string quantity_format() writes, NUL included. */
#define QUANTITY_STR_MAX 64

/* Powers of ten used as scales, as upstream's resource.Nano ... resource.Exa. */
#define QUANTITY_SCALE_NANO  (-9)
#define QUANTITY_SCALE_MICRO (-6)
#define QUANTITY_SCALE_MILLI (-3)
#define QUANTITY_SCALE_KILO  3
#define QUANTITY_SCALE_MEGA  6
#define QUANTITY_SCALE_GIGA  9

/*
 * Parses s as ParseQuantity does: <sign?><digits>[.<digits>]<suffix> where the number may also be
 * "1." or ".5" and the suffix is one of n u m "" k M G T P E (DecimalSI), Ki Mi Gi Ti Pi Ei
 * (BinarySI) or e/E followed by an optionally signed integer (DecimalExponent). No whitespace.
 * Values finer than 1n are rounded up, away from zero ("0.0000000001" is 1n, "-1.1n" is -2n);
 * BinarySI values above 2^63-1 are capped to 2^63-1 ("9Ei", "8Ei"); a BinarySI value strictly
 * between -1 and 1 (after rounding) becomes DecimalSI ("0.000000000001Ki" is 2n).
 *
 * Upstream's scanner also has quirks, which we mirror because they decide what kube-apiserver
 * accepts: a sign or suffix with no digits reads as 0 ("-", "+", ".", "Mi", "-.Ki", "e5"), except
 * where upstream takes its inf.Dec path and fails ("Pi", "Ei", ".e-10"); a mantissa of exactly
 * 19 digits above 2^63-1 is an error unless its scale is below 1n ("9999999999999999999",
 * "9223372036854775808k"), while a longer one is fine ("10000000000000000000").
 *
 * Returns 0 and fills *ret; -EINVAL where ParseQuantity returns an error ("", " 1", "1 ", "1.1.1",
 * "1i", "1e", "1GI", "1gi", "1e2147483648"); -ERANGE for a valid quantity whose exact value does
 * not fit value * 10^scale (more than 19 significant digits, magnitude above 2^63-1 (2^63 for a
 * negative value), or an exponent beyond int32 even after moving zeros into value), e.g.
 * "12345678901234567890123", "12345678901.000000001" or "0.33Ei". *ret is untouched on failure. s
 * may be any length; the result is normalised (no trailing zeros in value unless the scale would
 * overflow).
 */
int quantity_parse(const char *s, struct quantity *ret);

/* As quantity_parse() on the len bytes at s, which need no NUL (a NUL byte in them is invalid). */
int quantity_parse_n(const char *s, size_t len, struct quantity *ret);

/* Exact three-way comparison of the numbers (formats are ignored): -1, 0 or 1. */
int quantity_cmp(const struct quantity *a, const struct quantity *b);

/*
 * *a += *b, as Quantity.Add: if *a is zero it takes b's format (and is then simply a copy of *b),
 * otherwise it keeps its own. Returns 0, or -ERANGE (with *a untouched) when the exact sum does
 * not fit value * 10^scale; upstream would switch to inf.Dec there.
 */
int quantity_add(struct quantity *a, const struct quantity *b);

/* *a -= *b, as Quantity.Sub (same format rule and errors as quantity_add()). */
int quantity_sub(struct quantity *a, const struct quantity *b);

/*
 * The value in units of 10^scale, rounded away from zero to an integer: ScaledValue(). "1.5m" at
 * QUANTITY_SCALE_MILLI is 2, "-1.5" at 0 is -2, "1n" at 0 is 1. Returns 0 and writes *ret, or
 * -ERANGE (with *ret untouched) when the result does not fit int64; upstream saturates or wraps.
 */
int quantity_scaled_value(const struct quantity *q, int32_t scale, int64_t *ret);

/* MilliValue(): quantity_scaled_value() at QUANTITY_SCALE_MILLI ("100m" -> 100, "1" -> 1000). */
int quantity_milli(const struct quantity *q, int64_t *ret);

/* Value(): quantity_scaled_value() at scale 0 ("1Gi" -> 1073741824 bytes, "100m" -> 1). */
int quantity_value(const struct quantity *q, int64_t *ret);

/* NewMilliQuantity(milli, f): milli / 1000 in format f. */
void quantity_from_milli(int64_t milli, enum quantity_format f, struct quantity *ret);

/* NewQuantity(v, f): v in format f. */
void quantity_from_int(int64_t v, enum quantity_format f, struct quantity *ret);

/* NewScaledQuantity(v, scale): v * 10^scale in DecimalSI. */
void quantity_from_scaled(int64_t v, int32_t scale, struct quantity *ret);

/* IsZero(). */
bool quantity_is_zero(const struct quantity *q);

/* Sign(): -1, 0 or 1. */
int quantity_sign(const struct quantity *q);

/*
 * AsApproximateFloat64(): (double)value * 10^scale with Go's math.Pow10 table, so the result
 * matches upstream's bit for bit for the same (value, scale); upstream's internal pair for a
 * parsed string may differ from ours ({15, -1} vs {150, -2}), and so may the last bit.
 * +-inf when out of range, 0 for zero.
 */
double quantity_as_double(const struct quantity *q);

/*
 * Writes the canonical string Quantity.String() computes (CanonicalizeBytes) into buf, NUL
 * terminated, and returns its length (never more than QUANTITY_STR_MAX - 1):
 *   - zero is "0" in every format; negative values start with "-";
 *   - DecimalSI: the largest of n u m "" k M G T P E that leaves an integer mantissa ("1.5" ->
 *     "1500m", "2000" -> "2k", "0.1" -> "100m", "1.0001m" -> "1000100n"); beyond that range it
 *     prints like DecimalExponent ("1000E" -> "1e21");
 *   - DecimalExponent: mantissa and an exponent that is a multiple of 3 ("1200" -> "1200",
 *     "12000" -> "12e3", "0.08" -> "80e-3");
 *   - BinarySI: if |x| >= 1024 and x is an integer, the largest of "" Ki Mi Gi Ti Pi Ei that leaves
 *     an integer ("1.5Gi" -> "1536Mi", "2000" -> "2000"); otherwise it prints as DecimalSI
 *     ("0.5Ki" -> "512", "100.035Ki" -> "102435840m"); past Ei, as DecimalExponent.
 * The output always parses back to the same number when that number is a multiple of 1n (parsing
 * rounds finer ones up), except BinarySI above 2^63-1, which parsing caps as upstream does. For
 * that, it departs from upstream where upstream's output would not parse: a 19-digit mantissa
 * above 2^63-1 gets three more zeros ("-9223372036854775808000", not "-9223372036854775808k"),
 * and an exponent is never printed above 2^31-2 (the rest goes into the mantissa as zeros). A
 * BinarySI string that would not fit buf prints as DecimalSI (no parse produces one). Upstream
 * also echoes some inputs verbatim from a cache ("+1", "01", "1E3" stay as written); this always
 * prints the canonical form.
 */
size_t quantity_format(const struct quantity *q, char buf[QUANTITY_STR_MAX]);

/*
 * Parses in and writes its canonical form into buf: "1.5Gi" -> "1536Mi", "0.5" -> "500m".
 * Returns the length written, or the quantity_parse() error (buf then holds "").
 */
int quantity_canonicalize(const char *in, char buf[QUANTITY_STR_MAX]);

#endif
