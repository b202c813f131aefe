/*
 * Tests for kube/config: kubeconfig parsing as client-go reads it (inline *-data fields written
 * to private files vs file paths resolved against the kubeconfig's directory, token vs
 * tokenFile, current-context and --context, merging several files, and a clear error naming
 * the field for each missing or broken piece), in-cluster configuration from a service
 * account directory, and the order kube_config_load() tries the sources in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "kube/config.h"

struct dir {
    char path[64];
};

static void put_file(const char *dir, const char *name, const char *text)
{
    char p[160];
    FILE *f;

    (void)snprintf(p, sizeof(p), "%s/%s", dir, name);
    f = fopen(p, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
    struct dir *d = xcalloc(1, sizeof(*d));

    (void)snprintf(d->path, sizeof(d->path), "/tmp/koord-kubecfg-XXXXXX");
    if (!mkdtemp(d->path))
        return -1;
    *state = d;
    return 0;
}

static int teardown(void **state)
{
    struct dir *d = *state;
    static const char *const names[] = {"ca.crt", "c.crt",     "c.key", "tok",   "kc1",
                                        "kc2",    "namespace", "token", "config"};
    char p[160];

    for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
        (void)snprintf(p, sizeof(p), "%s/%s", d->path, names[i]);
        (void)unlink(p);
    }
    (void)snprintf(p, sizeof(p), "%s/.kube", d->path);
    (void)rmdir(p);
    (void)rmdir(d->path);
    free(d);
    return 0;
}

static const char *const cluster_users =
    "clusters:\n"
    "- name: c1\n"
    "  cluster:\n"
    "    server: https://10.0.0.1:6443/\n"
    "    certificate-authority-data: Q0EgUEVN\n" /* "CA PEM" */
    "- name: c2\n"
    "  cluster:\n"
    "    server: https://10.0.0.2:6443\n"
    "    certificate-authority: ca.crt\n"
    "- name: c3\n"
    "  cluster:\n"
    "    server: http://10.0.0.3:8080\n"
    "    insecure-skip-tls-verify: true\n"
    "users:\n"
    "- name: u-data\n"
    "  user:\n"
    "    client-certificate-data: Q0VSVA==\n" /* "CERT" */
    "    client-key-data: S0VZ\n"             /* "KEY" */
    "- name: u-file\n"
    "  user:\n"
    "    client-certificate: c.crt\n"
    "    client-key: c.key\n"
    "- name: u-token\n"
    "  user:\n"
    "    token: inline-token\n"
    "    tokenFile: tok\n"
    "- name: u-tokenfile\n"
    "  user:\n"
    "    tokenFile: tok\n"
    "contexts:\n"
    "- name: data\n"
    "  context: {cluster: c1, user: u-data, namespace: koordinator-system}\n"
    "- name: file\n"
    "  context: {cluster: c2, user: u-file}\n"
    "- name: token\n"
    "  context: {cluster: c3, user: u-token}\n"
    "- name: tokenfile\n"
    "  context: {cluster: c3, user: u-tokenfile}\n";

static struct kube_config *load(const char *dir, const char *text, const char *context)
{
    struct kube_config *cfg = NULL;
    struct strbuf err = STRBUF_INIT;
    int r = kube_config_from_text(text, strlen(text), "kc", dir, context, &cfg, &err);

    if (r < 0)
        fail_msg("load: %d %s", r, err.buf);
    strbuf_release(&err);
    return cfg;
}

/* Loading fails with code want and a message containing msg. */
static void load_fails(const char *dir, const char *text, const char *context, int want,
                       const char *msg)
{
    struct kube_config *cfg = NULL;
    struct strbuf err = STRBUF_INIT;
    int r = kube_config_from_text(text, strlen(text), "kc", dir, context, &cfg, &err);

    if (r != want || !strstr(err.buf, msg))
        fail_msg("got %d \"%s\", want %d with \"%s\"", r, err.buf, want, msg);
    assert_null(cfg);
    strbuf_release(&err);
}

static void assert_file(const char *path, const char *want)
{
    struct strbuf sb = STRBUF_INIT;
    struct stat st;

    assert_non_null(path);
    assert_int_equal(codec_read_file(path, 1 << 20, &sb), 0);
    assert_string_equal(sb.buf, want);
    assert_int_equal(stat(path, &st), 0);
    strbuf_release(&sb);
}

