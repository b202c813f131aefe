/*
 * Tests for apiserver/store_cache: the watch cache over the SQLite backend. It loads what the
 * backend holds; gets and lists at the current revision are answered without reading the
 * backend (a counting wrapper around the real backend checks it), with the backend's key order,
 * prefix, paging and early-stop semantics; a write is visible in the cache as soon as it is
 * acknowledged, also when made to the backend directly; lists at older revisions come from the
 * backend's history; a list is a snapshot (writes from its callback are not seen); and the
 * observer gets the cache's own shared objects, with the replaced state, in revision order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "apiserver/store.h"
#include "apiserver/store_cache.h"
#include "apiserver/store_sqlite.h"
#include "base/base.h"
#include "base/strbuf.h"

/* The real backend behind a wrapper that counts reads. */
struct counting {
    struct store base;
    struct store *real;
    int gets, lists;
};

static struct counting *as_counting(struct store *s)
{
    return (struct counting *)s;
}

static void c_close(struct store *s)
{
    (void)s; /* the fixture closes the real backend */
}

static uint64_t c_revision(struct store *s)
{
    return store_revision(as_counting(s)->real);
}

static uint64_t c_oldest(struct store *s)
{
    return store_oldest(as_counting(s)->real);
}

static int c_get(struct store *s, const char *key, struct store_item *ret)
{
    as_counting(s)->gets++;
    return store_get(as_counting(s)->real, key, ret);
}

static int c_write(struct store *s, enum store_write_op op, const char *key, const char *value,
                   size_t len, uint64_t expect_rv, struct store_item *ret_old, uint64_t *ret_rv)
{
    struct store *real = as_counting(s)->real;
    return real->ops->write(real, op, key, value, len, expect_rv, ret_old, ret_rv);
}

static int c_list_at(struct store *s, const char *prefix, const char *after, uint64_t at,
                     size_t limit, store_item_fn fn, void *userdata, uint64_t *ret_rv)
{
    as_counting(s)->lists++;
    return store_list_at(as_counting(s)->real, prefix, after, at, limit, fn, userdata, ret_rv);
}

static int c_events(struct store *s, uint64_t since, store_event_fn fn, void *userdata)
{
    return store_events(as_counting(s)->real, since, fn, userdata);
}

static void c_set_observer(struct store *s, store_event_fn fn, void *userdata)
{
    store_set_observer(as_counting(s)->real, fn, userdata);
}

static const struct store_ops counting_ops = {c_close, c_revision, c_oldest, c_get,
                                              c_write, c_list_at,  c_events, c_set_observer};

struct fixture {
    char dir[64];
    char path[128];
    struct store *db;
    struct counting backend;
    struct store *cache;
};

static void put(struct store *s, const char *key, const char *value)
{
    uint64_t rv;
    assert_int_equal(store_create(s, key, value, strlen(value), &rv), 0);
}

