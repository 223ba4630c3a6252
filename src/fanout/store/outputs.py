"""The one writer of every file a command writes for a user: reports, exports, comparisons, labels, snapshots.

An output option takes any path, and a path can name something that must
not be written over: the run's snapshot (`fanout queue RUN --csv
today.yaml` once replaced it), the labels file the command read (`compare
--labels L --json L`), a file of a run directory, or a file nobody asked
fanout to replace. So no command opens an output itself (a test greps for
it); each hands its text here, and this writer:

- refuses an input of the command or of a run it reads, compared as files
  (one device and inode: by name, through a symbolic or hard link, or `..`),
  not even with --force: what it holds is gone once written over;
- refuses a file of a run directory (fanout.store.layout declares them all);
- refuses, unless --force, an existing file that is not its own earlier
  output (`ours` recognises that by its first bytes; a FIFO or a device is
  never its own);
- answers an empty path, a directory, or a folder that cannot be made in one
  line, a ConfigError naming the option;
- writes atomically: a new temporary file beside the target (never through a
  link), fsynced, renamed over the target, the folder fsynced. A reader sees
  the old file or the new one; a link at the path is replaced, not followed.

`-` is standard output, written exactly as given (JSON stays exact there).
"""

from __future__ import annotations

import os
import secrets
import stat
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from fanout.base.errors import ConfigError, DiskFull
from fanout.base.reading import open_if_regular
from fanout.store.atomic import DISK_FULL
from fanout.store.layout import RUN_FILES, run_file_at

STDOUT = Path("-")
"""`--json -`: standard output."""
OUR_HEAD_BYTES = 4096
"""How much of an existing output `ours` is shown to tell whether this command wrote it."""

Ours = Callable[[bytes], bool]
"""Whether the first bytes of an existing file are this output's own earlier writing (then no --force is needed)."""


@dataclass
class Outputs:
    """What one command may not write over, and how it writes what it may: the command's inputs (each path with
    what it is: "the --labels file"), the run directories it reads, and whether --force was given."""

    inputs: dict[Path, str] = field(default_factory=dict)
    run_dirs: list[Path] = field(default_factory=list)
    force: bool = False

    def add_run(self, run_dir: Path) -> None:
        """A run the command reads: its files and the inputs its manifest lists are protected too."""
        from fanout.store.manifest import run_inputs  # only a command that reads a run; every command loads this module

        if run_dir not in self.run_dirs:
            self.run_dirs.append(run_dir)
        for path, what in run_inputs(run_dir).items():
            self.inputs.setdefault(path, what)

    def check(self, path: Path, option: str, ours: Ours | None = None) -> None:
        """ConfigError when `path` may not be written (see the module); nothing is written."""
        if path == STDOUT:
            return
        check_output(path, option, inputs=self.inputs, ours=ours, force=self.force, run_dirs=self.run_dirs)

    def check_folder(self, path: Path, option: str) -> None:
        """A folder the command fills with its own files (the HTML report's edit pages): never among a run's
        files or over an input; it may exist (an earlier report's)."""
        found = run_file_at(path)
        if found is not None:
            raise ConfigError(f"{option} {path} would write over {found[1]} in the run directory {found[0]}; "
                              "choose another file")
        for source, what in self.inputs.items():
            if _same_file(path, source):
                raise ConfigError(f"{option} {path} is {what}, which this command reads and must not write over; "
                                  "choose another file")

    def write(self, path: Path, option: str, data: str | bytes, ours: Ours | None = None) -> Path:
        """Check, then write `data` atomically to `path` (or to standard output for `-`); returns the path."""
        if path == STDOUT:
            return _to_stdout(data)
        self.check(path, option, ours)
        return write_atomic(path, option, data)


def check_output(path: Path, option: str, *, inputs: Mapping[Path, str] | None = None, ours: Ours | None = None,
                 force: bool = False, run_dirs: Iterable[Path] = ()) -> None:
    """The writer's refusals for one output path, each one ConfigError naming `option` and the path."""
    _refuse_unusable(path, option)
    found = run_file_at(path)
    if found is not None:
        folder, what = found
        raise ConfigError(f"{option} {path} would write over {what} in the run directory {folder}; choose another file")
    for source, what in (inputs or {}).items():
        if _same_file(path, source):
            raise ConfigError(f"{option} {path} is {what}, which this command reads and must not write over; "
                              "choose another file")
    _refuse_linked_run_file(path, option, run_dirs)
    _refuse_hard_linked(path, option)
    if ours is not None and not force:
        _refuse_foreign(path, option, ours)


