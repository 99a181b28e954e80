// PCI addresses as every source writes them (NVML's "00000000:B3:00.0", CUDA's
// "0000:B3:00.0", sysfs and hwloc's "0000:b3:00.0", NCCL's dump) turned into one form, so
// the same device is recognised whichever source named it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace commbench {

// How much a source may leave out. Libraries (NVML, CUDA) are taken as they come; files
// (hwloc exports, NCCL dumps) are written by tools that always write every digit, so a
// short form there means a damaged file.
enum class PciBusIdSyntax {
  lenient,  // [DOMAIN:]BUS:DEVICE.FUNCTION; domain 1..8 hex digits (0 when missing), bus and device 1..2
  full,     // DOMAIN:BB:DD.F; domain 4..8 hex digits, bus and device exactly 2
};

// A PCI address to "dddd:bb:dd.f": lower case, the domain at least 4 digits (Hyper-V and
// VMD domains are wider and keep theirs), function 0..7. Trailing NULs (NVML's fixed
// buffers) are ignored. nullopt for anything else.
std::optional<std::string> canonical_pci_bus_id(std::string_view text, PciBusIdSyntax syntax = PciBusIdSyntax::lenient);

}  // namespace commbench
