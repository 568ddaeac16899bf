#!/usr/bin/env bash
# atomic.sh - the single-file rules of the shipped policy, replaced the way
# agents' tools write them: a temporary file beside the file, renamed onto
# it (GNU sed -i, perl -pi, Python's tempfile + os.replace, npm's
# write-file-atomic, a Write as Claude Code makes it), each by uid 1000 on
# each such rule. Nothing but the rule's own name ever appears in the
# read-only directory on the host, a temporary left behind is gone, every
# other name stays refused with its EROFS, and a --fail-on-denial run of the
# writers ends 0. Then the same on a source that cannot make unnamed files
# (bindfs, a FUSE file system without O_TMPFILE, as virtiofs in AWF's
# guests), where the temporary has a hidden name of awfs's until its rename.
. "$(dirname "$0")/lib.sh"
require_mount_env
make_tmp
P=${AWFS_DEFAULT_POLICY:?AWFS_DEFAULT_POLICY must name etc/awfs/policy.conf}
cp "$P" "$POLICY" && chmod 644 "$POLICY"

# the policy's single-file rules: its allow_write rules with create = "file"
FILES=$(awk '/path = "/ { p = $0; sub(/.*path = "/, "", p); sub(/".*/, "", p) }
	/create = "file"/ { print p }' "$POLICY")
check "the shipped policy has single-file rules" "yes" "$([ -n "$FILES" ] && echo yes || echo no)"

# npm's write-file-atomic, from the registry (not tried when unreachable)
WFA=""
if command -v node >/dev/null && command -v npm >/dev/null &&
	timeout 300 npm install --silent --no-audit --no-fund --prefix "$T/npm" write-file-atomic@5 >/dev/null 2>&1; then
	chmod -R a+rX "$T/npm"
	WFA="$T/npm/node_modules/write-file-atomic"
else
	echo "# npm's write-file-atomic: not tried (no node or npm here, or the npm registry is unreachable)"
fi

# writers FILE TEXT: each writer replaces FILE (in the current directory) with TEXT + its name
writer_sed() { sed -i "1s/.*/$2 sed/" "$1"; }
writer_perl() { perl -pi -e "s/.*/$2 perl/ if \$. == 1" "$1"; }
writer_python() {
	python3 -c 'import os, sys, tempfile
fd, tmp = tempfile.mkstemp(dir=".")
os.write(fd, (sys.argv[2] + " python\n").encode()); os.close(fd); os.replace(tmp, sys.argv[1])' "$1" "$2"
}
# Claude Code's Write: <file>.tmp.<pid>.<hex> beside it, its mode copied, renamed over it
writer_claude() {
	node -e 'const fs = require("fs"), f = process.argv[1];
const tmp = f + ".tmp." + process.pid + "." + Date.now().toString(16);
const mode = fs.statSync(f).mode;
fs.writeFileSync(tmp, process.argv[2] + " claude\n", { encoding: "utf8", flag: "w" });
fs.chmodSync(tmp, mode); fs.renameSync(tmp, f);' "$1" "$2"
}
writer_wfa() {
	NODE_PATH="$T/npm/node_modules" node -e 'require("write-file-atomic").sync(process.argv[1], process.argv[2] + " write-file-atomic\n")' "$1" "$2"
}
WRITERS="sed perl python"
command -v node >/dev/null && WRITERS="$WRITERS claude"
[ -n "$WFA" ] && WRITERS="$WRITERS wfa"

# host_names DIR: the names in DIR on the host, sorted
host_names() { (cd "$1" && ls -A | LC_ALL=C sort); }

# try_writers LABEL: every writer on every single-file rule, checked on the host
try_writers() {
	local label=$1 f w before got
	for f in $FILES; do
		for w in $WRITERS; do
			before=$(host_names "$(dirname "$SRC/$f")")
			(cd "$(dirname "$MNT/$f")" && as_agent bash -c "$(declare -f "writer_$w"); T='$T'; writer_$w '$(basename "$f")' new" \
				>"$T/w.out" 2>&1)
			check "$label: $w replaces $f" "0" "$?"
			got=$(head -1 "$SRC/$f")
			case $w in wfa) w2=write-file-atomic ;; *) w2=$w ;; esac
			check "  ... the host has the new text" "new $w2" "$got"
			check "  ... and no other name appeared beside it" "$before" "$(host_names "$(dirname "$SRC/$f")")"
			check "  ... through the mount, the same" "new $w2" "$(as_agent head -1 "$MNT/$f")"
		done
	done
}

# ---- an O_TMPFILE source (the runner's disk): the root is the agent's, as
# in AWF's container, where the agent runs as the runner's uid
for f in $FILES; do mkdir -p "$(dirname "$SRC/$f")"; echo "old" >"$SRC/$f"; done
mkdir -p "$SRC/agent"
chown -R "$AGENT_UID:$AGENT_UID" "$SRC"
mount_beside --fail-on-denial
try_writers "tmpfile source"
check "no denial was logged" "" "$(grep ' denied ' "$LOG")"

