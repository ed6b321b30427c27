"""``tensorflow.python.tf2``: whether TF 2 behaviour is on. Never here: Tensorweave's behaviour is TF1's."""


def enabled():
    return False
