/*
 * koord manager: wiring of leader election, the controllers and the HTTPS port (manager.h).
 *
 * Leadership start-up runs on its own thread, because the elector's callbacks must return at
 * once and waiting for informer caches takes a while: activate the NodeMetric API with the new
 * term as epoch, start the NodeSLO controller (which also tells which nodes exist), write every
 * node's NodeMetric spec, start the NodeResource controller, register the APIService, and only
 * then answer /readyz 200.
 */
#include "manager/manager.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apiserver/apiserver.h"
#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "http/server.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "kube/leader.h"
#include "kube/workqueue.h"
#include "manager/metricsk8s/metricsk8s.h"
#include "manager/nodemetric/auth.h"
#include "manager/nodemetric/crd.h"
#include "manager/nodemetric/nodemetric.h"
#include "manager/noderesource/controller.h"
#include "manager/nodeslo/nodeslo.h"
#include "manager/quotaprofile/quotaprofile.h"
#include "manager/recommendation/controller.h"
#include "manager/ui/ui.h"
#include "manager/webhook/server.h"

struct manager {
    struct manager_opts o;
    struct nodemetric_auth *auth;
    struct nodemetric_server *nm;
    struct metricsk8s_server *top; /* metrics.k8s.io from nm */
    struct nodeslo_controller *slo;
    struct noderesource_controller *nr;
    struct quotaprofile_controller *qp;
    struct rec_controller *rec;
    struct ui_server *ui; /* the /ui dashboard */
    struct kube_leader *le;
    struct http_server *http;
    struct webhook_server *webhook;
    char *ca_bundle;

    /* NodeMetric specs follow the NodeSLO controller's view of nodes and config. */
    struct kube_workqueue *specq;
    pthread_t spec_worker;
    bool spec_worker_started;
    atomic_bool crd; /* the slo.koordinator.sh NodeMetric objects follow the specs too */
    struct nodemetric_crd_watch *crdw; /* those objects; NULL with --nodemetric-crd=false */

    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool leading; /* became leader: the start-up thread has work */
    bool stopping;
    atomic_bool ready; /* start-up done */
    atomic_bool fatal;
    pthread_t starter;
    bool starter_started;
};

static void fatal(struct manager *m, const char *why)
{
    if (atomic_exchange(&m->fatal, true))
        return;
    log_error("manager", "%s", why);
    if (m->o.on_fatal)
        m->o.on_fatal(m->o.userdata, why);
}

/* ---- NodeMetric specs (manager-behaviour.md 3) ---- */

static void on_node(void *userdata, const char *node, bool added)
{
    struct manager *m = userdata;

    (void)added;
    kube_workqueue_add(m->specq, node);
    /* A configuration change reaches every node this way: batch resources follow it too. */
    noderesource_controller_enqueue(m->nr, node);
}

/*
 * The NodeMetric spec of node in the in-memory API and, with crd, in the slo.koordinator.sh
 * object (created, updated, or deleted with its Node, as upstream's NodeMetric controller does;
 * while colocation-config is in error an existing object's spec is kept, manager-behaviour.md 3).
 */
static int sync_spec(struct manager *m, const char *node, bool crd)
{
    cJSON *spec = NULL;
    int r = nodeslo_controller_nodemetric_spec(m->slo, node, &spec);

    if (r == -ENOENT) {
        r = nodemetric_server_remove(m->nm, node);
        if (r == 0 && crd)
            r = nodemetric_crd_delete(m->o.client, node);
        return r;
    }
    if (r < 0)
        return r;
    r = nodemetric_server_set_spec(m->nm, node, spec);
    if (r == 0 && crd)
        r = nodemetric_crd_apply(m->o.client, node, spec,
                                 nodeslo_controller_colocation_error(m->slo));
    cJSON_Delete(spec);
    return r;
}

static void *spec_worker(void *arg)
{
    struct manager *m = arg;
    char *key;

    while (kube_workqueue_get(m->specq, &key) == 0) {
        int r = sync_spec(m, key, atomic_load(&m->crd));
        if (r == 0) {
            kube_workqueue_forget(m->specq, key);
        } else {
            /* -EAGAIN: the configuration is not read yet (leader start-up): expected. */
            if (r == -EAGAIN)
                log_debug("manager", "NodeMetric spec of node \"%s\": not ready, retrying", key);
            else
                log_warn("manager", "NodeMetric spec of node \"%s\": %s, retrying", key,
                         err_str(r));
            kube_workqueue_add_rate_limited(m->specq, key);
        }
        kube_workqueue_done(m->specq, key);
        free(key);
    }
    return NULL;
}

