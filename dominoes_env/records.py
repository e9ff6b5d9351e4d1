"""Game records: a whole game as one JSON document, written, read back, checked and replayed.

A record holds the table (players, set, table rules), the game length, the seed, who sat
where, each hand's deal (every seat's tiles, the engine with its holder; the boneyard in
draw order), every move (seat, action, and the move in words) and the scores. The format
is specified in docs/play_and_records.md. This module is its one home:

- :class:`GameRecorder` follows a :class:`~dominoes_env.core.game.Game` move by move, and
  :class:`RecordGames` wraps a dominoes AEC env to record its episodes (``dominoes play
  --record`` and ``dominoes league --record-games`` use it).
- :func:`write_record` writes a record atomically (a killed run leaves the old file or the
  new one, never half of one); :func:`read_record` reads one back and checks all of it by
  replaying every move through the rules engine: a bad deal, an illegal move, a move text
  or a score that does not match is a :class:`RecordError` of one line naming the file,
  the hand and the move.
- :func:`replay` gives every position of a record, for ``dominoes replay``.

A record may stop in the middle of a game (a person who left): its last hand then has no
scores.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import BaseWrapper

from dominoes_env import files
from dominoes_env.core import actions, rules, validation
from dominoes_env.core.config import MAX_HAND_INDEX, MAX_HANDS_PER_GAME, GameConfig, make_config
from dominoes_env.core.errors import IllegalActionError
from dominoes_env.core.game import Game
from dominoes_env.core.state import HandState, engine_value_for_hand
from dominoes_env.core.validation import shown

FORMAT = "dominoes-game-record"
FORMAT_VERSION = 1
READABLE_VERSIONS = (1,)
MAX_RECORD_BYTES = 32 * 2**20  # a 1000-hand game of 8 players, double-18, is about 10 MiB
MAX_LABEL_LENGTH = 200
#: The fewest bytes of JSON text a value, a string and a container (an object or a list) may
#: take on average. A record as this package writes it takes over 8 bytes a value, 16 a string
#: and 25 a container, and over 7, 13 and 22 rewritten without spaces; crafted texts that parse
#: to the most memory a byte do not fit: 30 MiB of empty objects (``[{},{},...]``, 1.5 bytes a
#: value) once took about 28 times its size. Within these budgets a parsed ASCII text takes at
#: most about 12 times its size (docs/serve.md measures it).
MIN_BYTES_PER_JSON_VALUE = 4
MIN_BYTES_PER_JSON_STRING = 8
MIN_BYTES_PER_JSON_CONTAINER = 16
#: The deepest nesting read (a record nests 6 deep); brackets inside strings count too.
MAX_JSON_DEPTH = 32
_SLACK = 1000  # values and containers any text may have, however short
_BRACKETS = re.compile(rb"[\[\]{}]")


class RecordError(ValueError):
    """A game record that cannot be read or does not replay; the message says where and why."""


@dataclass(frozen=True)
class RecordedMove:
    """One move: the seat that made it, its action (the env's encoding, egocentric to that
    seat), and the move in words (``"(3|7) on player_2's line"``)."""

    seat: int
    action: int
    text: str


@dataclass(frozen=True)
class RecordedHand:
    """One hand: its deal, its moves, and (once it is over) its scores.

    Attributes:
        hand_index: its number in the game (0 for the first), which fixes its engine.
        deal: each seat's tiles (tile indices, ascending; the engine with its holder).
        boneyard: the tiles face down, the next one to draw first (boneyard rule).
        moves: every move, in order.
        scores: pips left by seat once the hand is over; None for a hand left unfinished.
        went_out: the seat that went out, None if the hand was blocked (or is unfinished).
    """

    hand_index: int
    deal: tuple[tuple[int, ...], ...]
    boneyard: tuple[int, ...]
    moves: tuple[RecordedMove, ...]
    scores: tuple[int, ...] | None = None
    went_out: int | None = None


@dataclass(frozen=True)
class RecordedGame:
    """A game as recorded: the table, the game's length, the seed, the players and its hands.

    Attributes:
        config: the table and its table rules.
        num_hands: hands the game was to have.
        hands: the hands played (all of them, or fewer if the game was left).
        seed: the seed its deals came from, if known (the deals are in the record anyway).
        players: who sat in each seat (policy labels, "you"), if known.
    """

    config: GameConfig
    num_hands: int
    hands: tuple[RecordedHand, ...]
    seed: int | None = None
    players: tuple[str, ...] | None = None

    @property
    def finished(self) -> bool:
        """Whether every hand of the game was played to its end."""
        return len(self.hands) == self.num_hands and self.hands[-1].scores is not None

    @property
    def game_scores(self) -> tuple[int, ...]:
        """Each seat's total over the finished hands (lower is better)."""
        totals = np.zeros(self.config.num_players, dtype=np.int64)
        for hand in self.hands:
            if hand.scores is not None:
                totals += hand.scores
        return tuple(int(total) for total in totals)

    @property
    def num_moves(self) -> int:
        return sum(len(hand.moves) for hand in self.hands)

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON object (tiles as [low, high] pairs)."""
        name = self.config.tiles.ends
        return {
            "format": FORMAT, "version": FORMAT_VERSION,
            "game": {"num_players": self.config.num_players, "highest_double": self.config.highest_double,
                     "rules": dict(self.config.rules()), "num_hands": self.num_hands},
            "seed": self.seed,
            "players": None if self.players is None else list(self.players),
            "hands": [{"hand_index": hand.hand_index, "engine": engine_value_for_hand(self.config, hand.hand_index),
                       "deal": [[list(name(tile)) for tile in tiles] for tiles in hand.deal],
                       "boneyard": [list(name(tile)) for tile in hand.boneyard],
                       "moves": [{"seat": move.seat, "action": move.action, "move": move.text} for move in hand.moves],
                       "scores": None if hand.scores is None else list(hand.scores), "went_out": hand.went_out}
                      for hand in self.hands],
            "game_scores": list(self.game_scores),
        }


# ---------------------------------------------------------------------- recording
class GameRecorder:
    """Builds the record of a game as it is played: the deal of each hand as it is dealt,
    then every move the caller reports with :meth:`record` (after the game applied it).

    Raises:
        ValueError: the game did not start from a deal (a hand-built position, or a game
            resumed in its middle): a record starts from the deal.
    """

    def __init__(self, game: Game, seed: int | None = None, players: Sequence[str] | None = None) -> None:
        if game.hands_before or game.hand_scores:
            raise ValueError("a game record starts from the first deal; this game was resumed in its middle")
        self.game = game
        self.seed = validation.seed("seed", seed)
        self.players = _labels(players, game.config.num_players)
        self._hands: list[RecordedHand] = []
        self._moves: list[RecordedMove] = []
        self._hand = game.hand
        self._start: RecordedHand | None = self._deal(game.hand, game.hand_index)  # None once the game is over

    @staticmethod
    def _deal(hand: HandState, hand_index: int) -> RecordedHand:
        try:
            deal, boneyard = hand.starting_deal()
        except ValueError:
            raise ValueError("a game record starts from a deal; this hand started from a position built by hand "
                             "(HandState.from_position) or had moves played already") from None
        return RecordedHand(hand_index, tuple(tuple(tiles) for tiles in deal), tuple(boneyard), ())

    def record(self, seat: int, action: int) -> None:
        """Add the move `seat` just made; close the hand if it ended, and open the next deal."""
        game, start = self.game, self._start
        if start is None:
            raise ValueError("the game is over: no move can be recorded")
        self._moves.append(RecordedMove(seat, int(action), actions.describe(game.config, action, seat)))
        if len(game.hand_scores) == len(self._hands):
            return  # the hand goes on
        self._hands.append(RecordedHand(start.hand_index, start.deal, start.boneyard, tuple(self._moves),
                                        tuple(int(s) for s in game.hand_scores[-1]), self._hand.went_out))
        self._moves = []
        self._hand = game.hand
        self._start = None if game.is_over else self._deal(game.hand, game.hand_index)

    @property
    def recorded(self) -> RecordedGame:
        """The record so far (a hand being played is in it, without scores)."""
        hands, start = list(self._hands), self._start
        if start is not None:
            hands.append(RecordedHand(start.hand_index, start.deal, start.boneyard, tuple(self._moves)))
        return RecordedGame(self.game.config, self.game.num_hands, tuple(hands), self.seed, self.players)


class RecordGames(BaseWrapper):
    """Records the episodes of a dominoes AEC env (``dominoes_env.env`` or ``raw_env``).

    Args:
        env: the env to record.
        directory: if given, each episode is written there when it ends (or when the next
            reset cuts it short), as ``episode_000000.json``, ``episode_000001.json``, ...
        players: who sits in each seat, kept in the records (optional).

    ``recorded`` is the record of the current episode so far. Only moves the env accepted
    are recorded (a refused or penalized action is not a move). Episodes must start from a
    deal (not from ``options={"position": ...}`` with moves already played).
    """

    def __init__(self, env: AECEnv, directory: str | os.PathLike[str] | None = None,
                 players: Sequence[str] | None = None) -> None:
        super().__init__(env)
        self.directory = None if directory is None else Path(directory)
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)
        self.players = players
        self.recorder: GameRecorder | None = None
        self.episodes = 0
        self._written = True

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._write()
        self.recorder = None
        self.env.reset(seed=seed, options=options)
        self.recorder = GameRecorder(self.env.unwrapped.game, seed, self.players)
        self._written = False

    def step(self, action: Any) -> None:
        core, recorder = self.env.unwrapped, self.recorder
        game = core.game
        if game is None or recorder is None:
            self.env.step(action)  # the env says what is wrong
            return
        hand, moves = game.hand, game.hand.num_moves
        seat = core.possible_agents.index(core.agent_selection)
        self.env.step(action)
        if game.hand is not hand or hand.num_moves != moves:  # the env played it
            recorder.record(seat, int(action))
        if not core.agents or all(core.terminations.values()):
            self._write()

    @property
    def recorded(self) -> RecordedGame:
        if self.recorder is None:
            raise ValueError("nothing recorded yet: call reset() first")
        return self.recorder.recorded

    def _write(self) -> None:
        if self._written or self.recorder is None:
            return
        self._written = True
        if self.directory is not None:
            write_record(self.recorded, self.directory / f"episode_{self.episodes:06d}.json")
        self.episodes += 1

    def close(self) -> None:
        self._write()
        super().close()


# ---------------------------------------------------------------------- files
def dumps_record(recorded: RecordedGame) -> str:
    """The record as JSON text: one line per move and per seat's deal, so a person can read it."""
    data = recorded.to_json()
    hands = data.pop("hands")
    head = ",\n ".join(f"{json.dumps(key)}: {json.dumps(value)}" for key, value in data.items()
                       if key != "game_scores")
    written = []
    for hand in hands:
        moves = ",\n    ".join(json.dumps(move) for move in hand["moves"])
        deal = ",\n    ".join(json.dumps(tiles, separators=(",", ":")) for tiles in hand["deal"])
        written.append(f'{{"hand_index": {hand["hand_index"]}, "engine": {hand["engine"]},\n'
                       f'   "deal": [\n    {deal}],\n'
                       f'   "boneyard": {json.dumps(hand["boneyard"], separators=(",", ":"))},\n'
                       f'   "moves": [\n    {moves}],\n'
                       f'   "scores": {json.dumps(hand["scores"])}, "went_out": {json.dumps(hand["went_out"])}}}')
    return (f"{{{head},\n \"hands\": [\n  " + ",\n  ".join(written) + "],\n"
            f" \"game_scores\": {json.dumps(data['game_scores'])}}}\n")


