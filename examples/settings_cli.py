"""The library examples' command line: the options every example shares (budget, seeds, output, rating),
and options derived from an example's settings dataclass, so the defaults live in one place.

Each field becomes ``--field-name`` (a tuple of ints takes several values: ``--net-arch 64 64``),
with its help text and bounds from the field's metadata::

    @dataclass(frozen=True)
    class Settings:
        batch_size: int = field(default=256, metadata=option("minibatch size", 2, 1_000_000))

Every value is checked on the way in; a bad one is a one-line argparse error naming the option.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from pathlib import Path
from typing import Any, TypeVar

from baselines.cli.options import count

Settings = TypeVar("Settings")

MAX_STEPS = 100_000_000
MAX_EVAL_HANDS = 1_000_000
SEED_LIMIT = 2**32  # the libraries seed NumPy's legacy (global) generator, which takes 32-bit seeds


def add_run_options(parser: argparse.ArgumentParser, default_steps: int, default_out: Path) -> None:
    """``--steps``, ``--seed``, ``--rating-seed``, ``--out`` and ``--eval-hands``."""
    parser.add_argument("--steps", type=int, default=default_steps,
                        help=f"env steps of training (the learner's decisions; default {default_steps:,})")
    parser.add_argument("--seed", type=int, default=0, help="seeds training and the rating's deals (default 0)")
    parser.add_argument("--rating-seed", type=int, default=None,
                        help="seeds the rating's deals instead (default: --seed), to compare training seeds "
                             "on the same deals")
    parser.add_argument("--out", type=Path, default=default_out,
                        help=f"where to save the trained model (default {default_out})")
    parser.add_argument("--eval-hands", type=int, default=2000,
                        help="hands of each rating table (default 2000: 500 deals x 4 seat rotations)")


def check_run_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Check the shared options (a bad one exits with the parser's one-line error); fill in ``rating_seed``."""
    try:
        count("--steps", args.steps, 1, MAX_STEPS)
        count("--seed", args.seed, 0, SEED_LIMIT - 1)
        if args.rating_seed is None:
            args.rating_seed = args.seed
        count("--rating-seed", args.rating_seed, 0, SEED_LIMIT - 1)
        count("--eval-hands", args.eval_hands, 4, MAX_EVAL_HANDS)
    except ValueError as error:
        parser.error(str(error))


def option(help_text: str, minimum: float, maximum: float) -> dict[str, Any]:
    """A field's metadata: what it means and the values it accepts (inclusive bounds)."""
    return {"help": help_text, "minimum": minimum, "maximum": maximum}


def add_options(parser: argparse.ArgumentParser, settings: type[Any]) -> None:
    """One option per field of the dataclass `settings`, defaulting to the field's default."""
    for field in dataclasses.fields(settings):
        default, meta = field.default, field.metadata
        flag = "--" + field.name.replace("_", "-")
        bounds = f"{_shown(meta['minimum'])} to {_shown(meta['maximum'])}"
        if isinstance(default, tuple):
            shown = " ".join(map(str, default))
            parser.add_argument(flag, type=int, nargs="+", default=default, metavar="N",
                                help=f"{meta['help']} (each {bounds}; default {shown})")
        else:
            parser.add_argument(flag, type=type(default), default=default,
                                help=f"{meta['help']} ({bounds}; default {_shown(default)})")


def read_options(parser: argparse.ArgumentParser, args: argparse.Namespace, settings: type[Settings]) -> Settings:
    """The settings the options ask for; a value out of bounds exits with the parser's one-line error."""
    values = {}
    for field in dataclasses.fields(settings):  # type: ignore[arg-type]
        value, meta = getattr(args, field.name), field.metadata
        flag = "--" + field.name.replace("_", "-")
        try:
            if isinstance(field.default, tuple):
                value = tuple(count(flag, item, int(meta["minimum"]), int(meta["maximum"])) for item in value)
            elif isinstance(field.default, int):
                value = count(flag, value, int(meta["minimum"]), int(meta["maximum"]))
            elif not (math.isfinite(value) and meta["minimum"] <= value <= meta["maximum"]):
                bounds = f"{_shown(meta['minimum'])} to {_shown(meta['maximum'])}"
                raise ValueError(f"{flag} must be a number from {bounds}, got {value!r}")
        except ValueError as error:
            parser.error(str(error))
        values[field.name] = value
    return settings(**values)


def _shown(number: float) -> str:
    return f"{number:,}" if isinstance(number, int) else f"{number:g}"
