"""`trace --export NAME`: one export of a file linked from several, the same run as the full trace's record for it."""
from pathlib import Path

from emu.errors import EXIT_BAD_INPUT, EXIT_OK

LIBRARY = Path(__file__).resolve().parents[1] / "data" / "shared" / "x86_64" / "quack_gemm.dyn.so"


def test_export_picks_one_run_equal_to_its_record_in_the_full_trace(cli):
    every = cli("trace", str(LIBRARY), "--json")
    one = cli("trace", str(LIBRARY), "--json", "--export", "quack_gemm_sm90")
    assert one.code == EXIT_OK, one.err
    runs = {run["export"]: run for run in every.json()}
    assert set(runs) == {"quack_gemm_sm90", "quack_gemm_sm100"}
    assert one.json() == [runs["quack_gemm_sm90"]]


def test_an_export_the_file_lacks_is_refused_naming_its_exports(cli):
    result = cli("trace", str(LIBRARY), "--export", "quack_gemm_sm80")
    assert result.code == EXIT_BAD_INPUT and result.out == ""
    assert "quack_gemm_sm80" in result.err and "quack_gemm_sm100, quack_gemm_sm90" in result.err
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
