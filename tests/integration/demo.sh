#!/usr/bin/env bash
# demo.sh - the README's first command (contrib/demo.sh) works and shows a
# mask, a pass-through write and a denied write with its log line.
. "$(dirname "$0")/lib.sh"
require_mount_env
make_tmp
out=$(AWFS_BIN="$AWFS" bash "$AWFS_TESTS/../contrib/demo.sh" "$T/demo" </dev/null 2>&1); rc=$?
check "the demo exits 0" "0" "$rc"
check_match "the demo mounts with the default policy" "awfs: mounted $T/demo \(source $T/demo, its POSIX ACLs enforced; data path: [^)]*\): masked: mcp-logs, sandbox/firewall/logs" "$out"
check_match "a masked log is not there" "gateway.log: No such file or directory" "$out"
check_match "a payload is readable" '\{"items":\[1,2,3\]\}' "$out"
check "a pass-through write is on the host" "a note for later" "$(cat "$T/demo/cache-memory/notes.md")"
check_match "a denied write is logged with its rule" "awfs: denied create for pid [0-9]+ \(\"sh\"\) uid 1000 gid 1000 by read_only rule \"mcp-payloads\" \([^)]*\); EROFS: \"$T/demo/mcp-payloads/forged.json\": its directory \"$T/demo/mcp-payloads\" is read-only by read_only rule \"mcp-payloads\"" "$out"
check_match "the agent sees EROFS" "forged.json: Read-only file system" "$out"
check_match "the .git config of a memory is read-only" "denied open\(O_WRONLY\) for .*; EROFS: \"$T/demo/cache-memory/.git/config\":" "$out"
check "the demo left no mount" "no" "$(is_mounted "$T/demo" && echo yes || echo no)"
check "the masked log is intact on the host" "yes" "$(grep -q ghp_example "$T/demo/mcp-logs/gateway.log" && echo yes)"
# ---- no DIR: a fresh private directory. A local user who keeps recreating
# the old fixed /tmp/gh-aw-demo and planting symlinks in it (at a root-only
# file and a root-only directory) gains nothing: root writes nothing there.
RACE=/tmp/gh-aw-demo
if [ -e "$RACE" ] || [ -L "$RACE" ]; then
	echo "ok - # SKIP the racing user: $RACE exists and is not this test's"
else
	echo VICTIM >"$T/victim"
	chmod 600 "$T/victim"
	mkdir -m 700 "$T/rootonly"
	# the racer: uid $AGENT_UID (setpriv execs perl: $! is its pid), at most
	# 60 s, stopped by its pid below; it also tries to plant gh-aw in any
	# private /tmp/gh-aw-demo.* the demo makes
	setpriv --reuid="$AGENT_UID" --regid="$AGENT_UID" --clear-groups perl -e '
		my ($d, $victim, $dir) = @ARGV;
		my %plant = ("agent-step-summary.md" => $victim, "mcp-logs" => $dir,
			"mcp-payloads" => $dir, "sandbox" => $dir, "cache-memory" => $dir);
		my ($end, $n, $mine) = (time + 60, 0, 0);
		if (mkdir $d) { symlink $plant{$_}, "$d/$_" for keys %plant }
		while (time < $end) {
			symlink $dir, "$_/gh-aw" for ($n++ % 16 ? () : glob("/tmp/gh-aw-demo.*"));
			# once root has removed it: recreate it, plant, and keep planting
			# (a real entry root made in it is moved aside)
			$mine = 1 if mkdir $d;
			next unless $mine;
			for my $k (keys %plant) {
				my $p = "$d/$k";
				next if -l $p;
				rename $p, "$d/.moved-" . $n++ if -e _;
				symlink $plant{$k}, $p;
			}
		}' "$RACE" "$T/victim" "$T/rootonly" &
	RACER=$!
	AT_EXIT="kill $RACER 2>/dev/null; wait $RACER 2>/dev/null; is_mounted $RACE || rm -rf --one-file-system $RACE;"
	for _ in $(seq 200); do [ -d "$RACE" ] && break; sleep 0.05; done
	out=$(AWFS_BIN="$AWFS" bash "$AWFS_TESTS/../contrib/demo.sh" </dev/null 2>&1); rc=$?
	kill "$RACER" 2>/dev/null; wait "$RACER" 2>/dev/null
	check "race: the root-only 0600 file is intact" "VICTIM 600 0" "$(cat "$T/victim") $(stat -c '%a %u' "$T/victim")"
	check "race: nothing was written into the root-only directory" "" "$(ls -A "$T/rootonly")"
	check "race: the demo exits 0" "0" "$rc"
	check_match "race: the demo used a fresh private directory" \
		"awfs: mounted /tmp/gh-aw-demo\.[A-Za-z0-9]{6}/gh-aw " "$out"
	base=$(printf '%s\n' "$out" | sed -n 's|^.*awfs: mounted \(/tmp/gh-aw-demo\.[A-Za-z0-9]\{6\}\)/gh-aw .*$|\1|p' | head -1)
	check "race: the private directory is gone at exit" "no" "$([ -n "$base" ] && [ -e "$base" ] && echo yes || echo no)"
	is_mounted "$RACE" || rm -rf --one-file-system "$RACE"
	AT_EXIT=""
fi

# ---- DIR given: the demo creates it, and refuses one that is already there
# or that sits in a directory another user can write
mkdir "$T/pub"
chown "$AGENT_UID:$AGENT_UID" "$T/pub"
as_agent sh -c "mkdir '$T/pub/exists' && echo mine >'$T/pub/exists/marker' && ln -s '$T/rootonly2' '$T/pub/link'"
out=$(AWFS_BIN="$AWFS" bash "$AWFS_TESTS/../contrib/demo.sh" "$T/pub/exists" </dev/null 2>&1); rc=$?
check "an existing DIR (made by uid $AGENT_UID) is refused" "1" "$rc"
check_match "and the demo says why" "demo: $T/pub/exists already exists; give a path that does not exist yet" "$out"
check "nothing was written into it" "marker mine $AGENT_UID" \
	"$(ls -A "$T/pub/exists" | tr '\n' ' ')$(cat "$T/pub/exists/marker") $(stat -c %u "$T/pub/exists")"
check "nothing was mounted on it" "no" "$(is_mounted "$T/pub/exists" && echo yes || echo no)"
out=$(AWFS_BIN="$AWFS" bash "$AWFS_TESTS/../contrib/demo.sh" "$T/pub/link" </dev/null 2>&1); rc=$?
check "a planted symlink as DIR is refused, its target never made" "1 no" \
	"$rc $([ -e "$T/rootonly2" ] && echo yes || echo no)"
out=$(AWFS_BIN="$AWFS" bash "$AWFS_TESTS/../contrib/demo.sh" "$T/pub/new" </dev/null 2>&1); rc=$?
check "a new DIR in a directory uid $AGENT_UID can write is refused" "1 no" \
	"$rc $([ -e "$T/pub/new" ] && echo yes || echo no)"
check_match "and the demo says why" "demo: $T/pub/new: its parent $T/pub is not root's alone" "$out"
finish
