/*
 * Tests for apiserver/store: the SQLite object store. Revisions strictly increase across every
 * kind of write and across reopening; conditional writes fail on a stale revision; lists are
 * prefix-exact, ordered and pageable; the event history replays writes in order (with the
 * values they replaced) and answers -ERANGE once compacted; a list at an older revision shows
 * exactly that revision's objects; callbacks run unlocked (they may write) and see neither
 * those writes nor any later one; a format-1 store is upgraded in place; and every write
 * acknowledged before a kill -9 is there afterwards.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sqlite3.h>
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
#include "apiserver/store_sqlite.h"
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
    if (store_sqlite_open(f->path, 8, &f->s) < 0)
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

static int collect_value(const struct store_item *it, void *ud)
{
    struct strbuf *sb = ud;
    strbuf_addf(sb, "%s@%llu=%s ", it->key, (unsigned long long)it->rv, it->value);
    return 0;
}

static int collect_prev(const struct store_event *ev, void *ud)
{
    struct strbuf *sb = ud;
    strbuf_addf(sb, "%llu:%s:prev=%s@%llu ", (unsigned long long)ev->rv, ev->value,
                ev->prev ? ev->prev : "-", (unsigned long long)ev->prev_rv);
    return 0;
}

/* The state at an older revision: changed objects as they were, deleted ones back, created
 * ones absent; bounded by the history on one side and the current revision on the other. */
