/*
 * admissionregistration.k8s.io/v1 MutatingWebhookConfiguration and
 * ValidatingWebhookConfiguration: the objects that tell an API server which admission webhooks
 * to call (reference kubernetes-api.md 7.5; the calling is src/apiserver/webhook.h). Fields and
 * defaults follow kubernetes/api admissionregistration/v1/types.go and kubernetes
 * pkg/apis/admissionregistration/v1/defaults.go (failurePolicy Fail, matchPolicy Equivalent,
 * timeoutSeconds 10, reinvocationPolicy Never, selectors {}, rules[].scope "*", service.port
 * 443); the rules beyond the schema follow pkg/apis/admissionregistration/validation
 * (validateMutatingWebhook, validateRuleWithOperations, validateResources,
 * ValidateWebhookURL, ValidateWebhookService), with their messages. matchConditions are not
 * served (kept as unknown fields, with the usual warning).
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "api/labels.h"
#include "api/schema.h"
#include "base/base.h"
#include "base/strbuf.h"

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNull(c) ? NULL : c;
}

static const char *get_str(const cJSON *o, const char *k)
{
    const cJSON *c = get(o, k);
    return cJSON_IsString(c) ? c->valuestring : "";
}

/* An error at "<base><child>" with a value built from a string (or NULL). */
static void err_at(struct api_walk *w, const char *base, const char *child,
                   enum field_error_type type, const cJSON *value, const char *msg)
{
    struct strbuf path = STRBUF_INIT;

    strbuf_addf(&path, "%s%s", base, child ? child : "");
    if (msg)
        api_walk_error(w, path.buf, type, value, "%s", msg);
    else
        api_walk_error(w, path.buf, type, value, NULL);
    strbuf_release(&path);
}

/* IsFullyQualifiedName: a DNS-1123 subdomain of at least three labels. */
static void check_webhook_name(struct api_walk *w, const char *base, const cJSON *name)
{
    struct strbuf why = STRBUF_INIT;
    const char *s = cJSON_IsString(name) ? name->valuestring : "";
    size_t dots = 0;

    if (!*s) {
        err_at(w, base, ".name", FIELD_REQUIRED, NULL, NULL);
        return;
    }
    if (labels_check_dns1123_subdomain(s, &why) < 0) {
        err_at(w, base, ".name", FIELD_INVALID, name, why.buf);
    } else {
        for (const char *p = s; *p; p++)
            dots += *p == '.';
        if (dots < 2)
            err_at(w, base, ".name", FIELD_INVALID, name,
                   "should be a domain with at least three segments separated by dots");
    }
    strbuf_release(&why);
}

/* A list of strings where "*" must stand alone (operations, apiGroups, apiVersions). */
static void check_star_list(struct api_walk *w, const char *base, const cJSON *list,
                            const char *what, bool no_empty)
{
    const cJSON *it;
    bool star = false;
    int i = 0;
    char child[64];

    if (cJSON_GetArraySize(list) == 0) {
        err_at(w, base, NULL, FIELD_REQUIRED, NULL, NULL);
        return;
    }
    cJSON_ArrayForEach(it, list)
    {
        const char *s = cJSON_IsString(it) ? it->valuestring : "";
        star |= !strcmp(s, "*");
        if (no_empty && !*s) {
            (void)snprintf(child, sizeof(child), "[%d]", i);
            err_at(w, base, child, FIELD_REQUIRED, NULL, NULL);
        }
        i++;
    }
    if (star && i > 1) {
        char msg[96];
        (void)snprintf(msg, sizeof(msg), "if '*' is present, must not specify other %s", what);
        err_at(w, base, NULL, FIELD_INVALID, list, msg);
    }
}

