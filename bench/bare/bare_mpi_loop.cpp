// bare-mpi-loop: the reference bench-collectives is compared with end to end
// (bench/compare_with_bare_loop.py). It times one MPI collective the plainest way: a
// warm-up, a barrier, N calls back to back between two MPI_Wtime readings, and prints
// the slowest rank's mean time per call in microseconds, the figure bench-collectives
// prints as time_us. Sizes mean what they mean in bench-collectives (float elements):
// the whole buffer for allreduce and broadcast, the gathered buffer for allgather, the
// input buffer for reducescatter. With the argument `page`, both buffers start on a page
// boundary, as bench-collectives' host buffers do (by default they are std::vector's).
// With `repeat=K` the warm-up, barrier and timed loop run K times in the one process and
// each time is printed: on small messages, identical loops one after another can settle
// in different steady states (docs/methodology.md, "Two steady states of one loop").
// With `oneway=K` rank 1 sends K messages to rank 0 before each loop's warm-up, each of
// `oneway-bytes=B` bytes (default 4): one-way traffic like a harness's set-up broadcasts,
// which decides the state Open MPI's shared-memory fast boxes leave the pair in.
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// Every rank refuses alike; rank 0 alone says why, in one line naming the argument and
// ending with the usage. It says so before MPI_Finalize: a rank that exits non-zero first makes
// mpirun end the others.
int usage(int rank, const std::string& why) {
  if (rank == 0)
    std::fprintf(stderr,
                 "bare-mpi-loop: %s (usage: bare-mpi-loop allreduce|allgather|reducescatter|broadcast BYTES "
                 "ITERATIONS [page] [repeat=K] [oneway=K] [oneway-bytes=B])\n",
                 why.c_str());
  return 2;
}

constexpr std::size_t kPageFloats = 4096 / sizeof(float);

// The first page boundary inside `storage` (which has a page to spare).
float* page_start(std::vector<float>& storage) {
  const auto address = reinterpret_cast<std::uintptr_t>(storage.data());
  return reinterpret_cast<float*>((address + 4095) & ~std::uintptr_t{4095});
}

// The number after `prefix` in `extra` ("repeat=3" -> 3) when it is one whole number from
// `lowest` to `highest`; otherwise the reason, naming the argument.
std::string whole_number_after(const std::string& extra, const char* prefix, long lowest, long highest, long& value) {
  const char* digits = extra.c_str() + std::strlen(prefix);
  char* end = nullptr;
  errno = 0;
  value = std::strtol(digits, &end, 10);
  if (end == digits || *end != '\0' || errno == ERANGE || value < lowest || value > highest)
    return "'" + extra + "': " + prefix + " takes a whole number from " + std::to_string(lowest) + " to " +
           std::to_string(highest);
  return "";
}

// BYTES or ITERATIONS: digits only, from 1 to `highest`; otherwise the reason.
std::string positive_whole(const char* text, const char* name, long highest, long& value) {
  const std::string digits = text;
  errno = 0;
  value = digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos
              ? 0
              : std::strtol(digits.c_str(), nullptr, 10);
  if (errno == ERANGE || value < 1 || value > highest)
    return std::string(name) + " '" + digits + "' is not a positive whole number up to " + std::to_string(highest);
  return "";
}

// What the command line asks for.
struct Options {
  bool page_aligned = false;
  long repeats = 1;
  long oneway_messages = 0;
  long oneway_bytes = 4;
  std::string op;
  long bytes = 0;
  long iterations = 0;
};

// The options after BYTES and ITERATIONS; the reason when one is wrong or they disagree.
std::string read_extras(int argc, char** argv, int ranks, Options& options) {
  bool oneway_bytes_given = false;
  std::string why = argc >= 4 ? "" : "an operation, BYTES and ITERATIONS are needed";
  for (int i = 4; i < argc && why.empty(); ++i) {
    const std::string extra = argv[i];
    if (extra == "page")
      options.page_aligned = true;
    else if (extra.rfind("repeat=", 0) == 0)
      why = whole_number_after(extra, "repeat=", 1, 1000, options.repeats);
    else if (extra.rfind("oneway=", 0) == 0)
      why = whole_number_after(extra, "oneway=", 0, 1000000, options.oneway_messages);
    else if (extra.rfind("oneway-bytes=", 0) == 0) {
      // A message of 0 bytes would still be a header.
      why = whole_number_after(extra, "oneway-bytes=", 1, 1 << 20, options.oneway_bytes);
      oneway_bytes_given = true;
    } else {
      why = "'" + extra + "' is not an option";
    }
  }
  if (why.empty() && oneway_bytes_given && options.oneway_messages == 0)
    why = "oneway-bytes= needs oneway=K with K >= 1";
  if (why.empty() && options.oneway_messages > 0 && ranks < 2)
    why = "oneway= sends from rank 1 to rank 0: it needs 2 ranks";
  return why;
}

// The operation, BYTES and ITERATIONS (once the extras are good); the reason when one is wrong.
std::string read_operation(char** argv, Options& options) {
  options.op = argv[1];
  // BYTES up to 4 GiB keeps every count inside MPI's int; a billion calls is days of loop.
  std::string why = positive_whole(argv[2], "BYTES", 1L << 32, options.bytes);
  if (why.empty()) why = positive_whole(argv[3], "ITERATIONS", 1000000000L, options.iterations);
  const std::string& op = options.op;
  if (why.empty() && op != "allreduce" && op != "allgather" && op != "reducescatter" && op != "broadcast")
    why = "'" + op + "' is not one of the four operations";
  return why;
}

