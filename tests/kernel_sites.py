"""Test helper (not a test module): a kernel error names its site -- the kernel, the test file
and the line, found by a `# MARK-...` comment on it."""
import os


def line_of(path, text):
    """The line number in `path` of the (unique) source line containing `text`."""
    with open(path) as f:
        lines = [i + 1 for i, l in enumerate(f) if text in l]
    assert len(lines) == 1, (text, lines)
    return lines[0]


def names_site(err, kernel, marker, path):
    """The message of pytest's ExceptionInfo `err`, once checked that it names `kernel` and the
    line of `path` marked `# marker`."""
    msg = str(err.value)
    assert f'kernel={kernel}' in msg, msg
    assert f'line {line_of(path, "# " + marker)}' in msg, msg
    assert os.path.basename(path) in msg, msg
    return msg
