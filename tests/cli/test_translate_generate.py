"""`kerasformer train --task translation|language-model`, then `translate` and `generate`."""

import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from kerasformer.backend import tf
from kerasformer.export.generator_export import load_generator
from kerasformer.models.generation import Sampling
from tests.helpers.cli import run_cli, run_cli_expecting_exit, run_cli_in_fixture
from tests.helpers.data import LM_WORDS, SPANISH, write_spa_txt, write_wiki_tokens
from tests.helpers.pictures import assert_not_blank, plotly_traces, read_png
from tests.helpers.processes import run_commands

# Trains or starts several TensorFlow processes per test: out of the quick tier.
pytestmark = pytest.mark.slow

MAXLEN = 10  # translation: words per sentence
LM_WINDOW = 16
TINY_TRANSLATOR_FLAGS = {
    "transformer": [
        "--embed-dim", "8", "--num-heads", "2", "--ff-dim", "8", "--num-layers", "1",
    ],
    "rnn": ["--embed-dim", "8", "--units", "8"],
}  # fmt: skip


def assert_one_line_error(code, out, err, *fragments):
    assert code == 2, err
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("kerasformer: error: "), err
    for fragment in fragments:
        assert fragment in err


@pytest.fixture(scope="module")
def spa_dir(tmp_path_factory) -> Path:
    return write_spa_txt(tmp_path_factory.mktemp("spa-eng"))


def train_translator_cli(model, spa_dir, export_dir):
    return run_cli_in_fixture(
        "train", "--task", "translation", "--model", model, "--data-dir", str(spa_dir),
        "--export-dir", str(export_dir), "--epochs", "1", "--batch-size", "16",
        "--maxlen", str(MAXLEN), "--vocab-size", "40", *TINY_TRANSLATOR_FLAGS[model],
    )  # fmt: skip


@pytest.fixture(scope="module")
def trained_translators(spa_dir, tmp_path_factory):
    """``model -> (status, stdout, stderr, export directory)`` of `kerasformer train`."""
    root = tmp_path_factory.mktemp("translators")
    return {
        model: (*train_translator_cli(model, spa_dir, root / model), root / model)
        for model in ("transformer", "rnn")
    }


@pytest.fixture(scope="module")
def trained_language_model(tmp_path_factory):
    root = tmp_path_factory.mktemp("language-model")
    export_dir = root / "export"
    ran = run_cli_in_fixture(
        "train", "--task", "language-model", "--data-dir", str(write_wiki_tokens(root / "wiki")),
        "--export-dir", str(export_dir), "--epochs", "1", "--batch-size", "8",
        "--maxlen", str(LM_WINDOW), "--embed-dim", "8", "--num-heads", "2", "--ff-dim", "8",
        "--num-layers", "1", "--tie-embeddings", "--adaptive-cutoffs", "4", "9",
        "--weight-decay", "0.01", "--clip-norm", "1", "--lr-schedule", "cosine",
        "--warmup-fraction", "0.2",
    )  # fmt: skip
    return (*ran, export_dir)


@pytest.mark.parametrize("model", ["transformer", "rnn"])
def test_train_translation_prints_scores_and_exports(trained_translators, model):
    code, out, err, export_dir = trained_translators[model]
    assert code == 0, err[-3000:]
    assert "bleu" in out and "chrf" in out
    assert f"Exported to {export_dir}" in out
    for name in ("saved_model.pb", "model.keras", "translator.json", "metrics.json"):
        assert (export_dir / name).is_file(), name


@pytest.mark.parametrize("model", ["transformer", "rnn"])
def test_translate_prints_one_line_per_sentence(capsys, trained_translators, model):
    export_dir = trained_translators[model][-1]
    sentences = ["Three one four.", "nine two", "Seven seven eight five."]
    code, out, err = run_cli(capsys, "translate", str(export_dir), *sentences)
    assert code == 0, err
    lines = out.split("\n")
    assert lines[-1] == "" and len(lines) == len(sentences) + 1, out
    spanish = {*SPANISH, ".", "[unk]"}  # an untrained model may write the unknown word
    for line in lines[:-1]:
        words = line.lower().replace(".", " . ").split()
        assert set(words) <= spanish, line  # words of the target vocabulary only


