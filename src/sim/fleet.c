/*
 * The simulated fleet (fleet.h): node registration, the kubelet and agent stand-ins, and the
 * state of every replayed pod.
 *
 * Locking: the pod table (f->pods) is appended to by the caller's thread only, so that thread
 * reads it without the lock; the informer threads write a pod's binding, UID and deletion
 * under f->lock, and push work (pods to start, to confirm deleted, gone) onto queues the
 * caller drains under the same lock. HTTP calls are never made with the lock held.
 */
#include "sim/fleet.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/qos/cpuevict.h"
#include "agent/qos/cpusuppress.h"
#include "agent/qos/evict.h"
#include "agent/qos/evict_api.h"
#include "agent/qos/memoryevict.h"
#include "agent/qos/nodeslo.h"
#include "agent/qos/qos.h"
#include "api/api.h"
#include "api/quantity.h"
#include "api/rfc3339.h"
#include "api/schema.h"
#include "base/base.h"
#include "base/hmap.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "http/tls.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/events.h"
#include "kube/informer.h"

#define COMP               "sim"
#define EVENT_MIN_MS       10000 /* BECPUSuppress Events per node at most this often */
#define EVENT_STEP_PERCENT 10    /* ... and only when the amount moved by this much of the node */
#define CERT_DAYS          30

enum pod_state {
    POD_NEW,   /* created, not bound */
    POD_BOUND, /* bound to a fleet node */
    POD_GONE,  /* deleted from the API server */
};

/* One replayed pod: a trace pod, or the re-creation of an evicted one. */
struct ppod {
    size_t trace; /* index of the trace pod: the model's pod number */
    char name[160];
    enum sim_class cls;
    double delete_s;            /* LS: trace time it ends; < 0: never */
    double need_s;              /* BE: trace seconds it still has to run; < 0: forever */
    unsigned gen;               /* re-creations before this one */
    double create_wall;         /* monotonic seconds at creation */
    double bind_wall;           /* ... at binding, 0 until bound */
    double run_since;           /* under f->lock: trace time it was bound, -1 before */
    enum pod_state st;          /* under f->lock */
    int node;                   /* under f->lock; -1 until bound */
    bool start_queued;          /* under f->lock */
    bool delete_queued;         /* under f->lock */
    bool ours;                  /* under f->lock: the trace ended it */
    bool refused;               /* under f->lock: the scheduler said Unschedulable */
    const char *evicted_by;     /* under f->lock: the feature that evicted it */
    bool created;               /* the API server accepted it */
    int64_t cpu_used, mem_used; /* the model's last tick (caller's thread) */
};

struct node_state {
    const struct sim_node *def;
    struct kube_client *client; /* reports (node identity), or the admin client */
    bool own_client;
    struct qos_threshold thr; /* under f->lock (NodeSLO informer) */
    bool have_slo;
    int64_t batch_cpu, batch_mem; /* under f->lock (Node informer) */
    /* the last QoS tick (caller's thread) */
    int64_t ls_cpu, ls_mem, be_cpu, be_mem, be_demand, sys_cpu, sys_mem;
    int64_t be_limit;
    bool suppressed, ls_over;
    bool ev_active;
    int64_t ev_amount, ev_ms;
    int64_t cpu_evict_ms;
    bool mem_has_last;
    int64_t mem_evict_ms;
    int64_t next_report_ms;
    size_t *pods; /* ppod indices bound here (last QoS tick) */
    size_t npods, apods;
};

struct idxvec {
    size_t *v;
    size_t n, alloc;
};

static void idxvec_push(struct idxvec *q, size_t x)
{
    if (q->n == q->alloc) {
        q->alloc = q->alloc ? q->alloc * 2 : 64;
        q->v = xrealloc(q->v, q->alloc * sizeof(*q->v));
    }
    q->v[q->n++] = x;
}

struct job {
    size_t node;
    cJSON *status;
};

/* What the kubelet stand-in and the trace write to the API server, done by workers so that
 * one slow write does not hold up the clock; a pod's writes all go to one worker (index modulo
 * the worker count), in the order they were asked for. */
enum op_kind {
    OP_CREATE,
    OP_START,
    OP_FINISH, /* Succeeded, then deleted */
    OP_DELETE,
};

struct op {
    enum op_kind kind;
    size_t idx;
    int node;
};

struct worker {
    struct sim_fleet *f;
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct op *q; /* ring */
    size_t head, n, alloc;
    bool quit;
};

#define NWORKERS 4

static void *worker_main(void *arg);

struct sim_fleet {
    struct sim_fleet_opts o;
    pthread_mutex_t lock;
    struct node_state *nodes;
    size_t nnodes;
    struct hmap node_index; /* name -> node index + 1 */
    struct ppod **pods;
    size_t npods, apods;
    bool *waited; /* per trace pod: its first binding was counted */
    double t_now; /* under lock: the trace time of the last step */

    struct kube_informer *pod_inf, *node_inf, *slo_inf;
    struct kube_client *reports; /* the shared report client without node certificates */
    struct kube_recorder *rec;
    struct qos_evict_api *evict;

    struct idxvec q_start, q_delete, q_gone; /* under lock */

    /* the outcome */
    int32_t ls_created, be_created, be_completed, ls_evicted;
    atomic_int create_errors;
    struct sim_evictions be_ev;
    double ls_over_s;
    double *waits; /* BE: trace seconds from creation to first binding */
    size_t nwaits, awaits;
    double *lat_ls, *lat_be; /* wall seconds from creation to binding */
    size_t nlat_ls, alat_ls, nlat_be, alat_be;

    /* senders */
    pthread_mutex_t jlock;
    pthread_cond_t jcond;
    struct job *jobs; /* ring */
    size_t jhead, jn, jalloc;
    bool quit;
    pthread_t *threads;
    size_t nthreads;
    atomic_ulong sent, failed;

    struct worker workers[NWORKERS];
};

static double mono_s(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void push_double(double **v, size_t *n, size_t *alloc, double x)
{
    if (*n == *alloc) {
        *alloc = *alloc ? *alloc * 2 : 256;
        *v = xrealloc(*v, *alloc * sizeof(**v));
    }
    (*v)[(*n)++] = x;
}

static const char *ns_of(enum sim_class c)
{
    return c == SIM_LS ? SIM_NS_LS : SIM_NS_BE;
}

static int node_of(struct sim_fleet *f, const char *name)
{
    struct hmap_entry *e = hmap_find(&f->node_index, name);

    return e ? (int)e->num : -1;
}

/* The replayed pod an informer object is, or NULL (not ours, or not of this run). */
static struct ppod *ppod_of(struct sim_fleet *f, const cJSON *obj, size_t *ret_idx)
{
    const cJSON *meta = cJSON_GetObjectItem(obj, "metadata");
    const char *v = cJSON_GetStringValue(
        cJSON_GetObjectItem(cJSON_GetObjectItem(meta, "labels"), SIM_LABEL_INDEX));
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(meta, "name"));
    uint32_t i;

    if (!v || !name || parse_u32(v, &i) < 0 || i >= f->npods || strcmp(f->pods[i]->name, name))
        return NULL;
    if (ret_idx)
        *ret_idx = i;
    return f->pods[i];
}

/* ---- informer handlers (informer threads) ---- */

