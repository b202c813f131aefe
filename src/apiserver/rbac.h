/*
 * Role-based access control as kube-apiserver's RBAC authorizer evaluates it
 * (plugin/pkg/auth/authorizer/rbac/rbac.go, pkg/apis/rbac/v1/evaluation_helpers.go): a request
 * is allowed when a ClusterRoleBinding, or a RoleBinding in the request's namespace, names the
 * user (User), one of its groups (Group) or its service account (ServiceAccount) and the Role or
 * ClusterRole it refers to holds a rule matching the request. RBAC only allows; what no rule
 * allows it leaves to the next authorizer (authz.h), which ends in a refusal.
 *
 * The objects are read from the store into an immutable snapshot (struct rbac_snapshot), shared
 * by the requests that use it; a write of an RBAC object makes the next request build a new one
 * (authz.c), as kube's informer-fed authorizer sees writes shortly after they commit.
 *
 * Also here, because they evaluate the same rules:
 *   - rbac_rules_for(): the rules a user holds in a namespace (SelfSubjectRulesReview, and the
 *     escalation check: kube refuses to create a role or binding granting more than its author
 *     holds, unless the author may `escalate` the role or `bind` it;
 * registry/rbac/escalation_check.go);
 *   - rbac_rules_cover(): whether some rules hold all of others (validation/policy_comparator.go);
 *   - ClusterRole aggregation (pkg/controller/clusterroleaggregation): a ClusterRole with an
 *     aggregationRule has as rules the union of the rules of the ClusterRoles its label selectors
 *     match, kept current on every ClusterRole write;
 *   - the bootstrap roles kube-apiserver creates at start (plugin/pkg/auth/authorizer/rbac/
 *     bootstrappolicy/policy.go), reduced to the resources koord serves.
 */
#ifndef KOORD_APISERVER_RBAC_H
#define KOORD_APISERVER_RBAC_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "base/strbuf.h"

struct api_reqinfo;
struct api_user;
struct store;

#define RBAC_GROUP "rbac.authorization.k8s.io"

struct rbac_snapshot;

/* Reads every Role, ClusterRole, RoleBinding and ClusterRoleBinding of store. 0, -errno of the
 * store (objects that do not parse are skipped: they could not have been written). */
int rbac_snapshot_load(struct store *store, struct rbac_snapshot **ret);

/* An empty snapshot that rbac_snapshot_add() fills (tests). */
struct rbac_snapshot *rbac_snapshot_new(void);
/* Adds a Role, ClusterRole, RoleBinding or ClusterRoleBinding object (takes ownership); call
 * rbac_snapshot_seal() once all are in. Objects of other kinds are dropped. */
void rbac_snapshot_add(struct rbac_snapshot *s, cJSON *obj);
void rbac_snapshot_seal(struct rbac_snapshot *s);

struct rbac_snapshot *rbac_snapshot_ref(struct rbac_snapshot *s);
/* Drops a reference (NULL is fine); returns NULL. */
struct rbac_snapshot *rbac_snapshot_unref(struct rbac_snapshot *s);

/* Whether one PolicyRule allows the request (RuleAllows). */
bool rbac_rule_allows(const cJSON *rule, const struct api_reqinfo *ri);

/* Whether u belongs to group: every authenticated user is in system:authenticated (unless
 * u->groups_exact). */
bool rbac_user_in_group(const struct api_user *u, const char *group);

/*
 * RBAC's decision: true when a binding allows it, with reason as kube words it (`RBAC: allowed
 * by ClusterRoleBinding "b" of ClusterRole "r" to User "alice"`); false when none does (no
 * opinion).
 */
bool rbac_authorize(const struct rbac_snapshot *s, const struct api_user *u,
                    const struct api_reqinfo *ri, struct strbuf *reason);

/* Appends to rules (an array) a copy of every rule u holds in namespace ns ("" = only what
 * ClusterRoleBindings grant). */
void rbac_rules_for(const struct rbac_snapshot *s, const struct api_user *u, const char *ns,
                    cJSON *rules);

/* Whether owner (an array of PolicyRules) holds everything rules (another array) grants; when
 * not, missing receives the uncovered pieces, one `{APIGroups:["g"], Resources:["r"],
 * Verbs:["v"]}` a line as kube lists them. */
bool rbac_rules_cover(const cJSON *owner, const cJSON *rules, struct strbuf *missing);

/* The role a binding's roleRef names (kind Role in ns, or ClusterRole), or NULL when it does
 * not exist. Borrowed from s. */
const cJSON *rbac_role(const struct rbac_snapshot *s, const char *ns, const char *kind,
                       const char *name);

/*
 * ClusterRole aggregation: for every ClusterRole with an aggregationRule, its rules become the
 * union of the rules of the ClusterRoles any of its selectors match (in name order, without
 * duplicates, itself excluded), written when they differ; repeated until nothing changes, so
 * roles that aggregate aggregated roles (admin <- edit <- view) settle. Returns how many
 * objects were written, or -errno of the store.
 */
int rbac_aggregate(struct store *store);

/* Creates kube's bootstrap ClusterRoles and ClusterRoleBindings that are missing (never
 * touching existing ones, which an admin may have changed), then aggregates. 0 or -errno. */
int rbac_bootstrap(struct store *store, const char *now, void (*new_uid)(char uid[37]));

#endif