@pytest.mark.parametrize("model", ["transformer", "rnn"])
def test_translate_draws_the_alignment(capsys, trained_translators, model, tmp_path):
    export_dir = trained_translators[model][-1]
    picture = tmp_path / "out.png"
    code, out, err = run_cli(
        capsys, "translate", str(export_dir), "Three one four.", "--alignment", str(picture)
    )
    assert code == 0, err
    assert out.splitlines()[-1] == f"Alignment written to {picture}"
    assert len(out.splitlines()) == 2  # the translation, then where the picture is
    assert_not_blank(read_png(picture))


def feed_stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def test_translate_refuses_an_empty_sentence_alone(capsys, trained_translators):
    export_dir = trained_translators["transformer"][-1]
    alone = run_cli(capsys, "translate", str(export_dir), "nine two")[1]
    code, out, err = run_cli(capsys, "translate", str(export_dir), "nine two", "")
    assert (code, out) == (1, alone + "\n")  # an empty line keeps the lines in step
    assert err == (
        "kerasformer: error: sentence argument 2 has no words to translate; pass some text.\n"
    )


def test_translate_refuses_an_over_long_sentence_alone(capsys, trained_translators):
    export_dir = trained_translators["rnn"][-1]
    too_long = " ".join(["one"] * (MAXLEN + 1))
    code, out, err = run_cli(capsys, "translate", str(export_dir), too_long, "--json")
    assert code == 1
    record = json.loads(out)
    assert record["status"] == "error" and record["input"] == 1
    assert f"{MAXLEN + 1} words" in record["message"] and f"model's {MAXLEN}" in err


@pytest.mark.parametrize("model", ["transformer", "rnn"])
def test_translate_reads_standard_input_one_record_per_line(
    capsys, monkeypatch, trained_translators, model
):
    export_dir = trained_translators[model][-1]
    sentences = ["Three one four.", "nine two", "Seven seven eight five."]
    expected = run_cli(capsys, "translate", str(export_dir), *sentences)[1].splitlines()
    feed_stdin(monkeypatch, b"nine two\n\xffbad\nSeven seven eight five.\n")
    code, out, err = run_cli(capsys, "translate", str(export_dir), "Three one four.", "-",
                             "--json")  # fmt: skip
    assert code == 1
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["input"] for r in records] == [1, 2, 3, 4]
    assert [r["status"] for r in records] == ["ok", "ok", "error", "ok"]
    assert [r.get("translation") for r in records] == [*expected[:2], None, expected[2]]
    assert "line 2 of standard input is not valid UTF-8" in records[2]["message"]
    assert err.count("\n") == 1


def test_translate_reads_an_input_file(capsys, trained_translators, tmp_path):
    export_dir = trained_translators["transformer"][-1]
    expected = run_cli(capsys, "translate", str(export_dir), "nine two", "one")[1]
    (tmp_path / "in.txt").write_text("nine two\none\n", encoding="utf-8")
    code, out, _ = run_cli(
        capsys, "translate", str(export_dir), "--input-file", str(tmp_path / "in.txt")
    )
    assert (code, out) == (0, expected)


def test_translate_refuses_a_layer_the_model_does_not_have(capsys, trained_translators, tmp_path):
    export_dir = trained_translators["transformer"][-1]
    picture = tmp_path / "out.png"
    code, _, err = run_cli(
        capsys, "translate", str(export_dir), "nine two", "--alignment", str(picture),
        "--layer", "5",
    )  # fmt: skip
    assert code == 2
    assert err == (
        "kerasformer: error: --layer 5: the model has 1 decoder block(s), counted from 0.\n"
    )
    assert not picture.exists()


