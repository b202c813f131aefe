/*
 * The protobuf wire decoder (see protobuf.h). A message is read in two steps: collect() walks
 * its bytes once and keeps, per table field, the last scalar (proto2: last one wins), every
 * occurrence of a singular message (proto merges repeated occurrences, which is the same as
 * decoding their concatenation, so the spans are kept and decoded together) and the elements
 * of repeated fields and maps as they come; build() then writes the JSON members in table
 * order with Go's encoding/json rules. Nothing here trusts a length: every span is checked
 * against its parent before it is read, nesting is bounded by the depth limit and the tree by
 * the node limit.
 */
#include "api/protobuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "api/rfc3339.h"
#include "base/base.h"
#include "base/strbuf.h"

enum wire {
    WIRE_VARINT = 0,
    WIRE_FIXED64 = 1,
    WIRE_LEN = 2,
    WIRE_FIXED32 = 5,
};

struct span {
    const uint8_t *p;
    size_t n;
};

/* One field as read off the wire. */
struct wfield {
    unsigned num;
    unsigned wire;
    uint64_t v;    /* WIRE_VARINT */
    struct span s; /* WIRE_LEN */
};

/* What collect() keeps of one table field. */
struct slot {
    bool present;
    uint64_t v;
    struct span s;
    struct span *parts; /* singular messages: every occurrence */
    size_t nparts, cap;
    cJSON *list; /* repeated: array; map: object */
};

struct dec {
    const struct codec_limits *lim;
    size_t nodes;
    int depth;
    struct strbuf path;
    struct protobuf_error *err;
};

/* Years 0000..9999, the range Go's Time.MarshalJSON writes (it fails outside it). */
#define MIN_SECONDS (-62167219200LL)
#define MAX_SECONDS 253402300799LL

static int fail(struct dec *d, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct dec *d, int r, const char *fmt, ...)
{
    struct strbuf msg = STRBUF_INIT;
    va_list ap;

    if (!d->err || r == -ENOMEM)
        return r;
    if (d->path.len)
        strbuf_addf(&msg, "%s: ", d->path.buf);
    va_start(ap, fmt);
    strbuf_vaddf(&msg, fmt, ap);
    va_end(ap);
    d->err->status = r == -ENOTSUP ? 415 : 400;
    (void)snprintf(d->err->msg, sizeof(d->err->msg), "%s", msg.buf);
    strbuf_release(&msg);
    return r;
}

static size_t push(struct dec *d, const char *name, long index, const char *key)
{
    size_t len = d->path.len;

    if (name)
        strbuf_addf(&d->path, "%s%s", len ? "." : "", name);
    else if (key)
        strbuf_addf(&d->path, "[%s]", key);
    else
        strbuf_addf(&d->path, "[%ld]", index);
    return len;
}

static void pop(struct dec *d, size_t len)
{
    strbuf_setlen(&d->path, len);
}

/* A new cJSON node, counted against the node limit (NULL: the error is recorded). */
static int count(struct dec *d)
{
    if (++d->nodes > d->lim->max_nodes)
        return fail(d, -E2BIG, "the object has more than %zu values", d->lim->max_nodes);
    return 0;
}

/* A varint as gogo-protobuf reads it: at most 10 bytes, bits past 64 dropped. */
static int read_varint(struct dec *d, struct span *in, uint64_t *ret)
{
    uint64_t v = 0;

    for (unsigned shift = 0; shift < 70; shift += 7) {
        uint8_t b;
        if (!in->n)
            return fail(d, -EINVAL, "truncated varint");
        b = *in->p++;
        in->n--;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            *ret = v;
            return 0;
        }
    }
    return fail(d, -EINVAL, "varint longer than 10 bytes");
}

