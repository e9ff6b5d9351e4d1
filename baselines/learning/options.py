"""Command-line options from a dataclass's fields, and the checks learners share.

The one home of "a dataclass's fields as command-line options": a field carries an
:class:`Option` in its metadata (the flag, a help line, how to check a value, how to read it
from text and write it back), :func:`add_dataclass_options` declares one option per such
field and :func:`read_dataclass_options` reads them back, checked. ``dominoes train LEARNER``
derives its options from the learner's configuration (:class:`~baselines.learning.config.LearnerConfig`)
this way, and the library examples from their settings (:func:`bounded` is the short form
of a numeric field with inclusive bounds). The checks use :mod:`dominoes_env.core.validation`
and bound every value, so that nothing typed on the command line or read back from a file
can ask for an absurd allocation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from dominoes_env.core import validation

SELF_PLAY = "self"  #: the curriculum's name for self-play: the learner in every seat
MAX_HANDS = 10**9  #: hands of one run (and between evaluations)
MAX_EVAL_HANDS = 10**7  #: hands of one evaluation, per opponent
MAX_TABLES = 4096  #: most tables side by side
MAX_STAGES = 64  #: most curriculum stages
MAX_SHARE = 1e9  #: largest curriculum share (shares are relative)
MAX_EVAL_OPPONENTS = 16


@dataclass(frozen=True)
class Option:
    """How one field is written on the command line.

    Attributes:
        flag: the option, e.g. ``--players``.
        help: one line for ``--help`` (the default is appended).
        check: ``check(name, value) -> value``: validates one value, naming it `name`
            (the field name, or the flag on the command line).
        parse: text -> value; returns the text unchanged where it cannot be read, so that
            `check` refuses it with the usual message.
        show: value -> text, to print the default.
    """

    flag: str
    help: str
    check: Callable[[str, Any], Any]
    parse: Callable[[Any], Any]
    show: Callable[[Any], str] = str
    switch: bool = False  #: a flag without a value (``--boneyard``): given means True
    many: bool = False  #: takes several values (``--net-arch 64 64``); `parse` gets the list of texts


def option(flag: str, help: str, check: Callable[[str, Any], Any], parse: Callable[[Any], Any],
           show: Callable[[Any], str] = str, switch: bool = False, many: bool = False) -> dict[str, Option]:
    """The metadata of a configuration field: ``field(default=..., metadata=option(...))``."""
    return {"option": Option(flag, help, check, parse, show, switch, many)}


def bounded(help: str, minimum: float, maximum: float, many: bool = False, flag: str = "") -> dict[str, Option]:
    """A numeric field's metadata with inclusive bounds: an int (int bounds), a float, or with
    `many` a tuple of ints (``--net-arch 64 64``); the flag defaults to the field's name
    (``--batch-size`` for ``batch_size``)."""
    def check(name: str, value: Any) -> Any:
        if isinstance(value, tuple | list):
            if not 1 <= len(value) <= MAX_VALUES:
                raise ValueError(f"{name} takes 1 to {MAX_VALUES} values, got {len(value)}")
            return tuple(validation.integer(f"{name} (each)", item, int(minimum), int(maximum)) for item in value)
        if isinstance(minimum, int) and isinstance(maximum, int):
            return validation.integer(name, value, minimum, maximum)
        return validation.real(name, value, minimum, maximum)

    def parse(text: Any) -> Any:
        return tuple(number(item) for item in text) if isinstance(text, list) else number(text)

    def show(value: Any) -> str:
        if isinstance(value, tuple):
            return " ".join(map(str, value))
        return str(value) if isinstance(value, int) else f"{value:g}"

    bounds = f"{minimum:,}" if isinstance(minimum, int) else f"{minimum:g}"
    bounds += " to " + (f"{maximum:,}" if isinstance(maximum, int) else f"{maximum:g}")
    return {"option": Option(flag, f"{help} ({'each ' if many else ''}{bounds})", check, parse, show, many=many)}


MAX_VALUES = 64  #: most values one option takes


def _flag(name: str, option: Option) -> str:
    return option.flag or "--" + name.replace("_", "-")


def add_dataclass_options(parser: Any, settings: type[Any], only: Collection[str] | None = None) -> None:
    """One option per field of the dataclass `settings` whose metadata holds an :class:`Option`
    (those named in `only`, where given: a command that borrows another's fields); values are read
    as text and checked by :func:`read_dataclass_options`, so a bad one is one error line that
    names the option."""
    for spec in dataclasses.fields(settings):
        if "option" not in spec.metadata or (only is not None and spec.name not in only):
            continue
        option = spec.metadata["option"]
        flag, default = _flag(spec.name, option), spec.default
        if option.switch:
            parser.add_argument(flag, dest=spec.name, default=None, action="store_const", const="true",
                                help=option.help)
            continue
        parser.add_argument(flag, dest=spec.name, default=None, nargs="+" if option.many else None,
                            metavar=flag.lstrip("-").upper().replace("-", "_"),
                            help=f"{option.help} (default {option.show(default)})")


def read_dataclass_options(args: Any, settings: type[Any], only: Collection[str] | None = None) -> dict[str, Any]:
    """The fields the options gave (those not given are left out: they keep their defaults), each
    read and checked.

    Raises:
        ValueError: a value out of bounds, named by its option.
    """
    values = {}
    for spec in dataclasses.fields(settings):
        wanted = "option" in spec.metadata and (only is None or spec.name in only)
        text = getattr(args, spec.name, None) if wanted else None
        if text is not None:
            option = spec.metadata["option"]
            values[spec.name] = option.check(_flag(spec.name, option), option.parse(text))
    return values


# --------------------------------------------------------------------------- reading text
def switch(text: str) -> Any:
    return {"true": True, "false": False}.get(text.strip().lower(), text)


def number(text: str) -> Any:
    """An int or a float if the text writes one in ASCII, else the text (refused by the field's check)."""
    value = validation.read_number(text)
    return text if value is None else value


def names(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def parse_curriculum(text: str) -> tuple[tuple[str, float], ...]:
    """'random:0.1,self:0.9' -> (("random", 0.1), ("self", 0.9)); a stage without a share gets 1.

    Raises:
        ValueError: a stage that is not OPPONENT:SHARE.
    """
    stages = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, share = item.partition(":")
        try:
            stages.append((name.strip(), float(share) if share else 1.0))
        except ValueError:
            raise ValueError(f"curriculum stage {item!r} is not OPPONENT:SHARE (e.g. 'double:0.2')") from None
    return tuple(stages)


def show_curriculum(value: tuple[tuple[str, float], ...]) -> str:
    return ",".join(f"{name}:{share:g}" for name, share in value)


def show_names(value: tuple[str, ...]) -> str:
    return ",".join(value)


# --------------------------------------------------------------------------- the checks
def flag(name: str, value: Any) -> bool:
    return validation.flag(name, value)


def probability(name: str, value: Any) -> float:
    return validation.real(name, value, 0.0, 1.0)


def step_size(name: str, value: Any) -> float:
    return validation.real(name, value, 0.0, 1.0, above_minimum=True)


def half_life(name: str, value: Any) -> int:
    return validation.integer(name, value, 1, MAX_HANDS)


def hands(name: str, value: Any) -> int:
    return validation.integer(name, value, 0, MAX_HANDS)


def tables(name: str, value: Any) -> int:
    return validation.integer(name, value, 1, MAX_TABLES)


def seed(name: str, value: Any) -> int:
    return validation.integer(name, value, 0, validation.SEED_LIMIT - 1)


def eval_hands(name: str, value: Any) -> int:
    return validation.integer(name, value, 1, MAX_EVAL_HANDS)


def opponent(name: str, value: Any) -> str:
    """A policy name, or names joined by '+' (checked against the registry by :func:`check_opponents`)."""
    if not isinstance(value, str) or not all(part.strip() for part in value.split("+")):
        raise ValueError(f"{name} must name a policy (or policies joined by '+'), got {value!r}")
    return value


def curriculum(name: str, value: Any) -> tuple[tuple[str, float], ...]:
    if not isinstance(value, (tuple, list)) or not 1 <= len(value) <= MAX_STAGES:
        raise ValueError(f"{name} must have 1 to {MAX_STAGES} stages, got {value!r}")
    stages = []
    for stage in value:
        if not isinstance(stage, (tuple, list)) or len(stage) != 2:
            raise ValueError(f"{name} stages must be (opponent, share) pairs, got {stage!r}")
        who = opponent(f"{name} opponent", stage[0])
        stages.append((who, validation.real(f"{name} share of {who!r}", stage[1], 0.0, MAX_SHARE)))
    if sum(share for _, share in stages) <= 0:
        raise ValueError(f"{name} shares must add up to more than 0, got {value!r}")
    return tuple(stages)


def eval_opponents(name: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, (tuple, list)) or len(value) > MAX_EVAL_OPPONENTS:
        raise ValueError(f"{name} must list at most {MAX_EVAL_OPPONENTS} opponents, got {value!r}")
    return tuple(opponent(f"{name} entry", who) for who in value)


def check_opponents(named: set[str], special_stages: tuple[str, ...] = (SELF_PLAY,), every_known: bool = False) -> None:
    """Refuse a run that plays against a policy that is not registered (`named` holds the
    special stages, such as "self", only where they are misused: in a combination or an
    evaluation).

    A file's configuration is checked with `every_known`: the names this package knows count
    even where their extra is not installed, so a weights file stays readable in an
    installation that lacks a policy it was trained against.

    Raises:
        ValueError: naming the unknown opponents and the known ones.
    """
    from baselines.policies.registry import known_policy_names, policy_names

    known = set(known_policy_names() if every_known else policy_names())
    misused = sorted(named & set(special_stages))
    if misused:
        raise ValueError(f"{', '.join(map(repr, misused))} can only be a whole curriculum stage, not part of a "
                         f"'+' combination or an evaluation opponent")
    unknown = named - known
    if unknown:
        raise ValueError(f"unknown opponent(s) {sorted(unknown)}; known: {sorted(known)}, and as a whole curriculum "
                         f"stage {', '.join(map(repr, special_stages))}")
