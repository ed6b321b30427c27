"""tf.train.Server under mpiexec: a ps task serving two asynchronous workers."""

from mpi_launch import SCRIPTS, run_mpi


def test_ps_serves_two_async_workers():
    proc = run_mpi(SCRIPTS / "ps_server_job.py", 3, timeout=180)
    assert "ps joined: both workers ended" in proc.stdout, proc.stdout
    for task in (0, 1):
        assert f"worker {task}: " in proc.stdout and "shared ok" in proc.stdout, proc.stdout
