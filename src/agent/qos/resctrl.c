/* Resctrl schemata and groups (resctrl.h). */
#include "agent/qos/resctrl.h"

#include <stdlib.h>
#include <string.h>

#include "agent/qos/qos-int.h"
#include "base/base.h"
#include "base/strbuf.h"

int qos_resctrl_parse_cbm(const char *s, uint64_t *ret)
{
    uint64_t v = 0;

    if (!s || !*s)
        return -EINVAL;
    for (; *s; s++) {
        int d;

        if (*s >= '0' && *s <= '9')
            d = *s - '0';
        else if (*s >= 'a' && *s <= 'f')
            d = *s - 'a' + 10;
        else if (*s >= 'A' && *s <= 'F')
            d = *s - 'A' + 10;
        else
            return -EINVAL;
        if (v >> 60)
            return -ERANGE;
        v = v << 4 | (uint64_t)d;
    }
    *ret = v;
    return 0;
}

int qos_resctrl_ways(uint64_t cbm, unsigned *ret)
{
    /* cbm + 1 must be a power of two (wrapping as Go's uint does for all ones). */
    if (__builtin_popcountll(cbm + 1) != 1)
        return -EINVAL;
    *ret = cbm ? 64 - (unsigned)__builtin_clzll(cbm) : 0;
    return 0;
}

/* ceil(a / 100) for a >= 0. */
static uint64_t ceil_div100(uint64_t a)
{
    return (a + 99) / 100;
}

int qos_resctrl_l3_mask(uint64_t cbm, int64_t start_percent, int64_t end_percent, uint64_t *ret)
{
    unsigned ways;
    uint64_t start, end;

    if (qos_resctrl_ways(cbm, &ways) < 0)
        return -EINVAL;
    if (start_percent < 0 || end_percent > 100 || end_percent <= start_percent)
        return -EINVAL;
    /* Exact in integers: ways x percent / 100 as a float64 never lands just past an integer. */
    start = ceil_div100((uint64_t)ways * (uint64_t)start_percent);
    end = ceil_div100((uint64_t)ways * (uint64_t)end_percent);
    *ret = (end >= 64 ? 0 : UINT64_C(1) << end) - (UINT64_C(1) << start);
    return 0;
}

int qos_resctrl_mb(int64_t percent, bool amd, int64_t *ret)
{
    if (percent <= 0 || percent > 100)
        return -EINVAL;
    if (!amd)
        *ret = (percent + 9) / 10 * 10;
    else if (percent == 100)
        *ret = QOS_RESCTRL_AMD_MB_MAX;
    else
        *ret = (int64_t)((double)QOS_RESCTRL_AMD_MB_UNIT * (double)percent / 100);
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;

    return x < y ? -1 : (x > y);
}

int qos_resctrl_schemata(const struct qos_resctrl_qos *cfg, uint64_t cbm, const int *cache_ids,
                         size_t ncache_ids, bool mb, bool amd, struct strbuf *out)
{
    uint64_t mask;
    int64_t mbv = 0;
    int *ids;
    int r;

    r = qos_resctrl_l3_mask(cbm, cfg->cat_range_start_percent, cfg->cat_range_end_percent, &mask);
    if (r == 0 && mb)
        r = qos_resctrl_mb(cfg->mba_percent, amd, &mbv);
    if (r < 0 || ncache_ids == 0)
        return r;
    ids = xcalloc(ncache_ids, sizeof(*ids));
    memcpy(ids, cache_ids, ncache_ids * sizeof(*ids));
    qsort(ids, ncache_ids, sizeof(*ids), cmp_int);
    strbuf_addstr(out, "L3:");
    for (size_t i = 0; i < ncache_ids; i++)
        strbuf_addf(out, "%d=%llx;", ids[i], (unsigned long long)mask);
    strbuf_addch(out, '\n');
    if (mb) {
        strbuf_addstr(out, "MB:");
        for (size_t i = 0; i < ncache_ids; i++)
            strbuf_addf(out, "%d=%lld;", ids[i], (long long)mbv);
        strbuf_addch(out, '\n');
    }
    free(ids);
    return 0;
}

const char *qos_resctrl_group(enum api_qos q)
{
    switch (q) {
    case API_QOS_LSE:
    case API_QOS_LSR:
        return "LSR";
    case API_QOS_LS:
        return "LS";
    case API_QOS_BE:
        return "BE";
    default:
        return NULL;
    }
}

enum qos_class qos_resctrl_group_class(enum api_qos q)
{
    switch (q) {
    case API_QOS_LSE:
    case API_QOS_LSR:
        return QOS_CLASS_LSR;
    case API_QOS_BE:
        return QOS_CLASS_BE;
    default:
        return QOS_CLASS_LS;
    }
}

const char *qos_resctrl_pod_group(const struct qos_resource_qos *cfg, const struct qos_pod *p)
{
    const char *group = qos_resctrl_group(p->qos);

    if (!p->active || p->has_resctrl_annotation || !group)
        return NULL;
    return cfg->classes[qos_resctrl_group_class(p->qos)].resctrl.enable ? group : NULL;
}
