/*
 * Tests for src/codec/patch.c: the RFC 6902 Appendix A and RFC 7386 examples as tables with the
 * expected documents written out by hand, JSON pointer escaping and index rules, every error
 * with its message, the all-or-nothing guarantee, the size/depth/operation bounds, allocation
 * failure at every step, and merge_patch_create() round trips.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "codec/patch.h"

static int setup(void **state)
{
    (void)state;
    codec_init();
    return 0;
}

static cJSON *parse(const char *in)
{
    struct codec_error err;
    cJSON *v = NULL;
    int r;

    r = json_parse(in, strlen(in), NULL, &v, &err);
    if (r != 0)
        fail_msg("json_parse(%s) = %d: %s", in, r, err.msg);
    return v;
}

/* Compact print of v (caller frees). */
static char *print(const cJSON *v)
{
    struct strbuf sb = STRBUF_INIT;

    assert_int_equal(json_print(v, &sb), 0);
    return strbuf_detach(&sb, NULL);
}

static void assert_json(const cJSON *v, const char *want)
{
    char *got = print(v);

    if (strcmp(got, want) != 0)
        fail_msg("got %s, want %s", got, want);
    free(got);
}

/* Applies patch to doc with the apiserver's limit; returns the result code, and in *ret_out the
 * compact result (or the unchanged document on failure; caller frees). */
static int run_json_patch(const char *doc, const char *patch, char **ret_out,
                          struct codec_error *err)
{
    cJSON *d = parse(doc), *p = parse(patch), *before = d;
    int r;

    r = json_patch_apply(&d, p, 10000, err);
    if (r < 0)
        assert_ptr_equal(d, before);
    *ret_out = print(d);
    cJSON_Delete(d);
    cJSON_Delete(p);
    return r;
}

/* ---- RFC 6902 Appendix A ---- */

static void test_rfc6902_appendix_a(void **state)
{
    static const struct {
        const char *name, *doc, *patch;
        int r;
        const char *want; /* result, or the error message */
    } cases[] = {
        {"A.1", "{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\"}]", 0,
         "{\"foo\":\"bar\",\"baz\":\"qux\"}"},
        {"A.2", "{\"foo\":[\"bar\",\"baz\"]}",
         "[{\"op\":\"add\",\"path\":\"/foo/1\",\"value\":\"qux\"}]", 0,
         "{\"foo\":[\"bar\",\"qux\",\"baz\"]}"},
        {"A.3", "{\"baz\":\"qux\",\"foo\":\"bar\"}", "[{\"op\":\"remove\",\"path\":\"/baz\"}]", 0,
         "{\"foo\":\"bar\"}"},
        {"A.4", "{\"foo\":[\"bar\",\"qux\",\"baz\"]}", "[{\"op\":\"remove\",\"path\":\"/foo/1\"}]",
         0, "{\"foo\":[\"bar\",\"baz\"]}"},
        {"A.5", "{\"baz\":\"qux\",\"foo\":\"bar\"}",
         "[{\"op\":\"replace\",\"path\":\"/baz\",\"value\":\"boo\"}]", 0,
         "{\"baz\":\"boo\",\"foo\":\"bar\"}"},
        {"A.6", "{\"foo\":{\"bar\":\"baz\",\"waldo\":\"fred\"},\"qux\":{\"corge\":\"grault\"}}",
         "[{\"op\":\"move\",\"from\":\"/foo/waldo\",\"path\":\"/qux/thud\"}]", 0,
         "{\"foo\":{\"bar\":\"baz\"},\"qux\":{\"corge\":\"grault\",\"thud\":\"fred\"}}"},
        {"A.7", "{\"foo\":[\"all\",\"grass\",\"cows\",\"eat\"]}",
         "[{\"op\":\"move\",\"from\":\"/foo/1\",\"path\":\"/foo/3\"}]", 0,
         "{\"foo\":[\"all\",\"cows\",\"eat\",\"grass\"]}"},
        {"A.8", "{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}",
         "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"qux\"},"
         "{\"op\":\"test\",\"path\":\"/foo/1\",\"value\":2}]",
         0, "{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}"},
        {"A.9", "{\"baz\":\"qux\"}", "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"bar\"}]",
         -ECANCELED, "operation 0 (test): testing value \"/baz\" failed"},
        {"A.10", "{\"foo\":\"bar\"}",
         "[{\"op\":\"add\",\"path\":\"/child\",\"value\":{\"grandchild\":{}}}]", 0,
         "{\"foo\":\"bar\",\"child\":{\"grandchild\":{}}}"},
        {"A.11", "{\"foo\":\"bar\"}",
         "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\",\"xyz\":123}]", 0,
         "{\"foo\":\"bar\",\"baz\":\"qux\"}"},
        {"A.12", "{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/baz/bat\",\"value\":\"qux\"}]",
         -EINVAL, "operation 0 (add): path \"/baz/bat\" does not exist (no \"/baz\")"},
        /* A.13 (duplicate "op") cannot get past json_parse(); see test_duplicate_member. */
        {"A.14", "{\"/\":9,\"~1\":10}", "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":10}]", 0,
         "{\"/\":9,\"~1\":10}"},
        {"A.15", "{\"/\":9,\"~1\":10}", "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":\"10\"}]",
         -ECANCELED, "operation 0 (test): testing value \"/~01\" failed"},
        {"A.16", "{\"foo\":[\"bar\"]}",
         "[{\"op\":\"add\",\"path\":\"/foo/-\",\"value\":[\"abc\",\"def\"]}]", 0,
         "{\"foo\":[\"bar\",[\"abc\",\"def\"]]}"},
    };
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        struct codec_error err = {0};
        char *out;
        int r = run_json_patch(cases[i].doc, cases[i].patch, &out, &err);

        if (r != cases[i].r)
            fail_msg("%s: r = %d, want %d (%s)", cases[i].name, r, cases[i].r, err.msg);
        if (r == 0 && strcmp(out, cases[i].want) != 0)
            fail_msg("%s: got %s, want %s", cases[i].name, out, cases[i].want);
        if (r < 0) {
            if (strcmp(err.msg, cases[i].want) != 0)
                fail_msg("%s: msg %s, want %s", cases[i].name, err.msg, cases[i].want);
            if (strcmp(out, cases[i].doc) != 0)
                fail_msg("%s: document changed to %s", cases[i].name, out);
        }
        free(out);
    }
}

