package io.datum.cdc.benchmarks.snapshot;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** One measurement of the snapshot harness: named values; and the JSON file and table of all. */
final class SnapshotResult {
  private static final ObjectMapper JSON = new ObjectMapper();

  final Map<String, Object> values = new LinkedHashMap<>();

  SnapshotResult put(String k, Object v) {
    values.put(k, v);
    return this;
  }

  double d(String k) {
    Object v = values.get(k);
    return v instanceof Number n ? n.doubleValue() : Double.NaN;
  }

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

  static void write(Path file, Map<String, Object> header, List<SnapshotResult> results)
      throws IOException {
    Map<String, Object> root = new LinkedHashMap<>(header);
    List<Map<String, Object>> rows = new ArrayList<>();
    for (SnapshotResult r : results) {
      rows.add(r.forJson());
    }
    root.put("results", rows);
    if (file.getParent() != null) {
      Files.createDirectories(file.getParent());
    }
    JSON.writerWithDefaultPrettyPrinter().writeValue(file.toFile(), root);
  }

  static String table(List<SnapshotResult> results) {
    StringBuilder b = new StringBuilder();
    b.append(
        "| scenario | consumer | p | run | rows | s | rows/s | s first to last | peak heap MB | live heap MB | consumer CPU s | of which after the source's start | server CPU s | busiest server process CPU s |\n");
    b.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (SnapshotResult r : results) {
      b.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %s | %s | %,d | %.2f | %,.0f | %s | %s | %s | %.2f | %s | %.2f | %.2f |%s%n",
              r.values.get("scenario"),
              r.values.get("consumer"),
              r.values.get("parallelism"),
              r.values.get("run"),
              r.values.get("rows") instanceof Number n ? n.longValue() : 0L,
              r.d("seconds"),
              r.d("rowsPerSecond"),
              na(r.d("firstToLastSeconds"), "%.2f"),
              na(r.d("peakHeapMB"), "%.0f"),
              na(r.d("liveHeapMB"), "%.0f"),
              r.d("consumerCpuSeconds"),
              na(r.d("consumerCpuSinceSourceSeconds"), "%.2f"),
              r.d("serverCpuSeconds"),
              r.d("busiestServerProcessCpuSeconds"),
              r.values.containsKey("error") ? " error: " + r.values.get("error") : ""));
    }
    return b.toString();
  }

  private static String na(double v, String format) {
    return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, format, v);
  }
}
