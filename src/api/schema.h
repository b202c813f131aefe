/*
 * The type description engine. Every kind koord knows (Koordinator CRDs, the core/v1 subset,
 * Lease, the slo-controller-config documents) is written ONCE as a static tree of
 * struct api_schema / struct api_prop. That one description drives:
 *   - validation (types, required keys, enums, ranges, patterns, custom rules, unknown fields),
 *   - defaulting (the CRD `default:` values, applied as kube-apiserver applies them),
 *   - canonical encoding (what a Go client writes: omitempty, always-emitted structs,
 *     canonical quantities and durations),
 *   - the JSON overlay merge that upstream's MergeCfg performs (manager-behaviour.md 1.4),
 *   - and the OpenAPI v3 schema of the generated CRD manifests.
 * Objects themselves stay cJSON trees: the API server, the manager and the CLI all work on the
 * wire form, and nothing is walked four times by hand.
 */
#ifndef KOORD_API_SCHEMA_H
#define KOORD_API_SCHEMA_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/field.h"
#include "base/strbuf.h"

enum api_type {
    API_ANY,           /* schemaless: any JSON (x-kubernetes-preserve-unknown-fields, no type) */
    API_OBJECT,        /* fixed properties */
    API_MAP,           /* string keys, values of one schema (additionalProperties) */
    API_ARRAY,         /* items of one schema */
    API_STRING,        /* string */
    API_INT,           /* integer; format int32 or int64 */
    API_NUMBER,        /* float64 */
    API_BOOL,          /* boolean */
    API_QUANTITY,      /* resource.Quantity: string or integer (int-or-string + quantity pattern) */
    API_INT_OR_STRING, /* intstr.IntOrString */
    API_DURATION,      /* metav1.Duration: Go duration string */
    API_TIME,          /* metav1.Time: RFC 3339 date-time string, or null */
};

/* Per-property flags: schema facts and how Go serialises the field. */
enum api_prop_flags {
    API_REQ = 1 << 0,    /* listed in the CRD's `required` */
    API_VAL = 1 << 1,    /* non-pointer Go field with omitempty: its zero value is not emitted */
    API_ALWAYS = 1 << 2, /* always emitted by Go (non-pointer struct or no omitempty) */
    API_CTRL = 1 << 3,   /* dflt is a controller/consumer default: applied by koord's defaulting
                            (API_D_CTRL) but not declared in the CRD */
};

enum api_default_flags {
    API_D_CTRL = 1 << 0, /* also apply API_CTRL defaults */
};

/* Rules for the keys of an API_MAP. */
enum api_key_rules {
    API_KEYS_QUALIFIED =
        1 << 0, /* qualified names (resource names: cpu, kubernetes.io/batch-cpu) */
};

/* Per-schema flags. */
enum api_schema_flags {
    API_S_PRESERVE = 1 << 0,  /* x-kubernetes-preserve-unknown-fields: unknown keys kept */
    API_S_ATOMIC = 1 << 1,    /* x-kubernetes-map-type: atomic */
    API_S_NULLABLE = 1 << 2,  /* nullable: true */
    API_S_NOENUMCRD = 1 << 3, /* enums are checked by koord but not declared in the CRD */
    API_S_LIST_SET = 1 << 4,  /* x-kubernetes-list-type: set (API_ARRAY): items unique */
    API_S_LIST_MAP = 1 << 5,  /* x-kubernetes-list-type: map (API_ARRAY): objects unique by
                                 map_keys */
};

struct api_range {
    bool has_min, has_max;
    bool excl_min, excl_max;
    double min, max;
};

struct api_schema;
struct api_walk;

/* Custom validation of one node (called after the generic checks, on present values). */
typedef void (*api_check_fn)(const struct api_schema *s, const cJSON *v, struct api_walk *w);

/* "a must be greater than b" (go-playground gtfield) rule checked in webhook mode. */
struct api_pair {
    const char *greater;
    const char *lesser;
};

struct api_prop {
    const char *name;
    const struct api_schema *schema;
    unsigned flags;   /* enum api_prop_flags */
    const char *dflt; /* CRD default as JSON text, or NULL */
};

