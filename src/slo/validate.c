/*
 * The checks of upstream's slo-controller-config validating webhook (manager-behaviour.md 1.7,
 * steps 1-5), offered as a separate check: the controller itself never range-validates.
 * Errors are reported under "data[<key>]".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/labels.h"
#include "api/quantity.h"
#include "base/base.h"
#include "codec/codec.h"
#include "codec/patch.h"
#include "slo/slo-int.h"
#include "slo/slo.h"

#define MAX_VIRTUAL_NODES 4096

/* Step 2: every node entry needs a non-empty, parsable selector. */
static void check_entry_selector(const cJSON *e, const char *path, struct field_errors *errs)
{
    const cJSON *sel = cJSON_GetObjectItemCaseSensitive(e, "nodeSelector");
    const cJSON *ml = cJSON_GetObjectItemCaseSensitive(sel, "matchLabels");
    const cJSON *me = cJSON_GetObjectItemCaseSensitive(sel, "matchExpressions");
    struct label_selector *ls = NULL;
    struct strbuf why = STRBUF_INIT, p = STRBUF_INIT;

    strbuf_addf(&p, "%s.nodeSelector", path);
    if (!cJSON_IsObject(sel) || (cJSON_GetArraySize(ml) == 0 && cJSON_GetArraySize(me) == 0))
        field_error_add(errs, FIELD_REQUIRED, p.buf, NULL,
                        "a node entry needs matchLabels or matchExpressions");
    else if (label_selector_from_json(sel, &ls, &why) < 0)
        field_error_add(errs, FIELD_INVALID, p.buf, NULL, "%s", why.buf);
    label_selector_free(ls);
    strbuf_release(&why);
    strbuf_release(&p);
}

/* The parsed selector of each node entry (NULL where absent or unparsable); free with
 * selectors_free. */
static struct label_selector **entry_selectors(const cJSON *entries, int *ret_n)
{
    int n = cJSON_GetArraySize(entries), i = 0;
    struct label_selector **sels = xcalloc((size_t)(n ? n : 1), sizeof(struct label_selector *));
    const cJSON *e;

    cJSON_ArrayForEach(e, entries)
    {
        struct strbuf why = STRBUF_INIT;
        const cJSON *sel = cJSON_GetObjectItemCaseSensitive(e, "nodeSelector");
        if (cJSON_IsObject(sel))
            (void)label_selector_from_json(sel, &sels[i], &why);
        strbuf_release(&why);
        i++;
    }
    *ret_n = n;
    return sels;
}

static void selectors_free(struct label_selector **sels, int n)
{
    for (int i = 0; i < n; i++)
        label_selector_free(sels[i]);
    free(sels);
}

/* Step 5: synthesise label sets from each entry and reject sets matched by two entries. */
static void check_overlap(const char *key, const char *list, const cJSON *entries,
                          struct field_errors *errs)
{
    int n, i = 0;
    struct label_selector **sels = entry_selectors(entries, &n);
    const cJSON *e;

