/*
 * RFC 3339 timestamps as Kubernetes writes them. metav1.Time reads with Go's
 * time.Parse(time.RFC3339, s) and writes UTC at second precision ("2024-03-05T08:00:00Z");
 * metav1.MicroTime writes six fractional digits. Times are seconds since the Unix epoch plus
 * nanoseconds, computed with proleptic-Gregorian civil-date arithmetic, never with the process
 * time zone (no timegm/mktime/strptime).
 */
#ifndef KOORD_API_RFC3339_H
#define KOORD_API_RFC3339_H

#include <stddef.h>
#include <stdint.h>

/*
 * Parses s as Go's time.Parse(time.RFC3339, s) (the fast path plus the general layout parser it
 * falls back to): "YYYY-MM-DDTHH:MM:SS[(.|,)digits](Z|+hh:mm|-hh:mm)". Year 0000-9999; the
 * hour may have one digit; day checked against the month (leap years included); hour <= 23,
 * minute and second <= 59 (no leap second); offsets up to +24:00 / -24:00 and minutes up to 60
 * as Go tolerates; fractions of any length (digits past the ninth ignored). 'T' and 'Z' must be
 * upper case; nothing may follow the zone.
 *
 * Returns 0 with *ret_sec (UTC seconds since 1970-01-01T00:00:00Z, may be negative) and
 * *ret_nsec (0..999999999); -EINVAL otherwise, outputs untouched.
 */
int rfc3339_parse(const char *s, int64_t *ret_sec, int32_t *ret_nsec);

/* Longest output: a 12-digit negative year with nine fractional digits (39 bytes) + NUL. */
#define RFC3339_STR_MAX 40

/*
 * metav1.Time form: UTC, second precision, "Z" ("2024-03-05T08:00:00Z"). Years outside
 * 0000-9999 are printed as Go does (sign and at least four digits). Writes a NUL-terminated
 * string into buf and returns its length.
 */
size_t rfc3339_format(int64_t sec, char buf[RFC3339_STR_MAX]);

/*
 * time.RFC3339Nano in UTC: the fraction with trailing zeros trimmed and omitted when nsec is 0
 * ("2024-03-05T08:00:00.5Z"). nsec must be 0..999999999 (CHECKed). Returns the length.
 */
size_t rfc3339_format_nano(int64_t sec, int32_t nsec, char buf[RFC3339_STR_MAX]);

/*
 * metav1.MicroTime form (RFC3339Micro, "2006-01-02T15:04:05.000000Z07:00") in UTC: exactly six
 * fractional digits, truncated like Go's Format ("2024-03-05T08:00:00.123456Z"). nsec must be
 * 0..999999999 (CHECKed). Returns the length.
 */
size_t rfc3339_format_micro(int64_t sec, int32_t nsec, char buf[RFC3339_STR_MAX]);

#endif
