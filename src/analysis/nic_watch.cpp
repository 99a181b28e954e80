#include "commbench/analysis/nic_watch.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "commbench/backend/typed_exchange.hpp"
#include "commbench/core/collective.hpp"
#include "commbench/core/dtype.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/reduce_op.hpp"
#include "commbench/core/text_table.hpp"

namespace commbench {
namespace {

// Short enough that a healthy port bursts to line rate within one interval (the test
// cluster's did, results/slurm-cluster/nic-rates/); each reading is one file per port.
constexpr std::chrono::milliseconds kSamplingInterval{10};

std::string gb(double bytes) { return fmt::format("{:.3f}", bytes / 1e9); }

}  // namespace

std::vector<NodeNic> nics_of_node(const NicCaseTraffic& traffic, const std::string& node) {
  std::vector<NodeNic> nics;
  for (std::size_t i = 0; i < traffic.traffic.size(); ++i) {
    NodeNic nic;
    nic.node = node;
    nic.traffic = traffic.traffic[i];
    nic.peak_bytes_per_second = traffic.peak_bytes_per_second[i];
    nic.seconds = traffic.seconds;
    nics.push_back(std::move(nic));
  }
  return nics;
}

NicWatch::NicWatch(Bootstrap& group, bool enabled, double fraction, NicCounterSources sources)
    : group_(group), enabled_(enabled), fraction_(fraction) {
  if (enabled_ && group_.local_rank() == 0)
    sampler_ = std::make_unique<NicSampler>(std::move(sources), kSamplingInterval);
}

void NicWatch::start_case() {
  if (sampler_) sampler_->start();
}

std::vector<NodeNic> NicWatch::finish_case(const OpCase& c) {
  return finish(fmt::format("{} {} bytes", name_of(c.op), c.shape.bytes));
}

std::vector<NodeNic> NicWatch::finish(const std::string& what, const std::set<std::string>& taking_part) {
  if (!enabled_) return {};
  // A rank that does not sample its node sends none.
  const std::optional<NicCaseTraffic> mine = sampler_ ? std::optional(sampler_->stop()) : std::nullopt;
  const std::vector<std::optional<NicCaseTraffic>> all = all_gather_as(group_, mine);
  std::vector<NodeNic> nics;
  for (std::size_t rank = 0; rank < all.size(); ++rank)
    if (all[rank] && (taking_part.empty() || taking_part.count(group_.hostnames()[rank])))
      for (NodeNic& nic : nics_of_node(*all[rank], group_.hostnames()[rank])) nics.push_back(std::move(nic));
  const RailsJudgement judgement = judge_rails(nics, fraction_);
  cases_ += 1;
  if (!judgement.compared) {
    if (unjudged_ == 0) first_unjudged_ = fmt::format("{}: {}", what, judgement.why_not);
    unjudged_ += 1;
  }
  for (const NodeNic& nic : nics) {
    if (!nic.rail) continue;
    RailTotals& totals = rails_[describe_nic(nic)];
    totals.node = nic.node;
    totals.nic = nic_label(nic.traffic.device, nic.traffic.port, nic.traffic.rdma);
    totals.device = nic.traffic.device;
    totals.cases += 1;
    totals.compared += judgement.compared ? 1 : 0;
    totals.bytes += static_cast<double>(nic.traffic.bytes());
    totals.seconds += nic.seconds;
    totals.peak = std::max(totals.peak, nic.peak_bytes_per_second);
    if (!nic.flag.empty()) {
      totals.flagged += 1;
      if (totals.first_flag.empty()) totals.first_flag = fmt::format("{}: {}", what, nic.flag);
    }
  }
  return nics;
}

std::string NicWatch::rails_table(std::string_view over) const {
  if (rails_.empty())
    return cases_ == 0 ? "" : fmt::format("# rails: none found to compare; the first case, {}\n", first_unjudged_);
  TextTable table({{{"node"}, Align::left, std::nullopt, 1},
                   {{"nic"}, Align::left, std::nullopt, 2},
                   {{"cases"}, Align::right, std::nullopt, 2},
                   {{"GB"}, Align::right, std::nullopt, 2},
                   {{"GB/s"}, Align::right, std::nullopt, 2},
                   {{"busiest", "GB/s"}, Align::right, std::nullopt, 2},
                   {{"flagged"}, Align::right, std::nullopt, 2}},
                  "# ", "# ");
  for (const auto& [label, r] : rails_)
    table.add_row({r.node, r.nic, std::to_string(r.cases), gb(r.bytes), r.seconds > 0 ? gb(r.bytes / r.seconds) : "-",
                   gb(r.peak), fmt::format("{}/{}", r.flagged, r.compared)});
  std::string text = fmt::format("# rails: what each node's port carried {}\n", over) + table.render();
  for (const std::string& note : flag_notes()) text += fmt::format("# note: {}\n", note);
  return text;
}

std::vector<std::string> NicWatch::flag_notes() const {
  // One case's flag is one sample: in a job held back by a slow link, a healthy port's
  // busiest interval is lower too and now and then dips under the fraction. A port that
  // falls short in most cases is the finding.
  std::vector<std::string> notes;
  for (const auto& [label, r] : rails_)
    if (falls_short(r))
      notes.push_back(fmt::format("rail {} fell short in {} of {} compared cases; first at {}{}", label, r.flagged,
                                  r.compared, r.first_flag, nearest_gpus_text(r)));
  if (unjudged_ > 0)
    notes.push_back(
        fmt::format("rails not compared in {} of {} cases; the first, {}", unjudged_, cases_, first_unjudged_));
  return notes;
}

std::string NicWatch::rails_of_node(const std::string& node) const {
  std::vector<std::string> short_ones;
  const RailTotals* busiest = nullptr;
  for (const auto& [label, r] : rails_) {
    if (r.node != node) continue;
    if (falls_short(r))
      short_ones.push_back(fmt::format("{} fell short in {} of {} compared rounds (busiest {} GB/s{})", r.nic,
                                       r.flagged, r.compared, gb(r.peak), nearest_gpus_text(r)));
    if (busiest == nullptr || r.bytes > busiest->bytes) busiest = &r;
  }
  if (!short_ones.empty()) {
    std::string text;
    for (const std::string& one : short_ones) text += (text.empty() ? "" : ", ") + one;
    return text;
  }
  return busiest != nullptr ? fmt::format("{} (busiest {} GB/s)", busiest->nic, gb(busiest->peak)) : std::string();
}

std::string NicWatch::nearest_gpus_text(const RailTotals& totals) const {
  auto node = gpus_by_nic_.find(totals.node);
  if (node == gpus_by_nic_.end()) node = gpus_by_nic_.find("");
  if (node == gpus_by_nic_.end()) return "";
  const auto found = node->second.find(totals.device);
  if (found == node->second.end() || found->second.empty()) return "";
  std::string gpus;
  for (const int gpu : found->second) gpus += (gpus.empty() ? "" : ", ") + std::to_string(gpu);
  return fmt::format("; nearest GPU{} {}", found->second.size() == 1 ? "" : "s", gpus);
}

bool NicWatch::falls_short(const RailTotals& totals) {
  return totals.compared > 0 && 2 * totals.flagged > totals.compared;
}

Record nic_record(const OpCase& c, const NodeNic& nic) {
  const NicTraffic& t = nic.traffic;
  const bool known = t.known() && nic.seconds > 0;
  std::string note = nic.flag;
  if (!t.note.empty()) note += (note.empty() ? "" : "; ") + t.note;
  return Record{
      &record_kind("nic"),
      {std::string(name_of(c.op)), std::string(name_of(c.placement)), std::string(name_of(c.dtype)),
       std::string(name_of(c.redop)), whole_value(c.shape.bytes), nic.node, nic_label(t.device, t.port, t.rdma),
       FieldValue{static_cast<std::int64_t>(t.rdma)}, FieldValue{static_cast<std::int64_t>(nic.rail)},
       t.tx_bytes ? whole_value(*t.tx_bytes) : FieldValue{}, t.rx_bytes ? whole_value(*t.rx_bytes) : FieldValue{},
       nic.seconds, known ? FieldValue{nic.bytes_per_second() / 1e9} : FieldValue{},
       nic.peak_bytes_per_second > 0 ? FieldValue{nic.peak_bytes_per_second / 1e9} : FieldValue{},
       FieldValue{static_cast<std::int64_t>(!nic.flag.empty())}, note},
      {}};
}

}  // namespace commbench
