/*
 * PUT of an object and its status (kube-apiserver's endpoints/handlers/update.go with the
 * generic store's GuaranteedUpdate): update_once() is the write path patch, scale, binding and
 * eviction go through too; the status splice writes a status body without decoding it.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api/crd.h"
#include "apiserver/apiserver-int.h"
#include "apiserver/disruption.h"
#include "apiserver/lifecycle.h"
#include "apiserver/pods.h"
#include "apiserver/registry.h"
#include "base/base.h"
#include "codec/codec.h"
#include "codec/patch.h"
#include "http/server.h"

/* The object's "spec", made when missing. */
static cJSON *member_spec(cJSON *obj)
{
    cJSON *s = cJSON_GetObjectItemCaseSensitive(obj, "spec");
    if (!cJSON_IsObject(s)) {
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "spec");
        CHECK(s = cJSON_AddObjectToObject(obj, "spec"));
    }
    return s;
}

/* Copies key k from src to dst (replacing), or removes it from dst when src lacks it. */
static void carry(cJSON *dst, const cJSON *src, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, k);
    cJSON_DeleteItemFromObjectCaseSensitive(dst, k);
    if (v)
        CHECK(cJSON_AddItemToObject(dst, k, cJSON_Duplicate(v, true)));
}

/* Reads the object a request acts on, with its revision; replies 404 when absent. */
cJSON *apiserver__read_current(struct apiserver__call *c, uint64_t *ret_rv)
{
    struct store_item it = {0};
    int r = store_get(c->srv->store, c->key.buf, &it);
    cJSON *pod;

    if (r < 0) {
        apiserver__reply_status(c, api_status_from_errno(r, NULL, &c->target));
        return NULL;
    }
    pod = apiserver__decode_stored(it.value, it.len, it.rv);
    *ret_rv = it.rv;
    store_item_release(&it);
    apiserver__restamp(c->res, pod);
    if (!pod)
        apiserver__reply_status(c, api_status_from_errno(-EIO, "stored object is corrupt", NULL));
    return pod;
}

/*
 * PUT semantics for a complete new object (owned), shared by update and patch. The client's
 * metadata.resourceVersion, when there is one, is its precondition (409 when stale). Without
 * one the write is unconditional (kube's AllowUnconditionalUpdate), and a write racing ours is
 * not the client's conflict: with `based_on` (the revision obj was computed from, for a patch)
 * or else the revision read here, such a race returns true without replying when `may_retry`,
 * for the caller to do it again over the newer object, as kube's GuaranteedUpdate does.
 */
