"""Where the chunks of a sweep go: memory (an xarray Dataset or a dict), Parquet or CSV.

The file writers write the long format -- one row per point: the axis columns, then the
outputs, ``valid`` and ``reason`` -- chunk by chunk, so memory stays constant whatever the
size of the grid.  The chunks are saved as part files as they finish, and merged into ``out``
when the last one is in (:mod:`dpbounds.sweeps._store`: the lock, the checksummed parts and
manifest, the atomic commit).  The sweep closes its writer in a ``finally``, so an interrupted
sweep keeps every finished chunk, which ``resume=True`` continues.
"""
from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import IO, Any, Callable

import numpy as np
from numpy.typing import NDArray

from dpbounds._errors import DPBoundsError
from dpbounds.sweeps._evaluate import BLOCK, ChunkResult, Plan, put_reasons, put_reasons_at, reason_codes
from dpbounds.sweeps._manifest import Part, identity
from dpbounds.sweeps._store import FileStore

__all__ = ["Writer", "MemoryWriter", "FileWriter", "CsvStreamWriter", "chunk_columns", "columns", "make_writer"]

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
    cols["valid"] = res.valid_mask()
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
    """Collects the whole grid; :meth:`result` is an ``xarray.Dataset``, or a dict without xarray.

    The reasons of the element-wise quantities are kept as codes (2 bytes a point), or not at
    all for chunks evaluated without them (``ChunkResult.deferred``), and turned into the
    ``reason`` strings when they are read; so is the ``valid`` column of the chunks that leave it
    to be read (``ChunkResult.valid`` None: the separable kernels').  The Dataset's variables
    for them are loaded lazily (as a file's variables are in ``xarray.open_dataset``); the
    dict's arrays are built at once.
    """

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        n = plan.grid.size
        q = plan.quantity
        self.values: dict[str, NDArray[Any]] = {k: np.empty(n) for k in q.outputs}
        self.values.update({k: np.zeros(n, dtype=bool) for k in q.bool_outputs})
        self._valid = np.empty(n, dtype=bool)   # (untouched memory until written)
        self._finite: list[tuple[int, int]] = []           # chunks whose valid is isfinite of the main output
        self.strings: NDArray[np.object_] | None = None     # point-wise quantities: the reasons as given
        self.codes: NDArray[np.int16] | None = None         # element-wise: codes of the chunks that carry them
        self.deferred: list[tuple[int, int]] = []           # element-wise chunks without their codes
        if q.kind != "ufunc":
            self.strings = np.empty(n, dtype=object)
            self.strings.fill("")

    @property
    def valid(self) -> NDArray[np.bool_]:
        """The ``valid`` column (computed where the chunks left it to be read)."""
        if self._finite:
            main = self.values[self.plan.quantity.outputs[0]]
            for lo, hi in self._finite:
                np.isfinite(main[lo:hi], out=self._valid[lo:hi])
            self._finite = []
        return self._valid

    def buffers(self, lo: int, hi: int) -> dict[str, NDArray[Any]]:
        """The result's own slices for points lo..hi-1, for the engine to write into."""
        out = {k: self.values[k][lo:hi] for k in self.plan.quantity.outputs}
        out["valid"] = self._valid[lo:hi]
        return out

    def write(self, res: ChunkResult) -> None:
        lo, hi = res.lo, res.hi
        for k, v in res.values.items():
            dest = self.values[k][lo:hi]
            if not np.shares_memory(v, dest):   # already in place when the engine used buffers()
                dest[...] = v
        if res.valid is None:
            self._finite.append((lo, hi))
        elif not np.shares_memory(res.valid, self._valid[lo:hi]):
            self._valid[lo:hi] = res.valid
        if res.reasons is not None:
            assert self.strings is not None
            self.strings[lo:hi] = res.reasons
        elif res.deferred:
            self.deferred.append((lo, hi))
        elif res.codes is not None:
            if self.codes is None:
                self.codes = np.zeros(self.plan.grid.size, dtype=np.int16)
            self.codes[lo:hi] = res.codes

    def reasons(self) -> NDArray[np.object_]:
        """The ``reason`` column: "" where valid, else why not (see the module docstring)."""
        if self.strings is not None:
            return self.strings
        out = np.empty(self.plan.grid.size, dtype=object)
        out.fill("")
        if self.valid.all():
            return out
        table = np.asarray(self.plan.quantity.reason_table(), dtype=object)
        if self.codes is not None:
            put_reasons(out, self.codes, table)
        for lo, hi in self.deferred:
            # element-wise chunks in blocks (the temporaries stay small); separable ones whole (rows)
            step = hi - lo if self.plan.path == "outer" else BLOCK
            for b0 in range(lo, hi, step):
                b1 = min(hi, b0 + step)
                got = reason_codes(self.plan, b0, b1, self.valid[b0:b1])
                if got is not None:
                    put_reasons_at(out[b0:b1], got[0], got[1], table)
        return out

    def result(self) -> Any:
        grid, q = self.plan.grid, self.plan.quantity
        shape = grid.shape
        try:
            import xarray as xr
        except ImportError:
            out: dict[str, NDArray[Any]] = {}
            for n, v in zip(grid.names, grid.values):
                out[n] = v
            out.update({k: np.asarray(v) for k, v in grid.fixed.items()})
            data = {**self.values, "valid": self.valid, "reason": self.reasons()}
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
        variables = {k: _variable(xr, dims, v.reshape(shape)) for k, v in self.values.items()}
        if self._finite:
            variables["valid"] = _lazy_variable(xr, dims, shape, np.dtype(bool), lambda: self.valid)
        else:
            variables["valid"] = _variable(xr, dims, self._valid.reshape(shape))
        variables["reason"] = _lazy_variable(xr, dims, shape, np.dtype(object), self.reasons)
        return dataset(xr, variables, coords, attrs)


