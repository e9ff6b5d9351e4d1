"""Expert iteration for the champion's network (torch; acting never imports this module).

Each generation: self-play (:mod:`baselines.champion.selfplay`) with the current weights on
local worker processes or Ray tasks, then ``epochs`` passes of Adam over the replay buffer
(the latest ``replay_generations`` generations) on two losses:

- value: the squared error between V of the after-state of every tile move and the pips
  its mover held when the hand ended (in tens of pips: Monte Carlo targets of the search's
  own play);
- policy: the cross-entropy between the root's visit counts and the softmax of minus V over
  the after-states of the legal moves (the prior the search uses), at ``temperature``.

After every generation the weights, the optimizer's state, the replay buffer's records and
``progress.json`` are written into the run's directory; a run started again with the same
configuration and directory resumes after the last finished generation and continues the
same run (the same weights as one that was never stopped). Deterministic for a seed: every
draw comes from generators seeded by (seed, generation, block), torch runs on one thread,
and tasks come back in order whatever the backend.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from baselines.champion.config import ChampionConfig
from baselines.champion.policy import ChampionPolicy
from baselines.champion.selfplay import SelfPlayRecords, SelfPlayTask, join_offsets, play_block
from baselines.harness.parallel import ordered_map
from baselines.learning.files import write_atomically
from baselines.learning.run import TrainingLog, evaluate_against
from baselines.learning.tables import HandRecord
from baselines.td_lambda.checkpoint import Checkpoint, load_checkpoint, save_checkpoint
from baselines.td_lambda.features import make_features
from baselines.td_lambda.network import ValueNetwork, build_network
from dominoes_env.core.afterstate import afterstates

PROGRESS = "progress.json"
OPTIMIZER = "optimizer.pt"
LATEST = "latest.safetensors"
REPLAY = "replay"
PIP_SCALE = 10.0  #: the value loss is in tens of pips (squared), near the size of the policy loss


@dataclass(frozen=True)
class Parallelism:
    """Where self-play runs: it changes the speed, never the result."""

    backend: str = "local"
    workers: int = 1
    ray_address: str | None = None


# --------------------------------------------------------------------------- the samples
@dataclass
class Samples:
    """One generation's records as network inputs (float32 features)."""

    move_features: np.ndarray  # (m, F): after-states of tile moves that did not end the hand
    move_targets: np.ndarray  # (m,): the mover's final pips
    candidate_features: np.ndarray  # (c, F): after-states of every legal move of every searched decision
    candidate_exact: np.ndarray  # (c,): the exact pips where the move ends the hand, NaN elsewhere
    offsets: np.ndarray  # (k + 1,): decision j's candidates are rows offsets[j]:offsets[j + 1]
    visit_shares: np.ndarray  # (c,): each candidate's share of its decision's visits

    @classmethod
    def of(cls, records: SelfPlayRecords, config: ChampionConfig) -> Samples:
        features = make_features(config.network_config())
        game = config.game
        vectors, ends = afterstates(records.move_observations, records.move_actions, game)
        keep = ~ends
        rows = np.repeat(np.arange(records.search_observations.shape[0]), np.diff(records.search_offsets))
        candidates, candidate_ends = afterstates(records.search_observations, records.search_actions, game, rows=rows)
        exact = np.full(candidates.shape[0], np.nan, dtype=np.float32)
        exact[candidate_ends] = features.own_pips(candidates[candidate_ends])
        visits = records.search_visits.astype(np.float64)
        totals = np.add.reduceat(visits, records.search_offsets[:-1]) if visits.size else visits
        shares = (visits / np.repeat(totals, np.diff(records.search_offsets))).astype(np.float32)
        return cls(features(vectors[keep]), records.move_final_pips[keep].astype(np.float32), features(candidates),
                   exact, records.search_offsets.copy(), shares)

    @classmethod
    def concatenate(cls, parts: list[Samples]) -> Samples:
        return cls(np.concatenate([p.move_features for p in parts]), np.concatenate([p.move_targets for p in parts]),
                   np.concatenate([p.candidate_features for p in parts]),
                   np.concatenate([p.candidate_exact for p in parts]), join_offsets([p.offsets for p in parts]),
                   np.concatenate([p.visit_shares for p in parts]))

    @property
    def decisions(self) -> int:
        return int(self.offsets.shape[0] - 1)