def test_train_language_model_prints_perplexity_and_exports(trained_language_model):
    code, out, err, export_dir = trained_language_model
    assert code == 0, err[-3000:]
    assert "perplexity" in out and f"Exported to {export_dir}" in out
    assert (export_dir / "generator.json").is_file()
    metrics = json.loads((export_dir / "metrics.json").read_text())
    config = metrics["config"]
    assert config["model_options"]["tie_embeddings"] is True
    assert (config["weight_decay"], config["clip_norm"]) == (0.01, 1.0)
    assert (config["lr_schedule"], config["warmup_fraction"]) == ("cosine", 0.2)
    header, *rows = [
        line.split()
        for line in out.splitlines()
        if line.startswith(("split", "validation", "test"))
    ]
    assert header == ["split", "examples", "perplexity", "strided_perplexity"]
    for split, row in zip(("validation", "test"), rows, strict=True):
        assert 1 < metrics[split]["strided_perplexity"] < 1e6
        printed = [float(value) for value in row[2:]]
        expected = [round(metrics[split][name], 4) for name in header[2:]]
        assert row[0] == split and printed == expected


def reference_perplexities(model, ids: list[int], window: int) -> tuple[float, float]:
    """Both protocols' perplexities from each target's log-probability, the model read
    one prefix at a time (a causal model's last position sees exactly that prefix).

    Windowed: target t (t >= 1) is read after ids[k*window : t], k = (t-1) // window, and
    only targets in whole windows count. Strided by window // 2: target t is read after
    ids[s : t], s the first window start (0, stride, 2*stride, ...) with s + window >= t.
    """

    def log_probability(start, target):
        logits = np.asarray(model(np.array([ids[start:target]], np.int32)), np.float64)[0, -1]
        shifted = logits - logits.max()
        return shifted[ids[target]] - np.log(np.exp(shifted).sum())

    stride = window // 2
    scored = (len(ids) - 1) // window * window
    windowed = [log_probability((t - 1) // window * window, t) for t in range(1, scored + 1)]
    strided = [
        log_probability(max(0, -(-(t - window) // stride) * stride), t) for t in range(1, len(ids))
    ]
    return float(np.exp(-np.mean(windowed))), float(np.exp(-np.mean(strided)))


def test_evaluate_gives_a_language_models_perplexity_under_both_protocols(
    capsys, trained_language_model, tmp_path
):
    """On a user's text file, evaluate's two perplexities equal those computed one
    target at a time from the model's own log-probabilities; words outside the
    vocabulary are counted; a text shorter than one window is refused."""
    export_dir = trained_language_model[-1]
    text = tmp_path / "story.txt"
    rng = np.random.default_rng(5)
    lines = [" ".join(rng.choice(LM_WORDS + ["zebra"], rng.integers(3, 9))) for _ in range(9)]
    text.write_text("\n".join(lines) + "\n", "utf-8")
    code, out, err = run_cli(
        capsys, "evaluate", str(export_dir), "--test-file", str(text),
        "--output", str(tmp_path / "perplexity.json"),
    )  # fmt: skip
    assert code == 0, err
    metrics = json.loads((tmp_path / "perplexity.json").read_text())
    generator = load_generator(export_dir)
    index = {word: i + 2 for i, word in enumerate(generator.vocabulary)}
    tokens = [word for line in lines for word in [*line.split(), "<eos>"]]
    ids = [index.get(word, 1) for word in tokens]
    windowed, strided = reference_perplexities(generator.model, ids, LM_WINDOW)
    assert metrics["perplexity"] == pytest.approx(windowed, rel=1e-4)
    assert metrics["strided_perplexity"] == pytest.approx(strided, rel=1e-4)
    assert metrics["text_tokens"] == len(tokens) > 3 * LM_WINDOW
    assert metrics["unknown_tokens"] == tokens.count("zebra") > 0
    assert f"perplexity {metrics['strided_perplexity']:.2f}  (windows sliding by 8" in out
    text.write_text("the cat sat\n", "utf-8")
    code, out, err = run_cli(capsys, "evaluate", str(export_dir), "--test-file", str(text))
    assert_one_line_error(code, out, err, "has 4 tokens", f"at least {LM_WINDOW + 1} tokens")


def test_the_default_untied_language_model_trains_and_generates(capsys, tmp_path):
    export_dir = tmp_path / "export"
    code, out, err = run_cli(
        capsys, "train", "--task", "language-model", "--data-dir",
        str(write_wiki_tokens(tmp_path / "wiki")), "--export-dir", str(export_dir),
        "--epochs", "1", "--batch-size", "8", "--maxlen", str(LM_WINDOW), "--embed-dim", "8",
        "--num-heads", "2", "--ff-dim", "8", "--num-layers", "1",
    )  # fmt: skip
    assert code == 0, err[-3000:]
    config = json.loads((export_dir / "config.json").read_text())  # defaults resolved
    assert config["model_options"]["tie_embeddings"] is False
    assert (config["weight_decay"], config["lr_schedule"]) == (0.0, "constant")
    code, out, err = run_cli(capsys, "generate", str(export_dir), "the cat", "--max-tokens", "3")
    assert code == 0, err
    assert out.startswith("the cat") and len(out.split()) <= 5


def test_generate_prints_one_line_per_prompt(capsys, trained_language_model):
    export_dir = trained_language_model[-1]
    prompts = ["the cat", "a dog sat"]
    argv = ["generate", str(export_dir), *prompts, "--seed", "1", "--max-tokens", "5"]
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == len(prompts) and out.endswith("\n")
    for prompt, line in zip(prompts, lines, strict=True):
        assert line.startswith(prompt)
        continuation = line[len(prompt) :].split()
        assert len(continuation) <= 5 and set(continuation) <= set(LM_WORDS), line
    assert run_cli(capsys, *argv) == (0, out, "")  # same seed, same text


def test_generate_at_temperature_0_is_greedy(capsys, trained_language_model):
    """Temperature 0 is the limit of softmax(logits / T): the most likely token, whatever
    --top-k keeps (the default keeps 40) and whatever the seed."""
    export_dir = trained_language_model[-1]
    prompt = "the cat"
    greedy = load_generator(export_dir).generate([prompt], 5, Sampling(temperature=0.0))[0]
    expected = f"{prompt} {greedy}".strip() + "\n"
    for seed in ("1", "2", "3"):
        code, out, err = run_cli(
            capsys, "generate", str(export_dir), prompt, "--temperature", "0", "--seed", seed,
            "--max-tokens", "5",
        )  # fmt: skip
        assert (code, out) == (0, expected), f"seed {seed}: {err}"


@pytest.mark.parametrize("model", ["transformer", "rnn"])
def test_translate_serves_from_the_signatures_with_tensorflow_alone(trained_translators, model):
    """Greedy and at the export's own beam width, `translate` runs the SavedModel's
    signature: no Keras and no Model Garden in the process, and the translations of the
    Keras model read back by `load_translator`. Another beam width is the Keras model's."""
    from kerasformer.loading.translator import load_translator
    from tests.helpers.processes import run_each_recording_imports

    export_dir = trained_translators[model][-1]
    beam_width = json.loads((export_dir / "translator.json").read_text())["beam_width"]
    sentences = ["One two three.", "nine, eight? seven!", "Zebra quokka", "one " * (MAXLEN + 1)]
    greedy, beam, other = run_each_recording_imports(
        [["translate", export_dir, *sentences, "--json"],
         ["translate", export_dir, *sentences[:2], "--json", "--beam-width", str(beam_width)],
         ["translate", export_dir, sentences[0], "--json", "--beam-width", "2"]],
        ("tf_keras", "keras", "official", "tensorflow_hub", "tensorflow_text"),
    )  # fmt: skip
    assert greedy["heavy"] == beam["heavy"] == [] and other["heavy"] != [], (greedy, other)
    assert greedy["code"] == 1 and beam["code"] == other["code"] == 0, greedy["stderr"]
    translator = load_translator(export_dir)
    records = [json.loads(line) for line in greedy["stdout"].splitlines()]
    assert [record["status"] for record in records] == ["ok", "ok", "warning", "error"]
    assert translator.problem(sentences[3]) in records[3]["message"]
    assert [record["translation"] for record in records[:3]] == translator.translate(sentences[:3])
    beamed = [json.loads(line)["translation"] for line in beam["stdout"].splitlines()]
    assert beamed == translator.translate(sentences[:2], beam_width=beam_width)
    assert (
        json.loads(other["stdout"])["translation"]
        == translator.translate(sentences[:1], beam_width=2)[0]
    )


def test_generate_serves_from_the_signature_with_tensorflow_alone(trained_language_model):
    """At the export's own number of tokens and with no seed, `generate` runs the
    SavedModel's ``sample`` signature: no Keras and no Model Garden in the process, and the
    greedy text of the Keras model read back by `load_generator`. A seed is the Keras
    model's (the signature's sampling has none), and so is another --max-tokens."""
    from tests.helpers.processes import run_each_recording_imports

    export_dir = trained_language_model[-1]
    max_tokens = json.loads((export_dir / "generator.json").read_text())["max_tokens"]
    prompts = ["the cat", "zebra quokka", " ".join(["the"] * LM_WINDOW)]
    greedy = ["--temperature", "0", "--json", "--max-tokens", str(max_tokens)]
    served, seeded = run_each_recording_imports(
        [["generate", export_dir, *prompts, *greedy],
         ["generate", export_dir, prompts[0], *greedy, "--seed", "3"]],
        ("tf_keras", "keras", "official", "tensorflow_hub", "tensorflow_text"),
    )  # fmt: skip
    assert served["heavy"] == [] and seeded["heavy"] != [], (served, seeded)
    assert served["code"] == 1, served["stderr"]  # the third prompt is too long
    records = [json.loads(line) for line in served["stdout"].splitlines()]
    keras_generator = load_generator(export_dir)
    expected = keras_generator.generate(prompts[:2], max_tokens, Sampling(temperature=0.0))
    assert [record["continuation"] for record in records[:2]] == expected
    assert [record["status"] for record in records] == ["ok", "warning", "error"]
    assert keras_generator.problem(prompts[2], max_tokens) in records[2]["message"]
    assert json.loads(seeded["stdout"])["continuation"] == expected[0]


def test_exported_language_model_serves_a_prompt(trained_language_model):
    """The SavedModel's signatures generate up to a fixed number of tokens: it must fit
    the model's window, or every prompt is refused."""
    loaded = tf.saved_model.load(str(trained_language_model[-1]))
    outputs = loaded.signatures["serving_default"](inputs=tf.constant(["the cat"]))["outputs"]
    assert outputs.shape == (1,)


@pytest.mark.parametrize(
    "temperature, top_k, top_p, message",
    [
        (-1.0, 40, 1.0, "temperature must be a finite number >= 0"),
        (float("nan"), 40, 1.0, "temperature must be a finite number >= 0"),
        (float("inf"), 40, 1.0, "temperature must be a finite number >= 0"),
        (1.0, -1, 1.0, "top_k must be >= 0"),
        (1.0, 40, 0.0, "top_p must be in (0, 1]"),
        (1.0, 40, float("nan"), "top_p must be in (0, 1]"),
        (1.0, 40, 1.5, "top_p must be in (0, 1]"),
    ],
)
def test_the_sample_signature_refuses_what_the_cli_refuses(
    trained_language_model, temperature, top_k, top_p, message
):
    sample = tf.saved_model.load(str(trained_language_model[-1])).signatures["sample"]
    arguments = dict(inputs=tf.constant(["the cat"]), temperature=tf.constant(temperature),
                     top_k=tf.constant(top_k), top_p=tf.constant(top_p))  # fmt: skip
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(message)):
        sample(**arguments)
    arguments.update(temperature=tf.constant(0.5), top_k=tf.constant(0), top_p=tf.constant(1.0))
    assert sample(**arguments)["outputs"].shape == (1,)  # and the limits themselves pass


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--temperature", "-1"], "argument --temperature: expected a number >= 0, got -1.0"),
        (["--top-p", "0"], "argument --top-p: expected a number in (0, 1], got 0.0"),
    ],
)
def test_generate_bad_sampling_values_are_argparse_errors(capsys, flags, message):
    code, out, err = run_cli_expecting_exit(capsys, "generate", "some/model", "the", *flags)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err


def test_generate_refuses_a_prompt_too_long_for_the_window(capsys, trained_language_model):
    prompt = " ".join(["the"] * (LM_WINDOW - 5))  # with 5 to generate and 1 to start: 17
    code, out, err = run_cli(
        capsys, "generate", str(trained_language_model[-1]), prompt, "--max-tokens", "5"
    )
    assert (code, out) == (1, "\n")
    assert f"prompt argument 1 has {LM_WINDOW - 5} tokens" in err and err.count("\n") == 1


def test_generate_reads_stdin_and_refuses_blank_prompts_alone(
    capsys, monkeypatch, trained_language_model
):
    export_dir = str(trained_language_model[-1])
    feed_stdin(monkeypatch, b"the cat\n   \n\na dog\n")
    code, out, err = run_cli(capsys, "generate", export_dir, "-", "--json", "--seed", "1",
                             "--max-tokens", "3")  # fmt: skip
    assert code == 1
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["status"] for r in records] == ["ok", "error", "error", "ok"]
    assert records[0]["output"].startswith("the cat") and records[3]["output"].startswith("a dog")
    assert "line 2 of standard input is empty" in records[1]["message"]
    assert err.count("\n") == 2


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["--task", "translation", "--model", "bert"],
            "--model bert does not fit --task translation.",
        ),
        (
            ["--task", "language-model", "--units", "4"],
            "--units do(es) not apply to --model transformer (--task language-model).",
        ),
        (
            ["--task", "language-model", "--adaptive-cutoffs", "2000", "10000"],
            "--adaptive-cutoffs makes the tied output layer an adaptive softmax; add "
            "--tie-embeddings.",
        ),
        (
            ["--task", "language-model", "--tie-embeddings", "--adaptive-cutoffs", "9", "--xla"],
            "--xla cannot compile the adaptive softmax's loss (how many tokens each cluster "
            "scores changes every batch); drop --xla or --adaptive-cutoffs.",
        ),
        (
            ["--task", "translation", "--dataset", "bbc_news"],
            "dataset 'bbc_news' is not a translation dataset; choose one of: spa_eng.",
        ),
    ],
)
def test_train_refuses_wrong_combinations(capsys, tmp_path, argv, message):
    code, out, err = run_cli(capsys, "train", *argv, "--export-dir", str(tmp_path / "out"))
    assert_one_line_error(code, out, err, message)
    assert not (tmp_path / "out").exists()


