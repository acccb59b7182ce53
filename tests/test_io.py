"""Atomic output: a failure while writing leaves the old file and no temporary file."""
import pandas as pd
import pytest

from mpvi.ground import io


def test_atomic_write_replaces_the_file(tmp_path):
    target = tmp_path / "sub" / "a.csv"
    io.write_csv(pd.DataFrame({"x": ["1"]}), target)
    io.write_csv(pd.DataFrame({"x": ["2"]}), target)
    assert target.read_text().splitlines() == ["x", "2"]
    assert [p.name for p in target.parent.iterdir()] == ["a.csv"]


def test_crash_while_writing_keeps_the_old_file(tmp_path):
    target = tmp_path / "a.csv"
    target.write_text("old\n")

    class Boom(pd.DataFrame):
        def to_csv(self, path, **kw):
            with open(path, "w") as f:
                f.write("half a li")
            raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError, match="disk on fire"):
        io.write_csv(Boom({"x": [1]}), target)
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["a.csv"]


def test_provenance_records_context_and_parameters():
    from mpvi import MPContext
    rec = io.provenance(MPContext(50), {"h": "1/10"}, 1.23456)
    assert rec["context"] == "mp50" and rec["digits"] == 50
    assert rec["parameters"] == {"h": "1/10"} and rec["wall_time_s"] == 1.235
    assert rec["git_commit"] and rec["mpvi_version"]


def test_atomic_write_gives_the_usual_file_mode(tmp_path):
    """mkstemp creates 0600 files; outputs get 0666 minus the umask like any file."""
    import os
    from mpvi.ground.io import write_text
    target = tmp_path / "x.txt"
    write_text(target, "hello")
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask
