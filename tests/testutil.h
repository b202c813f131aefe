/*
 * Helpers shared by the cmocka unit tests of api and slo (tests/api/test_*.c, tests/slo/test_*.c):
 * parsing literal JSON or failing, comparing a tree with expected JSON text, printing a
 * field_errors list in a failure message, and the inputs several files build (ConfigMap data, a
 * Node, the shipped slo-controller-config example). They live here once so that every test file
 * reports failures the same way and a fix (such as freeing what a failure message printed)
 * reaches them all.
 *
 * Include after <cmocka.h> (which needs <setjmp.h>, <stdarg.h> and <stddef.h> before it). Every
 * helper is static inline, so a test pays nothing for the ones it does not use. They fail through
 * cmocka, which longjmps out of the running test: call them only from inside a test, and note
 * that on failure they free only what they allocated themselves.
 */
#ifndef KOORD_TESTS_TESTUTIL_H
#define KOORD_TESTS_TESTUTIL_H

#ifndef cmocka_unit_test
#error "include <cmocka.h> before testutil.h"
#endif

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "api/api.h"
#include "api/field.h"
#include "base/strbuf.h"
#include "codec/codec.h"

/* The tree of the JSON text json (caller frees with cJSON_Delete()); fails the test if it does
 * not parse, so a typo in a test's own input never passes as a NULL. */
static inline cJSON *J(const char *json)
{
    cJSON *v = cJSON_Parse(json);
    if (!v)
        fail_msg("bad test JSON: %s", json);
    return v;
}

/*
 * Asserts that got (NULL allowed: it never matches) equals the JSON text want, with object keys
 * compared case-sensitively and in any order. On failure prints both, naming line, and frees the
 * printed tree and the parsed want before failing.
 */
static inline void assert_json_eq_at(const cJSON *got, const char *want, int line)
{
    cJSON *w = J(want);
    bool eq = cJSON_Compare(got, w, true);
    char *g;

    cJSON_Delete(w);
    if (eq)
        return;
    g = got ? cJSON_PrintUnformatted(got) : NULL;
    print_error("ERROR: line %d: JSON differs\n got: %s\nwant: %s\n", line, g ? g : "(null)", want);
    cJSON_free(g);
    fail();
}
#define assert_json_eq(got, want) assert_json_eq_at((got), (want), __LINE__)

/* Appends every entry of e to out, one a line, as kube-apiserver renders it plus its field and
 * type, for failure messages. */
static inline void dump_errors(const struct field_errors *e, struct strbuf *out)
{
    for (size_t i = 0; i < e->n; i++) {
        strbuf_addstr(out, "\n  ");
        field_error_format(&e->v[i], out);
        strbuf_addf(out, "  [field=%s type=%d]", e->v[i].field, (int)e->v[i].type);
    }
}

/* Fails the test with the printf-style message fmt followed by dump_errors() of e; frees the
 * message before failing. Does not return. */
static inline void fail_with_errors(const struct field_errors *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline void fail_with_errors(const struct field_errors *e, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;

    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    dump_errors(e, &sb);
    print_error("ERROR: %s\n", sb.buf);
    strbuf_release(&sb);
    fail();
}

/* Whether fe renders exactly as want (field_error_format()). */
static inline bool renders_as(const struct field_error *fe, const char *want)
{
    struct strbuf sb = STRBUF_INIT;
    bool eq;

    field_error_format(fe, &sb);
    eq = !strcmp(sb.buf, want);
    strbuf_release(&sb);
    return eq;
}

/* The registered kind apiVersion av, kind k; fails the test if there is none. */
static inline const struct api_kind *kind(const char *av, const char *k)
{
    const struct api_kind *r = api_kind_find(av, k);
    assert_non_null(r);
    return r;
}

/* A ConfigMap data object from key, value, key, value, ..., NULL (caller frees). */
static inline cJSON *data_of(const char *key, ...) __attribute__((sentinel));
static inline cJSON *data_of(const char *key, ...)
{
    cJSON *d = cJSON_CreateObject();
    va_list ap;

    va_start(ap, key);
    for (const char *k = key; k; k = va_arg(ap, const char *))
        cJSON_AddStringToObject(d, k, va_arg(ap, const char *));
    va_end(ap);
    return d;
}

/* A Node named node-1 with the given labels and annotations (JSON objects as text, or NULL);
 * caller frees. */
static inline cJSON *mknode(const char *labels, const char *annotations)
{
    cJSON *n = J("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-1\"}}");
    cJSON *m = cJSON_GetObjectItemCaseSensitive(n, "metadata");

    if (labels)
        cJSON_AddItemToObject(m, "labels", J(labels));
    if (annotations)
        cJSON_AddItemToObject(m, "annotations", J(annotations));
    return n;
}

/* The data object of examples/slo-controller-config.yaml, the seed-002 template (caller frees);
 * fails the test unless the file reads and parses as one document with a data object. */
static inline cJSON *example_config_data(void)
{
    struct strbuf sb = STRBUF_INIT;
    struct codec_error err = {0};
    cJSON **docs = NULL, *data;
    size_t n = 0;
    int r;

    r = codec_read_file(KOORD_SOURCE_DIR "/examples/slo-controller-config.yaml", 1 << 20, &sb);
    if (r != 0)
        fail_msg("cannot read the template: %d", r);
    r = yaml_parse_stream(sb.buf, sb.len, NULL, &docs, &n, &err);
    if (r != 0)
        fail_msg("template: %d:%d: %s", err.line, err.column, err.msg);
    assert_int_equal(n, 1);
    data = cJSON_DetachItemFromObjectCaseSensitive(docs[0], "data");
    assert_true(cJSON_IsObject(data));
    codec_docs_free(docs, n);
    strbuf_release(&sb);
    return data;
}

#endif
