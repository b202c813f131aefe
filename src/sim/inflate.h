/*
 * Workload inflation (issue 19 §2, docs/sim.md "Inflating a trace"): the openb trace is a
 * scheduling trace of a GPU cluster, not a utilisation trace. Replayed by its timestamps it keeps
 * about 19 pods running on 1,523 nodes (0.3 % of the fleet's CPU), and there is nothing to
 * colocate. Its authors replay it the other way ("Beware of Fragmentation", USENIX ATC '23):
 * pods drawn from the trace are submitted until the cluster is full. This does the same for a
 * colocation question, and turns a trace into the workload colocation is for:
 *
 *  - LS services that reserve most of the fleet: the trace's LS pods, in trace order, repeated
 *    as often as needed (a repeat is a replica: "<name>-c<k>"), all created at time 0 and
 *    running to the end, until their CPU requests reach ls_fill of the fleet's CPU (the last
 *    one may pass it by less than its own request);
 *  - a stream of BE jobs: the trace's BE pods, in trace order, repeated the same way, arriving
 *    as a Poisson process whose rate offers be_load of the fleet's CPU as BE work (request x
 *    run time) per second, each running its trace run time (deletion - creation) x be_stretch,
 *    for span_s trace seconds. The arrival times are a pure function of the seed.
 *
 * The result is an ordinary trace (pods sorted by creation time, span_s = the span asked
 * for): both runs of a replay get the same work, and what differs is where it can run.
 */
#ifndef KOORD_SIM_INFLATE_H
#define KOORD_SIM_INFLATE_H

#include <stddef.h>
#include <stdint.h>

struct sim_trace;
struct strbuf;

struct sim_inflate_opts {
    double ls_fill;    /* LS CPU requests, fraction of the fleet's CPU; 0: no LS pods */
    double be_load;    /* BE CPU work offered per second, fraction of the fleet's CPU; 0: none */
    double be_stretch; /* BE run times x this (> 0) */
    double span_s;     /* trace seconds of the result (> 0) */
    uint64_t seed;     /* the arrival process */
    size_t max_pods;   /* the most pods of the result: SIM_TRACE_MAX_PODS (what a trace may
                        * hold) by default, lower in tests of the limit */
};

/* The options with a range, the fractions and factors of struct sim_inflate_opts. */
enum sim_inflate_opt {
    SIM_INFLATE_LS_FILL,
    SIM_INFLATE_BE_LOAD,
    SIM_INFLATE_BE_STRETCH,
    SIM_INFLATE_SPAN,
    SIM_INFLATE_NOPTS,
};

/* The defaults (docs/sim.md says why each is what it is). */
void sim_inflate_defaults(struct sim_inflate_opts *o);

/*
 * The ranges of the options live here only: sim_trace_inflate() checks them, and so do the
 * flags of `koord sim --inflate` as they are read (naming the flag). sim_inflate_set() sets
 * option `which` of o to v: 0, or -EINVAL with o unchanged when v is out of its range, which
 * sim_inflate_range() says in words that follow "must be" ("a fraction in [0, 1]").
 */
int sim_inflate_set(struct sim_inflate_opts *o, enum sim_inflate_opt which, double v);
const char *sim_inflate_range(enum sim_inflate_opt which);

/*
 * Replaces t's pods by the inflated workload drawn from them (t's nodes give the fleet's CPU).
 * 0; -EINVAL with why in err (an option out of its range, no LS pod to fill with, no BE pod
 * with a run time to draw from); -E2BIG when the result would pass max_pods (for the
 * BE stream err gives the count: lower be_load or span_s, or raise be_stretch; the LS fill is
 * refused at the pod past the limit). t is unchanged on failure.
 */
int sim_trace_inflate(struct sim_trace *t, const struct sim_inflate_opts *o, struct strbuf *err);

#endif