/* ---- standalone registration ---- */

static const struct kube_resource res_services = {"", "v1", "services", "Service", true};
static const struct kube_resource res_endpoints = {"", "v1", "endpoints", "Endpoints", true};
static const struct kube_resource res_apiservices = {"apiregistration.k8s.io", "v1", "apiservices",
                                                     "APIService", false};

/* Creates obj, or replaces the existing one's spec-like members with obj's. */
static int upsert_once(struct manager *m, const struct kube_resource *res, const char *ns,
                       cJSON *obj, const char *const *members)
{
    const char *name =
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"), "name"));
    cJSON *cur = NULL;
    int r = kube_get(m->o.client, res, ns, name, &cur, NULL);

    if (r == -ENOENT)
        return kube_create(m->o.client, res, ns, obj, NULL, NULL);
    if (r < 0)
        return r;
    for (const char *const *k = members; *k; k++) {
        cJSON *v = cJSON_GetObjectItem(obj, *k);
        if (!v)
            continue;
        cJSON_DeleteItemFromObjectCaseSensitive(cur, *k);
        CHECK(cJSON_AddItemToObject(cur, *k, cJSON_Duplicate(v, true)));
    }
    r = kube_update(m->o.client, res, ns, cur, NULL, NULL, NULL);
    cJSON_Delete(cur);
    return r;
}

/* upsert_once, read again on a conflict: the API server writes an APIService's status as soon
 * as its Endpoints change, between our read and our write. */
static int upsert(struct manager *m, const struct kube_resource *res, const char *ns, cJSON *obj,
                  const char *const *members)
{
    int r = -ESTALE;

    for (int i = 0; i < 5 && (r == -ESTALE || r == -EEXIST); i++)
        r = upsert_once(m, res, ns, obj, members);
    return r;
}

/* "IP:PORT" (an Endpoints address must be an IP; port 0 = the port served on): 0 or -EINVAL. */
static int parse_register_address(const char *addr, struct strbuf *ret_host, uint32_t *ret_port)
{
    const char *colon = strrchr(addr, ':');
    unsigned char buf[sizeof(struct in6_addr)];
    uint32_t port;

    if (!colon || parse_u32(colon + 1, &port) < 0 || port > 65535)
        return -EINVAL;
    strbuf_reset(ret_host);
    strbuf_add(ret_host, addr, (size_t)(colon - addr));
    if (inet_pton(AF_INET, ret_host->buf, buf) != 1 && inet_pton(AF_INET6, ret_host->buf, buf) != 1)
        return -EINVAL;
    *ret_port = port;
    return 0;
}

/* The APIService of group/version pointing at our Service. */
static int upsert_apiservice(struct manager *m, const char *group, const char *version,
                             int group_priority, const char *ca_base64)
{
    static const char *const members[] = {"spec", NULL};
    struct strbuf json = STRBUF_INIT;
    cJSON *obj;
    int r;

    strbuf_addf(&json,
                "{\"apiVersion\":\"apiregistration.k8s.io/v1\",\"kind\":\"APIService\","
                "\"metadata\":{\"name\":\"%s.%s\"},\"spec\":{\"group\":\"%s\",\"version\":\"%s\","
                "\"service\":{\"namespace\":\"%s\",\"name\":\"%s\",\"port\":443},"
                "\"caBundle\":\"%s\",\"groupPriorityMinimum\":%d,\"versionPriority\":100}}",
                version, group, group, version, MANAGER_DEFAULT_NAMESPACE, MANAGER_SERVICE_NAME,
                ca_base64, group_priority);
    CHECK(obj = cJSON_Parse(json.buf));
    r = upsert(m, &res_apiservices, NULL, obj, members);
    cJSON_Delete(obj);
    strbuf_release(&json);
    return r;
}

