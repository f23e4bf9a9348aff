/*
 * ctrl-int: declarations shared by the ctrl module's files only. Each
 * reconciler file exposes one ctrl__<name>_register(), called by ctrl_new()
 * in the documented order.
 */
#ifndef CUEUE_CTRL_CTRL_INT_H
#define CUEUE_CTRL_CTRL_INT_H

#include "ctrl/ctrl.h"

void ctrl__gc_register(struct ctrl *c);
void ctrl__nodepool_register(struct ctrl *c);
void ctrl__job_register(struct ctrl *c);
void ctrl__rayjob_register(struct ctrl *c);
void ctrl__jobset_register(struct ctrl *c);
void ctrl__plainpod_register(struct ctrl *c); /* jobs/plainpod.c */
void ctrl__workload_register(struct ctrl *c);
void ctrl__scheduler_register(struct ctrl *c);
void ctrl__provisioning_register(struct ctrl *c);
void ctrl__autoscaler_register(struct ctrl *c);
void ctrl__binder_register(struct ctrl *c);
void ctrl__nodeagent_register(struct ctrl *c);
void ctrl__event_ttl_register(struct ctrl *c); /* event_ttl.c */
void ctrl__endpoints_register(struct ctrl *c);

/* The work the current round of ctrl_step did before its after_round hooks
 * (store events consumed, timers fired, queued keys reconciled); 0 when the
 * round found nothing, i.e. the step is about to settle unless a hook acts.
 * Lets a hook defer what only needs doing once the step has settled. */
int ctrl__round_work(struct ctrl *c);

/* ctrl_event's aggregation table (event.c): uthash of struct event_agg,
 * owned by c, touched only by event.c (its tables carry a Bloom filter, so
 * every uthash operation on them must be compiled there). */
struct event_agg;
struct event_agg **ctrl__events(struct ctrl *c);
/* Free every entry of *aggs (ctrl_free); *aggs becomes NULL. */
void ctrl__events_free(struct event_agg **aggs);

#endif
