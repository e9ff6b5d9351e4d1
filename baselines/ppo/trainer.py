"""PPO self-play on the batched engine, in the CleanRL manner: the whole algorithm, top to bottom.

1. **Collect.** B games run on :class:`dominoes_env.VectorDominoes`, each at its own player to
   move. At every step the network reads the B observations (the one-hand part), its policy
   head weighs each game's legal moves (:mod:`baselines.ppo.heads`: masked logits, or the
   scores of the moves' after-states), a move is sampled in every game and the engine plays
   them all at once. In
   self-play one network moves in every seat, so every decision is a sample; with a pool
   (:mod:`baselines.ppo.opponents`) the learner holds one seat of each game and only its
   decisions are learned from.
2. **Advantages.** A hand pays every seat when it ends (the env's reward, per seat), so each
   seat has its own rewards. A seat's decisions form its own trajectory through the game's
   global steps, and the generalized advantage estimate (GAE) runs along it: each decision is
   bootstrapped from the same seat's value at its next decision, seen from its own
   observation (:func:`seat_advantages`). The value head gives every seat's expected return
   from the mover's observation (:mod:`baselines.ppo.network`), and learns every seat's
   return at every step; a game that ends bootstraps nothing (the engine deals the next game
   in the same step).
3. **Update.** PPO's clipped objective on the movers' decisions, the value loss on every
   seat's return, an entropy bonus; a few epochs of minibatches, gradients clipped, Adam with
   the learning rate annealed to 0.

The run is cut into segments (:attr:`PPOConfig.eval_every` steps): each deals every game
anew and reseeds the sampling from (seed, segment), so a run resumed from a segment's
checkpoint repeats exactly what followed it (:mod:`baselines.ppo.run` keeps the files).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from baselines.ppo.config import PPOConfig
from baselines.ppo.heads import HEADS
from baselines.ppo.network import ActorCritic
from baselines.ppo.opponents import PoolSeats
from baselines.ppo.weights import PPOWeights
from dominoes_env.core.observation import observation_layout
from dominoes_env.vector import VectorDominoes


@dataclass
class Rollout:
    """`rollout_steps` global steps of B games (T x B rows; seats in absolute order)."""

    observations: torch.Tensor  # (T, B, D) int8: the mover's one-hand observation (0 or 1)
    choices: Any  # what the policy head needs to weigh each row's legal moves again (flat rows)
    chooses: torch.Tensor  # (T, B) bool: the mover had more than one legal move
    actions: torch.Tensor  # (T, B) int64
    log_probs: torch.Tensor  # (T, B) the sampling policy's log-probability of the action
    movers: torch.Tensor  # (T, B) int64: the seat that moved
    learns: torch.Tensor  # (T, B) bool: the learner moved (every row in self-play)
    values: torch.Tensor  # (T, B, n) every seat's value before the move
    rewards: torch.Tensor  # (T, B, n) what the move's step paid each seat (scaled)
    ended: torch.Tensor  # (T, B) float: the game ended at this step (the next row is a new game)
    bootstrap: torch.Tensor  # (B, n) every seat's value after the last step


def seat_rotation(num_players: int) -> torch.Tensor:
    """(n, n) index: row m gives, for each absolute seat s, its place in mover m's frame, (s - m) mod n."""
    seats = torch.arange(num_players)
    return (seats[None, :] - seats[:, None]) % num_players


def seat_advantages(rewards: torch.Tensor, values: torch.Tensor, ended: torch.Tensor, movers: torch.Tensor,
                    bootstrap: torch.Tensor, gamma: float, gae_lambda: float) -> tuple[torch.Tensor, torch.Tensor]:
    """GAE along each seat's own decisions, and every seat's return at every step.

    Args:
        rewards, values: (T, B, n) what each step paid every seat, and every seat's value before it.
        ended: (T, B) the game ended at this step; movers: (T, B) the seat that moved.
        bootstrap: (B, n) every seat's value after the last step.

    A seat's decision at step t is bootstrapped from the same seat's value at its next decision
    (its own observation then, which sees its own hand), after the rewards it got in between:
    delta = r(t .. next) + gamma V_next - V_t and A_t = delta + gamma lambda A_next. Where a seat
    has no next decision in the rollout, its value after the last step is used. A game that ends
    bootstraps nothing.

    Returns:
        (T, B) each decision's advantage (its mover's), and (T, B, n) each seat's lambda-return
        from every step: the rewards until its next decision and its lambda-return there (at its
        own decisions, advantage plus value): the value head's targets.
    """
    steps, games, seats = rewards.shape
    advantages = torch.zeros((steps, games), dtype=rewards.dtype, device=rewards.device)
    returns = torch.zeros_like(rewards)
    following = bootstrap.clone()  # each seat's value at its next decision
    running = torch.zeros_like(bootstrap)  # each seat's advantage at its next decision
    collected = torch.zeros_like(bootstrap)  # the rewards since, up to that decision
    games_index = torch.arange(games, device=rewards.device)
    for t in reversed(range(steps)):
        going_on = (1.0 - ended[t])[:, None]  # after a game's end come another game's decisions
        following, running, collected = following * going_on, running * going_on, collected * going_on
        collected = collected + rewards[t]
        returns[t] = collected + gamma * (following + running)
        mover = movers[t]
        delta = collected[games_index, mover] + gamma * following[games_index, mover] - values[t, games_index, mover]
        advantage = delta + gamma * gae_lambda * running[games_index, mover]
        advantages[t] = advantage
        returns[t, games_index, mover] = advantage + values[t, games_index, mover]
        following[games_index, mover] = values[t, games_index, mover]
        running[games_index, mover] = advantage
        collected[games_index, mover] = 0.0
    return advantages, returns


