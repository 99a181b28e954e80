// The pattern runner's own cost per collective: a schedule of N small allreduces run by
// PatternStepWorkload (streams, an event per item, the accounting) against a bare loop
// issuing the same collectives through Backend::start and wait. Run under mpirun:
//   mpirun -np 2 build/bench/pattern-overhead [N]
// (bench/pattern_overhead.sh; the figure is in docs/performance.md).
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "commbench/backend/mpi/mpi_backend.hpp"
#include "commbench/pattern/pattern_executor.hpp"

int main(int argc, char** argv) {
  using namespace commbench;
  MPI_Init(&argc, &argv);
  {
    const std::size_t count = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 10000;
    mpi::MpiBackend world(std::make_unique<mpi::MpiBootstrap>(MPI_COMM_WORLD));
    RankSchedule schedule;
    for (std::size_t i = 0; i < count; ++i) {
      ScheduleStep step;
      step.kind = StepKind::collective;
      step.stream = "comm";
      step.op = Collective::allreduce;
      step.dtype = DataType::float32;
      step.group = GroupRole::data;
      step.bytes = 8;
      schedule.steps.push_back(step);
    }
    ParallelLayout layout;
    layout.data = world.ranks();
    layout.ranks_per_node = world.ranks();
    PatternGroups groups(world, layout, schedule);
    Backend& data = groups.backend(GroupRole::data);
    const OpCase small = op_case_for(schedule.steps.front(), data.ranks());
    auto buffers = data.allocate(small.send_bytes(), small.recv_bytes());
    PatternStepWorkload workload(groups, schedule, "overhead");
    workload.prepare();
    constexpr int kRepeats = 5;
    double best_bare = 1e9, best_pattern = 1e9, best_reported = 1e9;
    for (int repeat = 0; repeat < kRepeats; ++repeat) {
      world.group().barrier();
      const auto begin = std::chrono::steady_clock::now();
      for (std::size_t i = 0; i < count; ++i) data.start(small, *buffers)->wait();
      const double bare = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      world.group().barrier();
      const double pattern = workload.time(1);
      // What bench-patterns prints: the step from its origin event to its last item's end
      // (the accounting after the step is outside it).
      const double reported = workload.steps().back().step_seconds;
      best_bare = std::min(best_bare, world.group().max(bare));
      best_pattern = std::min(best_pattern, world.group().max(pattern));
      best_reported = std::min(best_reported, world.group().max(reported));
    }
    workload.release();
    if (world.group().rank() == 0)
      std::printf(
          "collectives %zu ranks %d bare %.3f ms pattern %.3f ms per-collective bare %.3f us pattern %.3f us "
          "overhead %.3f us reported-step overhead %.3f us\n",
          count, world.ranks(), best_bare * 1e3, best_pattern * 1e3, best_bare / count * 1e6,
          best_pattern / count * 1e6, (best_pattern - best_bare) / count * 1e6,
          (best_reported - best_bare) / count * 1e6);
  }
  MPI_Finalize();
  return 0;
}
