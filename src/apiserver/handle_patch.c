/*
 * PATCH (kube-apiserver's endpoints/handlers/patch.go): JSON patch, merge patch and strategic
 * merge patch applied to the stored object and written through the update path, and
 * server-side apply (the merge itself is apply.c), which patch.go serves as one more patch type.
 */
#include <string.h>
#include <time.h>

#include "api/patchmeta.h"
#include "api/rfc3339.h"
#include "apiserver/apiserver-int.h"
#include "apiserver/apply.h"
#include "apiserver/registry.h"
#include "base/base.h"
#include "codec/codec.h"
#include "codec/patch.h"
#include "http/server.h"

/* ---- patch (reference 3.5) ---- */

static bool patch_sets_rv(const cJSON *patch, bool json_patch)
{
    const cJSON *op;

    if (!json_patch)
        return cJSON_GetObjectItem(cJSON_GetObjectItem(patch, "metadata"), "resourceVersion") !=
               NULL;
    cJSON_ArrayForEach(op, patch)
    {
        const char *path = apiserver__get_string(op, "path");
        if (path && !strcmp(path, "/metadata/resourceVersion"))
            return true;
    }
    return false;
}

/*
 * Server-side apply (apply.h): PATCH with Content-Type application/apply-patch+yaml. The body
 * is the applied configuration in YAML or JSON; fieldManager is required (422 on PatchOptions
 * otherwise, as ValidatePatchOptions); force=true takes conflicting fields over. The object is
 * created when absent (201), left unwritten when nothing changes, and otherwise written
 * through the update path (admission, validation, optimistic concurrency with retries).
 */
static void do_apply(struct apiserver__call *c)
{
    const char *fm = http_request_query(c->req, "fieldManager");
    const char *fs = http_request_query(c->req, "force");
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct codec_error err = {0};
    struct strbuf msg = STRBUF_INIT, want = STRBUF_INIT;
    size_t len, ndocs = 0;
    const char *body = http_request_body(c->req, &len), *av, *kind, *name;
    cJSON **docs = NULL, *config, *obj = NULL, *st = NULL;
    bool force = fs && (!strcmp(fs, "true") || !strcmp(fs, "1"));
    char now[RFC3339_STR_MAX];
    int r;

    if (!fm || !*fm)
        field_error_add(&errs, FIELD_REQUIRED, "fieldManager", NULL, "is required for apply patch");
    apply_check_field_manager(fm, &errs);
    if (fs && !force && strcmp(fs, "false") && strcmp(fs, "0"))
        field_error_add(&errs, FIELD_INVALID, "force", fs, "must be true or false");
    if (field_errors_count(&errs)) {
        apiserver__reply_status(c, api_status_invalid("PatchOptions", "meta.k8s.io", "", &errs));
        goto out;
    }
    if (yaml_parse_stream(body, len, NULL, &docs, &ndocs, &err) < 0 || ndocs != 1 ||
        !cJSON_IsObject(docs[0])) {
        strbuf_addf(&msg, "error decoding YAML: %s",
                    err.msg[0] ? err.msg : "the body must hold exactly one object");
        apiserver__reply_bad_request(c, msg.buf);
        goto out;
    }
    config = docs[0];
    av = apiserver__get_string(config, "apiVersion");
    kind = apiserver__get_string(config, "kind");
    strbuf_addf(&want, "%s%s%s", c->res->group, *c->res->group ? "/" : "", c->res->version);
    if (!kind || !*kind || !av || !*av) {
        strbuf_addf(&msg, "Object '%s' is missing in the applied configuration",
                    !kind || !*kind ? "Kind" : "apiVersion");
        apiserver__reply_bad_request(c, msg.buf);
        goto out;
    }
    if (strcmp(av, want.buf) || strcmp(kind, c->res->kind)) {
        strbuf_addf(&msg,
                    "the apiVersion and kind of the applied configuration (%s, %s) do not match "
                    "the resource (%s, %s)",
                    av, kind, want.buf, c->res->kind);
        apiserver__reply_bad_request(c, msg.buf);
        goto out;
    }
    name = apiserver__get_string(cJSON_GetObjectItem(config, "metadata"), "name");
    if (!name || strcmp(name, c->ri.name)) {
        strbuf_addf(&msg, "the name of the object (%s) does not match the name on the URL (%s)",
                    name ? name : "", c->ri.name);
        apiserver__reply_bad_request(c, msg.buf);
        goto out;
    }
    for (int i = 1;; i++) {
        struct store_item it = {0};
        cJSON *live = NULL;
        bool unchanged = false;

        r = store_get(c->srv->store, c->key.buf, &it);
        if (r < 0 && r != -ENOENT) {
            apiserver__reply_status(c, api_status_from_errno(r, NULL, &c->target));
            break;
        }
        if (r == 0 && !(live = apiserver__decode_stored(it.value, it.len, it.rv))) {
            store_item_release(&it);
            apiserver__reply_status(c,
                                    api_status_from_errno(-EIO, "stored object is corrupt", NULL));
            break;
        }
        apiserver__restamp(c->res, live);
        (void)rfc3339_format((int64_t)time(NULL), now);
        r = apply_patch(c->res, c->ri.subresource, live, config, fm, force, now, &obj, &unchanged,
                        &st);
        cJSON_Delete(live);
        if (r < 0) {
            store_item_release(&it);
            apiserver__reply_status(c, st);
            break;
        }
        if (unchanged) {
            store_item_release(&it);
            apiserver__reply(c, 200, obj);
            obj = NULL;
            break;
        }
        c->applied = true;
        /* Only a resourceVersion the configuration itself sets is a precondition. */
        if (!apiserver__get_string(cJSON_GetObjectItem(config, "metadata"), "resourceVersion"))
            cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItem(obj, "metadata"),
                                                    "resourceVersion");
        if (!it.value) {
            if (*c->ri.subresource) {
                apiserver__reply_status(c, api_status_not_found(&c->target));
                break;
            }
            apiserver__create_object(c, obj);
            obj = NULL;
            break;
        }
        r = apiserver__update_once(c, obj, it.rv, i < APISERVER__UPDATE_TRIES);
        obj = NULL;
        store_item_release(&it);
        if (!r)
            break;
    }
