/*
 * codec: bytes <-> cJSON trees. JSON goes through cJSON, YAML through libfyaml's event parser
 * and is converted to the same cJSON trees, so the rest of koord only ever sees cJSON. Both
 * decoders take untrusted input (request bodies, manifests, kubeconfigs) and enforce the limits
 * in struct codec_limits before memory or stack can grow with the input.
 *
 * The YAML typing follows sigs.k8s.io/yaml (go-yaml v2 underneath, YAML 1.1 flavoured), the
 * library kubectl and the apiserver use to turn manifests into JSON, so a manifest means the
 * same thing to koord as to kubectl.
 *
 * Thread safety: every function may run concurrently on different data once codec_init() ran.
 * cJSON itself keeps its last error position in a global, which these functions never read.
 */
#ifndef KOORD_CODEC_H
#define KOORD_CODEC_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

struct strbuf;

/* Bounds on one decode. Every field is a hard bound (0 allows none of that thing), so start
 * from codec_default_limits and change fields rather than zero-initialising. */
struct codec_limits {
    size_t max_bytes;         /* input length */
    int max_depth;            /* nested containers: "[]" is depth 1, a bare scalar depth 0 */
    size_t max_nodes;         /* cJSON items in the result (YAML: summed over the stream, aliases
                               * counted at their expanded size) */
    size_t max_docs;          /* YAML documents in a stream, empty ones included */
    bool keep_duplicate_keys; /* json_parse: keep repeated keys in the tree instead of failing,
                               * for a caller that resolves them as Go does (the apiserver's
                               * fieldValidation, apiserver/body.h) */
};

/*
 * 32 MiB: ten times the apiserver's 3 MiB request body limit, so a large manifest bundle or a
 * big List fits, while a hostile body is refused before it is parsed.
 * Depth 100: Kubernetes objects nest a few tens of levels at most (CRD schemas are the deepest),
 * and cJSON parses, prints, compares and frees recursively, so depth is what protects the stack.
 * 4M nodes: a cJSON item costs about 80 bytes with malloc overhead, so this caps one decode near
 * 320 MiB even when the bytes are dense ("[0,0,0,...]") or aliases expand them.
 * 10000 documents: bundles hold hundreds of objects; every document has a fixed cost.
 */
extern const struct codec_limits codec_default_limits;

/* Where and why a decode failed. line/column are 1-based (columns count characters), 0 when
 * unknown. msg is lower-case, NUL-terminated and quotes offending input. */
struct codec_error {
    int line;
    int column;
    char msg[256];
};

/*
 * Installs cJSON hooks so every cJSON allocation in the process goes through the checked
 * allocator (cmalloc/free), which makes allocation failures injectable in tests and lets the
 * decoders tell -ENOMEM from syntax errors. Also seeds the keyed hash used for duplicate-key
 * detection. Idempotent and thread-safe; call it once at program start, before other threads use
 * cJSON (the decoders call it too, to be safe).
 */
void codec_init(void);

/*
 * Keeps up to bytes_per_thread of the small blocks cJSON frees (nodes, keys, short strings) in a
 * cache of the freeing thread, and serves cJSON's next allocations of those sizes from it. A
 * server decodes and frees some ten thousand nodes per 17 KB NodeMetric; glibc's own per-thread
 * cache holds 7 blocks of a size, so the rest went through the arena's bins: 43% of koord
 * manager's CPU under bench/nodemetric. Blocks stay malloc's (free() on them is fine); a thread's
 * cache is released when it exits, or by codec_alloc_cache_release() on the calling thread. At
 * most 16 threads hold a cache at a time (a server may run a thread per connection); the others
 * free to malloc as before.
 * 0 turns caching off (the default: the node agent keeps its memory instead). Call it before the
 * threads start; calls codec_init().
 */
void codec_alloc_cache(size_t bytes_per_thread);

/* Frees the calling thread's cache (the main thread's, at exit). */
void codec_alloc_cache_release(void);

