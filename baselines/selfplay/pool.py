"""An opponent pool for self-play: the shipped players, any spec, and frozen snapshots of the learner.

A learner that only meets copies of its latest self chases its own tail; one that meets a
pool of past versions and fixed players keeps what it learned (AlphaStar's league, OpenAI
Five's past selves). The pool holds members by name and draws one per other seat at every
episode, under one of :data:`SAMPLING`:

- ``"uniform"``: every member alike;
- ``"latest"``: the newest member with probability `latest_share`, the others alike;
- ``"prioritised"``: AlphaStar's prioritised fictitious self-play, weights (1 - p)^2 where p is
  the learner's share of wins against the member (reported with :meth:`OpponentPool.report`,
  smoothed as (wins + 1) / (games + 2)): the members it beats least are met most.

A member is a policy spec (``"td_lambda"``, ``"maskable_ppo@snapshots/gen3.zip"``: a snapshot
saved to a file is a spec) or an object that plays (a ``baselines.Policy``), which :meth:`OpponentPool.add`
freezes with a deep copy, so training the learner afterwards does not change it. Draws come
from the generator given (the env's, at its reset) or the pool's own seeded one. A pool of spec
members saves to JSON and loads back with the learner's results.

    pool = OpponentPool(["random", "persistent_line"], sampling="latest", seed=0)
    env = SingleAgentEnv(opponents=pool.opponents(num_players=4))   # a draw at every reset
    pool.add("maskable_ppo@snapshots/gen1.zip")                      # after a generation of training
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dominoes_env import files
from dominoes_env.core import validation

SAMPLING = ("uniform", "latest", "prioritised")
FORMAT = "dominoes-opponent-pool/1"
MAX_MEMBERS = 10_000
MAX_DRAWS = 10_000_000  #: members drawn in one call
MAX_POOL_BYTES = 16 * 2**20


@dataclass
class Member:
    """One member: its name, what plays (a spec text, or a frozen object), and the learner's record against it."""

    name: str
    opponent: Any
    wins: float = 0.0
    games: int = 0


