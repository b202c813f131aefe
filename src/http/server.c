/*
 * HTTP server on libmicrohttpd (see server.h). The access callback runs on an I/O thread, several
 * times per request in libmicrohttpd's model: once to set up our state, once per body chunk
 * (appended up to max_body), once at the end, where the connection is parked (suspended) and the
 * request handed to the worker pool, and once more when the worker gives the connection back,
 * where the answer is queued.
 */
#include "http/server.h"

#include <arpa/inet.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "base/log.h"

#define DEFAULT_MAX_BODY        (3u << 20)
#define DEFAULT_MAX_PER_ADDRESS 1024
#define DEFAULT_MAX_WORKERS     256
#define DEFAULT_IDLE_TIMEOUT    120
#define DEFAULT_FIRST_TIMEOUT   10
#define DEFAULT_FD_RESERVE      256
#define MAX_IO_THREADS          4
#define LISTEN_BACKLOG          4096
#define MAX_CERT_GROUPS         16

/* The structure a job is embedded in. */
#define job_owner(ptr, type) ((type *)(void *)((char *)(ptr)-offsetof(type, job)))

struct job;
struct http_stream;

struct http_server {
    struct MHD_Daemon *d;
    http_handler_fn fn;
    void *userdata;
    size_t max_body;
    unsigned idle_timeout, first_timeout; /* seconds */
    bool client_ca;
    bool has_housekeeper;
    bool stopping;                /* under mu: the pool takes no more work */
    atomic_bool stopping_streams; /* requests answered in place, streams end */
    /* libmicrohttpd uses these buffers in place: they live as long as the daemon. */
    char *cert;
    char *key;
    char *ca;
    /* The worker pool and the sleeping streams, under mu. */
    pthread_mutex_t mu;
    pthread_cond_t work_cv; /* a job was queued */
    pthread_cond_t done_cv; /* a worker left */
    pthread_cond_t tick_cv; /* wakes the housekeeper to stop */
    struct job *head, *tail;
    size_t queued;
    unsigned workers, idle, min_workers, max_workers;
    struct http_stream *sleeping;
    size_t nsleeping;
    struct conn_ctx *waiting_head, *waiting_tail; /* oldest deadline first */
    pthread_t housekeeper;
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
    /*
     * The first-request deadline (see waiting_add()): a connection that has not yet had a
     * successful answer is on the server's `waiting` list, oldest first, while it waits for a
     * request, and is shut down by the housekeeper when its deadline passes.
     */
    bool served;  /* a request succeeded: only libmicrohttpd's idle timeout applies now */
    bool waiting; /* on the list */
    int fd;
    int64_t deadline_ms;
    struct conn_ctx *prev, *next;
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
    atomic_int state;    /* enum req_state */
    struct job {
        void (*run)(struct job *job);
        int64_t queued_ms;
        struct job *next;
    } job;
    struct http_response resp; /* filled by the handler on a worker */
};

static void response_release(struct http_response *resp);

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

/*
 * The first-request deadline. Connections that have had no successful answer wait on a list in
 * deadline order (appended at the tail, all with the same delay), and the housekeeper shuts
 * down those whose deadline passed: `shutdown()` only, so libmicrohttpd sees the connection fail
 * and closes it itself, on its own thread. The descriptor is still the connection's when the
 * housekeeper uses it, as a connection leaves the list (NOTIFY_CLOSED) before libmicrohttpd
 * closes it. libmicrohttpd's per-connection timeouts would do this too, but it scans the
 * connections with a timeout of their own on every turn of its loop: 10,000 agents made that
 * a core's work.
 */
static void waiting_add(struct http_server *s, struct conn_ctx *cc)
{
    CHECK(pthread_mutex_lock(&s->mu) == 0);
    if (!cc->waiting && cc->fd >= 0) {
        cc->deadline_ms = http_monotonic_ms() + (int64_t)s->first_timeout * 1000;
        cc->waiting = true;
        cc->next = NULL;
        cc->prev = s->waiting_tail;
        if (s->waiting_tail)
            s->waiting_tail->next = cc;
        else
            s->waiting_head = cc;
        s->waiting_tail = cc;
    }
    CHECK(pthread_mutex_unlock(&s->mu) == 0);
}

