package io.datum.cdc.benchmarks.e2e;

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

/** The JVM consumers (datum-cdc, Debezium Engine): each in a child JVM of its own. */
final class JvmConsumer {

  private JvmConsumer() {}

  /** Runs a consumer class in a child JVM and reads its E2E-RESULT line into {@code r}. */
  static void run(
      HarnessOptions o, Result r, long expected, String classPathPrefix, List<String> mainAndArgs)
      throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(o.childJvmArgs);
    cmd.add("-cp");
    cmd.add(classPathPrefix + ChildJvm.classPath());
    cmd.addAll(mainAndArgs.stream().map(a -> a.equals("-") ? "" : a).toList());
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
    long events = Long.parseLong(kv.get("events"));
    double seconds = Long.parseLong(kv.get("firstToLastNanos")) / 1e9;
    r.put("events", events)
        .put("complete", events == expected)
        .put("seconds", seconds)
        .put("eventsPerSecond", events / seconds)
        .put("launchToFirstSeconds", (resultAt - launched) / 1e9 - seconds)
        .put("launchToLastSeconds", (resultAt - launched) / 1e9)
        .put("peakHeapMB", Long.parseLong(kv.get("peakHeapBytes")) / 1048576.0)
        .put("cpuSeconds", Long.parseLong(kv.get("cpuNanos")) / 1e9)
        .put("cpuStreamingSeconds", Long.parseLong(kv.get("cpuStreamingNanos")) / 1e9)
        .put("valueHash", kv.get("valueHash"))
        .put("busiestThreadsCpuSeconds", kv.get("busiestThreadsCpuS"));
  }

  /**
   * The Kafka 4.3 jars Debezium 3.6.1 is built against, for the front of its child's class path.
   */
  static String debeziumKafkaClassPath(HarnessOptions o) throws Exception {
    return ConsumerCommands.debeziumKafkaClassPath(o.debeziumKafkaDir);
  }
}
