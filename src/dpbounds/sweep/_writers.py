"""Where the chunks of a sweep go: memory (an xarray Dataset or a dict), Parquet or CSV.

The file writers write the long format -- one row per point: the axis columns, then the
outputs, ``valid`` and ``reason`` -- chunk by chunk, so memory stays constant whatever the
size of the grid.  Each keeps the sidecar manifest (:mod:`dpbounds.sweep._manifest`) up to
date and is closed in a ``finally`` by the sweep, so an interrupted sweep leaves a readable
file of its finished chunks, which ``resume=True`` continues.
"""
from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import IO, Any

import numpy as np
from numpy.typing import NDArray

from dpbounds._errors import DPBoundsError
from dpbounds.sweep._evaluate import ChunkResult, Plan, put_reasons
from dpbounds.sweep._manifest import Manifest, identity

__all__ = ["Writer", "MemoryWriter", "ParquetWriter", "CsvWriter", "chunk_columns", "columns", "make_writer"]

#: Smallest Parquet row group: chunks of the point-wise quantities (a few points each) are
#: gathered into row groups of at least this many rows.
ROW_GROUP_ROWS = 1 << 16


def columns(plan: Plan) -> list[str]:
    """The long format's columns, in order."""
    q = plan.quantity
    return [*plan.grid.names, *plan.grid.fixed, *q.outputs, *q.bool_outputs, "valid", "reason"]


def chunk_columns(plan: Plan, res: ChunkResult) -> dict[str, NDArray[Any]]:
    """Axis and output columns of one chunk (the reason column is the writer's business)."""
    n = res.hi - res.lo
    cols: dict[str, NDArray[Any]] = dict(plan.grid.coords(res.lo, res.hi))
    cols.update({k: np.full(n, v) for k, v in plan.grid.fixed.items()})
    cols.update(res.values)
    cols["valid"] = res.valid
    return cols


class Writer:
    """Receives the chunks in order; ``start`` is the first chunk still to compute."""

    start = 0

    def write(self, res: ChunkResult) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Flush and close; called exactly once, also after an error or Ctrl-C."""

    def result(self) -> Any:
        raise NotImplementedError


# ---------------------------------------------------------------- memory
class MemoryWriter(Writer):
    """Collects the whole grid; :meth:`result` is an ``xarray.Dataset``, or a dict without xarray."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        n = plan.grid.size
        q = plan.quantity
        self.values: dict[str, NDArray[Any]] = {k: np.empty(n) for k in q.outputs}
        self.values.update({k: np.zeros(n, dtype=bool) for k in q.bool_outputs})
        self.valid = np.empty(n, dtype=bool)
        self.reason = np.empty(n, dtype=object)
        self.reason.fill("")
        self.table = np.asarray(q.reason_table(), dtype=object) if q.kind == "ufunc" else None

    def buffers(self, lo: int, hi: int) -> dict[str, NDArray[Any]]:
        """The result's own slices for points lo..hi-1, for the engine to write into."""
        out = {k: self.values[k][lo:hi] for k in self.plan.quantity.outputs}
        out["valid"] = self.valid[lo:hi]
        return out

    def write(self, res: ChunkResult) -> None:
        lo, hi = res.lo, res.hi
        for k, v in res.values.items():
            dest = self.values[k][lo:hi]
            if not np.shares_memory(v, dest):   # already in place when the engine used buffers()
                dest[...] = v
        if not np.shares_memory(res.valid, self.valid[lo:hi]):
            self.valid[lo:hi] = res.valid
        if res.reasons is not None:
            self.reason[lo:hi] = res.reasons
        elif res.codes is not None and self.table is not None:
            put_reasons(self.reason[lo:hi], res.codes, self.table)

    def result(self) -> Any:
        grid, q = self.plan.grid, self.plan.quantity
        shape = grid.shape
        data = {**self.values, "valid": self.valid, "reason": self.reason}
        try:
            import xarray as xr
        except ImportError:
            out: dict[str, NDArray[Any]] = {}
            for n, v in zip(grid.names, grid.values):
                out[n] = v
            out.update({k: np.asarray(v) for k, v in grid.fixed.items()})
            out.update({k: v.reshape(shape) for k, v in data.items()})
            return out
        dims = ("point",) if grid.zipped else grid.names
        coords: dict[str, Any] = {n: (dims[0], v) if grid.zipped else v for n, v in zip(grid.names, grid.values)}
        coords.update(grid.fixed)
        attrs = {"quantity": q.name, **{k: str(v) for k, v in self.plan.options.items()}}
        try:
            from dpbounds import __version__ as version
            attrs["dpbounds_version"] = version
        except ImportError:  # pragma: no cover - only during a partial import of the package
            pass
        return xr.Dataset({k: _variable(xr, dims, v.reshape(shape)) for k, v in data.items()},
                          coords=coords, attrs=attrs)


