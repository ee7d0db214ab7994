/*
 * sj_minify.cpp — minifying a JSON text without ever joining two tokens, 64 bytes at a time.
 *
 * Why not simdjson::minify alone: it removes whitespace outside strings without looking at what
 * it separates, so "1 0" became "10" and "tr ue" became "true" — malformed text rewritten into
 * valid text. Whitespace between two values is always an error in JSON (a ',' or ':' must come
 * between them), so this minifier refuses it: KC_EPARSE at the second value. Checking in a
 * separate pass after simdjson::minify cost pretty-printed input a quarter of its decode speed;
 * here the check shares the minifier's classification of each block and costs a few bit
 * operations.
 *
 * Per 64-byte block, with simdjson's stage-1 rules (locate.h):
 *   escaped    bytes after an odd run of backslashes (simdjson's branchless find_escaped);
 *   in_string  prefix XOR of the unescaped quotes (carry-less multiply), carried across blocks;
 *   W          whitespace outside strings: the bytes removed;
 *   E, S       value ends (a scalar byte, a closing quote, '}' or ']') and value starts (a scalar
 *              byte, an opening quote, '{' or '['), outside strings;
 *   join       a run of W that follows an E is found by adding its first bit to W: the carry runs
 *              through the run and lands on the byte after it (carried across blocks); a landing
 *              on an S is a join.
 * The kept bytes are packed eight at a time with a byte shuffle from a 256-entry table.
 *
 * The result is exactly simdjson::minify's (same removed bytes; an unclosed string is an error),
 * except that a join is refused; fuzz_list compares the two (kc__sj_minify_reference). Without
 * AVX2 (KC_SJ_PORTABLE) kc__sj_minify is that reference: simdjson::minify, then the scalar
 * kc__json_ws_join when whitespace was removed.
 */
#include "json/sj_internal.hpp"

namespace
{

/* simdjson::minify, then the join check (locate.c) when it removed whitespace between tokens. */
int minify_reference(const char *in, size_t n, char *out, size_t *out_n, int64_t *join_at)
{
    *join_at = -1;
    size_t m = 0;
    if (simdjson::minify(in, n, out, m))
        return KC_EPARSE;
    *out_n = m;
    if (m < n)
        *join_at = kc__json_ws_join(in, n);
    return *join_at >= 0 ? KC_EPARSE : 0;
}

#ifdef KC_SJ_AVX2

/* For each 8-bit keep mask, the indices of its set bits, packed from the low byte. */
struct pack_table {
    uint64_t t[256];
    constexpr pack_table() : t()
    {
        for (unsigned m = 0; m < 256; m++) {
            uint64_t v = 0;
            unsigned k = 0;
            for (unsigned b = 0; b < 8; b++)
                if (m >> b & 1)
                    v |= static_cast<uint64_t>(b) << (8 * k++);
            t[m] = v;
        }
    }
};
constexpr pack_table pack{};

inline uint64_t bits(__m256i a, __m256i b)
{
    return static_cast<uint32_t>(_mm256_movemask_epi8(a)) |
           static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(b))) << 32;
}

inline uint64_t prefix_xor(uint64_t x)
{
    __m128i r = _mm_clmulepi64_si128(_mm_set_epi64x(0, static_cast<long long>(x)),
                                     _mm_set1_epi8(static_cast<char>(0xFF)), 0);
    return static_cast<uint64_t>(_mm_cvtsi128_si64(r));
}

/* JSON whitespace bytes of v, by a nibble lookup (simdjson's trick): the table holds, at each low
 * nibble, the whitespace byte with that nibble, or 0x80, which no byte below 0x80 equals and
 * bytes from 0x80 never meet (vpshufb gives them 0). */
inline __m256i whitespace(__m256i v)
{
    const __m256i table =
        _mm256_setr_epi8(' ', -128, -128, -128, -128, -128, -128, -128, -128, '\t', '\n', -128,
                         -128, '\r', -128, -128, ' ', -128, -128, -128, -128, -128, -128, -128,
                         -128, '\t', '\n', -128, -128, '\r', -128, -128);
    return _mm256_cmpeq_epi8(v, _mm256_shuffle_epi8(table, v));
}

/* Escapes and strings across blocks: which bytes of a block are inside a string. */
struct strings {
    uint64_t prev_escaped = 0, prev_in_string = 0;

    /* bs, quote: the block's backslashes and quotes. Returns in_string (an opening quote is in,
     * a closing one out); *unescaped gets the quotes that are not escaped. */
    uint64_t next(uint64_t bs, uint64_t quote, uint64_t *unescaped)
    {
        const uint64_t even = 0x5555555555555555ULL;
        bs &= ~prev_escaped;
        uint64_t follows = bs << 1 | prev_escaped;
        uint64_t odd_starts = bs & ~even & ~follows, seq_even;
        prev_escaped = __builtin_add_overflow(odd_starts, bs, &seq_even);
        uint64_t escaped = (even ^ (seq_even << 1)) & follows;
        *unescaped = quote & ~escaped;
        uint64_t in_string = prefix_xor(*unescaped) ^ prev_in_string;
        prev_in_string = static_cast<uint64_t>(static_cast<int64_t>(in_string) >> 63);
        return in_string;
    }
};

struct minifier {
    strings str;
    uint64_t prev_end = 0, carry = 0;

