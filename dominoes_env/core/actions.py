"""The action table: ``action = line * T + tile``, then pass (then draw, with a boneyard);
decoding and names.

``line`` is egocentric for the player to move (0 = its own line, k = the line of the
seat k places after it, n = the dummy line) and ``tile`` the canonical tile index, so the
same number means the same kind of move from every seat. ``(n+1) * T`` is the pass, legal
only when nothing else is; with the boneyard rule ``(n+1) * T + 1`` is the draw, legal
exactly when no tile can be played and the player has not drawn yet this turn. Decoding
is O(1) arithmetic; this module is the one place that knows the encoding besides the
compiled rules.
"""

from __future__ import annotations

from dominoes_env.core.config import GameConfig
from dominoes_env.core.validation import integer


def decode(config: GameConfig, action: int) -> tuple[int, int] | None:
    """(egocentric line, tile) of a tile action, or None for the pass or the draw."""
    if action >= config.pass_action:
        return None
    return divmod(int(action), config.num_tiles)


def describe(config: GameConfig, action: object, seat: int | None = None) -> str:
    """A readable move, e.g. ``"(3|7) on own line"``, ``"(9|2) on line +2"``, ``"pass"``, ``"draw"``.

    With `seat` (the mover's seat), other lines are named by their owner:
    ``"(9|2) on player_2's line"``.

    Raises:
        ValueError: `action` is not an action of this table.
    """
    action = integer("action", action, 0, config.num_actions - 1)
    move = decode(config, action)
    if move is None:
        return "pass" if action == config.pass_action else "draw"
    relative, tile = move
    n = config.num_players
    if relative == 0:
        where = "own line"
    elif relative == n:
        where = "dummy line"
    elif seat is None:
        where = f"line +{relative}"
    else:
        where = f"player_{(seat + relative) % n}'s line"
    return f"{config.tiles.name(tile)} on {where}"
