/*
 * What the write verbs share (kube-apiserver's endpoints/handlers/rest.go and the generic
 * store's strategy hooks): reading and checking a request body, validation, the admission
 * chain (kind rules, node identities, webhooks), managedFields, and the predicates about
 * resources (pods, namespaces, CRDs) the create, update, patch and delete files ask alike.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api/crd.h"
#include "api/labels.h"
#include "api/rfc3339.h"
#include "apiserver/admit.h"
#include "apiserver/aggregator.h"
#include "apiserver/apiserver-int.h"
#include "apiserver/apply.h"
#include "apiserver/authz.h"
#include "apiserver/body.h"
#include "apiserver/lifecycle.h"
#include "apiserver/registry.h"
#include "base/base.h"

/* ---- validation ---- */

/* Kubernetes' warning header for an unknown field: 299 - "unknown field \"spec.x\"". */
static void add_warnings(struct apiserver__call *c, const struct field_errors *errs)
{
    strbuf_reset(&c->warnings);
    for (size_t i = 0; i < errs->n; i++) {
        if (errs->v[i].type != FIELD_WARNING)
            continue;
        strbuf_addstr(&c->warnings, "299 - ");
        strbuf_add_json_str(&c->warnings, errs->v[i].detail);
        strbuf_addch(&c->warnings, '\n');
    }
}

/*
 * Validates obj for the resource: the description, metadata, and for CRDs the CRD rules, with
 * the fieldValidation query parameter deciding about unknown fields (Warn by default: a
 * Warning header; Strict: 400 "strict decoding error"; Ignore: silence). Replies and returns
 * false when the object is refused.
 */
bool apiserver__validate(struct apiserver__call *c, cJSON *obj)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    const char *name =
        apiserver__get_string(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "name");
    const char *fv = http_request_query(c->req, "fieldValidation");
    unsigned flags = fv && !strcmp(fv, "Strict") ? API_V_STRICT : 0;
    struct strbuf unknown = STRBUF_INIT;
    size_t n;

    if (c->res->builtin) {
        (void)api_object_validate(obj, flags, NULL, &errs);
    } else {
        struct strbuf why = STRBUF_INIT;
        api_validate(c->res->schema, obj, "", flags, &errs);
        if (!name || !*name)
            field_error_add(&errs, FIELD_REQUIRED, "metadata.name", NULL,
                            "name or generateName is required");
        else if (labels_check_dns1123_subdomain(name, &why) < 0) {
            struct strbuf v = STRBUF_INIT;
            strbuf_add_json_str(&v, name);
            field_error_add(&errs, FIELD_INVALID, "metadata.name", v.buf, "%s", why.buf);
            strbuf_release(&v);
        }
        strbuf_release(&why);
        if (!strcmp(c->res->plural, "customresourcedefinitions"))
            (void)api_crd_check(obj, &errs);
    }
    /* Keys the body repeated: what sigs.k8s.io/json's strict decoding reports. */
    for (const char *d = c->dups.buf; *d;) {
        const char *eol = strchr(d, '\n');
        struct strbuf f = STRBUF_INIT;

        strbuf_add(&f, d, (size_t)(eol - d));
        field_error_add(&errs, flags & API_V_STRICT ? FIELD_UNKNOWN : FIELD_WARNING, f.buf, NULL,
                        "duplicate field \"%s\"", f.buf);
        strbuf_release(&f);
        d = eol + 1;
    }
    if (!fv || strcmp(fv, "Ignore") != 0)
        add_warnings(c, &errs);
    for (size_t i = 0; i < errs.n; i++)
        if (errs.v[i].type == FIELD_UNKNOWN)
            strbuf_addf(&unknown, "%s%s",
                        unknown.len ? ", " : "strict decoding error: ", errs.v[i].detail);
    n = field_errors_count(&errs);
    if (unknown.len)
        apiserver__reply_bad_request(c, unknown.buf);
    else if (n)
        apiserver__reply_status(
            c, api_status_invalid(c->res->kind, c->res->group, name ? name : "", &errs));
    strbuf_release(&unknown);
    field_errors_release(&errs);
    return n == 0;
}

