/*
 * The in-memory backend (see store_memory.h). Current objects sit in an AVL tree keyed by
 * their store_obj's key: a get or an update is one descent (an update swaps the node's object
 * in place), a create or a delete one descent and O(log n) rotations, and a list is an in-order
 * walk from the first key it wants. The history is a ring of events in revision order: the
 * event of revision rv sits oldest + 1 + (its distance from the head), so replays and
 * snapshots find their start without a search, and the ring always holds exactly the writes
 * (oldest, rev].
 *
 * Every write moves exactly one value out of the current state (the one an update replaced or
 * a delete removed) and hands the tree's reference to it to its event; that event is the last
 * one holding it, as the event that wrote the value is older and dropped first. So the bytes
 * the history alone keeps alive are the sum of those values over the kept events, which is what
 * history_bytes bounds.
 */
#include "apiserver/store_memory.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

#define DEFAULT_HISTORY       10000
#define DEFAULT_HISTORY_BYTES ((size_t)64 << 20)
#define DEFAULT_MAX_VALUE     ((size_t)1 << 20)
#define COUNTER_MASK          ((UINT64_C(1) << STORE_MEMORY_EPOCH_SHIFT) - 1)
#define CHUNK_EVENTS          256 /* events one locked read of a replay takes */
/* An AVL tree of n nodes is at most 1.44 log2(n + 2) high: 64 covers any n memory holds. */
#define MAX_DEPTH 64

struct node {
    struct store_obj *obj; /* holds one reference; obj->key is the node's key */
    struct node *left, *right;
    int height;
};

/* One write as the history keeps it; its revision is its position (see above). */
struct hist {
    enum store_event_type type;
    struct store_obj *obj;      /* the new state; for STORE_DELETED the removed one */
    struct store_obj *prev_obj; /* STORE_MODIFIED: the replaced state; NULL otherwise */
};

struct store_memory {
    struct store base;
    pthread_mutex_t lock; /* everything below */
    struct node *root;
    uint64_t rev;    /* of the last write; epoch << SHIFT before the first */
    uint64_t oldest; /* rev - n: the ring holds the events (oldest, rev] */
    struct hist *ring;
    size_t head, n, cap;
    size_t pinned; /* bytes of the values only the ring keeps alive */
    size_t history, history_bytes, max_value;
    store_event_fn observer, listener;
    void *observer_data, *listener_data;
};

static const struct store_ops memory_ops;

static struct store_memory *as_memory(struct store *s)
{
    return (struct store_memory *)s;
}

/* ---- the tree ---- */

static int height(const struct node *t)
{
    return t ? t->height : 0;
}

static void update_height(struct node *t)
{
    int l = height(t->left), r = height(t->right);
    t->height = 1 + (l > r ? l : r);
}

static struct node *rotate_right(struct node *t)
{
    struct node *l = t->left;

    t->left = l->right;
    l->right = t;
    update_height(t);
    update_height(l);
    return l;
}

static struct node *rotate_left(struct node *t)
{
    struct node *r = t->right;

    t->right = r->left;
    r->left = t;
    update_height(t);
    update_height(r);
    return r;
}

/* Restores the AVL balance of t, whose subtrees are balanced and differ in height by at most
 * 2; returns the subtree's new root. */
static struct node *rebalance(struct node *t)
{
    int b = height(t->left) - height(t->right);

    if (b > 1) {
        if (height(t->left->left) < height(t->left->right))
            t->left = rotate_left(t->left);
        return rotate_right(t);
    }
    if (b < -1) {
        if (height(t->right->right) < height(t->right->left))
            t->right = rotate_right(t->right);
        return rotate_left(t);
    }
    update_height(t);
    return t;
}

static struct node *tree_find(struct node *t, const char *key)
{
    while (t) {
        int c = strcmp(key, t->obj->key);
        if (!c)
            return t;
        t = c < 0 ? t->left : t->right;
    }
    return NULL;
}

