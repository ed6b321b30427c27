"""What every test job does first: start tensorweave_distributed and check the world size it was given."""

import os

import tensorweave_distributed as twd


def start(**settings):
    twd.init(**settings)
    expected = int(os.environ["TW_TEST_WORLD_SIZE"])
    assert twd.size() == expected, f"rank {twd.rank()} sees {twd.size()} ranks, the test launched {expected}"
    print(f"world size {expected} ok on rank {twd.rank()}", flush=True)
    return twd.rank(), twd.size()
