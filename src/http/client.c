/*
 * HTTP client on libcurl (see client.h). Each pooled slot is an easy handle plus a multi
 * handle of its own: the multi interface is what lets curl_multi_wakeup() interrupt a request
 * that waits for bytes (a watch with nothing to say), so stopping an informer is immediate
 * instead of waiting for a progress callback. The multi handle owns the connection cache, and
 * the pair stays together in the pool, so the connection lives on between requests.
 */
#include "http/client.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

#define DEFAULT_MAX_BODY        ((size_t)64 << 20)
#define DEFAULT_CONNECT_TIMEOUT 10000L
#define MAX_IDLE_SLOTS          16
#define POLL_MS                 1000

struct slot {
    CURL *easy;
    CURLM *multi;
};

struct http_client {
    char *ca_file;
    char *cert_file;
    char *key_file;
    bool insecure;
    long connect_timeout_ms;
    pthread_mutex_t lock;
    struct slot idle[MAX_IDLE_SLOTS];
    size_t nidle;
};

struct http_client_cancel {
    pthread_mutex_t lock;
    bool fired;
    CURLM *active; /* the multi handle of the request using the token, woken on fire */
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static bool global_ok;

/*
 * koord speaks only http and https (CURLOPT_PROTOCOLS_STR below), but Debian's libcurl-gnutls
 * is built with SSH support, and curl_global_init() calls libssh2_init(0), which initialises
 * OpenSSL's libcrypto for SSH ciphers: 1.5 MB of resident memory in every koord process, a tenth
 * of the node agent's, for a protocol never used. When libssh2 is loaded we initialise it first
 * with its documented LIBSSH2_INIT_NO_CRYPTO flag; its init is counted, so curl's call then finds
 * it done. Looked up at run time, not linked: without libssh2 nothing happens.
 */
#define LIBSSH2_INIT_NO_CRYPTO 0x0001

static void global_init(void)
{
    int (*ssh2_init)(int flags);

    *(void **)&ssh2_init = dlsym(RTLD_DEFAULT, "libssh2_init");
    if (ssh2_init)
        (void)ssh2_init(LIBSSH2_INIT_NO_CRYPTO);
    global_ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

int http_client_new(const struct http_client_opts *opts, struct http_client **ret)
{
    struct http_client *c;

    (void)pthread_once(&global_once, global_init);
    if (!global_ok)
        return -EIO;
    c = xcalloc(1, sizeof(*c));
    c->ca_file = dup_or_null(opts->ca_file);
    c->cert_file = dup_or_null(opts->cert_file);
    c->key_file = dup_or_null(opts->key_file);
    c->insecure = opts->insecure;
    c->connect_timeout_ms =
        opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms : DEFAULT_CONNECT_TIMEOUT;
    CHECK(pthread_mutex_init(&c->lock, NULL) == 0);
    *ret = c;
    return 0;
}

static void slot_destroy(struct slot *s)
{
    if (s->multi)
        (void)curl_multi_cleanup(s->multi);
    if (s->easy)
        curl_easy_cleanup(s->easy);
    s->multi = NULL;
    s->easy = NULL;
}

void http_client_free(struct http_client *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nidle; i++)
        slot_destroy(&c->idle[i]);
    (void)pthread_mutex_destroy(&c->lock);
    free(c->ca_file);
    free(c->cert_file);
    free(c->key_file);
    free(c);
}

struct http_client_cancel *http_client_cancel_new(void)
{
    struct http_client_cancel *k = xcalloc(1, sizeof(*k));

