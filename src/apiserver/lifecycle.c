/*
 * Namespace and pod deletion as kube's namespace controller and kubelet finish them (see
 * lifecycle.h). The sweeps write the store directly, as one more writer beside the request
 * handlers: every write is conditional on the revision read, so a request that changed the
 * object meanwhile wins and the next pass looks again.
 */
#include "apiserver/lifecycle.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/rfc3339.h"
#include "apiserver/registry.h"
#include "apiserver/store.h"
#include "base/base.h"
#include "base/log.h"
#include "codec/codec.h"

#define TICK_MS 1000 /* between passes while work remains */

static const char *str_of(const cJSON *o, const char *k)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static cJSON *member_obj(cJSON *o, const char *k)
{
    cJSON *m = cJSON_GetObjectItemCaseSensitive(o, k);

    if (!cJSON_IsObject(m)) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, k);
        CHECK(m = cJSON_AddObjectToObject(o, k));
    }
    return m;
}

static void put_str(cJSON *o, const char *k, const char *v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, k);
    CHECK(cJSON_AddStringToObject(o, k, v));
}

static void put_num(cJSON *o, const char *k, double v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, k);
    CHECK(cJSON_AddNumberToObject(o, k, v));
}

/* A time member as seconds; false when absent or malformed. */
static bool time_of(const cJSON *o, const char *k, int64_t *ret)
{
    const char *s = str_of(o, k);
    int32_t ns;

    return s && rfc3339_parse(s, ret, &ns) == 0;
}

static bool has_finalizers(const cJSON *meta)
{
    return cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(meta, "finalizers")) > 0;
}

/* ---- pods ---- */

int64_t lifecycle_pod_grace(const cJSON *pod, int64_t requested)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
    const char *node = str_of(spec, "nodeName");
    const char *phase = str_of(cJSON_GetObjectItemCaseSensitive(pod, "status"), "phase");
    const cJSON *tg = cJSON_GetObjectItemCaseSensitive(spec, "terminationGracePeriodSeconds");
    int64_t period = LIFECYCLE_DEFAULT_GRACE;

    if (requested >= 0)
        period = requested;
    else if (cJSON_IsNumber(tg))
        period = (int64_t)tg->valuedouble;
    /* A pod no kubelet runs, or whose containers are done, has nothing to stop. */
    if (!node || !*node || (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))))
        period = 0;
    if (period < 0)
        period = 1;
    return period;
}

bool lifecycle_pod_mark(cJSON *pod, int64_t grace, int64_t now)
{
    cJSON *meta = member_obj(pod, "metadata");
    const cJSON *cur = cJSON_GetObjectItemCaseSensitive(meta, "deletionGracePeriodSeconds");
    int64_t at;
    char ts[RFC3339_STR_MAX];

    /* A deletion under way only moves earlier (a finalizer-held one stays as it is). */
    if (time_of(meta, "deletionTimestamp", &at) &&
        (!cJSON_IsNumber(cur) || (int64_t)cur->valuedouble <= grace || at <= now + grace))
        return false;
    (void)rfc3339_format(now + grace, ts);
    put_str(meta, "deletionTimestamp", ts);
    put_num(meta, "deletionGracePeriodSeconds", (double)grace);
    return true;
}

enum lifecycle_pod_deletion lifecycle_pod_delete(cJSON *pod, int64_t requested, int64_t now)
{
    int64_t grace = lifecycle_pod_grace(pod, requested);
    cJSON *meta;
    const cJSON *g;
    bool changed = false;

    if (grace > 0)
        return lifecycle_pod_mark(pod, grace, now) ? LIFECYCLE_POD_MARKED : LIFECYCLE_POD_PENDING;
    meta = member_obj(pod, "metadata");
    if (!has_finalizers(meta))
        return LIFECYCLE_POD_REMOVE;
    /* Deleted now but for the finalizers: removing the last one completes the deletion. */
    if (!cJSON_GetObjectItemCaseSensitive(meta, "deletionTimestamp")) {
        char ts[RFC3339_STR_MAX];
        (void)rfc3339_format(now, ts);
        put_str(meta, "deletionTimestamp", ts);
        changed = true;
    }
    g = cJSON_GetObjectItemCaseSensitive(meta, "deletionGracePeriodSeconds");
    if (!cJSON_IsNumber(g) || g->valuedouble != 0) {
        put_num(meta, "deletionGracePeriodSeconds", 0);
        changed = true;
    }
    return changed ? LIFECYCLE_POD_MARKED : LIFECYCLE_POD_PENDING;
}

