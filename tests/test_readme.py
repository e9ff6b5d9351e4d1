"""Every Python snippet of the README and of docs/ runs on its own, as a reader would paste it, and
CI runs the README's two commands."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
SNIPPETS = [(path, index, block) for path in DOCUMENTS
            for index, block in enumerate(re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S))]


def test_the_readme_has_python_examples():
    assert any(path.name == "README.md" for path, _, _ in SNIPPETS)


def test_the_pages_stay_short_enough_to_teach():
    """The README fits in 150 lines and a docs page in 250 (the rule book excepted): a page leads
    with what a thing is, how to use it and its headline figures; the history of runs lives in
    benchmarks/results/, one notes file per study, and a longer subject gets a second page."""
    assert len((ROOT / "README.md").read_text().splitlines()) <= 150
    long_pages = {path.relative_to(ROOT).as_posix(): lines for path in (ROOT / "docs").rglob("*.md")
                  if path.name != "RULES.md" and (lines := len(path.read_text().splitlines())) > 250}
    assert not long_pages, long_pages


@pytest.fixture
def registry_restored():
    """A snippet may register a policy of its own; the registry is put back afterwards."""
    from baselines.policies import registry as policy

    policy.policy_names()  # the built-in policies are registered before the registry is saved
    saved = dict(policy._REGISTRY)
    yield
    for name in set(policy._REGISTRY) - set(saved) - set(policy._LAZY_POLICIES):
        del policy._REGISTRY[name]  # a learned policy a snippet loaded stays: its module is imported for good
    policy._REGISTRY.update(saved)


def _quickstart(namespace: dict) -> None:
    """A whole hand of random play: four non-negative scores, who went out among the seats, and
    the last observation decoded for a seat of the table."""
    info = namespace["info"]
    assert len(info["hand_scores"]) == 4 and min(info["hand_scores"]) >= 0
    assert info["went_out"] is None or info["went_out"] in range(4)
    assert len(namespace["view"]["hand_sizes"]) == 4


def _one_policy_move(namespace: dict) -> None:
    """The policy chose a legal move of the position it saw."""
    assert namespace["observation"]["action_mask"][namespace["action"]] == 1
    assert "persistent_line" in namespace["policy_names"]()


def _evaluation(namespace: dict) -> None:
    result = namespace["result"]
    assert sorted(result.labels) == ["double", "persistent_line", "random", "td_lambda"]
    assert all(result[label].hands == 200 for label in result.labels)
    assert result["td_lambda"].mean_pips < result["random"].mean_pips


def _single_agent_step(namespace: dict) -> None:
    env = namespace["env"]
    assert namespace["observation"] in env.observation_space and namespace["info"]["seat"] in range(4)
    assert namespace["reward"] == 0 or namespace["terminated"]  # a reward only when the hand ends


#: What the first snippets a newcomer meets must have done besides running: (document, index of the
#: snippet in it) -> its check. The README's example, then the first steps of docs/quickstart.md
#: and the single-agent view of docs/integrations/index.md.
CHECKS = {("README.md", 0): _quickstart, ("docs/quickstart.md", 0): _one_policy_move,
          ("docs/quickstart.md", 1): _evaluation, ("docs/integrations/index.md", 0): _single_agent_step}


def test_every_readme_snippet_has_its_check():
    """Each checked document's snippets all have their checks, and each check its snippet."""
    documents = {document for document, _ in CHECKS}
    snippets = {(path.relative_to(ROOT).as_posix(), index) for path, index, _ in SNIPPETS}
    assert set(CHECKS) <= snippets
    assert {(document, index) for document, index in snippets if document in documents} == set(CHECKS)


@pytest.mark.parametrize("path, index, block", SNIPPETS,
                         ids=[f"{path.relative_to(ROOT)}#{index}" for path, index, _ in SNIPPETS])
def test_snippet_runs_on_its_own(path, index, block, registry_restored):
    namespace: dict = {"__name__": "__snippet__"}  # a fresh namespace: nothing carried from another snippet
    exec(compile(block, f"{path.name} snippet {index}", "exec"), namespace)
    check = CHECKS.get((path.relative_to(ROOT).as_posix(), index))
    if check is not None:
        check(namespace)


def _readme_commands() -> list[str]:
    """The README's two commands: the bash blocks of its "Two commands" section, in order (the
    main job, then the tests)."""
    section = (ROOT / "README.md").read_text().split("\n## Two commands\n", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, flags=re.S)]


def test_ci_runs_the_readme_commands():
    """CI runs the README's test command verbatim (on a fresh venv, its output piped to a log), and
    the main job as a new user meets it: the package installed with the README's extra, then
    `dominoes league` (.ci/wheel_smoke, which .ci/run runs: from the built wheel, outside the
    checkout, with fewer games)."""
    main_job, tests = _readme_commands()
    ci_run = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert any(line == tests or line.startswith(tests + " | ") for line in ci_run), tests

    install, _, job = main_job.partition(" && ")
    assert job == "dominoes league", main_job
    extra = re.fullmatch(r'python -m pip install -e "\.\[(\w+)\]"', install)
    assert extra, install
    assert "bash .ci/wheel_smoke" in ci_run
    smoke = (ROOT / ".ci" / "wheel_smoke").read_text()
    installed = [set(extras.split(",")) for extras in re.findall(r"pip install .*\.whl\W*\[([\w,]+)\]", smoke)]
    assert any(extra.group(1) in extras for extras in installed), installed
    assert re.search(r"^dominoes league\b", smoke, flags=re.M)
