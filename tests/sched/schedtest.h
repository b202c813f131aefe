/*
 * Helpers shared by the scheduler's unit tests: pods, nodes and NodeInfos from literal JSON,
 * failing the test when the JSON does not parse or decode. Include after <cmocka.h>.
 */
#ifndef KOORD_TESTS_SCHEDTEST_H
#define KOORD_TESTS_SCHEDTEST_H

#ifndef cmocka_unit_test
#error "include <cmocka.h> before schedtest.h"
#endif

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sched/framework/framework.h"

/* A pod from JSON (apiVersion/kind may be left out); unref with sched_pod_unref(). */
static inline struct sched_pod *P(const char *json)
{
    cJSON *o = cJSON_Parse(json);
    struct sched_pod *p = NULL;

    if (!o)
        fail_msg("bad test JSON: %s", json);
    if (sched_pod_decode(o, &p) < 0)
        fail_msg("pod does not decode: %s", json);
    cJSON_Delete(o);
    return p;
}

/* A node from JSON; unref with sched_node_unref(). */
static inline struct sched_node *N(const char *json)
{
    cJSON *o = cJSON_Parse(json);
    struct sched_node *n = NULL;

    if (!o)
        fail_msg("bad test JSON: %s", json);
    if (sched_node_decode(o, &n) < 0)
        fail_msg("node does not decode: %s", json);
    cJSON_Delete(o);
    return n;
}

/* A NodeInfo of the node json with the pods given as JSON strings (NULL-terminated). Free with
 * sched_node_info_free(). */
static inline struct sched_node_info *NI(const char *node_json, ...)
{
    struct sched_node *n = N(node_json);
    struct sched_node_info *ni = sched_node_info_new(n->name);
    const char *pj;
    va_list ap;

    sched_node_info_set_node(ni, n);
    sched_node_unref(n);
    va_start(ap, node_json);
    while ((pj = va_arg(ap, const char *))) {
        struct sched_pod *p = P(pj);
        sched_node_info_add_pod(ni, p);
        sched_pod_unref(p);
    }
    va_end(ap);
    return ni;
}

/* The status's reasons joined with ", " (static buffer; one at a time). */
static inline const char *MSG(const struct sched_status *st)
{
    static char buf[4096];
    const char *p = st->buf;
    size_t len = 0;

    buf[0] = 0;
    for (unsigned i = 0; i < st->n && len < sizeof(buf) - 1; i++) {
        int w = snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? ", " : "", p);
        if (w < 0)
            break;
        len += (size_t)w;
        p += strlen(p) + 1;
    }
    return buf;
}

#endif
