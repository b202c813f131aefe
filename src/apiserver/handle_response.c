/*
 * Answers and stored bytes, shared by every verb (kube-apiserver's endpoints/handlers/response.go
 * and the generic store's encoding): reply() and the Status answers, object keys, decoding a
 * stored object with its resourceVersion, and the byte splices that answer without a parse.
 * Their own file so that each verb's file holds only its verb.
 */
#include <stdio.h>
#include <string.h>

#include "apiserver/apiserver-int.h"
#include "apiserver/registry.h"
#include "base/base.h"
#include "codec/codec.h"
#include "http/server.h"

/* The PartialObjectMetadata of o, for answers built as trees (negotiate_partial() is the same
 * for bytes). It takes o's metadata: o is left to be deleted. */
cJSON *apiserver__partial_tree(cJSON *o, const char *api_version)
{
    cJSON *p = cJSON_CreateObject(), *meta = cJSON_DetachItemFromObjectCaseSensitive(o, "metadata");

    CHECK(p);
    CHECK(cJSON_AddStringToObject(p, "kind", "PartialObjectMetadata"));
    CHECK(cJSON_AddStringToObject(p, "apiVersion", api_version));
    if (!meta)
        CHECK(meta = cJSON_CreateObject());
    CHECK(cJSON_AddItemToObject(p, "metadata", meta));
    return p;
}

/* One Warning header per line of lines, which is emptied. */
void apiserver__add_warning_headers(struct apiserver__call *c, struct strbuf *lines)
{
    for (const char *w = lines->buf; *w;) {
        const char *eol = strchr(w, '\n');
        struct strbuf v = STRBUF_INIT;

        strbuf_add(&v, w, (size_t)(eol - w));
        http_response_header(c->resp, "Warning", v.buf);
        strbuf_release(&v);
        w = eol + 1;
    }
    strbuf_reset(lines);
}

/* The answer the client asked for in one place for every tree: a one-object answer becomes its
 * PartialObjectMetadata when that was negotiated (lists are converted as they are built); a
 * Status never is. */
void apiserver__reply(struct apiserver__call *c, int code, cJSON *body)
{
    const char *kind;

    if (c->as_scale && body && code >= 200 && code < 300 &&
        !strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(body, "kind"))
                    ? cJSON_GetObjectItemCaseSensitive(body, "kind")->valuestring
                    : "",
                c->res->kind)) {
        cJSON *sc = apiserver__scale_of(c->res, body);
        cJSON_Delete(body);
        body = sc;
    }
    apiserver__add_warning_headers(c, &c->wh_warnings);
    apiserver__add_warning_headers(c, &c->warnings);
    kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(body, "kind"));
    if (c->res && kind && !strcmp(kind, c->res->kind))
        apiserver__restamp(c->res, body);
    if (body && c->out.as == NEGOTIATE_PARTIAL && code >= 200 && code < 300 &&
        !(kind && !strcmp(kind, "Status"))) {
        cJSON *p = apiserver__partial_tree(body, c->out.api_version);
        cJSON_Delete(body);
        body = p;
    }
    c->resp->status = code;
    c->resp->content_type = "application/json";
    if (body && json_print(body, &c->resp->body) < 0)
        c->resp->status = 500;
    cJSON_Delete(body);
}

void apiserver__reply_status(struct apiserver__call *c, cJSON *status)
{
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(status, "code");
    const char *st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(status, "status"));

    /* A Success status without a code is a 200 (reference 2.5). */
    apiserver__reply(c,
                     cJSON_IsNumber(code)           ? code->valueint
                     : st && !strcmp(st, "Success") ? 200
                                                    : 500,
                     status);
}

void apiserver__reply_not_served(struct apiserver__call *c)
{
    apiserver__reply_status(
        c, api_status_failure(404, "NotFound", "the server could not find the requested resource",
                              NULL));
}

void apiserver__reply_bad_request(struct apiserver__call *c, const char *msg)
{
    apiserver__reply_status(c, api_status_failure(400, "BadRequest", msg, NULL));
}

/* ---- keys and objects ---- */

void apiserver__object_key(struct strbuf *key, const struct api_resource *res, const char *ns,
                           const char *name)
{
    strbuf_reset(key);
    strbuf_addf(key, "/%s/%s/%s/%s", *res->group ? res->group : "core", res->plural,
                res->namespaced ? ns : "", name);
}

void apiserver__api_version_of(const struct api_resource *res, struct strbuf *out)
{
    if (*res->group)
        strbuf_addf(out, "%s/", res->group);
    strbuf_addstr(out, res->version);
}

cJSON *apiserver__meta_of(cJSON *obj)
{
    cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    if (!cJSON_IsObject(m)) {
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "metadata");
        m = cJSON_AddObjectToObject(obj, "metadata");
        CHECK(m);
    }
    return m;
}

void apiserver__set_string(cJSON *o, const char *k, const char *v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, k);
    CHECK(cJSON_AddStringToObject(o, k, v));
}

