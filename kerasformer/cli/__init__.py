"""The ``kerasformer`` command line: train, evaluate, predict, translate, generate."""
