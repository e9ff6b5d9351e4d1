"""The ``lookahead`` policy (docs/baselines.md): sampled worlds, played forward, scored by an evaluation.

At each decision with a choice, the player samples `samples` deals of the tiles it cannot
see that agree with everything its observations prove (:mod:`dominoes_env.core.hidden`)
and plays every legal move in each. Then, `depth` times, the other seats move with a fast
rollout policy (default greedy) until the player is to move again, and the player plays the
move its evaluation likes best (:mod:`baselines.lookahead.search`). A move's score blends
the predicted final pips after the candidate move and after each later move of the
player's (weights ``discount**j``, normalised; exact pips once the hand is over), averaged
over the samples. It plays uniformly among the moves scored within `window` pips of the
best, as the design (docs/baselines.md) chose at random among the moves near the best; `epsilon` (training only)
plays a random legal move instead. The same samples serve every move, so moves are
compared in the same worlds."""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from baselines.inference import Beliefs
from baselines.inference.sampling import WorldSampler
from baselines.learning.files import file_version, ships
from baselines.lookahead.evaluation import Evaluation, LinearEvaluation, TDValueEvaluation
from baselines.lookahead.search import ROLLOUT_POLICIES, Search
from baselines.lookahead.weights import LookaheadWeights, load_weights, shipped_weights
from baselines.policies.policy import Policy, SeedLike
from baselines.policies.registry import register_policy
from dominoes_env.core import validation
from dominoes_env.core.config import GameConfig, describe_table
from dominoes_env.core.hidden import KnowledgeTracker, sampled_states

EVALUATIONS = ("linear", "td_lambda")
MAX_SAMPLES = 4096
MAX_DEPTH = 64


@lru_cache(maxsize=16)
def _weights_from_file(resolved: str, modified_ns: int, size: int) -> LookaheadWeights:
    """Load once per file version: the league makes fresh policies for every game."""
    return load_weights(resolved)


@register_policy("lookahead")
class LookaheadPolicy(Policy):
    """Samples the hidden hands, plays every move forward, plays the best (docs/baselines.md).

    Args:
        samples: sampled worlds per decision.
        depth: the player's own later moves played in each world after the candidate move;
            before each, the other seats move with the rollout policy, and the player plays
            the move its evaluation likes best.
        discount: weight of the value after each later move, relative to the one before.
        window: moves scored within this many pips of the best are equally good.
        evaluation: "linear" (its own learned weights) or "td_lambda" (the shipped TD
            value network, in numpy).
        rollout: how every seat moves in the rollouts: "greedy", "double" or "random".
        checkpoint: a weights file of ``dominoes train lookahead`` (default: the shipped one;
            ``lookahead@FILE`` in a spec), or :class:`~baselines.lookahead.weights.LookaheadWeights`
            in memory; linear evaluation only.
        epsilon: probability of a uniformly random legal move instead (training only).
        inference: the beliefs its worlds are drawn from (:mod:`baselines.inference`):
            ``"uniform"`` (the exact sampler, every agreeing deal alike), a kind's name, or a
            factory of beliefs.
        sharpness: the power, in (0, 1], of the beliefs' importance weights (1: as believed).
    """

    def __init__(self, num_players: int | GameConfig = 4, highest_double: int = 9, seed: SeedLike = None,
                 samples: int = 16, depth: int = 1, discount: float = 1.0, window: float = 0.05,
                 evaluation: str = "linear", rollout: str = "greedy",
                 checkpoint: str | os.PathLike[str] | LookaheadWeights | None = None, epsilon: float = 0.0,
                 inference: str | Callable[[GameConfig], Beliefs] = "uniform", sharpness: float = 1.0) -> None:
        super().__init__(num_players, highest_double, seed)
        self.samples = validation.integer("samples", samples, 1, MAX_SAMPLES)
        self.depth = validation.integer("depth", depth, 0, MAX_DEPTH)
        self.discount = validation.real("discount", discount, 0.0, 100.0)
        self.window = validation.real("window", window, 0.0, 1e6)
        self.evaluation_name = validation.choice("evaluation", evaluation, EVALUATIONS)
        self.rollout = validation.choice("rollout", rollout, ROLLOUT_POLICIES)
        self.epsilon = validation.real("epsilon", epsilon, 0.0, 1.0, allowed="a probability")
        if self.evaluation_name == "td_lambda":
            if checkpoint is not None:
                raise ValueError("a checkpoint is the linear evaluation's weights; evaluation='td_lambda' uses the "
                                 "shipped TD(lambda) checkpoint")
            self.evaluation: Evaluation = TDValueEvaluation(self.config)
        else:
            self.evaluation = LinearEvaluation(self.config, self._linear_weights(checkpoint).w)
        powers = self.discount ** np.arange(self.depth + 1, dtype=np.float64)
        tiles = self.config.tiles
        self.search = Search(tiles.low, tiles.high, tiles.tiles_with_value, self.evaluation.values, self.depth,
                             powers / powers.sum(), ROLLOUT_POLICIES.index(self.rollout))
        self.tracker = KnowledgeTracker(self.config)
        self.sampler = WorldSampler(self.config, inference, sharpness)

    def _linear_weights(self, weights: str | os.PathLike[str] | LookaheadWeights | None) -> LookaheadWeights:
        if isinstance(weights, LookaheadWeights):
            loaded = weights
        elif weights is None or isinstance(weights, (str, os.PathLike)):
            loaded = _weights_from_file(*file_version(weights, lambda: shipped_weights(self.config),
                                                      "lookahead weights"))
        else:
            raise ValueError(f"checkpoint must be a file path or LookaheadWeights, got {weights!r}")
        if loaded.config.game != self.config:
            raise ValueError(f"lookahead weights were trained for {describe_table(loaded.config.game)}, not "
                             f"{describe_table(self.config)}")
        return loaded

    @classmethod
    def plays_by_default(cls, config: GameConfig) -> bool:
        """The default league seats lookahead where its trained weights ship."""
        return ships(shipped_weights, config)

    def reset(self) -> None:
        self.tracker.reset()
        self.sampler.reset()

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        knowledge = self.tracker.observe(observation)  # every observation, forced moves too
        self.sampler.observe(observation, knowledge)  # the beliefs take this tracker's knowledge: one tracker
        legal = np.flatnonzero(action_mask)
        if legal.shape[0] == 1:
            return int(legal[0])
        if self.epsilon and self.rng.random() < self.epsilon:
            return int(legal[self.rng.integers(legal.shape[0])])
        worlds = sampled_states(knowledge, self.sampler.deals(knowledge, self.rng, self.samples), self.rng)
        scores = self.move_scores(worlds, legal)
        near_best = legal[scores <= scores.min() + self.window]
        return int(near_best[self.rng.integers(near_best.shape[0])] if near_best.shape[0] > 1 else near_best[0])

    def move_scores(self, worlds: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Each action's score (predicted final pips, lower is better) over the sampled worlds
        (engine states in the player's frame: it is seat 0, to move)."""
        return self.search.scores(worlds, actions.astype(np.int64), self.rng)

    def __repr__(self) -> str:
        return (f"LookaheadPolicy({describe_table(self.config)}, samples={self.samples}, depth={self.depth}, "
                f"evaluation={self.evaluation_name!r}, inference={self.sampler.kind!r})")
