#!/usr/bin/env bash
# positions.sh - the enforcement rule at positions no fixture holds: a
# read-only rule's own position inside a writable tree while nothing is
# there yet (an agent must not plant a .git file with a gitdir: line, or a
# hooks directory, where the host will later trust one), a literal rule
# beside a glob at the same depth, and a symlink where a stricter rule is
# anchored below. tests/unit/test_decide.c states the same cases as a
# table; these prove them on a real mount, as the agent, on the host.
. "$(dirname "$0")/lib.sh"
require_mount_env
make_tmp
u=$AGENT_UID
mkdir -p "$SRC/rw/x" "$SRC/g/lit"
echo RW >"$SRC/rw/f"
chown -R "$u:$u" "$SRC"
write_policy 'version = 1;
allow_write = (
  { path = "rw"; reason = "agent scratch"; },
  { path = "g"; reason = "g"; },
  { path = "g/lit"; reason = "the one writable name"; }
);
read_only = (
  { path = "rw/.git"; reason = "the host runs git here"; },
  { path = "rw/x/hooks"; reason = "hooks the host runs"; },
  { path = "rw/proj/hooks"; reason = "hooks of a project not made yet"; },
  { path = "g/*"; reason = "everything else in g"; }
);
mask = (
  { path = "rw/secret"; reason = "a token the host drops here"; }
);'
mount_beside
W="$MNT/rw"
absent() { [ -e "$SRC/$1" ] || [ -L "$SRC/$1" ] && echo present || echo absent; }

# a read-only rule's position, nothing there: every way of making it
expect "create a .git file where rw/.git is read-only" "EROFS" write "$W/.git" "gitdir: /tmp/evil"
expect "mkdir .git" "EROFS" mkdir "$W/.git"
expect "symlink .git" "EROFS" symlink /tmp/evil "$W/.git"
expect "mkfifo .git" "EROFS" mkfifo "$W/.git"
expect "hard link a writable file as .git" "EROFS" link "$W/f" "$W/.git"
expect "rename a writable file to .git" "EROFS" rename "$W/f" "$W/.git"
expect "mkdir hooks in a writable directory (rw/x/hooks read-only)" "EROFS" mkdir "$W/x/hooks"
expect "create hooks there" "EROFS" write "$W/x/hooks" x
expect "create in a mask's position (served as an empty directory)" "EROFS" write "$W/secret/token" x
check "nothing was made on the host" "absent absent absent" \
	"$(absent rw/.git) $(absent rw/x/hooks) $(absent rw/secret)"
check "the writable file is where it was" "RW" "$(cat "$SRC/rw/f")"
check_match "the denial names the read-only rule of the position" \
	"denied create for .* by read_only rule \"rw/\.git\" \([^)]*policy.conf:[0-9]+\); EROFS: \"$W/\.git\"" \
	"$(cat "$LOG")"
# the names beside them stay writable: the rule is the position's only
expect "  ... a sibling name is writable" "OK" write "$W/.gitignore" x
expect "  ... a sibling of hooks is writable" "OK" mkdir "$W/x/hooks.d"

# a literal rule beats a glob at the same depth
expect "write in the literal one (allow_write g/lit)" "OK" write "$MNT/g/lit/new" L
check "  ... on the host" "L" "$(cat "$SRC/g/lit/new")"
expect "write another name (read_only g/*)" "EROFS" write "$MNT/g/other" x
expect "mkdir another name" "EROFS" mkdir "$MNT/g/lit2"
check "  ... nothing made on the host" "absent absent" "$(absent g/other) $(absent g/lit2)"
check_match "  ... the denial names the glob" \
	"denied create for .* by read_only rule \"g/\*\" \([^)]*\); EROFS: \"$MNT/g/other\"" "$(cat "$LOG")"

# a symlink where a stricter rule is anchored below: it would redirect the rule's paths
expect "symlink at rw/proj (rw/proj/hooks read-only below)" "EROFS" symlink /tmp "$W/proj"
expect "rename rw/x away (rw/x/hooks anchored in it)" "EROFS" rename "$W/x" "$W/x2"
check "  ... no link on the host, rw/x where it was" "absent absent" "$(absent rw/proj) $(absent rw/x2)"
check_match "  ... the denial names the anchored rule" \
	"denied symlink for .* by anchored read_only rule \"rw/proj/hooks\" \([^)]*\); EROFS: \"$W/proj\"" \
	"$(cat "$LOG")"
expect "  ... a directory there is fine (the rule then applies in it)" "OK" mkdir "$W/proj"
expect "  ... and its hooks are read-only" "EROFS" mkdir "$W/proj/hooks"
expect "a symlink where nothing is anchored" "OK" symlink /tmp "$W/elsewhere"

# awfs's own directory is named from the mount point, whatever the host
# does with the source (its paths are the host's business, not the agent's)
mv "$SRC" "$T/src-moved"
expect "a write into .awfs after the source moved on the host" "EROFS" write "$MNT/.awfs/README" x
check_match "  ... the denial names it under the mount point" \
	"EROFS: \"$MNT/\.awfs/README\": it is awfs's read-only information directory" "$(cat "$LOG")"
finish
