/*
 * Tests for api/fieldset: the field sets of server-side apply and its merge. Expected sets are
 * written by hand in the fieldsV1 form kube-apiserver stores (structured-merge-diff's
 * serialisation: "." first, then f:, k:, v: names in order), and expected objects from the
 * rules in fieldset.h; the type table below plays the part of a kind's list types: a map list
 * keyed by name, one with composite keys and a key default (container ports), a set list
 * (finalizers), an atomic object (a label selector) and the default atomic lists.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/fieldset.h"
#include "base/base.h"

static void types_fn(const char *path, const void *userdata, struct api_fs_type *ret)
{
    (void)userdata;
    if (!strcmp(path, "spec.containers") || !strcmp(path, "spec.containers.env")) {
        ret->kind = API_FS_MAP;
        ret->keys[0] = "name";
    } else if (!strcmp(path, "spec.containers.ports")) {
        ret->kind = API_FS_MAP;
        ret->keys[0] = "protocol";
        ret->keys[1] = "containerPort";
        ret->key_dflt[0] = "\"TCP\"";
    } else if (!strcmp(path, "metadata.finalizers")) {
        ret->kind = API_FS_SET;
    } else if (!strcmp(path, "spec.selector")) {
        ret->kind = API_FS_ATOMIC;
    }
}

static const struct api_fs_types types = {types_fn, NULL};

static cJSON *parse(const char *s)
{
    cJSON *v = cJSON_Parse(s);

    assert_non_null(v);
    return v;
}

static void assert_json(const cJSON *v, const char *want)
{
    char *p = cJSON_PrintUnformatted(v);

    assert_non_null(p);
    if (strcmp(p, want))
        fail_msg("got  %s\nwant %s", p, want);
    cJSON_free(p);
}

/* The fieldsV1 of set s compared with want. */
static void assert_set(const cJSON *s, const char *want)
{
    cJSON *e = api_fieldset_encode(s);

    assert_json(e, want);
    cJSON_Delete(e);
}

static cJSON *set_of(const char *obj)
{
    cJSON *o = parse(obj), *s = NULL;

    assert_int_equal(api_fieldset_from_object(o, &types, &s, NULL), 0);
    cJSON_Delete(o);
    return s;
}

static cJSON *decoded(const char *fields_v1)
{
    cJSON *v = parse(fields_v1), *s = NULL;

    assert_int_equal(api_fieldset_decode(v, &s, NULL), 0);
    cJSON_Delete(v);
    return s;
}

static void test_maps_and_scalars(void **state)
{
    cJSON *s =
        set_of("{\"data\":{\"b\":\"2\",\"a\":\"1\"},\"metadata\":{\"labels\":{\"app\":\"x\"}},"
               "\"spec\":{\"empty\":{},\"n\":null}}");

    (void)state;
    /* Leaves only: maps are not members themselves; an empty map is a leaf. */
    assert_set(s,
               "{\"f:data\":{\"f:a\":{},\"f:b\":{}},\"f:metadata\":{\"f:labels\":{\"f:app\":{}}},"
               "\"f:spec\":{\"f:empty\":{},\"f:n\":{}}}");
    cJSON_Delete(s);
}

static void test_list_types(void **state)
{
    cJSON *s = set_of(
        "{\"metadata\":{\"finalizers\":[\"b\",\"a\"]},"
        "\"spec\":{\"tolerations\":[{\"key\":\"k\"}],"
        "\"selector\":{\"matchLabels\":{\"a\":\"b\"}},"
        "\"containers\":[{\"name\":\"app\",\"image\":\"i\","
        "\"ports\":[{\"containerPort\":80},{\"containerPort\":53,\"protocol\":\"UDP\"}]}]}}");

    (void)state;
    /* Atomic list and object: one leaf each; set items v:, map items k: with "." and the
     * default of a missing key; composite keys sorted by name. */
    assert_set(s, "{\"f:metadata\":{\"f:finalizers\":{\"v:\\\"a\\\"\":{},\"v:\\\"b\\\"\":{}}},"
                  "\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"app\\\"}\":{\".\":{},"
                  "\"f:image\":{},\"f:name\":{},\"f:ports\":{"
                  "\"k:{\\\"containerPort\\\":53,\\\"protocol\\\":\\\"UDP\\\"}\":{\".\":{},"
                  "\"f:containerPort\":{},\"f:protocol\":{}},"
                  "\"k:{\\\"containerPort\\\":80,\\\"protocol\\\":\\\"TCP\\\"}\":{\".\":{},"
                  "\"f:containerPort\":{}}}}},\"f:selector\":{},\"f:tolerations\":{}}}");
    cJSON_Delete(s);
}

