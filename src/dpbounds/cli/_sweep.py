"""``dpbounds sweep``: one quantity over a grid of parameters, to Parquet/CSV or as CSV on stdout."""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any

from dpbounds._errors import DPBoundsError
from dpbounds.cli._numbers import count, real
from dpbounds.cli._options import add_json_flag
from dpbounds.cli._output import EXIT_OK, emit_json, writing

__all__ = ["register"]

_DESCRIPTION = """\
Evaluate QUANTITY over a grid of parameters (dpbounds.sweep; docs: sweep page).  Each axis is a
list 'v1,v2,...', one number, or a generated range 'start:stop:num:lin|log' (integer axes such as
--rounds are rounded to unique integers).  The grid is Cartesian (the first axis given varies
slowest) or, with --zip, the list of points of equally long axes.  Invalid points are kept, with
valid=False and the reason.

With -o the long format (one row per point) is written to a .parquet or .csv file, with a
manifest <out>.sweep.json.  Finished chunks are saved as they come in <out>.partial/, and the
file is written when the sweep is complete; Ctrl-C, SIGTERM and SIGHUP stop it after saving,
--resume continues it (even after a kill).  An existing file that is not this sweep's output is
refused unless --overwrite.  Without -o the same rows are printed as CSV on stdout (--json: a
JSON list of rows).

The grid can also come from a TOML file:  dpbounds sweep grid.toml

  quantity = "delta_bound"
  out = "grid.parquet"            # optional, as the options chunk_size, engine, workers,
  [axes]                          # zip, resume, overwrite, progress
  sigma = "0.5:4:50:lin"          # or [0.5, 1.0] or {start = 0.5, stop = 4, num = 50, scale = "lin"}
  rounds = "1e3:1e9:100:log"
  [options]
  coefficient = "exact"

'dpbounds sweep --list' lists the quantities with their axes and options."""

_RUN_KEYS = ("quantity", "out", "chunk_size", "engine", "workers", "zip", "resume", "overwrite", "progress")
_TABLE_KEYS = ("axes", "options")


