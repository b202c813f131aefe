/*
 * kubeconfig and in-cluster configuration (see config.h). Field names and the merge rule
 * follow client-go tools/clientcmd (api/v1/types.go, loader.go); messages name the file and the
 * entry at fault so a broken kubeconfig is fixed from the message alone.
 */
#include "kube/config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"

#define MAX_KUBECONFIG  ((size_t)16 << 20)
#define MAX_KUBECONFIGS 16
#define MAX_SMALL_FILE  ((size_t)1 << 20)
#define DEFAULT_QPS     1000.0
#define DEFAULT_BURST   2000
#define DEFAULT_TIMEOUT 30000L

struct kube_config *kube_config_new(const char *server)
{
    struct kube_config *cfg = xcalloc(1, sizeof(*cfg));
    size_t len = strlen(server);

    while (len > 0 && server[len - 1] == '/')
        len--;
    cfg->server = xstrndup(server, len);
    cfg->namespace = xstrdup("default");
    cfg->qps = DEFAULT_QPS;
    cfg->burst = DEFAULT_BURST;
    cfg->timeout_ms = DEFAULT_TIMEOUT;
    cfg->user_agent = xstrdup("koord/" KOORD_VERSION);
    return cfg;
}

static void remove_tmpdir(struct kube_config *cfg)
{
    static const char *const names[] = {"ca.crt", "client.crt", "client.key"};
    char p[128];

    if (!cfg->tmpdir[0])
        return;
    for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
        (void)snprintf(p, sizeof(p), "%s/%s", cfg->tmpdir, names[i]);
        (void)unlink(p);
    }
    (void)rmdir(cfg->tmpdir);
    cfg->tmpdir[0] = '\0';
}

void kube_config_free(struct kube_config *cfg)
{
    if (!cfg)
        return;
    remove_tmpdir(cfg);
    free(cfg->server);
    free(cfg->namespace);
    free(cfg->ca_file);
    free(cfg->cert_file);
    free(cfg->key_file);
    free(cfg->token);
    free(cfg->token_file);
    free(cfg->username);
    free(cfg->password);
    free(cfg->user_agent);
    free(cfg);
}

static int b64_value(unsigned char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    if (ch == '+')
        return 62;
    if (ch == '/')
        return 63;
    return -1;
}

/* Standard base64 with padding, as Go's []byte fields encode; whitespace is not allowed
 * (YAML folding already removed line breaks). -EINVAL on anything else. */
static int b64_decode(const char *s, struct strbuf *out)
{
    size_t len = strlen(s), i;
    unsigned acc = 0;
    int bits = 0, pad = 0;

    if (len % 4)
        return -EINVAL;
    for (i = 0; i < len; i++) {
        int v;

        if (s[i] == '=') {
            if (i + 2 < len)
                return -EINVAL;
            pad++;
            continue;
        }
        if (pad || (v = b64_value((unsigned char)s[i])) < 0)
            return -EINVAL;
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            strbuf_addch(out, (char)((acc >> bits) & 0xff));
        }
    }
    return 0;
}

static int write_private(struct kube_config *cfg, const char *name, const char *data, size_t len,
                         char **ret_path)
{
    struct strbuf p = STRBUF_INIT;
    int fd, r = 0;

    if (!cfg->tmpdir[0]) {
        (void)snprintf(cfg->tmpdir, sizeof(cfg->tmpdir), "/tmp/koord-kube-XXXXXX");
        if (!mkdtemp(cfg->tmpdir)) {
            r = -errno;
            cfg->tmpdir[0] = '\0';
            return r;
        }
    }
    strbuf_addf(&p, "%s/%s", cfg->tmpdir, name);
    fd = open(p.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        r = -errno;
        goto out;
    }
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0) {
            r = -errno;
            break;
        }
        data += n;
        len -= (size_t)n;
    }
    if (close(fd) < 0 && r == 0)
        r = -errno;
    if (r == 0)
        *ret_path = strbuf_detach(&p, NULL);
out:
    strbuf_release(&p);
    return r;
}

/* One parsed kubeconfig file. */
struct kc_file {
    const char *name; /* for messages */
    char *dir;        /* for relative paths */
    cJSON *doc;
};

static const char *str_of(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) && *v->valuestring ? v->valuestring : NULL;
}

