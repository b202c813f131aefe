/*
 * The webhook server (server.h): the HTTPS port in front of webhook_review(), the informers
 * that answer the handlers' lookups, and the maintainer thread that probes resources and keeps
 * the webhook configurations.
 *
 * Lookups borrow informer objects for one request: every reference a lookup takes is kept in
 * the request's hold list and dropped after the response is printed, so a handler's pointers
 * stay valid even if the informer replaces the object meanwhile.
 */
#include "manager/webhook/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/elasticquota.h"
#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "codec/patch.h"
#include "http/server.h"
#include "kube/client.h"
#include "kube/informer.h"

#define COMP "webhook"

static const struct kube_resource res_profiles = {"config.koordinator.sh", "v1alpha1",
                                                  "clustercolocationprofiles",
                                                  "ClusterColocationProfile", false};
static const struct kube_resource res_namespaces = {"", "v1", "namespaces", "Namespace", false};
static const struct kube_resource res_priority_classes = {
    "scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", false};
static const struct kube_resource res_quotas = {"scheduling.sigs.k8s.io", "v1alpha1",
                                                "elasticquotas", "ElasticQuota", true};
static const struct kube_resource res_services = {"", "v1", "services", "Service", true};
static const struct kube_resource res_endpoints = {"", "v1", "endpoints", "Endpoints", true};
static const struct kube_resource res_mutating = {"admissionregistration.k8s.io", "v1",
                                                  "mutatingwebhookconfigurations",
                                                  "MutatingWebhookConfiguration", false};
static const struct kube_resource res_validating = {"admissionregistration.k8s.io", "v1",
                                                    "validatingwebhookconfigurations",
                                                    "ValidatingWebhookConfiguration", false};

enum { INF_PROFILES, INF_NAMESPACES, INF_PRIORITY_CLASSES, INF_QUOTAS, INF_NODES, INF_N };

static const struct kube_resource *const inf_res[INF_N] = {
    [INF_PROFILES] = &res_profiles,
    [INF_NAMESPACES] = &res_namespaces,
    [INF_PRIORITY_CLASSES] = &res_priority_classes,
    [INF_QUOTAS] = &res_quotas,
    [INF_NODES] = &kube_res_nodes,
};

struct webhook_server {
    struct webhook_server_opts o;
    struct http_server *http;
    char *register_host;
    uint32_t register_port;

    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct kube_informer *inf[INF_N]; /* under lock; NULL until served and started */
    bool wanted[INF_N];
    bool probed; /* the first probe pass is done */
    bool stopping;
    bool registered;
    unsigned logged; /* failure kinds already logged (bit per kind) */
    struct webhook_server_stats stats;
    pthread_t thread;
    bool thread_started;
};

/* ---- the lookups of one request ---- */

struct hold {
    struct webhook_server *s;
    struct kube_object **refs;
    size_t n, alloc;
    const cJSON **quota_json, **profile_json, **node_json;
};

static void hold_add(struct hold *h, struct kube_object *o)
{
    if (h->n == h->alloc) {
        h->alloc = h->alloc ? 2 * h->alloc : 8;
        h->refs = xrealloc(h->refs, h->alloc * sizeof(struct kube_object *));
    }
    h->refs[h->n++] = o;
}

static struct kube_informer *informer(struct webhook_server *s, int which)
{
    struct kube_informer *inf;

    (void)pthread_mutex_lock(&s->lock);
    inf = s->inf[which];
    (void)pthread_mutex_unlock(&s->lock);
    return inf;
}

static const cJSON *hold_get(struct hold *h, int which, const char *key)
{
    struct kube_informer *inf = informer(h->s, which);
    struct kube_object *o = inf ? kube_informer_get(inf, key) : NULL;

    if (!o)
        return NULL;
    hold_add(h, o);
    return kube_object_json(o);
}

static const cJSON *ns_get(void *ud, const char *name)
{
    return hold_get(ud, INF_NAMESPACES, name);
}

static const cJSON *pc_get(void *ud, const char *name)
{
    return hold_get(ud, INF_PRIORITY_CLASSES, name);
}