/* ---- admission webhooks (webhook.h) ---- */

/* What the webhooks are told about this request; op and old (the stored object) as given. */
void apiserver__wh_attrs(const struct apiserver__call *c, enum webhook_op op, const cJSON *old,
                         struct webhook_attrs *a)
{
    *a = (struct webhook_attrs){
        .op = op,
        .group = c->res->group,
        .version = c->res->version,
        .resource = c->res->plural,
        .subresource = c->ri.subresource,
        .kind_group = c->res->group,
        .kind_version = c->res->version,
        .kind = c->res->kind,
        .ns = c->res->namespaced ? c->ri.namespace : "",
        .name = c->ri.name,
        .namespaced = c->res->namespaced,
        .dry_run = c->dry_run,
        .user = c->user.name ? &c->user : NULL,
        .old = old,
    };
}

/* The defaults of the resource's description, without the canonical encoding: what webhooks
 * are shown, as kube-apiserver shows them defaulted objects. */
static void apply_defaults(const struct apiserver__call *c, cJSON *obj)
{
    int r = c->res->builtin ? api_object_default(c->res->builtin, obj, 0)
                            : api_default(c->res->schema, obj, 0);
    CHECK(r == 0);
}

/* Replies with a webhook's refusal; keeps its warnings for the answer. */
static bool wh_outcome(struct apiserver__call *c, int r, struct webhook_outcome *out)
{
    strbuf_add(&c->wh_warnings, out->warnings.buf, out->warnings.len);
    if (r < 0) {
        apiserver__reply_status(c, out->status);
        out->status = NULL;
    }
    webhook_outcome_release(out);
    return r == 0;
}

/* The mutating webhooks over *obj (possibly replaced); replies and returns false on refusal. */
bool apiserver__wh_mutate(struct apiserver__call *c, const struct webhook_attrs *a, cJSON **obj)
{
    struct webhook_outcome out = WEBHOOK_OUTCOME_INIT;

    if (!webhooks_wanted(c->srv->webhooks, a))
        return true;
    if (obj && *obj)
        apply_defaults(c, *obj);
    return wh_outcome(c, webhooks_mutate(c->srv->webhooks, a, obj, &out), &out);
}

/* The validating webhooks over obj; replies and returns false on refusal. */
bool apiserver__wh_validate(struct apiserver__call *c, const struct webhook_attrs *a,
                            const cJSON *obj)
{
    struct webhook_outcome out = WEBHOOK_OUTCOME_INIT;

    if (!webhooks_wanted(c->srv->webhooks, a))
        return true;
    return wh_outcome(c, webhooks_validate(c->srv->webhooks, a, obj, &out), &out);
}

/* ---- writes ---- */

/* Parses the body as one JSON object of this resource's kind; replies 400 when it is not. */
/* The request body is JSON by its Content-Type (none counts as JSON). */
bool apiserver__json_body(const struct apiserver__call *c)
{
    const char *ct = http_request_header(c->req, "Content-Type");
    return !ct || !strncmp(ct, "application/json", 16);
}

/* The body as a tree, whatever its Content-Type (body.h); replies 400 or 415 and returns NULL
 * when it does not decode. */
cJSON *apiserver__decode_body(struct apiserver__call *c)
{
    struct body_error err;
    size_t len;
    const char *body = http_request_body(c->req, &len);
    cJSON *o = NULL;

    if (body_decode(http_request_header(c->req, "Content-Type"), body, len, &o, &err) < 0) {
        apiserver__reply_status(c, api_status_failure(err.status, err.reason, err.msg, NULL));
        return NULL;
    }
    /* Repeated keys: the last wins, as in Go; apiserver__validate() reports them. */
    strbuf_reset(&c->dups);
    body_dedupe_keys(o, &c->dups);
    return o;
}

