"""What every learner's configuration holds: the table it learns and how its training run goes.

:class:`LearnerConfig` is the base of each learner's configuration dataclass
(:class:`~baselines.td_lambda.TDLambdaConfig`, :class:`~baselines.linear_sarsa.LinearSarsaConfig`):
the table (size and table rules), the curriculum of opponents, the tables played side by
side, the seed and the periodic evaluation. A learner adds its own fields after these, and
redeclares a field here only to give it another default. :class:`DecayingStepConfig` adds the
step size with its decay to a floor and the exploration, which the linear learners share. Every field carries its
``dominoes train LEARNER`` option (:mod:`baselines.learning.options`) and is checked on
construction, so a configuration that exists is valid, whether typed on the command line
or read back from a file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeVar

import numpy as np

from baselines.learning import options
from baselines.learning.options import SELF_PLAY, Option, option
from dominoes_env.core.config import TABLE_RULE_NAMES, GameConfig, PlaysAtTable, make_config

Config = TypeVar("Config", bound="LearnerConfig")
#: The table's fields as a file holds them (flat, as before the table was one value)
TABLE_FIELDS = ("num_players", "highest_double", *TABLE_RULE_NAMES)


def table_from_fields(values: dict[str, Any]) -> tuple[GameConfig, dict[str, Any]]:
    """The table a file's flat fields give, and its other fields. A table rule the file lacks is at
    the rule book's value: the weights were trained before the rule existed, so under the rule book.

    Raises:
        ValueError: a size or rule out of bounds.
    """
    rest = dict(values)
    table = {name: rest.pop(name) for name in TABLE_FIELDS if name in rest}
    return make_config(**table), rest

CURRICULUM = option("--curriculum", "stages in order as OPPONENT:SHARE of --hands, comma-separated; 'self' is "
                    "self-play, 'a+b' alternates opponent kinds over the tables", options.curriculum,
                    options.parse_curriculum, options.show_curriculum)
EVAL_OPPONENTS = option("--eval-opponents", "fixed evaluation opponents, comma-separated", options.eval_opponents,
                        options.names, options.show_names)
EVAL_EVERY = option("--eval-every", "hands between evaluations (0: only at the end)", options.hands, options.number)
HANDS = option("--hands", f"hands to learn from (0-{options.MAX_HANDS:,})", options.hands, options.number)
TABLES = option("--parallel-hands", f"tables played side by side (1-{options.MAX_TABLES})", options.tables,
                options.number)


@dataclass(frozen=True)
class LearnerConfig(PlaysAtTable):
    """The fields every learner shares (stored in every file of trained weights).

    Raises:
        ValueError: on construction, for any value out of bounds (the message names the
            field, the value and what is allowed).
    """

    game: GameConfig = field(default_factory=lambda: make_config(4, 9))
    """The table it learns: size and table rules (``--players``, ``--highest``, ``--boneyard``,
    ``--cover-doubles``, ``--first-player``: the options every ``dominoes`` command shares,
    :func:`baselines.command_line.options.add_table_options`). Files hold it as flat fields
    (:meth:`to_dict`)."""
    hands: int = field(default=20_000, metadata=HANDS)
    """Hands to learn from, over all curriculum stages (at most 10**9)."""
    curriculum: tuple[tuple[str, float], ...] = field(
        default=(("random", 0.1), ("double", 0.2), ("persistent_line", 0.3), (SELF_PLAY, 0.4)), metadata=CURRICULUM)
    """Stages in order: (opponents, share of `hands`). Opponents: a policy name (copies in every
    other seat), "self" for self-play, or names joined by "+" ("double+persistent_line"):
    table i of the batch then plays the i-th name in turn. Shares are finite, >= 0, and add
    up to more than 0."""
    parallel_hands: int = field(default=64, metadata=TABLES)
    """Tables played side by side on the batched engine (:mod:`baselines.learning.tables`); the
    learner moves at all of them at once."""
    seed: int = field(default=0, metadata=option("--seed", "seed of the whole run", options.seed, options.number))
    """Seeds the initial weights, the deals, the opponents and the exploration."""
    eval_every: int = field(default=5_000, metadata=EVAL_EVERY)
    """Hands of learning between evaluations (0: evaluate only at the end)."""
    eval_hands: int = field(default=400, metadata=option(
        "--eval-hands", "hands per evaluation and opponent (at least --players)", options.eval_hands, options.number))
    """Hands per evaluation and opponent, at least num_players (the harness rounds up to whole
    seat rotations of its deals)."""
    eval_opponents: tuple[str, ...] = field(default=("random", "double", "persistent_line"), metadata=EVAL_OPPONENTS)
    """Fixed opponents of the periodic evaluation (copies in every other seat, seats rotated by
    the shared harness, :func:`baselines.harness.evaluate.evaluate`)."""

    def __post_init__(self) -> None:
        if not isinstance(self.game, GameConfig):
            raise ValueError(f"game must be a GameConfig (dominoes_env.make_config(...)), got {self.game!r}")
        for spec in fields(self):
            if "option" in spec.metadata:
                checked = spec.metadata["option"].check(spec.name, getattr(self, spec.name))
                object.__setattr__(self, spec.name, checked)  # normalised: np.int64(4) -> 4, lists -> tuples
        if self.eval_hands < self.num_players:
            raise ValueError(f"eval_hands must be at least num_players ({self.num_players}: one hand in every "
                             f"seat), got {self.eval_hands}")

    def learners_per_table(self) -> int:
        """Seats that learn at a table in the widest stage (all of them in self-play)."""
        return self.num_players if any(name == SELF_PLAY for name, _ in self.curriculum) else 1

    def stage_hands(self) -> list[tuple[str, int]]:
        """The curriculum as (opponent, hands) with the hands summing to :attr:`hands`."""
        total = sum(share for _, share in self.curriculum)
        bounds = np.round(np.cumsum([share / total for _, share in self.curriculum]) * self.hands).astype(int)
        counts = np.diff(np.concatenate([[0], bounds]))
        return [(name, int(count)) for (name, _), count in zip(self.curriculum, counts)]

    #: curriculum stages that are no policy ("self": self-play): a whole stage only, never part
    #: of a "+" combination or an evaluation opponent
    SPECIAL_STAGES: ClassVar[tuple[str, ...]] = (SELF_PLAY,)

    #: fields that files written before they existed lack; they take their defaults when read (the
    #: table rules: files from before a rule existed play the rule book's value, 0.2.0 had none)
    OPTIONAL_IN_FILES: ClassVar[tuple[str, ...]] = TABLE_RULE_NAMES

    def opponent_names(self) -> set[str]:
        """Every policy name the run plays against (curriculum and evaluation). A special stage
        is left out where it is a whole stage (it is no policy) and kept anywhere else, where
        :meth:`check_opponents` refuses it."""
        named = {part for stage, _ in self.curriculum if stage not in self.SPECIAL_STAGES for part in stage.split("+")}
        return named | set(self.eval_opponents)

    def check_opponents(self) -> None:
        """Refuse a run whose curriculum or evaluation names a policy that is not registered.

        Raises:
            ValueError: naming the unknown opponents and the known ones.
        """
        options.check_opponents(self.opponent_names(), self.SPECIAL_STAGES)

    def to_dict(self) -> dict[str, Any]:
        """The configuration as a file holds it: the table as flat fields (``num_players``,
        ``highest_double`` and the table rules), then every other field."""
        table = self.game.options()
        rest = {spec.name: _plain(getattr(self, spec.name)) for spec in fields(self) if spec.name != "game"}
        return {**table, **rest}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls: type[Config], values: Any) -> Config:
        """The configuration a file holds, as a JSON object (lists become tuples in the checks): every
        field (but :attr:`OPTIONAL_IN_FILES`) within its bounds, and every opponent a policy this
        package knows (whether or not its extra is installed here) or a special stage.

        Raises:
            ValueError: not a JSON object of exactly the known fields, a value out of bounds, or
                an unknown opponent.
        """
        if not isinstance(values, dict):
            # Bad file content, not a programming error: a ValueError like every other refusal.
            raise ValueError(f"the configuration must be a JSON object, got {type(values).__name__}")
        names = {spec.name for spec in fields(cls) if spec.name != "game"} | set(TABLE_FIELDS)
        unknown = sorted(set(values) - names)
        if unknown:
            raise ValueError(f"unknown configuration field(s) {unknown}")
        missing = sorted(names - set(values) - set(cls.OPTIONAL_IN_FILES))
        if missing:
            raise ValueError(f"missing configuration field(s) {missing}")
        game, rest = table_from_fields(values)
        config = cls(game=game, **rest)
        options.check_opponents(config.opponent_names(), cls.SPECIAL_STAGES, every_known=True)
        return config

    @classmethod
    def from_json(cls: type[Config], text: str) -> Config:
        """Read :meth:`to_json`'s text.

        Raises:
            ValueError: not JSON, not an object of known fields, or a value out of bounds.
        """
        return cls.from_dict(json.loads(text))

    @classmethod
    def command_line_options(cls) -> Iterator[tuple[str, Option, Any]]:
        """(field name, its option, its default) for every field but the table (whose options every
        command shares), in declaration order."""
        for spec in fields(cls):
            if "option" in spec.metadata:
                yield spec.name, spec.metadata["option"], spec.default


ALPHA = option("--alpha", "initial step size, in (0, 1]", options.step_size, options.number)
ALPHA_HALF_LIFE = option("--alpha-half-life", f"hands over which the step size halves (1-{options.MAX_HANDS:,})",
                         options.half_life, options.number)
ALPHA_FLOOR = option("--alpha-floor", "smallest step size, in (0, --alpha]", options.step_size, options.number)
EPSILON = option("--epsilon", "random-move probability while learning, in [0, 1]", options.probability,
                 options.number)


@dataclass(frozen=True)
class DecayingStepConfig(LearnerConfig):
    """A learner whose step size halves every `alpha_half_life` hands down to a floor, and that
    explores epsilon-greedily while it learns (the linear learners). Subclasses redeclare a
    field to change its default."""

    alpha: float = field(default=0.05, metadata=ALPHA)
    """Initial step size (the features are about unit size)."""
    alpha_half_life: int = field(default=20_000, metadata=ALPHA_HALF_LIFE)
    """Hands over which the step size halves: alpha_t = max(alpha_floor, alpha * 0.5 ** (t / half-life))
    after t hands of the run."""
    alpha_floor: float = field(default=1e-4, metadata=ALPHA_FLOOR)
    """The step size never decays below this."""
    epsilon: float = field(default=0.1, metadata=EPSILON)
    """Probability of a uniformly random legal move while learning; the policy itself never explores."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.alpha_floor > self.alpha:
            raise ValueError(f"alpha_floor must be at most alpha ({self.alpha}), got {self.alpha_floor}")

    def step_size(self, hands_done: int) -> float:
        """The step size after `hands_done` hands of the run: halves every `alpha_half_life` hands, down
        to `alpha_floor`."""
        return max(self.alpha_floor, self.alpha * 0.5 ** (hands_done / self.alpha_half_life))


def _plain(value: Any) -> Any:
    """A field's value as JSON holds it (tuples as lists, nested too)."""
    return [_plain(item) for item in value] if isinstance(value, tuple) else value
