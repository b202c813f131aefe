/*
 * Tests for api/labels: the apimachinery validators with their exact messages, labels.Parse
 * (grammar, errors, canonical String()), LabelSelectorAsSelector, matching truth tables, the
 * size limits and allocation-failure cleanup. Expectations are written from the upstream rules;
 * several messages are the ones Kubernetes' own tests and kubectl print.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/labels.h"
#include "base/base.h"

/* The upstream message strings, spelled out here independently of labels.c. */
#define QNAME_MSG                                                                                  \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "    \
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "         \
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define NAME_MSG "name part " QNAME_MSG
#define VALUE_MSG                                                                                  \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "    \
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "             \
    "'my_value',  or '12345', regex used for validation is "                                       \
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
#define SUB_MSG                                                                                    \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "   \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "  \
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define LABEL_MSG                                                                                  \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "   \
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "     \
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"

#define A10  "aaaaaaaaaa"
#define A63  A10 A10 A10 A10 A10 A10 "aaa"
#define A64  A63 "a"
#define A253 A63 A63 A63 A63 "a"
#define A254 A253 "a"

/* ---- validation ---- */

enum which { QNAME, VALUE, SUBDOMAIN, LABEL };

struct check_row {
    enum which fn;
    const char *in;
    const char *msg; /* NULL = valid */
};

static const struct check_row check_rows[] = {
    /* qualified names */
    {QNAME, "app", NULL},
    {QNAME, "a", NULL},
    {QNAME, "1", NULL},
    {QNAME, "App_1.x-Y", NULL},
    {QNAME, A63, NULL},
    {QNAME, "example.com/MyName", NULL},
    {QNAME, "kubernetes.io/batch-cpu", NULL},
    {QNAME, A253 "/x", NULL},
    {QNAME, "", "name part must be non-empty; " NAME_MSG},
    {QNAME, "-app", NAME_MSG},
    {QNAME, "app-", NAME_MSG},
    {QNAME, "_app", NAME_MSG},
    {QNAME, "a b", NAME_MSG},
    {QNAME, "app:monolith", NAME_MSG},
    {QNAME, A64, "name part must be no more than 63 characters"},
    {QNAME, A64 "-", "name part must be no more than 63 characters; " NAME_MSG},
    {QNAME, "/app", "prefix part must be non-empty"},
    {QNAME, "example.com/", "name part must be non-empty; " NAME_MSG},
    {QNAME, "/", "prefix part must be non-empty; name part must be non-empty; " NAME_MSG},
    {QNAME, "Example.com/app", "prefix part " SUB_MSG},
    {QNAME, "app.kubernetes_io/name", "prefix part " SUB_MSG},
    {QNAME, A254 "/x", "prefix part must be no more than 253 characters"},
    {QNAME, A254 "-/x", "prefix part must be no more than 253 characters; prefix part " SUB_MSG},
    {QNAME, "a/b/c",
     "a qualified name " QNAME_MSG " with an optional DNS subdomain prefix and '/' (e.g. "
     "'example.com/MyName')"},
    /* label values */
    {VALUE, "", NULL},
    {VALUE, "MyValue", NULL},
    {VALUE, "my_value", NULL},
    {VALUE, "12345", NULL},
    {VALUE, "a.b-c_d", NULL},
    {VALUE, A63, NULL},
    {VALUE, "-x", VALUE_MSG},
    {VALUE, "x.", VALUE_MSG},
    {VALUE, "x y", VALUE_MSG},
    {VALUE, "a/b", VALUE_MSG},
    {VALUE, A64, "must be no more than 63 characters"},
    {VALUE, A63 "-", "must be no more than 63 characters; " VALUE_MSG},
    /* DNS-1123 subdomains */
    {SUBDOMAIN, "example.com", NULL},
    {SUBDOMAIN, "a", NULL},
    {SUBDOMAIN, "a-b.c1", NULL},
    {SUBDOMAIN, A253, NULL},
    {SUBDOMAIN, "", SUB_MSG},
    {SUBDOMAIN, "Example.com", SUB_MSG},
    {SUBDOMAIN, "a..b", SUB_MSG},
    {SUBDOMAIN, ".a", SUB_MSG},
    {SUBDOMAIN, "a.", SUB_MSG},
    {SUBDOMAIN, "-a", SUB_MSG},
    {SUBDOMAIN, "a_b", SUB_MSG},
    {SUBDOMAIN, A254, "must be no more than 253 characters"},
    /* DNS-1123 labels */
    {LABEL, "my-name", NULL},
    {LABEL, "123-abc", NULL},
    {LABEL, A63, NULL},
    {LABEL, "a.b", "must not contain dots"},
    {LABEL, "", LABEL_MSG},
    {LABEL, "My", LABEL_MSG},
    {LABEL, "-a", LABEL_MSG},
    {LABEL, "a_b", LABEL_MSG},
    {LABEL, A64, "must be no more than 63 characters"},
    {LABEL, A64 ".", "must be no more than 63 characters; " LABEL_MSG},
};

