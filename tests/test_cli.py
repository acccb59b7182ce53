"""The mpvi command line: list, run, diff and their errors."""
import json

import pytest

from mpvi.cli import main
from mpvi.repro import all_reproductions

AXIOMS = ["axioms2024_fig02", "axioms2024_fig03", "axioms2024_fig04", "axioms2024_fig05",
          "axioms2024_fig06", "axioms2024_fig07", "axioms2024_fig08", "axioms2024_tab02",
          "axioms2024_stability"]


def test_every_axioms2024_item_has_a_script():
    assert set(AXIOMS) <= set(all_reproductions())


def test_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for rid in AXIOMS:
        assert rid in out


@pytest.mark.parametrize("argv, message", [
    (["run", "axioms2024_fig99"], "unknown reproduction id"),
    (["run"], "give at least one reproduction id"),
    (["run", "--all", "axioms2024_fig02"], "not both"),
    (["run", "axioms2024_fig02", "--dps", "0"], "positive integer"),
    (["run", "axioms2024_fig02", "--context", "quad"], "invalid choice"),
    (["diff", "nope"], "unknown reproduction id"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_arguments_exit_2_with_a_message(capsys, argv, message):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_run_writes_csv_png_json_and_diff_reports(tmp_path, capsys):
    assert main(["run", "axioms2024_fig08", "--quick", "--dps", "30", "--out", str(tmp_path)]) == 0
    d = tmp_path / "axioms2024"
    for ext in ("csv", "png", "json"):
        assert (d / f"axioms2024_fig08.{ext}").stat().st_size > 0
    rec = json.loads((d / "axioms2024_fig08.json").read_text())
    assert rec["context"] == "mp30" and rec["quick"] is True and rec["wall_time_s"] > 0
    assert rec["parameters"]["N"] == [10, 25, 63, 160, 400, 1000]
    capsys.readouterr()
    assert main(["diff", "axioms2024_fig08", "--out", str(tmp_path)]) == 0
    assert "3 match" in capsys.readouterr().out


def test_diff_without_a_run_reports_missing_and_exits_1(tmp_path, capsys):
    assert main(["diff", "axioms2024_fig08", "--out", str(tmp_path)]) == 1
    assert "MISSING" in capsys.readouterr().out


def test_diff_on_corrupt_json_names_the_file(tmp_path, capsys):
    d = tmp_path / "axioms2024"
    d.mkdir()
    (d / "axioms2024_fig08.json").write_text("{half")
    assert main(["diff", "axioms2024_fig08", "--out", str(tmp_path)]) == 2
    assert "axioms2024_fig08.json is not valid JSON" in capsys.readouterr().err