/* More successful patches: root, escapes, arrays, deep copies, JSON equality. */
static void test_json_patch_ok(void **state)
{
    static const struct {
        const char *doc, *patch, *want;
    } cases[] = {
        /* The root pointer. */
        {"{\"a\":1}", "[{\"op\":\"add\",\"path\":\"\",\"value\":[1]}]", "[1]"},
        {"{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"\",\"value\":\"x\"}]", "\"x\""},
        {"{\"a\":{\"b\":1}}", "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"\"}]", "{\"b\":1}"},
        {"{\"a\":1}", "[{\"op\":\"copy\",\"from\":\"\",\"path\":\"/b\"}]",
         "{\"a\":1,\"b\":{\"a\":1}}"},
        {"[1]", "[{\"op\":\"test\",\"path\":\"\",\"value\":[1.0]}]", "[1]"},
        /* Escapes: ~1 is "/", ~0 is "~", "/" alone is the empty key. */
        {"{}", "[{\"op\":\"add\",\"path\":\"/a~1b\",\"value\":1}]", "{\"a/b\":1}"},
        {"{}", "[{\"op\":\"add\",\"path\":\"/m~0n\",\"value\":1}]", "{\"m~n\":1}"},
        {"{}", "[{\"op\":\"add\",\"path\":\"/~01\",\"value\":1}]", "{\"~1\":1}"},
        {"{}", "[{\"op\":\"add\",\"path\":\"/\",\"value\":1}]", "{\"\":1}"},
        {"{\"\":{\"\":2}}", "[{\"op\":\"replace\",\"path\":\"//\",\"value\":3}]",
         "{\"\":{\"\":3}}"},
        {"{\"a/b\":1,\"c~d\":2}",
         "[{\"op\":\"remove\",\"path\":\"/a~1b\"},{\"op\":\"remove\",\"path\":\"/c~0d\"}]", "{}"},
        /* add replaces an existing member in place, inserts into arrays. */
        {"{\"a\":1,\"b\":2}", "[{\"op\":\"add\",\"path\":\"/a\",\"value\":[3]}]",
         "{\"a\":[3],\"b\":2}"},
        {"[1,2]", "[{\"op\":\"add\",\"path\":\"/0\",\"value\":0}]", "[0,1,2]"},
        {"[1,2]", "[{\"op\":\"add\",\"path\":\"/2\",\"value\":3}]", "[1,2,3]"},
        {"[]",
         "[{\"op\":\"add\",\"path\":\"/-\",\"value\":1},{\"op\":\"add\",\"path\":\"/-\","
         "\"value\":2}]",
         "[1,2]"},
        {"[1,2,3]", "[{\"op\":\"remove\",\"path\":\"/2\"},{\"op\":\"remove\",\"path\":\"/0\"}]",
         "[2]"},
        {"[1,2,3]", "[{\"op\":\"replace\",\"path\":\"/1\",\"value\":{\"x\":null}}]",
         "[1,{\"x\":null},3]"},
        /* Object keys that look like indices are just keys. */
        {"{\"01\":1}", "[{\"op\":\"remove\",\"path\":\"/01\"}]", "{}"},
        /* move: from array to object, object to array, onto itself. */
        {"{\"a\":[1,2],\"b\":{}}", "[{\"op\":\"move\",\"from\":\"/a/0\",\"path\":\"/b/x\"}]",
         "{\"a\":[2],\"b\":{\"x\":1}}"},
        {"{\"a\":[1],\"b\":{\"x\":2}}", "[{\"op\":\"move\",\"from\":\"/b/x\",\"path\":\"/a/0\"}]",
         "{\"a\":[2,1],\"b\":{}}"},
        {"{\"a\":{\"b\":1}}", "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a\"}]",
         "{\"a\":{\"b\":1}}"},
        /* "from" /a is not a prefix of /ab. */
        {"{\"a\":1,\"ab\":2}", "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/ab\"}]",
         "{\"ab\":1}"},
        /* copy is deep: changing the copy leaves the source alone. */
        {"{\"a\":{\"x\":[1]}}",
         "[{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"/b\"},"
         "{\"op\":\"add\",\"path\":\"/b/x/-\",\"value\":2},"
         "{\"op\":\"replace\",\"path\":\"/a/x/0\",\"value\":0}]",
         "{\"a\":{\"x\":[0]},\"b\":{\"x\":[1,2]}}"},
        {"[1,[2]]", "[{\"op\":\"copy\",\"from\":\"/1\",\"path\":\"/0\"}]", "[[2],1,[2]]"},
        /* Copy and move onto an ancestor of "from". */
        {"{\"a\":{\"b\":[1]}}", "[{\"op\":\"copy\",\"from\":\"/a/b\",\"path\":\"/a\"}]",
         "{\"a\":[1]}"},
        {"{\"a\":{\"b\":[1]}}", "[{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"\"}]", "{\"b\":[1]}"},
        {"{\"a\":{\"b\":1}}", "[{\"op\":\"move\",\"from\":\"/a/b\",\"path\":\"/a\"}]", "{\"a\":1}"},
        {"[[1,2]]", "[{\"op\":\"copy\",\"from\":\"/0/1\",\"path\":\"\"}]", "2"},
        /* test: objects unordered, numbers by value, nested. */
        {"{\"a\":{\"x\":1,\"y\":[true,null]}}",
         "[{\"op\":\"test\",\"path\":\"/a\",\"value\":{\"y\":[true,null],\"x\":1.0}}]",
         "{\"a\":{\"x\":1,\"y\":[true,null]}}"},
        {"{\"a\":1e2}", "[{\"op\":\"test\",\"path\":\"/a\",\"value\":100}]", "{\"a\":100}"},
        {"{\"a\":null}", "[{\"op\":\"test\",\"path\":\"/a\",\"value\":null}]", "{\"a\":null}"},
        /* Empty patch. */
        {"{\"a\":1}", "[]", "{\"a\":1}"},
    };
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        struct codec_error err = {0};
        char *out;
        int r = run_json_patch(cases[i].doc, cases[i].patch, &out, &err);

        if (r != 0)
            fail_msg("case %zu: r = %d: %s", i, r, err.msg);
        if (strcmp(out, cases[i].want) != 0)
            fail_msg("case %zu: got %s, want %s", i, out, cases[i].want);
        free(out);
    }
}