def refuse_run_file(path: Path, option: str, *, inputs: Mapping[Path, str] | None = None, ours: Ours | None = None,
                    force: bool = False) -> None:
    """The output writer's refusals (check_output), for a caller that writes by itself."""
    check_output(path, option, inputs=inputs, ours=ours, force=force)


def _refuse_unusable(path: Path, option: str) -> None:
    if not str(path).strip():
        raise ConfigError(f"{option} is empty; name a file to write")
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ConfigError(f"{option} {path} cannot be written: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise ConfigError(f"{option} {path} is a directory; name a file to write (in it, or beside it)")


def _same_file(path: Path, other: Path) -> bool:
    """The same file under any name: one device and inode (links, hard links, `..`), or one resolved path if
    either is missing."""
    try:
        return os.path.samefile(path, other)
    except OSError:
        return path.resolve() == other.resolve()


def _refuse_linked_run_file(path: Path, option: str, run_dirs: Iterable[Path]) -> None:
    """A hard link to a file of a run the command reads (its inode has other names): refused by inode."""
    try:
        info = os.stat(path)
    except OSError:
        return
    if info.st_nlink < 2:
        return
    for run_dir in run_dirs:
        for name in _run_file_paths(run_dir):
            try:
                other = os.stat(name)
            except OSError:
                continue
            if (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino):
                raise ConfigError(f"{option} {path} is a hard link to the run's {name.name} in the run directory "
                                  f"{run_dir}; choose another file")


def _refuse_hard_linked(path: Path, option: str) -> None:
    """A file with other names (hard links) is never this writer's own (it renames a new file into place), and
    one of its names may be a run's file or an input no command named: refused, even with --force."""
    try:
        info = os.stat(path)
    except OSError:
        return
    if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
        raise ConfigError(f"{option} {path} has {info.st_nlink - 1} other name(s) (hard links), which may be a run's "
                          "file or an input; choose another file")


def _run_file_paths(run_dir: Path) -> Iterable[Path]:
    for run_file in RUN_FILES.values():
        yield from run_dir.glob(run_file.name) if "*" in run_file.name else [run_dir / run_file.name]


def _refuse_foreign(path: Path, option: str, ours: Ours) -> None:
    try:
        head = _head(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ConfigError(f"{option} {path} cannot be checked before it is replaced: {exc.strerror or exc}") from None
    if head is None or not ours(head):
        raise ConfigError(f"{option} {path} already exists and this command did not write it; choose another "
                          "file, or pass --force to replace it")


def _head(path: Path) -> bytes | None:
    """The first bytes of a regular file; None for anything else (opened without blocking: a FIFO waits for no one)."""
    opened = open_if_regular(path)
    if opened is None:
        return None
    with opened:
        return opened.read(OUR_HEAD_BYTES)


def write_atomic(path: Path, option: str, data: str | bytes, *, sync_folder: bool = True) -> Path:
    """`data` written to a new temporary file beside `path` (O_EXCL, O_NOFOLLOW), fsynced, renamed over `path`,
    the folder fsynced (unless `sync_folder` is false: a writer of many files in one folder calls
    `fsync_folder` once after the last); its folder made when missing. Any failure is one ConfigError (DiskFull
    for a full disk)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    folder = path.parent
    tmp = folder / f".{path.name}.{secrets.token_hex(4)}.tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            view = memoryview(raw)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        if sync_folder:
            fsync_folder(folder)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if exc.errno in DISK_FULL:
            raise DiskFull(path) from exc
        raise ConfigError(f"{option} {path} cannot be written: {exc.strerror or exc}") from None
    return path


def fsync_folder(folder: Path) -> None:
    """The folder's entries on disk (the renames into it survive a crash); best effort, as after each write_atomic."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _to_stdout(data: str | bytes) -> Path:
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()
    return STDOUT