cJSON *apiserver__read_body(struct apiserver__call *c)
{
    struct strbuf av = STRBUF_INIT, msg = STRBUF_INIT;
    const char *kind, *api_version;
    cJSON *o = apiserver__decode_body(c);

    if (!o)
        goto out;
    if (!cJSON_IsObject(o)) {
        apiserver__reply_bad_request(c, "the request body must be a JSON object");
        goto err;
    }
    apiserver__api_version_of(c->res, &av);
    kind = apiserver__get_string(o, "kind");
    api_version = apiserver__get_string(o, "apiVersion");
    if ((kind && strcmp(kind, c->res->kind)) || (api_version && strcmp(api_version, av.buf))) {
        strbuf_addf(&msg,
                    "the API version in the data (%s) does not match the expected API "
                    "version (%s) or the kind (%s) does not match %s",
                    api_version ? api_version : "", av.buf, kind ? kind : "", c->res->kind);
        apiserver__reply_bad_request(c, msg.buf);
        goto err;
    }
    if (!kind)
        CHECK(cJSON_AddStringToObject(o, "kind", c->res->kind));
    if (!api_version)
        CHECK(cJSON_AddStringToObject(o, "apiVersion", av.buf));
    goto out;
err:
    cJSON_Delete(o);
    o = NULL;
out:
    strbuf_release(&av);
    strbuf_release(&msg);
    return o;
}

/* Namespace in the body versus the URL (reference 2.1). Replies 400 and returns false on a
 * mismatch. */
bool apiserver__reconcile_namespace(struct apiserver__call *c, cJSON *meta, bool create)
{
    const char *ns = apiserver__get_string(meta, "namespace");
    char msg[256];

    if (!c->res->namespaced) {
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "namespace");
        return true;
    }
    if (!ns || !*ns) {
        apiserver__set_string(meta, "namespace", c->ri.namespace);
        return true;
    }
    if (!strcmp(ns, c->ri.namespace))
        return true;
    if (create)
        (void)snprintf(msg, sizeof(msg),
                       "the namespace of the provided object does not match the namespace sent "
                       "on the request");
    else
        (void)snprintf(msg, sizeof(msg),
                       "the namespace of the object (%s) does not match the namespace on the "
                       "request (%s)",
                       ns, c->ri.namespace);
    apiserver__reply_bad_request(c, msg);
    return false;
}

void apiserver__set_now(cJSON *meta, const char *key)
{
    char ts[RFC3339_STR_MAX];
    (void)rfc3339_format((int64_t)time(NULL), ts);
    apiserver__set_string(meta, key, ts);
}

bool apiserver__has_status_subresource(const struct api_resource *res)
{
    for (const char *const *s = res->subresources; s && *s; s++)
        if (!strcmp(*s, "status"))
            return true;
    return false;
}

/* Defaults and the canonical encoding through the resource's description. */
int apiserver__finish_object(struct apiserver__call *c, cJSON *obj)
{
    int r = c->res->builtin ? api_object_default(c->res->builtin, obj, 0)
                            : api_default(c->res->schema, obj, 0);
    if (r == 0)
        r = c->res->builtin ? api_object_canonicalize(c->res->builtin, obj)
                            : api_canonicalize(c->res->schema, obj);
    return r;
}

bool apiserver__is_pods(const struct api_resource *res)
{
    return !*res->group && !strcmp(res->plural, "pods");
}

bool apiserver__is_namespaces(const struct api_resource *res)
{
    return !*res->group && !strcmp(res->plural, "namespaces");
}

/* PUT namespaces/<name>/finalize (namespaceFinalizeStrategy): an update of the namespace that
 * keeps its status and, unlike the main resource, takes spec.finalizers from the client. */
bool apiserver__is_ns_finalize(const struct apiserver__call *c)
{
    return apiserver__is_namespaces(c->res) && !strcmp(c->ri.subresource, "finalize");
}