# a temporary only beside a single-file rule, only under a temporary's name
S=$(echo "$FILES" | head -1)
D=$(dirname "$S")
[ "$D" = . ] && D=""
expect "a name no writer gives a temporary stays refused" "EROFS" write "$MNT/${D:+$D/}notes.md" x
expect "  ... a temporary's name in another directory too (agent/ is writable: there it is a plain file)" \
	"OK" write "$MNT/agent/sed123456" x
as_agent sh -c "printf leftover >'$MNT/${D:+$D/}sedAAAAAA'"
check "a temporary can be written and read back" "leftover" "$(as_agent cat "$MNT/${D:+$D/}sedAAAAAA")"
check "  ... it has no name on the host" "no" "$([ -e "$SRC/${D:+$D/}sedAAAAAA" ] && echo yes || echo no)"
check "  ... nor any other new one" "" "$(cd "$SRC/${D:-.}" && ls -A | grep -v -x -F "$(ls -A "$MNT/${D:-.}")")"
expect "  ... renamed to another name: refused" "EROFS" rename "$MNT/${D:+$D/}sedAAAAAA" "$MNT/${D:+$D/}kept"
expect "  ... renamed into a writable tree: refused" "EROFS" rename "$MNT/${D:+$D/}sedAAAAAA" "$MNT/agent/kept"
OTHER=$(setpriv --reuid=$((AGENT_UID + 1)) --regid=$((AGENT_UID + 1)) --clear-groups "$AWFS_PROBE" unlink "$MNT/${D:+$D/}sedAAAAAA")
check_match "  ... removed by another uid: refused (EPERM, as in a sticky directory)" "EPERM" "$OTHER"
as_agent sh -c "printf other >'$MNT/${D:+$D/}sedBBBBBB'"
check "  ... removed by its maker" "0" "$(as_agent rm "$MNT/${D:+$D/}sedBBBBBB"; echo $?)"
check "  ... and gone" "no" "$(as_agent test -e "$MNT/${D:+$D/}sedBBBBBB" && echo yes || echo no)"
as_agent sh -c "printf linkme >'$MNT/${D:+$D/}sedLINK01'"
expect "a temporary cannot be linked anywhere (its one way out is its rename)" "EROFS" link "$MNT/${D:+$D/}sedLINK01" "$MNT/agent/alias"
as_agent rm -f "$MNT/${D:+$D/}sedLINK01"
# a temporary removed while open is never opened by its old name: what the
# host puts there later (a FIFO with a writer waiting) is not touched
F="${D:+$D/}tmpfifo0003"
coproc AGENT { as_agent /usr/bin/python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR, 0o600)
os.unlink(sys.argv[1])
print("unlinked", flush=True)
sys.stdin.readline()
os.close(os.open("/proc/self/fd/%d" % fd, os.O_RDONLY))
os.close(os.open("/proc/self/fd/%d" % fd, os.O_RDWR))
print("reopened", flush=True)' "$MNT/$F" 2>&1; }
AIN=${AGENT[0]} AOUT=${AGENT[1]}
line=""
read -r -t 300 line <&"$AIN"	# a bound for a hang, never reached otherwise
check "a temporary removed while open" "unlinked" "$line"
if [ "$line" = unlinked ]; then
	mkfifo "$SRC/$F"
	(echo waiting >"$SRC/$F") &
	WRITER=$!
	# until the writer waits in its open (a bound for a hang, never reached otherwise)
	for _ in $(seq 6000); do
		grep -q 'wait_for_partner\|fifo' "/proc/$WRITER/wchan" 2>/dev/null && break
		kill -0 "$WRITER" 2>/dev/null || break
		sleep 0.05
	done
	echo go >&"$AOUT"
	read -r -t 300 line <&"$AIN"
	check "  ... reopens through /proc/self/fd" "reopened" "$line"
	check "  ... and the host's FIFO at its old name, with a writer waiting, is not opened by awfs" "waiting" \
		"$(timeout -k 5 60 cat "$SRC/$F")"
	wait "$WRITER"
	check "  ... the writer was never woken before its reader came" "0" "$?"
	rm -f "$SRC/$F"
fi
as_agent sh -c "printf plain >'$MNT/agent/plain'"
# (agent/ takes no relative link from the agent, links = "read-only": this one is the host's)
ln -s plain "$SRC/agent/link" && chown -h "$AGENT_UID:$AGENT_UID" "$SRC/agent/link"
expect "only a temporary replaces a single-file rule: not a file from a writable tree" "EROFS" rename "$MNT/agent/plain" "$MNT/$S"
expect "  ... nor a symlink" "EROFS" rename "$MNT/agent/link" "$MNT/$S"
as_agent ln -s agent/x "$MNT/${D:+$D/}sedCCCCCC" 2>/dev/null
check "a symlink cannot be made under a temporary's name" "no" \
	"$([ -L "$SRC/${D:+$D/}sedCCCCCC" ] && echo yes || echo no)"
