/*
 * The event loop client of bench/conns (see conns.h): one thread, one epoll set, level
 * triggered, every socket non-blocking and every GnuTLS call allowed to answer
 * GNUTLS_E_AGAIN, after which the connection waits for the direction GnuTLS needs. Per
 * connection it keeps only what is in flight: request bytes are freed once sent and answer
 * bytes once handled, one read buffer is shared by all, and the credentials (CA, client
 * certificate) are loaded once for the loop, so 10,000 idle connections cost this client
 * about their GnuTLS sessions. It speaks HTTP/1.1, one request at a time per connection,
 * answers framed by Content-Length or chunked (watches), and treats anything else as an error
 * (never a guess), as bench/common/wire.c does. Openings are bounded (at most max_opening at
 * once, each with a deadline covering connect and handshake), so a server that stops
 * accepting or stops answering handshakes (today's thread-per-connection server past its cap)
 * costs the benchmark a timeout, never a hang.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/base.h"
#include "conns.h"

#define READ_BUF   ((size_t)64 * 1024)
#define MAX_HEAD   ((size_t)64 * 1024)
#define MAX_BODY   (256u << 20) /* one answer or one watch line */
#define MAX_EVENTS 512

enum phase {
    PH_NONE,        /* no answer expected */
    PH_HEAD,        /* status line and headers */
    PH_LENGTH,      /* a Content-Length body */
    PH_CHUNK_SIZE,  /* a chunk-size line */
    PH_CHUNK_DATA,  /* chunk bytes */
    PH_CHUNK_CRLF,  /* the CRLF after a chunk */
    PH_CHUNK_TRAIL, /* trailer lines up to the empty one */
};

struct eloop {
    const struct server *srv;
    const struct eloop_ops *ops;
    void *ud;
    int ep;
    struct sockaddr_in addr;
    char host[64];
    gnutls_certificate_credentials_t cred;
    size_t max_opening, nopening; /* connecting or in the handshake */
    size_t nqueued;
    size_t nlive; /* not ECONN_DOWN */
    unsigned open_timeout_ms;
    struct econn *qhead, *qtail; /* waiting to be opened */
    struct econn **opening;      /* max_opening slots; NULL = free */
    char *rbuf;
    struct strbuf req;
};

const char *econn_end_name(enum econn_end why)
{
    switch (why) {
    case ECONN_END_REFUSED:
        return "refused";
    case ECONN_END_TIMEOUT:
        return "timed out";
    case ECONN_END_TLS:
        return "TLS error";
    case ECONN_END_CLOSED:
        return "closed by the server";
    case ECONN_END_ERROR:
        return "error";
    }
    return "?";
}

struct eloop *eloop_new(const struct server *srv, const struct eloop_ops *ops, void *ud,
                        size_t max_opening, unsigned open_timeout_ms)
{
    struct eloop *l = xcalloc(1, sizeof(*l));
    const char *hp = strstr(srv->url, "://");
    unsigned short port = 0;
    int r;

    l->srv = srv;
    l->ops = ops;
    l->ud = ud;
    l->max_opening = max_opening ? max_opening : 1;
    l->open_timeout_ms = open_timeout_ms;
    l->opening = xcalloc(l->max_opening, sizeof(struct econn *));
    l->rbuf = xmalloc(READ_BUF);
    strbuf_init(&l->req);
    l->ep = epoll_create1(EPOLL_CLOEXEC);
    if (l->ep < 0) {
        (void)fprintf(stderr, "bench_conns: epoll_create1: %s\n", strerror(errno));
        goto fail;
    }
    if (!hp || strncmp(srv->url, "https", 5) ||
        sscanf(hp + 3, "%63[^:]:%hu", l->host, &port) != 2 ||
        inet_pton(AF_INET, l->host, &l->addr.sin_addr) != 1) {
        (void)fprintf(stderr, "bench_conns: %s: not https://IPv4:port\n", srv->url);
        goto fail;
    }
    l->addr.sin_family = AF_INET;
    l->addr.sin_port = htons(port);
    r = gnutls_certificate_allocate_credentials(&l->cred);
    if (r == 0 && srv->cafile)
        r = gnutls_certificate_set_x509_trust_file(l->cred, srv->cafile, GNUTLS_X509_FMT_PEM) > 0
                ? 0
                : GNUTLS_E_FILE_ERROR;
    if (r == 0 && srv->certfile)
        r = gnutls_certificate_set_x509_key_file(l->cred, srv->certfile, srv->keyfile,
                                                 GNUTLS_X509_FMT_PEM);
    if (r < 0) {
        (void)fprintf(stderr, "bench_conns: credentials: %s\n", gnutls_strerror(r));
        goto fail;
    }
    return l;
fail:
    eloop_free(l);
    return NULL;
}