static void test_json_patch_errors(void **state)
{
    static const char doc[] = "{\"a\":{\"b\":1},\"arr\":[1,2,3],\"s\":\"x\",\"n\":1}";
    static const struct {
        const char *patch;
        int r;
        const char *msg;
    } cases[] = {
        {"{\"op\":\"add\"}", -EINVAL, "a JSON patch must be an array of operations"},
        {"[1]", -EINVAL, "operation 0: not an object"},
        {"[{\"op\":\"test\",\"path\":\"/n\",\"value\":1},[]]", -EINVAL,
         "operation 1: not an object"},
        {"[{\"path\":\"/a\"}]", -EINVAL, "operation 0: missing \"op\""},
        {"[{\"op\":1,\"path\":\"/a\"}]", -EINVAL, "operation 0: \"op\" is not a string"},
        {"[{\"op\":\"frob\",\"path\":\"/a\"}]", -EINVAL, "operation 0: unknown op \"frob\""},
        {"[{\"op\":\"Add\",\"path\":\"/a\",\"value\":1}]", -EINVAL,
         "operation 0: unknown op \"Add\""},
        {"[{\"op\":\"remove\"}]", -EINVAL, "operation 0 (remove): missing \"path\""},
        {"[{\"op\":\"remove\",\"path\":null}]", -EINVAL,
         "operation 0 (remove): \"path\" is not a string"},
        {"[{\"op\":\"remove\",\"path\":\"a\"}]", -EINVAL,
         "operation 0 (remove): invalid JSON pointer \"a\" in \"path\""},
        {"[{\"op\":\"remove\",\"path\":\"/a~2\"}]", -EINVAL,
         "operation 0 (remove): invalid JSON pointer \"/a~2\" in \"path\""},
        {"[{\"op\":\"remove\",\"path\":\"/a~\"}]", -EINVAL,
         "operation 0 (remove): invalid JSON pointer \"/a~\" in \"path\""},
        {"[{\"op\":\"move\",\"path\":\"/x\"}]", -EINVAL, "operation 0 (move): missing \"from\""},
        {"[{\"op\":\"copy\",\"path\":\"/x\",\"from\":\"n\"}]", -EINVAL,
         "operation 0 (copy): invalid JSON pointer \"n\" in \"from\""},
        {"[{\"op\":\"add\",\"path\":\"/x\"}]", -EINVAL, "operation 0 (add): missing \"value\""},
        {"[{\"op\":\"replace\",\"path\":\"/n\"}]", -EINVAL,
         "operation 0 (replace): missing \"value\""},
        {"[{\"op\":\"test\",\"path\":\"/n\"}]", -EINVAL, "operation 0 (test): missing \"value\""},
        {"[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a/b\"}]", -EINVAL,
         "operation 0 (move): \"from\" \"/a\" is a prefix of \"path\" \"/a/b\""},
        {"[{\"op\":\"move\",\"from\":\"\",\"path\":\"/x\"}]", -EINVAL,
         "operation 0 (move): \"from\" \"\" is a prefix of \"path\" \"/x\""},
        {"[{\"op\":\"remove\",\"path\":\"/x\"}]", -EINVAL,
         "operation 0 (remove): path \"/x\" does not exist"},
        {"[{\"op\":\"replace\",\"path\":\"/a/c\",\"value\":1}]", -EINVAL,
         "operation 0 (replace): path \"/a/c\" does not exist"},
        {"[{\"op\":\"test\",\"path\":\"/zz\",\"value\":null}]", -EINVAL,
         "operation 0 (test): path \"/zz\" does not exist"},
        {"[{\"op\":\"add\",\"path\":\"/x/y/z\",\"value\":1}]", -EINVAL,
         "operation 0 (add): path \"/x/y/z\" does not exist (no \"/x\")"},
        {"[{\"op\":\"add\",\"path\":\"/s/x\",\"value\":1}]", -EINVAL,
         "operation 0 (add): path \"/s/x\" does not exist (parent is not an object or array)"},
        {"[{\"op\":\"remove\",\"path\":\"/s/x\"}]", -EINVAL,
         "operation 0 (remove): path \"/s/x\" does not exist"},
        {"[{\"op\":\"remove\",\"path\":\"/arr/3\"}]", -EINVAL,
         "operation 0 (remove): path \"/arr/3\": array index out of range (size 3)"},
        {"[{\"op\":\"add\",\"path\":\"/arr/4\",\"value\":1}]", -EINVAL,
         "operation 0 (add): path \"/arr/4\": array index out of range (size 3)"},
        {"[{\"op\":\"add\",\"path\":\"/arr/99999999999999999999999\",\"value\":1}]", -EINVAL,
         "operation 0 (add): path \"/arr/99999999999999999999999\": array index out of range "
         "(size 3)"},
        {"[{\"op\":\"remove\",\"path\":\"/arr/01\"}]", -EINVAL,
         "operation 0 (remove): path \"/arr/01\": invalid array index"},
        {"[{\"op\":\"add\",\"path\":\"/arr/01\",\"value\":1}]", -EINVAL,
         "operation 0 (add): path \"/arr/01\": invalid array index"},
        {"[{\"op\":\"remove\",\"path\":\"/arr/-1\"}]", -EINVAL,
         "operation 0 (remove): path \"/arr/-1\": invalid array index"},
        {"[{\"op\":\"remove\",\"path\":\"/arr/+1\"}]", -EINVAL,
         "operation 0 (remove): path \"/arr/+1\": invalid array index"},
        {"[{\"op\":\"remove\",\"path\":\"/arr/\"}]", -EINVAL,
         "operation 0 (remove): path \"/arr/\": invalid array index"},
        {"[{\"op\":\"remove\",\"path\":\"/arr/-\"}]", -EINVAL,
         "operation 0 (remove): path \"/arr/-\": \"-\" (past the end) can only be used by add"},
        {"[{\"op\":\"test\",\"path\":\"/arr/1/x\",\"value\":1}]", -EINVAL,
         "operation 0 (test): path \"/arr/1/x\" does not exist"},
        {"[{\"op\":\"remove\",\"path\":\"/arr/-/x\"}]", -EINVAL,
         "operation 0 (remove): path \"/arr/-/x\" does not exist (no \"/arr/-\")"},
        {"[{\"op\":\"remove\",\"path\":\"\"}]", -EINVAL,
         "operation 0 (remove): path \"\": the document root cannot be removed"},
        {"[{\"op\":\"move\",\"from\":\"/zz\",\"path\":\"/y\"}]", -EINVAL,
         "operation 0 (move): from \"/zz\" does not exist"},
        {"[{\"op\":\"move\",\"from\":\"/zz\",\"path\":\"/zz\"}]", -EINVAL,
         "operation 0 (move): from \"/zz\" does not exist"},
        {"[{\"op\":\"move\",\"from\":\"/n\",\"path\":\"/q/r\"}]", -EINVAL,
         "operation 0 (move): path \"/q/r\" does not exist (no \"/q\")"},
        {"[{\"op\":\"copy\",\"from\":\"/arr/3\",\"path\":\"/y\"}]", -EINVAL,
         "operation 0 (copy): from \"/arr/3\": array index out of range (size 3)"},
        /* The failing operation is named after earlier ones succeeded. */
        {"[{\"op\":\"add\",\"path\":\"/x\",\"value\":1},{\"op\":\"remove\",\"path\":\"/x\"},"
         "{\"op\":\"remove\",\"path\":\"/x\"}]",
         -EINVAL, "operation 2 (remove): path \"/x\" does not exist"},
        /* test: RFC equality, not Go's quirks. */
        {"[{\"op\":\"test\",\"path\":\"/n\",\"value\":\"1\"}]", -ECANCELED,
         "operation 0 (test): testing value \"/n\" failed"},
        {"[{\"op\":\"test\",\"path\":\"/n\",\"value\":true}]", -ECANCELED,
         "operation 0 (test): testing value \"/n\" failed"},
        {"[{\"op\":\"test\",\"path\":\"/arr\",\"value\":[1,2]}]", -ECANCELED,
         "operation 0 (test): testing value \"/arr\" failed"},
        {"[{\"op\":\"test\",\"path\":\"/arr\",\"value\":[1,3,2]}]", -ECANCELED,
         "operation 0 (test): testing value \"/arr\" failed"},
        {"[{\"op\":\"test\",\"path\":\"/a\",\"value\":{\"b\":1,\"c\":2}}]", -ECANCELED,
         "operation 0 (test): testing value \"/a\" failed"},
        {"[{\"op\":\"test\",\"path\":\"/a\",\"value\":{\"c\":1}}]", -ECANCELED,
         "operation 0 (test): testing value \"/a\" failed"},
        {"[{\"op\":\"test\",\"path\":\"/a\",\"value\":{}}]", -ECANCELED,
         "operation 0 (test): testing value \"/a\" failed"},
        {"[{\"op\":\"test\",\"path\":\"/s\",\"value\":\"X\"}]", -ECANCELED,
         "operation 0 (test): testing value \"/s\" failed"},
        {"[{\"op\":\"add\",\"path\":\"/n\",\"value\":2},{\"op\":\"test\",\"path\":\"/n\","
         "\"value\":1}]",
         -ECANCELED, "operation 1 (test): testing value \"/n\" failed"},
    };
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        struct codec_error err = {0};
        char *out;
        int r = run_json_patch(doc, cases[i].patch, &out, &err);

        if (r != cases[i].r)
            fail_msg("case %zu: r = %d, want %d (%s)", i, r, cases[i].r, err.msg);
        if (strcmp(err.msg, cases[i].msg) != 0)
            fail_msg("case %zu: msg '%s', want '%s'", i, err.msg, cases[i].msg);
        if (strcmp(out, doc) != 0)
            fail_msg("case %zu: document changed to %s", i, out);
        free(out);
    }
}

