/*
 * informer/backoff.h — the reflector's decisions, as pure functions (backoff.c): what one watch
 * event means for the stream, and what to do after a LIST or WATCH ended — relist or not, and how
 * long to wait before the next request. No clock, no lock, no I/O: the reflector passes the times
 * in, so tests/fuzz/fuzz_reflector.c drives the same code on a virtual clock and checks the
 * request budget (issue 29 points 1, 2, 3 and 13).
 *
 * The policy (client-go's reflector backoff manager is the anchor: 800 ms initial, 30 s cap,
 * factor 2, jitter 1.0, reset after 2 min without a step):
 *   - Every restart after a LIST or WATCH that ended early goes through one backoff step, whatever
 *     it ended with: a clean close (after any number of events or bookmarks), a network error, a
 *     429 or 5xx, a 410 Expired / ResourceVersionTooLarge ERROR event, an event or bookmark older
 *     than the resume RV, a failed list. A step waits jitter(initial × 2^k) capped at max, k the
 *     steps since the last reset; k resets when the previous step is older than reset_ns.
 *   - A healthy watch restarts at once, also when it ended with a 410 (the normal relist after
 *     compaction, as client-go's): healthy = it lasted at least its own timeoutSeconds (the server
 *     ended it on schedule) or reset_ns. One request per healthy period cannot hot-loop.
 *   - A list at the last RV (after a 410) answered 410 / too large / older than the watermark is
 *     retried at "" (a consistent read) at once, once: the next failure of that list steps.
 *   - A list that succeeded goes on to its watch at once; it does not reset the backoff (a server
 *     that fails every watch at once must not get LIST+WATCH at full speed).
 *   - Retry-After is honoured as a lower bound of the step, capped at max_ns (a hostile
 *     "Retry-After: 999999" waits backoff_max_ms, 30 s by default, not 11 days).
 *   - A cancelled call (stop, a shard range change) is not the server's doing: no step.
 * So between two steps (each >= initial_ns apart) or healthy watches there are at most
 * KC__BACKOFF_FREE_MAX calls: LIST at RV, LIST at "", WATCH. (A streaming list the server
 * rejects falls back to a paged LIST within the same call: at most two requests per list call.)
 */
#ifndef KC_INFORMER_BACKOFF_H
#define KC_INFORMER_BACKOFF_H

#include "core/internal.h"
#include "kcache/client.h"

#include <stdbool.h>
#include <stdint.h>

/* Requests at most between two backoff steps or healthy watches (see the policy above). */
#define KC__BACKOFF_FREE_MAX 3

typedef struct kc__backoff {
    uint64_t initial_ns, max_ns, reset_ns;
    unsigned steps;        /* steps since the last reset */
    uint64_t last_step_ns; /* when the last step was taken; 0 = never */
    kc__rng rng;
} kc__backoff;

/* ms values > 0 (the informer's opts after defaults; values < 1 ms are taken as 1 ms, and max
 * below initial as initial). */
void kc__backoff_init(kc__backoff *b, int64_t initial_ms, int64_t max_ms, int64_t reset_ms,
                      uint64_t seed);
/* One step at now_ns: the delay before the next request, in [base, 2 × base) capped at max_ns
 * (base = initial × 2^k capped at max), at least min(retry_after_s, max) when retry_after_s > 0. */
uint64_t kc__backoff_step(kc__backoff *b, uint64_t now_ns, int64_t retry_after_s);

/* How a LIST or WATCH call ended. */
typedef enum kc__refl_end {
    KC__END_OK = 0,   /* list: complete; watch: a clean close of the stream */
    KC__END_GONE,     /* 410 Expired (status or ERROR event) */
    KC__END_RV_BACK,  /* ResourceVersionTooLarge, an event or bookmark older than the resume RV,
                         a list RV older than the watermark: the server went back in time */
    KC__END_ERROR,    /* anything else: network, 429, 5xx, parse errors, rejections */
    KC__END_CANCELED, /* stop or a shard range change */
} kc__refl_end;

typedef struct kc__refl_result {
    bool list;       /* a list (paged, or a streaming list before its bookmark); else a watch */
    bool list_at_rv; /* the list was asked at the last RV (after a 410) */
    kc__refl_end end;
    uint64_t started_ns; /* the call's start and end (the reflector's clock) */
    uint64_t ended_ns;
    uint64_t timeout_ns;   /* a watch's timeoutSeconds; 0 = unknown */
    int64_t retry_after_s; /* the server's Retry-After; <= 0 = none */
} kc__refl_result;

typedef struct kc__refl_next {
    uint64_t delay_ns; /* wait this long before the next request (0: at once) */
    bool need_list;    /* the next request is a list */
    bool list_at_rv;   /* ... at the last RV with NotOlderThan (else at "") */
    bool stepped;      /* the delay is a backoff step */
} kc__refl_next;

/* The end of a call that returned rc (0, KC_ECANCELED / KC_ESTOPPED, KC_EGONE,
 * KC_ERV_TOO_LARGE, anything else). */
kc__refl_end kc__refl_end_of(int rc);

/* What to do after the call r ended (steps b when it backs off). */
kc__refl_next kc__refl_decide(kc__backoff *b, const kc__refl_result *r);

/* What one watch event means for the stream. */
typedef enum kc__ev_verdict {
    KC__EV_APPLY = 0,    /* apply it to the store (or the streaming list's batch) */
    KC__EV_SKIP,         /* nothing to do (a bookmark inside the initial events) */
    KC__EV_BOOKMARK,     /* move the resume RV (and the store's watermark) to the bookmark's */
    KC__EV_INITIAL_END,  /* the streaming list is complete: install the batch */
    KC__EV_STOP_GONE,    /* end the stream: 410 */
    KC__EV_STOP_RV_BACK, /* end the stream: the server went back in time */
    KC__EV_STOP_ERROR,   /* end the stream: another ERROR event, a DELETED in the initial events,
                            an unknown type */
} kc__ev_verdict;

/* The code of an ERROR event's Status (e NULL: KC_ESERVER): KC_EGONE for 410, KC_ERV_TOO_LARGE
 * for a 504 whose Status says "Too large resource version" (cause ResourceVersionTooLarge: the
 * server is behind our RV, it went back in time), else its code. Also classifies a LIST's HTTP
 * error the same way. */
int kc__refl_error_code(const kc_error *e);

/* initial: before the initial-events-end bookmark of a streaming list; resume_rv: the RV the
 * watch resumed from ("" when none); rv: the event object's ("" or NULL when none); error_code:
 * an ERROR event's code as stream_error_code classified it (KC_EGONE, KC_ERV_TOO_LARGE, …). */
kc__ev_verdict kc__refl_classify(bool initial, int type, const char *resume_rv, const char *rv,
                                 bool initial_events_end, int error_code);

#endif
