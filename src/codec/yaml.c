/*
 * YAML <-> cJSON. Decoding drives libfyaml's event parser and builds cJSON trees ourselves, so
 * that scalar typing, key conversion and duplicate keys follow sigs.k8s.io/yaml (what kubectl
 * does to manifests), and so the limits hold while parsing: depth is checked as containers
 * open, and every alias is charged its full expanded size before it is copied, which makes
 * "billion laughs" fail fast. Emission is our own block-style writer over cJSON, with the quoting
 * decided by the same resolver the decoder uses, so what we write reads back identically.
 *
 * libfyaml 0.7.12 (Debian bookworm) returns wrong, truncated or uninitialised scalar text on some
 * inputs, and leaks on others; fuzzing found these, and each has a guard here: quoted scalars are
 * decoded from the source by us, line breaks reach it as LF only, text YAML forbids (NUL, control
 * characters) is refused up front, and block scalar layouts it misreads are refused.
 */
/* clang-format off: our own header first proves it is self-contained */
#include "codec/codec.h"
/* clang-format on */

#include <inttypes.h>
#include <libfyaml.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec-int.h"

/* Mappings up to this size are checked for duplicate keys by a scan; larger ones get a map. */
#define DUP_LINEAR_MAX 8

/* Keys longer than this are written as explicit "? key" entries: many YAML parsers (libyaml,
 * go-yaml) refuse implicit keys past 1024 characters. */
#define IMPLICIT_KEY_MAX 1024

/* ---- scalar resolution (go-yaml v2 resolve.go, as used by sigs.k8s.io/yaml) ---- */

enum ykind { Y_STR, Y_NULL, Y_BOOL, Y_INT, Y_BIGINT, Y_FLOAT, Y_INF, Y_NAN };

struct yscalar {
    enum ykind kind;
    bool b;
    int64_t i;
    double d; /* Y_BIGINT, Y_FLOAT, Y_INF (sign) */
};

enum ytag {
    TAG_NONE,
    TAG_STR,
    TAG_BOOL,
    TAG_INT,
    TAG_FLOAT,
    TAG_NULL,
    TAG_TIMESTAMP,
    TAG_MERGE,
    TAG_BINARY,
    TAG_OTHER
};

static const char *const tag_names[] = {
    [TAG_NONE] = "",
    [TAG_STR] = "!!str",
    [TAG_BOOL] = "!!bool",
    [TAG_INT] = "!!int",
    [TAG_FLOAT] = "!!float",
    [TAG_NULL] = "!!null",
    [TAG_TIMESTAMP] = "!!timestamp",
    [TAG_MERGE] = "!!merge",
    [TAG_BINARY] = "!!binary",
    [TAG_OTHER] = "!",
};

/* go-yaml v2's resolve table: words that are not strings (none is longer than 5). */
#define WORD(text, kind, sign)                                                                     \
    {                                                                                              \
        text, sizeof(text) - 1, kind, sign                                                         \
    }
static const struct {
    const char *text;
    size_t len;
    enum ykind kind;
    int sign; /* bool value, or the sign of an infinity */
} resolve_words[] = {
    WORD("y", Y_BOOL, 1),     WORD("Y", Y_BOOL, 1),     WORD("yes", Y_BOOL, 1),
    WORD("Yes", Y_BOOL, 1),   WORD("YES", Y_BOOL, 1),   WORD("true", Y_BOOL, 1),
    WORD("True", Y_BOOL, 1),  WORD("TRUE", Y_BOOL, 1),  WORD("on", Y_BOOL, 1),
    WORD("On", Y_BOOL, 1),    WORD("ON", Y_BOOL, 1),    WORD("n", Y_BOOL, 0),
    WORD("N", Y_BOOL, 0),     WORD("no", Y_BOOL, 0),    WORD("No", Y_BOOL, 0),
    WORD("NO", Y_BOOL, 0),    WORD("false", Y_BOOL, 0), WORD("False", Y_BOOL, 0),
    WORD("FALSE", Y_BOOL, 0), WORD("off", Y_BOOL, 0),   WORD("Off", Y_BOOL, 0),
    WORD("OFF", Y_BOOL, 0),   WORD("", Y_NULL, 0),      WORD("~", Y_NULL, 0),
    WORD("null", Y_NULL, 0),  WORD("Null", Y_NULL, 0),  WORD("NULL", Y_NULL, 0),
    WORD(".nan", Y_NAN, 0),   WORD(".NaN", Y_NAN, 0),   WORD(".NAN", Y_NAN, 0),
    WORD(".inf", Y_INF, 1),   WORD(".Inf", Y_INF, 1),   WORD(".INF", Y_INF, 1),
    WORD("+.inf", Y_INF, 1),  WORD("+.Inf", Y_INF, 1),  WORD("+.INF", Y_INF, 1),
    WORD("-.inf", Y_INF, -1), WORD("-.Inf", Y_INF, -1), WORD("-.INF", Y_INF, -1),
};
#undef WORD

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int digit_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z')
        return c - 'A' + 10;
    return 99;
}

/*
 * Go's strconv.ParseUint/ParseInt with base 0 (prefixes 0x, 0o, 0b, and a bare leading 0 for
 * octal) on s[0..len). Returns 0 with the magnitude in *mag, 1 when the syntax is fine but the
 * value does not fit 64 bits, -1 on bad syntax.
 */
static int go_parse_uint(const char *s, size_t len, bool allow_sign, bool *neg, uint64_t *mag)
{
    unsigned base = 10;
    size_t i = 0;
    uint64_t v = 0;
    bool overflow = false;

    *neg = false;
    if (allow_sign && len && (s[0] == '+' || s[0] == '-')) {
        *neg = s[0] == '-';
        i = 1;
    }
    if (i >= len)
        return -1;
    if (s[i] == '0') {
        int p = len - i >= 3 ? s[i + 1] | 0x20 : 0;

        if (p == 'b') {
            base = 2;
            i += 2;
        } else if (p == 'o') {
            base = 8;
            i += 2;
        } else if (p == 'x') {
            base = 16;
            i += 2;
        } else {
            base = 8;
            i += 1;
        }
    }
    for (; i < len; i++) {
        int dv = digit_value(s[i]);

        if (dv >= (int)base)
            return -1;
        if (v > (UINT64_MAX - (uint64_t)dv) / base)
            overflow = true;
        else
            v = v * base + (uint64_t)dv;
    }
    *mag = v;
    return overflow ? 1 : 0;
}

/* ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ (go-yaml's yamlStyleFloat). */
static bool is_yaml_float(const char *s, size_t len)
{
    size_t i = 0, n;

    if (i < len && (s[i] == '+' || s[i] == '-'))
        i++;
    if (i < len && s[i] == '.') {
        i++;
        for (n = 0; i < len && is_digit(s[i]); i++)
            n++;
        if (!n)
            return false;
    } else {
        for (n = 0; i < len && is_digit(s[i]); i++)
            n++;
        if (!n)
            return false;
        if (i < len && s[i] == '.') {
            i++;
            while (i < len && is_digit(s[i]))
                i++;
        }
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            i++;
        for (n = 0; i < len && is_digit(s[i]); i++)
            n++;
        if (!n)
            return false;
    }
    return i == len;
}

/* strtod on a copy (s is not NUL-terminated); false unless finite, as Go's ParseFloat errors on
 * overflow but not on underflow. */
static bool parse_float(const char *s, size_t len, double *ret)
{
    char tmp[128];
    double d;

    if (len >= sizeof(tmp))
        return false; /* at most 127 characters of digits: nothing real is longer */
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    d = strtod(tmp, NULL);
    if (!isfinite(d))
        return false;
    *ret = d;
    return true;
}

/* The type of an untagged plain scalar, following go-yaml v2's resolve() with tag "". */
static enum ykind resolve_plain(const char *s, size_t len, struct yscalar *out)
{
    char plain[128];
    size_t i, n = 0;
    uint64_t mag;
    bool neg;
    int r;

    memset(out, 0, sizeof(*out));
    out->kind = Y_STR;
    for (i = 0; len <= 5 && i < ARRAY_SIZE(resolve_words); i++) {
        if (resolve_words[i].len == len && memcmp(resolve_words[i].text, s, len) == 0) {
            out->kind = resolve_words[i].kind;
            out->b = resolve_words[i].sign > 0;
            out->d = resolve_words[i].sign < 0 ? -INFINITY : INFINITY;
            return out->kind;
        }
    }
    if (!len)
        return Y_STR;
    if (s[0] == '.') {
        /* Go's ParseFloat on the text as is; only decimal forms can start with '.'. */
        if (is_yaml_float(s, len) && parse_float(s, len, &out->d))
            out->kind = Y_FLOAT;
        return out->kind;
    }
    if (!is_digit(s[0]) && s[0] != '+' && s[0] != '-')
        return Y_STR;

