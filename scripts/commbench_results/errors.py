"""The one error the scripts report for bad input: it names the file and the line, so the
user can open the file at the place that is wrong (`plot: error: FILE:LINE: ...`)."""


class InputError(Exception):
    def __init__(self, path, line, message):
        # No line when the file itself cannot be read (missing, unreadable).
        super().__init__(f"{path}: {message}" if line is None else f"{path}:{line}: {message}")
        self.path = path
        self.line = line
        self.message = message