static int next_field(struct dec *d, struct span *in, struct wfield *f)
{
    uint64_t key = 0, len = 0;
    int r;

    if ((r = read_varint(d, in, &key)) < 0)
        return r;
    f->num = (unsigned)(key >> 3 > UINT32_MAX ? 0 : key >> 3);
    f->wire = (unsigned)(key & 7);
    if (f->num == 0 || key >> 3 > 536870911)
        return fail(d, -EINVAL, "illegal field number %llu", (unsigned long long)(key >> 3));
    switch (f->wire) {
    case WIRE_VARINT:
        return read_varint(d, in, &f->v);
    case WIRE_FIXED64:
    case WIRE_FIXED32:
        len = f->wire == WIRE_FIXED64 ? 8 : 4;
        if (in->n < len)
            return fail(d, -EINVAL, "truncated field %u", f->num);
        f->s = (struct span){in->p, (size_t)len};
        break;
    case WIRE_LEN:
        if ((r = read_varint(d, in, &len)) < 0)
            return r;
        if (len > in->n)
            return fail(d, -EINVAL, "field %u is %llu bytes long but only %zu remain", f->num,
                        (unsigned long long)len, in->n);
        f->s = (struct span){in->p, (size_t)len};
        break;
    default:
        return fail(d, -EINVAL, "field %u has unsupported wire type %u", f->num, f->wire);
    }
    in->p += len;
    in->n -= (size_t)len;
    return 0;
}

static bool is_varint_type(enum protobuf_type t)
{
    return t == PROTOBUF_BOOL || t == PROTOBUF_INT32 || t == PROTOBUF_INT64;
}

/* The text of a string field: no NUL (a C string could not hold it) and valid UTF-8 (JSON
 * would change it), so what is stored is what was sent. */
static int check_text(struct dec *d, struct span s)
{
    for (size_t i = 0; i < s.n;) {
        uint8_t c = s.p[i];
        size_t n;
        uint32_t cp;

        if (c == 0)
            return fail(d, -EINVAL, "string holds a NUL byte");
        if (c < 0x80) {
            i++;
            continue;
        }
        n = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
        if (!n || c >= 0xf5 || i + n > s.n)
            return fail(d, -EINVAL, "string is not valid UTF-8");
        cp = c & (0xff >> (n + 1));
        for (size_t k = 1; k < n; k++) {
            if ((s.p[i + k] & 0xc0) != 0x80)
                return fail(d, -EINVAL, "string is not valid UTF-8");
            cp = cp << 6 | (s.p[i + k] & 0x3f);
        }
        if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000))) ||
            (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
            return fail(d, -EINVAL, "string is not valid UTF-8");
        i += n;
    }
    return 0;
}

static int new_string(struct dec *d, struct span s, cJSON **ret)
{
    char *t;
    int r;

    if ((r = check_text(d, s)) < 0 || (r = count(d)) < 0)
        return r;
    t = xmalloc(s.n + 1);
    if (s.n)
        memcpy(t, s.p, s.n);
    t[s.n] = '\0';
    *ret = cJSON_CreateString(t);
    free(t);
    return *ret ? 0 : -ENOMEM;
}

static int new_node(struct dec *d, cJSON *n, cJSON **ret)
{
    int r;

    if (!n)
        return -ENOMEM;
    if ((r = count(d)) < 0) {
        cJSON_Delete(n);
        return r;
    }
    *ret = n;
    return 0;
}

static int add_part(struct slot *sl, struct span s)
{
    if (sl->nparts == sl->cap) {
        sl->cap = sl->cap ? sl->cap * 2 : 2;
        sl->parts = xrealloc(sl->parts, sl->cap * sizeof(*sl->parts));
    }
    sl->parts[sl->nparts++] = s;
    return 0;
}

static void slots_free(struct slot *slots, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(slots[i].parts);
        cJSON_Delete(slots[i].list);
    }
    free(slots);
}

static size_t nfields(const struct protobuf_msg *m)
{
    size_t n = 0;

    while (m->fields[n].num)
        n++;
    return n;
}

static int decode_message(struct dec *d, const struct protobuf_msg *m, const struct span *parts,
                          size_t nparts, cJSON *into, cJSON **ret);

/* The JSON of a value of field f whose occurrences sl holds (present or not). */
static int value_json(struct dec *d, const struct protobuf_field *f, const struct slot *sl,
                      cJSON **ret);

/* The fields 1..n of a small fixed message (Time, Quantity, IntOrString, FieldsV1): last
 * value of each wins, unknown numbers skipped, wire types checked against want. */
static int scan_small(struct dec *d, const struct span *parts, size_t nparts, const unsigned *want,
                      unsigned n, struct slot *slots)
{
    for (size_t i = 0; i < nparts; i++) {
        struct span in = parts[i];
        while (in.n) {
            struct wfield w = {0};
            int r = next_field(d, &in, &w);
            if (r < 0)
                return r;
            if (w.num > n)
                continue;
            if (w.wire != want[w.num - 1])
                return fail(d, -EINVAL, "field %u has wire type %u, want %u", w.num, w.wire,
                            want[w.num - 1]);
            slots[w.num - 1].present = true;
            slots[w.num - 1].v = w.v;
            slots[w.num - 1].s = w.s;
        }
    }
    return 0;
}