/* RFC 6902 A.13: a repeated member in an operation is an error. json_parse() refuses
 * duplicate keys, so build the tree with cJSON's own parser. */
static void test_duplicate_member(void **state)
{
    static const char patch[] = "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\","
                                "\"op\":\"remove\"}]";
    struct codec_error err = {0};
    cJSON *d = parse("{\"foo\":\"bar\"}"), *p = cJSON_Parse(patch), *before = d;

    (void)state;
    assert_non_null(p);
    assert_int_equal(json_patch_apply(&d, p, 10, &err), -EINVAL);
    assert_string_equal(err.msg, "operation 0: duplicate \"op\"");
    assert_ptr_equal(d, before);
    assert_json(d, "{\"foo\":\"bar\"}");
    cJSON_Delete(d);
    cJSON_Delete(p);
}

static void test_max_ops(void **state)
{
    static const char patch[] = "[{\"op\":\"test\",\"path\":\"\",\"value\":1},"
                                "{\"op\":\"test\",\"path\":\"\",\"value\":1},"
                                "{\"op\":\"test\",\"path\":\"\",\"value\":1}]";
    struct codec_error err = {0};
    cJSON *d = parse("1"), *p = parse(patch);

    (void)state;
    assert_int_equal(json_patch_apply(&d, p, 2, &err), -E2BIG);
    assert_string_equal(err.msg, "the JSON patch has 3 operations, the limit is 2");
    assert_int_equal(json_patch_apply(&d, p, 3, &err), 0);
    assert_json(d, "1");
    cJSON_Delete(d);
    cJSON_Delete(p);
}

/* n nested arrays around 0 (depth n), built without json_parse()'s depth limit. */
static cJSON *nested_array(int n)
{
    cJSON *v = cJSON_CreateNumber(0), *a;
    int i;

    for (i = 0; i < n; i++) {
        a = cJSON_CreateArray();
        assert_non_null(a);
        assert_true(cJSON_AddItemToArray(a, v));
        v = a;
    }
    return v;
}

/* Adds value at path to doc; returns the result. */
static int add_value(cJSON **doc, const char *path, cJSON *value, struct codec_error *err)
{
    cJSON *p = cJSON_CreateArray(), *op = cJSON_CreateObject();
    int r;

    assert_true(cJSON_AddItemToArray(p, op));
    assert_non_null(cJSON_AddStringToObject(op, "op", "add"));
    assert_non_null(cJSON_AddStringToObject(op, "path", path));
    assert_true(cJSON_AddItemToObject(op, "value", value));
    r = json_patch_apply(doc, p, 10, err);
    cJSON_Delete(p);
    return r;
}

