"""`distill`: a student that learns what its teacher says, from labelled and unlabelled texts."""

import json
import re

import numpy as np
import pytest

from kerasformer.cli.main import main
from kerasformer.datasets import LabeledTexts, TextClassificationData, load_dataset
from kerasformer.errors import KerasformerError
from kerasformer.export import ExportedClassifier
from kerasformer.training import TrainingConfig, train
from tests.helpers.cli import run_cli
from tests.helpers.data import synthetic_rows

SMALL = dict(vocab_size=200, maxlen=32, embed_dim=16, num_heads=2, ff_dim=16)


def shifted(part: LabeledTexts) -> LabeledTexts:
    return LabeledTexts(part.texts, (part.labels + 1) % 4)


@pytest.fixture(scope="module")
def contrary_teacher(tiny_ag_news_dir, tmp_path_factory):
    """A teacher that learned every topic as the next one: it disagrees with every label."""
    data = load_dataset("ag_news", str(tiny_ag_news_dir), 0.1, split_seed=0)
    wrong = TextClassificationData(
        data.name, data.class_names, {name: shifted(p) for name, p in data.splits.items()}
    )
    export_dir = tmp_path_factory.mktemp("teacher") / "teacher"
    config = TrainingConfig(
        dataset="ag_news", epochs=8, batch_size=16, learning_rate=1e-2, seed=1,
        model_options=SMALL, export_dir=str(export_dir),
    )  # fmt: skip
    result = train(config, verbose=0, data=wrong)
    assert result.metrics["test"]["accuracy"] > 0.95  # on its own (shifted) labels
    return export_dir


def distill(data_dir, teacher, **overrides):
    settings = dict(
        task="distillation", dataset="ag_news", data_dir=str(data_dir), teacher=str(teacher),
        epochs=8, batch_size=16, learning_rate=1e-2, seed=2, model_options=SMALL,
    )  # fmt: skip
    return train(TrainingConfig(**{**settings, **overrides}), export=False, verbose=0)


def agreement_with_shifted_labels(result) -> float:
    test = result.data.splits["test"]
    from kerasformer.training.tasks.classification import predict_probabilities

    predicted = predict_probabilities(result.model, test.texts, 64).argmax(axis=1)
    return float(np.mean(predicted == (test.labels + 1) % 4))


@pytest.mark.slow
def test_a_student_on_the_teacher_alone_learns_what_the_teacher_says(
    tiny_ag_news_dir, contrary_teacher
):
    result = distill(tiny_ag_news_dir, contrary_teacher, teacher_weight=1.0, temperature=1.0)
    assert agreement_with_shifted_labels(result) > 0.9
    assert result.metrics["test"]["accuracy"] < 0.1  # the true labels were not learned
    assert set(result.history) >= {"loss", "accuracy", "val_loss", "val_accuracy"}


@pytest.mark.slow
def test_a_student_on_the_labels_alone_ignores_the_teacher(tiny_ag_news_dir, contrary_teacher):
    result = distill(tiny_ag_news_dir, contrary_teacher, teacher_weight=0.0)
    assert result.metrics["test"]["accuracy"] > 0.9
    assert agreement_with_shifted_labels(result) < 0.1


@pytest.mark.slow
def test_unlabelled_texts_teach_through_the_teacher(tiny_ag_news_dir, contrary_teacher, tmp_path):
    """Eight labelled texts and many unlabelled ones: the student learns from the teacher's
    view of the unlabelled texts."""
    unlabelled = tmp_path / "unlabelled.txt"
    unlabelled.write_text(
        "\n".join(f"{title} {text}" for _, title, text in synthetic_rows(300, seed=5)) + "\n\n"
    )
    data = load_dataset("ag_news", str(tiny_ag_news_dir), 0.1, split_seed=0)
    few = TextClassificationData(
        data.name, data.class_names, {**data.splits, "train": data.splits["train"].head(8)}
    )
    config = TrainingConfig(
        task="distillation", dataset="ag_news", teacher=str(contrary_teacher),
        unlabelled_texts=str(unlabelled), teacher_weight=1.0, temperature=1.0, epochs=8,
        batch_size=16, learning_rate=1e-2, seed=3, model_options=SMALL,
    )  # fmt: skip
    from kerasformer.training.tasks.distillation import DistillationData, read_unlabelled_texts

    texts = read_unlabelled_texts(unlabelled)
    assert len(texts) == 300  # the blank line is no text
    distillation_data = DistillationData(few.name, few.class_names, few.splits, texts)
    result = train(config, export=False, verbose=0, data=distillation_data)
    assert len(distillation_data.targets["train"]) == 308
    assert agreement_with_shifted_labels(result) > 0.9


