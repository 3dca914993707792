package io.datum.cdc.benchmarks.e2e;

import java.util.Arrays;
import java.util.List;

/** The harness's command-line options. */
final class HarnessOptions {
  List<Workload> workloads = List.of(Workload.A, Workload.B, Workload.C);
  List<String> consumers = List.of("datum", "debezium", "pg_recvlogical");
  static final List<String> ALL =
      List.of(
          "datum",
          "datum_values",
          "datum_metrics",
          "debezium",
          "pg_recvlogical",
          "pg_recvlogical_pipe",
          "pgcdc");
  int runs = 1;
  double scale = 1.0;
  String out;
  List<String> childJvmArgs = List.of("-Xms64m", "-Xmx4g", "-XX:+UseG1GC");
  long timeoutSeconds = 1800;
  String pgRecvlogical = "/usr/bin/pg_recvlogical";
  double idleSeconds = 3;
  String debeziumKafkaDir;
  String pgcdcJar = "cdc-cli/target/pgcdc.jar";

  static HarnessOptions parse(String[] args) {
    HarnessOptions o = new HarnessOptions();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      String v = i + 1 < args.length ? args[i + 1] : null;
      switch (a) {
        case "--workloads" -> o.workloads = Arrays.stream(v.split(",")).map(Workload::of).toList();
        case "--consumers" -> o.consumers = Arrays.stream(v.split(",")).map(String::trim).toList();
        case "--runs" -> o.runs = Integer.parseInt(v);
        case "--scale" -> o.scale = Double.parseDouble(v);
        case "--out" -> o.out = v;
        case "--child-jvm-args" -> o.childJvmArgs = Arrays.asList(v.trim().split("\\s+"));
        case "--timeout" -> o.timeoutSeconds = Long.parseLong(v);
        case "--pg-recvlogical" -> o.pgRecvlogical = v;
        case "--idle-seconds" -> o.idleSeconds = Double.parseDouble(v);
        case "--debezium-kafka-dir" -> o.debeziumKafkaDir = v;
        case "--pgcdc-jar" -> o.pgcdcJar = v;
        case "-h", "--help" -> {
          System.out.println(
              "EndToEndHarness [--workloads a,b,c] [--consumers datum,debezium,pg_recvlogical]"
                  + " [--runs N] [--scale 1.0] [--out results.json] [--child-jvm-args \"-Xmx4g\"]"
                  + " [--timeout 1800] [--pg-recvlogical /usr/bin/pg_recvlogical] [--idle-seconds 3]"
                  + " [--debezium-kafka-dir cdc-benchmarks/target/debezium-kafka]"
                  + " [--pgcdc-jar cdc-cli/target/pgcdc.jar]");
          System.exit(0);
        }
        default -> throw new IllegalArgumentException("unknown option " + a);
      }
      i++;
    }
    for (String c : o.consumers) {
      if (!ALL.contains(c)) {
        throw new IllegalArgumentException("unknown consumer " + c);
      }
    }
    return o;
  }
}
