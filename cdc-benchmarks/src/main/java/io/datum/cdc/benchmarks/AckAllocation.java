package io.datum.cdc.benchmarks;

import com.sun.management.ThreadMXBean;
import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.LongAdder;

/**
 * Measures the bytes a thread allocates inside the measured part of a benchmark invocation only.
 *
 * <p>JMH's {@code -prof gc} divides everything allocated during an iteration, including
 * {@code @Setup(Level.Invocation)} and {@code @TearDown(Level.Invocation)}, by the operations. The
 * coordinator benchmarks register each batch's transactions (and Kafka Connect's submit each
 * batch's records) in such a setup, so there {@code gc.alloc.rate.norm} is the cost of the whole
 * cycle (register or submit, then acknowledge) per acknowledgement. A {@link Window} opened at the
 * end of the setup and closed at the start of the teardown counts what the acknowledgements
 * themselves allocate, from the thread's own allocation counter ({@code
 * getCurrentThreadAllocatedBytes}: exact, including the current TLAB); {@link
 * AckAllocationProfiler} reports it as {@code ack.alloc.norm}.
 */
public final class AckAllocation {

  private static final ThreadMXBean THREADS = (ThreadMXBean) ManagementFactory.getThreadMXBean();

  static final LongAdder BYTES = new LongAdder();
  static final LongAdder OPERATIONS = new LongAdder();

  /** What an empty window counts (the reading itself), subtracted from every window. */
  private static final long OVERHEAD = calibrate();

  private AckAllocation() {}

  private static long calibrate() {
    long min = Long.MAX_VALUE;
    for (int i = 0; i < 1_000; i++) {
      long start = THREADS.getCurrentThreadAllocatedBytes();
      long end = THREADS.getCurrentThreadAllocatedBytes();
      min = Math.min(min, end - start);
    }
    return Math.max(0, min);
  }

  /** One thread's measurement window; not thread-safe, keep one per thread. */
  public static final class Window {
    private long start = -1;

    /** Opens the window: call as the last statement of the invocation's setup. */
    public void open() {
      start = THREADS.getCurrentThreadAllocatedBytes();
    }

    /**
     * Closes the window: call as the first statement of the invocation's teardown.
     *
     * @param operations the operations the invocation performed
     */
    public void close(int operations) {
      long end = THREADS.getCurrentThreadAllocatedBytes();
      if (start < 0) {
        return;
      }
      BYTES.add(Math.max(0, end - start - OVERHEAD));
      OPERATIONS.add(operations);
      start = -1;
    }
  }
}
