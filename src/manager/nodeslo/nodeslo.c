/*
 * The NodeSLO controller: see nodeslo.h. Mirrors upstream
 * pkg/slo-controller/nodeslo/{nodeslo_controller,nodeslo_cm_event_handler}.go and
 * pkg/slo-controller/config/colocation_cm_event_handler.go (manager-behaviour.md 1.5, 2).
 */
#include "manager/nodeslo/nodeslo.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api.h"
#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "codec/patch.h"
#include "kube/client.h"
#include "kube/events.h"
#include "kube/informer.h"
#include "kube/workqueue.h"
#include "slo/slo.h"

#define COMP                    "nodeslo"

#define DEFAULT_SYNC_TIMEOUT_MS 60000
#define SYNC_SLICE_MS           50

struct nodeslo_controller {
    struct kube_client *client;
    struct nodeslo_opts o; /* strings point at the copies below */
    char *ns, *name, *component, *host;
    char *cm_key;                /* "namespace/name": the ConfigMap's workqueue key */
    char *field_selector;        /* "metadata.name=<name>" */
    const struct api_kind *kind; /* NodeSLO */
    struct kube_recorder *rec;

    pthread_mutex_t lifecycle; /* serialises start and stop */
    atomic_bool cancel;        /* stop() asks a start waiting for the caches to give up */

    /*
     * The run, built by start and torn down by stop. Handlers and workers use the pointers
     * without a lock: they only run while these exist. The getters read them under run_lock,
     * and only while running.
     */
    pthread_rwlock_t run_lock;
    bool running;
    struct kube_informer *cm_inf, *node_inf, *slo_inf;
    struct kube_workqueue *q;
    pthread_t *threads;
    unsigned nthreads;

    /* The config: read by node syncs and getters, written by the ConfigMap sync. A fresh one
     * each run. Lock order: run_lock, then cfg_lock. */
    pthread_rwlock_t cfg_lock;
    struct slo_config *cfg;
    bool cfg_synced; /* a ConfigMap state was applied this run: "available" for NodeSLO */
    char *cfg_rv;    /* resourceVersion of the ConfigMap applied last; "" = absent */

    pthread_mutex_t stats_lock;
    struct nodeslo_stats stats;
};

static double now_s(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A field selector value must not smuggle in another requirement: DNS subdomain characters. */
static bool is_plain_name(const char *s)
{
    if (!*s || strlen(s) > 253)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '.'))
            return false;
    return true;
}

static char *dup_or(const char *s, const char *dflt)
{
    return s ? xstrdup(s) : dflt ? xstrdup(dflt) : NULL;
}

int nodeslo_controller_new(struct kube_client *client, const struct nodeslo_opts *opts,
                           struct nodeslo_controller **ret)
{
    static const struct nodeslo_opts defaults = {0};
    struct nodeslo_controller *c;
    const struct nodeslo_opts *o = opts ? opts : &defaults;
    const char *ns = o->config_namespace ? o->config_namespace : SLO_DEFAULT_NAMESPACE;
    const char *name = o->config_name ? o->config_name : SLO_DEFAULT_NAME;
    struct strbuf sb = STRBUF_INIT;