static void test_depth_limit(void **state)
{
    struct codec_error err = {0};
    cJSON *d = parse("{\"a\":{}}"), *before = d;

    (void)state;
    /* {"a":{"b":<PATCH_MAX_DEPTH - 1 arrays>}} nests PATCH_MAX_DEPTH + 1 deep; one less is fine. */
    assert_int_equal(add_value(&d, "/a/b", nested_array(PATCH_MAX_DEPTH - 1), &err), -E2BIG);
    assert_string_equal(err.msg, "operation 0 (add): result would nest deeper than 100");
    assert_ptr_equal(d, before);
    assert_json(d, "{\"a\":{}}");
    assert_int_equal(add_value(&d, "/a/b", nested_array(PATCH_MAX_DEPTH - 2), &err), 0);

    /* Moving the deep value one level deeper is refused too. */
    {
        cJSON *p = parse("[{\"op\":\"add\",\"path\":\"/c\",\"value\":{}},"
                         "{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/c/d\"}]");

        assert_int_equal(json_patch_apply(&d, p, 10, &err), -E2BIG);
        assert_string_equal(err.msg, "operation 1 (move): result would nest deeper than 100");
        cJSON_Delete(p);
    }
    cJSON_Delete(d);

    /* A document already too deep is refused as a whole. */
    d = nested_array(PATCH_MAX_DEPTH + 1);
    {
        cJSON *p = parse("[]");

        assert_int_equal(json_patch_apply(&d, p, 10, &err), -E2BIG);
        assert_string_equal(err.msg, "the document exceeds 4194304 items or nests deeper than 100");
        cJSON_Delete(p);
    }
    cJSON_Delete(d);
}

/* "copy" doubling the document is stopped at codec_default_limits.max_nodes before the copy
 * is made: an array of 2^21 zeros is 2^21 + 1 items, copying it into itself would give
 * 2^22 + 2 > 4194304. */
static void test_node_limit(void **state)
{
    struct codec_error err = {0};
    cJSON *d = cJSON_CreateArray(), *before = d, *p;
    size_t i;

    (void)state;
    assert_int_equal(codec_default_limits.max_nodes, 4194304);
    for (i = 0; i < (1u << 21); i++)
        assert_true(cJSON_AddItemToArray(d, cJSON_CreateNumber(0)));
    /* "add" of a value as large as the document: "copy" would meet PATCH_MAX_COPY_BYTES */
    p = parse("[{\"op\":\"add\",\"path\":\"/-\",\"value\":0}]");
    cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetArrayItem(p, 0), "value",
                                           cJSON_Duplicate(d, true));
    assert_int_equal(json_patch_apply(&d, p, 10, &err), -E2BIG);
    assert_string_equal(err.msg, "operation 0 (add): result would exceed 4194304 items");
    assert_ptr_equal(d, before);
    assert_int_equal(cJSON_GetArraySize(d), 1 << 21);
    cJSON_Delete(p);
    cJSON_Delete(d);
}

/* Allocation failure at every step: -ENOMEM, nothing leaked (ASan/valgrind), doc unchanged. */
static void test_json_patch_oom(void **state)
{
    static const char doc[] = "{\"a\":{\"b\":[1,2,{\"c\":\"d\"}]},\"e\":\"f\"}";
    static const char patch[] = "[{\"op\":\"add\",\"path\":\"/x~1y\",\"value\":{\"k\":[1,\"s\"]}},"
                                "{\"op\":\"add\",\"path\":\"/a/b/1\",\"value\":\"ins\"},"
                                "{\"op\":\"replace\",\"path\":\"/e\",\"value\":[true]},"
                                "{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"/copy\"},"
                                "{\"op\":\"move\",\"from\":\"/copy/b/3\",\"path\":\"/moved\"},"
                                "{\"op\":\"remove\",\"path\":\"/a/b/0\"},"
                                "{\"op\":\"test\",\"path\":\"/moved\",\"value\":{\"c\":\"d\"}}]";
    static const char want[] =
        "{\"a\":{\"b\":[\"ins\",2,{\"c\":\"d\"}]},\"e\":[true],\"x/y\":{\"k\":[1,\"s\"]},"
        "\"copy\":{\"b\":[1,\"ins\",2]},\"moved\":{\"c\":\"d\"}}";
    cJSON *p = parse(patch);
    long n;

    (void)state;
    for (n = 1;; n++) {
        struct codec_error err = {0};
        cJSON *d = parse(doc), *before = d;
        int r, injected;

        alloc_fail_after(n);
        r = json_patch_apply(&d, p, 100, &err);
        injected = alloc_injected();
        alloc_fail_after(0);
        if (!injected) {
            assert_int_equal(r, 0);
            assert_json(d, want);
            cJSON_Delete(d);
            break;
        }
        if (r != -ENOMEM)
            fail_msg("n=%ld: r = %d (%s)", n, r, err.msg);
        assert_string_equal(err.msg + strlen(err.msg) - strlen("out of memory"), "out of memory");
        assert_ptr_equal(d, before);
        assert_json(d, doc);
        cJSON_Delete(d);
    }
    assert_true(n > 5);
    cJSON_Delete(p);
}

/* ---- RFC 7386 ---- */

static void test_rfc7386_examples(void **state)
{
    static const struct {
        const char *target, *patch, *want;
    } cases[] = {
        /* Section 3. */
        {"{\"title\":\"Goodbye!\",\"author\":{\"givenName\":\"John\",\"familyName\":\"Doe\"},"
         "\"tags\":[\"example\",\"sample\"],\"content\":\"This will be unchanged\"}",
         "{\"title\":\"Hello!\",\"phoneNumber\":\"+01-123-456-7890\","
         "\"author\":{\"familyName\":null},\"tags\":[\"example\"]}",
         "{\"title\":\"Hello!\",\"author\":{\"givenName\":\"John\"},\"tags\":[\"example\"],"
         "\"content\":\"This will be unchanged\",\"phoneNumber\":\"+01-123-456-7890\"}"},
        /* Appendix A. */
        {"{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}"},
        {"{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}"},
        {"{\"a\":\"b\"}", "{\"a\":null}", "{}"},
        {"{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}"},
        {"{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}"},
        {"{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}"},
        {"{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}", "{\"a\":{\"b\":\"d\"}}"},
        {"{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}"},
        {"[\"a\",\"b\"]", "[\"c\",\"d\"]", "[\"c\",\"d\"]"},
        {"{\"a\":\"b\"}", "[\"c\"]", "[\"c\"]"},
        {"{\"a\":\"foo\"}", "null", "null"},
        {"{\"a\":\"foo\"}", "\"bar\"", "\"bar\""},
        {"{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}"},
        {"[1,2]", "{\"a\":\"b\",\"c\":null}", "{\"a\":\"b\"}"},
        {"{}", "{\"a\":{\"bb\":{\"ccc\":null}}}", "{\"a\":{\"bb\":{}}}"},
        /* More: nulls inside arrays stay, a scalar member becomes an object, empty patch. */
        {"{}", "{\"a\":[null,{\"b\":null}]}", "{\"a\":[null,{\"b\":null}]}"},
        {"{\"a\":1,\"b\":2}", "{\"a\":{\"x\":null,\"y\":1}}", "{\"a\":{\"y\":1},\"b\":2}"},
        {"{\"a\":1}", "{}", "{\"a\":1}"},
        {"\"s\"", "{}", "{}"},
        {"{\"m\":{\"k\":1}}", "{\"m\":{\"k\":null},\"m2\":null}", "{\"m\":{}}"},
    };
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        struct codec_error err = {0};
        cJSON *d = parse(cases[i].target), *p = parse(cases[i].patch);
        char *out;
        int r;

        r = merge_patch_apply(&d, p, &err);
        if (r != 0)
            fail_msg("case %zu: r = %d: %s", i, r, err.msg);
        out = print(d);
        if (strcmp(out, cases[i].want) != 0)
            fail_msg("case %zu: got %s, want %s", i, out, cases[i].want);
        free(out);
        cJSON_Delete(d);
        cJSON_Delete(p);
    }
}

