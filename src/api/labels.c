/*
 * Label validation and label selectors, mirroring apimachinery: the validators of
 * pkg/util/validation/validation.go, the lexer, parser, Requirement rules, matching and String()
 * of pkg/labels/selector.go, and LabelSelectorAsSelector of pkg/apis/meta/v1/helpers.go.
 * Selectors arrive from peers (query strings, objects), so sizes are bounded and every
 * allocation is checked.
 */
#include "api/labels.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

/* ---- validation (pkg/util/validation/validation.go) ---- */

#define QNAME_FMT "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define QNAME_ERR                                                                                  \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "    \
    "alphanumeric character"
/* RegexError(): each example is followed by "', " and joined with " or ", hence the two
 * spaces. */
#define QNAME_EXAMPLES                                                                             \
    " (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '" QNAME_FMT "')"
#define QNAME_REGEX_ERR QNAME_ERR QNAME_EXAMPLES
#define QNAME_MAX       63
#define VALUE_FMT       "(" QNAME_FMT ")?"
#define VALUE_REGEX_ERR                                                                            \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "    \
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "             \
    "'my_value',  or '12345', regex used for validation is '" VALUE_FMT "')"
#define VALUE_MAX         63
#define DNS1123_LABEL_FMT "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
#define DNS1123_LABEL_REGEX_ERR                                                                    \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "   \
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "     \
    "used for validation is '" DNS1123_LABEL_FMT "')"
#define DNS1123_LABEL_MAX     63
#define DNS1123_SUBDOMAIN_FMT DNS1123_LABEL_FMT "(\\." DNS1123_LABEL_FMT ")*"
#define DNS1123_SUBDOMAIN_REGEX_ERR                                                                \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "   \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "  \
    "for validation is '" DNS1123_SUBDOMAIN_FMT "')"
#define DNS1123_SUBDOMAIN_MAX 253

/* Error strings of one validation call, joined with "; " as callers of the Go validators do. */
struct msgs {
    struct strbuf *why; /* may be NULL: only count */
    int n;
};

__attribute__((format(printf, 2, 3))) static void msg_addf(struct msgs *m, const char *fmt, ...)
{
    va_list ap;

    if (m->why) {
        if (m->n > 0)
            strbuf_addstr(m->why, "; ");
        va_start(ap, fmt);
        strbuf_vaddf(m->why, fmt, ap);
        va_end(ap);
    }
    m->n++;
}

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* ^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$ */
static bool match_qname(const char *s, size_t n)
{
    if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    return true;
}

/* ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ */
static bool match_dns_label(const char *s, size_t n)
{
    if (n == 0 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[n - 1]))
        return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (!is_lower_alnum(s[i]) && s[i] != '-')
            return false;
    return true;
}

/* Dot-separated DNS labels. */
static bool match_dns_subdomain(const char *s, size_t n)
{
    size_t start = 0;

    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            if (!match_dns_label(s + start, i - start))
                return false;
            start = i + 1;
        }
    }
    return true;
}

/* IsDNS1123Subdomain, each message prefixed by prefix ("prefix part " for label keys). */
static void check_subdomain(const char *s, size_t n, const char *prefix, struct msgs *m)
{
    if (n > DNS1123_SUBDOMAIN_MAX)
        msg_addf(m, "%smust be no more than %d characters", prefix, DNS1123_SUBDOMAIN_MAX);
    if (!match_dns_subdomain(s, n))
        msg_addf(m, "%s%s", prefix, DNS1123_SUBDOMAIN_REGEX_ERR);
}

/* IsQualifiedName. */
static void check_qname(const char *s, size_t n, struct msgs *m)
{
    const char *slash = memchr(s, '/', n), *name = s;
    size_t name_n = n;

    if (slash) {
        size_t prefix_n = (size_t)(slash - s);

        if (memchr(slash + 1, '/', n - prefix_n - 1)) {
            msg_addf(m, "a qualified name " QNAME_REGEX_ERR
                        " with an optional DNS subdomain prefix and '/' (e.g. "
                        "'example.com/MyName')");
            return;
        }
        if (prefix_n == 0)
            msg_addf(m, "prefix part must be non-empty");
        else
            check_subdomain(s, prefix_n, "prefix part ", m);
        name = slash + 1;
        name_n = n - prefix_n - 1;
    }
    if (name_n == 0)
        msg_addf(m, "name part must be non-empty");
    else if (name_n > QNAME_MAX)
        msg_addf(m, "name part must be no more than %d characters", QNAME_MAX);
    if (!match_qname(name, name_n))
        msg_addf(m, "name part " QNAME_REGEX_ERR);
}

/* IsValidLabelValue. */
static void check_value(const char *s, size_t n, struct msgs *m)
{
    if (n > VALUE_MAX)
        msg_addf(m, "must be no more than %d characters", VALUE_MAX);
    if (n > 0 && !match_qname(s, n))
        msg_addf(m, VALUE_REGEX_ERR);
}

