/*
 * The node agent's metric history (upstream pkg/koordlet/metriccache; reference
 * koordlet-and-scheduler.md 2.1, 2.2). Upstream keeps 12 h of samples in an embedded Prometheus
 * TSDB; we keep, in memory, only what the consumers ask for: each series is a fixed-size ring
 * sized from a per-kind retention and the collect interval, so memory is proportional to the
 * live series and known in advance (mc_stats()).
 *
 * Series. A series is a metric kind (enum mc_kind, upstream's metric names) plus an id string:
 * the pod UID for pod kinds, the container ID for container kinds, the NUMA node, host
 * application or BE resource/allocation for those kinds, nothing ("" or NULL) for node and
 * system kinds. It is created by its first mc_append() and lives until mc_drop(),
 * mc_drop_owner() or mc_gc() removes it.
 *
 * Owners. A series may belong to an owner, a group key: a pod series is owned by its pod UID, a
 * container series by its pod's UID (given at append), other kinds by whatever the caller passes
 * (usually nothing). mc_drop_owner() removes a deleted pod's pod and container series at once,
 * and a query can pool every series of one kind an owner has (a pod's containers).
 *
 * Keys and lookups. Series sit in a chained hash table keyed by FNV-1a over (kind, id), so an
 * append costs one hash of a short string and one compare. Owners are interned in a second
 * table: each series points at its owner, which lists its series, so dropping or querying a pod
 * touches only that pod's series. Each kind also lists its series, in creation order, for
 * pooled queries over a whole kind and for the GC.
 *
 * Points. A point is a millisecond timestamp and a double value. Values are doubles as in
 * upstream's TSDB, so a series' averages and percentiles are what upstream's float64 arithmetic
 * gives (a float would store 0.7 cores as 0.69999999, which truncates to 699 milli; pooled sums
 * may differ from upstream's in the last bit, as series are visited in creation order rather
 * than label order). Timestamps are stored as uint32 offsets from a per-series base, 12 bytes a
 * point instead of 16: the ring is re-based when an offset would pass 2^32 ms (~49.7 days), and
 * a point more than 2^32 - 1 ms older than the newest point of its series is discarded then.
 *
 * Out-of-order points. Per series, timestamps must increase strictly; an older point is rejected
 * with -ERANGE and one at the newest timestamp with -EEXIST, and nothing changes (upstream's TSDB
 * accepts up to 1 min out of order; our only writer is the collector, whose clock moves
 * forward). After a wall-clock step backwards a caller that wants to record at once drops the
 * series first.
 *
 * Thread safety. One writer (the collector) and any number of readers (the reporter, the QoS
 * strategies) on other threads. A single writer-preferring pthread rwlock guards everything: an
 * append, a drop or the GC takes it for writing, a query or mc_stats() for reading. Readers hold
 * it only to copy the matched values into the caller's scratch buffer and sum them; percentiles
 * are computed after it is released. Per-series seqlocks were not used: creating and dropping
 * series changes the tables, which needs a lock anyway, and the critical sections are a few
 * microseconds. Every function may be called from any thread between mc_new() and mc_free().
 */