bool apiserver__update_once(struct apiserver__call *c, cJSON *obj, uint64_t based_on,
                            bool may_retry)
{
    cJSON *meta, *old = NULL, *old_meta, *prev = NULL, *mf = NULL;
    struct webhook_attrs wa;
    struct store_item it = {0};
    struct strbuf bytes = STRBUF_INIT;
    const char *name, *rvs;
    uint64_t expect = 0, rv = 0;
    int64_t v;
    bool by_client = false, again = false;
    double old_gen = 1;
    int r;
    char msg[256];

    strbuf_reset(&c->wh_warnings);
    if (apiserver__is_crd_resource(c->res))
        api_crd_default(obj);
    meta = apiserver__meta_of(obj);
    name = apiserver__get_string(meta, "name");
    if (!name || strcmp(name, c->ri.name)) {
        (void)snprintf(msg, sizeof(msg),
                       "the name of the object (%s) does not match the name on the URL (%s)",
                       name ? name : "", c->ri.name);
        apiserver__reply_bad_request(c, msg);
        goto out;
    }
    if (!apiserver__reconcile_namespace(c, meta, false))
        goto out;
    rvs = apiserver__get_string(meta, "resourceVersion");
    if (rvs && *rvs) {
        if (parse_i64(rvs, &v) < 0 || v <= 0) {
            apiserver__reply_bad_request(
                c, "metadata.resourceVersion is not a valid resource version");
            goto out;
        }
        expect = (uint64_t)v;
        by_client = true;
    } else {
        expect = based_on;
    }
    r = store_get(c->srv->store, c->key.buf, &it);
    if (r < 0) {
        apiserver__reply_status(c, api_status_from_errno(r, NULL, &c->target));
        goto out;
    }
    old = apiserver__decode_stored(it.value, it.len, it.rv);
    if (!old) {
        apiserver__reply_status(c, api_status_from_errno(-EIO, "stored object is corrupt", NULL));
        goto out;
    }
    if (expect && expect != it.rv) {
        if (!by_client && may_retry)
            again = true;
        else
            apiserver__reply_status(c, api_status_conflict(&c->target));
        goto out;
    }
    expect = it.rv;
    old_meta = apiserver__meta_of(old);
    {
        const cJSON *gen = cJSON_GetObjectItemCaseSensitive(old_meta, "generation");
        old_gen = cJSON_IsNumber(gen) ? gen->valuedouble : 1;
    }
    if (!apiserver__managed_fields(c, old, obj, &mf))
        goto out;
    apiserver__wh_attrs(c, WEBHOOK_UPDATE, NULL, &wa);
    if (!strcmp(c->ri.subresource, "status") && webhooks_wanted(c->srv->webhooks, &wa))
        CHECK(prev = cJSON_Duplicate(old, true)); /* the status write takes old over */
    if (!strcmp(c->ri.subresource, "status")) {
        /* /status writes change only status: the stored object with the new status, used as
         * it is (no copy: nothing below needs the old one, as nothing else changes). */
        cJSON *st = cJSON_DetachItemFromObjectCaseSensitive(obj, "status");
        cJSON_Delete(obj);
        obj = old;
        old = NULL;
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
        if (st)
            CHECK(cJSON_AddItemToObject(obj, "status", st));
        meta = apiserver__meta_of(obj);
    } else if (*c->ri.subresource && !apiserver__is_ns_finalize(c)) {
        apiserver__reply_not_served(c);
        goto out;
    } else if (apiserver__has_status_subresource(c->res)) {
        carry(obj, old, "status"); /* the main resource ignores status changes */
    }
    if ((old && !apiserver__node_may(c, old)) || !apiserver__node_may(c, obj))
        goto out;
    /* Server-owned metadata stays as it was (a status write kept it all). */
    if (old) {
        carry(meta, old_meta, "uid");
        carry(meta, old_meta, "creationTimestamp");
        carry(meta, old_meta, "deletionTimestamp");
        carry(meta, old_meta, "deletionGracePeriodSeconds");
        if (apiserver__is_namespaces(c->res) && !*c->ri.subresource)
            carry(member_spec(obj), cJSON_GetObjectItem(old, "spec"), "finalizers");
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "generation");
        CHECK(cJSON_AddNumberToObject(meta, "generation", old_gen));
    }
    if (!*c->ri.subresource && !apiserver__admit(c, old, obj))
        goto out;
    wa.old = old ? old : prev;
    if (!apiserver__wh_mutate(c, &wa, &obj))
        goto out;
    /* What the strategies' PrepareForUpdate does after mutating admission: a status write
     * keeps only the status a webhook left, a write of the main resource the stored status. */
    if (prev) {
        cJSON *st = cJSON_DetachItemFromObjectCaseSensitive(obj, "status");
        cJSON_Delete(obj);
        CHECK(obj = cJSON_Duplicate(prev, true));
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
        if (st)
            CHECK(cJSON_AddItemToObject(obj, "status", st));
    } else if ((!*c->ri.subresource || apiserver__is_ns_finalize(c)) &&
               apiserver__has_status_subresource(c->res)) {
        carry(obj, old, "status");
    }
    meta = apiserver__meta_of(obj);
    name = apiserver__get_string(meta, "name");
    if (!name || strcmp(name, c->ri.name)) {
        apiserver__reply_bad_request(c, "an admission webhook changed the name of the object");
        goto out;
    }
    if (!apiserver__reconcile_namespace(c, meta, false))
        goto out;
    if (apiserver__is_pods(c->res) && !*c->ri.subresource) {
        struct field_errors errs = FIELD_ERRORS_INIT;
        pods_default_tolerations(obj);
        pods_validate_update(old, obj, &errs);
        if (field_errors_count(&errs)) {
            apiserver__reply_status(c, api_status_invalid(c->res->kind, "", c->ri.name, &errs));
            field_errors_release(&errs);
            goto out;
        }
        field_errors_release(&errs);
    }
    apiserver__set_managed_fields(obj, mf);
    mf = NULL;
    if (!apiserver__validate(c, obj))
        goto out;
    if ((r = apiserver__finish_object(c, obj)) < 0) {
        apiserver__reply_status(c, api_status_from_errno(r, NULL, NULL));
        goto out;
    }
    if (old) {
        /* The generation counts spec changes (the strategies' PrepareForUpdate), compared
         * after defaulting so that a field left to its default is no change. */
        const cJSON *ns = cJSON_GetObjectItem(obj, "spec"), *os = cJSON_GetObjectItem(old, "spec");
        cJSON *m = apiserver__meta_of(obj);
        cJSON_DeleteItemFromObjectCaseSensitive(m, "generation");
        CHECK(cJSON_AddNumberToObject(
            m, "generation", (ns || os) && !json_value_equal(ns, os) ? old_gen + 1 : old_gen));
    }
    if (c->res->builtin && c->res->builtin->prepare_update && old && !*c->ri.subresource)
        c->res->builtin->prepare_update(old, obj);
    if (c->res->builtin && c->res->builtin->check_update && old && !*c->ri.subresource) {
        struct field_errors errs = FIELD_ERRORS_INIT;
        c->res->builtin->check_update(old, obj, &errs);
        if (field_errors_count(&errs)) {
            apiserver__reply_status(
                c, api_status_invalid(c->res->kind, c->res->group, c->ri.name, &errs));
            field_errors_release(&errs);
            goto out;
        }
        field_errors_release(&errs);
    }
    if (apiserver__is_pods(c->res) && !*c->ri.subresource) {
        /* After defaulting, so that fields the client left to their defaults compare equal. */
        struct field_errors errs = FIELD_ERRORS_INIT;
        pods_check_spec_update(old, obj, &errs);
        if (field_errors_count(&errs)) {
            apiserver__reply_status(c, api_status_invalid(c->res->kind, "", c->ri.name, &errs));
            field_errors_release(&errs);
            goto out;
        }
        field_errors_release(&errs);
    }
    if (apiserver__is_crd_resource(c->res))
        apiserver__crd_set_status(obj);
    /* A budget's status follows its spec at once (disruption.h), as the controller's would. */
    if (apiserver__is_pdb(c->res) && !*c->ri.subresource &&
        (r = disruption_refresh(c->srv->store, obj, (int64_t)time(NULL))) < 0) {
        apiserver__reply_status(c, api_status_from_errno(r, NULL, NULL));
        goto out;
    }
    if (apiserver__is_crd_resource(c->res) && !apiserver__crd_servable(c, obj))
        goto out;
    if (!apiserver__wh_validate(c, &wa, obj))
        goto out;
    if (apiserver__encode_for_store(obj, &bytes) < 0) {
        apiserver__reply_status(c, api_status_from_errno(-ENOMEM, NULL, NULL));
        goto out;
    }
    if (c->dry_run) {
        /* Everything but the write: the answer carries the stored revision. */
        char buf[24];
        (void)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)expect);
        apiserver__set_string(apiserver__meta_of(obj), "resourceVersion", buf);
        apiserver__reply(c, 200, obj);
        obj = NULL;
        goto out;
    }
    if (old && apiserver__deletes_during_update(c->res, old, obj)) {
        /* The last finalizer is gone: the deletion completes now. */
        r = store_delete(c->srv->store, c->key.buf, expect, NULL, &rv);
        if (r < 0)
            apiserver__reply_status(c, r == -ESTALE ? api_status_conflict(&c->target)
                                                    : api_status_from_errno(r, NULL, &c->target));
        else
            apiserver__reply(c, 200, obj);
        obj = NULL;
        goto out;
    }
    r = store_update(c->srv->store, c->key.buf, bytes.buf, bytes.len, expect, &rv);
    if (r == -ESTALE && !by_client && may_retry) {
        again = true;
        goto out;
    }
    if (r < 0) {
        apiserver__reply_status(c, r == -ESTALE ? api_status_conflict(&c->target)
                                                : api_status_from_errno(r, NULL, &c->target));
        goto out;
    }
    if (apiserver__is_crd_resource(c->res))
        (void)apiserver__serve_crd(c, obj);
    /* A terminating namespace may have lost its last finalizer: the worker looks now. */
    if (apiserver__is_namespaces(c->res) && lifecycle_ns_terminating(obj))
        lifecycle_kick(c->srv->lifecycle);
    {
        char buf[24];
        (void)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)rv);
        apiserver__set_string(apiserver__meta_of(obj), "resourceVersion", buf);
    }
    apiserver__reply(c, 200, obj);
    obj = NULL;
