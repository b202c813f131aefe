/*
 * The API server's /metrics, in the Prometheus text format (version 0.0.4) and with
 * kube-apiserver's metric names where one exists, so dashboards and alerts written for
 * kube-apiserver read koord's too:
 *
 *   apiserver_request_total{verb,group,version,resource,subresource,scope,component,code}
 *   apiserver_request_duration_seconds{verb,group,version,resource,subresource,scope,component}
 *       (histogram; WATCH excluded, as kube-apiserver excludes long-running requests)
 *   apiserver_longrunning_requests{verb="WATCH",component="apiserver"}   (open watches)
 *   koord_store_revision                                                 (last resourceVersion)
 *
 * verb is upper-case as kube-apiserver reports it (GET, LIST, WATCH, CREATE, UPDATE, PATCH,
 * DELETE, DELETECOLLECTION, APPLY is not served); scope is "resource", "namespace" or "cluster".
 * Series are kept in a small table under one lock: their number is bounded by the served
 * resources times verbs times status codes.
 */
#ifndef KOORD_APISERVER_METRICS_H
#define KOORD_APISERVER_METRICS_H

#include <stdint.h>

#include "base/strbuf.h"

struct api_metrics;
struct api_reqinfo;

struct api_metrics *api_metrics_new(void);
void api_metrics_free(struct api_metrics *m);

/* One finished request: ri (NULL for non-resource paths, which are not counted), the HTTP
 * status and how long the handler took. */
void api_metrics_request(struct api_metrics *m, const struct api_reqinfo *ri, int code,
                         double seconds);

/* A watch opened (+1) or closed (-1). */
void api_metrics_watch(struct api_metrics *m, int delta);

/* Appends every series; revision is the store's current revision. */
void api_metrics_render(struct api_metrics *m, uint64_t revision, struct strbuf *out);

#endif
