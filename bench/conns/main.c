/*
 * bench/conns: many connections to one server (issue 20 section 1). A cluster of N nodes
 * keeps N agent connections open to `koord manager` and N kubelet watches open on `koord
 * apiserver`; today's servers run a thread per connection capped at 1,024, so this program
 * measures what a server holds and what each held connection costs, from ONE client process
 * (loop.c: an epoll loop over non-blocking sockets and non-blocking GnuTLS):
 *
 *   manager    `koord apiserver` with N Nodes (default 10000) and `koord manager` (leader,
 *              every NodeMetric created); N TLS keep-alive connections, one per simulated
 *              agent, authenticated as bench/nodemetric's reporters are (the API server's admin
 *              client certificate), each PUTting its node's 110-pod NodeMetric status to
 *              /apis/metrics.koordinator.sh/v1alpha1/nodemetrics/<node>/status every N/R s
 *              (R reports/s, default N/10: every 10 s), the agents staggered evenly. Latency
 *              from each report's scheduled send time (open loop: a server that falls behind
 *              is charged for the wait, coordinated omission accounted as in bench/nodemetric).
 *              The manager's RSS before the connections, with all of them open and idle, and
 *              per idle connection; its CPU and ours during the run.
 *   apiserver  `koord apiserver` with N Nodes and P pods bound to each (default 2); N watches,
 *              one per node on its own TLS connection, as kubelets open them
 *              (GET /api/v1/pods?watch=true&fieldSelector=spec.nodeName=<node>
 *              &allowWatchBookmarks=true from the resourceVersion of a list); W writer
 *              connections (default 64) merge-patch pods at R updates/s (default 1000), spread
 *              over the pods of all nodes, each setting an annotation with its sequence number
 *              and send time. Delivery latency per event (arrival minus the annotation's send
 *              time), and the check that every acknowledged update reached exactly the watch
 *              of its node, once.
 *
 * --baseline-koord runs the same scenario against an older binary first and prints both side
 * by side with their ratio. Today's server takes about 1,020 connections and closes the rest
 * right after accepting them; connect and handshake have a deadline (--open-timeout), so the
 * baseline run ends and says how many connections it held; reports of agents it refused count
 * as "no connection", updates to nodes it did not watch as "unwatched".
 *
 * Each agent's and each watch's connection comes from its own source address (127.1.0.1 and
 * on; Linux routes all of 127.0.0.0/8 to the loopback), as agents and kubelets come from their
 * nodes' addresses, so a server's per-address connection limit sees one connection per
 * address, as in a cluster; --sources K spreads them over K addresses (1: all from 127.0.0.1,
 * to see that limit at work). Setup and writer connections come from 127.0.0.1.
 *
 * File descriptors: N + W + a few in this process and in the server under test. The program
 * raises its RLIMIT_NOFILE soft limit to the hard limit and refuses an N that does not fit;
 * the servers it starts inherit the raised limit (a koord started otherwise needs
 * `ulimit -n` above N itself, until koord raises its own). Ephemeral ports: N connections to
 * one port of 127.0.0.1 fit in Linux's default range (32768-60999).
 *
 * Timings never fail a run (the targets, p99 < 50 ms and < 100 KB per idle connection for the
 * manager, delivery p99 < 100 ms for the API server, are printed next to the figures); a
 * server that does not start or crashes, a refused report or update, and a wrong, duplicate or
 * missing delivery on a live watch do (exit 1). --smoke runs tiny counts against the binary
 * under test only (`make test` keeps this program working); there a connection not held fails
 * too.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/base.h"
#include "codec/codec.h"
#include "conns.h"

#define MAX_NODES 99999
#define FD_SPARE  256 /* descriptors beyond the connections: servers' files, pipes, epoll */

