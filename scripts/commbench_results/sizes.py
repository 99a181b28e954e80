"""Message sizes as people read them: 8B, 1KiB, 1.5MiB (binary units, as the sweep's
-b/-e flags take them)."""

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def size_label(nbytes):
    value = float(nbytes)
    unit = 0
    while value >= 1024 and unit < len(_UNITS) - 1:
        value /= 1024
        unit += 1
    text = f"{value:.0f}" if value == int(value) else f"{value:.3g}"
    return text + _UNITS[unit]
