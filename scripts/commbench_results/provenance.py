"""Words for where a run came from: the title line of a plot and the short label that tells
overlaid runs apart in a legend."""
import os
from collections import Counter


def hosts_text(provenance):
    hosts = list(dict.fromkeys(h for h in provenance.get("rank_hosts", []) if h))
    if not hosts:
        return ""
    if len(hosts) <= 3:
        return ", ".join(hosts)
    return f"{hosts[0]} … {hosts[-1]} ({len(hosts)} hosts)"


def gpus_text(provenance):
    """'8× NVIDIA H100 80GB HBM3' from the device lines ("rank 0: GPU 0 (NCCL rank 0): MODEL, PCI ...")."""
    models = Counter()
    for device in provenance.get("devices", []):
        _, _, rest = str(device).partition("): ")
        model = rest.split(",")[0].strip()
        if model:
            models[model] += 1
    return ", ".join(f"{count}× {model}" for model, count in models.items())


def date_text(provenance):
    started = str(provenance.get("started_at", ""))
    if "T" not in started:
        return started
    day, _, time = started.partition("T")
    return f"{day} {time[:5]} UTC" if time.endswith("Z") else f"{day} {time[:5]}"


def ranks_text(provenance):
    ranks, nodes = provenance.get("ranks"), provenance.get("nodes")
    if ranks is None:
        return ""
    text = f"{ranks} rank{'s' if ranks != 1 else ''}"
    if nodes:  # 0: the program does not know (bench-replay reads files)
        text += f" on {nodes} node{'s' if nodes != 1 else ''}"
    return text


def backend_text(provenance):
    backend = provenance.get("backend")
    if not backend:
        return ""
    version = provenance.get("backend_version")
    return f"{backend} ({version})" if version else backend


def describe_run(provenance, omit=()):
    """One line: program · backend (version) · ranks on nodes: hosts · GPUs · date · commit,
    without the parts in `omit` (those a run's label already shows)."""
    where = ranks_text(provenance)
    hosts = hosts_text(provenance)
    if hosts:
        where = f"{where}: {hosts}" if where else hosts
    commit = provenance.get("commit")
    parts = [provenance.get("program", ""), backend_text(provenance), where, gpus_text(provenance),
             date_text(provenance), f"commit {commit}" if commit else ""]
    return " · ".join(p for p in parts if p and p not in omit)


def _label_parts(provenance, path):
    """What could tell two runs apart, most telling first."""
    return {
        "backend": provenance.get("backend") or "",
        "ranks": ranks_text(provenance),
        "hosts": hosts_text(provenance),
        "gpus": gpus_text(provenance),
        "date": date_text(provenance),
        "commit": f"commit {provenance['commit']}" if provenance.get("commit") else "",
        "file": os.path.basename(path),
    }


def run_labels(results):
    """A short label per file, made of only what differs between the files (backend, ranks,
    hosts, GPUs, date, commit), so a legend says which line is which; the file name when the
    provenance is the same (two CSVs of one machine without provenance), the path when even
    the names are."""
    parts = [_label_parts(r.provenance, r.path) for r in results]
    if len(results) < 2:
        return [""] * len(results)
    differing = [key for key in parts[0] if key != "file" and len({p[key] for p in parts}) > 1]
    labels = [", ".join(p[key] for key in differing if p[key]) for p in parts]
    if len(set(labels)) < len(labels) or not all(labels):
        names = [p["file"] for p in parts]
        if len(set(names)) < len(names):
            names = [os.path.relpath(r.path) for r in results]
        labels = [f"{label} ({name})" if label else name for label, name in zip(labels, names)]
    return labels
