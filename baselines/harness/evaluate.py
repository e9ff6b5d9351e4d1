"""Evaluate policies against each other over the same deals with rotated seats, and ``dominoes evaluate``.

How tables are filled (n seats, P policy entries; copies are entries listed more than once):

- P == n: the entries form the table. Every deal is played n times with the seats
  rotated, so each entry sits in every seat once per deal; the order around the table is
  drawn afresh (seeded) for each deal, because who sits after whom matters too (the seat
  after a strong player scores worst). ``evaluate(["td_lambda", "random", "random",
  "random"], ...)`` plays one policy against three copies of another.
- P > n: each deal gets a table of n distinct entries, cut in turn from a seeded stream of
  random permutations of all entries (so entries take turns evenly), and is played under
  all n rotations of that table. The number of deals is rounded up so that every entry
  sits at the same number of tables; who meets whom, and in which order, is random, so
  balanced only on average.
- P < n is refused: list copies explicitly.

Entries with the same label (a name and its parameters) are one policy in the results:
their hands are pooled and they are never compared with each other.

Measures, per policy: mean pips per hand with a 95% confidence interval (normal
approximation over deals: the n rotations of one deal are correlated, so each deal's mean
is one sample); share of hands won, where the player who went out wins the hand alone and
in a blocked hand the seats with the lowest pip count share it equally (so the shares of a
hand sum to 1; a player left holding only (0|0) scores 0 but did not go out); share of
hands it went out; head-to-head: for each other policy, the share of hands they played
together in which its pip count was strictly lower (ties are reported apart); and mean
pips in each seat. Everything is reproducible from the seed; deals depend only on the
seed, the table size and the game length, so two evaluations with the same seed play the
same deals whatever the policies.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from baselines.harness.outcomes import hand_win_shares, went_out_shares
from baselines.harness.play import play_game
from baselines.harness.seating import deals_needed, fair_tables, rotate
from baselines.harness.statistics import ci95_half_width
from baselines.policies import registry, specs
from baselines.policies.policy import Policy
from baselines.policies.registry import spec_name
from baselines.policies.specs import PolicySpec
from dominoes_env.core import validation
from dominoes_env.core.config import MAX_HANDS_PER_GAME, GameConfig, TableRuleOptions, describe_table, table_of
from dominoes_env.env import raw_env

if TYPE_CHECKING:
    from typing_extensions import Unpack

#: A policy to evaluate: a spec text (``"best_line(max_line_length=6)"``, ``"random:3"``), a
#: :class:`~baselines.policies.specs.PolicySpec`, (name, parameters), a factory called as
#: ``factory(num_players, highest_double, seed)`` (a Policy subclass is one; under table
#: rules `num_players` is the whole GameConfig), or a ready
#: Policy object (used as is, not reseeded).
PolicyEntry = str | PolicySpec | tuple[str, Mapping[str, Any]] | Callable[..., Policy] | Policy

#: Most hands one evaluation plays (about three hours of the fastest policies here).
MAX_HANDS = 10_000_000


@dataclass(frozen=True)
class PolicyResult:
    """One policy's results (all its copies pooled)."""

    label: str
    hands: int  # hands played, each copy's counted apart
    mean_pips: float
    ci95: float  # half-width of the 95% confidence interval of mean_pips
    won: float  # share of hands won (split equally among the lowest in a blocked hand)
    went_out: float  # share of hands it went out
    seat_mean_pips: tuple[float, ...]  # mean pips in each seat (nan where it never sat)
    seat_hands: tuple[int, ...]  # hands played in each seat