    /* Numbers: go-yaml drops every '_' first. Longer texts than 127 are no number we accept. */
    if (len >= sizeof(plain))
        return Y_STR;
    for (i = 0; i < len; i++) {
        if (s[i] != '_')
            plain[n++] = s[i];
    }
    r = go_parse_uint(plain, n, true, &neg, &mag);
    if (r == 0 && (neg ? mag <= (uint64_t)INT64_MAX + 1 : mag <= (uint64_t)INT64_MAX)) {
        out->kind = Y_INT;
        out->i = neg ? (int64_t)(0 - mag) : (int64_t)mag;
        return Y_INT;
    }
    if (go_parse_uint(plain, n, false, &neg, &mag) == 0) {
        out->kind = Y_BIGINT;
        out->d = (double)mag;
        return Y_BIGINT;
    }
    if (is_yaml_float(plain, n) && parse_float(plain, n, &out->d)) {
        out->kind = Y_FLOAT;
        return Y_FLOAT;
    }
    /* Newer go-yaml reads what overflows uint64 with math/big; kubectl 1.32 keeps it a string
     * ("0x1FFFFFFFFFFFFFFFF"), and so do we. */
    return Y_STR;
}

static enum ytag kind_tag(enum ykind k)
{
    switch (k) {
    case Y_NULL:
        return TAG_NULL;
    case Y_BOOL:
        return TAG_BOOL;
    case Y_INT:
    case Y_BIGINT:
        return TAG_INT;
    case Y_FLOAT:
    case Y_INF:
    case Y_NAN:
        return TAG_FLOAT;
    default:
        return TAG_STR;
    }
}

/* go-yaml's quick timestamp test (four digits and a dash); the value stays a string anyway. */
static bool looks_like_timestamp(const char *s, size_t len)
{
    size_t i;

    for (i = 0; i < len && is_digit(s[i]); i++)
        ;
    return i == 4 && i < len && s[i] == '-';
}

/*
 * The value of a scalar with its tag and style. Untagged non-plain scalars are strings; explicit
 * standard tags convert or fail like go-yaml ("cannot decode !!str `abc` as a !!int").
 * Returns 0 or -EINVAL with msg filled.
 */
static int resolve_scalar(const char *s, size_t len, bool plain, enum ytag tag, struct yscalar *out,
                          char *msg, size_t msgsize)
{
    char preview[96];
    enum ytag rtag;

    memset(out, 0, sizeof(*out));
    out->kind = Y_STR;
    switch (tag) {
    case TAG_NONE:
        if (plain)
            resolve_plain(s, len, out);
        return 0;
    case TAG_STR:
    case TAG_MERGE:
    case TAG_OTHER:
        return 0;
    case TAG_BINARY:
        (void)snprintf(msg, msgsize, "!!binary scalars are not supported");
        return -EINVAL;
    case TAG_TIMESTAMP:
        if (looks_like_timestamp(s, len))
            return 0;
        break;
    default:
        resolve_plain(s, len, out);
        rtag = kind_tag(out->kind);
        if (rtag == tag)
            return 0;
        if (tag == TAG_FLOAT && out->kind == Y_INT) {
            out->kind = Y_FLOAT;
            out->d = (double)out->i;
            return 0;
        }
        if (tag == TAG_FLOAT && out->kind == Y_BIGINT) {
            out->kind = Y_FLOAT;
            return 0;
        }
        break;
    }
    codec__preview(preview, sizeof(preview), s, len);
    (void)snprintf(msg, msgsize, "cannot decode %s as %s", preview, tag_names[tag]);
    return -EINVAL;
}

/*
 * Go's strconv.FormatFloat(f, 'g', -1, 32), which sigs.k8s.io/yaml uses for float keys: the
 * shortest digits that read back as the same float32, in exponent form ("1e+06") when the
 * decimal exponent is < -4 or >= 6 (Go's rule for the shortest form), else in fixed form.
 * Infinities and NaN are spelled the YAML way, as sigs.k8s.io/yaml does.
 */
static void format_float32_key(double d, char *buf, size_t size)
{
    float f = (float)d;
    char sci[40], digits[16] = "0";
    int p, dexp, nd = 0, k;
    const char *q;
    struct strbuf sb = STRBUF_INIT;

    if (isnan(f)) {
        (void)snprintf(buf, size, ".nan");
        return;
    }
    if (isinf(f)) {
        (void)snprintf(buf, size, "%s", f > 0 ? ".inf" : "-.inf");
        return;
    }
    if (f == 0) {
        (void)snprintf(buf, size, "%s", signbit(f) ? "-0" : "0");
        return;
    }
    for (p = 1; p < 9; p++) {
        (void)snprintf(sci, sizeof(sci), "%.*e", p - 1, (double)f);
        if ((float)strtod(sci, NULL) == f)
            break;
    }
    (void)snprintf(sci, sizeof(sci), "%.*e", p - 1, (double)f);
    q = sci;
    if (*q == '-') {
        strbuf_addch(&sb, '-');
        q++;
    }
    for (; *q && *q != 'e'; q++) {
        if (is_digit(*q) && nd < (int)sizeof(digits) - 1)
            digits[nd++] = *q;
    }
    dexp = (int)strtol(q + 1, NULL, 10);
    if (!nd)
        nd = 1; /* digits[0] is '0' */
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    if (dexp < -4 || dexp >= 6) {
        strbuf_addch(&sb, digits[0]);
        if (nd > 1) {
            strbuf_addch(&sb, '.');
            strbuf_add(&sb, digits + 1, (size_t)nd - 1);
        }
        strbuf_addf(&sb, "e%c%02d", dexp < 0 ? '-' : '+', dexp < 0 ? -dexp : dexp);
    } else if (dexp >= 0) {
        for (k = 0; k <= dexp; k++) {
            if (k < nd)
                strbuf_addch(&sb, digits[k]);
            else
                strbuf_addch(&sb, '0');
        }
        if (nd > dexp + 1) {
            strbuf_addch(&sb, '.');
            strbuf_add(&sb, digits + dexp + 1, (size_t)(nd - dexp - 1));
        }
    } else {
        strbuf_addstr(&sb, "0.");
        for (k = 0; k < -dexp - 1; k++)
            strbuf_addch(&sb, '0');
        strbuf_add(&sb, digits, (size_t)nd);
    }
    (void)snprintf(buf, size, "%s", sb.buf);
    strbuf_release(&sb);
}

/* ---- decoding ---- */

struct yframe {
    cJSON *node;           /* owned until attached to its parent */
    char *anchor;          /* owned; registered when the node completes */
    size_t nodes_at_start; /* ybuild.nodes before this node was counted */
    size_t bytes_at_start; /* ybuild.bytes when this node started */
    int height;            /* of the tallest child so far */
    bool is_map;
    size_t column; /* of the first key or item, in bytes from the start of its line */
    /* mappings only */
    bool have_key;            /* the next node is the value of key */
    bool key_is_merge;        /* ... and key is "<<" */
    char *key;                /* owned */
    size_t key_off;           /* where key starts in the input */
    size_t nkeys;             /* explicit and merged keys so far */
    bool use_map;             /* keys are tracked in keys rather than by scanning children */
    struct codec_strmap keys; /* borrowed key strings */
    /* Merge sources in order of precedence, borrowed: they live in the tree or in
     * ybuild.keep until the document ends. */
    const cJSON **merges;
    size_t nmerges, cap_merges;
};

struct yanchor {
    struct yanchor *next; /* all anchors of the document, newest first */
    char *name;           /* owned */
    cJSON *node;          /* borrowed, like yframe.merges */
    size_t size;          /* expanded node count */
    size_t bytes;         /* expanded string bytes (keys and values) */
    int height;
};

struct ybuild {
    const struct codec_limits *lim;
    struct codec_error *err;
    const char *buf;
    size_t len;
    size_t nodes;       /* over the whole stream, aliases at their expanded size */
    size_t bytes;       /* string bytes decoded so far, aliases at their expanded size */
    size_t alias_bytes; /* the part of bytes that aliases added */
    size_t docs_seen;
    struct yframe *frames;
    size_t nframes, cap_frames;
    struct yanchor *anchors;
    struct codec_strmap anchor_map; /* name -> the latest struct yanchor of that name */
    cJSON *keep;                    /* nodes anchors or merges refer to that are in no tree */
    cJSON *root;
    cJSON **docs;
    size_t ndocs, cap_docs;
    bool have_last; /* last_off is the start of the last event with a position */
    size_t last_off;
};

