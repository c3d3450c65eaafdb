"""The one way countgrid writes a file (docs/security.md, "Writing"): atomically and
without following anything planted at a predictable name.

:func:`atomic_write` opens a new temporary file beside the target with
``tempfile.mkstemp`` (``O_CREAT | O_EXCL`` under an unpredictable name, so a symlink or FIFO
planted next to the output can neither redirect nor block the write), hands it to the
caller, then flushes, ``fsync``-s and moves it onto the target with ``os.replace``.  On
any failure (an exception, a full disk, Ctrl-C) the temporary file is removed and the
target is left as it was; of two writers of one target, the last complete file wins and
neither leaves a damaged one.  :func:`atomic_files` replaces several files (the shards of
a folder) only once all of them are written.  Targets that are not regular files (a
folder, a FIFO, a device, a socket) and targets that are one of the command's inputs are
refused before anything is written.  A target that is a symbolic link is replaced by the
new file: the file the link pointed to is not written.
"""
import contextlib
import os
import stat
import tempfile

__all__ = ["atomic_files", "atomic_write", "check_target"]

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def _umask():
    """The process umask, read without changing it where Linux allows."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _kind(mode):
    for test, text in _KINDS:
        if test(mode):
            return text
    return "not a regular file"


def check_target(path, name="path", inputs=()):
    """The target ``path`` as a str, after refusing what :func:`atomic_write` will not write.

    Parameters
    ----------
    path : str, bytes or os.PathLike
    name : str
        The argument's name, for errors.
    inputs : iterable of (label, path)
        Files the caller reads: the target may not be one of them.

    Raises
    ------
    TypeError
        If ``path`` is not a file name.
    ValueError
        If it is empty, names a folder or a special file, or is one of ``inputs``.
    PermissionError
        If it names an existing file this process may not write.
    """
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"{name} must be a file name (str or os.PathLike), got "
                        f"{type(path).__name__}")
    target = os.fsdecode(os.fspath(path))
    if not target:
        raise ValueError(f"{name} is empty: give a file name")
    if os.path.basename(target) in ("", ".", ".."):
        raise ValueError(f"{name} {target!r} is not a file name")
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise ValueError(f"{name} {target!r} lies below a file, not in a folder") from None
    try:
        link = stat.S_ISLNK(os.lstat(target).st_mode)
    except FileNotFoundError:
        link = False
    if st is not None and not link:
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{name} {target!r} is {_kind(st.st_mode)}, not a regular "
                             "file: countgrid writes only regular files")
        if not os.access(target, os.W_OK):
            raise PermissionError(f"{name} {target!r} is read-only")
    for label, other in inputs:
        if other is None or not isinstance(other, (str, bytes, os.PathLike)):
            continue
        try:
            same = os.path.samefile(target, other)
        except (OSError, ValueError):
            same = False
        if same:
            raise ValueError(f"{name} {target!r} is also the {label}: writing it would "
                             "destroy the input; write to another file")
    return target


@contextlib.contextmanager
def atomic_write(path, mode="wb", *, name="path", inputs=(), encoding=None, newline=None):
    """``with atomic_write(path) as fh:`` write ``fh``; ``path`` is replaced when the block
    ends without an error and left untouched otherwise.

    Parameters
    ----------
    path : str, bytes or os.PathLike
        The file to write (see :func:`check_target` for what is refused).
    mode : {"wb", "w"}
        Binary or text.
    name : str
        The argument's name, for errors.
    inputs : iterable of (label, path)
        Files the caller reads, which ``path`` may not be.
    encoding, newline : str, optional
        For text mode (default encoding UTF-8).
    """
    staged = []
    try:
        with _staged_write(staged, path, mode, name, inputs, encoding, newline) as fh:
            yield fh
        _commit(staged)
    finally:
        _discard(staged)


@contextlib.contextmanager
def atomic_files():
    """``with atomic_files() as write:`` then ``with write(path) as fh:`` for each of several
    files (``write`` takes the arguments of :func:`atomic_write`): each is written to its
    own temporary file, and all of them are moved onto their targets, in the order written,
    only when the outer block ends without an error; otherwise none is and every temporary
    file is removed.  A set of files (the shards of a folder) is so replaced as a whole: a
    failure half way (a full disk at the third shard) leaves the previous set as it was.
    """
    staged = []

    def write(path, mode="wb", *, name="path", inputs=(), encoding=None, newline=None):
        return _staged_write(staged, path, mode, name, inputs, encoding, newline)

    try:
        yield write
        _commit(staged)
    finally:
        _discard(staged)


@contextlib.contextmanager
def _staged_write(staged, path, mode, name, inputs, encoding, newline):
    """Write a new temporary file beside ``path`` (flushed, synced, closed); on success
    append ``(temporary, target, folder)`` to ``staged`` for :func:`_commit`, else remove
    it."""
    if mode not in ("wb", "w"):
        raise ValueError(f"mode must be 'wb' or 'w', got {mode!r}")
    target = check_target(path, name, inputs)
    folder = os.path.dirname(os.path.abspath(target))
    existing = os.stat(target) if os.path.isfile(target) and not os.path.islink(target) \
        else None
    bits = stat.S_IMODE(existing.st_mode) if existing else 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target)[:64] + ".",
                               suffix=".countgrid-tmp", dir=folder)
    try:
        os.fchmod(fd, bits)
        if mode == "w":
            fh = os.fdopen(fd, "w", encoding=encoding or "utf-8", newline=newline)
        else:
            fh = os.fdopen(fd, "wb")
        fd = None                           # owned by fh from here
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        staged.append((tmp, target, folder))
        tmp = None                          # owned by staged from here
    finally:
        if fd is not None:
            os.close(fd)
        if tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


def _commit(staged):
    """Move every staged temporary file onto its target (the list empties as it goes),
    then make the renames durable."""
    folders = []
    while staged:
        tmp, target, folder = staged[0]
        os.replace(tmp, target)
        staged.pop(0)
        if folder not in folders:
            folders.append(folder)
    for folder in folders:
        _sync_folder(folder)


def _discard(staged):
    """Remove the temporary files that were not moved into place."""
    while staged:
        tmp = staged.pop()[0]
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _sync_folder(folder):
    """Make the rename durable (POSIX); best effort where a folder cannot be opened."""
    try:
        dfd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