#ifndef KOORD_AGENT_METRICCACHE_METRICCACHE_H
#define KOORD_AGENT_METRICCACHE_METRICCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Metric kinds, named as upstream's metric_types.go; units as the collectors write them. */
enum mc_kind {
    MC_NODE_CPU_USAGE,                    /* cores; no id */
    MC_NODE_MEMORY_USAGE,                 /* bytes; no id */
    MC_NODE_MEMORY_USAGE_WITH_PAGE_CACHE, /* bytes; no id */
    MC_NODE_NUMA_CPU_USAGE,               /* cores; id: NUMA node id ("0") */
    MC_NODE_NUMA_MEMORY_USAGE,            /* bytes; id: NUMA node id */
    MC_SYS_CPU_USAGE,                     /* cores; no id */
    MC_SYS_MEMORY_USAGE,                  /* bytes; no id */
    MC_SYS_NUMA_CPU_USAGE,                /* cores; id: NUMA node id */
    MC_SYS_NUMA_MEMORY_USAGE,             /* bytes; id: NUMA node id */
    MC_NODE_BE,          /* milli-cores; id: MC_BE_* ("be_resource/be_allocation") */
    MC_POD_CPU_USAGE,    /* cores; id: pod UID (also its owner) */
    MC_POD_MEMORY_USAGE, /* bytes; id: pod UID */
    MC_POD_MEMORY_USAGE_WITH_PAGE_CACHE,       /* bytes; id: pod UID */
    MC_POD_CPU_THROTTLED,                      /* throttled ratio 0..1; id: pod UID */
    MC_CONTAINER_CPU_USAGE,                    /* cores; id: container ID, owner: pod UID */
    MC_CONTAINER_MEMORY_USAGE,                 /* bytes; id: container ID, owner: pod UID */
    MC_CONTAINER_MEMORY_USAGE_WITH_PAGE_CACHE, /* bytes; as above */
    MC_CONTAINER_CPU_THROTTLED,                /* ratio; as above */
    MC_HOST_APP_CPU_USAGE,                     /* cores; id: host application name */
    MC_HOST_APP_MEMORY_USAGE,                  /* bytes; id: host application name */
    MC_HOST_APP_MEMORY_USAGE_WITH_PAGE_CACHE,  /* bytes; id: host application name */
    MC_KIND_COUNT
};

/* Ids of MC_NODE_BE series: upstream's labels be_resource=cpu, be_allocation=<...>. */
#define MC_BE_CPU_REAL_LIMIT "cpu/real-limit"
#define MC_BE_CPU_REQUEST    "cpu/request"
#define MC_BE_CPU_USAGE      "cpu/usage"

/* Longest id or owner accepted (container IDs with a runtime prefix are ~77 bytes). */
#define MC_ID_MAX 253

/* Bytes one stored point takes: a double value and a uint32 timestamp offset. */
#define MC_POINT_BYTES 12

/*
 * Upper bound of what a series costs beside its points and its id, for sizing: the series
 * header (~104 bytes), its share of the series table's buckets (at most 4 pointers: the table
 * doubles above load 1 and halves below 1/4), and, when it is its owner's only series, the
 * owner's header and bucket share. See mc_stats().
 */
#define MC_SERIES_OVERHEAD_MAX 256

/*
 * Default retentions, from what each kind's readers ask for. Node and system usage keep the
 * largest aggregated duration the reporter publishes (30 min: nodeAggregatePolicy durations
 * 5m/10m/30m, reference 2.5). Pod usage, the NUMA, BE and host-application kinds keep the report
 * aggregate window (300 s, reference 2.4), which also covers the BE CPU evict window and the
 * predictor's last minute. Container kinds and pod throttling are read only as "last in
 * 2 x interval" by the QoS strategies (reference 2.2) and never reported, so they keep 10 s:
 * with 300 s they were three quarters of the agent's heap on a node of 110 pods. The reporter
 * lengthens the report kinds with mc_set_retention() when a NodeMetric spec asks for longer
 * windows (report_policy_retain()).
 *
 * Sizing at the defaults and 1 s: a node series is 1801 x 12 = 21 612 bytes of points, a report
 * series 301 x 12 = 3 612, a "last" series 11 x 12 = 132. A node of 110 pods x 2 containers with
 * the default collectors (node and system CPU and memory, 3 BE series, cpu/memory/throttled per
 * pod and per container: 997 series, 82 797 points) takes 1.12 MiB, under the 1.5 MiB
 * tests/agent/test_metriccache.c checks; upstream's TSDB is given 100 MB on disk and a 256 MiB
 * memory limit.
 */