/*
 * kube's NamespaceLifecycle admission: nothing new in a namespace being deleted (reviews
 * aside: nothing is stored). Replies 403 with the NamespaceTerminating cause and returns
 * true when ns (the stored namespace) is terminating.
 */
bool apiserver__namespace_terminating(struct apiserver__call *c, const struct store_item *ns,
                                      const cJSON *obj)
{
    cJSON *o = c->res->create_only ? NULL : apiserver__decode_stored(ns->value, ns->len, ns->rv);
    const char *name = apiserver__get_string(cJSON_GetObjectItem(obj, "metadata"), "name");
    struct strbuf msg = STRBUF_INIT, why = STRBUF_INIT;
    cJSON *st, *details, *causes, *cause;
    bool refused = o && lifecycle_ns_terminating(o);

    cJSON_Delete(o);
    if (!refused)
        return false;
    strbuf_addstr(&msg, c->res->plural);
    if (*c->res->group)
        strbuf_addf(&msg, ".%s", c->res->group);
    if (name && *name)
        strbuf_addf(&msg, " \"%s\"", name);
    strbuf_addf(&msg,
                " is forbidden: unable to create new content in namespace %s because it is being "
                "terminated",
                c->ri.namespace);
    st = api_status_failure(
        403, "Forbidden", msg.buf,
        &(struct api_status_target){c->res->group, c->res->plural, name && *name ? name : NULL});
    details = cJSON_GetObjectItem(st, "details");
    if (!details)
        CHECK(details = cJSON_AddObjectToObject(st, "details"));
    CHECK(causes = cJSON_AddArrayToObject(details, "causes"));
    CHECK(cause = cJSON_CreateObject());
    CHECK(cJSON_AddItemToArray(causes, cause));
    strbuf_addf(&why, "namespace %s is being terminated", c->ri.namespace);
    CHECK(cJSON_AddStringToObject(cause, "reason", "NamespaceTerminating"));
    CHECK(cJSON_AddStringToObject(cause, "message", why.buf));
    CHECK(cJSON_AddStringToObject(cause, "field", "metadata.namespace"));
    apiserver__reply_status(c, st);
    strbuf_release(&msg);
    strbuf_release(&why);
    return true;
}

/*
 * Whether an update completes a deletion (the generic store's shouldDeleteDuringUpdate): the
 * object was deleted while finalizers held it (deletionGracePeriodSeconds 0, or absent as
 * earlier koord versions stored it) and the update removes the last one. A pod in its grace
 * period stays. A namespace stays too: the lifecycle worker removes it once its spec and
 * metadata finalizers and its content are all gone (lifecycle.h), so that an update (a
 * finalize) that empties them never leaves content behind.
 */
bool apiserver__deletes_during_update(const struct api_resource *res, const cJSON *old,
                                      const cJSON *obj)
{
    const cJSON *om = cJSON_GetObjectItem(old, "metadata"),
                *nm = cJSON_GetObjectItem(obj, "metadata");
    const cJSON *g = cJSON_GetObjectItem(om, "deletionGracePeriodSeconds");

    if (!cJSON_GetObjectItem(om, "deletionTimestamp") ||
        cJSON_GetArraySize(cJSON_GetObjectItem(nm, "finalizers")) > 0 ||
        (g && (!cJSON_IsNumber(g) || g->valuedouble != 0)))
        return false;
    return !apiserver__is_namespaces(res);
}

bool apiserver__is_pdb(const struct api_resource *res)
{
    return !strcmp(res->group, "policy") && !strcmp(res->plural, "poddisruptionbudgets");
}

bool apiserver__is_crd_resource(const struct api_resource *res)
{
    return !strcmp(res->group, "apiextensions.k8s.io") &&
           !strcmp(res->plural, "customresourcedefinitions");
}

