"""docs/tree.md is what render_tree.py makes of the tree the code builds."""

from __future__ import annotations

from salamander_testing import REPO

CELL = REPO / "config" / "cell.yaml"


def test_docs_tree_md_shows_the_tree_the_code_builds() -> None:
    from salamander_behavior.render_tree import example_tree, tree_markdown

    committed = (REPO / "docs" / "tree.md").read_text(encoding="utf-8")
    assert committed == tree_markdown(example_tree(CELL)), (
        "regenerate: python -m salamander_behavior.render_tree"
    )
    assert (REPO / "docs" / "tree.png").stat().st_size > 10_000
