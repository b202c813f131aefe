/*
 * HTTP server on libmicrohttpd (see server.h). The access callback runs three times per
 * request in libmicrohttpd's model: once to set up our state, once per body chunk (appended up
 * to max_body), and once at the end, where the handler runs and the response is queued.
 */
#include "http/server.h"

#include <arpa/inet.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/base.h"
#include "base/log.h"

#define DEFAULT_MAX_BODY        (3u << 20)
#define DEFAULT_MAX_CONNECTIONS 1024
#define MAX_CERT_GROUPS         16

struct http_server {
    struct MHD_Daemon *d;
    http_handler_fn fn;
    void *userdata;
    size_t max_body;
    bool client_ca;
    /* libmicrohttpd uses these buffers in place: they live as long as the daemon. */
    char *cert;
    char *key;
    char *ca;
};

/*
 * What a TLS connection's client certificate proves, worked out once per connection rather
 * than per request: verifying the chain and reading the subject is a large share of a small
 * request's cost, and a keep-alive client (an agent reporting, a controller) sends many. A
 * connection serves one request at a time, so this needs no lock; TLS 1.3 has no
 * renegotiation and GnuTLS refuses it by default, so the peer cannot change under it.
 */
#define MAX_SIGNED_BY 4

struct conn_ctx {
    int cert_state; /* 1 verified, 0 not looked at yet, else the negative error */
    char *user;
    char *groups[MAX_CERT_GROUPS + 1];
    struct {
        const struct http_ca_list *cas;
        int result;
    } signed_by[MAX_SIGNED_BY]; /* answers of http_request_client_cert_signed_by() */
    unsigned nsigned;
};

struct http_request {
    struct http_server *srv;
    struct MHD_Connection *conn;
    const char *method;
    const char *path;
    struct strbuf body;
    bool too_many; /* more than HTTP_MAX_REQUEST_HEADERS headers: answered 431 */
    bool too_big;
    struct conn_ctx *cc; /* the connection's (borrowed; on_connection() made it) */
};

static void conn_ctx_free(struct conn_ctx *cc)
{
    if (!cc)
        return;
    free(cc->user);
    for (unsigned i = 0; i < MAX_CERT_GROUPS; i++)
        free(cc->groups[i]);
    free(cc);
}

/* The connection's identity cache, which on_connection() made when the connection started. */
static struct conn_ctx *conn_ctx_of(struct http_request *req)
{
    const union MHD_ConnectionInfo *ci;

    if (req->cc)
        return req->cc;
    ci = MHD_get_connection_info(req->conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    CHECK(ci && ci->socket_context);
    req->cc = ci->socket_context;
    return req->cc;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    (void)cls;
    (void)conn;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        *socket_context = xcalloc(1, sizeof(struct conn_ctx));
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        conn_ctx_free(*socket_context);
        *socket_context = NULL;
    }
}

const char *http_request_method(const struct http_request *req)
{
    return req->method;
}

const char *http_request_path(const struct http_request *req)
{
    return req->path;
}

const char *http_request_header(const struct http_request *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

const char *http_request_query(const struct http_request *req, const char *key)
{
    return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, key);
}

const char *http_request_body(const struct http_request *req, size_t *ret_len)
{
    if (ret_len)
        *ret_len = req->body.len;
    return req->body.buf;
}

struct kv_iter {
    http_request_kv_fn fn;
    void *userdata;
};

static enum MHD_Result kv_one(void *cls, enum MHD_ValueKind kind, const char *key,
                              const char *value)
{
    struct kv_iter *it = cls;
    (void)kind;

    return it->fn(it->userdata, key, value) == 0 ? MHD_YES : MHD_NO;
}

void http_request_foreach_header(const struct http_request *req, http_request_kv_fn fn,
                                 void *userdata)
{
    struct kv_iter it = {fn, userdata};
    (void)MHD_get_connection_values(req->conn, MHD_HEADER_KIND, kv_one, &it);
}

