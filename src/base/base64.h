/*
 * base64url without padding (RFC 4648 section 5, Go's base64.RawURLEncoding): the alphabet
 * kube-apiserver writes continue tokens in, safe in a query string without escaping. Opaque
 * tokens built from JSON are the only user so far.
 */
#ifndef KOORD_BASE64_H
#define KOORD_BASE64_H

#include <stddef.h>

struct strbuf;

/* Appends the encoding of data[0..len) to out. */
void base64url_encode(const void *data, size_t len, struct strbuf *out);

/*
 * Appends the decoding of the NUL-terminated text to out. -EINVAL when it has a byte outside
 * the alphabet (padding included), a length that is 1 mod 4, or non-zero unused trailing bits;
 * out is then left as it was.
 */
int base64url_decode(const char *text, struct strbuf *out);

#endif
