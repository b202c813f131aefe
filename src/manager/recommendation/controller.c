/*
 * The Recommendation controller: see controller.h. The model (histograms, estimate, status) is
 * model.c; this file is the API side: informer, queues, target resolution, feeding samples from
 * the NodeMetric store, status and checkpoint writes.
 */
#include "manager/recommendation/controller.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/labels.h"
#include "api/quantity.h"
#include "api/rfc3339.h"
#include "base/base.h"
#include "base/hmap.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "kube/workqueue.h"
#include "manager/nodemetric/nodemetric.h"

#define COMP                  "recommendation"
#define DEFAULT_INTERVAL_MS   60000
#define DEFAULT_CHECKPOINT_MS 60000
#define DEFAULT_SYNC_MS       60000
#define SYNC_SLICE_MS         50
#define CHECKPOINT_VERSION    "v3"

static const struct kube_resource res_recs = {"analysis.koordinator.sh", "v1alpha1",
                                              "recommendations", "Recommendation", true};

/* A target pod of one Recommendation: its containers and their sampling state. */
struct rec_pod {
    size_t n;
    struct rec_container *cs;
    struct rec_cstate *st;
    int64_t last_t; /* the last report time taken */
};

/* One Recommendation. */
struct rec_state {
    char *key, *ns, *name, *uid;
    struct hmap aggs; /* container name -> struct rec_agg */
    struct hmap pods; /* pod key -> struct rec_pod */
    bool loaded;      /* checkpoint read */
    int64_t last_ckpt_ms;
    unsigned long samples, samples_ckpt;
};

/* The Recommendations a pod feeds. */
struct rec_refs {
    struct rec_state **v;
    size_t n;
};

struct rec_controller {
    struct kube_client *client;
    struct rec_opts o;

    pthread_mutex_t lifecycle;
    atomic_bool cancel;
    bool running;
    struct kube_informer *inf;
    struct kube_workqueue *q, *nodeq;
    pthread_t worker, feeder;
    bool worker_started, feeder_started;

    pthread_mutex_t lock; /* recs, index and everything in them */
    struct hmap recs;     /* key -> struct rec_state */
    struct hmap index;    /* pod key -> struct rec_refs */
    atomic_uint nrecs;

    pthread_mutex_t stats_lock;
    struct rec_stats stats;
};

static double mono_s(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t wall_ms(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const cJSON *at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
    return b ? cJSON_GetObjectItemCaseSensitive(v, b) : v;
}

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
    return cJSON_GetStringValue(at(o, a, b));
}

int rec_controller_new(struct kube_client *client, const struct rec_opts *opts,
                       struct rec_controller **ret)
{
    struct rec_controller *c = xcalloc(1, sizeof(*c));
    const struct rec_params *p = &opts->params;

    c->client = client;
    c->o = *opts;
    /* All zero: not given (each member has a non-zero default). */
    if (!p->cpu_half_life && !p->mem_half_life && !p->mem_interval && p->cpu_percentile == 0 &&
        p->mem_percentile == 0 && p->margin == 0 && !p->pod_min_cpu_milli &&
        !p->pod_min_mem_bytes && !p->min_samples)
        rec_params_default(&c->o.params);
    if (c->o.interval_ms <= 0)
        c->o.interval_ms = DEFAULT_INTERVAL_MS;
    if (c->o.checkpoint_ms <= 0)
        c->o.checkpoint_ms = DEFAULT_CHECKPOINT_MS;
    if (c->o.sync_timeout_ms <= 0)
        c->o.sync_timeout_ms = DEFAULT_SYNC_MS;
    CHECK(pthread_mutex_init(&c->lifecycle, NULL) == 0);
    CHECK(pthread_mutex_init(&c->lock, NULL) == 0);
    CHECK(pthread_mutex_init(&c->stats_lock, NULL) == 0);
    hmap_init(&c->recs);
    hmap_init(&c->index);
    atomic_init(&c->cancel, false);
    atomic_init(&c->nrecs, 0);
    *ret = c;
    return 0;
}

/* ---- state ---- */

static void pod_free(struct rec_pod *p)
{
    if (!p)
        return;
    free(p->cs);
    free(p->st);
    free(p);
}

static void index_del(struct rec_controller *c, const char *pod, struct rec_state *st)
{
    struct rec_refs *r = hmap_get(&c->index, pod);

    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i] == st) {
            r->v[i] = r->v[--r->n];
            break;
        }
    if (!r->n) {
        (void)hmap_del(&c->index, pod);
        free(r->v);
        free(r);
    }
}

static void index_add(struct rec_controller *c, const char *pod, struct rec_state *st)
{
    struct hmap_entry *e = hmap_upsert(&c->index, pod);
    struct rec_refs *r = e->value;

    if (!r)
        e->value = r = xcalloc(1, sizeof(*r));
    r->v = xrealloc(r->v, (r->n + 1) * sizeof(struct rec_state *));
    r->v[r->n++] = st;
}

static struct rec_state *state_new(const char *key, const char *ns, const char *name,
                                   const char *uid)
{
    struct rec_state *st = xcalloc(1, sizeof(*st));

    st->key = xstrdup(key);
    st->ns = xstrdup(ns);
    st->name = xstrdup(name);
    st->uid = xstrdup(uid ? uid : "");
    hmap_init(&st->aggs);
    hmap_init(&st->pods);
    return st;
}

/* Frees st after taking its pods out of the index (lock held). */
static void state_free(struct rec_controller *c, struct rec_state *st)
{
    struct hmap_entry *e;
    size_t it;

    for (e = hmap_first(&st->pods, &it); e; e = hmap_next(&st->pods, e, &it)) {
        if (c)
            index_del(c, e->key, st);
        pod_free(e->value);
    }
    for (e = hmap_first(&st->aggs, &it); e; e = hmap_next(&st->aggs, e, &it)) {
        rec_agg_release(e->value);
        free(e->value);
    }
    hmap_release(&st->pods);
    hmap_release(&st->aggs);
    free(st->key);
    free(st->ns);
    free(st->name);
    free(st->uid);
    free(st);
}

