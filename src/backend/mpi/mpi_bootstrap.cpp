#include "commbench/backend/mpi/mpi_bootstrap.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>

#include "commbench/core/error.hpp"

namespace commbench::mpi {

void check_mpi(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw BackendError(std::string(what) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

MpiBootstrap::MpiBootstrap(MPI_Comm parent) {
  check_mpi(MPI_Comm_dup(parent, &comm_), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);

  MPI_Comm local = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local), "MPI_Comm_split_type");
  MPI_Comm_rank(local, &local_rank_);
  MPI_Comm_size(local, &local_size_);
  MPI_Comm_free(&local);
  int leader = local_rank_ == 0 ? 1 : 0;
  check_mpi(MPI_Allreduce(&leader, &node_count_, 1, MPI_INT, MPI_SUM, comm_), "MPI_Allreduce");

  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  std::vector<char> all(static_cast<std::size_t>(size_) * MPI_MAX_PROCESSOR_NAME);
  check_mpi(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm_),
            "MPI_Allgather");
  hostnames_.reserve(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    const char* entry = all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME;
    hostnames_.emplace_back(entry, strnlen(entry, MPI_MAX_PROCESSOR_NAME));
  }
}

MpiBootstrap::~MpiBootstrap() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (comm_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm_);
}

void MpiBootstrap::barrier() { check_mpi(MPI_Barrier(comm_), "MPI_Barrier"); }

namespace {

// One value reduced over `comm`: the agreement primitives are all this with another
// type and operator.
template <typename T>
T reduce_one(T value, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  T out{};
  check_mpi(MPI_Allreduce(&value, &out, 1, type, op, comm), "MPI_Allreduce");
  return out;
}

}  // namespace

bool MpiBootstrap::any(bool value) { return reduce_one(value ? 1 : 0, MPI_INT, MPI_LOR, comm_) != 0; }
int MpiBootstrap::bitwise_or(int bits) { return reduce_one(bits, MPI_INT, MPI_BOR, comm_); }
int MpiBootstrap::max(int value) { return reduce_one(value, MPI_INT, MPI_MAX, comm_); }
double MpiBootstrap::max(double value) { return reduce_one(value, MPI_DOUBLE, MPI_MAX, comm_); }
double MpiBootstrap::min(double value) { return reduce_one(value, MPI_DOUBLE, MPI_MIN, comm_); }
double MpiBootstrap::sum(double value) { return reduce_one(value, MPI_DOUBLE, MPI_SUM, comm_); }
std::uint64_t MpiBootstrap::sum(std::uint64_t value) { return reduce_one(value, MPI_UINT64_T, MPI_SUM, comm_); }

RankValue MpiBootstrap::max_with_rank(double value) {
  struct {
    double value;
    int rank;
  } in{value, rank_}, out{};
  check_mpi(MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm_), "MPI_Allreduce");
  return RankValue{out.value, out.rank};
}

int MpiBootstrap::first_rank_where(bool value) {
  const int first = reduce_one(value ? rank_ : INT_MAX, MPI_INT, MPI_MIN, comm_);
  return first == INT_MAX ? -1 : first;
}

// Why the control plane is pairwise symmetric: small messages between two ranks on one
// node go through Open MPI's per-pair ring buffers ("fast boxes"), and how many slots
// one direction has used more than the other decides which of two steady states a later
// small-message loop runs in (docs/methodology.md, "Two steady states of one loop"). A
// bare loop's set-up is symmetric; bench-collectives' must be too, or its 8 B rows read
// the slower state. So a broadcast is a bitwise-or reduction (every rank sends as many
// bytes as it receives) and a gather pads every rank's text to the longest.
std::string MpiBootstrap::broadcast(const std::string& text, int root) {
  const std::uint64_t length = sum(static_cast<std::uint64_t>(rank_ == root ? text.size() : 0));
  if (length > static_cast<std::uint64_t>(INT_MAX)) throw BackendError("MPI_Allreduce: a broadcast over 2 GiB");
  std::string out = rank_ == root ? text : std::string(length, '\0');
  if (length > 0)
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, out.data(), static_cast<int>(length), MPI_BYTE, MPI_BOR, comm_),
              "MPI_Allreduce");
  return out;
}

std::vector<std::string> MpiBootstrap::all_gather(const std::string& text) {
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<std::size_t>(size_));
  check_mpi(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm_), "MPI_Allgather");
  const std::size_t longest = static_cast<std::size_t>(*std::max_element(lengths.begin(), lengths.end()));
  std::vector<std::string> out;
  // Padding costs ranks x longest bytes on every rank; past 64 MiB the exact-length
  // gather is worth the asymmetry (many ranks with one long text, never the 2-rank case).
  constexpr std::size_t kPaddedLimit = std::size_t{64} << 20;
  if (longest * static_cast<std::size_t>(size_) <= kPaddedLimit) {
    std::string padded = text;
    padded.resize(longest, '\0');
    std::string all(longest * static_cast<std::size_t>(size_), '\0');
    if (longest > 0)
      check_mpi(MPI_Allgather(padded.data(), static_cast<int>(longest), MPI_CHAR, all.data(), static_cast<int>(longest),
                              MPI_CHAR, comm_),
                "MPI_Allgather");
    for (int r = 0; r < size_; ++r)
      out.push_back(all.substr(static_cast<std::size_t>(r) * longest, static_cast<std::size_t>(lengths[r])));
    return out;
  }
  std::vector<int> offsets(static_cast<std::size_t>(size_), 0);
  for (int r = 1; r < size_; ++r) offsets[r] = offsets[r - 1] + lengths[r - 1];
  std::string all(static_cast<std::size_t>(offsets.back() + lengths.back()), '\0');
  check_mpi(MPI_Allgatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, comm_),
            "MPI_Allgatherv");
  for (int r = 0; r < size_; ++r)
    out.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  return out;
}

std::unique_ptr<Bootstrap> MpiBootstrap::split(int color, int key) { return split_mpi(color, key); }

std::unique_ptr<MpiBootstrap> MpiBootstrap::split_mpi(int color, int key) {
  MPI_Comm sub = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(comm_, color, key, &sub), "MPI_Comm_split");
  auto group = std::make_unique<MpiBootstrap>(sub);
  MPI_Comm_free(&sub);
  return group;
}

}  // namespace commbench::mpi