bool lifecycle_pod_due(const cJSON *pod, int64_t now)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(meta, "deletionGracePeriodSeconds");
    int64_t at;

    return cJSON_IsNumber(g) && time_of(meta, "deletionTimestamp", &at) && now >= at;
}

/* ---- namespaces ---- */

void lifecycle_ns_prepare_create(cJSON *ns)
{
    cJSON *spec = member_obj(ns, "spec"),
          *fin = cJSON_GetObjectItemCaseSensitive(spec, "finalizers");
    cJSON *status;
    bool have = false;

    if (!cJSON_IsArray(fin)) {
        cJSON_DeleteItemFromObjectCaseSensitive(spec, "finalizers");
        CHECK(fin = cJSON_AddArrayToObject(spec, "finalizers"));
    }
    for (int i = 0; i < cJSON_GetArraySize(fin); i++) {
        const char *f = cJSON_GetStringValue(cJSON_GetArrayItem(fin, i));
        have = have || (f && !strcmp(f, "kubernetes"));
    }
    if (!have)
        CHECK(cJSON_AddItemToArray(fin, cJSON_CreateString("kubernetes")));
    cJSON_DeleteItemFromObjectCaseSensitive(ns, "status");
    CHECK(status = cJSON_AddObjectToObject(ns, "status"));
    CHECK(cJSON_AddStringToObject(status, "phase", "Active"));
}

bool lifecycle_ns_terminating(const cJSON *ns)
{
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ns, "metadata"),
                                            "deletionTimestamp") != NULL;
}

bool lifecycle_ns_mark(cJSON *ns, int64_t now)
{
    cJSON *meta = member_obj(ns, "metadata"), *status = member_obj(ns, "status");
    const char *phase = str_of(status, "phase");
    bool changed = false;

    if (!cJSON_GetObjectItemCaseSensitive(meta, "deletionTimestamp")) {
        char ts[RFC3339_STR_MAX];
        (void)rfc3339_format(now, ts);
        put_str(meta, "deletionTimestamp", ts);
        put_num(meta, "deletionGracePeriodSeconds", 0);
        changed = true;
    }
    if (!phase || strcmp(phase, "Terminating")) {
        put_str(status, "phase", "Terminating");
        changed = true;
    }
    return changed;
}

/* ---- the sweep ---- */

/* "/<group|core>/<plural>/" of every namespaced resource, once each (a CRD's versions share
 * one). */
struct prefixes {
    char **v;
    size_t n;
};

static void collect_prefix(const struct api_resource *res, void *ud)
{
    struct prefixes *p = ud;
    struct strbuf b = STRBUF_INIT;

    if (!res->namespaced || res->create_only)
        return;
    strbuf_addf(&b, "/%s/%s/", *res->group ? res->group : "core", res->plural);
    for (size_t i = 0; i < p->n; i++) {
        if (!strcmp(p->v[i], b.buf)) {
            strbuf_release(&b);
            return;
        }
    }
    p->v = xrealloc(p->v, (p->n + 1) * sizeof(*p->v));
    p->v[p->n++] = strbuf_detach(&b, NULL);
}

/* Stored objects under a prefix: key, revision and the decoded object. */
struct entry {
    char *key;
    uint64_t rv;
    cJSON *obj;
};

struct entries {
    struct entry *v;
    size_t n;
};

static int collect_entry(const struct store_item *it, void *ud)
{
    struct entries *e = ud;
    cJSON *o = NULL;

    if (json_parse(it->value, it->len, NULL, &o, NULL) < 0)
        return 0; /* an unreadable row is left for a person to look at */
    e->v = xrealloc(e->v, (e->n + 1) * sizeof(*e->v));
    e->v[e->n++] = (struct entry){xstrdup(it->key), it->rv, o};
    return 0;
}

