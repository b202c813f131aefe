/*
 * api_canonical_check() (see schema.h): whether JSON bytes are already what the tree pipeline
 * would store for them, decided in one pass over the bytes with no tree and no allocation.
 *
 * Why: a NodeMetric report is 17 KB of JSON arriving thousands of times a second, and the
 * tree pipeline (parse, validate, default, canonicalize, print) spent most of koord manager's
 * CPU rebuilding bytes that the agent had already written in exactly that form. When this
 * check says yes, a writer may keep the bytes as they came. It answers no whenever it is not
 * sure (whitespace, escapes, non-ASCII, nulls, unknown keys, keys out of schema order, values
 * canonical encoding would rewrite or omit, anything invalid): the caller then takes the tree
 * path, which is also where every error message comes from. So a false "no" costs time only,
 * and a "yes" must imply the pipeline's output equals the input (tests/api/test_canonical.c
 * checks that implication on every document it has, and fuzz/fuzz_canonical.c on any input).
 *
 * Schema features this walk does not model (schemaless or preserving subtrees, webhook pairs)
 * are handed to the tree pipeline for that subtree alone; custom check hooks run on a tree of
 * their subtree after the walk found it canonical.
 */
#include <regex.h>
#include <string.h>

#include "api/duration.h"
#include "api/labels.h"
#include "api/quantity.h"
#include "api/rfc3339.h"
#include "api/schema.h"
#include "base/base.h"
#include "codec/codec.h"

#define MAP_KEYS_MAX 16 /* maps with more keys are left to the tree path (duplicate checks) */
#define INT_DIGITS   15 /* integers print back as written up to 15 digits (2^53 is 16) */
#define PATTERN_MAX  256
#define SCALAR_MAX   64 /* quantities, durations, times: longer ones are never canonical */

struct cc {
    const char *b;
    size_t len, i;
    unsigned flags; /* enum api_validate_flags: only API_V_WEBHOOK matters here */
};

static bool value(const struct api_schema *s, struct cc *c);

static bool at(const struct cc *c, char ch)
{
    return c->i < c->len && c->b[c->i] == ch;
}

static bool eat(struct cc *c, char ch)
{
    if (!at(c, ch))
        return false;
    c->i++;
    return true;
}

/* A string with nothing the printer would write differently: printable ASCII, no escapes. */
static bool str_tok(struct cc *c, const char **ret, size_t *ret_n)
{
    size_t start;

    if (!eat(c, '"'))
        return false;
    start = c->i;
    for (; c->i < c->len; c->i++) {
        unsigned char ch = (unsigned char)c->b[c->i];
        if (ch == '"') {
            *ret = c->b + start;
            *ret_n = c->i - start;
            c->i++;
            return true;
        }
        if (ch < 0x20 || ch >= 0x7f || ch == '\\')
            return false;
    }
    return false;
}

/* An integer the printer writes back byte for byte: 0 or -?[1-9][0-9]{0,14}. */
static bool int_tok(struct cc *c, int64_t *ret)
{
    bool neg = eat(c, '-');
    size_t start = c->i;
    int64_t v = 0;

    while (c->i < c->len && c->b[c->i] >= '0' && c->b[c->i] <= '9') {
        v = v * 10 + (c->b[c->i] - '0');
        if (++c->i - start > INT_DIGITS)
            return false;
    }
    if (c->i == start || (c->b[start] == '0' && (c->i - start > 1 || neg)))
        return false;
    if (c->i < c->len && !strchr(",}]", c->b[c->i]))
        return false; /* a fraction, an exponent or garbage */
    *ret = neg ? -v : v;
    return true;
}

static bool in_range(const struct api_range *r, double d)
{
    if (r->has_min && (r->excl_min ? !(d > r->min) : !(d >= r->min)))
        return false;
    return !(r->has_max && (r->excl_max ? !(d < r->max) : !(d <= r->max)));
}