/* n nested objects {"a":{"a":...{}}} (depth n). */
static cJSON *nested_object(int n)
{
    cJSON *v = cJSON_CreateObject(), *o;
    int i;

    for (i = 1; i < n; i++) {
        o = cJSON_CreateObject();
        assert_non_null(o);
        assert_true(cJSON_AddItemToObject(o, "a", v));
        v = o;
    }
    return v;
}

static void test_merge_depth(void **state)
{
    struct codec_error err = {0};
    cJSON *d = parse("{\"x\":1}"), *before = d, *p, *b;

    (void)state;
    p = nested_object(PATCH_MAX_DEPTH + 1);
    assert_int_equal(merge_patch_apply(&d, p, &err), -E2BIG);
    assert_string_equal(err.msg, "merge patch nests objects deeper than 100");
    assert_ptr_equal(d, before);
    assert_json(d, "{\"x\":1}");
    assert_int_equal(merge_patch_create(p, p, &b), -E2BIG);
    cJSON_Delete(p);

    p = nested_object(PATCH_MAX_DEPTH);
    assert_int_equal(merge_patch_apply(&d, p, &err), 0);
    assert_int_equal(merge_patch_create(p, d, &b), 0);
    assert_json(b, "{\"x\":1}");
    cJSON_Delete(b);
    cJSON_Delete(p);
    cJSON_Delete(d);
}

/* A large target (hashed member index): deletes, replacements and additions. */
static void test_merge_large_object(void **state)
{
    struct strbuf doc = STRBUF_INIT, want = STRBUF_INIT;
    struct codec_error err = {0};
    cJSON *d, *p;
    int i;

    (void)state;
    strbuf_addch(&doc, '{');
    strbuf_addch(&want, '{');
    for (i = 0; i < 40; i++) {
        strbuf_addf(&doc, "%s\"k%d\":%d", i ? "," : "", i, i);
        if (i % 2 == 0)
            strbuf_addf(&want, "%s\"k%d\":%d", i ? "," : "", i, i == 10 ? -1 : i);
    }
    strbuf_addch(&doc, '}');
    strbuf_addstr(&want, ",\"new\":{\"z\":1}}");
    d = parse(doc.buf);
    /* Odd keys deleted, k10 replaced, "new" added with its nulls pruned, absent k99 ignored. */
    strbuf_reset(&doc);
    strbuf_addch(&doc, '{');
    for (i = 1; i < 40; i += 2)
        strbuf_addf(&doc, "\"k%d\":null,", i);
    strbuf_addstr(&doc, "\"k10\":-1,\"new\":{\"z\":1,\"y\":null},\"k99\":null}");
    p = parse(doc.buf);
    assert_int_equal(merge_patch_apply(&d, p, &err), 0);
    assert_json(d, want.buf);
    cJSON_Delete(d);
    cJSON_Delete(p);
    strbuf_release(&doc);
    strbuf_release(&want);
}

/* Fault injection for merge_patch_apply() (small and hashed objects) and merge_patch_create(). */
static void test_merge_oom(void **state)
{
    struct strbuf big = STRBUF_INIT, bigwant = STRBUF_INIT;
    int i, which;

    (void)state;
    strbuf_addstr(&big, "{\"o\":{");
    strbuf_addstr(&bigwant, "{\"o\":{");
    for (i = 0; i < 20; i++) {
        strbuf_addf(&big, "\"k%d\":[%d],", i, i);
        if (i == 4)
            strbuf_addstr(&bigwant, "\"k4\":\"x\",");
        else if (i != 3)
            strbuf_addf(&bigwant, "\"k%d\":[%d],", i, i);
    }
    strbuf_addstr(&big, "\"z\":{\"y\":1}},\"s\":\"t\"}");
    strbuf_addstr(&bigwant, "\"z\":{\"w\":{}},\"n\":{\"m\":[1,null]}}}");
    for (which = 0; which < 2; which++) {
        const char *doc = which ? big.buf : "{\"a\":{\"b\":1,\"c\":[1]},\"d\":\"e\"}";
        const char *patch =
            which ? "{\"o\":{\"k3\":null,\"k4\":\"x\",\"z\":{\"y\":null,\"w\":{\"v\":null}},"
                    "\"n\":{\"m\":[1,null]}},\"s\":null}"
                  : "{\"a\":{\"b\":null,\"c\":{\"x\":[2]},\"new\":{\"q\":null,\"r\":1}},"
                    "\"d\":[1],\"f\":\"g\"}";
        const char *want =
            which ? bigwant.buf
                  : "{\"a\":{\"c\":{\"x\":[2]},\"new\":{\"r\":1}},\"d\":[1],\"f\":\"g\"}";
        cJSON *a = parse(doc), *b = NULL;
        long n;

        for (n = 1;; n++) {
            struct codec_error err = {0};
            cJSON *d = parse(doc), *p = parse(patch), *before = d;
            int r, injected;

            alloc_fail_after(n);
            r = merge_patch_apply(&d, p, &err);
            injected = alloc_injected();
            alloc_fail_after(0);
            cJSON_Delete(p);
            if (!injected) {
                assert_int_equal(r, 0);
                assert_json(d, want);
                b = d;
                break;
            }
            assert_int_equal(r, -ENOMEM);
            assert_string_equal(err.msg, "out of memory");
            assert_ptr_equal(d, before);
            assert_json(d, doc);
            cJSON_Delete(d);
        }
        assert_true(n > 5);
        for (n = 1;; n++) {
            struct codec_error err = {0};
            cJSON *c = NULL, *x;
            int r, injected;

            alloc_fail_after(n);
            r = merge_patch_create(a, b, &c);
            injected = alloc_injected();
            alloc_fail_after(0);
            if (injected) {
                assert_int_equal(r, -ENOMEM);
                assert_null(c);
                continue;
            }
            assert_int_equal(r, 0);
            x = parse(doc);
            assert_int_equal(merge_patch_apply(&x, c, &err), 0);
            assert_true(cJSON_Compare(x, b, true));
            cJSON_Delete(x);
            cJSON_Delete(c);
            break;
        }
        assert_true(n > 3);
        cJSON_Delete(a);
        cJSON_Delete(b);
    }
    strbuf_release(&big);
    strbuf_release(&bigwant);
}

