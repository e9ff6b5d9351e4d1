"""The beliefs' interface, the uniform kind, and :func:`make_beliefs`, the one way to get a kind.

A belief is a prediction of where each hidden tile lies, so it is scored as one: the log
probability it gives each hidden tile's true place, against the uniform kind's on the same
positions (``benchmarks/belief_quality.py``).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np

from baselines.inference.network import BeliefWeights, balanced, load_weights, shipped_weights_file
from baselines.learning.files import ships
from dominoes_env.core import validation
from dominoes_env.core.config import GameConfig, describe_table
from dominoes_env.core.hidden import HandKnowledge, KnowledgeTracker, deal_marginals


@runtime_checkable
class Beliefs(Protocol):
    """Where one player believes each hidden tile lies, through a hand.

    :meth:`probabilities` is an array of shape (tiles, players + 1): rows in the env's tile
    order, columns the seats relative to the player (0 = the player, 1 = the next seat, ...)
    and the boneyard last. Each hidden tile's row sums to 1 and gives 0 to every place the
    hard facts rule out (a seat's size of 0, a value its pass proved it lacks, the boneyard
    at a table without one); the rows of tiles the player can see are 0.

    The project's kinds (:class:`UniformBeliefs` and its subclasses) also take
    ``observe_knowledge(knowledge)``: what a tracker the caller already keeps made of the
    observation, so that a searching player tracks the hand once, not twice. It is not part of
    this protocol: a user's own kind needs only the three methods below.
    """

    def reset(self) -> None:
        """A new hand: nothing is known yet."""

    def observe(self, observation: np.ndarray) -> None:
        """Take the player's observation at its decision (each one, in order)."""

    def probabilities(self) -> np.ndarray:
        """The beliefs after the latest observation."""


class UniformBeliefs:
    """Every deal that agrees with the hard facts alike: the exact sampler's marginals
    (:func:`dominoes_env.core.hidden.deal_marginals`), the baseline every other kind beats or not."""

    kind = "uniform"

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.tracker = KnowledgeTracker(config)
        self.knowledge: HandKnowledge | None = None
        self._marginals: tuple[HandKnowledge, np.ndarray] | None = None  # the latest knowledge's, once computed

    def reset(self) -> None:
        self.tracker.reset()
        self.knowledge = None
        self._marginals = None

    def observe(self, observation: np.ndarray) -> None:
        self.observe_knowledge(self.tracker.observe(observation))

    def observe_knowledge(self, knowledge: HandKnowledge) -> None:
        """Take what the player knows at its decision, as a tracker the caller keeps made it of the
        observation (a searching player's own :class:`KnowledgeTracker`): one tracker then serves
        both, where :meth:`observe` would read every observation a second time into this one's.
        Feed a hand through one of the two, not both: this one's tracker sees only :meth:`observe`.

        Raises:
            ValueError: not a HandKnowledge, or one of another table.
        """
        if not isinstance(knowledge, HandKnowledge):
            raise ValueError(f"knowledge must be a HandKnowledge (KnowledgeTracker.observe), got "
                             f"{validation.shown(knowledge)}")
        if knowledge.config != self.config:
            raise ValueError(f"the knowledge is of {describe_table(knowledge.config)}, these beliefs of "
                             f"{describe_table(self.config)}")
        self.knowledge = knowledge

    def uniform_marginals(self) -> np.ndarray:
        """(hidden tiles, places) the uniform marginals of the latest knowledge, read-only: computed
        once per observation however often they are asked, since the probabilities and the importance
        weights of the worlds drawn from them (:mod:`baselines.inference.sampling`) both need them,
        and counting the deals twice would do the same work again."""
        knowledge = self._latest()
        if self._marginals is None or self._marginals[0] is not knowledge:
            marginals = deal_marginals(knowledge)
            marginals.flags.writeable = False  # shared: a caller that changed it would change every other's
            self._marginals = (knowledge, marginals)
        return self._marginals[1]

    def probabilities(self) -> np.ndarray:
        knowledge = self._latest()
        beliefs = np.zeros((self.config.num_tiles, self.config.num_players + 1), dtype=np.float64)
        beliefs[knowledge.hidden] = self.uniform_marginals()
        return beliefs

    def _latest(self) -> HandKnowledge:
        """The latest knowledge; before any, a ValueError that says what to call first."""
        if self.knowledge is None:
            raise ValueError("no observation yet: call observe(observation) at the player's decision first")
        return self.knowledge