out:
    cJSON_Delete(obj);
    codec_docs_free(docs, ndocs);
    field_errors_release(&errs);
    strbuf_release(&msg);
    strbuf_release(&want);
}

void apiserver__do_patch(struct apiserver__call *c)
{
    const char *ct = http_request_header(c->req, "Content-Type");
    struct codec_error err = {0};
    struct strbuf msg = STRBUF_INIT;
    size_t len;
    const char *body = http_request_body(c->req, &len);
    cJSON *patch = NULL, *obj = NULL;
    const struct api_patch_meta *meta = NULL;
    uint64_t rv = 0;
    bool json_patch = ct && !strncmp(ct, "application/json-patch+json", 27);
    bool merge = ct && !strncmp(ct, "application/merge-patch+json", 28);
    bool smp = ct && !strncmp(ct, "application/strategic-merge-patch+json", 38);
    int r;

    if (ct && !strncmp(ct, "application/apply-patch+yaml", 28)) {
        do_apply(c);
        return;
    }
    if (!json_patch && !merge && !smp) {
        /* application/apply-patch+cbor included: koord has no CBOR codec. */
        apiserver__reply_status(
            c, api_status_failure(415, "UnsupportedMediaType",
                                  "the body of the request was in an unknown format - "
                                  "accepted media types include: "
                                  "application/json-patch+json, "
                                  "application/merge-patch+json, "
                                  "application/apply-patch+yaml, "
                                  "application/strategic-merge-patch+json",
                                  NULL));
        return;
    }
    if (http_request_query(c->req, "force")) {
        struct field_errors errs = FIELD_ERRORS_INIT;
        field_error_add(&errs, FIELD_FORBIDDEN, "force", NULL,
                        "may not be specified for non-apply patch");
        apiserver__reply_status(c, api_status_invalid("PatchOptions", "meta.k8s.io", "", &errs));
        field_errors_release(&errs);
        return;
    }
    if (json_parse(body, len, NULL, &patch, &err) < 0) {
        strbuf_addf(&msg, "the patch is not valid JSON: %s", err.msg);
        apiserver__reply_bad_request(c, msg.buf);
        goto out;
    }
    /* Built-in kinds only, as kube-apiserver: custom resources have no patch metadata. */
    if (smp &&
        !(meta = c->res->crd_name ? NULL : api_patch_meta_find(c->res->group, c->res->kind))) {
        apiserver__reply_status(
            c, api_status_failure(415, "UnsupportedMediaType",
                                  "strategic merge patch is not supported for custom "
                                  "resources; use application/merge-patch+json or "
                                  "application/json-patch+json",
                                  NULL));
        goto out;
    }
    if (json_patch && !cJSON_IsArray(patch)) {
        apiserver__reply_bad_request(c, "a JSON patch must be an array of operations");
        goto out;
    }
    if (json_patch && cJSON_GetArraySize(patch) > APISERVER__MAX_PATCH_OPS) {
        apiserver__reply_status(
            c, api_status_failure(413, "RequestEntityTooLarge",
                                  "the JSON patch has more than 10000 operations", NULL));
        goto out;
    }
    /* Applied to the object read; done again over a newer one when a write raced ours
     * (update_once), unless the patch itself names the resourceVersion. */
    for (int i = 1;; i++) {
        if (!(obj = apiserver__read_current(c, &rv)))
            goto out;
        if (json_patch)
            r = json_patch_apply(&obj, patch, APISERVER__MAX_PATCH_OPS, &err);
        else if (smp)
            r = strategic_merge_patch_apply(&obj, patch, api_patch_meta_lookup, meta, &err);
        else
            r = merge_patch_apply(&obj, patch, &err);
        if (r == -ENOMEM || r == -E2BIG) {
            apiserver__reply_status(c, api_status_from_errno(r, err.msg, NULL));
            goto out;
        }
        /* A strategic merge patch that does not apply is malformed (smp.h). */
        if (r < 0 && smp) {
            apiserver__reply_bad_request(c, err.msg);
            goto out;
        }
        if (r < 0) {
            struct field_errors errs = FIELD_ERRORS_INIT;
            field_error_add(&errs, FIELD_INVALID, "", NULL, "%s", err.msg);
            apiserver__reply_status(
                c, api_status_invalid(c->res->kind, c->res->group, c->ri.name, &errs));
            field_errors_release(&errs);
            goto out;
        }
        if (!cJSON_IsObject(obj)) {
            apiserver__reply_bad_request(c, "the patched object is not a JSON object");
            goto out;
        }
        /* Only a resourceVersion the patch itself sets is a precondition (reference 3.5). */
        if (!patch_sets_rv(patch, json_patch))
            cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItem(obj, "metadata"),
                                                    "resourceVersion");
        r = apiserver__update_once(c, obj, rv, i < APISERVER__UPDATE_TRIES);
        obj = NULL;
        if (!r)
            break;
    }
out:
    cJSON_Delete(patch);
    cJSON_Delete(obj);
    strbuf_release(&msg);
}
