"""`check`'s rows are built without validation (emu.support.hotpath.build_record): they must be exactly what
validating the same values gives, for every real-world export and every 4.8.0 fixture.

Validating the dumped result again and comparing (values, types and JSON) catches a row holding a value
of another type than its field says (a tuple for a list, an enum for an int, a shared mutable object).
"""
from __future__ import annotations

import warnings

from conftest import DSL480, ROOT

from emu.commands.check import CheckResult, check_objects

OBJECTS = sorted(str(p) for p in (ROOT / "tests" / "fixtures" / "realworld").rglob("*.o")) + \
    sorted(str(p) for p in DSL480.rglob("*.o")) + sorted(str(p) for p in (ROOT / "tests" / "data" / "check").glob("*.o"))


def test_unvalidated_rows_equal_validated_ones():
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # a serializer warning means a value of another type than its field
        result = check_objects(OBJECTS, device_count=2)
        dumped = result.model_dump_json()
    validated = CheckResult.model_validate_json(dumped)
    assert validated == result and validated.model_dump_json() == dumped
    assert sum(len(o.checks) for o in result.objects) > 100 and all(o.error is None for o in result.objects)
    for obj in result.objects:
        for loader in obj.loaders:
            for row in loader.sets:
                assert {type(row.attribute), type(row.value), type(row.device), type(row.ret)} == {int}


def test_the_check_result_does_not_share_the_exports_metadata():
    """The cached export description outlives the result: changing one must not change the other."""
    from emu.cache.loaded import load_image
    path = str(DSL480 / "x86_64" / "carveout_25.o")
    obj = check_objects([path], device_count=1).objects[0]
    obj.kernels.append("changed")
    next(iter(obj.kernel_info.values()))[9] = -5
    _, (export,) = load_image(path)
    assert "changed" not in export.kernels and -5 not in next(iter(export.kernel_info.values())).values()
