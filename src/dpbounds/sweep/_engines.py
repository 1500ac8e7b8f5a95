"""The engines that evaluate the chunks of a sweep; each yields the chunk results in order.

* ``local``: one chunk after the other, in this process.
* ``processes``: a pool of ``workers`` local processes (``concurrent.futures``), for the
  expensive point-wise quantities (exact accountants, calibration); at most two chunks per
  worker are in flight, so memory stays bounded.  The workers ignore Ctrl-C: the sweep
  decides when to stop.
* ``dask``: a dask array of the chunk numbers, :func:`~dpbounds.sweep._evaluate.evaluate_chunk`
  mapped over it (``map_blocks``): one task per chunk, whatever the quantity.  It runs on the
  active ``dask.distributed`` client if there is one (``distributed.get_client()``), else on
  dask's default scheduler.

All three call the same chunk functions on the same values, so their results are identical
bit for bit.
"""
from __future__ import annotations

import importlib
import os
import signal
from collections import deque
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

import numpy as np
from numpy.typing import NDArray

from dpbounds._errors import DPBoundsError
from dpbounds.sweep._evaluate import ChunkResult, Plan, evaluate_chunk

if TYPE_CHECKING:
    from concurrent.futures import Future

__all__ = ["ENGINES", "run_engine", "active_client"]

ENGINES = ("local", "processes", "dask")

#: The in-memory result's slices for the points lo..hi-1 (outputs and valid), if it has them.
Buffers = Callable[[int, int], Mapping[str, NDArray[Any]]] | None


def _local(plan: Plan, start: int, workers: int | None, buffers: Buffers = None) -> Iterator[ChunkResult]:
    for i in range(start, plan.n_chunks):
        lo, hi = plan.layout.bounds(i)
        yield evaluate_chunk(plan, i, None if buffers is None else buffers(lo, hi))


# ---------------------------------------------------------------- processes
_WORKER_PLAN: Plan | None = None


def _init_worker(plan: Plan) -> None:
    global _WORKER_PLAN
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's to handle
    _WORKER_PLAN = plan


def _work(i: int) -> ChunkResult:
    assert _WORKER_PLAN is not None
    return evaluate_chunk(_WORKER_PLAN, i)


def _processes(plan: Plan, start: int, workers: int | None, buffers: Buffers = None) -> Iterator[ChunkResult]:
    # imported here: `import dpbounds` should not pay for multiprocessing
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    n_workers = workers or os.cpu_count() or 1
    # forkserver (or spawn): forking a process that may hold threads (a dask client, BLAS) is unsafe
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    pool = ProcessPoolExecutor(max_workers=n_workers, mp_context=ctx, initializer=_init_worker, initargs=(plan,))
    pending: deque["Future[ChunkResult]"] = deque()
    done = False
    try:
        nxt = start
        while nxt < plan.n_chunks or pending:
            while nxt < plan.n_chunks and len(pending) < 2 * n_workers:
                pending.append(pool.submit(_work, nxt))
                nxt += 1
            yield pending.popleft().result()
        done = True
    finally:
        for f in pending:
            f.cancel()
        pool.shutdown(wait=done, cancel_futures=True)


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


def _chunk_block(i: NDArray[np.int64], plan: Plan) -> NDArray[np.object_]:
    return _boxed(evaluate_chunk(plan, int(i[0])))


def _dask(plan: Plan, start: int, workers: int | None, buffers: Buffers = None) -> Iterator[ChunkResult]:
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
    boxed = chunk_ids.map_blocks(_chunk_block, plan, dtype=object, chunks=((1,) * n,))
    client = active_client()
    if client is not None:
        parallel = max(1, sum(client.nthreads().values()))
    else:
        parallel = workers or os.cpu_count() or 1
    batch = 2 * parallel
    for b0 in range(0, n, batch):
        blocks = [boxed.blocks[i] for i in range(b0, min(n, b0 + batch))]
        if client is not None:
            arrays = client.gather(client.compute(blocks))
        elif workers is not None:
            arrays = dask.compute(*blocks, num_workers=workers)
        else:
            arrays = dask.compute(*blocks)
        for a in arrays:
            yield a[0]


_RUNNERS: dict[str, Callable[..., Iterator[ChunkResult]]] = {"local": _local, "processes": _processes, "dask": _dask}


def run_engine(engine: str, plan: Plan, start: int, workers: int | None,
               buffers: Buffers = None) -> Iterator[ChunkResult]:
    """The chunk results of chunks ``start, start + 1, ...`` of ``plan``, in order.

    ``buffers``: the local engine writes element-wise (and separable) outputs straight into the in-memory
    result (the other engines' results arrive from elsewhere and are copied).
    """
    runner: Callable[..., Iterator[ChunkResult]] = _RUNNERS[engine]
    return runner(plan, start, workers, buffers)
