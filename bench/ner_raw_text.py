"""NER as a user gets it: each sentence's words joined by spaces, sent as raw text to a
tagger export's ``serving_default``, scored on the entity offsets it returns.

    python bench/ner_raw_text.py saved_models/conll2003-rnn ../shared/data/conll2003/valid.txt

Beside it, the same export's tags for the file's own words (`load_tagger` then
`EntityTagger.predict_tags`, the trainer's path), scored by seqeval: the two figures
differ where the export reads raw text otherwise than the file splits it. Gold entities are
the file's (IOB1 read as IOB2), at their character offsets in the joined text; a returned
entity counts if its type, start and end all match one (strict, as seqeval's IOB2 mode).
The scores are `kerasformer.training.tagger_evaluation.tagger_metrics`'s, which
``kerasformer evaluate`` prints for a tagger; `--json` prints them as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

BATCH = 64


def raw_text_scores(export_dir: Path, tagged_file: Path) -> dict[str, dict]:
    """Entity scores of ``export_dir`` on ``tagged_file``: through ``serving_default`` on
    raw text, and through `predict_tags` on the file's own words (`tagger_metrics`, what
    ``kerasformer evaluate`` reports for a tagger)."""
    from kerasformer.datasets.tagged_sentences import read_tagged_file
    from kerasformer.training.tagger_evaluation import tagger_metrics

    part, _ = read_tagged_file(tagged_file)
    metrics = tagger_metrics(export_dir, part, BATCH)
    tokens = metrics["token_level"]
    return {
        "raw_text": metrics["raw_text"],
        "file_words": {name: tokens[name] for name in ("precision", "recall", "f1")},
        "sentences": metrics["sentences"],
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
