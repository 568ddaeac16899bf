#!/usr/bin/env bash
# links.sh - what the agent leaves behind reaches nothing past its tree: the
# shipped policy's links keys, tried by uid 1000 as an agent would. The
# attacks of the report (a link to /proc/self/environ, to the masked gateway
# log, to /etc/hostname, a FIFO) in every tree the host uploads, caches,
# pushes or copies after the agent; links = "read-only" in agent/ (Claude's
# --bare plugin links to the staged skills) taking only an absolute link to
# read-only ground; renames and hard links that would bring a link in; the
# trees that allow links (tool caches); host-made links kept; the log line
# and audit record of a refusal; real tools (npm's .bin, Python's venv)
# against the choice; and at the end, on the host, every link in a closed
# tree resolves inside the root, outside every mask, and no FIFO, socket
# or device node is left there.
. "$(dirname "$0")/lib.sh"
require_mount_env
make_tmp
P=${AWFS_DEFAULT_POLICY:?AWFS_DEFAULT_POLICY must name etc/awfs/policy.conf}
# the shipped policy, its root where this test's tree is (links name it)
sed "s|^root = \"/tmp/gh-aw\";|root = \"$SRC\";|" "$P" >"$POLICY" && chmod 644 "$POLICY"
check "the policy's root is this tree" "1" "$(grep -c "^root = \"$SRC\";" "$POLICY")"

# the trees the host reads after the agent, as the shipped policy names them
CLOSED="agent cache-memory cache-memory-x repo-memory/r comment-memory sandbox/agent/logs
	sandbox/agent/session-state mcp-cli-audit pi-agent-dir mcp-config safeoutputs/upload-artifacts"
OPEN=".cache .config .local home"
for d in $CLOSED $OPEN .claude/skills mcp-logs difc-proxy-tls; do mkdir -p "$SRC/$d"; done
echo GATEWAY-SECRET >"$SRC/mcp-logs/gateway.log"
echo KEY >"$SRC/difc-proxy-tls/server.key"
echo CA >"$SRC/difc-proxy-tls/ca.crt"
echo SKILL >"$SRC/.claude/skills/s.md"
echo PROMPT >"$SRC/aw-prompt.txt"
ln -s /etc "$SRC/drive-memory"			# host-made, out of the tree
ln -s ../agent "$SRC/cache-memory/hostlink"	# host-made, inside
touch "$SRC/agent/step-summary.md"		# a workflow's own redirect of the summary
ln -s agent/step-summary.md "$SRC/agent-step-summary.md"
chown -R "$AGENT_UID:$AGENT_UID" "$SRC"
chown -h root:root "$SRC/drive-memory" "$SRC/cache-memory/hostlink" "$SRC/agent-step-summary.md"
chmod 777 "$SRC"
mount_beside --audit "$T/audit.jsonl"

# ---- the report's attacks, in every closed tree
for d in $CLOSED; do
	expect "$d: a link to /proc/self/environ is refused" "EROFS" symlink /proc/self/environ "$MNT/$d/env"
	expect "$d: a link to the masked gateway log is refused" "EROFS" symlink "../../../mcp-logs/gateway.log" "$MNT/$d/gw"
	expect "$d: a link to /etc/hostname is refused" "EROFS" symlink /etc/hostname "$MNT/$d/h"
	expect "$d: a FIFO is refused" "EROFS" mkfifo "$MNT/$d/pipe"
	expect "$d: a socket is refused" "EROFS" bind "$MNT/$d/sock"
	check "$d: a regular file and a directory are not" "OK OK" \
		"$(aprobe write "$MNT/$d/file" x) $(aprobe mkdir "$MNT/$d/dir")"
done
for d in $CLOSED; do
	check "$d: on the host, no link, FIFO or socket was made" "" \
		"$(find "$SRC/$d" -maxdepth 1 \( -type l -o -type p -o -type s \) -newer "$POLICY" | grep -v hostlink)"
done
L=$(grep 'symlink' "$LOG" | grep 'sandbox/agent/logs/env' | head -1)
check_match "the refusal is logged with its rule and why" \
	'denied symlink .*allow_write rule "sandbox/agent/logs".*says links = "none".*upload-artifact' "$L"
check_match "  ... and audited" '"op":"symlink".*sandbox/agent/logs/env' \
	"$(grep '"event":"deny"' "$T/audit.jsonl" | grep 'logs/env' | head -1)"

