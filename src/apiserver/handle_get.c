/*
 * GET of one object and of a collection (kube-apiserver's endpoints/handlers/get.go: GetResource
 * and ListResource): Table output, label and field selectors, paging with continue tokens, and
 * the streamed list answer. The selectors are shared with watch and deletecollection.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/crd.h"
#include "api/labels.h"
#include "apiserver/apiserver-int.h"
#include "apiserver/registry.h"
#include "base/base.h"
#include "base/base64.h"
#include "codec/codec.h"
#include "http/server.h"

/* ---- Table output (reference 10.3) ---- */

/* Whether the client asked for a meta.k8s.io Table (kubectl get sends
 * "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"). */
bool apiserver__wants_table(const struct apiserver__call *c)
{
    return c->out.as == NEGOTIATE_TABLE;
}

/* The apiVersion of the PartialObjectMetadata a one-object answer is to be, or NULL. */
const char *apiserver__partial_of(const struct apiserver__call *c)
{
    return c->out.as == NEGOTIATE_PARTIAL ? c->out.api_version : NULL;
}

/* The static description behind a resource, also for the Koordinator kinds served from their
 * CRDs (their printer columns come from the same tables). */
const struct api_kind *apiserver__kind_of(const struct api_resource *res)
{
    struct strbuf av = STRBUF_INIT;
    const struct api_kind *k;

    if (res->builtin)
        return res->builtin;
    apiserver__api_version_of(res, &av);
    k = api_kind_find(av.buf, res->kind);
    strbuf_release(&av);
    return k;
}

/* The Table of objects of res: a CRD's own printer columns (whatever kind it serves), else
 * the printer of its kind k. */
cJSON *apiserver__build_table(const struct api_resource *res, const struct api_kind *k,
                              const cJSON *const *objs, size_t n, const char *rv, const char *cont,
                              enum table_include inc)
{
    if (res->crd_name)
        return table_build_crd(res->columns, res->ncolumns, objs, n, rv, cont, (int64_t)time(NULL),
                               inc);
    if (!k && !strcmp(res->group, "apiextensions.k8s.io"))
        return table_build_default(objs, n, rv, cont, (int64_t)time(NULL), inc);
    return table_build(k, objs, n, rv, cont, (int64_t)time(NULL), inc);
}

static void reply_table(struct apiserver__call *c, const cJSON *const *objs, size_t n,
                        const char *rv, const char *cont)
{
    const char *inc = http_request_query(c->req, "includeObject");
    enum table_include mode = TABLE_INCLUDE_METADATA;

    if (inc && !strcmp(inc, "Object"))
        mode = TABLE_INCLUDE_OBJECT;
    else if (inc && !strcmp(inc, "None"))
        mode = TABLE_INCLUDE_NONE;
    apiserver__reply(
        c, 200,
        apiserver__build_table(c->res, apiserver__kind_of(c->res), objs, n, rv, cont, mode));
}

/* ---- get and list ---- */

void apiserver__do_get(struct apiserver__call *c)
{
    struct store_item it = {0};
    struct strbuf av = STRBUF_INIT;
    int r = store_get(c->srv->store, c->key.buf, &it);
    bool spliced;
    cJSON *o;

    if (r < 0) {
        apiserver__reply_status(c, api_status_from_errno(r, NULL, &c->target));
        return;
    }
    spliced = !c->as_scale && !apiserver__wants_table(c) &&
              apiserver__splice_stored(it.obj, it.rv, apiserver__partial_of(c),
                                       apiserver__restamp_version(c->res, &av), &c->resp->body);
    strbuf_release(&av);
    if (spliced) {
        c->resp->status = 200;
        c->resp->content_type = "application/json";
        store_item_release(&it);
        return;
    }
    o = apiserver__decode_stored(it.value, it.len, it.rv);
    store_item_release(&it);
    if (!o) {
        apiserver__reply_status(c, api_status_from_errno(-EIO, "stored object is corrupt", NULL));
        return;
    }
    if (apiserver__wants_table(c) && !c->as_scale) {
        const cJSON *one[1] = {o};
        reply_table(c, one, 1,
                    apiserver__get_string(cJSON_GetObjectItem(o, "metadata"), "resourceVersion"),
                    NULL);
        cJSON_Delete(o);
        return;
    }
    apiserver__reply(c, 200, o);
}

