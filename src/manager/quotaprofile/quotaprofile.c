/*
 * The ElasticQuotaProfile controller: see quotaprofile.h. Mirrors upstream
 * pkg/quota-controller/profile/profile_controller.go (manager-behaviour.md 8).
 */
#include "manager/quotaprofile/quotaprofile.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/labels.h"
#include "api/quantity.h"
#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "codec/patch.h"
#include "kube/client.h"
#include "kube/events.h"
#include "kube/informer.h"
#include "kube/workqueue.h"

#define COMP                    "quotaprofile"
#define PREFIX                  "quota.scheduling.koordinator.sh/"
#define L_TREE_ID               PREFIX "tree-id"
#define L_PROFILE               PREFIX "profile"
#define L_IS_ROOT               PREFIX "is-root"
#define A_RESOURCE_KEYS         PREFIX "resource-keys"
#define A_TOTAL                 PREFIX "total-resource"
#define A_UNSCHEDULABLE         PREFIX "unschedulable-resource"
#define DEFAULT_SYNC_TIMEOUT_MS 60000
#define DEFAULT_RESYNC_MS       10000
#define DEFAULT_FAILED_WRITE_MS 2000
#define SYNC_SLICE_MS           50
#define FNV_OFFSET              UINT64_C(14695981039346656037)
#define FNV_PRIME               UINT64_C(1099511628211)

static const struct kube_resource res_profiles = {
    "quota.koordinator.sh", "v1alpha1", "elasticquotaprofiles", "ElasticQuotaProfile", true};
static const struct kube_resource res_quotas = {"scheduling.sigs.k8s.io", "v1alpha1",
                                                "elasticquotas", "ElasticQuota", true};

struct quotaprofile_controller {
    struct kube_client *client;
    struct quotaprofile_opts o;
    char *component, *host;
    struct kube_recorder *rec;

    pthread_mutex_t lifecycle; /* serialises start and stop */
    atomic_bool cancel;        /* stop() asks a start waiting for the cache to give up */
    bool running;
    struct kube_informer *inf;
    struct kube_workqueue *q;
    pthread_t *threads;
    unsigned nthreads;

    pthread_mutex_t stats_lock;
    struct quotaprofile_stats stats;
};

static double now_s(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t quotaprofile_tree_id(const char *ns, const char *name)
{
    uint64_t h = FNV_OFFSET;
    const char *parts[] = {ns, "/", name};

    for (size_t i = 0; i < ARRAY_SIZE(parts); i++)
        for (const unsigned char *p = (const unsigned char *)parts[i]; *p; p++) {
            h ^= *p;
            h *= FNV_PRIME;
        }
    return h;
}

int quotaprofile_controller_new(struct kube_client *client, const struct quotaprofile_opts *opts,
                                struct quotaprofile_controller **ret)
{
    static const struct quotaprofile_opts defaults = {0};
    struct quotaprofile_controller *c = xcalloc(1, sizeof(*c));

    c->client = client;
    c->o = opts ? *opts : defaults;
    c->component = xstrdup(c->o.component ? c->o.component : "koord-manager");
    c->host = c->o.host ? xstrdup(c->o.host) : NULL;
    c->o.component = c->component;
    c->o.host = c->host;
    if (!c->o.workers)
        c->o.workers = 1;
    if (c->o.sync_timeout_ms <= 0)
        c->o.sync_timeout_ms = DEFAULT_SYNC_TIMEOUT_MS;
    if (c->o.resync_ms <= 0)
        c->o.resync_ms = DEFAULT_RESYNC_MS;
    if (c->o.failed_write_ms <= 0)
        c->o.failed_write_ms = DEFAULT_FAILED_WRITE_MS;
    c->rec = kube_recorder_new(
        client, &(struct kube_recorder_opts){.component = c->component, .host = c->host});
    CHECK(pthread_mutex_init(&c->lifecycle, NULL) == 0);
    CHECK(pthread_mutex_init(&c->stats_lock, NULL) == 0);
    atomic_init(&c->cancel, false);
    *ret = c;
    return 0;
}

/* ---- event handlers ---- */

static void on_add(void *ud, const struct kube_object *o)
{
    struct quotaprofile_controller *c = ud;

    kube_workqueue_add(c->q, kube_object_key(o));
}

/* Upstream's GenerationChangedPredicate: the tree-id label it writes itself does not count. */
static void on_update(void *ud, const struct kube_object *old, const struct kube_object *o)
{
    struct quotaprofile_controller *c = ud;
    const cJSON *a = cJSON_GetObjectItem(kube_object_json(old), "metadata");
    const cJSON *b = cJSON_GetObjectItem(kube_object_json(o), "metadata");

    if (!json_value_equal(cJSON_GetObjectItem(a, "generation"),
                          cJSON_GetObjectItem(b, "generation")))
        kube_workqueue_add(c->q, kube_object_key(o));
}

/* ---- computing the quota ---- */

static const cJSON *at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
    return b ? cJSON_GetObjectItemCaseSensitive(v, b) : v;
}

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = at(o, a, b);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Upstream counts a node out of scheduling when cordoned or not Ready. */
static bool node_unschedulable(const cJSON *node)
{
    const cJSON *cond;

    if (cJSON_IsTrue(at(node, "spec", "unschedulable")))
        return true;
    cJSON_ArrayForEach(cond, at(node, "status", "conditions"))
    {
        const char *t = str_at(cond, "type", NULL), *s = str_at(cond, "status", NULL);
        if (t && !strcmp(t, "Ready"))
            return !s || strcmp(s, "True");
    }
    return true;
}

