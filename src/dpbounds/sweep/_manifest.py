"""The sidecar manifest of a sweep written to a file: what the file holds and how far it got.

``<out>.sweep.json`` records the sweep's identity (dpbounds version, quantity, options, axes
with a hash of their values, zip, chunk layout, columns) and the number of chunks already in
the file.  ``resume=True`` reads it, refuses a sweep whose identity differs (naming what
differs), and continues after the finished chunks.  It is rewritten atomically (a temporary
file renamed over it), so it is never half written.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from dpbounds._errors import DPBoundsError

__all__ = ["Manifest", "identity", "manifest_path"]

FORMAT = "dpbounds-sweep-manifest/1"


def manifest_path(out: Path) -> Path:
    return out.with_name(out.name + ".sweep.json")


def identity(version: str, quantity: str, options: dict[str, Any], grid: dict[str, Any],
             layout: dict[str, int], path: str, columns: list[str]) -> dict[str, Any]:
    """The part of the manifest that must be equal for a resume (JSON-able)."""
    return {"dpbounds": version, "quantity": quantity, "options": options, "axes": grid["axes"],
            "zip": grid["zip"], "fixed": grid["fixed"], "chunks": layout, "path": path, "columns": columns}


def _describe_axis(a: dict[str, Any]) -> str:
    return f"{a['num']} values from {a['first']!r} to {a['last']!r}"


def _mismatch(old: dict[str, Any], new: dict[str, Any]) -> str:
    """What differs between two identities, in words."""
    if old.get("dpbounds") != new["dpbounds"]:
        return f"the file was written by dpbounds {old.get('dpbounds')}, this is {new['dpbounds']}"
    if old.get("quantity") != new["quantity"]:
        return f"the quantity differs (file: {old.get('quantity')!r}, this call: {new['quantity']!r})"
    if old.get("options") != new["options"]:
        return f"the options differ (file: {old.get('options')}, this call: {new['options']})"
    oa, na = old.get("axes", {}), new["axes"]
    if list(oa) != list(na):
        return f"the axes differ (file: {', '.join(oa)}; this call: {', '.join(na)})"
    for name in na:
        if oa[name] != na[name]:
            return (f"the axis {name} differs (file: {_describe_axis(oa[name])}; "
                    f"this call: {_describe_axis(na[name])})")
    for key, what in (("zip", "zip"), ("fixed", "the default axis values"), ("path", "the evaluation path"),
                      ("columns", "the columns")):
        if old.get(key) != new[key]:
            return f"{what} differs (file: {old.get(key)}, this call: {new[key]})"
    return (f"the chunking differs (file: {old.get('chunks')}, this call: {new['chunks']}); "
            "resume with the same chunk_size")


class Manifest:
    """The manifest of one output file (see the module docstring)."""

    def __init__(self, out: Path, ident: dict[str, Any], n_chunks: int) -> None:
        self.path = manifest_path(out)
        self.out = out
        self.ident = ident
        self.n_chunks = n_chunks
        self.finished = 0
        self.bytes = 0          # CSV: length of the file holding exactly the finished chunks

    def load_for_resume(self) -> bool:
        """Read the manifest of an earlier run; False if there is none (nothing to resume)."""
        if not self.path.exists():
            if self.out.exists():
                raise DPBoundsError(f"cannot resume {str(self.out)!r}: its manifest {str(self.path)!r} is missing")
            return False
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError) as exc:
            raise DPBoundsError(f"cannot resume {str(self.out)!r}: unreadable manifest {str(self.path)!r} ({exc})") from None
        if data.get("format") != FORMAT:
            raise DPBoundsError(f"cannot resume {str(self.out)!r}: {str(self.path)!r} is not a sweep manifest")
        if data.get("identity") != self.ident:
            raise DPBoundsError(f"cannot resume {str(self.out)!r}: {_mismatch(data.get('identity', {}), self.ident)}")
        self.finished = int(data["finished_chunks"])
        self.bytes = int(data.get("bytes", 0))
        return True

    def save(self) -> None:
        data = {"format": FORMAT, "identity": self.ident, "n_chunks": self.n_chunks,
                "finished_chunks": self.finished, "bytes": self.bytes,
                "complete": self.finished == self.n_chunks}
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=1))
        os.replace(tmp, self.path)
