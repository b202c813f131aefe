/*
 * Tests for src/codec/json.c: json_parse() on good and bad input (with the error positions a
 * person would point at), the depth/node/size limits, allocation failure at every step, and
 * json_print()/json_print_pretty() output written out by hand.
 */
#include <math.h>
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

static int setup(void **state)
{
    (void)state;
    codec_init();
    return 0;
}

/* Parses in and returns its compact print (caller frees), failing the test on error. */
static char *reprint(const char *in)
{
    struct strbuf sb = STRBUF_INIT;
    struct codec_error err;
    cJSON *v = NULL;
    int r;

    r = json_parse(in, strlen(in), NULL, &v, &err);
    if (r != 0)
        fail_msg("json_parse(%s) = %d at %d:%d: %s", in, r, err.line, err.column, err.msg);
    assert_int_equal(json_print(v, &sb), 0);
    cJSON_Delete(v);
    return strbuf_detach(&sb, NULL);
}

static void test_parse_ok(void **state)
{
    static const struct {
        const char *in;
        const char *want; /* compact print */
    } cases[] = {
        {"null", "null"},
        {"true", "true"},
        {" false ", "false"},
        {"0", "0"},
        {"-0", "0"},
        {"42", "42"},
        {"-17", "-17"},
        {"1.5", "1.5"},
        {"-3e2", "-300"},
        {"1E+2", "100"},
        {"2.5e-3", "0.0025"},
        {"1e15", "1000000000000000"},
        {"9007199254740993", "9007199254740992"}, /* 2^53 + 1 is not a double */
        {"0.1", "0.1"},
        {"\"\"", "\"\""},
        {"\"a b\"", "\"a b\""},
        {"\"\\u00e9\\ud83d\\ude00\"", "\"\xc3\xa9\xf0\x9f\x98\x80\""},
        {"\"caf\xc3\xa9\"", "\"caf\xc3\xa9\""},
        {"\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"", "\"/\\b\\f\\n\\r\\t\\\"\\\\\""},
        {"\"\\u0001\\u001f\"", "\"\\u0001\\u001f\""},
        {"[]", "[]"},
        {"{}", "{}"},
        {"[ 1 , [ ] , { } ]", "[1,[],{}]"},
        {"{\"a\" : [1, 2.5, -3e2, true, false, null, \"x\"]}",
         "{\"a\":[1,2.5,-300,true,false,null,\"x\"]}"},
        {"\n\t{\"b\":1,\"a\":2}\r\n", "{\"b\":1,\"a\":2}"}, /* order kept */
        {"[\"[[[[\", \"{{\"]", "[\"[[[[\",\"{{\"]"},        /* brackets in strings */
        {"{\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5,\"k6\":6,\"k7\":7,\"k8\":8,\"k9\":9}",
         "{\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5,\"k6\":6,\"k7\":7,\"k8\":8,\"k9\":9}"},
        {"{\"a\":{\"a\":1}}", "{\"a\":{\"a\":1}}"}, /* same key at two levels is fine */
    };
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        char *got = reprint(cases[i].in);

        if (strcmp(got, cases[i].want) != 0)
            fail_msg("case %zu: %s printed %s, want %s", i, cases[i].in, got, cases[i].want);
        free(got);
    }
}

