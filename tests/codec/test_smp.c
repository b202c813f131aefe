/*
 * Tests for src/codec/smp.c: every rule and directive of strategic merge patch as a table of
 * document, patch and the result written out by hand from the rules in smp.h (upstream
 * strategicpatch/patch.go), the malformed patches with their messages, the all-or-nothing
 * guarantee, the depth bounds, a large list merged by key, and allocation failure at every step.
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
#include "codec/smp.h"

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

/* What lookup() wants as userdata, to show it is passed through. */
static const int kind_token;
static const void *const table_addr = &kind_token;

/* The test kind: "list" merges objects by name, "set" is a set of scalars, "atomic" and
 * everything else is replaced; nested lists under list elements and objects. */
static bool lookup(const char *path, const void *userdata, struct smp_list_meta *ret)
{
    static const struct {
        const char *path, *key;
    } table[] = {
        {"list", "name"}, {"list.sub", "k"}, {"set", NULL}, {"obj.items", "id"}, {"list.set", NULL},
    };

    assert_ptr_equal(userdata, &kind_token);
    for (size_t i = 0; i < ARRAY_SIZE(table); i++) {
        if (!strcmp(table[i].path, path)) {
            *ret = (struct smp_list_meta){.merge = true, .merge_key = table[i].key};
            return true;
        }
    }
    return false;
}

/* Applies patch to doc; on failure checks the document is untouched. Returns r; *ret_out is the
 * compact result (caller frees). */
static int run(const char *doc, const char *patch, char **ret_out, struct codec_error *err)
{
    cJSON *d = parse(doc), *p = parse(patch), *before = d;
    char *orig = print(d);
    int r;

    r = strategic_merge_patch_apply(&d, p, lookup, table_addr, err);
    *ret_out = print(d);
    if (r < 0) {
        assert_ptr_equal(d, before);
        assert_string_equal(*ret_out, orig);
    }
    free(orig);
    cJSON_Delete(d);
    cJSON_Delete(p);
    return r;
}

struct smp_case {
    const char *what, *doc, *patch, *want;
};

