package io.datum.cdc.core.delivery;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import io.datum.cdc.core.config.HandlerOrdering;
import io.datum.cdc.core.feedback.FeedbackCoordinator;
import io.datum.cdc.core.feedback.SourceCheckpointHandle;
import io.datum.cdc.event.CdcHandler;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.ColumnInfo;
import io.datum.cdc.event.DeleteEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.MessageEvent;
import io.datum.cdc.event.PgType;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.TransactionInfo;
import io.datum.cdc.event.TruncateEvent;
import io.datum.cdc.event.UpdateEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AfterTry;

/**
 * {@link ParallelDelivery} against a model: random transactions of inserts, updates (some changing
 * the key), deletes, {@code TRUNCATE}s and logical messages over a table with a primary key, one
 * with {@code REPLICA IDENTITY FULL} and a primary key, and one without a key, handled by 2 to 8
 * threads with a random delay per event, under each ordering and each way of acknowledging (per
 * event, asynchronously, per thread's share of a transaction at the end of each batch). The model
 * knows the rows' keys from the generator, not from the router. Checked: every event handled once;
 * the events of one unit (a row, both rows of a key change, a table, a transaction) handled one
 * after the other in stream order, never overlapping; a TRUNCATE or message after every earlier
 * event ended and before every later one began; the watermark, sampled while the threads run, never
 * past an event not acknowledged; and at the end at the last transaction.
 */
class ParallelDeliveryPropertyTest {

  private static final String SLOT = "prop";
  private static final TableId KEYED = new TableId("public", "keyed");
  private static final TableId FULL = new TableId("public", "full_pk");
  private static final TableId KEYLESS = new TableId("public", "keyless");

  private final List<AutoCloseable> closing = new ArrayList<>();