/* sum += list, as quotav1.Add (a value that does not parse is skipped). */
static void list_add(cJSON *sum, const cJSON *list)
{
    const cJSON *v;

    cJSON_ArrayForEach(v, list)
    {
        struct quantity a = {0}, b;
        char buf[QUANTITY_STR_MAX];
        if (!cJSON_IsString(v) || quantity_parse(v->valuestring, &b) < 0)
            continue;
        if (cJSON_IsString(at(sum, v->string, NULL)))
            (void)quantity_parse(str_at(sum, v->string, NULL), &a);
        if (quantity_add(&a, &b) < 0)
            continue;
        (void)quantity_format(&a, buf);
        cJSON_DeleteItemFromObjectCaseSensitive(sum, v->string);
        CHECK(cJSON_AddStringToObject(sum, v->string, buf));
    }
}

/* Every entry times r, truncated: cpu in millicores, the rest in units (step 4). */
static void list_scale(cJSON *list, double r)
{
    cJSON *v;

    cJSON_ArrayForEach(v, list)
    {
        struct quantity q, out;
        char buf[QUANTITY_STR_MAX];
        int64_t n;
        if (!cJSON_IsString(v) || quantity_parse(v->valuestring, &q) < 0)
            continue;
        if (!strcmp(v->string, "cpu")) {
            if (quantity_milli(&q, &n) < 0)
                continue;
            quantity_from_milli((int64_t)((double)n * r), q.format, &out);
        } else {
            if (quantity_value(&q, &n) < 0)
                continue;
            quantity_from_int((int64_t)((double)n * r), q.format, &out);
        }
        (void)quantity_format(&out, buf);
        CHECK(cJSON_SetValuestring(v, buf));
    }
}

/* A ResourceList with its keys sorted, as Go's json.Marshal writes a map. */
static cJSON *sorted(const cJSON *list)
{
    cJSON *out = cJSON_CreateObject();
    const cJSON *v, *min;
    cJSON *work = cJSON_Duplicate(list, true);

    CHECK(out && work);
    while (work->child) {
        min = work->child;
        for (v = work->child; v; v = v->next)
            if (strcmp(v->string, min->string) < 0)
                min = v;
        CHECK(cJSON_AddItemToObject(out, min->string,
                                    cJSON_DetachItemViaPointer(work, (cJSON *)min)));
    }
    cJSON_Delete(work);
    return out;
}

static char *to_json(const cJSON *list)
{
    struct strbuf sb = STRBUF_INIT;
    cJSON *s = sorted(list);

    CHECK(json_print(s, &sb) == 0);
    cJSON_Delete(s);
    return strbuf_detach(&sb, NULL);
}

/* The profile's ratio: used only when 0 < r <= 1, else 1.0; absent = no scaling. */
static bool ratio_of(const cJSON *profile, double *ret)
{
    const char *s = str_at(at(profile, "spec", NULL), "resourceRatio", NULL);
    double r;

    if (!s || !*s)
        return false;
    *ret = parse_double(s, &r) == 0 && r > 0 && r <= 1 ? r : 1.0;
    return true;
}

