"""What a league is: which policies, how many copies, the table size, the game length, the seed.

A :class:`LeagueSpec` is the whole identity of a league. Every game's table, seats and
seeds follow from it (:mod:`baselines.league.schedule`), it heads the results file, and a
run that resumes must have the same one. The number of games is not part of it: a league
can be extended by running more games into the same results file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from baselines.policies import registry, specs
from baselines.policies.registry import policy_class
from baselines.policies.specs import PolicySpec, SpecError
from dominoes_env.core import validation
from dominoes_env.core.config import (
    MAX_HANDS_PER_GAME,
    GameConfig,
    PlaysAtTable,
    TableRuleOptions,
    config_of,
    describe_table,
    table_of,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

# The default league: the hand-crafted policies of the original project's 10,000-game
# league, 4 copies each. Learned policies in OPTIONAL_DEFAULT_POLICIES (specs) join it for the
# tables they ship a trained player for (4 players with double-nine, the Mexican Train tables
# with double-twelve); there they must load, or the league stops with the reason. The champion
# sits at its fast setting: at its default (400 simulations, about 30 ms a decision) it would
# make the default league's 2,000 games take about 20 minutes longer (docs/league/README.md).
DEFAULT_POLICIES: tuple[str, ...] = ("persistent_line", "double", "greedy", "random", "stupid")
OPTIONAL_DEFAULT_POLICIES: tuple[str, ...] = ("td_lambda", "linear_sarsa", "lookahead", "ppo",
                                              "champion(simulations=32)")
DEFAULT_COPIES = 4
#: Most league entries (copies of all policies together).
MAX_ENTRIES = specs.MAX_COPIES

MAX_GAMES = 10_000_000  # about a day of the default league on two cores


class LeagueError(ValueError):
    """A league that cannot be run or rated as asked; the message says what is allowed."""


@dataclass(frozen=True)
class LeagueSpec(PlaysAtTable):
    """The identity of a league.

    Attributes:
        policies: (policy, copies) in the order given; each copy is one league entry with
            its own ratings.
        game: the table (size and table rules); a league is one table and one rule set.
        hands_per_game: hands in one game (N+1 is a full game, engines N down to 0).
        seed: the root of every deal and every policy's random generator.
    """

    policies: tuple[tuple[PolicySpec, int], ...]
    game: GameConfig
    hands_per_game: int
    seed: int

    @property
    def entries(self) -> tuple[PolicySpec, ...]:
        """One spec per league entry (copy), grouped by policy in the given order."""
        return tuple(spec for spec, copies in self.policies for _ in range(copies))

    @property
    def entry_labels(self) -> tuple[str, ...]:
        """``label#k`` for the k-th copy of each policy."""
        return tuple(f"{spec.label}#{k}" for spec, copies in self.policies for k in range(copies))

    @property
    def policy_labels(self) -> tuple[str, ...]:
        return tuple(spec.label for spec, _ in self.policies)

    def to_json(self) -> dict[str, Any]:
        return {
            "policies": [[spec.label, copies] for spec, copies in self.policies],
            "num_players": self.num_players,
            "highest_double": self.highest_double,
            "hands_per_game": self.hands_per_game,
            "seed": self.seed,
            "rules": dict(self.game.rules()),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LeagueSpec:
        """The spec a results header holds (``highest_dominoe``: headers written before 0.2.0).

        Raises:
            ValueError: a field is missing, of the wrong type, or out of range.
        """
        policies = tuple((specs.parse(label)[0], validation.integer("copies", copies, 1, MAX_ENTRIES))
                         for label, copies in data["policies"])
        highest = data["highest_double"] if "highest_double" in data else data["highest_dominoe"]
        rules = data.get("rules", {})  # files written before the table rules: the rule book's game
        if not isinstance(rules, dict):
            raise ValueError(f"rules must be a JSON object of the table rules, got {rules!r}")
        try:
            config = table_of(data["num_players"], highest, rules)
        except TypeError as error:  # a key that is no table rule
            raise ValueError(f"rules: {error}") from None
        hands = validation.integer("hands_per_game", data["hands_per_game"], 1, MAX_HANDS_PER_GAME)
        return cls(policies, config, hands, validation.integer("seed", data["seed"], 0, validation.SEED_LIMIT - 1))

    def describe(self) -> str:
        """One line for table headings: the league and its configuration."""
        listing = ", ".join(f"{copies} x {spec.label}" for spec, copies in self.policies)
        return f"{listing}; {describe_table(self.game)}, {self.hands_per_game} hands per game, seed {self.seed}"


def parse_policy_arguments(arguments: Iterable[str],
                           default_copies: int = DEFAULT_COPIES) -> tuple[tuple[PolicySpec, int], ...]:
    """Parse policy specs (``NAME[(KEY=VALUE,...)][@CHECKPOINT][:COPIES]``, the grammar of
    :mod:`baselines.policies.specs`; copies default to `default_copies`).

    Raises:
        LeagueError: a malformed argument, a policy named twice, or copies out of range.
    """
    try:
        return tuple(specs.parse_all(list(arguments), default_copies))
    except SpecError as error:
        raise LeagueError(str(error)) from None


def make_spec(policies: Sequence[tuple[PolicySpec, int]], num_players: int | GameConfig = 4, highest_double: int = 9,
              hands_per_game: int | None = None, seed: int = 0, **table_rules: Unpack[TableRuleOptions]) -> LeagueSpec:
    """Validate a league and return its spec; `hands_per_game` None means a full game (N+1).

    Every policy is constructed once here, so an unknown name, a bad parameter or
    checkpoint, or a table size a policy cannot play fails before any game is played.

    Raises:
        LeagueError: what is wrong and what is allowed.
    """
    try:
        config = table_of(num_players, highest_double, table_rules)
        hands = config.default_num_hands if hands_per_game is None else hands_per_game
        hands = validation.integer("hands per game", hands, 1, MAX_HANDS_PER_GAME)
        seed = validation.integer("the seed", seed, 0, validation.SEED_LIMIT - 1)
    except ValueError as error:
        raise LeagueError(str(error)) from None
    if not policies:
        raise LeagueError("a league needs at least one policy")
    spec = LeagueSpec(tuple(policies), config, hands, seed)
    if len(spec.entries) < spec.num_players:
        raise LeagueError(f"{spec.num_players} seats need at least {spec.num_players} league entries, "
                          f"got {len(spec.entries)}; add copies with NAME:COPIES")
    if len(spec.entries) > MAX_ENTRIES:
        raise LeagueError(f"a league holds at most {MAX_ENTRIES} entries (copies of all policies), "
                          f"got {len(spec.entries)}")
    for policy, _ in spec.policies:
        check_policy(policy, spec.game)
    return spec


def check_policy(spec: PolicySpec, config: GameConfig) -> None:
    """Construct `spec` once (:func:`baselines.policies.registry.check`), as a LeagueError that names the policy."""
    try:
        registry.check(spec, config)
    except ValueError as error:
        raise LeagueError(f"policy {error}") from None


def default_policies(num_players: int | GameConfig = 4, highest_double: int = 9
                     ) -> tuple[tuple[PolicySpec, int], ...]:
    """The default league for a table size: DEFAULT_POLICIES, plus each optional learned policy
    that ships a trained player for that table size.

    Raises:
        LeagueError: an optional policy ships a player for this table but it does not load
            (a damaged checkpoint, a missing dependency): the league says so instead of
            quietly playing without it.
    """
    config = config_of(num_players, highest_double)
    chosen = [PolicySpec(name) for name in DEFAULT_POLICIES]
    for text in OPTIONAL_DEFAULT_POLICIES:
        spec, _ = specs.parse(text)
        try:
            cls = policy_class(spec.name)
        except ValueError as error:
            raise LeagueError(f"the default league includes {spec.name!r}, which cannot be loaded: {error}") from None
        if cls.plays_by_default(config):
            check_policy(spec, config)
            chosen.append(spec)
    return tuple((spec, DEFAULT_COPIES) for spec in chosen)
