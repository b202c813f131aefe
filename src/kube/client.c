/*
 * The REST client (see client.h): URL building, headers (JSON only, the koord API server
 * answers 415 to protobuf), the client-side token bucket, bearer tokens re-read from their
 * file the way client-go's cachingTokenSource does (transport/token_source.go: every minute,
 * and on the request after a 401), and Status decoding.
 */
#include "kube/client.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "http/client.h"
#include "kube/config.h"
#include "kube/kube-int.h"

_Thread_local long kube__request_timeout_ms;

#define TOKEN_REFRESH_S 60
#define MAX_ERROR_BODY  ((size_t)1 << 20)

const struct kube_resource kube_res_pods = {"", "v1", "pods", "Pod", true};
const struct kube_resource kube_res_nodes = {"", "v1", "nodes", "Node", false};
const struct kube_resource kube_res_configmaps = {"", "v1", "configmaps", "ConfigMap", true};
const struct kube_resource kube_res_events = {"", "v1", "events", "Event", true};
const struct kube_resource kube_res_leases = {"coordination.k8s.io", "v1", "leases", "Lease", true};
const struct kube_resource kube_res_nodeslos = {"slo.koordinator.sh", "v1alpha1", "nodeslos",
                                                "NodeSLO", false};
const struct kube_resource kube_res_nodemetrics = {"metrics.koordinator.sh", "v1alpha1",
                                                   "nodemetrics", "NodeMetric", false};

struct kube_client {
    struct kube_config *cfg;
    struct http_client *http;
    pthread_mutex_t lock; /* guards the bucket and the token */
    double qps;
    double burst;
    double tokens;
    double last; /* monotonic seconds of the last refill */
    char *token;
    double token_read; /* monotonic seconds the token file was last read */
};

