"""The sidecar manifest of a sweep written to a file: what the files hold, and their checksums.

``<out>.sweep.json`` records the sweep's identity (dpbounds version, quantity, options, axes
with a hash of their values, zip, chunk layout, columns, file format), how many chunks are
finished, and the size and SHA-256 checksum of every file it vouches for: the part files of an
unfinished sweep (see :mod:`dpbounds.sweeps._store`) and, once the sweep is complete, ``out``
itself.  A resume trusts only what the manifest lists and what still matches its checksum.
The manifest is rewritten atomically (a temporary file, flushed to disk, renamed over it), so
it is never half written.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["FORMAT", "FileSum", "Manifest", "ManifestError", "Part", "file_sum", "identity", "manifest_path",
           "mismatch", "same_sweep"]

FORMAT = "dpbounds-sweep-manifest/2"


class ManifestError(Exception):
    """The manifest exists but cannot be read as one (the message says why)."""


def manifest_path(out: Path) -> Path:
    return out.with_name(out.name + ".sweep.json")


def identity(version: str, quantity: str, options: dict[str, Any], grid: dict[str, Any],
             layout: dict[str, int], path: str, columns: list[str], file_format: str) -> dict[str, Any]:
    """What must be equal for a resume (JSON-able)."""
    return {"dpbounds": version, "quantity": quantity, "options": options, "axes": grid["axes"],
            "zip": grid["zip"], "fixed": grid["fixed"], "chunks": layout, "path": path, "columns": columns,
            "format": file_format}


def same_sweep(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether two identities describe the same rows, whatever dpbounds version computed them."""
    return {k: v for k, v in old.items() if k != "dpbounds"} == {k: v for k, v in new.items() if k != "dpbounds"}


def _describe_axis(a: Any) -> str:
    if not isinstance(a, dict):
        return repr(a)
    return f"{a.get('num')} values from {a.get('first')!r} to {a.get('last')!r}"


def mismatch(old: dict[str, Any], new: dict[str, Any]) -> str:
    """What differs between two identities, in words."""
    if old.get("quantity") != new["quantity"]:
        return f"the quantity differs (file: {old.get('quantity')!r}, this call: {new['quantity']!r})"
    if old.get("options") != new["options"]:
        return f"the options differ (file: {old.get('options')}, this call: {new['options']})"
    oa, na = old.get("axes", {}), new["axes"]
    if not isinstance(oa, dict) or list(oa) != list(na):
        return f"the axes differ (file: {', '.join(oa) if isinstance(oa, dict) else oa}; this call: {', '.join(na)})"
    for name in na:
        if oa[name] != na[name]:
            return (f"the axis {name} differs (file: {_describe_axis(oa[name])}; "
                    f"this call: {_describe_axis(na[name])})")
    for key, what in (("zip", "zip"), ("fixed", "the default axis values"), ("path", "the evaluation path"),
                      ("columns", "the columns"), ("format", "the file format")):
        if old.get(key) != new[key]:
            return f"{what} differs (file: {old.get(key)}, this call: {new[key]})"
    if old.get("chunks") != new["chunks"]:
        return (f"the chunking differs (file: {old.get('chunks')}, this call: {new['chunks']}); "
                "resume with the same chunk_size")
    if old.get("dpbounds") != new["dpbounds"]:
        return f"the file was written by dpbounds {old.get('dpbounds')}, this is {new['dpbounds']}"
    return "nothing differs"


@dataclass(frozen=True)
class FileSum:
    """A file's size and SHA-256 checksum."""

    bytes: int
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {"bytes": self.bytes, "sha256": self.sha256}

    @staticmethod
    def from_json(data: Any) -> FileSum | None:
        if data is None:
            return None
        if not (isinstance(data, dict) and isinstance(data.get("bytes"), int) and isinstance(data.get("sha256"), str)):
            raise ManifestError(f"malformed checksum entry {data!r}")
        return FileSum(data["bytes"], data["sha256"])


def file_sum(path: Path) -> FileSum:
    """Size and SHA-256 of the file at ``path`` (read in blocks: constant memory)."""
    h = hashlib.sha256()
    n = 0
    with open(path, "rb") as f:
        while True:
            block = f.read(1 << 20)
            if not block:
                break
            h.update(block)
            n += len(block)
    return FileSum(n, h.hexdigest())


