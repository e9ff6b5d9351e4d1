"""A position as the data the browser draws: every line with its tiles turned as they lie, the
markers, the dummy line, hand sizes (or the tiles, where they may be seen), the boneyard, the
scores and whose turn; and the legal moves of the player to move, each with its action number,
where that player's tiles are shown (they would tell what it holds).

Absolute seats throughout (``player_2``), as the records and ``dominoes replay`` name them; an
action is the mover's egocentric number, as the env takes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dominoes_env.core import actions
from dominoes_env.core.render import oriented_line
from dominoes_env.core.state import HandState


def table_data(hand: HandState, *, shown: Sequence[int], labels: Sequence[str], game_scores: Sequence[int],
               hand_index: int, num_hands: int) -> dict[str, Any]:
    """The position `hand` as JSON-ready data, with the tiles of the seats in `shown` visible.

    `game_scores` are the totals before this hand; once the hand is over they include it and
    every hand is shown (the hand's end is public).
    """
    config, tiles = hand.config, hand.config.tiles
    n = config.num_players
    over = hand.is_over
    totals = np.asarray(game_scores, dtype=np.int64) + (hand.scores() if over else 0)
    visible = set(range(n)) if over else set(shown)
    seats = []
    for seat in range(n):
        seats.append({
            "seat": seat, "name": f"player_{seat}", "label": labels[seat], "tiles_held": int(hand.hand_sizes[seat]),
            "hand": [_tile(tiles, tile) for tile in hand.hand(seat)] if seat in visible else None,
            "marker_up": bool(hand.marker_up[seat]), "game_score": int(totals[seat]),
            "pips_left": int(hand.scores()[seat]) if over else None,
        })
    lines = []
    for line in range(n + 1):
        open_to_all = bool(hand.dummy_open) if line == n else bool(hand.marker_up[line])
        lines.append({"line": line, "owner": None if line == n else line,
                      "name": config.shared_line if line == n else f"player_{line}",
                      "tiles": [{"tile": tile, "near": near, "far": far}
                                for tile, near, far in oriented_line(hand, line)],
                      "open_value": int(hand.open_values[line]), "open_to_all": open_to_all,
                      "closed": line == n and not hand.dummy_open,
                      "double_to_cover": hand.double_to_cover == line})
    data: dict[str, Any] = {
        "players": n, "highest_double": config.highest_double, "rule_set": config.rule_set,
        "shared_line": config.shared_line,
        "hand_index": hand_index, "num_hands": num_hands, "engine": int(hand.engine_value),
        "seats": seats, "lines": lines, "boneyard": len(hand.boneyard) if config.boneyard else None,
        "to_move": None if over else int(hand.current_player), "drew": bool(hand.drew), "hand_over": over,
        "went_out": hand.went_out if over else None, "legal": [],
    }
    if not over and int(hand.current_player) in visible:  # another seat's legal moves would tell its tiles
        data["legal"] = legal_moves(hand)
    return data


def legal_moves(hand: HandState) -> list[dict[str, Any]]:
    """The mover's legal moves: action number, tile (None for a pass or a draw), absolute line, words."""
    config, n = hand.config, hand.config.num_players
    mover = int(hand.current_player)
    moves = []
    for action in hand.legal_actions().tolist():
        decoded = actions.decode(config, action)
        if decoded is None:
            tile, line = None, None
        else:
            relative, tile = decoded
            line = n if relative == n else (mover + relative) % n
        moves.append({"action": int(action), "tile": tile, "line": line,
                      "text": actions.describe(config, action, mover),
                      "kind": "tile" if tile is not None else actions.describe(config, action)})
    return moves


def _tile(tiles: Any, tile: int) -> dict[str, int]:
    low, high = tiles.ends(tile)
    return {"tile": int(tile), "low": int(low), "high": int(high)}
