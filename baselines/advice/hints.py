"""Advice for a person at the table: the opponent to seat by default and the hint giver.

``dominoes play`` (the terminal) and ``dominoes serve`` (the browser) seat the same default
opponent and give the same hints: what the strongest shipped players would play, and
td_lambda's predicted pips left at the end of the hand after each legal move. The champion,
which reasons about the tiles it cannot see, follows every observation of the person's
(:meth:`Hints.follow`), so its hint is the move it would play in the person's seat. The same
observations feed the project's best beliefs about the hidden tiles (:mod:`baselines.inference`):
a card counter's view of the tiles each opponent most likely holds (:meth:`Hints.holdings`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from baselines.inference import make_beliefs
from baselines.policies import registry, specs
from baselines.policies.registry import make_policy, policy_class
from dominoes_env.core.config import GameConfig, describe_table

#: The default opponent: the first of these that plays the table (weights ship for it).
DEFAULT_OPPONENTS = ("champion", "td_lambda", "persistent_line")
#: The players whose choices a hint shows, strongest first.
HINT_POLICIES = ("champion", "td_lambda", "persistent_line")
#: Tiles shown per opponent (and for the boneyard) by :meth:`Hints.holdings`: the most likely ones.
HOLDINGS_SHOWN = 5


def default_opponent(config: GameConfig) -> specs.PolicySpec:
    """The first of DEFAULT_OPPONENTS that plays this table by default (a learned player ships
    for it and its library is installed), as the default league chooses; one that ships but
    does not load is an error, not passed over."""
    for name in DEFAULT_OPPONENTS:
        try:
            kind = policy_class(name)
        except ValueError:  # its library is not installed (safetensors, without the league extra)
            continue
        if kind.plays_by_default(config):
            spec = specs.PolicySpec(name)
            registry.check(spec, config)
            return spec
    raise ValueError(f"none of {list(DEFAULT_OPPONENTS)} can play {describe_table(config)}")


def chosen_specs(texts: Sequence[str] | None, config: GameConfig, what: str = "--opponents"
                 ) -> list[specs.PolicySpec]:
    """One spec per other seat from the person's choice (none: the default opponent; one spec:
    every seat, or ``"greedy:3"`` copies; else one per seat), read but not yet built. `what`
    names the choice in messages.

    Raises:
        ValueError: a spec that cannot be read, or copies that do not fill the table.
    """
    others = config.num_players - 1
    if not texts:
        return [default_opponent(config)] * others
    parsed = [specs.parse(text, default_copies=others if len(texts) == 1 else 1) for text in texts]
    chosen = [spec for spec, copies in parsed for _ in range(copies)]
    if len(chosen) != others:
        raise ValueError(f"{what}: {config.num_players} players need {others} opponents, got {len(chosen)}")
    return chosen


def opponent_specs(texts: Sequence[str] | None, config: GameConfig, what: str = "--opponents"
                   ) -> list[specs.PolicySpec]:
    """:func:`chosen_specs`, each made once here, so a bad name or parameter fails before the game.

    Raises:
        ValueError: a spec that cannot be read or made, or copies that do not fill the table.
    """
    chosen = chosen_specs(texts, config, what)
    for spec in dict.fromkeys(chosen):
        try:
            registry.check(spec, config)
            registry.refuse_seeing_every_hand(spec, "as an opponent of a person")
        except ValueError as error:
            raise ValueError(f"{what}: {error}") from None
    return chosen


class Hints:
    """What the hint policies would play for a person, and td_lambda's predicted final pips of each legal move."""

    def __init__(self, config: GameConfig, seed: int, parameters: Mapping[str, Mapping[str, Any]] | None = None
                 ) -> None:
        """`parameters`: a hint policy's own parameters by its name (the web server's clock ceiling)."""
        self.config = config
        self.policies: dict[str, Any] = {}  # td_lambda's value network is read for the predictions
        self.missing: dict[str, str] = {}
        for name in HINT_POLICIES:
            try:
                self.policies[name] = make_policy(name, config, seed=seed, **(parameters or {}).get(name, {}))
            except ValueError as error:
                self.missing[name] = str(error)
        self.beliefs = make_beliefs(config)
        self._believed = False  # whether the beliefs have seen an observation of this hand

    def reset(self) -> None:
        for policy in self.policies.values():
            policy.reset()
        self.beliefs.reset()
        self._believed = False

    def follow(self, observation: np.ndarray) -> None:
        """The person's observation at each of their turns, asked for a hint or not: a hint giver
        that reasons about the hidden tiles (the champion) must see every one, in order."""
        for policy in self.policies.values():
            observe = getattr(policy, "observe", None)
            if observe is not None:
                observe(observation)
        self.beliefs.observe(observation)
        self._believed = True

    def holdings(self, shown: int = HOLDINGS_SHOWN) -> list[dict[str, Any]]:
        """Where the hidden tiles most likely are, after the person's latest observation: for each
        opponent (seats counted from the person: 1 = the next to play) and then the boneyard,
        its tile count and its `shown` most likely tiles with their probabilities, likeliest first.
        Empty before the person's first turn of a hand."""
        if not self._believed:
            return []
        probabilities = self.beliefs.probabilities()
        n = self.config.num_players
        knowledge = getattr(self.beliefs, "knowledge", None)
        sizes = None if knowledge is None else [*knowledge.hand_sizes.tolist(), knowledge.boneyard]
        places = list(range(1, n)) + ([n] if self.config.boneyard else [])
        result = []
        for place in places:
            column = probabilities[:, place]
            likeliest = [int(tile) for tile in np.argsort(-column, kind="stable")[:shown] if column[tile] > 0]
            result.append({"place": "boneyard" if place == n else f"{place} after you",
                           "seat_offset": place, "tiles_held": None if sizes is None else int(sizes[place]),
                           "likeliest": [{"tile": self.config.tiles.name(tile), "probability": float(column[tile])}
                                         for tile in likeliest]})
        return result

    def explain_holdings(self) -> str:
        """:meth:`holdings` as lines of text."""
        held = self.holdings()
        if not held:
            return "Tile count: nothing seen yet this hand."
        lines = ["Tile count: the hidden tiles each place most likely holds (probability):"]
        for place in held:
            who = "boneyard" if place["place"] == "boneyard" else f"player {place['place']}"
            count = "" if place["tiles_held"] is None else f" ({place['tiles_held']} tiles)"
            tiles = "  ".join(f"{tile['tile']} {tile['probability']:.0%}" for tile in place["likeliest"]) or "none"
            lines.append(f"  {who}{count}: {tiles}")
        return "\n".join(lines)

    def choices(self, observation: np.ndarray, action_mask: np.ndarray) -> dict[str, int]:
        """The action each hint policy would take, strongest first."""
        return {name: int(policy.act(observation, action_mask)) for name, policy in self.policies.items()}

    def explain(self, observation: np.ndarray, action_mask: np.ndarray, texts: list[str]) -> str:
        """The hint, as lines of text (`texts`: the legal moves in words, in action order)."""
        legal = np.flatnonzero(action_mask)
        if legal.shape[0] == 1:
            return f"Hint: only one move is possible: 1) {texts[0]}."
        lines = ["Hint:"]
        for name, action in self.choices(observation, action_mask).items():
            choice = int(np.flatnonzero(legal == action)[0])
            lines.append(f"  {name} would play {choice + 1}) {texts[choice]}")
        lines += [f"  ({name}: {reason})" for name, reason in self.missing.items()]
        predicted = self.predicted_pips(observation, action_mask)
        if predicted is not None:
            lines.append("  td_lambda's predicted pips left at the end of the hand (lower is better):")
            lines += [f"    {k}) {text:28s} {value:5.1f}" for k, (text, value) in
                      enumerate(zip(texts, predicted), start=1)]
        return "\n".join(lines)

    def predicted_pips(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray | None:
        """td_lambda's predicted pips left at the end of the hand after each legal move, in action
        order (None where td_lambda has no weights for the table, or for a forced move)."""
        policy = self.policies.get("td_lambda")
        if policy is None or np.count_nonzero(action_mask) < 2:  # a forced move (a draw has no after-state)
            return None
        from baselines.td_lambda.policy import predicted_final_pips
        from dominoes_env.core.afterstate import legal_afterstates

        _, vectors, ends_hand = legal_afterstates(observation, action_mask, self.config)
        return predicted_final_pips(policy.value, policy.features, vectors, ends_hand)
