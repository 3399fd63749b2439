"""setup.py - the two things pyproject.toml cannot say statically:

* the version, read from lib/oppacked.h (OPP_VERSION_MAJOR/MINOR/PATCH);
* the bundled library: liboppacked.so is copied into the package from
  $OPPACKED_LIB if set, else from the Bazel output ../bazel-bin/liboppacked.so.
  When neither exists the package installs without it and finds the library
  at run time (OPPACKED_LIB, OPPACKED_PREFIX, ...: oppacked/_lib.py). A wheel
  that bundles it is tagged for this platform, not as pure Python.
"""
import os
import re
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = os.path.join(HERE, "..", "lib", "oppacked.h")


def version():
    if not os.path.exists(HEADER):
        return "0.0.0"
    text = open(HEADER).read()
    parts = [re.search(rf"#define OPP_VERSION_{p}\s+(\d+)", text).group(1)
             for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def bundled_library():
    path = os.environ.get("OPPACKED_LIB") or os.path.join(HERE, "..", "bazel-bin",
                                                          "liboppacked.so")
    return os.path.realpath(path) if os.path.exists(path) else None


class BuildPyWithLibrary(build_py):
    def run(self):
        super().run()
        lib = bundled_library()
        if lib is None:
            print("oppacked: no liboppacked.so to bundle (bazel build //:liboppacked.so, or set "
                  "OPPACKED_LIB); it will be looked up at run time")
            return
        target = os.path.join(self.build_lib, "oppacked", "liboppacked.so")
        shutil.copyfile(lib, target)
        os.chmod(target, 0o755)
        print(f"oppacked: bundled {lib}")


class PlatformDistribution(Distribution):
    def has_ext_modules(self):
        return bundled_library() is not None


setup(version=version(), cmdclass={"build_py": BuildPyWithLibrary},
      distclass=PlatformDistribution)
