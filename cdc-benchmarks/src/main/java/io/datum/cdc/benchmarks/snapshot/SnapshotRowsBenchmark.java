package io.datum.cdc.benchmarks.snapshot;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.SnapshotProgress;
import io.datum.cdc.TableId;
import io.datum.cdc.core.feedback.SnapshotAcknowledgements;
import io.datum.cdc.core.relation.RelationInfo;
import io.datum.cdc.core.relation.ValueFailure;
import io.datum.cdc.core.snapshot.ChunkRows;
import io.datum.cdc.core.snapshot.CopyRows;
import io.datum.cdc.core.snapshot.ReadEvents;
import io.datum.cdc.core.snapshot.SnapshotTable;
import io.datum.cdc.event.ColumnInfo;
import io.datum.cdc.event.ReadEvent;
import io.datum.cdc.event.Row;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.postgresql.copy.CopyOut;

/**
 * The snapshot path of one row without the network: a chunk of {@value #CHUNK} COPY text lines of
 * the snapshot benchmark's table shape (bigint key, int, text, numeric, timestamptz, boolean, uuid,
 * jsonb, double precision, varchar with nulls) is decoded by {@link CopyRows} exactly as from the
 * server, its key texts taken, registered as a chunk ({@link ReadEvents}: offsets and {@link
 * ReadEvent}s) and every row acknowledged in the tracker, as the handler would. Score: rows per
 * second; run with {@code -prof gc} for the bytes allocated per row.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@State(Scope.Thread)
public class SnapshotRowsBenchmark {

  static final int CHUNK = 8192;
  static final PgLsn AT = PgLsn.parse("0/16B3748");

  SnapshotTable table;
  byte[][] lines;
  SnapshotAcknowledgements tracker;
  SnapshotAcknowledgements.Range range;

  /** Builds the table description and the COPY lines, generated like the benchmark's data. */
  @Setup
  public void build() {
    List<ColumnInfo> columns =
        List.of(
            new ColumnInfo("id", 20, -1, true),
            new ColumnInfo("n", 23, -1, false),
            new ColumnInfo("note", 25, -1, false),
            new ColumnInfo("amount", 1700, 786438, false),
            new ColumnInfo("at", 1184, -1, false),
            new ColumnInfo("flag", 16, -1, false),
            new ColumnInfo("ref", 2950, -1, false),
            new ColumnInfo("doc", 3802, -1, false),
            new ColumnInfo("score", 701, -1, false),
            new ColumnInfo("label", 1043, 68, false));
    RelationInfo relation = RelationInfo.of(1, new TableId("public", "big"), 'd', columns);
    table =
        new SnapshotTable(
            new TableId("public", "big"),
            1,
            relation,
            List.of("id"),
            List.of("bigint"),
            null,
            false,
            0,
            0);
    Random random = new Random(42);
    lines = new byte[CHUNK][];
    for (int i = 0; i < CHUNK; i++) {
      String note =
          "note " + Long.toHexString(random.nextLong()) + " " + "x".repeat(random.nextInt(60));
      String line =
          String.join(
                  "\t",
                  Long.toString(1_000_000L + i),
                  Integer.toString(random.nextInt(1_000_000)),
                  note,
                  (random.nextInt(10_000_000) / 100.0) + "",
                  "2026-11-" + (10 + i % 18) + " 12:" + (10 + i % 50) + ":07.123456+00",
                  random.nextBoolean() ? "t" : "f",
                  new UUID(random.nextLong(), random.nextLong()).toString(),
                  "{\"k\": " + i + ", \"tag\": \"t" + (i % 7) + "\", \"ok\": true}",
                  Double.toString(random.nextDouble() * 1000),
                  i % 4 == 0 ? "\\N" : "label-" + (i % 97))
              + "\n";
      lines[i] = line.getBytes(StandardCharsets.UTF_8);
    }
  }

  /** A COPY that returns the prepared lines once. */
  private final class Lines implements CopyOut {
    private int next;

    @Override
    public byte[] readFromCopy() {
      return next < lines.length ? lines[next++] : null;
    }

    @Override
    public byte[] readFromCopy(boolean block) {
      return readFromCopy();
    }

    @Override
    public int getFieldCount() {
      return 10;
    }

    @Override
    public int getFormat() {
      return 0;
    }

    @Override
    public int getFieldFormat(int field) {
      return 0;
    }

    @Override
    public boolean isActive() {
      return next < lines.length;
    }

    @Override
    public void cancelCopy() {}

    @Override
    public long getHandledRowCount() {
      return next;
    }
  }

  /**
   * Decodes a chunk, registers it, acknowledges every row.
   *
   * @return the last event, so that nothing is optimised away
   * @throws Exception never (the fake COPY does not fail)
   */
  @Benchmark
  @OperationsPerInvocation(CHUNK)
  public ReadEvent chunk() throws Exception {
    if (tracker == null || !tracker.inProgress()) {
      tracker = new SnapshotAcknowledgements(SnapshotProgress.NONE);
      tracker.add("bench", List.of(table.table()));
      range = tracker.readTasks().get(0).range();
    }
    List<Row> rows = new ArrayList<>(CHUNK);
    List<List<String>> keys = new ArrayList<>(CHUNK);
    List<String> last = null;
    try (CopyRows copy = CopyRows.over(new Lines(), table, ValueFailure.Policy.STOP)) {
      while (copy.next()) {
        rows.add(copy.row());
        last = copy.chunkKeyTexts();
        keys.add(last);
      }
    }
    List<ReadEvent> events =
        ReadEvents.register(
            tracker,
            "bench",
            range,
            new ChunkRows(rows, keys, List.of(), last, false),
            AT,
            Instant.EPOCH);
    ReadEvent e = null;
    for (ReadEvent event : events) {
      CdcOffset offset = event.offset();
      tracker.record(offset);
      e = event;
    }
    return e;
  }
}
