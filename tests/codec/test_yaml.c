/*
 * Tests for src/codec/yaml.c. Decoding: scalar typing and key conversion as sigs.k8s.io/yaml
 * (kubectl) does them, streams, anchors, merges, limits (billion laughs), errors with positions,
 * libfyaml staying silent, allocation failure at every step. Emission: kubectl-style text
 * written out by hand, and round trips through yaml_parse_stream(). Expected values follow
 * go-yaml v2's resolve rules; the surprising ones were checked against kubectl 1.32
 * ("kubectl annotate --local -f x.yaml a=b -o json").
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"

static int setup(void **state)
{
    (void)state;
    codec_init();
    return 0;
}

/* Parses a stream; returns its documents as compact JSON joined by '|' (caller frees), or NULL
 * with *ret_r and err filled on error. */
static char *parse_to_json(const char *in, const struct codec_limits *lim, int *ret_r,
                           struct codec_error *err)
{
    struct strbuf sb = STRBUF_INIT;
    cJSON **docs = NULL;
    size_t n = 0, i;

    *ret_r = yaml_parse_stream(in, strlen(in), lim, &docs, &n, err);
    if (*ret_r < 0)
        return NULL;
    for (i = 0; i < n; i++) {
        if (i)
            strbuf_addch(&sb, '|');
        json_print(docs[i], &sb);
    }
    codec_docs_free(docs, n);
    return strbuf_detach(&sb, NULL);
}

static void check_json(const char *in, const char *want)
{
    struct codec_error err;
    char *got;
    int r;

    got = parse_to_json(in, NULL, &r, &err);
    if (!got)
        fail_msg("%s: error %d at %d:%d: %s", in, r, err.line, err.column, err.msg);
    else if (strcmp(got, want) != 0)
        fail_msg("%s: got %s, want %s", in, got, want);
    free(got);
}

static void test_scalar_typing(void **state)
{
    static const struct {
        const char *yaml; /* the value of key v */
        const char *json;
    } cases[] = {
        /* booleans, YAML 1.1 style as go-yaml v2 has them */
        {"true", "true"},
        {"True", "true"},
        {"TRUE", "true"},
        {"tRUE", "\"tRUE\""},
        {"yes", "true"},
        {"Yes", "true"},
        {"y", "true"},
        {"Y", "true"},
        {"on", "true"},
        {"ON", "true"},
        {"false", "false"},
        {"no", "false"},
        {"N", "false"},
        {"off", "false"},
        {"Off", "false"},
        /* null */
        {"null", "null"},
        {"Null", "null"},
        {"NULL", "null"},
        {"~", "null"},
        {"", "null"},
        {"nil", "\"nil\""},
        /* integers: Go's ParseInt with base 0 after dropping '_' */
        {"0", "0"},
        {"-0", "0"},
        {"42", "42"},
        {"+12", "12"},
        {"-17", "-17"},
        {"1_000", "1000"},
        {"0x1F", "31"},
        {"0X1f", "31"},
        {"-0x1F", "-31"},
        {"0x_1F", "31"},
        {"0o17", "15"},
        {"0755", "493"},
        {"00", "0"},
        {"0b101", "5"},
        {"9223372036854775807", "9.223372036854776e+18"},
        {"9223372036854775808", "9.223372036854776e+18"},   /* uint64 */
        {"0x1FFFFFFFFFFFFFFFF", "\"0x1FFFFFFFFFFFFFFFF\""}, /* past uint64: kubectl keeps text */
        /* floats */
        {"08", "8"}, /* not octal, so go-yaml's float pattern takes it */
        {"09.5", "9.5"},
        {"1.5", "1.5"},
        {"-.5", "-0.5"},
        {".5", "0.5"},
        {"1.", "1"},
        {"1e3", "1000"},
        {"1E-2", "0.01"},
        {"6.02e23", "6.02e+23"},
        {"18446744073709551616", "1.8446744073709552e+19"}, /* 2^64 as a double */
        {"1e400", "\"1e400\""},                             /* overflows: stays text */
        /* strings */
        {"0x", "\"0x\""},
        {"0b102", "\"0b102\""},
        {"1:20", "\"1:20\""},
        {"2001-12-14", "\"2001-12-14\""},
        {"2001-12-14T21:59:43Z", "\"2001-12-14T21:59:43Z\""},
        {"1.2.3", "\"1.2.3\""},
        {"+", "\"+\""},
        {"<<", "\"<<\""},
        {"a b", "\"a b\""},
        {"abc # comment", "\"abc\""},
        {"\"123\"", "\"123\""},
        {"'true'", "\"true\""},
        {"\"\"", "\"\""},
        {"|\n  123\n", "\"123\\n\""},
        /* tags */
        {"!!str 123", "\"123\""},
        {"!!str", "\"\""},
        {"!!int \"5\"", "5"},
        {"!!float 5", "5"},
        {"!!bool yes", "true"},
        {"!!null ''", "null"},
        {"! 5", "\"5\""},
        {"!foo 5", "\"5\""},
        {"!!timestamp 2001-12-14", "\"2001-12-14\""},
        {"!<tag:yaml.org,2002:int> 0x10", "16"},
    };
    char in[128], want[128];
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        (void)snprintf(in, sizeof(in), "v: %s", cases[i].yaml);
        (void)snprintf(want, sizeof(want), "{\"v\":%s}", cases[i].json);
        check_json(in, want);
    }
}