/* Lists the nodes of the selector and sums them (step 3). */
static int node_totals(struct quotaprofile_controller *c, const cJSON *profile, cJSON **ret_total,
                       cJSON **ret_unsched)
{
    struct label_selector *sel = NULL;
    struct strbuf sb = STRBUF_INIT, err = STRBUF_INIT;
    struct kube_status st = {0};
    cJSON *list = NULL, *total = NULL, *uns = NULL;
    const cJSON *node;
    int r;

    if ((r = label_selector_from_json(at(profile, "spec", "nodeSelector"), &sel, &err)) < 0) {
        log_warn(COMP, "profile \"%s/%s\": bad nodeSelector: %s",
                 str_at(profile, "metadata", "namespace"), str_at(profile, "metadata", "name"),
                 err.buf);
        goto out;
    }
    label_selector_format(sel, &sb);
    r = kube_list(c->client, &kube_res_nodes, NULL,
                  &(struct kube_list_opts){.label_selector = sb.len ? sb.buf : NULL}, &list, &st);
    if (r < 0) {
        log_warn(COMP, "cannot list nodes \"%s\": %s", sb.buf,
                 st.message[0] ? st.message : err_str(r));
        goto out;
    }
    total = cJSON_CreateObject();
    uns = cJSON_CreateObject();
    CHECK(total && uns);
    cJSON_ArrayForEach(node, at(list, "items", NULL))
    {
        const cJSON *alloc = at(node, "status", "allocatable");
        list_add(total, alloc);
        if (node_unschedulable(node))
            list_add(uns, alloc);
    }
    *ret_total = total;
    *ret_unsched = uns;
    total = uns = NULL;
out:
    cJSON_Delete(list);
    cJSON_Delete(total);
    cJSON_Delete(uns);
    label_selector_free(sel);
    strbuf_release(&sb);
    strbuf_release(&err);
    return r;
}

static cJSON *object_at(cJSON *o, const char *k)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

    if (!cJSON_IsObject(v)) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, k);
        v = cJSON_AddObjectToObject(o, k);
        CHECK(v);
    }
    return v;
}

static void set_str(cJSON *o, const char *k, const char *v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, k);
    CHECK(cJSON_AddStringToObject(o, k, v));
}

/* The spec of step 5: min from total for each key, max the constant; other keys dropped. */
static cJSON *quota_spec(const cJSON *profile, const cJSON *total)
{
    const char *keys_json = str_at(at(profile, "metadata", "annotations"), A_RESOURCE_KEYS, NULL);
    cJSON *keys = NULL, *spec = cJSON_CreateObject(), *min, *max;
    const cJSON *k;

    CHECK(spec);
    if (!keys_json || json_parse(keys_json, strlen(keys_json), NULL, &keys, NULL) < 0 ||
        !cJSON_IsArray(keys)) {
        cJSON_Delete(keys);
        keys = cJSON_CreateStringArray((const char *[]){"cpu", "memory"}, 2);
        CHECK(keys);
    }
    min = cJSON_AddObjectToObject(spec, "min");
    max = cJSON_AddObjectToObject(spec, "max");
    CHECK(min && max);
    cJSON_ArrayForEach(k, keys)
    {
        const char *v;
        if (!cJSON_IsString(k) || cJSON_GetObjectItemCaseSensitive(min, k->valuestring))
            continue;
        v = str_at(total, k->valuestring, NULL);
        set_str(min, k->valuestring, v ? v : "0");
        set_str(max, k->valuestring, QUOTAPROFILE_MAX_QUOTA);
    }
    cJSON_Delete(keys);
    return spec;
}

/* Whether two ResourceLists hold the same quantities under the same keys. */
static bool lists_equal(const cJSON *a, const cJSON *b)
{
    const cJSON *v;

    if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
        return false;
    cJSON_ArrayForEach(v, a)
    {
        const char *w = str_at(b, v->string, NULL);
        struct quantity x, y;
        if (!w || !cJSON_IsString(v) || quantity_parse(v->valuestring, &x) < 0 ||
            quantity_parse(w, &y) < 0 || quantity_cmp(&x, &y))
            return false;
    }
    return true;
}

static bool specs_equal(const cJSON *a, const cJSON *b)
{
    return lists_equal(at(a, "min", NULL), at(b, "min", NULL)) &&
           lists_equal(at(a, "max", NULL), at(b, "max", NULL));
}