#define NO_OFFSET SIZE_MAX

/* Where fye starts in the input, NO_OFFSET if unknown. Errors turn it into a line and column
 * only when they happen: computing positions is linear in the input. */
static size_t event_offset(struct ybuild *b, struct fy_event *fye)
{
    const struct fy_mark *m = fy_event_start_mark(fye);
    enum fy_scalar_style style;
    char prev;

    if (!m) /* empty scalars have no mark: use the last event that had one */
        return b->have_last ? b->last_off : NO_OFFSET;
    if (m->input_pos == 0 || m->input_pos > b->len)
        return m->input_pos;
    /* libfyaml marks an alias at its name and a quoted scalar inside its quotes; point at the
     * '*' or the opening quote, where the node starts. */
    prev = b->buf[m->input_pos - 1];
    style = fye->type == FYET_SCALAR ? fy_token_scalar_style(fye->scalar.value) : FYSS_ANY;
    if ((fye->type == FYET_ALIAS && prev == '*') || (style == FYSS_SINGLE_QUOTED && prev == '\'') ||
        (style == FYSS_DOUBLE_QUOTED && prev == '"'))
        return m->input_pos - 1;
    return m->input_pos;
}

static void offset_position(struct ybuild *b, size_t off, int *line, int *column)
{
    if (off == NO_OFFSET) {
        *line = 0;
        *column = 0;
        return;
    }
    codec__position(b->buf, b->len, off, line, column);
}

static int fail_at(struct ybuild *b, int line, int column, int r, const char *msg)
{
    codec__set_error(b->err, line, column, "%s", msg);
    return r;
}

static int fail_off(struct ybuild *b, size_t off, int r, const char *msg)
{
    int line, column;

    offset_position(b, off, &line, &column);
    return fail_at(b, line, column, r, msg);
}

static int fail_event(struct ybuild *b, struct fy_event *fye, int r, const char *msg)
{
    return fail_off(b, event_offset(b, fye), r, msg);
}

static int fail_nomem(struct ybuild *b)
{
    return fail_at(b, 0, 0, -ENOMEM, "out of memory");
}

/* arr (of *cap elements of size sz, n used) with room for one more: arr itself, or a larger
 * copy (*cap updated), or NULL when out of memory (arr is then unchanged). */
static void *grow(void *arr, size_t *cap, size_t n, size_t sz)
{
    size_t ncap;
    void *p;

    if (n < *cap)
        return arr;
    ncap = *cap ? *cap * 2 : 8;
    if (ncap > SIZE_MAX / sz)
        return NULL;
    p = crealloc(arr, ncap * sz);
    if (p)
        *cap = ncap;
    return p;
}

static struct yframe *top(struct ybuild *b)
{
    return b->nframes ? &b->frames[b->nframes - 1] : NULL;
}

static bool want_key(struct ybuild *b)
{
    struct yframe *f = top(b);

    return f && f->is_map && !f->have_key;
}

static void frame_release(struct yframe *f)
{
    cJSON_Delete(f->node);
    free(f->anchor);
    free(f->key);
    codec__strmap_release(&f->keys);
    free(f->merges);
    memset(f, 0, sizeof(*f));
}

/* Parks a node that is in no tree but may be referred to until the document ends. */
static int keep_node(struct ybuild *b, cJSON *node)
{
    if (!b->keep) {
        b->keep = cJSON_CreateArray();
        if (!b->keep) {
            cJSON_Delete(node);
            return -ENOMEM;
        }
    }
    cJSON_AddItemToArray(b->keep, node);
    return 0;
}

static void doc_reset(struct ybuild *b)
{
    while (b->nframes)
        frame_release(&b->frames[--b->nframes]);
    while (b->anchors) {
        struct yanchor *a = b->anchors;

        b->anchors = a->next;
        free(a->name);
        free(a);
    }
    codec__strmap_release(&b->anchor_map);
    cJSON_Delete(b->keep);
    b->keep = NULL;
    cJSON_Delete(b->root);
    b->root = NULL;
}

/* Takes ownership of name. */
static int anchor_register(struct ybuild *b, char *name, cJSON *node, size_t size, size_t bytes,
                           int height)
{
    struct yanchor *a = cmalloc(sizeof(*a));
    void **slot;

    if (!a) {
        free(name);
        return -ENOMEM;
    }
    *a = (struct yanchor){b->anchors, name, node, size, bytes, height};
    b->anchors = a;
    /* A later anchor of the same name replaces the earlier one for later aliases. */
    slot = codec__strmap_find(&b->anchor_map, name);
    if (slot) {
        *slot = a;
        return 0;
    }
    return codec__strmap_add(&b->anchor_map, name, a) < 0 ? -ENOMEM : 0;
}

static struct yanchor *anchor_find(struct ybuild *b, const char *name)
{
    void **slot = codec__strmap_find(&b->anchor_map, name);

    return slot ? *slot : NULL;
}

/* 0 if key is new in f (and now recorded), 1 if f already has it, -ENOMEM. */
static int frame_add_key(struct yframe *f, const char *key)
{
    const cJSON *c;
    int r;

    if (!f->use_map && f->nkeys >= DUP_LINEAR_MAX) {
        for (c = f->node->child; c; c = c->next) {
            r = codec__strmap_add(&f->keys, c->string, NULL);
            if (r < 0)
                return r;
        }
        f->use_map = true;
    }
    if (f->use_map) {
        r = codec__strmap_add(&f->keys, key, NULL);
        if (r != 0)
            return r;
    } else {
        for (c = f->node->child; c; c = c->next) {
            if (strcmp(c->string, key) == 0)
                return 1;
        }
    }
    f->nkeys++;
    return 0;
}

static int add_merge_source(struct ybuild *b, struct yframe *f, const cJSON *src)
{
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    const cJSON **p = grow(f->merges, &f->cap_merges, f->nmerges, sizeof(*f->merges));

    if (!p)
        return fail_nomem(b);
    f->merges = p;
    f->merges[f->nmerges++] = src;
    return 0;
}

/* The value of a "<<" key: a mapping or a sequence of mappings, whose keys the enclosing
 * mapping takes unless it sets them itself (YAML merge key spec). src is borrowed. */
static int add_merge(struct ybuild *b, struct yframe *f, const cJSON *src, int height)
{
    const cJSON *c;
    int r;

    if (cJSON_IsObject(src)) {
        r = add_merge_source(b, f, src);
    } else if (cJSON_IsArray(src)) {
        for (r = 0, c = src->child; c && r == 0; c = c->next) {
            if (!cJSON_IsObject(c))
                break;
            r = add_merge_source(b, f, c);
        }
        if (c && r == 0)
            r = -EINVAL;
    } else {
        r = -EINVAL;
    }
    if (r == -EINVAL)
        r = fail_off(b, f->key_off, -EINVAL,
                     "the value of a merge key (<<) must be a mapping or a sequence of mappings");
    if (r == 0 && height - 1 > f->height)
        f->height = height - 1;
    f->have_key = false;
    f->key_is_merge = false;
    FREE_AND_NULL(f->key);
    return r;
}

static int apply_merges(struct ybuild *b, struct yframe *f)
{
    size_t i;
    int r;

    for (i = 0; i < f->nmerges; i++) {
        const cJSON *c;

        for (c = f->merges[i]->child; c; c = c->next) {
            cJSON *copy;

            r = frame_add_key(f, c->string);
            if (r < 0)
                return fail_nomem(b);
            if (r > 0)
                continue;
            copy = cJSON_Duplicate(c, true);
            if (!copy)
                return fail_nomem(b);
            cJSON_AddItemToArray(f->node, copy);
        }
    }
    return 0;
}

/*
 * Places a finished node: as the document root, a sequence item, the value of the pending key,
 * or a merge source. Takes ownership of node and anchor.
 */
static int add_value(struct ybuild *b, cJSON *node, size_t size, size_t bytes, int height,
                     char *anchor)
{
    struct yframe *f = top(b);
    int r;

    /* A copy of an aliased mapping member still carries its old key. */
    if (node->string && !(node->type & cJSON_StringIsConst))
        free(node->string);
    node->string = NULL;
    node->type &= ~cJSON_StringIsConst;

    if (anchor) {
        r = anchor_register(b, anchor, node, size, bytes, height);
        if (r < 0) {
            cJSON_Delete(node);
            return fail_nomem(b);
        }
    }
    if (!f) {
        b->root = node;
        return 0;
    }
    if (!f->is_map) {
        if (height > f->height)
            f->height = height;
        cJSON_AddItemToArray(f->node, node);
        return 0;
    }
    if (f->key_is_merge) {
        r = keep_node(b, node);
        if (r < 0)
            return fail_nomem(b);
        return add_merge(b, f, node, height);
    }
    if (height > f->height)
        f->height = height;
    node->string = f->key;
    f->key = NULL;
    f->have_key = false;
    cJSON_AddItemToArray(f->node, node);
    return 0;
}

