"""The base of emu's records (traces, check and inspect results): one pydantic config.

Unknown fields are refused, so a typo in a consumer's JSON is an error, not a silent
default.  Validators and serializers are built on first use (`defer_build`): a run that
never validates or dumps a record does not pay for building it.
"""
from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