static void test_merge_unchanged_on_failure(void **state)
{
    static const char doc[] = "{\"a\":{\"b\":1},\"c\":2}";
    long n;

    (void)state;
    for (n = 1;; n++) {
        struct codec_error err = {0};
        cJSON *d = parse(doc), *p = parse("{\"a\":{\"b\":null,\"x\":{\"y\":[1]}},\"c\":null}"),
              *before = d;
        int r;

        alloc_fail_after(n);
        r = merge_patch_apply(&d, p, &err);
        alloc_fail_after(0);
        if (r == 0) {
            assert_json(d, "{\"a\":{\"x\":{\"y\":[1]}}}");
            cJSON_Delete(d);
            cJSON_Delete(p);
            break;
        }
        assert_int_equal(r, -ENOMEM);
        assert_string_equal(err.msg, "out of memory");
        assert_ptr_equal(d, before);
        assert_json(d, doc);
        cJSON_Delete(d);
        cJSON_Delete(p);
    }
}

static void test_merge_patch_create(void **state)
{
    static const struct {
        const char *a, *b, *want; /* want: the hand-computed patch */
    } cases[] = {
        {"{\"a\":1}", "{\"a\":1}", "{}"},
        {"{\"a\":1}", "{\"a\":2}", "{\"a\":2}"},
        {"{\"a\":1,\"b\":2}", "{\"b\":2}", "{\"a\":null}"},
        {"{}", "{\"a\":{\"b\":[1]}}", "{\"a\":{\"b\":[1]}}"},
        {"{\"a\":{\"b\":1,\"c\":2}}", "{\"a\":{\"b\":1,\"c\":3}}", "{\"a\":{\"c\":3}}"},
        {"{\"a\":{\"b\":1}}", "{\"a\":{\"b\":1}}", "{}"},
        {"{\"a\":[1,2]}", "{\"a\":[1,2]}", "{}"},
        {"{\"a\":[1,2]}", "{\"a\":[2,1]}", "{\"a\":[2,1]}"},
        {"{\"a\":{\"x\":1,\"y\":2}}", "{\"a\":{\"y\":2.0,\"x\":1}}", "{}"},
        {"{\"a\":1}", "{\"a\":{\"b\":1}}", "{\"a\":{\"b\":1}}"},
        {"{\"a\":{\"b\":1}}", "{\"a\":\"s\"}", "{\"a\":\"s\"}"},
        {"[1]", "[2]", "[2]"},
        {"{\"a\":1}", "[1]", "[1]"},
        {"[1]", "{\"a\":1}", "{\"a\":1}"},
        {"{\"a\":1}", "null", "null"},
        {"{\"a\":null}", "{\"a\":null,\"b\":1}", "{\"b\":1}"},
        {"{\"a\":{\"b\":{\"c\":1,\"d\":2}},\"e\":true}", "{\"a\":{\"b\":{\"d\":2}},\"e\":false}",
         "{\"a\":{\"b\":{\"c\":null}},\"e\":false}"},
        {"{\"metadata\":{\"labels\":{\"app\":\"web\",\"tier\":\"fe\"},\"name\":\"p\"}}",
         "{\"metadata\":{\"labels\":{\"app\":\"web2\"},\"name\":\"p\","
         "\"annotations\":{\"k\":\"v\"}}}",
         "{\"metadata\":{\"labels\":{\"tier\":null,\"app\":\"web2\"},"
         "\"annotations\":{\"k\":\"v\"}}}"},
    };
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        struct codec_error err = {0};
        cJSON *a = parse(cases[i].a), *b = parse(cases[i].b), *p = NULL;

        assert_int_equal(merge_patch_create(a, b, &p), 0);
        {
            char *out = print(p);

            if (strcmp(out, cases[i].want) != 0)
                fail_msg("case %zu: patch %s, want %s", i, out, cases[i].want);
            free(out);
        }
        /* Round trip: apply(create(a, b), a) == b. */
        assert_int_equal(merge_patch_apply(&a, p, &err), 0);
        if (!cJSON_Compare(a, b, true))
            fail_msg("case %zu: round trip differs", i);
        cJSON_Delete(a);
        cJSON_Delete(b);
        cJSON_Delete(p);
    }
}

/* json_value_equal: values as "test" compares them, in time linear in the input. */
static void test_value_equal(void **state)
{
    static const char *const same[][2] = {
        {"{\"a\":1,\"b\":[1,{\"c\":null}]}", "{\"b\":[1,{\"c\":null}],\"a\":1.0}"},
        {"[]", "[]"},
        {"\"x\"", "\"x\""},
    };
    static const char *const differ[][2] = {
        {"{\"a\":1}", "{\"a\":1,\"b\":2}"},
        {"{\"a\":1,\"b\":2}", "{\"a\":1}"},
        {"[1,2]", "[2,1]"},
        {"{\"a\":\"1\"}", "{\"a\":1}"},
        {"true", "false"},
        {"null", "{}"},
    };
    struct strbuf deep_a = STRBUF_INIT, deep_b = STRBUF_INIT;
    cJSON *a, *b;
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(same); i++) {
        a = cJSON_Parse(same[i][0]);
        b = cJSON_Parse(same[i][1]);
        assert_true(json_value_equal(a, b));
        cJSON_Delete(a);
        cJSON_Delete(b);
    }
    for (size_t i = 0; i < ARRAY_SIZE(differ); i++) {
        a = cJSON_Parse(differ[i][0]);
        b = cJSON_Parse(differ[i][1]);
        assert_false(json_value_equal(a, b));
        cJSON_Delete(a);
        cJSON_Delete(b);
    }
    assert_true(json_value_equal(NULL, NULL));
    a = cJSON_CreateObject();
    assert_false(json_value_equal(a, NULL));
    cJSON_Delete(a);

    /* 80 levels of {"k":0,"n":{...}}: cJSON_Compare visits each level twice per parent
     * (2^80 steps); this must answer at once, equal, and after one member changes. */
    for (int i = 0; i < 80; i++) {
        strbuf_addstr(&deep_a, "{\"k\":0,\"n\":");
        strbuf_addstr(&deep_b, "{\"n\":");
    }
    strbuf_addstr(&deep_a, "1");
    strbuf_addstr(&deep_b, "1");
    for (int i = 0; i < 80; i++) {
        strbuf_addch(&deep_a, '}');
        strbuf_addstr(&deep_b, ",\"k\":0}");
    }
    a = cJSON_Parse(deep_a.buf);
    b = cJSON_Parse(deep_b.buf);
    assert_true(json_value_equal(a, b));
    cJSON_SetNumberValue(cJSON_GetObjectItem(b, "k"), 2);
    assert_false(json_value_equal(a, b));
    cJSON_Delete(a);
    cJSON_Delete(b);
    strbuf_release(&deep_a);
    strbuf_release(&deep_b);
}

