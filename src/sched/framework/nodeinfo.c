/*
 * NodeInfo: a node and the pods the scheduler counts on it, with their requests summed
 * (framework/types.go NodeInfo.AddPodInfo/RemovePod/update). The cache keeps one per node and
 * the snapshot a copy of the changed ones; a cycle only reads them.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/hmap.h"
#include "sched/framework/framework.h"

struct sched_node_info *sched_node_info_new(const char *name)
{
    struct sched_node_info *ni = xcalloc(1, sizeof(*ni));

    ni->name = xstrdup(name);
    return ni;
}

void sched_node_info_free(struct sched_node_info *ni)
{
    if (!ni)
        return;
    for (size_t i = 0; i < ni->npods; i++)
        sched_pod_unref(ni->pods[i]);
    free(ni->pods);
    free(ni->ports);
    sched_node_unref(ni->node);
    free((char *)ni->name);
    free(ni);
}

struct sched_node_info *sched_node_info_clone(const struct sched_node_info *ni)
{
    struct sched_node_info *c = xmalloc(sizeof(*c));

    *c = *ni;
    c->name = xstrdup(ni->name);
    c->node = ni->node ? sched_node_ref(ni->node) : NULL;
    c->cap = ni->npods;
    c->pods = ni->npods ? xcalloc(ni->npods, sizeof(struct sched_pod *)) : NULL;
    for (size_t i = 0; i < ni->npods; i++)
        c->pods[i] = sched_pod_ref(ni->pods[i]);
    c->ports_cap = ni->nports;
    c->ports = ni->nports ? xcalloc(ni->nports, sizeof(*c->ports)) : NULL;
    if (ni->nports)
        memcpy(c->ports, ni->ports, ni->nports * sizeof(*c->ports));
    return c;
}

void sched_node_info_assign(struct sched_node_info *dst, const struct sched_node_info *src)
{
    struct sched_node_info *c = sched_node_info_clone(src), old = *dst;

    /* dst takes the copy's contents; the old contents leave with the copy's shell. */
    *dst = *c;
    *c = old;
    sched_node_info_free(c);
}

void sched_node_info_set_node(struct sched_node_info *ni, struct sched_node *n)
{
    if (n)
        n = sched_node_ref(n);
    sched_node_unref(ni->node);
    ni->node = n;
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
    if (ni->npods == ni->cap) {
        ni->cap = ni->cap ? 2 * ni->cap : 8;
        ni->pods = xrealloc(ni->pods, ni->cap * sizeof(struct sched_pod *));
    }
    ni->pods[ni->npods++] = sched_pod_ref(p);
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

int sched_node_info_remove_pod(struct sched_node_info *ni, const struct sched_pod *p)
{
    for (size_t i = 0; i < ni->npods; i++) {
        struct sched_pod *q = ni->pods[i];
        if (strcmp(q->uid, p->uid))
            continue;
        /* Upstream swaps with the last; the order of pods on a node carries no meaning. */
        ni->pods[i] = ni->pods[--ni->npods];
        account(ni, q, -1);
        release_ports(ni, q);
        sched_pod_unref(q);
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
