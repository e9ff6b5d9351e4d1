"""What sits beside the table for a person who plays: the opponent seated by default and the hints.

It lives above the learners because it asks them (td_lambda's predicted pips, the champion's
move) and below the commands that seat a person (``dominoes play``, ``dominoes serve``), so that
both give the same advice from one place (:mod:`~baselines.advice.hints`).
"""

from baselines.advice.hints import Hints, chosen_specs, default_opponent, opponent_specs

__all__ = ["Hints", "chosen_specs", "default_opponent", "opponent_specs"]
