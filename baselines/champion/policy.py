"""The ``champion`` policy: information-set search guided by a value network (docs/champion.md).

At each decision with a choice it samples `worlds` deals of the tiles it cannot see that agree
with everything its observations prove (:mod:`dominoes_env.core.hidden`), grows one search
tree over them (:mod:`baselines.champion.search`) and plays the move visited most. Its network
is a td_lambda-format value network trained by ``dominoes train champion``; it acts in numpy.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from baselines.champion.network import NetworkGuide
from baselines.champion.search import InformationSetSearch, SearchSettings
from baselines.inference import Beliefs
from baselines.inference.sampling import WorldSampler
from baselines.learning.files import shipped_file, shipped_tables, ships
from baselines.policies.policy import Policy, SeedLike
from baselines.policies.registry import register_policy
from baselines.td_lambda.checkpoint import Checkpoint, shipped_checkpoint
from baselines.td_lambda.policy import TDLambdaPolicy
from dominoes_env.core import validation
from dominoes_env.core.config import GameConfig, describe_table, table_arguments
from dominoes_env.core.hidden import HandKnowledge, KnowledgeTracker, sampled_states

MAX_SIMULATIONS = 100_000
MAX_WORLDS = 4096


def shipped_weights(config: GameConfig) -> Path:
    """The network the champion searches with at a table by default: its own trained file
    (``champion_TABLE.safetensors``) where one ships, else the shipped td_lambda checkpoint of
    the table (the network expert iteration starts from; docs/champion.md says why it is the
    default where no trained file measured stronger).

    Raises:
        ValueError: neither ships for the table (the message lists the tables td_lambda has
            weights for and the command that trains the missing one).
    """
    try:
        return shipped_file("champion", "safetensors", config, "weights", "champion")
    except ValueError:
        pass
    try:
        return shipped_checkpoint(config)
    except ValueError:
        tables = "; ".join(describe_table(table) for table in shipped_tables("td_lambda", "safetensors"))
        raise ValueError(f"no champion network ships for {describe_table(config)} (it plays where td_lambda's "
                         f"network ships: {tables}); train one with `dominoes train champion"
                         f"{table_arguments(config)}` and pass checkpoint=PATH") from None


def network_words(path: Path) -> str:
    """Which shipped network a file is, in words: the champion's own for its table, or td_lambda's
    (where no champion network ships, the champion says so: a reader must not take td_lambda's
    network for one trained by search)."""
    if path.name.startswith("champion_"):
        return f"its own network ({path.name})"
    return f"td_lambda's network ({path.name}): no champion network ships for this table"


def best_move(visits: np.ndarray, utilities: np.ndarray) -> int:
    """The index of the most visited move; among equals, the one of highest mean utility."""
    most = visits == visits.max()
    return int(np.flatnonzero(most)[np.argmax(utilities[most])])


@register_policy("champion")
class ChampionPolicy(Policy):
    """Searches the information set (SO-ISMCTS), guided by a value network.

    Args:
        simulations: simulations per decision (with `milliseconds`, the most it may run).
        milliseconds: a time budget per decision instead (None: by simulations only).
        worlds: sampled deals of the hidden tiles per decision.
        exploration: PUCT's constant.
        temperature: of the prior's softmax over after-state values, in pips.
        checkpoint: the network: a file written by ``dominoes train champion`` (or any
            td_lambda checkpoint of the table: ``champion@FILE`` in a spec), or a
            :class:`~baselines.td_lambda.checkpoint.Checkpoint` in memory; default: the
            network shipped for the table (:func:`shipped_weights`).
        inference: the beliefs its worlds are drawn from (:mod:`baselines.inference`):
            ``"uniform"`` (every deal that agrees with the facts alike: the exact sampler), a
            kind's name, or a factory of beliefs.
        sharpness: the power, in (0, 1], of the beliefs' importance weights (1: as believed).

    Attributes:
        network_source: which network it searches with, in words: its own shipped one, td_lambda's
            where no champion network ships for the table (it says so), or the file given.

    Raises:
        ValueError: a setting out of bounds, a weights file missing, damaged or made for
            another table, or no network shipped for this table and none given.
    """

    def __init__(self, num_players: int | GameConfig = 4, highest_double: int = 9, seed: SeedLike = None,
                 simulations: int = 400, milliseconds: float | None = None, worlds: int = 32,
                 exploration: float = 1.5, temperature: float = 2.0,
                 checkpoint: str | os.PathLike[str] | Checkpoint | None = None,
                 inference: str | Callable[[GameConfig], Beliefs] = "uniform", sharpness: float = 1.0) -> None:
        super().__init__(num_players, highest_double, seed)
        self.settings = SearchSettings(
            simulations=validation.integer("simulations", simulations, 1, MAX_SIMULATIONS),
            milliseconds=None if milliseconds is None else validation.real("milliseconds", milliseconds, 0.1, 1e7),
            worlds=validation.integer("worlds", worlds, 1, MAX_WORLDS),
            exploration=validation.real("exploration", exploration, 0.0, 1e3),
        )
        temperature = validation.real("temperature", temperature, 1e-3, 1e3)
        if checkpoint is None:
            checkpoint = shipped_weights(self.config)
            self.network_source = network_words(checkpoint)
        else:
            self.network_source = "a network in memory" if isinstance(checkpoint, Checkpoint) else f"{checkpoint}"
        network = TDLambdaPolicy(self.config, checkpoint=checkpoint)
        self.guide = NetworkGuide(self.config, network.value, network.features, temperature)
        tiles = self.config.tiles
        self.search = InformationSetSearch(tiles.low, tiles.high, tiles.tiles_with_value, self.config.num_actions,
                                           self.guide, self.settings)
        self.tracker = KnowledgeTracker(self.config)
        self.sampler = WorldSampler(self.config, inference, sharpness)
        self._last_seen: tuple[bytes, HandKnowledge] | None = None  # the latest observation and its knowledge

    @classmethod
    def plays_by_default(cls, config: GameConfig) -> bool:
        """The default league seats the champion where a network ships for the table (its own or td_lambda's)."""
        return ships(shipped_weights, config)

    def reset(self) -> None:
        self.tracker.reset()
        self.sampler.reset()
        self._last_seen = None

    def observe(self, observation: np.ndarray) -> HandKnowledge:
        """Take one of the player's observations into its knowledge of the hidden tiles (each must be
        seen, in order: :meth:`act` does it; a hint giver that is asked only now and then calls this
        at every turn). The same observation again is not new: its knowledge is reused."""
        key = np.asarray(observation).tobytes()
        if self._last_seen is None or self._last_seen[0] != key:
            knowledge = self.tracker.observe(observation)
            self._last_seen = (key, knowledge)
            self.sampler.observe(observation, knowledge)  # the beliefs take this tracker's knowledge: one tracker
        return self._last_seen[1]

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        actions, visits, utilities = self.visits(observation, action_mask)
        return int(actions[best_move(visits, utilities)])

    def visits(self, observation: np.ndarray, action_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Search from this observation (its player to move): the legal actions, ascending, with
        each one's visits at the root and the mover's mean utility there (0 where unvisited).
        A forced move is not searched (one visit). Every observation of the player's must pass
        through here or :meth:`act`: its knowledge of the hidden tiles is built from them."""
        knowledge = self.observe(observation)
        legal = np.flatnonzero(action_mask)
        if legal.shape[0] == 1:
            return legal, np.ones(1, dtype=np.int64), np.zeros(1)
        children = self.search.run(self.worlds(knowledge), self.rng)
        visits = np.array([children[a].visits if a in children else 0 for a in legal.tolist()], dtype=np.int64)
        utilities = np.array([children[a].utility / children[a].visits if a in children and children[a].visits
                              else 0.0 for a in legal.tolist()])
        return legal, visits, utilities

    def worlds(self, knowledge: HandKnowledge) -> np.ndarray:
        """The engine states the search grows its tree over (the player's frame, it to move):
        `worlds` deals of the hidden tiles, each agreeing with everything it has seen, drawn from its beliefs."""
        return sampled_states(knowledge, self.sampler.deals(knowledge, self.rng, self.settings.worlds), self.rng)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({describe_table(self.config)}, {self.settings}, "
                f"searching with {self.network_source}, {self.sampler.kind} beliefs)")
