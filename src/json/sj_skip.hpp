/*
 * json/sj_skip.hpp — skipping one array or object value of an On-Demand document with a lookup
 * table instead of simdjson's per-token switch. Include after sj_internal.hpp.
 *
 * Why. A stored Kubernetes object is mostly sub-trees we never read: managedFields (cut out,
 * ~40 % of a Pod), spec and status (kept as text). On-Demand skips a sub-tree by walking its
 * structural tokens (stage 1's index) with a switch on each token's first byte — three-way
 * branches that mispredict on real data; simdjson 3.0.1's own source notes "PERF TODO we can
 * eliminate the switch here with a lookup of how much to add to depth". Measured on a 6 KB Pod:
 * stage 1 alone 1.9 GB/s, stage 1 plus On-Demand's skip of every token 1.04 GB/s, stage 1 plus a
 * table-driven depth count over every token 1.42 GB/s (docs/benchmarks-journal.md, session 3).
 *
 * What this does. Exactly what json_iterator::skip_child does for a value that starts with '['
 * or '{' — the same tokens of the same index, the same depth rule (+1 for '[' '{', -1 for ']'
 * '}', 0 for anything else; like On-Demand it does not check that brackets match in kind), the
 * same error when the document ends first — but as `depth += delta[byte]` with no data-dependent
 * branch but the exit. It then leaves the iterator exactly where skip_child leaves it: position
 * after the closing bracket, depth back at the parent's, so the enclosing object or array loop
 * carries on as after any consumed value. A string is consumed (On-Demand's skip_child would
 * take a string followed by ':' for a key); other scalars are left to On-Demand (one token).
 *
 * How it reaches the iterator. od::value keeps its value_iterator in a protected member; the
 * standard derived-class member pointer reads it without a cast. Everything else used is public
 * in simdjson's headers: value_iterator::json_iter(), json_iterator::position(), peek(),
 * depth(), ascend_to(), reenter_child(); the end of the index is json_iterator's protected
 * end_position(), read the same way. These are simdjson internals that a new simdjson may
 * rename: then this file stops compiling, loudly, rather than misbehaving. A unit test
 * (test_json_skip) checks that both skips leave every walk with the same results, and the fuzz
 * targets run through it.
 */
#ifndef KC_JSON_SJ_SKIP_HPP
#define KC_JSON_SJ_SKIP_HPP

namespace kc_sj
{

struct value_access : od::value {
    static od::json_iterator &json_iter(od::value &v)
    {
        return (v.*(&value_access::iter)).json_iter();
    }
};

struct json_iterator_access : od::json_iterator {
    static od::token_position end(const od::json_iterator &j)
    {
        return (j.*(&json_iterator_access::end_position))();
    }
};

/* +1 for '[' '{', -1 for ']' '}', else 0. */
struct depth_delta_table {
    int8_t d[256];
    constexpr depth_delta_table() : d()
    {
        d[static_cast<unsigned char>('[')] = 1;
        d[static_cast<unsigned char>('{')] = 1;
        d[static_cast<unsigned char>(']')] = -1;
        d[static_cast<unsigned char>('}')] = -1;
    }
};
inline constexpr depth_delta_table depth_delta{};

/* v must not have been read yet. When v is an array or object: skips it, *close = its closing
 * bracket, returns SUCCESS; v is consumed. When v is a string: consumed, *close = nullptr,
 * SUCCESS. Another scalar: *close = nullptr, SUCCESS, nothing consumed. TAPE_ERROR when the
 * document ends before the value closes; INCORRECT_TYPE when v is no value (a ':', ',', ']' or
 * '}' token), nothing consumed. */
inline simdjson::error_code skip_container(od::value &v, const char **close)
{
    od::json_iterator &ji = value_access::json_iter(v);
    *close = nullptr;
    const uint8_t *first = ji.peek(0);
    if (*first == '"') {
        /* A string is consumed here, as get_string would: left to On-Demand, skip_child takes
         * a string followed by ':' for a key (simdjson issue 1742) and skips the next value too,
         * then its bracket closes the enclosing object — {"a":"x":[]}} walked as one object
         * ends one '}' late, and a body with one '}' too many was accepted (fuzz_list finding
         * windowed-accepts-invalid-item). Other scalars are one token On-Demand skips exactly. */
        if (ji.position() < json_iterator_access::end(ji)) {
            ji.return_current_and_advance();
            ji.ascend_to(ji.depth() - 1);
        }
        return simdjson::SUCCESS;
    }
    if (*first != '[' && *first != '{') {
        /* ':' ',' ']' '}' where a value should be: no value. skip_child would take ':' and ','
         * for an opening bracket and ']' '}' for the end of the value, and end the enclosing
         * object one bracket late or early ({"a"::[]]} walked as one object). */
        return depth_delta.d[*first] < 0 || *first == ':' || *first == ','
                   ? simdjson::INCORRECT_TYPE
                   : simdjson::SUCCESS;
    }
    od::token_position p = ji.position();
    [[maybe_unused]] od::token_position start = p;
    od::token_position end = json_iterator_access::end(ji);
    const uint8_t *buf = first - *p; /* text start: indexes are offsets into it */
    const int8_t *dd = depth_delta.d;
    int32_t depth = 1;
    /* Four tokens per test of the exit (a group where it fires is redone one by one): 1.6 GB/s
     * for stage 1 plus this over every token of a Pod, against 1.3 GB/s testing each token. */
    for (p++; end - p >= 4; p += 4) {
        int32_t d1 = depth + dd[buf[p[0]]], d2 = d1 + dd[buf[p[1]]];
        int32_t d3 = d2 + dd[buf[p[2]]], d4 = d3 + dd[buf[p[3]]];
        if (__builtin_expect((d1 == 0) | (d2 == 0) | (d3 == 0) | (d4 == 0), 0))
            break;
        depth = d4;
    }
    for (; p < end; p++) {
        depth += dd[buf[*p]];
        if (depth == 0)
            break;
    }
    if (p >= end)
        return ji.report_error(simdjson::TAPE_ERROR, "not enough close braces");
    *close = reinterpret_cast<const char *>(buf + *p);
    /* Leave the iterator as skip_child does: after the bracket, at the parent's depth. */
    od::depth_t child = ji.depth();
#if SIMDJSON_DEVELOPMENT_CHECKS
    /* Debug builds of simdjson check that a re-entered position is not before where its depth's
     * container started; record this container's start, as On-Demand does when it opens one. */
    ji.set_start_position(child, start);
#endif
    ji.ascend_to(child - 1);
    ji.reenter_child(p + 1, child);
    ji.ascend_to(child - 1);
    return simdjson::SUCCESS;
}

/* walker::skip (sj_internal.hpp), inline: it is on the hot path of every object. */
__attribute__((always_inline)) inline int walker::skip(od::value &v, const char *what,
                                                       const char **close)
{
    if (strict)
        return validate_skip(v, what, close);
    const char *last = nullptr;
    if (simdjson::error_code c = skip_container(v, &last); __builtin_expect(c != 0, 0))
        return c == simdjson::TAPE_ERROR ? truncated(what) /* ended before the value closed */
                                         : no_value(v, what);
    if (close)
        *close = last;
    return 0;
}

} // namespace kc_sj

#endif