    if (!is_plain_name(ns) || !is_plain_name(name))
        return -EINVAL;
    c = xcalloc(1, sizeof(*c));
    c->client = client;
    c->o = *o;
    c->ns = xstrdup(ns);
    c->name = xstrdup(name);
    c->component = dup_or(o->component, "koord-manager");
    c->host = dup_or(o->host, NULL);
    c->o.config_namespace = c->ns;
    c->o.config_name = c->name;
    c->o.component = c->component;
    c->o.host = c->host;
    if (!c->o.workers)
        c->o.workers = 1;
    if (c->o.sync_timeout_ms <= 0)
        c->o.sync_timeout_ms = DEFAULT_SYNC_TIMEOUT_MS;
    strbuf_addf(&sb, "%s/%s", c->ns, c->name);
    c->cm_key = strbuf_detach(&sb, NULL);
    strbuf_addf(&sb, "metadata.name=%s", c->name);
    c->field_selector = strbuf_detach(&sb, NULL);
    c->kind = api_kind_find("slo.koordinator.sh/v1alpha1", "NodeSLO");
    CHECK(c->kind);
    c->rec = kube_recorder_new(
        client, &(struct kube_recorder_opts){.component = c->component, .host = c->host});
    CHECK(pthread_mutex_init(&c->lifecycle, NULL) == 0);
    CHECK(pthread_rwlock_init(&c->run_lock, NULL) == 0);
    {
        /* Many readers (node syncs, NodeMetric requests) must not starve a config update. */
        pthread_rwlockattr_t a;
        CHECK(pthread_rwlockattr_init(&a) == 0);
        CHECK(pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP) == 0);
        CHECK(pthread_rwlock_init(&c->cfg_lock, &a) == 0);
        (void)pthread_rwlockattr_destroy(&a);
    }
    CHECK(pthread_mutex_init(&c->stats_lock, NULL) == 0);
    atomic_init(&c->cancel, false);
    *ret = c;
    return 0;
}

/* ---- event handlers: compute the key and enqueue, nothing more ---- */

static const cJSON *path2(const cJSON *o, const char *a, const char *b)
{
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, a), b);
}

static bool is_our_configmap(const struct nodeslo_controller *c, const struct kube_object *o)
{
    return !strcmp(kube_object_key(o), c->cm_key);
}

static void cm_add(void *ud, const struct kube_object *o)
{
    struct nodeslo_controller *c = ud;

    if (is_our_configmap(c, o))
        kube_workqueue_add(c->q, c->cm_key);
}

/* Upstream reacts to an update only when .data differs. */
static void cm_update(void *ud, const struct kube_object *old, const struct kube_object *o)
{
    struct nodeslo_controller *c = ud;

    if (is_our_configmap(c, o) &&
        !json_value_equal(cJSON_GetObjectItem(kube_object_json(old), "data"),
                          cJSON_GetObjectItem(kube_object_json(o), "data")))
        kube_workqueue_add(c->q, c->cm_key);
}

static void node_add(void *ud, const struct kube_object *o)
{
    struct nodeslo_controller *c = ud;

    kube_workqueue_add(c->q, kube_object_name(o));
    if (c->o.on_node)
        c->o.on_node(c->o.userdata, kube_object_name(o), true);
}

/* Only labels and status.allocatable feed the NodeSLO (and NodeMetric) triggers (2.1). */
static void node_update(void *ud, const struct kube_object *old, const struct kube_object *o)
{
    struct nodeslo_controller *c = ud;
    const cJSON *a = kube_object_json(old), *b = kube_object_json(o);

    if (!json_value_equal(path2(a, "metadata", "labels"), path2(b, "metadata", "labels")) ||
        !json_value_equal(path2(a, "status", "allocatable"), path2(b, "status", "allocatable")))
        kube_workqueue_add(c->q, kube_object_name(o));
}

static void node_delete(void *ud, const struct kube_object *o)
{
    struct nodeslo_controller *c = ud;

    kube_workqueue_add(c->q, kube_object_name(o));
    if (c->o.on_node)
        c->o.on_node(c->o.userdata, kube_object_name(o), false);
}

static void slo_add(void *ud, const struct kube_object *o)
{
    struct nodeslo_controller *c = ud;

    kube_workqueue_add(c->q, kube_object_name(o));
}

/* A spec edit bumps metadata.generation; status or metadata changes do not concern us. */
static void slo_update(void *ud, const struct kube_object *old, const struct kube_object *o)
{
    struct nodeslo_controller *c = ud;

    if (!json_value_equal(path2(kube_object_json(old), "metadata", "generation"),
                          path2(kube_object_json(o), "metadata", "generation")))
        kube_workqueue_add(c->q, kube_object_name(o));
}