    CHECK(pthread_mutex_init(&k->lock, NULL) == 0);
    return k;
}

void http_client_cancel_fire(struct http_client_cancel *k)
{
    (void)pthread_mutex_lock(&k->lock);
    k->fired = true;
    if (k->active)
        (void)curl_multi_wakeup(k->active);
    (void)pthread_mutex_unlock(&k->lock);
}

bool http_client_cancel_fired(struct http_client_cancel *k)
{
    bool fired;

    (void)pthread_mutex_lock(&k->lock);
    fired = k->fired;
    (void)pthread_mutex_unlock(&k->lock);
    return fired;
}

void http_client_cancel_free(struct http_client_cancel *k)
{
    if (!k)
        return;
    (void)pthread_mutex_destroy(&k->lock);
    free(k);
}

void http_client_resp_release(struct http_client_resp *r)
{
    strbuf_release(&r->body);
    r->status = 0;
    r->retry_after_s = 0;
    r->content_type[0] = '\0';
}

static int slot_take(struct http_client *c, struct slot *ret)
{
    (void)pthread_mutex_lock(&c->lock);
    if (c->nidle > 0) {
        *ret = c->idle[--c->nidle];
        (void)pthread_mutex_unlock(&c->lock);
        return 0;
    }
    (void)pthread_mutex_unlock(&c->lock);
    ret->easy = curl_easy_init();
    ret->multi = curl_multi_init();
    if (!ret->easy || !ret->multi) {
        slot_destroy(ret);
        return -ENOMEM;
    }
    return 0;
}

/* A slot whose transfer failed half-way may hold a broken connection; curl notices and drops
 * it on next use, so every slot goes back unless the pool is full. */
static void slot_give(struct http_client *c, struct slot *s)
{
    (void)pthread_mutex_lock(&c->lock);
    if (c->nidle < MAX_IDLE_SLOTS) {
        c->idle[c->nidle++] = *s;
        s->easy = NULL;
        s->multi = NULL;
    }
    (void)pthread_mutex_unlock(&c->lock);
    slot_destroy(s);
}

struct xfer {
    const struct http_client_req *req;
    struct http_client_resp *resp;
    CURL *easy;
    size_t max_body;
    int err; /* set by the write callback when it aborts */
};

static size_t on_write(char *p, size_t size, size_t n, void *ud)
{
    struct xfer *x = ud;
    size_t len = size * n;
    long status = 0;

    if (x->req->on_data) {
        int r;

        (void)curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
        x->resp->status = status;
        r = x->req->on_data(x->req->userdata, status, p, len);
        if (r < 0) {
            x->err = r;
            return 0;
        }
        return len;
    }
    if (x->resp->body.len + len > x->max_body) {
        x->err = -E2BIG;
        return 0;
    }
    strbuf_add(&x->resp->body, p, len);
    return len;
}

static int map_curl(CURLcode rc)
{
    switch (rc) {
    case CURLE_OK:
        return 0;
    case CURLE_COULDNT_CONNECT:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
        return -ECONNREFUSED;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return -EHOSTUNREACH;
    case CURLE_OPERATION_TIMEDOUT:
        return -ETIMEDOUT;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
        return -EPROTO;
    case CURLE_OUT_OF_MEMORY:
        return -ENOMEM;
    default:
        return -EIO;
    }
}

static void set_options(struct http_client *c, const struct http_client_req *req, CURL *e,
                        struct curl_slist *hdrs, struct curl_slist *connect_to, struct xfer *x)
{
    (void)curl_easy_setopt(e, CURLOPT_URL, req->url);
    (void)curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    (void)curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    (void)curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    (void)curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
    /* libcurl copies each request it sends over TLS into an upload buffer of this size, kept
     * for the handle's life: 64 KB by default, 16 KB (its minimum) here. A node agent holds a
     * handle per watch; a larger body is sent in 16 KB pieces. */
    (void)curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, 16384L);
    (void)curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, req->timeout_ms > 0 ? req->timeout_ms : 0L);
    (void)curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    (void)curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
    (void)curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    (void)curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    if (connect_to)
        (void)curl_easy_setopt(e, CURLOPT_CONNECT_TO, connect_to);
    if (c->ca_file) {
        /* The given CA only, as client-go trusts only the kubeconfig's CA. Without clearing
         * CAPATH, libcurl-gnutls also parses every certificate of the system's CA directory for
         * each connection: 18 MB of heap in `koord agent`, for certificates never used. */
        (void)curl_easy_setopt(e, CURLOPT_CAINFO, c->ca_file);
        (void)curl_easy_setopt(e, CURLOPT_CAPATH, NULL);
    }
    if (c->cert_file) {
        (void)curl_easy_setopt(e, CURLOPT_SSLCERT, c->cert_file);
        (void)curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
    }
    if (c->key_file) {
        (void)curl_easy_setopt(e, CURLOPT_SSLKEY, c->key_file);
        (void)curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
    }
    (void)curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, c->insecure ? 0L : 1L);
    (void)curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, c->insecure ? 0L : 2L);
    if (!strcmp(req->method, "GET")) {
        (void)curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    } else {
        (void)curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, req->method);
        if (req->body) {
            (void)curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
            (void)curl_easy_setopt(e, CURLOPT_POSTFIELDS, req->body);
        } else if (strcmp(req->method, "DELETE")) {
            (void)curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
            (void)curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
        }
    }
}