struct api_schema {
    enum api_type type;
    unsigned dflt_below;            /* trees built at run time: which defaults exist at or below
                                       (enum api_dflt_bits); static tables leave it zero */
    const char *format;             /* OpenAPI format: int32, int64, double, date-time */
    const char *desc;               /* OpenAPI description */
    const struct api_prop *props;   /* API_OBJECT: terminated by an entry with name NULL */
    const struct api_schema *items; /* API_ARRAY items, API_MAP values */
    const char *const *enums;       /* NULL-terminated allowed values (API_MAP: allowed keys) */
    unsigned keys;                  /* API_MAP: enum api_key_rules its keys must follow */
    const char *pattern;            /* CRD pattern (the check hook or type enforces it) */
    struct api_range crd;           /* CRD minimum/maximum: checked always */
    struct api_range wh;            /* admission-webhook range: checked with API_V_WEBHOOK */
    int min_items;                  /* CRD minItems */
    int min_props;                  /* CRD minProperties */
    int max_len;                    /* CRD maxLength */
    unsigned flags;                 /* enum api_schema_flags */
    api_check_fn check;
    const struct api_pair *wh_pairs; /* terminated by {NULL, NULL} */
    /* Filled only in trees built at run time (openapi.h); static tables leave them zero. */
    const void *pattern_re;      /* compiled `pattern` (regex_t), enforced when set */
    const char *const *map_keys; /* API_S_LIST_MAP: x-kubernetes-list-map-keys, NULL-terminated */
    /* The OpenAPI definition name kube publishes this type under
     * ("io.k8s.api.core.v1.Container"), or NULL: the API server's /openapi documents give a
     * named node a component schema of its own and refer to it by $ref, as kube does. */
    const char *def_name;
};

/* dflt_below bits, set by tree builders so defaulting needs no memo for their nodes. */
enum api_dflt_bits {
    API_DFLT_KNOWN = 1,
    API_DFLT_CRD = 2,
    API_DFLT_CTRL = 4,
};

enum api_validate_flags {
    API_V_STRICT = 1 << 0,  /* unknown fields are errors, not warnings */
    API_V_WEBHOOK = 1 << 1, /* also check the webhook ranges and pairs */
    API_V_TYPES = 1 << 2,   /* only JSON types (what Go's json.Unmarshal into the type rejects):
                               no required keys, enums, ranges, rules or unknown fields */
};

/* Walk state handed to check hooks: the current path and where errors go. */
struct api_walk {
    struct strbuf path;
    struct field_errors *errs;
    unsigned flags;
    const cJSON *root; /* the whole object being validated */
};

/* Validates v against s, appending every problem to errs (path prefix: prefix, may be ""). */
void api_validate(const struct api_schema *s, const cJSON *v, const char *prefix, unsigned flags,
                  struct field_errors *errs);

/* Applies CRD defaults in place, as kube-apiserver does: a property's default is set when the
 * key is absent or null and its parent object exists. Returns 0 or -ENOMEM. */
int api_default(const struct api_schema *s, cJSON *v, unsigned flags);

/* Canonical encoding: *ret = a new tree holding what a Go client would write for v: properties
 * in schema order, unknown keys dropped (kept under API_S_PRESERVE), omitempty applied, always-
 * emitted fields present, quantities/durations/times in canonical form. v may be NULL (an
 * object's zero value). *ret is NULL when nothing is written. Returns 0 or -ENOMEM. */
int api_encode(const struct api_schema *s, const cJSON *v, cJSON **ret);

/* api_encode in place: v (owned by the caller) becomes its canonical form without copying.
 * Returns 0 or -ENOMEM (v is then partly canonical but a valid tree). */
int api_canonicalize(const struct api_schema *s, cJSON *v);

/*
 * Whether buf[0..len) is exactly what the tree pipeline writes for it (json_parse, then
 * api_validate with flags finding nothing, not even a warning, then api_default with no flags,
 * api_canonicalize and json_print), so a writer may keep the bytes as they came. It is decided
 * in one pass without building a tree. false means "not known to be": it is also the answer for
 * canonical bytes this check does not model (whitespace, escapes, non-ASCII strings, nulls, big
 * maps, long integers), so callers then take the tree path, which reports any errors.
 */
bool api_canonical_check(const struct api_schema *s, const char *buf, size_t len, unsigned flags);

