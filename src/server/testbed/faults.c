/*
 * faults.c — fault injection state of the embedded API server.
 *
 * Design: one mutex (mu) guards the kc_server_faults in force, a xoshiro PRNG (core/internal.h)
 * and a change sequence number. Every question (inject? delay? close?) takes mu, draws at most
 * one or two numbers and answers; nothing blocks. A single change listener (the watch hub) is
 * told about every kc__faults_set after mu is released; a second mutex (notify_mu) serialises
 * those calls with listener changes, so removing the listener waits for a call in flight and
 * notifications arrive in order. Lock order: notify_mu → (listener's own lock); mu is a leaf.
 * The hub uses the listener to wake watchers held back by the stall fault without polling.
 *
 * Injection draws one uniform number per request: [0, r429) → 429, [r429, r429+r500) → 500,
 * [.., +r503) → 503, else no fault. 429 and 503 carry Retry-After when retry_after_s > 0; an
 * injected 500 never does (clients must surface it, spec §9 #98).
 *
 * The text and JSON forms (CLI flags, admin endpoint) are parsed here too, so the CLI and the
 * admin endpoint share one grammar; the text forms are public (kc_server_duration_parse,
 * kc_server_faults_parse in include/kcache/server.h), which is how the CLI reaches them.
 */
#include "server/testbed/faults.h"

#include "core/internal.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct kc__faults {
    pthread_mutex_t mu;        /* guards cur, rng, seq */
    pthread_mutex_t notify_mu; /* serialises listener calls and listener changes */
    kc_server_faults cur;
    kc__rng rng;
    uint64_t seq;
    kc__faults_listener_fn listener;
    void *listener_ud;
};

/* The rate arrays have a fixed dimension (the ABI), with room for every verb. */
_Static_assert(KC_SERVER_VERB__COUNT <= KC_SERVER_FAULT_VERBS &&
                   sizeof(((kc_server_faults *)0)->rate_429) ==
                       KC_SERVER_FAULT_VERBS * sizeof(double),
               "kc_server_faults.rate_* must hold every kc_server_verb");

static const char *const verb_names[KC_SERVER_VERB__COUNT] = {
    [KC_SERVER_VERB_GET] = "get",       [KC_SERVER_VERB_LIST] = "list",
    [KC_SERVER_VERB_WATCH] = "watch",   [KC_SERVER_VERB_CREATE] = "create",
    [KC_SERVER_VERB_UPDATE] = "update", [KC_SERVER_VERB_PATCH] = "patch",
    [KC_SERVER_VERB_DELETE] = "delete", [KC_SERVER_VERB_DELETECOLLECTION] = "deletecollection",
};

const char *kc__verb_name(kc_server_verb verb)
{
    return (unsigned)verb < KC_SERVER_VERB__COUNT ? verb_names[verb] : "?";
}

int kc__verb_parse(const char *name, size_t len)
{
    for (int i = 0; i < KC_SERVER_VERB__COUNT; i++)
        if (strlen(verb_names[i]) == len && !strncasecmp(name, verb_names[i], len))
            return i;
    return KC_EINVAL;
}

/* ---- state ----------------------------------------------------------------------------------- */

kc__faults *kc__faults_new(const kc_server_faults *init, uint64_t seed)
{
    kc__faults *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    if (pthread_mutex_init(&f->mu, NULL)) {
        free(f);
        return NULL;
    }
    if (pthread_mutex_init(&f->notify_mu, NULL)) {
        pthread_mutex_destroy(&f->mu);
        free(f);
        return NULL;
    }
    if (init)
        f->cur = *init;
    if (seed)
        kc__rng_seed(&f->rng, seed);
    else
        kc__rng_seed_auto(&f->rng);
    return f;
}

