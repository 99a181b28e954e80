"""The files of bench-patterns --tune and of bench-validate --simulate (the plan and the
soak), written through the reporters every command writes with: each record validates
against docs/schema/records.schema.json and the CSV holds the same records as the JSON."""
import json
import subprocess
import unittest

from test_results import (PATTERNS, SCHEMA, VALIDATE, VALIDATORS, PatternRecords, TempDirTest, csv_records,
                          environment, mpirun)


class TuningRecords(TempDirTest):
    """bench-patterns --tune's trials: records of the `trial` kind in both files, the CSV
    led by the pattern's settings and ending with every knob's value."""

    def test_trials_fit_their_kind_in_csv_and_json(self):
        csv_path, json_path = self.path("t.csv"), self.path("t.json")
        # --tune=1: Open MPI's mpirun takes a bare "--tune FILE" for itself.
        p = subprocess.run(mpirun(2, PATTERNS, "--backend", "mpi", "--tune=1", "--tune-budget", "0.001",
                                  "--pattern", "ddp", *PatternRecords.SMALL_MODEL, "-n", "2",
                                  "--csv", csv_path, "--json", json_path),
                           capture_output=True, text=True, timeout=240, env=environment())
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(json_path) as f:
            doc = json.load(f)
        self.assertEqual((doc["schema"], doc["complete"], doc["exit_code"]), ("commbench.patterns-tune/2", True, 0))
        header, rows = csv_records(csv_path)
        columns = list(SCHEMA["$defs"]["trial"]["properties"])
        knobs = list(doc["recommendation"]["settings"])
        self.assertEqual(knobs, ["bucket_cap_mb"])
        self.assertEqual(header, list(doc["pattern"]) + columns + knobs)
        trials = doc["trials"]
        self.assertGreater(len(trials), 1)
        self.assertEqual(len(rows), len(trials))
        for trial, row in zip(trials, rows):
            VALIDATORS["trial"].validate(trial)
            self.assertEqual(list(trial), columns + knobs)
            for setting, value in doc["pattern"].items():
                self.assertEqual(row[setting], value)
            for column, value in trial.items():
                if value is None:
                    self.assertEqual(row[column], "", column)
                elif isinstance(value, float):
                    self.assertAlmostEqual(float(row[column]), value, delta=1e-8 * abs(value), msg=column)
                else:
                    self.assertEqual(row[column], str(value), column)
        # The budget ends the search after the start: it is measured, no other trial is (the
        # fitted model prunes what it predicts to save too little, the budget skips the
        # rest), each predicted.
        self.assertEqual((trials[0]["trial"], trials[0]["verdict"], trials[0]["knob"]), (0, "start", None))
        self.assertGreater(trials[0]["step_seconds"], 0)
        self.assertGreater(trials[0]["predicted_seconds"], 0)  # the fit's own check against the trial it fitted
        self.assertLessEqual({t["verdict"] for t in trials[1:]}, {"skipped", "pruned"})
        self.assertEqual({t["step_seconds"] for t in trials[1:]}, {None})
        self.assertTrue(all(t["predicted_seconds"] > 0 for t in trials), trials)
        self.assertEqual([t["bucket_cap_mb"] for t in trials[1:]], [t["value"] for t in trials[1:]])


class SimulationRecords(TempDirTest):
    """bench-validate --simulate, the plan and the soak: the files a job writes, through the
    same reporters, with the modelled cluster in place of the job's."""

    def simulate(self, *args, code):
        p = subprocess.run([VALIDATE, "--simulate", *map(str, args), "--csv", self.path("r.csv"),
                            "--json", self.path("r.json")],
                           capture_output=True, text=True, timeout=240, env=environment())
        self.assertEqual(p.returncode, code, p.stdout + p.stderr)
        with open(self.path("r.json")) as f:
            doc = json.load(f)
        self.assertEqual((doc["schema"], doc["complete"], doc["exit_code"]), ("commbench.validate/1", True, code))
        self.assertEqual(doc["provenance"]["program"], "bench-validate")
        self.assertIn("--simulate", doc["provenance"]["command_line"])
        return doc

    def test_the_plans_checks_fit_their_kind(self):
        doc = self.simulate(16, "--degrade", "node:3", code=1)
        with open(self.path("r.csv")) as f:
            self.assertEqual(f.readline(), "# simulated: 16 nodes\n")
        header, rows = csv_records(self.path("r.csv"))
        checks = self.assert_records_valid(doc, "check", header)
        self.assertEqual(len(rows), len(checks))
        self.assertEqual([r["node_a"] for r in rows], [c["node_a"] for c in checks])
        self.assertEqual((doc["simulation"]["nodes"], doc["simulation"]["degrade"]), (16, "node:3"))
        self.assertEqual(list(doc)[:5], ["schema", "complete", "provenance", "checks", "simulation"])
        self.assertIn({"kind": "node", "node_a": "node03", "result": "fail"},
                      [{k: c[k] for k in ("kind", "node_a", "result")} for c in checks])

    def test_the_soaks_intervals_and_events_fit_their_kinds(self):
        doc = self.simulate(8, "--soak", "120", "--degrade", "node:3@0.3/40-60,link:1-5@0.5/80-95", code=1)
        header, rows = csv_records(self.path("r.csv"))
        kinds = ("interval", "event")
        union = list(dict.fromkeys(c for kind in kinds for c in SCHEMA["$defs"][kind]["properties"]))
        self.assertEqual(header, ["record"] + union)
        for kind in kinds:
            records = doc[SCHEMA["$defs"][kind]["x-document-key"]]
            self.assertGreater(len(records), 0, kind)
            for record in records:
                VALIDATORS[kind].validate(record)
            self.assertEqual(len([r for r in rows if r["record"] == kind]), len(records), kind)
        self.assertEqual([(e["kind"], e["node_a"], e["node_b"]) for e in doc["events"]],
                         [("node", "node03", ""), ("link", "node01", "node05")])
        self.assertEqual(doc["soak"]["intervals"], 120)


if __name__ == "__main__":
    unittest.main()