/* Parses "k=v,k2!=v2" with \\ , = escapes (fields/selector.go). -EINVAL on syntax. */
static int parse_field_selector(const char *s, struct apiserver__field_req **ret, size_t *ret_n)
{
    struct apiserver__field_req *v = NULL;
    size_t n = 0;
    const char *p = s;
    int r = 0;

    while (p && *p) {
        struct strbuf k = STRBUF_INIT, val = STRBUF_INIT;
        bool neq = false, have_op = false;

        for (; *p && *p != ','; p++) {
            if (!have_op && (*p == '=' || (*p == '!' && p[1] == '='))) {
                neq = *p == '!';
                p += neq ? 1 : (p[1] == '=' ? 1 : 0);
                have_op = true;
                continue;
            }
            if (*p == '\\' && p[1]) {
                p++;
            }
            strbuf_addch(have_op ? &val : &k, *p);
        }
        if (!have_op || !k.len) {
            strbuf_release(&k);
            strbuf_release(&val);
            r = -EINVAL;
            break;
        }
        v = xrealloc(v, (n + 1) * sizeof(*v));
        v[n].key = strbuf_detach(&k, NULL);
        v[n].value = strbuf_detach(&val, NULL);
        v[n].neq = neq;
        n++;
        if (*p == ',')
            p++;
    }
    if (r < 0) {
        for (size_t i = 0; i < n; i++) {
            free(v[i].key);
            free(v[i].value);
        }
        free(v);
        return r;
    }
    *ret = v;
    *ret_n = n;
    return 0;
}

void apiserver__field_reqs_free(struct apiserver__field_req *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].key);
        free(v[i].value);
    }
    free(v);
}

/* The field keys each resource supports besides metadata.name and metadata.namespace. */
static bool field_supported(const struct api_resource *res, const char *key)
{
    static const char *const pod_fields[] = {"spec.nodeName",
                                             "spec.restartPolicy",
                                             "spec.schedulerName",
                                             "spec.serviceAccountName",
                                             "status.phase",
                                             "status.podIP",
                                             "status.nominatedNodeName",
                                             NULL};
    static const char *const event_fields[] = {"involvedObject.kind",
                                               "involvedObject.namespace",
                                               "involvedObject.name",
                                               "involvedObject.uid",
                                               "involvedObject.apiVersion",
                                               "involvedObject.resourceVersion",
                                               "involvedObject.fieldPath",
                                               "reason",
                                               "source",
                                               "type",
                                               "reportingComponent",
                                               NULL};
    /* The other kinds' SelectableFields (registry/<group>/<kind>/strategy.go). */
    static const struct {
        const char *group, *plural, *field;
    } more[] = {
        {"apps", "replicasets", "status.replicas"},
        {"batch", "jobs", "status.successful"},
        {"events.k8s.io", "events", "regarding.kind"},
        {"events.k8s.io", "events", "regarding.namespace"},
        {"events.k8s.io", "events", "regarding.name"},
        {"events.k8s.io", "events", "regarding.uid"},
        {"events.k8s.io", "events", "reason"},
        {"events.k8s.io", "events", "type"},
        {"events.k8s.io", "events", "reportingController"},
    };
    const char *const *list = NULL;

    if (!strcmp(key, "metadata.name") || !strcmp(key, "metadata.namespace"))
        return true;
    for (size_t i = 0; i < ARRAY_SIZE(more); i++)
        if (!strcmp(res->group, more[i].group) && !strcmp(res->plural, more[i].plural) &&
            !strcmp(key, more[i].field))
            return true;
    if (!*res->group && !strcmp(res->plural, "pods"))
        list = pod_fields;
    else if (!*res->group && !strcmp(res->plural, "events"))
        list = event_fields;
    for (; list && *list; list++)
        if (!strcmp(*list, key))
            return true;
    return false;
}

