/*
 * POST of a new object (kube-apiserver's endpoints/handlers/create.go): generateName, defaults,
 * admission, validation and the store write, also for an object server-side apply creates, and
 * the create-only kinds (reviews, reviews.h) that are answered and never stored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "api/crd.h"
#include "api/rfc3339.h"
#include "apiserver/apiserver-int.h"
#include "apiserver/disruption.h"
#include "apiserver/lifecycle.h"
#include "apiserver/pods.h"
#include "apiserver/registry.h"
#include "apiserver/reviews.h"
#include "base/base.h"
#include "http/server.h"

/* generateName: the prefix (cut to 58) and 5 random characters (apiserver names/generate.go). */
static char *generate_name(const char *prefix)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    unsigned char r[5];
    struct strbuf sb = STRBUF_INIT;

    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
        CHECK(!"getrandom failed");
    strbuf_add(&sb, prefix, strlen(prefix) > 58 ? 58 : strlen(prefix));
    for (size_t i = 0; i < sizeof(r); i++)
        strbuf_addch(&sb, alphabet[r[i] % (sizeof(alphabet) - 1)]);
    return strbuf_detach(&sb, NULL);
}

/*
 * The answer to a create from the bytes just stored, with the resourceVersion spliced in as a
 * GET answers: what apiserver__reply() would print of the object, without printing it again. false
 * (and nothing sent) when apiserver__reply() has more to do: a Scale, a CRD's objects stored at
 * several versions, or bytes without the members the splice needs.
 */
static bool reply_created_spliced(struct apiserver__call *c, const struct strbuf *bytes,
                                  uint64_t rv)
{
    bool comma = false;
    size_t at;

    if (c->as_scale || c->res->multi_version || apiserver__wants_table(c))
        return false;
    at = store_splice_point(bytes->buf, bytes->len, &comma);
    if (!at || !apiserver__splice_bytes(bytes->buf, bytes->len, at, comma, rv,
                                        apiserver__partial_of(c), NULL, &c->resp->body))
        return false;
    apiserver__add_warning_headers(c, &c->wh_warnings);
    apiserver__add_warning_headers(c, &c->warnings);
    c->resp->status = 201;
    c->resp->content_type = "application/json";
    return true;
}

void apiserver__do_create(struct apiserver__call *c)
{
    cJSON *obj = apiserver__read_body(c);

    if (obj)
        apiserver__create_object(c, obj);
}