/* ---- syncs ---- */

static void enqueue_all_nodes(struct nodeslo_controller *c)
{
    struct kube_object **v = NULL;
    size_t n = kube_informer_list(c->node_inf, NULL, &v);

    for (size_t i = 0; i < n; i++)
        kube_workqueue_add(c->q, kube_object_name(v[i]));
    kube_objects_free(v, n);
}

/*
 * Applies the ConfigMap as the cache has it (or its absence), unless that very version was
 * applied already (the start-up read and the informer's add event see the same one). Each
 * key that failed to decode becomes a Warning Event on the ConfigMap; an invalid colocation
 * strategy is only logged (upstream records no Event). A change, or the first state of the
 * run, enqueues every node. 0 or -ENOMEM.
 */
static int sync_config(struct nodeslo_controller *c)
{
    struct kube_object *o = kube_informer_get(c->cm_inf, c->cm_key);
    const char *rv = o ? kube_object_resource_version(o) : "";
    struct slo_events ev = {0};
    bool changed = false, first = false;
    int r = 0;

    (void)pthread_rwlock_wrlock(&c->cfg_lock);
    if (c->cfg_synced && !strcmp(c->cfg_rv, rv)) {
        (void)pthread_rwlock_unlock(&c->cfg_lock);
        goto out;
    }
    if (o)
        r = slo_config_update(c->cfg, cJSON_GetObjectItemCaseSensitive(kube_object_json(o), "data"),
                              &ev, &changed);
    else
        r = slo_config_absent(c->cfg, &changed);
    if (r == 0) {
        first = !c->cfg_synced;
        c->cfg_synced = true;
        free(c->cfg_rv);
        c->cfg_rv = xstrdup(rv);
    }
    (void)pthread_rwlock_unlock(&c->cfg_lock);
    if (r < 0) {
        log_error(COMP, "cannot apply configmap \"%s\": %s", c->cm_key, err_str(r));
        goto out;
    }
    if (!o)
        log_info(COMP, "configmap \"%s\" not found, using the defaults", c->cm_key);
    else
        log_info(COMP, "applied configmap \"%s\" resourceVersion %s%s", c->cm_key, rv,
                 changed ? " (changed)" : "");
    for (size_t i = 0; i < ev.n; i++) {
        const struct slo_event *e = &ev.v[i];
        int er;

        log_warn(COMP, "configmap \"%s\" key \"%s\": %s, keeping its last good value", c->cm_key,
                 e->key, e->message);
        if (!e->reason)
            continue;
        er = kube_recorder_event(c->rec, kube_object_json(o), KUBE_EVENT_WARNING, e->reason, "%s",
                                 e->message);
        if (er < 0)
            log_warn(COMP, "cannot record event %s on configmap \"%s\": %s, ignoring", e->reason,
                     c->cm_key, err_str(er));
    }
    (void)pthread_mutex_lock(&c->stats_lock);
    c->stats.config_syncs++;
    c->stats.config_errors += ev.n;
    (void)pthread_mutex_unlock(&c->stats_lock);
    if (changed || first)
        enqueue_all_nodes(c);
out:
    slo_events_release(&ev);
    (void)kube_object_unref(o);
    return r;
}

static void count_write(struct nodeslo_controller *c, unsigned long *counter)
{
    (void)pthread_mutex_lock(&c->stats_lock);
    (*counter)++;
    (void)pthread_mutex_unlock(&c->stats_lock);
}

static int create_nodeslo(struct nodeslo_controller *c, const char *name, const cJSON *node)
{
    struct kube_status st = {0};
    cJSON *obj = NULL;
    int r;

    (void)pthread_rwlock_rdlock(&c->cfg_lock);
    r = slo_render_nodeslo(c->cfg, node, &obj);
    (void)pthread_rwlock_unlock(&c->cfg_lock);
    if (r < 0)
        return r;
    r = kube_create(c->client, &kube_res_nodeslos, NULL, obj, NULL, &st);
    cJSON_Delete(obj);
    if (r < 0)
        log_warn(COMP, "cannot create nodeslo \"%s\": %s, retrying", name,
                 st.message[0] ? st.message : err_str(r));
    else
        count_write(c, &c->stats.creates);
    log_debug(COMP, "created nodeslo \"%s\": %d", name, r);
    return r;
}