static int time_json(struct dec *d, const struct slot *sl, bool micro, cJSON **ret)
{
    static const unsigned want[] = {WIRE_VARINT, WIRE_VARINT};
    struct slot s[2] = {0};
    char buf[RFC3339_STR_MAX];
    bool empty = true;
    int64_t sec, nsec = 0;
    int r;

    for (size_t i = 0; i < sl->nparts; i++)
        empty = empty && sl->parts[i].n == 0;
    /* An empty message is the zero Time (null); metav1.Time reads seconds only. */
    if (!sl->present || empty)
        return new_node(d, cJSON_CreateNull(), ret);
    if ((r = scan_small(d, sl->parts, sl->nparts, want, 2, s)) < 0)
        return r;
    sec = (int64_t)s[0].v;
    if (micro) {
        nsec = (int64_t)(int32_t)(uint32_t)s[1].v;
        /* time.Unix normalises nanoseconds outside [0, 1e9) into the seconds */
        if (sec > MIN_SECONDS - 3 && sec < MAX_SECONDS + 3) {
            sec += nsec / 1000000000;
            nsec %= 1000000000;
            if (nsec < 0) {
                nsec += 1000000000;
                sec--;
            }
        }
    }
    if (sec < MIN_SECONDS || sec > MAX_SECONDS)
        return fail(d, -EINVAL, "time %lld seconds is outside the years 0000-9999", (long long)sec);
    if (micro)
        (void)rfc3339_format_micro(sec, (int32_t)nsec, buf);
    else
        (void)rfc3339_format(sec, buf);
    return new_node(d, cJSON_CreateString(buf), ret);
}

static int quantity_json(struct dec *d, const struct slot *sl, cJSON **ret)
{
    static const unsigned want[] = {WIRE_LEN};
    struct slot s[1] = {0};
    struct quantity q;
    char buf[QUANTITY_STR_MAX], text[128];
    int r;

    if ((r = scan_small(d, sl->parts, sl->nparts, want, 1, s)) < 0)
        return r;
    if ((r = check_text(d, s[0].s)) < 0)
        return r;
    if (s[0].s.n >= sizeof(text))
        return fail(d, -EINVAL, "quantity is longer than %zu bytes", sizeof(text) - 1);
    if (s[0].s.n)
        memcpy(text, s[0].s.p, s[0].s.n);
    text[s[0].s.n] = '\0';
    /* An empty string is the zero Quantity; anything else must parse, as ParseQuantity. */
    if (!s[0].s.n) {
        quantity_from_int(0, QUANTITY_DECIMAL_SI, &q);
    } else if (quantity_parse(text, &q) < 0) {
        return fail(d, -EINVAL, "quantity \"%s\" does not match the quantity syntax", text);
    }
    (void)quantity_format(&q, buf);
    return new_node(d, cJSON_CreateString(buf), ret);
}

static int intstr_json(struct dec *d, const struct slot *sl, cJSON **ret)
{
    static const unsigned want[] = {WIRE_VARINT, WIRE_VARINT, WIRE_LEN};
    struct slot s[3] = {0};
    int r;

    if ((r = scan_small(d, sl->parts, sl->nparts, want, 3, s)) < 0)
        return r;
    if (s[0].v == 0)
        return new_node(d, cJSON_CreateNumber((double)(int32_t)(uint32_t)s[1].v), ret);
    if (s[0].v == 1)
        return new_string(d, s[2].s, ret);
    return fail(d, -EINVAL, "IntOrString has type %llu (0 int, 1 string)",
                (unsigned long long)s[0].v);
}