static void waiting_del_locked(struct http_server *s, struct conn_ctx *cc)
{
    if (!cc->waiting)
        return;
    if (cc->prev)
        cc->prev->next = cc->next;
    else
        s->waiting_head = cc->next;
    if (cc->next)
        cc->next->prev = cc->prev;
    else
        s->waiting_tail = cc->prev;
    cc->prev = cc->next = NULL;
    cc->waiting = false;
}

static void waiting_del(struct http_server *s, struct conn_ctx *cc)
{
    CHECK(pthread_mutex_lock(&s->mu) == 0);
    waiting_del_locked(s, cc);
    CHECK(pthread_mutex_unlock(&s->mu) == 0);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct http_server *s = cls;

    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        struct conn_ctx *cc = xcalloc(1, sizeof(*cc));

        cc->fd = ci ? ci->connect_fd : -1;
        *socket_context = cc;
        waiting_add(s, cc);
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        if (*socket_context)
            waiting_del(s, *socket_context);
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

/* ---- the worker pool ---- */

/*
 * Work for a worker: a request's handler, or the next read of a blocking stream. Jobs are
 * embedded in what they work on; the queue is FIFO. The pool starts min_workers threads and
 * adds one whenever work waits with no worker idle, up to max_workers: a handler that blocks
 * (a webhook call, a proxied request) then costs a thread, never the other connections' turn.
 * Threads above the minimum leave after WORKER_IDLE_S seconds without work.
 */
#define WORKER_IDLE_S 30
#define TICK_MS       250 /* the housekeeper's period: wake-ups, hang-ups, pool growth */
#define HANGUP_EVERY  4   /* ticks between checks of sleeping streams' sockets */
#define GROW_AFTER_MS 20  /* a job waiting this long with no idle worker adds a worker */

static void pool_spawn_locked(struct http_server *s);

/* Queues a job; false when the server is stopping and takes no more work. */
static bool pool_push(struct http_server *s, struct job *job)
{
    CHECK(pthread_mutex_lock(&s->mu) == 0);
    if (s->stopping) {
        CHECK(pthread_mutex_unlock(&s->mu) == 0);
        return false;
    }
    job->next = NULL;
    job->queued_ms = http_monotonic_ms();
    if (s->tail)
        s->tail->next = job;
    else
        s->head = job;
    s->tail = job;
    s->queued++;
    if (s->idle > 0)
        (void)pthread_cond_signal(&s->work_cv);
    else
        pool_spawn_locked(s);
    CHECK(pthread_mutex_unlock(&s->mu) == 0);
    return true;
}

static void *worker_main(void *arg)
{
    struct http_server *s = arg;

    CHECK(pthread_mutex_lock(&s->mu) == 0);
    for (;;) {
        struct job *job = s->head;

        if (job) {
            s->head = job->next;
            if (!s->head)
                s->tail = NULL;
            s->queued--;
            CHECK(pthread_mutex_unlock(&s->mu) == 0);
            job->run(job);
            CHECK(pthread_mutex_lock(&s->mu) == 0);
            continue;
        }
        if (s->stopping)
            break;
        {
            struct timespec until;
            int r;

            CHECK(clock_gettime(CLOCK_MONOTONIC, &until) == 0);
            until.tv_sec += WORKER_IDLE_S;
            s->idle++;
            r = pthread_cond_timedwait(&s->work_cv, &s->mu, &until);
            s->idle--;
            if (r == ETIMEDOUT && !s->head && s->workers > s->min_workers)
                break;
        }
    }
    s->workers--;
    (void)pthread_cond_broadcast(&s->done_cv);
    CHECK(pthread_mutex_unlock(&s->mu) == 0);
    return NULL;
}

/* One more worker unless at the cap. Called with s->mu held. */
static void pool_spawn_locked(struct http_server *s)
{
    pthread_attr_t attr;
    pthread_t t;

    if (s->workers >= s->max_workers || s->stopping)
        return;
    CHECK(pthread_attr_init(&attr) == 0);
    CHECK(pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0);
    if (pthread_create(&t, &attr, worker_main, s) == 0)
        s->workers++;
    else
        log_warn("http", "cannot start a worker thread (%u running)", s->workers);
    (void)pthread_attr_destroy(&attr);
}

/* ---- requests ---- */

enum req_state { REQ_READING, REQ_QUEUED, REQ_DONE };

static void request_free(struct http_request *req)
{
    if (!req)
        return;
    response_release(&req->resp);
    strbuf_release(&req->body);
    free(req);
}

/* On a worker: the handler, then the connection goes back to its I/O thread, which calls
 * on_request() again and sends the answer. */
static void request_run(struct job *job)
{
    struct http_request *req = job_owner(job, struct http_request);
    struct http_server *srv = req->srv;

    srv->fn(req, &req->resp, srv->userdata);
    atomic_store(&req->state, REQ_DONE);
    MHD_resume_connection(req->conn);
}

/* ---- streams ---- */

/*
 * A streamed body. A polled stream that has nothing to send parks its connection and joins the
 * server's list of sleeping streams; http_stream_wake() or the housekeeper (its wake_at came, or
 * the client hung up) takes it off and resumes the connection. s->mu guards the flags and the
 * list, so a wake that races the parking is never lost: `woken` records a wake that came while
 * the stream was being read. A blocking stream is read on a worker into buf, one read at a time.
 */
struct http_stream {
    http_stream_fn fn;
    void *userdata;
    void (*free_fn)(void *userdata);
    struct http_server *srv;
    struct MHD_Connection *conn;
    int fd;
    bool blocking;
    bool sleeping; /* parked and on the list */
    bool woken;    /* a wake came while it was not sleeping */
    bool hangup;   /* the client went away while it slept */
    bool reading;  /* blocking: a worker is in fn */
    bool parked;   /* blocking: parked until the worker's read is done */
    bool eof;      /* blocking: fn ended (err < 0 when it failed) */
    bool freed;    /* blocking: libmicrohttpd let go while a worker read; the worker frees */
    long err;
    int64_t wake_at;
    struct http_stream *prev, *next; /* in s->sleeping */
    struct job job;                  /* blocking: the next read */
    char *buf;
    size_t len, off;
};

#define BLOCKING_BUF ((size_t)16 * 1024)

int64_t http_monotonic_ms(void)
{
    struct timespec ts;

    CHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_list_del_locked(struct http_server *s, struct http_stream *st)
{
    if (st->prev)
        st->prev->next = st->next;
    else
        s->sleeping = st->next;
    if (st->next)
        st->next->prev = st->prev;
    st->prev = st->next = NULL;
    st->sleeping = false;
    s->nsleeping--;
}

/* Takes a sleeping stream off the list and gives its connection back. s->mu held. */
static void stream_resume_locked(struct http_server *s, struct http_stream *st)
{
    sleep_list_del_locked(s, st);
    MHD_resume_connection(st->conn);
}

void http_stream_wake(struct http_stream *st)
{
    struct http_server *s = st->srv;

    CHECK(pthread_mutex_lock(&s->mu) == 0);
    if (st->sleeping)
        stream_resume_locked(s, st);
    else
        st->woken = true;
    CHECK(pthread_mutex_unlock(&s->mu) == 0);
}

void http_stream_wake_at(struct http_stream *st, int64_t monotonic_ms)
{
    if (!st->wake_at || monotonic_ms < st->wake_at)
        st->wake_at = monotonic_ms;
}

static void stream_free(struct http_stream *st)
{
    if (st->free_fn)
        st->free_fn(st->userdata);
    free(st->buf);
    free(st);
}

/* On a worker: one read of a blocking stream, then the connection is given back. */
static void stream_fill(struct job *job)
{
    struct http_stream *st = job_owner(job, struct http_stream);
    struct http_server *s = st->srv;
    long n = st->fn(st->userdata, st, st->buf, BLOCKING_BUF);
    bool freed;

    CHECK(pthread_mutex_lock(&s->mu) == 0);
    st->reading = false;
    if (n > 0) {
        st->len = (size_t)(n > (long)BLOCKING_BUF ? (long)BLOCKING_BUF : n);
        st->off = 0;
    } else {
        st->eof = true;
        st->err = n;
    }
    freed = st->freed;
    if (st->parked && !freed) {
        st->parked = false;
        MHD_resume_connection(st->conn);
    }
    CHECK(pthread_mutex_unlock(&s->mu) == 0);
    if (freed)
        stream_free(st);
}

static ssize_t blocking_read(struct http_stream *st, char *buf, size_t max)
{
    struct http_server *s = st->srv;
    ssize_t ret = 0;

    CHECK(pthread_mutex_lock(&s->mu) == 0);
    for (;;) {
        if (st->off < st->len) {
            size_t k = st->len - st->off < max ? st->len - st->off : max;
            memcpy(buf, st->buf + st->off, k);
            st->off += k;
            ret = (ssize_t)k;
            break;
        }
        if (st->eof || s->stopping) {
            ret = st->eof && st->err == 0 ? MHD_CONTENT_READER_END_OF_STREAM
                                          : MHD_CONTENT_READER_END_WITH_ERROR;
            break;
        }
        if (!st->reading) {
            st->reading = true;
            st->len = st->off = 0;
            st->job.run = stream_fill;
            CHECK(pthread_mutex_unlock(&s->mu) == 0);
            if (!pool_push(s, &st->job)) {
                CHECK(pthread_mutex_lock(&s->mu) == 0);
                st->reading = false;
                st->eof = true;
                st->err = -ESHUTDOWN;
                continue;
            }
            CHECK(pthread_mutex_lock(&s->mu) == 0);
            if (!st->reading)
                continue; /* the read finished already */
        }
        /* Returning 0 after parking is how libmicrohttpd lets a reader wait. */
        st->parked = true;
        MHD_suspend_connection(st->conn);
        break;
    }
    CHECK(pthread_mutex_unlock(&s->mu) == 0);
    return ret;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct http_stream *st = cls;
    struct http_server *s = st->srv;
    (void)pos;

    if (st->blocking)
        return blocking_read(st, buf, max);
    for (;;) {
        long n;

        if (st->hangup || atomic_load(&s->stopping_streams))
            return MHD_CONTENT_READER_END_WITH_ERROR;
        st->wake_at = 0;
        n = st->fn(st->userdata, st, buf, max);
        if (n > 0)
            return (ssize_t)n;
        if (n == 0)
            return MHD_CONTENT_READER_END_OF_STREAM;
        if (n != HTTP_STREAM_WAIT)
            return MHD_CONTENT_READER_END_WITH_ERROR;
        CHECK(pthread_mutex_lock(&s->mu) == 0);
        if (st->woken || s->stopping) {
            st->woken = false;
            CHECK(pthread_mutex_unlock(&s->mu) == 0);
            continue;
        }
        st->sleeping = true;
        st->next = s->sleeping;
        if (s->sleeping)
            s->sleeping->prev = st;
        s->sleeping = st;
        s->nsleeping++;
        /* Returning 0 after parking is how libmicrohttpd lets a reader wait. */
        MHD_suspend_connection(st->conn);
        CHECK(pthread_mutex_unlock(&s->mu) == 0);
        return 0;
    }
}

static void stream_done(void *cls)
{
    struct http_stream *st = cls;
    struct http_server *s = st->srv;
    bool later = false;

    CHECK(pthread_mutex_lock(&s->mu) == 0);
    if (st->sleeping) /* the daemon is going away under a sleeping stream */
        sleep_list_del_locked(s, st);
    if (st->reading) {
        st->freed = true; /* the worker in fn frees it */
        later = true;
    }
    CHECK(pthread_mutex_unlock(&s->mu) == 0);
    if (!later)
        stream_free(st);
}

/*
 * The housekeeper: every TICK_MS wakes the sleeping streams whose wake_at came, and every
 * HANGUP_EVERY ticks asks the kernel which of their sockets the client closed (a parked
 * connection is not polled by libmicrohttpd, so without this a watch whose client left would
 * sleep until its timeout). It also adds a worker when a job has waited GROW_AFTER_MS with no
 * worker idle: enqueueing spawns one too, but a pool whose workers all block gets no new
 * enqueue to notice it.
 */
static void housekeep_streams(struct http_server *s, bool check_hangup)
{
    int64_t now = http_monotonic_ms();
    struct pollfd *pfd = NULL;
    struct http_stream **who = NULL;
    size_t n = 0;

    if (check_hangup && s->nsleeping) {
        pfd = xcalloc(s->nsleeping, sizeof(*pfd));
        who = xcalloc(s->nsleeping, sizeof(struct http_stream *));
    }
    for (struct http_stream *st = s->sleeping, *next; st; st = next) {
        next = st->next;
        if (st->wake_at && st->wake_at <= now) {
            stream_resume_locked(s, st);
        } else if (pfd && st->fd >= 0) {
            pfd[n] = (struct pollfd){.fd = st->fd, .events = POLLRDHUP};
            who[n++] = st;
        }
    }
    if (n && poll(pfd, n, 0) > 0) {
        for (size_t i = 0; i < n; i++) {
            if (pfd[i].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) {
                who[i]->hangup = true;
                stream_resume_locked(s, who[i]);
            }
        }
    }
    free(pfd);
    free(who);
}

static void *housekeeper_main(void *arg)
{
    struct http_server *s = arg;
    unsigned tick = 0;

    CHECK(pthread_mutex_lock(&s->mu) == 0);
    while (!s->stopping) {
        struct timespec until;

        CHECK(clock_gettime(CLOCK_MONOTONIC, &until) == 0);
        until.tv_nsec += (long)TICK_MS * 1000000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        (void)pthread_cond_timedwait(&s->tick_cv, &s->mu, &until);
        if (s->stopping)
            break;
        housekeep_streams(s, ++tick % HANGUP_EVERY == 0);
        for (int64_t now = http_monotonic_ms();
             s->waiting_head && s->waiting_head->deadline_ms <= now;) {
            struct conn_ctx *cc = s->waiting_head;
            (void)shutdown(cc->fd, SHUT_RDWR);
            waiting_del_locked(s, cc);
        }
        if (s->head && s->idle == 0 && http_monotonic_ms() - s->head->queued_ms >= GROW_AFTER_MS)
            pool_spawn_locked(s);
    }
    CHECK(pthread_mutex_unlock(&s->mu) == 0);
    return NULL;
}

/* ---- responses ---- */

static bool has_header(const struct http_response *resp, const char *name)
{
    for (size_t i = 0; i < resp->nheaders; i++)
        if (!strcasecmp(resp->headers[i].name, name))
            return true;
    return false;
}

static enum MHD_Result send_response(struct http_server *srv, struct MHD_Connection *conn,
                                     struct http_response *resp)
{
    struct MHD_Response *r;
    enum MHD_Result ret;
    size_t len;
    char *body;

    if (resp->stream) {
        struct http_stream *st = xcalloc(1, sizeof(*st));
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

        st->fn = resp->stream;
        st->userdata = resp->stream_userdata;
        st->free_fn = resp->stream_free;
        st->srv = srv;
        st->conn = conn;
        st->fd = ci ? ci->connect_fd : -1;
        st->blocking = resp->stream_blocking;
        if (st->blocking)
            st->buf = xmalloc(BLOCKING_BUF);
        resp->stream = NULL; /* the stream belongs to libmicrohttpd now */
        r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, (size_t)16 * 1024, stream_read, st,
                                              stream_done);
        if (!r) {
            stream_free(st);
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

static enum MHD_Result too_large(struct http_server *srv, struct MHD_Connection *conn)
{
    struct http_response resp = {.status = 413, .body = STRBUF_INIT};
    enum MHD_Result ret;

    strbuf_addf(&resp.body,
                "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                "\"Failure\",\"message\":\"the request body is larger than %zu bytes\","
                "\"reason\":\"RequestEntityTooLarge\",\"code\":413}",
                srv->max_body);
    ret = send_response(srv, conn, &resp);
    response_release(&resp);
    return ret;
}

/* 431 Request Header Fields Too Large: more than HTTP_MAX_REQUEST_HEADERS headers. Refused
 * whole rather than truncated, so no handler or proxy ever sees part of a request. */
static enum MHD_Result too_many_headers(struct http_server *srv, struct MHD_Connection *conn, int n)
{
    struct http_response resp = {.status = 431, .body = STRBUF_INIT};
    enum MHD_Result ret;

    strbuf_addf(&resp.body,
                "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                "\"Failure\",\"message\":\"the request has %d header fields, more than %d\","
                "\"reason\":\"RequestHeaderFieldsTooLarge\",\"code\":431}",
                n, HTTP_MAX_REQUEST_HEADERS);
    ret = send_response(srv, conn, &resp);
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

/* The answer of a request whose handler ran. A connection never answered with a success goes
 * back on the first-request deadline (see waiting_add()); once served, only the idle timeout
 * applies to it. */
static enum MHD_Result send_answer(struct http_server *srv, struct http_request *req)
{
    struct conn_ctx *cc = conn_ctx_of(req);
    enum MHD_Result ret;

    if (req->resp.status > 0 && req->resp.status < 400)
        cc->served = true;
    else if (!cc->served)
        waiting_add(srv, cc);
    ret = send_response(srv, req->conn, &req->resp);
    response_release(&req->resp);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls)
{
    struct http_server *srv = cls;
    struct http_request *req = *req_cls;
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
        strbuf_init(&req->resp.body);
        atomic_init(&req->state, REQ_READING);
        *req_cls = req;
        /* A request came: the first-request deadline is met (it starts again if the answer
         * is not a success). */
        if (!conn_ctx_of(req)->served)
            waiting_del(srv, conn_ctx_of(req));
        if (nh > HTTP_MAX_REQUEST_HEADERS) {
            req->too_big = true; /* the body, if any, is read and dropped */
            req->too_many = true;
            return too_many_headers(srv, conn, nh);
        }
        /* Refuse an announced oversized body before reading any of it. */
        if (cl && parse_i64(cl, &n) == 0 && (n < 0 || (uint64_t)n > srv->max_body)) {
            req->too_big = true;
            return too_large(srv, conn);
        }
        return MHD_YES;
    }
    switch (atomic_load(&req->state)) {
    case REQ_DONE:
        return send_answer(srv, req);
    case REQ_QUEUED: /* cannot happen: a queued request's connection is parked */
        return MHD_YES;
    case REQ_READING:
        break;
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
        return too_many_headers(srv, conn,
                                MHD_get_connection_values(conn, MHD_HEADER_KIND, NULL, NULL));
    if (req->too_big)
        return too_large(srv, conn);
    /* Park the connection and hand the request to a worker (request_run). */
    atomic_store(&req->state, REQ_QUEUED);
    req->job.run = request_run;
    MHD_suspend_connection(conn);
    if (!pool_push(srv, &req->job)) {
        /* Stopping: the pool takes no more work; answer here. */
        MHD_resume_connection(conn);
        srv->fn(req, &req->resp, srv->userdata);
        atomic_store(&req->state, REQ_DONE);
    }
    return MHD_YES;
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

/* The connection cap when none is given: what the open-file limit leaves after a reserve for
 * the process's own files (the store, clients, cgroup files). */
static unsigned default_max_connections(void)
{
    struct rlimit rl;
    rlim_t n = 1024;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        n = rl.rlim_cur;
    else if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        n = 1u << 20;
    n = n > (rlim_t)2 * DEFAULT_FD_RESERVE ? n - DEFAULT_FD_RESERVE : n / 2;
    return (unsigned)(n > (1u << 20) ? (1u << 20) : n);
}

/* I/O threads: one per core, at most MAX_IO_THREADS (TLS and parsing are their work). */
static unsigned io_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    if (n < 1)
        n = 1;
    return (unsigned)(n > MAX_IO_THREADS ? MAX_IO_THREADS : n);
}

int http_server_start(const struct http_server_opts *opts, http_handler_fn handler, void *userdata,
                      struct http_server **ret)
{
    struct http_server *s;
    struct sockaddr_storage addr;
    socklen_t alen;
    unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    unsigned nio = io_threads();
    pthread_condattr_t ca;
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
    s->idle_timeout = opts->idle_timeout ? opts->idle_timeout : DEFAULT_IDLE_TIMEOUT;
    s->first_timeout = opts->first_timeout ? opts->first_timeout : DEFAULT_FIRST_TIMEOUT;
    s->max_workers = opts->max_workers ? opts->max_workers : DEFAULT_MAX_WORKERS;
    s->min_workers = 2 * nio < s->max_workers ? 2 * nio : s->max_workers;
    CHECK(pthread_mutex_init(&s->mu, NULL) == 0);
    CHECK(pthread_condattr_init(&ca) == 0);
    CHECK(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0);
    CHECK(pthread_cond_init(&s->work_cv, &ca) == 0);
    CHECK(pthread_cond_init(&s->done_cv, &ca) == 0);
    CHECK(pthread_cond_init(&s->tick_cv, &ca) == 0);
    (void)pthread_condattr_destroy(&ca);
    atomic_init(&s->stopping_streams, false);
    if (addr.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    if (opts->cert_pem) {
        flags |= MHD_USE_TLS;
        s->cert = xstrdup(opts->cert_pem);
        s->key = xstrdup(opts->key_pem);
        s->ca = opts->client_ca_pem ? xstrdup(opts->client_ca_pem) : NULL;
    }
    {
        struct MHD_OptionItem o[18];
        size_t n = 0;
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, s};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, s};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)on_mhd_log, s};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)unescape, NULL};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, &addr};
        o[n++] = (struct MHD_OptionItem){
            MHD_OPTION_CONNECTION_LIMIT,
            (intptr_t)(opts->max_connections ? opts->max_connections : default_max_connections()),
            NULL};
        o[n++] = (struct MHD_OptionItem){
            MHD_OPTION_PER_IP_CONNECTION_LIMIT,
            (intptr_t)(opts->max_per_address ? opts->max_per_address : DEFAULT_MAX_PER_ADDRESS),
            NULL};
        o[n++] =
            (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)s->idle_timeout, NULL};
        o[n++] =
            (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)64 * 1024, NULL};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_LISTEN_BACKLOG_SIZE, LISTEN_BACKLOG, NULL};
        if (nio > 1)
            o[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)nio, NULL};
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
    CHECK(pthread_mutex_lock(&s->mu) == 0);
    while (s->workers < s->min_workers)
        pool_spawn_locked(s);
    CHECK(pthread_mutex_unlock(&s->mu) == 0);
    if (pthread_create(&s->housekeeper, NULL, housekeeper_main, s) != 0) {
        http_server_stop(s);
        return -ENOMEM;
    }
    s->has_housekeeper = true;
    *ret = s;
    return 0;
}