static void test_check_table(void **state)
{
    static int (*const fns[])(const char *, struct strbuf *) = {
        [QNAME] = labels_check_qualified_name,
        [VALUE] = labels_check_value,
        [SUBDOMAIN] = labels_check_dns1123_subdomain,
        [LABEL] = labels_check_dns1123_label,
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(check_rows); i++) {
        const struct check_row *row = &check_rows[i];
        struct strbuf why = STRBUF_INIT;
        int r = fns[row->fn](row->in, &why);

        if (r != (row->msg ? -EINVAL : 0) || strcmp(why.buf, row->msg ? row->msg : "") != 0)
            fail_msg("row %zu \"%s\": r=%d why=\"%s\"; want \"%s\"", i, row->in, r, why.buf,
                     row->msg ? row->msg : "");
        /* A NULL why only counts. */
        assert_int_equal(fns[row->fn](row->in, NULL), r);
        strbuf_release(&why);
    }
}

/* ---- labels.Parse ---- */

struct parse_row {
    const char *in;
    int r;
    const char *out; /* canonical form when r == 0, else the error message */
};

static const struct parse_row parse_rows[] = {
    /* accepted, with the canonical form */
    {"", 0, ""},
    {"  \t ", 0, ""},
    {"x=a", 0, "x=a"},
    {"x==a", 0, "x==a"},
    {"x!=a", 0, "x!=a"},
    {"x", 0, "x"},
    {"!x", 0, "!x"},
    {"! x", 0, "!x"},
    {"y=b,x=a", 0, "x=a,y=b"},
    {" x = a , y != b ", 0, "x=a,y!=b"},
    {"\tx\r\n", 0, "x"},
    {"x=", 0, "x="},
    {"x=,y=b", 0, "x=,y=b"},
    {"x in (c,a,b)", 0, "x in (a,b,c)"},
    {"x in(a)", 0, "x in (a)"},
    {"x in (a,a)", 0, "x in (a)"},
    {"x notin (b,a)", 0, "x notin (a,b)"},
    {"x in ()", 0, "x in ()"},
    {"x in (,a)", 0, "x in (,a)"},
    {"x in (a,)", 0, "x in (,a)"},
    {"x in (a,,b)", 0, "x in (,a,b)"},
    {"n>3", 0, "n>3"},
    {"n<10", 0, "n<10"},
    {"x in (in,notin)", 0, "x in (in,notin)"},
    {"in in (in)", 0, "in in (in)"},
    {"notin=in", 0, "notin=in"},
    {"x=a,x=b", 0, "x=a,x=b"},
    {"x=b,x!=a", 0, "x=b,x!=a"},
    {"example.com/app in (web,db),!example.com/legacy", 0,
     "example.com/app in (db,web),!example.com/legacy"},
    {"a=b,c in (x,y),!d,e!=f,g==h,k,x notin (a),n>3,m<2", 0,
     "a=b,c in (x,y),!d,e!=f,g==h,k,m<2,n>3,x notin (a)"},
    /* grammar errors */
    {",", -EINVAL, "found ',', expected: !, identifier, or 'end of string'"},
    {"(", -EINVAL, "found '(', expected: !, identifier, or 'end of string'"},
    {"!=a", -EINVAL, "found '!=', expected: !, identifier, or 'end of string'"},
    {"x=a,", -EINVAL, "found '', expected: identifier after ','"},
    {"x=a,,y", -EINVAL, "found ',', expected: identifier after ','"},
    {"x=a b", -EINVAL, "found 'b', expected: ',' or 'end of string'"},
    {"!x=a", -EINVAL, "found '=', expected: ',' or 'end of string'"},
    {"!", -EINVAL, "unable to parse requirement: found '', expected: identifier"},
    {"!!x", -EINVAL, "unable to parse requirement: found '!', expected: identifier"},
    {"x y", -EINVAL,
     "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt"},
    {"x !", -EINVAL,
     "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt"},
    {"x in a", -EINVAL, "unable to parse requirement: found 'a' expected: '('"},
    {"x in (", -EINVAL, "unable to parse requirement: found '', expected: ',', ')' or identifier"},
    {"x in (=)", -EINVAL,
     "unable to parse requirement: found '=', expected: ',', ')' or identifier"},
    {"x in (a", -EINVAL, "unable to parse requirement: found '', expected: ',' or ')'"},
    {"x in (a b)", -EINVAL, "unable to parse requirement: found 'b', expected: ',' or ')'"},
    {"x in (a,=)", -EINVAL, "unable to parse requirement: found '=', expected: ',', or identifier"},
    /* Go consumes ",," as one empty value and then finds ')' where it wants a value. */
    {"x in (,,)", -EINVAL, "unable to parse requirement: found ')', expected: ',', or identifier"},
    {"x=(", -EINVAL, "unable to parse requirement: found '(', expected: identifier"},
    {"x===a", -EINVAL, "unable to parse requirement: found '=', expected: identifier"},
    {"x>=3", -EINVAL, "unable to parse requirement: found '=', expected: identifier"},
    /* validation errors */
    {"app:monolith", -EINVAL,
     "unable to parse requirement: <nil>: Invalid value: \"app:monolith\": " NAME_MSG},
    {"a/b/c ?=? def", -EINVAL,
     "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a qualified name " QNAME_MSG
     " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"},
    {"x=-bad", -EINVAL,
     "unable to parse requirement: values[0][x]: Invalid value: \"-bad\": " VALUE_MSG},
    {"x=\"a\"", -EINVAL,
     "unable to parse requirement: values[0][x]: Invalid value: \"\\\"a\\\"\": " VALUE_MSG},
    /* values are sorted before validation, so "-b" is values[0] */
    {"x in (a,-b)", -EINVAL,
     "unable to parse requirement: values[0][x]: Invalid value: \"-b\": " VALUE_MSG},
    {"x>a", -EINVAL,
     "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, "
     "the value must be an integer"},
    {"x>", -EINVAL,
     "unable to parse requirement: values[0]: Invalid value: \"\": for 'Gt', 'Lt' operators, "
     "the value must be an integer"},
    {"x<-3", -EINVAL,
     "unable to parse requirement: values[0][x]: Invalid value: \"-3\": " VALUE_MSG},
    {"x>_1", -EINVAL,
     "unable to parse requirement: [values[0]: Invalid value: \"_1\": for 'Gt', 'Lt' operators, "
     "the value must be an integer, values[0][x]: Invalid value: \"_1\": " VALUE_MSG "]"},
    {"n>99999999999999999999", -EINVAL,
     "unable to parse requirement: values[0]: Invalid value: \"99999999999999999999\": for 'Gt', "
     "'Lt' operators, the value must be an integer"},
};

