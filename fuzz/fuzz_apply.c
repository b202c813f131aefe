/*
 * libFuzzer target for the field sets and the merge of server-side apply (src/api/fieldset.c):
 * an apply body is untrusted YAML, and the live object and the fieldsV1 of its managedFields
 * come back from storage where any client may have written them, so every input must give a
 * clean result. The input is "<live JSON>\0<config YAML>\0<fieldsV1 JSON>" (a missing part is
 * absent), decoded under small limits; list types come from a small table (map lists keyed by
 * one field, by two fields with a defaulted one, set lists, an atomic object) as
 * apiserver/apply.c would give them. Checked properties:
 *  - api_fieldset_from_object() returns 0, or -EINVAL with a message and no set;
 *  - a set survives encode -> decode (the managedFields wire form) unchanged, and equals its
 *    intersection with itself;
 *  - api_fieldset_merge(live, config) succeeds whenever config's set does, else -EINVAL with a
 *    message; the result is an object and merging config into it again changes nothing;
 *  - comparing an object with itself finds no change, and compare(live, merged) runs;
 *  - union then subtract leaves nothing of what was subtracted, intersections are subsets;
 *  - api_fieldset_decode() of the third part returns 0 (then encode -> decode is stable) or
 *    -EINVAL with a message;
 *  - api_fieldset_prune() and api_fieldset_paths() run over any of these sets.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "api/fieldset.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* "m" and "spec.m" are maps keyed by "k"; "p" by "port" and "proto" (default "TCP"); "s" and
 * "metadata.finalizers" are sets; "at" is atomic; everything else has the defaults. */
static void types_fn(const char *path, const void *userdata, struct api_fs_type *ret)
{
    (void)userdata;
    if (!strcmp(path, "m") || !strcmp(path, "spec.m") || !strcmp(path, "m.m")) {
        ret->kind = API_FS_MAP;
        ret->keys[0] = "k";
    } else if (!strcmp(path, "p") || !strcmp(path, "m.p")) {
        ret->kind = API_FS_MAP;
        ret->keys[0] = "port";
        ret->keys[1] = "proto";
        ret->key_dflt[1] = "\"TCP\"";
    } else if (!strcmp(path, "s") || !strcmp(path, "metadata.finalizers") || !strcmp(path, "m.s")) {
        ret->kind = API_FS_SET;
    } else if (!strcmp(path, "at") || !strcmp(path, "m.at")) {
        ret->kind = API_FS_ATOMIC;
    }
}

static const struct api_fs_types types = {types_fn, NULL};

/* The set of obj, or NULL when it breaks a list type (then with a message). */
static cJSON *set_of(const cJSON *obj)
{
    struct strbuf err = STRBUF_INIT;
    cJSON *s = NULL;
    int r = api_fieldset_from_object(obj, &types, &s, &err);

    if (r < 0) {
        CHECK(r == -EINVAL && err.len > 0 && !s);
        s = NULL;
    } else {
        CHECK(r == 0 && s);
    }
    strbuf_release(&err);
    return s;
}

/* encode -> decode gives the same set; paths print. */
static void check_wire(const cJSON *s)
{
    struct strbuf err = STRBUF_INIT, paths = STRBUF_INIT;
    cJSON *enc = api_fieldset_encode(s), *dec = NULL, *self;

    CHECK(api_fieldset_decode(enc, &dec, &err) == 0);
    CHECK(api_fieldset_equal(dec, s));
    self = api_fieldset_intersect(s, s);
    CHECK(api_fieldset_equal(self, s));
    api_fieldset_paths(s, &paths);
    CHECK(api_fieldset_is_empty(s) == (paths.len == 0));
    cJSON_Delete(self);
    cJSON_Delete(dec);
    cJSON_Delete(enc);
    strbuf_release(&paths);
    strbuf_release(&err);
}

/* a ∪ b − b shares nothing with b; a ∩ b is within a and within b. */
static void check_algebra(const cJSON *a, const cJSON *b)
{
    cJSON *u = cJSON_Duplicate(a, true), *i, *x;

    CHECK(u);
    i = api_fieldset_intersect(a, b);
    x = api_fieldset_intersect(i, a);
    CHECK(api_fieldset_equal(x, i));
    cJSON_Delete(x);
    x = api_fieldset_intersect(i, b);
    CHECK(api_fieldset_equal(x, i));
    cJSON_Delete(x);
    api_fieldset_union(u, b);
    x = api_fieldset_intersect(u, b);
    CHECK(api_fieldset_equal(x, b) || api_fieldset_is_empty(b));
    cJSON_Delete(x);
    api_fieldset_subtract(u, b);
    x = api_fieldset_intersect(u, b);
    CHECK(api_fieldset_is_empty(x));
    cJSON_Delete(x);
    cJSON_Delete(i);
    cJSON_Delete(u);
}