static int jsonraw_json(struct dec *d, const struct slot *sl, cJSON **ret)
{
    static const unsigned want[] = {WIRE_LEN};
    struct slot s[1] = {0};
    struct codec_error cerr = {0};
    struct codec_limits lim = *d->lim;
    int r;

    if ((r = scan_small(d, sl->parts, sl->nparts, want, 1, s)) < 0)
        return r;
    if (!s[0].s.n)
        return new_node(d, cJSON_CreateObject(), ret);
    lim.max_nodes = d->lim->max_nodes - d->nodes;
    lim.max_depth = d->lim->max_depth - d->depth;
    r = json_parse((const char *)s[0].s.p, s[0].s.n, &lim, ret, &cerr);
    if (r == -ENOMEM)
        return r;
    if (r < 0)
        return fail(d, r, "not valid JSON: %s", cerr.msg);
    return 0;
}

static int scalar_json(struct dec *d, const struct protobuf_field *f, uint64_t v, struct span s,
                       cJSON **ret)
{
    switch (f->type) {
    case PROTOBUF_STRING:
        return new_string(d, s, ret);
    case PROTOBUF_BYTES: {
        struct strbuf b64 = STRBUF_INIT;
        int r;
        strbuf_add_base64(&b64, s.p, s.n);
        r = new_node(d, cJSON_CreateString(b64.buf), ret);
        strbuf_release(&b64);
        return r;
    }
    case PROTOBUF_BOOL:
        return new_node(d, cJSON_CreateBool(v != 0), ret);
    case PROTOBUF_INT32:
        return new_node(d, cJSON_CreateNumber((double)(int32_t)(uint32_t)v), ret);
    case PROTOBUF_INT64:
        return new_node(d, cJSON_CreateNumber((double)(int64_t)v), ret);
    default:
        break;
    }
    CHECK(!"not a scalar");
    return -EINVAL;
}

/* One element of a repeated field or a map value, from one wire occurrence. */
static int element_json(struct dec *d, const struct protobuf_field *f, const struct wfield *w,
                        cJSON **ret)
{
    struct slot sl = {.present = true, .v = w->v, .s = w->s};
    int r;

    if (is_varint_type(f->type) || f->type == PROTOBUF_STRING || f->type == PROTOBUF_BYTES)
        return scalar_json(d, f, w->v, w->s, ret);
    sl.parts = (struct span *)&w->s;
    sl.nparts = 1;
    r = value_json(d, f, &sl, ret);
    return r;
}

/* A map entry {1 key, 2 value}: either may be missing (the zero value). */
static int map_entry(struct dec *d, const struct protobuf_field *f, struct span entry, cJSON *obj)
{
    struct span in = entry, key = {(const uint8_t *)"", 0};
    struct wfield val = {.num = 2, .wire = WIRE_LEN, .s = {(const uint8_t *)"", 0}};
    bool have_val = false;
    cJSON *v = NULL;
    char *k;
    size_t len;
    int r;

    while (in.n) {
        struct wfield w = {0};
        if ((r = next_field(d, &in, &w)) < 0)
            return r;
        if (w.num == 1) {
            if (w.wire != WIRE_LEN)
                return fail(d, -EINVAL, "map key has wire type %u", w.wire);
            key = w.s;
        } else if (w.num == 2) {
            if (w.wire != (is_varint_type(f->type) ? WIRE_VARINT : WIRE_LEN))
                return fail(d, -EINVAL, "map value has wire type %u", w.wire);
            val = w;
            have_val = true;
        }
    }
    if ((r = check_text(d, key)) < 0)
        return r;
    k = xmalloc(key.n + 1);
    if (key.n)
        memcpy(k, key.p, key.n);
    k[key.n] = '\0';
    len = push(d, NULL, 0, k);
    if (!have_val && f->type == PROTOBUF_QUANTITY) {
        /* a missing Quantity is the zero Quantity */
        struct slot sl = {.present = true};
        r = quantity_json(d, &sl, &v);
    } else {
        r = element_json(d, f, &val, &v);
    }
    pop(d, len);
    if (r == 0) {
        /* duplicate keys: the last wins, as Go's map assignment */
        if (cJSON_GetObjectItemCaseSensitive(obj, k))
            r = cJSON_ReplaceItemInObjectCaseSensitive(obj, k, v) ? 0 : -ENOMEM;
        else if ((r = count(d)) == 0)
            r = cJSON_AddItemToObject(obj, k, v) ? 0 : -ENOMEM;
        if (r < 0)
            cJSON_Delete(v);
    }
    free(k);
    return r;
}

