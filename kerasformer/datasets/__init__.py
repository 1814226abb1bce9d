"""Datasets: text classification, translation pairs and language-model tokens.

Names are imported on first use (PEP 562): ``import kerasformer.datasets`` alone imports
no TensorFlow.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "ag_news": ["load_ag_news"],
        "bbc_news": ["load_bbc_news"],
        "by_name": ["LOADERS", "load_dataset"],
        "corpus_from_files": ["from_text_files"],
        "from_files": ["from_csv", "from_directory", "from_jsonl"],
        "from_tfds": ["from_tfds"],
        "pairs_from_files": ["from_sentence_pairs"],
        "questions_from_files": ["from_squad_files"],
        "sentence_pairs": ["SentencePairs", "TranslationData"],
        "spa_eng": ["SPA_ENG_URL", "load_spa_eng"],
        "text_classification_data": ["LabeledTexts", "TextClassificationData"],
        "wikitext": ["WIKITEXT2_URL", "LanguageModelData", "load_wikitext2"],
    },
)
