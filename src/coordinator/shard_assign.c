/*
 * coordinator/shard_assign.c — the shard assignment state machine (spec A8–A13), pure: no Leases,
 * threads or clocks. Input: the last observation of the member and range Leases (holder, local
 * monotonic time of the last record change, L5), own identity and now. Output: one action per
 * range and the next time to step.
 *
 * One step:
 *   1. K check (A8): a range Lease recording another K → refuse for good: held ranges LOSE, no
 *      other act, ever.
 *   2. Live members (A9): a member Lease with a holder whose record changed within LD, plus self.
 *      The sorted set is compared with the previous step's: any change restarts the stability
 *      window (stable_since); a new identity also restarts the join window (last_join).
 *   3. Target: N live members, rank = self's index in the sorted set; target = floor(K/N), plus
 *      one for the first K mod N ranks. Targets sum to K, so they are floor/ceil (P1) and
 *      "below target" implies "below fair = ceil(K/N)" (A9, A10). A refinement of A10: with
 *      "acquire while below ceil" alone, 22/22/20 of K = 64 would be stable and unbalanced.
 *   4. Lose: a range we hold whose record names another holder (or none) — we were paused past
 *      LD and someone took it, or it was deleted — is LOSE at once (the gate closes, L10).
 *   5. Renew every held range; a draining range is renewed until idle, then RELEASE (A12).
 *   6. Drain (A12, A13): above target and membership stable for one RP → DRAIN the excess,
 *      highest indexes first (acquirers prefer the lowest, so the same ranges keep moving).
 *      Leaving (shutdown, A12): the target is 0, every held range drains at once.
 *   7. Acquire (A10): below target and no new member for one RP (so replicas starting together
 *      see each other before grabbing everything; a leave or crash does not wait) → ACQUIRE free
 *      ranges: no Lease, an empty holder, no record change for LD, or a holder that is us (our
 *      own earlier incarnation). Previously held ones first, then the lowest index.
 * The next step is at now + RP at the latest, earlier when an observed record would expire (the
 * A16 timer at observedTime + LD) or a stability window ends. The runtime adds the poll jitter.
 */
#include "coordinator/shard_internal.h"

#include <stdlib.h>
#include <string.h>

struct kc__shard_assign {
    uint32_t k;
    char *self;
    uint64_t ld, rp;
    uint8_t *mine; /* kc__shard_mine per range */
    uint8_t *prev; /* held before (A10 preference); cleared by a voluntary release */
    char **live;   /* sorted identities of the last step (borrowed from `ids`) */
    char *ids;     /* one buffer holding the live identities */
    size_t n_live;
    uint64_t stable_since, last_join;
    uint32_t target;
    bool started, refused, leaving;
};

kc__shard_assign *kc__shard_assign_new(uint32_t k, const char *identity, uint64_t ld_ms,
                                       uint64_t rp_ms)
{
    if (k == 0 || k > KC__SHARD_MAX_RANGES || (k & (k - 1)) != 0 || !identity || !*identity ||
        strlen(identity) >= KC__SHARD_ID_MAX || ld_ms == 0 || rp_ms == 0)
        return NULL;
    kc__shard_assign *a = calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    a->k = k;
    a->ld = ld_ms;
    a->rp = rp_ms;
    a->self = kc__strdup(identity);
    a->mine = calloc(k, 1);
    a->prev = calloc(k, 1);
    if (!a->self || !a->mine || !a->prev) {
        kc__shard_assign_free(a);
        return NULL;
    }
    return a;
}

