/*
 * agent/cgroup/writer.h: the one way the agent changes a cgroup file, and the files beside the
 * hierarchy its strategies turn (sysctls, resctrl). QoS strategies run every second and mostly
 * find the node already as they want it, so a write is checked, minimal and verified (koordlet
 * pkg/koordlet/resourceexecutor/executor.go; reference section 3, "resource executor"):
 *
 *   1. the value is validated (resource.h) and turned into the file's text for this version;
 *   2. the file is read; if it already holds that value (compared as values, not text: a
 *      cpuset "0,1" equals "0-1", a memory limit rounded down to a page equals the limit asked)
 *      nothing is written;
 *   3. in dry-run mode the write that would happen is logged (info) and nothing is written;
 *   4. the text is written in one write() (cgroup files take one value per write);
 *   5. the file is read back; a value other than the one written is reported.
 *
 * Not here: koordlet's "cacheable" skip of a value written less than 60 s ago (step 2 already
 * makes repeats cost one read), and its leveled parent-before-child updates (a strategy orders
 * its writes).
 *
 * Errors are returned as -errno; the writer keeps a message for the last failure, naming the
 * path, for the strategy to log: cannot write "50000" to "/sys/fs/cgroup/cpu/x/cpu.cfs_quota_us":
 * Invalid argument.
 *
 * A writer is caller-owned storage, used by one thread at a time.
 */
#ifndef KOORD_AGENT_CGROUP_WRITER_H
#define KOORD_AGENT_CGROUP_WRITER_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/cgroup/cgroup.h"
#include "agent/cgroup/resource.h"

/* What a successful cg_write() did. */
enum cg_write_result {
    CG_WRITE_UNCHANGED = 0, /* the file held the value already */
    CG_WRITE_DONE = 1,      /* written and read back */
    CG_WRITE_DRY_RUN = 2,   /* would have been written; logged */
};

struct cg_writer {
    const struct cg_layout *layout; /* borrowed; must outlive the writer */
    bool dry_run;
    /* private */
    char err[CG_PATH_MAX + 512];
};

/* Initialises w for layout l; dry_run: log writes instead of doing them. */
void cg_writer_init(struct cg_writer *w, const struct cg_layout *l, bool dry_run);

/*
 * Sets resource r of cgroup dir (relative, see cg_dir_path()) to the logical value text value
 * (see cg_res_format(): decimal, "max"/"-1" for unlimited, a CPU list for cpuset). Returns an
 * enum cg_write_result, or:
 *   -EINVAL, -ERANGE   bad value or dir (nothing read or written);
 *   -EOPNOTSUPP        r is not writable on this version;
 *   -ENOENT            the file does not exist: the cgroup is gone, or this kernel lacks the
 *                      file (cpu.bvt_warp_ns, memory.wmark_* exist on Anolis kernels only) —
 *                      the message says which; strategies report "unsupported" or skip the pod;
 *   -EIO               the value read back differs from the one written (the kernel clamped or
 *                      refused it silently), or a short write;
 *   other -errno       of open(), read() or write(), e.g. -EINVAL from the kernel.
 */
int cg_write(struct cg_writer *w, enum cg_res r, const char *dir, const char *value);

/* cg_write() of the decimal value (CG_UNLIMITED for unlimited). */
int cg_write_i64(struct cg_writer *w, enum cg_res r, const char *dir, int64_t value);

/*
 * Whether the text current of a file already holds the value value (and, read back after a
 * write, whether the file took it). Compares values, not text: the kernel pads and reorders.
 */
typedef bool (*cg_same_fn)(const char *current, const char *value);

/*
 * cg_write() for a file outside the cgroup hierarchy, named by its absolute path: sysctls under
 * /proc/sys, knobs under /sys, resctrl schemata. Steps 2 to 5 above with same() as the
 * comparison; value is written as given, in one write(). Returns an enum cg_write_result, or
 * -ENOENT when the file does not exist (the caller knows whether that means an old kernel, a
 * missing mount or an optional file), -EIO when the value read back is not the one written,
 * other -errno of open(), read() or write(). The message (cg_writer_error()) names the path.
 */
int cg_write_file(struct cg_writer *w, const char *path, const char *value, cg_same_fn same);

/* A cg_same_fn for files holding one decimal integer (sysctls): surrounding whitespace is
 * ignored; false when either side is not an integer. */
bool cg_same_int(const char *current, const char *value);

/*
 * Writes value to path in one write(), unchecked: for files that take commands rather than
 * hold a value, where reading tells nothing about the write (resctrl and cgroup "tasks": a TID
 * moves a thread; debugfs sched_features: "NO_NAME" turns a feature off). The file is opened
 * O_APPEND, which the kernel's files ignore and which makes a regular file (a test tree) keep
 * every command in order. Dry run logs instead. Returns CG_WRITE_DONE, CG_WRITE_DRY_RUN,
 * -ENOENT, other -errno (-ESRCH: the thread named is gone).
 */
int cg_append_file(struct cg_writer *w, const char *path, const char *value);

/* The message of the last failed cg_write(), cg_write_file() or cg_append_file(), "" before
 * any. Valid until the next call. */
const char *cg_writer_error(const struct cg_writer *w);

#endif
