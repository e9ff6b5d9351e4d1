"""A text picture of the table, for people (the env's "ansi" and "human" modes)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dominoes_env.core.config import describe_table
from dominoes_env.core.state import HandState


def render_table(hand: HandState, hand_index: int = 0, num_hands: int = 1,
                 game_scores: Sequence[int] | np.ndarray | None = None) -> str:
    """Every line with its tiles and open value, markers, the dummy, hand sizes, whose turn,
    and the hand of the player to move."""
    config, tiles = hand.config, hand.config.tiles
    n = config.num_players
    engine = tiles.name(tiles.double(hand.engine_value))
    lines = [f"Hand {hand_index + 1}/{num_hands} - engine {engine} - {describe_table(config)}"]
    for seat in range(n):
        marker = "marker UP  " if hand.marker_up[seat] else "marker down"
        played = " ".join(tiles.name(t) for t in hand.line(seat)) or "-"
        total = "" if game_scores is None else f"  game score {int(game_scores[seat])}"
        size, value = hand.hand_sizes[seat], hand.open_values[seat]
        lines.append(f"  player_{seat}  [{size:2d} tiles] {marker}  open {value:2d} : "
                     f"{played}{total}")
    dummy = " ".join(tiles.name(t) for t in hand.line(n)) or "-"
    state = "(open)" if hand.dummy_open else "(closed)"
    lines.append(f"  dummy     {state:24s}open {hand.open_values[n]:2d} : {dummy}")
    if config.boneyard:
        lines.append(f"  boneyard  {len(hand.boneyard)} tiles face down")
    if hand.double_to_cover is not None:
        owner = "the dummy line" if hand.double_to_cover == n else f"player_{hand.double_to_cover}'s line"
        lines.append(f"  the double on {owner} must be covered before any other move")
    if hand.is_over:
        scores = ", ".join(f"player_{s}: {int(p)}" for s, p in enumerate(hand.scores()))
        how = f"player_{hand.went_out} went out" if hand.went_out is not None else "blocked"
        lines.append(f"Hand over ({how}). Pips left: {scores}")
    else:
        mover = hand.current_player
        held = " ".join(tiles.name(t) for t in hand.hand(mover))
        drew = " (has drawn this turn)" if hand.drew else ""
        lines.append(f"To move: player_{mover}{drew}, holding {held}")
    return "\n".join(lines)