static void test_parse_errors(void **state)
{
    static const struct {
        const char *in;
        int r, line, column;
        const char *msg; /* substring */
    } cases[] = {
        {"", -EINVAL, 1, 1, "no value"},
        {"   ", -EINVAL, 1, 4, "no value"},
        {"[1, 2", -EINVAL, 1, 6, "unexpected end of input"},
        {"{\"a\" 1}", -EINVAL, 1, 6, "unexpected '1'"},
        {"{\"a\": }", -EINVAL, 1, 7, "unexpected '}'"},
        {"[1,]", -EINVAL, 1, 4, "unexpected ']'"},
        {"{\"a\":1,}", -EINVAL, 1, 8, "unexpected '}'"},
        {"[1 2]", -EINVAL, 1, 4, "unexpected '2'"},
        {"[\n1,\n@]", -EINVAL, 3, 1, "unexpected '@'"},
        {"tru", -EINVAL, 1, 1, "unexpected 't'"},
        {"]", -EINVAL, 1, 1, "unexpected ']'"},
        {"{\"a\":1} x", -EINVAL, 1, 9, "after the value"},
        {"{} {}", -EINVAL, 1, 4, "after the value"},
        {"[01]", -EINVAL, 1, 2, "invalid number"},
        {"[1.]", -EINVAL, 1, 2, "invalid number"},
        {"[.5]", -EINVAL, 1, 2, "unexpected '.'"},
        {"[+1]", -EINVAL, 1, 2, "unexpected '+'"},
        {"[1e]", -EINVAL, 1, 2, "invalid number"},
        {"[-]", -EINVAL, 1, 2, "invalid number"},
        {"[0x10]", -EINVAL, 1, 2, "invalid number"},
        {"[1234567890123456789012345678901234567890123456789012345678901234]", -EINVAL, 1, 2,
         "longer than 63"},
        {"\"abc", -EINVAL, 1, 1, "unterminated string"},
        {"[\"a\x01\"]", -EINVAL, 1, 4, "control character"},
        {"\"a\nb\"", -EINVAL, 1, 3, "control character"},
        {"\"\\q\"", -EINVAL, 1, 2, "invalid escape"},
        {"\"\\u12g4\"", -EINVAL, 1, 2, "invalid \\u escape"},
        {"\"\\u0000\"", -EINVAL, 1, 2, "\\u0000"},
        {"\"\\ud800\"", -EINVAL, 1, 2, "surrogate"},
        {"\"\\ud800\\u0041\"", -EINVAL, 1, 2, "surrogate"},
        {"\"\\udc00\"", -EINVAL, 1, 2, "surrogate"},
        {"\"ok\xff\"", -EINVAL, 1, 4, "UTF-8"},
        {"\"\xc0\x80\"", -EINVAL, 1, 2, "UTF-8"},
        {"{\"a\":1,\"a\":2}", -EINVAL, 0, 0, "duplicate key \"a\""},
        {"{\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5,\"k6\":6,\"k7\":7,\"k8\":8,\"k9\":9,\"k3\":"
         "0}",
         -EINVAL, 0, 0, "duplicate key \"k3\""},
        {"[{\"x\":[{\"b\":1,\"b\":1}]}]", -EINVAL, 0, 0, "duplicate key \"b\""},
        {"1e400", -EINVAL, 1, 1, "out of range"},
        {"[-1e400]", -EINVAL, 1, 2, "out of range"},
    };
    struct codec_error err;
    cJSON *v;
    size_t i;
    int r;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        v = (cJSON *)&err; /* must stay untouched */
        r = json_parse(cases[i].in, strlen(cases[i].in), NULL, &v, &err);
        if (r != cases[i].r || err.line != cases[i].line || err.column != cases[i].column ||
            !strstr(err.msg, cases[i].msg))
            fail_msg("case %zu (%s): got %d at %d:%d \"%s\", want %d at %d:%d \"%s\"", i,
                     cases[i].in, r, err.line, err.column, err.msg, cases[i].r, cases[i].line,
                     cases[i].column, cases[i].msg);
        assert_ptr_equal(v, (cJSON *)&err);
    }
    /* err may be NULL. */
    assert_int_equal(json_parse("[", 1, NULL, &v, NULL), -EINVAL);
}

/* The buffer is not NUL-terminated: parsing must stay inside len. */
static void test_parse_not_terminated(void **state)
{
    char buf[8] = {'[', '1', ',', '2', ']', 'x', 'x', 'x'};
    cJSON *v = NULL;

    (void)state;
    assert_int_equal(json_parse(buf, 5, NULL, &v, NULL), 0);
    assert_int_equal(cJSON_GetArraySize(v), 2);
    cJSON_Delete(v);
    assert_int_equal(json_parse(buf, 4, NULL, &v, NULL), -EINVAL);
}

static void test_depth_limit(void **state)
{
    struct codec_limits lim = codec_default_limits;
    struct codec_error err;
    char *deep;
    cJSON *v = NULL;

    (void)state;
    /* 10000 '[' would overflow a recursive parser; the pre-scan stops at the 101st. */
    deep = malloc(10000);
    assert_non_null(deep);
    memset(deep, '[', 10000);
    assert_int_equal(json_parse(deep, 10000, NULL, &v, &err), -E2BIG);
    assert_int_equal(err.line, 1);
    assert_int_equal(err.column, 101);
    assert_non_null(strstr(err.msg, "depth"));
    memset(deep, '{', 10000);
    assert_int_equal(json_parse(deep, 10000, NULL, &v, &err), -E2BIG);
    free(deep);

    lim.max_depth = 3;
    assert_int_equal(json_parse("[[[]]]", 6, &lim, &v, &err), 0);
    cJSON_Delete(v);
    assert_int_equal(json_parse("[{\"a\":[1]}]", 11, &lim, &v, &err), 0);
    cJSON_Delete(v);
    assert_int_equal(json_parse("[[[[]]]]", 8, &lim, &v, &err), -E2BIG);
    assert_int_equal(err.column, 4);
    /* Brackets inside strings, including after escaped quotes, do not nest. */
    assert_int_equal(json_parse("[\"\\\"[[[[[\"]", 11, &lim, &v, &err), 0);
    cJSON_Delete(v);
    lim.max_depth = 0;
    assert_int_equal(json_parse("7", 1, &lim, &v, &err), 0);
    cJSON_Delete(v);
    assert_int_equal(json_parse("[]", 2, &lim, &v, &err), -E2BIG);
}