static const struct smp_case cases[] = {
    /* Objects. */
    {"maps merge, null deletes", "{\"a\":1,\"b\":{\"c\":1,\"d\":2}}",
     "{\"b\":{\"c\":null,\"e\":3},\"f\":4,\"g\":null}",
     "{\"a\":1,\"b\":{\"d\":2,\"e\":3},\"f\":4}"},
    {"a different type replaces", "{\"a\":\"s\",\"b\":{\"c\":1}}", "{\"a\":{\"x\":1},\"b\":[1]}",
     "{\"a\":{\"x\":1},\"b\":[1]}"},
    {"new members lose their nulls", "{}", "{\"a\":{\"b\":null,\"c\":{\"d\":null,\"e\":1}}}",
     "{\"a\":{\"c\":{\"e\":1}}}"},
    {"$patch replace in an object", "{\"m\":{\"a\":1,\"b\":{\"x\":1}}}",
     "{\"m\":{\"$patch\":\"replace\",\"b\":{\"y\":2}}}", "{\"m\":{\"b\":{\"y\":2}}}"},
    {"$patch delete in an object", "{\"m\":{\"a\":1},\"n\":1}", "{\"m\":{\"$patch\":\"delete\"}}",
     "{\"m\":{},\"n\":1}"},
    {"$patch delete at the root", "{\"a\":1}", "{\"$patch\":\"delete\",\"b\":2}", "{}"},
    {"$retainKeys", "{\"u\":{\"a\":1,\"b\":2,\"c\":3}}",
     "{\"u\":{\"$retainKeys\":[\"a\",\"d\"],\"d\":4,\"b\":null}}", "{\"u\":{\"a\":1,\"d\":4}}"},
    /* Atomic lists. */
    {"atomic lists are replaced", "{\"atomic\":[1,2],\"x\":[{\"name\":\"a\"}]}",
     "{\"atomic\":[3],\"x\":[{\"name\":\"b\"}]}", "{\"atomic\":[3],\"x\":[{\"name\":\"b\"}]}"},
    {"atomic list elements are built afresh", "{}", "{\"atomic\":[{\"a\":null,\"b\":1},[2],null]}",
     "{\"atomic\":[{\"b\":1},[2],null]}"},
    {"order on an atomic list is ignored", "{\"atomic\":[\"a\",\"b\"]}",
     "{\"atomic\":[\"b\",\"a\"],\"$setElementOrder/atomic\":[\"a\",\"b\"]}",
     "{\"atomic\":[\"b\",\"a\"]}"},
    /* Sets. */
    {"set union keeps the original order", "{\"set\":[\"a\",\"b\"]}", "{\"set\":[\"b\",\"c\"]}",
     "{\"set\":[\"a\",\"b\",\"c\"]}"},
    {"new set members come first (mergeSortedSlice)", "{\"set\":[\"a\",\"b\"]}",
     "{\"set\":[\"c\"]}", "{\"set\":[\"c\",\"a\",\"b\"]}"},
    {"set duplicates go", "{\"set\":[\"a\",\"a\"]}", "{\"set\":[\"b\",\"b\"]}",
     "{\"set\":[\"b\",\"a\"]}"},
    {"set of numbers", "{\"set\":[1,2]}", "{\"set\":[2.0,3]}", "{\"set\":[1,2,3]}"},
    {"$deleteFromPrimitiveList", "{\"set\":[\"a\",\"b\",\"c\",\"b\"]}",
     "{\"$deleteFromPrimitiveList/set\":[\"b\",\"x\"]}", "{\"set\":[\"a\",\"c\"]}"},
    {"additions then deletions", "{\"set\":[\"a\"]}",
     "{\"set\":[\"b\"],\"$deleteFromPrimitiveList/set\":[\"a\"]}", "{\"set\":[\"b\"]}"},
    {"deletions from a missing list", "{}", "{\"$deleteFromPrimitiveList/set\":[\"a\"]}", "{}"},
    {"$setElementOrder on a set", "{\"set\":[\"a\",\"b\",\"c\"]}",
     "{\"$setElementOrder/set\":[\"c\",\"b\",\"a\"]}", "{\"set\":[\"c\",\"b\",\"a\"]}"},
    {"kubectl set edit", "{\"set\":[\"a\",\"b\",\"s\"]}",
     "{\"$setElementOrder/set\":[\"c\",\"a\"],\"set\":[\"c\"],"
     "\"$deleteFromPrimitiveList/set\":[\"b\"]}",
     "{\"set\":[\"c\",\"a\",\"s\"]}"},
    /* Lists of objects. */
    {"merge by key", "{\"list\":[{\"name\":\"a\",\"v\":1},{\"name\":\"b\",\"v\":2,\"w\":1}]}",
     "{\"list\":[{\"name\":\"b\",\"v\":3,\"w\":null}]}",
     "{\"list\":[{\"name\":\"a\",\"v\":1},{\"name\":\"b\",\"v\":3}]}"},
    {"new elements by the patch order", "{\"list\":[{\"name\":\"a\"},{\"name\":\"b\"}]}",
     "{\"list\":[{\"name\":\"c\"},{\"name\":\"b\",\"v\":1}]}",
     "{\"list\":[{\"name\":\"c\"},{\"name\":\"a\"},{\"name\":\"b\",\"v\":1}]}"},
    {"patch order moves listed elements", "{\"list\":[{\"name\":\"a\"},{\"name\":\"b\"}]}",
     "{\"list\":[{\"name\":\"b\"},{\"name\":\"a\"}]}",
     "{\"list\":[{\"name\":\"b\"},{\"name\":\"a\"}]}"},
    {"$patch delete removes every match",
     "{\"list\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"a\",\"v\":2}]}",
     "{\"list\":[{\"$patch\":\"delete\",\"name\":\"a\"}]}", "{\"list\":[{\"name\":\"b\"}]}"},
    {"$patch replace in a list", "{\"list\":[{\"name\":\"a\",\"v\":1}]}",
     "{\"list\":[{\"name\":\"z\",\"v\":null},{\"$patch\":\"replace\"}]}",
     "{\"list\":[{\"name\":\"z\"}]}"},
    {"first of duplicate keys takes the merge", "{\"list\":[{\"name\":\"a\"},{\"name\":\"a\"}]}",
     "{\"list\":[{\"name\":\"a\",\"v\":1}]}",
     "{\"list\":[{\"name\":\"a\",\"v\":1},{\"name\":\"a\"}]}"},
    {"numeric merge keys", "{\"obj\":{\"items\":[{\"id\":80,\"p\":\"a\"},{\"id\":81}]}}",
     "{\"obj\":{\"items\":[{\"id\":80.0,\"p\":\"b\"},{\"$patch\":\"delete\",\"id\":81}]}}",
     "{\"obj\":{\"items\":[{\"id\":80,\"p\":\"b\"}]}}"},
    {"a new list is merged into nothing", "{}",
     "{\"list\":[{\"name\":\"a\",\"x\":null},{\"$patch\":\"delete\",\"name\":\"q\"},"
     "{\"name\":\"a\",\"y\":1}]}",
     "{\"list\":[{\"name\":\"a\",\"y\":1}]}"},
    {"$setElementOrder reorders alone",
     "{\"list\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]}",
     "{\"$setElementOrder/list\":[{\"name\":\"c\"},{\"name\":\"a\"},{\"name\":\"b\"}]}",
     "{\"list\":[{\"name\":\"c\"},{\"name\":\"a\"},{\"name\":\"b\"}]}"},
    {"elements only the server has keep their place",
     "{\"list\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]}",
     "{\"$setElementOrder/list\":[{\"name\":\"c\"},{\"name\":\"a\"}],"
     "\"list\":[{\"name\":\"c\",\"v\":9}]}",
     "{\"list\":[{\"name\":\"b\"},{\"name\":\"c\",\"v\":9},{\"name\":\"a\"}]}"},
    {"$setElementOrder for a new list", "{}",
     "{\"$setElementOrder/list\":[{\"name\":\"b\"},{\"name\":\"a\"}],"
     "\"list\":[{\"name\":\"b\"},{\"name\":\"a\"}]}",
     "{\"list\":[{\"name\":\"b\"},{\"name\":\"a\"}]}"},
    {"$setElementOrder of a missing list", "{}", "{\"$setElementOrder/list\":[{\"name\":\"a\"}]}",
     "{}"},
    {"kubectl apply: env edited, port gone, containers reordered",
     "{\"list\":[{\"name\":\"a\",\"sub\":[{\"k\":\"x\",\"v\":\"1\"},{\"k\":\"y\",\"v\":\"2\"}],"
     "\"set\":[\"p\"]},{\"name\":\"b\"}]}",
     "{\"$setElementOrder/list\":[{\"name\":\"b\"},{\"name\":\"a\"}],"
     "\"list\":[{\"name\":\"a\",\"$setElementOrder/sub\":[{\"k\":\"x\"}],"
     "\"sub\":[{\"k\":\"x\",\"v\":\"9\"},{\"$patch\":\"delete\",\"k\":\"y\"}],\"set\":null}]}",
     "{\"list\":[{\"name\":\"b\"},{\"name\":\"a\",\"sub\":[{\"k\":\"x\",\"v\":\"9\"}]}]}"},
    {"empty lists", "{\"list\":[],\"set\":[]}", "{\"list\":[],\"set\":[]}",
     "{\"list\":[],\"set\":[]}"},
    {"other $ names are members", "{\"s\":{\"$ref\":\"#/a\",\"x\":1}}",
     "{\"s\":{\"$ref\":\"#/b\",\"$schema\":{\"a\":1},\"x\":null}}",
     "{\"s\":{\"$ref\":\"#/b\",\"$schema\":{\"a\":1}}}"},
    {"a non-object document is {}", "[1]", "{\"a\":1}", "{\"a\":1}"},
};

