"""What passes prove about the other seats' hands, read from one player's observations: compiled, once.

A seat with a legal move may not pass, so a pass proves that the passer holds no tile with an
end that was certainly open to it: "value v is forbidden to seat k". Which values were certainly
open, and when older facts lapse (a draw from the boneyard), is facts 3 and 4 of
:mod:`dominoes_env.core.hidden`, which says why each is sound. Two kinds of reader need these
facts: :class:`~dominoes_env.core.hidden.KnowledgeTracker` (one player through one hand, for the
searching players' samples and the beliefs) and ppo's history feature (:mod:`baselines.ppo.history`:
every seat of thousands of games at each step of training). Both read them here, through
:class:`PassFacts`, so a fact a search uses and a fact a network is trained on are the same fact,
and a change to the reading is made in one place. The reading is a numba kernel because the
batched reader calls it for every (game, seat) pair of every step; the tracker is that kernel
with one game and one seat.

The reading of one seat's observation needs only its previous one: the kernel rebuilds the
public table right after the seat's own move at its previous decision (the move read from how
its hand changed) and compares it with the table now; between the two every other seat took
exactly one turn. A seat's first observation of a hand (or the first after :meth:`PassFacts.reset`)
is compared with the deal's table.
"""

from __future__ import annotations

import numpy as np

from dominoes_env.core import observation as layout_slots
from dominoes_env.core.compiled import kernel
from dominoes_env.core.config import GameConfig
from dominoes_env.core.observation import observation_layout


