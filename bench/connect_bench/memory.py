"""The memory of the local stack's process and of each step's Lambda worker processes, read from
/proc while a run goes."""

from __future__ import annotations

import threading
import time
from pathlib import Path

MB = 1024 * 1024


class RssSampler(threading.Thread):
    """(time, VmRSS, VmHWM) of a process every ``interval`` seconds, in bytes; and the peak RSS
    (VmHWM) of each of its Lambda worker processes, by function."""

    def __init__(self, pid: int, interval: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.samples: list[tuple[float, int, int]] = []
        self.workers: dict[int, tuple[str, int]] = {}  # pid -> (function, peak RSS)
        self._halt = threading.Event()

    @staticmethod
    def _status(pid: int) -> tuple[int, int]:
        rss = hwm = 0
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
        return rss, hwm

    def read(self) -> tuple[int, int]:
        return self._status(self.pid)

    def read_workers(self) -> None:
        """Each worker process of the server (``phoneid_dev.processes --function NAME``): its peak."""
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) != self.pid:
                    continue
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                if b"phoneid_dev.processes" not in argv:
                    continue
                function = argv[argv.index(b"--function") + 1].decode()
                _, hwm = self._status(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue  # gone meanwhile
            known = self.workers.get(int(entry.name), (function, 0))
            self.workers[int(entry.name)] = (function, max(known[1], hwm))

    def worker_peaks(self) -> dict[str, tuple[int, int]]:
        """Function -> (worker processes seen, the highest peak RSS among them)."""
        peaks: dict[str, tuple[int, int]] = {}
        for function, hwm in self.workers.values():
            count, peak = peaks.get(function, (0, 0))
            peaks[function] = (count + 1, max(peak, hwm))
        return peaks

    def run(self) -> None:
        ticks = 0
        while not self._halt.is_set():
            try:
                rss, hwm = self.read()
            except OSError:
                return
            self.samples.append((time.time(), rss, hwm))
            if ticks % 10 == 0:  # every 0.2 s: a worker's VmHWM keeps its peak between readings
                self.read_workers()
            ticks += 1
            time.sleep(self.interval)

    def stop(self) -> None:
        self._halt.set()
        if self.is_alive():
            self.join()
        self.read_workers()

    def window(self, began: float, ended: float) -> tuple[int, int]:
        """(RSS when the window began, peak RSS within it)."""
        before = [s for s in self.samples if s[0] <= began]
        inside = [s for s in self.samples if began <= s[0] <= ended]
        start = (before[-1] if before else self.samples[0])[1]
        peak = max([s[1] for s in inside] or [start])
        if inside:
            hwm_before = (before[-1] if before else inside[0])[2]
            after = [s for s in self.samples if s[0] > ended]
            hwm_end = (after[0] if after else inside[-1])[2]
            if hwm_end > hwm_before:  # a new high-water mark was set in (or right at) the window
                peak = max(peak, hwm_end)
        return start, peak
