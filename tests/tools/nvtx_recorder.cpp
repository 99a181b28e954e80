// A minimal NVTX tool for the tests: loaded by NVTX through NVTX_INJECTION64_PATH, as
// Nsight Systems' own library is, it records every domain, category name, range push and
// pop the process emits, one line each, to COMMBENCH_NVTX_RECORD/nvtx-<pid>.log:
//   <tid>\tdomain\t<name>
//   <tid>\tcategory\t<id>\t<name>
//   <tid>\tpush\t<category>\t<name>
//   <tid>\tpop
// Each line is one write() to a file opened with O_APPEND, so a process that ends
// abruptly leaves whole lines: the test reads what happened up to the end.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include <nvtx3/nvToolsExt.h>

namespace {

int record_file = -1;
std::mutex record_mutex;
int domain_token = 0;  // the handle given out for every domain: its address

void record(const std::string& fields) {
  const std::string line = std::to_string(static_cast<long>(syscall(SYS_gettid))) + "\t" + fields + "\n";
  const std::lock_guard<std::mutex> lock(record_mutex);
  if (record_file >= 0 && write(record_file, line.data(), line.size()) < 0) return;
}

std::string message_of(const nvtxEventAttributes_t* attributes) {
  if (attributes == nullptr || attributes->messageType != NVTX_MESSAGE_TYPE_ASCII || !attributes->message.ascii)
    return "?";
  return attributes->message.ascii;
}

nvtxDomainHandle_t NVTX_API domain_create(const char* name) {
  record(std::string("domain\t") + (name ? name : "?"));
  return reinterpret_cast<nvtxDomainHandle_t>(&domain_token);
}

void NVTX_API name_category(nvtxDomainHandle_t, uint32_t category, const char* name) {
  record("category\t" + std::to_string(category) + "\t" + (name ? name : "?"));
}

int NVTX_API range_push(nvtxDomainHandle_t, const nvtxEventAttributes_t* attributes) {
  record("push\t" + std::to_string(attributes ? attributes->category : 0) + "\t" + message_of(attributes));
  return 0;
}

int NVTX_API range_pop(nvtxDomainHandle_t) {
  record("pop");
  return 0;
}

}  // namespace

extern "C" NVTX_DYNAMIC_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  const char* directory = std::getenv("COMMBENCH_NVTX_RECORD");
  if (directory == nullptr) return 0;
  const std::string path = std::string(directory) + "/nvtx-" + std::to_string(getpid()) + ".log";
  record_file = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (record_file < 0) return 0;
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (callbacks == nullptr || callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) == 0) return 0;
  if (size <= NVTX_CBID_CORE2_DomainCreateA) return 0;
  *table[NVTX_CBID_CORE2_DomainCreateA] = reinterpret_cast<NvtxFunctionPointer>(&domain_create);
  *table[NVTX_CBID_CORE2_DomainNameCategoryA] = reinterpret_cast<NvtxFunctionPointer>(&name_category);
  *table[NVTX_CBID_CORE2_DomainRangePushEx] = reinterpret_cast<NvtxFunctionPointer>(&range_push);
  *table[NVTX_CBID_CORE2_DomainRangePop] = reinterpret_cast<NvtxFunctionPointer>(&range_pop);
  return 1;
}