    cJSON_ArrayForEach(e, entries)
    {
        const cJSON *sel = cJSON_GetObjectItemCaseSensitive(e, "nodeSelector");
        const cJSON *me = cJSON_GetObjectItemCaseSensitive(sel, "matchExpressions"), *x;
        long total = 1;
        bool reported = false;

        cJSON_ArrayForEach(x, me)
        {
            int nv = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(x, "values"));
            if (nv > 0 && total < MAX_VIRTUAL_NODES)
                total *= nv;
        }
        if (total > MAX_VIRTUAL_NODES)
            total = MAX_VIRTUAL_NODES;
        for (long v = 0; v < total && !reported && sels[i]; v++) {
            cJSON *labels = cJSON_CreateObject();
            const cJSON *ml = cJSON_GetObjectItemCaseSensitive(sel, "matchLabels"), *l;
            int matches = 0;
            CHECK(labels);
            cJSON_ArrayForEach(l, ml)
            {
                if (cJSON_IsString(l))
                    (void)cJSON_AddStringToObject(labels, l->string, l->valuestring);
            }
            cJSON_ArrayForEach(x, me)
            {
                const cJSON *vals = cJSON_GetObjectItemCaseSensitive(x, "values");
                const cJSON *k = cJSON_GetObjectItemCaseSensitive(x, "key");
                int nv = cJSON_GetArraySize(vals);
                const cJSON *val = nv ? cJSON_GetArrayItem(vals, (int)(v % nv)) : NULL;
                if (k && val && cJSON_IsString(k) && cJSON_IsString(val))
                    (void)cJSON_AddStringToObject(labels, k->valuestring, val->valuestring);
            }
            for (int j = 0; j < n; j++)
                matches += sels[j] && label_selector_matches(sels[j], labels);
            cJSON_Delete(labels);
            if (matches >= 2) {
                struct strbuf p = STRBUF_INIT;
                strbuf_addf(&p, "data[%s].%s[%d].nodeSelector", key, list, i);
                field_error_add(errs, FIELD_INVALID, p.buf, NULL,
                                "NodeStrategiesOverlap: the node selector overlaps with another "
                                "node entry");
                strbuf_release(&p);
                reported = true;
            }
        }
        i++;
    }
    selectors_free(sels, n);
}

/* Network QoS per class: all requests share one form; their sum (strings count as their
 * quantity value, as upstream subtracts them) stays within 100 and within the applicable
 * system-config totalNetworkBandwidth. */
static void check_network_sums(const char *path, const cJSON *strategy, double bandwidth,
                               struct field_errors *errs)
{
    static const char *const classes[] = {"lsrClass", "lsClass", "beClass"};
    static const char *const dirs[] = {"ingressRequest", "egressRequest"};

    for (size_t d = 0; d < ARRAY_SIZE(dirs); d++) {
        double sum = 0;
        int ints = 0, strs = 0;
        for (size_t c = 0; c < ARRAY_SIZE(classes); c++) {
            const cJSON *nq = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(strategy, classes[c]), "networkQOS");
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(nq, dirs[d]);
            if (cJSON_IsNumber(v)) {
                ints++;
                sum += v->valuedouble;
            } else if (cJSON_IsString(v)) {
                struct quantity q;
                strs++;
                if (quantity_parse(v->valuestring, &q) == 0)
                    sum += quantity_as_double(&q);
            }
        }
        if (ints && strs)
            field_error_add(errs, FIELD_INVALID, path, NULL,
                            "networkQOS %s values of lsrClass, lsClass and beClass must all be "
                            "integers or all be strings",
                            dirs[d]);
        else if (sum > 100)
            field_error_add(errs, FIELD_INVALID, path, NULL,
                            "the sum of networkQOS %s over lsrClass, lsClass and beClass must be "
                            "at most 100",
                            dirs[d]);
        else if (sum > bandwidth)
            field_error_add(errs, FIELD_INVALID, path, NULL,
                            "the sum of networkQOS %s over lsrClass, lsClass and beClass exceeds "
                            "the system-config totalNetworkBandwidth (%g)",
                            dirs[d], bandwidth);
    }
}

static double bandwidth_of(const cJSON *strategy)
{
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(strategy, "totalNetworkBandwidth");
    struct quantity q;

    if (cJSON_IsNumber(b))
        return b->valuedouble;
    if (cJSON_IsString(b) && quantity_parse(b->valuestring, &q) == 0)
        return quantity_as_double(&q);
    return 0;
}

/* The totalNetworkBandwidth that bounds a resource-qos entry (1.7): the system cluster value
 * for the cluster strategy; for a node entry, the system node entry with a deep-equal
 * nodeSelector, else the system cluster value when system-config has no node entries, else 0. */
static double applicable_bandwidth(const cJSON *system, const cJSON *entry)
{
    const cJSON *cluster = cJSON_GetObjectItemCaseSensitive(system, "clusterStrategy");
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(system, "nodeStrategies"), *n;

    if (!entry)
        return bandwidth_of(cluster);
    if (cJSON_GetArraySize(nodes) == 0)
        return bandwidth_of(cluster);
    cJSON_ArrayForEach(n, nodes)
    {
        if (json_value_equal(cJSON_GetObjectItemCaseSensitive(n, "nodeSelector"),
                             cJSON_GetObjectItemCaseSensitive(entry, "nodeSelector")))
            return bandwidth_of(n);
    }
    return 0;
}

