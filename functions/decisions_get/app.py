"""GET /v3/decisions/{id}: one of the client's decision records, whole."""

from phoneid.api.decision_models import ClientRequestIdQuery, DecisionView, or_not_found
from phoneid.api.http import caller, entrypoint, make_app
from phoneid.bootstrap import container

app = make_app()


@app.get("/v3/decisions/<id>", responses=or_not_found(DecisionView))
def get_decision(
    id: str,
    client_request_id: ClientRequestIdQuery = None,
) -> DecisionView:
    return container().decisions.get(caller(app), id)


handler = entrypoint(app, json_body=False)