/*
 * The spec as the API server would store it: CRD defaults applied, Go-client encoding, so the
 * comparison ignores what the server adds or re-encodes. One more equivalence: an empty
 * extensions map may come back as {}, {"Object": null} or {"Object": {}} (Go decodes all three
 * to an empty map; koord's API server drops the empty "Object"), so all become the last.
 * obj is owned and modified. 0 or -ENOMEM.
 */
static int canonical(const struct nodeslo_controller *c, cJSON *obj)
{
    cJSON *ext;
    int r = api_object_default(c->kind, obj, 0);

    if (r == 0)
        r = api_object_canonicalize(c->kind, obj);
    ext = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "spec"),
                                           "extensions");
    if (r < 0 || !cJSON_IsObject(ext) ||
        cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(ext, "Object")))
        return r;
    cJSON_DeleteItemFromObjectCaseSensitive(ext, "Object");
    return cJSON_AddObjectToObject(ext, "Object") ? 0 : -ENOMEM;
}

/* Renders the spec from the current one (its extensions kept) and PUTs it when it differs. */
static int update_nodeslo(struct nodeslo_controller *c, const char *name, const cJSON *node,
                          const cJSON *cur)
{
    struct kube_status st = {0};
    cJSON *spec = NULL, *want = NULL, *have = NULL, *obj = NULL, *s;
    int r;

    (void)pthread_rwlock_rdlock(&c->cfg_lock);
    r = slo_render_spec(c->cfg, node, cJSON_GetObjectItemCaseSensitive(cur, "spec"), &spec);
    (void)pthread_rwlock_unlock(&c->cfg_lock);
    if (r < 0)
        return r;
    r = -ENOMEM;
    want = cJSON_CreateObject();
    s = cJSON_Duplicate(spec, true);
    if (!want || !s || !cJSON_AddItemToObject(want, "spec", s)) {
        cJSON_Delete(s);
        goto out;
    }
    have = cJSON_CreateObject();
    s = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(cur, "spec"), true);
    if (!have || (s && !cJSON_AddItemToObject(have, "spec", s))) {
        cJSON_Delete(s);
        goto out;
    }
    if ((r = canonical(c, want)) < 0 || (r = canonical(c, have)) < 0)
        goto out;
    if (json_value_equal(cJSON_GetObjectItemCaseSensitive(want, "spec"),
                         cJSON_GetObjectItemCaseSensitive(have, "spec"))) {
        log_debug(COMP, "nodeslo \"%s\" is up to date", name);
        r = 0;
        goto out;
    }
    r = -ENOMEM;
    obj = cJSON_Duplicate(cur, true);
    if (!obj)
        goto out;
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "spec");
    if (!cJSON_AddItemToObject(obj, "spec", spec))
        goto out;
    spec = NULL;
    r = kube_update(c->client, &kube_res_nodeslos, NULL, obj, NULL, NULL, &st);
    if (r < 0)
        log_warn(COMP, "cannot update nodeslo \"%s\": %s, retrying", name,
                 st.message[0] ? st.message : err_str(r));
    else
        count_write(c, &c->stats.updates);
    log_debug(COMP, "updated nodeslo \"%s\": %d", name, r);
out:
    cJSON_Delete(obj);
    cJSON_Delete(have);
    cJSON_Delete(want);
    cJSON_Delete(spec);
    return r;
}

