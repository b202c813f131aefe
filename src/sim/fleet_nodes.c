/*
 * The fleet's nodes as the API server and koord manager know them (fleet.h): the Node objects,
 * registered as kubelet would register them, and the client each node reports its NodeMetric
 * with: its own certificate (CN=system:node:<name>, O=system:nodes, minted from the API
 * server's CA, which koord manager trusts for client certificates), or one shared admin client
 * (--no-node-certs: a fleet past the open-file limit).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/rfc3339.h"
#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "http/tls.h"
#include "kube/client.h"
#include "kube/config.h"
#include "sim/fleet-int.h"

#define COMP      "sim"
#define CERT_DAYS 30

static int register_node(struct sim_fleet *f, size_t n, const char *now, struct strbuf *err)
{
    const struct sim_node *d = f->nodes[n].def;
    struct strbuf sb = STRBUF_INIT;
    struct kube_status st = {0};
    char ip[32];
    cJSON *o;
    int r;

    sim_fleet__host_ip(n, ip, sizeof(ip));
    strbuf_addf(&sb,
                "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"%s\", "
                "\"labels\": {\"kubernetes.io/hostname\": \"%s\", \"kubernetes.io/os\": "
                "\"linux\", \"kubernetes.io/arch\": \"amd64\", \"sim.koordinator.sh/fleet\": "
                "\"true\"}}, \"status\": {\"capacity\": {\"cpu\": \"%lldm\", \"memory\": "
                "\"%lld\", \"pods\": \"256\"}, \"allocatable\": {\"cpu\": \"%lldm\", "
                "\"memory\": \"%lld\", \"pods\": \"256\"}, \"addresses\": [{\"type\": "
                "\"InternalIP\", \"address\": \"%s\"}, {\"type\": \"Hostname\", \"address\": "
                "\"%s\"}], \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\", "
                "\"reason\": \"KubeletReady\", \"message\": \"simulated by koord sim\", "
                "\"lastHeartbeatTime\": \"%s\", \"lastTransitionTime\": \"%s\"}], "
                "\"nodeInfo\": {\"kubeletVersion\": \"v1.32.0-koord-sim\", "
                "\"operatingSystem\": \"linux\", \"architecture\": \"amd64\"}}}",
                d->name, d->name, (long long)d->cpu_milli, (long long)d->memory,
                (long long)d->cpu_milli, (long long)d->memory, ip, d->name, now, now);
    o = sim_fleet__parse(sb.buf);
    r = kube_create(f->o.admin, &kube_res_nodes, NULL, o, NULL, &st);
    if (r == -EEXIST)
        r = 0;
    if (r < 0)
        strbuf_addf(err, "registering node \"%s\" failed: %s", d->name,
                    st.message[0] ? st.message : err_str(r));
    cJSON_Delete(o);
    strbuf_release(&sb);
    return r;
}

/* The registration threads: Node creates are latency-bound (one API server round trip and one
 * store commit each, 64 s for 10,000 one at a time on the development machine), and the API
 * server serves concurrent writes, so a few clients in flight divide that. */
#define REGISTER_THREADS 8

struct registration {
    struct sim_fleet *f;
    char now[RFC3339_STR_MAX];
    atomic_size_t next;       /* the next node to register */
    atomic_size_t registered; /* nodes the API server has */
    atomic_bool stop;         /* a node failed: take no more */
    pthread_mutex_t mu;
    int r;             /* under mu: the first failure, 0 if none */
    struct strbuf err; /* under mu: what it was */
    size_t failed;     /* under mu: nodes that failed */
};

static void *register_main(void *arg)
{
    struct registration *g = arg;
    struct strbuf err = STRBUF_INIT;
    size_t n;

    while (!atomic_load(&g->stop) && (n = atomic_fetch_add(&g->next, 1)) < g->f->nnodes) {
        int r = register_node(g->f, n, g->now, &err);
        if (r == 0) {
            atomic_fetch_add(&g->registered, 1);
            continue;
        }
        atomic_store(&g->stop, true);
        (void)pthread_mutex_lock(&g->mu);
        if (!g->r) {
            g->r = r;
            strbuf_addf(&g->err, "%s", err.buf);
        }
        g->failed++;
        (void)pthread_mutex_unlock(&g->mu);
        strbuf_reset(&err);
    }
    strbuf_release(&err);
    return NULL;
}

int sim_fleet__register_nodes(struct sim_fleet *f, struct strbuf *err)
{
    struct registration g = {.f = f, .err = STRBUF_INIT};
    pthread_t threads[REGISTER_THREADS];
    size_t nthreads = 0, want = f->nnodes < REGISTER_THREADS ? f->nnodes : REGISTER_THREADS;
    double start = sim_fleet__mono_s();
    int r = 0;

    sim_fleet__now_rfc3339(g.now);
    atomic_init(&g.next, 0);
    atomic_init(&g.registered, 0);
    atomic_init(&g.stop, false);
    (void)pthread_mutex_init(&g.mu, NULL);
    for (; nthreads < want; nthreads++) {
        if ((r = -pthread_create(&threads[nthreads], NULL, register_main, &g)) < 0) {
            atomic_store(&g.stop, true);
            strbuf_addf(err, "cannot start a node registration thread: %s", err_str(r));
            break;
        }
    }
    for (size_t i = 0; i < nthreads; i++)
        (void)pthread_join(threads[i], NULL);
    if (!r && g.r) {
        r = g.r;
        strbuf_addf(err, "%s (%zu of %zu nodes registered", g.err.buf, atomic_load(&g.registered),
                    f->nnodes);
        if (g.failed > 1)
            strbuf_addf(err, ", %zu more failed", g.failed - 1);
        strbuf_addf(err, ")");
    }
    if (!r)
        log_info(COMP, "registered %zu nodes in %.1f s", f->nnodes, sim_fleet__mono_s() - start);
    (void)pthread_mutex_destroy(&g.mu);
    strbuf_release(&g.err);
    return r;
}