void kc__faults_free(kc__faults *f)
{
    if (!f)
        return;
    pthread_mutex_destroy(&f->notify_mu);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

void kc__faults_set(kc__faults *f, const kc_server_faults *faults)
{
    kc_server_faults copy = *faults;
    pthread_mutex_lock(&f->notify_mu);
    pthread_mutex_lock(&f->mu);
    f->cur = copy;
    uint64_t seq = ++f->seq;
    pthread_mutex_unlock(&f->mu);
    if (f->listener)
        f->listener(f->listener_ud, seq, &copy);
    pthread_mutex_unlock(&f->notify_mu);
}

void kc__faults_get(kc__faults *f, kc_server_faults *ret)
{
    pthread_mutex_lock(&f->mu);
    *ret = f->cur;
    pthread_mutex_unlock(&f->mu);
}

uint64_t kc__faults_set_listener(kc__faults *f, kc__faults_listener_fn fn, void *ud,
                                 kc_server_faults *ret_now)
{
    pthread_mutex_lock(&f->notify_mu);
    f->listener = fn;
    f->listener_ud = ud;
    pthread_mutex_lock(&f->mu);
    uint64_t seq = f->seq;
    if (ret_now)
        *ret_now = f->cur;
    pthread_mutex_unlock(&f->mu);
    pthread_mutex_unlock(&f->notify_mu);
    return seq;
}

/* ---- questions ------------------------------------------------------------------------------- */

int kc__faults_inject(kc__faults *f, kc_server_verb verb, unsigned *ret_retry_after)
{
    if ((unsigned)verb >= KC_SERVER_VERB__COUNT) {
        if (ret_retry_after)
            *ret_retry_after = 0;
        return 0;
    }
    int status = 0;
    unsigned retry = 0;
    pthread_mutex_lock(&f->mu);
    double r429 = f->cur.rate_429[verb], r500 = f->cur.rate_500[verb];
    double r503 = f->cur.rate_503[verb];
    if (r429 > 0 || r500 > 0 || r503 > 0) {
        double x = kc__rng_double(&f->rng);
        if (x < r429)
            status = 429;
        else if (x < r429 + r500)
            status = 500;
        else if (x < r429 + r500 + r503)
            status = 503;
        if (status == 429 || status == 503)
            retry = f->cur.retry_after_s;
    }
    pthread_mutex_unlock(&f->mu);
    if (ret_retry_after)
        *ret_retry_after = retry;
    return status;
}

/* A delay in ns drawn uniformly from [lo,hi] ms (hi < lo counts as lo; 0 when both are 0). */
static uint64_t draw_delay_ns(kc__faults *f, const unsigned *lo_ms, const unsigned *hi_ms)
{
    uint64_t ns = 0;
    pthread_mutex_lock(&f->mu);
    unsigned lo = *lo_ms, hi = *hi_ms;
    if (hi < lo)
        hi = lo;
    if (hi > 0)
        ns = kc__rng_range(&f->rng, (uint64_t)lo * KC__NS_PER_MS, (uint64_t)hi * KC__NS_PER_MS);
    pthread_mutex_unlock(&f->mu);
    return ns;
}

uint64_t kc__faults_watch_delay_ns(kc__faults *f)
{
    return draw_delay_ns(f, &f->cur.watch_delay_min_ms, &f->cur.watch_delay_max_ms);
}

uint64_t kc__faults_list_delay_ns(kc__faults *f)
{
    return draw_delay_ns(f, &f->cur.list_delay_min_ms, &f->cur.list_delay_max_ms);
}

bool kc__faults_close_watch(kc__faults *f, uint64_t sent)
{
    bool close = false;
    pthread_mutex_lock(&f->mu);
    if (f->cur.watch_close_every && sent > 0 && sent % f->cur.watch_close_every == 0)
        close = true;
    else if (f->cur.watch_close_prob > 0 && kc__rng_double(&f->rng) < f->cur.watch_close_prob)
        close = true;
    pthread_mutex_unlock(&f->mu);
    return close;
}

bool kc__faults_stalled(kc__faults *f)
{
    pthread_mutex_lock(&f->mu);
    bool s = f->cur.watch_stall;
    pthread_mutex_unlock(&f->mu);
    return s;
}

/* ---- text forms ------------------------------------------------------------------------------ */

int kc__faults_parse_duration_ms(const char *text, size_t len, unsigned *ret_ms)
{
    if (len == 0 || len > 32)
        return KC_EINVAL;
    char buf[40];
    memcpy(buf, text, len);
    buf[len] = '\0';
    if (buf[0] < '0' || buf[0] > '9')
        return KC_EINVAL;
    errno = 0;
    char *end;
    double v = strtod(buf, &end);
    if (errno || end == buf || !isfinite(v) || v < 0)
        return KC_EINVAL;
    double mult;
    if (!strcmp(end, "ms"))
        mult = 1;
    else if (!strcmp(end, "s"))
        mult = 1000;
    else if (!strcmp(end, "m"))
        mult = 60000;
    else if (!strcmp(end, "us"))
        mult = 0.001;
    else if (!*end && v == 0)
        mult = 0; /* a bare "0" */
    else
        return KC_EINVAL;
    double ms = v * mult;
    if (ms > (double)UINT32_MAX / 2)
        return KC_EINVAL;
    *ret_ms = (unsigned)llround(ms);
    return 0;
}

int kc__faults_parse_delay(const char *text, unsigned *ret_min_ms, unsigned *ret_max_ms,
                           kc_error *err)
{
    if (!text)
        return kc_error_set(err, KC_EINVAL, "missing delay");
    const char *dash = strchr(text, '-');
    size_t n = strlen(text);
    unsigned lo, hi;
    if (!dash) {
        if (kc__faults_parse_duration_ms(text, n, &lo))
            goto bad;
        hi = lo;
    } else {
        if (kc__faults_parse_duration_ms(text, (size_t)(dash - text), &lo) ||
            kc__faults_parse_duration_ms(dash + 1, n - (size_t)(dash + 1 - text), &hi))
            goto bad;
        if (hi < lo)
            return kc_error_set(err, KC_EINVAL, "delay '%s': maximum is smaller than minimum",
                                text);
    }
    *ret_min_ms = lo;
    *ret_max_ms = hi;
    return 0;
bad:
    return kc_error_set(err, KC_EINVAL,
                        "bad delay '%s' (expected MIN[-MAX] like 50ms, 1s, 10ms-500ms or 0)", text);
}

int kc__faults_parse_rate(const char *text, double rates[KC_SERVER_VERB__COUNT], kc_error *err)
{
    if (!text || !*text)
        return kc_error_set(err, KC_EINVAL, "missing rate");
    const char *colon = strchr(text, ':');
    size_t rlen = colon ? (size_t)(colon - text) : strlen(text);
    char buf[40];
    if (rlen == 0 || rlen >= sizeof buf)
        return kc_error_set(err, KC_EINVAL, "bad rate in '%s' (expected 0..1)", text);
    memcpy(buf, text, rlen);
    buf[rlen] = '\0';
    char *end;
    errno = 0;
    double p = strtod(buf, &end);
    if (errno || *end || !(p >= 0 && p <= 1))
        return kc_error_set(err, KC_EINVAL, "bad rate in '%s' (expected 0..1)", text);
    double out[KC_SERVER_VERB__COUNT];
    for (int i = 0; i < KC_SERVER_VERB__COUNT; i++)
        out[i] = colon ? 0 : p;
    if (colon) {
        const char *s = colon + 1;
        if (!*s)
            return kc_error_set(err, KC_EINVAL, "'%s': empty verb list", text);
        while (*s) {
            const char *e = strchr(s, ',');
            size_t l = e ? (size_t)(e - s) : strlen(s);
            int v = kc__verb_parse(s, l);
            if (v < 0)
                return kc_error_set(err, KC_EINVAL,
                                    "'%s': unknown verb '%.*s' (get, list, watch, create, update, "
                                    "patch, delete, deletecollection)",
                                    text, (int)l, s);
            out[v] = p;
            s += l;
            if (*s == ',')
                s++;
        }
    }
    memcpy(rates, out, sizeof out);
    return 0;
}

/* ---- text forms, public (include/kcache/server.h) -------------------------------------------- */

int kc_server_duration_parse(const char *text, unsigned *ret_ms, kc_error *err)
{
    if (!text || !ret_ms)
        return kc_error_set(err, KC_EINVAL, "duration: %s is NULL", text ? "ret_ms" : "text");
    if (kc__faults_parse_duration_ms(text, strlen(text), ret_ms))
        return kc_error_set(err, KC_EINVAL,
                            "bad duration '%s' (expected e.g. 250us, 50ms, 1s, 2m or 0)", text);
    return 0;
}

int(kc_server_faults_parse)(const char *field, const char *text, kc_server_faults *inout,
                            size_t inout_size, kc_error *err)
{
    if (!field || !text || !inout)
        return kc_error_set(err, KC_EINVAL, "faults: %s is NULL",
                            !field  ? "field"
                            : !text ? "text"
                                    : "inout");
    kc_server_faults *out = inout;
    KC__OPTS_TAKE(inout, kc_server_faults, err); /* parse into a copy: *out untouched on error */
    kc_server_faults *f = &inout__copy;
    int rc;
    if (!strcmp(field, "watchDelay")) {
        rc = kc__faults_parse_delay(text, &f->watch_delay_min_ms, &f->watch_delay_max_ms, err);
    } else if (!strcmp(field, "listDelay")) {
        rc = kc__faults_parse_delay(text, &f->list_delay_min_ms, &f->list_delay_max_ms, err);
    } else {
        double *rates = !strcmp(field, "rate429")   ? f->rate_429
                        : !strcmp(field, "rate500") ? f->rate_500
                        : !strcmp(field, "rate503") ? f->rate_503
                                                    : NULL;
        if (!rates)
            return kc_error_set(
                err, KC_EINVAL,
                "faults: unknown field '%s' (watchDelay, listDelay, rate429, rate500, rate503)",
                field);
        rc = kc__faults_parse_rate(text, rates, err);
    }
    if (!rc)
        kc__result_copy(out, inout_size, f, sizeof *f);
    return rc;
}

/* ---- JSON (admin endpoint) ------------------------------------------------------------------- */

static json_t *rates_json(const double *rates)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    for (int i = 0; i < KC_SERVER_VERB__COUNT; i++)
        if (json_object_set_new(o, verb_names[i], json_real(rates[i]))) {
            json_decref(o);
            return NULL;
        }
    return o;
}

