"""Reading and parsing many notes, in this process or in worker processes.

A cold load reads and parses every note; a worker process shares that with this one (the
machine has two cores). The worker is a bare interpreter that imports `vault` alone (no
`temporal`, no `api`, not the caller's main module), so it starts in a fraction of what a
`multiprocessing` spawn costs. It reads its whole task list first, then writes one
length-prefixed pickled result per chunk, which a thread of this process reads off the pipe
as it comes: the worker never waits for this process, and neither can block the other. A
worker that fails leaves its chunks to this process.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import os
import pickle
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Generator, Mapping, Sequence

from almanac.vault.content import read_bytes
from almanac.vault.issue import Issue
from almanac.vault.note import ParsedNote, parse_note
from almanac.vault.reading import ReadOptions
from almanac.vault.scan import NoteFile

__all__ = ["Outcome", "read_and_parse", "read_in_workers", "serve"]

Outcome = tuple[str, tuple[int, int, int, str] | None, ParsedNote | None, Issue | None]
_Task = tuple[list[NoteFile], dict[str, str], ReadOptions]
_PIPE_BYTES = 1 << 20  # Linux's default maximum for an unprivileged process
# The task list is read before `vault` is imported, so the caller is not held up meanwhile.
_BOOT = (
    "import pickle, sys; sys.path[:] = pickle.load(sys.stdin.buffer); "
    "tasks = sys.stdin.buffer.read(); from vault.batch import serve; serve(tasks)"
)


def read_and_parse(
    files: Sequence[NoteFile],
    known: Mapping[str, str],
    options: ReadOptions,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> list[Outcome]:
    """Read each file and parse it unless its bytes hash to the `known` revision.

    Returns, per file: its path, (size, mtime_ns, inode, sha256), the parsed note (None when
    unchanged) and the read issue (then nothing else).
    """
    out: list[Outcome] = []
    for done, file in enumerate(files, 1):
        content = read_bytes(file)
        if isinstance(content, Issue):
            out.append((file.path, None, None, content))
            continue
        stat = (content.size, content.mtime_ns, content.ino, content.sha256)
        parsed = None
        if known.get(file.path) != content.sha256:
            parsed = parse_note(file.path, content.data, revision=content.sha256, options=options)
        out.append((file.path, stat, parsed, None))
        if progress is not None and done % 500 == 0:
            progress(done, len(files))
    return out


def read_in_workers(
    files: Sequence[NoteFile],
    known: Mapping[str, str],
    options: ReadOptions,
    *,
    chunk: int,
    progress: Callable[[int, int], None] | None = None,
) -> Generator[list[Outcome], None, None]:
    """`read_and_parse` of `files` chunk by chunk, by a worker process and this one.

    The worker takes the chunks from the front and this process from the back until they
    meet; each chunk's outcomes are yielded as soon as they are there (not in file order),
    so the caller takes them in between two chunks of its own.
    """
    tasks: list[_Task] = [
        (c, {f.path: known[f.path] for f in c if f.path in known}, options)
        for c in (list(files[i : i + chunk]) for i in range(0, len(files), chunk))
    ]
    proc = _start()
    results: _Results | None = None
    try:
        proc = _send(proc, tasks)
        results = _Results(proc) if proc is not None else None
        done, front, back = 0, 0, len(tasks) - 1
        while front <= back:
            outcomes = None
            if results is not None and results.ready():
                outcomes = results.next()
                if outcomes is None:  # it failed: this process does the rest
                    results.stop()
                    results = None
            if outcomes is not None:
                front += 1
            else:
                outcomes = read_and_parse(*tasks[back])
                back -= 1
            done += len(outcomes)
            if progress is not None:
                progress(done, len(files))
            yield outcomes
    finally:
        if results is not None:
            results.stop()
        elif proc is not None:
            _stop(proc)


def serve(data: bytes) -> None:
    """A worker's main loop: given every task (pickled), write each chunk's outcomes in turn."""
    gc.disable()  # parsing makes many objects and frees them by reference counting alone
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    # Nothing else may write into the results: not Python's prints, not C code's writes to 1.
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    tasks: list[_Task] = pickle.loads(data)
    for files, known, options in tasks:
        data = pickle.dumps(read_and_parse(files, known, options), pickle.HIGHEST_PROTOCOL)
        out.write(len(data).to_bytes(8, "little") + data)
        out.flush()


def _start() -> subprocess.Popen[bytes] | None:
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", _BOOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
    except OSError:
        return None
    if hasattr(fcntl, "F_SETPIPE_SZ") and proc.stdout is not None:
        # Room for a whole chunk's result: a worker need not wait for this process to read.
        with contextlib.suppress(OSError):
            fcntl.fcntl(proc.stdout.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    return proc


def _send(
    proc: subprocess.Popen[bytes] | None, tasks: list[_Task]
) -> subprocess.Popen[bytes] | None:
    """Give a started worker its whole task list; None if it cannot take it."""
    if proc is None or proc.stdin is None:
        return None
    try:
        pickle.dump(sys.path, proc.stdin)
        pickle.dump(tasks, proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        proc.stdin.close()
    except OSError:
        _stop(proc)
        return None
    return proc


class _Results:
    """A worker's results, read off its pipe by a thread as they come: the worker never waits
    for this process to be between two chunks of its own."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._read, name="almanac-worker", daemon=True)
        self._thread.start()

    def ready(self) -> bool:
        """Whether a result (or the news that the worker stopped) is there."""
        return not self._queue.empty()

    def next(self) -> list[Outcome] | None:
        """The next result; None when the worker stopped or wrote garbage."""
        data = self._queue.get()
        try:
            return None if data is None else pickle.loads(data)
        except Exception:
            return None

    def stop(self) -> None:
        """Stop the worker and the reading thread."""
        _stop(self.proc, self._thread)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        try:
            while True:
                size = int.from_bytes(_read_exactly(fd, 8), "little")
                self._queue.put(_read_exactly(fd, size))
        except (OSError, EOFError):  # it stopped (done, failed or stopped)
            self._queue.put(None)


def _read_exactly(fd: int, size: int) -> bytes:
    buffer = bytearray()
    while len(buffer) < size:
        block = os.read(fd, size - len(buffer))
        if not block:
            raise EOFError("the worker stopped")
        buffer += block
    return bytes(buffer)


def _stop(proc: subprocess.Popen[bytes], reader: threading.Thread | None = None) -> None:
    proc.kill()
    proc.wait()
    if reader is not None:
        reader.join()  # it reads to the end of the pipe, which the kill closed
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            stream.close()