static void pod_seen(void *ud, const struct kube_object *o)
{
    struct sim_fleet *f = ud;
    const cJSON *obj = kube_object_json(o);
    const char *node = kube_object_node_name(o);
    bool deleting =
        cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"), "deletionTimestamp") != NULL;
    struct ppod *p;
    size_t i;
    int n;

    (void)pthread_mutex_lock(&f->lock);
    if (!(p = ppod_of(f, obj, &i)) || p->st == POD_GONE)
        goto out;
    if (p->st == POD_NEW && *node && (n = node_of(f, node)) >= 0) {
        p->st = POD_BOUND;
        p->node = n;
        p->bind_wall = mono_s();
        p->run_since = f->t_now;
        if (!p->start_queued) {
            p->start_queued = true;
            idxvec_push(&f->q_start, i);
        }
    }
    if (deleting && !p->delete_queued) {
        p->delete_queued = true;
        idxvec_push(&f->q_delete, i);
    }
    if (p->st == POD_NEW && !p->refused) {
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "status"), "conditions"))
        {
            const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(c, "type"));
            const char *status = cJSON_GetStringValue(cJSON_GetObjectItem(c, "status"));
            if (type && status && !strcmp(type, "PodScheduled") && !strcmp(status, "False"))
                p->refused = true;
        }
    }
out:
    (void)pthread_mutex_unlock(&f->lock);
}

static void pod_add(void *ud, const struct kube_object *o)
{
    pod_seen(ud, o);
}

static void pod_update(void *ud, const struct kube_object *old, const struct kube_object *o)
{
    (void)old;
    pod_seen(ud, o);
}

static void pod_delete(void *ud, const struct kube_object *o)
{
    struct sim_fleet *f = ud;
    struct ppod *p;
    size_t i;

    (void)pthread_mutex_lock(&f->lock);
    if ((p = ppod_of(f, kube_object_json(o), &i)) && p->st != POD_GONE) {
        p->st = POD_GONE;
        if (!p->ours)
            idxvec_push(&f->q_gone, i);
    }
    (void)pthread_mutex_unlock(&f->lock);
}

static int64_t alloc_value(const cJSON *node, const char *res, bool milli)
{
    const char *q = cJSON_GetStringValue(cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(node, "status"), "allocatable"), res));
    struct quantity v;
    int64_t x = 0;

    if (!q || quantity_parse(q, &v) < 0 ||
        (milli ? quantity_milli(&v, &x) : quantity_value(&v, &x)) < 0)
        return 0;
    return x;
}

static void node_seen(void *ud, const struct kube_object *o)
{
    struct sim_fleet *f = ud;
    const cJSON *obj = kube_object_json(o);
    int n = node_of(f, kube_object_name(o));

    if (n < 0)
        return;
    (void)pthread_mutex_lock(&f->lock);
    /* batch-cpu counts milli-cores as its integer value (reference api-types.md 7.3) */
    f->nodes[n].batch_cpu = alloc_value(obj, "kubernetes.io/batch-cpu", false);
    f->nodes[n].batch_mem = alloc_value(obj, "kubernetes.io/batch-memory", false);
    (void)pthread_mutex_unlock(&f->lock);
}

static void node_add(void *ud, const struct kube_object *o)
{
    node_seen(ud, o);
}

static void node_update(void *ud, const struct kube_object *old, const struct kube_object *o)
{
    (void)old;
    node_seen(ud, o);
}

static void slo_seen(void *ud, const struct kube_object *o)
{
    struct sim_fleet *f = ud;
    int n = node_of(f, kube_object_name(o));
    struct qos_slo slo;
    struct strbuf why = STRBUF_INIT;

    if (n < 0)
        return;
    if (qos_slo_from_nodeslo(kube_object_json(o), &slo, &why) < 0) {
        log_warn(COMP, "NodeSLO of node \"%s\" does not decode: %s, ignoring", kube_object_name(o),
                 why.buf);
        strbuf_release(&why);
        return;
    }
    strbuf_release(&why);
    (void)pthread_mutex_lock(&f->lock);
    f->nodes[n].thr = slo.threshold;
    f->nodes[n].have_slo = true;
    (void)pthread_mutex_unlock(&f->lock);
}

static void slo_add(void *ud, const struct kube_object *o)
{
    slo_seen(ud, o);
}

static void slo_update(void *ud, const struct kube_object *old, const struct kube_object *o)
{
    (void)old;
    slo_seen(ud, o);
}

/* ---- senders ---- */

static void *sender_main(void *arg)
{
    struct sim_fleet *f = arg;
    const struct api_kind *k = api_kind_find("slo.koordinator.sh/v1alpha1", "NodeMetric");

    CHECK(k);
    for (;;) {
        struct job j;
        struct kube_status st = {0};
        cJSON *obj, *meta;
        int r;

        (void)pthread_mutex_lock(&f->jlock);
        while (!f->jn && !f->quit)
            (void)pthread_cond_wait(&f->jcond, &f->jlock);
        if (f->quit) {
            (void)pthread_mutex_unlock(&f->jlock);
            return NULL;
        }
        j = f->jobs[f->jhead];
        f->jhead = (f->jhead + 1) % f->jalloc;
        f->jn--;
        (void)pthread_mutex_unlock(&f->jlock);

        CHECK(api_canonicalize(k->status, j.status) == 0);
        obj = cJSON_CreateObject();
        CHECK(obj);
        CHECK(cJSON_AddStringToObject(obj, "apiVersion", "metrics.koordinator.sh/v1alpha1"));
        CHECK(cJSON_AddStringToObject(obj, "kind", "NodeMetric"));
        CHECK(meta = cJSON_AddObjectToObject(obj, "metadata"));
        CHECK(cJSON_AddStringToObject(meta, "name", f->nodes[j.node].def->name));
        CHECK(cJSON_AddItemToObject(obj, "status", j.status));
        r = kube_update(f->nodes[j.node].client, &kube_res_nodemetrics, NULL, obj, "status", NULL,
                        &st);
        cJSON_Delete(obj);
        if (r < 0) {
            atomic_fetch_add(&f->failed, 1);
            log_debug(COMP, "report of node \"%s\" failed: %s", f->nodes[j.node].def->name,
                      st.message[0] ? st.message : err_str(r));
        } else {
            atomic_fetch_add(&f->sent, 1);
        }
    }
}

static void job_push(struct sim_fleet *f, size_t node, cJSON *status)
{
    (void)pthread_mutex_lock(&f->jlock);
    if (f->jn == f->jalloc) {
        size_t na = f->jalloc ? f->jalloc * 2 : 256;
        struct job *nj = xcalloc(na, sizeof(*nj));
        for (size_t i = 0; i < f->jn; i++)
            nj[i] = f->jobs[(f->jhead + i) % f->jalloc];
        free(f->jobs);
        f->jobs = nj;
        f->jhead = 0;
        f->jalloc = na;
    }
    f->jobs[(f->jhead + f->jn) % f->jalloc] = (struct job){.node = node, .status = status};
    f->jn++;
    (void)pthread_cond_signal(&f->jcond);
    (void)pthread_mutex_unlock(&f->jlock);
}

/* ---- start ---- */

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
    struct node_state *ns = &f->nodes[n];
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

static cJSON *parse(const char *json)
{
    cJSON *o = cJSON_Parse(json);

    CHECK(o);
    return o;
}

