package io.datum.cdc.core.pgoutput;

import static io.datum.cdc.core.pgoutput.PgOutputMessages.message;
import static io.datum.cdc.core.pgoutput.PgOutputMessages.ordersRelation;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import io.datum.cdc.core.relation.RelationInfo;
import io.datum.cdc.core.relation.ValueDecodingException;
import io.datum.cdc.core.relation.ValueFailure;
import io.datum.cdc.event.ColumnInfo;
import io.datum.cdc.event.Row;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Decoding of every protocol-1 pgoutput message (PostgreSQL docs, 55.9). */
public class PgOutputDecoderTest {

  /**
   * Records every listener call as {name, args...}; decodes each deferred change at once with the
   * decoder it was made for, recording the change (so a change is recorded as the stream would
   * deliver it).
   */
  public static class Recorder implements TransactionListener, ChangeListener {
    final List<Object[]> calls = new ArrayList<>();
    private final PgOutputDecoder decoder;

    /**
     * @param decoder the decoder whose {@link PgOutputDecoder#decodeChange} decodes the changes
     *     {@link PgOutputDecoder#decode} passes on
     */
    public Recorder(PgOutputDecoder decoder) {
      this.decoder = decoder;
    }

    @Override
    public void change(ByteBuffer message, boolean hasXid, RelationInfo[] relations) {
      decoder.decodeChange(message, hasXid, relations, this);
    }

    @Override
    public void nonTransactionalMessage(PgLsn lsn, String prefix, byte[] content) {
      calls.add(new Object[] {"message", false, lsn, prefix, content});
    }

    Object[] only() {
      assertEquals(1, calls.size(), "listener calls");
      return calls.get(0);
    }

    public Object[] last() {
      return calls.get(calls.size() - 1);
    }

    @Override
    public void begin(PgLsn finalLsn, Instant commitTime, long xid) {
      calls.add(new Object[] {"begin", finalLsn, commitTime, xid});
    }

    @Override
    public void commit(int flags, PgLsn commitLsn, PgLsn endLsn, Instant commitTime) {
      calls.add(new Object[] {"commit", flags, commitLsn, endLsn, commitTime});
    }

    @Override
    public void origin(PgLsn originLsn, String name) {
      calls.add(new Object[] {"origin", originLsn, name});
    }

    @Override
    public void relation(RelationInfo relation) {
      calls.add(new Object[] {"relation", relation});
    }

    @Override
    public void type(int oid, String namespace, String name) {
      calls.add(new Object[] {"type", oid, namespace, name});
    }

    @Override
    public void insert(RelationInfo relation, Row newRow) {
      calls.add(new Object[] {"insert", relation, newRow});
    }

    @Override
    public void update(RelationInfo relation, Row oldRow, boolean oldRowIsFull, Row newRow) {
      calls.add(new Object[] {"update", relation, oldRow, oldRowIsFull, newRow});
    }

    @Override
    public void delete(RelationInfo relation, Row oldRow, boolean oldRowIsFull) {
      calls.add(new Object[] {"delete", relation, oldRow, oldRowIsFull});
    }

    @Override
    public void truncate(List<RelationInfo> relations, boolean cascade, boolean restartIdentity) {
      calls.add(new Object[] {"truncate", relations, cascade, restartIdentity});
    }

    @Override
    public void message(PgLsn lsn, String prefix, byte[] content) {
      calls.add(new Object[] {"message", true, lsn, prefix, content});
    }

    @Override
    public void streamStart(long xid, boolean firstSegment) {
      calls.add(new Object[] {"streamStart", xid, firstSegment});
    }

    @Override
    public void streamStop() {
      calls.add(new Object[] {"streamStop"});
    }

    @Override
    public void streamCommit(
        long xid, int flags, PgLsn commitLsn, PgLsn endLsn, Instant commitTime) {
      calls.add(new Object[] {"streamCommit", xid, flags, commitLsn, endLsn, commitTime});
    }

    @Override
    public void streamAbort(long xid, long subxid, PgLsn abortLsn, Instant abortTime) {
      calls.add(new Object[] {"streamAbort", xid, subxid, abortLsn, abortTime});
    }

    @Override
    public void beginPrepare(
        PgLsn prepareLsn, PgLsn endLsn, Instant prepareTime, long xid, String gid) {
      calls.add(new Object[] {"beginPrepare", prepareLsn, endLsn, prepareTime, xid, gid});
    }

