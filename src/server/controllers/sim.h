/*
 * sim.h — the simulated cluster of the embedded API server (kc_server_opts.simulate_nodes,
 * `kcache serve --simulate-nodes N`): nodes with leases, a scheduler, a kubelet and the workload
 * controllers (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job) on one thread of their own
 * (sim.c). server.c starts and stops it.
 */
#ifndef KC_SERVER_SIM_H
#define KC_SERVER_SIM_H

#include "server/storage/write.h"

/* Start the simulation thread when srv->opts.simulate_nodes > 0 (0 and nothing done otherwise).
 * Errors: KC_ENOMEM. Call once, mu NOT held. */
int kc__sim_start(kc_server *srv, kc_error *err);
/* Stop and join the thread (mu NOT held); idempotent, safe when never started. */
void kc__sim_stop(kc_server *srv);

#endif
