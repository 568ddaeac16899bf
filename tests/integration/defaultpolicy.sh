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
mcp-scripts/logs mcp-cli/bin agent cache-memory/.git cache-memory-notes/.git repo-memory/wiki/.git
comment-memory sandbox/agent/logs sandbox/agent/session-state mcp-cli-audit pi-agent-dir mcp-config/logs
mcp-config/sessions threat-detection/sandbox/firewall/logs threat-detection/sandbox/firewall/audit
sandbox/firewall-audit-logs home .cache .config .local mcp-payloads safeoutputs/assets
safeoutputs/upload-artifacts aw-prompts difc-proxy-tls .pi/skills base .github experiments url-cache
agent/graders agent/operational-value-grader-x1 .claude/skills .codex/agents .gemini/skills evals usage
daily-aic-ledger-source actions bin engine-cli/bin gh-aw playwright-browsers workspace/.gh-aw-drive-memory"
files="mcp-logs/safeoutputs/log.txt sandbox/firewall/logs/access.log sandbox/firewall/audit/a.jsonl
proxy-logs/proxy-tls/ca.crt aw-mcp/logs/x.log mcp-scripts/logs/x.log mcp-cli/manifest.json
mcp-cli/bin/github agent-stdio.log awf-config.json cache-memory/.git/config
cache-memory-notes/.git/config repo-memory/wiki/.git/config comment-memory/c1.md
agent-step-summary.md pi-streaming.jsonl claude-debug.log step-summary.md mcp-config/config.toml
mcp-config/.env mcp-config/mcp-servers.json mcp-config/gateway-output.json mcp-config/state_5.sqlite
mcp-payloads/p1.json safeoutputs/assets/a.png aw-prompts/prompt.txt models.json difc-proxy-tls/ca.crt
difc-proxy-tls/server.key difc-proxy-tls/server.crt aw_info.json aw-1.patch aw-1.bundle
agent_cli_start_ms.txt pre-agent-audit.txt agent_usage.json agent_usage.jsonl otel.jsonl
redacted-urls.log gemini-client-error-1.json github_rate_limits.jsonl
threat-detection/detection.log threat-detection/execution.json threat-detection/detection_result.json
threat-detection/detection_result_full.json threat-detection/sandbox/firewall/logs/access.log
threat-detection/sandbox/firewall/audit/a.jsonl sandbox/firewall-audit-logs/a.jsonl
sandbox/firewall/awf-reflect.json agent/graders/grader_results.json
agent/operational-value-grader-x1/operational-value.sh agent_execution.json agent_execution.json.tmp
agent_execution_exit_code.txt safeoutputs.jsonl agent_output.json agent-session.jsonl
otlp-export-errors.jsonl evals.jsonl evals/evals.log usage/u.json agentic-workflow-usage-scan-v2.jsonl
safe-output-items.jsonl safe-output-errors.json temporary-id-map.json daily-aic-ledger-source/l.json
actions/setup.sh bin/copilot engine-cli/bin/claude gh-aw/gh-aw playwright-browsers/p .claude/skills/s.md
.codex/agents/a.md .gemini/skills/s.md"
for d in $dirs; do mkdir -p "$SRC/$d"; done
for f in $files; do echo "HOST:$f" >"$SRC/$f"; done
# host-made links into the workspace (gh-aw drive memory), outside the tree
ln -s ../workspace/.gh-aw-drive-memory "$SRC/drive-memory"
ln -s ../workspace/.gh-aw-drive-memory "$SRC/drive-memory-notes"
mv "$SRC/workspace" "$T/workspace"
chown -R "$AGENT_UID:$AGENT_UID" "$SRC"
chown root:root "$SRC" && chmod 755 "$SRC"	# the root, as the runner leaves it: not the agent's

