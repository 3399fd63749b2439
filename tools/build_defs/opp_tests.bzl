"""opp_cpu_test() and opp_gpu_test(): the two kinds of CMocka test binary.

Every test in tests/ is one binary per module (STYLE.md §13, §15), named
*_test, size "small" unless it says otherwise, compiled with OPP_TEST_COPTS
and linked with the CMocka helpers //tests:test_util (assert_opp_ok, the
bit / ulp comparators; they bring -lcmocka -lm).

A GPU test also gets the GPU helpers //tests:gpu_util (device count and
skip(), allocation, copies; harness CUDA failures fail the test) and the
static CUDA runtime, linked statically into the binary (linkstatic: user
libraries go into the binary, not into .so files whose cudart symbols would
stay unresolved), and the tag "gpu" (bazel test --test_tag_filters=-gpu
leaves them out). Without a device its tests skip(); they run on the GPU
machine from the binaries tools/gpu_stage.sh stages.
"""

load(":copts.bzl", "OPP_TEST_COPTS")

_TEST_UTIL = "//tests:test_util"
_GPU_DEPS = [
    "//tests:gpu_util",
    "@cuda//:cudart",
]

def _with(deps, extra):
    return deps + [d for d in extra if d not in deps]

def opp_cpu_test(name, srcs = None, deps = [], copts = None, size = "small", test_util = True, **kwargs):
    """A CPU test: cc_test with the test copts and the CMocka helpers.

    Args:
      name: the target, *_test.
      srcs: default [name + ".c"].
      deps: what the test uses besides //tests:test_util.
      copts: default OPP_TEST_COPTS.
      size: default "small".
      test_util: False for a test that must not link the helpers (the
        public-header tests compile the header alone).
      **kwargs: passed to cc_test (data, args, linkopts, linkstatic, ...).
    """
    native.cc_test(
        name = name,
        srcs = srcs if srcs != None else [name + ".c"],
        copts = copts if copts != None else OPP_TEST_COPTS,
        size = size,
        deps = _with(deps, [_TEST_UTIL] if test_util else []),
        **kwargs
    )

def opp_gpu_test(name, srcs = None, deps = [], size = "small", tags = [], **kwargs):
    """A GPU test: a CPU test plus the GPU helpers, static CUDA runtime, tag "gpu".

    Args:
      name: the target, *_test.
      srcs: default [name + ".c"].
      deps: what the test uses besides the helpers and the CUDA runtime.
      size: default "small".
      tags: added to "gpu".
      **kwargs: passed to cc_test (data, args, ...).
    """
    native.cc_test(
        name = name,
        srcs = srcs if srcs != None else [name + ".c"],
        copts = OPP_TEST_COPTS,
        size = size,
        linkstatic = True,
        tags = _with(["gpu"], tags),
        deps = _with(deps, [_TEST_UTIL] + _GPU_DEPS),
        **kwargs
    )