const char *apiserver__get_string(const cJSON *o, const char *k)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* A stored object with its resourceVersion filled in; NULL when the bytes do not parse. */
cJSON *apiserver__decode_stored(const char *value, size_t len, uint64_t rv)
{
    cJSON *o = NULL;
    char buf[24];

    if (json_parse(value, len, NULL, &o, NULL) < 0)
        return NULL;
    (void)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)rv);
    apiserver__set_string(apiserver__meta_of(o), "resourceVersion", buf);
    return o;
}

/* ,"resourceVersion":"N" (without the comma when first), without printf. */
static void add_rv_member(struct strbuf *out, bool comma, uint64_t rv)
{
    char digits[24];
    size_t n = sizeof(digits);

    do {
        digits[--n] = (char)('0' + rv % 10);
        rv /= 10;
    } while (rv);
    if (comma)
        strbuf_addch(out, ',');
    strbuf_add(out, "\"resourceVersion\":\"", 19);
    strbuf_add(out, digits + n, sizeof(digits) - n);
    strbuf_addch(out, '"');
}

/*
 * The bytes apiserver__decode_stored() + json_print() would give, without the parse and the print:
 * stored objects are our own compact JSON without a resourceVersion
 * (apiserver__encode_for_store()), so it goes in as the last member of metadata, at the point
 * store_obj_new() found once; with partial set (an apiVersion), only the PartialObjectMetadata of
 * them, cut from the same bytes. With api_version set (a CRD serving several versions), the
 * object's leading apiVersion member is written as api_version. false (out untouched) when the
 * bytes lack apiVersion, kind or metadata (or api_version is set and they do not start with the
 * apiVersion), so the caller takes the slow path. This is what keeps a list of 10000 objects, and a
 * watch event sent to 100 watchers, cheap (bench/apiserver).
 */
bool apiserver__splice_bytes(const char *value, size_t len, size_t splice_at, bool comma,
                             uint64_t rv, const char *partial, const char *api_version,
                             struct strbuf *out)
{
    static const char lead[] = "{\"apiVersion\":\"";
    size_t start = out->len, from = 0;

    if (!splice_at)
        return false;
    if (!partial) {
        if (api_version) {
            const char *q;
            if (len < sizeof(lead) - 1 || memcmp(value, lead, sizeof(lead) - 1) ||
                !(q = memchr(value + sizeof(lead) - 1, '"', splice_at - (sizeof(lead) - 1))))
                return false;
            strbuf_add(out, lead, sizeof(lead) - 1);
            strbuf_addstr(out, api_version);
            from = (size_t)(q - value);
        }
        strbuf_add(out, value + from, splice_at - from);
        add_rv_member(out, comma, rv);
        strbuf_add(out, value + splice_at, len - splice_at);
        return true;
    }
    /* The PartialObjectMetadata ends with the metadata's closing brace (at splice_at in the
     * stored bytes) and its own: the resourceVersion goes in front of those two. */
    if (negotiate_partial(value, len, partial, out) < 0 || out->len - start < 2 ||
        memcmp(out->buf + out->len - 2, "}}", 2)) {
        strbuf_setlen(out, start);
        return false;
    }
    strbuf_setlen(out, out->len - 2);
    add_rv_member(out, comma, rv);
    strbuf_add(out, "}}", 2);
    return true;
}

/* apiserver__splice_bytes() of a stored object: the object, or its PartialObjectMetadata when
 * partial is the apiVersion for one; api_version as there. */
bool apiserver__splice_stored(const struct store_obj *o, uint64_t rv, const char *partial,
                              const char *api_version, struct strbuf *out)
{
    return apiserver__splice_bytes(o->value, o->len, o->splice_at, o->splice_comma, rv, partial,
                                   api_version, out);
}

/* The apiVersion answers of res carry when stored objects may hold another (a CRD serving
 * several versions, registry.h multi_version), else NULL: nothing to rewrite. */
const char *apiserver__restamp_version(const struct api_resource *res, struct strbuf *buf)
{
    if (!res->multi_version)
        return NULL;
    strbuf_reset(buf);
    if (*res->group)
        strbuf_addf(buf, "%s/", res->group);
    strbuf_addstr(buf, res->version);
    return buf->buf;
}

/* Gives obj, an object of res, res's apiVersion when objects of res may be stored at another
 * version of their CRD (conversion None: nothing else changes). */
void apiserver__restamp(const struct api_resource *res, cJSON *obj)
{
    struct strbuf av = STRBUF_INIT;
    const char *v = apiserver__restamp_version(res, &av);

    if (v && cJSON_IsObject(obj)) {
        cJSON *s = cJSON_CreateString(v);
        CHECK(s);
        if (cJSON_GetObjectItemCaseSensitive(obj, "apiVersion"))
            CHECK(cJSON_ReplaceItemInObjectCaseSensitive(obj, "apiVersion", s));
        else
            CHECK(cJSON_AddItemToObject(obj, "apiVersion", s));
    }
    strbuf_release(&av);
}

int apiserver__encode_for_store(cJSON *obj, struct strbuf *out)
{
    cJSON_DeleteItemFromObjectCaseSensitive(apiserver__meta_of(obj), "resourceVersion");
    return json_print(obj, out);
}