def dataset(xr: Any, variables: dict[str, Any], coords: dict[str, Any], attrs: dict[str, Any]) -> Any:
    """``xr.Dataset(variables, coords=coords, attrs=attrs)``, built directly.

    ``variables``: data variables (``xarray.Variable``) on the grid's dimensions; ``coords``: a
    1-D array per dimension (its index coordinate), ``(dim, array)`` for the coordinates of a
    point list, a number for a scalar coordinate.  The constructor merges and aligns its
    arguments, which for a sweep's result (already aligned by construction) is most of the cost
    of returning a small grid (~0.3 ms; the separable kernels take ~1 ns a point).  Here each
    index is built as the constructor builds it (``PandasIndex.from_variables``) and the Dataset
    from the parts; the result is identical (tests/sweep/test_sweep.py).  Should xarray's internals
    differ, the constructor is used.
    """
    try:
        import pandas as pd  # type: ignore[import-untyped, unused-ignore]  # (xarray's dependency)
        from xarray.core.indexes import PandasIndex

        out: dict[str, Any] = dict(variables)   # the constructor's order: data variables, then coordinates
        indexes: dict[str, Any] = {}
        sizes: dict[str, int] = {}
        for v in variables.values():
            sizes.update(v.sizes)
        for name, c in coords.items():
            if isinstance(c, tuple):
                out[name] = xr.Variable(c[0], c[1])
            elif isinstance(c, float):   # a defaulted axis: the 0-d float64 array the constructor makes of it
                out[name] = xr.Variable((), np.asarray(c, dtype=np.float64), fastpath=True)
            elif np.ndim(c) == 0:
                out[name] = xr.Variable((), c)
            else:
                # what PandasIndex.from_variables makes of the dimension's own coordinate (a float64
                # array: pandas.Index of a copy of it, named after the dimension), given the
                # pandas.Index it would make rather than left to find it (half the time)
                index = PandasIndex(_pandas_index(pd, c, name), name, coord_dtype=c.dtype, fastpath=True)
                out.update(index.create_variables())
                indexes[name] = index
            sizes.update(out[name].sizes)
        return xr.Dataset._construct_direct(out, set(coords), sizes, attrs, indexes)
    except (ImportError, AttributeError, TypeError):  # pragma: no cover - an xarray whose internals differ
        return xr.Dataset(variables, coords=coords, attrs=attrs)


