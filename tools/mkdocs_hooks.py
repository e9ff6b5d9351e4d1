"""MkDocs hooks: the site is built from docs/ as it stands, plus the README (the home page), the
CHANGELOG, CONTRIBUTING, the training recipes, the notes of benchmarks/results/ and the example
scripts, pulled in as pages, with every repository-relative link rewritten to the page it became.
The files stay as they are, so docs/ keeps working on its own for readers of the repository."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
#: repository files that become pages: repository path -> page path in the site
PAGES = {"README.md": "index.md", "CHANGELOG.md": "changelog.md", "CONTRIBUTING.md": "contributing.md",
         "baselines/checkpoints/TRAINING.md": "training.md",
         #: the notes of each study (every run with its command, date and machine) as the Results pages
         **{path.relative_to(ROOT).as_posix(): f"results/{path.name}"
            for path in sorted((ROOT / "benchmarks" / "results").glob("*.md"))}}
EXAMPLES = sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "examples").glob("*.py"))
LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s#]+)(#[^)\s]*)?\)")


def _page_of(repository_path: str) -> str | None:
    if repository_path.startswith("docs/"):
        return repository_path[len("docs/"):]
    if repository_path in PAGES:
        return PAGES[repository_path]
    if repository_path in EXAMPLES:
        return "examples/" + Path(repository_path).stem + ".md"
    return None


def _source_of(page: str) -> str:
    """The repository path a page comes from."""
    for source, target in PAGES.items():
        if target == page:
            return source
    if page.startswith("examples/") and f"examples/{Path(page).stem}.py" in EXAMPLES:
        return f"examples/{Path(page).stem}.py"
    return "docs/" + page


def on_files(files: Files, config: Any) -> Files:
    for source, page in PAGES.items():
        files.append(File.generated(config, page, content=(ROOT / source).read_text()))
    for source in EXAMPLES:
        name = Path(source).name
        text = (ROOT / source).read_text()
        files.append(File.generated(config, f"examples/{Path(source).stem}.md",
                                    content=f"# {name}\n\n`{source}`, run as `python {source}`:\n\n"
                                            f"```python\n{text}```\n"))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    source = _source_of(page.file.src_uri)
    here = posixpath.dirname(page.file.src_uri)

    def rewrite(match: re.Match[str]) -> str:
        opening, target, anchor = match.group(1), match.group(2), match.group(3) or ""
        if "://" in target or target.startswith("mailto:"):
            return match.group(0)
        repository_path = posixpath.normpath(posixpath.join(posixpath.dirname(source), target))
        page_path = _page_of(repository_path)
        if page_path is None:
            return match.group(0)  # left as it is: strict mode says if it leads nowhere
        return f"{opening}{posixpath.relpath(page_path, here or '.')}{anchor})"

    return LINK.sub(rewrite, markdown)


#: a docstring's Sphinx-style reference as Markdown renders it: ``:class:`~a.b.C``` -> ``:class:<code>~a.b.C</code>``
ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):<code>(~?)([\w.]+)(\(\))?</code>")


def on_page_content(html: str, page: Any, config: Any, files: Files) -> str:
    """Docstrings name things the Sphinx way (``:class:`~a.b.C```), readable in ``help()``; the site
    shows the name as code (``C`` for ``~a.b.C``). That every such name exists is a test
    (tests/test_layers.py), so a renamed or moved name fails the run."""
    return ROLE.sub(lambda m: f"<code>{m.group(2).rsplit('.', 1)[-1] if m.group(1) else m.group(2)}{m.group(3) or ''}"
                              f"</code>", html)