static int create_namespaces(struct sim_fleet *f, struct strbuf *err)
{
    static const struct kube_resource res_ns = {"", "v1", "namespaces", "Namespace", false};
    const char *docs[2] = {
        "{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"" SIM_NS_LS
        "\"}}",
        f->o.colocation ? "{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": "
                          "{\"name\": \"" SIM_NS_BE "\", \"labels\": {\"" SIM_LABEL_COLOC
                          "\": \"true\"}}}"
                        : "{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": "
                          "{\"name\": \"" SIM_NS_BE "\"}}"};

    for (size_t i = 0; i < 2; i++) {
        struct kube_status st = {0};
        cJSON *o = parse(docs[i]);
        int r = kube_create(f->o.admin, &res_ns, NULL, o, NULL, &st);
        cJSON_Delete(o);
        if (r < 0 && r != -EEXIST) {
            strbuf_addf(err, "creating the namespaces failed: %s",
                        st.message[0] ? st.message : err_str(r));
            return r;
        }
    }
    return 0;
}

static void host_ip(size_t n, char *buf, size_t size)
{
    (void)snprintf(buf, size, "10.%zu.%zu.%zu", (n >> 16) & 255, (n >> 8) & 255, n & 255);
}

static int register_node(struct sim_fleet *f, size_t n, const char *now, struct strbuf *err)
{
    const struct sim_node *d = f->nodes[n].def;
    struct strbuf sb = STRBUF_INIT;
    struct kube_status st = {0};
    char ip[32];
    cJSON *o;
    int r;

    host_ip(n, ip, sizeof(ip));
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
    o = parse(sb.buf);
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

int sim_fleet_start(const struct sim_fleet_opts *o, struct sim_fleet **ret, struct strbuf *err)
{
    struct sim_fleet *f = xcalloc(1, sizeof(*f));
    struct tls_pem ca = {0};
    char now[RFC3339_STR_MAX];
    struct timespec ts;
    int r;

    f->o = *o;
    if (!f->o.senders)
        f->o.senders = 4;
    (void)pthread_mutex_init(&f->lock, NULL);
    (void)pthread_mutex_init(&f->jlock, NULL);
    (void)pthread_cond_init(&f->jcond, NULL);
    hmap_init(&f->node_index);
    for (size_t i = 0; i < NWORKERS; i++) {
        f->workers[i].f = f;
        (void)pthread_mutex_init(&f->workers[i].mu, NULL);
        (void)pthread_cond_init(&f->workers[i].cv, NULL);
    }
    f->nnodes = o->trace->nnodes;
    f->nodes = xcalloc(f->nnodes, sizeof(*f->nodes));
    f->waited = xcalloc(o->trace->npods ? o->trace->npods : 1, sizeof(*f->waited));
    for (size_t i = 0; i < f->nnodes; i++) {
        f->nodes[i].def = &o->trace->nodes[i];
        f->nodes[i].client = o->admin;
        hmap_upsert(&f->node_index, o->trace->nodes[i].name)->num = (double)i;
    }
    if (o->manager_url && o->node_certs) {
        struct rlimit rl;
        /* a client per node: its connection and libcurl's wake-up pair */
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
            (rlim_t)f->nnodes * 3 + 1024 > rl.rlim_cur) {
            r = -EMFILE;
            strbuf_addf(err,
                        "%zu nodes reporting with certificates of their own need about %zu open "
                        "files, the limit is %llu: raise it (ulimit -n) or pass --no-node-certs",
                        f->nnodes, f->nnodes * 3 + 1024, (unsigned long long)rl.rlim_cur);
            goto fail;
        }
    }
    if ((r = create_namespaces(f, err)) < 0)
        goto fail;
    (void)clock_gettime(CLOCK_REALTIME, &ts);
    rfc3339_format(ts.tv_sec, now);
    for (size_t i = 0; i < f->nnodes; i++)
        if ((r = register_node(f, i, now, err)) < 0)
            goto fail;
    if (o->manager_url && !o->node_certs) {
        const char *paths[] = {o->admin_kubeconfig, NULL};
        struct kube_config *cfg = NULL;
        if ((r = kube_config_from_kubeconfig(paths, NULL, &cfg, err)) < 0)
            goto fail;
        free(cfg->server);
        cfg->server = xstrdup(o->manager_url);
        free(cfg->ca_file);
        cfg->ca_file = xstrdup(o->manager_ca);
        cfg->qps = 0;
        if ((r = kube_client_new(cfg, &f->reports)) < 0) {
            strbuf_addf(err, "cannot create the report client: %s", err_str(r));
            goto fail;
        }
        for (size_t i = 0; i < f->nnodes; i++)
            f->nodes[i].client = f->reports;
    } else if (o->manager_url) {
        if (mkdir(o->cert_dir, 0700) < 0 && errno != EEXIST) {
            r = -errno;
            strbuf_addf(err, "cannot create \"%s\": %s", o->cert_dir, err_str(r));
            goto fail;
        }
        if ((r = load_ca(o->ca_dir, &ca, err)) < 0)
            goto fail;
        for (size_t i = 0; i < f->nnodes; i++)
            if ((r = node_client(f, &ca, i, err)) < 0)
                goto fail;
    }

    f->rec = kube_recorder_new(
        o->admin, &(struct kube_recorder_opts){.component = QOS_EVICT_EVENT_COMPONENT});
    if ((r = qos_evict_api_new(&(struct qos_evict_api_opts){.client = o->admin, .recorder = f->rec},
                               &f->evict)) < 0) {
        strbuf_addf(err, "cannot start the evictor: %s", err_str(r));
        goto fail;
    }
    f->pod_inf =
        kube_informer_new(o->admin, &(struct kube_informer_opts){.resource = &kube_res_pods,
                                                                 .label_selector = SIM_LABEL_INDEX,
                                                                 .index_node_name = true});
    f->node_inf = kube_informer_new(
        o->admin, &(struct kube_informer_opts){.resource = &kube_res_nodes,
                                               .label_selector = "sim.koordinator.sh/fleet"});
    f->slo_inf =
        kube_informer_new(o->admin, &(struct kube_informer_opts){.resource = &kube_res_nodeslos});
    CHECK(f->pod_inf && f->node_inf && f->slo_inf);
    CHECK(kube_informer_add_handlers(f->pod_inf, &(struct kube_handlers){.on_add = pod_add,
                                                                         .on_update = pod_update,
                                                                         .on_delete = pod_delete,
                                                                         .userdata = f}) == 0);
    CHECK(kube_informer_add_handlers(f->node_inf, &(struct kube_handlers){.on_add = node_add,
                                                                          .on_update = node_update,
                                                                          .userdata = f}) == 0);
    CHECK(kube_informer_add_handlers(f->slo_inf, &(struct kube_handlers){.on_add = slo_add,
                                                                         .on_update = slo_update,
                                                                         .userdata = f}) == 0);
    if ((r = kube_informer_start(f->pod_inf)) < 0 || (r = kube_informer_start(f->node_inf)) < 0 ||
        (r = kube_informer_start(f->slo_inf)) < 0) {
        strbuf_addf(err, "cannot start the informers: %s", err_str(r));
        goto fail;
    }
    if (!kube_informer_wait_synced(f->pod_inf, 30000) ||
        !kube_informer_wait_synced(f->node_inf, 30000)) {
        r = -ETIMEDOUT;
        strbuf_addf(err, "the pod and node informers did not sync in 30 s");
        goto fail;
    }
    for (size_t i = 0; i < NWORKERS; i++) {
        struct worker *w = &f->workers[i];
        if ((r = -pthread_create(&w->thread, NULL, worker_main, w)) < 0) {
            strbuf_addf(err, "cannot start a worker: %s", err_str(r));
            goto fail;
        }
        w->started = true;
    }
    f->threads = xcalloc(f->o.senders, sizeof(*f->threads));
    for (size_t i = 0; i < f->o.senders; i++) {
        if ((r = -pthread_create(&f->threads[i], NULL, sender_main, f)) < 0) {
            strbuf_addf(err, "cannot start a sender: %s", err_str(r));
            goto fail;
        }
        f->nthreads++;
    }
    tls_pem_release(&ca);
    *ret = f;
    return 0;
fail:
    tls_pem_release(&ca);
    sim_fleet_free(f);
    return r;
}

