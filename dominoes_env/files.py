"""The files the package and its tools read and write: one home for what is refused, and why.

Every reader and writer of the package goes through here (game records, league results and
reports, weights and checkpoints, pictures, training logs), so that each refuses the same
things the same way:

- **Writing** replaces only regular files. A path that exists and is anything else (a
  directory, a device such as ``/dev/null``, a FIFO, a socket, a symbolic link) is refused,
  naming what it is: writing a temporary file and renaming it over the path would have
  replaced the device or the link with a regular file. :func:`check_output_file` and
  :func:`check_output_directory` also prove, before any work starts, that the directory
  takes a new file (one is created and removed there), so a game or a training run is
  never played to its end and then lost for want of a writable place. Files are written
  whole (:func:`write_atomically`: a temporary file beside the target, then a rename),
  so a killed run leaves the old file or the new one, never part of one.
- **Reading** takes only regular files (a symbolic link to one is fine), opened without
  blocking (a FIFO would wait forever for a writer) and read up to a size limit (``/dev/zero``
  or a huge file would fill the memory): :func:`read_regular_file`. Readers that open a file
  by its path themselves (safetensors, zip archives) call :func:`check_regular_file` first.

Refusals are :class:`FileRefused` (a ValueError) whose message says what the path is and what
is allowed; callers put their own name of the file in front (``record game.json: ...``).
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import IO

PathLike = str | os.PathLike[str]


class FileRefused(ValueError):
    """A path that the package will not read or write: not a regular file, too large, or in a
    directory that takes no new file. The message says which, and what is allowed."""


def kind_of(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words ("a FIFO (named pipe)", "a character device", ...)."""
    kinds = [(stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symbolic link"),
             (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")]
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def existing_kind(path: PathLike) -> str | None:
    """What `path` itself is (a link is not followed), or None if nothing is there."""
    try:
        return kind_of(os.lstat(path).st_mode)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise FileRefused(f"{os.fspath(path)}: a part of the path before the file name is not a directory") from None


def refuse_to_replace(path: PathLike) -> None:
    """Refuse to write `path` if something other than a regular file is there.

    Raises:
        FileRefused: "is a character device; only a regular file (or a new one) is written".
    """
    kind = existing_kind(path)
    if kind not in (None, "a regular file"):
        raise FileRefused(f"is {kind}; only a regular file (or a new one) is written, never replaced by one")


def _refuse_to_replace_named(path: PathLike) -> None:
    """:func:`refuse_to_replace`, the message naming the path (for writers called mid-run)."""
    try:
        refuse_to_replace(path)
    except FileRefused as error:
        raise FileRefused(f"{os.fspath(path)}: {error}") from None


def prove_writable(directory: PathLike) -> None:
    """Create and remove a temporary file in `directory`: the only sure test that a file can be
    written there (permissions, a read-only file system, a special one such as /proc).

    Raises:
        FileRefused: the directory takes no new file (the reason of the operating system).
    """
    try:
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".dominoes-check-"):
            pass
    except OSError as error:
        raise FileRefused(f"cannot write a file in {os.fspath(directory)!r}: {error.strerror or error}") from None


def check_output_file(option: str, path: PathLike) -> Path:
    """Refuse, before any work starts, a file that could not be written (or would replace
    something that is not a regular file); the message names `option`.

    Raises:
        FileRefused: ``OPTION PATH: why``.
    """
    file = Path(path)
    try:
        refuse_to_replace(file)
        parent = file.parent
        if not parent.is_dir():
            raise FileRefused(f"the directory {str(parent)!r} does not exist")
        prove_writable(parent)
    except FileRefused as error:
        raise FileRefused(f"{option} {os.fspath(path)}: {error}") from None
    return file


def check_output_directory(option: str, path: PathLike, files: Iterable[str] = ()) -> Path:
    """Create the directory if needed and prove it takes new files; refuse it if any of the `files`
    to be written in it exists and is not a regular file. A directory may be a link to one.

    Raises:
        FileRefused: ``OPTION PATH: why``.
    """
    directory = Path(path)
    try:
        if directory.exists() and not directory.is_dir():
            raise FileRefused(f"is {kind_of(directory.stat().st_mode)}, not a directory")
        created = not directory.exists()
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise FileRefused(f"cannot be created: {error.strerror or error}") from None
        try:
            prove_writable(directory)
        except FileRefused:
            if created:  # a refused call leaves nothing behind
                directory.rmdir()
            raise
        for name in files:
            try:
                refuse_to_replace(directory / name)
            except FileRefused as error:
                raise FileRefused(f"{name} in it {error}") from None
    except FileRefused as error:
        raise FileRefused(f"{option} {os.fspath(path)}: {error}") from None
    return directory


def write_atomically(path: PathLike, data: bytes) -> Path:
    """Write `data` to a new file beside `path`, then rename it over `path`: a reader (or a killed
    run) sees the old file or the new one, never a mix. Permissions come from the umask, like any
    file the user writes.

    Raises:
        FileRefused: `path` exists and is not a regular file.
        OSError: the directory cannot be written (nothing is left behind).
    """
    path = Path(path)
    _refuse_to_replace_named(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return path


def open_for_writing(path: PathLike, *, append: bool = False) -> IO[bytes]:
    """Open a regular file to write (truncated) or to append to, created if missing; a link, a
    device, a FIFO or anything else that is not a regular file is refused before it is changed.

    Raises:
        FileRefused: `path` is not a regular file.
        OSError: it cannot be opened.
    """
    _refuse_to_replace_named(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | (os.O_APPEND if append else 0)
    try:
        descriptor = os.open(path, flags, 0o666)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENXIO):  # a link or a FIFO put there since the check
            raise FileRefused(f"{os.fspath(path)}: is not a regular file; only a regular file (or a new one) is "
                              f"written") from None
        raise
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        raise FileRefused(f"{os.fspath(path)}: is {kind_of(mode)}; only a regular file (or a new one) is written")
    if not append:
        os.ftruncate(descriptor, 0)
    return os.fdopen(descriptor, "ab" if append else "wb")


def check_regular_file(path: PathLike, limit: int | None = None) -> int:
    """The size of `path` if it is a regular file (a link to one is followed) of at most `limit`
    bytes; for readers that open the file by its path themselves.

    Raises:
        FileNotFoundError: nothing is there.
        FileRefused: not a regular file, or larger than `limit`.
    """
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise FileRefused(f"is {kind_of(info.st_mode)}, not a regular file")
    if limit is not None and info.st_size > limit:
        raise FileRefused(f"is {info.st_size:,} bytes, more than the {limit:,} this file can be")
    return info.st_size


def open_regular_file(path: PathLike) -> IO[bytes]:
    """Open a regular file (a link to one is followed) for reading, without blocking on a FIFO.

    Raises:
        FileNotFoundError, PermissionError, ...: it cannot be opened.
        FileRefused: it is not a regular file.
    """
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        raise FileRefused(f"is {kind_of(mode)}, not a regular file")
    return os.fdopen(descriptor, "rb")


def read_regular_file(path: PathLike, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes, read without blocking and never more
    than `limit` + 1 bytes (a file that grows while it is read is refused too).

    Raises:
        FileNotFoundError, PermissionError, ...: it cannot be opened.
        FileRefused: not a regular file, or larger than `limit`.
    """
    with open_regular_file(path) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise FileRefused(f"is more than the {limit:,} bytes this file can be")
    return data


def why_unreadable(error: OSError | FileRefused) -> str:
    """A reader's refusal in words, after the file's name: "does not exist", "is a FIFO (named
    pipe), not a regular file", "cannot be read: Permission denied"."""
    if isinstance(error, FileNotFoundError):
        return "does not exist"
    if isinstance(error, FileRefused):
        return str(error)
    return f"cannot be read: {error.strerror or error}"