static struct rec_agg *agg_get(struct rec_controller *c, struct rec_state *st, const char *name)
{
    struct hmap_entry *e = hmap_upsert(&st->aggs, name);

    if (!e->value) {
        e->value = xcalloc(1, sizeof(struct rec_agg));
        rec_agg_init(e->value, &c->o.params);
    }
    return e->value;
}

static void count(struct rec_controller *c, unsigned long *counter, unsigned long n)
{
    (void)pthread_mutex_lock(&c->stats_lock);
    *counter += n;
    (void)pthread_mutex_unlock(&c->stats_lock);
}

/* ---- checkpoints ---- */

static void checkpoint_name(const struct rec_state *st, struct strbuf *out)
{
    strbuf_reset(out);
    strbuf_addf(out, "%s" REC_CHECKPOINT_SUFFIX, st->name);
}

/* The checkpoint document of st (lock held). */
static cJSON *checkpoint_doc(const struct rec_state *st, int64_t now_s)
{
    cJSON *doc = cJSON_CreateObject(), *list;
    struct hmap_entry *e;
    char ts[RFC3339_STR_MAX];
    size_t it;

    CHECK(doc);
    (void)rfc3339_format(now_s, ts);
    CHECK(cJSON_AddStringToObject(doc, "version", CHECKPOINT_VERSION));
    CHECK(cJSON_AddStringToObject(doc, "lastUpdateTime", ts));
    CHECK(list = cJSON_AddArrayToObject(doc, "containers"));
    for (e = hmap_first(&st->aggs, &it); e; e = hmap_next(&st->aggs, e, &it))
        CHECK(cJSON_AddItemToArray(list, rec_agg_save(e->value, e->key)));
    return doc;
}

static int write_checkpoint(struct rec_controller *c, const char *ns, const char *name,
                            const char *rec_name, const char *uid, const cJSON *doc)
{
    struct strbuf text = STRBUF_INIT;
    struct kube_status ks = {0};
    cJSON *cm = NULL, *md, *data, *refs, *ref;
    int r;

    CHECK(json_print(doc, &text) == 0);
    r = kube_get(c->client, &kube_res_configmaps, ns, name, &cm, &ks);
    if (r == -ENOENT) {
        CHECK(cm = cJSON_CreateObject());
        CHECK(cJSON_AddStringToObject(cm, "apiVersion", "v1"));
        CHECK(cJSON_AddStringToObject(cm, "kind", "ConfigMap"));
        CHECK(md = cJSON_AddObjectToObject(cm, "metadata"));
        CHECK(cJSON_AddStringToObject(md, "name", name));
        CHECK(cJSON_AddStringToObject(md, "namespace", ns));
    } else if (r < 0) {
        goto out;
    }
    md = cJSON_GetObjectItemCaseSensitive(cm, "metadata");
    cJSON_DeleteItemFromObjectCaseSensitive(md, "ownerReferences");
    CHECK(refs = cJSON_AddArrayToObject(md, "ownerReferences"));
    CHECK(ref = cJSON_CreateObject());
    CHECK(cJSON_AddStringToObject(ref, "apiVersion", "analysis.koordinator.sh/v1alpha1"));
    CHECK(cJSON_AddStringToObject(ref, "kind", "Recommendation"));
    CHECK(cJSON_AddStringToObject(ref, "name", rec_name));
    CHECK(cJSON_AddStringToObject(ref, "uid", uid));
    CHECK(cJSON_AddBoolToObject(ref, "controller", true));
    CHECK(cJSON_AddItemToArray(refs, ref));
    cJSON_DeleteItemFromObjectCaseSensitive(cm, "data");
    CHECK(data = cJSON_AddObjectToObject(cm, "data"));
    CHECK(cJSON_AddStringToObject(data, REC_CHECKPOINT_KEY, text.buf));
    if (r == -ENOENT)
        r = kube_create(c->client, &kube_res_configmaps, ns, cm, NULL, &ks);
    else
        r = kube_update(c->client, &kube_res_configmaps, ns, cm, NULL, NULL, &ks);
out:
    if (r < 0)
        log_warn(COMP, "cannot write checkpoint %s/%s: %s", ns, name,
                 ks.message[0] ? ks.message : err_str(r));
    else
        count(c, &c->stats.checkpoint_writes, 1);
    cJSON_Delete(cm);
    strbuf_release(&text);
    return r;
}

/* Writes st's checkpoint when due (or force) and something was sampled since. */
static void maybe_checkpoint(struct rec_controller *c, const char *key, bool force)
{
    struct strbuf name = STRBUF_INIT;
    char *ns = NULL, *rec_name = NULL, *uid = NULL;
    cJSON *doc = NULL;
    int64_t now = wall_ms();
    struct rec_state *st;

    (void)pthread_mutex_lock(&c->lock);
    st = hmap_get(&c->recs, key);
    if (st && st->samples != st->samples_ckpt &&
        (force || now - st->last_ckpt_ms >= c->o.checkpoint_ms)) {
        doc = checkpoint_doc(st, now / 1000);
        checkpoint_name(st, &name);
        ns = xstrdup(st->ns);
        rec_name = xstrdup(st->name);
        uid = xstrdup(st->uid);
        st->last_ckpt_ms = now;
        st->samples_ckpt = st->samples;
    }
    (void)pthread_mutex_unlock(&c->lock);
    if (doc && name.len > 253)
        log_warn(COMP,
                 "%s: name too long for a checkpoint ConfigMap; history is not kept "
                 "across restarts",
                 key);
    else if (doc && write_checkpoint(c, ns, name.buf, rec_name, uid, doc) < 0) {
        (void)pthread_mutex_lock(&c->lock);
        if ((st = hmap_get(&c->recs, key)))
            st->samples_ckpt = (unsigned long)-1; /* try again next time */
        (void)pthread_mutex_unlock(&c->lock);
    }
    cJSON_Delete(doc);
    strbuf_release(&name);
    free(ns);
    free(rec_name);
    free(uid);
}

