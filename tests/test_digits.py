"""``mpvi run --check-digits`` (mpvi.repro.digits): a second run with more digits, the agreement
of every output column and compared value recorded in the provenance JSON, shown by
``mpvi diff`` and ``mpvi report``; the same record from a serial and a parallel run."""
import dataclasses
import io
import json
import re

import matplotlib
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from mpvi.repro import digits  # noqa: E402
from mpvi.repro.cache import DiskCache  # noqa: E402
from mpvi.repro.cli import digits_summary, main  # noqa: E402
from mpvi.repro.parallel import ProcessExecutor, run_parallel  # noqa: E402
from mpvi.repro.published import diff  # noqa: E402
from mpvi.repro.report import write_report  # noqa: E402
from mpvi.repro.declare import all_reproductions, Output, Reproduction  # noqa: E402
from mpvi.repro.records import read_provenance  # noqa: E402
from mpvi.repro.run import execute  # noqa: E402

REPS = all_reproductions()


# ----- the agreement of two numbers, columns and tables --------------------------------------

@pytest.mark.parametrize("a, b, expected", [
    ("0.333333333333", "0.33333333333333333", 12),     # all shown digits right
    ("1.000000000000", "1.0000000001", 10),             # rel. diff 1e-10: 10 digits
    ("1.00000", "1.0000000001", 6),                     # never more than shown
    ("2.5e-65", "1.3e-66", 0),                          # round-off: no digit
    ("1e-70", "0", 0),                                  # the precise run says 0
    ("0", "0", 1),
    ("12345", "12345", 5),
    ("42", "nan", 0),                                   # a number against no number
    ("newmark", "newmark", None),                       # not numbers: not counted
    ("nan", "nan", None),
    ("", "", None),
])
def test_the_correct_digits_of_one_number(a, b, expected):
    assert digits.cell_digits(a, b) == expected


def test_a_column_reports_its_fewest_digits_and_where():
    col = digits.column_agreement(["1.0", "0.3333", "x", "2.0001"],
                                  ["1.0", "0.3334", "x", "2.0002"])
    assert col == {"min": 3, "row": 1, "median": 3, "identical": False}   # not row 0's 2
    assert digits.column_agreement(["1", "2"], ["1", "2"]) == {"min": 1, "row": 0,
                                                               "median": 1, "identical": True}
    assert digits.column_agreement(["a", "b"], ["a", "b"]) is None


def test_values_naming_the_digits_are_paired_and_unchecked_names_left_out():
    check = digits.agreement(
        {"a.csv": b"t,wall_s\n1.5,0.31\n"}, {"mp64 max error": "1.25e-3", "order": "4.0001",
                                             "seconds": "2.5"},
        {"a.csv": b"t,wall_s\n1.5,0.27\n"}, {"mp84 max error": "1.2500001e-3",
                                             "order": "4.0001", "seconds": "2.1"},
        64, 84, 1.0, unchecked={"wall_s": "a wall time", "seconds": "a wall time"})
    assert check["values"] == {"mp64 max error": {"digits": 3, "identical": False},
                               "order": {"digits": 5, "identical": True}}
    assert check["tables"] == {"a.csv": {"t": {"min": 2, "row": 0, "median": 2,
                                               "identical": True}}}
    assert check["smallest"] == 3 and check["where"] == "value mp64 max error"
    assert check["problems"] == [] and check["unchecked"]["wall_s"] == "a wall time"


def test_tables_of_another_shape_are_named_as_a_problem():
    a = b"t,y,m\n0,1.5,rk4\n1,2.25,rk4\n"
    cols, problem = digits.table_agreement(a, b"t,y,m\n0,1.5,rk4\n1,2.26,rk4\n")
    assert problem is None and set(cols) == {"t", "y"} and cols["y"]["min"] == 2
    cols, problem = digits.table_agreement(a, b"t,y,m\n0,1.5,rk4\n")
    assert "1 rows, not 2" in problem and cols["y"]["identical"]


# ----- a reproduction whose digits are known -------------------------------------------------

def _compute(run):
    ctx = run.ctx
    third = ctx.num(1) / 3
    roundoff = ctx.sqrt(ctx.num(2)) ** 2 - 2         # 0 in exact arithmetic
    rows = [{"n": k, "third": third * k, "roundoff": roundoff * k, "label": "x"}
            for k in range(1, 4)]
    return Output({"": pd.DataFrame(rows)}, {"third": str(third), "n": "3",
                                             "cancelled": str(roundoff)})


def _plot(output, params):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    return fig


FAKE = Reproduction(id="digits_fig01", paper="digits", item="Fig. 1", title="known digits",
                    params={}, compute=_compute, plot=_plot, published=False)


