"""Offline datasets of a player's games in Farama Minari's format (``dominoes dataset``).

Modules, one job each: :mod:`plan` (what a dataset holds: the table, who plays, the hands, the
seeds), :mod:`episodes` (playing a chunk of hands through the shared game loop and keeping each
seat's hand as an episode of the single-agent view), :mod:`chunks` (a chunk on disk while a run
goes on, so a killed run resumes), :mod:`minari_store` (Minari's folders, ids and storage),
:mod:`writer` (from a plan to a finished dataset), :mod:`cli` (the command).
"""

from baselines.datasets.plan import DatasetPlan, make_plan
from baselines.datasets.writer import Written, write

__all__ = ["DatasetPlan", "Written", "make_plan", "write"]
