"""DELETE /v3/decisions?phoneNumber=…: erases every decision record of one number for the client."""

from phoneid.api.decision_models import ClientRequestIdQuery, DecisionEraseResponse, ErasedNumber
from phoneid.api.http import caller, entrypoint, make_app
from phoneid.bootstrap import container

app = make_app()


@app.delete("/v3/decisions")
def erase_decisions(
    phone_number: ErasedNumber,
    client_request_id: ClientRequestIdQuery = None,
) -> DecisionEraseResponse:
    return container().decisions.erase(caller(app), phone_number)


handler = entrypoint(app, json_body=False)
