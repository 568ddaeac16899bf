#!/usr/bin/env bash
# demo.sh - the README's first command (contrib/demo.sh) works and shows a
# mask, a pass-through write and a denied write with its log line.
. "$(dirname "$0")/lib.sh"
require_mount_env
make_tmp
out=$(AWFS_BIN="$AWFS" bash "$AWFS_TESTS/../contrib/demo.sh" "$T/demo" </dev/null 2>&1); rc=$?
check "the demo exits 0" "0" "$rc"
check_match "the demo mounts with the default policy" "awfs: mounted $T/demo \(source $T/demo\): masked: mcp-logs, sandbox/firewall/logs" "$out"
check_match "a masked log is not there" "gateway.log: No such file or directory" "$out"
check_match "a payload is readable" '\{"items":\[1,2,3\]\}' "$out"
check "a pass-through write is on the host" "a note for later" "$(cat "$T/demo/cache-memory/notes.md")"
check_match "a denied write is logged with its rule" "awfs: denied create for pid [0-9]+ \(sh\) uid 1000 gid 1000 by read_only rule \"mcp-payloads\" \([^)]*\); EROFS: $T/demo/mcp-payloads/forged.json: its directory $T/demo/mcp-payloads is read-only by read_only rule \"mcp-payloads\"" "$out"
check_match "the agent sees EROFS" "forged.json: Read-only file system" "$out"
check_match "the .git config of a memory is read-only" "denied open\(O_WRONLY\) for .*; EROFS: $T/demo/cache-memory/.git/config:" "$out"
check "the demo left no mount" "no" "$(is_mounted "$T/demo" && echo yes || echo no)"
check "the masked log is intact on the host" "yes" "$(grep -q ghp_example "$T/demo/mcp-logs/gateway.log" && echo yes)"
finish
