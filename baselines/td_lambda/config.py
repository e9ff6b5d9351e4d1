"""Everything that defines a TD(lambda) learner and its training run, declared once.

:class:`TDLambdaConfig` is the one source of the defaults, the bounds and the command line:
every field carries its ``dominoes train td-lambda`` option in its metadata (the flag, a
help line, how to read it from text and write it back), so ``baselines/train.py`` derives
its options from the dataclass instead of declaring them again. Every field is checked on
construction with :mod:`dominoes_env.core.validation`, bounded so that no value (typed on
the command line or read back from a checkpoint) can ask for an absurd allocation.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np

from baselines.td_lambda.architecture import Architecture
from baselines.td_lambda.features import VARIANTS, input_size
from dominoes_env.core import validation
from dominoes_env.core.config import (
    FIRST_PLAYERS,
    MAX_HIGHEST,
    MAX_PLAYERS,
    MIN_HIGHEST,
    MIN_PLAYERS,
    GameConfig,
    make_config,
)

SELF_PLAY = "self"
MAX_HANDS = 10**9  #: hands of one run (and between evaluations)
MAX_EVAL_HANDS = 10**7  #: hands of one evaluation, per opponent
MAX_WIDTH = 4096  #: widest hidden block
MAX_LAYERS = 8  #: most hidden blocks
MAX_TABLES = 4096  #: most tables side by side
MAX_STAGES = 64  #: most curriculum stages
MAX_SHARE = 1e9  #: largest curriculum share (shares are relative)
MAX_EVAL_OPPONENTS = 16
#: The eligibility traces hold one float32 per weight for every learner at every table.
MAX_TRACE_BYTES = 2**31


# --------------------------------------------------------------------------- how a field is given
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
    parse: Callable[[str], Any]
    show: Callable[[Any], str] = str
    switch: bool = False  #: a flag without a value (``--boneyard``): given means True


def _option(flag: str, help: str, check: Callable[[str, Any], Any], parse: Callable[[str], Any],
            show: Callable[[Any], str] = str, switch: bool = False) -> dict[str, Option]:
    return {"option": Option(flag, help, check, parse, show, switch)}


def _switch(text: str) -> Any:
    return {"true": True, "false": False}.get(text.strip().lower(), text)


def _number(text: str) -> Any:
    """An int or a float if the text is one, else the text (refused by the field's check)."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _optional_number(text: str) -> Any:
    return None if text.strip().lower() in ("", "none") else _number(text)


def _widths(text: str) -> tuple[Any, ...]:
    return tuple(_number(part.strip()) for part in text.split(","))


def _names(text: str) -> tuple[str, ...]:
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


def _show_optional(value: Any) -> str:
    return "alpha / players" if value is None else str(value)


def _show_widths(value: tuple[int, ...]) -> str:
    return ",".join(map(str, value))


def _show_curriculum(value: tuple[tuple[str, float], ...]) -> str:
    return ",".join(f"{name}:{share:g}" for name, share in value)


def _show_names(value: tuple[str, ...]) -> str:
    return ",".join(value)


# --------------------------------------------------------------------------- the checks
def _players(name: str, value: Any) -> int:
    return validation.integer(name, value, MIN_PLAYERS, MAX_PLAYERS, "players at the table")


def _highest(name: str, value: Any) -> int:
    return validation.integer(name, value, MIN_HIGHEST, MAX_HIGHEST,
                              f"the double-{MIN_HIGHEST} to double-{MAX_HIGHEST} sets")


def _flag(name: str, value: Any) -> bool:
    return validation.flag(name, value)


def _first_player(name: str, value: Any) -> str:
    return validation.choice(name, value, FIRST_PLAYERS)


def _variant(name: str, value: Any) -> str:
    return validation.choice(name, value, VARIANTS)


def _hidden_sizes(name: str, value: Any) -> tuple[int, ...]:
    if not isinstance(value, (tuple, list)) or not 1 <= len(value) <= MAX_LAYERS:
        raise ValueError(f"{name} must list 1 to {MAX_LAYERS} hidden widths, got {value!r}")
    return tuple(validation.integer(f"{name} (each width)", width, 1, MAX_WIDTH) for width in value)


def _probability(name: str, value: Any) -> float:
    return validation.real(name, value, 0.0, 1.0)


def _step_size(name: str, value: Any) -> float:
    return validation.real(name, value, 0.0, 1.0, above_minimum=True)


def _optional_step_size(name: str, value: Any) -> float | None:
    return None if value is None else _step_size(name, value)


def _hands(name: str, value: Any) -> int:
    return validation.integer(name, value, 0, MAX_HANDS)


def _tables(name: str, value: Any) -> int:
    return validation.integer(name, value, 1, MAX_TABLES)


def _seed(name: str, value: Any) -> int:
    return validation.integer(name, value, 0, validation.SEED_LIMIT - 1)


def _eval_hands(name: str, value: Any) -> int:
    return validation.integer(name, value, 1, MAX_EVAL_HANDS)


def _opponent(name: str, value: Any) -> str:
    """A policy name, or names joined by '+' (checked against the registry by :func:`check_opponents`)."""
    if not isinstance(value, str) or not all(part.strip() for part in value.split("+")):
        raise ValueError(f"{name} must name a policy (or policies joined by '+'), got {value!r}")
    return value


def _curriculum(name: str, value: Any) -> tuple[tuple[str, float], ...]:
    if not isinstance(value, (tuple, list)) or not 1 <= len(value) <= MAX_STAGES:
        raise ValueError(f"{name} must have 1 to {MAX_STAGES} stages, got {value!r}")
    stages = []
    for stage in value:
        if not isinstance(stage, (tuple, list)) or len(stage) != 2:
            raise ValueError(f"{name} stages must be (opponent, share) pairs, got {stage!r}")
        opponent = _opponent(f"{name} opponent", stage[0])
        stages.append((opponent, validation.real(f"{name} share of {opponent!r}", stage[1], 0.0, MAX_SHARE)))
    if sum(share for _, share in stages) <= 0:
        raise ValueError(f"{name} shares must add up to more than 0, got {value!r}")
    return tuple(stages)


def _eval_opponents(name: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, (tuple, list)) or len(value) > MAX_EVAL_OPPONENTS:
        raise ValueError(f"{name} must list at most {MAX_EVAL_OPPONENTS} opponents, got {value!r}")
    return tuple(_opponent(f"{name} entry", opponent) for opponent in value)


# --------------------------------------------------------------------------- the configuration
@dataclass(frozen=True)
class TDLambdaConfig:
    """Everything that defines a learner and its training run (stored in every checkpoint).

    Raises:
        ValueError: on construction, for any value out of bounds (the message names the
            field, the value and what is allowed).
    """

    num_players: int = field(default=4, metadata=_option(
        "--players", f"number of players ({MIN_PLAYERS}-{MAX_PLAYERS})", _players, _number))
    """Seats at the table (2-8)."""
    highest_double: int = field(default=9, metadata=_option(
        "--highest", f"highest pip value N of the double-N set ({MIN_HIGHEST}-{MAX_HIGHEST})", _highest, _number))
    """N of the double-N set (6-18)."""
    boneyard: bool = field(default=False, metadata=_option(
        "--boneyard", "the boneyard table rule", _flag, _switch, switch=True))
    """The boneyard table rule (``make_config(..., boneyard=True)``): the learner plays that game."""
    cover_doubles: bool = field(default=False, metadata=_option(
        "--cover-doubles", "the cover-doubles table rule", _flag, _switch, switch=True))
    """The cover-doubles table rule (``make_config(..., cover_doubles=True)``)."""
    first_player: str = field(default="engine_holder", metadata=_option(
        "--first-player", f"who moves first: {' or '.join(FIRST_PLAYERS)}", _first_player, str.strip))
    """Who moves first: the engine's holder (the rule book) or the player after it."""
    variant: str = field(default="basic", metadata=_option(
        "--variant", "input features: basic, or line (basic + best-chain features)", _variant, str.strip))
    """Input features of V: "basic" (the reference's basic input) or "line" (basic + best-chain features)."""
    hidden_sizes: tuple[int, ...] = field(default=(128, 64), metadata=_option(
        "--hidden", f"hidden layer widths, comma-separated (1-{MAX_LAYERS} layers of 1-{MAX_WIDTH})",
        _hidden_sizes, _widths, _show_widths))
    """Widths of the hidden blocks (Linear -> ReLU -> LayerNorm); the reference used (1000, 500, 500).
    At most 8 blocks of at most 4096."""
    td_lambda: float = field(default=0.5, metadata=_option(
        "--lambda", "trace decay lambda, in [0, 1]", _probability, _number))
    """Trace decay lambda in [0, 1]."""
    alpha: float = field(default=3e-5, metadata=_option(
        "--alpha", "step size, in (0, 1]", _step_size, _number))
    """Step size of theta <- theta + alpha * delta * z, in (0, 1]."""
    self_play_alpha: float | None = field(default=None, metadata=_option(
        "--self-play-alpha", "step size in self-play stages, in (0, 1]", _optional_step_size, _optional_number,
        _show_optional))
    """Step size in self-play stages; None: alpha / num_players. Every seat of a self-play table
    learns, so a hand brings n times the updates; at the full alpha self-play diverged in our
    runs (line variant: alpha 3e-5 with 64 tables diverged within 1,000 hands, 1e-5 did not)."""
    epsilon: float = field(default=0.0, metadata=_option(
        "--epsilon", "random-move probability while learning, in [0, 1]", _probability, _number))
    """Probability of a uniformly random legal move while learning (0: purely greedy)."""
    hands: int = field(default=20_000, metadata=_option(
        "--hands", f"hands to learn from (0-{MAX_HANDS:,})", _hands, _number))
    """Hands to learn from, over all curriculum stages (at most 10**9)."""
    curriculum: tuple[tuple[str, float], ...] = field(
        default=(("random", 0.1), ("double", 0.2), ("persistent_line", 0.3), (SELF_PLAY, 0.4)),
        metadata=_option("--curriculum", "stages in order as OPPONENT:SHARE of --hands, comma-separated; "
                         "'self' is self-play, 'a+b' alternates opponent kinds over the tables",
                         _curriculum, parse_curriculum, _show_curriculum))
    """Stages in order: (opponents, share of `hands`). Opponents: a policy name (copies in every
    other seat), "self" for self-play, or names joined by "+" ("double+persistent_line"):
    table i of the batch then plays the i-th name in turn. Shares are finite, >= 0, and add
    up to more than 0."""
    parallel_hands: int = field(default=64, metadata=_option(
        "--parallel-hands", f"tables played side by side (1-{MAX_TABLES})", _tables, _number))
    """Tables played side by side; their forward passes and updates are batched. Every learner's
    update alpha * delta * z is applied, so one round moves theta by up to parallel_hands
    updates at once: too many tables for a given alpha diverges (128 did at alpha 3e-5)."""
    seed: int = field(default=0, metadata=_option(
        "--seed", "seed of the whole run", _seed, _number))
    """Seeds the initial weights, the deals, the opponents and the exploration."""
    eval_every: int = field(default=5_000, metadata=_option(
        "--eval-every", "hands between evaluations (0: only at the end)", _hands, _number))
    """Hands of learning between evaluations (0: evaluate only at the end)."""
    eval_hands: int = field(default=400, metadata=_option(
        "--eval-hands", "hands per evaluation and opponent (at least --players)", _eval_hands, _number))
    """Hands per evaluation and opponent, at least num_players (the harness rounds up to whole
    seat rotations of its deals)."""
    eval_opponents: tuple[str, ...] = field(default=("random", "double", "persistent_line"), metadata=_option(
        "--eval-opponents", "fixed evaluation opponents, comma-separated", _eval_opponents, _names, _show_names))
    """Fixed opponents of the periodic evaluation (copies in every other seat, seats rotated by
    the shared harness, :func:`baselines.evaluate.evaluate`)."""

    def __post_init__(self) -> None:
        for spec in fields(self):
            checked = spec.metadata["option"].check(spec.name, getattr(self, spec.name))
            object.__setattr__(self, spec.name, checked)  # normalised: np.int64(4) -> 4, lists -> tuples
        _ = self.game  # the set must deal every seat a tile
        if self.eval_hands < self.num_players:
            raise ValueError(f"eval_hands must be at least num_players ({self.num_players}: one hand in every "
                             f"seat), got {self.eval_hands}")
        trace_bytes = self.parallel_hands * self.learners_per_table() * self.architecture.num_weights * 4
        if trace_bytes > MAX_TRACE_BYTES:
            raise ValueError(
                f"the eligibility traces would need {trace_bytes / 2**30:.1f} GiB (parallel_hands="
                f"{self.parallel_hands} x {self.learners_per_table()} learners per table x "
                f"{self.architecture.num_weights} weights x 4 bytes), more than {MAX_TRACE_BYTES / 2**30:.0f} GiB: "
                f"play fewer tables or use a smaller network")

    @property
    def game(self) -> GameConfig:
        """The game it learns: the table size and the table rules."""
        return make_config(self.num_players, self.highest_double, boneyard=self.boneyard,
                           cover_doubles=self.cover_doubles, first_player=self.first_player)

    @property
    def architecture(self) -> Architecture:
        """The network's shape: its input size (from the variant and the table) and hidden widths."""
        return Architecture(input_size(self.game, self.variant), self.hidden_sizes)

    def learners_per_table(self) -> int:
        """Seats that learn at a table in the widest stage (all of them in self-play)."""
        return self.num_players if any(name == SELF_PLAY for name, _ in self.curriculum) else 1

    def stage_hands(self) -> list[tuple[str, int]]:
        """The curriculum as (opponent, hands) with the hands summing to :attr:`hands`."""
        total = sum(share for _, share in self.curriculum)
        bounds = np.round(np.cumsum([share / total for _, share in self.curriculum]) * self.hands).astype(int)
        counts = np.diff(np.concatenate([[0], bounds]))
        return [(name, int(count)) for (name, _), count in zip(self.curriculum, counts)]

    def opponent_names(self) -> set[str]:
        """Every policy name the run plays against (curriculum and evaluation), "self" left out."""
        named = {part for stage, _ in self.curriculum for part in stage.split("+")} | set(self.eval_opponents)
        return named - {SELF_PLAY}

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> TDLambdaConfig:
        """Read :meth:`to_json`'s text (also that of checkpoints written before 0.2.0).

        Raises:
            ValueError: not a JSON object of known fields, or a value out of bounds.
        """
        values = json.loads(text)
        if not isinstance(values, dict):
            # Bad file content, not a programming error: a ValueError like every other refusal.
            raise ValueError(f"the configuration must be a JSON object, got {type(values).__name__}")
        if "highest_dominoe" in values:  # checkpoints written before 0.2.0
            values["highest_double"] = values.pop("highest_dominoe")
        unknown = sorted(set(values) - {spec.name for spec in fields(cls)})
        if unknown:
            raise ValueError(f"unknown configuration field(s) {unknown}")
        return cls(**values)  # lists become tuples in the checks


def command_line_options() -> Iterator[tuple[str, Option, Any]]:
    """(field name, its option, its default) for every field, in declaration order."""
    for spec in fields(TDLambdaConfig):
        yield spec.name, spec.metadata["option"], spec.default


def check_opponents(config: TDLambdaConfig) -> None:
    """Refuse a run whose curriculum or evaluation names a policy that is not registered.

    Not part of the configuration's own checks: a checkpoint stays readable in an
    installation that lacks a policy it was trained against.

    Raises:
        ValueError: naming the unknown opponents and the known ones.
    """
    from baselines.registry import policy_names

    known = set(policy_names())
    unknown = config.opponent_names() - known
    if unknown:
        raise ValueError(f"unknown opponent(s) {sorted(unknown)}; known: {sorted(known | {SELF_PLAY})}")