/* The value of a dotted field path as a string ("" when absent); events' "source" is the
 * source component; counters (a Job's status.successful) are their decimal text, 0 when
 * absent, as strconv.Itoa writes the Go field. */
static const char *field_value(const cJSON *obj, const char *key)
{
    static _Thread_local char num[24];
    char path[128];
    const cJSON *v = obj;

    if (!strcmp(key, "source"))
        key = "source.component";
    if (!strcmp(key, "status.successful") || !strcmp(key, "status.replicas")) {
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(obj, "status");
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(
            st, strcmp(key, "status.successful") ? "replicas" : "succeeded");
        (void)snprintf(num, sizeof(num), "%lld",
                       cJSON_IsNumber(n) ? (long long)n->valuedouble : 0LL);
        return num;
    }
    (void)snprintf(path, sizeof(path), "%s", key);
    for (char *seg = path, *dot; seg && v; seg = dot ? dot + 1 : NULL) {
        dot = strchr(seg, '.');
        if (dot)
            *dot = '\0';
        v = cJSON_GetObjectItemCaseSensitive(v, seg);
    }
    return v && cJSON_IsString(v) ? v->valuestring : "";
}

/* The labelSelector and fieldSelector of a list or watch; replies 400 and returns false when
 * either is malformed or names a field the resource does not support. */
bool apiserver__parse_selectors(struct apiserver__call *c, struct label_selector **ret_labels,
                                struct apiserver__field_req **ret_fields, size_t *ret_n)
{
    const char *ls = http_request_query(c->req, "labelSelector");
    const char *fs = http_request_query(c->req, "fieldSelector");
    struct strbuf err = STRBUF_INIT;
    bool ok = false;

    if (ls && *ls && label_selector_parse(ls, ret_labels, &err) < 0) {
        apiserver__reply_bad_request(c, err.buf);
        goto out;
    }
    if (fs && *fs) {
        if (parse_field_selector(fs, ret_fields, ret_n) < 0) {
            strbuf_addf(&err, "invalid field selector: \"%s\"", fs);
            apiserver__reply_bad_request(c, err.buf);
            goto out;
        }
        for (size_t i = 0; i < *ret_n; i++)
            if (!field_supported(c->res, (*ret_fields)[i].key)) {
                strbuf_addf(&err, "field label not supported: %s", (*ret_fields)[i].key);
                apiserver__reply_bad_request(c, err.buf);
                goto out;
            }
    }
    ok = true;
out:
    strbuf_release(&err);
    return ok;
}

/* Whether obj passes the label and field selectors. */
bool apiserver__selected(const cJSON *obj, const struct label_selector *labels,
                         const struct apiserver__field_req *fields, size_t n)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");

    if (labels && !label_selector_matches(labels, cJSON_GetObjectItem(meta, "labels")))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(field_value(obj, fields[i].key), fields[i].value) == fields[i].neq)
            return false;
    return true;
}

struct list_ctx {
    struct apiserver__call *c;
    struct label_selector *labels;
    struct apiserver__field_req *fields;
    size_t nfields;
    cJSON *items;            /* decoded items (selectors, Table) */
    struct store_obj **objs; /* raw: the store's shared objects, streamed as they are */
    size_t count, limit;
    char *last_key;
    bool more;
    bool raw;           /* no selectors, no Table: items are spliced stored bytes */
    bool count_rest;    /* a limit without selectors: count what the page leaves out */
    uint64_t remaining; /* counted: the list's remainingItemCount */
    int err;
};