/* Drives the transfer on the slot's multi handle until it ends or the token fires. */
static int run(struct slot *s, struct http_client_cancel *k)
{
    CURLcode result = CURLE_OK;
    int running = 1, r = 0;
    CURLMsg *msg;
    int left;

    if (curl_multi_add_handle(s->multi, s->easy) != CURLM_OK)
        return -EIO;
    if (k) {
        (void)pthread_mutex_lock(&k->lock);
        k->active = s->multi;
        if (k->fired)
            r = -ECANCELED;
        (void)pthread_mutex_unlock(&k->lock);
    }
    while (r == 0) {
        if (curl_multi_perform(s->multi, &running) != CURLM_OK) {
            r = -EIO;
            break;
        }
        if (!running)
            break;
        if (curl_multi_poll(s->multi, NULL, 0, POLL_MS, NULL) != CURLM_OK) {
            r = -EIO;
            break;
        }
        if (k && http_client_cancel_fired(k))
            r = -ECANCELED;
    }
    if (k) {
        (void)pthread_mutex_lock(&k->lock);
        k->active = NULL;
        (void)pthread_mutex_unlock(&k->lock);
    }
    if (r == 0) {
        while ((msg = curl_multi_info_read(s->multi, &left)))
            if (msg->msg == CURLMSG_DONE && msg->easy_handle == s->easy)
                result = msg->data.result;
        r = map_curl(result);
    }
    (void)curl_multi_remove_handle(s->multi, s->easy);
    return r;
}

int http_client_do(struct http_client *c, const struct http_client_req *req,
                   struct http_client_resp *ret)
{
    struct curl_slist *hdrs = NULL, *connect_to = NULL;
    struct xfer x = {.req = req, .resp = ret};
    struct slot s = {0};
    curl_off_t retry = 0;
    const char *ct = NULL;
    int r;

