/*
 * Tests for apiserver/store: the shared object type and the interface's own checks. An object
 * finds its resourceVersion splice point once, only in our own compact encoding with
 * apiVersion, kind and metadata; references keep it alive; a failed checked allocation gives
 * NULL and leaks nothing; malformed keys and oversized values are refused before any backend
 * sees them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "apiserver/store.h"
#include "base/base.h"

static void test_splice_point(void **state)
{
    static const char full[] = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                               "\"a\"},\"spec\":{}}";
    static const char empty_meta[] = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{}}";
    static const char no_kind[] = "{\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"a\"}}";
    struct store_obj *o;

    (void)state;
    o = store_obj_new("/core/pods/ns/a", 7, full, sizeof(full) - 1);
    assert_non_null(o);
    assert_int_equal(o->rv, 7);
    assert_string_equal(o->key, "/core/pods/ns/a");
    assert_int_equal(o->len, sizeof(full) - 1);
    assert_string_equal(o->value, full);
    assert_int_equal(o->value[o->splice_at], '}');
    assert_memory_equal(o->value + o->splice_at - 10, "\"name\":\"a\"", 10);
    assert_true(o->splice_comma);
    store_obj_unref(o);

    o = store_obj_new("/k", 1, empty_meta, sizeof(empty_meta) - 1);
    assert_int_equal(o->splice_at, strlen(empty_meta) - 2);
    assert_false(o->splice_comma);
    store_obj_unref(o);

    o = store_obj_new("/k", 1, no_kind, sizeof(no_kind) - 1);
    assert_int_equal(o->splice_at, 0);
    store_obj_unref(o);
    o = store_obj_new("/k", 1, "a\0b", 3); /* not JSON at all: kept as bytes */
    assert_int_equal(o->len, 3);
    assert_memory_equal(o->value, "a\0b", 4);
    assert_int_equal(o->splice_at, 0);
    store_obj_unref(o);
}

static void test_refs_and_items(void **state)
{
    struct store_obj *o = store_obj_new("/k", 3, "{}", 2);
    struct store_item it = {0};

    (void)state;
    store_item_set(&it, o);
    assert_ptr_equal(it.obj, o);
    assert_ptr_equal(it.value, o->value);
    assert_int_equal(it.rv, 3);
    assert_null(store_obj_unref(o)); /* the item still holds it */
    assert_string_equal(it.key, "/k");
    store_item_release(&it);
    assert_null(it.obj);
    store_item_release(NULL);
    assert_null(store_obj_unref(NULL));
}

static void test_allocation_failure(void **state)
{
    (void)state;
    for (long n = 1;; n++) {
        struct store_obj *o;
        alloc_fail_after(n);
        o = store_obj_new("/k", 1, "{}", 2);
        if (!alloc_injected()) {
            alloc_fail_after(0);
            assert_non_null(o);
            store_obj_unref(o);
            break;
        }
        assert_null(o);
    }
    assert_null(store_obj_new("/k", 1, "x", STORE_MAX_VALUE + 1));
}

static void test_check_key(void **state)
{
    char long_key[STORE_MAX_KEY + 2];

    (void)state;
    assert_int_equal(store_check_key("/core/pods/ns/a"), 0);
    assert_int_equal(store_check_key(""), -EINVAL);
    assert_int_equal(store_check_key(NULL), -EINVAL);
    assert_int_equal(store_check_key("/a b"), -EINVAL);
    assert_int_equal(store_check_key("/a\x7f"), -EINVAL);
    memset(long_key, 'a', sizeof(long_key) - 1);
    long_key[sizeof(long_key) - 1] = '\0';
    assert_int_equal(store_check_key(long_key), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_splice_point),
        cmocka_unit_test(test_refs_and_items),
        cmocka_unit_test(test_allocation_failure),
        cmocka_unit_test(test_check_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