/* nn's key is not in t. */
static struct node *tree_insert(struct node *t, struct node *nn)
{
    if (!t)
        return nn;
    if (strcmp(nn->obj->key, t->obj->key) < 0)
        t->left = tree_insert(t->left, nn);
    else
        t->right = tree_insert(t->right, nn);
    return rebalance(t);
}

static struct node *tree_remove_min(struct node *t, struct node **ret_min)
{
    if (!t->left) {
        *ret_min = t;
        return t->right;
    }
    t->left = tree_remove_min(t->left, ret_min);
    return rebalance(t);
}

/* Unlinks the node of key (which is in t) into *ret. */
static struct node *tree_remove(struct node *t, const char *key, struct node **ret)
{
    int c = strcmp(key, t->obj->key);

    if (c < 0) {
        t->left = tree_remove(t->left, key, ret);
    } else if (c > 0) {
        t->right = tree_remove(t->right, key, ret);
    } else {
        struct node *m;

        *ret = t;
        if (!t->right)
            return t->left;
        t->right = tree_remove_min(t->right, &m);
        m->left = t->left;
        m->right = t->right;
        return rebalance(m);
    }
    return rebalance(t);
}

static void tree_free(struct node *t)
{
    if (!t)
        return;
    tree_free(t->left);
    tree_free(t->right);
    store_obj_unref(t->obj);
    free(t);
}

/* An in-order walk from a lower bound: the stack holds the nodes still to visit whose left
 * subtrees are done, the next one on top. */
struct cursor {
    struct node *stack[MAX_DEPTH];
    int n;
};

static void cursor_push(struct cursor *c, struct node *t)
{
    CHECK(c->n < MAX_DEPTH);
    c->stack[c->n++] = t;
}

/* Positions c before the first key > key (strict) or >= key. */
static void cursor_seek(struct cursor *c, struct node *t, const char *key, bool strict)
{
    c->n = 0;
    while (t) {
        int cmp = strcmp(t->obj->key, key);
        if (cmp > 0 || (!strict && !cmp)) {
            cursor_push(c, t);
            t = t->left;
        } else {
            t = t->right;
        }
    }
}

static struct node *cursor_next(struct cursor *c)
{
    struct node *t;

    if (!c->n)
        return NULL;
    t = c->stack[--c->n];
    for (struct node *r = t->right; r; r = r->left)
        cursor_push(c, r);
    return t;
}

/* Where a list starts: after `after` when that is inside or past the prefix's range, else at
 * the prefix (store_list_at(): keys after `after`). NULL: at the prefix. */
static const char *list_after(const char *prefix, const char *after)
{
    return after && strcmp(after, prefix) >= 0 ? after : NULL;
}

static bool in_list(const char *key, const char *prefix, size_t plen, const char *after)
{
    return !strncmp(key, prefix, plen) && (!after || strcmp(key, after) > 0);
}

/* ---- the history ---- */

static struct hist *hist_at(struct store_memory *m, uint64_t rv)
{
    return &m->ring[(m->head + (size_t)(rv - m->oldest - 1)) % m->cap];
}

/* The bytes h alone keeps alive: the value its write moved out of the current state. */
static size_t hist_pins(const struct hist *h)
{
    return h->type == STORE_MODIFIED  ? h->prev_obj->len
           : h->type == STORE_DELETED ? h->obj->len
                                      : 0;
}

static void drop_oldest(struct store_memory *m)
{
    struct hist *h = &m->ring[m->head];

    m->pinned -= hist_pins(h);
    store_obj_unref(h->obj);
    store_obj_unref(h->prev_obj);
    *h = (struct hist){0};
    m->head = (m->head + 1) % m->cap;
    m->n--;
    m->oldest++;
}

/* Room for one more event, dropping the oldest once the ring holds `history`. Before a write
 * changes anything, so a failure leaves the store as it was. */
