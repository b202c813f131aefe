/*
 * DELETE of one object and of a collection (kube-apiserver's endpoints/handlers/delete.go:
 * DeleteResource and DeleteCollection): DeleteOptions, grace periods, finalizers, and the
 * objects a deleted namespace or CRD leaves behind.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/labels.h"
#include "apiserver/admit.h"
#include "apiserver/apiserver-int.h"
#include "apiserver/lifecycle.h"
#include "apiserver/registry.h"
#include "base/base.h"
#include "base/log.h"
#include "http/server.h"

static int first_key(const struct store_item *it, void *ud)
{
    char **k = ud;
    *k = xstrdup(it->key);
    return 1;
}

/* Removes every object under prefix (the objects of a deleted namespace or CRD). */
static void delete_all(struct apiserver *srv, const char *prefix)
{
    char *key = NULL;

    while (store_list(srv->store, prefix, NULL, 1, first_key, &key, NULL) == 0 && key) {
        int r = store_delete(srv->store, key, 0, NULL, NULL);
        FREE_AND_NULL(key);
        if (r < 0 && r != -ENOENT) {
            log_warn("apiserver", "cannot delete under \"%s\": %s, ignoring", prefix, err_str(r));
            break;
        }
    }
    free(key);
}

/* DeleteOptions.gracePeriodSeconds from the body or the query; -1 when not given. */
static int64_t requested_grace(struct apiserver__call *c, const cJSON *opts)
{
    const cJSON *g = cJSON_GetObjectItem(opts, "gracePeriodSeconds");
    const char *q = http_request_query(c->req, "gracePeriodSeconds");
    char *end = NULL;
    long long v;

    if (cJSON_IsNumber(g))
        return g->valuedouble < 0 ? 1 : (int64_t)g->valuedouble;
    if (!q || !*q)
        return -1;
    v = strtoll(q, &end, 10);
    return *end ? -1 : v < 0 ? 1 : (int64_t)v;
}

/* DELETE on a collection: every object passing the selectors goes, or with finalizers gets its
 * deletionTimestamp (as a single delete would). Answers a Success status. */
struct doomed {
    char **keys;
    size_t n;
    struct label_selector *labels;
    struct apiserver__field_req *fields;
    size_t nfields;
};

static int collect_doomed(const struct store_item *it, void *ud)
{
    struct doomed *d = ud;
    cJSON *o = apiserver__decode_stored(it->value, it->len, it->rv);

    if (o && apiserver__selected(o, d->labels, d->fields, d->nfields)) {
        d->keys = xrealloc(d->keys, (d->n + 1) * sizeof(char *));
        d->keys[d->n++] = xstrdup(it->key);
    }
    cJSON_Delete(o);
    return d->n >= APISERVER__MAX_LIST ? 1 : 0;
}

