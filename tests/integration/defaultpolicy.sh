#!/usr/bin/env bash
# defaultpolicy.sh - the shipped policy (etc/awfs/policy.conf) over a tree
# holding every entry gh-aw and AWF make under /tmp/gh-aw today: each one
# gets its class (masked, writable, read-only), and none is unclassified.
. "$(dirname "$0")/lib.sh"
require_mount_env
make_tmp
P=${AWFS_DEFAULT_POLICY:?AWFS_DEFAULT_POLICY must name etc/awfs/policy.conf}
cp "$P" "$POLICY" && chmod 644 "$POLICY"

# the tree as the runner leaves it before the agent (the host's steps own it)
dirs="mcp-logs/safeoutputs sandbox/firewall/logs sandbox/firewall/audit proxy-logs/proxy-tls aw-mcp/logs
mcp-scripts/logs mcp-cli agent cache-memory/.git cache-memory-notes/.git repo-memory/wiki/.git
comment-memory sandbox/agent/logs sandbox/agent/session-state mcp-cli-audit pi-agent-dir mcp-config
threat-detection home .cache .config .local cache mcp-payloads safeoutputs/assets aw-prompts
difc-proxy-tls .pi/skills base .github experiments url-cache"
files="mcp-logs/safeoutputs/log.txt sandbox/firewall/logs/access.log sandbox/firewall/audit/a.jsonl
proxy-logs/proxy-tls/ca.crt aw-mcp/logs/x.log mcp-scripts/logs/x.log mcp-cli/manifest.json
agent-stdio.log awf-config.json cache-memory/.git/config cache-memory-notes/.git/config
repo-memory/wiki/.git/config comment-memory/c1.md agent-step-summary.md pi-streaming.jsonl
mcp-config/config.toml mcp-payloads/p1.json safeoutputs/assets/a.png aw-prompts/prompt.txt
models.json difc-proxy-tls/ca.crt aw_info.json aw-1.patch aw-1.bundle agent_cli_start_ms.txt
pre-agent-audit.txt agent_usage.json agent_usage.jsonl otel.jsonl redacted-urls.log
gemini-client-error-1.json github_rate_limits.jsonl"
for d in $dirs; do mkdir -p "$SRC/$d"; done
for f in $files; do echo "HOST:$f" >"$SRC/$f"; done
chown -R "$AGENT_UID:$AGENT_UID" "$SRC"
chown root:root "$SRC" && chmod 755 "$SRC"	# the root, as the runner leaves it: not the agent's

mount_awfs
check_match "the mount line: nothing unclassified" "unclassified: none$" "$(grep ' mounted ' "$LOG")"
check_match "awfsctl check: the tree is classified" "awfsctl check: $POLICY: 0 errors, 0 warnings" \
	"$("$AWFSCTL" check --policy "$POLICY" --source "$SRC" 2>&1)"

# masked: served empty, the host's content unseen
for m in mcp-logs sandbox/firewall/logs sandbox/firewall/audit proxy-logs aw-mcp/logs mcp-scripts/logs mcp-cli; do
	expect "mask: $m is an empty directory" "OK" readdir "$MNT/$m"
done
for m in agent-stdio.log awf-config.json; do
	expect "mask: $m is an empty file" "OK" read "$MNT/$m"
	expect "  ... and refuses writes" "EROFS" write "$MNT/$m" x
done
expect "mask: mcp-logs/safeoutputs is not reachable" "ENOENT" read "$MNT/mcp-logs/safeoutputs/log.txt"

# writable: the agent creates and writes
for w in agent cache-memory cache-memory-notes repo-memory/wiki comment-memory sandbox/agent/logs \
	sandbox/agent/session-state mcp-cli-audit pi-agent-dir mcp-config threat-detection home .cache \
	.config .local cache; do
	expect "allow_write: a file created in $w" "OK" write "$MNT/$w/from-agent" y
done
for w in agent-step-summary.md pi-streaming.jsonl comment-memory/c1.md mcp-config/config.toml; do
	expect "allow_write: $w written in place" "OK" write "$MNT/$w" z
done

# read-only: readable, and every write refused
for r in cache-memory/.git cache-memory-notes/.git repo-memory/wiki/.git mcp-payloads safeoutputs \
	safeoutputs/assets aw-prompts difc-proxy-tls .pi base .github experiments url-cache; do
	expect "read_only: nothing created in $r" "EROFS" write "$MNT/$r/from-agent" y
done
for r in cache-memory/.git/config mcp-payloads/p1.json safeoutputs/assets/a.png aw-prompts/prompt.txt \
	models.json difc-proxy-tls/ca.crt aw_info.json aw-1.patch aw-1.bundle agent_cli_start_ms.txt \
	pre-agent-audit.txt agent_usage.json agent_usage.jsonl otel.jsonl redacted-urls.log \
	gemini-client-error-1.json github_rate_limits.jsonl; do
	expect "read_only: $r is readable" "OK:HOST:$r\x0a" read "$MNT/$r"
	expect "  ... and not writable" "EROFS" write "$MNT/$r" x
done
expect "read_only: a new aw-*.patch cannot be planted" "EROFS" write "$MNT/aw-2.patch" x

# the single file in the read-only root (agent-step-summary.md): in place
# only, and every tool that replaces it through a sibling learns why, also
# when root owns the root (the root is shown 01777 so the create reaches awfs)
S="$MNT/agent-step-summary.md"
check_match "the root is shown 1777 while it holds a single writable file" "^OK:type=dir mode=1777 " "$(aprobe stat "$MNT")"
as_agent sh -c "printf 'line one\n' >'$S' && printf 'line two\n' >>'$S'"
check "in place: > and >> work" "line one
line two" "$(cat "$SRC/agent-step-summary.md")"
check "sed -i fails (a temporary file beside it)" "fail" "$(as_agent sed -i s/one/ONE/ "$S" 2>/dev/null && echo ok || echo fail)"
check "  ... and the file is unchanged" "line one" "$(head -1 "$SRC/agent-step-summary.md")"
check_match "  ... the log says how to write it" \
	"denied create for .*EROFS: .*: its directory \"$MNT\" is read-only.*; in this directory only \"agent-step-summary.md\", \"pi-streaming.jsonl\" are writable, in place: write to them directly" "$(cat "$LOG")"
check "rm fails" "fail" "$(as_agent rm -f "$S" 2>/dev/null && echo ok || echo fail)"
check_match "  ... and says it cannot be removed" \
	"denied unlink for .*; \"agent-step-summary.md\" is writable in place only: write to it directly \(>, >>, truncate\); it cannot be removed, renamed or replaced" "$(cat "$LOG")"
check_match ".awfs/denials shows it to the agent too" "in this directory only \"agent-step-summary.md\"" "$(as_agent cat "$MNT/.awfs/denials")"
check_match ".awfs/README: written in place, not deleted" "These single files can be written in place only.*
  $MNT/agent-step-summary.md" "$(as_agent cat "$MNT/.awfs/README")"
check "  ... and it is not listed among the paths where files can be deleted" "" \
	"$(as_agent cat "$MNT/.awfs/README" | sed -n '/create, change and delete/,/cannot be removed or renamed/p' | grep agent-step-summary)"
expect "the root stays read-only" "EROFS" write "$MNT/new-top-level" x
unmount_awfs
check "a clean stop" "0" "$AWFS_RC"
check "the host's masked log is intact" "HOST:agent-stdio.log" "$(cat "$SRC/agent-stdio.log")"
finish
