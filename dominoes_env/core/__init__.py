"""The game itself, free of any RL library: tiles, rules, dealing, observation encoding.

Only numpy and numba are imported here; :mod:`dominoes_env.env` adapts it to PettingZoo.
"""

from dominoes_env.core.config import GameConfig, make_config
from dominoes_env.core.errors import IllegalActionError
from dominoes_env.core.game import Game
from dominoes_env.core.observation import Field, Observer, decode_fields, layout_table, observation_fields
from dominoes_env.core.render import render_table
from dominoes_env.core.state import HandState, deal_hands, engine_value_for_hand
from dominoes_env.core.tiles import TileSet, tile_set

__all__ = [
    "Field", "Game", "GameConfig", "HandState", "IllegalActionError", "Observer", "TileSet",
    "deal_hands", "decode_fields", "engine_value_for_hand", "layout_table", "make_config",
    "observation_fields", "render_table", "tile_set",
]