/* Every object of an informer, as borrowed JSON in *ret (freed with the hold). */
static size_t hold_list(struct hold *h, int which, const cJSON ***ret)
{
    struct kube_informer *inf = informer(h->s, which);
    struct kube_object **v = NULL;
    size_t n = inf ? kube_informer_list(inf, NULL, &v) : 0;
    const cJSON **out = xcalloc(n + 1, sizeof(const cJSON *));

    for (size_t i = 0; i < n; i++) {
        out[i] = kube_object_json(v[i]);
        hold_add(h, v[i]);
    }
    free(v);
    *ret = out;
    return n;
}

/* Whether a pod exists that ls/ns selects: one list of limit 1. */
static int any_pod(struct webhook_server *s, const char *ns, const char *selector, bool *ret)
{
    cJSON *list = NULL;
    int r =
        kube_list(s->o.client, &kube_res_pods, ns,
                  &(struct kube_list_opts){.label_selector = selector, .limit = 1}, &list, NULL);

    if (r == 0)
        *ret = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(list, "items")) > 0;
    cJSON_Delete(list);
    return r;
}

/* api_quota_lookup.pods_bound over the API server (server.h says why not an informer). */
static int pods_bound(void *ud, const cJSON *q, bool by_namespace, bool *ret)
{
    struct hold *h = ud;
    const char *name = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(q, "metadata"), "name"));
    const char *annots = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(q, "metadata"),
                                         "annotations"),
        "quota.scheduling.koordinator.sh/namespaces"));
    struct strbuf sel = STRBUF_INIT;
    cJSON *list = NULL, *c;
    int r;

    *ret = false;
    if (!name)
        return 0;
    strbuf_addf(&sel, "quota.scheduling.koordinator.sh/name=%s", name);
    r = any_pod(h->s, NULL, sel.buf, ret);
    strbuf_release(&sel);
    if (r < 0 || *ret || !by_namespace)
        return r;
    if ((r = any_pod(h->s, name, NULL, ret)) < 0 || *ret)
        return r;
    if (annots && json_parse(annots, strlen(annots), NULL, &list, NULL) == 0) {
        cJSON_ArrayForEach(c, list)
        {
            if (cJSON_IsString(c) && ((r = any_pod(h->s, c->valuestring, NULL, ret)) < 0 || *ret))
                break;
        }
    }
    cJSON_Delete(list);
    return r;
}

static void hold_release(struct hold *h)
{
    kube_objects_free(h->refs, h->n);
    free(h->quota_json);
    free(h->profile_json);
    free(h->node_json);
}

/* ---- the HTTPS port ---- */

static void reply_status(struct http_response *resp, int code, const char *reason, const char *msg)
{
    cJSON *st = cJSON_CreateObject();

    CHECK(st);
    CHECK(cJSON_AddStringToObject(st, "kind", "Status"));
    CHECK(cJSON_AddStringToObject(st, "apiVersion", "v1"));
    CHECK(cJSON_AddStringToObject(st, "status", "Failure"));
    CHECK(cJSON_AddStringToObject(st, "message", msg));
    CHECK(cJSON_AddStringToObject(st, "reason", reason));
    CHECK(cJSON_AddNumberToObject(st, "code", code));
    resp->status = code;
    CHECK(json_print(st, &resp->body) == 0);
    cJSON_Delete(st);
}

