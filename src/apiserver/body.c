/*
 * Request body decoding by Content-Type and YAML answers (see body.h).
 */
#include "apiserver/body.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "api/protobuf.h"
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
        if (json_parse(body, len, NULL, ret, &cerr) == 0)
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
