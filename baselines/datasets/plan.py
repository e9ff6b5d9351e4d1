"""What a dataset holds, fixed before its first hand: the table, who plays, the hands and the seeds.

A plan decides every hand: hand h is dealt from a seed drawn from the plan's seed, and the
players of a chunk of hands are built from seeds drawn the same way, so two runs of one plan
write the same episodes (policies that read a clock aside). That is what lets a killed run
resume: the chunks already written are kept, and only a plan equal to theirs may add to them.
Its JSON form (:meth:`DatasetPlan.to_json`) goes into the dataset's metadata and beside a
partial dataset, where it is compared, never parsed back.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

import numpy as np

import dominoes_env
from baselines.advice import chosen_specs
from baselines.policies import registry, specs
from baselines.policies.specs import PolicySpec
from dominoes_env.core import validation
from dominoes_env.core.config import GameConfig, describe_table, table_arguments
from dominoes_env.env import DominoesEnv
from dominoes_env.single_agent import SingleAgentEnv

#: Most hands one dataset holds (Minari's HDF5 takes about 130 KB a hand at 4 players, double-9: 130 GB).
MAX_HANDS = 1_000_000
#: Hands played between two saves of a run: what a killed run loses at most.
CHUNK_HANDS = 100
#: The reward the episodes carry: minus the pips left in the seat's hand (the envs' default).
REWARD = "score"
#: The version of the ``dominoes_env`` block of the metadata; a reader refuses any other.
FORMAT = 1


@dataclass(frozen=True)
class DatasetPlan:
    """One dataset's games: `player` in every seat, or in one seat (seat h mod n in hand h)
    against `opponents` (opponent k sits k seats after it, as in the single-agent view)."""

    config: GameConfig
    player: PolicySpec
    opponents: tuple[PolicySpec, ...]  #: empty: the player in every seat
    hands: int
    seed: int
    chunk_hands: int = CHUNK_HANDS

    @property
    def chunks(self) -> int:
        return -(-self.hands // self.chunk_hands)

    def chunk_range(self, chunk: int) -> range:
        """The hands of a chunk, numbered from 0 over the whole dataset."""
        return range(chunk * self.chunk_hands, min(self.hands, (chunk + 1) * self.chunk_hands))

    def recorded_seats(self, hand: int) -> tuple[int, ...]:
        """The seats whose episodes are kept: every seat, or the player's."""
        n = self.config.num_players
        return tuple(range(n)) if not self.opponents else (hand % n,)

    def seated(self, hand: int) -> list[PolicySpec]:
        """Who sits in each seat in hand `hand`."""
        n = self.config.num_players
        if not self.opponents:
            return [self.player] * n
        seat = hand % n
        return [self.player if s == seat else self.opponents[(s - seat) % n - 1] for s in range(n)]

    def chunk_seeds(self, chunk: int) -> tuple[np.ndarray, np.ndarray]:
        """(the deal's seed of each hand of the chunk, one seed per seat for its players): drawn from
        the plan's seed and the chunk's number alone, so a chunk is the same whenever it is played."""
        deals, players = np.random.SeedSequence(self.seed, spawn_key=(chunk,)).spawn(2)
        deal_seeds = np.random.default_rng(deals).integers(0, 2**31 - 1, size=self.chunk_hands)
        player_seeds = np.array([s.generate_state(1, np.uint64)[0] for s in players.spawn(self.config.num_players)])
        return deal_seeds[:len(self.chunk_range(chunk))], player_seeds

    def describe(self) -> str:
        """E.g. "td_lambda in every seat of 4 players, double-9"."""
        if not self.opponents:
            return f"{self.player.label} in every seat of {describe_table(self.config)}"
        return f"{self.player.label} against {', '.join(s.label for s in self.opponents)} at " \
               f"{describe_table(self.config)}"

    def command(self, dataset_id: str) -> str:
        """The command line that writes this dataset again."""
        opponents = "".join(f" {shlex.quote(spec.label)}" for spec in self.opponents)
        return (f"dominoes dataset {shlex.quote(self.player.label)}{table_arguments(self.config)} --hands {self.hands} "
                f"--seed {self.seed} --dataset-id {dataset_id}" + (f" --opponents{opponents}" if opponents else ""))

    def env_kwargs(self) -> dict[str, Any]:
        """The single-agent view whose episodes these are, as ``SingleAgentEnv(**kwargs)`` (and
        Gymnasium's ``make``) take it: the table, one hand, the player's opponents by name."""
        n = self.config.num_players
        others = [spec.label for spec in self.opponents] or [self.player.label] * (n - 1)
        return {"opponents": others, **self.config.options(), "num_hands": 1, "reward": REWARD}

    def to_json(self) -> dict[str, Any]:
        """Everything that decides the episodes, and the versions that read them the same way."""
        return {"format": FORMAT, "table": self.config.options(), "table_words": describe_table(self.config),
                "player": self.player.label, "opponents": [spec.label for spec in self.opponents] or None,
                "hands": self.hands, "seed": self.seed, "chunk_hands": self.chunk_hands, "reward": REWARD,
                "env": {"dominoes_env": dominoes_env.__version__, "aec_env": DominoesEnv.metadata["name"],
                        "pettingzoo_id": dominoes_env.ENV_ID, "gymnasium_id": dominoes_env.GYMNASIUM_ID,
                        "view": f"{SingleAgentEnv.__module__}.{SingleAgentEnv.__qualname__}"}}


def make_plan(config: GameConfig, player: str, opponents: list[str] | None, hands: int, seed: int,
              chunk_hands: int = CHUNK_HANDS) -> DatasetPlan:
    """A plan from what the command line gives, every policy built once so that a bad name,
    parameter or checkpoint is refused before any hand.

    Raises:
        ValueError: one line naming the bad value (a player with copies, an opponent count that does
            not fill the table, a player that sees every hand, a count out of range).
    """
    hands = validation.integer("--hands", hands, 1, MAX_HANDS)
    seed = validation.integer("--seed", seed, 0, validation.SEED_LIMIT - 1)
    chunk_hands = validation.integer("chunk_hands", chunk_hands, 1, MAX_HANDS)
    spec, copies = specs.parse(player)
    if copies != 1:
        raise ValueError(f"PLAYER {player!r}: one player, without :COPIES (it sits in every seat unless "
                         f"--opponents are named)")
    others = tuple(chosen_specs(opponents, config)) if opponents else ()
    for chosen in dict.fromkeys((spec, *others)):
        registry.refuse_seeing_every_hand(chosen, "in dominoes dataset (which records what a seat sees)")
        registry.check(chosen, config)
    return DatasetPlan(config, spec, others, hands, seed, chunk_hands)

