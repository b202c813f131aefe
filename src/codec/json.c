/*
 * JSON through cJSON. cJSON is fast but lenient and recursive, and this is where untrusted
 * request bodies enter, so a linear pre-scan first enforces the depth and node limits (before
 * cJSON can recurse or allocate) and checks what cJSON lets through (leading zeros, overflowing
 * numbers, bad UTF-8, lone surrogates, raw control characters); a walk of the result then rejects
 * duplicate keys. Printing is our own so numbers read back exactly.
 */
/* clang-format off: our own header first proves it is self-contained */
#include "codec/codec.h"
/* clang-format on */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec-int.h"

/* cJSON copies a number into a 64-byte buffer before strtod(), so longer ones would be cut. */
#define JSON_NUMBER_MAX_LEN 63

/* Objects up to this size are checked for duplicate keys pairwise; larger ones use a key set. */
#define DUP_LINEAR_MAX 8

struct scan {
    const char *buf;
    size_t len;
    size_t i;
    struct codec_error *err;
};

static int scan_fail(struct scan *s, size_t off, int r, const char *msg)
{
    int line, column;

    codec__position(s->buf, s->len, off, &line, &column);
    codec__set_error(s->err, line, column, "%s", msg);
    return r;
}

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Reads the 4 hex digits of a \u escape whose backslash is at off; -1 if malformed. */
static long scan_u4(const struct scan *s, size_t off)
{
    const unsigned char *p = (const unsigned char *)s->buf;
    long v = 0;
    size_t k;

    if (off + 6 > s->len || p[off] != '\\' || p[off + 1] != 'u')
        return -1;
    for (k = 2; k < 6; k++) {
        int h = hexval(p[off + k]);

        if (h < 0)
            return -1;
        v = v << 4 | h;
    }
    return v;
}

/* Bytes a string may hold as they are (ASCII from 0x20, except '"' and '\\'); the rest take the
 * slow path: escapes, control characters, UTF-8 sequences. */
/* clang-format off */
#define X16(v) v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v
static const bool plain_string_byte[256] = {
    X16(0), X16(0),                                  /* 0x00-0x1f: control characters */
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  /* 0x20-0x2f: 0x22 is '"' */
    X16(1), X16(1),                                  /* 0x30-0x4f */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,  /* 0x50-0x5f: 0x5c is '\\' */
    X16(1), X16(1),                                  /* 0x60-0x7f */
    X16(0), X16(0), X16(0), X16(0),                  /* 0x80-0xff: UTF-8 */
    X16(0), X16(0), X16(0), X16(0),
};
#undef X16
/* clang-format on */

