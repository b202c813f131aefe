/*
 * The aggregation layer (see aggregator.h): the APIService table the proxy reads, the loop that
 * keeps it and the APIServices' Available conditions current, the proxy itself, and the
 * discovery and admission pieces. Mirrors kube-aggregator's pkg/apiserver/handler_proxy.go,
 * handler_apis.go and pkg/controllers/status/remote/remote_available_controller.go.
 *
 * The table holds one refcounted backend per APIService with a service: its spec, and an HTTP
 * client configured with the APIService's CA and the front-proxy certificate, whose pooled
 * connections are kept while the spec does not change (keep-alive to the backend). A proxied
 * request holds a reference to the backend it started with, so a table swap never pulls the
 * client from under a running watch.
 */
#include "apiserver/aggregator.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "api/rfc3339.h"
#include "apiserver/apiserver.h"
#include "apiserver/auth.h"
#include "apiserver/registry.h"
#include "apiserver/reqinfo.h"
#include "apiserver/status.h"
#include "apiserver/store.h"
#include "apiserver/svcref.h"
#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "codec/patch.h"
#include "http/client.h"
#include "http/server.h"

#define APISERVICE_PREFIX   "/apiregistration.k8s.io/apiservices/"
#define AUTH_CONFIGMAP_KEY  "/core/configmaps/kube-system/extension-apiserver-authentication"
#define DEFAULT_INTERVAL_MS 5000
#define DEFAULT_CHECK_MS    5000
#define PROXY_TIMEOUT_MS    60000 /* kube-apiserver's --request-timeout; watches have none */
#define MAX_APISERVICES     10000
#define UNAVAILABLE_MSG     "the server is currently unable to handle the request"

/* ---- small helpers ---- */

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNull(c) ? NULL : c;
}

static const char *get_str(const cJSON *o, const char *k)
{
    const cJSON *c = get(o, k);
    return cJSON_IsString(c) ? c->valuestring : "";
}

static int get_int(const cJSON *o, const char *k, int dflt)
{
    const cJSON *c = get(o, k);
    return cJSON_IsNumber(c) ? c->valueint : dflt;
}

static bool str_eq(const char *a, const char *b)
{
    return !strcmp(a ? a : "", b ? b : "");
}

static void json_set(cJSON *o, const char *k, cJSON *v)
{
    CHECK(v);
    cJSON_DeleteItemFromObjectCaseSensitive(o, k);
    CHECK(cJSON_AddItemToObject(o, k, v));
}

static void now_rfc3339(char buf[RFC3339_STR_MAX])
{
    (void)rfc3339_format((int64_t)time(NULL), buf);
}

/* Percent-encodes s: unreserved bytes and those in keep stay as they are. */
static void add_escaped(struct strbuf *out, const char *s, const char *keep)
{
    static const char hex[] = "0123456789ABCDEF";

    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-._~", *p) || (*p && strchr(keep, *p))) {
            strbuf_addch(out, (char)*p);
        } else {
            strbuf_addch(out, '%');
            strbuf_addch(out, hex[*p >> 4]);
            strbuf_addch(out, hex[*p & 15]);
        }
    }
}

/* ---- backends ---- */

struct backend {
    atomic_uint refs;
    char *name;
    char *group;
    char *version;
    char *ns;
    char *svc;
    int port; /* spec.service.port */
    int group_prio;
    int version_prio;
    char *spec;     /* the printed spec, to notice changes */
    char *ca_file;  /* spec.caBundle written out, or NULL */
    char *ca_error; /* why the caBundle cannot be used, or NULL */
    struct http_client *client;
    atomic_bool available;
};

static struct backend *backend_ref(struct backend *b)
{
    atomic_fetch_add(&b->refs, 1);
    return b;
}

static struct backend *backend_unref(struct backend *b)
{
    if (!b || atomic_fetch_sub(&b->refs, 1) != 1)
        return NULL;
    http_client_free(b->client);
    if (b->ca_file)
        (void)unlink(b->ca_file);
    free(b->ca_file);
    free(b->ca_error);
    free(b->name);
    free(b->group);
    free(b->version);
    free(b->ns);
    free(b->svc);
    free(b->spec);
    free(b);
    return NULL;
}

/* ---- the aggregator ---- */

struct proxy;

struct aggregator {
    struct store *store;
    struct api_registry *reg;
    const struct api_kind *apiservice_kind;
    const struct api_kind *configmap_kind;
    char *cert_file;
    char *key_file;
    char *work_dir;
    unsigned interval_ms;
    unsigned check_ms;
    unsigned seq; /* names caBundle files; loop thread only */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct backend **v; /* the table, under lock */
    size_t n;
    struct proxy *proxies; /* open proxied requests, under lock */
    bool kicked;
    bool stopping;
    bool running; /* the loop thread is to be joined */
    pthread_t thread;
    struct http_client_cancel *loop_cancel;
};

/* Writes spec.caBundle (base64 PEM) to a private file of its own; NULL on failure, with why. */
static char *write_ca_file(struct aggregator *a, const char *name, const char *b64,
                           struct strbuf *why)
{
    return svcref_write_ca(a->work_dir, name, a->seq++, b64, "spec.caBundle", why);
}

/* A backend for an APIService with a service; spec_text is its printed spec. */
static struct backend *backend_new(struct aggregator *a, const char *name, const cJSON *spec,
                                   const char *spec_text)
{
    struct backend *b = xcalloc(1, sizeof(*b));
    const cJSON *svc = get(spec, "service");
    const char *ca = get_str(spec, "caBundle");
    struct http_client_opts o = {
        .cert_file = a->cert_file,
        .key_file = a->key_file,
        .insecure = cJSON_IsTrue(get(spec, "insecureSkipTLSVerify")),
        .connect_timeout_ms = a->check_ms,
    };
    struct strbuf why = STRBUF_INIT;

    atomic_init(&b->refs, 1);
    atomic_init(&b->available, false);
    b->name = xstrdup(name);
    b->group = xstrdup(get_str(spec, "group"));
    b->version = xstrdup(get_str(spec, "version"));
    b->ns = xstrdup(get_str(svc, "namespace"));
    b->svc = xstrdup(get_str(svc, "name"));
    b->port = get_int(svc, "port", 443);
    b->group_prio = get_int(spec, "groupPriorityMinimum", 0);
    b->version_prio = get_int(spec, "versionPriority", 0);
    b->spec = xstrdup(spec_text);
    if (*ca && !o.insecure) {
        b->ca_file = write_ca_file(a, name, ca, &why);
        if (!b->ca_file)
            b->ca_error = strbuf_detach(&why, NULL);
    }
    o.ca_file = b->ca_file;
    if (!b->ca_error && http_client_new(&o, &b->client) < 0)
        b->ca_error = xstrdup("cannot create an HTTP client");
    strbuf_release(&why);
    return b;
}

