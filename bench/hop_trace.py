#!/usr/bin/env python3
"""hop_trace.py - where the Hopper kernel's time goes, from an event trace
(kernels/hopper_trace.cuh: a build with OPP__HOPPER_TRACE 1, run with
OPP_HOP_TRACE=<path>; the launcher writes <path>.d<DB> at exit).

    python3 bench/hop_trace.py trace.d128 [--mhz 1980]

Prints, over every SM's persistent block: the consumers' time by phase
(waiting for the next item's Q, block 0's K, S and softmax, each step's
waits and work, the last P V, the epilogue), per item and in total; the
loader's wait for each claimed item (the claim queue's; before it, the
claim itself); and the spread of the blocks' end times.
"""
import argparse
import struct
import sys
from collections import defaultdict

BLOCKS, ROLES, CAP = 144, 4, 8192
# consumer phase of an event: the time since the consumer's previous event
# (21: the pingpong turn, in traces of builds that recorded it)
PHASES = {16: "wait Q (after epilogue)", 17: "block 0: wait K", 18: "block 0: turn + S",
          19: "block 0: softmax + P", 20: "step: wait K", 21: "step: wait turn",
          22: "step: turn + issue + wait S", 23: "step: softmax + wait PV", 24: "step: rescale + P",
          25: "last: wait V", 26: "last: zero V rows + P V", 27: "epilogue: store",
          28: "epilogue: sums, LSE", 29: "epilogue: wait tile + barrier",
          30: "epilogue: O / l to shared + barrier"}


def events(buf, blk, role, roles=ROLES, cap=CAP):
    """Block blk's role's events (event, argument, clock), None if its run
    is not whole; roles, cap: the buffer's shape (kernels/hopper_trace.cuh)."""
    base = (blk * roles + role) * cap
    if base + cap > len(buf):
        return None  # a file of fewer blocks (a test's)
    out = []
    for i in range(cap):
        w = buf[base + i]
        e = w >> 56
        if e == 255:
            return out if (w & 0xFFFF) == len(out) else None
        out.append((e, (w >> 48) & 0xFF, w & ((1 << 48) - 1)))
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--mhz", type=float, default=1980.0)
    args = ap.parse_args()
    try:
        raw = open(args.path, "rb").read()
    except OSError as e:
        sys.exit("hop_trace.py: %s" % e)
    buf = struct.unpack("<%dQ" % (len(raw) // 8), raw)
    us = lambda c: c / args.mhz
    phase = defaultdict(int)     # consumer phase -> cycles (both consumers summed)
    count = defaultdict(int)
    items = 0   # items of the first consumer (each consumer runs every item)
    citems = 0  # (consumer, item) pairs
    blocks_seen = 0
    starts, ends = [], []
    claims = []
    qempty = []
    nkb_hist = defaultdict(int)
    for blk in range(BLOCKS):
        ev0 = events(buf, blk, 0)
        if not ev0:
            continue
        blocks_seen += 1
        t_start = ev0[0][2]
        # the loader: its wait for a claimed item, then for q_empty
        last_claim = last_claim_end = None
        for e, a, t in ev0:
            if e == 1:
                last_claim = t
            elif e == 2 and last_claim is not None:
                claims.append(t - last_claim)
                last_claim_end = t
            elif e == 3 and last_claim_end is not None:
                qempty.append(t - last_claim_end)
        block_end = t_start
        for role in (1, 2, 3):
            ev = events(buf, blk, role)
            if not ev:
                continue
            prev_t = ev[0][2]
            prev_e = 0
            for e, a, t in ev[1:]:
                d = t - prev_t
                key = PHASES.get(e, "?")
                if e == 16 and prev_e == 0:
                    key = "wait first Q"
                if e == 16 and prev_e == 16:
                    key = "wait Q (after empty item)"
                phase[key] += d
                count[key] += 1
                if e == 16 and a < 253:
                    citems += 1
                    if role == 1:
                        items += 1
                        nkb_hist[a] += 1
                prev_t, prev_e = t, e
            block_end = max(block_end, prev_t)
        starts.append(t_start)
        ends.append(block_end - t_start)
    if blocks_seen == 0:
        sys.exit("no block's trace in %s" % args.path)
    tot = sum(phase.values())
    print("%d blocks, %d items (%.1f an SM), mean key blocks an item %.2f" % (
        blocks_seen, items, items / blocks_seen,
        sum(k * v for k, v in nkb_hist.items()) / max(1, sum(nkb_hist.values()))))
    print("block span: mean %.1f us, min %.1f, max %.1f (tail: max / mean %.3f)" % (
        us(sum(ends) / len(ends)), us(min(ends)), us(max(ends)), max(ends) / (sum(ends) / len(ends))))
    print("\nconsumer time by phase (both consumers, all SMs):")
    print("%-32s %10s %7s %10s %12s" % ("phase", "total us", "share", "count", "us / event"))
    for k in sorted(phase, key=lambda k: -phase[k]):
        print("%-32s %10.1f %6.1f%% %10d %12.3f" % (k, us(phase[k]), 100.0 * phase[k] / tot, count[k],
                                                   us(phase[k] / count[k])))
    steps = count["step: rescale + P"]
    step_cyc = sum(phase[k] for k in phase if k.startswith("step"))
    edge = tot - step_cyc
    print("\nsteady steps: %.3f us a step (%d steps); everything else %.3f us an item per consumer" % (
        us(step_cyc / max(1, steps)), steps, us(edge / max(1, citems))))
    if claims:
        claims.sort()
        print("loader's wait for a claimed item: median %.3f us, p90 %.3f, max %.3f (%d items)" % (
            us(claims[len(claims) // 2]), us(claims[int(len(claims) * 0.9)]), us(claims[-1]), len(claims)))
    if qempty:
        qempty.sort()
        print("loader's wait for q_empty after it: median %.3f us, p90 %.3f" % (
            us(qempty[len(qempty) // 2]), us(qempty[int(len(qempty) * 0.9)])))


if __name__ == "__main__":
    main()