/*
 * The forms node agents write most ("250m", "8", "1536Mi"): a whole number N (no sign, no
 * leading zero) and a suffix, canonical exactly when no larger suffix could carry the value
 * (N not a multiple of 1000, or of 1024 for binary suffixes), which is quantity_format()'s
 * rule. 1 canonical, 0 not, -1 another form (parse and format it). tests/api/test_canonical.c
 * compares this with quantity_parse() and quantity_format() over many values.
 */
static int quantity_quick(const char *p, size_t n)
{
    static const struct {
        const char *suffix;
        double scale;
    } forms[] = {{"m", 1e-3},          {"", 1},
                 {"k", 1e3},           {"M", 1e6},
                 {"G", 1e9},           {"T", 1e12},
                 {"Ki", 1024.0},       {"Mi", 1048576.0},
                 {"Gi", 1073741824.0}, {"Ti", 1099511627776.0}};
    size_t digits = 0;
    int64_t v = 0;

    while (digits < n && p[digits] >= '0' && p[digits] <= '9' && digits < INT_DIGITS)
        v = v * 10 + (p[digits++] - '0');
    if (!digits || (p[0] == '0' && digits > 1))
        return -1;
    for (size_t i = 0; i < ARRAY_SIZE(forms); i++) {
        size_t sl = strlen(forms[i].suffix);
        if (n - digits != sl || memcmp(p + digits, forms[i].suffix, sl))
            continue;
        if ((double)v * forms[i].scale >= 1e18)
            return -1; /* near int64's end, where capping and rounding rules start */
        if (v == 0)
            return sl == 0; /* zero is written "0" */
        return v % (sl == 2 ? 1024 : 1000) != 0;
    }
    return -1;
}

/* A quantity, duration or time string that its formatter writes back unchanged. */
static bool scalar_canonical(const struct api_schema *s, const char *p, size_t n)
{
    _Static_assert(QUANTITY_STR_MAX >= DURATION_STR_MAX && QUANTITY_STR_MAX >= RFC3339_STR_MAX,
                   "out holds what every formatter writes");
    char in[SCALAR_MAX], out[QUANTITY_STR_MAX];
    struct quantity q;
    int64_t ns, sec;
    int32_t nsec;
    size_t m;

    if (s->type == API_QUANTITY) {
        int quick = quantity_quick(p, n);
        if (quick >= 0)
            return quick == 1;
    }
    if (n >= sizeof(in))
        return false;
    memcpy(in, p, n);
    in[n] = '\0';
    switch (s->type) {
    case API_QUANTITY:
        if (quantity_parse(in, &q) < 0)
            return false;
        m = quantity_format(&q, out);
        break;
    case API_DURATION:
        if (duration_parse(in, &ns) < 0)
            return false;
        m = duration_format(ns, out);
        break;
    default: /* API_TIME */
        if (rfc3339_parse(in, &sec, &nsec) < 0)
            return false;
        m = rfc3339_format(sec, out);
        break;
    }
    return m == n && !memcmp(in, out, n);
}

/* Whether the NUL-terminated name is p[0..n) (which holds no NUL): a loop, as names and keys
 * are a few bytes and a library call per key was a tenth of the check. */
static inline bool name_is(const char *name, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (name[i] != p[i])
            return false;
    return name[n] == '\0';
}

/* p[0..n) is one of enums (NULL-terminated), or there are none. */
static bool in_enum(const char *const *enums, const char *p, size_t n)
{
    if (!enums)
        return true;
    for (const char *const *e = enums; *e; e++)
        if (name_is(*e, p, n))
            return true;
    return false;
}

static bool string_ok(const struct api_schema *s, const char *p, size_t n)
{
    char buf[PATTERN_MAX];

    if (!in_enum(s->enums, p, n) || (s->max_len && n > (size_t)s->max_len))
        return false;
    if (!s->pattern_re)
        return true;
    if (n >= sizeof(buf))
        return false;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return regexec(s->pattern_re, buf, 0, NULL, 0) == 0;
}

