"""The checkpoint of ``streameval watch``: its state as JSON with a header and a checksum, written
atomically (a temporary file renamed over the old one), read back with every check.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "ck.json")
>>> save_checkpoint(path, {"rows": 3})
>>> load_checkpoint(path)
{'rows': 3}
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os

from ..errors import CLIError, InvalidStateError
from ..state import check_header, header

__all__ = ["CHECKPOINT_FORMAT", "CHECKPOINT_VERSION", "save_checkpoint", "load_checkpoint",
           "remove_stale_temporaries"]

CHECKPOINT_FORMAT = "streameval.watch-checkpoint"
CHECKPOINT_VERSION = 3  # 2: a fingerprint of the input consumed; 3: the window as CountWindow.to_dict


def save_checkpoint(path: str, body: dict) -> None:
    """Write ``{format, version, sha256, body}`` as JSON to a temporary file, then rename it over
    ``path``: a reader (or a crash) sees the old checkpoint or the new one, never half of one.
    The temporary file is removed if the write fails. O(size of ``body``): one JSON encoding,
    its SHA-256, one write and one rename.

    >>> import os, tempfile
    >>> tmp = tempfile.TemporaryDirectory(); path = os.path.join(tmp.name, "watch.ckpt")
    >>> save_checkpoint(path, {"rows": 4, "table": [["a", "x", 2]]})
    >>> load_checkpoint(path), os.listdir(tmp.name)     # the body back; no temporary left
    ({'rows': 4, 'table': [['a', 'x', 2]]}, ['watch.ckpt'])
    >>> with open(path, "r+") as f:
    ...     text = f.read(); _ = f.seek(0); _ = f.write(text.replace('"rows":4', '"rows":5'))
    >>> load_checkpoint(path)
    Traceback (most recent call last):
    ...
    streameval.errors.CLIError: checkpoint ... refused: its checksum does not match (corrupt)
    >>> tmp.cleanup()
    """
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    doc = {
        **header(CHECKPOINT_FORMAT, CHECKPOINT_VERSION),
        "sha256": hashlib.sha256(text.encode()).hexdigest(),
        "body": body,
    }
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(doc, f, sort_keys=True, separators=(",", ":"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    try:  # make the rename itself durable
        fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_stale_temporaries(path: str) -> list:
    """Remove ``PATH.tmp-PID`` files that a killed ``watch`` left (its process is gone);
    return their names. Temporaries of another live process are left alone; one named with this
    process's own id is stale too (a recycled id: this is called before this process writes
    any). O(files matching).

    >>> import os, tempfile
    >>> tmp = tempfile.TemporaryDirectory(); path = os.path.join(tmp.name, "watch.ckpt")
    >>> gone, alive = 2**22 + 1, os.getppid()       # no such process; the parent, running
    >>> for pid in (gone, alive):
    ...     open(f"{path}.tmp-{pid}", "w").close()
    >>> [os.path.basename(p) for p in remove_stale_temporaries(path)]
    ['watch.ckpt.tmp-4194305']
    >>> os.path.exists(f"{path}.tmp-{alive}")
    True
    >>> tmp.cleanup()
    """
    import glob

    removed = []
    for tmp in glob.glob(glob.escape(path) + ".tmp-*"):
        pid = tmp.rsplit("-", 1)[1]
        if not pid.isdigit():
            continue
        if int(pid) != os.getpid():
            try:
                os.kill(int(pid), 0)
                continue  # alive (another watch writing the same checkpoint)
            except ProcessLookupError:
                pass
            except (PermissionError, OverflowError):
                continue
        with contextlib.suppress(OSError):
            os.remove(tmp)
            removed.append(tmp)
    return removed


def load_checkpoint(path: str) -> dict:
    """The body of a checkpoint written by :func:`save_checkpoint`; :class:`CLIError` otherwise
    (unreadable, not JSON, another format or version, a checksum that does not match: see
    :func:`save_checkpoint`'s example). O(size of the file).

    >>> import os, tempfile
    >>> tmp = tempfile.TemporaryDirectory(); path = os.path.join(tmp.name, "watch.ckpt")
    >>> with open(path, "w") as f:
    ...     _ = f.write("{not json")
    >>> load_checkpoint(path)
    Traceback (most recent call last):
    ...
    streameval.errors.CLIError: checkpoint ... refused: it is not valid JSON (corrupt or truncated)
    >>> tmp.cleanup()
    """
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise CLIError(f"cannot read checkpoint {path}: {e.strerror}") from None
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise CLIError(f"checkpoint {path} refused: it is not valid JSON (corrupt or truncated)") from None
    try:
        check_header(doc, CHECKPOINT_FORMAT, CHECKPOINT_VERSION, what="watch checkpoint")
    except InvalidStateError as e:
        raise CLIError(f"checkpoint {path} refused: {e}") from None
    body = doc.get("body")
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    if not isinstance(body, dict) or hashlib.sha256(text.encode()).hexdigest() != doc.get("sha256"):
        raise CLIError(f"checkpoint {path} refused: its checksum does not match (corrupt)")
    return body