static int ring_reserve(struct store_memory *m)
{
    struct hist *ring;
    size_t cap;

    if (m->n < m->cap)
        return 0;
    if (m->n == m->history) {
        drop_oldest(m);
        return 0;
    }
    cap = m->cap ? m->cap * 2 : 64;
    if (cap > m->history)
        cap = m->history;
    ring = ccalloc(cap, sizeof(*ring));
    if (!ring)
        return -ENOMEM;
    if (m->cap) { /* full: head .. cap, then 0 .. head */
        memcpy(ring, m->ring + m->head, (m->cap - m->head) * sizeof(*ring));
        memcpy(ring + (m->cap - m->head), m->ring, m->head * sizeof(*ring));
    }
    free(m->ring);
    m->ring = ring;
    m->cap = cap;
    m->head = 0;
    return 0;
}

/* A view of h as the event of revision rv, borrowing its objects. */
static void hist_event(const struct hist *h, uint64_t rv, struct store_event *ret)
{
    *ret = (struct store_event){
        .type = h->type,
        .rv = rv,
        .key = h->obj->key,
        .value = h->obj->value,
        .len = h->obj->len,
        .prev = h->prev_obj ? h->prev_obj->value : NULL,
        .prev_len = h->prev_obj ? h->prev_obj->len : 0,
        .prev_rv = h->prev_obj                ? h->prev_obj->rv
                   : h->type == STORE_DELETED ? h->obj->rv
                                              : 0,
        .obj = h->obj,
        .prev_obj = h->prev_obj,
    };
}

/* ---- the store ---- */

int store_memory_new(const struct store_memory_opts *opts, struct store **ret)
{
    struct store_memory *m;
    pthread_mutexattr_t a;

    if (!opts || opts->epoch < 1 || opts->epoch > STORE_MEMORY_MAX_EPOCH ||
        opts->history > STORE_MEMORY_MAX_HISTORY || opts->max_value > STORE_MAX_VALUE)
        return -EINVAL;
    m = xcalloc(1, sizeof(*m));
    m->base.ops = &memory_ops;
    m->rev = m->oldest = opts->epoch << STORE_MEMORY_EPOCH_SHIFT;
    m->history = opts->history ? opts->history : DEFAULT_HISTORY;
    m->history_bytes = opts->history_bytes ? opts->history_bytes : DEFAULT_HISTORY_BYTES;
    m->max_value = opts->max_value ? opts->max_value : DEFAULT_MAX_VALUE;
    /* Adaptive: critical sections are short, so a writer spins briefly instead of sleeping on
     * the futex behind another (store_memory.h). */
    CHECK(pthread_mutexattr_init(&a) == 0);
    CHECK(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP) == 0);
    CHECK(pthread_mutex_init(&m->lock, &a) == 0);
    (void)pthread_mutexattr_destroy(&a);
    *ret = &m->base;
    return 0;
}

static void memory_close(struct store *base)
{
    struct store_memory *m = as_memory(base);

    tree_free(m->root);
    while (m->n)
        drop_oldest(m);
    free(m->ring);
    (void)pthread_mutex_destroy(&m->lock);
    free(m);
}

static uint64_t memory_revision(struct store *base)
{
    struct store_memory *m = as_memory(base);
    uint64_t r;

    CHECK(pthread_mutex_lock(&m->lock) == 0);
    r = m->rev;
    CHECK(pthread_mutex_unlock(&m->lock) == 0);
    return r;
}

static uint64_t memory_oldest(struct store *base)
{
    struct store_memory *m = as_memory(base);
    uint64_t r;

    CHECK(pthread_mutex_lock(&m->lock) == 0);
    r = m->oldest;
    CHECK(pthread_mutex_unlock(&m->lock) == 0);
    return r;
}

static int memory_get(struct store *base, const char *key, struct store_item *ret)
{
    struct store_memory *m = as_memory(base);
    struct node *t;

    CHECK(pthread_mutex_lock(&m->lock) == 0);
    t = tree_find(m->root, key);
    if (t)
        store_item_set(ret, t->obj);
    CHECK(pthread_mutex_unlock(&m->lock) == 0);
    return t ? 0 : -ENOENT;
}

/*
 * The value is copied, and a create's node allocated, before the lock is taken, so the locked
 * part is the checks, a tree descent, the ring push and the hooks. The new object's revision is
 * filled in under the lock, before anything else can see the object.
 */
