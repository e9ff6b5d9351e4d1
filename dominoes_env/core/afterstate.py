"""After-states: what a player observes right after its own move, from its observation alone.

A value learner that picks moves by the value of the position they lead to needs, for
every legal move, the observation it would have right after playing it and before
anyone else moves. Everything that move changes is visible to the mover, so the
after-state is a function of the mover's observation vector and the action.

It is computed with the rules' own kernels, so a rule lives in one place: the observation
is read back into an engine state (:func:`dominoes_env.core.observation.read_state`),
the move is played by :func:`dominoes_env.core.rules.apply_action` (every rule: the open
value, markers, the dummy line, another move after a double, going out, a blocked hand),
and the result is encoded again as the mover sees it. The one thing a player cannot see,
which tile each other seat holds (and, with the boneyard rule, which lie face down), never
matters to one move of its own: the rules only ask whether *someone* still holds a tile that
fits (rule 9), and a hand can be blocked only once nothing is left to draw. Without a boneyard
every tile is dealt, and with one that is empty every hidden tile is back in a hand, so then
the tiles neither in the mover's hand, nor on the table, nor the engine are exactly the tiles
the others hold; while the boneyard holds tiles the hand is not blocked, whoever holds what.
A draw has no after-state (the tile drawn is unknown; a draw is always the only legal move,
so there is nothing to choose): the pile's order never matters.

:func:`afterstate` does one move (checked); :func:`afterstates` any batch of
(observation, action) pairs in one compiled loop; :func:`legal_afterstates` every legal
move of one observation, which is what a policy needs at each decision.

When the move ends the hand (the mover plays its last tile, or the hand becomes blocked)
the after-state is the final position as the engine leaves it: the turn does not move on,
exactly what a one-hand environment shows after that move. A multi-hand environment shows
the next hand's deal instead; no function of the observation can know that deal, so the
after-state stays the finished hand's final position, and :func:`afterstates` says which
moves end the hand. ``hand_number`` and ``scores`` never change within a hand.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from dominoes_env.core import observation as layout
from dominoes_env.core import rules
from dominoes_env.core.compiled import kernel
from dominoes_env.core.config import GameConfig, config_of
from dominoes_env.core.validation import as_integer


@kernel
def _write_afterstates(observations, rows, actions, offsets, n, t, highest, max_hand, rule_flags, base_size,
                       low, high, tiles_with_value, state_size, out, ends_hand):
    """For each k: read observation rows[k] into a state, play actions[k], encode the result into out[k]."""
    hidden_owner = np.ones(t, dtype=np.int16)  # any seat but the mover's (seat 0 in its own frame)
    observed = np.zeros(state_size, dtype=np.int16)
    state = np.zeros(state_size, dtype=np.int16)
    no_scores = np.zeros(n, dtype=np.int64)
    # int64 values, not the literals 0: the encoder is then compiled once for every caller
    own_seat, no_score_bits = np.int64(0), np.int64(0)
    last_row = -1
    for k in range(actions.shape[0]):
        row = rows[k]
        if row != last_row:
            layout.read_state(observations[row], offsets, n, t, highest, max_hand, rule_flags, hidden_owner,
                              observed)
            last_row = row
        for i in range(state_size):  # element by element: an array slice copy compiles far slower
            state[i] = observed[i]
        rules.apply_action(state, low, high, tiles_with_value, actions[k])
        out[k, :] = 0
        layout.write_observation(state, own_seat, no_scores, offsets, highest, max_hand, no_score_bits, out[k])
        for i in range(base_size, out.shape[1]):  # scores so far: unchanged within a hand
            out[k, i] = observations[row, i]
        ends_hand[k] = state[rules.HAND_OVER] == 1


@kernel
def _legal_actions(observation, offsets, n, t, highest, max_hand, rule_flags, tiles_with_value, state_size, out):
    """The observer's legal actions (ascending) into `out`; return their count."""
    state = np.zeros(state_size, dtype=np.int16)
    layout.read_state(observation, offsets, n, t, highest, max_hand, rule_flags, np.ones(t, dtype=np.int16), state)
    return rules.fill_legal_actions(state, tiles_with_value, out)


