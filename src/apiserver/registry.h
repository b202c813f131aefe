/*
 * The resources an API server serves: the built-in kinds (from the api module's static
 * descriptions) and every kind defined by a CustomResourceDefinition (from its
 * openAPIV3Schema), with the names, scope and subresources the discovery documents publish
 * (reference kubernetes-api.md 1.3-1.4). Creating or deleting a CRD adds or removes its
 * resources at once; a request holds a reference to the resource it started with, so a CRD
 * change never pulls a description from under it.
 */
#ifndef KOORD_APISERVER_REGISTRY_H
#define KOORD_APISERVER_REGISTRY_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "api/field.h"

struct api_kind;
struct api_schema;
struct table_crd_column;

struct api_resource {
    const char *group; /* "" for core */
    const char *version;
    const char *plural;
    const char *singular;
    const char *kind;
    const char *const *short_names;  /* NULL-terminated, may be NULL */
    const char *const *categories;   /* NULL-terminated, may be NULL */
    const char *const *subresources; /* e.g. "status", "binding"; NULL-terminated */
    bool namespaced;
    bool create_only; /* a review: create answers it, nothing is stored */
    bool read_only;   /* clients only read it and write its status (the manager's NodeMetrics) */
    const struct api_kind *builtin;  /* static description, or NULL for a CRD */
    const struct api_schema *schema; /* the whole-object description */
    const char *crd_name;            /* "<plural>.<group>" for CRD-defined resources */
    /* A CRD's subresources.scale: the JSON paths (".spec.replicas") of the replicas wanted and
     * seen and of the label selector string; NULL without a scale subresource. */
    const char *scale_spec_path, *scale_status_path, *scale_selector_path;
    /* A CRD with several versions (conversion None): its objects keep the apiVersion they were
     * written with, and every answer carries this resource's instead (only apiVersion
     * differs between versions without a conversion webhook). */
    bool multi_version;
    /* A CRD version's additionalPrinterColumns (table.h), ncolumns of them; NULL/0 for none
     * and for built-in kinds. */
    const struct table_crd_column *columns;
    size_t ncolumns;
};

struct api_registry;

/* A registry holding every built-in kind of the api module (those served by an aggregated
 * server excepted), CustomResourceDefinitions and TokenReviews: what `koord apiserver` serves. */
struct api_registry *api_registry_new(void);

/* A registry holding exactly the given kinds (NULL-terminated), e.g. the manager's NodeMetric
 * API; no CRDs can be added to it usefully since nothing serves the CRD resource. */
struct api_registry *api_registry_new_kinds(const struct api_kind *const *kinds);
void api_registry_free(struct api_registry *r);

/*
 * Serves the kinds of a CRD object (replacing what the same CRD served before): each served
 * version, in kube's version priority (v2 > v1 > v1beta2 > v1beta1 > v1alpha1 > others by
 * name), so the first is the group's preferred version as in kube's discovery. The CRD must
 * pass api_crd_check() and each served version's schema api_schema_from_openapi(); a
 * conversion strategy other than None is refused (no conversion webhooks). Otherwise errors
 * are appended and -EINVAL returned. -EEXIST when it would shadow a built-in resource.
 */
int api_registry_add_crd(struct api_registry *r, const cJSON *crd, struct field_errors *errs);

/* Stops serving the CRD named "<plural>.<group>"; -ENOENT when it is not served. */
int api_registry_remove_crd(struct api_registry *r, const char *crd_name);

/* A number that changes whenever the served resources do (a CRD added, replaced or removed):
 * documents generated from the registry (openapi.h) are current while it stays the same. */
unsigned long api_registry_generation(struct api_registry *r);

/*
 * Finds a resource by group, version and plural (or a short name, or the singular name, as
 * kubectl may send them resolved). Returns a reference (release with api_resource_unref) or
 * NULL.
 */
const struct api_resource *api_registry_lookup(struct api_registry *r, const char *group,
                                               const char *version, const char *plural);

/* Finds a resource by apiVersion and kind (for request bodies). Reference or NULL. */
const struct api_resource *api_registry_lookup_kind(struct api_registry *r, const char *api_version,
                                                    const char *kind);

/* Calls fn for every served resource (each version of a CRD separately). fn must not call
 * back into the registry. */
void api_registry_foreach(struct api_registry *r,
                          void (*fn)(const struct api_resource *res, void *userdata),
                          void *userdata);

/* Takes another reference on res (held by the caller). */
const struct api_resource *api_resource_ref(const struct api_resource *res);

/* Drops a reference; returns NULL. */
const struct api_resource *api_resource_unref(const struct api_resource *res);

/* The discovery documents (new trees): GET /api, /apis, /apis/<group> (NULL when the group is
 * not served), and the APIResourceList of /api/v1 or /apis/<group>/<version> (NULL when not
 * served). */
cJSON *api_registry_api_versions(struct api_registry *r);
cJSON *api_registry_group_list(struct api_registry *r);
cJSON *api_registry_group(struct api_registry *r, const char *group);

/*
 * Puts the groups of an APIGroupList's "groups" array in kube-aggregator's order: the built-in
 * groups first as they are, then the others by priority (highest first; prio(group) or, when
 * prio is NULL or for a group it does not know, 1000, a CRD's), then by the least
 * "<version>.<group>" APIService name of the group. kubectl resolves a resource name that
 * several groups serve (nodemetrics) to the first of them, so the order is behaviour.
 */
void api_registry_sort_groups(struct api_registry *r, cJSON *groups,
                              int (*prio)(const char *group, void *userdata), void *userdata);
cJSON *api_registry_resource_list(struct api_registry *r, const char *group, const char *version);

#endif