    r = slot_take(c, &s);
    if (r < 0)
        return r;
    curl_easy_reset(s.easy);
    x.easy = s.easy;
    x.max_body = req->max_body ? req->max_body : DEFAULT_MAX_BODY;
    strbuf_reset(&ret->body);
    ret->status = 0;
    ret->retry_after_s = 0;
    ret->content_type[0] = '\0';
    /* curl adds "Expect: 100-continue" to large bodies; API servers need no such round trip. */
    hdrs = curl_slist_append(hdrs, "Expect:");
    for (const char *const *h = req->headers; h && *h && hdrs; h++)
        hdrs = curl_slist_append(hdrs, *h);
    if (req->connect_to)
        connect_to = curl_slist_append(NULL, req->connect_to);
    if (!hdrs || (req->connect_to && !connect_to)) {
        r = -ENOMEM;
        goto out;
    }
    set_options(c, req, s.easy, hdrs, connect_to, &x);
    r = run(&s, req->cancel);
    (void)curl_easy_getinfo(s.easy, CURLINFO_RESPONSE_CODE, &ret->status);
    if (x.err < 0)
        r = x.err;
    if (r < 0)
        goto out;
    if (curl_easy_getinfo(s.easy, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
        (void)snprintf(ret->content_type, sizeof(ret->content_type), "%s", ct);
    if (curl_easy_getinfo(s.easy, CURLINFO_RETRY_AFTER, &retry) == CURLE_OK && retry > 0)
        ret->retry_after_s = (long)retry;
out:
    curl_slist_free_all(hdrs);
    curl_slist_free_all(connect_to);
    slot_give(c, &s);
    return r;
}

/* ---- pulled responses ---- */

#define STREAM_MAX_PENDING ((size_t)1 << 20) /* body bytes held before the transfer pauses */
#define STREAM_MAX_HEADERS 128

struct http_client_stream {
    struct http_client *c;
    struct slot s;
    struct http_client_cancel *k;
    struct curl_slist *hdrs;
    struct curl_slist *connect_to;
    char *body;
    char **headers; /* NULL-terminated "Name: value" lines of the current head */
    size_t nheaders;
    struct strbuf buf; /* received, not yet read: bytes off .. len */
    size_t off;
    long status;
    bool added;     /* the easy handle is in the multi handle */
    bool head_done; /* the final (non-1xx) response head arrived */
    bool paused;    /* the write callback paused the transfer: buf was full */
    bool done;
    int err; /* the transfer's result once done */
};

static void stream_headers_reset(struct http_client_stream *st)
{
    for (size_t i = 0; i < st->nheaders; i++)
        free(st->headers[i]);
    st->nheaders = 0;
    if (st->headers)
        st->headers[0] = NULL;
}

/* One header line per call, CRLF included. A status line starts a head (1xx heads are followed
 * by the real one), the empty line ends it; trailers after the body are ignored. */
static size_t on_stream_header(char *p, size_t size, size_t n, void *ud)
{
    struct http_client_stream *st = ud;
    size_t len = size * n;

    if (st->head_done)
        return len;
    while (len && (p[len - 1] == '\n' || p[len - 1] == '\r'))
        len--;
    if (len >= 5 && !strncmp(p, "HTTP/", 5)) {
        stream_headers_reset(st);
    } else if (len == 0) {
        long code = 0;
        (void)curl_easy_getinfo(st->s.easy, CURLINFO_RESPONSE_CODE, &code);
        if (code >= 200) {
            st->status = code;
            st->head_done = true;
        }
    } else if (st->nheaders < STREAM_MAX_HEADERS) {
        if (!st->headers)
            st->headers = xcalloc(STREAM_MAX_HEADERS + 1, sizeof(*st->headers));
        st->headers[st->nheaders++] = xstrndup(p, len);
        st->headers[st->nheaders] = NULL;
    }
    return size * n;
}

static size_t on_stream_write(char *p, size_t size, size_t n, void *ud)
{
    struct http_client_stream *st = ud;
    size_t len = size * n;

    if (st->buf.len - st->off >= STREAM_MAX_PENDING) {
        st->paused = true;
        return CURL_WRITEFUNC_PAUSE; /* delivered again once resumed */
    }
    strbuf_add(&st->buf, p, len);
    return len;
}

/* Performs what is ready without waiting; notes the end of the transfer. */
static void stream_step(struct http_client_stream *st)
{
    CURLcode result = CURLE_OK;
    int running = 0, left;
    CURLMsg *msg;

    if (st->done)
        return;
    if (curl_multi_perform(st->s.multi, &running) != CURLM_OK) {
        st->done = true;
        st->err = -EIO;
        return;
    }
    if (running)
        return;
    while ((msg = curl_multi_info_read(st->s.multi, &left)))
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == st->s.easy)
            result = msg->data.result;
    st->done = true;
    st->err = map_curl(result);
}

/* Waits for the transfer's sockets (or a wake-up from the token). */
static int stream_wait(struct http_client_stream *st)
{
    if (st->k && http_client_cancel_fired(st->k))
        return -ECANCELED;
    if (curl_multi_poll(st->s.multi, NULL, 0, POLL_MS, NULL) != CURLM_OK)
        return -EIO;
    if (st->k && http_client_cancel_fired(st->k))
        return -ECANCELED;
    return 0;
}

int http_client_open(struct http_client *c, const struct http_client_req *req,
                     struct http_client_stream **ret)
{
    struct http_client_stream *st = xcalloc(1, sizeof(*st));
    struct http_client_req copy = *req;
    int r;