def test_attention_of_translators_and_a_language_model_in_a_fresh_process(
    trained_translators, trained_language_model, tmp_path
):
    transformer, rnn = (trained_translators[m][3] for m in ("transformer", "rnn"))
    language_model = trained_language_model[3]
    runs = run_commands(
        ["attention", transformer, "one two three", "--attention", "cross",
         "--out", tmp_path / "cross.png", "--html", tmp_path / "translator.html"],
        ["attention", transformer, "one two three", "--attention", "decoder-self",
         "--head", "1", "--out", tmp_path / "decoder.png"],
        ["attention", rnn, "one two three", "--out", tmp_path / "rnn.png"],
        ["attention", rnn, "one two three", "--attention", "encoder-self"],
        ["attention", language_model, "the cat sat", "--out", tmp_path / "lm.png",
         "--html", tmp_path / "lm.html"],
        ["attention", language_model, "the cat", "--second", "the dog"],
    )  # fmt: skip
    cross, decoder, rnn_cross, rnn_self, lm, lm_pair = runs
    for run, picture in ((cross, "cross.png"), (decoder, "decoder.png"), (rnn_cross, "rnn.png"),
                         (lm, "lm.png")):  # fmt: skip
        assert run["code"] == 0, run["stderr"]
        assert_not_blank(read_png(tmp_path / picture))
    # The transformer's three attentions, 1 block of 2 heads each, on one page.
    page = (tmp_path / "translator.html").read_text(encoding="utf-8")
    assert plotly_traces(page) == 3 * 1 * 2
    for name in ("encoder self-attention", "decoder self-attention", "cross-attention"):
        assert f"<h2>{name}</h2>" in page
    assert " tokens: [start]" in cross["stdout"]  # then the words generated, if any
    assert "Decoder self-attention, layer 0, head 1" in decoder["stdout"]
    assert rnn_self["code"] == 2 and rnn_self["stderr"].count("\n") == 1
    assert "has no encoder self-attention; choose --attention from: cross" in rnn_self["stderr"]
    assert "4 tokens: <eos> the cat sat" in lm["stdout"]
    assert plotly_traces((tmp_path / "lm.html").read_text(encoding="utf-8")) == 1 * 2
    assert lm_pair["code"] == 2 and "is a language model, which reads one text" in lm_pair["stderr"]


