package io.datum.cdc.benchmarks.connect;

import io.datum.cdc.benchmarks.e2e.Workload;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The Markdown table of the medians (and spread) of the runs, and the aims. */
final class Summary {
  private Summary() {}

  static String table(ConnectOptions o, List<Map<String, Object>> results) {
    StringBuilder b = new StringBuilder();
    b.append(
        String.format(
            Locale.ROOT,
            "scale %s, %d runs, %d CPUs, heap %d MB%n%n",
            o.scale,
            o.runs,
            Runtime.getRuntime().availableProcessors(),
            Runtime.getRuntime().maxMemory() >> 20));
    b.append(
        "| workload | setup | changes | changes/s median | min | max | s median | CPU s (process) |"
            + " source | task | producer | consumer | broker | other | jvm (GC, JIT) | walsender |"
            + " machine | failed runs |\n");
    b.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (Workload w : o.workloads) {
      for (Setup s : o.setups) {
        List<Map<String, Object>> ok = new ArrayList<>();
        int failed = 0;
        for (Map<String, Object> r : results) {
          if (r.get("workload").equals(w.name().toLowerCase(Locale.ROOT))
              && r.get("setup").equals(s.label)) {
            if (r.containsKey("error")) {
              failed++;
            } else {
              ok.add(r);
            }
          }
        }
        if (ok.isEmpty()) {
          b.append(
              String.format(
                  Locale.ROOT,
                  "| %s | %s | | | | | | | | | | | | | | | | %d |%n",
                  w.name(),
                  s.label,
                  failed));
          continue;
        }
        b.append(
            String.format(
                Locale.ROOT,
                "| %s | %s | %,d | %,.0f | %,.0f | %,.0f | %.2f | %.1f | %.1f | %.1f | %.1f | %.1f"
                    + " | %.1f | %.1f | %.1f | %.1f | %.1f | %d |%n",
                w.name(),
                s.label,
                ((Number) ok.get(0).get("expectedEvents")).longValue(),
                median(ok, "changesPerSecond"),
                min(ok, "changesPerSecond"),
                max(ok, "changesPerSecond"),
                median(ok, "seconds"),
                median(ok, "cpu.process"),
                median(ok, "cpu.source"),
                median(ok, "cpu.task"),
                median(ok, "cpu.producer"),
                median(ok, "cpu.consumer"),
                median(ok, "cpu.broker"),
                median(ok, "cpu.other"),
                median(ok, "cpu.jvm"),
                median(ok, "cpu.walsender"),
                median(ok, "cpu.machine"),
                failed));
      }
    }
    b.append('\n');
    for (Workload w : o.workloads) {
      double datum = median(of(results, w, Setup.DATUM), "changesPerSecond");
      double eos = median(of(results, w, Setup.DATUM_EOS), "changesPerSecond");
      double debezium = median(of(results, w, Setup.DEBEZIUM), "changesPerSecond");
      b.append(
          String.format(
              Locale.ROOT,
              "%s: datum / Debezium %.2fx (aim 3x); exactly-once costs datum %.0f%% (aim < 30%%)%n",
              w.name(),
              datum / debezium,
              (1 - eos / datum) * 100));
    }
    return b.toString();
  }

  private static List<Map<String, Object>> of(
      List<Map<String, Object>> results, Workload w, Setup s) {
    return results.stream()
        .filter(r -> r.get("workload").equals(w.name().toLowerCase(Locale.ROOT)))
        .filter(r -> r.get("setup").equals(s.label) && !r.containsKey("error"))
        .toList();
  }

  private static double[] values(List<Map<String, Object>> rs, String k) {
    return rs.stream()
        .map(r -> r.get(k))
        .filter(v -> v instanceof Number)
        .mapToDouble(v -> ((Number) v).doubleValue())
        .sorted()
        .toArray();
  }

  static double median(List<Map<String, Object>> rs, String k) {
    double[] v = values(rs, k);
    if (v.length == 0) {
      return Double.NaN;
    }
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }

  private static double min(List<Map<String, Object>> rs, String k) {
    double[] v = values(rs, k);
    return v.length == 0 ? Double.NaN : v[0];
  }

  private static double max(List<Map<String, Object>> rs, String k) {
    double[] v = values(rs, k);
    return v.length == 0 ? Double.NaN : v[v.length - 1];
  }
}