static void test_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct codec_error err = {0};
        char *out = NULL;
        int r = run(cases[i].doc, cases[i].patch, &out, &err);

        if (r != 0)
            fail_msg("%s: r = %d: %s", cases[i].what, r, err.msg);
        if (strcmp(out, cases[i].want) != 0)
            fail_msg("%s: got %s, want %s", cases[i].what, out, cases[i].want);
        free(out);
    }
}

static const struct smp_case errors[] = {
    {"not an object", "{}", "[]", "a strategic merge patch must be a JSON object"},
    {"$patch merge in an object", "{}", "{\"m\":{\"$patch\":\"merge\"}}",
     "m: unknown patch type \"merge\" in an object"},
    {"$patch not a string", "{}", "{\"$patch\":1}",
     "unknown patch type \"(not a string)\" in an object"},
    {"$patch merge in a list", "{\"list\":[]}", "{\"list\":[{\"$patch\":\"merge\"}]}",
     "list: merging lists cannot yet be specified in the patch"},
    {"unknown $patch in a list", "{}", "{\"list\":[{\"$patch\":\"x\",\"name\":\"a\"}]}",
     "list: unknown patch type \"x\" in patch element 0"},
    {"no merge key", "{}", "{\"list\":[{\"name\":\"a\"},{\"v\":1}]}",
     "list: patch element 1 has no merge key \"name\""},
    {"merge key not a scalar", "{}", "{\"list\":[{\"name\":{}}]}",
     "list: patch element 0 has no merge key \"name\""},
    {"delete without merge key", "{}", "{\"list\":[{\"$patch\":\"delete\"}]}",
     "list: patch element 0 deletes without merge key \"name\""},
    {"original element without merge key", "{\"list\":[{\"v\":1}]}",
     "{\"list\":[{\"name\":\"a\"}]}", "list: element 0 of the object has no merge key \"name\""},
    {"unknown directive", "{}", "{\"a\":{\"$foo/x\":1}}", "a: unknown directive \"$foo/x\""},
    {"list directive without its field", "{}", "{\"$setElementOrder\":[]}",
     "unknown directive \"$setElementOrder\""},
    {"directive without field", "{}", "{\"$setElementOrder/\":[]}",
     "directive \"$setElementOrder/\" names no field"},
    {"order not a list", "{}", "{\"$setElementOrder/list\":{}}",
     "\"$setElementOrder/list\" must be a list"},
    {"deletions not a list", "{}", "{\"$deleteFromPrimitiveList/set\":\"a\"}",
     "\"$deleteFromPrimitiveList/set\" must be a list"},
    {"deleting an object", "{\"set\":[\"a\"]}", "{\"$deleteFromPrimitiveList/set\":[{}]}",
     "set: $deleteFromPrimitiveList value 0 is not a string, number or boolean"},
    {"deleting from objects", "{\"list\":[{\"name\":\"a\"}]}",
     "{\"$deleteFromPrimitiveList/list\":[\"a\"]}",
     "list: $deleteFromPrimitiveList on a list that is not of primitives"},
    {"$retainKeys not a list", "{}", "{\"$retainKeys\":\"a\"}", "$retainKeys must be a list"},
    {"$retainKeys misses a member", "{}", "{\"u\":{\"$retainKeys\":[\"a\"],\"d\":4}}",
     "u: $retainKeys does not list \"d\", which the patch sets"},
    {"lists of lists", "{}", "{\"set\":[[\"a\"]]}", "set: lists of lists cannot be merged"},
    {"mixed types", "{\"set\":[\"a\"]}", "{\"set\":[1]}",
     "set: list elements are not all of one type"},
    {"null elements", "{}", "{\"set\":[null]}", "set: null list elements cannot be merged"},
    {"scalars in an object list", "{}", "{\"list\":[\"a\"]}",
     "list: the list elements must be objects with merge key \"name\""},
    {"objects in a set", "{}", "{\"set\":[{}]}",
     "set: a list of objects without a merge key cannot be merged"},
    {"patch out of order", "{}",
     "{\"list\":[{\"name\":\"a\"},{\"name\":\"b\"}],"
     "\"$setElementOrder/list\":[{\"name\":\"b\"},{\"name\":\"a\"}]}",
     "list: the patch list is not in the order $setElementOrder gives"},
    {"order element without key", "{}",
     "{\"list\":[{\"name\":\"a\"}],\"$setElementOrder/list\":[{\"name\":\"a\"},{}]}",
     "list: $setElementOrder element 1 has no merge key \"name\""},
    {"order element without key before the patch's", "{}",
     "{\"list\":[{\"name\":\"a\"}],\"$setElementOrder/list\":[{\"x\":1},{\"name\":\"a\"}]}",
     "list: $setElementOrder element 0 has no merge key \"name\""},
    {"order element not a scalar", "{}", "{\"set\":[\"a\"],\"$setElementOrder/set\":[\"a\",[]]}",
     "set: $setElementOrder element 1 is not a string, number or boolean"},
    {"error deep in a list element", "{\"list\":[{\"name\":\"a\"}]}",
     "{\"list\":[{\"name\":\"a\",\"sub\":[{\"v\":1}]}]}",
     "list.sub: patch element 0 has no merge key \"k\""},
};

