package io.datum.cdc.benchmarks.connect;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The CPU time of this JVM's threads over an interval, from {@link ThreadMXBean}: read at both ends
 * (a thread that ends before the second reading is missed; the connectors' threads live until the
 * connector is deleted, after the second reading), grouped by what the thread does in the
 * benchmark, plus the whole process's CPU time.
 */
final class ThreadCpu {
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /** The name prefixes of the KRaft broker's threads (network, requests, transactions, log). */
  private static final String[] BROKER_THREADS = {
    "data-plane-kafka",
    "kafka-",
    "TxnMarkerSenderThread",
    "AddPartitionsToTxnSenderThread",
    "ExpirationReaper",
    "raft-",
    "quorum-controller",
    "broker-",
    "controller-",
    "group-coordinator",
    "share-coordinator",
    "transaction-",
    "LogDirFailureHandler",
    "ReplicaFetcherThread",
    "metadata-",
    "event-handler",
    "executor-"
  };

  private final Map<Long, Long> nanos = new HashMap<>();
  private final Map<Long, String> names = new HashMap<>();
  private final long processNanos;
  private final long machineBusyTicks;

  private ThreadCpu() {
    for (ThreadInfo t : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
      if (t != null) {
        long cpu = THREADS.getThreadCpuTime(t.getThreadId());
        if (cpu >= 0) {
          nanos.put(t.getThreadId(), cpu);
          names.put(t.getThreadId(), t.getThreadName());
        }
      }
    }
    processNanos = processCpuNanos();
    machineBusyTicks = machineBusyTicks();
  }

  /** Reads every thread's CPU time now. */
  static ThreadCpu now() {
    return new ThreadCpu();
  }

  /**
   * Returns the CPU seconds spent since {@code earlier}, per group: {@code source} (the connector's
   * own threads: datum-cdc's replication and handler threads, Debezium's change event source
   * coordinator), {@code task} (the worker's task thread: poll, the converters, the producer's
   * send), {@code producer} (the task producer's network thread), {@code consumer} (the benchmark's
   * consumer), {@code broker} (the broker's network, request handler and transaction threads),
   * {@code other} (every other thread ThreadMXBean sees: Connect's herder and offset threads, the
   * samplers), {@code jvm} (what the process spent beyond its visible threads: GC and JIT compiler
   * threads), {@code process} (all of them) and {@code machine} (every process).
   *
   * @param earlier the reading at the start
   * @param connector the connector's name
   * @param consumerThread the consumer thread's name
   */
  Map<String, Double> since(ThreadCpu earlier, String connector, String consumerThread) {
    Map<String, Double> out = new LinkedHashMap<>();
    for (String g : new String[] {"source", "task", "producer", "consumer", "broker", "other"}) {
      out.put(g, 0.0);
    }
    double threads = 0;
    for (Map.Entry<Long, Long> e : nanos.entrySet()) {
      long before = earlier.nanos.getOrDefault(e.getKey(), 0L);
      double seconds = (e.getValue() - before) / 1e9;
      threads += seconds;
      String group = group(names.get(e.getKey()), connector, consumerThread);
      out.merge(group, seconds, Double::sum);
    }
    double process = (processNanos - earlier.processNanos) / 1e9;
    // GC and JIT threads are not visible to ThreadMXBean: the rest of the process's time
    out.put("jvm", Math.max(0, process - threads));
    out.put("process", process);
    // every process on the machine (Linux /proc/stat, 100 ticks a second): with this process and
    // PostgreSQL's walsender, shows what other work shared the 2 cores
    out.put("machine", (machineBusyTicks - earlier.machineBusyTicks) / 100.0);
    return out;
  }

  /**
   * Returns the busiest threads since {@code earlier}, name to CPU seconds, at most {@code n}.
   *
   * @param earlier the reading at the start
   * @param n how many
   */
  Map<String, Double> top(ThreadCpu earlier, int n) {
    Map<String, Double> byName = new HashMap<>();
    for (Map.Entry<Long, Long> e : nanos.entrySet()) {
      double seconds = (e.getValue() - earlier.nanos.getOrDefault(e.getKey(), 0L)) / 1e9;
      byName.merge(names.get(e.getKey()), seconds, Double::sum);
    }
    Map<String, Double> out = new LinkedHashMap<>();
    byName.entrySet().stream()
        .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
        .limit(n)
        .forEach(e -> out.put(e.getKey(), Math.round(e.getValue() * 100) / 100.0));
    return out;
  }

  private static String group(String name, String connector, String consumerThread) {
    if (name.equals(consumerThread)) {
      return "consumer";
    }
    if (name.startsWith("task-thread-" + connector + "-")) {
      return "task";
    }
    if (name.startsWith("kafka-producer-network-thread")
        && name.contains("connector-producer-" + connector + "-")) {
      return "producer";
    }
    if (name.startsWith("datum-cdc-") || name.startsWith("debezium-")) {
      return "source";
    }
    for (String broker : BROKER_THREADS) {
      if (name.startsWith(broker)) {
        return "broker";
      }
    }
    return "other";
  }

  private static long machineBusyTicks() {
    try {
      String[] f =
          java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/stat"))
              .get(0)
              .split("\\s+");
      long busy = 0;
      for (int i = 1; i < f.length && i <= 8; i++) {
        if (i != 4 && i != 5) { // idle and iowait
          busy += Long.parseLong(f[i]);
        }
      }
      return busy;
    } catch (java.io.IOException | RuntimeException e) {
      return 0;
    }
  }

  private static long processCpuNanos() {
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      return os.getProcessCpuTime();
    }
    return 0;
  }
}
