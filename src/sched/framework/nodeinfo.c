/*
 * NodeInfo: a node and the pods the scheduler counts on it, with their requests summed
 * (framework/types.go NodeInfo.AddPodInfo/RemovePod/update). The cache keeps one per node and
 * the snapshot a copy of the changed ones; a cycle only reads them.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/hmap.h"
#include "sched/framework/framework.h"

_Static_assert(offsetof(struct sched_node_info, memo) == SCHED_CACHE_LINE,
               "the NodeInfo's hot fields fill exactly its first cache line");
_Static_assert(offsetof(struct sched_node_info, requested) + 2 * sizeof(int64_t) <=
                   (size_t)2 * SCHED_CACHE_LINE,
               "the plugins' memos, the change counter and the cpu and memory requested share "
               "the second line");

/* ---- plugins' memos ---- */

static _Atomic unsigned memo_slots_used; /* bit i: slot i is claimed */
static _Atomic uint64_t memo_owners = 1; /* the next owner number; 0 is never one */

void sched_node_memo_claim(struct sched_memo_key *k)
{
    unsigned used = atomic_load(&memo_slots_used);

    k->slot = -1;
    k->owner = atomic_fetch_add(&memo_owners, 1);
    for (int i = 0; i < SCHED_NODE_MEMOS; i++) {
        if (used & (1u << i))
            continue;
        if (atomic_compare_exchange_strong(&memo_slots_used, &used, used | (1u << i))) {
            k->slot = i;
            return;
        }
        i = -1; /* used was reloaded: start over */
    }
}

void sched_node_memo_release(struct sched_memo_key *k)
{
    if (!k || k->slot < 0)
        return;
    atomic_fetch_and(&memo_slots_used, ~(1u << k->slot));
    k->slot = -1;
}

void *sched_node_memo_get(const struct sched_node_info *ni, const struct sched_memo_key *k)
{
    const struct sched_node_memo *m;

    if (k->slot < 0)
        return NULL;
    m = &ni->memo[k->slot];
    if (__atomic_load_n(&m->owner, __ATOMIC_ACQUIRE) != k->owner)
        return NULL;
    return __atomic_load_n(&m->p, __ATOMIC_RELAXED);
}

void sched_node_memo_prefetch(const struct sched_node_info *ni)
{
    for (int i = 0; i < SCHED_NODE_MEMOS; i++) {
        const void *p = __atomic_load_n(&ni->memo[i].p, __ATOMIC_RELAXED);
        if (p)
            __builtin_prefetch(p);
    }
}

void sched_node_memo_set(const struct sched_node_info *ni, const struct sched_memo_key *k, void *p)
{
    struct sched_node_memo *m;

    if (k->slot < 0)
        return;
    m = (struct sched_node_memo *)&ni->memo[k->slot];
    __atomic_store_n(&m->p, p, __ATOMIC_RELAXED);
    __atomic_store_n(&m->owner, k->owner, __ATOMIC_RELEASE);
}

/* ---- pod chunks ---- */

static struct sched_pod_chunk *chunk_unref(struct sched_pod_chunk *c)
{
    if (c && atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1) {
        for (unsigned i = 0; i < c->n; i++)
            sched_pod_unref(c->v[i]);
        free(c);
    }
    return NULL;
}

/* Chunk k, made this NodeInfo's own before a change (copied when another copy shares it). */
static struct sched_pod_chunk *own_chunk(struct sched_node_info *ni, size_t k)
{
    struct sched_pod_chunk *c = ni->chunks[k], *copy;

    if (atomic_load_explicit(&c->refs, memory_order_acquire) == 1)
        return c;
    copy = xmalloc(sizeof(*copy));
    atomic_init(&copy->refs, 1);
    copy->n = c->n;
    for (unsigned i = 0; i < c->n; i++)
        copy->v[i] = sched_pod_ref(c->v[i]);
    chunk_unref(c);
    ni->chunks[k] = copy;
    return copy;
}

/* Sets the copies of the node's fields in the NodeInfo's first cache line. */
static void mirror_node(struct sched_node_info *ni)
{
    const struct sched_node *n = ni->node;

    ni->alloc_cpu = n ? n->allocatable.v[SCHED_RES_CPU] : 0;
    ni->alloc_mem = n ? n->allocatable.v[SCHED_RES_MEMORY] : 0;
    ni->allowed_pods = !n ? 0 : n->allowed_pods > INT32_MAX ? INT32_MAX : (int32_t)n->allowed_pods;
    ni->ntaints = !n ? 0 : n->ntaints > UINT16_MAX ? UINT16_MAX : (uint16_t)n->ntaints;
    ni->unschedulable = n && n->unschedulable;
}

struct sched_node_info *sched_node_info_new(const char *name)
{
    struct sched_node_info *ni = xaligned_zalloc(SCHED_CACHE_LINE, sizeof(*ni));

    ni->name = xstrdup(name);
    return ni;
}

void sched_node_info_free(struct sched_node_info *ni)
{
    if (!ni)
        return;
    for (size_t i = 0; i < ni->nchunks; i++)
        chunk_unref(ni->chunks[i]);
    free(ni->chunks);
    free(ni->ports);
    sched_node_unref(ni->node);
    free((char *)ni->name);
    free(ni);
}

struct sched_node_info *sched_node_info_clone(const struct sched_node_info *ni)
{
    struct sched_node_info *c = xaligned_zalloc(SCHED_CACHE_LINE, sizeof(*c));

