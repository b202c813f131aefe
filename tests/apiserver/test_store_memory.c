/*
 * Tests for apiserver/store_memory: the in-memory backend with epoch-based revisions. Every
 * revision carries the store's epoch above bit 40 and counts writes from 1 below it; a fresh
 * store's history starts at epoch << 40, so revisions of an older epoch are expired (-ERANGE)
 * and those of a newer one not reached (-EOVERFLOW), and a store with a higher epoch issues
 * revisions above all of an older one's. Conditional writes, key and size checks, prefix lists
 * with paging, snapshots at older revisions (checked against a recorded model), the history
 * bounded by count and by the bytes of replaced values it keeps alive (which it really lets go
 * of), the observer and the listener told of every write in order with shared objects,
 * callbacks that run unlocked, concurrent writers getting contiguous revisions, the counter
 * refusing to spill into the epoch, the tree staying balanced, and every failed checked
 * allocation answered with -ENOMEM and nothing changed.
 *
 * The module's .c is included (not linked) so the tests can reach its tree and its counter.
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "apiserver/store_memory.c"
#include "base/base.h"
#include "base/strbuf.h"

#define EPOCH 5
#define BASE  ((uint64_t)EPOCH << STORE_MEMORY_EPOCH_SHIFT)

static struct store *open_store(uint64_t epoch, size_t history, size_t history_bytes,
                                size_t max_value)
{
    struct store_memory_opts o = {epoch, history, history_bytes, max_value};
    struct store *s = NULL;

    assert_int_equal(store_memory_new(&o, &s), 0);
    assert_non_null(s);
    return s;
}

static int setup(void **state)
{
    *state = open_store(EPOCH, 8, 0, 0);
    return 0;
}

static int teardown(void **state)
{
    store_close(*state);
    return 0;
}

static void put(struct store *s, const char *key, const char *value, uint64_t want_rv)
{
    uint64_t rv = 0;
    assert_int_equal(store_create(s, key, value, strlen(value), &rv), 0);
    assert_int_equal(rv, want_rv);
}

static void set(struct store *s, const char *key, const char *value, uint64_t want_rv)
{
    uint64_t rv = 0;
    assert_int_equal(store_update(s, key, value, strlen(value), 0, &rv), 0);
    assert_int_equal(rv, want_rv);
}

/* Lists as "key@n=value ", n the revision's counter (its epoch checked to be ours). */
static int collect(const struct store_item *it, void *ud)
{
    CHECK(it->rv >> STORE_MEMORY_EPOCH_SHIFT == EPOCH && it->obj && it->obj->rv == it->rv);
    strbuf_addf(ud, "%s@%llu=%.*s ", it->key, (unsigned long long)(it->rv - BASE), (int)it->len,
                it->value);
    return 0;
}

static int collect_one(const struct store_item *it, void *ud)
{
    (void)collect(it, ud);
    return 1;
}

static const char *const type_names[] = {"?", "ADDED", "MODIFIED", "DELETED"};

static int collect_event(const struct store_event *ev, void *ud)
{
    strbuf_addf(ud, "%llu:%s:%s:%.*s", (unsigned long long)(ev->rv - BASE), type_names[ev->type],
                ev->key, (int)ev->len, ev->value);
    if (ev->prev)
        strbuf_addf(ud, "<%.*s@%llu", (int)ev->prev_len, ev->prev,
                    (unsigned long long)(ev->prev_rv - BASE));
    strbuf_addch(ud, ' ');
    return 0;
}

static void test_crud_and_epoch_revisions(void **state)
{
    struct store *s = *state;
    struct store_item it = {0}, again = {0};
    uint64_t rv = 0;

    /* Empty: the revision and the history's start are the epoch alone. */
    assert_int_equal(BASE, UINT64_C(5497558138880));
    assert_int_equal(store_revision(s), BASE);
    assert_int_equal(store_oldest(s), BASE);
    put(s, "/core/pods/default/a", "{\"a\":1}", BASE + 1);
    put(s, "/core/pods/default/b", "{\"b\":1}", BASE + 2);
    assert_int_equal(store_create(s, "/core/pods/default/a", "x", 1, &rv), -EEXIST);
    assert_int_equal(store_revision(s), BASE + 2); /* a failed write takes no revision */

    assert_int_equal(store_get(s, "/core/pods/default/a", &it), 0);
    assert_string_equal(it.key, "/core/pods/default/a");
    assert_string_equal(it.value, "{\"a\":1}");
    assert_int_equal(it.len, 7);
    assert_int_equal(it.rv, BASE + 1);
    assert_int_equal(it.obj->rv, BASE + 1);
    /* One shared copy: a second read is the same object. */
    assert_int_equal(store_get(s, "/core/pods/default/a", &again), 0);
    assert_ptr_equal(again.obj, it.obj);
    store_item_release(&again);
    store_item_release(&it);

    /* Optimistic concurrency. */
    assert_int_equal(store_update(s, "/core/pods/default/a", "{\"a\":2}", 7, BASE + 1, &rv), 0);
    assert_int_equal(rv, BASE + 3);
    assert_int_equal(store_update(s, "/core/pods/default/a", "{\"a\":3}", 7, BASE + 1, &rv),
                     -ESTALE);
    assert_int_equal(store_update(s, "/core/pods/default/a", "{\"a\":3}", 7, 0, &rv), 0);
    assert_int_equal(rv, BASE + 4);
    assert_int_equal(store_update(s, "/core/pods/default/zz", "{}", 2, 0, &rv), -ENOENT);
    /* The backend's write hands back the replaced object on an update too. */
    assert_int_equal(
        s->ops->write(s, STORE_OP_UPDATE, "/core/pods/default/a", "{\"a\":4}", 7, 0, &it, &rv), 0);
    assert_int_equal(rv, BASE + 5);
    assert_string_equal(it.value, "{\"a\":3}");
    assert_int_equal(it.rv, BASE + 4);
    store_item_release(&it);

    assert_int_equal(store_delete(s, "/core/pods/default/b", 1, NULL, &rv), -ESTALE);
    assert_int_equal(store_delete(s, "/core/pods/default/b", BASE + 2, &it, &rv), 0);
    assert_int_equal(rv, BASE + 6);
    assert_string_equal(it.value, "{\"b\":1}");
    assert_int_equal(it.rv, BASE + 2);
    store_item_release(&it);
    assert_int_equal(store_get(s, "/core/pods/default/b", &it), -ENOENT);
    assert_int_equal(store_delete(s, "/core/pods/default/b", 0, NULL, &rv), -ENOENT);
    /* A deleted key can be created again. */
    put(s, "/core/pods/default/b", "{\"b\":2}", BASE + 7);
    assert_int_equal(store_revision(s), BASE + 7);
    assert_int_equal(store_oldest(s), BASE);
}

