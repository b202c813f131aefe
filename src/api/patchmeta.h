/*
 * Patch metadata of the built-in kinds: which lists strategic merge patch merges, and by which
 * key. These are the patchStrategy/patchMergeKey struct tags of k8s.io/api (the facts
 * kube-apiserver's strategic merge reads by reflection); codec/smp.c applies them through
 * api_patch_meta_lookup().
 *
 * The table lives here, beside the type tables, because it describes the kinds, not the
 * server: any code that applies a strategic merge patch to a built-in object (the apiserver's
 * PATCH verb today, an offline "koord patch" or a test tomorrow) needs the same facts. It is
 * kept apart from the api_schema trees because it also covers kinds koord serves without a
 * schema (CustomResourceDefinition) and kinds other changes add, and is keyed by group and kind
 * so it needs none of their structures.
 *
 * Custom resources have no entry: kube-apiserver answers strategic merge patches for them with
 * 415, and so should the caller.
 */
#ifndef KOORD_API_PATCHMETA_H
#define KOORD_API_PATCHMETA_H

#include <stdbool.h>

#include "codec/smp.h"

struct api_patch_meta;

/* The patch metadata of a built-in kind (group "" for core), or NULL when strategic merge
 * patch is not served for it. */
const struct api_patch_meta *api_patch_meta_find(const char *group, const char *kind);

/* An smp_lookup_fn: userdata is what api_patch_meta_find() returned. */
bool api_patch_meta_lookup(const char *path, const void *userdata, struct smp_list_meta *ret);

#endif