static void test_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(errors); i++) {
        struct codec_error err = {0};
        char *out = NULL;
        int r = run(errors[i].doc, errors[i].patch, &out, &err);

        if (r != -EINVAL)
            fail_msg("%s: r = %d (%s), want -EINVAL", errors[i].what, r, out);
        if (strcmp(err.msg, errors[i].want) != 0)
            fail_msg("%s: message %s, want %s", errors[i].what, err.msg, errors[i].want);
        free(out);
    }
}

/* A patch that fails half way leaves the document as it was (run() checks it too). */
static void test_unchanged_on_failure(void **state)
{
    struct codec_error err = {0};
    cJSON *d = parse("{\"a\":1,\"list\":[{\"name\":\"a\"}]}"), *before = d;
    cJSON *p = parse("{\"a\":2,\"b\":{\"c\":1},\"list\":[{\"name\":\"x\"},{\"v\":1}]}");

    (void)state;
    assert_int_equal(strategic_merge_patch_apply(&d, p, lookup, table_addr, NULL), -EINVAL);
    assert_int_equal(strategic_merge_patch_apply(&d, p, lookup, table_addr, &err), -EINVAL);
    assert_ptr_equal(d, before);
    assert_json(d, "{\"a\":1,\"list\":[{\"name\":\"a\"}]}");
    cJSON_Delete(p);
    cJSON_Delete(d);
}

