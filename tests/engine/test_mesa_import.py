"""Importing the engine does not walk the call stack for mesa's loggers (cluster_sim/_mesa.py): counted work, in a
fresh interpreter whose import of mesa is the engine's."""

import subprocess
import sys
import textwrap

PROBE = textwrap.dedent("""
    import inspect
    looked_up = []
    original = inspect.getframeinfo
    def counted(frame, context=1):
        looked_up.append(frame.f_code.co_filename)
        return original(frame, context)
    inspect.getframeinfo = counted

    def deep(n):  # a notebook's import cell sits under a kernel's deep stack
        return deep(n - 1) if n else __import__("cluster_sim.engine")
    deep(40)

    import mesa.mesa_logging
    print(len(looked_up), sorted(mesa.mesa_logging._module_loggers))
""")


def test_mesa_is_imported_reading_two_frames_and_names_its_loggers_as_alone():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout.split(" ", 1)
    frames, loggers = int(out[0]), out[1].strip()
    alone = subprocess.run([sys.executable, "-c", "import mesa, mesa.mesa_logging as m; print(sorted(m._module_loggers))"],
                           capture_output=True, text=True, check=True).stdout.strip()
    assert frames <= 4, f"mesa's import read {frames} frames of the stack (inspect.stack: every frame)"
    assert loggers == alone, f"mesa's loggers are {loggers}, imported alone {alone}"
