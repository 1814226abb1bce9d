"""What the tests share besides fixtures (those are in the conftest.py files).

- `data`: synthetic AG News rows and CSV files, SQuAD documents, sentence pairs
- `bert`: a tiny random BERT checkpoint in HuggingFace's file layout
- `processes`: code and ``kerasformer`` commands run in a fresh interpreter
- `cli`: ``kerasformer`` commands run in this interpreter, their output captured
- `arrays`: seeded NumPy inputs (normal floats, attention weights)
- `weights`: layers' weights read as NumPy, or set to random values
- `tiny_models`: small untrained translators and a language model, for decoding tests
- `pictures`: reading back the PNGs and pages the plots write
- `cores`: TensorFlow's thread pools sized to each pytest-xdist worker's share of the cores
- `numpy_reference`, `numpy_bert`: independent NumPy implementations the layers and the
  BERT converter are checked against
"""
