package io.datum.cdc.benchmarks.snapshot;

import java.util.Arrays;
import java.util.List;

/** The snapshot harness's command-line options. */
final class SnapshotOptions {
  static final List<String> ALL_CONSUMERS = List.of("copy", "datum", "datum_values", "debezium");
  static final List<String> ALL_SCENARIOS = List.of("one", "twenty");

  long rows = 5_000_000;
  List<String> scenarios = ALL_SCENARIOS;
  List<String> consumers = ALL_CONSUMERS;
  List<Integer> parallelism = List.of(1, 2, 4);
  int runs = 1;
  String out;
  List<String> datumJvmArgs =
      List.of("-Xms64m", "-Xmx256m", "-XX:+UseG1GC", "-XX:+ExitOnOutOfMemoryError");
  List<String> debeziumJvmArgs =
      List.of("-Xms64m", "-Xmx1g", "-XX:+UseG1GC", "-XX:+ExitOnOutOfMemoryError");
  long timeoutSeconds = 3600;
  String psql = "/usr/bin/psql";
  String debeziumKafkaDir;

  static final String USAGE =
      "SnapshotHarness [--rows 5000000] [--scenarios one,twenty] [--consumers copy,datum,debezium]"
          + " [--parallelism 1,2,4] [--runs 1] [--out snapshot.json]"
          + " [--datum-jvm-args \"-Xms64m -Xmx256m -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError\"]"
          + " [--debezium-jvm-args \"-Xms64m -Xmx1g -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError\"] [--timeout 3600]"
          + " [--psql /usr/bin/psql] [--debezium-kafka-dir cdc-benchmarks/target/debezium-kafka]";

  static SnapshotOptions parse(String[] args) {
    SnapshotOptions o = new SnapshotOptions();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("-h") || a.equals("--help")) {
        System.out.println(USAGE);
        System.exit(0);
      }
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException(a + " needs a value; " + USAGE);
      }
      String v = args[++i];
      switch (a) {
        case "--rows" -> o.rows = Long.parseLong(v.replace("_", ""));
        case "--scenarios" -> o.scenarios = list(v, ALL_SCENARIOS, "scenario");
        case "--consumers" -> o.consumers = list(v, ALL_CONSUMERS, "consumer");
        case "--parallelism" ->
            o.parallelism =
                Arrays.stream(v.split(",")).map(String::trim).map(Integer::valueOf).toList();
        case "--runs" -> o.runs = Integer.parseInt(v);
        case "--out" -> o.out = v;
        case "--datum-jvm-args" -> o.datumJvmArgs = Arrays.asList(v.trim().split("\\s+"));
        case "--debezium-jvm-args" -> o.debeziumJvmArgs = Arrays.asList(v.trim().split("\\s+"));
        case "--timeout" -> o.timeoutSeconds = Long.parseLong(v);
        case "--psql" -> o.psql = v;
        case "--debezium-kafka-dir" -> o.debeziumKafkaDir = v;
        default -> throw new IllegalArgumentException("unknown option " + a + "; " + USAGE);
      }
    }
    if (o.rows < 20) {
      throw new IllegalArgumentException("--rows must be at least 20");
    }
    for (int p : o.parallelism) {
      if (p < 1) {
        throw new IllegalArgumentException("--parallelism must be positive");
      }
    }
    return o;
  }

  private static List<String> list(String v, List<String> allowed, String what) {
    List<String> l = Arrays.stream(v.split(",")).map(String::trim).toList();
    for (String s : l) {
      if (!allowed.contains(s)) {
        throw new IllegalArgumentException(
            "unknown " + what + " " + s + " (one of " + allowed + ")");
      }
    }
    return l;
  }
}
