#include "report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace nnrt_cli {

namespace {

std::string esc(const std::string &s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '&': o += "&amp;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string num(double v, int digits = 4) {
  if (!std::isfinite(v)) return "-";
  char b[64];
  std::snprintf(b, sizeof b, "%.*g", digits, v);
  return b;
}

// Tick positions: about five "nice" values (1, 2, 5 times a power of ten) covering [lo, hi].
std::vector<double> ticks(double lo, double hi) {
  double span = hi - lo;
  if (span <= 0) span = std::fabs(hi) > 0 ? std::fabs(hi) : 1;
  double raw = span / 5, mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag * (raw / mag >= 5 ? 5 : raw / mag >= 2 ? 2 : 1);
  std::vector<double> t;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) t.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  return t;
}

struct Series {
  std::string name, color;
  std::vector<std::pair<double, double>> points;
  bool markers = false;
};

std::string line_chart(const std::string &title, const std::string &x_label, const std::vector<Series> &series) {
  const double W = 560, H = 300, L = 60, R = 20, T = 36, B = 44;
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  for (const Series &s : series)
    for (auto &p : s.points) {
      if (!std::isfinite(p.second)) continue;
      x0 = std::min(x0, p.first), x1 = std::max(x1, p.first);
      y0 = std::min(y0, p.second), y1 = std::max(y1, p.second);
    }
  std::string svg = "<svg xmlns='http://www.w3.org/2000/svg' width='" + num(W) + "' height='" + num(H) +
                    "' viewBox='0 0 " + num(W) + " " + num(H) + "' role='img' aria-label='" + esc(title) + "'>";
  svg += "<text x='" + num(W / 2) + "' y='20' text-anchor='middle' class='title'>" + esc(title) + "</text>";
  if (x0 > x1) return svg + "<text x='" + num(W / 2) + "' y='" + num(H / 2) + "' text-anchor='middle'>no data</text></svg>";
  if (x1 == x0) x1 = x0 + 1;
  double pad = (y1 - y0) * 0.08;
  if (pad == 0) pad = std::fabs(y1) > 0 ? std::fabs(y1) * 0.1 : 1;
  y0 -= pad, y1 += pad;
  auto sx = [&](double x) { return L + (x - x0) / (x1 - x0) * (W - L - R); };
  auto sy = [&](double y) { return H - B - (y - y0) / (y1 - y0) * (H - T - B); };
  for (double t : ticks(y0, y1)) {
    svg += "<line x1='" + num(L) + "' x2='" + num(W - R) + "' y1='" + num(sy(t), 6) + "' y2='" + num(sy(t), 6) + "' class='grid'/>";
    svg += "<text x='" + num(L - 6) + "' y='" + num(sy(t) + 4, 6) + "' text-anchor='end' class='tick'>" + num(t, 3) + "</text>";
  }
  for (double t : ticks(x0, x1)) {
    svg += "<text x='" + num(sx(t), 6) + "' y='" + num(H - B + 16) + "' text-anchor='middle' class='tick'>" + num(t, 3) + "</text>";
  }
  svg += "<line x1='" + num(L) + "' x2='" + num(W - R) + "' y1='" + num(H - B) + "' y2='" + num(H - B) + "' class='axis'/>";
  svg += "<line x1='" + num(L) + "' x2='" + num(L) + "' y1='" + num(T) + "' y2='" + num(H - B) + "' class='axis'/>";
  svg += "<text x='" + num((L + W - R) / 2) + "' y='" + num(H - 8) + "' text-anchor='middle' class='tick'>" + esc(x_label) + "</text>";
  double lx = L + 10;
  for (const Series &s : series) {
    std::string path;
    for (auto &p : s.points) {
      if (!std::isfinite(p.second)) continue;
      path += (path.empty() ? "M" : "L") + num(sx(p.first), 6) + " " + num(sy(p.second), 6) + " ";
    }
    svg += "<path d='" + path + "' fill='none' stroke='" + s.color + "' stroke-width='2'/>";
    if (s.markers)
      for (auto &p : s.points)
        if (std::isfinite(p.second))
          svg += "<circle cx='" + num(sx(p.first), 6) + "' cy='" + num(sy(p.second), 6) + "' r='3.5' fill='" + s.color + "'/>";
    svg += "<rect x='" + num(lx) + "' y='" + num(T - 2) + "' width='12' height='4' fill='" + s.color + "'/>";
    svg += "<text x='" + num(lx + 16) + "' y='" + num(T + 3) + "' class='tick'>" + esc(s.name) + "</text>";
    lx += 24 + 7.0 * s.name.size();
  }
  return svg + "</svg>";
}

