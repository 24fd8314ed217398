// gpuperf serve: the live pages of every recorded process as a Prometheus/OpenMetrics
// endpoint (docs/live.md). Loopback unless --listen names another address.
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/quantity_options.h"
#include "cli/terminal.h"
#include "live/http_server.h"
#include "live/openmetrics.h"

namespace gpuperf::cli {
namespace {

struct ServeArgs {
  std::string listen = "127.0.0.1:9464";
  std::string dir;
  int64_t top_kernels = 20;
  bool no_nvml = false;
};

// The scrape counts the pages it skipped; the log says which and why, once per page (each
// scrape would say it again).
void LogNewSkips(const std::vector<std::string>& skipped, std::set<std::string>& before) {
  std::set<std::string> now(skipped.begin(), skipped.end());
  for (const std::string& line : now) {
    if (!before.contains(line)) std::fprintf(stderr, "gpuperf serve: skipped %s\n", line.c_str());
  }
  before = std::move(now);
}

int RunServe(const ServeArgs& a) {
  live::ScanOptions scan;
  if (!a.dir.empty()) scan.dirs = {a.dir};
  std::string nvml_why = "--no-nvml";
  std::unique_ptr<Nvml> nvml;
  if (!a.no_nvml) nvml = Nvml::Open(&nvml_why);
  live::HttpServer server;
  if (Status status = server.Listen(a.listen); !status.ok()) return ReportError(status);
  InstallStopSignals();
  std::string host, port;
  live::SplitHostPort(a.listen, &host, &port);
  const bool v6 = host.find(':') != std::string::npos;
  std::fprintf(stderr, "gpuperf serve: metrics at http://%s%s%s:%u/metrics (Ctrl-C stops)\n",
               v6 ? "[" : "", host.c_str(), v6 ? "]" : "", static_cast<unsigned>(server.port()));
  std::set<std::string> skipped_before;
  server.Serve(
      [&](const live::HttpRequest& request) {
        live::HttpResponse response;
        if (request.path == "/metrics") {
          live::MetricsOptions options;
          options.top_kernels = static_cast<uint32_t>(a.top_kernels);
          options.openmetrics = live::WantsOpenMetrics(request.accept);
          const live::LiveModel model = live::ReadLiveModel(scan, nvml.get(), nvml_why);
          LogNewSkips(model.scan.skipped, skipped_before);
          response.body = live::RenderMetrics(model, options);
          response.content_type = live::MetricsContentType(options.openmetrics);
        } else if (request.path == "/") {
          response.body = "gpuperf serve: the metrics are at /metrics\n";
        } else {
          response.status = 404;
        }
        return response;
      },
      StopFlag());
  return kExitOk;
}

void RegisterServe(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "serve", "Serve every recorded process's live counters to Prometheus (OpenMetrics)");
  cmd->footer(
      "Metrics and labels: docs/live.md. Labels match dcgm-exporter's (gpu, UUID, Hostname) "
      "plus pid and rank;\nkernel names appear only for each process's top kernels.");
  auto a = std::make_shared<ServeArgs>();
  cmd->add_option("--listen", a->listen,
                  "HOST:PORT to listen on (default 127.0.0.1:9464, loopback only)");
  TakesCount(cmd->add_option("--top-kernels", a->top_kernels,
                             "Kernels named per process, by GPU time (0 to 64; default 20)"),
             {0, live::kMaxKernels});
  cmd->add_option("--dir", a->dir,
                  "Directory of live pages (default $GPUPERF_LIVE_DIR or /dev/shm/gpuperf-UID)");
  cmd->add_flag("--no-nvml", a->no_nvml, "Do not ask NVML for device indexes");
  cmd->callback([a, exit_code] { *exit_code = RunServe(*a); });
}

}  // namespace

GPUPERF_COMMAND(75, RegisterServe);

}  // namespace gpuperf::cli
