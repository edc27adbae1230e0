"""Stored answers (emu.cache.answers): worked out once per question, read back by later processes, worked out again
when the file does not hold exactly that question, and every time with the store off."""
from __future__ import annotations

from emu.cache import answers


def test_an_answer_is_worked_out_once_and_read_back(tmp_path, monkeypatch):
    monkeypatch.setenv("EMU_CACHE_DIR", str(tmp_path))
    asked = []

    def work_out(answer):
        def run():
            asked.append(answer)
            return answer
        return run

    assert answers.remembered("q1 with lib 1.0", work_out(True)) is True
    assert answers.remembered("q1 with lib 1.0", work_out(False)) is True          # read back, not worked out
    assert answers.remembered("q2 with lib 1.0", work_out(False)) is False
    assert answers.remembered("q2 with lib 1.0", work_out(True)) is False
    assert asked == [True, False]
    [stored] = [p for p in (tmp_path / "answers").iterdir() if p.read_bytes().startswith(b"q1")]
    stored.write_bytes(b"q1 with lib 1.1\nyes")                                  # another question under its name
    assert answers.remembered("q1 with lib 1.0", work_out(False)) is False
    stored.write_bytes(b"garbage")
    assert answers.remembered("q1 with lib 1.0", work_out(True)) is True
    assert stored.read_bytes() == b"q1 with lib 1.0\nyes" and asked == [True, False, False, True]


def test_off_works_it_out_every_time(monkeypatch):
    monkeypatch.setenv("EMU_CACHE_DIR", "off")
    asked = []
    for _ in range(2):
        assert answers.remembered("q", lambda: asked.append(1) or True) is True
    assert asked == [1, 1]
