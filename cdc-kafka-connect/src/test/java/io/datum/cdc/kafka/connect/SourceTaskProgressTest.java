package io.datum.cdc.kafka.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.SnapshotProgress;
import io.datum.cdc.TableId;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTaskContext;
import org.apache.kafka.connect.storage.OffsetStorageReader;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * The snapshot progress in the task's source offsets, driven the way Connect drives a task (start,
 * poll, commitRecord, stop) without a Connect runtime, so that the order of conversions, polls and
 * acknowledgements is the test's, not a scheduler's.
 *
 * <p>A record is converted when the library hands its row over and polled later; acknowledgements
 * of earlier records store newer progress meanwhile. Connect commits the offset of the newest
 * record Kafka acknowledged, so the progress a record carries is what a restarted task resumes
 * from: it must be the progress stored when the record was polled (never older than a record or
 * heartbeat polled before it).
 */
@EmbeddedPostgresTest
class SourceTaskProgressTest {

  private static final int ROWS = 200;
  private static final int CHUNK = 20;
  private static final TableId TABLE = new TableId("public", "progress_rows");

  @Test
  void recordsCarryTheProgressStoredWhenPolledAndARestartResumesFromIt(EmbeddedPostgresServer pg)
      throws Exception {
    pg.execute(
        "CREATE TABLE progress_rows (id int PRIMARY KEY, v text)",
        "INSERT INTO progress_rows SELECT g, 'v' || g FROM generate_series(1, " + ROWS + ") g",
        "CREATE PUBLICATION progress_pub FOR TABLE progress_rows");
    Map<String, String> config = ConnectClusters.connector(pg, "prog", "progress_slot");
    config.put("publication.name", "progress_pub");
    config.put("snapshot.mode", "initial");
    config.put("snapshot.chunk.rows", Integer.toString(CHUNK));
    config.put("max.batch.size", Integer.toString(CHUNK));
    config.put("poll.interval.ms", "50");
    config.put("heartbeat.interval.ms", "0");
    config.put("slot.wait.ms", "30000");

    DatumPostgresSourceTask first = new DatumPostgresSourceTask();
    first.initialize(new Context(config, null));
    first.start(config);
    Map<String, ?> committed;
    try {
      // at least the first chunk polled (a poll returns what is queued, so some of the second may
      // come too), nothing acknowledged: no progress is stored yet
      List<SourceRecord> before = poll(first, CHUNK);
      assertEquals(ids(1, before.size()), idsOf(before));
      assertTrue(before.size() < 2 * CHUNK, "a poll returns " + CHUNK + " records at most");
      // the rest of the second chunk converted and queued before the first is acknowledged: the
      // handler thread saw the progress of a snapshot that has acknowledged nothing
      Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> first.queuedRecords() >= CHUNK);
      for (SourceRecord r : before.subList(0, CHUNK)) {
        first.commitRecord(r, null);
      }
      Awaitility.await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> acknowledgedThrough(first.storedCheckpoint()) == CHUNK);
      String stored = Offsets.encodeSnapshot("progress_slot", first.storedCheckpoint().snapshot());

      // the second chunk's records polled from now on carry the progress stored when polled
      List<SourceRecord> after = poll(first, 2 * CHUNK - before.size());
      List<Integer> afterIds = idsOf(after);
      assertEquals(ids(before.size() + 1, before.size() + after.size()), afterIds);
      int last = afterIds.indexOf(2 * CHUNK);
      assertTrue(last >= 0, "the second chunk's last row was polled after the acknowledgement");
      for (SourceRecord r : after) {
        assertEquals(
            stored,
            r.sourceOffset().get(Offsets.SNAPSHOT),
            "a record polled after the first chunk's acknowledgement carries that progress");
      }
      // Kafka acknowledges the second chunk; Connect commits the offset of the newest record of
      // the acknowledged prefix (the second chunk's last row) and the task stops
      for (SourceRecord r : before.subList(CHUNK, before.size())) {
        first.commitRecord(r, null);
      }
      for (SourceRecord r : after.subList(0, last + 1)) {
        first.commitRecord(r, null);
      }
      committed = after.get(last).sourceOffset();
    } finally {
      first.stop();
    }
    assertEquals(
        CHUNK,
        acknowledgedThrough(Offsets.checkpoint("progress_slot", committed, "test")),
        "the committed offset says the first chunk is done");

    // a new task resumes from the committed offset: the first chunk is not read again, every
    // other row is (the second chunk's acknowledgement was not committed), each once
    DatumPostgresSourceTask second = new DatumPostgresSourceTask();
    second.initialize(new Context(config, committed));
    second.start(config);
    try {
      List<SourceRecord> rest = poll(second, ROWS - CHUNK);
      assertEquals(ids(CHUNK + 1, ROWS), idsOf(rest), "every row but the first chunk's, once");
    } finally {
      second.stop();
    }
  }

  /** Polls until at least {@code n} records came; returns all that came. */
  private static List<SourceRecord> poll(DatumPostgresSourceTask task, int n) {
    List<SourceRecord> got = new ArrayList<>();
    Awaitility.await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> {
              List<SourceRecord> batch = task.poll();
              if (batch != null) {
                got.addAll(batch);
              }
              return got.size() >= n;
            });
    return got;
  }

  /** The row ids of read records, in order; fails on a record of another kind. */
  private static List<Integer> idsOf(List<SourceRecord> records) {
    List<Integer> ids = new ArrayList<>();
    for (SourceRecord r : records) {
      Struct value = (Struct) r.value();
      assertEquals("r", value.getString("op"), r.toString());
      ids.add(value.getStruct("after").getInt32("id"));
    }
    return ids;
  }

  private static List<Integer> ids(int from, int through) {
    List<Integer> ids = new ArrayList<>();
    for (int i = from; i <= through; i++) {
      ids.add(i);
    }
    return ids;
  }

  /** The key through which the table's snapshot is acknowledged in a checkpoint; 0 if none. */
  private static int acknowledgedThrough(CdcCheckpoint checkpoint) {
    if (checkpoint == null) {
      return 0;
    }
    SnapshotProgress.TableSnapshot t = checkpoint.snapshot().table(TABLE);
    assertNotNull(t, "the table's snapshot is in progress: " + checkpoint.snapshot());
    assertEquals(1, t.remaining().size(), t.toString());
    List<String> after = t.remaining().get(0).after();
    return after == null ? 0 : Integer.parseInt(after.get(0));
  }

  /** Connect's context of a task: its configuration and the offset Connect stored, if any. */
  private static final class Context implements SourceTaskContext {
    private final Map<String, String> config;
    private final Map<String, ?> stored;

    Context(Map<String, String> config, Map<String, ?> stored) {
      this.config = config;
      this.stored = stored;
    }

    @Override
    public Map<String, String> configs() {
      return config;
    }

    @Override
    public OffsetStorageReader offsetStorageReader() {
      return new OffsetStorageReader() {
        @Override
        public <T> Map<String, Object> offset(Map<String, T> partition) {
          return stored == null ? null : new HashMap<>(stored);
        }

        @Override
        public <T> Map<Map<String, T>, Map<String, Object>> offsets(
            Collection<Map<String, T>> partitions) {
          Map<Map<String, T>, Map<String, Object>> m = new HashMap<>();
          for (Map<String, T> p : partitions) {
            m.put(p, offset(p));
          }
          return m;
        }
      };
    }

    @Override
    public PluginMetrics pluginMetrics() {
      return null;
    }
  }
}