void sim_fleet_free(struct sim_fleet *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < NWORKERS; i++) {
        struct worker *w = &f->workers[i];
        (void)pthread_mutex_lock(&w->mu);
        w->quit = true;
        (void)pthread_cond_broadcast(&w->cv);
        (void)pthread_mutex_unlock(&w->mu);
        if (w->started)
            (void)pthread_join(w->thread, NULL);
        free(w->q);
        (void)pthread_mutex_destroy(&w->mu);
        (void)pthread_cond_destroy(&w->cv);
    }
    (void)pthread_mutex_lock(&f->jlock);
    f->quit = true;
    (void)pthread_cond_broadcast(&f->jcond);
    (void)pthread_mutex_unlock(&f->jlock);
    for (size_t i = 0; i < f->nthreads; i++)
        (void)pthread_join(f->threads[i], NULL);
    free(f->threads);
    for (size_t i = 0; i < f->jn; i++)
        cJSON_Delete(f->jobs[(f->jhead + i) % f->jalloc].status);
    free(f->jobs);
    kube_informer_free(f->pod_inf);
    kube_informer_free(f->node_inf);
    kube_informer_free(f->slo_inf);
    qos_evict_api_free(f->evict);
    kube_recorder_free(f->rec);
    for (size_t i = 0; i < f->nnodes; i++) {
        if (f->nodes[i].own_client)
            kube_client_free(f->nodes[i].client);
        free(f->nodes[i].pods);
    }
    free(f->nodes);
    kube_client_free(f->reports);
    hmap_release(&f->node_index);
    for (size_t i = 0; i < f->npods; i++)
        free(f->pods[i]);
    free(f->pods);
    free(f->waited);
    free(f->q_start.v);
    free(f->q_delete.v);
    free(f->q_gone.v);
    free(f->waits);
    free(f->lat_ls);
    free(f->lat_be);
    (void)pthread_mutex_destroy(&f->lock);
    (void)pthread_mutex_destroy(&f->jlock);
    (void)pthread_cond_destroy(&f->jcond);
    free(f);
}

/* ---- API writes ---- */

static void post_op(struct sim_fleet *f, enum op_kind kind, size_t idx, int node)
{
    struct worker *w = &f->workers[idx % NWORKERS];

    (void)pthread_mutex_lock(&w->mu);
    if (w->n == w->alloc) {
        size_t na = w->alloc ? w->alloc * 2 : 256;
        struct op *nq = xcalloc(na, sizeof(*nq));
        for (size_t i = 0; i < w->n; i++)
            nq[i] = w->q[(w->head + i) % w->alloc];
        free(w->q);
        w->q = nq;
        w->head = 0;
        w->alloc = na;
    }
    w->q[(w->head + w->n) % w->alloc] = (struct op){.kind = kind, .idx = idx, .node = node};
    w->n++;
    (void)pthread_cond_signal(&w->cv);
    (void)pthread_mutex_unlock(&w->mu);
}

static int post_pod(struct sim_fleet *f, size_t idx);
static void start_pod(struct sim_fleet *f, const struct ppod *p, int node, size_t idx);
static void finish_pod(struct sim_fleet *f, const struct ppod *p);
static int delete_now(struct sim_fleet *f, const struct ppod *p);

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct sim_fleet *f = w->f;

    for (;;) {
        struct op op;
        struct ppod *p;

        (void)pthread_mutex_lock(&w->mu);
        while (!w->n && !w->quit)
            (void)pthread_cond_wait(&w->cv, &w->mu);
        if (w->quit) {
            (void)pthread_mutex_unlock(&w->mu);
            return NULL;
        }
        op = w->q[w->head];
        w->head = (w->head + 1) % w->alloc;
        w->n--;
        (void)pthread_mutex_unlock(&w->mu);

        (void)pthread_mutex_lock(&f->lock);
        p = f->pods[op.idx];
        (void)pthread_mutex_unlock(&f->lock);
        switch (op.kind) {
        case OP_CREATE:
            if (post_pod(f, op.idx) < 0) {
                atomic_fetch_add(&f->create_errors, 1);
                (void)pthread_mutex_lock(&f->lock);
                p->st = POD_GONE; /* never was: nothing to end or count */
                p->ours = true;
                (void)pthread_mutex_unlock(&f->lock);
            }
            break;
        case OP_START:
            start_pod(f, p, op.node, op.idx);
            break;
        case OP_FINISH:
            finish_pod(f, p);
            break;
        case OP_DELETE:
            (void)delete_now(f, p);
            break;
        }
    }
}

/* ---- pods ---- */

static int post_pod(struct sim_fleet *f, size_t idx)
{
    const struct ppod *p = f->pods[idx];
    const struct sim_pod *tp = &f->o.trace->pods[p->trace];
    struct strbuf sb = STRBUF_INIT, res = STRBUF_INIT;
    struct kube_status st = {0};
    cJSON *o;
    int r;

    strbuf_addf(&res, "{\"cpu\": \"%lldm\", \"memory\": \"%lld\"}", (long long)tp->cpu_milli,
                (long long)tp->memory);
    if (p->cls == SIM_LS)
        strbuf_addf(&sb,
                    "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": "
                    "\"%s\", \"namespace\": \"" SIM_NS_LS "\", \"labels\": {\"" SIM_LABEL_INDEX
                    "\": \"%zu\", \"koordinator.sh/qosClass\": \"LS\"}}, \"spec\": "
                    "{\"priorityClassName\": \"koord-prod\", \"terminationGracePeriodSeconds\": "
                    "30, \"containers\": [{\"name\": \"main\", \"image\": "
                    "\"registry.k8s.io/pause:3.9\", \"resources\": {\"requests\": %s, "
                    "\"limits\": %s}}]}}",
                    p->name, idx, res.buf, res.buf);
    else
        strbuf_addf(&sb,
                    "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": "
                    "\"%s\", \"namespace\": \"" SIM_NS_BE "\", \"labels\": {\"" SIM_LABEL_INDEX
                    "\": \"%zu\", \"" SIM_LABEL_COLOC "\": \"true\"}}, \"spec\": "
                    "{\"containers\": [{\"name\": \"main\", \"image\": "
                    "\"registry.k8s.io/pause:3.9\", \"resources\": {\"requests\": %s}}]}}",
                    p->name, idx, res.buf);
    o = parse(sb.buf);
    r = kube_create(f->o.admin, &kube_res_pods, ns_of(p->cls), o, NULL, &st);
    if (r < 0)
        log_warn(COMP, "creating pod %s/%s failed: %s, ignoring", ns_of(p->cls), p->name,
                 st.message[0] ? st.message : err_str(r));
    cJSON_Delete(o);
    strbuf_release(&sb);
    strbuf_release(&res);
    return r;
}

