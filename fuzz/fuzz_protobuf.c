/*
 * libFuzzer target for protobuf_decode() (api/protobuf.h): request bodies from any client are
 * untrusted, so any bytes must give a clean result within small limits. A decoded object must be
 * a JSON object starting with its kind and apiVersion that prints and parses back identically
 * (so no NUL, invalid UTF-8 or non-finite number got in); a failure must be -EINVAL, -ENOTSUP or
 * -E2BIG with a 400/415 status and a message, the output untouched. The first byte also picks
 * one kind's table to decode the rest with directly, so the fuzzer reaches deep messages
 * without having to find a whole envelope first.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "api/protobuf.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int r, cJSON *o, const struct protobuf_error *err, bool envelope)
{
    struct strbuf sb = STRBUF_INIT;
    cJSON *again = NULL;

    if (r < 0) {
        CHECK(r == -EINVAL || r == -ENOTSUP || r == -E2BIG);
        CHECK(err->status == (r == -ENOTSUP ? 415 : 400));
        CHECK(err->msg[0] != '\0');
        CHECK(o == NULL);
        return;
    }
    CHECK(cJSON_IsObject(o));
    if (envelope) {
        CHECK(o->child && !strcmp(o->child->string, "kind") && cJSON_IsString(o->child));
        CHECK(o->child->next && !strcmp(o->child->next->string, "apiVersion") &&
              cJSON_IsString(o->child->next));
    }
    CHECK(json_print(o, &sb) == 0);
    CHECK(json_parse(sb.buf, sb.len, NULL, &again, NULL) == 0);
    CHECK(identical(o, again));
    cJSON_Delete(again);
    cJSON_Delete(o);
    strbuf_release(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct protobuf_error err;
    size_t nkinds = 0;
    cJSON *o = NULL;
    int r;

    codec_init();
    r = protobuf_decode(data, size, &fuzz_limits, &o, &err);
    check(r, o, &err, true);
    while (protobuf_kinds[nkinds].kind)
        nkinds++;
    if (size) {
        o = NULL;
        r = protobuf_decode_msg(protobuf_kinds[data[0] % nkinds].msg, data + 1, size - 1,
                                &fuzz_limits, &o, &err);
        check(r, o, &err, false);
    }
    return 0;
}
