/*
 * kcache/leader.h — kc_leader_elector: leader election on a coordination.k8s.io/v1 Lease, as
 * client-go's tools/leaderelection (spec §3, L1–L12), plus a self-fence (kcache/fence.h).
 *
 * One thread per elector. It tries to acquire the Lease every RP with jitter (each wait in
 * [RP, 2.2·RP], L7); once it holds it, it renews every RP. Expiry of someone else's Lease is
 * judged from the local monotonic time its record was seen to change (L5), never from renewTime.
 * Every successful acquire or renew moves the elector's fence to t_send + RD (L12a: t_send read
 * before the request). Leadership is lost when the fence passes without a successful renew, or
 * when a renew finds another holder; the run then ends (as client-go's Run): the fence is closed,
 * gated controllers (kc_controller_opts.leader_elector) are switched off, on_stopped_leading runs.
 * kc_leader_elector_start may start a new run afterwards.
 *
 * Bounds (docs/leader-election.md): a cut-off leader stops at most RD after the send of its last
 * successful renew — at the fence, even if its renew thread is stuck or paused, since the fence is
 * a clock deadline — while the others wait LD after they observed that renew; the margin is at
 * least LD − RD − RP.
 *
 * L10 differs from the spec's SHOULD: on loss the library stops guarded work at once (fence,
 * gates, callback) but does not end the process unless asked (exit_on_loss). A caller that keeps
 * the process must make sure every worker honours the fence (the cached client and the
 * controller do).
 *
 * Thread-safety: kc_leader_elector_start, _stop and _free are called from one controlling thread
 * (not from a callback); every other function from any thread. Callbacks run on the elector's
 * thread, one at a time; they must return quickly (start work in threads of your own) and must
 * not call start, stop or free.
 */
#ifndef KCACHE_LEADER_H
#define KCACHE_LEADER_H

#include "client.h"
#include "event.h"
#include "fence.h"

#include <unistd.h>

KC_BEGIN_DECLS

typedef struct kc_leader_elector kc_leader_elector;

/* Defaults (spec L6: client-go's and controller-runtime's). */
#define KC_LEADER_DEFAULT_LEASE_DURATION_MS 15000
#define KC_LEADER_DEFAULT_RENEW_DEADLINE_MS 10000
#define KC_LEADER_DEFAULT_RETRY_PERIOD_MS   2000

/* Options. Zero-initialised means the defaults. Strings copied. */
typedef struct kc_leader_elector_opts {
    const char *ns;       /* Lease namespace; NULL or "" = the client's default namespace */
    const char *name;     /* Lease name; required */
    const char *identity; /* holderIdentity; NULL = "<hostname>_<pid>_<16 hex digits>" */
    /* LD, RD, RP in ms; 0 = the defaults. Required: all > 0, LD > RD, RD > 1.2·RP (L6). */
    int64_t lease_duration_ms, renew_deadline_ms, retry_period_ms;
    /* L8. started: leadership was gained (fence open, gates on). stopped: the run ended —
     * always once per run, even when this replica never led. new_leader: a newly observed
     * holder, the first one included (identity borrowed for the call). Any may be NULL. */
    void (*on_started_leading)(void *ud, kc_leader_elector *el);
    void (*on_stopped_leading)(void *ud, kc_leader_elector *el);
    void (*on_new_leader)(void *ud, kc_leader_elector *el, const char *identity);
    void *ud; /* borrowed */
    /* L9: when stopped while leading, write holder "", leaseDurationSeconds 1 (retrying on
     * conflict for at most RD) so another replica can take over at once. Guarded work must be
     * stopped by then: the fence and the gates close first. */
    bool release_on_stop;
    /* L10 opt-in: on loss of leadership (not on stop), after on_stopped_leading, log at error
     * level, flush stdio and call exit_on_loss(exit_code) (exit_code 0 → 1). Set it to
     * kc_leader_exit_process (below: _exit) or your own function. NULL (the default): the process
     * lives on — the library never ends the process unasked (and never links _exit itself). A
     * function that returns ends the run as if it were NULL. */
    void (*exit_on_loss)(int code);
    int exit_code;
    /* L2: coordinated leader election (KEP-4355): never acquire, renew only while holder. */
    bool coordinated;
    /* (appended) L8: record the Lease's "became leader" and "stopped leading" Events (type
     * Normal, reason LeaderElection, message "<identity> became leader", as client-go's lock)
     * through this recorder (kcache/event.h; borrowed: must outlive the elector). NULL = none. */
    kc_event_recorder *events;
} kc_leader_elector_opts;