static void test_list_at_revision(void **state)
{
    struct fixture *f = *state;
    struct strbuf sb = STRBUF_INIT;
    uint64_t rv = 0;

    put(f->s, "/k/a", "a1", 1);
    put(f->s, "/k/b", "b1", 2);
    put(f->s, "/k/c", "c1", 3);
    assert_int_equal(store_update(f->s, "/k/b", "b2", 2, 0, &rv), 0); /* 4 */
    assert_int_equal(store_delete(f->s, "/k/a", 0, NULL, &rv), 0);    /* 5 */
    put(f->s, "/k/aa", "aa1", 6);
    assert_int_equal(store_update(f->s, "/k/b", "b3", 2, 0, &rv), 0);   /* 7 */
    assert_int_equal(store_update(f->s, "/k/aa", "aa2", 3, 0, &rv), 0); /* 8 */

    assert_int_equal(store_list_at(f->s, "/k/", NULL, 3, 0, collect_value, &sb, &rv), 0);
    assert_int_equal(rv, 3);
    assert_string_equal(sb.buf, "/k/a@1=a1 /k/b@2=b1 /k/c@3=c1 ");
    strbuf_reset(&sb);
    assert_int_equal(store_list_at(f->s, "/k/", NULL, 6, 0, collect_value, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/k/aa@6=aa1 /k/b@4=b2 /k/c@3=c1 ");
    strbuf_reset(&sb);
    /* Paging within the snapshot: after a key, with a limit. */
    assert_int_equal(store_list_at(f->s, "/k/", "/k/a", 3, 1, collect_value, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/k/b@2=b1 ");
    strbuf_reset(&sb);
    assert_int_equal(store_list_at(f->s, "/k/", NULL, 0, 0, collect_value, &sb, &rv), 0);
    assert_int_equal(rv, 8);
    assert_string_equal(sb.buf, "/k/aa@8=aa2 /k/b@7=b3 /k/c@3=c1 ");

    /* The history holds the replaced values. */
    strbuf_reset(&sb);
    assert_int_equal(store_events(f->s, 3, collect_prev, &sb), 0);
    assert_string_equal(sb.buf, "4:b2:prev=b1@2 5:a1:prev=-@1 6:aa1:prev=-@0 7:b3:prev=b2@4 "
                                "8:aa2:prev=aa1@6 ");

    assert_int_equal(store_list_at(f->s, "/k/", NULL, 9, 0, collect_value, &sb, &rv), -EOVERFLOW);
    /* The fixture keeps 8 events: 9 more writes leave 9 as the oldest listable revision. */
    for (int i = 0; i < 9; i++)
        assert_int_equal(store_update(f->s, "/k/c", "c2", 2, 0, &rv), 0);
    assert_int_equal(store_list_at(f->s, "/k/", NULL, 8, 0, collect_value, &sb, &rv), -ERANGE);
    strbuf_reset(&sb);
    assert_int_equal(store_list_at(f->s, "/k/", NULL, 9, 0, collect_value, &sb, &rv), 0);
    assert_string_equal(sb.buf, "/k/aa@8=aa2 /k/b@7=b3 /k/c@9=c2 ");
    strbuf_release(&sb);
}

/* A list callback that writes (it would deadlock if callbacks ran locked). */
struct writing_list {
    struct store *s;
    struct strbuf seen;
    int n;
};

static int write_during_list(const struct store_item *it, void *ud)
{
    struct writing_list *w = ud;
    uint64_t rv;

    if (w->n++ == 10) {
        CHECK(store_update(w->s, "/big/0290", "changed", 7, 0, &rv) == 0);
        CHECK(store_create(w->s, "/big/0291x", "new", 3, &rv) == 0);
        CHECK(store_delete(w->s, "/big/0295", 0, NULL, &rv) == 0);
    }
    if (it->key[5] == '0' && it->key[6] == '2' && it->key[7] == '9')
        strbuf_addf(&w->seen, "%s=%s ", it->key + 5, it->value);
    return 0;
}

static void test_list_is_a_snapshot_across_chunks(void **state)
{
    struct fixture *f = *state;
    struct writing_list w = {.s = f->s, .seen = STRBUF_INIT};
    uint64_t rv = 0;

    /* More objects than one locked chunk holds, so the list reads several chunks. */
    for (int i = 0; i < 300; i++) {
        char key[32];
        (void)snprintf(key, sizeof(key), "/big/%04d", i);
        put(f->s, key, "v", (uint64_t)i + 1);
    }
    assert_int_equal(store_list(f->s, "/big/", NULL, 0, write_during_list, &w, &rv), 0);
    assert_int_equal(rv, 300);
    assert_int_equal(w.n, 300);
    assert_string_equal(w.seen.buf, "0290=v 0291=v 0292=v 0293=v 0294=v 0295=v 0296=v 0297=v "
                                    "0298=v 0299=v ");
    assert_int_equal(store_revision(f->s), 303);
    strbuf_release(&w.seen);
}

/* A replay callback that writes: the replay stops at the revision current when it started. */
static int write_during_replay(const struct store_event *ev, void *ud)
{
    struct writing_list *w = ud;
    uint64_t rv;

    strbuf_addf(&w->seen, "%llu ", (unsigned long long)ev->rv);
    if (w->n++ == 0)
        CHECK(store_create(w->s, "/r/late", "x", 1, &rv) == 0);
    return 0;
}

static void test_replay_ends_at_its_start(void **state)
{
    struct fixture *f = *state;
    struct writing_list w = {.s = f->s, .seen = STRBUF_INIT};

    put(f->s, "/r/a", "1", 1);
    put(f->s, "/r/b", "1", 2);
    put(f->s, "/r/c", "1", 3);
    assert_int_equal(store_events(f->s, 1, write_during_replay, &w), 0);
    assert_string_equal(w.seen.buf, "2 3 ");
    assert_int_equal(store_revision(f->s), 4);
    strbuf_release(&w.seen);
}

/* A store written by format 1 (no previous values in the history) opens with its objects and
 * revision, and with the history dropped: replays from before answer -ERANGE. */
static void test_upgrade_from_format_1(void **state)
{
    struct fixture *f = *state;
    struct store_item it = {0};
    struct strbuf sb = STRBUF_INIT;
    char path[160];
    sqlite3 *db = NULL;
    struct store *s = NULL;
    uint64_t rv;

    (void)snprintf(path, sizeof(path), "%s/v1.db", f->dir);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db,
                     "CREATE TABLE meta(k TEXT PRIMARY KEY, v INTEGER NOT NULL);"
                     "CREATE TABLE objects(key TEXT PRIMARY KEY, rv INTEGER NOT NULL,"
                     " value BLOB NOT NULL) WITHOUT ROWID;"
                     "CREATE TABLE events(rv INTEGER PRIMARY KEY, type INTEGER NOT NULL,"
                     " key TEXT NOT NULL, value BLOB NOT NULL);"
                     "INSERT INTO meta VALUES ('format', 1), ('revision', 7), ('oldest', 0);"
                     "INSERT INTO objects VALUES ('/k/a', 7, 'a7');"
                     "INSERT INTO events VALUES (7, 2, '/k/a', 'a7');",
                     NULL, NULL, NULL),
        SQLITE_OK);
    (void)sqlite3_close(db);
    assert_int_equal(store_sqlite_open(path, 8, &s), 0);
    assert_int_equal(store_revision(s), 7);
    assert_int_equal(store_oldest(s), 7);
    assert_int_equal(store_get(s, "/k/a", &it), 0);
    assert_string_equal(it.value, "a7");
    store_item_release(&it);
    assert_int_equal(store_events(s, 6, collect_prev, &sb), -ERANGE);
    assert_int_equal(store_update(s, "/k/a", "a8", 2, 7, &rv), 0);
    assert_int_equal(store_events(s, 7, collect_prev, &sb), 0);
    assert_string_equal(sb.buf, "8:a8:prev=a7@7 ");
    store_close(s);
    /* Reopening an upgraded store changes nothing. */
    assert_int_equal(store_sqlite_open(path, 8, &s), 0);
    assert_int_equal(store_oldest(s), 7);
    store_close(s);
    for (const char *const *x = (const char *const[]){"", "-wal", "-shm", NULL}; *x; x++) {
        char p[176];
        (void)snprintf(p, sizeof(p), "%s%s", path, *x);
        (void)unlink(p);
    }
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
    assert_int_equal(store_sqlite_open(f->path, 8, &f->s), 0);
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
    assert_true(store_sqlite_open(path, 0, &s) < 0);
    assert_null(s);
    (void)unlink(path);
    assert_true(store_sqlite_open("/nonexistent-dir/x.db", 0, &s) < 0);
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
        if (store_sqlite_open(f->path, 0, &s) < 0)
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

    assert_int_equal(store_sqlite_open(f->path, 8, &f->s), 0);
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

/*
 * Group commit: writers racing on their own keys and on one shared counter (read, then a
 * conditional update, retried on -ESTALE) all get distinct, consecutive revisions, the observer
 * hears every write once in revision order, and no increment of the counter is lost.
 */
#define GC_THREADS 6
#define GC_WRITES  60

struct gc_run {
    struct store *s;
    pthread_mutex_t mu;
    uint64_t last_seen, observed;
    bool in_order;
};

static int gc_observe(const struct store_event *ev, void *ud)
{
    struct gc_run *run = ud;

    /* Runs under the store's lock; the mutex only keeps the test's counters tidy. */
    CHECK(pthread_mutex_lock(&run->mu) == 0);
    if (ev->rv != run->last_seen + 1)
        run->in_order = false;
    run->last_seen = ev->rv;
    run->observed++;
    CHECK(pthread_mutex_unlock(&run->mu) == 0);
    return 0;
}

struct gc_worker {
    struct gc_run *run;
    int id;
    int increments;
};

static void *gc_write(void *ud)
{
    struct gc_worker *w = ud;
    char key[32], val[32];
    uint64_t rv;

    (void)snprintf(key, sizeof(key), "/gc/own/%d", w->id);
    CHECK(store_create(w->run->s, key, "0", 1, &rv) == 0);
    for (int i = 0; i < GC_WRITES; i++) {
        struct store_item it = {0};
        int n, r;

        (void)snprintf(val, sizeof(val), "%d", i + 1);
        CHECK(store_update(w->run->s, key, val, strlen(val), rv, &rv) == 0);
        do {
            CHECK(store_get(w->run->s, "/gc/counter", &it) == 0);
            n = (int)strtol(it.value, NULL, 10);
            (void)snprintf(val, sizeof(val), "%d", n + 1);
            r = store_update(w->run->s, "/gc/counter", val, strlen(val), it.rv, NULL);
            store_item_release(&it);
            CHECK(r == 0 || r == -ESTALE);
        } while (r == -ESTALE);
        w->increments++;
    }
    return NULL;
}

struct ev_count {
    size_t n;
    uint64_t first, last;
    bool in_order;
};

static int count_events(const struct store_event *e, void *ud)
{
    struct ev_count *c = ud;

    if (!c->n) {
        c->first = e->rv;
        c->in_order = true;
    } else if (e->rv != c->last + 1) {
        c->in_order = false;
    }
    c->last = e->rv;
    c->n++;
    return 0;
}

static void test_group_commit_concurrent_writers(void **state)
{
    struct ev_count ev = {0};
    uint64_t rev;
    struct fixture *f = *state;
    struct gc_run run = {.s = f->s, .in_order = true};
    struct gc_worker w[GC_THREADS];
    pthread_t th[GC_THREADS];
    struct store_item it = {0};
    int total = 0;

    CHECK(pthread_mutex_init(&run.mu, NULL) == 0);
    put(f->s, "/gc/counter", "0", 1);
    run.last_seen = 1;
    store_set_observer(f->s, gc_observe, &run);
    for (int i = 0; i < GC_THREADS; i++) {
        w[i] = (struct gc_worker){&run, i, 0};
        assert_int_equal(pthread_create(&th[i], NULL, gc_write, &w[i]), 0);
    }
    for (int i = 0; i < GC_THREADS; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        total += w[i].increments;
    }
    store_set_observer(f->s, NULL, NULL);
    assert_int_equal(total, GC_THREADS * GC_WRITES);
    assert_int_equal(store_get(f->s, "/gc/counter", &it), 0);
    assert_int_equal(strtol(it.value, NULL, 10), total);
    store_item_release(&it);
    /* One create per thread, one update of its own key and one of the counter per write. */
    assert_int_equal(run.observed, GC_THREADS * (1 + 2 * GC_WRITES));
    assert_true(run.in_order);
    assert_int_equal(store_revision(f->s), 1 + run.observed);
    /* The history is pruned once per batch, to the same bound as write by write: the last 8
     * writes (the fixture's history), in order, and nothing older. */
    rev = store_revision(f->s);
    assert_int_equal(store_oldest(f->s), rev - 8);
    assert_int_equal(store_events(f->s, rev - 9, count_events, &ev), -ERANGE);
    ev = (struct ev_count){0};
    assert_int_equal(store_events(f->s, rev - 8, count_events, &ev), 0);
    assert_int_equal(ev.n, 8);
    assert_int_equal(ev.first, rev - 7);
    assert_int_equal(ev.last, rev);
    assert_true(ev.in_order);
    (void)pthread_mutex_destroy(&run.mu);
}

/* Several writers in the child, so writes are acknowledged in shared commits: none of those
 * acknowledged before kill -9 may be missing afterwards. */
struct burst {
    struct store *s;
    int fd;
    int id;
};

static void *burst_write(void *ud)
{
    struct burst *b = ud;
    char tag = (char)('a' + b->id);

    for (long i = 0;; i++) {
        char key[32];
        uint64_t rv;
        (void)snprintf(key, sizeof(key), "/burst/%d/%08ld", b->id, i);
        if (store_create(b->s, key, "{\"v\":1}", 7, &rv) < 0)
            _exit(3);
        if (write(b->fd, &tag, 1) != 1)
            _exit(4);
    }
    return NULL;
}

static void test_kill9_keeps_acknowledged_group_commits(void **state)
{
    struct fixture *f = *state;
    long acked[4] = {0}, sum = 0;
    int fds[2];
    pid_t pid;
    char buf[64];
    ssize_t n;

    store_close(f->s);
    f->s = NULL;
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct burst b[4];
        pthread_t th;
        struct store *s;
        (void)close(fds[0]);
        if (store_sqlite_open(f->path, 0, &s) < 0)
            _exit(2);
        for (int i = 0; i < 4; i++) {
            b[i] = (struct burst){s, fds[1], i};
            if (pthread_create(&th, NULL, burst_write, &b[i]) != 0)
                _exit(5);
        }
        for (;;)
            (void)pause();
    }
    (void)close(fds[1]);
    while (sum < 400 && (n = read(fds[0], buf, sizeof(buf))) > 0)
        for (ssize_t i = 0; i < n; i++, sum++)
            acked[buf[i] - 'a']++;
    assert_int_equal(kill(pid, SIGKILL), 0);
    while ((n = read(fds[0], buf, sizeof(buf))) > 0)
        for (ssize_t i = 0; i < n; i++)
            acked[buf[i] - 'a']++;
    (void)close(fds[0]);
    (void)waitpid(pid, NULL, 0);
    assert_true(sum >= 400);

    assert_int_equal(store_sqlite_open(f->path, 8, &f->s), 0);
    for (int t = 0; t < 4; t++) {
        for (long i = 0; i < acked[t]; i++) {
            struct store_item it = {0};
            char key[32];
            (void)snprintf(key, sizeof(key), "/burst/%d/%08ld", t, i);
            if (store_get(f->s, key, &it) != 0)
                fail_msg("acknowledged write %d/%ld of %ld lost after kill -9", t, i, acked[t]);
            store_item_release(&it);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_crud_and_revisions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_events_and_compaction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_at_revision, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_is_a_snapshot_across_chunks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replay_ends_at_its_start, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upgrade_from_format_1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_group_commit_concurrent_writers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kill9_keeps_acknowledged_group_commits, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reopen_keeps_revisions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_a_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kill9_keeps_acknowledged_writes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
