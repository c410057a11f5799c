// nnrt info: what this installation can do: version, backends, plugins, devices, threads, cache.
#include <cstdio>
#include <iostream>

#include "cli.h"

namespace nnrt_cli {

namespace {

struct InfoFlags {
  ContextFlags context;
  bool json = false;
};

void print_human(const nlohmann::json &d) {
  std::printf("nnrt %s (ABI %d)\n\n", d["version"].get<std::string>().c_str(), d["abi"].get<int>());
  std::printf("selected   %s, device %d, %d thread(s)%s\n", d["backend"].get<std::string>().c_str(),
              d["device"].get<int>(), d["threads"].get<int>(), d["deterministic"].get<bool>() ? ", deterministic" : "");
  std::printf("\ndevices\n");
  for (const auto &dev : d["devices"]) {
    std::string dtypes;
    for (const auto &t : dev["native_dtypes"]) dtypes += (dtypes.empty() ? "" : " ") + t.get<std::string>();
    std::printf("  %d  %-4s %s, %d cores%s%s\n", dev["index"].get<int>(), dev["kind"].get<std::string>().c_str(),
                dev["name"].get<std::string>().c_str(), dev["cores"].get<int>(),
                dtypes.empty() ? "" : ", native: ", dtypes.c_str());
  }
  std::printf("\nbackends (usable)\n");
  for (const auto &b : d["backends"]) {
    std::printf("  %-10s %-4s score %-4d priority %-4d %s%s\n", b["name"].get<std::string>().c_str(),
                b["kind"].get<std::string>().c_str(), b["score"].get<int>(), b["priority"].get<int>(),
                b["version"].get<std::string>().c_str(), b["selected"].get<bool>() ? "  [selected]" : "");
  }
  std::printf("\nplugins\n");
  if (d["plugins"].empty()) std::printf("  (none found)\n");
  for (const auto &p : d["plugins"]) {
    bool loaded = p["loaded"].get<bool>();
    bool usable = p.value("usable", loaded);
    const char *state = !loaded ? "not loaded" : usable ? "loaded" : "no device";
    std::printf("  %-10s %-10s %s\n", p["name"].get<std::string>().c_str(), state, p["path"].get<std::string>().c_str());
    std::string error = p["error"].get<std::string>();
    if (!error.empty()) std::printf("  %-10s %-10s %s\n", "", "", error.c_str());
  }
#ifdef NNRT_CUDNN_NOT_BUILT
  std::printf("  %-10s %-10s %s\n", "cudnn", "not built", NNRT_CUDNN_NOT_BUILT);
#endif
  std::printf("\ncommunicators (distributed training)\n");
  if (d["comms"].empty()) std::printf("  (none found)\n");
  for (const auto &p : d["comms"]) {
    bool loaded = p["loaded"].get<bool>();
    std::printf("  %-10s %-10s %s\n", p["name"].get<std::string>().c_str(), loaded ? "loaded" : "not loaded",
                p["path"].get<std::string>().c_str());
    std::string detail = loaded ? p["version"].get<std::string>() : p["error"].get<std::string>();
    if (!detail.empty()) std::printf("  %-10s %-10s %s\n", "", "", detail.c_str());
  }
  if (d.contains("onnx")) {
    const auto &o = d["onnx"];
    bool loaded = o["loaded"].get<bool>();
    std::printf("\nONNX import/export\n  %-10s %-10s %s\n", "onnx", loaded ? "loaded" : "not loaded",
                o["path"].get<std::string>().c_str());
    std::string detail = loaded ? o["version"].get<std::string>() : o["error"].get<std::string>();
    if (!detail.empty()) std::printf("  %-10s %-10s %s\n", "", "", detail.c_str());
  }
  const auto &c = d["cache"];
  std::printf("\ncache      %s allocated, %s cached, peak %s, %llu hits, %llu misses\n",
              human_bytes(c["allocated_bytes"].get<double>()).c_str(), human_bytes(c["cached_bytes"].get<double>()).c_str(),
              human_bytes(c["peak_bytes"].get<double>()).c_str(), c["hits"].get<unsigned long long>(),
              c["misses"].get<unsigned long long>());
  std::printf("           limits: %s cached, blocks up to %s", human_bytes(c["max_cached_bytes"].get<double>()).c_str(),
              human_bytes(c["max_block_bytes"].get<double>()).c_str());
  double hard = c.value("max_total_bytes", 0.0);
  if (hard > 0) std::printf(", at most %s in all", human_bytes(hard).c_str());
  std::printf("\n");
}

void run_info(const InfoFlags &flags) {
  std::string text = make_context(flags.context).describe();
  if (flags.json) {
    std::cout << nlohmann::json::parse(text).dump(2) << "\n";
  } else {
    print_human(nlohmann::json::parse(text));
  }
}

}  // namespace

void register_info(CLI::App &app) {
  auto flags = std::make_shared<InfoFlags>();
  CLI::App *cmd = app.add_subcommand("info", "Show the version, backends, plugins, devices, threads and memory cache");
  add_context_flags(cmd, &flags->context);
  cmd->add_flag("--json", flags->json, "Print the context description as JSON");
  cmd->callback([flags] { run_info(*flags); });
}

}  // namespace nnrt_cli
