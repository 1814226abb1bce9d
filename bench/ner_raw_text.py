"""NER as a user gets it: each sentence's words joined by spaces, sent as raw text to a
tagger export's ``serving_default``, scored on the entity offsets it returns.

    python bench/ner_raw_text.py saved_models/conll2003-rnn ../shared/data/conll2003/valid.txt

Beside it, the same export's tags for the file's own words (`load_tagger` then
`EntityTagger.predict_tags`, the trainer's path), scored by seqeval: the two figures
differ where the export reads raw text otherwise than the file splits it. Gold entities are
the file's (IOB1 read as IOB2), at their character offsets in the joined text; a returned
entity counts if its type, start and end all match one (strict, as seqeval's IOB2 mode).
Needs TensorFlow only for the raw-text figure; `--json` prints the scores as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

BATCH = 64


def gold_entities(words, tags) -> set[tuple[int, int, str]]:
    """``(start, end, type)`` of each entity of one sentence, in its words joined by spaces."""
    from kerasformer.models.iob_tags import entity_spans

    starts, at = [], 0
    for word in words:
        starts.append(at)
        at += len(word) + 1
    return {
        (starts[first], starts[last - 1] + len(words[last - 1]), kind)
        for kind, first, last in entity_spans(tags)
    }


def served_entities(export_dir: Path, texts: list[str]) -> list[set[tuple[int, int, str]]]:
    """``(start, end, type)`` of each entity ``serving_default`` returns for each text."""
    import tensorflow as tf

    serve = tf.saved_model.load(str(export_dir)).signatures["serving_default"]
    found = []
    for begin in range(0, len(texts), BATCH):
        out = serve(inputs=tf.constant(texts[begin : begin + BATCH]))
        starts, ends = out["entity_starts"].numpy(), out["entity_ends"].numpy()
        types = out["entity_types"].numpy()
        for row, count in enumerate(out["entity_counts"].numpy()):
            found.append({
                (int(starts[row, i]), int(ends[row, i]), types[row, i].decode("utf-8"))
                for i in range(count)
            })  # fmt: skip
    return found


def offset_scores(gold: list[set], found: list[set]) -> dict[str, float]:
    """Micro precision, recall and F1 of ``found`` entities against ``gold``, by sentence."""
    right = sum(len(g & f) for g, f in zip(gold, found, strict=True))
    guessed, true = sum(map(len, found)), sum(map(len, gold))
    precision = right / guessed if guessed else 0.0
    recall = right / true if true else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "entities": true}


def raw_text_scores(export_dir: Path, tagged_file: Path) -> dict[str, dict]:
    """Entity scores of ``export_dir`` on ``tagged_file``: through ``serving_default`` on
    raw text, and through `predict_tags` on the file's own words."""
    from kerasformer.datasets.tagged_sentences import read_tagged_file
    from kerasformer.loading import load_tagger
    from kerasformer.training.tagging_metrics import entity_scores

    part, _ = read_tagged_file(tagged_file)
    words, tags = [list(w) for w in part.tokens], [list(t) for t in part.tags]
    texts = [" ".join(sentence) for sentence in words]
    raw = offset_scores(
        [gold_entities(w, t) for w, t in zip(words, tags, strict=True)],
        served_entities(export_dir, texts),
    )
    tokens = entity_scores(tags, load_tagger(export_dir).predict_tags(words))
    return {
        "raw_text": raw,
        "file_words": {name: tokens[name] for name in ("precision", "recall", "f1")},
        "sentences": len(words),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("export", type=Path, help="a tagger export (kerasformer train --task ner)")
    parser.add_argument("tagged_file", type=Path, help="CoNLL or JSON Lines, as train reads")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    args = parser.parse_args(argv)
    scores = raw_text_scores(args.export, args.tagged_file)
    if args.json:
        print(json.dumps(scores, indent=2))
        return 0
    raw, words = scores["raw_text"], scores["file_words"]
    print(f"{args.tagged_file}: {scores['sentences']} sentences, {raw['entities']} entities")
    print(f"  the file's words (predict_tags): F1 {words['f1']:.4f} "
          f"(P {words['precision']:.4f}, R {words['recall']:.4f})")  # fmt: skip
    print(f"  raw text (serving_default):     F1 {raw['f1']:.4f} "
          f"(P {raw['precision']:.4f}, R {raw['recall']:.4f})")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