static int memory_write(struct store *base, enum store_write_op op, const char *key,
                        const char *value, size_t len, uint64_t expect_rv,
                        struct store_item *ret_old, uint64_t *ret_rv)
{
    struct store_memory *m = as_memory(base);
    struct store_obj *o = NULL, *old = NULL;
    struct node *nn = NULL, *t;
    struct hist *h;
    struct store_event ev;
    store_event_fn listener = NULL;
    void *listener_data = NULL;
    int r = -E2BIG;

    if (op != STORE_OP_DELETE && len > m->max_value)
        goto out;
    r = -ENOMEM;
    if (op != STORE_OP_DELETE && !(o = store_obj_new(key, 0, value, len)))
        goto out;
    if (op == STORE_OP_CREATE && !(nn = cmalloc(sizeof(*nn))))
        goto out;
    CHECK(pthread_mutex_lock(&m->lock) == 0);
    t = tree_find(m->root, key);
    if ((m->rev & COUNTER_MASK) == COUNTER_MASK)
        r = -EOVERFLOW; /* the next revision would spill into the epoch */
    else if (op == STORE_OP_CREATE && t)
        r = -EEXIST;
    else if (op != STORE_OP_CREATE && !t)
        r = -ENOENT;
    else if (op != STORE_OP_CREATE && expect_rv && expect_rv != t->obj->rv)
        r = -ESTALE;
    else
        r = ring_reserve(m);
    if (r < 0)
        goto unlock;

    /* Committed from here on: nothing below fails. */
    m->rev++;
    if (o)
        o->rv = m->rev;
    h = &m->ring[(m->head + m->n) % m->cap];
    switch (op) {
    case STORE_OP_CREATE:
        *nn = (struct node){.obj = o, .height = 1};
        m->root = tree_insert(m->root, nn);
        nn = NULL;
        *h = (struct hist){STORE_ADDED, store_obj_ref(o), NULL};
        break;
    case STORE_OP_UPDATE:
        old = t->obj; /* the tree's reference moves to the event */
        t->obj = o;
        *h = (struct hist){STORE_MODIFIED, store_obj_ref(o), old};
        break;
    case STORE_OP_DELETE:
        m->root = tree_remove(m->root, key, &t);
        old = t->obj; /* likewise */
        free(t);
        *h = (struct hist){STORE_DELETED, old, NULL};
        break;
    }
    o = NULL;
    m->n++;
    m->pinned += hist_pins(h);
    if (m->observer || m->listener)
        hist_event(h, m->rev, &ev);
    if (m->observer)
        (void)m->observer(&ev, m->observer_data);
    if (m->listener) { /* called below, unlocked, on objects it holds */
        listener = m->listener;
        listener_data = m->listener_data;
        (void)store_obj_ref(ev.obj);
        if (ev.prev_obj)
            (void)store_obj_ref(ev.prev_obj);
    }
    if (ret_old) {
        if (old)
            store_item_set(ret_old, old);
        else
            *ret_old = (struct store_item){0};
    }
    if (ret_rv)
        *ret_rv = m->rev;
    /* Last, as it may drop this very event (a value bigger than the bound alone). */
    while (m->n && m->pinned > m->history_bytes)
        drop_oldest(m);
unlock:
    CHECK(pthread_mutex_unlock(&m->lock) == 0);
    if (listener) {
        (void)listener(&ev, listener_data);
        store_obj_unref(ev.obj);
        store_obj_unref(ev.prev_obj);
    }
out:
    store_obj_unref(o);
    free(nn);
    return r;
}

/* References to objects, taken under the lock and released after the callbacks. */
struct objv {
    struct store_obj **v;
    size_t n, cap;
};

static int objv_push(struct objv *a, struct store_obj *o)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 64;
        struct store_obj **v = crealloc(a->v, cap * sizeof(struct store_obj *));
        if (!v)
            return -ENOMEM;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = store_obj_ref(o);
    return 0;
}