class _AxisAction(argparse.Action):
    """Store an axis spec and remember the order the axes were given in (the grid's order)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        order = list(getattr(namespace, "axis_order", None) or [])
        if self.dest not in order:
            order.append(self.dest)
        namespace.axis_order = order
        setattr(namespace, self.dest, values)


def _registry() -> Any:
    from dpbounds.sweeps._quantities import AXIS_HELP, QUANTITIES

    return QUANTITIES, AXIS_HELP


def register(subparsers: Any) -> None:
    quantities, axis_help = _registry()
    p = subparsers.add_parser(
        "sweep", help="a quantity over a grid of parameters, to Parquet/CSV (or a TOML grid file)",
        description=_DESCRIPTION,
        epilog="example:\n  dpbounds sweep delta_bound --sigma 0.5:4:50:lin --rounds 1e3:1e9:100:log -o grid.parquet\n"
               "  dpbounds sweep epsilon_random_allocation --sigma 0.7:3:12:lin --rounds 10:1e4:12:log "
               "--epochs 10 --delta 1e-5 --engine processes -o eps.csv")
    add_json_flag(p)
    p.add_argument("target", nargs="?", metavar="QUANTITY|GRID.toml",
                   help="the quantity (see --list), or a TOML grid file")
    p.add_argument("--list", action="store_true", help="list the quantities with their axes and options, and exit")
    p.add_argument("-o", "--out", default=None, help="output file, .parquet or .csv (default: CSV on stdout)")
    p.add_argument("--zip", action="store_true", default=None, help="the axes are point lists of equal length")
    p.add_argument("--chunk-size", type=count, default=None, help="points per chunk (default: per quantity)")
    p.add_argument("--engine", choices=("local", "processes", "dask"), default=None,
                   help="where chunks are evaluated (default: local)")
    p.add_argument("--workers", type=count, default=None, help="processes of --engine processes (default: CPUs)")
    p.add_argument("--resume", action="store_true", default=None, help="continue an interrupted sweep into -o")
    p.add_argument("--overwrite", action="store_true", default=None,
                   help="replace what -o holds even if it is not this sweep's output (or an unfinished run)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: only on a terminal, for sweeps over a second)")
    names = sorted({a.name for q in quantities.values() for a in q.axes})
    for name in names:
        p.add_argument(f"--{name.replace('_', '-')}", dest=name, action=_AxisAction, default=None, metavar="VALUES",
                       help=f"axis: {axis_help.get(name, name)}")
    options: dict[str, Any] = {}
    for q in quantities.values():
        for o in q.options:
            options.setdefault(o.name, o)
    for name, o in sorted(options.items()):
        flag = f"--{name.replace('_', '-')}"
        if o.choices:
            p.add_argument(flag, dest=f"opt_{name}", choices=o.choices, default=None, help=f"option: {o.help}")
        else:
            p.add_argument(flag, dest=f"opt_{name}", type=real, default=None, metavar="X", help=f"option: {o.help}")
    p.set_defaults(func=handler)


def _list() -> None:
    quantities, _ = _registry()
    for q in quantities.values():
        axes = ", ".join(a.name if a.default is None else f"{a.name}={a.default:g}" for a in q.axes)
        opts = ", ".join(f"{o.name}={o.default}" for o in q.options)
        print(f"{q.name}({axes}{'; ' + opts if opts else ''})")
        print(f"    {q.summary}; columns: {', '.join(q.outputs + q.bool_outputs)}, valid, reason")


def _read_toml(path: str) -> dict[str, Any]:
    try:
        import tomllib as toml  # Python >= 3.11
    except ModuleNotFoundError:
        try:
            import tomli as toml  # type: ignore[no-redef, import-not-found, unused-ignore]
        except ModuleNotFoundError:
            raise DPBoundsError(f"reading {path!r} needs Python >= 3.11 or the tomli package (pip install tomli)") from None
    try:
        with open(path, "rb") as f:
            data: dict[str, Any] = toml.load(f)
    except OSError as exc:
        raise DPBoundsError(f"cannot read {path!r}: {exc.strerror or exc}") from None
    except ValueError as exc:   # tomllib.TOMLDecodeError
        raise DPBoundsError(f"{path}: {exc}") from None
    for key, value in data.items():
        if key in _TABLE_KEYS:
            if not isinstance(value, dict):
                raise DPBoundsError(f"{path}: [{key}] must be a table")
        elif key not in _RUN_KEYS:
            raise DPBoundsError(f"{path}: unknown key {key!r} (known: {', '.join(_RUN_KEYS + _TABLE_KEYS)})")
    if "quantity" not in data:
        raise DPBoundsError(f"{path}: the key 'quantity' is missing")
    axes = {}
    for name, spec in data.get("axes", {}).items():
        if isinstance(spec, dict):
            extra = set(spec) - {"start", "stop", "num", "scale"}
            if extra or not {"start", "stop", "num"} <= set(spec):
                raise DPBoundsError(f"{path}: axes.{name} needs the keys start, stop, num and optionally scale")
            spec = (spec["start"], spec["stop"], spec["num"], spec.get("scale", "lin"))
        axes[name] = spec
    data["axes"] = axes
    return data


def handler(args: argparse.Namespace) -> int:
    from dpbounds.sweeps._sweep import run_sweep

    quantities, _ = _registry()
    if args.list:
        _list()
        return EXIT_OK
    if args.target is None:
        raise DPBoundsError("give a QUANTITY or a GRID.toml file (dpbounds sweep --list shows the quantities)")
    option_names = sorted({o.name for q in quantities.values() for o in q.options})
    cli_axes = list(getattr(args, "axis_order", None) or [])
    cli_options = {n: getattr(args, f"opt_{n}") for n in option_names if getattr(args, f"opt_{n}") is not None}
    run: dict[str, Any] = {}
    if args.target.endswith(".toml") or Path(args.target).is_file():
        if cli_axes or cli_options:
            flags = ", ".join(f"--{n.replace('_', '-')}" for n in cli_axes + list(cli_options))
            raise DPBoundsError(f"{flags}: with a grid file, give the axes and options in the file")
        data = _read_toml(args.target)
        quantity = data["quantity"]
        axes: dict[str, Any] = dict(data["axes"])
        axes.update(data.get("options", {}))
        run = {k: data[k] for k in _RUN_KEYS[1:] if k in data}
    else:
        quantity = args.target
        if quantity not in quantities:
            raise DPBoundsError(f"unknown quantity {quantity!r} (dpbounds sweep --list shows them)")
        q = quantities[quantity]
        for n in cli_axes:
            if n not in q.axis_names:
                raise DPBoundsError(f"--{n.replace('_', '-')}: {quantity} has no axis {n!r} "
                                    f"(its axes: {', '.join(q.axis_names)})")
        for n in cli_options:
            if n not in {o.name for o in q.options}:
                raise DPBoundsError(f"--{n.replace('_', '-')}: not an option of {quantity}")
        axes = {n: getattr(args, n) for n in cli_axes}
        axes.update(cli_options)
    # the command line's run options override the file's
    for key, value in (("out", args.out), ("chunk_size", args.chunk_size), ("engine", args.engine),
                       ("workers", args.workers), ("zip", args.zip), ("resume", args.resume),
                       ("overwrite", args.overwrite), ("progress", args.progress)):
        if value is not None:
            run[key] = value
    out = run.pop("out", None)
    zipped = bool(run.pop("zip", False))
    # a warning is one "dpbounds: warning: ..." line on stderr, as the other commands print them
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if out is None:
                return _to_stdout(quantity, axes, zipped, run, getattr(args, "json", False))
            with writing(str(out), "-o"):
                path, tally = run_sweep(quantity, out=out, zipped=zipped, axes=axes, **run)
        finally:
            _print_warnings(caught)
    skipped = f" ({tally.skipped} resumed from the file)" if tally.skipped else ""
    print(f"wrote {tally.points + tally.skipped} points to {path}{skipped}; "
          f"{tally.invalid} of the {tally.points} computed now are invalid (see the valid and reason columns)")
    return EXIT_OK


def _print_warnings(caught: list[warnings.WarningMessage]) -> None:
    seen: set[str] = set()
    for w in caught:
        text = str(w.message)
        if text not in seen:
            seen.add(text)
            sys.stderr.write(f"dpbounds: warning: {text}\n")


def _to_stdout(quantity: str, axes: dict[str, Any], zipped: bool, run: dict[str, Any], as_json: bool) -> int:
    """The rows as CSV on stdout, chunk by chunk (or, with --json, one JSON list)."""
    from dpbounds.sweeps._engines import run_engine
    from dpbounds.sweeps._sweep import Tally, count_chunk, plan_sweep, warn_imprecise
    from dpbounds.sweeps._writers import CsvStreamWriter, chunk_columns, columns

    if run.pop("resume", False):
        raise DPBoundsError("--resume needs -o (a .parquet or .csv file to continue)")
    if run.pop("overwrite", False):
        raise DPBoundsError("--overwrite needs -o (the file to replace)")
    plan = plan_sweep(quantity, axes, chunk_size=run.get("chunk_size"), zipped=zipped)
    chunks = run_engine(run.get("engine", "local"), plan, 0, run.get("workers"))
    tally = Tally()
    if not as_json:
        writer = CsvStreamWriter(plan, sys.stdout)
        try:
            for res in chunks:
                writer.write(res)
                count_chunk(tally, res)
        finally:
            writer.close()
        warn_imprecise(plan.quantity, tally)
        return EXIT_OK
    names = columns(plan)
    table = plan.quantity.reason_table()
    rows: list[dict[str, Any]] = []
    for res in chunks:
        cols = chunk_columns(plan, res)
        cols["reason"] = res.reason_strings(table)
        lists = [cols[c].tolist() for c in names]
        rows.extend(dict(zip(names, r)) for r in zip(*lists))
        count_chunk(tally, res)
    emit_json(rows)
    warn_imprecise(plan.quantity, tally)
    return EXIT_OK