/* Adds a CRD's kinds to reg; replies 422 and returns false when it cannot be served. */
static bool add_crd_to(struct apiserver__call *c, struct api_registry *reg, const cJSON *crd)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    int r = api_registry_add_crd(reg, crd, &errs);

    if (r < 0)
        apiserver__reply_status(
            c, api_status_invalid(
                   c->res->kind, c->res->group,
                   apiserver__get_string(cJSON_GetObjectItem(crd, "metadata"), "name"), &errs));
    field_errors_release(&errs);
    return r == 0;
}

/* The status kube's CRD controllers would write once the CRD is served (api_crd_set_status):
 * koord serves a CRD as it stores it, so it is written with it. */
void apiserver__crd_set_status(cJSON *crd)
{
    char ts[RFC3339_STR_MAX];

    (void)rfc3339_format((int64_t)time(NULL), ts);
    api_crd_set_status(crd, ts);
}

/* Serves a stored CRD's kinds. */
bool apiserver__serve_crd(struct apiserver__call *c, const cJSON *crd)
{
    return add_crd_to(c, c->srv->reg, crd);
}

/* uid / resourceVersion preconditions of a Binding or DeleteOptions; replies 409. */
bool apiserver__preconditions_hold(struct apiserver__call *c, const cJSON *pre, const cJSON *pod,
                                   uint64_t rv)
{
    const char *uid = apiserver__get_string(pre, "uid"),
               *rvs = apiserver__get_string(pre, "resourceVersion");
    const char *puid = apiserver__get_string(cJSON_GetObjectItem(pod, "metadata"), "uid");
    char buf[24];

    (void)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)rv);
    if ((uid && *uid && (!puid || strcmp(uid, puid))) || (rvs && *rvs && strcmp(rvs, buf))) {
        apiserver__reply_status(c, api_status_conflict(&c->target));
        return false;
    }
    return true;
}

/* Whether a CRD about to be stored can be served: the same checks against a scratch
 * registry, so nothing served changes unless the write succeeds. */
bool apiserver__crd_servable(struct apiserver__call *c, const cJSON *crd)
{
    struct api_registry *probe = api_registry_new();
    bool ok = add_crd_to(c, probe, crd);

    api_registry_free(probe);
    return ok;
}

/*
 * The managedFields a write leaves on obj (apply.h), computed from the client's object before
 * admission as kube's handlers do; *ret_mf is set on the object just before validation. An
 * apply brought its own. Replies 422 and returns false for a bad fieldManager or malformed
 * managedFields.
 */
bool apiserver__managed_fields(struct apiserver__call *c, const cJSON *live, const cJSON *obj,
                               cJSON **ret_mf)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf manager = STRBUF_INIT;
    const char *q = http_request_query(c->req, "fieldManager");
    char now[RFC3339_STR_MAX];
    bool ok;
    int r = 0;

    *ret_mf = NULL;
    /* Read-only kinds (the manager's NodeMetrics, written only by their agents' status reports
     * on the ingest path, which splices bytes) keep whatever entries they have. */
    if (c->applied || c->res->read_only) {
        const cJSON *mf = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "managedFields");
        if (mf)
            CHECK(*ret_mf = cJSON_Duplicate(mf, true));
        return true;
    }
    apply_check_field_manager(q, &errs);
    if (!field_errors_count(&errs)) {
        apply_field_manager(q, http_request_header(c->req, "User-Agent"), &manager);
        (void)rfc3339_format((int64_t)time(NULL), now);
        r = apply_update_managed_fields(c->res,
                                        c->mf_subresource ? c->mf_subresource : c->ri.subresource,
                                        live, obj, manager.buf, now, ret_mf, &errs);
    }
    ok = r == 0 && !field_errors_count(&errs);
    if (!ok)
        apiserver__reply_status(
            c, api_status_invalid(
                   c->res->kind, c->res->group,
                   apiserver__get_string(cJSON_GetObjectItem(obj, "metadata"), "name"), &errs));
    strbuf_release(&manager);
    field_errors_release(&errs);
    return ok;
}

