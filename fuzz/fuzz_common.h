/* Shared by the codec fuzz targets: small limits so each input is cheap, and a strict tree
 * comparison for the decode -> print -> decode round trips. */
#ifndef KOORD_FUZZ_COMMON_H
#define KOORD_FUZZ_COMMON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <string.h>

#include "codec/codec.h"

static const struct codec_limits fuzz_limits = {
    .max_bytes = 1 << 16,
    .max_depth = 32,
    .max_nodes = 20000,
    .max_docs = 16,
};

/* Stricter than cJSON_Compare(): same order, same types, doubles exactly equal. */
static inline bool identical(const cJSON *a, const cJSON *b)
{
    const cJSON *x, *y;

    if ((a->type & 0xff) != (b->type & 0xff))
        return false;
    if (cJSON_IsNumber(a) && a->valuedouble != b->valuedouble)
        return false;
    if (cJSON_IsString(a) && strcmp(a->valuestring, b->valuestring) != 0)
        return false;
    for (x = a->child, y = b->child; x && y; x = x->next, y = y->next) {
        if (cJSON_IsObject(a) && strcmp(x->string, y->string) != 0)
            return false;
        if (!identical(x, y))
            return false;
    }
    return !x && !y;
}

#endif
