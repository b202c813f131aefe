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
#include <pthread.h>
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

/* Children alive now and their temp dirs, for the signal thread to clean up. */
static struct {
    pid_t pid;
    const char *dir; /* borrowed from the server; NULL for other children */
} live[8];
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;

void bench_child_started(pid_t pid, const char *dir)
{
    CHECK(pthread_mutex_lock(&live_lock) == 0);
    for (size_t i = 0; i < ARRAY_SIZE(live); i++) {
        if (live[i].pid == 0) {
            live[i].pid = pid;
            live[i].dir = dir;
            break;
        }
    }
    CHECK(pthread_mutex_unlock(&live_lock) == 0);
}

void bench_child_stopped(pid_t pid)
{
    CHECK(pthread_mutex_lock(&live_lock) == 0);
    for (size_t i = 0; i < ARRAY_SIZE(live); i++)
        if (live[i].pid == pid) {
            live[i].pid = 0;
            live[i].dir = NULL;
        }
    CHECK(pthread_mutex_unlock(&live_lock) == 0);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    (void)remove(path);
    return 0;
}

/* SIGINT, SIGTERM, SIGHUP: kill the children, remove their temp dirs, exit 128 + signal. A
 * thread of its own (sigwait), so the cleanup needs no async-signal-safety. */