/* Reconcile of one node (2.2): at most one write. */
static int sync_node(struct nodeslo_controller *c, const char *name)
{
    struct kube_object *node = NULL, *slo = NULL;
    struct kube_status st = {0};
    bool available;
    int r = 0;

    (void)pthread_rwlock_rdlock(&c->cfg_lock);
    available = c->cfg_synced;
    (void)pthread_rwlock_unlock(&c->cfg_lock);
    if (!available) {
        /* Every node is enqueued once the config is applied. */
        log_debug(COMP, "config not available yet, dropping \"%s\"", name);
        return 0;
    }
    node = kube_informer_get(c->node_inf, name);
    slo = kube_informer_get(c->slo_inf, name);
    if (!node && slo) {
        r = kube_delete(c->client, &kube_res_nodeslos, NULL, name, &st);
        if (r == 0) {
            count_write(c, &c->stats.deletes);
            log_debug(COMP, "deleted nodeslo \"%s\" of a node that is gone", name);
        } else if (r == -ENOENT) {
            r = 0;
        } else {
            log_warn(COMP, "cannot delete nodeslo \"%s\": %s, retrying", name,
                     st.message[0] ? st.message : err_str(r));
        }
    } else if (node && !slo) {
        r = create_nodeslo(c, name, kube_object_json(node));
    } else if (node && slo) {
        r = update_nodeslo(c, name, kube_object_json(node), kube_object_json(slo));
    }
    /* The node's NodeMetric spec follows from the same inputs (manager-behaviour.md 3). */
    if (c->o.on_node)
        c->o.on_node(c->o.userdata, name, node != NULL);
    (void)kube_object_unref(node);
    (void)kube_object_unref(slo);
    return r;
}

static void *worker(void *arg)
{
    struct nodeslo_controller *c = arg;
    char *key;

    while (kube_workqueue_get(c->q, &key) == 0) {
        bool is_cm = !strcmp(key, c->cm_key);
        double t0 = now_s(), dt;
        int r = is_cm ? sync_config(c) : sync_node(c, key);

        if (r == 0)
            kube_workqueue_forget(c->q, key);
        else
            kube_workqueue_add_rate_limited(c->q, key);
        kube_workqueue_done(c->q, key);
        if (!is_cm) {
            dt = now_s() - t0;
            (void)pthread_mutex_lock(&c->stats_lock);
            c->stats.reconciles++;
            c->stats.errors += r < 0;
            c->stats.latency_sum_s += dt;
            c->stats.last_latency_s = dt;
            (void)pthread_mutex_unlock(&c->stats_lock);
        }
        free(key);
    }
    return NULL;
}

/* ---- lifecycle ---- */

/* Tears down whatever start built: informers first (no more handler calls), then the queue is
 * drained by the workers, which are joined. Called with lifecycle held. */
static void teardown(struct nodeslo_controller *c)
{
    struct kube_informer *infs[] = {c->cm_inf, c->node_inf, c->slo_inf};

    for (size_t i = 0; i < ARRAY_SIZE(infs); i++)
        if (infs[i])
            kube_informer_stop(infs[i]);
    if (c->q) {
        if (c->nthreads)
            kube_workqueue_shutdown_drain(c->q);
        else
            kube_workqueue_shutdown(c->q);
    }
    for (unsigned i = 0; i < c->nthreads; i++)
        (void)pthread_join(c->threads[i], NULL);
    (void)pthread_rwlock_wrlock(&c->run_lock);
    c->running = false;
    (void)pthread_rwlock_unlock(&c->run_lock);
    for (size_t i = 0; i < ARRAY_SIZE(infs); i++)
        kube_informer_free(infs[i]);
    c->cm_inf = c->node_inf = c->slo_inf = NULL;
    kube_workqueue_free(c->q);
    c->q = NULL;
    free(c->threads);
    c->threads = NULL;
    c->nthreads = 0;
}

