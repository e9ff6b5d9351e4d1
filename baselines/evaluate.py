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

import argparse
import ast
import math
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from baselines.outcomes import hand_win_shares, went_out_shares
from baselines.play import play_game
from baselines.policy import Policy, make_policy
from dominoes_env import make_config
from dominoes_env.core.deprecation import renamed_keyword
from dominoes_env.env import raw_env

#: A policy to evaluate: a registry name, (name, parameters), a factory called as
#: ``factory(num_players, highest_double, seed)`` (a Policy subclass is one), or a
#: ready Policy object (used as is, not reseeded).
PolicySpec = Union[str, tuple[str, Mapping[str, Any]], Callable[..., Policy], Policy]

Z_95 = 1.959963984540054


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
        spread = Z_95 * per_deal.std(ddof=1) / math.sqrt(deals.shape[0]) if deals.shape[0] > 1 else math.nan
        return float(gaps.mean()), float(spread), int(shared.sum())

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
        return (f"{n} players, double-{self.highest_double}, {self.num_hands} hands ({design}), seed {self.seed}. "
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


@renamed_keyword
def evaluate(policies: Sequence[PolicySpec], num_hands: int, seed: int = 0, num_players: int = 4,
             highest_double: int = 9, hands_per_game: int = 1, progress: bool = False) -> EvaluationResult:
    """Play `policies` against each other through the env and measure them.

    Args:
        policies: at least `num_players` entries (see the module docstring for how
            tables are filled); repeat an entry for copies.
        num_hands: hands to play at least; rounded up to whole deals played under every
            seat rotation (and, with more entries than seats, to equal tables per entry).
        seed: the root of every deal and every policy's generator.
        num_players, highest_double: the table size.
        hands_per_game: hands per episode (1: single hands; N+1: full games, engines N..0).
        progress: show a progress bar (tqdm, when installed) on runs longer than a second.

    Raises:
        ValueError: fewer entries than seats, an unknown policy or parameter, a policy
            object built for another table size or listed twice, or a bad count.
    """
    config = make_config(num_players, highest_double)
    for name, value in (("num_hands", num_hands), ("hands_per_game", hands_per_game)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    objects = [id(spec) for spec in policies if isinstance(spec, Policy)]
    if len(objects) != len(set(objects)):
        raise ValueError("the same Policy object is listed twice: one object cannot sit in two seats at once; "
                         "list a name or a factory for copies")
    entries = [_entry(spec, num_players, highest_double) for spec in policies]
    if len(entries) < num_players:
        raise ValueError(f"{num_players} seats need at least {num_players} policies, got {len(entries)}; "
                         f"list copies for more seats, e.g. ['persistent_line', 'random', 'random', 'random']")
    labels = list(dict.fromkeys(entry.label for entry in entries))
    label_of_entry = np.array([labels.index(entry.label) for entry in entries])

    deal_seeds, table_seeds, policy_seeds = np.random.SeedSequence(seed).spawn(3)
    players = [entry.make(int(s.generate_state(1)[0])) for entry, s in zip(entries, policy_seeds.spawn(len(entries)))]
    num_deals = _num_deals(num_hands, len(entries), num_players, hands_per_game)
    game_seeds = np.random.default_rng(deal_seeds).integers(0, 2**31 - 1, size=num_deals)
    tables = _tables(len(entries), num_players, num_deals, np.random.default_rng(table_seeds))

    env = raw_env(num_players, highest_double, num_hands=hands_per_game)
    hands_total = num_deals * num_players * hands_per_game
    scores = np.empty((hands_total, num_players), dtype=np.int64)
    seating = np.empty((hands_total, num_players), dtype=np.int64)
    went_out = np.empty(hands_total, dtype=np.int64)
    deal = np.repeat(np.arange(num_deals), num_players * hands_per_game)
    bar = _progress_bar(hands_total) if progress else None
    row = 0
    for d in range(num_deals):
        for rotation in range(num_players):
            seated = np.roll(tables[d], -rotation)  # seat s holds table entry (s + rotation) mod n
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
    return _summarise(labels, scores, seating, went_out, deal, config.num_players, highest_double,
                      hands_per_game, seed)


# --------------------------------------------------------------------------- tables
def _num_deals(num_hands: int, num_entries: int, num_players: int, hands_per_game: int) -> int:
    """Deals to play: enough for `num_hands`, and a multiple giving every entry equal tables."""
    deals = -(-num_hands // (num_players * hands_per_game))
    step = num_entries // math.gcd(num_entries, num_players)  # deals * n must be a multiple of P
    return -(-deals // step) * step


def _tables(num_entries: int, num_players: int, num_deals: int, rng: np.random.Generator) -> np.ndarray:
    """(deals, seats) entry indices: all entries in a random order, or fair draws from more entries.

    With more entries than seats, tables are cut one after another from a stream of random
    permutations of all entries, so that after every whole permutation each entry has sat
    exactly once. A table that straddles two permutations must not seat an entry twice:
    the new permutation puts the entries already at that table last.
    """
    if num_entries == num_players:
        return np.array([rng.permutation(num_players) for _ in range(num_deals)], dtype=np.int64)
    tables = np.empty((num_deals, num_players), dtype=np.int64)
    queue: list[int] = []
    for d in range(num_deals):
        table: list[int] = []
        while len(table) < num_players:
            if not queue:
                order = rng.permutation(num_entries).tolist()
                queue = [e for e in order if e not in table] + [e for e in order if e in table]
            table.append(queue.pop(0))
        tables[d] = table
    return tables


# --------------------------------------------------------------------------- policies
_SPEC_PATTERN = re.compile(r"^(?P<name>[A-Za-z_][\w\-]*)(?:\((?P<params>[^()]*)\))?(?:@(?P<checkpoint>[^:]+))?"
                           r"(?::(?P<copies>\d+))?$")


def parse_policy_argument(text: str) -> list[tuple[str, dict[str, Any]]]:
    """Read ``NAME[(KEY=VALUE,...)][@CHECKPOINT][:COPIES]`` into that many (name, params) entries.

    Values are Python literals (``best_line(max_line_length=6)``); anything else is a string.
    ``@CHECKPOINT`` is short for ``checkpoint=CHECKPOINT``, as in ``dominoes league``.

    Raises:
        ValueError: the text does not have that form, or copies is 0.
    """
    match = _SPEC_PATTERN.match(text.strip())
    if match is None:
        raise ValueError(f"cannot read policy {text!r}: write NAME, NAME:COPIES, NAME(KEY=VALUE,...) or "
                         f"NAME@CHECKPOINT, e.g. random:3 or 'best_line(max_line_length=6)'")
    params: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in (match["params"] or "").split(","))):
        key, equals, value = item.partition("=")
        if not equals or not key.strip().isidentifier():
            raise ValueError(f"cannot read parameter {item!r} of {text!r}: write KEY=VALUE")
        params[key.strip()] = _literal(value.strip())
    if match["checkpoint"]:
        params["checkpoint"] = match["checkpoint"]
    copies = 1 if match["copies"] is None else int(match["copies"])
    if copies < 1:
        raise ValueError(f"policy {text!r}: the number of copies must be at least 1")
    return [(match["name"], dict(params)) for _ in range(copies)]


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _entry(spec: PolicySpec, num_players: int, highest_double: int) -> _Entry:
    """A label and a seed -> policy maker; fails early on unknown names or parameters."""
    if isinstance(spec, str):
        spec = (spec, {})
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str) and isinstance(spec[1], Mapping):
        name, params = spec[0], dict(spec[1])
        make_policy(name, num_players, highest_double, seed=0, **params)  # validate now, not mid-run
        label = name + (f"({', '.join(f'{k}={v!r}' for k, v in params.items())})" if params else "")
        return _Entry(label, lambda seed: make_policy(name, num_players, highest_double, seed=seed, **params))
    if isinstance(spec, Policy):
        if (spec.num_players, spec.highest_double) != (num_players, highest_double):
            raise ValueError(f"policy {spec!r} was built for {spec.num_players} players, "
                             f"double-{spec.highest_double}; this evaluation is {num_players} players, "
                             f"double-{highest_double}")
        return _Entry(spec.name, lambda seed: spec)
    if callable(spec):
        label = getattr(spec, "name", None) or getattr(spec, "__name__", None) or repr(spec)
        return _Entry(str(label), lambda seed: spec(num_players, highest_double, seed))
    raise ValueError(f"cannot evaluate {spec!r}: give a policy name, (name, params), a factory "
                     f"(num_players, highest_double, seed) -> Policy, or a Policy")


# --------------------------------------------------------------------------- statistics
def _summarise(labels: list[str], scores: np.ndarray, seating: np.ndarray, went_out: np.ndarray, deal: np.ndarray,
               num_players: int, highest_double: int, hands_per_game: int, seed: int) -> EvaluationResult:
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
                            num_players, highest_double, hands_per_game, seed)


