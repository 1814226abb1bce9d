"""Small synthetic data the tests write: AG News rows and CSV files, SQuAD documents, and
sentence pairs."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

TOPIC_WORDS = {
    1: "minister election government treaty parliament embassy war summit",
    2: "match team goal season coach league striker tournament",
    3: "shares profit market bank stocks investors earnings merger",
    4: "software computer internet chip space research satellite browser",
}
COMMON_WORDS = "the a of in on said today new after over".split()
# Two topics a user might file texts under, three texts each (tests of your own files).
TOPICS = {
    "sport": ["Goal in the last minute", "A record lap", "The cup final"],
    "travel": ["Cheap flights to Rome", "Trains across Europe", "A night in Lisbon"],
}
# The sizes of the question answerer's windows over the tiny BERT's 32 positions.
QA_WINDOWS = {"seq_length": 32, "doc_stride": 8, "max_question_tokens": 4}


def synthetic_rows(count: int, seed: int) -> list[tuple[str, str, str]]:
    """AG News-style rows whose class is told by its topic words."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(count):
        label = i % 4 + 1
        words = list(rng.choice(TOPIC_WORDS[label].split(), 4)) + list(rng.choice(COMMON_WORDS, 4))
        rng.shuffle(words)
        rows.append((str(label), " ".join(words[:3]).title(), " ".join(words[3:])))
    return rows


def topic_rows(copies: int = 1) -> list[tuple[str, str]]:
    """``(text, topic)`` rows, every text made distinct by its copy number."""
    return [(f"{text} {i}", label) for i in range(copies) for label, texts in TOPICS.items()
            for text in texts]  # fmt: skip


def write_topic_csv(path: Path, rows, header: str = "body,topic") -> Path:
    """A user's CSV: a header, then one quoted text and its topic per row."""
    lines = [header] + [f'"{text}",{label}' for text, label in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_ag_csv(path: Path, rows, header: bool = False) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL)
        if header:
            writer.writerow(["Class Index", "Title", "Description"])
        writer.writerows(rows)
    return path


def synthetic_squad_document(articles: int, questions_per_article: int, seed: int) -> dict:
    """SQuAD v1.1-style JSON whose answer is a sports word and the business word after it.

    Contexts are 30 to 40 words of filler (common words and words of other topics), so
    the tiny BERT's 32-token windows must be cut several to a context; a model that
    learns the task has to read every window and pick the right one.
    """
    rng = np.random.default_rng(seed)
    filler = COMMON_WORDS + " ".join(TOPIC_WORDS[t] for t in (1, 4)).split()
    sports, business = TOPIC_WORDS[2].split(), TOPIC_WORDS[3].split()
    data = []
    for article in range(articles):
        paragraphs = []
        for question in range(questions_per_article):
            words = list(rng.choice(filler, int(rng.integers(30, 41))))
            answer = f"{rng.choice(sports)} {rng.choice(business)}"
            at = int(rng.integers(0, len(words)))
            context = " ".join(words[:at] + [answer] + words[at:])
            start = len(" ".join(words[:at])) + (1 if at else 0)
            assert context[start : start + len(answer)] == answer
            qas = [{
                "id": f"{article}-{question}",
                "question": "which team",
                "answers": [{"text": answer, "answer_start": start}],
            }]  # fmt: skip
            paragraphs.append({"context": context, "qas": qas})
        data.append({"title": f"Article {article}", "paragraphs": paragraphs})
    return {"version": "1.1", "data": data}


def synthetic_squad_v2_document(articles: int, questions_per_article: int, seed: int) -> dict:
    """`synthetic_squad_document` with every third question made unanswerable, as SQuAD
    2.0 marks one: ``is_impossible``, no answers, and a context of filler alone."""
    document = synthetic_squad_document(articles, questions_per_article, seed)
    rng = np.random.default_rng(seed + 1)
    filler = COMMON_WORDS + " ".join(TOPIC_WORDS[t] for t in (1, 4)).split()
    number = 0
    for article in document["data"]:
        for paragraph in article["paragraphs"]:
            for question in paragraph["qas"]:
                if number % 3 == 2:
                    paragraph["context"] = " ".join(rng.choice(filler, 30))
                    question.update(is_impossible=True, answers=[])
                else:
                    question["is_impossible"] = False
                number += 1
    document["version"] = "v2.0"
    return document


def write_synthetic_squad(directory: Path, articles: int = 20, per_article: int = 30,
                          seed: int = 0) -> Path:  # fmt: skip
    directory.mkdir(parents=True, exist_ok=True)
    document = synthetic_squad_document(articles, per_article, seed)
    (directory / "dev-v1.1.json").write_text(json.dumps(document), encoding="utf-8")
    return directory


def reversal_pairs(sources: list[str]):
    """`SentencePairs` whose target is the source's words in reverse order."""
    from kerasformer.datasets.sentence_pairs import SentencePairs

    targets = [" ".join(reversed(text.split())) for text in sources]
    return SentencePairs(np.array(sources, dtype=object), np.array(targets, dtype=object))


