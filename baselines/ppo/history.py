"""What the hand so far proved about the other seats, as input to ppo's network: its history feature.

The one-hand observation shows the table as it is now, not how it got there: who passed while
which values were open is gone once the next move is made. A person at the table remembers it
("the next seat passed on a 4: it holds no 4"), and so does :class:`~dominoes_env.core.hidden.KnowledgeTracker`,
which every searching player runs. ``history="passes"`` gives the network that memory: besides
the observation it reads, for every other seat k and every pip value v, whether the hand so far
proves that seat k holds no tile with an end v (the tracker's ``forbidden`` matrix, seats
relative to the player). ``"none"`` (the default) is the observation alone.

The facts come from :class:`~dominoes_env.core.pass_facts.PassFacts`, the env's one reading of
what passes prove, which the tracker runs for one seat and the trainer for every seat of its
batched games: training, play and search read the same facts. It is importable from here too,
where ppo's trainers and player take it.
"""

from __future__ import annotations

from dominoes_env.core.config import GameConfig
from dominoes_env.core.pass_facts import PassFacts

__all__ = ["HISTORY", "PassFacts", "history_size"]

HISTORY = ("none", "passes")  #: the history features ppo's network can read (see the module)


def history_size(config: GameConfig, history: str) -> int:
    """Inputs the history feature adds to the observation: (players - 1) x (highest double + 1) for
    "passes", 0 for "none"."""
    return 0 if history == "none" else (config.num_players - 1) * (config.highest_double + 1)