static void test_key_conversion(void **state)
{
    static const struct {
        const char *yaml;
        const char *key;
    } cases[] = {
        {"a", "a"},
        {"1", "1"},
        {"0x10", "16"},
        {"-5", "-5"},
        {"1.5", "1.5"},
        {"1e6", "1e+06"},
        {"100.0", "100"},
        {"1234567.0", "1.234567e+06"}, /* FormatFloat(f, 'g', -1, 32) */
        {"0.0001", "0.0001"},
        {"0.00001", "1e-05"},
        {"3.14159265358979", "3.1415927"}, /* float32 precision */
        {"yes", "true"},
        {"on", "true"},
        {"n", "false"},
        {"\"yes\"", "yes"},
        {".inf", ".inf"},
        {"-.Inf", "-.inf"},
        {".nan", ".nan"},
        {"!!str 1", "1"},
        {"'<<'", "<<"},
        {"1e400", "1e400"},
        {"\"\"", ""},
    };
    char in[128], want[128];
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        (void)snprintf(in, sizeof(in), "%s: x", cases[i].yaml);
        (void)snprintf(want, sizeof(want), "{\"%s\":\"x\"}", cases[i].key);
        check_json(in, want);
    }
}

static void test_structures(void **state)
{
    static const struct {
        const char *yaml;
        const char *json;
    } cases[] = {
        /* flow and block styles */
        {"a: [1, {b: c}]", "{\"a\":[1,{\"b\":\"c\"}]}"},
        {"a:\n- 1\n- b: c\n", "{\"a\":[1,{\"b\":\"c\"}]}"},
        {"a:\n  - 1\n  - b: c\n", "{\"a\":[1,{\"b\":\"c\"}]}"},
        {"{a: [1, {b: c}]}", "{\"a\":[1,{\"b\":\"c\"}]}"},
        {"{\"a\": [1, {\"b\": \"c\"}]}", "{\"a\":[1,{\"b\":\"c\"}]}"},
        {"- - a\n  - b\n- []\n- {}\n", "[[\"a\",\"b\"],[],{}]"},
        {"? a\n: b\n", "{\"a\":\"b\"}"},
        {"a:\nb: 1\n", "{\"a\":null,\"b\":1}"},
        {"z: 1\na: 2\nm: 3\n", "{\"z\":1,\"a\":2,\"m\":3}"},
        /* comments */
        {"# head\na: 1 # trailing\n# middle\nb: [1, # in flow\n  2]\n", "{\"a\":1,\"b\":[1,2]}"},
        /* multi-line strings */
        {"a: |\n  x\n  y\n", "{\"a\":\"x\\ny\\n\"}"},
        {"a: |-\n  x\n", "{\"a\":\"x\"}"},
        {"a: |+\n  x\n\nb: 1\n", "{\"a\":\"x\\n\\n\",\"b\":1}"},
        {"a: |2\n   x\n", "{\"a\":\" x\\n\"}"},
        {"a:\n  |\n   x\n    y\n", "{\"a\":\"x\\n y\\n\"}"}, /* header on its own line */
        {"a: >\n  folded\n  text\n\n  para\n", "{\"a\":\"folded text\\npara\\n\"}"},
        {"a: >-\n  x\n  y\n", "{\"a\":\"x y\"}"},
        {"a: \"multi\n  line\"\n", "{\"a\":\"multi line\"}"},
        {"a: 'it''s'\n", "{\"a\":\"it's\"}"},
        /* two escaped quotes in a row: libfyaml 0.7.12 alone reads "x ''' " here */
        {"a: 'x '''' y'\n", "{\"a\":\"x '' y\"}"},
        {"'a '''''' b': 1\n", "{\"a ''' b\":1}"},
        {"'x''\n \n y \n\tz '", "\"x'\\ny z \""}, /* folding, YAML 1.2 example 7.9 */
        /* double-quoted folding and escaped breaks, YAML 1.2 example 7.5 */
        {"\"folded \nto a space,\t\n \nto a line feed, or \t\\\n \\ \tnon-content\"",
         "\"folded to a space,\\nto a line feed, or \\t \\tnon-content\""},
        /* an escaped break then empty lines (libfyaml alone drops the "c") */
        {"\"ab\\\n\n\n\n\nc\"", "\"ab\\n\\n\\n\\nc\""},
        {"\"x\\ \n y\"", "\"x  y\""},
        {"\"\\x41\\u00e9\\U0001F600\\ud83d\\ude00\\_\\L\\P\\e\\a\"",
         "\"A\xc3\xa9\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xc2\xa0\xe2\x80\xa8\xe2\x80\xa9\\u001b\\u0007"
         "\""},
        {"a: plain\n  multi\n", "{\"a\":\"plain multi\"}"},
        {"a: \"\\t\\u00e9\\x41\\N\\ud83d\\ude00\"\n", "{\"a\":\"\\t\xc3\xa9"
                                                      "A\xc2\x85\xf0\x9f\x98\x80\"}"},
        /* anchors and aliases */
        {"a: &x 1\nb: *x\n", "{\"a\":1,\"b\":1}"},
        {"a: &x [1, {b: c}]\nc: *x\n", "{\"a\":[1,{\"b\":\"c\"}],\"c\":[1,{\"b\":\"c\"}]}"},
        {"- &a x\n- *a\n- &a z\n- *a\n", "[\"x\",\"x\",\"z\",\"z\"]"}, /* redefinition */
        {"&k key: v\nother: *k\n", "{\"key\":\"v\",\"other\":\"key\"}"},
        {"a: &n 5\n*n : x\n", "{\"a\":5,\"5\":\"x\"}"},
        {"a: &t yes\n*t : x\n", "{\"a\":true,\"true\":\"x\"}"},
        {"l: [&e {x: 1}, *e, [*e]]\n", "{\"l\":[{\"x\":1},{\"x\":1},[{\"x\":1}]]}"},
        {"a: &m\n  k: &v 1\nb: *v\n", "{\"a\":{\"k\":1},\"b\":1}"},
        /* merge keys: explicit keys win wherever they are, then earlier sources */
        {"b: &b {x: 1, w: 2}\nd:\n  <<: *b\n  w: 3\n  z: 4\n",
         "{\"b\":{\"x\":1,\"w\":2},\"d\":{\"w\":3,\"z\":4,\"x\":1}}"},
        {"a: &a {x: 1, w: 1}\nb: &b {w: 2, z: 2}\nc:\n  <<: [*a, *b]\n",
         "{\"a\":{\"x\":1,\"w\":1},\"b\":{\"w\":2,\"z\":2},\"c\":{\"x\":1,\"w\":1,\"z\":2}}"},
        {"c:\n  w: 0\n  <<: [{x: 1, w: 1}]\n", "{\"c\":{\"w\":0,\"x\":1}}"},
        {"c: {<<: {a: 1}, <<: {a: 2, b: 2}}\n", "{\"c\":{\"a\":1,\"b\":2}}"},
        {"c:\n  <<: &i {a: 1}\n  d: *i\n", "{\"c\":{\"d\":{\"a\":1},\"a\":1}}"},
        {"!!merge <<: {a: 1}\n", "{\"a\":1}"},
        {"'<<': 1\n", "{\"<<\":1}"},
        {"a: <<\n", "{\"a\":\"<<\"}"},
        {"b: &b {k1: 1, k2: 2, k3: 3, k4: 4, k5: 5, k6: 6, k7: 7, k8: 8, k9: 9}\n"
         "c: {k9: 0, k1: 0, <<: *b}\n",
         "{\"b\":{\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5,\"k6\":6,\"k7\":7,\"k8\":8,\"k9\":9}"
         ","
         "\"c\":{\"k9\":0,\"k1\":0,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5,\"k6\":6,\"k7\":7,"
         "\"k8\":8}}"},
    };
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(cases); i++)
        check_json(cases[i].yaml, cases[i].json);
}