static void handle(const struct http_request *req, struct http_response *resp, void *userdata)
{
    struct webhook_server *s = userdata;
    const char *path = http_request_path(req), *body;
    struct hold h = {.s = s};
    struct webhook_data d = {0};
    struct strbuf err = STRBUF_INIT;
    struct codec_error cerr = {0};
    cJSON *review = NULL, *out = NULL;
    unsigned needs = 0;
    size_t len;
    int r;

    if (!strcmp(path, "/healthz") || !strcmp(path, "/readyz")) {
        bool ok = !strcmp(path, "/healthz") || webhook_server_ready(s);
        resp->status = ok ? 200 : 503;
        resp->content_type = "text/plain; charset=utf-8";
        strbuf_addstr(&resp->body, ok ? "ok" : "webhook-ready: informers not synced");
        return;
    }
    if (!webhook_path_enabled(&s->o.config, path, &needs)) {
        reply_status(resp, 404, "NotFound", "no webhook is served at this path");
        return;
    }
    if (strcmp(http_request_method(req), "POST")) {
        reply_status(resp, 405, "MethodNotAllowed", "webhooks take POST");
        return;
    }
    body = http_request_body(req, &len);
    if (json_parse(body ? body : "", body ? len : 0, NULL, &review, &cerr) < 0) {
        strbuf_addf(&err, "request body is not JSON: %s", cerr.msg);
        reply_status(resp, 400, "BadRequest", err.buf);
        goto out;
    }
    d.userdata = &h;
    d.namespace_get = ns_get;
    d.priority_class_get = pc_get;
    if (needs & WEBHOOK_NEED_PROFILES)
        d.nprofiles = hold_list(&h, INF_PROFILES, &h.profile_json);
    d.profiles = h.profile_json;
    if (needs & WEBHOOK_NEED_QUOTAS)
        d.quotas.n = hold_list(&h, INF_QUOTAS, &h.quota_json);
    d.quotas.quotas = h.quota_json;
    d.quotas.pods_bound = pods_bound;
    d.quotas.userdata = &h;
    if (needs & WEBHOOK_NEED_NODES)
        d.nnodes = hold_list(&h, INF_NODES, &h.node_json);
    d.nodes = h.node_json;
    r = webhook_review(&s->o.config, path, review, &d, &out, &err);
    if (r < 0) {
        reply_status(resp, r == -ENOENT ? 404 : 400, r == -ENOENT ? "NotFound" : "BadRequest",
                     err.len ? err.buf : err_str(r));
        goto out;
    }
    {
        const cJSON *rr = cJSON_GetObjectItemCaseSensitive(out, "response");
        (void)pthread_mutex_lock(&s->lock);
        s->stats.reviews++;
        s->stats.denied += !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rr, "allowed"));
        s->stats.patched += cJSON_GetObjectItemCaseSensitive(rr, "patch") != NULL;
        (void)pthread_mutex_unlock(&s->lock);
    }
    resp->status = 200;
    CHECK(json_print(out, &resp->body) == 0);
out:
    cJSON_Delete(review);
    cJSON_Delete(out);
    hold_release(&h);
    strbuf_release(&err);
}

/* ---- the maintainer ---- */

enum { LOG_PROBE = 1 << 0, LOG_REGISTER = 1 << 1, LOG_CABUNDLE = 1 << 2 };

static void log_once(struct webhook_server *s, unsigned kind, const char *what, int r)
{
    bool first;

    (void)pthread_mutex_lock(&s->lock);
    first = !(s->logged & kind);
    s->logged |= kind;
    (void)pthread_mutex_unlock(&s->lock);
    if (first)
        log_warn(COMP, "%s: %s, retrying with backoff", what, err_str(r));
    else
        log_debug(COMP, "%s: %s, retrying", what, err_str(r));
}

/* Starts the informers whose resource is served; -EAGAIN while some are not. */
static int probe(struct webhook_server *s)
{
    int missing = 0;

    for (int i = 0; i < INF_N; i++) {
        struct kube_informer *inf;
        cJSON *list = NULL;
        int r;
        if (!s->wanted[i] || informer(s, i))
            continue;
        r = kube_list(s->o.client, inf_res[i], NULL, &(struct kube_list_opts){.limit = 1}, &list,
                      NULL);
        cJSON_Delete(list);
        if (r < 0) {
            missing++;
            log_once(s, LOG_PROBE, "a resource the webhooks read is not served", r);
            continue;
        }
        inf = kube_informer_new(s->o.client, &(struct kube_informer_opts){.resource = inf_res[i]});
        if (kube_informer_start(inf) < 0) {
            kube_informer_free(inf);
            missing++;
            continue;
        }
        (void)pthread_mutex_lock(&s->lock);
        s->inf[i] = inf;
        (void)pthread_mutex_unlock(&s->lock);
    }
    (void)pthread_mutex_lock(&s->lock);
    s->probed = true;
    (void)pthread_mutex_unlock(&s->lock);
    return missing ? -EAGAIN : 0;
}