static const char usage[] =
    "usage: bench_conns [--nodes N] [--seconds S] [--rate R] [--pods-per-node P]\n"
    "                   [--writers W] [--open-concurrency C] [--open-timeout SECONDS]\n"
    "                   [--sources K]\n"
    "                   [--koord PATH] [--baseline-koord PATH] [--smoke] [manager] [apiserver]\n"
    "\n"
    "Holds N concurrent TLS connections from one epoll client: N agents reporting NodeMetrics\n"
    "to `koord manager` (manager), N pod watches on `koord apiserver` (apiserver); both\n"
    "scenarios when none is named. Prints connections held, throughput, latency from the\n"
    "scheduled time, the server's RSS per idle connection and CPU, and with --baseline-koord\n"
    "the same against an older binary with the ratio. Defaults: 10000 nodes, 30 s;\n"
    "manager: R = N/10 reports/s (each agent every 10 s); apiserver: R = 1000 updates/s,\n"
    "2 pods per node, 64 writers; at most 64 connections opening at once, 10 s each;\n"
    "each node's connection from its own address (127.1.0.1 and on); --sources K spreads\n"
    "them over K addresses (1: all from 127.0.0.1).\n"
    "--smoke: 20 nodes, 3 s, 20 reports/s, 100 updates/s, 2 writers, 4 opening at once.\n";

struct conns_opts conns_opt = {
    .nodes = 10000,
    .seconds = 30,
    .pods_per_node = 2,
    .writers = 64,
    .max_opening = 64,
    .open_timeout_ms = 10000,
};

static const char *koord = KOORD_BINARY, *baseline;
static bool want_manager, want_apiserver;

/* ---- helpers the scenarios share ---- */

long conns_rss_kb(pid_t pid)
{
    char path[64], line[256];
    long kb = 0;
    FILE *f;

    if (pid)
        (void)snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    else
        (void)snprintf(path, sizeof(path), "/proc/self/status");
    f = fopen(path, "re");
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    (void)fclose(f);
    return kb;
}

void conns_settle(const struct server *srv, const struct server *also, int max_s)
{
    double deadline = now_s() + max_s;

    for (;;) {
        double a = server_cpu(srv) + (also ? server_cpu(also) : 0), b;
        (void)usleep(1000000);
        b = server_cpu(srv) + (also ? server_cpu(also) : 0);
        if (b - a < 0.05 || now_s() > deadline)
            return;
    }
}

uint32_t conns_source(size_t i)
{
    size_t j = conns_opt.sources ? i % conns_opt.sources : i;

    if (conns_opt.sources == 1)
        return 0; /* the kernel's: 127.0.0.1 */
    /* 127.1.0.1 ... : 250 hosts per /24, never .0 or .255 */
    return (127u << 24) | (uint32_t)((1 + j / 250 / 256) << 16) |
           (uint32_t)(((j / 250) % 256) << 8) | (uint32_t)(1 + j % 250);
}

void conns_render_node(size_t i, void *ud, struct strbuf *body)
{
    char name[32];
    cJSON *node;

    (void)snprintf(name, sizeof(name), NAME_FMT, i);
    node = bench_node_named(ud, name);
    CHECK(json_print(node, body) == 0);
    cJSON_Delete(node);
}

/* ---- creating objects from a few connections ---- */

#define CREATE_CONNS 8

struct creator {
    const char *what, *path;
    size_t n, next, done, failed, down;
    void (*render)(size_t i, void *ud, struct strbuf *body);
    void *ud;
    struct strbuf body;
};

static enum econn_req create_next(struct eloop *l, struct econn *c, struct strbuf *req)
{
    struct creator *cr = eloop_ud(l);

    (void)c;
    if (cr->next >= cr->n || cr->failed)
        return ECONN_REQ_NONE;
    strbuf_reset(&cr->body);
    cr->render(cr->next++, cr->ud, &cr->body);
    eloop_request(l, req, "POST", cr->path, "application/json", "application/json", cr->body.buf,
                  cr->body.len);
    return ECONN_REQ_ONE;
}

static void create_answer(struct eloop *l, struct econn *c, long status, const char *body,
                          size_t len)
{
    struct creator *cr = eloop_ud(l);

    (void)c;
    if (status == 201) {
        cr->done++;
        return;
    }
    if (cr->failed++ < 3)
        (void)fprintf(stderr, "bench_conns: creating %s: HTTP %ld: %.*s\n", cr->what, status,
                      (int)(len > 300 ? 300 : len), body);
}

static void create_line(struct eloop *l, struct econn *c, const char *line, size_t len)
{
    (void)l;
    (void)c;
    (void)line;
    (void)len;
}

static void create_down(struct eloop *l, struct econn *c, enum econn_end why, bool busy)
{
    struct creator *cr = eloop_ud(l);

    (void)c;
    cr->down++;
    if (busy)
        cr->failed++;
    (void)fprintf(stderr, "bench_conns: creating %s: a connection went down: %s\n", cr->what,
                  econn_end_name(why));
}

