package io.datum.cdc.benchmarks.coordinator;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.benchmarks.AckAllocation;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.connect.runtime.SubmittedRecordsDriver;
import org.apache.kafka.connect.source.SourceRecord;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Many application threads acknowledging concurrently into one slot's coordinator, against
 * Kafka Connect's {@code SubmittedRecords} shared the same way. Score: acknowledgements per second,
 * all threads together ({@code -t} changes the thread count, 4 by default).
 *
 * <p>Each thread, per invocation, takes the next {@link AckWorkload#BATCH} events of the slot: it
 * registers their transactions with the next LSNs (or submits their records) under a lock that
 * keeps registration in commit order, then acknowledges them in the workload's order. Batches of
 * different threads interleave, so a thread's acknowledgements often wait behind another's
 * unfinished batch, and whichever thread completes the oldest batch advances the watermark over
 * the others' finished ones. Every {@code drainEvery} acknowledgements a thread reads the
 * watermark (or calls {@code committableOffsets()}, under the lock that serialises it with {@code
 * submit}, as Connect's task thread does). The registration (submission) is in the invocation's
 * setup: not timed for that thread, but it holds the shared structure while the other threads
 * acknowledge, as the replication loop does. (No {@code scope=cycle} here: a batch's offsets
 * need the LSNs its registration takes, and must be built before the timed part, so the
 * registration cannot move into it without also timing other threads' setups.)
 *
 * <p>The coordinator's offsets are new objects for every batch (their LSNs must grow), built in
 * the setup, so {@code gc.alloc.rate.norm} includes them; {@code ack.alloc.norm} ({@code -prof
 * io.datum.cdc.benchmarks.AckAllocationProfiler}) counts only what the timed code allocates.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Threads(4)
public class CoordinatorConcurrentBenchmark {

  static final String SLOT = CoordinatorBenchmark.SLOT;

  /** One slot's coordinator shared by all threads. */
  @State(Scope.Benchmark)
  public static class SharedDatum {
    final Object registration = new Object();
    DatumCoordinatorDriver driver;
    /** End LSN of the last registered transaction; guarded by {@link #registration}. */
    long lastEnd;

    @Setup(Level.Trial)
    public void open() {
      driver = new DatumCoordinatorDriver(SLOT);
      lastEnd = 0;
    }

    @TearDown(Level.Trial)
    public void check() {
      synchronized (registration) {
        if (driver.watermark() != lastEnd) {
          throw new IllegalStateException(
              "watermark " + PgLsn.of(driver.watermark()) + " at the end, expected "
                  + PgLsn.of(lastEnd));
        }
      }
    }
  }

  /** One acknowledging thread of the coordinator benchmark. */
  @State(Scope.Thread)
  public static class DatumWorker {
    @Param({"inOrder_1"})
    public String workload;

    @Param({"1000"})
    public int drainEvery;

    AckWorkload w;
    final CdcOffset[] offsets = new CdcOffset[AckWorkload.BATCH];
    PgLsn[] txEnds;
    final AckAllocation.Window allocation = new AckAllocation.Window();

    @Setup(Level.Trial)
    public void build() {
      w = AckWorkload.parse(workload);
      AckWorkload.requireDrainInterval(drainEvery);
      txEnds = new PgLsn[w.transactions];
    }

    @Setup(Level.Invocation)
    public void registerBatch(SharedDatum shared) {
      synchronized (shared.registration) { // the next LSNs, registered in commit order
        shared.lastEnd = w.fill(SLOT, shared.lastEnd, txEnds, offsets);
        DatumCoordinatorDriver driver = shared.driver;
        int eventsPerTx = w.eventsPerTx;
        for (PgLsn end : txEnds) {
          driver.register(end, eventsPerTx);
        }
      }
      allocation.open();
    }

    @TearDown(Level.Invocation)
    public void closeWindow() {
      allocation.close(AckWorkload.BATCH);
    }
  }

  /** One SubmittedRecords shared by all threads, as one source partition of a Connect task. */
  @State(Scope.Benchmark)
  public static class SharedConnect {
    /** Serialises submit and committableOffsets, which Connect calls from the task thread only. */
    final Object task = new Object();
    SubmittedRecordsDriver driver;

    @Setup(Level.Trial)
    public void open() {
      driver = new SubmittedRecordsDriver();
    }
  }

  /** One acknowledging thread of the SubmittedRecords benchmark. */
  @State(Scope.Thread)
  public static class ConnectWorker {
    @Param({"inOrder_1"})
    public String workload;

    @Param({"1000"})
    public int drainEvery;

    AckWorkload w;
    SourceRecord[] records;
    SubmittedRecordsDriver.Acks acks;
    final AckAllocation.Window allocation = new AckAllocation.Window();

    @Setup(Level.Trial)
    public void build() {
      w = AckWorkload.parse(workload);
      AckWorkload.requireDrainInterval(drainEvery);
      records = CoordinatorBenchmark.newRecords(w);
      acks = new SubmittedRecordsDriver.Acks(AckWorkload.BATCH);
    }

    @Setup(Level.Invocation)
    public void submitBatch(SharedConnect shared) {
      synchronized (shared.task) {
        acks = shared.driver.submit(records, acks);
      }
      acks.arrange(w.ackOrder);
      allocation.open();
    }

    @TearDown(Level.Invocation)
    public void closeWindow() {
      allocation.close(AckWorkload.BATCH);
    }
  }

  /** Acknowledges one batch through the shared coordinator. */
  @Benchmark
  @OperationsPerInvocation(AckWorkload.BATCH)
  public int datumCoordinator(SharedDatum shared, DatumWorker s, Blackhole bh) {
    DatumCoordinatorDriver driver = shared.driver;
    CdcOffset[] offsets = s.offsets;
    int drainEvery = s.drainEvery;
    int untilDrain = drainEvery;
    int moved = 0;
    for (CdcOffset offset : offsets) {
      if (driver.acknowledge(offset)) {
        moved++;
      }
      if (--untilDrain == 0) {
        bh.consume(driver.watermark());
        untilDrain = drainEvery;
      }
    }
    return moved;
  }

  /** Acknowledges one batch through the shared SubmittedRecords. */
  @Benchmark
  @OperationsPerInvocation(AckWorkload.BATCH)
  public void connectSubmittedRecords(SharedConnect shared, ConnectWorker s, Blackhole bh) {
    SubmittedRecordsDriver driver = shared.driver;
    SubmittedRecordsDriver.Acks acks = s.acks;
    int n = acks.size();
    int drainEvery = s.drainEvery;
    int untilDrain = drainEvery;
    for (int i = 0; i < n; i++) {
      acks.ack(i);
      if (--untilDrain == 0) {
        synchronized (shared.task) {
          bh.consume(driver.committableOffsets());
        }
        untilDrain = drainEvery;
      }
    }
  }
}
