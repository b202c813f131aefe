/*
 * Request body decoding by Content-Type and YAML answers (see body.h).
 */
#include "apiserver/body.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/protobuf.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"

#define UNKNOWN_FORMAT                                                                             \
    "the body of the request was in an unknown format - accepted media types include: "            \
    "application/json, application/yaml, application/vnd.kubernetes.protobuf"

/* Whether the media type of content_type (before any ';', spaces trimmed) is want. */
static bool media_is(const char *content_type, const char *want)
{
    const char *p = content_type, *end;
    size_t n = strlen(want);

    while (*p == ' ' || *p == '\t')
        p++;
    end = p + strcspn(p, ";");
    while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    return (size_t)(end - p) == n && !strncasecmp(p, want, n);
}

static int refuse(struct body_error *err, int status, const char *msg)
{
    err->status = status;
    err->reason = status == 415 ? "UnsupportedMediaType" : "BadRequest";
    (void)snprintf(err->msg, sizeof(err->msg), "%s", msg);
    return -1;
}

static int decode_yaml(const char *body, size_t len, cJSON **ret, struct body_error *err)
{
    struct codec_error cerr = {0};
    struct strbuf msg = STRBUF_INIT;
    cJSON **docs = NULL;
    size_t n = 0;
    int r = yaml_parse_stream(body, len, NULL, &docs, &n, &cerr);

    if (r < 0) {
        strbuf_addf(&msg, "the request body is not valid YAML: line %d, column %d: %s", cerr.line,
                    cerr.column, cerr.msg);
        r = refuse(err, 400, msg.buf);
    } else if (n != 1) {
        r = refuse(err, 400,
                   n ? "the request body holds more than one YAML document"
                     : "the request body is empty");
    } else {
        *ret = docs[0];
        docs[0] = NULL;
    }
    codec_docs_free(docs, n);
    strbuf_release(&msg);
    return r < 0 ? -1 : 0;
}

int body_decode(const char *content_type, const char *body, size_t len, cJSON **ret,
                struct body_error *err)
{
    struct codec_error cerr = {0};
    struct protobuf_error perr;

    if (!content_type || !*content_type || media_is(content_type, "application/json")) {
        char msg[300];
        struct codec_limits lim = codec_default_limits;

        lim.keep_duplicate_keys = true; /* fieldValidation decides: body_dedupe_keys() */
        if (json_parse(body, len, &lim, ret, &cerr) == 0)
            return 0;
        (void)snprintf(msg, sizeof(msg), "the request body is not valid JSON: %s", cerr.msg);
        return refuse(err, 400, msg);
    }
    if (media_is(content_type, "application/yaml"))
        return decode_yaml(body, len, ret, err);
    if (media_is(content_type, PROTOBUF_MEDIA)) {
        if (protobuf_decode(body, len, NULL, ret, &perr) == 0)
            return 0;
        return refuse(err, perr.status ? perr.status : 400,
                      perr.msg[0] ? perr.msg : "the protobuf body cannot be decoded");
    }
    return refuse(err, 415, UNKNOWN_FORMAT);
}

void body_answer_yaml(struct http_response *resp)
{
    struct strbuf yaml = STRBUF_INIT;
    cJSON *v = NULL;

    if (resp->stream || !resp->content_type || strcmp(resp->content_type, "application/json") ||
        !resp->body.len || json_parse(resp->body.buf, resp->body.len, NULL, &v, NULL) < 0)
        return;
    if (yaml_emit(v, &yaml) == 0) {
        strbuf_release(&resp->body);
        resp->body = yaml;
        resp->content_type = "application/yaml";
    } else {
        strbuf_release(&yaml);
    }
    cJSON_Delete(v);
}

/* One member of an object being checked for repeated keys: its key and position. */
struct member_ref {
    const char *key;
    size_t pos;
    cJSON *item;
};

static int member_ref_cmp(const void *x, const void *y)
{
    const struct member_ref *a = x, *b = y;
    int r = strcmp(a->key, b->key);

    if (r)
        return r;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static void dedupe(cJSON *o, struct strbuf *path, struct strbuf *paths)
{
    size_t len = path->len, i = 0;
    cJSON *c;

    if (cJSON_IsObject(o)) {
        size_t n = (size_t)cJSON_GetArraySize(o);

        if (n > 1) {
            struct member_ref *refs = xcalloc(n, sizeof(*refs));
            cJSON_ArrayForEach(c, o)
            {
                refs[i] = (struct member_ref){c->string ? c->string : "", i, c};
                i++;
            }
            qsort(refs, n, sizeof(*refs), member_ref_cmp);
            for (i = 0; i + 1 < n; i++) {
                if (strcmp(refs[i].key, refs[i + 1].key))
                    continue;
                /* The last of a run stays; its path is reported once per run. */
                if (i == 0 || strcmp(refs[i - 1].key, refs[i].key)) {
                    strbuf_addstr(paths, path->buf);
                    if (path->len)
                        strbuf_addch(paths, '.');
                    strbuf_addstr(paths, refs[i].key);
                    strbuf_addch(paths, '\n');
                }
                cJSON_Delete(cJSON_DetachItemViaPointer(o, refs[i].item));
            }
            free(refs);
        }
        cJSON_ArrayForEach(c, o)
        {
            if (path->len)
                strbuf_addch(path, '.');
            strbuf_addstr(path, c->string ? c->string : "");
            dedupe(c, path, paths);
            strbuf_setlen(path, len);
        }
    } else if (cJSON_IsArray(o)) {
        cJSON_ArrayForEach(c, o)
        {
            strbuf_addf(path, "[%zu]", i++);
            dedupe(c, path, paths);
            strbuf_setlen(path, len);
        }
    }
}

void body_dedupe_keys(cJSON *o, struct strbuf *paths)
{
    struct strbuf path = STRBUF_INIT;

    dedupe(o, &path, paths);
    strbuf_release(&path);
}