    /* One block: writes its kept bytes to *dst (8 bytes of slack written beyond them) and
     * returns the join bits (bytes of the block, valid: those belonging to the text). */
    uint64_t next(const char *p, uint64_t valid, char **dst)
    {
        __m256i v[2], m[6][2];
        for (int h = 0; h < 2; h++) {
            v[h] = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p + 32 * h));
            __m256i curl = _mm256_or_si256(v[h], _mm256_set1_epi8(0x20)); /* '[' → '{' … */
            __m256i w = whitespace(v[h]);
            __m256i o = _mm256_cmpeq_epi8(curl, _mm256_set1_epi8('{'));
            __m256i c = _mm256_cmpeq_epi8(curl, _mm256_set1_epi8('}'));
            __m256i s = _mm256_or_si256(_mm256_cmpeq_epi8(v[h], _mm256_set1_epi8(',')),
                                        _mm256_cmpeq_epi8(v[h], _mm256_set1_epi8(':')));
            __m256i any = _mm256_or_si256(_mm256_or_si256(w, s), _mm256_or_si256(o, c));
            m[0][h] = _mm256_cmpeq_epi8(v[h], _mm256_set1_epi8('\\'));
            m[1][h] = _mm256_cmpeq_epi8(v[h], _mm256_set1_epi8('"'));
            m[2][h] = w;
            m[3][h] = o;
            m[4][h] = c;
            m[5][h] = _mm256_cmpeq_epi8(any, _mm256_setzero_si256()); /* none of the above */
        }
        uint64_t quote;
        uint64_t in_string = str.next(bits(m[0][0], m[0][1]), bits(m[1][0], m[1][1]), &quote);
        uint64_t out = ~in_string; /* a closing quote is outside */

        uint64_t w = bits(m[2][0], m[2][1]) & out & valid;
        uint64_t scalar = bits(m[5][0], m[5][1]) & ~quote & out;
        uint64_t end = (scalar | (quote & out) | (bits(m[4][0], m[4][1]) & out)) & valid;
        uint64_t start = (scalar | (quote & in_string) | (bits(m[3][0], m[3][1]) & out)) & valid;
        uint64_t run_first = (end << 1 | prev_end) & w; /* first whitespace after a value end */
        prev_end = end >> 63;
        uint64_t sum, sum2;
        bool c1 = __builtin_add_overflow(w, run_first, &sum);
        bool c2 = __builtin_add_overflow(sum, carry, &sum2);
        carry = c1 || c2;

        uint64_t keep = ~w & valid;
        char *d = *dst;
        for (int g = 0; g < 8; g++) {
            unsigned k = static_cast<unsigned>(keep >> (8 * g)) & 0xFF;
            __m128i x = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(p + 8 * g));
            __m128i idx = _mm_cvtsi64_si128(static_cast<long long>(pack.t[k]));
            _mm_storel_epi64(reinterpret_cast<__m128i *>(d), _mm_shuffle_epi8(x, idx));
            d += __builtin_popcount(k);
        }
        *dst = d;
        return sum2 & ~w & start;
    }
};

/* The whitespace bytes outside strings of one block. */
inline uint64_t ws_outside(strings &str, const char *p)
{
    __m256i b[2], q[2], w[2];
    for (int h = 0; h < 2; h++) {
        __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p + 32 * h));
        b[h] = _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\\'));
        q[h] = _mm256_cmpeq_epi8(v, _mm256_set1_epi8('"'));
        w[h] = whitespace(v);
    }
    uint64_t quote;
    uint64_t in_string = str.next(bits(b[0], b[1]), bits(q[0], q[1]), &quote);
    return bits(w[0], w[1]) & ~in_string;
}

#endif

} // namespace

extern "C" {

int kc__sj_minify(const char *in, size_t n, char *out, size_t *out_n, int64_t *join_at)
{
#ifdef KC_SJ_AVX2
    minifier mz;
    char *d = out;
    *join_at = -1;
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        if (uint64_t j = mz.next(in + i, ~0ULL, &d)) {
            *join_at = static_cast<int64_t>(i + static_cast<size_t>(__builtin_ctzll(j)));
            return KC_EPARSE;
        }
    }
    if (i < n) {
        char tail[64] = {0};
        memcpy(tail, in + i, n - i);
        if (uint64_t j = mz.next(tail, (1ULL << (n - i)) - 1, &d)) {
            *join_at = static_cast<int64_t>(i + static_cast<size_t>(__builtin_ctzll(j)));
            return KC_EPARSE;
        }
    }
    *out_n = static_cast<size_t>(d - out);
    return mz.str.prev_in_string ? KC_EPARSE : 0; /* a string left open, as simdjson::minify says */
#else
    return minify_reference(in, n, out, out_n, join_at);
#endif
}

int kc__sj_minify_reference(const char *in, size_t n, char *out, size_t *out_n, int64_t *join_at)
{
    return minify_reference(in, n, out, out_n, join_at);
}

size_t kc__sj_ws_outside_strings(const char *text, size_t n)
{
#ifdef KC_SJ_AVX2
    strings str;
    size_t i = 0;
    for (; i + 64 <= n; i += 64)
        if (uint64_t w = ws_outside(str, text + i))
            return i + static_cast<size_t>(__builtin_ctzll(w));
    if (i < n) {
        char tail[64] = {0};
        memcpy(tail, text + i, n - i);
        if (uint64_t w = ws_outside(str, tail) & ((1ULL << (n - i)) - 1))
            return i + static_cast<size_t>(__builtin_ctzll(w));
    }
    return n;
#else
    return kc__json_ws_outside_strings(text, n);
#endif
}

} /* extern "C" */

KC_SJ_END_OF_FILE
