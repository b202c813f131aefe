/*
 * The lean client (see bench.h, struct wire): HTTP/1.1 written and read by hand over one GnuTLS
 * session. On this 2-core machine the load generator shares the CPU with the server it
 * measures, and libcurl spent about as much per report as the manager's whole request path
 * (its poll before every read and write, header lists, allocations): every microsecond the
 * client saves goes to the server under test, on both paths alike. It speaks exactly what the
 * report loops need: one request at a time on a keep-alive connection, answers framed by
 * Content-Length (libmicrohttpd's for buffered answers), reconnecting when the server closed.
 * Anything else (chunked answers, a status line it cannot read) is an error, never a guess.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/base.h"
#include "bench.h"

#define WIRE_READ     (64 * 1024)
#define WIRE_MAX_HEAD (64 * 1024) /* an answer's status line and headers */
#define WIRE_MAX_BODY (64u << 20) /* an answer's body: far above any NodeMetric */

int wire_init(struct wire *w, const struct server *srv, const char *accept)
{
    const char *hp = strstr(srv->url, "://");
    int r;

    memset(w, 0, sizeof(*w));
    w->fd = -1;
    w->srv = srv;
    strbuf_init(&w->req);
    strbuf_init(&w->in);
    strbuf_init(&w->body);
    strbuf_init(&w->fixed);
    if (!hp || strncmp(srv->url, "https", 5) ||
        sscanf(hp + 3, "%63[^:]:%hu", w->host, &w->port) != 2) {
        (void)fprintf(stderr, "bench: wire: %s: not https://host:port\n", srv->url);
        return -EINVAL;
    }
    r = gnutls_certificate_allocate_credentials(&w->cred);
    if (r == 0 && srv->cafile)
        r = gnutls_certificate_set_x509_trust_file(w->cred, srv->cafile, GNUTLS_X509_FMT_PEM) > 0
                ? 0
                : GNUTLS_E_FILE_ERROR;
    if (r == 0 && srv->certfile)
        r = gnutls_certificate_set_x509_key_file(w->cred, srv->certfile, srv->keyfile,
                                                 GNUTLS_X509_FMT_PEM);
    if (r < 0) {
        (void)fprintf(stderr, "bench: wire: credentials: %s\n", gnutls_strerror(r));
        return -EIO;
    }
    strbuf_addf(&w->fixed, "Host: %s:%u\r\nContent-Type: application/json\r\nAccept: %s\r\n",
                w->host, (unsigned)w->port, accept);
    if (srv->auth)
        strbuf_addf(&w->fixed, "%s\r\n", srv->auth);
    return 0;
}

static void wire_close(struct wire *w)
{
    if (w->session) {
        gnutls_deinit(w->session);
        w->session = NULL;
    }
    if (w->fd >= 0)
        (void)close(w->fd);
    w->fd = -1;
    strbuf_reset(&w->in);
}

void wire_release(struct wire *w)
{
    if (!w->srv)
        return; /* zeroed, never set up */
    wire_close(w);
    if (w->cred)
        gnutls_certificate_free_credentials(w->cred);
    strbuf_release(&w->req);
    strbuf_release(&w->in);
    strbuf_release(&w->body);
    strbuf_release(&w->fixed);
    memset(w, 0, sizeof(*w));
    w->fd = -1;
}