int labels_check_qualified_name(const char *s, struct strbuf *why)
{
    struct msgs m = {why, 0};

    s = s ? s : "";
    check_qname(s, strlen(s), &m);
    return m.n ? -EINVAL : 0;
}

int labels_check_value(const char *s, struct strbuf *why)
{
    struct msgs m = {why, 0};

    s = s ? s : "";
    check_value(s, strlen(s), &m);
    return m.n ? -EINVAL : 0;
}

int labels_check_dns1123_subdomain(const char *s, struct strbuf *why)
{
    struct msgs m = {why, 0};

    s = s ? s : "";
    check_subdomain(s, strlen(s), "", &m);
    return m.n ? -EINVAL : 0;
}

int labels_check_dns1123_label(const char *s, struct strbuf *why)
{
    struct msgs m = {why, 0};
    size_t n;

    s = s ? s : "";
    n = strlen(s);
    if (n > DNS1123_LABEL_MAX)
        msg_addf(&m, "must be no more than %d characters", DNS1123_LABEL_MAX);
    if (!match_dns_label(s, n)) {
        /* A valid subdomain that is not a valid label can only be failing on dots. */
        if (match_dns_subdomain(s, n))
            msg_addf(&m, "must not contain dots");
        else
            msg_addf(&m, DNS1123_LABEL_REGEX_ERR);
    }
    return m.n ? -EINVAL : 0;
}

/* ---- selector representation ---- */

/* selection.Operator values a Requirement may hold. */
enum label_op {
    LABEL_OP_IN,
    LABEL_OP_NOT_IN,
    LABEL_OP_EQUALS,
    LABEL_OP_DOUBLE_EQUALS,
    LABEL_OP_NOT_EQUALS,
    LABEL_OP_GT,
    LABEL_OP_LT,
    LABEL_OP_EXISTS,
    LABEL_OP_DOES_NOT_EXIST,
};

struct label_req {
    char *key;     /* one block holding the key and, after it, every value */
    char **values; /* sorted bytewise; point into key's block; NULL when none */
    size_t nvalues;
    enum label_op op;
    int64_t num;  /* Gt/Lt operand */
    size_t order; /* insertion index, makes the sort by key stable */
};

struct label_selector {
    bool nothing; /* labels.Nothing(): matches no label set */
    size_t nreqs, alloc, nvalues;
    struct label_req *reqs;
};

/* A byte range of the input (token literal, JSON string). */
struct span {
    const char *p;
    size_t n;
};

static const char empty_str[] = "";

static int span_cmp(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    size_t n = x->n < y->n ? x->n : y->n;
    int c = n ? memcmp(x->p, y->p, n) : 0;

    if (c)
        return c;
    return x->n < y->n ? -1 : x->n > y->n;
}

/* Sorted, and with duplicates removed when dedupe (the parser collects a sets.String).
 * Returns the new count. */
static size_t spans_sort(struct span *v, size_t n, bool dedupe)
{
    size_t out = 0;

    if (n == 0)
        return 0;
    qsort(v, n, sizeof(*v), span_cmp);
    if (!dedupe)
        return n;
    for (size_t i = 0; i < n; i++)
        if (out == 0 || span_cmp(&v[out - 1], &v[i]) != 0)
            v[out++] = v[i];
    return out;
}

