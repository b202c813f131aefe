/*
 * The NodeResource controller: see controller.h; the calculation itself is batch.h. A reconcile
 * makes at most one API write (the nodes/status PUT), retried on conflict as upstream does
 * (10 ms x 5^k, 4 attempts), and records when it last wrote each node, which is what
 * updateTimeThresholdSeconds is measured against.
 */
#include "manager/noderesource/controller.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/rfc3339.h"
#include "base/base.h"
#include "base/log.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "kube/workqueue.h"
#include "manager/nodemetric/crd.h"
#include "manager/nodemetric/nodemetric.h"
#include "manager/noderesource/batch.h"
#include "manager/nodeslo/nodeslo.h"

#define DEFAULT_WORKERS     2
#define MAX_WORKERS         16
#define PUT_ATTEMPTS        4
#define RECHECK_SLACK       1000 /* ms after a window ends before looking again */
#define MAX_RECHECK_MINUTES (7 * 24 * 60)

/* When this process last wrote a node's status (sorted by name). */
struct last_write {
    char *node;
    int64_t ms;
};

struct noderesource_controller {
    struct kube_client *client;
    struct noderesource_opts o;
    struct kube_informer *nodes, *pods;
    struct kube_workqueue *q;
    pthread_t workers[MAX_WORKERS];
    unsigned nworkers, running; /* configured, started */
    int64_t not_before_ms;
    atomic_bool started;
    bool stopped;

    pthread_mutex_t lock; /* writes, stats */
    struct last_write *writes;
    size_t nwrites, awrites;
    struct noderesource_stats stats;
};

