"""The pricing arithmetic of bench/cost.py (bench/cost_bench): DynamoDB's size and unit rules, billed
Lambda duration, and the dollars of a flow's usage."""

from __future__ import annotations

import pytest

from bench import cost_bench as cost


def test_item_size_counts_names_and_values_by_type() -> None:
    item = {
        "pk": {"S": "abc"},  # 2 + 3
        "n": {"N": "123.45"},  # 1 + 5 significant digits: 3 + 1
        "b": {"B": b"\x00\x01\x02"},  # 1 + 3
        "ok": {"BOOL": True},  # 2 + 1
        "m": {"M": {"a": {"S": "xy"}}},  # 1 + 3 + (1 + 1 + 2)
        "l": {"L": [{"N": "1"}, {"NULL": True}]},  # 1 + 3 + (1 + 2) + (1 + 1)
        "ss": {"SS": ["a", "bc"]},  # 2 + 3
    }

    assert cost.item_size(item) == 5 + 5 + 4 + 3 + 8 + 9 + 5
    assert cost.item_size(None) == 0
    assert cost.attribute_value_size({"S": "é"}) == 2  # UTF-8 bytes, not characters
    assert cost.attribute_value_size({"B": "AAEC"}) == 3  # moto's base64 text of three bytes


@pytest.mark.parametrize(
    ("number", "size"), [("0", 2), ("100", 2), ("-12345", 4), ("0.0012", 2), ("123.450", 4), ("1E+5", 2)]
)
def test_a_number_costs_a_byte_per_two_significant_digits_plus_one(number: str, size: int) -> None:
    assert cost.number_size(number) == size


def test_read_and_write_units_round_up_per_unit_with_a_minimum() -> None:
    assert [cost.read_units(size, consistent=True) for size in (0, 4096, 4097)] == [1, 1, 2]
    assert [cost.read_units(size, consistent=False) for size in (100, 4097)] == [0.5, 1.0]
    assert [cost.write_units(size) for size in (0, 1024, 1025, 3000)] == [1, 1, 2, 3]


def test_index_writes_count_changed_entries_only() -> None:
    by_phone = {"KeySchema": [{"AttributeName": "phoneKey"}], "Projection": {"ProjectionType": "ALL"}}
    by_client = {
        "KeySchema": [{"AttributeName": "clientId"}],
        "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["status"]},
    }
    indexes, keys = [by_phone, by_client], ["pk"]
    item = {"pk": {"S": "e1"}, "phoneKey": {"S": "p1"}, "note": {"S": "x" * 1500}}
    noted = {**item, "note": {"S": "y"}}
    moved = {**noted, "phoneKey": {"S": "p2"}}

    assert cost.index_write_units(indexes, keys, None, item) == 2  # a 1.5 KB entry in byPhone only
    assert cost.index_write_units(indexes, keys, item, item) == 0
    assert cost.index_write_units(indexes, keys, item, noted) == 1  # rewritten in place, now small
    assert cost.index_write_units(indexes, keys, noted, moved) == 2  # deleted under p1, put under p2
    # byClient keeps only keys and status: a note changing leaves its entry as it was
    client = {**noted, "clientId": {"S": "c1"}}
    assert cost.index_write_units(indexes, keys, client, {**client, "note": {"S": "z"}}) == 1


def test_a_count_or_a_projection_is_sized_as_the_whole_items_it_reads() -> None:
    query = {
        "TableName": "activity",
        "KeyConditionExpression": "pk = :pk AND sk >= :since",
        "FilterExpression": "#status = :active",
        "ProjectionExpression": "#status, serviceId",
        "Select": "SPECIFIC_ATTRIBUTES",
        "ExpressionAttributeNames": {"#status": "status"},
        "ExpressionAttributeValues": {":pk": {"S": "n"}, ":since": {"S": "1"}, ":active": {"S": "active"}},
        "ExclusiveStartKey": {"pk": {"S": "n"}, "sk": {"S": "2"}},
        "Limit": 10,
    }

    assert cost.whole_item_query(query) == {
        "TableName": "activity",
        "KeyConditionExpression": "pk = :pk AND sk >= :since",
        "ExpressionAttributeValues": {":pk": {"S": "n"}, ":since": {"S": "1"}},
        "ExclusiveStartKey": {"pk": {"S": "n"}, "sk": {"S": "2"}},
        "Limit": 10,
    }
    plain = {
        "TableName": "t",
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": {"S": "n"}},
    }
    assert cost.whole_item_query(plain) == plain


