#!/usr/bin/env python3
"""sass_loop.py - the basic blocks of a kernel's main loop in cuobjdump -sass
text: how many instructions a thread issues there, block by block, for the
instruction budget of an issue-bound kernel on a machine without a GPU (the
forty-seventh session counted the FFMA kernel's and the D 64 Hopper
kernel's key blocks this way). Standard library only.

    python3 tools/sass_loop.py FILE [--fun SUBSTR] [--has OP,..] [--skip OP,..]

FILE     cuobjdump -sass output (e.g. `cuobjdump -sass -fun NAME x.cubin`);
         several functions may be in it
--fun    the function whose name contains SUBSTR (the first such; default
         the first function in FILE)
--has    opcodes the loop must contain (default HGMMA,MUFU.EX2): the loop
         reported is the smallest one (a backward branch's target .. the
         branch) that holds all of them
--skip   opcodes that mark a block as off the common path (default
         MUFU.RCP,FSEL: the softcap's reciprocal, the masks' selects); a
         block holding any is listed but not counted in `path`

Prints the loop's range and size, its inner loops (size each: a trip
count is the caller's to apply), then one line per basic block (split at
branch targets and after branches): address, instructions, the branch
that ends it, its most frequent opcodes, and "skip" where --skip matched;
last `path: N instructions outside inner loops and skipped blocks`.
An opcode is the mnemonic's first dotted part unless the option names a
dotted one (MUFU.RCP matches MUFU.RCP only).
Exit status: 0; 2 when the file has no such function or loop.
"""

import argparse
import collections
import re
import sys

INS = re.compile(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
FUN = re.compile(r"Function : (\S+)")
BRA = re.compile(r"\bBRA\b.*?0x([0-9a-f]+)")


def parse(text):
    """{function name: [(address, instruction text)]} in file order."""
    funs, cur = {}, None
    for line in text.splitlines():
        m = FUN.search(line)
        if m:
            cur = funs.setdefault(m.group(1), [])
            continue
        m = INS.match(line)
        if m and cur is not None:
            cur.append((int(m.group(1), 16), m.group(2)))
    return funs


def mnemonic(ins):
    """The instruction's mnemonic without its predicate (e.g. MUFU.EX2)."""
    return re.sub(r"^@!?U?P\w+\s+", "", ins).split()[0]


def matches(ins, ops):
    """Whether the instruction is one of ops (dotted names match whole)."""
    mn = mnemonic(ins)
    return any(mn == op or mn.startswith(op + ".") for op in ops)


def loops(ins):
    """(first, last) index pairs of every backward branch's range."""
    where = {a: i for i, (a, _) in enumerate(ins)}
    out = []
    for i, (a, t) in enumerate(ins):
        m = BRA.search(t)
        if m:
            tgt = int(m.group(1), 16)
            if tgt <= a and tgt in where:
                out.append((where[tgt], i))
    return out


def pick_loop(ins, has):
    """The smallest loop holding every opcode of has, or None."""
    best = None
    for s, e in loops(ins):
        body = [t for _, t in ins[s:e + 1]]
        if all(any(matches(t, [op]) for t in body) for op in has):
            if best is None or e - s < best[1] - best[0]:
                best = (s, e)
    return best


def blocks(ins, s, e):
    """The basic blocks of ins[s..e]: split before branch targets and after
    branches. A list of index lists."""
    targets = set()
    for _, t in ins:
        m = BRA.search(t)
        if m:
            targets.add(int(m.group(1), 16))
    out, cur = [], []
    for i in range(s, e + 1):
        a, t = ins[i]
        if a in targets and cur:
            out.append(cur)
            cur = []
        cur.append(i)
        if BRA.search(t) or mnemonic(t) == "EXIT":
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def report(ins, s, e, skip, out):
    """Writes the loop's report; returns the path count."""
    inner = [(a, b) for a, b in loops(ins) if s <= a and b <= e and (a, b) != (s, e)]
    in_inner = set()
    for a, b in inner:
        in_inner.update(range(a, b + 1))
    out.write(f"loop 0x{ins[s][0]:x} .. 0x{ins[e][0]:x}: {e - s + 1} instructions\n")
    for a, b in inner:
        out.write(f"  inner loop 0x{ins[a][0]:x} .. 0x{ins[b][0]:x}: {b - a + 1} instructions\n")
    path = skipped = 0
    for blk in blocks(ins, s, e):
        texts = [ins[i][1] for i in blk]
        ops = collections.Counter(mnemonic(t).split(".")[0] for t in texts)
        top = " ".join(f"{k} {v}" for k, v in ops.most_common(6))
        last = texts[-1] if BRA.search(texts[-1]) else ""
        if blk[0] in in_inner:
            tag = "inner"
        elif any(matches(t, skip) for t in texts):
            tag = "skip"
            skipped += len(blk)
        else:
            tag = ""
            path += len(blk)
        out.write(f"  0x{ins[blk[0]][0]:05x} {len(blk):5d} {tag:5s} {top}"
                  + (f"  [{last}]" if last else "") + "\n")
    out.write(f"path: {path} instructions outside inner loops and skipped blocks"
              f" (skipped {skipped})\n")
    return path


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--fun", default="")
    ap.add_argument("--has", default="HGMMA,MUFU.EX2")
    ap.add_argument("--skip", default="MUFU.RCP,FSEL")
    a = ap.parse_args(argv)
    funs = parse(open(a.file, encoding="utf-8").read())
    names = [n for n in funs if a.fun in n]
    if not names:
        print(f"sass_loop: no function matching {a.fun!r} in {a.file}", file=sys.stderr)
        return 2
    ins = funs[names[0]]
    has = [x for x in a.has.split(",") if x]
    picked = pick_loop(ins, has)
    if picked is None:
        print(f"sass_loop: {names[0]}: no loop holds {','.join(has)}", file=sys.stderr)
        return 2
    print(f"function {names[0]}")
    report(ins, picked[0], picked[1], [x for x in a.skip.split(",") if x], sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