static void test_parse_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(parse_rows); i++) {
        const struct parse_row *row = &parse_rows[i];
        struct label_selector *sel = NULL;
        struct strbuf err = STRBUF_INIT, out = STRBUF_INIT;
        int r = label_selector_parse(row->in, &sel, &err);

        if (r == 0)
            label_selector_format(sel, &out);
        if (r != row->r || strcmp(r == 0 ? out.buf : err.buf, row->out) != 0)
            fail_msg("parse(\"%s\") = %d \"%s\" / \"%s\"; want %d \"%s\"", row->in, r, out.buf,
                     err.buf, row->r, row->out);
        if (r == 0) {
            assert_string_equal(err.buf, "");
            assert_int_equal(label_selector_is_empty(sel), row->out[0] == '\0');
        } else {
            assert_null(sel);
        }
        label_selector_free(sel);
        strbuf_release(&err);
        strbuf_release(&out);
    }
}

/* ---- matching ---- */

struct match_row {
    const char *sel;
    const char *labels; /* JSON object, or NULL for no labels */
    bool want;
};

static const struct match_row match_rows[] = {
    {"", "{}", true},
    {"", NULL, true},
    {"x=a", "{\"x\":\"a\"}", true},
    {"x=a", "{\"x\":\"b\"}", false},
    {"x=a", "{\"y\":\"a\"}", false},
    {"x=a", NULL, false},
    {"x=a", "{\"x\":1}", false}, /* non-string members count as absent */
    {"x==a", "{\"x\":\"a\"}", true},
    {"x!=a", "{\"x\":\"a\"}", false},
    {"x!=a", "{\"x\":\"b\"}", true},
    {"x!=a", "{}", true},
    {"x in (a,b)", "{\"x\":\"b\"}", true},
    {"x in (a,b)", "{\"x\":\"c\"}", false},
    {"x in (a,b)", "{}", false},
    {"x notin (a,b)", "{\"x\":\"b\"}", false},
    {"x notin (a,b)", "{\"x\":\"c\"}", true},
    {"x notin (a,b)", NULL, true},
    {"x", "{\"x\":\"\"}", true},
    {"x", "{\"y\":\"x\"}", false},
    {"!x", "{\"x\":\"a\"}", false},
    {"!x", "{\"y\":\"a\"}", true},
    {"!x", "{\"x\":null}", true},
    {"x=", "{\"x\":\"\"}", true},
    {"x=", "{\"x\":\"a\"}", false},
    {"x=", "{}", false},
    {"x in ()", "{\"x\":\"\"}", true},
    {"x in (,a)", "{\"x\":\"a\"}", true},
    {"n>3", "{\"n\":\"4\"}", true},
    {"n>3", "{\"n\":\"3\"}", false},
    {"n>3", "{\"n\":\"+4\"}", true},
    {"n>3", "{\"n\":\"x\"}", false},
    {"n>3", "{\"n\":\"\"}", false},
    {"n>3", "{}", false},
    {"n<3", "{\"n\":\"-5\"}", true},
    {"n<3", "{\"n\":\"2\"}", true},
    {"n<3", "{\"n\":\"3\"}", false},
    {"n<3", "{\"n\":\"-9223372036854775808\"}", true},
    {"n<3", "{\"n\":\"-9223372036854775809\"}", false}, /* ParseInt overflow: no match */
    {"n>0", "{\"n\":\"9223372036854775807\"}", true},
    {"n>0", "{\"n\":\"1_000\"}", false},
    {"a=b,c in (x,y),!d", "{\"a\":\"b\",\"c\":\"y\"}", true},
    {"a=b,c in (x,y),!d", "{\"a\":\"b\",\"c\":\"y\",\"d\":\"\"}", false},
    {"a=b,c in (x,y),!d", "{\"a\":\"b\"}", false},
    {"example.com/app in (web,db),tier", "{\"example.com/app\":\"db\",\"tier\":\"1\"}", true},
};

