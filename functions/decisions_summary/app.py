"""GET /v3/decisions/summary: the client's decisions counted per day, reason code, kind and channel."""

from phoneid.api.decision_models import ClientRequestIdQuery, DecisionSummaryResponse, SummaryFrom, SummaryTo
from phoneid.api.http import caller, entrypoint, make_app
from phoneid.bootstrap import container

app = make_app()


@app.get("/v3/decisions/summary")
def summarise_decisions(
    first: SummaryFrom = None,
    last: SummaryTo = None,
    client_request_id: ClientRequestIdQuery = None,
) -> DecisionSummaryResponse:
    return container().decisions.summary(caller(app), first=first, last=last)


handler = entrypoint(app, json_body=False)