    @Override
    public void prepare(
        boolean streamed,
        int flags,
        PgLsn prepareLsn,
        PgLsn endLsn,
        Instant prepareTime,
        long xid,
        String gid) {
      calls.add(
          new Object[] {"prepare", streamed, flags, prepareLsn, endLsn, prepareTime, xid, gid});
    }

    @Override
    public void commitPrepared(
        int flags, PgLsn commitLsn, PgLsn endLsn, Instant commitTime, long xid, String gid) {
      calls.add(new Object[] {"commitPrepared", flags, commitLsn, endLsn, commitTime, xid, gid});
    }

    @Override
    public void rollbackPrepared(
        int flags,
        PgLsn prepareEndLsn,
        PgLsn rollbackEndLsn,
        Instant prepareTime,
        Instant rollbackTime,
        long xid,
        String gid) {
      calls.add(
          new Object[] {
            "rollbackPrepared",
            flags,
            prepareEndLsn,
            rollbackEndLsn,
            prepareTime,
            rollbackTime,
            xid,
            gid
          });
    }
  }

  private final PgOutputDecoder decoder = new PgOutputDecoder();
  private final Recorder recorder = new Recorder(decoder);

  private Object[] decode(byte[] message) {
    int before = recorder.calls.size();
    decoder.decode(ByteBuffer.wrap(message), recorder);
    assertEquals(before + 1, recorder.calls.size());
    return recorder.last();
  }

  private RelationInfo orders() {
    return (RelationInfo) decode(ordersRelation())[1];
  }

  private static final Instant T = Instant.parse("2026-11-30T10:18:40.123456Z");

  @Test
  void begin() {
    Object[] call = decode(PgOutputMessages.begin(0x16B3748L, T, 0xFFFF_FFF0));
    assertEquals("begin", call[0]);
    assertEquals(PgLsn.parse("0/16B3748"), call[1]);
    assertEquals(T, call[2]);
    assertEquals(0xFFFF_FFF0L, call[3]);
  }

  @Test
  void timestampsBeforeThePostgresEpoch() {
    Instant old = Instant.parse("1999-12-31T23:59:59.999999Z");
    assertEquals(old, decode(PgOutputMessages.begin(1, old, 1))[2]);
  }

  @Test
  void commit() {
    Object[] call = decode(PgOutputMessages.commit(0, 0xFFFF_FFFF_0000_0001L, 0x1_0000_0000L, T));
    assertEquals("commit", call[0]);
    assertEquals(0, call[1]);
    assertEquals(PgLsn.parse("FFFFFFFF/1"), call[2]);
    assertEquals(PgLsn.parse("1/0"), call[3]);
    assertEquals(T, call[4]);
  }

  @Test
  void origin() {
    Object[] call = decode(message('O').i64(0xABCDEFL).str("node_a").build());
    assertEquals(PgLsn.of(0xABCDEFL), call[1]);
    assertEquals("node_a", call[2]);
  }

  @Test
  void relationDescribesTheTable() {
    RelationInfo r = orders();
    assertEquals(16390, r.oid());
    assertEquals(new TableId("public", "orders"), r.table());
    assertEquals('d', r.replicaIdentity());
    assertEquals(
        List.of(
            new ColumnInfo("id", 23, -1, true),
            new ColumnInfo("note", 25, -1, false),
            new ColumnInfo("amount", 1700, (10 << 16 | 3) + 4, false)),
        r.columns());
    assertEquals(List.of(new ColumnInfo("id", 23, -1, true)), r.keyColumns());
    assertArrayEquals(new int[] {0}, r.keyIndexes());
    assertSame(r, decoder.relation(16390));
    assertThrows(UnsupportedOperationException.class, () -> r.columns().add(null));
    assertThrows(UnsupportedOperationException.class, () -> r.keyColumns().clear());
  }

  @Test
  void relationWithEmptyNamespaceIsInPgCatalog() {
    RelationInfo r =
        (RelationInfo)
            decode(message('R').i32(1259).str("").str("pg_class").i8('n').i16(0).build())[1];
    assertEquals(new TableId("pg_catalog", "pg_class"), r.table());
    assertEquals('n', r.replicaIdentity());
    assertTrue(r.columns().isEmpty());
    assertFalse(r.hasKey());
  }

  @ParameterizedTest
  @CsvSource({"d", "n", "f", "i"})
  void replicaIdentities(char identity) {
    byte[] m =
        message('R').i32(7).str("s").str("t").i8(identity).i16(1).column(true, "k", 23, -1).build();
    assertEquals(identity, ((RelationInfo) decode(m)[1]).replicaIdentity());
  }

