/*
 * Protobuf request bodies (application/vnd.kubernetes.protobuf, reference protobuf.md): client-go's
 * typed clients, and so kubectl's typed commands (create namespace, configmap, secret, service,
 * priorityclass, drain --disable-eviction), send their objects this way. The server decodes
 * them into the same cJSON tree the JSON body of the same object would parse to, so everything
 * after decoding (validation, defaulting, admission, storage) is the JSON path, and answers JSON.
 *
 * The decoder is hand-written (a varint/length reader driven by per-message field tables) rather
 * than protobuf-c generated code: the tables hold only what the wire adds to the type
 * descriptions (field numbers, Go's pointer-ness and omitempty), a few hundred lines instead of
 * 350 KB of generated structs that would still need a mapping layer per kind into cJSON, and no
 * new dependency. The JSON names in the tables are checked against the kinds' api_schema by the
 * unit tests, so the two descriptions cannot drift apart on names (docs/design.md).
 *
 * What comes out is what Go's encoding/json writes for the struct proto.Unmarshal filled:
 * non-pointer scalars are dropped at their zero value when the Go field has omitempty and kept
 * otherwise, pointers are written when the field was present (presence, not value), non-pointer
 * structs always ({} when empty), a zero metav1.Time as null, Quantity as its string,
 * IntOrString as a number or a string by its type, bytes (Secret data) as base64, repeated
 * fields and maps only when not empty. Unknown field numbers are skipped as Go skips them; a
 * field the tables know but whose message has no table (a rarely used volume source, say) is
 * refused by name rather than dropped.
 */
#ifndef KOORD_API_PROTOBUF_H
#define KOORD_API_PROTOBUF_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "codec/codec.h"

/* The 4-byte magic that starts every body ("k8s\0"). */
#define PROTOBUF_MAGIC     "k8s\0"
#define PROTOBUF_MAGIC_LEN 4
#define PROTOBUF_MEDIA     "application/vnd.kubernetes.protobuf"

/* How a field's value is read and written to JSON. */
enum protobuf_type {
    PROTOBUF_STRING,
    PROTOBUF_BYTES, /* []byte: base64 in JSON */
    PROTOBUF_BOOL,
    PROTOBUF_INT32,
    PROTOBUF_INT64,
    PROTOBUF_MESSAGE,     /* a nested message with a table (.msg) */
    PROTOBUF_INLINE,      /* a nested message whose fields JSON writes into the parent (ⁱ) */
    PROTOBUF_TIME,        /* metav1.Time: seconds, RFC 3339; zero is null */
    PROTOBUF_MICROTIME,   /* metav1.MicroTime: 6-digit fraction */
    PROTOBUF_QUANTITY,    /* resource.Quantity {1 string} */
    PROTOBUF_INTORSTRING, /* intstr.IntOrString {1 type, 2 intVal, 3 strVal} */
    PROTOBUF_JSONRAW,     /* FieldsV1 {1 raw}: the bytes are the JSON value */
    PROTOBUF_NOTABLE,     /* a message koord has no table for: refused when present */
};

enum protobuf_flags {
    PROTOBUF_REP = 1 << 0,    /* repeated (scalars packed or not) */
    PROTOBUF_MAP = 1 << 1,    /* map<string, type>: entries {1 key, 2 value} */
    PROTOBUF_PTR = 1 << 2,    /* Go pointer: written when present, whatever its value */
    PROTOBUF_ALWAYS = 1 << 3, /* Go field without omitempty: its zero value is written */
};

struct protobuf_msg;

struct protobuf_field {
    unsigned num;
    const char *json;
    enum protobuf_type type;
    unsigned flags; /* enum protobuf_flags */
    const struct protobuf_msg *msg;
};

struct protobuf_msg {
    const char *name;                    /* the Go/proto message name, for errors */
    const struct protobuf_field *fields; /* terminated by num 0 */
};

/* One kind a body may carry: the envelope's typeMeta names it. */
struct protobuf_kind {
    const char *group; /* "" for core and meta (DeleteOptions: any apiVersion) */
    const char *kind;
    const struct protobuf_msg *msg;
};

/* Every kind with a table, terminated by kind NULL (protobuf_types.c). */
extern const struct protobuf_kind protobuf_kinds[];

/* The table for kind in api_version ("v1", "scheduling.k8s.io/v1"), or NULL. DeleteOptions is
 * found under any apiVersion: clients encode it with the version of the resource's group. */
const struct protobuf_msg *protobuf_kind_msg(const char *api_version, const char *kind);

/* Why a decode failed. status is the HTTP answer kube-apiserver gives: 400 for bytes that are
 * not a well-formed object, 415 for a kind or field koord cannot decode from protobuf. */
struct protobuf_error {
    int status;
    char msg[256];
};

/*
 * Decodes a whole body: the magic, the runtime.Unknown envelope and the object its typeMeta
 * names. *ret takes the object as JSON, kind and apiVersion first (from the envelope). lim NULL
 * means codec_default_limits (bytes, depth, nodes). Returns 0; -EINVAL (malformed, err->status
 * 400), -ENOTSUP (kind or field without a table, or an envelope with a contentEncoding or a
 * non-protobuf contentType: 415), -E2BIG (a limit: 400), -ENOMEM. err may be NULL.
 */
int protobuf_decode(const void *buf, size_t len, const struct codec_limits *lim, cJSON **ret,
                    struct protobuf_error *err);

/* Decodes one message with table msg from buf[0..len) (no envelope), as protobuf_decode does
 * the envelope's raw object. Same returns. */
int protobuf_decode_msg(const struct protobuf_msg *msg, const void *buf, size_t len,
                        const struct codec_limits *lim, cJSON **ret, struct protobuf_error *err);

#endif
