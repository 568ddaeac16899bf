#!/usr/bin/env bash
# lockfiles.sh - awfsctl check --workflow on compiled workflows written for
# these tests (tests/integration/workflows/, each planting one kind of
# mismatch with the shipped policy; clean.lock.yml plants none), and the
# README's gate (--allowed-tools --strict) with the grants gh-aw emits
# today: it passes on the shipped policy and fails on a planted real
# disagreement. No mount: awfsctl reads files only.
. "$(dirname "$0")/lib.sh"
W=$(cd "$(dirname "$0")/workflows" && pwd)
make_tmp
P=${AWFS_DEFAULT_POLICY:?AWFS_DEFAULT_POLICY must name etc/awfs/policy.conf}
cp "$P" "$POLICY" && chmod 644 "$POLICY"

# ctl ARGS...: awfsctl check's output, then "rc=N" on a line of its own
ctl() {
	local out rc
	out=$("$AWFSCTL" check --policy "$POLICY" --root /tmp/gh-aw "$@" 2>&1)
	rc=$?
	printf '%s\nrc=%s\n' "$out" "$rc"
}

out=$(ctl --workflow "$W/clean.lock.yml" --strict)
check_match "a clean workflow passes, --strict included" "0 errors, 0 warnings
rc=0" "$out"

out=$(ctl --workflow "$W/told-to-write.lock.yml")
check_match "--debug-file where the policy refuses: an error naming the job, the step and why" \
	"^error: .*told-to-write.lock.yml:[0-9]+: job agent, step \"Execute Claude Code CLI\": /tmp/gh-aw/aw-prompts/debug.log: the agent is told to write it \(--debug-file\), but not writable although the grant covers it: read-only by read_only rule \"aw-prompts\"" "$out"
check_match "  ... exit status 1" "rc=1$" "$out"

out=$(ctl --workflow "$W/summary.lock.yml")
check_match "GITHUB_STEP_SUMMARY where the policy refuses: an error" \
	"^error: .*job detection, step \"Execute Codex CLI\": /tmp/gh-aw/models.json: the agent is told to write it \(GITHUB_STEP_SUMMARY\)" "$out"
check "  ... and the detection verdict (-o) is writable: no other finding" "1" "$(printf '%s\n' "$out" | grep -c '^error\|^warning')"

out=$(ctl --workflow "$W/grant.lock.yml")
check_match "a tool grant into a read-only file: an error" \
	"^error: .*job agent, step \"Execute Claude Code CLI\": /tmp/gh-aw/aw_info.json: Write\(/tmp/gh-aw/aw_info.json\): not writable" "$out"
check_match "  ... the other grant's stated exceptions are notes" \
	"^note: .*/tmp/gh-aw/agent/graders: Write\(/tmp/gh-aw/agent/\*\): an exception the policy makes on purpose" "$out"

out=$(ctl --workflow "$W/runs-after.lock.yml")
check_match "a step after the agent runs a script the agent could write: a warning naming the step" \
	"^warning: .*job agent, step \"Post-process\": /tmp/gh-aw/agent/post-process.sh: this step runs it after the agent, and the agent can write it" "$out"
check_match "  ... exit 0 without --strict" "rc=0$" "$out"
check_match "  ... an error with --strict" "^error: .*Post-process.*post-process.sh" "$(ctl --workflow "$W/runs-after.lock.yml" --strict)"

out=$(ctl --workflow "$W/git-after.lock.yml")
check_match "git after the agent in a repository whose .git it could write: a warning" \
	"^warning: .*step \"Commit the notes\": /tmp/gh-aw/agent/notes/.git: this step runs git there after the agent" "$out"

out=$(ctl --workflow "$W/uploads.lock.yml" --strict)
check_match "an upload of what the agent writes: a warning, also with --strict" \
	"^warning: .*step \"Upload agent artifacts\": /tmp/gh-aw/agent/: this step uploads it as an artifact after the agent" "$out"
