#!/usr/bin/env bash
# changes.sh - the change record (awfs --record-changes) against the host's
# own diff: real tools run as uid 1000 through the shipped policy (git
# commit and gc in cache-memory, npm install in agent/, sqlite in WAL mode
# in cache-memory, rsync into the agent's logs twice, the second time with
# --delete, and plain renames, removals, chmods and appends), then
# `awfsctl changes --json` must name every path whose type, mode, owner,
# content or link target differs between the tree before and after the
# agent (nothing missed), and anything more it names must be a path whose
# content is what it was (a rewrite to the same bytes); every hash it gives
# is the file's. Then the record's own properties: a thousand appends are
# one record, the byte budget is said when spent, awfs refuses the option
# without --audit, and the record is off by default.
. "$(dirname "$0")/lib.sh"
require_mount_env
command -v git >/dev/null || skip "no git"
command -v sqlite3 >/dev/null || skip "no sqlite3 (apt-get install sqlite3)"
command -v rsync >/dev/null || skip "no rsync (apt-get install rsync)"
make_tmp
AWFSCTL=${AWFSCTL:?AWFSCTL must name the awfsctl binary}
P=${AWFS_DEFAULT_POLICY:?AWFS_DEFAULT_POLICY must name etc/awfs/policy.conf}
sed "s|^root = \"/tmp/gh-aw\";|root = \"$SRC\";|" "$P" >"$POLICY" && chmod 644 "$POLICY"
AUDIT="$T/audit.jsonl"

# manifest DIR: every path's type, mode, owner, size and hash (treediff.py)
TREEDIFF="$(dirname "$0")/treediff.py"
manifest() { /usr/bin/python3 "$TREEDIFF" manifest "$1"; }

# ---- the tree before the agent: what the host restored and staged
mkdir -p "$SRC"/{agent,cache-memory/notes,comment-memory,sandbox/agent/logs,.cache} "$T/rsrc/sub"
echo "first note" >"$SRC/cache-memory/notes/a.md"
echo "second note" >"$SRC/cache-memory/notes/b.md"
echo "kept as it is" >"$SRC/cache-memory/keep.md"
echo "rewritten with the same bytes" >"$SRC/cache-memory/same.md"
echo "memory 1" >"$SRC/comment-memory/1.md"
echo "memory 2" >"$SRC/comment-memory/2.md"
echo "memory 3, rewritten in place" >"$SRC/comment-memory/3.md"
echo "memory 4, opened for writing and left alone" >"$SRC/comment-memory/4.md"
for i in 1 2 3 4 5 6; do echo "to be cut $i" >"$SRC/comment-memory/cut$i"; done
echo "old log" >"$SRC/sandbox/agent/logs/old.log"
for i in 1 2 3; do echo "file $i" >"$T/rsrc/f$i"; done
echo "deep" >"$T/rsrc/sub/deep"
chown -R "$AGENT_UID:$AGENT_UID" "$SRC" "$T/rsrc"
chmod 777 "$SRC"

mount_beside --audit "$AUDIT" --record-changes
check "the mount line says the record is on" "1" "$(grep -c 'recording every change in the audit trail' "$LOG")"
# (after the mount: what awfs itself made there, create = true, is not the agent's)
manifest "$SRC" >"$T/before.json"
A=(env HOME="$T/home" npm_config_cache="$MNT/.cache/npm" GIT_CONFIG_NOSYSTEM=1)
as_agent mkdir -p "$T/home" 2>/dev/null || { mkdir -p "$T/home"; chown "$AGENT_UID" "$T/home"; }

# git: a repository in cache-memory (not the host's cache-memory/.git), two commits and a gc
G="$MNT/cache-memory/work"
as_agent "${A[@]}" sh -c "git init -q '$G' && cd '$G' && git config user.email a@b && git config user.name agent &&
	echo one >one.txt && git add one.txt && git commit -qm one &&
	echo two >>one.txt && echo new >two.txt && git add -A && git commit -qm two && git gc -q" >"$T/git.out" 2>&1
check "git init, commit twice and gc in cache-memory" "0" "$?"

# sqlite in WAL mode
as_agent sqlite3 "$MNT/cache-memory/state.db" "PRAGMA journal_mode=WAL; CREATE TABLE t(x); INSERT INTO t VALUES (1),(2),(3);" >"$T/sqlite.out" 2>&1
check "sqlite in WAL mode in cache-memory" "0" "$?"
as_agent sqlite3 "$MNT/cache-memory/state.db" "INSERT INTO t VALUES (4); PRAGMA wal_checkpoint(TRUNCATE);" >>"$T/sqlite.out" 2>&1
check "  ... and again" "0" "$?"