/* The named entry of list `what` ("clusters", "users", "contexts"), first file first; its
 * inner object (`cluster`, `user`, `context`) goes to *ret_inner. */
static const struct kc_file *find_named(const struct kc_file *files, size_t n, const char *what,
                                        const char *inner, const char *name,
                                        const cJSON **ret_inner)
{
    for (size_t i = 0; i < n; i++) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(files[i].doc, what), *e;

        cJSON_ArrayForEach(e, list)
        {
            const char *nm = str_of(e, "name");
            if (nm && !strcmp(nm, name)) {
                *ret_inner = cJSON_GetObjectItemCaseSensitive(e, inner);
                return &files[i];
            }
        }
    }
    return NULL;
}

static char *resolve_path(const struct kc_file *f, const char *p)
{
    struct strbuf sb = STRBUF_INIT;

    if (p[0] == '/' || !f->dir)
        return xstrdup(p);
    strbuf_addf(&sb, "%s/%s", f->dir, p);
    return strbuf_detach(&sb, NULL);
}

/*
 * Reads credential `field` of entry (the inline "<field>-data" or the file "<field>") into a
 * file path in *ret_path: inline data is written privately as tmpname. 0 with *ret_path NULL
 * when neither is set.
 */
static int file_or_data(struct kube_config *cfg, const struct kc_file *f, const cJSON *entry,
                        const char *field, const char *tmpname, const char *where, char **ret_path,
                        struct strbuf *err)
{
    struct strbuf key = STRBUF_INIT, raw = STRBUF_INIT;
    const char *data, *path;
    int r = 0;

    strbuf_addf(&key, "%s-data", field);
    data = str_of(entry, key.buf);
    path = str_of(entry, field);
    if (data) {
        if (b64_decode(data, &raw) < 0) {
            strbuf_addf(err, "kubeconfig \"%s\": %s: %s: not valid base64", f->name, where,
                        key.buf);
            r = -EINVAL;
            goto out;
        }
        r = write_private(cfg, tmpname, raw.buf, raw.len, ret_path);
        if (r < 0)
            strbuf_addf(err, "kubeconfig \"%s\": %s: %s: cannot write a private copy: %s", f->name,
                        where, key.buf, err_str(r));
    } else if (path) {
        char *full = resolve_path(f, path);

        if (access(full, R_OK) < 0) {
            r = -errno;
            strbuf_addf(err, "kubeconfig \"%s\": %s: %s: \"%s\": %s", f->name, where, field, full,
                        err_str(r));
            free(full);
            goto out;
        }
        *ret_path = full;
    }
out:
    strbuf_release(&key);
    strbuf_release(&raw);
    return r;
}

static int load_cluster(struct kube_config *cfg, const struct kc_file *files, size_t n,
                        const char *name, struct strbuf *err)
{
    const cJSON *cl = NULL, *insecure;
    const struct kc_file *f = find_named(files, n, "clusters", "cluster", name, &cl);
    struct strbuf where = STRBUF_INIT;
    const char *server;
    int r = -EINVAL;

    strbuf_addf(&where, "cluster \"%s\"", name);
    if (!f) {
        strbuf_addf(err, "kubeconfig \"%s\": cluster \"%s\" not found", files[0].name, name);
        goto out;
    }
    if (!cJSON_IsObject(cl)) {
        strbuf_addf(err, "kubeconfig \"%s\": %s: cluster: required", f->name, where.buf);
        goto out;
    }
    server = str_of(cl, "server");
    if (!server) {
        strbuf_addf(err, "kubeconfig \"%s\": %s: server: required", f->name, where.buf);
        goto out;
    }
    if (strncmp(server, "https://", 8) && strncmp(server, "http://", 7)) {
        strbuf_addf(err, "kubeconfig \"%s\": %s: server: \"%s\" is not an http(s) URL", f->name,
                    where.buf, server);
        goto out;
    }
    free(cfg->server);
    cfg->server = xstrdup(server);
    for (size_t l = strlen(cfg->server); l > 0 && cfg->server[l - 1] == '/'; l--)
        cfg->server[l - 1] = '\0';
    insecure = cJSON_GetObjectItemCaseSensitive(cl, "insecure-skip-tls-verify");
    cfg->insecure = cJSON_IsTrue(insecure);
    r = file_or_data(cfg, f, cl, "certificate-authority", "ca.crt", where.buf, &cfg->ca_file, err);
    if (r < 0)
        goto out;
    if (cfg->insecure && cfg->ca_file) {
        /* client-go: "specifying a root certificates file with the insecure flag is not
         * allowed" (rest/transport.go). */
        strbuf_addf(err,
                    "kubeconfig \"%s\": %s: insecure-skip-tls-verify: not allowed together "
                    "with a certificate authority",
                    f->name, where.buf);
        r = -EINVAL;
    }
out:
    strbuf_release(&where);
    return r;
}

