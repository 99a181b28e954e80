// Who has reached a step, for the steps before the heartbeat channel exists. Joining the
// job's ranks and opening the heartbeat channel are collective: a rank that stalls before
// them leaves every other rank waiting, and none of them can tell which peer is missing.
// So each rank first sends rank 0 a small "arrived" message (point to point, which needs
// no other rank's participation), and rank 0 marks who arrived on this board while it
// waits; when the step times out, rank 0's line names the ranks that never arrived.
#pragma once

#include <mutex>
#include <string>
#include <vector>

namespace commbench {

class ArrivalBoard {
 public:
  // A new census of `ranks` ranks for `step` (rank 0's own arrival is implied); `hosts`
  // names the ranks when they are known (empty before the ranks exchanged their names).
  void open(std::string step, int ranks, std::vector<std::string> hosts);
  void mark_arrived(int rank);
  // Ends the census: nothing more to report.
  void close();
  // "not arrived at joining the job's ranks: rank 1 (host unknown)", or "every rank
  // arrived at STEP" when all did (the step itself is stuck), or "" when no census is open.
  std::string describe() const;

 private:
  mutable std::mutex mutex_;
  bool open_ = false;
  std::string step_;
  std::vector<bool> arrived_;
  std::vector<std::string> hosts_;
};

}  // namespace commbench
