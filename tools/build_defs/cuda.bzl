"""nvcc_object(): the one way .cu files are compiled (DESIGN.md section 6).

Each .cu becomes an object through a genrule that calls the toolkit's nvcc,
for sm_80, sm_86, sm_89 and sm_90 machine code plus compute_80 PTX (so every
GPU from A100 on runs it, a newer one through the driver's JIT); Hopper-only
kernels pass archs = OPP_CUDA_ARCH_HOPPER (sm_90a). The objects are wrapped
in a cc_library that links the static CUDA runtime.
nvcc is called through its real path (readlink -f) because it finds cicc,
ptxas and its headers relative to itself, not through Bazel's symlink.
"""

# The architecture lists, defined once. The default: every GPU from A100 on.
OPP_CUDA_ARCH_FLAGS = [
    "-gencode=arch=compute_80,code=sm_80",
    "-gencode=arch=compute_86,code=sm_86",
    "-gencode=arch=compute_89,code=sm_89",
    "-gencode=arch=compute_90,code=sm_90",
    "-gencode=arch=compute_80,code=compute_80",
]

# Hopper-only kernels (wgmma, setmaxnreg): sm_90a machine code alone; only
# dispatch rows for compute capability 9.0 may name them.
OPP_CUDA_ARCH_HOPPER = [
    "-gencode=arch=compute_90a,code=sm_90a",
]

OPP_NVCC_FLAGS = [
    "-std=c++17",
    "-O3",
    "-Xcompiler=-fPIC,-Wall,-Wextra,-Werror",
    "-Werror=all-warnings",
    "--expt-relaxed-constexpr",
]

def _cc_headers_impl(ctx):
    headers = [dep[CcInfo].compilation_context.headers for dep in ctx.attr.deps]
    return [DefaultInfo(files = depset(transitive = headers))]

# The header files a list of cc_library targets provide (transitively), as
# plain files: a genrule (nvcc) sees only the files it lists as inputs.
cc_headers = rule(
    implementation = _cc_headers_impl,
    attrs = {"deps": attr.label_list(providers = [CcInfo])},
    doc = "The header files of the given cc_library targets (transitively).",
)

def nvcc_object(name, srcs, hdrs = [], deps = [], copts = [], archs = OPP_CUDA_ARCH_FLAGS, visibility = None, testonly = False, ptxas_strict = False):
    """Compiles each .cu in srcs with nvcc and wraps the objects in a cc_library.

    Args:
      name: the cc_library name; objects are <name>_<src>.o.
      srcs: .cu files, one object each.
      hdrs: headers the .cu files include (inputs of every nvcc action).
      deps: cc_library deps: their headers (transitively) are inputs of every
        nvcc action, and the wrapper links them.
      copts: extra nvcc flags (for example -fmad=false for exact kernels).
      archs: the -gencode flags (OPP_CUDA_ARCH_FLAGS or OPP_CUDA_ARCH_HOPPER).
      visibility: of the wrapper and the objects.
      testonly: of every generated target.
      ptxas_strict: compile through tools/build_defs/nvcc_checked.sh, which
        fails the action when ptxas reports wgmma serialisation (C7510-C7520)
        or an ignored setmaxnreg (C7508): ptxas prints those as info, so
        -Xptxas=-Werror does not catch them.
    """
    dep_headers = name + "_dep_headers"
    cc_headers(name = dep_headers, deps = deps, testonly = testonly)
    objs = []
    for src in srcs:
        base = src.replace("/", "_").rsplit(".", 1)[0]
        obj = name + "_" + base + ".o"
        native.genrule(
            name = name + "_" + base + "_nvcc",
            srcs = [src] + hdrs + [":" + dep_headers, "@cuda//:nvcc"],
            outs = [obj],
            cmd = ((("$(location //tools/build_defs:nvcc_checked.sh) ") if ptxas_strict else "") +
                   "$$(readlink -f $(location @cuda//:nvcc)) -c " + " ".join(archs + OPP_NVCC_FLAGS + copts) +
                   " -objtemp -I. -I$(GENDIR) -Iexternal/cuda/include" +
                   " $(location " + src + ") -o $@"),
            tools = ["//tools/build_defs:nvcc_checked.sh"] if ptxas_strict else [],
            testonly = testonly,
            visibility = visibility,
        )
        objs.append(obj)
    native.cc_library(
        name = name,
        srcs = objs,
        hdrs = hdrs,
        deps = deps + ["@cuda//:cudart"],
        linkstatic = True,
        visibility = visibility,
        testonly = testonly,
    )
