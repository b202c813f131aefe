/*
 * The SQLite backend of the storage interface (see store_sqlite.h). Three tables: objects (key
 * -> revision, bytes), events (the write history, pruned to the configured size) and meta (the
 * current revision and the oldest revision a watch may start after). Writes are grouped: each
 * batch is one IMMEDIATE transaction in which every write takes the next revision, changes its
 * object and appends its event under a savepoint, and the batch then stores the revision and
 * prunes the history once; a crash leaves all of a batch or none of it, and a write is
 * acknowledged only after the commit (and its fsync) that holds it.
 *
 * An event keeps the value it replaced (prev) and that value's revision, so the state at an
 * older revision R is: each current row no event after R touched, plus, for each key an event
 * after R touched, the state before the first such event (nothing when that event created the
 * key). ST_LIST_AT says exactly that in SQL, helped by the (key, rv) index on events.
 */
#include "apiserver/store_sqlite.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

#define DEFAULT_HISTORY 10000
#define STORE_FORMAT    2
#define CHUNK_ROWS      256        /* rows one locked read copies out */
#define CHUNK_BYTES     (4u << 20) /* ... or fewer once they hold this many bytes */

enum stmt_id {
    ST_GET,
    ST_INSERT,
    ST_UPDATE,
    ST_DELETE,
    ST_EVENT,
    ST_META_SET,
    ST_PRUNE,
    ST_LIST,
    ST_LIST_AT,
    ST_EVENTS,
    ST_BEGIN,
    ST_COMMIT,
    ST_ROLLBACK,
    ST_SAVEPOINT,
    ST_RELEASE,
    ST_ROLLBACK_TO,
    ST_COUNT
};

static const char *const stmt_sql[ST_COUNT] = {
    [ST_GET] = "SELECT rv, value FROM objects WHERE key = ?1",
    [ST_INSERT] = "INSERT INTO objects(key, rv, value) VALUES (?1, ?2, ?3)",
    [ST_UPDATE] = "UPDATE objects SET rv = ?2, value = ?3 WHERE key = ?1",
    [ST_DELETE] = "DELETE FROM objects WHERE key = ?1",
    [ST_EVENT] = ("INSERT INTO events(rv, type, key, value, prev_rv, prev) "
                  "VALUES (?1, ?2, ?3, ?4, ?5, ?6)"),
    [ST_META_SET] = "INSERT OR REPLACE INTO meta(k, v) VALUES (?1, ?2)",
    [ST_PRUNE] = "DELETE FROM events WHERE rv <= ?1",
    [ST_LIST] = ("SELECT key, rv, value FROM objects WHERE key > ?3 AND key >= ?1 AND key < ?2 "
                 "ORDER BY key LIMIT ?4"),
    /* ?1..?3 as ST_LIST, ?4 the revision, ?5 the limit. */
    [ST_LIST_AT] = ("SELECT key, rv, value FROM objects o WHERE key > ?3 AND key >= ?1 AND "
                    "key < ?2 AND NOT EXISTS (SELECT 1 FROM events e WHERE e.key = o.key AND "
                    "e.rv > ?4) "
                    "UNION ALL "
                    "SELECT key, prev_rv, CASE type WHEN 3 THEN value ELSE prev END FROM events e "
                    "WHERE rv > ?4 AND type != 1 AND key > ?3 AND key >= ?1 AND key < ?2 AND "
                    "NOT EXISTS (SELECT 1 FROM events f WHERE f.key = e.key AND f.rv > ?4 AND "
                    "f.rv < e.rv) "
                    "ORDER BY 1 LIMIT ?5"),
    [ST_EVENTS] = ("SELECT rv, type, key, value, prev_rv, prev FROM events WHERE rv > ?1 AND "
                   "rv <= ?2 ORDER BY rv LIMIT ?3"),
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
    [ST_SAVEPOINT] = "SAVEPOINT w",
    [ST_RELEASE] = "RELEASE w",
    [ST_ROLLBACK_TO] = "ROLLBACK TO w",
};

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS objects(key TEXT PRIMARY KEY, rv INTEGER NOT NULL,"
    " value BLOB NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS events(rv INTEGER PRIMARY KEY, type INTEGER NOT NULL,"
    " key TEXT NOT NULL, value BLOB NOT NULL, prev_rv INTEGER NOT NULL DEFAULT 0, prev BLOB);"
    "INSERT OR IGNORE INTO meta(k, v) VALUES ('format', 2), ('revision', 0), ('oldest', 0);";

/* Format 1 kept no previous values: its history cannot rebuild snapshots, so it is dropped
 * (watches from before the upgrade get 410 and relist, as after any compaction). */
static const char upgrade_v1_sql[] =
    "BEGIN IMMEDIATE;"
    "ALTER TABLE events ADD COLUMN prev_rv INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE events ADD COLUMN prev BLOB;"
    "DELETE FROM events;"
    "UPDATE meta SET v = (SELECT v FROM meta WHERE k = 'revision') WHERE k = 'oldest';"
    "UPDATE meta SET v = 2 WHERE k = 'format';"
    "COMMIT;";

struct store_sqlite {
    struct store base;
    sqlite3 *db;
    sqlite3_stmt *st[ST_COUNT];
    pthread_mutex_t lock; /* the connection, rev, oldest, observer */
    uint64_t rev;
    uint64_t oldest;
    size_t history;
    store_event_fn observer;
    void *observer_data;
    /* Group commit: writes queue here while a batch is committing. */
    pthread_mutex_t qlock;
    struct wreq *queue, **qtail;
    bool committing;
};

static const struct store_ops sqlite_ops;

/* SQLite result codes to errno: only what a caller can act on is distinguished. */
static int sql_err(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_NOMEM:
        return -ENOMEM;
    case SQLITE_CONSTRAINT:
        return -EEXIST;
    case SQLITE_FULL:
        return -ENOSPC;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return -EBUSY;
    default:
        return -EIO;
    }
}