/*
 * Parses exactly one JSON value from buf[0..len) (no NUL needed; trailing bytes other than JSON
 * whitespace are an error). lim NULL means codec_default_limits; err may be NULL.
 *
 * Stricter than cJSON alone, as the input is untrusted and the result must print back the same:
 * strict RFC 8259 numbers (no "01", "1.", "+1"; at most 63 characters, cJSON's own bound),
 * finite numbers only, strings must be valid UTF-8 without raw control characters, unpaired
 * surrogates or "\u0000", and duplicate keys in one object are an error (as the apiserver's strict
 * field validation reports them; Go would keep the last value, cJSON lookups the first) unless
 * lim->keep_duplicate_keys.
 * Integers beyond +-2^53 lose precision (cJSON stores doubles); Kubernetes carries such values as
 * strings (quantities).
 *
 * The depth and node limits are checked by a pre-scan of the bytes before cJSON recurses, so deep
 * nesting cannot exhaust the stack. Note cJSON refuses nesting beyond 1000 on its own, as a
 * syntax error.
 *
 * On success *ret takes a new tree (cJSON_Delete() it) and 0 is returned. Errors leave *ret
 * untouched: -EINVAL (malformed; err has line, column and reason), -E2BIG (a limit is exceeded;
 * err says which), -ENOMEM.
 */
int json_parse(const char *buf, size_t len, const struct codec_limits *lim, cJSON **ret,
               struct codec_error *err);

/*
 * Appends v as compact JSON (cJSON_PrintUnformatted layout: no whitespace) to out. Numbers that
 * are integral and within +-2^53 print as plain integers; others print in the shortest of %.15g,
 * %.16g, %.17g that reads back to the same double; non-finite numbers print as null, as cJSON
 * does. Keys print in tree order. Returns 0; out grows through strbuf, which aborts on OOM, so
 * -ENOMEM is never returned today but callers should still check r < 0.
 */
int json_print(const cJSON *v, struct strbuf *out);

/*
 * Like json_print() but indented the way kubectl -o json prints (Go's json.MarshalIndent with a
 * four-space indent: one member per line, "key": value, empty containers as {} and []). No
 * trailing newline.
 */
int json_print_pretty(const cJSON *v, struct strbuf *out);

/*
 * Finds the member `key` of the JSON object in buf[0..len) without parsing it into a tree:
 * *ret_start and *ret_end (exclusive) receive the offsets of its value. Meant for bytes this
 * program printed (json_print()); it checks structure only as far as it walks (top-level
 * members up to the one found), not string or number contents, and compares keys byte for
 * byte (a key written with escapes does not match). Returns 0, -ENOENT when the object has no
 * such member, -EINVAL when buf is not an object or is malformed where walked.
 */
int json_member_span(const char *buf, size_t len, const char *key, size_t *ret_start,
                     size_t *ret_end);

/* One member of a JSON object: the key's raw bytes (between the quotes, escapes as written) and
 * the offsets of its value, end exclusive. */
struct json_member {
    const char *key;
    size_t key_len;
    size_t start, end;
};

/*
 * Walks the members of the JSON object in buf[0..len) in order, with the same (structural only)
 * checks as json_member_span(): start with *pos = 0; each call fills *ret and advances *pos.
 * Returns 0, -ENOENT after the last member, -EINVAL when buf is not an object or is malformed
 * where walked.
 */
int json_member_next(const char *buf, size_t len, size_t *pos, struct json_member *ret);

/* json_member_next() up to the value: ret->start and *pos are where the value begins, ret->end
 * is 0. The caller reads the value itself and sets *pos to the offset after it (a value it
 * has to read whole anyway is then walked once). */
int json_member_key(const char *buf, size_t len, size_t *pos, struct json_member *ret);

/* The offset after the JSON value that starts at buf[start], with the same structural checks
 * (a scalar runs to the next delimiter), or 0 when it is cut short or malformed there. */
size_t json_value_end(const char *buf, size_t len, size_t start);

