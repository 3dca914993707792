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
 * harness parses.
 */
final class ConsumerProbe {
  static final String RESULT_PREFIX = "E2E-RESULT ";

  private final long expected;
  private final AtomicLong events = new AtomicLong();
  private final AtomicLong peakHeap = new AtomicLong();
  private final CountDownLatch done = new CountDownLatch(1);
  private final Set<String> heapPools = new HashSet<>();
  private volatile long firstNanos;
  private volatile long lastNanos;
  private volatile long cpuAtFirstNanos;

  ConsumerProbe(long expected) {
    this.expected = expected;
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
              },
              null,
              null);
    }
  }

  /** One change event received and acknowledged; true when it was the last one expected. */
  boolean event() {
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

  long events() {
    return events.get();
  }

  void await(long timeoutSeconds) throws InterruptedException {
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
  void report() {
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
            + " peakHeapBytes="
            + peak
            + " busiestThreadsCpuS="
            + busiest);
    System.out.flush();
  }
}
