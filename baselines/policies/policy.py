"""The one interface every policy implements (the registry that makes them by name is
:mod:`baselines.policies.registry`).

A policy is a plain object: it sees what the environment gives its player (the
observation vector and the action mask) and returns an action. It never owns the game
loop (compare Stable-Baselines3's ``predict`` and OpenSpiel's bots), so the same object
plays in the evaluation harness, the league, or a user's own loop.
"""

from __future__ import annotations

import functools
import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from baselines.policies.specs import RESERVED, PolicySpec
from dominoes_env.core.config import GameConfig, config_of, describe_table

SeedLike = int | np.random.Generator | None


class Policy(ABC):
    """Base class: construct with the game configuration and an optional seed or generator.

    Subclasses take their parameters as keyword arguments of ``__init__`` (with the
    original project's defaults) and implement :meth:`act`.
    """

    name: ClassVar[str] = "policy"
    #: set by :func:`baselines.policies.registry.register_policy` on the class it registers (and only there)
    registered_name: ClassVar[str | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Record the arguments each subclass's ``__init__`` is called with (:attr:`parameters`)."""
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None:
            cls.__init__ = _recording_arguments(init)  # type: ignore[method-assign]

    def __init__(self, num_players: int | GameConfig = 4, highest_double: int = 9, seed: SeedLike = None) -> None:
        """`num_players` may be a whole :class:`~dominoes_env.GameConfig` (a table with its table
        rules); subclasses pass it through to here unchanged."""
        self.config: GameConfig = config_of(num_players, highest_double)
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)

    @property
    def num_players(self) -> int:
        return self.config.num_players

    @property
    def highest_double(self) -> int:
        return self.config.highest_double

    @property
    def parameters(self) -> dict[str, Any]:
        """The constructor parameters this object was built with that differ from their defaults
        (the table size and the seed left out)."""
        args, kwargs = self.__dict__.get("_constructed_with", ((), {}))
        signature = inspect.signature(type(self).__init__)
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError:
            return {}
        chosen: dict[str, Any] = {}
        for name, value in bound.arguments.items():
            parameter = signature.parameters[name]
            if name == "self" or name in RESERVED:
                continue
            if parameter.kind is inspect.Parameter.VAR_KEYWORD:
                chosen.update({key: item for key, item in value.items() if key not in RESERVED})
            elif parameter.kind is not inspect.Parameter.VAR_POSITIONAL and not _is_default(value, parameter.default):
                chosen[name] = value
        return chosen

    @property
    def label(self) -> str:
        """The policy's spec text: its registered name (or the class's import path) with the
        parameters that differ from the defaults, e.g. ``best_line(max_line_length=6)``.

        Results are reported under this label, so two differently built policies never
        share a row, and a policy gets the same label in Python and on the command line.
        """
        cls = type(self)
        name = cls.__dict__.get("registered_name") or f"{cls.__module__}.{cls.__qualname__}"
        return PolicySpec.of(name, self.parameters).label

    @classmethod
    def plays_by_default(cls, config: GameConfig) -> bool:
        """Whether the default league seats this policy at tables of `config` (a learned
        policy only where it ships a trained player for that table size)."""
        return True

    def reset(self) -> None:  # noqa: B027 - a hook: most policies keep nothing between hands
        """Called at the start of every hand; forget anything kept from the previous one."""

    @abstractmethod
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Return a legal action (an index where ``action_mask`` is 1)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({describe_table(self.config)})"


class SeesEveryHand(Policy):
    """A calibration player that is shown every seat's hand before each of its moves (not the
    boneyard's order): it measures how much the hidden tiles cost a player that must guess them.

    Only a loop that knows it can seat one: :func:`baselines.harness.play.play_game` (so
    ``dominoes evaluate``, the bench and the league) calls :meth:`show` with the whole engine
    state before each of its moves. Every other loop (the web server, the single-agent views, a
    user's own) never shows it anything, and its :meth:`act` then refuses in one line rather
    than play blind.
    """

    @abstractmethod
    def show(self, state: np.ndarray) -> None:
        """The hand's whole engine state (absolute seats; :meth:`dominoes_env.env.DominoesEnv.state`)
        at this player's next move."""


class BatchPolicy(Policy):
    """A policy that keeps nothing between moves, so one object can choose for many games at once.

    The batched envs (:class:`dominoes_env.SingleAgentVectorEnv`, the TD trainer's tables)
    seat one such object for all their games in a seat and call :meth:`act_batch` once per
    round; a policy that remembers things within a hand (persistent_line) cannot be shared
    that way, and they build one copy per game instead. :meth:`act_batch` chooses as
    :meth:`act` would for each row (a random policy draws differently, from the same
    distribution).
    """

    @abstractmethod
    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """(k, D) observations and (k, A) masks of k games -> (k,) int64 legal actions."""


