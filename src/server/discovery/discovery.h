/*
 * discovery.h — what the discovery room (src/server/discovery/) gives the rooms above it: the
 * discovery and OpenAPI documents of the live registry, the CRD rules (installed in storage as
 * its CRD hooks by kc__crd_install; the pruning and defaulting decode the verbs run), and the
 * Table renderings (table.h). Not installed.
 */
#ifndef KC_SERVER_DISCOVERY_H
#define KC_SERVER_DISCOVERY_H

#include "server/storage/storage.h"

/* Discovery documents (new malloc'd JSON; NULL on ENOMEM / when group-version unknown). */
char *kc__discovery_api(kc_server *srv, size_t *ret_len);
char *kc__discovery_apis(kc_server *srv, size_t *ret_len);
char *kc__discovery_group(kc_server *srv, const char *group, size_t *ret_len);
char *kc__discovery_resources(kc_server *srv, const char *group, const char *version,
                              size_t *ret_len);
/* Aggregated discovery (apidiscovery.k8s.io/v2 APIGroupDiscoveryList) of the core group (/api)
 * or of the named groups (/apis). New malloc'd JSON, NULL on ENOMEM. */
char *kc__discovery_aggregated(kc_server *srv, bool core, size_t *ret_len);
/* Content-Type of an aggregated discovery body. */
#define KC__AGGREGATED_CTYPE "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
/* The OpenAPI v3 index and group-version documents and the v2 document (openapi.c; mu held),
 * JSON, malloc'd. accept: the request's Accept (v2 is JSON only). NULL when the path has no
 * document (→ 404). */
char *kc__openapi_doc(kc_server *srv, const char *path, const char *accept, size_t *ret_len);
/* /openapi/v2 when accept asks for protobuf only (kubectl): a malloc'd openapi_v2.Document with
 * swagger and info, no definitions (*ret_len bytes; content type KC__OPENAPI_V2_PB); NULL when
 * accept takes JSON, or on ENOMEM. */
char *kc__openapi_v2_pb(const char *accept, size_t *ret_len);
#define KC__OPENAPI_V2_PB "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
/* Custom resources against their CRD's schema (crd.c). The schema of version (NULL when the CRD
 * has none) comes from r->crd_versions with its own reference, so this may run with or without
 * mu: prune doc (unknown fields reported through fn, as kc__schema_unknown) and apply the
 * schema's defaults. */
int kc__crd_decode(kc__rsrc *r, const char *version, json_t *doc, const json_t *base,
                   int (*fn)(void *, const char *, json_t *, const char *), void *ud);
/* Install the CRD hooks (kc__crd_hooks) in srv's storage: prepare and validate as above,
 * stored registers the resources of a stored CRD (an update of a registered CRD replaces its
 * schemas and printer columns; names and scope stay), removed unregisters them. */
void kc__crd_install(kc_server *srv);

#endif
