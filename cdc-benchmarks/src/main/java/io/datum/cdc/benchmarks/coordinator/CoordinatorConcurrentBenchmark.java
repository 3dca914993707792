package io.datum.cdc.benchmarks.coordinator;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.PgLsn;
import io.datum.cdc.core.feedback.FeedbackCoordinator;
import io.datum.cdc.core.feedback.SourceCheckpointHandle;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Many application threads acknowledging concurrently into one slot, against Kafka Connect's {@code
 * SubmittedRecords} shared the same way. Score: nanoseconds per acknowledgement, all threads
 * together (single shot: each thread's time until no chunk is left, averaged over the threads,
 * divided by {@link #EVENTS}); {@code 1 / score} is the combined throughput.
 *
 * <p>Every iteration starts from a new coordinator (a new {@code SubmittedRecords}) holding {@link
 * #EVENTS} events, registered (submitted) in the untimed setup, as the source would have delivered
 * them. The events are cut into chunks of {@link #CHUNK} consecutive events which the threads claim
 * in turn, as a pool of workers taking from a hand-off would, so the threads acknowledge
 * neighbouring events (the same ring words and transaction entries) at the same time and none runs
 * far ahead. With {@code shuffled}, each chunk is acknowledged in a random order. After each chunk
 * a thread reads the committable position (the watermark, or {@code committableOffsets()} under the
 * lock that serialises it with {@code submit}, as Connect's task thread does). JMH starts the
 * threads of an iteration together; the iteration's teardown checks that the watermark reached the
 * last transaction.
 *
 * <p>(Dealing the chunks round-robin instead let one thread finish its half while the other had
 * done little, and then every store of the {@code handle} path wrote one partly acknowledged entry
 * per transaction acknowledged ahead of the watermark, hundreds of thousands: see
 * docs/benchmarks.md.)
 *
 * <p>{@code path} says how datum-cdc acknowledges:
 *
 * <ul>
 *   <li>{@code record}: {@code FeedbackCoordinator.record}, the lock-free path per-event durability
 *       uses (the watermark moves when read);
 *   <li>{@code acknowledge}: {@code FeedbackCoordinator.acknowledge}, per-transaction durability's
 *       path (the acknowledgement that completes the acknowledged prefix moves the watermark, under
 *       the coordinator's monitor);
 *   <li>{@code handle}: {@code CdcCheckpointHandle.checkpoint} with per-transaction durability into
 *       a {@code MemoryCheckpointStore}: the above plus a snapshot and a store whenever the
 *       watermark moves (the application's whole path, minus the store's own I/O).
 * </ul>
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms3g", "-Xmx3g"})
@Warmup(iterations = 10)
@Measurement(iterations = 10)
@Threads(2)
public class CoordinatorConcurrentBenchmark {

  static final String SLOT = CoordinatorBenchmark.SLOT;

  /** Acknowledgements per iteration, all threads together. */
  static final int EVENTS = 2_000_000;

  /** Consecutive events a thread takes at a time. */
  static final int CHUNK = 1_000;

  /** The events of one iteration and how they are dealt to the threads. */
  abstract static class Stream {
    int eventsPerTx;
    boolean shuffled;
    int threads;
    int events;

    /** The event numbers in acknowledgement order, cut into chunks that threads claim in turn. */
    int[] order;

    final AtomicInteger nextChunk = new AtomicInteger();

    /** With {@code halves}: which half the next thread to start takes. */
    final AtomicInteger nextHalf = new AtomicInteger();

    /**
     * Plans the iteration's events.
     *
     * @param workload {@code inOrder_N} or {@code shuffled_N}: N events per transaction
     */
    void plan(String workload, BenchmarkParams params) {
      int underscore = workload.indexOf('_');
      String kind = workload.substring(0, underscore);
      if (!kind.equals("inOrder") && !kind.equals("shuffled")) {
        throw new IllegalArgumentException("workload must be inOrder_N or shuffled_N: " + workload);
      }
      shuffled = kind.equals("shuffled");
      eventsPerTx = Integer.parseInt(workload.substring(underscore + 1));
      if (CHUNK % eventsPerTx != 0 && eventsPerTx % CHUNK != 0) {
        throw new IllegalArgumentException("events per transaction must divide " + CHUNK);
      }
      threads = params.getThreads();
      events = EVENTS;
      order = new int[EVENTS];
      SplittableRandom random = new SplittableRandom(0x5EEDL);
      for (int e = 0; e < EVENTS; e++) {
        order[e] = e;
      }
      if (shuffled) {
        for (int from = 0; from < EVENTS; from += CHUNK) {
          for (int i = CHUNK - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = order[from + i];
            order[from + i] = order[from + j];
            order[from + j] = t;
          }
        }
      }
      nextChunk.set(0);
      nextHalf.set(0);
    }

    /** Returns the first index (into the acknowledgement order) of the next chunk, or -1. */
    int claimChunk() {
      int chunk = nextChunk.getAndIncrement();
      return chunk * CHUNK < EVENTS ? chunk * CHUNK : -1;
    }
  }

  /** One slot's coordinator (and handle) shared by all threads, refilled every iteration. */
  @State(Scope.Benchmark)
  public static class Datum extends Stream {
    @Param({"inOrder_1", "inOrder_100", "shuffled_1"})
    public String workload;

    @Param({"record", "acknowledge", "handle"})
    public String path;

    /**
     * {@code turns}: the threads claim chunks in turn (none runs far ahead); {@code halves}: each
     * thread acknowledges its own share of the events, in order, so one runs up to a million events
     * ahead of the watermark while the other has not finished (the case where every stored
     * checkpoint listed each transaction acknowledged ahead before checkpoints kept runs).
     */
    @Param({"turns"})
    public String dealing;

    FeedbackCoordinator coordinator;
    SourceCheckpointHandle handle;
    MemoryCheckpointStore store;

    /** The offsets in acknowledgement order. */
    CdcOffset[] offsets;

    long lastEnd;

    int pathCode;

    @Setup(Level.Iteration)
    public void deliver(BenchmarkParams params) {
      plan(workload, params);
      switch (path) {
        case "record":
          pathCode = 0;
          break;
        case "acknowledge":
          pathCode = 1;
          break;
        case "handle":
          pathCode = 2;
          break;
        default:
          throw new IllegalArgumentException("path must be record, acknowledge or handle: " + path);
      }
      coordinator = new FeedbackCoordinator(SLOT, null);
      store = new MemoryCheckpointStore();
      handle =
          new SourceCheckpointHandle(coordinator, store, Runnable::run, e -> {}, () -> {}, false);
      int transactions = events / eventsPerTx;
      PgLsn[] ends = new PgLsn[transactions];
      PgLsn[] commits = new PgLsn[transactions];
      for (int t = 0; t < transactions; t++) {
        long end = (t + 1) * AckWorkload.LSN_STEP;
        ends[t] = PgLsn.of(end);
        commits[t] = PgLsn.of(end - 0x30);
        coordinator.register(ends[t], eventsPerTx);
      }
      lastEnd = ends[transactions - 1].asLong();
      offsets = new CdcOffset[EVENTS];
      for (int i = 0; i < EVENTS; i++) {
        int e = order[i];
        int t = e / eventsPerTx;
        offsets[i] = new CdcOffset(SLOT, ends[t], commits[t], t, e % eventsPerTx, eventsPerTx);
      }
    }

    @TearDown(Level.Iteration)
    public void check() {
      long watermark = coordinator.watermark().asLong();
      if (watermark != lastEnd) {
        throw new IllegalStateException(
            "watermark "
                + PgLsn.of(watermark)
                + " after the iteration, expected "
                + PgLsn.of(lastEnd));
      }
      if (path.equals("handle")
          && !store.load(SLOT).orElseThrow().watermark().equals(PgLsn.of(lastEnd))) {
        throw new IllegalStateException("the stored watermark did not reach the last transaction");
      }
    }
  }

  /** One SubmittedRecords shared by all threads, as one source partition of a Connect task. */
  @State(Scope.Benchmark)
  public static class Connect extends Stream {
    @Param({"inOrder_1", "inOrder_100", "shuffled_1"})
    public String workload;

    /** Serialises submit and committableOffsets, which Connect calls from the task thread only. */
    final Object task = new Object();

    SourceRecord[] records;
    SubmittedRecordsDriver driver;

    /** The handles in acknowledgement order. */
    SubmittedRecordsDriver.Acks acks;

    @Setup(Level.Iteration)
    public void submit(BenchmarkParams params) {
      plan(workload, params);
      if (records == null || records.length != events) {
        Map<String, ?> partition = Map.of("slot", SLOT);
        records = new SourceRecord[events];
        for (int e = 0; e < events; e++) {
          long end = (e / eventsPerTx + 1) * AckWorkload.LSN_STEP;
          Map<String, ?> offset = Map.of("tx_end_lsn", end, "event_index", e % eventsPerTx);
          records[e] = new SourceRecord(partition, offset, "bench", null, null);
        }
      }
      driver = new SubmittedRecordsDriver();
      SubmittedRecordsDriver.Acks all;
      synchronized (task) {
        all = driver.submit(records, null);
      }
      acks = all.select(order);
    }
  }

  /** Acknowledges chunks through datum-cdc until none is left. */
  @Benchmark
  @OperationsPerInvocation(EVENTS)
  public void datum(Datum s, Blackhole bh) {
    CdcOffset[] offsets = s.offsets;
    FeedbackCoordinator coordinator = s.coordinator;
    SourceCheckpointHandle handle = s.handle;
    int path = s.pathCode;
    if (s.dealing.equals("halves")) {
      int share = s.events / s.threads;
      int start = s.nextHalf.getAndIncrement() * share;
      for (int i = start; i < start + share; i++) {
        acknowledge(path, coordinator, handle, offsets[i]);
        if ((i + 1) % CHUNK == 0) {
          bh.consume(path == 2 ? handle.watermark() : coordinator.watermark());
        }
      }
      return;
    }
    for (int from = s.claimChunk(); from >= 0; from = s.claimChunk()) {
      for (int i = from, to = from + CHUNK; i < to; i++) {
        acknowledge(path, coordinator, handle, offsets[i]);
      }
      // DRAIN_EVERY = CHUNK: the committable position once per chunk
      bh.consume(path == 2 ? handle.watermark() : coordinator.watermark());
    }
  }

  private static void acknowledge(
      int path, FeedbackCoordinator coordinator, SourceCheckpointHandle handle, CdcOffset offset) {
    if (path == 0) {
      coordinator.record(offset);
    } else if (path == 1) {
      coordinator.acknowledge(offset);
    } else {
      handle.acknowledge(offset);
    }
  }

  /** Acknowledges chunks through Kafka Connect's SubmittedRecords until none is left. */
  @Benchmark
  @OperationsPerInvocation(EVENTS)
  public void connectSubmittedRecords(Connect s, Blackhole bh) {
    SubmittedRecordsDriver.Acks acks = s.acks;
    SubmittedRecordsDriver driver = s.driver;
    for (int from = s.claimChunk(); from >= 0; from = s.claimChunk()) {
      for (int i = from, to = from + CHUNK; i < to; i++) {
        acks.ackEvent(i);
      }
      synchronized (s.task) {
        bh.consume(driver.committableOffsets());
      }
    }
  }
}
