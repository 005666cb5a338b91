"""Khronos validation layer harness for vkdiff.

Switched on by ``VKDIFF_VALIDATION=1`` (the runtime calls :func:`maybe_enable`
before it creates its first device), or explicitly with :func:`enable`. Either
must run before the Vulkan instance of the device to check is created: the
loader and the layer read their environment variables at instance creation.

The layer writes its messages (errors and warnings, synchronization
validation on) to a log file; :func:`read_new_messages` returns the messages
written since the previous call, one string per message.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

LAYER = "VK_LAYER_KHRONOS_validation"
_TEMPLATE = Path(__file__).resolve().parents[2] / "tools" / "validation" / "vk_layer_settings.txt"
# Used when the package is installed without the repository's tools/ folder.
_FALLBACK_TEMPLATE = """\
khronos_validation.report_flags = error,warn
khronos_validation.debug_action = VK_DBG_LAYER_ACTION_LOG_MSG
khronos_validation.log_filename = @LOG_FILENAME@
khronos_validation.enables = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT
khronos_validation.enable_message_limit = false
"""

_log: Path | None = None  # the layer's log file
_offset = 0  # bytes of it already read
_pending: list[str] = []  # messages read but not yet returned


def enable(log_path: str | os.PathLike) -> None:
    """Load the validation layer into every Vulkan instance created from now on,
    logging to ``log_path`` (created or emptied now). The layer reads its
    settings once per process: a later call with another path is not seen by
    the layer once it has been loaded."""
    global _log, _offset, _pending
    layers = [x for x in os.environ.get("VK_INSTANCE_LAYERS", "").split(os.pathsep) if x]
    if LAYER not in layers:
        layers.append(LAYER)
    log = Path(log_path).resolve()
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_bytes(b"")
    template = _TEMPLATE.read_text() if _TEMPLATE.is_file() else _FALLBACK_TEMPLATE
    settings = Path(tempfile.mkdtemp(prefix="vkdiff-validation-")) / "vk_layer_settings.txt"
    settings.write_text(template.replace("@LOG_FILENAME@", str(log)))
    os.environ["VK_INSTANCE_LAYERS"] = os.pathsep.join(layers)
    os.environ["VK_LAYER_SETTINGS_PATH"] = str(settings)
    _log, _offset, _pending = log, 0, []


def maybe_enable() -> bool:
    """Call before creating each Device. The first time, if ``VKDIFF_VALIDATION=1``,
    enables validation (log: ``$VKDIFF_VALIDATION_LOG``, else a temporary file).
    Once enabled (by either function), it moves the messages logged so far into
    memory and empties the log: a new VkInstance reopens the log with mode "w",
    which would otherwise lose them. Returns whether validation is on."""
    global _offset
    if _log is None:
        if os.environ.get("VKDIFF_VALIDATION", "") not in ("1", "true", "yes", "on"):
            return False
        enable(os.environ.get("VKDIFF_VALIDATION_LOG") or os.path.join(
            tempfile.mkdtemp(prefix="vkdiff-validation-log-"), "vk_validation.log"))
    else:
        _pending.extend(_read())
        with open(_log, "r+b") as f:
            f.truncate(0)
        _offset = 0
    return True


def enabled() -> bool:
    return _log is not None


def log_path() -> Path | None:
    return _log


def read_new_messages() -> list[str]:
    """The layer's messages logged since the previous call (or since enable()),
    one string per message (its indented detail lines included)."""
    global _pending
    messages, _pending = _pending + _read(), []
    return messages


def _read() -> list[str]:
    global _offset
    if _log is None:
        return []
    try:
        with open(_log, "rb") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() < _offset:  # a new instance reopened (truncated) the log
                _offset = 0
            f.seek(_offset)
            data = f.read()
    except FileNotFoundError:
        return []
    end = data.rfind(b"\n") + 1  # leave a partly written last line for later
    _offset += end
    # A live instance keeps writing at its own file offset after a truncation,
    # which leaves a hole of NUL bytes in front of its next message.
    return _split(data[:end].replace(b"\0", b"").decode("utf-8", "replace"))


def _split(text: str) -> list[str]:
    # A message is a line at column 0 followed by its indented detail lines.
    messages: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if line[0].isspace() and messages:
            messages[-1] += "\n" + line
        else:
            messages.append(line.strip())
    return messages