static void test_streams(void **state)
{
    static const struct {
        const char *yaml;
        const char *json; /* documents joined by '|' */
    } cases[] = {
        {"", ""},
        {"# only a comment\n", ""},
        {"a: 1\n", "{\"a\":1}"},
        {"a: 1\n---\nb: 2\n", "{\"a\":1}|{\"b\":2}"},
        {"---\na: 1\n---\n", "{\"a\":1}"}, /* trailing "---": empty, skipped */
        {"---\n# c\n---\n[1]\n...\n---\nnull\n--- ~\n--- x\n", "[1]|\"x\""},
        {"{\"a\": 1}\n---\n[true]\n", "{\"a\":1}|[true]"},
        {"--- |\n  lit\n", "\"lit\\n\""},
        {"%YAML 1.2\n---\na: 1\n", "{\"a\":1}"},
        {"a: &x 1\n---\nb: &x 2\nc: *x\n", "{\"a\":1}|{\"b\":2,\"c\":2}"},
        {"\xef\xbb\xbf"
         "a: 1\n",
         "{\"a\":1}"}, /* BOM */
        {"a: 1\r\nb: 2\r\n", "{\"a\":1,\"b\":2}"},
        {"a: 1\rb: |\r  x\r\r  y\r", "{\"a\":1,\"b\":\"x\\n\\ny\\n\"}"}, /* old Mac breaks */
        /* many CR LF breaks in a quoted scalar (libfyaml alone leaks on these) */
        {"a: \"x\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n"
         "\r\n  y\"\r\n",
         "{\"a\":\"x\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\ny\"}"},
    };
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(cases); i++)
        check_json(cases[i].yaml, cases[i].json);
}