static int write_private(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    size_t len = strlen(text), off = 0;
    int r = 0;

    if (fd < 0)
        return -errno;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0) {
            r = -errno;
            break;
        }
        off += (size_t)w;
    }
    if (close(fd) < 0 && r == 0)
        r = -errno;
    return r;
}

/* A client that reports as node n: a certificate system:node:<name> signed by the API
 * server's CA. */
static int node_client(struct sim_fleet *f, const struct tls_pem *ca, size_t n, struct strbuf *err)
{
    static const char *const orgs[] = {"system:nodes", NULL};
    struct sim_fleet__node *ns = &f->nodes[n];
    struct strbuf cn = STRBUF_INIT, crt = STRBUF_INIT, key = STRBUF_INIT;
    struct tls_pem pem = {0};
    struct kube_config *cfg;
    int r;

    strbuf_addf(&cn, "system:node:%s", ns->def->name);
    strbuf_addf(&crt, "%s/%s.crt", f->o.cert_dir, ns->def->name);
    strbuf_addf(&key, "%s/%s.key", f->o.cert_dir, ns->def->name);
    if ((r = tls_make_cert(ca, cn.buf, orgs, NULL, false, CERT_DAYS, &pem)) < 0 ||
        (r = write_private(crt.buf, pem.cert)) < 0 || (r = write_private(key.buf, pem.key)) < 0) {
        strbuf_addf(err, "cannot make the certificate of node \"%s\": %s", ns->def->name,
                    err_str(r));
        goto out;
    }
    cfg = kube_config_new(f->o.manager_url);
    cfg->ca_file = xstrdup(f->o.manager_ca);
    cfg->cert_file = strbuf_detach(&crt, NULL);
    cfg->key_file = strbuf_detach(&key, NULL);
    cfg->qps = 0;
    if ((r = kube_client_new(cfg, &ns->client)) < 0) {
        strbuf_addf(err, "cannot create the client of node \"%s\": %s", ns->def->name, err_str(r));
        goto out;
    }
    ns->own_client = true;
out:
    tls_pem_release(&pem);
    strbuf_release(&cn);
    strbuf_release(&crt);
    strbuf_release(&key);
    return r;
}

static int load_ca(const char *dir, struct tls_pem *ret, struct strbuf *err)
{
    struct strbuf path = STRBUF_INIT, text = STRBUF_INIT;
    int r;

    strbuf_addf(&path, "%s/ca.crt", dir);
    if ((r = codec_read_file(path.buf, 1 << 20, &text)) < 0)
        goto out;
    ret->cert = strbuf_detach(&text, NULL);
    strbuf_reset(&path);
    strbuf_addf(&path, "%s/ca.key", dir);
    if ((r = codec_read_file(path.buf, 1 << 20, &text)) < 0)
        goto out;
    ret->key = strbuf_detach(&text, NULL);
out:
    if (r < 0)
        strbuf_addf(err, "cannot read the cluster CA \"%s\": %s", path.buf, err_str(r));
    strbuf_release(&path);
    strbuf_release(&text);
    return r;
}

int sim_fleet__report_clients(struct sim_fleet *f, struct strbuf *err)
{
    const struct sim_fleet_opts *o = &f->o;
    struct tls_pem ca = {0};
    int r = 0;

    if (o->manager_url && !o->node_certs) {
        const char *paths[] = {o->admin_kubeconfig, NULL};
        struct kube_config *cfg = NULL;
        if ((r = kube_config_from_kubeconfig(paths, NULL, &cfg, err)) < 0)
            return r;
        free(cfg->server);
        cfg->server = xstrdup(o->manager_url);
        free(cfg->ca_file);
        cfg->ca_file = xstrdup(o->manager_ca);
        cfg->qps = 0;
        if ((r = kube_client_new(cfg, &f->reports)) < 0) {
            strbuf_addf(err, "cannot create the report client: %s", err_str(r));
            return r;
        }
        for (size_t i = 0; i < f->nnodes; i++)
            f->nodes[i].client = f->reports;
    } else if (o->manager_url) {
        if (mkdir(o->cert_dir, 0700) < 0 && errno != EEXIST) {
            r = -errno;
            strbuf_addf(err, "cannot create \"%s\": %s", o->cert_dir, err_str(r));
            return r;
        }
        if ((r = load_ca(o->ca_dir, &ca, err)) == 0)
            for (size_t i = 0; i < f->nnodes; i++)
                if ((r = node_client(f, &ca, i, err)) < 0)
                    break;
        tls_pem_release(&ca);
    }
    return r;
}
