/*
 * json_member_span() (see codec.h): finds one member of a JSON object by walking the bytes,
 * without building a tree. It exists so the API server can serve stored objects, which it
 * wrote itself with json_print(), by splicing in the few bytes that differ (a
 * resourceVersion) instead of parsing and printing every object of a list or of a watch
 * event for every watcher, which bench/apiserver showed to be most of their cost.
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

int json_member_span(const char *buf, size_t len, const char *key, size_t *ret_start,
                     size_t *ret_end)
{
    size_t klen = strlen(key), i = skip_space(buf, len, 0);

    if (i >= len || buf[i] != '{')
        return -EINVAL;
    i = skip_space(buf, len, i + 1);
    if (i < len && buf[i] == '}')
        return -ENOENT;
    while (i < len) {
        size_t kstart = i + 1, kend, vstart, vend;

        if (buf[i] != '"' || !(kend = skip_string(buf, len, i)))
            return -EINVAL;
        i = skip_space(buf, len, kend);
        if (i >= len || buf[i] != ':')
            return -EINVAL;
        vstart = skip_space(buf, len, i + 1);
        if (!(vend = skip_value(buf, len, vstart)) || vend == vstart)
            return -EINVAL;
        if (kend - 1 - kstart == klen && !memcmp(buf + kstart, key, klen)) {
            *ret_start = vstart;
            *ret_end = vend;
            return 0;
        }
        i = skip_space(buf, len, vend);
        if (i < len && buf[i] == '}')
            return -ENOENT;
        if (i >= len || buf[i] != ',')
            return -EINVAL;
        i = skip_space(buf, len, i + 1);
    }
    return -EINVAL;
}
