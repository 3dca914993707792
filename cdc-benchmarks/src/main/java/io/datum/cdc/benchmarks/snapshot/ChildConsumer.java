package io.datum.cdc.benchmarks.snapshot;

import io.datum.cdc.benchmarks.e2e.ConsumerProbe;
import io.datum.cdc.embedded.ChildJvm;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs a JVM consumer (datum-cdc, Debezium Engine) in a child JVM and reads its result line. */
final class ChildConsumer {
  private ChildConsumer() {}

  static void run(
      SnapshotOptions o,
      SnapshotResult r,
      List<String> jvmArgs,
      String classPathPrefix,
      List<String> mainAndArgs)
      throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jvmArgs);
    cmd.add("-cp");
    cmd.add(classPathPrefix + ChildJvm.classPath());
    cmd.addAll(mainAndArgs);
    long launched = System.nanoTime();
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    String line = null;
    long resultAt = 0;
    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      for (String l; (l = in.readLine()) != null; ) {
        if (l.startsWith(ConsumerProbe.RESULT_PREFIX)) {
          line = l.substring(ConsumerProbe.RESULT_PREFIX.length());
          resultAt = System.nanoTime();
        } else {
          System.err.println("  [child] " + l);
        }
      }
    }
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
    }
    if (line == null) {
      throw new IllegalStateException(
          "consumer " + mainAndArgs.get(0) + " reported no result (exit " + p.exitValue() + ")");
    }
    Map<String, String> kv = new LinkedHashMap<>();
    for (String part : line.split(" ")) {
      int eq = part.indexOf('=');
      kv.put(part.substring(0, eq), part.substring(eq + 1));
    }
    long rows = Long.parseLong(kv.get("events"));
    long expected = ((Number) r.values.get("expectedRows")).longValue();
    double seconds = (resultAt - launched) / 1e9;
    double firstToLast = Long.parseLong(kv.get("firstToLastNanos")) / 1e9;
    r.put("rows", rows)
        .put("complete", rows == expected)
        .put("seconds", seconds)
        .put("rowsPerSecond", rows / seconds)
        .put("firstToLastSeconds", firstToLast)
        .put("launchToFirstSeconds", seconds - firstToLast)
        .put("peakHeapMB", Long.parseLong(kv.get("peakHeapBytes")) / 1048576.0)
        .put("liveHeapMB", Long.parseLong(kv.get("liveHeapBytes")) / 1048576.0)
        .put("consumerCpuSeconds", Long.parseLong(kv.get("cpuNanos")) / 1e9)
        .put("consumerCpuSinceSourceSeconds", Long.parseLong(kv.get("cpuSinceProbeNanos")) / 1e9)
        .put("valueHash", kv.get("valueHash"))
        .put("busiestThreadsCpuSeconds", kv.get("busiestThreadsCpuS"));
  }

  /**
   * The Kafka 4.3 jars Debezium 3.6.1 is built against, for the front of its child's class path.
   */
  static String debeziumKafkaClassPath(SnapshotOptions o) throws Exception {
    return io.datum.cdc.benchmarks.e2e.ConsumerCommands.debeziumKafkaClassPath(o.debeziumKafkaDir);
  }
}
