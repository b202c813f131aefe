/*
 * The scale subresource (<resource>/<name>/scale) of CRDs with subresources.scale and of the
 * apps/v1 workloads: GET answers the object as an autoscaling/v1 Scale, PUT and PATCH write
 * spec.replicas through the update path (kube serves it from the registry's ScaleREST).
 */
#include <stdlib.h>
#include <string.h>

#include "api/workloads.h"
#include "apiserver/apiserver-int.h"
#include "apiserver/registry.h"
#include "base/base.h"
#include "codec/codec.h"
#include "codec/patch.h"
#include "http/server.h"

/* ---- scale (a CRD's subresources.scale) ---- */

/* The member at a CRD's JSON path (".spec.replicas") in o, or NULL. With make, the objects on
 * the way are made and the last member is replaced by v (taken over). */
static cJSON *path_member(cJSON *o, const char *path, cJSON *v)
{
    char *copy = xstrdup(*path == '.' ? path + 1 : path), *save = NULL, *k, *next;
    cJSON *cur = o;

    for (k = strtok_r(copy, ".", &save); k && cur; k = next) {
        next = strtok_r(NULL, ".", &save);
        if (!next) {
            if (v) {
                cJSON_DeleteItemFromObjectCaseSensitive(cur, k);
                CHECK(cJSON_AddItemToObject(cur, k, v));
                cur = v;
            } else {
                cur = cJSON_GetObjectItemCaseSensitive(cur, k);
            }
            break;
        }
        if (v && !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(cur, k))) {
            cJSON_DeleteItemFromObjectCaseSensitive(cur, k);
            CHECK(cJSON_AddObjectToObject(cur, k));
        }
        cur = cJSON_GetObjectItemCaseSensitive(cur, k);
    }
    if (!k) {
        cJSON_Delete(v); /* an empty path names nothing */
        cur = NULL;
    }
    free(copy);
    return cur;
}

/* autoscaling/v1 Scale of a custom resource (apiextensions-apiserver's scaleFromCustomResource)
 * or of an apps/v1 workload (scaleFromDeployment and its siblings): the replicas at its paths
 * (0 when absent), the selector string when it has one. */
cJSON *apiserver__scale_of(const struct api_resource *res, const cJSON *obj)
{
    static const char *const keep[] = {"name", "namespace", "uid", "resourceVersion",
                                       "creationTimestamp"};
    cJSON *sc = cJSON_CreateObject(), *md, *x;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const char *sel = NULL;
    struct strbuf selector = STRBUF_INIT;

    CHECK(sc && cJSON_AddStringToObject(sc, "kind", "Scale") &&
          cJSON_AddStringToObject(sc, "apiVersion", "autoscaling/v1"));
    CHECK(md = cJSON_AddObjectToObject(sc, "metadata"));
    for (size_t i = 0; i < ARRAY_SIZE(keep); i++)
        if ((x = cJSON_GetObjectItemCaseSensitive(m, keep[i])))
            CHECK(cJSON_AddItemToObject(md, keep[i], cJSON_Duplicate(x, true)));
    x = path_member((cJSON *)obj, res->scale_spec_path, NULL);
    CHECK(cJSON_AddNumberToObject(cJSON_AddObjectToObject(sc, "spec"), "replicas",
                                  cJSON_IsNumber(x) ? x->valuedouble : 0));
    CHECK(x = cJSON_AddObjectToObject(sc, "status"));
    {
        const cJSON *st = path_member((cJSON *)obj, res->scale_status_path, NULL);
        CHECK(cJSON_AddNumberToObject(x, "replicas", cJSON_IsNumber(st) ? st->valuedouble : 0));
    }
    if (res->scale_selector_path) {
        const cJSON *s = path_member((cJSON *)obj, res->scale_selector_path, NULL);
        /* A built-in workload names its LabelSelector; a CRD a selector string. */
        if (cJSON_IsObject(s) && api_selector_string(s, &selector) == 0)
            sel = selector.buf;
        else
            sel = cJSON_GetStringValue(s);
    }
    if (sel && *sel)
        CHECK(cJSON_AddStringToObject(x, "selector", sel));
    strbuf_release(&selector);
    return sc;
}

