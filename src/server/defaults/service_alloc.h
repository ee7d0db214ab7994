/*
 * service_alloc.h — the Service registry's allocations: cluster IPs from the service CIDR, node
 * ports from the node port range, the IP family fields (docs/server.md, "Defaulting"). Not
 * installed.
 *
 * One allocator per server; every call runs under the caller's lock (the store's). It holds two
 * bitmaps and a PRNG, nothing of the store: the caller reserves on create/update, releases on
 * delete and after an update that dropped something, resets on a restart that loses storage.
 * Allocation follows upstream's: random within the upper part of the range, the lower part (the
 * static band, 1/16 of the range, 16–256 IPs / 16–128 ports) used only when that is full; the
 * first IP of the CIDR is taken (it is the `kubernetes` Service's in a cluster).
 */
#ifndef KC_SERVER_SERVICE_ALLOC_H
#define KC_SERVER_SERVICE_ALLOC_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "kcache/error.h"

typedef struct kc__svc_alloc kc__svc_alloc;

#define KC__SERVICE_CIDR_DEFAULT    "10.96.0.0/12"
#define KC__NODE_PORT_RANGE_DEFAULT "30000-32767"

/* New allocator. cidr: an IPv4 CIDR of /12 to /30 or an IPv6 one of /108 to /126 (host bits are
 * masked off); NULL = KC__SERVICE_CIDR_DEFAULT. ports: "LO-HI" within 1..65535, at least 16
 * ports; NULL = KC__NODE_PORT_RANGE_DEFAULT. seed: the PRNG's seed. Errors: KC_EINVAL (err
 * names the bad value), KC_ENOMEM. */
int kc__svc_alloc_new(const char *cidr, const char *ports, uint64_t seed, kc__svc_alloc **ret,
                      kc_error *err);
void kc__svc_alloc_free(kc__svc_alloc *a);
/* Everything free again (the first IP stays taken). */
void kc__svc_alloc_reset(kc__svc_alloc *a);
/* The first IP of the CIDR (always taken: the `kubernetes` Service's) into out; returns its
 * family, "IPv4" or "IPv6". */
const char *kc__svc_alloc_first_ip(const kc__svc_alloc *a, char out[64]);

/* Why a write was refused: the field and the text after it, e.g. "spec.clusterIPs" and
 * `Invalid value: []string{"1.2.3.4"}: failed to allocate IP 1.2.3.4: …`. */
typedef struct kc__svc_fail {
    char field[64];
    char msg[384];
} kc__svc_fail;

/* The registry part of a Service create (old NULL) or update (old = the stored object) on svc,
 * after the scheme's defaulting: allocated values carried over from old when svc omits them,
 * fields a type change makes moot dropped, ipFamilyPolicy / ipFamilies / clusterIP(s) set,
 * node ports and the health check node port allocated or reserved as requested. What svc holds
 * and old did not is reserved (dry_run: checked, nothing kept). Returns 0; KC_EUNPROCESSABLE with
 * *fail filled (422: a taken, out-of-range or malformed value, a family this server does not
 * serve, a changed cluster IP); KC_ESERVER with fail->msg (500: a range is full); KC_ENOMEM.
 * Nothing stays reserved on failure. */
int kc__svc_alloc_write(kc__svc_alloc *a, json_t *svc, const json_t *old, bool dry_run,
                        kc__svc_fail *fail);
/* Release the cluster IPs and node ports svc holds and keep (NULL = nothing) does not. */
void kc__svc_alloc_release(kc__svc_alloc *a, const json_t *svc, const json_t *keep);

#endif