# ---- agent/: links = "read-only"
A="$MNT/agent"
expect "agent/: an absolute link to the staged skills (read-only) is allowed" "OK" symlink "$SRC/.claude/skills" "$A/skills"
check "  ... it reads through" "SKILL" "$(as_agent cat "$A/skills/s.md")"
expect "agent/: a link to a read-only file is allowed" "OK" symlink "$SRC/aw-prompt.txt" "$A/prompt"
expect "agent/: a link to the masked gateway log is refused" "EROFS" symlink "$SRC/mcp-logs/gateway.log" "$A/gw"
expect "agent/: a link to a read-only directory with a mask below is refused" "EROFS" symlink "$SRC/difc-proxy-tls" "$A/tls"
expect "agent/: a link to a writable path is refused (the agent could move it)" "EROFS" symlink "$SRC/agent/skills" "$A/w"
expect "agent/: a relative link is refused" "EROFS" symlink "../.claude/skills" "$A/rel"
expect "agent/: a link with .. is refused" "EROFS" symlink "$SRC/.claude/../mcp-logs/gateway.log" "$A/dd"
expect "agent/: a link with // is refused" "EROFS" symlink "$SRC//.claude/skills" "$A/ss"
expect "agent/: a link through a host-made link (drive-memory, to /etc) is refused" "EROFS" symlink "$SRC/drive-memory/hostname" "$A/dm"
expect "agent/: a link to a host-made link (drive-memory itself) is refused" "EROFS" symlink "$SRC/drive-memory" "$A/dm2"
expect "agent/: a link to the root itself is refused" "EROFS" symlink "$SRC" "$A/root"
expect "agent/: a link to an absent read-only name is refused" "EROFS" symlink "$SRC/absent" "$A/absent"
expect "agent/: a link to /proc/self/environ is refused" "EROFS" symlink /proc/self/environ "$A/env"
expect "agent/: a FIFO is refused" "EROFS" mkfifo "$A/pipe"
if command -v node >/dev/null; then
	# Claude's --bare plugin directory, as gh-aw's claude_runtime.cjs makes it
	as_agent node -e 'const fs = require("fs"), path = require("path");
const dir = fs.mkdtempSync(path.join(process.argv[1], "gh-aw-claude-workflow-"));
fs.mkdirSync(path.join(dir, ".claude-plugin"));
fs.writeFileSync(path.join(dir, ".claude-plugin/plugin.json"), "{}");
fs.symlinkSync(path.join(process.argv[2], "skills"), path.join(dir, "skills"), "dir");
console.log(fs.readFileSync(path.join(dir, "skills/s.md"), "utf8").trim());
fs.rmSync(dir, { recursive: true, force: true });' "$A" "$SRC/.claude" >"$T/claude.out" 2>&1
	check "Claude's --bare plugin directory is made, read and removed in agent/" "SKILL" "$(cat "$T/claude.out")"
else
	echo "# Claude's plugin directory: not tried (no node here)"
fi

# ---- moving links in
as_agent ln -s /etc/hostname "$MNT/.cache/out"
check "a tree that allows links (.cache) takes one" "/etc/hostname" "$(readlink "$SRC/.cache/out")"
expect "  ... and a FIFO" "OK" mkfifo "$MNT/.cache/pipe"
expect "a link renamed from .cache into agent/ is refused" "EROFS" rename "$MNT/.cache/out" "$A/out"
expect "a FIFO renamed from .cache into cache-memory is refused" "EROFS" rename "$MNT/.cache/pipe" "$MNT/cache-memory/pipe"
as_agent sh -c "echo plain >'$MNT/.cache/plain'"
expect "even a regular file from .cache into agent/ (it could be a link by then)" "EROFS" rename "$MNT/.cache/plain" "$A/plain"
as_agent mkdir "$MNT/.cache/d"
as_agent ln -s /etc/hostname "$MNT/.cache/d/out"
expect "a directory holding a link, from .cache into agent/, is refused" "EROFS" rename "$MNT/.cache/d" "$A/d"
expect "an exchange of agent/file with a .cache link is refused" "EROFS" rename-exchange "$A/file" "$MNT/.cache/out"
expect "a hard link of a .cache link into agent/ is refused" "EROFS" link "$MNT/.cache/out" "$A/hl"
expect "a hard link of agent/'s own link within agent/ is refused" "EROFS" link "$A/skills" "$A/hl2"
expect "agent/'s own link renamed within agent/ is refused" "EROFS" rename "$A/prompt" "$A/dir/prompt"
expect "a host-made link in cache-memory renamed is refused" "EROFS" rename "$MNT/cache-memory/hostlink" "$MNT/cache-memory/dir/hostlink"
expect "a file from agent/ (\"read-only\") into cache-memory (\"none\") is refused: it could be a link by then" "EROFS" \
	rename "$A/file" "$MNT/cache-memory/from-agent"
