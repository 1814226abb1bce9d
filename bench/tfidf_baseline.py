"""TF-IDF + logistic regression on kerasformer's own splits: the bar a transformer must clear.

The regularisation strength is chosen on the validation split; test is reported once.

    python bench/tfidf_baseline.py --data-dir ../shared/data/ag_news_csv

Its smoke run (CI's, `tests/bench/`) is the same on tiny data: ``--datasets ag_news
--data-dir TINY``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tables import markdown_table

HERE = Path(__file__).resolve().parent
STRENGTHS = (0.3, 1.0, 3.0, 10.0, 30.0)
DATASETS = ("ag_news", "bbc_news")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(HERE.parent.parent / "shared/data/ag_news_csv"))
    parser.add_argument("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS))
    return parser.parse_args(argv)


def accuracy(model, vectorizer, part) -> float:
    predicted = model.predict(vectorizer.transform(part.texts.astype(str)))
    return float((predicted == part.labels).mean())


def best_on_validation(data) -> tuple[float, float, float]:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    train, validation, test = (data.splits[name] for name in ("train", "validation", "test"))
    vectorizer = TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), min_df=2)
    features = vectorizer.fit_transform(train.texts.astype(str))
    fitted = {
        c: LogisticRegression(C=c, max_iter=2000).fit(features, train.labels) for c in STRENGTHS
    }
    chosen = max(STRENGTHS, key=lambda c: accuracy(fitted[c], vectorizer, validation))
    model = fitted[chosen]
    return chosen, accuracy(model, vectorizer, validation), accuracy(model, vectorizer, test)


def main(argv: list[str] | None = None) -> None:
    from kerasformer.datasets import load_dataset

    args = parse_args(argv)
    rows = []
    for name in args.datasets:
        data_dir = args.data_dir if name == "ag_news" else None  # BBC News: its package
        chosen, validation, test = best_on_validation(load_dataset(name, data_dir))
        rows.append([name, chosen, f"{validation:.4f}", f"{test:.4f}"])
    headers = ("dataset", "C (chosen on validation)", "validation acc.", "test acc.")
    print(markdown_table(headers, rows))


if __name__ == "__main__":
    main()