static void test_bad_input(void **state)
{
    struct store *s = *state, *t = NULL, *small;
    struct store_memory_opts o = {0};
    struct store_item it = {0};
    char *big = xcalloc(STORE_MAX_VALUE + 2, 1);
    uint64_t rv;

    /* Options out of range; *ret untouched. */
    assert_int_equal(store_memory_new(NULL, &t), -EINVAL);
    assert_int_equal(store_memory_new(&o, &t), -EINVAL); /* no epoch */
    o.epoch = STORE_MEMORY_MAX_EPOCH + 1;
    assert_int_equal(store_memory_new(&o, &t), -EINVAL);
    o = (struct store_memory_opts){.epoch = 1, .max_value = STORE_MAX_VALUE + 1};
    assert_int_equal(store_memory_new(&o, &t), -EINVAL);
    o = (struct store_memory_opts){.epoch = 1, .history = STORE_MEMORY_MAX_HISTORY + 1};
    assert_int_equal(store_memory_new(&o, &t), -EINVAL);
    assert_null(t);

    /* The largest epoch still gives revisions that fit an int64. */
    small = open_store(STORE_MEMORY_MAX_EPOCH, 0, 0, 0);
    assert_int_equal(store_revision(small), UINT64_C(0x7fffff0000000000));
    assert_int_equal(store_create(small, "/k", "v", 1, &rv), 0);
    assert_int_equal(rv, UINT64_C(0x7fffff0000000001));
    assert_true(rv <= INT64_MAX);
    store_close(small);

    assert_int_equal(store_create(s, "", "x", 1, &rv), -EINVAL);
    assert_int_equal(store_create(s, "/a b", "x", 1, &rv), -EINVAL);
    assert_int_equal(store_create(s, "/a\n", "x", 1, &rv), -EINVAL);
    assert_int_equal(store_update(s, "/a b", "x", 1, 0, &rv), -EINVAL);
    assert_int_equal(store_delete(s, "/a\x7f", 0, NULL, &rv), -EINVAL);
    assert_int_equal(store_get(s, NULL, &it), -EINVAL);
    assert_int_equal(store_get(s, "/a b", &it), -EINVAL);
    memset(big, 'x', STORE_MAX_VALUE + 1);
    assert_int_equal(store_create(s, "/k", big, STORE_MAX_VALUE + 1, &rv), -E2BIG);
    /* The default max_value is 1 MiB. */
    assert_int_equal(store_create(s, "/k", big, (1u << 20) + 1, &rv), -E2BIG);
    assert_int_equal(store_create(s, "/k", big, 1u << 20, &rv), 0);
    assert_int_equal(store_update(s, "/k", big, (1u << 20) + 1, 0, &rv), -E2BIG);
    assert_int_equal(store_revision(s), BASE + 1);
    /* Binary values with NULs are kept exactly. */
    assert_int_equal(store_update(s, "/k", "a\0b", 3, 0, &rv), 0);
    assert_int_equal(store_get(s, "/k", &it), 0);
    assert_int_equal(it.len, 3);
    assert_memory_equal(it.value, "a\0b", 3);
    store_item_release(&it);

    /* A configured max_value. */
    small = open_store(EPOCH, 0, 0, 16);
    assert_int_equal(store_create(small, "/k", big, 17, &rv), -E2BIG);
    assert_int_equal(store_create(small, "/k", big, 16, &rv), 0);
    assert_int_equal(store_update(small, "/k", big, 17, 0, &rv), -E2BIG);
    assert_int_equal(store_revision(small), BASE + 1);
    store_close(small);
    free(big);
}