char *kc__faults_to_json(const kc_server_faults *fl)
{
    json_t *o = json_pack(
        "{s:I,s:I,s:I,s:I,s:o*,s:o*,s:o*,s:I,s:I,s:f,s:b}", "watchDelayMinMs",
        (json_int_t)fl->watch_delay_min_ms, "watchDelayMaxMs", (json_int_t)fl->watch_delay_max_ms,
        "listDelayMinMs", (json_int_t)fl->list_delay_min_ms, "listDelayMaxMs",
        (json_int_t)fl->list_delay_max_ms, "rate429", rates_json(fl->rate_429), "rate500",
        rates_json(fl->rate_500), "rate503", rates_json(fl->rate_503), "retryAfterSeconds",
        (json_int_t)fl->retry_after_s, "watchCloseEvery", (json_int_t)fl->watch_close_every,
        "watchCloseProb", fl->watch_close_prob, "watchStall", fl->watch_stall);
    if (!o)
        return NULL;
    char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));
    json_decref(o);
    return s;
}

static int get_uint(json_t *v, const char *field, unsigned *out, kc_error *err)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0 ||
        json_integer_value(v) > (json_int_t)UINT32_MAX / 2)
        return kc_error_set(err, KC_EBADREQUEST, "%s: expected a non-negative integer", field);
    *out = (unsigned)json_integer_value(v);
    return 0;
}