def test_text_with_no_known_word_is_answered_with_a_warning(capsys, trained_translators,
                                                            trained_language_model):  # fmt: skip
    # As predict does: the answer is given, flagged as a guess, and the exit status is 0.
    translator = trained_translators["transformer"][-1]
    vocabulary = (translator / "source_vocabulary.txt").read_text(encoding="utf-8").split()
    assert "zebra" not in vocabulary and "one" in vocabulary
    code, out, err = run_cli(capsys, "translate", str(translator), "one two", "Zebra quokka!",
                             "--json")  # fmt: skip
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["status"] for r in records] == ["ok", "warning"]
    assert "translation" in records[1] and "so its translation is a guess" in records[1]["message"]
    assert err.count("\n") == 1 and "kerasformer: warning: sentence argument 2 has no word" in err

    model = trained_language_model[-1]
    code, out, err = run_cli(capsys, "generate", str(model), "the cat", "zebra quokka",
                             "--max-tokens", "3", "--json")  # fmt: skip
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["status"] for r in records] == ["ok", "warning"]
    assert "so its continuation is a guess" in records[1]["message"]
    assert err.count("kerasformer: warning:") == 1


def test_an_rnn_translator_on_subwords_trains_and_translates_in_a_fresh_process(spa_dir, tmp_path):
    from kerasformer.loading.translator import load_translator

    export_dir = tmp_path / "subwords"
    code, out, err = run_cli_in_fixture(
        "train", "--task", "translation", "--model", "rnn", "--data-dir", str(spa_dir),
        "--export-dir", str(export_dir), "--epochs", "1", "--batch-size", "16",
        "--maxlen", str(2 * MAXLEN), "--tokenizer", "sentencepiece", "--vocab-size", "40",
        "--label-smoothing", "0.1", "--lr-schedule", "inverse_sqrt",
        *TINY_TRANSLATOR_FLAGS["rnn"],
    )  # fmt: skip
    assert code == 0, err[-3000:]
    recorded = json.loads((export_dir / "metrics.json").read_text())["config"]
    assert recorded["model_options"]["label_smoothing"] == 0.1
    assert recorded["lr_schedule"] == "inverse_sqrt"
    settings = json.loads((export_dir / "translator.json").read_text())
    assert settings["tokenizer"] == "sentencepiece"
    assert (export_dir / "source_subwords.model").is_file()
    sentences = ["Three one four.", "Nine two.", "Seven seven eight five."]
    picture = tmp_path / "alignment.png"
    translate, aligned = run_commands(
        ["translate", export_dir, *sentences],
        ["translate", export_dir, sentences[0], "--alignment", picture],
    )
    assert translate["code"] == 0, translate["stderr"]
    assert translate["stdout"].split("\n")[:-1] == load_translator(export_dir).translate(sentences)
    assert aligned["code"] == 0, aligned["stderr"]
    assert_not_blank(read_png(picture))