out:
    store_item_release(&it);
    strbuf_release(&bytes);
    cJSON_Delete(obj);
    cJSON_Delete(old);
    cJSON_Delete(prev);
    cJSON_Delete(mf);
    return again;
}

/* A member's raw value is exactly the JSON string "want". */
static bool member_is_string(const char *body, const struct json_member *m, const char *want)
{
    size_t n = strlen(want);

    return m->end - m->start == n + 2 && body[m->start] == '"' && body[m->end - 1] == '"' &&
           !memcmp(body + m->start + 1, want, n);
}

static bool member_named(const struct json_member *m, const char *name)
{
    return m->key_len == strlen(name) && !memcmp(m->key, name, m->key_len);
}

/*
 * Where the stored object's status value starts, or 0 unless it is the object's last member:
 * the new status then goes in up to the closing brace and nothing after it can be lost. Stored
 * objects hold the kind's properties only, once each (writes are validated and pruned), so
 * status is last when every other property of the schema came before it: that is checked on
 * the small members in front, without walking the status (17 KB in a report) to its end.
 */
static size_t stored_status_start(const struct store_item *it, const struct api_schema *schema)
{
    struct json_member m;
    size_t pos = 0, nprops = 0;
    uint64_t seen = 0, all;

    if (!schema->props || (schema->flags & API_S_PRESERVE))
        return 0; /* unknown members may be stored too */
    for (const struct api_prop *p = schema->props; p->name; p++)
        nprops++;
    if (nprops > 64)
        return 0;
    all = nprops == 64 ? ~(uint64_t)0 : ((uint64_t)1 << nprops) - 1;
    while (json_member_key(it->value, it->len, &pos, &m) == 0) {
        const struct api_prop *p;
        uint64_t bit;

        for (p = schema->props; p->name && !member_named(&m, p->name); p++)
            ;
        if (!p->name)
            return 0;
        bit = (uint64_t)1 << (p - schema->props);
        if (seen & bit)
            return 0;
        seen |= bit;
        if (!strcmp(p->name, "status"))
            return seen == all && it->value[it->len - 1] == '}' ? m.start : 0;
        if (!(pos = json_value_end(it->value, it->len, m.start)))
            return 0;
    }
    return 0;
}

