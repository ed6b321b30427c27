"""File formats that know no graph: how checkpoints sit on disk (safetensors shards and their index, the
directory lock and writer claims, the encodings of values and slices).

A leaf layer: these modules import only ``tensorweave.dtypes``, ``tensorweave.errors`` and third-party
libraries, so ops (a restore's shape function), kernels (through ``tensorweave.extension``) and the API
(``tf.train.Saver``) all read and write them.
"""
