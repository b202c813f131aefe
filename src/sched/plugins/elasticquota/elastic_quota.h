/*
 * What the ElasticQuota plugin (elastic_quota.c) exposes besides its plugin table: the handlers
 * its ElasticQuota informer calls, so that unit tests drive it with objects directly (without
 * an apiserver), and the periodic work its thread does. self is what the plugin's init
 * returned.
 */
#ifndef KOORD_SCHED_ELASTICQUOTA_H
#define KOORD_SCHED_ELASTICQUOTA_H

#include <cjson/cJSON.h>
#include <stdbool.h>

struct strbuf;

/* An ElasticQuota added or updated (old NULL on add), or deleted. */
void eq_plugin_quota_event(void *self, const cJSON *old, const cJSON *obj, bool deleted);

/*
 * The periodic pass (every second on the plugin's thread): pods admitted by PreEnqueue more
 * than admit_ttl_s ago without having been placed or refused give their room back (they wait in
 * the unschedulable pool for other reasons), and the waiting pods that fit then are activated.
 * now is CLOCK_MONOTONIC seconds.
 */
void eq_plugin_tick(void *self, double now);

/*
 * A quota's figures as the plugin sees them, for tests and debugging: "used=<map> runtime=<map>
 * request=<map> waiting=<n> admitted=<map>" over the quota's max names; -ENOENT when unknown.
 */
int eq_plugin_describe(void *self, const char *quota, struct strbuf *out);

#endif