/* Adds a loaded aggregate into st's (lock held). */
static void agg_merge(struct rec_controller *c, struct rec_state *st, const char *name,
                      struct rec_agg *in)
{
    struct rec_agg *a = agg_get(c, st, name);

    (void)rec_hist_merge(&a->cpu, &in->cpu);
    (void)rec_hist_merge(&a->mem, &in->mem);
    if (in->first_sample && (!a->first_sample || in->first_sample < a->first_sample))
        a->first_sample = in->first_sample;
    if (in->last_sample > a->last_sample)
        a->last_sample = in->last_sample;
    a->samples += in->samples;
}

/* Reads the checkpoint of Recommendation key into its state. A missing one is fine; a bad one
 * is logged and ignored (the next checkpoint replaces it). */
static void load_checkpoint(struct rec_controller *c, const char *key, const char *ns,
                            const char *name, const char *uid)
{
    struct strbuf cm_name = STRBUF_INIT, why = STRBUF_INIT;
    struct kube_status ks = {0};
    cJSON *cm = NULL, *doc = NULL;
    const cJSON *ref, *e;
    const char *text, *owner = NULL;
    struct rec_state *st;
    size_t loaded = 0;
    int r;

    strbuf_addf(&cm_name, "%s" REC_CHECKPOINT_SUFFIX, name);
    r = kube_get(c->client, &kube_res_configmaps, ns, cm_name.buf, &cm, &ks);
    if (r < 0) {
        if (r != -ENOENT)
            log_warn(COMP, "%s: cannot read checkpoint: %s; starting without history", key,
                     ks.message[0] ? ks.message : err_str(r));
        goto out;
    }
    cJSON_ArrayForEach(ref, at(cJSON_GetObjectItemCaseSensitive(cm, "metadata"), "ownerReferences",
                               NULL)) if ((owner = str_at(ref, "uid", NULL))) break;
    if (!owner || strcmp(owner, uid)) {
        log_info(COMP, "%s: checkpoint %s/%s belongs to another object, ignoring", key, ns,
                 cm_name.buf);
        goto out;
    }
    text = str_at(cm, "data", REC_CHECKPOINT_KEY);
    if (!text || json_parse(text, strlen(text), NULL, &doc, NULL) < 0 ||
        !cJSON_IsArray(at(doc, "containers", NULL))) {
        log_warn(COMP, "%s: checkpoint %s/%s is not a checkpoint document, ignoring", key, ns,
                 cm_name.buf);
        goto out;
    }
    (void)pthread_mutex_lock(&c->lock);
    st = hmap_get(&c->recs, key);
    cJSON_ArrayForEach(e, at(doc, "containers", NULL))
    {
        const char *cname = str_at(e, "containerName", NULL);
        struct rec_agg tmp;
        if (!st || !cname || !*cname)
            continue;
        rec_agg_init(&tmp, &c->o.params);
        strbuf_reset(&why);
        if (rec_agg_load(&tmp, e, &why) < 0)
            log_warn(COMP, "%s: checkpoint of container \"%s\": %s, ignoring", key, cname, why.buf);
        else {
            agg_merge(c, st, cname, &tmp);
            loaded++;
        }
        rec_agg_release(&tmp);
    }
    if (st)
        st->samples_ckpt = st->samples; /* what the API server holds */
    (void)pthread_mutex_unlock(&c->lock);
    log_info(COMP, "%s: loaded the history of %zu container(s) from %s/%s", key, loaded, ns,
             cm_name.buf);
out:
    cJSON_Delete(cm);
    cJSON_Delete(doc);
    strbuf_release(&cm_name);
    strbuf_release(&why);
}

/* ---- targets ---- */

struct target {
    cJSON *list;             /* the namespace's (or selector's) pods */
    const char *unsupported; /* ConfigUnsupported reason, or NULL */
    char message[200];
    bool workload_missing;
};

/* The controller owner of an object read from the API server, or false (404 too). */
static bool owner_of(struct rec_controller *c, const char *path, struct hmap *cache,
                     const char *want_kind, const char *want_name)
{
    struct hmap_entry *e = hmap_upsert(cache, path);
    const char *kind, *name;

    if (!e->value) {
        cJSON *obj = NULL;
        struct strbuf sb = STRBUF_INIT;
        if (kube_request(c->client, "GET", path, NULL, NULL, &obj, NULL) == 0 &&
            rec_controller_of(obj, &kind, &name))
            strbuf_addf(&sb, "%s/%s", kind, name);
        cJSON_Delete(obj);
        e->value = strbuf_detach(&sb, NULL);
    }
    kind = e->value;
    return !strncmp(kind, want_kind, strlen(want_kind)) && kind[strlen(want_kind)] == '/' &&
           !strcmp(kind + strlen(want_kind) + 1, want_name);
}

/*
 * The resource of kind in group/version as the API server's discovery names it (plural, into
 * plural), and whether it has a scale subresource. False when discovery does not list the kind
 * (the caller keeps its guess of the plural).
 */
