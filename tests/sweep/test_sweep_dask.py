"""engine="dask" on a real dask.distributed LocalCluster (two worker processes) equals the local engine."""
from __future__ import annotations

import numpy as np
import pytest

import dpbounds

pytestmark = pytest.mark.slow   # a cluster of two processes starts in several seconds


def _arrays(res):
    if isinstance(res, dict):
        return {k: np.asarray(v) for k, v in res.items()}
    return {k: np.asarray(res[k].values) for k in (*res.data_vars, *res.coords)}


def test_local_cluster_equals_local_engine():
    distributed = pytest.importorskip("distributed", reason="dask.distributed not installed")
    closed = dict(sigma=np.r_[-1.0, np.linspace(0.2, 4, 9)], rounds=np.r_[2.0, np.rint(np.geomspace(3, 1e9, 12))])
    # the same points as a point list: the element-wise path (fused values and status bits)
    S, M = np.meshgrid(closed["sigma"], closed["rounds"], indexing="ij")
    listed = dict(sigma=S.ravel(), rounds=M.ravel(), zip=True)
    exact = dict(sigma=[0.2, 1.0, 2.0], rounds=[8], delta=[1e-4])
    ref_closed = _arrays(dpbounds.sweep("delta_bound", chunk_size=13, **closed))
    ref_listed = _arrays(dpbounds.sweep("delta_bound", chunk_size=13, **listed))
    ref_exact = _arrays(dpbounds.sweep("epsilon_random_allocation", chunk_size=1, **exact))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        with distributed.get_task_stream(client) as stream:
            got_closed = _arrays(dpbounds.sweep("delta_bound", chunk_size=13, engine="dask", **closed))
            got_listed = _arrays(dpbounds.sweep("delta_bound", chunk_size=13, engine="dask", **listed))
            got_exact = _arrays(dpbounds.sweep("epsilon_random_allocation", chunk_size=1, engine="dask", **exact))
        # the chunks ran on the cluster's two worker processes
        assert {t["worker"] for t in stream.data} == set(client.scheduler_info()["workers"])
    assert not ref_listed["valid"].all()
    for ref, got in ((ref_closed, got_closed), (ref_listed, got_listed), (ref_exact, got_exact)):
        assert ref.keys() == got.keys()
        for k in ref:
            np.testing.assert_array_equal(got[k], ref[k], err_msg=k)
