/*
 * strbuf: a growable, always NUL-terminated byte buffer (after git's strbuf.h). Internal sizes
 * only: growth aborts on OOM. Initialise with STRBUF_INIT or strbuf_init(); strbuf_release()
 * frees and re-initialises.
 */
#ifndef KOORD_STRBUF_H
#define KOORD_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
    size_t alloc;
    size_t len;
    char *buf; /* never NULL after init; points at a static "" while alloc == 0 */
};

extern char strbuf_slopbuf[];
/* clang-format off */
#define STRBUF_INIT { .alloc = 0, .len = 0, .buf = strbuf_slopbuf }
/* clang-format on */

void strbuf_init(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
/* Hands the buffer to the caller (free() it) and re-initialises sb. */
char *strbuf_detach(struct strbuf *sb, size_t *ret_len);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_reset(struct strbuf *sb);
void strbuf_setlen(struct strbuf *sb, size_t len);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
/* Inline: printers and path builders append one byte at a time. */
static inline void strbuf_addch(struct strbuf *sb, char c)
{
    if (sb->len + 1 >= sb->alloc)
        strbuf_grow(sb, 1);
    sb->buf[sb->len++] = c;
    sb->buf[sb->len] = '\0';
}
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* Appends s as a JSON string literal, quotes included. */
void strbuf_add_json_str(struct strbuf *sb, const char *s);
/* Appends data in standard base64 (RFC 4648 section 4, with padding). */
void strbuf_add_base64(struct strbuf *sb, const void *data, size_t len);

#endif