/* TCP (Nagle off) and the TLS handshake, the server's certificate verified against the CA. */
static int wire_connect(struct wire *w)
{
    if (w->session)
        return 0;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(w->port)};
    int one = 1, r;

    if (inet_pton(AF_INET, w->host, &sa.sin_addr) != 1)
        return -EINVAL;
    w->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (w->fd < 0)
        return -errno;
    if (connect(w->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        r = -errno;
        wire_close(w);
        return r;
    }
    (void)setsockopt(w->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    r = gnutls_init(&w->session, GNUTLS_CLIENT);
    if (r == 0)
        r = gnutls_set_default_priority(w->session);
    if (r == 0)
        r = gnutls_credentials_set(w->session, GNUTLS_CRD_CERTIFICATE, w->cred);
    if (r == 0 && w->srv->cafile)
        gnutls_session_set_verify_cert(w->session, NULL, 0);
    if (r == 0) {
        gnutls_transport_set_int(w->session, w->fd);
        do {
            r = gnutls_handshake(w->session);
        } while (r < 0 && !gnutls_error_is_fatal(r));
    }
    if (r < 0) {
        (void)fprintf(stderr, "bench: wire: %s: TLS: %s\n", w->srv->url, gnutls_strerror(r));
        wire_close(w);
        return -EIO;
    }
    return 0;
}

/* Reads more of the answer into w->in; 0 when the server closed the connection. */
static ssize_t wire_read(struct wire *w)
{
    ssize_t n;

    strbuf_grow(&w->in, WIRE_READ);
    do {
        n = gnutls_record_recv(w->session, w->in.buf + w->in.len, WIRE_READ);
    } while (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED);
    if (n == GNUTLS_E_PREMATURE_TERMINATION)
        return 0;
    if (n > 0)
        strbuf_setlen(&w->in, w->in.len + (size_t)n);
    return n;
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

/* Reads one answer: w->status and w->body. -EPIPE when the connection closed before any of it
 * came (a keep-alive connection the server dropped: send again on a new one). */
static int wire_answer(struct wire *w)
{
    const char *eoh, *v;
    size_t head;
    unsigned long len;
    char *end;
    ssize_t n;

    strbuf_reset(&w->in);
    while (!(eoh = w->in.len ? strstr(w->in.buf, "\r\n\r\n") : NULL)) {
        if (w->in.len > WIRE_MAX_HEAD)
            return -EPROTO;
        n = wire_read(w);
        if (n <= 0)
            return w->in.len == 0 && n == 0 ? -EPIPE : -EIO;
    }
    head = (size_t)(eoh - w->in.buf) + 4;
    if (sscanf(w->in.buf, "HTTP/1.1 %ld", &w->status) != 1)
        return -EPROTO;
    v = header_value(w->in.buf, eoh, "Transfer-Encoding");
    if (v && !strncasecmp(v, "chunked", 7))
        return -ENOTSUP;
    v = header_value(w->in.buf, eoh, "Content-Length");
    if (!v)
        return -EPROTO;
    if (*v < '0' || *v > '9')
        return -EPROTO;
    errno = 0;
    len = strtoul(v, &end, 10);
    if (errno || len > WIRE_MAX_BODY || (*end != '\r' && *end != ' ' && *end != '\t'))
        return -EPROTO;
    while (w->in.len < head + len) {
        n = wire_read(w);
        if (n <= 0)
            return -EIO;
    }
    strbuf_reset(&w->body);
    strbuf_add(&w->body, w->in.buf + head, len);
    /* reading the body may have moved w->in.buf: eoh pointed into the old one */
    eoh = w->in.buf + head - 4;
    v = header_value(w->in.buf, eoh, "Connection");
    if (v && !strncasecmp(v, "close", 5))
        wire_close(w);
    return 0;
}

int wire_open(struct wire *w)
{
    return wire_connect(w);
}

int wire_do(struct wire *w, const char *method, const char *path, const char *body, size_t len)
{
    int r = -EIO;

    strbuf_reset(&w->req);
    strbuf_addf(&w->req, "%s %s HTTP/1.1\r\n", method, path);
    strbuf_add(&w->req, w->fixed.buf, w->fixed.len);
    strbuf_addf(&w->req, "Content-Length: %zu\r\n\r\n", len);
    strbuf_add(&w->req, body, len);
    for (int attempt = 0; attempt < 2; attempt++) {
        size_t off = 0;

        if ((r = wire_connect(w)) < 0)
            return r;
        while (off < w->req.len) {
            ssize_t n = gnutls_record_send(w->session, w->req.buf + off, w->req.len - off);
            if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED)
                continue;
            if (n < 0)
                break;
            off += (size_t)n;
        }
        r = off == w->req.len ? wire_answer(w) : -EPIPE;
        if (r != -EPIPE)
            break;
        wire_close(w); /* a dropped keep-alive connection: once more on a new one */
    }
    if (r < 0)
        wire_close(w);
    return r;
}