static void test_list(void **state)
{
    struct store *s = *state;
    struct strbuf sb = STRBUF_INIT;
    uint64_t rv = 0;

    assert_int_equal(store_list(s, "/core/pods/", NULL, 0, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "");
    assert_int_equal(rv, BASE);
    put(s, "/core/pods/ns2/b", "b", BASE + 1);
    put(s, "/core/pods/ns1/a", "a", BASE + 2);
    put(s, "/core/pods/ns1/c", "c", BASE + 3);
    put(s, "/core/pods/ns10/x", "x", BASE + 4); /* "ns1" as a string prefix, not a path */
    put(s, "/core/podsx/ns1/a", "p", BASE + 5);
    put(s, "/core/nodes//n1", "n", BASE + 6);

    assert_int_equal(store_list(s, "/core/pods/", NULL, 0, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/core/pods/ns1/a@2=a /core/pods/ns1/c@3=c /core/pods/ns10/x@4=x "
                                "/core/pods/ns2/b@1=b ");
    assert_int_equal(rv, BASE + 6);
    strbuf_reset(&sb);
    assert_int_equal(store_list(s, "/core/pods/ns1/", NULL, 0, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/core/pods/ns1/a@2=a /core/pods/ns1/c@3=c ");
    strbuf_reset(&sb);
    assert_int_equal(store_list(s, "/", NULL, 0, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/core/nodes//n1@6=n /core/pods/ns1/a@2=a /core/pods/ns1/c@3=c "
                                "/core/pods/ns10/x@4=x /core/pods/ns2/b@1=b "
                                "/core/podsx/ns1/a@5=p ");

    /* Paging: a limit, then on after the last key. */
    strbuf_reset(&sb);
    assert_int_equal(store_list(s, "/core/pods/", NULL, 2, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/core/pods/ns1/a@2=a /core/pods/ns1/c@3=c ");
    strbuf_reset(&sb);
    assert_int_equal(store_list(s, "/core/pods/", "/core/pods/ns1/c", 2, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/core/pods/ns10/x@4=x /core/pods/ns2/b@1=b ");
    strbuf_reset(&sb);
    assert_int_equal(store_list(s, "/core/pods/", "/core/pods/ns2/b", 2, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "");
    /* `after` need not be a key; before the prefix it is ignored, past it nothing is left. */
    assert_int_equal(store_list(s, "/core/pods/", "/core/pods/ns1/b", 1, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/core/pods/ns1/c@3=c ");
    strbuf_reset(&sb);
    assert_int_equal(store_list(s, "/core/pods/", "/a", 1, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/core/pods/ns1/a@2=a ");
    strbuf_reset(&sb);
    assert_int_equal(store_list(s, "/core/pods/", "/core/q", 0, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "");

    /* A callback may stop early; a malformed prefix is refused. */
    assert_int_equal(store_list(s, "/core/", NULL, 0, collect_one, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/core/nodes//n1@6=n ");
    assert_int_equal(store_list(s, "", NULL, 0, collect, &sb, &rv), -EINVAL);
    assert_int_equal(store_list(s, "/a b", NULL, 0, collect, &sb, &rv), -EINVAL);
    strbuf_release(&sb);
}

static int fail_item(const struct store_item *it, void *ud)
{
    (void)it;
    (void)ud;
    return -EPIPE;
}

/* The state at an older revision: changed objects as they were, deleted ones back, created
 * ones absent; bounded by the history on one side and the current revision on the other. */
static void test_list_at_revision(void **state)
{
    struct store *s = *state;
    struct strbuf sb = STRBUF_INIT;
    uint64_t rv = 0;

    put(s, "/k/a", "a1", BASE + 1);
    put(s, "/k/b", "b1", BASE + 2);
    put(s, "/k/c", "c1", BASE + 3);
    set(s, "/k/b", "b2", BASE + 4);
    assert_int_equal(store_delete(s, "/k/a", 0, NULL, &rv), 0); /* 5 */
    put(s, "/k/aa", "aa1", BASE + 6);
    set(s, "/k/b", "b3", BASE + 7);
    set(s, "/k/aa", "aa2", BASE + 8);

    /* The empty state the epoch starts from is still covered. */
    assert_int_equal(store_list_at(s, "/k/", NULL, BASE, 0, collect, &sb, &rv), 0);
    assert_int_equal(rv, BASE);
    assert_string_equal(sb.buf, "");
    assert_int_equal(store_list_at(s, "/k/", NULL, BASE + 3, 0, collect, &sb, &rv), 0);
    assert_int_equal(rv, BASE + 3);
    assert_string_equal(sb.buf, "/k/a@1=a1 /k/b@2=b1 /k/c@3=c1 ");
    strbuf_reset(&sb);
    assert_int_equal(store_list_at(s, "/k/", NULL, BASE + 6, 0, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/k/aa@6=aa1 /k/b@4=b2 /k/c@3=c1 ");
    strbuf_reset(&sb);
    /* Paging within a snapshot: limits count the snapshot's objects, not the current ones. */
    assert_int_equal(store_list_at(s, "/k/", "/k/a", BASE + 3, 1, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/k/b@2=b1 ");
    strbuf_reset(&sb);
    assert_int_equal(store_list_at(s, "/k/", NULL, BASE + 3, 2, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/k/a@1=a1 /k/b@2=b1 ");
    strbuf_reset(&sb);
    assert_int_equal(store_list_at(s, "/k/", "/k/b", BASE + 3, 2, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/k/c@3=c1 ");
    strbuf_reset(&sb);
    assert_int_equal(store_list_at(s, "/k/", NULL, BASE + 4, 1, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/k/a@1=a1 ");
    strbuf_reset(&sb);
    assert_int_equal(store_list_at(s, "/k/a", NULL, BASE + 6, 0, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/k/aa@6=aa1 ");
    strbuf_reset(&sb);
    assert_int_equal(store_list_at(s, "/k/", NULL, 0, 0, collect, &sb, &rv), 0);
    assert_int_equal(rv, BASE + 8);
    assert_string_equal(sb.buf, "/k/aa@8=aa2 /k/b@7=b3 /k/c@3=c1 ");
    /* The current revision named is the current list. */
    strbuf_reset(&sb);
    assert_int_equal(store_list_at(s, "/k/", NULL, BASE + 8, 0, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/k/aa@8=aa2 /k/b@7=b3 /k/c@3=c1 ");
    assert_int_equal(store_list_at(s, "/k/", NULL, BASE + 3, 0, fail_item, NULL, &rv), -EPIPE);

    /* Newer than the current revision, in this epoch or the next: not reached. */
    rv = 0;
    assert_int_equal(store_list_at(s, "/k/", NULL, BASE + 9, 0, collect, &sb, &rv), -EOVERFLOW);
    assert_int_equal(rv, BASE + 9);
    assert_int_equal(store_list_at(s, "/k/", NULL,
                                   ((uint64_t)(EPOCH + 1) << STORE_MEMORY_EPOCH_SHIFT) | 1, 0,
                                   collect, &sb, &rv),
                     -EOVERFLOW);
    /* Older than the epoch: expired. */
    assert_int_equal(store_list_at(s, "/k/", NULL, BASE - 1, 0, collect, &sb, &rv), -ERANGE);
    assert_int_equal(rv, BASE - 1);
    assert_int_equal(store_list_at(s, "/k/", NULL, 1, 0, collect, &sb, &rv), -ERANGE);

    /* The fixture keeps 8 events: 9 more writes leave 9 as the oldest listable revision. */
    for (int i = 0; i < 9; i++)
        set(s, "/k/c", "c2", BASE + 9 + (uint64_t)i);
    assert_int_equal(store_oldest(s), BASE + 9);
    assert_int_equal(store_list_at(s, "/k/", NULL, BASE + 8, 0, collect, &sb, &rv), -ERANGE);
    strbuf_reset(&sb);
    assert_int_equal(store_list_at(s, "/k/", NULL, BASE + 9, 0, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/k/aa@8=aa2 /k/b@7=b3 /k/c@9=c2 ");
    strbuf_release(&sb);
}

/* ---- snapshots against a model ---- */

static uint32_t rng_next(uint32_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

struct pages {
    struct strbuf sb;
    const char *last;
    char cursor[64];
    int n;
};

static int collect_page(const struct store_item *it, void *ud)
{
    struct pages *p = ud;

    (void)collect(it, &p->sb);
    (void)snprintf(p->cursor, sizeof(p->cursor), "%s", it->key);
    p->n++;
    return 0;
}

/*
 * Random creates, updates and deletes on a few keys, the whole list recorded after every
 * write; then every recorded revision listed again from the history, whole and in pages of 3,
 * and under a narrower prefix, must give exactly what was recorded.
 */
#define MODEL_WRITES 300

static void test_snapshots_match_a_model(void **state)
{
    static char recorded[MODEL_WRITES + 1][1024];
    struct store *s = open_store(EPOCH, 1000, 0, 0);
    struct strbuf sb = STRBUF_INIT;
    uint32_t x = 2463534242u;
    uint64_t rv;

    (void)state;
    for (int w = 1; w <= MODEL_WRITES; w++) {
        char key[32], val[32];
        struct store_item it = {0};
        int r;

        (void)snprintf(key, sizeof(key), "/m/%c%u", "ab"[rng_next(&x) % 2], rng_next(&x) % 6);
        (void)snprintf(val, sizeof(val), "v%d", w);
        if (store_get(s, key, &it) == -ENOENT)
            r = store_create(s, key, val, strlen(val), &rv);
        else if (rng_next(&x) % 3 == 0)
            r = store_delete(s, key, it.rv, NULL, &rv);
        else
            r = store_update(s, key, val, strlen(val), it.rv, &rv);
        store_item_release(&it);
        assert_int_equal(r, 0);
        assert_int_equal(rv, BASE + (uint64_t)w);
        strbuf_reset(&sb);
        assert_int_equal(store_list(s, "/m/", NULL, 0, collect, &sb, &rv), 0);
        assert_true(sb.len < sizeof(recorded[w]));
        memcpy(recorded[w], sb.buf, sb.len + 1);
    }
    for (int w = 1; w <= MODEL_WRITES; w++) {
        struct pages p = {.sb = STRBUF_INIT};
        const char *b;

        strbuf_reset(&sb);
        assert_int_equal(store_list_at(s, "/m/", NULL, BASE + (uint64_t)w, 0, collect, &sb, &rv),
                         0);
        assert_string_equal(sb.buf, recorded[w]);
        do {
            p.n = 0;
            assert_int_equal(store_list_at(s, "/m/", p.sb.len ? p.cursor : NULL, BASE + (uint64_t)w,
                                           3, collect_page, &p, &rv),
                             0);
        } while (p.n == 3);
        assert_string_equal(p.sb.buf, recorded[w]);
        /* Only the b keys: the recorded list from its first b on (a sorts before b). */
        strbuf_reset(&sb);
        assert_int_equal(store_list_at(s, "/m/b", NULL, BASE + (uint64_t)w, 0, collect, &sb, &rv),
                         0);
        b = strstr(recorded[w], "/m/b");
        assert_string_equal(sb.buf, b ? b : "");
        strbuf_release(&p.sb);
    }
    strbuf_release(&sb);
    store_close(s);
}

/* ---- the history ---- */

static void test_events_and_compaction_by_count(void **state)
{
    struct store *s = *state;
    struct strbuf sb = STRBUF_INIT;
    uint64_t rv;

    put(s, "/k/a", "1", BASE + 1);
    set(s, "/k/a", "2", BASE + 2);
    assert_int_equal(store_delete(s, "/k/a", 0, NULL, &rv), 0);
    assert_int_equal(store_events(s, BASE, collect_event, &sb), 0);
    assert_string_equal(sb.buf, "1:ADDED:/k/a:1 2:MODIFIED:/k/a:2<1@1 3:DELETED:/k/a:2 ");
    strbuf_reset(&sb);
    assert_int_equal(store_events(s, BASE + 2, collect_event, &sb), 0);
    assert_string_equal(sb.buf, "3:DELETED:/k/a:2 ");

    /* The fixture keeps 8 events: after 12 writes, 4 is the oldest start point. */
    for (int i = 0; i < 9; i++) {
        char key[16];
        (void)snprintf(key, sizeof(key), "/k/%d", i);
        put(s, key, "v", BASE + 4 + (uint64_t)i);
    }
    assert_int_equal(store_revision(s), BASE + 12);
    assert_int_equal(store_oldest(s), BASE + 4);
    strbuf_reset(&sb);
    assert_int_equal(store_events(s, BASE + 3, collect_event, &sb), -ERANGE);
    assert_int_equal(store_events(s, BASE, collect_event, &sb), -ERANGE);
    assert_int_equal(store_events(s, 0, collect_event, &sb), -ERANGE);
    assert_string_equal(sb.buf, "");
    assert_int_equal(store_events(s, BASE + 4, collect_event, &sb), 0);
    assert_string_equal(sb.buf, "5:ADDED:/k/1:v 6:ADDED:/k/2:v 7:ADDED:/k/3:v 8:ADDED:/k/4:v "
                                "9:ADDED:/k/5:v 10:ADDED:/k/6:v 11:ADDED:/k/7:v 12:ADDED:/k/8:v ");
    strbuf_reset(&sb);
    assert_int_equal(store_events(s, BASE + 12, collect_event, &sb), 0);
    /* Not reached yet (the API server refuses such a watch before asking): nothing. */
    assert_int_equal(store_events(s, BASE + 13, collect_event, &sb), 0);
    assert_int_equal(store_events(s, UINT64_MAX, collect_event, &sb), 0);
    assert_string_equal(sb.buf, "");
    strbuf_release(&sb);
}

struct seen {
    struct strbuf log;
    int n;
    size_t last_prev_len; /* the objects themselves may be gone by the time we look */
};

static int count_event(const struct store_event *ev, void *ud)
{
    struct seen *s = ud;

    CHECK(ev->obj && ev->obj->key == ev->key && ev->obj->value == ev->value);
    s->n++;
    s->last_prev_len = ev->prev_obj ? ev->prev_obj->len : 0;
    return 0;
}

static unsigned refs(const struct store_obj *o)
{
    return atomic_load(&o->refs);
}

/*
 * history_bytes bounds the replaced and removed values the history keeps alive: 10 bytes here,
 * 4 per value. Dropped events let go of their objects; a value bigger than the bound alone
 * empties the history (after the observer heard of it).
 */
static void test_compaction_by_bytes(void **state)
{
    struct store *s = open_store(EPOCH, 100, 10, 0);
    struct seen seen = {.log = STRBUF_INIT};
    struct strbuf sb = STRBUF_INIT;
    struct store_item a1 = {0};
    uint64_t rv;

    (void)state;
    store_set_observer(s, count_event, &seen);
    put(s, "/a", "a001", BASE + 1); /* pins nothing: a001 is current */
    assert_int_equal(store_get(s, "/a", &a1), 0);
    set(s, "/a", "a002", BASE + 2); /* pins a001: 4 */
    set(s, "/a", "a003", BASE + 3); /* a002: 8 */
    put(s, "/b", "b001", BASE + 4); /* 8 */
    assert_int_equal(store_oldest(s), BASE);
    assert_int_equal(refs(a1.obj), 3); /* ours, event 1's, event 2's */
    set(s, "/a", "a004", BASE + 5);    /* a003: 12, so events 1 and 2 go: 8 */
    assert_int_equal(store_oldest(s), BASE + 2);
    assert_int_equal(refs(a1.obj), 1); /* only ours: the history let go */
    store_item_release(&a1);
    assert_int_equal(store_events(s, BASE + 1, collect_event, &sb), -ERANGE);
    assert_int_equal(store_events(s, BASE + 2, collect_event, &sb), 0);
    assert_string_equal(sb.buf, "3:MODIFIED:/a:a003<a002@2 4:ADDED:/b:b001 "
                                "5:MODIFIED:/a:a004<a003@3 ");
    strbuf_reset(&sb);
    assert_int_equal(store_list_at(s, "/", NULL, BASE + 1, 0, collect, &sb, &rv), -ERANGE);
    assert_int_equal(store_list_at(s, "/", NULL, BASE + 2, 0, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/a@2=a002 ");
    strbuf_reset(&sb);

    assert_int_equal(store_delete(s, "/b", 0, NULL, &rv), 0); /* b001: 12, event 3 goes: 8 */
    assert_int_equal(rv, BASE + 6);
    assert_int_equal(store_oldest(s), BASE + 3);
    set(s, "/a", "01234567890", BASE + 7); /* a004: 12; events 4, 5 go: 8 */
    assert_int_equal(store_oldest(s), BASE + 5);
    set(s, "/a", "x", BASE + 8); /* 11 bytes: 19; 6, 7, then 8 itself go */
    assert_int_equal(store_oldest(s), BASE + 8);
    assert_int_equal(store_revision(s), BASE + 8);
    assert_int_equal(seen.n, 8);
    assert_int_equal(seen.last_prev_len, 11);
    assert_int_equal(store_events(s, BASE + 8, collect_event, &sb), 0);
    assert_int_equal(store_events(s, BASE + 7, collect_event, &sb), -ERANGE);
    assert_string_equal(sb.buf, "");
    assert_int_equal(store_list_at(s, "/", NULL, BASE + 8, 0, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/a@8=x ");
    /* Still writable, and the history fills again. */
    set(s, "/a", "y", BASE + 9);
    strbuf_reset(&sb);
    assert_int_equal(store_events(s, BASE + 8, collect_event, &sb), 0);
    assert_string_equal(sb.buf, "9:MODIFIED:/a:y<x@8 ");
    strbuf_release(&sb);
    strbuf_release(&seen.log);
    store_close(s);
}

/* A store of a later epoch (the next leader, or this process restarted) against revisions of
 * an earlier one. */
static void test_epochs(void **state)
{
    struct store *a = *state, *b;
    struct strbuf sb = STRBUF_INIT;
    uint64_t rv, last_a, list_rv, next_epoch;
    struct store_item it = {0};

    put(a, "/n/1", "x", BASE + 1);
    put(a, "/n/2", "x", BASE + 2);
    for (int i = 0; i < 20; i++)
        set(a, "/n/1", "y", BASE + 3 + (uint64_t)i);
    last_a = store_revision(a);
    assert_int_equal(store_list(a, "/n/", NULL, 0, collect, &sb, &list_rv), 0);
    assert_int_equal(list_rv, last_a);

    b = open_store(EPOCH + 1, 8, 0, 0);
    next_epoch = (uint64_t)(EPOCH + 1) << STORE_MEMORY_EPOCH_SHIFT;
    assert_int_equal(store_revision(b), next_epoch);
    assert_int_equal(store_oldest(b), next_epoch);
    assert_true(store_revision(b) > last_a);
    /* Every revision of the old epoch is expired here: a watch or a list gets 410 and relists. */
    strbuf_reset(&sb);
    assert_int_equal(store_events(b, last_a, collect_event, &sb), -ERANGE);
    assert_int_equal(store_events(b, BASE, collect_event, &sb), -ERANGE);
    assert_int_equal(store_list_at(b, "/n/", NULL, list_rv, 0, collect, &sb, &rv), -ERANGE);
    assert_int_equal(store_list_at(b, "/n/", NULL, BASE + 1, 0, collect, &sb, &rv), -ERANGE);
    assert_string_equal(sb.buf, "");
    /* The relist: the new store's state and revision, above everything the old one issued. */
    assert_int_equal(store_list(b, "/n/", NULL, 0, collect, &sb, &rv), 0);
    assert_int_equal(rv, next_epoch);
    assert_true(rv > last_a);
    assert_int_equal(store_create(b, "/n/1", "z", 1, &rv), 0);
    assert_int_equal(rv, next_epoch + 1);
    assert_true(rv > last_a);
    assert_int_equal(store_get(b, "/n/1", &it), 0);
    assert_true(it.rv > last_a);
    store_item_release(&it);
    /* And the other way: the new epoch's revisions are not reached in the old store. */
    assert_int_equal(store_list_at(a, "/n/", NULL, rv, 0, collect, &sb, &list_rv), -EOVERFLOW);
    assert_int_equal(store_list_at(a, "/n/", NULL, next_epoch, 0, collect, &sb, &list_rv),
                     -EOVERFLOW);
    assert_int_equal(store_events(a, rv, collect_event, &sb), 0);
    assert_string_equal(sb.buf, "");
    store_close(b);
    strbuf_release(&sb);
}

/* ---- hooks ---- */

struct hooks {
    struct strbuf log;
    uint64_t observed, listened;
    const struct store_obj *objs[16];
    bool order_ok;
};

static int observe(const struct store_event *ev, void *ud)
{
    struct hooks *h = ud;

    if (ev->rv != h->observed + 1 || h->listened != h->observed || !ev->obj) {
        h->order_ok = false;
        return 0;
    }
    h->observed = ev->rv;
    if (ev->rv - BASE < ARRAY_SIZE(h->objs))
        h->objs[ev->rv - BASE] = ev->obj;
    strbuf_addf(&h->log, "%llu:%s:%s:%s@%llu", (unsigned long long)(ev->rv - BASE),
                type_names[ev->type], ev->key, ev->obj->value,
                (unsigned long long)(ev->obj->rv - BASE));
    if (ev->prev_obj)
        strbuf_addf(&h->log, "<%s@%llu", ev->prev_obj->value,
                    (unsigned long long)(ev->prev_obj->rv - BASE));
    strbuf_addch(&h->log, ' ');
    return 0;
}

/* Runs right after the observer for the same write, with the same objects. */
static int on_listen(const struct store_event *ev, void *ud)
{
    struct hooks *h = ud;

    if (ev->rv != h->observed || ev->rv != h->listened + 1 ||
        (ev->rv - BASE < ARRAY_SIZE(h->objs) && h->objs[ev->rv - BASE] != ev->obj))
        h->order_ok = false;
    h->listened = ev->rv;
    return 0;
}

/* A listener alone (no watch hub yet): hears every write too. */
static int listen_alone(const struct store_event *ev, void *ud)
{
    struct hooks *h = ud;

    if (ev->rv != h->listened + 1 || !ev->obj)
        h->order_ok = false;
    h->listened = ev->rv;
    return 0;
}

static int check_shared(const struct store_event *ev, void *ud)
{
    struct hooks *h = ud;

    CHECK(h->objs[ev->rv - BASE] == ev->obj);
    return 0;
}

static void test_observer_and_listener(void **state)
{
    struct store *s = *state;
    struct hooks h = {.log = STRBUF_INIT, .observed = BASE, .listened = BASE, .order_ok = true};
    struct store_item it = {0};
    uint64_t rv;

    store_set_observer(s, observe, &h);
    store_memory_set_listener(s, on_listen, &h);
    put(s, "/c", "c1", BASE + 1);
    set(s, "/c", "c2", BASE + 2);
    put(s, "/d", "d1", BASE + 3);
    assert_int_equal(store_update(s, "/c", "c3", 2, BASE + 1, &rv), -ESTALE); /* not heard */
    assert_int_equal(store_delete(s, "/c", 0, NULL, &rv), 0);
    assert_string_equal(h.log.buf, "1:ADDED:/c:c1@1 2:MODIFIED:/c:c2@2<c1@1 3:ADDED:/d:d1@3 "
                                   "4:DELETED:/c:c2@2 ");
    assert_true(h.order_ok);
    assert_int_equal(h.listened, BASE + 4);
    /* The objects handed out are the store's own: gets and replays give the same ones. */
    assert_int_equal(store_get(s, "/d", &it), 0);
    assert_ptr_equal(it.obj, h.objs[3]);
    store_item_release(&it);
    assert_int_equal(store_events(s, BASE, check_shared, &h), 0);

    /* Each hook goes independently. */
    store_set_observer(s, NULL, NULL);
    store_memory_set_listener(s, listen_alone, &h);
    put(s, "/e", "e1", BASE + 5);
    assert_int_equal(h.observed, BASE + 4);
    assert_int_equal(h.listened, BASE + 5);
    assert_true(h.order_ok);
    store_memory_set_listener(s, NULL, NULL);
    put(s, "/f", "f1", BASE + 6);
    assert_int_equal(h.listened, BASE + 5);
    strbuf_release(&h.log);
}

/* ---- callbacks run unlocked ---- */

struct writer_cb {
    struct store *s;
    struct strbuf seen;
    int n, writes;
};

/* Writes from inside a list's callback (a deadlock if callbacks ran locked): the list goes
 * on with the state it started from. */
static int write_during_list(const struct store_item *it, void *ud)
{
    struct writer_cb *w = ud;
    uint64_t rv;

    if (w->n++ == 0) {
        CHECK(store_delete(w->s, "/l/c", 0, NULL, &rv) == 0);
        CHECK(store_create(w->s, "/l/bb", "new", 3, &rv) == 0);
        CHECK(store_update(w->s, "/l/b", "b2", 2, 0, &rv) == 0);
    }
    strbuf_addf(&w->seen, "%s=%s ", it->key, it->value);
    return 0;
}

/* Writes from inside a replay: the replay ends at the revision current when it started; past
 * what one locked chunk holds, writes that push the rest of the history out end it with
 * -ERANGE. */
static int write_during_replay(const struct store_event *ev, void *ud)
{
    struct writer_cb *w = ud;
    uint64_t rv;

    strbuf_addf(&w->seen, "%llu ", (unsigned long long)(ev->rv - BASE));
    if (w->n++ == 0)
        for (int i = 0; i < w->writes; i++)
            CHECK(store_update(w->s, "/r/a", "again", 5, 0, &rv) == 0);
    return 0;
}

static int count_replay(const struct store_event *ev, void *ud)
{
    (void)ev;
    ((struct writer_cb *)ud)->n++;
    return 0;
}

static void test_callbacks_run_unlocked(void **state)
{
    struct store *s = *state, *big;
    struct writer_cb w = {.s = s, .seen = STRBUF_INIT, .writes = 1};
    uint64_t rv = 0;

    put(s, "/l/a", "a", BASE + 1);
    put(s, "/l/b", "b", BASE + 2);
    put(s, "/l/c", "c", BASE + 3);
    assert_int_equal(store_list(s, "/l/", NULL, 0, write_during_list, &w, &rv), 0);
    assert_int_equal(rv, BASE + 3);
    assert_string_equal(w.seen.buf, "/l/a=a /l/b=b /l/c=c ");
    assert_int_equal(store_revision(s), BASE + 6);
    /* The same from an older revision. */
    w.n = 0;
    strbuf_reset(&w.seen);
    put(s, "/l/c", "c", BASE + 7);
    assert_int_equal(store_delete(s, "/l/bb", 0, NULL, &rv), 0); /* 8 */
    assert_int_equal(store_list_at(s, "/l/", NULL, BASE + 6, 0, write_during_list, &w, &rv), 0);
    assert_string_equal(w.seen.buf, "/l/a=a /l/b=b2 /l/bb=new ");

    w.n = 0;
    strbuf_reset(&w.seen);
    put(s, "/r/a", "1", BASE + 12);
    assert_int_equal(store_events(s, BASE + 9, write_during_replay, &w), 0);
    assert_string_equal(w.seen.buf, "10 11 12 ");
    assert_int_equal(store_revision(s), BASE + 13);

    /* 600 events: the replay reads 256, and its callback's 600 writes push the rest out. */
    big = open_store(EPOCH, 600, 0, 0);
    put(big, "/r/a", "0", BASE + 1);
    for (int i = 0; i < 599; i++)
        set(big, "/r/a", "v", BASE + 2 + (uint64_t)i);
    w = (struct writer_cb){.s = big, .seen = w.seen, .writes = 600};
    strbuf_reset(&w.seen);
    assert_int_equal(store_events(big, BASE, write_during_replay, &w), -ERANGE);
    assert_int_equal(w.n, 256);
    /* Without the writes, the whole history in chunks. */
    w.n = 0;
    assert_int_equal(store_events(big, store_oldest(big), count_replay, &w), 0);
    assert_int_equal(w.n, 600);
    store_close(big);
    strbuf_release(&w.seen);
}

/* ---- concurrency ---- */

#define CW_THREADS 4
#define CW_WRITES  2000

struct cw_run {
    struct store *s;
    pthread_mutex_t mu;
    uint64_t last_seen, observed;
    bool in_order;
    atomic_bool stop;
    atomic_int reader_errors;
    atomic_long lists;
};

static int cw_observe(const struct store_event *ev, void *ud)
{
    struct cw_run *run = ud;

    /* Runs under the store's lock; the mutex only keeps the test's counters tidy. */
    CHECK(pthread_mutex_lock(&run->mu) == 0);
    if (ev->rv != run->last_seen + 1 || !ev->obj)
        run->in_order = false;
    run->last_seen = ev->rv;
    run->observed++;
    CHECK(pthread_mutex_unlock(&run->mu) == 0);
    return 0;
}

struct cw_worker {
    struct cw_run *run;
    int id;
    uint64_t rvs[1 + CW_WRITES];
    size_t n;
};

/* Updates of its own key, and every fourth write an increment of a shared counter (read, then
 * a conditional update, retried on -ESTALE). */
static void *cw_write(void *ud)
{
    struct cw_worker *w = ud;
    char key[32], val[32];
    uint64_t rv, own_rv;

    (void)snprintf(key, sizeof(key), "/cw/own/%d", w->id);
    CHECK(store_create(w->run->s, key, "0", 1, &own_rv) == 0);
    w->rvs[w->n++] = own_rv;
    for (int i = 0; i < CW_WRITES; i++) {
        if (i % 4 == 0) {
            struct store_item it = {0};
            int r;
            do {
                CHECK(store_get(w->run->s, "/cw/counter", &it) == 0);
                (void)snprintf(val, sizeof(val), "%ld", strtol(it.value, NULL, 10) + 1);
                r = store_update(w->run->s, "/cw/counter", val, strlen(val), it.rv, &rv);
                store_item_release(&it);
                CHECK(r == 0 || r == -ESTALE);
            } while (r == -ESTALE);
        } else {
            (void)snprintf(val, sizeof(val), "%d", i);
            CHECK(store_update(w->run->s, key, val, strlen(val), own_rv, &own_rv) == 0);
            rv = own_rv;
        }
        w->rvs[w->n++] = rv;
    }
    return NULL;
}

struct cw_list {
    uint64_t rv;
    char last[32];
    bool ok;
};

static int cw_check_item(const struct store_item *it, void *ud)
{
    struct cw_list *l = ud;

    /* Key order, and nothing newer than the revision the list is consistent with. */
    if (strcmp(it->key, l->last) <= 0 || it->rv > l->rv)
        l->ok = false;
    (void)snprintf(l->last, sizeof(l->last), "%s", it->key);
    return 0;
}

static void *cw_read(void *ud)
{
    struct cw_run *run = ud;

    while (!atomic_load(&run->stop)) {
        struct cw_list l = {.ok = true};
        struct store_item it = {0};
        uint64_t rev = store_revision(run->s);
        int r;

        if (store_list(run->s, "/cw/", NULL, 0, cw_check_item, &l, &l.rv) != 0 || !l.ok ||
            l.rv < rev)
            atomic_fetch_add(&run->reader_errors, 1);
        /* A recent snapshot: listed, or expired meanwhile. */
        l = (struct cw_list){.ok = true, .rv = rev};
        r = store_list_at(run->s, "/cw/", NULL, rev, 0, cw_check_item, &l, NULL);
        if ((r != 0 && r != -ERANGE) || !l.ok)
            atomic_fetch_add(&run->reader_errors, 1);
        if (store_get(run->s, "/cw/counter", &it) != 0 || it.rv > store_revision(run->s))
            atomic_fetch_add(&run->reader_errors, 1);
        store_item_release(&it);
        atomic_fetch_add(&run->lists, 1);
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_concurrent_writers(void **state)
{
    struct store *s = open_store(EPOCH, 0, 0, 0);
    struct cw_run run = {.s = s, .in_order = true};
    struct cw_worker *w = xcalloc(CW_THREADS, sizeof(*w));
    uint64_t *all = xcalloc((size_t)CW_THREADS * (1 + CW_WRITES), sizeof(*all));
    pthread_t th[CW_THREADS], reader;
    struct store_item it = {0};
    size_t n = 0;

    (void)state;
    CHECK(pthread_mutex_init(&run.mu, NULL) == 0);
    put(s, "/cw/counter", "0", BASE + 1);
    run.last_seen = BASE + 1;
    store_set_observer(s, cw_observe, &run);
    assert_int_equal(pthread_create(&reader, NULL, cw_read, &run), 0);
    for (int i = 0; i < CW_THREADS; i++) {
        w[i].run = &run;
        w[i].id = i;
        assert_int_equal(pthread_create(&th[i], NULL, cw_write, &w[i]), 0);
    }
    for (int i = 0; i < CW_THREADS; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        memcpy(all + n, w[i].rvs, w[i].n * sizeof(*all));
        n += w[i].n;
    }
    atomic_store(&run.stop, true);
    assert_int_equal(pthread_join(reader, NULL), 0);
    store_set_observer(s, NULL, NULL);

    /* Every acknowledged write has its own revision, and together they are 2 .. N + 1. */
    assert_int_equal(n, CW_THREADS * (1 + CW_WRITES));
    qsort(all, n, sizeof(*all), cmp_u64);
    for (size_t i = 0; i < n; i++)
        if (all[i] != BASE + 2 + i)
            fail_msg("revision %zu is %llu, want %llu", i, (unsigned long long)(all[i] - BASE),
                     (unsigned long long)(2 + i));
    assert_int_equal(store_revision(s), BASE + 1 + n);
    assert_int_equal(run.observed, n);
    assert_true(run.in_order);
    assert_int_equal(run.last_seen, BASE + 1 + n);
    assert_int_equal(atomic_load(&run.reader_errors), 0);
    assert_true(atomic_load(&run.lists) > 0);
    /* No increment of the counter was lost. */
    assert_int_equal(store_get(s, "/cw/counter", &it), 0);
    assert_int_equal(strtol(it.value, NULL, 10), CW_THREADS * (CW_WRITES / 4));
    store_item_release(&it);
    (void)pthread_mutex_destroy(&run.mu);
    free(all);
    free(w);
    store_close(s);
}

/* ---- internals ---- */

/* The counter's last value is the last revision of an epoch: then writes are refused. */
static void test_counter_exhausted(void **state)
{
    struct store *s = *state;
    struct store_memory *m = as_memory(s);
    struct store_item it = {0};
    uint64_t rv, last = BASE | COUNTER_MASK;

    put(s, "/k", "1", BASE + 1);
    /* As after 2^40 - 2 writes whose events are all dropped (rev == oldest + n). */
    while (m->n)
        drop_oldest(m);
    m->rev = m->oldest = last - 1;
    set(s, "/k", "2", last);
    assert_int_equal(last >> STORE_MEMORY_EPOCH_SHIFT, EPOCH);
    assert_int_equal(store_update(s, "/k", "3", 1, 0, &rv), -EOVERFLOW);
    assert_int_equal(store_create(s, "/k2", "3", 1, &rv), -EOVERFLOW);
    assert_int_equal(store_delete(s, "/k", 0, NULL, &rv), -EOVERFLOW);
    assert_int_equal(store_revision(s), last);
    assert_int_equal(store_get(s, "/k", &it), 0);
    assert_string_equal(it.value, "2");
    assert_int_equal(it.rv, last);
    store_item_release(&it);
    /* The next epoch's first revision is above it. */
    assert_true(((uint64_t)(EPOCH + 1) << STORE_MEMORY_EPOCH_SHIFT) + 1 > last);
}

/* Sorted, balanced, heights right: returns the height, or -1. */
static int check_tree(const struct node *t, const char *lo, const char *hi, size_t *count)
{
    int l, r;

    if (!t)
        return 0;
    if ((lo && strcmp(t->obj->key, lo) <= 0) || (hi && strcmp(t->obj->key, hi) >= 0))
        return -1;
    l = check_tree(t->left, lo, t->obj->key, count);
    r = check_tree(t->right, t->obj->key, hi, count);
    if (l < 0 || r < 0 || l - r > 1 || r - l > 1 || t->height != 1 + (l > r ? l : r))
        return -1;
    (*count)++;
    return t->height;
}

static void test_tree_stays_balanced(void **state)
{
    struct store *s = open_store(EPOCH, 16, 0, 0);
    struct store_memory *m = as_memory(s);
    bool present[512] = {0};
    size_t live = 0;
    uint32_t x = 88172645u;

    (void)state;
    for (int i = 0; i < 6000; i++) {
        uint32_t k = i < 512 ? (uint32_t)i : rng_next(&x) % 512;
        char key[32];
        uint64_t rv;

        (void)snprintf(key, sizeof(key), "/t/%u", k);
        if (present[k]) {
            assert_int_equal(store_delete(s, key, 0, NULL, &rv), 0);
            live--;
        } else {
            assert_int_equal(store_create(s, key, "v", 1, &rv), 0);
            live++;
        }
        present[k] = !present[k];
        if (i % 97 == 0 || i == 511 || i == 5999) {
            size_t count = 0;
            int h = check_tree(m->root, NULL, NULL, &count);
            assert_true(h >= 0);
            assert_int_equal(count, live);
            /* AVL: at most 1.44 log2(n + 2). */
            assert_true(live < 2 || (double)h <= 1.45 * log2((double)live + 2));
        }
    }
    store_close(s);
}

/* ---- allocation failures ---- */

/* Every kind of call, stopping at the first failure; *ret_writes counts acknowledged writes. */
static int scenario(struct store *s, int *ret_writes)
{
    static const char obj[] = "{\"apiVersion\":\"v1\",\"kind\":\"X\",\"metadata\":{}}";
    struct strbuf sb = STRBUF_INIT;
    uint64_t rv, mid = 0;
    int r = 0;

    *ret_writes = 0;
    for (int i = 0; i < 70 && r == 0; i++) {
        char key[32];
        (void)snprintf(key, sizeof(key), "/f/%02d", i);
        r = store_create(s, key, obj, strlen(obj), &rv);
        *ret_writes += r == 0;
        if (i == 35)
            mid = rv;
    }
    if (r == 0)
        r = store_update(s, "/f/03", "u", 1, 0, &rv);
    *ret_writes += r == 0;
    if (r == 0)
        r = store_delete(s, "/f/04", 0, NULL, &rv);
    *ret_writes += r == 0;
    if (r == 0)
        r = store_list(s, "/f/", NULL, 0, collect, &sb, &rv);
    if (r == 0)
        r = store_list_at(s, "/f/", NULL, mid, 0, collect, &sb, &rv);
    if (r == 0)
        r = store_events(s, mid, collect_event, &sb);
    strbuf_release(&sb);
    return r;
}

static void test_allocation_failures(void **state)
{
    long n;

    (void)state;
    for (n = 1;; n++) {
        struct store *s = open_store(EPOCH, 100, 0, 0);
        struct strbuf sb = STRBUF_INIT;
        int writes, r;
        uint64_t rv;

        alloc_fail_after(n);
        r = scenario(s, &writes);
        if (!alloc_injected()) {
            alloc_fail_after(0);
            assert_int_equal(r, 0);
            assert_int_equal(writes, 72);
            store_close(s);
            break;
        }
        alloc_fail_after(0);
        if (r != -ENOMEM)
            fail_msg("allocation %ld: got %d, want -ENOMEM", n, r);
        /* Nothing half-done: the revision counts exactly the acknowledged writes, and the
         * store lists and replays them all. */
        assert_int_equal(store_revision(s), BASE + (uint64_t)writes);
        assert_int_equal(store_list(s, "/f/", NULL, 0, collect, &sb, &rv), 0);
        assert_int_equal(store_events(s, BASE, collect_event, &sb), 0);
        strbuf_release(&sb);
        store_close(s);
    }
    /* 71 objects, 70 tree nodes, the ring growing (64, 100), list and snapshot arrays, the
     * replay's chunk: about 150. */
    assert_true(n > 140);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_crud_and_epoch_revisions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_at_revision, setup, teardown),
        cmocka_unit_test(test_snapshots_match_a_model),
        cmocka_unit_test_setup_teardown(test_events_and_compaction_by_count, setup, teardown),
        cmocka_unit_test(test_compaction_by_bytes),
        cmocka_unit_test_setup_teardown(test_epochs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_observer_and_listener, setup, teardown),
        cmocka_unit_test_setup_teardown(test_callbacks_run_unlocked, setup, teardown),
        cmocka_unit_test(test_concurrent_writers),
        cmocka_unit_test_setup_teardown(test_counter_exhausted, setup, teardown),
        cmocka_unit_test(test_tree_stays_balanced),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
