/*
 * Output negotiation (see negotiate.h). The header is read in place, one media range at a
 * time, keeping only the best acceptable range so far: a client's Accept is a handful of
 * ranges, and nothing needs to be allocated to rank them.
 */
#include "apiserver/negotiate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "codec/codec.h"

/* A span of the header: [p, p + n). */
struct span {
    const char *p;
    size_t n;
};

static bool span_is(struct span s, const char *want)
{
    return s.n == strlen(want) && !memcmp(s.p, want, s.n);
}

static bool span_is_nocase(struct span s, const char *want)
{
    return s.n == strlen(want) && !strncasecmp(s.p, want, s.n);
}

static struct span trim(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    return (struct span){p, (size_t)(end - p)};
}

/* The end of the piece that starts at p: the next sep outside a quoted string, or end. */
static const char *piece_end(const char *p, const char *end, char sep)
{
    bool quoted = false;

    for (; p < end; p++) {
        if (quoted && *p == '\\' && p + 1 < end)
            p++;
        else if (*p == '"')
            quoted = !quoted;
        else if (!quoted && *p == sep)
            return p;
    }
    return end;
}

/* A parameter value without the quotes around it (escapes inside are not undone: no value
 * this server acts on has any). */
static struct span unquote(struct span v)
{
    if (v.n >= 2 && v.p[0] == '"' && v.p[v.n - 1] == '"')
        return (struct span){v.p + 1, v.n - 2};
    return v;
}

/* One media range of the header, and how well it serves. */
struct range {
    double q;
    int wild; /* 0 application/json or application/yaml, 1 application/<any>, 2 <any>/<any> */
    struct negotiate_output out;
};

/* The conversion as, g and v name, or false when there is none this server makes. */
static bool conversion(struct span as, struct span g, struct span v, bool list,
                       struct negotiate_output *ret)
{
    if (!span_is(g, "meta.k8s.io"))
        return false;
    if (span_is(v, "v1"))
        ret->api_version = "meta.k8s.io/v1";
    else if (span_is(v, "v1beta1"))
        ret->api_version = "meta.k8s.io/v1beta1";
    else
        return false;
    if (span_is(as, "Table"))
        ret->as = NEGOTIATE_TABLE;
    else if (span_is(as, "PartialObjectMetadata") && !list)
        ret->as = NEGOTIATE_PARTIAL;
    else if (span_is(as, "PartialObjectMetadataList") && list)
        ret->as = NEGOTIATE_PARTIAL_LIST;
    else
        return false;
    return true;
}

/* Reads the media range [p, end); false when it is not one this server can answer. */
static bool parse_range(const char *p, const char *end, bool list, struct range *ret)
{
    const char *e = piece_end(p, end, ';');
    struct span type = trim(p, e), as = {0}, g = {0}, v = {0};
    bool convert = false;

    *ret = (struct range){.q = 1.0, .out = {NEGOTIATE_OBJECT, NULL, false}};
    if (span_is_nocase(type, "application/json"))
        ret->wild = 0;
    else if (span_is_nocase(type, "application/yaml"))
        ret->out.yaml = true;
    else if (span_is_nocase(type, "application/*"))
        ret->wild = 1;
    else if (span_is(type, "*/*"))
        ret->wild = 2;
    else
        return false;
    for (p = e; p < end; p = e) {
        const char *eq;
        struct span name, val;

        p++; /* the ';' */
        e = piece_end(p, end, ';');
        eq = memchr(p, '=', (size_t)(e - p));
        if (!eq)
            continue;
        name = trim(p, eq);
        val = unquote(trim(eq + 1, e));
        if (span_is_nocase(name, "q")) {
            char buf[16];
            char *stop;

            /* strconv.ParseFloat's failure is 0 (goautoneg), and 0 is "not acceptable" */
            if (val.n >= sizeof(buf))
                return false;
            memcpy(buf, val.p, val.n);
            buf[val.n] = '\0';
            ret->q = strtod(buf, &stop);
            if (stop == buf || *stop || !(ret->q > 0))
                return false;
        } else if (span_is_nocase(name, "as")) {
            as = val;
            convert = true;
        } else if (span_is_nocase(name, "g")) {
            g = val;
            convert = true;
        } else if (span_is_nocase(name, "v")) {
            v = val;
            convert = true;
        }
    }
    return !convert || conversion(as, g, v, list, &ret->out);
}

int negotiate_output(const char *accept, bool list, struct negotiate_output *ret)
{
    const char *p = accept, *end;
    struct range best = {0}, r;
    bool found = false;

    *ret = (struct negotiate_output){NEGOTIATE_OBJECT, NULL, false};
    if (!accept)
        return 0;
    end = accept + strlen(accept);
    if (!trim(accept, end).n)
        return 0;
    for (; p < end; p++) {
        const char *e = piece_end(p, end, ',');

        if (parse_range(p, e, list, &r) &&
            (!found || r.q > best.q || (r.q == best.q && r.wild < best.wild))) {
            best = r;
            found = true;
        }
        p = e;
    }
    if (!found)
        return -EINVAL;
    *ret = best.out;
    return 0;
}

int negotiate_partial(const char *obj, size_t len, const char *api_version, struct strbuf *out)
{
    struct json_member m;
    struct span meta = {"{}", 2};
    bool have_meta = false, have_kind = false;
    size_t pos = 0;
    int r = 0;

    while (!(have_meta && have_kind) && (r = json_member_next(obj, len, &pos, &m)) == 0) {
        struct span key = {m.key, m.key_len}, val = {obj + m.start, m.end - m.start};

        if (span_is(key, "kind")) {
            if (span_is(val, "\"Status\""))
                return -ENOENT;
            have_kind = true;
        } else if (span_is(key, "metadata") && !have_meta) {
            meta = val;
            have_meta = true;
        }
    }
    if (!(have_meta && have_kind) && r != -ENOENT)
        return -EINVAL;
    strbuf_addstr(out, "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"");
    strbuf_addstr(out, api_version);
    strbuf_addstr(out, "\",\"metadata\":");
    strbuf_add(out, meta.p, meta.n);
    strbuf_addch(out, '}');
    return 0;
}
