"""What the scripts share with the C++ commands' shell: one-line usage errors with exit 2,
a flag given twice refused, and result files that are neither each other nor an input,
written whole or not at all."""
import argparse
import os
import sys
import tempfile


class OneLineParser(argparse.ArgumentParser):
    """argparse with the commands' error form: `PROG: error: MESSAGE (see --help)`, one
    line, exit 2; and each flag at most once, as the C++ commands take them."""

    def error(self, message):
        sys.stderr.write(f"{self.prog}: error: {message} (see --help)\n")
        sys.exit(2)

    def parse_args(self, args=None, namespace=None):
        args = sys.argv[1:] if args is None else list(args)
        for action in self._actions:
            if not action.option_strings:
                continue
            given = sum(1 for arg in args for name in action.option_strings
                        if arg == name or (name.startswith("--") and arg.startswith(name + "=")))
            if given > 1:
                self.error(f"{'/'.join(action.option_strings)}: given {given} times; give it once")
        return super().parse_args(args, namespace)


def _same(first, second):
    if os.path.exists(first) and os.path.exists(second):
        return os.path.samefile(first, second)
    return os.path.realpath(first) == os.path.realpath(second)


def check_outputs(outputs, inputs):
    """`outputs` and `inputs` as (flag, path) pairs; exits 2 (one line) where two outputs
    are one file or an output is a file read, and makes the outputs' folders, before
    anything is written."""
    outputs = [(flag, path) for flag, path in outputs if path]
    for i, (flag, path) in enumerate(outputs):
        for earlier_flag, earlier in outputs[:i]:
            if _same(path, earlier):
                _fail(f"{flag}: same file as {earlier_flag} ({earlier})")
        for input_flag, source in inputs:
            if source and _same(path, source):
                _fail(f"{flag} {path}: a file this run reads ({input_flag} {source}); name another result file")
        if os.path.isdir(path):
            _fail(f"{flag} {path}: is a directory")
        folder = os.path.dirname(path) or "."
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as e:
            _fail(f"{flag} {path}: cannot create directory {folder}: {e.strerror}")
        if not os.access(folder, os.W_OK):
            _fail(f"{flag} {path}: cannot write in {folder}")


def write_whole(path, write):
    """Calls write(file object, binary) on a temporary file beside `path`, then renames it
    into place: the result is whole or absent, never half-written."""
    folder = os.path.dirname(path) or "."
    fd, temporary = tempfile.mkstemp(prefix=os.path.basename(path) + ".tmp.", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise


def _fail(message):
    sys.stderr.write(f"{_program()}: error: {message}\n")
    sys.exit(2)


def _program():
    return os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "commbench"


def run(main):
    """Runs main(argv) as the program, its return value the exit code (signals: see
    interpreter.exit_quietly_on_signals, installed before anything loads)."""
    sys.exit(main(sys.argv[1:]))