static void entries_release(struct entries *e)
{
    for (size_t i = 0; i < e->n; i++) {
        free(e->v[i].key);
        cJSON_Delete(e->v[i].obj);
    }
    free(e->v);
    *e = (struct entries){0};
}

static int write_back(struct store *store, const struct entry *e)
{
    struct strbuf b = STRBUF_INIT;
    int r = json_print(e->obj, &b);

    if (r == 0)
        r = store_update(store, e->key, b.buf, b.len, e->rv, NULL);
    strbuf_release(&b);
    return r;
}

/* What a namespace still holds: "<resource>.<group> has N resource instances" and
 * "<finalizer> in N resource instances", as the namespace controller counts them. */
struct tally {
    char **names;
    size_t *counts;
    size_t n;
};

static void tally_add(struct tally *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++) {
        if (!strcmp(t->names[i], name)) {
            t->counts[i]++;
            return;
        }
    }
    t->names = xrealloc(t->names, (t->n + 1) * sizeof(*t->names));
    t->counts = xrealloc(t->counts, (t->n + 1) * sizeof(*t->counts));
    t->names[t->n] = xstrdup(name);
    t->counts[t->n++] = 1;
}

static void tally_release(struct tally *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->names[i]);
    free(t->names);
    free(t->counts);
    *t = (struct tally){0};
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "a has 1 resource instances, b has 2 resource instances" (link " has " / "resource
 * instances"), or "f in 1 resource instances" (" in "), sorted as kube sorts them. */
static void tally_join(const struct tally *t, const char *link, struct strbuf *out)
{
    char **parts = xcalloc(t->n ? t->n : 1, sizeof(*parts));

    for (size_t i = 0; i < t->n; i++) {
        struct strbuf b = STRBUF_INIT;
        strbuf_addf(&b, "%s%s%zu resource instances", t->names[i], link, t->counts[i]);
        parts[i] = strbuf_detach(&b, NULL);
    }
    qsort(parts, t->n, sizeof(*parts), cmp_str);
    for (size_t i = 0; i < t->n; i++) {
        strbuf_addf(out, "%s%s", i ? ", " : "", parts[i]);
        free(parts[i]);
    }
    free(parts);
}

/* The resource part of a key "/<group|core>/<plural>/...": "plural.group" ("pods." for the
 * core group, as kube prints the GroupResource). */
static void resource_name(const char *prefix, struct strbuf *out)
{
    const char *g = prefix + 1, *slash = strchr(g, '/'), *plural = slash + 1;
    const char *end = strchr(plural, '/');

    strbuf_add(out, plural, (size_t)(end - plural));
    strbuf_addch(out, '.');
    if (strncmp(g, "core/", 5))
        strbuf_add(out, g, (size_t)(slash - g));
}

static cJSON *condition(const char *type, bool on, const char *reason, const char *message,
                        const char *now)
{
    cJSON *c = cJSON_CreateObject();

    CHECK(c);
    CHECK(cJSON_AddStringToObject(c, "type", type));
    CHECK(cJSON_AddStringToObject(c, "status", on ? "True" : "False"));
    CHECK(cJSON_AddStringToObject(c, "lastTransitionTime", now));
    CHECK(cJSON_AddStringToObject(c, "reason", reason));
    CHECK(cJSON_AddStringToObject(c, "message", message));
    return c;
}

/* The namespace controller's five deletion conditions (status_condition_utils.go). */
static cJSON *ns_conditions(const struct tally *left, const struct tally *fins, const char *failure,
                            const char *now)
{
    cJSON *a = cJSON_CreateArray();
    struct strbuf m = STRBUF_INIT;

    CHECK(a);
    CHECK(cJSON_AddItemToArray(a, condition("NamespaceDeletionDiscoveryFailure", false,
                                            "ResourcesDiscovered",
                                            "All resources successfully discovered", now)));
    CHECK(cJSON_AddItemToArray(a, condition("NamespaceDeletionGroupVersionParsingFailure", false,
                                            "ParsedGroupVersions",
                                            "All legacy kube types successfully parsed", now)));
    if (failure)
        strbuf_addf(&m, "Failed to delete all resource types, 1 remaining: %s", failure);
    CHECK(cJSON_AddItemToArray(
        a, condition("NamespaceDeletionContentFailure", failure != NULL,
                     failure ? "ContentDeletionFailed" : "ContentDeleted",
                     failure ? m.buf
                             : "All content successfully deleted, may be waiting on "
                               "finalization",
                     now)));
    strbuf_reset(&m);
    if (left->n) {
        strbuf_addstr(&m, "Some resources are remaining: ");
        tally_join(left, " has ", &m);
    }
    CHECK(cJSON_AddItemToArray(a, condition("NamespaceContentRemaining", left->n > 0,
                                            left->n ? "SomeResourcesRemain" : "ContentRemoved",
                                            left->n ? m.buf : "All content successfully removed",
                                            now)));
    strbuf_reset(&m);
    if (fins->n) {
        strbuf_addstr(&m, "Some content in the namespace has finalizers remaining: ");
        tally_join(fins, " in ", &m);
    }
    CHECK(cJSON_AddItemToArray(
        a, condition("NamespaceFinalizersRemaining", fins->n > 0,
                     fins->n ? "SomeFinalizersRemain" : "ContentHasNoFinalizers",
                     fins->n ? m.buf : "All content-preserving finalizers finished", now)));
    strbuf_release(&m);
    return a;
}

/* Whether two condition lists say the same (times aside); a transition time stays while a
 * condition's status does not change. */
static bool conditions_same(cJSON *old, cJSON *new_conds)
{
    bool same = cJSON_GetArraySize(old) == cJSON_GetArraySize(new_conds);

    for (int i = 0; i < cJSON_GetArraySize(new_conds); i++) {
        cJSON *n = cJSON_GetArrayItem(new_conds, i), *o = NULL;
        for (int j = 0; j < cJSON_GetArraySize(old); j++) {
            const char *t = str_of(cJSON_GetArrayItem(old, j), "type");
            if (t && !strcmp(t, str_of(n, "type")))
                o = cJSON_GetArrayItem(old, j);
        }
        if (!o) {
            same = false;
            continue;
        }
        if (str_of(o, "status") && !strcmp(str_of(o, "status"), str_of(n, "status")) &&
            str_of(o, "lastTransitionTime"))
            put_str(n, "lastTransitionTime", str_of(o, "lastTransitionTime"));
        for (const char *const *k = (const char *const[]){"status", "reason", "message", NULL}; *k;
             k++) {
            const char *ov = str_of(o, *k);
            same = same && ov && !strcmp(ov, str_of(n, *k));
        }
    }
    return same;
}

/* Deletes or marks one object of a terminating namespace; counts what stays. */
static void sweep_object(struct store *store, const char *prefix, struct entry *e, int64_t now,
                         struct tally *left, struct tally *fins, struct strbuf *failure)
{
    cJSON *meta = member_obj(e->obj, "metadata");
    bool is_pod = !strcmp(prefix, "/core/pods/");
    int64_t grace = is_pod ? lifecycle_pod_grace(e->obj, -1) : 0;
    struct strbuf res = STRBUF_INIT;
    int r = 0;

    resource_name(prefix, &res);
    if (has_finalizers(meta)) {
        const cJSON *f;
        if (!cJSON_GetObjectItemCaseSensitive(meta, "deletionTimestamp")) {
            char ts[RFC3339_STR_MAX];
            (void)rfc3339_format(now, ts);
            put_str(meta, "deletionTimestamp", ts);
            put_num(meta, "deletionGracePeriodSeconds", 0);
            r = write_back(store, e);
        }
        cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(meta, "finalizers"))
        {
            if (cJSON_IsString(f))
                tally_add(fins, f->valuestring);
        }
        tally_add(left, res.buf);
    } else if (is_pod && cJSON_GetObjectItemCaseSensitive(meta, "deletionTimestamp")) {
        tally_add(left, res.buf); /* its grace period runs; the pod sweep ends it */
    } else if (grace > 0) {
        if (lifecycle_pod_mark(e->obj, grace, now))
            r = write_back(store, e);
        tally_add(left, res.buf);
    } else {
        r = store_delete(store, e->key, e->rv, NULL, NULL);
        if (r == -ENOENT)
            r = 0;
        else if (r < 0)
            tally_add(left, res.buf);
    }
    if (r < 0 && r != -ESTALE && !failure->len)
        strbuf_addf(failure, "%s: %s", res.buf, err_str(r));
    strbuf_release(&res);
}