static cJSON *nested_object(int depth)
{
    cJSON *v = cJSON_CreateObject();

    for (int i = 1; i < depth; i++) {
        cJSON *o = cJSON_CreateObject();
        assert_non_null(o);
        cJSON_AddItemToObject(o, "a", v);
        v = o;
    }
    return v;
}

static void test_depth(void **state)
{
    struct codec_error err = {0};
    cJSON *d = parse("{\"x\":1}"), *before = d, *p, *deep;

    (void)state;
    p = nested_object(PATCH_MAX_DEPTH + 1);
    assert_int_equal(strategic_merge_patch_apply(&d, p, lookup, table_addr, &err), -E2BIG);
    assert_non_null(strstr(err.msg, "the patch nests deeper than 100"));
    assert_ptr_equal(d, before);
    cJSON_Delete(p);

    p = nested_object(PATCH_MAX_DEPTH);
    assert_int_equal(strategic_merge_patch_apply(&d, p, lookup, table_addr, &err), 0);
    cJSON_Delete(p);

    /* A document already past the bound is refused before anything is copied. */
    deep = nested_object(PATCH_MAX_DEPTH + 1);
    before = deep;
    p = parse("{}");
    assert_int_equal(strategic_merge_patch_apply(&deep, p, lookup, table_addr, &err), -E2BIG);
    assert_non_null(strstr(err.msg, "nests deeper than 100"));
    assert_ptr_equal(deep, before);
    cJSON_Delete(deep);
    cJSON_Delete(p);
    cJSON_Delete(d);
}

/* 50000 elements merged by key, half updated, a quarter deleted, new ones added, and a large
 * set: the hashed lookups keep this linear-ish (a quadratic merge would take minutes). */
