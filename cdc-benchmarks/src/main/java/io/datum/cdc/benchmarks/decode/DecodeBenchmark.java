package io.datum.cdc.benchmarks.decode;

import io.datum.cdc.PgLsn;
import io.datum.cdc.core.assembly.DecodeFailures;
import io.datum.cdc.core.assembly.TransactionAssembler;
import io.datum.cdc.core.assembly.TransactionBuffer;
import io.datum.cdc.core.feedback.FeedbackCoordinator;
import io.datum.cdc.core.pgoutput.PgOutputDecoder;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.Row;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
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
import org.openjdk.jmh.infra.Blackhole;

/**
 * The streaming decode path of one event without the network: a committed transaction of {@value
 * #ROWS} pgoutput Insert messages (text format, protocol 1) of the snapshot benchmark's table shape
 * (bigint key, int, text, numeric(12,2), timestamptz, boolean, uuid, jsonb, double precision,
 * varchar with nulls) goes through {@link TransactionAssembler} as the replication loop feeds it
 * (each message with its XLogData WAL start), its events are taken one at a time as the hand-off
 * takes them and acknowledged to the {@link FeedbackCoordinator} as a handler would. {@code
 * handler=count} consumes only the event, {@code handler=values} every column value of it, as a
 * consumer that reads its rows. Score: events per second; run with {@code -prof gc} for the bytes
 * allocated per event (pgjdbc's own array per XLogData message, about the message's length plus 16
 * B, comes on top in a real stream).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@State(Scope.Thread)
public class DecodeBenchmark {

  static final int ROWS = 1000;
  static final int RELATION = 16390;
  static final long BEGIN_LSN = 0x1_0000_0000L;

  /** {@code count}: the event only; {@code values}: every column value of it. */
  @Param({"count", "values"})
  public String handler;

  byte[] begin;
  byte[] relation;
  byte[][] inserts;
  byte[] commit;
  long commitLsn;
  Path spill;

  @Setup
  public void messages() {
    commitLsn = BEGIN_LSN + 64L * (ROWS + 2);
    begin = message('B').i64(commitLsn).i64(849_000_000_000_000L).i32(741).build();
    relation =
        message('R')
            .i32(RELATION)
            .str("public")
            .str("bench")
            .i8('d')
            .i16(10)
            .column(true, "id", 20, -1)
            .column(false, "qty", 23, -1)
            .column(false, "note", 25, -1)
            .column(false, "amount", 1700, ((12 << 16) | 2) + 4)
            .column(false, "at", 1184, -1)
            .column(false, "active", 16, -1)
            .column(false, "ref", 2950, -1)
            .column(false, "doc", 3802, -1)
            .column(false, "score", 701, -1)
            .column(false, "tag", 1043, 64 + 4)
            .build();
    inserts = new byte[ROWS][];
    for (int g = 0; g < ROWS; g++) {
      Message m = message('I').i32(RELATION).i8('N').i16(10);
      m.text(Long.toString(1_000_000L + g))
          .text(Integer.toString(g * 7))
          .text("row " + g + " of the decode benchmark")
          .text((g * 13) + ".25")
          .text("2026-11-30 10:18:40." + String.format("%06d", g * 997 % 1_000_000) + "+00")
          .text(g % 2 == 0 ? "t" : "f")
          .text(String.format("a0eebc99-9c0b-4ef8-bb6d-%012d", g))
          .text("{\"a\": " + g + ", \"b\": [1, 2]}")
          .text(Double.toString(g * 1.5));
      if (g % 3 == 0) {
        m.nul();
      } else {
        m.text("v" + g);
      }
      inserts[g] = m.build();
    }
    commit =
        message('C').i8(0).i64(commitLsn).i64(commitLsn + 48).i64(849_000_000_000_000L).build();
    spill = Path.of(System.getProperty("java.io.tmpdir"));
  }

  @Benchmark
  @OperationsPerInvocation(ROWS)
  public void transaction(Blackhole bh) {
    FeedbackCoordinator coordinator = new FeedbackCoordinator("bench", null);
    TransactionAssembler assembler =
        new TransactionAssembler(
            "bench",
            coordinator,
            new PgOutputDecoder(),
            new TransactionBuffer.Memory(1L << 30, spill),
            DecodeFailures.STOP,
            PgLsn.ZERO);
    long lsn = BEGIN_LSN;
    assembler.accept(ByteBuffer.wrap(begin), lsn);
    assembler.accept(ByteBuffer.wrap(relation), lsn);
    for (byte[] insert : inserts) {
      lsn += 64;
      assembler.accept(ByteBuffer.wrap(insert), lsn);
    }
    assembler.accept(ByteBuffer.wrap(commit), commitLsn + 48);
    boolean values = "values".equals(handler);
    ChangeEvent e;
    while ((e = assembler.peek()) != null) {
      assembler.poll();
      if (values) {
        Row row = ((InsertEvent) e).after();
        for (int i = 0; i < row.size(); i++) {
          bh.consume(row.get(i));
        }
        bh.consume(e.lsn());
      } else {
        bh.consume(e);
      }
      coordinator.acknowledge(e.offset());
    }
    assembler.close();
  }

  private static Message message(char type) {
    return new Message().i8(type);
  }

  /** A pgoutput message under construction (big-endian, as the protocol). */
  static final class Message {
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final DataOutputStream out = new DataOutputStream(bytes);

    Message i8(int v) {
      try {
        out.writeByte(v);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return this;
    }

    Message i16(int v) {
      try {
        out.writeShort(v);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return this;
    }

    Message i32(int v) {
      try {
        out.writeInt(v);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return this;
    }

    Message i64(long v) {
      try {
        out.writeLong(v);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return this;
    }

    /** A NUL-terminated string. */
    Message str(String s) {
      bytes.writeBytes(s.getBytes(StandardCharsets.UTF_8));
      return i8(0);
    }

    /** A Relation message's column: flags, name, type oid, typmod. */
    Message column(boolean key, String name, int oid, int typmod) {
      return i8(key ? 1 : 0).str(name).i32(oid).i32(typmod);
    }

    /** A tuple's text value. */
    Message text(String value) {
      byte[] b = value.getBytes(StandardCharsets.UTF_8);
      i8('t').i32(b.length);
      bytes.writeBytes(b);
      return this;
    }

    /** A tuple's NULL. */
    Message nul() {
      return i8('n');
    }

    byte[] build() {
      return bytes.toByteArray();
    }
  }
}
