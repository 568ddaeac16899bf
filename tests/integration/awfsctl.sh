#!/usr/bin/env bash
# awfsctl.sh - awfsctl check, show, explain and verify, with their exact
# exit codes and the key lines of their output.
. "$(dirname "$0")/lib.sh"
require_mount_env
AWFSCTL=${AWFSCTL:?AWFSCTL must name the awfsctl binary}
setup_fixture
run() { out=$("$AWFSCTL" "$@" 2>&1); rc=$?; }

# ---- show
run show --policy "$POLICY"
check "show: exit 0" "0" "$rc"
check_match "show: masks first, with reasons" "masked \(served empty\):.*secret +holds tokens" "$(echo $out)"
check_match "show: the writable set" "writable \(allow_write\):.*made +created at mount \[created at mount as a directory\]" "$(echo $out)"
run show --policy "$POLICY" --json
check "show --json: exit 0" "0" "$rc"
check "show --json: valid JSON" "ok" "$(printf '%s' "$out" | jq -e . >/dev/null && echo ok)"
check "show --json: stable key order" '["class","path","reason","runtimes","create","line"]' \
	"$(printf '%s' "$out" | jq -c '.rules[0] | keys_unsorted')"
check "show --json: the same twice" "$out" "$("$AWFSCTL" show --policy "$POLICY" --json)"
check "show --json: rules sorted (masks, then writable, then read-only)" \
	"*.pem ghost ro/hidden rw/masked secret top.key made mem-* rw ro rw/.git rw/proj/hooks rw/repo-*/hooks" \
	"$(printf '%s' "$out" | jq -r '[.rules[].path] | join(" ")')"
printf 'version = 2;\n' >"$T/bad.conf"; chmod 644 "$T/bad.conf"
run show --policy "$T/bad.conf"
check "show: bad policy: exit 2" "2" "$rc"
check_match "show: bad policy: FILE:LINE message" "bad.conf:1: unsupported policy version" "$out"
run show
check "show: no --policy: exit 2" "2" "$rc"
run frobnicate --policy "$POLICY"
check "unknown command: exit 2" "2" "$rc"

# ---- explain
run explain --policy "$POLICY" --root /tmp/gh-aw /tmp/gh-aw/secret/data rw/.git/config rw/x ro /tmp/gh-aw/rootfile /tmp/gh-aw
check "explain: exit 0" "0" "$rc"
check_match "explain: a path below a mask" '/tmp/gh-aw/secret/data: masked by mask rule "secret" \(.*policy.conf:3: holds tokens\); it lies below a mask' "$out"
check_match "explain: nested read-only" 'rw/.git/config: read-only by read_only rule "rw/.git"' "$out"
check_match "explain: writable" 'rw/x: writable by allow_write rule "rw"' "$out"
check_match "explain: unclassified" '/tmp/gh-aw/rootfile: read-only: unclassified \(its top-level entry is named by no rule; unclassified = "warn"\)' "$out"
check_match "explain: the root" '^/tmp/gh-aw: read-only: no rule makes it writable' "$(printf '%s\n' "$out" | tail -1)"
run explain --policy "$POLICY" --root /tmp/gh-aw /etc/passwd
check "explain: a path outside the root: exit 2" "2" "$rc"
check_match "explain: says so" "/etc/passwd is not under the mount root /tmp/gh-aw" "$out"

# ---- check
run check --policy "$POLICY" --source "$SRC"
check "check: unclassified entries are warnings: exit 0" "0" "$rc"
check_match "check: lists them, sorted" "warning: unclassified top-level entry $SRC/restricted: .*warning: unclassified top-level entry $SRC/rootfile:" "$(echo $out)"
check_match "check: a create target is a note" "note: allow_write path \"made\" .* does not exist in $SRC yet: awfs creates it at mount" "$out"
check_match "check: summary" "awfsctl check: $POLICY: 0 errors, 2 warnings" "$out"
run check --policy "$POLICY" --source "$SRC" --strict
check "check --strict: unclassified entries fail: exit 1" "1" "$rc"
check_match "check --strict: as errors" "error: unclassified top-level entry $SRC/rootfile" "$out"
first=$out
run check --policy "$POLICY" --source "$SRC" --strict
check "check: output is deterministic" "$first" "$out"
write_policy 'version = 1;
root = "/tmp/gh-aw";
allow_write = ( { path = "agent"; reason = "scratch"; } );'
run check --policy "$POLICY" --source "$SRC"
check "check: a missing allow_write target: exit 1" "1" "$rc"
check_match "check: names it" 'error: allow_write path "agent" \(.*policy.conf:3\) does not exist in .* and has no create' "$out"
mkdir "$SRC/agent"
# the seed's case: the engine may write cache-memory, the policy does not allow it
run check --policy "$POLICY" --source "$SRC" \
	--allowed-tools 'Bash(git:*),Read,Write(/tmp/gh-aw/cache-memory/*),Edit(/tmp/gh-aw/cache-memory/*), MultiEdit(/tmp/gh-aw/agent/**)'