uint16_t http_server_port(const struct http_server *s)
{
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    return di ? di->port : 0;
}

void http_server_stats(struct http_server *s, struct http_server_stats *ret)
{
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);

    CHECK(pthread_mutex_lock(&s->mu) == 0);
    *ret = (struct http_server_stats){.connections = di ? di->num_connections : 0,
                                      .workers = s->workers,
                                      .idle_workers = s->idle,
                                      .sleeping_streams = (unsigned)s->nsleeping,
                                      .queued = (unsigned)s->queued};
    CHECK(pthread_mutex_unlock(&s->mu) == 0);
}

/*
 * Stopping, in the order libmicrohttpd needs (no connection may be parked when the daemon
 * stops): the pool finishes every queued request and exits (their connections are given back
 * with their answers); from then on requests are answered on the I/O threads and streams end;
 * every sleeping stream is woken to end; then the daemon closes the connections.
 */
void http_server_stop(struct http_server *s)
{
    if (!s)
        return;
    CHECK(pthread_mutex_lock(&s->mu) == 0);
    s->stopping = true;
    atomic_store(&s->stopping_streams, true);
    (void)pthread_cond_broadcast(&s->work_cv);
    (void)pthread_cond_broadcast(&s->tick_cv);
    while (s->sleeping)
        stream_resume_locked(s, s->sleeping);
    while (s->workers > 0)
        CHECK(pthread_cond_wait(&s->done_cv, &s->mu) == 0);
    CHECK(pthread_mutex_unlock(&s->mu) == 0);
    if (s->has_housekeeper)
        CHECK(pthread_join(s->housekeeper, NULL) == 0);
    if (s->d)
        MHD_stop_daemon(s->d);
    (void)pthread_cond_destroy(&s->work_cv);
    (void)pthread_cond_destroy(&s->done_cv);
    (void)pthread_cond_destroy(&s->tick_cv);
    (void)pthread_mutex_destroy(&s->mu);
    free(s->cert);
    free(s->key);
    free(s->ca);
    free(s);
}