int conns_create(const struct server *srv, const char *what, const char *path, size_t n,
                 void (*render)(size_t i, void *ud, struct strbuf *body), void *ud)
{
    static const struct eloop_ops ops = {create_next, create_answer, create_line, create_down};
    struct creator cr = {.what = what, .path = path, .n = n, .render = render, .ud = ud};
    struct econn conns[CREATE_CONNS] = {0};
    struct eloop *l;
    double t0 = now_s();

    (void)printf("  creating %zu %s ...\n", n, what);
    (void)fflush(stdout);
    strbuf_init(&cr.body);
    l = eloop_new(srv, &ops, &cr, CREATE_CONNS, 10000);
    if (!l)
        return -EIO;
    for (size_t i = 0; i < CREATE_CONNS; i++) {
        conns[i].id = i;
        eloop_open(l, &conns[i]);
    }
    /* Nothing opening and nothing in flight: every object was sent, or the work stopped. */
    for (;;) {
        bool active = eloop_opening(l) > 0;
        for (size_t i = 0; i < CREATE_CONNS && !active; i++)
            active = conns[i].busy;
        if (!active)
            break;
        eloop_run(l, 100);
    }
    for (size_t i = 0; i < CREATE_CONNS; i++)
        eloop_close(l, &conns[i]);
    eloop_free(l);
    strbuf_release(&cr.body);
    if (cr.done != n) {
        (void)fprintf(stderr, "bench_conns: %zu of %zu %s created\n", cr.done, n, what);
        return -EIO;
    }
    (void)printf("  %zu %s in %.1f s\n", n, what, now_s() - t0);
    return 0;
}

/* ---- the summary ---- */

/* One line of the summary: the baseline's figure, ours, the ratio (prec decimals), and the
 * issue's target for it, if any. */
static void row(const char *label, double base, double now, int prec, const char *target)
{
    char a[32], b[32], r[32] = "";

    (void)snprintf(a, sizeof(a), "%.*f", prec, base);
    (void)snprintf(b, sizeof(b), "%.*f", prec, now);
    if (baseline)
        (void)snprintf(r, sizeof(r), base > 0 ? "x%.3g" : "-", now / (base > 0 ? base : 1));
    if (baseline && target)
        (void)printf("  %-34s %14s %14s   %-8s  target %s\n", label, a, b, r, target);
    else if (baseline)
        (void)printf("  %-34s %14s %14s   %s\n", label, a, b, r);
    else if (target)
        (void)printf("  %-34s %14s   target %s\n", label, b, target);
    else
        (void)printf("  %-34s %14s\n", label, b);
}

static void ratio(const char *label, double base, double now, int prec)
{
    row(label, base, now, prec, NULL);
}

static double per_conn_kb(const struct conns_result *r)
{
    return r->held ? (double)(r->rss_idle_kb - r->rss_before_kb) / (double)r->held : 0;
}