static void check_compare_self(const cJSON *obj)
{
    cJSON *chg = NULL, *rem = NULL;

    api_fieldset_compare(obj, obj, &types, &chg, &rem);
    CHECK(api_fieldset_is_empty(chg) && api_fieldset_is_empty(rem));
    cJSON_Delete(chg);
    cJSON_Delete(rem);
}

static void check_merge(const cJSON *live, const cJSON *config, const cJSON *cfgset,
                        const cJSON *liveset, const cJSON *other)
{
    struct strbuf err = STRBUF_INIT;
    cJSON *merged = NULL, *again = NULL, *chg = NULL, *rem = NULL, *keep;
    int r = api_fieldset_merge(live, config, &types, &merged, &err);

    if (r < 0) {
        CHECK(r == -EINVAL && err.len > 0 && !merged && !cfgset);
        goto out;
    }
    CHECK(r == 0 && cJSON_IsObject(merged));
    strbuf_reset(&err);
    CHECK(api_fieldset_merge(merged, config, &types, &again, &err) == 0);
    CHECK(cJSON_Compare(merged, again, true));
    check_compare_self(merged);
    api_fieldset_compare(live, merged, &types, &chg, &rem);
    check_wire(chg);
    check_wire(rem);
    /* What the manager applied before (live's fields, say) dropped, some other set kept. */
    keep = other ? cJSON_Duplicate(other, true) : api_fieldset_new();
    CHECK(keep);
    if (liveset)
        api_fieldset_prune(again, liveset, keep, &types);
    if (cfgset)
        api_fieldset_prune(merged, cfgset, NULL, &types);
    cJSON_Delete(keep);
out:
    cJSON_Delete(chg);
    cJSON_Delete(rem);
    cJSON_Delete(again);
    cJSON_Delete(merged);
    strbuf_release(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data, *end = p + size, *parts[3] = {NULL, NULL, NULL};
    size_t lens[3] = {0, 0, 0};
    struct strbuf err = STRBUF_INIT;
    cJSON *live = NULL, *config = NULL, *fields = NULL, *liveset = NULL, *cfgset = NULL,
          *decoded = NULL, **docs = NULL;
    size_t ndocs = 0;
    int r;

    codec_init();
    for (int i = 0; i < 3 && p <= end; i++) {
        const char *nul = memchr(p, '\0', (size_t)(end - p));
        parts[i] = p;
        lens[i] = nul ? (size_t)(nul - p) : (size_t)(end - p);
        p += lens[i] + 1;
    }
    if (lens[0] && json_parse(parts[0], lens[0], &fuzz_limits, &live, NULL) < 0)
        goto out;
    if (parts[1] && yaml_parse_stream(parts[1], lens[1], &fuzz_limits, &docs, &ndocs, NULL) < 0)
        goto out;
    config = ndocs ? docs[0] : NULL;
    if (parts[2] && lens[2] && json_parse(parts[2], lens[2], &fuzz_limits, &fields, NULL) < 0)
        goto out;

    if (fields) {
        r = api_fieldset_decode(fields, &decoded, &err);
        if (r < 0) {
            CHECK(r == -EINVAL && err.len > 0 && !decoded);
        } else {
            CHECK(r == 0);
            check_wire(decoded);
        }
    }
    if (live) {
        check_compare_self(live);
        if ((liveset = set_of(live)))
            check_wire(liveset);
    }
    if (config && (cfgset = set_of(config)))
        check_wire(cfgset);
    if (liveset && cfgset)
        check_algebra(liveset, cfgset);
    if (decoded && cfgset)
        check_algebra(decoded, cfgset);
    if (config)
        check_merge(live, config, cfgset, liveset, decoded);
out:
    cJSON_Delete(decoded);
    cJSON_Delete(cfgset);
    cJSON_Delete(liveset);
    cJSON_Delete(fields);
    cJSON_Delete(live);
    codec_docs_free(docs, ndocs);
    strbuf_release(&err);
    return 0;
}