/*
 * GET, PUT and PATCH of <resource>/<name>/scale: the Scale of the object, and a write of
 * spec.replicas to its specReplicasPath through the update path (same admission, conflicts
 * and answer, given as the Scale).
 */
void apiserver__do_scale(struct apiserver__call *c)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    cJSON *obj = NULL, *sc = NULL, *patch = NULL, *rep;
    struct codec_error err = {0};
    char *sub = c->ri.subresource;
    uint64_t rv = 0;
    const char *want_rv;

    c->as_scale = true;
    if (!strcmp(c->ri.verb, "get")) {
        apiserver__do_get(c);
        return;
    }
    if (strcmp(c->ri.verb, "update") && strcmp(c->ri.verb, "patch")) {
        apiserver__reply_status(c,
                                api_status_failure(405, "MethodNotAllowed",
                                                   "the server does not allow this method on the "
                                                   "requested resource",
                                                   &c->target));
        return;
    }
    if (!(obj = apiserver__read_current(c, &rv)))
        return;
    if (!strcmp(c->ri.verb, "update")) {
        if (!(sc = apiserver__read_body(c)))
            goto out;
    } else {
        const char *ct = http_request_header(c->req, "Content-Type");
        size_t len;
        const char *body = http_request_body(c->req, &len);
        bool json_patch = ct && !strncmp(ct, "application/json-patch+json", 27);
        int r;

        sc = apiserver__scale_of(c->res, obj);
        if (json_parse(body, len, NULL, &patch, &err) < 0) {
            apiserver__reply_bad_request(c, "the patch is not valid JSON");
            goto out;
        }
        /* A Scale has no lists: a strategic merge patch is a merge patch. */
        r = json_patch ? json_patch_apply(&sc, patch, APISERVER__MAX_PATCH_OPS, &err)
                       : merge_patch_apply(&sc, patch, &err);
        if (r < 0) {
            apiserver__reply_status(c, api_status_failure(422, "Invalid", err.msg, &c->target));
            goto out;
        }
    }
    rep =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sc, "spec"), "replicas");
    if (!cJSON_IsNumber(rep) || rep->valuedouble < 0 || rep->valuedouble > INT32_MAX ||
        rep->valuedouble != (double)(int32_t)rep->valuedouble) {
        field_error_add(&errs, FIELD_INVALID, "spec.replicas", NULL,
                        "must be an integer greater than or equal to 0");
        apiserver__reply_status(c, api_status_invalid("Scale", "autoscaling", c->ri.name, &errs));
        goto out;
    }
    (void)path_member(obj, c->res->scale_spec_path, cJSON_CreateNumber(rep->valuedouble));
    /* The Scale's resourceVersion, when given, is the write's precondition. */
    want_rv =
        apiserver__get_string(cJSON_GetObjectItemCaseSensitive(sc, "metadata"), "resourceVersion");
    apiserver__set_string(apiserver__meta_of(obj), "resourceVersion", want_rv ? want_rv : "");
    if (!want_rv || !*want_rv)
        cJSON_DeleteItemFromObjectCaseSensitive(apiserver__meta_of(obj), "resourceVersion");
    c->ri.subresource = (char *)"";
    c->mf_subresource = "scale";
    (void)apiserver__update_once(c, obj, want_rv && *want_rv ? 0 : rv, false);
    c->mf_subresource = NULL;
    c->ri.subresource = sub;
    obj = NULL;
out:
    field_errors_release(&errs);
    cJSON_Delete(obj);
    cJSON_Delete(sc);
    cJSON_Delete(patch);
}
