/*
 * Resctrl: LLC ways (CAT) and memory bandwidth (MBA) per QoS group (reference
 * koordlet-and-scheduler.md 3.6; upstream qosmanager/plugins/resctrl/resctrl_reconcile.go,
 * util/system/resctrl.go). The groups LSR, LS and BE each get a schemata from their class's
 * resctrlQOS (disabled classes carry the neutral 0-100 %, 100 %), and the tasks of the pods of
 * enabled classes are appended to their group.
 */
#ifndef KOORD_AGENT_QOS_RESCTRL_H
#define KOORD_AGENT_QOS_RESCTRL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/qos/nodeslo.h"
#include "agent/qos/qos.h"

struct strbuf;

/* AMD's MB value for "unlimited", and its bandwidth per 100 %: 25 x 8 x 0.8 Gb/s. */
#define QOS_RESCTRL_AMD_MB_MAX  2048
#define QOS_RESCTRL_AMD_MB_UNIT 160

/*
 * Parses the root L3 cbm_mask file content (hex digits, no "0x"; the caller strips the
 * newline). Returns 0 with *ret, -EINVAL (not hex, empty), -ERANGE (beyond 64 bits).
 */
int qos_resctrl_parse_cbm(const char *s, uint64_t *ret);

/*
 * The number of cache ways of a root cbm: its bit length (0x7ff -> 11). The root mask must be
 * contiguous from bit 0 (cbm + 1 a power of two; 0 has 0 ways): -EINVAL otherwise.
 */
int qos_resctrl_ways(uint64_t cbm, unsigned *ret);

/*
 * The L3 mask for a way range: startWay = ceil(ways x start / 100), endWay = ceil(ways x end /
 * 100), mask = 2^endWay - 2^startWay. E.g. cbm 0x3ff, 10-80 % -> 0xfe; cbm 0x7ff, 0-30 % -> 0xf.
 * -EINVAL for a bad cbm, start < 0, end > 100 or end <= start (upstream's checks).
 */
int qos_resctrl_l3_mask(uint64_t cbm, int64_t start_percent, int64_t end_percent, uint64_t *ret);

/*
 * The MB value of a percent: Intel rounds up to a multiple of 10 (55 -> 60); AMD gives 2048
 * (unlimited) for 100 % and int(160 x pct / 100) otherwise. -EINVAL outside (0, 100] (a range the
 * reference leaves open; the NodeSLO webhook allows 0..100, and 0 would stop all traffic).
 */
int qos_resctrl_mb(int64_t percent, bool amd, int64_t *ret);

/*
 * The schemata lines for a class over the cache ids (sorted ascending in the output, as
 * upstream prints them, each entry followed by ";"):
 *   "L3:0=fe;1=fe;\n" then "MB:0=100;1=100;\n"
 * mb false leaves out the MB line (no MBA support). Returns 0 with the text appended to out, or
 * the error of qos_resctrl_l3_mask()/qos_resctrl_mb() (out untouched). ncache_ids 0 appends
 * nothing.
 */
int qos_resctrl_schemata(const struct qos_resctrl_qos *cfg, uint64_t cbm, const int *cache_ids,
                         size_t ncache_ids, bool mb, bool amd, struct strbuf *out);

/* The two lines of qos_resctrl_schemata() on their own: "L3:<id>=<mask hex>;..." and
 * "MB:<id>=<mb>;...", ids ascending, each line ending in '\n'. n 0 appends nothing. */
void qos_resctrl_l3_line(uint64_t mask, const int *cache_ids, size_t n, struct strbuf *out);
void qos_resctrl_mb_line(int64_t mb, const int *cache_ids, size_t n, struct strbuf *out);

/* Bound on the cache domains of one resource (sockets, or sub-NUMA clusters). */
#define QOS_RESCTRL_CACHE_IDS_MAX 64

/*
 * The domain ids of the L3 line of a schemata text (the root group's schemata: "L3:0=7ff;1=7ff",
 * the kernel may pad the name and the masks), in file order. Returns the count (>= 1) with
 * ids[] filled, -ENOENT without an L3 line, -EINVAL for a malformed line or id, -E2BIG beyond
 * max ids.
 */
int qos_resctrl_cache_ids(const char *schemata, int *ids, size_t max);

/*
 * Whether the schemata text current (as the kernel shows it: every resource of the group, names
 * right-aligned, cache masks zero-padded hex, MB values space-padded decimal) already holds
 * every entry of want (lines as qos_resctrl_schemata() writes them). Values compare as numbers:
 * hex for cache resources, decimal for "MB". Resources and ids want does not name are ignored;
 * a resource or id want names that current lacks, or a malformed line, is "not held".
 */
bool qos_resctrl_schemata_holds(const char *current, const char *want);

/* The resctrl group of a QoS class: LSE and LSR -> "LSR", LS -> "LS", BE -> "BE"; else NULL. */
const char *qos_resctrl_group(enum api_qos q);

/* The resourceQOSStrategy class whose resctrlQOS a group follows (LSR, LS, BE). */
enum qos_class qos_resctrl_group_class(enum api_qos q);

/*
 * The group the pod's tasks go to, or NULL: active pods without the per-pod annotation
 * node.koordinator.sh/resctrl (the runtime hook handles those), whose QoS with default maps to a
 * group whose class has resctrlQOS.enable.
 */
const char *qos_resctrl_pod_group(const struct qos_resource_qos *cfg, const struct qos_pod *p);

#endif
