"""Converting checkpoints in: pretrained weights from other formats as TF-Hub BERT models."""

from kerasformer.convert.convert_bert import HubBert, convert_bert

__all__ = ["HubBert", "convert_bert"]
