"""TF1's ``tf.saved_model.tag_constants``: the tags that name a SavedModel's meta graphs."""

SERVING = "serve"
TRAINING = "train"
EVAL = "eval"
GPU = "gpu"
TPU = "tpu"

__all__ = ["EVAL", "GPU", "SERVING", "TPU", "TRAINING"]
