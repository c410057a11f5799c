// The nnrt command line. Subcommands are registered from their own files.
#include <cstdio>
#include <stdexcept>

#include "cli/cli.h"

int main(int argc, char **argv) {
  CLI::App app{"nnrt: an embeddable deep-learning runtime"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("nnrt ") + nnrt_version_string());
  nnrt_cli::register_info(app);
  nnrt_cli::register_train(app);
  nnrt_cli::register_eval(app);
  nnrt_cli::register_predict(app);
  nnrt_cli::register_summary(app);
  nnrt_cli::register_onnx(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "nnrt: %s\n", e.what());
    return 1;
  }
  return 0;
}