/* s->i is at the opening quote; leaves it after the closing one. */
static int scan_string(struct scan *s)
{
    const unsigned char *p = (const unsigned char *)s->buf;
    size_t start = s->i, i = s->i + 1;

    for (;;) {
        unsigned char c;

        /* The common case: a run of plain ASCII. */
        while (i < s->len && plain_string_byte[p[i]])
            i++;
        if (i >= s->len)
            return scan_fail(s, start, -EINVAL, "invalid JSON: unterminated string");
        c = p[i];
        if (c == '"') {
            s->i = i + 1;
            return 0;
        }
        if (c == '\\') {
            long cp, lo;

            if (i + 1 >= s->len)
                return scan_fail(s, start, -EINVAL, "invalid JSON: unterminated string");
            switch (p[i + 1]) {
            case '"':
            case '\\':
            case '/':
            case 'b':
            case 'f':
            case 'n':
            case 'r':
            case 't':
                i += 2;
                continue;
            case 'u':
                break;
            default:
                return scan_fail(s, i, -EINVAL, "invalid JSON: invalid escape in string");
            }
            cp = scan_u4(s, i);
            if (cp < 0)
                return scan_fail(s, i, -EINVAL, "invalid JSON: invalid \\u escape in string");
            if (cp == 0)
                return scan_fail(s, i, -EINVAL,
                                 "invalid JSON: \\u0000 is not supported in strings");
            if (cp >= 0xdc00 && cp <= 0xdfff)
                return scan_fail(s, i, -EINVAL, "invalid JSON: unpaired UTF-16 surrogate");
            if (cp >= 0xd800 && cp <= 0xdbff) {
                lo = scan_u4(s, i + 6);
                if (lo < 0xdc00 || lo > 0xdfff)
                    return scan_fail(s, i, -EINVAL, "invalid JSON: unpaired UTF-16 surrogate");
                i += 12;
            } else {
                i += 6;
            }
            continue;
        }
        if (c < 0x20)
            return scan_fail(s, i, -EINVAL, "invalid JSON: control character in string");
        {
            uint32_t cp;
            size_t n = codec__utf8_decode(p + i, s->len - i, &cp);

            if (!n)
                return scan_fail(s, i, -EINVAL, "invalid JSON: invalid UTF-8 in string");
            i += n;
        }
    }
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* RFC 8259 number grammar; s->i is at '-' or a digit. */
static int scan_number(struct scan *s)
{
    const unsigned char *p = (const unsigned char *)s->buf;
    size_t start = s->i, i = s->i, len = s->len, exp_start = 0;

    if (p[i] == '-')
        i++;
    if (i < len && p[i] == '0') {
        i++;
    } else if (i < len && is_digit(p[i])) {
        while (i < len && is_digit(p[i]))
            i++;
    } else {
        return scan_fail(s, start, -EINVAL, "invalid JSON: invalid number");
    }
    if (i < len && p[i] == '.') {
        i++;
        if (i >= len || !is_digit(p[i]))
            return scan_fail(s, start, -EINVAL, "invalid JSON: invalid number");
        while (i < len && is_digit(p[i]))
            i++;
    }
    if (i < len && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        if (i < len && (p[i] == '+' || p[i] == '-'))
            i++;
        if (i >= len || !is_digit(p[i]))
            return scan_fail(s, start, -EINVAL, "invalid JSON: invalid number");
        exp_start = i;
        while (i < len && is_digit(p[i]))
            i++;
    }
    if (i < len &&
        (is_digit(p[i]) || p[i] == '.' || p[i] == 'e' || p[i] == 'E' || p[i] == 'x' || p[i] == 'X'))
        return scan_fail(s, start, -EINVAL, "invalid JSON: invalid number");
    if (i - start > JSON_NUMBER_MAX_LEN)
        return scan_fail(s, start, -EINVAL, "invalid JSON: number longer than 63 characters");
    /* With at most 63 characters only an exponent of 3 or more digits can overflow a double. */
    if (exp_start && i - exp_start >= 3) {
        char tmp[JSON_NUMBER_MAX_LEN + 1];

        memcpy(tmp, p + start, i - start);
        tmp[i - start] = '\0';
        if (!isfinite(strtod(tmp, NULL)))
            return scan_fail(s, start, -EINVAL, "invalid JSON: number out of range");
    }
    s->i = i;
    return 0;
}

/*
 * One linear pass that never recurses: nesting depth and the number of values (1 for the root,
 * 1 per comma, 1 per non-empty container) are bounded here, before cJSON sees the input.
 */
static int json_prescan(struct scan *s, const struct codec_limits *lim)
{
    const unsigned char *p = (const unsigned char *)s->buf;
    bool opened = false, seen = false;
    size_t nodes = 1;
    int depth = 0, r;
    char msg[128];

    while (s->i < s->len) {
        unsigned char c = p[s->i];

        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            s->i++;
            continue;
        }
        seen = true;
        if (opened) {
            opened = false;
            if (c != '}' && c != ']')
                nodes++;
        }
        if (c == ',')
            nodes++;
        if (nodes > lim->max_nodes) {
            (void)snprintf(msg, sizeof(msg), "document has more than %zu values", lim->max_nodes);
            return scan_fail(s, s->i, -E2BIG, msg);
        }
        switch (c) {
        case '{':
        case '[':
            if (depth >= lim->max_depth) {
                (void)snprintf(msg, sizeof(msg), "nesting depth exceeds the limit of %d",
                               lim->max_depth);
                return scan_fail(s, s->i, -E2BIG, msg);
            }
            depth++;
            opened = true;
            s->i++;
            break;
        case '}':
        case ']':
            if (depth == 0) {
                (void)snprintf(msg, sizeof(msg), "invalid JSON: unexpected '%c'", c);
                return scan_fail(s, s->i, -EINVAL, msg);
            }
            depth--;
            s->i++;
            break;
        case '"':
            r = scan_string(s);
            if (r < 0)
                return r;
            break;
        case '-':
        case '0':
        case '1':
        case '2':
        case '3':
        case '4':
        case '5':
        case '6':
        case '7':
        case '8':
        case '9':
            r = scan_number(s);
            if (r < 0)
                return r;
            break;
        default:
            /* Literals and garbage: cJSON judges them. */
            s->i++;
            break;
        }
    }
    if (!seen)
        return scan_fail(s, s->len, -EINVAL, "invalid JSON: no value in input");
    if (depth > 0)
        return scan_fail(s, s->len, -EINVAL, "invalid JSON: unexpected end of input");
    return 0;
}

