"""Compiler flags for every C target, defined once.

C is C11 with warnings as errors. -ffp-contract=off keeps the compiler from
fusing a*b+c on its own: the exact path writes every fused multiply-add as an
explicit fma() (DESIGN.md section 4), so no other contraction may happen.
"""

OPP_C_COPTS = [
    "-std=c11",
    "-D_POSIX_C_SOURCE=200809L",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wshadow",
    "-Wstrict-prototypes",
    "-Wmissing-prototypes",
    "-Wno-unused-parameter",
    "-ffp-contract=off",
    "-fno-fast-math",
]

# Tests and tools: the same rules, minus -Wmissing-prototypes (CMocka test
# functions are file-local by convention but not always declared static).
OPP_TEST_COPTS = [c for c in OPP_C_COPTS if c != "-Wmissing-prototypes"]

OPP_CXX_COPTS = [
    "-std=c++17",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-ffp-contract=off",
]