/* Creates obj or replaces the stored one's members with obj's. */
static int upsert(struct webhook_server *s, const struct kube_resource *res, const char *ns,
                  cJSON *obj, const char *const *members)
{
    const char *name =
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"), "name"));
    int r = -ESTALE;

    for (int i = 0; i < 5 && (r == -ESTALE || r == -EEXIST); i++) {
        cJSON *cur = NULL;
        bool same = true;
        r = kube_get(s->o.client, res, ns, name, &cur, NULL);
        if (r == -ENOENT) {
            r = kube_create(s->o.client, res, ns, obj, NULL, NULL);
            continue;
        }
        if (r < 0)
            break;
        for (const char *const *k = members; *k; k++) {
            cJSON *v = cJSON_GetObjectItem(obj, *k);
            if (!v || json_value_equal(v, cJSON_GetObjectItem(cur, *k)))
                continue;
            same = false;
            cJSON_DeleteItemFromObjectCaseSensitive(cur, *k);
            CHECK(cJSON_AddItemToObject(cur, *k, cJSON_Duplicate(v, true)));
        }
        r = same ? 0 : kube_update(s->o.client, res, ns, cur, NULL, NULL, NULL);
        cJSON_Delete(cur);
    }
    return r;
}

static int register_all(struct webhook_server *s)
{
    static const char *const svc_members[] = {"spec", NULL};
    static const char *const ep_members[] = {"subsets", NULL};
    static const char *const wh_members[] = {"webhooks", NULL};
    uint32_t port = s->register_port ? s->register_port : http_server_port(s->http);
    struct strbuf json = STRBUF_INIT;
    cJSON *obj, *m = NULL, *v = NULL;
    int r;

    strbuf_addf(&json,
                "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"%s\","
                "\"namespace\":\"koordinator-system\"},\"spec\":{\"ports\":[{\"name\":\"https\","
                "\"port\":443,\"targetPort\":%u}]}}",
                WEBHOOK_SERVICE_NAME, port);
    CHECK(obj = cJSON_Parse(json.buf));
    r = upsert(s, &res_services, "koordinator-system", obj, svc_members);
    cJSON_Delete(obj);
    if (r < 0)
        goto out;
    strbuf_reset(&json);
    strbuf_addf(&json,
                "{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\",\"metadata\":{\"name\":\"%s\","
                "\"namespace\":\"koordinator-system\"},\"subsets\":[{\"addresses\":[{\"ip\":"
                "\"%s\"}],\"ports\":[{\"name\":\"https\",\"port\":%u}]}]}",
                WEBHOOK_SERVICE_NAME, s->register_host, port);
    CHECK(obj = cJSON_Parse(json.buf));
    r = upsert(s, &res_endpoints, "koordinator-system", obj, ep_members);
    cJSON_Delete(obj);
    if (r < 0)
        goto out;
    webhook_configurations(&s->o.config, s->o.ca_pem, NULL, &m, &v);
    if ((r = upsert(s, &res_mutating, NULL, m, wh_members)) == 0)
        r = upsert(s, &res_validating, NULL, v, wh_members);
out:
    cJSON_Delete(m);
    cJSON_Delete(v);
    strbuf_release(&json);
    return r;
}

/* The path a webhook entry calls (service.path, or the path part of url). */
static const char *entry_path(const cJSON *w)
{
    const cJSON *cc = cJSON_GetObjectItemCaseSensitive(w, "clientConfig");
    const char *p = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cc, "service"), "path"));
    const char *url = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cc, "url"));

    if (!p && url && (p = strstr(url, "://")))
        p = strchr(p + 3, '/');
    return p ? p : "";
}