static void *signal_thread(void *arg)
{
    const sigset_t *set = arg;
    int sig = 0;

    if (sigwait(set, &sig) != 0)
        return NULL;
    (void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    (void)pthread_mutex_lock(&live_lock);
    for (size_t i = 0; i < ARRAY_SIZE(live); i++) {
        if (live[i].pid <= 0)
            continue;
        (void)kill(live[i].pid, SIGKILL);
        (void)waitpid(live[i].pid, NULL, 0);
        if (live[i].dir)
            (void)nftw(live[i].dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    }
    (void)fprintf(stderr, "%s: interrupted by signal %d; servers stopped\n",
                  program_invocation_short_name, sig);
    _exit(128 + sig);
}

static pthread_t signal_th;

void bench_catch_signals(void)
{
    static sigset_t set;

    (void)sigemptyset(&set);
    (void)sigaddset(&set, SIGINT);
    (void)sigaddset(&set, SIGTERM);
    (void)sigaddset(&set, SIGHUP);
    CHECK(pthread_sigmask(SIG_BLOCK, &set, NULL) == 0);
    CHECK(pthread_create(&signal_th, NULL, signal_thread, &set) == 0);
    (void)signal(SIGPIPE, SIG_IGN);
}

void bench_release_signals(void)
{
    /* sigwait is a cancellation point; once a signal came, the thread exits the process. */
    (void)pthread_cancel(signal_th);
    CHECK(pthread_join(signal_th, NULL) == 0);
}

void bench_child_setup(void)
{
    sigset_t none;

    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    (void)sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, NULL);
}

static int make_dir(struct server *s)
{
    const char *tmp = getenv("TMPDIR");
    struct strbuf p = STRBUF_INIT;

    strbuf_addf(&p, "%s/koord-bench-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", s->name);
    if (!mkdtemp(p.buf)) {
        int r = -errno;
        (void)fprintf(stderr, "%s: mkdtemp %s: %s\n", program_invocation_short_name, p.buf,
                      strerror(-r));
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
        bench_child_setup();
        if (dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
            _exit(127);
        (void)execvp(argv[0], (char *const *)argv);
        (void)fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    (void)close(fd);
    s->pid = pid;
    bench_child_started(pid, s->dir);
    /* Valgrind 3.19 does not know pidfd_open: then exited_within() polls waitpid. */
    s->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    return s->pidfd < 0 && errno != ENOSYS ? -errno : 0;
}

/* Waits up to ms for the process to exit; true when it has (then s->wstatus is set, once
 * it has been reaped). */
static bool exited_within(struct server *s, int ms)
{
    struct pollfd p = {.fd = s->pidfd, .events = POLLIN};
    double deadline = now_s() + ms / 1000.0;

    if (s->pidfd > 0)
        return poll(&p, 1, ms) > 0;
    for (;;) {
        if (s->reaped || waitpid(s->pid, &s->wstatus, WNOHANG) == s->pid)
            return s->reaped = true;
        if (now_s() >= deadline)
            return false;
        (void)usleep(10000);
    }
}

void server_print_log(const struct server *s)
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

void server_stop(struct server *s)
{
    if (s->pid > 0) {
        bool running = !exited_within(s, 0), killed = false;
        int st = 0;
        (void)kill(s->pid, SIGTERM);
        if (!exited_within(s, 10000)) {
            (void)kill(s->pid, SIGKILL);
            killed = true;
        }
        if (!s->reaped)
            (void)waitpid(s->pid, &s->wstatus, 0);
        st = s->wstatus;
        bench_child_stopped(s->pid);
        s->pid = 0;
        /* koord stops cleanly on SIGTERM with status 0; anything else (a crash, a sanitizer
         * report, a hang) is a bug the benchmark found. */
        if (running && s->kind != SERVER_ETCD && (killed || !WIFEXITED(st) || WEXITSTATUS(st))) {
            bench_fail(s->name, "did not stop cleanly on SIGTERM (%s %d)",
                       killed ? "killed after 10 s, status" : "wait status", st);
            server_print_log(s);
        }
    }
    if (s->pidfd > 0)
        (void)close(s->pidfd);
    s->pidfd = 0;
    if (s->dir)
        (void)nftw(s->dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    FREE_AND_NULL(s->dir);
    FREE_AND_NULL(s->cafile);
    FREE_AND_NULL(s->auth);
    FREE_AND_NULL(s->certfile);
    FREE_AND_NULL(s->keyfile);
    FREE_AND_NULL(s->kubeconfig);
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
    (void)fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, s->name, why);
    if (s->dir)
        server_print_log(s);
    server_stop(s);
    return r < 0 ? r : -EIO;
}

/* Waits until `ok` holds, the process exits, or `seconds` pass. */
static int wait_ready(struct server *s, bool (*ok)(struct server *s), int seconds)
{
    double deadline = now_s() + seconds;

    while (!ok(s)) {
        if (exited_within(s, 20))
            return give_up(s, -ECHILD, "exited while starting");
        if (now_s() > deadline) {
            char why[64];
            (void)snprintf(why, sizeof(why), "not ready after %d s", seconds);
            return give_up(s, -ETIMEDOUT, why);
        }
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

/* Reads the address the server wrote to DIR/ready into s->url; false while it has not. */
static bool read_ready_file(struct server *s)
{
    struct strbuf p = STRBUF_INIT, addr = STRBUF_INIT;
    bool ok = false;

    strbuf_addf(&p, "%s/ready", s->dir);
    if (codec_read_file(p.buf, 256, &addr) == 0 && strchr(addr.buf, ':')) {
        while (addr.len && (addr.buf[addr.len - 1] == '\n' || addr.buf[addr.len - 1] == ' '))
            strbuf_setlen(&addr, addr.len - 1);
        (void)snprintf(s->url, sizeof(s->url), "https://%s", addr.buf);
        ok = true;
    }
    strbuf_release(&p);
    strbuf_release(&addr);
    return ok;
}

static bool koord_ready(struct server *s)
{
    return read_ready_file(s) && get_ok(s, "/healthz", "ok");
}

static bool manager_ready(struct server *s)
{
    return read_ready_file(s) && get_ok(s, "/readyz", "ok");
}

/* The agent serves plain HTTP on loopback. */
static bool agent_ready(struct server *s)
{
    if (!read_ready_file(s))
        return false;
    /* "https://..." -> "http://..." */
    memmove(s->url + 4, s->url + 5, strlen(s->url + 5) + 1);
    return get_ok(s, "/healthz", "ok");
}

/* The scheduler serves plain HTTP on loopback too; ready once its informers have synced. */
static bool scheduler_ready(struct server *s)
{
    if (!read_ready_file(s))
        return false;
    memmove(s->url + 4, s->url + 5, strlen(s->url + 5) + 1);
    return get_ok(s, "/readyz", "ok");
}

static bool etcd_ready(struct server *s)
{
    return get_ok(s, "/health", "\"true\"");
}

/* POSTs one CRD (a YAML file from deploy/crds) and checks that its kind is served. */
static int create_crd(struct conn *c, const char *crd_path)
{
    struct strbuf yaml = STRBUF_INIT, json = STRBUF_INIT, path = STRBUF_INIT;
    struct codec_error err = {0};
    const cJSON *spec, *plural, *group, *version;
    cJSON **docs = NULL;
    size_t n = 0;
    int r;

    r = codec_read_file(crd_path, 1u << 20, &yaml);
    if (r == 0)
        r = yaml_parse_stream(yaml.buf, yaml.len, NULL, &docs, &n, &err);
    if (r == 0 && (n != 1 || !docs))
        r = -EINVAL;
    if (r == 0) {
        spec = cJSON_GetObjectItemCaseSensitive(docs[0], "spec");
        group = cJSON_GetObjectItemCaseSensitive(spec, "group");
        plural = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(spec, "names"),
                                                  "plural");
        version = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(spec, "versions"), 0), "name");
        if (!cJSON_IsString(group) || !cJSON_IsString(plural) || !cJSON_IsString(version))
            r = -EINVAL;
        else
            strbuf_addf(&path, "/apis/%s/%s/%s", group->valuestring, version->valuestring,
                        plural->valuestring);
    }
    if (r != 0) {
        r = r < 0 ? r : -EINVAL;
        (void)fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, crd_path,
                      *err.msg ? err.msg : err_str(r));
        goto out;
    }
    CHECK(json_print(docs[0], &json) == 0);
    r = conn_do(c, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json.buf,
                json.len);
    if (r == 0 && c->status != 201) {
        (void)fprintf(stderr, "%s: creating the CRD of %s: HTTP %ld: %s\n",
                      program_invocation_short_name, crd_path, c->status, c->body.buf);
        r = -EIO;
    }
    if (r == 0 && (conn_do(c, "GET", path.buf, NULL, 0) < 0 || c->status != 200)) {
        (void)fprintf(stderr, "%s: %s not served after creating its CRD\n",
                      program_invocation_short_name, path.buf);
        r = -EIO;
    }
out:
    codec_docs_free(docs, n);
    strbuf_release(&yaml);
    strbuf_release(&json);
    strbuf_release(&path);
    return r;
}

static int create_crds(struct server *s, const char *const *crd_paths)
{
    struct conn c;
    int r = 0;

    conn_init(&c, s);
    for (size_t i = 0; crd_paths && crd_paths[i] && r == 0; i++)
        r = create_crd(&c, crd_paths[i]);
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

static char *path_in(const char *dir, const char *rel)
{
    struct strbuf p = STRBUF_INIT;

    strbuf_addf(&p, "%s/%s", dir, rel);
    return strbuf_detach(&p, NULL);
}

/* A bearer token of a system:masters user in DIR/tokens.csv, and its header in s->auth. */
static int write_token(struct server *s, const char *tokens_path)
{
    struct strbuf tok = STRBUF_INIT, line = STRBUF_INIT;
    unsigned char rnd[16];
    FILE *f;
    int r = -EIO;

    f = fopen("/dev/urandom", "re");
    if (!f || fread(rnd, 1, sizeof(rnd), f) != sizeof(rnd))
        goto out;
    for (size_t i = 0; i < sizeof(rnd); i++)
        strbuf_addf(&tok, "%02x", rnd[i]);
    strbuf_addf(&line, "%s,bench,1000,\"system:masters\"\n", tok.buf);
    if ((r = write_file(tokens_path, line.buf)) == 0) {
        strbuf_reset(&line);
        strbuf_addf(&line, "Authorization: Bearer %s", tok.buf);
        s->auth = strbuf_detach(&line, NULL);
    }
out:
    if (f)
        (void)fclose(f);
    strbuf_release(&tok);
    strbuf_release(&line);
    return r;
}

int server_start_koord(struct server *s, const char *koord_path, const char *const *crd_paths,
                       enum server_auth auth)
{
    char *tokens = NULL, *ready = NULL, *data = NULL;
    int r;

    memset(s, 0, sizeof(*s));
    s->kind = SERVER_KOORD;
    s->name = "koord";
    if ((r = make_dir(s)) < 0)
        return r;
    tokens = path_in(s->dir, "tokens.csv");
    ready = path_in(s->dir, "ready");
    data = path_in(s->dir, "data");
    s->kubeconfig = path_in(s->dir, "kubeconfig");
    s->cafile = path_in(data, "pki/ca.crt");
    if (auth == SERVER_AUTH_CERT) {
        s->certfile = path_in(data, "pki/admin.crt");
        s->keyfile = path_in(data, "pki/admin.key");
        r = 0;
    } else {
        r = write_token(s, tokens);
    }
    if (r == 0) {
        const char *argv[16];
        size_t n = 0;
        argv[n++] = koord_path;
        argv[n++] = "apiserver";
        argv[n++] = "--data-dir";
        argv[n++] = data;
        argv[n++] = "--listen";
        argv[n++] = "127.0.0.1:0";
        argv[n++] = "--ready-file";
        argv[n++] = ready;
        argv[n++] = "--write-kubeconfig";
        argv[n++] = s->kubeconfig;
        if (auth == SERVER_AUTH_TOKEN) {
            argv[n++] = "--token-auth-file";
            argv[n++] = tokens;
        }
        argv[n++] = "--log-level";
        argv[n++] = "warn";
        argv[n] = NULL;
        r = spawn(s, argv);
    }
    if (r < 0)
        r = give_up(s, r, "cannot start");
    else if ((r = wait_ready(s, koord_ready, READY_SECONDS)) == 0 &&
             (r = create_crds(s, crd_paths)) < 0)
        r = give_up(s, r, "cannot serve the CRDs");
    free(tokens);
    free(ready);
    free(data);
    return r;
}

int server_start_manager(struct server *s, const char *koord_path, const struct server *api,
                         int ready_seconds)
{
    char *ready = NULL, *certs = NULL;
    int r;

    memset(s, 0, sizeof(*s));
    s->kind = SERVER_MANAGER;
    s->name = "manager";
    if ((r = make_dir(s)) < 0)
        return r;
    ready = path_in(s->dir, "ready");
    certs = path_in(s->dir, "certs");
    s->cafile = path_in(certs, "koord-manager-ca.crt");
    s->certfile = path_in(api->dir, "data/pki/admin.crt");
    s->keyfile = path_in(api->dir, "data/pki/admin.key");
    {
        const char *argv[] = {koord_path,    "manager",     "--kubeconfig",     api->kubeconfig,
                              "--listen",    "127.0.0.1:0", "--ready-file",     ready,
                              "--cert-dir",  certs,         "--client-ca-file", api->cafile,
                              "--log-level", "warn",        "--webhook-listen", "127.0.0.1:0",
                              NULL};
        r = spawn(s, argv);
    }
    if (r < 0)
        r = give_up(s, r, "cannot start");
    else
        r = wait_ready(s, manager_ready, ready_seconds);
    free(ready);
    free(certs);
    return r;
}

int server_start_agent(struct server *s, const char *koord_path, const struct server *api,
                       const struct server *m, const char *node, const char *host_root)
{
    char *ready = NULL, *cg = NULL, *proc = NULL, *sys = NULL, *resctrl = NULL;
    int r;

    memset(s, 0, sizeof(*s));
    s->kind = SERVER_AGENT;
    s->name = "agent";
    if ((r = make_dir(s)) < 0)
        return r;
    ready = path_in(s->dir, "ready");
    cg = path_in(host_root, "cgroup");
    proc = path_in(host_root, "proc");
    sys = path_in(host_root, "sys");
    resctrl = path_in(host_root, "sys/fs/resctrl");
    {
        const char *argv[] = {koord_path,
                              "agent",
                              "--node-name",
                              node,
                              "--kubeconfig",
                              api->kubeconfig,
                              "--manager-address",
                              m->url,
                              "--manager-ca-file",
                              m->cafile,
                              "--cgroup-root",
                              cg,
                              "--proc-root",
                              proc,
                              "--sys-root",
                              sys,
                              "--resctrl-root",
                              resctrl,
                              "--cgroup-version",
                              "v1",
                              "--cgroup-driver",
                              "cgroupfs",
                              "--collect-interval-seconds",
                              "1",
                              "--dry-run",
                              "--listen",
                              "127.0.0.1:0",
                              "--ready-file",
                              ready,
                              "--log-level",
                              "warn",
                              NULL};
        r = spawn(s, argv);
    }
    if (r < 0)
        r = give_up(s, r, "cannot start");
    else
        r = wait_ready(s, agent_ready, READY_SECONDS);
    free(ready);
    free(cg);
    free(proc);
    free(sys);
    free(resctrl);
    return r;
}

int server_start_scheduler(struct server *s, const char *koord_path, const struct server *api,
                           const char *config_path)
{
    char *ready = NULL;
    int r;

    memset(s, 0, sizeof(*s));
    s->kind = SERVER_SCHEDULER;
    s->name = "scheduler";
    if ((r = make_dir(s)) < 0)
        return r;
    ready = path_in(s->dir, "ready");
    {
        const char *argv[16];
        size_t n = 0;
        argv[n++] = koord_path;
        argv[n++] = "scheduler";
        argv[n++] = "--kubeconfig";
        argv[n++] = api->kubeconfig;
        if (config_path) {
            argv[n++] = "--config";
            argv[n++] = config_path;
        }
        argv[n++] = "--leader-elect=false";
        argv[n++] = "--listen";
        argv[n++] = "127.0.0.1:0";
        argv[n++] = "--ready-file";
        argv[n++] = ready;
        argv[n++] = "--log-level";
        argv[n++] = "warn";
        argv[n] = NULL;
        r = spawn(s, argv);
    }
    if (r < 0)
        r = give_up(s, r, "cannot start");
    else
        r = wait_ready(s, scheduler_ready, 2 * READY_SECONDS);
    free(ready);
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
        r = wait_ready(s, etcd_ready, READY_SECONDS);
    strbuf_release(&data);
    strbuf_release(&client);
    strbuf_release(&peer);
    strbuf_release(&cluster);
    return r;
}
