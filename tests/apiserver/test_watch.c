/*
 * Tests for apiserver/watch: the hub queues each observed write for the watchers whose prefix
 * matches, in order; the replaced value travels only to watchers that asked for it
 * (WATCHER_PREV) and counts against their queue bound; watcher_progress() says how far a
 * watcher is complete, also across writes to keys it does not watch (what bookmarks carry).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "apiserver/store.h"
#include "apiserver/watch.h"
#include "base/base.h"

static void observe(struct watch_hub *h, enum store_event_type type, uint64_t rv, const char *key,
                    const char *value, const char *prev)
{
    struct store_event ev = {
        .type = type,
        .rv = rv,
        .key = key,
        .value = value,
        .len = strlen(value),
        .prev = prev,
        .prev_len = prev ? strlen(prev) : 0,
        .prev_rv = prev ? rv - 1 : 0,
    };
    assert_int_equal(watch_hub_observe(&ev, h), 0);
}

static void test_prev_only_when_asked(void **state)
{
    struct watch_hub *h = watch_hub_new();
    struct watcher *plain = watcher_new(h, "/core/pods/", 0, 0);
    struct watcher *sel = watcher_new(h, "/core/pods/", 0, WATCHER_PREV);
    struct watch_item *it = NULL;

    (void)state;
    observe(h, STORE_MODIFIED, 5, "/core/pods/ns/a", "new", "old");
    assert_int_equal(watcher_next(plain, 0, &it), 1);
    assert_string_equal(it->value, "new");
    assert_null(it->prev);
    watch_item_free(it);
    assert_int_equal(watcher_next(sel, 0, &it), 1);
    assert_string_equal(it->value, "new");
    assert_string_equal(it->prev, "old");
    assert_int_equal(it->prev_len, 3);
    watch_item_free(it);
    watcher_free(plain);
    watcher_free(sel);
    watch_hub_free(h);
}

static void test_progress(void **state)
{
    struct watch_hub *h = watch_hub_new();
    struct watcher *w = watcher_new(h, "/core/pods/", 0, 0);
    struct watch_item *it = NULL;

    (void)state;
    assert_int_equal(watcher_progress(w), 0);
    /* Writes elsewhere move it forward: nothing this watcher will see lies at or below. */
    observe(h, STORE_ADDED, 3, "/core/configmaps/ns/x", "{}", NULL);
    assert_int_equal(watcher_progress(w), 3);
    observe(h, STORE_ADDED, 4, "/core/pods/ns/a", "{}", NULL);
    observe(h, STORE_ADDED, 5, "/core/configmaps/ns/y", "{}", NULL);
    /* A queued write holds it just below that write until it is handed out. */
    assert_int_equal(watcher_progress(w), 3);
    assert_int_equal(watcher_next(w, 0, &it), 1);
    assert_int_equal(it->rv, 4);
    watch_item_free(it);
    assert_int_equal(watcher_progress(w), 5);
    assert_int_equal(watcher_next(w, 0, &it), 0); /* nothing queued: a timeout */
    watcher_free(w);
    watch_hub_free(h);
}

static void test_prev_counts_against_the_bound(void **state)
{
    struct watch_hub *h = watch_hub_new();
    struct watcher *plain = watcher_new(h, "/k/", 10, 0);
    struct watcher *sel = watcher_new(h, "/k/", 10, WATCHER_PREV);
    struct watch_item *it = NULL;

    (void)state;
    observe(h, STORE_MODIFIED, 2, "/k/a", "123456", "123456");
    assert_int_equal(watcher_next(plain, 0, &it), 1); /* 6 bytes fit in 10 */
    watch_item_free(it);
    assert_int_equal(watcher_next(sel, 0, &it), -EOVERFLOW); /* 12 do not */
    watcher_free(plain);
    watcher_free(sel);
    watch_hub_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prev_only_when_asked),
        cmocka_unit_test(test_progress),
        cmocka_unit_test(test_prev_counts_against_the_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