/* Create of obj (taken): a POST's body, or the object an apply creates. */
void apiserver__create_object(struct apiserver__call *c, cJSON *obj)
{
    cJSON *meta, *mf = NULL;
    struct webhook_attrs wa;
    const char *name, *gen;
    struct strbuf bytes = STRBUF_INIT;
    char uid[37];
    uint64_t rv = 0;
    int r;

    if (apiserver__is_crd_resource(c->res))
        api_crd_default(obj);
    if (*c->ri.subresource) {
        apiserver__reply_status(c, api_status_failure(405, "MethodNotAllowed",
                                                      "create is not supported on this subresource",
                                                      &c->target));
        goto out;
    }
    meta = apiserver__meta_of(obj);
    if (apiserver__get_string(meta, "resourceVersion") &&
        *apiserver__get_string(meta, "resourceVersion")) {
        apiserver__reply_status(
            c, api_status_failure(500, "InternalError",
                                  "resourceVersion should not be set on objects to be "
                                  "created",
                                  NULL));
        goto out;
    }
    if (!apiserver__reconcile_namespace(c, meta, true))
        goto out;
    if (c->res->namespaced) {
        struct strbuf nskey = STRBUF_INIT;
        struct store_item ns = {0};
        strbuf_addf(&nskey, "/core/namespaces//%s", c->ri.namespace);
        r = store_get(c->srv->store, nskey.buf, &ns);
        strbuf_release(&nskey);
        if (r < 0) {
            struct api_status_target t = {"", "namespaces", c->ri.namespace};
            store_item_release(&ns);
            apiserver__reply_status(c, api_status_from_errno(r, NULL, &t));
            goto out;
        }
        r = apiserver__namespace_terminating(c, &ns, obj);
        store_item_release(&ns);
        if (r)
            goto out;
    }
    name = apiserver__get_string(meta, "name");
    gen = apiserver__get_string(meta, "generateName");
    if ((!name || !*name) && gen && *gen) {
        char *g = generate_name(gen);
        apiserver__set_string(meta, "name", g);
        free(g);
    }
    if (!apiserver__managed_fields(c, NULL, obj, &mf))
        goto out;
    if (!apiserver__node_may(c, obj) || !apiserver__admit(c, NULL, obj))
        goto out;
    apiserver__wh_attrs(c, WEBHOOK_CREATE, NULL, &wa);
    wa.name = apiserver__get_string(meta, "name") ? apiserver__get_string(meta, "name") : "";
    if (!apiserver__wh_mutate(c, &wa, &obj))
        goto out;
    meta = apiserver__meta_of(obj);
    /* A webhook may not move the object to another namespace. */
    if (!apiserver__reconcile_namespace(c, meta, true) || !apiserver__node_may(c, obj))
        goto out;
    /* The system fields and the strategy's PrepareForCreate come before validation, as in
     * kube's BeforeCreate (a Job's generated selector names its uid). */
    apiserver_random_uid(uid);
    apiserver__set_string(meta, "uid", uid);
    if (c->res->builtin && c->res->builtin->prepare_create)
        c->res->builtin->prepare_create(obj);
    if (apiserver__is_namespaces(c->res))
        lifecycle_ns_prepare_create(obj);
    apiserver__set_managed_fields(obj, mf);
    mf = NULL;
    if (!apiserver__validate(c, obj))
        goto out;
    meta = apiserver__meta_of(obj);
    name = apiserver__get_string(meta, "name");
    apiserver__set_now(meta, "creationTimestamp");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "generation");
    CHECK(cJSON_AddNumberToObject(meta, "generation", 1));
    /* Status is not set by create on resources that have a status subresource. */
    if (apiserver__has_status_subresource(c->res) && !c->res->builtin)
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
    if (apiserver__is_pods(c->res)) {
        char ts[RFC3339_STR_MAX];
        (void)rfc3339_format((int64_t)time(NULL), ts);
        pods_prepare_create(obj, ts);
    }
    if ((r = apiserver__finish_object(c, obj)) < 0) {
        apiserver__reply_status(c, api_status_from_errno(r, NULL, NULL));
        goto out;
    }
    if (apiserver__is_crd_resource(c->res))
        apiserver__crd_set_status(obj);
    c->target.name = name;
    apiserver__object_key(&c->key, c->res, c->ri.namespace, name);
    if (apiserver__is_pdb(c->res) &&
        (r = disruption_refresh(c->srv->store, obj, (int64_t)time(NULL))) < 0) {
        apiserver__reply_status(c, api_status_from_errno(r, NULL, NULL));
        goto out;
    }
    if (apiserver__is_crd_resource(c->res) && !apiserver__crd_servable(c, obj))
        goto out;
    wa.name = name;
    if (!apiserver__wh_validate(c, &wa, obj))
        goto out;
    if (apiserver__encode_for_store(obj, &bytes) < 0) {
        apiserver__reply_status(c, api_status_from_errno(-ENOMEM, NULL, NULL));
        goto out;
    }
    if (c->dry_run) {
        /* Everything but the write: the name must still be free. */
        struct store_item cur = {0};
        r = store_get(c->srv->store, c->key.buf, &cur);
        store_item_release(&cur);
        r = r == 0 ? -EEXIST : r == -ENOENT ? 0 : r;
    } else {
        r = store_create(c->srv->store, c->key.buf, bytes.buf, bytes.len, &rv);
    }
    if (r < 0) {
        apiserver__reply_status(c, api_status_from_errno(r, NULL, &c->target));
        goto out;
    }
    if (c->dry_run) {
        apiserver__reply(c, 201, obj); /* no resourceVersion: nothing was stored */
        obj = NULL;
        goto out;
    }
    if (apiserver__is_crd_resource(c->res))
        (void)apiserver__serve_crd(c, obj); /* checked by crd_servable: cannot fail now */
    else if (reply_created_spliced(c, &bytes, rv))
        goto out;
    {
        char buf[24];
        (void)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)rv);
        apiserver__set_string(apiserver__meta_of(obj), "resourceVersion", buf);
    }
    apiserver__reply(c, 201, obj);
    obj = NULL;
out:
    strbuf_release(&bytes);
    cJSON_Delete(obj);
    cJSON_Delete(mf);
}

/* ---- reviews (reference 6.6) ---- */

/* A review (reviews.h): answered, never stored. */
void apiserver__do_review(struct apiserver__call *c)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf why = STRBUF_INIT;
    cJSON *body = apiserver__read_body(c), *ans = NULL;
    int r;

    if (!body)
        return;
    r = api_review(c->srv->authz, c->srv->tokens, c->res, &c->ri, c->user.name ? &c->user : NULL,
                   body, &ans, &errs, &why);
    if (r == 0)
        apiserver__reply(c, 201, ans);
    else if (field_errors_count(&errs))
        apiserver__reply_status(c, api_status_invalid(c->res->kind, c->res->group, "", &errs));
    else
        apiserver__reply_bad_request(c, why.buf);
    cJSON_Delete(body);
    field_errors_release(&errs);
    strbuf_release(&why);
}