static void test_errors(void **state)
{
    static const struct {
        const char *yaml;
        int r, line, column;
        const char *msg; /* substring */
    } cases[] = {
        {"a: [1, 2\nb: 3", -EINVAL, 2, 5, "flow sequence"},
        {"{a: 1", -EINVAL, 1, 6, "invalid YAML"},
        {"a: 'x", -EINVAL, 1, 5, "single-quoted"},
        {"a: b: c", -EINVAL, 1, 5, "invalid YAML"},
        {"a:\n\tb: c\n", -EINVAL, 2, 1, "tab"},
        {"- a\nb: c\n", -EINVAL, 2, 1, "invalid YAML"},
        {"a: 1\na: 2\n", -EINVAL, 2, 1, "duplicate key \"a\""},
        {"a: 1\nb:\n  c: 1\n  \"c\": 2\n", -EINVAL, 4, 3, "duplicate key \"c\""},
        {"1: a\n\"1\": b\n", -EINVAL, 2, 1, "duplicate key \"1\""},
        {"y: a\non: b\n", -EINVAL, 2, 1, "duplicate key \"true\""},
        {"{k1: 1, k2: 2, k3: 3, k4: 4, k5: 5, k6: 6, k7: 7, k8: 8, k9: 9, k2: 0}", -EINVAL, 1, 65,
         "duplicate key \"k2\""},
        {"k: *nope\n", -EINVAL, 1, 4, "unknown anchor \"nope\""},
        {"a: [&x 1, *x, *y]\n", -EINVAL, 1, 15, "unknown anchor \"y\""},
        {"a: &r [*r]\n", -EINVAL, 1, 8, "unknown anchor \"r\""}, /* no recursion */
        {"a: !!int abc\n", -EINVAL, 1, 10, "cannot decode \"abc\" as !!int"},
        {"a: !!null x\n", -EINVAL, 1, 11, "as !!null"},
        {"a: !!bool 1\n", -EINVAL, 1, 11, "as !!bool"},
        {"a: !!timestamp x\n", -EINVAL, 1, 16, "as !!timestamp"},
        {"a: !!binary aGk=\n", -EINVAL, 1, 13, "!!binary"},
        {"a: .inf\n", -EINVAL, 1, 4, "infinity"},
        {"a: [-.Inf]\n", -EINVAL, 1, 5, "infinity"},
        {"a: !!float .nan\n", -EINVAL, 1, 12, "NaN"},
        {"a: \"x\\0y\"\n", -EINVAL, 1, 4, "NUL"},
        {"a: ok\nb: \xff\n", -EINVAL, 2, 4, "UTF-8"},
        {"a: x\x01y\n", -EINVAL, 1, 5, "U+0001 is not allowed"},
        {"a: \x7f\n", -EINVAL, 1, 4, "U+007F"},
        {"a: \xc2\x80\n", -EINVAL, 1, 4, "U+0080"},
        {"# \xef\xbf\xbe\n", -EINVAL, 1, 3, "U+FFFE"},
        {"? [a]\n: b\n", -EINVAL, 1, 3, "keys must be scalars"},
        {"? {a: 1}\n: b\n", -EINVAL, 1, 3, "keys must be scalars"},
        {"a: &s [1]\nb: {*s : 1}\n", -EINVAL, 2, 5, "keys must be scalars"},
        {"~: a\n", -EINVAL, 1, 1, "null mapping keys"},
        {": a\n", -EINVAL, 1, 1, "null mapping keys"},
        {"18446744073709551615: x\n", -EINVAL, 1, 1, "64 bits"},
        {"<<: 1\n", -EINVAL, 1, 1, "merge key"},
        /* libfyaml 0.7.12 misreads this layout (drops the last newline) */
        {"a:\n  |\n  x\n   y\n", -EINVAL, 2, 3, "indented deeper"},
        {"---\n|-\nx\n", -EINVAL, 2, 1, "indented deeper"},
        {" k: |\n x\n", -EINVAL, 1, 2, "indented deeper"}, /* really: x is a new key */
        {"a: &s x\nb:\n  <<: *s\n", -EINVAL, 3, 3, "merge key"},
        {"b:\n  <<: [{a: 1}, 2]\n", -EINVAL, 2, 3, "merge key"},
    };
    struct codec_error err;
    cJSON **docs;
    size_t i, n;
    int r;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        docs = (cJSON **)&err; /* outputs must stay untouched */
        n = 77;
        r = yaml_parse_stream(cases[i].yaml, strlen(cases[i].yaml), NULL, &docs, &n, &err);
        if (r != cases[i].r || err.line != cases[i].line || err.column != cases[i].column ||
            !strstr(err.msg, cases[i].msg))
            fail_msg("case %zu: got %d at %d:%d \"%s\", want %d at %d:%d \"%s\"", i, r, err.line,
                     err.column, err.msg, cases[i].r, cases[i].line, cases[i].column, cases[i].msg);
        assert_ptr_equal(docs, (cJSON **)&err);
        assert_int_equal(n, 77);
    }
    assert_int_equal(yaml_parse_stream("[", 1, NULL, &docs, &n, NULL), -EINVAL);
    /* A NUL byte in the input (it also ends C strings, so pass the length). */
    assert_int_equal(yaml_parse_stream("a: b\0c\n", 7, NULL, &docs, &n, &err), -EINVAL);
    assert_int_equal(err.line, 1);
    assert_int_equal(err.column, 5);
    assert_non_null(strstr(err.msg, "U+0000"));
    /* Tabs, CR and NEL are fine. */
    assert_int_equal(yaml_parse_stream("a: \"\t\"\r\nb: x\xc2\x85y\n", 16, NULL, &docs, &n, &err),
                     0);
    assert_int_equal(n, 1);
    assert_string_equal(cJSON_GetObjectItem(docs[0], "a")->valuestring, "\t");
    assert_string_equal(cJSON_GetObjectItem(docs[0], "b")->valuestring, "x\xc2\x85y");
    codec_docs_free(docs, n);
}

/* libfyaml's diagnostics are captured, never written to stderr. */
static void test_errors_are_quiet(void **state)
{
    char path[] = "/tmp/koord-yaml-stderr-XXXXXX";
    struct codec_error err;
    cJSON **docs;
    struct stat st;
    int fd, saved;
    size_t n;

    (void)state;
    fd = mkstemp(path);
    assert_true(fd >= 0);
    (void)fflush(stderr);
    saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(fd, STDERR_FILENO) >= 0);
    assert_int_equal(yaml_parse_stream("a: [1, 2\nb: 3", 13, NULL, &docs, &n, &err), -EINVAL);
    assert_int_equal(yaml_parse_stream("a:\n\tb: c", 8, NULL, &docs, &n, &err), -EINVAL);
    assert_int_equal(yaml_parse_stream("%FOO\n--- a", 10, NULL, &docs, &n, &err), 0);
    codec_docs_free(docs, n);
    (void)fflush(stderr);
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    (void)close(saved);
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_size, 0);
    (void)close(fd);
    (void)unlink(path);
}