static bool discover(struct rec_controller *c, const char *group, const char *version,
                     const char *kind, char *plural, size_t psize, bool *has_scale)
{
    struct strbuf path = STRBUF_INIT, scale = STRBUF_INIT;
    cJSON *doc = NULL, *r;
    bool found = false;

    *has_scale = false;
    if (*group)
        strbuf_addf(&path, "/apis/%s/%s", group, version);
    else
        strbuf_addf(&path, "/api/%s", version);
    if (kube_request(c->client, "GET", path.buf, NULL, NULL, &doc, NULL) == 0) {
        cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(doc, "resources"))
        {
            const char *name = str_at(r, "name", NULL), *k = str_at(r, "kind", NULL);
            if (name && k && !strchr(name, '/') && !strcmp(k, kind) && strlen(name) < psize) {
                (void)snprintf(plural, psize, "%s", name);
                found = true;
            }
        }
        strbuf_addf(&scale, "%s/scale", plural);
        cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(doc, "resources"))
        {
            const char *name = str_at(r, "name", NULL);
            if (found && name && !strcmp(name, scale.buf))
                *has_scale = true;
        }
    }
    cJSON_Delete(doc);
    strbuf_release(&path);
    strbuf_release(&scale);
    return found;
}

/*
 * The label selector of a workload's scale subresource (status.selector, what VPA targets any
 * scalable kind by), or NULL when it has none or it does not parse.
 */
static struct label_selector *scale_selector(struct rec_controller *c, const char *path)
{
    struct strbuf p = STRBUF_INIT, err = STRBUF_INIT;
    struct label_selector *sel = NULL;
    cJSON *sc = NULL;
    const char *s;

    strbuf_addf(&p, "%s/scale", path);
    if (kube_request(c->client, "GET", p.buf, NULL, NULL, &sc, NULL) == 0 &&
        (s = str_at(cJSON_GetObjectItemCaseSensitive(sc, "status"), "selector", NULL)) && *s &&
        label_selector_parse(s, &sel, &err) < 0) {
        log_warn(COMP, "%s: status.selector \"%s\" does not parse: %s", p.buf, s, err.buf);
        sel = NULL;
    }
    cJSON_Delete(sc);
    strbuf_release(&p);
    strbuf_release(&err);
    return sel;
}

/* Keeps in t->list only the pods the workload controls: those its scale subresource's selector
 * selects when the kind has one (any scalable kind, as VPA targets them), else those it owns
 * directly or through a ReplicaSet of a Deployment / a Job of a CronJob. */
static void filter_workload(struct rec_controller *c, const cJSON *wl, const char *ns,
                            struct target *t)
{
    const char *kind = str_at(wl, "kind", NULL), *name = str_at(wl, "name", NULL);
    const char *av = str_at(wl, "apiVersion", NULL);
    char group[128], version[64], plural[128];
    struct strbuf path = STRBUF_INIT;
    struct hmap cache;
    cJSON *items = cJSON_GetObjectItemCaseSensitive(t->list, "items"), *p, *next;
    struct label_selector *sel = NULL;
    struct hmap_entry *e;
    size_t it;

    hmap_init(&cache);
    if (rec_workload_resource(av, kind, group, sizeof(group), version, sizeof(version), plural,
                              sizeof(plural))) {
        bool has_scale;
        (void)discover(c, group, version, kind, plural, sizeof(plural), &has_scale);
        if (*group)
            strbuf_addf(&path, "/apis/%s/%s/namespaces/%s/%s/%s", group, version, ns, plural, name);
        else
            strbuf_addf(&path, "/api/%s/namespaces/%s/%s/%s", version, ns, plural, name);
        if (kube_request(c->client, "GET", path.buf, NULL, NULL, NULL, NULL) == -ENOENT)
            t->workload_missing = true;
        else if (has_scale)
            sel = scale_selector(c, path.buf);
    }
    for (p = items ? items->child : NULL; p; p = next) {
        const char *ok, *on;
        bool keep = sel ? label_selector_matches(sel, at(p, "metadata", "labels"))
                        : rec_owned_by(p, av, kind, name);
        next = p->next;
        if (!keep && !sel && rec_controller_of(p, &ok, &on)) {
            bool via = (!strcmp(kind, "Deployment") && !strcmp(ok, "ReplicaSet")) ||
                       (!strcmp(kind, "CronJob") && !strcmp(ok, "Job"));
            if (via) {
                bool rs = !strcmp(ok, "ReplicaSet");
                strbuf_reset(&path);
                strbuf_addf(&path, "/apis/%s/namespaces/%s/%s/%s", rs ? "apps/v1" : "batch/v1", ns,
                            rs ? "replicasets" : "jobs", on);
                keep = owner_of(c, path.buf, &cache, kind, name);
            }
        }
        if (!keep)
            cJSON_Delete(cJSON_DetachItemViaPointer(items, p));
    }
    for (e = hmap_first(&cache, &it); e; e = hmap_next(&cache, e, &it))
        free(e->value);
    hmap_release(&cache);
    strbuf_release(&path);
    label_selector_free(sel);
}

/* The target's pods. 0 (t filled; t->unsupported for a spec the controller cannot use) or an
 * API error to retry. */
