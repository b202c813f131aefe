/*
 * The reservation cache (see rcache.h).
 */
#include "sched/reservation/rcache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/hmap.h"
#include "sched/reservation/owners.h"
#include "sched/reservation/reserve_pod.h"

struct owner {
    struct sched_res req;
};

struct entry {
    char *uid;
    cJSON *obj;           /* the HOLDING Reservation; NULL while only owners name it */
    struct sched_resv *r; /* decoded obj */
    struct sched_res reserved;
    struct sched_res allocated;
    struct hmap owners; /* pod uid -> struct owner * */
    int64_t order;
};

struct sched_rcache {
    pthread_mutex_t lock;
    struct hmap entries; /* uid -> struct entry * */
    size_t nholding;     /* entries with obj */
    void (*changed)(void *ud, struct sched_pod *reserve_pod);
    void *ud;
};

struct sched_rcache *sched_rcache_new(void (*changed)(void *ud, struct sched_pod *reserve_pod),
                                      void *ud)
{
    struct sched_rcache *c = xcalloc(1, sizeof(*c));

    pthread_mutex_init(&c->lock, NULL);
    hmap_init(&c->entries);
    c->changed = changed;
    c->ud = ud;
    return c;
}

static void entry_free(struct entry *e)
{
    struct hmap_entry *he;
    size_t it;

    for (he = hmap_first(&e->owners, &it); he; he = hmap_next(&e->owners, he, &it))
        free(he->value);
    hmap_release(&e->owners);
    cJSON_Delete(e->obj);
    sched_resv_unref(e->r);
    free(e->uid);
    free(e);
}

void sched_rcache_free(struct sched_rcache *c)
{
    struct hmap_entry *he;
    size_t it;

    if (!c)
        return;
    for (he = hmap_first(&c->entries, &it); he; he = hmap_next(&c->entries, he, &it))
        entry_free(he->value);
    hmap_release(&c->entries);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static struct entry *entry_get(struct sched_rcache *c, const char *uid)
{
    struct entry *e = hmap_get(&c->entries, uid);

    if (!e) {
        e = xcalloc(1, sizeof(*e));
        e->uid = xstrdup(uid);
        hmap_init(&e->owners);
        (void)hmap_put(&c->entries, e->uid, e);
    }
    return e;
}

/* Drops an entry nothing refers to any more. */
static void entry_gc(struct sched_rcache *c, struct entry *e)
{
    if (e->obj || e->owners.n)
        return;
    (void)hmap_del(&c->entries, e->uid);
    entry_free(e);
}

/* The reserve pod of a HOLDING entry, requesting what is left. Under the lock. */
static struct sched_pod *remaining_pod(const struct entry *e)
{
    const char *why = NULL;
    cJSON *o = sched_reserve_pod(e->obj, &why), *ctr, *req;
    struct sched_pod *p = NULL;
    char buf[64];

    if (!o)
        return NULL;
    ctr = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "spec"), "containers"),
        0);
    req = cJSON_CreateObject();
    for (int i = 0; i < sched_res_count(); i++) {
        int64_t left = e->reserved.v[i] - e->allocated.v[i];
        if (e->reserved.v[i] <= 0)
            continue;
        if (left < 0)
            left = 0;
        sched_res_quantity_str(i, left, buf);
        cJSON_AddStringToObject(req, sched_res_name(i), buf);
    }
    cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(ctr, "resources"),
                                           "requests", req);
    if (sched_pod_decode(o, &p) < 0)
        p = NULL;
    cJSON_Delete(o);
    return p;
}

static int64_t order_of(const cJSON *obj)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"),
                                         "labels"),
        "scheduling.koordinator.sh/reservation-order"));
    int64_t n;

    return v && parse_i64(v, &n) == 0 && n > 0 ? n : 0;
}

struct sched_pod *sched_rcache_set(struct sched_rcache *c, const cJSON *obj)
{
    const char *why = NULL;
    cJSON *po = sched_reserve_pod(obj, &why), *dup;
    struct sched_pod *full = NULL, *left;
    struct sched_resv *r = NULL;
    struct entry *e;