static int list_item(const struct store_item *it, void *ud)
{
    struct list_ctx *l = ud;
    cJSON *o = NULL;

    if (l->more) {
        l->remaining++; /* past a full page: only counted (count_rest) */
        return 0;
    }
    if (!l->raw || !it->obj->splice_at) {
        o = apiserver__decode_stored(it->value, it->len, it->rv);
        if (!o)
            return 0; /* a corrupt row is skipped, not fatal to the list */
        if (!l->raw && !apiserver__selected(o, l->labels, l->fields, l->nfields)) {
            cJSON_Delete(o);
            return 0;
        }
    }
    if (l->limit && l->count == l->limit) {
        /* Without selectors every object left is an item of a later page: kube reports how
         * many (ListMeta.remainingItemCount); with them it cannot know, nor can we. */
        l->more = true;
        l->remaining = 1;
        cJSON_Delete(o);
        return l->count_rest ? 0 : 1;
    }
    if (l->raw) {
        cJSON_Delete(o); /* only checked: the stream decodes it again */
        if ((l->count & (l->count - 1)) == 0)
            l->objs = xrealloc(l->objs, (l->count ? l->count * 2 : 1) * sizeof(struct store_obj *));
        l->objs[l->count] = store_obj_ref(it->obj);
    } else {
        CHECK(cJSON_AddItemToArray(l->items, o));
    }
    l->count++;
    free(l->last_key);
    l->last_key = xstrdup(it->key);
    if (l->count >= APISERVER__MAX_LIST) {
        l->more = true; /* the rest comes with the continue token */
        return 1;
    }
    return 0;
}

/*
 * A list body streamed as it is encoded: the envelope, then each object spliced straight from
 * the store's shared bytes, a buffer at a time. Nothing of the size of the list is ever built,
 * and the first bytes leave before the last object is encoded.
 */
struct list_stream {
    struct strbuf pending; /* encoded, not yet handed out */
    size_t off;
    struct store_obj **objs; /* each released once encoded */
    size_t n, next;
    bool closed;
    char *kind, *api_version; /* for objects that must be decoded */
    const char *partial;      /* PartialObjectMetadataList: the items' apiVersion, else NULL */
    bool restamp;             /* items answer with api_version (registry.h multi_version) */
};

static void list_stream_free(void *ud)
{
    struct list_stream *ls = ud;

    for (size_t i = ls->next; i < ls->n; i++)
        store_obj_unref(ls->objs[i]);
    free(ls->objs);
    strbuf_release(&ls->pending);
    free(ls->kind);
    free(ls->api_version);
    free(ls);
}

/* Appends one item: spliced, or decoded and printed when its bytes do not allow splicing. */
static void list_stream_item(struct list_stream *ls, const struct store_obj *o)
{
    cJSON *d;

    if (apiserver__splice_stored(o, o->rv, ls->partial, ls->restamp ? ls->api_version : NULL,
                                 &ls->pending))
        return;
    d = apiserver__decode_stored(o->value, o->len, o->rv);
    if (!d) {
        strbuf_addstr(&ls->pending, "{}"); /* checked when listed: cannot happen */
        return;
    }
    if (!cJSON_GetObjectItemCaseSensitive(d, "kind"))
        CHECK(cJSON_AddStringToObject(d, "kind", ls->kind));
    if (ls->restamp)
        cJSON_DeleteItemFromObjectCaseSensitive(d, "apiVersion");
    if (!cJSON_GetObjectItemCaseSensitive(d, "apiVersion"))
        CHECK(cJSON_AddStringToObject(d, "apiVersion", ls->api_version));
    if (ls->partial) {
        cJSON *p = apiserver__partial_tree(d, ls->partial);
        cJSON_Delete(d);
        d = p;
    }
    CHECK(json_print(d, &ls->pending) == 0);
    cJSON_Delete(d);
}

static long list_stream_read(void *ud, struct http_stream *st, char *buf, size_t max)
{
    struct list_stream *ls = ud;
    size_t n = 0;

    (void)st;
    while (n < max) {
        if (ls->off < ls->pending.len) {
            size_t k = ls->pending.len - ls->off;
            if (k > max - n)
                k = max - n;
            memcpy(buf + n, ls->pending.buf + ls->off, k);
            ls->off += k;
            n += k;
            continue;
        }
        strbuf_reset(&ls->pending);
        ls->off = 0;
        if (ls->next < ls->n) {
            if (ls->next)
                strbuf_addch(&ls->pending, ',');
            list_stream_item(ls, ls->objs[ls->next]);
            ls->objs[ls->next] = store_obj_unref(ls->objs[ls->next]);
            ls->next++;
        } else if (!ls->closed) {
            strbuf_addstr(&ls->pending, "]}");
            ls->closed = true;
        } else {
            break;
        }
    }
    return (long)n;
}