/* api_canonical_check() of the value at the start of buf, which more bytes may follow (the
 * members after it in an enclosing object): true with *ret_end at the offset after it. */
bool api_canonical_prefix(const struct api_schema *s, const char *buf, size_t len, unsigned flags,
                          size_t *ret_end);

/* Upstream MergeCfg (manager-behaviour.md 1.4): encodes ov canonically and decodes it on top of
 * *base as Go's encoding/json does (objects field by field, maps key-wise with whole values
 * replaced, arrays index-wise with the override's length). *base may be NULL or replaced.
 * Returns 0 or -ENOMEM. */
int api_overlay(const struct api_schema *s, cJSON **base, const cJSON *ov);

/* Property lookup on an object schema; NULL when absent. */
const struct api_prop *api_schema_prop(const struct api_schema *s, const char *name);

/* Renders v for an error message: strings quoted, scalars as JSON, objects/arrays shortened. */
void api_value_repr(const cJSON *v, struct strbuf *out);

/* Helpers for check hooks: append an error at the current path (+ optional child segment). */
void api_walk_error(struct api_walk *w, const char *child, enum field_error_type type,
                    const cJSON *value, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Pushes ".name" (or "[i]" for name NULL) onto the path; returns the length to pop back to. */
size_t api_walk_push(struct api_walk *w, const char *name, long index);
void api_walk_pop(struct api_walk *w, size_t len);

/* Zero value of a type as Go encodes it ("" / 0 / false / "0" / "0s" / null / {}). */
cJSON *api_zero_value(const struct api_schema *s);

/* Shared building blocks (types.c). */
extern const struct api_schema api_any, api_string, api_bool, api_int32, api_int64, api_number,
    api_quantity, api_int_or_string, api_duration, api_time, api_string_map, api_string_list,
    api_resource_list, api_label_selector, api_object_meta, api_object_reference,
    api_owner_reference, api_condition, api_taint, api_toleration, api_pod_template_spec,
    api_preserve_object;

/* Check hook of []byte fields (caBundle): standard base64, as Go's decoder demands; the error
 * is "illegal base64 data". */
void api_check_base64(const struct api_schema *s, const cJSON *v, struct api_walk *w);

/* Compound-literal helpers for terse field tables. */
#define API_OBJ(p)    (&(const struct api_schema){.type = API_OBJECT, .props = (p)})
#define API_ARR(it)   (&(const struct api_schema){.type = API_ARRAY, .items = (it)})
#define API_MAPOF(it) (&(const struct api_schema){.type = API_MAP, .items = (it)})
#define API_ENUM(...)                                                                              \
    (&(const struct api_schema){.type = API_STRING,                                                \
                                .enums = (const char *const[]){__VA_ARGS__, NULL}})
/* An enum koord checks but upstream's CRD does not declare. */
#define API_ENUM_SOFT(...)                                                                         \
    (&(const struct api_schema){.type = API_STRING,                                                \
                                .flags = API_S_NOENUMCRD,                                          \
                                .enums = (const char *const[]){__VA_ARGS__, NULL}})
#define API_RANGE(lo, hi)                                                                          \
    {                                                                                              \
        .has_min = true, .has_max = true, .min = (lo), .max = (hi)                                 \
    }
#define API_MIN(lo)                                                                                \
    {                                                                                              \
        .has_min = true, .min = (lo)                                                               \
    }
#define API_GT(lo)                                                                                 \
    {                                                                                              \
        .has_min = true, .excl_min = true, .min = (lo)                                             \
    }
#define API_GT_LE(lo, hi)                                                                          \
    {                                                                                              \
        .has_min = true, .excl_min = true, .min = (lo), .has_max = true, .max = (hi)               \
    }
#define API_NONE                                                                                   \
    {                                                                                              \
        .has_min = false                                                                           \
    }
/* int64 with CRD range c and webhook range w (c and w are brace initialisers: no parentheses). */
/* NOLINTBEGIN(bugprone-macro-parentheses) */
#define API_I64(c, w)                                                                              \
    (&(const struct api_schema){.type = API_INT, .format = "int64", .crd = c, .wh = w})
#define API_I32(c, w)                                                                              \
    (&(const struct api_schema){.type = API_INT, .format = "int32", .crd = c, .wh = w})
/* NOLINTEND(bugprone-macro-parentheses) */

#endif
