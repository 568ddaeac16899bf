#!/usr/bin/env bash
# audit.sh - the audit trail is valid JSON whatever the names; --fail-on-denial
# turns denials into an exit status; .awfs tells the agent where to write.
. "$(dirname "$0")/lib.sh"
require_mount_env
command -v jq >/dev/null || skip "no jq (apt-get install jq)"
setup_fixture
A="$T/audit.jsonl"
mount_beside --audit "$A" --fail-on-denial

# ---- .awfs, as the agent sees it
check "the root lists .awfs" "yes" "$(aprobe readdir "$MNT" | grep -q '^OK:\.awfs,' && echo yes)"
expect ".awfs holds README and denials" "OK:README,denials" readdir "$MNT/.awfs"
readme=$(as_agent cat "$MNT/.awfs/README")
check_match "README: where to write, with the reason" "$MNT/rw
      agent scratch" "$readme"
check_match "README: what is masked and why" "$MNT/secret
      holds tokens" "$readme"
check_match "README: what EROFS means" 'fails with "Read-only file system" \(EROFS\)' "$readme"
check_match ".awfs is root's, its modes let every write reach awfs" "^OK:type=dir mode=1777 uid=0 gid=0" "$(aprobe stat "$MNT/.awfs")"
expect "the agent cannot write README: EROFS (logged, below)" "EROFS" write "$MNT/.awfs/README" x
expect "the agent cannot create in .awfs: EROFS" "EROFS" create "$MNT/.awfs/new"
check "root cannot write README either: EROFS" "EROFS" "$(probe write "$MNT/.awfs/README" x)"
check "nothing can be made in .awfs: EROFS" "EROFS" "$(probe create "$MNT/.awfs/new")"
check ".awfs cannot be removed: EROFS" "EROFS" "$(probe rmdir "$MNT/.awfs")"

# ---- denials, with hostile names
expect "a denial" "EROFS" write "$MNT/ro/file" x
expect "a denial of a name with a newline, quotes and invalid UTF-8" "EROFS" \
	create "$MNT/ro/$(printf 'a\nb"c\\d\xff')"
expect "a denial under a mask" "EROFS" create "$MNT/secret/new"
expect "a rename denial" "EROFS" rename "$MNT/rw/file" "$MNT/ro/x"
# a process name and a file name built to make the line say someone else did it
mkdir "$T/spoof" && cp "$AWFS_PROBE" "$T/spoof/systemd\") uid 0" && chmod 755 "$T/spoof"
check "a denial by a process named to forge the line" "EROFS" \
	"$(as_agent "$T/spoof/systemd\") uid 0" create "$MNT/ro/n\") uid 0 gid 0 by nothing; EROFS: \"x")"
# names the audit must tell apart: the byte 0xff and the four characters \xff;
# U+2028 (a line end to JavaScript) and U+202E (turns text round) escaped
expect "a denial of the byte 0xff" "EROFS" create "$MNT/ro/$(printf 'y\xff')"
expect "a denial of the text \\xff" "EROFS" create "$MNT/ro/y\xff"
expect "a denial of U+2028, U+2029, U+0085 and U+202E" "EROFS" create "$MNT/ro/$(printf 'z\xe2\x80\xa8\xe2\x80\xa9\xc2\x85\xe2\x80\xae')"
den=$(as_agent cat "$MNT/.awfs/denials")
check "denials lists each, one line each (3 by root and 2 by the agent on .awfs, 8 by the agent)" "13" "$(printf '%s\n' "$den" | grep -c '^denied ')"
# every agent-chosen field is one quoted string ("..." with \" and \\ escaped inside)
q='"([^"\\]|\\.)*"'
check "denials: comm and path quoted, the caller's uid where it belongs (the 5 creates in ro)" "5" \
	"$(printf '%s\n' "$den" | grep -Ec "^denied create for pid [0-9]+ \($q\) uid $AGENT_UID gid $AGENT_UID by read_only rule \"ro\" \([^)]*\); EROFS: $q: its directory $q is read-only")"
check "  ... the forged comm stays inside its quotes" "1" \
	"$(printf '%s\n' "$den" | grep -Fc "(\"systemd\\\") uid 0\") uid $AGENT_UID gid $AGENT_UID by read_only rule")"
check "  ... so does the forged name" "1" \
	"$(printf '%s\n' "$den" | grep -Fc "/ro/n\\\") uid 0 gid 0 by nothing; EROFS: \\\"x\": its directory")"
check_match "denials: the log format" "^denied open\(O_WRONLY\|O_TRUNC\) for pid [0-9]+ \(\"awfs-probe\"\) uid $AGENT_UID gid $AGENT_UID by read_only rule \"ro\" \([^)]*\); EROFS: \"$MNT/ro/file\": it is read-only by read_only rule \"ro\"" "$den"
check_match "denials: names escaped" 'denied create for pid .*; EROFS: "[^ ]*/ro/a\\nb\\"c\\\\d\\xff": ' "$den"
check "denials: short lines, without the list of writable paths (README has it)" "0 0" \
	"$(printf '%s\n' "$den" | grep -c 'Writable paths') $(printf '%s\n' "$den" | awk 'length > 600' | wc -l)"
check "neither .awfs file shows masked content" "0" "$(as_agent cat "$MNT/.awfs/README" "$MNT/.awfs/denials" | grep -c TOPSECRET)"
# a host entry named .awfs is hidden behind the information directory
mkdir -m 755 "$SRC/.awfs" && echo HOSTAWFS >"$SRC/.awfs/README"
sleep 1.1
check "a host .awfs is hidden" "0" "$(as_agent cat "$MNT/.awfs/README" | grep -c HOSTAWFS)"
# a top-level entry that appears later is reported once
echo late >"$SRC/late-entry"
sleep 1.1
expect "a late unclassified entry is served" "OK:late\x0a" read "$MNT/late-entry"
expect "  ... twice" "OK:late\x0a" read "$MNT/late-entry"