def ppo_losses(log_probs: torch.Tensor, entropy: torch.Tensor, values: torch.Tensor, old_log_probs: torch.Tensor,
               advantages: torch.Tensor, returns: torch.Tensor, learns: torch.Tensor, clip: float
               ) -> dict[str, torch.Tensor]:
    """The clipped policy loss and the entropy over the rows the learner chose in, the value loss over
    every row and seat; with diagnostics.

    Args:
        log_probs, entropy: (K,) the current policy's log-probability of each row's action and its entropy.
        values: (K, n) every seat's value in the mover's frame; returns: (K, n) its return, likewise.
        advantages: (K,) the mover's advantage (normalised here over the learner's rows).
        learns: (K,) bool, the rows whose move the learner chose among more than one.
    """
    ratio = (log_probs - old_log_probs).exp()
    weight = learns.float()
    rows = weight.sum().clamp(min=1.0)
    mean = (advantages * weight).sum() / rows
    spread = (((advantages - mean) ** 2) * weight).sum() / rows
    normalised = (advantages - mean) / (spread.sqrt() + 1e-8)
    clipped = torch.min(ratio * normalised, ratio.clamp(1 - clip, 1 + clip) * normalised)
    with torch.no_grad():
        approx_kl = (((ratio - 1) - (log_probs - old_log_probs)) * weight).sum() / rows
        clip_fraction = (((ratio - 1).abs() > clip).float() * weight).sum() / rows
    return {"policy": -(clipped * weight).sum() / rows, "value": 0.5 * (values - returns).pow(2).mean(),
            "entropy": (entropy * weight).sum() / rows, "approx_kl": approx_kl, "clip_fraction": clip_fraction}


def segment_seed(seed: int, segment: int) -> int:
    """The seed of segment `segment` of a run: its deals, its sampled moves, its opponents' draws."""
    return int(np.random.SeedSequence([seed, segment]).generate_state(1, dtype=np.uint64)[0] >> 1)