def bytes_sum(data: bytes) -> FileSum:
    return FileSum(len(data), hashlib.sha256(data).hexdigest())


@dataclass(frozen=True)
class Part:
    """A part file of an unfinished sweep: chunks ``first..end-1`` (``rows`` rows), and its checksum."""

    file: str
    first: int
    end: int
    rows: int
    sum: FileSum

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "chunks": [self.first, self.end], "rows": self.rows, **self.sum.to_json()}

    @staticmethod
    def from_json(data: Any) -> Part:
        try:
            first, end = data["chunks"]
            part = Part(str(data["file"]), int(first), int(end), int(data["rows"]),
                        FileSum(int(data["bytes"]), str(data["sha256"])))
        except (KeyError, TypeError, ValueError):
            raise ManifestError(f"malformed part entry {data!r}") from None
        if "/" in part.file or "\\" in part.file or part.file.startswith("."):
            raise ManifestError(f"malformed part file name {part.file!r}")
        return part


@dataclass
class Manifest:
    """The manifest of one output (see the module docstring).

    ``parts``: the finished chunks of an unfinished sweep, in order and contiguous from chunk 0.
    ``output``: the checksum of ``out`` once the sweep is complete.  ``replaces``: what was at
    ``out`` when this sweep started (None: nothing), which it may replace when it completes.
    ``commit``: set while the merged file is being renamed over ``out``.
    """

    ident: dict[str, Any]
    n_chunks: int
    parts: list[Part] = field(default_factory=list)
    output: FileSum | None = None
    replaces: FileSum | None = None
    commit: FileSum | None = None

    @property
    def complete(self) -> bool:
        return self.output is not None

    @property
    def finished(self) -> int:
        """Chunks finished: all once complete, else those in the parts."""
        if self.complete:
            return self.n_chunks
        return self.parts[-1].end if self.parts else 0

    @property
    def rows(self) -> int:
        return sum(p.rows for p in self.parts)

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "identity": self.ident, "n_chunks": self.n_chunks,
                "finished_chunks": self.finished, "complete": self.complete,
                "parts": [p.to_json() for p in self.parts],
                "output": None if self.output is None else self.output.to_json(),
                "replaces": None if self.replaces is None else self.replaces.to_json(),
                "commit": None if self.commit is None else self.commit.to_json()}

    @staticmethod
    def read(path: Path) -> Manifest | None:
        """The manifest at ``path``; None if there is none; :class:`ManifestError` if it is not one."""
        try:
            text = path.read_text()
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise ManifestError(f"cannot read it ({exc})") from None
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ManifestError(f"not JSON ({exc})") from None
        if not isinstance(data, dict) or not str(data.get("format", "")).startswith("dpbounds-sweep-manifest/"):
            raise ManifestError("not a dpbounds sweep manifest")
        if data["format"] != FORMAT:
            raise ManifestError(f"written in the older format {data['format']!r}, which cannot be resumed")
        ident, n = data.get("identity"), data.get("n_chunks")
        if not isinstance(ident, dict) or not isinstance(n, int) or not isinstance(data.get("parts"), list):
            raise ManifestError("malformed (identity, n_chunks or parts)")
        m = Manifest(ident, n, [Part.from_json(p) for p in data["parts"]], FileSum.from_json(data.get("output")),
                     FileSum.from_json(data.get("replaces")), FileSum.from_json(data.get("commit")))
        expected = 0
        for p in m.parts:
            if p.first != expected or not p.first < p.end <= n:
                raise ManifestError(f"its parts do not cover consecutive chunks from 0 (at {p.file!r})")
            expected = p.end
        return m

    def save(self, path: Path) -> None:
        """Write atomically: a temporary file, flushed to disk, renamed over ``path``."""
        from dpbounds.sweeps import _store

        tmp = path.with_name(path.name + ".tmp")
        data = json.dumps(self.to_json(), indent=1).encode()
        try:
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            _store.at("manifest-tmp")
            os.replace(tmp, path)
        except BaseException:
            _store.remove(tmp)
            raise
