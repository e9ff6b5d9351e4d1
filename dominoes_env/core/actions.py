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
    """A readable move, e.g. ``"(3|7) on own line"``, ``"(9|2) on line +2"``, ``"(4|4) on the dummy
    line"`` (``"on the Mexican train"`` under its rules: :attr:`GameConfig.shared_line`), ``"pass"``,
    ``"draw"``: the one notation of a move, which every front end shows (``plays (3|7) on own line``).

    With `seat` (the mover's seat), every seat's line is named by its owner, the mover's own
    too: ``"(9|2) on player_2's line"``.

    Raises:
        ValueError: `action` is not an action of this table.
    """
    action = integer("action", action, 0, config.num_actions - 1)
    move = decode(config, action)
    if move is None:
        return "pass" if action == config.pass_action else "draw"
    relative, tile = move
    n = config.num_players
    if relative == n:
        where = f"the {config.shared_line}"
    elif seat is None:
        where = "own line" if relative == 0 else f"line +{relative}"
    else:
        where = f"player_{(seat + relative) % n}'s line"
    return f"{config.tiles.name(tile)} on {where}"


def earlier_description(config: GameConfig, action: object, seat: int) -> str:
    """A move as records written before version 0.3.0 of the package word it (the mover's own line
    as "own line", the shared line as "dummy line"): still read, never written."""
    action = integer("action", action, 0, config.num_actions - 1)
    move = decode(config, action)
    if move is None:
        return describe(config, action)
    relative, tile = move
    n = config.num_players
    where = "own line" if relative == 0 else "dummy line" if relative == n else f"player_{(seat + relative) % n}'s line"
    return f"{config.tiles.name(tile)} on {where}"