    if (!po)
        return NULL;
    if (sched_pod_decode(po, &full) < 0 || sched_resv_decode(obj, &r) < 0 ||
        !(dup = cJSON_Duplicate(obj, true))) {
        cJSON_Delete(po);
        sched_pod_unref(full);
        sched_resv_unref(r);
        return NULL;
    }
    cJSON_Delete(po);
    pthread_mutex_lock(&c->lock);
    e = entry_get(c, full->uid);
    if (!e->obj)
        c->nholding++;
    cJSON_Delete(e->obj);
    e->obj = dup;
    sched_resv_unref(e->r);
    e->r = r;
    e->reserved = full->req;
    e->order = order_of(obj);
    left = remaining_pod(e);
    if (left) /* under the lock, in order with the owners' changes */
        c->changed(c->ud, sched_pod_ref(left));
    pthread_mutex_unlock(&c->lock);
    sched_pod_unref(full);
    return left;
}

void sched_rcache_remove(struct sched_rcache *c, const char *uid)
{
    struct entry *e;

    pthread_mutex_lock(&c->lock);
    if ((e = hmap_get(&c->entries, uid)) && e->obj) {
        c->nholding--;
        cJSON_Delete(e->obj);
        e->obj = NULL;
        e->r = sched_resv_unref(e->r);
        memset(&e->reserved, 0, sizeof(e->reserved));
        entry_gc(c, e);
    }
    pthread_mutex_unlock(&c->lock);
}

/* Sums the owners into allocated. Under the lock. */
static void recount(struct entry *e)
{
    struct hmap_entry *he;
    size_t it;

    memset(&e->allocated, 0, sizeof(e->allocated));
    for (he = hmap_first(&e->owners, &it); he; he = hmap_next(&e->owners, he, &it)) {
        const struct owner *o = he->value;
        for (int i = 0; i < sched_res_count(); i++)
            e->allocated.v[i] += o->req.v[i];
    }
}

void sched_rcache_add_owner(struct sched_rcache *c, const char *resv_uid, const char *pod_uid,
                            const struct sched_res *req)
{
    struct sched_pod *p = NULL;
    struct owner *o;
    struct entry *e;

    pthread_mutex_lock(&c->lock);
    e = entry_get(c, resv_uid);
    if (!hmap_get(&e->owners, pod_uid)) {
        o = xcalloc(1, sizeof(*o));
        o->req = *req;
        (void)hmap_put(&e->owners, pod_uid, o);
        recount(e);
        if (e->obj)
            p = remaining_pod(e);
    }
    /* Under the lock: two changes of one Reservation reach the cache in their order. */
    if (p)
        c->changed(c->ud, p);
    pthread_mutex_unlock(&c->lock);
}

void sched_rcache_remove_owner(struct sched_rcache *c, const char *resv_uid, const char *pod_uid)
{
    struct sched_pod *p = NULL;
    struct entry *e;
    struct owner *o;

    pthread_mutex_lock(&c->lock);
    if ((e = hmap_get(&c->entries, resv_uid)) && (o = hmap_del(&e->owners, pod_uid))) {
        free(o);
        recount(e);
        if (e->obj)
            p = remaining_pod(e);
        entry_gc(c, e);
    }
    if (p)
        c->changed(c->ud, p);
    pthread_mutex_unlock(&c->lock);
}

size_t sched_rcache_views(struct sched_rcache *c,
                          bool (*keep)(const struct sched_resv *r, const void *ud), const void *ud,
                          struct sched_rcache_view **ret)
{
    struct sched_rcache_view *v = NULL;
    struct hmap_entry *he;
    size_t it, n = 0;

    pthread_mutex_lock(&c->lock);
    if (c->nholding)
        v = xcalloc(c->nholding, sizeof(*v));
    for (he = hmap_first(&c->entries, &it); he; he = hmap_next(&c->entries, he, &it)) {
        const struct entry *e = he->value;
        if (!e->obj || n == c->nholding || (keep && !keep(e->r, ud)))
            continue;
        v[n].r = sched_resv_ref(e->r);
        v[n].reserved = e->reserved;
        v[n].allocated = e->allocated;
        v[n].nowners = e->owners.n;
        v[n].order = e->order;
        n++;
    }
    pthread_mutex_unlock(&c->lock);
    if (!n) {
        free(v);
        v = NULL;
    }
    *ret = v;
    return n;
}

void sched_rcache_views_free(struct sched_rcache_view *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sched_resv_unref(v[i].r);
    free(v);
}

size_t sched_rcache_count(struct sched_rcache *c)
{
    size_t n;

    pthread_mutex_lock(&c->lock);
    n = c->nholding;
    pthread_mutex_unlock(&c->lock);
    return n;
}