static void objv_release(struct objv *a)
{
    for (size_t i = 0; i < a->n; i++)
        store_obj_unref(a->v[i]);
    free(a->v);
    *a = (struct objv){0};
}

/* A key a write after the snapshot's revision touched, and its state at that revision. */
struct undo {
    struct store_obj *ref; /* the state before the write; for a create, the created object */
    uint64_t rv;           /* of the write */
    bool absent;           /* the write created the key: absent from the snapshot */
};

struct undov {
    struct undo *v;
    size_t n, cap;
};

static void undov_release(struct undov *a)
{
    for (size_t i = 0; i < a->n; i++)
        store_obj_unref(a->v[i].ref);
    free(a->v);
    *a = (struct undov){0};
}

/* Under the lock: what the writes in (at, rev] did to the listed keys. */
static int collect_undo(struct store_memory *m, uint64_t at, const char *prefix, size_t plen,
                        const char *after, struct undov *ret)
{
    for (uint64_t rv = at + 1; rv <= m->rev; rv++) {
        const struct hist *h = hist_at(m, rv);

        if (!in_list(h->obj->key, prefix, plen, after))
            continue;
        if (ret->n == ret->cap) {
            size_t cap = ret->cap ? ret->cap * 2 : 64;
            struct undo *v = crealloc(ret->v, cap * sizeof(*v));
            if (!v)
                return -ENOMEM;
            ret->v = v;
            ret->cap = cap;
        }
        ret->v[ret->n++] = (struct undo){
            .ref = store_obj_ref(h->type == STORE_MODIFIED ? h->prev_obj : h->obj),
            .rv = rv,
            .absent = h->type == STORE_ADDED,
        };
    }
    return 0;
}

/* Under the lock: up to want (0 = all) current objects of the list, in key order. */
static int collect_current(struct store_memory *m, const char *prefix, size_t plen,
                           const char *after, size_t want, struct objv *ret)
{
    struct cursor c;
    struct node *t;
    int r = 0;

    cursor_seek(&c, m->root, after ? after : prefix, after != NULL);
    while (r == 0 && (!want || ret->n < want) && (t = cursor_next(&c)) &&
           !strncmp(t->obj->key, prefix, plen))
        r = objv_push(ret, t->obj);
    return r;
}

static int undo_cmp(const void *a, const void *b)
{
    const struct undo *x = a, *y = b;
    int c = strcmp(x->ref->key, y->ref->key);

    return c ? c : x->rv < y->rv ? -1 : x->rv > y->rv;
}

/* Keeps the first write after the snapshot per key: the state before it is the snapshot's. */
static void undo_first_per_key(struct undov *u)
{
    size_t k = 0;

    if (u->n < 2)
        return;
    qsort(u->v, u->n, sizeof(*u->v), undo_cmp);
    for (size_t i = 0; i < u->n; i++) {
        if (k && !strcmp(u->v[k - 1].ref->key, u->v[i].ref->key))
            store_obj_unref(u->v[i].ref);
        else
            u->v[k++] = u->v[i];
    }
    u->n = k;
}

/* The current objects with the undone keys replaced by their snapshot states, in key order. */
static int emit(const struct objv *cur, const struct undov *u, size_t limit, store_item_fn fn,
                void *userdata)
{
    size_t i = 0, j = 0, n = 0;
    int r = 0;

    while (r == 0 && (!limit || n < limit) && (i < cur->n || j < u->n)) {
        struct store_obj *o;
        int c = i == cur->n ? 1 : j == u->n ? -1 : strcmp(cur->v[i]->key, u->v[j].ref->key);

        if (c < 0) {
            o = cur->v[i++];
        } else {
            o = u->v[j].absent ? NULL : u->v[j].ref;
            j++;
            i += c == 0;
        }
        if (o) {
            struct store_item it = {o->key, o->rv, o->value, o->len, o};
            r = fn(&it, userdata);
            n++;
        }
    }
    return r;
}

