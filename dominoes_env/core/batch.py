"""The rules over a batch of games: loops of the scalar engine's own kernels, compiled.

A batch is a 2-D array of states, one row per game, each row exactly the flat state of
:mod:`dominoes_env.core.rules`. Every function here loops over some of the rows (``rows``,
an index array: every game, or only those a caller steps) and calls the rules' kernels
(dealing, legality, playing a move, scoring, the observation encoder), so a rule is
written once, for one game and for thousands. Per-row inputs and outputs (``actions``,
``scores``, ``observations``...) are indexed like ``rows``: entry k belongs to game ``rows[k]``.

Each loop exists once, as a function over the entries ``[start, stop)`` with its own scratch
buffers; the ``*_parallel`` functions run blocks of entries on every core (numba's
``set_num_threads`` limits them), and small batches call the loop directly, which saves
the thread pool's start-up on every call.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from dominoes_env.core import observation as layout
from dominoes_env.core import rules
from dominoes_env.core.rewards import hand_rewards_into

#: entries per block of a parallel loop
BLOCK = 256


@njit(cache=True)
def deal_rows(states, rows, permutations, hand_indices, num_players, highest, rule_flags, deal_size, start, stop):
    """Deal hand ``hand_indices[k]`` into game ``rows[k]`` from shuffle ``permutations[k]``, k in [start, stop)."""
    scratch = np.empty(2 * permutations.shape[1], dtype=np.int16)
    for k in range(start, stop):
        hand_index = hand_indices[k]
        engine_value = rules.engine_value(hand_index, highest)
        rules.deal_hand(states[rows[k]], permutations[k], num_players, hand_index, engine_value,
                        rules.double_index(engine_value, highest), rule_flags, deal_size, scratch)


@njit(cache=True, parallel=True)
def deal_parallel(states, rows, permutations, hand_indices, num_players, highest, rule_flags, deal_size):
    blocks = (rows.shape[0] + BLOCK - 1) // BLOCK
    for block in prange(blocks):
        deal_rows(states, rows, permutations, hand_indices, num_players, highest, rule_flags, deal_size,
                  block * BLOCK, min(rows.shape[0], (block + 1) * BLOCK))


# Argument order: the batch's fixed arrays first (the caller keeps them in a tuple), then
# what changes from call to call.

@njit(cache=True)
def count_illegal(states, low, high, bad, rows, actions, start, stop):
    """Mark in `bad` the entries of [start, stop) whose action is not legal (out of range included); return how many."""
    count = 0
    for k in range(start, stop):
        bad[k] = not rules.is_legal(states[rows[k]], low, high, actions[k])
        count += bad[k]
    return count


@njit(cache=True)
def play_rows(states, low, high, tiles_with_value, reward_mode, scores, ended, went_out, rows, actions, rewards,
              start, stop):
    """Play ``actions[k]`` in game ``rows[k]``, k in [start, stop) (checked legal by the caller);
    where it ends the hand, set ``ended[k]`` and write the hand's scores and rewards and the
    seat that went out (-1: blocked). Returns how many hands ended."""
    count = 0
    for k in range(start, stop):
        state = states[rows[k]]
        rules.apply_action(state, low, high, tiles_with_value, actions[k])
        if state[rules.HAND_OVER] == 1:
            ended[k] = True
            rules.hand_scores(state, low, high, scores[k])
            hand_rewards_into(scores[k], reward_mode, rewards[k])
            went_out[k] = state[rules.WENT_OUT]
            count += 1
    return count


@njit(cache=True)
def check_and_play(states, low, high, tiles_with_value, reward_mode, bad, scores, ended, went_out, rows, actions,
                   rewards):
    """The whole move of a small batch in one call: if every action is legal, play them all and
    return the number of hands that ended; else change nothing and return -(number refused)."""
    refused = count_illegal(states, low, high, bad, rows, actions, 0, rows.shape[0])
    if refused:
        return -refused
    return play_rows(states, low, high, tiles_with_value, reward_mode, scores, ended, went_out, rows, actions, rewards,
                     0, rows.shape[0])


@njit(cache=True, parallel=True)
def check_and_play_parallel(states, low, high, tiles_with_value, reward_mode, bad, scores, ended, went_out, rows,
                            actions, rewards):
    """:func:`check_and_play` on every core."""
    blocks = (rows.shape[0] + BLOCK - 1) // BLOCK
    refused = 0
    for block in prange(blocks):
        refused += count_illegal(states, low, high, bad, rows, actions, block * BLOCK,
                                 min(rows.shape[0], (block + 1) * BLOCK))
    if refused:
        return -refused
    finished = 0
    for block in prange(blocks):
        finished += play_rows(states, low, high, tiles_with_value, reward_mode, scores, ended, went_out, rows, actions,
                              rewards, block * BLOCK, min(rows.shape[0], (block + 1) * BLOCK))
    return finished


@njit(cache=True)
def check_play_observe(states, low, high, tiles_with_value, reward_mode, bad, scores, ended, went_out, game_scores,
                       offsets, highest, max_hand, bits, players, viewers, rows, actions, rewards, observations, masks):
    """:func:`check_and_play`, then every game's observation and mask for its player to move
    (:func:`observe_rows`, `viewers` all -1), in one call: a whole step of a small batch. A game whose hand
    ended is observed at the hand's final position (the caller deals it and observes again)."""
    finished = check_and_play(states, low, high, tiles_with_value, reward_mode, bad, scores, ended, went_out, rows,
                              actions, rewards)
    if finished >= 0:
        observe_rows(states, game_scores, offsets, highest, max_hand, bits, tiles_with_value, rows, viewers, True,
                     observations, masks, players, 0, rows.shape[0])
    return finished