void *eloop_ud(const struct eloop *l)
{
    return l->ud;
}

size_t eloop_opening(const struct eloop *l)
{
    return l->nopening + l->nqueued;
}

static void set_events(struct eloop *l, struct econn *c, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = c};

    if (c->events == events)
        return;
    CHECK(epoll_ctl(l->ep, EPOLL_CTL_MOD, c->fd, &ev) == 0);
    c->events = events;
}

static void slot_free(struct eloop *l, struct econn *c)
{
    for (size_t i = 0; i < l->max_opening; i++) {
        if (l->opening[i] == c) {
            l->opening[i] = NULL;
            l->nopening--;
            return;
        }
    }
}

/* Releases everything c holds; c is then ECONN_DOWN. */
static void teardown(struct eloop *l, struct econn *c)
{
    if (c->state == ECONN_DOWN)
        return;
    if (c->state == ECONN_CONNECTING || c->state == ECONN_HANDSHAKE)
        slot_free(l, c);
    if (c->state == ECONN_QUEUED) {
        struct econn **pp = &l->qhead, *prev = NULL;
        while (*pp && *pp != c) {
            prev = *pp;
            pp = &(*pp)->qnext;
        }
        if (*pp) {
            *pp = c->qnext;
            if (l->qtail == c)
                l->qtail = prev;
            l->nqueued--;
        }
    }
    if (c->s)
        gnutls_deinit(c->s);
    c->s = NULL;
    if (c->fd >= 0) {
        (void)epoll_ctl(l->ep, EPOLL_CTL_DEL, c->fd, NULL);
        (void)close(c->fd);
    }
    c->fd = -1;
    strbuf_release(&c->out);
    strbuf_release(&c->in);
    strbuf_release(&c->body);
    c->out_off = 0;
    c->phase = PH_NONE;
    c->state = ECONN_DOWN;
    c->busy = c->streaming = c->close_after = c->want_stream = false;
    c->events = 0;
    c->qnext = NULL;
    l->nlive--;
}

void eloop_close(struct eloop *l, struct econn *c)
{
    teardown(l, c);
}

/* c goes down for why: torn down, then the caller hears of it. */
static void conn_end(struct eloop *l, struct econn *c, enum econn_end why)
{
    bool busy = c->busy;

    teardown(l, c);
    l->ops->down(l, c, why, busy);
}

void eloop_free(struct eloop *l)
{
    if (!l)
        return;
    while (l->qhead)
        teardown(l, l->qhead);
    for (size_t i = 0; i < l->max_opening; i++)
        if (l->opening[i])
            teardown(l, l->opening[i]);
    CHECK(l->nlive == 0); /* the caller closes its connections first */
    if (l->cred)
        gnutls_certificate_free_credentials(l->cred);
    if (l->ep > 0)
        (void)close(l->ep);
    free(l->opening);
    free(l->rbuf);
    strbuf_release(&l->req);
    free(l);
}

void eloop_open(struct eloop *l, struct econn *c)
{
    CHECK(c->state == ECONN_DOWN);
    strbuf_init(&c->out);
    strbuf_init(&c->in);
    strbuf_init(&c->body);
    c->fd = -1;
    c->s = NULL;
    c->up_ns = 0;
    c->state = ECONN_QUEUED;
    c->qnext = NULL;
    if (l->qtail)
        l->qtail->qnext = c;
    else
        l->qhead = c;
    l->qtail = c;
    l->nqueued++;
    l->nlive++;
}