void http_request_foreach_query(const struct http_request *req, http_request_kv_fn fn,
                                void *userdata)
{
    struct kv_iter it = {fn, userdata};
    (void)MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, kv_one, &it);
}

void http_response_header(struct http_response *resp, const char *name, const char *value)
{
    if (resp->nheaders == HTTP_MAX_HEADERS)
        return;
    resp->headers[resp->nheaders].name = xstrdup(name);
    resp->headers[resp->nheaders].value = xstrdup(value);
    resp->nheaders++;
}

/* A DN attribute by OID and index into a fresh string; NULL when absent. */
static char *dn_value(gnutls_x509_crt_t crt, const char *oid, unsigned idx)
{
    char buf[256];
    size_t size = sizeof(buf);

    if (gnutls_x509_crt_get_dn_by_oid(crt, oid, idx, 0, buf, &size) < 0)
        return NULL;
    return xstrndup(buf, size);
}

/* Verifies the peer's chain against the client CA and reads CN and O from its leaf into cc. */
static int verify_client_cert(struct http_request *req, struct conn_ctx *cc)
{
    const union MHD_ConnectionInfo *ci;
    const gnutls_datum_t *chain;
    unsigned n = 0, status = 0;
    gnutls_session_t session;
    gnutls_x509_crt_t crt;
    int r = -EACCES;

    if (!req->srv->client_ca)
        return -ENOENT;
    ci = MHD_get_connection_info(req->conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (!ci || !ci->tls_session)
        return -ENOENT;
    session = (gnutls_session_t)ci->tls_session;
    chain = gnutls_certificate_get_peers(session, &n);
    if (!chain || n == 0)
        return -ENOENT;
    if (gnutls_certificate_verify_peers2(session, &status) < 0 || status != 0)
        return -EACCES;
    if (gnutls_x509_crt_init(&crt) < 0)
        return -ENOMEM;
    if (gnutls_x509_crt_import(crt, &chain[0], GNUTLS_X509_FMT_DER) >= 0) {
        cc->user = dn_value(crt, GNUTLS_OID_X520_COMMON_NAME, 0);
        for (unsigned i = 0; i < MAX_CERT_GROUPS; i++) {
            cc->groups[i] = dn_value(crt, GNUTLS_OID_X520_ORGANIZATION_NAME, i);
            if (!cc->groups[i])
                break;
        }
        r = cc->user ? 0 : -EACCES;
    }
    gnutls_x509_crt_deinit(crt);
    return r;
}

/* Collects the values of one header name (compared case-insensitively, as HTTP says). */
struct header_values {
    const char *name;
    const char **v;
    size_t max, n;
};

static enum MHD_Result collect_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                      const char *value)
{
    struct header_values *hv = cls;

    (void)kind;
    if (!key || !value || strcasecmp(key, hv->name))
        return MHD_YES;
    if (hv->n < hv->max)
        hv->v[hv->n] = value;
    hv->n++;
    return MHD_YES;
}

size_t http_request_header_values(const struct http_request *req, const char *name,
                                  const char **ret, size_t max)
{
    struct header_values hv = {name, ret, max, 0};

    (void)MHD_get_connection_values(req->conn, MHD_HEADER_KIND, collect_header, &hv);
    return hv.n;
}

struct http_ca_list {
    gnutls_x509_crt_t *v;
    unsigned n;
};

int http_ca_list_new(const char *pem, struct http_ca_list **ret)
{
    struct http_ca_list *l = xcalloc(1, sizeof(*l));
    gnutls_datum_t d = {0};
    int rc;

    /* GnuTLS only reads the datum; the copy drops a const it does not declare. */
    memcpy(&d.data, &pem, sizeof(d.data));
    d.size = (unsigned)strlen(pem);
    rc = gnutls_x509_crt_list_import2(&l->v, &l->n, &d, GNUTLS_X509_FMT_PEM, 0);
    if (rc < 0 || l->n == 0) {
        http_ca_list_free(l);
        return rc == GNUTLS_E_MEMORY_ERROR ? -ENOMEM : -EINVAL;
    }
    *ret = l;
    return 0;
}

