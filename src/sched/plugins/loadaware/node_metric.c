/*
 * LoadAwareScheduling's NodeMetric feed (reference koordlet-and-scheduler.md 2.5 for the
 * object, 5.2 "Per-node cache"; seed 001 for the API): each NodeMetric is decoded once, on the
 * informer's thread, into the few vectors Filter and Score read (node usage, aggregated usages,
 * system usage, the reported pods' usage), and swapped into the plugin's map under the write
 * lock. Filter and Score never parse JSON.
 *
 * Where NodeMetrics come from is decided once, when the plugin starts, by discovery: koord
 * manager's metrics.koordinator.sh API (served through the API server's aggregation) when the
 * API server lists that group-version, else the slo.koordinator.sh CRD upstream's koordlet
 * writes, else none (every node then counts as without NodeMetric, which the filter passes).
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/duration.h"
#include "api/quantity.h"
#include "api/rfc3339.h"
#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "sched/plugins/loadaware/load_aware.h"

#define COMP "loadaware"

/* upstream's CRD, for clusters running upstream's manager and koordlet */
static const struct kube_resource slo_nodemetrics = {"slo.koordinator.sh", "v1alpha1",
                                                     "nodemetrics", "NodeMetric", false};

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *get_str(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);

    return cJSON_IsString(v) ? v->valuestring : "";
}

/* A ResourceMap ({"resources": {"cpu": "1500m", ...}}) into u: cpu in milli, the rest in units;
 * names no node offers are left out (no threshold or weight can name them usefully). Returns
 * whether m was an object. */
static bool decode_resources(const cJSON *m, struct sched_res *u)
{
    const cJSON *q;

    memset(u, 0, sizeof(*u));
    if (!cJSON_IsObject(m))
        return false;
    cJSON_ArrayForEach(q, get(m, "resources"))
    {
        struct quantity qty;
        int64_t v = 0;
        int i;

        if (!cJSON_IsString(q) || quantity_parse(q->valuestring, &qty) < 0 ||
            (i = sched_res_lookup(q->string)) < 0)
            continue;
        if (i == SCHED_RES_CPU)
            (void)quantity_milli(&qty, &v);
        else
            (void)quantity_value(&qty, &v);
        u->v[i] = v;
    }
    return true;
}

static enum la_agg_type agg_type(const char *s)
{
    static const char *const names[LA_AGG_COUNT] = {"avg", "p50", "p90", "p95", "p99"};

    for (int i = 0; i < LA_AGG_COUNT; i++)
        if (!strcmp(names[i], s))
            return (enum la_agg_type)i;
    return LA_AGG_UNSET;
}

struct la_metric *sched__la_metric_decode(const cJSON *obj)
{
    const cJSON *status = get(obj, "status"), *nm = get(status, "nodeMetric"), *x, *u;
    struct la_metric *m = xcalloc(1, sizeof(*m));
    const char *t = get_str(status, "updateTime");
    int64_t sec;
    int32_t nsec;