/* Hands the list to a stream: list (owned, with an empty "items" last) gives the envelope. */
static void reply_list_stream(struct apiserver__call *c, struct list_ctx *l, cJSON *list,
                              const char *av)
{
    struct list_stream *ls = xcalloc(1, sizeof(*ls));

    strbuf_init(&ls->pending);
    CHECK(json_print(list, &ls->pending) == 0);
    cJSON_Delete(list);
    /* The envelope ends with "items":[]} : keep it open for the items. */
    CHECK(ls->pending.len >= 2 && !strcmp(ls->pending.buf + ls->pending.len - 2, "]}"));
    strbuf_setlen(&ls->pending, ls->pending.len - 2);
    ls->objs = l->objs;
    ls->n = l->count;
    l->objs = NULL;
    l->count = 0;
    ls->kind = xstrdup(c->res->kind);
    ls->api_version = xstrdup(av);
    ls->restamp = c->res->multi_version;
    if (c->out.as == NEGOTIATE_PARTIAL_LIST)
        ls->partial = c->out.api_version;
    c->resp->status = 200;
    c->resp->content_type = "application/json";
    c->resp->stream = list_stream_read;
    /* Encoding thousands of items is long work: on a worker, not an I/O thread. */
    c->resp->stream_blocking = true;
    c->resp->stream_userdata = ls;
    c->resp->stream_free = list_stream_free;
}

/* ---- list: resourceVersion and paging (reference 3.2, 5) ---- */

/*
 * Continue tokens are base64url of {"v":"meta.k8s.io/v1","rv":R,"after":"<last key returned,
 * relative to the list's prefix>"}, the shape of kube-apiserver's (storage.EncodeContinue):
 * opaque to clients, carrying the revision every page of the sequence is read at. rv -1 means
 * "continue at the latest revision", the inconsistent continue a 410 offers.
 */
static void continue_encode(const char *prefix, const char *last_key, int64_t rv,
                            struct strbuf *out)
{
    size_t plen = strlen(prefix);
    struct strbuf js = STRBUF_INIT;
    cJSON *t = cJSON_CreateObject();

    CHECK(t);
    CHECK(cJSON_AddStringToObject(t, "v", "meta.k8s.io/v1"));
    CHECK(cJSON_AddNumberToObject(t, "rv", (double)rv));
    CHECK(cJSON_AddStringToObject(t, "after",
                                  strncmp(last_key, prefix, plen) ? last_key : last_key + plen));
    CHECK(json_print(t, &js) == 0);
    base64url_encode(js.buf, js.len, out);
    strbuf_release(&js);
    cJSON_Delete(t);
}

/* The full key after which to go on and the revision (-1 = latest); replies 400 as
 * kube-apiserver does ("invalid continue token: ...") and returns false when malformed. */
