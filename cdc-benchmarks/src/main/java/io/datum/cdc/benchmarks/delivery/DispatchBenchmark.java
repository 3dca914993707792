package io.datum.cdc.benchmarks.delivery;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import io.datum.cdc.core.config.HandlerOrdering;
import io.datum.cdc.core.delivery.Delivery;
import io.datum.cdc.core.delivery.HandlerThread;
import io.datum.cdc.core.delivery.Handoff;
import io.datum.cdc.core.delivery.ParallelDelivery;
import io.datum.cdc.event.CdcHandler;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.ColumnInfo;
import io.datum.cdc.event.PgType;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.TransactionInfo;
import io.datum.cdc.event.UpdateEvent;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * What handing events to the handler costs, without the handler's own work: 200,000 pre-built
 * update events (10,000 rows with a primary key, transactions of 10) offered to a {@link Handoff}
 * and handed to a handler that only counts them, by the one-thread {@link HandlerThread} ({@code
 * threads=1}) or by {@link ParallelDelivery} (its dispatcher routing each event to its row's lane,
 * {@code threads} lanes). Score: nanoseconds per event (offering, routing, queueing, the call). Run
 * with {@code -prof gc}: {@code gc.alloc.rate.norm} divided by 200,000 is the bytes allocated per
 * event (the events themselves are built in the setup).
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@OperationsPerInvocation(DispatchBenchmark.EVENTS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 5)
@Measurement(iterations = 10)
@State(Scope.Thread)
public class DispatchBenchmark {

  static final int EVENTS = 200_000;
  private static final int KEYS = 10_000;
  private static final int TX = 10;

  @Param({"1", "2", "4", "16"})
  public int threads;

  @Param({"KEY", "NONE"})
  public HandlerOrdering ordering;

  private ChangeEvent[] events;

  /** Builds the events once. */
  @Setup(Level.Trial)
  public void events() {
    PgType int4 = PgType.builtin(23);
    List<ColumnInfo> columns =
        List.of(
            new ColumnInfo("id", 23, -1, true, int4, 0, 1),
            new ColumnInfo("v", 23, -1, false, int4, 0, 0));
    TableId table = new TableId("public", "bench");
    events = new ChangeEvent[EVENTS];
    for (int t = 0; t < EVENTS / TX; t++) {
      PgLsn end = PgLsn.of(1000L + t * 100L);
      PgLsn commit = PgLsn.of(999L + t * 100L);
      TransactionInfo info = new TransactionInfo(t, commit, end, Instant.EPOCH, null, TX);
      for (int i = 0; i < TX; i++) {
        int id = (t * TX + i) % KEYS + 1;
        CdcOffset offset = new CdcOffset("bench", end, commit, t, i, TX);
        events[t * TX + i] =
            new UpdateEvent(offset, info, table, null, Row.of(columns, new Object[] {id, t}));
      }
    }
  }

  /**
   * Hands every event to the handler and waits until it returned from the last one.
   *
   * @return the events handled
   * @throws InterruptedException if interrupted
   */
  @Benchmark
  public long handOff() throws InterruptedException {
    Handoff handoff = new Handoff(1024);
    AtomicLong handled = new AtomicLong();
    CountDownLatch all = new CountDownLatch(1);
    CountDownLatch exited = new CountDownLatch(1);
    AtomicBoolean producerDone = new AtomicBoolean();
    CdcHandler handler =
        (event, checkpoints) -> {
          if (handled.incrementAndGet() == EVENTS) {
            all.countDown();
          }
        };
    Delivery delivery =
        threads == 1
            ? new HandlerThread(
                handoff,
                handler,
                null,
                () -> false,
                producerDone::get,
                t -> {
                  throw new IllegalStateException(t);
                },
                exited::countDown,
                "bench-handler")
            : new ParallelDelivery(
                handoff,
                handler,
                null,
                offsets -> {},
                offset -> true, // as if every event were acknowledged at once
                threads,
                ordering,
                1024,
                () -> false,
                producerDone::get,
                t -> {
                  throw new IllegalStateException(t);
                },
                exited::countDown,
                "bench");
    delivery.start();
    for (ChangeEvent e : events) {
      while (!handoff.offer(e, 50)) {
        // the hand-off is full: the handlers are behind
      }
    }
    all.await();
    producerDone.set(true);
    exited.await();
    return handled.get();
  }
}