def _variable(xr: Any, dims: tuple[str, ...], data: NDArray[Any]) -> Any:
    """An xarray Variable of ``data`` as it is.

    xarray passes object arrays through pandas to look for dates, which for the reason column
    of 10^7 points costs ~2 s (more than the sweep); ``fastpath`` skips that (the strings are
    plain ``str``).  Falls back to the ordinary constructor should the keyword disappear.
    """
    if data.dtype != object:
        return xr.Variable(dims, data)
    try:
        return xr.Variable(dims, data, fastpath=True)
    except TypeError:  # pragma: no cover - an xarray without the keyword
        return xr.Variable(dims, data)


# ---------------------------------------------------------------- files
def _identity(plan: Plan) -> dict[str, Any]:
    from dpbounds import __version__

    lay = plan.layout
    return identity(__version__, plan.quantity.name, {k: plan.options[k] for k in sorted(plan.options)},
                    plan.grid.fingerprint_parts(), {"units": lay.units, "unit": lay.unit, "step": lay.step},
                    plan.path, columns(plan))


def _pyarrow() -> tuple[Any, Any]:
    try:
        import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
        import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        raise DPBoundsError("writing Parquet needs pyarrow: pip install 'dpbounds[sweep]' (or write .csv)") from None
    return pa, pq


class ParquetWriter(Writer):
    """Long-format Parquet, one row group per chunk (at least :data:`ROW_GROUP_ROWS` rows)."""

    def __init__(self, plan: Plan, out: Path, resume: bool) -> None:
        pa, pq = _pyarrow()
        self.pa, self.plan, self.out = pa, plan, out
        q = plan.quantity
        self.table = pa.array(q.reason_table(), type=pa.string()) if q.kind == "ufunc" else None
        fields = [pa.field(n, pa.float64()) for n in (*plan.grid.names, *plan.grid.fixed, *q.outputs)]
        fields += [pa.field(n, pa.bool_()) for n in (*q.bool_outputs, "valid")]
        fields.append(pa.field("reason", pa.string()))
        ident = _identity(plan)
        import json

        self.schema = pa.schema(fields, metadata={b"dpbounds.sweep": json.dumps(ident).encode()})
        self.manifest = Manifest(out, ident, plan.n_chunks)
        self.buffer: list[Any] = []
        self.buffered_chunks = 0
        resumed = resume and self.manifest.load_for_resume()
        tmp = out.with_name(out.name + ".resume-tmp")
        if resumed and self.manifest.finished > 0:
            # Parquet cannot be appended to: the finished rows move to a new file first.  An
            # earlier resume that was interrupted while copying left tmp behind: it is the source.
            if not tmp.exists():
                os.replace(out, tmp)
            rows = plan.layout.bounds(self.manifest.finished - 1)[1]
            try:
                source = pq.ParquetFile(tmp)
            except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a damaged file
                raise DPBoundsError(f"cannot resume {str(out)!r}: the file is not readable Parquet ({exc}); "
                                    "run the sweep again without resume") from None
            self.writer = pq.ParquetWriter(out, self.schema)
            copied = 0
            for g in range(source.metadata.num_row_groups):
                if copied >= rows:
                    break
                t = source.read_row_group(g)
                t = t.slice(0, min(t.num_rows, rows - copied))
                self.writer.write_table(t.cast(self.schema))
                copied += t.num_rows
            if copied != rows:
                self.writer.close()
                raise DPBoundsError(f"cannot resume {str(out)!r}: it holds {copied} rows, its manifest says {rows}")
            source.close()
            tmp.unlink()
            self.start = self.manifest.finished
        else:
            self.manifest.finished = 0
            self.writer = pq.ParquetWriter(out, self.schema)
            self.start = 0
        self.manifest.save()

    def write(self, res: ChunkResult) -> None:
        pa = self.pa
        cols: dict[str, Any] = dict(chunk_columns(self.plan, res))
        if res.reasons is not None:
            cols["reason"] = pa.array(res.reasons, type=pa.string())
        else:
            codes = np.zeros(res.hi - res.lo, dtype=np.int16) if res.codes is None else res.codes
            cols["reason"] = pa.DictionaryArray.from_arrays(pa.array(codes), self.table).dictionary_decode()
        self.buffer.append(pa.table(cols, schema=self.schema))
        self.buffered_chunks += 1
        if sum(t.num_rows for t in self.buffer) >= ROW_GROUP_ROWS:
            self._flush()

    def _flush(self) -> None:
        if not self.buffer:
            return
        table = self.buffer[0] if len(self.buffer) == 1 else self.pa.concat_tables(self.buffer)
        self.writer.write_table(table, row_group_size=max(table.num_rows, 1))
        self.manifest.finished += self.buffered_chunks
        self.buffer, self.buffered_chunks = [], 0
        self.manifest.save()

    def close(self) -> None:
        try:
            self._flush()
        finally:
            self.writer.close()
            self.manifest.save()

    def result(self) -> Path:
        return self.out