static bool continue_decode(struct apiserver__call *c, const char *tok, const char *prefix,
                            char **ret_after, int64_t *ret_rv)
{
    struct strbuf js = STRBUF_INIT, msg = STRBUF_INIT;
    const char *why = NULL, *after;
    cJSON *t = NULL, *rv;
    bool ok = false;

    if (base64url_decode(tok, &js) < 0 || json_parse(js.buf, js.len, NULL, &t, NULL) < 0) {
        why = "not an encoded token";
        goto out;
    }
    rv = cJSON_GetObjectItemCaseSensitive(t, "rv");
    after = apiserver__get_string(t, "after");
    if (!apiserver__get_string(t, "v") || strcmp(apiserver__get_string(t, "v"), "meta.k8s.io/v1")) {
        why = "server does not recognize this encoded version";
        goto out;
    }
    if (!cJSON_IsNumber(rv) || (rv->valuedouble != -1 && rv->valuedouble < 1) ||
        rv->valuedouble > 9007199254740992.0 ||
        rv->valuedouble != (double)(int64_t)rv->valuedouble) {
        why = "incorrect encoded start resourceVersion (version meta.k8s.io/v1)";
        goto out;
    }
    if (!after || !*after) {
        why = "encoded key is empty";
        goto out;
    }
    for (const char *p = after; *p; p++)
        if (*p < 0x21 || *p > 0x7e) {
            why = "encoded key is malformed";
            goto out;
        }
    *ret_rv = (int64_t)rv->valuedouble;
    strbuf_addf(&msg, "%s%s", prefix, after);
    *ret_after = strbuf_detach(&msg, NULL);
    ok = true;
out:
    if (!ok) {
        strbuf_addf(&msg, "invalid continue token: continue key is not valid: %s", why);
        apiserver__reply_bad_request(c, msg.buf);
    }
    strbuf_release(&js);
    strbuf_release(&msg);
    cJSON_Delete(t);
    return ok;
}

/* The options validation of list (apimachinery internalversion/validation ValidateListOptions):
 * replies 422 and returns false when it fails. */
static bool list_options_valid(struct apiserver__call *c, const char *rvs, const char *rvm,
                               const char *cont)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    bool ok;

    if (rvm && *rvm) {
        if (!rvs || !*rvs)
            field_error_add(&errs, FIELD_FORBIDDEN, "resourceVersionMatch", NULL, "%s",
                            "resourceVersionMatch is forbidden unless resourceVersion is provided");
        if (cont && *cont)
            field_error_add(&errs, FIELD_FORBIDDEN, "resourceVersionMatch", NULL, "%s",
                            "resourceVersionMatch is forbidden when continue is provided");
        if (strcmp(rvm, "Exact") && strcmp(rvm, "NotOlderThan")) {
            struct strbuf v = STRBUF_INIT;
            strbuf_add_json_str(&v, rvm);
            field_error_add(&errs, FIELD_NOT_SUPPORTED, "resourceVersionMatch", v.buf, "%s",
                            "supported values: \"Exact\", \"NotOlderThan\"");
            strbuf_release(&v);
        }
        if (!strcmp(rvm, "Exact") && rvs && !strcmp(rvs, "0"))
            field_error_add(&errs, FIELD_FORBIDDEN, "resourceVersionMatch", NULL, "%s",
                            "resourceVersionMatch \"exact\" is forbidden for resourceVersion "
                            "\"0\"");
    }
    if (http_request_query(c->req, "sendInitialEvents"))
        field_error_add(&errs, FIELD_FORBIDDEN, "sendInitialEvents", NULL, "%s",
                        "sendInitialEvents is forbidden for list");
    ok = field_errors_count(&errs) == 0;
    if (!ok)
        apiserver__reply_status(c, api_status_invalid("ListOptions", "meta.k8s.io", "", &errs));
    field_errors_release(&errs);
    return ok;
}

/* 504 for a resourceVersion the store has not reached (storage.NewTooLargeResourceVersionError):
 * client-go's reflector relists from scratch on the ResourceVersionTooLarge cause. */
void apiserver__reply_too_large(struct apiserver__call *c, uint64_t rv, uint64_t current)
{
    char msg[96];
    cJSON *st, *d, *causes, *cause;

    (void)snprintf(msg, sizeof(msg), "Too large resource version: %llu, current: %llu",
                   (unsigned long long)rv, (unsigned long long)current);
    st = api_status_failure(504, "Timeout", msg, NULL);
    cJSON_DeleteItemFromObjectCaseSensitive(st, "details");
    d = cJSON_AddObjectToObject(st, "details");
    CHECK(d);
    causes = cJSON_AddArrayToObject(d, "causes");
    cause = cJSON_CreateObject();
    CHECK(causes && cause);
    CHECK(cJSON_AddStringToObject(cause, "reason", "ResourceVersionTooLarge"));
    CHECK(cJSON_AddStringToObject(cause, "message", "Too large resource version"));
    CHECK(cJSON_AddItemToArray(causes, cause));
    CHECK(cJSON_AddNumberToObject(d, "retryAfterSeconds", 1));
    http_response_header(c->resp, "Retry-After", "1");
    apiserver__reply_status(c, st);
}

