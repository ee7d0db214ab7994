/*
 * admin.c — the admin endpoint of the embedded API server (same authentication as the API):
 *   GET  /admin/faults            current faults as JSON (faults.h)
 *   PUT  /admin/faults (or POST)  change faults; absent fields keep their value
 *   POST /admin/compact           forget the history (older RVs → 410)
 *   POST /admin/restart           drop all state and reset the RV counter (?mode=wipe, default)
 *   POST /admin/restart?mode=restore  keep every object, renumber the RVs from 1 (as after a
 *                                 restore from backup)
 *   GET  /admin/rv                {"resourceVersion":"N"}
 *   GET  /admin/sharding          {"ignoreShardSelector":B,"shardedWatches":N,"filteredEvents":N}
 *   PUT  /admin/sharding (or POST) {"ignoreShardSelector":B}: ignore shardSelector as a gate-off
 *                                 server (S12) from now on, or honour it again
 *   POST /admin/clock?advance=S   move the clock of the server's timestamps (creationTimestamp,
 *                                 managedFields time, …) S seconds (1..86400) forward, for tests
 *                                 that need a later second without sleeping; process-wide
 * Replies are JSON; errors are Status. Thread-safe through the server API it calls.
 */
#include "server/http/http.h"
#include "server/patch/validate.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ok(kc__req *req)
{
    return kc__reply_text(req, 200, "{\"status\":\"ok\"}\n") == 0
               ? (MHD_del_response_header(req->resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                                          "text/plain; charset=utf-8"),
                  MHD_add_response_header(req->resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                                          "application/json"),
                  0)
               : KC_ENOMEM;
}

/* GET/PUT /admin/sharding: the shardSelector switch (shard.c) and the sharding counters. */
static int admin_sharding(kc__req *req)
{
    kc_server *srv = req->srv;
    if (req->method == KC__M_PUT || req->method == KC__M_POST) {
        json_t *doc = json_loadb(req->body ? req->body : "", req->body_len, 0, NULL);
        json_t *v = json_object_get(doc, "ignoreShardSelector");
        bool okv = json_is_boolean(v);
        if (okv)
            kc_server_set_shard_selector_ignored(srv, json_is_true(v));
        json_decref(doc);
        if (!okv)
            return kc__fail(&req->err, 400, "BadRequest",
                            "want a JSON object {\"ignoreShardSelector\": true|false}");
    } else if (req->method != KC__M_GET) {
        return kc__fail(&req->err, 405, "MethodNotAllowed", "use GET or PUT");
    }
    char b[160];
    snprintf(b, sizeof(b),
             "{\"ignoreShardSelector\":%s,\"shardedWatches\":%zu,\"filteredEvents\":%llu}\n",
             kc_server_shard_selector_ignored(srv) ? "true" : "false",
             (size_t)atomic_load(&srv->shard_watchers),
             (unsigned long long)atomic_load(&srv->shard_filtered));
    char *s = kc__strdup(b);
    return s ? kc__reply(req, 200, s, strlen(s)) : KC_ENOMEM;
}

/* POST /admin/clock?advance=S: kc__clock_advance (validate.c). */
static int admin_clock(kc__req *req)
{
    if (req->method != KC__M_POST)
        return kc__fail(&req->err, 405, "MethodNotAllowed", "use POST");
    const char *a = MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, "advance");
    char *end = NULL;
    long s = a ? strtol(a, &end, 10) : 0;
    if (!a || !*a || *end || s < 1 || s > 86400)
        return kc__fail(&req->err, 400, "BadRequest",
                        "advance: want a number of seconds from 1 to 86400");
    kc__clock_advance(s);
    return ok(req);
}

int kc__admin_handle(kc__req *req)
{
    kc_server *srv = req->srv;
    const char *what = req->path + strlen("/admin/");
    if (!strcmp(what, "faults")) {
        kc_server_faults f;
        kc_server_get_faults(srv, &f);
        if (req->method == KC__M_GET) {
            char *s = kc__faults_to_json(&f);
            return s ? kc__reply(req, 200, s, strlen(s)) : KC_ENOMEM;
        }
        if (req->method != KC__M_PUT && req->method != KC__M_POST)
            return kc__fail(&req->err, 405, "MethodNotAllowed", "use GET or PUT");
        kc_error e = KC_ERROR_INIT;
        if (kc__faults_from_json(req->body, req->body_len, &f, &e) != 0) {
            int rc = kc__fail(&req->err, 400, "BadRequest", "%s",
                              e.message ? e.message : "bad faults document");
            kc_error_clear(&e);
            return rc;
        }
        kc_server_set_faults(srv, &f);
        char *s = kc__faults_to_json(&f);
        return s ? kc__reply(req, 200, s, strlen(s)) : KC_ENOMEM;
    }
    if (!strcmp(what, "sharding"))
        return admin_sharding(req);
    if (!strcmp(what, "clock"))
        return admin_clock(req);
    if (!strcmp(what, "rv")) {
        char b[64];
        snprintf(b, sizeof(b), "{\"resourceVersion\":\"%llu\"}",
                 (unsigned long long)kc_server_current_rv(srv));
        char *s = kc__strdup(b);
        return s ? kc__reply(req, 200, s, strlen(s)) : KC_ENOMEM;
    }
    if (!strcmp(what, "compact") || !strcmp(what, "restart")) {
        if (req->method != KC__M_POST)
            return kc__fail(&req->err, 405, "MethodNotAllowed", "use POST");
        if (what[0] == 'c') {
            kc_server_compact(srv);
            return ok(req);
        }
        const char *mode = MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, "mode");
        kc_server_restart_mode m = KC_SERVER_RESTART_WIPE;
        if (mode && !strcmp(mode, "restore"))
            m = KC_SERVER_RESTART_RESTORE;
        else if (mode && strcmp(mode, "wipe") != 0)
            return kc__fail(&req->err, 400, "BadRequest",
                            "unknown restart mode \"%.64s\": use wipe or restore", mode);
        int rc = kc_server_restart(srv, m, NULL);
        if (rc)
            return kc__fail(&req->err, 500, "InternalError", "restart failed: %s", kc_strerror(rc));
        return ok(req);
    }
    return kc__fail(&req->err, 404, "NotFound", "unknown admin endpoint");
}
