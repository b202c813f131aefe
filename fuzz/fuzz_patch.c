/*
 * libFuzzer target for src/codec/patch.c: PATCH bodies are untrusted, so any document/patch
 * pair must give a clean result. The input is "<document>\0<patch>", both parsed with
 * json_parse() under small limits. Checked properties:
 *  - json_patch_apply() returns 0, -EINVAL, -ECANCELED or -E2BIG with a message, and on failure
 *    leaves the document pointer and tree exactly as they were;
 *  - merge_patch_apply() succeeds (the inputs are shallower than PATCH_MAX_DEPTH) and is
 *    idempotent, as RFC 7386 merge patches are;
 *  - merge_patch_create(a, b) applied to a gives b whenever b has no null object members
 *    (which a merge patch cannot express), for b the merge result and b the patch itself;
 *  - strategic_merge_patch_apply() (src/codec/smp.c, with a small strategy table covering
 *    merge lists of objects and of scalars) returns 0 with an object, or -EINVAL/-E2BIG with a
 *    message and the document pointer and tree exactly as they were;
 *  - memory cap: no application holds more cJSON memory beyond its inputs than a small
 *    multiple of them plus what PATCH_MAX_COPY_BYTES lets "copy" add (issue 20: one 1.2 MB
 *    patch reached 6 GB). cJSON's allocations are counted by hooks; an input over the cap
 *    aborts, like any other failed property. `make fuzz` also runs the target under
 *    -malloc_limit_mb, which catches a single huge allocation.
 */
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "codec/codec.h"
#include "codec/patch.h"
#include "codec/smp.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Live cJSON bytes, and the most since mem_mark(). Signed: names patch.c allocates itself
 * (cmalloc) are freed through the hook too. */
static long long mem_now, mem_peak, mem_base;

static void *count_malloc(size_t n)
{
    void *p = cmalloc(n);

    if (p) {
        mem_now += (long long)malloc_usable_size(p);
        if (mem_now > mem_peak)
            mem_peak = mem_now;
    }
    return p;
}

static void count_free(void *p)
{
    if (p)
        mem_now -= (long long)malloc_usable_size(p);
    free(p);
}

static void mem_mark(void)
{
    mem_base = mem_peak = mem_now;
}

/* The cap: 4 x the inputs (working copies, values added, a merge's result) plus 3 x the copy
 * limit (what copies may add, PATCH_COPY_ITEM_BYTES per item being about a cJSON item). */
static void mem_check(long long inputs)
{
    CHECK(mem_peak - mem_base <= 4 * inputs + 3 * (long long)PATCH_MAX_COPY_BYTES);
}

static bool has_null_member(const cJSON *v)
{
    const cJSON *c;

    for (c = v->child; c && (cJSON_IsArray(v) || cJSON_IsObject(v)); c = c->next) {
        if (cJSON_IsObject(v) && cJSON_IsNull(c))
            return true;
        if (has_null_member(c))
            return true;
    }
    return false;
}

/* create(a, b) applied to a must give b. */
static void check_round_trip(const cJSON *a, const cJSON *b)
{
    struct codec_error err;
    cJSON *p = NULL, *x;

    CHECK(merge_patch_create(a, b, &p) == 0);
    if (cJSON_IsObject(a) && cJSON_IsObject(b) && cJSON_Compare(a, b, true))
        CHECK(cJSON_IsObject(p) && !p->child);
    x = cJSON_Duplicate(a, true);
    CHECK(x);
    CHECK(merge_patch_apply(&x, p, &err) == 0);
    if (!has_null_member(b))
        CHECK(cJSON_Compare(x, b, true));
    cJSON_Delete(x);
    cJSON_Delete(p);
}

static void check_json_patch(const cJSON *doc, const cJSON *patch, long long inputs)
{
    struct codec_error err = {0};
    cJSON *d, *before;
    int r;

    d = cJSON_Duplicate(doc, true);
    CHECK(d);
    before = d;
    mem_mark();
    r = json_patch_apply(&d, patch, 64, &err);
    mem_check(inputs);
    if (r < 0) {
        CHECK(r == -EINVAL || r == -ECANCELED || r == -E2BIG);
        CHECK(err.msg[0] != '\0');
        CHECK(d == before);
        CHECK(identical(d, doc));
    } else {
        CHECK(r == 0);
    }
    cJSON_Delete(d);
}

static void check_merge_patch(const cJSON *doc, const cJSON *patch, long long inputs)
{
    struct codec_error err;
    cJSON *m, *m2;

    m = cJSON_Duplicate(doc, true);
    CHECK(m);
    mem_mark();
    CHECK(merge_patch_apply(&m, patch, &err) == 0);
    mem_check(inputs);
    m2 = cJSON_Duplicate(m, true);
    CHECK(m2);
    CHECK(merge_patch_apply(&m2, patch, &err) == 0);
    CHECK(cJSON_Compare(m, m2, true));
    check_round_trip(doc, m);
    check_round_trip(doc, patch);
    check_round_trip(doc, doc);
    cJSON_Delete(m2);
    cJSON_Delete(m);
}

/* "a" and "b.c" merge objects by "k", "s" and "b.s" are sets; everything else is atomic. */
static bool lookup(const char *path, const void *userdata, struct smp_list_meta *ret)
{
    (void)userdata;
    if (!strcmp(path, "a") || !strcmp(path, "b.c") || !strcmp(path, "a.a")) {
        *ret = (struct smp_list_meta){.merge = true, .merge_key = "k"};
        return true;
    }
    if (!strcmp(path, "s") || !strcmp(path, "b.s") || !strcmp(path, "a.s")) {
        *ret = (struct smp_list_meta){.merge = true, .merge_key = NULL};
        return true;
    }
    return false;
}

static void check_smp(const cJSON *doc, const cJSON *patch, long long inputs)
{
    struct codec_error err = {0};
    cJSON *d, *before;
    int r;

    d = cJSON_Duplicate(doc, true);
    CHECK(d);
    before = d;
    mem_mark();
    r = strategic_merge_patch_apply(&d, patch, lookup, NULL, &err);
    mem_check(inputs);
    if (r < 0) {
        CHECK(r == -EINVAL || r == -E2BIG);
        CHECK(err.msg[0] != '\0');
        CHECK(d == before);
        CHECK(identical(d, doc));
    } else {
        CHECK(r == 0 && cJSON_IsObject(d));
    }
    cJSON_Delete(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, '\0', size);
    cJSON *doc = NULL, *patch = NULL;
    static bool hooked;
    long long inputs;
    size_t dlen;

    codec_init();
    if (!hooked) { /* after codec_init(), which installs its own once */
        cJSON_Hooks hooks = {.malloc_fn = count_malloc, .free_fn = count_free};
        cJSON_InitHooks(&hooks);
        hooked = true;
    }
    mem_now = 0; /* what is live now is freed by the previous input's end */
    if (!nul)
        return 0;
    dlen = (size_t)(nul - data);
    if (json_parse((const char *)data, dlen, &fuzz_limits, &doc, NULL) < 0)
        goto out;
    if (json_parse((const char *)nul + 1, size - dlen - 1, &fuzz_limits, &patch, NULL) < 0)
        goto out;
    inputs = mem_now;
    check_json_patch(doc, patch, inputs);
    check_merge_patch(doc, patch, inputs);
    check_smp(doc, patch, inputs);
out:
    cJSON_Delete(patch);
    cJSON_Delete(doc);
    return 0;
}