def _pandas_index(pd: Any, values: NDArray[np.float64], name: str) -> Any:
    """``pandas.Index(values, name=name)`` (a copy of ``values``): built from its parts, as the
    constructor builds an index of a float64 array once it has inferred its class and copied the
    data -- a fifth of the time -- when this pandas has them and gives the same kind of index."""
    try:
        index = pd.Index._simple_new(values.copy(), name)
        if type(index) is pd.Index and index.dtype == values.dtype and index.name == name:
            return index
    except (AttributeError, TypeError, AssertionError):  # pragma: no cover - a pandas whose internals differ
        pass
    return pd.Index(values, name=name)  # pragma: no cover - as above


class _Lazy:
    """A column built on first read (an xarray backend array, like a file's variables)."""

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype[Any], make: Callable[[], NDArray[Any]]) -> None:
        self.shape = shape
        self.dtype = dtype
        self._make: Callable[[], NDArray[Any]] | None = make
        self._data: NDArray[Any] | None = None

    def data(self) -> NDArray[Any]:
        if self._data is None:
            assert self._make is not None
            self._data, self._make = self._make().reshape(self.shape), None
        return self._data


class _LazyColumnMethods:
    """The methods of the backend array class over a :class:`_Lazy` column (see :func:`_backend_class`)."""

    indexing: Any = None   # xarray.core.indexing, set on the class made by _backend_class

    def __init__(self, lazy: _Lazy) -> None:
        self.lazy = lazy
        self.shape = lazy.shape
        self.dtype = lazy.dtype

    def __getitem__(self, key: Any) -> Any:
        ix = self.indexing
        return ix.explicit_indexing_adapter(key, self.shape, ix.IndexingSupport.BASIC, self._read)

    def _read(self, key: Any) -> Any:
        return self.lazy.data()[key]


_BACKEND: list[Any] = []   # the backend array class, made once (making a class costs ~0.1 ms)


def _backend_class() -> Any:
    """``_LazyColumnMethods`` on xarray's ``BackendArray``, made on first use (importing xarray).

    Made by ``type()`` rather than a class statement in this function: mypy would list such a
    class among the module's exports, and stubtest then find it missing at runtime.
    """
    if not _BACKEND:
        from xarray.backends import BackendArray
        from xarray.core import indexing

        _BACKEND.append(type("LazyColumn", (_LazyColumnMethods, BackendArray), {"indexing": indexing}))
    return _BACKEND[0]


_WHOLE: dict[int, Any] = {}   # xarray's BasicIndexer of every element, per number of dimensions


def _lazy_variable(xr: Any, dims: tuple[str, ...], shape: tuple[int, ...], dtype: np.dtype[Any],
                   make: Callable[[], NDArray[Any]]) -> Any:
    """An xarray Variable whose values are ``make()`` (of ``dtype``), called on first read.

    Built from xarray's backend interface (``BackendArray``, ``LazilyIndexedArray``: what
    ``open_dataset`` builds a file's variables from); an xarray without it gets the values at once.
    """
    lazy = _Lazy(shape, dtype, make)
    try:
        from xarray.core import indexing

        # the whole array as the key (what LazilyIndexedArray makes without one; immutable, so made
        # once per dimension count); fastpath: the lazy array is taken as it is, as the ordinary
        # constructor takes it
        key = _WHOLE.get(len(shape))
        if key is None:
            key = _WHOLE[len(shape)] = indexing.BasicIndexer((slice(None),) * len(shape))
        return xr.Variable(dims, indexing.LazilyIndexedArray(_backend_class()(lazy), key), fastpath=True)
    except (ImportError, AttributeError, TypeError):  # pragma: no cover - an xarray without the interface
        return _variable(xr, dims, lazy.data())


