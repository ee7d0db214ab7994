/*
 * informer/status.c — readiness, the status snapshot, and saying why an informer is not synced.
 *
 * Readiness is a latch plus a freshness test: `synced` is set once, by the reflector, after the
 * initial list was swapped into the store and the SYNCED markers were queued to the handlers; it
 * wakes kc_informer_wait_synced (condition variable on CLOCK_MONOTONIC) and makes the eventfd
 * readable (one write, never read back). `ready` additionally requires that the watch has not been
 * down longer than max_staleness_ms (disconnected_since is set on the first failure after a
 * success, cleared by the next successful list or watch event).
 *
 * Errors: every list/watch failure the reflector backs off from is recorded here (code, HTTP
 * status, Status reason, message, wall and monotonic time) with the number of failures in a row;
 * the next success ends the streak but keeps the record. The record feeds kc_informer_status,
 * /readyz?verbose, and the kc_error of a failed wait. A waiter also wakes on each failure: when
 * the initial list failed permanently (kc__inf_permanent) it returns that code at once instead of
 * running into its timeout.
 */
#include "informer/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool kc__inf_permanent(int code)
{
    return code == KC_ENOTFOUND || code == KC_EBADREQUEST || code == KC_EMETHOD;
}

/* Copy (truncated) with control characters as spaces: the text goes into one-line reports. */
static void copy_str(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
    for (char *p = dst; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
}

uint64_t kc__inf_note_failure(kc_informer *inf, int code, const kc_error *e)
{
    kc__inf_err le = {0};
    le.code = code ? code : KC_EIO;
    le.http_status = e ? e->http_status : 0;
    copy_str(le.reason, sizeof(le.reason), e ? e->reason : NULL);
    copy_str(le.message, sizeof(le.message), e && e->message ? e->message : kc_strerror(le.code));
    le.offset = e ? e->offset : -1;
    le.unix_ms = (int64_t)kc__wall_ms();
    le.mono_ns = kc__now_ns();
    pthread_mutex_lock(&inf->st_mu);
    inf->last_err = le;
    uint64_t n = ++inf->consecutive_errors;
    pthread_cond_broadcast(&inf->st_cv); /* waiters re-check: a permanent failure ends them */
    pthread_mutex_unlock(&inf->st_mu);
    if (inf->on_state)
        inf->on_state(inf->on_state_ud);
    return n;
}

void kc__inf_error_text(const kc_informer_status *st, kc__buf *b)
{
    kc__buf_append_str(b, kc_errno_name(st->last_error_code));
    if (st->last_error_http_status)
        kc__buf_printf(b, " (HTTP %d%s%s)", st->last_error_http_status,
                       st->last_error_reason[0] ? " " : "", st->last_error_reason);
    if (st->last_error_message[0])
        kc__buf_printf(b, ": %s", st->last_error_message);
    if (st->last_error_offset >= 0 && st->last_error_code)
        kc__buf_printf(b, " (at byte %lld)", (long long)st->last_error_offset);
}

/* ---- readiness ------------------------------------------------------------------------------ */

bool kc_informer_has_synced(kc_informer *inf)
{
    if (!inf)
        return false;
    pthread_mutex_lock(&inf->st_mu);
    bool s = inf->synced;
    pthread_mutex_unlock(&inf->st_mu);
    return s;
}

static bool ready_locked(kc_informer *inf, uint64_t now)
{
    if (!inf->synced || inf->stopping)
        return false;
    if (inf->o.max_staleness_ms <= 0 || inf->connected)
        return true;
    return now - inf->disconnected_since_ns <= (uint64_t)inf->o.max_staleness_ms * KC__NS_PER_MS;
}

bool kc_informer_ready(kc_informer *inf)
{
    if (!inf)
        return false;
    pthread_mutex_lock(&inf->st_mu);
    bool r = ready_locked(inf, kc__now_ns());
    pthread_mutex_unlock(&inf->st_mu);
    return r;
}

/* Not synced and the last failure, with nothing since, is permanent (st_mu held). */
static bool failed_permanently_locked(const kc_informer *inf)
{
    return !inf->synced && inf->consecutive_errors > 0 && kc__inf_permanent(inf->last_err.code);
}

/* err for a wait that ended with rc after waited_ms (st is a snapshot taken with the result). */
static int wait_error(kc_informer *inf, int rc, int64_t waited_ms, const kc_informer_status *st,
                      kc_error *err)
{
    if (!err)
        return rc;
    kc__buf b = KC__BUF_INIT(4096);
    kc__buf_printf(&b, "informer %s: ", inf->name);
    if (rc == KC_ESTOPPED)
        kc__buf_append_str(&b, "stopped before it synced");
    else if (rc == KC_ETIMEOUT)
        kc__buf_printf(&b, "not synced after %lld ms", (long long)waited_ms);
    else
        kc__buf_append_str(&b, rc == KC_ENOTFOUND ? "the server does not serve this resource"
                                                  : "the server rejected the initial list");
    if (st->last_error_code) {
        kc__buf_printf(&b, "; last error (%llu in a row, %.1f s ago): ",
                       (unsigned long long)st->consecutive_errors,
                       (double)st->last_error_age_ms / 1000.0);
        kc__inf_error_text(st, &b);
    } else if (rc == KC_ETIMEOUT) {
        kc__buf_append_str(&b, "; no error so far (the initial list is still in progress)");
    }
    kc_error_set(err, rc, "%s", b.data ? b.data : kc_strerror(rc));
    kc__buf_free(&b);
    if (st->last_error_code) {
        err->http_status = st->last_error_http_status;
        free(err->reason);
        err->reason = st->last_error_reason[0] ? kc__strdup(st->last_error_reason) : NULL;
        err->offset = st->last_error_offset;
    }
    return rc;
}

bool kc__inf_failed_permanently(kc_informer *inf)
{
    pthread_mutex_lock(&inf->st_mu);
    bool f = failed_permanently_locked(inf);
    pthread_mutex_unlock(&inf->st_mu);
    return f;
}

int kc_informer_wait_synced(kc_informer *inf, int64_t timeout_ms, kc_error *err)
{
    if (!inf)
        return kc_error_set(err, KC_EINVAL, "informer is NULL");
    uint64_t t0 = kc__now_ns();
    uint64_t deadline = kc__deadline_after_ms(timeout_ms);
    int rc = 0;
    pthread_mutex_lock(&inf->st_mu);
    while (!inf->synced) {
        if (inf->stopping) {
            rc = KC_ESTOPPED;
            break;
        }
        if (failed_permanently_locked(inf)) {
            rc = inf->last_err.code;
            break;
        }
        if (kc__cond_wait_until(&inf->st_cv, &inf->st_mu, deadline) == KC_ETIMEOUT) {
            rc = inf->synced ? 0 : KC_ETIMEOUT;
            break;
        }
    }
    if (rc == 0 && inf->stopping && !inf->synced)
        rc = KC_ESTOPPED;
    pthread_mutex_unlock(&inf->st_mu);
    if (rc == 0)
        return 0;
    kc_informer_status st;
    kc_informer_get_status(inf, &st);
    return wait_error(inf, rc, (int64_t)((kc__now_ns() - t0) / KC__NS_PER_MS), &st, err);
}

int kc_informer_sync_fd(kc_informer *inf)
{
    return inf ? inf->sync_fd : KC_EINVAL;
}

const char *kc_informer_phase_name(kc_informer_phase phase)
{
    switch (phase) {
    case KC_INFORMER_PHASE_NEW:
        return "new";
    case KC_INFORMER_PHASE_SYNCING:
        return "syncing";
    case KC_INFORMER_PHASE_SYNCED:
        return "synced";
    case KC_INFORMER_PHASE_RESYNCING:
        return "resyncing";
    case KC_INFORMER_PHASE_STOPPED:
        return "stopped";
    }
    return "unknown";
}

_Static_assert(KC_STORE_RV_MAX <= sizeof(((kc_informer_status *)0)->watermark),
               "kc_informer_status.watermark (a fixed 64, the ABI) must hold a store watermark");

void(kc_informer_get_status)(kc_informer *inf, kc_informer_status *ret, size_t ret_size)
{
    if (!ret)
        return;
    kc_informer_status st;
    memset(&st, 0, sizeof(st));
    st.last_error_offset = -1;
    if (!inf) {
        kc__result_copy(ret, ret_size, &st, sizeof st);
        return;
    }
    uint64_t now = kc__now_ns();
    pthread_mutex_lock(&inf->st_mu);
    st.phase = inf->phase;
    st.synced = inf->synced;
    st.ready = ready_locked(inf, now);
    st.connected = inf->connected;
    st.disconnected_ms = (inf->connected || !inf->started)
                             ? 0
                             : (int64_t)((now - inf->disconnected_since_ns) / KC__NS_PER_MS);
    st.last_sync_duration_s = inf->last_sync_s;
    st.streaming = inf->streaming;
    const kc__inf_err *le = &inf->last_err;
    st.last_error_code = le->code;
    st.last_error_http_status = le->http_status;
    memcpy(st.last_error_reason, le->reason, sizeof(st.last_error_reason));
    memcpy(st.last_error_message, le->message, sizeof(st.last_error_message));
    st.last_error_unix_ms = le->unix_ms;
    st.last_error_offset = le->code ? le->offset : -1;
    st.last_error_age_ms = le->code ? (int64_t)((now - le->mono_ns) / KC__NS_PER_MS) : 0;
    st.consecutive_errors = inf->consecutive_errors;
    st.server_sharding = inf->server_sharding;
    pthread_mutex_unlock(&inf->st_mu);
    st.objects = kc_store_len(inf->store);
    if (kc_store_watermark(inf->store, st.watermark, sizeof(st.watermark)) < 0)
        st.watermark[0] = '\0';
    st.relists = atomic_load(&inf->relists);
    st.watch_restarts = atomic_load(&inf->watch_restarts);
    st.events_applied = atomic_load(&inf->events_applied);
    st.bookmarks = atomic_load(&inf->bookmarks);
    st.errors = atomic_load(&inf->errors);
    st.events_dropped = atomic_load(&inf->events_dropped);
    st.lagging_handlers = kc__inf_lagging_count(inf);
    kc__result_copy(ret, ret_size, &st, sizeof st);
}

/* ---- the reflector's failures, logged ------------------------------------------------------- */

/* Failures in a row before they are logged at warning level (a lone failure is routine: a
 * dropped connection, a 429); then at most one warning per KC__WARN_EVERY_NS while they last. */
#define KC__WARN_AFTER    3
#define KC__WARN_EVERY_NS (60 * KC__NS_PER_SEC)

/* Say that the failure streak ended (after a warning: at info level). */
void kc__inf_streak_end(kc_informer *inf, kc__inf_streak *s)
{
    if (s->warned_ns)
        KC__LOG_INFO("informer", "informer %s: recovered after %llu failures", inf->name,
                     (unsigned long long)s->n);
    s->warned_ns = 0;
    s->n = 0;
}

static void log_failure(kc_informer *inf, kc__inf_streak *s, const char *what, uint64_t n,
                        bool permanent, uint64_t retry_ns)
{
    uint64_t now = kc__now_ns();
    bool warn = (permanent && n == 1) || n == KC__WARN_AFTER ||
                (s->warned_ns && now - s->warned_ns >= KC__WARN_EVERY_NS);
    kc_log_level level = warn ? KC_LOG_LEVEL_WARN : KC_LOG_LEVEL_DEBUG;
    if (!kc_log_enabled(level))
        return;
    if (warn)
        s->warned_ns = now;
    kc_informer_status st;
    kc_informer_get_status(inf, &st);
    kc__buf b = KC__BUF_INIT(4096);
    kc__inf_error_text(&st, &b);
    kc__log(level, "informer",
            "informer %s: %s failed%s%s (%llu in a row): %s; retrying in %llu ms", inf->name, what,
            permanent ? " permanently" : "",
            permanent ? " (waiters fail at once until it succeeds)" : "", (unsigned long long)n,
            b.data ? b.data : "error", (unsigned long long)(retry_ns / KC__NS_PER_MS));
    kc__buf_free(&b);
}

/* Record a failed list or watch: counters, the last error, the log (retrying in retry_ns). */
void kc__inf_record_failure(kc_informer *inf, kc__inf_streak *s, const char *what, int rc,
                            const kc_error *e, uint64_t retry_ns)
{
    atomic_fetch_add(&inf->errors, 1);
    kc__inf_set_connected(inf, false);
    uint64_t n = kc__inf_note_failure(inf, rc, e);
    s->n = n;
    bool permanent = kc__inf_permanent(rc) && !kc_informer_has_synced(inf);
    log_failure(inf, s, what, n, permanent, retry_ns);
}
