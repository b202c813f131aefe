/*
 * Go time.Duration strings ("5m0s", "1.5h", "300ms") as int64 nanoseconds. Kubernetes and
 * Koordinator objects carry metav1.Duration fields whose wire form is exactly what Go's
 * time.ParseDuration accepts and Duration.String prints, so both directions mirror Go's
 * src/time/format.go byte for byte.
 */
#ifndef KOORD_API_DURATION_H
#define KOORD_API_DURATION_H

#include <stddef.h>
#include <stdint.h>

/*
 * Parses s as time.ParseDuration does: an optional sign, then one or more
 * "<digits>[.<digits>]<unit>" groups with units ns, us, µs (U+00B5), μs (U+03BC), ms, s, m, h;
 * "0" (optionally signed) alone needs no unit. Fractions are applied per group with Go's float64
 * arithmetic, so "1.5h" is 5400000000000 and "0.1ns" is 0.
 *
 * Returns 0 and writes *ret_ns; -EINVAL for malformed input ("", "5", "1d", "h", ".s", "1.s2");
 * -ERANGE when a number or the total overflows int64 nanoseconds ("-2562047h47m16.854775808s" is
 * the smallest value accepted, "2562047h47m16.854775807s" the largest). *ret_ns is untouched on
 * failure.
 */
int duration_parse(const char *s, int64_t *ret_ns);

/* Longest output is "-2562047h47m16.854775808s" (25 bytes) plus the NUL. */
#define DURATION_STR_MAX 32

/*
 * Formats ns as Duration.String() does: "24h0m0s", "1h30m0s", "1.5s", "300ms", "2µs" (U+00B5),
 * "1ns", "0s", "-1m0s". Writes a NUL-terminated string into buf and returns its length.
 */
size_t duration_format(int64_t ns, char buf[DURATION_STR_MAX]);

#endif