static int parse_lim(const char *in, const struct codec_limits *lim, struct codec_error *err)
{
    cJSON **docs = NULL;
    size_t n = 0;
    int r;

    r = yaml_parse_stream(in, strlen(in), lim, &docs, &n, err);
    codec_docs_free(docs, n);
    return r;
}

static void test_billion_laughs(void **state)
{
    static const char lol[] = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
                              "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                              "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                              "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                              "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                              "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                              "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
                              "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
                              "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]\n";
    struct codec_limits lim = codec_default_limits;
    struct codec_error err;

    (void)state;
    /* Nodes: root 1, a 10 (seq + 9), b 1 + 9*10 = 91, c 1 + 9*91 = 820, d 7381. Up to c the
     * document has 1 + 10 + 91 + 820 = 922 nodes; d's first alias pushes past 1000. */
    lim.max_nodes = 1000;
    assert_int_equal(parse_lim(lol, &lim, &err), -E2BIG);
    assert_int_equal(err.line, 4);
    assert_int_equal(err.column, 8);
    assert_non_null(strstr(err.msg, "1000 nodes"));
    lim.max_nodes = 922 + 7381;
    assert_int_equal(parse_lim("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
                               "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                               "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                               "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n",
                               &lim, &err),
                     0);
    lim.max_nodes--;
    assert_int_equal(parse_lim("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
                               "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                               "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                               "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n",
                               &lim, &err),
                     -E2BIG);

    /* Merging an alias costs its expanded size too. */
    lim.max_nodes = 20;
    assert_int_equal(parse_lim("a: &a {k1: 1, k2: 2, k3: 3, k4: 4, k5: 5}\n"
                               "b: {<<: *a}\nc: {<<: *a}\nd: {<<: *a}\n",
                               &lim, &err),
                     -E2BIG);

    /* And at their expanded string size: one long string aliased many times is refused once the
     * copies pass max_bytes, here 4 KiB. */
    {
        struct strbuf in = STRBUF_INIT;
        int k;

        lim = codec_default_limits;
        lim.max_bytes = 4096;
        strbuf_addstr(&in, "a: &a ");
        for (k = 0; k < 1000; k++)
            strbuf_addch(&in, 'x');
        strbuf_addstr(&in, "\nb: [*a, *a, *a, *a]\n"); /* 4000 bytes of copies: fine */
        assert_int_equal(parse_lim(in.buf, &lim, &err), 0);
        strbuf_addstr(&in, "c: *a\n"); /* 5000 */
        assert_int_equal(parse_lim(in.buf, &lim, &err), -E2BIG);
        assert_int_equal(err.line, 3);
        assert_non_null(strstr(err.msg, "4096 bytes"));
        strbuf_setlen(&in, in.len - 6);
        strbuf_addstr(&in, "c: {*a : 1}\n"); /* aliases as keys count too */
        assert_int_equal(parse_lim(in.buf, &lim, &err), -E2BIG);
        strbuf_release(&in);
    }

    /* Aliases count at their expanded depth. */
    lim = codec_default_limits;
    lim.max_depth = 4;
    assert_int_equal(parse_lim("a: &a [[1]]\nb: [*a]\n", &lim, &err), 0);
    assert_int_equal(parse_lim("a: &a [[[1]]]\nb: [*a]\n", &lim, &err), -E2BIG);
    assert_int_equal(err.line, 2);
    assert_int_equal(err.column, 5);
}

static void test_limits(void **state)
{
    struct codec_limits lim = codec_default_limits;
    struct codec_error err;
    struct strbuf sb = STRBUF_INIT;
    int i;

    (void)state;
    /* 10000 '[' fail at the 101st, before anything deep is built. */
    for (i = 0; i < 10000; i++)
        strbuf_addch(&sb, '[');
    assert_int_equal(parse_lim(sb.buf, NULL, &err), -E2BIG);
    assert_int_equal(err.line, 1);
    assert_int_equal(err.column, 101);
    assert_non_null(strstr(err.msg, "depth"));
    strbuf_reset(&sb);
    for (i = 0; i < 200; i++)
        strbuf_addstr(&sb, "- ");
    strbuf_addstr(&sb, "x\n");
    assert_int_equal(parse_lim(sb.buf, NULL, &err), -E2BIG);
    strbuf_release(&sb);

    lim.max_depth = 3;
    assert_int_equal(parse_lim("a:\n  b:\n    c: 1\n", &lim, &err), 0);
    lim.max_depth = 2;
    assert_int_equal(parse_lim("a:\n  b:\n    c: 1\n", &lim, &err), -E2BIG);
    assert_int_equal(err.line, 3); /* where the third mapping starts */

    lim = codec_default_limits;
    lim.max_nodes = 3;
    assert_int_equal(parse_lim("[1, 2]", &lim, &err), 0);
    assert_int_equal(parse_lim("[1, 2, 3]", &lim, &err), -E2BIG);
    assert_int_equal(parse_lim("[1]\n---\n[2]\n", &lim, &err), -E2BIG); /* summed over docs */

    lim = codec_default_limits;
    lim.max_docs = 2;
    assert_int_equal(parse_lim("a\n---\nb\n", &lim, &err), 0);
    assert_int_equal(parse_lim("a\n---\nb\n---\nc\n", &lim, &err), -E2BIG);
    assert_int_equal(parse_lim("---\n---\n---\n", &lim, &err), -E2BIG); /* empty ones count */
    assert_non_null(strstr(err.msg, "documents"));

    lim = codec_default_limits;
    lim.max_bytes = 4;
    assert_int_equal(parse_lim("a: 1", &lim, &err), 0);
    assert_int_equal(parse_lim("a: 12", &lim, &err), -E2BIG);
}