def write_record(recorded: RecordedGame, path: str | os.PathLike[str]) -> Path:
    """Write `recorded` to `path` atomically (:func:`dominoes_env.files.write_atomically`): a killed
    run leaves the old file or the new one, never part of one.

    Raises:
        FileRefused: `path` exists and is not a regular file (a device, a FIFO, a link, a directory).
    """
    return files.write_atomically(path, dumps_record(recorded).encode("utf-8"))


def read_record(path: str | os.PathLike[str]) -> RecordedGame:
    """Read a record and check all of it (see :func:`parse_record`).

    Raises:
        RecordError: ``record FILE: hand 2, move 17 (seat 2, action 99): ...``, one line.
    """
    path = Path(path)
    try:
        text = files.read_regular_file(path, MAX_RECORD_BYTES)
    except files.FileRefused as error:
        raise RecordError(f"record {path}: {error}; not a game record") from None
    except OSError as error:
        raise RecordError(f"record {path}: cannot be read: {error.strerror or error}") from None
    try:
        data = loads_within_budget(text)
    except (ValueError, RecursionError, MemoryError) as error:
        raise RecordError(f"record {path}: not JSON: {validation.reason(error)}") from None
    return parse_record(data, f"record {path}")


def loads_within_budget(text: bytes) -> Any:
    """JSON text, parsed only if its values, containers and depth fit a record's budget
    (:data:`MIN_BYTES_PER_JSON_VALUE`, :data:`MIN_BYTES_PER_JSON_STRING`, :data:`MIN_BYTES_PER_JSON_CONTAINER`,
    :data:`MAX_JSON_DEPTH`):
    the memory it takes is then a bounded multiple of its size, whatever was sent.

    The counts come from the raw text before parsing (a comma or a bracket inside a string
    counts too, which only makes the budget stricter for texts no record resembles).

    Raises:
        ValueError: over budget (the message says which), or not JSON.
    """
    values = text.count(b",") + text.count(b"[") + text.count(b"{")
    containers = text.count(b"[") + text.count(b"{")
    if values > len(text) // MIN_BYTES_PER_JSON_VALUE + _SLACK:
        raise ValueError(f"{values:,} values in {len(text):,} bytes: a record takes at least "
                         f"{MIN_BYTES_PER_JSON_VALUE} bytes a value")
    strings = text.count(b'"') // 2
    if strings > len(text) // MIN_BYTES_PER_JSON_STRING + _SLACK:
        raise ValueError(f"{strings:,} strings in {len(text):,} bytes: a record takes at least "
                         f"{MIN_BYTES_PER_JSON_STRING} bytes a string")
    if containers > len(text) // MIN_BYTES_PER_JSON_CONTAINER + _SLACK:
        raise ValueError(f"{containers:,} objects and lists in {len(text):,} bytes: a record takes at least "
                         f"{MIN_BYTES_PER_JSON_CONTAINER} bytes for each")
    depth = 0
    for bracket in _BRACKETS.finditer(text):
        depth += 1 if bracket.group() in (b"[", b"{") else -1
        if depth > MAX_JSON_DEPTH:
            raise ValueError(f"nested more than {MAX_JSON_DEPTH} deep (a record nests 6)")
    return json.loads(text)


