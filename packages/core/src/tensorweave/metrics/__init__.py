"""``tf.metrics``: streaming evaluation metrics as TF 1.15 builds them.

Each function returns ``(value, update_op)``: running ``update_op`` adds a batch to counts kept in local
variables (``GraphKeys.LOCAL_VARIABLES`` and ``METRIC_VARIABLES``, named as TF names them, e.g.
``accuracy/total``), and ``value`` reads the metric of everything added since
``tf.local_variables_initializer()`` last ran.
"""

from tensorweave.metrics.at_k import *  # noqa: F401,F403
from tensorweave.metrics.counts import *  # noqa: F401,F403
from tensorweave.metrics.curves import *  # noqa: F401,F403
from tensorweave.metrics.iou import *  # noqa: F401,F403
from tensorweave.metrics.means import *  # noqa: F401,F403
from tensorweave.metrics.operating_points import *  # noqa: F401,F403