check "check --allowed-tools: an uncovered grant: exit 1" "1" "$rc"
check_match "check --allowed-tools: names the entry, the path and why" \
	'error: Write\(/tmp/gh-aw/cache-memory/\*\): /tmp/gh-aw/cache-memory/\*: not writable although the grant covers it: read-only: unclassified \(its top-level entry is named by no rule; unclassified = "warn"\)' "$out"
check_match "check --allowed-tools: Edit too" 'error: Edit\(/tmp/gh-aw/cache-memory/\*\)' "$out"
check "check --allowed-tools: covered grants are no error" "0" "$(printf '%s\n' "$out" | grep -c '^error: MultiEdit')"
run check --policy "$POLICY" --source "$SRC" --allowed-tools 'Write(/tmp/gh-aw/agent/**),Bash(echo a,b)'
check "check --allowed-tools: all covered: exit 0" "0" "$rc"
run check --policy "$POLICY" --source "$SRC" --allowed-tools 'Write(/tmp/*)'
check "check --allowed-tools: wider than the root is a warning: exit 0" "0" "$rc"
check_match "  ... naming what it cannot write" "warning: Write\(/tmp/\*\): /tmp/gh-aw: .*only these are writable: /tmp/gh-aw/agent" "$out"
run check --policy "$POLICY" --allowed-tools 'Write(/tmp/*)' --strict
check "  ... and with --strict: the engine's breadth, not a disagreement (awfsctl(1)): exit 0" "0" "$rc"
check_match "  ... still printed as a warning" "^warning: Write\(/tmp/\*\): /tmp/gh-aw: " "$out"
# a grant whose wildcard reaches a read-only .git: a write awfs will refuse
printf 'version = 1;\nallow_write = ( { path = "rw"; reason = "scratch"; } );\nread_only = ( { path = "rw/.git"; reason = "git"; } );\n' >"$T/git.conf"
chmod 644 "$T/git.conf"
run check --policy "$T/git.conf" --allowed-tools 'Write(/tmp/gh-aw/rw/*/hooks/pre-commit)'
check "check: a grant reaching into a read-only .git: a warning, exit 0" "0" "$rc"
check_match "  ... names the .git" "warning: Write\(/tmp/gh-aw/rw/\*/hooks/pre-commit\): /tmp/gh-aw/rw/.git: not writable although the grant covers it" "$out"
run check --policy "$T/git.conf" --allowed-tools 'Write(/tmp/gh-aw/rw/*/hooks/pre-commit)' --strict
check "  ... an error with --strict: exit 1" "1" "$rc"
check_match "  ... printed as an error" "error: Write\(/tmp/gh-aw/rw/\*/hooks/pre-commit\): /tmp/gh-aw/rw/.git: " "$out"
mkdir -p "$T/empty-tree"
# the shipped policy, copied with the mode it is installed with: the
# source tree's copy has whatever mode the tree arrived with (0664 from a
# tar that applied umask 0002), which awfsctl rightly refuses
SHIPPED=$T/shipped-policy.conf
install -m 0644 "$AWFS_DEFAULT_POLICY" "$SHIPPED"
# the shipped policy states that exception (exception = true on its .git rule)
run check --policy "$SHIPPED" --source "$T/empty-tree" --allowed-tools 'Write(/tmp/gh-aw/cache-memory/*/hooks/pre-commit)' --strict
check "  ... the shipped policy, cache-memory/*/hooks/pre-commit, --strict: a stated exception, exit 0" "0" "$rc"
check_match "  ... a note that names it acknowledged" "note: Write\(/tmp/gh-aw/cache-memory/\*/hooks/pre-commit\): /tmp/gh-aw/cache-memory/.git: an exception the policy makes on purpose \(exception = true\)" "$out"
run check --policy "$SHIPPED" --source "$T/empty-tree" --allowed-tools 'Write(/tmp/gh-aw/cache-memory/.git/hooks/pre-commit)'
check "  ... a grant into that .git itself: an error, even so" "1" "$rc"
check_match "  ... printed as an error" "error: Write\(/tmp/gh-aw/cache-memory/.git/hooks/pre-commit\): /tmp/gh-aw/cache-memory/.git/hooks/pre-commit: not writable" "$out"
run check --policy "$POLICY" --source "$SRC" --allowed-tools 'Write(/tmp/gh-aw/agent/**'
check "check --allowed-tools: a malformed string: exit 2" "2" "$rc"
check_match "  ... says where" "--allowed-tools: column [0-9]+: " "$out"