static bool is_json_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int dup_key_error(struct codec_error *err, const char *key)
{
    char preview[96];

    codec__preview(preview, sizeof(preview), key, strlen(key));
    codec__set_error(err, 0, 0, "duplicate key %s", preview);
    return -EINVAL;
}

static int check_object_keys(const cJSON *obj, struct codec_error *err)
{
    struct codec_strmap ks = {0};
    const cJSON *a, *b;
    size_t n = 0;
    int r = 0;

    for (a = obj->child; a && n <= DUP_LINEAR_MAX; a = a->next)
        n++;
    if (n <= DUP_LINEAR_MAX) {
        for (a = obj->child; a; a = a->next) {
            for (b = a->next; b; b = b->next) {
                if (a->string[0] == b->string[0] && strcmp(a->string, b->string) == 0)
                    return dup_key_error(err, b->string);
            }
        }
        return 0;
    }
    for (a = obj->child; a; a = a->next) {
        r = codec__strmap_add(&ks, a->string, NULL);
        if (r < 0) {
            codec__set_error(err, 0, 0, "out of memory");
            goto out;
        }
        if (r > 0) {
            r = dup_key_error(err, a->string);
            goto out;
        }
    }
out:
    codec__strmap_release(&ks);
    return r;
}

/* Duplicate keys, which only a walk of the tree can find (the pre-scan has no memory of keys).
 * Only non-empty containers are visited; recursion is bounded by the pre-scan's depth limit. */
static int check_keys(const cJSON *v, struct codec_error *err)
{
    const cJSON *c;
    int r;

    for (c = v->child; c; c = c->next) {
        if (c->child) {
            r = check_keys(c, err);
            if (r < 0)
                return r;
        }
    }
    if ((v->type & 0xff) == cJSON_Object && v->child->next)
        return check_object_keys(v, err);
    return 0;
}

int json_parse(const char *buf, size_t len, const struct codec_limits *lim, cJSON **ret,
               struct codec_error *err)
{
    struct scan s = {.buf = buf, .len = len, .i = 0, .err = err};
    const char *end = NULL;
    cJSON *root = NULL;
    size_t off;
    int r;

    codec_init();
    lim = codec__limits(lim);
    if (err)
        memset(err, 0, sizeof(*err));
    if (len > lim->max_bytes) {
        codec__set_error(err, 0, 0, "input is %zu bytes, more than the limit of %zu", len,
                         lim->max_bytes);
        return -E2BIG;
    }
    r = json_prescan(&s, lim);
    if (r < 0)
        return r;