static int resolve(struct rec_controller *c, const cJSON *rec, const char *ns, struct target *t)
{
    const cJSON *target = at(rec, "spec", "target");
    const char *type = str_at(target, "type", NULL);
    struct label_selector *sel = NULL;
    struct strbuf sb = STRBUF_INIT, err = STRBUF_INIT;
    struct kube_status ks = {0};
    int r = 0;

    memset(t, 0, sizeof(*t));
    if (type && !strcmp(type, "podSelector")) {
        if (label_selector_from_json(at(target, "podSelector", NULL), &sel, &err) < 0) {
            t->unsupported = "InvalidPodSelector";
            (void)snprintf(t->message, sizeof(t->message), "spec.target.podSelector: %s", err.buf);
            goto out;
        }
        label_selector_format(sel, &sb);
    } else if (type && !strcmp(type, "workload")) {
        const cJSON *wl = at(target, "workload", NULL);
        if (!str_at(wl, "kind", NULL) || !str_at(wl, "name", NULL)) {
            t->unsupported = "InvalidWorkload";
            (void)snprintf(t->message, sizeof(t->message),
                           "spec.target.workload: kind and name are required");
            goto out;
        }
    } else {
        t->unsupported = "UnknownTargetType";
        (void)snprintf(t->message, sizeof(t->message),
                       "spec.target.type \"%s\": must be workload or podSelector",
                       type ? type : "");
        goto out;
    }
    r = kube_list(c->client, &kube_res_pods, ns,
                  &(struct kube_list_opts){.label_selector = sb.len ? sb.buf : NULL}, &t->list,
                  &ks);
    if (r < 0) {
        log_warn(COMP, "cannot list pods of %s: %s", ns, ks.message[0] ? ks.message : err_str(r));
        goto out;
    }
    if (!strcmp(type, "workload"))
        filter_workload(c, at(target, "workload", NULL), ns, t);
out:
    label_selector_free(sel);
    strbuf_release(&sb);
    strbuf_release(&err);
    return r;
}

/* ---- reconcile ---- */

static bool pod_terminated(const cJSON *pod)
{
    const char *phase = str_at(pod, "status", "phase");
    return phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
}

/* Replaces st's pods with the target's (lock held). */
static void update_pods(struct rec_controller *c, struct rec_state *st, const cJSON *list)
{
    struct hmap next;
    struct hmap_entry *e;
    const cJSON *p;
    size_t it;

    hmap_init(&next);
    cJSON_ArrayForEach(p, at(list, "items", NULL))
    {
        char key[512];
        struct rec_pod *old, *np;
        if (pod_terminated(p))
            continue;
        kube_object_key_of(p, key, sizeof(key));
        if (!*key || hmap_get(&next, key))
            continue;
        np = xcalloc(1, sizeof(*np));
        np->n = rec_pod_containers(p, &np->cs);
        np->st = xcalloc(np->n + 1, sizeof(*np->st));
        if ((old = hmap_del(&st->pods, key))) {
            np->last_t = old->last_t;
            for (size_t i = 0; i < np->n; i++)
                for (size_t j = 0; j < old->n; j++)
                    if (!strcmp(np->cs[i].name, old->cs[j].name))
                        np->st[i] = old->st[j];
            pod_free(old);
        } else {
            index_add(c, key, st);
        }
        (void)hmap_put(&next, key, np);
    }
    for (e = hmap_first(&st->pods, &it); e; e = hmap_next(&st->pods, e, &it)) {
        index_del(c, e->key, st);
        pod_free(e->value);
    }
    hmap_release(&st->pods);
    st->pods = next;
}

/* The first pod (by key) that has container name, for its requests and limits. */
static const struct rec_container *template_of(struct rec_state *st, const char *name)
{
    const struct rec_container *best = NULL;
    const char *best_key = NULL;
    struct hmap_entry *e;
    size_t it;

    for (e = hmap_first(&st->pods, &it); e; e = hmap_next(&st->pods, e, &it)) {
        struct rec_pod *p = e->value;
        for (size_t i = 0; i < p->n; i++)
            if (!strcmp(p->cs[i].name, name) && (!best_key || strcmp(e->key, best_key) < 0)) {
                best = &p->cs[i];
                best_key = e->key;
            }
    }
    return best;
}

enum { C_PROVIDED, C_LOW_CONFIDENCE, C_NO_OBJECTS, C_UNSUPPORTED, C_N };

