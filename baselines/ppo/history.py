"""What the hand so far proved about the other seats, as input to ppo's network: its history feature.

The one-hand observation shows the table as it is now, not how it got there: who passed while
which values were open is gone once the next move is made. A person at the table remembers it
("the next seat passed on a 4: it holds no 4"), and so does :class:`~dominoes_env.core.hidden.KnowledgeTracker`,
which every searching player runs. ``history="passes"`` gives the network that memory: besides
the observation it reads, for every other seat k and every pip value v, whether the hand so far
proves that seat k holds no tile with an end v (the tracker's ``forbidden`` matrix, seats
relative to the player). ``"none"`` (the default) is the observation alone.

:class:`PassFacts` keeps those facts for many (game, seat) pairs at once, for the trainer's
batched games and, with one game, for the player: one compiled kernel (:func:`_observe_row`)
that repeats the tracker's reading of two consecutive observations of one seat, so training and
play read the same facts. The tracker stays the reference: a test checks every decision of
self-play at several tables against it.
"""

from __future__ import annotations

import numpy as np

from dominoes_env.core import observation as layout_slots
from dominoes_env.core.compiled import kernel
from dominoes_env.core.config import GameConfig
from dominoes_env.core.observation import observation_layout

HISTORY = ("none", "passes")  #: the history features ppo's network can read (see the module)


def history_size(config: GameConfig, history: str) -> int:
    """Inputs the history feature adds to the observation: (players - 1) x (highest double + 1) for
    "passes", 0 for "none"."""
    return 0 if history == "none" else (config.num_players - 1) * (config.highest_double + 1)


class PassFacts:
    """The facts of every seat of `games` games: feed each seat's observations in order with
    :meth:`observe`, :meth:`reset` games at each new hand."""

    def __init__(self, config: GameConfig, games: int) -> None:
        self.config = config
        layout = observation_layout(config)
        n, values = config.num_players, config.highest_double + 1
        self.size = layout.size
        self.previous = np.zeros((games, n, layout.size), dtype=np.int8)  # each seat's last observation
        self.has_previous = np.zeros((games, n), dtype=np.bool_)
        self.forbidden = np.zeros((games, n, n, values), dtype=np.bool_)  # in each seat's own frame
        tiles = config.tiles
        self._tables = (layout.offsets, layout.field("boneyard").size if config.boneyard else 0,
                        tiles.low.astype(np.int64), tiles.high.astype(np.int64), tiles.is_double.astype(np.bool_),
                        n, config.num_tiles, values, config.boneyard, "double_to_cover" in layout.names,
                        config.boneyard_at_deal if config.boneyard else 0)

    def reset(self, games: np.ndarray | None = None) -> None:
        """New hands in `games` (all games when None): nothing is known there yet."""
        if games is None:
            self.has_previous[:] = False
        else:
            self.has_previous[games] = False

    def observe(self, observations: np.ndarray, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Each row's one-hand observation (seat `seats[i]` of game `games[i]` to move, every game at most
        once) -> its facts after it, (rows, (players - 1) x values) int8: row k - 1 of a row's block
        is seat k after the mover."""
        observations = np.ascontiguousarray(observations[:, :self.size], dtype=np.int8)
        games, seats = np.asarray(games, dtype=np.int64), np.asarray(seats, dtype=np.int64)
        _observe_rows(observations, games, seats, self.previous, self.has_previous, self.forbidden, *self._tables)
        return self.forbidden[games, seats, 1:].reshape(games.shape[0], -1).astype(np.int8)


@kernel
def _observe_rows(observations, games, seats, previous, has_previous, forbidden, offsets, boneyard_bits, low, high,
                  is_double, n, t, v, boneyard_rule, cover_rule, boneyard_at_deal):
    for i in range(games.shape[0]):
        g, s = games[i], seats[i]
        _observe_row(observations[i], previous[g, s], has_previous[g, s], forbidden[g, s], offsets, boneyard_bits,
                     low, high, is_double, n, t, v, boneyard_rule, cover_rule, boneyard_at_deal)
        previous[g, s] = observations[i]
        has_previous[g, s] = True


@kernel(inline="always")
def _argmax(vector, start, length):
    best = 0
    for j in range(1, length):
        if vector[start + j] > vector[start + best]:
            best = j
    return best


@kernel
def _table(obs, offsets, boneyard_bits, n, t, v, boneyard_rule, cover_rule):
    """The public table of an observation: open values (n + 1,), played (n + 1, T), markers (n,),
    whether the dummy is open, whether a double waits to be covered, the boneyard's size."""
    open_values = np.empty(n + 1, dtype=np.int64)
    played = np.zeros((n + 1, t), dtype=np.bool_)
    for k in range(n + 1):
        open_values[k] = _argmax(obs, offsets[layout_slots.OPEN_VALUES] + k * v, v)
        for tile in range(t):
            played[k, tile] = obs[offsets[layout_slots.PLAYED] + k * t + tile] != 0
    markers = np.zeros(n, dtype=np.bool_)
    for k in range(n):
        markers[k] = obs[offsets[layout_slots.MARKERS] + k] != 0
    waiting = False
    if cover_rule:
        for k in range(n + 1):
            waiting = waiting or obs[offsets[layout_slots.DOUBLE_TO_COVER] + k] != 0
    boneyard = 0
    if boneyard_rule:
        for j in range(boneyard_bits):
            boneyard += obs[offsets[layout_slots.BONEYARD] + j]
    return open_values, played, markers, obs[offsets[layout_slots.DUMMY_OPEN]] != 0, waiting, boneyard


