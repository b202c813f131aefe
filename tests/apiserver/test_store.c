/*
 * Tests for apiserver/store: the SQLite object store. Revisions strictly increase across every
 * kind of write and across reopening; conditional writes fail on a stale revision; lists are
 * prefix-exact, ordered and pageable; the event history replays writes in order and answers
 * -ERANGE once compacted; and every write acknowledged before a kill -9 is there afterwards.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "apiserver/store.h"
#include "base/base.h"
#include "base/strbuf.h"

struct fixture {
    char dir[64];
    char path[128];
    struct store *s;
};

static int setup(void **state)
{
    struct fixture *f = xcalloc(1, sizeof(*f));

    (void)snprintf(f->dir, sizeof(f->dir), "/tmp/koord-store-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    (void)snprintf(f->path, sizeof(f->path), "%s/store.db", f->dir);
    if (store_open(f->path, 8, &f->s) < 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    struct strbuf p = STRBUF_INIT;

    store_close(f->s);
    for (const char *sfx = ""; sfx; sfx = !*sfx ? "-wal" : !strcmp(sfx, "-wal") ? "-shm" : NULL) {
        strbuf_reset(&p);
        strbuf_addf(&p, "%s%s", f->path, sfx);
        (void)unlink(p.buf);
    }
    (void)rmdir(f->dir);
    strbuf_release(&p);
    free(f);
    return 0;
}

static void put(struct store *s, const char *key, const char *value, uint64_t want_rv)
{
    uint64_t rv = 0;
    assert_int_equal(store_create(s, key, value, strlen(value), &rv), 0);
    assert_int_equal(rv, want_rv);
}

static void test_crud_and_revisions(void **state)
{
    struct fixture *f = *state;
    struct store_item it = {0};
    uint64_t rv = 0;

    assert_int_equal(store_revision(f->s), 0);
    put(f->s, "/core/pods/default/a", "{\"a\":1}", 1);
    put(f->s, "/core/pods/default/b", "{\"b\":1}", 2);
    assert_int_equal(store_create(f->s, "/core/pods/default/a", "x", 1, &rv), -EEXIST);
    assert_int_equal(store_revision(f->s), 2); /* a failed write takes no revision */

    assert_int_equal(store_get(f->s, "/core/pods/default/a", &it), 0);
    assert_string_equal(it.key, "/core/pods/default/a");
    assert_string_equal(it.value, "{\"a\":1}");
    assert_int_equal(it.len, 7);
    assert_int_equal(it.rv, 1);
    store_item_release(&it);

    /* Optimistic concurrency: the right revision wins, a stale one is refused. */
    assert_int_equal(store_update(f->s, "/core/pods/default/a", "{\"a\":2}", 7, 1, &rv), 0);
    assert_int_equal(rv, 3);
    assert_int_equal(store_update(f->s, "/core/pods/default/a", "{\"a\":3}", 7, 1, &rv), -ESTALE);
    assert_int_equal(store_update(f->s, "/core/pods/default/a", "{\"a\":3}", 7, 0, &rv), 0);
    assert_int_equal(rv, 4);
    assert_int_equal(store_update(f->s, "/core/pods/default/zz", "{}", 2, 0, &rv), -ENOENT);

    assert_int_equal(store_delete(f->s, "/core/pods/default/b", 1, NULL, &rv), -ESTALE);
    assert_int_equal(store_delete(f->s, "/core/pods/default/b", 2, &it, &rv), 0);
    assert_int_equal(rv, 5);
    assert_string_equal(it.value, "{\"b\":1}");
    assert_int_equal(it.rv, 2);
    store_item_release(&it);
    assert_int_equal(store_get(f->s, "/core/pods/default/b", &it), -ENOENT);
    assert_int_equal(store_delete(f->s, "/core/pods/default/b", 0, NULL, &rv), -ENOENT);
    assert_int_equal(store_revision(f->s), 5);
}

static void test_bad_input(void **state)
{
    struct fixture *f = *state;
    struct store_item it = {0};
    char *big = xcalloc(STORE_MAX_VALUE + 2, 1);
    uint64_t rv;

    assert_int_equal(store_create(f->s, "", "x", 1, &rv), -EINVAL);
    assert_int_equal(store_create(f->s, "/a b", "x", 1, &rv), -EINVAL);
    assert_int_equal(store_create(f->s, "/a\n", "x", 1, &rv), -EINVAL);
    assert_int_equal(store_get(f->s, NULL, &it), -EINVAL);
    memset(big, 'x', STORE_MAX_VALUE + 1);
    assert_int_equal(store_create(f->s, "/k", big, STORE_MAX_VALUE + 1, &rv), -E2BIG);
    assert_int_equal(store_revision(f->s), 0);
    /* Binary values with NULs are stored exactly. */
    assert_int_equal(store_create(f->s, "/k", "a\0b", 3, &rv), 0);
    assert_int_equal(store_get(f->s, "/k", &it), 0);
    assert_int_equal(it.len, 3);
    assert_memory_equal(it.value, "a\0b", 3);
    store_item_release(&it);
    free(big);
}

