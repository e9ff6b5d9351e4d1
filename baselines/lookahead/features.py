"""The linear evaluation's features of a position, from one seat's point of view.

The look-ahead values positions it reaches by playing sampled worlds forward, so its
features are computed from engine states (compiled, many at a time) rather than from
observation vectors; they read only what the seat can see (its own hand and the public
table), so the same features describe the real position and every sampled one. Each
feature is scaled to about [0, 1] so that one learning rate suits all weights.

The evaluation predicts the seat's pips left at the end of the hand (lower is better):
``value = weights . features``.
"""

from __future__ import annotations

import numpy as np

from baselines.policies.chain_search import search_best_chain
from dominoes_env.core import rules
from dominoes_env.core.compiled import kernel

#: The features, in order (the weights file lists them, so a file of another version is refused).
FEATURE_NAMES = (
    "bias",
    "pips_held",  # my pips / 50
    "tiles_held",  # my tiles / 10
    "doubles_held",  # my doubles / 3
    "playable_on_my_line",  # my tiles that fit my line now / 5
    "playable_elsewhere",  # my tiles that fit another line open to me now (and not mine) / 5
    "stranded_pips",  # pips of my tiles that fit no open line at all / 50
    "chain_value",  # the best chain's value from my line (best_line's, up to 5 tiles) / 50
    "my_marker_up",  # my line is open to the others
    "fewest_tiles_of_others",  # the shortest opposing hand / 10
    "others_about_to_go_out",  # opponents holding at most two tiles / 3
    "others_markers_up",  # share of the opponents' lines open to me
    "dummy_open",
    "turns_until_i_move",  # (0 = my move) / players
    "boneyard",  # tiles face down / 20
)
NUM_FEATURES = len(FEATURE_NAMES)
CHAIN_DEPTH = 5  # the chain feature's search depth: short keeps a rollout position cheap


@kernel(inline="always")
def write_features(state, seat, low, high, in_pow, off_pow, out, hand, positions):
    """Features of `state` as seat `seat` sees it, into `out` (NUM_FEATURES floats).

    `hand` and `positions` are scratch arrays of the set's size and CHAIN_DEPTH.
    """
    n = state[rules.NUM_PLAYERS]
    t = state[rules.NUM_TILES]
    owner, _, _, open_values, _, marker_up, _, hand_sizes, _ = rules.block_starts(n, t)
    held = pips = doubles = on_mine = elsewhere = stranded = 0
    mine = state[open_values + seat]
    for tile in range(t):
        if state[owner + tile] != seat:
            continue
        hand[held] = tile
        held += 1
        pips += low[tile] + high[tile]
        doubles += low[tile] == high[tile]
        if low[tile] == mine or high[tile] == mine:
            on_mine += 1
            continue
        fits = False
        for line in range(n + 1):
            if line != seat and rules.may_play_on(state, seat, line):
                value = state[open_values + line]
                fits = fits or low[tile] == value or high[tile] == value
        if fits:
            elsewhere += 1
        else:
            stranded += low[tile] + high[tile]
    chain = 0.0
    if held:
        # int64 arguments: the planners' signature, so their compiled search is reused
        chain, _ = search_best_chain(hand[:held], np.int64(mine), low, high, in_pow, off_pow, np.int64(CHAIN_DEPTH),
                                     positions)
    fewest, close, others_up = 1 << 30, 0, 0
    for rel in range(1, n):
        other = rules.absolute_line(seat, rel, n)
        fewest = min(fewest, state[hand_sizes + other])
        close += state[hand_sizes + other] <= 2
        others_up += state[marker_up + other]
    out[0] = 1.0
    out[1] = pips / 50.0
    out[2] = held / 10.0
    out[3] = doubles / 3.0
    out[4] = on_mine / 5.0
    out[5] = elsewhere / 5.0
    out[6] = stranded / 50.0
    out[7] = chain / 50.0
    out[8] = state[marker_up + seat]
    out[9] = fewest / 10.0
    out[10] = close / 3.0
    out[11] = others_up / max(n - 1, 1)
    out[12] = state[rules.DUMMY_OPEN]
    out[13] = rules.relative_line(state[rules.CURRENT_PLAYER], seat, n) / n
    out[14] = state[rules.PILE_COUNT] / 20.0


@kernel
def features_of_states(states, seat, low, high, in_pow, off_pow):
    """(k, NUM_FEATURES) features of k states, each as seat `seat` sees it."""
    out = np.empty((states.shape[0], NUM_FEATURES), dtype=np.float64)
    hand = np.empty(states.shape[1], dtype=np.int64)
    positions = np.empty(CHAIN_DEPTH, dtype=np.int64)
    for k in range(states.shape[0]):
        write_features(states[k], seat, low, high, in_pow, off_pow, out[k], hand, positions)
    return out