static void test_match_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(match_rows); i++) {
        const struct match_row *row = &match_rows[i];
        struct label_selector *sel = NULL;
        cJSON *labels = row->labels ? cJSON_Parse(row->labels) : NULL;

        assert_true(!row->labels || labels);
        assert_int_equal(label_selector_parse(row->sel, &sel, NULL), 0);
        if (label_selector_matches(sel, labels) != row->want)
            fail_msg("\"%s\" on %s: want %d", row->sel, row->labels ? row->labels : "NULL",
                     row->want);
        label_selector_free(sel);
        cJSON_Delete(labels);
    }
}

/* ---- LabelSelectorAsSelector ---- */

struct json_row {
    const char *json; /* NULL = C NULL */
    const char *out;  /* format on success, message on failure */
    int r;
    bool empty;      /* label_selector_is_empty */
    bool matches_x1; /* matches {"x":"1"} */
};

static const struct json_row json_rows[] = {
    {NULL, "", 0, false, false},
    {"null", "", 0, false, false},
    {"{}", "", 0, true, true},
    {"{\"matchLabels\":{}}", "", 0, true, true},
    {"{\"matchLabels\":null,\"matchExpressions\":[]}", "", 0, true, true},
    {"{\"matchLabels\":{\"x\":\"1\"}}", "x=1", 0, false, true},
    {"{\"matchLabels\":{\"x\":\"2\"}}", "x=2", 0, false, false},
    {"{\"matchLabels\":{\"y\":\"2\",\"x\":\"1\"}}", "x=1,y=2", 0, false, false},
    {"{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"In\",\"values\":[\"2\",\"1\"]}]}",
     "x in (1,2)", 0, false, true},
    {"{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"In\",\"values\":[\"2\",\"1\",\"2\"]}]}",
     "x in (1,2,2)", 0, false, true},
    {"{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"NotIn\",\"values\":[\"1\"]}]}",
     "x notin (1)", 0, false, false},
    {"{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"Exists\"}]}", "x", 0, false, true},
    {"{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"DoesNotExist\",\"values\":null}]}", "!x",
     0, false, false},
    {"{\"matchLabels\":{\"z\":\"1\"},\"matchExpressions\":[{\"key\":\"a\",\"operator\":"
     "\"DoesNotExist\"}],\"ignored\":true}",
     "!a,z=1", 0, false, false},
    /* errors */
    {"[]", "label selector must be an object", -EINVAL, false, false},
    {"{\"matchLabels\":[]}", "matchLabels must be an object", -EINVAL, false, false},
    {"{\"matchExpressions\":{}}", "matchExpressions must be an array", -EINVAL, false, false},
    {"{\"matchLabels\":{\"a\":1}}", "matchLabels: value of \"a\" must be a string", -EINVAL, false,
     false},
    {"{\"matchLabels\":{\"a b\":\"c\"}}", "key: Invalid value: \"a b\": " NAME_MSG, -EINVAL, false,
     false},
    {"{\"matchLabels\":{\"a\":\"b c\"}}", "values[0][a]: Invalid value: \"b c\": " VALUE_MSG,
     -EINVAL, false, false},
    {"{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"In\"}]}",
     "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be "
     "empty",
     -EINVAL, false, false},
    {"{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"NotIn\",\"values\":[]}]}",
     "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be "
     "empty",
     -EINVAL, false, false},
    {"{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"Exists\",\"values\":[\"a\",\"b\"]}]}",
     "values: Invalid value: []string{\"a\", \"b\"}: values set must be empty for exists and does "
     "not exist",
     -EINVAL, false, false},
    {"{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"Gt\",\"values\":[\"1\"]}]}",
     "\"Gt\" is not a valid label selector operator", -EINVAL, false, false},
    {"{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"in\",\"values\":[\"1\"]}]}",
     "\"in\" is not a valid label selector operator", -EINVAL, false, false},
    {"{\"matchExpressions\":[{\"key\":\"x\"}]}", "\"\" is not a valid label selector operator",
     -EINVAL, false, false},
    {"{\"matchExpressions\":[{\"operator\":\"Exists\"}]}",
     "key: Invalid value: \"\": name part must be non-empty; " NAME_MSG, -EINVAL, false, false},
    {"{\"matchExpressions\":[{\"key\":\"-x\",\"operator\":\"In\",\"values\":[\"ok\",\"-v\"]}]}",
     "[key: Invalid value: \"-x\": " NAME_MSG ", values[1][-x]: Invalid value: \"-v\": " VALUE_MSG
     "]",
     -EINVAL, false, false},
    {"{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"In\",\"values\":[1]}]}",
     "matchExpressions[0]: values must be strings", -EINVAL, false, false},
    {"{\"matchExpressions\":[\"x\"]}", "matchExpressions[0]: must be an object", -EINVAL, false,
     false},
};