def parse_record(data: Any, source: str = "record") -> RecordedGame:
    """A record from its JSON object, checked by replaying it through the rules engine: the table,
    every deal (each tile once, the hand sizes the deal rule gives), every move (the right seat,
    legal, its text), every hand's scores and who went out, and the game scores.

    Raises:
        RecordError: ``SOURCE: WHERE: what is wrong``, one line.
    """
    with _at(source):
        if not isinstance(data, dict):
            raise ValueError("a game record is a JSON object")
        if data.get("format") != FORMAT:
            raise ValueError(f"not a game record (format {data.get('format')!r}, expected {FORMAT!r})")
        if validation.as_integer(data.get("version")) not in READABLE_VERSIONS:
            raise ValueError(f"format version {data.get('version')!r}; this program reads versions "
                             f"{list(READABLE_VERSIONS)}")
        game = _object(data["game"], "game")
        config = make_config(game["num_players"], game["highest_double"], **_object(game["rules"], "rules"))
        num_hands = validation.integer("num_hands", game["num_hands"], 1, MAX_HANDS_PER_GAME)
        seed = validation.seed("seed", data["seed"])
        players = _labels(data["players"], config.num_players)
        hands = _list(data["hands"], "hands", 1, num_hands)
    recorded_hands: list[RecordedHand] = []
    for number, hand_data in enumerate(hands):
        with _at(f"{source}: hand {number + 1}"):
            if recorded_hands and recorded_hands[-1].scores is None:
                raise ValueError("the hand before it has no scores (a game left unfinished ends with its last hand)")
        recorded_hands.append(_parse_hand(config, hand_data, number, recorded_hands, source))
    recorded = RecordedGame(config, num_hands, tuple(recorded_hands), seed, players)
    with _at(source):
        written = [validation.integer("game_scores", score, 0) for score in _list(data["game_scores"], "game_scores",
                                                                                    config.num_players,
                                                                                    config.num_players)]
        if tuple(written) != recorded.game_scores:
            raise ValueError(f"game_scores {written} are not the sums of the hands' scores "
                             f"{list(recorded.game_scores)}")
    return recorded


