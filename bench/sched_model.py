"""sched_model.py - a list-scheduling model of the Hopper kernel's persistent
grid on the fixed workloads: how far the last SM finishes after the mean,
for each order the items could be claimed in.

The kernel (kernels/hopper_items.cuh) runs items (m-block, sequence, kv
head) of BM query rows, BM / G whole tokens; one block per SM claims the
next item when its current one nears its end. Here an item costs its key
blocks plus a fixed overhead (--overhead, in key blocks: the first block's
unoverlapped S, the last P V, the epilogue), and each SM takes the next
item in order as soon as it is free (greedy list scheduling). Printed per
workload: items, and the makespan over the mean load of an SM
(1.000 = perfect balance) for
  batch   the (sequence, kv head) pairs in batch order, each pair's
          m-blocks highest first (the kernel's order where
          kernels/hopper_sort_rule.h does not sort)
  sorted  the same with the sequences by L_kv descending (the kernel's
          order where it does: few items an SM, lengths that differ)
  level   m-block levels highest first, across every pair (no L2
          locality: a level touches every pair's keys; for reference)
  lpt     every item by cost descending (the ideal list order)
--ahead N models the claim queue (kernels/hopper_producer.cuh): every SM
holds N claimed items beyond the one it runs, claiming the next when it
starts one (the kernel's C::QUEUE entries; 0: the greedy list above). At
the start the SMs claim in turn, first their running items, then their
queues. f32 workloads (the FFMA kernel) are left out; the split-KV rows (decode)
are modelled as if the Hopper kernel ran them. It models no memory
traffic: an order that spreads the running items over many pairs (level,
lpt) loses the L2 reuse that batch and sorted keep.

  python3 bench/sched_model.py [--workloads FILE] [--sms 132] [--overhead 1.5]
                               [--ahead 0]
"""
import argparse
import collections
import heapq
import json
import math
import os

# Hopper configurations (kernels/kernel_list.h): head size -> (BM, BN); the
# D 64 pair's wide configuration (BM 192, BN 96) from 4096 keys on.
CONFIGS = {64: (128, 128), 96: (128, 128), 128: (128, 128), 256: (128, 64)}
WIDE_D64 = (192, 96, 4096)


def config(w, lkv):
    d = w["head_size"]
    db = 64 if d <= 64 else 128 if d <= 128 else 256
    if db == 64 and lkv >= WIDE_D64[2]:
        return WIDE_D64[:2]
    return CONFIGS[db]


def item_cost(w, lq, lkv, mb, bm, bn, overhead):
    """Key blocks of m-block mb of a sequence plus the overhead; None when
    the m-block has no token."""
    g = w["heads"] // w["kv_heads"]
    bmt = bm // g
    if mb * bmt >= lq:
        return None
    last = min(mb * bmt + bmt, lq) - 1
    kend = last + 1 + lkv - lq if w["causal"] else lkv
    kend = max(0, min(kend, lkv))
    return math.ceil(kend / bn) + overhead


def items(w, seq_order, overhead, level=False):
    seqs = list(zip(w["lq"], w["lkv"]))
    out = []
    if not level:
        for b in seq_order:
            lq, lkv = seqs[b]
            bm, bn = config(w, lkv)
            bmt = bm // (w["heads"] // w["kv_heads"])
            for _hk in range(w["kv_heads"]):
                for mb in reversed(range(math.ceil(lq / bmt))):
                    out.append(item_cost(w, lq, lkv, mb, bm, bn, overhead))
        return out
    g = w["heads"] // w["kv_heads"]
    n_mb = max(math.ceil(lq / (config(w, lkv)[0] // g)) for lq, lkv in seqs)
    for mb in reversed(range(n_mb)):
        for b in seq_order:
            lq, lkv = seqs[b]
            bm, bn = config(w, lkv)
            c = item_cost(w, lq, lkv, mb, bm, bn, overhead)
            if c is not None:
                out.extend([c] * w["kv_heads"])
    return out


def makespan(costs, sms, ahead=0):
    """Each SM runs one item and holds `ahead` claimed ones: at the start
    the SMs claim in turn, first their running items, then their queues;
    an SM that ends an item starts its next held one (with none held, it
    claims one) and claims until it holds `ahead` again."""
    nxt = 0
    queues = [collections.deque() for _ in range(sms)]
    running = []  # (end time, sm)
    for s in range(sms):
        if nxt < len(costs):
            heapq.heappush(running, (costs[nxt], s))
            nxt += 1
    for _ in range(ahead):
        for s in range(sms):
            if nxt < len(costs):
                queues[s].append(costs[nxt])
                nxt += 1
    end = 0.0
    while running:
        t, s = heapq.heappop(running)
        end = max(end, t)
        if queues[s]:
            c = queues[s].popleft()
        elif nxt < len(costs):
            c = costs[nxt]
            nxt += 1
        else:
            continue
        heapq.heappush(running, (t + c, s))
        while len(queues[s]) < ahead and nxt < len(costs):
            queues[s].append(costs[nxt])
            nxt += 1
    return end / (sum(costs) / sms)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workloads", default=os.path.join(here, "..", "..", "shared", "bench",
                                                        "workloads.json"))
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--overhead", type=float, default=1.5)
    ap.add_argument("--ahead", type=int, default=0)
    args = ap.parse_args()
    if args.ahead < 0:
        ap.error("--ahead must be >= 0, not %d" % args.ahead)
    with open(args.workloads) as f:
        wls = json.load(f)["workloads"]
    print("| workload | items | batch | sorted | level | lpt |")
    print("|---|---|---|---|---|---|")
    for w in wls:
        if w["dtype"] == "f32":
            continue  # the FFMA kernel's, not the Hopper kernel's
        nb = len(w["lq"])
        batch = list(range(nb))
        by_len = sorted(batch, key=lambda b: (-w["lkv"][b], b))
        rows = [items(w, batch, args.overhead), items(w, by_len, args.overhead),
                items(w, by_len, args.overhead, level=True)]
        lpt = sorted(rows[0], reverse=True)
        spans = [makespan(r, args.sms, args.ahead) for r in rows + [lpt]]
        print("| %s | %d | %s |" % (w["name"], len(rows[0]),
                                    " | ".join("%.3f" % s for s in spans)))


if __name__ == "__main__":
    main()
