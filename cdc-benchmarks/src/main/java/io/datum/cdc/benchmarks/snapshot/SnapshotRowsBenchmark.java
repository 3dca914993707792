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
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
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
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.postgresql.copy.CopyOut;

/**
 * The snapshot path of one row without the network: a chunk of {@value #CHUNK} COPY rows of the
 * snapshot benchmark's table shape (bigint key, int, text, numeric, timestamptz, boolean, uuid,
 * jsonb, double precision, varchar with nulls), in text or binary format ({@code format}), is
 * decoded by {@link CopyRows} exactly as from the server, its key texts taken, registered as a
 * chunk ({@link ReadEvents}: offsets and {@link ReadEvent}s) and every row acknowledged in the
 * tracker, as the handler would. Score: rows per second; run with {@code -prof gc} for the bytes
 * allocated per row.
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

  /** The COPY format: {@code text} or {@code binary}. */
  @Param({"text", "binary"})
  public String format;

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
    boolean binary = format.equals("binary");
    lines = new byte[binary ? CHUNK + 1 : CHUNK][];
    for (int i = 0; i < CHUNK; i++) {
      long id = 1_000_000L + i;
      int n = random.nextInt(1_000_000);
      String note =
          "note " + Long.toHexString(random.nextLong()) + " " + "x".repeat(random.nextInt(60));
      BigDecimal amount = BigDecimal.valueOf(random.nextInt(10_000_000), 2);
      String at = "2026-11-" + (10 + i % 18) + " 12:" + (10 + i % 50) + ":07.123456+00";
      boolean flag = random.nextBoolean();
      UUID ref = new UUID(random.nextLong(), random.nextLong());
      String doc = "{\"k\": " + i + ", \"tag\": \"t" + (i % 7) + "\", \"ok\": true}";
      double score = random.nextDouble() * 1000;
      String label = i % 4 == 0 ? null : "label-" + (i % 97);
      if (binary) {
        lines[i] = binaryTuple(i == 0, id, n, note, amount, at, flag, ref, doc, score, label);
        continue;
      }
      String line =
          String.join(
                  "\t",
                  Long.toString(id),
                  Integer.toString(n),
                  note,
                  amount.toPlainString(),
                  at,
                  flag ? "t" : "f",
                  ref.toString(),
                  doc,
                  Double.toString(score),
                  label == null ? "\\N" : label)
              + "\n";
      lines[i] = line.getBytes(StandardCharsets.UTF_8);
    }
    if (binary) {
      lines[CHUNK] = new byte[] {-1, -1}; // the trailer
    }
  }

  /**
   * One tuple of a binary COPY (the file header in front of the first): each field's length and
   * send format (PostgreSQL docs, COPY, "Binary Format"; int8send, int4send, textsend,
   * numeric_send, timestamptz_send, boolsend, uuid_send, jsonb_send, float8send).
   */
  private static byte[] binaryTuple(
      boolean first,
      long id,
      int n,
      String note,
      BigDecimal amount,
      String at,
      boolean flag,
      UUID ref,
      String doc,
      double score,
      String label) {
    ByteBuffer b = ByteBuffer.allocate(1024);
    if (first) {
      b.put(new byte[] {'P', 'G', 'C', 'O', 'P', 'Y', '\n', -1, '\r', '\n', 0}).putInt(0).putInt(0);
    }
    b.putShort((short) 10);
    b.putInt(8).putLong(id);
    b.putInt(4).putInt(n);
    byte[] text = note.getBytes(StandardCharsets.UTF_8);
    b.putInt(text.length).put(text);
    numeric(b, amount);
    Instant instant = OffsetDateTime.parse(at.replace(' ', 'T').replace("+00", "Z")).toInstant();
    long micros = (instant.getEpochSecond() - 946_684_800L) * 1_000_000L + instant.getNano() / 1000;
    b.putInt(8).putLong(micros);
    b.putInt(1).put((byte) (flag ? 1 : 0));
    b.putInt(16).putLong(ref.getMostSignificantBits()).putLong(ref.getLeastSignificantBits());
    byte[] json = doc.getBytes(StandardCharsets.UTF_8);
    b.putInt(json.length + 1).put((byte) 1).put(json);
    b.putInt(8).putDouble(score);
    if (label == null) {
      b.putInt(-1);
    } else {
      byte[] l = label.getBytes(StandardCharsets.UTF_8);
      b.putInt(l.length).put(l);
    }
    return Arrays.copyOf(b.array(), b.position());
  }

  /** numeric_send of a non-negative value: base-10000 digits, weight, sign, display scale. */
  private static void numeric(ByteBuffer b, BigDecimal value) {
    String plain = value.toPlainString();
    int dot = plain.indexOf('.');
    String whole = dot < 0 ? plain : plain.substring(0, dot);
    String fraction = dot < 0 ? "" : plain.substring(dot + 1);
    whole = "0".repeat((4 - whole.length() % 4) % 4) + whole;
    fraction = fraction + "0".repeat((4 - fraction.length() % 4) % 4);
    List<Short> digits = new ArrayList<>();
    for (int i = 0; i < whole.length(); i += 4) {
      digits.add(Short.parseShort(whole.substring(i, i + 4)));
    }
    for (int i = 0; i < fraction.length(); i += 4) {
      digits.add(Short.parseShort(fraction.substring(i, i + 4)));
    }
    int weight = whole.length() / 4 - 1;
    while (!digits.isEmpty() && digits.get(0) == 0) {
      digits.remove(0);
      weight--;
    }
    while (!digits.isEmpty() && digits.get(digits.size() - 1) == 0) {
      digits.remove(digits.size() - 1);
    }
    if (digits.isEmpty()) {
      weight = 0;
    }
    b.putInt(8 + 2 * digits.size());
    b.putShort((short) digits.size()).putShort((short) weight).putShort((short) 0);
    b.putShort((short) value.scale());
    digits.forEach(b::putShort);
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
      return format.equals("binary") ? 1 : 0;
    }

    @Override
    public int getFieldFormat(int field) {
      return getFormat();
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
    try (CopyRows copy =
        CopyRows.over(new Lines(), table, ValueFailure.Policy.STOP, format.equals("binary"))) {
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
