/*
 * sj_status.cpp — a metav1.Status through simdjson On-Demand: kind, status, message, reason, code
 * and details (name, group, kind, uid, retryAfterSeconds, causes). What it means is decided in C
 * (status.c).
 */
#include "json/sj_internal.hpp"
#include "json/sj_skip.hpp"

using namespace kc_sj;

/* One element of details.causes → ctx->causes. */
static int cause(walker &w, od::value &el, kc__sj_ctx *ctx)
{
    od::object co;
    if (int r = w.req_object(el, co, "a Status cause"))
        return r;
    kc__sj_cause cause = {};
    for (auto cr : co) {
        od::field cf;
        if (auto c = std::move(cr).get(cf))
            return w.err(c, "Status cause");
        od::raw_json_string ck = cf.key();
        int r = 0;
        if (ck.unsafe_is_equal("reason"))
            r = w.opt_string(cf.value(), &cause.reason, "cause reason");
        else if (ck.unsafe_is_equal("message"))
            r = w.opt_string(cf.value(), &cause.message, "cause message");
        else if (ck.unsafe_is_equal("field"))
            r = w.opt_string(cf.value(), &cause.field, "cause field");
        else /* never left to simdjson's skip_child (sj_skip.hpp) */
            r = w.skip(cf.value(), "Status cause");
        if (r)
            return r;
    }
    ctx->causes.push_back(cause);
    return 0;
}

/* The members of a Status object → *st (causes → ctx->causes). */
static int status_fields(walker &w, od::object &top, kc__sj_status_info *st, kc__sj_ctx *ctx)
{
    int r = 0;
    for (auto fr : top) {
        od::field f;
        if (auto c = std::move(fr).get(f))
            return w.err(c, "Status");
        od::raw_json_string k = f.key();
        if (k.unsafe_is_equal("kind")) {
            r = w.opt_string(f.value(), &st->kind, "Status kind");
            st->has_kind = true;
        } else if (k.unsafe_is_equal("status")) {
            r = w.opt_string(f.value(), &st->status, "Status status");
            st->has_status = st->status.n > 0;
        } else if (k.unsafe_is_equal("message")) {
            r = w.opt_string(f.value(), &st->message, "Status message");
        } else if (k.unsafe_is_equal("reason")) {
            r = w.opt_string(f.value(), &st->reason, "Status reason");
        } else if (k.unsafe_is_equal("code")) {
            const char *at = f.value().raw_json_token().data();
            if (f.value().get_int64().get(st->code))
                return w.type_err("Status code", "an integer", at);
            st->has_code = true;
        } else if (k.unsafe_is_equal("details")) {
            od::object d;
            bool present = false;
            if ((r = w.opt_object(f.value(), d, &present, "Status details")))
                return r;
            if (!present)
                continue;
            for (auto dr : d) {
                od::field df;
                if (auto c = std::move(dr).get(df))
                    return w.err(c, "Status details");
                od::raw_json_string dk = df.key();
                if (dk.unsafe_is_equal("name")) {
                    r = w.opt_string(df.value(), &st->d_name, "Status details.name");
                } else if (dk.unsafe_is_equal("group")) {
                    r = w.opt_string(df.value(), &st->d_group, "Status details.group");
                } else if (dk.unsafe_is_equal("kind")) {
                    r = w.opt_string(df.value(), &st->d_kind, "Status details.kind");
                } else if (dk.unsafe_is_equal("uid")) {
                    r = w.opt_string(df.value(), &st->d_uid, "Status details.uid");
                } else if (dk.unsafe_is_equal("retryAfterSeconds")) {
                    const char *vat = df.value().raw_json_token().data();
                    if (df.value().get_int64().get(st->retry_after))
                        return w.type_err("Status details.retryAfterSeconds", "an integer", vat);
                    st->has_retry = true;
                } else if (dk.unsafe_is_equal("causes")) {
                    r = w.each_element(df.value(), "Status details.causes",
                                       [&](od::value &el) -> int { return cause(w, el, ctx); });
                } else {
                    r = w.skip(df.value(), "Status details");
                }
                if (r)
                    return r;
            }
        } else {
            r = w.skip(f.value(), "Status");
        }
        if (r)
            return r;
    }
    return 0;
}

extern "C" {

int kc__sj_status(kc__sj_ctx *ctx, const char *json, size_t len, kc__sj_status_fn fn, void *ud,
                  kc__sj_err *e)
{
    kc__sj_status_info st = {};
    ctx->causes.clear();
    bool minified = false;
    int r = with_compact_object(
        ctx, json, len, false, "the Status", e, &minified,
        [&](walker &w, od::object &top) { return status_fields(w, top, &st, ctx); });
    if (!r) {
        st.causes = ctx->causes.data();
        st.n_causes = ctx->causes.size();
        r = fn(ud, &st, e);
    }
    return unminify_error(r, e, json, len, minified);
}

} /* extern "C" */

KC_SJ_END_OF_FILE