static int64_t now_ms(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- last writes ---- */

static size_t writes_find(const struct noderesource_controller *c, const char *node, bool *found)
{
    size_t lo = 0, hi = c->nwrites;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int d = strcmp(c->writes[mid].node, node);
        if (d == 0) {
            *found = true;
            return mid;
        }
        if (d < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

static int64_t last_write(struct noderesource_controller *c, const char *node)
{
    int64_t ms = 0;
    bool found;
    size_t i;

    (void)pthread_mutex_lock(&c->lock);
    i = writes_find(c, node, &found);
    if (found)
        ms = c->writes[i].ms;
    (void)pthread_mutex_unlock(&c->lock);
    return ms;
}

/* ms 0 forgets the node (deleted). */
static void set_last_write(struct noderesource_controller *c, const char *node, int64_t ms)
{
    bool found;
    size_t i;

    (void)pthread_mutex_lock(&c->lock);
    i = writes_find(c, node, &found);
    if (found && ms) {
        c->writes[i].ms = ms;
    } else if (found) {
        free(c->writes[i].node);
        memmove(&c->writes[i], &c->writes[i + 1], (c->nwrites - i - 1) * sizeof(*c->writes));
        c->nwrites--;
    } else if (ms) {
        if (c->nwrites == c->awrites) {
            c->awrites = c->awrites ? 2 * c->awrites : 64;
            c->writes = xrealloc(c->writes, c->awrites * sizeof(*c->writes));
        }
        memmove(&c->writes[i + 1], &c->writes[i], (c->nwrites - i) * sizeof(*c->writes));
        c->writes[i] = (struct last_write){xstrdup(node), ms};
        c->nwrites++;
    }
    (void)pthread_mutex_unlock(&c->lock);
}

/* ---- reconcile ---- */

/*
 * When to look at a node again on its own: one degrade window from now, when its metrics would
 * go stale or the start-up grace ends. degradeTimeMinutes may come unvalidated from a node
 * annotation, so it is bounded here (a week) before it is multiplied.
 */
static long recheck_ms(const struct noderesource_controller *c, const cJSON *strategy)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(strategy, "degradeTimeMinutes");
    double minutes = cJSON_IsNumber(v) && v->valuedouble >= 1 ? v->valuedouble : 15;

    if (minutes > MAX_RECHECK_MINUTES)
        minutes = MAX_RECHECK_MINUTES;
    return (long)minutes * (c->o.degrade_scale_ms ? c->o.degrade_scale_ms : 60000) + RECHECK_SLACK;
}

/*
 * The degrade window is judged on a clock that runs 60000 / degrade_scale_ms times faster in
 * tests: times are stretched around one origin (the metric's update time), so differences
 * between them, which is all the formula looks at, are in the test's "minutes".
 */
static int64_t scaled(const struct noderesource_controller *c, int64_t t, int64_t origin)
{
    if (!c->o.degrade_scale_ms || c->o.degrade_scale_ms == 60000)
        return t;
    return origin + (t - origin) * 60000 / c->o.degrade_scale_ms;
}

/*
 * PUT nodes/status with the batch resources set or removed, as upstream's update path does
 * (4.2 step 5c): the status is prepared from the very Node being written, so whatever else
 * changed in it (kubelet's conditions) is kept. The first attempt writes over the cached Node;
 * on a conflict the Node is read again. *ret_wrote says whether a write was made (none when
 * the diff and time rules find nothing to sync).
 */
static int put_status(struct noderesource_controller *c, const cJSON *cached,
                      const struct noderesource_batch *res, int64_t now, int64_t wrote,
                      const cJSON *strategy, bool *ret_wrote)
{
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cached, "metadata"), "name"));
    long delay_ms = 10;
    int r = -ESTALE;

    *ret_wrote = false;
    for (int i = 0; i < PUT_ATTEMPTS && (r == -ESTALE || r == -EAGAIN); i++) {
        cJSON *node = NULL, *status = NULL;

        if (i > 0) {
            (void)usleep((useconds_t)delay_ms * 1000);
            delay_ms *= 5;
            if ((r = kube_get(c->client, &kube_res_nodes, NULL, name, &node, NULL)) < 0)
                break;
        } else {
            CHECK(node = cJSON_Duplicate(cached, true));
        }
        r = noderesource_batch_prepare_status(node, res, 1.0, &status);
        if (r == 0 &&
            noderesource_batch_needs_sync(cJSON_GetObjectItemCaseSensitive(node, "status"), status,
                                          strategy, now, wrote)) {
            cJSON_DeleteItemFromObjectCaseSensitive(node, "status");
            CHECK(cJSON_AddItemToObject(node, "status", status));
            status = NULL;
            r = kube_update(c->client, &kube_res_nodes, NULL, node, "status", NULL, NULL);
            *ret_wrote = r == 0;
        }
        cJSON_Delete(status);
        cJSON_Delete(node);
    }
    return r;
}

/* A NodeMetric's status.updateTime in Unix ms; INT64_MIN when it has none (or none readable). */
static int64_t update_ms(const cJSON *metric)
{
    const cJSON *upd = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(metric, "status"), "updateTime");
    int64_t s;
    int32_t ns;

    if (!cJSON_IsString(upd) || rfc3339_parse(upd->valuestring, &s, &ns) < 0)
        return INT64_MIN;
    return s * 1000 + ns / 1000000;
}

