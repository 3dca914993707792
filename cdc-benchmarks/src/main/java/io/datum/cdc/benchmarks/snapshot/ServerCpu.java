package io.datum.cdc.benchmarks.snapshot;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The CPU time of the whole PostgreSQL server over an interval: the postmaster and all its children
 * (backends, walsenders, parallel workers, background processes), exactly, from {@code /proc}: at
 * both ends, the postmaster's own and reaped children's time ({@code utime + stime + cutime +
 * cstime}) plus every live child's. A thread also samples the live children every 100 ms to find
 * the busiest process started during the interval (an exiting process's last 100 ms can be missed
 * there, not in the total).
 */
final class ServerCpu extends Thread {
  private final long postmaster;
  private final Set<Long> before = new HashSet<>();
  private final Map<Long, Long> newProcesses = new HashMap<>();
  private volatile boolean running = true;
  private long startTicks;

  ServerCpu(Path dataDirectory) throws IOException {
    super("server-cpu-sampler");
    setDaemon(true);
    this.postmaster =
        Long.parseLong(Files.readAllLines(dataDirectory.resolve("postmaster.pid")).get(0).trim());
  }

  /** Takes the starting reading and starts sampling. */
  void begin() {
    List<ProcStat> children = children();
    for (ProcStat c : children) {
      before.add(c.pid);
    }
    startTicks = total(children);
    start();
  }

  @Override
  public void run() {
    while (running) {
      sample();
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private synchronized void sample() {
    for (ProcStat c : children()) {
      if (!before.contains(c.pid)) {
        newProcesses.merge(c.pid, c.self + c.children, Math::max);
      }
    }
  }

  /**
   * Stops sampling and takes the final reading.
   *
   * @return server CPU seconds, the busiest new process's CPU seconds, and the number of new
   *     processes seen
   */
  double[] end() throws InterruptedException {
    sample();
    running = false;
    join(2_000);
    // let the consumer's backends exit and be reaped, so their time is in the postmaster's cutime
    Thread.sleep(300);
    long endTicks = total(children());
    long busiest;
    int n;
    synchronized (this) {
      busiest = newProcesses.values().stream().mapToLong(Long::longValue).max().orElse(0);
      n = newProcesses.size();
    }
    return new double[] {(endTicks - startTicks) / ProcStat.CLK_TCK, busiest / ProcStat.CLK_TCK, n};
  }

  private long total(List<ProcStat> children) {
    ProcStat pm = ProcStat.of(postmaster);
    if (pm == null) {
      throw new IllegalStateException("the postmaster " + postmaster + " is gone");
    }
    long t = pm.self + pm.children;
    for (ProcStat c : children) {
      t += c.self + c.children;
    }
    return t;
  }

  private List<ProcStat> children() {
    List<ProcStat> out = new ArrayList<>();
    try (var dirs = Files.list(Path.of("/proc"))) {
      for (Path d : (Iterable<Path>) dirs::iterator) {
        String name = d.getFileName().toString();
        if (name.isEmpty() || !Character.isDigit(name.charAt(0))) {
          continue;
        }
        ProcStat s = ProcStat.of(Long.parseLong(name));
        if (s != null && s.ppid == postmaster) {
          out.add(s);
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    return out;
  }
}