class PassFacts:
    """The pass facts of every seat of `games` games: feed each seat's observations in order with
    :meth:`learn` or :meth:`observe`, :meth:`reset` games at each new hand (a seat's reading also
    sees a new hand by itself, from the engine's value and the table).

    Attributes:
        forbidden: (games, n, n, values) bool: ``forbidden[g, s, k, v]``: in game g, seat s's
            observations prove that the k-th seat after it holds no tile with an end v (row k = 0,
            seat s itself, is all False).
    """

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
            self.forbidden[:] = False
        else:
            self.has_previous[games] = False
            self.forbidden[games] = False

    def learn(self, observations: np.ndarray, games: np.ndarray, seats: np.ndarray) -> None:
        """Take each row's one-hand observation (seat `seats[i]` of game `games[i]` to move, every game at
        most once) into ``forbidden``; columns past the one-hand layout (a game's scores) are ignored."""
        observations = np.ascontiguousarray(observations[:, :self.size], dtype=np.int8)
        games, seats = np.asarray(games, dtype=np.int64), np.asarray(seats, dtype=np.int64)
        _observe_rows(observations, games, seats, self.previous, self.has_previous, self.forbidden, *self._tables)

    def observe(self, observations: np.ndarray, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """:meth:`learn`, then each row's facts after it, as a network's input: (rows, (players - 1) x values)
        int8, row k - 1 of a row's block is the k-th seat after the mover."""
        self.learn(observations, games, seats)
        games, seats = np.asarray(games, dtype=np.int64), np.asarray(seats, dtype=np.int64)
        return self.forbidden[games, seats, 1:].reshape(games.shape[0], -1).astype(np.int8)


@kernel
def _observe_rows(observations, games, seats, previous, has_previous, forbidden, offsets, boneyard_bits, low, high,
                  is_double, n, t, v, boneyard_rule, cover_rule, boneyard_at_deal):
    """Each row's reading (:func:`_observe_row`) against its seat's previous observation, which it then becomes."""
    for i in range(games.shape[0]):
        g, s = games[i], seats[i]
        _observe_row(observations[i], previous[g, s], has_previous[g, s], forbidden[g, s], offsets, boneyard_bits,
                     low, high, is_double, n, t, v, boneyard_rule, cover_rule, boneyard_at_deal)
        for j in range(observations.shape[1]):
            previous[g, s, j] = observations[i, j]
        has_previous[g, s] = True


@kernel(inline="always")
def _argmax(vector, start, length):
    best = 0
    for j in range(1, length):
        if vector[start + j] > vector[start + best]:
            best = j
    return best


@kernel(inline="always")
def _forget(forbidden, first):
    """Drop the facts of rows `first` onwards of one seat's `forbidden`. Loops here and below, not numpy's
    slice assignment, np.full or .any(): they compile in half the time, which every new machine pays once."""
    for k in range(first, forbidden.shape[0]):
        for value in range(forbidden.shape[1]):
            forbidden[k, value] = False


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
    """One seat's observation `now` after its `before` into its `forbidden` (n, v): a new hand (no
    `before`, another engine, or a tile gone from the table) starts from nothing and the deal's
    table; otherwise the table right after the seat's move at `before` is compared with `now`,
    unless no other seat moved since (a draw or a double: the seat moved again) or the move cannot
    be read (two tiles gone: a decision was not shown), when nothing is learned."""
    engine_value = _argmax(now, offsets[layout_slots.HAND_NUMBER], v)
    same_hand = has_before and _argmax(before, offsets[layout_slots.HAND_NUMBER], v) == engine_value
    if same_hand:
        for j in range((n + 1) * t):
            if before[offsets[layout_slots.PLAYED] + j] != 0 and now[offsets[layout_slots.PLAYED] + j] == 0:
                same_hand = False
    if not same_hand:  # the deal: every line open at the engine's value, nothing played, no marker up
        _forget(forbidden, 0)
        deal_values = np.empty(n + 1, dtype=np.int64)
        for k in range(n + 1):
            deal_values[k] = engine_value
        _learn(deal_values, np.zeros((n + 1, t), dtype=np.bool_),
               np.zeros(n, dtype=np.bool_), False, False, boneyard_at_deal, now, forbidden, offsets, boneyard_bits,
               is_double, n, t, v, boneyard_rule, cover_rule)
        return
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
            markers[0] = False  # a non-double on its own line
        started = True
        for k in range(n):
            any_played = False
            for j in range(t):
                any_played = any_played or played[k, j]
            started = started and any_played
        dummy_open = dummy_open or started
    _learn(open_values, played, markers, dummy_open, waiting, boneyard, now, forbidden, offsets, boneyard_bits,
           is_double, n, t, v, boneyard_rule, cover_rule)


@kernel
def _learn(open_values, played, markers, dummy_open, waiting, boneyard, now, forbidden, offsets, boneyard_bits,
           is_double, n, t, v, boneyard_rule, cover_rule):
    """What the passes since a table (`open_values` ...: the table right after the seat's own move, or
    the deal's) up to the observation `now` prove (facts 3 and 4 of :mod:`dominoes_env.core.hidden`)."""
    now_boneyard = 0
    if boneyard_rule:
        for j in range(boneyard_bits):
            now_boneyard += now[offsets[layout_slots.BONEYARD] + j]
    if boneyard_rule and now_boneyard < boneyard:
        _forget(forbidden, 1)  # someone drew and may have kept a tile: older facts lapse
    unchanged = np.ones(n + 1, dtype=np.bool_)  # lines that kept their open value all along
    added_double = False
    for k in range(n + 1):
        for tile in range(t):
            if now[offsets[layout_slots.PLAYED] + k * t + tile] != 0 and not played[k, tile]:
                unchanged[k] = False
                added_double = added_double or is_double[tile]
    if cover_rule and (waiting or added_double):
        return  # a pass may only have proved that nothing covers a double
    passed = offsets[layout_slots.PASSED_LAST]
    for seat in range(1, n):
        if now[passed + seat] == 0:
            continue
        for k in range(n + 1):
            # open to the passer all along: a line whose marker was up after the seat's move, or the
            # dummy if open then; its own line; a line whose owner passed earlier in this interval
            # (seats move in order: that pass put its marker up before this seat's turn)
            open_to_seat = markers[k] if k < n else dummy_open
            if k == seat or (1 <= k < seat and now[passed + k] != 0):
                open_to_seat = True
            if open_to_seat and unchanged[k]:
                forbidden[seat, open_values[k]] = True

