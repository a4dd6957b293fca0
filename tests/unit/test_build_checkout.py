"""`make build` refuses to build a checkout with another checkout's code (a copied .venv)."""

from pathlib import Path

from rec11.book import build

ROOT = Path(__file__).resolve().parents[2]


def test_this_checkout_builds_its_own_code():
    assert build.foreign_package(ROOT) is None


def test_a_copied_checkout_is_refused_with_the_fix(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'rec11'\n")
    (tmp_path / "src" / "rec11").mkdir(parents=True)
    problem = build.foreign_package(tmp_path)
    assert problem and str(tmp_path / "src" / "rec11") in problem and "rm -rf .venv" in problem
    assert build.main(["--book", str(tmp_path)]) == 1  # before it trains or runs anything
    assert capsys.readouterr().err.strip().endswith("Fix: rm -rf .venv, then make build again.")


def test_a_book_without_a_package_of_its_own_uses_the_installed_one(tmp_path):
    (tmp_path / "src" / "rec11").mkdir(parents=True)  # a throw-away book: no pyproject.toml
    assert build.foreign_package(tmp_path) is None