// The one-way messages from rank 1 to rank 0 before a loop; rank 0 counts what arrived.
void send_oneway(int rank, const Options& options, std::vector<char>& payload, long& received_messages,
                 long& received_bytes) {
  constexpr int kOnewayTag = 99;
  for (long k = 0; k < options.oneway_messages; ++k) {
    if (rank == 1)
      MPI_Send(payload.data(), static_cast<int>(options.oneway_bytes), MPI_CHAR, 0, kOnewayTag, MPI_COMM_WORLD);
    if (rank == 0) {
      MPI_Status status;
      MPI_Recv(payload.data(), static_cast<int>(options.oneway_bytes), MPI_CHAR, 1, kOnewayTag, MPI_COMM_WORLD,
               &status);
      int received = 0;
      MPI_Get_count(&status, MPI_CHAR, &received);
      ++received_messages;
      received_bytes += received;
    }
  }
}

// The send and receive buffers of one call, page-aligned when asked.
struct Buffers {
  std::vector<float> send_storage;
  std::vector<float> recv_storage;
  float* send = nullptr;
  float* recv = nullptr;
  int count = 0;  // per rank (per chunk)
};

Buffers buffers_for(const Options& options, int ranks) {
  const std::string& op = options.op;
  const bool chunked = op == "allgather" || op == "reducescatter";
  Buffers b;
  b.count = static_cast<int>(std::max(1L, options.bytes / 4 / (chunked ? ranks : 1)));
  const std::size_t spare = options.page_aligned ? kPageFloats : 0;
  b.send_storage.resize(static_cast<std::size_t>(b.count) * (op == "reducescatter" ? ranks : 1) + spare);
  b.recv_storage.resize(static_cast<std::size_t>(b.count) * (op == "allgather" ? ranks : 1) + spare);
  b.send = options.page_aligned ? page_start(b.send_storage) : b.send_storage.data();
  b.recv = options.page_aligned ? page_start(b.recv_storage) : b.recv_storage.data();
  std::fill(b.send, b.send_storage.data() + b.send_storage.size(), 1.0f);
  return b;
}

int call(const std::string& op, const Buffers& b) {
  if (op == "allreduce") return MPI_Allreduce(b.send, b.recv, b.count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  if (op == "allgather") return MPI_Allgather(b.send, b.count, MPI_FLOAT, b.recv, b.count, MPI_FLOAT, MPI_COMM_WORLD);
  if (op == "reducescatter")
    return MPI_Reduce_scatter_block(b.send, b.recv, b.count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  if (op == "broadcast") return MPI_Bcast(b.send, b.count, MPI_FLOAT, 0, MPI_COMM_WORLD);
  return MPI_ERR_OP;
}

// Each timed loop's slowest mean per call in microseconds, as rank 0 prints them, and what
// rank 0 received one way over all loops.
struct Loops {
  std::string times;
  long oneway_received = 0;
  long oneway_bytes_received = 0;
};

Loops timed_loops(int rank, const Options& options, const Buffers& b) {
  Loops loops;
  std::string& times = loops.times;
  std::vector<char> oneway_payload(static_cast<std::size_t>(options.oneway_bytes));
  for (long repeat = 0; repeat < options.repeats; ++repeat) {
    send_oneway(rank, options, oneway_payload, loops.oneway_received, loops.oneway_bytes_received);
    for (int warm = 0; warm < 10; ++warm) call(options.op, b);
    MPI_Barrier(MPI_COMM_WORLD);
    const double started = MPI_Wtime();
    for (long i = 0; i < options.iterations; ++i) call(options.op, b);
    const double mean = (MPI_Wtime() - started) / static_cast<double>(options.iterations);
    double slowest = 0;
    MPI_Reduce(&mean, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    char text[32];
    std::snprintf(text, sizeof text, "%s%.4f", repeat == 0 ? "" : " ", slowest * 1e6);
    times += text;
  }
  return loops;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  Options options;
  std::string why = read_extras(argc, argv, ranks, options);
  if (why.empty()) why = read_operation(argv, options);
  if (!why.empty()) {
    const int code = usage(rank, why);
    MPI_Finalize();
    return code;
  }
  const Buffers buffers = buffers_for(options, ranks);
  if (call(options.op, buffers) != MPI_SUCCESS) {
    if (rank == 0) std::fprintf(stderr, "bare-mpi-loop: the first %s failed\n", options.op.c_str());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  const Loops loops = timed_loops(rank, options, buffers);
  if (rank == 0) std::printf("%s %ld B: %s us\n", options.op.c_str(), options.bytes, loops.times.c_str());
  // What rank 0 received one way, over all loops: what the tests check oneway= by.
  if (rank == 0 && options.oneway_messages > 0)
    std::fprintf(stderr, "bare-mpi-loop: rank 0 received %ld one-way messages, %ld bytes\n", loops.oneway_received,
                 loops.oneway_bytes_received);
  MPI_Finalize();
  return 0;
}