static void validate_key(const char *key, const cJSON *doc, const cJSON *system, bool need_names,
                         struct field_errors *errs)
{
    const struct api_schema *s = NULL;
    const cJSON *entries, *e;
    struct strbuf p = STRBUF_INIT;
    bool colocation = !strcmp(key, SLO_KEY_COLOCATION);
    size_t before = field_errors_count(errs); /* errs may already hold the caller's errors */
    int i = 0;

    for (int k = 0; k < SLO_NSTRATEGY; k++)
        if (!strcmp(slo_strategy_keys[k].key, key))
            s = slo_strategy_keys[k].strategy;
    if (colocation)
        s = &slo_colocation_strategy;
    entries = cJSON_GetObjectItemCaseSensitive(doc, colocation ? "nodeConfigs" : "nodeStrategies");
    cJSON_ArrayForEach(e, entries)
    {
        strbuf_reset(&p);
        strbuf_addf(&p, "data[%s].%s[%d]", key, colocation ? "nodeConfigs" : "nodeStrategies", i++);
        check_entry_selector(e, p.buf, errs);
    }
    if (field_errors_count(errs) > before)
        goto out;
    strbuf_reset(&p);
    strbuf_addf(&p, "data[%s]%s", key, colocation ? "" : ".clusterStrategy");
    {
        const cJSON *cluster =
            colocation ? doc : cJSON_GetObjectItemCaseSensitive(doc, "clusterStrategy");
        struct field_errors tmp = FIELD_ERRORS_INIT;
        api_validate(s, cluster, p.buf, API_V_WEBHOOK, &tmp);
        for (size_t k = 0; k < tmp.n; k++)
            if (tmp.v[k].type != FIELD_WARNING && tmp.v[k].type != FIELD_UNKNOWN)
                field_error_add(errs, tmp.v[k].type, tmp.v[k].field, tmp.v[k].value, "%s",
                                tmp.v[k].detail);
        field_errors_release(&tmp);
        if (!strcmp(key, SLO_KEY_QOS) && cluster)
            check_network_sums(p.buf, cluster, applicable_bandwidth(system, NULL), errs);
    }
    i = 0;
    cJSON_ArrayForEach(e, entries)
    {
        struct field_errors tmp = FIELD_ERRORS_INIT;
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        strbuf_reset(&p);
        strbuf_addf(&p, "data[%s].%s[%d]", key, colocation ? "nodeConfigs" : "nodeStrategies", i);
        api_validate(s, e, p.buf, API_V_WEBHOOK, &tmp);
        for (size_t k = 0; k < tmp.n; k++)
            if (tmp.v[k].type != FIELD_WARNING && tmp.v[k].type != FIELD_UNKNOWN)
                field_error_add(errs, tmp.v[k].type, tmp.v[k].field, tmp.v[k].value, "%s",
                                tmp.v[k].detail);
        field_errors_release(&tmp);
        if (!strcmp(key, SLO_KEY_QOS))
            check_network_sums(p.buf, e, applicable_bandwidth(system, e), errs);
        if (need_names) {
            const cJSON *o;
            int j = 0;
            if (!cJSON_IsString(name) || !*name->valuestring)
                field_error_add(errs, FIELD_REQUIRED, p.buf, NULL, "name must be set");
            else
                cJSON_ArrayForEach(o, entries)
                {
                    const cJSON *on = cJSON_GetObjectItemCaseSensitive(o, "name");
                    if (j++ < i && cJSON_IsString(on) &&
                        !strcmp(on->valuestring, name->valuestring))
                        field_error_add(errs, FIELD_DUPLICATE, p.buf, NULL, "name \"%s\"",
                                        name->valuestring);
                }
        }
        i++;
    }
    check_overlap(key, colocation ? "nodeConfigs" : "nodeStrategies", entries, errs);
out:
    strbuf_release(&p);
}

