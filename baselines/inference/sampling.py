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

from baselines.inference.beliefs import Beliefs, UniformBeliefs, make_beliefs
from dominoes_env.core import validation
from dominoes_env.core.config import GameConfig
from dominoes_env.core.hidden import BONEYARD, HandKnowledge, deal_marginals, sample_deals

#: Exact draws per world kept: a pool this many times the worlds asked for.
POOL_FACTOR = 8


def believed_deals(knowledge: HandKnowledge, beliefs: np.ndarray | None, rng: np.random.Generator, count: int,
                   sharpness: float = 1.0, pool_factor: int = POOL_FACTOR,
                   marginals: np.ndarray | None = None) -> np.ndarray:
    """`count` deals of the hidden tiles (as :func:`sample_deals` gives them: each hidden tile's seat,
    or BONEYARD), drawn in proportion to `beliefs` (tiles x places, the player's frame; None: the
    uniform kind, the exact sampler's draws themselves). `marginals`: as :func:`importance_weights`.
    """
    if beliefs is None:
        return sample_deals(knowledge, rng, count)
    hidden = knowledge.hidden
    if hidden.shape[0] == 0:
        return sample_deals(knowledge, rng, count)
    pool = sample_deals(knowledge, rng, count * pool_factor)
    weights = importance_weights(knowledge, beliefs, pool, sharpness, marginals)
    chosen = rng.choice(pool.shape[0], size=count, p=weights / weights.sum())
    return pool[chosen]


def importance_weights(knowledge: HandKnowledge, beliefs: np.ndarray, deals: np.ndarray,
                       sharpness: float = 1.0, marginals: np.ndarray | None = None) -> np.ndarray:
    """(draws,) each exact draw's weight (largest 1): the product over hidden tiles of p / u at the
    tile's place in the draw, to the power `sharpness`.

    `marginals`: u, :func:`deal_marginals` of `knowledge` (hidden tiles x places), where the caller
    has them already (the beliefs counted them for their own probabilities: counting again would
    repeat the work); None counts them here. Either way the weights are the same, bit for bit.
    """
    hidden = knowledge.hidden
    columns = knowledge.config.num_players + 1
    if marginals is None:
        marginals = deal_marginals(knowledge)
    elif marginals.shape != (hidden.shape[0], columns):
        raise ValueError(f"marginals must be the uniform marginals of the knowledge, of shape "
                         f"{(hidden.shape[0], columns)}, got {marginals.shape}")
    places = np.where(deals == BONEYARD, knowledge.config.num_players, deals)
    ratio = np.log(np.maximum(beliefs[hidden], 1e-300)) - np.log(np.maximum(marginals, 1e-300))
    log_weights = sharpness * ratio[np.arange(hidden.shape[0]), places].sum(axis=1)
    return np.exp(log_weights - log_weights.max())


def same_facts(first: HandKnowledge, second: HandKnowledge) -> bool:
    """Whether two pieces of knowledge hold the same facts, and so the same uniform marginals (which
    read the table, the hidden tiles, the sizes and the forbidden values, nothing else)."""
    return first is second or (first.config == second.config and first.boneyard == second.boneyard
                               and np.array_equal(first.hidden, second.hidden)
                               and np.array_equal(first.hand_sizes, second.hand_sizes)
                               and np.array_equal(first.forbidden, second.forbidden))


class WorldSampler:
    """What a searching player draws its worlds with: the exact sampler under the ``"uniform"`` kind
    (today's draws, random number for random number), or importance resampling toward a learned kind.

    Feed it each of the player's observations (:meth:`observe`, in order, as the player's own
    tracker takes them, with what the tracker made of each) and ask for :meth:`deals` at a decision.
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

    def observe(self, observation: np.ndarray, knowledge: HandKnowledge | None = None) -> None:
        """Take one of the player's observations. `knowledge`: what the player's own tracker made of
        it; beliefs that take knowledge (``observe_knowledge``, the project's kinds) are given it,
        so that the hand is tracked once. A user's own kind, or no knowledge, gets the observation."""
        if self.beliefs is None:
            return
        take = getattr(self.beliefs, "observe_knowledge", None)
        if knowledge is not None and callable(take):
            take(knowledge)
        else:
            self.beliefs.observe(observation)

    def deals(self, knowledge: HandKnowledge, rng: np.random.Generator, count: int) -> np.ndarray:
        if self.beliefs is None:
            return believed_deals(knowledge, None, rng, count, self.sharpness)
        beliefs = self.beliefs.probabilities()
        return believed_deals(knowledge, beliefs, rng, count, self.sharpness, marginals=self._marginals(knowledge))

    def _marginals(self, knowledge: HandKnowledge) -> np.ndarray | None:
        """The uniform marginals the beliefs counted for :meth:`deals`' probabilities, where they are
        this knowledge's (the project's kinds keep them): the sampler's weights need the same, so
        they are counted once a decision. None (the weights count them): a user's own kind."""
        if not isinstance(self.beliefs, UniformBeliefs) or self.beliefs.knowledge is None \
                or not same_facts(self.beliefs.knowledge, knowledge):
            return None
        return self.beliefs.uniform_marginals()