/* 410 for a continue token whose revision left the history: kube-apiserver's message, and a
 * token that goes on at the latest revision for clients that accept an inconsistent list. */
static void reply_continue_expired(struct apiserver__call *c, const char *prefix, const char *after)
{
    struct strbuf tok = STRBUF_INIT;
    cJSON *st = api_status_failure(
        410, "Expired",
        "The provided continue parameter is too old to display a consistent list result. You "
        "can start a new list without the continue parameter, or use the continue token in this "
        "response to retrieve the remainder of the results. Continuing with the provided token "
        "results in an inconsistent list - objects that were created, modified, or deleted "
        "between the time the first chunk was returned and now may show up in the list.",
        NULL);

    continue_encode(prefix, after, -1, &tok);
    CHECK(cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(st, "metadata"), "continue",
                                  tok.buf));
    strbuf_release(&tok);
    apiserver__reply_status(c, st);
}

void apiserver__do_list(struct apiserver__call *c)
{
    const char *limit = http_request_query(c->req, "limit");
    const char *cont = http_request_query(c->req, "continue");
    const char *rvs = http_request_query(c->req, "resourceVersion");
    const char *rvm = http_request_query(c->req, "resourceVersionMatch");
    struct list_ctx l = {.c = c};
    struct strbuf prefix = STRBUF_INIT, err = STRBUF_INIT, av = STRBUF_INIT, tok = STRBUF_INIT;
    cJSON *list = NULL, *meta;
    char *after = NULL;
    bool partial = c->out.as == NEGOTIATE_PARTIAL_LIST;
    uint64_t rv = 0, at = 0;
    int64_t lim = 0, want_rv = 0, cont_rv = 0;
    char buf[24];

    if (!list_options_valid(c, rvs, rvm, cont))
        goto out;
    if (cont && *cont && rvs && *rvs && strcmp(rvs, "0")) {
        apiserver__reply_bad_request(
            c, "specifying resource version is not allowed when using continue");
        goto out;
    }
    if (rvs && *rvs && (parse_i64(rvs, &want_rv) < 0 || want_rv < 0)) {
        strbuf_addf(&err, "invalid resource version: \"%s\"", rvs);
        apiserver__reply_bad_request(c, err.buf);
        goto out;
    }
    if (!apiserver__parse_selectors(c, &l.labels, &l.fields, &l.nfields))
        goto out;
    if (limit && parse_i64(limit, &lim) < 0) {
        apiserver__reply_bad_request(c, "limit must be an integer");
        goto out;
    }
    l.limit = lim > 0 ? (size_t)lim : 0; /* 0 or less: no limit (ListOptions.Limit) */
    l.count_rest = l.limit && !l.labels && !l.nfields;
    strbuf_addf(&prefix, "/%s/%s/", *c->res->group ? c->res->group : "core", c->res->plural);
    if (c->res->namespaced && *c->ri.namespace)
        strbuf_addf(&prefix, "%s/", c->ri.namespace);
    if (cont && *cont) {
        if (!continue_decode(c, cont, prefix.buf, &after, &cont_rv))
            goto out;
        at = cont_rv > 0 ? (uint64_t)cont_rv : 0;
    } else if (want_rv > 0) {
        /* "N" with a limit and no match, or Exact: that revision; otherwise not older than N
         * (reference 5), which the current state always is once the store has reached N. */
        bool exact = (rvm && !strcmp(rvm, "Exact")) || (l.limit && (!rvm || !*rvm));
        uint64_t current = store_revision(c->srv->store);
        if ((uint64_t)want_rv > current) {
            apiserver__reply_too_large(c, (uint64_t)want_rv, current);
            goto out;
        }
        at = exact ? (uint64_t)want_rv : 0;
    }
    l.raw = !l.labels && !l.nfields && !apiserver__wants_table(c) && !c->out.yaml;
    l.items = cJSON_CreateArray();
    CHECK(l.items);
    l.err = store_list_at(c->srv->store, prefix.buf, after, at, 0, list_item, &l, &rv);
    if (l.err < 0) {
        cJSON_Delete(l.items);
        if (l.err == -ERANGE && after)
            reply_continue_expired(c, prefix.buf, after);
        else if (l.err == -ERANGE)
            apiserver__reply_status(
                c, api_status_expired((unsigned long long)at,
                                      (unsigned long long)store_oldest(c->srv->store)));
        else if (l.err == -EOVERFLOW)
            apiserver__reply_too_large(c, at, store_revision(c->srv->store));
        else
            apiserver__reply_status(c, api_status_from_errno(l.err, NULL, NULL));
        goto out;
    }
    list = cJSON_CreateObject();
    CHECK(list);
    strbuf_addf(&av, "%sList", c->res->kind);
    CHECK(cJSON_AddStringToObject(list, "kind", partial ? "PartialObjectMetadataList" : av.buf));
    strbuf_reset(&av);
    apiserver__api_version_of(c->res, &av);
    CHECK(cJSON_AddStringToObject(list, "apiVersion", partial ? c->out.api_version : av.buf));
    meta = cJSON_AddObjectToObject(list, "metadata");
    CHECK(meta);
    (void)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)rv);
    CHECK(cJSON_AddStringToObject(meta, "resourceVersion", buf));
    if (l.more && l.last_key) {
        continue_encode(prefix.buf, l.last_key, (int64_t)rv, &tok);
        CHECK(cJSON_AddStringToObject(meta, "continue", tok.buf));
        if (l.count_rest && l.count == l.limit)
            CHECK(cJSON_AddNumberToObject(meta, "remainingItemCount", (double)l.remaining));
    }
    CHECK(cJSON_AddItemToObject(list, "items", l.items));
    if (l.raw) {
        reply_list_stream(c, &l, list, av.buf);
        goto out;
    }
    /* Items carry kind and apiVersion, as dynamic clients expect them. */
    {
        cJSON *item, *next;
        for (item = l.items->child; item; item = next) {
            next = item->next;
            if (partial) {
                CHECK(cJSON_ReplaceItemViaPointer(
                    l.items, item, apiserver__partial_tree(item, c->out.api_version)));
                continue;
            }
            if (!cJSON_GetObjectItemCaseSensitive(item, "kind"))
                CHECK(cJSON_AddStringToObject(item, "kind", c->res->kind));
            if (!cJSON_GetObjectItemCaseSensitive(item, "apiVersion"))
                CHECK(cJSON_AddStringToObject(item, "apiVersion", av.buf));
            apiserver__restamp(c->res, item);
        }
    }
    if (apiserver__wants_table(c)) {
        size_t n = (size_t)cJSON_GetArraySize(l.items), i = 0;
        const cJSON **objs = xcalloc(n ? n : 1, sizeof(const cJSON *));
        const cJSON *item;
        cJSON_ArrayForEach(item, l.items) objs[i++] = item;
        reply_table(c, objs, n, buf, apiserver__get_string(meta, "continue"));
        free(objs);
        cJSON_Delete(list);
    } else {
        apiserver__reply(c, 200, list);
    }
out:
    label_selector_free(l.labels);
    apiserver__field_reqs_free(l.fields, l.nfields);
    free(l.last_key);
    for (size_t i = 0; i < (l.raw ? l.count : 0); i++)
        store_obj_unref(l.objs[i]);
    free(l.objs);
    free(after);
    strbuf_release(&prefix);
    strbuf_release(&err);
    strbuf_release(&av);
    strbuf_release(&tok);
}
