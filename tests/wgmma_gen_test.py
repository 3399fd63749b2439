#!/usr/bin/env python3
"""wgmma_gen_test.py - a generated wgmma header (kernels/wgmma_ops.cuh,
kernels/wgmma_tf32_ops.cuh) is exactly what its generator writes (the
generator is the source of the wrappers; an edit to the header alone would
be lost on the next run), it holds the expected number of wrappers (7 when
not given), and every wrapper's accumulator operand list is complete: N/2
outputs %0..%(N/2-1), each bound to d[i].

    python3 tests/wgmma_gen_test.py tools/gen/gen_wgmma.py kernels/wgmma_ops.cuh
    python3 tests/wgmma_gen_test.py tools/gen/gen_wgmma_tf32.py kernels/wgmma_tf32_ops.cuh 1
Prints the checks, then "all N checks ok" or "N of M checks FAILED" (exit 1).
"""

import re
import subprocess
import sys


def main():
    gen, header = sys.argv[1], sys.argv[2]
    want = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    out = subprocess.run([sys.executable, gen], check=True, capture_output=True, text=True).stdout
    with open(header) as f:
        text = f.read()
    checks = [("header == generator output", out == text)]
    for m in re.finditer(r"void wgmma_(ss|rs|tf32_rs)_n(\d+)\(float \(&d\)\[(\d+)\]", text):
        n, nacc = int(m.group(2)), int(m.group(3))
        body = text[m.end(): text.find("\n}\n", m.end())]
        ok = nacc == n // 2
        for i in range(nacc):
            ok = ok and ('"+f"(d[%d])' % i) in body and ("%%%d" % i) in body
        checks.append(("wgmma_%s_n%d: %d accumulators bound" % (m.group(1), n, nacc), ok))
    checks.append(("%d wrapper(s)" % want, len(checks) == want + 1))
    bad = 0
    for name, ok in checks:
        print(("ok      " if ok else "FAILED  ") + name)
        bad += not ok
    if bad:
        print("%d of %d checks FAILED" % (bad, len(checks)))
        return 1
    print("all %d checks ok" % len(checks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
