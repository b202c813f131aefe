/*
 * Internals shared by the files of src/agent/cgroup: bounded path building, number scanning
 * over file text, and reading a file by path. No other directory includes this.
 */
#ifndef KOORD_AGENT_CGROUP_INT_H
#define KOORD_AGENT_CGROUP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/cgroup/resource.h"

/* Appends to buf[size] while it fits; once something did not, the path is lost and
 * cg__path_end() says -ENAMETOOLONG. */
struct cg__path {
    char *buf;
    size_t size, len;
    bool overflow;
};

void cg__path_start(struct cg__path *p, char *buf, size_t size);
void cg__path_add(struct cg__path *p, const char *s, size_t n);
void cg__path_adds(struct cg__path *p, const char *s);
/* Appends root without its trailing '/' (unless it is "/"). */
void cg__path_add_root(struct cg__path *p, const char *root);
/* Appends "/" and component (with its leading and trailing '/' dropped; nothing if empty). */
void cg__path_add_component(struct cg__path *p, const char *component);
/* The length, or -ENAMETOOLONG (buf then holds ""). */
int cg__path_end(struct cg__path *p);

/* Whether the relative path s has a ".." component. */
bool cg__has_dotdot(const char *s);

/* Whitespace inside a line (space, tab) and around values (plus '\n', '\r'). */
static inline bool cg__is_blank(char c)
{
    return c == ' ' || c == '\t';
}
static inline bool cg__is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Scans a decimal integer at *p ('-' allowed for the signed one), advancing *p past it.
 * -EBADMSG without digits, -ERANGE on overflow (*p unchanged then). */
int cg__scan_i64(const char **p, int64_t *ret);
int cg__scan_u64(const char **p, uint64_t *ret);

/* The raw value of r's file text on v: what the file says as an integer (a weight for v2
 * shares, usage_usec for v2 usage, CG_UNLIMITED for "max" and v1's unlimited numbers), before
 * any conversion to the logical value. Errors as cg_res_parse(). */
int cg__res_parse_raw(enum cg_version v, enum cg_res r, const char *text, int64_t *ret);

/* cg_res_format() that also gives the raw value written (CG_KIND_INT only; untouched for
 * cpusets). */
int cg__res_format_raw(enum cg_version v, enum cg_res r, const char *value, char *buf, size_t size,
                       int64_t *ret_raw);

/* Reads path into buf[size] by open + read + close (for writes, which keep nothing open).
 * Returns the length; -ENOBUFS when it did not fit; -errno. */
int cg__read_path(const char *path, char *buf, size_t size);

#endif