static void test_node_and_size_limits(void **state)
{
    static const struct {
        const char *in;
        size_t nodes; /* cJSON items the value needs */
    } cases[] = {
        {"1", 1},
        {"[]", 1},
        {"[1,2]", 3},
        {"{\"a\":[],\"b\":{}}", 3},
        {"[[],[]]", 3},
        {"[\"a,b,c\"]", 2}, /* commas in strings do not count */
        {"{\"a\":{\"b\":{\"c\":null}}}", 4},
    };
    struct codec_limits lim = codec_default_limits;
    struct codec_error err;
    cJSON *v = NULL;
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        lim.max_nodes = cases[i].nodes;
        assert_int_equal(json_parse(cases[i].in, strlen(cases[i].in), &lim, &v, &err), 0);
        cJSON_Delete(v);
        lim.max_nodes = cases[i].nodes - 1;
        assert_int_equal(json_parse(cases[i].in, strlen(cases[i].in), &lim, &v, &err), -E2BIG);
        assert_non_null(strstr(err.msg, "values"));
    }

    lim = codec_default_limits;
    lim.max_bytes = 5;
    assert_int_equal(json_parse("12345", 5, &lim, &v, &err), 0);
    cJSON_Delete(v);
    assert_int_equal(json_parse("123456", 6, &lim, &v, &err), -E2BIG);
    assert_non_null(strstr(err.msg, "6 bytes"));
}

static void test_print(void **state)
{
    static const struct {
        const char *in;
        const char *compact;
        const char *pretty;
    } cases[] = {
        {"null", "null", "null"},
        {"\"x\"", "\"x\"", "\"x\""},
        {"[]", "[]", "[]"},
        {"{}", "{}", "{}"},
        {"[1,2]", "[1,2]", "[\n    1,\n    2\n]"},
        {"{\"a\":{},\"b\":[]}", "{\"a\":{},\"b\":[]}", "{\n    \"a\": {},\n    \"b\": []\n}"},
        {"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"app\":\"web\"}},"
         "\"spec\":{\"containers\":[{\"name\":\"c\",\"ports\":[80,443]}]}}",
         "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"app\":\"web\"}},"
         "\"spec\":{\"containers\":[{\"name\":\"c\",\"ports\":[80,443]}]}}",
         "{\n"
         "    \"kind\": \"Pod\",\n"
         "    \"metadata\": {\n"
         "        \"name\": \"p\",\n"
         "        \"labels\": {\n"
         "            \"app\": \"web\"\n"
         "        }\n"
         "    },\n"
         "    \"spec\": {\n"
         "        \"containers\": [\n"
         "            {\n"
         "                \"name\": \"c\",\n"
         "                \"ports\": [\n"
         "                    80,\n"
         "                    443\n"
         "                ]\n"
         "            }\n"
         "        ]\n"
         "    }\n"
         "}"},
    };
    struct strbuf sb = STRBUF_INIT;
    cJSON *v;
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        assert_int_equal(json_parse(cases[i].in, strlen(cases[i].in), NULL, &v, NULL), 0);
        strbuf_reset(&sb);
        assert_int_equal(json_print(v, &sb), 0);
        assert_string_equal(sb.buf, cases[i].compact);
        strbuf_reset(&sb);
        assert_int_equal(json_print_pretty(v, &sb), 0);
        assert_string_equal(sb.buf, cases[i].pretty);
        cJSON_Delete(v);
    }
    strbuf_release(&sb);
}

