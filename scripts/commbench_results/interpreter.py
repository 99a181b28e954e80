"""Finding an interpreter that has the plotting libraries. Standard library only: it runs
before they are imported.

Debian's python3-matplotlib and python3-pandas are installed for the system interpreter,
/usr/bin/python3; a python3 earlier on PATH (pyenv, a venv) does not see them. Rather than
fail there, the scripts start again under the system interpreter once."""
import importlib.util
import os
import signal
import sys

SYSTEM_PYTHON = "/usr/bin/python3"


def ensure_libraries(program, modules):
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if not missing:
        return
    here = os.path.realpath(sys.executable or "")
    if os.access(SYSTEM_PYTHON, os.X_OK) and here != os.path.realpath(SYSTEM_PYTHON):
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, os.path.abspath(sys.argv[0]), *sys.argv[1:]])
    packages = " ".join(f"python3-{m}" for m in missing)
    sys.stderr.write(f"{program}: error: Python lacks {', '.join(missing)}: install them "
                     f"(Debian: apt-get install {packages}; scripts/run.sh and scripts/test.sh do this)\n")
    sys.exit(2)


def exit_quietly_on_signals(program):
    """Ctrl-C or SIGTERM, even while the libraries load, ends the program with one line and
    128 + the signal, not a traceback; a result being written is removed (write_whole).

    The SystemExit the handler raises unwinds the program, so that cleanup runs. Code it
    lands in may wrap it: Python 3.11 turns any exception from a class attribute's
    __set_name__ (matplotlib's classes, as they are imported) into a RuntimeError. Such an
    exception reaching the top is still the signal's: it ends with the same code, quietly."""
    status = []

    def stop(number, frame):
        if not status:
            name = "SIGINT" if number == signal.SIGINT else "SIGTERM"
            sys.stderr.write(f"{program}: error: interrupted by {name}\n")
            status.append(128 + number)
        sys.exit(status[0])

    def uncaught(kind, value, traceback):
        if not status:
            return default_hook(kind, value, traceback)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status[0])

    default_hook = sys.excepthook
    sys.excepthook = uncaught
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