    CHECK(pthread_mutex_init(&m->cache.mu, NULL) == 0);
    hmap_init(&m->pods);
    if (*t && rfc3339_parse(t, &sec, &nsec) == 0)
        m->update = (double)sec + nsec / 1e9;
    x = get(get(get(obj, "spec"), "metricCollectPolicy"), "reportIntervalSeconds");
    m->report_interval = cJSON_IsNumber(x) && x->valuedouble > 0 ? x->valuedouble : 60;
    m->has_node = cJSON_IsObject(nm);
    m->has_usage = decode_resources(get(nm, "nodeUsage"), &m->usage);
    (void)decode_resources(get(nm, "systemUsage"), &m->sys);
    cJSON_ArrayForEach(x, get(nm, "aggregatedNodeUsages"))
    {
        int64_t ns = 0;

        if (duration_parse(get_str(x, "duration"), &ns) < 0)
            continue;
        cJSON_ArrayForEach(u, get(x, "usage"))
        {
            enum la_agg_type ty = agg_type(u->string);
            struct la_agg_usage *a;

            if (ty == LA_AGG_UNSET)
                continue;
            m->agg = xrealloc(m->agg, (m->nagg + 1) * sizeof(*m->agg));
            a = &m->agg[m->nagg++];
            a->type = ty;
            a->dur_s = ns / 1000000000;
            (void)decode_resources(u, &a->u);
        }
    }
    cJSON_ArrayForEach(x, get(status, "podsMetric"))
    {
        struct la_pod_usage *pu = xcalloc(1, sizeof(*pu));
        struct strbuf key = STRBUF_INIT;
        const char *ns = get_str(x, "namespace");

        (void)decode_resources(get(x, "podUsage"), &pu->u);
        pu->prod = !strcmp(get_str(x, "priority"), "koord-prod");
        if (pu->prod)
            for (int k = 0; k < SCHED_RES_MAX; k++)
                m->prod.v[k] += pu->u.v[k];
        strbuf_addf(&key, "%s/%s", *ns ? ns : "default", get_str(x, "name"));
        free(hmap_put(&m->pods, key.buf, pu));
        strbuf_release(&key);
    }
    return m;
}

void sched__la_metric_free(struct la_metric *m)
{
    struct hmap_entry *e;
    size_t it;

    if (!m)
        return;
    for (e = hmap_first(&m->pods, &it); e; e = hmap_next(&m->pods, e, &it))
        free(e->value);
    hmap_release(&m->pods);
    free(m->agg);
    (void)pthread_mutex_destroy(&m->cache.mu);
    free(m);
}

_Static_assert(offsetof(struct la_holder, filter) == SCHED_CACHE_LINE,
               "what Score reads of a holder fills exactly its first cache line");

void sched__la_prune(struct la *la, const char *node, double cutoff)
{
    struct hmap_entry *e;
    char **gone = NULL;
    size_t n = 0, it;

    for (e = hmap_first(&la->assigned, &it); e; e = hmap_next(&la->assigned, e, &it)) {
        const struct la_assign *as = e->value;
        if ((!node || !strcmp(as->node, node)) && as->at <= cutoff) {
            gone = xrealloc(gone, (n + 1) * sizeof(*gone));
            gone[n++] = xstrdup(e->key);
        }
    }
    for (size_t i = 0; i < n; i++) {
        struct la_assign *as = hmap_del(&la->assigned, gone[i]);
        free(as->node);
        free(as);
        free(gone[i]);
    }
    free(gone);
    if (n)
        la->prune_epoch++; /* a pod's placement time may now come from the pod itself */
}

void sched__la_metric_set(struct la *la, const cJSON *obj, bool added)
{
    const char *name = get_str(get(obj, "metadata"), "name");
    struct la_holder *h;
    struct la_metric *m;

    if (!*name)
        return;
    m = sched__la_metric_decode(obj);
    CHECK(pthread_rwlock_wrlock(&la->lock) == 0);
    if (!(h = hmap_get(&la->metrics, name))) {
        h = xaligned_zalloc(SCHED_CACHE_LINE, sizeof(*h));
        (void)hmap_put(&la->metrics, name, h);
    }
    sched__la_metric_free(h->m);
    h->m = m;
    h->update = m->update;
    h->has_node = m->has_node;
    h->valid = false;
    /* The pods placed before this report's window are in its usage now (or, when it does not
     * list them, counted by their binding time from the pod itself). */
    if (m->update > 0)
        sched__la_prune(la, name, m->update - m->report_interval);
    CHECK(pthread_rwlock_unlock(&la->lock) == 0);
    if (la->h)
        sched_handle_cluster_event(la->h, added ? "NodeMetricAdd" : "NodeMetricUpdate",
                                   LA_NODEMETRIC_EVENT, added ? SCHED_ACT_ADD : SCHED_ACT_UPDATE);
}