static void test_large_lists(void **state)
{
    struct strbuf doc = STRBUF_INIT, patch = STRBUF_INIT;
    struct codec_error err = {0};
    const int n = 50000;
    cJSON *d, *p, *list, *set;
    int i;

    (void)state;
    strbuf_addstr(&doc, "{\"list\":[");
    for (i = 0; i < n; i++)
        strbuf_addf(&doc, "%s{\"name\":\"e%d\",\"v\":0}", i ? "," : "", i);
    strbuf_addstr(&doc, "],\"set\":[");
    for (i = 0; i < n; i++)
        strbuf_addf(&doc, "%s\"s%d\"", i ? "," : "", i);
    strbuf_addstr(&doc, "]}");
    strbuf_addstr(&patch, "{\"list\":[");
    for (i = 0; i < n; i += 2)
        strbuf_addf(&patch, "%s{\"name\":\"e%d\",\"v\":1}", i ? "," : "", i);
    for (i = 1; i < n; i += 4)
        strbuf_addf(&patch, ",{\"$patch\":\"delete\",\"name\":\"e%d\"}", i);
    for (i = 0; i < 100; i++)
        strbuf_addf(&patch, ",{\"name\":\"new%d\"}", i);
    strbuf_addstr(&patch, "],\"set\":[\"s1\",\"t\"],\"$deleteFromPrimitiveList/set\":[\"s0\"]}");
    d = parse(doc.buf);
    p = parse(patch.buf);
    assert_int_equal(strategic_merge_patch_apply(&d, p, lookup, table_addr, &err), 0);
    list = cJSON_GetObjectItem(d, "list");
    set = cJSON_GetObjectItem(d, "set");
    assert_int_equal(cJSON_GetArraySize(list), n - n / 4 + 100);
    /* e0 stays first; the new elements (no place in the original) come right after the last
     * updated one, e49998, before e49999, which only the original has. */
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "name")->valuestring,
                        "e0");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "v")->valueint, 1);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetArrayItem(list, n - n / 4 + 98), "name")->valuestring,
        "new99");
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetArrayItem(list, n - n / 4 + 99), "name")->valuestring,
        "e49999");
    assert_int_equal(cJSON_GetArraySize(set), n);
    assert_string_equal(cJSON_GetArrayItem(set, 0)->valuestring, "s1");
    assert_string_equal(cJSON_GetArrayItem(set, 1)->valuestring, "t");
    cJSON_Delete(d);
    cJSON_Delete(p);
    strbuf_release(&doc);
    strbuf_release(&patch);
}

/* Every checked allocation failing in turn: -ENOMEM, the document untouched, nothing leaked. */
static void test_oom(void **state)
{
    const char *doc = "{\"m\":{\"a\":1},\"set\":[\"a\",\"b\"],"
                      "\"list\":[{\"name\":\"a\",\"sub\":[{\"k\":\"x\"}]},{\"name\":\"b\"}]}";
    const char *patch =
        "{\"m\":{\"$retainKeys\":[\"b\"],\"b\":[1]},\"set\":[\"c\"],"
        "\"$deleteFromPrimitiveList/set\":[\"a\"],\"$setElementOrder/list\":[{\"name\":\"b\"},"
        "{\"name\":\"a\"},{\"name\":\"c\"}],\"list\":[{\"name\":\"a\",\"sub\":[{\"k\":\"y\"}]},"
        "{\"name\":\"c\",\"z\":{\"q\":1}}],\"new\":{\"x\":[1]}}";
    const char *want = "{\"m\":{\"b\":[1]},\"set\":[\"c\",\"b\"],\"list\":[{\"name\":\"b\"},"
                       "{\"name\":\"a\",\"sub\":[{\"k\":\"y\"},{\"k\":\"x\"}]},"
                       "{\"name\":\"c\",\"z\":{\"q\":1}}],\"new\":{\"x\":[1]}}";
    cJSON *p = parse(patch);
    long n;

    (void)state;
    for (n = 1;; n++) {
        struct codec_error err = {0};
        cJSON *d = parse(doc), *before = d;
        int r, injected;

        alloc_fail_after(n);
        r = strategic_merge_patch_apply(&d, p, lookup, table_addr, &err);
        injected = alloc_injected();
        alloc_fail_after(0);
        if (!injected) {
            if (r != 0)
                fail_msg("r = %d: %s", r, err.msg);
            assert_json(d, want);
            cJSON_Delete(d);
            break;
        }
        if (r != -ENOMEM)
            fail_msg("n=%ld: r = %d (%s)", n, r, err.msg);
        assert_non_null(strstr(err.msg, "out of memory"));
        assert_ptr_equal(d, before);
        assert_json(d, doc);
        cJSON_Delete(d);
    }
    assert_true(n > 20);
    cJSON_Delete(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_unchanged_on_failure),
        cmocka_unit_test(test_depth),
        cmocka_unit_test(test_large_lists),
        cmocka_unit_test(test_oom),
    };

    return cmocka_run_group_tests(tests, setup, NULL);
}
