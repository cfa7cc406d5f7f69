"""An operating system's refusal (permission, space, a read-only filesystem) in the user's words:
exit 2 with the path named, never a traceback (commands/__init__.py main() catches OSError here)."""

from __future__ import annotations

import errno

from triaudit.core.errors import EXIT_USAGE, TriauditError

_WHY = {
    errno.EACCES: "permission denied",
    errno.EPERM: "not permitted",
    errno.EROFS: "a read-only filesystem",
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "over the disk quota",
    errno.ENOENT: "no such file or folder",
    errno.ENOTDIR: "a part of the path is not a folder",
    errno.EISDIR: "a folder, not a file",
    errno.ENAMETOOLONG: "the name is too long",
}


def os_error(exc: OSError, doing: str = "cannot be written") -> TriauditError:
    """The error as one line naming its path(s)."""
    where = " -> ".join(str(f) for f in (exc.filename, exc.filename2) if f not in (None, "")) or "a file"
    why = _WHY.get(exc.errno or 0) or exc.strerror or str(exc)
    return TriauditError(f"{where}: {doing}: {why}", EXIT_USAGE)
