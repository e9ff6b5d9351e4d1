"""Behaviour cloning (torch): the ppo network fitted to a dataset's moves.

The network is PPO's own (:class:`~baselines.ppo.network.ActorCritic`, either policy head of
:mod:`baselines.ppo.heads`), so the clone is a ``ppo`` weights file: ``ppo@FILE`` plays it and
``dominoes train ppo --init FILE`` improves it by self-play. The policy's loss is the
cross-entropy of the move played among the legal moves (a forced move teaches nothing and costs
nothing); the value head learns, beside it, what the hand paid every seat (scaled as PPO scales
rewards), so that PPO starts with a critic that already knows the game. A share of the hands is
held out; after every epoch the held-out loss and accuracy are measured, and the weights that did
best there are the ones kept. After every epoch, too, :func:`clone` hands over what it carries to
the next (:data:`RESUME_FORMAT`), so that a killed run goes on from its last finished epoch and
ends with exactly the weights an unbroken run ends with.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from baselines.imitation.demonstrations import Demonstrations
from baselines.imitation.settings import CloningSettings
from baselines.ppo.config import PPOConfig
from baselines.ppo.heads import HEADS, PolicyHead
from baselines.ppo.network import ActorCritic
from baselines.ppo.weights import PPOWeights

#: The format of the state :func:`clone` carries between epochs (``dominoes train bc``'s ``resume.pt``)
RESUME_FORMAT = "dominoes-bc-resume/1"
#: Rows per pass when measuring (no gradients): larger than a training batch, bounded in memory.
MEASURE_ROWS = 8192


class Fit:
    """The network, its head and its optimiser, and the losses of a batch of rows."""

    def __init__(self, config: PPOConfig, settings: CloningSettings, data: Demonstrations,
                 init: PPOWeights | None = None) -> None:
        torch.manual_seed(settings.seed)
        self.config, self.settings, self.data = config, settings, data
        self.network = ActorCritic(config)
        if init is not None:
            self.network.load_named_weights(dict(init.weights))
        self.head: PolicyHead = HEADS[config.policy_head](config.game, torch.device("cpu"), config.features)
        self.optimiser = torch.optim.AdamW(self.network.parameters(), lr=settings.learning_rate,
                                           weight_decay=settings.weight_decay)

    def losses(self, rows: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, int, int]:
        """(the policy's mean cross-entropy over the rows with a choice, the value's mean squared error,
        how many of those rows the network's most probable move matches, how many rows had a choice)."""
        data = self.data
        observations, masks = data.observations[rows], data.masks[rows]
        actions = torch.from_numpy(data.actions[rows])
        features = self.network.trunk(torch.from_numpy(self.head.inputs(observations)).float())
        found = self.head.candidates(observations, masks)
        candidate_rows = torch.from_numpy(found.rows)
        candidate_actions = torch.from_numpy(found.actions)
        vectors = None if found.vectors is None else torch.from_numpy(found.vectors)
        scores = self.head.scores(self.network, features, candidate_rows, candidate_actions, vectors)
        choosing = torch.from_numpy(masks.sum(axis=1) > 1)
        log_probs = self.head.log_probs((found, scores), actions)
        policy_loss = -log_probs[choosing].mean() if bool(choosing.any()) else scores.sum() * 0.0
        targets = torch.from_numpy(data.values[rows]) * self.config.reward_scale
        value_loss = torch.nn.functional.mse_loss(self.network.value(features), targets)
        correct = _matches(scores.detach(), candidate_rows, candidate_actions, actions, len(rows))
        return policy_loss, value_loss, correct, int(choosing.sum())

    def step(self, rows: np.ndarray, learning_rate: float) -> tuple[float, float, int, int]:
        """One optimiser step on `rows`; the batch's figures."""
        for group in self.optimiser.param_groups:
            group["lr"] = learning_rate
        policy_loss, value_loss, correct, choosing = self.losses(rows)
        self.optimiser.zero_grad(set_to_none=True)
        (policy_loss + self.settings.value_weight * value_loss).backward()
        self.optimiser.step()
        return float(policy_loss.detach()) * choosing, float(value_loss.detach()) * len(rows), correct, choosing

    @torch.no_grad()
    def measure(self, rows: np.ndarray) -> dict[str, float]:
        """Mean cross-entropy, accuracy (on the rows with a choice) and value error of `rows`."""
        self.network.eval()
        totals = np.zeros(4)
        for start in range(0, len(rows), MEASURE_ROWS):
            part = rows[start:start + MEASURE_ROWS]
            policy_loss, value_loss, correct, choosing = self.losses(part)
            totals += (float(policy_loss) * choosing, float(value_loss) * len(part), correct, choosing)
        self.network.train()
        return _figures(totals, len(rows))

    def weights(self, info: dict[str, Any] | None = None) -> PPOWeights:
        return PPOWeights(self.network.named_weights(), self.config, info or {})


def _matches(scores: torch.Tensor, rows: torch.Tensor, actions: torch.Tensor, played: torch.Tensor,
             size: int) -> int:
    """How many rows' best-scored candidate is the move played (rows with a choice only)."""
    if rows.numel() == 0:
        return 0
    best = torch.full((size,), -torch.inf).scatter_reduce(0, rows, scores, "amax")
    chosen = actions == played.index_select(0, rows)
    return int((scores[chosen] >= best.index_select(0, rows)[chosen]).sum())


def _figures(totals: np.ndarray, rows: int) -> dict[str, float]:
    policy_sum, value_sum, correct, choosing = totals
    return {"loss": policy_sum / max(choosing, 1), "accuracy": correct / max(choosing, 1),
            "value_loss": value_sum / max(rows, 1)}


def clone(data: Demonstrations, config: PPOConfig, settings: CloningSettings,
          report: Callable[[dict[str, Any], PPOWeights], None], progress: bool = False,
          init: PPOWeights | None = None, resume: dict[str, Any] | None = None,
          save_resume: Callable[[dict[str, Any]], None] | None = None) -> tuple[PPOWeights, dict[str, Any]]:
    """Fit the network to `data`'s moves (from `init`'s weights, where given: checked to be of `config`'s
    network by :func:`baselines.ppo.run.initial_weights`); after each epoch `report(row, weights)`, then
    `save_resume(state)` with what the loop carries to the next epoch. `resume`: such a state, read
    back (:func:`baselines.learning.recorder.load_torch_resume`): the fit goes on after its epoch and
    ends with exactly the weights an unbroken fit ends with.
    Returns the weights of the epoch with the lowest held-out loss (the last epoch's with no hand
    held out) and that epoch's row.

    Raises:
        ValueError: no hand is left to train on, `resume` is not a state this fit wrote, or a history
            feature in `config` (one line).
    """
    if config.history != "none":
        raise ValueError(f"behaviour cloning fits the observation alone: history={config.history!r} is read by "
                         f"dominoes train dmc only")
    fit = Fit(config, settings, data, init)
    training, held = data.split(settings.held_out, settings.seed)
    if training.size == 0:
        raise ValueError(f"no hand is left to train on with --held-out {settings.held_out}")
    order = np.random.default_rng(settings.seed)
    batches = math.ceil(training.size / settings.batch_size)
    total_steps = settings.epochs * batches
    done, best = _restore(resume, fit, order) if resume is not None else (0, None)
    begun = time.perf_counter()
    for epoch in range(done + 1, settings.epochs + 1):
        totals = np.zeros(4)
        shuffled = order.permutation(training)
        for k, start in enumerate(_bar(range(0, training.size, settings.batch_size), progress, f"epoch {epoch}")):
            step = (epoch - 1) * batches + k
            rate = settings.learning_rate * 0.5 * (1 + math.cos(math.pi * step / total_steps))
            totals += fit.step(shuffled[start:start + settings.batch_size], rate)
        row = {"epoch": epoch, "rows": epoch * training.size, **_prefixed("train", _figures(totals, training.size))}
        if held.size:
            row.update(_prefixed("held_out", fit.measure(held)))
        row["seconds"] = time.perf_counter() - begun
        weights = fit.weights()
        report(row, weights)
        score = row.get("held_out_loss", -epoch)
        if best is None or score < best[0]:
            best = (score, weights, row)
        if save_resume is not None:
            save_resume(_carried(epoch, fit, order, best))
    assert best is not None
    return best[1], best[2]


#: The best epoch so far: (its held-out loss, its weights, its row)
Best = tuple[float, PPOWeights, dict[str, Any]]


def _carried(epoch: int, fit: Fit, order: np.random.Generator, best: Best) -> dict[str, Any]:
    """What the fit carries from `epoch` to the next: the network, the optimiser, the generator that
    orders the rows, torch's (nothing draws from it after the initial weights: kept all the same),
    and the best epoch so far."""
    score, weights, row = best
    return {"epoch": epoch, "network": fit.network.state_dict(), "optimiser": fit.optimiser.state_dict(),
            "order": json.dumps(order.bit_generator.state), "torch_rng": torch.get_rng_state(),
            "best_score": float(score),
            "best_row": {key: value.item() if isinstance(value, np.generic) else value for key, value in row.items()},
            "best_weights": {name: torch.from_numpy(array) for name, array in weights.weights.items()}}


def _restore(state: dict[str, Any], fit: Fit, order: np.random.Generator) -> tuple[int, Best]:
    """Put the fit where :func:`_carried`'s `state` left it: (the epochs done, the best so far).

    Raises:
        ValueError: the state lacks a part, or its tensors do not fit this network (one line).
    """
    try:
        fit.network.load_state_dict(state["network"])
        fit.optimiser.load_state_dict(state["optimiser"])
        order.bit_generator.state = json.loads(state["order"])
        torch.set_rng_state(state["torch_rng"])
        weights = {name: tensor.numpy() for name, tensor in state["best_weights"].items()}
        best = (float(state["best_score"]), PPOWeights(weights, fit.config, {}), dict(state["best_row"]))
        return int(state["epoch"]), best
    except (KeyError, TypeError, ValueError, RuntimeError, AttributeError) as error:
        reason = (str(error).splitlines() or [type(error).__name__])[0]
        raise ValueError(f"the resume file is not one this fit wrote: {reason}") from None


def _prefixed(prefix: str, figures: dict[str, float]) -> dict[str, float]:
    return {f"{prefix}_{name}": value for name, value in figures.items()}


def _bar(steps: range, progress: bool, label: str) -> Any:
    if not progress:
        return steps
    from tqdm import tqdm

    return tqdm(steps, desc=label, unit=" batches", leave=False)
