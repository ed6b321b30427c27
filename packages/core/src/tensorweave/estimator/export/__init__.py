"""``tf.estimator.export``: serving input receivers, export outputs (signatures) and exporters."""

from tensorweave.estimator.export.export_output import (  # noqa: F401
    ClassificationOutput, ExportOutput, PredictOutput, RegressionOutput,
)
from tensorweave.estimator.export.serving_input import (  # noqa: F401
    ServingInputReceiver, TensorServingInputReceiver, build_parsing_serving_input_receiver_fn,
    build_raw_serving_input_receiver_fn,
)
