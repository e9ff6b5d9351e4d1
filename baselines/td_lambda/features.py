"""The input of V, computed from after-state observation vectors (numpy and numba only).

``basic`` is the reference's input (177 numbers for 4 players, double-nine): own hand (T
bits), tiles played anywhere (T), each line's open value one-hot ((n+1) x V), markers,
"passed last" flags, hand sizes (as a fraction of the largest hand), turns until each
player moves (as a fraction of n-1), and whether the dummy line is open. ``line`` adds
what the best-line planner knows about the own hand (see :class:`LineFeatures`).
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from baselines.policies.chain_search import (
    IN_LINE_DISCOUNT,
    MAX_LINE_LENGTH,
    OFF_LINE_DISCOUNT,
    discount_powers,
    search_best_chain,
    walk_chain,
)
from dominoes_env.core.compiled import kernel
from dominoes_env.core.config import GameConfig
from dominoes_env.core.observation import index_of_one, observation_fields


class HasVariant(Protocol):
    """What chooses a feature map: a table and a variant (a TDLambdaConfig; a Protocol, so that
    this module, which the configuration imports, imports nothing back)."""

    @property
    def game(self) -> GameConfig: ...

    @property
    def variant(self) -> str: ...

VARIANTS = ("basic", "line")
#: Slots of a LineFeatures' cache of best chains (a power of two): about 1.5 MB at double-twelve.
CHAIN_CACHE_SLOTS = 2048
_BASIC_FIELDS = ("hand", "played", "open_values", "markers", "passed_last", "hand_sizes", "turns_until",
                 "dummy_open")


def rule_feature_size(config: GameConfig) -> int:
    """Numbers the table rules add, read from the fields they add to the observation: the
    boneyard's size and "drew" (two numbers for the boneyard's fields), and the line that
    holds a double to cover (one per line)."""
    fields = {field.name: field for field in observation_fields(config)}
    cover = fields.get("double_to_cover")
    return (2 if "boneyard" in fields else 0) + (int(np.prod(cover.shape)) if cover is not None else 0)


def input_size(config: GameConfig, variant: str) -> int:
    """Numbers V reads for a table and variant (arithmetic only: a checkpoint is sized before it is read)."""
    n, t, v = config.num_players, config.num_tiles, config.highest_double + 1
    basic = 2 * t + (n + 1) * v + 4 * n + 1 + rule_feature_size(config)
    return basic + (2 * t + 5 if variant == "line" else 0)


class BasicFeatures:
    """The reference's basic input, computed from (after-state) observation vectors."""

    def __init__(self, config: GameConfig) -> None:
        self.fields = {f.name: f for f in observation_fields(config, 1)}
        self.slices = {name: spec.slice for name, spec in self.fields.items()}
        self.n, self.t, self.v = config.num_players, config.num_tiles, config.highest_double + 1
        self.max_hand = config.max_hand_size
        self.size = input_size(config, "basic")
        self.core_size = self.size - rule_feature_size(config)
        self.boneyard_at_deal = config.boneyard_at_deal
        self.offsets = np.array([self.fields[name].offset for name in _BASIC_FIELDS], dtype=np.int64)
        # where the table rules' numbers come from (-1: the table has no such field); one compiled
        # pass writes them with the rest, since a search evaluates a few rows at a time, where
        # every extra numpy call costs more than the arithmetic
        boneyard, drew, cover = (self.fields.get(name) for name in ("boneyard", "drew", "double_to_cover"))
        self.rule_offsets = np.array([
            boneyard.offset if boneyard else -1, boneyard.size if boneyard else 0, drew.offset if drew else -1,
            cover.offset if cover else -1, cover.size if cover else 0, self.core_size], dtype=np.int64)
        self.pips = config.tiles.pips.astype(np.float32)

    def __call__(self, vectors: np.ndarray) -> np.ndarray:
        """(K, D) int8 observation vectors -> (K, size) float32 features."""
        out = np.empty((vectors.shape[0], self.size), dtype=np.float32)
        self.fill(vectors, out)
        return out

    def fill(self, vectors: np.ndarray, out: np.ndarray) -> None:
        """Write the basic features into the first columns of `out` (one compiled pass).

        Per row: own hand (T), tiles played on any line (T), open values one-hot
        ((n+1) x V), markers (n), passed_last (n), hand sizes / M (n), turns until each
        seat moves / (n-1) (n), dummy open (1); then, under table rules, the boneyard's size
        (a fraction of its size at the deal) and "drew" (boneyard rule), and the line of the
        double to cover (n+1 bits; cover rule).
        """
        _basic_block(vectors, self.offsets, self.rule_offsets, self.n, self.t, self.v, self.max_hand,
                     max(1, self.boneyard_at_deal), out)

    def own_pips(self, vectors: np.ndarray) -> np.ndarray:
        """Pips the observer still holds in each vector (its final score once the hand is over)."""
        return vectors[:, self.slices["hand"]] @ self.pips