std::string confusion_svg(const nlohmann::json &matrix, const std::vector<std::string> &names) {
  size_t n = matrix.size();
  const double cell = n <= 10 ? 44 : 440.0 / n, L = 110, T = 40;
  double W = L + cell * n + 20, H = T + cell * n + 60;
  std::string svg = "<svg xmlns='http://www.w3.org/2000/svg' width='" + num(W) + "' height='" + num(H) + "' viewBox='0 0 " +
                    num(W) + " " + num(H) + "' role='img' aria-label='confusion matrix'>";
  svg += "<text x='" + num(L + cell * n / 2) + "' y='16' text-anchor='middle' class='tick'>predicted class</text>";
  for (size_t t = 0; t < n; ++t) {
    int64_t row = 0;
    for (auto &v : matrix[t]) row += v.get<int64_t>();
    std::string name = t < names.size() ? names[t] : std::to_string(t);
    svg += "<text x='" + num(L - 6) + "' y='" + num(T + cell * t + cell / 2 + 4) + "' text-anchor='end' class='tick'>" + esc(name) + "</text>";
    svg += "<text x='" + num(L + cell * t + cell / 2) + "' y='" + num(T - 6) + "' text-anchor='middle' class='tick'>" + std::to_string(t) + "</text>";
    for (size_t p = 0; p < n; ++p) {
      int64_t v = matrix[t][p].get<int64_t>();
      double f = row ? static_cast<double>(v) / row : 0;  // the share of the true class
      int shade = static_cast<int>(255 - 200 * f);
      char fill[32];
      std::snprintf(fill, sizeof fill, t == p ? "rgb(%d,%d,255)" : "rgb(255,%d,%d)", shade, shade);
      svg += "<rect x='" + num(L + cell * p) + "' y='" + num(T + cell * t) + "' width='" + num(cell) + "' height='" + num(cell) +
             "' fill='" + fill + "' stroke='#fff'><title>true " + esc(name) + ", predicted " + std::to_string(p) + ": " +
             std::to_string(v) + "</title></rect>";
      if (cell >= 24)
        svg += "<text x='" + num(L + cell * p + cell / 2) + "' y='" + num(T + cell * t + cell / 2 + 4) +
               "' text-anchor='middle' class='cell'>" + std::to_string(v) + "</text>";
    }
  }
  svg += "<text x='14' y='" + num(T + cell * n / 2) + "' class='tick' transform='rotate(-90 14 " + num(T + cell * n / 2) +
         ")' text-anchor='middle'>true class</text>";
  return svg + "</svg>";
}

}  // namespace

