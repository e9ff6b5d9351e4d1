"""How the network's policy chooses among a decision's legal moves: two heads, one interface.

- :class:`ActionHead` (``--policy-head actions``): a logit for every action of the table's
  action table, the illegal ones masked; CleanRL's masked PPO. One forward pass a decision, and
  the logits are computed for the legal moves alone (the same distribution as masking the
  whole table, at a fraction of its cost on the CPU).
- :class:`AfterstateHead` (``--policy-head afterstates``): every legal move is scored by the
  network from the observation its mover would have right after it
  (:func:`dominoes_env.core.afterstate.afterstates`: the rules play the move on what the mover
  sees), and the policy is the softmax of those scores. The network compares positions, not
  action numbers, so what makes a position good is learned once for every move that leads to
  it; a decision costs one pass over its legal moves' after-states (a forced move costs none:
  its probability is 1).

Each head samples a rollout's moves (:meth:`PolicyHead.sample`), keeps what the update needs
(its record, stacked over the rollout by :meth:`PolicyHead.stack`), and gives the
log-probabilities and entropies of any rows of the rollout under the current weights
(:meth:`PolicyHead.evaluate`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch

from baselines.ppo.features import NetworkInputs
from baselines.ppo.network import ActorCritic
from dominoes_env.core.afterstate import afterstates
from dominoes_env.core.config import GameConfig


class PolicyHead(Protocol):
    """What the trainer asks of a head (see the module docstring); behaviour cloning
    (:mod:`baselines.imitation.train`) also scores a batch's candidates itself."""

    inputs: NetworkInputs  #: the network's input of a vector (the after-states' and the observations' alike)
    with_afterstates: bool  #: whether it scores each move from its after-state (not from the observation's features)

    def candidates(self, observations: np.ndarray, masks: np.ndarray) -> Candidates: ...

    def scores(self, network: ActorCritic, features: torch.Tensor, positions: torch.Tensor, actions: torch.Tensor,
               vectors: torch.Tensor | None) -> torch.Tensor: ...

    def sample(self, network: ActorCritic, features: torch.Tensor, observations: np.ndarray, masks: np.ndarray,
               generator: torch.Generator) -> tuple[torch.Tensor, Any]: ...

    def log_probs(self, record: Any, actions: torch.Tensor) -> torch.Tensor: ...

    def stack(self, records: list[Any], num_games: int) -> Any: ...

    def evaluate(self, network: ActorCritic, store: Any, features: torch.Tensor, rows: torch.Tensor,
                 actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]: ...


def gumbel(shape: torch.Size | tuple[int, ...], generator: torch.Generator, device: torch.device) -> torch.Tensor:
    """Gumbel noise: argmax(logits + noise) is a sample of softmax(logits)."""
    uniform = torch.rand(shape, generator=generator, device=device).clamp_(min=1e-20)
    return -torch.log(-torch.log(uniform))


@dataclass
class Candidates:
    """The legal moves of the rows that have a choice, flattened (rows ascending)."""

    rows: np.ndarray  # (M,) the row of each candidate
    actions: np.ndarray  # (M,) its action
    vectors: np.ndarray | None  # (M, D) int8: its after-state (the after-state head's only)