void eloop_request(const struct eloop *l, struct strbuf *req, const char *method, const char *path,
                   const char *accept, const char *ctype, const char *body, size_t len)
{
    strbuf_addf(req, "%s %s HTTP/1.1\r\nHost: %s:%u\r\nAccept: %s\r\n", method, path, l->host,
                (unsigned)ntohs(l->addr.sin_port), accept);
    if (l->srv->auth)
        strbuf_addf(req, "%s\r\n", l->srv->auth);
    if (body)
        strbuf_addf(req, "Content-Type: %s\r\nContent-Length: %zu\r\n", ctype, len);
    strbuf_addstr(req, "\r\n");
    if (body)
        strbuf_add(req, body, len);
}

/* Sends what c->out holds from c->out_off; waits for EPOLLOUT when the socket is full. */
static int send_more(struct eloop *l, struct econn *c)
{
    while (c->out_off < c->out.len) {
        ssize_t n = gnutls_record_send(c->s, c->out.buf + c->out_off, c->out.len - c->out_off);
        if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED) {
            set_events(l, c, EPOLLIN | EPOLLOUT);
            return 0;
        }
        if (n < 0)
            return -EIO;
        c->out_off += (size_t)n;
    }
    strbuf_release(&c->out);
    c->out_off = 0;
    set_events(l, c, EPOLLIN);
    return 0;
}

void eloop_kick(struct eloop *l, struct econn *c)
{
    enum econn_req kind;

    if (c->state != ECONN_UP || c->busy)
        return;
    strbuf_reset(&l->req);
    kind = l->ops->next(l, c, &l->req);
    if (kind == ECONN_REQ_NONE)
        return;
    c->busy = true;
    c->want_stream = kind == ECONN_REQ_STREAM;
    c->phase = PH_HEAD;
    strbuf_reset(&c->out);
    strbuf_add(&c->out, l->req.buf, l->req.len);
    c->out_off = 0;
    if (l->req.alloc > 4 * READ_BUF)
        strbuf_release(&l->req);
    if (send_more(l, c) < 0)
        conn_end(l, c, ECONN_END_ERROR);
}

/* The handshake went as far as it can now. */
static void handshake(struct eloop *l, struct econn *c)
{
    int r;

    do {
        r = gnutls_handshake(c->s);
    } while (r < 0 && r != GNUTLS_E_AGAIN && !gnutls_error_is_fatal(r));
    if (r == GNUTLS_E_AGAIN) {
        set_events(l, c, gnutls_record_get_direction(c->s) ? EPOLLOUT : EPOLLIN);
        return;
    }
    if (r < 0) {
        /* The server closing the socket right after accepting it (over its connection cap)
         * shows as an early end of the TLS stream or a reset. */
        bool closed = r == GNUTLS_E_PREMATURE_TERMINATION || r == GNUTLS_E_PULL_ERROR ||
                      r == GNUTLS_E_PUSH_ERROR || r == GNUTLS_E_UNEXPECTED_PACKET_LENGTH;
        conn_end(l, c, closed ? ECONN_END_REFUSED : ECONN_END_TLS);
        return;
    }
    slot_free(l, c);
    c->state = ECONN_UP;
    c->up_ns = now_ns();
    set_events(l, c, EPOLLIN);
    eloop_kick(l, c);
}

