/*
 * The kinds that say who may do what: rbac.authorization.k8s.io/v1 Role, ClusterRole,
 * RoleBinding and ClusterRoleBinding (kubernetes/api rbac/v1/types.go), and core/v1
 * ServiceAccount, the identity in-cluster clients hold. The rules beyond the schema follow
 * kubernetes pkg/apis/rbac/validation/validation.go (ValidatePolicyRule, ValidateRoleBinding,
 * ValidateRoleBindingSubject) with its messages; the evaluation of these objects is the API
 * server's (src/apiserver/rbac.h).
 */
#include <string.h>

#include "api/api.h"
#include "api/labels.h"
#include "api/schema.h"
#include "base/base.h"
#include "base/strbuf.h"

#define RBAC_GROUP "rbac.authorization.k8s.io"

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

/* ValidatePolicyRule for rules[i] of a Role (namespaced) or ClusterRole. */
static void check_rules(const cJSON *rules, bool namespaced, struct api_walk *w)
{
    const cJSON *r;
    long i = 0;

    cJSON_ArrayForEach(r, rules)
    {
        size_t len = api_walk_push(w, "rules", -1);
        (void)api_walk_push(w, NULL, i++);
        if (cJSON_GetArraySize(get(r, "verbs")) == 0)
            api_walk_error(w, "verbs", FIELD_REQUIRED, NULL,
                           "verbs must contain at least one value");
        if (cJSON_GetArraySize(get(r, "nonResourceURLs")) > 0) {
            if (namespaced)
                api_walk_error(w, "nonResourceURLs", FIELD_INVALID, get(r, "nonResourceURLs"),
                               "namespaced rules cannot apply to non-resource URLs");
            if (cJSON_GetArraySize(get(r, "apiGroups")) > 0 ||
                cJSON_GetArraySize(get(r, "resources")) > 0 ||
                cJSON_GetArraySize(get(r, "resourceNames")) > 0)
                api_walk_error(w, "nonResourceURLs", FIELD_INVALID, get(r, "nonResourceURLs"),
                               "rules cannot apply to both regular resources and non-resource "
                               "URLs");
        } else {
            if (cJSON_GetArraySize(get(r, "apiGroups")) == 0)
                api_walk_error(w, "apiGroups", FIELD_REQUIRED, NULL,
                               "resource rules must supply at least one api group");
            if (cJSON_GetArraySize(get(r, "resources")) == 0)
                api_walk_error(w, "resources", FIELD_REQUIRED, NULL,
                               "resource rules must supply at least one resource");
        }
        api_walk_pop(w, len);
    }
}

/* ValidateRBACName: a path segment name. */
static void check_name(const cJSON *o, struct api_walk *w)
{
    const cJSON *meta = get(o, "metadata");
    const char *n = get_str(meta, "name");

    if (strchr(n, '/') || strchr(n, '%') || !strcmp(n, ".") || !strcmp(n, ".."))
        api_walk_error(w, "metadata.name", FIELD_INVALID, get(meta, "name"),
                       "may not contain '/' or '%%' and may not be '.' or '..'");
}

static void check_role(const struct api_schema *s, const cJSON *o, struct api_walk *w)
{
    (void)s;
    check_name(o, w);
    check_rules(get(o, "rules"), true, w);
}

static void check_cluster_role(const struct api_schema *s, const cJSON *o, struct api_walk *w)
{
    const cJSON *agg = get(o, "aggregationRule");
    (void)s;

    check_name(o, w);
    check_rules(get(o, "rules"), false, w);
    if (agg && cJSON_GetArraySize(get(agg, "clusterRoleSelectors")) == 0)
        api_walk_error(w, "aggregationRule.clusterRoleSelectors", FIELD_REQUIRED, NULL,
                       "at least one clusterRoleSelector required if aggregationRule is non-nil");
}

/* ValidateRoleBinding / ValidateClusterRoleBinding: roleRef and subjects. */
static void check_binding(const cJSON *o, bool namespaced, struct api_walk *w)
{
    const cJSON *ref = get(o, "roleRef"), *sub;
    const char *kind = get_str(ref, "kind"), *name = get_str(ref, "name");
    long i = 0;

    check_name(o, w);
    if (strcmp(get_str(ref, "apiGroup"), RBAC_GROUP))
        api_walk_error(w, "roleRef.apiGroup", FIELD_NOT_SUPPORTED, get(ref, "apiGroup"),
                       "supported values: \"" RBAC_GROUP "\"");
    if (namespaced ? strcmp(kind, "Role") && strcmp(kind, "ClusterRole")
                   : strcmp(kind, "ClusterRole") != 0)
        api_walk_error(w, "roleRef.kind", FIELD_NOT_SUPPORTED, get(ref, "kind"),
                       namespaced ? "supported values: \"Role\", \"ClusterRole\""
                                  : "supported values: \"ClusterRole\"");
    if (!*name)
        api_walk_error(w, "roleRef.name", FIELD_REQUIRED, NULL, NULL);
    else if (strchr(name, '/') || strchr(name, '%') || !strcmp(name, ".") || !strcmp(name, ".."))
        api_walk_error(w, "roleRef.name", FIELD_INVALID, get(ref, "name"),
                       "may not contain '/' or '%%' and may not be '.' or '..'");
    cJSON_ArrayForEach(sub, get(o, "subjects"))
    {
        size_t len = api_walk_push(w, "subjects", -1);
        const char *sk = get_str(sub, "kind"), *sn = get_str(sub, "name"),
                   *sg = get_str(sub, "apiGroup");
        struct strbuf why = STRBUF_INIT;

        (void)api_walk_push(w, NULL, i++);
        if (!*sn)
            api_walk_error(w, "name", FIELD_REQUIRED, NULL, NULL);
        if (!strcmp(sk, "ServiceAccount")) {
            if (*sn && labels_check_dns1123_subdomain(sn, &why) < 0)
                api_walk_error(w, "name", FIELD_INVALID, get(sub, "name"), "%s", why.buf);
            if (*sg)
                api_walk_error(w, "apiGroup", FIELD_NOT_SUPPORTED, get(sub, "apiGroup"),
                               "supported values: \"\"");
            if (!namespaced && !*get_str(sub, "namespace"))
                api_walk_error(w, "namespace", FIELD_REQUIRED, NULL, NULL);
        } else if (!strcmp(sk, "User") || !strcmp(sk, "Group")) {
            if (strcmp(sg, RBAC_GROUP))
                api_walk_error(w, "apiGroup", FIELD_NOT_SUPPORTED, get(sub, "apiGroup"),
                               "supported values: \"" RBAC_GROUP "\"");
        } else {
            api_walk_error(w, "kind", FIELD_NOT_SUPPORTED, get(sub, "kind"),
                           "supported values: \"ServiceAccount\", \"User\", \"Group\"");
        }
        strbuf_release(&why);
        api_walk_pop(w, len);
    }
}