# --------------------------------------------------------------------------- the update
def policy_loss(network: ValueNetwork, samples: Samples, decisions: np.ndarray, temperature: float) -> torch.Tensor:
    """Cross-entropy of the visit shares against softmax(-V / temperature) over each decision's moves."""
    starts, stops = samples.offsets[decisions], samples.offsets[decisions + 1]
    counts = stops - starts
    width = int(counts.max())
    rows = np.concatenate([np.arange(a, b) for a, b in zip(starts.tolist(), stops.tolist())])
    values = network(torch.from_numpy(samples.candidate_features[rows]))
    exact = torch.from_numpy(samples.candidate_exact[rows])
    values = torch.where(torch.isnan(exact), values, exact)
    slot = np.concatenate([np.arange(c) for c in counts.tolist()])
    which = np.repeat(np.arange(decisions.shape[0]), counts)
    logits = torch.full((decisions.shape[0], width), -torch.inf)
    logits[which, slot] = -values / temperature
    targets = torch.zeros((decisions.shape[0], width))
    targets[which, slot] = torch.from_numpy(samples.visit_shares[rows])
    log_policy = torch.log_softmax(logits, dim=1)
    return -(targets * torch.where(targets > 0, log_policy, torch.zeros_like(log_policy))).sum(dim=1).mean()


def value_loss(network: ValueNetwork, samples: Samples, moves: np.ndarray) -> torch.Tensor:
    predicted = network(torch.from_numpy(samples.move_features[moves]))
    return (((predicted - torch.from_numpy(samples.move_targets[moves])) / PIP_SCALE) ** 2).mean()


def train_generation(network: ValueNetwork, optimizer: torch.optim.Optimizer, samples: Samples,
                     config: ChampionConfig, rng: np.random.Generator) -> dict[str, float]:
    """`epochs` passes over the searched decisions (each step: a batch of decisions and as many moves)."""
    value_losses, policy_losses = [], []
    moves = samples.move_targets.shape[0]
    for _ in range(config.epochs):
        order = rng.permutation(samples.decisions)
        for start in range(0, order.shape[0], config.batch_size):
            decisions = np.sort(order[start:start + config.batch_size])
            batch_moves = np.asarray(rng.integers(0, moves, size=decisions.shape[0]))
            v = value_loss(network, samples, batch_moves)
            p = policy_loss(network, samples, decisions, config.temperature)
            loss = v + config.policy_weight * p
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            value_losses.append(float(v.detach()))
            policy_losses.append(float(p.detach()))
    if not torch.isfinite(network.theta).all():
        raise FloatingPointError("the champion's weights went non-finite: lower --learning-rate")
    return {"value_loss": float(np.mean(value_losses)) if value_losses else float("nan"),
            "policy_loss": float(np.mean(policy_losses)) if policy_losses else float("nan")}


# --------------------------------------------------------------------------- the run's files
def save_records(path: Path, records: SelfPlayRecords) -> None:
    buffer = _npz(**{name: getattr(records, name) for name in SelfPlayRecords.__dataclass_fields__})
    write_atomically(path, buffer)


def load_records(path: Path) -> SelfPlayRecords:
    with np.load(path) as data:
        return SelfPlayRecords(**{name: data[name] for name in SelfPlayRecords.__dataclass_fields__})


def _npz(**arrays: Any) -> bytes:
    import io

    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def read_progress(out: Path, config: ChampionConfig) -> int:
    """Generations already finished in `out` by a run of this configuration (0: a new run). A run
    may be extended: only `hands` may differ, where the earlier run ended on a whole generation.

    Raises:
        ValueError: `out` holds a run of another configuration, or one longer than this.
    """
    path = out / PROGRESS
    if not path.exists():
        return 0
    try:
        progress = json.loads(path.read_text())
        earlier = ChampionConfig.from_dict(progress["config"])
        done, hands = int(progress["generations"]), int(progress["hands"])
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{path} is not a champion run's progress file ({error}); use another "
                         f"--out") from None
    if replace(earlier, hands=config.hands) != config:
        different = [name for name in ChampionConfig.__dataclass_fields__
                     if name != "hands" and getattr(earlier, name) != getattr(config, name)]
        raise ValueError(f"{out} holds a champion run of other settings ({', '.join(different)}); resume it with "
                         f"the same options or use another --out")
    if hands > config.hands or (hands != done * config.generation_hands and hands != config.hands):
        raise ValueError(f"{out} holds a champion run of {hands} hands; --hands may only extend a run that ended on "
                         f"a whole generation ({config.generation_hands} hands)")
    return done