check "  ... the read-only file beside it: nothing" "" "$(printf '%s\n' "$out" | grep 'aw_info.json')"
check_match "  ... exit 0" "rc=0$" "$out"

out=$(ctl --workflow "$W/unclassified.lock.yml")
check_match "a name no rule classifies: a warning" \
	"^warning: .*step \"Prepare\": /tmp/gh-aw/ci-assessment.json: the workflow names /tmp/gh-aw/ci-assessment.json, which no rule classifies" "$out"
check_match "  ... an error with --strict" "rc=1$" "$(ctl --workflow "$W/unclassified.lock.yml" --strict)"

out=$(ctl --workflow "$W/clean.lock.yml" "$W/grant.lock.yml" "$W/uploads.lock.yml")
check "several workflows at once: each is read" "clean.lock.yml grant.lock.yml uploads.lock.yml" \
	"$(printf '%s\n' "$out" | grep -o '[a-z-]*\.lock\.yml' | sort -u | tr '\n' ' ' | sed 's/ $//')"
check_match "  ... and each keeps its findings" "1 error, 1 warning" "$out"

out=$(ctl --workflow "$W/not-yaml.lock.yml")
check_match "not YAML: exit 2, with file, line and column" "^awfsctl check: --workflow .*not-yaml.lock.yml:[0-9]+:[0-9]+: not YAML: .*
.*rc=2$" "$out"
out=$(ctl --workflow "$W/no-jobs.lock.yml")
check_match "no jobs: exit 2, saying what was expected" "no jobs: mapping at the top level.*
rc=2$" "$out"
check_match "a missing file: exit 2" "cannot open: No such file or directory
rc=2$" "$(ctl --workflow "$T/absent.lock.yml")"

# ---- the README's gate, with the grants gh-aw emits today (in AWF's
# lock files: agent/, cache-memory/, and /tmp/* in every Claude workflow;
# the newest: //tmp/** and the same trees with **)
TODAY='Bash(git:*),Read,Edit,MultiEdit,NotebookEdit,Write,Edit(/tmp/*),MultiEdit(/tmp/*),Write(/tmp/*),Edit(/tmp/gh-aw/agent/*),MultiEdit(/tmp/gh-aw/agent/*),Write(/tmp/gh-aw/agent/*),Edit(/tmp/gh-aw/cache-memory/*),MultiEdit(/tmp/gh-aw/cache-memory/*),Write(/tmp/gh-aw/cache-memory/*)'
NEWEST='Edit(//tmp/**),Edit(//tmp/gh-aw/agent/**),Edit(//tmp/gh-aw/cache-memory/**),Read(//tmp/**)'
out=$(ctl --allowed-tools "$TODAY" --strict)
check_match "the README's gate passes on the shipped policy with today's grants" "rc=0$" "$out"
check_match "  ... the breadth of /tmp/* is a warning" "^warning: Write\(/tmp/\*\): /tmp/gh-aw: the grant names the mount root itself" "$out"
check_match "  ... cache-memory/.git is a stated exception" \
	"^note: Write\(/tmp/gh-aw/cache-memory/\*\): /tmp/gh-aw/cache-memory/.git: an exception the policy makes on purpose" "$out"
check_match "  ... and the newest grants pass too" "rc=0$" "$(ctl --allowed-tools "$NEWEST" --strict)"
check_match "the gate fails on a planted real disagreement (a grant into a read-only file)" "rc=1$" \
	"$(ctl --allowed-tools "$TODAY,Write(/tmp/gh-aw/aw_info.json)" --strict)"
# an exception nobody acknowledged stays an error under --strict
sed 's/^    exception = true; },$/    },/' "$POLICY" >"$T/unacked.conf" && chmod 644 "$T/unacked.conf"
check "  ... and on an exception the policy does not state (exception = true removed)" "1" \
	"$("$AWFSCTL" check --policy "$T/unacked.conf" --root /tmp/gh-aw --allowed-tools "$TODAY" --strict >/dev/null 2>&1; echo $?)"
finish