/* The new status of st (lock held): results and conditions. */
static cJSON *compute(struct rec_controller *c, struct rec_state *st, const struct target *t,
                      const cJSON *old, int64_t now)
{
    const struct rec_params *p = &c->o.params;
    struct rec_condition cond[C_N] = {
        {"RecommendationProvided", "False", "NotEnoughData", ""},
        {"LowConfidence", "False", "EnoughHistory", ""},
        {"NoObjectsMatched", "False", "PodsMatched", ""},
        {"ConfigUnsupported", "True", "", ""},
    };
    struct rec_result *res = NULL;
    const char **names = NULL;
    size_t n = 0, ncond = C_UNSUPPORTED;
    struct hmap seen;
    struct hmap_entry *e;
    size_t it;
    bool enough = true;
    int64_t span = INT64_MAX;
    cJSON *status;

    hmap_init(&seen);
    for (e = hmap_first(&st->pods, &it); e; e = hmap_next(&st->pods, e, &it)) {
        struct rec_pod *pod = e->value;
        for (size_t i = 0; i < pod->n; i++)
            if (!hmap_get(&seen, pod->cs[i].name)) {
                (void)hmap_put(&seen, pod->cs[i].name, pod->cs[i].name);
                names = xrealloc(names, (n + 1) * sizeof(*names));
                names[n++] = pod->cs[i].name;
            }
    }
    if (t->unsupported) {
        cond[C_UNSUPPORTED].reason = t->unsupported;
        (void)snprintf(cond[C_UNSUPPORTED].message, sizeof(cond[0].message), "%s", t->message);
        ncond = C_N;
        cond[C_PROVIDED].reason = "ConfigUnsupported";
        (void)snprintf(cond[C_PROVIDED].message, sizeof(cond[0].message),
                       "the target cannot be resolved");
        enough = false;
    } else if (!n) {
        cond[C_NO_OBJECTS].status = "True";
        cond[C_NO_OBJECTS].reason = t->workload_missing ? "WorkloadNotFound" : "NoPodsMatched";
        (void)snprintf(cond[C_NO_OBJECTS].message, sizeof(cond[0].message), "%s",
                       t->workload_missing
                           ? "the workload (or its kind) is not found in the API server, and "
                             "no pod names it as its controller"
                           : "the target selects no running pod");
        cond[C_PROVIDED].reason = "NoPodsMatched";
        (void)snprintf(cond[C_PROVIDED].message, sizeof(cond[0].message), "no pods to sample");
        enough = false;
    }
    (void)snprintf(cond[C_NO_OBJECTS].message + strlen(cond[C_NO_OBJECTS].message),
                   sizeof(cond[0].message) - strlen(cond[C_NO_OBJECTS].message), "%s",
                   n ? "the target's pods are sampled" : "");
    for (size_t i = 0; enough && i < n; i++) {
        struct rec_agg *a = hmap_get(&st->aggs, names[i]);
        unsigned long have = a ? a->samples : 0;
        if (have < p->min_samples) {
            enough = false;
            (void)snprintf(cond[C_PROVIDED].message, sizeof(cond[0].message),
                           "container \"%s\" has %lu of the %lu usage samples needed", names[i],
                           have, p->min_samples);
        }
    }
    if (enough) {
        res = xcalloc(n, sizeof(*res));
        for (size_t i = 0; i < n; i++) {
            struct rec_agg *a = hmap_get(&st->aggs, names[i]);
            const struct rec_container *tpl = template_of(st, names[i]);
            res[i].container = names[i];
            rec_estimate(a, p, n, &res[i].req);
            if (tpl) {
                res[i].cpu_lim_m =
                    rec_proportional_limit(tpl->cpu_lim_m, tpl->cpu_req_m, res[i].req.cpu_milli);
                res[i].mem_lim =
                    rec_proportional_limit(tpl->mem_lim, tpl->mem_req, res[i].req.mem_bytes);
            }
            if (a->last_sample - a->first_sample < span)
                span = a->last_sample - a->first_sample;
        }
        cond[C_PROVIDED].status = "True";
        cond[C_PROVIDED].reason = "RecommendationComputed";
        (void)snprintf(cond[C_PROVIDED].message, sizeof(cond[0].message),
                       "from the usage of %zu container(s)", n);
        if (span < p->mem_interval) {
            cond[C_LOW_CONFIDENCE].status = "True";
            cond[C_LOW_CONFIDENCE].reason = "ShortHistory";
            (void)snprintf(cond[C_LOW_CONFIDENCE].message, sizeof(cond[0].message),
                           "less than %lld s of usage history", (long long)p->mem_interval);
        }
    } else {
        cond[C_LOW_CONFIDENCE].status = "True";
        cond[C_LOW_CONFIDENCE].reason = "NotEnoughData";
    }
    /* Without a new recommendation, the last one stays (with conditions saying why). */
    if (!res && cJSON_IsObject(at(old, "podStatus", NULL))) {
        status = rec_build_status(NULL, 0, cond, ncond, old, now);
        CHECK(cJSON_AddItemToObject(status, "podStatus",
                                    cJSON_Duplicate(at(old, "podStatus", NULL), true)));
    } else {
        status = rec_build_status(res, res ? n : 0, cond, ncond, old, now);
    }
    free(res);
    free(names);
    hmap_release(&seen);
    return status;
}

static int reconcile(struct rec_controller *c, const char *key)
{
    struct kube_object *obj = kube_informer_get(c->inf, key);
    const cJSON *rec, *old;
    const char *ns, *name, *uid;
    struct rec_state *st, *gone = NULL;
    struct target t = {0};
    struct kube_status ks = {0};
    cJSON *status = NULL, *upd = NULL;
    bool load = false;
    int r;

    if (!obj) {
        (void)pthread_mutex_lock(&c->lock);
        if ((gone = hmap_del(&c->recs, key))) {
            atomic_fetch_sub(&c->nrecs, 1);
            state_free(c, gone);
        }
        (void)pthread_mutex_unlock(&c->lock);
        if (gone) {
            /* The garbage collector of a real cluster does this too (ownerReference). */
            char ns_buf[256], cm[512];
            const char *slash = strchr(key, '/');
            (void)snprintf(ns_buf, sizeof(ns_buf), "%.*s", (int)(slash - key), key);
            (void)snprintf(cm, sizeof(cm), "%s" REC_CHECKPOINT_SUFFIX, slash + 1);
            r = kube_delete(c->client, &kube_res_configmaps, ns_buf, cm, NULL);
            if (r < 0 && r != -ENOENT)
                log_warn(COMP, "cannot delete checkpoint %s/%s: %s", ns_buf, cm, err_str(r));
        }
        return 1; /* gone: no re-sync */
    }
    rec = kube_object_json(obj);
    ns = kube_object_namespace(obj);
    name = kube_object_name(obj);
    uid = str_at(rec, "metadata", "uid");
    (void)pthread_mutex_lock(&c->lock);
    st = hmap_get(&c->recs, key);
    if (st && strcmp(st->uid, uid ? uid : "")) { /* deleted and created again */
        (void)hmap_del(&c->recs, key);
        state_free(c, st);
        st = NULL;
        atomic_fetch_sub(&c->nrecs, 1);
    }
    if (!st) {
        st = state_new(key, ns, name, uid);
        (void)hmap_put(&c->recs, key, st);
        atomic_fetch_add(&c->nrecs, 1);
    }
    load = !st->loaded;
    st->loaded = true;
    (void)pthread_mutex_unlock(&c->lock);
    if (load)
        load_checkpoint(c, key, ns, name, uid ? uid : "");
    if ((r = resolve(c, rec, ns, &t)) < 0)
        goto out;
    old = at(rec, "status", NULL);
    (void)pthread_mutex_lock(&c->lock);
    if ((st = hmap_get(&c->recs, key))) {
        update_pods(c, st, t.list);
        status = compute(c, st, &t, old, wall_ms() / 1000);
    }
    (void)pthread_mutex_unlock(&c->lock);
    if (status && rec_status_changed(old, status)) {
        CHECK(upd = cJSON_Duplicate(rec, true));
        cJSON_DeleteItemFromObjectCaseSensitive(upd, "status");
        CHECK(cJSON_AddItemToObject(upd, "status", status));
        status = NULL;
        r = kube_update(c->client, &res_recs, ns, upd, "status", NULL, &ks);
        if (r < 0) {
            log_warn(COMP, "%s: cannot write status: %s", key,
                     ks.message[0] ? ks.message : err_str(r));
            goto out;
        }
        count(c, &c->stats.status_writes, 1);
    }
    maybe_checkpoint(c, key, false);
out:
    cJSON_Delete(status);
    cJSON_Delete(upd);
    cJSON_Delete(t.list);
    kube_object_unref(obj);
    return r;
}

