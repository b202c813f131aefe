/* The scheduler cache of cache.h. */
#include "sched/cache/cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/hmap.h"
#include "sched/framework/framework.h"

/* A node's entry: its NodeInfo in the recency list (head = most recently changed). */
struct node_entry {
    struct sched_node_info *ni;
    struct node_entry *prev, *next;
};

struct pod_state {
    struct sched_pod *pod;
    char *node;
    size_t pos; /* index in its NodeInfo's pods (removal without a search) */
    bool assumed;
    bool binding_finished;
    double deadline;
};

struct sched_cache {
    pthread_mutex_t lock;
    double ttl;
    uint64_t generation;
    struct hmap nodes; /* name -> struct node_entry */
    struct node_entry *head;
    struct hmap pods; /* uid -> struct pod_state */
    size_t assumed;
};

struct sched_cache *sched_cache_new(double ttl_s)
{
    struct sched_cache *c = xcalloc(1, sizeof(*c));

    pthread_mutex_init(&c->lock, NULL);
    c->ttl = ttl_s > 0 ? ttl_s : 30;
    hmap_init(&c->nodes);
    hmap_init(&c->pods);
    return c;
}

static void pod_state_free(struct pod_state *ps)
{
    sched_pod_unref(ps->pod);
    free(ps->node);
    free(ps);
}