static int accept_key(struct ybuild *b, struct fy_event *fye, char *key, bool is_merge)
{
    struct yframe *f = top(b);
    char preview[96];
    int r, line, column;

    f->key_off = event_offset(b, fye);
    if (!is_merge) {
        r = frame_add_key(f, key);
        if (r < 0) {
            free(key);
            return fail_nomem(b);
        }
        if (r > 0) {
            codec__preview(preview, sizeof(preview), key, strlen(key));
            free(key);
            offset_position(b, f->key_off, &line, &column);
            codec__set_error(b->err, line, column, "duplicate key %s", preview);
            return -EINVAL;
        }
    }
    f->key = key;
    f->key_is_merge = is_merge;
    f->have_key = true;
    return 0;
}

static enum ytag event_tag(struct fy_event *fye)
{
    static const struct {
        const char *name;
        enum ytag tag;
    } std[] = {
        {"tag:yaml.org,2002:str", TAG_STR},     {"tag:yaml.org,2002:bool", TAG_BOOL},
        {"tag:yaml.org,2002:int", TAG_INT},     {"tag:yaml.org,2002:float", TAG_FLOAT},
        {"tag:yaml.org,2002:null", TAG_NULL},   {"tag:yaml.org,2002:timestamp", TAG_TIMESTAMP},
        {"tag:yaml.org,2002:merge", TAG_MERGE}, {"tag:yaml.org,2002:binary", TAG_BINARY},
    };
    struct fy_token *t = fy_event_get_tag_token(fye);
    const char *text;
    size_t len, i;

    if (!t)
        return TAG_NONE;
    text = fy_token_get_text(t, &len);
    if (!text)
        return TAG_OTHER;
    for (i = 0; i < ARRAY_SIZE(std); i++) {
        if (strlen(std[i].name) == len && memcmp(std[i].name, text, len) == 0)
            return std[i].tag;
    }
    return TAG_OTHER;
}

/* The anchor of fye as an owned string in *ret (NULL if none); -ENOMEM. */
static int event_anchor(struct fy_event *fye, char **ret)
{
    struct fy_token *t = fy_event_get_anchor_token(fye);
    const char *text;
    size_t len;

    *ret = NULL;
    if (!t)
        return 0;
    text = fy_token_get_text(t, &len);
    if (!text)
        return -ENOMEM;
    *ret = cstrndup(text, len);
    return *ret ? 0 : -ENOMEM;
}

static cJSON *scalar_node(const struct yscalar *sc, const char *text, size_t len)
{
    cJSON *n;

    switch (sc->kind) {
    case Y_NULL:
        return cJSON_CreateNull();
    case Y_BOOL:
        return cJSON_CreateBool(sc->b);
    case Y_INT:
        return cJSON_CreateNumber((double)sc->i);
    case Y_BIGINT:
    case Y_FLOAT:
        return cJSON_CreateNumber(sc->d);
    default:
        break;
    }
    /* cJSON_CreateString() wants a NUL-terminated copy; build the item around ours instead. */
    n = cJSON_CreateNull();
    if (!n)
        return NULL;
    n->valuestring = cstrndup(text, len);
    if (!n->valuestring) {
        cJSON_Delete(n);
        return NULL;
    }
    n->type = cJSON_String;
    return n;
}

/*
 * A mapping key as sigs.k8s.io/yaml's convertToJSONableObject() writes it: strings as they are,
 * integers in decimal, floats with FormatFloat(f, 'g', -1, 32), booleans as true/false; null and
 * integers beyond int64 are refused. Returns an owned string via *ret, or -EINVAL (msg filled)
 * or -ENOMEM.
 */
static int key_from_scalar(const struct yscalar *sc, const char *text, size_t len, char **ret,
                           char *msg, size_t msgsize)
{
    char buf[64];

    switch (sc->kind) {
    case Y_STR:
        *ret = cstrndup(text, len);
        return *ret ? 0 : -ENOMEM;
    case Y_NULL:
        (void)snprintf(msg, msgsize, "null mapping keys are not supported");
        return -EINVAL;
    case Y_BIGINT:
        (void)snprintf(msg, msgsize, "integer mapping keys must fit in 64 bits");
        return -EINVAL;
    case Y_BOOL:
        (void)snprintf(buf, sizeof(buf), "%s", sc->b ? "true" : "false");
        break;
    case Y_INT:
        (void)snprintf(buf, sizeof(buf), "%" PRId64, sc->i);
        break;
    case Y_FLOAT:
        format_float32_key(sc->d, buf, sizeof(buf));
        break;
    case Y_INF:
        (void)snprintf(buf, sizeof(buf), "%s", sc->d > 0 ? ".inf" : "-.inf");
        break;
    case Y_NAN:
        (void)snprintf(buf, sizeof(buf), ".nan");
        break;
    }
    *ret = cstrndup(buf, strlen(buf));
    return *ret ? 0 : -ENOMEM;
}

/* A key taken from an aliased node: the same conversion from the node's JSON type. */
static int key_from_node(const cJSON *n, char **ret, char *msg, size_t msgsize)
{
    struct yscalar sc = {.kind = Y_STR};
    const char *text = "";

    if (cJSON_IsString(n)) {
        text = n->valuestring;
    } else if (cJSON_IsBool(n)) {
        sc.kind = Y_BOOL;
        sc.b = cJSON_IsTrue(n);
    } else if (cJSON_IsNull(n)) {
        sc.kind = Y_NULL;
    } else if (cJSON_IsNumber(n)) {
        double d = n->valuedouble;

        if (d == trunc(d) && fabs(d) < 9223372036854775808.0) {
            sc.kind = Y_INT;
            sc.i = (int64_t)d;
        } else {
            sc.kind = Y_FLOAT;
            sc.d = d;
        }
    } else {
        (void)snprintf(msg, msgsize, "mapping keys must be scalars");
        return -EINVAL;
    }
    return key_from_scalar(&sc, text, strlen(text), ret, msg, msgsize);
}

static int check_node_budget(struct ybuild *b, struct fy_event *fye, size_t add)
{
    char msg[128];

    if (add > b->lim->max_nodes || b->nodes > b->lim->max_nodes - add) {
        (void)snprintf(msg, sizeof(msg),
                       "input has more than %zu nodes (aliases counted at their expanded size)",
                       b->lim->max_nodes);
        return fail_event(b, fye, -E2BIG, msg);
    }
    b->nodes += add;
    return 0;
}

/* Aliases may add at most max_bytes of string data: without this bound one long anchored
 * string, aliased many times, would cost far more memory than the node limit suggests. */
static int check_alias_bytes(struct ybuild *b, struct fy_event *fye, size_t add)
{
    char msg[128];

    if (add > b->lim->max_bytes || b->alias_bytes > b->lim->max_bytes - add) {
        (void)snprintf(msg, sizeof(msg),
                       "aliases expand to more than %zu bytes of strings (the input size limit)",
                       b->lim->max_bytes);
        return fail_event(b, fye, -E2BIG, msg);
    }
    b->alias_bytes += add;
    b->bytes += add;
    return 0;
}

static int check_depth(struct ybuild *b, struct fy_event *fye, size_t depth)
{
    char msg[128];

    if (depth > (size_t)(b->lim->max_depth < 0 ? 0 : b->lim->max_depth)) {
        (void)snprintf(msg, sizeof(msg), "nesting depth exceeds the limit of %d",
                       b->lim->max_depth);
        return fail_event(b, fye, -E2BIG, msg);
    }
    return 0;
}

static bool is_white(char c)
{
    return c == ' ' || c == '\t';
}

/*
 * The value of a single-quoted scalar from its source text (between the quotes): "''" is a quote,
 * and line breaks fold as YAML 1.2 section 7.3.2 says (white space around a break is dropped, a
 * lone break becomes a space, n empty lines become n newlines). libfyaml 0.7.12 garbles scalars
 * with two escaped quotes in a row ('a '''' b' reads "a ''' "), so we decode them ourselves.
 * Returns an owned string via *ret and its length, or -ENOMEM.
 */