# ---- verify
write_policy "$FIXTURE_POLICY"
run verify "$MNT" --policy "$POLICY"
check "verify on a plain directory: exit 1" "1" "$rc"
check_match "  ... says nothing is mounted" "FAILED: nothing is mounted at $MNT \(expected an awfs mount\)" "$out"
mkdir -p "$SRC/rw/repo-a/hooks" && echo LEAK >"$SRC/rw/sub/leak"
# names an earlier run may have left where verify probes (a restored cache):
# pids in a fresh pid namespace are small and predictable
for d in rw ro mem-a rw/repo-a/hooks; do
	for i in $(seq 1 300); do : >"$SRC/$d/.awfs-verify.$i"; done
done
mount_awfs
tokfile=$(grep -lx "$MNT" /run/awfs/verify-* 2>/dev/null | head -1)
check "the mount's verify token: root's, 0600, in /run/awfs" "root 600 33" \
	"$(stat -c '%U %a' "$tokfile" 2>&1) $(head -1 "$tokfile" | wc -c)"
out=$(unshare --pid --fork --mount-proc "$AWFSCTL" verify "$MNT" --policy "$POLICY" 2>&1); rc=$?
check "verify as pid 1 among 300 planted .awfs-verify.N names in each probed directory: exit 0" "0" "$rc"
run verify "$MNT" --policy "$POLICY"
check "verify on the real mount: exit 0" "0" "$rc"
check_match "  ... probes each mask" 'ok: mask "secret": .*/secret is empty' "$out"
check_match "  ... a glob mask on what exists" 'ok: mask "\*.pem": .*/server.pem is empty' "$out"
check_match "  ... the read-only root" "ok: the root \(read-only by default\): $MNT refuses writes with EROFS" "$out"
check_match "  ... a writable path" "ok: allow_write \"rw\": $MNT/rw takes a create and an unlink" "$out"
check_match "  ... a glob read-only rule, through what matches it" 'ok: read_only "rw/repo-\*/hooks": .*/rw/repo-a/hooks refuses writes with EROFS' "$out"
check_match "  ... a glob writable rule, through what matches it" 'ok: allow_write "mem-\*": .*/mem-a takes a create and an unlink' "$out"
check_match "  ... and says how many held" "awfsctl verify: $MNT: [0-9]+ checks held" "$out"
check "verify's probes are not logged as denials" "0" "$(grep -c 'awfs-verify' "$LOG")"
# a name alone does not make a probe: root (and a guest behind virtiofsd, which
# arrives as root) is refused, logged and counted without the mount's token
check "root creating .awfs-verify.1 in ro: EROFS" "EROFS" "$(probe create "$MNT/ro/.awfs-verify.1x")"
check "root with a made-up token: EROFS" "EROFS" "$(probe create "$MNT/ro/.awfs-verify.0123456789abcdef0123456789abcdef.1")"
check "  ... both logged as denials" "2" "$(grep -c 'denied create for pid [0-9]* ("awfs-probe") uid 0 .*awfs-verify' "$LOG")"
mkdir -p "$T/alias"
run verify "$MNT" --policy "$POLICY" --also-at "$T/alias"
check "verify: an alias that is not mounted: exit 1" "1" "$rc"
# a policy that masks what this mount serves
printf '%s\n' "$FIXTURE_POLICY" | sed 's/path = "ghost"/path = "rootfile"/' >"$T/other.conf"; chmod 644 "$T/other.conf"
run verify "$MNT" --policy "$T/other.conf"
check "verify with a different policy: exit 1" "1" "$rc"
check_match "  ... names the mask that does not hold" 'FAILED: mask "rootfile": .*/rootfile shows an owner, size or time' "$out"
# a glob above the last component: probed through the entries that match
printf '%s\n' "$FIXTURE_POLICY" | sed 's|path = "ghost"|path = "rw/*/leak"|' >"$T/other2.conf"; chmod 644 "$T/other2.conf"
run verify "$MNT" --policy "$T/other2.conf"
check "verify with a glob mask this mount does not enforce: exit 1" "1" "$rc"
check_match "  ... names a path it matched below the glob" 'FAILED: mask "rw/\*/leak": [^ ]*/rw/[^/ ]+/leak' "$out"
# a non-awfs mount over a mask breaks it
mount -t tmpfs -o size=1m awfs-test-tmpfs "$MNT/secret"
echo leaked >"$MNT/secret/x"
run verify "$MNT" --policy "$POLICY"
umount "$MNT/secret"
check "verify with a mount over a mask: exit 1" "1" "$rc"
check_match "  ... fails closed at the mask" 'FAILED: mask "secret"' "$out"
run verify "$MNT" --policy "$T/bad.conf"
check "verify with a bad policy: exit 2" "2" "$rc"
unmount_awfs
check "  ... and counted at unmount (verify's own probes not)" "yes" "$(grep -q 'unmounting .*: 2 writes denied (by operation: create 2; by path: ro 2)' "$LOG" && echo yes)"
check "the token file goes at unmount" "" "$(grep -lx "$MNT" /run/awfs/verify-* 2>/dev/null)"
finish
