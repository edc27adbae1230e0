"""emu.support.hotpath writes pydantic's private instance slots to build records without validation; it
checks once per process that the installed pydantic keeps instances that way, and otherwise builds every
record with the public `model_construct`.  Both paths must give the same records."""
from __future__ import annotations

import pydantic
import pytest
from pydantic import BaseModel, Field

from emu.support import hotpath


class _Record(BaseModel):
    index: int
    symbol: str
    args: dict = Field(default_factory=dict)
    ret: int = 0


VALUES = {"index": 4, "symbol": "_cudaGetDevice", "args": {"device": 1}, "ret": 0}


def test_the_installed_pydantic_keeps_instances_as_the_fast_path_assumes():
    """CI runs this with the pydantic the project installs: a release that moved the slots fails here first."""
    assert hotpath._direct_matches_public(), f"pydantic {pydantic.VERSION}: records fall back to model_construct"
    assert hotpath.records_built_directly()         # the answer as a process finds it (kept in the store)


@pytest.mark.parametrize("direct", [True, False], ids=["slots written", "public model_construct"])
def test_both_paths_build_the_validated_record(monkeypatch, direct):
    monkeypatch.setattr(hotpath, "_DIRECT", [direct])
    monkeypatch.setattr(hotpath, "_FACTORIES", {})
    built = hotpath.build_record(_Record, dict(VALUES))
    assert built == _Record.model_validate(VALUES)
    assert built.model_dump() == VALUES and built.model_fields_set == set(VALUES)


@pytest.mark.parametrize("direct", [True, False], ids=["slots written", "public model_construct"])
def test_records_made_together_are_the_validated_records(monkeypatch, direct):
    """records_factory (a run's calls, made when the log is read) gives each record build_record gives."""
    monkeypatch.setattr(hotpath, "_DIRECT", [direct])
    monkeypatch.setattr(hotpath, "_BATCHES", {})
    fields = [dict(VALUES), {**VALUES, "index": 5, "args": {}}]
    built = hotpath.records_factory(_Record)(fields)
    assert built == [_Record.model_validate(values) for values in fields]
    assert [record.__dict__ for record in built] == fields and built[0].model_fields_set == set(VALUES)


def test_a_pydantic_that_keeps_instances_otherwise_is_caught(monkeypatch):
    """The check compares with model_construct: a slot pydantic no longer reads is a difference it sees."""
    real = BaseModel.model_construct.__func__

    def construct_with_other_slots(cls, _fields_set=None, **values):
        instance = real(cls, _fields_set, **values)
        object.__setattr__(instance, "__pydantic_private__", {})     # as a release with a private default would
        return instance

    monkeypatch.setattr(BaseModel, "model_construct", classmethod(construct_with_other_slots))
    assert hotpath._direct_matches_public() is False
