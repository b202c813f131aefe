/*
 * Type descriptions built at run time from a CRD's openAPIV3Schema, so a CustomResource created
 * on koord's API server is validated, defaulted, pruned and encoded by the same walker as the
 * built-in kinds (schema.h) instead of by a second engine. The reverse direction is
 * api_crd_openapi() (crd.h); a round trip through both keeps every rule.
 */
#ifndef KOORD_API_OPENAPI_H
#define KOORD_API_OPENAPI_H

#include <cjson/cJSON.h>

#include "api/field.h"
#include "api/schema.h"

struct api_schema_tree;

/*
 * Builds the description of an OpenAPI v3 (structural) schema. Supported: type object
 * (properties, required, additionalProperties, minProperties, x-kubernetes-map-type,
 * x-kubernetes-preserve-unknown-fields), array (items, minItems), string (enum of strings,
 * maxLength, pattern as a POSIX extended regex, format date-time), integer (format, minimum,
 * maximum, exclusiveMinimum/Maximum), number, boolean, x-kubernetes-int-or-string (a quantity
 * when its pattern is the Kubernetes quantity pattern), nullable, default, description.
 * The root always has `apiVersion` and `kind` (strings) and `metadata` (ObjectMeta), first and
 * in that order, whether the schema lists them or not, as kube-apiserver never prunes them and
 * validates metadata as ObjectMeta whatever the schema says; additionalProperties at the root
 * is refused.
 * Anything unsupported is an error naming its path. Returns 0 with *ret, -EINVAL with errors
 * in errs, -E2BIG past 64 properties in one object or 128 levels of nesting.
 */
int api_schema_from_openapi(const cJSON *oas, struct api_schema_tree **ret,
                            struct field_errors *errs);

/* The root of a built tree (valid until the tree is freed). */
const struct api_schema *api_schema_tree_root(const struct api_schema_tree *t);

void api_schema_tree_free(struct api_schema_tree *t);

#endif