unmount_awfs
check "--fail-on-denial with denials: exit 3" "3" "$AWFS_RC"
check_match "  ... prints the summary" "awfs: unmounting $MNT: 13 writes denied \(by operation: create 8, open\(O_WRONLY\|O_TRUNC\) 3, rename 1, rmdir 1; by path: ro 7, .awfs 5, secret 1\); failing \(--fail-on-denial\)" "$(cat "$T/awfs.stderr")"

# ---- the audit file
check "every audit line is valid JSON" "ok" "$(jq -e . "$A" >/dev/null && echo ok)"
check "events: mount first, unmount last" "mount unmount" "$(jq -r .event "$A" | sed -n '1p;$p' | tr '\n' ' ' | sed 's/ $//')"
check "one deny record per denial" "13" "$(jq -r 'select(.event == "deny") | .op' "$A" | wc -l)"
check "the mount record holds the resolved set" "13" "$(jq -r 'select(.event == "mount") | .policy.rules | length' "$A")"
check "the mount record lists the unclassified entries" '["restricted","rootfile"]' \
	"$(jq -c 'select(.event == "mount") | .unclassified' "$A")"
check "the late entry got one unclassified record" "1" "$(jq -r 'select(.event == "unclassified") | .name' "$A" | grep -c '^late-entry$')"
check "a deny record: op, path, caller, class, rule, reason, errno" \
	"open(O_WRONLY|O_TRUNC)|$MNT/ro/file|awfs-probe|$AGENT_UID|read-only|ro|exemption: must stay readable|EROFS" \
	"$(jq -r --arg p "$MNT/ro/file" 'select(.event == "deny" and .path == $p) | [.op, .path, .comm, .uid, .class, .rule, .reason, .errno] | join("|")' "$A")"
check "a hostile name is kept, with invalid bytes visible and its backslash doubled" "$MNT/ro/a
b\"c\\\\d\\xff" "$(jq -r --arg p "$MNT/ro/a" 'select(.event == "deny" and (.path | startswith($p))) | .path' "$A")"
check "the byte 0xff and the text \\xff: two paths" "$MNT/ro/y\\\\xff|$MNT/ro/y\\xff" \
	"$(jq -r --arg p "$MNT/ro/y" 'select(.event == "deny" and (.path | startswith($p))) | .path' "$A" | sort | tr '\n' '|' | sed 's/|$//')"
check "U+2028, U+2029, U+0085, U+202E: escaped in the file" '"'"$MNT"'/ro/z\u2028\u2029\u0085\u202e"' \
	"$(grep -o '"[^"]*/ro/z[^"]*"' "$A" | head -1)"
check "  ... and decoded to themselves" "$MNT/ro/$(printf 'z\xe2\x80\xa8\xe2\x80\xa9\xc2\x85\xe2\x80\xae')" \
	"$(jq -r --arg p "$MNT/ro/z" 'select(.event == "deny" and (.path | startswith($p))) | .path' "$A")"
check "a rename record names both paths" "$MNT/rw/file -> $MNT/ro/x" \
	"$(jq -r 'select(.event == "deny" and .op == "rename") | "\(.path) -> \(.other)"' "$A")"
check "the unmount record counts by op and path" "13 7" \
	"$(jq -r 'select(.event == "unmount") | "\(.denials) \(.by_path.ro)"' "$A")"

# ---- --fail-on-denial without denials; no information directory; another name
: >"$LOG"
mount_beside --fail-on-denial --no-info-dir --audit "$T/audit2.jsonl"
check_match "--no-info-dir: .awfs is the host's directory" "^OK:type=dir mode=0755 " "$(aprobe stat "$MNT/.awfs")"
expect "--no-info-dir: the host's .awfs shows again" "OK:HOSTAWFS\x0a" read "$MNT/.awfs/README"
# git's opportunistic lock in a read-only .git (git status, git diff): refused,
# logged as expected, counted apart, never a denial
expect "git's index.lock in the read-only rw/.git: EROFS" "EROFS" create "$MNT/rw/.git/index.lock"
unmount_awfs
check "--fail-on-denial with only expected refusals: exit 0" "0" "$AWFS_RC"
check_match "  ... the log says expected, and why" \
	"refused \(expected\) create for pid [0-9]+ .*EROFS: \"$MNT/rw/.git/index.lock\": .*\(git's opportunistic lock: nothing is lost, not counted as a denial\)\." "$(cat "$LOG")"
check_match "  ... the summary counts them apart" \
	"unmounting $MNT: 0 writes denied \(by operation: none; by path: none\); [0-9]+ expected refusals? \(git's opportunistic locks\), not counted" "$(cat "$LOG")"
check "  ... the audit marks them" "true" "$(jq -r 'select(.event == "deny" and (.path | endswith("/index.lock"))) | .expected' "$T/audit2.jsonl" | sort -u)"
check "  ... and counts them in the unmount record" "0 yes" \
	"$(jq -r 'select(.event == "unmount") | "\(.denials) \(.expected > 0)"' "$T/audit2.jsonl" | sed 's/true/yes/')"
mount_beside --info-dir .sandbox-policy
expect "--info-dir NAME" "OK:README,denials" readdir "$MNT/.sandbox-policy"
unmount_awfs
out=$("$AWFS" "$MNT" --policy "$POLICY" --info-dir a/b -f 2>&1); rc=$?
check "--info-dir with a slash: exit 2" "2" "$rc"
finish
