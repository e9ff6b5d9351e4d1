"""The rules of RULES.md in JAX: pure functions of the compiled engine's flat state array.

The state is :mod:`dominoes_env.core.rules`' array, slot for slot (its module docstring lays it
out), so a position of the compiled engine is a position here, and back, without translation:
that is what lets the two engines be compared move by move. Each function here is the twin of
one kernel there and follows it rule by rule; what differs is only the form. numba walks a
position with loops and early returns; here every question is asked of the whole position at
once, as arrays with fixed shapes (a (lines x tiles) table of the moves that fit), and every
branch is a select, so that ``jax.jit`` compiles one program per table and ``jax.vmap`` steps
thousands of positions together.

A table's sizes and rules are Python values fixed when :class:`JaxRules` is built (one compiled
program per table); the state's own ``NUM_PLAYERS``, ``NUM_TILES`` and ``RULES`` slots are
not read. A table rule of :data:`dominoes_env.core.config.TABLE_RULES` that is not in
:data:`IMPLEMENTED_RULES` is refused when set off the rule book's value, never ignored.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from dominoes_env.core import config as tables
from dominoes_env.core import rules
from dominoes_env.core.config import GameConfig

#: The table rules (names of :data:`dominoes_env.core.config.TABLE_RULES`) these functions play;
#: :func:`check_rules` refuses a table that sets any other off the rule book's value.
IMPLEMENTED_RULES: frozenset[str] = frozenset({"boneyard", "cover_doubles", "first_player"})


def check_rules(config: GameConfig) -> None:
    """Refuse, in one line, a table whose rules the JAX twin does not implement: every rule of
    :data:`~dominoes_env.core.config.TABLE_RULES` off the rule book's value must be in
    :data:`IMPLEMENTED_RULES`.

    Raises:
        ValueError: naming the rule, its value and the rules implemented.
    """
    for rule in tables.TABLE_RULES:
        value = getattr(config, rule.name)
        if rule.name not in IMPLEMENTED_RULES and value != rule.default:
            raise ValueError(f"the JAX rules do not implement the table rule {rule.name}={value!r} "
                             f"(dominoes_env/jax/rules.py implements {', '.join(sorted(IMPLEMENTED_RULES))})")


class JaxRules:
    """The rules of one table, as jit-able functions of one state (vmap them for a batch).

    Args:
        config: the table (players, set, table rules).

    Raises:
        ValueError: a table rule not in :data:`IMPLEMENTED_RULES` set (one line: :func:`check_rules`).
    """

    def __init__(self, config: GameConfig) -> None:
        check_rules(config)
        n, t = config.num_players, config.num_tiles
        self.config, self.n, self.t = config, n, t
        (self.owner, self.line_of, self.play_order, self.open_values, self.line_started, self.marker_up,
         self.passed_last, self.hand_sizes, self.pile) = (int(offset) for offset in rules.block_starts(n, t))
        self.state_size = rules.state_size(n, t)
        self.num_actions = config.num_actions
        self.pass_action = config.pass_action
        self.boneyard = bool(config.boneyard)
        self.cover_doubles = bool(config.cover_doubles)
        tiles = config.tiles
        self.low = jnp.asarray(tiles.low, dtype=jnp.int32)
        self.high = jnp.asarray(tiles.high, dtype=jnp.int32)
        self.pips = self.low + self.high
        self.is_double = self.low == self.high
        self._lines = jnp.arange(n + 1, dtype=jnp.int32)
        self.highest = config.highest_double
        self.rule_flags = int(config.rule_flags)
        self.deal_size = config.deal_size
        self.left_of_engine = bool(self.rule_flags & rules.LEFT_OF_ENGINE_RULE)

    def deal(self, key: jax.Array, hand_index: jax.Array | int) -> jax.Array:
        """Hand number `hand_index` of a game, dealt from one shuffle drawn with `key` (rules 1-4
        and the boneyard rule): :meth:`deal_from_permutation` of ``jax.random.permutation``."""
        return self.deal_from_permutation(jax.random.permutation(key, self.t), hand_index)

    def deal_from_permutation(self, permutation: jax.Array, hand_index: jax.Array | int) -> jax.Array:
        """The twin of :func:`dominoes_env.core.rules.deal_hand`: the same position from the same
        shuffle of the set. Without a boneyard every tile is dealt (floor(T/n) each, one more to
        seats k, k+1, ... in hand k); with one, each seat takes its deal and, while the engine lies
        face down, the seats draw in turn from seat k until one draws it."""
        n, t = self.n, self.t
        permutation = jnp.asarray(permutation, dtype=jnp.int32)
        hand_index = jnp.asarray(hand_index, dtype=jnp.int32)
        engine_value = (self.highest - hand_index) % (self.highest + 1)
        engine = engine_value * (2 * self.highest + 3 - engine_value) // 2
        positions = jnp.arange(t, dtype=jnp.int32)
        if not self.boneyard:
            base, extra = t // n, t % n
            sizes = base + ((jnp.arange(n, dtype=jnp.int32) - hand_index) % n < extra)
            seat_of = jnp.searchsorted(jnp.cumsum(sizes), positions, side="right").astype(jnp.int32)
            owner = jnp.zeros(t, dtype=jnp.int32).at[permutation].set(seat_of)
            draw_order, count = jnp.zeros(t, dtype=jnp.int32), jnp.int32(0)
        else:
            dealt = n * self.deal_size
            face_down = t - dealt
            owner = jnp.zeros(t, dtype=jnp.int32).at[permutation].set(
                jnp.where(positions < dealt, positions // self.deal_size, rules.IN_BONEYARD))
            boneyard = permutation[dealt:]
            order = jnp.arange(face_down, dtype=jnp.int32)
            drawn = jnp.where((boneyard == engine).any(), jnp.argmax(boneyard == engine) + 1, 0)
            owner = owner.at[boneyard].set(jnp.where(order < drawn, (hand_index + order) % n, rules.IN_BONEYARD))
            count = face_down - drawn
            left = boneyard[jnp.minimum(order + drawn, face_down - 1)]
            draw_order = jnp.zeros(t, dtype=jnp.int32).at[:face_down].set(jnp.where(order < count, left, 0))
        return self._start_hand(owner, draw_order, count, engine_value, engine)

    def _start_hand(self, owner: jax.Array, draw_order: jax.Array, count: jax.Array, engine_value: jax.Array,
                    engine: jax.Array) -> jax.Array:
        """The twin of :func:`dominoes_env.core.rules.start_hand`: the engine to the centre, its
        holder (or the seat after it) to move, the boneyard with the next tile to draw last."""
        n, t = self.n, self.t
        state = jnp.zeros(self.state_size, dtype=jnp.int16)
        holder = owner[engine]
        owner = owner.at[engine].set(rules.OUT_OF_PLAY)
        sizes = jnp.zeros(n, dtype=jnp.int32).at[jnp.maximum(owner, 0)].add((owner >= 0).astype(jnp.int32))
        slots = jnp.arange(t, dtype=jnp.int32)
        pile = jnp.where(slots < count, draw_order[jnp.clip(count - 1 - slots, 0, t - 1)], 0)
        header: dict[int, jax.Array | int] = {
                  rules.NUM_PLAYERS: n, rules.NUM_TILES: t, rules.WENT_OUT: -1, rules.ENGINE_VALUE: engine_value,
                  rules.RULES: self.rule_flags, rules.DOUBLE_LINE: -1, rules.PILE_COUNT: count,
                  rules.ENGINE_HOLDER: holder,
                  rules.CURRENT_PLAYER: (holder + 1) % n if self.left_of_engine else holder}
        for slot, value in header.items():
            state = state.at[slot].set(jnp.asarray(value).astype(jnp.int16))
        blocks = [(self.owner, owner), (self.line_of, jnp.full(t, -1)), (self.play_order, jnp.full(t, -1)),
                  (self.open_values, jnp.full(n + 1, engine_value)), (self.hand_sizes, sizes), (self.pile, pile)]
        for start, values in blocks:
            state = state.at[start:start + values.shape[0]].set(values.astype(jnp.int16))
        return state

    # The position's blocks, as int32 arrays (static slices: offsets are Python ints).
    def _block(self, state: jax.Array, start: int, length: int) -> jax.Array:
        return state[start:start + length].astype(jnp.int32)

    def _fits(self, values: jax.Array) -> jax.Array:
        """(lines, T): whether each tile shows each line's open value."""
        return (self.low[None, :] == values[:, None]) | (self.high[None, :] == values[:, None])

    def _playable_lines(self, state: jax.Array, seat: jax.Array) -> jax.Array:
        """(n + 1,) over absolute lines: where `seat` may play now (rule 5; only the line of the
        double to cover while one waits)."""
        n = self.n
        markers = self._block(state, self.marker_up, n)
        lines = self._lines
        may = jnp.where(lines == seat, True,
                        jnp.where(lines == n, state[rules.DUMMY_OPEN] == 1, markers[jnp.minimum(lines, n - 1)] == 1))
        pending = state[rules.DOUBLE_LINE].astype(jnp.int32)
        return jnp.where(pending >= 0, lines == pending, may)

    def tile_moves(self, state: jax.Array) -> jax.Array:
        """(n + 1, T) over relative lines: the tile moves of the player to move (rule 5 with the
        table rules), in the action encoding's order (action = relative line * T + tile)."""
        n = self.n
        seat = state[rules.CURRENT_PLAYER].astype(jnp.int32)
        absolute = jnp.where(self._lines == n, n, (seat + self._lines) % n)
        values = self._block(state, self.open_values, n + 1)[absolute]
        held = self._block(state, self.owner, self.t) == seat
        allowed = self._playable_lines(state, seat)[absolute]
        return allowed[:, None] & held[None, :] & self._fits(values)

    def may_draw(self, state: jax.Array) -> jax.Array:
        """The boneyard rule: no tile to play, the boneyard not empty, not drawn yet this turn."""
        return (state[rules.PILE_COUNT] > 0) & (state[rules.DREW] == 0)

    def legal_mask(self, state: jax.Array) -> jax.Array:
        """(num_actions,) bool: the legal actions of the player to move; none once the hand is over."""
        moves = self.tile_moves(state)
        none = ~moves.any()
        draw = self.may_draw(state)
        mask = jnp.concatenate([moves.reshape(-1), (none & ~draw)[None]]
                               + ([(none & draw)[None]] if self.boneyard else []))
        return mask & (state[rules.HAND_OVER] == 0)

    def is_blocked(self, state: jax.Array) -> jax.Array:
        """Rule 9: the boneyard empty and no tile in any hand fits the double to cover (while one
        waits) or else any seat's line or the open dummy."""
        return self._blocked(self._block(state, self.owner, self.t), self._block(state, self.open_values, self.n + 1),
                             state[rules.PILE_COUNT], state[rules.DOUBLE_LINE].astype(jnp.int32),
                             state[rules.DUMMY_OPEN] == 1)

    def apply(self, state: jax.Array, action: jax.Array) -> jax.Array:
        """The position after a legal `action` of the player to move (the caller checks legality:
        :meth:`legal_mask`); the twin of :func:`dominoes_env.core.rules.apply_action`.

        One pass for the three kinds of move (a pass, a draw, a tile): each block of the state is
        rebuilt whole, the slot a move changes picked by comparing positions with its index. Under
        ``vmap`` a branch per kind would run all three anyway, and writes at indices that differ
        from game to game (scatters) cost several times these selects.
        """
        n, t = self.n, self.t
        action = jnp.asarray(action, dtype=jnp.int32)
        header = state[:rules.HEADER_SIZE].astype(jnp.int32)
        owner = self._block(state, self.owner, t)
        open_values = self._block(state, self.open_values, n + 1)
        started = self._block(state, self.line_started, n)
        markers = self._block(state, self.marker_up, n)
        sizes = self._block(state, self.hand_sizes, n)
        pile = self._block(state, self.pile, t)
        seat = header[rules.CURRENT_PLAYER]
        is_pass, is_draw = action == self.pass_action, action == self.pass_action + 1
        is_tile = ~(is_pass | is_draw)
        seats, tiles, lines = jnp.arange(n, dtype=jnp.int32), jnp.arange(t, dtype=jnp.int32), self._lines
        at_seat = seats == seat
        # a tile onto a line (rule 5), or the boneyard's top tile into the hand
        relative, played = action // t, action % t
        line = jnp.where(relative == n, n, (seat + relative) % n)
        count = header[rules.PILE_COUNT] - 1
        tile = jnp.where(is_tile, played, pile[jnp.clip(count, 0, t - 1)])
        at_tile = tiles == tile
        owner = jnp.where(at_tile & is_tile, rules.ON_TABLE, jnp.where(at_tile & is_draw, seat, owner))
        line_of = jnp.where(at_tile & is_tile, line, self._block(state, self.line_of, t))
        play_order = jnp.where(at_tile & is_tile, header[rules.TILES_PLAYED], self._block(state, self.play_order, t))
        open_values = jnp.where((lines == line) & is_tile, self.pips[tile] - open_values[line], open_values)
        sizes = sizes + jnp.where(at_seat, is_draw.astype(jnp.int32) - is_tile.astype(jnp.int32), 0)
        passed = jnp.where(at_seat, is_pass.astype(jnp.int32), self._block(state, self.passed_last, n))
        is_double = is_tile & self.is_double[tile]
        starts = is_tile & (line < n) & (started[jnp.minimum(line, n - 1)] == 0)
        started = jnp.where((seats == line) & is_tile, 1, started)  # the dummy line (n) is no seat's
        dummy_open = (header[rules.DUMMY_OPEN] == 1) | (starts & (started.sum() == n))
        # rules 6-7: a pass raises the marker; a non-double on the own line lowers it
        markers = jnp.where(at_seat & is_pass, 1, jnp.where(at_seat & is_tile & (line == seat) & ~is_double, 0,
                                                              markers))
        pending = header[rules.DOUBLE_LINE]
        if self.cover_doubles:
            pending = jnp.where(is_tile, jnp.where(is_double, line, jnp.where(pending == line, -1, pending)), pending)
        pile_count = jnp.where(is_draw, count, header[rules.PILE_COUNT])
        # rule 9: the hand ends when the mover goes out or, after a tile or a draw, nothing can move again
        went_out = is_tile & (sizes[seat] == 0)
        blocked = self._blocked(owner, open_values, pile_count, pending, dummy_open)
        over = went_out | (~is_pass & blocked)
        after_move = (seat + 1) % n
        current = jnp.where(is_pass, after_move, jnp.where(is_draw | over | is_double, seat, after_move))
        header = (header.at[rules.MOVES].add(1)
                  .at[rules.CURRENT_PLAYER].set(current)
                  .at[rules.DUMMY_OPEN].set(dummy_open.astype(jnp.int32))
                  .at[rules.HAND_OVER].set(jnp.where(over, 1, header[rules.HAND_OVER]))
                  .at[rules.WENT_OUT].set(jnp.where(went_out, seat, header[rules.WENT_OUT]))
                  .at[rules.TILES_PLAYED].add(is_tile.astype(jnp.int32))
                  .at[rules.DREW].set(is_draw.astype(jnp.int32))
                  .at[rules.DOUBLE_LINE].set(pending)
                  .at[rules.PILE_COUNT].set(pile_count))
        return jnp.concatenate([header, owner, line_of, play_order, open_values, started, markers, passed, sizes,
                                pile]).astype(state.dtype)

    def _blocked(self, owner: jax.Array, open_values: jax.Array, pile_count: jax.Array, pending: jax.Array,
                 dummy_open: jax.Array) -> jax.Array:
        """:meth:`is_blocked` of a position's parts."""
        lines = self._lines
        considered = jnp.where(pending >= 0, lines == pending, ~((lines == self.n) & ~dummy_open))
        return (pile_count <= 0) & ~(considered[:, None] & self._fits(open_values) & (owner >= 0)[None, :]).any()

    def scores(self, state: jax.Array) -> jax.Array:
        """(n,) rule 10: the pips each seat still holds."""
        owner = self._block(state, self.owner, self.t)
        return jnp.zeros(self.n, dtype=jnp.int32).at[jnp.maximum(owner, 0)].add(jnp.where(owner >= 0, self.pips, 0))


def as_state(position: np.ndarray) -> jax.Array:
    """A compiled engine's state (int16, :mod:`dominoes_env.core.rules`' layout) as a JAX array."""
    return jnp.asarray(np.asarray(position, dtype=np.int16))