def _variable(xr: Any, dims: tuple[str, ...], data: NDArray[Any]) -> Any:
    """An xarray Variable of ``data`` (a numpy array) as it is.

    xarray passes object arrays through pandas to look for dates, which for the reason column
    of 10^7 points costs ~2 s (more than the sweep); ``fastpath`` skips that (the strings are
    plain ``str``) and, for every array, the checks of an argument that is already a plain numpy
    array.  Falls back to the ordinary constructor should the keyword disappear.
    """
    try:
        return xr.Variable(dims, data, fastpath=True)
    except TypeError:  # pragma: no cover - an xarray without the keyword
        return xr.Variable(dims, data)


# ---------------------------------------------------------------- files
def _identity(plan: Plan, file_format: str) -> dict[str, Any]:
    from dpbounds import __version__

    lay = plan.layout
    return identity(__version__, plan.quantity.name, {k: plan.options[k] for k in sorted(plan.options)},
                    plan.grid.fingerprint_parts(), {"units": lay.units, "unit": lay.unit, "step": lay.step},
                    plan.path, columns(plan), file_format)


def _pyarrow() -> tuple[Any, Any]:
    try:
        import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
        import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        raise DPBoundsError("writing Parquet needs pyarrow: pip install 'dpbounds[sweep]' (or write .csv)") from None
    return pa, pq


def _csv_text(rows: Any) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def _csv_rows(plan: Plan, res: ChunkResult, table: list[str]) -> str:
    cols = chunk_columns(plan, res)
    lists = [c.tolist() for c in cols.values()] + [res.reason_strings(table).tolist()]
    return _csv_text(zip(*lists))


class CsvCodec:
    """CSV parts: each its header line and its rows; the output is the header and every part's rows.

    Floats are written as Python's shortest round-trip repr (``nan``, ``inf`` included).
    """

    suffix = ".csv"

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        q = plan.quantity
        self.table: list[str] = list(q.reason_table()) if q.kind == "ufunc" else []
        self.header = _csv_text([columns(plan)]).encode()

    def encode(self, res: ChunkResult) -> tuple[bytes, int]:
        return _csv_rows(self.plan, res, self.table).encode(), res.hi - res.lo

    def part(self, chunks: list[bytes]) -> bytes:
        return self.header + b"".join(chunks)

    def merge(self, parts: list[tuple[Path, Part]], dest: Path) -> None:
        n = len(self.header)
        with open(dest, "wb") as f:
            f.write(self.header)
            for path, _ in parts:
                data = path.read_bytes()
                f.write(data[n:])
            f.flush()
            os.fsync(f.fileno())


#: Smallest Parquet row group of the output: chunks of the point-wise quantities (a few points
#: each) are gathered into row groups of at least this many rows.
ROW_GROUP_ROWS = 1 << 16


