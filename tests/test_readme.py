"""Every Python snippet of the README and of docs/ runs on its own, as a reader would paste it."""

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


@pytest.fixture
def registry_restored():
    """A snippet may register a policy of its own; the registry is put back afterwards."""
    from baselines import registry as policy

    policy.policy_names()  # the built-in policies are registered before the registry is saved
    saved = dict(policy._REGISTRY)
    yield
    for name in set(policy._REGISTRY) - set(saved) - set(policy._LAZY_POLICIES):
        del policy._REGISTRY[name]  # a learned policy a snippet loaded stays: its module is imported for good
    policy._REGISTRY.update(saved)


@pytest.mark.parametrize("path, index, block", SNIPPETS,
                         ids=[f"{path.relative_to(ROOT)}#{index}" for path, index, _ in SNIPPETS])
def test_snippet_runs_on_its_own(path, index, block, registry_restored):
    namespace: dict = {"__name__": "__snippet__"}  # a fresh namespace: nothing carried from another snippet
    exec(compile(block, f"{path.name} snippet {index}", "exec"), namespace)