# --------------------------------------------------------------------------- the run
def train(config: ChampionConfig, out: Path, log: TrainingLog | None = None, initial: Checkpoint | None = None,
          parallelism: Parallelism = Parallelism(),
          save_weights: Callable[[Path, np.ndarray, dict[str, Any]], Any] | None = None) -> np.ndarray:
    """Run (or resume) expert iteration into `out`; return the final weights.

    Raises:
        ValueError: `out` holds another run.
        FloatingPointError: the weights diverged.
    """
    log = log or TrainingLog()
    out.mkdir(parents=True, exist_ok=True)
    (out / REPLAY).mkdir(exist_ok=True)
    done = read_progress(out, config)
    torch.manual_seed(config.seed)
    torch.set_num_threads(1)
    network_config = config.network_config()
    save = save_weights or (lambda path, theta, info: save_checkpoint(path, theta, network_config, info))
    if done:
        network = build_network(network_config, load_checkpoint(out / LATEST).theta)
    else:
        network = build_network(network_config, None if initial is None else initial.theta)
    optimizer = torch.optim.Adam(network.parameters(), lr=config.learning_rate)
    if done:
        optimizer.load_state_dict(torch.load(out / OPTIMIZER, weights_only=True))
    replay = [Samples.of(load_records(out / REPLAY / f"{g:05d}.npz"), config)
              for g in range(max(0, done - config.replay_generations), done)]
    for generation in range(done, config.generations):
        hands = min(config.generation_hands, config.hands - generation * config.generation_hands)
        blocks = [min(config.parallel_hands, hands - start) for start in range(0, hands, config.parallel_hands)]
        theta = network.weights()
        tasks = [SelfPlayTask(theta, config.to_json(), generation, block, size) for block, size in enumerate(blocks)]
        tick = time.perf_counter()
        parts = []
        for part in ordered_map(play_block, tasks, parallelism.backend, parallelism.workers, parallelism.ray_address):
            parts.append(part)
            if log.on_hand is not None:
                for scores in part.hand_scores:
                    log.on_hand(HandRecord(scores, tuple(range(config.num_players))))
        records = SelfPlayRecords.concatenate(parts)
        played = time.perf_counter() - tick
        save_records(out / REPLAY / f"{generation:05d}.npz", records)
        replay = [*replay, Samples.of(records, config)][-config.replay_generations:]
        losses = train_generation(network, optimizer, Samples.concatenate(replay), config,
                                  np.random.default_rng([config.seed, generation, 1]))
        finished = (generation + 1) * config.generation_hands if generation + 1 < config.generations else config.hands
        info = {"hands_trained": finished, "generations": generation + 1}
        save(out / LATEST, network.weights(), info)
        torch.save(optimizer.state_dict(), out / OPTIMIZER)
        _forget(out, generation - config.replay_generations)
        write_atomically(out / PROGRESS, json.dumps({"config": config.to_dict(), "generations": generation + 1,
                                                     "hands": finished}).encode())
        if log.on_progress is not None:
            log.on_progress({"hands": finished, "stage": "self", "own_pips": float(records.hand_scores.mean()),
                             "opponent_pips": float("nan"), **losses,
                             "hands_per_s": hands / max(played, 1e-9)})
        if _evaluation_due(config, generation) and log.on_evaluation is not None:
            player_weights = Checkpoint(network.weights(), network_config, info)
            for opponent in config.eval_opponents:
                player = ChampionPolicy(config.game, seed=config.seed, simulations=config.simulations,
                                        worlds=config.worlds, exploration=config.exploration,
                                        temperature=config.temperature, checkpoint=player_weights)
                log.on_evaluation(finished, opponent, evaluate_against(player, config, opponent, config.eval_hands),
                                  network.weights())
    return network.weights()


def _forget(out: Path, generation: int) -> None:
    """Remove a generation's records once no replay buffer needs them."""
    if generation >= 0:
        (out / REPLAY / f"{generation:05d}.npz").unlink(missing_ok=True)


def _evaluation_due(config: ChampionConfig, generation: int) -> bool:
    if generation + 1 == config.generations:
        return True
    if config.eval_every == 0:
        return False
    before = generation * config.generation_hands // config.eval_every
    after = (generation + 1) * config.generation_hands // config.eval_every
    return after > before
