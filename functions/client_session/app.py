"""POST /client/v1/session: what the SDK must do to prove possession for this flow.

A unified flow's SDK may say here whether it runs the mobile or the desktop flow.
"""

from phoneid.api.client_models import ClientSession, FlowChoice
from phoneid.api.http import entrypoint, flow_token, make_app
from phoneid.bootstrap import container

app = make_app(browser=True)


@app.post("/client/v1/session")
def session(request: FlowChoice) -> ClientSession:
    return container().possession.choose_flow(flow_token(app), request.flowType)


handler = entrypoint(app, browser=True)