class Trainer:
    """One run's network, optimiser and games; :meth:`start_segment`, then :meth:`collect` and
    :meth:`learn` in turn."""

    reads_history = False  #: whether the trainer feeds the network the history feature (config.history)
    warms_value = True  #: whether its update honours config.value_warmup (PPO's; DMC and DAgger fit no critic)

    def resume_identity(self) -> str:
        """What a resume file must hold to be this run's: the configuration (a learner that reads
        it differently, DMC's, adds its own name and settings, so that one never resumes the other)."""
        return self.config.to_json()

    def __init__(self, config: PPOConfig, device: torch.device | str = "cpu", engine_threads: int = 1) -> None:
        """`engine_threads`: the batched engine's threads (the same games on any number; more where
        the network runs elsewhere, on a GPU)."""
        if config.history != "none" and not self.reads_history:
            raise ValueError(f"history={config.history!r} is read by dmc's trainer only, for now (dominoes train dmc "
                             f"--history {config.history}); ppo's reads history='none'")
        if config.value_warmup and not self.warms_value:
            raise ValueError(f"value_warmup={config.value_warmup} is read by ppo's trainer only; this learner fits "
                             f"no critic of PPO's: give 0")
        self.config, self.device = config, torch.device(device)
        torch.manual_seed(config.seed)
        self.network = ActorCritic(config).to(self.device)
        self.optimiser = torch.optim.Adam(self.network.parameters(), lr=config.learning_rate, eps=1e-5)
        self.engine = VectorDominoes(config.num_envs, config.game, num_hands=config.hands_per_game,
                                     reward=config.reward, threads=engine_threads)
        self.one_hand = observation_layout(config.game).size
        self.rotation = seat_rotation(config.num_players).to(self.device)
        self.head = HEADS[config.policy_head](config.game, self.device, config.features)
        self.inputs = self.head.inputs  #: the network's input of an observation (the head's: one chain cache)
        self.seats = None if config.self_play else PoolSeats(config, self.engine)
        self.generator = torch.Generator(device=self.device)
        #: set by the run (:func:`baselines.ppo.run.train_run`) while within config.value_warmup: the update then
        #: fits the value layer alone
        self.value_only = False
        self.observation: dict[str, np.ndarray] = {}
        #: the hands finished since :meth:`take_hands`: their scores, and the learner's seat (-1: every seat)
        self.hand_scores: list[np.ndarray] = []
        self.hand_learners: list[np.ndarray] = []

    def start_segment(self, segment: int) -> None:
        """Deal every game anew and reseed the sampling: a segment depends only on the weights and (seed, segment)."""
        seed = segment_seed(self.config.seed, segment)
        self.generator.manual_seed(seed)
        self.observation, _ = self.engine.reset(seed=seed)
        if self.seats is not None:
            self.seats.new_segment(np.random.default_rng(seed))

    def weights(self, info: dict[str, Any] | None = None) -> PPOWeights:
        """The current network as the numpy player reads it."""
        return PPOWeights(self.network.named_weights(), self.config, info or {})

    # ------------------------------------------------------------------ 1. collect
    def _seat_values(self, features: torch.Tensor, movers: torch.Tensor) -> torch.Tensor:
        """Every seat's value, from the trunk's features of the movers' observations, in absolute seat order."""
        return self.network.value(features).gather(1, self.rotation[movers])

    @torch.no_grad()
    def collect(self) -> Rollout:
        """`rollout_steps` steps of every game with the current policy."""
        config, engine, b = self.config, self.engine, self.config.num_envs
        columns: dict[str, list[Any]] = {name: [] for name in (
            "observations", "choices", "chooses", "actions", "log_probs", "movers", "learns", "values", "rewards",
            "ended")}
        for _ in range(config.rollout_steps):
            observations, masks = self.observation["observation"][:, :self.one_hand], self.observation["action_mask"]
            seen = torch.from_numpy(self.inputs(observations)).to(self.device)
            movers = torch.from_numpy(engine.current_player.astype(np.int64)).to(self.device)
            features = self.network.trunk(seen.float())
            actions, choices = self.head.sample(self.network, features, observations, masks, self.generator)
            learns = torch.ones(b, dtype=torch.bool, device=self.device)
            chosen = actions.cpu().numpy()
            if self.seats is not None:  # the pool's members move in the other seats
                learner = self.seats.learner_moves()
                chosen = self.seats.choose(chosen, self.observation, learner)
                learns = torch.from_numpy(learner).to(self.device)
                actions = torch.from_numpy(chosen).to(self.device)
            log_probs = self.head.log_probs(choices, actions)
            chooses = torch.from_numpy(masks.sum(axis=1) > 1).to(self.device)
            values = self._seat_values(features, movers)
            self.observation, rewards, terminated, truncated, infos = engine.step(chosen)
            self._count_hands(infos)
            if self.seats is not None:
                self.seats.after_step(infos, terminated)
            for name, value in (("observations", seen), ("choices", choices), ("chooses", chooses),
                                ("actions", actions), ("log_probs", log_probs), ("movers", movers),
                                ("learns", learns), ("values", values),
                                ("rewards", torch.from_numpy(rewards * config.reward_scale).float().to(self.device)),
                                ("ended", torch.from_numpy(terminated | truncated).float().to(self.device))):
                columns[name].append(value)
        seen = torch.from_numpy(self.inputs(self.observation["observation"][:, :self.one_hand])).to(self.device)
        movers = torch.from_numpy(engine.current_player.astype(np.int64)).to(self.device)
        bootstrap = self._seat_values(self.network.trunk(seen.float()), movers)
        choices = self.head.stack(columns.pop("choices"), b)
        return Rollout(**{name: torch.stack(values) for name, values in columns.items()}, choices=choices,
                       bootstrap=bootstrap)

    def _count_hands(self, infos: dict[str, Any]) -> None:
        if "_hand_scores" in infos:
            ended_hands = infos["_hand_scores"]
            self.hand_scores.append(infos["hand_scores"][ended_hands])
            self.hand_learners.append(np.full(int(ended_hands.sum()), -1) if self.seats is None
                                      else self.seats.learner_seat[ended_hands].copy())

    # ------------------------------------------------------------------ 2. advantages, 3. update
    def learn(self, rollout: Rollout, learning_rate: float) -> dict[str, float]:
        """PPO's update on one rollout; the means of its losses and diagnostics."""
        config = self.config
        advantages, returns = seat_advantages(rollout.rewards, rollout.values, rollout.ended, rollout.movers,
                                              rollout.bootstrap, config.gamma, config.gae_lambda)
        def flat(name: str) -> torch.Tensor:  # (steps, games, ...) -> (steps x games, ...)
            return getattr(rollout, name).flatten(0, 1)

        seats = torch.arange(config.num_players, device=self.device)
        in_frame = (flat("movers")[:, None] + seats) % config.num_players
        columns = {"observations": flat("observations"), "actions": flat("actions"), "log_probs": flat("log_probs"),
                   "advantages": advantages.flatten(),
                   "returns": returns.flatten(0, 1).gather(1, in_frame),  # every seat's, in the mover's frame
                   "learns": flat("learns") & flat("chooses")}  # a forced move teaches the policy nothing
        for group in self.optimiser.param_groups:
            group["lr"] = learning_rate
        rows = columns["advantages"].shape[0]
        totals: dict[str, float] = {}
        batches = 0
        for _ in range(config.epochs):
            for batch in torch.randperm(rows, generator=self.generator, device=self.device).chunk(config.minibatches):
                # index_select, not [] indexing: on the CPU it gathers the rows up to 9x faster
                mini = {name: values.index_select(0, batch) for name, values in columns.items()}
                if self.value_only:  # the trunk and the policy stay as they are: the value layer alone learns
                    with torch.no_grad():  # no graph through the trunk: nothing behind the value layer learns
                        features = self.network.trunk(mini["observations"].float())
                    losses = {"value": 0.5 * (self.network.value(features) - mini["returns"]).pow(2).mean()}
                    self._step(config.value_weight * losses["value"])
                    batches += 1
                    totals["value"] = totals.get("value", 0.0) + float(losses["value"].detach())
                    continue
                features = self.network.trunk(mini["observations"].float())
                log_probs, entropy = self.head.evaluate(self.network, rollout.choices, features, batch, mini["actions"])
                losses = ppo_losses(log_probs, entropy, self.network.value(features), mini["log_probs"],
                                    mini["advantages"], mini["returns"], mini["learns"], config.clip)
                self._step(losses["policy"] + config.value_weight * losses["value"]
                           - config.entropy * losses["entropy"])
                batches += 1
                for name, value in losses.items():
                    totals[name] = totals.get(name, 0.0) + float(value.detach())
        return {name: total / batches for name, total in totals.items()}

    def descend(self, rows: int, learning_rate: float, loss_of: Callable[[torch.Tensor], torch.Tensor]) -> float:
        """`epochs` passes of `minibatches` minibatches over `rows` rows, an optimiser step on each
        minibatch's `loss_of(its row indices)` (gradients clipped to `max_grad_norm`); the mean loss.
        DMC's and DAgger's updates (one loss each; PPO's own keeps several figures)."""
        for group in self.optimiser.param_groups:
            group["lr"] = learning_rate
        total, batches = 0.0, 0
        for _ in range(self.config.epochs):
            for batch in torch.randperm(rows, generator=self.generator, device=self.device).chunk(
                    min(self.config.minibatches, rows)):
                loss = loss_of(batch)
                self._step(loss)
                total, batches = total + float(loss.detach()), batches + 1
        return total / batches

    def _step(self, loss: torch.Tensor) -> None:
        """One optimiser step on `loss`, gradients clipped to `max_grad_norm` (a weight the loss does not
        reach has no gradient, and Adam leaves it as it is)."""
        self.optimiser.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.network.parameters(), self.config.max_grad_norm)
        self.optimiser.step()

    def take_hands(self) -> dict[str, float]:
        """Mean pips per hand of the learner's seats and of the others, over the hands finished since
        the last call (in self-play every seat is the learner's: the others' are nan)."""
        if not self.hand_scores:
            return {"own_pips": float("nan"), "opponent_pips": float("nan"), "hands": 0}
        scores, learners = np.concatenate(self.hand_scores), np.concatenate(self.hand_learners)
        self.hand_scores, self.hand_learners = [], []
        if (learners < 0).all():
            return {"own_pips": float(scores.mean()), "opponent_pips": float("nan"), "hands": int(scores.shape[0])}
        own = scores[np.arange(scores.shape[0]), learners]
        others = (scores.sum(axis=1) - own) / (scores.shape[1] - 1)
        return {"own_pips": float(own.mean()), "opponent_pips": float(others.mean()), "hands": int(scores.shape[0])}

    def learner_steps(self, rollout: Rollout) -> int:
        """The learner's decisions in a rollout (every row in self-play)."""
        return int(rollout.learns.sum())
