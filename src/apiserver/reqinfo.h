/*
 * What a request is about, from its method, path and query: the Kubernetes URL layout of
 * reference kubernetes-api.md 1.1 and the verb mapping of 1.2, as apiserver's
 * pkg/endpoints/request/requestinfo.go derives them. Routing, authorization (a node may only
 * write its own objects) and audit all start from this.
 */
#ifndef KOORD_APISERVER_REQINFO_H
#define KOORD_APISERVER_REQINFO_H

#include <stdbool.h>

struct api_reqinfo {
    bool is_resource; /* false: discovery, /version, /healthz, /openapi/... */
    char *verb;       /* get list watch create update patch delete deletecollection; for
                         non-resource requests the lower-case method */
    char *path;       /* the request path as given */
    char *api_prefix; /* "api" or "apis" ("" for non-resource) */
    char *group;      /* "" for core */
    char *version;
    char *namespace;   /* "" when cluster-scoped or all namespaces */
    char *resource;    /* plural, e.g. "pods" */
    char *subresource; /* e.g. "status", "binding", "eviction", or "" */
    char *name;        /* object name, or "" (for list/watch: the metadata.name field selector
                          value when it requires an exact name, as authorization sees it) */
};

/* Bound on the path a peer may send. */
#define API_REQINFO_MAX_PATH 8192

/*
 * Parses one request. query_watch: the value of the `watch` query parameter or NULL;
 * field_selector: the `fieldSelector` parameter or NULL. Returns 0, -EINVAL for a path that is
 * not absolute or holds "." / ".." segments, -E2BIG beyond API_REQINFO_MAX_PATH. ret is filled
 * on success only; release with api_reqinfo_release().
 */
int api_reqinfo_parse(const char *method, const char *path, const char *query_watch,
                      const char *field_selector, struct api_reqinfo *ret);

void api_reqinfo_release(struct api_reqinfo *ri);

#endif
