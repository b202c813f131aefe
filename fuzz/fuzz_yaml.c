/*
 * libFuzzer target for yaml_parse_stream(): manifests and kubeconfigs are untrusted, so any
 * bytes must give a clean result within small limits (aliases included). Every document decoded
 * must come back identical through yaml_emit() + yaml_parse_stream() and through json_print() +
 * json_parse(); on failure the code must be -EINVAL or -E2BIG with a message.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_doc(const cJSON *doc)
{
    struct strbuf sb = STRBUF_INIT;
    struct codec_error err;
    cJSON **again = NULL, *j = NULL;
    size_t n = 0;
    int r;

    CHECK(!cJSON_IsNull(doc)); /* null documents are skipped */
    CHECK(yaml_emit(doc, &sb) == 0);
    r = yaml_parse_stream(sb.buf, sb.len, NULL, &again, &n, &err);
    CHECK(r == 0);
    CHECK(n == 1);
    CHECK(cJSON_Compare(doc, again[0], true));
    CHECK(identical(doc, again[0]));
    codec_docs_free(again, n);

    strbuf_reset(&sb);
    CHECK(json_print(doc, &sb) == 0);
    r = json_parse(sb.buf, sb.len, NULL, &j, &err);
    CHECK(r == 0);
    CHECK(identical(doc, j));
    cJSON_Delete(j);
    strbuf_release(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct codec_error err;
    cJSON **docs = NULL;
    size_t n = 0, i;
    int r;

    codec_init();
    r = yaml_parse_stream((const char *)data, size, &fuzz_limits, &docs, &n, &err);
    if (r < 0) {
        CHECK(r == -EINVAL || r == -E2BIG);
        CHECK(err.msg[0] != '\0');
        CHECK(err.line >= 0 && err.column >= 0);
        CHECK(docs == NULL && n == 0);
        return 0;
    }
    CHECK(n <= fuzz_limits.max_docs);
    for (i = 0; i < n; i++)
        check_doc(docs[i]);
    codec_docs_free(docs, n);
    return 0;
}