@dataclass(frozen=True)
class EvaluationResult:
    """What :func:`evaluate` returns: per-policy results, head-to-head shares and the raw hands.

    Attributes:
        policies: per policy, in the order first listed.
        head_to_head: ``[a, b]`` share of the hands a and b played together in which a
            held strictly fewer pips than b (nan if they never met).
        head_to_head_ties: ``[a, b]`` share of those hands with equal pips.
        scores: (hands, seats) pips left at the end of every hand played.
        seating: (hands, seats) index into `policies` of the policy in each seat.
        went_out: (hands,) seat that went out, -1 for a blocked hand.
        deal: (hands,) which deal (game seed) each hand belongs to; rotations share it.
    """

    policies: tuple[PolicyResult, ...]
    head_to_head: np.ndarray
    head_to_head_ties: np.ndarray
    scores: np.ndarray
    seating: np.ndarray
    went_out: np.ndarray
    deal: np.ndarray
    num_players: int
    highest_double: int
    hands_per_game: int
    seed: int
    config: GameConfig  # the table and its table rules

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(policy.label for policy in self.policies)

    @property
    def num_hands(self) -> int:
        return int(self.scores.shape[0])

    def __getitem__(self, label: str) -> PolicyResult:
        if label not in self.labels:
            raise KeyError(f"no policy {label!r} in this evaluation; policies: {list(self.labels)}")
        return self.policies[self.labels.index(label)]

    def per_deal_means(self, label: str) -> np.ndarray:
        """Mean pips of policy `label` in each deal, over its seats and the deal's rotations (NaN
        where it did not play): the samples of its interval, and of paired comparisons between
        evaluations of the same deals."""
        return _per_deal_means(self.scores, self.seating == self._index(label), self.deal)

    def _index(self, label: str) -> int:
        if label not in self.labels:
            raise ValueError(f"no policy {label!r} in this evaluation; policies: {list(self.labels)}")
        return self.labels.index(label)

    def difference(self, first: str, second: str) -> tuple[float, float, int]:
        """Mean pips of `first` minus `second` over the hands they played together.

        Returns (mean, half-width of its 95% interval, hands). Comparing within hands removes
        most of the luck of the deal, so this separates close policies far better than two
        separate means; copies of one policy in a hand count as their mean.
        """
        a, b = self._index(first), self._index(second)
        in_a, in_b = self.seating == a, self.seating == b
        shared = in_a.any(axis=1) & in_b.any(axis=1)
        if not shared.any():
            raise ValueError(f"{first!r} and {second!r} never played in the same hand")
        means = [np.where(mask, self.scores, 0).sum(axis=1) / np.maximum(mask.sum(axis=1), 1) for mask in (in_a, in_b)]
        gaps = (means[0] - means[1])[shared]
        deals, index = np.unique(self.deal[shared], return_inverse=True)
        per_deal = np.bincount(index, weights=gaps) / np.bincount(index)
        return float(gaps.mean()), ci95_half_width(per_deal), int(shared.sum())

    def table(self) -> str:
        """The results as Markdown tables, lowest mean pips first: the summary, then head-to-head."""
        order = sorted(range(len(self.policies)), key=lambda i: self.policies[i].mean_pips)
        lines = [self._heading(), "", *self._summary_rows(order)]
        if len(order) > 1:
            lines += ["", "Head-to-head: share of the hands two policies played together in which the row "
                      "policy held fewer pips than the column policy.", "", *self._head_to_head_rows(order),
                      "", "Each against the next in the ranking, in the hands they played together "
                      "(pips per hand, 95% interval):", ""]
            lines += [self._difference_row(self.labels[i], self.labels[j]) for i, j in zip(order, order[1:])]
        return "\n".join(lines)

    def _difference_row(self, first: str, second: str) -> str:
        try:
            mean, spread, hands = self.difference(first, second)
        except ValueError:
            return f"- {first} - {second}: never at the same table"
        return f"- {first} - {second}: {mean:+.2f} ± {spread:.2f} over {hands} hands"

    def _heading(self) -> str:
        deals, n = len(np.unique(self.deal)), self.num_players
        if self.hands_per_game == 1:
            design = f"{deals} deals x {n} seat rotations"
        else:
            design = f"{deals} games of {self.hands_per_game} hands x {n} seat rotations"
        return (f"{describe_table(self.config)}, {self.num_hands} hands ({design}), seed {self.seed}. "
                f"won: hands won (a blocked hand is shared by the lowest); seat k: mean pips in seat k.")

    def _summary_rows(self, order: list[int]) -> list[str]:
        n = self.num_players
        rows = ["| policy | hands | pips/hand | 95% CI | won | went out | "
                + " | ".join(f"seat {s}" for s in range(n)) + " |",
                "|---|---:|---:|---:|---:|---:|" + "---:|" * n]
        for p in (self.policies[i] for i in order):
            seats = " | ".join(f"{m:.2f}" for m in p.seat_mean_pips)
            rows.append(f"| {p.label} | {p.hands} | {p.mean_pips:.2f} | ±{p.ci95:.2f} | {p.won:.1%} | "
                        f"{p.went_out:.1%} | {seats} |")
        return rows

    def _head_to_head_rows(self, order: list[int]) -> list[str]:
        rows = ["| policy | " + " | ".join(self.policies[j].label for j in order) + " |",
                "|---|" + "---:|" * len(order)]
        for i in order:
            shares = (self.head_to_head[i, j] for j in order)
            rows.append(f"| {self.policies[i].label} | "
                        + " | ".join("" if math.isnan(x) else f"{x:.1%}" for x in shares) + " |")
        return rows