/* A set list past 512 items is owned whole (a leaf), so matching items one by one never
 * costs time quadratic in a huge list; 512 items stay granular. */
static void test_long_list_atomic(void **state)
{
    struct strbuf b = STRBUF_INIT;
    cJSON *s, *f;

    (void)state;
    for (int n = 512; n <= 513; n++) {
        strbuf_reset(&b);
        strbuf_addstr(&b, "{\"metadata\":{\"finalizers\":[");
        for (int i = 0; i < n; i++)
            strbuf_addf(&b, "%s\"f%d\"", i ? "," : "", i);
        strbuf_addstr(&b, "]}}");
        s = set_of(b.buf);
        f = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(s, "f:metadata"),
                                             "f:finalizers");
        assert_non_null(f);
        if (n == 512)
            assert_int_equal(cJSON_GetArraySize(f), 512); /* v:"f0" ... */
        else                                              /* the list itself, no item */
            assert_null(cJSON_GetObjectItemCaseSensitive(f, "v:\"f0\""));
        cJSON_Delete(s);
    }
    strbuf_release(&b);
}

static void test_paths(void **state)
{
    cJSON *s = set_of("{\"metadata\":{\"finalizers\":[\"x\"]},\"spec\":{\"containers\":[{"
                      "\"name\":\"app\",\"ports\":[{\"containerPort\":80}]}]}}");
    struct strbuf out = STRBUF_INIT;

    (void)state;
    api_fieldset_paths(s, &out);
    assert_string_equal(out.buf, ".metadata.finalizers[=\"x\"]\n"
                                 ".spec.containers[name=\"app\"]\n"
                                 ".spec.containers[name=\"app\"].name\n"
                                 ".spec.containers[name=\"app\"].ports[containerPort=80,"
                                 "protocol=\"TCP\"]\n"
                                 ".spec.containers[name=\"app\"].ports[containerPort=80,"
                                 "protocol=\"TCP\"].containerPort\n");
    strbuf_release(&out);
    cJSON_Delete(s);
}

static void expect_error(const char *obj, const char *msg)
{
    cJSON *o = parse(obj), *s = NULL, *m = NULL;
    struct strbuf err = STRBUF_INIT;

    assert_int_equal(api_fieldset_from_object(o, &types, &s, &err), -EINVAL);
    assert_null(s);
    assert_string_equal(err.buf, msg);
    /* The merge checks config the same way and leaves nothing behind. */
    strbuf_reset(&err);
    assert_int_equal(api_fieldset_merge(NULL, o, &types, &m, &err), -EINVAL);
    assert_null(m);
    assert_string_equal(err.buf, msg);
    strbuf_release(&err);
    cJSON_Delete(o);
}

static void test_bad_lists(void **state)
{
    (void)state;
    expect_error("{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"a\",\"image\":\"x\"}]}}",
                 ".spec.containers: duplicate entries for key [name=\"a\"]");
    expect_error("{\"spec\":{\"containers\":[{\"image\":\"x\"}]}}",
                 ".spec.containers: associative list with keys has an element that omits key "
                 "field \"name\" (and doesn't have default value)");
    expect_error("{\"spec\":{\"containers\":[\"a\"]}}",
                 ".spec.containers: associative list with keys may not have non-map elements");
    expect_error("{\"metadata\":{\"finalizers\":[\"a\",\"a\"]}}",
                 ".metadata.finalizers: duplicate entries for key [=\"a\"]");
    expect_error("{\"metadata\":{\"finalizers\":[{\"a\":1}]}}",
                 ".metadata.finalizers: a set list may only hold scalar values");
}