  @AfterTry
  void close() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
    closing.clear();
  }

  /** How the handler acknowledges. */
  enum Ack {
    EVENT,
    ASYNC,
    BATCH_TRANSACTION
  }

  /** One generated event with what the model knows of it. */
  record Planned(ChangeEvent event, int position, List<String> units, boolean barrier) {}

  @Property(tries = 24)
  void unitsStayInStreamOrderAndTheWatermarkNeverPassesAnUnacknowledgedEvent(
      @ForAll long seed,
      @ForAll @IntRange(min = 2, max = 8) int threads,
      @ForAll HandlerOrdering ordering,
      @ForAll Ack ack)
      throws Exception {
    Random random = new Random(seed);
    List<List<Planned>> transactions = generate(random, ordering, 60 + random.nextInt(60));
    FeedbackCoordinator coordinator = new FeedbackCoordinator(SLOT, null);
    ExecutorService async = Executors.newSingleThreadExecutor();
    closing.add(async::shutdownNow);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    SourceCheckpointHandle handle =
        new SourceCheckpointHandle(
            coordinator, new MemoryCheckpointStore(), async, failure::set, () -> {}, true);

    int total = transactions.stream().mapToInt(List::size).sum();
    long[] start = new long[total];
    long[] end = new long[total];
    int[] handledTimes = new int[total];
    Set<Integer> acknowledgedIntent = ConcurrentHashMap.newKeySet();
    Map<CdcOffset, Integer> positions = new HashMap<>();
    transactions.forEach(tx -> tx.forEach(p -> positions.put(p.event().offset(), p.position())));
    AtomicLong clock = new AtomicLong();
    ThreadLocal<List<CdcOffset>> batch = ThreadLocal.withInitial(ArrayList::new);

    CdcHandler handler =
        new CdcHandler() {
          @Override
          public void handle(ChangeEvent event, CdcCheckpointHandle checkpoints) {
            int p = positions.get(event.offset());
            start[p] = clock.incrementAndGet();
            handledTimes[p]++;
            LockSupport.parkNanos(random(p, seed) % 400_000); // the simulated work
            end[p] = clock.incrementAndGet();
            switch (ack) {
              case EVENT -> {
                acknowledgedIntent.add(p);
                checkpoints.acknowledge(event.offset());
              }
              case ASYNC -> {
                acknowledgedIntent.add(p);
                checkpoints.acknowledgeAsync(event.offset()).whenComplete(recordFailure(failure));
              }
              case BATCH_TRANSACTION -> batch.get().add(event.offset());
            }
          }

          @Override
          public void batchEnd(CdcCheckpointHandle checkpoints) {
            List<CdcOffset> mine = batch.get();
            Map<Long, CdcOffset> byTransaction = new LinkedHashMap<>();
            for (CdcOffset o : mine) {
              acknowledgedIntent.add(positions.get(o));
              byTransaction.put(o.txEndLsn().asLong(), o);
            }
            mine.clear();
            byTransaction.values().forEach(checkpoints::acknowledgeTransaction);
          }
        };

    Handoff handoff = new Handoff(16);
    AtomicBoolean stopping = new AtomicBoolean();
    AtomicBoolean producerDone = new AtomicBoolean();
    CountDownLatch exited = new CountDownLatch(1);
    ParallelDelivery delivery =
        new ParallelDelivery(
            handoff,
            handler,
            handle,
            handle::acknowledgeEach,
            handle::acknowledged,
            threads,
            ordering,
            16,
            stopping::get,
            producerDone::get,
            failure::set,
            exited::countDown,
            "prop");
    closing.add(() -> stopping.set(true));
    delivery.start();

    // samples the watermark while the threads run: every event at or before it was acknowledged
    AtomicBoolean sampling = new AtomicBoolean(true);
    List<long[]> ends = new ArrayList<>(); // {txEnd, first position, count}
    for (List<Planned> tx : transactions) {
      ends.add(
          new long[] {
            tx.get(0).event().offset().txEndLsn().asLong(), tx.get(0).position(), tx.size()
          });
    }
    Thread sampler =
        new Thread(
            () -> {
              try {
                int verified = 0;
                while (sampling.get()) {
                  long w = coordinator.watermark().asLong();
                  while (verified < ends.size() && ends.get(verified)[0] <= w) {
                    long[] e = ends.get(verified);
                    for (int i = 0; i < e[2]; i++) {
                      int p = (int) e[1] + i;
                      if (!acknowledgedIntent.contains(p)) {
                        throw new AssertionError(
                            "watermark " + w + " passed unacknowledged event at position " + p);
                      }
                    }
                    verified++;
                  }
                  Thread.onSpinWait();
                }
              } catch (Throwable t) {
                failure.compareAndSet(null, t);
              }
            },
            "watermark-sampler");
    sampler.start();

    // the replication thread: register each transaction, then offer its events in order
    for (List<Planned> tx : transactions) {
      CdcOffset first = tx.get(0).event().offset();
      coordinator.register(first.txEndLsn(), first.eventCount());
      for (Planned p : tx) {
        while (!handoff.offer(p.event(), 50)) {
          assertNull(failure.get());
        }
      }
    }
    producerDone.set(true);
    long last = ends.get(ends.size() - 1)[0];
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> failure.get() != null || coordinator.watermark().asLong() == last);
    assertTrue(exited.await(30, TimeUnit.SECONDS), "the delivery's threads did not end");
    sampling.set(false);
    sampler.join();
    assertNull(failure.get(), () -> "failed: " + failure.get());
    assertEquals(PgLsn.of(last), coordinator.watermark());

    List<Planned> all = new ArrayList<>();
    transactions.forEach(all::addAll);
    for (Planned p : all) {
      assertEquals(1, handledTimes[p.position()], "event at " + p.position() + " handled times");
    }
    Map<String, Planned> lastOfUnit = new HashMap<>();
    Planned lastBarrier = null;
    long latestEnd = 0;
    for (Planned p : all) {
      int i = p.position();
      if (p.barrier()) {
        for (Planned q : all) {
          int j = q.position();
          if (j < i) {
            assertTrue(
                end[j] < start[i], "event " + j + " ended after the barrier " + i + " began");
          } else if (j > i) {
            assertTrue(
                start[j] > end[i], "event " + j + " began before the barrier " + i + " ended");
          }
        }
        lastBarrier = p;
      }
      for (String unit : p.units()) {
        Planned before = lastOfUnit.put(unit, p);
        if (before != null) {
          assertTrue(
              end[before.position()] < start[i],
              "unit "
                  + unit
                  + ": event "
                  + i
                  + " began before event "
                  + before.position()
                  + " ended");
        }
      }
      latestEnd = Math.max(latestEnd, end[i]);
    }
    assertTrue(lastBarrier == null || latestEnd >= end[lastBarrier.position()]);
  }

  private static java.util.function.BiConsumer<Object, Throwable> recordFailure(
      AtomicReference<Throwable> failure) {
    return (v, t) -> {
      if (t != null) {
        failure.compareAndSet(null, t);
      }
    };
  }

  private static long random(int position, long seed) {
    long x = seed * 31 + position * 0x9E3779B97F4A7C15L;
    x ^= x >>> 33;
    return Math.abs(x * 0xff51afd7ed558ccdL >>> 1);
  }

  // ---- the workload and the model ----------------------------------------------------------

  private static final PgType INT4 = PgType.builtin(23);
  private static final PgType TEXT = PgType.builtin(25);

  /** id, v: the key flags and primary key positions as the stream describes each table. */
  private static List<ColumnInfo> columns(TableId table) {
    boolean allKey = table != KEYED; // REPLICA IDENTITY FULL flags every column
    // the primary key position from 1, 0 for a column not in it; -1 unknown (no catalog facts)
    int pk = table == KEYLESS ? -1 : 1;
    int notPk = table == KEYLESS ? -1 : 0;
    return List.of(
        new ColumnInfo("id", 23, -1, true, INT4, 0, pk),
        new ColumnInfo("v", 25, -1, allKey, TEXT, 0, notPk));
  }

  private static final Map<TableId, List<ColumnInfo>> COLUMNS =
      Map.of(KEYED, columns(KEYED), FULL, columns(FULL), KEYLESS, columns(KEYLESS));

  private static Row row(TableId table, int id, String v) {
    return Row.of(COLUMNS.get(table), new Object[] {id, v});
  }

  private static List<List<Planned>> generate(Random r, HandlerOrdering ordering, int count) {
    Map<TableId, List<Integer>> live = new HashMap<>();
    Map<TableId, Map<Integer, String>> values = new HashMap<>();
    for (TableId t : List.of(KEYED, FULL, KEYLESS)) {
      live.put(t, new ArrayList<>());
      values.put(t, new HashMap<>());
    }
    List<List<Planned>> out = new ArrayList<>();
    long lsn = 1000;
    int position = 0;
    int nextId = 1;
    for (int t = 0; t < count; t++) {
      int events = 1 + r.nextInt(4);
      lsn += 100;
      TransactionInfo info =
          new TransactionInfo(t + 1, PgLsn.of(lsn - 1), PgLsn.of(lsn), Instant.EPOCH, null, events);
      List<Planned> tx = new ArrayList<>();
      for (int e = 0; e < events; e++) {
        CdcOffset offset = new CdcOffset(SLOT, PgLsn.of(lsn), PgLsn.of(lsn - 1), t + 1, e, events);
        int dice = r.nextInt(100);
        TableId table = List.of(KEYED, FULL, KEYLESS).get(r.nextInt(3));
        List<Integer> ids = live.get(table);
        Map<Integer, String> v = values.get(table);
        ChangeEvent event;
        List<String> keys = new ArrayList<>();
        boolean barrier = false;
        if (dice < 3) {
          event = new TruncateEvent(offset, info, List.of(table), false, false);
          ids.clear();
          v.clear();
          barrier = true;
        } else if (dice < 6) {
          event = new MessageEvent(offset, info, "p", new byte[] {1}, true);
          barrier = true;
        } else if (dice < 40 || ids.size() < 3) {
          int id = nextId++;
          ids.add(id);
          v.put(id, "v" + id);
          event = new InsertEvent(offset, info, table, row(table, id, v.get(id)));
          keys.add(unit(table, id));
        } else if (dice < 55 && table == KEYED) {
          int old = ids.remove(r.nextInt(ids.size()));
          int id = r.nextInt(4) == 0 && !ids.isEmpty() ? old : nextId++; // some to the same lane
          ids.add(id);
          v.put(id, v.remove(old) + "'");
          Row before = Row.of(COLUMNS.get(table), new Object[] {old, null});
          event = new UpdateEvent(offset, info, table, before, row(table, id, v.get(id)));
          keys.add(unit(table, old));
          keys.add(unit(table, id));
        } else if (dice < 80) {
          int id = ids.get(r.nextInt(ids.size()));
          String was = v.get(id);
          v.put(id, was + "+");
          Row before = table == KEYED ? null : row(table, id, was);
          event = new UpdateEvent(offset, info, table, before, row(table, id, v.get(id)));
          keys.add(unit(table, id));
        } else {
          int id = ids.remove(r.nextInt(ids.size()));
          Row before =
              table == KEYED
                  ? Row.of(COLUMNS.get(table), new Object[] {id, null})
                  : row(table, id, v.get(id));
          v.remove(id);
          event = new DeleteEvent(offset, info, table, before);
          keys.add(unit(table, id));
        }
        List<String> units = new ArrayList<>();
        if (!barrier) {
          switch (ordering) {
            case KEY ->
                units.addAll(
                    table == KEYLESS ? List.of(table.toString()) : new LinkedHashSet<>(keys));
            case TABLE -> units.add(table.toString());
            case TRANSACTION -> units.add("tx" + lsn);
            case NONE -> {}
          }
        }
        tx.add(new Planned(event, position++, units, barrier));
      }
      out.add(tx);
    }
    return out;
  }

  private static String unit(TableId table, int id) {
    return table + "#" + id;
  }
}
