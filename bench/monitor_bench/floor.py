"""The floor: a bare parallel scan of the same table, with the pass's own request (the same segments,
page size of 100, filter on active identities and projection, through the same adapter), each
segment read to its end, nothing checked. What a pass cannot go below on this machine."""

from __future__ import annotations

from tests.harness import Api

PAGE_SIZE = 100  # phoneid.services.monitor_passes.MonitorPasses's page


def bare_scan(api: Api, total_segments: int) -> tuple[int, int]:
    """(active identities read, pages) over every segment."""
    enrollments = api.container.enrollment_store
    identities = pages = 0
    for segment in range(total_segments):
        position: str | None = None
        while True:
            page, position = enrollments.active_segment_page(segment, total_segments, position, PAGE_SIZE)
            identities += sum(1 for e in page if e.country == "US")
            pages += 1
            if position is None:
                break
    return identities, pages