class _CandidateHead:
    """What both heads share: the policy of a row with a choice is a softmax over one score for each
    of its legal moves; a forced move has probability 1 and no entropy, and costs nothing.

    Only the legal moves of the rows with a choice are ever scored (3.4 a row at 4 players
    double-nine, where the action table has 276 entries). A subclass says how a candidate is
    scored (:meth:`scores`).
    """

    with_afterstates = False  #: whether a candidate carries its after-state vector

    def __init__(self, config: GameConfig, device: torch.device, features: str) -> None:
        """`features`: what the network reads beside each after-state (:mod:`baselines.ppo.features`)."""
        self.config, self.device = config, device
        self.inputs = NetworkInputs(config, features)

    def scores(self, network: ActorCritic, features: torch.Tensor, positions: torch.Tensor, actions: torch.Tensor,
               vectors: torch.Tensor | None) -> torch.Tensor:
        """(M,) scores of candidates: `positions` index the rows of `features`, `actions` their moves."""
        raise NotImplementedError

    def candidates(self, observations: np.ndarray, masks: np.ndarray) -> Candidates:
        """Every legal move of each row with more than one (with its after-state, where the head reads it)."""
        choosing = np.flatnonzero(masks.sum(axis=1) > 1)
        within, actions = np.nonzero(masks[choosing])
        rows = choosing[within]
        vectors = (self.inputs(afterstates(observations, actions, self.config, rows=rows)[0])
                   if self.with_afterstates else None)
        return Candidates(rows, actions, vectors)

    def sample(self, network: ActorCritic, features: torch.Tensor, observations: np.ndarray, masks: np.ndarray,
               generator: torch.Generator) -> tuple[torch.Tensor, Any]:
        """The sampled actions (B,) and the step's record (the candidates and their scores)."""
        b = masks.shape[0]
        found = self.candidates(observations, masks)
        actions = torch.from_numpy(masks.argmax(axis=1)).to(self.device)  # the forced move where there is one
        rows = torch.from_numpy(found.rows).to(self.device)
        candidate_actions = torch.from_numpy(found.actions).to(self.device)
        scores = self.scores(network, features, rows, candidate_actions, _tensor(found.vectors, self.device))
        if found.rows.size:
            noisy = scores + gumbel(scores.shape, generator, self.device)
            best = torch.full((b,), -torch.inf, device=self.device).scatter_reduce(0, rows, noisy, "amax")
            picked = torch.nonzero(noisy == best[rows]).squeeze(1)
            actions[rows[picked]] = candidate_actions[picked]
        return actions, (found, scores)

    def log_probs(self, record: Any, actions: torch.Tensor) -> torch.Tensor:
        """The log-probability of each row's action (the sampled one, or an opponent's) under the record's policy."""
        found, scores = record
        log_probs = torch.zeros(actions.shape[0], device=self.device)
        if found.rows.size:
            rows = torch.from_numpy(found.rows).to(self.device)
            chosen = torch.from_numpy(found.actions).to(self.device) == actions[rows]
            log_softmax = scores - _segment_logsumexp(scores, rows, actions.shape[0])[rows]
            log_probs[rows[chosen]] = log_softmax[chosen]
        return log_probs

    def stack(self, records: list[Any], num_games: int) -> Any:
        """The rollout's candidates, found by flat row (step x B + game)."""
        found = [candidates for candidates, _ in records]
        vectors = [c.vectors for c in found] if self.with_afterstates else None
        return _CandidateStore([c.rows for c in found], [c.actions for c in found], vectors, num_games, self.device)

    def evaluate(self, network: ActorCritic, store: Any, features: torch.Tensor, rows: torch.Tensor,
                 actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Log-probabilities of `actions` in `rows` (of the stacked rollout) and the policy's entropies there."""
        index, segments = store.of_rows(rows)
        log_probs = torch.zeros(rows.shape[0], device=self.device)
        entropy = torch.zeros(rows.shape[0], device=self.device)
        if index.numel():
            vectors = store.vectors.index_select(0, index) if store.vectors is not None else None
            candidate_actions = store.actions.index_select(0, index)
            scores = self.scores(network, features, segments, candidate_actions, vectors)
            log_softmax = scores - _segment_logsumexp(scores, segments, rows.shape[0]).index_select(0, segments)
            chosen = torch.nonzero(candidate_actions == actions.index_select(0, segments)).squeeze(1)
            log_probs = log_probs.index_add(0, segments[chosen], log_softmax.index_select(0, chosen))
            entropy = entropy.index_add(0, segments, -(log_softmax.exp() * log_softmax))
        return log_probs, entropy


class ActionHead(_CandidateHead):
    """A logit per action of the table (the illegal ones never count): a candidate's score is its
    action's logit, computed for the legal moves alone."""

    def scores(self, network: ActorCritic, features: torch.Tensor, positions: torch.Tensor, actions: torch.Tensor,
               vectors: torch.Tensor | None) -> torch.Tensor:
        return network.candidate_logits(features.index_select(0, positions), actions)


class AfterstateHead(_CandidateHead):
    """A score per legal move, from its after-state."""

    with_afterstates = True

    def scores(self, network: ActorCritic, features: torch.Tensor, positions: torch.Tensor, actions: torch.Tensor,
               vectors: torch.Tensor | None) -> torch.Tensor:
        assert vectors is not None
        return network.afterstate_scores(vectors.float())


def _tensor(array: np.ndarray | None, device: torch.device) -> torch.Tensor | None:
    return None if array is None else torch.from_numpy(array).to(device)


class _CandidateStore:
    """A rollout's candidates by flat row (step x B + game), for the update's minibatches."""

    def __init__(self, rows: list[np.ndarray], actions: list[np.ndarray], vectors: list[np.ndarray] | None,
                 num_games: int, device: torch.device) -> None:
        self.device = device
        self.actions = torch.from_numpy(np.concatenate(actions)).to(device)
        self.vectors = None if vectors is None else torch.from_numpy(np.concatenate(vectors)).to(device)
        flat = np.concatenate([step * num_games + step_rows for step, step_rows in enumerate(rows)])
        count = np.bincount(flat, minlength=len(rows) * num_games)
        #: each flat row's first candidate and its number of candidates (0 for a forced move)
        self.first = torch.from_numpy(np.cumsum(count) - count).to(device)
        self.count = torch.from_numpy(count).to(device)

    def of_rows(self, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The candidates of `rows` (flat indices): their indices, and the position in `rows` each belongs to."""
        counts = self.count.index_select(0, rows)
        segments = torch.repeat_interleave(torch.arange(rows.shape[0], device=self.device), counts)
        before = torch.repeat_interleave(torch.cumsum(counts, 0) - counts, counts)
        starts = torch.repeat_interleave(self.first.index_select(0, rows), counts)
        return starts + torch.arange(segments.shape[0], device=self.device) - before, segments


def _segment_logsumexp(values: torch.Tensor, segments: torch.Tensor, size: int) -> torch.Tensor:
    """log(sum(exp(values))) within each segment (values of segment k where segments == k); -inf where empty."""
    top = torch.full((size,), -torch.inf, device=values.device).scatter_reduce(0, segments, values.detach(), "amax")
    shifted = (values - top[segments]).exp()
    sums = torch.zeros(size, device=values.device).index_add(0, segments, shifted)
    return top + sums.log()


HEADS: dict[str, Callable[[GameConfig, torch.device, str], PolicyHead]] = {"actions": ActionHead,
                                                                       "afterstates": AfterstateHead}
