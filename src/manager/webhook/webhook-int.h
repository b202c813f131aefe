/*
 * Internals shared by the webhook handlers (webhook.h): the decoded request each handler gets
 * and the outcome it fills. A handler returns 0 to allow (with res->mutated when it changed the
 * object), -EACCES to deny (HTTP 400 in the result, res->msg the message) and any other
 * negative errno for a failed step (500, res->msg says which).
 */
#ifndef KOORD_MANAGER_WEBHOOK_WEBHOOK_INT_H
#define KOORD_MANAGER_WEBHOOK_WEBHOOK_INT_H

#include <cjson/cJSON.h>

#include "base/strbuf.h"
#include "manager/webhook/webhook.h"

struct webhook__request {
    const char *uid;
    const char *operation; /* CREATE, UPDATE, DELETE, CONNECT */
    const char *namespace; /* "" when cluster-scoped */
    const char *name;      /* "" when the server generates it */
    const char *group;     /* request.resource */
    const char *resource;
    const char *subresource; /* "" for the main resource */
    const cJSON *object;     /* NULL on DELETE */
    const cJSON *old_object; /* NULL on CREATE */
};

struct webhook__result {
    cJSON *mutated;    /* owned; NULL = not changed */
    struct strbuf msg; /* denial or failure message */
    cJSON *warnings;   /* owned array of strings; NULL = none */
};

typedef int (*webhook__handler_fn)(const struct webhook_config *cfg,
                                   const struct webhook__request *req, const struct webhook_data *d,
                                   struct webhook__result *res);

int webhook__mutate_pod(const struct webhook_config *cfg, const struct webhook__request *req,
                        const struct webhook_data *d, struct webhook__result *res);
int webhook__validate_pod(const struct webhook_config *cfg, const struct webhook__request *req,
                          const struct webhook_data *d, struct webhook__result *res);
int webhook__validate_configmap(const struct webhook_config *cfg,
                                const struct webhook__request *req, const struct webhook_data *d,
                                struct webhook__result *res);
int webhook__mutate_quota(const struct webhook_config *cfg, const struct webhook__request *req,
                          const struct webhook_data *d, struct webhook__result *res);
int webhook__validate_quota(const struct webhook_config *cfg, const struct webhook__request *req,
                            const struct webhook_data *d, struct webhook__result *res);
int webhook__mutate_node(const struct webhook_config *cfg, const struct webhook__request *req,
                         const struct webhook_data *d, struct webhook__result *res);

/* Small JSON helpers over metadata. */
const char *webhook__meta_str(const cJSON *o, const char *k);   /* "" when absent */
const char *webhook__label(const cJSON *o, const char *k);      /* NULL when absent */
const char *webhook__annotation(const cJSON *o, const char *k); /* NULL when absent */
/* The object member k of o, created (replacing a non-object) when missing. */
cJSON *webhook__object_at(cJSON *o, const char *k);
void webhook__set_str(cJSON *o, const char *k, const char *v);

#endif
