"""TFDS datasets faked offline: split metadata as `tfds build` writes it, examples a test knows."""

import tensorflow as tf
import tensorflow_datasets as tfds


def write_split_metadata(data_dir, name, split_sizes):
    """A ``dataset_info.json`` for ``name`` naming these splits, as `tfds build` writes one."""
    builder = tfds.builder(name, data_dir=str(data_dir))
    builder.info.set_splits(
        tfds.core.SplitDict(
            [
                tfds.core.SplitInfo(name=split, shard_lengths=[size], num_bytes=0)
                for split, size in split_sizes.items()
            ]
        )
    )
    builder.data_path.mkdir(parents=True)
    builder.info.write_to_directory(builder.data_path)


def numbered_examples(make_example):
    """An ``as_dataset_fn``: the split's examples ``make_example(split, i)``, as many as its
    metadata records (60 where it records none)."""

    def as_dataset(self, split, decoders=None, read_config=None, shuffle_files=False):
        split = str(split)
        count = self.info.splits[split].num_examples if self.info.splits else 60
        examples = [make_example(split, i) for i in range(count)]
        return tf.data.Dataset.from_tensor_slices(
            {key: [example[key] for example in examples] for key in examples[0]}
        )

    return as_dataset


def prepared_dataset(data_dir, name, split_sizes, make_example):
    """A context in which TFDS finds ``name`` prepared in ``data_dir`` with these split
    sizes, its examples ``make_example(split, i)``."""
    write_split_metadata(data_dir, name, split_sizes)
    return tfds.testing.mock_data(
        policy=tfds.testing.MockPolicy.USE_FILES,
        data_dir=str(data_dir),
        as_dataset_fn=numbered_examples(make_example),
    )
