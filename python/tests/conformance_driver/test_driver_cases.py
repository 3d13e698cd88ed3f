"""Finding the corpus and loading cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from checkout import CORPUS, from_checkout
from driver_support import make_case, write_cases

from harnessweaver.conformance import cases as cases_module
from harnessweaver.conformance.cases import (
    CORPUS_ENV,
    CaseLoadError,
    CorpusNotFound,
    find_corpus,
    load_cases,
    select,
)


def make_corpus(root: Path, version: str = "1.2.3") -> Path:
    corpus = root / "conformance"
    (corpus / "cases").mkdir(parents=True)
    (corpus / "expectations").mkdir()
    (corpus / "VERSION").write_text(f"{version}\n", encoding="utf-8")
    (corpus / "catalogue.json").write_text("{}", encoding="utf-8")
    return corpus


def test_cases_are_loaded_recursively_sorted_by_id_with_their_source(tmp_path: Path) -> None:
    first = write_cases(tmp_path, [make_case("b.two"), make_case("b.one")], "area/b.json")
    second = write_cases(tmp_path, [make_case("a.only")], "a.json")
    (tmp_path / "notes.json").write_text('{"not": "a case file"}', encoding="utf-8")
    (tmp_path / "list.json").write_text("[1, 2]", encoding="utf-8")
    loaded = load_cases(tmp_path)
    assert [case.id for case in loaded] == ["a.only", "b.one", "b.two"]
    assert [case.source for case in loaded] == [second, first, first]
    assert loaded[1].data["description"] == "case b.one"


def test_duplicate_ids_across_files_name_both_files(tmp_path: Path) -> None:
    one = write_cases(tmp_path, [make_case("same.id")], "one.json")
    two = write_cases(tmp_path, [make_case("same.id")], "two.json")
    with pytest.raises(CaseLoadError) as caught:
        load_cases(tmp_path)
    message = str(caught.value)
    assert "'same.id'" in message and str(one) in message and str(two) in message


@pytest.mark.parametrize("bad_id", ["Upper.case", "trailing.", "two..dots", "under_score", ""])
def test_ids_must_match_the_pattern(tmp_path: Path, bad_id: str) -> None:
    path = write_cases(tmp_path, [make_case(bad_id)])
    with pytest.raises(CaseLoadError, match="id must match") as caught:
        load_cases(tmp_path)
    assert str(path) in str(caught.value)


def test_missing_required_keys_name_the_file_and_the_case(tmp_path: Path) -> None:
    case = make_case("no.then")
    del case["then"]
    del case["given"]
    path = write_cases(tmp_path, [make_case("fine"), case])
    with pytest.raises(CaseLoadError) as caught:
        load_cases(tmp_path)
    assert str(caught.value) == f"{path}: case 'no.then' lacks required key(s): given, then"


def test_case_without_id_is_named_by_position(tmp_path: Path) -> None:
    case = make_case("x")
    del case["id"]
    write_cases(tmp_path, [case])
    with pytest.raises(CaseLoadError, match=r"cases\[0\] lacks required key\(s\): id"):
        load_cases(tmp_path)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"features": "concurrency"}, "features must be a list of strings"),
        ({"when": {}}, "when must be a JSON array"),
        ({"then": {"excludes": "secret"}}, "then.excludes must be a list of strings"),
        ({"then": {"error": {"message": {"$startswith": "x"}}}}, "unknown matcher"),
        ({"description": ""}, "description must be a non-empty string"),
    ],
)
def test_shape_problems_are_reported(
    tmp_path: Path, change: dict[str, object], problem: str
) -> None:
    write_cases(tmp_path, [make_case("shape.case", **change)])  # type: ignore[arg-type]
    with pytest.raises(CaseLoadError, match=r"case 'shape\.case'") as caught:
        load_cases(tmp_path)
    assert problem in str(caught.value)


def test_invalid_json_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text('{"cases": [', encoding="utf-8")
    with pytest.raises(CaseLoadError, match=r"broken\.json: cannot read JSON"):
        load_cases(tmp_path)


@pytest.mark.parametrize("depth", [129, 100_000])
def test_a_case_file_nested_too_deeply_names_the_file(tmp_path: Path, depth: int) -> None:
    text = '{"cases": [{"id": "a.b", "given": ' + "[" * depth + "]" * depth + "}]}"
    (tmp_path / "deep.json").write_text(text, encoding="utf-8")
    with pytest.raises(CaseLoadError, match=r"deep\.json: cannot read JSON: arrays and objects"):
        load_cases(tmp_path)


def test_a_directory_without_case_files_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "schema.json").write_text("{}", encoding="utf-8")
    with pytest.raises(CaseLoadError, match="no case files"):
        load_cases(tmp_path)


def test_corpus_from_environment(tmp_path: Path) -> None:
    corpus = make_corpus(tmp_path / "elsewhere")
    assert find_corpus(tmp_path, {CORPUS_ENV: str(corpus)}) == corpus
    with pytest.raises(CorpusNotFound, match="not a directory"):
        find_corpus(tmp_path, {CORPUS_ENV: str(tmp_path / "missing")})


def test_corpus_found_walking_up_from_cwd(tmp_path: Path) -> None:
    corpus = make_corpus(tmp_path / "repo")
    deep = tmp_path / "repo" / "python" / "pkg"
    deep.mkdir(parents=True)
    assert find_corpus(deep, {}) == corpus
    assert find_corpus(corpus / "cases", {}) == corpus


def test_a_conformance_dir_without_markers_is_not_a_corpus(tmp_path: Path) -> None:
    (tmp_path / "repo" / "conformance" / "cases").mkdir(parents=True)
    fallback = make_corpus(tmp_path / "checkout")
    assert find_corpus(tmp_path / "repo", {}, checkout=fallback) == fallback


@from_checkout
def test_source_checkout_is_the_last_resort(tmp_path: Path) -> None:
    checkout = Path(__file__).resolve().parents[3] / "conformance"
    assert checkout == cases_module.CHECKOUT_CORPUS
    assert find_corpus(tmp_path, {}) == cases_module.CHECKOUT_CORPUS


def test_no_corpus_anywhere_tells_the_user_to_pass_cases(tmp_path: Path) -> None:
    with pytest.raises(CorpusNotFound, match="--cases"):
        find_corpus(tmp_path, {}, checkout=tmp_path / "nothing")


def test_select_default_corpus_uses_its_cases_expectations_and_version(tmp_path: Path) -> None:
    corpus = make_corpus(tmp_path)
    selection = select(None, None, cwd=tmp_path, environ={})
    assert selection.cases_dir == corpus / "cases"
    assert selection.expectations_dir == corpus / "expectations"
    assert selection.corpus_version == "1.2.3"
    other = tmp_path / "mine"
    assert select(None, other, cwd=tmp_path, environ={}).expectations_dir == other


def test_select_with_cases_applies_no_default_expectations(tmp_path: Path) -> None:
    corpus = make_corpus(tmp_path)
    selection = select(corpus / "cases", None, cwd=tmp_path, environ={})
    assert selection.expectations_dir is None
    assert selection.corpus_version == "1.2.3"
    loose = tmp_path / "loose"
    loose.mkdir()
    assert select(loose, tmp_path / "exp", environ={}).expectations_dir == tmp_path / "exp"
    assert select(loose, None, environ={}).corpus_version is None
    with pytest.raises(CaseLoadError, match="not a directory"):
        select(tmp_path / "missing", None, environ={})


def test_the_repository_catalogue_parses() -> None:
    catalogue = CORPUS / "catalogue.json"
    hooks = json.loads(catalogue.read_text(encoding="utf-8"))["hooks"]
    assert len(hooks) == 8