  @Test
  void typeMessage() {
    Object[] call = decode(message('Y').i32(50001).str("").str("int4").build());
    assertEquals(50001, call[1]);
    assertEquals("pg_catalog", call[2]);
    assertEquals("int4", call[3]);
    call = decode(message('Y').i32(50002).str("public").str("mood").build());
    assertEquals("public", call[2]);
  }

  @Test
  void insertDistinguishesNullUnchangedToastAndEmptyString() {
    RelationInfo r = orders();
    Object[] call = decode(message('I').i32(16390).i8('N').i16(3).text("1").text("").nul().build());
    assertSame(r, call[1]);
    Row row = (Row) call[2];
    assertSame(r.columns(), row.columns());
    assertEquals(1, row.get("id"));
    assertEquals("", row.get("note"));
    assertNull(row.get("amount"));
    assertTrue(row.isNull(2));

    row =
        (Row)
            decode(
                message('I')
                    .i32(16390)
                    .i8('N')
                    .i16(3)
                    .text("2")
                    .unchanged()
                    .text("12.340")
                    .build())[2];
    assertTrue(row.isUnchangedToast(1));
    assertFalse(row.isNull(1));
    assertEquals(List.of("note"), row.unchangedToastColumns());
    assertEquals(new BigDecimal("12.340"), row.get("amount"));
    assertEquals(3, ((BigDecimal) row.get("amount")).scale());
  }

  @Test
  void updateWithoutOldTuple() {
    orders();
    Object[] call =
        decode(message('U').i32(16390).i8('N').i16(3).text("1").text("x").nul().build());
    assertNull(call[2]);
    assertEquals(false, call[3]);
    assertEquals("x", ((Row) call[4]).get("note"));
  }

  @Test
  void updateWithKeyTupleKeepsOnlyKeyColumns() {
    RelationInfo r = orders();
    Object[] call =
        decode(
            message('U')
                .i32(16390)
                .i8('K')
                .i16(3)
                .text("1")
                .nul()
                .nul()
                .i8('N')
                .i16(3)
                .text("2")
                .text("x")
                .nul()
                .build());
    Row old = (Row) call[2];
    assertEquals(false, call[3]);
    assertSame(r.keyColumns(), old.columns());
    assertEquals(1, old.size());
    assertEquals(1, old.get("id"));
    assertEquals(2, ((Row) call[4]).get("id"));
  }

  @Test
  void updateWithFullOldTupleFillsUnchangedToast() {
    byte[] full =
        message('R')
            .i32(9)
            .str("public")
            .str("docs")
            .i8('f')
            .i16(3)
            .column(true, "id", 20, -1)
            .column(true, "body", 25, -1)
            .column(true, "tag", 25, -1)
            .build();
    RelationInfo r = (RelationInfo) decode(full)[1];
    assertEquals(3, r.keyColumns().size());
    Object[] call =
        decode(
            message('U')
                .i32(9)
                .i8('O')
                .i16(3)
                .text("7")
                .text("long body")
                .unchanged()
                .i8('N')
                .i16(3)
                .text("7")
                .unchanged()
                .unchanged()
                .build());
    Row old = (Row) call[2];
    Row now = (Row) call[4];
    assertEquals(true, call[3]);
    assertSame(r.columns(), old.columns());
    assertEquals("long body", old.get("body"));
    assertTrue(old.isUnchangedToast(2));
    assertEquals(7L, now.get("id"));
    assertEquals("long body", now.get("body"), "filled from the old row");
    assertTrue(now.isUnchangedToast(2), "the old row does not carry it either");
    assertEquals(List.of("tag"), now.unchangedToastColumns());
  }

  @Test
  void updateWithKeyTupleFillsUnchangedToastKeyColumn() {
    byte[] rel =
        message('R')
            .i32(10)
            .str("public")
            .str("t")
            .i8('d')
            .i16(2)
            .column(true, "k", 25, -1)
            .column(false, "v", 25, -1)
            .build();
    decode(rel);
    Row now =
        (Row)
            decode(
                message('U')
                    .i32(10)
                    .i8('K')
                    .i16(2)
                    .text("big key")
                    .nul()
                    .i8('N')
                    .i16(2)
                    .unchanged()
                    .unchanged()
                    .build())[4];
    assertEquals("big key", now.get("k"));
    assertTrue(now.isUnchangedToast(1));
  }