static size_t add_ppod(struct sim_fleet *f, size_t trace, const char *name, double delete_s,
                       double need_s)
{
    struct ppod *p = xcalloc(1, sizeof(*p));
    size_t idx;

    p->trace = trace;
    (void)snprintf(p->name, sizeof(p->name), "%s", name);
    p->cls = f->o.trace->pods[trace].cls;
    p->delete_s = delete_s;
    p->need_s = need_s;
    p->run_since = -1;
    p->node = -1;
    p->create_wall = mono_s();
    (void)pthread_mutex_lock(&f->lock);
    if (f->npods == f->apods) {
        f->apods = f->apods ? f->apods * 2 : 1024;
        f->pods = xrealloc(f->pods, f->apods * sizeof(struct ppod *));
    }
    idx = f->npods++;
    f->pods[idx] = p;
    (void)pthread_mutex_unlock(&f->lock);
    return idx;
}

int sim_fleet_create_pod(struct sim_fleet *f, size_t i, double t)
{
    const struct sim_pod *tp = &f->o.trace->pods[i];
    size_t idx;

    (void)t;
    /* LS pods end at their deletion time; BE pods run for as long as the trace gave them,
     * counted from when they start (a batch job that waited finishes later) */
    idx = add_ppod(f, i, tp->name, tp->cls == SIM_LS ? tp->delete_s : -1,
                   tp->delete_s < 0 ? -1 : tp->delete_s - tp->create_s);
    if (tp->cls == SIM_LS)
        f->ls_created++;
    else
        f->be_created++;
    f->pods[idx]->created = true;
    post_op(f, OP_CREATE, idx, -1);
    return 0;
}

static int delete_now(struct sim_fleet *f, const struct ppod *p)
{
    struct strbuf path = STRBUF_INIT;
    struct kube_status st = {0};
    int r;

    kube_path(&kube_res_pods, ns_of(p->cls), p->name, NULL, &path);
    /* a write racing ours (the scheduler, an eviction) answers 409: try again */
    for (int i = 0; i < 5; i++) {
        r = kube_request(f->o.admin, "DELETE", path.buf, "{\"gracePeriodSeconds\": 0}", NULL, NULL,
                         &st);
        if (r != -ESTALE)
            break;
    }
    strbuf_release(&path);
    if (r == -ENOENT)
        r = 0;
    if (r < 0)
        log_warn(COMP, "deleting pod %s/%s failed: %s, ignoring", ns_of(p->cls), p->name,
                 st.message[0] ? st.message : err_str(r));
    return r;
}

static void now_rfc3339(char buf[RFC3339_STR_MAX])
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_REALTIME, &ts);
    rfc3339_format(ts.tv_sec, buf);
}

/* What kubelet writes when the pod's container started. */
static void start_pod(struct sim_fleet *f, const struct ppod *p, int node, size_t idx)
{
    struct strbuf sb = STRBUF_INIT;
    struct kube_status st = {0};
    char now[RFC3339_STR_MAX], ip[32];
    const char *qos = p->cls == SIM_LS  ? "Guaranteed"
                      : f->o.colocation ? "BestEffort"
                                        : "Burstable";
    cJSON *patch;
    int r;

    now_rfc3339(now);
    host_ip((size_t)node, ip, sizeof(ip));
    strbuf_addf(&sb,
                "{\"status\": {\"phase\": \"Running\", \"hostIP\": \"%s\", \"hostIPs\": "
                "[{\"ip\": \"%s\"}], \"podIP\": \"172.%zu.%zu.%zu\", \"startTime\": \"%s\", "
                "\"qosClass\": \"%s\", \"conditions\": [",
                ip, ip, 16 + ((idx >> 16) & 15), (idx >> 8) & 255, idx & 255, now, qos);
    for (size_t i = 0; i < 4; i++) {
        static const char *const types[] = {"PodScheduled", "Initialized", "ContainersReady",
                                            "Ready"};
        strbuf_addf(&sb,
                    "%s{\"type\": \"%s\", \"status\": \"True\", \"lastTransitionTime\": "
                    "\"%s\"}",
                    i ? ", " : "", types[i], now);
    }
    strbuf_addf(&sb,
                "], \"containerStatuses\": [{\"name\": \"main\", \"ready\": true, \"started\": "
                "true, \"restartCount\": 0, \"image\": \"registry.k8s.io/pause:3.9\", "
                "\"imageID\": \"registry.k8s.io/pause@sha256:sim\", \"containerID\": "
                "\"containerd://sim-%zu\", \"state\": {\"running\": {\"startedAt\": \"%s\"}}}]}}",
                idx, now);
    patch = parse(sb.buf);
    r = kube_patch(f->o.admin, &kube_res_pods, ns_of(p->cls), p->name, "status", KUBE_PATCH_MERGE,
                   patch, NULL, &st);
    if (r < 0 && r != -ENOENT)
        log_warn(COMP, "starting pod %s/%s failed: %s, ignoring", ns_of(p->cls), p->name,
                 st.message[0] ? st.message : err_str(r));
    cJSON_Delete(patch);
    strbuf_release(&sb);
}

/* A BE pod whose work is done: Succeeded (kubelet's last status), then deleted. */
static void finish_pod(struct sim_fleet *f, const struct ppod *p)
{
    struct kube_status st = {0};
    char now[RFC3339_STR_MAX];
    struct strbuf sb = STRBUF_INIT;
    cJSON *patch;
    int r;

    now_rfc3339(now);
    strbuf_addf(&sb,
                "{\"status\": {\"phase\": \"Succeeded\", \"conditions\": [{\"type\": \"Ready\", "
                "\"status\": \"False\", \"reason\": \"PodCompleted\", \"lastTransitionTime\": "
                "\"%s\"}], \"containerStatuses\": [{\"name\": \"main\", \"ready\": false, "
                "\"started\": false, \"restartCount\": 0, \"image\": "
                "\"registry.k8s.io/pause:3.9\", \"imageID\": "
                "\"registry.k8s.io/pause@sha256:sim\", \"state\": {\"terminated\": "
                "{\"exitCode\": 0, \"reason\": \"Completed\", \"finishedAt\": \"%s\"}}}]}}",
                now, now);
    patch = parse(sb.buf);
    r = kube_patch(f->o.admin, &kube_res_pods, ns_of(p->cls), p->name, "status", KUBE_PATCH_MERGE,
                   patch, NULL, &st);
    if (r < 0 && r != -ENOENT)
        log_warn(COMP, "finishing pod %s/%s failed: %s, ignoring", ns_of(p->cls), p->name,
                 st.message[0] ? st.message : err_str(r));
    cJSON_Delete(patch);
    strbuf_release(&sb);
    (void)delete_now(f, p);
}

