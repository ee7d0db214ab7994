/*
 * sj_statics.cpp — construct simdjson's lazily built singletons on demand.
 *
 * simdjson keeps its kernels ("implementations") in function-local statics with virtual methods,
 * built on first use and destroyed by the exit handlers that first use registered. A thread that
 * parses while exit() runs those destructors calls a pure virtual method and the process aborts.
 * The informer layer stops its threads from an exit handler (informer/exit.c); that handler only
 * runs before simdjson's destructors if it is registered after them, so it calls this first: every
 * singleton the decoders can reach (the builtin On-Demand kernel, the run-time dispatched DOM
 * kernel, the detection object) is built here, once.
 */
#include "json/sj_internal.hpp"

extern "C" void kc__sj_init_statics(void)
{
    (void)simdjson::get_available_implementations().size();
    (void)simdjson::get_active_implementation()->name();
    (void)simdjson::builtin_implementation()->name();
    simdjson::padded_string text(std::string_view("{\"a\":[1]}"));
    od::parser odp;
    od::document doc;
    od::object o;
    if (odp.iterate(text).get(doc) == simdjson::SUCCESS && doc.get_object().get(o)) {
        /* nothing: only the construction matters */
    }
    simdjson::dom::parser dp;
    simdjson::dom::element el;
    if (dp.parse(text).get(el)) {
        /* as above */
    }
}

KC_SJ_END_OF_FILE