static void summary(const char *scenario, const struct conns_result *b,
                    const struct conns_result *k)
{
    bool mgr = !strcmp(scenario, "manager");
    char target[32];

    (void)printf("\nbench/conns %s: %zu %s, %zu s, %ld CPUs\n", scenario, k->wanted,
                 mgr ? "agent connections" : "watches", conns_opt.seconds,
                 sysconf(_SC_NPROCESSORS_ONLN));
    if (baseline)
        (void)printf("  %-34s %14s %14s   %s\n", "", "baseline", "koord", "koord/baseline");
    (void)snprintf(target, sizeof(target), "%zu", k->wanted);
    row("connections held", (double)b->held, (double)k->held, 0, target);
    ratio("  refused", (double)b->refused, (double)k->refused, 0);
    ratio("  timed out (connect/handshake)", (double)b->timed_out, (double)k->timed_out, 0);
    ratio("  TLS errors", (double)b->tls_failed, (double)k->tls_failed, 0);
    ratio("  closed by the server", (double)b->closed, (double)k->closed, 0);
    ratio("seconds to open them", b->open_s, k->open_s, 1);
    ratio("  client CPU meanwhile, s", b->open_cli_cpu, k->open_cli_cpu, 1);
    ratio(mgr ? "reports/s offered" : "updates/s offered", b->offered, k->offered, 0);
    ratio(mgr ? "reports/s answered 200" : "updates/s answered 200", b->achieved, k->achieved, 0);
    ratio(mgr ? "report p50 ms" : "update (write) p50 ms", b->ms.p50, k->ms.p50, 2);
    row(mgr ? "report p99 ms" : "update (write) p99 ms", b->ms.p99, k->ms.p99, 2,
        mgr ? "< 50" : NULL);
    ratio(mgr ? "report max ms" : "update (write) max ms", b->ms.max, k->ms.max, 2);
    ratio("errors (answers not 200, broken)", (double)b->errors, (double)k->errors, 0);
    ratio("  answered with an HTTP error", (double)b->refused_answers, (double)k->refused_answers,
          0);
    if (mgr)
        ratio("no connection (refused agents)", (double)b->no_conn, (double)k->no_conn, 0);
    ratio("unsent or unanswered at the end", (double)b->unanswered, (double)k->unanswered, 0);
    if (!mgr) {
        ratio("delivery p50 ms", b->deliver_ms.p50, k->deliver_ms.p50, 2);
        row("delivery p99 ms", b->deliver_ms.p99, k->deliver_ms.p99, 2, "< 100");
        ratio("delivery max ms", b->deliver_ms.max, k->deliver_ms.max, 2);
        ratio("events expected (live watches)", (double)b->expected, (double)k->expected, 0);
        ratio("events received", (double)b->received, (double)k->received, 0);
        ratio("  missing", (double)b->missing, (double)k->missing, 0);
        ratio("  duplicate", (double)b->duplicate, (double)k->duplicate, 0);
        ratio("  to the wrong watch", (double)b->wrong, (double)k->wrong, 0);
        ratio("updates to unwatched nodes", (double)b->unwatched, (double)k->unwatched, 0);
        ratio("bookmarks", (double)b->bookmarks, (double)k->bookmarks, 0);
    }
    ratio(mgr ? "manager RSS before, MiB" : "apiserver RSS before, MiB",
          (double)b->rss_before_kb / 1024, (double)k->rss_before_kb / 1024, 1);
    ratio("  all connections open, idle, MiB", (double)b->rss_idle_kb / 1024,
          (double)k->rss_idle_kb / 1024, 1);
    ratio("  at the end of the run, MiB", (double)b->rss_load_kb / 1024,
          (double)k->rss_load_kb / 1024, 1);
    row("  per idle connection, KiB", per_conn_kb(b), per_conn_kb(k), 1,
        mgr ? "< 97.7 (100 KB)" : NULL);
    ratio("server CPU in the run, s", b->srv_cpu, k->srv_cpu, 2);
    ratio("  share of one core", b->run_s > 0 ? b->srv_cpu / b->run_s : 0,
          k->run_s > 0 ? k->srv_cpu / k->run_s : 0, 2);
    ratio("client CPU in the run, s", b->cli_cpu, k->cli_cpu, 2);
    ratio("client RSS, MiB", (double)b->client_rss_kb / 1024, (double)k->client_rss_kb / 1024, 1);
    if (mgr) {
        (void)printf("  target %zu connections held: %s; p99 < 50 ms: %s (%.2f ms); < 100 KB per "
                     "idle connection: %s (%.1f KiB)\n",
                     k->wanted, k->held == k->wanted ? "met" : "MISSED",
                     k->ms.p99 < 50 && k->done ? "met" : "MISSED", k->ms.p99,
                     per_conn_kb(k) < 100 * 1000 / 1024.0 && k->held ? "met" : "MISSED",
                     per_conn_kb(k));
    } else {
        (void)printf("  target %zu watches held: %s; delivery p99 < 100 ms: %s (%.2f ms)\n",
                     k->wanted, k->held == k->wanted ? "met" : "MISSED",
                     k->deliver_ms.p99 < 100 && k->received ? "met" : "MISSED", k->deliver_ms.p99);
    }
    (void)fflush(stdout);
}

static void run_scenario(const char *name, void (*fn)(const char *koord, struct conns_result *res))
{
    struct conns_result b = {0}, k = {0};

    if (baseline) {
        (void)printf("== %s: baseline %s\n", name, baseline);
        (void)fflush(stdout);
        fn(baseline, &b);
    }
    (void)printf("== %s: koord %s\n", name, koord);
    (void)fflush(stdout);
    fn(koord, &k);
    if (k.ran)
        summary(name, &b, &k);
    if (conns_opt.smoke && k.ran && k.held != k.wanted)
        bench_fail(name, "%zu of %zu connections held in --smoke", k.held, k.wanted);
}