class LineFeatures(BasicFeatures):
    """Basic features plus what the best-line planner knows about the own hand.

    The exact best chain (:func:`baselines.policies.chain_search.search_best_chain`, reference
    discounts 0.9 / 0.7, up to 12 tiles) from the own line's open value in the after-state,
    as 2T + 5 numbers: per tile, whether it is in the chain and its discounted pips there
    (0.9 ** turn * pips / 2N, as :func:`baselines.policies.chain_search.walk_chain` lays it); then the
    chain's value, its in-line value, the pips left off it (all / (N * M)), its length and
    the tiles left over (/ M). The reference's line variant averaged such statistics over
    every chain with softmax weights; the best chain is the zero-temperature limit of that
    average, and it needs one branch-and-bound search per after-state instead of a full
    enumeration (what made the reference learn at 0.5 hands/s).
    """

    def __init__(self, config: GameConfig) -> None:
        super().__init__(config)
        self.basic_size = self.size
        self.size = input_size(config, "line")
        self.low, self.high = config.tiles.low, config.tiles.high
        self.in_pow = discount_powers(IN_LINE_DISCOUNT, MAX_LINE_LENGTH)
        self.off_pow = discount_powers(OFF_LINE_DISCOUNT, MAX_LINE_LENGTH)
        self.highest = config.highest_double
        self.own_open = self.fields["open_values"].slice.start
        # The best chains already found, by (hand, open value): a search values the same hands
        # again and again (every seat that has not moved since the world was dealt), and a long
        # hand's chain search is the slowest part of its evaluation. Direct-mapped: a new chain
        # replaces the one in its slot; a chain is a function of its key, so a hit changes nothing.
        self.cache_keys = np.zeros((CHAIN_CACHE_SLOTS, (self.t + 63) // 64 + 1), dtype=np.int64)
        self.cache_rows = np.zeros((CHAIN_CACHE_SLOTS, 2 * self.t + 5), dtype=np.float32)

    def __call__(self, vectors: np.ndarray) -> np.ndarray:
        out = np.zeros((vectors.shape[0], self.size), dtype=np.float32)
        self.fill(vectors, out)
        self._chain_into(vectors, out, self.basic_size)
        return out

    def chain_numbers(self, vectors: np.ndarray) -> np.ndarray:
        """(K, D) int8 observation vectors -> (K, 2T + 5) float32: the best-chain block alone (what
        ppo's network reads beside the observation with ``--features best_chain``)."""
        out = np.zeros((vectors.shape[0], self.size - self.basic_size), dtype=np.float32)
        self._chain_into(vectors, out, 0)
        return out

    def _chain_into(self, vectors: np.ndarray, out: np.ndarray, column: int) -> None:
        _best_chain_block(vectors, self.offsets[0], self.own_open, self.t, self.highest + 1, self.low, self.high,
                          self.in_pow, self.off_pow, MAX_LINE_LENGTH, float(2 * self.highest),
                          float(self.highest * self.max_hand), float(self.max_hand), column,
                          self.cache_keys, self.cache_rows, out)


def make_features(config: HasVariant) -> BasicFeatures:
    """The feature map of a configuration's variant and table."""
    return (LineFeatures if config.variant == "line" else BasicFeatures)(config.game)


@kernel
def _basic_block(vectors: Any, offsets: Any, rule_offsets: Any, n: int, t: int, v: int, max_hand: int,
                 boneyard_at_deal: int, out: Any) -> None:
    """BasicFeatures in one pass; `offsets` are those of hand, played, open_values, markers,
    passed_last, hand_sizes, turns_until and dummy_open in the observation layout;
    `rule_offsets` those of the boneyard (and its size), drew, double_to_cover (and its size),
    and the first column of the rules' numbers (BasicFeatures' rule_offsets)."""
    hand, played, open_values, markers, passed, sizes, turns, dummy = offsets
    boneyard, boneyard_size, drew, cover, cover_size, column = rule_offsets
    for k in range(vectors.shape[0]):
        row = vectors[k]
        col = 0
        for tile in range(t):
            out[k, col + tile] = row[hand + tile]
            on_table = 0
            for line in range(n + 1):
                on_table += row[played + line * t + tile]
            out[k, col + t + tile] = on_table
        col += 2 * t
        for i in range((n + 1) * v):
            out[k, col + i] = row[open_values + i]
        col += (n + 1) * v
        for seat in range(n):
            out[k, col + seat] = row[markers + seat]
            out[k, col + n + seat] = row[passed + seat]
            held = 0
            for j in range(max_hand):
                held += row[sizes + seat * max_hand + j]
            out[k, col + 2 * n + seat] = np.float32(held) / np.float32(max_hand)
            wait = 0
            for j in range(n):
                wait += j * row[turns + seat * n + j]
            out[k, col + 3 * n + seat] = np.float32(wait) / np.float32(max(n - 1, 1))
        out[k, col + 4 * n] = row[dummy]
        col = column
        if boneyard >= 0:
            face_down = 0
            for j in range(boneyard_size):
                face_down += row[boneyard + j]
            out[k, col] = face_down / boneyard_at_deal  # in float64, then stored: as numpy divides
            out[k, col + 1] = row[drew]
            col += 2
        if cover >= 0:
            for j in range(cover_size):
                out[k, col + j] = row[cover + j]


@kernel
def _best_chain_block(vectors: Any, hand_offset: int, own_open_offset: int, t: int, values: int, low: Any,
                      high: Any, in_pow: Any, off_pow: Any, max_line_length: int, pip_scale: float,
                      hand_scale: float, size_scale: float, column: int, cache_keys: Any, cache_rows: Any,
                      out: Any) -> None:
    """The best chain of each row's own hand from its own line's open value, laid by
    :func:`walk_chain` (the one chain-value formula), into ``out[:, column:]`` (zeros there on
    entry); a chain found before is copied from the cache (`cache_keys`: the hand's bits in
    64-bit words, then the open value + 1, 0 marking an empty slot; `cache_rows`: its numbers)."""
    positions = np.empty(max_line_length, dtype=np.int64)
    weighted_pips = np.empty(max_line_length, dtype=np.float64)
    words = cache_keys.shape[1] - 1
    key = np.zeros(words + 1, dtype=np.int64)
    width = cache_rows.shape[1]
    for k in range(vectors.shape[0]):
        row = vectors[k]
        key[:] = 0
        for tile in range(t):
            if row[hand_offset + tile]:
                key[tile >> 6] |= np.int64(1) << np.int64(tile & 63)
        open_value = index_of_one(row, own_open_offset, values)
        key[words] = open_value + 1
        mixed = np.int64(0)
        for word in key:  # FNV-1a over the words, wrapping
            mixed = (mixed ^ word) * np.int64(1099511628211)
        slot = (mixed ^ (mixed >> 29)) & (cache_keys.shape[0] - 1)
        hit = True
        for i in range(words + 1):
            if cache_keys[slot, i] != key[i]:
                hit = False
                break
        if hit:
            for i in range(width):
                out[k, column + i] = cache_rows[slot, i]
            continue
        hand = np.nonzero(row[hand_offset:hand_offset + t])[0].astype(np.int64)
        value, length = search_best_chain(hand, open_value, low, high, in_pow, off_pow, max_line_length, positions)
        chain = hand[positions[:length]]
        in_line, chain_pips, _ = walk_chain(chain, low, high, in_pow, weighted_pips)
        total = 0
        for held in hand:
            total += low[held] + high[held]
        for i in range(length):
            out[k, column + chain[i]] = 1.0
            out[k, column + t + chain[i]] = weighted_pips[i] / pip_scale
        out[k, column + 2 * t] = value / hand_scale
        out[k, column + 2 * t + 1] = in_line / hand_scale
        out[k, column + 2 * t + 2] = (total - chain_pips) / hand_scale
        out[k, column + 2 * t + 3] = length / size_scale
        out[k, column + 2 * t + 4] = (hand.shape[0] - length) / size_scale
        for i in range(width):
            cache_rows[slot, i] = out[k, column + i]
        for i in range(words + 1):
            cache_keys[slot, i] = key[i]
