package io.datum.cdc.benchmarks.coordinator;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.PgLsn;
import io.datum.cdc.core.feedback.FeedbackCoordinator;
import io.datum.cdc.core.feedback.SourceCheckpointHandle;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The acknowledgement path an application's handler pays with datum-cdc's default per-event
 * durability: {@code CdcCheckpointHandle.acknowledge(offset)} on one thread, which records the
 * acknowledgement, takes a snapshot of the coordinator (watermark plus the acknowledged ranges of
 * incomplete transactions) and stores it, here in a {@link MemoryCheckpointStore} so that the
 * store's own cost (an fsync for file:) does not hide the source's. Events are acknowledged in
 * order; {@code eventsPerTx} is the transaction size: with 1 every acknowledgement moves the
 * watermark, with 100,000 every snapshot carries the partly acknowledged transaction (one range,
 * since acknowledged checkpoints are ranges). Score: acknowledgements per second.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class DurableAckBenchmark {

  static final String SLOT = "bench";
  static final int BATCH = 100_000;

  /** A coordinator and handle for the trial, and one batch of registered transactions. */
  @State(Scope.Thread)
  public static class Handle {
    @Param({"1", "100", "100000"})
    public int eventsPerTx;

    FeedbackCoordinator coordinator;
    SourceCheckpointHandle handle;
    MemoryCheckpointStore store;
    CdcOffset[] offsets = new CdcOffset[BATCH];
    long lastEnd;

    @Setup(Level.Trial)
    public void build() {
      coordinator = new FeedbackCoordinator(SLOT, null);
      store = new MemoryCheckpointStore();
      handle =
          new SourceCheckpointHandle(coordinator, store, Runnable::run, e -> {}, () -> {}, true);
    }

    @Setup(Level.Invocation)
    public void registerBatch() {
      for (int t = 0; t < BATCH / eventsPerTx; t++) {
        lastEnd += AckWorkload.LSN_STEP;
        PgLsn end = PgLsn.of(lastEnd);
        coordinator.register(end, eventsPerTx);
        for (int i = 0; i < eventsPerTx; i++) {
          offsets[t * eventsPerTx + i] =
              new CdcOffset(SLOT, end, PgLsn.of(lastEnd - 1), t, i, eventsPerTx);
        }
      }
    }

    @TearDown(Level.Invocation)
    public void checkBatch() {
      if (!store.load(SLOT).orElseThrow().watermark().equals(PgLsn.of(lastEnd))) {
        throw new IllegalStateException(
            "stored watermark did not reach the batch's last transaction");
      }
    }
  }

  /** Acknowledges the batch event by event, each durably (stored) before the next. */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void acknowledgeEachEvent(Handle h) {
    SourceCheckpointHandle handle = h.handle;
    for (CdcOffset offset : h.offsets) {
      handle.acknowledge(offset);
    }
  }
}
