/*
 * Field errors, Kubernetes style (apimachinery pkg/util/validation/field): a path, a reason
 * and a detail, rendered exactly as kube-apiserver renders them, e.g.
 *   spec.ttl: Invalid value: "12h": ttl and expires are mutually exclusive
 * Validation collects every error instead of stopping at the first; warnings (unknown fields,
 * as kubectl prints them) travel in the same list.
 */
#ifndef KOORD_API_FIELD_H
#define KOORD_API_FIELD_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

enum field_error_type {
    FIELD_REQUIRED,      /* "Required value" */
    FIELD_INVALID,       /* "Invalid value" */
    FIELD_NOT_SUPPORTED, /* "Unsupported value" */
    FIELD_FORBIDDEN,     /* "Forbidden" */
    FIELD_DUPLICATE,     /* "Duplicate value" */
    FIELD_TOO_LONG,      /* "Too long" */
    FIELD_TOO_MANY,      /* "Too many" */
    FIELD_UNKNOWN,       /* unknown field under --strict: an error rendered as the detail */
    FIELD_WARNING,       /* not an error: rendered as the detail alone */
};

struct field_error {
    enum field_error_type type;
    char *field;  /* e.g. "spec.owners[0].object" */
    char *value;  /* rendered bad value (JSON-ish), or NULL when the type takes none */
    char *detail; /* may be empty */
};

struct field_errors {
    struct field_error *v;
    size_t n;
    size_t alloc;
    size_t nwarn; /* how many of n are FIELD_WARNING */
};

/* clang-format off */
#define FIELD_ERRORS_INIT { .v = NULL, .n = 0, .alloc = 0, .nwarn = 0 }
/* clang-format on */

void field_errors_init(struct field_errors *e);
void field_errors_release(struct field_errors *e);

/* Adds one entry. value may be NULL. detail is a printf format (may be NULL). */
void field_error_add(struct field_errors *e, enum field_error_type type, const char *field,
                     const char *value, const char *detail_fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Number of entries that are errors (not warnings). */
size_t field_errors_count(const struct field_errors *e);

/* Renders one entry: "<field>: <Type>[: <value>][: <detail>]"; warnings as
 * "unknown field \"spec.x\""-style detail text. Appends to out. */
void field_error_format(const struct field_error *fe, struct strbuf *out);

#endif