@njit(cache=True, parallel=True)
def check_play_observe_parallel(states, low, high, tiles_with_value, reward_mode, bad, scores, ended, went_out,
                                game_scores, offsets, highest, max_hand, bits, players, viewers, rows, actions,
                                rewards, observations, masks):
    """:func:`check_play_observe` on every core."""
    blocks = (rows.shape[0] + BLOCK - 1) // BLOCK
    refused = 0
    for block in prange(blocks):
        refused += count_illegal(states, low, high, bad, rows, actions, block * BLOCK,
                                 min(rows.shape[0], (block + 1) * BLOCK))
    if refused:
        return -refused
    finished = 0
    for block in prange(blocks):
        start, stop = block * BLOCK, min(rows.shape[0], (block + 1) * BLOCK)
        finished += play_rows(states, low, high, tiles_with_value, reward_mode, scores, ended, went_out, rows, actions,
                              rewards, start, stop)
        observe_rows(states, game_scores, offsets, highest, max_hand, bits, tiles_with_value, rows, viewers, True,
                     observations, masks, players, start, stop)
    return finished


@njit(cache=True)
def observe_one(state, viewer, game_scores, offsets, highest, max_hand, bits, tiles_with_value, observation, mask,
                legal):
    """One game as seat `viewer` sees it, and that seat's legal mask (all zeros unless it is its
    turn in a hand going on); `legal` is scratch of the mask's length."""
    observation[:] = 0
    layout.write_observation(state, viewer, game_scores, offsets, highest, max_hand, bits, observation)
    mask[:] = 0
    if state[rules.HAND_OVER] == 0 and viewer == state[rules.CURRENT_PLAYER]:
        for j in range(rules.fill_legal_actions(state, tiles_with_value, legal)):
            mask[legal[j]] = 1


@njit(cache=True)
def observe_rows(states, game_scores, offsets, highest, max_hand, bits, tiles_with_value, rows, viewers, by_game,
                 observations, masks, players, start, stop):
    """For k in [start, stop): game ``rows[k]`` as seat ``viewers[k]`` sees it (-1: its player to
    move), with that seat's legal mask (:func:`observe_one`), and the seat to move. The
    outputs are written at row k, or at row ``rows[k]`` with `by_game` (into a whole batch's
    arrays). ``game_scores`` has one row per game."""
    legal = np.empty(masks.shape[1], dtype=np.int64)
    for k in range(start, stop):
        game = rows[k]
        out = game if by_game else k
        state = states[game]
        mover = state[rules.CURRENT_PLAYER]
        players[out] = mover
        observe_one(state, mover if viewers[k] < 0 else viewers[k], game_scores[game], offsets, highest, max_hand,
                    bits, tiles_with_value, observations[out], masks[out], legal)


@njit(cache=True, parallel=True)
def observe_parallel(states, game_scores, offsets, highest, max_hand, bits, tiles_with_value, rows, viewers, by_game,
                     observations, masks, players):
    blocks = (rows.shape[0] + BLOCK - 1) // BLOCK
    for block in prange(blocks):
        observe_rows(states, game_scores, offsets, highest, max_hand, bits, tiles_with_value, rows, viewers, by_game,
                     observations, masks, players, block * BLOCK, min(rows.shape[0], (block + 1) * BLOCK))


@njit(cache=True)
def close_hands(ended, scores, went_out, game_scores, hands_played, num_hands, rows, by_game, hand_over,
                hand_scores, hand_went_out, game_over):
    """Book the hands a move ended (entries k with ``ended[k]``, the move's scratch flags, which
    are cleared): add their scores to their games' and count the hand; report each in
    ``hand_over``, ``hand_scores``, ``hand_went_out`` and ``game_over`` (whether it was the
    game's last hand), at row k or, with `by_game`, at row ``rows[k]``. Returns the number
    of games that ended."""
    games_over = 0
    for k in range(rows.shape[0]):
        if not ended[k]:
            continue
        ended[k] = False
        game = rows[k]
        out = game if by_game else k
        hand_over[out] = True
        for seat in range(scores.shape[1]):
            game_scores[game, seat] += scores[k, seat]
            hand_scores[out, seat] = scores[k, seat]
        hand_went_out[out] = went_out[k]
        hands_played[game] += 1
        if hands_played[game] >= num_hands:
            game_over[out] = True
            games_over += 1
    return games_over