@kernel
def _observe_row(now, before, has_before, forbidden, offsets, boneyard_bits, low, high, is_double, n, t, v,
                 boneyard_rule, cover_rule, boneyard_at_deal):
    """KnowledgeTracker.observe's reading of one seat's observation `now` after its `before`."""
    engine_value = _argmax(now, offsets[layout_slots.HAND_NUMBER], v)
    same_hand = has_before and _argmax(before, offsets[layout_slots.HAND_NUMBER], v) == engine_value
    if same_hand:
        for j in range((n + 1) * t):
            if before[offsets[layout_slots.PLAYED] + j] != 0 and now[offsets[layout_slots.PLAYED] + j] == 0:
                same_hand = False
    if not same_hand:  # a new hand: learn from the deal's table
        forbidden[:] = False
        _learn(np.full(n + 1, engine_value, dtype=np.int64), np.zeros((n + 1, t), dtype=np.bool_),
               np.zeros(n, dtype=np.bool_), False, False, boneyard_at_deal, now, forbidden, offsets, boneyard_bits,
               is_double, n, t, v, boneyard_rule, cover_rule)
        return
    # the table right after the seat's own move at `before` (KnowledgeTracker._after_my_move)
    hand = offsets[layout_slots.HAND]
    played_count, drawn_count, tile = 0, 0, -1
    for j in range(t):
        if before[hand + j] != 0 and now[hand + j] == 0:
            played_count += 1
            tile = j
        elif now[hand + j] != 0 and before[hand + j] == 0:
            drawn_count += 1
    if drawn_count or played_count > 1:
        return
    open_values, played, markers, dummy_open, waiting, boneyard = _table(before, offsets, boneyard_bits, n, t, v,
                                                                       boneyard_rule, cover_rule)
    if played_count == 0:
        markers[0] = True  # a pass: the double it could not cover (if any) still waits
    else:
        waiting = False
        if is_double[tile]:
            return  # it moves again
        line = 0
        for k in range(1, n + 1):
            if now[offsets[layout_slots.PLAYED] + k * t + tile] > now[offsets[layout_slots.PLAYED] + line * t + tile]:
                line = k
        open_values[line] = low[tile] + high[tile] - open_values[line]
        played[line, tile] = True
        if line == 0:
            markers[0] = False
        started = True
        for k in range(n):
            started = started and played[k].any()
        dummy_open = dummy_open or started
    _learn(open_values, played, markers, dummy_open, waiting, boneyard, now, forbidden, offsets, boneyard_bits,
           is_double, n, t, v, boneyard_rule, cover_rule)


@kernel
def _learn(open_values, played, markers, dummy_open, waiting, boneyard, now, forbidden, offsets, boneyard_bits,
           is_double, n, t, v, boneyard_rule, cover_rule):
    """KnowledgeTracker._learn: what the passes since the table (`open_values` ..., the table right
    after the seat's move) up to `now` prove."""
    _, now_played, _, _, _, now_boneyard = _table(now, offsets, boneyard_bits, n, t, v, boneyard_rule, cover_rule)
    if boneyard_rule and now_boneyard < boneyard:
        forbidden[1:] = False  # someone drew and may have kept a tile: older facts lapse
    unchanged = np.ones(n + 1, dtype=np.bool_)
    added_double = False
    for k in range(n + 1):
        for tile in range(t):
            if now_played[k, tile] and not played[k, tile]:
                unchanged[k] = False
                added_double = added_double or is_double[tile]
    if cover_rule and (waiting or added_double):
        return  # a pass may only have proved that nothing covers a double
    passed = offsets[layout_slots.PASSED_LAST]
    for seat in range(1, n):
        if now[passed + seat] == 0:
            continue
        for k in range(n + 1):
            open_to_seat = markers[k] if k < n else dummy_open
            if k == seat or (1 <= k < seat and now[passed + k] != 0):
                open_to_seat = True
            if open_to_seat and unchanged[k]:
                forbidden[seat, open_values[k]] = True
