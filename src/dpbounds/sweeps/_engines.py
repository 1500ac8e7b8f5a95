"""The engines that evaluate the chunks of a sweep; each yields the chunk results in order.

* ``local``: one chunk after the other, in this process.
* ``processes``: ``workers`` local processes, for the expensive point-wise quantities (exact
  accountants, calibration).  At most two chunks per worker are in flight, so memory stays
  bounded.  The workers ignore SIGINT, SIGTERM and SIGHUP (the sweep decides when to stop, and
  then ends them at once), and end by themselves if the sweep's process dies.  They are started
  without running the main script again, so a plain script needs no
  ``if __name__ == "__main__":`` guard (unless the quantity itself is defined in that script).
* ``dask``: a dask array of the chunk numbers, :func:`~dpbounds.sweeps._evaluate.evaluate_chunk`
  mapped over it (``map_blocks``): one task per chunk, whatever the quantity.  It runs on the
  active ``dask.distributed`` client if there is one (``distributed.get_client()``), else on
  dask's default scheduler.

All three call the same chunk functions on the same values, so their results are identical
bit for bit.  Each looks at ``stop`` (the sweep's :class:`~dpbounds.sweeps._interrupt.Interrupts`)
while it works: once a signal has come it yields the chunks already finished, in order, and
returns without starting more.
"""
from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import signal
import sys
import time
import traceback
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

import numpy as np
from numpy.typing import NDArray

from dpbounds._errors import DPBoundsError
from dpbounds.sweeps._evaluate import Abandoned, ChunkResult, Plan, evaluate_chunk

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from dpbounds.sweeps._interrupt import Interrupts

__all__ = ["ENGINES", "run_engine", "active_client"]

ENGINES = ("local", "processes", "dask")

#: The in-memory result's slices for the points lo..hi-1 (outputs and valid), if it has them.
Buffers = Callable[[int, int], Mapping[str, NDArray[Any]]] | None

#: Seconds between looks at the stop flag while an engine waits for a chunk.
POLL = 0.05


def _requested(stop: Interrupts | None) -> bool:
    return stop is not None and stop.requested


def _local(plan: Plan, start: int, workers: int | None, buffers: Buffers = None,
           stop: Interrupts | None = None) -> Iterator[ChunkResult]:
    for i in range(start, plan.n_chunks):
        if _requested(stop):
            return
        lo, hi = plan.layout.bounds(i)
        try:
            # into the in-memory result: its reasons are computed when they are read
            res = evaluate_chunk(plan, i, None if buffers is None else buffers(lo, hi), stop=stop,
                                 reasons=buffers is None)
        except Abandoned:   # a signal came in the middle of a point-wise chunk: its points are dropped
            return
        yield res


# ---------------------------------------------------------------- processes
_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def _worker(conn: Connection, plan: Plan) -> None:
    """A worker process: chunk numbers in, chunk results out, until None or the sweep's end of the pipe closes."""
    for signum in _SIGNALS:
        signal.signal(signum, signal.SIG_IGN)   # the sweep's process decides when to stop
    while True:
        try:
            i = conn.recv()
        except (EOFError, OSError):   # the sweep's process is gone
            return
        if i is None:
            return
        try:
            conn.send((i, evaluate_chunk(plan, i), ""))
        except BaseException:  # noqa: BLE001 - reported to the sweep, which raises it
            try:
                conn.send((i, None, traceback.format_exc()))
            except (EOFError, OSError):
                return


_GUARD_HINT = ("if the script calls dpbounds.sweep(engine='processes') at its top level and defines the quantity "
               "itself, put that code under `if __name__ == \"__main__\":`")


