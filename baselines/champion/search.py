"""Information-set Monte Carlo tree search (single observer), guided by a value network.

One tree is grown over the player's information set (Cowling, Powley and Whitehouse,
2012: SO-ISMCTS). Each simulation takes one world (a deal of the hidden tiles that agrees
with everything the player has seen, :mod:`dominoes_env.core.hidden`), walks the tree in it
and adds one node. A node is reached by an action (the mover's own encoding); since every
move is seen by all seats, the same node serves every world in which that history is
possible. At a node only the moves legal in the simulation's world compete, and a move's
exploration term counts the simulations in which it was available, not the parent's visits
(the subset-armed bandit of the paper); each node keeps the average utility of the seat that
moved into it, so every seat picks its own best move.

Why this and not the look-ahead's sampled worlds searched one by one: there the player
plays its later moves knowing the world it is in (strategy fusion); here it must choose one
move for the whole information set at every node of its own.

The network guides in two places (PUCT, as AlphaZero): a new node is valued by the
network's predicted final pips of every seat (utility: the seat's pips below the other
seats' average); and each move's prior is a softmax over the predicted final pips of the
mover's after-states (its own observation of the world). Forced moves (draws, passes, a
single legal tile) are walked through without a choice or an evaluation.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from dominoes_env.core import rules


class Guide(Protocol):
    """What the search asks the network: see :class:`baselines.champion.network.NetworkGuide`."""

    def seat_pips(self, state: np.ndarray) -> np.ndarray:
        """Predicted final pips of every seat in a hand going on (absolute seats)."""
        ...

    def move_priors(self, state: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Prior probabilities of the mover's legal `actions` in `state` (they sum to 1)."""
        ...


@dataclass(frozen=True)
class SearchSettings:
    """How hard the search looks.

    Attributes:
        simulations: simulations per decision (an upper bound when `milliseconds` is set).
        milliseconds: a time budget per decision (None: `simulations` alone).
        worlds: sampled deals of the hidden tiles, used in turn by the simulations.
        exploration: PUCT's constant c (utilities are in pips / `pip_scale`).
        pip_scale: pips per unit of utility.
    """

    simulations: int = 400
    milliseconds: float | None = None
    worlds: int = 32
    exploration: float = 1.5
    pip_scale: float = 10.0


class Node:
    """Statistics of one move in the tree: its visits, availability, prior and the summed
    utility of the seat that played it; its children by action."""

    __slots__ = ("children", "visits", "available", "utility", "prior")

    def __init__(self, prior: float) -> None:
        self.children: dict[int, Node] = {}
        self.visits = 0
        self.available = 0
        self.utility = 0.0
        self.prior = prior


def seat_utilities(pips: np.ndarray, scale: float) -> np.ndarray:
    """Each seat's utility: the other seats' average pips minus its own, in units of `scale`."""
    n = pips.shape[0]
    others = (pips.sum() - pips) / (n - 1)
    return (others - pips) / scale


class InformationSetSearch:
    """SO-ISMCTS for one table (the engine's tile tables), guided by `guide`."""

    def __init__(self, low: np.ndarray, high: np.ndarray, tiles_with_value: np.ndarray, num_actions: int,
                 guide: Guide, settings: SearchSettings) -> None:
        self.low, self.high, self.tiles_with_value = low, high, tiles_with_value
        self.guide, self.settings = guide, settings
        self._legal = np.empty(num_actions, dtype=np.int64)
        self._scores = np.empty(0, dtype=np.int64)

    def run(self, worlds: np.ndarray, rng: np.random.Generator) -> dict[int, Node]:
        """Grow a tree from the root (worlds: engine states in the player's frame, the player
        to move) and return the root's children by action."""
        settings = self.settings
        root = Node(1.0)
        deadline = None if settings.milliseconds is None else time.perf_counter() + settings.milliseconds / 1000
        scratch = np.empty_like(worlds[0])
        self._scores = np.empty(int(worlds[0][rules.NUM_PLAYERS]), dtype=np.int64)
        for simulation in range(settings.simulations):
            np.copyto(scratch, worlds[simulation % worlds.shape[0]])
            self._simulate(root, scratch)
            if deadline is not None and time.perf_counter() > deadline and simulation >= 1:
                break
        return root.children

    def _simulate(self, root: Node, state: np.ndarray) -> None:
        path: list[tuple[Node, int]] = []  # (node, seat that moved into it)
        node = root
        expanded = False
        while state[rules.HAND_OVER] == 0:
            mover = int(state[rules.CURRENT_PLAYER])
            count = rules.fill_legal_actions(state, self.tiles_with_value, self._legal)
            legal = self._legal[:count]
            if count == 1:
                action = int(legal[0])
                child = node.children.get(action)
                if child is None:
                    child = node.children[action] = Node(1.0)
                child.available += 1
            else:
                if expanded:
                    break
                action, child, expanded = self._select(node, state, legal)
            rules.apply_action(state, self.low, self.high, self.tiles_with_value, action)
            path.append((child, mover))
            node = child
        utilities = self._leaf_utilities(state)
        for visited, mover in path:
            visited.visits += 1
            visited.utility += utilities[mover]

    def _select(self, node: Node, state: np.ndarray, legal: np.ndarray) -> tuple[int, Node, bool]:
        """PUCT over the moves legal in this world; an unseen move gets its prior first."""
        children = node.children
        actions = legal.tolist()
        if any(action not in children for action in actions):
            priors = self.guide.move_priors(state, legal)
            for action, prior in zip(actions, priors.tolist()):
                if action not in children:
                    children[action] = Node(prior)
        exploration = self.settings.exploration
        best, best_score, best_child = -1, -math.inf, None
        for action in actions:
            child = children[action]
            child.available += 1
            mean = child.utility / child.visits if child.visits else 0.0
            score = mean + exploration * child.prior * math.sqrt(child.available) / (1 + child.visits)
            if score > best_score:
                best, best_score, best_child = action, score, child
        assert best_child is not None
        return best, best_child, best_child.visits == 0

    def _leaf_utilities(self, state: np.ndarray) -> list[float]:
        if state[rules.HAND_OVER]:
            rules.hand_scores(state, self.low, self.high, self._scores)
            pips = self._scores.astype(np.float64)
        else:
            pips = self.guide.seat_pips(state)
        return seat_utilities(pips, self.settings.pip_scale).tolist()
