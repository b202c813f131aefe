/*
 * Tests for apiserver/watch: the hub queues each observed write for the watchers whose prefix
 * matches, in order, as one shared event (the same object for every watcher, with the replaced
 * state and the wire bytes made once); a read hands out everything queued at once; queues are
 * bounded; watcher_progress() says how far a watcher is complete, also across writes to keys it
 * does not watch (what bookmarks carry); the index hands a write only to the watchers of its
 * object's new or old value (and to every unindexed one); the notify callback fires when a queue
 * goes from empty to not empty, on a cut-off and on close, and at once when registered late.
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
#include "base/strbuf.h"

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

static int encodes;

static bool encode(enum store_event_type type, uint64_t rv, const struct store_obj *obj,
                   struct strbuf *out)
{
    encodes++;
    strbuf_addf(out, "%d %llu %s\n", (int)type, (unsigned long long)rv, obj->value);
    return true;
}

static void test_one_shared_event(void **state)
{
    struct watch_hub *h = watch_hub_new(encode);
    struct watcher *a = watcher_new(h, "/core/pods/", 0);
    struct watcher *b = watcher_new(h, "/core/pods/", 0);
    struct watch_event *ea = NULL, *eb = NULL;
    size_t n = 0;

    (void)state;
    encodes = 0;
    observe(h, STORE_MODIFIED, 5, "/core/pods/ns/a", "new", "old");
    assert_int_equal(encodes, 1);
    assert_int_equal(watcher_next(a, 0, &ea, 1, &n), 1);
    assert_int_equal(n, 1);
    assert_int_equal(watcher_next(b, 0, &eb, 1, &n), 1);
    assert_ptr_equal(ea, eb);
    assert_string_equal(ea->obj->value, "new");
    assert_string_equal(ea->prev->value, "old");
    assert_int_equal(ea->prev->rv, 4);
    assert_int_equal(ea->wire_len, strlen("2 5 new\n"));
    assert_memory_equal(ea->wire, "2 5 new\n", ea->wire_len);
    watch_event_unref(ea);
    watch_event_unref(eb);
    /* Deleted: the object is the last state, at its own revision. */
    observe(h, STORE_DELETED, 6, "/core/pods/ns/a", "new", NULL);
    assert_int_equal(watcher_next(a, 0, &ea, 1, &n), 1);
    assert_int_equal(ea->obj->rv, 0);
    assert_null(ea->prev);
    watch_event_unref(ea);
    watcher_free(a);
    watcher_free(b);
    watch_hub_free(h);
}

static void test_next_takes_everything_queued(void **state)
{
    struct watch_hub *h = watch_hub_new(NULL);
    struct watcher *w = watcher_new(h, "/k/", 0);
    struct watch_event *v[8];
    size_t n = 0;

    (void)state;
    for (uint64_t rv = 1; rv <= 40; rv++)
        observe(h, STORE_ADDED, rv, "/k/a", "x", NULL);
    assert_int_equal(watcher_next(w, 0, v, 8, &n), 1);
    assert_int_equal(n, 8);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(v[i]->rv, i + 1);
        assert_null(v[i]->wire);
        watch_event_unref(v[i]);
    }
    for (uint64_t want = 9; want <= 40;) {
        assert_int_equal(watcher_next(w, 0, v, 8, &n), 1);
        for (size_t i = 0; i < n; i++, want++) {
            assert_int_equal(v[i]->rv, want);
            watch_event_unref(v[i]);
        }
    }
    assert_int_equal(watcher_next(w, 0, v, 8, &n), 0);
    assert_int_equal(n, 0);
    watcher_free(w);
    watch_hub_free(h);
}

static void test_progress(void **state)
{
    struct watch_hub *h = watch_hub_new(NULL);
    struct watcher *w = watcher_new(h, "/core/pods/", 0);
    struct watch_event *ev = NULL;
    size_t n = 0;

    (void)state;
    assert_int_equal(watcher_progress(w), 0);
    /* Writes elsewhere move it forward: nothing this watcher will see lies at or below. */
    observe(h, STORE_ADDED, 3, "/core/configmaps/ns/x", "{}", NULL);
    assert_int_equal(watcher_progress(w), 3);
    observe(h, STORE_ADDED, 4, "/core/pods/ns/a", "{}", NULL);
    observe(h, STORE_ADDED, 5, "/core/configmaps/ns/y", "{}", NULL);
    /* A queued write holds it just below that write until it is handed out. */
    assert_int_equal(watcher_progress(w), 3);
    assert_int_equal(watcher_next(w, 0, &ev, 1, &n), 1);
    assert_int_equal(ev->rv, 4);
    watch_event_unref(ev);
    assert_int_equal(watcher_progress(w), 5);
    assert_int_equal(watcher_next(w, 0, &ev, 1, &n), 0); /* nothing queued: a timeout */
    watcher_free(w);
    watch_hub_free(h);
}

