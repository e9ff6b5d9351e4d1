"""Playing sampled worlds forward: the look-ahead's search, compiled where it loops.

In each sampled world (the player is seat 0 and to move) every candidate move is played;
then, `depth` times, the other seats move with a fast rollout policy until the player is to
move again, and the player plays the move its evaluation likes best (the lowest predicted
final pips after it). The value after each of the player's moves is kept; the move's score
blends them. Every move is the engine's own (:func:`dominoes_env.core.rules.apply_action`),
so every rule holds in the search: doubles, markers, the dummy line, drawing, covering,
blocked hands.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from baselines.policies.policy import first_minimum_per_run
from dominoes_env.core import rules
from dominoes_env.core.compiled import kernel

#: Rollout policies: how the other seats move in the search (the same choices as the named policies).
ROLLOUT_POLICIES = ("greedy", "double", "random")
GREEDY, DOUBLE, RANDOM = range(len(ROLLOUT_POLICIES))
PLAYER = 0  # the player's seat in a sampled world (its own frame)


@kernel(inline="always")
def rollout_action(state, kind, low, high, tiles_with_value, legal, rng):
    """The rollout policy's move for the seat to move: greedy (heaviest tile, lowest action index
    among equals), double (any double first, then greedy) or uniformly random."""
    count = rules.fill_legal_actions(state, tiles_with_value, legal)
    if count == 1:
        return legal[0]
    if kind == RANDOM:
        return legal[int(rng.random() * count)]
    t = state[rules.NUM_TILES]
    best, best_score = legal[0], -1
    for k in range(count):
        tile = legal[k] % t
        score = low[tile] + high[tile] + (1000 if kind == DOUBLE and low[tile] == high[tile] else 0)
        if score > best_score:
            best, best_score = legal[k], score
    return best


@kernel
def others_move(states, kind, low, high, tiles_with_value, rng):
    """In place: the other seats move (rollout policy) until the player is to move or the hand is
    over; a forced draw of the player's is played too (its tile is unknown: nothing to choose)."""
    legal = np.empty(rules.last_action(states[0]) + 1, dtype=np.int64)
    for k in range(states.shape[0]):
        state = states[k]
        while state[rules.HAND_OVER] == 0:
            if state[rules.CURRENT_PLAYER] != PLAYER:
                move = rollout_action(state, kind, low, high, tiles_with_value, legal, rng)
            elif rules.fill_legal_actions(state, tiles_with_value, legal) == 1 and \
                    legal[0] == (state[rules.NUM_PLAYERS] + 1) * state[rules.NUM_TILES] + 1:
                move = legal[0]  # the draw
            else:
                break
            rules.apply_action(state, low, high, tiles_with_value, move)


@kernel
def count_moves(states, tiles_with_value):
    """The player's number of legal moves in each state (0 where the hand is over)."""
    legal = np.empty(rules.last_action(states[0]) + 1, dtype=np.int64)
    counts = np.zeros(states.shape[0], dtype=np.int64)
    for k in range(states.shape[0]):
        if states[k][rules.HAND_OVER] == 0:
            counts[k] = rules.fill_legal_actions(states[k], tiles_with_value, legal)
    return counts


@kernel
def play_each_move(states, counts, low, high, tiles_with_value, out):
    """Every legal move of each state with counts[k] > 0, played into consecutive rows of `out`
    (state k's moves in ascending action order)."""
    legal = np.empty(rules.last_action(states[0]) + 1, dtype=np.int64)
    row = 0
    for k in range(states.shape[0]):
        if counts[k] == 0:
            continue
        rules.fill_legal_actions(states[k], tiles_with_value, legal)
        for j in range(counts[k]):
            for column in range(states.shape[1]):  # a loop, not a slice assignment: numba's shape-mismatch
                out[row, column] = states[k, column]  # error path for that costs ~3 s of compiling
            rules.apply_action(out[row], low, high, tiles_with_value, legal[j])
            row += 1


@kernel
def final_pips(states, seat, low, high):
    """Each state's pips held by `seat` where the hand is over, NaN where it goes on."""
    out = np.full(states.shape[0], np.nan)
    scores = np.empty(states[0][rules.NUM_PLAYERS], dtype=np.int64)
    for k in range(states.shape[0]):
        if states[k][rules.HAND_OVER] == 1:
            rules.hand_scores(states[k], low, high, scores)
            out[k] = scores[seat]
    return out


class Search:
    """The look-ahead's search over sampled worlds for one table.

    Args:
        low, high, tiles_with_value: the tile tables.
        evaluate: predicted final pips of the player in each of k states (not over).
        depth: the player's own later moves played in each world.
        ply_weights: (depth + 1,) weights of the values after the candidate move and after
            each later move of the player's (they sum to 1).
        rollout: the rollout policy's code (:data:`ROLLOUT_POLICIES`).
    """

    def __init__(self, low: np.ndarray, high: np.ndarray, tiles_with_value: np.ndarray,
                 evaluate: Callable[[np.ndarray], np.ndarray], depth: int, ply_weights: np.ndarray,
                 rollout: int) -> None:
        self.low, self.high, self.tiles_with_value = low, high, tiles_with_value
        self.evaluate, self.depth, self.ply_weights, self.rollout = evaluate, depth, ply_weights, rollout

    def values(self, states: np.ndarray) -> np.ndarray:
        """The player's predicted final pips in each state: exact where the hand is over."""
        values = final_pips(states, PLAYER, self.low, self.high)
        going_on = np.isnan(values)
        if going_on.any():
            values[going_on] = self.evaluate(states[going_on])
        return values

    def scores(self, worlds: np.ndarray, actions: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Each candidate action's score (blended predicted final pips, lower is better), averaged
        over the worlds (engine states in the player's frame, the player to move)."""
        k = worlds.shape[0]
        current = np.repeat(worlds[None], actions.shape[0], axis=0).reshape(-1, worlds.shape[1])
        for a, action in enumerate(actions.tolist()):
            for row in range(a * k, (a + 1) * k):
                rules.apply_action(current[row], self.low, self.high, self.tiles_with_value, action)
        total = self.ply_weights[0] * self.values(current)
        for level in range(1, self.depth + 1):
            others_move(current, self.rollout, self.low, self.high, self.tiles_with_value, rng)
            counts = count_moves(current, self.tiles_with_value)
            after = np.empty((int(counts.sum()), current.shape[1]), dtype=np.int16)
            play_each_move(current, counts, self.low, self.high, self.tiles_with_value, after)
            level_values = final_pips(current, PLAYER, self.low, self.high)  # hands already over: exact
            if after.shape[0]:
                values = self.values(after)
                moving = counts > 0
                best = first_minimum_per_run(values, counts[moving])
                level_values[moving] = values[best]
                current[moving] = after[best]
            total += self.ply_weights[level] * level_values
        return total.reshape(actions.shape[0], k).mean(axis=1)
