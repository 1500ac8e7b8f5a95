"""The files of a sweep written to ``out``: a lock, part files, a manifest and an atomic commit.

A sweep to ``out`` (``.csv`` or ``.parquet``) keeps, next to it:

* ``<out>.sweep.lock`` while it runs: one writer per output.  A second sweep on the same path
  is refused while the first runs (an OS file lock, released by the OS even if the process is
  killed).
* ``<out>.partial/`` while it is unfinished: the finished chunks, as part files each complete on
  its own (``part-<first>-<end>.csv`` with its header, or ``.parquet`` with its footer), so
  that the directory is readable as it stands (``pyarrow.parquet.read_table(".../x.parquet.partial")``).
  A part is written to a temporary name, flushed to disk and renamed, and only then listed, with
  its checksum, in the manifest.
* ``<out>.sweep.json``, the manifest (:mod:`dpbounds.sweeps._manifest`).

``out`` itself receives only a finished sweep.  When the last chunk is in, the parts are merged
into a temporary file in ``<out>.partial/``, which is renamed over ``out``; until then any file
already at ``out`` stays as it was.  Every step leaves the files in a state that the next run
recognises, so a sweep killed at any moment (even by SIGKILL) resumes from its last saved
part, and a commit interrupted half way is finished by the next run.

Parts are saved as chunks finish: after 65,536 rows, or after a time that grows with the run
(1 % of the time so far, between 1 s and 60 s), whichever comes first.  A kill loses at most
that much work, and the number of parts (and the manifest) stays small for long runs.

What a run finds at ``out`` decides what it may do (:meth:`FileStore._plan`): it resumes only
a sweep with the same identity whose parts still match their checksums (a part that does not
is reported and its chunks computed again); it replaces only a finished output of the same
sweep, or anything at all with ``overwrite=True``; every other case is refused, naming the
file and what differs, before anything is changed.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable, Protocol

from dpbounds._errors import DPBoundsError, warn
from dpbounds.sweeps._manifest import (
    FileSum,
    Manifest,
    ManifestError,
    Part,
    bytes_sum,
    file_sum,
    manifest_path,
    mismatch,
    same_sweep,
)

__all__ = ["Codec", "FileStore", "Lock", "at", "lock_path", "remove", "work_dir"]

#: Rows after which the finished chunks are saved as a part, whatever the time.
FLUSH_ROWS = 1 << 16
#: Seconds between saves: FLUSH_FRACTION of the time the run has taken, within these bounds.
FLUSH_MIN_SECONDS = 1.0
FLUSH_MAX_SECONDS = 60.0
FLUSH_FRACTION = 0.01

#: The clock of the save policy (a module attribute, so that tests can drive it).
clock: Callable[[], float] = time.monotonic

_MERGED = "merged"
_TMP = ".tmp-"


def at(moment: str) -> None:
    """A named step of the writing protocol (does nothing; the crash tests watch these steps)."""


def lock_path(out: Path) -> Path:
    return out.with_name(out.name + ".sweep.lock")


def work_dir(out: Path) -> Path:
    return out.with_name(out.name + ".partial")


def remove(path: Path) -> None:
    """Delete a file if it exists."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _fsync_dir(path: Path) -> None:
    # makes a rename durable across a power cut; not possible (nor needed) everywhere
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_file(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


class Lock:
    """An exclusive OS lock on ``<out>.sweep.lock``; refused at once if another process holds it."""

    def __init__(self, path: Path, out: Path) -> None:
        self.path = path
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                if not _try_lock(fd):
                    raise DPBoundsError(
                        f"another sweep is writing {str(out)!r} right now (it holds the lock {str(path)!r}): "
                        "wait for it to finish, or write to another file")
                # the holder before us may have deleted the file it locked: then lock the new one
                try:
                    same = os.path.samestat(os.fstat(fd), os.stat(path))
                except FileNotFoundError:
                    same = False
                if same:
                    break
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)
        self.fd: int | None = fd
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())

    def release(self) -> None:
        """Delete the lock file (while still holding it, so no one can lock a deleted file) and unlock."""
        if self.fd is None:
            return
        try:
            remove(self.path)
        except OSError:
            pass
        finally:
            fd, self.fd = self.fd, None
            _unlock(fd)
            os.close(fd)


def _try_lock(fd: int) -> bool:
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined, unused-ignore]
        except OSError:
            return False
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _unlock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined, unused-ignore]
        except OSError:
            pass
        return
    fcntl.flock(fd, fcntl.LOCK_UN)


class Codec(Protocol):
    """How chunks become part files, and part files the output (:mod:`dpbounds.sweeps._writers`)."""

    suffix: str

    def encode(self, res: Any) -> tuple[Any, int]:
        """One chunk's rows in the part's in-memory form, and their number."""

    def part(self, chunks: list[Any]) -> bytes:
        """The bytes of a part file holding these encoded chunks (complete on its own)."""

    def merge(self, parts: list[tuple[Path, Part]], dest: Path) -> None:
        """Write the output file ``dest`` from the part files, in order (flushed to disk)."""