  @Test
  void underTheRawPolicyAnUndecodableValueIsKeptAsSentAndMarkedInEveryRow() {
    decoder.valueErrors(ValueFailure.Policy.RAW);
    orders();
    // a key tuple: the raw key value is marked in the key row (positions within it)
    Object[] call = decode(message('D').i32(16390).i8('K').i16(3).text("5x").nul().nul().build());
    Row key = (Row) call[2];
    assertEquals("5x", key.get(0));
    assertEquals(List.of("id"), key.undecodedColumns());
    List<ValueFailure> failures = decoder.takeFailures();
    assertEquals(1, failures.size());
    assertEquals("id", failures.get(0).column());
    assertEquals(23, failures.get(0).typeOid());
    assertEquals("int4", failures.get(0).typeName());
    assertTrue(failures.get(0).reason().contains("\"5x\""), failures.get(0).reason());
    assertNull(decoder.takeFailures());
    // an old row's raw value filled into an unchanged-TOAST column stays marked in the new row
    call =
        decode(
            message('U')
                .i32(16390)
                .i8('O')
                .i16(3)
                .text("1")
                .text("n")
                .text("1.5.5")
                .i8('N')
                .i16(3)
                .text("1")
                .text("m")
                .unchanged()
                .build());
    assertEquals(List.of("amount"), ((Row) call[2]).undecodedColumns());
    Row after = (Row) call[4];
    assertEquals("1.5.5", after.get("amount"));
    assertEquals(List.of("amount"), after.undecodedColumns());
    assertEquals("m", after.get("note"));
    // under STOP the same value fails naming column, table and value
    decoder.valueErrors(ValueFailure.Policy.STOP);
    ValueDecodingException e =
        assertThrows(
            ValueDecodingException.class,
            () -> decode(message('D').i32(16390).i8('K').i16(3).text("5x").nul().nul().build()));
    assertEquals("id", e.failure().column());
    assertTrue(e.getMessage().contains("column \"id\" of public.orders"), e.getMessage());
  }

  @Test
  void deleteWithKeyAndWithFullTuple() {
    RelationInfo r = orders();
    Object[] call = decode(message('D').i32(16390).i8('K').i16(3).text("5").nul().nul().build());
    assertEquals(false, call[3]);
    assertSame(r.keyColumns(), ((Row) call[2]).columns());
    assertEquals(5, ((Row) call[2]).get(0));
    call = decode(message('D').i32(16390).i8('O').i16(3).text("5").text("n").text("1.5").build());
    assertEquals(true, call[3]);
    assertEquals("n", ((Row) call[2]).get("note"));
    assertEquals(new BigDecimal("1.5"), ((Row) call[2]).get("amount"));
  }

  @ParameterizedTest
  @CsvSource({"0, false, false", "1, true, false", "2, false, true", "3, true, true"})
  void truncateOptions(int options, boolean cascade, boolean restartIdentity) {
    RelationInfo orders = orders();
    RelationInfo other =
        (RelationInfo) decode(message('R').i32(77).str("a").str("b").i8('d').i16(0).build())[1];
    Object[] call = decode(message('T').i32(2).i8(options).i32(77).i32(16390).build());
    assertEquals(List.of(other, orders), call[1]);
    assertEquals(cascade, call[2]);
    assertEquals(restartIdentity, call[3]);
  }

  @Test
  void logicalDecodingMessages() {
    Object[] call =
        decode(
            message('M').i8(1).i64(0x5000L).str("app").i32(3).raw(new byte[] {1, 0, -1}).build());
    assertEquals(true, call[1]);
    assertEquals(PgLsn.of(0x5000L), call[2]);
    assertEquals("app", call[3]);
    assertArrayEquals(new byte[] {1, 0, -1}, (byte[]) call[4]);
    call = decode(message('M').i8(0).i64(1).str("").i32(0).build());
    assertEquals(false, call[1]);
    assertEquals("", call[3]);
    assertEquals(0, ((byte[]) call[4]).length);
  }

