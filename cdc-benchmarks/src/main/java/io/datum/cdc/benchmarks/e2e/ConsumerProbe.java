package io.datum.cdc.benchmarks.e2e;

import com.sun.management.GarbageCollectionNotificationInfo;
import com.sun.management.OperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.NotificationEmitter;
import javax.management.openmbean.CompositeData;

/**
 * What a consumer child JVM measures about itself: the time of its first and last event, its peak
 * heap occupancy (the largest heap use seen before any collection, and now), its process CPU time
 * and the CPU time of its busiest threads. {@link #report} prints one {@code E2E-RESULT} line the
 * harness parses. Public for the snapshot harness's consumers ({@code
 * io.datum.cdc.benchmarks.snapshot}), which measure themselves the same way.
 */
public final class ConsumerProbe {
  /** The prefix of the result line on standard output. */
  public static final String RESULT_PREFIX = "E2E-RESULT ";

  private final long expected;
  private final AtomicLong events = new AtomicLong();
  private final AtomicLong valueHash = new AtomicLong();
  private final AtomicLong peakHeap = new AtomicLong();
  private final AtomicLong peakLiveHeap = new AtomicLong();
  private final CountDownLatch done = new CountDownLatch(1);
  private final Set<String> heapPools = new HashSet<>();
  private volatile long firstNanos;
  private volatile long lastNanos;
  private volatile long cpuAtFirstNanos;
  private final long cpuAtCreationNanos;

  /**
   * A probe that counts events up to {@code expected}, and listens to the collector from now on.
   * Make it just before the consumer builds its source: the process CPU it reports as {@code
   * cpuSinceProbeNanos} counts from here (the JVM's own start-up and the harness's set-up left out,
   * as a service that embeds the consumer has paid them before).
   *
   * @param expected the number of events after which {@link #await} returns
   */
  public ConsumerProbe(long expected) {
    this.expected = expected;
    this.cpuAtCreationNanos = processCpuNanos();
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        heapPools.add(pool.getName());
      }
    }
    for (var gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      ((NotificationEmitter) gc)
          .addNotificationListener(
              (notification, handback) -> {
                if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(
                    notification.getType())) {
                  return;
                }
                var info =
                    GarbageCollectionNotificationInfo.from(
                        (CompositeData) notification.getUserData());
                long used = 0;
                for (Map.Entry<String, MemoryUsage> e :
                    info.getGcInfo().getMemoryUsageBeforeGc().entrySet()) {
                  if (heapPools.contains(e.getKey())) {
                    used += e.getValue().getUsed();
                  }
                }
                peakHeap.accumulateAndGet(used, Math::max);
                long live = 0;
                for (Map.Entry<String, MemoryUsage> e :
                    info.getGcInfo().getMemoryUsageAfterGc().entrySet()) {
                  if (heapPools.contains(e.getKey())) {
                    live += e.getValue().getUsed();
                  }
                }
                peakLiveHeap.accumulateAndGet(live, Math::max);
              },
              null,
              null);
    }
  }

  /**
   * One change event received and acknowledged.
   *
   * @return true when it was the last one expected
   */
  public boolean event() {
    long n = events.incrementAndGet();
    long now = System.nanoTime();
    if (n == 1) {
      firstNanos = now;
      cpuAtFirstNanos = processCpuNanos();
    }
    lastNanos = now;
    if (n == expected) {
      done.countDown();
      return true;
    }
    return false;
  }

  /**
   * Adds the hash of one event's values ({@link ValueReader}) to the reported sum, so that reading
   * them cannot be optimised away; the sum does not depend on the order of the calls.
   *
   * @param hash the event's hash
   */
  public void values(long hash) {
    valueHash.addAndGet(hash);
  }

  /**
   * The events counted so far.
   *
   * @return the count
   */
  public long events() {
    return events.get();
  }

  /**
   * Waits for the expected number of events, or the timeout (then says so on standard error).
   *
   * @param timeoutSeconds how long to wait at most
   * @throws InterruptedException if interrupted while waiting
   */
  public void await(long timeoutSeconds) throws InterruptedException {
    if (!done.await(timeoutSeconds, TimeUnit.SECONDS)) {
      System.err.println(
          "timed out after "
              + timeoutSeconds
              + " s with "
              + events.get()
              + " of "
              + expected
              + " events");
    }
  }

  static long processCpuNanos() {
    return ((OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  /** Prints the result line; call after the last event, before shutting the consumer down. */
  public void report() {
    long cpu = processCpuNanos();
    long heapNow = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    long peak = Math.max(peakHeap.get(), heapNow);
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    List<String[]> top = new ArrayList<>();
    for (ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
      if (t == null) {
        continue;
      }
      long c = threads.getThreadCpuTime(t.getThreadId());
      top.add(new String[] {t.getThreadName(), Long.toString(c)});
    }
    top.sort(Comparator.comparingLong((String[] a) -> Long.parseLong(a[1])).reversed());
    StringBuilder busiest = new StringBuilder();
    for (int i = 0; i < Math.min(4, top.size()); i++) {
      busiest
          .append(i == 0 ? "" : ";")
          .append(top.get(i)[0].replace(' ', '_').replace(';', '_').replace('=', '_'))
          .append(':')
          .append(String.format("%.2f", Long.parseLong(top.get(i)[1]) / 1e9));
    }
    System.out.println(
        RESULT_PREFIX
            + "events="
            + events.get()
            + " firstToLastNanos="
            + (lastNanos - firstNanos)
            + " cpuNanos="
            + cpu
            + " cpuStreamingNanos="
            + (cpu - cpuAtFirstNanos)
            + " cpuSinceProbeNanos="
            + (cpu - cpuAtCreationNanos)
            + " peakHeapBytes="
            + peak
            + " liveHeapBytes="
            + peakLiveHeap.get()
            + " valueHash="
            + valueHash.get()
            + " busiestThreadsCpuS="
            + busiest);
    System.out.flush();
  }
}
