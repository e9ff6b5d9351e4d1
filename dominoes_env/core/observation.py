"""What a player observes, as one binary vector: the layout is declared here once.

Everything derives from :func:`observation_fields`: the vector size, the compiled
encoder, :func:`decode_observation`, and the index table in the docs
(:func:`layout_table`). The vector is egocentric (the same layout for every seat):
"line k" and "seat k" mean the seat k places after the observer, and the dummy line comes
last. Counts are thermometers or one-hots; scores so far (multi-hand games only) are
plain binary numbers, least significant bit first, since they are unbounded sums.
Changing the layout means bumping the environment's version.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from numba import njit

from dominoes_env.core import rules
from dominoes_env.core.config import GameConfig


@dataclass(frozen=True)
class Field:
    """One named block of the observation vector."""

    name: str
    shape: tuple[int, ...]
    encoding: str
    meaning: str
    offset: int = 0

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def slice(self) -> slice:
        return slice(self.offset, self.offset + self.size)


# The encoder writes fields by these positions in the declaration below.
(HAND, PLAYED, OPEN_VALUES, MARKERS, LINES_STARTED, DUMMY_OPEN, HAND_SIZES, PASSED_LAST,
 WHOSE_TURN, TURNS_UNTIL, HAND_NUMBER, SCORES) = range(12)


def score_bits(config: GameConfig, num_hands: int) -> int:
    """Bits per seat for the scores so far: enough for the worst case of every hand."""
    return 0 if num_hands <= 1 else int(config.total_pips * num_hands).bit_length()


@lru_cache(maxsize=None)
def observation_fields(config: GameConfig, num_hands: int = 1) -> tuple[Field, ...]:
    """The layout, in order. `num_hands` > 1 adds the scores so far (cached: it is immutable)."""
    n, t, v, m = config.num_players, config.num_tiles, config.highest_double + 1, config.max_hand_size
    declared = [
        Field("hand", (t,), "bits", "tiles I hold, by canonical tile index"),
        Field("played", (n + 1, t), "bits", "[k, tile]: tile lies on line k (0 own, k the seat k after me, n the dummy)"),
        Field("open_values", (n + 1, v), "one-hot", "[k]: open value of line k (dummy last)"),
        Field("markers", (n,), "bits", "[k]: marker of seat k is up"),
        Field("lines_started", (n,), "bits", "[k]: seat k's line holds a tile"),
        Field("dummy_open", (1,), "bit", "the dummy line is open"),
        Field("hand_sizes", (n, m), "thermometer", "[k, j]: seat k holds more than j tiles"),
        Field("passed_last", (n,), "bits", "[k]: seat k's latest action was a pass"),
        Field("whose_turn", (n,), "one-hot", "seat to move (0 = me)"),
        Field("turns_until", (n, n), "one-hot", "[k, j]: seat k moves j turns from now (0 = it is to move)"),
        Field("hand_number", (v,), "one-hot", "h of this hand's engine (h|h)"),
    ]
    bits = score_bits(config, num_hands)
    if bits:
        declared.append(Field("scores", (n, bits), "binary", "[k, j]: bit j of seat k's game score before this hand"))
    fields, offset = [], 0
    for field in declared:
        fields.append(Field(field.name, field.shape, field.encoding, field.meaning, offset))
        offset += field.size
    return tuple(fields)


@lru_cache(maxsize=None)
def _layout(config: GameConfig, num_hands: int) -> tuple[tuple[Field, ...], np.ndarray, int]:
    fields = observation_fields(config, num_hands)
    offsets = np.array([f.offset for f in fields] + [0] * (12 - len(fields)), dtype=np.int64)
    return fields, offsets, sum(f.size for f in fields)


@njit(cache=True)
def write_observation(state, viewer, scores_so_far, offsets, highest, max_hand, bits, out):
    """Encode what seat `viewer` observes of `state` into the zeroed int8 vector `out`."""
    n = state[rules.NUM_PLAYERS]
    t = state[rules.NUM_TILES]
    v = highest + 1
    owner, line_of, _, open_values, line_started, marker_up, passed_last, hand_sizes = rules.split_state(state)
    for tile in range(t):
        if owner[tile] == viewer:
            out[offsets[HAND] + tile] = 1
        elif line_of[tile] >= 0:
            out[offsets[PLAYED] + rules.relative_line(viewer, line_of[tile], n) * t + tile] = 1
    for rel in range(n + 1):
        out[offsets[OPEN_VALUES] + rel * v + open_values[rules.absolute_line(viewer, rel, n)]] = 1
    current = (state[rules.CURRENT_PLAYER] - viewer) % n
    out[offsets[WHOSE_TURN] + current] = 1
    out[offsets[DUMMY_OPEN]] = state[rules.DUMMY_OPEN]
    out[offsets[HAND_NUMBER] + state[rules.ENGINE_VALUE]] = 1
    for rel in range(n):
        seat = (viewer + rel) % n
        out[offsets[MARKERS] + rel] = marker_up[seat]
        out[offsets[LINES_STARTED] + rel] = line_started[seat]
        out[offsets[PASSED_LAST] + rel] = passed_last[seat]
        for j in range(min(hand_sizes[seat], max_hand)):
            out[offsets[HAND_SIZES] + rel * max_hand + j] = 1
        out[offsets[TURNS_UNTIL] + rel * n + (rel - current) % n] = 1
        for j in range(bits):
            out[offsets[SCORES] + rel * bits + j] = (scores_so_far[seat] >> j) & 1


class Observer:
    """Encodes observations of one table size (and game length) fast."""

    def __init__(self, config: GameConfig, num_hands: int = 1) -> None:
        self.config = config
        self.fields, self._offsets, self.size = _layout(config, max(1, num_hands))
        self._bits = score_bits(config, num_hands)
        self._no_scores = np.zeros(config.num_players, dtype=np.int64)

    def encode(self, state: np.ndarray, viewer: int, scores_so_far: np.ndarray | None = None,
               out: np.ndarray | None = None) -> np.ndarray:
        """The observation vector of seat `viewer` (int8, 0/1)."""
        if out is None:
            out = np.zeros(self.size, dtype=np.int8)
        else:
            out[:] = 0
        scores = self._no_scores if scores_so_far is None else scores_so_far
        write_observation(state, viewer, scores, self._offsets, self.config.highest_double,
                          self.config.max_hand_size, self._bits, out)
        return out


def _fields_for_length(config: GameConfig, length: int) -> tuple[Field, ...]:
    single = observation_fields(config, 1)
    base = sum(f.size for f in single)
    extra = length - base
    if extra == 0:
        return single
    n = config.num_players
    if extra > 0 and extra % n == 0:
        bits = extra // n
        scores = Field("scores", (n, bits), "binary", "game scores before this hand", base)
        return single + (scores,)
    raise ValueError(
        f"an observation of {config.num_players} players, double-{config.highest_double} has "
        f"{base} entries (plus {n} x score bits in a multi-hand game), got {length}"
    )


def decode_fields(config: GameConfig, observation: Any) -> dict[str, Any]:
    """Readable view of an observation vector; see :func:`dominoes_env.decode_observation`."""
    if isinstance(observation, dict):
        observation = observation["observation"]
    vector = np.asarray(observation)
    if vector.ndim != 1:
        raise ValueError(f"expected a 1-D observation vector, got shape {vector.shape}")
    fields = {f.name: vector[f.slice].reshape(f.shape) for f in _fields_for_length(config, vector.shape[0])}
    played_on = tuple(tuple(np.flatnonzero(row).tolist()) for row in fields["played"])
    decoded: dict[str, Any] = {
        "hand": tuple(np.flatnonzero(fields["hand"]).tolist()),
        "played": tuple(sorted(tile for line in played_on for tile in line)),
        "played_on_line": played_on,
        "open_values": tuple(int(np.argmax(row)) for row in fields["open_values"]),
        "markers": tuple(bool(b) for b in fields["markers"]),
        "lines_started": tuple(bool(b) for b in fields["lines_started"]),
        "dummy_open": bool(fields["dummy_open"][0]),
        "hand_sizes": tuple(int(row.sum()) for row in fields["hand_sizes"]),
        "passed_last": tuple(bool(b) for b in fields["passed_last"]),
        "current_player": int(np.argmax(fields["whose_turn"])),
        "turns_until": tuple(int(np.argmax(row)) for row in fields["turns_until"]),
        "hand_number": int(np.argmax(fields["hand_number"])),
        "scores": None,
    }
    if "scores" in fields:
        weights = 1 << np.arange(fields["scores"].shape[1], dtype=np.int64)
        decoded["scores"] = tuple(int(row.astype(np.int64) @ weights) for row in fields["scores"])
    return decoded


def layout_table(config: GameConfig, num_hands: int = 1) -> str:
    """The layout as a Markdown index table (for the docs and README)."""
    rows = ["| indices | field | shape | encoding | meaning |", "|---|---|---|---|---|"]
    for f in observation_fields(config, num_hands):
        shape = " x ".join(str(s) for s in f.shape)
        meaning = f.meaning.replace("|", "\\|")  # tiles like (h|h) would split the Markdown cell
        rows.append(f"| {f.offset}-{f.offset + f.size - 1} | `{f.name}` | {shape} | {f.encoding} | {meaning} |")
    return "\n".join(rows)