/* Every checked allocation failing in turn gives -ENOMEM and leaks nothing. */
static void test_alloc_failures(void **state)
{
    static const char in[] =
        "base: &b {x: 1, w: [a, b]}\n"
        "m:\n  <<: *b\n  k1: 1\n  k2: 2\n  k3: 3\n  k4: 4\n  k5: 5\n  k6: 6\n  k7: 7\n  k8: 8\n"
        "  k9: 9\n&k key: *b\nlist: [1.5, true, null, \"s\", *k, \"x\\ny\"]\n"
        "---\n- !!str 1\n- {a: {b: {c: d}}}\n- {&q z: 1}\n- {*q : 2}\n";
    struct codec_error err;
    cJSON **docs;
    size_t n;
    long k;
    int r;

    (void)state;
    for (k = 1;; k++) {
        docs = NULL;
        n = 0;
        alloc_fail_after(k);
        r = yaml_parse_stream(in, sizeof(in) - 1, NULL, &docs, &n, &err);
        if (!alloc_injected()) {
            alloc_fail_after(0);
            if (r != 0)
                fail_msg("%d %s", r, err.msg);
            assert_int_equal(n, 2);
            codec_docs_free(docs, n);
            break;
        }
        alloc_fail_after(0);
        if (r != -ENOMEM)
            fail_msg("allocation %ld: got %d (%s), want -ENOMEM", k, r, err.msg);
        assert_null(docs);
    }
    assert_true(k > 50);
}

/* yaml_emit() output, written out by hand the way kubectl -o yaml would print it. */
static void test_emit(void **state)
{
    static const struct {
        const char *json;
        const char *yaml;
    } cases[] = {
        {"{\"a\":1}", "a: 1\n"},
        {"[]", "[]\n"},
        {"{}", "{}\n"},
        {"\"x\"", "x\n"},
        {"null", "null\n"},
        {"true", "true\n"},
        {"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":"
         "{\"app\":\"web\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"nginx:1.25\","
         "\"ports\":[{\"containerPort\":80}],\"args\":[\"-v\",\"--x=1\"]}],\"volumes\":[]}}",
         "apiVersion: v1\n"
         "kind: Pod\n"
         "metadata:\n"
         "  name: p\n"
         "  labels:\n"
         "    app: web\n"
         "spec:\n"
         "  containers:\n"
         "  - name: c\n"
         "    image: nginx:1.25\n"
         "    ports:\n"
         "    - containerPort: 80\n"
         "    args:\n"
         "    - -v\n"
         "    - --x=1\n"
         "  volumes: []\n"},
        {"[1,[2,3],{\"a\":[]},[],[[4]]]", "- 1\n- - 2\n  - 3\n- a: []\n- []\n- - - 4\n"},
        {"[{\"a\":[{\"b\":1,\"c\":{\"d\":null}}]}]", "- a:\n  - b: 1\n    c:\n      d: null\n"},
        /* quoting: double quotes when the text would read as another type, single quotes
         * when it clashes with YAML syntax */
        {"[\"true\",\"123\",\"\",\"1.5\",\"null\",\"~\",\"y\",\"0x1F\",\"1e3\",\"<<\",\"1:20\"]",
         "- \"true\"\n- \"123\"\n- \"\"\n- \"1.5\"\n- \"null\"\n- \"~\"\n- \"y\"\n- \"0x1F\"\n"
         "- \"1e3\"\n- \"<<\"\n- \"1:20\"\n"},
        {"[\"a: b\",\"#c\",\" lead\",\"trail \",\"x #y\",\"a:\",\"- x\",\"-\",\"---\",\"...x\","
         "\"*x\",\"&x\",\"!x\",\"%x\",\"@x\",\"`x\",\"{x\",\"[x\",\"|x\",\">x\",\"?x\",\":x\","
         "\"'q'\",\"\\\"q\\\"\"]",
         "- 'a: b'\n- '#c'\n- ' lead'\n- 'trail '\n- 'x #y'\n- 'a:'\n- '- x'\n- '-'\n- '---'\n"
         "- '...x'\n- '*x'\n- '&x'\n- '!x'\n- '%x'\n- '@x'\n- '`x'\n- '{x'\n- '[x'\n- '|x'\n"
         "- '>x'\n- '?x'\n- ':x'\n- '''q'''\n- '\"q\"'\n"},
        {"[\"it's\",\"say \\\"hi\\\"\",\"a:b\",\"a#b\",\"caf\xc3\xa9\",\"x, y\",\"2001-12-14\"]",
         "- it's\n- say \"hi\"\n- a:b\n- a#b\n- caf\xc3\xa9\n- x, y\n- 2001-12-14\n"},
        /* escapes */
        {"[\"a\\tb\",\"\\u0001\",\"\\u007f\",\"\\u0085\",\"\\u2028\",\"\\u2029\",\"\\ufeffx\","
         "\"\\r\",\"\\u001b\",\"\\u00a0\"]",
         "- \"a\\tb\"\n- \"\\x01\"\n- \"\\x7F\"\n- \"\\N\"\n- \"\\L\"\n- \"\\P\"\n- \"\\uFEFFx\"\n"
         "- \"\\r\"\n- \"\\e\"\n- \xc2\xa0\n"},
        /* multi-line strings (and "n", a boolean key unless quoted) */
        {"{\"m\":\"line1\\nline2\\n\",\"n\":\"a\\nb\",\"k\":\"a\\n\\n\",\"d\":\"a \\nb\","
         "\"l\":\"\\nx\",\"s\":\" x\\ny\",\"t\":\"x\\ny \",\"i\":\"x\\n  indented\\n\\n#not a "
         "comment\"}",
         "m: |\n  line1\n  line2\n\"n\": |-\n  a\n  b\nk: |+\n  a\n\nd: \"a \\nb\"\nl: \"\\nx\"\n"
         "s: \" x\\ny\"\nt: \"x\\ny \"\ni: |-\n  x\n    indented\n\n  #not a comment\n"},
        {"[\"x\\ny\",{\"a\":{\"b\":\"x\\n\"}}]", "- |-\n  x\n  y\n- a:\n    b: |\n      x\n"},
        {"\"x\\ny\"", "|-\n  x\n  y\n"},
        /* keys */
        {"{\"a b\":1,\"\":2,\"x: y\":3,\"true\":4,\"1\":5,\"-k\":6,\"a\\nb\":7}",
         "a b: 1\n\"\": 2\n'x: y': 3\n\"true\": 4\n\"1\": 5\n-k: 6\n\"a\\nb\": 7\n"},
        /* numbers */
        {"[1e21,0.5,-3,1e15,0.1,1e-7]", "- 1e+21\n- 0.5\n- -3\n- 1000000000000000\n- 0.1\n"
                                        "- 1e-07\n"},
    };
    struct strbuf sb = STRBUF_INIT;
    cJSON *v;
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        if (json_parse(cases[i].json, strlen(cases[i].json), NULL, &v, NULL) != 0)
            fail_msg("case %zu: bad JSON %s", i, cases[i].json);
        strbuf_reset(&sb);
        assert_int_equal(yaml_emit(v, &sb), 0);
        if (strcmp(sb.buf, cases[i].yaml) != 0)
            fail_msg("case %zu: got\n%s\nwant\n%s", i, sb.buf, cases[i].yaml);
        cJSON_Delete(v);
    }
    /* yaml_emit appends. */
    strbuf_reset(&sb);
    strbuf_addstr(&sb, "---\n");
    v = cJSON_CreateString("x");
    yaml_emit(v, &sb);
    assert_string_equal(sb.buf, "---\nx\n");
    cJSON_Delete(v);
    strbuf_release(&sb);
}