static int collect_one(struct dec *d, const struct protobuf_field *f, struct slot *sl,
                       const struct wfield *w)
{
    bool varint = is_varint_type(f->type);
    unsigned want = varint ? WIRE_VARINT : WIRE_LEN;
    size_t len = push(d, f->json, 0, NULL);
    cJSON *v = NULL;
    int r = 0;

    if (f->flags & PROTOBUF_MAP) {
        if (w->wire != WIRE_LEN)
            r = fail(d, -EINVAL, "wire type %u, want 2", w->wire);
        else if (sl->list || (r = new_node(d, cJSON_CreateObject(), &sl->list)) == 0)
            r = map_entry(d, f, w->s, sl->list);
        sl->present = true;
    } else if (f->flags & PROTOBUF_REP) {
        if (!sl->list && (r = new_node(d, cJSON_CreateArray(), &sl->list)) < 0)
            goto out;
        (void)push(d, NULL, cJSON_GetArraySize(sl->list), NULL);
        sl->present = true;
        if (varint && w->wire == WIRE_LEN) {
            /* packed */
            struct span in = w->s;
            while (in.n && r == 0) {
                struct wfield e = {.num = w->num, .wire = WIRE_VARINT};
                if ((r = read_varint(d, &in, &e.v)) == 0 && (r = element_json(d, f, &e, &v)) == 0)
                    CHECK(cJSON_AddItemToArray(sl->list, v));
            }
        } else if (w->wire != want) {
            r = fail(d, -EINVAL, "wire type %u, want %u", w->wire, want);
        } else if (f->type == PROTOBUF_NOTABLE) {
            r = fail(d, -ENOTSUP, "%s is not supported in protobuf bodies; send the object as JSON",
                     f->msg ? f->msg->name : "this field");
        } else if ((r = element_json(d, f, w, &v)) == 0) {
            CHECK(cJSON_AddItemToArray(sl->list, v));
        }
    } else if (w->wire != want) {
        r = fail(d, -EINVAL, "wire type %u, want %u", w->wire, want);
    } else {
        sl->present = true;
        sl->v = w->v;
        sl->s = w->s;
        if (!varint && f->type != PROTOBUF_STRING && f->type != PROTOBUF_BYTES)
            add_part(sl, w->s);
    }
out:
    pop(d, len);
    return r;
}

/* Walks parts once, filling one slot per table field. */
static int collect(struct dec *d, const struct protobuf_msg *m, const struct span *parts,
                   size_t nparts, struct slot *slots)
{
    for (size_t i = 0; i < nparts; i++) {
        struct span in = parts[i];
        while (in.n) {
            struct wfield w = {0};
            const struct protobuf_field *f = m->fields;
            int r;

            if ((r = next_field(d, &in, &w)) < 0)
                return r;
            while (f->num && f->num != w.num)
                f++;
            if (!f->num)
                continue; /* unknown to this table: skipped, as Go skips it */
            if ((r = collect_one(d, f, &slots[f - m->fields], &w)) < 0)
                return r;
        }
    }
    return 0;
}

static bool is_zero_scalar(const struct protobuf_field *f, const struct slot *sl)
{
    if (!sl->present)
        return true;
    if (f->type == PROTOBUF_STRING || f->type == PROTOBUF_BYTES)
        return sl->s.n == 0;
    if (f->type == PROTOBUF_INT32)
        return (uint32_t)sl->v == 0;
    return sl->v == 0;
}

static int value_json(struct dec *d, const struct protobuf_field *f, const struct slot *sl,
                      cJSON **ret)
{
    switch (f->type) {
    case PROTOBUF_STRING:
    case PROTOBUF_BYTES:
    case PROTOBUF_BOOL:
    case PROTOBUF_INT32:
    case PROTOBUF_INT64:
        return scalar_json(d, f, sl->present ? sl->v : 0,
                           sl->present ? sl->s : (struct span){(const uint8_t *)"", 0}, ret);
    case PROTOBUF_MESSAGE:
        return decode_message(d, f->msg, sl->parts, sl->nparts, NULL, ret);
    case PROTOBUF_TIME:
    case PROTOBUF_MICROTIME:
        return time_json(d, sl, f->type == PROTOBUF_MICROTIME, ret);
    case PROTOBUF_QUANTITY:
        return quantity_json(d, sl, ret);
    case PROTOBUF_INTORSTRING:
        return intstr_json(d, sl, ret);
    case PROTOBUF_JSONRAW:
        return jsonraw_json(d, sl, ret);
    case PROTOBUF_NOTABLE:
        return fail(d, -ENOTSUP, "%s is not supported in protobuf bodies; send the object as JSON",
                    f->msg ? f->msg->name : "this field");
    case PROTOBUF_INLINE:
        break;
    }
    CHECK(!"inline fields are built in place");
    return -EINVAL;
}