NER_PEOPLE = ("Angela Merkel", "Peter Blackburn", "Marie Curie", "John", "Ada Lovelace")
NER_PLACES = ("Paris", "New York", "Bonn", "Brussels", "Tokyo")
NER_TEMPLATES = (
    "{PER} visited {LOC} .",
    "{PER} met {PER} in {LOC} .",
    "They flew to {LOC} on Monday .",
    "In {LOC} , {PER} spoke .",
)


def synthetic_ner_sentences(
    count: int, seed: int, templates=NER_TEMPLATES, people=NER_PEOPLE, places=NER_PLACES
) -> list[tuple[list[str], list[str]]]:
    """Sentences with people and places tagged in IOB2, from a few templates (``{PER}``
    and ``{LOC}`` filled with names, split at spaces)."""
    rng = np.random.default_rng(seed)
    sentences = []
    for _ in range(count):
        words, tags = [], []
        for piece in templates[rng.integers(len(templates))].split():
            if piece in ("{PER}", "{LOC}"):
                kind = piece[1:-1]
                names = people if kind == "PER" else places
                name = names[rng.integers(len(names))].split()
                words += name
                tags += [f"B-{kind}"] + [f"I-{kind}"] * (len(name) - 1)
            else:
                words.append(piece)
                tags.append("O")
        sentences.append((words, tags))
    return sentences


CONTEXT_FILLER = ("we", "saw", "today", "and", "then", "left", "again", "there")


def context_ner_sentences(count: int, seed: int) -> list[tuple[list[str], list[str]]]:
    """Sentences in which "Jordan" is a person after "Mr" and a place after "in": only
    its neighbour tells which, so a tagger that ignores context scores half."""
    rng = np.random.default_rng(seed)
    sentences = []
    for _ in range(count):
        before = list(rng.choice(CONTEXT_FILLER, rng.integers(1, 4)))
        after = list(rng.choice(CONTEXT_FILLER, rng.integers(1, 4)))
        cue, tag = ("Mr", "B-PER") if rng.random() < 0.5 else ("in", "B-LOC")
        words = [*before, cue, "Jordan", *after]
        sentences.append((words, ["O"] * (len(before) + 1) + [tag] + ["O"] * len(after)))
    return sentences


def ner_words() -> tuple[str, ...]:
    """Every word of the synthetic NER sentences, lower-cased (a tiny BERT's vocabulary)."""
    names = " ".join(NER_PEOPLE + NER_PLACES + NER_TEMPLATES + CONTEXT_FILLER)
    return tuple(sorted({w.lower() for w in names.split() if "{" not in w} | {"mr", "jordan"}))


def write_conll(path: Path, sentences) -> Path:
    """``word TAG`` lines, a blank line between sentences."""
    blocks = ["".join(f"{w} {t}\n" for w, t in zip(words, tags, strict=True))
              for words, tags in sentences]  # fmt: skip
    path.write_text("\n".join(blocks), encoding="utf-8")
    return path


def write_json(path: Path, document) -> Path:
    """``document`` as a JSON file at ``path``."""
    path.write_text(json.dumps(document), "utf-8")
    return path


# The words of the tiny WikiText-style token files.
LM_WORDS = "the a cat dog sat ran on under mat rug and , .".split()


def write_wiki_tokens(directory: Path) -> Path:
    """``wiki.{train,valid,test}.tokens`` of 200, 30 and 30 lines of 3-8 `LM_WORDS`, as
    WikiText-2 lays its splits out."""
    rng = np.random.default_rng(0)
    directory.mkdir(parents=True, exist_ok=True)
    for name, lines in (("train", 200), ("valid", 30), ("test", 30)):
        text = "".join(
            " ".join(rng.choice(LM_WORDS, rng.integers(3, 9))) + "\n" for _ in range(lines)
        )
        (directory / f"wiki.{name}.tokens").write_text(text, encoding="utf-8")
    return directory


# Number words, one to nine: a tiny spa-eng whose translations are word for word.
ENGLISH = "one two three four five six seven eight nine".split()
SPANISH = "uno dos tres cuatro cinco seis siete ocho nueve".split()


def write_spa_txt(directory: Path, pairs: int = 120) -> Path:
    """English<TAB>Spanish number words, e.g. "Three one four.<TAB>Tres uno cuatro."."""
    rng = np.random.default_rng(0)
    lines = []
    for _ in range(pairs):
        numbers = rng.integers(0, 9, rng.integers(2, 5))
        english = " ".join(ENGLISH[i] for i in numbers).capitalize() + "."
        spanish = " ".join(SPANISH[i] for i in numbers).capitalize() + "."
        lines.append(f"{english}\t{spanish}\n")
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "spa.txt").write_text("".join(lines), encoding="utf-8")
    return directory
