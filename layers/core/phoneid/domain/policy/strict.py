"""The base of every entry of a policy document."""

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """An entry that refuses unknown keys and is never changed in place."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
