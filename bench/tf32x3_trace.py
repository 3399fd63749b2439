#!/usr/bin/env python3
"""tf32x3_trace.py - where the 3xTF32 kernel's time goes, from an event trace
(kernels/hopper_trace.cuh's buffer, the TT_* events of kernels/tf32x3_ws.cuh:
a development build with OPP__HOPPER_TRACE 1 in kernels/tf32x3_d64.cu, run
with OPP_HOP_TRACE=<path>; the launcher writes <path>.f32 at exit).

    python3 bench/tf32x3_trace.py trace.f32 [--blocks 640] [--cap 512] [--mhz 1755]

Prints the consumers' time per key block by phase (K wait, S, softmax and
P's split, V wait, P V, and the merge), the producer's (load wait, the waits
for the consumers' releases, the two splits), the item-level phases (Q's
split, the release of the blocks past a consumer's rows, the epilogue), and
per SM the span of its blocks against the busiest SM's.
"""
import argparse
import struct
import sys
from collections import defaultdict

from hop_trace import events  # the trace words' decoder (the same buffer layout)

P_LANDED, P_KFREE, P_KDONE, P_VFREE, P_VDONE = 40, 41, 42, 43, 44
C_ITEM, C_QDONE, C_KFULL, C_SDONE, C_PDONE, C_VFULL, C_PVDONE, C_REST, C_EPI = range(48, 57)
START = 0  # HT_START
NAMES = {P_LANDED: "wait landed", P_KFREE: "wait k_empty", P_KDONE: "split K",
         P_VFREE: "wait v_empty", P_VDONE: "split V",
         C_ITEM: "item start", C_QDONE: "Q split", C_KFULL: "merge + wait K",
         C_SDONE: "S (issue, queue, product)", C_PDONE: "softmax + P split",
         C_VFULL: "wait V", C_PVDONE: "P V (issue, queue, product)",
         C_REST: "release the rest", C_EPI: "epilogue"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--blocks", type=int, default=640)
    ap.add_argument("--cap", type=int, default=512)
    ap.add_argument("--roles", type=int, default=4)
    ap.add_argument("--mhz", type=float, default=1755.0)
    o = ap.parse_args()
    raw = open(o.trace, "rb").read()
    n = len(raw) // 8
    if n != o.blocks * o.roles * o.cap:
        sys.exit("%s: %d words, not %d x %d x %d" % (o.trace, n, o.blocks, o.roles, o.cap))
    buf = struct.unpack("<%dQ" % n, raw)
    phase = [defaultdict(int), defaultdict(int)]  # producer, consumers: cycles by event
    count = [defaultdict(int), defaultdict(int)]
    sm_span = defaultdict(lambda: [None, None, 0])  # smid -> first, last, blocks
    blocks = 0
    for b in range(o.blocks):
        ev0 = events(buf, b, 0, o.roles, o.cap)
        if not ev0 or ev0[0][0] != START:
            continue
        blocks += 1
        sm = ev0[0][1]
        t_first = ev0[0][2]
        t_last = t_first
        for r in range(o.roles):
            ev = events(buf, b, r, o.roles, o.cap)
            if not ev:
                continue
            k = 0 if r == 0 else 1
            for (e0, _, t0), (e1, _, t1) in zip(ev, ev[1:]):
                phase[k][e1] += t1 - t0
                count[k][e1] += 1
            t_last = max(t_last, ev[-1][2])
        s = sm_span[sm]
        s[0] = t_first if s[0] is None else min(s[0], t_first)
        s[1] = t_last if s[1] is None else max(s[1], t_last)
        s[2] += 1
    print("%d traced blocks on %d SMs" % (blocks, len(sm_span)))
    for k, who in ((0, "producer"), (1, "consumers")):
        tot = sum(phase[k].values())
        print("%s: %.0f k cycles in all" % (who, tot / 1e3))
        for e, c in sorted(phase[k].items(), key=lambda x: -x[1]):
            print("  %-30s %5.1f %%  %7d times  %7.0f cycles each" %
                  (NAMES.get(e, str(e)), 100.0 * c / tot, count[k][e], c / max(count[k][e], 1)))
    spans = sorted(s[1] - s[0] for s in sm_span.values())
    if spans:
        print("per-SM span (first event to last, cycles): min %d, median %d, max %d (%.1f us at %.0f MHz)"
              % (spans[0], spans[len(spans) // 2], spans[-1], spans[-1] / o.mhz, o.mhz))


if __name__ == "__main__":
    main()
