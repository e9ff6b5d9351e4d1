"""The features f(s, a) of a move: what Q(s, a) = w . f(s, a) is a weighted sum of (numpy, numba).

Each feature is a number of about unit size, read from the mover's observation and from the
after-state of the move (:func:`dominoes_env.core.afterstate.afterstates`: the observation
right after the move, built by the rules' own kernels), both through the named views of
:mod:`dominoes_env.core.observation`. Chains come from :mod:`baselines.chain_search` (the
exact best chain, reference discounts). Sizes are scaled by the table (N, the largest hand
M, the players), so the same names mean the same thing at every table size; the weights
learned for one table are still refused at another (the file records the table).

=====================  ==========================================================================
name                   value
=====================  ==========================================================================
bias                   1
tile_pips              pips of the tile played / 2N (0 for a pass)
is_double              the tile is a double (it gives another move)
on_own_line            the tile goes on my own line
on_other_line          the tile goes on another player's line (its marker is up)
on_dummy               the tile goes on the dummy line
is_pass                the move is a pass (legal only when nothing else is)
pips_left              pips left in my hand afterwards / (N M)
tiles_left             tiles left in my hand afterwards / M
chain_value            value of the best chain still playable from my line afterwards / (N M)
chain_tiles            tiles of that chain / M
off_chain_pips         pips of my hand left off that chain / (N M)
doubles_left_pips      pips of the doubles left in my hand / (N M) (they fit one value only)
playable_tiles         tiles of my hand that fit a line open to me afterwards / M
my_marker_up           my marker is up afterwards (my line is open to everyone)
feeds_others           the line I played on is open to others afterwards, times the share of
                       the tiles I cannot see that fit its new open value
opens_dummy            the move opens the dummy line (it starts the last unstarted line)
markers_up             share of the other players whose marker is up
opponent_near_out      1 / (fewest tiles an opponent holds): how close someone is to going out
pips_left_near_out     pips_left x opponent_near_out: pips held matter most when the hand may end
=====================  ==========================================================================

A move that ends the hand (going out, or blocking it) needs no estimate: its value is the
pips the mover still holds, exactly (the learner and the policy use that, see
:mod:`~baselines.linear_sarsa.policy`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from baselines.chain_search import (
    IN_LINE_DISCOUNT,
    MAX_LINE_LENGTH,
    OFF_LINE_DISCOUNT,
    best_chains,
    discount_powers,
)
from dominoes_env.core.afterstate import afterstates
from dominoes_env.core.config import GameConfig
from dominoes_env.core.observation import ObservationViews, observation_layout

FEATURES: tuple[str, ...] = (
    "bias", "tile_pips", "is_double", "on_own_line", "on_other_line", "on_dummy", "is_pass",
    "pips_left", "tiles_left", "chain_value", "chain_tiles", "off_chain_pips", "doubles_left_pips",
    "playable_tiles", "my_marker_up", "feeds_others", "opens_dummy", "markers_up", "opponent_near_out",
    "pips_left_near_out",
)


class Moves(NamedTuple):
    """Moves of many observations, each with its features.

    Attributes:
        features: (K, len(FEATURES)) float64, columns in the order of :data:`FEATURES`.
        ends_hand: (K,) whether the move ends the hand.
        pips_left: (K,) pips the mover holds after the move (its score if the move ends the hand).
    """

    features: np.ndarray
    ends_hand: np.ndarray
    pips_left: np.ndarray


class MoveFeatures:
    """f(s, a) for the moves of one table size and its table rules."""

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.layout = observation_layout(config)  # a multi-hand game only appends the scores
        tiles = config.tiles
        n, self.t, v = config.num_players, config.num_tiles, config.highest_double + 1
        self.n, self.pass_action = n, config.pass_action
        self.low, self.high = tiles.low, tiles.high
        self.pips = tiles.pips.astype(np.float64)
        self.double_pips = np.where(tiles.is_double, self.pips, 0.0)
        self.is_double = tiles.is_double
        self.has_value = np.zeros((v, self.t), dtype=np.float64)  # [value, tile]: the tile has that end
        self.has_value[tiles.low, np.arange(self.t)] = 1.0
        self.has_value[tiles.high, np.arange(self.t)] = 1.0
        self.engine = np.zeros((v, self.t), dtype=np.int64)  # [h, tile]: the tile is the engine (h|h)
        self.engine[np.arange(v), [tiles.double(h) for h in range(v)]] = 1
        self.max_hand = config.max_hand_size
        self.pip_scale = float(config.highest_double * self.max_hand)
        self.in_pow = discount_powers(IN_LINE_DISCOUNT, MAX_LINE_LENGTH)
        self.off_pow = discount_powers(OFF_LINE_DISCOUNT, MAX_LINE_LENGTH)

    @property
    def size(self) -> int:
        return len(FEATURES)

    def __call__(self, observations: np.ndarray, rows: np.ndarray, actions: np.ndarray) -> Moves:
        """The moves ``actions[k]`` of ``observations[rows[k]]`` (legal, never a draw: the tile drawn is
        unknown, so a draw has no after-state; it is always the only legal move)."""
        after_vectors, ends_hand = afterstates(observations, actions, self.config, rows=rows)
        before, after = self.layout.views(observations), self.layout.views(after_vectors)
        columns = {**self._move(actions), **self._hand_after(after), **self._lines_after(before, after, rows, actions)}
        columns.update(self._opponents(before, rows, columns["pips_left"]))
        features = np.stack([columns[name] for name in FEATURES], axis=1)
        return Moves(features, ends_hand, columns["pips_left"] * self.pip_scale)

    def _move(self, actions: np.ndarray) -> dict[str, np.ndarray]:
        """What the move is: the tile (none for a pass) and the line it goes on."""
        is_pass = actions >= self.pass_action
        tile, line = actions % self.t, actions // self.t
        plays = ~is_pass
        return {"bias": np.ones(actions.shape[0]),
                "tile_pips": np.where(plays, self.pips[tile], 0.0) / (2 * self.config.highest_double),
                "is_double": (plays & self.is_double[tile]).astype(np.float64),
                "on_own_line": (plays & (line == 0)).astype(np.float64),
                "on_other_line": (plays & (line > 0) & (line < self.n)).astype(np.float64),
                "on_dummy": (plays & (line == self.n)).astype(np.float64),
                "is_pass": is_pass.astype(np.float64)}

    def _hand_after(self, after: ObservationViews) -> dict[str, np.ndarray]:
        """My hand after the move and the best chain it can still lay on my own line."""
        hand = np.ascontiguousarray(after["hand"])
        own_open = after["open_values"][:, 0].argmax(axis=1).astype(np.int64)
        k = hand.shape[0]
        values, lengths, chain_pips = np.empty(k), np.empty(k, dtype=np.int64), np.empty(k, dtype=np.int64)
        best_chains(hand, own_open, self.low, self.high, self.in_pow, self.off_pow, MAX_LINE_LENGTH, values,
                    lengths, chain_pips)
        pips_left = hand @ self.pips
        return {"pips_left": pips_left / self.pip_scale,
                "tiles_left": hand.sum(axis=1) / self.max_hand,
                "chain_value": values / self.pip_scale,
                "chain_tiles": lengths / self.max_hand,
                "off_chain_pips": (pips_left - chain_pips) / self.pip_scale,
                "doubles_left_pips": hand @ self.double_pips / self.pip_scale}

    def _lines_after(self, before: ObservationViews, after: ObservationViews, rows: np.ndarray, actions: np.ndarray
                     ) -> dict[str, np.ndarray]:
        """Which lines are open to me, and to the others, after the move."""
        n, k = self.n, actions.shape[0]
        markers = after["markers"].astype(bool)
        dummy_open = after["dummy_open"][:, 0].astype(bool)
        open_to_me = np.concatenate([np.ones((k, 1), dtype=bool), markers[:, 1:], dummy_open[:, None]], axis=1)
        open_values = after["open_values"]  # (k, n + 1, V) one-hot
        values_open_to_me = (open_values * open_to_me[:, :, None]).any(axis=1)  # (k, V)
        fits = values_open_to_me.astype(np.float64) @ self.has_value > 0  # (k, T)
        playable = (after["hand"].astype(bool) & fits).sum(axis=1)
        # the line played on: open to the others when it is the dummy, or its owner's marker is up
        line = np.minimum(actions // self.t, n)
        played_tile = actions < self.pass_action
        open_to_others = np.where(line == n, True, markers[np.arange(k), np.minimum(line, n - 1)]) & played_tile
        new_value = open_values[np.arange(k), line].argmax(axis=1)
        seen = before["hand"][rows] + before["played"][rows].sum(axis=1) + before["hand_number"][rows] @ self.engine
        fitting_unseen = ((1 - seen) * self.has_value[new_value]).sum(axis=1)
        return {"playable_tiles": playable / self.max_hand,
                "my_marker_up": markers[:, 0].astype(np.float64),
                "feeds_others": open_to_others * fitting_unseen / (self.config.highest_double + 1),
                "opens_dummy": (dummy_open & ~before["dummy_open"][rows, 0].astype(bool)).astype(np.float64)}

    def _opponents(self, before: ObservationViews, rows: np.ndarray, pips_left: np.ndarray) -> dict[str, np.ndarray]:
        """How many others' lines are open, and how close the others are to going out."""
        fewest = before["hand_sizes"][rows, 1:].sum(axis=2).min(axis=1)
        near_out = 1.0 / np.maximum(fewest, 1)
        return {"markers_up": before["markers"][rows, 1:].mean(axis=1),
                "opponent_near_out": near_out,
                "pips_left_near_out": pips_left * near_out}