/* Writes the members of obj from the slots, in table order, as Go's encoding/json would. */
static int build(struct dec *d, const struct protobuf_msg *m, struct slot *slots, cJSON *obj)
{
    for (size_t i = 0; m->fields[i].num; i++) {
        const struct protobuf_field *f = &m->fields[i];
        struct slot *sl = &slots[i];
        bool scalar =
            is_varint_type(f->type) || f->type == PROTOBUF_STRING || f->type == PROTOBUF_BYTES;
        cJSON *v = NULL;
        size_t len;
        int r = 0;

        if (f->flags & (PROTOBUF_REP | PROTOBUF_MAP)) {
            if (sl->list && cJSON_GetArraySize(sl->list) > 0) {
                CHECK(cJSON_AddItemToObject(obj, f->json, sl->list));
                sl->list = NULL;
            }
            continue;
        }
        if (f->type == PROTOBUF_INLINE) {
            len = push(d, f->json, 0, NULL);
            r = decode_message(d, f->msg, sl->parts, sl->nparts, obj, NULL);
            pop(d, len);
            if (r < 0)
                return r;
            continue;
        }
        if (f->flags & PROTOBUF_PTR || f->type == PROTOBUF_JSONRAW || f->type == PROTOBUF_NOTABLE) {
            if (!sl->present)
                continue;
        } else if (scalar && !(f->flags & PROTOBUF_ALWAYS) && is_zero_scalar(f, sl)) {
            continue;
        }
        len = push(d, f->json, 0, NULL);
        r = value_json(d, f, sl, &v);
        pop(d, len);
        if (r < 0)
            return r;
        CHECK(cJSON_AddItemToObject(obj, f->json, v));
    }
    return 0;
}

/* Decodes the concatenation of parts with table m: into a new object (*ret), or, for an
 * inline message, into the members of into. */
static int decode_message(struct dec *d, const struct protobuf_msg *m, const struct span *parts,
                          size_t nparts, cJSON *into, cJSON **ret)
{
    size_t n = nfields(m);
    struct slot *slots;
    cJSON *obj = into;
    int r;

    if (d->depth >= d->lim->max_depth)
        return fail(d, -E2BIG, "the object nests deeper than %d levels", d->lim->max_depth);
    d->depth++;
    slots = xcalloc(n ? n : 1, sizeof(*slots));
    r = collect(d, m, parts, nparts, slots);
    if (r == 0 && !obj)
        r = new_node(d, cJSON_CreateObject(), &obj);
    if (r == 0)
        r = build(d, m, slots, obj);
    slots_free(slots, n);
    d->depth--;
    if (!into) {
        if (r < 0)
            cJSON_Delete(obj);
        else
            *ret = obj;
    }
    return r;
}

static void dec_init(struct dec *d, const struct codec_limits *lim, struct protobuf_error *err)
{
    *d = (struct dec){.lim = lim ? lim : &codec_default_limits, .err = err};
    strbuf_init(&d->path);
    if (err)
        *err = (struct protobuf_error){0};
}

int protobuf_decode_msg(const struct protobuf_msg *msg, const void *buf, size_t len,
                        const struct codec_limits *lim, cJSON **ret, struct protobuf_error *err)
{
    struct span in = {buf, len};
    struct dec d;
    int r;

    dec_init(&d, lim, err);
    codec_init();
    if (len > d.lim->max_bytes)
        r = fail(&d, -E2BIG, "the body is longer than %zu bytes", d.lim->max_bytes);
    else
        r = decode_message(&d, msg, &in, 1, NULL, ret);
    strbuf_release(&d.path);
    return r;
}

static char *span_dup(struct span s)
{
    char *t = xmalloc(s.n + 1);

    if (s.n)
        memcpy(t, s.p, s.n);
    t[s.n] = '\0';
    return t;
}

/* runtime.Unknown: 1 typeMeta {1 apiVersion, 2 kind}, 2 raw, 3 contentEncoding, 4 contentType */
struct envelope {
    struct span api_version, kind, raw, encoding, type;
};

