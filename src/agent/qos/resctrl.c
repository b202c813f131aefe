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

/* Appends "<name>:<id>=<value>;..." with ids ascending and the value printed by hex. */
static void add_line(const char *name, uint64_t value, bool hex, const int *cache_ids, size_t n,
                     struct strbuf *out)
{
    int *ids;

    if (n == 0)
        return;
    ids = xcalloc(n, sizeof(*ids));
    memcpy(ids, cache_ids, n * sizeof(*ids));
    qsort(ids, n, sizeof(*ids), cmp_int);
    strbuf_addf(out, "%s:", name);
    for (size_t i = 0; i < n; i++) {
        if (hex)
            strbuf_addf(out, "%d=%llx;", ids[i], (unsigned long long)value);
        else
            strbuf_addf(out, "%d=%lld;", ids[i], (long long)value);
    }
    strbuf_addch(out, '\n');
    free(ids);
}

void qos_resctrl_l3_line(uint64_t mask, const int *cache_ids, size_t n, struct strbuf *out)
{
    add_line("L3", mask, true, cache_ids, n, out);
}

void qos_resctrl_mb_line(int64_t mb, const int *cache_ids, size_t n, struct strbuf *out)
{
    add_line("MB", (uint64_t)mb, false, cache_ids, n, out);
}

int qos_resctrl_schemata(const struct qos_resctrl_qos *cfg, uint64_t cbm, const int *cache_ids,
                         size_t ncache_ids, bool mb, bool amd, struct strbuf *out)
{
    uint64_t mask;
    int64_t mbv = 0;
    int r;

    r = qos_resctrl_l3_mask(cbm, cfg->cat_range_start_percent, cfg->cat_range_end_percent, &mask);
    if (r == 0 && mb)
        r = qos_resctrl_mb(cfg->mba_percent, amd, &mbv);
    if (r < 0)
        return r;
    qos_resctrl_l3_line(mask, cache_ids, ncache_ids, out);
    if (mb)
        qos_resctrl_mb_line(mbv, cache_ids, ncache_ids, out);
    return 0;
}

/* ---- schemata text as the kernel shows it ---- */

/* One line of a schemata: "<name>:<id>=<value>;<id>=<value>". */
struct sline {
    char name[16];
    size_t n;
    int ids[QOS_RESCTRL_CACHE_IDS_MAX];
    uint64_t vals[QOS_RESCTRL_CACHE_IDS_MAX];
};

static const char *skip_blank(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
        p++;
    return p;
}

/* Digits of base 10 or 16 at *pp (before end); -EINVAL without digits or past 64 bits. */
static int scan_num(const char **pp, const char *end, unsigned base, uint64_t *ret)
{
    const char *p = *pp;
    uint64_t v = 0;

    for (; p < end; p++) {
        unsigned d;

        if (*p >= '0' && *p <= '9')
            d = (unsigned)(*p - '0');
        else if (base == 16 && *p >= 'a' && *p <= 'f')
            d = (unsigned)(*p - 'a') + 10;
        else if (base == 16 && *p >= 'A' && *p <= 'F')
            d = (unsigned)(*p - 'A') + 10;
        else
            break;
        if (v > (UINT64_MAX - d) / base)
            return -EINVAL;
        v = v * base + d;
    }
    if (p == *pp)
        return -EINVAL;
    *pp = p;
    *ret = v;
    return 0;
}

/* The resource name of the line [p, end) into ret->name; *pp moves past the ':'. */
static int line_name(const char **pp, const char *end, struct sline *ret)
{
    const char *p = skip_blank(*pp, end), *name = p;
    size_t len;

    while (p < end && *p != ':' && *p != ' ' && *p != '\t')
        p++;
    len = (size_t)(p - name);
    p = skip_blank(p, end);
    if (!len || len >= sizeof(ret->name) || p == end || *p != ':')
        return -EINVAL;
    memcpy(ret->name, name, len);
    ret->name[len] = '\0';
    *pp = p + 1;
    return 0;
}

/* The entries after the ':' up to end; values hex except for MB. 0, -EINVAL, -E2BIG. */
static int line_entries(const char *p, const char *end, struct sline *ret)
{
    unsigned base = strcmp(ret->name, "MB") ? 16 : 10;

    ret->n = 0;
    for (;;) {
        uint64_t id, v;

        p = skip_blank(p, end);
        if (p == end)
            return 0;
        if (scan_num(&p, end, 10, &id) < 0 || id > INT32_MAX)
            return -EINVAL;
        p = skip_blank(p, end);
        if (p == end || *p != '=')
            return -EINVAL;
        p = skip_blank(p + 1, end);
        if (scan_num(&p, end, base, &v) < 0)
            return -EINVAL;
        if (ret->n == QOS_RESCTRL_CACHE_IDS_MAX)
            return -E2BIG;
        ret->ids[ret->n] = (int)id;
        ret->vals[ret->n] = v;
        ret->n++;
        p = skip_blank(p, end);
        if (p == end)
            return 0;
        if (*p != ';')
            return -EINVAL;
        p++;
    }
}

/* Calls fn for each non-blank line [p, end) of text, stopping at the first non-zero return,
 * which it returns. */
static int each_line(const char *text, int (*fn)(const void *ctx, const char *p, const char *end),
                     const void *ctx)
{
    for (const char *p = text; *p;) {
        const char *end = strchr(p, '\n');
        int r;

        if (!end)
            end = p + strlen(p);
        if (skip_blank(p, end) < end && (r = fn(ctx, p, end)) != 0)
            return r;
        p = *end ? end + 1 : end;
    }
    return 0;
}

struct find {
    const char *name;
    struct sline *line;
};

/* each_line() callback: 1 when the line is the resource wanted (parsed), the error of
 * line_entries() when it is and does not parse, 0 to go on. */
static int find_cb(const void *ctx, const char *p, const char *end)
{
    const struct find *f = ctx;

    int r;

    if (line_name(&p, end, f->line) < 0 || strcmp(f->line->name, f->name))
        return 0;
    r = line_entries(p, end, f->line);
    return r < 0 ? r : 1;
}

/* The line of resource name in text: 0 with *ret, -ENOENT, -EINVAL (malformed), -E2BIG. */
static int find_line(const char *text, const char *name, struct sline *ret)
{
    struct find f = {name, ret};
    int r = each_line(text, find_cb, &f);

    return r == 1 ? 0 : r < 0 ? r : -ENOENT;
}

int qos_resctrl_cache_ids(const char *schemata, int *ids, size_t max)
{
    struct sline l;
    int r = find_line(schemata, "L3", &l);

    if (r < 0)
        return r;
    if (l.n == 0)
        return -EINVAL;
    if (l.n > max)
        return -E2BIG;
    memcpy(ids, l.ids, l.n * sizeof(*ids));
    return (int)l.n;
}

/* each_line() callback over the wanted text: -1 as soon as an entry is not held. */
static int holds_cb(const void *ctx, const char *p, const char *end)
{
    const char *current = ctx;
    struct sline want, cur;

    if (line_name(&p, end, &want) < 0 || line_entries(p, end, &want) < 0 ||
        find_line(current, want.name, &cur) < 0)
        return -1;
    for (size_t i = 0; i < want.n; i++) {
        size_t j = 0;

        while (j < cur.n && cur.ids[j] != want.ids[i])
            j++;
        if (j == cur.n || cur.vals[j] != want.vals[i])
            return -1;
    }
    return 0;
}

bool qos_resctrl_schemata_holds(const char *current, const char *want)
{
    return each_line(want, holds_cb, current) == 0;
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