class NetworkBeliefs(UniformBeliefs):
    """The uniform marginals tilted by the tile-location network trained for the table
    (:mod:`baselines.inference.network`): what the hard facts leave, read the way self-play
    positions taught it. `weights`: a :class:`BeliefWeights` or a file (None: the one shipped).

    The shipped networks learned from the first hand of a game (the engine N|N of a double-N set);
    in a later hand (another engine) they have seen nothing alike, so there the beliefs are the
    uniform kind's.
    """

    kind = "network"

    def __init__(self, config: GameConfig, weights: BeliefWeights | str | os.PathLike[str] | None = None,
                 balance: bool = True) -> None:
        super().__init__(config)
        if weights is None:
            weights = shipped_weights_file(config)
        self.weights = weights if isinstance(weights, BeliefWeights) else load_weights(weights, config)
        if self.weights.config != config:
            raise ValueError(f"the beliefs network was trained for {describe_table(self.weights.config)}, "
                             f"not {describe_table(config)}")
        self.balance = balance

    def probabilities(self) -> np.ndarray:
        uniform = super().probabilities()
        knowledge = self.knowledge
        assert knowledge is not None
        if self.tracker.layout.views(knowledge.observation)["hand_number"].argmax() != self.config.highest_double:
            return uniform  # a later hand of a game: an engine the network never saw
        tilted = self.weights.beliefs(knowledge.observation[None], uniform[None])[0]
        if self.balance and knowledge.hidden.shape[0]:
            counts = np.append(knowledge.hand_sizes, knowledge.boneyard).astype(np.float64)
            counts[0] = 0.0
            tilted[knowledge.hidden] = balanced(tilted[knowledge.hidden], counts)
        return tilted


#: The kinds by name, each a factory of beliefs from the table (:mod:`baselines.inference.policy` adds
#: ``"policy"`` and ``"network+policy"`` where it defines them: it builds on the kinds here).
KINDS: dict[str, Callable[[GameConfig], Beliefs]] = {"uniform": UniformBeliefs, "network": NetworkBeliefs}
#: The kind :func:`make_beliefs` gives when none is named, at a table where the network's weights ship:
#: the best measured there, at every such table (docs/inference.md: the network's beliefs tilted by
#: what the opponents' plays say). Elsewhere, the uniform kind (:func:`default_kind`).
DEFAULT_KIND = "network+policy"


def default_kind(config: GameConfig) -> str:
    """The project's best kind at this table: :data:`DEFAULT_KIND` where its network ships for the
    table (and safetensors, which reads it, is installed), else ``"uniform"``."""
    readable = importlib.util.find_spec("safetensors") is not None
    return DEFAULT_KIND if readable and ships(shipped_weights_file, config) else "uniform"


def make_beliefs(config: GameConfig, kind: str | Callable[[GameConfig], Beliefs] | None = None) -> Beliefs:
    """Beliefs of one player at `config`'s table.

    Args:
        config: the table.
        kind: a name of :data:`KINDS` (None: :func:`default_kind`, the best at this table), or a user's own factory:
            a callable that takes the table and returns an object with ``reset``, ``observe``
            and ``probabilities``.

    Raises:
        ValueError: one line: a table that is not a GameConfig, an unknown kind (the known
            ones listed), or a factory whose result lacks one of the three methods.
    """
    if not isinstance(config, GameConfig):
        raise ValueError(f"config must be a GameConfig (dominoes_env.make_config), got {validation.shown(config)}")
    if kind is None:
        kind = default_kind(config)
    if isinstance(kind, str):
        factory = KINDS.get(kind)
        if factory is None:
            raise ValueError(f"kind must be one of {sorted(KINDS)} or a factory of beliefs, got {kind!r}")
    elif callable(kind):
        factory = kind
    else:
        raise ValueError(f"kind must be one of {sorted(KINDS)} or a factory of beliefs, got {validation.shown(kind)}")
    beliefs = factory(config)
    missing = [name for name in ("reset", "observe", "probabilities") if not callable(getattr(beliefs, name, None))]
    if missing:
        raise ValueError(f"the beliefs {validation.shown(beliefs)} made by kind {validation.shown(kind)} lack "
                         f"{', '.join(missing)}: beliefs have reset(), observe(observation) and probabilities()")
    return beliefs