/* The backend serving group/version (a new reference), or NULL. */
static struct backend *lookup(struct aggregator *a, const char *group, size_t glen,
                              const char *version, size_t vlen)
{
    struct backend *b = NULL;

    CHECK(pthread_mutex_lock(&a->lock) == 0);
    for (size_t i = 0; i < a->n && !b; i++)
        if (strlen(a->v[i]->group) == glen && !strncmp(a->v[i]->group, group, glen) &&
            strlen(a->v[i]->version) == vlen && !strncmp(a->v[i]->version, version, vlen))
            b = backend_ref(a->v[i]);
    CHECK(pthread_mutex_unlock(&a->lock) == 0);
    return b;
}

/* ---- extension-apiserver-authentication (reference 6.3) ---- */

static char *json_string_array(const char *const *v)
{
    cJSON *arr = cJSON_CreateArray();
    char *s;

    CHECK(arr);
    for (; v && *v; v++)
        CHECK(cJSON_AddItemToArray(arr, cJSON_CreateString(*v)));
    s = cJSON_PrintUnformatted(arr);
    CHECK(s);
    cJSON_Delete(arr);
    return s;
}

/* The ConfigMap's data, keys sorted as Go writes a map. */
static cJSON *auth_data(const struct aggregator_opts *o)
{
    static const char *const default_names[] = {"front-proxy-client", NULL};
    static const char *const extra[] = {"X-Remote-Extra-", NULL};
    static const char *const group[] = {"X-Remote-Group", NULL};
    static const char *const user[] = {"X-Remote-User", NULL};
    cJSON *d = cJSON_CreateObject();
    char *s;

    CHECK(d);
    if (o->client_ca_pem)
        CHECK(cJSON_AddStringToObject(d, "client-ca-file", o->client_ca_pem));
    if (o->requestheader_ca_pem) {
        s = json_string_array(o->allowed_names ? o->allowed_names : default_names);
        CHECK(cJSON_AddStringToObject(d, "requestheader-allowed-names", s));
        cJSON_free(s);
        CHECK(cJSON_AddStringToObject(d, "requestheader-client-ca-file", o->requestheader_ca_pem));
        s = json_string_array(extra);
        CHECK(cJSON_AddStringToObject(d, "requestheader-extra-headers-prefix", s));
        cJSON_free(s);
        s = json_string_array(group);
        CHECK(cJSON_AddStringToObject(d, "requestheader-group-headers", s));
        cJSON_free(s);
        s = json_string_array(user);
        CHECK(cJSON_AddStringToObject(d, "requestheader-username-headers", s));
        cJSON_free(s);
    }
    return d;
}

/* Creates the ConfigMap, or replaces its data when it differs. */
static int publish_auth(struct aggregator *a, const struct aggregator_opts *o)
{
    struct store_item cur = {0};
    struct strbuf bytes = STRBUF_INIT;
    cJSON *cm = NULL, *data = auth_data(o), *meta;
    char uid[37], ts[RFC3339_STR_MAX];
    int r = store_get(a->store, AUTH_CONFIGMAP_KEY, &cur);

    if (r == 0 && json_parse(cur.value, cur.len, NULL, &cm, NULL) == 0 && cJSON_IsObject(cm)) {
        if (json_value_equal(get(cm, "data"), data)) {
            r = 0;
            goto out;
        }
    } else if (r == 0 || r == -ENOENT) {
        cJSON_Delete(cm);
        cm = cJSON_CreateObject();
        CHECK(cm);
        CHECK(cJSON_AddStringToObject(cm, "apiVersion", "v1"));
        CHECK(cJSON_AddStringToObject(cm, "kind", "ConfigMap"));
        meta = cJSON_AddObjectToObject(cm, "metadata");
        CHECK(meta);
        apiserver_random_uid(uid);
        now_rfc3339(ts);
        CHECK(cJSON_AddStringToObject(meta, "name", "extension-apiserver-authentication"));
        CHECK(cJSON_AddStringToObject(meta, "namespace", "kube-system"));
        CHECK(cJSON_AddStringToObject(meta, "uid", uid));
        CHECK(cJSON_AddStringToObject(meta, "creationTimestamp", ts));
    } else {
        goto out;
    }
    json_set(cm, "data", data);
    data = NULL;
    if ((r = api_object_canonicalize(a->configmap_kind, cm)) < 0 ||
        (r = json_print(cm, &bytes)) < 0)
        goto out;
    r = cur.obj ? store_update(a->store, AUTH_CONFIGMAP_KEY, bytes.buf, bytes.len, cur.rv, NULL)
                : store_create(a->store, AUTH_CONFIGMAP_KEY, bytes.buf, bytes.len, NULL);
out:
    store_item_release(&cur);
    strbuf_release(&bytes);
    cJSON_Delete(cm);
    cJSON_Delete(data);
    return r;
}

/* ---- resolution and availability (remote_available_controller.go) ---- */

struct cond {
    const char *status; /* "True", "False" */
    const char *reason;
    struct strbuf message;
};