#define MC_RETENTION_NODE_MS    ((int64_t)30 * 60 * 1000)
#define MC_RETENTION_DEFAULT_MS ((int64_t)300 * 1000)
#define MC_RETENTION_LAST_MS    ((int64_t)10 * 1000)
#define MC_INTERVAL_DEFAULT_MS  1000
#define MC_MAX_SERIES_DEFAULT   16384
/* Largest ring accepted (retention / interval + 1), so a typo cannot ask for gigabytes. */
#define MC_MAX_CAPACITY (1u << 22)

/*
 * Configuration; zero fields take the defaults, so a zeroed struct (or NULL) is the default
 * cache. A series of kind k holds capacity(k) = ceil(retention_ms[k] / interval_ms) + 1 points:
 * a window of exactly the retention, bounds included, at the collect interval.
 */
struct mc_config {
    int64_t interval_ms;                 /* collect interval; 0 = MC_INTERVAL_DEFAULT_MS */
    int64_t retention_ms[MC_KIND_COUNT]; /* 0 = the kind's default: MC_RETENTION_NODE_MS for
                                          * node_cpu_usage, node_memory_usage(_with_page_cache),
                                          * sys_cpu_usage, sys_memory_usage; MC_RETENTION_LAST_MS
                                          * for container kinds and pod_cpu_throttled;
                                          * MC_RETENTION_DEFAULT_MS else */
    size_t max_series;                   /* appends that would create more fail with -ENOSPC;
                                          * 0 = MC_MAX_SERIES_DEFAULT */
};

struct mc;

/*
 * Creates a cache. cfg may be NULL (all defaults). -EINVAL when an interval or retention is
 * negative, or a retention gives a ring above MC_MAX_CAPACITY points.
 */
int mc_new(const struct mc_config *cfg, struct mc **ret);
/* Frees the cache and every series; NULL is fine. No other call may be running. */
void mc_free(struct mc *mc);

/* Upstream's metric name of kind ("node_cpu_usage"), or "unknown". */
const char *mc_kind_name(enum mc_kind kind);
/* Points a series of kind holds (capacity(k) above). */
uint32_t mc_kind_capacity(struct mc *mc, enum mc_kind kind);

/*
 * Changes the retention of kind (0 = its default) and resizes every existing series of that kind
 * at once, keeping its newest points. For when the NodeMetric spec asks for longer aggregate
 * windows. -EINVAL as for mc_new().
 */
int mc_set_retention(struct mc *mc, enum mc_kind kind, int64_t retention_ms);

/*
 * Records value at ts_ms (milliseconds since the epoch) in series (kind, id), creating it on
 * first use; when its ring is full the oldest point is overwritten.
 *
 * id: NULL or "" for node and system kinds, required (at most MC_ID_MAX bytes) for the others.
 * owner: a pod kind's owner is its id (pass NULL or the same UID); a container kind requires its
 * pod's UID; other kinds take an optional group key. The owner is fixed when the series is
 * created; a later append naming another owner is rejected.
 *
 * Returns 0; -EINVAL for an unknown kind, a missing, superfluous or too long id or owner, an
 * owner other than the series', a negative timestamp or a value that is not finite; -ERANGE
 * for a timestamp older than the series' newest point and -EEXIST for one equal to it (nothing
 * is stored); -ENOSPC when creating the series would pass max_series.
 */
int mc_append(struct mc *mc, enum mc_kind kind, const char *id, const char *owner, int64_t ts_ms,
              double value);

/* Removes series (kind, id). 0, or -ENOENT when there is none. */
int mc_drop(struct mc *mc, enum mc_kind kind, const char *id);
/* Removes every series of owner (a deleted pod: its pod and container series); returns how many. */
size_t mc_drop_owner(struct mc *mc, const char *owner);
/*
 * Removes every series whose newest point is older than now_ms - max_age_ms (callers pass N x
 * the collect interval); max_age_ms <= 0 uses each kind's retention, which never changes the
 * answer of a query whose window ends at now_ms and is no longer than the retention. Returns how
 * many series were removed.
 */