/* Upstream's webhook controller on one existing configuration. */
static int keep_ca_bundle(struct webhook_server *s, const struct kube_resource *res,
                          const char *name, const char *b64)
{
    cJSON *cur = NULL, *list, *w, *next;
    bool changed = false;
    int r = kube_get(s->o.client, res, NULL, name, &cur, NULL);

    if (r == -ENOENT)
        return 0; /* not installed: nothing to keep */
    if (r < 0)
        return r;
    list = cJSON_GetObjectItemCaseSensitive(cur, "webhooks");
    for (w = list ? list->child : NULL; w; w = next) {
        cJSON *cc = cJSON_GetObjectItemCaseSensitive(w, "clientConfig");
        const char *ca = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cc, "caBundle"));
        next = w->next;
        if (!webhook_path_enabled(&s->o.config, entry_path(w), NULL)) {
            cJSON_Delete(cJSON_DetachItemViaPointer(list, w));
            changed = true;
            continue;
        }
        if (cJSON_IsObject(cc) && (!ca || strcmp(ca, b64))) {
            cJSON_DeleteItemFromObjectCaseSensitive(cc, "caBundle");
            CHECK(cJSON_AddStringToObject(cc, "caBundle", b64));
            changed = true;
        }
    }
    if (changed)
        r = kube_update(s->o.client, res, NULL, cur, NULL, NULL, NULL);
    cJSON_Delete(cur);
    return r;
}

static int maintain(struct webhook_server *s)
{
    struct strbuf b64 = STRBUF_INIT;
    int r;

    if (s->o.register_address) {
        if ((r = register_all(s)) < 0) {
            log_once(s, LOG_REGISTER, "cannot register the webhook configurations", r);
            return r;
        }
    } else {
        strbuf_add_base64(&b64, s->o.ca_pem, strlen(s->o.ca_pem));
        r = keep_ca_bundle(s, &res_mutating, WEBHOOK_MUTATING_CONFIG_NAME, b64.buf);
        if (r == 0)
            r = keep_ca_bundle(s, &res_validating, WEBHOOK_VALIDATING_CONFIG_NAME, b64.buf);
        strbuf_release(&b64);
        if (r < 0) {
            log_once(s, LOG_CABUNDLE, "cannot write the caBundle of the webhook configurations", r);
            return r;
        }
    }
    (void)pthread_mutex_lock(&s->lock);
    if (!s->registered)
        log_info(COMP, "webhook configurations %s", s->o.register_address ? "registered" : "kept");
    s->registered = true;
    s->logged &= ~(unsigned)(LOG_REGISTER | LOG_CABUNDLE);
    (void)pthread_mutex_unlock(&s->lock);
    return 0;
}

/* Waits ms or until stop; returns whether stopping. */
static bool wait_ms(struct webhook_server *s, long ms)
{
    struct timespec ts;
    bool stopping;

    (void)clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    (void)pthread_mutex_lock(&s->lock);
    while (!s->stopping && pthread_cond_timedwait(&s->cond, &s->lock, &ts) == 0)
        ;
    stopping = s->stopping;
    (void)pthread_mutex_unlock(&s->lock);
    return stopping;
}

static void *maintainer(void *arg)
{
    struct webhook_server *s = arg;
    long backoff = 1000, max = s->o.backoff_max_ms ? s->o.backoff_max_ms : 30000;
    long recheck = s->o.recheck_ms ? s->o.recheck_ms : 60000;

    for (;;) {
        int rp = probe(s), rm = maintain(s);
        long delay = recheck;
        if (rp < 0 || rm < 0) {
            delay = backoff;
            backoff = backoff * 2 > max ? max : backoff * 2;
        } else {
            backoff = 1000;
        }
        if (wait_ms(s, delay))
            break;
    }
    return NULL;
}

/* ---- lifecycle ---- */

