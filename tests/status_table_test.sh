#!/bin/sh
# status_table_test.sh - the README's status table (section "Errors and
# statuses") matches lib/oppacked.h's OPP_STATUS_MAP: the same statuses with
# the same values, in the same order; and every status the table does not
# mark "reserved" is returned somewhere in the code (named outside comments
# in lib/ or reference/ sources other than the header), while a "reserved"
# one is not.
# Usage (from Bazel): status_table_test.sh <README.md> <oppacked.h> <sources...>
set -eu
exec python3 - "$@" <<'PY'
import re
import sys

readme, header, sources = sys.argv[1], sys.argv[2], sys.argv[3:]
fail = []

hdr = open(header).read()
listed = [(m.group(1), int(m.group(2)))
          for m in re.finditer(r'^\s*XX\((\w+), (\d+), "', hdr, re.M)]
if len(listed) < 40:
    fail.append(f"found only {len(listed)} statuses in {header}")

text = open(readme).read()
start = text.find("\n## Errors and statuses\n")
if start < 0:
    fail.append("README has no section '## Errors and statuses'")
    section = ""
else:
    end = text.find("\n## ", start + 1)
    section = text[start:end if end > 0 else len(text)]
rows = [(m.group(1), int(m.group(2)), m.group(3))
        for m in re.finditer(r'^\| `OPP_STATUS_(\w+)` \| (\d+) \| (.+) \|$', section, re.M)]
if [(n, v) for n, v, _ in rows] != listed:
    fail.append("README table != OPP_STATUS_MAP:\n  table:  %s\n  header: %s"
                % ([(n, v) for n, v, _ in rows], listed))


def strip_comments(src):
    src = re.sub(r'/\*.*?\*/', ' ', src, flags=re.S)
    return re.sub(r'//[^\n]*', ' ', src)


code = "\n".join(strip_comments(open(f).read()) for f in sources
                 if not f.endswith("oppacked.h"))
if "OPP_STATUS_BAD_PARAM_SHAPE" not in code:
    fail.append(f"the sources look wrong ({len(sources)} files)")
for name, value, when in rows:
    used = re.search(r'\bOPP_STATUS_%s\b' % name, code) is not None
    reserved = "reserved" in when.lower()
    if name == "SUCCESS":
        continue
    if reserved and used:
        fail.append(f"{name} is marked reserved but the code uses it")
    if not reserved and not used:
        fail.append(f"{name} is returned nowhere: mark it reserved in the README or return it")

for f in fail:
    print("FAILED:", f)
print(f"status_table_test: {len(rows)} rows, {len(sources)} source files:",
      "ok" if not fail else "FAILED")
sys.exit(1 if fail else 0)
PY
