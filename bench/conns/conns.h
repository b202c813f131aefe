/*
 * bench/conns: what its files share. loop.c is the client that holds thousands of connections
 * from one thread: an epoll loop over non-blocking sockets and non-blocking GnuTLS sessions,
 * each connection a small state machine (connecting, handshake, idle keep-alive, a request in
 * flight, a streaming answer), because a thread per simulated agent or kubelet cannot reach
 * 10,000 on this 2-core machine and would measure the client's scheduler, not the server.
 * manager.c and apiserver.c are the two scenarios; main.c parses options, runs each scenario
 * against the baseline binary and the binary under test, and prints both.
 */
#ifndef KOORD_BENCH_CONNS_CONNS_H
#define KOORD_BENCH_CONNS_CONNS_H

#include <gnutls/gnutls.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"
#include "common/bench.h"

/* ---- the event loop client (loop.c) ---- */

enum econn_state {
    ECONN_DOWN,       /* no connection (never opened, failed, or closed) */
    ECONN_QUEUED,     /* waiting for a free opening slot */
    ECONN_CONNECTING, /* TCP connect in progress */
    ECONN_HANDSHAKE,  /* TLS handshake in progress */
    ECONN_UP,         /* established: idle, a request in flight, or streaming */
};

/* Why a connection went down (the ops->down callback). */
enum econn_end {
    ECONN_END_REFUSED, /* connect refused, or the server closed it before the handshake ended */
    ECONN_END_TIMEOUT, /* connect and handshake did not finish within the open timeout */
    ECONN_END_TLS,     /* the handshake failed otherwise (a TLS error) */
    ECONN_END_CLOSED,  /* the server closed an established connection (or ended a stream) */
    ECONN_END_ERROR,   /* a transport or protocol error on an established connection */
};

/* What ops->next put in the request buffer. */
enum econn_req {
    ECONN_REQ_NONE,   /* nothing to send now */
    ECONN_REQ_ONE,    /* one request; its answer goes to ops->answer */
    ECONN_REQ_STREAM, /* a streaming request (a watch): lines of its 200 body go to ops->line */
};

struct eloop;

/* One connection; the caller owns the storage (an array of them), the loop its insides. */
struct econn {
    size_t id;    /* the caller's index */
    uint32_t src; /* the caller's: source IPv4 address (host order) to bind, 0 = the kernel's */
    enum econn_state state;
    bool busy;      /* a request is in flight or a stream is open */
    bool streaming; /* a 200 streaming answer is being read */
    uint64_t up_ns; /* when the handshake finished */
    /* private */
    int fd;
    gnutls_session_t s;
    uint32_t events; /* the epoll interest set */
    uint64_t deadline_ns;
    struct strbuf out, in, body;
    size_t out_off;
    int phase; /* of the answer being read (loop.c) */
    long status;
    size_t left; /* body or chunk bytes still to come */
    bool close_after, want_stream;
    struct econn *qnext; /* the opening queue */
};

struct eloop_ops {
    /* c is up and has nothing in flight: write one request into req (eloop_request()) and say
     * which kind, or ECONN_REQ_NONE. Called after the handshake, after each answer, and on
     * eloop_kick(). */
    enum econn_req (*next)(struct eloop *l, struct econn *c, struct strbuf *req);
    /* The answer to c's request (a streaming request answered other than 200 comes here). */
    void (*answer)(struct eloop *l, struct econn *c, long status, const char *body, size_t len);
    /* One line (without its newline) of a streaming answer's body. */
    void (*line)(struct eloop *l, struct econn *c, const char *line, size_t len);
    /* c went down; busy says whether a request or stream was open then. The caller may
     * eloop_open() it again later (not from this callback). */
    void (*down)(struct eloop *l, struct econn *c, enum econn_end why, bool busy);
};

/*
 * A loop for connections to srv (an https:// server: its CA verified, its client certificate
 * or bearer token sent). At most max_opening connections are connecting or in their handshake
 * at once (the rest queue), each gets open_timeout_ms for both. ud is the caller's. NULL after
 * printing why.
 */
