"""``dominoes play``: a person plays in the terminal against the shipped players.

The person is one more policy at the table (:class:`Person`): the shared game loop
(:func:`baselines.harness.play.play_game`) asks it for a move like any other. It draws the table as
the person may see it (their own tiles, never the others'), lists the legal moves by number
and in words, and reads a choice: a number, ``h`` for a hint (what the champion, td_lambda
and persistent_line would play, those that ship for the table, and td_lambda's predicted pips
for each move: :class:`~baselines.advice.Hints`), ``q`` (or
Ctrl-D) to leave. Anything else asks again. The opponents are wrapped so that each of their
moves is told and the table drawn again after it.

Input and output are passed in (:func:`play_in_terminal`), so a scripted session is a test.
With ``--record FILE`` the game is written as a game record (:mod:`dominoes_env.records`)
after every hand and when the person leaves, whatever the reason.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

import numpy as np

import dominoes_env
from baselines.advice import Hints, opponent_specs
from baselines.command_line import options
from baselines.command_line.signals import signals_stop
from baselines.harness.play import play_game
from baselines.policies import registry, specs
from baselines.policies.policy import Policy
from dominoes_env import files
from dominoes_env.core import actions, validation
from dominoes_env.core.config import MAX_HANDS_PER_GAME, GameConfig, describe_table
from dominoes_env.core.render import Paint, plain, render_table
from dominoes_env.core.state import HandState
from dominoes_env.core.validation import shown
from dominoes_env.records import RecordGames, write_record

#: Opponents when none are named: the strongest shipped player that loads for the table.
MOVES_PER_LINE = 3
PROMPT = "your move (a number, h for a hint, c for the tile count, q to quit): "
ANSI = {"heading": "1", "marker_up": "31", "to_move": "1;33", "tiles": "36", "warning": "1;31", "number": "1"}

ReadLine = Callable[[str], str]


class QuitGame(Exception):
    """The person left the table (``q``, or the end of the input)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--opponents", nargs="+", metavar="POLICY",
                        help="the other seats' players, as policy specs (NAME[(KEY=VALUE,...)][@CHECKPOINT][:COPIES]); "
                             "one spec without :COPIES fills every other seat. Default: the strongest shipped "
                             "player of the table: the champion where it ships, else td_lambda, else persistent_line")
    options.add_table_options(parser)
    parser.add_argument("--hands", type=validation.integer_argument, default=1,
                        help=f"hands in the game (1-{MAX_HANDS_PER_GAME}, default 1; N+1 plays engines N down to 0)")
    options.add_seed_option(parser, "the deals and of the opponents")
    parser.add_argument("--seat", type=validation.integer_argument, default=0, help="your seat (default 0: player_0)")
    parser.add_argument("--record", metavar="FILE",
                        help="write the game to FILE as a game record (JSON), after every hand and when you leave; "
                             "replay it with dominoes replay")
    parser.add_argument("--colour", "--color", choices=("auto", "always", "never"), default="auto",
                        help="colour the table: auto (when the output is a terminal that has colour), always, never")


def run(args: argparse.Namespace) -> int:
    config, seed = options.table(args), options.seed(args)
    hands = options.count("--hands", args.hands, 1, MAX_HANDS_PER_GAME)
    seat = validation.integer("--seat", args.seat, 0, config.num_players - 1)
    opponents = opponent_specs(args.opponents, config)
    if args.record is not None:
        files.check_output_file("--record", args.record)  # before the game, not after it
    colour = args.colour == "always" or (args.colour == "auto" and supports_colour(sys.stdout))
    with signals_stop():  # a closed terminal or a kill keeps the record, as Ctrl-C does
        play_in_terminal(config, hands, seed, seat, opponents, read_line=input, out=sys.stdout, colour=colour,
                         record=args.record)
    return 0