static void test_data_fields_go_to_private_files(void **state)
{
    struct dir *d = *state;
    struct strbuf text = STRBUF_INIT;
    struct kube_config *cfg;
    struct stat st;
    char tmpdir[64];

    strbuf_addf(&text, "current-context: data\n%s", cluster_users);
    cfg = load(d->path, text.buf, NULL);
    assert_string_equal(cfg->server, "https://10.0.0.1:6443");
    assert_string_equal(cfg->namespace, "koordinator-system");
    assert_file(cfg->ca_file, "CA PEM");
    assert_file(cfg->cert_file, "CERT");
    assert_file(cfg->key_file, "KEY");
    assert_int_equal(stat(cfg->key_file, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(stat(cfg->tmpdir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_false(cfg->insecure);
    assert_null(cfg->token);
    (void)snprintf(tmpdir, sizeof(tmpdir), "%s", cfg->tmpdir);
    kube_config_free(cfg);
    assert_int_equal(access(tmpdir, F_OK), -1);
    strbuf_release(&text);
}

static void test_file_fields_resolve_against_the_kubeconfig(void **state)
{
    struct dir *d = *state;
    struct strbuf text = STRBUF_INIT, want = STRBUF_INIT;
    struct kube_config *cfg;

    put_file(d->path, "ca.crt", "ca");
    put_file(d->path, "c.crt", "cert");
    put_file(d->path, "c.key", "key");
    strbuf_addf(&text, "current-context: data\n%s", cluster_users);
    cfg = load(d->path, text.buf, "file"); /* --context wins over current-context */
    assert_string_equal(cfg->server, "https://10.0.0.2:6443");
    assert_string_equal(cfg->namespace, "default");
    strbuf_addf(&want, "%s/ca.crt", d->path);
    assert_string_equal(cfg->ca_file, want.buf);
    strbuf_reset(&want);
    strbuf_addf(&want, "%s/c.key", d->path);
    assert_string_equal(cfg->key_file, want.buf);
    assert_string_equal(cfg->tmpdir, "");
    kube_config_free(cfg);

    /* The same file missing: an error naming the field and the path. */
    (void)unlink(want.buf);
    load_fails(d->path, text.buf, "file", -ENOENT, "user \"u-file\": client-key: \"");
    strbuf_release(&text);
    strbuf_release(&want);
}

static void test_token_and_token_file(void **state)
{
    struct dir *d = *state;
    struct strbuf text = STRBUF_INIT;
    struct kube_config *cfg;

    put_file(d->path, "tok", "from-file\n");
    strbuf_addf(&text, "current-context: token\n%s", cluster_users);
    cfg = load(d->path, text.buf, NULL);
    assert_string_equal(cfg->token, "inline-token"); /* token wins over tokenFile */
    assert_null(cfg->token_file);
    assert_true(cfg->insecure);
    assert_null(cfg->ca_file);
    assert_string_equal(cfg->server, "http://10.0.0.3:8080");
    kube_config_free(cfg);

    cfg = load(d->path, text.buf, "tokenfile");
    assert_string_equal(cfg->token, "from-file");
    assert_non_null(strstr(cfg->token_file, "/tok"));
    kube_config_free(cfg);

    strbuf_release(&text);
}

static void test_missing_pieces_name_the_field(void **state)
{
    struct dir *d = *state;
    struct strbuf t = STRBUF_INIT;

    load_fails(d->path, cluster_users, NULL, -EINVAL, "current-context: not set");
    load_fails(d->path, cluster_users, "nope", -EINVAL, "context \"nope\" not found");
    load_fails(d->path, "contexts:\n- name: x\n  context: {user: u}\n", "x", -EINVAL,
               "context \"x\": cluster: required");
    load_fails(d->path, "contexts:\n- name: x\n  context: {cluster: gone}\n", "x", -EINVAL,
               "cluster \"gone\" not found");
    load_fails(d->path,
               "clusters:\n- name: c\n  cluster: {certificate-authority-data: Q0E=}\n"
               "contexts:\n- name: x\n  context: {cluster: c}\n",
               "x", -EINVAL, "cluster \"c\": server: required");
    load_fails(d->path,
               "clusters:\n- name: c\n  cluster: {server: 'ftp://x'}\n"
               "contexts:\n- name: x\n  context: {cluster: c}\n",
               "x", -EINVAL, "server: \"ftp://x\" is not an http(s) URL");
    load_fails(d->path,
               "clusters:\n- name: c\n  cluster: {server: 'https://x', certificate-authority-data: "
               "'Q0E=', insecure-skip-tls-verify: true}\n"
               "contexts:\n- name: x\n  context: {cluster: c}\n",
               "x", -EINVAL, "insecure-skip-tls-verify: not allowed");
    load_fails(d->path,
               "clusters:\n- name: c\n  cluster: {server: 'https://x', certificate-authority-data: "
               "'not*base64'}\ncontexts:\n- name: x\n  context: {cluster: c}\n",
               "x", -EINVAL, "cluster \"c\": certificate-authority-data: not valid base64");

    strbuf_addstr(&t, "clusters:\n- name: c\n  cluster: {server: 'https://x'}\n"
                      "contexts:\n- name: x\n  context: {cluster: c, user: u}\nusers:\n");
    {
        struct strbuf u = STRBUF_INIT;

        strbuf_addf(&u, "%s- name: u\n  user: {client-certificate-data: Q0E=}\n", t.buf);
        load_fails(d->path, u.buf, "x", -EINVAL,
                   "user \"u\": client-key: required with client-certificate");
        strbuf_reset(&u);
        strbuf_addf(&u, "%s- name: u\n  user: {client-key-data: Q0E=}\n", t.buf);
        load_fails(d->path, u.buf, "x", -EINVAL,
                   "user \"u\": client-certificate: required with client-key");
        strbuf_reset(&u);
        strbuf_addf(&u, "%s- name: u\n  user: {tokenFile: /nonexistent/token}\n", t.buf);
        load_fails(d->path, u.buf, "x", -ENOENT, "user \"u\": tokenFile: \"/nonexistent/token\"");
        strbuf_reset(&u);
        strbuf_addf(&u, "%s- name: u\n  user: {username: a}\n", t.buf);
        load_fails(d->path, u.buf, "x", -EINVAL, "user \"u\": password: required with username");
        strbuf_reset(&u);
        strbuf_addf(&u, "%s- name: u\n  user: {exec: {command: aws}}\n", t.buf);
        load_fails(d->path, u.buf, "x", -EOPNOTSUPP, "exec: credential plugins are not supported");
        strbuf_reset(&u);
        strbuf_addf(&u, "%s- name: other\n  user: {token: t}\n", t.buf);
        load_fails(d->path, u.buf, "x", -EINVAL, "user \"u\" not found");
        strbuf_release(&u);
    }
    load_fails(d->path, "[1, 2]", NULL, -EINVAL, "not a single Config object");
    load_fails(d->path, "a: [", NULL, -EINVAL, "kubeconfig \"kc\": ");
    strbuf_release(&t);
}

static void test_files_merge_first_wins(void **state)
{
    struct dir *d = *state;
    char p1[128], p2[128];
    const char *paths[] = {p1, p2, NULL};
    struct kube_config *cfg = NULL;
    struct strbuf err = STRBUF_INIT;

    put_file(d->path, "kc1",
             "clusters:\n- name: c\n  cluster: {server: 'https://first'}\n"
             "users:\n- name: u\n  user: {token: first}\n");
    put_file(d->path, "kc2",
             "current-context: x\n"
             "clusters:\n- name: c\n  cluster: {server: 'https://second'}\n"
             "users:\n- name: u\n  user: {token: second}\n"
             "contexts:\n- name: x\n  context: {cluster: c, user: u, namespace: n2}\n");
    (void)snprintf(p1, sizeof(p1), "%s/kc1", d->path);
    (void)snprintf(p2, sizeof(p2), "%s/kc2", d->path);
    assert_int_equal(kube_config_from_kubeconfig(paths, NULL, &cfg, &err), 0);
    assert_string_equal(cfg->server, "https://first");
    assert_string_equal(cfg->token, "first");
    assert_string_equal(cfg->namespace, "n2");
    kube_config_free(cfg);
    cfg = NULL;

    (void)unlink(p1);
    assert_int_equal(kube_config_from_kubeconfig(paths, NULL, &cfg, &err), -ENOENT);
    assert_non_null(strstr(err.buf, "kc1"));
    strbuf_release(&err);
}

static void make_sa_dir(const char *dir)
{
    put_file(dir, "token", "sa-token\n");
    put_file(dir, "ca.crt", "sa-ca");
    put_file(dir, "namespace", "koordinator-system");
}

static void test_in_cluster(void **state)
{
    struct dir *d = *state;
    struct kube_config *cfg = NULL;
    struct strbuf err = STRBUF_INIT;

    assert_int_equal(kube_config_in_cluster(NULL, "443", d->path, &cfg, &err), -ENOENT);
    assert_non_null(strstr(err.buf, "not running in a cluster"));
    strbuf_reset(&err);
    assert_int_equal(kube_config_in_cluster("10.96.0.1", "443", d->path, &cfg, &err), -ENOENT);
    assert_non_null(strstr(err.buf, "/token"));
    strbuf_reset(&err);

    make_sa_dir(d->path);
    assert_int_equal(kube_config_in_cluster("10.96.0.1", "443", d->path, &cfg, &err), 0);
    assert_string_equal(cfg->server, "https://10.96.0.1:443");
    assert_string_equal(cfg->token, "sa-token");
    assert_non_null(strstr(cfg->token_file, "/token"));
    assert_non_null(strstr(cfg->ca_file, "/ca.crt"));
    assert_string_equal(cfg->namespace, "koordinator-system");
    kube_config_free(cfg);

    assert_int_equal(kube_config_in_cluster("fd00::1", "6443", d->path, &cfg, &err), 0);
    assert_string_equal(cfg->server, "https://[fd00::1]:6443");
    kube_config_free(cfg);
    strbuf_release(&err);
}

static void test_load_order(void **state)
{
    struct dir *d = *state;
    struct kube_config_sources src = {0};
    struct kube_config *cfg = NULL;
    struct strbuf err = STRBUF_INIT;
    char kc1[128], kube[128];

    assert_int_equal(kube_config_load(&src, &cfg, &err), -ENOENT);
    assert_non_null(strstr(err.buf, "no configuration"));

    /* ~/.kube/config is the last resort. */
    (void)snprintf(kube, sizeof(kube), "%s/.kube", d->path);
    assert_int_equal(mkdir(kube, 0700), 0);
    put_file(kube, "config",
             "current-context: x\nclusters:\n- name: c\n  cluster: {server: 'https://home'}\n"
             "contexts:\n- name: x\n  context: {cluster: c}\n");
    src.home = d->path;
    assert_int_equal(kube_config_load(&src, &cfg, &err), 0);
    assert_string_equal(cfg->server, "https://home");
    kube_config_free(cfg);

    /* In-cluster before the home file. */
    make_sa_dir(d->path);
    src.service_host = "10.96.0.1";
    src.service_port = "443";
    src.sa_dir = d->path;
    assert_int_equal(kube_config_load(&src, &cfg, &err), 0);
    assert_string_equal(cfg->server, "https://10.96.0.1:443");
    kube_config_free(cfg);

    /* $KUBECONFIG before in-cluster; --kubeconfig before everything. */
    put_file(d->path, "kc1",
             "current-context: x\nclusters:\n- name: c\n  cluster: {server: 'https://env'}\n"
             "contexts:\n- name: x\n  context: {cluster: c}\n");
    (void)snprintf(kc1, sizeof(kc1), "::%s/kc1:", d->path);
    src.kubeconfig_env = kc1;
    assert_int_equal(kube_config_load(&src, &cfg, &err), 0);
    assert_string_equal(cfg->server, "https://env");
    kube_config_free(cfg);
    src.kubeconfig = "/nonexistent/kubeconfig";
    assert_int_equal(kube_config_load(&src, &cfg, &err), -ENOENT);
    assert_non_null(strstr(err.buf, "/nonexistent/kubeconfig"));

    (void)snprintf(kube, sizeof(kube), "%s/.kube/config", d->path);
    (void)unlink(kube);
    strbuf_release(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_data_fields_go_to_private_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_fields_resolve_against_the_kubeconfig, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_token_and_token_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_pieces_name_the_field, setup, teardown),
        cmocka_unit_test_setup_teardown(test_files_merge_first_wins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_in_cluster, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_order, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