static void check_role_binding(const struct api_schema *s, const cJSON *o, struct api_walk *w)
{
    (void)s;
    check_binding(o, true, w);
}

static void check_cluster_role_binding(const struct api_schema *s, const cJSON *o,
                                       struct api_walk *w)
{
    (void)s;
    check_binding(o, false, w);
}

static const struct api_prop policy_rule_props[] = {
    {"verbs", &api_string_list, API_REQ | API_ALWAYS},
    {"apiGroups", &api_string_list},
    {"resources", &api_string_list},
    {"resourceNames", &api_string_list},
    {"nonResourceURLs", &api_string_list},
    {NULL},
};

static const struct api_prop aggregation_rule_props[] = {
    {"clusterRoleSelectors", API_ARR(&api_label_selector)},
    {NULL},
};

static const struct api_prop role_props[] = {
    {"rules", API_ARR(API_OBJ(policy_rule_props)), API_ALWAYS},
    {NULL},
};

static const struct api_prop cluster_role_props[] = {
    {"rules", API_ARR(API_OBJ(policy_rule_props)), API_ALWAYS},
    {"aggregationRule", API_OBJ(aggregation_rule_props)},
    {NULL},
};

static const struct api_prop subject_props[] = {
    {"kind", &api_string, API_REQ | API_ALWAYS},
    {"apiGroup", &api_string, API_VAL},
    {"name", &api_string, API_REQ | API_ALWAYS},
    {"namespace", &api_string, API_VAL},
    {NULL},
};

static const struct api_prop role_ref_props[] = {
    {"apiGroup", &api_string, API_REQ | API_ALWAYS},
    {"kind", &api_string, API_REQ | API_ALWAYS},
    {"name", &api_string, API_REQ | API_ALWAYS},
    {NULL},
};

static const struct api_prop binding_props[] = {
    {"subjects", API_ARR(API_OBJ(subject_props))},
    {"roleRef", API_OBJ(role_ref_props), API_REQ | API_ALWAYS},
    {NULL},
};

const struct api_kind api_kind_role = {
    .group = RBAC_GROUP,
    .version = "v1",
    .kind = "Role",
    .plural = "roles",
    .namespaced = true,
    .name_rule = API_NAME_PATH_SEGMENT,
    .extra = role_props,
    .check = check_role,
};

const struct api_kind api_kind_cluster_role = {
    .group = RBAC_GROUP,
    .version = "v1",
    .kind = "ClusterRole",
    .plural = "clusterroles",
    .name_rule = API_NAME_PATH_SEGMENT,
    .extra = cluster_role_props,
    .check = check_cluster_role,
};

const struct api_kind api_kind_role_binding = {
    .group = RBAC_GROUP,
    .version = "v1",
    .kind = "RoleBinding",
    .plural = "rolebindings",
    .namespaced = true,
    .name_rule = API_NAME_PATH_SEGMENT,
    .extra = binding_props,
    .check = check_role_binding,
};

const struct api_kind api_kind_cluster_role_binding = {
    .group = RBAC_GROUP,
    .version = "v1",
    .kind = "ClusterRoleBinding",
    .plural = "clusterrolebindings",
    .name_rule = API_NAME_PATH_SEGMENT,
    .extra = binding_props,
    .check = check_cluster_role_binding,
};

static const struct api_prop local_object_reference_props[] = {
    {"name", &api_string, API_VAL},
    {NULL},
};

static const struct api_prop service_account_props[] = {
    {"secrets", API_ARR(&api_object_reference)},
    {"imagePullSecrets", API_ARR(API_OBJ(local_object_reference_props))},
    {"automountServiceAccountToken", &api_bool},
    {NULL},
};

const struct api_kind api_kind_service_account = {
    .group = "",
    .version = "v1",
    .kind = "ServiceAccount",
    .plural = "serviceaccounts",
    .short_names = (const char *const[]){"sa", NULL},
    .namespaced = true,
    .extra = service_account_props,
};
