"""The assurance levels: each level and the reasons that give it."""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, Literal

from pydantic import Field, field_validator

from phoneid.domain.policy.strict import Strict
from phoneid.domain.reasons import REASONS


class Reason(Strict):
    codes: tuple[int, ...] = ()
    confirmedElements: Annotated[int, Field(ge=0, le=4)] | None = None
    secondarySourceConfirms: bool | None = None
    enrolledBefore: bool | None = None
    identityFound: bool | None = None

    @cached_property
    def unconditional(self) -> bool:
        """A reason with no condition: its level's fallback."""
        return not self.model_dump(exclude_none=True, exclude_defaults=True)

    @field_validator("codes")
    @classmethod
    def _known(cls, codes: tuple[int, ...]) -> tuple[int, ...]:
        unknown = [code for code in codes if code not in REASONS]
        if unknown:
            raise ValueError(f"{unknown} are not reason codes of the evaluation")
        return codes


AssuranceLevel = Literal["AL-1", "AL0", "AL1", "AL2", "AL3"]


class Level(Strict):
    level: AssuranceLevel
    reasons: dict[str, Reason] = Field(min_length=1)