def _parse_hand(config: GameConfig, data: Any, number: int, before: list[RecordedHand], source: str) -> RecordedHand:
    where = f"{source}: hand {number + 1}"
    with _at(where):
        data = _object(data, "a hand")
        hand_index = validation.integer("hand_index", data["hand_index"], 0, MAX_HAND_INDEX)
        if before and hand_index != before[-1].hand_index + 1:
            raise ValueError(f"hand_index {hand_index} does not follow {before[-1].hand_index}")
        engine = engine_value_for_hand(config, hand_index)
        if validation.as_integer(data["engine"]) != engine:
            raise ValueError(f"engine {shown(data['engine'])}: hand_index {hand_index} plays the engine "
                             f"({engine}|{engine})")
        deal = tuple(tuple(_tiles(config, tiles, f"seat {seat}'s tiles"))
                     for seat, tiles in enumerate(_list(data["deal"], "deal", config.num_players, config.num_players)))
        boneyard = tuple(_tiles(config, data["boneyard"], "boneyard"))
        hand = _dealt(config, hand_index, deal, boneyard)
        moves = _list(data["moves"], "moves", 0, None)
    played = [_play(hand, move, f"{where}, move {k + 1}") for k, move in enumerate(moves)]
    with _at(where):
        scores, went_out = _check_end(config, hand, data["scores"], data["went_out"])
    return RecordedHand(hand_index, deal, boneyard, tuple(played), scores, went_out)