void http_ca_list_free(struct http_ca_list *l)
{
    if (!l)
        return;
    for (unsigned i = 0; i < l->n; i++)
        gnutls_x509_crt_deinit(l->v[i]);
    gnutls_free(l->v);
    free(l);
}

int http_request_client_cert_signed_by(const struct http_request *req,
                                       const struct http_ca_list *cas)
{
    struct conn_ctx *cc = conn_ctx_of((struct http_request *)req);
    const union MHD_ConnectionInfo *ci;
    const gnutls_datum_t *chain;
    gnutls_x509_crt_t leaf;
    unsigned n = 0, status = 0;
    int r = -EACCES;

    if (http_request_client_cert(req, NULL, NULL) < 0)
        return -ENOENT;
    for (unsigned i = 0; i < cc->nsigned; i++)
        if (cc->signed_by[i].cas == cas)
            return cc->signed_by[i].result;
    ci = MHD_get_connection_info(req->conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    chain = ci && ci->tls_session
                ? gnutls_certificate_get_peers((gnutls_session_t)ci->tls_session, &n)
                : NULL;
    if (!chain || n == 0)
        return -ENOENT;
    if (gnutls_x509_crt_init(&leaf) < 0)
        return -ENOMEM;
    if (gnutls_x509_crt_import(leaf, &chain[0], GNUTLS_X509_FMT_DER) >= 0 &&
        gnutls_x509_crt_verify(leaf, cas->v, cas->n, 0, &status) >= 0 && status == 0)
        r = 0;
    gnutls_x509_crt_deinit(leaf);
    /* A CA list lives as long as the server that checks with it (http_ca_list_new). */
    if (cc->nsigned < MAX_SIGNED_BY) {
        cc->signed_by[cc->nsigned].cas = cas;
        cc->signed_by[cc->nsigned].result = r;
        cc->nsigned++;
    }
    return r;
}

int http_request_client_cert(const struct http_request *req, const char **ret_user,
                             const char *const **ret_groups)
{
    struct http_request *r = (struct http_request *)req;
    struct conn_ctx *cc = conn_ctx_of(r); /* the answer is cached per connection */

    if (cc->cert_state == 0) {
        int v = verify_client_cert(r, cc);
        cc->cert_state = v == 0 ? 1 : v;
    }
    if (cc->cert_state != 1)
        return cc->cert_state;
    if (ret_user)
        *ret_user = cc->user;
    if (ret_groups)
        *ret_groups = (const char *const *)cc->groups;
    return 0;
}

static void request_free(struct http_request *req)
{
    if (!req)
        return;
    strbuf_release(&req->body);
    free(req);
}

struct stream {
    http_stream_fn fn;
    void *userdata;
    void (*free_fn)(void *userdata);
};

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct stream *st = cls;
    long n = st->fn(st->userdata, buf, max);
    (void)pos;

    if (n > 0)
        return (ssize_t)n;
    return n == 0 ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void stream_done(void *cls)
{
    struct stream *st = cls;

    if (st->free_fn)
        st->free_fn(st->userdata);
    free(st);
}

static bool has_header(const struct http_response *resp, const char *name)
{
    for (size_t i = 0; i < resp->nheaders; i++)
        if (!strcasecmp(resp->headers[i].name, name))
            return true;
    return false;
}

static enum MHD_Result send_response(struct MHD_Connection *conn, struct http_response *resp)
{
    struct MHD_Response *r;
    enum MHD_Result ret;
    size_t len;
    char *body;

    if (resp->stream) {
        struct stream *st = xcalloc(1, sizeof(*st));
        *st = (struct stream){resp->stream, resp->stream_userdata, resp->stream_free};
        resp->stream = NULL; /* the stream belongs to libmicrohttpd now */
        r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, (size_t)16 * 1024, stream_read, st,
                                              stream_done);
        if (!r) {
            stream_done(st);
            return MHD_NO;
        }
    } else {
        body = strbuf_detach(&resp->body, &len);
        r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
        if (!r) {
            free(body);
            return MHD_NO;
        }
    }
    if (resp->content_type || !has_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE))
        (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                      resp->content_type ? resp->content_type : "application/json");
    for (size_t i = 0; i < resp->nheaders; i++)
        (void)MHD_add_response_header(r, resp->headers[i].name, resp->headers[i].value);
    ret = MHD_queue_response(conn, (unsigned)(resp->status ? resp->status : 500), r);
    MHD_destroy_response(r);
    return ret;
}