static int decode_single_quoted(const char *raw, size_t len, char **ret, size_t *ret_len)
{
    char *out = cmalloc(len + 1);
    size_t i = 0, n = 0, empty = 0;
    bool first = true;

    if (!out)
        return -ENOMEM;
    for (;;) {
        size_t start = i, end, k;
        bool last;

        while (i < len && raw[i] != '\n' && raw[i] != '\r')
            i++;
        end = i;
        last = i >= len;
        if (!last) {
            if (raw[i] == '\r' && i + 1 < len && raw[i + 1] == '\n')
                i++;
            i++;
        }
        if (!first) {
            while (start < end && is_white(raw[start]))
                start++;
        }
        if (!last) {
            while (end > start && is_white(raw[end - 1]))
                end--;
        }
        if (!first && !last && start == end) {
            empty++;
            continue;
        }
        if (!first) {
            if (!empty)
                out[n++] = ' ';
            for (; empty; empty--)
                out[n++] = '\n';
        }
        for (k = start; k < end; k++) {
            out[n++] = raw[k];
            if (raw[k] == '\'' && k + 1 < end && raw[k + 1] == '\'')
                k++;
        }
        first = false;
        if (last)
            break;
    }
    out[n] = '\0';
    *ret = out;
    *ret_len = n;
    return 0;
}

static size_t put_utf8(char *out, uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* n hex digits at s[0..len) as a code point, or -1. */
static long hex_escape(const char *s, size_t len, size_t n)
{
    long v = 0;
    size_t k;

    if (len < n)
        return -1;
    for (k = 0; k < n; k++) {
        int d = digit_value(s[k]);

        if (d >= 16)
            return -1;
        v = v << 4 | d;
    }
    return v;
}

/*
 * The value of a double-quoted scalar from its source text (between the quotes, line breaks
 * already LF), per YAML 1.2 sections 5.7 and 7.3.1: escapes, and line folding where white space
 * around a break is dropped, a lone break becomes a space, n empty lines become n newlines and an
 * escaped break ("\" at the end of a line) joins the lines. libfyaml 0.7.12 miscounts the length
 * when an escaped break is followed by empty lines and returns a truncated text, so we decode
 * these ourselves. \u escapes may form UTF-16 surrogate pairs, as JSON's do. Returns an owned
 * string via *ret and its length, -EINVAL for a bad escape (libfyaml checks them first), or
 * -ENOMEM.
 */
static int decode_double_quoted(const char *raw, size_t len, char **ret, size_t *ret_len)
{
    /* Output is never longer than 3/2 of the input: \L and \P give 3 bytes for 2. */
    char *out = cmalloc(len / 2 * 3 + 4);
    size_t i = 0, n = 0, white = SIZE_MAX; /* white: where trailing raw white space starts */

    if (!out)
        return -ENOMEM;
    while (i < len) {
        char c = raw[i];
        long cp = -1;

        if (c == '\n') {
            size_t breaks = 0;

            if (white != SIZE_MAX)
                n = white; /* white space before a break is not content */
            for (i++;; i++, breaks++) {
                while (i < len && is_white(raw[i]))
                    i++;
                if (i >= len || raw[i] != '\n')
                    break;
            }
            if (!breaks)
                out[n++] = ' ';
            for (; breaks; breaks--)
                out[n++] = '\n';
            white = SIZE_MAX;
            continue;
        }
        if (c != '\\') {
            if (is_white(c)) {
                if (white == SIZE_MAX)
                    white = n;
            } else {
                white = SIZE_MAX;
            }
            out[n++] = c;
            i++;
            continue;
        }
        white = SIZE_MAX;
        if (i + 1 >= len)
            goto bad;
        i += 2;
        switch (raw[i - 1]) {
        case '\n':
            /* An escaped break: the lines join; empty lines after it still count. */
            while (i < len && is_white(raw[i]))
                i++;
            while (i < len && raw[i] == '\n') {
                out[n++] = '\n';
                for (i++; i < len && is_white(raw[i]); i++)
                    ;
            }
            continue;
        case '0':
            cp = 0;
            break;
        case 'a':
            cp = 7;
            break;
        case 'b':
            cp = 8;
            break;
        case 't':
        case '\t':
            cp = 9;
            break;
        case 'n':
            cp = 10;
            break;
        case 'v':
            cp = 11;
            break;
        case 'f':
            cp = 12;
            break;
        case 'r':
            cp = 13;
            break;
        case 'e':
            cp = 27;
            break;
        case ' ':
        case '"':
        case '/':
        case '\\':
            cp = (unsigned char)raw[i - 1];
            break;
        case 'N':
            cp = 0x85;
            break;
        case '_':
            cp = 0xa0;
            break;
        case 'L':
            cp = 0x2028;
            break;
        case 'P':
            cp = 0x2029;
            break;
        case 'x':
            cp = hex_escape(raw + i, len - i, 2);
            i += 2;
            break;
        case 'u':
            cp = hex_escape(raw + i, len - i, 4);
            i += 4;
            if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < len && raw[i] == '\\' &&
                raw[i + 1] == 'u') {
                long lo = hex_escape(raw + i + 2, len - i - 2, 4);

                if (lo >= 0xdc00 && lo <= 0xdfff) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    i += 6;
                }
            }
            break;
        case 'U':
            cp = hex_escape(raw + i, len - i, 8);
            i += 8;
            break;
        default:
            goto bad;
        }
        if (cp < 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            goto bad;
        n += put_utf8(out + n, (uint32_t)cp);
    }
    out[n] = '\0';
    *ret = out;
    *ret_len = n;
    return 0;
bad:
    free(out);
    return -EINVAL;
}

/*
 * libfyaml 0.7.12 returns wrong or partly uninitialised text for block scalars whose content is
 * not indented deeper than both the enclosing block collection and the line holding the "|" or
 * ">" header ("a:\n  |\n  x\n" reads "x" with no newline, "|-\nx" reads garbage). YAML itself
 * requires the former; we require the latter too and refuse the rare valid input it excludes.
 * start is where libfyaml says the content begins, end where the scalar ends.
 */
static bool block_layout_unsupported(struct ybuild *b, size_t start, size_t end, size_t *ret_header)
{
    const char *buf = b->buf;
    struct yframe *f = top(b);
    size_t line, i, indent, m;
    long n = f ? (long)f->column : -1;

    if (start == 0 || start > end || end > b->len || buf[start - 1] != '\n')
        return false;
    /* The header line ends just before start. */
    for (line = start - 1; line > 0 && buf[line - 1] != '\n'; line--)
        ;
    for (indent = 0; line + indent < start && buf[line + indent] == ' '; indent++)
        ;
    *ret_header = line + indent;
    if ((long)indent > n)
        n = (long)indent;
    /* Indentation of the first content line that is not blank. */
    for (i = start; i < end;) {
        for (m = 0; i + m < end && buf[i + m] == ' '; m++)
            ;
        if (i + m < end && buf[i + m] != '\n')
            return (long)m <= n;
        while (i < end && buf[i] != '\n')
            i++;
        i++;
    }
    return false;
}

