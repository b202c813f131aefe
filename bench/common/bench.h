/*
 * bench/common: what the benchmark programs share, built once as a library every bench_<name>
 * links, so that each bench/<name>/ holds only its workloads. The servers under test, which a
 * benchmark starts in temp dirs on free loopback ports and always stops (server.c); the client
 * side: one keep-alive libcurl handle per thread, HTTP/1.1 and TLS to every server so none gets
 * a transport another lacks (client.c), and a lean HTTP/1.1-over-GnuTLS writer for the hot
 * loops where the client's own CPU would be taken from the server measured (wire.c); latency
 * figures, option parsing, reading the example
 * files and the NodeMetric status a node agent reports (util.c).
 */
#ifndef KOORD_BENCH_COMMON_BENCH_H
#define KOORD_BENCH_COMMON_BENCH_H

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <gnutls/gnutls.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/strbuf.h"

enum server_kind { SERVER_KOORD, SERVER_ETCD, SERVER_MANAGER, SERVER_AGENT, SERVER_SCHEDULER };

/* How a client authenticates to `koord apiserver` (the manager always takes the admin client
 * certificate of the API server it uses). */
enum server_auth {
    SERVER_AUTH_TOKEN, /* a bearer token of a system:masters user (--token-auth-file) */
    SERVER_AUTH_CERT,  /* the generated admin client certificate (O=system:masters) */
};

struct server {
    enum server_kind kind;
    const char *name; /* "koord", "etcd", "manager", "agent" or "scheduler" */
    char *dir;        /* temp dir: data, log, ready file; removed by server_stop() */
    pid_t pid;        /* 0 when not running */
    int pidfd;        /* becomes readable when the process exits; < 0 without pidfd_open */
    bool reaped;      /* without a pidfd: waitpid has returned its wstatus */
    int wstatus;
    char url[64];   /* https://127.0.0.1:PORT (agent, scheduler: http://, /metrics and probes) */
    char *cafile;   /* the CA that signed its serving certificate; NULL: etcd --auto-tls */
    char *auth;     /* an "Authorization: Bearer" header, or NULL */
    char *certfile; /* a client certificate and its key, or NULL */
    char *keyfile;
    char *kubeconfig; /* koord: an admin kubeconfig for other servers to use; else NULL */
};

/*
 * Starts `koord apiserver` in a new temp dir, waits up to 30 s until it answers, and creates
 * the CRDs of crd_paths (NULL-terminated; YAML files of deploy/crds) and checks that each is
 * served. 0, or < 0 after printing why and the server's log; s is then stopped and cleaned.
 */
int server_start_koord(struct server *s, const char *koord_path, const char *const *crd_paths,
                       enum server_auth auth);

/* Starts etcd (single member, --auto-tls) the same way. */
int server_start_etcd(struct server *s, const char *etcd_path);

/*
 * Starts `koord manager` against the API server api (its kubeconfig; client certificates
 * checked against its CA, so api's admin certificate is a system:masters client here too) and
 * waits up to ready_seconds until /readyz answers 200: it leads, and every Node has its
 * NodeMetric. 0, or < 0 as server_start_koord().
 */
int server_start_manager(struct server *s, const char *koord_path, const struct server *api,
                         int ready_seconds);

/*
 * Starts `koord agent` for node on a prepared host tree (host_root/cgroup: cgroup v1,
 * cgroupfs; host_root/proc; host_root/sys), with api's admin kubeconfig, reporting to the
 * manager m (its URL and CA), collecting every second, QoS in dry run (it writes nothing), and
 * waits up to 30 s until its /healthz answers. 0, or < 0 as server_start_koord().
 */
int server_start_agent(struct server *s, const char *koord_path, const struct server *api,
                       const struct server *m, const char *node, const char *host_root);

/*
 * Starts `koord scheduler` against the API server api (its admin kubeconfig) with the
 * KubeSchedulerConfiguration config_path (NULL: the default profile), no leader election, and
 * /metrics, /healthz and /readyz on a free loopback port (plain HTTP), and waits up to 60 s
 * until /readyz answers 200: its informers have listed every Node and Pod. 0, or < 0 as
 * server_start_koord().
 */
int server_start_scheduler(struct server *s, const char *koord_path, const struct server *api,
                           const char *config_path);

/* SIGTERM, up to 10 s to exit, then SIGKILL; removes the temp dir. A zeroed or stopped server
 * is fine. A koord server that was running and does not exit 0 counts as a failure
 * (bench_fail()), with its log printed. */
void server_stop(struct server *s);

/* CPU seconds (user + system) the server process has used so far. */
double server_cpu(const struct server *s);

/* Prints the last lines of the server's log to stderr. */
void server_print_log(const struct server *s);