void apiserver__do_deletecollection(struct apiserver__call *c)
{
    struct doomed d = {0};
    struct strbuf prefix = STRBUF_INIT;
    int64_t grace = -1, now = (int64_t)time(NULL);
    int r;

    if (!apiserver__parse_selectors(c, &d.labels, &d.fields, &d.nfields))
        goto out;
    {
        /* DeleteOptions: its dryRun counts as the query's does */
        size_t len;
        cJSON *opts = NULL;
        const cJSON *dr;
        bool ok = true;
        if (http_request_body(c->req, &len) && len && !(opts = apiserver__decode_body(c)))
            goto out;
        dr = cJSON_GetObjectItem(opts, "dryRun");
        for (int i = 0; ok && i < cJSON_GetArraySize(dr); i++) {
            const cJSON *v = cJSON_GetArrayItem(dr, i);
            ok = apiserver__parse_dry_run(c, cJSON_IsString(v) ? v->valuestring : "");
        }
        grace = requested_grace(c, opts);
        cJSON_Delete(opts);
        if (!ok)
            goto out;
    }
    strbuf_addf(&prefix, "/%s/%s/", *c->res->group ? c->res->group : "core", c->res->plural);
    if (c->res->namespaced && *c->ri.namespace)
        strbuf_addf(&prefix, "%s/", c->ri.namespace);
    r = store_list(c->srv->store, prefix.buf, NULL, 0, collect_doomed, &d, NULL);
    if (r < 0) {
        apiserver__reply_status(c, api_status_from_errno(r, NULL, NULL));
        goto out;
    }
    for (size_t i = 0; i < d.n && !c->dry_run; i++) {
        struct store_item it = {0};
        cJSON *o;
        if (store_get(c->srv->store, d.keys[i], &it) < 0)
            continue;
        o = apiserver__decode_stored(it.value, it.len, it.rv);
        if (o) {
            /* What a single delete would refuse stays (admit_delete()). */
            struct strbuf why = STRBUF_INIT;
            int ar = admit_delete(c->srv->store, c->res, o, &why);
            struct webhook_attrs wa;
            strbuf_release(&why);
            apiserver__wh_attrs(c, WEBHOOK_DELETE, o, &wa);
            wa.name = apiserver__get_string(apiserver__meta_of(o), "name")
                          ? apiserver__get_string(apiserver__meta_of(o), "name")
                          : "";
            wa.ns = c->res->namespaced && apiserver__get_string(apiserver__meta_of(o), "namespace")
                        ? apiserver__get_string(apiserver__meta_of(o), "namespace")
                        : "";
            if (ar == 0 && webhooks_wanted(c->srv->webhooks, &wa)) {
                struct webhook_outcome wo = WEBHOOK_OUTCOME_INIT;
                ar = webhooks_mutate(c->srv->webhooks, &wa, NULL, &wo);
                if (ar == 0)
                    ar = webhooks_validate(c->srv->webhooks, &wa, NULL, &wo);
                webhook_outcome_release(&wo);
            }
            if (ar < 0) {
                cJSON_Delete(o);
                store_item_release(&it);
                continue;
            }
        }
        if (o && apiserver__is_pods(c->res) && lifecycle_pod_grace(o, grace) > 0) {
            /* Bound pods stop gracefully, as a single delete would. */
            struct strbuf bytes = STRBUF_INIT;
            if (lifecycle_pod_mark(o, lifecycle_pod_grace(o, grace), now) &&
                apiserver__encode_for_store(o, &bytes) == 0)
                (void)store_update(c->srv->store, d.keys[i], bytes.buf, bytes.len, it.rv, NULL);
            strbuf_release(&bytes);
            lifecycle_kick(c->srv->lifecycle);
        } else if (o && cJSON_GetArraySize(
                            cJSON_GetObjectItem(apiserver__meta_of(o), "finalizers")) > 0) {
            struct strbuf bytes = STRBUF_INIT;
            if (!cJSON_GetObjectItem(apiserver__meta_of(o), "deletionTimestamp")) {
                apiserver__set_now(apiserver__meta_of(o), "deletionTimestamp");
                cJSON_DeleteItemFromObjectCaseSensitive(apiserver__meta_of(o),
                                                        "deletionGracePeriodSeconds");
                CHECK(cJSON_AddNumberToObject(apiserver__meta_of(o), "deletionGracePeriodSeconds",
                                              0));
            }
            if (apiserver__encode_for_store(o, &bytes) == 0)
                (void)store_update(c->srv->store, d.keys[i], bytes.buf, bytes.len, it.rv, NULL);
            strbuf_release(&bytes);
        } else {
            (void)store_delete(c->srv->store, d.keys[i], it.rv, NULL, NULL);
        }
        cJSON_Delete(o);
        store_item_release(&it);
    }
    apiserver__reply_status(c, api_status_success(200, NULL, NULL));
out:
    for (size_t i = 0; i < d.n; i++)
        free(d.keys[i]);
    free(d.keys);
    label_selector_free(d.labels);
    apiserver__field_reqs_free(d.fields, d.nfields);
    strbuf_release(&prefix);
}

static void delete_in_namespace(const struct api_resource *res, void *ud)
{
    struct apiserver__call *c = ud;
    struct strbuf prefix = STRBUF_INIT;

    if (!res->namespaced)
        return;
    strbuf_addf(&prefix, "/%s/%s/%s/", *res->group ? res->group : "core", res->plural, c->ri.name);
    delete_all(c->srv, prefix.buf);
    strbuf_release(&prefix);
}

/*
 * Writes a deletion that keeps the object (finalizers, a namespace's content, a pod's grace
 * period) and answers it, 200 as kube does (202 only for orphanDependents=false).
 */
static void delete_marked(struct apiserver__call *c, cJSON **old, uint64_t rv_was)
{
    struct strbuf bytes = STRBUF_INIT;
    uint64_t rv = rv_was;
    int r = apiserver__encode_for_store(*old, &bytes);

    if (r == 0 && !c->dry_run)
        r = store_update(c->srv->store, c->key.buf, bytes.buf, bytes.len, rv_was, &rv);
    strbuf_release(&bytes);
    if (r < 0) {
        apiserver__reply_status(c, r == -ESTALE ? api_status_conflict(&c->target)
                                                : api_status_from_errno(r, NULL, &c->target));
        return;
    }
    {
        char buf[24];
        (void)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)rv);
        apiserver__set_string(apiserver__meta_of(*old), "resourceVersion", buf);
    }
    apiserver__reply(c, 200, *old);
    *old = NULL;
    if (!c->dry_run)
        lifecycle_kick(c->srv->lifecycle);
}

/* The kind rules for a delete (admit_delete()); replies and returns false on refusal. */
static bool admit_deletion(struct apiserver__call *c, const cJSON *old)
{
    struct strbuf why = STRBUF_INIT;
    int r = admit_delete(c->srv->store, c->res, old, &why);

    if (r == -EACCES)
        apiserver__reply_status(c, api_status_failure(400, "", why.buf, NULL));
    else if (r < 0)
        apiserver__reply_status(c, api_status_from_errno(r, NULL, NULL));
    strbuf_release(&why);
    return r == 0;
}

