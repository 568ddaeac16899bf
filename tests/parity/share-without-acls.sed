# changes 6 lines: the files granted to the agent by an ACL on the host.
# A virtiofs share exported without xattrs carries no ACL, so the guest's
# kernel checks these root-owned 0600 files (0660 with the ACL's mask) by
# their modes alone and refuses the agent before any request leaves the
# guest: EACCES, loud, nothing written. In-guest awfs sees the same share.
# Grant such a file in a guest by its owner or group instead, or export
# with xattrs and ACLs (virtiofsd -o xattr -o posix_acl).
s/^\(read granted\.log\|append granted\.log\|write granted\.log\|read ro\/granted\|append ro\/granted\) -> .*/\1 -> EACCES/
