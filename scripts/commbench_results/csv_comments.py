"""The provenance a CSV's comment lines give: the header a command prints before its rows
(program, version, commit, backend, ranks, nodes, start), the rank-to-host lines, the
devices, and `key: value` lines of the provenance keys every command's JSON carries."""
import re

# The provenance keys every command's JSON carries (report/provenance_json); CSV comment
# lines and a JSON file beside a CSV can supply them too.
PROVENANCE_KEYS = ("program", "version", "commit", "command_line", "started_at", "backend", "backend_version",
                   "mpi_version", "ranks", "nodes", "rank_hosts", "devices", "settings", "environment", "notes")

_HEADER_PATTERNS = (
    re.compile(r"^#\s*(?P<program>bench-[\w-]+) (?P<version>\S+) \(commit (?P<commit>[^)]+)\)"),
    re.compile(r"^#\s*backend: (?P<backend>\S+) \((?P<backend_version>.*)\)\s*$"),
    re.compile(r"^#\s*ranks: (?P<ranks>\d+)\s+nodes: (?P<nodes>\d+)\s+started: (?P<started_at>\S+)"),
)
_RANK_HOSTS = re.compile(r"^#\s+rank (?P<first>\d+)(?:-(?P<last>\d+))? (?P<host>\S+)\s*$")
_DEVICE = re.compile(r"^#\s+(?P<device>rank \d+: GPU .*)$")
_KEY_VALUE = re.compile(r"^#\s*(?:provenance\.)?(?P<key>[a-z_]+)\s*[:=]\s*(?P<value>.*?)\s*$")


def provenance_from_comments(comments):
    provenance, hosts, devices = {}, [], []
    for comment in comments:
        matched = False
        for pattern in _HEADER_PATTERNS:
            m = pattern.match(comment)
            if m:
                provenance.update({k: (int(v) if k in ("ranks", "nodes") else v) for k, v in m.groupdict().items()})
                matched = True
        if matched:
            continue
        m = _RANK_HOSTS.match(comment)
        if m:
            last = int(m["last"] or m["first"])
            hosts += [m["host"]] * (last - int(m["first"]) + 1)
            continue
        m = _DEVICE.match(comment)
        if m:
            devices.append(m["device"])
            continue
        m = _KEY_VALUE.match(comment)
        if m and m["key"] in PROVENANCE_KEYS and m["key"] not in provenance:
            value = m["value"]
            provenance[m["key"]] = int(value) if m["key"] in ("ranks", "nodes") and value.isdigit() else value
    if hosts:
        provenance["rank_hosts"] = hosts
    if devices:
        provenance["devices"] = devices
    return provenance