static void take(struct sim_fleet *f, struct idxvec *q, struct idxvec *ret)
{
    (void)pthread_mutex_lock(&f->lock);
    *ret = *q;
    *q = (struct idxvec){0};
    (void)pthread_mutex_unlock(&f->lock);
}

/* An evicted BE pod comes back, as its Job would re-create it, with the run time it had left. */
static void recreate(struct sim_fleet *f, const struct ppod *old, double t)
{
    double left = old->need_s;
    struct strbuf name = STRBUF_INIT;
    size_t idx;

    if (old->need_s >= 0 && old->run_since >= 0)
        left = old->need_s - (t - old->run_since);
    if (old->need_s >= 0 && left <= 0)
        return;
    strbuf_addf(&name, "%s-r%u", f->o.trace->pods[old->trace].name, old->gen + 1);
    idx = add_ppod(f, old->trace, name.buf, -1, left);
    f->pods[idx]->gen = old->gen + 1;
    f->pods[idx]->created = true;
    post_op(f, OP_CREATE, idx, -1);
    strbuf_release(&name);
}

void sim_fleet_step(struct sim_fleet *f, double t)
{
    struct idxvec q;

    (void)pthread_mutex_lock(&f->lock);
    f->t_now = t;
    (void)pthread_mutex_unlock(&f->lock);

    take(f, &f->q_start, &q);
    for (size_t k = 0; k < q.n; k++) {
        struct ppod *p = f->pods[q.v[k]];
        double lat = p->bind_wall - p->create_wall;
        int node;
        (void)pthread_mutex_lock(&f->lock);
        node = p->node;
        (void)pthread_mutex_unlock(&f->lock);
        if (p->cls == SIM_LS) {
            push_double(&f->lat_ls, &f->nlat_ls, &f->alat_ls, lat);
        } else {
            push_double(&f->lat_be, &f->nlat_be, &f->alat_be, lat);
            if (!f->waited[p->trace]) {
                f->waited[p->trace] = true;
                push_double(&f->waits, &f->nwaits, &f->awaits,
                            p->run_since - f->o.trace->pods[p->trace].create_s);
            }
        }
        post_op(f, OP_START, q.v[k], node);
    }
    free(q.v);

    take(f, &f->q_delete, &q);
    for (size_t k = 0; k < q.n; k++)
        post_op(f, OP_DELETE, q.v[k], -1);
    free(q.v);

    take(f, &f->q_gone, &q);
    for (size_t k = 0; k < q.n; k++) {
        struct ppod *p = f->pods[q.v[k]];
        const char *by;
        (void)pthread_mutex_lock(&f->lock);
        by = p->evicted_by;
        (void)pthread_mutex_unlock(&f->lock);
        if (p->cls == SIM_LS)
            f->ls_evicted++;
        else if (by && !strcmp(by, QOS_FEATURE_BE_CPU_EVICT))
            f->be_ev.be_cpu++;
        else if (by && !strcmp(by, QOS_FEATURE_BE_MEMORY_EVICT))
            f->be_ev.be_memory++;
        else if (by && !strcmp(by, QOS_FEATURE_MEMORY_EVICT))
            f->be_ev.memory++;
        else
            f->be_ev.other++;
        if (p->cls == SIM_BE)
            recreate(f, p, t);
    }
    free(q.v);

    /* pods whose trace time is up */
    for (size_t i = 0; i < f->npods; i++) {
        struct ppod *p = f->pods[i];
        bool bound, end;
        if (!p->created)
            continue;
        (void)pthread_mutex_lock(&f->lock);
        bound = p->st == POD_BOUND;
        if (p->cls == SIM_LS)
            end = p->delete_s >= 0 && p->delete_s <= t;
        else
            end = bound && p->need_s >= 0 && p->run_since + p->need_s <= t;
        end = end && !p->ours && p->st != POD_GONE;
        if (end)
            p->ours = true;
        (void)pthread_mutex_unlock(&f->lock);
        if (!end)
            continue;
        if (p->cls == SIM_BE) {
            f->be_completed++;
            post_op(f, OP_FINISH, i, -1);
        } else {
            post_op(f, OP_DELETE, i, -1);
        }
    }
}

/* ---- the agent stand-ins ---- */

struct evict_ctx {
    struct sim_fleet *f;
    const size_t *ppod_of; /* qos pod index -> ppod index */
    const struct qos_pod *base;
    int64_t now_ms;
};

static bool evict_one(void *ctx, const struct qos_evict_task *task, const struct qos_pod *pod)
{
    struct evict_ctx *c = ctx;
    int r = qos_evict_api_evict(c->f->evict, task->feature, pod, c->now_ms);

    if (r < 0) {
        log_warn(COMP, "%s could not evict pod %s/%s: %s, ignoring", task->feature, pod->namespace,
                 pod->name, err_str(r));
        return false;
    }
    (void)pthread_mutex_lock(&c->f->lock);
    c->f->pods[c->ppod_of[pod - c->base]]->evicted_by = task->feature;
    (void)pthread_mutex_unlock(&c->f->lock);
    log_info(COMP, "%s evicted pod %s/%s", task->feature, pod->namespace, pod->name);
    return true;
}

static void suppress_event(struct sim_fleet *f, struct node_state *ns, int64_t now_ms)
{
    const cJSON *obj;
    struct kube_object *o;
    int64_t step = ns->def->cpu_milli * EVENT_STEP_PERCENT / 100;
    bool moved = !ns->ev_active || llabs(ns->be_limit - ns->ev_amount) > step;

    if (!ns->suppressed) {
        ns->ev_active = false;
        return;
    }
    if (!moved || (ns->ev_ms && now_ms - ns->ev_ms < EVENT_MIN_MS))
        return;
    if (!(o = kube_informer_get(f->node_inf, ns->def->name)))
        return;
    obj = kube_object_json(o);
    if (kube_recorder_event(f->rec, obj, KUBE_EVENT_NORMAL, SIM_EVENT_REASON,
                            "suppressed BE pods to %lldm CPU (demand %lldm)",
                            (long long)ns->be_limit, (long long)ns->be_demand) < 0)
        log_debug(COMP, "recording the suppression of node \"%s\" failed", ns->def->name);
    kube_object_unref(o);
    ns->ev_active = true;
    ns->ev_amount = ns->be_limit;
    ns->ev_ms = now_ms;
}