/* json -> yaml_emit -> yaml_parse_stream gives back an equal tree. */
static void round_trip(const cJSON *a)
{
    struct strbuf sb = STRBUF_INIT;
    struct codec_error err;
    cJSON **docs = NULL;
    size_t n = 0;
    int r;

    yaml_emit(a, &sb);
    r = yaml_parse_stream(sb.buf, sb.len, NULL, &docs, &n, &err);
    if (r != 0)
        fail_msg("re-parse failed (%d at %d:%d: %s):\n%s", r, err.line, err.column, err.msg,
                 sb.buf);
    if (cJSON_IsNull(a)) {
        assert_int_equal(n, 0); /* null documents are skipped */
    } else {
        assert_int_equal(n, 1);
        if (!cJSON_Compare(a, docs[0], true))
            fail_msg("round trip changed the document:\n%s", sb.buf);
    }
    codec_docs_free(docs, n);
    strbuf_release(&sb);
}

static void test_emit_round_trip(void **state)
{
    static const char *const docs[] = {
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
        "\"annotations\":{\"a/b\":\"{\\\"json\\\": [1, 2]}\"}},\"spec\":{\"replicas\":3,"
        "\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"command\":[\"sh\",\"-c\","
        "\"echo hi\\nexit 0\\n\"],\"env\":[{\"name\":\"A\",\"value\":\"yes\"}]}]}}}}",
        "[\"true\",\"false\",\"yes\",\"no\",\"on\",\"off\",\"y\",\"n\",\"Y\",\"N\",\"~\",\"null\","
        "\"NULL\",\"\",\" \",\"  \",\"\\t\",\"0\",\"-0\",\"+1\",\"1_0\",\"0x\",\"0o7\",\"0b1\","
        "\"08\",\"1.\",\".5\",\"-.5\",\"1e5\",\".inf\",\"-.Inf\",\".NaN\",\"<<\",\"=\",\"1:2:3\"]",
        "[\"a: b\",\"a:b\",\"a :b\",\"a #b\",\"a#b\",\"#\",\"- \",\"-\",\"--\",\"---\",\"--- x\","
        "\"...\",\"? \",\"?\",\":\",\": x\",\"[]\",\"{}\",\"[a, b]\",\"{a: b}\",\"|\",\">\",\"!\","
        "\"!!str\",\"&a\",\"*a\",\"%YAML\",\"@\",\"`\",\"'\",\"\\\"\",\"''\",\"\\\\\",\"a\\\\nb\"]",
        "[\"\\n\",\"\\n\\n\",\"x\\n\",\"x\\n\\n\\n\",\"\\nx\\n\",\" x\\n\",\"x \\ny\",\"x\\n \","
        "\"x\\n\\ty\",\"x\\r\\ny\",\"line1\\n  line2\\n    line3\",\"# c\\n# d\\n\","
        "\"--- \\n...\\n\",\"a\\u2028b\",\"a\\u0085b\",\"\\ufeff\"]",
        "{\"\":\"\",\" \":\" \",\"true\":true,\"1\":1,\"1.5\":1.5,\"null\":null,\"<<\":\"<<\","
        "\"a: b\":\"c\",\"-\":\"-\",\"x\\ny\":\"z\",\"é\":\"ü\",\"\\u2028\":1}",
        "[0,-0,1,-1,1.5,-2.25,1e21,1e-7,123456789012,9007199254740993,1.7976931348623157e308,"
        "5e-324,0.1,0.30000000000000004]",
        "[[],{},[[]],[{}],{\"a\":[]},{\"a\":{}},[[[[1]]]],{\"a\":{\"b\":{\"c\":[1,{\"d\":[]}]}}}]",
        "{\"a\":[{\"b\":[{\"c\":[\"x\\ny\",\"z\"]}]},[\"p\\nq\\n\",[\"r\\n\\n\"]]]}",
        "\"just a string\"",
        "\"multi\\nline root\\n\"",
        "12.5",
        "false",
        "null",
        "{\"data\":{\"script.sh\":\"#!/bin/sh\\nset -e\\nif [ \\\"$1\\\" = x ]; then\\n  echo "
        "'ok: yes' # c\\nfi\\n\",\"cfg.yaml\":\"a: 1\\nb:\\n- c\\n---\\nd: 2\\n\"}}",
        "{\"unicode\":[\"\xe6\x97\xa5\xe6\x9c\xac\",\"\xf0\x9f\x98\x80\",\"\xc2\xa0lead\","
        "\"trail\xc2\xa0\",\"\xe2\x80\x8b\",\"\\u00ff\",\"\\u0080\",\"\\u009f\",\"\\ufffe\"]}",
        "{\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5,\"k6\":6,\"k7\":7,\"k8\":8,\"k9\":9,"
        "\"k10\":[\"-v\",\"--w\",\"-1\",\"-1.5\",\"-x y\"]}",
    };
    cJSON *a;
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(docs); i++) {
        int r = json_parse(docs[i], strlen(docs[i]), NULL, &a, NULL);

        if (r != 0)
            fail_msg("case %zu: bad JSON", i);
        round_trip(a);
        cJSON_Delete(a);
    }
}