static void count(struct quotaprofile_controller *c, unsigned long *counter)
{
    (void)pthread_mutex_lock(&c->stats_lock);
    (*counter)++;
    (void)pthread_mutex_unlock(&c->stats_lock);
}

static void warn_event(struct quotaprofile_controller *c, const cJSON *profile, const char *reason,
                       const char *verb, const char *msg)
{
    int r = kube_recorder_event(c->rec, profile, KUBE_EVENT_WARNING, reason,
                                "failed to %s quota, err: %s", verb, msg);

    if (r < 0)
        log_warn(COMP, "cannot record event %s: %s, ignoring", reason, err_str(r));
}

/* Step 1: the profile's tree id, written onto it when missing. *ret_profile is the profile to
 * go on with (the updated one). */
static int ensure_tree_id(struct quotaprofile_controller *c, const cJSON *profile,
                          cJSON **ret_profile, char tree_id[24])
{
    const char *ns = str_at(profile, "metadata", "namespace"), *name;
    const char *have = str_at(at(profile, "metadata", "labels"), L_TREE_ID, NULL);
    struct kube_status st = {0};
    cJSON *upd;
    int r;

    name = str_at(profile, "metadata", "name");
    (void)snprintf(tree_id, 24, "%llu",
                   (unsigned long long)quotaprofile_tree_id(ns ? ns : "", name ? name : ""));
    if (have) {
        /* A tree id given by the user is kept, as upstream only fills a missing one. */
        (void)snprintf(tree_id, 24, "%s", have);
        *ret_profile = cJSON_Duplicate(profile, true);
        CHECK(*ret_profile);
        return 0;
    }
    upd = cJSON_Duplicate(profile, true);
    CHECK(upd);
    set_str(object_at(object_at(upd, "metadata"), "labels"), L_TREE_ID, tree_id);
    r = kube_update(c->client, &res_profiles, ns, upd, NULL, ret_profile, &st);
    cJSON_Delete(upd);
    if (r < 0)
        log_warn(COMP, "cannot label profile \"%s/%s\" with its tree id: %s, retrying", ns, name,
                 st.message[0] ? st.message : err_str(r));
    return r;
}

/*
 * One pass over a profile. Returns 0 (re-sync after resync_ms), 1 (a quota write failed:
 * retry after failed_write_ms) or -errno (backoff); -ENOENT when the profile is gone.
 */
