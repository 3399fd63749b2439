"""cc_static_archive(): one static library from a cc_library and its deps.

Bazel's own lib<name>.a holds only a target's own objects. Users link one
archive, so this rule collects every static library and object file of the
given targets (transitively, excluding the CUDA toolkit's own libraries) and
merges their members into a single archive with ar.
"""

def _cc_static_archive_impl(ctx):
    inputs = []
    for dep in ctx.attr.deps:
        for linker_input in dep[CcInfo].linking_context.linker_inputs.to_list():
            for lib in linker_input.libraries:
                archive = lib.pic_static_library or lib.static_library
                if archive != None:
                    if "external/" in archive.path:
                        continue
                    inputs.append(archive)
                elif lib.objects:
                    inputs.extend(lib.objects)
    out = ctx.actions.declare_file(ctx.attr.out)
    script = ["set -e", "out=$1; shift", "tmp=$(mktemp -d)", "n=0"]
    script.append('for f in "$@"; do n=$((n+1)); mkdir "$tmp/$n"; case "$f" in *.a) (cd "$tmp/$n" && ar x "$OLDPWD/$f");; *) cp "$f" "$tmp/$n/";; esac; done')
    script.append('rm -f "$out"; ar rcs "$out" $(find "$tmp" -type f -name "*.o" | sort)')
    script.append('rm -rf "$tmp"')
    ctx.actions.run_shell(
        inputs = inputs,
        outputs = [out],
        command = "\n".join(script),
        arguments = [out.path] + [f.path for f in inputs],
        mnemonic = "CcStaticArchive",
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

cc_static_archive = rule(
    implementation = _cc_static_archive_impl,
    attrs = {
        "deps": attr.label_list(providers = [CcInfo]),
        "out": attr.string(mandatory = True),
    },
    doc = "Merges the static libraries and objects of deps into one archive.",
)