/*
 * Call first in main(), before any thread starts: from then on SIGINT, SIGTERM and SIGHUP
 * kill every child the benchmark started, remove the servers' temp dirs and exit 128 + the
 * signal (on a thread of its own, through sigwait). SIGPIPE is ignored.
 */
void bench_catch_signals(void);

/* Stops that thread (main() calls it last, so that nothing is left running). */
void bench_release_signals(void);

/* Tells that signal thread about a child (and its temp dir, or NULL) and that it is gone. */
void bench_child_started(pid_t pid, const char *dir);
void bench_child_stopped(pid_t pid);

/* In a forked child before exec: no signals blocked, SIGKILL when the benchmark dies. */
void bench_child_setup(void);

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
/* conn_init() with another Accept header than "application/json". */
void conn_init_accept(struct conn *c, const struct server *srv, const char *accept);
void conn_release(struct conn *c);

/* One request (body may be NULL). 0 with c->status and c->body set, -EIO when no response
 * came (the reason is printed). */
int conn_do(struct conn *c, const char *method, const char *path, const char *body, size_t len);

/* conn_do() that also wants the answer's status to be want: -EIO otherwise, after printing the
 * request and the start of the answer. */
int conn_expect(struct conn *c, const char *method, const char *path, const char *body, size_t len,
                long want);

/*
 * The lean client for a benchmark's measured loop (wire.c): one keep-alive TLS connection to an
 * https:// server (its CA verified, its client certificate or bearer token sent), requests
 * written and answers read by hand, HTTP/1.1 with Content-Length framing only. Used by one
 * thread at a time.
 */
struct wire {
    const struct server *srv;
    char host[64];
    unsigned short port;
    int fd;
    gnutls_certificate_credentials_t cred;
    gnutls_session_t session; /* NULL when not connected */
    struct strbuf fixed;      /* the headers every request carries */
    struct strbuf req, in;    /* the request being sent, the answer being read */
    struct strbuf body;       /* the last answer's body */
    long status;              /* the last answer's status */
};

/* Sets w up for srv, every request sending Accept: accept. 0, or < 0 after printing why. */
int wire_init(struct wire *w, const struct server *srv, const char *accept);
/* Connects now (wire_do() would on its first request). 0, or < 0 after printing why. */
int wire_open(struct wire *w);
/* One request with a JSON body: 0 with w->status and w->body set, or < 0 (the connection is
 * then closed; the next request opens a new one). A keep-alive connection the server closed
 * is reopened and the request sent once more. */
int wire_do(struct wire *w, const char *method, const char *path, const char *body, size_t len);
void wire_release(struct wire *w);

/* A copy of the Node node (a parsed examples/nodes file) named name, its hostname label too. */
cJSON *bench_node_named(const cJSON *node, const char *name);

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

/* Prints "PROGRAM: FAIL what: ..." to stderr and counts a functional failure (any thread). */
void bench_fail(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* How many bench_fail() calls there were: main() exits 1 when any. */
int bench_failures(void);

/* Latency figures of one sample set (milliseconds or any unit). */
struct dist {
    double p50, p99, max;
};

/* Sorts v (n values) and takes nearest-rank percentiles; all 0 when n is 0. */
struct dist bench_dist(double *v, size_t n);

/* CPU seconds (user + system) this process has used so far. */
double bench_self_cpu(void);

/* CPU seconds the whole machine has been busy (all CPUs, /proc/stat; steal included): with
 * the CPU of the processes under test, what other work took while a benchmark ran. */
double bench_machine_cpu(void);

/* Parses a decimal in [min, max] into *ret. 0 or -EINVAL. */
int bench_parse_size(const char *s, size_t min, size_t max, size_t *ret);

/* Whether name (a path, or a program found on PATH) can be run. */
bool bench_runnable(const char *name);

/* The one document of the YAML or JSON file rel (relative to the source tree), or NULL after
 * printing why. The caller frees it with cJSON_Delete(). */
cJSON *bench_read_doc(const char *rel);

/* The YAML files of deploy/crds named by the NULL-terminated list, as absolute paths: a
 * NULL-terminated array, freed with bench_paths_free(). */
char **bench_crd_paths(const char *const *names);
void bench_paths_free(char **paths);

/*
 * Appends the members `"nodeMetric":{...},"podsMetric":[...]` of a NodeMetric status as a node
 * agent reports it (reference koordlet-and-scheduler.md 2.5): node usage, system usage, the
 * avg/p50/p90/p95/p99 aggregates over 5m/10m/30m, and one entry per pod (namespace, name,
 * podUsage cpu and memory, priority, qos) for `pods` pods, values varying by pod. The bytes are
 * what koordlet's Go encoder writes: fields in struct order, quantities as resource.Quantity
 * marshals them (node_cpu, the nodeUsage cpu, too). 110 pods make about 17 KB.
 */
void bench_nodemetric_usage(struct strbuf *out, int pods, const char *node_cpu);

#endif
