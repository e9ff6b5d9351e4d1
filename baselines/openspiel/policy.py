"""A ``pyspiel.Bot`` as a policy, and ``openspiel_ismcts``: OpenSpiel's IS-MCTS at our tables.

A policy sees only what its player observes; a bot wants an OpenSpiel state. At each decision
:class:`BotPolicy` builds the state of one world its player cannot tell from the truth: the
tiles it cannot see dealt by the package's sampler (uniform over the deals that agree with
everything its observations proved, :mod:`dominoes_env.core.hidden`), the player as seat 0,
one hand (:func:`dominoes_env.openspiel.state_from_position`). The bot's action is played as it
is: the action numbers are egocentric in both. A bot that searches over worlds, as OpenSpiel's
IS-MCTS does, gets its further worlds from the same sampler (``set_resampler``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from baselines.policies.policy import Policy, SeedLike
from baselines.policies.registry import register_policy
from dominoes_env.core import validation
from dominoes_env.core.config import GameConfig
from dominoes_env.core.hidden import HandKnowledge, KnowledgeTracker, sample_deals, sampled_states
from dominoes_env.core.observation import one_hand_part
from dominoes_env.core.state import HandState

#: Most simulations a decision of ``openspiel_ismcts`` may run.
MAX_SIMULATIONS = 100_000


def openspiel_game(config: GameConfig) -> Any:
    """The one-hand OpenSpiel game of a table (``python_dominoes_env``, its parameters the table's:
    :func:`dominoes_env.openspiel.game_parameters`)."""
    import pyspiel

    from dominoes_env.openspiel import SHORT_NAME, game_parameters  # importing it registers the game

    return pyspiel.load_game(SHORT_NAME, game_parameters(config))


class BotPolicy(Policy):
    """Any ``pyspiel.Bot`` as a policy of our tools.

    Args:
        bot: a bot built for :func:`openspiel_game` of the table, or a function that builds one
            from that game and a numpy generator (seeded from the policy's seed).

    Raises:
        ValueError: `bot` is neither.
    """

    def __init__(self, num_players: int | GameConfig = 4, highest_double: int = 9, seed: SeedLike = None,
                 bot: Any = None) -> None:
        super().__init__(num_players, highest_double, seed)
        import pyspiel

        from dominoes_env.openspiel import state_from_position

        self._state_from_position = state_from_position
        self.game = openspiel_game(self.config)
        if isinstance(bot, pyspiel.Bot):
            self.bot = bot
        elif callable(bot):
            self.bot = bot(self.game, self.rng)
        else:
            raise ValueError(f"bot must be a pyspiel.Bot or a function (game, rng) -> Bot, got {bot!r}")
        self.tracker = KnowledgeTracker(self.config)
        self._knowledge: HandKnowledge | None = None
        if callable(getattr(self.bot, "set_resampler", None)):
            self.bot.set_resampler(lambda state, player: self._world())

    def reset(self) -> None:
        self.tracker.reset()

    def _world(self) -> Any:
        """An OpenSpiel state of one world the player cannot tell from the truth (the player is seat 0)."""
        assert self._knowledge is not None
        deal = sample_deals(self._knowledge, self.rng, 1)
        return self._state_from_position(self.game, HandState(self.config, sampled_states(self._knowledge, deal,
                                                                                          self.rng)[0]))

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        self._knowledge = self.tracker.observe(one_hand_part(self.config, observation))
        legal = np.flatnonzero(action_mask)
        if legal.shape[0] == 1:
            return int(legal[0])
        action = int(self.bot.step(self._world()))
        if not action_mask[action]:
            raise ValueError(f"the bot chose action {action}, which is not legal here (legal: {legal.tolist()})")
        return action


def _ismcts(simulations: int, uct_c: float, rollouts: int) -> Callable[[Any, np.random.Generator], Any]:
    def build(game: Any, rng: np.random.Generator) -> Any:
        from open_spiel.python.algorithms import ismcts, mcts

        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=rollouts,
                                                random_state=np.random.RandomState(int(rng.integers(2**31))))
        return ismcts.ISMCTSBot(game, evaluator, uct_c, simulations,
                                random_state=np.random.RandomState(int(rng.integers(2**31))))

    return build


@register_policy("openspiel_ismcts")
class OpenSpielISMCTSPolicy(BotPolicy):
    """OpenSpiel's information-set MCTS (``open_spiel.python.algorithms.ismcts.ISMCTSBot``), its
    worlds sampled by the package's sampler, its leaves valued by random rollouts (OpenSpiel's
    ``RandomRolloutEvaluator``): the strongest generic searcher OpenSpiel has for a game like this.

    Args:
        simulations: simulations per decision.
        uct_c: UCT's exploration constant (the returns are minus one's own pips).
        rollouts: random rollouts per leaf.
    """

    def __init__(self, num_players: int | GameConfig = 4, highest_double: int = 9, seed: SeedLike = None,
                 simulations: int = 100, uct_c: float = 10.0, rollouts: int = 1) -> None:
        simulations = validation.integer("simulations", simulations, 1, MAX_SIMULATIONS)
        uct_c = validation.real("uct_c", uct_c, 0.0, 1e6)
        rollouts = validation.integer("rollouts", rollouts, 1, 1000)
        super().__init__(num_players, highest_double, seed, bot=_ismcts(simulations, uct_c, rollouts))
