"""What an export's `<prefix>_args_spec` describes: the launch function's parameters, as pydantic models.

Apart from the decoder (emu.dsl.args_spec.reader, which walks the pickle with emu.dsl.args_spec.pickle_walk and pickletools) so
that a process that finds the description stored (emu.cache.args_spec_store) imports neither.
"""
# No `from __future__ import annotations`: pydantic reads these annotations as objects, not strings to evaluate.

from pydantic import BaseModel, ConfigDict, Field


class ArgSpecParameter(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Parameter name as the DSL function declares it.")
    kind: str = Field(description="inspect.Parameter kind name, e.g. POSITIONAL_OR_KEYWORD or KEYWORD_ONLY.")
    annotation: str | None = Field(
        description="Dotted name of the annotation the pickle refers to (e.g. cutlass.cute.typing.Tensor), "
        "a string annotation verbatim, a symbolic rendering of anything else, or None when there is none.")
    default: str | None = Field(
        description="repr() of a plain default value, a symbolic rendering of a non-plain one, "
        "or None when the parameter has no default.")


class ArgSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    parameters: list[ArgSpecParameter] = Field(description="Runtime parameters in declaration order "
                                               "(the DSL drops Constexpr parameters before pickling).")
    return_annotation: str | None = Field(description="Return annotation rendered like a parameter "
                                          "annotation, or None when there is none.")
