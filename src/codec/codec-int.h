/*
 * codec internals shared by json.c, yaml.c and the patch files: error reporting, UTF-8 checks,
 * number formatting, a flood-resistant key set for duplicate-key detection, and the tree helpers
 * patch.c and smp.c both use. No other directory includes this header.
 */
#ifndef KOORD_CODEC_INT_H
#define KOORD_CODEC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/codec.h"

/* Set by the cJSON allocation hook when a checked allocation fails, so a NULL from cJSON can be
 * told apart from a syntax error. Reset it before the call you want to judge. */
extern _Thread_local bool codec__oom;

/* Calls cmalloc() and records failure in codec__oom; the cJSON malloc hook. */
void *codec__malloc(size_t n);

const struct codec_limits *codec__limits(const struct codec_limits *lim);

/* Fills err (if not NULL) with a position and a printf-style message. */
void codec__set_error(struct codec_error *err, int line, int column, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* 1-based line and column (in characters) of byte offset off in buf[0..len). An offset at or
 * past the end maps just after the last character, ignoring one trailing newline, so errors "at
 * end of input" point at the last line that has content. */
void codec__position(const char *buf, size_t len, size_t off, int *ret_line, int *ret_column);

/* Length of the valid UTF-8 sequence at s[0..len) (1-4), or 0 when it is invalid (overlong,
 * surrogate, beyond U+10FFFF or truncated). *ret_cp gets the code point. */
size_t codec__utf8_decode(const unsigned char *s, size_t len, uint32_t *ret_cp);

/* Writes a short, quoted, escaped preview of s[0..len) into dst (for error messages): at most
 * about 60 characters of s, then "...". */
void codec__preview(char *dst, size_t size, const char *s, size_t len);

/* Offset of the first invalid UTF-8 byte in s[0..len), or len when all of it is valid. */
size_t codec__utf8_check(const char *s, size_t len);

/* Writes d as JSON/YAML number text (see json_print()) into buf, NUL-terminated; returns the
 * length. Non-finite values give "null". */
#define CODEC_NUMBER_MAX 32
size_t codec__format_number(double d, char buf[CODEC_NUMBER_MAX]);

/* A map from borrowed NUL-terminated strings to pointers, hashed with SipHash under a
 * per-process random key so untrusted keys cannot force collisions (duplicate-key detection,
 * YAML anchors). Zero-initialise; release with codec__strmap_release(). */
struct codec_strmap {
    struct codec_strmap_slot *slots;
    size_t cap; /* power of two, or 0 */
    size_t n;
};

/* Adds key -> val; key is borrowed and must outlive the map. Returns 0 if added, 1 if key was
 * already present (the map is unchanged), -ENOMEM. */
int codec__strmap_add(struct codec_strmap *m, const char *key, void *val);
/* The value slot of key (to read or replace), or NULL when absent. */
void **codec__strmap_find(const struct codec_strmap *m, const char *key);
void codec__strmap_release(struct codec_strmap *m);

/* ---- shared by the patch implementations (patch.c, smp.c) ---- */

/* Adds the items of v to *nodes and returns the nesting depth reached when v sits level
 * containers deep ("[]" at level 0 gives 1), or -E2BIG as soon as that passes PATCH_MAX_DEPTH,
 * so the recursion is bounded even for a tree nobody measured. */
int codec__measure(const cJSON *v, int level, size_t *nodes);

/* Gives v the member name key (taking ownership of it; NULL for array elements and roots). */
void codec__set_key(cJSON *v, char *key);

/* Exchanges the values (not the member names) of two items. */
void codec__swap_values(cJSON *a, cJSON *b);

/*
 * Member lookup by name, hashed for large objects so a patch with many members cannot make
 * lookups quadratic. The index borrows the members' names: members removed while it is in use
 * must stay allocated until codec__member_index_release().
 */
struct codec_member_index {
    const cJSON *obj;
    struct codec_strmap map;
    bool hashed;
};

/* 0 or -ENOMEM (then release it all the same). */
int codec__member_index_init(struct codec_member_index *ix, const cJSON *obj);
/* The first member named key, or NULL. */
cJSON *codec__member_index_get(const struct codec_member_index *ix, const char *key);
/* Records that item (a member of ix->obj) was detached. */
void codec__member_index_forget(struct codec_member_index *ix, const cJSON *item);
/* Records that item was appended to ix->obj; 0 or -ENOMEM. */
int codec__member_index_add(struct codec_member_index *ix, cJSON *item);
void codec__member_index_release(struct codec_member_index *ix);

#endif