/* The TCP connection is up (or failed): start the handshake. */
static void connected(struct eloop *l, struct econn *c)
{
    int err = 0, one = 1, r;
    socklen_t len = sizeof(err);

    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        err = errno;
    if (err) {
        conn_end(l, c, err == ETIMEDOUT ? ECONN_END_TIMEOUT : ECONN_END_REFUSED);
        return;
    }
    (void)setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    r = gnutls_init(&c->s, GNUTLS_CLIENT | GNUTLS_NONBLOCK);
    if (r == 0)
        r = gnutls_set_default_priority(c->s);
    if (r == 0)
        r = gnutls_credentials_set(c->s, GNUTLS_CRD_CERTIFICATE, l->cred);
    if (r < 0) {
        conn_end(l, c, ECONN_END_TLS);
        return;
    }
    if (l->srv->cafile)
        gnutls_session_set_verify_cert(c->s, NULL, 0);
    gnutls_transport_set_int(c->s, c->fd);
    c->state = ECONN_HANDSHAKE;
    handshake(l, c);
}

/* Starts connecting c (it has an opening slot). */
static void start(struct eloop *l, struct econn *c)
{
    struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = c};

    c->deadline_ns = now_ns() + (uint64_t)l->open_timeout_ms * 1000000u;
    c->state = ECONN_CONNECTING;
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) {
        (void)fprintf(stderr, "bench_conns: socket: %s\n", strerror(errno));
        conn_end(l, c, ECONN_END_ERROR);
        return;
    }
    if (c->src) {
        /* The port is picked at connect(), per destination: no ephemeral port per address. */
        struct sockaddr_in src = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(c->src)};
        int one = 1;
        (void)setsockopt(c->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
        if (bind(c->fd, (const struct sockaddr *)&src, sizeof(src)) < 0) {
            (void)fprintf(stderr, "bench_conns: bind to %u.%u.%u.%u: %s\n", c->src >> 24,
                          (c->src >> 16) & 255, (c->src >> 8) & 255, c->src & 255, strerror(errno));
            conn_end(l, c, ECONN_END_ERROR);
            return;
        }
    }
    CHECK(epoll_ctl(l->ep, EPOLL_CTL_ADD, c->fd, &ev) == 0);
    c->events = EPOLLOUT;
    if (connect(c->fd, (const struct sockaddr *)&l->addr, sizeof(l->addr)) < 0 &&
        errno != EINPROGRESS) {
        conn_end(l, c, errno == ETIMEDOUT ? ECONN_END_TIMEOUT : ECONN_END_REFUSED);
        return;
    }
}

static void start_queued(struct eloop *l)
{
    while (l->qhead && l->nopening < l->max_opening) {
        struct econn *c = l->qhead;
        l->qhead = c->qnext;
        if (!l->qhead)
            l->qtail = NULL;
        l->nqueued--;
        c->qnext = NULL;
        for (size_t i = 0; i < l->max_opening; i++) {
            if (!l->opening[i]) {
                l->opening[i] = c;
                l->nopening++;
                break;
            }
        }
        start(l, c);
    }
}

/* The value of header name in the header block [h, end), or NULL. */
static const char *header_value(const char *h, const char *end, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = h; p && p < end; p = memchr(p, '\n', (size_t)(end - p))) {
        if (*p == '\n')
            p++;
        if ((size_t)(end - p) > n && !strncasecmp(p, name, n) && p[n] == ':') {
            p += n + 1;
            while (*p == ' ' || *p == '\t')
                p++;
            return p;
        }
    }
    return NULL;
}

/* The status line and headers [p, p + len): what the body is and how it is framed. */
static int parse_head(struct econn *c, const char *p, size_t len)
{
    const char *end = p + len, *v;
    unsigned long n;
    char *e;

    if (len < 12 || strncmp(p, "HTTP/1.1 ", 9) || sscanf(p + 9, "%3ld", &c->status) != 1)
        return -EPROTO;
    v = header_value(p, end, "Connection");
    c->close_after = v && !strncasecmp(v, "close", 5);
    c->streaming = c->want_stream && c->status == 200;
    v = header_value(p, end, "Transfer-Encoding");
    if (v && !strncasecmp(v, "chunked", 7)) {
        c->phase = PH_CHUNK_SIZE;
        return 0;
    }
    if (c->streaming)
        return -EPROTO; /* a watch answer framed otherwise */
    if (c->status == 204 || c->status == 304) {
        c->left = 0;
        c->phase = PH_LENGTH;
        return 0;
    }
    v = header_value(p, end, "Content-Length");
    if (!v || *v < '0' || *v > '9')
        return -EPROTO;
    errno = 0;
    n = strtoul(v, &e, 10);
    if (errno || n > MAX_BODY || (*e != '\r' && *e != ' ' && *e != '\t'))
        return -EPROTO;
    c->left = n;
    c->phase = PH_LENGTH;
    return 0;
}