/*
 * New elector over client (borrowed: must outlive the elector). Starts nothing. Errors:
 * KC_EINVAL (NULL client/opts/ret, no name, bad timings: err names the rule), KC_EUNSUPPORTED (a
 * field this library does not know is set: docs/abi.md), KC_ENOMEM. opts are copied (ud and the
 * recorder borrowed, as marked). *ret is new — caller frees with kc_leader_elector_free.
 * Thread-safe. The macro passes sizeof(kc_leader_elector_opts). Since 0.1.
 */
KC_API int(kc_leader_elector_new)(kc_client *client, const kc_leader_elector_opts *opts,
                                  size_t opts_size, kc_leader_elector **ret, kc_error *err);
#define kc_leader_elector_new(client, opts, ret, err)                                              \
    (kc_leader_elector_new)((client), (opts), sizeof(kc_leader_elector_opts), (ret), (err))

/* Start a run (the elector's thread). Errors: KC_EINVAL (NULL), KC_EBUSY (a run is going on, or
 * called from the elector's own callback), KC_ENOMEM / KC_EIO (no thread). A run that ended or is
 * ending (a loss: on_stopped_leading may have been called or be running) is joined first — start
 * waits for its callbacks to return — so start may follow stopped at once. No ownership transfer.
 * Not thread-safe: from the one controlling thread, as stop and free. Since 0.1. */
KC_API int kc_leader_elector_start(kc_leader_elector *el, kc_error *err);

/* End the run: if leading, close the fence and the gates, release when asked (L9); then
 * on_stopped_leading (if the run had not ended already) and join the thread. Idempotent; 0 also
 * when never started. Errors: KC_EINVAL for NULL. Must not be called from a callback. No ownership
 * transfer. Not thread-safe: from the one controlling thread, as start and free. Since 0.1. */
KC_API int kc_leader_elector_stop(kc_leader_elector *el);

/* Stop if needed and free. The fence goes with it: detach it from cached clients first (or free
 * them first). el is consumed. Accepts NULL. Not thread-safe: from the one controlling thread, not
 * from a callback. Never fails. Since 0.1. */
KC_API void kc_leader_elector_free(kc_leader_elector *el);

/* Whether this replica leads now: the fence is valid (false for NULL). No ownership transfer.
 * Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_leader_elector_is_leader(kc_leader_elector *el);

/* The last observed holder: *ret new malloc'd ("" when none or nothing observed yet) — caller
 * frees. Errors: KC_EINVAL (NULL), KC_ENOMEM. Thread-safe. Since 0.1. */
KC_API int kc_leader_elector_leader(kc_leader_elector *el, char **ret);

/* This elector's identity (borrowed: valid until free). NULL for NULL. Thread-safe. Never fails.
 * Since 0.1. */
KC_API const char *kc_leader_elector_identity(kc_leader_elector *el);

/* The elector's fence (borrowed: valid until free), to attach to cached clients
 * (kc_cached_client_opts.fence). NULL for NULL. Thread-safe. Never fails. Since 0.1. */
KC_API kc_fence *kc_leader_elector_fence(kc_leader_elector *el);

/*
 * Prometheus text of the L11 metrics, for kc_health_add_metrics_source(h,
 * kc_leader_elector_metrics_render, el): leader_election_master_status{name="<lease>"} (0/1)
 * and leader_election_slowpath_total{name="<lease>"} (renewals that needed a Get first). ud is
 * the elector (borrowed for the call). New malloc'd string (caller frees). Errors: NULL on NULL or
 * out of memory. Thread-safe. Since 0.1.
 */
KC_API char *kc_leader_elector_metrics_render(void *ud);

/* For kc_leader_elector_opts.exit_on_loss: _exit(code), no atexit handlers (L10: a stale leader
 * must not run more code). Inline, so the call lives in the program that asks for it. */
static inline void kc_leader_exit_process(int code)
{
    _exit(code);
}

KC_END_DECLS

#endif