static void *worker(void *arg)
{
    struct rec_controller *c = arg;
    char *key;

    while (kube_workqueue_get(c->q, &key) == 0) {
        double t0 = mono_s();
        int r = reconcile(c, key);
        (void)pthread_mutex_lock(&c->stats_lock);
        c->stats.reconciles++;
        c->stats.latency_sum_s += mono_s() - t0;
        if (r < 0)
            c->stats.errors++;
        (void)pthread_mutex_unlock(&c->stats_lock);
        if (r >= 0) {
            kube_workqueue_forget(c->q, key);
            if (r == 0)
                kube_workqueue_add_after(c->q, key, c->o.interval_ms);
        } else {
            kube_workqueue_add_rate_limited(c->q, key);
        }
        kube_workqueue_done(c->q, key);
        free(key);
    }
    return NULL;
}

/* ---- samples ---- */

static double usage_of(const cJSON *pm, const char *res)
{
    const char *v = str_at(at(pm, "podUsage", "resources"), res, NULL);
    struct quantity q;

    if (!v || quantity_parse(v, &q) < 0)
        return -1;
    return quantity_as_double(&q);
}

/* Feeds one pod's report to every Recommendation that targets it (lock held). */
static unsigned long feed(struct rec_controller *c, const char *key, const struct rec_refs *refs,
                          double cpu, double mem, int64_t t)
{
    unsigned long fed = 0;

    for (size_t i = 0; i < refs->n; i++) {
        struct rec_state *st = refs->v[i];
        struct rec_pod *pod = hmap_get(&st->pods, key);
        double share_cpu[64], share_mem[64];
        if (!pod || !pod->n || pod->n > ARRAY_SIZE(share_cpu) || t <= pod->last_t)
            continue;
        pod->last_t = t;
        rec_split(pod->cs, pod->n, true, share_cpu);
        rec_split(pod->cs, pod->n, false, share_mem);
        for (size_t k = 0; k < pod->n; k++) {
            struct rec_agg *a = agg_get(c, st, pod->cs[k].name);
            if (cpu >= 0 && rec_agg_add_cpu(a, &pod->st[k], cpu * share_cpu[k],
                                            (double)pod->cs[k].cpu_req_m / 1000.0, t)) {
                st->samples++;
                fed++;
            }
            if (mem >= 0)
                (void)rec_agg_add_memory(a, &pod->st[k], mem * share_mem[k], t,
                                         c->o.params.mem_interval);
        }
    }
    return fed;
}

static void read_report(struct rec_controller *c, const char *node)
{
    cJSON *u = NULL;
    const cJSON *pm;
    const char *ut;
    int64_t t;
    int32_t nsec;
    unsigned long fed = 0;
    double t0 = mono_s();

    if (nodemetric_server_get_usage(c->o.nodemetrics, node, &u) < 0)
        return;
    ut = str_at(at(u, "status", NULL), "updateTime", NULL);
    if (!ut || rfc3339_parse(ut, &t, &nsec) < 0)
        t = wall_ms() / 1000;
    (void)pthread_mutex_lock(&c->lock);
    cJSON_ArrayForEach(pm, at(at(u, "status", NULL), "podsMetric", NULL))
    {
        const char *ns = str_at(pm, "namespace", NULL), *name = str_at(pm, "name", NULL);
        char key[512];
        const struct rec_refs *refs;
        if (!ns || !name)
            continue;
        (void)snprintf(key, sizeof(key), "%s/%s", ns, name);
        if ((refs = hmap_get(&c->index, key)))
            fed += feed(c, key, refs, usage_of(pm, "cpu"), usage_of(pm, "memory"), t);
    }
    (void)pthread_mutex_unlock(&c->lock);
    cJSON_Delete(u);
    (void)pthread_mutex_lock(&c->stats_lock);
    c->stats.reports++;
    c->stats.samples += fed;
    c->stats.report_sum_s += mono_s() - t0;
    (void)pthread_mutex_unlock(&c->stats_lock);
}

static void *feeder(void *arg)
{
    struct rec_controller *c = arg;
    char *node;

    while (kube_workqueue_get(c->nodeq, &node) == 0) {
        read_report(c, node);
        kube_workqueue_forget(c->nodeq, node);
        kube_workqueue_done(c->nodeq, node);
        free(node);
    }
    return NULL;
}

void rec_controller_on_report(struct rec_controller *c, const char *node)
{
    struct kube_workqueue *q;

    if (!c || !atomic_load(&c->nrecs))
        return;
    /* nodeq lives from start to free; a report racing stop only adds to a shut-down queue. */
    q = c->nodeq;
    if (q)
        kube_workqueue_add(q, node);
}

/* ---- lifecycle ---- */

static void on_add(void *ud, const struct kube_object *o)
{
    struct rec_controller *c = ud;
    kube_workqueue_add(c->q, kube_object_key(o));
}

static const char *meta_text(const struct kube_object *o, const char *k, char buf[64])
{
    const cJSON *v = at(at(kube_object_json(o), "metadata", NULL), k, NULL);

    buf[0] = '\0';
    if (cJSON_IsNumber(v))
        (void)snprintf(buf, 64, "%.0f", v->valuedouble);
    else if (cJSON_IsString(v))
        (void)snprintf(buf, 64, "%s", v->valuestring);
    return buf;
}