void kc__shard_assign_free(kc__shard_assign *a)
{
    if (!a)
        return;
    free(a->self);
    free(a->mine);
    free(a->prev);
    free(a->live);
    free(a->ids);
    free(a);
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

static bool is_live_member(const kc__shard_member_obs *m, uint64_t now, uint64_t ld)
{
    return m->identity && *m->identity && now - m->observed_ms < ld;
}

/* Build the sorted live set (self included) into fresh arrays; false on out of memory. */
static bool live_set(const kc__shard_assign *a, const kc__shard_view *v, uint64_t now,
                     char ***ret_live, char **ret_ids, size_t *ret_n)
{
    size_t bytes = strlen(a->self) + 1, n = 1;
    for (size_t i = 0; i < v->n_members; i++)
        if (is_live_member(&v->members[i], now, a->ld)) {
            bytes += strnlen(v->members[i].identity, KC__SHARD_ID_MAX - 1) + 1;
            n++;
        }
    char **live = calloc(n, sizeof(*live));
    char *ids = malloc(bytes), *p = ids;
    if (!live || !ids) {
        free(live);
        free(ids);
        return false;
    }
    size_t m = 0;
    for (size_t i = 0; i <= v->n_members; i++) {
        const char *id = i == v->n_members ? a->self : v->members[i].identity;
        if (i < v->n_members && !is_live_member(&v->members[i], now, a->ld))
            continue;
        size_t len = strnlen(id, KC__SHARD_ID_MAX - 1);
        memcpy(p, id, len);
        p[len] = '\0';
        live[m++] = p;
        p += len + 1;
    }
    qsort(live, m, sizeof(*live), cmp_str);
    size_t u = 0; /* dedupe (self also has a member Lease) */
    for (size_t i = 0; i < m; i++)
        if (u == 0 || strcmp(live[u - 1], live[i]) != 0)
            live[u++] = live[i];
    *ret_live = live;
    *ret_ids = ids;
    *ret_n = u;
    return true;
}

static bool sorted_has(char **set, size_t n, const char *id)
{
    return bsearch(&id, set, n, sizeof(*set), cmp_str) != NULL;
}

/* Steps 2–3: membership windows and the target. */
static void update_membership(kc__shard_assign *a, char **live, char *ids, size_t n, uint64_t now)
{
    bool changed = !a->started || n != a->n_live, joined = !a->started;
    for (size_t i = 0; i < n; i++)
        if (!a->started || !sorted_has(a->live, a->n_live, live[i])) {
            changed = true;
            joined = true;
        }
    if (changed)
        a->stable_since = now;
    if (joined)
        a->last_join = now;
    a->started = true;
    free(a->live);
    free(a->ids);
    a->live = live;
    a->ids = ids;
    a->n_live = n;
    size_t rank = 0;
    while (rank < n && strcmp(live[rank], a->self) != 0)
        rank++;
    a->target = a->leaving ? 0 : (uint32_t)(a->k / n) + (rank < a->k % n ? 1u : 0u);
}

static bool holder_is(const kc__shard_range_obs *o, const char *id)
{
    return o->exists && o->holder && strcmp(o->holder, id) == 0;
}

static bool range_free(const kc__shard_assign *a, const kc__shard_range_obs *o, uint64_t now)
{
    return !o->exists || !o->holder || !*o->holder || holder_is(o, a->self) ||
           now - o->observed_ms >= a->ld;
}

static uint64_t refuse(kc__shard_assign *a, uint64_t now, kc__shard_act *acts)
{
    a->refused = true;
    for (uint32_t r = 0; r < a->k; r++) {
        acts[r] = a->mine[r] ? KC__SHARD_ACT_LOSE : KC__SHARD_ACT_NONE;
        a->mine[r] = KC__SHARD_NOT_HELD;
    }
    return now + a->rp;
}

/* Steps 4–5; returns the number of ranges held (not draining). */
static uint32_t lose_renew_release(kc__shard_assign *a, const kc__shard_view *v,
                                   kc__shard_act *acts)
{
    uint32_t held = 0;
    for (uint32_t r = 0; r < a->k; r++) {
        acts[r] = KC__SHARD_ACT_NONE;
        if (a->mine[r] == KC__SHARD_NOT_HELD)
            continue;
        if (!holder_is(&v->ranges[r], a->self)) {
            acts[r] = KC__SHARD_ACT_LOSE;
            a->mine[r] = KC__SHARD_NOT_HELD;
            continue;
        }
        if (a->mine[r] == KC__SHARD_HELD) {
            acts[r] = KC__SHARD_ACT_RENEW;
            held++;
        } else {
            acts[r] = !v->idle || v->idle[r] ? KC__SHARD_ACT_RELEASE : KC__SHARD_ACT_RENEW;
        }
    }
    return held;
}

/* Step 7: mark up to need free ranges ACQUIRE, previously held first, then lowest index. */
static void acquire(kc__shard_assign *a, const kc__shard_view *v, uint64_t now, uint32_t need,
                    kc__shard_act *acts)
{
    for (int pass = 0; pass < 2 && need > 0; pass++)
        for (uint32_t r = 0; r < a->k && need > 0; r++) {
            if (a->mine[r] != KC__SHARD_NOT_HELD || acts[r] != KC__SHARD_ACT_NONE)
                continue;
            if ((pass == 0) != (a->prev[r] != 0) || !range_free(a, &v->ranges[r], now))
                continue;
            acts[r] = KC__SHARD_ACT_ACQUIRE;
            need--;
        }
}

static uint64_t next_wake(const kc__shard_assign *a, const kc__shard_view *v, uint64_t now,
                          uint32_t held)
{
    uint64_t wake = now + a->rp;
    for (uint32_t r = 0; r < a->k; r++) {
        const kc__shard_range_obs *o = &v->ranges[r];
        if (a->mine[r] == KC__SHARD_NOT_HELD && !range_free(a, o, now))
            wake = o->observed_ms + a->ld < wake ? o->observed_ms + a->ld : wake;
    }
    for (size_t i = 0; i < v->n_members; i++)
        if (is_live_member(&v->members[i], now, a->ld) && v->members[i].observed_ms + a->ld < wake)
            wake = v->members[i].observed_ms + a->ld;
    if (held > a->target && a->stable_since + a->rp > now && a->stable_since + a->rp < wake)
        wake = a->stable_since + a->rp;
    if (held < a->target && a->last_join + a->rp > now && a->last_join + a->rp < wake)
        wake = a->last_join + a->rp;
    return wake > now ? wake : now + 1;
}

uint64_t kc__shard_assign_step(kc__shard_assign *a, const kc__shard_view *v, uint64_t now,
                               kc__shard_act *acts)
{
    if (a->refused)
        return refuse(a, now, acts);
    for (uint32_t r = 0; r < a->k; r++)
        if (v->ranges[r].exists && v->ranges[r].k != 0 && v->ranges[r].k != a->k)
            return refuse(a, now, acts);
    char **live = NULL, *ids = NULL;
    size_t n = 0;
    if (live_set(a, v, now, &live, &ids, &n))
        update_membership(a, live, ids, n, now);
    /* else: out of memory, keep the previous membership and target */
    uint32_t held = lose_renew_release(a, v, acts);
    if (held > a->target && (a->leaving || now - a->stable_since >= a->rp)) {
        uint32_t excess = held - a->target;
        for (uint32_t r = a->k; r-- > 0 && excess > 0;)
            if (a->mine[r] == KC__SHARD_HELD) {
                acts[r] = KC__SHARD_ACT_DRAIN;
                a->mine[r] = KC__SHARD_DRAINING;
                excess--;
            }
        held = a->target;
    } else if (held < a->target && now - a->last_join >= a->rp) {
        acquire(a, v, now, a->target - held, acts);
    }
    return next_wake(a, v, now, held);
}

void kc__shard_assign_leave(kc__shard_assign *a)
{
    if (a) {
        a->leaving = true;
        a->target = 0;
    }
}

bool kc__shard_assign_none_held(const kc__shard_assign *a)
{
    for (uint32_t r = 0; a && r < a->k; r++)
        if (a->mine[r] != KC__SHARD_NOT_HELD)
            return false;
    return true;
}

void kc__shard_assign_report(kc__shard_assign *a, uint32_t r, kc__shard_act act, bool ok)
{
    if (!a || r >= a->k)
        return;
    switch (act) {
    case KC__SHARD_ACT_ACQUIRE:
        if (ok && !a->refused) {
            a->mine[r] = KC__SHARD_HELD;
            a->prev[r] = 1;
        }
        break;
    case KC__SHARD_ACT_RELEASE:
        a->mine[r] = KC__SHARD_NOT_HELD;
        a->prev[r] = 0; /* given away on purpose: do not prefer it back */
        break;
    case KC__SHARD_ACT_LOSE:
        a->mine[r] = KC__SHARD_NOT_HELD; /* prev kept: take it back first when free */
        break;
    default:
        break;
    }
}

kc__shard_mine kc__shard_assign_mine(const kc__shard_assign *a, uint32_t r)
{
    return a && r < a->k ? (kc__shard_mine)a->mine[r] : KC__SHARD_NOT_HELD;
}

uint32_t kc__shard_assign_held(const kc__shard_assign *a)
{
    uint32_t n = 0;
    for (uint32_t r = 0; a && r < a->k; r++)
        n += a->mine[r] == KC__SHARD_HELD;
    return n;
}

uint32_t kc__shard_assign_target(const kc__shard_assign *a)
{
    return a ? a->target : 0;
}

uint32_t kc__shard_assign_live(const kc__shard_assign *a)
{
    return a ? (uint32_t)a->n_live : 0;
}

bool kc__shard_assign_refused(const kc__shard_assign *a)
{
    return a && a->refused;
}
