/*
 * Authentication and the node authorization rule (see auth.h for the rule itself).
 */
#include "apiserver/auth.h"

#include <string.h>
#include <strings.h>

#include "apiserver/reqinfo.h"
#include "apiserver/tokens.h"
#include "base/base.h"
#include "http/server.h"

#define NODE_USER_PREFIX "system:node:"
#define NODE_LEASE_NS    "kube-node-lease"

int api_authenticate(const struct http_request *req, const struct api_tokens *tokens,
                     struct api_user *ret)
{
    const char *user, *auth = http_request_header(req, "Authorization");
    const char *const *groups;
    const struct api_token_user *tu;
    int r = http_request_client_cert(req, &user, &groups);

    if (r == 0) {
        *ret = (struct api_user){.name = user, .uid = "", .groups = groups};
        return 0;
    }
    if (!auth || strncasecmp(auth, "Bearer ", 7))
        return r == -EACCES ? -EACCES : -ENOENT;
    auth += 7;
    while (*auth == ' ')
        auth++;
    tu = tokens ? api_tokens_lookup(tokens, auth) : NULL;
    if (!tu)
        return -EACCES;
    *ret = (struct api_user){.name = tu->user, .uid = tu->uid, .groups = tu->groups};
    return 0;
}

const char *api_user_node(const struct api_user *u)
{
    size_t n = strlen(NODE_USER_PREFIX);

    if (!u || !u->name || strncmp(u->name, NODE_USER_PREFIX, n) || !u->name[n])
        return NULL;
    return u->name + n;
}

static bool is(const struct api_reqinfo *ri, const char *group, const char *resource)
{
    return !strcmp(ri->group, group) && !strcmp(ri->resource, resource);
}

static bool is_nodemetrics(const struct api_reqinfo *ri)
{
    return is(ri, "slo.koordinator.sh", "nodemetrics") ||
           is(ri, "metrics.koordinator.sh", "nodemetrics");
}

static bool is_read(const char *verb)
{
    return !strcmp(verb, "get") || !strcmp(verb, "list") || !strcmp(verb, "watch");
}

enum api_authz_node api_authz_node_request(const char *node, const struct api_reqinfo *ri)
{
    bool named =
        is(ri, "", "nodes") || is_nodemetrics(ri) || is(ri, "coordination.k8s.io", "leases");
    const char *sub = ri->subresource;

    if (!ri->is_resource || is_read(ri->verb))
        return API_AUTHZ_ALLOW;
    if (!strcmp(ri->verb, "deletecollection"))
        return API_AUTHZ_DENY;
    if (is(ri, "authentication.k8s.io", "tokenreviews") ||
        is(ri, "authentication.k8s.io", "selfsubjectreviews") ||
        is(ri, "authorization.k8s.io", "selfsubjectaccessreviews") ||
        is(ri, "authorization.k8s.io", "selfsubjectrulesreviews"))
        return !strcmp(ri->verb, "create") ? API_AUTHZ_ALLOW : API_AUTHZ_DENY;
    /* Objects named after the node: the URL already tells for everything but create. */
    if (named && *ri->name && strcmp(ri->name, node))
        return API_AUTHZ_DENY;
    if (is(ri, "coordination.k8s.io", "leases") && strcmp(ri->namespace, NODE_LEASE_NS))
        return API_AUTHZ_DENY;
    if (named && (!*sub || !strcmp(sub, "status")))
        return API_AUTHZ_CHECK_OBJECTS;
    if (is(ri, "", "pods") && (!*sub || !strcmp(sub, "status") || !strcmp(sub, "eviction")))
        return API_AUTHZ_CHECK_OBJECTS;
    if (is(ri, "", "events") && !*sub)
        return API_AUTHZ_CHECK_OBJECTS;
    return API_AUTHZ_DENY;
}

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);

    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool eq(const char *a, const char *b)
{
    return a && b && !strcmp(a, b);
}

bool api_authz_node_object(const char *node, const struct api_reqinfo *ri, const cJSON *obj)
{
    if (is(ri, "", "pods"))
        return eq(str_at(obj, "spec", "nodeName"), node);
    if (is(ri, "", "events"))
        return (eq(str_at(obj, "involvedObject", "kind"), "Node") &&
                eq(str_at(obj, "involvedObject", "name"), node)) ||
               eq(str_at(obj, "source", "host"), node);
    if (is(ri, "coordination.k8s.io", "leases") &&
        !eq(str_at(obj, "metadata", "namespace"), NODE_LEASE_NS))
        return false;
    return eq(str_at(obj, "metadata", "name"), node);
}

void api_authz_forbidden_message(const char *user, const struct api_reqinfo *ri, const char *name,
                                 const char *why, struct strbuf *out)
{
    const char *r = ri->resource;

    if (!ri->is_resource) {
        strbuf_addf(out, "forbidden: User \"%s\" cannot %s path \"%s\"", user, ri->verb, ri->path);
    } else {
        if (*ri->group)
            strbuf_addf(out, "%s.%s", r, ri->group);
        else
            strbuf_addstr(out, r);
        if (name && *name)
            strbuf_addf(out, " \"%s\"", name);
        strbuf_addf(out,
                    " is forbidden: User \"%s\" cannot %s resource \"%s%s%s\" in API group \"%s\"",
                    user, ri->verb, r, *ri->subresource ? "/" : "", ri->subresource, ri->group);
        if (*ri->namespace)
            strbuf_addf(out, " in the namespace \"%s\"", ri->namespace);
        else
            strbuf_addstr(out, " at the cluster scope");
    }
    if (why && *why)
        strbuf_addf(out, ": %s", why);
}