/* validateResources: plain, "x/y", wildcard resource or subresource, and their conflicts. */
static void check_resources(struct api_walk *w, const char *base, const cJSON *list)
{
    const char *wild_sub[32], *wild_res[32];
    size_t nws = 0, nwr = 0;
    bool dbl = false, single = false, plain = false;
    const cJSON *it;
    int i = 0, n = cJSON_GetArraySize(list);
    char child[200];

    if (n == 0) {
        err_at(w, base, NULL, FIELD_REQUIRED, NULL, NULL);
        return;
    }
    cJSON_ArrayForEach(it, list)
    {
        const char *s = cJSON_IsString(it) ? it->valuestring : "", *slash;
        char msg[256];
        size_t rlen;

        (void)snprintf(child, sizeof(child), "[%d]", i++);
        if (!*s) {
            err_at(w, base, child, FIELD_REQUIRED, NULL, NULL);
            continue;
        }
        dbl |= !strcmp(s, "*/*");
        single |= !strcmp(s, "*");
        if (!(slash = strchr(s, '/'))) {
            plain |= strcmp(s, "*") != 0;
            continue;
        }
        rlen = (size_t)(slash - s);
        for (size_t k = 0; k < nws; k++)
            if (!strncmp(wild_sub[k], s, rlen) && wild_sub[k][rlen] == '/') {
                (void)snprintf(msg, sizeof(msg), "if '%.*s/*' is present, must not specify %s",
                               (int)rlen, s, s);
                err_at(w, base, child, FIELD_INVALID, it, msg);
            }
        for (size_t k = 0; k < nwr; k++)
            if (!strcmp(wild_res[k], slash + 1)) {
                (void)snprintf(msg, sizeof(msg), "if '*/%s' is present, must not specify %s",
                               slash + 1, s);
                err_at(w, base, child, FIELD_INVALID, it, msg);
            }
        if (!strcmp(slash + 1, "*") && nws < ARRAY_SIZE(wild_sub))
            wild_sub[nws++] = s;
        if (rlen == 1 && s[0] == '*' && nwr < ARRAY_SIZE(wild_res))
            wild_res[nwr++] = slash + 1;
    }
    if (n > 1 && dbl)
        err_at(w, base, NULL, FIELD_INVALID, list,
               "if '*/*' is present, must not specify other resources");
    if (single && plain)
        err_at(w, base, NULL, FIELD_INVALID, list,
               "if '*' is present, must not specify other resources without subresources");
}

/* ValidateWebhookURL (forceHTTPS). */
static void check_url(struct api_walk *w, const char *base, const cJSON *url)
{
    const char *s = url && cJSON_IsString(url) ? url->valuestring : "", *host, *end;
    const char *msg = NULL;

    if (strncmp(s, "https://", 8) != 0) {
        msg = "'https' is the only allowed URL scheme";
    } else {
        host = s + 8;
        end = host + strcspn(host, "/?#");
        if (memchr(host, '@', (size_t)(end - host)))
            msg = "user information is not permitted in the URL";
        else if (end == host)
            msg = "host must be specified";
        else if (strchr(s, '#'))
            msg = "fragments are not permitted in the URL";
        else if (strchr(s, '?'))
            msg = "query parameters are not permitted in the URL";
    }
    if (msg)
        err_at(w, base, ".clientConfig.url", FIELD_INVALID, url, msg);
}

/* ValidateWebhookService. */
static void check_service(struct api_walk *w, const char *base, const cJSON *svc)
{
    const cJSON *port = get(svc, "port"), *path = get(svc, "path");

    if (!*get_str(svc, "name"))
        err_at(w, base, ".clientConfig.service.name", FIELD_REQUIRED, NULL,
               "service name is required");
    if (!*get_str(svc, "namespace"))
        err_at(w, base, ".clientConfig.service.namespace", FIELD_REQUIRED, NULL,
               "service namespace is required");
    if (cJSON_IsNumber(port) && (port->valuedouble < 1 || port->valuedouble > 65535))
        err_at(w, base, ".clientConfig.service.port", FIELD_INVALID, port,
               "port is not valid: must be between 1 and 65535, inclusive");
    if (cJSON_IsString(path) && *path->valuestring) {
        const char *p = path->valuestring;
        if (p[0] != '/')
            err_at(w, base, ".clientConfig.service.path", FIELD_INVALID, path,
                   "must start with a '/'");
        else if (strstr(p, "//"))
            err_at(w, base, ".clientConfig.service.path", FIELD_INVALID, path,
                   "segment[1] may not be empty");
    }
}