struct collect {
    struct strbuf keys;
    int stop_after;
    int seen;
};

static int collect_item(const struct store_item *it, void *ud)
{
    struct collect *c = ud;
    strbuf_addf(&c->keys, "%s@%llu ", it->key, (unsigned long long)it->rv);
    return ++c->seen == c->stop_after ? 1 : 0;
}

static void test_list(void **state)
{
    struct fixture *f = *state;
    struct collect c = {.keys = STRBUF_INIT};
    uint64_t rv = 0;

    put(f->s, "/core/pods/ns2/b", "{}", 1);
    put(f->s, "/core/pods/ns1/a", "{}", 2);
    put(f->s, "/core/pods/ns1/c", "{}", 3);
    put(f->s, "/core/pods/ns10/x", "{}", 4); /* shares "ns1" as a string prefix, not as a path */
    put(f->s, "/core/podsx/ns1/a", "{}", 5);
    put(f->s, "/core/nodes//n1", "{}", 6);

    assert_int_equal(store_list(f->s, "/core/pods/", NULL, 0, collect_item, &c, &rv), 0);
    assert_string_equal(c.keys.buf, "/core/pods/ns1/a@2 /core/pods/ns1/c@3 /core/pods/ns10/x@4 "
                                    "/core/pods/ns2/b@1 ");
    assert_int_equal(rv, 6);

    strbuf_reset(&c.keys);
    assert_int_equal(store_list(f->s, "/core/pods/ns1/", NULL, 0, collect_item, &c, &rv), 0);
    assert_string_equal(c.keys.buf, "/core/pods/ns1/a@2 /core/pods/ns1/c@3 ");

    /* Paging: limit, then continue after the last key. */
    strbuf_reset(&c.keys);
    assert_int_equal(store_list(f->s, "/core/pods/", NULL, 2, collect_item, &c, &rv), 0);
    assert_string_equal(c.keys.buf, "/core/pods/ns1/a@2 /core/pods/ns1/c@3 ");
    strbuf_reset(&c.keys);
    assert_int_equal(store_list(f->s, "/core/pods/", "/core/pods/ns1/c", 2, collect_item, &c, &rv),
                     0);
    assert_string_equal(c.keys.buf, "/core/pods/ns10/x@4 /core/pods/ns2/b@1 ");

    /* A callback may stop early. */
    strbuf_reset(&c.keys);
    c.seen = 0;
    c.stop_after = 1;
    assert_int_equal(store_list(f->s, "/core/", NULL, 0, collect_item, &c, &rv), 0);
    assert_string_equal(c.keys.buf, "/core/nodes//n1@6 ");
    assert_int_equal(store_list(f->s, "", NULL, 0, collect_item, &c, &rv), -EINVAL);
    strbuf_release(&c.keys);
}

static int collect_event(const struct store_event *ev, void *ud)
{
    static const char *const names[] = {"?", "ADDED", "MODIFIED", "DELETED"};
    struct strbuf *sb = ud;
    strbuf_addf(sb, "%llu:%s:%s:%.*s ", (unsigned long long)ev->rv, names[ev->type], ev->key,
                (int)ev->len, ev->value);
    return 0;
}

