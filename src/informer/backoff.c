/*
 * informer/backoff.c — the reflector's decisions as pure functions (backoff.h has the policy): the
 * backoff step, what to do after a LIST or WATCH ended, and what one watch event means. The
 * reflector (reflector.c) feeds them its clock and sleeps what they say; fuzz_reflector.c feeds
 * them a virtual clock and arbitrary outcomes and checks the request budget.
 */
#include "informer/backoff.h"

#include "kcache/rv.h"

#include <string.h>

void kc__backoff_init(kc__backoff *b, int64_t initial_ms, int64_t max_ms, int64_t reset_ms,
                      uint64_t seed)
{
    memset(b, 0, sizeof(*b));
    b->initial_ns = (uint64_t)(initial_ms > 0 ? initial_ms : 1) * KC__NS_PER_MS;
    b->max_ns = (uint64_t)(max_ms > 0 ? max_ms : 1) * KC__NS_PER_MS;
    if (b->max_ns < b->initial_ns)
        b->max_ns = b->initial_ns;
    b->reset_ns = (uint64_t)(reset_ms > 0 ? reset_ms : 1) * KC__NS_PER_MS;
    kc__rng_seed(&b->rng, seed);
}

uint64_t kc__backoff_step(kc__backoff *b, uint64_t now_ns, int64_t retry_after_s)
{
    if (b->last_step_ns && now_ns - b->last_step_ns > b->reset_ns)
        b->steps = 0;
    b->last_step_ns = now_ns ? now_ns : 1;
    uint64_t base = b->initial_ns;
    for (unsigned i = 0; i < b->steps && base < b->max_ns; i++)
        base *= 2;
    if (base >= b->max_ns)
        base = b->max_ns; /* k stops growing at the cap */
    else
        b->steps++;
    uint64_t d = kc__rng_jitter(&b->rng, base, 1.0);
    if (d > b->max_ns)
        d = b->max_ns;
    if (retry_after_s > 0) { /* honoured, but never longer than the cap */
        uint64_t ra = (uint64_t)retry_after_s > b->max_ns / KC__NS_PER_SEC
                          ? b->max_ns
                          : (uint64_t)retry_after_s * KC__NS_PER_SEC;
        if (ra > d)
            d = ra;
    }
    return d;
}

/* The watch lasted its own timeoutSeconds (the server ended it on schedule) or the reset period. */
static bool healthy_watch(const kc__backoff *b, const kc__refl_result *r)
{
    uint64_t ran = r->ended_ns > r->started_ns ? r->ended_ns - r->started_ns : 0;
    uint64_t enough = b->reset_ns;
    if (r->timeout_ns && r->timeout_ns < enough)
        enough = r->timeout_ns;
    return ran >= enough;
}

kc__refl_next kc__refl_decide(kc__backoff *b, const kc__refl_result *r)
{
    kc__refl_next n = {.need_list = r->list, .list_at_rv = r->list && r->list_at_rv};
    bool at_once = false;
    switch (r->end) {
    case KC__END_CANCELED:
        return n; /* stop or a range change: not the server's doing */
    case KC__END_OK:
        n.need_list = false;
        n.list_at_rv = false;
        at_once = r->list; /* a list goes on to its watch */
        break;
    case KC__END_GONE:
    case KC__END_RV_BACK:
        n.need_list = true;
        /* a 410 relists at the last RV; a list there that failed the same way retries at "" at
         * once; the server going back in time relists from scratch */
        n.list_at_rv = !r->list && r->end == KC__END_GONE;
        at_once = r->list && r->list_at_rv;
        break;
    case KC__END_ERROR:
        break;
    }
    if (!r->list && healthy_watch(b, r))
        at_once = true;
    if (!at_once) {
        n.delay_ns = kc__backoff_step(b, r->ended_ns, r->retry_after_s);
        n.stepped = true;
    }
    return n;
}

/* The code of an ERROR event. A 504 whose Status says "Too large resource version" (cause
 * ResourceVersionTooLarge) means the server is behind our RV: it went back in time. */
int kc__refl_error_code(const kc_error *e)
{
    if (!e)
        return KC_ESERVER;
    if (e->code == KC_ERV_TOO_LARGE || e->code == KC_EGONE)
        return e->code;
    bool too_large = e->message && strstr(e->message, "Too large resource version");
    for (size_t i = 0; !too_large && i < e->n_causes; i++)
        too_large =
            e->causes[i].reason && strcmp(e->causes[i].reason, "ResourceVersionTooLarge") == 0;
    if (too_large || (e->reason && strcmp(e->reason, "ResourceVersionTooLarge") == 0))
        return KC_ERV_TOO_LARGE;
    if (e->http_status == 410)
        return KC_EGONE;
    return e->code ? e->code : KC_ESERVER;
}

kc__refl_end kc__refl_end_of(int rc)
{
    switch (rc) {
    case 0:
        return KC__END_OK;
    case KC_ECANCELED:
    case KC_ESTOPPED:
        return KC__END_CANCELED;
    case KC_EGONE:
        return KC__END_GONE;
    case KC_ERV_TOO_LARGE:
        return KC__END_RV_BACK;
    default:
        return KC__END_ERROR;
    }
}

kc__ev_verdict kc__refl_classify(bool initial, int type, const char *resume_rv, const char *rv,
                                 bool initial_events_end, int error_code)
{
    bool went_back =
        resume_rv && resume_rv[0] && rv && rv[0] && kc_rv_compare(rv, resume_rv) == KC_RV_LESS;
    switch (type) {
    case KC_WATCH_ERROR:
        if (error_code == KC_EGONE)
            return KC__EV_STOP_GONE;
        return error_code == KC_ERV_TOO_LARGE ? KC__EV_STOP_RV_BACK : KC__EV_STOP_ERROR;
    case KC_WATCH_BOOKMARK:
        if (initial)
            return initial_events_end ? KC__EV_INITIAL_END : KC__EV_SKIP;
        return went_back ? KC__EV_STOP_RV_BACK : KC__EV_BOOKMARK;
    case KC_WATCH_ADDED:
    case KC_WATCH_MODIFIED:
    case KC_WATCH_DELETED:
        if (initial) /* a DELETED is not part of a streaming list's initial state */
            return type == KC_WATCH_DELETED ? KC__EV_STOP_ERROR : KC__EV_APPLY;
        return went_back ? KC__EV_STOP_RV_BACK : KC__EV_APPLY;
    }
    return KC__EV_STOP_ERROR;
}