static void check_webhook(struct api_walk *w, const char *base, const cJSON *wh)
{
    const cJSON *cc = get(wh, "clientConfig"), *url = get(cc, "url"), *svc = get(cc, "service");
    const cJSON *versions = get(wh, "admissionReviewVersions"), *it, *se = get(wh, "sideEffects");
    const cJSON *timeout = get(wh, "timeoutSeconds"), *rule;
    bool known = false;
    int i = 0;
    char rbase[96], child[160];

    check_webhook_name(w, base, get(wh, "name"));
    /* AdmissionReviewVersions: required, unique, at least one this server speaks. */
    if (cJSON_GetArraySize(versions) == 0) {
        err_at(w, base, ".admissionReviewVersions", FIELD_REQUIRED, NULL,
               "must specify one of v1, v1beta1");
    } else {
        cJSON_ArrayForEach(it, versions)
        {
            const char *v = cJSON_IsString(it) ? it->valuestring : "";
            for (const cJSON *p = versions->child; p != it; p = p->next)
                if (cJSON_IsString(p) && !strcmp(p->valuestring, v)) {
                    (void)snprintf(child, sizeof(child), ".admissionReviewVersions[%d]", i);
                    err_at(w, base, child, FIELD_DUPLICATE, it, NULL);
                    break;
                }
            known |= !strcmp(v, "v1") || !strcmp(v, "v1beta1");
            i++;
        }
        if (!known)
            err_at(w, base, ".admissionReviewVersions", FIELD_INVALID, versions,
                   "must include at least one of v1, v1beta1");
    }
    if (!cJSON_IsString(se))
        err_at(w, base, ".sideEffects", FIELD_REQUIRED, NULL,
               "must specify one of None, NoneOnDryRun");
    else if (strcmp(se->valuestring, "None") && strcmp(se->valuestring, "NoneOnDryRun"))
        err_at(w, base, ".sideEffects", FIELD_NOT_SUPPORTED, se,
               "supported values: \"None\", \"NoneOnDryRun\"");
    if (cJSON_IsNumber(timeout) && (timeout->valuedouble < 1 || timeout->valuedouble > 30))
        err_at(w, base, ".timeoutSeconds", FIELD_INVALID, timeout,
               "the timeout value must be between 1 and 30 seconds");
    if ((url != NULL) == (svc != NULL))
        err_at(w, base, ".clientConfig", FIELD_REQUIRED, NULL,
               "exactly one of url or service is required");
    else if (cJSON_IsString(url))
        check_url(w, base, url);
    else if (svc)
        check_service(w, base, svc);
    i = 0;
    cJSON_ArrayForEach(rule, get(wh, "rules"))
    {
        const cJSON *ops = get(rule, "operations");
        (void)snprintf(rbase, sizeof(rbase), "%s.rules[%d]", base, i++);
        (void)snprintf(child, sizeof(child), "%s.operations", rbase);
        check_star_list(w, child, ops, "operations", false);
        (void)snprintf(child, sizeof(child), "%s.apiGroups", rbase);
        check_star_list(w, child, get(rule, "apiGroups"), "API groups", false);
        (void)snprintf(child, sizeof(child), "%s.apiVersions", rbase);
        check_star_list(w, child, get(rule, "apiVersions"), "API versions", true);
        (void)snprintf(child, sizeof(child), "%s.resources", rbase);
        check_resources(w, child, get(rule, "resources"));
    }
}

