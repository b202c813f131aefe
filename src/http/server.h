/*
 * The HTTP/1.1 server every koord server is built on: libmicrohttpd with a thread per
 * connection (so a streaming response such as a watch may block its thread while it waits for
 * events), keep-alive, TLS through GnuTLS (optionally asking for client certificates, which is
 * how Kubernetes components authenticate), bounded request bodies, and a single handler
 * callback that sees a complete request and fills in a response: a body, or a stream.
 */
#ifndef KOORD_HTTP_SERVER_H
#define KOORD_HTTP_SERVER_H

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
 * A streaming body (chunked): called on the connection's thread for the next bytes. It may
 * block waiting for data; returns the number of bytes written to buf (> 0), 0 to end the
 * stream, or < 0 to abort the connection.
 */
typedef long (*http_stream_fn)(void *userdata, char *buf, size_t max);

struct http_response {
    int status;
    http_stream_fn stream; /* when set, the body is streamed instead of `body` */
    void *stream_userdata;
    void (*stream_free)(void *userdata); /* called once the stream is done, may be NULL */
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

/* The request handler: runs on a pool thread, must fill resp (status 0 means 500). */
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
    unsigned max_connections;  /* 0 = 1024 (each holds a thread) */
};

struct http_server;

/* Starts serving. 0, -EINVAL (bad address or certificate), -EADDRINUSE, -ENOMEM, -EIO. */
int http_server_start(const struct http_server_opts *opts, http_handler_fn handler, void *userdata,
                      struct http_server **ret);

/* The bound port (useful after asking for port 0). */
uint16_t http_server_port(const struct http_server *s);

/* Stops accepting, finishes running requests, frees everything. NULL is fine. */
void http_server_stop(struct http_server *s);

#endif
