"""``tf.saved_model`` (TF1): write a SavedModel real TensorFlow and TF Serving load, and load TensorFlow's.

The modules keep TF1's names (``builder``, ``loader``, ``tag_constants``, ``signature_constants``,
``signature_def_utils``, ``utils``, ``main_op``, ``constants``); the short names TF1 has directly under
``tf.saved_model`` are here too.
"""

from tensorweave.saved_model import (  # noqa: F401
    builder, constants, loader, main_op, signature_constants, signature_def_utils, tag_constants, utils,
)
from tensorweave.saved_model.builder import SavedModelBuilder  # noqa: F401
from tensorweave.saved_model.constants import *  # noqa: F401,F403
from tensorweave.saved_model.loader import contains_saved_model, load, maybe_saved_model_directory  # noqa: F401
from tensorweave.saved_model.main_op import main_op_with_restore  # noqa: F401
from tensorweave.saved_model.signature_constants import *  # noqa: F401,F403
from tensorweave.saved_model.signature_def_utils import (  # noqa: F401
    build_signature_def, classification_signature_def, is_valid_signature, predict_signature_def,
    regression_signature_def,
)
from tensorweave.saved_model.simple_save import simple_save  # noqa: F401
from tensorweave.saved_model.tag_constants import EVAL, GPU, SERVING, TPU, TRAINING  # noqa: F401
from tensorweave.saved_model.utils import build_tensor_info, get_tensor_from_tensor_info  # noqa: F401

Builder = SavedModelBuilder