static bool alnum_only(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') ||
              (p[i] >= '0' && p[i] <= '9')))
            return false;
    return true;
}

static bool key_ok(const struct api_schema *s, const char *p, size_t n)
{
    char buf[PATTERN_MAX];

    if (!in_enum(s->enums, p, n))
        return false;
    if (!(s->keys & API_KEYS_QUALIFIED))
        return true;
    if (n && n <= 63 && alnum_only(p, n))
        return true; /* a qualified name's plain form ("cpu", "memory"): no parse needed */
    if (n >= sizeof(buf))
        return false;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return labels_check_qualified_name(buf, NULL) == 0;
}

/*
 * The subtree [from, to) through the tree pipeline: parsed, validated with no error or warning
 * and, unless only_validate, printed back canonically to the same bytes.
 */
static bool tree_check(const struct api_schema *s, const struct cc *c, size_t from, size_t to,
                       bool only_validate)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf out = STRBUF_INIT;
    cJSON *v = NULL;
    bool ok = false;

    if (json_parse(c->b + from, to - from, NULL, &v, NULL) < 0)
        return false;
    api_validate(s, v, "", c->flags, &errs);
    if (errs.n)
        goto out;
    if (!only_validate) {
        if (api_default(s, v, 0) < 0 || api_canonicalize(s, v) < 0 || json_print(v, &out) < 0)
            goto out;
        if (out.len != to - from || memcmp(out.buf, c->b + from, out.len))
            goto out;
    }
    ok = true;
out:
    field_errors_release(&errs);
    strbuf_release(&out);
    cJSON_Delete(v);
    return ok;
}

/* What canonical encoding omits: Go's omitempty zero values (API_VAL) as the printer writes
 * them, and empty arrays and maps. */
static bool omitted(const struct api_prop *p, const char *v, size_t n)
{
    bool container = p->schema->type == API_ARRAY || p->schema->type == API_MAP;

    if (p->flags & API_ALWAYS)
        return false;
    if (n == 2 && (!memcmp(v, "[]", 2) || (container && !memcmp(v, "{}", 2))))
        return container || (p->flags & API_VAL);
    if (!(p->flags & API_VAL))
        return false;
    return (n == 2 && !memcmp(v, "\"\"", 2)) || (n == 1 && *v == '0') ||
           (n == 5 && !memcmp(v, "false", 5));
}

/* A property that may be absent from canonical bytes: not always emitted, no CRD default to
 * be filled in, not required. */
static bool may_be_absent(const struct api_prop *p)
{
    return !(p->flags & (API_ALWAYS | API_REQ)) && (!p->dflt || (p->flags & API_CTRL));
}

static bool object(const struct api_schema *s, struct cc *c)
{
    int next = 0, nprops = 0; /* properties before `next` are settled */

    if (!eat(c, '{'))
        return false;
    if (!eat(c, '}')) {
        do {
            const char *k;
            size_t kn, vstart;
            const struct api_prop *p;
            int i;

            if (!str_tok(c, &k, &kn) || !eat(c, ':'))
                return false;
            /* Keys come in schema order: search from the first one not yet settled. */
            for (i = next, p = s->props ? s->props + next : NULL; p && p->name; p++, i++)
                if (name_is(p->name, k, kn))
                    break;
            if (!p || !p->name)
                return false; /* unknown, duplicate or out of schema order */
            for (; next < i; next++)
                if (!may_be_absent(&s->props[next]))
                    return false;
            next = i + 1;
            nprops++;
            vstart = c->i;
            if (!value(p->schema, c))
                return false;
            if (omitted(p, c->b + vstart, c->i - vstart))
                return false;
        } while (eat(c, ','));
        if (!eat(c, '}'))
            return false;
    }
    for (const struct api_prop *p = s->props + next; s->props && p->name; p++)
        if (!may_be_absent(p))
            return false;
    return !s->min_props || nprops >= s->min_props;
}

