/*
 * libFuzzer target for quantity_parse(): quantities arrive from every manifest, webhook and
 * ConfigMap, so the parser must survive any bytes, and what quantity_format() prints is written
 * back to the apiserver, so it must mean the same number. For every input that parses: the
 * canonical string fits QUANTITY_STR_MAX, parses back to an equal quantity and, when the format
 * survives the trip, is a fixed point;
 * arithmetic on the value is consistent (a + b - b == a whenever both steps fit).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "base/base.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_arith(const struct quantity *a, const struct quantity *b)
{
    struct quantity sum = *a, diff = *a;
    int64_t v;

    if (quantity_add(&sum, b) == 0 && quantity_sub(&sum, b) == 0)
        CHECK(quantity_cmp(&sum, a) == 0);
    if (quantity_sub(&diff, b) == 0) {
        CHECK(quantity_cmp(a, b) == quantity_sign(&diff));
        if (quantity_add(&diff, b) == 0)
            CHECK(quantity_cmp(&diff, a) == 0);
    }
    /* Value() rounds away from zero, so it never moves towards zero. */
    if (quantity_value(a, &v) == 0) {
        struct quantity iv;

        quantity_from_int(v, QUANTITY_DECIMAL_SI, &iv);
        CHECK(quantity_sign(a) >= 0 ? quantity_cmp(&iv, a) >= 0 : quantity_cmp(&iv, a) <= 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct quantity others[] = {
        {.value = 1, .scale = 0, .format = QUANTITY_DECIMAL_SI},
        {.value = -1536, .scale = -3, .format = QUANTITY_BINARY_SI},
        {.value = INT64_MAX, .scale = 0, .format = QUANTITY_BINARY_SI},
        {.value = 7, .scale = 18, .format = QUANTITY_DECIMAL_EXPONENT},
    };
    char buf[QUANTITY_STR_MAX], again[QUANTITY_STR_MAX];
    struct quantity q, q2, qn;
    char *s;
    size_t n;
    int r, rn;

    if (size > 4096)
        return 0;
    s = xmalloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';

    /* The counted form must agree with the string form, and refuse embedded NULs. */
    r = quantity_parse(s, &q);
    rn = quantity_parse_n((const char *)data, size, &qn);
    if (memchr(data, '\0', size))
        CHECK(rn == -EINVAL);
    else
        CHECK(rn == r && (r < 0 || memcmp(&q, &qn, sizeof(q)) == 0));
    if (r < 0) {
        CHECK(r == -EINVAL || r == -ERANGE);
        goto out;
    }

    n = quantity_format(&q, buf);
    CHECK(n < QUANTITY_STR_MAX && strlen(buf) == n);
    CHECK(quantity_parse(buf, &q2) == 0);
    CHECK(quantity_cmp(&q, &q2) == 0);
    /* A fixed point, unless the string lost the format: BinarySI "4032000" reads as DecimalSI. */
    if (q2.format == q.format)
        CHECK(quantity_format(&q2, again) == n && strcmp(buf, again) == 0);
    CHECK(quantity_canonicalize(s, again) == (int)n && strcmp(buf, again) == 0);

    check_arith(&q, &q2);
    for (size_t i = 0; i < ARRAY_SIZE(others); i++) {
        check_arith(&q, &others[i]);
        check_arith(&others[i], &q);
    }
out:
    free(s);
    return 0;
}