/* Hands the complete lines of a streaming body to ops->line. */
static void deliver_lines(struct eloop *l, struct econn *c)
{
    size_t pos = 0;
    const char *nl;

    while ((nl = memchr(c->body.buf + pos, '\n', c->body.len - pos))) {
        size_t n = (size_t)(nl - (c->body.buf + pos));
        if (n)
            l->ops->line(l, c, c->body.buf + pos, n);
        pos += n + 1;
    }
    if (pos == c->body.len) {
        strbuf_release(&c->body);
    } else if (pos) {
        memmove(c->body.buf, c->body.buf + pos, c->body.len - pos);
        strbuf_setlen(&c->body, c->body.len - pos);
    }
}

/*
 * Parses what c->in holds. 1 when an answer is complete (c->status, c->body), 0 when more is
 * needed, < 0 on a protocol error. Consumed bytes leave c->in.
 */
static int parse(struct eloop *l, struct econn *c)
{
    size_t pos = 0;
    int r = 0;

    while (r == 0) {
        const char *p = c->in.buf + pos, *e;
        size_t avail = c->in.len - pos, take;
        unsigned long size;
        char *end;

        switch ((enum phase)c->phase) {
        case PH_NONE:
            r = avail ? -EPROTO : 2; /* bytes nobody asked for */
            break;
        case PH_HEAD:
            e = avail >= 4 ? memmem(p, avail, "\r\n\r\n", 4) : NULL;
            if (!e) {
                r = avail > MAX_HEAD ? -EPROTO : 2;
                break;
            }
            r = parse_head(c, p, (size_t)(e - p) + 2);
            pos += (size_t)(e - p) + 4;
            break;
        case PH_LENGTH:
            take = avail < c->left ? avail : c->left;
            strbuf_add(&c->body, p, take);
            pos += take;
            c->left -= take;
            r = c->left == 0 ? 1 : 2;
            break;
        case PH_CHUNK_SIZE:
        case PH_CHUNK_TRAIL:
            e = memmem(p, avail, "\r\n", 2);
            if (!e) {
                r = avail > MAX_HEAD ? -EPROTO : 2;
                break;
            }
            pos += (size_t)(e - p) + 2;
            if (c->phase == PH_CHUNK_TRAIL) {
                if (e == p)
                    r = 1; /* the empty line ending the trailers */
                break;
            }
            errno = 0;
            size = strtoul(p, &end, 16);
            if (errno || end == p || size > MAX_BODY || (*end != '\r' && *end != ';')) {
                r = -EPROTO;
                break;
            }
            c->left = size;
            c->phase = size ? PH_CHUNK_DATA : PH_CHUNK_TRAIL;
            break;
        case PH_CHUNK_DATA:
            take = avail < c->left ? avail : c->left;
            if (c->body.len + take > MAX_BODY) {
                r = -EPROTO;
                break;
            }
            strbuf_add(&c->body, p, take);
            pos += take;
            c->left -= take;
            if (c->left == 0)
                c->phase = PH_CHUNK_CRLF;
            else
                r = 2;
            if (c->streaming)
                deliver_lines(l, c);
            break;
        case PH_CHUNK_CRLF:
            if (avail < 2) {
                r = 2;
                break;
            }
            if (p[0] != '\r' || p[1] != '\n') {
                r = -EPROTO;
                break;
            }
            pos += 2;
            c->phase = PH_CHUNK_SIZE;
            break;
        }
    }
    if (pos == c->in.len) {
        strbuf_release(&c->in);
    } else if (pos) {
        memmove(c->in.buf, c->in.buf + pos, c->in.len - pos);
        strbuf_setlen(&c->in, c->in.len - pos);
    }
    return r == 2 ? 0 : r;
}

