/*
 * discovery_internal.h — what the discovery files share: a custom resource's CRD versions
 * (crd.c) for the OpenAPI documents (openapi.c) and CRD Tables (table_crd.c). Not installed.
 */
#ifndef KC_SERVER_DISCOVERY_INTERNAL_H
#define KC_SERVER_DISCOVERY_INTERNAL_H

#include "server/discovery/discovery.h"

/* r->crd_versions with a new reference (caller json_decref), NULL when none. */
json_t *kc__crd_versions_ref(kc__rsrc *r);
/* The openAPIV3Schema of version in a CRD's spec.versions (borrowed from versions), NULL when
 * that version has none. */
const json_t *kc__crd_schema_of(const json_t *versions, const char *version);

#endif
