"""POST /v3/challenge: checks SSN or date of birth and returns the individual."""

from phoneid.api.http import caller, entrypoint, make_app
from phoneid.api.staged_models import ChallengeRequest, ChallengeResponse
from phoneid.bootstrap import container

app = make_app()


@app.post("/v3/challenge")
def challenge(request: ChallengeRequest) -> ChallengeResponse:
    return container().staged.challenge(caller(app), request)


handler = entrypoint(app)
