// Compiles every public header as C++ (through the umbrella header) and calls a few functions,
// proving the headers are C++-clean and the symbols are exported with C linkage.
#include <kcache.h>
#include <cstdio>
#include <cstring>

int main()
{
    if (std::strcmp(kc_version(), KC_VERSION_STRING) != 0) {
        std::fprintf(stderr, "version mismatch: %s vs %s\n", kc_version(), KC_VERSION_STRING);
        return 1;
    }
    if (std::strcmp(kc_errno_name(KC_ENOTFOUND), "KC_ENOTFOUND") != 0) {
        std::fprintf(stderr, "kc_errno_name(KC_ENOTFOUND) = %s\n", kc_errno_name(KC_ENOTFOUND));
        return 1;
    }
    std::printf("headers compile as C++ and link\n");
    return 0;
}