/* Step 6: no real node may match two node entries of one key. */
static void check_nodes(const char *key, const cJSON *doc, const cJSON *const *nodes, size_t nnodes,
                        struct field_errors *errs)
{
    const cJSON *entries = cJSON_GetObjectItemCaseSensitive(
        doc, strcmp(key, SLO_KEY_COLOCATION) ? "nodeStrategies" : "nodeConfigs");
    struct label_selector **sels;
    int n, i;

    if (cJSON_GetArraySize(entries) < 2)
        return;
    sels = entry_selectors(entries, &n);
    for (size_t k = 0; k < nnodes; k++) {
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive(nodes[k], "metadata");
        const cJSON *labels = cJSON_GetObjectItemCaseSensitive(meta, "labels");
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "name"));
        int first = -1, second = -1;
        for (i = 0; i < n && second < 0; i++) {
            if (!sels[i] || !label_selector_matches(sels[i], labels))
                continue;
            if (first < 0)
                first = i;
            else
                second = i;
        }
        if (second >= 0) {
            struct strbuf p = STRBUF_INIT;
            strbuf_addf(&p, "data[%s]", key);
            field_error_add(errs, FIELD_INVALID, p.buf, NULL,
                            "ExistNodeConflict: node \"%s\" matches node entries %d and %d",
                            name ? name : "", first, second);
            strbuf_release(&p);
            break;
        }
    }
    selectors_free(sels, n);
}

size_t slo_config_validate_changed(const cJSON *data, const cJSON *old_data,
                                   const cJSON *const *nodes, size_t nnodes, bool need_names,
                                   struct field_errors *errs)
{
    static const char *const keys[] = {SLO_KEY_COLOCATION, SLO_KEY_THRESHOLD, SLO_KEY_QOS,
                                       SLO_KEY_SYSTEM, SLO_KEY_CPU_BURST};
    cJSON *docs[ARRAY_SIZE(keys)] = {0};
    bool checked[ARRAY_SIZE(keys)] = {0};
    const cJSON *system = NULL;
    size_t before = field_errors_count(errs);

    for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(data, keys[i]);
        struct codec_error cerr = {0};
        char path[64];

        const cJSON *ov = cJSON_GetObjectItemCaseSensitive(old_data, keys[i]);

        if (!cJSON_IsString(v) || !*v->valuestring)
            continue;
        checked[i] = !cJSON_IsString(ov) || strcmp(ov->valuestring, v->valuestring) != 0;
        (void)snprintf(path, sizeof(path), "data[%s]", keys[i]);
        if (json_parse(v->valuestring, strlen(v->valuestring), NULL, &docs[i], &cerr) < 0) {
            if (!checked[i]) /* unchanged: not checked again, only read for the bandwidth */
                continue;
            field_error_add(errs, FIELD_INVALID, path, NULL, "ParseConfigFail: %s", cerr.msg);
            goto out;
        }
        if (!cJSON_IsObject(docs[i])) {
            if (!checked[i]) {
                cJSON_Delete(docs[i]);
                docs[i] = NULL;
                continue;
            }
            field_error_add(errs, FIELD_INVALID, path, NULL, "ParseConfigFail: not an object");
            goto out;
        }
        if (!strcmp(keys[i], SLO_KEY_SYSTEM))
            system = docs[i];
    }
    for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
        if (!docs[i] || !checked[i])
            continue;
        validate_key(keys[i], docs[i], system, need_names, errs);
        if (field_errors_count(errs) > before)
            goto out; /* the first failing key rejects, as upstream */
    }
    for (size_t i = 0; i < ARRAY_SIZE(keys) && nodes; i++) {
        if (docs[i] && checked[i])
            check_nodes(keys[i], docs[i], nodes, nnodes, errs);
        if (field_errors_count(errs) > before)
            break;
    }
out:
    for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
        cJSON_Delete(docs[i]);
    return field_errors_count(errs) - before;
}

size_t slo_config_validate(const cJSON *data, const cJSON *const *nodes, size_t nnodes,
                           bool need_names, struct field_errors *errs)
{
    return slo_config_validate_changed(data, NULL, nodes, nnodes, need_names, errs);
}
