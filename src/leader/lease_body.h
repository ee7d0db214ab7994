/*
 * leader/lease_body.h — the lease lock's state and its Lease bodies (internal; used by
 * lease_lock.c and lease_body.c only): parsing a Lease's spec into a kc__lease_record, MicroTime
 * text, and the JSON of a Create and of an Update (metadata of the observed object, with the
 * lock's annotations spliced in, and a new spec).
 */
#ifndef KC_LEADER_LEASE_BODY_H
#define KC_LEADER_LEASE_BODY_H

#include "leader/lease_lock.h"

#include "core/internal.h"

struct kc__lease_lock {
    kc_client *client;
    char *ns, *name, *identity;
    uint64_t ld_ns, rd_ns;
    kc__lease_clock_fn clock;
    void *clock_ud;
    bool coordinated;

    kc_obj *obj;          /* last observed Lease */
    kc__lease_record rec; /* its spec, parsed */
    bool have_rec;
    char *raw_spec;         /* spec text of the last change (L3 step 3) */
    uint64_t observed_time; /* lock clock when raw_spec last changed (L5) */
    uint64_t valid_until;   /* t_send + RD of the last successful write as holder; 0 = none */
    uint64_t slowpath;

    struct {
        char *key, *value;
    } ann[KC__LEASE_ANN_MAX];
    size_t n_ann;
};

/* A spec to write (strings borrowed; NULL strategy / preferred_holder are left out). */
typedef struct kc__lease_spec {
    const char *holder;
    int64_t duration_s;
    const char *acquire_time, *renew_time;
    int64_t transitions;
    const char *strategy, *preferred_holder;
} kc__lease_spec;

/* Parse obj's spec into *rec (strings new; holder "" when absent). 0, KC_ENOMEM, KC_EPARSE. */
int kc__lease_record_parse(const kc_obj *obj, kc__lease_record *rec, kc_error *err);
void kc__lease_record_clear(kc__lease_record *rec);
/* Wall-clock MicroTime "2006-01-02T15:04:05.000000Z" into out. */
void kc__lease_microtime(char out[40]);
/* LD as leaseDurationSeconds: rounded up, at least 1. */
int64_t kc__lease_seconds(uint64_t ns);
/* Bodies into b (NUL-terminated). 0, KC_ENOMEM, KC_EPARSE (observed metadata unreadable). */
int kc__lease_create_body(const kc__lease_lock *l, const kc__lease_spec *s, kc__buf *b,
                          kc_error *err);
int kc__lease_update_body(const kc__lease_lock *l, const kc__lease_spec *s, kc__buf *b,
                          kc_error *err);

#endif