mount_awfs
check_match "the mount line: nothing unclassified" "unclassified: none$" "$(grep ' mounted ' "$LOG")"
check_match "awfsctl check: the tree is classified" "awfsctl check: $POLICY: 0 errors, 0 warnings" \
	"$("$AWFSCTL" check --policy "$POLICY" --source "$SRC" 2>&1)"

# masked: served empty, the host's content unseen
for m in mcp-logs sandbox/firewall/logs sandbox/firewall/audit proxy-logs aw-mcp/logs mcp-scripts/logs \
	threat-detection/sandbox/firewall/logs threat-detection/sandbox/firewall/audit sandbox/firewall-audit-logs; do
	expect "mask: $m is an empty directory" "OK" readdir "$MNT/$m"
done
for m in agent-stdio.log awf-config.json difc-proxy-tls/server.key difc-proxy-tls/server.crt; do
	expect "mask: $m is an empty file" "OK" read "$MNT/$m"
	expect "  ... and refuses writes" "EROFS" write "$MNT/$m" x
done
expect "mask: mcp-logs/safeoutputs is not reachable" "ENOENT" read "$MNT/mcp-logs/safeoutputs/log.txt"

# writable: the agent creates and writes
for w in agent cache-memory cache-memory-notes repo-memory/wiki comment-memory sandbox/agent/logs \
	sandbox/agent/session-state mcp-cli-audit pi-agent-dir mcp-config mcp-config/logs mcp-config/sessions \
	safeoutputs/upload-artifacts home .cache .config .local; do
	expect "allow_write: a file created in $w" "OK" write "$MNT/$w/from-agent" y
done
for w in agent-step-summary.md pi-streaming.jsonl comment-memory/c1.md claude-debug.log step-summary.md \
	threat-detection/detection_result.json threat-detection/detection_result_full.json \
	sandbox/firewall/awf-reflect.json mcp-config/state_5.sqlite; do
	expect "allow_write: $w written in place" "OK" write "$MNT/$w" z
done

# read-only: readable, and every write refused
for r in cache-memory/.git cache-memory-notes/.git repo-memory/wiki/.git mcp-payloads safeoutputs \
	safeoutputs/assets aw-prompts difc-proxy-tls .pi base .github experiments url-cache agent/graders \
	agent/operational-value-grader-x1 threat-detection .claude/skills .codex/agents .gemini/skills evals \
	usage daily-aic-ledger-source actions bin engine-cli/bin gh-aw playwright-browsers mcp-cli mcp-cli/bin; do
	expect "read_only: nothing created in $r" "EROFS" write "$MNT/$r/from-agent" y
done
for r in cache-memory/.git/config mcp-payloads/p1.json safeoutputs/assets/a.png aw-prompts/prompt.txt \
	models.json difc-proxy-tls/ca.crt aw_info.json aw-1.patch aw-1.bundle agent_cli_start_ms.txt \
	pre-agent-audit.txt agent_usage.json agent_usage.jsonl otel.jsonl redacted-urls.log \
	gemini-client-error-1.json github_rate_limits.jsonl mcp-config/config.toml mcp-config/.env \
	mcp-config/mcp-servers.json mcp-config/gateway-output.json threat-detection/detection.log \
	threat-detection/execution.json agent/graders/grader_results.json \
	agent/operational-value-grader-x1/operational-value.sh agent_execution.json agent_execution.json.tmp \
	agent_execution_exit_code.txt safeoutputs.jsonl agent_output.json agent-session.jsonl \
	otlp-export-errors.jsonl evals.jsonl evals/evals.log usage/u.json agentic-workflow-usage-scan-v2.jsonl \
	safe-output-items.jsonl safe-output-errors.json temporary-id-map.json daily-aic-ledger-source/l.json \
	actions/setup.sh bin/copilot engine-cli/bin/claude gh-aw/gh-aw playwright-browsers/p \
	.claude/skills/s.md .codex/agents/a.md .gemini/skills/s.md mcp-cli/manifest.json mcp-cli/bin/github; do
	expect "read_only: $r is readable" "OK:HOST:$r\x0a" read "$MNT/$r"
	expect "  ... and not writable" "EROFS" write "$MNT/$r" x