void sched_cache_free(struct sched_cache *c)
{
    struct hmap_entry *e;
    size_t it;

    if (!c)
        return;
    for (e = hmap_first(&c->pods, &it); e; e = hmap_next(&c->pods, e, &it))
        pod_state_free(e->value);
    hmap_release(&c->pods);
    for (e = hmap_first(&c->nodes, &it); e; e = hmap_next(&c->nodes, e, &it)) {
        struct node_entry *ne = e->value;
        sched_node_info_free(ne->ni);
        free(ne);
    }
    hmap_release(&c->nodes);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static void unlink_entry(struct sched_cache *c, struct node_entry *ne)
{
    if (ne->prev)
        ne->prev->next = ne->next;
    else if (c->head == ne)
        c->head = ne->next;
    if (ne->next)
        ne->next->prev = ne->prev;
    ne->prev = ne->next = NULL;
}

/* The NodeInfo changed: new generation, to the head of the list. */
static void touch(struct sched_cache *c, struct node_entry *ne)
{
    ne->ni->generation = ++c->generation;
    if (c->head == ne)
        return;
    unlink_entry(c, ne);
    ne->next = c->head;
    if (c->head)
        c->head->prev = ne;
    c->head = ne;
}

static struct node_entry *entry(struct sched_cache *c, const char *name)
{
    struct node_entry *ne = hmap_get(&c->nodes, name);

    if (ne)
        return ne;
    ne = xcalloc(1, sizeof(*ne));
    ne->ni = sched_node_info_new(name);
    hmap_put(&c->nodes, name, ne);
    return ne;
}

/* Drops an entry with neither a Node nor pods. */
static void maybe_drop(struct sched_cache *c, struct node_entry *ne)
{
    if (ne->ni->node || ne->ni->npods)
        return;
    unlink_entry(c, ne);
    hmap_del(&c->nodes, ne->ni->name);
    sched_node_info_free(ne->ni);
    free(ne);
    /* The snapshot notices through the generation (removals leave no entry to copy). */
    c->generation++;
}

void sched_cache_add_node(struct sched_cache *c, struct sched_node *n)
{
    struct node_entry *ne;

    pthread_mutex_lock(&c->lock);
    ne = entry(c, n->name);
    sched_node_info_set_node(ne->ni, n);
    touch(c, ne);
    pthread_mutex_unlock(&c->lock);
}

void sched_cache_remove_node(struct sched_cache *c, const char *name)
{
    struct node_entry *ne;

    pthread_mutex_lock(&c->lock);
    ne = hmap_get(&c->nodes, name);
    if (ne) {
        sched_node_info_set_node(ne->ni, NULL);
        touch(c, ne);
        maybe_drop(c, ne);
    }
    pthread_mutex_unlock(&c->lock);
}

static void place(struct sched_cache *c, struct pod_state *ps, const char *node)
{
    struct node_entry *ne = entry(c, node);

    free(ps->node);
    ps->node = xstrdup(node);
    sched_node_info_add_pod(ne->ni, ps->pod);
    ps->pos = ne->ni->npods - 1;
    touch(c, ne);
}

static void unplace(struct sched_cache *c, struct pod_state *ps)
{
    struct node_entry *ne = ps->node ? hmap_get(&c->nodes, ps->node) : NULL;

    struct sched_pod *moved;

    if (!ne)
        return;
    CHECK(ps->pos < ne->ni->npods && sched_node_info_pod(ne->ni, ps->pos) == ps->pod);
    moved = sched_node_info_remove_pod_at(ne->ni, ps->pos);
    if (moved) {
        struct pod_state *m = hmap_get(&c->pods, moved->uid);
        CHECK(m);
        m->pos = ps->pos;
    }
    touch(c, ne);
    maybe_drop(c, ne);
}

void sched_cache_add_pod(struct sched_cache *c, struct sched_pod *p)
{
    struct pod_state *ps;

    pthread_mutex_lock(&c->lock);
    ps = hmap_get(&c->pods, p->uid);
    if (ps) {
        unplace(c, ps);
        if (ps->assumed) {
            ps->assumed = false;
            c->assumed--;
        }
        sched_pod_unref(ps->pod);
    } else {
        ps = xcalloc(1, sizeof(*ps));
        hmap_put(&c->pods, p->uid, ps);
    }
    ps->pod = sched_pod_ref(p);
    place(c, ps, p->node_name);
    pthread_mutex_unlock(&c->lock);
}

int sched_cache_remove_pod(struct sched_cache *c, const struct sched_pod *p)
{
    struct pod_state *ps;

    pthread_mutex_lock(&c->lock);
    ps = hmap_del(&c->pods, p->uid);
    if (ps) {
        unplace(c, ps);
        if (ps->assumed)
            c->assumed--;
        pod_state_free(ps);
    }
    pthread_mutex_unlock(&c->lock);
    return ps ? 0 : -ENOENT;
}

int sched_cache_assume(struct sched_cache *c, struct sched_pod *p, const char *node)
{
    struct pod_state *ps;
    int r = 0;

    pthread_mutex_lock(&c->lock);
    if (hmap_get(&c->pods, p->uid)) {
        r = -EEXIST;
        goto out;
    }
    ps = xcalloc(1, sizeof(*ps));
    ps->pod = sched_pod_ref(p);
    ps->assumed = true;
    hmap_put(&c->pods, p->uid, ps);
    place(c, ps, node);
    c->assumed++;
out:
    pthread_mutex_unlock(&c->lock);
    return r;
}

void sched_cache_finish_binding(struct sched_cache *c, const char *uid, double now)
{
    struct pod_state *ps;

    pthread_mutex_lock(&c->lock);
    ps = hmap_get(&c->pods, uid);
    if (ps && ps->assumed) {
        ps->binding_finished = true;
        ps->deadline = now + c->ttl;
    }
    pthread_mutex_unlock(&c->lock);
}

int sched_cache_forget(struct sched_cache *c, const char *uid)
{
    struct pod_state *ps;
    int r = -ENOENT;

    pthread_mutex_lock(&c->lock);
    ps = hmap_get(&c->pods, uid);
    if (ps && ps->assumed) {
        hmap_del(&c->pods, uid);
        unplace(c, ps);
        c->assumed--;
        pod_state_free(ps);
        r = 0;
    }
    pthread_mutex_unlock(&c->lock);
    return r;
}

bool sched_cache_is_assumed(struct sched_cache *c, const char *uid)
{
    struct pod_state *ps;
    bool r;

    pthread_mutex_lock(&c->lock);
    ps = hmap_get(&c->pods, uid);
    r = ps && ps->assumed;
    pthread_mutex_unlock(&c->lock);
    return r;
}

bool sched_cache_has_pod(struct sched_cache *c, const char *uid)
{
    bool r;

    pthread_mutex_lock(&c->lock);
    r = hmap_get(&c->pods, uid) != NULL;
    pthread_mutex_unlock(&c->lock);
    return r;
}

size_t sched_cache_cleanup(struct sched_cache *c, double now)
{
    struct hmap_entry *e;
    size_t it, n = 0, k = 0;
    char **expired = NULL;

    pthread_mutex_lock(&c->lock);
    for (e = hmap_first(&c->pods, &it); e; e = hmap_next(&c->pods, e, &it)) {
        struct pod_state *ps = e->value;
        if (ps->assumed && ps->binding_finished && now >= ps->deadline) {
            expired = xrealloc(expired, (n + 1) * sizeof(*expired));
            expired[n++] = xstrdup(e->key);
        }
    }
    for (size_t i = 0; i < n; i++) {
        struct pod_state *ps = hmap_del(&c->pods, expired[i]);
        unplace(c, ps);
        c->assumed--;
        pod_state_free(ps);
        free(expired[i]);
        k++;
    }
    pthread_mutex_unlock(&c->lock);
    free(expired);
    return k;
}

/* ---- snapshot ---- */

/* The zone of a node, as node_tree.go's utilnode.GetZoneKey: region and zone labels. */
static void zone_key(const struct sched_node *n, char *buf, size_t size)
{
    const char *region = sched_label(n->labels, "topology.kubernetes.io/region");
    const char *zone = sched_label(n->labels, "topology.kubernetes.io/zone");

    if (!region)
        region = sched_label(n->labels, "failure-domain.beta.kubernetes.io/region");
    if (!zone)
        zone = sched_label(n->labels, "failure-domain.beta.kubernetes.io/zone");
    (void)snprintf(buf, size, "%s:\x1f:%s", region ? region : "", zone ? zone : "");
}

struct zone {
    char key[512];
    struct sched_node_info **v;
    size_t n, cap;
};

static int cmp_ni_name(const void *a, const void *b)
{
    return strcmp((*(struct sched_node_info *const *)a)->name,
                  (*(struct sched_node_info *const *)b)->name);
}

/* The node list in node-tree order: zones in order of first appearance (by node name, for a
 * stable order), nodes interleaved round-robin across zones. */
static void rebuild_order(struct sched_snapshot *s)
{
    struct sched_node_info **all = NULL;
    struct zone *zones = NULL;
    size_t nall = 0, nzones = 0, k = 0;
    struct hmap_entry *e;
    size_t it;

    for (e = hmap_first(s->by_name, &it); e; e = hmap_next(s->by_name, e, &it)) {
        struct sched_node_info *ni = e->value;
        if (!ni->node)
            continue;
        all = xrealloc(all, (nall + 1) * sizeof(struct sched_node_info *));
        all[nall++] = ni;
    }
    if (nall > 1)
        qsort(all, nall, sizeof(struct sched_node_info *), cmp_ni_name);
    for (size_t i = 0; i < nall; i++) {
        char key[512];
        size_t z;
        zone_key(all[i]->node, key, sizeof(key));
        for (z = 0; z < nzones && strcmp(zones[z].key, key); z++)
            ;
        if (z == nzones) {
            zones = xrealloc(zones, (nzones + 1) * sizeof(*zones));
            memset(&zones[z], 0, sizeof(zones[z]));
            (void)snprintf(zones[z].key, sizeof(zones[z].key), "%s", key);
            nzones++;
        }
        if (zones[z].n == zones[z].cap) {
            zones[z].cap = zones[z].cap ? 2 * zones[z].cap : 16;
            zones[z].v = xrealloc(zones[z].v, zones[z].cap * sizeof(struct sched_node_info *));
        }
        zones[z].v[zones[z].n++] = all[i];
    }
    free(s->nodes);
    s->nodes = xcalloc(nall ? nall : 1, sizeof(struct sched_node_info *));
    for (size_t round = 0; k < nall; round++)
        for (size_t z = 0; z < nzones; z++)
            if (round < zones[z].n)
                s->nodes[k++] = zones[z].v[round];
    s->nnodes = nall;
    for (size_t z = 0; z < nzones; z++)
        free(zones[z].v);
    free(zones);
    free(all);
}

static void rebuild_affinity_lists(struct sched_snapshot *s)
{
    size_t a = 0, r = 0;

    free(s->with_affinity);
    free(s->with_required_anti);
    s->with_affinity = xcalloc(s->nnodes ? s->nnodes : 1, sizeof(struct sched_node_info *));
    s->with_required_anti = xcalloc(s->nnodes ? s->nnodes : 1, sizeof(struct sched_node_info *));
    for (size_t i = 0; i < s->nnodes; i++) {
        if (s->nodes[i]->n_with_affinity)
            s->with_affinity[a++] = s->nodes[i];
        if (s->nodes[i]->n_with_required_anti)
            s->with_required_anti[r++] = s->nodes[i];
    }
    s->nwith_affinity = a;
    s->nwith_required_anti = r;
}

size_t sched_cache_update_snapshot(struct sched_cache *c, struct sched_snapshot *s)
{
    bool reorder = false, relist = false;
    size_t copied = 0;
    struct hmap_entry *e;
    size_t it;

    pthread_mutex_lock(&c->lock);
    if (!s->by_name) {
        s->by_name = xcalloc(1, sizeof(*s->by_name));
        hmap_init(s->by_name);
        reorder = true;
    }
    for (struct node_entry *ne = c->head; ne && ne->ni->generation > s->generation; ne = ne->next) {
        struct sched_node_info *old = hmap_get(s->by_name, ne->ni->name);
        if (!old) {
            old = sched_node_info_clone(ne->ni);
            hmap_put(s->by_name, ne->ni->name, old);
            reorder = true;
            relist |= old->n_with_affinity || old->n_with_required_anti;
        } else {
            /* In place: the order and the affinity lists keep pointing at it. */
            reorder |= !old->node != !ne->ni->node;
            relist |= !old->n_with_affinity != !ne->ni->n_with_affinity ||
                      !old->n_with_required_anti != !ne->ni->n_with_required_anti;
            sched_node_info_assign(old, ne->ni);
        }
        copied++;
    }
    /* Entries the cache dropped. */
    if (s->by_name->n != c->nodes.n) {
        char **gone = NULL;
        size_t ngone = 0;
        for (e = hmap_first(s->by_name, &it); e; e = hmap_next(s->by_name, e, &it)) {
            if (hmap_get(&c->nodes, e->key))
                continue;
            gone = xrealloc(gone, (ngone + 1) * sizeof(*gone));
            gone[ngone++] = xstrdup(e->key);
        }
        for (size_t i = 0; i < ngone; i++) {
            sched_node_info_free(hmap_del(s->by_name, gone[i]));
            free(gone[i]);
        }
        free(gone);
        reorder = true;
    }
    s->generation = c->generation;
    pthread_mutex_unlock(&c->lock);
    if (reorder)
        rebuild_order(s);
    if (reorder || relist)
        rebuild_affinity_lists(s);
    return copied;
}

void sched_snapshot_release(struct sched_snapshot *s)
{
    struct hmap_entry *e;
    size_t it;

    if (s->by_name) {
        for (e = hmap_first(s->by_name, &it); e; e = hmap_next(s->by_name, e, &it))
            sched_node_info_free(e->value);
        hmap_release(s->by_name);
        free(s->by_name);
    }
    free(s->nodes);
    free(s->with_affinity);
    free(s->with_required_anti);
    memset(s, 0, sizeof(*s));
}

void sched_cache_stats(struct sched_cache *c, struct sched_cache_stats *ret)
{
    pthread_mutex_lock(&c->lock);
    ret->nodes = c->nodes.n;
    ret->pods = c->pods.n;
    ret->assumed = c->assumed;
    pthread_mutex_unlock(&c->lock);
}
