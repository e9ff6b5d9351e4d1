"""``oracle``: the champion's search shown every hand, for calibration only (docs/champion.md).

The champion searches over the deals it cannot rule out; the oracle searches the true one.
Everything else is the champion's: the tree, the network, the budget. It is not shown the
boneyard's order (nobody can know it: each of its worlds lays the boneyard in a fresh random
order), so with a boneyard it still searches several worlds, and without one all its worlds
are the same deal.

What it measures: at a table, the gap between the oracle and the champion is the room the
hidden tiles leave a player that must guess them; the gap between the champion and a
weaker player is how much of that room the champion has taken. It is never a fair opponent,
so it is not in the default league, and only a loop that shows it the deal
(:func:`baselines.harness.play.play_game`: ``dominoes evaluate``, the bench, the league) can
seat it.
"""

from __future__ import annotations

import numpy as np

from baselines.champion.policy import ChampionPolicy
from baselines.policies.policy import SeesEveryHand
from baselines.policies.registry import register_policy
from dominoes_env.core import rules
from dominoes_env.core.config import GameConfig
from dominoes_env.core.hidden import BONEYARD, HandKnowledge, sampled_states


def true_deal(state: np.ndarray, knowledge: HandKnowledge) -> np.ndarray:
    """Where each of the player's hidden tiles really lies, in its frame: ``owners[k]`` is the
    seat (1 = the next after the player) holding ``knowledge.hidden[k]``, or -1 for the boneyard.

    Args:
        state: the hand's whole engine state (absolute seats), the player to move.

    Raises:
        ValueError: the state is not the hand the knowledge was built from (the deal does not
            agree with what the player has seen: a stale or foreign state).
    """
    n = int(state[rules.NUM_PLAYERS])
    player = int(state[rules.CURRENT_PLAYER])
    owners = state[rules.HEADER_SIZE + knowledge.hidden].astype(np.int64)
    deal = np.where(owners == rules.IN_BONEYARD, BONEYARD, (owners - player) % n)
    if not knowledge.agrees(deal):
        raise ValueError("the state shown to the oracle is not the position it is asked to move in "
                         "(show it the hand's state at each of its moves, as play_game does)")
    return deal


@register_policy("oracle")
class OraclePolicy(ChampionPolicy, SeesEveryHand):
    """The champion's search over the one true deal (calibration only: it sees every hand).

    Takes the champion's parameters (simulations, worlds, ...; ``worlds`` only matters with a
    boneyard, whose order it does not see). Seat it with :func:`baselines.harness.play.play_game`
    or what is built on it (``dominoes evaluate oracle champion:3``).

    Raises:
        ValueError: as the champion; and at a move it was not shown the deal for, in one line.
    """

    _shown: np.ndarray | None = None  # the state shown for the next move (play_game shows it)

    @classmethod
    def plays_by_default(cls, config: GameConfig) -> bool:
        """Never in the default league: it is a measuring stick, not a fair player."""
        return False

    def reset(self) -> None:
        super().reset()
        self._shown = None

    def show(self, state: np.ndarray) -> None:
        self._shown = np.array(state, dtype=np.int16)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        if self._shown is None:
            raise ValueError("oracle sees every hand, so it plays only where it is shown the deal before each "
                             "move (play_game: dominoes evaluate, the bench, the league), not here")
        try:
            return super().act(observation, action_mask)
        finally:
            self._shown = None  # one showing serves one move

    def worlds(self, knowledge: HandKnowledge) -> np.ndarray:
        """The true deal, `worlds` times, each with the boneyard laid in a fresh random order."""
        assert self._shown is not None
        deal = true_deal(self._shown, knowledge)
        return sampled_states(knowledge, np.repeat(deal[None], self.settings.worlds, axis=0), self.rng)