def test_augmented_copies_are_labelled_by_the_teacher(tiny_ag_news_dir, contrary_teacher):
    result = distill(tiny_ag_news_dir, contrary_teacher, augmented_copies=2, epochs=1)
    train_part, targets = result.data.splits["train"], result.data.targets["train"]
    copies = targets.texts[len(train_part) :]
    assert len(copies) == 2 * len(train_part) == len(result.data.augmented)
    np.testing.assert_array_equal(targets.labels[: len(train_part), 0], train_part.labels)
    assert np.all(targets.labels[len(train_part) :, 0] == -1)  # the teacher alone teaches them
    expected = ExportedClassifier(contrary_teacher).predict_proba(list(copies))
    np.testing.assert_allclose(targets.labels[len(train_part) :, 1:], expected, atol=1e-5)
    first_words = {text.split()[0] for text in train_part.texts}
    assert sum(copy.split()[0] not in first_words for copy in copies) > 0  # perturbed


def test_the_student_is_exported_as_a_classifier(tiny_ag_news_dir, contrary_teacher, tmp_path):
    export_dir = tmp_path / "student"
    result = train(
        TrainingConfig(
            task="distillation", dataset="ag_news", data_dir=str(tiny_ag_news_dir),
            teacher=str(contrary_teacher), epochs=1, batch_size=16, model_options=SMALL,
            export_dir=str(export_dir),
        ),
        verbose=0,
    )  # fmt: skip
    served = ExportedClassifier(export_dir).predict_proba(["team goal season"])
    expected = result.model.predict(np.array(["team goal season"]), verbose=0)
    np.testing.assert_allclose(served, expected, rtol=1e-5, atol=1e-6)
    metrics = json.loads((export_dir / "metrics.json").read_text())
    assert metrics["config"]["teacher"] == str(contrary_teacher)
    assert metrics["config"]["task"] == "distillation"


@pytest.mark.slow
def test_distill_from_the_command_line(capsys, tiny_ag_news_dir, contrary_teacher, tmp_path):
    code, out, err = run_cli(
        capsys, "distill", "--teacher", str(contrary_teacher), "--dataset", "ag_news",
        "--data-dir", str(tiny_ag_news_dir), "--epochs", "1", "--batch-size", "16",
        "--vocab-size", "200", "--maxlen", "32", "--temperature", "3", "--teacher-weight", "1",
        "--export-dir", str(tmp_path / "student"),
    )  # fmt: skip
    assert code == 0, err
    assert "Exported to" in out and "accuracy" in out
    config = json.loads((tmp_path / "student" / "metrics.json").read_text())["config"]
    assert (config["temperature"], config["teacher_weight"]) == (3.0, 1.0)


def test_a_teacher_of_other_classes_is_refused(tiny_ag_news_dir, trained_bbc):
    with pytest.raises(KerasformerError, match="distil from a teacher trained on this dataset"):
        distill(tiny_ag_news_dir, trained_bbc.export_dir, epochs=1)


@pytest.mark.parametrize(
    "argv, message",
    [
        ([], "the following arguments are required: --teacher"),
        (["--teacher", "nowhere"], "nowhere is not an exported model"),
        (["--teacher", "T", "--teacher-weight", "2"], "expected a number from 0 to 1, got 2.0"),
        (["--teacher", "T", "--temperature", "0"], "expected a positive finite number"),
        (["--teacher", "T", "--dataset", "squad"], "invalid choice: 'squad'"),
        (["--teacher", "T", "--augment", "-1"], "expected a whole number >= 0, got -1"),
    ],
)
def test_distill_refuses_bad_settings_in_one_line(
    capsys, tiny_ag_news_dir, contrary_teacher, argv, message
):
    argv = [str(contrary_teacher) if a == "T" else a for a in argv]
    try:
        code = main(["distill", "--data-dir", str(tiny_ag_news_dir), *argv])
    except SystemExit as exit:
        code = exit.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "holds no text; put one text on each line"),
        (b"fine\n\xff\xfe bad\n", "is not UTF-8 text (byte 5)"),
    ],
)
def test_a_bad_unlabelled_file_is_a_clear_error(
    tiny_ag_news_dir, contrary_teacher, tmp_path, content, message
):
    path = tmp_path / "unlabelled.txt"
    path.write_bytes(content)
    with pytest.raises(KerasformerError, match=re.escape(message)):
        distill(tiny_ag_news_dir, contrary_teacher, unlabelled_texts=str(path))


def test_distillation_settings_belong_to_distillation(tiny_ag_news_dir, contrary_teacher):
    with pytest.raises(KerasformerError, match="teacher is for distillation only"):
        train(TrainingConfig(dataset="ag_news", teacher="x"), export=False, verbose=0)
    with pytest.raises(KerasformerError, match="augmented_copies is for distillation only"):
        train(TrainingConfig(dataset="ag_news", augmented_copies=2), export=False, verbose=0)
    with pytest.raises(KerasformerError, match="augmented copies must be a whole number >= 0"):
        distill(tiny_ag_news_dir, contrary_teacher, augmented_copies=-1)
    with pytest.raises(KerasformerError, match="distillation needs a teacher"):
        train(TrainingConfig(task="distillation", dataset="ag_news"), export=False, verbose=0)
