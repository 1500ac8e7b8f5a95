"""Fingerprint every sweep quantity on a grid of hard points, to check a change is bit-identical.

    PYTHONPATH=src python tools/sweep_identity.py save before.pkl      # on the old tree
    PYTHONPATH=src python tools/sweep_identity.py check before.pkl     # on the new tree

For every quantity of the registry: the in-memory result (each output's bits, ``valid``,
``reason``) of a grid that mixes valid and invalid points, by every evaluation path the grid
can take (Cartesian: the separable kernel where the quantity has one; zipped: the element-wise
path; chunk sizes 1, 7 and the default), and the bytes of its CSV file and the columns of its
Parquet file.
"""
import os
import pickle
import sys
import tempfile
import warnings

import numpy as np

import dpbounds
from dpbounds.sweeps import QUANTITIES

S = [-1.0, 0.05, 0.3, 0.7, 1.0, 1.7, 3.0, 40.0]
GRIDS = {
    "delta_bound": dict(sigma=S + [np.inf], rounds=[2, 3, 10.5, 100, 1e4, 1e6, 2.0**53, 1e300]),
    "rounds_required": dict(sigma=S, delta=[0.0, 1e-12, 1e-5, 1e-3, 0.4, 1.0], epochs=[1, 3]),
    "rounds_closed_form": dict(sigma=S, delta=[0.0, 1e-300, 1e-5, 0.3, 1.0]),
    "min_dataset_size": dict(sigma=S + [1e300], rounds=[0.5, 1, 1e3, 1e300]),
    "tradeoff_clt": dict(a=[-0.1, 0.0, 1e-9, 0.3, 1.0], sigma=S, rounds=[1, 3, 1e3, 1e8]),
    "tradeoff_edgeworth": dict(a=[0.0, 1e-9, 0.3, 1.0], sigma=S, rounds=[1, 3, 1e3, 1e8]),
    "tradeoff_lower_bound": dict(a=[0.0, 0.3, 1.0], sigma=S, rounds=[3, 1e3, 1e8]),
    "gdp_epsilon": dict(delta=[0.0, 1e-10, 1e-5, 0.5, 1.0], mu=[-1.0, 0.0, 1e-3, 0.5, 3.0, 40.0]),
    "gdp_delta": dict(eps=[-1.0, 0.0, 0.5, 5.0, 800.0], mu=[-1.0, 0.0, 1e-3, 0.5, 3.0, 40.0]),
    "gdp_mu_random_allocation": dict(sigma=S, rounds=[1, 2, 100, 1e9], epochs=[1, 4]),
    "gdp_mu_poisson": dict(sigma=S, sample_rate=[0.0, 1e-4, 0.5, 1.0, 1.5], steps=[0, 1, 1e4]),
    "gdp_mu_poisson_drs": dict(sigma=S, sample_rate=[0.0, 1e-4, 0.5, 1.0], steps=[0, 1, 1e4]),
    "compose_delta": dict(delta=[-0.1, 0.0, 1e-6, 0.5, 1.0, 1.5], epochs=[0, 1, 7, 2.5]),
    "per_epoch_delta": dict(delta_total=[-0.1, 0.0, 1e-6, 0.5, 1.0], epochs=[0, 1, 7, 2.5]),
    "rdp_epsilon_poisson": dict(sigma=[-1.0, 0.3, 0.8, 2.0, 30.0], sample_rate=[0.0, 1e-6, 0.01, 0.3, 1.0],
                                steps=[1, 1000, 0.5], delta=[1e-5]),
    "rdp_epsilon_wor": dict(sigma=[-1.0, 0.6, 2.0, 30.0], sample_rate=[0.0, 1e-4, 0.05, 1.0],
                            steps=[1, 1000], delta=[1e-5, 0.5]),
    "epsilon_random_allocation": dict(sigma=[0.2, 1.5], rounds=[20], epochs=[1, 2], delta=[1e-5]),
    "delta_random_allocation": dict(sigma=[0.2, 1.5], rounds=[20], epsilon=[1.0]),
    "epsilon_poisson": dict(sigma=[-1.0, 1.0], sample_rate=[0.05], steps=[20], delta=[1e-5]),
    "delta_poisson": dict(sigma=[1.0], sample_rate=[0.05, 2.0], steps=[20], epsilon=[1.0]),
    "noise_multiplier": dict(target_epsilon=[4.0, -1.0], target_delta=[1e-5], dataset_size=[1000], batch_size=[100],
                             epochs=[2]),
}
OPTIONS = {
    "delta_bound": [{}, {"coefficient": "simplified"}],
    "rounds_required": [{}, {"validity_at": "target"}],
    "tradeoff_clt": [{}, {"truncated": True}],
    "rdp_epsilon_poisson": [{}, {"mode": "compat", "conversion": "classic"}],
    "rdp_epsilon_wor": [{}, {"bound": "theorem9"}],
    "noise_multiplier": [{"accountant": "rdp", "sampling": "poisson"}],
}