# --------------------------------------------------------------------------- choosing in batches
# A batch policy (or a learner at many tables) lists every legal move of every game with
# ``rows, actions = np.nonzero(masks)``: one run of consecutive entries per game, actions
# ascending. These pick one entry in each run.
def first_minimum_per_run(values: np.ndarray, run_lengths: np.ndarray) -> np.ndarray:
    """Index (into `values`) of the first smallest value of each consecutive run, as
    ``np.argmin`` of each run would give it (runs of the given lengths, none empty): with the
    actions ascending in each run, ties go to the lowest action, the shared tie-break.

    Raises:
        FloatingPointError: a run holds a NaN (a diverged value function).
    """
    starts = np.cumsum(run_lengths) - run_lengths
    run_of = np.repeat(np.arange(run_lengths.shape[0]), run_lengths)
    at_minimum = np.flatnonzero(values == np.minimum.reduceat(values, starts)[run_of])
    first = np.ones(at_minimum.shape[0], dtype=np.bool_)
    first[1:] = run_of[at_minimum[1:]] != run_of[at_minimum[:-1]]
    chosen = at_minimum[first]
    if chosen.shape[0] != run_lengths.shape[0]:  # a run with a NaN has no smallest value
        raise FloatingPointError("values are not finite (NaN): some runs have no smallest value")
    return chosen


def random_per_run(run_lengths: np.ndarray, which: np.ndarray | None, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random index (into the runs' entries) within each run where `which` is True
    (a bool per run; None: every run): epsilon-greedy exploration of batched choosers, and
    the random policy's pick."""
    starts = np.cumsum(run_lengths) - run_lengths
    if which is None:
        return starts + (rng.random(run_lengths.shape[0]) * run_lengths).astype(np.int64)
    return starts[which] + (rng.random(int(which.sum())) * run_lengths[which]).astype(np.int64)


def explore_per_run(run_lengths: np.ndarray, rng: np.random.Generator, epsilon: float,
                    eligible: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Epsilon-greedy over runs (one run of legal moves per game): which runs explore (each with
    probability `epsilon`, among the `eligible` ones; None: all) and, for those, the index of a
    uniformly random entry. One draw per run, then one per exploring run, from `rng`: acting
    (:func:`choose_in_batch`) and learning (:func:`baselines.learning.tables.choose_by_value`)
    explore the same way."""
    explore = np.less(rng.random(run_lengths.shape[0]), epsilon)
    if eligible is not None:
        explore &= eligible
    return explore, random_per_run(run_lengths, explore, rng)


def choose_in_batch(action_masks: np.ndarray, value_moves: Callable[[np.ndarray, np.ndarray], np.ndarray],
                    rng: np.random.Generator | None = None, epsilon: float = 0.0) -> np.ndarray:
    """Each game's legal action of lowest value, the first among equals (the shared tie-break).

    ``value_moves(rows, actions)`` values the legal moves of the games that have a choice
    (`rows` index the games, each game's moves consecutive); a game with one legal move (a
    forced move, a pass, a draw) plays it unvalued. With `epsilon`, each game with a choice
    plays a uniformly random legal move instead with that probability, drawn from `rng`.
    """
    rows, actions = np.nonzero(action_masks)  # ordered by row, then action
    counts = np.bincount(rows, minlength=action_masks.shape[0])
    chosen = actions[np.cumsum(counts) - counts]  # a forced move as it is
    choosing = counts > 1
    if epsilon:
        assert rng is not None
        explore, picked = explore_per_run(counts, rng, epsilon, eligible=choosing)
        chosen[explore] = actions[picked]
        choosing &= ~explore
    if choosing.any():
        entries = np.repeat(choosing, counts)
        values = value_moves(rows[entries], actions[entries])
        chosen[choosing] = actions[entries][first_minimum_per_run(values, counts[choosing])]
    return chosen


def _is_default(value: Any, default: Any) -> bool:
    if value is default:
        return True
    if default is inspect.Parameter.empty or type(value) is not type(default):
        return False
    try:
        return bool(value == default)
    except (TypeError, ValueError):  # e.g. arrays: not a plain default
        return False


def _recording_arguments(init: Callable[..., None]) -> Callable[..., None]:
    """Wrap a subclass ``__init__`` so the object remembers the arguments it was built with
    (the outermost call only: that is the class the caller built)."""

    @functools.wraps(init)
    def record(self: Policy, *args: Any, **kwargs: Any) -> None:
        if "_constructed_with" not in self.__dict__:
            self.__dict__["_constructed_with"] = (args, dict(kwargs))
        init(self, *args, **kwargs)

    return record