/* Waits for the three caches in slices, so that stop() can cancel. */
static int wait_synced(struct nodeslo_controller *c)
{
    struct kube_informer *infs[] = {c->cm_inf, c->node_inf, c->slo_inf};
    double end = now_s() + (double)c->o.sync_timeout_ms / 1000.0;

    for (size_t i = 0; i < ARRAY_SIZE(infs); i++) {
        while (!kube_informer_wait_synced(infs[i], SYNC_SLICE_MS)) {
            if (atomic_load(&c->cancel))
                return -ECANCELED;
            if (now_s() > end)
                return -ETIMEDOUT;
        }
    }
    return 0;
}

static struct kube_informer *informer(struct nodeslo_controller *c,
                                      const struct kube_informer_opts *o,
                                      const struct kube_handlers *h)
{
    struct kube_informer *inf = kube_informer_new(c->client, o);

    CHECK(kube_informer_add_handlers(inf, h) == 0);
    return inf;
}

int nodeslo_controller_start(struct nodeslo_controller *c)
{
    struct kube_workqueue_opts qo = {.base_delay_ms = c->o.retry_base_ms,
                                     .max_delay_ms = c->o.retry_max_ms};
    int r;

    (void)pthread_mutex_lock(&c->lifecycle);
    if (c->running || c->q) {
        (void)pthread_mutex_unlock(&c->lifecycle);
        return -EBUSY;
    }
    /* A fresh config, as a process starting up has. */
    (void)pthread_rwlock_wrlock(&c->cfg_lock);
    slo_config_free(c->cfg);
    c->cfg = slo_config_new();
    c->cfg_synced = false;
    free(c->cfg_rv);
    c->cfg_rv = NULL;
    (void)pthread_rwlock_unlock(&c->cfg_lock);

    c->q = kube_workqueue_new(&qo);
    c->cm_inf = informer(c,
                         &(struct kube_informer_opts){.resource = &kube_res_configmaps,
                                                      .namespace = c->ns,
                                                      .field_selector = c->field_selector},
                         &(struct kube_handlers){cm_add, cm_update, cm_add, c});
    c->node_inf = informer(c, &(struct kube_informer_opts){.resource = &kube_res_nodes},
                           &(struct kube_handlers){node_add, node_update, node_delete, c});
    c->slo_inf = informer(c, &(struct kube_informer_opts){.resource = &kube_res_nodeslos},
                          &(struct kube_handlers){slo_add, slo_update, slo_add, c});
    if ((r = kube_informer_start(c->cm_inf)) < 0 || (r = kube_informer_start(c->node_inf)) < 0 ||
        (r = kube_informer_start(c->slo_inf)) < 0) {
        log_error(COMP, "cannot start informers: %s", err_str(r));
        goto err;
    }
    r = wait_synced(c);
    if (r == -ECANCELED) {
        log_info(COMP, "start cancelled while waiting for the caches");
        goto err;
    } else if (r < 0) {
        log_error(COMP, "caches did not sync within %ld ms", c->o.sync_timeout_ms);
        goto err;
    }
    /* Before any worker runs, so no node is dropped for want of a config. */
    if (sync_config(c) < 0)
        kube_workqueue_add_rate_limited(c->q, c->cm_key);
    c->threads = xcalloc(c->o.workers, sizeof(*c->threads));
    for (unsigned i = 0; i < c->o.workers; i++) {
        r = -pthread_create(&c->threads[i], NULL, worker, c);
        if (r < 0) {
            log_error(COMP, "cannot start worker: %s", err_str(r));
            goto err;
        }
        c->nthreads++;
    }
    (void)pthread_rwlock_wrlock(&c->run_lock);
    c->running = true;
    (void)pthread_rwlock_unlock(&c->run_lock);
    (void)pthread_mutex_unlock(&c->lifecycle);
    log_info(COMP, "started with %u worker(s), config \"%s\"", c->nthreads, c->cm_key);
    return 0;
err:
    teardown(c);
    (void)pthread_mutex_unlock(&c->lifecycle);
    return r;
}

