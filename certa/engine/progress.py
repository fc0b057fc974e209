"""Progress of a run where the user looks: a terminal, a Jupyter notebook, or a log file.

- **terminal** (standard error is a terminal): a rich progress bar on standard error;
- **notebook** (a Jupyter kernel): one line of text, updated in place under the cell
  (``IPython.display``, no extra package);
- **log** (anything else: a log file, CI, a pipe): plain lines on standard error, one every
  tenth of the planned evaluations (or at 1, 2, 5, 10, 20, 50, ... when the total is not
  known) and at least every ``LOG_EVERY_SECONDS``, and one at the end.

``progress="auto"`` shows the first two and stays silent in logs; ``progress=True`` shows
whichever fits, log lines included. Nothing is written to standard output. A run resumed
from a store says first how many recorded evaluations it reuses.
"""
from __future__ import annotations

import math
import sys
import time
from typing import Any

from .draws import Outcome

#: A log line at least this often (seconds) while evaluations finish.
LOG_EVERY_SECONDS = 30.0
_NOTEBOOK_REFRESH = 0.25  # seconds between updates of a notebook's line


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (an IPython shell that displays rich output)."""
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    shell = get() if callable(get) else None
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def progress_mode(enabled: bool | str) -> str | None:
    """``"terminal"``, ``"notebook"``, ``"log"`` or ``None`` (nothing shown) for ``progress=enabled``."""
    if enabled not in (True, False, "auto"):
        raise ValueError(f'progress must be True, False or "auto", got {enabled!r}')
    if not enabled:
        return None
    if sys.stderr is not None and sys.stderr.isatty():
        return "terminal"
    if in_notebook():
        return "notebook"
    return "log" if enabled is True else None


def _resume_text(recorded: int, store: str | None) -> str:
    return (f"resuming from {store or 'the store'}: {recorded} finished evaluation(s) recorded there are "
            "reused, not repeated")


class Progress:
    """What the runner shows while it runs (see the module documentation).

    Parameters
    ----------
    enabled : bool or "auto"
    total : int or None
        Evaluations planned (a fixed plan or budget), ``None`` for an adaptive run.
    recorded : int
        Finished evaluations found in the store at the start (a resumed run).
    store : str or None
        The store's path, to name it.
    """

    def __init__(self, enabled: bool | str, total: int | None, recorded: int = 0, store: str | None = None) -> None:
        self.mode = progress_mode(enabled)
        self.total = total
        self.done = self.failed = self.reused = 0
        self._start = self._last = time.monotonic()
        self._next = 1
        self._bar: Any = None
        self._handle: Any = None
        if self.mode == "terminal":
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar

            console = Console(stderr=True)
            if recorded:
                console.print(_resume_text(recorded, store), highlight=False, markup=False)
            self._bar = Bar(TextColumn("evaluating"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.fields[status]}"), TimeElapsedColumn(), transient=True,
                            console=console)
            self._bar.start()
            self._task = self._bar.add_task("eval", total=total, status="")
        elif self.mode == "notebook":
            from IPython.display import display

            self._resume = _resume_text(recorded, store) + "\n" if recorded else ""
            self._handle = display(self._text(), display_id=True)
        elif self.mode == "log":
            if recorded:
                self._log(_resume_text(recorded, store))
            self._log("evaluating" + (f" {total} draws" if total else "") + "...")

    def _elapsed(self) -> str:
        return f"{time.monotonic() - self._start:.0f} s"

    def _counts(self) -> str:
        of = f"/{self.total}" if self.total else ""
        share = f" ({self.done / self.total:.0%})" if self.total else ""
        extra = "".join([f", {self.failed} failed" if self.failed else "",
                         f", {self.reused} reused from the store" if self.reused else ""])
        noun = "evaluation" if self.done == 1 and not self.total else "evaluations"
        return f"{self.done}{of} {noun}{share}{extra}"

    def _text(self) -> Any:
        from IPython.display import Pretty

        return Pretty(f"{getattr(self, '_resume', '')}certa: {self._counts()}, {self._elapsed()}")

    @staticmethod
    def _log(text: str) -> None:
        print(f"certa: {text}", file=sys.stderr, flush=True)

    def _due(self) -> bool:
        """A log line now: at every tenth of the total (or 1, 2, 5, 10, 20, ...), or after LOG_EVERY_SECONDS."""
        if self.done >= self._next:
            if self.total:
                step = max(1, math.ceil(self.total / 10))
                self._next = (self.done // step + 1) * step
            else:
                while self._next <= self.done:
                    digits = 10 ** int(math.log10(self._next))
                    self._next = {1: 2, 2: 5, 5: 10}[self._next // digits] * digits
            return True
        return time.monotonic() - self._last >= LOG_EVERY_SECONDS

    def advance(self, outcome: Outcome, reused: bool = False) -> None:
        """One more evaluation told to the strategy."""
        if self.mode is None:
            return
        self.done += 1
        self.failed += 0 if outcome.ok else 1
        self.reused += bool(reused)
        if self.mode == "terminal":
            self._bar.update(self._task, advance=1, status=f"{self.failed} failed" if self.failed else "")
        elif self.mode == "notebook":
            now = time.monotonic()
            if now - self._last >= _NOTEBOOK_REFRESH:
                self._last = now
                self._handle.update(self._text())
        elif self._due():
            self._last = time.monotonic()
            self._log(f"{self._counts()}, {self._elapsed()}")

    def close(self) -> None:
        if self.mode == "terminal":
            self._bar.stop()
        elif self.mode == "notebook":
            self._handle.update(self._text())
        elif self.mode == "log":
            self._log(f"end: {self._counts()}, {self._elapsed()}")
        self.mode = None
