/*
 * bench/apiserver internals shared by its three files: the servers under test, which the
 * benchmark starts in temp dirs on free loopback ports and always stops (server.c), and the
 * client side: one keep-alive libcurl handle per thread, HTTP/1.1 and TLS to both servers so
 * neither gets a transport the other lacks (client.c). main.c runs the workloads.
 */
#ifndef KOORD_BENCH_APISERVER_BENCH_H
#define KOORD_BENCH_APISERVER_BENCH_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/strbuf.h"

enum server_kind { SERVER_KOORD, SERVER_ETCD };

struct server {
    enum server_kind kind;
    const char *name; /* "koord" or "etcd" */
    char *dir;        /* temp dir: data, log, ready file; removed by server_stop() */
    pid_t pid;        /* 0 when not running */
    int pidfd;        /* becomes readable when the process exits */
    char url[64];     /* https://127.0.0.1:PORT */
    char *cafile;     /* koord: its cluster CA (verified); etcd: NULL (--auto-tls, self-signed) */
    char *auth;       /* koord: an "Authorization: Bearer" header; etcd: NULL */
};

/*
 * Starts `koord apiserver` (bearer-token auth, the NodeSLO CRD created and served) or etcd
 * (single member, --auto-tls) in a new temp dir and waits up to 30 s until it answers.
 * 0, or < 0 after printing why and the server's log; s is then stopped and cleaned.
 */
int server_start_koord(struct server *s, const char *koord_path, const char *crd_path);
int server_start_etcd(struct server *s, const char *etcd_path);

/* SIGTERM, up to 10 s to exit, then SIGKILL; removes the temp dir. A zeroed or stopped server
 * is fine. */
void server_stop(struct server *s);

/* CPU seconds (user + system) the server process has used so far. */
double server_cpu(const struct server *s);

/* SIGKILLs every running server (async-signal-safe; for the fatal-signal handler). */
void server_kill_all(void);

/* Monotonic clock in seconds and in nanoseconds (the clock watch events carry). */
double now_s(void);
uint64_t now_ns(void);

/* A keep-alive connection to one server, used by one thread at a time. */
struct conn {
    const struct server *srv;
    CURL *h;
    struct curl_slist *hdrs;
    struct strbuf body; /* the last response body */
    long status;        /* the last response status */
    double ttfb;        /* the last response: seconds from sending to its first byte */
    bool quiet;         /* do not print transport failures (probing a starting server) */
};

void conn_init(struct conn *c, const struct server *srv);
void conn_release(struct conn *c);

/* One request (body may be NULL). 0 with c->status and c->body set, -EIO when no response
 * came (the reason is printed). */
int conn_do(struct conn *c, const char *method, const char *path, const char *body, size_t len);

/*
 * A streaming request: every received chunk goes to on_data, and the transfer ends when
 * on_data returns false or should_stop(ud) does (polled at least once a second by libcurl).
 * Returns the CURLcode (CURLE_ABORTED_BY_CALLBACK when stopped from our side).
 */
typedef bool (*conn_data_fn)(void *ud, const char *data, size_t len);
typedef bool (*conn_stop_fn)(void *ud);
int conn_stream(struct conn *c, const char *method, const char *path, const char *body, size_t len,
                conn_data_fn on_data, conn_stop_fn should_stop, void *ud);

/* Standard base64 (RFC 4648 section 4, padded), as etcd's JSON gateway encodes bytes. */
void b64_encode(struct strbuf *out, const void *data, size_t len);

/* Decodes base64 from src (up to srclen characters or the first non-alphabet one) into out,
 * writing at most max bytes; returns the number written. */
size_t b64_decode(const char *src, size_t srclen, char *out, size_t max);

#endif
