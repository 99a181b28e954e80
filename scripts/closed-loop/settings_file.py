"""The settings files of the closed-loop proof, read alike by prove.py (--start) and
training_job.py (--settings): a JSON object, for ZeRO-3 a ds_config fragment whose
zero_optimization is an object too."""
import json


class SettingsError(ValueError):
    """A settings file that cannot be used, in one line naming the flag and the file."""


def read_settings_file(path, flag, framework):
    """The JSON object in `path`, {} for none; SettingsError when it cannot be read or is
    not what the framework takes."""
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            settings = json.load(f)
    except (OSError, ValueError) as e:
        raise SettingsError(f"{flag} {path}: {e}") from None
    if not isinstance(settings, dict):
        raise SettingsError(f"{flag} {path}: not a JSON object")
    if framework == "zero3" and not isinstance(settings.get("zero_optimization", {}), dict):
        raise SettingsError(f"{flag} {path}: zero_optimization is not an object")
    return settings