static bool map(const struct api_schema *s, struct cc *c)
{
    const char *keys[MAP_KEYS_MAX];
    size_t lens[MAP_KEYS_MAX], n = 0;

    if (!eat(c, '{'))
        return false;
    if (eat(c, '}'))
        return true;
    do {
        if (n == MAP_KEYS_MAX || !str_tok(c, &keys[n], &lens[n]) || !eat(c, ':') ||
            !key_ok(s, keys[n], lens[n]))
            return false;
        for (size_t j = 0; j < n; j++)
            if (lens[j] == lens[n] && !memcmp(keys[j], keys[n], lens[n]))
                return false;
        n++;
        if (!value(s->items, c))
            return false;
    } while (eat(c, ','));
    return eat(c, '}');
}

static bool array(const struct api_schema *s, struct cc *c)
{
    int n = 0;

    if (!eat(c, '['))
        return false;
    if (!eat(c, ']')) {
        do {
            n++;
            if (!value(s->items, c))
                return false;
        } while (eat(c, ','));
        if (!eat(c, ']'))
            return false;
    }
    return !s->min_items || n >= s->min_items;
}

static bool number(const struct api_schema *s, struct cc *c)
{
    int64_t v;

    if (!int_tok(c, &v))
        return false;
    if (s->type == API_INT && s->format && !strcmp(s->format, "int32") &&
        (v < INT32_MIN || v > INT32_MAX))
        return false;
    return in_range(&s->crd, (double)v) &&
           (!(c->flags & API_V_WEBHOOK) || in_range(&s->wh, (double)v));
}

static bool value(const struct api_schema *s, struct cc *c)
{
    size_t start = c->i, end;
    const char *p;
    size_t n;
    bool ok;

    if (s->type == API_ANY || (s->flags & API_S_PRESERVE) ||
        ((c->flags & API_V_WEBHOOK) && s->wh_pairs)) {
        if (at(c, 'n') || !(end = json_value_end(c->b, c->len, c->i)))
            return false; /* null: canonical encoding drops or rewrites it */
        c->i = end;
        return tree_check(s, c, start, end, false);
    }
    switch (s->type) {
    case API_OBJECT:
        ok = object(s, c);
        break;
    case API_MAP:
        ok = map(s, c);
        break;
    case API_ARRAY:
        ok = array(s, c);
        break;
    case API_STRING:
        ok = str_tok(c, &p, &n) && string_ok(s, p, n);
        break;
    case API_INT:
    case API_NUMBER:
        ok = number(s, c);
        break;
    case API_BOOL:
        ok = (c->len - c->i >= 4 && !memcmp(c->b + c->i, "true", 4)) ||
             (c->len - c->i >= 5 && !memcmp(c->b + c->i, "false", 5));
        if (ok)
            c->i += c->b[c->i] == 't' ? 4 : 5;
        break;
    case API_QUANTITY:
    case API_DURATION:
    case API_TIME:
        ok = str_tok(c, &p, &n) && scalar_canonical(s, p, n);
        break;
    case API_INT_OR_STRING: {
        int64_t v;
        ok = at(c, '"') ? str_tok(c, &p, &n) : int_tok(c, &v);
        break;
    }
    default:
        ok = false;
        break;
    }
    if (ok && s->check)
        ok = tree_check(s, c, start, c->i, true);
    return ok;
}

bool api_canonical_check(const struct api_schema *s, const char *buf, size_t len, unsigned flags)
{
    size_t end;

    return api_canonical_prefix(s, buf, len, flags, &end) && end == len;
}

bool api_canonical_prefix(const struct api_schema *s, const char *buf, size_t len, unsigned flags,
                          size_t *ret_end)
{
    struct cc c = {.b = buf, .len = len, .flags = flags};

    if (!buf || !value(s, &c))
        return false;
    *ret_end = c.i;
    return true;
}
