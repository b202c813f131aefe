/*
 * The HTTP/1.1 server every koord server is built on: libmicrohttpd's epoll event loop (a few
 * I/O threads, one per core up to four) that holds every connection, and a small pool of worker
 * threads that runs the handlers, so a connection costs memory, not a thread: 10,000 agents keep
 * their connections alive and 10,000 watches wait without 10,000 threads (issue 20). Keep-alive,
 * TLS through GnuTLS (optionally asking for client certificates, which is how Kubernetes
 * components authenticate), bounded request bodies, and a single handler callback that sees a
 * complete request and fills in a response: a body, or a stream.
 *
 * A handler runs on a worker while its connection is parked (suspended in libmicrohttpd), so a
 * handler may block (a webhook call, an fsync): the pool grows while work waits and shrinks when
 * idle. A stream (a watch) is polled: it returns what it has, or HTTP_STREAM_WAIT and is woken
 * when it has more; a waiting stream holds no thread. A stream that can only block (a proxied
 * body read from another server) says so, and is read on a worker.
 */
#ifndef KOORD_HTTP_SERVER_H
#define KOORD_HTTP_SERVER_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"

struct http_request;

/* Accessors valid during the handler call. */
const char *http_request_method(const struct http_request *req);
/* Path and query values are percent-decoded, %00 into DEL (0x7f) so that no value is cut short
 * by a NUL: handlers refusing control characters see it. */
const char *http_request_path(const struct http_request *req); /* decoded, without the query */
const char *http_request_header(const struct http_request *req, const char *name);
const char *http_request_query(const struct http_request *req, const char *key);
const char *http_request_body(const struct http_request *req, size_t *ret_len);

/*
 * Calls fn for every request header (name and value as received, repeated headers once each,
 * in order), or for every query parameter (decoded; value NULL for a bare "?flag"). fn returns
 * 0 to go on, anything else to stop. What a proxy needs to forward a request.
 */
typedef int (*http_request_kv_fn)(void *userdata, const char *name, const char *value);
void http_request_foreach_header(const struct http_request *req, http_request_kv_fn fn,
                                 void *userdata);
void http_request_foreach_query(const struct http_request *req, http_request_kv_fn fn,
                                void *userdata);

/*
 * The identity of a client certificate that verified against the configured client CA:
 * *ret_user = the subject CN, ret_groups = the O values (NULL-terminated), both owned by the
 * request (either may be NULL). 0, -ENOENT when the client sent no certificate or the server has
 * no client CA, -EACCES when it did not verify.
 */
int http_request_client_cert(const struct http_request *req, const char **ret_user,
                             const char *const **ret_groups);

/*
 * Every value of a header that may repeat (X-Remote-Group), in order, up to max of them into
 * ret (borrowed, valid during the handler call); returns how many there are in all.
 */
size_t http_request_header_values(const struct http_request *req, const char *name,
                                  const char **ret, size_t max);

/*
 * A set of CA certificates parsed once, to ask which CA vouches for a caller when a server
 * trusts several (the cluster CA and a front-proxy CA): parsing PEM per request would cost
 * every request of a busy port. 0, -EINVAL (no certificate in pem), -ENOMEM. A list must
 * outlive every server that asks it: a connection caches its answers by the list's address.
 */
struct http_ca_list;
int http_ca_list_new(const char *pem, struct http_ca_list **ret);
void http_ca_list_free(struct http_ca_list *l);

/*
 * Whether the request's verified client certificate was signed by one of the CAs in cas.
 * 0 yes, -ENOENT no verified certificate, -EACCES signed by another CA.
 */
int http_request_client_cert_signed_by(const struct http_request *req,
                                       const struct http_ca_list *cas);

#define HTTP_MAX_HEADERS 16

/*
 * Requests with more header fields than this are answered 431 Request Header Fields Too
 * Large before the handler runs, so nothing downstream (the aggregation proxy's forwarded
 * headers, X-Remote-Group lists) ever works on a truncated set. Header bytes are bounded by
 * the connection's memory pool (64 KiB); libmicrohttpd answers 431 past it. Go's net/http,
 * which kube-apiserver uses, bounds only bytes (1 MiB); 256 fields are far more than any
 * client or front proxy sends (kubectl sends about ten).
 */
#define HTTP_MAX_REQUEST_HEADERS 256