    st->c = c;
    st->k = req->cancel;
    strbuf_init(&st->buf);
    r = slot_take(c, &st->s);
    if (r < 0) {
        free(st);
        return r;
    }
    curl_easy_reset(st->s.easy);
    st->hdrs = curl_slist_append(NULL, "Expect:");
    for (const char *const *h = req->headers; h && *h && st->hdrs; h++) {
        struct curl_slist *next = curl_slist_append(st->hdrs, *h);
        if (!next) {
            curl_slist_free_all(st->hdrs);
            st->hdrs = NULL;
        }
        st->hdrs = next;
    }
    if (req->connect_to)
        st->connect_to = curl_slist_append(NULL, req->connect_to);
    if (!st->hdrs || (req->connect_to && !st->connect_to)) {
        r = -ENOMEM;
        goto fail;
    }
    if (req->body) {
        st->body = xmalloc(req->body_len + 1);
        memcpy(st->body, req->body, req->body_len);
        st->body[req->body_len] = '\0';
        copy.body = st->body;
    }
    set_options(c, &copy, st->s.easy, st->hdrs, st->connect_to, NULL);
    (void)curl_easy_setopt(st->s.easy, CURLOPT_WRITEFUNCTION, on_stream_write);
    (void)curl_easy_setopt(st->s.easy, CURLOPT_WRITEDATA, st);
    (void)curl_easy_setopt(st->s.easy, CURLOPT_HEADERFUNCTION, on_stream_header);
    (void)curl_easy_setopt(st->s.easy, CURLOPT_HEADERDATA, st);
    if (curl_multi_add_handle(st->s.multi, st->s.easy) != CURLM_OK) {
        r = -EIO;
        goto fail;
    }
    st->added = true;
    if (st->k) {
        (void)pthread_mutex_lock(&st->k->lock);
        st->k->active = st->s.multi;
        (void)pthread_mutex_unlock(&st->k->lock);
    }
    for (;;) {
        stream_step(st);
        if (st->head_done)
            break;
        if (st->done) {
            r = st->err < 0 ? st->err : -EIO;
            goto fail;
        }
        if ((r = stream_wait(st)) < 0)
            goto fail;
    }
    *ret = st;
    return 0;
fail:
    http_client_stream_close(st);
    return r;
}

long http_client_stream_status(const struct http_client_stream *s)
{
    return s->status;
}

const char *const *http_client_stream_headers(const struct http_client_stream *s)
{
    static const char *const none[] = {NULL};
    return s->headers ? (const char *const *)s->headers : none;
}

long http_client_stream_read(struct http_client_stream *s, char *buf, size_t max)
{
    size_t n;
    int r;

    while (s->off == s->buf.len) {
        strbuf_reset(&s->buf);
        s->off = 0;
        if (s->done)
            return s->err;
        if (s->paused) {
            s->paused = false;
            (void)curl_easy_pause(s->s.easy, CURLPAUSE_CONT);
            continue;
        }
        stream_step(s);
        if (s->off < s->buf.len || s->done)
            continue;
        if ((r = stream_wait(s)) < 0)
            return r;
    }
    n = s->buf.len - s->off;
    if (n > max)
        n = max;
    memcpy(buf, s->buf.buf + s->off, n);
    s->off += n;
    return (long)n;
}

void http_client_stream_close(struct http_client_stream *s)
{
    if (!s)
        return;
    if (s->k) {
        (void)pthread_mutex_lock(&s->k->lock);
        if (s->k->active == s->s.multi)
            s->k->active = NULL;
        (void)pthread_mutex_unlock(&s->k->lock);
    }
    if (s->added)
        (void)curl_multi_remove_handle(s->s.multi, s->s.easy);
    if (s->s.easy)
        slot_give(s->c, &s->s);
    curl_slist_free_all(s->hdrs);
    curl_slist_free_all(s->connect_to);
    stream_headers_reset(s);
    free(s->headers);
    free(s->body);
    strbuf_release(&s->buf);
    free(s);
}