static int register_apiservice(struct manager *m)
{
    static const char *const svc_members[] = {"spec", NULL};
    static const char *const ep_members[] = {"subsets", NULL};
    struct strbuf host = STRBUF_INIT, json = STRBUF_INIT, ca = STRBUF_INIT;
    cJSON *obj = NULL;
    uint32_t port;
    int r;

    CHECK(parse_register_address(m->o.register_address, &host, &port) == 0); /* at start */
    if (port == 0)
        port = http_server_port(m->http);
    strbuf_add_base64(&ca, m->o.register_ca_pem, strlen(m->o.register_ca_pem));
    strbuf_addf(&json,
                "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"%s\","
                "\"namespace\":\"%s\"},\"spec\":{\"ports\":[{\"name\":\"https\",\"port\":443,"
                "\"targetPort\":%u}]}}",
                MANAGER_SERVICE_NAME, MANAGER_DEFAULT_NAMESPACE, port);
    CHECK(obj = cJSON_Parse(json.buf));
    r = upsert(m, &res_services, MANAGER_DEFAULT_NAMESPACE, obj, svc_members);
    cJSON_Delete(obj);
    if (r < 0)
        goto out;
    strbuf_reset(&json);
    strbuf_addf(&json,
                "{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\",\"metadata\":{\"name\":\"%s\","
                "\"namespace\":\"%s\"},\"subsets\":[{\"addresses\":[{\"ip\":\"%s\"}],"
                "\"ports\":[{\"name\":\"https\",\"port\":%u}]}]}",
                MANAGER_SERVICE_NAME, MANAGER_DEFAULT_NAMESPACE, host.buf, port);
    CHECK(obj = cJSON_Parse(json.buf));
    r = upsert(m, &res_endpoints, MANAGER_DEFAULT_NAMESPACE, obj, ep_members);
    cJSON_Delete(obj);
    if (r < 0)
        goto out;
    /* metrics.k8s.io: groupPriorityMinimum 100 and versionPriority 100, as metrics-server's */
    if ((r = upsert_apiservice(m, NODEMETRIC_GROUP, NODEMETRIC_VERSION, 1000, ca.buf)) < 0)
        goto out;
    r = upsert_apiservice(m, METRICSK8S_GROUP, METRICSK8S_VERSION, 100, ca.buf);
out:
    strbuf_release(&host);
    strbuf_release(&json);
    strbuf_release(&ca);
    return r;
}

/* ---- leadership ---- */