static int load_user(struct kube_config *cfg, const struct kc_file *files, size_t n,
                     const char *name, struct strbuf *err)
{
    const cJSON *u = NULL;
    const struct kc_file *f = find_named(files, n, "users", "user", name, &u);
    struct strbuf where = STRBUF_INIT, tok = STRBUF_INIT;
    const char *token, *token_file, *user, *pass;
    int r = -EINVAL;

    strbuf_addf(&where, "user \"%s\"", name);
    if (!f) {
        strbuf_addf(err, "kubeconfig \"%s\": user \"%s\" not found", files[0].name, name);
        goto out;
    }
    if (!cJSON_IsObject(u)) {
        strbuf_addf(err, "kubeconfig \"%s\": %s: user: required", f->name, where.buf);
        goto out;
    }
    r = file_or_data(cfg, f, u, "client-certificate", "client.crt", where.buf, &cfg->cert_file,
                     err);
    if (r == 0)
        r = file_or_data(cfg, f, u, "client-key", "client.key", where.buf, &cfg->key_file, err);
    if (r < 0)
        goto out;
    r = -EINVAL;
    if (cfg->cert_file && !cfg->key_file) {
        strbuf_addf(err, "kubeconfig \"%s\": %s: client-key: required with client-certificate",
                    f->name, where.buf);
        goto out;
    }
    if (cfg->key_file && !cfg->cert_file) {
        strbuf_addf(err, "kubeconfig \"%s\": %s: client-certificate: required with client-key",
                    f->name, where.buf);
        goto out;
    }
    token = str_of(u, "token");
    token_file = str_of(u, "tokenFile");
    if (token) {
        /* client-go: an inline token wins over tokenFile. */
        cfg->token = xstrdup(token);
    } else if (token_file) {
        cfg->token_file = resolve_path(f, token_file);
        r = codec_read_file(cfg->token_file, MAX_SMALL_FILE, &tok);
        if (r < 0) {
            strbuf_addf(err, "kubeconfig \"%s\": %s: tokenFile: \"%s\": %s", f->name, where.buf,
                        cfg->token_file, err_str(r));
            goto out;
        }
        strbuf_setlen(&tok, strcspn(tok.buf, "\r\n"));
        cfg->token = strbuf_detach(&tok, NULL);
        r = -EINVAL;
    }
    user = str_of(u, "username");
    pass = str_of(u, "password");
    if (user || pass) {
        if (!user || !pass) {
            strbuf_addf(err, "kubeconfig \"%s\": %s: %s: required with %s", f->name, where.buf,
                        user ? "password" : "username", user ? "username" : "password");
            goto out;
        }
        cfg->username = xstrdup(user);
        cfg->password = xstrdup(pass);
    }
    if (!cfg->cert_file && !cfg->token && !cfg->username &&
        (cJSON_GetObjectItemCaseSensitive(u, "exec") ||
         cJSON_GetObjectItemCaseSensitive(u, "auth-provider"))) {
        strbuf_addf(err, "kubeconfig \"%s\": %s: %s: credential plugins are not supported", f->name,
                    where.buf,
                    cJSON_GetObjectItemCaseSensitive(u, "exec") ? "exec" : "auth-provider");
        r = -EOPNOTSUPP;
        goto out;
    }
    r = 0;
out:
    strbuf_release(&where);
    strbuf_release(&tok);
    return r;
}

static int resolve(struct kc_file *files, size_t n, const char *context, struct kube_config **ret,
                   struct strbuf *err)
{
    const cJSON *ctx = NULL;
    const struct kc_file *f;
    struct kube_config *cfg = NULL;
    const char *cluster, *user, *ns;
    int r = -EINVAL;

