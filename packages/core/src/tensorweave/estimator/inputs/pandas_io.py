"""``tf.estimator.inputs.pandas_input_fn``: an input_fn over a pandas DataFrame's columns. pandas is never a
dependency; without it the call fails as TF's does."""

import numpy as np

from tensorweave.estimator.inputs.numpy_io import numpy_input_fn

__all__ = ["pandas_input_fn"]

try:
    import pandas as pd
except ImportError:  # only the call needs pandas
    pd = None


def pandas_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1,
                    target_column="target"):
    """An input_fn returning (a dict of x's columns, y as a tensor or, for a DataFrame, a dict) batches."""
    if pd is None:
        raise TypeError("pandas_input_fn should not be called without pandas installed")
    if not isinstance(shuffle, bool):
        raise ValueError(f"shuffle must be provided and explicitly set as boolean (it is recommended to set it as "
                         f"True for training); got {shuffle}")
    if not isinstance(target_column, str):
        raise TypeError("target_column must be a string type")
    features = {str(column): x[column].values for column in x.columns}
    labels = None
    if y is not None:
        if target_column in x:
            raise ValueError(f"Cannot use name {target_column} for target column: DataFrame already has a column with "
                             f"that name: {x.columns}")
        if not np.array_equal(x.index, y.index):
            raise ValueError(f"Index for x and y are mismatched.\nIndex for x: {x.index}\nIndex for y: {y.index}\n")
        labels = ({str(c): y[c].values for c in y.columns} if isinstance(y, pd.DataFrame) else np.asarray(y.values))
    return numpy_input_fn(features, labels, batch_size=batch_size, num_epochs=num_epochs, shuffle=shuffle,
                          queue_capacity=queue_capacity, num_threads=num_threads)
