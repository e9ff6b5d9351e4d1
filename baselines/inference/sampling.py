"""Worlds drawn from beliefs, never against a hard fact.

The exact sampler (:func:`dominoes_env.core.hidden.sample_deals`) draws deals uniformly among
those that agree with every fact. Beliefs that say more (a learned kind) are brought in by
importance resampling: a pool of exact draws, each weighted by how much more likely the beliefs
find its tiles' places than the uniform marginals do (the product over the hidden tiles of
p / u, raised to a `sharpness` in (0, 1] that keeps a few confident rows from deciding alone),
then drawn from in proportion to the weights. Every world comes out of the exact sampler, so none
contradicts a fact; with the uniform kind the weights are all 1 and the draws are the exact
sampler's own (the same random numbers, so the same worlds).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from baselines.inference.beliefs import Beliefs, make_beliefs
from dominoes_env.core import validation
from dominoes_env.core.config import GameConfig
from dominoes_env.core.hidden import BONEYARD, HandKnowledge, deal_marginals, sample_deals

#: Exact draws per world kept: a pool this many times the worlds asked for.
POOL_FACTOR = 8


def believed_deals(knowledge: HandKnowledge, beliefs: np.ndarray | None, rng: np.random.Generator, count: int,
                   sharpness: float = 1.0, pool_factor: int = POOL_FACTOR) -> np.ndarray:
    """`count` deals of the hidden tiles (as :func:`sample_deals` gives them: each hidden tile's seat,
    or BONEYARD), drawn in proportion to `beliefs` (tiles x places, the player's frame; None: the
    uniform kind, the exact sampler's draws themselves).
    """
    if beliefs is None:
        return sample_deals(knowledge, rng, count)
    hidden = knowledge.hidden
    if hidden.shape[0] == 0:
        return sample_deals(knowledge, rng, count)
    pool = sample_deals(knowledge, rng, count * pool_factor)
    weights = importance_weights(knowledge, beliefs, pool, sharpness)
    chosen = rng.choice(pool.shape[0], size=count, p=weights / weights.sum())
    return pool[chosen]


def importance_weights(knowledge: HandKnowledge, beliefs: np.ndarray, deals: np.ndarray,
                       sharpness: float = 1.0) -> np.ndarray:
    """(draws,) each exact draw's weight (largest 1): the product over hidden tiles of p / u at the
    tile's place in the draw, to the power `sharpness`."""
    hidden = knowledge.hidden
    places = np.where(deals == BONEYARD, knowledge.config.num_players, deals)
    ratio = np.log(np.maximum(beliefs[hidden], 1e-300)) - np.log(np.maximum(deal_marginals(knowledge), 1e-300))
    log_weights = sharpness * ratio[np.arange(hidden.shape[0]), places].sum(axis=1)
    return np.exp(log_weights - log_weights.max())


def effective_share(knowledge: HandKnowledge, beliefs: np.ndarray, rng: np.random.Generator, draws: int = 256,
                    sharpness: float = 1.0) -> float:
    """The effective sample size of the importance weights over `draws` exact draws, as a share of
    them (1: the beliefs agree with the uniform kind; near 1/draws: one draw carries all the weight)."""
    hidden = knowledge.hidden
    if hidden.shape[0] == 0:
        return 1.0
    weights = importance_weights(knowledge, beliefs, sample_deals(knowledge, rng, draws), sharpness)
    return float(weights.sum() ** 2 / (weights ** 2).sum() / draws)


class WorldSampler:
    """What a searching player draws its worlds with: the exact sampler under the ``"uniform"`` kind
    (today's draws, random number for random number), or importance resampling toward a learned kind.

    Feed it each of the player's observations (:meth:`observe`, in order, as the player's own
    tracker takes them) and ask for :meth:`deals` at a decision.
    """

    def __init__(self, config: GameConfig, inference: str | Callable[[GameConfig], Beliefs] | None = "uniform",
                 sharpness: float = 1.0) -> None:
        self.uniform = inference == "uniform"
        self.beliefs = None if self.uniform else make_beliefs(config, inference)
        self.sharpness = validation.real("sharpness", sharpness, 1e-3, 1.0, allowed="a share in (0, 1]")

    @property
    def kind(self) -> str:
        """The kind's name (a user's own kind: its type's name)."""
        return "uniform" if self.beliefs is None else str(getattr(self.beliefs, "kind", type(self.beliefs).__name__))

    def reset(self) -> None:
        if self.beliefs is not None:
            self.beliefs.reset()

    def observe(self, observation: np.ndarray) -> None:
        if self.beliefs is not None:
            self.beliefs.observe(observation)

    def deals(self, knowledge: HandKnowledge, rng: np.random.Generator, count: int) -> np.ndarray:
        beliefs = None if self.beliefs is None else self.beliefs.probabilities()
        return believed_deals(knowledge, beliefs, rng, count, self.sharpness)
