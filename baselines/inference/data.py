"""Labelled positions for learning beliefs: every decision of every seat in self-play, with the
truth the player could not see.

A position is what the player knew (its observation vector and the uniform kind's marginals,
which carry every hard fact) and, as the label, where each tile really lay in its frame: a seat
relative to it (0..n-1), n for the boneyard, -1 for a tile it can see. The deal is the label,
so the engine makes as many as a run wants, at a few thousand a second on one core.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import dominoes_env
from baselines.policies import registry, specs
from dominoes_env.core import rules
from dominoes_env.core.config import GameConfig
from dominoes_env.core.hidden import KnowledgeTracker, deal_marginals
from dominoes_env.core.observation import observation_layout

#: The most positions one call gathers (a few GB at the largest table).
MAX_POSITIONS = 5_000_000


def true_places(env: dominoes_env.DominoesEnv, seat: int) -> np.ndarray:
    """(tiles,) each tile's place in `seat`'s frame: a seat 0..n-1 relative to it, n for the boneyard,
    -1 on the table or the engine. Reads the engine's state: for labels and scores only."""
    game = env.game
    assert game is not None, "true_places reads a position: reset the env first"
    config = game.config
    n = config.num_players
    owner = np.asarray(game.hand.state[rules.HEADER_SIZE:rules.HEADER_SIZE + config.num_tiles], dtype=np.int64)
    return np.where(owner == rules.IN_BONEYARD, n, np.where((owner >= 0) & (owner < n), (owner - seat) % n, -1))


@dataclass
class Positions:
    """Labelled positions of one table, row by row.

    Attributes:
        observations: (N, D) int8, the player's observation vector (one-hand layout).
        marginals: (N, T, n + 1) float16, the uniform kind's beliefs (0 on tiles the player sees).
        places: (N, T) int8, each tile's true place in the player's frame (-1: the player sees it).
        hands: (N,) int32, the hand (its offset from the seed) each position comes from, so that a
            split by hand keeps positions of one hand together.
    """

    observations: np.ndarray
    marginals: np.ndarray
    places: np.ndarray
    hands: np.ndarray

    def save(self, path: str) -> None:
        np.savez(path, observations=self.observations, marginals=self.marginals, places=self.places,
                 hands=self.hands)

    @classmethod
    def load(cls, path: str) -> Positions:
        with np.load(path) as arrays:
            return cls(arrays["observations"], arrays["marginals"], arrays["places"], arrays["hands"])


def self_play_positions(config: GameConfig, positions: int, seed: int, player: str = "td_lambda",
                        keep: float = 1.0, progress: Callable[[int], None] | None = None) -> Positions:
    """At least `positions` labelled positions (to the end of a hand, so a few more), from hands dealt
    with seeds `seed`, `seed` + 1, ..., `player` (a policy spec) in every seat. Each decision is kept
    with probability `keep` (drawn from `seed`): the positions of one hand are much alike, so fewer
    of each hand from more hands teach more for the same memory. `progress(k)` is told the
    positions each hand added."""
    keeping = np.random.default_rng(seed)
    spec = specs.parse(player)[0]
    n, t = config.num_players, config.num_tiles
    size = observation_layout(config).size
    capacity = positions + 4096
    observations = np.zeros((capacity, size), dtype=np.int8)
    marginals = np.zeros((capacity, t, n + 1), dtype=np.float16)
    places = np.zeros((capacity, t), dtype=np.int8)
    hands = np.zeros(capacity, dtype=np.int32)
    env = dominoes_env.raw_env(config)
    count, hand = 0, 0
    while count < positions:
        before = count
        env.reset(seed=seed + hand)
        players = [registry.build(spec, config, seed=(seed + hand) * 16 + seat) for seat in range(n)]
        trackers = [KnowledgeTracker(config) for _ in range(n)]
        for agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            seat = env.possible_agents.index(agent)
            knowledge = trackers[seat].observe(observation["observation"])
            action = int(players[seat].act(observation["observation"], observation["action_mask"]))
            if keep < 1.0 and keeping.random() >= keep:
                env.step(action)
                continue
            if count == capacity:
                capacity *= 2
                observations, marginals, places, hands = (np.resize(array, (capacity, *array.shape[1:]))
                                                          for array in (observations, marginals, places, hands))
            observations[count] = observation["observation"][:size]
            marginals[count] = 0
            marginals[count, knowledge.hidden] = deal_marginals(knowledge)
            places[count] = -1
            places[count, knowledge.hidden] = true_places(env, seat)[knowledge.hidden]
            hands[count] = hand
            count += 1
            env.step(action)
        hand += 1
        if progress is not None:
            progress(count - before)
    return Positions(observations[:count], marginals[:count], places[:count], hands[:count])