/* Keys past 1024 characters are written "? key" so that every YAML parser reads them. */
static void test_emit_long_key(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    char key[1100];
    cJSON *o = cJSON_CreateObject(), *seq = cJSON_CreateArray();

    (void)state;
    memset(key, 'k', sizeof(key) - 1);
    key[sizeof(key) - 1] = '\0';
    cJSON_AddStringToObject(o, key, "v");
    cJSON_AddItemToArray(seq, cJSON_CreateNumber(1));
    key[0] = 'j';
    cJSON_AddItemToObject(o, key, seq);
    yaml_emit(o, &sb);
    assert_memory_equal(sb.buf, "? \"kkk", 6);
    round_trip(o);
    cJSON_AddItemToArray(seq, cJSON_Duplicate(o, true));
    round_trip(seq);
    cJSON_Delete(o);
    strbuf_release(&sb);
}

/* Invalid UTF-8 from code-built trees becomes U+FFFD instead of unreadable YAML. */
static void test_emit_invalid_utf8(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    cJSON *s = cJSON_CreateString("a\xff"
                                  "b");

    (void)state;
    yaml_emit(s, &sb);
    assert_string_equal(sb.buf, "\"a\\uFFFDb\"\n");
    cJSON_Delete(s);
    strbuf_release(&sb);
}

/* Documents decoded from YAML emit and decode back the same. */
static void test_yaml_round_trip(void **state)
{
    static const char *const inputs[] = {
        "b: &b {x: 1, w: 2}\nd:\n  <<: *b\n  w: 3\n",
        "a: |+\n  x\n\nb: >\n  folded\n  text\n\nc: \"\\t\\u00e9\"\n",
        "- &a x\n- *a\n- [1, {b: c}]\n- ? k\n  : v\n",
        "0x10: a\n1.5: b\nyes: c\n~x: d\n",
    };
    cJSON **docs;
    size_t i, j, n;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(inputs); i++) {
        assert_int_equal(yaml_parse_stream(inputs[i], strlen(inputs[i]), NULL, &docs, &n, NULL), 0);
        for (j = 0; j < n; j++)
            round_trip(docs[j]);
        codec_docs_free(docs, n);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalar_typing),
        cmocka_unit_test(test_key_conversion),
        cmocka_unit_test(test_structures),
        cmocka_unit_test(test_streams),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_errors_are_quiet),
        cmocka_unit_test(test_billion_laughs),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_emit),
        cmocka_unit_test(test_emit_round_trip),
        cmocka_unit_test(test_emit_long_key),
        cmocka_unit_test(test_emit_invalid_utf8),
        cmocka_unit_test(test_yaml_round_trip),
    };

    return cmocka_run_group_tests(tests, setup, NULL);
}
