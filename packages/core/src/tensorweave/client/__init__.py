"""Client-side tools that read what a session reports (TF1's ``tensorflow.python.client``)."""