/* strconv.ParseInt(s, 10, 64): optional sign, decimal digits, no overflow. */
static bool parse_int64_span(const char *s, size_t n, int64_t *ret)
{
    size_t i = 0;
    bool neg = false;
    uint64_t v = 0, limit;

    if (n > 0 && (s[0] == '+' || s[0] == '-')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (i == n)
        return false;
    limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n; i++) {
        unsigned d;

        if (s[i] < '0' || s[i] > '9')
            return false;
        d = (unsigned)(s[i] - '0');
        if (v > (limit - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (neg)
        *ret = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    else
        *ret = (int64_t)v;
    return true;
}

/* Go's %q, close enough for error messages: escapes quotes, backslashes and control bytes. */
static void add_quoted(struct strbuf *sb, const char *s, size_t n)
{
    strbuf_addch(sb, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];

        switch (c) {
        case '"':
            strbuf_addstr(sb, "\\\"");
            break;
        case '\\':
            strbuf_addstr(sb, "\\\\");
            break;
        case '\a':
            strbuf_addstr(sb, "\\a");
            break;
        case '\b':
            strbuf_addstr(sb, "\\b");
            break;
        case '\f':
            strbuf_addstr(sb, "\\f");
            break;
        case '\n':
            strbuf_addstr(sb, "\\n");
            break;
        case '\r':
            strbuf_addstr(sb, "\\r");
            break;
        case '\t':
            strbuf_addstr(sb, "\\t");
            break;
        case '\v':
            strbuf_addstr(sb, "\\v");
            break;
        default:
            if (c < 0x20 || c == 0x7f)
                strbuf_addf(sb, "\\x%02x", c);
            else
                strbuf_addch(sb, (char)c);
        }
    }
    strbuf_addch(sb, '"');
}

/* Go's %#v of a []string: []string(nil), []string{}, []string{"a", "b"}. */
static void add_go_strings(struct strbuf *sb, const struct span *v, size_t n, bool nil)
{
    if (nil) {
        strbuf_addstr(sb, "[]string(nil)");
        return;
    }
    strbuf_addstr(sb, "[]string{");
    for (size_t i = 0; i < n; i++) {
        if (i)
            strbuf_addstr(sb, ", ");
        add_quoted(sb, v[i].p, v[i].n);
    }
    strbuf_addch(sb, '}');
}

/* One field.Error in an errors.Aggregate: "a", or "[a, b]" once there are several. */
struct agg {
    struct strbuf sb;
    int n;
};

/* Starts the next error "<path>: Invalid value: " and returns the buffer to append to. */
static struct strbuf *agg_invalid(struct agg *a, const char *path)
{
    if (a->n++ > 0)
        strbuf_addstr(&a->sb, ", ");
    strbuf_addf(&a->sb, "%s: Invalid value: ", path);
    return &a->sb;
}

/*
 * labels.NewRequirement's checks; vals as given (nil_vals: the Go slice would be nil). On
 * failure appends the aggregated message to why and returns -EINVAL.
 */
static int req_validate(struct span key, enum label_op op, const struct span *vals, size_t n,
                        bool nil_vals, struct strbuf *why)
{
    struct agg a = {STRBUF_INIT, 0};
    struct strbuf detail = STRBUF_INIT, path = STRBUF_INIT;
    struct msgs m = {&detail, 0};
    struct strbuf *sb;
    const char *detail_msg = NULL;
    int r = 0;

    check_qname(key.p, key.n, &m);
    if (m.n) {
        sb = agg_invalid(&a, "key");
        add_quoted(sb, key.p, key.n);
        strbuf_addf(sb, ": %s", detail.buf);
    }

    switch (op) {
    case LABEL_OP_IN:
    case LABEL_OP_NOT_IN:
        if (n == 0)
            detail_msg = "for 'in', 'notin' operators, values set can't be empty";
        break;
    case LABEL_OP_EQUALS:
    case LABEL_OP_DOUBLE_EQUALS:
    case LABEL_OP_NOT_EQUALS:
        if (n != 1)
            detail_msg = "exact-match compatibility requires one single value";
        break;
    case LABEL_OP_EXISTS:
    case LABEL_OP_DOES_NOT_EXIST:
        if (n != 0)
            detail_msg = "values set must be empty for exists and does not exist";
        break;
    case LABEL_OP_GT:
    case LABEL_OP_LT:
        if (n != 1)
            detail_msg = "for 'Gt', 'Lt' operators, exactly one value is required";
        break;
    }
    if (detail_msg) {
        sb = agg_invalid(&a, "values");
        add_go_strings(sb, vals, n, nil_vals);
        strbuf_addf(sb, ": %s", detail_msg);
    }
    if (op == LABEL_OP_GT || op == LABEL_OP_LT) {
        for (size_t i = 0; i < n; i++) {
            int64_t num;

            if (parse_int64_span(vals[i].p, vals[i].n, &num))
                continue;
            strbuf_reset(&path);
            strbuf_addf(&path, "values[%zu]", i);
            sb = agg_invalid(&a, path.buf);
            add_quoted(sb, vals[i].p, vals[i].n);
            strbuf_addstr(sb, ": for 'Gt', 'Lt' operators, the value must be an integer");
        }
    }
    for (size_t i = 0; i < n; i++) {
        strbuf_reset(&detail);
        m.n = 0;
        check_value(vals[i].p, vals[i].n, &m);
        if (!m.n)
            continue;
        strbuf_reset(&path);
        strbuf_addf(&path, "values[%zu][%.*s]", i, (int)key.n, key.p);
        sb = agg_invalid(&a, path.buf);
        add_quoted(sb, vals[i].p, vals[i].n);
        strbuf_addf(sb, ": %s", detail.buf);
    }

    if (a.n) {
        r = -EINVAL;
        if (why)
            strbuf_addf(why, a.n > 1 ? "[%s]" : "%s", a.sb.buf);
    }
    strbuf_release(&a.sb);
    strbuf_release(&detail);
    strbuf_release(&path);
    return r;
}

static struct label_selector *selector_new(void)
{
    return ccalloc(1, sizeof(struct label_selector));
}

void label_selector_free(struct label_selector *sel)
{
    if (!sel)
        return;
    for (size_t i = 0; i < sel->nreqs; i++) {
        free(sel->reqs[i].values);
        free(sel->reqs[i].key);
    }
    free(sel->reqs);
    free(sel);
}

/* Appends a validated requirement (values already sorted). -E2BIG past the limits, -ENOMEM. */
static int selector_add(struct label_selector *sel, struct span key, enum label_op op,
                        const struct span *vals, size_t n)
{
    struct label_req *r;
    size_t total = key.n + 1;
    char *block, **values = NULL, *q;

    if (sel->nreqs >= LABEL_SELECTOR_MAX_REQS || n > LABEL_SELECTOR_MAX_VALUES - sel->nvalues)
        return -E2BIG;
    if (sel->nreqs == sel->alloc) {
        size_t alloc = sel->alloc ? sel->alloc * 2 : 4;
        struct label_req *reqs;

        if (alloc > LABEL_SELECTOR_MAX_REQS)
            alloc = LABEL_SELECTOR_MAX_REQS;
        reqs = crealloc(sel->reqs, alloc * sizeof(*reqs));
        if (!reqs)
            return -ENOMEM;
        sel->reqs = reqs;
        sel->alloc = alloc;
    }
    /* Keys and values are validated, so at most 317 and 63 bytes: no overflow here. */
    for (size_t i = 0; i < n; i++)
        total += vals[i].n + 1;
    block = cmalloc(total);
    if (!block)
        return -ENOMEM;
    if (n) {
        values = ccalloc(n, sizeof(*values));
        if (!values) {
            free(block);
            return -ENOMEM;
        }
    }
    memcpy(block, key.p, key.n);
    block[key.n] = '\0';
    q = block + key.n + 1;
    for (size_t i = 0; i < n; i++) {
        memcpy(q, vals[i].p, vals[i].n);
        q[vals[i].n] = '\0';
        values[i] = q;
        q += vals[i].n + 1;
    }

    r = &sel->reqs[sel->nreqs];
    r->key = block;
    r->values = values;
    r->nvalues = n;
    r->op = op;
    r->num = 0;
    if (op == LABEL_OP_GT || op == LABEL_OP_LT)
        CHECK(parse_int64_span(vals[0].p, vals[0].n, &r->num));
    r->order = sel->nreqs;
    sel->nreqs++;
    sel->nvalues += n;
    return 0;
}

static int req_order_cmp(const void *a, const void *b)
{
    const struct label_req *x = a, *y = b;
    int c = strcmp(x->key, y->key);

    if (c)
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* sort.Sort(ByKey(...)); stable here, which Go's is for the short selectors seen in practice. */
static void selector_sort(struct label_selector *sel)
{
    if (sel->nreqs > 1)
        qsort(sel->reqs, sel->nreqs, sizeof(*sel->reqs), req_order_cmp);
}

#define TOO_BIG_MSG "label selector is too large"

/* ---- string syntax (labels.Parse) ---- */

enum tok {
    TOK_ERROR, /* never produced: every special symbol starts a token */
    TOK_EOS,
    TOK_CLOSE_PAR,
    TOK_COMMA,
    TOK_NOT,
    TOK_DOUBLE_EQUALS,
    TOK_EQUALS,
    TOK_GT,
    TOK_IDENT,
    TOK_IN,
    TOK_LT,
    TOK_NOT_EQUALS,
    TOK_NOT_IN,
    TOK_OPEN_PAR,
};

struct token {
    enum tok tok;
    const char *lit;
    size_t len;
};

/* Go's ParserContext: in Values, the keywords "in" and "notin" are identifiers. */
enum ctx {
    CTX_KEY_AND_OPERATOR,
    CTX_VALUES,
};

struct parser {
    const char *s;
    size_t len, pos;
    struct token cur;  /* the lookahead token */
    struct strbuf why; /* message of the failing requirement */
    struct span *vals; /* values of the requirement being parsed */
    size_t nvals, vals_alloc;
    struct label_selector *sel;
};

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_special(char c)
{
    return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

static enum tok special_tok(const char *p, size_t n)
{
    if (n == 1) {
        switch (p[0]) {
        case '=':
            return TOK_EQUALS;
        case '!':
            return TOK_NOT;
        case '(':
            return TOK_OPEN_PAR;
        case ')':
            return TOK_CLOSE_PAR;
        case ',':
            return TOK_COMMA;
        case '>':
            return TOK_GT;
        case '<':
            return TOK_LT;
        }
    } else if (n == 2 && p[1] == '=') {
        if (p[0] == '=')
            return TOK_DOUBLE_EQUALS;
        if (p[0] == '!')
            return TOK_NOT_EQUALS;
    }
    return TOK_ERROR;
}

/* Lexer.Lex: longest special-symbol token, else an identifier or keyword up to the next
 * whitespace or special symbol. */
static struct token lex(struct parser *p)
{
    struct token t;
    size_t start;

    while (p->pos < p->len && is_ws(p->s[p->pos]))
        p->pos++;
    start = p->pos;
    t.lit = p->s + start;
    if (start >= p->len) {
        t.tok = TOK_EOS;
        t.len = 0;
        return t;
    }
    if (is_special(p->s[start])) {
        enum tok best = TOK_ERROR;
        size_t best_len = 0;

        for (size_t n = 1; start + n <= p->len && is_special(p->s[start + n - 1]); n++) {
            enum tok k = special_tok(t.lit, n);

            if (k != TOK_ERROR) {
                best = k;
                best_len = n;
            } else if (best != TOK_ERROR) {
                break;
            }
        }
        CHECK(best != TOK_ERROR);
        p->pos = start + best_len;
        t.tok = best;
        t.len = best_len;
        return t;
    }
    while (p->pos < p->len && !is_special(p->s[p->pos]) && !is_ws(p->s[p->pos]))
        p->pos++;
    t.len = p->pos - start;
    if (t.len == 2 && memcmp(t.lit, "in", 2) == 0)
        t.tok = TOK_IN;
    else if (t.len == 5 && memcmp(t.lit, "notin", 5) == 0)
        t.tok = TOK_NOT_IN;
    else
        t.tok = TOK_IDENT;
    return t;
}

static struct token lookahead(const struct parser *p, enum ctx ctx)
{
    struct token t = p->cur;

    if (ctx == CTX_VALUES && (t.tok == TOK_IN || t.tok == TOK_NOT_IN))
        t.tok = TOK_IDENT;
    return t;
}

static struct token consume(struct parser *p, enum ctx ctx)
{
    struct token t = lookahead(p, ctx);

    p->cur = lex(p);
    return t;
}

/* "found '<lit>', expected: ..." into p->why. */
static int found(struct parser *p, struct token t, const char *expected)
{
    strbuf_addf(&p->why, "found '%.*s'%s", (int)t.len, t.lit, expected);
    return -EINVAL;
}

static int push_value(struct parser *p, const char *lit, size_t len)
{
    if (p->nvals >= LABEL_SELECTOR_MAX_VALUES)
        return -E2BIG;
    if (p->nvals == p->vals_alloc) {
        size_t alloc = p->vals_alloc ? p->vals_alloc * 2 : 8;
        struct span *v;

        v = crealloc(p->vals, alloc * sizeof(*v));
        if (!v)
            return -ENOMEM;
        p->vals = v;
        p->vals_alloc = alloc;
    }
    p->vals[p->nvals].p = lit;
    p->vals[p->nvals].n = len;
    p->nvals++;
    return 0;
}

/* parseKeyAndInferOperator: [!]KEY, then Exists/DoesNotExist when nothing binary follows. */
static int parse_key(struct parser *p, struct span *ret_key, enum label_op *ret_op, bool *ret_unary)
{
    struct token t = consume(p, CTX_VALUES), la;
    struct strbuf detail = STRBUF_INIT;
    struct msgs m = {&detail, 0};
    bool not = false;

    if (t.tok == TOK_NOT) {
        not = true;
        t = consume(p, CTX_VALUES);
    }
    if (t.tok != TOK_IDENT)
        return found(p, t, ", expected: identifier");
    check_qname(t.lit, t.len, &m);
    if (m.n) {
        /* validateLabelKey with the parser's nil field path. */
        strbuf_addstr(&p->why, "<nil>: Invalid value: ");
        add_quoted(&p->why, t.lit, t.len);
        strbuf_addf(&p->why, ": %s", detail.buf);
    }
    strbuf_release(&detail);
    if (m.n)
        return -EINVAL;
    la = lookahead(p, CTX_VALUES);
    ret_key->p = t.lit;
    ret_key->n = t.len;
    *ret_unary = not || la.tok == TOK_EOS || la.tok == TOK_COMMA;
    *ret_op = not ? LABEL_OP_DOES_NOT_EXIST : LABEL_OP_EXISTS;
    return 0;
}

static int parse_operator(struct parser *p, enum label_op *ret_op)
{
    struct token t = consume(p, CTX_KEY_AND_OPERATOR);

    switch (t.tok) {
    case TOK_IN:
        *ret_op = LABEL_OP_IN;
        return 0;
    case TOK_EQUALS:
        *ret_op = LABEL_OP_EQUALS;
        return 0;
    case TOK_DOUBLE_EQUALS:
        *ret_op = LABEL_OP_DOUBLE_EQUALS;
        return 0;
    case TOK_GT:
        *ret_op = LABEL_OP_GT;
        return 0;
    case TOK_LT:
        *ret_op = LABEL_OP_LT;
        return 0;
    case TOK_NOT_IN:
        *ret_op = LABEL_OP_NOT_IN;
        return 0;
    case TOK_NOT_EQUALS:
        *ret_op = LABEL_OP_NOT_EQUALS;
        return 0;
    default:
        return found(p, t, ", expected: in, notin, =, ==, !=, gt, lt");
    }
}

/* parseIdentifiersList: comma-separated, possibly empty, identifiers up to ')'. */
static int parse_identifiers(struct parser *p)
{
    int r;

    for (;;) {
        struct token t = consume(p, CTX_VALUES), la;

        switch (t.tok) {
        case TOK_IDENT:
            r = push_value(p, t.lit, t.len);
            if (r < 0)
                return r;
            la = lookahead(p, CTX_VALUES);
            if (la.tok == TOK_COMMA)
                continue;
            if (la.tok == TOK_CLOSE_PAR)
                return 0;
            return found(p, la, ", expected: ',' or ')'");
        case TOK_COMMA:
            /* "(," and ",)" and ",," each stand for an empty value. */
            if (p->nvals == 0) {
                r = push_value(p, empty_str, 0);
                if (r < 0)
                    return r;
            }
            la = lookahead(p, CTX_VALUES);
            if (la.tok == TOK_CLOSE_PAR)
                return push_value(p, empty_str, 0);
            if (la.tok == TOK_COMMA) {
                (void)consume(p, CTX_VALUES);
                r = push_value(p, empty_str, 0);
                if (r < 0)
                    return r;
            }
            break;
        default:
            return found(p, t, ", expected: ',', or identifier");
        }
    }
}

/* parseValues: "(" values ")". */
static int parse_values(struct parser *p)
{
    struct token t = consume(p, CTX_VALUES), la;
    int r;

    if (t.tok != TOK_OPEN_PAR)
        return found(p, t, " expected: '('");
    la = lookahead(p, CTX_VALUES);
    switch (la.tok) {
    case TOK_IDENT:
    case TOK_COMMA:
        r = parse_identifiers(p);
        if (r < 0)
            return r;
        t = consume(p, CTX_VALUES);
        CHECK(t.tok == TOK_CLOSE_PAR); /* parse_identifiers stops only before ')' */
        return 0;
    case TOK_CLOSE_PAR:
        (void)consume(p, CTX_VALUES);
        return push_value(p, empty_str, 0);
    default:
        return found(p, la, ", expected: ',', ')' or identifier");
    }
}

/* parseExactValue: one identifier, or the empty value before ',' or the end. */
static int parse_exact_value(struct parser *p)
{
    struct token t = lookahead(p, CTX_VALUES);

    if (t.tok == TOK_EOS || t.tok == TOK_COMMA)
        return push_value(p, empty_str, 0);
    t = consume(p, CTX_VALUES);
    if (t.tok == TOK_IDENT)
        return push_value(p, t.lit, t.len);
    return found(p, t, ", expected: identifier");
}

static int parse_requirement(struct parser *p)
{
    struct span key;
    enum label_op op;
    bool unary;
    int r;

    p->nvals = 0;
    r = parse_key(p, &key, &op, &unary);
    if (r < 0)
        return r;
    if (!unary) {
        r = parse_operator(p, &op);
        if (r < 0)
            return r;
        if (op == LABEL_OP_IN || op == LABEL_OP_NOT_IN)
            r = parse_values(p);
        else
            r = parse_exact_value(p);
        if (r < 0)
            return r;
        p->nvals = spans_sort(p->vals, p->nvals, true);
    }
    r = req_validate(key, op, p->vals, p->nvals, false, &p->why);
    if (r < 0)
        return r;
    return selector_add(p->sel, key, op, p->vals, p->nvals);
}

int label_selector_parse(const char *s, struct label_selector **ret, struct strbuf *err)
{
    struct parser p = {.why = STRBUF_INIT};
    struct token t;
    int r;

    CHECK(s);
    p.s = s;
    p.len = strlen(s);
    if (p.len > LABEL_SELECTOR_MAX_STR) {
        r = -E2BIG;
        goto out;
    }
    p.sel = selector_new();
    if (!p.sel) {
        r = -ENOMEM;
        goto out;
    }
    p.cur = lex(&p);

    for (;;) {
        t = lookahead(&p, CTX_VALUES);
        if (t.tok == TOK_EOS)
            break;
        if (t.tok != TOK_IDENT && t.tok != TOK_NOT) {
            r = found(&p, t, ", expected: !, identifier, or 'end of string'");
            goto out_why;
        }
        r = parse_requirement(&p);
        if (r == -EINVAL) {
            if (err)
                strbuf_addf(err, "unable to parse requirement: %s", p.why.buf);
            goto out;
        }
        if (r < 0)
            goto out;
        t = consume(&p, CTX_VALUES);
        if (t.tok == TOK_EOS)
            break;
        if (t.tok != TOK_COMMA) {
            r = found(&p, t, ", expected: ',' or 'end of string'");
            goto out_why;
        }
        t = lookahead(&p, CTX_VALUES);
        if (t.tok != TOK_IDENT && t.tok != TOK_NOT) {
            r = found(&p, t, ", expected: identifier after ','");
            goto out_why;
        }
    }
    selector_sort(p.sel);
    *ret = p.sel;
    p.sel = NULL;
    r = 0;
    goto out;

out_why:
    if (err)
        strbuf_addstr(err, p.why.buf);
out:
    if (r == -E2BIG && err)
        strbuf_addstr(err, TOO_BIG_MSG);
    label_selector_free(p.sel);
    free(p.vals);
    strbuf_release(&p.why);
    return r;
}

/* ---- structured form (LabelSelectorAsSelector) ---- */

/* A JSON member that must be a string; absent or null reads as "" like Go's zero value. */
static int json_string(const cJSON *o, const char *name, struct span *ret)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

    if (!v || cJSON_IsNull(v)) {
        ret->p = empty_str;
        ret->n = 0;
        return 0;
    }
    if (!cJSON_IsString(v) || !v->valuestring)
        return -EINVAL;
    ret->p = v->valuestring;
    ret->n = strlen(v->valuestring);
    return 0;
}

static int add_match_label(struct label_selector *sel, const cJSON *c, struct strbuf *err)
{
    struct span key = {empty_str, 0}, val = {empty_str, 0};
    int r;

    if (c->string) {
        key.p = c->string;
        key.n = strlen(c->string);
    }
    if (cJSON_IsString(c) && c->valuestring) {
        val.p = c->valuestring;
        val.n = strlen(val.p);
    } else if (!cJSON_IsNull(c)) {
        if (err) {
            strbuf_addstr(err, "matchLabels: value of ");
            add_quoted(err, key.p, key.n);
            strbuf_addstr(err, " must be a string");
        }
        return -EINVAL;
    }
    r = req_validate(key, LABEL_OP_EQUALS, &val, 1, false, err);
    if (r < 0)
        return r;
    return selector_add(sel, key, LABEL_OP_EQUALS, &val, 1);
}

static int add_match_expression(struct label_selector *sel, const cJSON *e, int idx,
                                struct strbuf *err)
{
    static const struct {
        const char *name;
        enum label_op op;
    } ops[] = {
        {"In", LABEL_OP_IN},
        {"NotIn", LABEL_OP_NOT_IN},
        {"Exists", LABEL_OP_EXISTS},
        {"DoesNotExist", LABEL_OP_DOES_NOT_EXIST},
    };
    const cJSON *vals_json, *v;
    struct span key, opname, *vals = NULL;
    enum label_op op = LABEL_OP_IN;
    bool op_found = false;
    size_t n = 0;
    int r = -EINVAL, count;

    if (!cJSON_IsObject(e)) {
        if (err)
            strbuf_addf(err, "matchExpressions[%d]: must be an object", idx);
        goto out;
    }
    if (json_string(e, "key", &key) < 0 || json_string(e, "operator", &opname) < 0) {
        if (err)
            strbuf_addf(err, "matchExpressions[%d]: key and operator must be strings", idx);
        goto out;
    }
    for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
        if (strlen(ops[i].name) == opname.n && memcmp(ops[i].name, opname.p, opname.n) == 0) {
            op = ops[i].op;
            op_found = true;
        }
    }
    if (!op_found) {
        if (err) {
            add_quoted(err, opname.p, opname.n);
            strbuf_addstr(err, " is not a valid label selector operator");
        }
        goto out;
    }

    vals_json = cJSON_GetObjectItemCaseSensitive(e, "values");
    if (vals_json && !cJSON_IsNull(vals_json)) {
        if (!cJSON_IsArray(vals_json)) {
            if (err)
                strbuf_addf(err, "matchExpressions[%d]: values must be an array", idx);
            goto out;
        }
        count = cJSON_GetArraySize(vals_json);
        if (count > LABEL_SELECTOR_MAX_VALUES) {
            r = -E2BIG;
            goto out;
        }
        if (count > 0) {
            vals = ccalloc((size_t)count, sizeof(*vals));
            if (!vals) {
                r = -ENOMEM;
                goto out;
            }
        }
        cJSON_ArrayForEach(v, vals_json)
        {
            if (!cJSON_IsString(v) || !v->valuestring) {
                if (err)
                    strbuf_addf(err, "matchExpressions[%d]: values must be strings", idx);
                goto out;
            }
            CHECK(n < (size_t)count);
            vals[n].p = v->valuestring;
            vals[n].n = strlen(v->valuestring);
            n++;
        }
    }
    /* Go copies values with append([]string(nil), ...): an empty list is a nil slice. */
    r = req_validate(key, op, vals, n, n == 0, err);
    if (r < 0)
        goto out;
    n = spans_sort(vals, n, false);
    r = selector_add(sel, key, op, vals, n);
out:
    free(vals);
    return r;
}

int label_selector_from_json(const cJSON *js, struct label_selector **ret, struct strbuf *err)
{
    struct label_selector *sel = selector_new();
    const cJSON *ml, *me, *c;
    int r = -EINVAL, idx = 0;

    if (!sel)
        return -ENOMEM;
    if (!js || cJSON_IsNull(js)) {
        sel->nothing = true;
        goto done;
    }
    if (!cJSON_IsObject(js)) {
        if (err)
            strbuf_addstr(err, "label selector must be an object");
        goto out;
    }
    ml = cJSON_GetObjectItemCaseSensitive(js, "matchLabels");
    me = cJSON_GetObjectItemCaseSensitive(js, "matchExpressions");
    if (ml && !cJSON_IsNull(ml) && !cJSON_IsObject(ml)) {
        if (err)
            strbuf_addstr(err, "matchLabels must be an object");
        goto out;
    }
    if (me && !cJSON_IsNull(me) && !cJSON_IsArray(me)) {
        if (err)
            strbuf_addstr(err, "matchExpressions must be an array");
        goto out;
    }
    if (cJSON_IsObject(ml)) {
        cJSON_ArrayForEach(c, ml)
        {
            r = add_match_label(sel, c, err);
            if (r < 0)
                goto out;
        }
    }
    if (cJSON_IsArray(me)) {
        cJSON_ArrayForEach(c, me)
        {
            r = add_match_expression(sel, c, idx++, err);
            if (r < 0)
                goto out;
        }
    }
    selector_sort(sel);
done:
    *ret = sel;
    return 0;
out:
    if (r == -E2BIG && err)
        strbuf_addstr(err, TOO_BIG_MSG);
    label_selector_free(sel);
    return r;
}

/* ---- matching and printing ---- */

static int value_cmp(const void *key, const void *elem)
{
    return strcmp(key, *(char *const *)elem);
}

static bool req_has_value(const struct label_req *r, const char *v)
{
    return r->nvalues && bsearch(v, r->values, r->nvalues, sizeof(*r->values), value_cmp);
}

/* Requirement.Matches. */
static bool req_matches(const struct label_req *r, const cJSON *labels)
{
    const cJSON *item = labels ? cJSON_GetObjectItemCaseSensitive(labels, r->key) : NULL;
    const char *v = item && cJSON_IsString(item) ? item->valuestring : NULL;
    int64_t num;

    switch (r->op) {
    case LABEL_OP_IN:
    case LABEL_OP_EQUALS:
    case LABEL_OP_DOUBLE_EQUALS:
        return v && req_has_value(r, v);
    case LABEL_OP_NOT_IN:
    case LABEL_OP_NOT_EQUALS:
        return !v || !req_has_value(r, v);
    case LABEL_OP_EXISTS:
        return v != NULL;
    case LABEL_OP_DOES_NOT_EXIST:
        return v == NULL;
    case LABEL_OP_GT:
    case LABEL_OP_LT:
        if (!v || !parse_int64_span(v, strlen(v), &num))
            return false;
        return r->op == LABEL_OP_GT ? num > r->num : num < r->num;
    }
    return false;
}

bool label_selector_matches(const struct label_selector *sel, const cJSON *labels)
{
    CHECK(sel);
    if (sel->nothing)
        return false;
    for (size_t i = 0; i < sel->nreqs; i++)
        if (!req_matches(&sel->reqs[i], labels))
            return false;
    return true;
}

bool label_selector_is_empty(const struct label_selector *sel)
{
    CHECK(sel);
    return !sel->nothing && sel->nreqs == 0;
}

void label_selector_format(const struct label_selector *sel, struct strbuf *out)
{
    static const char *const op_str[] = {
        [LABEL_OP_IN] = " in (",      [LABEL_OP_NOT_IN] = " notin (",
        [LABEL_OP_EQUALS] = "=",      [LABEL_OP_DOUBLE_EQUALS] = "==",
        [LABEL_OP_NOT_EQUALS] = "!=", [LABEL_OP_GT] = ">",
        [LABEL_OP_LT] = "<",
    };

    CHECK(sel);
    for (size_t i = 0; i < sel->nreqs; i++) {
        const struct label_req *r = &sel->reqs[i];

        if (i)
            strbuf_addch(out, ',');
        if (r->op == LABEL_OP_DOES_NOT_EXIST)
            strbuf_addch(out, '!');
        strbuf_addstr(out, r->key);
        if (r->op == LABEL_OP_EXISTS || r->op == LABEL_OP_DOES_NOT_EXIST)
            continue;
        strbuf_addstr(out, op_str[r->op]);
        for (size_t j = 0; j < r->nvalues; j++) {
            if (j)
                strbuf_addch(out, ',');
            strbuf_addstr(out, r->values[j]);
        }
        if (r->op == LABEL_OP_IN || r->op == LABEL_OP_NOT_IN)
            strbuf_addch(out, ')');
    }
}
