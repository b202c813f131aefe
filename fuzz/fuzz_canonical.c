/*
 * libFuzzer target for api_canonical_check(): koord manager stores a NodeMetric report's status
 * bytes as they came whenever the check says they are canonical, so a wrong "yes" would store
 * bytes the decoding path would have refused or rewritten. For every input the check accepts
 * (as a NodeMetric status), the tree pipeline must accept it without an error or warning and
 * print exactly the same bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "api/api.h"
#include "api/schema.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const struct api_kind *k = api_kind_find("slo.koordinator.sh/v1alpha1", "NodeMetric");
    const char *text = (const char *)data;
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf out = STRBUF_INIT;
    cJSON *v = NULL;

    CHECK(k);
    if (!api_canonical_check(k->status, text, size, 0))
        return 0;
    CHECK(json_parse(text, size, NULL, &v, NULL) == 0);
    api_validate(k->status, v, "", 0, &errs);
    CHECK(errs.n == 0);
    CHECK(api_default(k->status, v, 0) == 0 && api_canonicalize(k->status, v) == 0);
    CHECK(json_print(v, &out) == 0);
    CHECK(out.len == size && !memcmp(out.buf, text, size));
    field_errors_release(&errs);
    strbuf_release(&out);
    cJSON_Delete(v);
    return 0;
}
