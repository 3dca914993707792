package io.datum.cdc.benchmarks.coordinator;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.PgLsn;
import io.datum.cdc.core.feedback.FeedbackCoordinator;
import io.datum.cdc.core.feedback.SourceCheckpointHandle;
import io.datum.cdc.spi.CheckpointCodec;
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
 * What a checkpoint costs when acknowledgements run far ahead of the watermark: a worker lags on
 * the oldest transaction while {@code lead} later transactions (one event each) are acknowledged.
 * With per-event durability every acknowledgement takes a snapshot of the coordinator and stores
 * it; before checkpoints kept runs of fully acknowledged transactions, a snapshot listed each of
 * the {@code lead} transactions (24 bytes each encoded), so each acknowledgement cost O(lead).
 *
 * <p>{@code pattern}: {@code oneGap} acknowledges every transaction after the first; {@code
 * everyTenth} leaves every tenth one unacknowledged too, so the gaps grow with the lead (lead / 10
 * gaps): the checkpoint's size follows the gaps, not the lead.
 *
 * <ul>
 *   <li>{@code snapshotAndEncode}: {@code FeedbackCoordinator.checkpoint()} plus {@code
 *       CheckpointCodec.encode}, at a fixed lead (each iteration's teardown prints the encoded size
 *       and the entries);
 *   <li>{@code durableAcknowledge}: {@code CdcCheckpointHandle.acknowledge} of a newly registered
 *       transaction with per-event durability into {@code memory:} (record, snapshot, store), in
 *       batches of {@link #BATCH} after the lead was set up, so the lead grows by at most 1,000
 *       during a batch.
 * </ul>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms3g", "-Xmx3g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class CheckpointLeadBenchmark {

  static final String SLOT = "bench";
  static final int BATCH = 1_000;

  /** A coordinator holding the lead. */
  @State(Scope.Thread)
  public static class Lead {
    @Param({"1000", "100000", "1000000"})
    public int lead;

    @Param({"oneGap", "everyTenth"})
    public String pattern;

    FeedbackCoordinator coordinator;
    SourceCheckpointHandle handle;
    long nextEnd;
    int nextXid;

    @Setup(Level.Iteration)
    public void build() {
      coordinator = new FeedbackCoordinator(SLOT, null);
      handle =
          new SourceCheckpointHandle(
              coordinator, new MemoryCheckpointStore(), Runnable::run, e -> {}, () -> {}, true);
      nextEnd = AckWorkload.LSN_STEP;
      nextXid = 0;
      register(); // the lagging transaction, never acknowledged
      boolean everyTenth = pattern.equals("everyTenth");
      for (int t = 1; t <= lead; t++) {
        CdcOffset offset = register();
        if (!everyTenth || t % 10 != 0) {
          coordinator.record(offset);
        }
      }
    }

    /** Prints the checkpoint's size, encoded, and its entries (once per iteration). */
    @TearDown(Level.Iteration)
    public void size() {
      CdcCheckpoint checkpoint = coordinator.checkpoint();
      System.out.printf(
          "%nlead %d %s: checkpoint %d bytes, %d partial transactions, %d runs%n",
          lead,
          pattern,
          CheckpointCodec.encode(checkpoint).length,
          checkpoint.acknowledgedBeyond().size(),
          checkpoint.acknowledgedRuns().size());
    }

    CdcOffset register() {
      PgLsn end = PgLsn.of(nextEnd);
      nextEnd += AckWorkload.LSN_STEP;
      coordinator.register(end, 1);
      return new CdcOffset(SLOT, end, PgLsn.of(end.asLong() - 0x30), nextXid++, 0, 1);
    }
  }

  @Benchmark
  public int snapshotAndEncode(Lead s) {
    return CheckpointCodec.encode(s.coordinator.checkpoint()).length;
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void durableAcknowledge(Lead s) {
    for (int i = 0; i < BATCH; i++) {
      s.handle.acknowledge(s.register());
    }
  }
}