static int read_envelope(struct dec *d, struct span in, struct envelope *e)
{
    while (in.n) {
        struct wfield w = {0};
        int r;

        if ((r = next_field(d, &in, &w)) < 0)
            return r;
        if (w.num > 4)
            continue;
        if (w.wire != WIRE_LEN)
            return fail(d, -EINVAL, "envelope field %u has wire type %u, want 2", w.num, w.wire);
        if (w.num == 1) {
            struct span tm = w.s;
            while (tm.n) {
                struct wfield t = {0};
                if ((r = next_field(d, &tm, &t)) < 0)
                    return r;
                if (t.num > 2)
                    continue;
                if (t.wire != WIRE_LEN)
                    return fail(d, -EINVAL, "typeMeta field %u has wire type %u, want 2", t.num,
                                t.wire);
                if ((r = check_text(d, t.s)) < 0)
                    return r;
                *(t.num == 1 ? &e->api_version : &e->kind) = t.s;
            }
        } else if (w.num == 2) {
            e->raw = w.s;
        } else if ((r = check_text(d, w.s)) < 0) {
            return r;
        } else {
            *(w.num == 3 ? &e->encoding : &e->type) = w.s;
        }
    }
    return 0;
}

int protobuf_decode(const void *buf, size_t len, const struct codec_limits *lim, cJSON **ret,
                    struct protobuf_error *err)
{
    struct envelope e = {0};
    const struct protobuf_msg *msg;
    char *av = NULL, *kind = NULL;
    cJSON *obj = NULL, *tm;
    struct dec d;
    int r;

    dec_init(&d, lim, err);
    codec_init();
    if (len > d.lim->max_bytes) {
        r = fail(&d, -E2BIG, "the body is longer than %zu bytes", d.lim->max_bytes);
        goto out;
    }
    if (len < PROTOBUF_MAGIC_LEN || memcmp(buf, PROTOBUF_MAGIC, PROTOBUF_MAGIC_LEN)) {
        r = fail(&d, -EINVAL,
                 "provided data does not appear to be a protobuf message, expected prefix "
                 "[107 56 115 0]");
        goto out;
    }
    r = read_envelope(&d, (struct span){(const uint8_t *)buf + 4, len - 4}, &e);
    if (r < 0)
        goto out;
    if (e.encoding.n || (e.type.n && (e.type.n != strlen(PROTOBUF_MEDIA) ||
                                      memcmp(e.type.p, PROTOBUF_MEDIA, e.type.n)))) {
        r = fail(&d, -ENOTSUP,
                 "the envelope's raw object has content encoding \"%.*s\" and type \"%.*s\"; "
                 "only plain protobuf is supported",
                 (int)(e.encoding.n > 40 ? 40 : e.encoding.n), (const char *)e.encoding.p,
                 (int)(e.type.n > 60 ? 60 : e.type.n), (const char *)e.type.p);
        goto out;
    }
    av = span_dup(e.api_version);
    kind = span_dup(e.kind);
    if (!*kind || !*av) {
        r = fail(&d, -EINVAL, "the protobuf envelope's typeMeta has no %s",
                 !*kind ? "kind" : "apiVersion");
        goto out;
    }
    if (!(msg = protobuf_kind_msg(av, kind))) {
        r = fail(&d, -ENOTSUP,
                 "kind %s in version %s cannot be decoded from protobuf; send it as JSON "
                 "(application/json)",
                 kind, av);
        goto out;
    }
    /* kind and apiVersion first, as Go writes TypeMeta */
    if ((r = new_node(&d, cJSON_CreateObject(), &obj)) < 0)
        goto out;
    if ((r = new_node(&d, cJSON_CreateString(kind), &tm)) < 0)
        goto out;
    CHECK(cJSON_AddItemToObject(obj, "kind", tm));
    if ((r = new_node(&d, cJSON_CreateString(av), &tm)) < 0)
        goto out;
    CHECK(cJSON_AddItemToObject(obj, "apiVersion", tm));
    r = decode_message(&d, msg, &e.raw, 1, obj, NULL);
out:
    if (r == 0)
        *ret = obj;
    else
        cJSON_Delete(obj);
    free(av);
    free(kind);
    strbuf_release(&d.path);
    return r;
}