static int on_scalar(struct ybuild *b, struct fy_event *fye)
{
    struct fy_token *t = fye->scalar.value;
    enum ytag tag = event_tag(fye);
    enum fy_scalar_style style = fy_token_scalar_style(t);
    const struct fy_mark *start = fy_token_start_mark(t), *end = fy_token_end_mark(t);
    char msg[192], *anchor = NULL, *key = NULL, *decoded = NULL;
    struct yscalar sc;
    const char *text;
    cJSON *node = NULL;
    size_t len = 0, header;
    bool plain = style == FYSS_PLAIN;
    int r;

    if ((style == FYSS_LITERAL || style == FYSS_FOLDED) && start && end &&
        block_layout_unsupported(b, start->input_pos, end->input_pos, &header))
        return fail_off(b, header, -EINVAL,
                        "block scalar content must be indented deeper than its parent and "
                        "than the line with its | or > header");
    if ((style == FYSS_SINGLE_QUOTED || style == FYSS_DOUBLE_QUOTED) && start && end &&
        start->input_pos <= end->input_pos && end->input_pos <= b->len) {
        if (style == FYSS_SINGLE_QUOTED)
            r = decode_single_quoted(b->buf + start->input_pos, end->input_pos - start->input_pos,
                                     &decoded, &len);
        else
            r = decode_double_quoted(b->buf + start->input_pos, end->input_pos - start->input_pos,
                                     &decoded, &len);
        if (r == -EINVAL)
            return fail_event(b, fye, r, "invalid escape in double-quoted scalar");
        if (r < 0)
            return fail_nomem(b);
        text = decoded;
    } else {
        text = fy_token_get_text(t, &len);
        if (!text) {
            if (len)
                return fail_nomem(b);
            text = "";
        }
    }
    if (memchr(text, '\0', len)) {
        r = fail_event(b, fye, -EINVAL, "strings may not contain NUL characters");
        goto out;
    }
    r = resolve_scalar(text, len, plain, tag, &sc, msg, sizeof(msg));
    if (r < 0) {
        r = fail_event(b, fye, r, msg);
        goto out;
    }
    if (event_anchor(fye, &anchor) < 0) {
        r = fail_nomem(b);
        goto out;
    }
    b->bytes += len;

    if (want_key(b)) {
        /* go-yaml's isMerge(): the text "<<", plain and untagged or tagged !!merge. */
        bool merge = len == 2 && memcmp(text, "<<", 2) == 0 &&
                     ((plain && tag == TAG_NONE) || tag == TAG_MERGE);

        if (!merge) {
            r = key_from_scalar(&sc, text, len, &key, msg, sizeof(msg));
            if (r == -EINVAL)
                r = fail_event(b, fye, r, msg);
            else if (r < 0)
                r = fail_nomem(b);
            if (r < 0)
                goto out;
        }
        if (anchor) {
            /* An anchored key may be aliased later, as a key or a value. */
            if (sc.kind == Y_INF || sc.kind == Y_NAN)
                sc.kind = Y_STR;
            node = scalar_node(&sc, text, len);
            r = node ? keep_node(b, node) : -ENOMEM;
            if (r == 0) {
                r = anchor_register(b, anchor, node, 1, len, 0);
                anchor = NULL;
            }
            node = NULL;
            if (r < 0) {
                r = fail_nomem(b);
                goto out;
            }
        }
        r = accept_key(b, fye, key, merge);
        key = NULL;
        goto out;
    }

    if (sc.kind == Y_INF || sc.kind == Y_NAN) {
        r = fail_event(b, fye, -EINVAL, "infinity and NaN cannot be represented in JSON");
        goto out;
    }
    r = check_node_budget(b, fye, 1);
    if (r < 0)
        goto out;
    node = scalar_node(&sc, text, len);
    if (!node) {
        r = fail_nomem(b);
        goto out;
    }
    r = add_value(b, node, 1, len, 0, anchor);
    anchor = NULL;
    node = NULL;
out:
    cJSON_Delete(node);
    free(anchor);
    free(key);
    free(decoded);
    return r;
}

static int on_alias(struct ybuild *b, struct fy_event *fye)
{
    char msg[192], preview[96], *name, *key = NULL;
    struct yframe *f = top(b);
    struct yanchor *a;
    const char *text;
    cJSON *copy;
    size_t len;
    int r;

    text = fy_token_get_text(fye->alias.anchor, &len);
    if (!text)
        return fail_nomem(b);
    name = cstrndup(text, len);
    if (!name)
        return fail_nomem(b);
    a = memchr(text, '\0', len) ? NULL : anchor_find(b, name);
    free(name);
    if (!a) {
        codec__preview(preview, sizeof(preview), text, len);
        (void)snprintf(msg, sizeof(msg), "unknown anchor %s", preview);
        return fail_event(b, fye, -EINVAL, msg);
    }

    if (want_key(b)) {
        r = key_from_node(a->node, &key, msg, sizeof(msg));
        if (r == -EINVAL)
            return fail_event(b, fye, r, msg);
        if (r < 0)
            return fail_nomem(b);
        r = check_alias_bytes(b, fye, strlen(key));
        if (r < 0) {
            free(key);
            return r;
        }
        return accept_key(b, fye, key, false);
    }

    r = check_depth(b, fye, b->nframes + (size_t)a->height);
    if (r < 0)
        return r;
    r = check_node_budget(b, fye, a->size);
    if (r < 0)
        return r;
    r = check_alias_bytes(b, fye, a->bytes);
    if (r < 0)
        return r;
    if (f && f->is_map && f->key_is_merge) {
        /* Merge straight from the anchored node: no copy needed. */
        return add_merge(b, f, a->node, a->height);
    }
    copy = cJSON_Duplicate(a->node, true);
    if (!copy)
        return fail_nomem(b);
    return add_value(b, copy, a->size, a->bytes, a->height, NULL);
}

static int on_container_start(struct ybuild *b, struct fy_event *fye, bool is_map)
{
    struct yframe *f, *frames;
    size_t before = b->nodes, off, line;
    char *anchor = NULL;
    cJSON *node;
    int r;

    if (want_key(b))
        return fail_event(b, fye, -EINVAL, "mapping keys must be scalars");
    r = check_depth(b, fye, b->nframes + 1);
    if (r < 0)
        return r;
    r = check_node_budget(b, fye, 1);
    if (r < 0)
        return r;
    if (event_anchor(fye, &anchor) < 0)
        return fail_nomem(b);
    frames = grow(b->frames, &b->cap_frames, b->nframes, sizeof(*b->frames));
    if (frames)
        b->frames = frames;
    node = !frames ? NULL : is_map ? cJSON_CreateObject() : cJSON_CreateArray();
    if (!node) {
        free(anchor);
        return fail_nomem(b);
    }
    f = &b->frames[b->nframes++];
    memset(f, 0, sizeof(*f));
    f->node = node;
    f->anchor = anchor;
    f->is_map = is_map;
    f->nodes_at_start = before;
    f->bytes_at_start = b->bytes;
    off = event_offset(b, fye);
    if (off != NO_OFFSET && off <= b->len) {
        for (line = off; line > 0 && b->buf[line - 1] != '\n'; line--)
            ;
        f->column = off - line;
    }
    return 0;
}

static int on_container_end(struct ybuild *b)
{
    struct yframe *f = top(b), done;
    int r;

    CHECK(f);
    if (f->is_map) {
        r = apply_merges(b, f);
        if (r < 0)
            return r;
    }
    done = *f;
    b->nframes--;
    r = add_value(b, done.node, b->nodes - done.nodes_at_start, b->bytes - done.bytes_at_start,
                  done.height + 1, done.anchor);
    done.node = NULL;
    done.anchor = NULL;
    frame_release(&done);
    return r;
}

static int on_document_end(struct ybuild *b)
{
    cJSON **docs;
    int r = 0;

    CHECK(b->nframes == 0);
    if (b->root && !cJSON_IsNull(b->root)) {
        /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
        docs = grow(b->docs, &b->cap_docs, b->ndocs, sizeof(*b->docs));
        if (!docs) {
            r = fail_nomem(b);
        } else {
            b->docs = docs;
            b->docs[b->ndocs++] = b->root;
            b->root = NULL;
        }
    }
    doc_reset(b);
    return r;
}

static int on_event(struct ybuild *b, struct fy_event *fye)
{
    const struct fy_mark *m = fy_event_start_mark(fye);
    char msg[96];

    if (m) {
        b->have_last = true;
        b->last_off = m->input_pos;
    }

    switch (fye->type) {
    case FYET_DOCUMENT_START:
        if (++b->docs_seen > b->lim->max_docs) {
            (void)snprintf(msg, sizeof(msg), "stream has more than %zu documents",
                           b->lim->max_docs);
            return fail_event(b, fye, -E2BIG, msg);
        }
        return 0;
    case FYET_DOCUMENT_END:
        return on_document_end(b);
    case FYET_MAPPING_START:
        return on_container_start(b, fye, true);
    case FYET_SEQUENCE_START:
        return on_container_start(b, fye, false);
    case FYET_MAPPING_END:
    case FYET_SEQUENCE_END:
        return on_container_end(b);
    case FYET_SCALAR:
        return on_scalar(b, fye);
    case FYET_ALIAS:
        return on_alias(b, fye);
    default:
        return 0;
    }
}

static void diag_discard(struct fy_diag *diag, void *user, const char *buf, size_t len)
{
    (void)diag;
    (void)user;
    (void)buf;
    (void)len;
}

/* The first error libfyaml collected, positioned no further than the end of the input (it
 * reports end-of-input problems one line past the last). */
static int parse_error(struct ybuild *b, struct fy_diag *diag)
{
    struct fy_diag_error *de;
    int line, column, eline, ecolumn;
    void *it = NULL;

    while ((de = fy_diag_errors_iterate(diag, &it)) != NULL) {
        if (de->type < FYET_ERROR)
            continue;
        line = de->line;
        column = de->column;
        codec__position(b->buf, b->len, b->len, &eline, &ecolumn);
        if (line > eline || (line == eline && column > ecolumn)) {
            line = eline;
            column = ecolumn;
        }
        codec__set_error(b->err, line, column, "invalid YAML: %s",
                         de->msg ? de->msg : "syntax error");
        return -EINVAL;
    }
    return fail_at(b, 0, 0, -EINVAL, "invalid YAML");
}