def test_the_papers_recipe_on_tied_subwords_trains_and_translates_in_a_fresh_process(
    spa_dir, tmp_path
):
    from kerasformer.loading.translator import load_translator

    export_dir = tmp_path / "tied"
    code, out, err = run_cli_in_fixture(
        "train", "--task", "translation", "--data-dir", str(spa_dir),
        "--export-dir", str(export_dir), "--epochs", "2", "--batch-size", "16",
        "--maxlen", str(2 * MAXLEN), "--tokenizer", "sentencepiece", "--vocab-size", "60",
        "--tie-embeddings", "--label-smoothing", "0.1", "--lr-schedule", "inverse_sqrt",
        "--average-last", "2", *TINY_TRANSLATOR_FLAGS["transformer"],
    )  # fmt: skip
    assert code == 0, err[-3000:]
    metrics = json.loads((export_dir / "metrics.json").read_text())
    assert metrics["averaged_epochs"] == [1, 2]
    assert metrics["config"]["model_options"]["tie_embeddings"] is True
    # One subword model of both languages, written for each side.
    source, target = (export_dir / f"{side}_subwords.model" for side in ("source", "target"))
    assert source.read_bytes() == target.read_bytes()
    sentences = ["Three one four.", "Nine two."]
    (translate,) = run_commands(["translate", export_dir, *sentences, "--beam-width", "2"])
    assert translate["code"] == 0, translate["stderr"]
    expected = load_translator(export_dir).translate(sentences, beam_width=2)
    assert translate["stdout"].split("\n")[:-1] == expected


