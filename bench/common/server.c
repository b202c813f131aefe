/*
 * The servers under test (see bench.h): each runs in its own temp dir with its output in
 * DIR/log, is started on loopback ports nobody else holds, and dies with the benchmark
 * (PR_SET_PDEATHSIG), so a crashed or interrupted run leaves no server behind. Readiness is a
 * condition we check (the ready file, then a request that succeeds), with the child's exit
 * (its pidfd) ending the wait early.
 */
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "bench.h"
#include "codec/codec.h"

#define READY_SECONDS 30

static volatile pid_t live_pids[4];

void server_kill_all(void)
{
    for (size_t i = 0; i < ARRAY_SIZE(live_pids); i++)
        if (live_pids[i] > 0)
            (void)kill(live_pids[i], SIGKILL);
}

static void track(pid_t pid, pid_t old)
{
    for (size_t i = 0; i < ARRAY_SIZE(live_pids); i++) {
        if (live_pids[i] == old) {
            live_pids[i] = pid;
            return;
        }
    }
}

static int make_dir(struct server *s)
{
    const char *tmp = getenv("TMPDIR");
    struct strbuf p = STRBUF_INIT;

    strbuf_addf(&p, "%s/koord-bench-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", s->name);
    if (!mkdtemp(p.buf)) {
        int r = -errno;
        (void)fprintf(stderr, "bench_apiserver: mkdtemp %s: %s\n", p.buf, strerror(-r));
        strbuf_release(&p);
        return r;
    }
    s->dir = strbuf_detach(&p, NULL);
    return 0;
}

/* A port free right now (the kernel's pick); etcd cannot report the port it bound to 0. */
static int free_port(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -EIO;

    if (fd < 0)
        return -errno;
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    (void)close(fd);
    return port;
}

