"""What a player cannot see, sampled soundly: the hidden-information kit.

A search that plays a hand forward needs the other seats' tiles, which the player never
sees. This module keeps what one player's observations prove about them
(:class:`KnowledgeTracker`), samples hidden deals that agree with every such fact
(:func:`sample_deals`), and turns a sample into a full engine position in the player's own
frame (:func:`sampled_states`, :func:`sampled_positions`), so a search plays forward with the
engine itself, every rule included.

**The facts a sample agrees with**, and why each is sound:

1. *The tiles the player cannot see* are exactly the hidden ones: every tile of the set but
   its own hand, the tiles on the table and the engine. Every hidden tile is in another
   seat's hand, or in the boneyard (boneyard rule).
2. *Each opponent's hand size, and the boneyard's size*, are observed exactly.
3. *What passes prove* (rules 5 and 6: a player with a legal move may not pass). When seat
   k passes, it holds no tile that fits a line open to it at that moment; its hand then is
   its hand now, since its latest action was that pass (``passed_last``). So for every line
   whose open value v *certainly* was open to k at that moment, k holds no tile with an end
   v: "value v is forbidden to k". The tracker only uses lines it can vouch for. Between two
   of the player's own decisions every other seat takes exactly one turn, in seat order, and
   the tracker knows the table right after the player's own move (the previous observation,
   and the player's move, read from how its hand changed) and at its next decision. A line
   to which nobody added a tile in between kept its open value all along; it was open to k
   all along if it is k's own line (always open to k), or the dummy line and it was open
   already (it never closes), or another seat's line whose marker was up after the player's
   move (a marker only comes down when its owner plays on its own line, which would have
   added a tile). A seat that passed in this interval (``passed_last`` now, the interval not
   empty) had every such value forbidden. Under the cover-doubles rule a pass only proves
   that no tile covers the waiting double, so an interval in which a double waited or was
   played proves nothing. The interval before the player's first decision starts from the
   deal (every line open at the engine's value, no marker up, the dummy line closed).
4. *Forbidden values last.* Without a boneyard a hand only shrinks, so a value forbidden to
   k stays forbidden for the rest of the hand. With one, a seat may draw and keep a tile the
   player cannot identify: when the boneyard shrank in an interval, every other seat's older
   facts are dropped (a pass in that interval still covers the passer's whole hand).

Facts it does not use (each would need the opponents' policies, or would be unsound): the
order of plays within an interval, what a draw proves about the hand before it, and what a
seat's choice of move says about the tiles it kept. Samples are uniform over the deals
that agree with facts 1-4 (``tests/test_hidden.py`` checks the truth always agrees, and the
distribution on tables small enough to enumerate).

**Sampling.** Tiles that agree with only one place (a seat, or the boneyard) go there in
every consistent deal, so they are placed first. The rest are dealt uniformly at random
(a lazily drawn shuffle, filled seat by seat) and a deal that breaks a fact is redrawn from
scratch: rejection sampling, exact, and cheap because a deal is rejected at its first
broken fact. Seeded: every draw comes from the generator passed in.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from dominoes_env.core import observation as layout
from dominoes_env.core import rules
from dominoes_env.core.config import GameConfig
from dominoes_env.core.observation import observation_layout
from dominoes_env.core.state import HandState

#: Most deals tried for one sample before giving up (the facts would then leave almost no deal).
MAX_TRIES = 1_000_000
BONEYARD = -1  # the boneyard's place in a sample's owner table (rules.IN_BONEYARD in a state)


@dataclass(frozen=True)
class HandKnowledge:
    """What one player knows at one of its decisions, in its own frame (it is seat 0).

    Attributes:
        config: the table.
        observation: its observation vector (one-hand layout; a multi-hand game's scores dropped).
        hidden: (m,) the tiles it cannot see, ascending.
        hand_sizes: (n,) tiles each seat holds (seat k = the k-th after the player).
        boneyard: tiles face down (0 without the boneyard rule).
        forbidden: (n, V) bool: ``forbidden[k, v]``: seat k holds no tile with an end v (row 0,
            the player's own, is all False).
    """

    config: GameConfig
    observation: np.ndarray
    hidden: np.ndarray
    hand_sizes: np.ndarray
    boneyard: int
    forbidden: np.ndarray

    def allowed(self) -> np.ndarray:
        """(m, n + 1) bool: where each hidden tile may lie (seats 1..n-1, the boneyard last; column 0 unused)."""
        tiles = self.config.tiles
        low, high = tiles.low[self.hidden], tiles.high[self.hidden]
        n = self.config.num_players
        allowed = np.zeros((self.hidden.shape[0], n + 1), dtype=np.bool_)
        allowed[:, 1:n] = ~(self.forbidden[1:, low] | self.forbidden[1:, high]).T
        allowed[:, n] = self.boneyard > 0
        return allowed

    def agrees(self, owners: np.ndarray) -> bool:
        """Whether a deal of the hidden tiles (``owners[tile]``: seat, or -1 for the boneyard, for
        each tile of ``hidden``) agrees with every fact: sizes and forbidden values."""
        n = self.config.num_players
        if owners.shape != self.hidden.shape or ((owners < 1) & (owners != BONEYARD)).any() or (owners >= n).any():
            return False
        places = np.where(owners == BONEYARD, n, owners)
        counts = np.bincount(places, minlength=n + 1)
        if counts[n] != self.boneyard or not np.array_equal(counts[1:n], self.hand_sizes[1:]):
            return False
        return bool(self.allowed()[np.arange(owners.shape[0]), places].all())


@dataclass(frozen=True)
class _Table:
    """The public part of a position the tracker compares between two decisions."""

    open_values: np.ndarray  # (n + 1,)
    played: np.ndarray  # (n + 1, T) bool
    markers: np.ndarray  # (n,) bool
    dummy_open: bool
    waiting_double: bool  # a double waits to be covered (cover rule)
    boneyard: int


class KnowledgeTracker:
    """Keeps what one player's observations prove about the hidden tiles, through one hand.

    Give it every observation of its player, in order (a policy sees each of its decisions),
    and call :meth:`reset` at each new hand; :meth:`observe` returns the player's
    :class:`HandKnowledge` at that decision. It reads the player's own moves from how its
    hand changed between two decisions, so it needs nothing else.
    """

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.layout = observation_layout(config)
        self._tiles = config.tiles
        self.reset()

    def reset(self) -> None:
        """A new hand: nothing is known yet."""
        n, v = self.config.num_players, self.config.highest_double + 1
        self.forbidden = np.zeros((n, v), dtype=np.bool_)
        self._previous: np.ndarray | None = None

    def observe(self, observation: np.ndarray) -> HandKnowledge:
        """Take the player's observation at its decision; return what it now knows."""
        vector = np.asarray(observation, dtype=np.int8)[:self.layout.size].copy()
        views = self.layout.views(vector)
        engine_value = int(views["hand_number"].argmax())
        if self._previous is None or not self._same_hand(views, engine_value):
            self.reset()
            self._learn(self._deal_table(engine_value), views)
        else:
            before = self.layout.views(self._previous)
            after_my_move = self._after_my_move(before, views)
            if after_my_move is not None:
                self._learn(after_my_move, views)
        self._previous = vector
        return self._knowledge(vector, views, engine_value)

    # ------------------------------------------------------------------ the facts
    def _learn(self, before: _Table, views: layout.ObservationViews) -> None:
        """Add what the passes since `before` (the table right after the player's move) prove."""
        now = self._table(views)
        n = self.config.num_players
        if self.config.boneyard and now.boneyard < before.boneyard:
            self.forbidden[1:] = False  # someone drew and may have kept a tile: older facts lapse
        added = now.played & ~before.played  # tiles the other seats put on each line
        if self.config.cover_doubles and (before.waiting_double or self._tiles.is_double[added.any(axis=0)].any()):
            return  # a pass may only have proved that nothing covers a double
        unchanged = ~added.any(axis=1)  # (n + 1,): lines that kept their open value all along
        passed = views["passed_last"].astype(bool)
        for seat in range(1, n):
            if not passed[seat]:
                continue
            open_to_seat = before.markers.copy()  # others' lines whose marker was up all along
            open_to_seat = np.append(open_to_seat, before.dummy_open)
            open_to_seat[seat] = True  # its own line
            certain = open_to_seat & unchanged
            self.forbidden[seat, before.open_values[certain]] = True

    def _after_my_move(self, before: layout.ObservationViews, now: layout.ObservationViews) -> _Table | None:
        """The table right after the player's move at its previous decision, or None when no one else
        moved since (its move was a double or a draw, so it moves again) or the move cannot be read."""
        held_before, held_now = before["hand"].astype(bool), now["hand"].astype(bool)
        played, drawn = np.flatnonzero(held_before & ~held_now), np.flatnonzero(held_now & ~held_before)
        table = self._table(before)
        if drawn.size or played.size > 1:
            return None  # a draw: it moves again (two tiles: a decision was not shown; learn nothing)
        if played.size == 0:  # a pass: its marker goes up
            table.markers[0] = True
            return table
        tile = int(played[0])
        if self._tiles.is_double[tile]:
            return None  # it moves again
        line = int(now["played"][:, tile].argmax())
        table.open_values[line] = self._tiles.low[tile] + self._tiles.high[tile] - table.open_values[line]
        table.played[line, tile] = True
        if line == 0:
            table.markers[0] = False  # a non-double on its own line
        n = self.config.num_players
        started = table.played[:n].any(axis=1)
        return _Table(table.open_values, table.played, table.markers, table.dummy_open or bool(started.all()),
                      False, table.boneyard)

    def _same_hand(self, views: layout.ObservationViews, engine_value: int) -> bool:
        assert self._previous is not None
        before = self.layout.views(self._previous)
        return int(before["hand_number"].argmax()) == engine_value and \
            not (before["played"].astype(bool) & ~views["played"].astype(bool)).any()

    def _table(self, views: layout.ObservationViews) -> _Table:
        waiting = bool(views["double_to_cover"].any()) if self.config.cover_doubles else False
        boneyard = int(views["boneyard"].sum()) if self.config.boneyard else 0
        return _Table(views["open_values"].argmax(axis=1), views["played"].astype(bool),
                      views["markers"].astype(bool), bool(views["dummy_open"][0]), waiting, boneyard)

    def _deal_table(self, engine_value: int) -> _Table:
        """The table at the deal: every line open at the engine's value, nothing played, no marker up."""
        n, t = self.config.num_players, self.config.num_tiles
        return _Table(np.full(n + 1, engine_value), np.zeros((n + 1, t), dtype=np.bool_), np.zeros(n, dtype=np.bool_),
                      False, False, self.config.boneyard_at_deal if self.config.boneyard else 0)

    def _knowledge(self, vector: np.ndarray, views: layout.ObservationViews, engine_value: int) -> HandKnowledge:
        visible = views["hand"].astype(bool) | views["played"].astype(bool).any(axis=0)
        visible[self._tiles.double(engine_value)] = True
        boneyard = int(views["boneyard"].sum()) if self.config.boneyard else 0
        return HandKnowledge(self.config, vector, np.flatnonzero(~visible), views["hand_sizes"].sum(axis=1),
                             boneyard, self.forbidden.copy())


# --------------------------------------------------------------------------- sampling
def sample_deals(knowledge: HandKnowledge, rng: np.random.Generator, count: int = 1) -> np.ndarray:
    """`count` deals of the hidden tiles, uniform over those that agree with the facts.

    Returns:
        (count, m) int64: the place of each tile of ``knowledge.hidden`` (a seat 1..n-1 in the
        player's frame, or -1 for the boneyard), in a uniformly random order within the
        boneyard when one is kept (see :func:`sampled_states`).

    Raises:
        RuntimeError: the facts leave (almost) no deal: more than :data:`MAX_TRIES` tries
            for one sample. Sound facts always leave the true deal, so this means the
            observations were not all shown to the tracker in order.
    """
    n = knowledge.config.num_players
    capacity = np.zeros(n + 1, dtype=np.int64)
    capacity[1:n] = knowledge.hand_sizes[1:]
    capacity[n] = knowledge.boneyard
    out = np.empty((count, knowledge.hidden.shape[0]), dtype=np.int64)
    if not _sample(knowledge.allowed(), capacity, rng, MAX_TRIES, out):
        raise RuntimeError(f"no deal agrees with the facts after {MAX_TRIES} tries: were all of the player's "
                           f"observations shown to the tracker, in order, with reset() at each hand?")
    out[out == n] = BONEYARD
    return out


@njit(cache=True)
def _sample(allowed, capacity, rng, max_tries, out):
    """Fill each row of `out` with an agreeing deal (place per tile; place n is the boneyard)."""
    m, places = allowed.shape
    forced = np.full(m, -1, dtype=np.int64)
    left = capacity.copy()
    changed = True
    while changed:  # tiles with a single possible place are there in every agreeing deal
        changed = False
        for i in range(m):
            if forced[i] >= 0:
                continue
            only, options = -1, 0
            for place in range(1, places):
                if allowed[i, place] and left[place] > 0:
                    only, options = place, options + 1
            if options == 1:
                forced[i] = only
                left[only] -= 1
                changed = True
    free = np.flatnonzero(forced < 0)
    order = np.empty(free.shape[0], dtype=np.int64)
    for row in range(out.shape[0]):
        tries = 0
        while True:
            tries += 1
            if tries > max_tries:
                return False
            for k in range(free.shape[0]):  # loops, not slice assignments, here and below: numba's
                order[k] = free[k]  # shape-mismatch error path for one costs ~3 s of compiling
            place, room = 1, left[1] if places > 1 else 0
            ok = True
            for k in range(order.shape[0]):  # a lazily drawn shuffle, dealt place after place
                j = k + int(rng.random() * (order.shape[0] - k))
                order[k], order[j] = order[j], order[k]
                while room == 0:
                    place += 1
                    room = left[place]
                if not allowed[order[k], place]:
                    ok = False
                    break
                out[row, order[k]] = place
                room -= 1
            if ok:
                break
        for i in range(m):
            if forced[i] >= 0:
                out[row, i] = forced[i]
    return True


# --------------------------------------------------------------------------- positions
def sampled_states(knowledge: HandKnowledge, deals: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Full engine states (one row per deal), in the player's frame (it is seat 0, to move).

    The visible part comes from the observation (:func:`~dominoes_env.core.observation.read_state`);
    each hidden tile goes where the deal puts it, and the boneyard's tiles are laid face down in
    a uniformly random order, so a search that draws draws a random hidden tile.
    """
    config = knowledge.config
    fields = observation_layout(config)
    n, t = config.num_players, config.num_tiles
    base = np.zeros(rules.state_size(n, t), dtype=np.int16)
    layout.read_state(knowledge.observation, fields.offsets, n, t, config.highest_double, config.max_hand_size,
                      config.rule_flags, np.zeros(t, dtype=np.int16), base)
    states = np.empty((deals.shape[0], base.shape[0]), dtype=np.int16)
    _lay_deals(base, knowledge.hidden, deals, rng, states)
    return states


@njit(cache=True)
def _lay_deals(base, hidden, deals, rng, states):
    """Each row: `base` with the hidden tiles where its deal puts them, the boneyard's shuffled."""
    offset = rules.pile_start(base[rules.NUM_PLAYERS], base[rules.NUM_TILES])
    owner_start = rules.HEADER_SIZE  # the owners block comes first (rules.split_state)
    for row in range(deals.shape[0]):
        state = states[row]
        for k in range(base.shape[0]):
            state[k] = base[k]
        count = 0
        for k in range(hidden.shape[0]):
            tile = hidden[k]
            if deals[row, k] < 0:
                state[owner_start + tile] = rules.IN_BONEYARD
                state[offset + count] = tile
                count += 1
            else:
                state[owner_start + tile] = deals[row, k]
        for k in range(count - 1, 0, -1):  # the face-down order: a uniform shuffle
            j = int(rng.random() * (k + 1))
            state[offset + k], state[offset + j] = state[offset + j], state[offset + k]


def sampled_positions(knowledge: HandKnowledge, rng: np.random.Generator, count: int = 1) -> list[HandState]:
    """`count` sampled positions as :class:`HandState` objects (seat 0 is the player, to move)."""
    states = sampled_states(knowledge, sample_deals(knowledge, rng, count), rng)
    return [HandState(knowledge.config, state) for state in states]
