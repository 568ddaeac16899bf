#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""treediff.py - the host's own diff of a tree, against awfs's change record.

  treediff.py manifest DIR [TOP...]       one JSON object on stdout: every path
      under DIR (under DIR/TOP for each TOP given) -> [type, mode, uid, gid,
      size, sha256 or link target]
  treediff.py compare BEFORE AFTER CHANGES
      BEFORE and AFTER are manifests, CHANGES `awfsctl changes --json`; prints
      "diff N claimed M", then "missed [...]" (paths that differ on the host
      and the record does not name), "extra [...]" (paths the record names
      whose content differs from nothing: neither before nor after holds them
      the same; a rewrite to the same bytes is not extra), "wronghash [...]"
      (hashes that are not the file's now), "same [...]" (named, identical).

A directory differs when its type, mode or owner does (its times and the
order of its entries never do); anything else when any field does.
"""
import hashlib
import json
import os
import stat
import sys


def manifest(top, subs):
    out = {}
    roots = [os.path.join(top, s) for s in subs] if subs else [top]
    for root in roots:
        if not os.path.lexists(root):
            continue
        walk = [(os.path.dirname(root), [], [os.path.basename(root)])] if subs else []
        walk += list(os.walk(root))
        for d, dirs, files in walk:
            for n in dirs + files:
                p = os.path.join(d, n)
                st = os.lstat(p)
                rel = os.path.relpath(p, top)
                if stat.S_ISREG(st.st_mode):
                    with open(p, "rb") as f:
                        h = hashlib.sha256(f.read()).hexdigest()
                    out[rel] = ["file", st.st_mode & 0o7777, st.st_uid, st.st_gid, st.st_size, h]
                elif stat.S_ISLNK(st.st_mode):
                    out[rel] = ["link", 0, st.st_uid, st.st_gid, 0, os.readlink(p)]
                elif stat.S_ISDIR(st.st_mode):
                    out[rel] = ["dir", st.st_mode & 0o7777, st.st_uid, st.st_gid, 0, ""]
                else:
                    out[rel] = ["other", st.st_mode & 0o7777, st.st_uid, st.st_gid, 0, ""]
    json.dump(out, sys.stdout)


def compare(before, after, ch):
    def differs(p):
        b, a = before.get(p), after.get(p)
        if b is None or a is None:
            return b != a
        if a[0] == "dir":
            return b[:4] != a[:4]
        return b != a

    def under(tree, top):
        return {p for p in tree if p == top or p.startswith(top + "/")}

    diff = {p for p in set(before) | set(after) if differs(p)}
    claimed, hashes = set(), []
    for e in ch["entries"]:
        for c in e["changes"]:
            p = c["path"]
            if c["change"] == "removed":
                claimed |= under(before, p) | {p}
            elif c["change"] == "renamed":
                claimed |= under(before, c["from"]) | {c["from"]} | under(after, p) | {p}
            else:
                claimed.add(p)
                if c["change"] == "created" and c.get("kind") == "dir":
                    claimed |= under(after, p)
            if "sha256" in c:
                hashes.append((p, c["sha256"]))
    missed = sorted(diff - claimed)
    extra = sorted(p for p in claimed - diff if (p in before or p in after) and before.get(p) != after.get(p))
    wronghash = sorted(p for p, h in hashes if p in after and after[p][5] != h)
    print("diff", len(diff), "claimed", len(claimed))
    print("missed", json.dumps(missed[:10]))
    print("extra", json.dumps(extra[:10]))
    print("wronghash", json.dumps(wronghash[:10]))
    print("same", json.dumps(sorted(claimed - diff)[:10]))


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "manifest":
        manifest(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) == 5 and sys.argv[1] == "compare":
        compare(*(json.load(open(f)) for f in sys.argv[2:5]))
    else:
        sys.exit(__doc__)
