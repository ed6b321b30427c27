"""``tf.compat.v1`` is Tensorweave itself: the whole API is TF1's. ``tensorweave/__init__.py`` sets ``compat.v1``
(and ``import tensorweave.compat.v1``) to the package once it is built, so this module imports nothing above it."""
