// `tiresias profile`: what the placement speed model thinks of a model (skew, sensitivity,
// predicted slowdown per placement shape), and its calibration against measured step times
// (`--calibrate ../shared/profiles/pollux`).
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/flags.h"
#include "common/strings.h"
#include "sim/calibration.h"
#include "sim/link_speed_model.h"
#include "trace/trace_reader.h"

namespace tiresias {
namespace {

// A placement string like Pollux's: GPUs per node ("4", "22", "1111"), or "16x1" when long.
std::string ShapeName(int gpus, int nodes) {
  if (nodes > 8) return fmt::format("{}x{}", nodes, gpus / nodes);
  std::string s;
  for (int i = 0; i < nodes; ++i) s += std::to_string(gpus / nodes + (i < gpus % nodes));
  return s;
}

int ShowModel(const std::string& name, const std::string& cluster, const std::string& link_bw,
              const std::string& profiles, const std::string& compute_times, double packlimit) {
  auto bw = ParseLinkBandwidths(link_bw);
  auto topo = ResolveCluster(cluster);
  if (!bw.ok() || !topo.ok()) {
    std::cerr << "error: " << (bw.ok() ? topo.status() : bw.status()).message() << "\n";
    return 2;
  }
  auto model = LoadLinkSpeedModel(profiles, compute_times, *bw, CommMode::kParameterServer);
  if (!model.ok()) {
    std::cerr << "error: " << model.status().message() << "\n";
    return 2;
  }
  const ModelProfile* p = (*model)->catalog().Find(name);
  if (!p) {
    std::cerr << fmt::format("error: no profile for model '{}'; known: {}\n", name,
                             Join((*model)->catalog().names(), ", "));
    return 2;
  }
  double largest = p->skew * p->total_mb;
  std::cout << fmt::format(
      "model {}: {} gradient tensors, {:.1f} MB, largest {:.1f} MB\n"
      "skew {:.3f} (largest / all): {} at PACKLIMIT {}\n"
      "compute {:.0f} ms per iteration{}\n"
      "cluster {}, links {} GB/s\n\n",
      name, p->tensors_mb.size(), p->total_mb, largest, p->skew,
      p->skew > packlimit ? "placement-sensitive, consolidated by `tiresias` placement"
                          : "insensitive, takes any GPUs",
      packlimit, (*model)->ComputeMs(*p), p->compute_ms > 0 ? "" : " (default: no measurement)",
      topo->str(), ToString(*bw));
  // The same data under ring all-reduce, for the second pair of columns.
  LinkSpeedModel ring((*model)->catalog(), *bw, 200, CommMode::kAllReduce);
  std::cout << fmt::format("{:>5} {:>10} {:>6} {:>9} {:>13} | {:^19} | {:^19}\n", "", "", "", "",
                           "", "ps", "allreduce");
  std::cout << fmt::format("{:>5} {:>10} {:>6} {:>9} {:>13} | {:>9} {:>9} | {:>9} {:>9}\n", "GPUs",
                           "placement", "nodes", "switches", "slowest link", "iter (ms)",
                           "slowdown", "iter (ms)", "slowdown");
  const int gpn = topo->gpus_per_node();
  for (int gpus = 2; gpus <= std::min(64, topo->total_gpus()); gpus *= 2) {
    PlacementShape packed = PackedShape(gpus, *topo);
    auto row = [&](const PlacementShape& s) {
      std::cout << fmt::format(
          "{:>5} {:>10} {:>6} {:>9} {:>13} | {:>9.1f} {:>9.3f} | {:>9.1f} {:>9.3f}\n", gpus,
          ShapeName(gpus, s.nodes), s.nodes, s.switches, ToString(s.slowest()),
          (*model)->IterationMsOf(*p, s), 1.0 / (*model)->RateOf(name, s, *topo),
          ring.IterationMsOf(*p, s), 1.0 / ring.RateOf(name, s, *topo));
    };
    // Packed, then halving the GPUs per node down to one per node under one switch, then
    // the most spread shape across two switches.
    int nodes = packed.nodes;
    for (; nodes <= gpus && nodes <= topo->num_nodes(); nodes *= 2) {
      if ((gpus + nodes - 1) / nodes > gpn) continue;
      row({gpus, nodes, (nodes + topo->nodes_per_switch() - 1) / topo->nodes_per_switch()});
    }
    int most = std::min(gpus, topo->num_nodes());
    if (topo->switches() > 1 && most >= 2 &&
        (most + topo->nodes_per_switch() - 1) / topo->nodes_per_switch() < 2) {
      row({gpus, most, 2});
    }
  }
  std::cout << "\nslowdown = iteration time / packed iteration time (the trace duration is the "
               "packed time, so at least 1)\nps: one parameter server per node, tensors whole (the "
               "simulator's default, --comm ps); allreduce: ring (--comm allreduce)\n";
  return 0;
}

int RunCalibration(const std::string& dir) {
  auto profiles = ReadStepProfiles(dir);
  if (!profiles.ok()) {
    std::cerr << "error: " << profiles.status().message() << "\n";
    return 2;
  }
  auto cal = Calibrate(*profiles);
  if (!cal.ok()) {
    std::cerr << "error: " << cal.status().message() << "\n";
    return 2;
  }
  std::cout << fmt::format(
      "calibration on {} ({} models)\n"
      "model: step = compute + V x 2(n-1)/n x (1 within a node, R across nodes)\n"
      "fitted R = intra / inter-node bandwidth = {:.2f}  (with intra=10 GB/s: inter-node "
      "{:.2f} GB/s)\n\n",
      dir, cal->models.size(), cal->ratio, 10.0 / cal->ratio);
  std::cout << fmt::format("{:<12} {:>10} {:>5} {:>10} {:>10} {:>8}\n", "model", "placement",
                           "GPUs", "measured", "predicted", "error");
  for (const auto& m : cal->models) {
    for (const auto& p : m.placements) {
      std::cout << fmt::format("{:<12} {:>10} {:>5} {:>10.3f} {:>10.3f} {:>7.1f}%\n", m.model,
                               p.placement, p.gpus, p.measured, p.predicted, 100 * p.mean_error);
    }
  }
  std::cout << fmt::format("\n{:<12} {:>8} {:>9} {:>11} {:>10} {:>12}\n", "model", "V (ms)",
                           "own R", "mean error", "max error", "noise floor");
  for (const auto& m : cal->models) {
    std::cout << fmt::format("{:<12} {:>8.1f} {:>9.2f} {:>10.1f}% {:>9.1f}% {:>11.1f}%\n", m.model,
                             1000 * m.volume_s, m.own_ratio, 100 * m.mean_error, 100 * m.max_error,
                             100 * m.noise_floor);
  }
  std::cout << fmt::format(
      "all {} samples: mean error {:.1f}%, p90 {:.1f}%, max {:.1f}%; noise floor {:.1f}%\n"
      "(slowdown = step time / one-node step time, 2-4 GPUs spanning nodes, per batch size;\n"
      " noise floor = error of the median of each (model, batch size, GPUs) group)\n",
      cal->samples, 100 * cal->mean_error, 100 * cal->p90_error, 100 * cal->max_error,
      100 * cal->noise_floor);
  return 0;
}

}  // namespace

void AddProfileCommands(CLI::App& app, int& rc) {
  static std::string model, cluster = "2x16x8", link_bw, calibrate,
                            profiles = DefaultProfilesPath(),
                            compute_times = DefaultComputeTimesPath();
  static double packlimit = 0.5;
  auto* cmd = app.add_subcommand(
      "profile", "a model's skew, sensitivity and predicted slowdown per placement; calibration");
  cmd->add_option("--model", model, "model name, e.g. vgg16");
  cmd->add_option("--calibrate", calibrate,
                  "fit the speed model to measured step times, e.g. ../shared/profiles/pollux");
  cmd->add_option("--cluster", cluster, "SWITCHESxNODESxGPUS or a cluster spec CSV")
      ->capture_default_str();
  cmd->add_option("--link-bw", link_bw,
                  "link bandwidths in GB/s: intra=,inter-node=,inter-switch=");
  cmd->add_option("--profiles", profiles, "model tensor sizes")->capture_default_str();
  cmd->add_option("--compute-times", compute_times, "trace with 1-GPU iteration times")
      ->capture_default_str();
  cmd->add_option("--packlimit", packlimit, "PACKLIMIT for the sensitivity verdict")
      ->capture_default_str()
      ->check(NumberIn(0, 1));
  cmd->callback([&rc] {
    if (model.empty() == calibrate.empty()) {
      std::cerr << "error: give exactly one of --model NAME or --calibrate DIR\n";
      rc = 2;
      return;
    }
    rc = calibrate.empty() ? ShowModel(model, cluster, link_bw, profiles, compute_times, packlimit)
                           : RunCalibration(calibrate);
  });
}

}  // namespace tiresias
