/*
 * The storage interface (see store.h): dispatch to the backend, and the shared object type.
 * The splice point is found once, when an object's bytes enter memory, so serving the object to
 * a list or to every watcher is a copy around it rather than a parse and a print.
 */
#include "apiserver/store.h"

#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "codec/codec.h"

size_t store_splice_point(const char *value, size_t len, bool *ret_comma)
{
    size_t s, e;

    if (json_member_span(value, len, "apiVersion", &s, &e) < 0 ||
        json_member_span(value, len, "kind", &s, &e) < 0 ||
        json_member_span(value, len, "metadata", &s, &e) < 0 || value[s] != '{' ||
        value[e - 1] != '}')
        return 0;
    *ret_comma = e - s > 2;
    return e - 1;
}

struct store_obj *store_obj_new(const char *key, uint64_t rv, const char *value, size_t len)
{
    size_t klen = strlen(key);
    struct store_obj *o;
    char *p;

    if (len > STORE_MAX_VALUE || klen > STORE_MAX_KEY)
        return NULL;
    o = cmalloc(sizeof(*o) + klen + 1 + len + 1);
    if (!o)
        return NULL;
    p = (char *)(o + 1);
    memcpy(p, key, klen + 1);
    o->key = p;
    p += klen + 1;
    if (len)
        memcpy(p, value, len);
    p[len] = '\0';
    o->value = p;
    o->len = len;
    o->rv = rv;
    o->splice_comma = false;
    o->splice_at = store_splice_point(p, len, &o->splice_comma);
    atomic_init(&o->refs, 1);
    return o;
}

struct store_obj *store_obj_ref(struct store_obj *o)
{
    if (o)
        atomic_fetch_add_explicit(&o->refs, 1, memory_order_relaxed);
    return o;
}

struct store_obj *store_obj_unref(struct store_obj *o)
{
    if (o && atomic_fetch_sub_explicit(&o->refs, 1, memory_order_acq_rel) == 1)
        free(o);
    return NULL;
}

void store_item_set(struct store_item *ret, struct store_obj *o)
{
    *ret = (struct store_item){o->key, o->rv, o->value, o->len, store_obj_ref(o)};
}

void store_item_release(struct store_item *it)
{
    if (!it)
        return;
    store_obj_unref(it->obj);
    *it = (struct store_item){0};
}

int store_check_key(const char *key)
{
    size_t n = 0;

    if (!key || !*key)
        return -EINVAL;
    for (const char *p = key; *p; p++, n++)
        if (*p < 0x21 || *p > 0x7e || n >= STORE_MAX_KEY)
            return -EINVAL;
    return 0;
}

void store_close(struct store *s)
{
    if (s)
        s->ops->close(s);
}

uint64_t store_revision(struct store *s)
{
    return s->ops->revision(s);
}

uint64_t store_oldest(struct store *s)
{
    return s->ops->oldest(s);
}

int store_get(struct store *s, const char *key, struct store_item *ret)
{
    int r = store_check_key(key);
    return r < 0 ? r : s->ops->get(s, key, ret);
}

static int write_op(struct store *s, enum store_write_op op, const char *key, const char *value,
                    size_t len, uint64_t expect_rv, struct store_item *ret_old, uint64_t *ret_rv)
{
    int r = store_check_key(key);

    if (r < 0)
        return r;
    if (len > STORE_MAX_VALUE)
        return -E2BIG;
    return s->ops->write(s, op, key, value, len, expect_rv, ret_old, ret_rv);
}

int store_create(struct store *s, const char *key, const char *value, size_t len, uint64_t *ret_rv)
{
    return write_op(s, STORE_OP_CREATE, key, value, len, 0, NULL, ret_rv);
}

int store_update(struct store *s, const char *key, const char *value, size_t len,
                 uint64_t expect_rv, uint64_t *ret_rv)
{
    return write_op(s, STORE_OP_UPDATE, key, value, len, expect_rv, NULL, ret_rv);
}

int store_delete(struct store *s, const char *key, uint64_t expect_rv, struct store_item *ret_old,
                 uint64_t *ret_rv)
{
    return write_op(s, STORE_OP_DELETE, key, NULL, 0, expect_rv, ret_old, ret_rv);
}

int store_list_at(struct store *s, const char *prefix, const char *after, uint64_t at, size_t limit,
                  store_item_fn fn, void *userdata, uint64_t *ret_rv)
{
    if (!prefix || store_check_key(prefix) < 0 || (after && store_check_key(after) < 0))
        return -EINVAL;
    return s->ops->list_at(s, prefix, after, at, limit, fn, userdata, ret_rv);
}

int store_list(struct store *s, const char *prefix, const char *after, size_t limit,
               store_item_fn fn, void *userdata, uint64_t *ret_rv)
{
    return store_list_at(s, prefix, after, 0, limit, fn, userdata, ret_rv);
}

int store_events(struct store *s, uint64_t since, store_event_fn fn, void *userdata)
{
    return s->ops->events(s, since, fn, userdata);
}

void store_set_observer(struct store *s, store_event_fn fn, void *userdata)
{
    s->ops->set_observer(s, fn, userdata);
}