/* Trees built in code, with values JSON text cannot produce. */
static void test_print_built(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    cJSON *o = cJSON_CreateObject(), *nil = cJSON_CreateNull();

    (void)state;
    cJSON_AddNumberToObject(o, "big", 1e15);
    cJSON_AddNumberToObject(o, "max", 9007199254740992.0);
    cJSON_AddNumberToObject(o, "nan", NAN);
    cJSON_AddNumberToObject(o, "inf", INFINITY);
    cJSON_AddStringToObject(o, "esc", "q\"b\\n\n\t\x01\x7f");
    cJSON_AddRawToObject(o, "raw", "[1,2]");
    nil->type = cJSON_String; /* a string item without a string */
    cJSON_AddItemToObject(o, "nil", nil);
    assert_int_equal(json_print(o, &sb), 0);
    assert_string_equal(sb.buf, "{\"big\":1000000000000000,\"max\":9007199254740992,"
                                "\"nan\":null,\"inf\":null,"
                                "\"esc\":\"q\\\"b\\\\n\\n\\t\\u0001\x7f\",\"raw\":[1,2],"
                                "\"nil\":\"\"}");
    /* json_print appends. */
    strbuf_reset(&sb);
    strbuf_addstr(&sb, "x=");
    assert_int_equal(json_print(cJSON_GetObjectItem(o, "big"), &sb), 0);
    assert_string_equal(sb.buf, "x=1000000000000000");
    cJSON_Delete(o);
    strbuf_release(&sb);
}

/* print -> parse gives back an equal tree, numbers bit for bit. */
static void test_round_trip(void **state)
{
    static const char *const docs[] = {
        ("[0.1,0.2,0.30000000000000004,1e-7,123456.789,-2.2250738585072014e-308,"
         "1.7976931348623157e308,4.9406564584124654e-324,9007199254740993,12345678901234567890]"),
        "{\"a\":\"\\u2028\\u0000x\"}",
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"data\":{\"k\":\"line1\\nline2\",\"e\":"
        "\"\"}}",
        "[[[[[[]]]]],{\"\":{\"\":[null,true,false]}}]",
    };
    struct strbuf sb = STRBUF_INIT;
    cJSON *a, *b;
    size_t i;
    int r;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(docs); i++) {
        r = json_parse(docs[i], strlen(docs[i]), NULL, &a, NULL);
        if (i == 1) {
            assert_int_equal(r, -EINVAL); /* \u0000 is refused */
            continue;
        }
        assert_int_equal(r, 0);
        strbuf_reset(&sb);
        json_print(a, &sb);
        assert_int_equal(json_parse(sb.buf, sb.len, NULL, &b, NULL), 0);
        assert_true(cJSON_Compare(a, b, true));
        if (cJSON_IsArray(a)) {
            const cJSON *x, *y;

            for (x = a->child, y = b->child; x && y; x = x->next, y = y->next) {
                if (cJSON_IsNumber(x))
                    assert_memory_equal(&x->valuedouble, &y->valuedouble, sizeof(double));
            }
        }
        cJSON_Delete(b);
        strbuf_reset(&sb);
        json_print_pretty(a, &sb);
        assert_int_equal(json_parse(sb.buf, sb.len, NULL, &b, NULL), 0);
        assert_true(cJSON_Compare(a, b, true));
        cJSON_Delete(b);
        cJSON_Delete(a);
    }
    strbuf_release(&sb);
}

/* Every checked allocation failing in turn gives -ENOMEM, never a crash, leak or wrong code. */
static void test_alloc_failures(void **state)
{
    static const char in[] = "{\"metadata\":{\"name\":\"n\",\"labels\":{\"a\":\"1\",\"b\":\"2\"}},"
                             "\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5,\"k6\":6,\"k7\":7,"
                             "\"k8\":8,\"k9\":[1.5,true,null,\"s\\u00e9\"]}";
    struct codec_error err;
    cJSON *v;
    long n;
    int r;

    (void)state;
    for (n = 1;; n++) {
        v = NULL;
        alloc_fail_after(n);
        r = json_parse(in, sizeof(in) - 1, NULL, &v, &err);
        if (!alloc_injected()) {
            alloc_fail_after(0);
            assert_int_equal(r, 0);
            cJSON_Delete(v);
            break;
        }
        alloc_fail_after(0);
        if (r != -ENOMEM)
            fail_msg("allocation %ld: got %d (%s), want -ENOMEM", n, r, err.msg);
        assert_null(v);
    }
    assert_true(n > 20); /* the loop really covered the tree */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_ok),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_parse_not_terminated),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_node_and_size_limits),
        cmocka_unit_test(test_print),
        cmocka_unit_test(test_print_built),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_alloc_failures),
    };

    return cmocka_run_group_tests(tests, setup, NULL);
}
