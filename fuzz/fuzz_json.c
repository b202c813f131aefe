/*
 * libFuzzer target for json_parse(): request bodies are untrusted, so any bytes must give a
 * clean result within small limits. On success the tree must survive json_print(),
 * json_print_pretty() and yaml_emit() and parse back identical (numbers bit for bit, keys in the
 * same order); on failure the code must be -EINVAL or -E2BIG with a message.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_json_text(const cJSON *v, const struct strbuf *text)
{
    cJSON *w = NULL;
    int r;

    r = json_parse(text->buf, text->len, NULL, &w, NULL);
    CHECK(r == 0);
    CHECK(cJSON_Compare(v, w, true));
    CHECK(identical(v, w));
    cJSON_Delete(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct strbuf sb = STRBUF_INIT;
    struct codec_error err;
    cJSON *v = NULL, **docs = NULL;
    size_t n = 0;
    int r;

    codec_init();
    r = json_parse((const char *)data, size, &fuzz_limits, &v, &err);
    if (r < 0) {
        CHECK(r == -EINVAL || r == -E2BIG);
        CHECK(err.msg[0] != '\0');
        CHECK(err.line >= 0 && err.column >= 0);
        CHECK(v == NULL);
        goto out;
    }
    CHECK(json_print(v, &sb) == 0);
    check_json_text(v, &sb);
    strbuf_reset(&sb);
    CHECK(json_print_pretty(v, &sb) == 0);
    check_json_text(v, &sb);

    strbuf_reset(&sb);
    CHECK(yaml_emit(v, &sb) == 0);
    r = yaml_parse_stream(sb.buf, sb.len, NULL, &docs, &n, &err);
    CHECK(r == 0);
    if (cJSON_IsNull(v)) {
        CHECK(n == 0); /* null documents are skipped */
    } else {
        CHECK(n == 1);
        CHECK(cJSON_Compare(v, docs[0], true));
        CHECK(identical(v, docs[0]));
    }
out:
    codec_docs_free(docs, n);
    cJSON_Delete(v);
    strbuf_release(&sb);
    return 0;
}