/* json_patch_create: hand-written expected patches, and applying each gives b back. */
static void test_json_patch_create(void **state)
{
    static const struct {
        const char *a, *b, *want;
    } cases[] = {
        {"{\"a\":1}", "{\"a\":1}", "[]"},
        {"{\"a\":1}", "{\"a\":2}", "[{\"op\":\"replace\",\"path\":\"/a\",\"value\":2}]"},
        {"{\"a\":1,\"b\":2}", "{\"b\":2}", "[{\"op\":\"remove\",\"path\":\"/a\"}]"},
        {"{}", "{\"a\":{\"b\":[1]}}", "[{\"op\":\"add\",\"path\":\"/a\",\"value\":{\"b\":[1]}}]"},
        {"{\"a/b\":1,\"c~d\":{}}", "{\"a/b\":2,\"c~d\":{\"~/\":3}}",
         "[{\"op\":\"replace\",\"path\":\"/a~1b\",\"value\":2},"
         "{\"op\":\"add\",\"path\":\"/c~0d/~0~1\",\"value\":3}]"},
        {"{\"a\":[1,2,3]}", "{\"a\":[1]}",
         "[{\"op\":\"remove\",\"path\":\"/a/2\"},{\"op\":\"remove\",\"path\":\"/a/1\"}]"},
        {"{\"a\":[1]}", "{\"a\":[5,2,3]}",
         "[{\"op\":\"replace\",\"path\":\"/a/0\",\"value\":5},"
         "{\"op\":\"add\",\"path\":\"/a/-\",\"value\":2},{\"op\":\"add\",\"path\":\"/a/-\","
         "\"value\":3}]"},
        {"{\"c\":[{\"r\":{\"cpu\":\"1\"}}]}", "{\"c\":[{\"r\":{\"batch-cpu\":\"1000\"}}]}",
         "[{\"op\":\"remove\",\"path\":\"/c/0/r/cpu\"},"
         "{\"op\":\"add\",\"path\":\"/c/0/r/batch-cpu\",\"value\":\"1000\"}]"},
        {"{\"a\":1}", "{\"a\":{\"b\":1}}",
         "[{\"op\":\"replace\",\"path\":\"/a\",\"value\":{\"b\":1}}]"},
        {"{\"a\":{\"x\":1,\"y\":2}}", "{\"a\":{\"y\":2.0,\"x\":1}}", "[]"},
        {"[1]", "{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"\",\"value\":{\"a\":1}}]"},
        {"{\"a\":null}", "{\"a\":false}", "[{\"op\":\"replace\",\"path\":\"/a\",\"value\":false}]"},
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        cJSON *a = parse(cases[i].a), *b = parse(cases[i].b), *p = NULL;
        char *out;

        assert_int_equal(json_patch_create(a, b, &p), 0);
        out = print(p);
        if (strcmp(out, cases[i].want) != 0)
            fail_msg("case %zu: got %s, want %s", i, out, cases[i].want);
        free(out);
        assert_int_equal(json_patch_apply(&a, p, 1000, NULL), 0);
        assert_true(json_value_equal(a, b));
        cJSON_Delete(a);
        cJSON_Delete(b);
        cJSON_Delete(p);
    }
}

/* json_patch_create under allocation failure: every failure is -ENOMEM with *ret untouched and
 * nothing leaked; the run that injects nothing gives the full patch. */
static void test_json_patch_create_oom(void **state)
{
    cJSON *a = parse("{\"m\":{\"l\":{\"a\":\"1\",\"b/c\":\"2\"}},\"s\":[1,{\"x\":1},3],\"k\":1}");
    cJSON *b = parse("{\"m\":{\"l\":{\"a\":\"2\",\"n\":{\"d\":[1]}}},\"s\":[1,{\"x\":2}],\"z\":0}");
    long n;

    (void)state;
    for (n = 1;; n++) {
        cJSON *p = NULL;
        int r, injected;

        alloc_fail_after(n);
        r = json_patch_create(a, b, &p);
        injected = alloc_injected();
        alloc_fail_after(0);
        if (!injected) {
            cJSON *c = cJSON_Duplicate(a, true);
            assert_int_equal(r, 0);
            assert_int_equal(json_patch_apply(&c, p, 100, NULL), 0);
            assert_true(json_value_equal(c, b));
            cJSON_Delete(c);
            cJSON_Delete(p);
            break;
        }
        assert_int_equal(r, -ENOMEM);
        assert_null(p);
    }
    assert_true(n > 5);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc6902_appendix_a),
        cmocka_unit_test(test_json_patch_ok),
        cmocka_unit_test(test_json_patch_errors),
        cmocka_unit_test(test_duplicate_member),
        cmocka_unit_test(test_max_ops),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_node_limit),
        cmocka_unit_test(test_json_patch_oom),
        cmocka_unit_test(test_rfc7386_examples),
        cmocka_unit_test(test_merge_depth),
        cmocka_unit_test(test_merge_large_object),
        cmocka_unit_test(test_merge_oom),
        cmocka_unit_test(test_merge_unchanged_on_failure),
        cmocka_unit_test(test_merge_patch_create),
        cmocka_unit_test(test_value_equal),
        cmocka_unit_test(test_json_patch_create),
        cmocka_unit_test(test_json_patch_create_oom),
    };

    return cmocka_run_group_tests(tests, setup, NULL);
}
