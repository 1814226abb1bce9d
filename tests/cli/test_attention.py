"""`kerasformer attention` on every kind of export, each run in a fresh interpreter.

The translator and language model are in test_translate_generate.py, beside the
exports they train; the MiniLM ones in test_minilm_end_to_end.py.
"""

import pytest

from kerasformer.export import load_keras_model
from kerasformer.models import classifier_attention_maps
from tests.helpers.cli import assert_one_line_error
from tests.helpers.pictures import assert_not_blank, plotly_traces, read_png
from tests.helpers.processes import run_commands


@pytest.fixture(scope="module")
def classifier_and_answerer_runs(tiny_transformer, trained_question_answerer, tmp_path_factory):
    root = tmp_path_factory.mktemp("attention")
    classifier, answerer = tiny_transformer.export_dir, trained_question_answerer.export_dir
    (root / "notes.html").write_text("my notes", encoding="utf-8")
    runs = run_commands(
        ["attention", classifier, "team goal bank", "--out", root / "heads.png",
         "--html", root / "classifier.html"],
        ["attention", classifier, "team goal bank", "--head", "1", "--out", root / "head.png"],
        ["attention", answerer, "which team", "--context", "the striker bank today",
         "--out", root / "qa.png", "--html", root / "qa.html", "--head", "0", "--layer", "1"],
        ["attention", answerer, "which team"],
        ["attention", classifier, b"caf\xe9 team".decode("utf-8", "surrogateescape")],
        ["attention", classifier, "team", "--html", root / "notes.html"],
    )  # fmt: skip
    return root, runs


def test_classifier_attention_writes_a_png_and_an_offline_page(
    classifier_and_answerer_runs, tiny_transformer
):
    root, (heads, head, *_) = classifier_and_answerer_runs
    assert heads["code"] == 0, heads["stderr"]
    assert "3 tokens: team goal bank" in heads["stdout"]
    assert_not_blank(read_png(root / "heads.png"))
    page = (root / "classifier.html").read_text(encoding="utf-8")
    assert page.lstrip().lower().startswith("<!doctype html")
    assert "<script src=" not in page  # plotly.js is inside, so the page works offline
    (expected,) = classifier_attention_maps(
        load_keras_model(tiny_transformer.export_dir), "team goal bank"
    )
    assert plotly_traces(page) == expected.layers * expected.heads
    assert head["code"] == 0, head["stderr"]
    assert "layer 0, head 1" in head["stdout"]
    assert_not_blank(read_png(root / "head.png"))


def test_question_answerer_attention_covers_question_and_context(classifier_and_answerer_runs):
    root, (_, _, qa, no_context, *_) = classifier_and_answerer_runs
    assert qa["code"] == 0, qa["stderr"]
    tokens = qa["stdout"].splitlines()[0]
    assert tokens == "9 tokens: [CLS] [UNK] team [SEP] the striker bank today [SEP]"
    assert_not_blank(read_png(root / "qa.png"))
    page = (root / "qa.html").read_text(encoding="utf-8")
    assert plotly_traces(page) == 2 * 2  # the tiny BERT: 2 layers of 2 heads
    assert no_context["code"] == 2 and no_context["stderr"].count("\n") == 1
    assert (
        "is a question answerer; give the question as TEXT and the paragraph"
        in (no_context["stderr"])
    )


def test_attention_refuses_bad_text_and_unknown_output_kinds(classifier_and_answerer_runs):
    root, (*_, not_utf8, over_notes) = classifier_and_answerer_runs
    assert not_utf8["code"] == 2 and not_utf8["stderr"].count("\n") == 1
    assert "TEXT is not valid UTF-8 (byte 0xe9" in not_utf8["stderr"]
    assert over_notes["code"] == 2 and over_notes["stderr"].count("\n") == 1
    assert "exists and is not an HTML page" in over_notes["stderr"]
    assert (root / "notes.html").read_text(encoding="utf-8") == "my notes"


def test_a_tagger_has_no_attention_view_yet_and_says_so(tiny_taggers, tmp_path):
    (result,) = run_commands(
        ["attention", str(tiny_taggers["rnn"]), "Marie Curie visited Paris .", "--out",
         str(tmp_path / "a.png")]
    )  # fmt: skip
    assert_one_line_error(result, "is a tagger, and taggers have no attention view yet")
    assert not (tmp_path / "a.png").exists()