class FileStore:
    """The on-disk state of one sweep output (see the module docstring).

    Construction takes the lock, finishes a commit that an earlier run could not finish,
    and decides where this run starts (:attr:`start`, the first chunk to compute), or refuses.
    Then :meth:`add` receives the chunks in order, and :meth:`close` saves the finished ones
    and, if the sweep is complete, commits ``out``.
    """

    def __init__(self, out: Path, ident: dict[str, Any], n_chunks: int, codec: Codec, *, resume: bool,
                 overwrite: bool) -> None:
        self.out, self.ident, self.n_chunks, self.codec = out, ident, n_chunks, codec
        self.mpath = manifest_path(out)
        self.work = work_dir(out)
        self.buffer: list[Any] = []
        self.buffer_rows = 0
        self.broken = False
        self.lock = Lock(lock_path(out), out)
        try:
            self._finish_commit()
            self.manifest, self.start = self._plan(resume, overwrite)
        except BaseException:
            self.lock.release()
            raise
        self.next = self.start
        self.started = self.last_save = clock()

    # ------------------------------------------------------------ what is there
    def _read(self) -> Manifest | None:
        return Manifest.read(self.mpath)

    def _finish_commit(self) -> None:
        """Complete the rename of a merged output that an earlier run was killed in the middle of."""
        remove(self.mpath.with_name(self.mpath.name + ".tmp"))
        try:
            m = self._read()
        except ManifestError:
            return   # decided by _plan
        if m is None:
            return
        if m.commit is not None:
            merged = self.work / (_MERGED + self.codec.suffix)
            if merged.is_file() and file_sum(merged) == m.commit:
                os.replace(merged, self.out)
                _fsync_dir(self.out.parent)
            if self.out.is_file() and file_sum(self.out) == m.commit:
                done = Manifest(m.ident, m.n_chunks, output=m.commit)
                done.save(self.mpath)
                m = done
            else:   # the merged file is gone or damaged: merge again from the parts
                m.commit = None
                m.save(self.mpath)
        if m.complete:
            self._clear_work()

    def _clear_work(self, keep: tuple[str, ...] | None = None) -> None:
        """Delete this package's files in the work directory but ``keep`` (other files stay); with
        ``keep=None``, also the directory if that empties it."""
        if not self.work.is_dir():
            return
        for p in self.work.iterdir():
            name = p.name
            ours = name.startswith(("part-", _TMP, _MERGED))
            if ours and (keep is None or name not in keep) and p.is_file():
                remove(p)
        if keep is None:
            try:
                self.work.rmdir()
            except OSError:
                pass   # someone else's files are in it: leave them

    def _plan(self, resume: bool, overwrite: bool) -> tuple[Manifest, int]:
        out, mpath = self.out, self.mpath
        name, mname = repr(str(out)), repr(str(mpath))
        try:
            m = self._read()
        except ManifestError as exc:
            if not overwrite:
                raise DPBoundsError(f"{mname} is not a manifest this sweep can use: {exc}; pass overwrite=True "
                                   f"to replace {name} and it") from None
            m = None
        exists = out.exists()
        if exists and not out.is_file():
            raise DPBoundsError(f"out {name} exists and is not a file")
        if m is None:
            if exists and not overwrite:
                raise DPBoundsError(f"{name} exists and is not the output of a dpbounds sweep (it has no manifest "
                                   f"{mname}); pass overwrite=True to replace it, or choose another out")
            return self._fresh(), 0
        if m.complete:
            current = file_sum(out) if exists else None
            if current is None:
                return self._fresh(), 0          # the output was deleted: nothing to protect
            if current != m.output:
                if overwrite:
                    return self._fresh(current), 0
                raise DPBoundsError(f"{name} does not match its manifest {mname} (it was changed after the sweep "
                                   "wrote it); pass overwrite=True to replace it")
            if m.ident == self.ident and resume:
                return m, self.n_chunks          # already complete: nothing to do
            if same_sweep(m.ident, self.ident) and not resume:
                return self._fresh(current), 0   # the same rows again: replaced when complete
            if overwrite:
                return self._fresh(current), 0
            if resume:
                raise DPBoundsError(f"cannot resume {name}: {mismatch(m.ident, self.ident)}")
            raise DPBoundsError(f"{name} holds a finished sweep of other parameters: {mismatch(m.ident, self.ident)}; "
                               "pass overwrite=True to replace it, or choose another out")
        # an unfinished run
        wname = repr(str(self.work))
        if overwrite:
            return self._fresh(file_sum(out) if exists else None), 0
        if m.ident != self.ident:
            if resume:
                raise DPBoundsError(f"cannot resume {name}: {mismatch(m.ident, self.ident)}; the unfinished run "
                                   f"in {wname} is another sweep (pass overwrite=True to discard it)")
            raise DPBoundsError(f"{wname} holds an unfinished run of another sweep: {mismatch(m.ident, self.ident)}; "
                               "pass overwrite=True to discard it, or choose another out")
        if not resume:
            raise DPBoundsError(f"{wname} holds an unfinished run of this sweep ({m.finished} of {m.n_chunks} chunks "
                               "done): pass resume=True to continue it, or overwrite=True to start again")
        if exists and (m.replaces is None or file_sum(out) != m.replaces):
            raise DPBoundsError(f"{name} was created or changed after this sweep started (it would be replaced "
                               "when the sweep completes); move it away, or pass overwrite=True")
        kept = self._verified(m)
        return kept, kept.finished

    def _fresh(self, replaces: FileSum | None = None) -> Manifest:
        self._clear_work()
        self.work.mkdir(exist_ok=True)
        m = Manifest(self.ident, self.n_chunks, replaces=replaces)
        m.save(self.mpath)
        return m

    def _verified(self, m: Manifest) -> Manifest:
        """``m`` with only the parts that still match their checksums (the first one that does not
        is reported; its chunks and those after it are computed again)."""
        good: list[Part] = []
        for p in m.parts:
            path = self.work / p.file
            problem = ""
            if not path.is_file():
                problem = "is missing"
            else:
                size = path.stat().st_size
                if size != p.sum.bytes:
                    problem = f"has {size} bytes where its manifest says {p.sum.bytes} (truncated or altered)"
                elif file_sum(path) != p.sum:
                    problem = "does not match its checksum in the manifest (altered)"
            if problem:
                warn(f"sweep to {str(self.out)!r}: the part file {str(path)!r} {problem}; chunks {p.first} "
                     f"to {m.n_chunks - 1} are computed again", UserWarning)
                break
            good.append(p)
        if len(good) != len(m.parts):
            m = Manifest(m.ident, m.n_chunks, good, replaces=m.replaces)
        self.work.mkdir(exist_ok=True)
        # what the manifest does not list: a part saved just before a kill, temporary files
        self._clear_work(keep=tuple(p.file for p in good))
        m.save(self.mpath)
        return m

    # ------------------------------------------------------------ writing
    def add(self, res: Any) -> None:
        """Chunk ``self.next`` is finished: keep it, and save the kept chunks if it is time."""
        encoded, rows = self.codec.encode(res)
        self.buffer.append(encoded)
        self.buffer_rows += rows
        self.next += 1
        now = clock()
        wait = min(max(FLUSH_FRACTION * (now - self.started), FLUSH_MIN_SECONDS), FLUSH_MAX_SECONDS)
        if self.buffer_rows >= FLUSH_ROWS or now - self.last_save >= wait or self.next == self.n_chunks:
            self.save()

    def save(self) -> None:
        """Write the kept chunks as one part file and list it in the manifest."""
        if not self.buffer:
            return
        m = self.manifest
        first, end = m.finished, self.next
        name = f"part-{first:09d}-{end:09d}{self.codec.suffix}"
        tmp, path = self.work / (_TMP + name), self.work / name
        try:
            data = self.codec.part(self.buffer)
            _write_file(tmp, data)
            at("part-tmp")
            os.replace(tmp, path)
            _fsync_dir(self.work)
            at("part-renamed")
            m.parts.append(Part(name, first, end, self.buffer_rows, bytes_sum(data)))
            try:
                m.save(self.mpath)
            except BaseException:
                m.parts.pop()
                raise
        except OSError as exc:
            self.broken = True
            remove(tmp)
            remove(path)   # not listed in the manifest: not kept
            raise self._write_error(exc) from None
        self.buffer, self.buffer_rows = [], 0
        self.last_save = clock()

    def _write_error(self, exc: OSError) -> DPBoundsError:
        kept = self.manifest.finished
        return DPBoundsError(f"cannot write {str(self.out)!r}: {exc.strerror or exc}; the {kept} chunks finished "
                             f"before are kept in {str(self.work)!r} (resume=True continues from there)")

    def close(self) -> None:
        """Save the kept chunks; commit ``out`` if every chunk is in; release the lock.

        Called once, also after an error or an interrupt.  After a failed write nothing more is
        written: the manifest already describes what is on disk.
        """
        try:
            if not self.broken:
                self.save()
                m = self.manifest
                if not m.complete and m.finished == self.n_chunks:
                    self._commit()
        finally:
            try:
                if self.work.is_dir():
                    for p in self.work.glob(_TMP + "*"):
                        remove(p)
            finally:
                self.lock.release()

    def _commit(self) -> None:
        """Merge the parts into ``out`` (atomically: a merged file renamed over it)."""
        m = self.manifest
        tmp = self.work / (_TMP + _MERGED + self.codec.suffix)
        merged = self.work / (_MERGED + self.codec.suffix)
        try:
            self.codec.merge([(self.work / p.file, p) for p in m.parts], tmp)
            at("merge-written")
            total = file_sum(tmp)
            os.replace(tmp, merged)
            at("merged")
            m.commit = total
            m.save(self.mpath)
            at("commit-recorded")
            os.replace(merged, self.out)
            _fsync_dir(self.out.parent)
            at("out-replaced")
        except OSError as exc:
            self.broken = True
            remove(tmp)
            raise self._write_error(exc) from None
        done = Manifest(m.ident, m.n_chunks, output=total)
        done.save(self.mpath)
        self.manifest = done
        at("final-manifest")
        self._clear_work()