/* k is NAME, NAMEMinMs or NAMEMaxMs: the keys of one delay fault (watchDelay, listDelay). */
static bool is_delay_key(const char *k, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(k, name, n) && (!k[n] || !strcmp(k + n, "MinMs") || !strcmp(k + n, "MaxMs"));
}

/* A delay fault's key (is_delay_key): NAMEMinMs and NAMEMaxMs an integer each, NAME a
 * "MIN[-MAX]" string setting both. */
static int get_delay(json_t *v, const char *k, unsigned *min_ms, unsigned *max_ms, kc_error *err)
{
    size_t n = strlen(k);
    if (n > 5 && !strcmp(k + n - 5, "MinMs"))
        return get_uint(v, k, min_ms, err);
    if (n > 5 && !strcmp(k + n - 5, "MaxMs"))
        return get_uint(v, k, max_ms, err);
    if (!json_is_string(v))
        return kc_error_set(err, KC_EBADREQUEST, "%s: expected \"MIN[-MAX]\"", k);
    if (kc__faults_parse_delay(json_string_value(v), min_ms, max_ms, NULL))
        return kc_error_set(err, KC_EBADREQUEST, "%s: bad duration '%s'", k, json_string_value(v));
    return 0;
}

static int get_prob(json_t *v, const char *field, double *out, kc_error *err)
{
    if (!json_is_number(v) || !(json_number_value(v) >= 0 && json_number_value(v) <= 1))
        return kc_error_set(err, KC_EBADREQUEST, "%s: expected a number in 0..1", field);
    *out = json_number_value(v);
    return 0;
}

