"""The documentation site: it builds strictly, its API reference carries the public names'
docstrings, and every link in it (and in the README) resolves.

`mkdocs build --strict` (with mkdocs.yml's `validation`, anchors included) already fails on
a warning or a broken link between pages; the built site's links are checked here too, so
a link to an image or a notebook that the build copied wrong fails as well. The build
takes a few seconds: the notebook is converted, not executed.
"""

from __future__ import annotations

import html
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _text(page: str) -> str:
    """A built page's words: tags dropped, entities decoded, spaces collapsed."""
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body)))


def _letters(text: str) -> str:
    """`text` without its spaces: a tag between two words may or may not leave one."""
    return re.sub(r"\s+", "", text)


def _words(doc: str) -> str:
    """A docstring's first paragraph as the page shows it (inline code marks dropped),
    without spaces (compare with `_letters` of the page)."""
    first = inspect.cleandoc(doc).split("\n\n")[0]
    return _letters(first.replace("`", ""))


def _local_targets(page: Path, site: Path) -> list[tuple[str, Path]]:
    """Every relative href/src of a built page, with the file it points at."""
    out = []
    for ref in re.findall(r'(?:href|src)="([^"]+)"', page.read_text(encoding="utf-8")):
        url = urlparse(html.unescape(ref))
        if url.scheme or url.netloc or not url.path:  # other sites, mailto:, #anchors
            continue
        path = unquote(url.path)  # 404.html links from the site's root: it is served anywhere
        target = (site / path.lstrip("/") if path.startswith("/") else page.parent / path).resolve()
        if target.is_dir():
            target = target / "index.html"
        out.append((ref, target))
    return out


@pytest.mark.timeout(60)
def test_the_site_builds_strictly_with_the_api_reference_and_every_link(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=55,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert "WARNING" not in result.stderr, result.stderr

    # the API reference is generated from the public names' docstrings
    from tempsup import RunConfig, from_torch, train

    reference = _letters(_text((site / "reference" / "api.html").read_text(encoding="utf-8")))
    for obj in (RunConfig, train, from_torch):
        assert _words(obj.__doc__) in reference, obj.__name__

    # the pages a newcomer is sent to are there
    units = site / "researchers" / "loss-units.html"
    assert units.is_file()
    assert "a per-element MSE of 0.027 shows as about 0.53" in _text(units.read_text("utf-8"))
    assert (site / "examples" / "python_api.html").is_file()  # the notebook, rendered

    # every local link and image of every page points at a file the build wrote
    broken = [
        f"{page.relative_to(site)}: {ref}"
        for page in site.rglob("*.html")
        for ref, target in _local_targets(page, site)
        if not target.exists()
    ]
    assert not broken, broken


def test_the_readmes_links_into_the_docs_resolve() -> None:
    """The README links to docs/*.md relatively, so they work where the repository is read
    (GitHub, a clone); each must name a file that exists, and its picture too."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    refs = re.findall(r"\]\(([^)\s]+)\)", readme)
    local = [ref for ref in refs if not urlparse(ref).scheme]
    assert any(ref.startswith("docs/") and ref.endswith(".md") for ref in local)
    missing = [ref for ref in local if not (ROOT / unquote(ref.split("#")[0])).exists()]
    assert not missing, missing
    assert len(readme.splitlines()) <= 150, "the README stays short: the rest is in docs/"
