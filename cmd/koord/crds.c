/* koord crds: the CRD manifests generated from the type descriptions. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "api/crd.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "cmd.h"
#include "codec/codec.h"

static const char usage[] =
    "usage: koord crds [--output-dir DIR]\n"
    "\n"
    "Prints the CustomResourceDefinition of every Koordinator kind as a YAML stream, or writes\n"
    "one file per CRD (<group>_<plural>.yaml, as upstream names them) into DIR.\n";

static int write_file(const char *path, const struct strbuf *sb)
{
    FILE *f = fopen(path, "we");
    int r = 0;

    if (!f)
        return -errno;
    if (fwrite(sb->buf, 1, sb->len, f) != sb->len)
        r = -EIO;
    if (fclose(f) != 0 && r == 0)
        r = -errno;
    return r;
}

int cmd_crds(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output-dir", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *dir = NULL;
    bool first = true;
    int c;

    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'd') {
            dir = optarg;
        } else if (c == 'h') {
            (void)fputs(usage, stdout);
            return 0;
        } else {
            (void)fputs(usage, stderr);
            return 2;
        }
    }
    for (const struct api_kind *const *k = api_kinds(); *k; k++) {
        struct strbuf out = STRBUF_INIT, name = STRBUF_INIT;
        cJSON *crd = NULL;
        int r;

        if (!(*k)->crd)
            continue;
        r = api_crd_build(*k, &crd);
        if (r == 0)
            r = yaml_emit(crd, &out);
        cJSON_Delete(crd);
        if (r == 0 && dir) {
            strbuf_addf(&name, "%s/", dir);
            api_crd_file_name(*k, &name);
            r = write_file(name.buf, &out);
            if (r < 0)
                (void)fprintf(stderr, "koord crds: %s: %s\n", name.buf, err_str(r));
        } else if (r == 0) {
            (void)printf("%s%s", first ? "" : "---\n", out.buf);
        }
        first = false;
        strbuf_release(&out);
        strbuf_release(&name);
        if (r < 0)
            return 1;
    }
    return 0;
}
