"""The Python examples of the README and of the documentation site's pages (their ```python
blocks with >>> prompts), run as doctests: each file in one namespace, in order."""
import doctest
import pathlib
import re
import textwrap

import pytest

ROOT = pathlib.Path(__file__).parents[3]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))


def examples(path: pathlib.Path) -> list[str]:
    blocks = re.findall(r"```(?:python|py|pycon)\n(.*?)```", path.read_text(), re.S)
    return [textwrap.dedent(b) for b in blocks if ">>>" in b]


def test_the_readme_and_the_ragged_page_have_examples():
    assert examples(ROOT / "README.md") and examples(ROOT / "docs" / "concepts" / "ragged.md")


@pytest.mark.parametrize("page", [p for p in PAGES if examples(p)],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_python_examples(page: pathlib.Path):
    blocks = examples(page)
    test = doctest.DocTestParser().get_doctest("\n".join(blocks), {}, page.name, str(page), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0 and runner.tries >= 2
