"""Issue 31 item 10: the tests that send SIGINT pass when the suite is started with SIGINT ignored.

A command started in the background by a non-interactive shell (``python -m pytest &`` in a
script, CI runners) inherits SIGINT ignored (POSIX), and Python keeps an ignored SIGINT: a child
started by a test inherits it too and never sees the test's Ctrl-C unless the test restores the
default (``tests/test_anytime.py::_default_sigint``). This runs those tests in a pytest started
that way.
"""
from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

#: Every test that sends SIGINT to a process it started (a terminal's Ctrl-C).
SIGINT_TESTS = [
    "tests/test_anytime.py::test_sigint_and_sigterm_print_the_anytime_answer_and_exit_nonzero[2-130-glr]",
    "tests/test_anytime.py::test_ctrl_c_to_the_process_group_with_workers_records_no_failure",
]


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as `(python -m pytest &)` from a script gives it


def test_every_file_that_sends_sigint_is_checked_here():
    senders = {p.name for p in TESTS.glob("test_*.py")
               if re.search(r"(send_signal|killpg|os\.kill|_signal_after)\([^\n]*SIGINT", p.read_text(encoding="utf-8"))}
    assert senders and senders <= {Path(t.split("::")[0]).name for t in SIGINT_TESTS}, senders


def test_the_sigint_tests_pass_in_a_suite_started_with_sigint_ignored():
    probe = subprocess.run([sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGINT) == signal.SIG_IGN)"],
                           preexec_fn=_ignore_sigint, capture_output=True, text=True, check=True)
    assert probe.stdout.strip() == "True"  # the premise: the inner pytest starts with SIGINT ignored
    inner = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SIGINT_TESTS],
                           cwd=TESTS.parent, preexec_fn=_ignore_sigint, check=False,
                           capture_output=True, text=True, timeout=1200)
    assert inner.returncode == 0 and f"{len(SIGINT_TESTS)} passed" in inner.stdout, inner.stdout[-3000:]