def _dealt(config: GameConfig, hand_index: int, deal: tuple[tuple[int, ...], ...],
           boneyard: tuple[int, ...]) -> HandState:
    """The hand a deal starts, once its tiles are checked (each once) and its hand sizes too."""
    seen: dict[int, str] = {}
    for what, tiles in [*((f"seat {seat}", tiles) for seat, tiles in enumerate(deal)), ("the boneyard", boneyard)]:
        for tile in tiles:
            if tile in seen:
                raise ValueError(f"deal: tile {config.tiles.name(tile)} is dealt twice ({seen[tile]} and {what})")
            seen[tile] = what
    hand = HandState.from_deal(config, [list(tiles) for tiles in deal], engine_value_for_hand(config, hand_index),
                               boneyard)
    _check_hand_sizes(config, hand_index, deal)
    return hand


def _check_hand_sizes(config: GameConfig, hand_index: int, deal: tuple[tuple[int, ...], ...]) -> None:
    """The seats' hand sizes must be those the deal rule gives (rule 2; with a boneyard, the draws
    for an engine left face down, in turn, the last one drawing it). The engine's own deal
    (:func:`rules.shuffle_deal`) says so, on a shuffle that puts the engine where this deal has it."""
    n, t = config.num_players, config.num_tiles
    engine = config.tiles.double(engine_value_for_hand(config, hand_index))
    sizes = [len(tiles) for tiles in deal]
    draws = sum(sizes) - n * config.deal_size if config.boneyard else 0
    if not 0 <= draws <= config.boneyard_at_deal:
        raise ValueError(f"deal: the seats hold {sum(sizes)} tiles; the deal gives them {n * config.deal_size}, and "
                         f"at most {config.boneyard_at_deal} more drawn for the engine")
    shuffle = np.arange(t, dtype=np.int16)
    position = n * config.deal_size + draws - 1 if draws else 0
    shuffle[[position, engine]] = shuffle[[engine, position]]
    owner, pile = np.empty(t, dtype=np.int16), np.empty(t, dtype=np.int16)
    rules.shuffle_deal(shuffle, n, hand_index, config.rule_flags, config.deal_size, engine, owner, pile)
    wanted = np.bincount(owner[owner >= 0], minlength=n).tolist()
    holder = next(seat for seat, tiles in enumerate(deal) if engine in tiles)
    if sizes != wanted:
        raise ValueError(f"deal: the seats hold {sizes} tiles; the deal rule gives {wanted} in hand_index {hand_index}")
    if draws and holder != owner[engine]:
        raise ValueError(f"deal: seat {holder} holds the engine, but the {draws} draws for it end with seat "
                         f"{owner[engine]}")


def _play(hand: HandState, data: Any, where: str) -> RecordedMove:
    """Check one move against the position and play it."""
    seat = action = None
    try:
        data = _object(data, "a move")
        seat, action = data["seat"], data["action"]
        where = f"{where} (seat {seat}, action {action})"
        seat = validation.integer("seat", seat, 0, hand.config.num_players - 1)
        if hand.is_over:
            raise ValueError("the hand is already over")
        if seat != hand.current_player:
            raise ValueError(f"it is seat {hand.current_player}'s turn, not seat {seat}'s")
        hand.apply(action)
        text = actions.describe(hand.config, action, seat)
        if data["move"] != text and data["move"] != actions.earlier_description(hand.config, action, seat):
            raise ValueError(f"the move says {data['move']!r} but action {action} is {text!r}")
    except (ValueError, KeyError, TypeError, IllegalActionError) as error:
        raise RecordError(f"{where}: {validation.reason(error)}") from None
    return RecordedMove(seat, int(action), text)


