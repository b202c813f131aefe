/*
 * json_member_span() and the member walk json_member_key()/json_member_next() (see codec.h):
 * members of a JSON object found by walking the bytes, without building a tree. It exists so the
 * API server can serve stored objects, which it wrote itself with json_print(), by splicing in the
 * few bytes that differ (a resourceVersion) instead of parsing and printing every object of a list
 * or of a watch event for every watcher, which bench/apiserver showed to be most of their cost.
 */
#include <string.h>

#include "base/base.h"
#include "codec/codec.h"

static size_t skip_space(const char *buf, size_t len, size_t i)
{
    while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r'))
        i++;
    return i;
}

/* i at an opening '"': the offset after the closing one, or 0 when there is none. */
static size_t skip_string(const char *buf, size_t len, size_t i)
{
    for (i++; i < len; i++) {
        if (buf[i] == '\\')
            i++;
        else if (buf[i] == '"')
            return i + 1;
    }
    return 0;
}

/* i at the first byte of a value: the offset after it, or 0 when it is cut short or stray
 * closing brackets appear. Scalars are taken as whatever runs to the next delimiter. */
static size_t skip_value(const char *buf, size_t len, size_t i)
{
    size_t depth = 0;

    if (i >= len)
        return 0;
    if (buf[i] != '{' && buf[i] != '[' && buf[i] != '"') {
        while (i < len && !strchr(",}] \t\n\r", buf[i]))
            i++;
        return i;
    }
    while (i < len) {
        char ch = buf[i];
        if (ch == '"') {
            if (!(i = skip_string(buf, len, i)))
                return 0;
            if (!depth)
                return i;
            continue;
        }
        if (ch == '{' || ch == '[') {
            depth++;
        } else if (ch == '}' || ch == ']') {
            if (!depth)
                return 0;
            if (!--depth)
                return i + 1;
        }
        i++;
    }
    return 0;
}

int json_member_key(const char *buf, size_t len, size_t *pos, struct json_member *ret)
{
    size_t i = *pos, kend;

    if (i == 0) { /* the opening brace, and an empty object */
        i = skip_space(buf, len, 0);
        if (i >= len || buf[i] != '{')
            return -EINVAL;
        i = skip_space(buf, len, i + 1);
        if (i < len && buf[i] == '}')
            return -ENOENT;
    } else { /* after a value: the next member or the end */
        i = skip_space(buf, len, i);
        if (i < len && buf[i] == '}')
            return -ENOENT;
        if (i >= len || buf[i] != ',')
            return -EINVAL;
        i = skip_space(buf, len, i + 1);
    }
    if (i >= len || buf[i] != '"' || !(kend = skip_string(buf, len, i)))
        return -EINVAL;
    ret->key = buf + i + 1;
    ret->key_len = kend - 1 - (i + 1);
    i = skip_space(buf, len, kend);
    if (i >= len || buf[i] != ':')
        return -EINVAL;
    i = skip_space(buf, len, i + 1);
    if (i >= len)
        return -EINVAL;
    ret->start = i;
    ret->end = 0;
    *pos = i;
    return 0;
}

size_t json_value_end(const char *buf, size_t len, size_t start)
{
    size_t end = skip_value(buf, len, start);
    return end == start ? 0 : end;
}

int json_member_next(const char *buf, size_t len, size_t *pos, struct json_member *ret)
{
    int r = json_member_key(buf, len, pos, ret);

    if (r < 0)
        return r;
    if (!(ret->end = json_value_end(buf, len, ret->start)))
        return -EINVAL;
    *pos = ret->end;
    return 0;
}

int json_member_span(const char *buf, size_t len, const char *key, size_t *ret_start,
                     size_t *ret_end)
{
    size_t klen = strlen(key), pos = 0;
    struct json_member m;
    int r;

    while ((r = json_member_next(buf, len, &pos, &m)) == 0) {
        if (m.key_len == klen && !memcmp(m.key, key, klen)) {
            *ret_start = m.start;
            *ret_end = m.end;
            return 0;
        }
    }
    return r;
}