static void test_decode_encode(void **state)
{
    /* The wire form from a client: leaves without ".", "k:" keys in any order. */
    cJSON *s = decoded("{\"f:spec\":{\"f:containers\":{\"k:{\\\"protocol\\\":\\\"TCP\\\","
                       "\\\"name\\\":\\\"a\\\"}\":{\".\":{},\"f:image\":{}}}},\"f:data\":{}}");
    cJSON *v, *bad = NULL;
    struct strbuf err = STRBUF_INIT;
    static const char *const invalid[] = {
        "[]",
        "{\"x:y\":{}}",
        "{\"f:a\":1}",
        "{\"k:[1]\":{}}",
        "{\"k:{\\\"a\\\":1\":{}}",
        "{\"i:x\":{}}",
        "{\"f:a\":{\".\":[]}}",
    };

    (void)state;
    assert_set(s, "{\"f:data\":{},\"f:spec\":{\"f:containers\":{"
                  "\"k:{\\\"name\\\":\\\"a\\\",\\\"protocol\\\":\\\"TCP\\\"}\":{\".\":{},"
                  "\"f:image\":{}}}}}");
    cJSON_Delete(s);
    s = decoded("{}");
    assert_true(api_fieldset_is_empty(s));
    cJSON_Delete(s);
    for (size_t i = 0; i < ARRAY_SIZE(invalid); i++) {
        v = parse(invalid[i]);
        strbuf_reset(&err);
        assert_int_equal(api_fieldset_decode(v, &bad, &err), -EINVAL);
        assert_null(bad);
        assert_true(err.len > 0);
        cJSON_Delete(v);
    }
    strbuf_release(&err);
}

static void test_algebra(void **state)
{
    cJSON *a = decoded("{\"f:data\":{\"f:a\":{},\"f:b\":{}},\"f:metadata\":{\"f:labels\":{"
                       "\".\":{},\"f:x\":{}}}}");
    cJSON *b = decoded("{\"f:data\":{\"f:b\":{},\"f:c\":{}},\"f:metadata\":{\"f:labels\":{"
                       "\".\":{}}}}");
    cJSON *i = api_fieldset_intersect(a, b);
    static const char *const labels[] = {"metadata", "labels", NULL};
    static const char *const data[] = {"data", NULL};

    (void)state;
    assert_set(i, "{\"f:data\":{\"f:b\":{}},\"f:metadata\":{\"f:labels\":{}}}");
    cJSON_Delete(i);
    api_fieldset_union(a, b);
    assert_set(a, "{\"f:data\":{\"f:a\":{},\"f:b\":{},\"f:c\":{}},\"f:metadata\":{\"f:labels\":{"
                  "\".\":{},\"f:x\":{}}}}");
    assert_false(api_fieldset_equal(a, b));
    api_fieldset_subtract(a, b);
    /* labels stops being a member; its child stays. */
    assert_set(a, "{\"f:data\":{\"f:a\":{}},\"f:metadata\":{\"f:labels\":{\"f:x\":{}}}}");
    api_fieldset_remove(a, labels, false);
    assert_set(a, "{\"f:data\":{\"f:a\":{}},\"f:metadata\":{\"f:labels\":{\"f:x\":{}}}}");
    api_fieldset_remove(a, labels, true);
    assert_set(a, "{\"f:data\":{\"f:a\":{}}}");
    api_fieldset_union(a, b);
    api_fieldset_keep_only(a, data);
    assert_set(a, "{\"f:data\":{\"f:a\":{},\"f:b\":{},\"f:c\":{}}}");
    api_fieldset_subtract(a, a);
    assert_true(api_fieldset_is_empty(a));
    cJSON_Delete(a);
    cJSON_Delete(b);
}

