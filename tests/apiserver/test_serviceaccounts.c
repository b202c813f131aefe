/*
 * Tests for apiserver/serviceaccounts: every active namespace gets a `default` ServiceAccount,
 * once; a namespace being deleted gets none; an existing account is left as it is.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "apiserver/serviceaccounts.h"
#include "apiserver/store.h"
#include "apiserver/store_memory.h"
#include "base/base.h"

static void uid(char u[37])
{
    static int n;
    (void)snprintf(u, 37, "00000000-0000-0000-0000-%012d", ++n);
}

static void put(struct store *s, const char *key, const char *v)
{
    assert_int_equal(store_create(s, key, v, strlen(v), NULL), 0);
}

static void test_defaults(void **state)
{
    struct store *s;
    struct store_item it = {0};
    (void)state;

    assert_int_equal(store_memory_new(&(struct store_memory_opts){.epoch = 1}, &s), 0);
    put(s, "/core/namespaces//a",
        "{\"metadata\":{\"name\":\"a\"},\"status\":{\"phase\":\"Active\"}}");
    put(s, "/core/namespaces//b",
        "{\"metadata\":{\"name\":\"b\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
        "\"status\":{\"phase\":\"Terminating\"}}");
    put(s, "/core/namespaces//c", "{\"metadata\":{\"name\":\"c\"}}");
    put(s, "/core/serviceaccounts/c/default",
        "{\"metadata\":{\"name\":\"default\",\"uid\":\"mine\"}}");
    assert_int_equal(api_serviceaccounts_ensure_defaults(s, "2026-01-01T00:00:00Z", uid), 1);
    assert_int_equal(store_get(s, "/core/serviceaccounts/a/default", &it), 0);
    assert_non_null(strstr(it.value, "\"namespace\":\"a\""));
    assert_non_null(strstr(it.value, "\"kind\":\"ServiceAccount\""));
    store_item_release(&it);
    assert_int_equal(store_get(s, "/core/serviceaccounts/b/default", &it), -ENOENT);
    assert_int_equal(store_get(s, "/core/serviceaccounts/c/default", &it), 0);
    assert_non_null(strstr(it.value, "\"mine\""));
    store_item_release(&it);
    assert_int_equal(api_serviceaccounts_ensure_defaults(s, "2026-01-01T00:00:00Z", uid), 0);
    store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_defaults)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