/*
 * References are taken under the lock, so the list is one consistent state however long
 * the callbacks take. At an older revision, the writes since are collected too (their keys
 * and the states before them); the current list then needs at most one object more per write
 * to fill the limit after those keys are replaced.
 */
static int memory_list_at(struct store *base, const char *prefix, const char *after, uint64_t at,
                          size_t limit, store_item_fn fn, void *userdata, uint64_t *ret_rv)
{
    struct store_memory *m = as_memory(base);
    size_t plen = strlen(prefix), want = limit;
    struct objv cur = {0};
    struct undov u = {0};
    uint64_t rev;
    int r = 0;

    after = list_after(prefix, after);
    CHECK(pthread_mutex_lock(&m->lock) == 0);
    rev = at ? at : m->rev;
    if (rev > m->rev)
        r = -EOVERFLOW;
    else if (rev < m->oldest)
        r = -ERANGE;
    else if (rev < m->rev)
        r = collect_undo(m, rev, prefix, plen, after, &u);
    if (r == 0 && limit)
        want = u.n > SIZE_MAX - limit ? 0 : limit + u.n;
    if (r == 0)
        r = collect_current(m, prefix, plen, after, want, &cur);
    CHECK(pthread_mutex_unlock(&m->lock) == 0);
    if (ret_rv)
        *ret_rv = rev;
    if (r == 0) {
        undo_first_per_key(&u);
        r = emit(&cur, &u, limit, fn, userdata);
    }
    objv_release(&cur);
    undov_release(&u);
    return r < 0 ? r : 0;
}

/* In chunks: references to up to CHUNK_EVENTS events under the lock, callbacks unlocked,
 * and the history checked again before the next chunk. */
static int memory_events(struct store *base, uint64_t since, store_event_fn fn, void *userdata)
{
    struct store_memory *m = as_memory(base);
    struct store_event *v = ccalloc(CHUNK_EVENTS, sizeof(*v));
    uint64_t until = 0;
    bool first = true;
    int r = 0;

    if (!v)
        return -ENOMEM;
    for (;;) {
        size_t n = 0;

        CHECK(pthread_mutex_lock(&m->lock) == 0);
        if (first) {
            until = m->rev;
            first = false;
        }
        if (since < m->oldest) {
            r = -ERANGE;
        } else if (since < until) {
            for (uint64_t rv = since + 1; rv <= until && n < CHUNK_EVENTS; rv++, n++) {
                hist_event(hist_at(m, rv), rv, &v[n]);
                (void)store_obj_ref(v[n].obj);
                (void)store_obj_ref(v[n].prev_obj);
            }
        }
        CHECK(pthread_mutex_unlock(&m->lock) == 0);
        for (size_t i = 0; i < n && r == 0; i++) {
            since = v[i].rv;
            r = fn(&v[i], userdata);
        }
        for (size_t i = 0; i < n; i++) {
            store_obj_unref(v[i].obj);
            store_obj_unref(v[i].prev_obj);
        }
        if (r != 0 || n == 0 || since >= until)
            break;
    }
    free(v);
    return r < 0 ? r : 0;
}

static void memory_set_observer(struct store *base, store_event_fn fn, void *userdata)
{
    struct store_memory *m = as_memory(base);

    CHECK(pthread_mutex_lock(&m->lock) == 0);
    m->observer = fn;
    m->observer_data = userdata;
    CHECK(pthread_mutex_unlock(&m->lock) == 0);
}

void store_memory_set_listener(struct store *s, store_event_fn fn, void *userdata)
{
    struct store_memory *m = as_memory(s);

    CHECK(s->ops == &memory_ops);
    CHECK(pthread_mutex_lock(&m->lock) == 0);
    m->listener = fn;
    m->listener_data = userdata;
    CHECK(pthread_mutex_unlock(&m->lock) == 0);
}

static const struct store_ops memory_ops = {
    .close = memory_close,
    .revision = memory_revision,
    .oldest = memory_oldest,
    .get = memory_get,
    .write = memory_write,
    .list_at = memory_list_at,
    .events = memory_events,
    .set_observer = memory_set_observer,
};