/* The QoS tick of one node: usage from the model, suppression, evictions. */
static void node_qos(struct sim_fleet *f, size_t n, double t, double dt, int64_t now_ms)
{
    const struct sim_model *m = f->o.model;
    struct node_state *ns = &f->nodes[n];
    struct kube_object **objs = NULL, *nobj;
    size_t nobjs = kube_informer_list_by_node(f->pod_inf, ns->def->name, &objs);
    struct qos_pod *qp = xcalloc(nobjs ? nobjs : 1, sizeof(*qp));
    size_t *pp = xcalloc(nobjs ? nobjs : 1, sizeof(*pp));
    size_t nq = 0;
    struct qos_node qn = {0};
    struct qos_threshold thr;
    bool have_slo, batch;
    int64_t cap = ns->def->cpu_milli, free_cpu, be_req_batch = 0;
    double be_used_frac;

    (void)pthread_mutex_lock(&f->lock);
    thr = ns->thr;
    have_slo = ns->have_slo;
    (void)pthread_mutex_unlock(&f->lock);
    if ((nobj = kube_informer_get(f->node_inf, ns->def->name))) {
        (void)qos_node_from_json(kube_object_json(nobj), &qn);
        kube_object_unref(nobj);
    }
    ns->sys_cpu = (int64_t)(m->sys_cpu * (double)cap);
    ns->sys_mem = (int64_t)(m->sys_memory * (double)ns->def->memory);
    ns->ls_cpu = ns->ls_mem = ns->be_demand = ns->be_mem = 0;
    batch = false;
    for (size_t i = 0; i < nobjs; i++) {
        size_t idx;
        struct ppod *p = ppod_of(f, kube_object_json(objs[i]), &idx);
        const struct sim_pod *tp;
        if (!p || qos_pod_from_json(kube_object_json(objs[i]), &qp[nq]) < 0)
            continue;
        if (!qp[nq].active) {
            qos_pod_release(&qp[nq]);
            continue;
        }
        tp = &f->o.trace->pods[p->trace];
        if (p->cls == SIM_LS) {
            p->cpu_used = (int64_t)(sim_model_ls_cpu(m, p->trace, t) * (double)tp->cpu_milli);
            p->mem_used = (int64_t)(m->ls_memory * (double)tp->memory);
            ns->ls_cpu += p->cpu_used;
            ns->ls_mem += p->mem_used;
        } else {
            p->cpu_used = (int64_t)(m->be_cpu * (double)tp->cpu_milli); /* demand, for now */
            p->mem_used = (int64_t)(m->be_memory * (double)tp->memory);
            ns->be_demand += p->cpu_used;
            ns->be_mem += p->mem_used;
            be_req_batch += qp[nq].requests.v[QOS_RES_BATCH_CPU];
            if (qp[nq].qos_label == API_QOS_BE)
                batch = true;
        }
        qp[nq].has_cpu_usage = true;
        qp[nq].cpu_usage = (double)p->cpu_used / 1000.0;
        qp[nq].has_memory_usage = true;
        qp[nq].memory_usage = (double)p->mem_used;
        pp[nq++] = idx;
    }
    free_cpu = cap - ns->sys_cpu - ns->ls_cpu;
    if (free_cpu < 0)
        free_cpu = 0;
    ns->be_limit = free_cpu;
    if (batch && have_slo && thr.enable) {
        double node_used = (double)(ns->sys_cpu + ns->ls_cpu + ns->be_demand) / 1000.0;
        struct qos_suppress_input in = {
            .cfg = &thr, .node = &qn, .node_cpu_usage = node_used, .pods = qp, .npods = nq};
        int64_t s = qos_cpusuppress_milli(&in);
        /* policy cpuset: whole CPUs, at least QOS_SUPPRESS_MIN_CPUS */
        int64_t cpus = s <= 0 ? 0 : (s + 999) / 1000;
        if (cpus < QOS_SUPPRESS_MIN_CPUS)
            cpus = QOS_SUPPRESS_MIN_CPUS;
        if (cpus * 1000 < ns->be_limit)
            ns->be_limit = cpus * 1000;
    }
    ns->be_cpu = ns->be_demand < ns->be_limit ? ns->be_demand : ns->be_limit;
    ns->suppressed = batch && ns->be_demand > ns->be_limit;
    be_used_frac = ns->be_demand ? (double)ns->be_cpu / (double)ns->be_demand : 0;
    for (size_t i = 0; i < nq; i++) {
        struct ppod *p = f->pods[pp[i]];
        if (p->cls != SIM_BE)
            continue;
        p->cpu_used = (int64_t)((double)p->cpu_used * be_used_frac);
        qp[i].cpu_usage = (double)p->cpu_used / 1000.0;
    }
    ns->ls_over = have_slo && thr.cpu_suppress_threshold_percent.set &&
                  ns->sys_cpu + ns->ls_cpu > cap * thr.cpu_suppress_threshold_percent.value / 100;
    if (ns->ls_over)
        f->ls_over_s += dt;
    suppress_event(f, ns, now_ms);

    /* evictions: the agent's plans on the modelled usage */
    if (batch && have_slo && thr.enable) {
        struct evict_ctx ctx = {.f = f, .ppod_of = pp, .base = qp, .now_ms = now_ms};
        struct qos_evict_result res;
        if (!qos_memevict_cooling(ns->mem_has_last, ns->mem_evict_ms, now_ms)) {
            struct qos_memevict_plan plan = {0};
            struct qos_memevict_input in = {.cfg = &thr,
                                            .node = &qn,
                                            .pods = qp,
                                            .npods = nq,
                                            .node_used =
                                                (double)(ns->sys_mem + ns->ls_mem + ns->be_mem),
                                            .has_node_used = true,
                                            .be_memory_evict = true,
                                            .memory_evict = true};
            if (qos_memevict_plan(&in, &plan) == 0 && plan.ntasks &&
                qos_evict_run(plan.tasks, plan.ntasks, qos_evict_api_recent(f->evict), now_ms,
                              evict_one, &ctx, &res) == 0 &&
                res.nevicted) {
                ns->mem_has_last = true;
                ns->mem_evict_ms = now_ms;
            }
            qos_memevict_plan_release(&plan);
        }
        if (!qos_cpuevict_cooling(ns->cpu_evict_ms, now_ms)) {
            struct qos_cpuevict_plan plan = {0};
            int64_t window = qos_cpuevict_window_seconds(1, &thr);
            struct qos_be_cpu cur = {.usage = (double)ns->be_cpu,
                                     .request = (double)be_req_batch,
                                     .real_limit = (double)ns->be_limit};
            struct qos_be_cpu_input be = {.avg = cur,
                                          .count = window,
                                          .current = cur,
                                          .window_s = window,
                                          .collect_interval_s = 1};
            struct qos_cpuevict_input in = {
                .cfg = &thr,
                .node = &qn,
                .pods = qp,
                .npods = nq,
                .be = &be,
                .avg_node_cores = (double)(ns->sys_cpu + ns->ls_cpu + ns->be_cpu) / 1000.0,
                .has_node_usage = true,
                .be_cpu_evict = true};
            if (qos_cpuevict_plan(&in, &plan) == 0 && plan.ntasks &&
                qos_evict_run(plan.tasks, plan.ntasks, qos_evict_api_recent(f->evict), now_ms,
                              evict_one, &ctx, &res) == 0 &&
                res.nevicted)
                ns->cpu_evict_ms = now_ms;
            qos_cpuevict_plan_release(&plan);
        }
    }

    ns->npods = 0;
    for (size_t i = 0; i < nq; i++) {
        if (ns->npods == ns->apods) {
            ns->apods = ns->apods ? ns->apods * 2 : 16;
            ns->pods = xrealloc(ns->pods, ns->apods * sizeof(*ns->pods));
        }
        ns->pods[ns->npods++] = pp[i];
        qos_pod_release(&qp[i]);
    }
    free(qp);
    free(pp);
    kube_objects_free(objs, nobjs);
}

void sim_fleet_qos(struct sim_fleet *f, double t, double dt, int64_t now_ms)
{
    for (size_t n = 0; n < f->nnodes; n++) {
        /* the agent's start, which the CPU evictor's first cool-down counts from */
        if (!f->nodes[n].cpu_evict_ms)
            f->nodes[n].cpu_evict_ms = now_ms;
        node_qos(f, n, t, dt, now_ms);
    }
}

