"""A text picture of the table, for people (the env's "ansi" and "human" modes, ``dominoes play``).

Which hands a picture shows is decided here once, for the text and the image alike
(:func:`shown_seats`): the player to move (the envs' default), every hand (spectators and
replays), or one seat's (a person playing: never the others' tiles).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from dominoes_env.core import validation
from dominoes_env.core.config import describe_table
from dominoes_env.core.state import HandState

#: Whose hands a picture of the table shows: "mover" (the player to move), "all", or a seat number.
HandsShown = str | int
HANDS_SHOWN = ("mover", "all")

#: Paints a piece of text by its role ("heading", "marker_up", "to_move", "tiles", "warning");
#: the identity by default, ANSI colours in a terminal that has them.
Paint = Callable[[str, str], str]


def plain(role: str, text: str) -> str:
    """The default :data:`Paint`: no styling."""
    return text


def check_hands_shown(name: str, value: object, num_players: int) -> HandsShown:
    """`value` as a :data:`HandsShown`, or a ValueError naming `name` and what is allowed."""
    if isinstance(value, str) and value in HANDS_SHOWN:
        return value
    seat = None if isinstance(value, str) else validation.as_integer(value)
    if seat is None or not 0 <= seat < num_players:
        raise ValueError(f"{name} must be 'mover', 'all' or a seat from 0 to {num_players - 1}, "
                         f"got {validation.shown(value)}")
    return seat


def shown_seats(hand: HandState, show: HandsShown) -> list[int]:
    """The seats whose tiles a picture shows: every seat for "all", the seat itself for a number,
    and for "mover" the player to move (nobody once the hand is over)."""
    if show == "all":
        return list(range(hand.config.num_players))
    if show == "mover":
        return [] if hand.is_over else [hand.current_player]
    return [int(show)]


def oriented_line(hand: HandState, line: int) -> list[tuple[int, int, int]]:
    """(tile, end towards the engine, end away from it) of each tile on an absolute line, in play
    order: the line as a chain from the engine, as it lies on the table."""
    tiles, value, chain = hand.config.tiles, hand.engine_value, []
    for tile in hand.line(line):
        low, high = tiles.ends(tile)
        far = high if low == value else low
        chain.append((tile, value, far))
        value = far
    return chain


def _chain_text(hand: HandState, line: int) -> str:
    return " ".join(f"({near}|{far})" for _, near, far in oriented_line(hand, line)) or "-"


def render_table(hand: HandState, hand_index: int = 0, num_hands: int = 1,
                 game_scores: Sequence[int] | np.ndarray | None = None, show_hands: HandsShown = "mover",
                 paint: Paint = plain) -> str:
    """Every line with its tiles (each turned as it lies, matching ends together) and open value,
    markers, the dummy, hand sizes, whose turn, and the hands `show_hands` asks for
    (:func:`shown_seats`)."""
    config, tiles = hand.config, hand.config.tiles
    n = config.num_players
    engine = tiles.name(tiles.double(hand.engine_value))
    lines = [paint("heading", f"Hand {hand_index + 1}/{num_hands} - engine {engine} - {describe_table(config)}")]
    for seat in range(n):
        marker = paint("marker_up", "marker UP  ") if hand.marker_up[seat] else "marker down"
        played = _chain_text(hand, seat)
        total = "" if game_scores is None else f"  game score {int(game_scores[seat])}"
        size, value = hand.hand_sizes[seat], hand.open_values[seat]
        held = f"{size:2d} tile " if size == 1 else f"{size:2d} tiles"
        lines.append(f"  player_{seat}  [{held}] {marker}  open {value:2d} : "
                     f"{played}{total}")
    shared = f"{config.shared_line:14s}"  # "dummy line" or "Mexican train", as the rule set calls it
    if hand.dummy_open:
        lines.append(f"  {shared}{'(open to all)':14s}open {hand.open_values[n]:2d} : {_chain_text(hand, n)}")
    else:
        lines.append(f"  {shared}(not open yet: it opens once every seat's line is started)")
    if config.boneyard:
        lines.append(f"  boneyard  {len(hand.boneyard)} tiles face down")
    if hand.double_to_cover is not None:
        owner = f"the {config.shared_line}" if hand.double_to_cover == n else f"player_{hand.double_to_cover}'s line"
        lines.append(paint("warning", f"  the double on {owner} must be covered before any other move"))
    if hand.is_over:
        scores = ", ".join(f"player_{s}: {int(p)}" for s, p in enumerate(hand.scores()))
        how = f"player_{hand.went_out} went out" if hand.went_out is not None else "blocked"
        lines.append(paint("heading", f"Hand {hand_index + 1} over ({how}). Pips left: {scores}"))
    seats = shown_seats(hand, show_hands)
    if not hand.is_over:
        mover = hand.current_player
        drew = " (has drawn this turn)" if hand.drew else ""
        holding = f", holding {paint('tiles', _tiles_text(hand, mover))}" if seats == [mover] else ""
        lines.append(paint("to_move", f"To move: player_{mover}{drew}") + holding)
        if seats == [mover]:
            seats = []
    lines += [f"  player_{seat} holds {paint('tiles', _tiles_text(hand, seat))}" for seat in seats]
    return "\n".join(lines)


def _tiles_text(hand: HandState, seat: int) -> str:
    return " ".join(hand.config.tiles.name(t) for t in hand.hand(seat)) or "nothing"