size_t mc_gc(struct mc *mc, int64_t now_ms, int64_t max_age_ms);

/*
 * Which series a query pools (upstream selects by kind and labels, then pools every point):
 *   id set:            the one series (kind, id);
 *   id NULL, owner set: every series of kind owned by owner (e.g. a pod's containers);
 *   both NULL:          every series of kind (for node and system kinds, the one series).
 */
struct mc_select {
    enum mc_kind kind;
    const char *id;
    const char *owner;
};

/*
 * A caller-owned buffer a query copies the matched values into, reused across calls so that
 * percentiles allocate nothing once it has grown to the largest window (1800 doubles for 30 min
 * at 1 s). Initialise with MC_SCRATCH_INIT, free with mc_scratch_release(). One thread at a time.
 */
struct mc_scratch {
    double *v;    /* the values of the last query, in no particular order */
    size_t n;     /* how many */
    size_t alloc; /* private */
};
/* clang-format off */
#define MC_SCRATCH_INIT { .v = NULL, .n = 0, .alloc = 0 }
/* clang-format on */
void mc_scratch_release(struct mc_scratch *s);

/* What a query found, over the pooled points (reference 2.2). */
struct mc_result {
    size_t count;     /* points matched, >= 1 */
    size_t series;    /* series that had at least one of them */
    double sum;       /* in series order, then time order */
    double avg;       /* sum / count */
    double last;      /* value of the newest point; on a tie the series created first wins */
    int64_t first_ms; /* oldest matched timestamp */
    int64_t last_ms;  /* newest matched timestamp */
};

/*
 * Pools the points of the selected series with start_ms <= ts <= end_ms. When scratch is not
 * NULL their values are copied into it for mc_percentile() (it grows as needed, and is then
 * reused). Returns 0; -ENODATA when no point matched (also when no series exists); -EINVAL for
 * an unknown kind or start_ms > end_ms. ret is written only on success, scratch always.
 */
int mc_query(struct mc *mc, const struct mc_select *sel, int64_t start_ms, int64_t end_ms,
             struct mc_scratch *scratch, struct mc_result *ret);

/*
 * Upstream's percentile of the values in s (filled by a successful mc_query()): the element at
 * index int(n x p) - 1, clamped to >= 0, of the values sorted ascending; no interpolation.
 * 0 < p <= 1 (upstream uses 0.5, 0.9, 0.95, 0.99). Runs a selection (quickselect) in place, which
 * reorders s->v; allocates nothing. s must hold at least one value.
 */
double mc_percentile(struct mc_scratch *s, double p);

/* last_ms - first_ms: the time range the matched points cover (upstream TimeRangeDuration). */
static inline int64_t mc_result_duration_ms(const struct mc_result *r)
{
    return r->last_ms - r->first_ms;
}

/*
 * The cold-start rule of the aggregated usages (reference 2.5): an entry for duration D is left
 * empty while the points cover less than half of it. Also true for r == NULL (no data).
 */
bool mc_result_is_cold(const struct mc_result *r, int64_t duration_ms);

struct mc_stats {
    size_t series;   /* live series */
    size_t owners;   /* live owners */
    size_t points;   /* points stored */
    size_t capacity; /* points the rings can hold */
    /*
     * Heap bytes the cache requested (malloc's own overhead excluded): the cache struct, both
     * tables' buckets, series headers and ids, owners, and capacity x MC_POINT_BYTES for the
     * rings. At most sizeof cache + sum over series of (capacity(kind) x MC_POINT_BYTES +
     * strlen(id) + strlen(owner) + MC_SERIES_OVERHEAD_MAX).
     */
    size_t bytes;
};
void mc_stats(struct mc *mc, struct mc_stats *ret);

#endif