def test_evaluate_scores_a_translators_translations_as_sacrebleu_does(
    capsys, trained_translators, tmp_path
):
    """evaluate's BLEU and chrF equal sacrebleu's own on what `translate` prints for the
    same sentences; a file's column names are given, and a classifier's options refused."""
    import sacrebleu

    export_dir = trained_translators["transformer"][-1]
    sources = ["Three one four.", "Nine two.", "Seven seven eight five.", "One one."]
    references = ["Tres uno cuatro.", "Nueve dos.", "Siete siete ocho cinco.", "Uno uno."]
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("en\tes\n" + "".join(f"{s}\t{r}\n" for s, r in zip(sources, references,
                     strict=True)), "utf-8")  # fmt: skip
    code, out, err = run_cli(
        capsys, "evaluate", str(export_dir), "--test-file", str(pairs), "--source-column",
        "en", "--target-column", "es", "--output", str(tmp_path / "scores.json"),
    )  # fmt: skip
    assert code == 0, err
    metrics = json.loads((tmp_path / "scores.json").read_text())
    code, printed, err = run_cli(capsys, "translate", str(export_dir), *sources)
    assert code == 0, err
    hypotheses = printed.splitlines()
    assert metrics["sentences"] == 4 and metrics["beam_width"] == 1
    assert metrics["bleu"] == pytest.approx(sacrebleu.corpus_bleu(hypotheses, [references]).score)
    assert metrics["chrf"] == pytest.approx(sacrebleu.corpus_chrf(hypotheses, [references]).score)
    lowered = sacrebleu.corpus_bleu(hypotheses, [references], lowercase=True).score
    assert metrics["bleu_lowercase"] == pytest.approx(lowered)
    assert f"BLEU {metrics['bleu']:.2f}  chrF {metrics['chrf']:.2f}  (cased)" in out
    code, out, err = run_cli(capsys, "evaluate", str(export_dir), "--test-file", str(pairs),
                             "--text-column", "en")  # fmt: skip
    assert code == 2 and "--text-column goes with a classifier" in err
