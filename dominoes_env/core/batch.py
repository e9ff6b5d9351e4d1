"""The rules over a batch of games: loops of the scalar engine's own kernels, compiled.

A batch is a 2-D array of states, one row per game, each row exactly the flat state of
:mod:`dominoes_env.core.rules`. Every function here loops over the rows and calls the
rules' kernels (dealing, legality, playing a move, scoring, the observation encoder), so a
rule is written once, for one game and for thousands.

Each loop exists once, as a function over the rows ``[start, stop)`` with its own scratch
buffers; the ``*_parallel`` functions run blocks of rows on every core (numba's
``set_num_threads`` limits them), and small batches call the row loop directly, which
saves the thread pool's start-up on every call.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from dominoes_env.core import observation as layout
from dominoes_env.core import rules
from dominoes_env.core.rewards import hand_rewards_into

#: games per block of a parallel loop
BLOCK = 256


@njit(cache=True)
def deal_rows(states, rows, permutations, hand_indices, num_players, highest, rule_flags, deal_size, start, stop):
    """Deal hand ``hand_indices[k]`` into game ``rows[k]`` from shuffle ``permutations[k]``, k in [start, stop)."""
    scratch = np.empty(2 * permutations.shape[1], dtype=np.int16)
    for k in range(start, stop):
        hand_index = hand_indices[k]
        engine_value = (highest - hand_index) % (highest + 1)
        rules.deal_hand(states[rows[k]], permutations[k], num_players, hand_index, engine_value,
                        rules.double_index(engine_value, highest), rule_flags, deal_size, scratch)


@njit(cache=True, parallel=True)
def deal_parallel(states, rows, permutations, hand_indices, num_players, highest, rule_flags, deal_size):
    blocks = (rows.shape[0] + BLOCK - 1) // BLOCK
    for block in prange(blocks):
        deal_rows(states, rows, permutations, hand_indices, num_players, highest, rule_flags, deal_size,
                  block * BLOCK, min(rows.shape[0], (block + 1) * BLOCK))


@njit(cache=True)
def count_illegal(states, actions, low, high, bad, start, stop):
    """Mark in `bad` the games of [start, stop) whose action is not legal (out of range included); return how many."""
    count = 0
    for i in range(start, stop):
        bad[i] = not rules.is_legal(states[i], low, high, actions[i])
        count += bad[i]
    return count


@njit(cache=True)
def play_rows(states, actions, low, high, tiles_with_value, reward_mode, scores, rewards, ended, went_out,
              start, stop):
    """Play ``actions[i]`` in game i, for i in [start, stop) (checked legal by the caller); where it
    ends the hand, write the hand's scores and rewards and the seat that went out (-1: blocked).
    Returns how many hands ended."""
    count = 0
    for i in range(start, stop):
        state = states[i]
        rules.apply_action(state, low, high, tiles_with_value, actions[i])
        if state[rules.HAND_OVER] == 1:
            ended[i] = True
            rules.hand_scores(state, low, high, scores[i])
            hand_rewards_into(scores[i], reward_mode, rewards[i])
            went_out[i] = state[rules.WENT_OUT]
            count += 1
    return count


@njit(cache=True)
def check_and_play(states, actions, low, high, tiles_with_value, reward_mode, bad, scores, rewards, ended, went_out):
    """The whole move of a small batch in one call: if every action is legal, play them all and
    return the number of hands that ended; else change nothing and return -(number refused)."""
    refused = count_illegal(states, actions, low, high, bad, 0, states.shape[0])
    if refused:
        return -refused
    return play_rows(states, actions, low, high, tiles_with_value, reward_mode, scores, rewards, ended, went_out,
                     0, states.shape[0])


@njit(cache=True, parallel=True)
def check_and_play_parallel(states, actions, low, high, tiles_with_value, reward_mode, bad, scores, rewards, ended,
                            went_out):
    """:func:`check_and_play` on every core."""
    blocks = (states.shape[0] + BLOCK - 1) // BLOCK
    refused = 0
    for block in prange(blocks):
        refused += count_illegal(states, actions, low, high, bad, block * BLOCK,
                                 min(states.shape[0], (block + 1) * BLOCK))
    if refused:
        return -refused
    finished = 0
    for block in prange(blocks):
        finished += play_rows(states, actions, low, high, tiles_with_value, reward_mode, scores, rewards, ended,
                              went_out, block * BLOCK, min(states.shape[0], (block + 1) * BLOCK))
    return finished


@njit(cache=True)
def observe_rows(states, game_scores, offsets, highest, max_hand, bits, tiles_with_value, observations, masks,
                 players, start, stop):
    """Each game's observation and legal mask for its player to move (all zeros once the hand is
    over), and that player's seat, for the games of [start, stop)."""
    legal = np.empty(masks.shape[1], dtype=np.int64)
    for i in range(start, stop):
        state = states[i]
        viewer = state[rules.CURRENT_PLAYER]
        players[i] = viewer
        observations[i, :] = 0
        layout.write_observation(state, viewer, game_scores[i], offsets, highest, max_hand, bits, observations[i])
        masks[i, :] = 0
        if state[rules.HAND_OVER] == 0:
            for k in range(rules.fill_legal_actions(state, tiles_with_value, legal)):
                masks[i, legal[k]] = 1


@njit(cache=True, parallel=True)
def observe_parallel(states, game_scores, offsets, highest, max_hand, bits, tiles_with_value, observations, masks,
                     players):
    blocks = (states.shape[0] + BLOCK - 1) // BLOCK
    for block in prange(blocks):
        observe_rows(states, game_scores, offsets, highest, max_hand, bits, tiles_with_value, observations, masks,
                     players, block * BLOCK, min(states.shape[0], (block + 1) * BLOCK))