static int sync_profile(struct quotaprofile_controller *c, const char *key)
{
    struct kube_object *cached = kube_informer_get(c->inf, key);
    cJSON *profile = NULL, *total = NULL, *uns = NULL, *spec = NULL, *quota = NULL, *want = NULL;
    struct kube_status st = {0};
    const char *ns, *pname, *qname;
    char tree_id[24], *tj = NULL, *uj = NULL;
    double ratio;
    int r;

    if (!cached)
        return -ENOENT;
    if ((r = ensure_tree_id(c, kube_object_json(cached), &profile, tree_id)) < 0)
        goto out;
    ns = str_at(profile, "metadata", "namespace");
    pname = str_at(profile, "metadata", "name");
    qname = str_at(at(profile, "spec", NULL), "quotaName", NULL);
    if (!ns || !pname || !qname || !*qname) {
        log_warn(COMP, "profile \"%s\" has no spec.quotaName, ignoring", key);
        r = 0;
        goto out;
    }
    if ((r = node_totals(c, profile, &total, &uns)) < 0)
        goto out;
    if (ratio_of(profile, &ratio)) {
        list_scale(total, ratio);
        list_scale(uns, ratio);
    }
    spec = quota_spec(profile, total);
    tj = to_json(total);
    uj = to_json(uns);

    r = kube_get(c->client, &res_quotas, ns, qname, &quota, &st);
    if (r < 0 && r != -ENOENT) {
        log_warn(COMP, "cannot get elasticquota \"%s/%s\": %s, retrying", ns, qname,
                 st.message[0] ? st.message : err_str(r));
        goto out;
    }
    if (r == -ENOENT) {
        want = cJSON_CreateObject();
        CHECK(want);
        set_str(want, "apiVersion", "scheduling.sigs.k8s.io/v1alpha1");
        set_str(want, "kind", "ElasticQuota");
        set_str(object_at(want, "metadata"), "name", qname);
        set_str(object_at(want, "metadata"), "namespace", ns);
    } else {
        want = cJSON_Duplicate(quota, true);
        CHECK(want);
    }
    {
        cJSON *meta = object_at(want, "metadata"), *labels = object_at(meta, "labels");
        cJSON *annots = object_at(meta, "annotations");
        const cJSON *l;
        set_str(labels, L_PROFILE, pname);
        cJSON_ArrayForEach(l, at(profile, "spec", "quotaLabels"))
        {
            if (cJSON_IsString(l))
                set_str(labels, l->string, l->valuestring);
        }
        set_str(labels, L_TREE_ID, tree_id);
        set_str(labels, L_IS_ROOT, "true");
        set_str(annots, A_TOTAL, tj);
        set_str(annots, A_UNSCHEDULABLE, uj);
    }
    if (quota &&
        json_value_equal(at(quota, "metadata", "labels"), at(want, "metadata", "labels")) &&
        json_value_equal(at(quota, "metadata", "annotations"),
                         at(want, "metadata", "annotations")) &&
        specs_equal(at(quota, "spec", NULL), spec)) {
        log_debug(COMP, "elasticquota \"%s/%s\" is up to date", ns, qname);
        r = 0;
        goto out;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(want, "spec");
    CHECK(cJSON_AddItemToObject(want, "spec", spec));
    spec = NULL;
    if (!quota) {
        r = kube_create(c->client, &res_quotas, ns, want, NULL, &st);
        if (r < 0) {
            log_warn(COMP, "cannot create elasticquota \"%s/%s\": %s, retrying", ns, qname,
                     st.message[0] ? st.message : err_str(r));
            warn_event(c, profile, "CreateQuotaFailed", "create",
                       st.message[0] ? st.message : err_str(r));
            r = 1;
        } else {
            count(c, &c->stats.creates);
            log_info(COMP, "created elasticquota \"%s/%s\" for profile \"%s\"", ns, qname, pname);
        }
    } else {
        r = kube_update(c->client, &res_quotas, ns, want, NULL, NULL, &st);
        if (r < 0) {
            log_warn(COMP, "cannot update elasticquota \"%s/%s\": %s, retrying", ns, qname,
                     st.message[0] ? st.message : err_str(r));
            warn_event(c, profile, "UpdateQuotaFailed", "update",
                       st.message[0] ? st.message : err_str(r));
            r = 1;
        } else {
            count(c, &c->stats.updates);
            log_debug(COMP, "updated elasticquota \"%s/%s\"", ns, qname);
        }
    }
out:
    (void)kube_object_unref(cached);
    cJSON_Delete(profile);
    cJSON_Delete(total);
    cJSON_Delete(uns);
    cJSON_Delete(spec);
    cJSON_Delete(quota);
    cJSON_Delete(want);
    free(tj);
    free(uj);
    return r;
}

static void *worker(void *arg)
{
    struct quotaprofile_controller *c = arg;
    char *key;

    while (kube_workqueue_get(c->q, &key) == 0) {
        double t0 = now_s();
        int r = sync_profile(c, key);

        if (r == 0) {
            kube_workqueue_forget(c->q, key);
            kube_workqueue_add_after(c->q, key, c->o.resync_ms);
        } else if (r == 1) {
            kube_workqueue_forget(c->q, key);
            kube_workqueue_add_after(c->q, key, c->o.failed_write_ms);
        } else if (r == -ENOENT) {
            kube_workqueue_forget(c->q, key); /* deleted: its quota stays */
        } else {
            kube_workqueue_add_rate_limited(c->q, key);
        }
        kube_workqueue_done(c->q, key);
        (void)pthread_mutex_lock(&c->stats_lock);
        c->stats.reconciles++;
        c->stats.errors += r != 0 && r != -ENOENT;
        c->stats.latency_sum_s += now_s() - t0;
        (void)pthread_mutex_unlock(&c->stats_lock);
        free(key);
    }
    return NULL;
}

/* ---- lifecycle ---- */

static void teardown(struct quotaprofile_controller *c)
{
    if (c->inf)
        kube_informer_stop(c->inf);
    if (c->q)
        kube_workqueue_shutdown(c->q);
    for (unsigned i = 0; i < c->nthreads; i++)
        (void)pthread_join(c->threads[i], NULL);
    c->running = false;
    kube_informer_free(c->inf);
    c->inf = NULL;
    kube_workqueue_free(c->q);
    c->q = NULL;
    free(c->threads);
    c->threads = NULL;
    c->nthreads = 0;
}

int quotaprofile_controller_start(struct quotaprofile_controller *c)
{
    struct kube_workqueue_opts qo = {.base_delay_ms = c->o.retry_base_ms,
                                     .max_delay_ms = c->o.retry_max_ms};
    double end;
    int r;

    (void)pthread_mutex_lock(&c->lifecycle);
    if (c->running || c->q) {
        (void)pthread_mutex_unlock(&c->lifecycle);
        return -EBUSY;
    }
    {
        /* Without the CRD there is nothing to watch, and waiting for a cache that never
         * syncs must not keep the manager's other controllers from leading. */
        struct kube_status st = {0};
        cJSON *list = NULL;
        r = kube_list(c->client, &res_profiles, NULL, &(struct kube_list_opts){.limit = 1}, &list,
                      &st);
        cJSON_Delete(list);
        if (r < 0 && st.code == 404) {
            (void)pthread_mutex_unlock(&c->lifecycle);
            log_warn(COMP, "the API server does not serve ElasticQuotaProfiles "
                           "(quota.koordinator.sh/v1alpha1; install "
                           "deploy/crds/quota.koordinator.sh_elasticquotaprofiles.yaml): the "
                           "controller is off until the manager leads again");
            return -ENOENT;
        }
    }
    c->q = kube_workqueue_new(&qo);
    c->inf = kube_informer_new(c->client, &(struct kube_informer_opts){.resource = &res_profiles});
    CHECK(kube_informer_add_handlers(c->inf,
                                     &(struct kube_handlers){on_add, on_update, on_add, c}) == 0);
    if ((r = kube_informer_start(c->inf)) < 0) {
        log_error(COMP, "cannot start the informer: %s", err_str(r));
        goto err;
    }
    end = now_s() + (double)c->o.sync_timeout_ms / 1000.0;
    while (!kube_informer_wait_synced(c->inf, SYNC_SLICE_MS)) {
        if (atomic_load(&c->cancel)) {
            r = -ECANCELED;
            log_info(COMP, "start cancelled while waiting for the cache");
            goto err;
        }
        if (now_s() > end) {
            r = -ETIMEDOUT;
            log_error(COMP, "cache did not sync within %ld ms", c->o.sync_timeout_ms);
            goto err;
        }
    }
    c->threads = xcalloc(c->o.workers, sizeof(*c->threads));
    for (unsigned i = 0; i < c->o.workers; i++) {
        r = -pthread_create(&c->threads[i], NULL, worker, c);
        if (r < 0) {
            log_error(COMP, "cannot start worker: %s", err_str(r));
            goto err;
        }
        c->nthreads++;
    }
    c->running = true;
    (void)pthread_mutex_unlock(&c->lifecycle);
    log_info(COMP, "started with %u worker(s), re-sync every %ld ms", c->nthreads, c->o.resync_ms);
    return 0;
err:
    teardown(c);
    (void)pthread_mutex_unlock(&c->lifecycle);
    return r;
}

void quotaprofile_controller_stop(struct quotaprofile_controller *c)
{
    bool was_running;

    if (!c)
        return;
    atomic_store(&c->cancel, true);
    (void)pthread_mutex_lock(&c->lifecycle);
    was_running = c->running;
    teardown(c);
    atomic_store(&c->cancel, false);
    (void)pthread_mutex_unlock(&c->lifecycle);
    if (was_running)
        log_info(COMP, "stopped");
}

void quotaprofile_controller_free(struct quotaprofile_controller *c)
{
    if (!c)
        return;
    quotaprofile_controller_stop(c);
    kube_recorder_free(c->rec);
    (void)pthread_mutex_destroy(&c->stats_lock);
    (void)pthread_mutex_destroy(&c->lifecycle);
    free(c->component);
    free(c->host);
    free(c);
}

void quotaprofile_controller_stats(struct quotaprofile_controller *c,
                                   struct quotaprofile_stats *ret)
{
    (void)pthread_mutex_lock(&c->stats_lock);
    *ret = c->stats;
    (void)pthread_mutex_unlock(&c->stats_lock);
}