    for (size_t i = 0; !context && i < n; i++)
        context = str_of(files[i].doc, "current-context");
    if (!context) {
        strbuf_addf(err, "kubeconfig \"%s\": current-context: not set and no context given",
                    files[0].name);
        return -EINVAL;
    }
    f = find_named(files, n, "contexts", "context", context, &ctx);
    if (!f) {
        strbuf_addf(err, "kubeconfig \"%s\": context \"%s\" not found", files[0].name, context);
        return -EINVAL;
    }
    cluster = str_of(ctx, "cluster");
    if (!cluster) {
        strbuf_addf(err, "kubeconfig \"%s\": context \"%s\": cluster: required", f->name, context);
        return -EINVAL;
    }
    cfg = kube_config_new("http://unset");
    r = load_cluster(cfg, files, n, cluster, err);
    if (r < 0)
        goto out;
    user = str_of(ctx, "user");
    if (user && (r = load_user(cfg, files, n, user, err)) < 0)
        goto out;
    ns = str_of(ctx, "namespace");
    if (ns) {
        free(cfg->namespace);
        cfg->namespace = xstrdup(ns);
    }
    *ret = cfg;
    cfg = NULL;
    r = 0;
out:
    kube_config_free(cfg);
    return r;
}

static int parse_doc(const char *text, size_t len, const char *name, cJSON **ret,
                     struct strbuf *err)
{
    struct codec_error ce = {0};
    cJSON **docs = NULL;
    size_t n = 0;
    int r;

    r = yaml_parse_stream(text, len, NULL, &docs, &n, &ce);
    if (r < 0) {
        strbuf_addf(err, "kubeconfig \"%s\": %d:%d: %s", name, ce.line, ce.column, ce.msg);
        return r;
    }
    if (n == 0) {
        /* An empty file is an empty config, as for kubectl. */
        *ret = cJSON_CreateObject();
        return *ret ? 0 : -ENOMEM;
    }
    if (n != 1 || !cJSON_IsObject(docs[0])) {
        strbuf_addf(err, "kubeconfig \"%s\": not a single Config object", name);
        codec_docs_free(docs, n);
        return -EINVAL;
    }
    *ret = docs[0];
    docs[0] = NULL;
    codec_docs_free(docs, n);
    return 0;
}

int kube_config_from_text(const char *text, size_t len, const char *name, const char *dir,
                          const char *context, struct kube_config **ret, struct strbuf *err)
{
    struct strbuf scratch = STRBUF_INIT;
    struct kc_file f = {.name = name ? name : "<text>", .dir = dir ? xstrdup(dir) : NULL};
    int r;

    if (!err)
        err = &scratch;
    r = parse_doc(text, len, f.name, &f.doc, err);
    if (r == 0)
        r = resolve(&f, 1, context, ret, err);
    cJSON_Delete(f.doc);
    free(f.dir);
    strbuf_release(&scratch);
    return r;
}

int kube_config_from_kubeconfig(const char *const *paths, const char *context,
                                struct kube_config **ret, struct strbuf *err)
{
    struct strbuf scratch = STRBUF_INIT, text = STRBUF_INIT;
    struct kc_file files[MAX_KUBECONFIGS] = {0};
    size_t n = 0;
    int r = 0;

    if (!err)
        err = &scratch;
    for (const char *const *p = paths; *p && r == 0; p++) {
        const char *slash;

        if (n == MAX_KUBECONFIGS) {
            strbuf_addf(err, "more than %d kubeconfig files", MAX_KUBECONFIGS);
            r = -E2BIG;
            break;
        }
        strbuf_reset(&text);
        r = codec_read_file(*p, MAX_KUBECONFIG, &text);
        if (r < 0) {
            strbuf_addf(err, "kubeconfig \"%s\": %s", *p, err_str(r));
            break;
        }
        files[n].name = *p;
        slash = strrchr(*p, '/');
        files[n].dir = slash ? xstrndup(*p, (size_t)(slash - *p) + (slash == *p)) : NULL;
        r = parse_doc(text.buf, text.len, *p, &files[n].doc, err);
        n++;
    }
    if (r == 0 && n == 0) {
        strbuf_addstr(err, "no kubeconfig file given");
        r = -ENOENT;
    }
    if (r == 0)
        r = resolve(files, n, context, ret, err);
    for (size_t i = 0; i < n; i++) {
        cJSON_Delete(files[i].doc);
        free(files[i].dir);
    }
    strbuf_release(&text);
    strbuf_release(&scratch);
    return r;
}