def test_a_check_records_every_column_and_value(tmp_path):
    execute(FAKE, "gmp", 30, False, tmp_path, stream=io.StringIO(), check_digits=True)
    record = read_provenance(FAKE, tmp_path)              # the schema accepts the record
    check = record["digits_check"]
    assert check["check_digits"] == 50 and check["problems"] == []
    cols = check["tables"]["digits_fig01.csv"]
    assert set(cols) == {"n", "third", "roundoff"}        # 'label' is not a number
    assert cols["n"]["identical"]
    assert cols["third"]["min"] >= 29 and not cols["third"]["identical"]
    assert cols["roundoff"]["min"] == 0                   # round-off: no digit right
    assert check["values"]["third"]["digits"] >= 29
    assert check["values"]["n"] == {"digits": 1, "identical": True}
    assert check["values"]["cancelled"]["digits"] == 0
    assert check["smallest"] == 0 and "roundoff" in check["where"]
    assert digits.summary(check).startswith("checked at 50 digits: at least 0 correct digits")
    line = digits_summary([], {FAKE.id: record})
    assert "measured for 1 of 1 run(s)" in line
    assert "1 of 2 output columns hold round-off (e.g. digits_fig01: digits_fig01.csv column " \
        "'roundoff', row 1)" in line
    fewest = re.search(r"output columns: at least (\d+) \(digits_fig01: digits_fig01.csv "
                       r"column 'third'", line)
    assert fewest and int(fewest.group(1)) >= 29


def test_without_the_option_nothing_is_recorded(tmp_path):
    execute(FAKE, "gmp", 30, False, tmp_path, stream=io.StringIO())
    record = read_provenance(FAKE, tmp_path)
    assert "digits_check" not in record
    assert "not measured" in digits_summary([], {FAKE.id: record})


def test_float64_cannot_be_checked(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["run", "axioms2024_fig08", "--context", "fp", "--check-digits",
              "--out", str(tmp_path)])
    assert exit_.value.code == 2
    assert "--check-digits needs a context whose precision can be raised" in \
        capsys.readouterr().err
    assert not (tmp_path / "axioms2024").exists()


# ----- a real reproduction: CLI, diff, report, and a parallel run ------------------------------

@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    out = tmp_path_factory.mktemp("checked")
    assert main(["run", "axioms2024_fig08", "--quick", "--dps", "30", "--no-cache",
                 "--check-digits", "--out", str(out)]) == 0
    return out


def test_diff_shows_the_correct_digits_of_each_compared_value(checked, capsys):
    capsys.readouterr()
    assert main(["diff", "axioms2024_fig08", "--out", str(checked)]) == 0
    text = capsys.readouterr().out
    assert any(line.startswith("key") and "digits" in line for line in text.splitlines())
    assert "correct digits measured for 1 of 1 run(s); compared values: at least" in text
    rows = diff(["axioms2024_fig08"], checked)
    assert rows and all(r.digits is not None and 15 <= r.digits <= 30 for r in rows)
    capsys.readouterr()
    assert main(["diff", "axioms2024_fig08", "--out", str(checked), "--format", "json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert [r["correct_digits"] for r in recs] == [r.digits for r in rows]


def test_the_report_shows_the_correct_digits_per_column(checked, tmp_path):
    index, _ = write_report(checked, tmp_path / "report", {"axioms2024_fig08":
                                                           REPS["axioms2024_fig08"]},
                            stream=io.StringIO())
    page = (tmp_path / "report" / "axioms2024.html").read_text()
    assert 'class="correct-digits"' in page and "checked at 50 digits: at least" in page
    assert "of 1 checked" in index.read_text()


def test_a_parallel_check_records_what_a_serial_one_does(tmp_path):
    rep = REPS["axioms2024_tab02"]
    small = dataclasses.replace(rep, params=dict(rep.params, T_tbar=[1, 10]), quick={})
    execute(small, "gmp", 30, False, tmp_path / "serial", stream=io.StringIO(),
            check_digits=True)
    cache = DiskCache(tmp_path / "cache")
    err = io.StringIO()
    executor = ProcessExecutor(2)
    try:
        ran, refused, failed = run_parallel({small.id: small}, [small.id], executor, "gmp", 30,
                                            False, tmp_path / "par", cache, stream=err,
                                            check_digits=True)
    finally:
        executor.close()
    assert ran == [small.id], err.getvalue()
    assert "[gmp50]" in err.getvalue()                    # the 50-digit studies were tasks
    serial = read_provenance(small, tmp_path / "serial")["digits_check"]
    par = read_provenance(small, tmp_path / "par")["digits_check"]
    assert {k: v for k, v in par.items() if k != "wall_time_s"} == \
        {k: v for k, v in serial.items() if k != "wall_time_s"}
    assert serial["tables"] and serial["smallest"] is not None
    entries = list((tmp_path / "cache").rglob("*.json"))
    assert any('"digits": 50' in p.read_text() for p in entries)


@pytest.mark.parametrize("printed, ball, expected", [
    ("0.0", "0", 2),                 # a printed zero proven by an enclosure exactly 0
    ("-0.000", "0", 4),
    ("0.0", "[+/- 1e-30]", 0),       # a zero has no relative digits: a ball about it proves none
    ("1.25", "[1.25 +/- 1e-20]", 20),   # -log10(1e-20 / 1.25) = 20.1
    ("1.25", "[1.5 +/- 1e-20]", 0),  # outside
])
def test_the_proven_digits_of_a_printed_number(printed, ball, expected):
    from flint import arb
    assert digits.proven_digits(printed, arb(ball))[0] == expected