/* Removes the `kubernetes` finalizer from spec.finalizers; whether it was there. */
static bool ns_finalize(cJSON *ns)
{
    cJSON *fin = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ns, "spec"),
                                                  "finalizers");

    for (int i = 0; i < cJSON_GetArraySize(fin); i++) {
        const char *f = cJSON_GetStringValue(cJSON_GetArrayItem(fin, i));
        if (f && !strcmp(f, "kubernetes")) {
            cJSON_DeleteItemFromArray(fin, i);
            return true;
        }
    }
    return false;
}

/* One terminating namespace: its content, its conditions, its end. */
static int sweep_namespace(struct store *store, const struct prefixes *p, struct entry *ns,
                           int64_t now)
{
    const char *name = str_of(cJSON_GetObjectItemCaseSensitive(ns->obj, "metadata"), "name");
    struct tally left = {0}, fins = {0};
    struct strbuf failure = STRBUF_INIT, key = STRBUF_INIT;
    char ts[RFC3339_STR_MAX];
    cJSON *status, *conds;
    int r = 0;

    if (!name)
        return 0;
    for (size_t i = 0; i < p->n && r == 0; i++) {
        struct entries e = {0};
        strbuf_reset(&key);
        strbuf_addf(&key, "%s%s/", p->v[i], name);
        r = store_list(store, key.buf, NULL, 0, collect_entry, &e, NULL);
        for (size_t j = 0; j < e.n && r == 0; j++)
            sweep_object(store, p->v[i], &e.v[j], now, &left, &fins, &failure);
        entries_release(&e);
    }
    if (r < 0)
        goto out;
    (void)rfc3339_format(now, ts);
    status = member_obj(ns->obj, "status");
    conds = ns_conditions(&left, &fins, failure.len ? failure.buf : NULL, ts);
    if (!conditions_same(cJSON_GetObjectItemCaseSensitive(status, "conditions"), conds)) {
        cJSON_DeleteItemFromObjectCaseSensitive(status, "conditions");
        CHECK(cJSON_AddItemToObject(status, "conditions", conds));
        r = write_back(store, ns);
        if (r == 0)
            r = 1; /* the revision moved: the next pass finalizes */
    } else {
        cJSON_Delete(conds);
    }
    if (r == 0 && !left.n && !failure.len) {
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive(ns->obj, "metadata");
        if (ns_finalize(ns->obj))
            r = write_back(store, ns) == 0 ? 1 : 0;
        else if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
                     cJSON_GetObjectItemCaseSensitive(ns->obj, "spec"), "finalizers")) == 0 &&
                 !has_finalizers(meta))
            r = store_delete(store, ns->key, ns->rv, NULL, NULL);
    }
    if (r == -ESTALE || r == -ENOENT || r == 1)
        r = 0;