/* Puts mf (taken) as obj's metadata.managedFields, or removes them when NULL. */
void apiserver__set_managed_fields(cJSON *obj, cJSON *mf)
{
    cJSON *meta = apiserver__meta_of(obj);

    cJSON_DeleteItemFromObjectCaseSensitive(meta, "managedFields");
    if (mf)
        CHECK(cJSON_AddItemToObject(meta, "managedFields", mf));
}

/* ---- subresource bodies (pods/binding, pods/eviction) ---- */

/* Parses a subresource body whose metadata.name must equal the pod's; replies 400 otherwise. */
cJSON *apiserver__read_sub_body(struct apiserver__call *c, const char *what)
{
    cJSON *o = apiserver__decode_body(c);
    const char *name;
    char msg[128];

    if (!o)
        return NULL;
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        apiserver__reply_bad_request(c, "the request body is not a valid JSON object");
        return NULL;
    }
    name = apiserver__get_string(cJSON_GetObjectItem(o, "metadata"), "name");
    if (name && strcmp(name, c->ri.name)) {
        (void)snprintf(msg, sizeof(msg), "name in URL does not match name in %s object", what);
        apiserver__reply_bad_request(c, msg);
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* The kind rules of admit.h; replies and returns false when they refuse the write. */
bool apiserver__admit(struct apiserver__call *c, const cJSON *old, cJSON *obj)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf why = STRBUF_INIT, msg = STRBUF_INIT;
    const char *name = apiserver__get_string(cJSON_GetObjectItem(obj, "metadata"), "name");
    int r = old ? admit_update(c->srv->store, c->res, old, obj, &errs, &why)
                : admit_create(c->srv->store, c->res, obj, &errs, &why);

    if (r == 0 && !strcmp(c->res->group, "apiregistration.k8s.io"))
        r = aggregator_admit(c->srv->reg, old, obj, &errs);
    if (r == 0)
        r = api_authz_admit(c->srv->authz, c->user.name ? &c->user : NULL, c->res, old, obj, &errs,
                            &why);

    if (r == -EINVAL) {
        apiserver__reply_status(
            c, api_status_invalid(c->res->kind, c->res->group, name ? name : "", &errs));
    } else if (r == -EPERM) {
        if (*c->res->group)
            strbuf_addf(&msg, "%s.%s", c->res->plural, c->res->group);
        else
            strbuf_addstr(&msg, c->res->plural);
        strbuf_addf(&msg, " \"%s\" is forbidden: %s", name ? name : "", why.buf);
        apiserver__reply_status(c, api_status_failure(403, "Forbidden", msg.buf, &c->target));
    } else if (r == -EACCES) {
        apiserver__reply_status(c, api_status_failure(400, "", why.buf, NULL));
    } else if (r == -ENOSPC) {
        strbuf_addf(&msg, "Internal error occurred: %s", why.buf);
        apiserver__reply_status(c, api_status_failure(500, "InternalError", msg.buf, NULL));
    } else if (r < 0) {
        apiserver__reply_status(c, api_status_from_errno(r, NULL, NULL));
    }
    field_errors_release(&errs);
    strbuf_release(&why);
    strbuf_release(&msg);
    return r == 0;
}

/* 403 for a node identity writing an object that is not about its node (auth.h). */
bool apiserver__node_may(struct apiserver__call *c, const cJSON *obj)
{
    struct strbuf msg = STRBUF_INIT, why = STRBUF_INIT;
    const char *name;

    if (!c->check_objects || api_authz_node_object(c->node, &c->ri, obj))
        return true;
    name = apiserver__get_string(cJSON_GetObjectItem(obj, "metadata"), "name");
    strbuf_addf(&why, "node \"%s\" may only write objects about itself", c->node);
    api_authz_forbidden_message(c->user.name, &c->ri, name ? name : c->ri.name, why.buf, &msg);
    apiserver__reply_status(c, api_status_failure(403, "Forbidden", msg.buf, &c->target));
    strbuf_release(&msg);
    strbuf_release(&why);
    return false;
}
