"""Training the tile-location network (torch): supervised learning on labelled self-play positions.

The loss is the one the beliefs are scored by: minus the log-probability the tilted marginals
(:func:`baselines.inference.network.tilted`) give each hidden tile's true place, averaged over the
hidden tiles. The last layer starts at 0, so training starts from the uniform kind exactly and
every step is a change away from it. A share of the hands (whole hands) is held out; ten times an
epoch the held-out score is logged beside the uniform kind's on the same positions, and the weights
that scored best there are the ones returned (positions of one hand are alike, so a network
overfits the hands it has seen well before it has seen each position many times). After every
epoch, :func:`train` hands over what it carries to the next (:data:`RESUME_FORMAT`), so that a
killed run goes on from its last finished epoch and ends with the weights an unbroken run ends with.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from baselines.inference.data import Positions
from baselines.inference.network import BeliefWeights, input_size, network_inputs, output_size
from dominoes_env.core.config import GameConfig

#: The format of the state :func:`train` carries between epochs (``dominoes train beliefs``'s ``resume.pt``)
RESUME_FORMAT = "dominoes-beliefs-resume/1"


@dataclass(frozen=True)
class TrainingSettings:
    """How one network is trained (the defaults made the shipped weights: docs/inference.md)."""

    hidden: tuple[int, ...] = (512, 512)
    epochs: int = 4
    batch_size: int = 512
    learning_rate: float = 1e-3
    held_out: float = 0.05  # the share of hands held out for the curve
    seed: int = 0
    dropout: float = 0.0  # of each hidden layer's units, while training
    weight_decay: float = 0.0  # AdamW's, on every weight


def split_by_hand(positions: Positions, held_out: float) -> tuple[np.ndarray, np.ndarray]:
    """Row indices of the training hands and of the last `held_out` share of hands."""
    hands = positions.hands
    cut = int(np.ceil(int(hands.max()) + 1 - held_out * (int(hands.max()) + 1)))
    return np.flatnonzero(hands < cut), np.flatnonzero(hands >= cut)


def _model(config: GameConfig, settings: TrainingSettings) -> Any:
    """The network in torch: Linear -> ReLU (-> Dropout) per hidden layer, the last Linear at 0."""
    import torch

    sizes = [input_size(config), *settings.hidden, output_size(config)]
    layers: list[torch.nn.Module] = []
    for k in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[k], sizes[k + 1]))
        if k < len(sizes) - 2:
            layers.append(torch.nn.ReLU())
            if settings.dropout:
                layers.append(torch.nn.Dropout(settings.dropout))
    model = torch.nn.Sequential(*layers)
    last = model[-1]
    assert isinstance(last, torch.nn.Linear)
    torch.nn.init.zeros_(last.weight)
    torch.nn.init.zeros_(last.bias)
    return model


def _start_from(model: Any, init: BeliefWeights, config: GameConfig, settings: TrainingSettings) -> None:
    """Copy `init`'s layers into the torch model (its W is (inputs, outputs), torch's (outputs, inputs))."""
    import torch

    if init.config != config or tuple(init.hidden) != tuple(settings.hidden):
        raise ValueError(f"--init: a network of hidden {tuple(init.hidden)} for another table or of other widths than "
                         f"this run's (hidden {tuple(settings.hidden)}); give the run the same --hidden and table")
    linear = [layer for layer in model if isinstance(layer, torch.nn.Linear)]
    with torch.no_grad():
        for layer, (weight, bias) in zip(linear, init.layers):
            layer.weight.copy_(torch.from_numpy(np.ascontiguousarray(weight.T, dtype=np.float32)))
            layer.bias.copy_(torch.from_numpy(np.asarray(bias, dtype=np.float32)))


def train(config: GameConfig, positions: Positions, settings: TrainingSettings,
          log: Callable[[dict], None] = lambda row: None, init: BeliefWeights | None = None,
          resume: dict[str, Any] | None = None,
          save_resume: Callable[[dict[str, Any]], None] | None = None) -> BeliefWeights:
    """Train a network on `positions` of `config`'s table; `log(row)` after each epoch (and each
    tenth of one) with the held-out scores, and after each epoch `save_resume(state)` with what
    the training carries to the next. `init`: start from these weights (of this table and these
    hidden widths) instead of a network that is the uniform kind. `resume`: such a state, read
    back (:func:`baselines.learning.recorder.load_torch_resume`): training goes on after its epoch
    and ends with exactly the weights an unbroken run ends with (the same positions given; the
    dropout's draws come from torch's generator, whose state the file keeps).

    Raises:
        ValueError: `init` is of another table or other widths, or `resume` is not a state this
            training wrote.
    """
    run = _Training(config, positions, settings, init)
    done = run.restore(resume) if resume is not None else 0
    for epoch in range(done, settings.epochs):
        run.epoch(epoch, log)
        if save_resume is not None:
            save_resume(run.carried(epoch + 1))
    return run.best_weights()


class _Training:
    """One training run's network, optimiser, schedule, generators and best weights so far."""

    def __init__(self, config: GameConfig, positions: Positions, settings: TrainingSettings,
                 init: BeliefWeights | None) -> None:
        import torch

        torch.manual_seed(settings.seed)
        self.rng = np.random.default_rng(settings.seed)
        self.config, self.positions, self.settings = config, positions, settings
        self.model = _model(config, settings)
        if init is not None:
            _start_from(self.model, init, config, settings)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=settings.learning_rate,
                                           weight_decay=settings.weight_decay)
        self.training, self.held = split_by_hand(positions, settings.held_out)
        self.steps_per_epoch = max(1, self.training.shape[0] // settings.batch_size)
        self.schedule = torch.optim.lr_scheduler.CosineAnnealingLR(self.optimizer,
                                                                   settings.epochs * self.steps_per_epoch)
        self.best: tuple[float, dict[str, Any]] | None = None  # held-out score, the model's state
        self.started = time.perf_counter()

    def batch_loss(self, rows: np.ndarray) -> tuple[Any, Any, int]:
        """(minus the mean log p of the hidden tiles' true places, the uniform kind's, how many tiles)."""
        import torch

        config, positions = self.config, self.positions
        shape = (config.num_tiles, config.num_players + 1)
        inputs = torch.from_numpy(network_inputs(config, positions.observations[rows], positions.marginals[rows]))
        marginals = torch.from_numpy(positions.marginals[rows].astype(np.float32))
        places = torch.from_numpy(positions.places[rows].astype(np.int64))
        scores = self.model(inputs).reshape(-1, *shape)
        allowed = marginals > 0
        logits = torch.where(allowed, torch.log(torch.where(allowed, marginals, 1.0)) + scores, -torch.inf)
        hidden = allowed.any(dim=-1)
        target = places.clamp(min=0)
        chosen = torch.log_softmax(torch.where(hidden[..., None], logits, 0.0), dim=-1)
        given = chosen.gather(-1, target[..., None])[..., 0]
        uniform = torch.log(marginals.clamp(min=1e-12)).gather(-1, target[..., None])[..., 0]
        count = int(hidden.sum())
        return -(given * hidden).sum() / max(count, 1), -(uniform * hidden).sum() / max(count, 1), count

    def held_out_scores(self) -> tuple[float, float]:
        """The held-out mean log p of the network and of the uniform kind."""
        import torch

        self.model.eval()
        total = uniform_total = 0.0
        count = 0
        with torch.no_grad():
            for start in range(0, self.held.shape[0], 4096):
                loss, uniform, tiles = self.batch_loss(self.held[start:start + 4096])
                total += float(loss) * tiles
                uniform_total += float(uniform) * tiles
                count += tiles
        self.model.train()
        return -total / max(count, 1), -uniform_total / max(count, 1)

    def epoch(self, epoch: int, log: Callable[[dict], None]) -> None:
        """One pass over the training rows in a new order, measured and logged ten times."""
        settings, steps = self.settings, self.steps_per_epoch
        order = self.rng.permutation(self.training)
        running = []
        for k in range(steps):
            rows = np.sort(order[k * settings.batch_size:(k + 1) * settings.batch_size])
            loss, _, _ = self.batch_loss(rows)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self.schedule.step()
            running.append(float(loss.detach()))
            if (k + 1) % max(1, steps // 10) == 0 or k == steps - 1:
                network, uniform = self.held_out_scores()
                if self.best is None or network > self.best[0]:
                    self.best = (network, {key: value.clone() for key, value in self.model.state_dict().items()})
                log({"epoch": epoch + (k + 1) / steps, "positions": (epoch * steps + k + 1) * settings.batch_size,
                     "train_log_p": -float(np.mean(running)), "held_out_log_p": network,
                     "held_out_uniform_log_p": uniform, "best_held_out_log_p": self.best[0],
                     "seconds": time.perf_counter() - self.started})
                running = []

    def carried(self, done: int) -> dict[str, Any]:
        """What the run carries from its `done`-th epoch to the next: the network, the optimiser, the
        schedule, both generators (the order of the rows; torch's, for the dropout), the best so far."""
        import torch

        assert self.best is not None
        return {"epoch": done, "network": self.model.state_dict(), "optimiser": self.optimizer.state_dict(),
                "schedule": self.schedule.state_dict(), "order": json.dumps(self.rng.bit_generator.state),
                "torch_rng": torch.get_rng_state(), "best_score": self.best[0], "best": self.best[1],
                "seconds": time.perf_counter() - self.started}

    def restore(self, state: dict[str, Any]) -> int:
        """Put the run where :meth:`carried`'s `state` left it; the epochs done.

        Raises:
            ValueError: the state lacks a part, or its tensors do not fit this network (one line).
        """
        import torch

        try:
            self.model.load_state_dict(state["network"])
            self.optimizer.load_state_dict(state["optimiser"])
            self.schedule.load_state_dict(state["schedule"])
            self.rng.bit_generator.state = json.loads(state["order"])
            torch.set_rng_state(state["torch_rng"])
            self.best = (float(state["best_score"]), dict(state["best"]))
            self.started = time.perf_counter() - float(state["seconds"])
            return int(state["epoch"])
        except (KeyError, TypeError, ValueError, RuntimeError, AttributeError) as error:
            reason = (str(error).splitlines() or [type(error).__name__])[0]
            raise ValueError(f"the resume file is not one this training wrote: {reason}") from None

    def best_weights(self) -> BeliefWeights:
        """The weights that scored best on the held-out hands, as the beliefs read them."""
        import torch

        if self.best is not None:
            self.model.load_state_dict(self.best[1])
        weights = [(layer.weight.detach().numpy().T.astype(np.float32).copy(),
                    layer.bias.detach().numpy().astype(np.float32).copy())
                   for layer in self.model if isinstance(layer, torch.nn.Linear)]
        return BeliefWeights(self.config, tuple(self.settings.hidden), weights)