@contextlib.contextmanager
def _main_not_rerun(plan: Plan) -> Iterator[None]:
    """Start processes without running the main script in them again.

    multiprocessing's spawn and forkserver methods re-run the main script in every new process
    (as ``__mp_main__``), so that what it defines can be unpickled there; a script without an
    ``if __name__ == "__main__":`` guard then starts the sweep again inside each worker.  The
    workers need only dpbounds, so while they start ``__main__`` is made to look like an
    interactive session (no ``__file__``, no ``__spec__``), which multiprocessing does not
    re-run -- unless the plan refers to something defined in ``__main__`` itself.
    """
    main = sys.modules.get("__main__")
    # (the grid is numbers only: what could come from __main__ is the quantity, its functions, options)
    if main is None or b"__main__" in pickle.dumps((plan.quantity, plan.outer, dict(plan.options))):
        yield
        return
    saved: dict[str, Any] = {k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__spec__ = None
    try:
        yield
    finally:
        main.__dict__.pop("__file__", None)
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


class _Pool:
    """``n`` worker processes, each with its own pipe."""

    def __init__(self, plan: Plan, n: int) -> None:
        import multiprocessing

        # forkserver (or spawn): forking a process that may hold threads (a dask client, BLAS) is unsafe
        methods = multiprocessing.get_all_start_methods()
        ctx: Any = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        self.procs: list[Any] = []
        self.conns: list[Connection] = []
        with _main_not_rerun(plan):
            for _ in range(n):
                mine, theirs = ctx.Pipe()
                p = ctx.Process(target=_worker, args=(theirs, plan), daemon=True, name="dpbounds-sweep-worker")
                p.start()
                theirs.close()
                self.procs.append(p)
                self.conns.append(mine)

    def close(self, graceful: bool) -> None:
        if graceful:
            for c in self.conns:
                with contextlib.suppress(OSError):
                    c.send(None)
            for p in self.procs:
                p.join(timeout=5)
        for p in self.procs:   # an interrupted sweep drops the chunks in flight: end the workers now
            if p.is_alive():
                p.kill()       # (they ignore SIGTERM)
        for p in self.procs:
            p.join()
        for c in self.conns:
            c.close()


def _processes(plan: Plan, start: int, workers: int | None, buffers: Buffers = None,
               stop: Interrupts | None = None) -> Iterator[ChunkResult]:
    from multiprocessing.connection import wait

    n_chunks = plan.n_chunks
    if start >= n_chunks:
        return
    n_workers = max(1, min(workers or os.cpu_count() or 1, n_chunks - start))
    pool = _Pool(plan, n_workers)
    graceful = False
    try:
        done: dict[int, ChunkResult] = {}
        busy: dict[int, int] = {}          # worker -> chunks it holds
        owner: dict[int, int] = {}         # chunk -> worker
        nxt, head = start, start
        by_conn = {id(c): w for w, c in enumerate(pool.conns)}

        def assign() -> None:
            nonlocal nxt
            # two chunks per worker in flight, and never more than 2 * workers chunks beyond the head
            for w, c in enumerate(pool.conns):
                while nxt < n_chunks and busy.get(w, 0) < 2 and nxt - head < 2 * n_workers:
                    c.send(nxt)
                    busy[w] = busy.get(w, 0) + 1
                    owner[nxt] = w
                    nxt += 1

        assign()
        while head < n_chunks:
            while head in done:
                yield done.pop(head)
                head += 1
            if head >= n_chunks:
                break
            if _requested(stop):
                return
            assign()
            for c in wait(pool.conns, timeout=POLL):
                w = by_conn[id(c)]
                try:
                    message: tuple[int, ChunkResult, str] = pool.conns[w].recv()
                except (EOFError, OSError):
                    p = pool.procs[w]
                    p.join(timeout=1)
                    lost = sorted(k for k, v in owner.items() if v == w and k not in done)
                    raise DPBoundsError(
                        f"a worker process of engine='processes' ended (exit code {p.exitcode}) while computing "
                        f"chunk {lost[0] if lost else '?'}; {_GUARD_HINT}") from None
                i, res, error = message
                if error:
                    raise RuntimeError(f"engine='processes': chunk {i} failed in a worker process:\n{error}")
                busy[w] -= 1
                owner.pop(i, None)
                done[i] = res
        graceful = True
    finally:
        pool.close(graceful)


# ---------------------------------------------------------------- dask
def active_client() -> Any:
    """The active ``dask.distributed`` client, or None (no distributed, or no client)."""
    try:
        from distributed import get_client
    except ImportError:
        return None
    try:
        return get_client()
    except ValueError:   # "No global client found"
        return None


def _boxed(res: ChunkResult) -> NDArray[np.object_]:
    out = np.empty(1, dtype=object)
    out[0] = res
    return out


def _chunk_block(i: NDArray[np.int64], plan: Plan, stop: Interrupts | None = None) -> NDArray[np.object_]:
    return _boxed(evaluate_chunk(plan, int(i[0]), stop=stop))


def _dask(plan: Plan, start: int, workers: int | None, buffers: Buffers = None,
          stop: Interrupts | None = None) -> Iterator[ChunkResult]:
    try:
        # untyped modules: used through Any
        dask: Any = importlib.import_module("dask")
        da: Any = importlib.import_module("dask.array")
    except ImportError:
        raise DPBoundsError("engine='dask' needs dask: pip install 'dpbounds[dask]'") from None
    n = plan.n_chunks - start
    if n <= 0:
        return
    # One task per chunk, the local engine's own chunk function: the element-wise quantities get
    # the values and their status bits in one pass (a fused kernel) and the reason codes of the
    # same blocks, bit for bit the local result; only the codes travel back, not strings.
    chunk_ids = da.arange(start, plan.n_chunks, chunks=1, dtype=np.int64)
    client = active_client()
    if client is not None:
        boxed = chunk_ids.map_blocks(_chunk_block, plan, dtype=object, chunks=((1,) * n,))
        parallel = max(1, sum(client.nthreads().values()))
        yield from _distributed(client, boxed, n, 2 * parallel, stop)
        return
    # dask's own scheduler runs the tasks in threads of this process: they see the stop flag (a
    # point-wise chunk stops between two points); a batch blocks until it is done, so a batch is
    # one chunk per thread
    boxed = chunk_ids.map_blocks(_chunk_block, plan, stop, dtype=object, chunks=((1,) * n,))
    batch = workers or os.cpu_count() or 1
    for b0 in range(0, n, batch):
        if _requested(stop):
            return
        blocks = [boxed.blocks[i] for i in range(b0, min(n, b0 + batch))]
        try:
            arrays = dask.compute(*blocks, num_workers=workers) if workers is not None else dask.compute(*blocks)
        except Abandoned:   # a signal: the batch's other chunks are dropped too
            return
        for a in arrays:
            yield a[0]


def _distributed(client: Any, boxed: Any, n: int, batch: int, stop: Interrupts | None) -> Iterator[ChunkResult]:
    futures: list[Any] = []
    nxt = 0
    try:
        while nxt < n or futures:
            while nxt < n and len(futures) < batch:
                futures.append(client.compute(boxed.blocks[nxt]))
                nxt += 1
            head = futures[0]
            while not head.done():
                if _requested(stop):
                    return
                time.sleep(POLL)
            futures.pop(0)
            yield head.result()[0]
            if _requested(stop):
                return
    finally:
        if futures:
            client.cancel(futures)


_RUNNERS: dict[str, Callable[..., Iterator[ChunkResult]]] = {"local": _local, "processes": _processes, "dask": _dask}


def run_engine(engine: str, plan: Plan, start: int, workers: int | None, buffers: Buffers = None,
               stop: Interrupts | None = None) -> Iterator[ChunkResult]:
    """The chunk results of chunks ``start, start + 1, ...`` of ``plan``, in order.

    ``buffers``: the local engine writes element-wise (and separable) outputs straight into the in-memory
    result (the other engines' results arrive from elsewhere and are copied).  ``stop``: once it
    is set, the engine yields only the chunks already finished and returns.
    """
    runner: Callable[..., Iterator[ChunkResult]] = _RUNNERS[engine]
    return runner(plan, start, workers, buffers, stop)