/* A spec change (generation) or a new object under the same name; our own status writes change
 * neither, so they do not loop back. */
static void on_update(void *ud, const struct kube_object *old, const struct kube_object *o)
{
    struct rec_controller *c = ud;
    char a[64], b[64], u1[64], u2[64];

    if (strcmp(meta_text(old, "generation", a), meta_text(o, "generation", b)) ||
        strcmp(meta_text(old, "uid", u1), meta_text(o, "uid", u2)))
        kube_workqueue_add(c->q, kube_object_key(o));
}

static void on_delete(void *ud, const struct kube_object *o)
{
    struct rec_controller *c = ud;
    kube_workqueue_add(c->q, kube_object_key(o));
}

static void teardown(struct rec_controller *c)
{
    kube_informer_free(c->inf);
    c->inf = NULL;
    if (c->q)
        kube_workqueue_shutdown_drain(c->q);
    if (c->worker_started)
        (void)pthread_join(c->worker, NULL);
    if (c->nodeq)
        kube_workqueue_shutdown_drain(c->nodeq);
    if (c->feeder_started)
        (void)pthread_join(c->feeder, NULL);
    c->worker_started = c->feeder_started = false;
}

int rec_controller_start(struct rec_controller *c)
{
    struct kube_status ks = {0};
    long waited = 0;
    int r;

    (void)pthread_mutex_lock(&c->lifecycle);
    if (c->running) {
        (void)pthread_mutex_unlock(&c->lifecycle);
        return -EBUSY;
    }
    r = kube_list(c->client, &res_recs, NULL, &(struct kube_list_opts){.limit = 1}, NULL, &ks);
    if (r == -ENOENT) {
        log_info(COMP, "the API server does not serve Recommendations: controller off");
        goto unlock;
    }
    c->q = kube_workqueue_new(&(struct kube_workqueue_opts){0});
    c->nodeq = kube_workqueue_new(&(struct kube_workqueue_opts){0});
    c->inf = kube_informer_new(c->client, &(struct kube_informer_opts){.resource = &res_recs});
    CHECK(kube_informer_add_handlers(c->inf, &(struct kube_handlers){.on_add = on_add,
                                                                     .on_update = on_update,
                                                                     .on_delete = on_delete,
                                                                     .userdata = c}) == 0);
    if ((r = kube_informer_start(c->inf)) < 0)
        goto fail;
    while (!kube_informer_wait_synced(c->inf, SYNC_SLICE_MS)) {
        waited += SYNC_SLICE_MS;
        if (atomic_load(&c->cancel)) {
            r = -ECANCELED;
            goto fail;
        }
        if (waited >= c->o.sync_timeout_ms) {
            r = -ETIMEDOUT;
            goto fail;
        }
    }
    if ((r = -pthread_create(&c->worker, NULL, worker, c)) < 0)
        goto fail;
    c->worker_started = true;
    if ((r = -pthread_create(&c->feeder, NULL, feeder, c)) < 0)
        goto fail;
    c->feeder_started = true;
    c->running = true;
    log_info(COMP, "controller running (interval %ld ms, checkpoints every %ld ms)",
             c->o.interval_ms, c->o.checkpoint_ms);
    r = 0;
    goto unlock;
fail:
    log_error(COMP, "cannot start: %s", err_str(r));
    teardown(c);
    kube_workqueue_free(c->q);
    kube_workqueue_free(c->nodeq);
    c->q = c->nodeq = NULL;
unlock:
    (void)pthread_mutex_unlock(&c->lifecycle);
    return r;
}

void rec_controller_stop(struct rec_controller *c)
{
    struct hmap_entry *e;
    char **keys = NULL;
    size_t n = 0, it;

    if (!c)
        return;
    atomic_store(&c->cancel, true);
    (void)pthread_mutex_lock(&c->lifecycle);
    if (c->running) {
        teardown(c);
        /* Keep what was learnt since the last checkpoint. */
        (void)pthread_mutex_lock(&c->lock);
        for (e = hmap_first(&c->recs, &it); e; e = hmap_next(&c->recs, e, &it)) {
            keys = xrealloc(keys, (n + 1) * sizeof(*keys));
            keys[n++] = xstrdup(e->key);
        }
        (void)pthread_mutex_unlock(&c->lock);
        for (size_t i = 0; i < n; i++) {
            maybe_checkpoint(c, keys[i], true);
            free(keys[i]);
        }
        free(keys);
        c->running = false;
    }
    (void)pthread_mutex_unlock(&c->lifecycle);
}

void rec_controller_free(struct rec_controller *c)
{
    struct hmap_entry *e;
    size_t it;

    if (!c)
        return;
    rec_controller_stop(c);
    kube_workqueue_free(c->q);
    kube_workqueue_free(c->nodeq);
    for (e = hmap_first(&c->recs, &it); e; e = hmap_next(&c->recs, e, &it))
        state_free(NULL, e->value);
    hmap_release(&c->recs);
    for (e = hmap_first(&c->index, &it); e; e = hmap_next(&c->index, e, &it)) {
        struct rec_refs *r = e->value;
        free(r->v);
        free(r);
    }
    hmap_release(&c->index);
    (void)pthread_mutex_destroy(&c->lifecycle);
    (void)pthread_mutex_destroy(&c->lock);
    (void)pthread_mutex_destroy(&c->stats_lock);
    free(c);
}

void rec_controller_stats(struct rec_controller *c, struct rec_stats *ret)
{
    (void)pthread_mutex_lock(&c->stats_lock);
    *ret = c->stats;
    (void)pthread_mutex_unlock(&c->stats_lock);
}