static void test_json_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(json_rows); i++) {
        const struct json_row *row = &json_rows[i];
        cJSON *js = row->json ? cJSON_Parse(row->json) : NULL, *x1 = cJSON_Parse("{\"x\":\"1\"}");
        struct label_selector *sel = NULL;
        struct strbuf err = STRBUF_INIT, out = STRBUF_INIT;
        int r;

        assert_true(!row->json || js);
        r = label_selector_from_json(js, &sel, &err);
        if (r == 0)
            label_selector_format(sel, &out);
        if (r != row->r || strcmp(r == 0 ? out.buf : err.buf, row->out) != 0)
            fail_msg("from_json(%s) = %d \"%s\" / \"%s\"; want %d \"%s\"",
                     row->json ? row->json : "NULL", r, out.buf, err.buf, row->r, row->out);
        if (r == 0) {
            assert_int_equal(label_selector_is_empty(sel), row->empty);
            assert_int_equal(label_selector_matches(sel, x1), row->matches_x1);
        }
        label_selector_free(sel);
        strbuf_release(&err);
        strbuf_release(&out);
        cJSON_Delete(js);
        cJSON_Delete(x1);
    }
}

/* ---- limits ---- */

static void test_limits(void **state)
{
    struct label_selector *sel = NULL;
    struct strbuf s = STRBUF_INIT, err = STRBUF_INIT;
    cJSON *js, *ml;
    (void)state;

    /* A string of exactly the limit passes, one byte more does not. */
    strbuf_addstr(&s, "x=a");
    while (s.len < LABEL_SELECTOR_MAX_STR)
        strbuf_addch(&s, ' ');
    assert_int_equal(label_selector_parse(s.buf, &sel, &err), 0);
    assert_int_equal(label_selector_matches(sel, NULL), false);
    label_selector_free(sel);
    sel = NULL;
    strbuf_addch(&s, ' ');
    assert_int_equal(label_selector_parse(s.buf, &sel, &err), -E2BIG);
    assert_null(sel);
    assert_string_equal(err.buf, "label selector is too large");

    /* LABEL_SELECTOR_MAX_REQS requirements pass, one more does not. */
    strbuf_reset(&s);
    for (int i = 0; i < LABEL_SELECTOR_MAX_REQS; i++)
        strbuf_addf(&s, "%sk%d", i ? "," : "", i);
    assert_int_equal(label_selector_parse(s.buf, &sel, NULL), 0);
    label_selector_free(sel);
    sel = NULL;
    strbuf_addstr(&s, ",extra");
    assert_int_equal(label_selector_parse(s.buf, &sel, NULL), -E2BIG);
    assert_null(sel);

    js = cJSON_CreateObject();
    ml = cJSON_AddObjectToObject(js, "matchLabels");
    for (int i = 0; i <= LABEL_SELECTOR_MAX_REQS; i++) {
        strbuf_reset(&s);
        strbuf_addf(&s, "k%d", i);
        cJSON_AddStringToObject(ml, s.buf, "v");
    }
    assert_int_equal(label_selector_from_json(js, &sel, NULL), -E2BIG);
    assert_null(sel);
    cJSON_Delete(js);

    strbuf_release(&s);
    strbuf_release(&err);
}

