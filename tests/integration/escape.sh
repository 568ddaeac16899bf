#!/usr/bin/env bash
# escape.sh - links, renames and symlinks cannot carry a read-only or masked
# object to a writable name, nor a writable object under a stricter rule.
. "$(dirname "$0")/lib.sh"
require_mount_env
setup_fixture
mount_beside

expect "hard link read-only -> writable" "EROFS" link "$MNT/ro/file" "$MNT/rw/stolen"
expect "hard link unclassified -> writable" "EROFS" link "$MNT/rootfile" "$MNT/rw/stolen"
expect "hard link masked -> writable" "EROFS" link "$MNT/top.key" "$MNT/rw/stolen"
expect "hard link writable -> read-only dir" "EROFS" link "$MNT/rw/file" "$MNT/ro/planted"
expect "hard link writable -> nested read-only dir" "EROFS" link "$MNT/rw/file" "$MNT/rw/.git/planted"
expect "hard link out of rw/.git" "EROFS" link "$MNT/rw/.git/config" "$MNT/rw/config"
expect "rename read-only -> writable" "EROFS" rename "$MNT/ro/file" "$MNT/rw/stolen"
expect "rename writable -> read-only" "EROFS" rename "$MNT/rw/file" "$MNT/ro/planted"
expect "rename writable -> rw/.git" "EROFS" rename "$MNT/rw/file" "$MNT/rw/.git/config"
expect "rename rw/.git away" "EROFS" rename "$MNT/rw/.git" "$MNT/rw/notgit"
expect "rename-exchange writable <-> read-only" "EROFS" rename-exchange "$MNT/rw/file" "$MNT/ro/file"
expect "rename-exchange writable <-> mask" "EROFS" rename-exchange "$MNT/rw/sub" "$MNT/rw/masked"
expect "rename-exchange writable <-> rw/.git" "EROFS" rename-exchange "$MNT/rw/sub" "$MNT/rw/.git"
expect "rename a dir holding a read-only rule (rw/proj/hooks)" "EROFS" rename "$MNT/rw/proj" "$MNT/rw/proj2"
expect "  ... the hooks stay read-only" "EROFS" write "$MNT/rw/proj/hooks/pre-commit" evil
# planting: a tree the agent wrote, moved to where a read-only rule applies below
as_agent mkdir -p "$MNT/rw/plant/hooks"
as_agent sh -c "echo evil > $MNT/rw/plant/hooks/pre-commit"
expect "move an agent-written tree to where a read-only rule applies below" "EROFS" rename "$MNT/rw/plant" "$MNT/rw/repo-x"
expect "  ... nor with RENAME_EXCHANGE" "EROFS" rename-exchange "$MNT/rw/plant" "$MNT/rw/proj"
expect "symlink made where a read-only rule applies below" "EROFS" symlink "$MNT/rw/plant" "$MNT/rw/repo-y"
expect "mkdir there is fine: the rule then applies below it" "OK" mkdir "$MNT/rw/repo-z"
expect "  ... and its hooks are read-only" "EROFS" mkdir "$MNT/rw/repo-z/hooks"
expect "a regular file may be created with such a name" "OK" write "$MNT/rw/repo-f" x
expect "  ... but not renamed into one" "EROFS" rename "$MNT/rw/file" "$MNT/rw/repo-g"
as_agent ln -s "$MNT/rw/plant" "$MNT/rw/sym-to-plant"
expect "a symlink hard-linked into such a name" "EROFS" link "$MNT/rw/sym-to-plant" "$MNT/rw/repo-h"
expect "a file hard-linked into such a name" "EROFS" link "$MNT/rw/file" "$MNT/rw/repo-i"
expect "the read-only hooks dir cannot be removed" "EROFS" rmdir "$MNT/rw/proj/hooks"
expect "rename a plain writable dir" "OK" rename "$MNT/rw/sub" "$MNT/rw/sub2"
expect "rename a writable dir onto the read-only name" "EROFS" rename "$MNT/rw/sub2" "$MNT/rw/.git"
expect "mkdir a new dir where a mask would be" "EROFS" mkdir "$MNT/rw/masked/y"
expect "symlink planted as rw/.git/x" "EROFS" symlink /etc/passwd "$MNT/rw/.git/x"
# a symlink the agent makes is followed by the agent's kernel, through awfs again
expect "symlink to the masked tree by absolute path" "OK" symlink "$MNT/secret" "$MNT/rw/to-secret"
expect "  ... shows it empty" "OK" readdir "$MNT/rw/to-secret/"
expect "  ... cannot write through it" "EROFS" create "$MNT/rw/to-secret/x"
expect "symlink to a read-only file" "OK" symlink ../ro/file "$MNT/rw/to-ro"
expect "  ... write through it" "EROFS" write "$MNT/rw/to-ro" x
expect "  ... O_NOFOLLOW open of the link" "ELOOP" open "$MNT/rw/to-ro" rn
expect "  ... unlink the link itself (it is writable)" "OK" unlink "$MNT/rw/to-ro"
# awfs itself never follows a host symlink: a host symlink named like a
# writable path is served as a symlink, not as the directory it points to
ln -s "$SRC/ro" "$SRC/mem-link"
expect "host symlink under a writable glob name" "OK:$SRC/ro" readlink "$MNT/mem-link"
check_match "  ... is a symlink" "^OK:type=link " "$(aprobe lstat "$MNT/mem-link")"
ln -s ../secret "$SRC/rw/host-link"
expect "host symlink into the host's mask, followed through awfs" "OK" readdir "$MNT/rw/host-link/"
expect "  ... content unreachable" "ENOENT" read "$MNT/rw/host-link/data"
# host paths that change class under a hard link keep the class of their path
ln "$SRC/rw/file" "$SRC/ro/hardlinked" 2>/dev/null
expect "same host inode by a read-only path: write refused" "EROFS" write "$MNT/ro/hardlinked" x
expect "same host inode by a writable path: write allowed" "OK" append "$MNT/rw/file" y
expect "  ... the read-only path still refuses" "EROFS" append "$MNT/ro/hardlinked" z
check "masks held on the host" "TOPSECRET" "$(cat "$SRC/secret/data")"
check "read-only files held on the host" "RODATA GITCFG HOOK" \
	"$(cat "$SRC/ro/file" "$SRC/rw/.git/config" "$SRC/rw/proj/hooks/pre-commit" | tr '\n' ' ' | sed 's/ $//')"
check_match "the guard denial names the rule" \
	"denied rename for .* by anchored read_only rule \"rw/proj/hooks\" \([^)]*\); EROFS: \"$MNT/rw/proj\" to \"$MNT/rw/proj2\": read_only rule \"rw/proj/hooks\" \([^)]*policy.conf:[0-9]+\) applies below \"$MNT/rw/proj\", so nothing may be renamed or linked into or out of it, nor a symlink made there" "$(cat "$LOG")"
finish