static void test_bound_cuts_off(void **state)
{
    struct watch_hub *h = watch_hub_new(NULL);
    struct watcher *small = watcher_new(h, "/k/", 10);
    struct watcher *big = watcher_new(h, "/k/", 100);
    struct watch_event *v[4];
    size_t n = 0;

    (void)state;
    observe(h, STORE_ADDED, 1, "/k/a", "123456", NULL);
    observe(h, STORE_MODIFIED, 2, "/k/a", "123456", "123456");
    assert_int_equal(watcher_next(small, 0, v, 4, &n), -EOVERFLOW); /* 12 bytes in 10 */
    assert_int_equal(n, 0);
    assert_int_equal(watcher_next(big, 0, v, 4, &n), 1);
    assert_int_equal(n, 2);
    watch_event_unref(v[0]);
    watch_event_unref(v[1]);
    watcher_free(small);
    watcher_free(big);
    watch_hub_free(h);
}

/* The index of the tests: the value is the object's text up to its first ':'. */
static bool index_of(const struct store_obj *obj, struct strbuf *out)
{
    const char *colon = strchr(obj->value, ':');

    if (!colon)
        return false;
    strbuf_add(out, obj->value, (size_t)(colon - obj->value));
    return true;
}

static size_t drain(struct watcher *w)
{
    struct watch_event *v[8];
    size_t n = 0, total = 0;

    while (watcher_next(w, 0, v, ARRAY_SIZE(v), &n) == 1) {
        for (size_t i = 0; i < n; i++)
            watch_event_unref(v[i]);
        total += n;
    }
    return total;
}

static void test_index(void **state)
{
    struct watch_hub *h = watch_hub_new(NULL);
    struct watcher *n1, *n2, *n1b, *all, *other;

    (void)state;
    watch_hub_set_index(h, "/core/pods/", index_of);
    n1 = watcher_new_indexed(h, "/core/pods/", 0, "n1");
    n1b = watcher_new_indexed(h, "/core/pods/ns/", 0, "n1");
    n2 = watcher_new_indexed(h, "/core/pods/", 0, "n2");
    all = watcher_new(h, "/core/pods/", 0);
    /* Outside the index's prefix a value is ignored: it sees every write of its prefix. */
    other = watcher_new_indexed(h, "/core/nodes/", 0, "n1");
    observe(h, STORE_ADDED, 1, "/core/pods/ns/a", "n1:a", NULL);
    observe(h, STORE_ADDED, 2, "/core/pods/other/b", "n1:b", NULL);
    observe(h, STORE_ADDED, 3, "/core/pods/ns/c", "n2:c", NULL);
    observe(h, STORE_ADDED, 4, "/core/nodes/n9", "n9:x", NULL);
    assert_int_equal(drain(n1), 2);
    assert_int_equal(drain(n1b), 1); /* its own namespace only */
    assert_int_equal(drain(n2), 1);
    assert_int_equal(drain(all), 3);
    assert_int_equal(drain(other), 1);
    /* A move from n1 to n2 reaches both: one sees it leave, the other arrive. */
    observe(h, STORE_MODIFIED, 5, "/core/pods/ns/a", "n2:a", "n1:a");
    assert_int_equal(drain(n1), 1);
    assert_int_equal(drain(n2), 1);
    /* An object without a value reaches only the unindexed. */
    observe(h, STORE_MODIFIED, 6, "/core/pods/ns/d", "none", NULL);
    assert_int_equal(drain(n1) + drain(n2), 0);
    assert_int_equal(drain(all), 2);
    watcher_free(n1);
    watcher_free(n1b);
    /* The bucket of n1 is gone with its watchers; a new one starts clean. */
    n1 = watcher_new_indexed(h, "/core/pods/", 0, "n1");
    observe(h, STORE_ADDED, 7, "/core/pods/ns/e", "n1:e", NULL);
    assert_int_equal(drain(n1), 1);
    watcher_free(n1);
    watcher_free(n2);
    watcher_free(all);
    watcher_free(other);
    watch_hub_free(h);
}

static void count_notify(void *ud)
{
    (*(int *)ud)++;
}

static void test_notify(void **state)
{
    struct watch_hub *h = watch_hub_new(NULL);
    struct watcher *w = watcher_new(h, "/k/", 10), *late = watcher_new(h, "/k/", 0);
    int calls = 0, late_calls = 0;

    (void)state;
    watcher_set_notify(w, count_notify, &calls);
    assert_int_equal(calls, 0);
    observe(h, STORE_ADDED, 1, "/k/a", "1", NULL);
    observe(h, STORE_ADDED, 2, "/k/b", "2", NULL);
    assert_int_equal(calls, 1); /* empty to not empty, once */
    assert_int_equal(drain(w), 2);
    observe(h, STORE_ADDED, 3, "/k/c", "3", NULL);
    assert_int_equal(calls, 2);
    /* Cut off (more than 10 bytes queued): notified so the stream ends. */
    observe(h, STORE_ADDED, 4, "/k/d", "0123456789", NULL);
    assert_int_equal(calls, 3);
    /* Registered with events already queued: called at once. */
    watcher_set_notify(late, count_notify, &late_calls);
    assert_int_equal(late_calls, 1);
    assert_int_equal(drain(late), 4);
    watch_hub_close(h);
    assert_int_equal(late_calls, 2);
    watcher_set_notify(late, NULL, NULL);
    watcher_free(w);
    watcher_free(late);
    watch_hub_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_shared_event),
        cmocka_unit_test(test_next_takes_everything_queued),
        cmocka_unit_test(test_progress),
        cmocka_unit_test(test_bound_cuts_off),
        cmocka_unit_test(test_index),
        cmocka_unit_test(test_notify),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