/* ---- fault injection: every allocation failure returns -ENOMEM and leaks nothing ---- */

static const char complex_sel[] = "a=b,c in (x,y,z,w,v,u,t,s,r),!d,e!=f,g==h,k,x notin (a,,b),"
                                  "n>3,m<2,example.com/app in (web,db),q=1,r=2,s=3";

static void test_alloc_failures_parse(void **state)
{
    long n;
    (void)state;

    for (n = 1;; n++) {
        struct label_selector *sel = NULL;
        int r, injected;

        alloc_fail_after(n);
        r = label_selector_parse(complex_sel, &sel, NULL);
        injected = alloc_injected();
        alloc_fail_after(0);
        if (!injected) {
            struct strbuf out = STRBUF_INIT;

            assert_int_equal(r, 0);
            label_selector_format(sel, &out);
            assert_string_equal(out.buf, "a=b,c in (r,s,t,u,v,w,x,y,z),!d,e!=f,"
                                         "example.com/app in (db,web),g==h,k,m<2,n>3,q=1,r=2,s=3,"
                                         "x notin (,a,b)");
            strbuf_release(&out);
            label_selector_free(sel);
            break;
        }
        assert_int_equal(r, -ENOMEM);
        assert_null(sel);
    }
    assert_true(n > 5); /* the loop really failed several allocations */
}

static void test_alloc_failures_json(void **state)
{
    cJSON *js = cJSON_Parse("{\"matchLabels\":{\"a\":\"1\",\"b\":\"2\",\"c\":\"3\",\"d\":\"4\","
                            "\"e\":\"5\"},\"matchExpressions\":[{\"key\":\"x\",\"operator\":"
                            "\"In\",\"values\":[\"3\",\"2\",\"1\"]},{\"key\":\"y\",\"operator\":"
                            "\"Exists\"}]}");
    long n;
    (void)state;

    assert_non_null(js);
    for (n = 1;; n++) {
        struct label_selector *sel = NULL;
        int r, injected;

        alloc_fail_after(n);
        r = label_selector_from_json(js, &sel, NULL);
        injected = alloc_injected();
        alloc_fail_after(0);
        if (!injected) {
            struct strbuf out = STRBUF_INIT;

            assert_int_equal(r, 0);
            label_selector_format(sel, &out);
            assert_string_equal(out.buf, "a=1,b=2,c=3,d=4,e=5,x in (1,2,3),y");
            strbuf_release(&out);
            label_selector_free(sel);
            break;
        }
        assert_int_equal(r, -ENOMEM);
        assert_null(sel);
    }
    assert_true(n > 5);
    cJSON_Delete(js);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_table),
        cmocka_unit_test(test_parse_table),
        cmocka_unit_test(test_match_table),
        cmocka_unit_test(test_json_table),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_alloc_failures_parse),
        cmocka_unit_test(test_alloc_failures_json),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