static int reconcile(struct noderesource_controller *c, const char *name, long *ret_recheck_ms)
{
    struct kube_object *node = kube_informer_get(c->nodes, name), **pods = NULL, *crd = NULL;
    const cJSON **podv = NULL, *input;
    cJSON *strategy = NULL, *metric = NULL;
    struct noderesource_batch res;
    bool cluster_enable = false, wrote = false;
    int64_t now = now_ms();
    size_t npods = 0;
    int r;

    *ret_recheck_ms = 0;
    if (!node) {
        set_last_write(c, name, 0);
        return 0;
    }
    r = nodeslo_controller_colocation(c->o.slo, kube_object_json(node), &strategy, &cluster_enable);
    if (r == -EAGAIN) { /* config not available yet: drop, as upstream (4.2 step 1) */
        r = 0;
        goto out;
    }
    if (r < 0)
        goto out;
    if (nodemetric_server_get_usage(c->o.nodemetrics, name, &metric) < 0)
        metric = NULL;
    crd = nodemetric_crd_watch_get(c->o.crd, name);
    input = metric;
    if (crd && update_ms(kube_object_json(crd)) > update_ms(metric))
        input = kube_object_json(crd);
    npods = kube_informer_list_by_node(c->pods, name, &pods);
    podv = xcalloc(npods + 1, sizeof(const cJSON *));
    for (size_t i = 0; i < npods; i++)
        podv[i] = kube_object_json(pods[i]);
    {
        int64_t origin = update_ms(input);

        if (origin == INT64_MIN)
            origin = now;
        r = noderesource_batch_calculate(
            &(struct noderesource_batch_input){
                .node = kube_object_json(node),
                .pods = podv,
                .npods = npods,
                .nodemetric = input,
                .strategy = strategy,
                .cluster_enable = cluster_enable,
                .now_ms = scaled(c, now, origin),
                .not_before_ms = c->not_before_ms ? scaled(c, c->not_before_ms, origin) : 0},
            &res);
    }
    if (r < 0)
        goto out;
    *ret_recheck_ms = recheck_ms(c, strategy);
    if (res.action == NODERESOURCE_BATCH_KEEP)
        goto out;
    r = put_status(c, kube_object_json(node), &res, now, last_write(c, name), strategy, &wrote);
    if (r < 0) {
        log_warn("noderesource", "cannot update node \"%s\" status: %s, retrying", name,
                 err_str(r));
        goto out;
    }
    if (!wrote)
        goto out;
    set_last_write(c, name, now);
    (void)pthread_mutex_lock(&c->lock);
    c->stats.node_writes++;
    (void)pthread_mutex_unlock(&c->lock);
    if (res.action == NODERESOURCE_BATCH_SET)
        log_debug("noderesource", "node %s: batch-cpu %lldm batch-memory %lld", name,
                  (long long)res.cpu_milli, (long long)res.memory_bytes);
    else
        log_info("noderesource", "node %s: batch resources removed: %s", name, res.message);
out:
    kube_object_unref(crd);
    cJSON_Delete(metric);
    cJSON_Delete(strategy);
    free(podv);
    kube_objects_free(pods, npods);
    kube_object_unref(node);
    return r;
}

static double mono_s(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
    struct noderesource_controller *c = arg;
    char *key;

    while (kube_workqueue_get(c->q, &key) == 0) {
        double t0 = mono_s();
        long recheck = 0;
        int r = reconcile(c, key, &recheck);

        (void)pthread_mutex_lock(&c->lock);
        c->stats.reconciles++;
        c->stats.latency_sum_s += mono_s() - t0;
        if (r < 0)
            c->stats.errors++;
        (void)pthread_mutex_unlock(&c->lock);
        if (r == 0) {
            kube_workqueue_forget(c->q, key);
            if (recheck > 0)
                kube_workqueue_add_after(c->q, key, recheck);
        } else {
            kube_workqueue_add_rate_limited(c->q, key);
        }
        kube_workqueue_done(c->q, key);
        free(key);
    }
    return NULL;
}

/* ---- triggers ---- */

static void node_event(void *userdata, const struct kube_object *obj)
{
    noderesource_controller_enqueue(userdata, kube_object_name(obj));
}

static void node_update(void *userdata, const struct kube_object *old,
                        const struct kube_object *obj)
{
    (void)old;
    node_event(userdata, obj);
}

static void pod_event(void *userdata, const struct kube_object *obj)
{
    const char *node = kube_object_node_name(obj);

    if (*node)
        noderesource_controller_enqueue(userdata, node);
}

static void pod_update(void *userdata, const struct kube_object *old, const struct kube_object *obj)
{
    if (*kube_object_node_name(old) &&
        strcmp(kube_object_node_name(old), kube_object_node_name(obj)))
        pod_event(userdata, old);
    pod_event(userdata, obj);
}

