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
the thread pool's start-up on every call. The kernels of a move take the batch's arrays in
one buffer (:class:`BatchArrays`, :mod:`dominoes_env.core.arena`): a call's cost grows with
its array arguments, and a move of one game is only a few microseconds of work.
"""

from __future__ import annotations

import os
import sys
from typing import NamedTuple

import numpy as np
from numba import prange

from dominoes_env.core import arena, rules
from dominoes_env.core import observation as layout
from dominoes_env.core.compiled import kernel
from dominoes_env.core.config import GameConfig
from dominoes_env.core.rewards import hand_rewards_into

#: entries per block of a parallel loop
BLOCK = 256

#: legal moves remembered per game (:attr:`BatchArrays.legal`); a position with more is checked by the rules
LEGAL_CAPACITY = 32

#: the encoder (observation.write_observation), compiled into the batch's observing loops: a
#: step is about 7% faster with it inlined there; elsewhere it stays one compiled function, so
#: its other callers do not compile it again
_write_observation = kernel(layout.write_observation.py_func, inline="always", cache=False)


#: what a batch on threads asks of numba's OpenMP threads waiting for work, unless the user chose
#: (THREADING_CHOICES): GNU OpenMP's threads spin 1,000 rounds, then sleep; other OpenMP runtimes'
#: (LLVM's, Intel's: ``KMP_BLOCKTIME``) sleep at once
SHORT_SPINS = {"GOMP_SPINCOUNT": "1000", "KMP_BLOCKTIME": "0"}
#: the settings by which a user chooses how the threads wait, or another threading layer
THREADING_CHOICES = frozenset({"OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME", "NUMBA_THREADING_LAYER"})


def prefer_short_spins() -> None:
    """Let numba's OpenMP threads spin only briefly before they sleep while they wait for work
    (:data:`SHORT_SPINS`), unless the user set one of :data:`THREADING_CHOICES`.

    Threads that spin on hold their cores (OpenMP's default): on a busy machine two threads then
    ran several times slower than one. Threads that sleep at once (``OMP_WAIT_POLICY=PASSIVE``,
    the setting before) were never slower than one on busy cores, but each parallel loop then
    waits tens of microseconds for them to wake. A short spin bridges the gap between the
    picker's loop and the step's: two threads 1.72x one thread on free cores against 1.62x for
    sleeping at once, 1.21x against 1.20x on busy cores, never below 1.04x there (medians of six
    alternating rounds, ``python benchmarks/vector_threads.py --against``).
    OpenMP reads the setting when its runtime starts, at the first parallel loop of the
    process, so this is called before one (when a batch or the picker asks for more than one
    thread), and only the first call looks: the picker asks at every step.
    """
    global _short_spins_asked
    if _short_spins_asked:
        return
    _short_spins_asked = True
    if not any(name in os.environ for name in THREADING_CHOICES):
        os.environ.update(SHORT_SPINS)


_short_spins_asked = False  # whether prefer_short_spins() has looked (once a process)


# ---------------------------------------------------------------- a batch's arrays, in one buffer

class BatchArrays(NamedTuple):
    """A batch's arrays, views of one arena buffer (:func:`allocate`), in the order :func:`unpack` reads them."""

    states: np.ndarray  #: (B, S) int16, the games
    low: np.ndarray  #: (T,) int16, the tile table (:class:`~dominoes_env.core.tiles.TileSet`)
    high: np.ndarray  #: (T,) int16
    tiles_with_value: np.ndarray  #: (V, W) int16
    offsets: np.ndarray  #: the observation layout's offsets (int64)
    settings: np.ndarray  #: (7,) int64, indexed by REWARD_MODE, HIGHEST, MAX_HAND, SCORE_BITS, NUM_HANDS...
    bad: np.ndarray  #: (B,) bool, a move's scratch: the actions refused
    scores: np.ndarray  #: (B, n) int64, a move's scratch: the scores of the hands it ended
    ended: np.ndarray  #: (B,) bool, a move's scratch: the hands it ended
    went_out: np.ndarray  #: (B,) int64, a move's scratch: who went out (-1: blocked)
    game_scores: np.ndarray  #: (B, n) int64, the scores of the hands finished in each game
    players: np.ndarray  #: (B,) int64, each game's player to move
    hands_played: np.ndarray  #: (B,) int64, hands finished in each game
    viewers: np.ndarray  #: (B,) int64, all -1: observe each game for its player to move
    rows: np.ndarray  #: (B,) int64, 0..B-1: every game
    #: (B, C) int16, each game's legal moves, ascending, as its last step observed them
    #: (:data:`LEGAL_CAPACITY`): the next step checks and picks moves from them instead of
    #: the rules, about 60 ns a game less; only where ``legal_counts`` is >= 0
    legal: np.ndarray
    #: (B,) int64, how many of ``legal`` are the game's; -1: unknown (dealt or moved since, or
    #: more than C), ask the rules. Whatever changes a state without observing it sets -1.
    legal_counts: np.ndarray


_ARRAYS = len(BatchArrays._fields)

#: indices of BatchArrays.settings
REWARD_MODE, HIGHEST, MAX_HAND, SCORE_BITS, NUM_HANDS, RULE_FLAGS, DEAL_SIZE = range(7)


def allocate(config: GameConfig, num_games: int, num_hands: int, reward_mode: int) -> tuple[np.ndarray, BatchArrays]:
    """The arena of a batch of `num_games` games of `config` (all zero, not dealt) and its
    arrays, the tile tables, the observation layout and the settings copied in."""
    game_layout = layout.observation_layout(config, num_hands)
    tiles, offsets, b, n = config.tiles, game_layout.offsets, num_games, config.num_players
    specs: dict[str, tuple[tuple[int, ...], type]] = {
        "states": ((b, rules.state_size(n, config.num_tiles)), np.int16), "low": (tiles.low.shape, np.int16),
        "high": (tiles.high.shape, np.int16), "tiles_with_value": (tiles.tiles_with_value.shape, np.int16),
        "offsets": (offsets.shape, np.int64), "settings": ((DEAL_SIZE + 1,), np.int64), "bad": ((b,), np.bool_),
        "scores": ((b, n), np.int64), "ended": ((b,), np.bool_), "went_out": ((b,), np.int64),
        "game_scores": ((b, n), np.int64), "players": ((b,), np.int64), "hands_played": ((b,), np.int64),
        "viewers": ((b,), np.int64), "rows": ((b,), np.int64),
        "legal": ((b, min(LEGAL_CAPACITY, config.num_actions)), np.int16), "legal_counts": ((b,), np.int64)}
    buffer, views = arena.allocate([specs[name] for name in BatchArrays._fields])
    arrays = BatchArrays(*views)
    arrays.low[:], arrays.high[:], arrays.tiles_with_value[:] = tiles.low, tiles.high, tiles.tiles_with_value
    arrays.offsets[:] = offsets
    arrays.settings[[REWARD_MODE, HIGHEST, MAX_HAND, SCORE_BITS, NUM_HANDS, RULE_FLAGS, DEAL_SIZE]] = (
        reward_mode, config.highest_double, config.max_hand_size, game_layout.score_bits, num_hands, config.rule_flags,
        config.deal_size)
    arrays.went_out[:] = -1
    arrays.viewers[:] = -1
    arrays.rows[:] = np.arange(b)
    arrays.legal_counts[:] = -1
    return buffer, arrays


@kernel(inline="always")
def unpack(buffer):
    """The arena's arrays as a tuple, in :class:`BatchArrays`' order. Every call makes every view,
    whichever are used (numba keeps the unused ones for their reference counts): a kernel
    unpacks once and hands the arrays on (each more unpack cost a step of one game about 0.8 us)."""
    head = arena.header(buffer, _ARRAYS)
    int16, int64, bool_ = np.int16, np.int64, np.bool_
    return (arena.matrix(buffer, head, 0, int16), arena.vector(buffer, head, 1, int16),
            arena.vector(buffer, head, 2, int16), arena.matrix(buffer, head, 3, int16),
            arena.vector(buffer, head, 4, int64), arena.vector(buffer, head, 5, int64),
            arena.vector(buffer, head, 6, bool_), arena.matrix(buffer, head, 7, int64),
            arena.vector(buffer, head, 8, bool_), arena.vector(buffer, head, 9, int64),
            arena.matrix(buffer, head, 10, int64), arena.vector(buffer, head, 11, int64),
            arena.vector(buffer, head, 12, int64), arena.vector(buffer, head, 13, int64),
            arena.vector(buffer, head, 14, int64), arena.matrix(buffer, head, 15, int16),
            arena.vector(buffer, head, 16, int64))


# ---------------------------------------------------------------- dealing, observing

@kernel
def deal_rows(buffer, rows, uniforms, hand_indices, start, stop):
    """Deal hand ``hand_indices[k]`` into game ``rows[k]`` of arena `buffer`, k in [start, stop),
    from a shuffle of the tiles by ``uniforms[k]`` (T floats in [0, 1) from the caller's seeded
    generator): a Fisher-Yates shuffle, uniform over the T! orders, with no generator state in
    compiled code."""
    arrays = unpack(buffer)  # once: every array of the tuple is made, used or not
    states, settings, scores, legal_counts = arrays[0], arrays[5], arrays[7], arrays[16]  # scores: a column per player
    highest = settings[HIGHEST]
    t = uniforms.shape[1]
    permutation = np.empty(t, dtype=np.int16)
    scratch = np.empty(2 * t, dtype=np.int16)
    for k in range(start, stop):
        for j in range(t):
            permutation[j] = j
        for j in range(t - 1, 0, -1):  # swap place j with a uniformly random place 0..j
            other = min(int(uniforms[k, j] * (j + 1)), j)  # min: u * (j + 1) may round up to j + 1
            permutation[j], permutation[other] = permutation[other], permutation[j]
        hand_index = hand_indices[k]
        engine_value = rules.engine_value(hand_index, highest)
        rules.deal_hand(states[rows[k]], permutation, scores.shape[1], hand_index, engine_value,
                        rules.double_index(engine_value, highest), settings[RULE_FLAGS], settings[DEAL_SIZE], scratch)
        legal_counts[rows[k]] = -1


@kernel(parallel=True)
def deal_parallel(buffer, rows, uniforms, hand_indices):
    """:func:`deal_rows` over every entry, on every core."""
    blocks = (rows.shape[0] + BLOCK - 1) // BLOCK
    for block in prange(blocks):
        deal_rows(buffer, rows, uniforms, hand_indices, block * BLOCK, min(rows.shape[0], (block + 1) * BLOCK))


@kernel
def observe_games(buffer, rows, viewers, by_game, observations, masks, players, start, stop):
    """:func:`observe_rows` of the games ``rows[start:stop]`` of arena `buffer`."""
    (states, _, _, tiles_with_value, offsets, settings, _, _, _, _, game_scores) = unpack(buffer)[:11]
    observe_rows(states, game_scores, offsets, settings[HIGHEST], settings[MAX_HAND], settings[SCORE_BITS],
                 tiles_with_value, rows, viewers, by_game, observations, masks, players, start, stop)


@kernel(parallel=True)
def observe_games_parallel(buffer, rows, viewers, by_game, observations, masks, players):
    """:func:`observe_games` over every entry, on every core."""
    blocks = (rows.shape[0] + BLOCK - 1) // BLOCK
    for block in prange(blocks):
        observe_games(buffer, rows, viewers, by_game, observations, masks, players, block * BLOCK,
                      min(rows.shape[0], (block + 1) * BLOCK))


# ---------------------------------------------------------------- a move

@kernel
def count_illegal(states, low, high, bad, legal, legal_counts, rows, actions, start, stop):
    """Mark in `bad` the entries of [start, stop) whose action is not legal in game ``rows[k]``
    (out of range included); return how many. A game's remembered legal moves answer where
    known (``legal_counts`` >= 0, :attr:`BatchArrays.legal`), else the rules."""
    count = 0
    for k in range(start, stop):
        game = rows[k]
        known = legal_counts[game]
        if known >= 0:
            action = actions[k]
            found = False
            for j in range(known):
                found |= legal[game, j] == action
            bad[k] = not found
        else:
            bad[k] = not rules.is_legal(states[game], low, high, actions[k])
        count += bad[k]
    return count


@kernel(parallel=True)
def count_illegal_parallel(states, low, high, bad, legal, legal_counts, rows, actions):
    """:func:`count_illegal` over every entry, on every core."""
    blocks = (rows.shape[0] + BLOCK - 1) // BLOCK
    refused = 0
    for block in prange(blocks):
        refused += count_illegal(states, low, high, bad, legal, legal_counts, rows, actions, block * BLOCK,
                                 min(rows.shape[0], (block + 1) * BLOCK))
    return refused


@kernel
def play_rows(states, low, high, tiles_with_value, reward_mode, scores, ended, went_out, legal_counts, rows, actions,
              rewards, start, stop):
    """Play ``actions[k]`` in game ``rows[k]``, k in [start, stop) (checked legal by the caller);
    where it ends the hand, set ``ended[k]`` and write the hand's scores and rewards and the
    seat that went out (-1: blocked). The games' remembered legal moves are forgotten. Returns
    how many hands ended."""
    count = 0
    for k in range(start, stop):
        state = states[rows[k]]
        rules.apply_action(state, low, high, tiles_with_value, actions[k])
        legal_counts[rows[k]] = -1
        if state[rules.HAND_OVER] == 1:
            ended[k] = True
            rules.hand_scores(state, low, high, scores[k])
            hand_rewards_into(scores[k], reward_mode, rewards[k])
            went_out[k] = state[rules.WENT_OUT]
            count += 1
    return count


@kernel
def check_and_play(buffer, rows, actions, rewards):
    """The whole move of a small batch in one call: if every action is legal, play ``actions[k]``
    in game ``rows[k]`` of arena `buffer` and return the number of hands that ended (their
    scores and seats in the move's scratch at entry k); else change nothing, mark the refused
    entries in the scratch ``bad`` and return -(number refused)."""
    (states, low, high, tiles_with_value, _, settings, bad, scores, ended, went_out, _, _, _, _, _, legal,
     legal_counts) = unpack(buffer)
    refused = count_illegal(states, low, high, bad, legal, legal_counts, rows, actions, 0, rows.shape[0])
    if refused:
        return -refused
    return play_rows(states, low, high, tiles_with_value, settings[REWARD_MODE], scores, ended, went_out,
                     legal_counts, rows, actions, rewards, 0, rows.shape[0])


@kernel(parallel=True)
def check_and_play_parallel(buffer, rows, actions, rewards):
    """:func:`check_and_play` on every core."""
    (states, low, high, tiles_with_value, _, settings, bad, scores, ended, went_out, _, _, _, _, _, legal,
     legal_counts) = unpack(buffer)
    refused = count_illegal_parallel(states, low, high, bad, legal, legal_counts, rows, actions)
    if refused:
        return -refused
    blocks = (rows.shape[0] + BLOCK - 1) // BLOCK
    finished = 0
    for block in prange(blocks):
        finished += play_rows(states, low, high, tiles_with_value, settings[REWARD_MODE], scores, ended, went_out,
                              legal_counts, rows, actions, rewards, block * BLOCK,
                              min(rows.shape[0], (block + 1) * BLOCK))
    return finished


@kernel
def move_observe_rows(arrays, actions, uniforms, pick, rewards, observations, masks, start, stop):
    """The move and observation of games ``[start, stop)`` of an arena's `arrays` (:func:`unpack`;
    game k is row k), game by game in one pass: play ``actions[k]`` (checked legal by the
    caller) or, with `pick`, a uniformly random legal move, recorded in ``actions[k]``: number
    ``floor(uniforms[k] * count)`` of the game's legal moves in ascending order,
    :func:`pick_legal`'s choice over its mask, so the same stream gives the same moves. A hand that ends is booked as
    :func:`play_rows` books it; then the game's observation and mask for its next player are
    written (:func:`observe_rows`; a hand that ended is observed at its final position: the
    caller deals it and observes again), and its legal moves remembered for the next step
    (:attr:`BatchArrays.legal`: the pick and the check read them). Returns the number of hands
    that ended."""
    (states, low, high, tiles_with_value, offsets, settings, _, scores, ended, went_out, game_scores, players, _, _, _,
     known, known_counts) = arrays
    capacity = known.shape[1]
    highest, max_hand, bits, reward_mode = settings[HIGHEST], settings[MAX_HAND], settings[SCORE_BITS], \
        settings[REWARD_MODE]
    legal = np.empty(masks.shape[1], dtype=np.int64)
    count = 0
    for k in range(start, stop):
        state = states[k]
        if pick:
            if known_counts[k] >= 0:
                actions[k] = known[k, int(uniforms[k] * known_counts[k])]
            else:
                actions[k] = legal[int(uniforms[k] * rules.fill_legal_actions(state, tiles_with_value, legal))]
        # play_rows' move and booking, written out: as a function called per game (inlined or
        # not) it cost 15% of a step, in its array arguments' reference counts
        rules.apply_action(state, low, high, tiles_with_value, actions[k])
        if state[rules.HAND_OVER] == 1:
            ended[k] = True
            rules.hand_scores(state, low, high, scores[k])
            hand_rewards_into(scores[k], reward_mode, rewards[k])
            went_out[k] = state[rules.WENT_OUT]
            count += 1
        mover = state[rules.CURRENT_PLAYER]
        players[k] = mover
        legal_count = observe_one(state, mover, game_scores[k], offsets, highest, max_hand, bits, tiles_with_value,
                                  observations[k], masks[k], legal)
        if 0 <= legal_count <= capacity:
            for j in range(legal_count):
                known[k, j] = legal[j]
            known_counts[k] = legal_count
        else:  # the hand is over, or more moves than remembered
            known_counts[k] = -1
    return count


@kernel
def check_play_observe(buffer, actions, rewards, observations, masks):
    """A whole step of every game of arena `buffer` in one call: if every action is legal, play
    ``actions[k]`` in game k and write its observation and mask (:func:`move_observe_rows`);
    return the number of hands that ended. Else change nothing, mark the refused entries in the
    scratch ``bad`` and return -(number refused)."""
    arrays = unpack(buffer)
    states, low, high, _, _, _, bad, _, _, _, _, _, _, _, rows, legal, legal_counts = arrays
    refused = count_illegal(states, low, high, bad, legal, legal_counts, rows, actions, 0, actions.shape[0])
    if refused:
        return -refused
    return move_observe_rows(arrays, actions, np.empty(0), False, rewards, observations, masks, 0, actions.shape[0])


@kernel(parallel=True)
def check_play_observe_parallel(buffer, actions, rewards, observations, masks):
    """:func:`check_play_observe` on every core. The moves are checked on one: against the legal
    moves remembered, a few nanoseconds a game, less than waking the other threads for it (about
    50 us a parallel loop on a 2-core virtual machine)."""
    arrays = unpack(buffer)
    states, low, high, _, _, _, bad, _, _, _, _, _, _, _, rows, legal, legal_counts = arrays
    refused = count_illegal(states, low, high, bad, legal, legal_counts, rows, actions, 0, actions.shape[0])
    if refused:
        return -refused
    no_uniforms = np.empty(0)
    b = actions.shape[0]
    finished = 0
    for block in prange((b + BLOCK - 1) // BLOCK):
        finished += move_observe_rows(arrays, actions, no_uniforms, False, rewards, observations, masks,
                                      block * BLOCK, min(b, (block + 1) * BLOCK))
    return finished


@kernel
def play_random_observe(buffer, uniforms, actions, rewards, observations, masks):
    """A whole step of every game of arena `buffer` with random legal moves (:func:`move_observe_rows`
    with `pick`): one pass, with no legality check, since each move comes from its game's legal
    list. Every game's hand must be going on (the caller checks)."""
    return move_observe_rows(unpack(buffer), actions, uniforms, True, rewards, observations, masks, 0,
                             uniforms.shape[0])


@kernel(parallel=True)
def play_random_observe_parallel(buffer, uniforms, actions, rewards, observations, masks):
    """:func:`play_random_observe` on every core."""
    b = actions.shape[0]
    arrays = unpack(buffer)
    finished = 0
    for block in prange((b + BLOCK - 1) // BLOCK):
        finished += move_observe_rows(arrays, actions, uniforms, True, rewards, observations, masks, block * BLOCK,
                                      min(b, (block + 1) * BLOCK))
    return finished


def _observer(encode):
    """A compiled, always-inlined `observe_one` that writes the observation with `encode`."""

    @kernel(inline="always", cache=False)
    def observe(state, viewer, game_scores, offsets, highest, max_hand, bits, tiles_with_value, observation, mask,
                legal):
        observation[:] = 0
        encode(state, viewer, game_scores, offsets, highest, max_hand, bits, observation)
        mask[:] = 0
        if state[rules.HAND_OVER] == 0 and viewer == state[rules.CURRENT_PLAYER]:
            count = rules.fill_legal_actions(state, tiles_with_value, legal)
            for j in range(count):
                mask[legal[j]] = 1
            return count
        return -1

    return observe


#: One game as seat `viewer` sees it, and that seat's legal mask (all zeros unless it is its
#: turn in a hand going on); `legal` is scratch of the mask's length, left holding the legal
#: moves, whose number is returned (-1: no mask to fill). The encoder is inlined: this is
#: the step's observer.
observe_one = _observer(_write_observation)

#: :data:`observe_one` calling the one compiled encoder instead of inlining it: for
#: :func:`observe_rows`, which the policies' search and evaluation call at every decision. An
#: inlined copy there cost 1.4 s of compiling on a first run, more than the encoder itself.
_observe_one_called = _observer(layout.write_observation)


@kernel
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
        _observe_one_called(state, mover if viewers[k] < 0 else viewers[k], game_scores[game], offsets, highest,
                            max_hand, bits, tiles_with_value, observations[out], masks[out], legal)


@kernel
def close_hands(buffer, rows, by_game, hand_over, hand_scores, hand_went_out, game_over):
    """Book the hands a move ended in arena `buffer` (entries k with ``ended[k]``, the move's
    scratch flags, which are cleared): add their scores to their games' and count the hand;
    report each in ``hand_over``, ``hand_scores``, ``hand_went_out`` and ``game_over`` (whether
    it was the game's last hand), at row k or, with `by_game`, at row ``rows[k]``. Returns the
    number of games that ended."""
    _, _, _, _, _, settings, _, scores, ended, went_out, game_scores, _, hands_played = unpack(buffer)[:13]
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
        if hands_played[game] >= settings[NUM_HANDS]:
            game_over[out] = True
            games_over += 1
    return games_over


#: whether a word's first byte is its lowest (the order :func:`pick_legal` reads the bytes of a word in)
_LITTLE_ENDIAN = sys.byteorder == "little"


def mask_words(masks: np.ndarray) -> np.ndarray:
    """(B, A) masks (any dtype; not 0: legal) as :func:`pick_legal` reads them: their bytes four at
    a time, (B, ceil(A / 4)) uint32, a view where the masks are one-byte, C-ordered, aligned and
    A is a multiple of 4 (the env's own at four players, double-nine), else a zero-padded copy."""
    if not (masks.dtype.itemsize == 1 and masks.dtype.kind in "biu"):
        masks = masks != 0
    rows, width = masks.shape
    if width % 4 or not masks.flags.c_contiguous or masks.ctypes.data % 4:
        padded = np.zeros((rows, -(-width // 4) * 4), dtype=np.uint8)
        padded[:, :width] = masks
        masks = padded
    return masks.view(np.uint32)


@kernel(inline="always")
def _nonzero_bytes(word):
    """How many of the four bytes of `word` (a uint32's value, as int64) are not zero: each
    byte's top bit set where the byte is not zero, moved to its lowest bit, and summed by one
    multiplication."""
    flags = ((((word & 0x7F7F7F7F) + 0x7F7F7F7F) | word) >> 7) & 0x01010101
    return ((flags * 0x01010101) & 0xFFFFFFFF) >> 24


@kernel
def pick_legal(words, uniforms, out, start, stop):
    """For each row k in [start, stop) of (B, A) masks, its legal action number ``floor(uniforms[k]
    * count)`` in ascending order, where count is the row's number of legal actions (bytes not
    0): one uniform per row gives a uniformly random legal action (-1 where none is legal).

    `words` are the masks' bytes read four at a time (:func:`mask_words`). A mask holds a few
    legal actions among hundreds: counting and then walking whole words, skipping the empty
    ones, takes about 60% of the time of a byte-by-byte walk (48 ns a row of 276 bytes against
    80), whose branch on every byte the compiler cannot vectorise."""
    for k in range(start, stop):
        row = words[k]
        count = 0
        for w in range(row.shape[0]):
            count += _nonzero_bytes(np.int64(row[w]))
        if count == 0:
            out[k] = -1
            continue
        wanted = int(uniforms[k] * count)
        w = 0
        word = np.int64(row[0])
        while wanted >= _nonzero_bytes(word):  # the word holding the wanted action
            wanted -= _nonzero_bytes(word)
            w += 1
            word = np.int64(row[w])
        byte = 0
        for byte in range(4):
            if (word >> (8 * byte if _LITTLE_ENDIAN else 8 * (3 - byte))) & 0xFF:
                if wanted == 0:
                    break
                wanted -= 1
        out[k] = 4 * w + byte
    return out


@kernel(parallel=True)
def pick_legal_parallel(words, uniforms, out):
    """:func:`pick_legal` over every row, on every core (rows are independent: the same picks)."""
    blocks = (words.shape[0] + BLOCK - 1) // BLOCK
    for block in prange(blocks):
        pick_legal(words, uniforms, out, block * BLOCK, min(words.shape[0], (block + 1) * BLOCK))
    return out
