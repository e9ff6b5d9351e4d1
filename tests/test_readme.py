"""The README's quickstart runs as written (its Python blocks, in order, in one namespace)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has no Python example"
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    scores = namespace["info"]["hand_scores"]
    assert len(scores) == 4 and min(scores) >= 0
    assert namespace["action"] in set(namespace["observation"]["action_mask"].nonzero()[0].tolist())