std::string render_report(const ReportInput &in) {
  std::string h = "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>" + esc(in.title) + "</title><style>"
                  "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}"
                  "h1{font-size:22px}h2{font-size:17px;margin-top:28px}table{border-collapse:collapse;font-size:13px}"
                  "td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}th{background:#f4f4f4}"
                  "td.l,th.l{text-align:left}.charts{display:flex;flex-wrap:wrap;gap:16px}"
                  "svg .grid{stroke:#eee}svg .axis{stroke:#888}svg .tick{font-size:11px;fill:#555}"
                  "svg .title{font-size:14px;font-weight:600}svg .cell{font-size:11px;fill:#111}"
                  ".facts td{text-align:left}</style></head><body>";
  h += "<h1>" + esc(in.title) + "</h1><table class='facts'>";
  for (auto it = in.run.begin(); it != in.run.end(); ++it) {
    h += "<tr><th class='l'>" + esc(it.key()) + "</th><td>" + esc(it.value().is_string() ? it.value().get<std::string>() : it.value().dump()) + "</td></tr>";
  }
  h += "</table>";

  // Curves: batch losses and per-epoch means; validation scores per epoch.
  Series batch{"minibatch loss", "#9bb7d4", in.batch_losses, false};
  Series epoch_loss{"epoch mean loss", "#1f5fa8", {}, true};
  Series val{"validation", "#d0632a", {}, true};
  if (in.result.contains("history")) {
    for (auto &e : in.result["history"]) {
      double x = e["epoch"].get<double>() + 1;
      epoch_loss.points.emplace_back(x, e["loss"].get<double>());
      if (!e["validation_score"].is_null()) val.points.emplace_back(x, e["validation_score"].get<double>());
    }
  }
  h += "<h2>Training</h2><div class='charts'>";
  h += line_chart("Loss", "epoch", {batch, epoch_loss});
  if (in.language_model) {
    // Perplexity: the number of equally likely tokens the model is as unsure as (256 for a uniform
    // byte model); the same curves through exp.
    Series batch_ppl{"minibatch perplexity", batch.color, {}, false}, epoch_ppl{"epoch mean perplexity", epoch_loss.color, {}, true};
    for (const auto &[x, loss] : batch.points) batch_ppl.points.emplace_back(x, std::exp(loss));
    for (const auto &[x, loss] : epoch_loss.points) epoch_ppl.points.emplace_back(x, std::exp(loss));
    h += line_chart("Perplexity", "epoch", {batch_ppl, epoch_ppl});
  }
  h += line_chart(in.evaluation.is_object() && in.evaluation.contains("mse") ? "Validation score (-MSE)"
                  : in.language_model                                          ? "Validation accuracy (next token)"
                                                                               : "Validation accuracy",
                  "epoch", {val});
  h += "</div>";
  if (in.result.is_object()) {
    h += "<p>Stopped: <b>" + esc(in.result.value("stop_reason", std::string("?"))) + "</b>";
    if (!in.result["best_epoch"].is_null())
      h += "; best epoch " + std::to_string(in.result["best_epoch"].get<int>() + 1) + " (score " + num(in.result["best_score"].get<double>()) + ")";
    h += ".</p>";
  }

  if (in.evaluation.is_object() && in.evaluation.contains("perplexity")) {
    const auto &ev = in.evaluation;
    h += "<h2>Test set: perplexity " + num(ev["perplexity"].get<double>()) + " (loss " + num(ev["loss"].get<double>()) +
         " per token), next-token accuracy " + num(ev["accuracy"].get<double>()) + " on " +
         std::to_string(ev["examples"].get<int64_t>()) + " examples (" + std::to_string(ev["labels"].get<int64_t>()) +
         " tokens)</h2>";
  } else if (in.evaluation.is_object() && in.evaluation.contains("confusion_matrix")) {
    const auto &ev = in.evaluation;
    h += "<h2>Test set: accuracy " + num(ev["accuracy"].get<double>()) + " on " + std::to_string(ev["examples"].get<int64_t>()) + " examples</h2>";
    h += "<div class='charts'>" + confusion_svg(ev["confusion_matrix"], in.class_names);
    h += "<table><tr><th class='l'>class</th><th>precision</th><th>recall</th><th>F1</th><th>support</th></tr>";
    for (auto &c : ev["per_class"]) {
      size_t k = c["class"].get<size_t>();
      std::string name = k < in.class_names.size() ? in.class_names[k] : std::to_string(k);
      h += "<tr><td class='l'>" + esc(name) + "</td><td>" + num(c["precision"].get<double>()) + "</td><td>" +
           num(c["recall"].get<double>()) + "</td><td>" + num(c["f1"].get<double>()) + "</td><td>" +
           std::to_string(c["support"].get<int64_t>()) + "</td></tr>";
    }
    for (const char *avg : {"macro_avg", "weighted_avg"}) {
      h += "<tr><th class='l'>" + std::string(avg) + "</th><td>" + num(ev[avg]["precision"].get<double>()) + "</td><td>" +
           num(ev[avg]["recall"].get<double>()) + "</td><td>" + num(ev[avg]["f1"].get<double>()) + "</td><td></td></tr>";
    }
    h += "</table></div>";
  } else if (in.evaluation.is_object()) {
    h += "<h2>Test set</h2><p>MSE " + num(in.evaluation["mse"].get<double>()) + ", MAE " + num(in.evaluation["mae"].get<double>()) +
         ", R&sup2; " + num(in.evaluation.value("r2", NAN)) + "</p>";
  }

  if (in.summary.is_object()) {
    h += "<h2>Model</h2><table><tr><th class='l'>layer</th><th class='l'>type</th><th class='l'>inputs</th>"
         "<th>output shape</th><th>parameters</th><th class='l'>forward ops</th><th class='l'>backward ops</th></tr>";
    auto ops_text = [](const nlohmann::json &ops) {
      std::string s;
      if (!ops.is_object()) return s;
      for (auto it = ops.begin(); it != ops.end(); ++it) {
        std::string backends;
        for (auto &b : it.value()) backends += (backends.empty() ? "" : "+") + b.get<std::string>();
        s += (s.empty() ? "" : ", ") + it.key() + " (" + backends + ")";
      }
      return s;
    };
    for (auto &l : in.summary["layers"]) {
      std::string inputs;
      for (auto &i : l["inputs"]) inputs += (inputs.empty() ? "" : ", ") + i.get<std::string>();
      h += "<tr><td class='l'>" + esc(l["name"].get<std::string>()) + "</td><td class='l'>" + esc(l["type"].get<std::string>()) +
           "</td><td class='l'>" + esc(inputs) + "</td><td>" + esc(l["output_shape"].dump()) + "</td><td>" +
           std::to_string(l["param_count"].get<int64_t>()) + "</td><td class='l'>" + esc(ops_text(l["ops"]["forward"])) +
           "</td><td class='l'>" + esc(ops_text(l["ops"].value("backward", nlohmann::json::object()))) + "</td></tr>";
    }
    h += "<tr><th class='l' colspan='4'>total</th><th>" + std::to_string(in.summary["total_params"].get<int64_t>()) +
         "</th><th colspan='2'></th></tr></table>";
  }
  return h + "</body></html>\n";
}

void write_text_file(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !(out << text) || !out.flush()) throw std::runtime_error("cannot write " + path);
}

}  // namespace nnrt_cli
