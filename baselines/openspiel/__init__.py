"""OpenSpiel's bots in our tools: any ``pyspiel.Bot`` plays as a policy, and ``openspiel_ismcts``
seats OpenSpiel's information-set MCTS (with a random-rollout evaluator) by name in
``dominoes evaluate``, the league and the bench. The game itself, in OpenSpiel, is
:mod:`dominoes_env.openspiel`. Needs the ``openspiel`` extra.
"""

from __future__ import annotations

from baselines.openspiel.policy import BotPolicy, OpenSpielISMCTSPolicy

__all__ = ["BotPolicy", "OpenSpielISMCTSPolicy"]
