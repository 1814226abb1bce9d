"""The ``kerasformer`` command line: train, evaluate, predict."""
