#!/usr/bin/env python3
"""sass_loop_py_test.py - tools/sass_loop.py on a hand-written cuobjdump
-sass text (two functions; in the second an outer loop holding an inner
loop, a skipped block and a branch into the loop's middle): which function
and loop it picks, where it splits the blocks, what it skips and counts,
and its exit status 2 for a missing function or loop.

    python3 tests/sass_loop_py_test.py
Prints one line per check, then "all N checks ok" or "N of M checks
FAILED" (exit 1).
"""

import io
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
import sass_loop  # noqa: E402
sys.path.insert(0, HERE)
import py_checks  # noqa: E402  (tests/py_checks.py: the report)

# Addresses step by 0x10, as cuobjdump prints them; the encodings' comment
# lines are left out (the parser skips what it does not match).
SASS = """
        Function : first_kernel
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   EXIT ;
        Function : second_kernel
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   IMAD R2, R1, 0x4, RZ ;
        /*0020*/                   HGMMA.64x64x16.F32 R24, gdesc[UR8], RZ, !UPT ;
        /*0030*/                   FFMA R3, R2, R2, R3 ;
        /*0040*/                   FFMA R4, R2, R3, R4 ;
        /*0050*/              @!P0 BRA 0x30 ;
        /*0060*/              @P1 BRA 0xa0 ;
        /*0070*/                   MUFU.RCP R5, R5 ;
        /*0080*/                   FMUL R5, R5, R5 ;
        /*0090*/                   FSETP.GT.AND P2, PT, R5, RZ, PT ;
        /*00a0*/                   MUFU.EX2 R6, R6 ;
        /*00b0*/                   FADD R7, R6, R7 ;
        /*00c0*/              @!P3 BRA 0x20 ;
        /*00d0*/                   EXIT ;
"""


def run(argv):
    """(exit status, stdout) of sass_loop.main on argv."""
    out, old = io.StringIO(), sys.stdout
    sys.stdout = out
    try:
        status = sass_loop.main(argv)
    finally:
        sys.stdout = old
    return status, out.getvalue()


def checks():
    out = []
    funs = sass_loop.parse(SASS)
    out.append(("functions parsed", sorted(funs), ["first_kernel", "second_kernel"]))
    ins = funs["second_kernel"]
    out.append(("second_kernel instructions", len(ins), 14))
    out.append(("mnemonic drops the predicate", sass_loop.mnemonic(ins[5][1]), "BRA"))
    out.append(("MUFU.RCP matches only itself",
                [sass_loop.matches(t, ["MUFU.RCP"]) for _, t in ins[7:11:3]], [True, False]))
    out.append(("a plain name matches every dotted form",
                sass_loop.matches(ins[2][1], ["HGMMA"]), True))
    out.append(("backward branches", sorted(sass_loop.loops(ins)), [(2, 12), (3, 5)]))
    out.append(("the loop with HGMMA and MUFU.EX2",
                sass_loop.pick_loop(ins, ["HGMMA", "MUFU.EX2"]), (2, 12)))
    out.append(("the loop with FFMA alone (the smallest)",
                sass_loop.pick_loop(ins, ["FFMA"]), (3, 5)))
    out.append(("no loop with LDS", sass_loop.pick_loop(ins, ["LDS"]), None))
    # blocks of 2..12: [2] (0x30 is a target), [3..5] (ends in BRA), [6] (BRA),
    # [7..9] (0xa0 is a target), [10..12] (ends in BRA)
    out.append(("blocks", sass_loop.blocks(ins, 2, 12),
                [[2], [3, 4, 5], [6], [7, 8, 9], [10, 11, 12]]))
    buf = io.StringIO()
    path = sass_loop.report(ins, 2, 12, ["MUFU.RCP"], buf)
    out.append(("path: outside the inner loop and the skipped block", path, 1 + 1 + 3))
    text = buf.getvalue()
    out.append(("report names the loop", text.splitlines()[0],
                "loop 0x20 .. 0xc0: 11 instructions"))
    out.append(("report names the inner loop",
                "inner loop 0x30 .. 0x50: 3 instructions" in text, True))
    out.append(("report marks the skipped block", " skip " in text.splitlines()[5], True))
    out.append(("report's last line", text.splitlines()[-1],
                "path: 5 instructions outside inner loops and skipped blocks (skipped 3)"))
    with tempfile.NamedTemporaryFile("w", suffix=".sass", delete=False) as f:
        f.write(SASS)
        name = f.name
    try:
        status, stdout = run([name, "--fun", "second"])
        out.append(("main: exit status", status, 0))
        out.append(("main: the function line", stdout.splitlines()[0], "function second_kernel"))
        last = stdout.splitlines()[-1]
        out.append(("main: the default skip (MUFU.RCP, FSEL)", last.split(":")[1].split()[0],
                    "5"))
        out.append(("main: no such function", run([name, "--fun", "third"])[0], 2))
        out.append(("main: no such loop", run([name, "--fun", "first"])[0], 2))
    finally:
        os.unlink(name)
    return out


if __name__ == "__main__":
    sys.exit(py_checks.report(checks()))
