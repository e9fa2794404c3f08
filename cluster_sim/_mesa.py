"""Mesa, imported without walking the whole call stack: ``from .._mesa import mesa`` where a module needs it.

Mesa names the loggers of its modules from the call stack (``create_module_logger`` and ``method_logger`` in
``mesa.mesa_logging`` call ``inspect.stack()`` and ``inspect.getouterframes``), which builds the source context of
every frame on the stack; for each of importlib's frozen frames that looks the module up through all of
``sys.modules`` (python/cpython#92041). Under a notebook's import cell the stack is deep and a kernel holds over a
thousand modules: the walk was about a sixth of an exercise's first cell (2.0 s of 12.3 s at load average 15), paid
by every kernel a student or the test suite starts. Mesa reads only the first two frames, so while it is imported
those two functions return the first two, and then are themselves again.
"""

from __future__ import annotations

import inspect
import sys


def _two_outer_frames(frame, context: int = 1) -> list[inspect.FrameInfo]:
    """``inspect.getouterframes(frame, context)`` cut to ``frame`` and the frame below it (all mesa reads)."""
    frames = []
    for f in (frame, frame.f_back):
        info = inspect.getframeinfo(f, context)
        frames.append(inspect.FrameInfo(f, *info, positions=info.positions))
    return frames


def _two_frames(context: int = 1) -> list[inspect.FrameInfo]:
    """``inspect.stack(context)`` cut to its caller's frame and the frame below (``stack()[1]``, what mesa reads)."""
    return _two_outer_frames(sys._getframe(1), context)


if "mesa" not in sys.modules:
    _walks = inspect.stack, inspect.getouterframes
    inspect.stack, inspect.getouterframes = _two_frames, _two_outer_frames
    try:
        import mesa
    finally:
        inspect.stack, inspect.getouterframes = _walks

import mesa  # noqa: E402,F811  (imported above, or before this module by someone else)

__all__ = ["mesa"]