/*
 * Parses a YAML stream of documents separated by "---" (JSON is valid YAML, so JSON input works
 * too) into one cJSON tree per document. lim NULL means codec_default_limits; err may be NULL.
 *
 * Documents whose content is null (empty, comment-only, a trailing "---", or a plain "null"/"~")
 * are skipped, as kubectl's resource builder does.
 *
 * Scalar typing follows sigs.k8s.io/yaml (go-yaml v2 resolve.go, YAML 1.1 rules):
 *  - plain y/Y/yes/Yes/YES/true/True/TRUE/on/On/ON are true; n/N/no/No/NO/false/False/FALSE/
 *    off/Off/OFF are false (yes, "y" and "on" too: that is what kubectl does);
 *  - plain ""/~/null/Null/NULL are null;
 *  - plain integers after removing "_": decimal, 0x hex, 0o or leading-0 octal ("0755" is 493),
 *    0b binary, with optional sign; then floats matching [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)
 *    ([eE][-+]?[0-9]+)? (so "08" is 8 and "1e3" is 1000); numbers are doubles, so integers
 *    beyond 2^53 lose precision; past uint64 only decimal digits still make a number, hex stays
 *    a string (as in kubectl 1.32); texts over 127 characters are never numbers;
 *  - .inf/.nan and their spellings are an error (JSON cannot hold them);
 *  - everything else, and every quoted or block scalar, is a string (timestamps stay strings);
 *  - the tags !!str, !!int, !!float, !!bool, !!null convert or fail as go-yaml does (!!int "5"
 *    is 5, !!int abc is an error); !!timestamp keeps the text if it starts like a date
 *    (NNNN-); !!binary is refused; other tags are ignored (scalars with unknown tags stay
 *    strings, tags on collections change nothing).
 * Mapping keys must be scalars and become strings: integers in decimal ("0x10: a" has key "16"),
 * floats in Go's shortest float32 form, booleans as "true"/"false" (so a plain "on:" key is
 * "true"), strings as they are; null and over-int64 keys are an error, as in sigs.k8s.io/yaml.
 * Duplicate keys in one mapping (compared after this conversion) are an error, as
 * sigs.k8s.io/yaml's strict mode reports them.
 * Anchors and aliases are resolved; an alias counts its full expanded size against max_nodes and
 * its expanded depth against max_depth, so "billion laughs" inputs fail fast with -E2BIG. Merge
 * keys ("<<: *base" or "<<: [*a, *b]") copy the keys that the mapping does not set itself, earlier
 * sources winning, per the YAML merge-key spec (go-yaml v2's strict mode instead errors when a
 * merged key is overridden, which makes merges useless).
 * Input that is not valid UTF-8 or holds characters YAML forbids (NUL and other control
 * characters but tab/LF/CR/NEL, U+FFFE, U+FFFF) is an error, and so are strings that decode to
 * NUL ("\0") and block scalars whose content is not indented deeper than the line holding their
 * | or > header (rare valid YAML that libfyaml 0.7.12 misreads). CR LF and CR line breaks are
 * fine.
 *
 * On success *ret_docs takes an array of *ret_n trees (NULL when 0; free with
 * codec_docs_free()) and 0 is returned. Errors leave the outputs untouched: -EINVAL with
 * err line/column/msg (libfyaml's diagnostics are captured, never printed), -E2BIG, -ENOMEM.
 */
int yaml_parse_stream(const char *buf, size_t len, const struct codec_limits *lim,
                      cJSON ***ret_docs, size_t *ret_n, struct codec_error *err);

/* Frees what yaml_parse_stream() returned; accepts NULL. */
void codec_docs_free(cJSON **docs, size_t n);

/*
 * Appends doc as one block-style YAML document (no "---"), the way kubectl -o yaml writes it:
 * 2-space indent, sequences under a key written "- " at the key's indentation, mappings inside
 * sequences starting on the "- " line, empty containers as {} and [], keys in tree order.
 * Strings are quoted only when needed to read back as the same string: double quotes when they
 * would resolve to another type ("true", "123", "1.5", "null", "") or need escapes, single quotes
 * when they clash with YAML syntax (": ", " #", leading indicators or spaces); multi-line strings
 * become literal blocks ("|", "|-", "|+") when that is exact, else double-quoted. Numbers print as
 * json_print() does. Output parses back with yaml_parse_stream() to an equal tree (given unique
 * keys, which json_parse() and yaml_parse_stream() guarantee), except that a null document is
 * skipped there. Invalid UTF-8 in strings is written as U+FFFD. Returns 0;
 * -ENOMEM is reserved as for json_print().
 */
int yaml_emit(const cJSON *doc, struct strbuf *out);

/*
 * Appends the whole file at path (standard input for "-") to out, reading at most max_bytes.
 * Returns 0, -E2BIG if the file is longer than max_bytes, or -errno from open/read (-ENOENT,
 * -EISDIR, ...). On error out is left as it was.
 */
int codec_read_file(const char *path, size_t max_bytes, struct strbuf *out);

#endif