static void cond_set(struct cond *c, const char *status, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void cond_set(struct cond *c, const char *status, const char *reason, const char *fmt, ...)
{
    va_list ap;

    c->status = status;
    c->reason = reason;
    strbuf_reset(&c->message);
    va_start(ap, fmt);
    strbuf_vaddf(&c->message, fmt, ap);
    va_end(ap);
}

/*
 * The endpoint of b's Service, as ResolveEndpointWithEndpointLister picks it (svcref.h): true
 * with host and port; false with c set to why not, in kube-aggregator's words.
 */
static bool resolve(struct aggregator *a, const struct backend *b, struct strbuf *host, int *port,
                    struct cond *c)
{
    struct strbuf port_name = STRBUF_INIT;
    enum svcref_fail f = svcref_resolve(a->store, b->ns, b->svc, b->port, host, port, &port_name);

    switch (f) {
    case SVCREF_OK:
        break;
    case SVCREF_NO_SERVICE:
        cond_set(c, "False", "ServiceNotFound", "service/%s in \"%s\" is not present", b->svc,
                 b->ns);
        break;
    case SVCREF_NO_PORT:
        cond_set(c, "False", "ServicePortError", "service/%s in \"%s\" is not listening on port %d",
                 b->svc, b->ns, b->port);
        break;
    case SVCREF_NO_ENDPOINTS:
        cond_set(c, "False", "EndpointsNotFound", "cannot find endpoints for service/%s in \"%s\"",
                 b->svc, b->ns);
        break;
    case SVCREF_NO_ADDRESSES:
        cond_set(c, "False", "MissingEndpoints",
                 "endpoints for service/%s in \"%s\" have no addresses with port name \"%s\"",
                 b->svc, b->ns, port_name.buf);
        break;
    }
    strbuf_release(&port_name);
    return f == SVCREF_OK;
}

/* https://<service>.<namespace>.svc:<port> and the CONNECT_TO line that sends it to host:port. */
static void backend_target(const struct backend *b, const char *host, int port, struct strbuf *base,
                           struct strbuf *connect_to)
{
    strbuf_addf(base, "https://%s.%s.svc:%d", b->svc, b->ns, b->port);
    strbuf_addf(connect_to, "%s.%s.svc:%d:", b->svc, b->ns, b->port);
    svcref_add_host_port(connect_to, host, port);
}

static int discard(void *ud, long status, const char *data, size_t len)
{
    (void)ud;
    (void)status;
    (void)data;
    (void)len;
    return 0;
}

/* GET /apis/<group>/<version> on the backend as kube-aggregator does; c says how it went. */
static void discovery_check(struct aggregator *a, const struct backend *b, const char *host,
                            int port, struct cond *c)
{
    static const char *const headers[] = {"X-Remote-User: system:kube-aggregator",
                                          "X-Remote-Group: system:masters",
                                          "Accept: application/json", NULL};
    struct strbuf url = STRBUF_INIT, connect_to = STRBUF_INIT, hp = STRBUF_INIT;
    struct strbuf shown = STRBUF_INIT;
    struct http_client_resp resp = HTTP_CLIENT_RESP_INIT;
    struct http_client_req req = {
        .method = "GET",
        .headers = headers,
        .timeout_ms = a->check_ms,
        .on_data = discard,
        .cancel = a->loop_cancel,
    };
    int r;

    backend_target(b, host, port, &url, &connect_to);
    strbuf_addf(&url, "/apis/%s/%s", b->group, b->version);
    svcref_add_host_port(&hp, host, port);
    strbuf_addf(&shown, "https://%s/apis/%s/%s", hp.buf, b->group, b->version);
    req.url = url.buf;
    req.connect_to = connect_to.buf;
    r = http_client_do(b->client, &req, &resp);
    if (r == -ETIMEDOUT)
        cond_set(c, "False", "FailedDiscoveryCheck", "timed out waiting for %s", shown.buf);
    else if (r == -ECONNREFUSED)
        cond_set(c, "False", "FailedDiscoveryCheck",
                 "failing or missing response from %s: Get \"%s\": dial tcp %s: connect: "
                 "connection refused",
                 shown.buf, shown.buf, hp.buf);
    else if (r < 0)
        cond_set(c, "False", "FailedDiscoveryCheck",
                 "failing or missing response from %s: Get \"%s\": %s", shown.buf, shown.buf,
                 r == -EPROTO ? "tls: the serving certificate or the handshake failed"
                              : err_str(r));
    else if (resp.status < 200 || resp.status >= 300)
        cond_set(c, "False", "FailedDiscoveryCheck",
                 "failing or missing response from %s: bad status from %s: %ld", shown.buf,
                 shown.buf, resp.status);
    else
        cond_set(c, "True", "Passed", "all checks passed");
    http_client_resp_release(&resp);
    strbuf_release(&url);
    strbuf_release(&connect_to);
    strbuf_release(&hp);
    strbuf_release(&shown);
}

/*
 * Sets the Available condition of the stored APIService it (decoded as obj, owned) to c, as
 * SetAPIServiceCondition does (lastTransitionTime moves only when the status does), and writes
 * it only when something changed (updateAPIServiceStatus). A conflicting write wins: the next
 * round tries again.
 */
static void publish_condition(struct aggregator *a, const struct store_item *it, cJSON *obj,
                              const struct cond *c)
{
    cJSON *status = cJSON_GetObjectItemCaseSensitive(obj, "status"), *conds, *old = NULL, *nc;
    const char *name = get_str(get(obj, "metadata"), "name");
    struct strbuf bytes = STRBUF_INIT;
    char ts[RFC3339_STR_MAX];
    int i = 0, at = -1, r;
    bool moved;

    if (!cJSON_IsObject(status)) {
        status = cJSON_CreateObject();
        json_set(obj, "status", status);
    }
    conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");
    if (!cJSON_IsArray(conds)) {
        conds = cJSON_CreateArray();
        json_set(status, "conditions", conds);
    }
    cJSON_ArrayForEach(nc, conds)
    {
        if (!strcmp(get_str(nc, "type"), "Available")) {
            old = nc;
            at = i;
            break;
        }
        i++;
    }
    if (old && str_eq(get_str(old, "status"), c->status) &&
        str_eq(get_str(old, "reason"), c->reason) &&
        str_eq(get_str(old, "message"), c->message.buf))
        return;
    moved = !old || !str_eq(get_str(old, "status"), c->status);
    nc = cJSON_CreateObject();
    CHECK(nc);
    CHECK(cJSON_AddStringToObject(nc, "type", "Available"));
    CHECK(cJSON_AddStringToObject(nc, "status", c->status));
    if (!moved && *get_str(old, "lastTransitionTime")) {
        CHECK(
            cJSON_AddStringToObject(nc, "lastTransitionTime", get_str(old, "lastTransitionTime")));
    } else {
        now_rfc3339(ts);
        CHECK(cJSON_AddStringToObject(nc, "lastTransitionTime", ts));
    }
    CHECK(cJSON_AddStringToObject(nc, "reason", c->reason));
    CHECK(cJSON_AddStringToObject(nc, "message", c->message.buf));
    if (at >= 0)
        CHECK(cJSON_ReplaceItemInArray(conds, at, nc)); /* frees old */
    else
        CHECK(cJSON_AddItemToArray(conds, nc));
    old = NULL;
    if (moved)
        log_info("apiserver", "APIService \"%s\" available=%s reason=%s: %s", name, c->status,
                 c->reason, c->message.buf);
    r = api_object_canonicalize(a->apiservice_kind, obj);
    if (r == 0)
        r = json_print(obj, &bytes);
    if (r == 0)
        r = store_update(a->store, it->key, bytes.buf, bytes.len, it->rv, NULL);
    if (r < 0 && r != -ESTALE && r != -ENOENT)
        log_warn("apiserver", "cannot update the status of APIService \"%s\": %s, ignoring", name,
                 err_str(r));
    strbuf_release(&bytes);
}

/* One APIService as a round of the loop sees it. */
struct round_item {
    struct store_item it;
    cJSON *obj;
    struct backend *b; /* NULL for a local APIService */
    struct cond c;
};

struct round {
    struct round_item *v;
    size_t n, alloc;
};

static int collect(const struct store_item *it, void *ud)
{
    struct round *rd = ud;
    struct round_item *ri;
    cJSON *obj = NULL;

    if (json_parse(it->value, it->len, NULL, &obj, NULL) < 0 || !cJSON_IsObject(obj)) {
        cJSON_Delete(obj);
        return 0; /* unreadable: nothing to check */
    }
    if (rd->n == rd->alloc) {
        rd->alloc = rd->alloc ? rd->alloc * 2 : 8;
        rd->v = xrealloc(rd->v, rd->alloc * sizeof(*rd->v));
    }
    ri = &rd->v[rd->n++];
    memset(ri, 0, sizeof(*ri));
    store_item_set(&ri->it, it->obj);
    ri->obj = obj;
    strbuf_init(&ri->c.message);
    return 0;
}

/* The backend for name with this spec: the current one when the spec did not change (its
 * connections live on), else a new one. */
static struct backend *backend_for(struct aggregator *a, const char *name, const cJSON *spec)
{
    struct backend *b = NULL;
    char *text = cJSON_PrintUnformatted(spec);

    CHECK(text);
    CHECK(pthread_mutex_lock(&a->lock) == 0);
    for (size_t i = 0; i < a->n && !b; i++)
        if (!strcmp(a->v[i]->name, name) && !strcmp(a->v[i]->spec, text))
            b = backend_ref(a->v[i]);
    CHECK(pthread_mutex_unlock(&a->lock) == 0);
    if (!b)
        b = backend_new(a, name, spec, text);
    cJSON_free(text);
    return b;
}

/* One round: every APIService checked, the table replaced, changed conditions written. */
static void sync_all(struct aggregator *a)
{
    struct round rd = {0};
    struct backend **table, **old;
    size_t nt = 0, nold;
    bool stopping;
    int r;

    r = store_list(a->store, APISERVICE_PREFIX, NULL, MAX_APISERVICES, collect, &rd, NULL);
    if (r < 0)
        log_warn("apiserver", "cannot list APIServices: %s, ignoring", err_str(r));
    table = xcalloc(rd.n + 1, sizeof(struct backend *));
    for (size_t i = 0; i < rd.n; i++) {
        struct round_item *ri = &rd.v[i];
        const cJSON *spec = get(ri->obj, "spec");
        const char *name = get_str(get(ri->obj, "metadata"), "name");
        struct strbuf host = STRBUF_INIT;
        int port = 0;

        if (!cJSON_IsObject(get(spec, "service"))) {
            cond_set(&ri->c, "True", "Local", "Local APIServices are always available");
            continue;
        }
        ri->b = backend_for(a, name, spec);
        if (ri->b->ca_error)
            cond_set(&ri->c, "False", "FailedDiscoveryCheck", "%s", ri->b->ca_error);
        else if (resolve(a, ri->b, &host, &port, &ri->c))
            discovery_check(a, ri->b, host.buf, port, &ri->c);
        atomic_store(&ri->b->available, !strcmp(ri->c.status, "True"));
        table[nt++] = backend_ref(ri->b);
        strbuf_release(&host);
    }
    /* The table first, so that whoever sees Available=True finds the group-version served. */
    CHECK(pthread_mutex_lock(&a->lock) == 0);
    old = a->v;
    nold = a->n;
    a->v = table;
    a->n = nt;
    stopping = a->stopping; /* checks cut short by stopping say nothing about the backends */
    CHECK(pthread_mutex_unlock(&a->lock) == 0);
    for (size_t i = 0; i < nold; i++)
        (void)backend_unref(old[i]);
    free(old);
    for (size_t i = 0; i < rd.n; i++) {
        struct round_item *ri = &rd.v[i];
        if (!stopping)
            publish_condition(a, &ri->it, ri->obj, &ri->c);
        (void)backend_unref(ri->b);
        store_item_release(&ri->it);
        cJSON_Delete(ri->obj);
        strbuf_release(&ri->c.message);
    }
    free(rd.v);
}

static void deadline_in(struct timespec *ts, unsigned ms)
{
    CHECK(clock_gettime(CLOCK_MONOTONIC, ts) == 0);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

static void *loop(void *ud)
{
    struct aggregator *a = ud;
    struct timespec until;

    CHECK(pthread_mutex_lock(&a->lock) == 0);
    while (!a->stopping) {
        a->kicked = false;
        CHECK(pthread_mutex_unlock(&a->lock) == 0);
        sync_all(a);
        CHECK(pthread_mutex_lock(&a->lock) == 0);
        deadline_in(&until, a->interval_ms);
        while (!a->stopping && !a->kicked)
            if (pthread_cond_timedwait(&a->cond, &a->lock, &until) != 0)
                break;
    }
    CHECK(pthread_mutex_unlock(&a->lock) == 0);
    return NULL;
}

void aggregator_note_write(struct aggregator *a, const char *group, const char *plural)
{
    if (!a || !((!strcmp(group, "apiregistration.k8s.io") && !strcmp(plural, "apiservices")) ||
                (!*group && (!strcmp(plural, "services") || !strcmp(plural, "endpoints")))))
        return;
    CHECK(pthread_mutex_lock(&a->lock) == 0);
    a->kicked = true;
    CHECK(pthread_cond_signal(&a->cond) == 0);
    CHECK(pthread_mutex_unlock(&a->lock) == 0);
}

/* ---- the proxy (handler_proxy.go) ---- */

struct proxy {
    struct aggregator *a;
    struct backend *b;
    struct http_client_cancel *k;
    struct http_client_stream *st;
    struct proxy *prev, *next; /* in a->proxies */
};

static long proxy_read(void *ud, struct http_stream *hs, char *buf, size_t max)
{
    struct proxy *p = ud;
    (void)hs;
    long n = http_client_stream_read(p->st, buf, max);

    return n < 0 ? -1 : n;
}

static void proxy_free(void *ud)
{
    struct proxy *p = ud;

    CHECK(pthread_mutex_lock(&p->a->lock) == 0);
    if (p->prev)
        p->prev->next = p->next;
    else
        p->a->proxies = p->next;
    if (p->next)
        p->next->prev = p->prev;
    CHECK(pthread_mutex_unlock(&p->a->lock) == 0);
    http_client_stream_close(p->st);
    http_client_cancel_free(p->k);
    (void)backend_unref(p->b);
    free(p);
}

static void reply(struct http_response *resp, cJSON *status)
{
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(status, "code");

    resp->status = cJSON_IsNumber(code) ? code->valueint : 500;
    resp->content_type = "application/json";
    strbuf_reset(&resp->body);
    if (json_print(status, &resp->body) < 0)
        resp->status = 500;
    cJSON_Delete(status);
}

/* Request headers that are the connection's, or identity the caller may not assert. */
static bool header_dropped(const char *name)
{
    static const char *const drop[] = {
        "Authorization", "Proxy-Authorization", "Connection",
        "Keep-Alive",    "Proxy-Connection",    "TE",
        "Trailer",       "Transfer-Encoding",   "Upgrade",
        "Host",          "Content-Length",      "Expect",
    };

    for (size_t i = 0; i < ARRAY_SIZE(drop); i++)
        if (!strcasecmp(name, drop[i]))
            return true;
    return !strncasecmp(name, "X-Remote-", 9) || !strncasecmp(name, "Impersonate-", 12);
}

/* Response headers the server writes itself. */
static bool response_header_dropped(const char *name, size_t len)
{
    static const char *const drop[] = {"Connection", "Keep-Alive",     "Proxy-Connection",
                                       "TE",         "Trailer",        "Transfer-Encoding",
                                       "Upgrade",    "Content-Length", "Date"};

    for (size_t i = 0; i < ARRAY_SIZE(drop); i++)
        if (strlen(drop[i]) == len && !strncasecmp(name, drop[i], len))
            return true;
    return false;
}

/* The forwarded header lines: as many as the caller sent (the server bounds that with 431,
 * HTTP_MAX_REQUEST_HEADERS) and then the proxy's identity headers, which must never be the
 * ones left out. */
struct fwd {
    char **lines; /* NULL-terminated once complete */
    size_t n, alloc;
    bool content_type;
};

static void fwd_add(struct fwd *f, const char *name, const char *value)
{
    struct strbuf line = STRBUF_INIT;

    if (f->n + 1 >= f->alloc) { /* room for the NULL */
        f->alloc = f->alloc ? f->alloc * 2 : 32;
        f->lines = xrealloc(f->lines, f->alloc * sizeof(*f->lines));
    }
    /* curl drops a header written "Name:"; "Name;" sends it empty. */
    if (*value)
        strbuf_addf(&line, "%s: %s", name, value);
    else
        strbuf_addf(&line, "%s;", name);
    f->lines[f->n++] = strbuf_detach(&line, NULL);
}

static int fwd_header(void *ud, const char *name, const char *value)
{
    struct fwd *f = ud;

    if (header_dropped(name))
        return 0;
    if (!strcasecmp(name, "Content-Type"))
        f->content_type = true;
    fwd_add(f, name, value ? value : "");
    return 0;
}

static int fwd_query(void *ud, const char *name, const char *value)
{
    struct strbuf *q = ud;

    strbuf_addch(q, q->len ? '&' : '?');
    add_escaped(q, name, "");
    if (value) {
        strbuf_addch(q, '=');
        add_escaped(q, value, "");
    }
    return 0;
}

/* A query flag as Go's strconv.ParseBool reads the true values. */
static bool is_true(const char *v)
{
    return v && (!strcmp(v, "1") || !strcmp(v, "t") || !strcmp(v, "T") || !strcmp(v, "true") ||
                 !strcmp(v, "TRUE") || !strcmp(v, "True"));
}

/* auth.h's node rule for the object a write names in its body; replies 403 when broken. */
static bool node_body_ok(const struct http_request *req, const struct api_user *user,
                         const char *node, struct http_response *resp)
{
    struct api_reqinfo ri = {0};
    size_t len;
    const char *body = http_request_body(req, &len);
    const char *name;
    cJSON *obj = NULL;
    bool ok = true;

    if (!len || json_parse(body, len, NULL, &obj, NULL) < 0)
        return true; /* nothing names an object: the URL rule already held */
    name = get_str(get(obj, "metadata"), "name");
    if (*name && strcmp(name, node)) {
        struct strbuf msg = STRBUF_INIT, why = STRBUF_INIT;

        ok = false;
        if (api_reqinfo_parse(http_request_method(req), http_request_path(req),
                              http_request_query(req, "watch"), NULL, &ri) == 0) {
            strbuf_addf(&why, "node \"%s\" may only write objects about itself", node);
            api_authz_forbidden_message(user->name, &ri, name, why.buf, &msg);
            api_reqinfo_release(&ri);
        } else {
            strbuf_addstr(&msg, "forbidden");
        }
        reply(resp, api_status_failure(403, "Forbidden", msg.buf, NULL));
        strbuf_release(&msg);
        strbuf_release(&why);
    }
    cJSON_Delete(obj);
    return ok;
}

/* Opens the backend request; 0 with p->st, or the transport error. */
static int proxy_open(struct aggregator *a, struct proxy *p, const struct http_request *req,
                      const struct api_user *user, const char *host, int port, bool watch)
{
    struct strbuf url = STRBUF_INIT, connect_to = STRBUF_INIT;
    struct fwd f = {.lines = NULL};
    struct http_client_req cr = {0};
    size_t len;
    const char *body = http_request_body(req, &len);
    bool authenticated = false;
    int r;

    backend_target(p->b, host, port, &url, &connect_to);
    add_escaped(&url, http_request_path(req), "/:@!$&'()*+,;=");
    {
        struct strbuf q = STRBUF_INIT;
        http_request_foreach_query(req, fwd_query, &q);
        strbuf_add(&url, q.buf, q.len);
        strbuf_release(&q);
    }
    http_request_foreach_header(req, fwd_header, &f);
    /* client-go's SetAuthProxyHeaders: the user, then one header per group. */
    fwd_add(&f, "X-Remote-User", user->name);
    for (const char *const *g = user->groups; g && *g; g++) {
        fwd_add(&f, "X-Remote-Group", *g);
        authenticated = authenticated || !strcmp(*g, "system:authenticated");
    }
    if (!authenticated)
        fwd_add(&f, "X-Remote-Group", "system:authenticated");
    if (!f.content_type && len)
        fwd_add(&f, "Content-Type", ""); /* not curl's form encoding */
    f.lines[f.n] = NULL;                 /* fwd_add() left room: at least the user was added */
    cr.method = http_request_method(req);
    cr.url = url.buf;
    cr.headers = (const char *const *)f.lines;
    cr.body = len ? body : NULL;
    cr.body_len = len;
    cr.timeout_ms = watch ? 0 : PROXY_TIMEOUT_MS;
    cr.cancel = p->k;
    cr.connect_to = connect_to.buf;
    r = http_client_open(p->b->client, &cr, &p->st);
    for (size_t i = 0; i < f.n; i++)
        free(f.lines[i]);
    free(f.lines);
    strbuf_release(&url);
    strbuf_release(&connect_to);
    (void)a;
    return r;
}

/* Go's wording of a transport error, after "error trying to reach service: ". */
static void transport_error(int r, const char *host, int port, struct strbuf *out)
{
    strbuf_addstr(out, "error trying to reach service: ");
    if (r == -ECONNREFUSED) {
        strbuf_addstr(out, "dial tcp ");
        svcref_add_host_port(out, host, port);
        strbuf_addstr(out, ": connect: connection refused");
    } else if (r == -ETIMEDOUT) {
        strbuf_addstr(out, "dial tcp ");
        svcref_add_host_port(out, host, port);
        strbuf_addstr(out, ": i/o timeout");
    } else if (r == -EPROTO) {
        strbuf_addstr(out, "tls: the serving certificate or the handshake failed");
    } else {
        strbuf_addstr(out, err_str(r));
    }
}

bool aggregator_handle(struct aggregator *a, const struct http_request *req,
                       const struct api_user *user, const char *node, struct http_response *resp)
{
    const char *path = http_request_path(req), *group, *version, *rest;
    struct strbuf host = STRBUF_INIT, msg = STRBUF_INIT;
    struct cond c = {.message = STRBUF_INIT};
    struct backend *b;
    struct proxy *p = NULL;
    bool watch;
    int port = 0, r;

    if (!a)
        return false;
    if (!strncmp(path, "/apis/", 6))
        group = path + 6;
    else if (!strncmp(path, "/openapi/v3/apis/", 17))
        group = path + 17; /* the group-version's OpenAPI document is the backend's */
    else
        return false;
    version = strchr(group, '/');
    if (!version || version == group)
        return false;
    version++;
    rest = version + strcspn(version, "/");
    if (rest == version || (group == path + 17 && *rest))
        return false;
    b = lookup(a, group, (size_t)(version - 1 - group), version, (size_t)(rest - version));
    if (!b)
        return false;
    if (!user || !user->name) {
        reply(resp, api_status_failure(401, "Unauthorized", "Unauthorized", NULL));
        goto out;
    }
    if (node && !node_body_ok(req, user, node, resp))
        goto out;
    CHECK(pthread_mutex_lock(&a->lock) == 0);
    r = a->stopping;
    CHECK(pthread_mutex_unlock(&a->lock) == 0);
    if (r || !atomic_load(&b->available) || !resolve(a, b, &host, &port, &c)) {
        reply(resp, api_status_failure(503, "ServiceUnavailable", UNAVAILABLE_MSG, NULL));
        goto out;
    }
    watch = is_true(http_request_query(req, "watch")) || !strncmp(rest, "/watch/", 7);
    p = xcalloc(1, sizeof(*p));
    p->a = a;
    p->b = b;
    b = NULL;
    p->k = http_client_cancel_new();
    /* Registered before it starts, so that stopping cancels it wherever it is. */
    CHECK(pthread_mutex_lock(&a->lock) == 0);
    if (a->stopping)
        http_client_cancel_fire(p->k);
    p->next = a->proxies;
    if (a->proxies)
        a->proxies->prev = p;
    a->proxies = p;
    CHECK(pthread_mutex_unlock(&a->lock) == 0);
    log_debug("apiserver", "proxying %s %s to %s:%d", http_request_method(req), path, host.buf,
              port);
    r = proxy_open(a, p, req, user, host.buf, port, watch);
    if (r < 0) {
        transport_error(r, host.buf, port, &msg);
        reply(resp, api_status_failure(503, "ServiceUnavailable", msg.buf, NULL));
        proxy_free(p);
        goto out;
    }
    resp->status = (int)http_client_stream_status(p->st);
    resp->content_type = NULL; /* the backend's, among the headers */
    for (const char *const *h = http_client_stream_headers(p->st); *h; h++) {
        const char *colon = strchr(*h, ':');
        char *name;

        if (!colon || response_header_dropped(*h, (size_t)(colon - *h)))
            continue;
        name = xstrndup(*h, (size_t)(colon - *h));
        colon++;
        while (*colon == ' ' || *colon == '\t')
            colon++;
        http_response_header(resp, name, colon);
        free(name);
    }
    resp->stream = proxy_read;
    resp->stream_blocking = true; /* reads the backend with libcurl */
    resp->stream_userdata = p;
    resp->stream_free = proxy_free;
out:
    (void)backend_unref(b);
    strbuf_release(&host);
    strbuf_release(&msg);
    strbuf_release(&c.message);
    return true;
}

/* ---- discovery (handler_apis.go) ---- */

/* By group, then as kube-aggregator orders versions: higher versionPriority first. */
static int backend_cmp(const void *x, const void *y)
{
    const struct backend *a = *(struct backend *const *)x, *b = *(struct backend *const *)y;
    int c = strcmp(a->group, b->group);

    if (c)
        return c;
    if (a->version_prio != b->version_prio)
        return a->version_prio > b->version_prio ? -1 : 1;
    return strcmp(a->version, b->version);
}

/* The table, referenced and sorted. */
static struct backend **snapshot(struct aggregator *a, size_t *ret_n)
{
    struct backend **v;
    size_t n;

    CHECK(pthread_mutex_lock(&a->lock) == 0);
    n = a->n;
    v = xcalloc(n + 1, sizeof(struct backend *));
    for (size_t i = 0; i < n; i++)
        v[i] = backend_ref(a->v[i]);
    CHECK(pthread_mutex_unlock(&a->lock) == 0);
    qsort(v, n, sizeof(struct backend *), backend_cmp);
    *ret_n = n;
    return v;
}

static cJSON *group_version(const char *group, const char *version)
{
    cJSON *gv = cJSON_CreateObject();
    char buf[512];

    CHECK(gv);
    (void)snprintf(buf, sizeof(buf), "%s/%s", group, version);
    CHECK(cJSON_AddStringToObject(gv, "groupVersion", buf));
    CHECK(cJSON_AddStringToObject(gv, "version", version));
    return gv;
}

/* Adds the versions of group among v[0..n) (sorted) to the APIGroup g; when g served none of
 * its own, the first one added becomes the preferred version. */
static void add_versions(cJSON *g, const char *group, struct backend *const *v, size_t n)
{
    cJSON *versions = cJSON_GetObjectItemCaseSensitive(g, "versions"), *first = NULL;
    bool local = cJSON_GetArraySize(versions) > 0;
    const cJSON *e;

    if (!cJSON_IsArray(versions)) {
        versions = cJSON_CreateArray();
        json_set(g, "versions", versions);
    }
    for (size_t i = 0; i < n; i++) {
        bool seen = false;

        if (strcmp(v[i]->group, group))
            continue;
        cJSON_ArrayForEach(e, versions) seen |= !strcmp(get_str(e, "version"), v[i]->version);
        if (seen)
            continue;
        CHECK(cJSON_AddItemToArray(versions, group_version(group, v[i]->version)));
        if (!first)
            first = cJSON_GetArrayItem(versions, cJSON_GetArraySize(versions) - 1);
    }
    if (!local && first)
        json_set(g, "preferredVersion", cJSON_Duplicate(first, true));
}

static cJSON *find_group(cJSON *groups, const char *name)
{
    cJSON *g;

    cJSON_ArrayForEach(g, groups)
    {
        if (!strcmp(get_str(g, "name"), name))
            return g;
    }
    return NULL;
}

struct prio_ctx {
    struct backend *const *v;
    size_t n;
};

/* A group's priority as kube-aggregator sorts it: the highest of its APIServices'; a CRD's
 * 1000 when none of them is proxied. */
static int group_prio(const char *group, void *ud)
{
    const struct prio_ctx *ctx = ud;
    int prio = -1;

    for (size_t i = 0; i < ctx->n; i++)
        if (!strcmp(ctx->v[i]->group, group) && ctx->v[i]->group_prio > prio)
            prio = ctx->v[i]->group_prio;
    return prio < 0 ? 1000 : prio;
}

void aggregator_discovery(struct aggregator *a, const char *group, cJSON **doc)
{
    struct backend **v;
    size_t n;
    cJSON *g;

    if (!a)
        return;
    v = snapshot(a, &n);
    if (!group) {
        cJSON *groups = cJSON_GetObjectItemCaseSensitive(*doc, "groups");
        for (size_t i = 0; i < n && cJSON_IsArray(groups); i++) {
            if (i > 0 && !strcmp(v[i - 1]->group, v[i]->group))
                continue;
            g = find_group(groups, v[i]->group);
            if (!g) {
                g = cJSON_CreateObject();
                CHECK(g);
                CHECK(cJSON_AddStringToObject(g, "name", v[i]->group));
                CHECK(cJSON_AddItemToArray(groups, g));
            }
            add_versions(g, v[i]->group, v, n);
        }
        if (cJSON_IsArray(groups)) {
            struct prio_ctx ctx = {v, n};
            api_registry_sort_groups(a->reg, groups, group_prio, &ctx);
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            if (strcmp(v[i]->group, group))
                continue;
            if (!*doc) {
                *doc = cJSON_CreateObject();
                CHECK(*doc);
                CHECK(cJSON_AddStringToObject(*doc, "kind", "APIGroup"));
                CHECK(cJSON_AddStringToObject(*doc, "apiVersion", "v1"));
                CHECK(cJSON_AddStringToObject(*doc, "name", group));
            }
            add_versions(*doc, group, v, n);
            break;
        }
    }
    for (size_t i = 0; i < n; i++)
        (void)backend_unref(v[i]);
    free(v);
}

void aggregator_openapi_index(struct aggregator *a, cJSON *index)
{
    cJSON *paths = cJSON_GetObjectItemCaseSensitive(index, "paths"), *p;
    struct strbuf key = STRBUF_INIT, url = STRBUF_INIT;
    struct backend **v;
    size_t n;

    if (!a || !cJSON_IsObject(paths))
        return;
    v = snapshot(a, &n);
    for (size_t i = 0; i < n; i++) {
        strbuf_reset(&key);
        strbuf_addf(&key, "apis/%s/%s", v[i]->group, v[i]->version);
        if (!cJSON_GetObjectItemCaseSensitive(paths, key.buf)) {
            strbuf_reset(&url);
            strbuf_addf(&url, "/openapi/v3/%s", key.buf);
            p = cJSON_AddObjectToObject(paths, key.buf);
            CHECK(p);
            CHECK(cJSON_AddStringToObject(p, "serverRelativeURL", url.buf));
        }
        (void)backend_unref(v[i]);
    }
    free(v);
    strbuf_release(&key);
    strbuf_release(&url);
}

/* ---- admission ---- */

struct served {
    const char *group;
    const char *version;
    const struct api_resource *by;
};

static void find_served(const struct api_resource *res, void *ud)
{
    struct served *s = ud;

    if (!s->by && !strcmp(res->group, s->group) && !strcmp(res->version, s->version))
        s->by = res;
}

int aggregator_admit(struct api_registry *reg, const cJSON *old, cJSON *obj,
                     struct field_errors *errs)
{
    const cJSON *spec = get(obj, "spec");
    struct served s = {get_str(spec, "group"), get_str(spec, "version"), NULL};

    if (!old)
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
    if (!cJSON_IsObject(get(spec, "service")))
        return 0;
    api_registry_foreach(reg, find_served, &s);
    if (!s.by)
        return 0;
    if (s.by->crd_name)
        field_error_add(errs, FIELD_FORBIDDEN, "spec.service", NULL,
                        "group-version \"%s/%s\" is served by this API server from "
                        "CustomResourceDefinition \"%s\": delete the CRD first (an APIService and "
                        "a CRD cannot serve the same group-version)",
                        s.group, s.version, s.by->crd_name);
    else
        field_error_add(errs, FIELD_FORBIDDEN, "spec.service", NULL,
                        "group-version \"%s/%s\" is built into this API server and cannot be "
                        "proxied",
                        s.group[0] ? s.group : "core", s.version);
    return -EINVAL;
}

/* ---- lifecycle ---- */

int aggregator_new(struct store *store, struct api_registry *reg,
                   const struct aggregator_opts *opts, struct aggregator **ret)
{
    struct aggregator *a;
    pthread_condattr_t ca;
    int r;

    if (!opts->proxy_cert_file || !opts->proxy_key_file || !opts->work_dir)
        return -EINVAL;
    a = xcalloc(1, sizeof(*a));
    a->store = store;
    a->reg = reg;
    a->apiservice_kind = api_kind_find("apiregistration.k8s.io/v1", "APIService");
    a->configmap_kind = api_kind_find("v1", "ConfigMap");
    CHECK(a->apiservice_kind && a->configmap_kind);
    a->cert_file = xstrdup(opts->proxy_cert_file);
    a->key_file = xstrdup(opts->proxy_key_file);
    a->work_dir = xstrdup(opts->work_dir);
    a->interval_ms = opts->interval_ms ? opts->interval_ms : DEFAULT_INTERVAL_MS;
    a->check_ms = opts->check_timeout_ms ? opts->check_timeout_ms : DEFAULT_CHECK_MS;
    a->loop_cancel = http_client_cancel_new();
    CHECK(pthread_mutex_init(&a->lock, NULL) == 0);
    CHECK(pthread_condattr_init(&ca) == 0);
    CHECK(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0);
    CHECK(pthread_cond_init(&a->cond, &ca) == 0);
    (void)pthread_condattr_destroy(&ca);
    r = publish_auth(a, opts);
    if (r == 0) {
        r = -pthread_create(&a->thread, NULL, loop, a);
        a->running = r == 0;
    }
    if (r < 0) {
        aggregator_free(a);
        return r;
    }
    *ret = a;
    return 0;
}

void aggregator_stop(struct aggregator *a)
{
    bool join;

    if (!a)
        return;
    CHECK(pthread_mutex_lock(&a->lock) == 0);
    a->stopping = true;
    for (struct proxy *p = a->proxies; p; p = p->next)
        http_client_cancel_fire(p->k);
    http_client_cancel_fire(a->loop_cancel);
    CHECK(pthread_cond_broadcast(&a->cond) == 0);
    join = a->running;
    a->running = false;
    CHECK(pthread_mutex_unlock(&a->lock) == 0);
    if (join)
        CHECK(pthread_join(a->thread, NULL) == 0);
}

void aggregator_free(struct aggregator *a)
{
    if (!a)
        return;
    aggregator_stop(a);
    CHECK(!a->proxies);
    for (size_t i = 0; i < a->n; i++)
        (void)backend_unref(a->v[i]);
    free(a->v);
    http_client_cancel_free(a->loop_cancel);
    (void)pthread_cond_destroy(&a->cond);
    (void)pthread_mutex_destroy(&a->lock);
    free(a->cert_file);
    free(a->key_file);
    free(a->work_dir);
    free(a);
}
