from tests.harness import Api


def test_token_only_user_walks_the_whole_staged_flow(api: Api) -> None:
    # Given an integrator of the identity solution
    integrator = api.integrator()

    # When it runs start, validate, challenge and complete for the token-only test user
    started = integrator.start(phoneNumber="+12025550111")
    correlation_id = started.json()["correlationId"]
    validated = integrator.post("/v3/validate", {"correlationId": correlation_id})
    challenged = integrator.post("/v3/challenge", {"correlationId": correlation_id, "dob": "1999-08-08"})
    completed = integrator.post(
        "/v3/complete",
        {"correlationId": correlation_id, "individual": {"firstName": "Kira", "lastName": "Petrova"}},
    )

    # Then every step answers 200 and names the next one, ending with done
    assert started.status == 200
    assert started.json()["next"] == {"v3-validate": "/v3/validate"}
    assert validated.json() == {
        "success": True,
        "challengeMissing": True,
        "phoneNumber": "+12025550111",
        "next": {"v3-challenge": "/v3/challenge"},
    }
    assert challenged.json()["individual"]["ssn"] == "911456711"
    assert completed.status == 200
    assert completed.json() == {
        "success": True,
        "next": {"done": "done"},
        "evaluation": {
            "identification": {"result": "pass"},
            "authentication": {"result": "pass"},
            "compliance": {"result": "pass"},
            "risk": {"result": "pass"},
        },
    }
