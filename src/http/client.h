/*
 * The HTTP/1.1 client every koord component talks to an API server with: a thin wrapper over
 * libcurl that reuses connections (a pool of easy handles, each paired with its own multi
 * handle so a waiting request can be woken up and cancelled at once), verifies TLS against a
 * CA file, presents a client certificate, bounds buffered bodies, and can stream a body through
 * a callback (watches). File names, not PEM blobs: the GnuTLS build of libcurl on Debian does
 * not support CURLOPT_*_BLOB, so callers holding PEM text write it to private files first.
 *
 * Thread safety: one client may be used by any number of threads at once; each request takes
 * an idle handle from the pool (or makes one) and gives it back afterwards with its live
 * connection, so keep-alive works across requests of the same thread and of others.
 */
#ifndef KOORD_HTTP_CLIENT_H
#define KOORD_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

struct http_client_opts {
    const char *ca_file;     /* PEM bundle to verify the server with; NULL = system store */
    const char *cert_file;   /* client certificate (PEM); NULL for none */
    const char *key_file;    /* its private key (PEM) */
    bool insecure;           /* do not verify the server certificate (nor its name) */
    long connect_timeout_ms; /* 0 = 10 s */
};

struct http_client;

/* Copies opts. 0, -ENOMEM, -EIO (libcurl cannot initialise). */
int http_client_new(const struct http_client_opts *opts, struct http_client **ret);

/* Frees the client and its pooled connections; no request may be running. NULL is fine. */
void http_client_free(struct http_client *c);

/*
 * A cancellation token shared between a requesting thread and one that wants it to stop:
 * after http_client_cancel_fire(), the running request and every later one passed the token
 * fail at once with -ECANCELED (a request blocked waiting for bytes is woken, not polled).
 */
struct http_client_cancel;

struct http_client_cancel *http_client_cancel_new(void);
/* Thread-safe and idempotent. */
void http_client_cancel_fire(struct http_client_cancel *k);
bool http_client_cancel_fired(struct http_client_cancel *k);
/* No request may still be using it. NULL is fine. */
void http_client_cancel_free(struct http_client_cancel *k);

/*
 * Receives body bytes of a streamed response as they arrive (arbitrary chunk boundaries),
 * with the response's HTTP status. A negative return aborts the transfer and becomes the
 * result of http_client_do().
 */
typedef int (*http_client_data_fn)(void *userdata, long status, const char *data, size_t len);

struct http_client_req {
    const char *method; /* "GET", "POST", "PUT", "PATCH", "DELETE" */
    const char *url;
    const char *const *headers; /* "Name: value" lines, NULL-terminated; may be NULL */
    const char *body;           /* may be NULL */
    size_t body_len;
    long timeout_ms;             /* the whole exchange; 0 = no limit (watches) */
    size_t max_body;             /* buffered responses only; 0 = 64 MiB */
    http_client_data_fn on_data; /* when set, the body goes here instead of resp->body */
    void *userdata;
    struct http_client_cancel *cancel; /* may be NULL */
    /* "HOST:PORT:ADDR:PORT": connect to ADDR:PORT (an IPv6 ADDR in brackets) for a URL naming
     * HOST:PORT, while TLS still verifies the certificate for HOST (how a proxy reaches a
     * Service's endpoint and checks the name <service>.<namespace>.svc); NULL for none. */
    const char *connect_to;
};

struct http_client_resp {
    long status;            /* HTTP status code */
    long retry_after_s;     /* Retry-After in seconds, 0 when absent */
    struct strbuf body;     /* the body, unless streamed */
    char content_type[128]; /* "" when absent */
};

/* clang-format off */
#define HTTP_CLIENT_RESP_INIT { .status = 0, .body = STRBUF_INIT }
/* clang-format on */

void http_client_resp_release(struct http_client_resp *r);

/*
 * Performs one request. 0 when a response arrived, whatever its status (ret filled). Transport
 * failures: -ECONNREFUSED (nothing listens, or the connection was reset before an answer),
 * -EHOSTUNREACH (name or route), -ETIMEDOUT, -EPROTO (TLS handshake or certificate), -ECANCELED
 * (token fired), -E2BIG (buffered body past max_body), -EIO (anything else), or the negative
 * value an on_data callback returned. ret->status stays meaningful after a streamed transfer
 * that was aborted once bytes arrived.
 */
int http_client_do(struct http_client *c, const struct http_client_req *req,
                   struct http_client_resp *ret);

/*
 * A response read as it arrives, pulled by the caller (a proxy relaying a watch): open sends
 * the request (req->on_data and req->max_body are not used; body is copied) and returns once
 * the response head arrived; read then hands out body bytes, blocking until some arrive.
 * Everything runs on the calling thread; another thread stops it only through req->cancel.
 */
struct http_client_stream;

/* 0 with *ret open, or the transport errors of http_client_do() when no response head came. */
int http_client_open(struct http_client *c, const struct http_client_req *req,
                     struct http_client_stream **ret);

/* The response status and its header lines ("Name: value", NULL-terminated, in order). */
long http_client_stream_status(const struct http_client_stream *s);
const char *const *http_client_stream_headers(const struct http_client_stream *s);

/* Copies up to max body bytes into buf: > 0 bytes, 0 at the end of the body, or a transport
 * error (-ECANCELED once the token fired, -ETIMEDOUT past req->timeout_ms, ...). */
long http_client_stream_read(struct http_client_stream *s, char *buf, size_t max);

/* Ends the transfer (closing its connection if the body was not read to the end) and frees.
 * NULL is fine. */
void http_client_stream_close(struct http_client_stream *s);

#endif
