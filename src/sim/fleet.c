/*
 * The simulated fleet (fleet.h): its start and end, and the small helpers its files share
 * (fleet-int.h lists which file holds which part). Start is in the order the parts depend on:
 * the namespaces and the Node objects first (the informers list them, the scheduler places pods
 * on them), the report clients, the evictor, the informers (waiting for their first list: a pod
 * created before would be missed), then the threads that write.
 */
#include "sim/fleet.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "agent/qos/evict_api.h"
#include "api/rfc3339.h"
#include "base/base.h"
#include "base/hmap.h"
#include "base/strbuf.h"
#include "kube/client.h"
#include "kube/events.h"
#include "kube/informer.h"
#include "sim/fleet-int.h"

double sim_fleet__mono_s(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *sim_fleet__ns_of(enum sim_class c)
{
    return c == SIM_LS ? SIM_NS_LS : SIM_NS_BE;
}

int sim_fleet__node_of(struct sim_fleet *f, const char *name)
{
    struct hmap_entry *e = hmap_find(&f->node_index, name);

    return e ? (int)e->num : -1;
}

/* The replayed pod an informer object is, or NULL (not ours, or not of this run). */
struct sim_fleet__pod *sim_fleet__pod_of(struct sim_fleet *f, const cJSON *obj, size_t *ret_idx)
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

void sim_fleet__idxvec_push(struct sim_fleet__idxvec *q, size_t x)
{
    if (q->n == q->alloc) {
        q->alloc = q->alloc ? q->alloc * 2 : 64;
        q->v = xrealloc(q->v, q->alloc * sizeof(*q->v));
    }
    q->v[q->n++] = x;
}

void sim_fleet__queue_init(struct sim_fleet__queue *q, size_t size)
{
    *q = (struct sim_fleet__queue){.size = size};
    (void)pthread_mutex_init(&q->mu, NULL);
    (void)pthread_cond_init(&q->cv, NULL);
}

void sim_fleet__queue_push(struct sim_fleet__queue *q, const void *item)
{
    (void)pthread_mutex_lock(&q->mu);
    if (q->n == q->alloc) {
        size_t na = q->alloc ? q->alloc * 2 : 256;
        unsigned char *nv = xcalloc(na, q->size);
        for (size_t i = 0; i < q->n; i++)
            memcpy(nv + i * q->size, q->v + (q->head + i) % q->alloc * q->size, q->size);
        free(q->v);
        q->v = nv;
        q->head = 0;
        q->alloc = na;
    }
    memcpy(q->v + (q->head + q->n) % q->alloc * q->size, item, q->size);
    q->n++;
    (void)pthread_cond_signal(&q->cv);
    (void)pthread_mutex_unlock(&q->mu);
}

bool sim_fleet__queue_pop(struct sim_fleet__queue *q, void *ret)
{
    (void)pthread_mutex_lock(&q->mu);
    while (!q->n && !q->quit)
        (void)pthread_cond_wait(&q->cv, &q->mu);
    if (q->quit) {
        (void)pthread_mutex_unlock(&q->mu);
        return false;
    }
    memcpy(ret, q->v + q->head * q->size, q->size);
    q->head = (q->head + 1) % q->alloc;
    q->n--;
    (void)pthread_mutex_unlock(&q->mu);
    return true;
}

void sim_fleet__queue_quit(struct sim_fleet__queue *q)
{
    (void)pthread_mutex_lock(&q->mu);
    q->quit = true;
    (void)pthread_cond_broadcast(&q->cv);
    (void)pthread_mutex_unlock(&q->mu);
}

void sim_fleet__queue_release(struct sim_fleet__queue *q, void (*drop)(void *item))
{
    for (size_t i = 0; drop && i < q->n; i++)
        drop(q->v + (q->head + i) % q->alloc * q->size);
    free(q->v);
    (void)pthread_mutex_destroy(&q->mu);
    (void)pthread_cond_destroy(&q->cv);
}

/* A report the senders did not take. */
static void drop_job(void *item)
{
    cJSON_Delete(((struct sim_fleet__job *)item)->status);
}

cJSON *sim_fleet__parse(const char *json)
{
    cJSON *o = cJSON_Parse(json);

    CHECK(o);
    return o;
}

void sim_fleet__host_ip(size_t n, char *buf, size_t size)
{
    (void)snprintf(buf, size, "10.%zu.%zu.%zu", (n >> 16) & 255, (n >> 8) & 255, n & 255);
}

void sim_fleet__now_rfc3339(char buf[RFC3339_STR_MAX])
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_REALTIME, &ts);
    rfc3339_format(ts.tv_sec, buf);
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
        cJSON *o = sim_fleet__parse(docs[i]);
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

int sim_fleet_start(const struct sim_fleet_opts *o, struct sim_fleet **ret, struct strbuf *err)
{
    struct sim_fleet *f = xcalloc(1, sizeof(*f));
    int r;

    f->o = *o;
    if (!f->o.senders)
        f->o.senders = 4;
    (void)pthread_mutex_init(&f->lock, NULL);
    sim_fleet__queue_init(&f->jobs, sizeof(struct sim_fleet__job));
    hmap_init(&f->node_index);
    for (size_t i = 0; i < SIM_FLEET__NWORKERS; i++) {
        f->workers[i].f = f;
        sim_fleet__queue_init(&f->workers[i].q, sizeof(struct sim_fleet__op));
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
    if ((r = sim_fleet__register_nodes(f, err)) < 0 || (r = sim_fleet__report_clients(f, err)) < 0)
        goto fail;

    f->rec = kube_recorder_new(
        o->admin, &(struct kube_recorder_opts){.component = QOS_EVICT_EVENT_COMPONENT});
    if ((r = qos_evict_api_new(&(struct qos_evict_api_opts){.client = o->admin, .recorder = f->rec},
                               &f->evict)) < 0) {
        strbuf_addf(err, "cannot start the evictor: %s", err_str(r));
        goto fail;
    }
    if ((r = sim_fleet__watch_start(f, err)) < 0)
        goto fail;
    sim_fleet__wait_nodemetrics(f);
    for (size_t i = 0; i < SIM_FLEET__NWORKERS; i++) {
        struct sim_fleet__worker *w = &f->workers[i];
        if ((r = -pthread_create(&w->thread, NULL, sim_fleet__worker_main, w)) < 0) {
            strbuf_addf(err, "cannot start a worker: %s", err_str(r));
            goto fail;
        }
        w->started = true;
    }
    f->threads = xcalloc(f->o.senders, sizeof(*f->threads));
    for (size_t i = 0; i < f->o.senders; i++) {
        if ((r = -pthread_create(&f->threads[i], NULL, sim_fleet__sender_main, f)) < 0) {
            strbuf_addf(err, "cannot start a sender: %s", err_str(r));
            goto fail;
        }
        f->nthreads++;
    }
    *ret = f;
    return 0;
fail:
    sim_fleet_free(f);
    return r;
}

void sim_fleet_free(struct sim_fleet *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < SIM_FLEET__NWORKERS; i++) {
        struct sim_fleet__worker *w = &f->workers[i];
        sim_fleet__queue_quit(&w->q);
        if (w->started)
            (void)pthread_join(w->thread, NULL);
        sim_fleet__queue_release(&w->q, NULL);
    }
    sim_fleet__queue_quit(&f->jobs);
    for (size_t i = 0; i < f->nthreads; i++)
        (void)pthread_join(f->threads[i], NULL);
    free(f->threads);
    sim_fleet__queue_release(&f->jobs, drop_job);
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
    free(f);
}