    *c = *ni;
    c->name = xstrdup(ni->name);
    c->node = ni->node ? sched_node_ref(ni->node) : NULL;
    c->chunks_cap = ni->nchunks;
    c->chunks = ni->nchunks ? xcalloc(ni->nchunks, sizeof(struct sched_pod_chunk *)) : NULL;
    for (size_t i = 0; i < ni->nchunks; i++) {
        c->chunks[i] = ni->chunks[i];
        atomic_fetch_add_explicit(&c->chunks[i]->refs, 1, memory_order_relaxed);
    }
    c->ports_cap = ni->nports;
    c->ports = ni->nports ? xcalloc(ni->nports, sizeof(*c->ports)) : NULL;
    if (ni->nports)
        memcpy(c->ports, ni->ports, ni->nports * sizeof(*c->ports));
    return c;
}

void sched_node_info_assign(struct sched_node_info *dst, const struct sched_node_info *src)
{
    struct sched_node_info *c = sched_node_info_clone(src), old = *dst;

    /* dst takes the copy's contents; the old contents leave with the copy's shell. The
     * plugins' memos name the node, which has not changed: they stay. */
    *dst = *c;
    memcpy(dst->memo, old.memo, sizeof(dst->memo));
    *c = old;
    sched_node_info_free(c);
}

void sched_node_info_set_node(struct sched_node_info *ni, struct sched_node *n)
{
    if (n)
        n = sched_node_ref(n);
    sched_node_unref(ni->node);
    ni->node = n;
    mirror_node(ni);
}

static bool has_affinity(const struct sched_pod *p)
{
    return p->naffinity || p->nanti_affinity || p->npref_affinity || p->npref_anti_affinity;
}

/* Adds (sign 1) or removes (sign -1) a pod's share. */
static void account(struct sched_node_info *ni, const struct sched_pod *p, int sign)
{
    int n = sched_res_count();

    for (int i = 0; i < n; i++)
        ni->requested.v[i] += sign * p->req.v[i];
    ni->nonzero_cpu += sign * p->nonzero_cpu;
    ni->nonzero_mem += sign * p->nonzero_mem;
    if (has_affinity(p))
        ni->n_with_affinity += sign;
    if (p->nanti_affinity)
        ni->n_with_required_anti += sign;
}

void sched_node_info_add_pod(struct sched_node_info *ni, struct sched_pod *p)
{
    struct sched_pod_chunk *last = ni->nchunks ? ni->chunks[ni->nchunks - 1] : NULL;

    if (!last || last->n == SCHED_POD_CHUNK) {
        if (ni->nchunks == ni->chunks_cap) {
            ni->chunks_cap = ni->chunks_cap ? 2 * ni->chunks_cap : 4;
            ni->chunks = xrealloc(ni->chunks, ni->chunks_cap * sizeof(struct sched_pod_chunk *));
        }
        last = xmalloc(sizeof(*last));
        atomic_init(&last->refs, 1);
        last->n = 0;
        ni->chunks[ni->nchunks++] = last;
    } else {
        last = own_chunk(ni, ni->nchunks - 1);
    }
    last->v[last->n++] = sched_pod_ref(p);
    ni->npods++;
    account(ni, p, 1);
    for (size_t i = 0; i < p->nports; i++) {
        struct sched_port_use *u;
        if (ni->nports == ni->ports_cap) {
            ni->ports_cap = ni->ports_cap ? 2 * ni->ports_cap : 4;
            ni->ports = xrealloc(ni->ports, ni->ports_cap * sizeof(*ni->ports));
        }
        u = &ni->ports[ni->nports++];
        memcpy(u->ip, p->ports[i].ip, sizeof(u->ip));
        u->port = p->ports[i].port;
        u->protocol = p->ports[i].protocol;
    }
}

/* Drops one use of each of the pod's ports (another pod may use the same one). */
static void release_ports(struct sched_node_info *ni, const struct sched_pod *p)
{
    for (size_t i = 0; i < p->nports; i++) {
        for (size_t j = 0; j < ni->nports; j++) {
            struct sched_port_use *u = &ni->ports[j];
            if (u->port == p->ports[i].port && u->protocol == p->ports[i].protocol &&
                !strcmp(u->ip, p->ports[i].ip)) {
                ni->ports[j] = ni->ports[--ni->nports];
                break;
            }
        }
    }
}

struct sched_pod *sched_node_info_remove_pod_at(struct sched_node_info *ni, size_t i)
{
    struct sched_pod_chunk *c, *last;
    struct sched_pod *q;
    size_t k = i / SCHED_POD_CHUNK;

    CHECK(i < ni->npods);
    c = own_chunk(ni, k);
    last = own_chunk(ni, ni->nchunks - 1);
    q = c->v[i % SCHED_POD_CHUNK];
    /* The last pod fills the hole; the order of pods on a node carries no meaning (upstream
     * swaps with the last too). */
    c->v[i % SCHED_POD_CHUNK] = last->v[last->n - 1];
    last->n--;
    ni->npods--;
    if (!last->n) {
        chunk_unref(last);
        ni->nchunks--;
    }
    account(ni, q, -1);
    release_ports(ni, q);
    sched_pod_unref(q);
    return i < ni->npods ? sched_node_info_pod(ni, i) : NULL;
}

int sched_node_info_remove_pod(struct sched_node_info *ni, const struct sched_pod *p)
{
    for (size_t i = 0; i < ni->npods; i++) {
        if (strcmp(sched_node_info_pod(ni, i)->uid, p->uid))
            continue;
        (void)sched_node_info_remove_pod_at(ni, i);
        return 0;
    }
    return -ENOENT;
}

struct sched_node_info *sched_snapshot_get(const struct sched_snapshot *s, const char *name)
{
    return s->by_name ? hmap_get(s->by_name, name) : NULL;
}

void sched_pods_free(struct sched_pod **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sched_pod_unref(v[i]);
    free(v);
}
