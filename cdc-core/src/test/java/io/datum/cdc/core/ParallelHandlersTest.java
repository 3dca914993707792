package io.datum.cdc.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import io.datum.cdc.core.config.HandlerOrdering;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.CdcHandler;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.DeleteEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.MessageEvent;
import io.datum.cdc.event.ReadEvent;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.RowChange;
import io.datum.cdc.event.TruncateEvent;
import io.datum.cdc.event.UpdateEvent;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Eight handler threads against a real PostgreSQL, with a random delay per event: an initial
 * snapshot's read rows, then inserts, updates, key changes, a delete and an insert of the same key,
 * TRUNCATEs of a table without a key, and logical messages. The handler applies every event to a
 * replica held in memory, per ordering unit as a user's handler would (a row's events under KEY, a
 * table's under TABLE, a transaction's under TRANSACTION), and the replica must equal the tables in
 * PostgreSQL at the end: an event of a row handled out of order leaves a wrong value or a row too
 * many. The events' own intervals are checked too: no two events of one row overlap, a TRUNCATE or
 * message overlaps nothing.
 */
@EmbeddedPostgresTest
class ParallelHandlersTest {

  private final EmbeddedPostgresServer pg;

  ParallelHandlersTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  @ParameterizedTest
  @EnumSource(
      value = HandlerOrdering.class,
      names = {"KEY", "TABLE", "TRANSACTION"})
  void eightThreadsKeepEveryRowInOrderAndTheReplicaEqualsTheTables(HandlerOrdering ordering)
      throws Exception {
    String name = "par_" + ordering.name().toLowerCase();
    String acct = name + "_acct";
    String full = name + "_full";
    String nokey = name + "_nokey";
    pg.execute(
        "CREATE TABLE " + acct + " (id int PRIMARY KEY, v int NOT NULL)",
        "CREATE TABLE " + full + " (id int PRIMARY KEY, v int NOT NULL)",
        "ALTER TABLE " + full + " REPLICA IDENTITY FULL",
        "CREATE TABLE " + nokey + " (v int NOT NULL)",
        "ALTER TABLE " + nokey + " REPLICA IDENTITY FULL",
        "INSERT INTO " + acct + " SELECT g, 0 FROM generate_series(1, 200) g",
        "INSERT INTO " + full + " SELECT g, 0 FROM generate_series(1, 100) g",
        "INSERT INTO " + nokey + " SELECT g FROM generate_series(1, 50) g",
        "CREATE PUBLICATION " + name + " FOR TABLE " + acct + ", " + full + ", " + nokey);

    Replica replica = new Replica();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CountDownLatch ended = new CountDownLatch(1);
    AtomicReference<PgLsn> endAt = new AtomicReference<>();
    AtomicLong clock = new AtomicLong();
    Map<String, long[]> lastOfRow = new ConcurrentHashMap<>();
    List<long[]> barriers = java.util.Collections.synchronizedList(new ArrayList<>());
    List<long[]> all = java.util.Collections.synchronizedList(new ArrayList<>());
    CdcHandler handler =
        (event, checkpoints) -> {
          long start = clock.incrementAndGet();
          LockSupport.parkNanos((event.offset().eventIndex() * 7919L + start) % 300_000);
          if (ordering != HandlerOrdering.TRANSACTION) { // no order between transactions
            try {
              replica.apply(event);
            } catch (Throwable t) {
              failure.compareAndSet(null, t);
              throw t;
            }
          }
          long end = clock.incrementAndGet();
          long[] interval = {start, end};
          all.add(interval);
          if (event instanceof TruncateEvent || event instanceof MessageEvent) {
            barriers.add(interval);
          }
          List<String> units =
              ordering == HandlerOrdering.TRANSACTION
                  ? List.of(
                      event.offset().isSnapshotRead()
                          ? "chunk" + event.offset().snapshotChunk()
                          : "tx" + event.offset().txEndLsn())
                  : event instanceof RowChange r
                      ? ordering == HandlerOrdering.KEY ? rowsOf(r) : List.of(r.table().toString())
                      : List.of();
          for (String unit : units) {
            long[] before = lastOfRow.put(unit, interval);
            if (before != null && before[1] > start) {
              failure.compareAndSet(
                  null, new AssertionError(unit + ": overlapping events at " + event.offset()));
            }
          }
          if (ordering == HandlerOrdering.TRANSACTION) {
            if (event.offset().isLastInTransaction()) {
              checkpoints.acknowledgeTransaction(event.offset());
            }
          } else {
            checkpoints.acknowledge(event.offset());
          }
          if (event instanceof MessageEvent m && m.prefix().equals("end")) {
            endAt.set(event.offset().txEndLsn());
            ended.countDown();
          }
        };
    try (PgCdcSource source =
        PgCdcSource.builder()
            .jdbcUrl(pg.jdbcUrl())
            .user(pg.user())
            .slot(name)
            .publication(name)
            .checkpointStore(new MemoryCheckpointStore())
            .createSlot(true)
            .snapshot(SnapshotMode.INITIAL)
            .messages(true)
            .handlerThreads(8, ordering)
            .build()) {
      var done = source.start(handler);
      Random random = new Random(42);
      int nextId = 1000;
      try (Connection c = DriverManager.getConnection(pg.jdbcUrl(), pg.user(), "");
          Statement s = c.createStatement()) {
        for (int round = 0; round < 60; round++) {
          int k = 1 + random.nextInt(200);
          s.execute("UPDATE " + acct + " SET v = v + 1 WHERE id % 7 = " + (k % 7));
          s.execute("UPDATE " + full + " SET v = v + " + k + " WHERE id <= " + (k % 100));
          s.execute(
              "BEGIN; UPDATE "
                  + acct
                  + " SET id = "
                  + (nextId++)
                  + " WHERE id = (SELECT min(id) FROM "
                  + acct
                  + " WHERE id < 1000); UPDATE "
                  + acct
                  + " SET v = v + 100 WHERE id = "
                  + (nextId - 1)
                  + "; COMMIT");
          s.execute(
              "BEGIN; DELETE FROM "
                  + full
                  + " WHERE id = "
                  + (1 + k % 100)
                  + "; INSERT INTO "
                  + full
                  + " VALUES ("
                  + (1 + k % 100)
                  + ", "
                  + round
                  + ") ON CONFLICT DO NOTHING; COMMIT");
          s.execute("INSERT INTO " + nokey + " VALUES (" + round + "), (" + round + ")");
          s.execute("UPDATE " + nokey + " SET v = v + 1 WHERE v = " + (round / 2));
          if (round % 20 == 19) {
            s.execute("TRUNCATE " + nokey);
            s.execute("INSERT INTO " + nokey + " SELECT g FROM generate_series(1, 5) g");
          }
          if (round % 10 == 0) {
            s.execute("SELECT pg_logical_emit_message(true, 'mid', '" + round + "')");
          }
        }
        s.execute("SELECT pg_logical_emit_message(true, 'end', 'x')");
      }
      await()
          .atMost(Duration.ofSeconds(120))
          .until(() -> ended.getCount() == 0 || failure.get() != null);
      assertNull(failure.get(), () -> String.valueOf(failure.get()));
      assertNull(failure.get(), () -> String.valueOf(failure.get()));
      if (ordering != HandlerOrdering.TRANSACTION) {
        assertEquals(pg.queryString(tableText(acct)), replica.text(new TableId("public", acct)));
        assertEquals(pg.queryString(tableText(full)), replica.text(new TableId("public", full)));
        assertEquals(
            pg.queryString(multisetText(nokey)), replica.text(new TableId("public", nokey)));
      }
      for (long[] b : barriers) {
        for (long[] other : all) {
          if (other != b) {
            assertTrue(
                other[1] < b[0] || other[0] > b[1], "an event overlapped a TRUNCATE/message");
          }
        }
      }
      // every thread acknowledged its share: the watermark reaches the last transaction
      await().atMost(Duration.ofSeconds(30)).until(() -> source.watermark().equals(endAt.get()));
      assertTrue(!done.isDone(), "the source ended");
    }
  }