void apiserver__do_delete(struct apiserver__call *c)
{
    struct store_item it = {0};
    cJSON *old = NULL, *meta;
    uint64_t rv = 0;
    int64_t grace = -1;
    int r;

    r = store_get(c->srv->store, c->key.buf, &it);
    if (r < 0) {
        apiserver__reply_status(c, api_status_from_errno(r, NULL, &c->target));
        return;
    }
    old = apiserver__decode_stored(it.value, it.len, it.rv);
    meta = old ? apiserver__meta_of(old) : NULL;
    {
        size_t len;
        cJSON *opts = NULL;
        bool ok = true;
        /* DeleteOptions in any body form; one that does not decode is refused (400/415). */
        if (http_request_body(c->req, &len) && len && !(opts = apiserver__decode_body(c)))
            goto out;
        grace = requested_grace(c, opts);
        if (opts && old) {
            const cJSON *dr = cJSON_GetObjectItem(opts, "dryRun");
            ok = apiserver__preconditions_hold(c, cJSON_GetObjectItem(opts, "preconditions"), old,
                                               it.rv);
            for (int i = 0; ok && i < cJSON_GetArraySize(dr); i++) {
                const cJSON *v = cJSON_GetArrayItem(dr, i);
                ok = apiserver__parse_dry_run(c, cJSON_IsString(v) ? v->valuestring : "");
            }
        }
        cJSON_Delete(opts);
        if (!ok)
            goto out;
        if (c->check_objects && !old) {
            /* A row that does not decode cannot be shown to be about the node. */
            apiserver__reply_status(
                c, api_status_failure(403, "Forbidden", "stored object is unreadable", &c->target));
            goto out;
        }
        if (old && !apiserver__node_may(c, old))
            goto out;
        if (old && !admit_deletion(c, old))
            goto out;
        if (old) {
            struct webhook_attrs wa;
            apiserver__wh_attrs(c, WEBHOOK_DELETE, old, &wa);
            if (!apiserver__wh_mutate(c, &wa, NULL) || !apiserver__wh_validate(c, &wa, NULL))
                goto out;
        }
    }
    /* A namespace is emptied first (lifecycle.h); the worker removes it. */
    if (meta && apiserver__is_namespaces(c->res) &&
        cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(old, "spec"), "finalizers")) >
            0) {
        (void)lifecycle_ns_mark(old, (int64_t)time(NULL));
        delete_marked(c, &old, it.rv);
        goto out;
    }
    /* A pod a node runs stops within its grace period, one with finalizers waits for them
     * (lifecycle.h); otherwise it goes now. */
    if (meta && apiserver__is_pods(c->res) &&
        lifecycle_pod_delete(old, grace, (int64_t)time(NULL)) != LIFECYCLE_POD_REMOVE) {
        delete_marked(c, &old, it.rv);
        goto out;
    }
    /* Finalizers keep the object, marked for deletion, until they are gone. */
    if (meta && cJSON_GetArraySize(cJSON_GetObjectItem(meta, "finalizers")) > 0) {
        /* Deleted now but for the finalizers (a forced pod delete included). */
        if (!cJSON_GetObjectItem(meta, "deletionTimestamp") || apiserver__is_pods(c->res)) {
            if (!cJSON_GetObjectItem(meta, "deletionTimestamp"))
                apiserver__set_now(meta, "deletionTimestamp");
            cJSON_DeleteItemFromObjectCaseSensitive(meta, "deletionGracePeriodSeconds");
            CHECK(cJSON_AddNumberToObject(meta, "deletionGracePeriodSeconds", 0));
        }
        delete_marked(c, &old, it.rv);
        goto out;
    }
    if (c->dry_run) {
        apiserver__reply_status(
            c, api_status_success(200, &c->target, apiserver__get_string(meta, "uid")));
        goto out;
    }
    r = store_delete(c->srv->store, c->key.buf, it.rv, NULL, &rv);
    if (r < 0) {
        apiserver__reply_status(c, r == -ESTALE ? api_status_conflict(&c->target)
                                                : api_status_from_errno(r, NULL, &c->target));
        goto out;
    }
    if (apiserver__is_crd_resource(c->res)) {
        /* The CRD's kinds stop being served and their objects go with it. */
        struct strbuf prefix = STRBUF_INIT;
        const cJSON *spec = cJSON_GetObjectItem(old, "spec");
        (void)api_registry_remove_crd(c->srv->reg, c->ri.name);
        strbuf_addf(&prefix, "/%s/%s/",
                    apiserver__get_string(spec, "group") ? apiserver__get_string(spec, "group")
                                                         : "",
                    apiserver__get_string(cJSON_GetObjectItem(spec, "names"), "plural")
                        ? apiserver__get_string(cJSON_GetObjectItem(spec, "names"), "plural")
                        : "");
        delete_all(c->srv, prefix.buf);
        strbuf_release(&prefix);
    }
    if (!*c->res->group && !strcmp(c->res->plural, "namespaces")) {
        /* Deleting a namespace deletes what is in it, of every namespaced resource. */
        api_registry_foreach(c->srv->reg, delete_in_namespace, c);
    }
    apiserver__reply_status(
        c, api_status_success(200, &c->target, meta ? apiserver__get_string(meta, "uid") : NULL));
out:
    store_item_release(&it);
    cJSON_Delete(old);
}