out:
    tally_release(&left);
    tally_release(&fins);
    strbuf_release(&failure);
    strbuf_release(&key);
    return r;
}

int lifecycle_sweep(struct store *store, struct api_registry *reg, int64_t now)
{
    struct prefixes p = {0};
    struct entries nss = {0}, pods = {0};
    bool more = false;
    int r;

    /* Pods first: a namespace's conditions then count what the pass left. */
    r = store_list(store, "/core/pods/", NULL, 0, collect_entry, &pods, NULL);
    for (size_t i = 0; i < pods.n && r == 0; i++) {
        cJSON *meta = cJSON_GetObjectItemCaseSensitive(pods.v[i].obj, "metadata");
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(meta, "deletionGracePeriodSeconds");
        if (!cJSON_GetObjectItemCaseSensitive(meta, "deletionTimestamp") || !cJSON_IsNumber(g) ||
            g->valuedouble == 0)
            continue;
        if (!lifecycle_pod_due(pods.v[i].obj, now)) {
            more = true;
        } else if (has_finalizers(meta)) {
            /* The kubelet's final delete: the finalizers keep it, deleted now (the update
             * that removes the last one completes the deletion). */
            put_num(meta, "deletionGracePeriodSeconds", 0);
            (void)write_back(store, &pods.v[i]);
        } else {
            int d = store_delete(store, pods.v[i].key, pods.v[i].rv, NULL, NULL);
            if (d < 0 && d != -ENOENT && d != -ESTALE)
                log_warn("apiserver", "cannot remove pod \"%s\": %s", pods.v[i].key, err_str(d));
            more = more || d == -ESTALE;
        }
    }
    if (r == 0)
        r = store_list(store, "/core/namespaces//", NULL, 0, collect_entry, &nss, NULL);
    for (size_t i = 0; i < nss.n && r == 0; i++) {
        if (!lifecycle_ns_terminating(nss.v[i].obj))
            continue;
        if (!p.v)
            api_registry_foreach(reg, collect_prefix, &p);
        r = sweep_namespace(store, &p, &nss.v[i], now);
        more = true;
    }
    for (size_t i = 0; i < p.n; i++)
        free(p.v[i]);
    free(p.v);
    entries_release(&nss);
    entries_release(&pods);
    return r < 0 ? r : more;
}