static void test_compare(void **state)
{
    cJSON *o = parse("{\"metadata\":{\"name\":\"n\",\"finalizers\":[\"a\",\"b\"]},"
                     "\"data\":{\"a\":\"1\",\"b\":\"2\"},\"spec\":{\"containers\":["
                     "{\"name\":\"app\",\"image\":\"i1\"},{\"name\":\"gone\",\"image\":\"g\"}]}}");
    cJSON *n = parse("{\"metadata\":{\"name\":\"n\",\"finalizers\":[\"b\",\"c\"],\"labels\":{"
                     "\"x\":\"y\"}},\"data\":{\"a\":\"1\",\"b\":\"3\"},\"spec\":{\"containers\":["
                     "{\"name\":\"app\",\"image\":\"i2\"},{\"name\":\"new\",\"image\":\"n\","
                     "\"resources\":{\"limits\":{\"cpu\":\"1\"}}}]}}");
    cJSON *chg, *rem;

    (void)state;
    api_fieldset_compare(o, n, &types, &chg, &rem);
    /* An added map is a member (labels, resources, limits); list items by key or value. */
    assert_set(chg, "{\"f:data\":{\"f:b\":{}},\"f:metadata\":{\"f:finalizers\":{"
                    "\"v:\\\"c\\\"\":{}},\"f:labels\":{\".\":{},\"f:x\":{}}},"
                    "\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"app\\\"}\":{"
                    "\"f:image\":{}},\"k:{\\\"name\\\":\\\"new\\\"}\":{\".\":{},\"f:image\":{},"
                    "\"f:name\":{},\"f:resources\":{\".\":{},\"f:limits\":{\".\":{},"
                    "\"f:cpu\":{}}}}}}}");
    assert_set(rem, "{\"f:metadata\":{\"f:finalizers\":{\"v:\\\"a\\\"\":{}}},"
                    "\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"gone\\\"}\":{\".\":{},"
                    "\"f:image\":{},\"f:name\":{}}}}}");
    cJSON_Delete(chg);
    cJSON_Delete(rem);
    /* From nothing: the root's members are not members themselves. */
    api_fieldset_compare(NULL, o, &types, &chg, &rem);
    assert_true(api_fieldset_is_empty(rem));
    assert_set(chg, "{\"f:data\":{\"f:a\":{},\"f:b\":{}},\"f:metadata\":{\"f:finalizers\":{"
                    "\"v:\\\"a\\\"\":{},\"v:\\\"b\\\"\":{}},\"f:name\":{}},\"f:spec\":{"
                    "\"f:containers\":{\"k:{\\\"name\\\":\\\"app\\\"}\":{\".\":{},\"f:image\":{},"
                    "\"f:name\":{}},\"k:{\\\"name\\\":\\\"gone\\\"}\":{\".\":{},\"f:image\":{},"
                    "\"f:name\":{}}}}}");
    cJSON_Delete(chg);
    cJSON_Delete(rem);
    /* Same object: nothing. */
    api_fieldset_compare(o, o, &types, &chg, &rem);
    assert_true(api_fieldset_is_empty(chg));
    assert_true(api_fieldset_is_empty(rem));
    cJSON_Delete(chg);
    cJSON_Delete(rem);
    cJSON_Delete(o);
    cJSON_Delete(n);
}

static void expect_merge(const char *live, const char *config, const char *want)
{
    cJSON *l = live ? parse(live) : NULL, *c = parse(config), *m = NULL;

    assert_int_equal(api_fieldset_merge(l, c, &types, &m, NULL), 0);
    assert_json(m, want);
    cJSON_Delete(m);
    cJSON_Delete(l);
    cJSON_Delete(c);
}

static void test_merge(void **state)
{
    (void)state;
    /* Maps merge; null removes; atomic lists and objects are replaced. */
    expect_merge(
        "{\"data\":{\"a\":\"1\",\"b\":\"2\"},\"spec\":{\"tolerations\":[{\"k\":1},{\"k\":2}],"
        "\"selector\":{\"matchLabels\":{\"a\":\"b\"}}}}",
        "{\"data\":{\"b\":\"3\",\"a\":null},\"spec\":{\"tolerations\":[{\"k\":3}],"
        "\"selector\":{\"matchExpressions\":[]}}}",
        "{\"data\":{\"b\":\"3\"},\"spec\":{\"tolerations\":[{\"k\":3}],"
        "\"selector\":{\"matchExpressions\":[]}}}");
    /* Sets: union, live's items in place. */
    expect_merge("{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}",
                 "{\"metadata\":{\"finalizers\":[\"c\",\"b\"]}}",
                 "{\"metadata\":{\"finalizers\":[\"a\",\"c\",\"b\"]}}");
    /* Map lists: items merged by key (composite, with a key default), others kept. */
    expect_merge("{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"1\",\"ports\":["
                 "{\"containerPort\":80,\"protocol\":\"TCP\",\"name\":\"http\"}]},"
                 "{\"name\":\"side\",\"image\":\"s\"}]}}",
                 "{\"spec\":{\"containers\":[{\"name\":\"b\",\"image\":\"2\"},{\"name\":\"a\","
                 "\"image\":\"3\",\"ports\":[{\"containerPort\":80,\"hostPort\":8080},"
                 "{\"containerPort\":80,\"protocol\":\"UDP\"}]}]}}",
                 "{\"spec\":{\"containers\":[{\"name\":\"b\",\"image\":\"2\"},{\"name\":\"a\","
                 "\"image\":\"3\",\"ports\":[{\"containerPort\":80,\"protocol\":\"TCP\","
                 "\"name\":\"http\",\"hostPort\":8080},{\"containerPort\":80,"
                 "\"protocol\":\"UDP\"}]},{\"name\":\"side\",\"image\":\"s\"}]}}");
    /* Into nothing: config itself, nulls dropped. */
    expect_merge(NULL, "{\"a\":{\"b\":null,\"c\":1}}", "{\"a\":{\"c\":1}}");
}