def supports_colour(stream: TextIO) -> bool:
    """A terminal that shows ANSI colours (and no NO_COLOR in the environment)."""
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def play_in_terminal(config: GameConfig, num_hands: int, seed: int, seat: int, opponents: Sequence[specs.PolicySpec],
                     *, read_line: ReadLine, out: TextIO, colour: bool = False, record: str | None = None) -> bool:
    """Play one game: the person in `seat`, `opponents` in the others (in seat order after it).

    Returns whether the game was played to its end (False when the person left).
    """
    n = config.num_players
    names = [spec.label for spec in opponents]
    players = [("you" if s == seat else names[(s - seat - 1) % n]) for s in range(n)]
    env = RecordGames(dominoes_env.raw_env(config, num_hands=num_hands), players=players)
    view = TableView(env, seat, out, paint_ansi if colour else plain)
    seeds = np.random.SeedSequence(seed).generate_state(n, dtype=np.uint64)
    seated: list[Policy] = []
    for s in range(n):
        if s == seat:
            seated.append(Person(view, Hints(config, int(seeds[s])), read_line))
        else:
            opponent = registry.build(opponents[(s - seat - 1) % n], config, seed=int(seeds[s]))
            seated.append(Announced(opponent, view))
    view.say(f"You are player_{seat} at a table of {describe_table(config)}, {num_hands} hand(s); lower pips win. "
             f"Opponents: " + ", ".join(f"player_{s} {players[s]}" for s in range(n) if s != seat))
    view.on_hand_end = lambda: _write(env, record)
    try:
        result = play_game(env, seated, seed)
    except QuitGame:
        recorded = env.recorded
        view.say(f"\nYou left the game after {recorded.num_moves} moves.")
        if any(hand.scores is not None for hand in recorded.hands):
            view.scores(np.array(recorded.game_scores), players, final=False)
        else:
            view.say("No hand was finished.")
        return False
    except KeyboardInterrupt:  # Ctrl-C (or SIGTERM, SIGHUP) at the prompt: what follows starts a line of its own
        with contextlib.suppress(OSError):
            view.say("")
        raise
    else:
        view.scores(result.totals, players, final=True)
        return True
    finally:  # the moves played are kept whatever ended the game (Ctrl-C, SIGTERM, SIGHUP included)
        _write(env, record)
        if record is not None:
            with contextlib.suppress(OSError):  # a closed terminal (SIGHUP) cannot be told
                view.say(f"The game is recorded in {record} (dominoes replay {record}).")


def _write(env: RecordGames, record: str | None) -> None:
    if record is not None and env.recorder is not None:
        write_record(env.recorded, record)


def paint_ansi(role: str, text: str) -> str:
    return f"\033[{ANSI[role]}m{text}\033[0m" if role in ANSI else text


class TableView:
    """What the person sees: the table after every move, each move in words, each hand's end."""

    def __init__(self, env: RecordGames, seat: int, out: TextIO, paint: Paint) -> None:
        self.core = env.unwrapped
        self.seat = seat
        self.out = out
        self.paint = paint
        self.on_hand_end: Callable[[], None] = lambda: None
        self._hand: HandState | None = None  # the hand on the table
        self._hand_index = 0
        self._scores_before = np.zeros(self.core.config.num_players, dtype=np.int64)  # game scores before it
        self._drawn = -1  # moves played when the table was last drawn
        self._ended = False

    def say(self, text: str) -> None:
        print(text, file=self.out)

    def refresh(self) -> None:
        """Show what happened since the last look: the end of a hand, a new deal, the table."""
        game = self.core.game
        hand = game.hand
        if self._hand is not None and (hand is not self._hand or hand.is_over) and not self._ended:
            self._hand_over(self._hand)
        if hand is not self._hand:
            self._hand, self._hand_index, self._ended, self._drawn = hand, game.hand_index, False, -1
            self._scores_before = game.scores_before_hand.copy()
            self.say(self.paint("heading", f"\n=== Hand {game.hand_index + 1} of {self.core.num_hands}: engine "
                                           f"{game.config.tiles.name(game.config.tiles.double(hand.engine_value))}"))
        if not hand.is_over and hand.num_moves != self._drawn:
            self._draw(hand, self.seat)
            self._drawn = hand.num_moves

    def _draw(self, hand: HandState, show: int | str) -> None:
        scores = self._scores_before if self.core.num_hands > 1 else None
        self.say("\n" + render_table(hand, self._hand_index, self.core.num_hands, scores, show, self.paint))

    def _hand_over(self, hand: HandState) -> None:
        self._ended = True
        self._draw(hand, "all")
        self.on_hand_end()

    def announce(self, hand: HandState, seat: int, action: int) -> None:
        """Tell a move (before it is played: the next look draws the table after it)."""
        who = "You" if seat == self.seat else f"player_{seat}"
        move = move_text(hand, seat, action, self.seat)
        verb = {"pass": "pass" if seat == self.seat else "passes", "draw": "draw" if seat == self.seat else "draws"}
        self.say(f"\n{who} " + (f"{verb[move]} ({_why(move)})" if move in verb else
                                f"play{'' if seat == self.seat else 's'} {move}"))

    def scores(self, totals: np.ndarray, players: list[str], final: bool) -> None:
        """The game scores, lowest first, with the places."""
        order = np.argsort(totals, kind="stable")
        self.say(self.paint("heading", "\nGame over. " if final else "\n") + "Game scores (pips left, lower wins):")
        for s in order:
            place = 1 + int(np.sum(totals < totals[s]))
            self.say(f"  {place}. player_{s} ({players[s]}): {int(totals[s])}")
        if final:
            place = 1 + int(np.sum(totals < totals[self.seat]))
            tied = int(np.sum(totals == totals[self.seat])) > 1
            self.say(f"You finished {_ordinal(place)}{' (tied)' if tied else ''} of {len(totals)}.")


