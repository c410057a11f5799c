// The nnrt command line. Subcommands are registered from their own files.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "cli.h"

int main(int argc, char **argv) {
  // The program, not the library, chooses OpenMP's wait policy (see nnrt.h): a short spin keeps the
  // oneDNN plugin's training fast when other programs keep the cores busy. libgomp reads it when
  // it loads with the first plugin, after this line.
  if (!std::getenv("OMP_WAIT_POLICY") && !std::getenv("GOMP_SPINCOUNT")) setenv("GOMP_SPINCOUNT", "10000", 0);
  CLI::App app{"nnrt: an embeddable deep-learning runtime"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("nnrt ") + nnrt::version_string());
  nnrt_cli::register_info(app);
  nnrt_cli::register_train(app);
  nnrt_cli::register_eval(app);
  nnrt_cli::register_predict(app);
  nnrt_cli::register_generate(app);
  nnrt_cli::register_quantize(app);
  nnrt_cli::register_summary(app);
  nnrt_cli::register_onnx(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e);
  } catch (const nnrt::error &e) {
    std::fprintf(stderr, "nnrt: %s: %s\n", nnrt::status_name(e.status()), e.what());
    return 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "nnrt: %s\n", e.what());
    return 1;
  }
  return 0;
}
