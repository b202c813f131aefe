/* base64url without padding (see base64.h). */
#include "base/base64.h"

#include <string.h>

#include "base/base.h"
#include "base/strbuf.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

void base64url_encode(const void *data, size_t len, struct strbuf *out)
{
    const unsigned char *p = data;
    size_t i = 0;

    for (; i + 3 <= len; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
        strbuf_addch(out, alphabet[v >> 18 & 63]);
        strbuf_addch(out, alphabet[v >> 12 & 63]);
        strbuf_addch(out, alphabet[v >> 6 & 63]);
        strbuf_addch(out, alphabet[v & 63]);
    }
    if (len - i == 1) {
        unsigned v = (unsigned)p[i] << 16;
        strbuf_addch(out, alphabet[v >> 18 & 63]);
        strbuf_addch(out, alphabet[v >> 12 & 63]);
    } else if (len - i == 2) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8;
        strbuf_addch(out, alphabet[v >> 18 & 63]);
        strbuf_addch(out, alphabet[v >> 12 & 63]);
        strbuf_addch(out, alphabet[v >> 6 & 63]);
    }
}

static int sextet(char c)
{
    const char *p = c ? strchr(alphabet, c) : NULL;
    return p ? (int)(p - alphabet) : -1;
}

int base64url_decode(const char *text, struct strbuf *out)
{
    size_t len = strlen(text), start = out->len;
    unsigned acc = 0;
    int bits = 0;

    if (len % 4 == 1)
        return -EINVAL;
    for (size_t i = 0; i < len; i++) {
        int v = sextet(text[i]);
        if (v < 0)
            goto bad;
        acc = (acc << 6 | (unsigned)v) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            strbuf_addch(out, (char)(acc >> bits & 0xff));
        }
    }
    /* The leftover bits of a short final group must be zero (canonical encoding). */
    if (bits && (acc & ((1u << bits) - 1)))
        goto bad;
    return 0;
bad:
    strbuf_setlen(out, start);
    return -EINVAL;
}
