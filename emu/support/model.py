"""The base of emu's records (traces, check and inspect results): one pydantic config.

Unknown fields are refused, so a typo in a consumer's JSON is an error, not a silent
default.  Validators and serializers are built on first use (`defer_build`): a run that
never validates or dumps a record does not pay for building it.
"""
from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


def empty_list() -> list:
    """`Field(default_factory=empty_list)`: `list` as a factory pydantic can read cheaply.

    Building a validator, pydantic reads each default factory's signature; a builtin's comes from
    tokenizing its text signature, and the first tokenization compiles tokenize's expressions (about
    6 ms of a cold run).  A Python function's signature is read from its code.
    """
    return []


def defaults_of(cls: type[BaseModel]):
    """`Field(default_factory=defaults_of(Block))`: an instance of `cls` holding only its defaults, unvalidated.

    `default_factory=Block` validates the empty input on every omitted block, and the first time
    builds `Block`'s own validator besides the one its parent already holds (11 ms for a scenario's
    `expect:`, in every run of a scenario without one).  Only for a model whose defaults need no
    validator (no model or field validators that change them): the instance is the one `Block()` makes.
    """
    def factory():
        return cls.model_construct()
    factory.__qualname__ = f"defaults_of({cls.__name__})"
    return factory