expect "files and directories move between two \"none\" trees" "OK" rename "$MNT/cache-memory/file" "$MNT/comment-memory/from-cm"
expect "  ... a directory too" "OK" rename "$MNT/cache-memory/dir" "$MNT/comment-memory/dir-from-cm"
expect "  ... and from a stricter tree into a looser one" "OK" rename "$MNT/comment-memory/from-cm" "$A/from-cm"
expect "  ... and out to a tree that allows links" "OK" rename "$A/from-cm" "$MNT/.cache/from-agent"

# ---- host-made links are the host's
check "a host-made link in cache-memory reads through" "yes" \
	"$(as_agent test -d "$MNT/cache-memory/hostlink/" && echo yes || echo no)"
check "  ... and the host's link out of the tree is served as it is" "/etc" "$(readlink "$MNT/drive-memory")"
expect "the agent may remove the host's link in its tree" "OK" unlink "$MNT/cache-memory/hostlink"
as_agent sh -c "echo summary >>'$MNT/agent-step-summary.md'"
check "a host-made step-summary redirect (agent-step-summary.md -> agent/step-summary.md) keeps working" \
	"summary" "$(cat "$SRC/agent/step-summary.md")"

# ---- real tools against the choice (written down in awfs-policy(5) and docs/runtimes.md)
if command -v npm >/dev/null; then
	mkdir -p "$T/pkg/bin"
	printf '{"name":"awfs-bin-pkg","version":"1.0.0","bin":{"awfs-bin-pkg":"bin/cli.js"}}\n' >"$T/pkg/package.json"
	printf '#!/usr/bin/env node\nconsole.log("hi")\n' >"$T/pkg/bin/cli.js"
	(cd "$T" && npm pack --silent ./pkg >/dev/null 2>&1)
	chmod -R a+rX "$T/pkg" "$T"/awfs-bin-pkg-1.0.0.tgz
	as_agent mkdir "$A/proj"
	(cd "$A/proj" && as_agent env HOME="$T" npm_config_cache="$MNT/.cache/npm" npm install --offline --no-audit --no-fund "$T/awfs-bin-pkg-1.0.0.tgz" >"$T/npm.out" 2>&1)
	rc=$?
	check "npm install of a package with a bin fails in agent/ (its .bin link)" "failed" "$([ "$rc" != 0 ] && echo failed || echo "exit $rc")"
	check_match "  ... with EROFS" "EROFS|read-only" "$(cat "$T/npm.out")"
	(cd "$A/proj" && as_agent env HOME="$T" npm_config_cache="$MNT/.cache/npm" npm install --offline --no-audit --no-fund --no-bin-links "$T/awfs-bin-pkg-1.0.0.tgz" >"$T/npm.out" 2>&1)
	check "  ... and succeeds with --no-bin-links" "0" "$?"
	check "  ... the package is installed (a copy, not a link)" "yes" \
		"$([ -f "$SRC/agent/proj/node_modules/awfs-bin-pkg/package.json" ] && [ ! -L "$SRC/agent/proj/node_modules/awfs-bin-pkg" ] && echo yes || echo no)"
else
	echo "# npm: not tried (no npm here)"
fi
as_agent /usr/bin/python3 -m venv --without-pip "$A/venv" >"$T/venv.out" 2>&1
rc=$?
check "python3 -m venv fails in agent/ (bin/python and lib64 are links)" "failed" "$([ "$rc" != 0 ] && echo failed || echo "exit $rc")"
as_agent /usr/bin/python3 -m venv --without-pip "$MNT/.local/venv" >"$T/venv.out" 2>&1
check "  ... and works in .local, which allows links" "0" "$?"

# ---- on the host, at the end: nothing in a closed tree leads out or blocks
bad=""
for d in $CLOSED; do
	while IFS= read -r -d '' f; do
		case $f in "$SRC/cache-memory/hostlink") continue ;; esac
		if [ -L "$f" ]; then
			r=$(realpath -m "$f")
			case $r in
			"$SRC"/mcp-logs* | "$SRC"/difc-proxy-tls* | "$SRC"/agent* | "$SRC"/cache-memory* | "$SRC"/drive-memory*) bad="$bad $f->$r" ;;
			"$SRC"/*) ;;
			*) bad="$bad $f->$r" ;;
			esac
		else
			bad="$bad $f(special)"
		fi
	done < <(find "$SRC/$d" \( -type l -o -type p -o -type s -o -type b -o -type c \) -print0)
done
check "on the host, every link in a closed tree stays inside the root and outside every mask; no special file" "" "$bad"
check "  ... and the agent's links there are the ones allowed" "$SRC/.claude/skills $SRC/aw-prompt.txt" \
	"$(readlink "$SRC/agent/skills") $(readlink "$SRC/agent/prompt")"

unmount_awfs
finish