/* ---- reports ---- */

static cJSON *usage_obj(int64_t cpu, int64_t mem)
{
    cJSON *u = cJSON_CreateObject(), *r;
    char buf[64];

    CHECK(u);
    CHECK(r = cJSON_AddObjectToObject(u, "resources"));
    (void)snprintf(buf, sizeof(buf), "%lldm", (long long)cpu);
    CHECK(cJSON_AddStringToObject(r, "cpu", buf));
    (void)snprintf(buf, sizeof(buf), "%lld", (long long)mem);
    CHECK(cJSON_AddStringToObject(r, "memory", buf));
    return u;
}

static cJSON *build_status(struct sim_fleet *f, const struct node_state *ns)
{
    cJSON *st = cJSON_CreateObject(), *nm, *pods;
    char now[RFC3339_STR_MAX];
    int64_t cpu = ns->sys_cpu + ns->ls_cpu + ns->be_cpu;
    int64_t mem = ns->sys_mem + ns->ls_mem + ns->be_mem;

    CHECK(st);
    now_rfc3339(now);
    if (mem > ns->def->memory)
        mem = ns->def->memory;
    CHECK(cJSON_AddStringToObject(st, "updateTime", now));
    CHECK(nm = cJSON_AddObjectToObject(st, "nodeMetric"));
    CHECK(cJSON_AddItemToObject(nm, "nodeUsage", usage_obj(cpu, mem)));
    CHECK(cJSON_AddItemToObject(nm, "systemUsage", usage_obj(ns->sys_cpu, ns->sys_mem)));
    CHECK(pods = cJSON_AddArrayToObject(st, "podsMetric"));
    for (size_t i = 0; i < ns->npods; i++) {
        const struct ppod *p = f->pods[ns->pods[i]];
        cJSON *e = cJSON_CreateObject();
        CHECK(e);
        CHECK(cJSON_AddStringToObject(e, "namespace", ns_of(p->cls)));
        CHECK(cJSON_AddStringToObject(e, "name", p->name));
        if (p->cls == SIM_LS) {
            CHECK(cJSON_AddStringToObject(e, "priority", "koord-prod"));
            CHECK(cJSON_AddStringToObject(e, "qos", "LS"));
        } else if (f->o.colocation) {
            CHECK(cJSON_AddStringToObject(e, "priority", "koord-batch"));
            CHECK(cJSON_AddStringToObject(e, "qos", "BE"));
        }
        CHECK(cJSON_AddItemToObject(e, "podUsage", usage_obj(p->cpu_used, p->mem_used)));
        CHECK(cJSON_AddItemToArray(pods, e));
    }
    return st;
}

void sim_fleet_report(struct sim_fleet *f, int64_t now_ms)
{
    int64_t iv = (int64_t)f->o.report_interval_s * 1000;

    for (size_t n = 0; n < f->nnodes; n++) {
        struct node_state *ns = &f->nodes[n];
        if (!ns->next_report_ms) /* spread the first reports over one interval */
            ns->next_report_ms = now_ms + (int64_t)((double)iv * (double)n / (double)f->nnodes);
        if (ns->next_report_ms > now_ms)
            continue;
        job_push(f, n, build_status(f, ns));
        ns->next_report_ms += iv;
        if (ns->next_report_ms <= now_ms) /* fell behind: do not send a burst */
            ns->next_report_ms = now_ms + iv;
    }
}

void sim_fleet_report_all(struct sim_fleet *f, int64_t now_ms)
{
    int64_t iv = (int64_t)f->o.report_interval_s * 1000;

    for (size_t n = 0; n < f->nnodes; n++) {
        job_push(f, n, build_status(f, &f->nodes[n]));
        /* the next ones spread over the interval */
        f->nodes[n].next_report_ms =
            now_ms + iv + (int64_t)((double)iv * (double)n / (double)f->nnodes);
    }
}

void sim_fleet_report_stats(struct sim_fleet *f, uint64_t *ret_sent, uint64_t *ret_failed)
{
    *ret_sent = atomic_load(&f->sent);
    *ret_failed = atomic_load(&f->failed);
}

/* ---- outcome ---- */

void sim_fleet_sample(struct sim_fleet *f, double t, double wall_s, struct sim_sample *s)
{
    *s = (struct sim_sample){.trace_s = t, .wall_s = wall_s};
    (void)pthread_mutex_lock(&f->lock);
    for (size_t n = 0; n < f->nnodes; n++) {
        const struct node_state *ns = &f->nodes[n];
        s->cpu_capacity += ns->def->cpu_milli;
        s->mem_capacity += ns->def->memory;
        s->ls_cpu_used += ns->ls_cpu;
        s->ls_mem_used += ns->ls_mem;
        s->be_cpu_used += ns->be_cpu;
        s->be_mem_used += ns->be_mem;
        s->batch_cpu_allocatable += ns->batch_cpu;
        s->batch_mem_allocatable += ns->batch_mem;
        s->nodes_suppressed += ns->suppressed;
        s->nodes_ls_over_threshold += ns->ls_over;
    }
    for (size_t i = 0; i < f->npods; i++) {
        const struct ppod *p = f->pods[i];
        const struct sim_pod *tp = &f->o.trace->pods[p->trace];
        if (!p->created || p->st == POD_GONE || p->ours)
            continue;
        if (p->cls == SIM_LS) {
            s->ls_running += p->st == POD_BOUND;
            s->ls_pending += p->st == POD_NEW;
        } else {
            s->be_running += p->st == POD_BOUND;
            s->be_pending += p->st == POD_NEW;
            if (p->st == POD_BOUND && f->o.colocation) {
                s->batch_cpu_requested += tp->cpu_milli;
                s->batch_mem_requested += tp->memory;
            }
        }
    }
    (void)pthread_mutex_unlock(&f->lock);
    s->cpu_used = s->ls_cpu_used + s->be_cpu_used;
    s->mem_used = s->ls_mem_used + s->be_mem_used;
    s->be_completed = f->be_completed;
    s->be_evicted = f->be_ev.be_cpu + f->be_ev.be_memory + f->be_ev.memory + f->be_ev.other;
    s->ls_evicted = f->ls_evicted;
}

size_t sim_fleet_unsettled(struct sim_fleet *f)
{
    size_t n = 0;

    (void)pthread_mutex_lock(&f->lock);
    for (size_t i = 0; i < f->npods; i++)
        n += f->pods[i]->st == POD_NEW && !f->pods[i]->refused;
    (void)pthread_mutex_unlock(&f->lock);
    return n;
}

void sim_fleet_outcome(struct sim_fleet *f, struct sim_run *r)
{
    r->ls_pods = f->ls_created;
    r->be_pods = f->be_created;
    r->be_completed = f->be_completed;
    r->be_wait = sim_dist_of(f->waits, f->nwaits);
    r->ls_sched_latency = sim_dist_of(f->lat_ls, f->nlat_ls);
    r->be_sched_latency = sim_dist_of(f->lat_be, f->nlat_be);
    r->ls_evicted = f->ls_evicted;
    r->ls_suppressed = 0; /* suppression only ever applies to BE pods (cpusuppress.h) */
    r->be_evicted = f->be_ev;
    r->ls_over_threshold_s = f->ls_over_s;
}