# npm install in agent/ (no bin links: agent/ takes none, links.sh)
if command -v npm >/dev/null; then
	mkdir -p "$T/pkg/bin" && chmod 755 "$T"
	printf '{"name":"awfs-pkg","version":"1.0.0","bin":{"awfs-pkg":"bin/cli.js"}}\n' >"$T/pkg/package.json"
	printf '#!/usr/bin/env node\nconsole.log(1)\n' >"$T/pkg/bin/cli.js"
	(cd "$T" && npm pack --silent ./pkg >/dev/null 2>&1) && chmod a+r "$T/awfs-pkg-1.0.0.tgz"
	as_agent mkdir "$MNT/agent/proj"
	(cd "$MNT/agent/proj" && as_agent "${A[@]}" npm install --offline --no-audit --no-fund --no-bin-links "$T/awfs-pkg-1.0.0.tgz" >"$T/npm.out" 2>&1)
	check "npm install in agent/" "0" "$?"
else
	echo "# npm: not tried (no npm here)"
fi

# rsync into the agent's logs, then again with a change and --delete
as_agent rsync -a "$T/rsrc/" "$MNT/sandbox/agent/logs/r/"
check "rsync -a into sandbox/agent/logs" "0" "$?"
as_agent sh -c "echo changed >'$T/rsrc/f2' && rm '$T/rsrc/f3'"
as_agent rsync -a --delete "$T/rsrc/" "$MNT/sandbox/agent/logs/r/"
check "  ... again, with --delete" "0" "$?"

# every way to cut a file short: truncate(2) by path, O_TRUNC for writing and
# for reading, ftruncate, truncate through /proc/self/fd of an O_PATH fd,
# ftruncate while another handle (read-only) is open
as_agent /usr/bin/python3 - "$MNT/comment-memory" <<'PY'
import os, sys
d = sys.argv[1]
os.truncate(d + "/cut1", 0)
os.close(os.open(d + "/cut2", os.O_WRONLY | os.O_TRUNC))
fd = os.open(d + "/cut3", os.O_RDWR); os.ftruncate(fd, 1); os.close(fd)
fd = os.open(d + "/cut4", os.O_PATH); os.truncate("/proc/self/fd/%d" % fd, 2); os.close(fd)
os.close(os.open(d + "/cut5", os.O_RDONLY | os.O_TRUNC))
r = os.open(d + "/cut6", os.O_RDONLY); w = os.open(d + "/cut6", os.O_WRONLY); os.ftruncate(w, 3); os.close(w); os.close(r)
PY
check "six ways to truncate" "0" "$?"

# a rewrite in place through a handle opened without O_TRUNC or O_APPEND
# (on the kernel's passthrough where it is offered: its writes never reach
# awfs), and a handle opened for writing that writes nothing
as_agent /usr/bin/python3 - "$MNT/comment-memory" <<'PY'
import os, sys
d = sys.argv[1]
fd = os.open(d + "/3.md", os.O_RDWR); os.pwrite(fd, b"MEMORY", 0); os.close(fd)
fd = os.open(d + "/4.md", os.O_RDWR); os.pread(fd, 6, 0); os.close(fd)
PY
check "a rewrite in place, and a handle that writes nothing" "0" "$?"

# plain changes
as_agent sh -c "cd '$MNT' && mv cache-memory/notes/a.md cache-memory/notes/a-old.md && rm comment-memory/1.md &&
	echo edited >>comment-memory/2.md && chmod 600 cache-memory/keep.md &&
	cp cache-memory/same.md cache-memory/same.tmp && mv cache-memory/same.tmp cache-memory/same.md &&
	mv cache-memory/notes cache-memory/notes2 && rm -r sandbox/agent/logs/old.log &&
	mkdir agent/empty && mkdir agent/gone && rmdir agent/gone &&
	for i in \$(seq 1000); do echo line \$i >>agent/app.log; done"
check "renames, removals, a chmod, a rewrite and 1,000 appends" "0" "$?"
unmount_awfs
manifest "$SRC" >"$T/after.json"

"$AWFSCTL" changes "$AUDIT" >"$T/changes.txt"
check "awfsctl changes: the record is complete (exit 0)" "0" "$?"
sed 's/^/# /' "$T/changes.txt" | head -60
"$AWFSCTL" changes --json "$AUDIT" >"$T/changes.json"
check "awfsctl changes --json: exit 0" "0" "$?"

# ---- the record against the host's diff
/usr/bin/python3 "$TREEDIFF" compare "$T/before.json" "$T/after.json" "$T/changes.json" >"$T/compare.out"
sed 's/^/# /' "$T/compare.out"
check "the host's diff is not empty (the tools changed the tree)" "yes" \
	"$([ "$(awk '/^diff/ { print $2 }' "$T/compare.out")" -gt 20 ] && echo yes || echo no)"
