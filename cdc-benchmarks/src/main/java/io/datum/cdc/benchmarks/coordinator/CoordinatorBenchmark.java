package io.datum.cdc.benchmarks.coordinator;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.benchmarks.AckAllocation;
import java.util.Map;
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
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Acknowledgement throughput of one thread: datum-cdc's feedback coordinator against Kafka
 * Connect's {@code SubmittedRecords} (the component Connect's source tasks use to commit only the
 * acknowledged prefix), on the same {@link AckWorkload}s in the same run. Score: acknowledgements
 * per second.
 *
 * <p>Each invocation acknowledges the next batch of {@link AckWorkload#BATCH} events, and every
 * {@code drainEvery} acknowledgements reads the committable position: the coordinator's watermark,
 * or Connect's {@code committableOffsets()} (which is where Connect removes the acknowledged
 * prefix). One coordinator (one {@code SubmittedRecords}) lives for the whole trial, in its steady
 * state: every batch is fully acknowledged and drained before the next. {@code scope} says what is
 * measured:
 *
 * <ul>
 *   <li>{@code ack}: only the acknowledgements and drains. The batch's transactions are registered
 *       (its records submitted) in the invocation's setup, which is not timed.
 *   <li>{@code cycle}: registration (submission) too, in commit order, then the acknowledgements:
 *       all the bookkeeping the source and the application pay per event. datum-cdc registers once
 *       per transaction, Connect submits once per record.
 * </ul>
 *
 * <p>The events themselves are built in the untimed setup: the coordinator's offsets anew for every
 * batch (their LSNs must grow), Connect's source records once per trial ({@code SubmittedRecords}
 * only keeps references to them). Each datum-cdc invocation's teardown checks that the watermark
 * reached the batch's last transaction.
 *
 * <p>Allocation: {@code -prof io.datum.cdc.benchmarks.AckAllocationProfiler} gives {@code
 * ack.alloc.norm}, what the timed code allocates per acknowledgement (exact, per thread). {@code
 * -prof gc} gives {@code gc.alloc.rate.norm}, everything allocated in the iteration per
 * acknowledgement, including the untimed setup: the new offsets (about 40 B per event plus 32 B per
 * transaction) and, with {@code scope=ack}, the registration or submission.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class CoordinatorBenchmark {

  static final String SLOT = "bench";

  /** The coordinator, a batch of registered transactions and their pre-built offsets. */
  @State(Scope.Thread)
  public static class Datum {
    @Param({"inOrder_1", "inOrder_100", "shuffled1000_1", "shuffled1000_100"})
    public String workload;

    /** {@code ack}: acknowledgements only; {@code cycle}: registration too. */
    @Param({"ack", "cycle"})
    public String scope;

    /** Acknowledgements between two reads of the watermark. */
    @Param({"1000"})
    public int drainEvery;

    AckWorkload w;
    boolean cycle;
    DatumCoordinatorDriver driver;
    PgLsn[] txEnds;

    /** The batch's offsets, in acknowledgement order. */
    CdcOffset[] offsets;

    long lastEnd;
    final AckAllocation.Window allocation = new AckAllocation.Window();

    @Setup(Level.Trial)
    public void build() {
      w = AckWorkload.parse(workload);
      AckWorkload.requireDrainInterval(drainEvery);
      cycle = parseScope(scope);
      driver = new DatumCoordinatorDriver(SLOT);
      lastEnd = 0;
      txEnds = new PgLsn[w.transactions];
      offsets = new CdcOffset[AckWorkload.BATCH];
    }

    @Setup(Level.Invocation)
    public void prepareBatch() {
      lastEnd = w.fill(SLOT, lastEnd, txEnds, offsets);
      if (!cycle) {
        register();
      }
      allocation.open();
    }

    void register() {
      DatumCoordinatorDriver d = driver;
      int eventsPerTx = w.eventsPerTx;
      for (PgLsn end : txEnds) {
        d.register(end, eventsPerTx);
      }
    }

    @TearDown(Level.Invocation)
    public void checkBatch() {
      allocation.close(AckWorkload.BATCH);
      if (driver.watermark() != lastEnd) {
        throw new IllegalStateException(
            "watermark "
                + PgLsn.of(driver.watermark())
                + " after the batch, expected "
                + PgLsn.of(lastEnd));
      }
    }
  }

  /** Kafka Connect's SubmittedRecords, a batch of submitted records and their handles. */
  @State(Scope.Thread)
  public static class Connect {
    @Param({"inOrder_1", "inOrder_100", "shuffled1000_1", "shuffled1000_100"})
    public String workload;

    /** {@code ack}: acknowledgements only; {@code cycle}: submission too. */
    @Param({"ack", "cycle"})
    public String scope;

    /** Acknowledgements between two calls of {@code committableOffsets()}. */
    @Param({"1000"})
    public int drainEvery;

    AckWorkload w;
    boolean cycle;

    /** In commit order. */
    SourceRecord[] records;

    SubmittedRecordsDriver driver;
    SubmittedRecordsDriver.Acks acks;
    final AckAllocation.Window allocation = new AckAllocation.Window();

    @Setup(Level.Trial)
    public void build() {
      w = AckWorkload.parse(workload);
      AckWorkload.requireDrainInterval(drainEvery);
      cycle = parseScope(scope);
      records = newRecords(w);
      driver = new SubmittedRecordsDriver();
      acks = new SubmittedRecordsDriver.Acks(AckWorkload.BATCH);
    }

    @Setup(Level.Invocation)
    public void submitBatch() {
      if (!cycle) {
        acks = driver.submit(records, acks);
        acks.arrange(w.ackOrder);
      }
      allocation.open();
    }

    @TearDown(Level.Invocation)
    public void closeWindow() {
      allocation.close(AckWorkload.BATCH);
    }
  }

  /** Returns true for {@code cycle}, false for {@code ack}. */
  static boolean parseScope(String scope) {
    switch (scope) {
      case "ack":
        return false;
      case "cycle":
        return true;
      default:
        throw new IllegalArgumentException("scope must be ack or cycle, was " + scope);
    }
  }

  /**
   * Builds one source record per event of the batch, in commit order, as a Connect source task for
   * a PostgreSQL slot would: one source partition (the slot), the position as source offset.
   */
  static SourceRecord[] newRecords(AckWorkload w) {
    Map<String, ?> partition = Map.of("slot", SLOT);
    SourceRecord[] records = new SourceRecord[AckWorkload.BATCH];
    for (int e = 0; e < records.length; e++) {
      long end = (w.transactionOf(e) + 1) * AckWorkload.LSN_STEP;
      Map<String, ?> offset = Map.of("tx_end_lsn", end, "event_index", w.indexOf(e));
      records[e] = new SourceRecord(partition, offset, "bench", null, null);
    }
    return records;
  }

  /** Acknowledges one batch through datum-cdc's coordinator. */
  @Benchmark
  @OperationsPerInvocation(AckWorkload.BATCH)
  public int datumCoordinator(Datum s, Blackhole bh) {
    if (s.cycle) {
      s.register();
    }
    DatumCoordinatorDriver driver = s.driver;
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

  /** Acknowledges one batch through Kafka Connect's SubmittedRecords. */
  @Benchmark
  @OperationsPerInvocation(AckWorkload.BATCH)
  public void connectSubmittedRecords(Connect s, Blackhole bh) {
    SubmittedRecordsDriver driver = s.driver;
    int drainEvery = s.drainEvery;
    int untilDrain = drainEvery;
    if (s.cycle) {
      SubmittedRecordsDriver.Acks acks = driver.submit(s.records, s.acks);
      s.acks = acks;
      int[] ackOrder = s.w.ackOrder;
      for (int e : ackOrder) {
        acks.ackEvent(e);
        if (--untilDrain == 0) {
          bh.consume(driver.committableOffsets());
          untilDrain = drainEvery;
        }
      }
    } else {
      SubmittedRecordsDriver.Acks acks = s.acks;
      int n = acks.size();
      for (int i = 0; i < n; i++) {
        acks.ack(i);
        if (--untilDrain == 0) {
          bh.consume(driver.committableOffsets());
          untilDrain = drainEvery;
        }
      }
    }
  }
}