double kube__now(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double kube__rand(void)
{
    static _Thread_local uint64_t state;

    if (!state) {
        struct timespec ts;
        (void)clock_gettime(CLOCK_REALTIME, &ts);
        state = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)&state;
        state |= 1;
    }
    /* xorshift64* */
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return (double)((state * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

void kube__deadline(double seconds, struct timespec *ret)
{
    double t = kube__now() + (seconds > 0 ? seconds : 0);

    ret->tv_sec = (time_t)t;
    ret->tv_nsec = (long)((t - (double)ret->tv_sec) * 1e9);
    if (ret->tv_nsec >= 1000000000L) {
        ret->tv_sec++;
        ret->tv_nsec -= 1000000000L;
    }
}

void kube__cond_init(pthread_cond_t *c)
{
    pthread_condattr_t a;

    CHECK(pthread_condattr_init(&a) == 0);
    CHECK(pthread_condattr_setclock(&a, CLOCK_MONOTONIC) == 0);
    CHECK(pthread_cond_init(c, &a) == 0);
    (void)pthread_condattr_destroy(&a);
}

void kube_resource_of_kind(const struct api_kind *k, struct kube_resource *ret)
{
    ret->group = k->group;
    ret->version = k->version;
    ret->plural = k->plural;
    ret->kind = k->kind;
    ret->namespaced = k->namespaced;
}

int kube_client_new(struct kube_config *cfg, struct kube_client **ret)
{
    struct http_client_opts o = {
        .ca_file = cfg->ca_file,
        .cert_file = cfg->cert_file,
        .key_file = cfg->key_file,
        .insecure = cfg->insecure,
    };
    struct kube_client *c;
    int r;

    c = xcalloc(1, sizeof(*c));
    c->cfg = cfg;
    r = http_client_new(&o, &c->http);
    if (r < 0) {
        kube_config_free(cfg);
        free(c);
        return r;
    }
    CHECK(pthread_mutex_init(&c->lock, NULL) == 0);
    kube_client_set_rate_limit(c, cfg->qps, cfg->burst);
    c->token = cfg->token ? xstrdup(cfg->token) : NULL;
    c->token_read = kube__now();
    *ret = c;
    return 0;
}

void kube_client_free(struct kube_client *c)
{
    if (!c)
        return;
    http_client_free(c->http);
    kube_config_free(c->cfg);
    (void)pthread_mutex_destroy(&c->lock);
    free(c->token);
    free(c);
}

const struct kube_config *kube_client_config(const struct kube_client *c)
{
    return c->cfg;
}

void kube_client_set_rate_limit(struct kube_client *c, double qps, unsigned burst)
{
    (void)pthread_mutex_lock(&c->lock);
    c->qps = qps;
    c->burst = burst > 0 ? burst : 1;
    c->tokens = c->burst;
    c->last = kube__now();
    (void)pthread_mutex_unlock(&c->lock);
}

/* Takes one token, waiting for it when the bucket is empty (a token bucket as
 * golang.org/x/time/rate, which client-go's flowcontrol uses). */
static void rate_wait(struct kube_client *c)
{
    double wait = 0, now;

    (void)pthread_mutex_lock(&c->lock);
    if (c->qps > 0) {
        now = kube__now();
        c->tokens += (now - c->last) * c->qps;
        if (c->tokens > c->burst)
            c->tokens = c->burst;
        c->last = now;
        c->tokens -= 1;
        if (c->tokens < 0)
            wait = -c->tokens / c->qps;
    }
    (void)pthread_mutex_unlock(&c->lock);
    if (wait > 0) {
        struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
            ;
    }
}

/*
 * After a 401 to a request that started at start: a token read from its file before then is
 * stale (the kubelet rotated it, and the old one stopped working), so the next request re-reads
 * the file instead of waiting out TOKEN_REFRESH_S, as client-go's cachingTokenSource does
 * (ResetTokenOlderThan in transport/token_source.go).
 */
static void token_reset_older_than(struct kube_client *c, double start)
{
    (void)pthread_mutex_lock(&c->lock);
    if (c->cfg->token_file && c->token_read < start)
        c->token_read = start - TOKEN_REFRESH_S - 1;
    (void)pthread_mutex_unlock(&c->lock);
}

/* The Authorization header value, or "" for none. */
static void auth_header(struct kube_client *c, struct strbuf *out)
{
    (void)pthread_mutex_lock(&c->lock);
    if (c->cfg->token_file && kube__now() - c->token_read > TOKEN_REFRESH_S) {
        struct strbuf t = STRBUF_INIT;
        /* A failed re-read keeps the old token, as client-go does. */
        if (codec_read_file(c->cfg->token_file, 1 << 20, &t) == 0) {
            strbuf_setlen(&t, strcspn(t.buf, "\r\n"));
            free(c->token);
            c->token = strbuf_detach(&t, NULL);
        }
        strbuf_release(&t);
        c->token_read = kube__now();
    }
    if (c->token && *c->token) {
        strbuf_addf(out, "Authorization: Bearer %s", c->token);
    } else if (c->cfg->username) {
        struct strbuf up = STRBUF_INIT;
        strbuf_addf(&up, "%s:%s", c->cfg->username, c->cfg->password);
        strbuf_addstr(out, "Authorization: Basic ");
        strbuf_add_base64(out, up.buf, up.len);
        strbuf_release(&up);
    }
    (void)pthread_mutex_unlock(&c->lock);
}

void kube_path(const struct kube_resource *r, const char *ns, const char *name,
               const char *subresource, struct strbuf *out)
{
    strbuf_reset(out);
    if (*r->group)
        strbuf_addf(out, "/apis/%s/%s", r->group, r->version);
    else
        strbuf_addf(out, "/api/%s", r->version);
    if (r->namespaced && ns && *ns)
        strbuf_addf(out, "/namespaces/%s", ns);
    strbuf_addf(out, "/%s", r->plural);
    if (name && *name)
        strbuf_addf(out, "/%s", name);
    if (subresource && *subresource)
        strbuf_addf(out, "/%s", subresource);
}

static int errno_of(int code, const char *reason)
{
    switch (code) {
    case 400:
    case 422:
        return -EINVAL;
    case 401:
    case 403:
        return -EACCES;
    case 404:
        return -ENOENT;
    case 405:
        return -EOPNOTSUPP;
    case 409:
        return !strcmp(reason, "AlreadyExists") ? -EEXIST : -ESTALE;
    case 410:
        return -ERANGE;
    case 413:
        return -E2BIG;
    case 429:
    case 503:
        return -EAGAIN;
    case 504:
        return -ETIMEDOUT;
    default:
        return code >= 500 ? -EIO : -EPROTO;
    }
}

static void copy_str(char *dst, size_t size, const char *src, size_t len)
{
    if (len >= size)
        len = size - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

int kube_status_decode(int http_code, const char *body, size_t len, struct kube_status *ret)
{
    struct kube_status scratch;
    cJSON *st = NULL;
    const cJSON *v;

    if (http_code < 400)
        return 0;
    if (!ret)
        ret = &scratch;
    memset(ret, 0, sizeof(*ret));
    ret->code = http_code;
    if (body && len <= MAX_ERROR_BODY && json_parse(body, len, NULL, &st, NULL) == 0 &&
        cJSON_IsObject(st) && (v = cJSON_GetObjectItemCaseSensitive(st, "kind")) &&
        cJSON_IsString(v) && !strcmp(v->valuestring, "Status")) {
        const cJSON *details = cJSON_GetObjectItemCaseSensitive(st, "details");

        v = cJSON_GetObjectItemCaseSensitive(st, "reason");
        if (cJSON_IsString(v))
            copy_str(ret->reason, sizeof(ret->reason), v->valuestring, strlen(v->valuestring));
        v = cJSON_GetObjectItemCaseSensitive(st, "message");
        if (cJSON_IsString(v))
            copy_str(ret->message, sizeof(ret->message), v->valuestring, strlen(v->valuestring));
        v = cJSON_GetObjectItemCaseSensitive(details, "retryAfterSeconds");
        if (cJSON_IsNumber(v) && v->valuedouble > 0 && v->valuedouble < 86400)
            ret->retry_after_s = (long)v->valuedouble;
    } else if (body) {
        copy_str(ret->message, sizeof(ret->message), body, len);
    }
    cJSON_Delete(st);
    return errno_of(http_code, ret->reason);
}

bool kube_status_is_expired(int r, const struct kube_status *st)
{
    return r == -ERANGE || (st && (st->code == 410 || !strcmp(st->reason, "Expired") ||
                                   !strcmp(st->reason, "Gone")));
}

static void transport_status(int r, struct kube_status *st, const char *method, const char *url)
{
    if (!st)
        return;
    memset(st, 0, sizeof(*st));
    (void)snprintf(st->message, sizeof(st->message), "%s %s: %s", method, url, err_str(r));
}

/*
 * Accept of a write whose caller does not read the answer: only the object's metadata comes
 * back (PartialObjectMetadata, which kube-apiserver and koord apiserver make for any object
 * answer), and plain JSON from a server that cannot. An agent's NodeMetric report is 17 KB;
 * getting it echoed back costs both sides as much as sending it.
 */
#define ACCEPT_METADATA                                                                            \
    "Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

/* Builds the header list; strings live in hs, pointers in hv (NULL-terminated). */
static void build_headers(struct kube_client *c, const char *content_type, bool metadata_only,
                          struct strbuf hs[4], const char *hv[5])
{
    size_t n = 0;

    strbuf_addstr(&hs[0], metadata_only ? ACCEPT_METADATA : "Accept: application/json");
    hv[n++] = hs[0].buf;
    strbuf_addf(&hs[1], "User-Agent: %s", c->cfg->user_agent);
    hv[n++] = hs[1].buf;
    if (content_type) {
        strbuf_addf(&hs[2], "Content-Type: %s", content_type);
        hv[n++] = hs[2].buf;
    }
    auth_header(c, &hs[3]);
    if (hs[3].len)
        hv[n++] = hs[3].buf;
    hv[n] = NULL;
}

int kube_request(struct kube_client *c, const char *method, const char *path, const char *body,
                 const char *content_type, cJSON **ret, struct kube_status *st)
{
    struct strbuf hs[4] = {STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT};
    struct strbuf url = STRBUF_INIT;
    struct http_client_resp resp = HTTP_CLIENT_RESP_INIT;
    const char *hv[5];
    struct http_client_req req = {0};
    double start = kube__now();
    int r;

    if (body && !content_type)
        content_type = "application/json";
    strbuf_addf(&url, "%s%s", c->cfg->server, path);
    build_headers(c, body ? content_type : NULL, !ret && strcmp(method, "GET"), hs, hv);
    req.method = method;
    req.url = url.buf;
    req.headers = hv;
    req.body = body;
    req.body_len = body ? strlen(body) : 0;
    req.timeout_ms = kube__request_timeout_ms > 0 ? kube__request_timeout_ms : c->cfg->timeout_ms;
    rate_wait(c);
    r = http_client_do(c->http, &req, &resp);
    if (r < 0) {
        transport_status(r, st, method, url.buf);
        goto out;
    }
    if (resp.status == 401)
        token_reset_older_than(c, start);
    if (resp.status >= 400 || resp.status < 200) {
        r = kube_status_decode(resp.status < 200 ? 500 : (int)resp.status, resp.body.buf,
                               resp.body.len, st);
        if (st && resp.retry_after_s > 0)
            st->retry_after_s = resp.retry_after_s;
        goto out;
    }
    if (ret) {
        *ret = NULL;
        if (resp.body.len) {
            struct codec_error ce = {0};
            r = json_parse(resp.body.buf, resp.body.len, NULL, ret, &ce);
            if (r < 0) {
                if (st) {
                    memset(st, 0, sizeof(*st));
                    st->code = (int)resp.status;
                    (void)snprintf(st->message, sizeof(st->message),
                                   "%s %s: response is not JSON: %s", method, url.buf, ce.msg);
                }
                r = -EPROTO;
            }
        }
    }
out:
    for (size_t i = 0; i < ARRAY_SIZE(hs); i++)
        strbuf_release(&hs[i]);
    strbuf_release(&url);
    http_client_resp_release(&resp);
    return r;
}

int kube_stream(struct kube_client *c, const char *path,
                int (*on_data)(void *userdata, long status, const char *data, size_t len),
                void *userdata, struct http_client_cancel *cancel, struct http_client_resp *resp)
{
    struct strbuf hs[4] = {STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT};
    struct strbuf url = STRBUF_INIT;
    const char *hv[5];
    struct http_client_req req = {0};
    double start = kube__now();
    int r;

    strbuf_addf(&url, "%s%s", c->cfg->server, path);
    build_headers(c, NULL, false, hs, hv);
    req.method = "GET";
    req.url = url.buf;
    req.headers = hv;
    req.on_data = on_data;
    req.userdata = userdata;
    req.cancel = cancel;
    rate_wait(c);
    r = http_client_do(c->http, &req, resp);
    if (r >= 0 && resp->status == 401)
        token_reset_older_than(c, start);
    for (size_t i = 0; i < ARRAY_SIZE(hs); i++)
        strbuf_release(&hs[i]);
    strbuf_release(&url);
    return r;
}

/* Appends "?k=v&..." for the set options, URL-escaping values. */
static void add_query(struct strbuf *sb, const char *key, const char *value)
{
    static const char hex[] = "0123456789ABCDEF";

    if (!value || !*value)
        return;
    strbuf_addch(sb, strchr(sb->buf, '?') ? '&' : '?');
    strbuf_addf(sb, "%s=", key);
    for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-_.~", *p)) {
            strbuf_addch(sb, (char)*p);
        } else {
            strbuf_addch(sb, '%');
            strbuf_addch(sb, hex[*p >> 4]);
            strbuf_addch(sb, hex[*p & 15]);
        }
    }
}

void kube__add_query(struct strbuf *sb, const char *key, const char *value)
{
    add_query(sb, key, value);
}

int kube_get(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
             cJSON **ret, struct kube_status *st)
{
    struct strbuf p = STRBUF_INIT;
    int rc;

    kube_path(r, ns, name, NULL, &p);
    rc = kube_request(c, "GET", p.buf, NULL, NULL, ret, st);
    strbuf_release(&p);
    return rc;
}

int kube_list(struct kube_client *c, const struct kube_resource *r, const char *ns,
              const struct kube_list_opts *o, cJSON **ret, struct kube_status *st)
{
    struct strbuf p = STRBUF_INIT;
    char lim[16];
    int rc;

    kube_path(r, ns, NULL, NULL, &p);
    if (o) {
        add_query(&p, "labelSelector", o->label_selector);
        add_query(&p, "fieldSelector", o->field_selector);
        add_query(&p, "resourceVersion", o->resource_version);
        if (o->limit) {
            (void)snprintf(lim, sizeof(lim), "%u", o->limit);
            add_query(&p, "limit", lim);
        }
        add_query(&p, "continue", o->continue_token);
    }
    rc = kube_request(c, "GET", p.buf, NULL, NULL, ret, st);
    strbuf_release(&p);
    return rc;
}

static int send_obj(struct kube_client *c, const char *method, const char *path, const cJSON *obj,
                    const char *ct, cJSON **ret, struct kube_status *st)
{
    struct strbuf body = STRBUF_INIT;
    int rc;

    (void)json_print(obj, &body);
    rc = kube_request(c, method, path, body.buf, ct, ret, st);
    strbuf_release(&body);
    return rc;
}

int kube_create(struct kube_client *c, const struct kube_resource *r, const char *ns,
                const cJSON *obj, cJSON **ret, struct kube_status *st)
{
    struct strbuf p = STRBUF_INIT;
    int rc;

    kube_path(r, ns, NULL, NULL, &p);
    rc = send_obj(c, "POST", p.buf, obj, NULL, ret, st);
    strbuf_release(&p);
    return rc;
}

static const char *name_of(const cJSON *obj)
{
    const cJSON *v =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "name");
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int no_name(struct kube_status *st)
{
    if (st) {
        memset(st, 0, sizeof(*st));
        (void)snprintf(st->message, sizeof(st->message), "metadata.name: required");
    }
    return -EINVAL;
}

int kube_update(struct kube_client *c, const struct kube_resource *r, const char *ns,
                const cJSON *obj, const char *subresource, cJSON **ret, struct kube_status *st)
{
    struct strbuf p = STRBUF_INIT;
    const char *name = name_of(obj);
    int rc;

    if (!name || !*name)
        return no_name(st);
    kube_path(r, ns, name, subresource, &p);
    rc = send_obj(c, "PUT", p.buf, obj, NULL, ret, st);
    strbuf_release(&p);
    return rc;
}

int kube_patch(struct kube_client *c, const struct kube_resource *r, const char *ns,
               const char *name, const char *subresource, enum kube_patch_type type,
               const cJSON *patch, cJSON **ret, struct kube_status *st)
{
    static const char *const types[] = {
        [KUBE_PATCH_MERGE] = "application/merge-patch+json",
        [KUBE_PATCH_JSON] = "application/json-patch+json",
        [KUBE_PATCH_STRATEGIC] = "application/strategic-merge-patch+json",
    };
    struct strbuf p = STRBUF_INIT;
    int rc;

    CHECK((size_t)type < ARRAY_SIZE(types));
    if (!name || !*name)
        return no_name(st);
    kube_path(r, ns, name, subresource, &p);
    rc = send_obj(c, "PATCH", p.buf, patch, types[type], ret, st);
    strbuf_release(&p);
    return rc;
}

int kube_delete(struct kube_client *c, const struct kube_resource *r, const char *ns,
                const char *name, struct kube_status *st)
{
    struct strbuf p = STRBUF_INIT;
    int rc;

    if (!name || !*name)
        return no_name(st);
    kube_path(r, ns, name, NULL, &p);
    rc = kube_request(c, "DELETE", p.buf, NULL, NULL, NULL, st);
    strbuf_release(&p);
    return rc;
}

/* The resource and namespace of a typed object. */
static int typed(const cJSON *obj, struct kube_resource *res, const char **ns,
                 struct kube_status *st)
{
    const cJSON *av = cJSON_GetObjectItemCaseSensitive(obj, "apiVersion");
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(obj, "kind");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "namespace");
    const struct api_kind *k = NULL;

    if (cJSON_IsString(av) && cJSON_IsString(kind))
        k = api_kind_find(av->valuestring, kind->valuestring);
    if (!k) {
        if (st) {
            memset(st, 0, sizeof(*st));
            (void)snprintf(st->message, sizeof(st->message), "unknown kind \"%s\" in \"%s\"",
                           cJSON_IsString(kind) ? kind->valuestring : "",
                           cJSON_IsString(av) ? av->valuestring : "");
        }
        return -EINVAL;
    }
    kube_resource_of_kind(k, res);
    *ns = cJSON_IsString(n) ? n->valuestring : NULL;
    return 0;
}

int kube_create_object(struct kube_client *c, const cJSON *obj, cJSON **ret, struct kube_status *st)
{
    struct kube_resource res;
    const char *ns;
    int r = typed(obj, &res, &ns, st);

    return r < 0 ? r : kube_create(c, &res, ns, obj, ret, st);
}

int kube_update_object(struct kube_client *c, const cJSON *obj, cJSON **ret, struct kube_status *st)
{
    struct kube_resource res;
    const char *ns;
    int r = typed(obj, &res, &ns, st);

    return r < 0 ? r : kube_update(c, &res, ns, obj, NULL, ret, st);
}

int kube_delete_object(struct kube_client *c, const cJSON *obj, struct kube_status *st)
{
    struct kube_resource res;
    const char *ns;
    int r = typed(obj, &res, &ns, st);

    return r < 0 ? r : kube_delete(c, &res, ns, name_of(obj), st);
}
