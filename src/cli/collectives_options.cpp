#include "commbench/cli/collectives_options.hpp"

#include <CLI/CLI.hpp>
#include <cmath>

#include "commbench/cli/flag_values.hpp"
#include "commbench/core/build_info.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/name_lookup.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/size.hpp"

namespace commbench {
namespace {

template <typename T>
std::string names_of(const std::vector<T>& values) {
  std::string text;
  for (const T& v : values) text += (text.empty() ? "" : ",") + std::string(name_of(v));
  return text;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> CollectivesOptions::describe() const {
  std::vector<std::pair<std::string, std::string>> s;
  s.emplace_back("ops", names_of(ops));
  s.emplace_back("dtypes", names_of(dtypes));
  s.emplace_back("redops", names_of(redops));
  s.emplace_back("placement", names_of(placements));
  s.emplace_back("min_bytes", std::to_string(sweep.min_bytes));
  s.emplace_back("max_bytes", std::to_string(sweep.max_bytes));
  if (sweep.step_bytes != 0)
    s.emplace_back("step_bytes", std::to_string(sweep.step_bytes));
  else
    s.emplace_back("step_factor", significant_text(sweep.step_factor));
  s.emplace_back("iters", stopping.fixed_iterations ? std::to_string(stopping.fixed_iterations) : "adaptive");
  s.emplace_back("warmup_iters", std::to_string(warmup_iterations));
  if (stopping.fixed_iterations == 0) {
    s.emplace_back("target_noise_pct", significant_text(stopping.target_noise * 100.0));
    s.emplace_back("max_time_per_size_s", significant_text(stopping.max_seconds));
    s.emplace_back("min_samples", std::to_string(stopping.min_samples));
    s.emplace_back("batch_time_s", significant_text(batch_seconds));
  }
  s.emplace_back("check", check ? "1" : "0");
  s.emplace_back("root", std::to_string(root));
  s.emplace_back("timeout_s", significant_text(timeout_seconds));
  if (gpus_per_process != 1) s.emplace_back("gpus_per_process", std::to_string(gpus_per_process));
  if (register_buffers) s.emplace_back("register", "1");
  if (cuda_graph_iterations != 0) s.emplace_back("cuda_graph", std::to_string(cuda_graph_iterations));
  if (blocking) s.emplace_back("blocking", "1");
  std::string rules;
  for (const ThresholdRule& rule : threshold_rules) rules += (rules.empty() ? "" : " ; ") + rule.text;
  if (!rules.empty()) s.emplace_back("threshold", rules);
  if (!thresholds_path.empty()) s.emplace_back("thresholds", thresholds_path);
  if (!baseline_path.empty()) s.emplace_back("baseline", baseline_path);
  return s;
}

ParsedCommandLine parse_collectives_command_line(int argc, const char* const* argv) {
  CLI::App app{
      "bench-collectives: sweep collective operations over message sizes and report time, algbw and busbw.\n"
      "Run it under mpirun or srun, one rank per GPU (nccl) or per core (mpi)."};
  app.name("bench-collectives");

  std::string ops = "allreduce,allgather,reducescatter,broadcast";
  std::string min_bytes = "8", max_bytes = "64M", step_bytes, step_factor, iters, warmup = "1";
  std::string dtype = "float", redop = "sum", placement = "out", root = "0", timeout = "300";
  std::string max_time = "3", target_noise = "1", min_samples = "10", format = "table", batch_time = "0.001";
  int check = 0, blocking = 0;
  std::string gpus = "1", graph = "0";
  std::vector<std::string> threshold_texts;
  bool version = false;
  CollectivesOptions o;

  app.add_option("--op", ops, "Collectives: comma-separated list of allreduce, allgather, reducescatter, broadcast, "
                              "reduce, alltoall, sendrecv, or all")
      ->capture_default_str();
  app.add_option("-b,--min-bytes,--minbytes", min_bytes, "Smallest size (K/M/G binary suffixes)")->capture_default_str();
  app.add_option("-e,--max-bytes,--maxbytes", max_bytes, "Largest size")->capture_default_str();
  auto* factor_opt =
      app.add_option("-f,--step-factor,--stepfactor", step_factor, "Multiply the size by this factor each step [default: 2]");
  app.add_option("-i,--step-bytes,--stepbytes", step_bytes, "Add this many bytes each step (linear sweep)")->excludes(factor_opt);
  app.add_option("-n,--iters", iters, "Timed iterations per size (fixed); default: adaptive");
  app.add_option("-w,--warmup-iters,--warmup_iters", warmup, "Warm-up iterations per size")->capture_default_str();
  // default_str is what a bare -c means; the option text shows the real default.
  app.add_option("-c,--check", check, "Check every output element: 0 or 1; a bare -c means 1 [default: 0]")
      ->expected(0, 1)
      ->default_str("1")
      ->option_text("[0|1]");
  app.add_option("-d,--dtype,--datatype", dtype,
                 "Element types: int8, uint8, int32, uint32, int64, uint64, half, bfloat16, float, double, all")
      ->capture_default_str();
  app.add_option("-o,--redop", redop, "Reductions: sum, prod, min, max, avg, all")->capture_default_str();
  app.add_option("-r,--root", root, "Root rank of broadcast and reduce")->capture_default_str();
  app.add_option("-T,--timeout", timeout, "Seconds one step may take before the run ends with exit 4; 0 disables")
      ->capture_default_str();
  app.add_option("--backend", o.backend, "auto, mpi or nccl (auto: nccl when GPUs and NCCL are present)")
      ->capture_default_str();
  app.add_option("-g,--gpus-per-process,--ngpus", gpus, "nccl: GPUs driven by each process (one NCCL rank each)")
      ->capture_default_str();
  app.add_flag("--register", o.register_buffers, "nccl: allocate with ncclMemAlloc and register with ncclCommRegister");
  app.add_option("-G,--cuda-graph,--cudagraph", graph, "nccl: capture N operations in a CUDA graph and replay it; 0 = off")
      ->capture_default_str();
  app.add_option("-z,--blocking", blocking, "nccl: synchronise after every operation: 0 or 1; a bare -z means 1")
      ->expected(0, 1)
      ->default_str("1")
      ->option_text("[0|1]");
  app.add_option("--placement", placement, "Buffers: out (out-of-place), in (in-place) or both")->capture_default_str();
  app.add_option("--csv", o.csv_path, "Write rows to this CSV file as they are measured");
  app.add_option("--json", o.json_path, "Write rows and provenance to this JSON file at the end");
  app.add_option("--format", format, "What stdout shows: table, csv or json")->capture_default_str();
  app.add_flag("--force", o.force, "Overwrite existing --csv/--json files");
  app.add_option("--threshold", threshold_texts,
                 "Pass/fail rule, repeatable: [OPS][@SIZES]:METRIC>=VALUE, e.g. 'allreduce@64M..:busbw>=300' or "
                 "'busbw>=0.9*baseline'; a failed rule makes the exit code 1 (docs/thresholds.md)")
      ->allow_extra_args(false);
  app.add_option("--thresholds", o.thresholds_path, "File of threshold rules, one per line ('#' starts a comment)");
  app.add_option("--baseline", o.baseline_path,
                 "CSV of an earlier run (--csv) that rules with 'baseline' compare against, row by row");
  app.add_option("--max-time-per-size", max_time, "Adaptive mode: stop timing a size after this many seconds (the --min-samples floor comes first)")
      ->capture_default_str();
  app.add_option("--target-noise", target_noise,
                 "Adaptive mode: stop once the noise of the measured time (relative standard error of the mean "
                 "per-iteration time) is at or below this many percent")
      ->capture_default_str();
  app.add_option("--min-samples", min_samples, "Adaptive mode: timed batches per size at least")
      ->capture_default_str();
  app.add_option("--batch-time", batch_time,
                 "Seconds one timed batch of back-to-back operations should last; each batch is one sample")
      ->capture_default_str();
  app.add_flag("-V,--version", version, "Print the version and exit");
  // Testing aid: proves that --check catches corruption (damages one element on a rank).
  app.add_option("--debug-corrupt-rank", o.debug_corrupt_rank)->group("");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return ParsedCommandLine{std::nullopt, app.help()};
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    const auto newline = message.find('\n');
    if (newline != std::string::npos) message.resize(newline);
    throw UsageError(message + " (see --help)");
  }
  if (version)
    return ParsedCommandLine{std::nullopt,
                             std::string("bench-collectives ") + commbench::version() + " (commit " + git_commit() + ")",
                             true};

  o.ops = parse_collective_list(ops, "--op");
  o.sweep.min_bytes = parse_size(min_bytes, "-b/--min-bytes");
  o.sweep.max_bytes = parse_size(max_bytes, "-e/--max-bytes");
  if (!step_bytes.empty()) {
    o.sweep.step_bytes = parse_size(step_bytes, "-i/--step-bytes");
  } else if (!step_factor.empty()) {
    o.sweep.step_factor = parse_number(step_factor, "-f/--step-factor", false);
  }
  validate(o.sweep);
  if (!iters.empty()) o.stopping.fixed_iterations = parse_count(iters, "-n/--iters", 1);
  o.warmup_iterations = parse_count(warmup, "-w/--warmup-iters", 0);
  if (check != 0 && check != 1) throw UsageError("-c/--check: expected 0 or 1 (got " + std::to_string(check) + ")");
  o.check = check == 1;
  o.dtypes = parse_data_type_list(dtype, "-d/--dtype");
  o.dtypes_all = detail::lower_case(dtype) == "all";
  o.redops = parse_reduce_op_list(redop, "-o/--redop");
  o.redops_all = detail::lower_case(redop) == "all";
  o.placements = parse_placements(placement, "--placement");
  o.root = static_cast<int>(parse_count(root, "-r/--root", 0));
  o.timeout_seconds = parse_timeout_seconds(timeout);
  o.gpus_per_process = static_cast<int>(parse_count(gpus, "-g/--gpus-per-process", 1));
  if (o.gpus_per_process > 1024) throw UsageError("-g/--gpus-per-process: at most 1024 (got " + gpus + ")");
  o.cuda_graph_iterations = parse_count(graph, "-G/--cuda-graph", 0);
  if (blocking != 0 && blocking != 1)
    throw UsageError("-z/--blocking: expected 0 or 1 (got " + std::to_string(blocking) + ")");
  o.blocking = blocking == 1;
  if (o.blocking && o.cuda_graph_iterations > 0)
    throw UsageError("-z/--blocking: cannot be combined with -G/--cuda-graph (a graph replays without host syncs)");
  const std::string backend = detail::lower_case(o.backend);
  if (backend != "auto" && backend != "mpi" && backend != "nccl")
    throw UsageError("--backend: unknown value '" + o.backend + "'; expected one of: auto, mpi, nccl");
  o.backend = backend;
  const std::string fmt = detail::lower_case(format);
  if (fmt == "table")
    o.stdout_format = OutputFormat::table;
  else if (fmt == "csv")
    o.stdout_format = OutputFormat::csv;
  else if (fmt == "json")
    o.stdout_format = OutputFormat::json;
  else
    throw UsageError("--format: unknown value '" + format + "'; expected one of: table, csv, json");
  o.stopping.max_seconds = parse_number(max_time, "--max-time-per-size", false);
  if (!(o.stopping.max_seconds > 0)) throw UsageError("--max-time-per-size: must be a positive number of seconds");
  const double noise_pct = parse_number(target_noise, "--target-noise", true);
  if (!(noise_pct > 0) || noise_pct >= 100)
    throw UsageError("--target-noise: must be a percentage between 0 and 100 (got " + target_noise + ")");
  o.stopping.target_noise = noise_pct / 100.0;
  o.stopping.min_samples = parse_count(min_samples, "--min-samples", 1);
  o.batch_seconds = parse_number(batch_time, "--batch-time", false);
  if (!(o.batch_seconds > 0)) throw UsageError("--batch-time: must be a positive number of seconds");
  // An empty name is a typo (an unset shell variable), not a request for no file.
  if (app.count("--csv") > 0 && o.csv_path.empty()) throw UsageError("--csv: empty file name");
  if (app.count("--json") > 0 && o.json_path.empty()) throw UsageError("--json: empty file name");
  check_distinct_outputs(o.csv_path, o.json_path);
  if (app.count("--thresholds") > 0 && o.thresholds_path.empty()) throw UsageError("--thresholds: empty file name");
  if (app.count("--baseline") > 0 && o.baseline_path.empty()) throw UsageError("--baseline: empty file name");
  for (const std::string& text : threshold_texts) o.threshold_rules.push_back(parse_threshold_rule(text, "--threshold"));
  return ParsedCommandLine{o, ""};
}

void validate_for_ranks(const CollectivesOptions& o, int ranks) {
  bool rooted = false;
  for (Collective op : o.ops) rooted = rooted || has_root(op);
  if (o.root >= ranks)
    throw UsageError("-r/--root: " + std::to_string(o.root) + " is outside [0, " + std::to_string(ranks) + ")" +
                     (rooted ? "" : " (it would apply to broadcast and reduce)"));
  if (o.debug_corrupt_rank >= ranks) throw UsageError("--debug-corrupt-rank: outside [0, ranks)");
}

}  // namespace commbench