def test_waits_add_up_on_the_handler_thread_and_overlap_across_pool_tasks() -> None:
    calls = [(0, "dynamodb"), (0, "kms"), (1, "dynamodb"), (1, "kms"), (2, "sns"), (3, "execute-api")]

    # 6 + 10 on the handler's thread, then the longest task: SNS's 30 (task 1: 16, task 3: 20)
    assert cost.waiting_ms(calls) == 46.0


def test_billed_duration_stretches_cpu_by_the_memory_share_and_rounds_up() -> None:
    # 2 ms of CPU at 512 MB take 2 * 1769 / 512 = 6.91 ms, plus 32 ms of waits: 38.91, billed 39
    assert cost.billed_duration_ms(2.0, 512, 32.0) == 39
    assert cost.billed_duration_ms(1.5, 1769, 10.0) == 12
    assert cost.billed_duration_ms(1.0, 3008, 0.0) == 1  # a full vCPU and no more above 1,769 MB
    assert cost.billed_duration_ms(0.0, 512, 0.0) == 1
    assert cost.gb_seconds(1000, 1024) == 1.0
    assert cost.gb_seconds(39, 512) == 0.0195


def test_dollars_per_1000_flows_split_as_aws_bills_them() -> None:
    per_flow = cost.Usage(
        api_requests=10,
        lambda_requests=12,
        lambda_gb_seconds=0.17,
        read_units=15.5,
        write_units=16,
        kms_requests=7,
        kms_asymmetric_requests=1,
        sms=1,
    )

    dollars = per_flow.scaled(1000).dollars()

    assert dollars.api_gateway == pytest.approx(0.035, abs=1e-12)
    assert dollars.lambda_requests == pytest.approx(0.0024, abs=1e-12)
    assert dollars.lambda_gb_seconds == pytest.approx(0.002266678, abs=1e-12)
    assert dollars.dynamodb_reads == pytest.approx(0.0019375, abs=1e-12)
    assert dollars.dynamodb_writes == pytest.approx(0.01, abs=1e-12)
    assert dollars.kms == pytest.approx(0.021 + 0.015, abs=1e-12)  # 7 symmetric, 1 on the ECC key
    assert dollars.sms == pytest.approx(5.81, abs=1e-12)
    assert dollars.total == pytest.approx(0.087604178, abs=1e-12)  # SMS apart


def test_a_cached_authorizer_answer_costs_nothing_but_its_request_does() -> None:
    calls = [
        cost.AwsCall("dynamodb.GetItem", read_units=0.5),
        cost.AwsCall("kms.Sign", kms_asymmetric=True),
        cost.AwsCall("kms.GenerateMac"),
        cost.AwsCall("sns.Publish", sms=1),
    ]
    authorizer = cost.Invocation("AuthorizerFunction", 512, cpu_ms=0.0, cached=True)
    handler = cost.Invocation("StartFunction", 1024, calls=calls, cpu_ms=0.0)
    request = cost.Request("POST /v3/start", [authorizer, handler])

    usage = request.usage()

    # 6 + 10 + 10 + 30 ms of waits at 1 GB; the cached authorizer is neither invoked nor billed
    assert usage == cost.Usage(
        api_requests=1,
        lambda_requests=1,
        lambda_gb_seconds=0.056,
        read_units=0.5,
        kms_requests=1,
        kms_asymmetric_requests=1,
        sms=1,
    )
    assert request.billed() == [handler]