static sqlite3_stmt *stmt(struct store_sqlite *s, enum stmt_id id)
{
    sqlite3_stmt *st = s->st[id];
    (void)sqlite3_reset(st);
    (void)sqlite3_clear_bindings(st);
    return st;
}

static int step_done(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    return rc == SQLITE_DONE ? 0 : sql_err(rc);
}

static int meta_get(sqlite3 *db, const char *k, uint64_t *ret)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT v FROM meta WHERE k = ?1", -1, &st, NULL);

    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(st, 1, k, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        sqlite3_int64 v = sqlite3_column_int64(st, 0);
        rc = v < 0 ? SQLITE_CORRUPT : SQLITE_OK;
        *ret = (uint64_t)v;
    } else if (rc == SQLITE_DONE) {
        rc = SQLITE_CORRUPT;
    }
    (void)sqlite3_finalize(st);
    return rc == SQLITE_OK ? 0 : sql_err(rc);
}

int store_sqlite_open(const char *path, size_t history, struct store **ret)
{
    struct store_sqlite *s = xcalloc(1, sizeof(*s));
    uint64_t format = 0;
    int rc, r = -EIO;

    s->base.ops = &sqlite_ops;
    s->history = history ? history : DEFAULT_HISTORY;
    s->qtail = &s->queue;
    rc = sqlite3_open_v2(path, &s->db,
                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK)
        goto err;
    (void)sqlite3_busy_timeout(s->db, 5000);
    rc = sqlite3_exec(s->db,
                      "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                      "PRAGMA foreign_keys=OFF;",
                      NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(s->db, schema_sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        r = sql_err(rc);
        goto err;
    }
    if ((r = meta_get(s->db, "format", &format)) < 0)
        goto err;
    if (format == 1) {
        rc = sqlite3_exec(s->db, upgrade_v1_sql, NULL, NULL, NULL);
        if (rc != SQLITE_OK) {
            (void)sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
            r = sql_err(rc);
            goto err;
        }
        format = STORE_FORMAT;
    }
    rc = sqlite3_exec(s->db, "CREATE INDEX IF NOT EXISTS events_key ON events(key, rv);", NULL,
                      NULL, NULL);
    if (rc != SQLITE_OK) {
        r = sql_err(rc);
        goto err;
    }
    if (format != STORE_FORMAT || (r = meta_get(s->db, "revision", &s->rev)) < 0 ||
        (r = meta_get(s->db, "oldest", &s->oldest)) < 0) {
        r = r < 0 ? r : -EIO;
        goto err;
    }
    for (int i = 0; i < ST_COUNT; i++) {
        rc = sqlite3_prepare_v3(s->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL);
        if (rc != SQLITE_OK) {
            r = sql_err(rc);
            goto err;
        }
    }
    CHECK(pthread_mutex_init(&s->lock, NULL) == 0);
    CHECK(pthread_mutex_init(&s->qlock, NULL) == 0);
    *ret = &s->base;
    return 0;
err:
    for (int i = 0; i < ST_COUNT; i++)
        (void)sqlite3_finalize(s->st[i]);
    (void)sqlite3_close(s->db);
    free(s);
    return r;
}

static void sqlite_close(struct store *base)
{
    struct store_sqlite *s = (struct store_sqlite *)base;

    for (int i = 0; i < ST_COUNT; i++)
        (void)sqlite3_finalize(s->st[i]);
    (void)sqlite3_close(s->db);
    (void)pthread_mutex_destroy(&s->lock);
    (void)pthread_mutex_destroy(&s->qlock);
    free(s);
}

static uint64_t sqlite_revision(struct store *base)
{
    struct store_sqlite *s = (struct store_sqlite *)base;
    uint64_t r;

    CHECK(pthread_mutex_lock(&s->lock) == 0);
    r = s->rev;
    CHECK(pthread_mutex_unlock(&s->lock) == 0);
    return r;
}

static uint64_t sqlite_oldest(struct store *base)
{
    struct store_sqlite *s = (struct store_sqlite *)base;
    uint64_t r;

    CHECK(pthread_mutex_lock(&s->lock) == 0);
    r = s->oldest;
    CHECK(pthread_mutex_unlock(&s->lock) == 0);
    return r;
}

static void sqlite_set_observer(struct store *base, store_event_fn fn, void *userdata)
{
    struct store_sqlite *s = (struct store_sqlite *)base;

    CHECK(pthread_mutex_lock(&s->lock) == 0);
    s->observer = fn;
    s->observer_data = userdata;
    CHECK(pthread_mutex_unlock(&s->lock) == 0);
}

static int fill_item(sqlite3_stmt *st, int col_key, int col_rv, int col_val, const char *key,
                     struct store_item *ret)
{
    const char *k = col_key >= 0 ? (const char *)sqlite3_column_text(st, col_key) : key;
    const void *v = sqlite3_column_blob(st, col_val);
    size_t len = (size_t)sqlite3_column_bytes(st, col_val);
    struct store_obj *o;

    if (!k)
        return -ENOMEM;
    o = store_obj_new(k, (uint64_t)sqlite3_column_int64(st, col_rv), v ? v : "", len);
    if (!o)
        return -ENOMEM;
    store_item_set(ret, o);
    store_obj_unref(o);
    return 0;
}

static int sqlite_get(struct store *base, const char *key, struct store_item *ret)
{
    struct store_sqlite *s = (struct store_sqlite *)base;
    sqlite3_stmt *st;
    int rc, r;

    CHECK(pthread_mutex_lock(&s->lock) == 0);
    st = stmt(s, ST_GET);
    (void)sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        r = fill_item(st, -1, 0, 1, key, ret);
    else
        r = rc == SQLITE_DONE ? -ENOENT : sql_err(rc);
    (void)sqlite3_reset(st);
    CHECK(pthread_mutex_unlock(&s->lock) == 0);
    return r;
}

/* Within the write transaction: records the event. prev (MODIFIED only) and prev_rv describe
 * the value the write replaced or removed. The revision and the history's bound are written
 * once per batch (finish_batch()). */
static int record(struct store_sqlite *s, uint64_t rev, enum store_event_type type, const char *key,
                  const void *value, size_t len, const void *prev, size_t prev_len,
                  uint64_t prev_rv)
{
    sqlite3_stmt *st = stmt(s, ST_EVENT);

    (void)sqlite3_bind_int64(st, 1, (sqlite3_int64)rev);
    (void)sqlite3_bind_int(st, 2, (int)type);
    (void)sqlite3_bind_text(st, 3, key, -1, SQLITE_STATIC);
    (void)sqlite3_bind_blob(st, 4, value ? value : "", (int)len, SQLITE_STATIC);
    (void)sqlite3_bind_int64(st, 5, (sqlite3_int64)prev_rv);
    if (prev)
        (void)sqlite3_bind_blob(st, 6, prev_len ? prev : "", (int)prev_len, SQLITE_STATIC);
    return step_done(st);
}

/*
 * Within the batch transaction, after its writes: the new revision, and the history pruned to
 * its bound, once for the whole batch rather than once per write (the state committed is the
 * same; what a batch of n writes saves is 2n - 2 statements and the rewriting of the meta and
 * events pages in between).
 */
static int finish_batch(struct store_sqlite *s, uint64_t rev, uint64_t *oldest)
{
    sqlite3_stmt *st = stmt(s, ST_META_SET);
    int r;

    (void)sqlite3_bind_text(st, 1, "revision", -1, SQLITE_STATIC);
    (void)sqlite3_bind_int64(st, 2, (sqlite3_int64)rev);
    if ((r = step_done(st)) < 0)
        return r;
    if (rev - *oldest > s->history) {
        st = stmt(s, ST_PRUNE);
        (void)sqlite3_bind_int64(st, 1, (sqlite3_int64)(rev - s->history));
        if ((r = step_done(st)) < 0)
            return r;
        st = stmt(s, ST_META_SET);
        (void)sqlite3_bind_text(st, 1, "oldest", -1, SQLITE_STATIC);
        (void)sqlite3_bind_int64(st, 2, (sqlite3_int64)(rev - s->history));
        if ((r = step_done(st)) < 0)
            return r;
        *oldest = rev - s->history;
    }
    return 0;
}

/* One queued write and, once done, its outcome. */
struct wreq {
    enum store_write_op op;
    const char *key, *value;
    size_t len;
    uint64_t expect_rv;
    struct store_item old; /* the replaced or removed object */
    uint64_t rv;
    int r;
    bool done;
    pthread_cond_t cv; /* signalled when done, or when it heads the queue and may commit */
    struct wreq *next;
};

/* Within the batch transaction, under a savepoint so a failure undoes only this write: check
 * the current object, change it, record the event. */
static int apply(struct store_sqlite *s, struct wreq *w, uint64_t rev)
{
    sqlite3_stmt *st;
    bool exists;
    int rc, r;

    if ((r = step_done(stmt(s, ST_SAVEPOINT))) < 0)
        return r;
    st = stmt(s, ST_GET);
    (void)sqlite3_bind_text(st, 1, w->key, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    exists = rc == SQLITE_ROW;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        r = sql_err(rc);
        goto undo;
    }
    /* The replaced value goes into the history (snapshots, selector transitions). */
    if (exists && (r = fill_item(st, -1, 0, 1, w->key, &w->old)) < 0)
        goto undo;
    (void)sqlite3_reset(st);
    if (w->op == STORE_OP_CREATE && exists)
        r = -EEXIST;
    else if (w->op != STORE_OP_CREATE && !exists)
        r = -ENOENT;
    else if (w->op != STORE_OP_CREATE && w->expect_rv && w->expect_rv != w->old.rv)
        r = -ESTALE;
    if (r < 0)
        goto undo;
    st = stmt(s, w->op == STORE_OP_CREATE   ? ST_INSERT
                 : w->op == STORE_OP_UPDATE ? ST_UPDATE
                                            : ST_DELETE);
    (void)sqlite3_bind_text(st, 1, w->key, -1, SQLITE_STATIC);
    if (w->op != STORE_OP_DELETE) {
        (void)sqlite3_bind_int64(st, 2, (sqlite3_int64)rev);
        (void)sqlite3_bind_blob(st, 3, w->len ? w->value : "", (int)w->len, SQLITE_STATIC);
    }
    if ((r = step_done(st)) < 0)
        goto undo;
    if (w->op == STORE_OP_DELETE)
        r = record(s, rev, STORE_DELETED, w->key, w->old.value, w->old.len, NULL, 0, w->old.rv);
    else if (w->op == STORE_OP_UPDATE)
        r = record(s, rev, STORE_MODIFIED, w->key, w->value, w->len, w->old.value, w->old.len,
                   w->old.rv);
    else
        r = record(s, rev, STORE_ADDED, w->key, w->value, w->len, NULL, 0, 0);
    if (r < 0)
        goto undo;
    return step_done(stmt(s, ST_RELEASE));
undo:
    (void)sqlite3_reset(st);
    (void)step_done(stmt(s, ST_ROLLBACK_TO));
    (void)step_done(stmt(s, ST_RELEASE));
    store_item_release(&w->old);
    return r;
}

static void observe(struct store_sqlite *s, const struct wreq *w)
{
    struct store_event ev = {
        .type = w->op == STORE_OP_CREATE   ? STORE_ADDED
                : w->op == STORE_OP_UPDATE ? STORE_MODIFIED
                                           : STORE_DELETED,
        .rv = w->rv,
        .key = w->key,
        .value = w->op == STORE_OP_DELETE ? w->old.value : (w->value ? w->value : ""),
        .len = w->op == STORE_OP_DELETE ? w->old.len : w->len,
        .prev = w->op == STORE_OP_UPDATE ? w->old.value : NULL,
        .prev_len = w->op == STORE_OP_UPDATE ? w->old.len : 0,
        .prev_rv = w->old.rv,
    };
    (void)s->observer(&ev, s->observer_data);
}

/*
 * Group commit: every write queued so far goes into one transaction with one fsync. Writes
 * take consecutive revisions in queue order; one that fails (a stale revision, a missing key)
 * is undone alone. The in-memory revision moves, and the observer hears of the writes, only
 * once the commit succeeded; if it fails, every write of the batch fails with it.
 */
static void run_batch(struct store_sqlite *s, struct wreq *batch)
{
    uint64_t rev, oldest;
    int r;

    CHECK(pthread_mutex_lock(&s->lock) == 0);
    rev = s->rev;
    oldest = s->oldest;
    r = step_done(stmt(s, ST_BEGIN));
    for (struct wreq *w = batch; w; w = w->next) {
        w->r = r < 0 ? r : apply(s, w, rev + 1);
        if (w->r == 0) {
            w->rv = ++rev;
        } else if (r == 0 && sqlite3_get_autocommit(s->db)) {
            /* SQLite rolled the whole transaction back itself (I/O error, disk full): what
             * the batch wrote is gone, and the next write must not run, let alone commit,
             * outside a transaction. The whole batch fails. */
            r = w->r;
        }
    }
    if (r == 0 && rev != s->rev)
        r = finish_batch(s, rev, &oldest);
    if (r == 0)
        r = step_done(stmt(s, ST_COMMIT));
    if (r < 0 && !sqlite3_get_autocommit(s->db))
        (void)step_done(stmt(s, ST_ROLLBACK));
    if (r < 0) {
        for (struct wreq *w = batch; w; w = w->next) {
            if (w->r == 0)
                w->r = r;
            store_item_release(&w->old);
        }
    } else {
        s->rev = rev;
        s->oldest = oldest;
        for (struct wreq *w = batch; w && s->observer; w = w->next)
            if (w->r == 0)
                observe(s, w);
    }
    CHECK(pthread_mutex_unlock(&s->lock) == 0);
}

/*
 * Queues the write; the first writer to find no batch running commits everything queued (its
 * own write included) while later ones queue up for the next batch. Each writer sleeps on its
 * own condition variable: the committer wakes the writers of its batch and the one heading the
 * queue (the next committer), not every writer queued meanwhile only for it to sleep again.
 */
static int sqlite_write(struct store *base, enum store_write_op op, const char *key,
                        const char *value, size_t len, uint64_t expect_rv,
                        struct store_item *ret_old, uint64_t *ret_rv)
{
    struct store_sqlite *s = (struct store_sqlite *)base;
    struct wreq w = {.op = op, .key = key, .value = value, .len = len, .expect_rv = expect_rv};

    CHECK(pthread_cond_init(&w.cv, NULL) == 0);
    CHECK(pthread_mutex_lock(&s->qlock) == 0);
    *s->qtail = &w;
    s->qtail = &w.next;
    while (!w.done) {
        struct wreq *batch;

        if (s->committing) {
            CHECK(pthread_cond_wait(&w.cv, &s->qlock) == 0);
            continue;
        }
        batch = s->queue;
        s->queue = NULL;
        s->qtail = &s->queue;
        s->committing = true;
        CHECK(pthread_mutex_unlock(&s->qlock) == 0);
        run_batch(s, batch);
        CHECK(pthread_mutex_lock(&s->qlock) == 0);
        /* Under qlock: a writer leaves only once it sees done under qlock, so b is still there
         * while it is signalled. */
        for (struct wreq *b = batch; b; b = b->next) {
            b->done = true;
            if (b != &w)
                CHECK(pthread_cond_signal(&b->cv) == 0);
        }
        s->committing = false;
        if (s->queue)
            CHECK(pthread_cond_signal(&s->queue->cv) == 0);
    }
    CHECK(pthread_mutex_unlock(&s->qlock) == 0);
    (void)pthread_cond_destroy(&w.cv);
    if (w.r == 0 && ret_rv)
        *ret_rv = w.rv;
    if (w.r == 0 && ret_old) {
        *ret_old = w.old;
        w.old = (struct store_item){0};
    }
    store_item_release(&w.old);
    return w.r;
}

/* Rows copied out of one locked read, handed to callbacks after unlocking. */
struct chunk {
    struct store_item items[CHUNK_ROWS];
    size_t n;
    bool exhausted; /* the query had no more rows */
};

static void chunk_release(struct chunk *c)
{
    for (size_t i = 0; i < c->n; i++)
        store_item_release(&c->items[i]);
    c->n = 0;
}

/* Under the lock: up to want rows after cursor at revision rev. */
static int read_chunk(struct store_sqlite *s, const char *prefix, const char *upper,
                      const char *cursor, uint64_t rev, size_t want, struct chunk *c)
{
    bool at = rev != s->rev;
    sqlite3_stmt *st = stmt(s, at ? ST_LIST_AT : ST_LIST);
    size_t bytes = 0;
    int rc = SQLITE_ROW, r = 0;

    (void)sqlite3_bind_text(st, 1, prefix, -1, SQLITE_STATIC);
    (void)sqlite3_bind_text(st, 2, upper, -1, SQLITE_STATIC);
    (void)sqlite3_bind_text(st, 3, cursor, -1, SQLITE_STATIC);
    if (at)
        (void)sqlite3_bind_int64(st, 4, (sqlite3_int64)rev);
    (void)sqlite3_bind_int64(st, at ? 5 : 4, (sqlite3_int64)want);
    while (c->n < want && bytes < CHUNK_BYTES && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((r = fill_item(st, 0, 1, 2, NULL, &c->items[c->n])) < 0)
            break;
        bytes += c->items[c->n++].len;
    }
    if (r == 0 && rc != SQLITE_ROW && rc != SQLITE_DONE)
        r = sql_err(rc);
    c->exhausted = rc == SQLITE_DONE;
    (void)sqlite3_reset(st);
    return r;
}

static int sqlite_list_at(struct store *base, const char *prefix, const char *after, uint64_t at,
                          size_t limit, store_item_fn fn, void *userdata, uint64_t *ret_rv)
{
    struct store_sqlite *s = (struct store_sqlite *)base;
    size_t plen = prefix ? strlen(prefix) : 0, done = 0;
    struct chunk *c = NULL;
    char *upper, *cursor;
    uint64_t rev = at;
    bool first = true;
    int r = 0;

    /* Keys are printable ASCII, so prefix with its last byte incremented bounds the range. */
    upper = xstrdup(prefix);
    upper[plen - 1]++;
    cursor = xstrdup(after ? after : "");
    c = xcalloc(1, sizeof(*c));
    for (;;) {
        size_t want = CHUNK_ROWS;

        if (limit && limit - done < want)
            want = limit - done;
        CHECK(pthread_mutex_lock(&s->lock) == 0);
        if (first) {
            rev = rev ? rev : s->rev;
            if (ret_rv)
                *ret_rv = rev;
            first = false;
        }
        if (rev > s->rev)
            r = -EOVERFLOW;
        else if (rev < s->oldest)
            r = -ERANGE;
        else
            r = read_chunk(s, prefix, upper, cursor, rev, want, c);
        CHECK(pthread_mutex_unlock(&s->lock) == 0);
        for (size_t i = 0; i < c->n && r == 0; i++)
            r = fn(&c->items[i], userdata);
        if (r == 0 && c->n) {
            free(cursor);
            cursor = xstrdup(c->items[c->n - 1].key);
        }
        done += c->n;
        chunk_release(c);
        if (r != 0 || c->exhausted || (limit && done >= limit))
            break;
    }
    free(c);
    free(cursor);
    free(upper);
    return r < 0 ? r : 0;
}

/* One event copied out of the history: its states as shared objects. */
static void event_release(struct store_event *ev)
{
    store_obj_unref(ev->obj);
    store_obj_unref(ev->prev_obj);
    *ev = (struct store_event){0};
}

/* Under the lock: up to CHUNK_ROWS events in (since, until]. */
static int read_events(struct store_sqlite *s, uint64_t since, uint64_t until,
                       struct store_event *v, size_t *ret_n)
{
    sqlite3_stmt *st = stmt(s, ST_EVENTS);
    size_t n = 0, bytes = 0;
    int rc = SQLITE_DONE, r = 0;

    (void)sqlite3_bind_int64(st, 1, (sqlite3_int64)since);
    (void)sqlite3_bind_int64(st, 2, (sqlite3_int64)until);
    (void)sqlite3_bind_int64(st, 3, CHUNK_ROWS);
    while (n < CHUNK_ROWS && bytes < CHUNK_BYTES && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct store_event *e = &v[n];
        const char *k = (const char *)sqlite3_column_text(st, 2);
        const void *val = sqlite3_column_blob(st, 3);
        bool has_prev = sqlite3_column_type(st, 5) != SQLITE_NULL;

        e->rv = (uint64_t)sqlite3_column_int64(st, 0);
        e->type = (enum store_event_type)sqlite3_column_int(st, 1);
        e->prev_rv = (uint64_t)sqlite3_column_int64(st, 4);
        n++;
        if (!k) {
            r = -ENOMEM;
            break;
        }
        e->obj = store_obj_new(k, e->type == STORE_DELETED ? e->prev_rv : e->rv, val ? val : "",
                               (size_t)sqlite3_column_bytes(st, 3));
        if (has_prev) {
            const void *p = sqlite3_column_blob(st, 5);
            e->prev_obj =
                store_obj_new(k, e->prev_rv, p ? p : "", (size_t)sqlite3_column_bytes(st, 5));
        }
        if (!e->obj || (has_prev && !e->prev_obj)) {
            r = -ENOMEM;
            break;
        }
        e->key = e->obj->key;
        e->value = e->obj->value;
        e->len = e->obj->len;
        e->prev = e->prev_obj ? e->prev_obj->value : NULL;
        e->prev_len = e->prev_obj ? e->prev_obj->len : 0;
        bytes += e->len + e->prev_len;
    }
    if (r == 0 && rc != SQLITE_ROW && rc != SQLITE_DONE)
        r = sql_err(rc);
    (void)sqlite3_reset(st);
    *ret_n = n;
    return r;
}

static int sqlite_events(struct store *base, uint64_t since, store_event_fn fn, void *userdata)
{
    struct store_sqlite *s = (struct store_sqlite *)base;
    struct store_event *v = xcalloc(CHUNK_ROWS, sizeof(*v));
    uint64_t until = 0;
    bool first = true;
    int r = 0;

    for (;;) {
        size_t n = 0;

        CHECK(pthread_mutex_lock(&s->lock) == 0);
        if (first) {
            until = s->rev;
            first = false;
        }
        if (since < s->oldest)
            r = -ERANGE;
        else if (since < until)
            r = read_events(s, since, until, v, &n);
        CHECK(pthread_mutex_unlock(&s->lock) == 0);
        for (size_t i = 0; i < n && r == 0; i++) {
            since = v[i].rv;
            r = fn(&v[i], userdata);
        }
        for (size_t i = 0; i < n; i++)
            event_release(&v[i]);
        if (r != 0 || n == 0 || since >= until)
            break;
    }
    free(v);
    return r < 0 ? r : 0;
}

static const struct store_ops sqlite_ops = {
    .close = sqlite_close,
    .revision = sqlite_revision,
    .oldest = sqlite_oldest,
    .get = sqlite_get,
    .write = sqlite_write,
    .list_at = sqlite_list_at,
    .events = sqlite_events,
    .set_observer = sqlite_set_observer,
};