class ParquetCodec:
    """Parquet parts (one row group each, the sweep's identity in the schema metadata); the output
    gathers consecutive chunks into row groups of at least :data:`ROW_GROUP_ROWS` rows."""

    suffix = ".parquet"

    def __init__(self, plan: Plan, ident: dict[str, Any]) -> None:
        pa, pq = _pyarrow()
        self.pa, self.pq, self.plan = pa, pq, plan
        q = plan.quantity
        self.table = pa.array(q.reason_table(), type=pa.string()) if q.kind == "ufunc" else None
        fields = [pa.field(n, pa.float64()) for n in (*plan.grid.names, *plan.grid.fixed, *q.outputs)]
        fields += [pa.field(n, pa.bool_()) for n in (*q.bool_outputs, "valid")]
        fields.append(pa.field("reason", pa.string()))
        self.schema = pa.schema(fields, metadata={b"dpbounds.sweep": json.dumps(ident).encode()})

    def encode(self, res: ChunkResult) -> tuple[Any, int]:
        pa = self.pa
        cols: dict[str, Any] = dict(chunk_columns(self.plan, res))
        if res.reasons is not None:
            cols["reason"] = pa.array(res.reasons, type=pa.string())
        else:
            codes = np.zeros(res.hi - res.lo, dtype=np.int16) if res.codes is None else res.codes
            cols["reason"] = pa.DictionaryArray.from_arrays(pa.array(codes), self.table).dictionary_decode()
        t = pa.table(cols, schema=self.schema)
        return t, t.num_rows

    def part(self, chunks: list[Any]) -> bytes:
        table = chunks[0] if len(chunks) == 1 else self.pa.concat_tables(chunks)
        sink = self.pa.BufferOutputStream()
        self.pq.write_table(table, sink, row_group_size=max(table.num_rows, 1))
        return bytes(sink.getvalue())

    def merge(self, parts: list[tuple[Path, Part]], dest: Path) -> None:
        layout = self.plan.layout
        writer = self.pq.ParquetWriter(dest, self.schema)
        try:
            group: list[Any] = []
            rows = 0
            for path, p in parts:
                t = self.pq.read_table(path, schema=self.schema)
                offset = 0
                for i in range(p.first, p.end):   # the chunks, gathered as when they were written whole
                    lo, hi = layout.bounds(i)
                    group.append(t.slice(offset, hi - lo))
                    offset += hi - lo
                    rows += hi - lo
                    if rows >= ROW_GROUP_ROWS:
                        self._write_group(writer, group)
                        group, rows = [], 0
            if group:
                self._write_group(writer, group)
        finally:
            writer.close()
        with open(dest, "rb+") as f:
            os.fsync(f.fileno())

    def _write_group(self, writer: Any, group: list[Any]) -> None:
        table = group[0] if len(group) == 1 else self.pa.concat_tables(group)
        writer.write_table(table, row_group_size=max(table.num_rows, 1))


class FileWriter(Writer):
    """Long-format Parquet or CSV written through a :class:`~dpbounds.sweeps._store.FileStore`."""

    def __init__(self, plan: Plan, out: Path, codec: Any, ident: dict[str, Any], resume: bool,
                 overwrite: bool) -> None:
        self.plan, self.out = plan, out
        self.store = FileStore(out, ident, plan.n_chunks, codec, resume=resume, overwrite=overwrite)
        self.start = self.store.start

    def write(self, res: ChunkResult) -> None:
        self.store.add(res)

    def close(self) -> None:
        self.store.close()

    def result(self) -> Path:
        return self.out


class CsvStreamWriter(Writer):
    """Long-format CSV to a text stream (the command line's stdout), with its header line."""

    def __init__(self, plan: Plan, stream: IO[str]) -> None:
        self.plan, self.stream = plan, stream
        q = plan.quantity
        self.table: list[str] = list(q.reason_table()) if q.kind == "ufunc" else []
        stream.write(_csv_text([columns(plan)]))

    def write(self, res: ChunkResult) -> None:
        self.stream.write(_csv_rows(self.plan, res, self.table))

    def close(self) -> None:
        self.stream.flush()

    def result(self) -> None:
        return None


def make_writer(plan: Plan, out: str | os.PathLike[str] | None, resume: bool, overwrite: bool = False) -> Writer:
    """The writer for ``out``: memory (None), ``.parquet``/``.pq`` or ``.csv``."""
    if out is None:
        if resume:
            raise DPBoundsError("resume=True needs out= (a .parquet or .csv file to continue)")
        return MemoryWriter(plan)
    path = Path(os.fspath(out))
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        ident = _identity(plan, "parquet")
        return FileWriter(plan, path, ParquetCodec(plan, ident), ident, resume, overwrite)
    if suffix == ".csv":
        return FileWriter(plan, path, CsvCodec(plan), _identity(plan, "csv"), resume, overwrite)
    raise DPBoundsError(f"out must end in .parquet or .csv, got {str(out)!r}")
