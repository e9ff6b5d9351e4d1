"""What a league is: which policies, how many copies, the table size, the game length, the seed.

A :class:`LeagueSpec` is the whole identity of a league. Every game's table, seats and
seeds follow from it (:mod:`baselines.league.schedule`), it heads the results file, and a
run that resumes must have the same one. The number of games is not part of it: a league
can be extended by running more games into the same results file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from baselines.policy import make_policy, policy_names
from dominoes_env import make_config
from dominoes_env.core.deprecation import renamed_keyword

# The default league: the hand-crafted policies of the original project's 10,000-game
# league, 4 copies each. Learned policies in OPTIONAL_DEFAULT_POLICIES join it when they
# are registered and load their shipped checkpoint for the table size being played.
DEFAULT_POLICIES: tuple[str, ...] = ("persistent_line", "double", "greedy", "random", "stupid")
OPTIONAL_DEFAULT_POLICIES: tuple[str, ...] = ("td_lambda",)
DEFAULT_COPIES = 4

_REF_PATTERN = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_\-]*)(?:@(?P<checkpoint>.+?))?(?::(?P<copies>-?\d+))?$")


class LeagueError(ValueError):
    """A league that cannot be run or rated as asked; the message says what is allowed."""


@dataclass(frozen=True)
class PolicyRef:
    """A policy as the league names it: a registry name and, for learned ones, a checkpoint."""

    name: str
    checkpoint: str | None = None

    @property
    def label(self) -> str:
        """The name shown in tables and written to the results file."""
        return self.name if self.checkpoint is None else f"{self.name}@{self.checkpoint}"

    def make(self, num_players: int, highest_double: int, seed: int) -> Any:
        """Construct the policy through the registry."""
        params = {} if self.checkpoint is None else {"checkpoint": self.checkpoint}
        return make_policy(self.name, num_players, highest_double, seed=seed, **params)

    @classmethod
    def from_label(cls, label: str) -> PolicyRef:
        name, _, checkpoint = label.partition("@")
        return cls(name, checkpoint or None)


@dataclass(frozen=True)
class LeagueSpec:
    """The identity of a league.

    Attributes:
        policies: (policy, copies) in the order given; each copy is one league entry with
            its own ratings.
        num_players: seats at each table.
        highest_double: N of the double-N set.
        hands_per_game: hands in one game (N+1 is a full game, engines N down to 0).
        seed: the root of every deal and every policy's random generator.
    """

    policies: tuple[tuple[PolicyRef, int], ...]
    num_players: int
    highest_double: int
    hands_per_game: int
    seed: int

    @property
    def entries(self) -> tuple[PolicyRef, ...]:
        """One PolicyRef per league entry (copy), grouped by policy in the given order."""
        return tuple(ref for ref, copies in self.policies for _ in range(copies))

    @property
    def entry_labels(self) -> tuple[str, ...]:
        """``name#k`` for the k-th copy of each policy."""
        return tuple(f"{ref.label}#{k}" for ref, copies in self.policies for k in range(copies))

    @property
    def policy_labels(self) -> tuple[str, ...]:
        return tuple(ref.label for ref, _ in self.policies)

    def to_json(self) -> dict[str, Any]:
        return {
            "policies": [[ref.label, copies] for ref, copies in self.policies],
            "num_players": self.num_players,
            "highest_double": self.highest_double,
            "hands_per_game": self.hands_per_game,
            "seed": self.seed,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LeagueSpec:
        policies = tuple((PolicyRef.from_label(label), int(copies)) for label, copies in data["policies"])
        return cls(policies, int(data["num_players"]), int(data["highest_double"] if "highest_double" in data else data["highest_dominoe"]),
                   int(data["hands_per_game"]), int(data["seed"]))

    def describe(self) -> str:
        """One line for table headings: the league and its configuration."""
        listing = ", ".join(f"{copies} x {ref.label}" for ref, copies in self.policies)
        return (f"{listing}; {self.num_players} players, double-{self.highest_double}, "
                f"{self.hands_per_game} hands per game, seed {self.seed}")


def parse_policy_arguments(arguments: Iterable[str],
                           default_copies: int = DEFAULT_COPIES) -> tuple[tuple[PolicyRef, int], ...]:
    """Parse ``NAME[@CHECKPOINT][:COPIES]`` arguments (copies default to `default_copies`).

    Raises:
        LeagueError: a malformed argument, a policy named twice, or fewer than one copy.
    """
    parsed: list[tuple[PolicyRef, int]] = []
    for argument in arguments:
        match = _REF_PATTERN.match(argument)
        if match is None:
            raise LeagueError(f"cannot read policy {argument!r}: write NAME, NAME:COPIES or NAME@CHECKPOINT:COPIES "
                              f"(e.g. persistent_line:4)")
        copies = default_copies if match["copies"] is None else int(match["copies"])
        if copies < 1:
            raise LeagueError(f"policy {argument!r}: the number of copies must be at least 1, got {copies}")
        parsed.append((PolicyRef(match["name"], match["checkpoint"]), copies))
    labels = [ref.label for ref, _ in parsed]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise LeagueError(f"policy {repeated[0]!r} is listed more than once; give it once with NAME:COPIES")
    return tuple(parsed)


@renamed_keyword
def make_spec(policies: Sequence[tuple[PolicyRef, int]], num_players: int = 4, highest_double: int = 9,
              hands_per_game: int | None = None, seed: int = 0) -> LeagueSpec:
    """Validate a league and return its spec; `hands_per_game` None means a full game (N+1).

    Every policy is constructed once here, so an unknown name, a bad checkpoint or a table
    size a policy cannot play fails before any game is played.

    Raises:
        LeagueError: what is wrong and what is allowed.
    """
    try:
        config = make_config(num_players, highest_double)
    except ValueError as error:
        raise LeagueError(str(error)) from None
    hands = config.default_num_hands if hands_per_game is None else hands_per_game
    if isinstance(hands, bool) or not isinstance(hands, int) or hands < 1:
        raise LeagueError(f"hands per game must be a positive integer, got {hands_per_game!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise LeagueError(f"the seed must be a non-negative integer, got {seed!r}")
    if not policies:
        raise LeagueError("a league needs at least one policy")
    spec = LeagueSpec(tuple(policies), config.num_players, config.highest_double, hands, int(seed))
    if len(spec.entries) < spec.num_players:
        raise LeagueError(f"{spec.num_players} seats need at least {spec.num_players} league entries, "
                          f"got {len(spec.entries)}; add copies with NAME:COPIES")
    for ref, _ in spec.policies:
        check_policy(ref, spec.num_players, spec.highest_double)
    return spec


def check_policy(ref: PolicyRef, num_players: int, highest_double: int) -> None:
    """Construct `ref` once, turning any failure into a LeagueError that names the policy."""
    known = policy_names()
    if ref.name not in known:
        raise LeagueError(f"unknown policy {ref.name!r}; known policies: {', '.join(known)}")
    try:
        ref.make(num_players, highest_double, seed=0)
    except Exception as error:  # unknown name, bad parameter, damaged checkpoint, ...
        raise LeagueError(f"policy {ref.label!r} cannot play {num_players} players double-{highest_double}: "
                          f"{error}") from None


def default_policies(num_players: int = 4, highest_double: int = 9) -> tuple[tuple[PolicyRef, int], ...]:
    """The default league for a table size: DEFAULT_POLICIES, plus each optional policy
    that is registered and loads (its shipped checkpoint) for that table size."""
    refs = [PolicyRef(name) for name in DEFAULT_POLICIES]
    registered = set(policy_names())
    for name in OPTIONAL_DEFAULT_POLICIES:
        if name in registered and _loads(PolicyRef(name), num_players, highest_double):
            refs.append(PolicyRef(name))
    return tuple((ref, DEFAULT_COPIES) for ref in refs)


def _loads(ref: PolicyRef, num_players: int, highest_double: int) -> bool:
    try:
        check_policy(ref, num_players, highest_double)
    except LeagueError:
        return False
    return True
