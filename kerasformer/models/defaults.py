"""The models' default options and choices, as plain data.

The builders take their defaults from here, and the command line shows them in
``--help`` and checks choices against them without importing TensorFlow. Each model
module keeps its own names for them (``transformer_classifier.DEFAULTS``, ...).
"""

GREEDY = 1  # a translator's beam of one: greedy decoding, the default

# The from-scratch transformer classifier.
# Where each position scheme lives: (TokenAndPositionEmbedding, TransformerBlock).
CLASSIFIER_POSITIONS = {
    "learned": ("learned", "none"),
    "sinusoidal": ("sinusoidal", "none"),
    "rotary": ("none", "rotary"),
    "relative": ("none", "relative"),
}

TRANSFORMER_CLASSIFIER = dict(
    vocab_size=20_000,
    # Chosen on BBC News validation accuracy (mean of 3 seeds: 0.982 at 512, 0.959 at 256):
    # 71% of its articles run past 256 words. Short texts pay nothing for it (length buckets).
    maxlen=512,
    embed_dim=32,
    num_heads=2,
    ff_dim=32,
    dropout=0.1,
    dense_units=20,
    norm_first=False,
    position="learned",
)

# A tagger's decodings: IOB2-constrained Viterbi, or each word's best tag.
DECODINGS = ("constrained", "argmax")

# The decoder-only language model.
LANGUAGE_MODEL = dict(
    maxlen=128,  # the context window, in tokens
    embed_dim=128,
    num_heads=4,
    ff_dim=512,
    num_layers=2,
    dropout=0.1,
    position="learned",
    norm_first=False,
    tie_embeddings=False,
    adaptive_cutoffs=None,
)
# Tokens generated after a prompt unless told.
DEFAULT_MAX_TOKENS = 50

# The transformer translator.
TRANSFORMER_TRANSLATOR = dict(
    maxlen=80,  # tokens per sentence, with [start]/[end]; spa-eng's longest has 60
    embed_dim=128,
    num_heads=4,
    ff_dim=512,
    num_layers=2,
    dropout=0.1,
    position="learned",
    norm_first=False,
    tie_embeddings=False,
)

# The RNN translator with Bahdanau attention.
RNN_TRANSLATOR = dict(maxlen=80, embed_dim=128, units=256, dropout=0.1)

# The BERT question answerer.
# null_threshold None: always answer (SQuAD v1.1); a number: answer "" when the
# no-answer score beats the best span's by more than it (SQuAD 2.0).
QUESTION_ANSWERER = {
    "seq_length": 384, "doc_stride": None, "max_question_tokens": None, "null_threshold": None
}  # fmt: skip

# The from-scratch taggers (BiLSTM and transformer) over words and their characters.
TAGGER_COMMON = dict(
    vocab_size=20000,
    min_count=2,
    char_embed_dim=25,
    char_filters=50,
    dropout=0.3,
    decoding="constrained",
)
RNN_TAGGER = dict(TAGGER_COMMON, embed_dim=100, units=128)
TRANSFORMER_TAGGER = dict(TAGGER_COMMON, embed_dim=128, num_heads=4, ff_dim=256, num_layers=2)

# The BERT tagger.
BERT_TAGGER = {"seq_length": 128, "doc_stride": None, "dropout": 0.1, "decoding": "constrained"}

# BERT's windows over long contexts.
# By default windows start half a window's context apart, and at most this far (as in
# the BERT paper's SQuAD runs).
LONGEST_DEFAULT_STRIDE = 128

# A translator's vocabularies.
# The Keras English-to-Spanish example's vocabulary size, for each language.
TRANSLATION_VOCAB_SIZE = 15_000
# Each language's subword vocabulary, when --tokenizer sentencepiece.
SUBWORD_VOCAB_SIZE = 8_000
# One vocabulary of both languages (--tie-embeddings): as large as the two together.
SHARED_SUBWORD_VOCAB_SIZE = 16_000