/* ---- the worker ---- */

struct lifecycle {
    struct store *store;
    struct api_registry *reg;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool kicked, stopping;
};

static void *loop(void *ud)
{
    struct lifecycle *l = ud;
    bool more = true; /* the first pass looks at what an earlier run left */

    CHECK(pthread_mutex_lock(&l->lock) == 0);
    while (!l->stopping) {
        int r;
        if (!more && !l->kicked) {
            CHECK(pthread_cond_wait(&l->cond, &l->lock) == 0);
            continue;
        }
        if (more && !l->kicked) {
            struct timespec ts;
            CHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
            ts.tv_sec += TICK_MS / 1000;
            (void)pthread_cond_timedwait(&l->cond, &l->lock, &ts);
            if (l->stopping)
                break;
        }
        l->kicked = false;
        CHECK(pthread_mutex_unlock(&l->lock) == 0);
        r = lifecycle_sweep(l->store, l->reg, (int64_t)time(NULL));
        if (r < 0)
            log_warn("apiserver", "namespace and pod deletion: %s, retrying", err_str(r));
        more = r != 0;
        CHECK(pthread_mutex_lock(&l->lock) == 0);
    }
    CHECK(pthread_mutex_unlock(&l->lock) == 0);
    return NULL;
}

int lifecycle_start(struct store *store, struct api_registry *reg, struct lifecycle **ret)
{
    struct lifecycle *l = xcalloc(1, sizeof(*l));
    pthread_condattr_t ca;
    int r;

    l->store = store;
    l->reg = reg;
    CHECK(pthread_mutex_init(&l->lock, NULL) == 0);
    CHECK(pthread_condattr_init(&ca) == 0);
    CHECK(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0);
    CHECK(pthread_cond_init(&l->cond, &ca) == 0);
    (void)pthread_condattr_destroy(&ca);
    r = -pthread_create(&l->thread, NULL, loop, l);
    if (r < 0) {
        (void)pthread_cond_destroy(&l->cond);
        (void)pthread_mutex_destroy(&l->lock);
        free(l);
        return r;
    }
    *ret = l;
    return 0;
}

void lifecycle_kick(struct lifecycle *l)
{
    if (!l)
        return;
    CHECK(pthread_mutex_lock(&l->lock) == 0);
    l->kicked = true;
    CHECK(pthread_cond_signal(&l->cond) == 0);
    CHECK(pthread_mutex_unlock(&l->lock) == 0);
}

void lifecycle_stop(struct lifecycle *l)
{
    if (!l)
        return;
    CHECK(pthread_mutex_lock(&l->lock) == 0);
    l->stopping = true;
    CHECK(pthread_cond_signal(&l->cond) == 0);
    CHECK(pthread_mutex_unlock(&l->lock) == 0);
    CHECK(pthread_join(l->thread, NULL) == 0);
    (void)pthread_cond_destroy(&l->cond);
    (void)pthread_mutex_destroy(&l->lock);
    free(l);
}
