/*
 * http.h — what the files of the http room (src/server/http/: libmicrohttpd glue, routing, the
 * server's lifecycle, admin endpoint) share: parsing a request into a kc__req (api.h) and the
 * MHD callbacks. Nothing below http calls it. Not installed.
 */
#ifndef KC_SERVER_HTTP_H
#define KC_SERVER_HTTP_H

#include "server/api/api.h"

/* Parse a URL path (already percent-decoded). 0, or KC_ENOTFOUND for paths outside the API. */
int kc__route_parse(const char *path, kc__route *ret);
/* The query options of a resource request (route.c). Strings borrowed from MHD. */
int kc__query_parse(struct MHD_Connection *conn, kc__query *ret, kc_error *err);
/* Parameter boolean rule: false only for "0" or case-insensitive "false" (NULL value = true). */
bool kc__param_bool(const char *v);
/* Pick a representation from an Accept header (NULL = JSON). KC_EMEDIATYPE → 406. */
int kc__negotiate(const char *accept, enum kc__fmt *ret, kc_error *err);
/* The admin endpoint (admin.c): /admin/faults, /admin/compact, /admin/restart. */
int kc__admin_handle(kc__req *req);

/* The `kubernetes` Service of namespace default, its Endpoints and EndpointSlice naming
 * srv->adv_host:adv_port (kubernetes_svc.c), as every cluster has them; mu held. Objects that
 * exist already (a fixture) are kept. Errors: KC_ENOMEM. */
int kc__kubernetes_service_create(kc_server *srv);
/* Authentication and authorization of a request (authorize.c), before routing: 0 to go on, or
 * the code of req->err (401, 403, …); *ret_answered when it made the reply itself (reviews,
 * TokenRequest). */
int kc__http_authorize(kc__req *req, bool *ret_answered);

/* The MHD callbacks of the daemon (http.c) and the wait for offloaded requests at stop. */
enum MHD_Result kc__http_on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                    const char *method, const char *version,
                                    const char *upload_data, size_t *upload_data_size,
                                    void **con_cls);
void kc__http_on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                           enum MHD_RequestTerminationCode toe);
void kc__http_wait_offloaded(kc_server *srv);

#endif
