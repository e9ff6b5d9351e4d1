"""The seats the learner does not hold, when it trains against a pool instead of itself.

With ``--opponents persistent_line,td_lambda`` (anything but "self") the learner holds one
seat of every game, drawn anew at each game, and the other seats are drawn from an
:class:`~baselines.selfplay.pool.OpponentPool` that starts with those specs and gains a
frozen copy of the learner every ``--snapshot-every`` steps. A member that keeps nothing
between moves (a :class:`~baselines.policies.policy.BatchPolicy`: td_lambda, greedy, a
snapshot) plays all its games in one call; one that remembers within a hand
(persistent_line) gets a copy per game and seat. The learner's result in each game is
reported to the pool, whose prioritised sampling reads it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from baselines.policies import registry, specs
from baselines.policies.policy import BatchPolicy, Policy
from baselines.selfplay.pool import OpponentPool
from dominoes_env.vector import TOTALS, VectorDominoes

if TYPE_CHECKING:
    from baselines.ppo.config import PPOConfig
    from baselines.ppo.weights import PPOWeights


class PoolSeats:
    """Which seat the learner holds in each game, and the moves of the members in the others."""

    def __init__(self, config: PPOConfig, engine: VectorDominoes) -> None:
        self.config, self.engine = config, engine
        self.pool = OpponentPool(list(config.opponents), sampling=config.pool_sampling, seed=config.seed)
        b, n = config.num_envs, config.num_players
        self.learner_seat = np.zeros(b, dtype=np.int64)
        self.names: list[list[str]] = [[""] * (n - 1) for _ in range(b)]  # members seated after the learner
        self.shared: dict[str, BatchPolicy] = {}  # members that play all their games at once
        self.own: dict[tuple[int, int], Policy] = {}  # (game, seat) -> a copy for members that remember
        self.rng = np.random.default_rng(config.seed)

    def new_segment(self, rng: np.random.Generator) -> None:
        """Every game was dealt anew: draw every game's seats."""
        self.rng = rng
        self._seat(np.arange(self.config.num_envs))

    def add_snapshot(self, weights: PPOWeights, name: str) -> None:
        """A frozen copy of the learner joins the pool."""
        from baselines.ppo.policy import PPOPolicy

        self.pool.add(PPOPolicy(self.config.game, checkpoint=weights), name=name, freeze=lambda member: member)

    def learner_moves(self) -> np.ndarray:
        """(B,) whether the learner is to move in each game."""
        return self.engine.current_player == self.learner_seat

    def choose(self, learner_actions: np.ndarray, observation: dict[str, np.ndarray], learner: np.ndarray
               ) -> np.ndarray:
        """Every game's action: the learner's where it moves, each member's own elsewhere."""
        chosen = learner_actions.copy()
        n = self.config.num_players
        movers = self.engine.current_player
        by_member: dict[str, list[int]] = {}
        for game in np.flatnonzero(~learner).tolist():
            offset = (int(movers[game]) - int(self.learner_seat[game])) % n
            by_member.setdefault(self.names[game][offset - 1], []).append(game)
        seen, masks = observation["observation"], observation["action_mask"]
        for name, games in by_member.items():
            member = self._shared(name)
            if member is not None:
                chosen[games] = member.act_batch(seen[games], masks[games])
                continue
            for game in games:
                chosen[game] = self.own[(game, int(movers[game]))].act(seen[game], masks[game])
        return chosen

    def after_step(self, infos: dict[str, Any], terminated: np.ndarray) -> None:
        """Report the finished games to the pool and seat new draws there; a new hand resets the copies."""
        if "_hand_scores" in infos:
            for game in np.flatnonzero(infos["_hand_scores"] & ~terminated).tolist():
                for seat in range(self.config.num_players):
                    if (game, seat) in self.own:
                        self.own[(game, seat)].reset()
        finished = np.flatnonzero(terminated)
        if finished.size:
            totals = infos["final_info"][TOTALS]
            for game in finished.tolist():
                self.pool.report_game(self.names[game], int(self.learner_seat[game]), totals[game])
            self._seat(finished)

    # ------------------------------------------------------------------ inside
    def _seat(self, games: np.ndarray) -> None:
        n = self.config.num_players
        for game in games.tolist():
            self.learner_seat[game] = int(self.rng.integers(n))
            self.names[game] = self.pool.draw_names(n - 1, self.rng)
            for offset, name in enumerate(self.names[game], start=1):
                seat = (int(self.learner_seat[game]) + offset) % n
                self.own.pop((game, seat), None)
                if self._shared(name) is None:
                    self.own[(game, seat)] = self._build(name)
            self.own.pop((game, int(self.learner_seat[game])), None)

    def _shared(self, name: str) -> BatchPolicy | None:
        """The member's one shared player if it plays all its games at once, else None."""
        if name not in self.shared:
            member = self.pool.member(name)
            if isinstance(member, Policy):
                kind: type[Policy] = type(member)
            else:
                kind = registry.policy_class(specs.parse(member)[0].name)
            if not issubclass(kind, BatchPolicy):
                return None
            player = self._build(name)
            assert isinstance(player, BatchPolicy)
            self.shared[name] = player
        return self.shared[name]

    def _build(self, name: str) -> Policy:
        member = self.pool.member(name)
        if isinstance(member, Policy):
            return member
        spec, _ = specs.parse(member)
        return registry.build(spec, self.config.game, seed=int(self.rng.integers(2**63)))

    # ------------------------------------------------------------------ resuming
    def state(self) -> dict[str, Any]:
        """The pool as the resume file keeps it: each member's spec, or a snapshot's weights, and its record."""
        members = []
        for name in self.pool.names:
            member = self.pool.member(name)
            wins, games = self.pool.record()[name]
            weights = getattr(getattr(member, "network", None), "weights", None)
            members.append({"name": name, "spec": member if isinstance(member, str) else "", "wins": wins,
                            "games": games, "weights": dict(weights) if weights is not None else {}})
        return {"members": members}

    def load_state(self, state: dict[str, Any], weights_of: Any) -> None:
        """The pool of :meth:`state` (`weights_of(dict)` rebuilds a snapshot's PPOWeights)."""
        from baselines.ppo.policy import PPOPolicy

        self.pool = OpponentPool((), sampling=self.config.pool_sampling, seed=self.config.seed)
        self.shared.clear()
        for entry in state["members"]:
            if entry["spec"]:
                self.pool.add(entry["spec"], name=entry["name"])
            else:
                self.pool.add(PPOPolicy(self.config.game, checkpoint=weights_of(entry["weights"])), name=entry["name"],
                              freeze=lambda member: member)
            self.pool.restore_record(entry["name"], entry["wins"], entry["games"])
