"""Options that several commands share, declared once so their names, help and defaults agree.

One vocabulary: the noise multiplier is ``--sigma`` on every command (``--noise-multiplier``,
the accountants' and Opacus' word, is accepted as its alias); counts are ``--rounds`` (rounds
per epoch M), ``--epochs``, ``--steps``, ``--dataset-size``, ``--batch-size``; the target
``--delta``.  Messages name the option as the user typed it: :class:`RecordingStore` notes
which option string set each value, and :func:`in_flags` rewrites the API's parameter names
(``noise_multiplier must be in [0.3, 20.0]``) into those options (``--sigma must be ...``).
"""
from __future__ import annotations

import argparse
import re
from typing import Any, Mapping, Sequence

__all__ = ["COEFFICIENTS", "SIGMA_FLAGS", "RecordingStore", "add_coefficient", "add_json_flag", "add_sigma",
           "flag", "in_flags"]

#: Berry-Esseen coefficient of Theorem 3.1; the first one is the command line's default.
COEFFICIENTS = ("exact", "simplified")

#: The noise multiplier's option and its alias.
SIGMA_FLAGS = ("--sigma", "--noise-multiplier")

#: The API's parameter names -> the command-line destination that carries the same value.
API_NAMES = {
    "noise_multiplier": "sigma", "sigma": "sigma",
    "rounds_per_epoch": "rounds", "rounds": "rounds",
    "dataset_size": "dataset_size", "batch_size": "batch_size",
    "epochs": "epochs", "steps": "steps",
    "delta": "delta", "target_delta": "delta", "target_epsilon": "target_epsilon",
    "epsilon": "epsilon", "eps": "eps", "mu": "mu", "a": "a",
    "tolerance": "tolerance", "rtol": "rtol", "clip_norm": "clip_norm", "noise_ratio": "noise_ratio",
    "points": "points",
}

_TYPED = "_typed_flags"


class RecordingStore(argparse._StoreAction):
    """argparse's ``store`` that also notes which option string the user typed (an alias or an
    abbreviation resolves to its full option string)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        super().__call__(parser, namespace, values, option_string)
        if option_string is not None:
            typed = dict(getattr(namespace, _TYPED, {}))
            typed[self.dest] = option_string
            setattr(namespace, _TYPED, typed)


def flag(args: argparse.Namespace, dest: str) -> str:
    """The option that carries ``dest`` as the user typed it (its canonical name if not typed)."""
    typed: Mapping[str, str] = getattr(args, _TYPED, {})
    return typed.get(dest, "--" + dest.replace("_", "-"))


def in_flags(message: str, args: argparse.Namespace, extra: Mapping[str, str] | None = None) -> str:
    """``message`` with the API parameter names it starts with or quotes as ``name=`` replaced by
    the options that carry them on this command line (only the options this command has).

    ``extra`` maps further API names to the text to use (``rounds_per_epoch`` ->
    ``M = --dataset-size // --batch-size`` where M is derived, not an option).
    """
    names: dict[str, str] = {}
    for api, dest in API_NAMES.items():
        if hasattr(args, dest):
            names[api] = flag(args, dest)
    names.update(extra or {})
    if not names:
        return message
    alternatives = "|".join(sorted((re.escape(n) for n in names), key=len, reverse=True))
    # a name that starts the message or a clause after "; " as its subject ("sigma must be ...",
    # "sigma: a grid of ..."), or that is quoted with its value ("rounds_per_epoch=5 contradicts"):
    # never a word of the prose ("axis sigma: a log axis ..." keeps its "a")
    lead = re.compile(rf"(^|; )({alternatives})(?= must\b| is\b|:|,|$)")
    keyed = re.compile(rf"(?<![\w-])({alternatives})=")

    def lead_sub(m: re.Match[str]) -> str:
        return m.group(1) + names[m.group(2)]

    def keyed_sub(m: re.Match[str]) -> str:
        replaced = names[m.group(1)]
        return replaced + (" " if replaced.startswith("--") else " = ")

    return lead.sub(lead_sub, keyed.sub(keyed_sub, message))


def add_sigma(p: argparse.ArgumentParser, help: str, *, required: bool = True, default: Any = None,
              **kwargs: Any) -> None:
    """``--sigma`` (alias ``--noise-multiplier``): the noise multiplier, noise std / clipping norm."""
    from dpbounds.cli._numbers import real

    kwargs.setdefault("type", real)
    kwargs.setdefault("metavar", "SIGMA")
    p.add_argument(*SIGMA_FLAGS, dest="sigma", action=RecordingStore, required=required, default=default,
                   help=help, **kwargs)


def add_json_flag(p: argparse.ArgumentParser) -> None:
    """Accept ``--json`` after the command too (``dpbounds --json COMMAND`` also works)."""
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                   help="machine-readable JSON output (non-finite numbers as null)")


def add_coefficient(p: argparse.ArgumentParser) -> None:
    """``--coefficient``: which Berry-Esseen coefficient Theorem 3.1 uses."""
    p.add_argument("--coefficient", choices=COEFFICIENTS, default=COEFFICIENTS[0],
                   help="Berry-Esseen coefficient of Theorem 3.1: 'exact' uses the exact third absolute "
                        "moment (smaller and equally valid); 'simplified' is the paper's statement, "
                        "coefficient (w^3 + 4)/(w - 1)^2")


def typed_in_argv(option_strings: Sequence[str], argv: Sequence[str]) -> str | None:
    """Which of ``option_strings`` (one option's aliases) ``argv`` used, abbreviations included."""
    for token in argv:
        if not token.startswith("--"):
            continue
        word = token.split("=", 1)[0]
        hits = [o for o in option_strings if o == word] or [o for o in option_strings if o.startswith(word)]
        if len(hits) == 1:
            return hits[0]
    return None
