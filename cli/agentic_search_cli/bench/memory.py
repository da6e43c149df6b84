"""Peak resident memory of this process.

The kernel's high-water mark ``VmHWM`` is reset just before the measured work
(``/proc/self/clear_refs``) and read after it, cross-checked by a thread sampling ``VmRSS``
every ``RSS_SAMPLE_S`` seconds (``resource.getrusage`` ``ru_maxrss``, the whole process's
peak, is reported beside it).
"""

from __future__ import annotations

import gc
import re
import resource
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from agentic_search_cli.bench.config import RSS_SAMPLE_S
from agentic_search_cli.bench.machine import _read

if TYPE_CHECKING:
    pass


def _status_kb(field: str) -> int | None:
    m = re.search(rf"^{field}:\s*(\d+)\s*kB", _read("/proc/self/status"), re.M)
    return int(m.group(1)) if m else None


def ru_maxrss_bytes() -> int:
    """The process's peak RSS so far (``getrusage``; kB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


class RssWatch:
    """Peak RSS over a block: ``VmHWM`` reset at entry (``clear_refs`` 5) and read at exit,
    plus a thread sampling ``VmRSS``; falls back to ``ru_maxrss`` without ``/proc``."""

    def __init__(self, interval_s: float = RSS_SAMPLE_S) -> None:
        self.interval_s = interval_s
        self.reset = False
        self.start_bytes: int | None = None
        self.sampled_peak_bytes = 0
        self.hwm_bytes: int | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self) -> None:
        while not self._stop.is_set():
            kb = _status_kb("VmRSS")
            if kb is not None:
                self.sampled_peak_bytes = max(self.sampled_peak_bytes, kb * 1024)
            self._stop.wait(self.interval_s)

    def __enter__(self) -> RssWatch:
        gc.collect()
        try:
            Path("/proc/self/clear_refs").write_text("5")
            self.reset = True
        except OSError:
            self.reset = False
        kb = _status_kb("VmRSS")
        self.start_bytes = kb * 1024 if kb is not None else None
        self._thread = threading.Thread(target=self._sample, name="rss-sampler", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        hwm = _status_kb("VmHWM")
        self.hwm_bytes = hwm * 1024 if hwm is not None else None

    @property
    def peak_bytes(self) -> int:
        """The block's peak RSS (the high-water mark when it could be reset). The kernel keeps
        the mark lazily, so the RSS read at entry (a reading inside the block) also counts."""
        if self.reset and self.hwm_bytes is not None:
            return max(self.hwm_bytes, self.sampled_peak_bytes, self.start_bytes or 0)
        return self.sampled_peak_bytes or ru_maxrss_bytes()

    @property
    def method(self) -> str:
        """How ``peak_bytes`` was obtained."""
        if self.reset and self.hwm_bytes is not None:
            return "VmHWM reset by /proc/self/clear_refs, max with 20 ms VmRSS samples"
        if self.sampled_peak_bytes:
            return "VmRSS sampled every 20 ms"
        return "ru_maxrss (whole process)"


def _cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime
