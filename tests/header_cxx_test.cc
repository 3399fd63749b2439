/*
 * header_cxx_test.cc - the public header compiles as C++17 (-pedantic
 * -Werror) and its functions link with C linkage through extern "C".
 * No CMocka: a minimal main that returns non-zero on a failed check.
 */
#include "lib/oppacked.h"

#include <cstdio>
#include <cstring>

static_assert(OPP_STATUS_CATEGORY(OPP_STATUS_NOT_SUPPORTED_ALGO) == OPP_STATUS_NOT_SUPPORTED,
              "status category macro works in C++");

int main() {
    int failures = 0;
    if (std::strcmp(opp_status_name(OPP_STATUS_BAD_PARAM_STRIDE), "BAD_PARAM_STRIDE") != 0) {
        std::fprintf(stderr, "FAILED: opp_status_name\n");
        ++failures;
    }
    opp_attention_desc_t desc;
    opp_attention_desc_init(&desc);
    if (opp_attention_claim_check(&desc) != OPP_STATUS_BAD_PARAM_DTYPE ||
        std::strstr(opp_last_error_message(), "q_dtype = 0 (undefined) is not set") == nullptr) {
        std::fprintf(stderr, "FAILED: claim_check on an unset desc: %s\n",
                     opp_last_error_message());
        ++failures;
    }
    std::printf("header_cxx_test: %s\n", failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
