# changes 2 lines: setxattr and removexattr on a read-only file, through
# awfs exported by virtiofsd without xattrs. virtiofsd answers every xattr
# call itself there (ENOSYS, EOPNOTSUPP in the guest) and awfs never sees
# it, so the refusal is not awfs's EROFS and is not logged; nothing is
# written. The other xattr calls are EOPNOTSUPP everywhere, as awfs serves
# no xattrs by default.
s/^\(setxattr user\.parity ro\/file\|removexattr user\.parity ro\/file\) -> EROFS$/\1 -> EOPNOTSUPP/