void noderesource_controller_enqueue(struct noderesource_controller *c, const char *node)
{
    if (c && atomic_load(&c->started))
        kube_workqueue_add(c->q, node);
}

/* ---- lifecycle ---- */

int noderesource_controller_new(struct kube_client *client, const struct noderesource_opts *opts,
                                struct noderesource_controller **ret)
{
    struct noderesource_controller *c = xcalloc(1, sizeof(*c));

    if (!opts->slo || !opts->nodemetrics) {
        free(c);
        return -EINVAL;
    }
    c->client = client;
    c->o = *opts;
    c->nworkers = opts->workers ? opts->workers : DEFAULT_WORKERS;
    if (c->nworkers > MAX_WORKERS)
        c->nworkers = MAX_WORKERS;
    atomic_init(&c->started, false);
    CHECK(pthread_mutex_init(&c->lock, NULL) == 0);
    c->q = kube_workqueue_new(&(struct kube_workqueue_opts){0});
    c->nodes = kube_informer_new(client, &(struct kube_informer_opts){.resource = &kube_res_nodes});
    c->pods = kube_informer_new(
        client, &(struct kube_informer_opts){.resource = &kube_res_pods, .index_node_name = true});
    CHECK(kube_informer_add_handlers(
              c->nodes, &(struct kube_handlers){node_event, node_update, node_event, c}) == 0);
    CHECK(kube_informer_add_handlers(
              c->pods, &(struct kube_handlers){pod_event, pod_update, pod_event, c}) == 0);
    *ret = c;
    return 0;
}

int noderesource_controller_add_handlers(struct noderesource_controller *c,
                                         const struct kube_handlers *nodes,
                                         const struct kube_handlers *pods)
{
    int r = 0;

    if (nodes)
        r = kube_informer_add_handlers(c->nodes, nodes);
    if (r == 0 && pods)
        r = kube_informer_add_handlers(c->pods, pods);
    return r;
}

int noderesource_controller_start(struct noderesource_controller *c, int64_t not_before_ms)
{
    int r;

    c->not_before_ms = not_before_ms;
    atomic_store(&c->started, true);
    if ((r = kube_informer_start(c->nodes)) < 0 || (r = kube_informer_start(c->pods)) < 0)
        return r;
    if (!kube_informer_wait_synced(c->nodes, 60000) || !kube_informer_wait_synced(c->pods, 60000))
        return -ETIMEDOUT;
    for (unsigned i = 0; i < c->nworkers; i++) {
        if ((r = pthread_create(&c->workers[i], NULL, worker, c)) != 0)
            return -r;
        c->running++;
    }
    return 0;
}

void noderesource_controller_stats(struct noderesource_controller *c,
                                   struct noderesource_stats *ret)
{
    (void)pthread_mutex_lock(&c->lock);
    *ret = c->stats;
    (void)pthread_mutex_unlock(&c->lock);
}

struct kube_object *noderesource_controller_node(struct noderesource_controller *c,
                                                 const char *name)
{
    return kube_informer_get(c->nodes, name);
}

struct kube_object *noderesource_controller_pod(struct noderesource_controller *c, const char *key)
{
    return kube_informer_get(c->pods, key);
}

void noderesource_controller_stop(struct noderesource_controller *c)
{
    if (!c || c->stopped)
        return;
    c->stopped = true;
    atomic_store(&c->started, false);
    kube_informer_stop(c->nodes);
    kube_informer_stop(c->pods);
    kube_workqueue_shutdown_drain(c->q);
    for (unsigned i = 0; i < c->running; i++)
        (void)pthread_join(c->workers[i], NULL);
}

void noderesource_controller_free(struct noderesource_controller *c)
{
    if (!c)
        return;
    noderesource_controller_stop(c);
    kube_informer_free(c->nodes);
    kube_informer_free(c->pods);
    kube_workqueue_free(c->q);
    for (size_t i = 0; i < c->nwrites; i++)
        free(c->writes[i].node);
    free(c->writes);
    (void)pthread_mutex_destroy(&c->lock);
    free(c);
}