/*
 * The apply cycle as apiserver/apply.c runs it, on plain trees: manager A applies, then
 * applies again without a label and without a container, while B owns a field inside one of
 * A's containers. What A stops applying goes, unless B owns it or something under it.
 */
static void test_prune(void **state)
{
    cJSON *obj = parse("{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"},\"finalizers\":"
                       "[\"x\",\"y\"]},\"spec\":{\"containers\":[{\"name\":\"c1\",\"image\":\"i\","
                       "\"env\":[{\"name\":\"E\",\"value\":\"v\"}]},{\"name\":\"c2\","
                       "\"image\":\"j\"},{\"name\":\"c3\",\"image\":\"k\"}]}}");
    cJSON *last = set_of("{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"},\"finalizers\":"
                         "[\"x\",\"y\"]},\"spec\":{\"containers\":[{\"name\":\"c1\",\"image\":"
                         "\"i\"},{\"name\":\"c2\",\"image\":\"j\"},{\"name\":\"c3\",\"image\":"
                         "\"k\"}]}}");
    cJSON *now = set_of("{\"metadata\":{\"labels\":{\"a\":\"1\"},\"finalizers\":[\"x\"]},"
                        "\"spec\":{\"containers\":[{\"name\":\"c3\",\"image\":\"k\"}]}}");
    /* B owns c1's env (so c1 stays, without A's image) and the finalizer y. */
    cJSON *other = decoded("{\"f:metadata\":{\"f:finalizers\":{\"v:\\\"y\\\"\":{}}},"
                           "\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"c1\\\"}\":{"
                           "\"f:env\":{}}}}}");
    cJSON *drop, *keep;

    (void)state;
    CHECK(drop = cJSON_Duplicate(last, true));
    api_fieldset_subtract(drop, now);
    CHECK(keep = cJSON_Duplicate(now, true));
    api_fieldset_union(keep, other);
    api_fieldset_prune(obj, drop, keep, &types);
    assert_json(obj, "{\"metadata\":{\"labels\":{\"a\":\"1\"},\"finalizers\":[\"x\",\"y\"]},"
                     "\"spec\":{\"containers\":[{\"name\":\"c1\",\"env\":[{\"name\":\"E\","
                     "\"value\":\"v\"}]},{\"name\":\"c3\",\"image\":\"k\"}]}}");
    cJSON_Delete(drop);
    cJSON_Delete(keep);
    cJSON_Delete(obj);
    cJSON_Delete(last);
    cJSON_Delete(now);
    cJSON_Delete(other);
}

/* A conflict is another manager's member that the apply changes; force takes it away. */
static void test_conflict(void **state)
{
    cJSON *live = parse("{\"data\":{\"a\":\"1\",\"b\":\"2\"}}");
    cJSON *cfg = parse("{\"data\":{\"a\":\"9\",\"b\":\"2\"}}");
    cJSON *other = decoded("{\"f:data\":{\"f:a\":{},\"f:b\":{}}}");
    cJSON *merged = NULL, *chg, *rem, *conflict;
    struct strbuf paths = STRBUF_INIT;

    (void)state;
    assert_int_equal(api_fieldset_merge(live, cfg, &types, &merged, NULL), 0);
    api_fieldset_compare(live, merged, &types, &chg, &rem);
    conflict = api_fieldset_intersect(other, chg);
    /* b is applied with the value it has: shared ownership, no conflict. */
    api_fieldset_paths(conflict, &paths);
    assert_string_equal(paths.buf, ".data.a\n");
    api_fieldset_subtract(other, conflict);
    assert_set(other, "{\"f:data\":{\"f:b\":{}}}");
    strbuf_release(&paths);
    cJSON_Delete(conflict);
    cJSON_Delete(chg);
    cJSON_Delete(rem);
    cJSON_Delete(merged);
    cJSON_Delete(other);
    cJSON_Delete(cfg);
    cJSON_Delete(live);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_maps_and_scalars),
        cmocka_unit_test(test_list_types),
        cmocka_unit_test(test_long_list_atomic),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_bad_lists),
        cmocka_unit_test(test_decode_encode),
        cmocka_unit_test(test_algebra),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_prune),
        cmocka_unit_test(test_conflict),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
