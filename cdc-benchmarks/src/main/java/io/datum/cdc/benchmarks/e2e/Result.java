package io.datum.cdc.benchmarks.e2e;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** One measurement: named values, and the table and JSON file of several. */
final class Result {
  private static final ObjectMapper JSON = new ObjectMapper();

  final Map<String, Object> values = new LinkedHashMap<>();

  Result put(String k, Object v) {
    values.put(k, v);
    return this;
  }

  double d(String k) {
    Object v = values.get(k);
    return v instanceof Number n ? n.doubleValue() : Double.NaN;
  }

  /** The values with NaN as null, for JSON. */
  Map<String, Object> forJson() {
    Map<String, Object> out = new LinkedHashMap<>();
    values.forEach((k, v) -> out.put(k, v instanceof Double d && d.isNaN() ? null : v));
    return out;
  }

  String json() {
    try {
      return JSON.writeValueAsString(forJson());
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  static void write(HarnessOptions o, List<Result> results) throws IOException {
    Map<String, Object> root = new LinkedHashMap<>();
    root.put("scale", o.scale);
    root.put("childJvmArgs", String.join(" ", o.childJvmArgs));
    root.put("cpus", Runtime.getRuntime().availableProcessors());
    List<Map<String, Object>> rows = new ArrayList<>();
    for (Result r : results) {
      rows.add(r.forJson());
    }
    root.put("results", rows);
    JSON.writerWithDefaultPrettyPrinter().writeValue(Path.of(o.out).toFile(), root);
  }

  static String table(HarnessOptions o, List<Result> results) {
    StringBuilder b = new StringBuilder();
    b.append("scale ")
        .append(o.scale)
        .append(", child JVM ")
        .append(String.join(" ", o.childJvmArgs))
        .append('\n');
    b.append(
        "| workload | consumer | run | events | s to first event | s (first to last) | events/s (first to last) | s (start to last) | events/s (start to last) | peak heap MB | CPU s (streaming) | CPU s (process) | CPU µs per event | streaming CPU µs per event | walsender CPU s | walsender µs per event | streaming / walsender |\n");
    b.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (Result r : results) {
      b.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %s | %,d | %.2f | %.2f | %,.0f | %.2f | %,.0f | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2fx |%n",
              r.values.get("workload"),
              r.values.get("consumer"),
              r.values.get("run"),
              ((Number) r.values.get("events")).longValue(),
              r.d("launchToFirstSeconds"),
              r.d("seconds"),
              r.d("eventsPerSecond"),
              r.d("launchToLastSeconds"),
              r.d("events") / r.d("launchToLastSeconds"),
              r.values.containsKey("peakHeapMB")
                  ? String.format(Locale.ROOT, "%.0f", r.d("peakHeapMB"))
                  : Double.isNaN(r.d("peakRssMB"))
                      ? "n/a"
                      : String.format(Locale.ROOT, "(RSS %.0f)", r.d("peakRssMB")),
              r.d("cpuStreamingSeconds"),
              r.d("cpuSeconds"),
              r.d("cpuSeconds") * 1e6 / r.d("events"),
              r.d("cpuStreamingSeconds") * 1e6 / r.d("events"),
              r.d("walsenderCpuSeconds"),
              r.d("walsenderCpuSeconds") * 1e6 / r.d("events"),
              r.d("cpuStreamingSeconds") / r.d("walsenderCpuSeconds")));
    }
    return b.toString();
  }
}
