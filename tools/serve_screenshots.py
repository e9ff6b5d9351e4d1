"""The screenshots of dominoes serve in the README and docs/serve.md, made in the system's Chromium.

    python tools/serve_screenshots.py [--out docs/images]

Plays the first moves of a seeded game (4 players, double-nine, three td_lambda) on the play
page and asks for a hint; records a league game of three players and steps into it on the
watch page, every hand visible. Needs the web and browser extras and Chromium
(``apt-get install chromium``).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from baselines.cli import main as dominoes
from baselines.web.app import create_app
from baselines.web.cli import serve_in_background

SIZE = {"width": 1280, "height": 860}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/images"), help="where the PNGs go (default docs/images)")
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        parser.error("no Chromium found: apt-get install chromium")
    with tempfile.TemporaryDirectory() as records:
        dominoes(["league", "--policies", "td_lambda", "persistent_line", "greedy", "random", "--games", "1",
                  "--hands-per-game", "2", "--workers", "1", "--no-progress", "--seed", "4", "--out",
                  f"{records}/league", "--record-games", f"{records}/games"])
        url, stop = serve_in_background(create_app(records))
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
                page = browser.new_page(viewport=SIZE)
                page.goto(url + "/")
                page.wait_for_selector("body[data-default-opponent='champion']")  # the offers are in (the CSP: no eval)
                page.fill("#opponent", "td_lambda")
                page.select_option("#speed", "0")
                page.fill("#hands", "3")
                page.fill("#seed", "1")
                page.click("#new-game")
                page.wait_for_selector("body[data-busy='0']")
                for _ in range(3):
                    page.click("#moves [data-action]")
                    page.wait_for_selector("body[data-busy='0']")
                page.click("#hint")
                page.wait_for_selector("body[data-hinted='1']")
                page.screenshot(path=str(args.out / "serve_play.png"), full_page=True)
                page.goto(url + "/watch")
                page.click("[data-record='games/game_00000000.json']")
                page.wait_for_selector("#table svg")
                page.check("#all-hands")
                for _ in range(14):
                    page.click("#forward")
                page.screenshot(path=str(args.out / "serve_watch.png"), full_page=True)
                browser.close()
        finally:
            stop()
    print(f"wrote {args.out / 'serve_play.png'} and {args.out / 'serve_watch.png'}")


if __name__ == "__main__":
    main()
