"""Who plays a seat across many games at once: one shared batch policy, or one copy per game.

The batched envs and the TD trainer step thousands of games together, and a seat that is
played by a policy must choose in all of them each round. A policy that keeps nothing
between moves (it has ``act_batch``: random, greedy, stupid, double, td_lambda, linear_sarsa,
maskable_ppo) is one object for every game, asked once per round. Any other policy
(best_line, persistent_line, a user's ``Policy``) may remember things within a hand, so
each game gets its own copy, built from the spec with its own seed, asked game by game and
reset at the start of each of its game's hands (a ready object given without ``act_batch``
is deep-copied into each game).
"""

from __future__ import annotations

import copy
import importlib.metadata
from collections.abc import Callable
from functools import cache
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dominoes_env.core.config import GameConfig, describe_table

#: Most games a policy without ``act_batch`` may play at once: each copy is a Python object,
#: so this bounds the memory they take.
MAX_COPIES = 100_000
#: The entry-point group of the package that turns policy names into players. The env knows
#: no policy registry: ``baselines`` (this distribution) registers one there
#: (:func:`baselines.policies.registry.resolve_players`), and any installed package may.
NAME_RESOLVERS = "dominoes_env.player_names"


class Player(Protocol):
    """What plays a seat: ``reset()`` at the start of every hand, ``act`` for each move (the
    ``baselines.Policy`` interface)."""

    def reset(self) -> None: ...

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int: ...


@runtime_checkable
class PlayerFactory(Protocol):
    """What builds a fresh player for a table and a seed (one per seat, or per game of a batch)."""

    @property
    def label(self) -> str: ...

    def make(self, config: GameConfig, seed: Any = None) -> Player: ...


Resolver = Callable[[Any, int], "tuple[PlayerFactory, int] | None"]


@cache
def _resolvers() -> tuple[Resolver, ...]:
    return tuple(entry.load() for entry in importlib.metadata.entry_points(group=NAME_RESOLVERS))


def by_name(opponent: Any, default_copies: int = 1) -> tuple[PlayerFactory, int] | None:
    """A policy given by name (``"random"``, ``"random:3"``), or by a spec object some installed
    package understands, as a factory and its copies; None for anything no resolver knows.

    Raises:
        ValueError: a name that no installed package resolves (a text cannot be played), or
            one a resolver refuses.
    """
    for resolve in _resolvers():
        found = resolve(opponent, default_copies)
        if found is not None:
            return found
    if isinstance(opponent, str):
        raise ValueError(f"opponent {opponent!r} is a name, and no installed package turns names into players "
                         f"(entry-point group {NAME_RESOLVERS!r}; dominoes-env's baselines does): install the "
                         f"package, or pass player objects")
    return None


class BatchPlayers:
    """One player (a seat, or a seat position) in each of `num_games` games.

    Build it with :meth:`build`. Games are named by slot indices 0..num_games-1 (a caller
    with several seats per game gives each (game, seat) its own slot).
    """

    def __init__(self, shared: Any | None, copies: list[Any] | None, label: str) -> None:
        self.shared, self.copies, self.label = shared, copies, label

    @classmethod
    def build(cls, opponent: Any, config: GameConfig, num_games: int, rng: np.random.Generator) -> BatchPlayers:
        """Players for `num_games` games from a spec string (one policy: ``"random"``,
        ``"best_line(max_line_length=6)"``), a ``PolicySpec``, a ready object with
        ``act_batch`` (used as it is), or one with ``act`` and ``reset`` (deep-copied into each
        game); named policies are seeded from `rng`.

        Raises:
            ValueError: the spec names no policy, it copies a policy into more than
                :data:`MAX_COPIES` games, or the object cannot choose for a batch.
        """
        opponent = resolve_opponent(opponent, config)
        if isinstance(opponent, PlayerFactory):
            first = opponent.make(config, seed=int(rng.integers(2**63)))
            if callable(getattr(first, "act_batch", None)):
                return cls(first, None, opponent.label)
            if num_games > MAX_COPIES:
                raise ValueError(f"{opponent.label} has no act_batch, so it needs one copy per game: at most "
                                 f"{MAX_COPIES} games that way, got {num_games}")
            seeds = rng.integers(2**63, size=num_games - 1)
            return cls(None, [first] + [opponent.make(config, seed=int(seed)) for seed in seeds], opponent.label)
        label = str(getattr(opponent, "label", repr(opponent)))
        if callable(getattr(opponent, "act_batch", None)):
            return cls(opponent, None, label)
        if callable(getattr(opponent, "act", None)) and callable(getattr(opponent, "reset", None)):
            if num_games > MAX_COPIES:
                raise ValueError(f"{label} has no act_batch, so it needs one copy per game: at most {MAX_COPIES} "
                                 f"games that way, got {num_games}")
            return cls(None, [copy.deepcopy(opponent) for _ in range(num_games)], label)
        raise ValueError(f"cannot seat {opponent!r} in {num_games} games at once: give a policy spec ('random', "
                         f"'best_line(max_line_length=6)'), a factory with make(config, seed), an object with "
                         f"act_batch(observations, action_masks), or one with act() and reset() (one copy per game "
                         f"is made of the last two)")

    def act(self, slots: np.ndarray, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The actions of the players of `slots`, each to move, from their observations and masks."""
        if self.shared is not None:
            return np.asarray(self.shared.act_batch(observations, masks), dtype=np.int64).reshape(slots.shape[0])
        assert self.copies is not None
        return np.array([self.copies[slot].act(observations[k], masks[k]) for k, slot in enumerate(slots.tolist())],
                        dtype=np.int64)

    def new_hand(self, slots: np.ndarray) -> None:
        """A hand starts for `slots`: their copies forget the last one (a shared policy keeps nothing)."""
        if self.copies is not None:
            for slot in slots.tolist():
                self.copies[slot].reset()


def resolve_opponent(opponent: Any, config: GameConfig) -> Any:
    """An opponent given by name (or by a spec object) as its factory (one seat: copies are
    refused); a factory as it is; an object checked to have been built for `config` (when it
    says what it was built for). What the single-agent views seat, before they build or batch it.

    Raises:
        ValueError: a spec that cannot be read, copies, or an object built for another table.
    """
    if not isinstance(opponent, PlayerFactory):
        found = by_name(opponent)
        if found is not None:
            factory, copies = found
            if copies != 1:
                raise ValueError(f"opponent {opponent!r}: each entry is one opponent (one seat); write it {copies} "
                                 f"times")
            return factory
    built_for = getattr(opponent, "config", None)
    if isinstance(built_for, GameConfig) and built_for != config:
        raise ValueError(f"opponent {opponent!r} was built for {describe_table(built_for)}, not "
                         f"{describe_table(config)}")
    return opponent