done
expect "read_only: a new aw-*.patch cannot be planted" "EROFS" write "$MNT/aw-2.patch" x
expect "read_only: agent/graders cannot be replaced by a link the host would write through" "EROFS" \
	rename "$MNT/agent/graders" "$MNT/agent/graders-old"
expect "read_only: nor planted where the host makes its grader directory" "EROFS" mkdir "$MNT/agent/operational-value-grader-x2"
expect "read_only: a drive-memory link stays the host's" "EROFS" unlink "$MNT/drive-memory"
check "  ... and reads as the host's link (its target, the workspace, is outside awfs)" "OK:../workspace/.gh-aw-drive-memory" \
	"$(aprobe readlink "$MNT/drive-memory")"
expect "read_only: a named drive-memory link too" "EROFS" unlink "$MNT/drive-memory-notes"

# the single file in the read-only root (agent-step-summary.md): in place,
# or replaced through a temporary beside it (atomic.sh tries the writers);
# here the root is root's, so the host refuses that temporary as it would
# without awfs; and every other name there is refused with a line that says
# how the file can be written (the root is shown 01777 so the create
# reaches awfs even though root owns the root)
# (a fresh mount: the refusals above have spent the denial lines' burst)
unmount_awfs
: >"$LOG"
mount_awfs
S="$MNT/agent-step-summary.md"
check_match "the root is shown 1777 while it holds a single writable file" "^OK:type=dir mode=1777 " "$(aprobe stat "$MNT")"
as_agent sh -c "printf 'line one\n' >'$S' && printf 'line two\n' >>'$S'"
check "in place: > and >> work" "line one
line two" "$(cat "$SRC/agent-step-summary.md")"
check_match "sed -i: the host refuses its temporary in a root the agent may not write" "Permission denied" \
	"$(as_agent sed -i s/one/ONE/ "$S" 2>&1)"
check "  ... and the file is unchanged" "line one" "$(head -1 "$SRC/agent-step-summary.md")"
expect "another file in the root: refused" "EROFS" write "$MNT/notes.md" x
check_match "  ... the log says how the single files can be written" \
	"denied create for .*EROFS: .*notes.md\": its directory \"$MNT\" is read-only.*; in this directory only \"claude-debug.log\", \"step-summary.md\", \"agent-step-summary.md\", \"pi-streaming.jsonl\" are writable: in place \(>, >>, truncate\), or through a temporary file beside them renamed onto one" "$(cat "$LOG")"
check "rm fails" "fail" "$(as_agent rm -f "$S" 2>/dev/null && echo ok || echo fail)"
check_match "  ... and says it cannot be removed" \
	"denied unlink for .*; \"agent-step-summary.md\" is writable in place, or replaced by a temporary file made beside it and renamed onto it; it cannot be removed or renamed" "$(cat "$LOG")"
check_match ".awfs/denials shows it to the agent too" "in this directory only \"claude-debug.log\", \"step-summary.md\", \"agent-step-summary.md\"" "$(as_agent cat "$MNT/.awfs/denials")"
check_match ".awfs/README: written in place or replaced, not deleted" "These single files can be written in place.*
  $MNT/agent-step-summary.md" "$(as_agent cat "$MNT/.awfs/README")"
check "  ... and it is not listed among the paths where files can be deleted" "" \
	"$(as_agent cat "$MNT/.awfs/README" | sed -n '/create, change and delete/,/cannot be removed or renamed/p' | grep agent-step-summary)"
expect "the root stays read-only" "EROFS" write "$MNT/new-top-level" x
unmount_awfs
check "a clean stop" "0" "$AWFS_RC"
check "the host's masked log is intact" "HOST:agent-stdio.log" "$(cat "$SRC/agent-stdio.log")"
finish