/* An answer is complete: to the caller, then the next request (or the end of c). */
static void answered(struct eloop *l, struct econn *c)
{
    bool stream = c->streaming, close_after = c->close_after;

    c->phase = PH_NONE;
    c->busy = false;
    if (stream) {
        /* The server ended the watch: lines already went out. */
        c->busy = true;
        conn_end(l, c, ECONN_END_CLOSED);
        return;
    }
    l->ops->answer(l, c, c->status, c->body.buf, c->body.len);
    strbuf_release(&c->body);
    if (close_after) {
        conn_end(l, c, ECONN_END_CLOSED);
        return;
    }
    if (c->in.len) {
        conn_end(l, c, ECONN_END_ERROR); /* bytes after the answer: pipelining we never asked */
        return;
    }
    eloop_kick(l, c);
}

/*
 * Reads what the socket has, then parses it, a READ_BUF at a time. Until GnuTLS says
 * GNUTLS_E_AGAIN: records it already took from the socket wait in its own buffer, where
 * epoll cannot see them.
 */
static void readable(struct eloop *l, struct econn *c)
{
    bool closed = false, failed = false, again = false;
    int r;

    while (!again && !closed && !failed) {
        while (c->in.len < READ_BUF) {
            ssize_t n = gnutls_record_recv(c->s, l->rbuf, READ_BUF);
            if (n > 0) {
                strbuf_add(&c->in, l->rbuf, (size_t)n);
                continue;
            }
            if (n == GNUTLS_E_AGAIN) {
                again = true;
                break;
            }
            if (n == GNUTLS_E_INTERRUPTED || (n < 0 && !gnutls_error_is_fatal((int)n)))
                continue;
            if (n == 0 || n == GNUTLS_E_PREMATURE_TERMINATION || n == GNUTLS_E_PULL_ERROR)
                closed = true;
            else
                failed = true;
            break;
        }
        while (c->in.len && c->state == ECONN_UP) {
            r = parse(l, c);
            if (r < 0) {
                if (c->phase == PH_NONE)
                    closed = true; /* what a server writes before closing an idle connection */
                else
                    failed = true;
                break;
            }
            if (r == 0)
                break;
            answered(l, c);
        }
        if (c->state != ECONN_UP)
            return;
        if (!again && !closed && !failed && c->in.len >= READ_BUF)
            failed = true; /* READ_BUF unparsed: a header or chunk-size line too long */
    }
    if (failed)
        conn_end(l, c, ECONN_END_ERROR);
    else if (closed)
        conn_end(l, c, ECONN_END_CLOSED);
}

static void handle(struct eloop *l, struct econn *c, uint32_t events)
{
    switch (c->state) {
    case ECONN_CONNECTING:
        connected(l, c);
        break;
    case ECONN_HANDSHAKE:
        handshake(l, c);
        break;
    case ECONN_UP:
        if ((events & EPOLLOUT) && c->out.len && send_more(l, c) < 0) {
            conn_end(l, c, ECONN_END_ERROR);
            break;
        }
        if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
            readable(l, c);
        break;
    default:
        break;
    }
}

void eloop_run(struct eloop *l, int timeout_ms)
{
    struct epoll_event ev[MAX_EVENTS];
    uint64_t now;
    int n;

    start_queued(l);
    n = epoll_wait(l->ep, ev, MAX_EVENTS, timeout_ms);
    for (int i = 0; i < n; i++)
        handle(l, ev[i].data.ptr, ev[i].events);
    if (!l->nopening)
        return;
    now = now_ns();
    for (size_t i = 0; i < l->max_opening; i++) {
        struct econn *c = l->opening[i];
        if (c && now > c->deadline_ns)
            conn_end(l, c, ECONN_END_TIMEOUT);
    }
}
