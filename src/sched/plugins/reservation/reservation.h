/*
 * The Reservation plugin's arguments (Koordinator ReservationArgs, reference scheduler.md 8.2),
 * shared with the Reservation controller that `koord scheduler` runs beside the plugin.
 */
#ifndef KOORD_SCHED_PLUGINS_RESERVATION_H
#define KOORD_SCHED_PLUGINS_RESERVATION_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

struct field_errors;

struct sched_reservation_args {
    bool enable_preemption;
    int32_t min_candidate_nodes_pct; /* 10 */
    int32_t min_candidate_nodes_abs; /* 100 */
    int32_t controller_workers;      /* 1 */
    int64_t gc_duration_s;           /* 86400 */
    int64_t gc_interval_s;           /* 60 */
    int64_t resync_interval_s;       /* 60 */
    bool disable_gc;
};

/*
 * Decodes args (NULL or {} = the defaults) into *ret, reporting each bad field under path into
 * errs. 0, or -EINVAL.
 */
int sched_reservation_args_decode(const cJSON *args, const char *path,
                                  struct sched_reservation_args *ret, struct field_errors *errs);

#endif