    codec__oom = false;
    root = cJSON_ParseWithLengthOpts(buf, len, &end, false);
    if (!root) {
        if (codec__oom) {
            codec__set_error(err, 0, 0, "out of memory");
            return -ENOMEM;
        }
        off = end ? (size_t)(end - buf) : 0;
        if (off < len && (unsigned char)buf[off] > 0x20 && (unsigned char)buf[off] < 0x7f) {
            char msg[64];

            (void)snprintf(msg, sizeof(msg), "invalid JSON: unexpected '%c'", buf[off]);
            return scan_fail(&s, off, -EINVAL, msg);
        }
        return scan_fail(&s, off, -EINVAL, "invalid JSON: unexpected character");
    }
    for (off = (size_t)(end - buf); off < len && is_json_space(buf[off]); off++)
        ;
    if (off < len) {
        r = scan_fail(&s, off, -EINVAL, "invalid JSON: unexpected data after the value");
        goto out;
    }
    if (root->child && !lim->keep_duplicate_keys) {
        r = check_keys(root, err);
        if (r < 0)
            goto out;
    }
    *ret = root;
    root = NULL;
out:
    cJSON_Delete(root);
    return r;
}

/* Appends s as a JSON string literal; runs of bytes that need no escape are copied at once. */
static void print_string(struct strbuf *out, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    const unsigned char *run;

    strbuf_addch(out, '"');
    for (;;) {
        run = p;
        while (*p >= 0x20 && *p != '"' && *p != '\\')
            p++;
        strbuf_add(out, run, (size_t)(p - run));
        if (!*p)
            break;
        strbuf_addch(out, '\\');
        switch (*p) {
        case '"':
        case '\\':
            strbuf_addch(out, (char)*p);
            break;
        case '\b':
            strbuf_addch(out, 'b');
            break;
        case '\f':
            strbuf_addch(out, 'f');
            break;
        case '\n':
            strbuf_addch(out, 'n');
            break;
        case '\r':
            strbuf_addch(out, 'r');
            break;
        case '\t':
            strbuf_addch(out, 't');
            break;
        default:
            strbuf_addstr(out, "u00");
            strbuf_addch(out, hex[*p >> 4]);
            strbuf_addch(out, hex[*p & 15]);
        }
        p++;
    }
    strbuf_addch(out, '"');
}

static void print_indent(struct strbuf *out, int level)
{
    static const char spaces[] = "                                ";
    size_t n = (size_t)level * 4;

    while (n > sizeof(spaces) - 1) {
        strbuf_add(out, spaces, sizeof(spaces) - 1);
        n -= sizeof(spaces) - 1;
    }
    strbuf_add(out, spaces, n);
}

/* level < 0 means compact. */
static void print_value(const cJSON *v, struct strbuf *out, int level)
{
    char num[CODEC_NUMBER_MAX];
    const cJSON *c;
    bool obj;

    switch (v->type & 0xff) {
    case cJSON_False:
        strbuf_addstr(out, "false");
        return;
    case cJSON_True:
        strbuf_addstr(out, "true");
        return;
    case cJSON_Number:
        strbuf_add(out, num, codec__format_number(v->valuedouble, num));
        return;
    case cJSON_String:
        print_string(out, v->valuestring);
        return;
    case cJSON_Raw:
        strbuf_addstr(out, v->valuestring ? v->valuestring : "null");
        return;
    case cJSON_Array:
    case cJSON_Object:
        break;
    default:
        strbuf_addstr(out, "null");
        return;
    }
    obj = cJSON_IsObject(v);
    strbuf_addch(out, obj ? '{' : '[');
    if (!v->child) {
        strbuf_addch(out, obj ? '}' : ']');
        return;
    }
    for (c = v->child; c; c = c->next) {
        if (level >= 0) {
            strbuf_addch(out, '\n');
            print_indent(out, level + 1);
        }
        if (obj) {
            print_string(out, c->string);
            strbuf_add(out, ": ", level >= 0 ? 2 : 1);
        }
        print_value(c, out, level >= 0 ? level + 1 : -1);
        if (c->next)
            strbuf_addch(out, ',');
    }
    if (level >= 0) {
        strbuf_addch(out, '\n');
        print_indent(out, level);
    }
    strbuf_addch(out, obj ? '}' : ']');
}

int json_print(const cJSON *v, struct strbuf *out)
{
    print_value(v, out, -1);
    return 0;
}

int json_print_pretty(const cJSON *v, struct strbuf *out)
{
    print_value(v, out, 0);
    return 0;
}