/* A rate: a number (every verb), a "RATE[:VERBS]" string, or an object {verb: rate}. */
static int get_rates(json_t *v, const char *field, double *rates, kc_error *err)
{
    if (json_is_number(v)) {
        double p;
        if (get_prob(v, field, &p, err))
            return KC_EBADREQUEST;
        for (int i = 0; i < KC_SERVER_VERB__COUNT; i++)
            rates[i] = p;
        return 0;
    }
    if (json_is_string(v)) {
        kc_error e = KC_ERROR_INIT;
        if (kc__faults_parse_rate(json_string_value(v), rates, &e)) {
            kc_error_set(err, KC_EBADREQUEST, "%s: %s", field, e.message ? e.message : "bad");
            kc_error_clear(&e);
            return KC_EBADREQUEST;
        }
        return 0;
    }
    if (!json_is_object(v))
        return kc_error_set(err, KC_EBADREQUEST, "%s: expected a number, string or object", field);
    const char *k;
    json_t *x;
    double out[KC_SERVER_VERB__COUNT];
    memcpy(out, rates, sizeof out);
    json_object_foreach(v, k, x)
    {
        int verb = kc__verb_parse(k, strlen(k));
        if (verb < 0)
            return kc_error_set(err, KC_EBADREQUEST, "%s.%s: unknown verb", field, k);
        char name[64];
        snprintf(name, sizeof name, "%s.%s", field, k);
        if (get_prob(x, name, &out[verb], err))
            return KC_EBADREQUEST;
    }
    memcpy(rates, out, sizeof out);
    return 0;
}

int kc__faults_from_json(const char *text, size_t len, kc_server_faults *inout, kc_error *err)
{
    json_error_t jerr;
    json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!o)
        return kc_error_set(err, KC_EBADREQUEST, "faults: invalid JSON: %s", jerr.text);
    kc_server_faults f = *inout;
    int rc = 0;
    if (!json_is_object(o)) {
        rc = kc_error_set(err, KC_EBADREQUEST, "faults: expected a JSON object");
        goto out;
    }
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v)
    {
        if (is_delay_key(k, "watchDelay"))
            rc = get_delay(v, k, &f.watch_delay_min_ms, &f.watch_delay_max_ms, err);
        else if (is_delay_key(k, "listDelay"))
            rc = get_delay(v, k, &f.list_delay_min_ms, &f.list_delay_max_ms, err);
        else if (!strcmp(k, "rate429"))
            rc = get_rates(v, k, f.rate_429, err);
        else if (!strcmp(k, "rate500"))
            rc = get_rates(v, k, f.rate_500, err);
        else if (!strcmp(k, "rate503"))
            rc = get_rates(v, k, f.rate_503, err);
        else if (!strcmp(k, "retryAfterSeconds"))
            rc = get_uint(v, k, &f.retry_after_s, err);
        else if (!strcmp(k, "watchCloseEvery"))
            rc = get_uint(v, k, &f.watch_close_every, err);
        else if (!strcmp(k, "watchCloseProb"))
            rc = get_prob(v, k, &f.watch_close_prob, err);
        else if (!strcmp(k, "watchStall")) {
            if (!json_is_boolean(v))
                rc = kc_error_set(err, KC_EBADREQUEST, "watchStall: expected true or false");
            else
                f.watch_stall = json_is_true(v);
        } else
            rc = kc_error_set(err, KC_EBADREQUEST, "faults: unknown field '%s'", k);
        if (rc)
            goto out;
    }
    if (f.watch_delay_max_ms < f.watch_delay_min_ms) {
        rc = kc_error_set(err, KC_EBADREQUEST, "watchDelayMaxMs is smaller than watchDelayMinMs");
        goto out;
    }
    if (f.list_delay_max_ms < f.list_delay_min_ms) {
        rc = kc_error_set(err, KC_EBADREQUEST, "listDelayMaxMs is smaller than listDelayMinMs");
        goto out;
    }
    *inout = f;
out:
    json_decref(o);
    return rc;
}