class OpponentPool:
    """Opponents for a learner, drawn per episode from named members (see the module docstring).

    Args:
        members: the first members: spec texts, or objects that play (frozen by :meth:`add`).
        sampling: one of :data:`SAMPLING`.
        latest_share: with "latest", the newest member's share of the draws (0 to 1).
        seed: seeds the pool's own generator (used when a draw is given none).
    """

    def __init__(self, members: Sequence[Any] = ("random",), *, sampling: str = "uniform", latest_share: float = 0.5,
                 seed: int | None = None) -> None:
        self.sampling = validation.choice("sampling", sampling, SAMPLING)
        self.latest_share = validation.real("latest_share", latest_share, 0.0, 1.0)
        self.rng = np.random.default_rng(validation.seed("seed", seed))
        self._members: list[Member] = []
        #: the names the latest draw of :meth:`opponents` seated, in seat order after the learner
        self.last_drawn: list[str] = []
        if isinstance(members, str) or not isinstance(members, Sequence):
            raise ValueError(f"members must be a sequence of specs or policies, got {members!r}")
        for member in members:
            self.add(member)

    # ------------------------------------------------------------------ members
    def add(self, member: Any, name: str | None = None, freeze: Callable[[Any], Any] = copy.deepcopy) -> str:
        """Add a member; returns its name (the spec text, the object's label, or `name`).

        A spec text is kept as it is; any other object is frozen (``freeze(member)``, a deep copy
        by default), so the learner's later training does not change the member.

        Raises:
            ValueError: an empty or taken name, a spec that cannot be read, an object that
                cannot play, or a full pool.
        """
        if len(self._members) >= MAX_MEMBERS:
            raise ValueError(f"the pool holds {MAX_MEMBERS} members, the most it takes")
        if isinstance(member, str):
            from baselines.policies import specs

            specs.parse(member)  # a spec that cannot be read is refused now, in one line
            opponent: Any = member.strip()
            default = opponent
        elif callable(getattr(member, "act", None)) or callable(getattr(member, "act_batch", None)):
            opponent = freeze(member)
            default = str(getattr(member, "label", type(member).__name__))
        else:
            raise ValueError(f"a pool member is a policy spec or an object with act(observation, action_mask), "
                             f"got {member!r}")
        name = default if name is None else name
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"a member's name is a non-empty string, got {name!r}")
        if name in self.names:
            raise ValueError(f"the pool has a member named {name!r} already: give add(..., name=...) another")
        self._members.append(Member(name, opponent))
        return name

    @property
    def names(self) -> tuple[str, ...]:
        """The members' names, oldest first."""
        return tuple(member.name for member in self._members)

    def __len__(self) -> int:
        return len(self._members)

    def member(self, name: str) -> Any:
        """What plays as member `name` (a spec text or the frozen object)."""
        return self._find(name).opponent

    def _find(self, name: str) -> Member:
        for member in self._members:
            if member.name == name:
                return member
        raise KeyError(f"no member named {name!r}; members: {list(self.names)}")

    # ------------------------------------------------------------------ drawing
    def weights(self) -> np.ndarray:
        """Each member's probability of a draw, oldest first, under the pool's sampling rule."""
        count = len(self._members)
        if count == 0:
            raise ValueError("the pool is empty: add a member first")
        if self.sampling == "latest" and count > 1:
            weights = np.full(count, (1.0 - self.latest_share) / (count - 1))
            weights[-1] = self.latest_share
            return weights
        if self.sampling == "prioritised":
            won = np.array([(member.wins + 1.0) / (member.games + 2.0) for member in self._members])
            hard = (1.0 - won) ** 2
            return hard / hard.sum()
        return np.full(count, 1.0 / count)

    def draw_names(self, count: int, rng: np.random.Generator | None = None) -> list[str]:
        """`count` members' names, each drawn independently under the weights (with replacement)."""
        count = validation.integer("count", count, 0, MAX_DRAWS)
        picks = (rng if rng is not None else self.rng).choice(len(self._members), size=count, p=self.weights())
        return [self._members[int(k)].name for k in picks]

    def draw(self, count: int, rng: np.random.Generator | None = None) -> list[Any]:
        """`count` opponents (spec texts or frozen objects) drawn as :meth:`draw_names` draws them."""
        return [self.member(name) for name in self.draw_names(count, rng)]

    def opponents(self, num_players: int) -> PoolOpponents:
        """``SingleAgentEnv(opponents=pool.opponents(n))`` or ``SingleAgentVectorEnv(...)``: at every
        new game, one member per other seat, drawn from the env's generator (a seeded reset
        repeats the draws); the env reports each game's result back (:meth:`report_game`), and
        ``last_drawn`` keeps the names of the latest draw."""
        return PoolOpponents(self, validation.integer("num_players", num_players, 2, 8))

    # ------------------------------------------------------------------ results
    def report(self, name: str, learner_won: float) -> None:
        """The learner's result of one game against member `name`: 1 won, 0 lost, between for a
        share (a tie); prioritised sampling reads these."""
        member = self._find(name)
        member.wins += validation.real("learner_won", learner_won, 0.0, 1.0)
        member.games += 1

    def report_game(self, names: Sequence[str], seat: int, game_scores: np.ndarray | None) -> None:
        """The result of one game against the members `names`, seated 1, 2, ... seats after the
        learner's `seat`: against each, 1 if the learner's game ended with fewer pips than that
        seat's, 0.5 if level, 0 if more; every one a loss when `game_scores` is None (the
        learner's illegal action ended the game)."""
        for offset, name in enumerate(names, start=1):
            if game_scores is None:
                self.report(name, 0.0)
                continue
            mine, theirs = game_scores[seat], game_scores[(seat + offset) % len(game_scores)]
            self.report(name, 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0)

    def restore_record(self, name: str, wins: float, games: int) -> None:
        """Set the learner's record against member `name` (a pool read back from a file or a resumed run).

        Raises:
            ValueError: games not a count, or wins not between 0 and games.
        """
        member = self._find(name)
        member.games = validation.integer("games", games, 0, 10**12)
        member.wins = validation.real("wins", wins, 0.0, float(member.games))

    def record(self) -> dict[str, tuple[float, int]]:
        """The learner's (wins, games) against each member."""
        return {member.name: (member.wins, member.games) for member in self._members}

    # ------------------------------------------------------------------ files
    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the pool (its settings, members and the learner's results) as JSON, atomically.

        Raises:
            ValueError: a member is an object in memory, not a spec: save it to a file (for
                example ``model.save("gen3.zip")``) and add its spec (``"maskable_ppo@gen3.zip"``).
        """
        in_memory = [member.name for member in self._members if not isinstance(member.opponent, str)]
        if in_memory:
            raise ValueError(f"members {in_memory} are objects in memory and cannot be saved: save each to a file "
                             f"and add it by its spec (e.g. 'maskable_ppo@gen3.zip')")
        content = {"format": FORMAT, "sampling": self.sampling, "latest_share": self.latest_share,
                   "members": [{"name": m.name, "spec": m.opponent, "wins": m.wins, "games": m.games}
                               for m in self._members]}
        target = Path(path)
        files.check_output_file("pool", target)
        return files.write_atomically(target, (json.dumps(content, indent=1) + "\n").encode())

    @classmethod
    def load(cls, path: str | os.PathLike[str], seed: int | None = None) -> OpponentPool:
        """A pool written by :meth:`save`, checked.

        Raises:
            ValueError: the file cannot be read or is not a valid pool (one line naming it).
        """
        try:
            content = json.loads(files.read_regular_file(Path(path), MAX_POOL_BYTES))
            if not isinstance(content, dict) or content.get("format") != FORMAT:
                raise ValueError(f"not a pool file (format {FORMAT!r})")
            pool = cls((), sampling=content["sampling"], latest_share=content["latest_share"], seed=seed)
            members = content["members"]
            if not isinstance(members, list):
                raise ValueError("members must be a list")
            for entry in members:
                if not isinstance(entry, dict) or not isinstance(entry.get("spec"), str):
                    raise ValueError(f"a member must be {{'name', 'spec', 'wins', 'games'}}, got {entry!r}")
                name = pool.add(entry["spec"], name=entry.get("name"))
                pool.restore_record(name, entry.get("wins", 0.0), entry.get("games", 0))
        except (OSError, files.FileRefused, UnicodeDecodeError, KeyError, TypeError, RecursionError,
                ValueError) as error:
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise ValueError(f"opponent pool {path}: {reason}") from None
        return pool


class Drawn(list[Any]):
    """One game's opponents from a pool, in seat order after the learner, with their members' names."""

    def __init__(self, opponents: Sequence[Any], names: Sequence[str]) -> None:
        super().__init__(opponents)
        self.names = list(names)


class PoolOpponents:
    """What :meth:`OpponentPool.opponents` gives the single-agent views: a draw per game, and the
    hook through which the views report each game's result (:mod:`dominoes_env.opponent_seats`)."""

    def __init__(self, pool: OpponentPool, num_players: int) -> None:
        self.pool, self.others = pool, num_players - 1

    def __call__(self, rng: np.random.Generator) -> Drawn:
        names = self.pool.draw_names(self.others, rng)
        self.pool.last_drawn = names
        return Drawn([self.pool.member(name) for name in names], names)

    def report_game(self, drawn: Drawn, seat: int, game_scores: np.ndarray | None) -> None:
        """Credit the learner's result against each member of `drawn` (see :meth:`OpponentPool.report_game`)."""
        self.pool.report_game(drawn.names, seat, game_scores)