/* ValidateMutatingWebhookConfiguration / ValidateValidatingWebhookConfiguration. */
static void check_configuration(const struct api_schema *s, const cJSON *o, struct api_walk *w)
{
    const cJSON *wh;
    int i = 0;
    char base[32];
    (void)s;

    cJSON_ArrayForEach(wh, get(o, "webhooks"))
    {
        const cJSON *name = get(wh, "name");
        (void)snprintf(base, sizeof(base), "webhooks[%d]", i++);
        check_webhook(w, base, wh);
        for (const cJSON *p = get(o, "webhooks")->child; p != wh && cJSON_IsString(name);
             p = p->next)
            if (!strcmp(get_str(p, "name"), name->valuestring)) {
                err_at(w, base, ".name", FIELD_DUPLICATE, name, NULL);
                break;
            }
    }
}

static const struct api_prop service_reference_props[] = {
    {"namespace", &api_string, API_REQ},
    {"name", &api_string, API_REQ},
    {"path", &api_string},
    {"port", &api_int32, 0, "443"},
    {NULL},
};

static const struct api_prop client_config_props[] = {
    {"url", &api_string},
    {"service", API_OBJ(service_reference_props)},
    {"caBundle",
     &(const struct api_schema){.type = API_STRING, .format = "byte", .check = api_check_base64},
     API_VAL},
    {NULL},
};

static const struct api_prop rule_props[] = {
    {"operations", API_ARR(API_ENUM("*", "CREATE", "UPDATE", "DELETE", "CONNECT"))},
    {"apiGroups", &api_string_list},
    {"apiVersions", &api_string_list},
    {"resources", &api_string_list},
    {"scope", API_ENUM("Cluster", "Namespaced", "*"), 0, "\"*\""},
    {NULL},
};

#define WEBHOOK_COMMON_PROPS                                                                       \
    {"name", &api_string, API_REQ | API_ALWAYS},                                                   \
        {"clientConfig", API_OBJ(client_config_props), API_REQ | API_ALWAYS},                      \
        {"rules", API_ARR(API_OBJ(rule_props))},                                                   \
        {"failurePolicy", API_ENUM("Ignore", "Fail"), 0, "\"Fail\""},                              \
        {"matchPolicy", API_ENUM("Exact", "Equivalent"), 0, "\"Equivalent\""},                     \
        {"namespaceSelector", &api_label_selector, 0, "{}"},                                       \
        {"objectSelector", &api_label_selector, 0, "{}"}, {"sideEffects", &api_string},            \
        {"timeoutSeconds", &api_int32, 0, "10"},                                                   \
    {                                                                                              \
        "admissionReviewVersions", &api_string_list, API_REQ | API_ALWAYS                          \
    }

static const struct api_prop mutating_webhook_props[] = {
    WEBHOOK_COMMON_PROPS,
    {"reinvocationPolicy", API_ENUM("Never", "IfNeeded"), 0, "\"Never\""},
    {NULL},
};

static const struct api_prop validating_webhook_props[] = {
    WEBHOOK_COMMON_PROPS,
    {NULL},
};

static const struct api_prop mutating_props[] = {
    {"webhooks", API_ARR(API_OBJ(mutating_webhook_props))},
    {NULL},
};

static const struct api_prop validating_props[] = {
    {"webhooks", API_ARR(API_OBJ(validating_webhook_props))},
    {NULL},
};

const struct api_kind api_kind_mutating_webhook_configuration = {
    .group = "admissionregistration.k8s.io",
    .version = "v1",
    .kind = "MutatingWebhookConfiguration",
    .plural = "mutatingwebhookconfigurations",
    .extra = mutating_props,
    .check = check_configuration,
};

const struct api_kind api_kind_validating_webhook_configuration = {
    .group = "admissionregistration.k8s.io",
    .version = "v1",
    .kind = "ValidatingWebhookConfiguration",
    .plural = "validatingwebhookconfigurations",
    .extra = validating_props,
    .check = check_configuration,
};