static void test_events_and_compaction(void **state)
{
    struct fixture *f = *state;
    struct strbuf sb = STRBUF_INIT;
    uint64_t rv;

    put(f->s, "/k/a", "1", 1);
    assert_int_equal(store_update(f->s, "/k/a", "2", 1, 0, &rv), 0);
    assert_int_equal(store_delete(f->s, "/k/a", 0, NULL, &rv), 0);
    assert_int_equal(store_events(f->s, 0, collect_event, &sb), 0);
    assert_string_equal(sb.buf, "1:ADDED:/k/a:1 2:MODIFIED:/k/a:2 3:DELETED:/k/a:2 ");
    strbuf_reset(&sb);
    assert_int_equal(store_events(f->s, 2, collect_event, &sb), 0);
    assert_string_equal(sb.buf, "3:DELETED:/k/a:2 ");

    /* The fixture keeps 8 events: after 12 writes, rv 4 is the oldest start point. */
    for (int i = 0; i < 9; i++) {
        char key[16];
        (void)snprintf(key, sizeof(key), "/k/%d", i);
        put(f->s, key, "v", (uint64_t)(4 + i));
    }
    assert_int_equal(store_revision(f->s), 12);
    assert_int_equal(store_oldest(f->s), 4);
    strbuf_reset(&sb);
    assert_int_equal(store_events(f->s, 3, collect_event, &sb), -ERANGE);
    assert_int_equal(store_events(f->s, 4, collect_event, &sb), 0);
    assert_string_equal(sb.buf, "5:ADDED:/k/1:v 6:ADDED:/k/2:v 7:ADDED:/k/3:v 8:ADDED:/k/4:v "
                                "9:ADDED:/k/5:v 10:ADDED:/k/6:v 11:ADDED:/k/7:v 12:ADDED:/k/8:v ");
    strbuf_reset(&sb);
    assert_int_equal(store_events(f->s, 12, collect_event, &sb), 0);
    assert_string_equal(sb.buf, "");
    strbuf_release(&sb);
}

static void test_reopen_keeps_revisions(void **state)
{
    struct fixture *f = *state;
    struct store_item it = {0};
    uint64_t rv;

    put(f->s, "/k/a", "1", 1);
    put(f->s, "/k/b", "2", 2);
    store_close(f->s);
    f->s = NULL;
    assert_int_equal(store_open(f->path, 8, &f->s), 0);
    assert_int_equal(store_revision(f->s), 2);
    assert_int_equal(store_get(f->s, "/k/b", &it), 0);
    assert_string_equal(it.value, "2");
    assert_int_equal(it.rv, 2);
    store_item_release(&it);
    assert_int_equal(store_update(f->s, "/k/a", "3", 1, 1, &rv), 0);
    assert_int_equal(rv, 3);
}

static void test_not_a_store(void **state)
{
    struct fixture *f = *state;
    char path[160];
    FILE *fp;
    struct store *s = NULL;

    (void)snprintf(path, sizeof(path), "%s/garbage.db", f->dir);
    fp = fopen(path, "w");
    assert_non_null(fp);
    (void)fputs("this is not an SQLite database, just text of enough length to fail", fp);
    (void)fclose(fp);
    assert_true(store_open(path, 0, &s) < 0);
    assert_null(s);
    (void)unlink(path);
    assert_true(store_open("/nonexistent-dir/x.db", 0, &s) < 0);
}

/*
 * Durability: a child writes objects and reports each acknowledged write on a pipe; the parent
 * kills it with SIGKILL mid-burst, reopens the store and finds every acknowledged object.
 */
static void test_kill9_keeps_acknowledged_writes(void **state)
{
    struct fixture *f = *state;
    int fds[2];
    pid_t pid;
    long acked = 0;
    char buf[64];
    ssize_t n;
    size_t got = 0;

    store_close(f->s);
    f->s = NULL;
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct store *s;
        (void)close(fds[0]);
        if (store_open(f->path, 0, &s) < 0)
            _exit(2);
        for (long i = 0;; i++) {
            char key[32];
            uint64_t rv;
            (void)snprintf(key, sizeof(key), "/burst/%08ld", i);
            if (store_create(s, key, "{\"v\":1}", 7, &rv) < 0)
                _exit(3);
            if (write(fds[1], "+", 1) != 1)
                _exit(4);
        }
    }
    (void)close(fds[1]);
    while (acked < 200 && (n = read(fds[0], buf, sizeof(buf))) > 0)
        acked += n;
    assert_int_equal(kill(pid, SIGKILL), 0);
    while ((n = read(fds[0], buf, sizeof(buf))) > 0)
        acked += n;
    (void)close(fds[0]);
    (void)waitpid(pid, NULL, 0);
    assert_true(acked >= 200);

    assert_int_equal(store_open(f->path, 8, &f->s), 0);
    for (long i = 0; i < acked; i++) {
        struct store_item it = {0};
        char key[32];
        (void)snprintf(key, sizeof(key), "/burst/%08ld", i);
        if (store_get(f->s, key, &it) != 0)
            fail_msg("acknowledged write %ld of %ld lost after kill -9", i, acked);
        store_item_release(&it);
        got++;
    }
    assert_true(store_revision(f->s) >= (uint64_t)acked);
    assert_int_equal(got, (size_t)acked);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_crud_and_revisions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_events_and_compaction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reopen_keeps_revisions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_a_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kill9_keeps_acknowledged_writes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