  /**
   * A handler that throws on one of four threads fails the source, naming the event; the other
   * threads finish the event they are handling and take no more. A new source on the same store
   * delivers the failed event again and every event not acknowledged before, and nothing that was
   * acknowledged (per-event durability).
   */
  @org.junit.jupiter.api.Test
  void aHandlerFailureOnOneThreadFailsTheSourceAndOnlyUnacknowledgedEventsComeAgain()
      throws Exception {
    pg.execute(
        "CREATE TABLE par_fail (id int PRIMARY KEY)",
        "CREATE PUBLICATION par_fail FOR TABLE par_fail",
        "SELECT pg_create_logical_replication_slot('par_fail', 'pgoutput')",
        "INSERT INTO par_fail SELECT generate_series(1, 200)");
    MemoryCheckpointStore store = new MemoryCheckpointStore();
    java.util.Set<Integer> acknowledged = ConcurrentHashMap.newKeySet();
    PgCdcSource.Builder builder =
        PgCdcSource.builder()
            .jdbcUrl(pg.jdbcUrl())
            .user(pg.user())
            .slot("par_fail")
            .publication("par_fail")
            .checkpointStore(store)
            .handlerThreads(4);
    try (PgCdcSource first = builder.build()) {
      var done =
          first.start(
              (event, checkpoints) -> {
                int id = (Integer) ((InsertEvent) event).after().get("id");
                if (id == 100) {
                  throw new IllegalStateException("boom at 100");
                }
                checkpoints.acknowledge(event.offset());
                acknowledged.add(id);
              });
      java.util.concurrent.ExecutionException failed =
          org.junit.jupiter.api.Assertions.assertThrows(
              java.util.concurrent.ExecutionException.class, () -> done.get(60, TimeUnit.SECONDS));
      assertTrue(
          failed.getCause().getMessage().contains("handler failed on event")
              && failed.getCause().getMessage().contains("boom at 100"),
          failed.getCause().getMessage());
    }
    assertTrue(!acknowledged.contains(100));
    java.util.Set<Integer> again = ConcurrentHashMap.newKeySet();
    AtomicReference<Throwable> duplicate = new AtomicReference<>();
    try (PgCdcSource second = builder.build()) {
      second.start(
          (event, checkpoints) -> {
            int id = (Integer) ((InsertEvent) event).after().get("id");
            if (acknowledged.contains(id) || !again.add(id)) {
              duplicate.compareAndSet(null, new AssertionError("delivered again: " + id));
            }
            checkpoints.acknowledge(event.offset());
          });
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> duplicate.get() != null || acknowledged.size() + again.size() == 200);
    }
    assertNull(duplicate.get(), () -> String.valueOf(duplicate.get()));
    assertTrue(again.contains(100), "the failed event came again");
    java.util.Set<Integer> all = new java.util.TreeSet<>(acknowledged);
    all.addAll(again);
    assertEquals(200, all.size(), "every row once across the two sources");
  }

  /**
   * A logical message is a batch of its own with any number of threads: the thread that handles it
   * ended its batch just before it and ends it just after, even while events are backed up (the
   * first event holds the thread until the rest are queued).
   */
  @ParameterizedTest(name = "{0} handler thread(s)")
  @org.junit.jupiter.params.provider.ValueSource(ints = {1, 4})
  void aMessageIsABatchOfItsOwnEvenWithEventsBackedUp(int threads) throws Exception {
    String name = "par_batch" + threads;
    pg.execute(
        "CREATE TABLE " + name + " (id int PRIMARY KEY)",
        "CREATE PUBLICATION " + name + " FOR TABLE " + name,
        "SELECT pg_create_logical_replication_slot('" + name + "', 'pgoutput')",
        "INSERT INTO " + name + " SELECT generate_series(1, 50)",
        "SELECT pg_logical_emit_message(true, 'mid', 'x')",
        "INSERT INTO " + name + " SELECT generate_series(51, 100)",
        "SELECT pg_logical_emit_message(true, 'end', 'x')");
    CountDownLatch queued = new CountDownLatch(1);
    Map<Thread, List<String>> calls = new ConcurrentHashMap<>();
    CountDownLatch ended = new CountDownLatch(1);
    try (PgCdcSource source =
        PgCdcSource.builder()
            .jdbcUrl(pg.jdbcUrl())
            .user(pg.user())
            .slot(name)
            .publication(name)
            .checkpointStore(new MemoryCheckpointStore())
            .messages(true)
            .handlerThreads(threads)
            .build()) {
      source.start(
          new CdcHandler() {
            @Override
            public void handle(ChangeEvent event, io.datum.cdc.CdcCheckpointHandle checkpoints)
                throws Exception {
              if (event.offset().eventIndex() == 0 && !(event instanceof MessageEvent)) {
                // hold the first event of the first transaction until the rest are queued
                queued.await(30, TimeUnit.SECONDS);
              }
              List<String> mine =
                  calls.computeIfAbsent(Thread.currentThread(), t -> new ArrayList<>());
              mine.add(event instanceof MessageEvent m ? "M:" + m.prefix() : "E");
              checkpoints.acknowledge(event.offset());
              if (event instanceof MessageEvent m && m.prefix().equals("end")) {
                ended.countDown();
              }
            }

            @Override
            public void batchEnd(io.datum.cdc.CdcCheckpointHandle checkpoints) {
              calls.computeIfAbsent(Thread.currentThread(), t -> new ArrayList<>()).add("B");
            }
          });
      await().atMost(Duration.ofSeconds(30)).until(() -> source.metrics().handlerQueueDepth() > 20);
      queued.countDown();
      assertTrue(ended.await(60, TimeUnit.SECONDS), "the end message never came");
    }
    List<String> withMid =
        calls.values().stream().filter(l -> l.contains("M:mid")).findFirst().orElseThrow();
    int at = withMid.indexOf("M:mid");
    assertEquals("B", withMid.get(at - 1), "batchEnd before the message: " + withMid);
    assertEquals("B", withMid.get(at + 1), "batchEnd after the message: " + withMid);
  }

  private static List<String> rowsOf(RowChange r) {
    List<String> rows = new ArrayList<>();
    Row after =
        r instanceof InsertEvent i
            ? i.after()
            : r instanceof UpdateEvent u
                ? u.after()
                : r instanceof ReadEvent e ? e.after() : ((DeleteEvent) r).before();
    if (!r.table().table().endsWith("_nokey")) {
      rows.add(r.table() + "#" + after.get("id"));
      if (r instanceof UpdateEvent u && u.before() != null) {
        rows.add(r.table() + "#" + u.before().get("id"));
      }
    } else {
      rows.add(r.table().toString());
    }
    return rows.stream().distinct().toList();
  }

  private static String tableText(String table) {
    return "SELECT coalesce(string_agg(id || '=' || v, ',' ORDER BY id), '') FROM " + table;
  }

  private static String multisetText(String table) {
    return "SELECT coalesce(string_agg(v::text, ',' ORDER BY v), '') FROM " + table;
  }

  /**
   * The tables as the events build them. Per table one lock: a table's rows are applied by several
   * threads, and the lock only makes the map safe, not the order (that is the source's job).
   */
  static final class Replica {
    private final Map<TableId, TreeMap<Integer, Integer>> keyed = new HashMap<>();
    private final Map<TableId, TreeMap<Integer, Integer>> counts = new HashMap<>();

    synchronized void apply(ChangeEvent event) {
      if (event instanceof TruncateEvent t) {
        for (TableId table : t.tables()) {
          map(table).clear();
        }
        return;
      }
      if (!(event instanceof RowChange r)) {
        return;
      }
      TreeMap<Integer, Integer> m = map(r.table());
      boolean keyless = r.table().table().endsWith("_nokey");
      if (r instanceof ReadEvent e) {
        put(m, e.after(), keyless);
      } else if (r instanceof InsertEvent ins) {
        put(m, ins.after(), keyless);
      } else if (r instanceof DeleteEvent d) {
        remove(m, d.before(), keyless);
      } else {
        UpdateEvent u = (UpdateEvent) r;
        if (keyless) {
          remove(m, u.before(), true);
        } else if (u.before() != null) {
          Integer gone = m.remove((Integer) u.before().get("id"));
          if (gone == null) {
            throw new AssertionError("update of a row the replica lacks: " + u.before());
          }
        }
        put(m, u.after(), keyless);
      }
    }

    private TreeMap<Integer, Integer> map(TableId table) {
      return (table.table().endsWith("_nokey") ? counts : keyed)
          .computeIfAbsent(table, t -> new TreeMap<>());
    }

    private static void put(TreeMap<Integer, Integer> m, Row row, boolean keyless) {
      if (keyless) {
        m.merge((Integer) row.get("v"), 1, Integer::sum);
      } else {
        m.put((Integer) row.get("id"), (Integer) row.get("v"));
      }
    }

    private static void remove(TreeMap<Integer, Integer> m, Row row, boolean keyless) {
      if (keyless) {
        int v = (Integer) row.get("v");
        Integer n = m.get(v);
        if (n == null) {
          // a table without a key read while streaming: changes before its reset may name rows
          // the replica never had; the reset (a TRUNCATE) and the rows read after it fix that
          return;
        }
        if (n == 1) {
          m.remove(v);
        } else {
          m.put(v, n - 1);
        }
      } else if (m.remove((Integer) row.get("id")) == null) {
        throw new AssertionError("delete of a row the replica lacks: " + row);
      }
    }

    synchronized String text(TableId table) {
      StringBuilder sb = new StringBuilder();
      TreeMap<Integer, Integer> m = map(table);
      boolean keyless = table.table().endsWith("_nokey");
      for (Map.Entry<Integer, Integer> e : m.entrySet()) {
        if (keyless) {
          for (int i = 0; i < e.getValue(); i++) {
            sb.append(sb.length() == 0 ? "" : ",").append(e.getKey());
          }
        } else {
          sb.append(sb.length() == 0 ? "" : ",")
              .append(e.getKey())
              .append('=')
              .append(e.getValue());
        }
      }
      return sb.toString();
    }
  }
}
