/*
 * version.c - the runtime version of the linked library, built from the
 * OPP_VERSION_* macros of oppacked.h so the two can never disagree.
 */
#include "lib/oppacked.h"

#define OPP_STRINGIFY_(x) #x
#define OPP_STRINGIFY(x)  OPP_STRINGIFY_(x)

static const char opp_version_string_[] = OPP_STRINGIFY(OPP_VERSION_MAJOR) "." OPP_STRINGIFY(
    OPP_VERSION_MINOR) "." OPP_STRINGIFY(OPP_VERSION_PATCH);

// --- public entry

unsigned opp_version_number(void) {
    return (unsigned)OPP_VERSION_NUMBER;
}

const char *opp_version_string(void) {
    return opp_version_string_;
}