unmount_awfs
check "--fail-on-denial: the writers alone would end 0; the refusals tried above make it 3" "3" "$AWFS_RC"
check_match "the temporary left behind is named at exit" "dropped the temporary \"sedAAAAAA\" \(8 bytes" "$(cat "$LOG")"
check "  ... and nothing of it is on the host" "no" "$([ -e "$SRC/${D:+$D/}sedAAAAAA" ] && echo yes || echo no)"

# the writers alone, under --fail-on-denial: exit 0
: >"$LOG"
mount_beside --fail-on-denial
try_writers "--fail-on-denial run"
unmount_awfs
check "--fail-on-denial: the writers alone end 0" "0" "$AWFS_RC"

# ---- the host-made symlink workaround (a host step that replaces the file
# by a link into agent/ before the agent runs) keeps working
L=$(echo "$FILES" | head -1)
rm -f "$SRC/$L"
echo "linked" >"$SRC/agent/summary-target.md"
chown -h "$AGENT_UID:$AGENT_UID" "$SRC/agent/summary-target.md"
ln -s "$( [ "$(dirname "$L")" = . ] && echo agent || echo "$(dirname "$L" | sed 's|[^/]*|..|g')/agent")/summary-target.md" "$SRC/$L"
: >"$LOG"
mount_beside
as_agent sh -c "printf 'through the link\n' >>'$MNT/$L'"
check "a host-made link at $L: an append goes through to agent/" "linked
through the link" "$(cat "$SRC/agent/summary-target.md")"
(cd "$(dirname "$MNT/$L")" && as_agent sed -i --follow-symlinks 's/linked/LINKED/' "$(basename "$L")")
check "  ... sed -i --follow-symlinks edits the target" "LINKED" "$(head -1 "$SRC/agent/summary-target.md")"
unmount_awfs

# ---- the host's permissions decide as they would without awfs: a root the
# agent cannot write (the host-user sandbox grants it single files only)
rm -f "$SRC/$L"
echo "old" >"$SRC/$L"
chown "$AGENT_UID:$AGENT_UID" "$SRC/$L"
chown root:root "$SRC/${D:-.}" && chmod 755 "$SRC/${D:-.}"
: >"$LOG"
mount_beside
(cd "$(dirname "$MNT/$L")" && as_agent sed -i 's/old/new/' "$(basename "$L")" >"$T/w.out" 2>&1)
check_match "a directory the agent may not write on the host: sed -i gets the host's EACCES" "Permission denied" "$(cat "$T/w.out")"
check "  ... the file is unchanged" "old" "$(cat "$SRC/$L")"
check "  ... and awfs refused nothing itself" "" "$(grep ' denied ' "$LOG")"
as_agent sh -c "printf 'in place\n' >'$MNT/$L'"
check "  ... in place it is still written" "in place" "$(cat "$SRC/$L")"
unmount_awfs
chown "$AGENT_UID:$AGENT_UID" "$SRC/${D:-.}"

# ---- a source without O_TMPFILE: bindfs over the same tree
if command -v bindfs >/dev/null; then
	mkdir -p "$T/fuse"
	if bindfs "$SRC" "$T/fuse"; then
		for f in $FILES; do rm -f "$SRC/$f"; echo "old" >"$SRC/$f"; chown "$AGENT_UID:$AGENT_UID" "$SRC/$f"; done
		SRC0=$SRC
		SRC="$T/fuse"
		check "bindfs cannot make unnamed files" "no" \
			"$(python3 -c 'import os, sys; os.open(sys.argv[1], os.O_TMPFILE | os.O_RDWR)' "$SRC" 2>/dev/null && echo yes || echo no)"
		: >"$LOG"
		mount_beside --fail-on-denial
		try_writers "bindfs source"
		as_agent sh -c "printf kept >'$MNT/${D:+$D/}tmpabcdefgh'"
		check_match "a temporary there has a hidden name of awfs's on the host" "^\.awfs-staged-[0-9a-f]{16}$" \
			"$(ls -A "$SRC0/${D:-.}" | grep '^\.awfs-staged-')"
		check "  ... which the agent cannot see" "" "$(as_agent ls -A "$MNT/${D:-.}" | grep awfs-staged)"
		expect "  ... nor open by that name" "ENOENT" read "$MNT/${D:+$D/}$(ls -A "$SRC0/${D:-.}" | grep '^\.awfs-staged-' | head -1)"
		unmount_awfs
		check "  ... and it is gone when awfs exits" "" "$(ls -A "$SRC0/${D:-.}" | grep '^\.awfs-staged-')"
		check "--fail-on-denial: the writers end 0 there too" "0" "$AWFS_RC"
		fusermount3 -u "$T/fuse"
		SRC=$SRC0
	else
		echo "# bindfs could not mount: the source without O_TMPFILE not tried"
	fi
else
	echo "# no bindfs: the source without O_TMPFILE not tried"
fi
finish