def _check_end(config: GameConfig, hand: HandState, scores: Any, went_out: Any
               ) -> tuple[tuple[int, ...] | None, int | None]:
    if scores is None:
        if hand.is_over:
            raise ValueError("the hand is over but its scores are missing")
        if went_out is not None:
            raise ValueError("an unfinished hand has no went_out")
        return None, None
    if not hand.is_over:
        raise ValueError(f"scores are given but the moves stop before the hand is over (seat {hand.current_player} "
                         f"to move)")
    written = tuple(validation.integer("scores", score, 0) for score in _list(scores, "scores", config.num_players,
                                                                              config.num_players))
    played = tuple(int(score) for score in hand.scores())
    if written != played:
        raise ValueError(f"scores {list(written)} do not match the moves, which leave {list(played)}")
    if went_out is not None:
        went_out = validation.integer("went_out", went_out, 0, config.num_players - 1, "a seat, or null if blocked")
    if went_out != hand.went_out:
        raise ValueError(f"went_out {went_out!r} does not match the moves: "
                         f"{'blocked (null)' if hand.went_out is None else hand.went_out}")
    return written, hand.went_out


# ---------------------------------------------------------------------- replaying
@dataclass(frozen=True)
class RecordedPosition:
    """One position of a replay.

    Attributes:
        hand: the position (a copy: keep it if you like).
        hand_number: which hand of the record (0 for the first).
        hand_index: its number in the game.
        game_scores: each seat's total before this hand.
        move: the move that led here, None for the deal.
        move_number: 1 for the position after the hand's first move, 0 for the deal.
    """

    hand: HandState
    hand_number: int
    hand_index: int
    game_scores: tuple[int, ...]
    move: RecordedMove | None = field(default=None)
    move_number: int = 0


def replay(recorded: RecordedGame) -> Iterator[RecordedPosition]:
    """Every position of a checked record: each hand's deal, then the position after each move."""
    config = recorded.config
    totals = np.zeros(config.num_players, dtype=np.int64)
    for number, hand_record in enumerate(recorded.hands):
        engine = engine_value_for_hand(config, hand_record.hand_index)
        hand = HandState.from_deal(config, [list(tiles) for tiles in hand_record.deal], engine, hand_record.boneyard)
        scores = tuple(int(total) for total in totals)
        yield RecordedPosition(hand.copy(), number, hand_record.hand_index, scores)
        for k, move in enumerate(hand_record.moves):
            hand.apply(move.action)
            yield RecordedPosition(hand.copy(), number, hand_record.hand_index, scores, move, k + 1)
        if hand_record.scores is not None:
            totals += hand_record.scores


# ---------------------------------------------------------------------- checking helpers
@contextmanager
def _at(where: str) -> Iterator[None]:
    """Turn a refusal inside the block into a RecordError that says where it happened."""
    try:
        yield
    except RecordError:
        raise
    except (ValueError, KeyError, TypeError, IllegalActionError, RecursionError) as error:
        raise RecordError(f"{where}: {validation.reason(error)}") from None


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be a JSON object, got {shown(value)}")
    return value


def _list(value: Any, what: str, minimum: int, maximum: int | None) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"{what} must be a JSON list, got {shown(value)}")
    if len(value) < minimum or (maximum is not None and len(value) > maximum):
        bounds = f"{minimum} to {maximum}" if maximum is not None else f"at least {minimum}"
        raise ValueError(f"{what} must hold {bounds} entries, got {len(value)}")
    return value


def _tiles(config: GameConfig, value: Any, what: str) -> list[int]:
    """Tiles written as [low, high] pairs, as tile indices."""
    indices = []
    for pair in _list(value, what, 0, config.num_tiles):
        if not (isinstance(pair, list) and len(pair) == 2):
            raise ValueError(f"{what}: a tile is a [low, high] pair, got {shown(pair)}")
        low, high = (validation.integer("a tile's end", end, 0, config.highest_double) for end in pair)
        indices.append(config.tiles.index(low, high))
    return indices


def _labels(players: Any, num_players: int) -> tuple[str, ...] | None:
    if players is None:
        return None
    if isinstance(players, str) or not isinstance(players, Sequence) or len(players) != num_players:
        raise ValueError(f"players must name the {num_players} seats, got {shown(players)}")
    if not all(isinstance(name, str) and 0 < len(name) <= MAX_LABEL_LENGTH and name.isprintable() for name in players):
        raise ValueError(f"players must be names of 1 to {MAX_LABEL_LENGTH} printable characters (no control "
                         f"characters such as escapes or newlines), got {shown(players)}")
    return tuple(players)