def _bits(a):
    a = np.asarray(a)
    if a.dtype == np.float64:
        return a.view(np.uint64).tobytes()
    if a.dtype == object:
        return "\x00".join(map(str, a.ravel().tolist())).encode()
    return a.tobytes()


def _memory(name, axes, opts, **kw):
    ds = dpbounds.sweep(name, progress=False, **axes, **opts, **kw)
    return {k: _bits(ds[k]) for k in sorted(ds.data_vars)}


def _zipped(axes):
    names = list(axes)
    mesh = np.meshgrid(*[np.asarray(axes[n], dtype=float) for n in names], indexing="ij")
    return {n: m.ravel() for n, m in zip(names, mesh)}


def fingerprint():
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in QUANTITIES:
            q = QUANTITIES[name]
            axes = GRIDS[name]
            sizes = (None, 7) if q.kind != "ufunc" else (None, 1, 7)
            for opts in OPTIONS.get(name, [{}]):
                key = f"{name} {sorted(opts.items())}"
                for cs in sizes:
                    out[f"{key} cartesian chunk={cs}"] = _memory(name, axes, opts, chunk_size=cs)
                    out[f"{key} zipped chunk={cs}"] = _memory(name, _zipped(axes), opts, chunk_size=cs, zip=True)
                with tempfile.TemporaryDirectory() as d:
                    csv = os.path.join(d, "g.csv")
                    dpbounds.sweep(name, progress=False, out=csv, **axes, **opts)
                    with open(csv, "rb") as f:
                        out[f"{key} csv"] = f.read()
                    pqf = os.path.join(d, "g.parquet")
                    dpbounds.sweep(name, progress=False, out=pqf, **axes, **opts)
                    import pyarrow.parquet as pq

                    t = pq.read_table(pqf)
                    out[f"{key} parquet"] = ({c: _bits(t[c].to_numpy(zero_copy_only=False)) for c in t.column_names},
                                             t.schema.metadata)
    return out


def main():
    mode, path = sys.argv[1], sys.argv[2]
    got = fingerprint()
    if mode == "save":
        with open(path, "wb") as f:
            pickle.dump(got, f)
        print(f"saved {len(got)} fingerprints to {path}")
        return 0
    with open(path, "rb") as f:
        want = pickle.load(f)
    bad = 0
    for k in want:
        a, b = want[k], got.get(k)
        if k.endswith("parquet") and b is not None:
            # the schema metadata holds the sweep identity, whose dpbounds version may differ
            a, b = a[0], b[0]
        if a != b:
            bad += 1
            detail = ""
            if isinstance(a, dict) and isinstance(b, dict):
                detail = " columns " + ", ".join(c for c in a if a[c] != b.get(c))
            print(f"DIFFERENT: {k}{detail}")
    missing = set(want) ^ set(got)
    print(f"{len(want) - bad} of {len(want)} fingerprints bit-identical; {len(missing)} keys differ in presence")
    return 1 if bad or missing else 0


if __name__ == "__main__":
    sys.exit(main())