@dataclass(frozen=True)
class _Entry:
    label: str
    make: Callable[[int], Policy]  # seed -> policy


def evaluate(policies: Sequence[PolicyEntry], num_hands: int, seed: int = 0, num_players: int | GameConfig = 4,
             highest_double: int = 9, hands_per_game: int = 1, progress: bool = False,
             announce: Callable[[int], None] | None = None,
             **table_rules: Unpack[TableRuleOptions]) -> EvaluationResult:
    """Play `policies` against each other through the env and measure them.

    Args:
        policies: at least `num_players` entries (see the module docstring for how
            tables are filled); repeat an entry for copies (or write ``"NAME:COPIES"``).
        num_hands: hands to play at least (1 to MAX_HANDS); rounded up to whole deals
            played under every seat rotation (and, with more entries than seats, to equal
            tables per entry).
        seed: the root of every deal and every policy's generator.
        num_players: the table size, or a GameConfig (the table with its rules).
        highest_double: N of the double-N set (when `num_players` is a number).
        table_rules: the table rules as keywords (the rule book's game by default; see
            :func:`dominoes_env.make_config`).
        hands_per_game: hands per episode (1: single hands; N+1: full games, engines N..0).
        progress: show a progress bar (tqdm, when installed) on runs longer than a second.
        announce: called once every entry is checked, before the first hand, with the hands
            that will be played (the command line says it, so a long run is never silent).

    Raises:
        ValueError: fewer entries than seats, an unknown policy or parameter, a policy
            object built for another table size or listed twice, or a bad count.
    """
    config = table_of(num_players, highest_double, table_rules)
    num_players = config.num_players
    num_hands = validation.integer("num_hands", num_hands, 1, MAX_HANDS)
    hands_per_game = validation.integer("hands_per_game", hands_per_game, 1, MAX_HANDS_PER_GAME)
    seed = validation.integer("seed", seed, 0, validation.SEED_LIMIT - 1)
    objects = [id(spec) for spec in policies if isinstance(spec, Policy)]
    if len(objects) != len(set(objects)):
        raise ValueError("the same Policy object is listed twice: one object cannot sit in two seats at once; "
                         "list a name or a factory for copies")
    entries = [entry for spec in policies for entry in _entries(spec, config)]
    if len(entries) > specs.MAX_COPIES:
        raise ValueError(f"at most {specs.MAX_COPIES} policy entries per evaluation, got {len(entries)}")
    if len(entries) < num_players:
        raise ValueError(f"{num_players} seats need at least {num_players} policies, got {len(entries)}; "
                         f"list copies for more seats, e.g. ['persistent_line', 'random', 'random', 'random']")
    labels = list(dict.fromkeys(entry.label for entry in entries))
    label_of_entry = np.array([labels.index(entry.label) for entry in entries])

    deal_seeds, table_seeds, policy_seeds = np.random.SeedSequence(seed).spawn(3)
    players = [entry.make(int(s.generate_state(1)[0])) for entry, s in zip(entries, policy_seeds.spawn(len(entries)))]
    num_deals = deals_needed(num_hands, len(entries), num_players, hands_per_game)
    game_seeds = np.random.default_rng(deal_seeds).integers(0, 2**31 - 1, size=num_deals)
    tables = fair_tables(len(entries), num_players, num_deals, np.random.default_rng(table_seeds))

    env = raw_env(config, num_hands=hands_per_game)
    hands_total = num_deals * num_players * hands_per_game
    scores = np.empty((hands_total, num_players), dtype=np.int32)  # compact: up to MAX_HANDS rows
    seating = np.empty((hands_total, num_players), dtype=np.int16)
    went_out = np.empty(hands_total, dtype=np.int8)
    deal = np.repeat(np.arange(num_deals), num_players * hands_per_game)
    if announce is not None:
        announce(hands_total)
    bar = _progress_bar(hands_total) if progress else None
    row = 0
    for d in range(num_deals):
        for rotation in range(num_players):
            seated = np.array(rotate(tables[d], rotation))
            result = play_game(env, [players[e] for e in seated], int(game_seeds[d]))
            rows = slice(row, row + hands_per_game)
            scores[rows] = result.hand_scores
            seating[rows] = label_of_entry[seated]
            went_out[rows] = [-1 if seat is None else seat for seat in result.went_out]
            row += hands_per_game
            if bar is not None:
                bar.update(hands_per_game)
    if bar is not None:
        bar.close()
    return _summarise(labels, scores, seating, went_out, deal, config, hands_per_game, seed)