check "every path that differs on the host is in the record" "missed []" "$(grep '^missed' "$T/compare.out")"
check "whatever else the record names holds what it held (a rewrite to the same bytes)" "extra []" "$(grep '^extra' "$T/compare.out")"
check "every hash in the record is the file's on the host" "wronghash []" "$(grep '^wronghash' "$T/compare.out")"
# one record, or a few if the appender stalled a second (the record waits a
# second after a last close); closes overlap the next open when the kernel
# sends RELEASE late, so "closes" counts last closes, at most 1,000
n=$(grep '"event":"change"' "$AUDIT" | grep '"op":"write"' | grep -c 'agent/app.log"')
check "the 1,000 appends to agent/app.log are a few write records, not 1,000" "yes" \
	"$([ "$n" -ge 1 ] && [ "$n" -le 10 ] && echo yes || echo "no: $n")"
closes=$(grep '"op":"write"' "$AUDIT" | grep 'agent/app.log"' | sed 's/.*"closes":\([0-9]*\).*/\1/' | awk '{ s += $1 } END { print s + 0 }')
check "  ... whose closes add up to more than their number and at most 1,000" "yes" \
	"$([ "$closes" -gt "$n" ] && [ "$closes" -le 1000 ] && echo yes || echo "no: $closes")"
check "the record ends with its summary, complete" "1" "$(grep '"event":"changes"' "$AUDIT" | grep -c '"complete":true')"
check "the text names the renamed directory" "1" "$(grep -c 'renamed   cache-memory/notes -> cache-memory/notes2' "$T/changes.txt")"
check "  ... and the removed memory" "1" "$(grep -c 'removed   comment-memory/1.md' "$T/changes.txt")"

# --since: only what came after
count() { /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(len(e["changes"]) for e in d["entries"]))'; }
first=$(grep '"event":"change"' "$AUDIT" | sed -n '1p' | sed 's/.*"time":"\([^"]*\)".*/\1/')
check "--since the first record's time: all of it" "$(count <"$T/changes.json")" \
	"$("$AWFSCTL" changes --json --since "$first" "$AUDIT" | count)"
check "--since a time after the last: nothing" "0" "$("$AWFSCTL" changes --json --since 2999 "$AUDIT" | count)"

# ---- incomplete: a record with no summary (awfs still running, or killed) says so
grep -v '"event":"changes"' "$AUDIT" >"$T/open.jsonl"
"$AWFSCTL" changes "$T/open.jsonl" >"$T/open.txt"
check "a record with no summary: exit 1" "1" "$?"
check "  ... and it says why" "1" "$(grep -c 'INCOMPLETE: no summary closes the record' "$T/open.txt")"
sed 's/"dropped":0/"dropped":7/' "$AUDIT" >"$T/dropped.jsonl"
"$AWFSCTL" changes "$T/dropped.jsonl" | grep -q 'INCOMPLETE: 7 changes were not recorded'
check "a summary with dropped changes is said" "0" "$?"
"$AWFSCTL" changes "$T/nonexistent.jsonl" 2>/dev/null
check "no such file: exit 2" "2" "$?"

# ---- a sparse file larger than the hashing bound: its size, no hash, said; unmount not held
mount_beside --audit "$T/audit4.jsonl" --record-changes
as_agent truncate -s 3G "$MNT/agent/sparse"
t0=$(date +%s)
unmount_awfs
check "a 3 GiB sparse file: awfs stops at once (not after hashing 3 GiB)" "yes" "$([ $(($(date +%s) - t0)) -lt 20 ] && echo yes || echo no)"
check_match "  ... its record has its size and says why it has no hash" '"unhashed":"larger than 1 GiB","size":3221225472' \
	"$(grep '"op":"write"' "$T/audit4.jsonl" | grep 'agent/sparse"')"
"$AWFSCTL" changes "$T/audit4.jsonl" >"$T/sparse.txt"
check "  ... and awfsctl changes calls the record incomplete (exit 1)" "1" "$?"
rm -f "$SRC/agent/sparse"

# ---- off by default; refused without --audit
mount_beside --audit "$T/audit2.jsonl"
as_agent sh -c "echo x >'$MNT/agent/off.txt'"
unmount_awfs
check "off by default: no change record" "0" "$(grep -c '"event":"change' "$T/audit2.jsonl")"
"$AWFS" "$T/mnt" --source "$SRC" --policy "$POLICY" -f --record-changes 2>"$T/noaudit.err"
check "--record-changes without --audit: exit 2" "2" "$?"
check_match "  ... saying what to add" "add --audit FILE" "$(cat "$T/noaudit.err")"
check "  ... and nothing mounted" "0" "$(awfs_mounts "$T/mnt")"
sed 's/^version = 1;/version = 1;\nrecord_changes = true;/' "$POLICY" >"$T/p2.conf" && chmod 644 "$T/p2.conf"
POLICY=$T/p2.conf mount_beside --audit "$T/audit3.jsonl"
as_agent sh -c "echo y >'$MNT/agent/on.txt'"
unmount_awfs
check "record_changes = true in the policy turns it on" "1" "$(grep '"event":"change"' "$T/audit3.jsonl" | grep -c '"op":"create"')"
finish
