"""What a player observes, as one binary vector: the layout is declared here once.

Everything derives from :func:`observation_fields`: the vector size, the compiled
encoder, the named views a policy reads (:meth:`ObservationLayout.views`, as OpenSpiel's
observer exposes named views over one tensor), the decoder and its validation,
:func:`read_state` (an observation back into an engine state, for after-states and
search), and the index table in the docs (:func:`layout_table`). The vector is egocentric
(the same layout for every seat):
"line k" and "seat k" mean the seat k places after the observer, and the dummy line comes
last. Counts are thermometers or one-hots; scores so far (multi-hand games only) are
plain binary numbers, least significant bit first, since they are unbounded sums.
Changing the layout means bumping the environment's version.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from dominoes_env.core import rules
from dominoes_env.core.compiled import kernel
from dominoes_env.core.config import MAX_HANDS_PER_GAME, GameConfig


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


# The compiled encoder and reader find each field's offset at these slots of the offsets
# array (-1 where a field is absent: the table-rule fields and the scores are optional).
SLOTS = ("hand", "played", "open_values", "markers", "lines_started", "dummy_open", "hand_sizes", "passed_last",
         "whose_turn", "turns_until", "hand_number", "scores", "boneyard", "drew", "double_to_cover")
(HAND, PLAYED, OPEN_VALUES, MARKERS, LINES_STARTED, DUMMY_OPEN, HAND_SIZES, PASSED_LAST,
 WHOSE_TURN, TURNS_UNTIL, HAND_NUMBER, SCORES, BONEYARD, DREW, DOUBLE_TO_COVER) = range(len(SLOTS))


def score_bits(config: GameConfig, num_hands: int) -> int:
    """Bits per seat for the scores so far: enough for the worst case of every hand."""
    return 0 if num_hands <= 1 else int(config.total_pips * num_hands).bit_length()


@cache
def observation_fields(config: GameConfig, num_hands: int = 1) -> tuple[Field, ...]:
    """The layout, in order. `num_hands` > 1 adds the scores so far (cached: it is immutable)."""
    return _place(_declared_fields(config, score_bits(config, num_hands)))


def _declared_fields(config: GameConfig, bits: int) -> list[Field]:
    n, t, v, m = config.num_players, config.num_tiles, config.highest_double + 1, config.max_hand_size
    declared = [
        Field("hand", (t,), "bits", "tiles I hold, by canonical tile index"),
        Field("played", (n + 1, t), "bits",
              "[k, tile]: tile lies on line k (0 own, k the seat k after me, n the dummy)"),
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
    if config.boneyard:
        declared += [
            Field("boneyard", (config.boneyard_at_deal,), "thermometer", "[j]: the boneyard holds more than j tiles"),
            Field("drew", (1,), "bit", "the player to move has drawn this turn (it may only play that tile, or pass)"),
        ]
    if config.cover_doubles:
        declared.append(Field("double_to_cover", (n + 1,), "bits",
                              "[k]: line k ends in a double that must be covered before any other move"))
    if bits:
        declared.append(Field("scores", (n, bits), "binary", "[k, j]: bit j of seat k's game score before this hand"))
    return declared


def _place(declared: list[Field]) -> tuple[Field, ...]:
    fields, offset = [], 0
    for field in declared:
        fields.append(Field(field.name, field.shape, field.encoding, field.meaning, offset))
        offset += field.size
    return tuple(fields)


class ObservationViews(Mapping[str, np.ndarray]):
    """Named views (no copies) of one observation vector, or of a batch (..., D) of them.

    ``views["open_values"]`` is the (n+1, V) block (``(..., n+1, V)`` for a batch),
    ``views["played"][0]`` the tiles on my own line, and so on for every field of the
    layout. Views are made when asked for, so reading two fields costs two slices.
    """

    __slots__ = ("_layout", "_vector")

    def __init__(self, layout: ObservationLayout, vector: np.ndarray) -> None:
        self._layout = layout
        self._vector = vector

    def __getitem__(self, name: str) -> np.ndarray:
        field = self._layout.field(name)
        return self._vector[..., field.offset:field.offset + field.size].reshape(self._vector.shape[:-1] + field.shape)

    def __iter__(self) -> Iterator[str]:
        return iter(self._layout.names)

    def __len__(self) -> int:
        return len(self._layout.fields)


class ObservationLayout:
    """The observation layout of one table size and game length: fields, size, named views.

    Get one with :func:`observation_layout` (cached) or, from a vector's length,
    :func:`layout_for_size`.
    """

    def __init__(self, config: GameConfig, fields: tuple[Field, ...]) -> None:
        self.config = config
        self.fields = fields
        self.size = sum(f.size for f in fields)
        self._by_name = {f.name: f for f in fields}
        self.names = tuple(self._by_name)
        #: each field's offset at its slot of SLOTS, -1 where absent: what the compiled kernels take
        self.offsets = np.array([self._by_name[name].offset if name in self._by_name else -1 for name in SLOTS],
                                dtype=np.int64)  # writable, like the tile tables (see TileSet)

    @property
    def score_bits(self) -> int:
        """Bits per seat of the scores so far (0 in a one-hand game)."""
        return self._by_name["scores"].shape[1] if "scores" in self._by_name else 0

    def field(self, name: str) -> Field:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no observation field {name!r}; fields: {list(self.names)}") from None

    def views(self, vector: np.ndarray) -> ObservationViews:
        """Named views of `vector` (one observation of this layout, or a batch of them)."""
        return ObservationViews(self, vector)

    def __repr__(self) -> str:
        c = self.config
        return f"ObservationLayout({c.num_players} players, double-{c.highest_double}, size {self.size})"


@cache
def observation_layout(config: GameConfig, num_hands: int = 1) -> ObservationLayout:
    """The layout of observations of `config` in a game of `num_hands` hands (cached)."""
    return ObservationLayout(config, observation_fields(config, num_hands))


def one_hand_part(config: GameConfig, observation: np.ndarray) -> np.ndarray:
    """The one-hand observation within `observation` (one vector or a batch, of any game length).

    A game of several hands only appends the scores so far, so the one-hand layout is a prefix
    of every longer one: a model trained on one-hand games (the env's default) plays whole games
    on this view (a view, no copy), as the shipped players do, without seeing the scores.

    Raises:
        ValueError: the vector's length is no game's of this table.
    """
    layout_for_size(config, observation.shape[-1])
    return observation[..., :observation_layout(config).size]


@cache
def layout_for_size(config: GameConfig, size: int) -> ObservationLayout:
    """The layout whose vectors have `size` entries: the one check that a vector fits a table.

    A one-hand vector has the base size; a multi-hand game appends n x B score bits with
    B = bit_length(total pips x hands) for some 2 <= hands <= MAX_HANDS_PER_GAME.

    Raises:
        ValueError: no game of this table size has observations of that length.
    """
    base = observation_layout(config, 1)
    extra = size - base.size
    if extra == 0:
        return base
    n = config.num_players
    lowest, highest = score_bits(config, 2), score_bits(config, MAX_HANDS_PER_GAME)
    if extra > 0 and extra % n == 0 and lowest <= extra // n <= highest:
        return ObservationLayout(config, _place(_declared_fields(config, extra // n)))
    raise ValueError(
        f"an observation of {n} players, double-{config.highest_double} has {base.size} entries "
        f"(plus {n} x {lowest}..{highest} score bits in a multi-hand game), got {size}"
    )


@kernel
def write_observation(state, viewer, scores_so_far, offsets, highest, max_hand, bits, out):
    """Encode what seat `viewer` observes of `state` into the zeroed int8 vector `out`.

    `bits` is the score bits per seat (0 in a one-hand game); the table-rule fields are
    written where the layout has them (their offset is not -1).
    """
    n = state[rules.NUM_PLAYERS]
    t = state[rules.NUM_TILES]
    v = highest + 1
    # offsets into the state, not split_state's views: see rules.block_starts
    owner, line_of, _, open_values, line_started, marker_up, passed_last, hand_sizes, _ = rules.block_starts(n, t)
    hand, played = offsets[HAND], offsets[PLAYED]
    for tile in range(t):  # a loop of its own, which the compiler vectorises
        out[hand + tile] = state[owner + tile] == viewer
    for tile in range(t):
        # Without branches (a third of the encoder's time went in mispredicting them): a tile off
        # the table (line -1, which relative_line maps into 0..n-1) writes a 0 into its own
        # column, where no other tile writes.
        line = state[line_of + tile]
        out[played + rules.relative_line(viewer, line, n) * t + tile] = line >= 0
    for rel in range(n + 1):
        out[offsets[OPEN_VALUES] + rel * v + state[open_values + rules.absolute_line(viewer, rel, n)]] = 1
    current = rules.relative_line(viewer, state[rules.CURRENT_PLAYER], n)
    out[offsets[WHOSE_TURN] + current] = 1
    out[offsets[DUMMY_OPEN]] = state[rules.DUMMY_OPEN]
    out[offsets[HAND_NUMBER] + state[rules.ENGINE_VALUE]] = 1
    for rel in range(n):
        seat = rules.absolute_line(viewer, rel, n)
        out[offsets[MARKERS] + rel] = state[marker_up + seat]
        out[offsets[LINES_STARTED] + rel] = state[line_started + seat]
        out[offsets[PASSED_LAST] + rel] = state[passed_last + seat]
        for j in range(min(state[hand_sizes + seat], max_hand)):
            out[offsets[HAND_SIZES] + rel * max_hand + j] = 1
        out[offsets[TURNS_UNTIL] + rel * n + rules.relative_line(current, rel, n)] = 1
        for j in range(bits):
            out[offsets[SCORES] + rel * bits + j] = (scores_so_far[seat] >> j) & 1
    if offsets[BONEYARD] >= 0:
        for j in range(state[rules.PILE_COUNT]):
            out[offsets[BONEYARD] + j] = 1
        out[offsets[DREW]] = state[rules.DREW]
    if offsets[DOUBLE_TO_COVER] >= 0 and state[rules.DOUBLE_LINE] >= 0:
        out[offsets[DOUBLE_TO_COVER] + rules.relative_line(viewer, state[rules.DOUBLE_LINE], n)] = 1


@kernel(inline="always")
def index_of_one(vector, start, length):
    """Which of the `length` entries of `vector` from `start` is 1: the value a one-hot field of
    an observation holds (its open values, whose turn it is). -1 if none, where ``np.argmax``
    would say 0; the encoder writes exactly one 1 in each such field, so the kernels that read
    observations (and take them as they come, as their inner loops must) never see -1."""
    for i in range(length):
        if vector[start + i] == 1:
            return i
    return -1


@kernel
def read_state(observation, offsets, n, t, highest, max_hand, rule_flags, hidden_owner, state):
    """The engine state the observer sees, in its own frame (it is seat 0, seat k the k-th after it).

    Everything a player observes is part of the state, so the state is exact except for
    what the player cannot see: each tile that is neither in its hand, nor on the table,
    nor the engine is given to seat ``hidden_owner[tile]`` (a search passes a sampled deal,
    ``rules.IN_BONEYARD`` for the tiles it puts face down; after-states pass any other seat),
    the boneyard's order (the pile's slots are left empty: a caller that draws must lay
    them), and the order in which tiles were played (not observed, and no rule reads it).
    `rule_flags` are the table rules in force (``rules.RULES``). `state` is an array of the
    rules' state size for this table; it is overwritten.
    """
    state[:] = 0
    v = highest + 1
    state[rules.NUM_PLAYERS] = n
    state[rules.NUM_TILES] = t
    # offsets into the state, not split_state's views: see rules.block_starts
    owner, line_of, play_order, open_values, line_started, marker_up, passed_last, hand_sizes, _ = \
        rules.block_starts(n, t)
    engine_value = index_of_one(observation, offsets[HAND_NUMBER], v)
    state[rules.ENGINE_VALUE] = engine_value
    state[rules.WENT_OUT] = -1
    engine = rules.double_index(engine_value, highest)
    played = 0
    for tile in range(t):
        state[line_of + tile] = -1
        state[play_order + tile] = -1
        if observation[offsets[HAND] + tile] == 1:
            state[owner + tile] = 0
            continue
        state[owner + tile] = hidden_owner[tile]
        for line in range(n + 1):
            if observation[offsets[PLAYED] + line * t + tile] == 1:
                state[owner + tile] = rules.ON_TABLE
                state[line_of + tile] = line
                state[play_order + tile] = played
                played += 1
        if tile == engine:
            state[owner + tile] = rules.OUT_OF_PLAY
    state[rules.TILES_PLAYED] = played
    for line in range(n + 1):
        state[open_values + line] = index_of_one(observation, offsets[OPEN_VALUES] + line * v, v)
    for seat in range(n):
        state[marker_up + seat] = observation[offsets[MARKERS] + seat]
        state[line_started + seat] = observation[offsets[LINES_STARTED] + seat]
        state[passed_last + seat] = observation[offsets[PASSED_LAST] + seat]
        held = 0
        for j in range(max_hand):
            held += observation[offsets[HAND_SIZES] + seat * max_hand + j]
        state[hand_sizes + seat] = held
    state[rules.DUMMY_OPEN] = observation[offsets[DUMMY_OPEN]]
    state[rules.CURRENT_PLAYER] = index_of_one(observation, offsets[WHOSE_TURN], n)
    state[rules.RULES] = rule_flags
    state[rules.DOUBLE_LINE] = -1
    if offsets[BONEYARD] >= 0:
        pile = 0
        while pile < offsets[DREW] - offsets[BONEYARD] and observation[offsets[BONEYARD] + pile] == 1:
            pile += 1
        state[rules.PILE_COUNT] = pile
        state[rules.DREW] = observation[offsets[DREW]]
    if offsets[DOUBLE_TO_COVER] >= 0:
        state[rules.DOUBLE_LINE] = index_of_one(observation, offsets[DOUBLE_TO_COVER], n + 1)


class Observer:
    """Encodes observations of one table size (and game length) fast."""

    def __init__(self, config: GameConfig, num_hands: int = 1) -> None:
        self.config = config
        self.layout = observation_layout(config, max(1, num_hands))
        self.fields, self._offsets, self.size = self.layout.fields, self.layout.offsets, self.layout.size
        self._bits = self.layout.score_bits
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


# --------------------------------------------------------------------------- reading a vector back
def as_vector(config: GameConfig, observation: Any) -> tuple[np.ndarray, ObservationLayout]:
    """`observation` (a vector or the env's observation dict) as a checked 1-D array and its layout.

    Checks that it has the length of an observation of this table, holds only 0 and 1,
    and is internally consistent (see :func:`check_consistent`), so a vector of another
    table size, a damaged vector or a non-binary one is refused instead of decoded into
    nonsense.

    Raises:
        ValueError: what is wrong, naming the field.
    """
    if isinstance(observation, Mapping):
        if "observation" not in observation:
            raise ValueError("an observation dict must hold the vector under 'observation'")
        observation = observation["observation"]
    vector = np.asarray(observation)
    if vector.ndim != 1:
        raise ValueError(f"expected a 1-D observation vector, got shape {vector.shape}")
    if not (np.issubdtype(vector.dtype, np.number) or vector.dtype == np.bool_):
        raise ValueError(f"an observation vector holds numbers, got dtype {vector.dtype}")
    layout = layout_for_size(config, vector.shape[0])
    if not np.isin(vector, (0, 1)).all():
        raise ValueError("an observation vector holds only 0 and 1; this one holds other values")
    vector = vector.astype(np.int8)
    check_consistent(layout, vector)
    return vector, layout


def check_consistent(layout: ObservationLayout, vector: np.ndarray) -> None:
    """Refuse a 0/1 vector of the right length that no game position produces."""
    config, views = layout.config, layout.views(vector)
    name = f"not an observation of {config.num_players} players, double-{config.highest_double}"
    for field in layout.fields:
        if field.encoding == "one-hot":
            rows = views[field.name].reshape(-1, field.shape[-1])
            if not (rows.sum(axis=1) == 1).all():
                raise ValueError(f"{name}: field {field.name!r} is not one-hot")
        elif field.encoding == "thermometer":
            rows = views[field.name].reshape(-1, field.shape[-1])
            if (np.diff(rows, axis=1) > 0).any():
                raise ValueError(f"{name}: field {field.name!r} is not a thermometer")
    hand, played = views["hand"], views["played"]
    if (played.sum(axis=0) + hand > 1).any():
        raise ValueError(f"{name}: a tile is both held and on the table, or on two lines")
    engine = config.tiles.double(int(np.argmax(views["hand_number"])))
    if hand[engine] or played[:, engine].any():
        raise ValueError(f"{name}: the engine is in the hand or on a line")
    if "double_to_cover" in layout.names and views["double_to_cover"].sum() > 1:
        raise ValueError(f"{name}: more than one double to cover")
    if int(views["hand_sizes"][0].sum()) != int(hand.sum()):
        raise ValueError(f"{name}: my hand size ({int(views['hand_sizes'][0].sum())}) differs from the tiles "
                         f"I hold ({int(hand.sum())})")
    current = int(np.argmax(views["whose_turn"]))
    expected = (np.arange(config.num_players) - current) % config.num_players
    if (np.argmax(views["turns_until"], axis=1) != expected).any():
        raise ValueError(f"{name}: turns_until does not follow whose_turn")
    if bool(views["dummy_open"][0]) != bool(views["lines_started"].all()):
        raise ValueError(f"{name}: the dummy line is open exactly when every seat's line is started")


def decode_fields(config: GameConfig, observation: Any) -> dict[str, Any]:
    """Readable view of an observation vector; see :func:`dominoes_env.decode_observation`."""
    vector, layout = as_vector(config, observation)
    fields = layout.views(vector)
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
    if "boneyard" in layout.names:
        decoded["boneyard_size"] = int(fields["boneyard"].sum())
        decoded["drew"] = bool(fields["drew"][0])
    if "double_to_cover" in layout.names:
        lines = np.flatnonzero(fields["double_to_cover"])
        decoded["double_to_cover"] = int(lines[0]) if lines.size else None
    if "scores" in layout.names:
        weights = 1 << np.arange(layout.score_bits, dtype=np.int64)
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