static int64_t now_ms(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * The slo.koordinator.sh NodeMetric objects (crd.h). With --nodemetric-crd=true the manager
 * keeps them from the start (failures are retried); with auto from when the watch's first
 * list succeeds, which is at once when the CRD is installed, or within the informer's backoff
 * after someone installs it. Either way every Node's object is then written, and the watch
 * hands over every existing object, so those of Nodes that are gone are deleted (upstream's
 * controller sees them in its NodeMetric informer's first list).
 */
/* How long a CRD installed after this manager started leading may go unnoticed: the watch's
 * list retries at most this far apart while the CRD is absent (one small 404 each). */
#define CRD_RETRY_MAX_MS 10000

static void on_crd_served(void *userdata)
{
    struct manager *m = userdata;
    struct kube_object **nodes = NULL;
    size_t n;

    if (!atomic_exchange(&m->crd, true))
        log_info("manager", "the slo.koordinator.sh NodeMetric CRD is served: keeping one "
                            "NodeMetric object per Node");
    n = nodeslo_controller_nodes(m->slo, &nodes);
    for (size_t i = 0; i < n; i++)
        kube_workqueue_add(m->specq, kube_object_name(nodes[i]));
    kube_objects_free(nodes, n);
}

/* An object appeared, changed its spec or was deleted: the spec worker puts it right. */
static void on_crd_object(void *userdata, const char *node)
{
    struct manager *m = userdata;
    kube_workqueue_add(m->specq, node);
}

/* An agent in crd mode reported: batch resources follow, as with in-memory reports. */
static void on_crd_status(void *userdata, const char *node)
{
    struct manager *m = userdata;
    noderesource_controller_enqueue(m->nr, node);
}

static int start_crd(struct manager *m, struct kube_object **nodes, size_t n)
{
    if (!m->crdw)
        return 0;
    if (m->o.nodemetric_crd == MANAGER_NODEMETRIC_CRD_ON) {
        atomic_store(&m->crd, true);
        log_info("manager", "keeping one slo.koordinator.sh NodeMetric object per Node");
        for (size_t i = 0; i < n; i++)
            kube_workqueue_add(m->specq, kube_object_name(nodes[i]));
    } else if (nodemetric_crd_served(m->o.client) == 0) { /* auto; only for the log */
        log_info("manager", "the slo.koordinator.sh NodeMetric CRD is not installed: NodeMetric "
                            "objects will be kept once it is");
    }
    return nodemetric_crd_watch_start(m->crdw);
}

static int lead(struct manager *m)
{
    uint64_t epoch = (uint64_t)kube_leader_transitions(m->le) + 1;
    struct kube_object **nodes = NULL;
    const char *what;
    size_t n;
    int r;

    what = "serve NodeMetrics";
    if ((r = nodemetric_server_activate(m->nm, epoch)) < 0)
        goto fail;
    log_info("manager", "leading (term %llu): NodeMetric resourceVersions start at %llu",
             (unsigned long long)epoch, (unsigned long long)(epoch << 40));
    what = "start the NodeMetric spec worker";
    if ((r = -pthread_create(&m->spec_worker, NULL, spec_worker, m)) < 0)
        goto fail;
    m->spec_worker_started = true;
    what = "start the NodeSLO controller";
    if ((r = nodeslo_controller_start(m->slo)) < 0)
        goto fail;
    n = nodeslo_controller_nodes(m->slo, &nodes);
    for (size_t i = 0; i < n; i++)
        (void)sync_spec(m, kube_object_name(nodes[i]), false);
    what = "watch the slo.koordinator.sh NodeMetrics";
    r = start_crd(m, nodes, n);
    kube_objects_free(nodes, n);
    if (r < 0)
        goto fail;
    what = "start the dashboard";
    if ((r = ui_server_start(m->ui)) < 0)
        goto fail;
    what = "start the NodeResource controller";
    if ((r = noderesource_controller_start(m->nr, now_ms())) < 0)
        goto fail;
    what = "start the ElasticQuotaProfile controller";
    if ((r = quotaprofile_controller_start(m->qp)) < 0 && r != -ENOENT)
        goto fail;
    what = "start the Recommendation controller";
    if (m->rec && (r = rec_controller_start(m->rec)) < 0 && r != -ENOENT)
        goto fail;
    what = "register the NodeMetric and metrics.k8s.io APIServices";
    if (m->o.register_address && (r = register_apiservice(m)) < 0)
        goto fail;
    atomic_store(&m->ready, true);
    log_info("manager", "ready: controllers running, NodeMetric API served");
    return 0;
fail:
    log_error("manager", "cannot %s: %s", what, err_str(r));
    return r;
}

static void *starter(void *arg)
{
    struct manager *m = arg;
    bool go;

    (void)pthread_mutex_lock(&m->lock);
    while (!m->leading && !m->stopping)
        (void)pthread_cond_wait(&m->cond, &m->lock);
    go = m->leading && !m->stopping;
    (void)pthread_mutex_unlock(&m->lock);
    if (go && lead(m) < 0)
        fatal(m, "leader start-up failed");
    return NULL;
}

static void on_started_leading(void *userdata)
{
    struct manager *m = userdata;

    (void)pthread_mutex_lock(&m->lock);
    m->leading = true;
    (void)pthread_cond_broadcast(&m->cond);
    (void)pthread_mutex_unlock(&m->lock);
}

static void on_stopped_leading(void *userdata)
{
    struct manager *m = userdata;
    bool stopping;

    (void)pthread_mutex_lock(&m->lock);
    stopping = m->stopping;
    (void)pthread_mutex_unlock(&m->lock);
    atomic_store(&m->ready, false);
    if (!stopping)
        fatal(m, "lost the leader lease; stopping so that a fresh process can stand by");
}

static void on_new_leader(void *userdata, const char *identity)
{
    (void)userdata;
    log_info("manager", "the leader is now \"%s\"", identity && *identity ? identity : "(none)");
}

/* ---- the HTTPS port ---- */

static void render_metrics(struct manager *m, struct strbuf *out)
{
    struct nodeslo_stats ss = {0};
    struct noderesource_stats rs = {0};
    struct nodemetric_stats ns = {0};
    struct nodemetric_auth_stats as;
    struct quotaprofile_stats qs = {0};
    struct rec_stats rcs = {0};

    quotaprofile_controller_stats(m->qp, &qs);
    if (m->rec)
        rec_controller_stats(m->rec, &rcs);
    nodeslo_controller_stats(m->slo, &ss);
    noderesource_controller_stats(m->nr, &rs);
    nodemetric_server_stats(m->nm, &ns);
    nodemetric_auth_stats(m->auth, &as);
    strbuf_addf(out,
                "# HELP koord_manager_leader Whether this manager leads and serves.\n"
                "# TYPE koord_manager_leader gauge\nkoord_manager_leader %d\n",
                atomic_load(&m->ready) ? 1 : 0);
    strbuf_addf(out,
                "# HELP koord_manager_reconciles_total Reconciles by controller.\n"
                "# TYPE koord_manager_reconciles_total counter\n"
                "koord_manager_reconciles_total{controller=\"nodeslo\"} %lu\n"
                "koord_manager_reconciles_total{controller=\"noderesource\"} %lu\n"
                "koord_manager_reconciles_total{controller=\"quotaprofile\"} %lu\n"
                "koord_manager_reconciles_total{controller=\"recommendation\"} %lu\n"
                "# HELP koord_manager_reconcile_errors_total Failed reconciles (retried).\n"
                "# TYPE koord_manager_reconcile_errors_total counter\n"
                "koord_manager_reconcile_errors_total{controller=\"nodeslo\"} %lu\n"
                "koord_manager_reconcile_errors_total{controller=\"noderesource\"} %lu\n"
                "koord_manager_reconcile_errors_total{controller=\"quotaprofile\"} %lu\n"
                "koord_manager_reconcile_errors_total{controller=\"recommendation\"} %lu\n"
                "# HELP koord_manager_reconcile_duration_seconds Time spent reconciling.\n"
                "# TYPE koord_manager_reconcile_duration_seconds summary\n"
                "koord_manager_reconcile_duration_seconds_sum{controller=\"nodeslo\"} %.6f\n"
                "koord_manager_reconcile_duration_seconds_count{controller=\"nodeslo\"} %lu\n"
                "koord_manager_reconcile_duration_seconds_sum{controller=\"noderesource\"} %.6f\n"
                "koord_manager_reconcile_duration_seconds_count{controller=\"noderesource\"} "
                "%lu\n"
                "koord_manager_reconcile_duration_seconds_sum{controller=\"quotaprofile\"} %.6f\n"
                "koord_manager_reconcile_duration_seconds_count{controller=\"quotaprofile\"} "
                "%lu\n"
                "koord_manager_reconcile_duration_seconds_sum{controller=\"recommendation\"} "
                "%.6f\n"
                "koord_manager_reconcile_duration_seconds_count{controller=\"recommendation\"} "
                "%lu\n",
                ss.reconciles, rs.reconciles, qs.reconciles, rcs.reconciles, ss.errors, rs.errors,
                qs.errors, rcs.errors, ss.latency_sum_s, ss.reconciles, rs.latency_sum_s,
                rs.reconciles, qs.latency_sum_s, qs.reconciles, rcs.latency_sum_s, rcs.reconciles);
    strbuf_addf(out,
                "# HELP koord_manager_node_writes_total Node status writes of batch resources.\n"
                "# TYPE koord_manager_node_writes_total counter\n"
                "koord_manager_node_writes_total %lu\n"
                "# HELP koord_manager_nodemetric_reports_total NodeMetric status writes "
                "accepted.\n"
                "# TYPE koord_manager_nodemetric_reports_total counter\n"
                "koord_manager_nodemetric_reports_total %lu\n"
                "# HELP koord_manager_nodemetric_objects NodeMetrics held in memory.\n"
                "# TYPE koord_manager_nodemetric_objects gauge\n"
                "koord_manager_nodemetric_objects %lu\n"
                "# HELP koord_manager_tokenreviews_total TokenReviews sent (cache misses).\n"
                "# TYPE koord_manager_tokenreviews_total counter\n"
                "koord_manager_tokenreviews_total %lu\n"
                "# HELP koord_manager_tokenreviews_throttled_total Bearer tokens answered 401 "
                "without a TokenReview: over the TokenReview rate.\n"
                "# TYPE koord_manager_tokenreviews_throttled_total counter\n"
                "koord_manager_tokenreviews_throttled_total %lu\n"
                "# HELP koord_manager_tokens_cached_denied_total Bearer tokens answered 401 from "
                "the cache of failed TokenReviews.\n"
                "# TYPE koord_manager_tokens_cached_denied_total counter\n"
                "koord_manager_tokens_cached_denied_total %lu\n",
                rs.node_writes, ns.reports, ns.objects, as.reviews, as.throttled, as.cached_denied);
    strbuf_addf(out,
                "# HELP koord_manager_recommendation_samples_total Container usage samples "
                "added to Recommendation histograms.\n"
                "# TYPE koord_manager_recommendation_samples_total counter\n"
                "koord_manager_recommendation_samples_total %lu\n"
                "# HELP koord_manager_recommendation_report_seconds Time spent reading "
                "NodeMetric reports for Recommendations.\n"
                "# TYPE koord_manager_recommendation_report_seconds summary\n"
                "koord_manager_recommendation_report_seconds_sum %.6f\n"
                "koord_manager_recommendation_report_seconds_count %lu\n"
                "# HELP koord_manager_recommendation_writes_total Recommendation status and "
                "checkpoint writes.\n"
                "# TYPE koord_manager_recommendation_writes_total counter\n"
                "koord_manager_recommendation_writes_total{kind=\"status\"} %lu\n"
                "koord_manager_recommendation_writes_total{kind=\"checkpoint\"} %lu\n",
                rcs.samples, rcs.report_sum_s, rcs.reports, rcs.status_writes,
                rcs.checkpoint_writes);
    nodemetric_server_render_metrics(m->nm, out);
    if (m->webhook) {
        struct webhook_server_stats ws;
        webhook_server_stats(m->webhook, &ws);
        strbuf_addf(out,
                    "# HELP koord_manager_webhook_reviews_total AdmissionReviews answered.\n"
                    "# TYPE koord_manager_webhook_reviews_total counter\n"
                    "koord_manager_webhook_reviews_total %lu\n"
                    "# HELP koord_manager_webhook_denied_total AdmissionReviews answered with "
                    "allowed=false.\n"
                    "# TYPE koord_manager_webhook_denied_total counter\n"
                    "koord_manager_webhook_denied_total %lu\n"
                    "# HELP koord_manager_webhook_patched_total AdmissionReviews answered with a "
                    "patch.\n"
                    "# TYPE koord_manager_webhook_patched_total counter\n"
                    "koord_manager_webhook_patched_total %lu\n",
                    ws.reviews, ws.denied, ws.patched);
    }
}

static void reply_text(struct http_response *resp, int code, const char *text)
{
    resp->status = code;
    resp->content_type = "text/plain; charset=utf-8";
    strbuf_addstr(&resp->body, text);
}

static void handle(const struct http_request *req, struct http_response *resp, void *userdata)
{
    struct manager *m = userdata;
    const char *path = http_request_path(req);

    if (!strcmp(path, "/healthz") || !strcmp(path, "/livez")) {
        reply_text(resp, 200, "ok");
    } else if (!strcmp(path, "/readyz")) {
        if (!atomic_load(&m->ready))
            reply_text(resp, 503, "not the leader");
        else if (m->webhook && !webhook_server_ready(m->webhook))
            reply_text(resp, 503, "webhook-ready: informers not synced");
        else
            reply_text(resp, 200, "ok");
    } else if (!strcmp(path, "/metrics")) {
        resp->status = 200;
        resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
        render_metrics(m, &resp->body);
    } else if (ui_server_path(path)) {
        ui_server_handle(req, resp, m->ui);
    } else if (metricsk8s_path(path)) {
        metricsk8s_server_handle(req, resp, m->top);
    } else {
        nodemetric_server_handle(req, resp, m->nm);
    }
}

/* ---- lifecycle ---- */

static struct kube_object *top_node(void *userdata, const char *name)
{
    struct manager *m = userdata;
    return noderesource_controller_node(m->nr, name);
}

static struct kube_object *top_pod(void *userdata, const char *ns_name)
{
    struct manager *m = userdata;
    return noderesource_controller_pod(m->nr, ns_name);
}

static void on_report(void *userdata, const char *node)
{
    struct manager *m = userdata;
    noderesource_controller_enqueue(m->nr, node);
    rec_controller_on_report(m->rec, node);
    ui_server_on_report(m->ui, node);
}

int manager_start(const struct manager_opts *opts, struct manager **ret)
{
    struct manager *m = xcalloc(1, sizeof(*m));
    struct strbuf bundle = STRBUF_INIT;
    int r;

    if (opts->register_address) {
        uint32_t port;
        struct strbuf host = STRBUF_INIT;
        r = parse_register_address(opts->register_address, &host, &port);
        strbuf_release(&host);
        if (r < 0 || !opts->register_ca_pem) {
            free(m);
            return -EINVAL;
        }
    }
    m->o = *opts;
    CHECK(pthread_mutex_init(&m->lock, NULL) == 0);
    CHECK(pthread_cond_init(&m->cond, NULL) == 0);
    m->specq = kube_workqueue_new(&(struct kube_workqueue_opts){0});
    r = nodemetric_auth_new(
        &(struct nodemetric_auth_opts){.client_ca_pem = opts->client_ca_pem,
                                       .requestheader_ca_pem = opts->requestheader_ca_pem,
                                       .allowed_names = opts->allowed_names,
                                       .tokenreview = opts->token_review ? opts->client : NULL,
                                       .admin_group = opts->admin_group},
        &m->auth);
    if (r < 0)
        goto fail;
    if ((r = nodemetric_server_new(&(struct nodemetric_opts){.auth = nodemetric_auth_hooks(m->auth),
                                                             .history = opts->nodemetric_history},
                                   &m->nm)) < 0)
        goto fail;
    nodemetric_server_set_listener(m->nm, on_report, m);
    if ((r = nodeslo_controller_new(
             opts->client,
             &(struct nodeslo_opts){.config_namespace = opts->config_namespace,
                                    .config_name = opts->config_name,
                                    .on_node = on_node,
                                    .userdata = m},
             &m->slo)) < 0)
        goto fail;
    if (opts->nodemetric_crd != MANAGER_NODEMETRIC_CRD_OFF)
        m->crdw = nodemetric_crd_watch_new(
            opts->client, &(struct nodemetric_crd_watch_opts){.on_served = on_crd_served,
                                                              .on_object = on_crd_object,
                                                              .on_status = on_crd_status,
                                                              .userdata = m,
                                                              .backoff_max_ms = CRD_RETRY_MAX_MS});
    if ((r = noderesource_controller_new(
             opts->client,
             &(struct noderesource_opts){.slo = m->slo,
                                         .nodemetrics = m->nm,
                                         .crd = m->crdw,
                                         .degrade_scale_ms = opts->degrade_scale_ms},
             &m->nr)) < 0)
        goto fail;
    if ((r = ui_server_new(&(struct ui_opts){.client = opts->client,
                                             .auth = m->auth,
                                             .nodemetrics = m->nm,
                                             .session_ttl_ms = opts->ui_session_ttl_ms},
                           &m->ui)) < 0)
        goto fail;
    {
        struct kube_handlers nodes, pods;
        ui_server_handlers(m->ui, &nodes, &pods);
        if ((r = noderesource_controller_add_handlers(m->nr, &nodes, &pods)) < 0)
            goto fail;
    }
    m->top = metricsk8s_server_new(
        &(struct metricsk8s_opts){.nodemetrics = m->nm,
                                  .auth = nodemetric_auth_hooks(m->auth),
                                  .lookup = {.node = top_node, .pod = top_pod, .userdata = m}});
    if ((r = quotaprofile_controller_new(opts->client, NULL, &m->qp)) < 0)
        goto fail;
    if (!opts->recommendation_off) {
        struct rec_opts ro = {.nodemetrics = m->nm,
                              .interval_ms = opts->recommendation_interval_ms,
                              .checkpoint_ms = opts->recommendation_checkpoint_ms};
        if (opts->recommendation_params)
            ro.params = *opts->recommendation_params;
        if ((r = rec_controller_new(opts->client, &ro, &m->rec)) < 0)
            goto fail;
    }
    if (opts->client_ca_pem)
        strbuf_addstr(&bundle, opts->client_ca_pem);
    if (opts->requestheader_ca_pem) {
        if (bundle.len && bundle.buf[bundle.len - 1] != '\n')
            strbuf_addch(&bundle, '\n');
        strbuf_addstr(&bundle, opts->requestheader_ca_pem);
    }
    m->ca_bundle = bundle.len ? strbuf_detach(&bundle, NULL) : NULL;
    strbuf_release(&bundle);
    r = http_server_start(
        &(struct http_server_opts){.host = opts->host,
                                   .port = opts->port,
                                   .max_connections = opts->limits.max_connections,
                                   .max_per_address = opts->limits.max_per_address,
                                   .cert_pem = opts->cert_pem,
                                   .key_pem = opts->key_pem,
                                   .client_ca_pem = m->ca_bundle},
        handle, m, &m->http);
    if (r < 0)
        goto fail;
    if (opts->webhooks) {
        struct webhook_server_opts wo = {.client = opts->client,
                                         .config = opts->webhook_config,
                                         .host =
                                             opts->webhook_host ? opts->webhook_host : opts->host,
                                         .port = opts->webhook_port,
                                         .cert_pem = opts->webhook_cert_pem,
                                         .key_pem = opts->webhook_key_pem,
                                         .ca_pem = opts->webhook_ca_pem,
                                         .register_address = opts->register_webhooks};
        if (!wo.config.config_namespace)
            wo.config.config_namespace = opts->config_namespace;
        if (!wo.config.config_name)
            wo.config.config_name = opts->config_name;
        if ((r = webhook_server_start(&wo, &m->webhook)) < 0)
            goto fail;
    }
    if ((r = pthread_create(&m->starter, NULL, starter, m)) != 0) {
        r = -r;
        goto fail;
    }
    m->starter_started = true;
    r = kube_leader_new(
        opts->client,
        &(struct kube_leader_opts){
            .namespace = opts->lease_namespace ? opts->lease_namespace : MANAGER_DEFAULT_NAMESPACE,
            .name = opts->lease_name ? opts->lease_name : MANAGER_DEFAULT_LEASE_NAME,
            .identity = opts->identity,
            .lease_ms = opts->lease_ms,
            .renew_deadline_ms = opts->renew_ms,
            .retry_ms = opts->retry_ms,
            .on_started_leading = on_started_leading,
            .on_stopped_leading = on_stopped_leading,
            .on_new_leader = on_new_leader,
            .userdata = m},
        &m->le);
    if (r < 0 || (r = kube_leader_start(m->le)) < 0)
        goto fail;
    log_info("manager", "serving on port %u as \"%s\", campaigning for %s/%s",
             http_server_port(m->http), kube_leader_identity(m->le),
             opts->lease_namespace ? opts->lease_namespace : MANAGER_DEFAULT_NAMESPACE,
             opts->lease_name ? opts->lease_name : MANAGER_DEFAULT_LEASE_NAME);
    *ret = m;
    return 0;
fail:
    manager_stop(m);
    return r;
}

uint16_t manager_webhook_port(const struct manager *m)
{
    return m->webhook ? webhook_server_port(m->webhook) : 0;
}

uint16_t manager_port(const struct manager *m)
{
    return http_server_port(m->http);
}

bool manager_ready(struct manager *m)
{
    return atomic_load(&m->ready);
}

void manager_stop(struct manager *m)
{
    if (!m)
        return;
    (void)pthread_mutex_lock(&m->lock);
    m->stopping = true;
    (void)pthread_cond_broadcast(&m->cond);
    (void)pthread_mutex_unlock(&m->lock);
    if (m->starter_started)
        (void)pthread_join(m->starter, NULL);
    atomic_store(&m->ready, false);
    nodemetric_crd_watch_stop(m->crdw); /* its callbacks enqueue into what stops next */
    rec_controller_stop(m->rec);
    quotaprofile_controller_stop(m->qp);
    noderesource_controller_stop(m->nr);
    nodeslo_controller_stop(m->slo);
    if (m->specq)
        kube_workqueue_shutdown_drain(m->specq);
    if (m->spec_worker_started)
        (void)pthread_join(m->spec_worker, NULL);
    nodemetric_server_stop_watches(m->nm);
    ui_server_stop(m->ui);
    webhook_server_stop(m->webhook);
    http_server_stop(m->http);
    ui_server_free(m->ui);   /* its streams are gone with the HTTP server */
    kube_leader_free(m->le); /* releases the lease so a standby takes over at once */
    rec_controller_free(m->rec);
    quotaprofile_controller_free(m->qp);
    noderesource_controller_free(m->nr);
    nodemetric_crd_watch_free(m->crdw);
    nodeslo_controller_free(m->slo);
    metricsk8s_server_free(m->top);
    nodemetric_server_free(m->nm);
    nodemetric_auth_free(m->auth);
    kube_workqueue_free(m->specq);
    free(m->ca_bundle);
    (void)pthread_cond_destroy(&m->cond);
    (void)pthread_mutex_destroy(&m->lock);
    free(m);
}