static void response_release(struct http_response *resp)
{
    if (resp->stream && resp->stream_free) /* never handed to libmicrohttpd */
        resp->stream_free(resp->stream_userdata);
    resp->stream = NULL;
    strbuf_release(&resp->body);
    for (size_t i = 0; i < resp->nheaders; i++) {
        free(resp->headers[i].name);
        free(resp->headers[i].value);
    }
    resp->nheaders = 0;
}

static enum MHD_Result too_large(struct MHD_Connection *conn, size_t max)
{
    struct http_response resp = {.status = 413, .body = STRBUF_INIT};
    enum MHD_Result ret;

    strbuf_addf(&resp.body,
                "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                "\"Failure\",\"message\":\"the request body is larger than %zu bytes\","
                "\"reason\":\"RequestEntityTooLarge\",\"code\":413}",
                max);
    ret = send_response(conn, &resp);
    response_release(&resp);
    return ret;
}

/* 431 Request Header Fields Too Large: more than HTTP_MAX_REQUEST_HEADERS headers. Refused
 * whole rather than truncated, so no handler or proxy ever sees part of a request. */
static enum MHD_Result too_many_headers(struct MHD_Connection *conn, int n)
{
    struct http_response resp = {.status = 431, .body = STRBUF_INIT};
    enum MHD_Result ret;