class _Kernel:
    """The constant arrays the compiled kernels need for one table size."""

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        base = layout.observation_layout(config, 1)
        self.offsets = base.offsets
        self.base_size = base.size
        self.state_size = rules.state_size(config.num_players, config.num_tiles)
        self.rule_flags = config.rule_flags
        tiles = config.tiles
        self.low, self.high, self.tiles_with_value = tiles.low, tiles.high, tiles.tiles_with_value

    def run(self, observations: np.ndarray, rows: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        c = self.config
        out = np.empty((actions.shape[0], observations.shape[1]), dtype=np.int8)
        ends_hand = np.empty(actions.shape[0], dtype=np.bool_)
        _write_afterstates(observations, rows, actions, self.offsets, c.num_players, c.num_tiles, c.highest_double,
                           c.max_hand_size, self.rule_flags, self.base_size, self.low, self.high,
                           self.tiles_with_value, self.state_size, out, ends_hand)
        return out, ends_hand

    def legal_actions(self, observation: np.ndarray) -> np.ndarray:
        c = self.config
        buffer = np.empty(c.num_actions, dtype=np.int64)
        count = _legal_actions(observation, self.offsets, c.num_players, c.num_tiles, c.highest_double,
                               c.max_hand_size, self.rule_flags, self.tiles_with_value, self.state_size, buffer)
        return buffer[:count].copy()


@cache
def _kernel(config: GameConfig) -> _Kernel:
    return _Kernel(config)


def _kernel_for(num_players: int | GameConfig, highest_double: int) -> _Kernel:
    """The kernel of a table (a GameConfig in place of `num_players` brings its table rules)."""
    return _kernel(config_of(num_players, highest_double))


def afterstates(observations: np.ndarray, actions: np.ndarray, num_players: int | GameConfig, highest_double: int = 9,
                rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """After-states of many (observation, action) pairs in one compiled pass.

    The caller guarantees each action is legal for its observation's player (take them
    from the action mask) and that it is that player's turn; nothing is checked here
    beyond shapes, because this is the learner's inner loop. Use :func:`afterstate` for a
    checked single move.

    Args:
        observations: (B, D) observation vectors, or one (D,) vector.
        actions: (K,) actions.
        num_players, highest_double: the table size.
        rows: (K,) index of each action's observation; default: ``arange(K)`` for a
            (B, D) batch (one action per observation) or all zeros for a single vector.
            Pairs of one observation should be consecutive: it is read once per run.

    Returns:
        (K, D) int8 after-state vectors, and a (K,) bool array telling which moves end the
        hand (see the module docstring for what the after-state is then).
    """
    kernel = _kernel_for(num_players, highest_double)
    observations = np.ascontiguousarray(np.atleast_2d(observations), dtype=np.int8)
    actions = np.ascontiguousarray(actions, dtype=np.int64).reshape(-1)
    layout.layout_for_size(kernel.config, observations.shape[1])
    draw = kernel.config.draw_action
    if draw is not None and np.any(actions == draw):
        raise ValueError("a draw has no after-state: the tile drawn is unknown (a draw is always the only legal "
                         "move, so a policy need not weigh it)")
    if rows is None:
        rows = np.zeros(actions.shape[0], dtype=np.int64) if observations.shape[0] == 1 else np.arange(actions.shape[0])
    rows = np.ascontiguousarray(rows, dtype=np.int64).reshape(-1)
    if rows.shape != actions.shape or (rows.size and not 0 <= rows.min() <= rows.max() < observations.shape[0]):
        raise ValueError(f"rows must give, for each of the {actions.shape[0]} actions, an index "
                         f"into the {observations.shape[0]} observations")
    return kernel.run(observations, rows, actions)


def afterstates_unchecked(observation: np.ndarray, actions: np.ndarray, config: GameConfig
                          ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`afterstates` of one observation, shaped (1, D) int8, and its legal moves (int64, no
    draw), with nothing checked: a search asks this at most of its simulations, and a handful
    of moves spends twice as long in :func:`afterstates`' checks as in the compiled pass."""
    return _kernel(config).run(observation, np.zeros(actions.shape[0], dtype=np.int64), actions)


def legal_afterstates(observation: np.ndarray, action_mask: np.ndarray, num_players: int | GameConfig,
                      highest_double: int = 9) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every legal action of one observation with its after-state: (actions, vectors, ends_hand)."""
    actions = np.flatnonzero(action_mask)
    vectors, ends_hand = afterstates(observation, actions, num_players, highest_double)
    return actions, vectors, ends_hand


def afterstate(observation: np.ndarray, action: int, num_players: int | GameConfig,
               highest_double: int = 9) -> np.ndarray:
    """The observation vector the mover would see right after playing `action`.

    Computed only from the mover's own observation vector (a one-hand or multi-hand
    layout) and the action; see the module docstring for moves that end the hand.

    Raises:
        ValueError: the vector is not an observation of the table size, it is not the
            observer's turn, or the action is not legal in the observed position.
    """
    kernel = _kernel_for(num_players, highest_double)
    vector, fields = layout.as_vector(kernel.config, observation)
    if fields.views(vector)["whose_turn"][0] != 1:
        raise ValueError("the observation is not its player's turn to move (whose_turn[0] is 0)")
    legal = kernel.legal_actions(vector)
    value = as_integer(action)
    if value is None or value not in set(legal.tolist()):
        raise ValueError(f"action {action!r} is not legal in this observation; legal actions: {legal.tolist()}")
    return afterstates(vector, np.array([value]), num_players, highest_double)[0][0]


def legal_actions_of(observation: np.ndarray, num_players: int | GameConfig, highest_double: int = 9) -> np.ndarray:
    """The legal actions of the observer (rules 5-6), read from its observation vector, ascending."""
    kernel = _kernel_for(num_players, highest_double)
    vector, _ = layout.as_vector(kernel.config, observation)
    return kernel.legal_actions(vector)