struct eloop *eloop_new(const struct server *srv, const struct eloop_ops *ops, void *ud,
                        size_t max_opening, unsigned open_timeout_ms);
/* Frees the loop: connections still queued or opening are closed (without ops->down);
 * established ones the caller closes first (eloop_close()). NULL is fine. */
void eloop_free(struct eloop *l);
void *eloop_ud(const struct eloop *l);

/* Queues c (ECONN_DOWN, id set) to be connected. */
void eloop_open(struct eloop *l, struct econn *c);
/* Closes c now without calling ops->down (a connection the caller is done with). */
void eloop_close(struct eloop *l, struct econn *c);
/* Asks ops->next for a request if c is up and idle. */
void eloop_kick(struct eloop *l, struct econn *c);
/* Connections queued, connecting or in their handshake. */
size_t eloop_opening(const struct eloop *l);

/* One round: starts queued connections, waits up to timeout_ms for events, handles them, and
 * ends openings past their deadline. */
void eloop_run(struct eloop *l, int timeout_ms);

/* Appends a request to req: the request line, Host, the server's credentials header, Accept,
 * and for a body its Content-Type and Content-Length. */
void eloop_request(const struct eloop *l, struct strbuf *req, const char *method, const char *path,
                   const char *accept, const char *ctype, const char *body, size_t len);

/* The name of a connection end, for messages. */
const char *econn_end_name(enum econn_end why);

/* ---- shared by the scenarios (main.c) ---- */

#define NAME_FMT "node-%05zu"

/* Options (main.c). */
struct conns_opts {
    size_t nodes, seconds, pods_per_node, writers, max_opening;
    size_t sources; /* source addresses of the agents and watches; 0 = one each */
    double rate;    /* 0: the scenario's default */
    unsigned open_timeout_ms;
    bool smoke;
};
extern struct conns_opts conns_opt;

/* The figures of one scenario run against one binary. */
struct conns_result {
    const char *koord; /* the binary */
    bool ran;          /* the servers started and the connections were tried */
    size_t wanted, held, refused, timed_out, tls_failed, closed; /* connections */
    double open_s, open_cli_cpu;    /* to open them all; this client's CPU meanwhile */
    double offered, achieved;       /* reports or updates per second */
    size_t scheduled, done, errors; /* answered 200 / other answers and transport failures */
    size_t refused_answers;         /* of the errors (and first reports, watches): not 2xx */
    size_t no_conn, unanswered;     /* for a node without a connection; no answer in time */
    struct dist ms;                 /* report latency, or update (write) latency */
    struct dist deliver_ms;         /* apiserver: event delivery latency */
    size_t expected, received, missing, duplicate, wrong, unwatched, bookmarks;
    long rss_before_kb, rss_idle_kb, rss_load_kb, client_rss_kb;
    double srv_cpu, cli_cpu, run_s;
};

/* Runs one scenario against the koord binary koord; figures in res. */
void conns_manager(const char *koord, struct conns_result *res);
void conns_apiserver(const char *koord, struct conns_result *res);

/* Resident memory of a process (0 = this one) in KiB, or 0 when unreadable. */
long conns_rss_kb(pid_t pid);

/* Waits until srv (and also, when not NULL) use under 5% of a core over a second, at most
 * max_s seconds. */
void conns_settle(const struct server *srv, const struct server *also, int max_s);

/* POSTs n objects to srv from a few connections of a loop: render(i, ud, body) writes object
 * i's body, path is the collection. 0, or < 0 after printing the first failures. */
int conns_create(const struct server *srv, const char *what, const char *path, size_t n,
                 void (*render)(size_t i, void *ud, struct strbuf *body), void *ud);

/* The source address of the connection of node i (host order): 127.1.0.1 and on, one per
 * node or spread over --sources addresses, as agents and kubelets come from their nodes'
 * addresses (a server's per-address connection limit must not see 10,000 from one). */
uint32_t conns_source(size_t i);

/* Node i (examples/nodes/node-plain.yaml, named NAME_FMT). */
void conns_render_node(size_t i, void *ud, struct strbuf *body);

#endif