    strbuf_addf(&resp.body,
                "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                "\"Failure\",\"message\":\"the request has %d header fields, more than %d\","
                "\"reason\":\"RequestHeaderFieldsTooLarge\",\"code\":431}",
                n, HTTP_MAX_REQUEST_HEADERS);
    ret = send_response(conn, &resp);
    response_release(&resp);
    return ret;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/*
 * Percent-decoding of the path and the query values, as libmicrohttpd's own decoder does it
 * (invalid escapes stay as they are), except that %00 becomes DEL (0x7f): a decoded NUL would
 * cut the string short, so that "configmaps/a%00b" reached handlers as "configmaps/a". DEL is a
 * control character like NUL, so handlers that refuse control characters refuse both.
 */
static size_t unescape(void *cls, struct MHD_Connection *conn, char *s)
{
    char *w = s;
    (void)cls;
    (void)conn;

    for (const char *r = s; *r; w++) {
        int hi, lo;

        if (r[0] == '%' && (hi = hex_value(r[1])) >= 0 && (lo = hex_value(r[2])) >= 0) {
            *w = (char)(hi * 16 + lo);
            if (!*w)
                *w = 0x7f;
            r += 3;
        } else {
            *w = *r++;
        }
    }
    *w = '\0';
    return (size_t)(w - s);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls)
{
    struct http_server *srv = cls;
    struct http_request *req = *req_cls;
    struct http_response resp = {.status = 0, .body = STRBUF_INIT};
    enum MHD_Result ret;
    (void)version;

    if (!req) {
        const char *cl =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        int64_t n;
        int nh = MHD_get_connection_values(conn, MHD_HEADER_KIND, NULL, NULL);

        req = xcalloc(1, sizeof(*req));
        req->srv = srv;
        req->conn = conn;
        req->method = method;
        req->path = url;
        strbuf_init(&req->body);
        *req_cls = req;
        if (nh > HTTP_MAX_REQUEST_HEADERS) {
            req->too_big = true; /* the body, if any, is read and dropped */
            req->too_many = true;
            return too_many_headers(conn, nh);
        }
        /* Refuse an announced oversized body before reading any of it. */
        if (cl && parse_i64(cl, &n) == 0 && (n < 0 || (uint64_t)n > srv->max_body)) {
            req->too_big = true;
            return too_large(conn, srv->max_body);
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (!req->too_big && req->body.len + *upload_data_size > srv->max_body)
            req->too_big = true;
        if (!req->too_big)
            strbuf_add(&req->body, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (req->too_many)
        return too_many_headers(conn, MHD_get_connection_values(conn, MHD_HEADER_KIND, NULL, NULL));
    if (req->too_big)
        return too_large(conn, srv->max_body);
    srv->fn(req, &resp, srv->userdata);
    ret = send_response(conn, &resp);
    response_release(&resp);
    return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    request_free(*req_cls);
    *req_cls = NULL;
}

__attribute__((format(printf, 2, 0))) static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    char buf[256];
    (void)cls;

    if (LOG_DEBUG > log_max_level)
        return;
    (void)vsnprintf(buf, sizeof(buf), fmt, ap);
    log_debug("http", "%s", buf);
}

/* host (numeric or a name) and port to a socket address. */
static int resolve(const char *host, uint16_t port, struct sockaddr_storage *ret, socklen_t *len)
{
    struct addrinfo hints = {.ai_flags = AI_PASSIVE | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    char service[8];

    (void)snprintf(service, sizeof(service), "%u", (unsigned)port);
    if (getaddrinfo(host, service, &hints, &res) != 0 || !res)
        return -EINVAL;
    memcpy(ret, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

int http_server_start(const struct http_server_opts *opts, http_handler_fn handler, void *userdata,
                      struct http_server **ret)
{
    struct http_server *s;
    struct sockaddr_storage addr;
    socklen_t alen;
    unsigned flags =
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    int r;

    if (!handler || (!!opts->cert_pem != !!opts->key_pem) ||
        (opts->client_ca_pem && !opts->cert_pem))
        return -EINVAL;
    r = resolve(opts->host ? opts->host : "127.0.0.1", opts->port, &addr, &alen);
    if (r < 0)
        return r;
    s = xcalloc(1, sizeof(*s));
    s->fn = handler;
    s->userdata = userdata;
    s->max_body = opts->max_body ? opts->max_body : DEFAULT_MAX_BODY;
    s->client_ca = opts->client_ca_pem != NULL;
    if (addr.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    if (opts->cert_pem) {
        flags |= MHD_USE_TLS;
        s->cert = xstrdup(opts->cert_pem);
        s->key = xstrdup(opts->key_pem);
        s->ca = opts->client_ca_pem ? xstrdup(opts->client_ca_pem) : NULL;
    }
    {
        struct MHD_OptionItem o[14];
        size_t n = 0;
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, s};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, s};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)on_mhd_log, s};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)unescape, NULL};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, &addr};
        o[n++] = (struct MHD_OptionItem){
            MHD_OPTION_CONNECTION_LIMIT,
            (intptr_t)(opts->max_connections ? opts->max_connections : DEFAULT_MAX_CONNECTIONS),
            NULL};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, 120, NULL};
        o[n++] =
            (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)64 * 1024, NULL};
        if (s->cert) {
            o[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, s->cert};
            o[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, s->key};
        }
        if (s->ca)
            o[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_TRUST, 0, s->ca};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
        errno = 0;
        s->d = MHD_start_daemon(flags, opts->port, NULL, NULL, on_request, s, MHD_OPTION_ARRAY, o,
                                MHD_OPTION_END);
    }
    if (!s->d) {
        r = errno == EADDRINUSE ? -EADDRINUSE : opts->cert_pem ? -EINVAL : -EIO;
        http_server_stop(s);
        return r;
    }
    *ret = s;
    return 0;
}

uint16_t http_server_port(const struct http_server *s)
{
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    return di ? di->port : 0;
}

void http_server_stop(struct http_server *s)
{
    if (!s)
        return;
    if (s->d)
        MHD_stop_daemon(s->d);
    free(s->cert);
    free(s->key);
    free(s->ca);
    free(s);
}
