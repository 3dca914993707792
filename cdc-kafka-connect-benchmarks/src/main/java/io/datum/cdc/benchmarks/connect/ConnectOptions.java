package io.datum.cdc.benchmarks.connect;

import io.datum.cdc.benchmarks.e2e.Workload;
import java.util.Arrays;
import java.util.List;

/** The Connect benchmark's command-line options. */
final class ConnectOptions {
  List<Workload> workloads = List.of(Workload.A, Workload.B, Workload.C);
  List<Setup> setups = List.of(Setup.values());
  int runs = 3;
  double scale = 1.0;

  /** The scale of the untimed warm-up round (workload B, every setup); 0: none. */
  double warmupScale = 0.02;

  String out;
  long timeoutSeconds = 900;

  static final String USAGE =
      "ConnectHarness [--workloads a,b,c] [--setups datum,datum_eos,debezium,debezium_eos]"
          + " [--runs 3] [--scale 1.0] [--warmup-scale 0.02] [--out results.json]"
          + " [--timeout 900]";

  static ConnectOptions parse(String[] args) {
    ConnectOptions o = new ConnectOptions();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      String v = i + 1 < args.length ? args[i + 1] : null;
      switch (a) {
        case "--workloads" -> o.workloads = Arrays.stream(v.split(",")).map(Workload::of).toList();
        case "--setups" -> o.setups = Arrays.stream(v.split(",")).map(Setup::of).toList();
        case "--runs" -> o.runs = Integer.parseInt(v);
        case "--scale" -> o.scale = Double.parseDouble(v);
        case "--warmup-scale" -> o.warmupScale = Double.parseDouble(v);
        case "--out" -> o.out = v;
        case "--timeout" -> o.timeoutSeconds = Long.parseLong(v);
        case "-h", "--help" -> {
          System.out.println(USAGE);
          System.exit(0);
        }
        default -> throw new IllegalArgumentException("unknown option " + a + "; " + USAGE);
      }
      i++;
    }
    return o;
  }
}
