/* strbuf implementation; see strbuf.h. */
#include "base/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

char strbuf_slopbuf[1];

void strbuf_init(struct strbuf *sb)
{
    sb->alloc = 0;
    sb->len = 0;
    sb->buf = strbuf_slopbuf;
}

void strbuf_release(struct strbuf *sb)
{
    if (sb->alloc)
        free(sb->buf);
    strbuf_init(sb);
}

char *strbuf_detach(struct strbuf *sb, size_t *ret_len)
{
    char *p;

    strbuf_grow(sb, 0);
    p = sb->buf;
    if (ret_len)
        *ret_len = sb->len;
    strbuf_init(sb);
    return p;
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
    size_t need;

    CHECK(extra < SIZE_MAX / 2 - sb->len);
    need = sb->len + extra + 1;
    if (sb->alloc >= need)
        return;
    if (!sb->alloc)
        sb->buf = NULL;
    if (need < 64)
        need = 64;
    if (need < sb->alloc * 3 / 2)
        need = sb->alloc * 3 / 2;
    sb->buf = xrealloc(sb->buf, need);
    if (!sb->alloc)
        sb->buf[0] = '\0';
    sb->alloc = need;
}

void strbuf_reset(struct strbuf *sb)
{
    strbuf_setlen(sb, 0);
}

void strbuf_setlen(struct strbuf *sb, size_t len)
{
    CHECK(len <= sb->len || (sb->alloc && len < sb->alloc));
    if (!sb->alloc)
        return;
    sb->len = len;
    sb->buf[len] = '\0';
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
    if (!len)
        return;
    strbuf_grow(sb, len);
    memcpy(sb->buf + sb->len, data, len);
    sb->len += len;
    sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
    strbuf_add(sb, s, strlen(s));
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
    va_list cp;
    int n;

    strbuf_grow(sb, 64);
    va_copy(cp, ap);
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_copy initialised cp */
    n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, cp);
    va_end(cp);
    CHECK(n >= 0);
    if ((size_t)n >= sb->alloc - sb->len) {
        strbuf_grow(sb, (size_t)n);
        /* ap is untouched: the first pass used the copy. */
        n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
        CHECK(n >= 0);
    }
    sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    strbuf_vaddf(sb, fmt, ap);
    va_end(ap);
}

void strbuf_add_json_str(struct strbuf *sb, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;

    strbuf_addch(sb, '"');
    for (; *p; p++) {
        switch (*p) {
        case '"':
            strbuf_addstr(sb, "\\\"");
            break;
        case '\\':
            strbuf_addstr(sb, "\\\\");
            break;
        case '\n':
            strbuf_addstr(sb, "\\n");
            break;
        case '\r':
            strbuf_addstr(sb, "\\r");
            break;
        case '\t':
            strbuf_addstr(sb, "\\t");
            break;
        default:
            if (*p < 0x20) {
                strbuf_addstr(sb, "\\u00");
                strbuf_addch(sb, hex[*p >> 4]);
                strbuf_addch(sb, hex[*p & 15]);
            } else {
                strbuf_addch(sb, (char)*p);
            }
        }
    }
    strbuf_addch(sb, '"');
}

void strbuf_add_base64(struct strbuf *sb, const void *data, size_t len)
{
    /* The 64 digits, then the padding character. */
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";
    const unsigned char *p = data;

    strbuf_grow(sb, (len + 2) / 3 * 4);
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned)p[i] << 16;
        size_t n = len - i < 3 ? len - i : 3;
        if (n > 1)
            v |= (unsigned)p[i + 1] << 8;
        if (n > 2)
            v |= p[i + 2];
        strbuf_addch(sb, abc[(v >> 18) & 63]);
        strbuf_addch(sb, abc[(v >> 12) & 63]);
        strbuf_addch(sb, abc[n > 1 ? (v >> 6) & 63 : 64]);
        strbuf_addch(sb, abc[n > 2 ? v & 63 : 64]);
    }
}