int kube_config_in_cluster(const char *host, const char *port, const char *sa_dir,
                           struct kube_config **ret, struct strbuf *err)
{
    struct strbuf scratch = STRBUF_INIT, url = STRBUF_INIT, p = STRBUF_INIT, text = STRBUF_INIT;
    struct kube_config *cfg = NULL;
    int r;

    if (!err)
        err = &scratch;
    if (!sa_dir)
        sa_dir = KUBE_SA_DIR;
    if (!host || !*host || !port || !*port) {
        strbuf_addstr(err, "not running in a cluster: KUBERNETES_SERVICE_HOST and "
                           "KUBERNETES_SERVICE_PORT must be set");
        r = -ENOENT;
        goto out;
    }
    /* IPv6 literals go in brackets (net.JoinHostPort). */
    strbuf_addf(&url, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port);
    cfg = kube_config_new(url.buf);
    strbuf_addf(&p, "%s/token", sa_dir);
    r = codec_read_file(p.buf, MAX_SMALL_FILE, &text);
    if (r < 0) {
        strbuf_addf(err, "in-cluster: token \"%s\": %s", p.buf, err_str(r));
        goto out;
    }
    strbuf_setlen(&text, strcspn(text.buf, "\r\n"));
    cfg->token = strbuf_detach(&text, NULL);
    cfg->token_file = strbuf_detach(&p, NULL);
    strbuf_addf(&p, "%s/ca.crt", sa_dir);
    if (access(p.buf, R_OK) < 0) {
        r = -errno;
        strbuf_addf(err, "in-cluster: CA \"%s\": %s", p.buf, err_str(r));
        goto out;
    }
    cfg->ca_file = strbuf_detach(&p, NULL);
    strbuf_addf(&p, "%s/namespace", sa_dir);
    if (codec_read_file(p.buf, MAX_SMALL_FILE, &text) == 0) {
        strbuf_setlen(&text, strcspn(text.buf, "\r\n"));
        if (text.len) {
            free(cfg->namespace);
            cfg->namespace = strbuf_detach(&text, NULL);
        }
    }
    *ret = cfg;
    cfg = NULL;
    r = 0;
out:
    kube_config_free(cfg);
    strbuf_release(&url);
    strbuf_release(&p);
    strbuf_release(&text);
    strbuf_release(&scratch);
    return r;
}

/* Splits $KUBECONFIG on ':' into owned strings; empty elements are skipped (kubectl). */
static size_t split_paths(const char *list, char **out, size_t max)
{
    size_t n = 0;

    while (*list && n < max) {
        size_t len = strcspn(list, ":");
        if (len)
            out[n++] = xstrndup(list, len);
        list += len;
        if (*list == ':')
            list++;
    }
    return n;
}

int kube_config_load(const struct kube_config_sources *src, struct kube_config **ret,
                     struct strbuf *err)
{
    char *paths[MAX_KUBECONFIGS + 1] = {0};
    struct strbuf home = STRBUF_INIT;
    size_t n = 0;
    int r;

    if (src->kubeconfig && *src->kubeconfig) {
        paths[n++] = xstrdup(src->kubeconfig);
    } else if (src->kubeconfig_env && *src->kubeconfig_env) {
        n = split_paths(src->kubeconfig_env, paths, MAX_KUBECONFIGS);
    } else if (src->service_host && *src->service_host && src->service_port && *src->service_port) {
        return kube_config_in_cluster(src->service_host, src->service_port, src->sa_dir, ret, err);
    } else if (src->home && *src->home) {
        strbuf_addf(&home, "%s/.kube/config", src->home);
        if (access(home.buf, F_OK) == 0)
            paths[n++] = strbuf_detach(&home, NULL);
    }
    if (n == 0) {
        if (err)
            strbuf_addstr(err, "no configuration: give --kubeconfig, set KUBECONFIG, run in a "
                               "cluster or create ~/.kube/config");
        strbuf_release(&home);
        return -ENOENT;
    }
    r = kube_config_from_kubeconfig((const char *const *)paths, src->context, ret, err);
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    strbuf_release(&home);
    return r;
}
