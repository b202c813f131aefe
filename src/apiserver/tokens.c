/* Static token file parsing and lookup (see tokens.h). */
#include "apiserver/tokens.h"

#include <stdlib.h>
#include <string.h>

#include "base/base.h"

#define MAX_TOKENS 100000
#define MAX_FIELDS 64

struct entry {
    char *token;
    struct api_token_user user;
    char **fields; /* owned strings: user, uid, groups */
    size_t nfields;
    size_t lineno;
};

struct api_tokens {
    struct entry *v;
    size_t n;
};

/* Splits one CSV line into fields (double quotes group commas; "" inside quotes is a quote). */
static size_t split_csv(const char *line, size_t len, char **out, size_t max)
{
    struct strbuf f = STRBUF_INIT;
    size_t n = 0, i = 0;
    bool quoted = false;

    for (;;) {
        char ch = '\0';

        if (i < len)
            ch = line[i];
        if (i == len || (!quoted && ch == ',')) {
            if (n < max)
                out[n] = strbuf_detach(&f, NULL);
            else
                strbuf_release(&f);
            n++;
            if (i == len)
                break;
        } else if (ch == '"') {
            if (quoted && i + 1 < len && line[i + 1] == '"') {
                strbuf_addch(&f, '"');
                i++;
            } else {
                quoted = !quoted;
            }
        } else if (ch != '\r') {
            strbuf_addch(&f, ch);
        }
        i++;
    }
    strbuf_release(&f);
    return n;
}

static void entry_release(struct entry *e)
{
    free(e->token);
    for (size_t i = 0; i < e->nfields; i++)
        free(e->fields[i]);
    free(e->fields);
    free((void *)e->user.groups);
}

void api_tokens_free(struct api_tokens *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        entry_release(&t->v[i]);
    free(t->v);
    free(t);
}

static int by_token_then_line(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    int c = strcmp(x->token, y->token);

    if (c)
        return c;
    return x->lineno < y->lineno ? -1 : x->lineno > y->lineno;
}

/* Sorting once keeps a file of many tokens O(n log n) at start-up; lookups do not depend on
 * the order. Reports the earliest line that repeats a token. */
static int check_duplicates(struct api_tokens *t, struct strbuf *why)
{
    size_t dup = 0;

    if (t->n < 2)
        return 0;
    qsort(t->v, t->n, sizeof(*t->v), by_token_then_line);
    for (size_t i = 1; i < t->n; i++)
        if (!strcmp(t->v[i - 1].token, t->v[i].token) &&
            (!dup || t->v[i].lineno < t->v[dup].lineno))
            dup = i;
    if (!dup)
        return 0;
    strbuf_addf(why, "line %zu: duplicate token (first on line %zu)", t->v[dup].lineno,
                t->v[dup - 1].lineno);
    return -EINVAL;
}

int api_tokens_parse(const char *text, size_t len, struct api_tokens **ret, struct strbuf *why)
{
    struct api_tokens *t = xcalloc(1, sizeof(*t));
    size_t lineno = 0, pos = 0;
    int r = 0;

    while (pos < len && r == 0) {
        const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - line) : len - pos;
        char *f[MAX_FIELDS];
        size_t nf;
        struct entry e = {0};

        pos += ll + (nl ? 1 : 0);
        lineno++;
        if (ll == 0 || line[0] == '#' || (ll == 1 && line[0] == '\r'))
            continue;
        nf = split_csv(line, ll, f, MAX_FIELDS);
        if (nf > MAX_FIELDS)
            nf = MAX_FIELDS;
        if (nf < 3 || !*f[0] || !*f[1]) {
            strbuf_addf(why, "line %zu: want token,user,uid[,\"groups\"]", lineno);
            r = -EINVAL;
        } else if (t->n == MAX_TOKENS) {
            strbuf_addf(why, "line %zu: more than %d tokens", lineno, MAX_TOKENS);
            r = -E2BIG;
        }
        if (r < 0) {
            for (size_t i = 0; i < nf; i++)
                free(f[i]);
            break;
        }
        e.token = f[0];
        e.lineno = lineno;
        e.fields = xcalloc(nf, sizeof(char *));
        for (size_t i = 1; i < nf; i++)
            e.fields[e.nfields++] = f[i];
        e.user.user = e.fields[0];
        e.user.uid = e.fields[1];
        {
            /* The fourth field lists the groups, comma-separated inside its quotes. */
            const char **groups = xcalloc(MAX_FIELDS + 1, sizeof(char *));
            size_t ng = 0;
            if (nf > 3 && *f[3]) {
                char *g[MAX_FIELDS];
                size_t n = split_csv(f[3], strlen(f[3]), g, MAX_FIELDS);
                for (size_t i = 0; i < n && i < MAX_FIELDS; i++) {
                    e.fields = xrealloc(e.fields, (e.nfields + 1) * sizeof(char *));
                    e.fields[e.nfields++] = g[i];
                    if (*g[i])
                        groups[ng++] = g[i];
                }
            }
            e.user.groups = groups;
        }
        t->v = xrealloc(t->v, (t->n + 1) * sizeof(struct entry));
        t->v[t->n++] = e;
    }
    if (r == 0)
        r = check_duplicates(t, why);
    if (r < 0) {
        api_tokens_free(t);
        return r;
    }
    *ret = t;
    return 0;
}

/* Compares without an early exit on the first differing byte. */
static bool same_secret(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned char d = (unsigned char)(la != lb);

    for (size_t i = 0; i < la; i++)
        d |= (unsigned char)(a[i] ^ b[i < lb ? i : 0]);
    return d == 0;
}

const struct api_token_user *api_tokens_lookup(const struct api_tokens *t, const char *token)
{
    if (!t || !token || !*token)
        return NULL;
    for (size_t i = 0; i < t->n; i++)
        if (same_secret(token, t->v[i].token))
            return &t->v[i].user;
    return NULL;
}
