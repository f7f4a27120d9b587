"""The body ``/token`` answers with (OAuth 2.0's names, not the API's camelCase)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class TokenResponse(BaseModel):
    access_token: str
    refresh_token: str
    refresh_expires_in: int
    token_type: Literal["Bearer"] = "Bearer"
    expires_in: int
