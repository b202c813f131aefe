/*
 * libFuzzer target for label_selector_parse(): label selectors come straight from peers
 * (?labelSelector=, webhook payloads), so the parser must survive any bytes. On success the
 * canonical form must parse again to the same canonical form and the two selectors must agree
 * on matching; on failure -EINVAL must come with a message.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/labels.h"
#include "base/base.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const label_sets[] = {
    "{}",
    "{\"a\":\"b\",\"x\":\"1\",\"n\":\"5\",\"k\":\"\"}",
    "{\"c\":\"x\",\"e\":\"f\",\"g\":\"h\",\"m\":\"-3\",\"in\":\"in\"}",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = xstrndup((const char *)data, size); /* stops at the first NUL, as Go's lexer */
    struct label_selector *sel = NULL, *again = NULL;
    struct strbuf err = STRBUF_INIT, out = STRBUF_INIT, out2 = STRBUF_INIT;
    int r;

    r = label_selector_parse(s, &sel, &err);
    if (r < 0) {
        CHECK(r == -EINVAL || r == -E2BIG);
        CHECK(err.len > 0);
        CHECK(sel == NULL);
        goto out;
    }
    label_selector_format(sel, &out);
    CHECK(label_selector_is_empty(sel) == (out.len == 0));
    CHECK(label_selector_parse(out.buf, &again, NULL) == 0);
    label_selector_format(again, &out2);
    CHECK(strcmp(out.buf, out2.buf) == 0);
    for (size_t i = 0; i < ARRAY_SIZE(label_sets); i++) {
        cJSON *labels = cJSON_Parse(label_sets[i]);

        CHECK(labels);
        CHECK(label_selector_matches(sel, labels) == label_selector_matches(again, labels));
        cJSON_Delete(labels);
    }
out:
    label_selector_free(sel);
    label_selector_free(again);
    strbuf_release(&err);
    strbuf_release(&out);
    strbuf_release(&out2);
    free(s);
    return 0;
}