void sched__la_metric_delete(struct la *la, const char *node)
{
    struct la_holder *h;

    CHECK(pthread_rwlock_wrlock(&la->lock) == 0);
    if ((h = hmap_get(&la->metrics, node))) {
        sched__la_metric_free(h->m);
        h->m = NULL;
        h->valid = false;
    }
    sched__la_prune(la, node, INFINITY);
    CHECK(pthread_rwlock_unlock(&la->lock) == 0);
    if (la->h)
        sched_handle_cluster_event(la->h, "NodeMetricDelete", LA_NODEMETRIC_EVENT,
                                   SCHED_ACT_DELETE);
}

/* ---- the informer ---- */

static void on_add(void *ud, const struct kube_object *o)
{
    sched__la_metric_set(ud, kube_object_json(o), true);
}

static void on_update(void *ud, const struct kube_object *old, const struct kube_object *o)
{
    if (old == o) /* a resync: nothing new */
        return;
    sched__la_metric_set(ud, kube_object_json(o), false);
}

static void on_delete(void *ud, const struct kube_object *o)
{
    sched__la_metric_delete(ud, kube_object_name(o));
}

/* Whether the API server serves nodemetrics in group/version: 1 yes, 0 no (404, or the
 * group-version lacks the resource), -errno when it could not say. */
static int served(struct kube_client *c, const struct kube_resource *r)
{
    struct kube_status st = {0};
    char path[128];
    cJSON *list = NULL;
    const cJSON *e;
    int err, found = 0;

    (void)snprintf(path, sizeof(path), "/apis/%s/%s", r->group, r->version);
    err = kube_request(c, "GET", path, NULL, NULL, &list, &st);
    if (err == -ENOENT)
        return 0;
    if (err < 0)
        return err;
    cJSON_ArrayForEach(e, get(list, "resources")) if (!strcmp(get_str(e, "name"), r->plural))
        found = 1;
    cJSON_Delete(list);
    return found;
}

void sched__la_feed_start(struct la *la, struct sched_handle *h)
{
    struct kube_client *c = sched_handle_client(h);
    struct kube_handlers hs = {on_add, on_update, on_delete, la};
    int r = -EAGAIN;

    if (!c)
        return;
    /* The aggregated API answers 503 while no manager leads: it is served, only not yet; the
     * informer then syncs once a manager leads. An unreachable API server is asked again for
     * up to 10 s before the plugin settles on the manager's API. */
    for (int i = 0; i < 20 && r < 0; i++) {
        r = served(c, &kube_res_nodemetrics);
        if (r == -EAGAIN) {
            r = 1;
            break;
        }
        if (r < 0)
            (void)usleep(500 * 1000);
    }
    if (r < 0) {
        log_warn(COMP, "API discovery failed (%s); reading NodeMetrics from %s", err_str(r),
                 kube_res_nodemetrics.group);
        r = 1;
    }
    if (r == 1) {
        la->res = &kube_res_nodemetrics;
    } else if (served(c, &slo_nodemetrics) == 1) {
        la->res = &slo_nodemetrics;
    } else {
        log_warn(COMP,
                 "no NodeMetric API is served (neither %s nor %s): every node counts as "
                 "without NodeMetric",
                 kube_res_nodemetrics.group, slo_nodemetrics.group);
        return;
    }
    log_info(COMP, "reading NodeMetrics from %s/%s", la->res->group, la->res->version);
    la->inf = kube_informer_new(c, &(struct kube_informer_opts){.resource = la->res,
                                                                .backoff_max_ms = 2000,
                                                                .drop_managed_fields = true});
    CHECK(kube_informer_add_handlers(la->inf, &hs) == 0);
    sched_handle_add_informer(h, la->inf);
}

void sched__la_feed_free(struct la *la)
{
    kube_informer_free(la->inf);
    la->inf = NULL;
}