void nodeslo_controller_stop(struct nodeslo_controller *c)
{
    bool was_running;

    if (!c)
        return;
    atomic_store(&c->cancel, true);
    (void)pthread_mutex_lock(&c->lifecycle);
    was_running = c->running;
    teardown(c);
    atomic_store(&c->cancel, false);
    (void)pthread_mutex_unlock(&c->lifecycle);
    if (was_running)
        log_info(COMP, "stopped");
}

void nodeslo_controller_free(struct nodeslo_controller *c)
{
    if (!c)
        return;
    nodeslo_controller_stop(c);
    kube_recorder_free(c->rec);
    slo_config_free(c->cfg);
    free(c->cfg_rv);
    (void)pthread_mutex_destroy(&c->stats_lock);
    (void)pthread_rwlock_destroy(&c->cfg_lock);
    (void)pthread_rwlock_destroy(&c->run_lock);
    (void)pthread_mutex_destroy(&c->lifecycle);
    free(c->field_selector);
    free(c->cm_key);
    free(c->host);
    free(c->component);
    free(c->name);
    free(c->ns);
    free(c);
}

/* ---- getters ---- */

void nodeslo_controller_stats(struct nodeslo_controller *c, struct nodeslo_stats *ret)
{
    (void)pthread_mutex_lock(&c->stats_lock);
    *ret = c->stats;
    (void)pthread_mutex_unlock(&c->stats_lock);
    (void)pthread_rwlock_rdlock(&c->run_lock);
    ret->running = c->running;
    (void)pthread_rwlock_unlock(&c->run_lock);
}

int nodeslo_controller_nodemetric_spec(struct nodeslo_controller *c, const char *node, cJSON **ret)
{
    struct kube_object *o = NULL;
    int r = -EAGAIN;

    (void)pthread_rwlock_rdlock(&c->run_lock);
    if (!c->running)
        goto out;
    o = kube_informer_get(c->node_inf, node);
    if (!o) {
        r = -ENOENT;
        goto out;
    }
    (void)pthread_rwlock_rdlock(&c->cfg_lock);
    if (slo_colocation_available(c->cfg))
        r = slo_render_nodemetric_spec(c->cfg, kube_object_json(o), ret);
    (void)pthread_rwlock_unlock(&c->cfg_lock);
out:
    (void)pthread_rwlock_unlock(&c->run_lock);
    (void)kube_object_unref(o);
    return r;
}

int nodeslo_controller_colocation(struct nodeslo_controller *c, const cJSON *node,
                                  cJSON **ret_strategy, bool *ret_cluster_enable)
{
    int r = -EAGAIN;

    (void)pthread_rwlock_rdlock(&c->run_lock);
    if (c->running) {
        (void)pthread_rwlock_rdlock(&c->cfg_lock);
        if (slo_colocation_available(c->cfg)) {
            r = slo_node_colocation(c->cfg, node, ret_strategy);
            *ret_cluster_enable = slo_cluster_colocation_enabled(c->cfg);
        }
        (void)pthread_rwlock_unlock(&c->cfg_lock);
    }
    (void)pthread_rwlock_unlock(&c->run_lock);
    return r;
}

bool nodeslo_controller_colocation_error(struct nodeslo_controller *c)
{
    bool e = false;

    (void)pthread_rwlock_rdlock(&c->run_lock);
    if (c->running) {
        (void)pthread_rwlock_rdlock(&c->cfg_lock);
        e = slo_colocation_error(c->cfg);
        (void)pthread_rwlock_unlock(&c->cfg_lock);
    }
    (void)pthread_rwlock_unlock(&c->run_lock);
    return e;
}

size_t nodeslo_controller_nodes(struct nodeslo_controller *c, struct kube_object ***ret)
{
    size_t n = 0;

    *ret = NULL;
    (void)pthread_rwlock_rdlock(&c->run_lock);
    if (c->running)
        n = kube_informer_list(c->node_inf, NULL, ret);
    (void)pthread_rwlock_unlock(&c->run_lock);
    return n;
}