/*
 * A streaming body (chunked), polled for its next bytes: returns how many it wrote to buf
 * (> 0), 0 to end the stream, HTTP_STREAM_WAIT when it has nothing yet, or another value < 0 to
 * abort the connection. A polled stream must not block: it runs on an I/O thread that serves
 * many connections. After HTTP_STREAM_WAIT the connection sleeps, holding no thread, until
 * http_stream_wake(st) (from any thread, e.g. the writer that queued an event) or the time set
 * with http_stream_wake_at(), or until the client hangs up (the stream is then freed unread).
 * A stream marked stream_blocking may block instead: it is called on a worker thread, one call
 * at a time, and must not return HTTP_STREAM_WAIT.
 */
struct http_stream;
#define HTTP_STREAM_WAIT (-EAGAIN)
typedef long (*http_stream_fn)(void *userdata, struct http_stream *st, char *buf, size_t max);

/* Wakes a stream that returned HTTP_STREAM_WAIT; a wake that comes before it waits is kept, so
 * none is lost. Thread-safe; valid until the stream's stream_free ran. */
void http_stream_wake(struct http_stream *st);

/* From inside the stream function, before it returns HTTP_STREAM_WAIT: wake it no later than
 * this CLOCK_MONOTONIC time in milliseconds (a watch's bookmark or timeout); within 250 ms. */
void http_stream_wake_at(struct http_stream *st, int64_t monotonic_ms);

/* CLOCK_MONOTONIC in milliseconds, the clock of http_stream_wake_at(). */
int64_t http_monotonic_ms(void);

struct http_response {
    int status;
    http_stream_fn stream; /* when set, the body is streamed instead of `body` */
    void *stream_userdata;
    void (*stream_free)(void *userdata); /* called once the stream is done, may be NULL */
    bool stream_blocking;                /* the stream may block: read it on a worker */
    const char *content_type;            /* static string; NULL: a Content-Type header added with
                                            http_response_header(), else application/json */
    struct strbuf body;
    struct {
        char *name; /* owned */
        char *value;
    } headers[HTTP_MAX_HEADERS];
    size_t nheaders;
};

/* Adds a response header; name and value are copied. Silently ignored past HTTP_MAX_HEADERS.
 * Content-Length, Transfer-Encoding and Connection are the server's own: do not add them. */
void http_response_header(struct http_response *resp, const char *name, const char *value);

/* The request handler: runs on a worker thread, must fill resp (status 0 means 500). */
typedef void (*http_handler_fn)(const struct http_request *req, struct http_response *resp,
                                void *userdata);

struct http_server_opts {
    const char *host;     /* listen address, e.g. "127.0.0.1" or "0.0.0.0" */
    uint16_t port;        /* 0 picks a free port; see http_server_port() */
    const char *cert_pem; /* serving certificate; NULL for plain HTTP */
    const char *key_pem;
    const char *client_ca_pem; /* ask for client certificates signed by these CAs (one or more
                                  PEM certificates); may be NULL */
    size_t max_body;           /* larger bodies get 413; 0 = 3 MiB */
    unsigned max_connections;  /* 0 = what the open-file limit allows, less a reserve */
    unsigned max_per_address;  /* connections from one client address; 0 = 1024 */
    unsigned max_workers;      /* handler threads at most; 0 = 256 */
    unsigned idle_timeout;     /* seconds a served connection may idle; 0 = 120 */
    unsigned first_timeout;    /* seconds a connection not yet answered with a success has to
                                  send a request, from its start or its last answer (the TLS
                                  handshake, the headers); 0 = 10 */
};

struct http_server;

/* Starts serving. 0, -EINVAL (bad address or certificate), -EADDRINUSE, -ENOMEM, -EIO. */
int http_server_start(const struct http_server_opts *opts, http_handler_fn handler, void *userdata,
                      struct http_server **ret);

/* The bound port (useful after asking for port 0). */
uint16_t http_server_port(const struct http_server *s);

/* What the server holds now: for tests, benchmarks and metrics. */
struct http_server_stats {
    unsigned connections;      /* open, including parked ones */
    unsigned workers;          /* handler threads alive */
    unsigned idle_workers;     /* of which waiting for work */
    unsigned sleeping_streams; /* streams waiting for data, holding no thread */
    unsigned queued;           /* requests waiting for a worker */
};
void http_server_stats(struct http_server *s, struct http_server_stats *ret);

/* Stops accepting, finishes running requests, ends streams, frees everything. NULL is fine. */
void http_server_stop(struct http_server *s);

#endif