/*
 * Offset of the first character YAML does not allow in a stream (YAML 1.2 c-printable: no
 * control characters but tab, LF and CR, no DEL, no C1 controls but NEL, no U+FFFE/U+FFFF), or
 * len. Such bytes, NUL above all, also make libfyaml 0.7.12 return garbage text. buf is valid
 * UTF-8.
 */
static size_t first_unprintable(const char *buf, size_t len, uint32_t *ret_cp)
{
    const unsigned char *p = (const unsigned char *)buf;
    size_t i = 0;

    while (i < len) {
        uint32_t cp = p[i];
        size_t n = 1;

        if (cp >= 0x80)
            n = codec__utf8_decode(p + i, len - i, &cp);
        if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') ||
            (cp >= 0x7f && cp <= 0x9f && cp != 0x85) || cp == 0xfffe || cp == 0xffff || !n) {
            *ret_cp = cp;
            return i;
        }
        i += n;
    }
    return len;
}

/*
 * A copy of buf with every CR LF and lone CR turned into LF. YAML reads all three as the same
 * line break, but libfyaml 0.7.12 leaks memory on quoted scalars with many CR LF breaks, so it
 * only ever sees LF. Line and column numbers do not change.
 */
static int normalize_breaks(const char *buf, size_t len, char **ret, size_t *ret_len)
{
    char *out = cmalloc(len);
    size_t i, n = 0;

    if (!out)
        return -ENOMEM;
    for (i = 0; i < len; i++) {
        if (buf[i] != '\r') {
            out[n++] = buf[i];
            continue;
        }
        out[n++] = '\n';
        if (i + 1 < len && buf[i + 1] == '\n')
            i++;
    }
    *ret = out;
    *ret_len = n;
    return 0;
}

int yaml_parse_stream(const char *buf, size_t len, const struct codec_limits *lim,
                      cJSON ***ret_docs, size_t *ret_n, struct codec_error *err)
{
    struct ybuild b = {0};
    struct fy_diag_cfg dcfg;
    struct fy_parse_cfg pcfg;
    struct fy_diag *diag = NULL;
    struct fy_parser *fyp = NULL;
    struct fy_event *fye;
    char *normalized = NULL;
    size_t off, i;
    int r, line, column;
    uint32_t cp;

    codec_init();
    lim = codec__limits(lim);
    if (err)
        memset(err, 0, sizeof(*err));
    b.lim = lim;
    b.err = err;
    b.buf = buf;
    b.len = len;
    if (len > lim->max_bytes) {
        codec__set_error(err, 0, 0, "input is %zu bytes, more than the limit of %zu", len,
                         lim->max_bytes);
        return -E2BIG;
    }
    off = codec__utf8_check(buf, len);
    if (off < len) {
        codec__position(buf, len, off, &line, &column);
        codec__set_error(err, line, column, "invalid YAML: input is not valid UTF-8");
        return -EINVAL;
    }
    off = first_unprintable(buf, len, &cp);
    if (off < len) {
        codec__position(buf, len, off, &line, &column);
        codec__set_error(err, line, column,
                         "invalid YAML: character U+%04" PRIX32 " is not allowed in YAML text "
                         "(escape it in a double-quoted string)",
                         cp);
        return -EINVAL;
    }
    if (memchr(buf, '\r', len)) {
        r = normalize_breaks(buf, len, &normalized, &len);
        if (r < 0)
            return fail_nomem(&b);
        buf = normalized;
        b.buf = buf;
        b.len = len;
    }

    fy_diag_cfg_default(&dcfg);
    dcfg.fp = NULL;
    dcfg.output_fn = diag_discard;
    dcfg.level = FYET_ERROR;
    dcfg.colorize = false;
    diag = fy_diag_create(&dcfg);
    if (!diag) {
        r = fail_nomem(&b);
        goto out;
    }
    fy_diag_set_collect_errors(diag, true);
    memset(&pcfg, 0, sizeof(pcfg));
    pcfg.flags = FYPCF_QUIET;
    pcfg.diag = diag;
    fyp = fy_parser_create(&pcfg);
    if (!fyp || fy_parser_set_string(fyp, len ? buf : "", len) != 0) {
        r = fail_nomem(&b);
        goto out;
    }
    r = 0;
    while (r == 0 && (fye = fy_parser_parse(fyp)) != NULL) {
        r = on_event(&b, fye);
        fy_parser_event_free(fyp, fye);
    }
    if (r == 0 && fy_parser_get_stream_error(fyp))
        r = parse_error(&b, diag);
    if (r < 0)
        goto out;
    *ret_docs = b.docs;
    *ret_n = b.ndocs;
    b.docs = NULL;
    b.ndocs = 0;
out:
    doc_reset(&b);
    for (i = 0; i < b.ndocs; i++)
        cJSON_Delete(b.docs[i]);
    free(b.docs);
    free(b.frames);
    fy_parser_destroy(fyp);
    if (diag)
        fy_diag_destroy(diag);
    free(normalized);
    return r;
}

void codec_docs_free(cJSON **docs, size_t n)
{
    size_t i;

    if (!docs)
        return;
    for (i = 0; i < n; i++)
        cJSON_Delete(docs[i]);
    free(docs);
}

/* ---- emission ---- */

enum ystyle { STYLE_PLAIN, STYLE_SINGLE, STYLE_DOUBLE, STYLE_LITERAL };

static bool is_indicator(char c)
{
    return c && strchr("-?:,[]{}#&*!|>'\"%@`", c) != NULL;
}

/* Code points that must be escaped: controls, C1 controls (incl. NEL), line and paragraph
 * separators, the BOM and the non-characters U+FFFE/U+FFFF. */
static bool needs_escape(uint32_t cp)
{
    return (cp < 0x20 && cp != '\n') || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 ||
           cp == 0x2029 || cp == 0xfeff || cp == 0xfffe || cp == 0xffff;
}

/* Whether s reads back as a string when unquoted (go-yaml's encoder tests the same before it
 * picks plain style), including the YAML 1.1 base-60 numbers go-yaml still quotes ("1:20"). */
static bool resolves_as_string(const char *s, size_t len)
{
    struct yscalar sc;
    size_t i = 0;

    if (resolve_plain(s, len, &sc) != Y_STR)
        return false;
    if (len == 2 && memcmp(s, "<<", 2) == 0)
        return false;
    if (i < len && (s[i] == '+' || s[i] == '-'))
        i++;
    if (i < len && is_digit(s[i]) && memchr(s, ':', len))
        return false;
    return true;
}

/* Whether YAML syntax lets s (single line, nothing to escape) be a plain scalar, as libyaml's
 * analyzer decides it for block context. */
static bool plain_syntax_ok(const char *s, size_t len)
{
    size_t i;

    if (s[0] == ' ' || s[len - 1] == ' ' || s[len - 1] == ':')
        return false;
    /* '-' may start a plain scalar when no space follows ("-v", "--flag"); other indicators
     * may not. Document markers may not either. */
    if (s[0] == '-') {
        if (len == 1 || s[1] == ' ')
            return false;
    } else if (is_indicator(s[0])) {
        return false;
    }
    if (len >= 3 && (memcmp(s, "---", 3) == 0 || memcmp(s, "...", 3) == 0))
        return false;
    for (i = 0; i + 1 < len; i++) {
        if (s[i] == ':' && s[i + 1] == ' ')
            return false;
        if (s[i] == ' ' && s[i + 1] == '#')
            return false;
    }
    return true;
}

static enum ystyle choose_style(const char *s, size_t len, bool is_key)
{
    const unsigned char *p = (const unsigned char *)s;
    bool newline = false, space_break = false, special = false;
    size_t i = 0;

    if (!len)
        return STYLE_DOUBLE;
    while (i < len) {
        uint32_t cp;
        size_t n = codec__utf8_decode(p + i, len - i, &cp);

        if (!n) {
            special = true;
            break;
        }
        if (cp == '\n') {
            newline = true;
            if (i && p[i - 1] == ' ')
                space_break = true;
        } else if (needs_escape(cp)) {
            special = true;
            break;
        }
        i += n;
    }
    if (special)
        return STYLE_DOUBLE;
    if (newline) {
        /* A literal block is exact unless whitespace at a line edge would be lost or need an
         * indentation indicator; keys cannot be blocks. */
        if (is_key || space_break || s[0] == ' ' || s[0] == '\n' || s[len - 1] == ' ')
            return STYLE_DOUBLE;
        return STYLE_LITERAL;
    }
    /* Like kubectl: double quotes for strings that would read as another type, single quotes
     * for those that clash with YAML syntax. */
    if (!resolves_as_string(s, len))
        return STYLE_DOUBLE;
    return plain_syntax_ok(s, len) ? STYLE_PLAIN : STYLE_SINGLE;
}

