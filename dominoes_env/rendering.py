"""The envs' render modes, in one place: text ("ansi"), printed text ("human"), a picture ("rgb_array").

The AEC env (and through it the parallel view) and the single-agent view render a
:class:`~dominoes_env.core.game.Game` the same way through :class:`TableRenderer`. The
picture needs pillow (the ``image`` extra); asking for it without pillow is a one-line
ImportError when the env is made, not at the first frame.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dominoes_env.core import validation
from dominoes_env.core.config import GameConfig
from dominoes_env.core.game import Game
from dominoes_env.core.render import HandsShown, check_hands_shown, render_table

RENDER_MODES = ["ansi", "human", "rgb_array"]


class TableRenderer:
    """Renders a game's table in one of :data:`RENDER_MODES`.

    Args:
        config: the table.
        num_hands: hands per episode (scores are shown when there are several).
        render_mode: None (render() warns and returns None), or one of :data:`RENDER_MODES`.
        render_hands: whose tiles are shown: "mover", "all" or a seat number.

    Raises:
        ValueError: an unknown mode or `render_hands`.
        ImportError: "rgb_array" without pillow (the message names the extra).
    """

    def __init__(self, config: GameConfig, num_hands: int, render_mode: str | None,
                 render_hands: HandsShown = "mover") -> None:
        self.config = config
        self.num_hands = num_hands
        self.render_mode = None if render_mode is None else validation.choice("render_mode", render_mode,
                                                                              RENDER_MODES)
        self.render_hands = check_hands_shown("render_hands", render_hands, config.num_players)
        self._painter: Any = None
        if self.render_mode == "rgb_array":
            import dominoes_env.image  # noqa: F401 - the one-line ImportError without pillow, said now

    def render(self, game: Game | None, note: str = "") -> str | np.ndarray | None:
        """What ``env.render()`` returns: the text ("ansi", with `note` as its last line), None after
        printing it ("human"), or the picture ("rgb_array")."""
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("render() called without render_mode; pass render_mode='ansi', 'human' or "
                                  "'rgb_array'")
            return None
        if self.render_mode == "rgb_array":
            return self.image(game)
        text = self.text(game) + (f"\n{note}" if note else "")
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _scores(self, game: Game) -> np.ndarray | None:
        return game.scores_before_hand if self.num_hands > 1 else None

    def text(self, game: Game | None) -> str:
        """The table as text."""
        if game is None:
            return "(no game yet: call reset())"
        return render_table(game.hand, game.hand_index, self.num_hands, self._scores(game), self.render_hands)

    def image(self, game: Game | None) -> np.ndarray:
        """The table as a (height, width, 3) uint8 picture, the same size for every position of
        this table (an empty table before the first reset)."""
        if self._painter is None:
            from dominoes_env.image import TablePainter

            self._painter = TablePainter(self.config, self.num_hands, self.render_hands)
        if game is None:
            return np.asarray(self._painter.blank())
        return self._painter.draw(game.hand, game.hand_index, self._scores(game))