def _why(move: str) -> str:
    return "no tile fits: marker up" if move == "pass" else "no tile fits"


def _ordinal(place: int) -> str:
    """1st, 2nd, 3rd, 4th, ... (a table has at most 8 seats)."""
    return f"{place}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(place, 'th')}"


def line_name(config: GameConfig, line: int, viewer: int) -> str:
    """An absolute line in the person's words: "my line", "player_2's line", "the dummy line" (the
    Mexican train under its rules)."""
    if line == config.num_players:
        return f"the {config.shared_line}"
    return "my line" if line == viewer else f"player_{line}'s line"


def move_text(hand: HandState, seat: int, action: int, viewer: int) -> str:
    """A move of `seat` in the one notation every front end uses (:func:`dominoes_env.core.actions.describe`:
    ``(4|7) on player_2's line``, ``pass``, ``draw``), the person's own line marked ``(yours)``."""
    text = actions.describe(hand.config, action, seat)
    move = actions.decode(hand.config, action)
    if move is not None and move[0] != hand.config.num_players and (seat + move[0]) % hand.config.num_players == viewer:
        text += " (yours)"
    return text


class Person(Policy):
    """The person at the table: shows the table and the legal moves, and reads a choice."""

    def __init__(self, view: TableView, hints: Hints, read_line: ReadLine) -> None:
        super().__init__(view.core.config)
        self.view = view
        self.hints = hints
        self.read_line = read_line

    def reset(self) -> None:
        self.view.refresh()
        self.hints.reset()

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        self.hints.follow(observation)
        view = self.view
        view.refresh()
        hand = view.core.game.hand
        legal = np.flatnonzero(action_mask).tolist()
        texts = [move_text(hand, view.seat, action, view.seat) for action in legal]
        view.say("Your moves:")
        for first in range(0, len(texts), MOVES_PER_LINE):
            view.say("".join(f"  {view.paint('number', f'{k:2d})')} {texts[k - 1]:26s}"
                             for k in range(first + 1, min(first + MOVES_PER_LINE, len(texts)) + 1)).rstrip())
        action = legal[self._choose(texts, observation, action_mask) - 1]
        view.announce(hand, view.seat, action)
        return action

    def _choose(self, texts: list[str], observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The number of the chosen move (1-based); asks again until the answer is one."""
        while True:
            try:
                answer = self.read_line(PROMPT).strip().lower()
            except EOFError:
                raise QuitGame from None
            if answer in ("q", "quit", "exit"):
                raise QuitGame
            if answer in ("h", "hint"):
                self.view.say(self.hints.explain(observation, action_mask, texts))
                continue
            if answer in ("c", "count"):
                self.view.say(self.hints.explain_holdings())
                continue
            if answer == "" and len(texts) == 1:
                return 1
            number = move_number(answer, len(texts))
            if number is not None:
                return number
            numbers = "1 (or Enter: the only move)" if len(texts) == 1 else f"a number from 1 to {len(texts)}"
            self.view.say(f"{shown(answer)} is not a move: type {numbers}, h for a hint, c for the tile count, "
                          f"or q to quit")


def move_number(answer: str, moves: int) -> int | None:
    """The move an answer names (1 to `moves`), or None: only ASCII digits, and no more of them than
    `moves` has, so that no answer, whatever its length, reaches int() (which refuses numbers of
    more than 4,300 digits) or counts as a digit in another script ('²')."""
    if not (answer.isascii() and answer.isdigit()) or len(answer.lstrip("0")) > len(str(moves)):
        return None
    number = int(answer)
    return number if 1 <= number <= moves else None


class Announced(Policy):
    """An opponent whose moves are told and followed by the table."""

    def __init__(self, policy: Policy, view: TableView) -> None:
        super().__init__(policy.config)
        self.policy = policy
        self.view = view

    def reset(self) -> None:
        self.view.refresh()
        self.policy.reset()

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        self.view.refresh()
        action = int(self.policy.act(observation, action_mask))
        seat = self.view.core.game.hand.current_player
        self.view.announce(self.view.core.game.hand, seat, action)
        return action