/* ---- main ---- */

static int parse_opts(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"nodes", required_argument, NULL, 'n'},
        {"seconds", required_argument, NULL, 's'},
        {"rate", required_argument, NULL, 'r'},
        {"pods-per-node", required_argument, NULL, 'p'},
        {"writers", required_argument, NULL, 'w'},
        {"open-concurrency", required_argument, NULL, 'c'},
        {"open-timeout", required_argument, NULL, 't'},
        {"sources", required_argument, NULL, 'a'},
        {"koord", required_argument, NULL, 'K'},
        {"baseline-koord", required_argument, NULL, 'B'},
        {"smoke", no_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    size_t v;
    int ch, r = 0;

    while (r == 0 && (ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'n':
            r = bench_parse_size(optarg, 1, MAX_NODES, &conns_opt.nodes);
            break;
        case 's':
            r = bench_parse_size(optarg, 1, 3600, &conns_opt.seconds);
            break;
        case 'r':
            r = bench_parse_size(optarg, 1, 100000, &v);
            conns_opt.rate = (double)v;
            break;
        case 'p':
            r = bench_parse_size(optarg, 1, 100, &conns_opt.pods_per_node);
            break;
        case 'w':
            r = bench_parse_size(optarg, 1, 256, &conns_opt.writers);
            break;
        case 'c':
            r = bench_parse_size(optarg, 1, 10000, &conns_opt.max_opening);
            break;
        case 't':
            r = bench_parse_size(optarg, 1, 600, &v);
            conns_opt.open_timeout_ms = (unsigned)v * 1000;
            break;
        case 'a':
            r = bench_parse_size(optarg, 0, MAX_NODES, &conns_opt.sources);
            break;
        case 'K':
            koord = optarg;
            break;
        case 'B':
            baseline = optarg;
            break;
        case 'S':
            conns_opt.smoke = true;
            conns_opt.nodes = 20;
            conns_opt.seconds = 3;
            conns_opt.writers = 2;
            /* a few handshakes at a time: under valgrind each takes long, and the server
             * closes a connection whose handshake does not end within a few seconds */
            conns_opt.max_opening = 4;
            break;
        case 'h':
            (void)fputs(usage, stdout);
            exit(0);
        default:
            r = -EINVAL;
        }
    }
    for (; r == 0 && optind < argc; optind++) {
        if (!strcmp(argv[optind], "manager"))
            want_manager = true;
        else if (!strcmp(argv[optind], "apiserver"))
            want_apiserver = true;
        else
            r = -EINVAL;
    }
    if (r < 0) {
        (void)fputs(usage, stderr);
        return -EINVAL;
    }
    if (!want_manager && !want_apiserver)
        want_manager = want_apiserver = true;
    return 0;
}

/* The soft limit up to the hard one: N connections here, and in the servers, which inherit it. */
static int raise_nofile(void)
{
    struct rlimit rl;
    size_t need = conns_opt.nodes + conns_opt.writers + FD_SPARE;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return -errno;
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
        return -errno;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
        (void)fprintf(stderr,
                      "bench_conns: %zu nodes need %zu file descriptors; the hard RLIMIT_NOFILE "
                      "is %llu (raise it: ulimit -Hn, /etc/security/limits.conf)\n",
                      conns_opt.nodes, need, (unsigned long long)rl.rlim_max);
        return -EMFILE;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (parse_opts(argc, argv) < 0)
        return 2;
    if (raise_nofile() < 0)
        return 2;
    if (!bench_runnable(koord) || (baseline && !bench_runnable(baseline))) {
        (void)fprintf(stderr, "bench_conns: cannot run %s\n",
                      bench_runnable(koord) ? baseline : koord);
        return 2;
    }
    bench_catch_signals();
    codec_init();
    CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == 0);
    if (want_manager)
        run_scenario("manager", conns_manager);
    if (want_apiserver)
        run_scenario("apiserver", conns_apiserver);
    curl_global_cleanup();
    bench_release_signals();
    if (bench_failures())
        (void)fprintf(stderr, "bench_conns: %d failure(s)\n", bench_failures());
    return bench_failures() ? 1 : 0;
}