# --------------------------------------------------------------------------- policies
def _entries(spec: PolicyEntry, config: GameConfig) -> list[_Entry]:
    """The entries one listed policy stands for (a spec text may ask for copies); each is
    checked by constructing it once, so an unknown name or parameter fails before any hand."""
    if isinstance(spec, str):
        parsed, copies = specs.parse(spec)
        return [_spec_entry(parsed, config)] * copies
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str) and isinstance(spec[1], Mapping):
        return [_spec_entry(PolicySpec.of(spec[0], spec[1]), config)]
    if isinstance(spec, PolicySpec):
        return [_spec_entry(spec, config)]
    if isinstance(spec, Policy):
        if spec.config != config:
            raise ValueError(f"policy {spec!r} was built for {describe_table(spec.config)}; this evaluation is "
                             f"{describe_table(config)}")
        return [_Entry(spec.label, lambda seed: spec)]
    if isinstance(spec, type) and issubclass(spec, Policy):
        return [_Entry(spec_name(spec), lambda seed: spec(_table(config), config.highest_double, seed))]
    if callable(spec):
        factory = cast(Callable[..., Policy], spec)
        label = getattr(factory, "label", None) or getattr(factory, "__qualname__", None) or repr(factory)
        return [_Entry(str(label), lambda seed: factory(_table(config), config.highest_double, seed))]
    raise ValueError(f"cannot evaluate {spec!r}: give a policy spec ('random', 'best_line(max_line_length=6)'), "
                     f"(name, params), a factory (num_players, highest_double, seed) -> Policy, or a Policy")


def _table(config: GameConfig) -> int | GameConfig:
    """What a factory gets as `num_players`: the number of players, or under table rules the
    whole GameConfig (Policy subclasses take either)."""
    return config.num_players if config.is_default else config


def _spec_entry(spec: PolicySpec, config: GameConfig) -> _Entry:
    registry.build(spec, config, seed=0)  # validate now, not mid-run
    return _Entry(spec.label, lambda seed: registry.build(spec, config, seed=seed))


# --------------------------------------------------------------------------- statistics
def _summarise(labels: list[str], scores: np.ndarray, seating: np.ndarray, went_out: np.ndarray, deal: np.ndarray,
               config: GameConfig, hands_per_game: int, seed: int) -> EvaluationResult:
    hands, n = scores.shape
    credit = hand_win_shares(scores, went_out)
    went = went_out_shares(n, went_out)
    results = []
    for index, label in enumerate(labels):
        mine = seating == index
        count = int(mine.sum())
        seat_hands = mine.sum(axis=0)
        seat_sums = np.where(mine, scores, 0).sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            seat_means = seat_sums / seat_hands
        results.append(PolicyResult(
            label=label, hands=count, mean_pips=float(scores[mine].mean()),
            ci95=_ci95(scores, mine, deal), won=float(credit[mine].mean()), went_out=float(went[mine].mean()),
            seat_mean_pips=tuple(float(m) for m in seat_means), seat_hands=tuple(int(h) for h in seat_hands)))
    wins, ties, met = (np.zeros((len(labels), len(labels))) for _ in range(3))
    for a in range(n):
        for b in range(n):
            if a == b:
                continue
            pair = (seating[:, a], seating[:, b])
            np.add.at(met, pair, 1.0)
            np.add.at(wins, pair, scores[:, a] < scores[:, b])
            np.add.at(ties, pair, scores[:, a] == scores[:, b])
    for matrix in (wins, ties, met):  # copies of one policy are not compared with each other
        np.fill_diagonal(matrix, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        head_to_head, head_to_head_ties = wins / met, ties / met
    return EvaluationResult(tuple(results), head_to_head, head_to_head_ties, scores, seating, went_out, deal,
                            config.num_players, config.highest_double, hands_per_game, seed, config)


def _per_deal_means(scores: np.ndarray, mine: np.ndarray, deal: np.ndarray) -> np.ndarray:
    """Mean pips in the seats `mine` marks, deal by deal (over the deal's rotations); NaN for a
    deal where none is marked."""
    sums = np.bincount(deal, weights=np.where(mine, scores, 0).sum(axis=1))
    counts = np.bincount(deal, weights=mine.sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts


def _ci95(scores: np.ndarray, mine: np.ndarray, deal: np.ndarray) -> float:
    """Half-width of the 95% interval of the mean, with each deal's mean as one sample (Student's t)."""
    means = _per_deal_means(scores, mine, deal)
    return ci95_half_width(means[~np.isnan(means)])


def _progress_bar(total: int) -> Any:
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm comes with the league/test extras; without it, no bar
        return None
    return tqdm(total=total, unit="hand", delay=1.0, desc="evaluate")