static int spawn(struct server *s, const char *const argv[])
{
    struct strbuf log = STRBUF_INIT;
    int fd;
    pid_t pid;

    strbuf_addf(&log, "%s/log", s->dir);
    fd = open(log.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    strbuf_release(&log);
    if (fd < 0)
        return -errno;
    pid = fork();
    if (pid < 0) {
        int r = -errno;
        (void)close(fd);
        return r;
    }
    if (pid == 0) {
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
            _exit(127);
        (void)execvp(argv[0], (char *const *)argv);
        (void)fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    (void)close(fd);
    s->pid = pid;
    track(pid, 0);
    s->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    return s->pidfd < 0 ? -errno : 0;
}

/* Waits up to ms for the process to exit; true when it has. */
static bool exited_within(const struct server *s, int ms)
{
    struct pollfd p = {.fd = s->pidfd, .events = POLLIN};

    return poll(&p, 1, ms) > 0;
}

static void print_log(const struct server *s)
{
    struct strbuf p = STRBUF_INIT, text = STRBUF_INIT;

    strbuf_addf(&p, "%s/log", s->dir);
    if (codec_read_file(p.buf, 1u << 20, &text) == 0 && text.len) {
        size_t from = text.len > 4000 ? text.len - 4000 : 0;
        (void)fprintf(stderr, "---- %s log (%s), last lines:\n%s\n----\n", s->name, p.buf,
                      text.buf + from);
    }
    strbuf_release(&p);
    strbuf_release(&text);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    (void)remove(path);
    return 0;
}

void server_stop(struct server *s)
{
    if (s->pid > 0) {
        (void)kill(s->pid, SIGTERM);
        if (!exited_within(s, 10000))
            (void)kill(s->pid, SIGKILL);
        (void)waitpid(s->pid, NULL, 0);
        track(0, s->pid);
        s->pid = 0;
    }
    if (s->pidfd > 0)
        (void)close(s->pidfd);
    s->pidfd = 0;
    if (s->dir)
        (void)nftw(s->dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    FREE_AND_NULL(s->dir);
    FREE_AND_NULL(s->cafile);
    FREE_AND_NULL(s->auth);
}

double server_cpu(const struct server *s)
{
    char path[64], buf[1024];
    unsigned long long ut = 0, st = 0;
    const char *p;
    FILE *f;
    size_t n;

    (void)snprintf(path, sizeof(path), "/proc/%d/stat", (int)s->pid);
    f = fopen(path, "re");
    if (!f)
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    (void)fclose(f);
    buf[n] = '\0';
    /* Fields after "(comm)": state is field 3, utime 14, stime 15. */
    p = strrchr(buf, ')');
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return 0;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Fails the start: prints why and the log, stops the server. */
static int give_up(struct server *s, int r, const char *why)
{
    (void)fprintf(stderr, "bench_apiserver: %s: %s\n", s->name, why);
    if (s->dir)
        print_log(s);
    server_stop(s);
    return r < 0 ? r : -EIO;
}

/* Waits until `ok` holds, the process exits, or READY_SECONDS pass. */
static int wait_ready(struct server *s, bool (*ok)(struct server *s))
{
    double deadline = now_s() + READY_SECONDS;

    while (!ok(s)) {
        if (exited_within(s, 20))
            return give_up(s, -ECHILD, "exited while starting");
        if (now_s() > deadline)
            return give_up(s, -ETIMEDOUT, "not ready after 30 s");
    }
    return 0;
}

static bool get_ok(struct server *s, const char *path, const char *want)
{
    struct conn c;
    bool ok;

    conn_init(&c, s);
    c.quiet = true; /* refused connections are expected while the server starts */
    ok = conn_do(&c, "GET", path, NULL, 0) == 0 && c.status == 200 && strstr(c.body.buf, want);
    conn_release(&c);
    return ok;
}

static bool koord_ready(struct server *s)
{
    struct strbuf p = STRBUF_INIT, addr = STRBUF_INIT;
    bool ok = false;

    strbuf_addf(&p, "%s/ready", s->dir);
    if (codec_read_file(p.buf, 256, &addr) == 0 && strchr(addr.buf, ':')) {
        while (addr.len && (addr.buf[addr.len - 1] == '\n' || addr.buf[addr.len - 1] == ' '))
            strbuf_setlen(&addr, addr.len - 1);
        (void)snprintf(s->url, sizeof(s->url), "https://%s", addr.buf);
        ok = get_ok(s, "/healthz", "ok");
    }
    strbuf_release(&p);
    strbuf_release(&addr);
    return ok;
}

static bool etcd_ready(struct server *s)
{
    return get_ok(s, "/health", "\"true\"");
}

/* POSTs the NodeSLO CRD (YAML from deploy/crds) and checks NodeSLOs are served. */
static int create_crd(struct server *s, const char *crd_path)
{
    struct strbuf yaml = STRBUF_INIT, json = STRBUF_INIT;
    struct codec_error err = {0};
    cJSON **docs = NULL;
    size_t n = 0;
    struct conn c;
    int r;

    conn_init(&c, s);
    r = codec_read_file(crd_path, 1u << 20, &yaml);
    if (r == 0)
        r = yaml_parse_stream(yaml.buf, yaml.len, NULL, &docs, &n, &err);
    if (r == 0 && n != 1)
        r = -EINVAL;
    if (r < 0) {
        (void)fprintf(stderr, "bench_apiserver: %s: %s\n", crd_path,
                      *err.msg ? err.msg : err_str(r));
        goto out;
    }
    CHECK(json_print(docs[0], &json) == 0);
    r = conn_do(&c, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json.buf,
                json.len);
    if (r == 0 && c.status != 201) {
        (void)fprintf(stderr, "bench_apiserver: creating the NodeSLO CRD: HTTP %ld: %s\n", c.status,
                      c.body.buf);
        r = -EIO;
    }
    if (r == 0 && (conn_do(&c, "GET", "/apis/slo.koordinator.sh/v1alpha1/nodeslos", NULL, 0) < 0 ||
                   c.status != 200)) {
        (void)fprintf(stderr, "bench_apiserver: NodeSLOs not served after creating the CRD\n");
        r = -EIO;
    }
out:
    codec_docs_free(docs, n);
    strbuf_release(&yaml);
    strbuf_release(&json);
    conn_release(&c);
    return r;
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "we");
    int r = 0;

    if (!f)
        return -errno;
    if (fputs(text, f) < 0)
        r = -EIO;
    if (fclose(f) != 0 && r == 0)
        r = -errno;
    return r;
}

int server_start_koord(struct server *s, const char *koord_path, const char *crd_path)
{
    struct strbuf tokens = STRBUF_INIT, ready = STRBUF_INIT, data = STRBUF_INIT, tok = STRBUF_INIT;
    unsigned char rnd[16];
    FILE *f;
    int r;

    memset(s, 0, sizeof(*s));
    s->kind = SERVER_KOORD;
    s->name = "koord";
    if ((r = make_dir(s)) < 0)
        return r;
    f = fopen("/dev/urandom", "re");
    if (!f || fread(rnd, 1, sizeof(rnd), f) != sizeof(rnd)) {
        if (f)
            (void)fclose(f);
        return give_up(s, -EIO, "cannot read /dev/urandom");
    }
    (void)fclose(f);
    for (size_t i = 0; i < sizeof(rnd); i++)
        strbuf_addf(&tok, "%02x", rnd[i]);
    strbuf_addf(&tokens, "%s/tokens.csv", s->dir);
    strbuf_addf(&ready, "%s/ready", s->dir);
    strbuf_addf(&data, "%s/data", s->dir);
    {
        struct strbuf line = STRBUF_INIT;
        strbuf_addf(&line, "%s,bench,1000,\"system:masters\"\n", tok.buf);
        r = write_file(tokens.buf, line.buf);
        strbuf_release(&line);
    }
    if (r == 0) {
        const char *argv[] = {koord_path,
                              "apiserver",
                              "--data-dir",
                              data.buf,
                              "--listen",
                              "127.0.0.1:0",
                              "--ready-file",
                              ready.buf,
                              "--token-auth-file",
                              tokens.buf,
                              "--log-level",
                              "warn",
                              NULL};
        struct strbuf x = STRBUF_INIT;
        strbuf_addf(&x, "%s/pki/ca.crt", data.buf);
        s->cafile = strbuf_detach(&x, NULL);
        strbuf_addf(&x, "Authorization: Bearer %s", tok.buf);
        s->auth = strbuf_detach(&x, NULL);
        r = spawn(s, argv);
    }
    if (r < 0)
        r = give_up(s, r, "cannot start");
    else if ((r = wait_ready(s, koord_ready)) == 0 && (r = create_crd(s, crd_path)) < 0)
        r = give_up(s, r, "cannot serve NodeSLOs");
    strbuf_release(&tokens);
    strbuf_release(&ready);
    strbuf_release(&data);
    strbuf_release(&tok);
    return r;
}

int server_start_etcd(struct server *s, const char *etcd_path)
{
    struct strbuf data = STRBUF_INIT, client = STRBUF_INIT, peer = STRBUF_INIT,
                  cluster = STRBUF_INIT;
    int cport, pport, r;

    memset(s, 0, sizeof(*s));
    s->kind = SERVER_ETCD;
    s->name = "etcd";
    if ((r = make_dir(s)) < 0)
        return r;
    cport = free_port();
    pport = free_port();
    if (cport < 0 || pport < 0 || cport == pport)
        return give_up(s, -EADDRNOTAVAIL, "no free loopback port");
    strbuf_addf(&data, "%s/data", s->dir);
    strbuf_addf(&client, "https://127.0.0.1:%d", cport);
    strbuf_addf(&peer, "http://127.0.0.1:%d", pport);
    strbuf_addf(&cluster, "bench=%s", peer.buf);
    (void)snprintf(s->url, sizeof(s->url), "%s", client.buf);
    {
        /* Defaults otherwise: a WAL fsync per commit (batched across concurrent
         * proposals), as Kubernetes runs it. */
        const char *argv[] = {etcd_path,     "--name",
                              "bench",       "--data-dir",
                              data.buf,      "--listen-client-urls",
                              client.buf,    "--advertise-client-urls",
                              client.buf,    "--listen-peer-urls",
                              peer.buf,      "--initial-advertise-peer-urls",
                              peer.buf,      "--initial-cluster",
                              cluster.buf,   "--auto-tls",
                              "--logger",    "zap",
                              "--log-level", "warn",
                              NULL};
        r = spawn(s, argv);
    }
    if (r < 0)
        r = give_up(s, r, "cannot start");
    else
        r = wait_ready(s, etcd_ready);
    strbuf_release(&data);
    strbuf_release(&client);
    strbuf_release(&peer);
    strbuf_release(&cluster);
    return r;
}