static int parse_address(const char *addr, char **ret_host, uint32_t *ret_port)
{
    const char *colon = strrchr(addr, ':');
    unsigned char buf[sizeof(struct in6_addr)];
    uint32_t port;
    char *host;

    if (!colon || parse_u32(colon + 1, &port) < 0 || port > 65535)
        return -EINVAL;
    host = xstrndup(addr, (size_t)(colon - addr));
    if (inet_pton(AF_INET, host, buf) != 1 && inet_pton(AF_INET6, host, buf) != 1) {
        free(host);
        return -EINVAL;
    }
    *ret_host = host;
    *ret_port = port;
    return 0;
}

int webhook_server_start(const struct webhook_server_opts *opts, struct webhook_server **ret)
{
    struct webhook_server *s;
    int r;

    if (!opts->cert_pem || !opts->key_pem || !opts->ca_pem)
        return -EINVAL;
    s = xcalloc(1, sizeof(*s));
    s->o = *opts;
    CHECK(pthread_mutex_init(&s->lock, NULL) == 0);
    CHECK(pthread_cond_init(&s->cond, NULL) == 0);
    if (opts->register_address &&
        (r = parse_address(opts->register_address, &s->register_host, &s->register_port)) < 0)
        goto fail;
    s->wanted[INF_PROFILES] = s->wanted[INF_NAMESPACES] = s->wanted[INF_PRIORITY_CLASSES] =
        webhook_path_enabled(&opts->config, WEBHOOK_PATH_MUTATE_POD, NULL);
    s->wanted[INF_QUOTAS] = webhook_path_enabled(&opts->config, WEBHOOK_PATH_VALIDATE_POD, NULL) ||
                            webhook_path_enabled(&opts->config, WEBHOOK_PATH_MUTATE_QUOTA, NULL) ||
                            webhook_path_enabled(&opts->config, WEBHOOK_PATH_VALIDATE_QUOTA, NULL);
    s->wanted[INF_NODES] = webhook_path_enabled(&opts->config, WEBHOOK_PATH_VALIDATE_CM, NULL);
    r = http_server_start(&(struct http_server_opts){.host = opts->host,
                                                     .port = opts->port,
                                                     .cert_pem = opts->cert_pem,
                                                     .key_pem = opts->key_pem},
                          handle, s, &s->http);
    if (r < 0)
        goto fail;
    if ((r = -pthread_create(&s->thread, NULL, maintainer, s)) < 0)
        goto fail;
    s->thread_started = true;
    log_info(COMP, "serving admission webhooks on port %u", http_server_port(s->http));
    *ret = s;
    return 0;
fail:
    webhook_server_stop(s);
    return r;
}

uint16_t webhook_server_port(const struct webhook_server *s)
{
    return http_server_port(s->http);
}

bool webhook_server_ready(struct webhook_server *s)
{
    struct kube_informer *inf[INF_N];
    bool ready;

    (void)pthread_mutex_lock(&s->lock);
    ready = s->probed;
    memcpy(inf, s->inf, sizeof(inf));
    (void)pthread_mutex_unlock(&s->lock);
    for (int i = 0; i < INF_N && ready; i++)
        ready = !inf[i] || kube_informer_has_synced(inf[i]);
    return ready;
}

bool webhook_server_registered(struct webhook_server *s)
{
    bool r;

    (void)pthread_mutex_lock(&s->lock);
    r = s->registered;
    (void)pthread_mutex_unlock(&s->lock);
    return r;
}

void webhook_server_stats(struct webhook_server *s, struct webhook_server_stats *ret)
{
    (void)pthread_mutex_lock(&s->lock);
    *ret = s->stats;
    (void)pthread_mutex_unlock(&s->lock);
}

void webhook_server_stop(struct webhook_server *s)
{
    if (!s)
        return;
    (void)pthread_mutex_lock(&s->lock);
    s->stopping = true;
    (void)pthread_cond_broadcast(&s->cond);
    (void)pthread_mutex_unlock(&s->lock);
    if (s->thread_started)
        (void)pthread_join(s->thread, NULL);
    http_server_stop(s->http);
    for (int i = 0; i < INF_N; i++)
        kube_informer_free(s->inf[i]);
    free(s->register_host);
    (void)pthread_cond_destroy(&s->cond);
    (void)pthread_mutex_destroy(&s->lock);
    free(s);
}
