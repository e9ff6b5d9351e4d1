"""dominoes serve in a real headless browser: the system's Chromium (Debian's ``chromium``;
Playwright's own browser downloads are not needed), driven by Playwright for Python.

A person's whole hand is played by clicking, the table drawn after each move checked against
the engine's own position, a hint asked for, the record downloaded and read back; then a league's
record is opened on the watch page and stepped through. Slow (a browser starts): ``-m slow``.
"""

from __future__ import annotations

import re
import shutil
import time

import pytest

pytestmark = pytest.mark.slow

playwright_api = pytest.importorskip("playwright.sync_api")
pytest.importorskip("uvicorn")

from baselines.web.app import create_app  # noqa: E402
from baselines.web.cli import serve_in_background  # noqa: E402
from baselines.web.games import GameStore  # noqa: E402
from dominoes_env.core import actions  # noqa: E402
from dominoes_env.records import read_record, replay  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: The page is ready for the person: its work is done, or the end of a hand waits for "Next hand".
READY = "document.body.dataset.busy === '0' || document.body.dataset.handOver === '1'"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The app on a free port of localhost, in a thread; (base url, its game store, its records directory)."""
    records = tmp_path_factory.mktemp("records")
    store = GameStore()
    url, stop = serve_in_background(create_app(records, store))
    yield url, store, records
    stop()


@pytest.fixture(scope="module")
def browser():
    assert CHROMIUM, "the browser tests need Chromium: apt-get install chromium"
    with playwright_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


def wait_until(page, expression, timeout=30.0):
    """Wait until the JavaScript expression is true in the page. (Playwright's wait_for_function evaluates
    its predicate from a string, which the pages' Content-Security-Policy forbids; page.evaluate is not.)"""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        assert time.monotonic() < deadline, f"timed out waiting for {expression}"
        page.wait_for_timeout(20)


def settled(page, default):
    """Wait until the opponent field shows the table's default (the page asks the server when the table changes)."""
    wait_until(page, f"document.body.dataset.defaultOpponent === {default!r} && "
                           f"document.getElementById('opponent').value === {default!r}")


def drawn_lines(page):
    """{line: [tiles in order]} of the table the page shows."""
    lines = page.eval_on_selector_all("#table g[data-line]",
                                      "nodes => nodes.map(n => [n.dataset.line, n.dataset.tiles])")
    return {int(line): [int(tile) for tile in tiles.split(",") if tile] for line, tiles in lines}


def test_a_person_plays_a_hand_by_clicking_asks_for_a_hint_and_downloads_the_record(server, browser, tmp_path):
    url, store, _ = server
    page = browser.new_page(accept_downloads=True)
    page.goto(url + "/")
    page.select_option("#players", "3")
    page.select_option("#highest", "6")
    settled(page, "persistent_line")  # the field follows the table: fill it once the table's offers are in
    page.fill("#opponent", "greedy")
    page.select_option("#speed", "0")
    page.fill("#hands", "2")
    page.fill("#seed", "7")  # seeded deals: the tiles that fit two lines below come up
    page.click("#new-game")
    page.wait_for_selector("body[data-busy='0']")
    game = store.get(page.evaluate("document.body.dataset.gameId"))
    hinted = False
    moves = hands_seen_ended = clicked_tiles = split_tiles = 0
    while page.evaluate("document.body.dataset.gameOver") != "1":
        if page.evaluate("document.body.dataset.handOver") == "1":  # the end of hand 1 waits for the person
            assert page.locator("#table g[data-hand]").count() == 3  # every hand is shown
            hands_seen_ended += 1
            page.click("#next-hand")
            wait_until(page, READY)
            continue
        hand = game.env.unwrapped.game.hand
        assert drawn_lines(page) == {line: hand.line(line) for line in range(4)}
        held = page.get_attribute("#table g[data-hand='0']", "data-tiles")
        assert [int(tile) for tile in held.split(",") if tile] == hand.hand(0)
        buttons = page.eval_on_selector_all("#moves [data-action]", "nodes => nodes.map(n => Number(n.dataset.action))")
        assert sorted(buttons) == hand.legal_actions().tolist()
        if not hinted and len(buttons) > 1:
            page.click("#hint")
            page.wait_for_selector("body[data-hinted='1']")
            assert page.locator("#hint-box tr[data-hint-action]").count() == len(buttons)
            counted = page.eval_on_selector_all("#hint-box table.holdings tr[data-holdings-place]",
                                                "rows => rows.map(r => r.textContent)")
            assert len(counted) == 2 and all("%" in row for row in counted)  # the tile count: each opponent
            hinted = True
        by_tile: dict[int, list[int]] = {}
        for action in buttons:
            decoded = actions.decode(game.config, action)
            if decoded is not None:
                by_tile.setdefault(decoded[1], []).append(action)
        split = [(tile, choices) for tile, choices in by_tile.items() if len(choices) > 1]
        if split:  # a tile that fits two lines: click it, then the open end it goes to
            tile, choices = split[0]
            page.click(f"#table g[data-hand='0'] g[data-tile='{tile}']")
            targets = page.eval_on_selector_all("#table g.tile-target[data-action]",
                                                "nodes => nodes.map(n => Number(n.dataset.action))")
            assert sorted(targets) == sorted(choices)
            page.click(f"#table g.tile-target[data-action='{choices[-1]}']")
            clicked_tiles += 1
            split_tiles += 1
        elif by_tile and not clicked_tiles:  # a tile with one place: one click plays it
            tile, (action,) = next(iter(by_tile.items()))
            page.click(f"#table g[data-hand='0'] g[data-tile='{tile}']")
            clicked_tiles += 1
        else:
            page.click(f"#moves [data-action='{buttons[-1]}']")
        wait_until(page, READY)
        moves += 1
    assert moves >= 3 and hinted and hands_seen_ended == 1 and len(game.env.recorded.hands) == 2
    assert clicked_tiles >= 2 and split_tiles >= 1  # both ways of clicking a tile were taken (seed 7)
    final = game.env.unwrapped.game.hand
    assert drawn_lines(page) == {line: final.line(line) for line in range(4)}
    assert "Game over" in page.text_content("#status")
    with page.expect_download() as download:
        page.click("#download")
    saved = tmp_path / "game.json"
    download.value.save_as(saved)
    recorded = read_record(saved)  # checked by replaying every move
    assert recorded.num_moves == game.env.recorded.num_moves and recorded.players[0] == "you"
    page.close()


def test_a_league_record_is_opened_and_stepped_through(server, browser):
    url, _, records = server
    from baselines.cli import main as dominoes

    assert dominoes(["league", "--policies", "greedy:2", "random:2", "--players", "3", "--highest", "6",
                     "--hands-per-game", "2", "--games", "2", "--workers", "1", "--no-progress",
                     "--out", str(records / "league"), "--record-games", str(records / "games")]) == 0
    name = "games/game_00000001.json"
    recorded = read_record(records / name)
    positions = [p for p in replay(recorded) if p.hand_number == 0]
    page = browser.new_page()
    page.goto(url + "/watch")
    page.click(f"[data-record='{name}']")
    page.wait_for_selector("#table svg")
    assert int(page.evaluate("document.body.dataset.frames")) == len(positions)
    for step in range(6):
        position = positions[step]
        assert page.evaluate("document.body.dataset.position") == str(step)
        assert drawn_lines(page) == {line: position.hand.line(line) for line in range(4)}
        page.click("#forward")
    page.click("#last")
    assert drawn_lines(page) == {line: positions[-1].hand.line(line) for line in range(4)}
    assert page.locator("#alternatives tr.chosen").count() == 1  # the move played, among its alternatives
    page.check("#all-hands")
    assert page.locator("#table g[data-hand]").count() == 3
    page.close()


def test_the_page_says_when_the_server_is_full_and_a_page_of_another_site_gets_nothing(browser):
    store = GameStore(max_games=2)
    url, stop = serve_in_background(create_app(None, store), abandon_all=store.abandon_all)

    def new_game(page):
        page.goto(url + "/")
        page.select_option("#players", "3")
        settled(page, "persistent_line")
        page.fill("#opponent", "greedy")
        page.click("#new-game")
        page.wait_for_selector("body[data-busy='0']")

    try:
        first, second, third, foreign = (browser.new_page() for _ in range(4))
        new_game(first)
        # a page of another origin (this server under another name, the page not the server's: a
        # Content-Security-Policy of its own would stop the fetch before it got here) sends what a cross-site page can
        elsewhere = url.replace("127.0.0.1", "localhost") + "/elsewhere"
        foreign.route(elsewhere, lambda route: route.fulfill(content_type="text/html", body="<p>another site</p>"))
        foreign.goto(elsewhere)
        with foreign.expect_request(url + "/api/games"):
            sent = foreign.evaluate("""async (target) => {
                try {
                    const answer = await fetch(target + "/api/games", {method: "POST", mode: "no-cors",
                        headers: {"Content-Type": "text/plain"}, body: JSON.stringify({opponents: ["greedy"]})});
                    return answer.type;
                } catch (error) { return "network error"; } }""", url)
        # sent, and refused (no game made); the page cannot read the answer (opaque, or a network error
        # where the answer's Cross-Origin-Resource-Policy keeps it from another site)
        assert store.going_on() == 1
        assert sent in ("opaque", "network error")
        new_game(second)
        assert store.going_on() == 2 and second.text_content("#error") == ""
        third.goto(url + "/")  # the server is full: the page says so when it opens, and when asked
        wait_until(third, "document.getElementById('error').textContent !== ''")
        assert "The server is full" in third.text_content("#error")
        third.click("#new-game")
        wait_until(third, "document.getElementById('error').textContent.startsWith('the server is full')")
        for page in (first, second, third, foreign):
            page.close()
    finally:
        stop()


def test_the_page_follows_the_table_logs_the_moves_and_fits_the_window(server, browser):
    """The opponent field follows the table (a default that plays it), every move is logged beside
    the table, a 6-player Mexican Train table fits 1280 pixels, tiles show as pips on request, and no
    request of the page's answers 404 (the icon included)."""
    url, store, _ = server
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    missing = []
    page.on("response", lambda response: missing.append(response.url) if response.status == 404 else None)
    page.goto(url + "/")
    wait_until(page, "document.body.dataset.defaultOpponent === 'champion'")
    page.select_option("#players", "3")
    wait_until(page, "document.body.dataset.defaultOpponent === 'persistent_line'")
    assert page.input_value("#opponent") == "persistent_line"
    page.select_option("#speed", "0")
    page.fill("#seed", "3")
    page.click("#new-game")
    wait_until(page, READY)
    assert page.text_content("#error") == ""
    page.click("#moves [data-action]")  # one move of the person's, then the opponents' up to its next turn
    wait_until(page, READY)
    game = store.get(page.evaluate("document.body.dataset.gameId"))
    logged = page.eval_on_selector_all("#log li", "items => items.map(item => item.textContent)")
    moves = game.env.recorded.num_moves
    assert logged[0].startswith("Hand 1: engine") and len(logged) == 1 + moves and moves >= 2
    assert all(re.search(r"\(player_\d\) (passes|draws|plays \(\d+\|\d+\) on )", entry) for entry in logged[1:])
    page.select_option("#players", "6")
    page.select_option("#highest", "12")
    page.select_option("#rules", "mexican_train")
    wait_until(page, "document.body.dataset.defaultOpponent === 'champion'")
    page.click("#new-game")
    wait_until(page, READY)
    assert page.text_content("#error") == ""
    assert page.evaluate("document.querySelector('#table svg').getBoundingClientRect().right") <= 1280
    assert "Mexican train" in page.text_content("#table")
    digits = page.locator("#table circle").count()
    page.select_option("#tiles", "pips")
    assert page.locator("#table circle").count() > digits  # the hand's tiles drawn with pips
    page.goto(url + "/watch")
    page.wait_for_selector("#directory:not(:empty)")
    assert missing == []
    page.close()


def test_the_opponent_field_shows_the_answer_for_the_table_chosen_last(server, browser):
    """Three changes of the table send three asks; when the answer to an earlier one comes back last, the
    field still shows the default of the table the person chose last (a late answer used to overwrite it)."""
    url, _, _ = server
    page = browser.new_page()
    page.goto(url + "/")
    wait_until(page, "document.body.dataset.defaultOpponent === 'champion'")
    held = []  # the first ask waits for the test
    page.route("**/api/players?players=6&highest=9*", lambda route: held.append(route))
    page.select_option("#players", "6")
    page.select_option("#highest", "12")
    page.select_option("#rules", "mexican_train")
    wait_until(page, "document.body.dataset.defaultOpponent === 'champion'")
    assert len(held) == 1
    with page.expect_response("**/api/players?players=6&highest=9*"):
        held[0].continue_()  # 6 players double-nine by the draw rules: persistent_line's table
    page.evaluate("() => new Promise(requestAnimationFrame)")
    assert page.evaluate("document.body.dataset.defaultOpponent") == "champion"
    assert page.input_value("#opponent") == "champion"
    page.close()


def test_the_watch_page_hides_its_step_controls_until_a_record_is_chosen(server, browser):
    """Before a record is chosen the step controls are hidden (a stylesheet's display once beat the
    hidden attribute), and working them anyway (a click, a drag of the slider, a change of a select)
    raises no error in the page."""
    url, _, _ = server
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(url + "/watch")
    page.wait_for_selector("#directory:not(:empty)")
    assert not page.is_visible("#controls")
    controls = ["first", "back", "play", "forward", "last", "position", "hand", "speed", "all-hands", "tiles"]
    assert [name for name in controls if page.is_visible(f"#{name}")] == []
    for name in ["first", "back", "play", "forward", "last", "all-hands"]:
        page.evaluate("name => document.getElementById(name).click()", name)
    for name, event in [("position", "input"), ("all-hands", "change"), ("tiles", "change"), ("hand", "change")]:
        page.dispatch_event(f"#{name}", event)
    page.evaluate("() => new Promise((resolve) => setTimeout(resolve, 100))")  # the asynchronous handlers run
    assert errors == []
    assert page.text_content("#error") == ""
    page.close()


def list_markers(page, selector):
    """The numbers the browser draws before the items of the list at selector (from its accessibility
    tree: a list's markers are not in the DOM)."""
    session = page.context.new_cdp_session(page)
    try:
        document = session.send("DOM.getDocument")
        node = session.send("DOM.querySelector", {"nodeId": document["root"]["nodeId"], "selector": selector})
        tree = session.send("Accessibility.getPartialAXTree", {"nodeId": node["nodeId"], "fetchRelatives": False})
        root = tree["nodes"][0]["nodeId"]
        full = session.send("Accessibility.getFullAXTree")["nodes"]
    finally:
        session.detach()
    by_id = {entry["nodeId"]: entry for entry in full}

    def markers(entry):
        if entry.get("role", {}).get("value") == "ListMarker":
            yield entry.get("name", {}).get("value", "").strip()
        for child in entry.get("childIds", []):
            if child in by_id:
                yield from markers(by_id[child])

    return list(markers(by_id[root]))


def test_the_move_log_numbers_the_first_move_1(server, browser):
    """The log's heading of the hand is no item of the list: the first move logged is numbered 1, not 2."""
    url, _, _ = server
    page = browser.new_page()
    page.goto(url + "/")
    wait_until(page, "document.body.dataset.defaultOpponent === 'champion'")
    page.select_option("#speed", "0")
    page.fill("#seed", "3")
    page.click("#new-game")
    wait_until(page, READY)
    if page.locator("#log li:not(.log-hand)").count() == 0:  # the person moves first: one move of theirs
        page.click("#moves [data-action]")
        wait_until(page, READY)
    moves = page.locator("#log li:not(.log-hand)").count()
    assert moves >= 1
    numbers = list_markers(page, "#log")
    assert numbers == [f"{k}." for k in range(1, moves + 1)]
    page.close()
