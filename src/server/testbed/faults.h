/*
 * faults.h — fault injection state of the embedded API server.
 *
 * Holds the kc_server_faults in force (changeable at run time from any thread) and a PRNG, and
 * answers the questions the request path and the watch streams ask. Thread-safe: one mutex.
 */
#ifndef KC_SERVER_FAULTS_H
#define KC_SERVER_FAULTS_H

#include "kcache/server.h"

typedef struct kc__faults kc__faults;

/* New fault state (init may be NULL = none; copied). seed 0 = from time. NULL on ENOMEM. */
kc__faults *kc__faults_new(const kc_server_faults *init, uint64_t seed);
void kc__faults_free(kc__faults *f);
void kc__faults_set(kc__faults *f, const kc_server_faults *faults);
void kc__faults_get(kc__faults *f, kc_server_faults *ret);

/* Should this request fail? Returns 0 (no), or the HTTP status to send (429, 500 or 503);
 * *ret_retry_after gets the Retry-After seconds to send (0 = no header). */
int kc__faults_inject(kc__faults *f, kc_server_verb verb, unsigned *ret_retry_after);

/* A random watch-event delay in nanoseconds drawn from [min,max] ms (0 when no delay set). */
uint64_t kc__faults_watch_delay_ns(kc__faults *f);
/* A random collection-LIST delay in nanoseconds drawn from [min,max] ms (0 when no delay set). */
uint64_t kc__faults_list_delay_ns(kc__faults *f);

/* After a stream has sent `sent` events (sent >= 1): should the server close it now? */
bool kc__faults_close_watch(kc__faults *f, uint64_t sent);

/* true while watch_stall is set (events must not be delivered). */
bool kc__faults_stalled(kc__faults *f);

/* Parse "MIN[-MAX]" durations like "10ms-500ms", "50ms", "1s", "0" into milliseconds.
 * Errors: KC_EINVAL naming the bad text. */
int kc__faults_parse_delay(const char *text, unsigned *ret_min_ms, unsigned *ret_max_ms,
                           kc_error *err);

/* Faults as a JSON document (admin endpoint GET), new malloc'd string — caller frees. */
char *kc__faults_to_json(const kc_server_faults *faults);
/* Apply a JSON document (admin endpoint PUT/POST; fields absent keep their value in *inout).
 * Errors: KC_EBADREQUEST naming the bad field. */
int kc__faults_from_json(const char *json, size_t len, kc_server_faults *inout, kc_error *err);

/* ---- additions (server-edge) ----------------------------------------------------------------- */

/* Lower-case name of a verb ("get", …, "deletecollection"); "?" when out of range. Static. */
const char *kc__verb_name(kc_server_verb verb);
/* The verb named by the len bytes at name (case-insensitive), or KC_EINVAL. */
int kc__verb_parse(const char *name, size_t len);

/* Parse one duration of len bytes ("50ms", "1s", "2m", "250us", "0") into milliseconds (rounded).
 * 0 or KC_EINVAL. */
int kc__faults_parse_duration_ms(const char *text, size_t len, unsigned *ret_ms);

/* Parse "RATE[:VERB,VERB…]" (RATE in 0..1; no verb list = every verb) into rates[] (verbs not
 * listed get 0). rates is untouched on failure. Errors: KC_EINVAL naming the bad part. */
int kc__faults_parse_rate(const char *text, double rates[KC_SERVER_VERB__COUNT], kc_error *err);

/* Change listener: called after every kc__faults_set, outside the faults lock, with a sequence
 * number that grows with each set (ignore a seq lower than one already seen: two concurrent sets
 * may notify out of order) and the faults now in force (borrowed for the call). */
typedef void (*kc__faults_listener_fn)(void *ud, uint64_t seq, const kc_server_faults *now);
/* Install (fn NULL = remove) the single listener. Returns the current seq and copies the current
 * faults into *ret_now (may be NULL), atomically with the installation. ud is borrowed. */
uint64_t kc__faults_set_listener(kc__faults *f, kc__faults_listener_fn fn, void *ud,
                                 kc_server_faults *ret_now);

#endif