/* Whether body[pos..len) holds only the object's closing brace, with whitespace around it:
 * after the last member, what json_parse() accepts. */
static bool only_closing_brace(const char *body, size_t len, size_t pos)
{
    bool brace = false;

    for (; pos < len; pos++) {
        if (body[pos] == '}' && !brace)
            brace = true;
        else if (body[pos] != ' ' && body[pos] != '\t' && body[pos] != '\n' && body[pos] != '\r')
            return false;
    }
    return brace;
}

/*
 * A /status PUT whose status is already in canonical form (api_canonical_check) when the
 * server was made with apiserver_opts.status_splice: the request's status bytes replace the
 * stored object's, no tree is built of either, and the answer is the new bytes with the
 * resourceVersion spliced in. These are the bytes apiserver__update_once() would write and answer.
 * Returns false having replied nothing whenever the request needs apiserver__update_once(): any
 * other body shape (members other than apiVersion, kind, metadata, spec and status, or any twice),
 * a resourceVersion that is not the stored one, a node identity whose objects must be checked, a
 * dry run, a write that lost a race. That path then also writes every error.
 */
static bool splice_status_write(struct apiserver__call *c)
{
    enum { AV = 1, KIND = 2, META = 4, SPEC = 8, STATUS = 16 };
    const char *body, *name, *rvs, *ns;
    const struct api_schema *schema =
        c->res->builtin ? api_kind_schema(c->res->builtin) : c->res->schema;
    const struct api_prop *sp = schema ? api_schema_prop(schema, "status") : NULL;
    struct strbuf av = STRBUF_INIT, bytes = STRBUF_INIT;
    struct json_member m, st = {0};
    struct store_item it = {0};
    size_t len, pos = 0, ss, se, vlen;
    unsigned seen = 0, bit;
    uint64_t expect = 0, rv;
    cJSON *meta = NULL;
    bool done = false;
    int64_t v;
    int r;

    if (!c->srv->status_splice || c->dry_run || c->check_objects || !sp ||
        apiserver__is_crd_resource(c->res) || c->res->multi_version || !apiserver__json_body(c))
        return false;
    body = http_request_body(c->req, &len);
    /* json_parse's limits (a value takes two bytes at least): its errors, not ours */
    if (len > codec_default_limits.max_bytes || len / 2 >= codec_default_limits.max_nodes)
        return false;
    apiserver__api_version_of(c->res, &av);
    while ((r = json_member_key(body, len, &pos, &m)) == 0) {
        bit = member_named(&m, "apiVersion") ? AV
              : member_named(&m, "kind")     ? KIND
              : member_named(&m, "metadata") ? META
              : member_named(&m, "spec")     ? SPEC
              : member_named(&m, "status")   ? STATUS
                                             : 0;
        if (!bit || (seen & bit))
            goto out;
        seen |= bit;
        /* status is checked where it lies (that one walk finds its end), the rest skipped */
        if (bit == STATUS) {
            if (!api_canonical_prefix(sp->schema, body + m.start, len - m.start, 0, &vlen))
                goto out;
            m.end = m.start + vlen;
            st = m;
        } else if (!(m.end = json_value_end(body, len, m.start))) {
            goto out;
        }
        pos = m.end;
        if ((bit == AV && !member_is_string(body, &m, av.buf)) ||
            (bit == KIND && !member_is_string(body, &m, c->res->kind)))
            goto out;
        if (bit == META && json_parse(body + m.start, m.end - m.start, NULL, &meta, NULL) < 0)
            goto out;
        if (bit == SPEC) { /* ignored, as by apiserver__update_once(), but it must be JSON */
            cJSON *spec = NULL;
            r = json_parse(body + m.start, m.end - m.start, NULL, &spec, NULL);
            cJSON_Delete(spec);
            if (r < 0)
                goto out;
        }
    }
    /* trailing bytes are the general path's 400, never stored */
    if (r != -ENOENT || !only_closing_brace(body, len, pos) || !(seen & STATUS) ||
        !cJSON_IsObject(meta))
        goto out;
    name = apiserver__get_string(meta, "name");
    ns = apiserver__get_string(meta, "namespace");
    rvs = apiserver__get_string(meta, "resourceVersion");
    if (!name || strcmp(name, c->ri.name) ||
        (c->res->namespaced && ns && *ns && strcmp(ns, c->ri.namespace)))
        goto out;
    if (rvs && *rvs) {
        if (parse_i64(rvs, &v) < 0 || v <= 0)
            goto out;
        expect = (uint64_t)v;
    }
    if (store_get(c->srv->store, c->key.buf, &it) < 0 || (expect && expect != it.rv) ||
        !it.obj->splice_at || !(ss = stored_status_start(&it, schema)) || ss < it.obj->splice_at)
        goto out;
    se = it.len - 1;
    strbuf_add(&bytes, it.value, ss);
    strbuf_add(&bytes, body + st.start, st.end - st.start);
    strbuf_add(&bytes, it.value + se, it.len - se);
    if (store_update(c->srv->store, c->key.buf, bytes.buf, bytes.len, it.rv, &rv) < 0)
        goto out;
    /* metadata, and so the splice point, come before status and are unchanged */
    CHECK(apiserver__splice_bytes(bytes.buf, bytes.len, it.obj->splice_at, it.obj->splice_comma, rv,
                                  apiserver__partial_of(c), NULL, &c->resp->body));
    c->resp->status = 200;
    c->resp->content_type = "application/json";
    atomic_fetch_add_explicit(&c->srv->status_splices, 1, memory_order_relaxed);
    done = true;
out:
    store_item_release(&it);
    strbuf_release(&av);
    strbuf_release(&bytes);
    cJSON_Delete(meta);
    return done;
}

void apiserver__do_update(struct apiserver__call *c)
{
    struct webhook_attrs wa;

    apiserver__wh_attrs(c, WEBHOOK_UPDATE, NULL, &wa);
    /* The fast path admits nothing: taken only when no webhook wants the write. */
    if (!strcmp(c->ri.subresource, "status") && !webhooks_wanted(c->srv->webhooks, &wa) &&
        splice_status_write(c))
        return;
    /* The body is decoded again for another try (rare) rather than copied for one each time. */
    for (int i = 1;; i++) {
        cJSON *obj = apiserver__read_body(c);

        if (!obj || !apiserver__update_once(c, obj, 0, i < APISERVER__UPDATE_TRIES))
            break;
    }
}