  @Test
  void decodesASliceAtNonZeroPositionAndArrayOffset() {
    orders();
    byte[] insert = message('I').i32(16390).i8('N').i16(3).text("42").text("é").nul().build();
    byte[] big = new byte[insert.length + 20];
    Arrays.fill(big, (byte) 'X');
    System.arraycopy(insert, 0, big, 7, insert.length);

    ByteBuffer positioned = ByteBuffer.wrap(big, 7, insert.length);
    decoder.decode(positioned, recorder);
    assertEquals(42, ((Row) recorder.last()[2]).get("id"));
    assertEquals("é", ((Row) recorder.last()[2]).get("note"));
    assertEquals(7, positioned.position(), "position unchanged");

    ByteBuffer slice = ByteBuffer.wrap(big, 7, insert.length).slice();
    assertEquals(7, slice.arrayOffset());
    slice.position(0);
    decoder.decode(slice, recorder);
    assertEquals(42, ((Row) recorder.last()[2]).get("id"));

    ByteBuffer inner = ByteBuffer.wrap(big).slice(3, insert.length + 10).position(4);
    inner.limit(4 + insert.length);
    decoder.decode(inner, recorder);
    assertEquals(42, ((Row) recorder.last()[2]).get("id"));

    ByteBuffer direct = ByteBuffer.allocateDirect(insert.length + 5).position(5);
    direct.put(insert).position(5);
    decoder.decode(direct, recorder);
    assertEquals("é", ((Row) recorder.last()[2]).get("note"));
    decoder.decode(ByteBuffer.wrap(insert).asReadOnlyBuffer(), recorder);
    assertEquals(42, ((Row) recorder.last()[2]).get("id"));
  }

  @Test
  void aSecondRelationMessageReplacesTheFirst() {
    RelationInfo first = orders();
    byte[] altered =
        message('R')
            .i32(16390)
            .str("public")
            .str("orders")
            .i8('f')
            .i16(2)
            .column(true, "id", 20, -1)
            .column(true, "flag", 16, -1)
            .build();
    RelationInfo second = (RelationInfo) decode(altered)[1];
    assertSame(second, decoder.relation(16390));
    assertFalse(first.equals(second));
    Row row = (Row) decode(message('I').i32(16390).i8('N').i16(2).text("1").text("t").build())[2];
    assertEquals(1L, row.get("id"), "now bigint");
    assertEquals(Boolean.TRUE, row.get("flag"));
    assertFalse(row.has("note"));
  }

  @Test
  void domainsDecodeAsTheirBaseTypeAndUserTypesAsText() {
    decode(message('Y').i32(60001).str("").str("int4").build());
    decode(message('Y').i32(60002).str("public").str("mood").build());
    decode(message('Y').i32(60003).str("").str("_int8").build());
    decode(
        message('R')
            .i32(5)
            .str("s")
            .str("t")
            .i8('d')
            .i16(4)
            .column(true, "positive", 60001, -1)
            .column(false, "m", 60002, -1)
            .column(false, "ids", 60003, -1)
            .column(false, "never_sent", 70000, -1)
            .build());
    Row row =
        (Row)
            decode(
                message('I')
                    .i32(5)
                    .i8('N')
                    .i16(4)
                    .text("12")
                    .text("happy")
                    .text("{1,NULL}")
                    .text("(1,2)")
                    .build())[2];
    assertEquals(12, row.get("positive"));
    assertEquals("happy", row.get("m"));
    assertEquals(Arrays.asList(1L, null), row.get("ids"));
    assertEquals("(1,2)", row.get("never_sent"));
  }

  @Test
  void protocolVersionsOneToFour() {
    assertEquals(1, decoder.protocolVersion());
    assertFalse(decoder.inStreamBlock());
    for (int v = 1; v <= 4; v++) {
      assertEquals(v, new PgOutputDecoder(v, false).protocolVersion());
    }
    new PgOutputDecoder(4, true);
    assertThrows(CdcConfigurationException.class, () -> new PgOutputDecoder(0, false));
    assertThrows(CdcConfigurationException.class, () -> new PgOutputDecoder(5, false));
    assertThrows(CdcConfigurationException.class, () -> new PgOutputDecoder(3, true));
  }

  @Test
  void listenerExceptionsPropagateUnchanged() {
    IllegalStateException boom = new IllegalStateException("boom");
    TransactionListener failing =
        new Recorder(decoder) {
          @Override
          public void begin(PgLsn finalLsn, Instant commitTime, long xid) {
            throw boom;
          }
        };
    IllegalStateException thrown =
        assertThrows(
            IllegalStateException.class,
            () -> decoder.decode(ByteBuffer.wrap(PgOutputMessages.begin(1, T, 1)), failing));
    assertSame(boom, thrown);
  }
}