class CsvWriter(Writer):
    """Long-format CSV with a header line; floats as Python's shortest round-trip repr.

    To a file (with a manifest, resumable) or to a text stream (``out=None`` on the command line).
    """

    def __init__(self, plan: Plan, out: Path | None, resume: bool, stream: IO[str] | None = None) -> None:
        self.plan, self.out, self.stream = plan, out, stream
        q = plan.quantity
        self.table = np.asarray(q.reason_table(), dtype=object) if q.kind == "ufunc" else None
        header = self._text([columns(plan)])
        self.file: IO[bytes] | None = None
        self.manifest: Manifest | None = None
        if out is None:
            assert stream is not None
            stream.write(header)
            return
        self.manifest = Manifest(out, _identity(plan), plan.n_chunks)
        if resume and self.manifest.load_for_resume():
            self.file = open(out, "r+b")
            self.file.truncate(self.manifest.bytes)   # drop a chunk written after the last manifest update
            self.file.seek(self.manifest.bytes)
            self.start = self.manifest.finished
        else:
            self.file = open(out, "wb")
            self.file.write(header.encode())
            self.manifest.finished = 0
            self.manifest.bytes = self.file.tell()
        self.manifest.save()

    @staticmethod
    def _text(rows: Any) -> str:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(rows)
        return buf.getvalue()

    def write(self, res: ChunkResult) -> None:
        cols = chunk_columns(self.plan, res)
        table = self.table.tolist() if self.table is not None else []
        lists = [c.tolist() for c in cols.values()] + [res.reason_strings(table).tolist()]
        text = self._text(zip(*lists))
        if self.file is None:
            assert self.stream is not None
            self.stream.write(text)
            return
        assert self.manifest is not None
        self.file.write(text.encode())
        self.file.flush()
        self.manifest.finished += 1
        self.manifest.bytes = self.file.tell()
        self.manifest.save()

    def close(self) -> None:
        if self.file is None:
            if self.stream is not None:
                self.stream.flush()
            return
        assert self.manifest is not None
        try:
            self.file.flush()
            self.file.truncate(self.manifest.bytes)
        finally:
            self.file.close()
            self.manifest.save()

    def result(self) -> Path | None:
        return self.out


def make_writer(plan: Plan, out: str | os.PathLike[str] | None, resume: bool) -> Writer:
    """The writer for ``out``: memory (None), ``.parquet``/``.pq`` or ``.csv``."""
    if out is None:
        if resume:
            raise DPBoundsError("resume=True needs out= (a .parquet or .csv file to continue)")
        return MemoryWriter(plan)
    path = Path(os.fspath(out))
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        return ParquetWriter(plan, path, resume)
    if suffix == ".csv":
        return CsvWriter(plan, path, resume)
    raise DPBoundsError(f"out must end in .parquet or .csv, got {str(out)!r}")