static void write_double_quoted(struct strbuf *out, const char *s, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, run;

    strbuf_addch(out, '"');
    while (i < len) {
        uint32_t cp;
        size_t n;

        for (run = i; i < len && p[i] >= 0x20 && p[i] < 0x7f && p[i] != '"' && p[i] != '\\'; i++)
            ;
        strbuf_add(out, s + run, i - run);
        if (i >= len)
            break;
        n = codec__utf8_decode(p + i, len - i, &cp);
        if (!n) {
            strbuf_addstr(out, "\\uFFFD");
            i++;
            continue;
        }
        switch (cp) {
        case '"':
            strbuf_addstr(out, "\\\"");
            break;
        case '\\':
            strbuf_addstr(out, "\\\\");
            break;
        case '\a':
            strbuf_addstr(out, "\\a");
            break;
        case '\b':
            strbuf_addstr(out, "\\b");
            break;
        case '\t':
            strbuf_addstr(out, "\\t");
            break;
        case '\n':
            strbuf_addstr(out, "\\n");
            break;
        case '\v':
            strbuf_addstr(out, "\\v");
            break;
        case '\f':
            strbuf_addstr(out, "\\f");
            break;
        case '\r':
            strbuf_addstr(out, "\\r");
            break;
        case 0x1b:
            strbuf_addstr(out, "\\e");
            break;
        case 0x85:
            strbuf_addstr(out, "\\N");
            break;
        case 0x2028:
            strbuf_addstr(out, "\\L");
            break;
        case 0x2029:
            strbuf_addstr(out, "\\P");
            break;
        default:
            if (cp < 0x100 && needs_escape(cp)) {
                strbuf_addstr(out, "\\x");
                strbuf_addch(out, hex[cp >> 4]);
                strbuf_addch(out, hex[cp & 15]);
            } else if (needs_escape(cp)) {
                strbuf_addf(out, "\\u%04" PRIX32, cp);
            } else {
                strbuf_add(out, s + i, n);
            }
        }
        i += n;
    }
    strbuf_addch(out, '"');
}

static void write_single_quoted(struct strbuf *out, const char *s, size_t len)
{
    const char *q;

    strbuf_addch(out, '\'');
    while ((q = memchr(s, '\'', len)) != NULL) {
        strbuf_add(out, s, (size_t)(q - s) + 1);
        strbuf_addch(out, '\'');
        len -= (size_t)(q - s) + 1;
        s = q + 1;
    }
    strbuf_add(out, s, len);
    strbuf_addch(out, '\'');
}

static void write_indent(struct strbuf *out, int n)
{
    static const char spaces[] = "                                ";

    while (n > 0) {
        int k = n < (int)sizeof(spaces) - 1 ? n : (int)sizeof(spaces) - 1;

        strbuf_add(out, spaces, (size_t)k);
        n -= k;
    }
}

/* "|" with the chomping indicator that gives back exactly s's trailing newlines, then each
 * line at indent. choose_style() made sure s does not start with a space or newline. */
static void write_literal(struct strbuf *out, const char *s, size_t len, int indent)
{
    size_t trailing = 0, body, i, start;

    while (trailing < len && s[len - 1 - trailing] == '\n')
        trailing++;
    body = len - trailing;
    strbuf_addstr(out, trailing == 0 ? "|-\n" : trailing == 1 ? "|\n" : "|+\n");
    for (start = 0, i = 0; i <= body; i++) {
        if (i < body && s[i] != '\n')
            continue;
        if (i > start) {
            write_indent(out, indent);
            strbuf_add(out, s + start, i - start);
        }
        strbuf_addch(out, '\n');
        start = i + 1;
    }
    for (i = 1; i < trailing; i++)
        strbuf_addch(out, '\n');
}

/* A scalar or empty container, then the end of the line. indent is where block lines go. */
static void write_scalar(struct strbuf *out, const cJSON *v, int indent)
{
    char num[CODEC_NUMBER_MAX];
    const char *s;
    size_t len;

    switch (v->type & 0xff) {
    case cJSON_False:
        strbuf_addstr(out, "false\n");
        return;
    case cJSON_True:
        strbuf_addstr(out, "true\n");
        return;
    case cJSON_Number:
        strbuf_add(out, num, codec__format_number(v->valuedouble, num));
        strbuf_addch(out, '\n');
        return;
    case cJSON_Array:
        strbuf_addstr(out, "[]\n");
        return;
    case cJSON_Object:
        strbuf_addstr(out, "{}\n");
        return;
    case cJSON_String:
    case cJSON_Raw:
        break;
    default:
        strbuf_addstr(out, "null\n");
        return;
    }
    s = v->valuestring ? v->valuestring : "";
    len = strlen(s);
    if ((v->type & 0xff) == cJSON_Raw) {
        /* Raw JSON text is valid YAML flow content; written as is. */
        strbuf_add(out, s, len);
        strbuf_addch(out, '\n');
        return;
    }
    switch (choose_style(s, len, false)) {
    case STYLE_PLAIN:
        strbuf_add(out, s, len);
        break;
    case STYLE_SINGLE:
        write_single_quoted(out, s, len);
        break;
    case STYLE_DOUBLE:
        write_double_quoted(out, s, len);
        break;
    case STYLE_LITERAL:
        write_literal(out, s, len, indent);
        return;
    }
    strbuf_addch(out, '\n');
}

static void write_key(struct strbuf *out, const char *s)
{
    size_t len = strlen(s);

    switch (choose_style(s, len, true)) {
    case STYLE_PLAIN:
        strbuf_add(out, s, len);
        break;
    case STYLE_SINGLE:
        write_single_quoted(out, s, len);
        break;
    default:
        write_double_quoted(out, s, len);
        break;
    }
}

static bool is_block_collection(const cJSON *v)
{
    return (cJSON_IsObject(v) || cJSON_IsArray(v)) && v->child;
}

static void emit_mapping(struct strbuf *out, const cJSON *obj, int indent, bool first_inline);
static void emit_sequence(struct strbuf *out, const cJSON *arr, int indent, bool first_inline);

/* After "key:" of a mapping whose keys sit at column indent. */
static void emit_after_key(struct strbuf *out, const cJSON *v, int indent)
{
    if (!is_block_collection(v)) {
        strbuf_addch(out, ' ');
        write_scalar(out, v, indent + 2);
    } else if (cJSON_IsObject(v)) {
        strbuf_addch(out, '\n');
        emit_mapping(out, v, indent + 2, false);
    } else {
        /* kubectl style: the "- " of a sequence value lines up with its key. */
        strbuf_addch(out, '\n');
        emit_sequence(out, v, indent, false);
    }
}

static void emit_mapping(struct strbuf *out, const cJSON *obj, int indent, bool first_inline)
{
    const cJSON *c;

    for (c = obj->child; c; c = c->next) {
        const char *key = c->string ? c->string : "";

        if (c != obj->child || !first_inline)
            write_indent(out, indent);
        if (strlen(key) > IMPLICIT_KEY_MAX) {
            strbuf_addstr(out, "? ");
            write_double_quoted(out, key, strlen(key));
            strbuf_addch(out, '\n');
            write_indent(out, indent);
        } else {
            write_key(out, key);
        }
        strbuf_addch(out, ':');
        emit_after_key(out, c, indent);
    }
}

static void emit_sequence(struct strbuf *out, const cJSON *arr, int indent, bool first_inline)
{
    const cJSON *c;

    for (c = arr->child; c; c = c->next) {
        if (c != arr->child || !first_inline)
            write_indent(out, indent);
        strbuf_addstr(out, "- ");
        if (!is_block_collection(c))
            write_scalar(out, c, indent + 2);
        else if (cJSON_IsObject(c))
            emit_mapping(out, c, indent + 2, true);
        else
            emit_sequence(out, c, indent + 2, true);
    }
}

int yaml_emit(const cJSON *doc, struct strbuf *out)
{
    if (cJSON_IsObject(doc) && doc->child)
        emit_mapping(out, doc, 0, false);
    else if (cJSON_IsArray(doc) && doc->child)
        emit_sequence(out, doc, 0, false);
    else
        write_scalar(out, doc, 2);
    return 0;
}