def _ci95(scores: np.ndarray, mine: np.ndarray, deal: np.ndarray) -> float:
    """Half-width of the 95% interval of the mean, with each deal's mean as one sample."""
    sums = np.bincount(deal, weights=np.where(mine, scores, 0).sum(axis=1))
    counts = np.bincount(deal, weights=mine.sum(axis=1))
    played = counts > 0
    per_deal = sums[played] / counts[played]
    if per_deal.shape[0] < 2:
        return math.nan
    return float(Z_95 * per_deal.std(ddof=1) / math.sqrt(per_deal.shape[0]))


def _progress_bar(total: int) -> Any:
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm comes with the league/test extras; without it, no bar
        return None
    return tqdm(total=total, unit="hand", delay=1.0, desc="evaluate")


# --------------------------------------------------------------------------- command line
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = ("Every deal is played under all seat rotations. With more policies than seats each deal "
                     "seats a fair draw of them. Example: dominoes evaluate persistent_line best_line double "
                     "greedy random stupid --hands 12000")
    parser.add_argument("policies", nargs="+", metavar="POLICY",
                        help="NAME, NAME:COPIES, 'NAME(KEY=VALUE,...)' or NAME@CHECKPOINT; at least one per seat "
                             "(more are rotated through the seats)")
    parser.add_argument("--hands", type=int, default=4000, help="hands to play at least (default 4000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and the policies (default 0)")
    parser.add_argument("--players", type=int, default=4, help="number of players (default 4)")
    parser.add_argument("--highest", type=int, default=9, help="highest pip N of the double-N set (default 9)")
    parser.add_argument("--hands-per-game", type=int, default=1,
                        help="hands per game (default 1; N+1 plays full games with engines N..0)")
    parser.add_argument("--no-progress", action="store_true", help="do not show a progress bar")


def run(args: argparse.Namespace) -> int:
    try:
        specs = [entry for text in args.policies for entry in parse_policy_argument(text)]
        result = evaluate(specs, args.hands, seed=args.seed, num_players=args.players, highest_double=args.highest,
                          hands_per_game=args.hands_per_game, progress=not args.no_progress)
    except ValueError as error:
        print(f"dominoes evaluate: error: {error}", file=sys.stderr)
        return 2
    print(result.table())
    return 0