static int setup(void **state)
{
    struct fixture *f = xcalloc(1, sizeof(*f));

    (void)snprintf(f->dir, sizeof(f->dir), "/tmp/koord-cache-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    (void)snprintf(f->path, sizeof(f->path), "%s/store.db", f->dir);
    if (store_sqlite_open(f->path, 8, &f->db) < 0)
        return -1;
    f->backend = (struct counting){.base = {&counting_ops}, .real = f->db};
    /* Objects from before the cache existed. */
    put(f->db, "/core/pods/ns2/b", "b1");
    put(f->db, "/core/pods/ns1/a", "a1");
    if (store_cache_new(&f->backend.base, &f->cache) < 0)
        return -1;
    f->backend.lists = 0; /* the load */
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    char p[160];

    store_close(f->cache);
    store_close(f->db);
    for (const char *const *s = (const char *const[]){"", "-wal", "-shm", NULL}; *s; s++) {
        (void)snprintf(p, sizeof(p), "%s%s", f->path, *s);
        (void)unlink(p);
    }
    (void)rmdir(f->dir);
    free(f);
    return 0;
}

static int collect(const struct store_item *it, void *ud)
{
    strbuf_addf(ud, "%s=%.*s@%llu ", it->key, (int)it->len, it->value, (unsigned long long)it->rv);
    return 0;
}

static int collect_one(const struct store_item *it, void *ud)
{
    (void)collect(it, ud);
    return 1;
}

static void test_reads_stay_in_memory(void **state)
{
    struct fixture *f = *state;
    struct strbuf sb = STRBUF_INIT;
    struct store_item it = {0};
    uint64_t rv = 0;

    assert_int_equal(store_revision(f->cache), 2);
    assert_int_equal(store_get(f->cache, "/core/pods/ns1/a", &it), 0);
    assert_string_equal(it.value, "a1");
    assert_int_equal(it.rv, 2);
    store_item_release(&it);
    assert_int_equal(store_get(f->cache, "/core/pods/ns1/zz", &it), -ENOENT);
    assert_int_equal(store_get(f->cache, "bad key", &it), -EINVAL);

    put(f->cache, "/core/pods/ns10/x", "x1"); /* 3 */
    put(f->cache, "/core/podsx/ns1/a", "p1"); /* 4 */
    put(f->cache, "/core/nodes//n1", "n1");   /* 5 */
    put(f->db, "/core/pods/ns1/c", "c1");     /* 6: straight to the backend */
    assert_int_equal(store_list(f->cache, "/core/pods/", NULL, 0, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/core/pods/ns1/a=a1@2 /core/pods/ns1/c=c1@6 "
                                "/core/pods/ns10/x=x1@3 /core/pods/ns2/b=b1@1 ");
    assert_int_equal(rv, 6);
    strbuf_reset(&sb);
    assert_int_equal(store_list(f->cache, "/core/pods/ns1/", NULL, 0, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/core/pods/ns1/a=a1@2 /core/pods/ns1/c=c1@6 ");
    /* Paging: a limit, then on after the last key; `after` before the prefix is ignored. */
    strbuf_reset(&sb);
    assert_int_equal(store_list(f->cache, "/core/pods/", NULL, 2, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/core/pods/ns1/a=a1@2 /core/pods/ns1/c=c1@6 ");
    strbuf_reset(&sb);
    assert_int_equal(store_list(f->cache, "/core/pods/", "/core/pods/ns1/c", 2, collect, &sb, &rv),
                     0);
    assert_string_equal(sb.buf, "/core/pods/ns10/x=x1@3 /core/pods/ns2/b=b1@1 ");
    strbuf_reset(&sb);
    assert_int_equal(store_list(f->cache, "/core/pods/", "/a", 1, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/core/pods/ns1/a=a1@2 ");
    /* The current revision asked for by number is still the cache's. */
    strbuf_reset(&sb);
    assert_int_equal(store_list_at(f->cache, "/core/", NULL, 6, 0, collect_one, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/core/nodes//n1=n1@5 ");
    assert_int_equal(store_list(f->cache, "", NULL, 0, collect, &sb, &rv), -EINVAL);

    assert_int_equal(f->backend.gets, 0);
    assert_int_equal(f->backend.lists, 0);
    strbuf_release(&sb);
}

static int log_event(const struct store_event *ev, void *ud)
{
    strbuf_addf(ud, "%llu:%s:%.*s ", (unsigned long long)ev->rv, ev->key, (int)ev->len, ev->value);
    return 0;
}

static void test_writes_follow_and_older_revisions_go_to_the_backend(void **state)
{
    struct fixture *f = *state;
    struct strbuf sb = STRBUF_INIT;
    struct store_item it = {0};
    uint64_t rv = 0;

    assert_int_equal(store_update(f->cache, "/core/pods/ns1/a", "a2", 2, 1, &rv), -ESTALE);
    assert_int_equal(store_update(f->cache, "/core/pods/ns1/a", "a2", 2, 2, &rv), 0);
    assert_int_equal(rv, 3);
    assert_int_equal(store_get(f->cache, "/core/pods/ns1/a", &it), 0);
    assert_string_equal(it.value, "a2");
    assert_int_equal(it.rv, 3);
    store_item_release(&it);
    assert_int_equal(store_delete(f->cache, "/core/pods/ns2/b", 0, &it, &rv), 0);
    assert_string_equal(it.value, "b1");
    store_item_release(&it);
    assert_int_equal(store_get(f->cache, "/core/pods/ns2/b", &it), -ENOENT);
    assert_int_equal(store_create(f->cache, "/core/pods/ns1/a", "x", 1, &rv), -EEXIST);
    assert_int_equal(f->backend.lists, 0);

    /* Revision 2: both objects as first written. */
    assert_int_equal(store_list_at(f->cache, "/core/pods/", NULL, 2, 0, collect, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/core/pods/ns1/a=a1@2 /core/pods/ns2/b=b1@1 ");
    assert_int_equal(rv, 2);
    assert_int_equal(f->backend.lists, 1);
    assert_int_equal(store_list_at(f->cache, "/core/pods/", NULL, 9, 0, collect, &sb, &rv),
                     -EOVERFLOW);
    /* The history is the backend's. */
    strbuf_reset(&sb);
    assert_int_equal(store_events(f->cache, 2, log_event, &sb), 0);
    assert_string_equal(sb.buf, "3:/core/pods/ns1/a:a2 4:/core/pods/ns2/b:b1 ");
    strbuf_release(&sb);
}

/* Writes from inside a list's callback: the list goes on with the state it started from. */
static int write_during_list(const struct store_item *it, void *ud)
{
    struct fixture *f = ud;
    uint64_t rv;

    if (!strcmp(it->key, "/core/pods/ns1/a")) {
        CHECK(store_delete(f->cache, "/core/pods/ns2/b", 0, NULL, &rv) == 0);
        CHECK(store_create(f->cache, "/core/pods/ns1/b", "new", 3, &rv) == 0);
    } else {
        CHECK(!strcmp(it->key, "/core/pods/ns2/b") && !strcmp(it->value, "b1"));
    }
    return 0;
}

static void test_list_is_a_snapshot(void **state)
{
    struct fixture *f = *state;
    uint64_t rv = 0;

    assert_int_equal(store_list(f->cache, "/core/pods/", NULL, 0, write_during_list, f, &rv), 0);
    assert_int_equal(rv, 2);
    assert_int_equal(store_revision(f->cache), 4);
}

struct seen {
    struct store *cache;
    struct strbuf log;
    uint64_t last;
    const struct store_obj *c_obj; /* the last state of ns3/c the observer was given */
};

static int observe(const struct store_event *ev, void *ud)
{
    static const char *const names[] = {"?", "ADDED", "MODIFIED", "DELETED"};
    struct seen *s = ud;

    CHECK(ev->rv == s->last + 1);
    s->last = ev->rv;
    CHECK(ev->obj);
    if (!strcmp(ev->key, "/core/pods/ns3/c"))
        s->c_obj = ev->obj;
    strbuf_addf(&s->log, "%llu:%s:%s:%s@%llu", (unsigned long long)ev->rv, names[ev->type], ev->key,
                ev->obj->value, (unsigned long long)ev->obj->rv);
    if (ev->prev_obj)
        strbuf_addf(&s->log, "<%s@%llu", ev->prev_obj->value, (unsigned long long)ev->prev_obj->rv);
    strbuf_addch(&s->log, ' ');
    return 0;
}

static void test_observer_gets_shared_objects(void **state)
{
    struct fixture *f = *state;
    struct seen s = {.cache = f->cache, .log = STRBUF_INIT, .last = 2};
    struct store_item it = {0};
    uint64_t rv;

    store_set_observer(f->cache, observe, &s);
    put(f->cache, "/core/pods/ns3/c", "c1");
    assert_int_equal(store_update(f->cache, "/core/pods/ns3/c", "c2", 2, 0, &rv), 0);
    assert_int_equal(store_delete(f->db, "/core/pods/ns1/a", 0, NULL, &rv), 0);
    assert_string_equal(s.log.buf, "3:ADDED:/core/pods/ns3/c:c1@3 "
                                   "4:MODIFIED:/core/pods/ns3/c:c2@4<c1@3 "
                                   "5:DELETED:/core/pods/ns1/a:a1@2 ");
    assert_int_equal(store_get(f->cache, "/core/pods/ns3/c", &it), 0);
    assert_int_equal(it.obj->rv, 4);
    assert_ptr_equal(it.obj, s.c_obj); /* one copy, shared */
    store_item_release(&it);
    store_set_observer(f->cache, NULL, NULL);
    put(f->cache, "/core/pods/ns3/d", "d1");
    assert_int_equal(s.last, 5);
    strbuf_release(&s.log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reads_stay_in_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_writes_follow_and_older_revisions_go_to_the_backend,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_is_a_snapshot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_observer_gets_shared_objects, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
