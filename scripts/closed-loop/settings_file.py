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
    if framework == "fsdp2":
        check_fsdp2_settings(settings, f"{flag} {path}")
    return settings


FSDP2_KNOBS = {"reshard_after_forward": bool, "forward_prefetch": bool, "fsdp_unit_layers": int}


def check_fsdp2_settings(settings, where):
    """fully_shard's knobs as --tune-output writes them, and nothing else."""
    for key, value in settings.items():
        if key not in FSDP2_KNOBS:
            raise SettingsError(f"{where}: '{key}' is not one of {', '.join(sorted(FSDP2_KNOBS))}")
        wanted = FSDP2_KNOBS[key]
        if type(value) is not wanted or (wanted is int and value < 1):
            raise SettingsError(f"{where}: {key} must be {'true or false' if wanted is bool else 'a whole number of at least 1'}")
